//! `ogp-load master` in test mode (small numbers, debug build, a throwaway PostgreSQL
//! cluster): the benchmark of `crates/ogp-load/README.md` runs to its end and reports
//! every figure, and the restart after kill -9 loses nothing. The `ogp-load` binary is
//! the workspace's (the test command builds every target); when it is missing (this
//! package's tests alone), the test says what to build.

use std::path::Path;
use std::process::Command;

use crate::common::BIN;

#[test]
fn the_master_benchmark_runs_in_test_mode() {
    let load = Path::new(BIN).with_file_name("ogp-load");
    assert!(
        load.is_file(),
        "{} missing: cargo build -p ogp-load (the test command builds it)",
        load.display()
    );
    let out = Command::new(&load)
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
            "--ogp-bin",
            BIN,
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
        "poll cycle again: 60 servers due at once",
        "| first page by players |",
        "| name |",
        "| details |",
        "| stats |",
        "Valve list walked to its end: 2060 servers",
        "ogp master memory: VmHWM",
        "kill -9 and restart: serving 2060 servers (before: 2060)",
    ] {
        assert!(text.contains(want), "no {want:?} in:\n{text}");
    }
}
