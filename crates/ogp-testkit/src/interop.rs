//! What the interop tests of every crate share (`ogp-cli`'s `interop_*.rs` against
//! `ogp serve`, `ogp-ffi`'s `peers.rs` against the C examples): the `OGP_INTEROP` gate,
//! finding the pinned third-party peers that `scripts/install-interop.sh` installs
//! (`shared/docs/interop.md` §1), running them with a time limit, and collecting
//! mismatches so that one run reports all of them.
//!
//! The gate: with `OGP_INTEROP=1` the tests run and a missing peer is a failure (an
//! installation error, [`missing_peer`]); otherwise they return at once after a note on
//! stderr ([`enabled`]).

use std::io::Read;
use std::net::{IpAddr, SocketAddr, TcpListener, UdpSocket};
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use serde_json::Value;

/// Longest a single client run may take (each is given short timeouts of its own).
pub const CLIENT_LIMIT: Duration = Duration::from_secs(30);

/// The pinned gamedig version (npm; `scripts/install-interop.sh` installs exactly these).
pub const GAMEDIG: &str = "5.3.3";
/// The pinned python-a2s version (PyPI, in the interop venv).
pub const PYTHON_A2S: &str = "1.4.2";
/// The pinned opengsq version (PyPI, in the interop venv).
pub const OPENGSQ: &str = "3.7.0";
/// The pinned mcstatus version (PyPI, in the interop venv).
pub const MCSTATUS: &str = "14.2.0";

// ------------------------------------------------------------------------------------
// Gate and peers

/// The workspace root.
pub fn root() -> PathBuf {
    PathBuf::from(concat!(env!("CARGO_MANIFEST_DIR"), "/../.."))
}

/// `target/interop` of the workspace, where the npm prefix and the Python venv live.
pub fn interop_dir() -> PathBuf {
    root().join("target/interop")
}

/// A file of the repository that must exist (a client script of ours, e.g.
/// `tests/interop/a2s_py.py`), by its path from the workspace root.
pub fn script(rel: &str) -> PathBuf {
    let p = root().join(rel);
    assert!(p.is_file(), "{} missing", p.display());
    p
}

/// Whether the interop tests are on (`OGP_INTEROP=1`); prints why not when they are off.
pub fn enabled(test: &str) -> bool {
    match std::env::var("OGP_INTEROP").as_deref() {
        Ok("1") => true,
        Ok(other) => {
            eprintln!("note: {test} not run: OGP_INTEROP={other:?} (set OGP_INTEROP=1)");
            false
        }
        Err(_) => {
            eprintln!(
                "note: {test} not run: the interop tests against real query clients run \
                 with OGP_INTEROP=1 (scripts/test.sh sets it, after \
                 scripts/install-interop.sh)"
            );
            false
        }
    }
}

/// Fails the test: a peer is missing (the tests are on, so it is an installation error).
pub fn missing_peer(what: &str) -> ! {
    panic!(
        "interop peer missing: {what}. Run scripts/install-interop.sh (from the repository \
         root) to install the pinned query clients, then run the tests again."
    )
}

/// qstat's `quakestat` binary (Debian package `qstat`), from `PATH` or `/usr/bin`.
pub fn quakestat() -> PathBuf {
    for dir in std::env::var_os("PATH")
        .map(|p| std::env::split_paths(&p).collect::<Vec<_>>())
        .unwrap_or_default()
        .into_iter()
        .chain([PathBuf::from("/usr/bin")])
    {
        let p = dir.join("quakestat");
        if p.is_file() {
            return p;
        }
    }
    missing_peer("quakestat (Debian package qstat)")
}

