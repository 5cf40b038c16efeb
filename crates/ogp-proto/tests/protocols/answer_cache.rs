//! The answer cache of `Responder::handle_shared`: answers built once per status
//! snapshot and reused with the per-query bytes patched in are byte for byte the answers
//! built afresh (`handle_on` with a plain `&Status`), for every protocol's common answer
//! and whatever the RequestID, session id or source (Quake III replies to requests without
//! a challenge included); a new snapshot is answered from the new status at once.

use std::net::{IpAddr, Ipv4Addr, SocketAddr};
use std::sync::Arc;
use std::time::Instant;

use ogp_proto::gamespy3::request::{InfoKind, Request};
use ogp_proto::guard::RateConfig;
use ogp_proto::ogp::{self, DefaultQuery, Header, PacketType};
use ogp_proto::responder::{Listener, Responder, ResponderConfig, Transmits};
use ogp_proto::Status;
use ogp_testkit::{demo_state, many_players};

fn responder(t0: Instant) -> Responder {
    let mut config = ResponderConfig::default();
    config.rate = RateConfig::new(1.0e9, 1.0e9);
    config.unproven_rate = RateConfig::new(1.0e9, 1.0e9);
    config.quake3.enabled = true;
    config.quake3.per_source = RateConfig::new(1.0e9, 1.0e9);
    config.quake3.total = RateConfig::new(1.0e9, 1.0e9);
    Responder::new(config, [5; 32], t0)
}

fn src(host: u8, port: u16) -> SocketAddr {
    SocketAddr::new(IpAddr::V4(Ipv4Addr::new(192, 0, 2, host)), port)
}

/// The common requests from `from`, with valid challenges: (name, datagram).
fn requests(
    r: &mut Responder,
    t0: Instant,
    from: SocketAddr,
    n: u32,
    split: bool,
) -> Vec<(&'static str, Vec<u8>)> {
    let ip = from.ip();
    let header = Header {
        challenge: Some(r.ogp_challenge(t0, ip)),
        request_id: Some(1000 + n),
        max_bytes_per_packet: split.then_some(600),
        ..Header::query(PacketType::DEFAULT_QUERY).with_utf8(n % 2 == 0)
    };
    let mut ogp_q = Vec::new();
    ogp::encode_query(&header, Some(&DefaultQuery::everything()), &mut ogp_q);
    let mut out = Transmits::default();
    r.handle(
        t0,
        from,
        b"\xFF\xFF\xFF\xFFTSource Engine Query\0",
        &Status::default(),
        &mut out,
    );
    let c = out.iter().next().unwrap()[5..9].to_vec();
    let gs3 = Request::Info {
        session_id: 0x0102_0300 + n,
        challenge: Some(r.gamespy3_challenge(t0, ip)),
        kind: InfoKind::Full,
    }
    .to_bytes();
    vec![
        ("ogp", ogp_q),
        (
            "a2s info",
            [b"\xFF\xFF\xFF\xFFTSource Engine Query\0".as_slice(), &c].concat(),
        ),
        (
            "a2s players",
            [b"\xFF\xFF\xFF\xFFU".as_slice(), &c].concat(),
        ),
        ("a2s rules", [b"\xFF\xFF\xFF\xFFV".as_slice(), &c].concat()),
        ("gs3 full", gs3),
        // Quake III: cached without a challenge, built afresh with one.
        ("q3 getstatus", b"\xFF\xFF\xFF\xFFgetstatus".to_vec()),
        ("q3 getinfo", b"\xFF\xFF\xFF\xFFgetinfo".to_vec()),
        (
            "q3 getstatus challenged",
            [
                b"\xFF\xFF\xFF\xFFgetstatus c".as_slice(),
                n.to_string().as_bytes(),
            ]
            .concat(),
        ),
    ]
}

fn answer(
    r: &mut Responder,
    t0: Instant,
    from: SocketAddr,
    d: &[u8],
    status: &Arc<Status>,
    cached: bool,
) -> Vec<Vec<u8>> {
    let mut out = Transmits::default();
    if cached {
        r.handle_shared(Listener::Standard, t0, from, d, status, &mut out);
    } else {
        r.handle_on(Listener::Standard, t0, from, d, status, &mut out);
    }
    out.iter().map(<[u8]>::to_vec).collect()
}

/// A2S splits get a new split id per answer; compare them with the id masked.
fn mask_split_ids(name: &str, mut ds: Vec<Vec<u8>>) -> Vec<Vec<u8>> {
    if name.starts_with("a2s") && ds.len() > 1 {
        for d in &mut ds {
            d[4..8].fill(0);
        }
    }
    // OGP split answers from the responder's own RequestID counter never happen here:
    // every query carries one.
    ds
}

#[test]
fn cached_answers_equal_fresh_ones_for_every_protocol_and_snapshot() {
    let t0 = Instant::now();
    let mut cached = responder(t0);
    let mut fresh = responder(t0);
    let statuses = [
        Arc::new(demo_state()),
        Arc::new(many_players(60, 24)),
        Arc::new(Status::default()),
        Arc::new(demo_state()),
    ];
    for status in &statuses {
        for n in 0..6u32 {
            let from = src(10 + (n % 3) as u8, 27000 + n as u16);
            let reqs = requests(&mut cached, t0, from, n, n >= 3);
            for (name, d) in &reqs {
                let a = answer(&mut cached, t0, from, d, status, true);
                let b = answer(&mut fresh, t0, from, d, status, false);
                assert!(!a.is_empty(), "{name}: no answer");
                assert_eq!(
                    mask_split_ids(name, a),
                    mask_split_ids(name, b),
                    "{name}, request {n}"
                );
            }
        }
    }
}

#[test]
fn a_new_snapshot_is_answered_from_the_new_status() {
    let t0 = Instant::now();
    let mut r = responder(t0);
    let from = src(7, 27015);
    let mut a = demo_state();
    a.host_name = Some("first name".into());
    let mut b = a.clone();
    b.host_name = Some("second name".into());
    let (a, b) = (Arc::new(a), Arc::new(b));
    let reqs = requests(&mut r, t0, from, 0, false);
    for (name, d) in &reqs {
        if name.contains("players") || name.contains("rules") {
            continue; // no host name in these
        }
        let contains = |ds: &[Vec<u8>], s: &str| {
            ds.iter()
                .any(|d| d.windows(s.len()).any(|w| w == s.as_bytes()))
        };
        let first = answer(&mut r, t0, from, d, &a, true);
        assert!(contains(&first, "first name"), "{name}");
        let again = answer(&mut r, t0, from, d, &a, true);
        assert_eq!(first, again, "{name}");
        let second = answer(&mut r, t0, from, d, &b, true);
        assert!(contains(&second, "second name"), "{name}");
        assert!(!contains(&second, "first name"), "{name}");
    }
}
