//! The master's HTTP answers in memory (issue 36 hardening): `ogp master` runs as a child
//! with a list of servers with big statuses, and slow readers on other loopback
//! addresses (all of 127.0.0.0/8 is loopback on Linux) ask for its biggest page.
//!
//! A listing page stops at [`ogp_master::api::MAX_PAGE_BYTES`] of JSON and names the
//! next server in `next`; the answers made and not yet written share one budget
//! (`http_answer_bytes`), and a big answer must be read at a least rate
//! (`http_answer_rate`) however its client keeps reading a little.

use crate::common;
use crate::simulated;

use std::io::{ErrorKind, Read, Write};
use std::net::TcpStream;
use std::time::{Duration, Instant};

use common::master::{http_get, metric, runtime, slow_reader, Master};
use common::TempDir;
use ogp_master::api::MAX_PAGE_BYTES;
use serde_json::Value;

/// Servers in the list.
const SERVERS: u32 = 2000;
/// Bytes of padding in each server's status: a page of 1000 of them is about 16 MB
/// without the bound.
const STATUS_BYTES: usize = 16_000;

const BIG_PAGE: &str = "/api/v1/servers?limit=1000";

/// `ogp master` with `config` (TOML) and [`SERVERS`] simulated servers with big statuses
/// in its database, once its list holds them.
fn start(label: &str, config: &str) -> (Master, TempDir) {
    simulated::with_simulated(label, config, SERVERS, STATUS_BYTES)
}

/// `VmRSS` of the master process, in KiB.
fn rss_kib(m: &Master) -> u64 {
    std::fs::read_to_string(format!("/proc/{}/status", m.child.0.id()))
        .expect("/proc status of the master")
        .lines()
        .find_map(|l| l.strip_prefix("VmRSS:"))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
        .expect("a VmRSS line")
}

fn get(path: &str) -> String {
    format!("GET {path} HTTP/1.1\r\nHost: x\r\n\r\n")
}

/// Reads at most `n` bytes that are there now: how many, or `None` once the master
/// has closed the connection.
fn read_some(s: &mut TcpStream, n: usize) -> Option<usize> {
    let mut buf = vec![0u8; n];
    s.set_nonblocking(true).ok()?;
    let r = match s.read(&mut buf) {
        Ok(0) => None,
        Ok(k) => Some(k),
        Err(e) if e.kind() == ErrorKind::WouldBlock => Some(0),
        Err(_) => None,
    };
    let _ = s.set_nonblocking(false);
    r
}

/// In either order (by address; by players, whose cursor is `PLAYERS,IP:PORT`).
#[test]
fn a_page_stops_at_its_byte_bound_and_next_visits_every_server_once() {
    let (m, _dir) = start("http-bytes-pages", "");
    for first in [BIG_PAGE.to_owned(), format!("{BIG_PAGE}&sort=players")] {
        let by_players = first.contains("players");
        let mut seen = std::collections::BTreeSet::new();
        let mut order: Vec<u64> = Vec::new();
        let mut cursor: Option<String> = None;
        let mut pages = Vec::new();
        for _ in 0..200 {
            let path = match &cursor {
                Some(c) => format!("{first}&cursor={c}"),
                None => first.clone(),
            };
            let (code, body) = http_get(m.http, &path);
            assert_eq!(code, 200, "{path}: {body:.200}");
            assert!(
                body.len() <= MAX_PAGE_BYTES,
                "a page of {} bytes",
                body.len()
            );
            let v: Value = serde_json::from_str(&body).unwrap();
            let servers = v["servers"].as_array().unwrap();
            assert!(!servers.is_empty());
            for s in servers {
                let addr = s["addr"].as_str().unwrap().to_owned();
                assert!(
                    s["status"]["rules"].is_object() || s["status"]["rules"].is_array(),
                    "{addr}: no status"
                );
                assert!(seen.insert(addr), "a server listed twice");
                order.push(s["players"].as_u64().unwrap());
            }
            assert_eq!(v["total"], SERVERS);
            pages.push((servers.len(), body.len()));
            match v["next"].as_str() {
                Some(n) => cursor = Some(n.to_owned()),
                None => break,
            }
        }
        eprintln!("{first}: pages (servers, bytes): {pages:?}");
        assert_eq!(seen.len(), SERVERS as usize);
        // each page but the last is full: the next server would not have fitted
        assert!(pages.len() >= 2 && pages[0].1 > MAX_PAGE_BYTES - 2 * STATUS_BYTES);
        if by_players {
            assert!(
                order.windows(2).all(|w| w[0] >= w[1]),
                "not most players first"
            );
        }
    }
}

