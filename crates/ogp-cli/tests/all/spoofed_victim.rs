//! A spoofer sending requests with a victim's address cannot silence the victim: end to
//! end, over loopback, against the real `ogp serve` process with its default limits (per
//! source: 20 answers/s, burst 40, for answers to a valid challenge; answers that prove
//! nothing but give a spoofer nothing either, challenges and answers no larger than their
//! request, only against the overall budget of 10,000/s). The same scenarios in simulated
//! time, against the sans-IO responder, are `ogp-proto/tests/protocols/spoofed_victim.rs`.
//!
//! Why no raw socket is needed: the responder keys every budget on the source IP alone
//! (the port plays no part), so on loopback a second ordinary UDP socket bound to the
//! victim's address is, for the responder, indistinguishable from an attacker forging the
//! victim's address: both deliver datagrams from that address that the victim never sent.
//! (A raw socket with `IP_HDRINCL` could also forge the victim's source port; it would
//! change nothing the responder looks at, so this test does without.) Loopback is all of
//! 127.0.0.0/8, so each case has an address of its own, 127.0.0.10 and up, and the cases
//! run at the same time (a server per protocol, so that each server's floods together stay
//! below its overall budget of 10,000 answers/s).
//!
//! `a_spoofer_on_the_victims_address_cannot_silence_it`: for A2S, OGP and GameSpy v3, at
//! 200 and at 2,000 spoofed datagrams/s, two victims:
//!
//! * **kept**: the victim obtained its challenge once, before the attack (as a server
//!   browser or a monitor holds one between queries);
//! * **fresh**: the victim asks for a fresh challenge before every request (as python-a2s,
//!   gamedig and qstat do): A2S: INFO, PLAYER and RULES each from its challenge request;
//!   OGP: the probe, then the query; GameSpy v3: `FE FD 09`, then the full query.
//!
//! Each sends a full query (A2S: INFO, PLAYER and RULES; OGP: the default query; GameSpy
//! v3: the full query) 60 times, every 150 ms for A2S (3 answers × 1/0.15 s = 20/s: its
//! whole own budget) and every 100 ms for the others; a query counts as answered when each
//! of its requests got its answer (the right kind, with the query's RequestID or session
//! id) within 500 ms. The spoofer, another socket on the victim's address, sends the
//! protocol's unchallenged request (A2S_INFO without a challenge, the OGP probe, GameSpy v3
//! `FE FD 09`) at the given rate from a thread, reading what comes back as it goes, from
//! before the victim's first query (once it has sent 0.4 s worth and been answered) until
//! its last.
//!
//! Asserted: at least 98% of the victim's queries answered (59 of 60); the spoofer really
//! flooded at about its rate; every datagram the spoofer's socket received at most 3 times
//! the size of the spoofed request, no more of them than it sent and no more than 3 times
//! the bytes it sent. At the end, each server's VmRSS is at most 64 MiB.
//!
//! The real client libraries as victims (with `OGP_INTEROP=1`, see
//! `ogp-testkit/src/interop.rs`): python-a2s (`a2s.info()`), gamedig (`protocol-valve`)
//! and qstat (`-a2s -R -P`, 10 runs at once), 10 queries each, without a spoofer and with one sending
//! A2S_INFO from 127.0.0.1 (their address) at 200/s and 2,000/s: every one answered
//! without the spoofer, at least 9 of 10 with it.
//!
//! Before the challenges were taken off the per-source budget, the spoofer's 200
//! datagrams/s kept the victim's budget of unproven answers (20/s) empty: the fresh
//! victims got 0 answers (python-a2s 0 of 10), and the first two misses end a case with
//! a failure. Before the budgets were split (proven answers apart), even the kept victim
//! got 0 of 11 in five of the six cases.

use crate::common;

use std::net::{Ipv4Addr, SocketAddr, UdpSocket};
use std::process::{Command, Stdio};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc;
use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use common::{free_port, KillOnDrop, TempDir, BIN};
use ogp_proto::a2s::request::Request as A2sRequest;
use ogp_proto::a2s::Message as A2sMessage;
use ogp_proto::gamespy3::reply::{decode_reply, Reply as Gs3Reply};
use ogp_proto::gamespy3::request::Request as Gs3Request;
use ogp_proto::ogp::Message as OgpMessage;

