//! The scan engine on loopback: many responders (one process, many ports), dead ports,
//! a lossy relay, replies from the wrong address, garbage; auto-detection; bounded
//! admission with a slow consumer. Loopback addresses only; every loop is bounded.

use std::collections::HashMap;
use std::net::{Ipv4Addr, SocketAddr};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::Duration;

use ogp_net::responder::{self, ResponderHandle};
use ogp_net::scan::{self, Protocol, QueryError, ScanConfig, ScanResult, Target};
use ogp_net::StatusCell;
use ogp_proto::client::{Options, Timing};
use ogp_proto::guard::RateConfig;
use ogp_proto::responder::{Listener, ResponderConfig};
use ogp_proto::Status;
use tokio::net::UdpSocket;
use tokio::task::JoinHandle;
use tokio::time::timeout;

const LOOPBACK: Ipv4Addr = Ipv4Addr::LOCALHOST;

fn status(name: &str) -> Status {
    let mut status = ogp_testkit::demo_state();
    status.host_name = Some(name.into());
    status
}

async fn serve(name: &str, listener: Listener) -> ResponderHandle {
    let mut config = ResponderConfig::default();
    config.listener = listener;
    config.rate_table_capacity = 64;
    // One client sends many queries in the tests: no per-source limit.
    config.rate = RateConfig::new(1e6, 1e6);
    responder::spawn(
        SocketAddr::new(LOOPBACK.into(), 0),
        StatusCell::new(status(name)),
        config,
    )
    .await
    .expect("bind a loopback responder")
}

fn fast() -> ScanConfig {
    let mut cfg = ScanConfig::default();
    cfg.options = Options::with_timing(
        Timing::default()
            .attempt_timeout(Duration::from_millis(120))
            .retries(4)
            .total_timeout(Duration::from_secs(3)),
    );
    cfg.rate = 20_000;
    cfg
}

/// `fast()` with another attempt timeout and number of retries.
fn fast_with(attempt_timeout: Duration, retries: u32) -> ScanConfig {
    let mut c = fast();
    c.options.timing = c
        .options
        .timing
        .attempt_timeout(attempt_timeout)
        .retries(retries);
    c
}

/// What a relay does with the datagrams it forwards.
#[derive(Clone, Copy)]
enum Relay {
    /// Drops every third datagram, each way.
    Lossy,
    /// Answers from another socket (a wrong source address).
    WrongSource,
    /// Forwards only A2S queries (an A2S-only server).
    A2sOnly,
    /// Forwards only GameSpy v3 queries (FE FD …).
    Gs3Only,
}

/// A relay in front of `upstream` for one client; returns the address to query.
async fn relay(upstream: SocketAddr, mode: Relay) -> (SocketAddr, JoinHandle<()>) {
    let front = UdpSocket::bind((LOOPBACK, 0)).await.unwrap();
    let back = UdpSocket::bind((LOOPBACK, 0)).await.unwrap();
    let other = UdpSocket::bind((LOOPBACK, 0)).await.unwrap();
    back.connect(upstream).await.unwrap();
    let addr = front.local_addr().unwrap();
    let task = tokio::spawn(async move {
        let (mut a, mut b) = (vec![0u8; 65536], vec![0u8; 65536]);
        let mut client = None;
        let mut n = 0u64;
        // Bounded: the test aborts the task; each iteration handles one datagram.
        for _ in 0..100_000 {
            tokio::select! {
                r = front.recv_from(&mut a) => {
                    let Ok((len, src)) = r else { continue };
                    client = Some(src);
                    n += 1;
                    let d = &a[..len];
                    let pass = match mode {
                        Relay::Lossy => n % 3 != 0,
                        Relay::WrongSource => true,
                        Relay::A2sOnly => ogp_proto::a2s::is_a2s(d),
                        Relay::Gs3Only => d.starts_with(&[0xfe, 0xfd]),
                    };
                    if pass {
                        let _ = back.send(d).await;
                    }
                }
                r = back.recv(&mut b) => {
                    let Ok(len) = r else { continue };
                    let Some(c) = client else { continue };
                    n += 1;
                    let d = &b[..len];
                    match mode {
                        Relay::Lossy if n % 3 == 0 => {}
                        Relay::WrongSource => { let _ = other.send_to(d, c).await; }
                        _ => { let _ = front.send_to(d, c).await; }
                    }
                }
            }
        }
    });
    (addr, task)
}

