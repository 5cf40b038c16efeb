//! `ogp serve` against whatever ends up at its state file's path, and its signals.
//!
//! * Bad files swapped in (`rename`) while a client queries every 150 ms: a FIFO nobody
//!   writes to, a symlink to /dev/zero, a directory, a file over --max-state-bytes, a
//!   half-written file. Every query is answered with the last good state, each refusal is
//!   logged exactly once, memory stays small, and a good file is served again.
//! * The same files at start-up: one clear line and exit 1 within seconds; values past the
//!   limits, deep nesting and invalid UTF-8 name the field, line and column.
//! * SIGTERM and SIGINT: one line, GameSpy v3 "exiting" heartbeats, exit 0; SIGHUP: the
//!   file is read at once.
//!
//! Everything runs on 127.0.0.1; every loop is bounded in time.

use crate::common;

use std::net::UdpSocket;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use common::{free_port, run, KillOnDrop, TempDir, BIN};
use ogp_proto::gamespy3::heartbeat::{Heartbeat, StateChanged};

const STATE: &str = include_str!("../../../ogp-proto/tests/data/state.json");
const HOST_NAME: &str = "Demo Arena #1 – Ünïcödé ✓";

/// The A2S_INFO query.
const A2S_INFO: &[u8] = b"\xFF\xFF\xFF\xFFTSource Engine Query\0";

/// Asks for A2S_INFO (answering a challenge if one comes) and returns the server name.
fn a2s_name(sock: &UdpSocket) -> Option<String> {
    let mut buf = [0u8; 2048];
    let mut request = A2S_INFO.to_vec();
    for _ in 0..2 {
        sock.send(&request).ok()?;
        let n = sock.recv(&mut buf).ok()?;
        let reply = buf.get(..n)?;
        match reply.get(4)? {
            0x41 => request.extend_from_slice(reply.get(5..9)?),
            0x49 => {
                let name = reply.get(6..)?;
                let end = name.iter().position(|&b| b == 0)?;
                return String::from_utf8(name.get(..end)?.to_vec()).ok();
            }
            _ => return None,
        }
    }
    None
}

fn client(port: u16) -> UdpSocket {
    let sock = UdpSocket::bind("127.0.0.1:0").unwrap();
    sock.connect(("127.0.0.1", port)).unwrap();
    sock.set_read_timeout(Some(Duration::from_secs(1))).unwrap();
    sock
}

