//! QuakeWorld heartbeats at the registrar (`master::registry` with
//! `master::qwmaster`): verified by a 5-byte ping whose answer is the one byte `l`,
//! within the no-amplification rule under floods of forged heartbeats, through the
//! probes when the pool is full; shutdowns and garbage.

use std::net::{IpAddr, Ipv4Addr, SocketAddr};
use std::time::{Duration, Instant};

use ogp_proto::master::qwmaster::PING;
use ogp_proto::master::registry::{
    classify, Admission, DropReason, Inbound, Known, Registrar, RegistrarConfig, Registration,
    Verdict,
};
use ogp_proto::Protocol;

const HEARTBEAT: &[u8] = b"a\n1\n0\n";

fn registration(d: &[u8]) -> Registration {
    match classify(d) {
        Ok(Inbound::Registration(r)) => r,
        other => panic!("{d:?}: {other:?}"),
    }
}

fn addr(i: u32) -> SocketAddr {
    SocketAddr::from((Ipv4Addr::from(0x0b00_0000 + (i << 8) + 1), 27500))
}

#[test]
fn classify_tells_heartbeats_shutdowns_and_list_requests() {
    let r = registration(HEARTBEAT);
    assert_eq!(r.protocol(), Protocol::Quakeworld);
    assert_eq!(r.protocol_name(), "quakeworld");
    assert!(!r.exiting() && !r.wants_poll() && r.game().is_none());
    let c = registration(b"C\n");
    assert!(c.exiting() && c.wants_poll());
    for d in [&b"c\n"[..], b"c\n\0", b"c"] {
        assert_eq!(classify(d), Ok(Inbound::QwList), "{d:?}");
    }
    for bad in [&b"a\nx\n0\n"[..], b"a\n", b"c\nmore", b"C\nx"] {
        assert!(classify(bad).is_err(), "{bad:?}");
    }
    // the ping's answer and MVDSV's `k\0` to its master are no registration
    assert_eq!(classify(b"l"), Ok(Inbound::Other));
    assert_eq!(classify(b"k\0"), Ok(Inbound::Other));
}

#[test]
fn a_heartbeat_is_verified_by_the_ping_and_its_one_byte_answer() {
    let t0 = Instant::now();
    let mut reg = Registrar::new(RegistrarConfig::default(), [3; 16], t0);
    let from = addr(1);
    let r = registration(HEARTBEAT);
    assert_eq!(
        reg.register(t0, from, &r, HEARTBEAT.len(), Known::default()),
        Admission::Verifying
    );
    let (to, d) = reg.poll_transmit(t0).unwrap();
    assert_eq!((to, d.as_slice()), (from, &PING[..]));
    assert!(reg.poll_transmit(t0).is_none());
    // a status reply or junk is not the answer
    assert!(reg.handle_reply(t0, from, b"\xff\xff\xff\xffn\\hostname\\x\n"));
    assert!(reg.poll_verdict().is_none());
    assert!(reg.handle_reply(t0 + Duration::from_millis(3), from, b"l"));
    match reg.poll_verdict() {
        Some(Verdict::Verified {
            addr,
            answer,
            gamespy1,
            game,
            ..
        }) => {
            assert_eq!((addr, gamespy1, game), (from, false, None));
            assert_eq!(answer.protocol, Protocol::Quakeworld);
            assert!(answer.details.is_none());
        }
        other => panic!("{other:?}"),
    }
}

#[test]
fn shutdowns_remove_nothing_by_themselves() {
    let t0 = Instant::now();
    let mut reg = Registrar::new(RegistrarConfig::default(), [3; 16], t0);
    let c = registration(b"C\n");
    assert_eq!(
        reg.register(t0, addr(1), &c, 2, Known::default()),
        Admission::Dropped(DropReason::NotListed)
    );
    let listed = Known {
        listed: true,
        servers_on_ip: 1,
    };
    assert_eq!(reg.register(t0, addr(2), &c, 2, listed), Admission::Listed);
    assert!(
        reg.poll_transmit(t0).is_none(),
        "nothing goes out for a shutdown"
    );
    assert_eq!(reg.stats().dropped[5], 1);
}

/// 20,000 forged heartbeats from 10,000 sources (a /24 each, never answering): each
/// source is sent at most what it sent, the pending verifications stay within their
/// cap, nothing is verified; the retries of the pings are withheld.
#[test]
fn forged_heartbeats_from_many_sources_are_not_amplified() {
    let t0 = Instant::now();
    let config = RegistrarConfig::default();
    let max_pending = config.max_pending + config.answered_pending;
    let mut reg = Registrar::new(config, [9; 16], t0);
    let r = registration(HEARTBEAT);
    let mut sent = std::collections::HashMap::<IpAddr, usize>::new();
    let mut now = t0;
    for round in 0..2u64 {
        for i in 0..10_000u32 {
            now = t0 + Duration::from_micros(round * 3_000_000 + u64::from(i) * 100);
            reg.register(now, addr(i), &r, HEARTBEAT.len(), Known::default());
            while let Some((to, d)) = reg.poll_transmit(now) {
                assert_eq!(d, PING);
                *sent.entry(to.ip()).or_default() += d.len();
            }
            assert!(reg.pending() <= max_pending);
        }
        reg.handle_timeout(now);
    }
    for _ in 0..20 {
        now += Duration::from_millis(500);
        reg.handle_timeout(now);
        while let Some((to, d)) = reg.poll_transmit(now) {
            *sent.entry(to.ip()).or_default() += d.len();
        }
    }
    for (ip, n) in &sent {
        assert!(*n <= 2 * HEARTBEAT.len(), "{ip} was sent {n} bytes for 12");
    }
    let s = reg.stats();
    assert!(s.sent_bytes <= s.received_bytes, "{s:?}");
    assert_eq!(s.verified, 0);
    assert!(s.withheld > 0, "{s:?}");
    while let Some(v) = reg.poll_verdict() {
        assert!(matches!(v, Verdict::Failed { .. }), "{v:?}");
    }
}

/// With every place taken, a real server's heartbeat is answered by a probe (the same
/// 5-byte ping, no larger than the heartbeat), and its `l` verifies it at once; an `l`
/// from an address never probed verifies nothing.
#[test]
fn a_probe_answered_by_l_verifies_when_the_pool_is_full() {
    let t0 = Instant::now();
    let mut config = RegistrarConfig::default();
    config.max_pending = 4;
    config.reserve_pending = 0;
    let mut reg = Registrar::new(config, [5; 16], t0);
    let r = registration(HEARTBEAT);
    for i in 0..4 {
        assert_eq!(
            reg.register(t0, addr(i), &r, HEARTBEAT.len(), Known::default()),
            Admission::Verifying
        );
    }
    while reg.poll_transmit(t0).is_some() {}
    let real = addr(100);
    let a = reg.register(t0, real, &r, HEARTBEAT.len(), Known::default());
    assert!(matches!(a, Admission::Probed(_)), "{a:?}");
    let (to, d) = reg.poll_transmit(t0).unwrap();
    assert_eq!((to, d.as_slice()), (real, &PING[..]));
    assert!(!reg.handle_reply(t0, addr(200), b"l"), "never probed");
    assert!(reg.handle_reply(t0 + Duration::from_millis(2), real, b"l"));
    assert!(matches!(
        reg.poll_verdict(),
        Some(Verdict::Verified { addr, .. }) if addr == real
    ));
    // the same answer again verifies nothing more
    assert!(!reg.handle_reply(t0 + Duration::from_millis(3), real, b"l"));
}
