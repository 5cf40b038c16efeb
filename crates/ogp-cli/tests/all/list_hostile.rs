//! `ogp list` against hostile masters on loopback (issue 29, item 6). Each fake master
//! here is the attacker's side: junk datagrams that used to keep the client waiting,
//! pages without end, a 60 MB body of junk, the same cursor forever, slow endless pages,
//! and entries that are no server. `ogp list` must end in each case, by its deadline or
//! at once, with a one-line error and exit 1 (or skip the entries with a warning), never
//! passing a short or looping list off as whole.

use crate::common;

use std::io::{Read, Write};
use std::net::{Ipv4Addr, SocketAddr, SocketAddrV4, TcpListener, TcpStream, UdpSocket};
use std::process::Command;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use common::*;
use ogp_proto::master::valve::{encode_page, ListRequest};

/// Bounds a failure only: every case here ends within a few seconds when it works.
const LIMIT: Duration = Duration::from_secs(60);

fn ogp_list(args: &[&str]) -> Ran {
    let mut all = vec!["list"];
    all.extend_from_slice(args);
    ogp_run(&all, LIMIT)
}

fn lines(ran: &Ran) -> Vec<String> {
    String::from_utf8_lossy(&ran.stdout)
        .lines()
        .map(str::to_owned)
        .collect()
}

// ---------------------------------------------------------------------------------------
// A fake Valve master

/// A UDP master on 127.0.0.1 that hands each request (and where it came from) to
/// `answer` on a thread of its own, until dropped.
struct FakeUdp {
    addr: SocketAddr,
    stop: Arc<AtomicBool>,
    thread: Option<JoinHandle<()>>,
}

impl FakeUdp {
    fn start(mut answer: impl FnMut(&UdpSocket, SocketAddr, &[u8]) + Send + 'static) -> Self {
        let sock = UdpSocket::bind("127.0.0.1:0").unwrap();
        let addr = sock.local_addr().unwrap();
        let stop = Arc::new(AtomicBool::new(false));
        let flag = Arc::clone(&stop);
        let thread = std::thread::spawn(move || {
            sock.set_read_timeout(Some(Duration::from_millis(50)))
                .unwrap();
            let mut buf = [0u8; 2048];
            while !flag.load(Ordering::Relaxed) {
                if let Ok((n, from)) = sock.recv_from(&mut buf) {
                    answer(&sock, from, &buf[..n]);
                }
            }
        });
        Self {
            addr,
            stop,
            thread: Some(thread),
        }
    }

    fn target(&self) -> String {
        self.addr.to_string()
    }
}

impl Drop for FakeUdp {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::Relaxed);
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}

fn page(servers: &[SocketAddrV4], end: bool) -> Vec<u8> {
    let mut d = Vec::new();
    encode_page(servers, end, &mut d);
    d
}

fn v4(a: [u8; 4], port: u16) -> SocketAddrV4 {
    SocketAddrV4::new(Ipv4Addr::from(a), port)
}

/// A master that answers nothing but junk, every 1.5 s, to whoever asked it last (from
/// its own address: the client's socket is connected to it), until dropped.
fn junk_master() -> (String, impl Drop) {
    struct Stop(Arc<AtomicBool>, Option<JoinHandle<()>>);
    impl Drop for Stop {
        fn drop(&mut self) {
            self.0.store(true, Ordering::Relaxed);
            if let Some(t) = self.1.take() {
                let _ = t.join();
            }
        }
    }
    let sock = UdpSocket::bind("127.0.0.1:0").unwrap();
    let target = sock.local_addr().unwrap().to_string();
    let stop = Arc::new(AtomicBool::new(false));
    let flag = Arc::clone(&stop);
    let thread = std::thread::spawn(move || {
        sock.set_read_timeout(Some(Duration::from_millis(50)))
            .unwrap();
        let mut buf = [0u8; 2048];
        let mut client = None;
        let mut next = Instant::now();
        while !flag.load(Ordering::Relaxed) {
            if let Ok((_, from)) = sock.recv_from(&mut buf) {
                client = Some(from);
            }
            if let Some(c) = client.filter(|_| Instant::now() >= next) {
                let _ = sock.send_to(b"\xff\xff\xff\xffjunk", c);
                next = Instant::now() + Duration::from_millis(1500);
            }
        }
    });
    (target, Stop(stop, Some(thread)))
}

