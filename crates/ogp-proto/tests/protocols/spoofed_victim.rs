//! A spoofer sending requests with a victim's source address cannot spend the victim's
//! budget: answers to requests with a valid challenge are charged to the source's own
//! budget; challenges and answers no larger than their request, which give a spoofer
//! nothing, only to an overall budget (so that a client asking for a fresh challenge
//! before every query keeps getting it); every other answer to a budget of its own, per
//! source and overall. Simulated time, the sans-IO responder, every protocol (the draft
//! on its own listener). (The loopback tests with real client libraries are
//! `ogp-cli/tests/all/spoofed_victim.rs`.)

use std::net::{IpAddr, SocketAddr};
use std::time::{Duration, Instant};

use ogp_proto::a2s::request::Request as A2sRequest;
use ogp_proto::a2s::Message as A2sMessage;
use ogp_proto::gamespy3::reply::{decode_reply, Reply as Gs3Reply};
use ogp_proto::gamespy3::request::Request as Gs3Request;
use ogp_proto::guard::RateConfig;
use ogp_proto::responder::{Listener, Outcome, Responder, ResponderConfig, Transmits};
use ogp_proto::Status;
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

// ------------------------------------------------------------------------------------
// A victim that asks for a fresh challenge before every query (python-a2s, gamedig,
// qstat and most clients do), in every protocol the responder answers.

/// One protocol's fresh-challenge client: what the spoofer sends in the victim's name
/// (the protocol's challenge request), the listener it goes to, and one whole exchange
/// of the victim from the challenge request on.
struct Fresh {
    name: &'static str,
    listener: Listener,
    spoof: Vec<u8>,
    /// The victim's whole query, started from the challenge request: true when every
    /// step was answered with what the client needs.
    exchange: fn(&mut Exchange<'_>) -> bool,
}

/// The victim's side of an exchange: sends from the victim's address at `now`.
struct Exchange<'a> {
    r: &'a mut Responder,
    now: Instant,
    status: &'a Status,
    out: &'a mut Transmits,
}

impl Exchange<'_> {
    /// Sends `d` from the victim; the answers (none when it was held back).
    fn send(&mut self, d: &[u8]) -> Vec<Vec<u8>> {
        self.r
            .handle(self.now, victim(27005), d, self.status, self.out);
        self.out.iter().map(<[u8]>::to_vec).collect()
    }

    /// Sends `d` and reads a value (a challenge) from its only answer.
    fn ask<T>(&mut self, d: &[u8], read: impl Fn(&[u8]) -> Option<T>) -> Option<T> {
        match self.send(d).as_slice() {
            [one] => read(one),
            _ => None,
        }
    }
}

fn a2s_challenge_of(d: &[u8]) -> Option<u32> {
    match ogp_proto::a2s::decode(d).ok()?.message {
        A2sMessage::Challenge(c) => Some(c.challenge),
        _ => None,
    }
}

/// python-a2s: each of INFO, PLAYER and RULES starts from its challenge request.
fn a2s_exchange(x: &mut Exchange<'_>) -> bool {
    type Make = fn(Option<u32>) -> A2sRequest;
    type Want = fn(&A2sMessage) -> bool;
    let steps: [(Make, Want); 3] = [
        (A2sRequest::info, |m| matches!(m, A2sMessage::Info(_))),
        (A2sRequest::player, |m| matches!(m, A2sMessage::Players(_))),
        (A2sRequest::rules, |m| matches!(m, A2sMessage::Rules(_))),
    ];
    steps.iter().all(|(make, want)| {
        let Some(c) = x.ask(&a2s_bytes(make(None)), a2s_challenge_of) else {
            return false;
        };
        x.send(&a2s_bytes(make(Some(c))))
            .first()
            .and_then(|d| ogp_proto::a2s::decode(d).ok())
            .is_some_and(|d| want(&d.message) || matches!(d.message, A2sMessage::Fragment(_)))
    })
}

/// The PHP client: the probe, then the default query with the challenge of its Error 3.
fn ogp_exchange(x: &mut Exchange<'_>) -> bool {
    let Some(c) = x.ask(&ogp_probe(), |d| {
        ogp_proto::ogp::decode(d).ok()?.header.challenge
    }) else {
        return false;
    };
    x.send(&ogp_query_with(c)).first().is_some_and(|d| {
        matches!(
            ogp_proto::ogp::decode(d).map(|p| p.message),
            Ok(ogp_proto::ogp::Message::Answer(_) | ogp_proto::ogp::Message::Fragment { .. })
        )
    })
}

/// gamedig and qstat: `FE FD 09`, then the full query with the challenge.
fn gs3_exchange(x: &mut Exchange<'_>) -> bool {
    let sid = 0x0102_0304;
    let hs = Gs3Request::Challenge { session_id: sid }.to_bytes();
    let Some(c) = x.ask(&hs, |d| match decode_reply(d).ok()? {
        Gs3Reply::Challenge(c) if c.session_id == sid => c.value(),
        _ => None,
    }) else {
        return false;
    };
    x.send(&Gs3Request::full(sid, Some(c)).to_bytes())
        .first()
        .is_some_and(|d| {
            matches!(
                decode_reply(d),
                Ok(Gs3Reply::Packet(p)) if p.session_id == sid
            ) || matches!(decode_reply(d), Ok(Gs3Reply::Keys { session_id, .. }) if session_id == sid)
        })
}