const STATE: &str = include_str!("../../../ogp-proto/tests/data/state.json");

/// The victim's queries per case: 98% of them is 59 of 60, one miss allowed.
const QUERIES: usize = 60;
/// Misses that still leave 98% answered.
const ALLOWED_MISSES: usize = QUERIES - (QUERIES * 98).div_ceil(100);
/// How long the victim waits for each answer.
const REPLY_WAIT: Duration = Duration::from_millis(500);
/// The victim starts once the flood has sent this long's worth of datagrams (and been
/// answered): under the old charging it had spent the address's budget by then.
const FLOOD_LEAD: Duration = Duration::from_millis(400);

// ------------------------------------------------------------------------------------
// The server

/// `ogp serve` on a free 127.0.0.1 port with its default rate limits.
struct Server {
    child: KillOnDrop,
    port: u16,
    log: std::path::PathBuf,
    _dir: TempDir,
}

impl Server {
    fn start() -> Self {
        let dir = TempDir::new("spoofed-victim");
        let state = dir.0.join("state.json");
        let log = dir.0.join("serve.log");
        std::fs::write(&state, STATE).unwrap();
        for _ in 0..5 {
            let port = free_port();
            let mut child = KillOnDrop(
                Command::new(BIN)
                    .args(["serve", "--state"])
                    .arg(&state)
                    .args(["--listen", &format!("127.0.0.1:{port}")])
                    .env("NO_COLOR", "1")
                    .env_remove("OGP_LOG")
                    .stdin(Stdio::null())
                    .stdout(Stdio::null())
                    .stderr(std::fs::File::create(&log).unwrap())
                    .spawn()
                    .expect("spawn ogp serve"),
            );
            // a probe every 200 ms until it answers (each try waits for the answer)
            let probe = socket(Ipv4Addr::LOCALHOST, port);
            let t = Instant::now();
            while t.elapsed() < Duration::from_secs(10) && child.0.try_wait().unwrap().is_none() {
                probe.send(&ogp_probe()).unwrap();
                let deadline = Instant::now() + Duration::from_millis(200);
                if recv_matching(&probe, deadline, |d| ogp_proto::ogp::decode(d).is_ok()) {
                    return Self {
                        child,
                        port,
                        log,
                        _dir: dir,
                    };
                }
            }
            eprintln!(
                "ogp serve on port {port} did not answer; log:\n{}",
                std::fs::read_to_string(&log).unwrap_or_default()
            );
        }
        panic!("ogp serve did not start");
    }

    fn log_text(&self) -> String {
        std::fs::read_to_string(&self.log).unwrap_or_default()
    }

    /// VmRSS of the process, in KiB.
    fn rss_kib(&self) -> u64 {
        let status = std::fs::read_to_string(format!("/proc/{}/status", self.child.0.id()))
            .expect("/proc/<pid>/status");
        status
            .lines()
            .find_map(|l| l.strip_prefix("VmRSS:"))
            .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
            .expect("a VmRSS line")
    }
}

/// A UDP socket on `ip` (a loopback address) connected to the server.
fn socket(ip: Ipv4Addr, port: u16) -> UdpSocket {
    let s = UdpSocket::bind((ip, 0)).unwrap();
    s.connect(("127.0.0.1", port)).unwrap();
    s
}

/// Reads datagrams until one satisfies `want` (true) or `deadline` passes (false); the
/// others are dropped.
fn recv_matching(sock: &UdpSocket, deadline: Instant, want: impl Fn(&[u8]) -> bool) -> bool {
    let mut buf = [0u8; 2048];
    // bounded: at most this many unwanted datagrams
    for _ in 0..1000 {
        let left = deadline.saturating_duration_since(Instant::now());
        if left.is_zero() {
            return false;
        }
        sock.set_read_timeout(Some(left)).unwrap();
        match sock.recv(&mut buf) {
            Ok(n) if want(&buf[..n]) => return true,
            Ok(_) => {}
            Err(_) => return false,
        }
    }
    false
}

