//! What the interop tests share: starting `ogp serve` on a free loopback port and
//! exchanging datagrams with it; and, re-exported from `ogp_testkit::interop` (shared with
//! ogp-ffi's tests), the `OGP_INTEROP` gate, finding the pinned peers that
//! `scripts/install-interop.sh` installs, running them with a time limit, and collecting
//! mismatches.
//!
//! Each test binary uses part of it.
#![allow(dead_code)]

use std::net::UdpSocket;
use std::path::PathBuf;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

pub mod exposition;
pub mod master;

// The gate, the peers, running them and comparing: shared with ogp-ffi's tests.
pub use ogp_testkit::interop::*;

pub const BIN: &str = env!("CARGO_BIN_EXE_ogp");
pub const ROOT: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/../..");

/// The `ogp` that [`ogp_run`] runs: `OGP_BIN` when set (another build, say the main
/// branch's, to compare: `OGP_BIN=... cargo test -p ogp-cli --test all FILE:: -- --nocapture`),
/// else this build's.
pub fn ogp_bin() -> String {
    std::env::var("OGP_BIN").unwrap_or_else(|_| BIN.to_string())
}

/// Runs `ogp` ([`ogp_bin`]) with `args` within `limit` as a user would, without colours
/// and without a log filter from the environment (`OGP_LOG`, `RUST_LOG`): the same output
/// wherever the tests run.
pub fn ogp_run(args: &[&str], limit: Duration) -> Ran {
    ogp_run_with_input(args, None, limit)
}

/// `ogp query --json ARGS 127.0.0.1:PORT`, its one result object.
pub fn ogp_query_port_json(args: &[&str], port: u16) -> serde_json::Value {
    let target = format!("127.0.0.1:{port}");
    let mut all = vec!["query", "--json"];
    all.extend_from_slice(args);
    all.push(&target);
    let ran = ogp_run(&all, Duration::from_secs(20));
    parse_json(&ran, "ogp query", &target)
}

/// gamedig's JSON for its type `kind` (`openttd`, `protocol-ase`…) on the loopback
/// `port`, that port only, one retry.
pub fn gamedig_json(kind: &str, port: u16, label: &str) -> serde_json::Value {
    let ran = run(
        std::process::Command::new("node")
            .arg(gamedig_js())
            .args(["--type", kind, "--givenPortOnly"])
            .args(["--socketTimeout", "3000", "--maxRetries", "1"])
            .arg(format!("127.0.0.1:{port}")),
        CLIENT_LIMIT,
    );
    parse_json(&ran, &format!("gamedig {kind}"), label)
}

/// [`ogp_run`] with `input` on standard input.
pub fn ogp_run_with_input(args: &[&str], input: Option<&[u8]>, limit: Duration) -> Ran {
    run_with_input(
        Command::new(ogp_bin())
            .args(args)
            .env("NO_COLOR", "1")
            .env_remove("OGP_LOG")
            .env_remove("RUST_LOG"),
        input,
        limit,
    )
}

/// A string literal of every character that acts on a terminal and that JSON output
/// escapes (ESC and a sequence, DEL, C1 CSI and NEL, the bidirectional controls,
/// U+2028/U+2029), with some text between: `concat!("^1evil", terminal_controls!())`.
#[macro_export]
macro_rules! terminal_controls {
    () => {
        "\u{1b}[2J\u{7f}\u{9b}31m\u{202e}rev\u{202c}\u{2066}iso\u{2069}\u{2028}ls\u{2029}\u{61c}\u{200e}\u{200f}\u{202a}\u{85}end"
    };
}

/// The code points of the string at `path` (Python, e.g. `['status']['host_name_raw']`)
/// of `json` as Python's `json` reads it, space-separated; compare with
/// [`code_points`].
pub fn python_code_points(json: &[u8], path: &str) -> String {
    let script = format!(
        "import json,sys; v=json.load(sys.stdin){path}; print(' '.join(str(ord(c)) for c in v))"
    );
    let ran = run_with_input(
        Command::new("python3").args(["-c", &script]),
        Some(json),
        Duration::from_secs(20),
    );
    String::from_utf8_lossy(&ran.stdout).trim().to_string()
}

/// The code points of `s`, as [`python_code_points`] prints them.
pub fn code_points(s: &str) -> String {
    let v: Vec<String> = s.chars().map(|c| u32::from(c).to_string()).collect();
    v.join(" ")
}

/// How many characters of `s` would act on a terminal shown raw
/// ([`ogp_proto::result::is_terminal_control`]), but the line breaks of the layout.
pub fn raw_controls(s: &str) -> usize {
    s.chars()
        .filter(|c| *c != '\n' && ogp_proto::result::is_terminal_control(*c))
        .count()
}

/// Standard output of a run, decoded leniently.
pub fn out(r: &Ran) -> String {
    String::from_utf8_lossy(&r.stdout).into_owned()
}

/// Sends `request` on a connected socket and returns the datagrams that come back within
/// `wait` (after the first, 300 ms of silence ends the collection).
pub fn exchange(sock: &UdpSocket, request: &[u8], wait: Duration) -> Vec<Vec<u8>> {
    collect(sock, request, wait, usize::MAX)
}

/// [`exchange`] for an answer of `n` datagrams: returns as soon as `n` have come (and any
/// more that are already queued behind them, so that an extra datagram of the same answer
/// still shows), instead of waiting out 300 ms of silence.
pub fn exchange_n(sock: &UdpSocket, request: &[u8], n: usize, wait: Duration) -> Vec<Vec<u8>> {
    collect(sock, request, wait, n)
}

