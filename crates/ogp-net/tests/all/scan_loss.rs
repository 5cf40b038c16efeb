//! Scanning under loss (issue 29, item 10): the default scan of A2S servers behind an
//! emulated lossy network of its own, with real responders behind it.
//!
//! Every target is a link of this process: a loopback socket that forwards to one of
//! two real responders (the project's own, as `ogp serve` runs it) and back. Each
//! datagram, each way, is dropped with probability `p` and otherwise delayed by 20–200 ms
//! (round trips of 40–400 ms, reordered at random). Every link and direction has its own
//! seeded random stream, so the n-th datagram of a link meets the same fate whatever the
//! other links do. 2,000 targets are scanned with `ScanConfig::default()` and the found
//! fraction is asserted: ≥ 99.9 % at 5 % loss, ≥ 99 % at 15 %.
//!
//! Loopback addresses only; every loop is bounded.

use std::net::{Ipv4Addr, SocketAddr};
use std::ops::RangeInclusive;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use ogp_net::responder::{self, ResponderHandle};
use ogp_net::scan::{self, Protocol, ScanConfig, ScanResult, Target};
use ogp_net::StatusCell;
use ogp_proto::guard::RateConfig;
use ogp_proto::responder::ResponderConfig;
use rand::rngs::StdRng;
use rand::{RngExt, SeedableRng};
use tokio::net::UdpSocket;
use tokio::task::JoinSet;
use tokio::time::timeout;

const LOOPBACK: Ipv4Addr = Ipv4Addr::LOCALHOST;
/// Targets per scan: enough to tell 99.9 % (two misses allowed) from 99.7 %.
const TARGETS: usize = 2000;
/// One-way delay of a datagram that gets through, in milliseconds.
const DELAY_MS: RangeInclusive<u64> = 20..=200;

/// A responder that answers every query of the test (one client address sends many).
async fn serve(name: &str) -> ResponderHandle {
    let mut config = ResponderConfig::default();
    let unlimited = RateConfig::new(1e6, 1e6);
    config.rate = unlimited;
    config.unproven_rate = unlimited;
    config.unproven_total = unlimited;
    config.rate_table_capacity = 4 * TARGETS;
    let mut status = ogp_testkit::demo_state();
    status.host_name = Some(name.into());
    responder::spawn(
        SocketAddr::new(LOOPBACK.into(), 0),
        StatusCell::new(status),
        config,
    )
    .await
    .expect("bind a loopback responder")
}

/// What the links do to each datagram, each way.
#[derive(Clone)]
struct Net {
    /// Probability of a loss.
    loss: f64,
    /// One-way delay of a datagram that gets through, in milliseconds.
    delay_ms: RangeInclusive<u64>,
    /// Seed of the links' random streams.
    seed: u64,
}

/// Datagrams the links forwarded and dropped, both ways.
#[derive(Default)]
struct Counters {
    passed: AtomicU64,
    dropped: AtomicU64,
}

/// The fate of the next datagram of a stream: `None` (lost) or its delay. Both draws are
/// made every time, so that a stream's n-th datagram always meets the same fate.
fn fate(rng: &mut StdRng, net: &Net, counters: &Counters) -> Option<Duration> {
    let lost = rng.random::<f64>() < net.loss;
    let delay = Duration::from_millis(rng.random_range(net.delay_ms.clone()));
    if lost {
        counters.dropped.fetch_add(1, Ordering::Relaxed);
        None
    } else {
        counters.passed.fetch_add(1, Ordering::Relaxed);
        Some(delay)
    }
}

/// Sends `d` from `socket` (to `to`, or to its connected peer) after `delay`.
fn later(socket: Arc<UdpSocket>, d: Vec<u8>, to: Option<SocketAddr>, delay: Duration) {
    tokio::spawn(async move {
        tokio::time::sleep(delay).await;
        let _ = match to {
            Some(to) => socket.send_to(&d, to).await,
            None => socket.send(&d).await,
        };
    });
}

