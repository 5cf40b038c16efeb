//! `ogp master`'s registrations end to end on loopback (issue 29, items 3 and 4): a real
//! `ogp serve` that starts during a flood of forged uplinks from thousands of addresses
//! is listed within seconds; a server with a 2,100-character host name is listed; one
//! whose answer cannot fit a datagram (its host name, game name and game type at 4,096
//! bytes each) is not, and the master's log says why, once.

mod common;

use std::net::{Ipv4Addr, SocketAddr, UdpSocket};
use std::path::Path;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use common::master::{ogp_ready, state, wait_for, Master};
use common::{serve_with, Served, TempDir};
use serde_json::Value;

/// `ogp master` on a SQLite file of `dir`, forged-looking loopback sources allowed, with
/// `config` (TOML).
fn master(dir: &Path, config: &str) -> Master {
    let db = format!("sqlite://{}", dir.join("master.db").display());
    Master::with_config(dir, "master", config, &["--allow-private", "--db", &db])
}

/// A GET that must answer 200: its body.
fn get(m: &Master, path: &str) -> String {
    let (code, body) = m.get(path);
    assert_eq!(code, 200, "GET {path}: {body}");
    body
}

/// The listed servers' addresses and names.
fn listed(m: &Master) -> Vec<(String, String)> {
    let v: Value = serde_json::from_str(&get(m, "/api/v1/servers?limit=1000")).unwrap();
    v["servers"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| {
            (
                s["addr"].as_str().unwrap_or_default().to_owned(),
                s["name"].as_str().unwrap_or_default().to_owned(),
            )
        })
        .collect()
}

/// The sum of the `ogp_master_registrations` counters whose labels contain `with`.
fn registrations(m: &Master, with: &str) -> u64 {
    counter(m, "registrations", with)
}

/// The sum of the `ogp_master_verifications` counters whose labels contain `with`.
fn verifications(m: &Master, with: &str) -> u64 {
    counter(m, "verifications", with)
}

fn counter(m: &Master, name: &str, with: &str) -> u64 {
    get(m, "/metrics")
        .lines()
        .filter(|l| l.contains(name) && !l.starts_with('#') && l.contains(with))
        .filter_map(|l| l.rsplit(' ').next()?.parse::<f64>().ok())
        .sum::<f64>() as u64
}

/// `ogp serve` with host name `name`, sending its uplinks to `master`.
fn server(label: &str, name: &str, master: SocketAddr) -> Served {
    let m = master.to_string();
    serve_with(label, &state(name), &["--master", m.as_str()], ogp_ready)
}

/// The forged source `i`: 127.a.b.1 with a /24 of its own (never 127.0.0.0/24, where
/// the real servers are). Each is a real loopback address, so the master's probes to it
/// go nowhere.
fn forged(i: u32) -> Ipv4Addr {
    Ipv4Addr::from(0x7f01_0001 + (i << 8))
}

/// Sends OGP uplinks to `master` at about `rate` a second, from `sources` addresses in
/// turn, until `stop` (or 120 s); counts what it sent in `sent`.
fn flood(master: SocketAddr, rate: u64, sources: u32, stop: Arc<AtomicBool>, sent: Arc<AtomicU64>) {
    let uplink = b"\xff\xff\xff\xffOGP\x00\x03\x03\x01\x07\x00";
    let t0 = Instant::now();
    let mut i = 0u32;
    while !stop.load(Ordering::Relaxed) && t0.elapsed() < Duration::from_secs(120) {
        let due = (t0.elapsed().as_secs_f64() * rate as f64) as u64;
        let done = sent.load(Ordering::Relaxed);
        if done >= due {
            std::thread::sleep(Duration::from_millis(2));
            continue;
        }
        for _ in done..due.min(done + 500) {
            if let Ok(s) = UdpSocket::bind((forged(i % sources), 0)) {
                let _ = s.send_to(uplink, master);
            }
            i = i.wrapping_add(1);
            sent.fetch_add(1, Ordering::Relaxed);
        }
    }
}