/// A port that answers every datagram with garbage.
async fn garbage() -> (SocketAddr, JoinHandle<()>) {
    let s = UdpSocket::bind((LOOPBACK, 0)).await.unwrap();
    let addr = s.local_addr().unwrap();
    let task = tokio::spawn(async move {
        let mut buf = vec![0u8; 2048];
        for i in 0u32..100_000 {
            let Ok((len, src)) = s.recv_from(&mut buf).await else {
                continue;
            };
            // Protocol-looking prefixes with nonsense after them, and plain noise.
            let mut d: Vec<u8> = match i % 3 {
                0 => b"\xff\xff\xff\xffOGP\0\x07\x07".to_vec(),
                1 => b"\xff\xff\xff\xffI\x11".to_vec(),
                _ => buf[..len.min(16)].iter().map(|b| b ^ 0x5a).collect(),
            };
            d.extend_from_slice(&i.to_le_bytes());
            let _ = s.send_to(&d, src).await;
        }
    });
    (addr, task)
}

async fn run(targets: Vec<Target>, config: ScanConfig) -> (Vec<ScanResult>, scan::ScanStats) {
    let scan = scan::start(config).unwrap();
    let (tx, mut rx, handle) = (scan.targets, scan.results, scan.handle);
    let n = targets.len();
    tokio::spawn(async move {
        for t in targets {
            if tx.send(t).await.is_err() {
                break;
            }
        }
    });
    let mut out = Vec::new();
    while let Some(r) = timeout(Duration::from_secs(10), rx.recv()).await.unwrap() {
        out.push(r);
        assert!(out.len() <= n, "more results than targets");
    }
    let stats = timeout(Duration::from_secs(5), handle.join())
        .await
        .unwrap();
    (out, stats)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn mixed_list_live_dead_lossy_wrong_source_garbage() {
    let mut targets = Vec::new();
    let mut expect: HashMap<u64, (String, Protocol)> = HashMap::new();
    let mut keep = Vec::new();
    let mut id = 0u64;
    let mut add = |targets: &mut Vec<Target>, addr: SocketAddr, p: Option<Protocol>| {
        id += 1;
        targets.push(Target::new(addr.to_string(), p).with_id(id));
        id
    };
    // 48 live responders, every protocol (and auto), each with its own server name.
    for k in 0..48 {
        let protocol = [
            Some(Protocol::Ogp),
            Some(Protocol::A2s),
            Some(Protocol::Gqp),
            Some(Protocol::OgpDraft),
            None,
            Some(Protocol::Gamespy3),
        ][k % 6];
        let listener = if protocol == Some(Protocol::OgpDraft) {
            Listener::OgpDraft
        } else {
            Listener::Standard
        };
        let name = format!("server-{k}");
        let h = serve(&name, listener).await;
        let i = add(&mut targets, h.local_addr(), protocol);
        // Auto-detection prefers OGP.
        let answered = protocol.unwrap_or(Protocol::Ogp);
        expect.insert(i, (name, answered));
        keep.push(h);
    }
    // Lossy relays in front of live responders: still answered.
    let mut relays = Vec::new();
    for k in 0..4 {
        let name = format!("lossy-{k}");
        let h = serve(&name, Listener::Standard).await;
        let p = [Protocol::Ogp, Protocol::A2s][k % 2];
        let (addr, task) = relay(h.local_addr(), Relay::Lossy).await;
        let i = add(&mut targets, addr, Some(p));
        expect.insert(i, (name, p));
        keep.push(h);
        relays.push(task);
    }
    // Dead ports: bound, never read.
    let mut dead_ids = Vec::new();
    let mut dead = Vec::new();
    for k in 0..6 {
        let s = std::net::UdpSocket::bind((LOOPBACK, 0)).unwrap();
        dead_ids.push(add(
            &mut targets,
            s.local_addr().unwrap(),
            [Some(Protocol::Ogp), None, Some(Protocol::A2s)][k % 3],
        ));
        dead.push(s);
    }
    // Answers from the wrong address: dropped, so the target times out.
    let h = serve("wrong", Listener::Standard).await;
    let (wrong_addr, task) = relay(h.local_addr(), Relay::WrongSource).await;
    let wrong_id = add(&mut targets, wrong_addr, Some(Protocol::Ogp));
    keep.push(h);
    relays.push(task);
    // Garbage.
    let (garbage_addr, task) = garbage().await;
    let garbage_id = add(&mut targets, garbage_addr, None);
    relays.push(task);
    // Bad hosts.
    let bad_host = add(
        &mut targets,
        "127.0.0.1:1".parse().unwrap(),
        Some(Protocol::Ogp),
    );
    targets.last_mut().unwrap().host = "no-such-host.invalid:27015".into();
    let no_port = add(
        &mut targets,
        "127.0.0.1:1".parse().unwrap(),
        Some(Protocol::Ogp),
    );
    targets.last_mut().unwrap().host = "127.0.0.1".into();

    let n = targets.len();
    let (results, stats) = run(targets, fast()).await;
    assert_eq!(results.len(), n, "one result per target");
    let by_id: HashMap<u64, &ScanResult> = results.iter().map(|r| (r.id, r)).collect();
    assert_eq!(by_id.len(), n, "no target reported twice");
    for (i, (name, protocol)) in &expect {
        let r = by_id[i];
        let a = r
            .outcome
            .as_ref()
            .unwrap_or_else(|e| panic!("{} ({:?}): {e}", r.target, r.requested));
        // Nothing attributed to the wrong target: each responder has its own name.
        assert_eq!(
            a.status.host_name.as_deref(),
            Some(name.as_str()),
            "{}",
            r.target
        );
        assert_eq!(a.protocol, *protocol, "{}", r.target);
        assert!(a.addr.is_some(), "{}", r.target);
        assert_eq!(a.addr, r.addr);
    }
    for i in dead_ids.iter().chain([&wrong_id]) {
        let r = by_id[i];
        assert!(
            r.outcome.as_ref().is_err_and(QueryError::is_timeout),
            "{}: {:?}",
            r.target,
            r.outcome
        );
    }
    assert!(by_id[&garbage_id].outcome.is_err());
    assert!(matches!(
        by_id[&bad_host].outcome,
        Err(QueryError::Resolve { .. })
    ));
    assert!(matches!(
        by_id[&no_port].outcome,
        Err(QueryError::Resolve { .. })
    ));
    assert!(stats.unknown_source >= 1, "{stats:?}");
    assert_eq!(stats.targets, n as u64);
    assert_eq!(stats.answered, expect.len() as u64, "{stats:?}");
    assert_eq!(stats.timed_out, dead_ids.len() as u64 + 1, "{stats:?}");
    assert_eq!(stats.in_flight, 0);
    for t in relays {
        t.abort();
    }
    drop(dead);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn auto_detects_the_protocol_and_the_query_port() {
    // A server speaking every protocol: OGP is preferred.
    let h = serve("all", Listener::Standard).await;
    let r = scan::query(Target::new(h.local_addr().to_string(), None), fast()).await;
    let a = r.outcome.unwrap();
    assert_eq!(a.protocol, Protocol::Ogp);
    assert_eq!(a.status.host_name.as_deref(), Some("all"));
    // An A2S-only server.
    let (addr, task) = relay(h.local_addr(), Relay::A2sOnly).await;
    let a = scan::query(Target::new(addr.to_string(), None), fast())
        .await
        .outcome
        .unwrap();
    assert_eq!((a.protocol, a.addr), (Protocol::A2s, Some(addr)));
    task.abort();
    // A GameSpy-v3-only server.
    let (addr, task) = relay(h.local_addr(), Relay::Gs3Only).await;
    let a = scan::query(Target::new(addr.to_string(), None), fast())
        .await
        .outcome
        .unwrap();
    assert_eq!((a.protocol, a.addr), (Protocol::Gamespy3, Some(addr)));
    assert_eq!(a.status.host_name.as_deref(), Some("all"));
    task.abort();
    // Nothing on the game port, a responder on game port + 1.
    let mut found = None;
    for _ in 0..50 {
        let dead = std::net::UdpSocket::bind((LOOPBACK, 0)).unwrap();
        let port = dead.local_addr().unwrap().port();
        let Some(next) = port.checked_add(1) else {
            continue;
        };
        if let Ok(r) = responder::spawn(
            SocketAddr::new(LOOPBACK.into(), next),
            StatusCell::new(status("plus-one")),
            ResponderConfig::default(),
        )
        .await
        {
            found = Some((dead, r));
            break;
        }
    }
    let (dead, r) = found.expect("two adjacent free loopback ports");
    let game = dead.local_addr().unwrap();
    let mut t = Target::new(game.to_string(), None);
    let plain = scan::query(t.clone(), fast_with(Duration::from_millis(100), 0)).await;
    assert!(
        plain.outcome.as_ref().is_err_and(QueryError::is_timeout),
        "{:?}",
        plain.outcome
    );
    t.try_query_ports = true;
    let a = scan::query(t, fast()).await.outcome.unwrap();
    assert_eq!(a.addr, Some(r.local_addr()));
    assert_eq!(a.status.host_name.as_deref(), Some("plus-one"));
    // The draft is not auto-detected; asked for by name it is answered.
    let d = serve("draft", Listener::OgpDraft).await;
    let quick = fast_with(Duration::from_millis(100), 1);
    assert!(
        scan::query(Target::new(d.local_addr().to_string(), None), quick.clone())
            .await
            .outcome
            .is_err()
    );
    let a = scan::query(
        Target::new(d.local_addr().to_string(), Some(Protocol::OgpDraft)),
        quick,
    )
    .await
    .outcome
    .unwrap();
    assert_eq!(a.protocol, Protocol::OgpDraft);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn ipv6_loopback() {
    let Ok(h) = responder::spawn(
        "[::1]:0".parse().unwrap(),
        StatusCell::new(status("six")),
        ResponderConfig::default(),
    )
    .await
    else {
        eprintln!("no IPv6 loopback here; skipped");
        return;
    };
    let r = scan::query(
        Target::new(h.local_addr().to_string(), Some(Protocol::A2s)),
        fast(),
    )
    .await;
    let a = r.outcome.unwrap();
    assert_eq!(a.addr, Some(h.local_addr()));
    assert_eq!(a.status.host_name.as_deref(), Some("six"));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_slow_consumer_stops_admission_at_the_cap() {
    let h = serve("cap", Listener::Standard).await;
    let mut config = fast();
    config.max_in_flight = 8;
    config.channel_capacity = 4;
    let scan = scan::start(config).unwrap();
    let (tx, mut rx, handle) = (scan.targets, scan.results, scan.handle);
    let sent = Arc::new(AtomicUsize::new(0));
    let counter = sent.clone();
    let addr = h.local_addr().to_string();
    let producer = tokio::spawn(async move {
        for id in 0..100u64 {
            let mut t = Target::new(addr.clone(), Some(Protocol::A2s));
            t.id = id;
            if tx.send(t).await.is_err() {
                break;
            }
            counter.fetch_add(1, Ordering::SeqCst);
        }
    });
    // Nobody reads results for a while: the scan holds at most the cap plus the two
    // channels, and the producer waits.
    tokio::time::sleep(Duration::from_millis(500)).await;
    let taken = sent.load(Ordering::SeqCst);
    assert!(
        taken <= 8 + 4 + 4 + 1,
        "{taken} targets taken in with nobody reading"
    );
    assert!(handle.stats().in_flight <= 8);
    let mut ok = 0;
    while let Some(r) = timeout(Duration::from_secs(10), rx.recv()).await.unwrap() {
        assert!(r.outcome.is_ok(), "{r:?}");
        ok += 1;
    }
    assert_eq!(ok, 100);
    producer.await.unwrap();
    let stats = handle.join().await;
    assert_eq!(stats.answered, 100);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn entries_are_reused_many_times_under_a_small_cap() {
    // 200 responders through 16 slots: every slot is reused a dozen times, with stale
    // queue items of the finished entries around; every target must still be answered.
    let mut keep = Vec::new();
    let mut targets = Vec::new();
    for k in 0..200u64 {
        let h = serve(&format!("reuse-{k}"), Listener::Standard).await;
        let protocol = [
            Some(Protocol::Ogp),
            Some(Protocol::A2s),
            Some(Protocol::Gqp),
            None,
        ][(k % 4) as usize];
        targets.push(Target::new(h.local_addr().to_string(), protocol).with_id(k));
        keep.push(h);
    }
    let mut config = fast();
    config.max_in_flight = 16;
    let (results, stats) = run(targets, config).await;
    assert_eq!(results.len(), 200);
    for r in &results {
        let a = r
            .outcome
            .as_ref()
            .unwrap_or_else(|e| panic!("{}: {e}", r.target));
        assert_eq!(
            a.status.host_name.as_deref(),
            Some(format!("reuse-{}", r.id).as_str())
        );
    }
    assert_eq!(stats.answered, 200);
}

/// Ports nothing listens on ([`ogp_testkit::interop::closed_ports`]: below the ephemeral
/// range, so that the sockets the test opens next cannot take them).
#[cfg(target_os = "linux")]
async fn closed_ports(ip: std::net::IpAddr, n: usize) -> Option<Vec<SocketAddr>> {
    ogp_testkit::interop::closed_ports(ip, n)
}

/// Closed ports are refused at once (ICMP port unreachable, read from the shared
/// sockets' error queue on Linux), by any protocol and by auto-detection, while a live
/// server in the same scan answers.
#[cfg(target_os = "linux")]
async fn refused_at_once(ip: std::net::IpAddr) {
    let Some(closed) = closed_ports(ip, 20).await else {
        eprintln!("cannot bind {ip} here; skipped");
        return;
    };
    let live = responder::spawn(
        SocketAddr::new(ip, 0),
        StatusCell::new(status("live")),
        ResponderConfig::default(),
    )
    .await
    .expect("bind a responder");
    let protocols = [
        None,
        Some(Protocol::Ogp),
        Some(Protocol::A2s),
        Some(Protocol::Gamespy3),
    ];
    let mut targets: Vec<Target> = (0u64..)
        .zip(&closed)
        .map(|(id, a)| {
            Target::new(a.to_string(), protocols[id as usize % protocols.len()]).with_id(id)
        })
        .collect();
    targets.push(Target::new(live.local_addr().to_string(), None).with_id(100));
    // 3 s per target: a refusal must come well before.
    let mut config = ScanConfig::default();
    config.options = Options::with_timing(
        Timing::default()
            .attempt_timeout(Duration::from_millis(500))
            .retries(2)
            .total_timeout(Duration::from_secs(3)),
    );
    let started = std::time::Instant::now();
    let (results, stats) = run(targets, config).await;
    assert_eq!(results.len(), 21);
    let mut slowest = Duration::ZERO;
    for r in &results {
        if r.id == 100 {
            let a = r.outcome.as_ref().expect("the live server answers");
            assert_eq!(a.status.host_name.as_deref(), Some("live"));
            continue;
        }
        let want = r.requested;
        assert_eq!(
            r.outcome.as_ref().err(),
            Some(&QueryError::Refused { protocol: want }),
            "{r:?}"
        );
        slowest = slowest.max(r.elapsed);
    }
    let all = started.elapsed();
    eprintln!("{ip}: 20 closed ports refused, slowest after {slowest:?}; whole scan {all:?}");
    assert!(slowest < Duration::from_secs(1), "{slowest:?}");
    assert!(all < Duration::from_secs(2), "{all:?}");
    assert_eq!(stats.failed, 20, "{stats:?}");
    assert_eq!(stats.answered, 1, "{stats:?}");
}

#[cfg(target_os = "linux")]
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn closed_ports_are_refused_at_once() {
    refused_at_once(LOOPBACK.into()).await;
}

#[cfg(target_os = "linux")]
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn closed_ipv6_ports_are_refused_at_once() {
    refused_at_once(std::net::Ipv6Addr::LOCALHOST.into()).await;
}

#[cfg(target_os = "linux")]
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_closed_port_is_refused_to_a_single_query() {
    let closed = closed_ports(LOOPBACK.into(), 1).await.unwrap()[0];
    let started = std::time::Instant::now();
    let r = scan::query(Target::new(closed.to_string(), None), fast()).await;
    assert_eq!(r.outcome, Err(QueryError::Refused { protocol: None }));
    assert!(started.elapsed() < Duration::from_secs(1), "{r:?}");
}

/// A slow OGP server: answers the first OGP query with an Error-3 challenge, then says
/// nothing more (its game loop is busy); every other datagram goes unanswered.
async fn challenge_then_silence() -> (SocketAddr, JoinHandle<()>) {
    use ogp_proto::ogp::{self, ErrorValue, Header, PacketType};
    let s = UdpSocket::bind((LOOPBACK, 0)).await.unwrap();
    let addr = s.local_addr().unwrap();
    let task = tokio::spawn(async move {
        let mut buf = vec![0u8; 2048];
        let mut answered = false;
        for _ in 0..10_000 {
            let Ok((len, src)) = s.recv_from(&mut buf).await else {
                continue;
            };
            let d = &buf[..len];
            if answered || !ogp::is_ogp(d) {
                continue;
            }
            let q = ogp::decode(d).expect("our client's OGP query decodes");
            let mut h = Header::answer(PacketType::ERROR);
            h.challenge = Some(0x5eed);
            h.request_id = q.header.request_id;
            let mut out = Vec::new();
            ogp::encode_error(&h, ErrorValue::INVALID_CHALLENGE, &[], &mut out);
            let _ = s.send_to(&out, src).await;
            answered = true;
        }
    });
    (addr, task)
}

/// Auto-detection against a server that sent an OGP challenge and went silent: the OGP
/// datagram goes to the OGP machine only (not to GQP's decoder as a malformed reply),
/// and the error is OGP's timeout, OGP being the protocol that heard from the server.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn auto_blames_the_protocol_that_heard_from_the_server() {
    let (addr, task) = challenge_then_silence().await;
    let r = scan::query(
        Target::new(addr.to_string(), None),
        fast_with(Duration::from_millis(100), 1),
    )
    .await;
    task.abort();
    match &r.outcome {
        Err(QueryError::NoAnswer {
            protocol: Protocol::Ogp,
            attempts,
            ..
        }) => assert!(*attempts >= 2, "{r:?}"),
        other => panic!("want OGP's timeout after its challenge, got {other:?}"),
    }
}

/// Many closed ports among live servers on the same shared sockets: the ICMP errors
/// pending on a socket (reported once by the next send or receive) lose no datagram of
/// the live servers' queries and no answer.
#[cfg(target_os = "linux")]
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn refusals_do_not_disturb_live_queries() {
    let closed = closed_ports(LOOPBACK.into(), 200).await.unwrap();
    let mut live = Vec::new();
    for i in 0..10 {
        live.push(serve(&format!("live{i}"), Listener::Standard).await);
    }
    let mut targets = Vec::new();
    for (i, a) in closed.iter().enumerate() {
        let protocol = [None, Some(Protocol::A2s), Some(Protocol::Ogp)][i % 3];
        targets.push(Target::new(a.to_string(), protocol).with_id(i as u64));
        if i % 20 == 0 {
            let h = &live[i / 20];
            targets.push(
                Target::new(h.local_addr().to_string(), protocol).with_id(1000 + (i / 20) as u64),
            );
        }
    }
    // One attempt, no retry: a live query's datagram lost to a pending error would
    // time out.
    let started = std::time::Instant::now();
    let (results, stats) = run(targets, fast_with(Duration::from_millis(1500), 0)).await;
    let took = started.elapsed();
    assert_eq!(results.len(), 210);
    for r in &results {
        if r.id >= 1000 {
            let a = r.outcome.as_ref().unwrap_or_else(|e| panic!("{r:?}: {e}"));
            let want = format!("live{}", r.id - 1000);
            assert_eq!(a.status.host_name.as_deref(), Some(want.as_str()));
        } else {
            assert!(
                matches!(r.outcome, Err(QueryError::Refused { .. })),
                "{r:?}"
            );
        }
    }
    eprintln!("200 closed ports and 10 live servers: {took:?}, {stats:?}");
    assert_eq!((stats.answered, stats.failed), (10, 200), "{stats:?}");
    assert!(took < Duration::from_secs(1), "{took:?}");
}
