//! The master's HTTP side against guessers and floods from many addresses (issue 36,
//! items 2 and 3): `ogp master` runs as a child; attackers connect from other loopback
//! addresses (all of 127.0.0.0/8 is loopback on Linux) while a client on 127.0.0.1 is
//! measured.
//!
//! * Wrong bearer tokens: limited per address (429 with `Retry-After`) and from all
//!   addresses together, logged once a minute per address with a count, counted in
//!   `/metrics`; the right token is never slowed, not even from the guesser's own
//!   address.
//! * Half-sent requests from 100 addresses (3,000 connections, topped up as the master
//!   closes them) do not keep a new client from the page: a new connection displaces the
//!   one that has gone longest without a request, and one /24 holds at most its cap.

use crate::common;

use std::io::{Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use common::master::{
    connect_from, http_get, metric, read_answer, runtime, try_connect_from, wait_for, Master,
};
use common::TempDir;

const TOKEN: &str = "caps-test-token-0123456789abcdef";

/// `ogp master` with `config` (TOML) in a directory of its own.
fn start(label: &str, config: &str) -> (Master, TempDir) {
    let dir = TempDir::new(label);
    let db = format!("sqlite://{}", dir.0.join("m.db").display());
    let m = Master::with_config(&dir.0, "master", config, &["--db", &db]);
    (m, dir)
}

/// A `DELETE /api/v1/servers/…` with `token`, kept alive.
fn delete_request(token: &str) -> String {
    format!(
        "DELETE /api/v1/servers/192.0.2.1:25565 HTTP/1.1\r\nHost: x\r\n\
         Authorization: Bearer {token}\r\n\r\n"
    )
}

/// One request from the loopback address `from` on a connection of its own.
fn request_from(
    rt: &tokio::runtime::Runtime,
    from: [u8; 4],
    to: SocketAddr,
    request: &str,
) -> Option<(u16, String, String)> {
    let mut s = connect_from(rt, from, to);
    s.set_read_timeout(Some(Duration::from_secs(10))).unwrap();
    s.write_all(request.as_bytes()).ok()?;
    read_answer(&mut s)
}

/// What a guesser got in a time.
#[derive(Debug, Default)]
struct Guesses {
    unauthorized: usize,
    limited: usize,
    limited_with_retry_after: usize,
    /// Closed without an answer.
    unanswered: usize,
    other: usize,
    connections: usize,
}

impl std::ops::AddAssign for Guesses {
    fn add_assign(&mut self, o: Self) {
        self.unauthorized += o.unauthorized;
        self.limited += o.limited;
        self.limited_with_retry_after += o.limited_with_retry_after;
        self.unanswered += o.unanswered;
        self.other += o.other;
        self.connections += o.connections;
    }
}

/// Wrong tokens from `from` until `until`, one after another on kept-alive connections
/// (a new connection when the master closes one).
fn guess(from: [u8; 4], to: SocketAddr, seed: u64, until: Instant) -> Guesses {
    let rt = runtime();
    let mut g = Guesses::default();
    let mut conn: Option<TcpStream> = None;
    let mut i = 0u64;
    while Instant::now() < until {
        let s = match &mut conn {
            Some(s) => s,
            None => {
                let s = connect_from(&rt, from, to);
                s.set_read_timeout(Some(Duration::from_secs(10))).unwrap();
                g.connections += 1;
                conn.insert(s)
            }
        };
        i += 1;
        let wrong = format!("wrong-token-{seed:04x}-{i:016x}-0123456789");
        if s.write_all(delete_request(&wrong).as_bytes()).is_err() {
            g.unanswered += 1;
            conn = None;
            continue;
        }
        match read_answer(s) {
            None => {
                g.unanswered += 1;
                conn = None;
            }
            Some((code, head, _)) => {
                match code {
                    401 => g.unauthorized += 1,
                    429 => {
                        g.limited += 1;
                        if head.contains("\r\nretry-after: ") {
                            g.limited_with_retry_after += 1;
                        }
                    }
                    _ => g.other += 1,
                }
                if head.contains("\r\nconnection: close") {
                    conn = None;
                }
            }
        }
    }
    g
}

/// The right token's `DELETE` from `from`: the status code and how long it took.
fn right_token(rt: &tokio::runtime::Runtime, from: [u8; 4], to: SocketAddr) -> (u16, Duration) {
    let t = Instant::now();
    let got = request_from(rt, from, to, &delete_request(TOKEN));
    (got.map_or(0, |g| g.0), t.elapsed())
}

#[test]
fn wrong_tokens_are_limited_per_address_logged_once_and_counted_and_the_right_one_passes() {
    let (m, _dir) = start(
        "http-caps-token",
        &format!("api_token = \"{TOKEN}\"\nallow_private = true\n"),
    );
    let addr = m.http;
    let rt = runtime();
    // one address guesses for 2 s on 16 connections at once, each as fast as the master
    // answers; meanwhile the right token is sent from it and from another address
    const THREADS: u64 = 16;
    const TIME: Duration = Duration::from_secs(2);
    let started = Instant::now();
    let until = started + TIME;
    let threads: Vec<_> = (0..THREADS)
        .map(|seed| std::thread::spawn(move || guess([127, 0, 0, 2], addr, seed, until)))
        .collect();
    let mut right = Vec::new();
    while Instant::now() + Duration::from_millis(300) < until {
        std::thread::sleep(Duration::from_millis(200));
        for from in [[127, 0, 0, 2], [127, 0, 0, 1]] {
            right.push((from[3], right_token(&rt, from, m.http)));
        }
    }
    let mut g = Guesses::default();
    for t in threads {
        g += t.join().unwrap();
    }
    let secs = started.elapsed().as_secs_f64();
    let answered = g.unauthorized + g.limited + g.other;
    eprintln!(
        "127.0.0.2, wrong tokens on {THREADS} connections at once for {secs:.2} s: {answered} \
         answered ({:.1}/s) on {} connections: {} x 401 ({:.1}/s), {} x 429 ({} with \
         Retry-After), {} closed unanswered, {} other",
        answered as f64 / secs,
        g.connections,
        g.unauthorized,
        g.unauthorized as f64 / secs,
        g.limited,
        g.limited_with_retry_after,
        g.unanswered,
        g.other
    );
    let slowest = right.iter().map(|r| r.1 .1).max().unwrap_or_default();
    eprintln!(
        "the right token meanwhile, from 127.0.0.2 and 127.0.0.1: {:?}; slowest {slowest:?}",
        right.iter().map(|r| (r.0, r.1 .0)).collect::<Vec<_>>()
    );
    assert!(right.len() >= 10);
    assert!(right.iter().all(|r| r.1 .0 == 404), "{right:?}");
    assert!(slowest < Duration::from_millis(500), "{right:?}");
    assert_eq!(g.other, 0, "{g:?}");
    // a burst of 10, then 1 a second: that many are told 401
    assert!(
        g.unauthorized <= 14,
        "{} wrong tokens were answered 401 in {secs:.2} s from one address",
        g.unauthorized
    );
    // the others wait a second for their 429, one at a time per connection
    assert!(g.limited > 0, "no wrong token was refused with 429: {g:?}");
    assert!(
        answered as f64 <= (THREADS as f64 + 1.0) * secs + 14.0,
        "{answered} answers in {secs:.2} s on {THREADS} connections"
    );
    assert_eq!(g.limited_with_retry_after, g.limited, "{g:?}");

    // the right token's POST from the guesser's address passes too
    let json = r#"{"addr":"127.0.0.1:25565","protocol":"minecraft"}"#;
    let add = format!(
        "POST /api/v1/servers HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer {TOKEN}\r\n\
         Content-Type: application/json\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{json}",
        json.len()
    );
    let (code, _, body) = request_from(&rt, [127, 0, 0, 2], m.http, &add).expect("an answer");
    assert_eq!(code, 201, "{body}");
    // another address's wrong token is not refused for the guesser's: it gets its 401
    let (code, head, _) = request_from(
        &rt,
        [127, 0, 0, 3],
        m.http,
        &delete_request("another-wrong-token"),
    )
    .expect("an answer");
    assert_eq!(code, 401, "{head}");

    // one log line for the guesser, with its address; the count follows a minute later
    let line = |log: &str| {
        log.lines()
            .filter(|l| l.contains("wrong API token") && l.contains("127.0.0.2"))
            .count()
    };
    wait_for("the wrong-token log line", Duration::from_secs(10), || {
        line(&m.log_text()) > 0
    });
    let log = m.log_text();
    eprintln!(
        "log: {:?}",
        log.lines()
            .filter(|l| l.contains("wrong API token"))
            .collect::<Vec<_>>()
    );
    assert_eq!(line(&log), 1, "{log}");

    // every wrong token is counted, by what it got
    let (_, text) = m.get("/metrics");
    let count = |outcome: &str| {
        metric(
            &text,
            &format!("ogp_master_http_wrong_tokens_total{{outcome=\"{outcome}\"}}"),
        )
    };
    let shown = text
        .lines()
        .filter(|l| l.contains("wrong_tokens"))
        .collect::<Vec<_>>()
        .join("\n");
    let limited = count("limited").unwrap_or(0.0) as usize;
    assert!(
        (g.limited..=g.limited + g.unanswered).contains(&limited),
        "{shown}\n{g:?}"
    );
    assert_eq!(
        count("unauthorized"),
        Some((g.unauthorized + 1) as f64),
        "{shown}"
    );
}

#[test]
fn wrong_tokens_from_many_addresses_are_held_to_the_total_and_the_right_one_still_passes() {
    let (m, _dir) = start(
        "http-caps-token-many",
        &format!("api_token = \"{TOKEN}\"\nallow_private = true\n"),
    );
    let addr = m.http;
    // 200 addresses in 200 /24s, 4 wrong tokens each on a connection of their own: each
    // within its own budget of 10, so only the total (50 at once, 20 a second) holds
    const ADDRS: u8 = 200;
    let started = Instant::now();
    let until = started + Duration::from_millis(1500);
    let threads: Vec<_> = (0..ADDRS)
        .map(|i| {
            std::thread::spawn(move || {
                let rt = runtime();
                let mut g = Guesses::default();
                let mut s = connect_from(&rt, [127, 40, i, 2], addr);
                s.set_read_timeout(Some(Duration::from_secs(10))).unwrap();
                g.connections += 1;
                for n in 0..4 {
                    if Instant::now() >= until {
                        break;
                    }
                    let wrong = format!("wrong-token-{i:02x}-{n}-0123456789abcdef");
                    if s.write_all(delete_request(&wrong).as_bytes()).is_err() {
                        g.unanswered += 1;
                        break;
                    }
                    match read_answer(&mut s) {
                        Some((401, _, _)) => g.unauthorized += 1,
                        Some((429, head, _)) => {
                            g.limited += 1;
                            if head.contains("\r\nretry-after: ") {
                                g.limited_with_retry_after += 1;
                            }
                            break; // closed after a 429
                        }
                        Some(_) => g.other += 1,
                        None => {
                            g.unanswered += 1;
                            break;
                        }
                    }
                }
                g
            })
        })
        .collect();
    let rt = runtime();
    let (code, took) = right_token(&rt, [127, 0, 0, 1], addr);
    let mut g = Guesses::default();
    for t in threads {
        g += t.join().unwrap();
    }
    let secs = started.elapsed().as_secs_f64();
    eprintln!(
        "{ADDRS} addresses, up to 4 wrong tokens each, in {secs:.2} s: {} x 401, {} x 429, {} \
         unanswered, {} other; the right token meanwhile: {code} in {took:?}",
        g.unauthorized, g.limited, g.unanswered, g.other
    );
    assert_eq!((code, g.other), (404, 0));
    // answered while the guesses were still coming (their window is 1.5 s), not queued
    // behind them: 0.1 s on an idle machine, 0.75 s with 200 threads starting on two
    // busy cores
    assert!(took < Duration::from_millis(1400), "{took:?}");
    // 50 at once and 20 a second for all addresses together
    assert!(
        g.unauthorized as f64 <= 50.0 + 20.0 * secs + 5.0,
        "{} wrong tokens answered 401 from {ADDRS} addresses in {secs:.2} s",
        g.unauthorized
    );
    assert!(g.limited >= 100, "{g:?}");
    assert_eq!(g.limited_with_retry_after, g.limited);
    // the log: at most one line per address (its first wrong token) within the minute
    let log = m.log_text();
    let lines = log
        .lines()
        .filter(|l| l.contains("wrong API token"))
        .count();
    assert!(lines <= usize::from(ADDRS), "{lines} log lines");
}

/// `per_addr` connections from each of `addrs`, each with a request head that never
/// ends, kept up (a closed one is opened again, up to `reopen_per_sec` a second) from a
/// thread of their own until `stop`.
struct Flood {
    stop: Arc<AtomicBool>,
    reopened: Arc<AtomicUsize>,
    thread: Option<std::thread::JoinHandle<usize>>,
}

/// How fast the floods open again what the master closes: fast enough that the master's
/// 512 places turn over four times a second (displacing by age alone, a client that
/// took 250 ms to send its request would lose its place), slow enough that the test's
/// own thread is not what decides the timings on a loaded machine.
const REOPEN_PER_SEC: u32 = 2000;

const HALF_SENT: &[u8] = b"GET / HTTP/1.1\r\nHost: x\r\nX-Slow: aaaaaaaa";

impl Flood {
    fn start(to: SocketAddr, addrs: Vec<[u8; 4]>, per_addr: usize, reopen_per_sec: u32) -> Self {
        let rt = runtime();
        let mut socks: Vec<([u8; 4], Option<TcpStream>)> = Vec::new();
        for _ in 0..per_addr {
            for a in &addrs {
                let mut s = connect_from(&rt, *a, to);
                let _ = s.write_all(HALF_SENT);
                socks.push((*a, Some(s)));
            }
        }
        let stop = Arc::new(AtomicBool::new(false));
        let reopened = Arc::new(AtomicUsize::new(0));
        let (st, re) = (stop.clone(), reopened.clone());
        let thread = std::thread::spawn(move || {
            let t = Instant::now();
            let mut buf = [0u8; 64];
            // bounded: the test ends it long before
            while !st.load(Ordering::Relaxed) && t.elapsed() < Duration::from_secs(120) {
                let mut any = false;
                for (a, slot) in &mut socks {
                    let closed = match slot {
                        None => true,
                        Some(s) => {
                            s.set_nonblocking(true).unwrap();
                            !matches!(s.read(&mut buf),
                                Err(e) if e.kind() == std::io::ErrorKind::WouldBlock)
                        }
                    };
                    if closed {
                        any = true;
                        *slot = try_connect_from(&rt, *a, to).ok().map(|mut s| {
                            let _ = s.write_all(HALF_SENT);
                            s
                        });
                        let n = re.fetch_add(1, Ordering::Relaxed) + 1;
                        // paced: n reopened by n / rate seconds
                        let due = Duration::from_secs_f64(n as f64 / f64::from(reopen_per_sec));
                        if let Some(wait) = due.checked_sub(t.elapsed()) {
                            std::thread::sleep(wait);
                        }
                    }
                    if st.load(Ordering::Relaxed) {
                        break;
                    }
                }
                if !any {
                    std::thread::sleep(Duration::from_millis(5));
                }
            }
            socks.iter().filter(|(_, s)| s.is_some()).count()
        });
        Self {
            stop,
            reopened,
            thread: Some(thread),
        }
    }

    /// Stops the thread: the connections it holds at the end.
    fn stop(mut self) -> usize {
        self.stop.store(true, Ordering::Relaxed);
        self.thread.take().map_or(0, |t| t.join().unwrap())
    }
}

impl Drop for Flood {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::Relaxed);
    }
}