#[test]
fn a_server_that_starts_during_a_spoofed_registration_flood_is_listed_within_seconds() {
    let dir = TempDir::new("master-flood");
    // Capacities scaled down from the defaults (1,000 verifications started a second,
    // 4,096 in progress) so that a flood any test machine can send saturates them as
    // 9,900 a second saturated the defaults. The case, on a machine that can
    // send it: OGP_FLOOD_DEFAULTS=1 OGP_FLOOD_RATE=9900 OGP_FLOOD_SOURCES=10000.
    let env = |k: &str, default: u64| {
        std::env::var(k)
            .ok()
            .and_then(|v| v.parse().ok())
            .unwrap_or(default)
    };
    let config = if env("OGP_FLOOD_DEFAULTS", 0) == 1 {
        ""
    } else {
        "verifications_per_second = 100\nmax_pending_verifications = 1000\n"
    };
    let m = master(&dir.0, config);
    let stop = Arc::new(AtomicBool::new(false));
    let sent = Arc::new(AtomicU64::new(0));
    let sources = u32::try_from(env("OGP_FLOOD_SOURCES", 3000).clamp(1, 60_000)).unwrap();
    let rate = env("OGP_FLOOD_RATE", 2000);
    let flooder = {
        let (stop, sent, udp) = (stop.clone(), sent.clone(), m.udp);
        std::thread::spawn(move || flood(udp, rate, sources, stop, sent))
    };
    // The flood saturates the master: it drops registrations as busy. Then every
    // forged prefix has been seen (one pass over the sources), and the verifications
    // the flood started from the reserve before that have gone unanswered for a second
    // (evicted when a place is needed), plus a second.
    let t0 = Instant::now();
    wait_for(
        "the flood to fill the master",
        Duration::from_secs(60),
        || registrations(&m, "outcome=\"busy\"") > 1000,
    );
    wait_for(
        "one pass over the forged sources",
        Duration::from_secs(60),
        || sent.load(Ordering::Relaxed) > u64::from(sources),
    );
    std::thread::sleep(Duration::from_secs(2));
    let before = sent.load(Ordering::Relaxed);
    let flood_started = t0;
    let started = Instant::now();
    let real = server("flood-late", "Late Server", m.udp);
    let addr = format!("127.0.0.1:{}", real.port);
    let took = wait_for(
        "the late server to be listed",
        Duration::from_secs(30),
        || listed(&m).iter().any(|(a, _)| *a == addr),
    );
    let listed_after = started.elapsed();
    let during = sent.load(Ordering::Relaxed) - before;
    stop.store(true, Ordering::Relaxed);
    flooder.join().unwrap();
    let total = sent.load(Ordering::Relaxed);
    let rate_measured = total as f64 / flood_started.elapsed().as_secs_f64();
    let busy = registrations(&m, "outcome=\"busy\"");
    let all = registrations(&m, "outcome=");
    eprintln!(
        "flood: {total} forged uplinks from {sources} addresses in {:.1} s ({rate_measured:.0}/s), \
         {during} while the late server was being listed; the master counted {all} \
         registrations, {busy} dropped as busy; the late server was listed {:.2} s after \
         `ogp serve` was started ({:.2} s after it answered)",
        flood_started.elapsed().as_secs_f64(),
        listed_after.as_secs_f64(),
        took.as_secs_f64(),
    );
    assert!(during > 0, "the flood went on while the server registered");
    assert!(
        listed_after < Duration::from_secs(15),
        "listed only after {listed_after:?}"
    );
    assert!(
        !listed(&m).iter().any(|(a, _)| !a.starts_with("127.0.0.1:")),
        "a forged source was listed"
    );
}