/// The GQP probe our client sends for a token (padded so that the token fits in an
/// answer no larger than it).
#[cfg(feature = "gqp")]
const GQP_PROBE: &[u8] = b"challenge\x1e0000000000000\x04";

/// Our GQP client: the padded probe for a token, then `identify` with it.
#[cfg(feature = "gqp")]
fn gqp_exchange(x: &mut Exchange<'_>) -> bool {
    use ogp_proto::gqp::{decode_reply, Record, StatusCode};
    let Some(token) = x.ask(GQP_PROBE, |d| {
        let r = decode_reply(d, 1 << 16).ok()?.replies.into_iter().next()?;
        match (r.code, r.records.as_slice()) {
            (StatusCode::OK, [Record::String(t)]) => Some(t.clone()),
            _ => None,
        }
    }) else {
        return false;
    };
    let mut q = b"challenge\x1e".to_vec();
    q.extend_from_slice(token.as_bytes());
    q.extend_from_slice(b"\x1didentify\x04");
    let answers = x.send(&q);
    answers.len() == 1
        && answers
            .first()
            .and_then(|d| decode_reply(d, 1 << 16).ok())
            .is_some_and(|d| {
                d.replies.len() == 2 && d.replies.iter().all(|r| r.code == StatusCode::OK)
            })
}

/// A draft query asking for everything, with `challenge` (0xFFFFFFFF asks for one).
fn draft_query(challenge: u32) -> Vec<u8> {
    use ogp_proto::ogp_draft::{encode_query, DefaultQuery, Header, PacketType};
    let mut d = Vec::new();
    encode_query(
        &Header {
            request_id: Some(0x1122_3344),
            challenge: Some(challenge),
            ..Header::query(PacketType::DEFAULT_QUERY)
        },
        Some(&DefaultQuery::everything()),
        &mut d,
    );
    d
}

/// Our draft client: the query with the "give me one" challenge, then with the one the
/// Type 1 None answer carried.
fn draft_exchange(x: &mut Exchange<'_>) -> bool {
    use ogp_proto::ogp_draft::{decode, Message, REQUEST_CHALLENGE};
    let Some(c) = x.ask(&draft_query(REQUEST_CHALLENGE), |d| {
        let p = decode(d).ok()?;
        matches!(p.message, Message::None)
            .then_some(p.header.challenge)
            .flatten()
    }) else {
        return false;
    };
    x.send(&draft_query(c))
        .first()
        .and_then(|d| decode(d).ok())
        .is_some_and(|p| !matches!(p.message, Message::None))
}

fn fresh_cases() -> Vec<Fresh> {
    let mut cases = vec![
        Fresh {
            name: "A2S",
            listener: Listener::Standard,
            spoof: a2s_bytes(A2sRequest::info(None)),
            exchange: a2s_exchange,
        },
        Fresh {
            name: "OGP",
            listener: Listener::Standard,
            spoof: ogp_probe(),
            exchange: ogp_exchange,
        },
        Fresh {
            name: "GameSpy v3",
            listener: Listener::Standard,
            spoof: Gs3Request::Challenge {
                session_id: 0x0a0b_0c0d,
            }
            .to_bytes(),
            exchange: gs3_exchange,
        },
        Fresh {
            name: "OGP draft",
            listener: Listener::OgpDraft,
            spoof: draft_query(ogp_proto::ogp_draft::REQUEST_CHALLENGE),
            exchange: draft_exchange,
        },
    ];
    #[cfg(feature = "gqp")]
    cases.push(Fresh {
        name: "GQP",
        listener: Listener::Standard,
        spoof: GQP_PROBE.to_vec(),
        exchange: gqp_exchange,
    });
    cases
}

/// What one flood did: the victim's exchanges answered of those tried, and what the
/// spoofed requests got back.
struct Flooded {
    answered: usize,
    asked: usize,
    spoofed: u64,
    spoofed_bytes: u64,
    replies: u64,
    reply_bytes: u64,
    largest_ratio: f64,
}

