//! `ogp query -p quake3` and `ogp scan` against small Quake III servers on loopback (a
//! thread each, answering by a rule): a server that ignores `getinfo`, one whose reply is
//! over our 16 KiB limit, and one whose names carry every character that acts on a
//! terminal. Issue 36, items 6, 7 and 10.
//!
//! `OGP_BIN=/path/to/ogp` runs the same checks against another build (say, the main
//! branch's), to compare: `OGP_BIN=... cargo test -p ogp-cli --test all quake3_cli:: --
//! --nocapture` prints each run's time and counts.

use crate::common;

use std::net::UdpSocket;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use common::*;
use ogp_proto::quake3::{decode_request, Command as Q3};
use serde_json::Value;

const LIMIT: Duration = Duration::from_secs(20);

fn ogp(args: &[&str], input: Option<&[u8]>) -> Ran {
    ogp_run_with_input(args, input, LIMIT)
}

/// A Quake III server on a free loopback port, answering each request with
/// `reply(command, challenge)`; stops when dropped (and after 60 s at most).
struct Server {
    port: u16,
    stop: Arc<AtomicBool>,
}

impl Drop for Server {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::Relaxed);
    }
}

fn server(reply: fn(Q3, &str) -> Option<Vec<u8>>) -> Server {
    let sock = UdpSocket::bind("127.0.0.1:0").unwrap();
    let port = sock.local_addr().unwrap().port();
    let stop = Arc::new(AtomicBool::new(false));
    let stopped = stop.clone();
    std::thread::spawn(move || {
        sock.set_read_timeout(Some(Duration::from_millis(50)))
            .unwrap();
        let end = Instant::now() + Duration::from_secs(60);
        let mut buf = [0u8; 2048];
        while !stopped.load(Ordering::Relaxed) && Instant::now() < end {
            let Ok((n, from)) = sock.recv_from(&mut buf) else {
                continue;
            };
            let Ok(req) = decode_request(&buf[..n]) else {
                continue;
            };
            let challenge = req.challenge.as_deref().unwrap_or("").to_string();
            if let Some(d) = reply(req.command, &challenge) {
                let _ = sock.send_to(&d, from);
            }
        }
    });
    Server { port, stop }
}

const PLAYERS: &str = "3 48 \"^1one\"\n7 0 \"two\"\n0 12 \"three\"\n";

/// `FF FF FF FF`, the command line, the info string and the rest (player lines).
fn reply_bytes(command: &str, vars: &str, rest: &str) -> Vec<u8> {
    let mut d = b"\xff\xff\xff\xff".to_vec();
    d.extend_from_slice(format!("{command}\n{vars}\n{rest}").as_bytes());
    d
}

fn info(challenge: &str, hostname: &str) -> Vec<u8> {
    reply_bytes(
        "infoResponse",
        &format!("\\hostname\\{hostname}\\mapname\\q3dm17\\clients\\3\\sv_maxclients\\8\\gamename\\baseq3\\challenge\\{challenge}"),
        "",
    )
}

fn status(challenge: &str, hostname: &str, players: &str) -> Vec<u8> {
    reply_bytes(
        "statusResponse",
        &format!("\\sv_hostname\\{hostname}\\mapname\\q3dm17\\sv_maxclients\\8\\gamename\\baseq3\\challenge\\{challenge}"),
        players,
    )
}

/// Runs `ogp query -p quake3 --json` (the CLI's defaults: 1 s, 2 retries): the JSON and
/// the run.
fn query_json(port: u16) -> (Value, Ran) {
    let target = format!("127.0.0.1:{port}");
    let ran = ogp(&["query", "-p", "quake3", "--json", &target], None);
    let v =
        serde_json::from_slice(&ran.stdout).unwrap_or_else(|e| panic!("{e}: {}", ran.describe()));
    (v, ran)
}

#[test]
fn a_server_that_ignores_getinfo_is_read_from_getstatus() {
    let s = server(|c, ch| (c == Q3::GetStatus).then(|| status(ch, "^2plain", PLAYERS)));
    let (v, ran) = query_json(s.port);
    eprintln!(
        "ignores getinfo: exit {:?} in {:.2} s: {}",
        ran.code,
        ran.took.as_secs_f64(),
        v["message"].as_str().unwrap_or("answered")
    );
    assert_eq!(v["ok"], true, "{v}");
    assert_eq!(v["status"]["host_name"], "plain");
    assert_eq!(v["warnings"], serde_json::json!(["no reply to getinfo"]));
    // getinfo has half of the 4.75 s deadline; getstatus goes out at 2.375 s.
    assert!(ran.took < Duration::from_millis(4500), "{:?}", ran.took);
}

/// A reply of 65,000 bytes: its info string is over the 16 KiB limit.
fn oversized(command: &str) -> Vec<u8> {
    let mut d = reply_bytes(command, "\\hostname\\", "");
    d.pop();
    d.resize(65_000, b'x');
    d
}

