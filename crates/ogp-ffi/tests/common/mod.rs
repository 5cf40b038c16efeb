//! What the C example tests share (`c_examples.rs`, `peers.rs`): compiling an example
//! against this build's `libogp.a` with AddressSanitizer and UndefinedBehaviorSanitizer,
//! starting it on a loopback port, and stopping it with SIGTERM (exit code 0, no
//! sanitizer report).
#![allow(dead_code)] // each test binary uses part of it

use std::io::{BufRead, BufReader, Read};
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStdout, Command, Stdio};
use std::time::{Duration, Instant};

/// `libogp.a` of this build: `cargo test` makes it in the `deps` directory the test
/// binary is in, with the features of the test build (a separate `cargo build -p ogp-ffi`
/// would resolve other features and compile some 45 crates a second time).
pub fn static_lib() -> PathBuf {
    let exe = std::env::current_exe().expect("test binary path");
    let dir = exe.parent().expect("target/<profile>/deps directory");
    let lib = dir.join("libogp.a");
    assert!(
        lib.exists(),
        "{} not found: `cargo test -p ogp-ffi` builds it",
        lib.display()
    );
    lib
}

/// `examples/c/{example}.c`, compiled as C11.
pub fn compile(example: &str) -> PathBuf {
    compile_with(
        "CC",
        "cc",
        "-std=c11",
        &format!("examples/c/{example}.c"),
        example,
    )
}

/// `source` (from the crate directory) compiled with `$var` (or `default`) and `std`,
/// warnings as errors, sanitizers on, linked with `libogp.a`, into `name` in the
/// target's temporary directory.
pub fn compile_with(var: &str, default: &str, std: &str, source: &str, name: &str) -> PathBuf {
    let crate_dir = PathBuf::from(env!("CARGO_MANIFEST_DIR"));
    // A name of its own for each compilation: test binaries run at the same time
    // (scripts/run-tests.py), and one writing an executable that another is running
    // fails with "Text file busy".
    static N: std::sync::atomic::AtomicU32 = std::sync::atomic::AtomicU32::new(0);
    let n = N.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    let out = PathBuf::from(env!("CARGO_TARGET_TMPDIR"))
        .join(format!("c-{name}-{}-{n}", std::process::id()));
    let cc = std::env::var(var).unwrap_or_else(|_| default.into());
    let output = Command::new(&cc)
        .args([std, "-Wall", "-Wextra", "-Werror", "-g", "-O1"])
        .args(["-fsanitize=address,undefined", "-fno-omit-frame-pointer"])
        .arg("-I")
        .arg(crate_dir.join("include"))
        .arg(crate_dir.join(source))
        .arg(static_lib())
        .args(["-lpthread", "-ldl", "-lm", "-lrt", "-lutil"])
        .arg("-o")
        .arg(&out)
        .output()
        .unwrap_or_else(|e| {
            panic!("running {cc}: {e} (install a C compiler: scripts/install-c.sh)")
        });
    assert!(
        output.status.success(),
        "compiling {source} failed (libasan/libubsan missing? run scripts/install-c.sh):\n{}",
        String::from_utf8_lossy(&output.stderr)
    );
    out
}

/// A running example: the process, the port from its `ready PORT` line, and the rest of
/// its standard output.
pub struct Running {
    pub child: Child,
    pub port: u16,
    stdout: BufReader<ChildStdout>,
}

impl Running {
    /// The rest of the first line of standard output that starts with `prefix` (lines
    /// before it are skipped); a panic when the output ends first.
    pub fn line_after(&mut self, prefix: &str) -> String {
        loop {
            let mut line = String::new();
            let n = self.stdout.read_line(&mut line).expect("reading stdout");
            assert!(n > 0, "the example's output ended before a {prefix:?} line");
            if let Some(rest) = line.trim_end().strip_prefix(prefix) {
                return rest.to_owned();
            }
        }
    }
}

impl Drop for Running {
    fn drop(&mut self) {
        // after a failed test; `stop` has reaped it otherwise
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// Starts `binary` with `args` under the sanitizers' options and waits for its
/// `ready PORT` line.
pub fn start(binary: &Path, args: &[&str]) -> Running {
    let mut child = Command::new(binary)
        .args(args)
        .env("ASAN_OPTIONS", "detect_leaks=1:abort_on_error=0")
        .env("UBSAN_OPTIONS", "print_stacktrace=1:halt_on_error=1")
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("starting the example");
    let stdout = BufReader::new(child.stdout.take().expect("stdout"));
    let mut running = Running {
        child,
        port: 0,
        stdout,
    };
    let line = running.line_after("ready ");
    running.port = line
        .parse()
        .unwrap_or_else(|_| panic!("bad ready line: ready {line:?}"));
    running
}

/// Stops it with SIGTERM: it must exit 0 within 10 s, without a sanitizer report.
pub fn stop(mut r: Running, name: &str) {
    // SAFETY: sending a signal to our own child process, by its id.
    let rc = unsafe { libc::kill(r.child.id() as libc::pid_t, libc::SIGTERM) };
    assert_eq!(rc, 0, "kill");
    let deadline = Instant::now() + Duration::from_secs(10);
    let status = loop {
        if let Some(s) = r.child.try_wait().expect("wait") {
            break s;
        }
        assert!(Instant::now() < deadline, "{name} did not stop on SIGTERM");
        std::thread::sleep(Duration::from_millis(20));
    };
    let mut stderr = String::new();
    if let Some(mut e) = r.child.stderr.take() {
        let _ = e.read_to_string(&mut stderr);
    }
    assert!(
        !stderr.contains("Sanitizer") && !stderr.contains("runtime error"),
        "{name}: sanitizer report:\n{stderr}"
    );
    assert_eq!(
        status.code(),
        Some(0),
        "{name} exit status; stderr:\n{stderr}"
    );
}