/// Junk every 1.5 s used to restart the client's wait each time: it waited forever,
/// killed at 60 s with nothing printed. Now the run has one deadline (`--timeout`) and
/// each page its own, set when the request goes out: junk moves neither.
#[test]
fn udp_junk_every_1_5_s_ends_by_the_deadline() {
    let (target, _master) = junk_master();
    let ran = ogp_list(&[&target, "--timeout", "4000"]);
    assert_eq!(ran.code, Some(1), "{}", ran.describe());
    assert!(ran.stdout.is_empty(), "{}", ran.describe());
    assert!(
        ran.stderr
            .contains("did not end within the deadline of 4000 ms"),
        "{}",
        ran.describe()
    );
    assert!(ran.took < Duration::from_secs(30), "{}", ran.describe());
    eprintln!("junk every 1.5 s, --timeout 4000: {}", ran.describe());
    // the whole run's deadline far away: each page's own (2 s, not restarted by junk
    // every 1.5 s) gives up after three requests
    let ran = ogp_list(&[&target, "--page-timeout", "2000", "--timeout", "600000"]);
    assert_eq!(ran.code, Some(1), "{}", ran.describe());
    assert!(
        ran.stderr
            .contains("no answer to the request for page 1 (3 attempts"),
        "{}",
        ran.describe()
    );
    assert!(ran.took < Duration::from_secs(30), "{}", ran.describe());
    eprintln!("junk every 1.5 s, --page-timeout 2000: {}", ran.describe());
}

/// A page with no entries and no end marker used to end the list as "0 servers", exit
/// 0; a list that stops after some pages likewise. Now: an error and exit 1, after
/// printing what came.
#[test]
fn udp_list_without_its_end_is_an_error() {
    let master = FakeUdp::start(|sock, from, _| {
        let _ = sock.send_to(&page(&[], false), from);
    });
    let ran = ogp_list(&[&master.target()]);
    assert_eq!(ran.code, Some(1), "{}", ran.describe());
    assert!(ran.stdout.is_empty(), "{}", ran.describe());
    assert!(
        ran.stderr
            .contains("page 1 has no servers and no end marker"),
        "{}",
        ran.describe()
    );
    assert_eq!(ran.stderr.lines().count(), 1, "{}", ran.describe());
    // one page of servers, then an empty page without the end
    let master = FakeUdp::start(|sock, from, d| {
        let req = ListRequest::decode(d).unwrap();
        let servers = if req.seed.port() == 0 {
            vec![v4([127, 0, 0, 1], 27015), v4([127, 0, 0, 2], 27015)]
        } else {
            Vec::new()
        };
        let _ = sock.send_to(&page(&servers, false), from);
    });
    let ran = ogp_list(&[&master.target()]);
    assert_eq!(ran.code, Some(1), "{}", ran.describe());
    assert_eq!(
        lines(&ran),
        ["a2s 127.0.0.1:27015", "a2s 127.0.0.2:27015"],
        "{}",
        ran.describe()
    );
    assert!(
        ran.stderr
            .contains("page 2 has no servers and no end marker"),
        "{}",
        ran.describe()
    );
}

/// Slow pages without end used to be followed for up to 10,000 pages: hours. Now the
/// whole run has one deadline.
#[test]
fn udp_slow_endless_pages_end_by_the_deadline() {
    let master = FakeUdp::start(|sock, from, d| {
        let req = ListRequest::decode(d).unwrap();
        // the attacker answers each page after 700 ms, always with one more server
        std::thread::sleep(Duration::from_millis(700));
        let next = u32::from(*req.seed.ip()).max(0x7f00_0001) + 1;
        let _ = sock.send_to(&page(&[v4(next.to_be_bytes(), 27015)], false), from);
    });
    let ran = ogp_list(&[&master.target(), "--timeout", "3000"]);
    assert_eq!(ran.code, Some(1), "{}", ran.describe());
    assert!(
        ran.stderr
            .contains("did not end within the deadline of 3000 ms"),
        "{}",
        ran.describe()
    );
    let n = lines(&ran).len();
    assert!((1..=5).contains(&n), "{n} pages in 3 s of 700 ms each");
    assert!(ran.took < Duration::from_secs(30), "{}", ran.describe());
}

