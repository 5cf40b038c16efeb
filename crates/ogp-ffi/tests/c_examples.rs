//! The C examples (`examples/c/*.c`; `query.c` queries `game_server.c`), compiled against `libogp.a` with AddressSanitizer
//! and UndefinedBehaviorSanitizer, run on a free loopback port and queried with the
//! project's own client in every protocol while their status changes; then stopped with
//! SIGTERM: exit code 0 and no sanitizer report. The C++ wrapper's example
//! (`examples/cpp/`) queries itself through `ogp::query`.
//!
//! Needs C and C++ compilers with libasan and libubsan (`scripts/install-c.sh`): `cc` or
//! `$CC`, `c++` or `$CXX`.

mod common;

use std::net::SocketAddr;
use std::path::PathBuf;
use std::process::Command;
use std::time::Duration;

use common::{compile, compile_with, start, stop};

use ogp_proto::client::{Options, Timing};
use ogp_proto::Protocol;

/// A free loopback port, players changing every 150 ms.
const ARGS: &[&str] = &["--bind", "127.0.0.1", "--port", "0", "--tick-ms", "150"];

fn options() -> Options {
    Options::with_timing(
        Timing::default()
            .attempt_timeout(Duration::from_millis(300))
            .total_timeout(Duration::from_secs(3)),
    )
}

/// Queries the example in every protocol, checks the host name, and watches its player
/// count change over a second or so.
fn check_serving(port: u16, host_name: &str, name: &str) {
    let addr: SocketAddr = ([127, 0, 0, 1], port).into();
    for protocol in [
        Protocol::Ogp,
        Protocol::A2s,
        Protocol::Gamespy3,
        Protocol::Gqp,
    ] {
        let answer = ogp_net::blocking::query(addr, protocol, &options())
            .unwrap_or_else(|e| panic!("{name}: {} query failed: {e}", protocol.name()));
        assert_eq!(
            answer.status.host_name.as_deref(),
            Some(host_name),
            "{name}: {} host name",
            protocol.name()
        );
        assert!(
            answer.status.player_count().is_some(),
            "{name}: {} player count",
            protocol.name()
        );
    }
    let mut counts = std::collections::BTreeSet::new();
    for _ in 0..12 {
        let answer = ogp_net::blocking::query(addr, Protocol::Ogp, &options())
            .unwrap_or_else(|e| panic!("{name}: OGP query failed: {e}"));
        counts.insert(answer.status.player_count().unwrap_or(0));
        std::thread::sleep(Duration::from_millis(100));
    }
    assert!(
        counts.len() >= 2,
        "{name}: the player count never changed: {counts:?}"
    );
}

#[test]
fn game_server_managed_mode() {
    let bin = compile("game_server");
    let running = start(&bin, ARGS);
    check_serving(running.port, "C example server", "game_server");
    // examples/c/query.c, ogp_query from C, against it.
    let query = compile("query");
    let target = format!("127.0.0.1:{}", running.port);
    for protocol in ["auto", "a2s", "gamespy3"] {
        let output = Command::new(&query)
            .args([target.as_str(), protocol, "3000"])
            .env("ASAN_OPTIONS", "detect_leaks=1:abort_on_error=0")
            .output()
            .expect("running query");
        let stdout = String::from_utf8_lossy(&output.stdout);
        let stderr = String::from_utf8_lossy(&output.stderr);
        assert_eq!(
            output.status.code(),
            Some(0),
            "query {protocol}: {stdout} {stderr}"
        );
        assert!(!stderr.contains("Sanitizer"), "{stderr}");
        let v: serde_json::Value = serde_json::from_str(stdout.trim()).expect("JSON");
        assert_eq!(v["status"]["host_name"], "C example server", "{v}");
    }
    stop(running, "game_server");
}

#[test]
fn own_socket_mode() {
    let bin = compile("own_socket");
    let running = start(&bin, ARGS);
    check_serving(running.port, "C own-socket server", "own_socket");
    stop(running, "own_socket");
}

