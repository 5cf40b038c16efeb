//! A GameSpy v3 query of a real Battlefield 2 reply, by our client and by gamedig's (the
//! one Rust crate that reads GameSpy v3), for counting the instructions each spends.
//!
//! gamedig parses a reply only inside its socket query (its parsers are crate-private),
//! so the comparison is of whole queries: both clients send the `09` handshake and the
//! full information request from a fresh socket, receive the challenge and the three
//! packets of `gameq-bf2-1` (64 players, 2 teams) from a replay server in another
//! process, and decode them into their models. User-space instructions of the client
//! process are counted by cachegrind (the kernel's share of the socket calls is not);
//! the difference of two runs of different lengths cancels the start-up.
//!
//! ```sh
//! scripts/gs3-peer.sh          # builds, runs both under cachegrind, prints the ratio
//! ```
//!
//! By hand: `gs3_peer serve` prints its port and replays until standard input closes;
//! `gs3_peer ours|gamedig PORT N` runs N queries and checks every answer.

use std::hint::black_box;
use std::io::{BufRead as _, Write as _};
use std::net::{Ipv4Addr, SocketAddr, UdpSocket};
use std::time::{Duration, Instant};

use ogp_proto::client::{QueryDriver, Timing};
use ogp_proto::gamespy3::client::{QueryMachine, QueryOptions};

const CAPTURE: &str = include_str!("../../ogp-proto/tests/data/gamespy3/gameq-bf2-1.json");
/// Players and teams of the capture (numplayers 54), which our every answer must have.
const PLAYERS: usize = 54;
const TEAMS: usize = 2;

fn packets() -> Vec<Vec<u8>> {
    ogp_testkit::capture_datagrams(CAPTURE, "gs3")
}

/// Answers `09` with a challenge and `00` with the capture's packets, each under the
/// request's session id, until standard input closes.
fn serve() {
    let packets = packets();
    let sock = UdpSocket::bind((Ipv4Addr::LOCALHOST, 0)).expect("bind");
    sock.set_read_timeout(Some(Duration::from_millis(100)))
        .expect("timeout");
    println!("{}", sock.local_addr().expect("addr").port());
    std::io::stdout().flush().expect("stdout");
    let (done_tx, done_rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        for _ in std::io::stdin().lock().lines() {}
        let _ = done_tx.send(());
    });
    let mut buf = [0u8; 64];
    let mut out = Vec::with_capacity(1500);
    while done_rx.try_recv().is_err() {
        let Ok((n, from)) = sock.recv_from(&mut buf) else {
            continue;
        };
        let Some(req) = buf.get(..n) else { continue };
        let (Some(&[0xfe, 0xfd]), Some(&kind), Some(sid)) =
            (req.get(..2), req.get(2), req.get(3..7))
        else {
            continue;
        };
        match kind {
            9 => {
                out.clear();
                out.push(9);
                out.extend_from_slice(sid);
                out.extend_from_slice(b"12345678\0");
                let _ = sock.send_to(&out, from);
            }
            0 => {
                for p in &packets {
                    out.clear();
                    out.push(0);
                    out.extend_from_slice(sid);
                    out.extend_from_slice(p.get(5..).unwrap_or_default());
                    let _ = sock.send_to(&out, from);
                }
            }
            _ => {}
        }
    }
}

/// One query by our client machine, driven over a blocking socket of its own.
fn query_ours(server: SocketAddr, session_id: u32) -> (usize, usize) {
    let sock = UdpSocket::bind((Ipv4Addr::LOCALHOST, 0)).expect("bind");
    let mut m = QueryMachine::new(
        QueryOptions::default(),
        Timing::default(),
        session_id,
        Instant::now(),
    );
    let mut out = Vec::with_capacity(64);
    let mut buf = vec![0u8; 2048];
    loop {
        let now = Instant::now();
        while m.poll_transmit_into(now, &mut out) {
            sock.send_to(&out, server).expect("send");
        }
        if let Some(r) = m.take_result() {
            let a = r.expect("our query answered");
            let players = a.status.players.as_ref().map_or(0, Vec::len);
            let teams = a.status.teams.as_ref().map_or(0, Vec::len);
            black_box(a);
            return (players, teams);
        }
        let wait = m
            .poll_timeout()
            .map_or(Duration::from_secs(1), |t| t.saturating_duration_since(now));
        sock.set_read_timeout(Some(wait.max(Duration::from_millis(1))))
            .expect("timeout");
        match sock.recv_from(&mut buf) {
            Ok((n, from)) if from == server => {
                m.handle_datagram(Instant::now(), buf.get(..n).unwrap_or_default())
            }
            Ok(_) => {}
            Err(_) => m.handle_timeout(Instant::now()),
        }
    }
}

fn query_gamedig(server: SocketAddr) -> (usize, usize) {
    let r = gamedig::protocols::gamespy::three::query(&server, None).expect("gamedig answered");
    let counts = (r.players.len(), r.teams.len());
    black_box(r);
    counts
}

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    match args.first().map(String::as_str) {
        Some("serve") => serve(),
        Some(which @ ("ours" | "gamedig")) => {
            let port: u16 = args.get(1).and_then(|s| s.parse().ok()).expect("PORT");
            let n: u32 = args.get(2).and_then(|s| s.parse().ok()).unwrap_or(100);
            let server = SocketAddr::from((Ipv4Addr::LOCALHOST, port));
            let start = Instant::now();
            let mut last = (0, 0);
            for i in 0..n {
                let got = if which == "ours" {
                    query_ours(server, 0x1000_0000 | i)
                } else {
                    query_gamedig(server)
                };
                if which == "ours" {
                    assert_eq!(got, (PLAYERS, TEAMS), "our players and teams");
                }
                last = got;
            }
            let per = start.elapsed() / n.max(1);
            println!(
                "{which}: {n} queries, {} players and {} teams each, {per:?} each (wall clock, \
                 loopback round trips included)",
                last.0, last.1
            );
        }
        _ => {
            eprintln!("usage: gs3_peer serve | gs3_peer ours|gamedig PORT N");
            std::process::exit(2);
        }
    }
}
