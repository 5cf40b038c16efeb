//! Which of the master's HTTP connections count as idle (issue 36, review item a): `ogp
//! master` runs as a child with a few places only, and clients on other loopback
//! addresses (all of 127.0.0.0/8 is loopback on Linux) take them.
//!
//! A connection is idle once its answer's last bytes are written to the socket and no
//! byte of a next request has come: not while a slow reader still downloads its answer
//! (hyper holds the rest of it), nor once the client has sent part of its next request.
//! Idle connections are displaced first; slow readers after them, and before clients
//! sending a request, so that a flood of slow readers cannot race a client while it
//! sends its request.

use crate::common;
use crate::simulated;

use std::io::{Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use common::master::{
    closed_within, connect_from, http_get, metric, read_answer, runtime, slow_reader, wait_for,
    Master,
};
use common::TempDir;

/// Servers in the list: a page of all of them (`view=summary`) is over a megabyte.
const SERVERS: u32 = 5000;

const BIG_PAGE: &str = "/api/v1/servers?view=summary&limit=5000";

/// `ogp master` with `config` (TOML) and [`SERVERS`] simulated servers in its database,
/// once its list holds them.
fn start(label: &str, config: &str) -> (Master, TempDir) {
    simulated::with_simulated(label, config, SERVERS, 0)
}

fn get(path: &str, close: bool) -> String {
    let c = if close { "Connection: close\r\n" } else { "" };
    format!("GET {path} HTTP/1.1\r\nHost: x\r\n{c}\r\n")
}

/// One kept-alive request and its answer's status code.
fn ask(s: &mut TcpStream, path: &str) -> Option<u16> {
    s.set_read_timeout(Some(Duration::from_secs(10))).unwrap();
    s.write_all(get(path, false).as_bytes()).ok()?;
    read_answer(s).map(|a| a.0)
}

/// Reads a whole answer (with `Content-Length`) as fast as it comes: its body's length
/// and the length its head announced, or what was read when the connection ended
/// first.
fn download(s: &mut TcpStream) -> (usize, Option<usize>) {
    s.set_read_timeout(Some(Duration::from_secs(10))).unwrap();
    let mut raw = Vec::new();
    let mut buf = vec![0u8; 1 << 16];
    let t = Instant::now();
    loop {
        let head_end = raw.windows(4).position(|w| w == b"\r\n\r\n").map(|i| i + 4);
        let len = head_end.and_then(|e| {
            String::from_utf8_lossy(&raw[..e])
                .to_ascii_lowercase()
                .lines()
                .find_map(|l| l.strip_prefix("content-length:")?.trim().parse().ok())
        });
        if let (Some(e), Some(n)) = (head_end, len) {
            if raw.len() >= e + n {
                return (n, Some(n));
            }
        }
        if t.elapsed() > Duration::from_secs(20) {
            return (raw.len() - head_end.unwrap_or(0), len);
        }
        match s.read(&mut buf) {
            Ok(0) | Err(_) => return (raw.len().saturating_sub(head_end.unwrap_or(0)), len),
            Ok(n) => raw.extend_from_slice(&buf[..n]),
        }
    }
}

/// A third connection asks (from 127.0.0.4, with `Connection: close`) while the two
/// places are taken: its answer's status code, and when `idle` was closed.
fn a_third_connection(
    rt: &tokio::runtime::Runtime,
    m: &Master,
    idle: &mut TcpStream,
) -> (Option<u16>, Option<Duration>) {
    let mut third = connect_from(rt, [127, 0, 0, 4], m.http);
    third
        .set_read_timeout(Some(Duration::from_secs(10)))
        .unwrap();
    third
        .write_all(get("/api/v1/stats", true).as_bytes())
        .unwrap();
    let got = read_answer(&mut third).map(|a| a.0);
    (got, closed_within(idle, Duration::from_secs(2)))
}

#[test]
fn a_slow_reader_of_a_big_listing_keeps_its_place_over_an_idle_connection() {
    let (m, _dir) = start("http-idle-slow", "http_max_connections = 2\n");
    let rt = runtime();
    // the slow reader asks for the whole list and reads nothing yet
    let mut slow = slow_reader(&rt, [127, 0, 0, 2], m.http);
    slow.write_all(get(BIG_PAGE, false).as_bytes()).unwrap();
    // the master has written what the kernels hold (its answer has begun to come), and
    // holds the rest
    slow.set_read_timeout(Some(Duration::from_secs(10)))
        .unwrap();
    assert_eq!(slow.peek(&mut [0u8; 1]).ok(), Some(1), "no answer began");
    std::thread::sleep(Duration::from_millis(100));
    // then a client asks, is answered, and keeps its connection idle
    let mut idle = connect_from(&rt, [127, 0, 0, 3], m.http);
    assert_eq!(ask(&mut idle, "/api/v1/stats"), Some(200));
    std::thread::sleep(Duration::from_millis(100));
    // a third connection needs a place: the idle one gives it
    let (third_got, idle_closed) = a_third_connection(&rt, &m, &mut idle);
    // the slow reader now reads its answer, whole
    let t = Instant::now();
    let (got, announced) = download(&mut slow);
    eprintln!(
        "third connection: {third_got:?}; the idle one closed after {idle_closed:?}; the \
         slow reader then read {got} of {announced:?} bytes in {:?}",
        t.elapsed()
    );
    assert_eq!(third_got, Some(200));
    assert!(
        announced.is_some_and(|n| n > 1_000_000),
        "{announced:?}: the page is meant to be bigger than what the kernels hold"
    );
    assert_eq!(Some(got), announced, "the slow reader's download was cut");
    assert!(idle_closed.is_some(), "the idle connection was kept");
}

#[test]
fn a_connection_that_sent_half_its_next_request_is_not_idle() {
    let (m, _dir) = start("http-idle-half", "http_max_connections = 2\n");
    let rt = runtime();
    // two clients are answered, the first one first; then the first sends half of its
    // next request, and the second keeps its connection idle
    let mut half = connect_from(&rt, [127, 0, 0, 2], m.http);
    assert_eq!(ask(&mut half, "/api/v1/stats"), Some(200));
    let mut idle = connect_from(&rt, [127, 0, 0, 3], m.http);
    assert_eq!(ask(&mut idle, "/api/v1/stats"), Some(200));
    let next = get("/api/v1/stats", false);
    let (first, rest) = next.split_at(20);
    half.write_all(first.as_bytes()).unwrap();
    std::thread::sleep(Duration::from_millis(200));
    // a third connection needs a place: the idle one gives it
    let (third_got, idle_closed) = a_third_connection(&rt, &m, &mut idle);
    // the first client's request ends, and is answered
    half.write_all(rest.as_bytes()).unwrap();
    let half_got = read_answer(&mut half).map(|a| a.0);
    eprintln!(
        "third connection: {third_got:?}; the idle one closed after {idle_closed:?}; the \
         half-sent request, completed: {half_got:?}"
    );
    assert_eq!(third_got, Some(200));
    assert_eq!(
        half_got,
        Some(200),
        "the half-sent request's connection was closed"
    );
    assert!(idle_closed.is_some(), "the idle connection was kept");
}

/// Slow readers from `addrs` in turn, a new one every 50 ms, each asking for `path` and
/// reading nothing; each address keeps its last `each` (its older ones are closed),
/// from a thread of their own until stopped (or 60 s).
struct SlowReaders {
    stop: Arc<AtomicBool>,
    opened: Arc<AtomicUsize>,
    thread: Option<std::thread::JoinHandle<()>>,
}

impl SlowReaders {
    fn start(to: SocketAddr, addrs: Vec<[u8; 4]>, each: usize, path: &'static str) -> Self {
        let stop = Arc::new(AtomicBool::new(false));
        let opened = Arc::new(AtomicUsize::new(0));
        let (st, op) = (stop.clone(), opened.clone());
        let thread = std::thread::spawn(move || {
            let rt = runtime();
            let t = Instant::now();
            let mut held: Vec<std::collections::VecDeque<TcpStream>> =
                addrs.iter().map(|_| Default::default()).collect();
            let mut i = 0;
            while !st.load(Ordering::Relaxed) && t.elapsed() < Duration::from_secs(60) {
                let mut s = slow_reader(&rt, addrs[i % addrs.len()], to);
                let _ = s.write_all(get(path, false).as_bytes());
                let mine = &mut held[i % addrs.len()];
                mine.push_back(s);
                if mine.len() > each {
                    mine.pop_front();
                }
                op.fetch_add(1, Ordering::Relaxed);
                i += 1;
                std::thread::sleep(Duration::from_millis(50));
            }
        });
        Self {
            stop,
            opened,
            thread: Some(thread),
        }
    }
}

impl Drop for SlowReaders {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::Relaxed);
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}

