//! End to end over real UDP on loopback: the tokio responder and the tokio client.
//!
//! * random statuses (UTF-8 and Latin-1, empty lists and strings, 255+ players in split
//!   answers) come back as OGP normalises them;
//! * `StatusCell::set` / `update` while serving;
//! * a relay between client and responder that drops, duplicates and reorders split
//!   packets, or injects garbage and answers with a wrong RequestID; a second socket
//!   sending a forged answer to the client's port;
//! * timeouts against a silent port and a closed one;
//! * the PHP client's two-socket flow with plain `std::net::UdpSocket`s;
//! * `blocking::query` from a plain thread; IPv6 (`[::1]`, skipped when unavailable).
//!
//! Every wait is bounded by a timeout.

use std::net::{Ipv6Addr, SocketAddr, SocketAddrV6};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use ogp_net::client;
use ogp_net::responder::{self, ResponderHandle};
use ogp_net::StatusCell;
use ogp_proto::client::{Answer, Details, Event, Options, QueryDriver, QueryError, Timing};
use ogp_proto::guard::RateConfig;
use ogp_proto::internals::from_hex;
use ogp_proto::ogp::client::{QueryMachine, QueryOptions};
use ogp_proto::ogp::query::request;
use ogp_proto::ogp::{self, AnswerOptions, DefaultQuery, Header, Message, PacketType, PREFIX};
use ogp_proto::responder::ResponderConfig;
use ogp_proto::{Player, Protocol, Rules, Status, Team, Text};
use ogp_testkit::{
    big_status, demo_state, empty_lists, many_players, served, status_and_charset, Charset,
};
use proptest::prelude::*;
use proptest::test_runner::{Config, TestRunner};
use tokio::net::UdpSocket;
use tokio::time::timeout;

/// Upper bound for any single exchange in these tests.
const LIMIT: Duration = Duration::from_secs(10);

fn localhost() -> SocketAddr {
    "127.0.0.1:0".parse().unwrap()
}

/// A responder config without a practical rate limit: the tests send many queries from
/// 127.0.0.1 in quick succession (the limiter has its own tests).
fn test_config() -> ResponderConfig {
    let mut cfg = ResponderConfig::default();
    cfg.rate = RateConfig::new(1.0e6, 1.0e6);
    cfg
}

async fn serve_on(addr: SocketAddr, status: Status) -> (ResponderHandle, Arc<StatusCell>) {
    let cell = StatusCell::new(status);
    let h = responder::spawn(addr, Arc::clone(&cell), test_config())
        .await
        .expect("bind responder");
    (h, cell)
}

async fn serve(status: Status) -> (ResponderHandle, Arc<StatusCell>) {
    serve_on(localhost(), status).await
}

/// What a client decodes from a default responder's answer to a query for everything.
fn expected(s: &Status) -> Status {
    served(s, request::ALL_LISTS)
}

/// An OGP query of `addr` with these OGP options and timers.
async fn query_with(
    addr: SocketAddr,
    ogp: QueryOptions,
    timing: Timing,
) -> Result<Answer, QueryError> {
    let mut opts = Options::with_timing(timing);
    opts.ogp = ogp;
    let r = timeout(LIMIT, client::query(addr, Protocol::Ogp, &opts))
        .await
        .expect("query did not finish within its own deadline");
    if let Ok(a) = &r {
        assert_eq!(a.protocol, Protocol::Ogp);
        assert_eq!(a.addr, Some(addr), "the answer names the queried address");
    }
    r
}

/// An OGP query of `addr` with these OGP options and the default timers.
async fn query(addr: SocketAddr, opts: QueryOptions) -> Result<Answer, QueryError> {
    query_with(addr, opts, Timing::default()).await
}

/// The challenge an OGP answer reports.
fn challenge(o: &Answer) -> Option<u32> {
    match &o.details {
        Details::Ogp(d) => d.challenge,
        other => panic!("not OGP details: {other:?}"),
    }
}

fn count_events(o: &Answer, f: impl Fn(&Event) -> bool) -> usize {
    o.events.iter().filter(|e| f(e)).count()
}

fn dropped(o: &Answer, reason: &str) -> usize {
    count_events(
        o,
        |e| matches!(e, Event::Dropped { why, .. } if *why == reason),
    )
}

fn sent(o: &Answer) -> usize {
    count_events(o, |e| matches!(e, Event::Sent { .. }))
}