/// Drops whatever is queued on the socket (the rest of a split answer, a late one).
fn drain(sock: &UdpSocket) {
    let mut buf = [0u8; 2048];
    sock.set_nonblocking(true).unwrap();
    for _ in 0..1000 {
        if sock.recv(&mut buf).is_err() {
            break;
        }
    }
    sock.set_nonblocking(false).unwrap();
}

/// Sends `request` and waits up to [`REPLY_WAIT`] for an answer `want` accepts.
fn ask(sock: &UdpSocket, request: &[u8], want: impl Fn(&[u8]) -> bool) -> bool {
    drain(sock);
    sock.send(request).unwrap();
    recv_matching(sock, Instant::now() + REPLY_WAIT, want)
}

/// Sends `request` and reads a value (a challenge) from the first answer `read` accepts.
fn ask_for<T: Copy>(
    sock: &UdpSocket,
    request: &[u8],
    read: impl Fn(&[u8]) -> Option<T>,
) -> Option<T> {
    let got = std::cell::Cell::new(None);
    ask(sock, request, |d| {
        got.set(read(d));
        got.get().is_some()
    });
    got.get()
}

// ------------------------------------------------------------------------------------
// The protocols

#[derive(Clone, Copy, Debug)]
enum Proto {
    A2s,
    Ogp,
    Gamespy3,
}

/// How the victim gets its challenges.
#[derive(Clone, Copy, Debug, PartialEq)]
enum Victim {
    /// Once, before the attack, then reused.
    Kept,
    /// Before every request.
    Fresh,
}

fn a2s(r: A2sRequest) -> Vec<u8> {
    let mut d = Vec::new();
    r.encode(&mut d);
    d
}

fn ogp_probe() -> Vec<u8> {
    vec![0xff, 0xff, 0xff, 0xff, b'O', b'G', b'P', 0, 3, 1, 0]
}

/// The session id of the victim's GameSpy v3 challenge request.
const GS3_SID: u32 = 0x0102_0304;

fn a2s_challenge_of(d: &[u8]) -> Option<u32> {
    match ogp_proto::a2s::decode(d).map(|d| d.message) {
        Ok(A2sMessage::Challenge(c)) => Some(c.challenge),
        _ => None,
    }
}

fn ogp_challenge_of(d: &[u8]) -> Option<u32> {
    match ogp_proto::ogp::decode(d) {
        Ok(p) if matches!(p.message, OgpMessage::Error(_)) => p.header.challenge,
        _ => None,
    }
}

fn gs3_challenge_of(sid: u32) -> impl Fn(&[u8]) -> Option<u32> {
    move |d| match decode_reply(d) {
        Ok(Gs3Reply::Challenge(c)) if c.session_id == sid => c.value(),
        _ => None,
    }
}