/// qstat asking the loopback server on `port` as `kind` (`-a2s`, `-gs3`, `-gs4` …)
/// for everything (`-R -P`), as JSON with raw names (`-json -nnx`), 2 retries.
pub fn qstat_run(kind: &str, port: u16) -> Ran {
    run(
        Command::new(quakestat())
            .args(["-json", "-nnx", "-R", "-P"])
            .args(["-retry", "2", "-interval", "0.5", "-timeout", "3"])
            .arg(kind)
            .arg(format!("127.0.0.1:{port}")),
        CLIENT_LIMIT,
    )
}

/// gamedig's command-line script (run it with `node`), after checking its version and
/// that `node` runs.
pub fn gamedig_js() -> PathBuf {
    let dir = interop_dir().join("npm/node_modules/gamedig");
    let js = dir.join("bin/gamedig.js");
    let version = std::fs::read_to_string(dir.join("package.json"))
        .ok()
        .and_then(|t| serde_json::from_str::<Value>(&t).ok())
        .and_then(|v| str_of(&v["version"]));
    if !js.is_file() || version.as_deref() != Some(GAMEDIG) {
        missing_peer(&format!(
            "gamedig {GAMEDIG} in {} (found {version:?})",
            dir.display()
        ));
    }
    if Command::new("node")
        .arg("--version")
        .stdout(Stdio::null())
        .status()
        .map_or(true, |s| !s.success())
    {
        missing_peer("node (needed by gamedig)");
    }
    js
}

/// The venv's python, after checking that `package` is there at `version` and `module`
/// imports.
pub fn venv_python(module: &str, package: &str, version: &str) -> PathBuf {
    let py = interop_dir().join("venv/bin/python");
    if !py.is_file() {
        missing_peer(&format!("the Python venv ({})", py.display()));
    }
    let check = format!(
        "import importlib.metadata as m, sys, {module}\n\
         sys.exit(m.version('{package}') != '{version}')"
    );
    let ok = Command::new(&py)
        .args(["-c", &check])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .is_ok_and(|s| s.success());
    if !ok {
        missing_peer(&format!("{package} {version} in {}", py.display()));
    }
    py
}

// ------------------------------------------------------------------------------------
// Processes

/// Kills and reaps the child when dropped (also when the test panics).
pub struct KillOnDrop(pub Child);