fn collect(sock: &UdpSocket, request: &[u8], wait: Duration, n: usize) -> Vec<Vec<u8>> {
    sock.send(request).unwrap();
    let mut got = Vec::new();
    let deadline = Instant::now() + wait;
    let mut buf = [0u8; 2048];
    loop {
        let left = if got.is_empty() {
            deadline.saturating_duration_since(Instant::now())
        } else if got.len() >= n {
            // What the responder sent with the answer is queued already (loopback
            // delivers in the sender's system call): a short grace, not 300 ms.
            Duration::from_millis(20)
        } else {
            Duration::from_millis(300)
        };
        if left.is_zero() {
            break;
        }
        sock.set_read_timeout(Some(left)).unwrap();
        match sock.recv(&mut buf) {
            Ok(n) => got.push(buf[..n].to_vec()),
            Err(_) => break,
        }
    }
    got
}

/// `ogp serve` on 127.0.0.1, killed when dropped.
pub struct Served {
    pub port: u16,
    _child: KillOnDrop,
    _dir: TempDir,
}

impl Served {
    /// The process id of `ogp serve`.
    #[allow(dead_code)] // not every test binary that includes this module uses it
    pub fn pid(&self) -> u32 {
        self._child.0.id()
    }

    /// The state file it serves (`state.json` in a directory of its own).
    pub fn state_path(&self) -> PathBuf {
        self._dir.0.join("state.json")
    }
}

/// Starts `ogp serve` on a free loopback port, answering `status_json` (a state file) with
/// the `extra` arguments, and returns once `ready` (given a socket connected to it) says
/// it answers.
pub fn serve_with(
    label: &str,
    status_json: &str,
    extra: &[&str],
    ready: impl Fn(&UdpSocket) -> bool,
) -> Served {
    let dir = TempDir::new(label);
    let state = dir.0.join("state.json");
    std::fs::write(&state, status_json).unwrap();
    for _ in 0..5 {
        let port = free_port();
        let log = dir.0.join("serve.log");
        let mut child = KillOnDrop(
            Command::new(BIN)
                .args(["serve", "--state"])
                .arg(&state)
                .args(["--listen", &format!("127.0.0.1:{port}")])
                // many queries from one address in a short time: no rate limit in the way
                // (unless the test sets its own)
                .args(if extra.contains(&"--rate") {
                    &[][..]
                } else {
                    &["--rate", "10000", "--burst", "10000"][..]
                })
                .args(extra)
                .env("NO_COLOR", "1")
                .env_remove("OGP_LOG")
                .stdin(Stdio::null())
                .stdout(Stdio::null())
                .stderr(std::fs::File::create(&log).unwrap())
                .spawn()
                .expect("spawn ogp serve"),
        );
        let sock = UdpSocket::bind("127.0.0.1:0").unwrap();
        sock.connect(("127.0.0.1", port)).unwrap();
        let t = Instant::now();
        while t.elapsed() < Duration::from_secs(10) {
            if child.0.try_wait().unwrap().is_some() {
                break; // the port was taken in the meantime: try another
            }
            if ready(&sock) {
                return Served {
                    port,
                    _child: child,
                    _dir: dir,
                };
            }
        }
        let _ = child.0.kill();
        eprintln!(
            "ogp serve on port {port} did not answer; log:\n{}",
            std::fs::read_to_string(&log).unwrap_or_default()
        );
    }
    panic!("ogp serve did not start");
}

/// Host, map and player name text of a hostile server: escape sequences (clear screen,
/// recolour), a C1 control, bidirectional overrides and a bell.
pub const HOSTILE: &str = "evil\u{1b}[2J\u{1b}[31mred\u{9b}H\u{202e}desrever\u{2066}x\u{7}";

/// The characters of `s` that would act on a terminal (controls but the newline, and the
/// bidirectional controls): none may reach human output.
pub fn unsafe_chars(s: &str) -> Vec<char> {
    s.chars()
        .filter(|c| {
            c.is_control() && *c != '\n'
                || matches!(c, '\u{202a}'..='\u{202e}' | '\u{2066}'..='\u{2069}' | '\u{200e}' | '\u{200f}')
        })
        .collect()
}

/// `ogp query ARGS --json --timeout 2000 TARGET`: its one result object.
pub fn ogp_query_json(args: &[&str], target: &str) -> serde_json::Value {
    let mut all = vec!["query"];
    all.extend_from_slice(args);
    all.extend_from_slice(&["--json", "--timeout", "2000", target]);
    let ran = ogp_run(&all, CLIENT_LIMIT);
    parse_json(&ran, "ogp query", target)
}

/// The bytes of every `→ sent` block of a `-vv` hex dump, joined: a secret split across
/// the dump's 16-byte lines is found here, where a search of the text would miss it.
pub fn sent_in_dump(stderr: &str) -> Vec<u8> {
    let mut out = Vec::new();
    let mut sending = false;
    for line in stderr.lines() {
        let t = line.trim_start();
        if t.starts_with("→ sent") || t.starts_with("← received") {
            sending = t.starts_with("→ sent");
            continue;
        }
        // "    0010  6c 6f 67 …  text": an offset, two spaces, 47 columns of hex
        let Some((offset, rest)) = t.split_once("  ") else {
            sending = false;
            continue;
        };
        if !sending || offset.len() != 4 || !offset.chars().all(|c| c.is_ascii_hexdigit()) {
            sending = false;
            continue;
        }
        let hex = rest.get(..47.min(rest.len())).unwrap_or(rest);
        out.extend(
            hex.split_whitespace()
                .map_while(|b| u8::from_str_radix(b, 16).ok()),
        );
    }
    out
}

/// Whether `needle` occurs in `hay`.
pub fn contains_bytes(hay: &[u8], needle: &[u8]) -> bool {
    !needle.is_empty() && hay.windows(needle.len()).any(|w| w == needle)
}
