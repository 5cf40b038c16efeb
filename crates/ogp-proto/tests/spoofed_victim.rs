//! A spoofer sending requests with a victim's source address cannot spend the victim's
//! budget: answers to requests with a valid challenge are charged to the source's own
//! budget, everything else to a budget of its own, per source and overall. Simulated
//! time, the sans-IO responder, every protocol on the shared port. (The loopback test
//! with raw packets is `ogp-cli/tests/spoofed_victim.rs`.)

use std::net::{IpAddr, SocketAddr};
use std::time::{Duration, Instant};

use ogp_proto::a2s::request::Request as A2sRequest;
use ogp_proto::a2s::Message as A2sMessage;
use ogp_proto::gamespy3::request::Request as Gs3Request;
use ogp_proto::guard::RateConfig;
use ogp_proto::responder::{Outcome, Responder, ResponderConfig, Transmits};
use ogp_testkit::demo_state;

const VICTIM: &str = "198.51.100.7";

fn victim(port: u16) -> SocketAddr {
    SocketAddr::new(VICTIM.parse().unwrap(), port)
}

/// One protocol's traffic: what the spoofer sends (no challenge), and the victim's
/// challenged query, given the victim's challenge.
struct Case {
    name: &'static str,
    spoof: Vec<u8>,
    query: fn(&mut Responder, Instant) -> Vec<Vec<u8>>,
}

fn ogp_probe() -> Vec<u8> {
    vec![0xff, 0xff, 0xff, 0xff, b'O', b'G', b'P', 0, 3, 1, 0]
}

fn ogp_query_with(c: u32) -> Vec<u8> {
    // our client's default query, carrying the challenge
    let mut opts = ogp_proto::ogp::client::QueryOptions::default();
    opts.challenge = Some(c);
    let m = ogp_proto::ogp::client::QueryMachine::new(
        opts,
        ogp_proto::client::Timing::default(),
        77,
        Instant::now(),
    );
    let mut q = Vec::new();
    m.encode_query(&mut q);
    q
}

fn ogp_query(r: &mut Responder, now: Instant) -> Vec<Vec<u8>> {
    vec![ogp_query_with(
        r.ogp_challenge(now, VICTIM.parse().unwrap()),
    )]
}

fn a2s_bytes(r: A2sRequest) -> Vec<u8> {
    let mut d = Vec::new();
    r.encode(&mut d);
    d
}

/// The victim's A2S challenge, asked before the attack begins.
fn a2s_challenge(r: &mut Responder, now: Instant) -> u32 {
    let mut out = Transmits::default();
    r.handle(
        now,
        victim(27005),
        &a2s_bytes(A2sRequest::info(None)),
        &demo_state(),
        &mut out,
    );
    let reply = out.iter().next().expect("a challenge reply");
    match ogp_proto::a2s::decode(reply).unwrap().message {
        A2sMessage::Challenge(c) => c.challenge,
        other => panic!("not a challenge: {other:?}"),
    }
}

fn a2s_query(r: &mut Responder, now: Instant) -> Vec<Vec<u8>> {
    let c = a2s_challenge(r, now);
    vec![
        a2s_bytes(A2sRequest::info(Some(c))),
        a2s_bytes(A2sRequest::player(Some(c))),
        a2s_bytes(A2sRequest::rules(Some(c))),
    ]
}

fn gs3_query(r: &mut Responder, now: Instant) -> Vec<Vec<u8>> {
    let c = r.gamespy3_challenge(now, VICTIM.parse().unwrap());
    vec![Gs3Request::full(0x0102_0304, Some(c)).to_bytes()]
}

fn cases() -> Vec<Case> {
    vec![
        Case {
            name: "OGP",
            spoof: ogp_probe(),
            query: ogp_query,
        },
        Case {
            name: "A2S",
            spoof: a2s_bytes(A2sRequest::info(None)),
            query: a2s_query,
        },
        Case {
            name: "GameSpy v3",
            spoof: Gs3Request::Challenge {
                session_id: 0x0a0b_0c0d,
            }
            .to_bytes(),
            query: gs3_query,
        },
    ]
}

