//! `ogp master`'s registrar queue end to end on loopback (issue 36 review): what the UDP
//! receive loops hand the registrar task waits in a queue of at most 16,384 datagrams
//! and 16 MiB (crates/ogp-master/src/udp.rs). A flood of 60,000-byte datagrams from 512
//! loopback sources (each in a /24 of its own) at four of the master's UDP sockets,
//! for 2 s, must leave the master's peak memory within that bound (and some slack), and
//! a real server registering right after it must be listed.

use crate::common;

use std::net::{SocketAddr, UdpSocket};
use std::path::Path;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use common::master::{forged, ogp_ready, state, wait_until, Master};
use common::{serve_with, TempDir};

/// `ogp master` on a SQLite file of `dir` with four UDP sockets, loopback sources
/// allowed.
fn master(dir: &Path) -> Master {
    let db = format!("sqlite://{}", dir.join("master.db").display());
    let args = [
        "--allow-private",
        "--db",
        db.as_str(),
        "--udp",
        "127.0.0.1:0",
        "--udp",
        "127.0.0.1:0",
        "--udp",
        "127.0.0.1:0",
    ];
    Master::start(dir, "master", &args)
}

/// A field of `/proc/PID/status` in KiB (`VmHWM`: the peak resident memory).
fn status_kib(pid: u32, field: &str) -> u64 {
    let text = std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap_or_default();
    text.lines()
        .find_map(|l| l.strip_prefix(field)?.strip_prefix(':'))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
        .unwrap_or(0)
}

/// The master's `ogp_master_dropped_datagrams_total` for `reason`.
fn dropped(m: &Master, reason: &str) -> u64 {
    let (_, body) = m.get("/metrics");
    let want = format!("reason=\"{reason}\"");
    body.lines()
        .filter(|l| l.starts_with("ogp_master_dropped_datagrams_total") && l.contains(&want))
        .filter_map(|l| l.rsplit(' ').next()?.parse::<f64>().ok())
        .sum::<f64>() as u64
}

#[test]
fn the_registrar_queue_holds_its_bytes_under_a_flood_of_large_datagrams_from_many_sources() {
    if !Path::new("/proc/self/status").exists() {
        eprintln!("skipped: no /proc (the peak memory is read there)");
        return;
    }
    let dir = TempDir::new("master-queue");
    let m = master(&dir.0);
    let targets = m.udp_addrs();
    assert_eq!(targets.len(), 4, "{targets:?}");
    let pid = m.child.0.id();
    std::thread::sleep(Duration::from_millis(300));
    let before = status_kib(pid, "VmHWM");
    // 60,000 bytes that are no registration and no list request: each goes to the
    // registrar's queue as a possible reply
    let junk = Arc::new(vec![0x5a_u8; 60_000]);
    let stop = Arc::new(AtomicBool::new(false));
    let sent = Arc::new(AtomicU64::new(0));
    let senders: Vec<_> = (0..2u32)
        .map(|t| {
            let (junk, stop, sent, targets) =
                (junk.clone(), stop.clone(), sent.clone(), targets.clone());
            std::thread::spawn(move || {
                let socks: Vec<UdpSocket> = (0..256)
                    .filter_map(|i| UdpSocket::bind((forged(t * 256 + i), 0)).ok())
                    .collect();
                let t0 = Instant::now();
                let mut i = 0usize;
                while !stop.load(Ordering::Relaxed) && t0.elapsed() < Duration::from_secs(10) {
                    let (Some(s), Some(to)) =
                        (socks.get(i % socks.len().max(1)), targets.get(i % 4))
                    else {
                        return;
                    };
                    if s.send_to(&junk, to).is_ok() {
                        sent.fetch_add(1, Ordering::Relaxed);
                    }
                    i += 1;
                }
            })
        })
        .collect();
    let t0 = Instant::now();
    let mut peak = before;
    while t0.elapsed() < Duration::from_secs(2) {
        std::thread::sleep(Duration::from_millis(50));
        peak = peak.max(status_kib(pid, "VmHWM"));
    }
    stop.store(true, Ordering::Relaxed);
    for s in senders {
        let _ = s.join();
    }
    let flood = sent.load(Ordering::Relaxed);
    let busy = dropped(&m, "registrar_busy");
    let unknown = dropped(&m, "unknown");
    // a real server registering after the flood is listed
    let to = m.udp.to_string();
    let served = serve_with(
        "after-flood",
        &state("After"),
        &["--master", &to],
        ogp_ready,
    );
    let addr: SocketAddr = format!("127.0.0.1:{}", served.port).parse().unwrap();
    let listed = wait_until(Duration::from_secs(10), || {
        m.servers()
            .iter()
            .any(|s| s["addr"].as_str() == Some(addr.to_string().as_str()))
    });
    let grew_mib = peak.saturating_sub(before) as f64 / 1024.0;
    eprintln!(
        "{flood} datagrams of 60,000 bytes sent in 2 s ({:.0} MiB); the master: \
         {unknown} handed to the registrar and refused, {busy} dropped as registrar_busy; \
         peak memory {before} KiB before, {peak} KiB during (+{grew_mib:.1} MiB); \
         the server after the flood listed in {listed:?}",
        flood as f64 * 60_000.0 / 1048576.0
    );
    assert!(flood > 1000, "the flood: {flood}");
    assert!(
        unknown + busy > 500,
        "the master read the flood: {unknown} + {busy}"
    );
    // the queue's 16 MiB, the four receive buffers' 64 KiB, and slack for the rest
    assert!(grew_mib < 48.0, "peak memory grew {grew_mib:.1} MiB");
    assert!(
        listed.is_some(),
        "the server after the flood was not listed"
    );
}