impl Proto {
    fn name(self) -> &'static str {
        match self {
            Self::A2s => "A2S",
            Self::Ogp => "OGP",
            Self::Gamespy3 => "GameSpy v3",
        }
    }

    /// What the spoofer sends: the protocol's request without a challenge.
    fn spoof(self) -> Vec<u8> {
        match self {
            Self::A2s => a2s(A2sRequest::info(None)),
            Self::Ogp => ogp_probe(),
            Self::Gamespy3 => Gs3Request::Challenge {
                session_id: 0x0a0b_0c0d,
            }
            .to_bytes(),
        }
    }

    /// Time between the starts of the victim's queries: A2S spends 3 answers of the
    /// victim's own budget per query, 20/s at 150 ms (the whole budget).
    fn period(self) -> Duration {
        match self {
            Self::A2s => Duration::from_millis(150),
            Self::Ogp | Self::Gamespy3 => Duration::from_millis(100),
        }
    }

    /// The victim's challenge, asked for once (before any flood: a few tries).
    fn challenge(self, sock: &UdpSocket) -> u32 {
        for _ in 0..3 {
            let got = match self {
                Self::A2s => ask_for(sock, &a2s(A2sRequest::info(None)), a2s_challenge_of),
                Self::Ogp => ask_for(sock, &ogp_probe(), ogp_challenge_of),
                Self::Gamespy3 => {
                    let hs = Gs3Request::Challenge {
                        session_id: GS3_SID,
                    };
                    ask_for(sock, &hs.to_bytes(), gs3_challenge_of(GS3_SID))
                }
            };
            if let Some(c) = got {
                return c;
            }
        }
        panic!("{}: no challenge", self.name());
    }

    /// One full query (number `n` of the run), with the kept `challenge` or (none) a
    /// fresh one asked for before each request: whether every request got its answer
    /// within [`REPLY_WAIT`].
    fn query(self, sock: &UdpSocket, challenge: Option<u32>, n: u32) -> bool {
        match self {
            Self::A2s => {
                type Make = fn(Option<u32>) -> A2sRequest;
                type Want = fn(&A2sMessage) -> bool;
                let steps: [(Make, Want); 3] = [
                    (A2sRequest::info, |m| matches!(m, A2sMessage::Info(_))),
                    (A2sRequest::player, |m| matches!(m, A2sMessage::Players(_))),
                    (A2sRequest::rules, |m| matches!(m, A2sMessage::Rules(_))),
                ];
                steps.into_iter().all(|(make, want)| {
                    let c = challenge.or_else(|| ask_for(sock, &a2s(make(None)), a2s_challenge_of));
                    c.is_some() && ask(sock, &a2s(make(c)), |d| a2s_answer(d, want))
                })
            }
            Self::Ogp => {
                let Some(c) = challenge.or_else(|| ask_for(sock, &ogp_probe(), ogp_challenge_of))
                else {
                    return false;
                };
                let mut opts = ogp_proto::ogp::client::QueryOptions::default();
                opts.challenge = Some(c);
                let m = ogp_proto::ogp::client::QueryMachine::new(
                    opts,
                    ogp_proto::client::Timing::default(),
                    1000 + n,
                    Instant::now(),
                );
                let mut q = Vec::new();
                m.encode_query(&mut q);
                ask(sock, &q, |d| match ogp_proto::ogp::decode(d) {
                    Ok(p) => {
                        p.header.request_id == Some(m.request_id())
                            && matches!(
                                p.message,
                                OgpMessage::Answer(_) | OgpMessage::Fragment { .. }
                            )
                    }
                    Err(_) => false,
                })
            }
            Self::Gamespy3 => {
                let sid = 0x2000_0000 + n;
                let hs = Gs3Request::Challenge { session_id: sid }.to_bytes();
                let Some(c) = challenge.or_else(|| ask_for(sock, &hs, gs3_challenge_of(sid)))
                else {
                    return false;
                };
                let q = Gs3Request::full(sid, Some(c)).to_bytes();
                ask(sock, &q, |d| match decode_reply(d) {
                    Ok(Gs3Reply::Packet(p)) => p.session_id == sid,
                    Ok(Gs3Reply::Keys { session_id, .. }) => session_id == sid,
                    _ => false,
                })
            }
        }
    }
}

/// An A2S answer of the kind `kind` accepts, or a fragment of a split one (one datagram
/// per request is enough); never a challenge.
fn a2s_answer(d: &[u8], kind: impl Fn(&A2sMessage) -> bool) -> bool {
    match ogp_proto::a2s::decode(d) {
        Ok(x) => matches!(x.message, A2sMessage::Fragment(_)) || kind(&x.message),
        Err(_) => false,
    }
}

// ------------------------------------------------------------------------------------
// The attack

/// What the spoofer sent and what it got back.
#[derive(Debug, Default)]
struct Flood {
    sent: u64,
    time: Duration,
    replies: u64,
    reply_bytes: u64,
    largest_reply: usize,
}

