//! The master's HTTP side under slow, idle and greedy clients (issue 29, item 1): `ogp
//! master` runs as a child with short limits from its TOML config; attackers connect
//! from other loopback addresses (127.0.0.2 and up: all of 127.0.0.0/8 is loopback on
//! Linux) while a normal client on 127.0.0.1 is still served.

use crate::common;

use std::io::{Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::time::{Duration, Instant};

use common::master::{closed_within, connect_from, metric, runtime, still_open};
use common::TempDir;

/// A running `ogp master` with `config` (TOML) added to its file, in a directory of its
/// own.
struct Master {
    proc: common::master::Master,
    _dir: TempDir,
}

impl std::ops::Deref for Master {
    type Target = common::master::Master;
    fn deref(&self) -> &Self::Target {
        &self.proc
    }
}

impl Master {
    fn start(config: &str) -> Self {
        let dir = TempDir::new("http-hardening");
        let db = format!("sqlite://{}", dir.0.join("m.db").display());
        let proc = common::master::Master::with_config(&dir.0, "master", config, &["--db", &db]);
        Self { proc, _dir: dir }
    }

    /// `VmRSS` and `VmHWM` of the master process, in KiB.
    fn memory_kib(&self) -> (u64, u64) {
        let status = std::fs::read_to_string(format!("/proc/{}/status", self.child.0.id()))
            .expect("/proc status of the master");
        let field = |name: &str| {
            status
                .lines()
                .find_map(|l| l.strip_prefix(name))
                .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
                .unwrap_or(0)
        };
        (field("VmRSS:"), field("VmHWM:"))
    }
}

/// A GET from 127.0.0.1 with `Connection: close`: the status code, the body, and how
/// long the whole answer took.
fn get(addr: SocketAddr, path: &str) -> (u16, String, Duration) {
    let t = Instant::now();
    let mut s = TcpStream::connect_timeout(&addr, Duration::from_secs(10)).expect("connect");
    s.set_read_timeout(Some(Duration::from_secs(20))).unwrap();
    write!(
        s,
        "GET {path} HTTP/1.1\r\nHost: {addr}\r\nConnection: close\r\n\r\n"
    )
    .unwrap();
    let mut raw = Vec::new();
    let _ = s.read_to_end(&mut raw);
    let took = t.elapsed();
    let text = String::from_utf8_lossy(&raw).into_owned();
    let code = text
        .split(' ')
        .nth(1)
        .and_then(|c| c.parse().ok())
        .unwrap_or(0);
    let body = text.split_once("\r\n\r\n").map_or("", |x| x.1).to_owned();
    (code, body, took)
}

#[test]
fn idle_and_half_sent_connections_are_closed_within_the_header_timeout() {
    let m = Master::start("http_header_timeout_ms = 1000\n");
    let a = m.http;
    let t0 = Instant::now();
    // sends nothing at all
    let mut silent = TcpStream::connect(a).unwrap();
    // a request line and a header, without the blank line that ends the head
    let mut half = TcpStream::connect(a).unwrap();
    half.write_all(b"GET / HTTP/1.1\r\nHost: x\r\n").unwrap();
    // a whole request answered, then kept alive and idle
    let mut idle = TcpStream::connect(a).unwrap();
    idle.write_all(b"GET /api/v1/stats HTTP/1.1\r\nHost: x\r\n\r\n")
        .unwrap();
    let mut first = [0u8; 12];
    idle.read_exact(&mut first).unwrap();
    assert_eq!(&first, b"HTTP/1.1 200");
    let limit = Duration::from_secs(15);
    for (what, s) in [
        ("silent", &mut silent),
        ("half-sent", &mut half),
        ("idle after an answer", &mut idle),
    ] {
        let closed = closed_within(s, limit).is_some();
        let took = t0.elapsed();
        eprintln!("{what}: closed {closed}, {took:?} after connecting (header timeout 1 s)");
        assert!(
            closed,
            "{what} connection still open {took:?} after connecting"
        );
    }
    // a head trickled one header line every 200 ms, so that bytes keep coming
    let mut trickle = TcpStream::connect(a).unwrap();
    trickle.write_all(b"GET / HTTP/1.1\r\n").unwrap();
    let started = Instant::now();
    let mut trickle_closed = None;
    for i in 0..75 {
        if trickle
            .write_all(format!("X-{i}: y\r\n").as_bytes())
            .is_err()
            || closed_within(&mut trickle, Duration::from_millis(200)).is_some()
        {
            trickle_closed = Some(started.elapsed());
            break;
        }
    }
    eprintln!("trickled head: closed after {trickle_closed:?} (header timeout 1 s)");
    assert!(
        trickle_closed.is_some(),
        "a trickled head still open after {:?}",
        started.elapsed()
    );
    // the master still serves
    let (code, _, _) = get(a, "/api/v1/stats");
    assert_eq!(code, 200);
}

#[test]
fn a_client_that_stops_reading_its_answers_is_dropped_after_the_idle_timeout() {
    let m = Master::start("http_idle_timeout_ms = 1000\nhttp_header_timeout_ms = 120000\n");
    // 400 pipelined requests for the 37 KB script (15 MB of answers, more than the
    // socket buffers hold), and then nothing read: the master's writes stall
    let mut s = TcpStream::connect(m.http).unwrap();
    let one = format!("GET /app.js HTTP/1.1\r\nHost: {}\r\n\r\n", m.http);
    s.write_all(one.repeat(400).as_bytes()).unwrap();
    let t = Instant::now();
    let mut last = String::new();
    loop {
        // the /metrics request's own connection is the only one left
        let (_, metrics, _) = get(m.http, "/metrics");
        if metric(&metrics, "ogp_master_http_connections") == Some(1.0) {
            break;
        }
        last = metrics;
        assert!(
            t.elapsed() < Duration::from_secs(20),
            "a stalled reader still held after {:?}:\n{last}",
            t.elapsed()
        );
        std::thread::sleep(Duration::from_millis(100));
    }
    eprintln!(
        "stalled reader dropped {:?} after its requests (idle timeout 1 s)",
        t.elapsed()
    );
    drop(last);
    // what reached it ends, well short of the 400 answers
    let mut got = Vec::new();
    s.set_read_timeout(Some(Duration::from_secs(15))).unwrap();
    let end = (&s).read_to_end(&mut got);
    let answers = String::from_utf8_lossy(&got)
        .matches("HTTP/1.1 200")
        .count();
    eprintln!("it got {answers} of 400 answers, then {end:?}");
    assert!(answers < 400, "all 400 answers were sent");
}

#[test]
fn one_address_over_its_cap_displaces_its_own_and_leaves_the_page_and_the_api_to_others() {
    const CAP: usize = 40;
    let m = Master::start(&format!(
        "http_header_timeout_ms = 120000\nhttp_max_connections_per_ip = {CAP}\n\
         http_max_connections_per_prefix = 1000\nhttp_max_connections = 100\n"
    ));
    let rt = runtime();
    // the attacker holds its cap of connections, each with a half-sent request
    let mut held = Vec::new();
    for _ in 0..CAP {
        let mut s = connect_from(&rt, [127, 0, 0, 2], m.http);
        s.write_all(b"GET / HTTP/1.1\r\nHost: x\r\n").unwrap();
        held.push(s);
    }
    // each connection beyond its cap closes its own oldest one at once
    let mut extra = Vec::new();
    for _ in 0..20 {
        let mut s = connect_from(&rt, [127, 0, 0, 2], m.http);
        let _ = s.write_all(b"GET / HTTP/1.1\r\nHost: x\r\n");
        extra.push(s);
    }
    let t = Instant::now();
    for (i, s) in held.iter_mut().take(20).enumerate() {
        assert!(
            closed_within(s, Duration::from_secs(10)).is_some(),
            "the attacker's connection #{i} is still open after 20 more over its cap of {CAP}"
        );
    }
    eprintln!(
        "20 connections beyond the cap of {CAP}: its 20 oldest closed within {:?}",
        t.elapsed()
    );
    // a normal client still gets the page and the API, fast
    for path in ["/", "/api/v1/stats", "/api/v1/servers"] {
        let (code, body, took) = get(m.http, path);
        eprintln!("127.0.0.1 GET {path}: {code} in {took:?} while 127.0.0.2 holds {CAP}");
        assert_eq!(code, 200, "{path}: {body}");
        assert!(took < Duration::from_secs(1), "{path} took {took:?}");
    }
    let (_, metrics, _) = get(m.http, "/metrics");
    let displaced = metric(
        &metrics,
        "ogp_master_http_displaced_connections_total{cap=\"source\"}",
    );
    assert_eq!(displaced, Some(20.0), "{metrics}");
    let held: Vec<TcpStream> = held.split_off(20).into_iter().chain(extra).collect();
    assert!(
        held.iter().all(still_open),
        "the attacker's newest {CAP} were closed"
    );
    // another address is counted apart from the attacker, up to the total cap (100)
    let mut other = Vec::new();
    for _ in 0..CAP {
        other.push(connect_from(&rt, [127, 0, 0, 3], m.http));
    }
    let t = Instant::now();
    loop {
        // 40 + 40 held, and this request's own connection
        let (_, metrics, _) = get(m.http, "/metrics");
        if metric(&metrics, "ogp_master_http_connections") == Some(81.0) {
            break;
        }
        assert!(t.elapsed() < Duration::from_secs(20), "{metrics}");
        std::thread::sleep(Duration::from_millis(100));
    }
    let third: Vec<TcpStream> = (0..25)
        .map(|_| connect_from(&rt, [127, 0, 0, 4], m.http))
        .collect();
    // 40 + 40 + 20 fill the total cap of 100, and the last 5 displace connections of
    // the two addresses that hold the most (40 each), their oldest first. The /metrics
    // connection above may still be counted for an instant after the client saw its end,
    // so a sixth may go.
    let closed = || held.iter().chain(&other).filter(|s| !still_open(s)).count();
    let t = Instant::now();
    while closed() < 5 && t.elapsed() < Duration::from_secs(10) {
        std::thread::sleep(Duration::from_millis(50));
    }
    std::thread::sleep(Duration::from_millis(300));
    let n = closed();
    eprintln!("25 newcomers from 127.0.0.4 with 100 - 80 places left: {n} of the heaviest closed");
    assert!((5..=6).contains(&n), "{n} of the 80 held were closed");
    for group in [&held[..], &other[..]] {
        // each address lost its oldest: what is closed is a prefix of the list
        let open: Vec<bool> = group.iter().map(still_open).collect();
        assert!(open.windows(2).all(|w| w[0] <= w[1]), "{open:?}");
    }
    assert!(
        third.iter().all(still_open),
        "newcomers over the total cap were closed"
    );
}

#[test]
fn a_body_over_the_limit_is_refused_with_413_before_it_is_read() {
    let m = Master::start("http_max_body_bytes = 1024\n");
    let mut s = TcpStream::connect(m.http).unwrap();
    s.set_read_timeout(Some(Duration::from_secs(20))).unwrap();
    // announces 100 MB and waits for the answer before sending any of it (a body left
    // unread when the answer is sent would make the close a reset, which may discard the
    // answer before it is read)
    s.write_all(
        format!(
            "GET /api/v1/stats HTTP/1.1\r\nHost: {}\r\nContent-Length: 100000000\r\n\r\n",
            m.http
        )
        .as_bytes(),
    )
    .unwrap();
    let mut head = [0u8; 12];
    s.read_exact(&mut head).unwrap();
    assert_eq!(&head, b"HTTP/1.1 413", "{}", String::from_utf8_lossy(&head));
    // and the connection is closed rather than left to read the rest
    assert!(closed_within(&mut s, Duration::from_secs(15)).is_some());
    // a body within the limit is no reason to refuse
    let mut s = TcpStream::connect(m.http).unwrap();
    s.set_read_timeout(Some(Duration::from_secs(20))).unwrap();
    s.write_all(
        b"GET /api/v1/stats HTTP/1.1\r\nHost: x\r\nContent-Length: 10\r\nConnection: close\r\n\r\n0123456789",
    )
    .unwrap();
    let mut head = [0u8; 12];
    s.read_exact(&mut head).unwrap();
    assert_eq!(&head, b"HTTP/1.1 200");
}

#[test]
fn memory_and_connections_stay_bounded_under_a_connection_flood() {
    const PER_IP: usize = 32;
    const TOTAL: usize = 512;
    const ADDRS: u8 = 16;
    const TRIES: usize = 200;
    let m = Master::start(&format!(
        "http_header_timeout_ms = 120000\nhttp_max_connections_per_ip = {PER_IP}\n\
         http_max_connections_per_prefix = 1024\nhttp_max_connections = {}\n",
        TOTAL + 8
    ));
    let (code, _, _) = get(m.http, "/");
    assert_eq!(code, 200);
    let (rss0, hwm0) = m.memory_kib();
    let rt = runtime();
    // 16 addresses × 200 connections, each with 8 KB of a request head that never ends
    let head = {
        let mut h = b"GET / HTTP/1.1\r\nHost: x\r\nX-Padding: ".to_vec();
        h.resize(8000, b'a');
        h
    };
    let mut socks = Vec::new();
    let t = Instant::now();
    for i in 0..TRIES {
        for a in 0..ADDRS {
            let mut s = connect_from(&rt, [127, 0, 1, a + 2], m.http);
            let _ = s.write_all(&head);
            socks.push((i, s));
        }
    }
    let opened = t.elapsed();
    // the normal client is served behind all of them (accepted in order, so every
    // connection above has been counted by then)
    let (code, metrics, took) = get(m.http, "/metrics");
    assert_eq!(code, 200);
    let open = metric(&metrics, "ogp_master_http_connections");
    let displaced = metric(
        &metrics,
        "ogp_master_http_displaced_connections_total{cap=\"source\"}",
    );
    // the master's memory once it has read what it holds: settled when three samples
    // 300 ms apart agree within 1 MB (bounded: 10 s)
    let mut samples = vec![m.memory_kib()];
    let t2 = Instant::now();
    while t2.elapsed() < Duration::from_secs(10) {
        std::thread::sleep(Duration::from_millis(300));
        samples.push(m.memory_kib());
        let n = samples.len();
        if n >= 3
            && samples[n - 3..]
                .iter()
                .all(|s| s.0.abs_diff(samples[n - 1].0) < 1024)
        {
            break;
        }
    }
    let (rss1, hwm1) = *samples.last().unwrap();
    let tries = TRIES * usize::from(ADDRS);
    let still: usize = socks.iter().filter(|(_, s)| still_open(s)).count();
    eprintln!(
        "{tries} connections from {ADDRS} addresses opened in {opened:?}; master holds \
         {still} (gauge {open:?} with the /metrics one, displaced {displaced:?}); /metrics in \
         {took:?}; VmRSS {rss0} -> {rss1} KiB, VmHWM {hwm0} -> {hwm1} KiB"
    );
    let grown_mib = rss1.saturating_sub(rss0) / 1024;
    assert!(
        grown_mib < 48,
        "the master grew by {grown_mib} MiB holding a connection flood"
    );
    assert_eq!(open, Some((PER_IP * usize::from(ADDRS) + 1) as f64));
    assert_eq!(
        displaced,
        Some(((TRIES - PER_IP) * usize::from(ADDRS)) as f64)
    );
    assert_eq!(still, PER_IP * usize::from(ADDRS));
    // the last 32 of each address are the ones held: each newcomer displaced its
    // address's oldest
    assert!(socks
        .iter()
        .filter(|(i, _)| *i >= TRIES - PER_IP)
        .all(|(_, s)| still_open(s)));
    drop(socks);
    // and everything is given back: the gauge returns to the one /metrics connection
    let t3 = Instant::now();
    loop {
        let (_, metrics, _) = get(m.http, "/metrics");
        if metric(&metrics, "ogp_master_http_connections") == Some(1.0) {
            break;
        }
        assert!(
            t3.elapsed() < Duration::from_secs(20),
            "connections not released: {metrics}"
        );
        std::thread::sleep(Duration::from_millis(100));
    }
}
