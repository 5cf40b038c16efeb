//! Allocations and CPU time per answer of the sans-IO responder, for every protocol's
//! common answer, with the answer cache (`Responder::handle_shared`, one status snapshot)
//! and without (`Responder::handle_on`, a plain `&Status`: everything encoded afresh).
//!
//! A counting global allocator in this bench binary (the `allocation-counter` crate's)
//! counts every allocation made while the responder answers (after one warm-up answer, which fills the caches and grows the
//! output buffers). Run:
//!
//! ```sh
//! cargo bench -p ogp-proto --bench answer_allocs
//! ```
//!
//! The status is the project's `crates/ogp-proto/tests/data/state.json`; the challenges
//! are valid, the rate limits lifted (the limiter still runs on every answer).

use std::net::{IpAddr, Ipv4Addr, SocketAddr};
use std::sync::Arc;
use std::time::Instant;

use ogp_proto::gamespy3::request::{InfoKind, Request};
use ogp_proto::guard::RateConfig;
use ogp_proto::ogp::{self, DefaultQuery, Header, PacketType};
use ogp_proto::responder::{Listener, Responder, ResponderConfig, Transmits};
use ogp_proto::Status;

const SRC: SocketAddr = SocketAddr::new(IpAddr::V4(Ipv4Addr::new(192, 0, 2, 10)), 27005);
const ANSWERS: u32 = 200_000;

fn responder(t0: Instant) -> Responder {
    let mut config = ResponderConfig::default();
    config.rate = RateConfig::new(1.0e9, 1.0e9);
    Responder::new(config, [9; 32], t0)
}

/// The request of each common answer, with a valid challenge.
fn requests(r: &mut Responder, t0: Instant, status: &Status) -> Vec<(&'static str, Vec<u8>)> {
    let ip = SRC.ip();
    let mut out = Transmits::default();
    // OGP: a default query for everything, UTF-8, with its challenge and a RequestID.
    let header = Header {
        challenge: Some(r.ogp_challenge(t0, ip)),
        request_id: Some(7),
        ..Header::query(PacketType::DEFAULT_QUERY).with_utf8(true)
    };
    let mut ogp_q = Vec::new();
    ogp::encode_query(&header, Some(&DefaultQuery::everything()), &mut ogp_q);
    // A2S: the challenge from the `41 <C>` reply to a bare A2S_INFO.
    r.handle(
        t0,
        SRC,
        b"\xFF\xFF\xFF\xFFTSource Engine Query\0",
        status,
        &mut out,
    );
    let c = out
        .iter()
        .next()
        .and_then(|d| d.get(5..9))
        .map(<[u8]>::to_vec)
        .unwrap_or_default();
    let a2s = |head: &[u8]| [head, &c].concat();
    let gs3 = Request::Info {
        session_id: 0x0102_0304,
        challenge: Some(r.gamespy3_challenge(t0, ip)),
        kind: InfoKind::Full,
    }
    .to_bytes();
    vec![
        ("OGP full answer", ogp_q),
        ("A2S_INFO", a2s(b"\xFF\xFF\xFF\xFFTSource Engine Query\0")),
        ("A2S_PLAYER", a2s(b"\xFF\xFF\xFF\xFFU")),
        ("A2S_RULES", a2s(b"\xFF\xFF\xFF\xFFV")),
        ("GameSpy v3 full", gs3),
    ]
}

struct Measured {
    allocs_per_answer: f64,
    ns_per_answer: f64,
    bytes: usize,
}

fn measure(
    r: &mut Responder,
    t0: Instant,
    request: &[u8],
    status: &Arc<Status>,
    cached: bool,
) -> Measured {
    let mut out = Transmits::default();
    let once = |r: &mut Responder, out: &mut Transmits| {
        if cached {
            r.handle_shared(Listener::Standard, t0, SRC, request, status, out);
        } else {
            r.handle_on(Listener::Standard, t0, SRC, request, status, out);
        }
    };
    once(r, &mut out); // warm-up: fills the cache, grows the buffers
    let bytes = out.total_bytes();
    let counted = allocation_counter::measure(|| {
        for _ in 0..ANSWERS / 10 {
            once(r, &mut out);
            std::hint::black_box(out.len());
        }
    });
    let start = Instant::now();
    for _ in 0..ANSWERS {
        once(r, &mut out);
        std::hint::black_box(out.len());
    }
    let took = start.elapsed();
    let allocs = counted.count_total as f64 * 10.0;
    Measured {
        allocs_per_answer: allocs / f64::from(ANSWERS),
        ns_per_answer: took.as_nanos() as f64 / f64::from(ANSWERS),
        bytes,
    }
}

fn main() {
    // `cargo test --benches` runs this with `--bench` absent: keep that quick.
    let quick = !std::env::args().any(|a| a == "--bench");
    let t0 = Instant::now();
    let status =
        Arc::new(Status::from_json(include_str!("../tests/data/state.json")).expect("state.json"));
    let mut r = responder(t0);
    let reqs = requests(&mut r, t0, &status);
    println!(
        "{:<18} {:>6}  {:>14} {:>10}  {:>14} {:>10}  {:>7}",
        "answer", "bytes", "cached allocs", "ns", "fresh allocs", "ns", "speedup"
    );
    let mut worst_cached = 0.0f64;
    for (name, req) in &reqs {
        if quick {
            let m = measure(&mut r, t0, req, &status, true);
            assert!(m.bytes > 0, "{name}: no answer");
            continue;
        }
        let c = measure(&mut r, t0, req, &status, true);
        let f = measure(&mut r, t0, req, &status, false);
        assert!(
            c.bytes > 0 && c.bytes == f.bytes,
            "{name}: answers differ in size"
        );
        worst_cached = worst_cached.max(c.allocs_per_answer);
        println!(
            "{:<18} {:>6}  {:>14.3} {:>10.0}  {:>14.3} {:>10.0}  {:>6.1}x",
            name,
            c.bytes,
            c.allocs_per_answer,
            c.ns_per_answer,
            f.allocs_per_answer,
            f.ns_per_answer,
            f.ns_per_answer / c.ns_per_answer
        );
    }
    if !quick {
        println!(
            "{ANSWERS} answers each; allocations counted by the bench binary's global allocator; worst cached: {worst_cached:.3} allocations per answer"
        );
    }
}