impl Drop for KillOnDrop {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// A directory under the system's temporary directory, removed when dropped.
pub struct TempDir(pub PathBuf);

impl TempDir {
    /// A new, empty directory whose name contains `name`, the process id and a counter.
    pub fn new(name: &str) -> Self {
        static NEXT: AtomicUsize = AtomicUsize::new(0);
        let p = std::env::temp_dir().join(format!(
            "ogp-interop-{}-{name}-{}",
            std::process::id(),
            NEXT.fetch_add(1, Ordering::Relaxed)
        ));
        let _ = std::fs::remove_dir_all(&p);
        std::fs::create_dir_all(&p).unwrap();
        Self(p)
    }
}

impl Drop for TempDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

/// What a client run printed.
pub struct Ran {
    /// The exit code (`None`: killed by a signal).
    pub code: Option<i32>,
    /// Standard output, as bytes.
    pub stdout: Vec<u8>,
    /// Standard error, decoded leniently.
    pub stderr: String,
    /// How long it ran.
    pub took: Duration,
}

impl Ran {
    /// Exit code, time, stdout and stderr, for a failure message.
    pub fn describe(&self) -> String {
        format!(
            "exit {:?} after {:.1?}\n--- stdout ---\n{}\n--- stderr ---\n{}",
            self.code,
            self.took,
            String::from_utf8_lossy(&self.stdout),
            self.stderr
        )
    }
}

/// Runs a command with stdin closed, killing it (and failing) after `limit`.
pub fn run(cmd: &mut Command, limit: Duration) -> Ran {
    run_with_input(cmd, None, limit)
}

/// Runs a command with `input` on its standard input (closed after it; closed at once
/// without), killing it (and failing) after `limit`.
pub fn run_with_input(cmd: &mut Command, input: Option<&[u8]>, limit: Duration) -> Ran {
    let t = Instant::now();
    let mut child = cmd
        .stdin(if input.is_some() {
            Stdio::piped()
        } else {
            Stdio::null()
        })
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap_or_else(|e| panic!("cannot start {cmd:?}: {e}"));
    if let (Some(mut stdin), Some(input)) = (child.stdin.take(), input) {
        let input = input.to_vec();
        // A thread of its own: a child that does not read cannot block the test.
        std::thread::spawn(move || {
            let _ = std::io::Write::write_all(&mut stdin, &input);
        });
    }
    let mut out = child.stdout.take().unwrap();
    let mut err = child.stderr.take().unwrap();
    let out_reader = std::thread::spawn(move || {
        let mut v = Vec::new();
        let _ = out.read_to_end(&mut v);
        v
    });
    let err_reader = std::thread::spawn(move || {
        let mut v = Vec::new();
        let _ = err.read_to_end(&mut v);
        String::from_utf8_lossy(&v).into_owned()
    });
    let mut child = KillOnDrop(child);
    let code = loop {
        if let Some(s) = child.0.try_wait().unwrap() {
            break s.code();
        }
        if t.elapsed() > limit {
            let _ = child.0.kill();
            let _ = child.0.wait();
            panic!("{cmd:?} did not finish within {limit:?}");
        }
        std::thread::sleep(Duration::from_millis(20));
    };
    Ran {
        code,
        stdout: out_reader.join().unwrap(),
        stderr: err_reader.join().unwrap(),
        took: t.elapsed(),
    }
}

/// The JSON a client printed, or a panic that shows the run.
pub fn parse_json(ran: &Ran, client: &str, label: &str) -> Value {
    serde_json::from_slice(&ran.stdout).unwrap_or_else(|e| {
        panic!(
            "{client} on {label}: output is not JSON ({e}); {}",
            ran.describe()
        )
    })
}

/// A UDP port free on 127.0.0.1 a moment ago (another process may take it meanwhile).
pub fn free_port() -> u16 {
    UdpSocket::bind("127.0.0.1:0")
        .and_then(|s| s.local_addr())
        .map(|a| a.port())
        .expect("a free UDP port")
}

/// `n` ports that nothing listens on at `ip`, for tests of refused queries: free for UDP
/// and for TCP a moment ago, and below the usual ephemeral range (32768–60999 on Linux),
/// so that the sockets opened next with port 0 (the test's own, a scan engine's, the
/// servers of test binaries running at the same time) cannot take them. Each process
/// starts at a place of its own in 20000–31999 and never hands out a port twice. `None`
/// when fewer than `n` are free there.
pub fn closed_ports(ip: IpAddr, n: usize) -> Option<Vec<SocketAddr>> {
    static NEXT: AtomicUsize = AtomicUsize::new(0);
    const FIRST: usize = 20_000;
    const SPAN: usize = 12_000;
    let offset = (std::process::id() as usize).wrapping_mul(7919) % SPAN;
    let mut out = Vec::with_capacity(n);
    for _ in 0..SPAN {
        if out.len() == n {
            break;
        }
        let k = NEXT.fetch_add(1, Ordering::Relaxed);
        let Ok(port) = u16::try_from(FIRST + (offset + k) % SPAN) else {
            continue;
        };
        let addr = SocketAddr::new(ip, port);
        if UdpSocket::bind(addr).is_ok() && TcpListener::bind(addr).is_ok() {
            out.push(addr);
        }
    }
    (out.len() == n).then_some(out)
}

/// One port that nothing listens on at 127.0.0.1 ([`closed_ports`]).
pub fn closed_port() -> SocketAddr {
    closed_ports(IpAddr::from([127, 0, 0, 1]), 1)
        .and_then(|v| v.into_iter().next())
        .expect("a closed port in 20000-31999")
}

// ------------------------------------------------------------------------------------
// Comparing

/// Mismatches found so far, reported together at the end.
#[derive(Default)]
pub struct Report(pub Vec<String>);

impl Report {
    /// Records a mismatch when `got != want`.
    pub fn eq<T: PartialEq + std::fmt::Debug>(&mut self, what: String, got: T, want: T) {
        if got != want {
            self.0
                .push(format!("{what}:\n    got  {got:?}\n    want {want:?}"));
        }
    }