#[test]
fn a_new_client_gets_the_page_within_a_second_while_100_addresses_hold_3000_half_sent_requests() {
    // 3,000 sockets here and the master's up to 512 (it is a child: it inherits the limit)
    let _ = rlimit::increase_nofile_limit(8192);
    let (m, _dir) = start("http-caps-flood", "http_header_timeout_ms = 120000\n");
    // 100 addresses in 100 /24s, none in 127.0.0.0/24
    let addrs: Vec<[u8; 4]> = (0..100u8).map(|i| [127, 20, i, 2]).collect();
    let t = Instant::now();
    let flood = Flood::start(m.http, addrs, 30, REOPEN_PER_SEC);
    eprintln!(
        "3,000 half-sent requests from 100 addresses opened in {:?}",
        t.elapsed()
    );
    let mut fetched = Vec::new();
    let fetching = Instant::now();
    let reopened_before = flood.reopened.load(Ordering::Relaxed);
    for _ in 0..25 {
        let t = Instant::now();
        let (code, body) = http_get(m.http, "/");
        fetched.push((code, body.len(), t.elapsed()));
    }
    let reopened = flood.reopened.load(Ordering::Relaxed) - reopened_before;
    let fetching = fetching.elapsed();
    let (_, text) = http_get(m.http, "/metrics");
    let held = flood.stop();
    let ok: Vec<Duration> = fetched
        .iter()
        .filter(|(c, n, _)| *c == 200 && *n > 0)
        .map(|x| x.2)
        .collect();
    let slowest = fetched.iter().map(|x| x.2).max().unwrap_or_default();
    let mut sorted: Vec<Duration> = fetched.iter().map(|x| x.2).collect();
    sorted.sort();
    eprintln!(
        "127.0.0.1 GET /: {} of 25 fetched, median {:?}, slowest {slowest:?}; the flood \
         opened {reopened} connections again in those {fetching:?} ({:.0}/s) and held {held}",
        ok.len(),
        sorted[12],
        reopened as f64 / fetching.as_secs_f64()
    );
    let show = |name: &str| {
        text.lines()
            .filter(|l| l.starts_with(name))
            .collect::<Vec<_>>()
            .join("\n")
    };
    eprintln!(
        "{}\n{}",
        show("ogp_master_http_connections"),
        show("ogp_master_http_displaced")
    );
    assert_eq!(ok.len(), 25, "{fetched:?}");
    assert!(slowest < Duration::from_secs(1), "{fetched:?}");
    let open = metric(&text, "ogp_master_http_connections").unwrap_or(0.0);
    assert!(open <= 512.0, "{open} connections open");
    let displaced = metric(
        &text,
        "ogp_master_http_displaced_connections_total{cap=\"total\"}",
    )
    .unwrap_or(0.0);
    assert!(displaced >= 25.0, "{displaced} connections displaced");
}