/// A `lis2` page of `n` servers 127.0.1.x:8303 from `from`.
fn tw_page(from: u8, n: u8) -> Vec<u8> {
    let servers: Vec<SocketAddr> = (from..from.saturating_add(n))
        .map(|i| SocketAddr::from(([127, 0, 1, i], 8303)))
        .collect();
    let mut d = Vec::new();
    ogp_proto::master::teemaster::encode_page(&servers, &mut d);
    d
}

fn tw_count(n: usize) -> Vec<u8> {
    let mut d = Vec::new();
    ogp_proto::master::teemaster::encode_count(n, &mut d);
    d
}

/// Teeworlds 0.6 masters (`ogp list --tw`): a count the pages never reach, pages and no
/// count, a drip of endless pages of new servers, a count over the cap, and garbage: each
/// a one-line error by the page timeout or the deadline, the servers read printed, never
/// a short list passed off as whole. An honest one ends at its count.
#[test]
fn tw_lying_counts_and_endless_pages_end_with_an_error() {
    use ogp_proto::master::teemaster::Request;
    let honest = FakeUdp::start(|sock, from, d| match Request::decode(d) {
        Ok(Request::Count) => {
            let _ = sock.send_to(&tw_count(3), from);
        }
        Ok(Request::List) => {
            let _ = sock.send_to(&tw_page(1, 3), from);
        }
        Err(_) => {}
    });
    let ran = ogp_list(&[&honest.target(), "--tw"]);
    assert_eq!(ran.code, Some(0), "{}", ran.describe());
    assert_eq!(
        lines(&ran),
        [
            "teeworlds 127.0.1.1:8303",
            "teeworlds 127.0.1.2:8303",
            "teeworlds 127.0.1.3:8303"
        ],
        "{}",
        ran.describe()
    );
    assert!(ran.took < Duration::from_secs(2), "{}", ran.describe());
    // the count says 500, one page of 75 comes
    let liar = FakeUdp::start(|sock, from, d| match Request::decode(d) {
        Ok(Request::Count) => {
            let _ = sock.send_to(&tw_count(500), from);
        }
        Ok(Request::List) => {
            let _ = sock.send_to(&tw_page(1, 75), from);
        }
        Err(_) => {}
    });
    let ran = ogp_list(&[&liar.target(), "--tw", "--page-timeout", "300"]);
    assert_eq!(ran.code, Some(1), "{}", ran.describe());
    assert_eq!(lines(&ran).len(), 75, "{}", ran.describe());
    assert!(
        ran.stderr
            .contains("the list stopped after 75 of the 500 servers its master counted"),
        "{}",
        ran.describe()
    );
    assert_eq!(ran.stderr.lines().count(), 1, "{}", ran.describe());
    // pages and no count
    let no_count = FakeUdp::start(|sock, from, d| {
        if Request::decode(d) == Ok(Request::List) {
            let _ = sock.send_to(&tw_page(1, 2), from);
        }
    });
    let ran = ogp_list(&[&no_count.target(), "--tw", "--page-timeout", "300"]);
    assert_eq!(ran.code, Some(1), "{}", ran.describe());
    assert!(
        ran.stderr.contains("without its count (siz2)"),
        "{}",
        ran.describe()
    );
    // a count over our cap of 100,000 cannot be: 65,535 is the most siz2 holds, so the
    // cap is the page count here: a drip of one new server every 200 ms, past the deadline
    let drip = FakeUdp::start(|sock, from, d| {
        if Request::decode(d) == Ok(Request::Count) {
            let _ = sock.send_to(&tw_count(65_535), from);
            // 3 s of it: longer than the run's deadline
            for i in 0..15u8 {
                std::thread::sleep(Duration::from_millis(200));
                if sock.send_to(&tw_page(i, 1), from).is_err() {
                    return;
                }
            }
        }
    });
    let ran = ogp_list(&[&drip.target(), "--tw", "--timeout", "2000"]);
    assert_eq!(ran.code, Some(1), "{}", ran.describe());
    assert!(
        ran.stderr
            .contains("did not end within the deadline of 2000 ms"),
        "{}",
        ran.describe()
    );
    assert!(ran.took < Duration::from_secs(10), "{}", ran.describe());
    // garbage only: asked three times, then no answer
    let junk = FakeUdp::start(|sock, from, _| {
        let _ = sock.send_to(
            b"\xff\xff\xff\xff\xff\xff\xff\xff\xff\xfflis2\x01\x02",
            from,
        );
        let _ = sock.send_to(b"\xff\xff\xff\xff\xff\xff\xff\xff\xff\xffsiz2", from);
    });
    let ran = ogp_list(&[&junk.target(), "--tw", "--page-timeout", "200"]);
    assert_eq!(ran.code, Some(1), "{}", ran.describe());
    assert!(ran.stdout.is_empty(), "{}", ran.describe());
    assert!(
        ran.stderr
            .contains("no answer to the request for page 1 (3 attempts"),
        "{}",
        ran.describe()
    );
}