#[test]
fn cpp_wrapper_example() {
    let bin = compile_with(
        "CXX",
        "c++",
        "-std=c++17",
        "examples/cpp/example.cpp",
        "cpp_example",
    );
    let output = Command::new(&bin)
        .args(["--bind", "127.0.0.1", "--port", "0"])
        .env("ASAN_OPTIONS", "detect_leaks=1:abort_on_error=0")
        .env("UBSAN_OPTIONS", "print_stacktrace=1:halt_on_error=1")
        .output()
        .expect("running the C++ example");
    let stdout = String::from_utf8_lossy(&output.stdout);
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(
        !stderr.contains("Sanitizer") && !stderr.contains("runtime error"),
        "sanitizer report:\n{stderr}"
    );
    assert_eq!(
        output.status.code(),
        Some(0),
        "stdout:\n{stdout}\nstderr:\n{stderr}"
    );
    assert_eq!(
        stdout.lines().filter(|l| l.starts_with("ok ")).count(),
        2,
        "{stdout}"
    );
}

/// `ogp.h` alone compiles as strict C99 and C++11, warnings as errors.
#[test]
fn header_compiles_as_c99_and_cxx11() {
    let crate_dir = PathBuf::from(env!("CARGO_MANIFEST_DIR"));
    let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR"));
    let source = dir.join("ogp_h_only.c");
    std::fs::write(
        &source,
        "#include \"ogp.h\"\nint main(void) { ogp_config c; return ogp_config_init(&c) == OGP_OK ? 0 : 1; }\n",
    )
    .expect("writing the test source");
    for (var, default, args) in [
        ("CC", "cc", &["-std=c99"][..]),
        ("CXX", "c++", &["-std=c++11", "-x", "c++"][..]),
    ] {
        let cc = std::env::var(var).unwrap_or_else(|_| default.into());
        let output = Command::new(&cc)
            .args(args)
            .args(["-pedantic", "-Wall", "-Wextra", "-Werror", "-fsyntax-only"])
            .arg("-I")
            .arg(crate_dir.join("include"))
            .arg(&source)
            .output()
            .unwrap_or_else(|e| panic!("running {cc}: {e}"));
        assert!(
            output.status.success(),
            "{cc} {args:?}: ogp.h does not compile:\n{}",
            String::from_utf8_lossy(&output.stderr)
        );
    }
}

/// `ogp.pc.in`, filled in, is a valid pkg-config file giving the header and the library.
#[test]
fn pkg_config_template() {
    let crate_dir = PathBuf::from(env!("CARGO_MANIFEST_DIR"));
    let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("pkgconfig");
    std::fs::create_dir_all(&dir).expect("pkgconfig directory");
    let template = std::fs::read_to_string(crate_dir.join("ogp.pc.in")).expect("ogp.pc.in");
    let pc = template
        .replace("@PREFIX@", "/opt/ogp")
        .replace("@VERSION@", env!("CARGO_PKG_VERSION"));
    std::fs::write(dir.join("ogp.pc"), pc).expect("writing ogp.pc");
    let run = |args: &[&str]| {
        let output = Command::new("pkg-config")
            .args(args)
            .env("PKG_CONFIG_PATH", &dir)
            .output()
            .expect("running pkg-config (scripts/install-c.sh installs it)");
        assert!(output.status.success(), "pkg-config {args:?}: {output:?}");
        String::from_utf8_lossy(&output.stdout).trim().to_owned()
    };
    run(&["--validate", "ogp"]);
    assert_eq!(run(&["--modversion", "ogp"]), env!("CARGO_PKG_VERSION"));
    assert_eq!(run(&["--cflags", "ogp"]), "-I/opt/ogp/include");
    assert_eq!(run(&["--libs", "ogp"]), "-L/opt/ogp/lib -logp");
}
