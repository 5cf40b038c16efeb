//! The responder's counters ([`Stats`]): every drop reason is counted where the datagram
//! is dropped, once, under its reason and no other; answers are counted by protocol and
//! kind, only when they are sent (not when a rate limit holds them back).

use std::net::{IpAddr, Ipv4Addr, SocketAddr};
use std::sync::Arc;
use std::time::Instant;

use ogp_proto::gamespy3::request::{InfoKind, Request};
use ogp_proto::guard::RateConfig;
use ogp_proto::responder::{
    AnswerKind, BanAction, DropReason, Responder, ResponderConfig, Stats, Transmits,
};
use ogp_proto::{Protocol, Status};

const A2S_INFO: &[u8] = b"\xFF\xFF\xFF\xFFTSource Engine Query\0";
const OGP_PING: &[u8] = b"\xFF\xFF\xFF\xFFOGP\0\x03\x00\x00";
const BANNED: Ipv4Addr = Ipv4Addr::new(10, 0, 0, 66);

struct Harness {
    r: Responder,
    t0: Instant,
    status: Status,
    out: Transmits,
}

impl Harness {
    fn new(config: ResponderConfig) -> Self {
        let t0 = Instant::now();
        let mut status = Status::default();
        status.host_name = Some("Counted".into());
        Self {
            r: Responder::new(config, [7; 32], t0),
            t0,
            status,
            out: Transmits::default(),
        }
    }

    /// Sends `d` from `10.0.0.<host>` and returns the datagrams sent back.
    fn send(&mut self, host: u8, d: &[u8]) -> Vec<Vec<u8>> {
        let src = SocketAddr::new(IpAddr::V4(Ipv4Addr::new(10, 0, 0, host)), 27005);
        self.r.handle(self.t0, src, d, &self.status, &mut self.out);
        self.out.iter().map(<[u8]>::to_vec).collect()
    }
}

fn drops(s: &Stats) -> Vec<(DropReason, u64)> {
    s.breakdown.drop_counts().collect()
}

fn config() -> ResponderConfig {
    let mut config = ResponderConfig::default();
    // one unproven answer per source, then the limit
    config.unproven_rate = RateConfig::new(0.001, 1.0);
    config.ban = Some(Arc::new(|ip| {
        if ip == IpAddr::V4(BANNED) {
            BanAction::Ignore
        } else {
            BanAction::Allow
        }
    }));
    config
}

#[test]
fn each_drop_reason_is_counted_once_under_its_reason() {
    let mut h = Harness::new(config());
    let gs3_wrong_challenge = Request::Info {
        session_id: 0x0102_0304,
        challenge: Some(12345),
        kind: InfoKind::Full,
    }
    .to_bytes();
    let oversized = [b"\xFF\xFF\xFF\xFFT".as_slice(), &[b'x'; 1500]].concat();
    let cases: [(DropReason, u8, &[u8]); 6] = [
        (DropReason::UnknownProtocol, 1, b"hello, server"),
        (DropReason::Banned, BANNED.octets()[3], A2S_INFO),
        // an A2S challenge reply where a request belongs
        (
            DropReason::Malformed,
            3,
            b"\xFF\xFF\xFF\xFFA\x01\x02\x03\x04",
        ),
        (DropReason::Oversized, 4, &oversized),
        // A2A_PING is off by default
        (DropReason::Disabled, 5, b"\xFF\xFF\xFF\xFFi"),
        (DropReason::BadChallenge, 6, &gs3_wrong_challenge),
    ];
    for (reason, host, d) in cases {
        let before = h.r.stats();
        let out = h.send(host, d);
        let after = h.r.stats();
        assert!(out.is_empty(), "{reason:?}: answered {out:02x?}");
        for (r, n) in drops(&after) {
            let want = before.breakdown.dropped(r) + u64::from(r == reason);
            assert_eq!(n, want, "{reason:?} step: {r:?} counted {n}");
        }
        assert_eq!(after.received, before.received + 1);
        assert_eq!(after.received_bytes, before.received_bytes + d.len() as u64);
        assert_eq!(after.breakdown.answer_counts().map(|a| a.2).sum::<u64>(), 0);
    }
    // rate limited: an OGP query of a type we do not serve gets Error 1, one byte more
    // than it (charged to the source's budget of unproven answers: one); the first goes
    // out, the second is held back
    let bad_type = b"\xFF\xFF\xFF\xFFOGP\x00\x03\x42\x00";
    assert_eq!(h.send(7, bad_type).len(), 1);
    assert!(h.send(7, bad_type).is_empty());
    // (a challenge gives a spoofer nothing and is not charged to the source: both go out)
    assert_eq!(h.send(7, A2S_INFO).len(), 1);
    assert_eq!(h.send(7, A2S_INFO).len(), 1);
    let s = h.r.stats();
    assert_eq!(s.breakdown.dropped(DropReason::RateLimited), 1);
    assert_eq!(s.rate_limited, 1);
    assert_eq!(
        s.breakdown.answers(Protocol::Ogp, AnswerKind::Error),
        1,
        "the held-back answer is not counted"
    );
    assert_eq!(s.breakdown.answers(Protocol::A2s, AnswerKind::Challenge), 2);
    // every reason was counted exactly once, and the older counters agree
    for (r, n) in drops(&s) {
        assert_eq!(n, 1, "{r:?}");
    }
    assert_eq!(s.unknown, 1);
    assert_eq!(s.banned, 1);
    assert_eq!(
        s.ignored, 4,
        "malformed, oversized, disabled, bad challenge"
    );
}

#[test]
fn a_switched_off_protocol_counts_as_disabled() {
    let mut config = ResponderConfig::default();
    config.a2s.enabled = false;
    config.ogp.enabled = false;
    let mut h = Harness::new(config);
    assert!(h.send(1, A2S_INFO).is_empty());
    assert!(h.send(1, OGP_PING).is_empty());
    assert_eq!(h.r.stats().breakdown.dropped(DropReason::Disabled), 2);
}

#[test]
fn answers_are_counted_by_protocol_and_kind() {
    let mut h = Harness::new(ResponderConfig::default());
    // A2S: challenge, then INFO, PLAYER and RULES with it
    let challenge = h.send(1, A2S_INFO);
    let c = challenge[0][5..9].to_vec();
    for request in [
        [A2S_INFO, &c].concat(),
        [b"\xFF\xFF\xFF\xFFU".as_slice(), &c].concat(),
        [b"\xFF\xFF\xFF\xFFV".as_slice(), &c].concat(),
    ] {
        assert!(!h.send(1, &request).is_empty());
    }
    // OGP: a ping
    assert_eq!(h.send(1, OGP_PING).len(), 1);
    let s = h.r.stats();
    let counts: Vec<(Protocol, AnswerKind, u64)> = s
        .breakdown
        .answer_counts()
        .filter(|(_, _, n)| *n > 0)
        .collect();
    assert_eq!(
        counts,
        [
            (Protocol::Ogp, AnswerKind::Ping, 1),
            (Protocol::A2s, AnswerKind::Challenge, 1),
            (Protocol::A2s, AnswerKind::Info, 1),
            (Protocol::A2s, AnswerKind::Players, 1),
            (Protocol::A2s, AnswerKind::Rules, 1),
        ]
    );
    assert_eq!(s.breakdown.drop_counts().map(|d| d.1).sum::<u64>(), 0);
    // every protocol's kinds are listed, zeros included
    assert_eq!(
        s.breakdown.answer_counts().count(),
        Protocol::ALL
            .iter()
            .map(|p| AnswerKind::of(*p).len())
            .sum::<usize>()
    );
}