/// A default responder for `case.listener`; the spoofer sends `case.spoof` with the
/// victim's address `rate` times a second (starting 400 ms before the victim's first
/// query, with a fresh source port each time), the victim does one whole exchange every
/// 150 ms for 5 s. Simulated time: no sleeping.
fn fresh_attack(case: &Fresh, rate: u32) -> Flooded {
    let t0 = Instant::now();
    let mut config = ResponderConfig::default();
    config.listener = case.listener;
    let mut r = Responder::new(config, [9; 32], t0);
    let status = demo_state();
    let mut out = Transmits::default();
    let mut f = Flooded {
        answered: 0,
        asked: 0,
        spoofed: 0,
        spoofed_bytes: 0,
        replies: 0,
        reply_bytes: 0,
        largest_ratio: 0.0,
    };
    let spoof_every = Duration::from_secs(1) / rate;
    let mut next_spoof = t0;
    let mut next_query = t0 + Duration::from_millis(400);
    let end = next_query + Duration::from_secs(5);
    while next_query < end {
        if next_spoof <= next_query {
            let port = 1024 + (f.spoofed % 60_000) as u16;
            r.handle(next_spoof, victim(port), &case.spoof, &status, &mut out);
            f.spoofed += 1;
            f.spoofed_bytes += case.spoof.len() as u64;
            for d in out.iter() {
                f.replies += 1;
                f.reply_bytes += d.len() as u64;
                f.largest_ratio = f
                    .largest_ratio
                    .max(d.len() as f64 / case.spoof.len() as f64);
            }
            next_spoof += spoof_every;
            continue;
        }
        f.asked += 1;
        let ok = (case.exchange)(&mut Exchange {
            r: &mut r,
            now: next_query,
            status: &status,
            out: &mut out,
        });
        f.answered += usize::from(ok);
        next_query += Duration::from_millis(150);
    }
    f
}

/// A spoofer sending the protocol's challenge request in the victim's name, at 200 and
/// at 2,000 a second, does not stop a client that asks for a fresh challenge before
/// every query: every one of its queries is answered, in every protocol. The spoofed
/// requests get their challenges (they are not limited per source: that is what let the
/// spoofer cut the victim off), each at most 3× its request, and overall the flood got
/// at most 3× what it sent. Before: the challenges were charged to the victim's
/// per-source budget of 20 a second, which 200 spoofed requests a second kept empty.
#[test]
fn a_spoofer_cannot_stop_a_client_that_asks_for_a_fresh_challenge_each_time() {
    // first: without a spoofer, every exchange works (the cases are right)
    for case in fresh_cases() {
        let t0 = Instant::now();
        let mut config = ResponderConfig::default();
        config.listener = case.listener;
        let mut r = Responder::new(config, [9; 32], t0);
        let status = demo_state();
        let mut out = Transmits::default();
        let ok = (0..10)
            .filter(|i| {
                (case.exchange)(&mut Exchange {
                    r: &mut r,
                    now: t0 + Duration::from_millis(150 * i),
                    status: &status,
                    out: &mut out,
                })
            })
            .count();
        assert_eq!(ok, 10, "{} without a spoofer", case.name);
    }
    for case in fresh_cases() {
        for rate in [200, 2000] {
            let f = fresh_attack(&case, rate);
            let overall = f.reply_bytes as f64 / f.spoofed_bytes as f64;
            eprintln!(
                "{} spoofed at {rate}/s: victim {} of {} fresh-challenge queries answered; \
                 {} spoofed requests ({} B) got {} answers ({} B): at most {:.2}× per \
                 message, {overall:.2}× overall",
                case.name,
                f.answered,
                f.asked,
                f.spoofed,
                f.spoofed_bytes,
                f.replies,
                f.reply_bytes,
                f.largest_ratio,
            );
            assert!(f.asked >= 33, "{}", case.name);
            assert_eq!(
                f.answered, f.asked,
                "{} at {rate}/s: only {} of {} answered",
                case.name, f.answered, f.asked
            );
            assert!(f.replies >= 1, "{}: the spoofed requests", case.name);
            assert!(f.largest_ratio <= 3.0, "{}: {}", case.name, f.largest_ratio);
            assert!(overall <= 3.0, "{}: {overall}", case.name);
        }
    }
}

/// The answers a spoofer gets in a victim's name without a per-source limit are bounded
/// overall: a flood of challenge requests from one address at 30,000 a second gets the
/// overall budget (burst 10,000, then 10,000 a second) and no more. Answers that are
/// larger than their request and are no challenge keep their per-source limit.
#[test]
fn challenges_in_one_name_are_bounded_overall_and_other_answers_per_source() {
    let t0 = Instant::now();
    let mut r = Responder::new(ResponderConfig::default(), [9; 32], t0);
    let status = demo_state();
    let mut out = Transmits::default();
    let probe = a2s_bytes(A2sRequest::info(None));
    let (rate, secs) = (30_000u32, 2u32);
    let every = Duration::from_secs(1) / rate;
    let mut answered = 0u64;
    for i in 0..rate * secs {
        r.handle(t0 + every * i, victim(5000), &probe, &status, &mut out);
        answered += out.len() as u64;
    }
    eprintln!(
        "{answered} challenges for {} spoofed requests in {secs} s",
        rate * secs
    );
    assert!(answered >= 29_000, "{answered}");
    assert!(answered <= 30_001, "{answered}");
    // An OGP query of a type nobody serves gets Error 1, one byte more than the query
    // and no challenge: the source's budget of unproven answers (burst 40).
    let bad_type = [0xff, 0xff, 0xff, 0xff, b'O', b'G', b'P', 0, 3, 0x42, 0];
    let t1 = t0 + Duration::from_secs(10);
    let errors = (0..1000)
        .filter(|_| {
            r.handle(t1, victim(5000), &bad_type, &status, &mut out);
            !out.is_empty()
        })
        .count();
    assert_eq!(errors, 40);
}