/// A 0.7 master's answer: the 0.6 datagram `d06` in a connectionless packet to `to`.
fn tw7(d06: &[u8], to: u32) -> Vec<u8> {
    let mut d = vec![0x21];
    d.extend_from_slice(&to.to_be_bytes());
    d.extend_from_slice(&0x0bad_cafe_u32.to_be_bytes());
    d.extend_from_slice(&d06[6..]);
    d
}

/// Teeworlds 0.7 masters (`ogp list --tw7`): the token handshake first. An honest one
/// (our token back, then the count and a page to our token) is read to its count; one
/// that never answers the 520-byte handshake, one that answers it with endless new
/// tokens and then nothing to our token, one whose pages go to another token, and one
/// whose count the pages never reach: each a one-line error, exit 1, by the page
/// timeouts, never a short list passed off as whole.
#[test]
fn tw7_silent_handshakes_wrong_tokens_and_lying_counts_end_with_an_error() {
    use ogp_proto::master::teemaster::Request;
    use ogp_proto::master::teemaster7::{encode_token_reply, Message};
    // `liar`: how the answers lie (0 honest, 1 another token, 2 a count of 500)
    let fake = |liar: u8| {
        FakeUdp::start(move |sock, from, d| match Message::decode(d) {
            Ok(Message::TokenRequest { theirs }) => {
                let mut r = Vec::new();
                encode_token_reply(theirs, 0x1234_5678, &mut r);
                let _ = sock.send_to(&r, from);
            }
            Ok(Message::Request {
                to: 0x1234_5678,
                from: theirs,
                request,
            }) => {
                let to = if liar == 1 { theirs ^ 1 } else { theirs };
                let d06 = match request {
                    Request::Count => tw_count(if liar == 2 { 500 } else { 3 }),
                    Request::List => tw_page(1, 3),
                };
                let _ = sock.send_to(&tw7(&d06, to), from);
            }
            _ => {}
        })
    };
    let honest = fake(0);
    let ran = ogp_list(&[&honest.target(), "--tw7"]);
    assert_eq!(ran.code, Some(0), "{}", ran.describe());
    assert_eq!(
        lines(&ran),
        [
            "teeworlds7 127.0.1.1:8303",
            "teeworlds7 127.0.1.2:8303",
            "teeworlds7 127.0.1.3:8303"
        ],
        "{}",
        ran.describe()
    );
    assert!(ran.took < Duration::from_secs(2), "{}", ran.describe());
    // the 0.6 protocol asked of a 0.7 master: no answer
    let ran = ogp_list(&[&honest.target(), "--tw", "--page-timeout", "200"]);
    assert_eq!(ran.code, Some(1), "{}", ran.describe());
    // no token ever: three handshakes, then a clear error
    let silent = FakeUdp::start(|_, _, _| {});
    let ran = ogp_list(&[&silent.target(), "--tw7", "--page-timeout", "200"]);
    assert_eq!(ran.code, Some(1), "{}", ran.describe());
    assert!(
        ran.stderr
            .contains("no answer to the token handshake (3 attempts"),
        "{}",
        ran.describe()
    );
    assert_eq!(ran.stderr.lines().count(), 1, "{}", ran.describe());
    // a new token for every datagram, and junk: the handshake once, then no answer
    let flood = FakeUdp::start(|sock, from, d| {
        let mut r = Vec::new();
        for i in 0..50u32 {
            r.clear();
            let theirs = match Message::decode(d) {
                Ok(Message::TokenRequest { theirs }) => theirs,
                Ok(Message::Request { from, .. }) => from,
                _ => 0,
            };
            encode_token_reply(theirs, i, &mut r);
            let _ = sock.send_to(&r, from);
            let _ = sock.send_to(b"\x21junk", from);
        }
    });
    let ran = ogp_list(&[&flood.target(), "--tw7", "--page-timeout", "200"]);
    assert_eq!(ran.code, Some(1), "{}", ran.describe());
    assert!(ran.stdout.is_empty(), "{}", ran.describe());
    assert!(
        ran.stderr
            .contains("no answer to the request for page 1 (3 attempts"),
        "{}",
        ran.describe()
    );
    // pages to another token are not ours
    let other = fake(1);
    let ran = ogp_list(&[&other.target(), "--tw7", "--page-timeout", "200"]);
    assert_eq!(ran.code, Some(1), "{}", ran.describe());
    assert!(ran.stdout.is_empty(), "{}", ran.describe());
    // a count the pages never reach
    let liar = fake(2);
    let ran = ogp_list(&[&liar.target(), "--tw7", "--page-timeout", "300"]);
    assert_eq!(ran.code, Some(1), "{}", ran.describe());
    assert_eq!(lines(&ran).len(), 3, "{}", ran.describe());
    assert!(
        ran.stderr
            .contains("the list stopped after 3 of the 500 servers its master counted"),
        "{}",
        ran.describe()
    );
}