#[test]
fn one_24_holds_at_most_its_cap_and_its_own_newcomers_displace_its_oldest() {
    let _ = rlimit::increase_nofile_limit(4096);
    let (m, _dir) = start(
        "http-caps-prefix",
        "http_header_timeout_ms = 120000\nhttp_max_connections_per_prefix = 64\n",
    );
    // 10 addresses of 127.30.0.0/24, 30 half-sent requests each
    let addrs: Vec<[u8; 4]> = (0..10u8).map(|i| [127, 30, 0, i + 2]).collect();
    let flood = Flood::start(m.http, addrs, 30, REOPEN_PER_SEC);
    // a client of the same /24 with a whole request still gets in
    let rt = runtime();
    let t = Instant::now();
    let mut s = connect_from(&rt, [127, 30, 0, 200], m.http);
    let connected = t.elapsed();
    s.set_read_timeout(Some(Duration::from_secs(10))).unwrap();
    s.write_all(b"GET /api/v1/stats HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
        .unwrap();
    let got = read_answer(&mut s);
    let took = t.elapsed();
    eprintln!("connected in {connected:?}");
    let (_, text) = http_get(m.http, "/metrics");
    drop(flood);
    let open = metric(&text, "ogp_master_http_connections").unwrap_or(0.0);
    let displaced = metric(
        &text,
        "ogp_master_http_displaced_connections_total{cap=\"prefix\"}",
    )
    .unwrap_or(0.0);
    eprintln!(
        "300 half-sent from one /24 (cap 64): {open} open (with /metrics' own); a newcomer \
         of the same /24 got {:?} in {took:?}; {displaced} displaced by the prefix cap",
        got.as_ref().map(|g| g.0)
    );
    assert_eq!(got.map(|g| g.0), Some(200));
    assert!(took < Duration::from_secs(1), "{took:?}");
    assert!(open <= 65.0, "{open} connections open");
    assert!(displaced > 0.0);
}