#[test]
fn slow_readers_from_many_networks_do_not_race_a_client_sending_its_request() {
    let _ = rlimit::increase_nofile_limit(4096);
    let (m, _dir) = start("http-idle-flood", "http_max_connections = 32\n");
    // 40 addresses in 20 /24s, 2 slow readers each: more than the master's 32 places
    let addrs: Vec<[u8; 4]> = (0..40u8).map(|i| [127, 50, i / 2, 2 + i % 2]).collect();
    let flood = SlowReaders::start(m.http, addrs, 2, "/api/v1/servers?view=summary&limit=1000");
    wait_for("the slow readers", Duration::from_secs(20), || {
        flood.opened.load(Ordering::Relaxed) >= 80
    });
    let opened_before = flood.opened.load(Ordering::Relaxed);
    std::thread::sleep(Duration::from_millis(300));
    // a client on a connection of its own sends its request slowly, in three parts
    let rt = runtime();
    let mut fetched = Vec::new();
    for i in 0..10 {
        let t = Instant::now();
        let mut s = connect_from(&rt, [127, 0, 0, 1], m.http);
        s.set_read_timeout(Some(Duration::from_secs(10))).unwrap();
        let req = get("/api/v1/stats", true);
        let mut ok = true;
        for part in [&req[..10], &req[10..25], &req[25..]] {
            ok &= s.write_all(part.as_bytes()).is_ok();
            std::thread::sleep(Duration::from_millis(50));
        }
        let sent = t.elapsed();
        let got = if ok {
            read_answer(&mut s).map(|a| a.0)
        } else {
            None
        };
        fetched.push((i, got, sent, t.elapsed()));
    }
    let (_, text) = http_get(m.http, "/metrics");
    let opened = flood.opened.load(Ordering::Relaxed) - opened_before;
    drop(flood);
    let open = metric(&text, "ogp_master_http_connections").unwrap_or(0.0);
    let displaced: f64 = ["total", "prefix", "source"]
        .iter()
        .filter_map(|c| {
            metric(
                &text,
                &format!("ogp_master_http_displaced_connections_total{{cap=\"{c}\"}}"),
            )
        })
        .sum();
    eprintln!(
        "80 slow readers from 40 addresses in 20 /24s ({opened} opened again meanwhile), \
         a client sending its request in three parts: {fetched:?}; {open} open, \
         {displaced} displaced"
    );
    assert!(
        fetched.iter().all(|f| f.1 == Some(200)),
        "the client lost its place: {fetched:?}"
    );
    assert!(open <= 32.0, "{open} connections open");
    assert!(displaced >= 10.0, "{displaced}");
}