/// `0.0.0.0:5` and other entries that are no server used to be printed as servers.
#[test]
fn udp_invalid_entries_are_skipped_with_a_warning() {
    let master = FakeUdp::start(|sock, from, _| {
        let servers = [
            v4([0, 0, 0, 0], 5),
            v4([10, 0, 0, 1], 0),
            v4([127, 0, 0, 1], 27015),
            v4([224, 0, 0, 1], 27015),
            v4([255, 255, 255, 255], 27015),
        ];
        let _ = sock.send_to(&page(&servers, true), from);
    });
    let ran = ogp_list(&[&master.target()]);
    assert_eq!(ran.code, Some(0), "{}", ran.describe());
    assert_eq!(lines(&ran), ["a2s 127.0.0.1:27015"], "{}", ran.describe());
    for entry in [
        "0.0.0.0:5",
        "10.0.0.1:0",
        "224.0.0.1:27015",
        "255.255.255.255:27015",
    ] {
        assert!(
            ran.stderr.contains(&format!("skipped the entry {entry}: ")),
            "{entry}: {}",
            ran.describe()
        );
    }
}

/// A QuakeWorld answer page (`FF FF FF FF d \n` and 6-byte entries) of `n` addresses
/// from `10.0.0.0 + from`.
fn qw_page(from: u32, n: u32) -> Vec<u8> {
    let servers: Vec<SocketAddr> = (from..from + n)
        .map(|i| SocketAddr::from((Ipv4Addr::from(0x0a00_0000 + i), 27500)))
        .collect();
    let mut d = Vec::new();
    ogp_proto::master::qwmaster::encode_page(&servers, &mut d);
    d
}

/// `ogp list --qw` reads a QuakeWorld master: `c\n`, answered by one short page, whose
/// entries that are no server are skipped with a warning.
#[test]
fn qw_list_reads_a_page_and_skips_invalid_entries() {
    let master = FakeUdp::start(|sock, from, d| {
        if d == b"c\n" {
            let mut p = qw_page(1, 2);
            p.extend_from_slice(&[0, 0, 0, 0, 0, 5]);
            let _ = sock.send_to(&p, from);
        }
    });
    let ran = ogp_list(&[&master.target(), "--qw", "--json"]);
    assert_eq!(ran.code, Some(0), "{}", ran.describe());
    assert_eq!(
        lines(&ran),
        [
            r#"{"addr":"10.0.0.1:27500","protocols":["quakeworld"]}"#,
            r#"{"addr":"10.0.0.2:27500","protocols":["quakeworld"]}"#
        ],
        "{}",
        ran.describe()
    );
    assert!(
        ran.stderr.contains("skipped the entry 0.0.0.0:5: "),
        "{}",
        ran.describe()
    );
}