/// The victim queries every 150 ms for 10 s while the spoofer sends `rate` datagrams a
/// second with its address; returns (queries answered, queries, largest ratio of a
/// spoofed answer to its request).
fn attack(case: &Case, rate: u32) -> (usize, usize, f64) {
    let t0 = Instant::now();
    let mut r = Responder::new(ResponderConfig::default(), [7; 32], t0);
    let status = demo_state();
    let mut out = Transmits::default();
    // the victim's challenged queries, asked for (as a real client would) before
    let queries = (case.query)(&mut r, t0);
    let (mut answered, mut total, mut ratio) = (0, 0, 0.0f64);
    let spoof_every = Duration::from_secs(1) / rate;
    let mut next_spoof = t0;
    let mut next_query = t0 + Duration::from_millis(150);
    let end = t0 + Duration::from_secs(10);
    while next_query < end {
        if next_spoof <= next_query {
            let o = r.handle(next_spoof, victim(40000), &case.spoof, &status, &mut out);
            for d in out.iter() {
                ratio = ratio.max(d.len() as f64 / case.spoof.len() as f64);
            }
            assert!(!matches!(o, Outcome::Unknown), "{}", case.name);
            next_spoof += spoof_every;
            continue;
        }
        total += 1;
        let ok = queries.iter().all(|q| {
            r.handle(next_query, victim(27005), q, &status, &mut out);
            !out.is_empty()
        });
        answered += usize::from(ok);
        next_query += Duration::from_millis(150);
    }
    (answered, total, ratio)
}

#[test]
fn a_spoofer_cannot_spend_the_victims_budget() {
    for case in cases() {
        for rate in [200, 2000] {
            let (answered, total, ratio) = attack(&case, rate);
            eprintln!(
                "{} spoofed at {rate}/s: victim {answered} of {total} answered; spoofed answers at most {ratio:.2}× their request",
                case.name
            );
            assert!(total >= 60);
            assert!(
                answered * 100 >= total * 98,
                "{} at {rate}/s: only {answered} of {total}",
                case.name
            );
            assert!(ratio <= 3.0, "{}: amplification {ratio}", case.name);
        }
    }
}

#[test]
fn unproven_answers_have_an_overall_budget() {
    let t0 = Instant::now();
    let mut config = ResponderConfig::default();
    config.unproven_total = RateConfig::new(100.0, 50.0);
    let mut r = Responder::new(config, [7; 32], t0);
    let status = demo_state();
    let mut out = Transmits::default();
    let probe = ogp_probe();
    // 1000 sources at one instant: the burst, then nothing
    let mut answered = 0;
    for i in 0..1000u32 {
        let src = SocketAddr::new(IpAddr::from([10, 1, (i >> 8) as u8, i as u8]), 5000);
        r.handle(t0, src, &probe, &status, &mut out);
        answered += usize::from(!out.is_empty());
    }
    assert_eq!(answered, 50);
    // a second later, 100 more
    let t1 = t0 + Duration::from_secs(1);
    let mut later = 0;
    for i in 0..1000u32 {
        let src = SocketAddr::new(IpAddr::from([10, 2, (i >> 8) as u8, i as u8]), 5000);
        r.handle(t1, src, &probe, &status, &mut out);
        later += usize::from(!out.is_empty());
    }
    assert_eq!(later, 50, "the bucket refills to its burst, no more");
    // while a source with a valid challenge is answered from its own budget
    let ip: IpAddr = "10.9.9.9".parse().unwrap();
    let q = ogp_query_with(r.ogp_challenge(t1, ip));
    r.handle(t1, SocketAddr::new(ip, 5000), &q, &status, &mut out);
    assert_eq!(out.len(), 1);
    assert!(r.stats().rate_limited >= 1900);
}