/// A lossy link to `upstream`: returns the address to query in its place.
async fn link(
    index: u64,
    upstream: SocketAddr,
    net: Net,
    counters: Arc<Counters>,
    tasks: &mut JoinSet<()>,
) -> SocketAddr {
    let front = Arc::new(UdpSocket::bind((LOOPBACK, 0)).await.unwrap());
    let back = Arc::new(UdpSocket::bind((LOOPBACK, 0)).await.unwrap());
    back.connect(upstream).await.unwrap();
    let addr = front.local_addr().unwrap();
    let stream = move |direction: u64| {
        StdRng::seed_from_u64(
            net.seed ^ (index << 1 | direction).wrapping_mul(0x9e37_79b9_7f4a_7c15),
        )
    };
    tasks.spawn(async move {
        let (mut up, mut down) = (stream(0), stream(1));
        let (mut a, mut b) = (vec![0u8; 4096], vec![0u8; 4096]);
        let mut client = None;
        // Bounded: the test aborts the task; each iteration handles one datagram (A2S
        // datagrams are at most 1,400 bytes).
        for _ in 0..100_000 {
            tokio::select! {
                r = front.recv_from(&mut a) => {
                    let Ok((len, src)) = r else { continue };
                    client = Some(src);
                    if let Some(delay) = fate(&mut up, &net, &counters) {
                        later(back.clone(), a[..len].to_vec(), None, delay);
                    }
                }
                r = back.recv(&mut b) => {
                    let Ok(len) = r else { continue };
                    let Some(c) = client else { continue };
                    if let Some(delay) = fate(&mut down, &net, &counters) {
                        later(front.clone(), b[..len].to_vec(), Some(c), delay);
                    }
                }
            }
        }
    });
    addr
}

/// What one scan under loss found.
struct Figures {
    found: usize,
    sent: u64,
    elapsed: Duration,
    observed_loss: f64,
}

/// Scans `TARGETS` A2S servers behind links that lose `loss` of the datagrams each way
/// and delay the others by 20–200 ms, with the default scan options.
async fn scan_under_loss(loss: f64, seed: u64) -> Figures {
    scan_through(Net {
        loss,
        delay_ms: DELAY_MS,
        seed,
    })
    .await
}

/// Scans `TARGETS` A2S servers behind links of `net`, with the default scan options.
async fn scan_through(net: Net) -> Figures {
    let loss = net.loss;
    let servers = [serve("lossy-a").await, serve("lossy-b").await];
    let counters = Arc::new(Counters::default());
    let mut links = JoinSet::new();
    let mut targets = Vec::with_capacity(TARGETS);
    for (i, k) in (0..TARGETS).zip(0u64..) {
        let upstream = servers[i % servers.len()].local_addr();
        let addr = link(k, upstream, net.clone(), counters.clone(), &mut links).await;
        targets.push(Target::new(addr.to_string(), Some(Protocol::A2s)).with_id(k));
    }

    let started = Instant::now();
    let scan = scan::start(ScanConfig::default()).unwrap();
    let (tx, mut rx, handle) = (scan.targets, scan.results, scan.handle);
    tokio::spawn(async move {
        for t in targets {
            if tx.send(t).await.is_err() {
                break;
            }
        }
    });
    let mut results: Vec<ScanResult> = Vec::with_capacity(TARGETS);
    // Generous bounds: they only end a failure.
    while let Some(r) = timeout(Duration::from_secs(60), rx.recv()).await.unwrap() {
        results.push(r);
        assert!(results.len() <= TARGETS, "more results than targets");
    }
    let stats = timeout(Duration::from_secs(30), handle.join())
        .await
        .unwrap();
    let elapsed = started.elapsed();
    links.abort_all();
    assert_eq!(results.len(), TARGETS, "a result for every target");

    let found = results
        .iter()
        .filter(|r| match &r.outcome {
            Ok(a) => {
                let name = a.status.host_name.as_deref().unwrap_or_default();
                assert!(name.starts_with("lossy-"), "{name:?}");
                true
            }
            Err(_) => false,
        })
        .count();
    // Misses by datagrams sent: what went wrong.
    let mut misses = std::collections::BTreeMap::<String, usize>::new();
    for r in &results {
        if let Err(e) = &r.outcome {
            *misses.entry(e.to_string()).or_default() += 1;
        }
    }
    for (e, n) in &misses {
        eprintln!("  {n} × {e}");
    }
    let passed = counters.passed.load(Ordering::Relaxed);
    let dropped = counters.dropped.load(Ordering::Relaxed);
    let observed_loss = dropped as f64 / (passed + dropped).max(1) as f64;
    eprintln!(
        "loss {:.0}%, delays {:?} ms: found {found} of {TARGETS} ({:.2}%); {} datagrams sent, \
         {} received; {dropped} of {} dropped by the links ({:.2}%); {:.1} s",
        loss * 100.0,
        net.delay_ms,
        found as f64 * 100.0 / TARGETS as f64,
        stats.sent,
        stats.received,
        passed + dropped,
        observed_loss * 100.0,
        elapsed.as_secs_f64(),
    );
    Figures {
        found,
        sent: stats.sent,
        elapsed,
        observed_loss,
    }
}

