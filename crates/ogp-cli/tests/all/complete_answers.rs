//! A busy server comes back whole: `ogp query` of an `ogp serve` with 96 players and 90
//! rules returns every player and every rule in OGP (asked for by name and found by
//! auto-detection), and the OGP v0.02 draft, because the client asks for split answers
//! by default; `--split 0` (one datagram) shows what the server had to leave out and says
//! so on stderr.

use crate::common;

use std::process::Command;
use std::time::Duration;

use common::*;
use serde_json::{json, Value};

const LIMIT: Duration = Duration::from_secs(20);

/// A state with `players` players and `rules` rules, each long enough that the whole
/// status is far over the 8 KiB an unsplit OGP answer may take.
fn busy_state(players: usize, rules: usize) -> String {
    let players: Vec<Value> = (0..players)
        .map(|i| {
            json!({
                "name": format!("player number {i:03} with a long name"),
                "score": i, "ping": 40 + i, "time": 3600 + i,
            })
        })
        .collect();
    let rules: serde_json::Map<String, Value> = (0..rules)
        .map(|i| {
            (
                format!("sv_rule_{i:03}"),
                Value::String(format!("value of rule {i:03}, long enough to count")),
            )
        })
        .collect();
    json!({
        "game_name": "busy", "host_name": "A busy server", "player_count": players.len(),
        "slot_max": 128, "map": {"name": "de_dust2"},
        "players": players, "rules": rules,
    })
    .to_string()
}

fn query(port: u16, args: &[&str]) -> Ran {
    let target = format!("127.0.0.1:{port}");
    run(
        Command::new(BIN)
            .args([
                "query",
                &target,
                "--json",
                "--timeout",
                "500",
                "--retries",
                "2",
            ])
            .args(args)
            .env_remove("OGP_LOG")
            .env_remove("RUST_LOG"),
        LIMIT,
    )
}

fn counts(ran: &Ran, label: &str) -> (usize, usize) {
    assert!(ran.code == Some(0), "{label}: {}", ran.describe());
    let v = parse_json(ran, "ogp query", label);
    let v = v.get("status").unwrap_or(&v);
    let players = v["players"].as_array().map_or(0, Vec::len);
    let rules = v["rules"].as_object().map_or(0, serde_json::Map::len);
    (players, rules)
}

#[test]
fn a_busy_server_comes_back_whole() {
    let state = busy_state(96, 90);
    let served = serve_with("busy", &state, &[], |s| {
        !exchange(
            s,
            b"\xff\xff\xff\xffTSource Engine Query\0",
            Duration::from_millis(300),
        )
        .is_empty()
    });
    for (label, args) in [
        ("ogp", &["-p", "ogp"][..]),
        ("auto", &[][..]),
        ("split 1400", &["-p", "ogp", "--split", "1400"][..]),
    ] {
        let ran = query(served.port, args);
        assert_eq!(counts(&ran, label), (96, 90), "{label}: {}", ran.describe());
        let err = &ran.stderr;
        assert!(!err.contains("has no"), "{label}: {err}");
    }
    // One datagram: the server drops whole sections to stay under 8 KiB, and the
    // client says which.
    let ran = query(served.port, &["-p", "ogp", "--split", "0"]);
    let (players, rules) = counts(&ran, "split 0");
    assert!(players < 96 || rules < 90, "{}", ran.describe());
    let err = &ran.stderr;
    assert!(
        err.contains("has no") && err.contains("rules"),
        "no warning about the missing sections: {}",
        ran.describe()
    );
}

#[test]
fn the_ogp_draft_comes_back_whole_too() {
    let port = free_port();
    let state = busy_state(96, 90);
    let draft = format!("127.0.0.1:{port}");
    let served = serve_with("busy-draft", &state, &["--listen-ogp-draft", &draft], |s| {
        !exchange(
            s,
            b"\xff\xff\xff\xffTSource Engine Query\0",
            Duration::from_millis(300),
        )
        .is_empty()
    });
    let _ = served.port;
    let ran = run(
        Command::new(BIN)
            .args([
                "query",
                &draft,
                "--json",
                "-p",
                "ogp-draft",
                "--timeout",
                "500",
            ])
            .env_remove("OGP_LOG")
            .env_remove("RUST_LOG"),
        LIMIT,
    );
    let (players, _) = counts(&ran, "draft");
    assert_eq!(players, 96, "{}", ran.describe());
}

#[test]
fn split_sizes_below_500_are_refused_by_name() {
    let ran = run(
        Command::new(BIN).args(["query", "127.0.0.1:1", "--split", "499"]),
        LIMIT,
    );
    assert_eq!(ran.code, Some(2), "{}", ran.describe());
    let err = &ran.stderr;
    assert!(err.contains("--split"), "{err}");
}