/// Two workers with limits of their own (the kernel steers each source to one of them):
/// each holds half the overall budget of unproven answers, the per-source budget is
/// whole at each, and a challenge issued by one is valid at the other.
#[test]
fn workers_with_own_limits_split_the_overall_budget_and_keep_per_source_rates() {
    let t0 = Instant::now();
    let mut config = ResponderConfig::default();
    config.unproven_total = RateConfig::new(100.0, 50.0);
    config.rate = RateConfig::new(20.0, 10.0);
    let mut a = Responder::new(config, [7; 32], t0);
    let mut b = a.worker();
    a.use_own_limits(2, t0);
    b.use_own_limits(2, t0);
    assert!(format!("{a:?}").contains("own_limits: true"));
    let status = demo_state();
    let mut out = Transmits::default();
    let probe = ogp_probe();
    let mut answered = [0, 0];
    for (k, r) in [&mut a, &mut b].into_iter().enumerate() {
        for i in 0..1000u32 {
            let src = SocketAddr::new(IpAddr::from([10, k as u8, (i >> 8) as u8, i as u8]), 5000);
            r.handle(t0, src, &probe, &status, &mut out);
            answered[k] += usize::from(!out.is_empty());
        }
    }
    assert_eq!(answered, [25, 25], "half the burst of 50 at each worker");
    // A proven source: its whole per-source burst (10) at the worker it is steered to.
    let ip: IpAddr = "10.9.9.9".parse().unwrap();
    let q = ogp_query_with(b.ogp_challenge(t0, ip));
    let mut proven = 0;
    for _ in 0..30 {
        a.handle(t0, SocketAddr::new(ip, 5000), &q, &status, &mut out);
        proven += usize::from(!out.is_empty());
    }
    assert_eq!(
        proven, 10,
        "a challenge from b is valid at a, and a's budget is whole"
    );
}

/// A flood of spoofed sources spends the overall budget of unproven answers; a client that
/// proved its address within the challenge period still gets its challenges (its
/// unproven step is charged to its per-source budget only), while new clients compete
/// with the flood, and the spoofed sources together still get no more than the overall
/// budget.
#[test]
fn a_flood_of_spoofed_sources_does_not_starve_a_known_client() {
    let t0 = Instant::now();
    let mut r = Responder::new(ResponderConfig::default(), [7; 32], t0);
    let status = demo_state();
    let mut out = Transmits::default();
    let probe = ogp_probe();
    let known: IpAddr = "192.0.2.10".parse().unwrap();
    // The known client's whole exchange: the probe (answered with the challenge), then
    // the challenged query (answered with the status). True when both are answered.
    let exchange = |r: &mut Responder, now: Instant, ip: IpAddr, out: &mut Transmits| {
        r.handle(now, SocketAddr::new(ip, 40001), &probe, &status, out);
        if out.is_empty() {
            return false;
        }
        let q = ogp_query_with(r.ogp_challenge(now, ip));
        r.handle(now, SocketAddr::new(ip, 40001), &q, &status, out);
        !out.is_empty()
    };
    assert!(exchange(&mut r, t0, known, &mut out), "before the flood");
    // 30,000 spoofed datagrams a second from 100,000 sources (3× the default overall
    // budget of 10,000 a second), for 2 s; both clients every 150 ms.
    let (rate, sources, secs) = (30_000u32, 100_000u32, 2u32);
    let every = Duration::from_secs(1) / rate;
    let (mut known_ok, mut stranger_ok, mut asked, mut spoofed_answers) = (0, 0, 0, 0u64);
    let mut next_query = t0 + Duration::from_millis(150);
    for i in 0..rate * secs {
        let now = t0 + every * i;
        let n = i % sources;
        let src = SocketAddr::new(
            IpAddr::from([10, (n >> 16) as u8, (n >> 8) as u8, n as u8]),
            5000,
        );
        r.handle(now, src, &probe, &status, &mut out);
        spoofed_answers += out.len() as u64;
        if now >= next_query {
            asked += 1;
            known_ok += usize::from(exchange(&mut r, now, known, &mut out));
            // A new client each time: never proven.
            let stranger = IpAddr::from([192, 0, 2, 20 + asked as u8]);
            stranger_ok += usize::from(exchange(&mut r, now, stranger, &mut out));
            next_query += Duration::from_millis(150);
        }
    }
    eprintln!(
        "known client {known_ok}/{asked}, new clients {stranger_ok}/{asked}, \
         {spoofed_answers} answers to {} spoofed datagrams",
        rate * secs
    );
    assert!(asked >= 12);
    assert_eq!(
        known_ok, asked,
        "the known client lost answers to the flood"
    );
    // New clients compete with the flood for the overall budget once its burst is spent.
    assert!(
        stranger_ok < asked,
        "new clients never competed with the flood"
    );
    // Overall budget: burst 10,000 + 10,000/s × 2 s, plus the stranger's answers.
    assert!(
        spoofed_answers <= 30_000,
        "spoofed sources got {spoofed_answers} answers"
    );
}