/// A lying QuakeWorld master: full pages of new addresses without end (the list has no
/// end marker, so only the caps stop it), and one that answers nothing but pages cut
/// short and junk. Each ends with a one-line error and exit 1, in bounded time.
#[test]
fn qw_lying_masters_are_cut_by_the_caps() {
    let full = ogp_proto::master::qwmaster::ENTRIES_PER_PAGE as u32;
    // a page every millisecond for up to 6 s: never silent for a page timeout (in 3 s a
    // loaded machine read only 81,664 of them, under the 100,000-server cap, and the list
    // then ended quietly)
    let endless = FakeUdp::start(move |sock, from, _| {
        let t = Instant::now();
        for i in 0.. {
            if t.elapsed() > Duration::from_secs(6) {
                break;
            }
            let _ = sock.send_to(&qw_page(i * full, full), from);
            std::thread::sleep(Duration::from_millis(1));
        }
    });
    let t = Instant::now();
    let ran = ogp_list(&[&endless.target(), "--qw", "--timeout", "10000"]);
    assert_eq!(ran.code, Some(1), "{}", ran.describe());
    assert!(
        ran.stderr.contains("more than 100000 servers")
            || ran.stderr.contains("within the deadline"),
        "{}",
        ran.describe()
    );
    assert!(t.elapsed() < Duration::from_secs(15), "{:?}", t.elapsed());
    let lying = FakeUdp::start(|sock, from, _| {
        let mut cut = qw_page(0, 3);
        cut.pop();
        let _ = sock.send_to(&cut, from);
        let _ = sock.send_to(b"\xff\xff\xff\xffd", from);
        let _ = sock.send_to(b"\xff\xff\xff\xffn\\hostname\\x\n", from);
    });
    let ran = ogp_list(&[&lying.target(), "--qw", "--page-timeout", "300"]);
    assert_eq!(ran.code, Some(1), "{}", ran.describe());
    assert!(ran.stdout.is_empty(), "{}", ran.describe());
    assert!(
        ran.stderr
            .contains("no answer to the request for page 1 (3 attempts"),
        "{}",
        ran.describe()
    );
}

// ---------------------------------------------------------------------------------------
// A fake HTTP master

/// An HTTP/1.1 server on 127.0.0.1 that answers each request with what `answer` writes
/// (given the request's target and how many requests came before), one connection at a
/// time, until dropped.
struct FakeHttp {
    addr: SocketAddr,
    stop: Arc<AtomicBool>,
    requests: Arc<AtomicUsize>,
    thread: Option<JoinHandle<()>>,
}

impl FakeHttp {
    fn start(answer: impl Fn(&str, usize, &mut TcpStream) + Send + 'static) -> Self {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let addr = listener.local_addr().unwrap();
        let stop = Arc::new(AtomicBool::new(false));
        let requests = Arc::new(AtomicUsize::new(0));
        let (flag, count) = (Arc::clone(&stop), Arc::clone(&requests));
        let thread = std::thread::spawn(move || {
            for conn in listener.incoming() {
                if flag.load(Ordering::Relaxed) {
                    break;
                }
                let Ok(mut conn) = conn else { continue };
                conn.set_read_timeout(Some(Duration::from_secs(10)))
                    .unwrap();
                // requests on this connection, one after another
                loop {
                    let mut head = Vec::new();
                    let mut byte = [0u8; 1];
                    while !head.ends_with(b"\r\n\r\n") && head.len() < 65536 {
                        match conn.read(&mut byte) {
                            Ok(1) => head.push(byte[0]),
                            _ => break,
                        }
                    }
                    if !head.ends_with(b"\r\n\r\n") {
                        break;
                    }
                    let head = String::from_utf8_lossy(&head).into_owned();
                    let target = head.split(' ').nth(1).unwrap_or("").to_owned();
                    let n = count.fetch_add(1, Ordering::Relaxed);
                    answer(&target, n, &mut conn);
                }
            }
        });
        Self {
            addr,
            stop,
            requests,
            thread: Some(thread),
        }
    }

    fn url(&self) -> String {
        format!("http://{}", self.addr)
    }

    fn requests(&self) -> usize {
        self.requests.load(Ordering::Relaxed)
    }
}

impl Drop for FakeHttp {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::Relaxed);
        let _ = TcpStream::connect(self.addr); // wakes the accept
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}

/// Writes a 200 answer with a JSON body.
fn json_answer(conn: &mut TcpStream, body: &str) {
    let _ = write!(
        conn,
        "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: {}\r\n\r\n{body}",
        body.len()
    );
}

