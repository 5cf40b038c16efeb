//! `ogp-load master` in test mode (small numbers, debug build, a throwaway PostgreSQL
//! cluster): the benchmark of `crates/ogp-load/README.md` runs to its end and reports
//! every figure, and the restart after kill -9 loses nothing. It runs the `ogp` of the
//! same build (`target/debug/ogp`, built with the `master` feature by the test command,
//! which builds every target with `--features ogp-cli/master`).

use std::path::PathBuf;
use std::process::Command;

/// The `ogp` binary beside this test's directory (`target/debug/deps/..`).
fn ogp_bin() -> PathBuf {
    let exe = std::env::current_exe().unwrap();
    let dir = exe.parent().and_then(|d| d.parent()).unwrap();
    dir.join(format!("ogp{}", std::env::consts::EXE_SUFFIX))
}

#[test]
fn the_master_benchmark_runs_in_test_mode() {
    let load = env!("CARGO_BIN_EXE_ogp-load");
    let ogp = ogp_bin();
    assert!(
        ogp.is_file(),
        "{} missing: cargo build -p ogp-cli --features master (the test command builds it)",
        ogp.display()
    );
    let bin = ogp.to_str().unwrap();
    let out = Command::new(load)
        .args([
            "master",
            "--db",
            "postgres",
            "--simulated",
            "2000",
            "--servers",
            "60",
            "--requests",
            "10",
            "--clients",
            "5",
            "--list-seconds",
            "1",
            "--walkers",
            "2",
            "--instances",
            "2",
            "--ogp-bin",
            bin,
        ])
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{text}\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    for want in [
        "2000 simulated servers written",
        "60 live servers registered, verified and listed",
        "a second from the first uplink received to the last listed",
        "poll cycle again: 60 servers due at once",
        "| first page by players |",
        "| name |",
        "| details |",
        "| stats |",
        // the clients on one event loop, and the same requests from a thread each
        " client threads: p50 / p99 / max ms |",
        "    client threads: requests over 50 ms: ",
        " ms (with ",
        // 2,000 simulated, of which 20 Quake III and 20 GameSpy v1 servers, and 60 live
        "Valve list walked to its end: 2020 servers",
        "ogp master memory: VmHWM",
        "kill -9 and restart: serving 2060 servers (before: 2060)",
        "  | 1 | ",
        "  instance 2 up in ",
        "  | 2 | ",
        "2 instances: the regular cycle ",
        "default mix (1 in 30)",
    ] {
        assert!(text.contains(want), "no {want:?} in:\n{text}");
    }
    for list in ["dpmaster", "GameSpy v1"] {
        let line = text
            .lines()
            .find(|l| l.starts_with(&format!("{list} list read to its end")))
            .unwrap_or_else(|| panic!("no {list} walk in:\n{text}"));
        assert!(line.contains(": 20 servers,"), "{line}");
    }
}

/// `ogp-load fivem` in test mode (50 servers, one setting each): every server is read
/// whole (its four players) by `ogp scan`, and by gamedig when the interop peers are on
/// (`OGP_INTEROP=1`, as the test command sets).
#[test]
fn the_fivem_benchmark_reads_every_server() {
    let ogp = ogp_bin();
    assert!(ogp.is_file(), "{} missing", ogp.display());
    let gamedig = ogp_testkit::interop::enabled("the FiveM benchmark against gamedig");
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_ogp-load"));
    cmd.args(["fivem", "--targets", "50", "--max-in-flight", "64"])
        .args(["--concurrency", "25", "--ogp-bin", ogp.to_str().unwrap()]);
    if !gamedig {
        cmd.arg("--no-gamedig");
    }
    let out = cmd.output().unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{text}\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(text.contains("50 targets in "), "{text}");
    let read_all = |who: &str| {
        text.lines()
            .any(|l| l.starts_with(who) && l.contains(" read 50 of 50 in "))
    };
    assert!(read_all("  ogp scan --max-in-flight 64 "), "{text}");
    if gamedig {
        assert!(read_all("  gamedig  concurrency 25 "), "{text}");
        assert!(text.contains("ratio gamedig / ogp scan: time"), "{text}");
    }
}
