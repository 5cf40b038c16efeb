//! The command line as a careful user meets it: every flag validated with a message that
//! names it, `RUST_LOG` and `-q`/`-v`/`-vv` deciding what goes to standard error,
//! shell completions and a man page, host names in `--listen`, a hint when the OGP
//! draft is asked on a main port, one log line per listening address.

use crate::common;

use std::net::UdpSocket;
use std::process::Command;
use std::time::Duration;

use common::*;

const LIMIT: Duration = Duration::from_secs(20);
const STATE: &str = include_str!("../../../ogp-proto/tests/data/state.json");

fn ogp(args: &[&str]) -> Ran {
    run(
        Command::new(BIN)
            .args(args)
            .env_remove("OGP_LOG")
            .env_remove("RUST_LOG"),
        LIMIT,
    )
}

#[test]
fn bad_values_are_refused_naming_the_flag() {
    for (args, flag) in [
        (&["query", "127.0.0.1:99999"][..], "HOST:PORT"),
        (&["query", "127.0.0.1:0"][..], "HOST:PORT"),
        (&["query", "::1:27015"][..], "HOST:PORT"),
        (&["query", "127.0.0.1:1", "--timeout", "0"][..], "--timeout"),
        (&["query", "127.0.0.1:1", "--split", "100"][..], "--split"),
        (&["scan", "--rate", "0", "-"][..], "--rate"),
        (&["scan", "--timeout", "0", "-"][..], "--timeout"),
        (&["scan", "--deadline", "0", "-"][..], "--deadline"),
        (&["scan", "--sockets", "0", "-"][..], "--sockets"),
        (
            &["scan", "--max-in-flight", "0", "-"][..],
            "--max-in-flight",
        ),
        (&["serve", "--state", "x", "--rate", "0"][..], "--rate"),
        (&["serve", "--state", "x", "--rate", "NaN"][..], "--rate"),
        (&["serve", "--state", "x", "--burst", "0.5"][..], "--burst"),
        (
            &["serve", "--state", "x", "--reload-interval", "0"][..],
            "--reload-interval",
        ),
        (
            &["serve", "--state", "x", "--listen", "nosuch.invalid:1"][..],
            "--listen",
        ),
        (
            &["serve", "--state", "x", "--listen", "localhost:99999"][..],
            "--listen",
        ),
        (&["-q", "-v", "demo"][..], "--quiet"),
    ] {
        let r = ogp(args);
        assert_eq!(r.code, Some(2), "{args:?}: {}", r.describe());
        assert!(
            r.stderr.contains(flag),
            "{args:?} should name {flag}: {}",
            r.stderr
        );
    }
}

#[test]
fn completions_and_man_page() {
    for shell in ["bash", "zsh", "fish", "elvish", "powershell"] {
        let r = ogp(&["completions", shell]);
        assert_eq!(r.code, Some(0), "{shell}: {}", r.describe());
        let out = String::from_utf8_lossy(&r.stdout);
        assert!(
            out.contains("ogp") && out.contains("scan"),
            "{shell}: {out}"
        );
    }
    let r = ogp(&["man"]);
    assert_eq!(r.code, Some(0), "{}", r.describe());
    let man = String::from_utf8_lossy(&r.stdout);
    assert!(man.contains(".TH ogp 1"), "{man}");
    for sub in ["query", "serve", "scan", "decode"] {
        assert!(man.contains(sub), "{sub} missing from the man page");
    }
}

#[test]
fn verbosity_and_logging() {
    let served = serve_with("flags", STATE, &[], |s| {
        !exchange(
            s,
            b"\xff\xff\xff\xffTSource Engine Query\0",
            Duration::from_millis(300),
        )
        .is_empty()
    });
    let target = format!("127.0.0.1:{}", served.port);
    // -v: the exchange on stderr, not stdout.
    let r = ogp(&["query", &target, "-p", "a2s", "-v"]);
    assert_eq!(r.code, Some(0), "{}", r.describe());
    assert!(r.stderr.contains("→ "), "{}", r.describe());
    assert!(!String::from_utf8_lossy(&r.stdout).contains("→ "));
    // -vv: hex dumps of the datagrams (A2S_INFO starts ff ff ff ff 54).
    let r = ogp(&["query", &target, "-p", "a2s", "-vv"]);
    assert!(r.stderr.contains("ff ff ff ff 54"), "{}", r.describe());
    // the global flag goes before the subcommand too
    let r = ogp(&["-v", "query", &target, "-p", "ogp"]);
    assert!(r.stderr.contains("→ "), "{}", r.describe());
    // -q: the result only.
    let r = ogp(&["query", &target, "-p", "a2s", "-q"]);
    assert_eq!(r.code, Some(0));
    assert_eq!(r.stderr.trim(), "", "{}", r.describe());
    // RUST_LOG decides what serve logs: info shows the listening line, warn hides it.
    let dir = TempDir::new("rust-log");
    let state = dir.0.join("s.json");
    std::fs::write(&state, STATE).unwrap();
    for (filter, shown) in [("info", true), ("warn", false)] {
        let port = free_port();
        let mut child = KillOnDrop(
            Command::new(BIN)
                .args(["serve", "--state"])
                .arg(&state)
                .args(["--listen", &format!("localhost:{port}")])
                .env("RUST_LOG", filter)
                .env("NO_COLOR", "1")
                .stdout(std::process::Stdio::null())
                .stderr(std::process::Stdio::piped())
                .spawn()
                .unwrap(),
        );
        // localhost resolves: the server answers on 127.0.0.1.
        let sock = UdpSocket::bind("127.0.0.1:0").unwrap();
        sock.connect(("127.0.0.1", port)).unwrap();
        let mut answered = false;
        for _ in 0..50 {
            if !exchange(
                &sock,
                b"\xff\xff\xff\xffTSource Engine Query\0",
                Duration::from_millis(100),
            )
            .is_empty()
            {
                answered = true;
                break;
            }
            std::thread::sleep(Duration::from_millis(100));
        }
        if !answered {
            stop(&mut child);
            let mut err = String::new();
            let _ = std::io::Read::read_to_string(child.0.stderr.as_mut().unwrap(), &mut err);
            panic!("serve --listen localhost:{port} does not answer on 127.0.0.1: {err}");
        }
        stop(&mut child);
        let mut err = String::new();
        std::io::Read::read_to_string(child.0.stderr.as_mut().unwrap(), &mut err).unwrap();
        assert_eq!(
            err.contains(&format!("listening on 127.0.0.1:{port}")),
            shown,
            "RUST_LOG={filter}: {err}"
        );
        assert!(!err.contains('\u{1b}'), "NO_COLOR: {err:?}");
    }
}

/// Stops `ogp serve` with SIGTERM (a clean stop) and waits for it.
fn stop(child: &mut KillOnDrop) {
    let _ = Command::new("kill")
        .args(["-TERM", &child.0.id().to_string()])
        .status();
    let _ = child.0.wait();
}

#[test]
fn the_draft_asked_on_a_main_port_gets_a_hint() {
    let served = serve_with("draft-hint", STATE, &[], |s| {
        !exchange(
            s,
            b"\xff\xff\xff\xffTSource Engine Query\0",
            Duration::from_millis(300),
        )
        .is_empty()
    });
    let target = format!("127.0.0.1:{}", served.port);
    let r = ogp(&[
        "query",
        &target,
        "-p",
        "ogp-draft",
        "--timeout",
        "100",
        "--retries",
        "0",
    ]);
    assert_eq!(r.code, Some(1), "{}", r.describe());
    assert!(r.stderr.contains("port of its own"), "{}", r.describe());
}