/// `ogp list ARGS` like [`ogp_list`], also watching its peak resident set (`VmHWM` in
/// `/proc/PID/status`, KiB) while it runs.
fn ogp_list_peak_rss(args: &[&str]) -> (Ran, u64) {
    let t = Instant::now();
    let mut child = KillOnDrop(
        Command::new(BIN)
            .arg("list")
            .args(args)
            .env_remove("OGP_LOG")
            .env_remove("RUST_LOG")
            .stdin(std::process::Stdio::null())
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::piped())
            .spawn()
            .unwrap(),
    );
    let mut out = child.0.stdout.take().unwrap();
    let mut err = child.0.stderr.take().unwrap();
    let out = std::thread::spawn(move || {
        let mut v = Vec::new();
        let _ = out.read_to_end(&mut v);
        v
    });
    let err = std::thread::spawn(move || {
        let mut v = String::new();
        let _ = err.read_to_string(&mut v);
        v
    });
    let status = format!("/proc/{}/status", child.0.id());
    let mut peak = 0u64;
    let code = loop {
        let hwm = std::fs::read_to_string(&status)
            .ok()
            .and_then(|s| {
                s.lines()
                    .find_map(|l| l.strip_prefix("VmHWM:"))
                    .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
            })
            .unwrap_or(0);
        peak = peak.max(hwm);
        if let Some(s) = child.0.try_wait().unwrap() {
            break s.code();
        }
        assert!(t.elapsed() < LIMIT, "ogp list {args:?} did not finish");
        std::thread::sleep(Duration::from_millis(10));
    };
    let ran = Ran {
        code,
        stdout: out.join().unwrap(),
        stderr: err.join().unwrap(),
        took: t.elapsed(),
    };
    (ran, peak)
}

/// A 60 MB body of `{"servers":[0,0,…]}` used to take 2.17 GB and print 30 million
/// junk lines, exit 0. Now a page is read and parsed only up to 8 MiB: a clear error,
/// nothing printed, and the rest of the body never read.
#[test]
fn http_huge_junk_body_is_refused_in_bounded_memory() {
    const BODY: usize = 60 << 20;
    let written = Arc::new(AtomicUsize::new(0));
    let counter = Arc::clone(&written);
    let master = FakeHttp::start(move |_, _, conn| {
        let _ = write!(
            conn,
            "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: {BODY}\r\n\r\n"
        );
        let head = b"{\"servers\":[";
        let mut sent = head.len();
        if conn.write_all(head).is_err() {
            return;
        }
        let chunk = b"0,".repeat(32 * 1024);
        while sent + chunk.len() + 2 <= BODY {
            if conn.write_all(&chunk).is_err() {
                counter.store(sent, Ordering::Relaxed);
                return;
            }
            sent += chunk.len();
        }
        let tail = vec![b' '; BODY - sent - 2];
        let _ = conn.write_all(&tail);
        let _ = conn.write_all(b"0]");
        counter.store(BODY, Ordering::Relaxed);
        let _ = conn.shutdown(std::net::Shutdown::Write);
    });
    let (ran, peak) = ogp_list_peak_rss(&[&master.url()]);
    assert_eq!(ran.code, Some(1), "{}", ran.describe());
    assert!(ran.stdout.is_empty(), "{}", ran.describe());
    assert!(
        ran.stderr.contains("page 1 is larger than 8388608 bytes"),
        "{}",
        ran.describe()
    );
    eprintln!("60 MB junk body: ogp list peaked at {peak} KiB resident");
    assert!(peak < 100 * 1024, "ogp list peaked at {peak} KiB resident");
    drop(master); // joins the writer: `written` is final
    let w = written.load(Ordering::Relaxed);
    eprintln!("60 MB junk body: the master could write {w} bytes before ogp list closed");
    assert!(w < BODY / 2, "the master wrote {w} of {BODY} bytes");
}

