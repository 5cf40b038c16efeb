//! A hostile server cannot steer the user's terminal: host names, map names and player
//! names with escape sequences (clear screen, recolour), C1 controls and bidirectional
//! overrides are shown replaced in every human output (`ogp query`, `ogp scan`'s
//! table), and kept as they are in JSON.

use crate::common;

use std::process::Command;
use std::time::Duration;

use common::*;
use serde_json::json;

const LIMIT: Duration = Duration::from_secs(20);

fn served() -> Served {
    let state = json!({
        "game_name": "hostile", "host_name": HOSTILE, "player_count": 1, "slot_max": 8,
        "map": {"name": format!("map{HOSTILE}")},
        "players": [{"name": format!("p{HOSTILE}"), "score": 1}],
        "rules": {format!("k{HOSTILE}"): format!("v{HOSTILE}")},
    })
    .to_string();
    serve_with("hostile", &state, &[], |s| {
        !exchange(
            s,
            b"\xff\xff\xff\xffTSource Engine Query\0",
            Duration::from_millis(300),
        )
        .is_empty()
    })
}

#[test]
fn query_and_scan_output_is_safe_for_a_terminal() {
    let server = served();
    let target = format!("127.0.0.1:{}", server.port);
    for protocol in ["ogp", "a2s", "gamespy3", "gqp", "auto"] {
        let ran = run(
            Command::new(BIN)
                .args(["query", &target, "-p", protocol, "-v", "--timeout", "500"])
                .env_remove("OGP_LOG"),
            LIMIT,
        );
        assert_eq!(ran.code, Some(0), "{protocol}: {}", ran.describe());
        let out = String::from_utf8_lossy(&ran.stdout);
        assert!(out.contains("evil"), "{protocol}: {out}");
        assert_eq!(
            unsafe_chars(&out),
            Vec::<char>::new(),
            "{protocol} stdout: {out:?}"
        );
        assert_eq!(
            unsafe_chars(&ran.stderr),
            Vec::<char>::new(),
            "{protocol} stderr"
        );
    }
    // The scan table.
    let list = format!("ogp {target}\na2s {target}\ngamespy3 {target}\nauto {target}\n");
    let out = run_with_input(
        Command::new(BIN)
            .args(["scan", "--no-progress", "-"])
            .env_remove("OGP_LOG"),
        Some(list.as_bytes()),
        LIMIT,
    );
    let table = String::from_utf8_lossy(&out.stdout);
    assert_eq!(
        table.lines().filter(|l| l.contains("evil")).count(),
        4,
        "{table}"
    );
    assert_eq!(
        unsafe_chars(&table),
        Vec::<char>::new(),
        "scan table: {table:?}"
    );
    // JSON keeps the name exactly (escaped by JSON itself).
    let ran = run(
        Command::new(BIN)
            .args(["query", &target, "--json", "-p", "a2s"])
            .env_remove("OGP_LOG"),
        LIMIT,
    );
    let v: serde_json::Value = serde_json::from_slice(&ran.stdout).unwrap();
    let status = v.get("status").unwrap_or(&v);
    assert_eq!(status["host_name"], HOSTILE);
}