#[test]
fn a_2100_character_host_name_is_listed_and_an_answer_too_large_for_a_datagram_is_logged() {
    let dir = TempDir::new("master-long-name");
    let m = master(&dir.0, "");
    let long = "L".repeat(2100);
    let s = server("long-name", &long, m.udp);
    let addr = format!("127.0.0.1:{}", s.port);
    wait_for(
        "the 2,100-character server to be listed",
        Duration::from_secs(30),
        || listed(&m).iter().any(|(a, n)| *a == addr && *n == long),
    );
    // A server whose answer is larger than a datagram can be (`ogp serve` and the
    // responder library cap every field at 4,096 bytes so that theirs always fits; other
    // servers need not): it answers the challenge, and its answer cannot be sent
    let (huge_addr, stop, refused) = oversized_server(m.udp);
    let huge_addr = huge_addr.to_string();
    let said = |text: &str| {
        text.lines().any(|l| {
            l.contains("WARN")
                && l.contains(&huge_addr)
                && l.contains("not verified")
                && l.contains("does not fit one datagram")
        })
    };
    let t = Instant::now();
    while !said(&m.log_text()) {
        assert!(
            t.elapsed() < Duration::from_secs(30),
            "the master did not say why it refused {huge_addr}:\n{}",
            m.log_text()
        );
        std::thread::sleep(Duration::from_millis(100));
    }
    // it keeps registering (every 2 s here): more verifications fail, still one line
    wait_for(
        "a second failed verification",
        Duration::from_secs(60),
        || verifications(&m, "outcome=\"failed\"") >= 2,
    );
    let log = m.log_text();
    let warnings: Vec<&str> = log
        .lines()
        .filter(|l| l.contains(&huge_addr) && l.contains("WARN"))
        .collect();
    eprintln!("{}", warnings.join("\n"));
    let warnings = warnings.len();
    assert_eq!(
        warnings,
        1,
        "one line per refused server:\n{}",
        m.log_text()
    );
    assert!(!listed(&m).iter().any(|(a, _)| *a == huge_addr));
    assert!(
        refused.load(Ordering::Relaxed) > 0,
        "its answer was never sent"
    );
    stop.store(true, Ordering::Relaxed);
}

/// A server made of the responder library (`ogp_proto::responder`) on a socket of its
/// own, whose answers are 70,000 bytes (its real answer, with a 4,096-character host
/// name, padded): sends an OGP uplink to `master` every 2 s and answers what comes, until the
/// returned flag is set (or 120 s). Challenges go out as they are; an answer's send
/// fails (no datagram is that large), counted in the returned counter.
fn oversized_server(master: SocketAddr) -> (SocketAddr, Arc<AtomicBool>, Arc<AtomicU64>) {
    use ogp_proto::responder::{Responder, ResponderConfig, Transmits};
    let sock = UdpSocket::bind("127.0.0.1:0").unwrap();
    let addr = sock.local_addr().unwrap();
    let stop = Arc::new(AtomicBool::new(false));
    let refused = Arc::new(AtomicU64::new(0));
    let (flag, count) = (stop.clone(), refused.clone());
    std::thread::spawn(move || {
        let mut status = ogp_proto::Status::default();
        status.host_name = Some("H".repeat(4096).into());
        let t0 = Instant::now();
        let mut r = Responder::new(ResponderConfig::default(), [9; 32], t0);
        let mut uplink = Vec::new();
        ogp_proto::ogp::uplink::encode_uplink(7, &mut uplink);
        let mut last_uplink: Option<Instant> = None;
        sock.set_read_timeout(Some(Duration::from_millis(100)))
            .unwrap();
        let mut buf = vec![0u8; 65536];
        let mut out = Transmits::default();
        while !flag.load(Ordering::Relaxed) && t0.elapsed() < Duration::from_secs(120) {
            if last_uplink.is_none_or(|t| t.elapsed() >= Duration::from_secs(2)) {
                sock.send_to(&uplink, master).unwrap();
                last_uplink = Some(Instant::now());
            }
            let Ok((n, from)) = sock.recv_from(&mut buf) else {
                continue;
            };
            r.handle(Instant::now(), from, &buf[..n], &status, &mut out);
            for d in out.iter() {
                if d.len() < 4096 {
                    let _ = sock.send_to(d, from);
                    continue;
                }
                let mut big = d.to_vec();
                big.resize(70_000, b'H');
                if sock.send_to(&big, from).is_err() {
                    count.fetch_add(1, Ordering::Relaxed);
                }
            }
            out.clear();
        }
    });
    (addr, stop, refused)
}