/// The same cursor returned forever used to be followed for 10,000 pages of
/// duplicates. Now a page or a cursor seen before ends the run with an error.
#[test]
fn http_the_same_cursor_forever_is_a_loop() {
    // the same page each time
    let master = FakeHttp::start(|_, _, conn| {
        json_answer(
            conn,
            r#"{"servers":[{"addr":"127.0.0.1:27015","protocols":["ogp"]}],"next":"same"}"#,
        );
    });
    let ran = ogp_list(&[&master.url()]);
    assert_eq!(ran.code, Some(1), "{}", ran.describe());
    assert_eq!(lines(&ran), ["ogp 127.0.0.1:27015"], "{}", ran.describe());
    assert!(
        ran.stderr
            .contains("page 2: the same page came back again: the list loops"),
        "{}",
        ran.describe()
    );
    assert_eq!(master.requests(), 2);
    // new servers on each page, the same cursor
    let master = FakeHttp::start(|_, n, conn| {
        let body = format!(
            r#"{{"servers":[{{"addr":"127.0.0.1:{}","protocols":["ogp"]}}],"next":"same"}}"#,
            27015 + n
        );
        json_answer(conn, &body);
    });
    let ran = ogp_list(&[&master.url()]);
    assert_eq!(ran.code, Some(1), "{}", ran.describe());
    assert_eq!(
        lines(&ran),
        ["ogp 127.0.0.1:27015", "ogp 127.0.0.1:27016"],
        "{}",
        ran.describe()
    );
    assert!(
        ran.stderr
            .contains("page 2: the same cursor came back again"),
        "{}",
        ran.describe()
    );
    assert_eq!(master.requests(), 2);
}

/// Slow pages, each with a new cursor, used to be followed for up to 10,000 pages. Now
/// the run ends by `--timeout`.
#[test]
fn http_slow_endless_pages_end_by_the_deadline() {
    let master = FakeHttp::start(|_, n, conn| {
        std::thread::sleep(Duration::from_millis(700));
        let body = format!(
            r#"{{"servers":[{{"addr":"127.0.0.1:{}","protocols":["ogp"]}}],"next":"c{n}"}}"#,
            1000 + n
        );
        json_answer(conn, &body);
    });
    let ran = ogp_list(&[&master.url(), "--timeout", "3000"]);
    assert_eq!(ran.code, Some(1), "{}", ran.describe());
    let n = lines(&ran).len();
    assert!((1..=5).contains(&n), "{n} pages in 3 s of 700 ms each");
    eprintln!(
        "HTTP pages every 700 ms, --timeout 3000: {}",
        ran.describe()
    );
    assert!(
        ran.stderr
            .contains("the list did not end within the deadline of 3000 ms"),
        "{}",
        ran.describe()
    );
    assert_eq!(ran.stderr.lines().count(), 1, "{}", ran.describe());
    assert!(ran.took < Duration::from_secs(30), "{}", ran.describe());
}

/// Entries that are no server are skipped with a warning over HTTP too.
#[test]
fn http_invalid_entries_are_skipped_with_a_warning() {
    let master = FakeHttp::start(|_, _, conn| {
        json_answer(
            conn,
            r#"{"servers":[{"addr":"0.0.0.0:5","protocols":["ogp"]},{"addr":"127.0.0.1:27015","protocols":["ogp"]},{"addr":"127.0.0.1:0"},{"addr":"nonsense"}],"next":null}"#,
        );
    });
    let ran = ogp_list(&[&master.url()]);
    assert_eq!(ran.code, Some(0), "{}", ran.describe());
    assert_eq!(lines(&ran), ["ogp 127.0.0.1:27015"], "{}", ran.describe());
    for entry in ["0.0.0.0:5", "127.0.0.1:0", "nonsense"] {
        assert!(
            ran.stderr.contains(&format!("skipped the entry {entry}: ")),
            "{entry}: {}",
            ran.describe()
        );
    }
}

/// `ogp list --json` prints an HTTP master's items through the one JSON writer: a
/// hostile name's terminal controls come out escaped, and read back whole.
#[test]
fn http_json_items_escape_terminal_controls() {
    const NAME: &str = concat!("evil", terminal_controls!());
    let master = FakeHttp::start(|_, _, conn| {
        let body = serde_json::json!({
            "servers": [{"addr": "127.0.0.1:27015", "protocols": ["ogp"], "name": NAME}],
            "next": null,
        });
        json_answer(conn, &body.to_string());
    });
    let ran = ogp_list(&["--json", &master.url()]);
    assert_eq!(ran.code, Some(0), "{}", ran.describe());
    let out = String::from_utf8_lossy(&ran.stdout);
    assert_eq!(common::raw_controls(&out), 0, "{out}");
    let v: serde_json::Value = serde_json::from_str(out.lines().next().unwrap()).unwrap();
    assert_eq!(v["name"], NAME, "{v}");
}