/// Sends `datagram` from `sock` at `rate` per second (paced every 2 ms, catching up at
/// most 50 ms at a time) until `stop` or 60 s, reading what comes back between sends.
/// Sends on `ready` once it has sent [`FLOOD_LEAD`]'s worth and got an answer.
fn flood(
    sock: UdpSocket,
    datagram: Vec<u8>,
    rate: u32,
    stop: Arc<AtomicBool>,
    ready: mpsc::Sender<()>,
) -> JoinHandle<Flood> {
    std::thread::spawn(move || {
        sock.set_nonblocking(true).unwrap();
        let lead = (FLOOD_LEAD.as_secs_f64() * f64::from(rate)) as u64;
        let mut ready = Some(ready);
        let t0 = Instant::now();
        let mut f = Flood::default();
        let mut buf = [0u8; 2048];
        while !stop.load(Ordering::Relaxed) && t0.elapsed() < Duration::from_secs(60) {
            let due = (t0.elapsed().as_secs_f64() * f64::from(rate)) as u64 + 1;
            let batch = due.saturating_sub(f.sent).min(u64::from(rate / 20).max(1));
            for _ in 0..batch {
                let _ = sock.send(&datagram);
            }
            f.sent += batch;
            // bounded: the socket holds a few hundred at most
            for _ in 0..10_000 {
                let Ok(n) = sock.recv(&mut buf) else { break };
                f.replies += 1;
                f.reply_bytes += n as u64;
                f.largest_reply = f.largest_reply.max(n);
            }
            if f.sent >= lead && f.replies > 0 {
                if let Some(r) = ready.take() {
                    let _ = r.send(());
                }
            }
            std::thread::sleep(Duration::from_millis(2));
        }
        f.time = t0.elapsed();
        // what was still on its way
        sock.set_nonblocking(false).unwrap();
        sock.set_read_timeout(Some(Duration::from_millis(100)))
            .unwrap();
        for _ in 0..10_000 {
            let Ok(n) = sock.recv(&mut buf) else { break };
            f.replies += 1;
            f.reply_bytes += n as u64;
            f.largest_reply = f.largest_reply.max(n);
        }
        f
    })
}

/// Starts a flood of `datagram` at `rate` from `ip` and returns once it is under way (it
/// has sent [`FLOOD_LEAD`]'s worth and been answered at least once), with its stop flag.
fn start_flood(
    ip: Ipv4Addr,
    port: u16,
    datagram: Vec<u8>,
    rate: u32,
) -> (JoinHandle<Flood>, Arc<AtomicBool>, SocketAddr) {
    let spoofer = socket(ip, port);
    let addr = spoofer.local_addr().unwrap();
    let stop = Arc::new(AtomicBool::new(false));
    let (tx, rx) = mpsc::channel();
    let h = flood(spoofer, datagram, rate, Arc::clone(&stop), tx);
    rx.recv_timeout(Duration::from_secs(30))
        .expect("the flood was never answered");
    (h, stop, addr)
}

/// One case: a protocol, a victim, a flood rate, the loopback address both use, and the
/// server.
#[derive(Clone, Copy, Debug)]
struct Case {
    proto: Proto,
    victim: Victim,
    rate: u32,
    ip: Ipv4Addr,
    port: u16,
}

struct Run {
    case: Case,
    answered: usize,
    asked: usize,
    flood: Flood,
}

fn attack(case: Case) -> Run {
    let victim = socket(case.ip, case.port);
    let challenge = match case.victim {
        Victim::Kept => Some(case.proto.challenge(&victim)),
        Victim::Fresh => None,
    };
    let (flooding, stop, spoofer) = start_flood(case.ip, case.port, case.proto.spoof(), case.rate);
    // the "forged" source: the victim's address, another port
    let v = victim.local_addr().unwrap();
    assert_eq!(v.ip(), spoofer.ip());
    assert_ne!(v.port(), spoofer.port());

    let (mut answered, mut asked) = (0, 0);
    let mut start = Instant::now();
    for n in 0..QUERIES {
        if n > 0 {
            // every period, never catching up (the victim stays within its budget)
            let next = start + case.proto.period();
            std::thread::sleep(next.saturating_duration_since(Instant::now()));
            start = Instant::now();
        }
        asked += 1;
        answered += usize::from(case.proto.query(&victim, challenge, n as u32));
        if asked - answered > ALLOWED_MISSES {
            break; // below 98% already: fail now rather than after 60 timeouts
        }
    }
    stop.store(true, Ordering::Relaxed);
    let flood = flooding.join().unwrap();
    Run {
        case,
        answered,
        asked,
        flood,
    }
}