    /// Compares lists, reporting the lengths and the first difference (lists are long).
    pub fn list<T: PartialEq + std::fmt::Debug>(&mut self, what: String, got: &[T], want: &[T]) {
        if got == want {
            return;
        }
        let at = got.iter().zip(want).position(|(g, w)| g != w);
        let at = at.unwrap_or(got.len().min(want.len()));
        self.0.push(format!(
            "{what}: {} entries, {} wanted; first difference at {at}:\n    got  {:?}\n    want {:?}",
            got.len(),
            want.len(),
            got.get(at),
            want.get(at),
        ));
    }

    /// qstat's JSON for a server (`q`) against our status (`s`): the name, max players
    /// and player count, which every qstat server type reports alike.
    pub fn qstat_counts(&mut self, q: &Value, s: &Value) {
        self.eq(
            "qstat: name".into(),
            str_of(&q["name"]),
            str_of(&s["host_name"]),
        );
        self.eq(
            "qstat: max players".into(),
            int_of(&q["maxplayers"]),
            int_of(&s["slot_max"]),
        );
        self.eq(
            "qstat: players".into(),
            int_of(&q["numplayers"]),
            int_of(&s["player_count"]),
        );
    }

    /// Records a failure as is.
    pub fn fail(&mut self, what: String) {
        self.0.push(what);
    }

    /// Fails the test with every mismatch recorded, if any.
    pub fn finish(self, client: &str) {
        assert!(
            self.0.is_empty(),
            "{client} disagrees with the served status:\n{}",
            self.0.join("\n")
        );
    }
}

/// A JSON string's value.
pub fn str_of(v: &Value) -> Option<String> {
    v.as_str().map(str::to_owned)
}

/// A JSON number's value when it is an integer (also written as `12.0`).
pub fn int_of(v: &Value) -> Option<i64> {
    v.as_i64()
        .or_else(|| v.as_f64().filter(|f| f.fract() == 0.0).map(|f| f as i64))
}

/// `v`, sorted.
pub fn sorted<T: Ord>(mut v: Vec<T>) -> Vec<T> {
    v.sort();
    v
}

/// What qstat's JSON output keeps of a string: its ASCII characters only.
pub fn ascii(s: &str) -> String {
    s.chars().filter(char::is_ascii).collect()
}

/// What gamedig makes of a UTF-8 string: its bytes decoded as Windows-1252 (gamedig's
/// "latin1" decoder), bytes that code page leaves undefined as U+FFFD.
pub fn as_cp1252(s: &str) -> String {
    s.bytes().map(cp1252).collect()
}

/// Windows-1252 for 0x80–0x9F (None: undefined there).
fn cp1252(b: u8) -> char {
    const HIGH: [Option<char>; 32] = [
        Some('€'),
        None,
        Some('‚'),
        Some('ƒ'),
        Some('„'),
        Some('…'),
        Some('†'),
        Some('‡'),
        Some('ˆ'),
        Some('‰'),
        Some('Š'),
        Some('‹'),
        Some('Œ'),
        None,
        Some('Ž'),
        None,
        None,
        Some('‘'),
        Some('’'),
        Some('“'),
        Some('”'),
        Some('•'),
        Some('–'),
        Some('—'),
        Some('˜'),
        Some('™'),
        Some('š'),
        Some('›'),
        Some('œ'),
        None,
        Some('ž'),
        Some('Ÿ'),
    ];
    match b {
        0x80..=0x9f => HIGH[usize::from(b - 0x80)].unwrap_or('\u{fffd}'),
        _ => char::from(b),
    }
}