/// Polls `f` every 50 ms until it is true or `limit` passes.
fn until(limit: Duration, mut f: impl FnMut() -> bool) -> bool {
    let t = Instant::now();
    while t.elapsed() < limit {
        if f() {
            return true;
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    f()
}

fn strip_ansi(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    let mut chars = s.chars();
    while let Some(c) = chars.next() {
        if c == '\u{1b}' {
            for d in chars.by_ref() {
                if d.is_ascii_alphabetic() {
                    break;
                }
            }
        } else {
            out.push(c);
        }
    }
    out
}

/// A running `ogp serve` with its log.
struct Server {
    child: KillOnDrop,
    log: PathBuf,
    port: u16,
}

impl Server {
    fn start(state: &Path, mut log: PathBuf, extra: &[&str]) -> Self {
        for _ in 0..5 {
            let port = free_port();
            let child = KillOnDrop(
                Command::new(BIN)
                    .args(["serve", "--state"])
                    .arg(state)
                    .args(["--listen", &format!("127.0.0.1:{port}")])
                    .args(["--rate", "10000", "--burst", "10000"])
                    .args(extra)
                    .env("NO_COLOR", "1")
                    .env_remove("OGP_LOG")
                    .stdin(Stdio::null())
                    .stdout(Stdio::null())
                    .stderr(std::fs::File::create(&log).unwrap())
                    .spawn()
                    .expect("spawn ogp serve"),
            );
            let mut s = Server { child, log, port };
            let sock = client(port);
            let up = until(Duration::from_secs(10), || {
                s.exited().is_some() || a2s_name(&sock).is_some()
            });
            if up && s.exited().is_none() {
                return s;
            }
            eprintln!("ogp serve on port {port} did not answer:\n{}", s.log_text());
            log = s.log.clone();
        }
        panic!("ogp serve did not start");
    }

    fn exited(&mut self) -> Option<std::process::ExitStatus> {
        self.child.0.try_wait().unwrap()
    }

    fn log_text(&self) -> String {
        strip_ansi(&std::fs::read_to_string(&self.log).unwrap_or_default())
    }

    fn lines_with(&self, what: &str) -> Vec<String> {
        self.log_text()
            .lines()
            .filter(|l| l.contains(what))
            .map(str::to_owned)
            .collect()
    }

    fn signal(&self, name: &str) {
        let ok = Command::new("kill")
            .args([&format!("-{name}"), &self.child.0.id().to_string()])
            .status()
            .is_ok_and(|s| s.success());
        assert!(ok, "kill -{name}");
    }

    /// Waits for the process to end, at most `limit`.
    fn wait_exit(&mut self, limit: Duration) -> std::process::ExitStatus {
        let t = Instant::now();
        loop {
            if let Some(s) = self.exited() {
                return s;
            }
            assert!(
                t.elapsed() < limit,
                "ogp serve still running after {limit:?}; log:\n{}",
                self.log_text()
            );
            std::thread::sleep(Duration::from_millis(20));
        }
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

/// A client querying every 150 ms on a thread, counting answers.
struct Querier {
    stop: Arc<AtomicBool>,
    thread: Option<std::thread::JoinHandle<(u32, u32, Vec<String>)>>,
}

impl Querier {
    fn start(port: u16) -> Self {
        let stop = Arc::new(AtomicBool::new(false));
        let flag = Arc::clone(&stop);
        let thread = std::thread::spawn(move || {
            let sock = client(port);
            let (mut sent, mut answered, mut wrong) = (0u32, 0u32, Vec::new());
            let t = Instant::now();
            // bounded: stops when told, and after two minutes whatever happens
            while !flag.load(Ordering::SeqCst) && t.elapsed() < Duration::from_secs(120) {
                let started = Instant::now();
                sent += 1;
                match a2s_name(&sock) {
                    Some(name) if name == HOST_NAME => answered += 1,
                    Some(name) => wrong.push(name),
                    None => {}
                }
                std::thread::sleep(Duration::from_millis(150).saturating_sub(started.elapsed()));
            }
            (sent, answered, wrong)
        });
        Self {
            stop,
            thread: Some(thread),
        }
    }

    /// Stops and returns (queries sent, answered with the good state, other names).
    fn finish(mut self) -> (u32, u32, Vec<String>) {
        self.stop.store(true, Ordering::SeqCst);
        self.thread.take().unwrap().join().unwrap()
    }
}

impl Drop for Querier {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::SeqCst);
    }
}

fn mkfifo(path: &Path) {
    let ok = Command::new("mkfifo")
        .arg(path)
        .status()
        .is_ok_and(|s| s.success());
    assert!(ok, "mkfifo {}", path.display());
}

/// The start of the example state, cut on an ASCII byte past the middle: what a reader
/// sees of a file being written.
fn half_written() -> &'static str {
    let mid = STATE.len() / 2;
    let cut = STATE
        .get(mid..)
        .and_then(|rest| rest.find('\n'))
        .map_or(mid, |i| mid + i);
    STATE.get(..cut).unwrap()
}

/// A bad file to swap in: how to make it at `path`, and what its refusal says.
struct Bad {
    name: &'static str,
    make: fn(dir: &Path, path: &Path),
    says: &'static str,
}

const MAX_BYTES: usize = 8192;

fn bad_files() -> Vec<Bad> {
    vec![
        Bad {
            name: "a FIFO nobody writes to",
            make: |_, p| mkfifo(p),
            says: "a FIFO (named pipe), not a regular file",
        },
        Bad {
            name: "a symlink to /dev/zero",
            make: |_, p| std::os::unix::fs::symlink("/dev/zero", p).unwrap(),
            says: "(a symlink to /dev/zero): a character device, not a regular file",
        },
        Bad {
            // a directory cannot be renamed over a file: a symlink to one is
            name: "a directory",
            make: |dir, p| {
                let d = dir.join("a-directory");
                std::fs::create_dir_all(&d).unwrap();
                std::os::unix::fs::symlink(&d, p).unwrap();
            },
            says: "a directory, not a regular file",
        },
        Bad {
            name: "a file over --max-state-bytes",
            make: |_, p| {
                let padded = format!("{}{STATE}", " ".repeat(MAX_BYTES));
                std::fs::write(p, padded).unwrap();
            },
            says: "bytes, more than --max-state-bytes (8192)",
        },
        Bad {
            name: "a half-written file",
            make: |_, p| std::fs::write(p, half_written()).unwrap(),
            says: "(the file ends early: half written?)",
        },
    ]
}

#[test]
fn bad_files_swapped_in_are_refused_once_while_every_query_is_answered() {
    let dir = TempDir::new("serve-swap");
    let state = dir.0.join("state.json");
    std::fs::write(&state, STATE).unwrap();
    let max = MAX_BYTES.to_string();
    let server = Server::start(
        &state,
        dir.0.join("serve.log"),
        &["--reload-interval", "0.1", "--max-state-bytes", &max],
    );
    let querier = Querier::start(server.port);
    let mut rss = Vec::new();
    for (i, bad) in bad_files().iter().enumerate() {
        let tmp = dir.0.join(format!("incoming-{i}"));
        (bad.make)(&dir.0, &tmp);
        std::fs::rename(&tmp, &state).unwrap();
        let refused = until(Duration::from_secs(5), || {
            !server.lines_with(bad.says).is_empty()
        });
        assert!(
            refused,
            "{}: no refusal logged; log:\n{}",
            bad.name,
            server.log_text()
        );
        // a dozen more polls of the same file: still exactly one line
        std::thread::sleep(Duration::from_millis(1200));
        let lines = server.lines_with(bad.says);
        assert_eq!(lines.len(), 1, "{}: {lines:#?}", bad.name);
        let line = &lines[0];
        assert!(line.contains("ERROR"), "{line}");
        assert!(line.contains(&state.display().to_string()), "{line}");
        assert!(
            line.ends_with("; still serving the last good state"),
            "{line}"
        );
        assert_eq!(
            server.lines_with("ERROR").len(),
            i + 1,
            "{}: one error line per refusal; log:\n{}",
            bad.name,
            server.log_text()
        );
        rss.push((bad.name, server.rss_kib()));
        // a good file again: served again
        let good = dir.0.join(format!("good-{i}"));
        std::fs::write(&good, STATE).unwrap();
        std::fs::rename(&good, &state).unwrap();
        let reloaded = until(Duration::from_secs(5), || {
            server.lines_with("reloaded").len() == i + 1
        });
        assert!(
            reloaded,
            "{}: not reloaded; log:\n{}",
            bad.name,
            server.log_text()
        );
    }
    let (sent, answered, wrong) = querier.finish();
    eprintln!("queries: {answered} of {sent} answered; RSS (KiB) after each swap: {rss:?}");
    assert!(wrong.is_empty(), "answers with another state: {wrong:?}");
    assert!(sent >= 30, "only {sent} queries");
    assert!(
        f64::from(answered) >= 0.98 * f64::from(sent),
        "{answered} of {sent} queries answered; log:\n{}",
        server.log_text()
    );
    for (name, kib) in rss {
        assert!(kib <= 64 * 1024, "{name}: VmRSS {kib} KiB");
    }
}

/// Runs `ogp serve` on a state file expected to be refused: exit 1 within a few seconds,
/// one line on stderr that names the file. Returns the line.
fn refused_at_start(state: &Path, extra: &[&str]) -> String {
    let mut cmd = Command::new(BIN);
    cmd.args(["serve", "--state"])
        .arg(state)
        .args(["--listen", "127.0.0.1:0"])
        .args(extra)
        .env("NO_COLOR", "1")
        .env_remove("OGP_LOG");
    let ran = run(&mut cmd, Duration::from_secs(20));
    assert_eq!(ran.code, Some(1), "{}", ran.describe());
    assert!(ran.took < Duration::from_secs(5), "{}", ran.describe());
    let err = strip_ansi(&ran.stderr);
    assert_eq!(err.lines().count(), 1, "{err}");
    assert!(
        err.starts_with(&format!("ogp: {}", state.display())),
        "{err}"
    );
    err.trim_end().to_owned()
}

#[test]
fn bad_files_at_start_up_are_one_line_and_exit_1() {
    let dir = TempDir::new("serve-start");
    let max = MAX_BYTES.to_string();
    for (i, bad) in bad_files().iter().enumerate() {
        let path = dir.0.join(format!("state-{i}.json"));
        (bad.make)(&dir.0, &path);
        let line = refused_at_start(&path, &["--max-state-bytes", &max]);
        assert!(line.contains(bad.says), "{}: {line}", bad.name);
    }
    // a real directory, not a symlink to one
    let line = refused_at_start(&dir.0, &[]);
    assert!(line.ends_with("a directory, not a regular file; only a regular file is read"));
    // and a missing file
    let line = refused_at_start(&dir.0.join("missing.json"), &[]);
    assert!(line.contains("No such file"), "{line}");
}

#[test]
fn values_past_the_limits_deep_nesting_and_bad_utf8_are_located() {
    let dir = TempDir::new("serve-limits");
    let cases: Vec<(&str, Vec<u8>, &str)> = vec![
        (
            "long.json",
            format!("{{\"host_name\": \"{}\"}}", "x".repeat(70_000)).into_bytes(),
            "long.json: host_name: 70000 bytes, at most 4096",
        ),
        (
            "players.json",
            format!(
                "{{\"players\": [\n{}\n]}}",
                vec!["{\"name\": \"p\"}"; 4500].join(",\n")
            )
            .into_bytes(),
            "players.json: line 4502 column 1: players: 4500 entries, at most 4096",
        ),
        (
            "rules.toml",
            format!("[rules]\nmotd = \"{}\"\n", "m".repeat(5000)).into_bytes(),
            "rules.toml: rules.motd: 5000 bytes, at most 4096",
        ),
        (
            "deep.json",
            format!("{{\"map\": {}", "[".repeat(100_000)).into_bytes(),
            "deep.json: line 1 column 40: map[0][0][0][0][0][0][0]…: nested too deeply: more \
             than 32 levels of arrays and objects (a status needs 5)",
        ),
        (
            "utf8.json",
            b"{\n  \"game_name\": \"ok\",\n  \"map\": {\"name\": \"caf\xE9\"}\n}".to_vec(),
            "utf8.json: line 3 column 23: map.name: invalid UTF-8 (byte 0xE9); a state file \
             must be UTF-8",
        ),
        (
            "array.json",
            b"\n  [{\"host_name\": \"x\"}]".to_vec(),
            "array.json: line 2 column 3: the state file must be a JSON object (the status), \
             not an array",
        ),
    ];
    for (name, bytes, want) in cases {
        let path = dir.0.join(name);
        std::fs::write(&path, bytes).unwrap();
        let line = refused_at_start(&path, &[]);
        let want = format!("ogp: {}", dir.0.join(want).display());
        assert_eq!(line, want);
    }
    // a player's long name is clipped with a warning, and the server runs
    let state = dir.0.join("long-player.json");
    let mut status: serde_json::Value = serde_json::from_str(STATE).unwrap();
    status["players"][1]["name"] = "n".repeat(70_000).into();
    std::fs::write(&state, status.to_string()).unwrap();
    let server = Server::start(&state, dir.0.join("long-player.log"), &[]);
    let warn = server.lines_with("string clipped");
    assert_eq!(warn.len(), 1, "{}", server.log_text());
    assert!(
        warn[0].contains("WARN")
            && warn[0].contains("1 string clipped to 4096 bytes: players[1].name (70000 bytes)"),
        "{}",
        warn[0]
    );
}

#[test]
fn sigterm_and_sigint_stop_cleanly_with_exit_heartbeats() {
    for sig in ["TERM", "INT"] {
        let dir = TempDir::new("serve-signal");
        let state = dir.0.join("state.json");
        std::fs::write(&state, STATE).unwrap();
        let master = UdpSocket::bind("127.0.0.1:0").unwrap();
        master
            .set_read_timeout(Some(Duration::from_millis(200)))
            .unwrap();
        let master_addr = master.local_addr().unwrap().to_string();
        let mut server = Server::start(
            &state,
            dir.0.join("serve.log"),
            &["--gamespy3-master", &master_addr],
        );
        // the first heartbeat comes at start
        let mut buf = [0u8; 2048];
        let mut heard = |want: StateChanged| {
            let t = Instant::now();
            while t.elapsed() < Duration::from_secs(5) {
                if let Ok(n) = master.recv(&mut buf) {
                    let hb = Heartbeat::decode(&buf[..n]).expect("a heartbeat");
                    if hb.state_changed == Some(want) {
                        return true;
                    }
                }
            }
            false
        };
        assert!(heard(StateChanged::Initial), "no first heartbeat");
        server.signal(sig);
        let status = server.wait_exit(Duration::from_secs(5));
        assert_eq!(
            status.code(),
            Some(0),
            "SIG{sig}; log:\n{}",
            server.log_text()
        );
        assert!(
            heard(StateChanged::Exiting),
            "SIG{sig}: no exiting heartbeat"
        );
        let stopped = server.lines_with("stopped");
        assert_eq!(stopped.len(), 1, "{}", server.log_text());
        assert!(
            stopped[0].contains(&format!("stopped on SIG{sig} ("))
                && stopped[0].contains("GameSpy v3 exit heartbeats sent to 1 master"),
            "{}",
            stopped[0]
        );
    }
}

#[test]
fn sighup_reads_the_file_at_once() {
    let dir = TempDir::new("serve-hup");
    let state = dir.0.join("state.json");
    std::fs::write(&state, STATE).unwrap();
    // polling every hour: only SIGHUP can make it read the file
    let server = Server::start(
        &state,
        dir.0.join("serve.log"),
        &["--reload-interval", "3600"],
    );
    let sock = client(server.port);
    assert_eq!(a2s_name(&sock).as_deref(), Some(HOST_NAME));
    let renamed = STATE.replace(HOST_NAME, "Renamed by SIGHUP");
    std::fs::write(&state, renamed).unwrap();
    std::thread::sleep(Duration::from_millis(300));
    assert_eq!(
        a2s_name(&sock).as_deref(),
        Some(HOST_NAME),
        "not read before SIGHUP"
    );
    let t = Instant::now();
    server.signal("HUP");
    let seen = until(Duration::from_secs(3), || {
        a2s_name(&sock).as_deref() == Some("Renamed by SIGHUP")
    });
    assert!(seen, "SIGHUP did not reload; log:\n{}", server.log_text());
    assert!(t.elapsed() < Duration::from_secs(2), "{:?}", t.elapsed());
    let lines = server.lines_with("SIGHUP");
    assert_eq!(lines.len(), 1, "{}", server.log_text());
    assert!(
        lines[0].contains("INFO") && lines[0].contains("reloaded"),
        "{}",
        lines[0]
    );
    // a broken file on SIGHUP: refused, the last good state served
    std::fs::write(&state, "{ \"host_name\": 5 }").unwrap();
    server.signal("HUP");
    let refused = until(Duration::from_secs(3), || {
        server.lines_with("SIGHUP").len() == 2
    });
    assert!(refused, "{}", server.log_text());
    let line = server.lines_with("SIGHUP").pop().unwrap();
    assert!(
        line.contains("ERROR") && line.contains("line 1 column 16: host_name: invalid type"),
        "{line}"
    );
    assert_eq!(a2s_name(&sock).as_deref(), Some("Renamed by SIGHUP"));
}