#[test]
fn a_spoofer_on_the_victims_address_cannot_silence_it() {
    let t = Instant::now();
    // a server per protocol, so that each one's floods together (2 × 2,000/s + 2 ×
    // 200/s) stay below its overall budget for unproven answers (10,000/s), and below
    // the share of it that one of its two answering threads holds (5,000/s), whichever
    // thread each address is steered to
    let servers = [Server::start(), Server::start(), Server::start()];
    let mut cases = Vec::new();
    for (k, proto) in [Proto::A2s, Proto::Ogp, Proto::Gamespy3]
        .into_iter()
        .enumerate()
    {
        for victim in [Victim::Kept, Victim::Fresh] {
            for rate in [200, 2000] {
                let ip = Ipv4Addr::new(127, 0, 0, 10 + cases.len() as u8);
                cases.push(Case {
                    proto,
                    victim,
                    rate,
                    ip,
                    port: servers[k].port,
                });
            }
        }
    }
    let runs: Vec<Run> = std::thread::scope(|scope| {
        let handles: Vec<_> = cases
            .iter()
            .map(|&case| scope.spawn(move || attack(case)))
            .collect();
        handles.into_iter().map(|h| h.join().unwrap()).collect()
    });

    let mut failures = Vec::new();
    for r in &runs {
        let Case {
            proto,
            victim,
            rate,
            ..
        } = r.case;
        let f = &r.flood;
        let secs = f.time.as_secs_f64();
        let spoof_len = proto.spoof().len();
        let sent_bytes = f.sent * spoof_len as u64;
        eprintln!(
            "{} {victim:?} victim, spoofed at {rate}/s ({} sent in {secs:.1} s, {:.0}/s): \
             victim {} of {} queries answered ({:.1}%); the spoofer's socket got {} replies, \
             {} bytes for {sent_bytes} sent ({:.2}×), largest {} B ({:.2}× the {spoof_len} B \
             request)",
            proto.name(),
            f.sent,
            f.sent as f64 / secs,
            r.answered,
            r.asked,
            100.0 * r.answered as f64 / r.asked as f64,
            f.replies,
            f.reply_bytes,
            f.reply_bytes as f64 / sent_bytes as f64,
            f.largest_reply,
            f.largest_reply as f64 / spoof_len as f64,
        );
        let what = format!("{} {victim:?} at {rate}/s", proto.name());
        if !(r.asked == QUERIES && r.answered + ALLOWED_MISSES >= QUERIES) {
            failures.push(format!(
                "{what}: only {} of {} of the victim's queries answered",
                r.answered, r.asked
            ));
        }
        // the spoofer really flooded at about the rate
        if (f.sent as f64) < 0.9 * f64::from(rate) * secs {
            failures.push(format!(
                "{what}: only {} spoofed datagrams sent in {secs:.1} s",
                f.sent
            ));
        }
        // the server answered some (the datagrams are valid requests), never more than
        // one answer per request, none larger than 3× it
        if f.replies == 0 {
            failures.push(format!("{what}: no answer to the spoofed requests"));
        }
        if f.replies > f.sent || f.reply_bytes > 3 * sent_bytes || f.largest_reply > 3 * spoof_len {
            failures.push(format!(
                "{what}: {} answers ({} B, largest {} B) to {} spoofed requests of {spoof_len} B",
                f.replies, f.reply_bytes, f.largest_reply, f.sent
            ));
        }
    }
    assert!(
        failures.is_empty(),
        "{}\nlogs:\n{}",
        failures.join("\n"),
        servers
            .iter()
            .map(Server::log_text)
            .collect::<Vec<_>>()
            .join("\n")
    );
    for s in &servers {
        let kib = s.rss_kib();
        eprintln!("ogp serve VmRSS after the floods: {kib} KiB");
        assert!(kib <= 64 * 1024, "VmRSS {kib} KiB");
    }
    eprintln!("whole test {:.1?}", t.elapsed());
}

// ------------------------------------------------------------------------------------
// The real client libraries as victims (OGP_INTEROP=1)

/// Victim queries per client and condition.
const CLIENT_QUERIES: usize = 10;