// =======================================================================================
// Random statuses

/// A status, whether to ask for UTF-8, and the MaxBytesPerPacket to ask for.
fn case() -> BoxedStrategy<(Status, bool, Option<u16>)> {
    prop_oneof![
        // ordinary statuses (lists of 0–6 entries, strings of 0–9 characters), unsplit or
        // split at 500 / 1400 bytes
        3 => (
            status_and_charset(false),
            prop_oneof![Just(None), Just(Some(500u16)), Just(Some(1400u16))],
        )
            .prop_map(|((utf8, s), m)| (s, utf8, m)),
        // 255–300 players: needs a split answer
        1 => any::<bool>()
            .prop_flat_map(|utf8| {
                let cs = if utf8 { Charset::Utf8 } else { Charset::Latin1 };
                (big_status(cs, 255..300), Just(utf8))
            })
            .prop_map(|(s, utf8)| (s, utf8, Some(1400u16))),
    ]
    .boxed()
}

#[test]
fn random_statuses_round_trip_over_udp() {
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap();
    let (handle, cell) = rt.block_on(serve(Status::default()));
    let addr = handle.local_addr();
    let mut runner = TestRunner::new(Config {
        cases: 24,
        failure_persistence: None,
        ..Config::default()
    });
    let latin1 = std::cell::Cell::new(0usize);
    runner
        .run(&case(), |(s, utf8, m)| {
            cell.set(s.clone());
            let mut opts = QueryOptions::default();
            opts.utf8 = utf8;
            opts.max_bytes_per_packet = m;
            let o = rt
                .block_on(query(addr, opts))
                .map_err(|e| TestCaseError::fail(format!("query failed: {e}")))?;
            prop_assert!(o.warnings.is_empty(), "warnings: {:?}", o.warnings);
            prop_assert_eq!(&o.status, &expected(&s));
            if let Some(m) = m {
                // every answer datagram (as far as the capped event log shows them) fits
                for e in &o.events {
                    if let Event::Part { bytes, .. } | Event::Reply { bytes, .. } = e {
                        prop_assert!(*bytes <= usize::from(m), "{} B > {}", bytes, m);
                    }
                }
            }
            if s.players.as_ref().is_some_and(|p| p.len() >= 255) {
                prop_assert!(o.datagrams > 1, "300 players in one datagram");
            }
            latin1.set(latin1.get() + usize::from(!utf8));
            Ok(())
        })
        .unwrap();
    assert!(latin1.get() > 0, "no Latin-1 case ran");
    rt.block_on(handle.shutdown()).unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn big_split_answers_in_both_charsets() {
    // deterministic companions of the random test: 300 players in 1400- and 500-byte
    // packets, UTF-8 and Latin-1
    let mut s = many_players(300, 24);
    s.host_name = Some("Grüße aus Köln".into());
    let (handle, _cell) = serve(s.clone()).await;
    for (utf8, m) in [(true, 1400u16), (false, 1400), (true, 500)] {
        let o = query(handle.local_addr(), {
            let mut opts = QueryOptions::default();
            opts.utf8 = utf8;
            opts.max_bytes_per_packet = Some(m);
            opts
        })
        .await
        .unwrap();
        assert!(o.datagrams > 5, "{} datagrams", o.datagrams);
        assert_eq!(o.status, expected(&s), "utf8 {utf8}, {m}");
        assert_eq!(o.status.host_name.as_deref(), Some("Grüße aus Köln"));
    }
    handle.shutdown().await.unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn empty_lists_and_empty_strings() {
    let mut s = empty_lists();
    s.game_id = Some(0);
    s.game_name = Some(Text::default());
    s.host_name = Some(Text::default());
    s.map = Some(ogp_proto::MapInfo::named(""));
    let (handle, _cell) = serve(s.clone()).await;
    let o = query(handle.local_addr(), QueryOptions::default())
        .await
        .unwrap();
    assert_eq!(o.status, expected(&s));
    assert_eq!(o.status.players, Some(vec![]));
    assert_eq!(o.status.host_name.as_deref(), Some(""));
    // entries whose strings are all empty
    let mut s = Status::default();
    s.teams = Some(vec![Team::named(Text::default())]);
    s.players = Some(vec![Player::named(Text::default()); 3]);
    s.rules = Some(Rules(vec![(Text::default(), Text::default())]));
    let (handle2, _cell2) = serve(s.clone()).await;
    let o = query(handle2.local_addr(), QueryOptions::default())
        .await
        .unwrap();
    assert_eq!(o.status, expected(&s));
    handle.shutdown().await.unwrap();
    handle2.shutdown().await.unwrap();
}

// =======================================================================================
// Status updates

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn status_updates_are_seen_by_the_next_query() {
    let first = demo_state();
    let (handle, cell) = serve(first.clone()).await;
    let addr = handle.local_addr();
    let o = query(addr, QueryOptions::default()).await.unwrap();
    assert_eq!(o.status, expected(&first));

    let mut second = first.clone();
    second.host_name = Some("Second name".into());
    second.players = Some(vec![]);
    cell.set(second.clone());
    // reuse the challenge: one round trip
    let o2 = query(addr, {
        let mut opts = QueryOptions::default();
        opts.challenge = challenge(&o);
        opts
    })
    .await
    .unwrap();
    assert_eq!(o2.status, expected(&second));
    assert_eq!(
        sent(&o2),
        1,
        "the known challenge is accepted from a new port"
    );

    cell.update(|s| s.map = Some(ogp_proto::MapInfo::named("Updated map")));
    let o3 = query(addr, QueryOptions::default()).await.unwrap();
    assert_eq!(
        o3.status.map.as_ref().map(|m| m.name.as_str()),
        Some("Updated map")
    );
    assert_eq!(o3.status.host_name.as_deref(), Some("Second name"));
    // the task publishes its counters right after sending; give it a moment
    let t = Instant::now();
    while handle.stats().received < 5 && t.elapsed() < Duration::from_secs(2) {
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    assert!(handle.stats().received >= 5, "{:?}", handle.stats());
    handle.shutdown().await.unwrap();
}

// =======================================================================================
// A relay between client and responder

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Mode {
    /// Split answers: the first loses packet 2, packet 0 is duplicated and the rest is
    /// reversed; later ones arrive reversed with packet 0 again at the end.
    Lossy,
    /// Before forwarding each query, send the client garbage, an OGP datagram that does
    /// not decode and a complete answer with another RequestID.
    Noise,
    /// Before forwarding each query, a third socket sends forged answers (with and
    /// without the client's RequestID) to the client's port.
    Spoof,
}

#[derive(Debug, Default)]
struct RelayLog {
    queries: usize,
    split_answers: usize,
    split_count: usize,
    forged_sent: usize,
}

struct Relay {
    addr: SocketAddr,
    log: Arc<Mutex<RelayLog>>,
    task: tokio::task::JoinHandle<()>,
}

impl Drop for Relay {
    fn drop(&mut self) {
        self.task.abort();
    }
}

fn forged_status() -> Status {
    let mut status = Status::default();
    status.game_id = Some(42);
    status.host_name = Some("FORGED".into());
    status
}

/// A complete, valid unsplit answer carrying `s`.
fn answer_datagram(s: &Status, request_id: Option<u32>) -> Vec<u8> {
    let mut h = Header::answer(PacketType::DEFAULT_QUERY).with_utf8(true);
    h.request_id = request_id;
    let mut d = Vec::new();
    let opts = AnswerOptions {
        utf8: true,
        colors: false,
    };
    ogp::encode_answer(&h, s, &DefaultQuery::everything(), &opts, &mut d);
    d
}

/// Send order of the packets of the `k`-th split answer of `n` packets.
fn lossy_order(k: usize, n: usize) -> Vec<usize> {
    if k == 0 {
        let mut order = vec![0, 0];
        order.extend((1..n).rev().filter(|&i| i != 2));
        order
    } else {
        let mut order: Vec<usize> = (0..n).rev().collect();
        order.push(0);
        order
    }
}

async fn start_relay(upstream: SocketAddr, mode: Mode) -> Relay {
    let front = UdpSocket::bind(localhost()).await.unwrap();
    let back = UdpSocket::bind(localhost()).await.unwrap();
    back.connect(upstream).await.unwrap();
    let attacker = UdpSocket::bind(localhost()).await.unwrap();
    let addr = front.local_addr().unwrap();
    let log = Arc::new(Mutex::new(RelayLog::default()));
    let task = tokio::spawn(run_relay(front, back, attacker, mode, Arc::clone(&log)));
    Relay { addr, log, task }
}

async fn run_relay(
    front: UdpSocket,
    back: UdpSocket,
    attacker: UdpSocket,
    mode: Mode,
    log: Arc<Mutex<RelayLog>>,
) {
    let mut client: Option<SocketAddr> = None;
    let mut pending: Vec<(u8, Vec<u8>)> = Vec::new();
    let mut answers = 0usize;
    let mut qbuf = vec![0u8; 65536];
    let mut abuf = vec![0u8; 65536];
    let forged = forged_status();
    loop {
        tokio::select! {
            r = front.recv_from(&mut qbuf) => {
                let Ok((n, src)) = r else { continue };
                client = Some(src);
                let q = qbuf[..n].to_vec();
                log.lock().unwrap().queries += 1;
                let rid = ogp::decode_query_header(&q)
                    .ok()
                    .and_then(|(h, _)| h.request_id)
                    .unwrap_or(1);
                match mode {
                    Mode::Noise => {
                        let _ = front.send_to(b"garbage, not OGP at all", src).await;
                        let mut bad = PREFIX.to_vec();
                        bad.push(0x30);
                        let _ = front.send_to(&bad, src).await;
                        let wrong = answer_datagram(&forged, Some(rid ^ 0x5a5a_5a5a));
                        let _ = front.send_to(&wrong, src).await;
                        log.lock().unwrap().forged_sent += 3;
                    }
                    Mode::Spoof => {
                        for id in [None, Some(rid)] {
                            if attacker.send_to(&answer_datagram(&forged, id), src).await.is_ok() {
                                log.lock().unwrap().forged_sent += 1;
                            }
                        }
                        // give the forgeries time to arrive first
                        tokio::time::sleep(Duration::from_millis(100)).await;
                    }
                    Mode::Lossy => {}
                }
                let _ = back.send(&q).await;
            }
            r = back.recv(&mut abuf) => {
                let Ok(n) = r else { continue };
                let Some(client) = client else { continue };
                let d = abuf[..n].to_vec();
                let split = ogp::decode_query_header(&d).ok().and_then(|(h, _)| h.split);
                match (mode, split) {
                    (Mode::Lossy, Some(s)) => {
                        pending.push((s.number, d));
                        if pending.len() == usize::from(s.count) {
                            pending.sort_by_key(|p| p.0);
                            for i in lossy_order(answers, pending.len()) {
                                let _ = front.send_to(&pending[i].1, client).await;
                            }
                            let mut l = log.lock().unwrap();
                            l.split_answers += 1;
                            l.split_count = pending.len();
                            pending.clear();
                            answers += 1;
                        }
                    }
                    _ => {
                        let _ = front.send_to(&d, client).await;
                    }
                }
            }
        }
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn lost_duplicated_and_reordered_split_packets() {
    let s = many_players(300, 20);
    let (handle, _cell) = serve(s.clone()).await;
    let relay = start_relay(handle.local_addr(), Mode::Lossy).await;
    let mut opts = QueryOptions::default();
    opts.max_bytes_per_packet = Some(500);
    let timing = Timing::default()
        .attempt_timeout(Duration::from_millis(400))
        .retries(3)
        .total_timeout(Duration::from_secs(5));
    let o = query_with(relay.addr, opts, timing).await.unwrap();
    assert_eq!(o.status, expected(&s));
    {
        let log = relay.log.lock().unwrap();
        assert!(log.split_count >= 4, "only {} packets", log.split_count);
        assert!(
            log.split_answers >= 2,
            "the lost packet needed a retry: {log:?}"
        );
    }
    // challenge 0 → Error 3, the query, one retry after packet 2 was lost
    assert!(sent(&o) >= 3, "{:?}", o.events);
    assert!(dropped(&o, "duplicate split packet") >= 1, "{:?}", o.events);
    handle.shutdown().await.unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn garbage_and_other_request_ids_are_ignored() {
    let s = demo_state();
    let (handle, _cell) = serve(s.clone()).await;
    let relay = start_relay(handle.local_addr(), Mode::Noise).await;
    let o = query(relay.addr, QueryOptions::default()).await.unwrap();
    assert_eq!(o.status, expected(&s));
    assert!(dropped(&o, "another RequestID") >= 1, "{:?}", o.events);
    assert!(dropped(&o, "does not decode") >= 2, "{:?}", o.events);
    assert!(relay.log.lock().unwrap().forged_sent >= 3);
    handle.shutdown().await.unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn answers_from_other_addresses_are_not_accepted() {
    // control: the forged answers would be accepted if they reached the client
    let t0 = Instant::now();
    for id in [None, Some(77)] {
        let mut m = QueryMachine::new(QueryOptions::default(), Timing::default(), 77, t0);
        m.poll_transmit(t0).unwrap();
        m.handle_datagram(t0, &answer_datagram(&forged_status(), id));
        let got = m.take_result().expect("accepted").expect("an answer");
        assert_eq!(got.status.host_name.as_deref(), Some("FORGED"));
    }

    let s = demo_state();
    let (handle, _cell) = serve(s.clone()).await;
    let relay = start_relay(handle.local_addr(), Mode::Spoof).await;
    let o = query(relay.addr, QueryOptions::default()).await.unwrap();
    assert!(relay.log.lock().unwrap().forged_sent >= 2, "nothing forged");
    assert_eq!(
        o.status.host_name, s.host_name,
        "a forged answer was accepted"
    );
    assert_eq!(o.status, expected(&s));
    handle.shutdown().await.unwrap();
}

// =======================================================================================
// Timeouts

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_silent_port_times_out_after_every_attempt() {
    // bound but never read: nothing answers, and no ICMP error either
    let silent = std::net::UdpSocket::bind(localhost()).unwrap();
    let addr = silent.local_addr().unwrap();
    let timing = Timing::default()
        .attempt_timeout(Duration::from_millis(200))
        .retries(2)
        .backoff_percent(150)
        .total_timeout(Duration::from_secs(2));
    let total = timing.total_timeout;
    let t = Instant::now();
    let r = query_with(addr, QueryOptions::default(), timing).await;
    let elapsed = t.elapsed();
    match r {
        Err(
            ref e @ QueryError::NoAnswer {
                protocol: Protocol::Ogp,
                step: None,
                attempts,
            },
        ) => {
            assert_eq!(attempts, 3);
            assert!(e.is_timeout());
        }
        other => panic!("expected a timeout after 3 attempts, got {other:?}"),
    }
    // 200 + 300 + 450 ms of attempts, well inside the total deadline
    assert!(elapsed >= Duration::from_millis(900), "{elapsed:?}");
    assert!(elapsed < total + Duration::from_millis(500), "{elapsed:?}");

    // a total deadline shorter than the attempts cuts the last one short
    let timing = Timing::default()
        .attempt_timeout(Duration::from_millis(200))
        .retries(5)
        .total_timeout(Duration::from_millis(600));
    let t = Instant::now();
    let r = query_with(addr, QueryOptions::default(), timing).await;
    let elapsed = t.elapsed();
    assert!(
        matches!(
            r,
            Err(QueryError::NoAnswer {
                protocol: Protocol::Ogp,
                step: None,
                // three attempts start within 600 ms (0, 200, 400); on a machine so
                // loaded that a timer fires late, the third may not have started
                attempts: 2..=3
            })
        ),
        "{r:?}"
    );
    assert!(elapsed >= Duration::from_millis(550), "{elapsed:?}");
    assert!(elapsed < Duration::from_millis(600 + 500), "{elapsed:?}");
    drop(silent);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_closed_port_is_refused_or_times_out_quickly() {
    let addr = {
        let s = std::net::UdpSocket::bind(localhost()).unwrap();
        s.local_addr().unwrap()
    };
    let timing = Timing::default()
        .attempt_timeout(Duration::from_millis(300))
        .retries(1)
        .total_timeout(Duration::from_millis(800));
    let t = Instant::now();
    let r = query_with(addr, QueryOptions::default(), timing).await;
    let elapsed = t.elapsed();
    eprintln!("closed port: {r:?} after {elapsed:?}");
    match r {
        // ICMP port unreachable arrived: right after the first send
        Err(QueryError::Refused {
            protocol: Some(Protocol::Ogp),
        }) => {
            assert!(elapsed < Duration::from_millis(300), "{elapsed:?}");
        }
        // no ICMP on this system
        Err(QueryError::NoAnswer {
            protocol: Protocol::Ogp,
            step: None,
            attempts,
        }) => {
            assert_eq!(attempts, 2);
        }
        other => panic!("expected Refused or a timeout, got {other:?}"),
    }
    assert!(elapsed < Duration::from_millis(800 + 500), "{elapsed:?}");
}

// =======================================================================================
// The PHP client's flow with plain sockets

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn php_client_flow_over_real_udp() {
    let s = demo_state();
    let (handle, _cell) = serve(s.clone()).await;
    let addr = handle.local_addr();
    let (e3, answer, ports) = tokio::task::spawn_blocking(move || {
        let mut buf = vec![0u8; 65536];
        // 1. the probe, from its own socket
        let a = std::net::UdpSocket::bind(localhost()).unwrap();
        a.set_read_timeout(Some(Duration::from_secs(3))).unwrap();
        a.connect(addr).unwrap();
        a.send(&from_hex("ffffffff4f475000030100").unwrap())
            .unwrap();
        let n = a.recv(&mut buf).expect("Error 3 to the probe");
        let e3 = buf[..n].to_vec();
        // 2. the query from a new socket, challenge copied from bytes 11..15
        let b = std::net::UdpSocket::bind(localhost()).unwrap();
        b.set_read_timeout(Some(Duration::from_secs(3))).unwrap();
        b.connect(addr).unwrap();
        let mut q = from_hex("ffffffff4f475000070112").unwrap();
        q.extend_from_slice(&e3[11..15]);
        q.extend_from_slice(&from_hex("bf018f9f0f1f3f3fbfbfbf010f").unwrap());
        b.send(&q).unwrap();
        let n = b.recv(&mut buf).expect("the answer");
        let ports = (
            a.local_addr().unwrap().port(),
            b.local_addr().unwrap().port(),
        );
        (e3, buf[..n].to_vec(), ports)
    })
    .await
    .unwrap();
    assert_ne!(ports.0, ports.1, "two source ports");
    assert_eq!((e3[8], e3[9], e3[10], e3[15]), (0x07, 0xff, 0x03, 0x03));
    assert_eq!(e3.len(), 31);
    assert_eq!((answer[8], answer[9], answer[10]), (0x07, 0x01, 0x13));
    assert_eq!(
        answer[11..15],
        e3[11..15],
        "the current challenge is echoed"
    );
    let p = ogp::decode(&answer).unwrap();
    let Message::Answer(a) = p.message else {
        panic!("not an answer: {:?}", p.message)
    };
    assert_eq!(a.request_flags, request::ALL_LISTS);
    assert_eq!(a.status, expected(&s));
    handle.shutdown().await.unwrap();
}

// =======================================================================================
// Blocking client, IPv6

#[test]
fn blocking_query_from_a_plain_thread() {
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap();
    let s = demo_state();
    let (handle, _cell) = rt.block_on(serve(s.clone()));
    let addr = handle.local_addr();
    let o = std::thread::spawn(move || {
        ogp_net::blocking::query(
            addr,
            Protocol::Ogp,
            &Options::with_timing(Timing::default().total_timeout(Duration::from_secs(5))),
        )
    })
    .join()
    .unwrap()
    .unwrap();
    assert_eq!(o.status, expected(&s));
    assert_eq!((o.protocol, o.addr), (Protocol::Ogp, Some(addr)));
    assert!(challenge(&o).is_some());
    rt.block_on(handle.shutdown()).unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn ipv6_loopback() {
    let v6: SocketAddr = SocketAddrV6::new(Ipv6Addr::LOCALHOST, 0, 0, 0).into();
    if let Err(e) = std::net::UdpSocket::bind(v6) {
        eprintln!("skipping: cannot bind [::1]: {e}");
        return;
    }
    let s = many_players(40, 12);
    let cell = StatusCell::new(s.clone());
    let handle = match responder::spawn(v6, Arc::clone(&cell), test_config()).await {
        Ok(h) => h,
        Err(e) => {
            eprintln!("skipping: cannot serve on [::1]: {e}");
            return;
        }
    };
    let addr = handle.local_addr();
    assert!(addr.is_ipv6());
    let o = query(addr, QueryOptions::default()).await.unwrap();
    assert_eq!(o.status, expected(&s));
    // the challenge works from the next query's new socket, and split answers too
    let o2 = query(addr, {
        let mut opts = QueryOptions::default();
        opts.challenge = challenge(&o);
        opts.max_bytes_per_packet = Some(500);
        opts
    })
    .await
    .unwrap();
    assert_eq!(sent(&o2), 1);
    assert!(o2.datagrams > 1);
    assert_eq!(o2.status, expected(&s));
    // names resolve: "[::1]:port" through `resolve`
    let r = client::resolve(&format!("[::1]:{}", addr.port()))
        .await
        .unwrap();
    assert_eq!(r, addr);
    handle.shutdown().await.unwrap();
}