#[test]
fn a_reply_over_our_limit_says_which_limit() {
    let s = server(|c, ch| {
        Some(match c {
            Q3::GetInfo => info(ch, "ok"),
            Q3::GetStatus => oversized("statusResponse"),
        })
    });
    let (v, ran) = query_json(s.port);
    eprintln!(
        "oversized getstatus: exit {:?} in {:.2} s: {}",
        ran.code,
        ran.took.as_secs_f64(),
        v["warnings"]
    );
    assert_eq!(v["ok"], true, "{v}");
    // Asking again would bring the same 65,000 bytes: the step ends at once.
    assert!(ran.took < Duration::from_secs(2), "{:?}", ran.took);
    assert_eq!(
        v["warnings"],
        serde_json::json!([
            "no reply to getstatus: reply of 65,000 bytes dropped: info string over our limit of 16,384"
        ])
    );
    // Nothing but oversized replies: a failure that names the limit, not "no answer".
    let s = server(|c, _| {
        Some(oversized(match c {
            Q3::GetInfo => "infoResponse",
            Q3::GetStatus => "statusResponse",
        }))
    });
    let (v, _) = query_json(s.port);
    assert_eq!(v["error"], "malformed", "{v}");
    assert!(
        v["message"].as_str().unwrap().contains("limit of 16384"),
        "{v}"
    );
}

/// Every character the JSON writer escapes, in a Quake III name (no `\`, newline or NUL,
/// which the info string cannot carry).
const HOSTILE: &str = concat!("^1evil", terminal_controls!());

#[test]
fn hostile_names_are_escaped_in_json_and_read_back_whole() {
    let s = server(|c, ch| {
        Some(match c {
            Q3::GetInfo => info(ch, HOSTILE),
            Q3::GetStatus => status(
                ch,
                HOSTILE,
                &format!("1 2 \"p{HOSTILE}\"\n3 4 \"q{HOSTILE}\"\n"),
            ),
        })
    });
    let (v, ran) = query_json(s.port);
    let out = String::from_utf8_lossy(&ran.stdout);
    eprintln!(
        "raw terminal controls in query --json: {}",
        raw_controls(&out)
    );
    assert_eq!(raw_controls(&out), 0, "{out}");
    let plain = ogp_proto::quake3::color::strip(HOSTILE);
    assert_eq!(v["status"]["host_name"], plain.as_str());
    // The name with its colour codes is kept (docs/json.md).
    assert_eq!(v["status"]["host_name_raw"], HOSTILE, "{v}");
    assert_eq!(v["status"]["players"][0]["name_raw"], format!("p{HOSTILE}"));

    // Python's json reads back the same characters.
    assert_eq!(
        python_code_points(&ran.stdout, "['status']['host_name_raw']"),
        code_points(HOSTILE)
    );

    // ogp decode --json of the same status datagram.
    let hex = ogp_proto::internals::to_hex(&status("x", HOSTILE, PLAYERS));
    let ran = ogp(&["decode", "-p", "quake3", "--json", &hex], None);
    let out = String::from_utf8_lossy(&ran.stdout);
    eprintln!(
        "raw terminal controls in decode --json: {}",
        raw_controls(&out)
    );
    assert_eq!(raw_controls(&out), 0, "{out}");
    let v: Value = serde_json::from_str(out.lines().next().unwrap()).unwrap();
    assert_eq!(v["status"]["host_name"], plain.as_str(), "{v}");
}

#[test]
fn verbose_output_has_one_line_per_step() {
    let s = server(|c, ch| {
        Some(match c {
            Q3::GetInfo => info(ch, "plain"),
            Q3::GetStatus => status(ch, "plain", PLAYERS),
        })
    });
    let ran = ogp(
        &[
            "query",
            "-p",
            "quake3",
            "-v",
            &format!("127.0.0.1:{}", s.port),
        ],
        None,
    );
    assert_eq!(ran.code, Some(0), "{}", ran.describe());
    let wire: Vec<&str> = ran
        .stderr
        .lines()
        .filter(|l| l.starts_with("  →") || l.starts_with("  ←"))
        .collect();
    eprintln!(
        "-v: {} exchange lines, {} U+FFFD on standard error",
        wire.len(),
        ran.stderr.matches('\u{fffd}').count()
    );
    let starts = [
        "  → getinfo ",
        "  ← getinfo reply ",
        "  → getstatus ",
        "  ← getstatus reply ",
    ];
    assert!(
        wire.len() == starts.len() && wire.iter().zip(starts).all(|(l, s)| l.starts_with(s)),
        "{:?}",
        ran.stderr
    );
    assert!(!ran.stderr.contains('\u{fffd}'), "{:?}", ran.stderr);
}

#[test]
fn scan_counts_the_player_lines_of_quake3() {
    let s = server(|c, ch| {
        Some(match c {
            Q3::GetInfo => info(ch, "plain"),
            Q3::GetStatus => status(ch, "plain", PLAYERS),
        })
    });
    let list = format!("quake3 127.0.0.1:{}\n", s.port);
    let ran = ogp(&["scan", "--no-progress", "-"], Some(list.as_bytes()));
    let table = String::from_utf8_lossy(&ran.stdout);
    let row = table
        .lines()
        .find(|l| l.contains("quake3"))
        .unwrap_or_else(|| panic!("{}", ran.describe()));
    let cols: Vec<&str> = row.split_whitespace().collect();
    // TARGET PROTOCOL PING PLAYERS MAP NAME
    assert_eq!(cols.get(3), Some(&"3/8"), "{table}");
}