/// What a client got, without a spoofer and with one at each rate.
fn spoofed_client(name: &str, ask: impl Fn(u16) -> (usize, usize, String)) {
    let mut lines = Vec::new();
    let mut failures = Vec::new();
    for rate in [None, Some(200u32), Some(2000)] {
        // a server of its own per condition: the client's own budget starts whole
        let server = Server::start();
        let flooding = rate.map(|rate| {
            start_flood(
                Ipv4Addr::LOCALHOST,
                server.port,
                a2s(A2sRequest::info(None)),
                rate,
            )
        });
        let (answered, asked, errors) = ask(server.port);
        let flood = flooding.map(|(h, stop, _)| {
            stop.store(true, Ordering::Relaxed);
            h.join().unwrap()
        });
        let label = rate.map_or("no spoofer".to_string(), |r| format!("spoofed at {r}/s"));
        lines.push(format!(
            "{name}, {label}: {answered} of {asked} answered{}",
            flood.as_ref().map_or(String::new(), |f| format!(
                " (the spoofer sent {} in {:.1} s, got {} replies)",
                f.sent,
                f.time.as_secs_f64(),
                f.replies
            ))
        ));
        let need = if rate.is_some() { asked - 1 } else { asked };
        if asked != CLIENT_QUERIES || answered < need {
            failures.push(format!(
                "{name}, {label}: {answered} of {asked} answered; errors: {errors}\nlog:\n{}",
                server.log_text()
            ));
        }
    }
    for l in &lines {
        eprintln!("{l}");
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

/// Reads `{"answered": n, "asked": m, "errors": [...]}` from a client script's output.
fn counts(ran: &common::Ran, client: &str) -> (usize, usize, String) {
    let v = common::parse_json(ran, client, "spoofed");
    let n = |k: &str| v[k].as_u64().unwrap_or(0) as usize;
    (n("answered"), n("asked"), v["errors"].to_string())
}

#[test]
fn python_a2s_is_answered_while_a_spoofer_uses_its_address() {
    if !common::enabled("python_a2s_is_answered_while_a_spoofer_uses_its_address") {
        return;
    }
    let py = common::venv_python("a2s", "python-a2s", common::PYTHON_A2S);
    let script = common::script("tests/interop/a2s_repeat.py");
    spoofed_client("python-a2s a2s.info()", |port| {
        let ran = common::run(
            Command::new(&py)
                .arg(&script)
                .arg(port.to_string())
                .arg(CLIENT_QUERIES.to_string())
                .arg("1.0"),
            common::CLIENT_LIMIT,
        );
        counts(&ran, "python-a2s")
    });
}

#[test]
fn gamedig_is_answered_while_a_spoofer_uses_its_address() {
    if !common::enabled("gamedig_is_answered_while_a_spoofer_uses_its_address") {
        return;
    }
    let js = common::gamedig_js();
    let dir = js.parent().and_then(|b| b.parent()).unwrap().to_path_buf();
    let script = common::script("tests/interop/gamedig_repeat.mjs");
    spoofed_client("gamedig protocol-valve", |port| {
        let ran = common::run(
            Command::new("node")
                .arg(&script)
                .arg(&dir)
                .arg(port.to_string())
                .arg(CLIENT_QUERIES.to_string()),
            common::CLIENT_LIMIT,
        );
        counts(&ran, "gamedig")
    });
}

#[test]
fn qstat_is_answered_while_a_spoofer_uses_its_address() {
    if !common::enabled("qstat_is_answered_while_a_spoofer_uses_its_address") {
        return;
    }
    // qstat takes a second a run however fast the answers come (its retry timer), so
    // the 10 runs go at once: 30 answers to valid challenges, within the address's burst
    // of 40; each run asks for its own fresh challenges
    spoofed_client("qstat -a2s -R -P (10 at once)", |port| {
        let runs: Vec<common::Ran> = std::thread::scope(|scope| {
            let handles: Vec<_> = (0..CLIENT_QUERIES)
                .map(|_| scope.spawn(move || common::qstat_run("-a2s", port)))
                .collect();
            handles.into_iter().map(|h| h.join().unwrap()).collect()
        });
        let mut answered = 0;
        let mut errors = Vec::new();
        for ran in &runs {
            let v = common::parse_json(ran, "qstat", "spoofed");
            match common::str_of(&v[0]["status"]).as_deref() {
                Some("online") => answered += 1,
                other => errors.push(format!("{other:?}")),
            }
        }
        (answered, CLIENT_QUERIES, errors.join(", "))
    });
}