/// The attack: [`ATTACKERS`] sources in networks of their own each ask for the biggest
/// page on a connection with a small window, then read 1 byte a second; meanwhile a
/// client on 127.0.0.1 asks for the same page. Before the bound, each answer was the
/// whole page (about 16 MB here), held until its reader took it; now the answers held
/// are at most `http_answer_bytes` (64 MiB, the default) in all.
const ATTACKERS: u8 = 128;

/// How much the master's VmRSS may grow under the attack, in KiB: the answer budget
/// (64 MiB), and 192 MiB for the statuses read for pages being made and the memory the
/// allocator keeps (its arenas of many threads) once answers are dropped. Measured:
/// +119 to +205 MiB with 96 to 192 attackers in six runs (it does not grow with them);
/// before the bound, +2,341 MiB with 128 and +700 MiB with 32.
const RSS_GROWTH_BOUND_KIB: u64 = 256 * 1024;

#[test]
fn slow_readers_of_the_biggest_page_from_many_sources_hold_bounded_memory() {
    let _ = rlimit::increase_nofile_limit(4096);
    let (m, _dir) = start("http-bytes-flood", "");
    // one page read whole first, so that what the first page costs is in the baseline
    let (code, _) = http_get(m.http, BIG_PAGE);
    assert_eq!(code, 200);
    let base = rss_kib(&m);
    let rt = runtime();
    let t0 = Instant::now();
    let mut readers: Vec<Option<TcpStream>> = (0..ATTACKERS)
        .map(|i| {
            let mut s = slow_reader(&rt, [127, 80, i, 2], m.http);
            s.write_all(get(BIG_PAGE).as_bytes()).unwrap();
            Some(s)
        })
        .collect();
    // every answer has begun to come (or its connection was closed for room)
    let mut peak = base;
    let mut closed = 0;
    for r in readers.iter_mut() {
        if let Some(s) = r {
            s.set_read_timeout(Some(Duration::from_secs(10))).unwrap();
            if s.peek(&mut [0u8; 1]).map_or(true, |n| n == 0) {
                *r = None;
                closed += 1;
            }
        }
        peak = peak.max(rss_kib(&m));
    }
    // then each reads 1 byte a second, for 3 seconds, while the memory is watched
    for _ in 0..3 {
        for r in readers.iter_mut() {
            if let Some(s) = r {
                if read_some(s, 1).is_none() {
                    *r = None;
                    closed += 1;
                }
            }
        }
        for _ in 0..10 {
            peak = peak.max(rss_kib(&m));
            std::thread::sleep(Duration::from_millis(100));
        }
    }
    // a new client still gets its page, whole
    let t = Instant::now();
    let (code, body) = http_get(m.http, BIG_PAGE);
    let took = t.elapsed();
    peak = peak.max(rss_kib(&m));
    let servers = serde_json::from_str::<Value>(&body)
        .ok()
        .and_then(|v| v["servers"].as_array().map(Vec::len));
    let taken = displaced(&m, "answer_bytes");
    eprintln!(
        "{ATTACKERS} slow readers of {BIG_PAGE} ({} bytes a page): VmRSS {base} KiB before, \
         peak {peak} KiB (+{} KiB) over {:?}; {closed} of them saw their end, {taken} closed \
         for answer bytes; a new client: {code}, {servers:?} servers, {} bytes in {took:?}",
        body.len(),
        peak - base,
        t0.elapsed(),
        body.len(),
    );
    assert_eq!(code, 200);
    assert!(servers.is_some_and(|n| n > 0), "the new client's page");
    assert!(
        peak - base <= RSS_GROWTH_BOUND_KIB,
        "VmRSS grew by {} KiB (bound {RSS_GROWTH_BOUND_KIB} KiB)",
        peak - base
    );
    drop(readers);
}

/// `ogp_master_http_displaced_connections_total{cap="CAP"}` now.
fn displaced(m: &Master, cap: &str) -> f64 {
    let (_, text) = http_get(m.http, "/metrics");
    metric(
        &text,
        &format!("ogp_master_http_displaced_connections_total{{cap=\"{cap}\"}}"),
    )
    .unwrap_or(0.0)
}