/// The emulation drops what it says it drops (within 1.5 points over ~20,000 datagrams,
/// several standard deviations).
fn check_emulation(f: &Figures, loss: f64) {
    assert!(
        (f.observed_loss - loss).abs() < 0.015,
        "the links dropped {:.2}% instead of {:.0}%",
        f.observed_loss * 100.0,
        loss * 100.0
    );
    assert!(f.sent >= TARGETS as u64, "{} datagrams sent", f.sent);
    assert!(f.elapsed > Duration::ZERO);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_default_scan_finds_999_per_mille_at_5_percent_loss() {
    let f = scan_under_loss(0.05, 0x5eed_0005).await;
    check_emulation(&f, 0.05);
    assert!(
        f.found * 1000 >= TARGETS * 999,
        "found {} of {TARGETS} at 5% loss (under 99.9%)",
        f.found
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_default_scan_finds_99_percent_at_15_percent_loss() {
    let f = scan_under_loss(0.15, 0x5eed_0015).await;
    check_emulation(&f, 0.15);
    assert!(
        f.found * 100 >= TARGETS * 99,
        "found {} of {TARGETS} at 15% loss (under 99%)",
        f.found
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_lossless_scan_sends_what_it_did() {
    // On a steady path nothing times out: per target the challenge request, A2S_INFO
    // with the challenge, A2S_PLAYER and A2S_RULES, as before the change.
    let f = scan_through(Net {
        loss: 0.0,
        delay_ms: 100..=100,
        seed: 0,
    })
    .await;
    assert_eq!(f.found, TARGETS);
    // Four datagrams a target; a few more only when the machine is so loaded that the
    // emulated path itself runs late (76 of 8,076 once, in the test command beside the
    // background fuzz build; 236 of 8,236 with four other builds running): at most 10 %
    // more, where a retry of every target would be twice as many.
    assert!(
        f.sent >= 4 * TARGETS as u64 && f.sent * 100 <= 4 * TARGETS as u64 * 110,
        "sent {} for {TARGETS} targets on a steady path",
        f.sent
    );
    // Round trips of 40–400 ms at random, each datagram on its own, are the worst
    // case of a timer from the measured round trip: a few attempts time out before
    // their answer comes (54 of 8,054 datagrams when measured on a quiet machine; 1,131
    // of 9,131 once with four other builds running, the emulated delays running late).
    // At most a quarter more, where a retry of every target would be twice as many.
    let f = scan_under_loss(0.0, 0x5eed_0000).await;
    assert_eq!(f.found, TARGETS);
    assert!(
        f.sent <= 4 * TARGETS as u64 * 125 / 100,
        "{} datagrams",
        f.sent
    );
}

/// What a target that never answers costs with the default options: today's time and
/// one datagram more (four, not three: the least that lets 99 % of the live servers be
/// heard from at 15 % loss, see `ScanConfig::options`).
#[test]
fn a_silent_target_costs_four_datagrams_in_no_more_time_than_before() {
    let timing = ScanConfig::default().options.timing;
    assert_eq!(timing.retries, 3);
    // 500 + 550 + 605 + 665 ms; before: 500 + 750 + 1,125 ms.
    assert_eq!(timing.attempts_total(), Duration::from_millis(2320));
    assert!(timing.attempts_total() <= Duration::from_millis(2375));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_silent_target_gets_only_its_four_datagrams() {
    // A port that reads everything and never answers (no ICMP refusal either).
    let silent = UdpSocket::bind((LOOPBACK, 0)).await.unwrap();
    let addr = silent.local_addr().unwrap();
    let scan = scan::start(ScanConfig::default()).unwrap();
    scan.targets
        .send(Target::new(addr.to_string(), Some(Protocol::A2s)))
        .await
        .unwrap();
    drop(scan.targets);
    let mut results = scan.results;
    let r = timeout(Duration::from_secs(30), results.recv())
        .await
        .unwrap()
        .expect("a result");
    match &r.outcome {
        Err(e @ scan::QueryError::NoAnswer { attempts, .. }) => {
            assert_eq!(*attempts, 4, "{e}");
        }
        other => panic!("{other:?}"),
    }
    // It waited its whole schedule (2.32 s), no less.
    assert!(r.elapsed >= Duration::from_millis(2320), "{:?}", r.elapsed);
    // Everything it was sent is in its buffer by now (loopback); the bound only ends
    // the count.
    let mut got = 0;
    let mut buf = [0u8; 2048];
    while let Ok(Ok(_)) = timeout(Duration::from_millis(300), silent.recv_from(&mut buf)).await {
        got += 1;
        assert!(got <= 4, "more than four datagrams");
    }
    assert_eq!(got, 4);
}