/// A client that keeps reading a little (8 KiB every 100 ms, so that the master's
/// writes do not stall for its write timeout of 3 s) is closed once its answer is not
/// written at `http_answer_rate` (256 KiB/s here: a page of 1 MiB has 4 s). The kernels
/// still hold what the master wrote: once it has closed, the client reads that fast and
/// meets the end of the answer, cut.
#[test]
fn a_reader_that_reads_a_little_now_and_then_is_closed_at_the_least_rate() {
    let (m, _dir) = start(
        "http-bytes-rate",
        "http_idle_timeout_ms = 3000\nhttp_answer_rate = 262144\n",
    );
    let rt = runtime();
    let mut s = slow_reader(&rt, [127, 0, 0, 2], m.http);
    s.write_all(get(BIG_PAGE).as_bytes()).unwrap();
    let t = Instant::now();
    let mut got = 0usize;
    let mut closed_after = None;
    let mut ended = false;
    for i in 0..120u32 {
        match read_some(&mut s, 8192) {
            Some(n) => got += n,
            None => {
                ended = true;
                if displaced(&m, "answer_rate") >= 1.0 {
                    closed_after = Some(t.elapsed());
                }
                break;
            }
        }
        if i % 5 == 4 && displaced(&m, "answer_rate") >= 1.0 {
            closed_after = Some(t.elapsed());
            break;
        }
        std::thread::sleep(Duration::from_millis(100));
    }
    // what the kernels hold, read fast: the end comes
    let mut drained = 0;
    if !ended {
        s.set_read_timeout(Some(Duration::from_secs(3))).unwrap();
        let mut buf = vec![0u8; 1 << 16];
        while let Ok(n) = s.read(&mut buf) {
            if n == 0 {
                ended = true;
                break;
            }
            drained += n;
        }
    }
    eprintln!(
        "read {got} bytes slowly; the master closed after {closed_after:?}; then {drained} \
         bytes held by the kernels; ended: {ended} after {:?}; {} closed for the rate",
        t.elapsed(),
        displaced(&m, "answer_rate")
    );
    let closed = closed_after.expect("the slow reader was kept 12 s");
    assert!(
        closed >= Duration::from_secs(3) && closed <= Duration::from_secs(7),
        "{closed:?}"
    );
    assert!(ended, "the connection did not end");
    assert!(got + drained < MAX_PAGE_BYTES, "the whole page was read");
}

/// Many clients asking at once for a first page nobody has made (the full view, whose
/// statuses come from the database) cause one making of it (issue 41: each made its own,
/// p99 330–570 ms at a million servers): the database is read for one page's statuses
/// only, in two reads (16, then the 84 left: small statuses), where each of the 24
/// clients read seven chunks of 16 before. All get the same answer.
#[test]
fn clients_asking_together_for_a_cold_first_page_make_it_once() {
    const CLIENTS: usize = 24;
    let (m, _dir) = simulated::with_simulated(
        "master-cold-first-page",
        "http_max_connections_per_ip = 64\n",
        300,
        0,
    );
    let statuses_read = || {
        let (_, text) = http_get(m.http, "/metrics");
        metric(&text, "ogp_master_db_seconds_count{op=\"statuses\"}").unwrap_or(0.0)
    };
    let before = statuses_read();
    let path = "/api/v1/servers?sort=players&has_players=true";
    let mut conns: Vec<TcpStream> = (0..CLIENTS)
        .map(|_| TcpStream::connect(m.http).unwrap())
        .collect();
    // every request is sent before any answer is read
    for c in &mut conns {
        c.write_all(get(path).as_bytes()).unwrap();
    }
    let answers: Vec<(u16, String)> = conns
        .iter_mut()
        .map(|c| {
            c.set_read_timeout(Some(Duration::from_secs(20))).unwrap();
            let (code, _, body) = common::master::read_answer(c).expect("an answer");
            (code, body)
        })
        .collect();
    let first = &answers[0].1;
    let v: Value = serde_json::from_str(first).unwrap();
    let servers = v["servers"].as_array().unwrap();
    assert_eq!(servers.len(), 100);
    assert!(servers.iter().all(|s| s["status"].is_object()), "{first}");
    assert!(answers
        .iter()
        .all(|(code, body)| *code == 200 && body == first));
    let reads = statuses_read() - before;
    assert_eq!(
        reads, 2.0,
        "statuses read {reads} times for {CLIENTS} clients"
    );
    // the page itself made on one thread of the blocking pool while the others waited
    // on the async workers (each took a thread of its own before); a merge holding the
    // list's lock sends a request to the pool too
    let (_, text) = http_get(m.http, "/metrics");
    let pool = metric(&text, "ogp_master_first_pages_total{source=\"pool\"}").unwrap_or(0.0);
    let cache = metric(&text, "ogp_master_first_pages_total{source=\"cache\"}").unwrap_or(0.0);
    assert_eq!(pool + cache, CLIENTS as f64, "{text}");
    assert!(pool <= 3.0, "{pool} of {CLIENTS} requests took the pool");
}
