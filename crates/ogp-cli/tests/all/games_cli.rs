//! The games catalogue from the command line (issue 32's done-when):
//! * `ogp games` lists at least 150 games (table and `--json`), filtered;
//! * `ogp query --game bf2 127.0.0.1` reads an `ogp serve` on the real fixed port 29900;
//! * an A2S game (Valheim, query port = game port + 1) is found from its game port;
//! * a Quake III game (OpenArena, the real server; `OGP_INTEROP=1`) by `--game` alone;
//! * results carry `game_id`, `game_name`, `game_rule`;
//! * `ogp scan` reads `game:ID HOST:PORT` lines;
//! * unknown ids fail with the three closest.

use crate::common;

use std::net::UdpSocket;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use common::master::ogp_ready;
use common::{ogp_run, out, run_with_input, serve_with, KillOnDrop, Ran, TempDir, BIN};
use serde_json::Value;

const LIMIT: Duration = Duration::from_secs(60);

fn ogp(args: &[&str]) -> Ran {
    ogp_run(args, LIMIT)
}

fn json_of(r: &Ran) -> Value {
    serde_json::from_slice(&r.stdout)
        .unwrap_or_else(|e| panic!("not JSON ({e}): {}\n{}", out(r), r.stderr))
}

/// A state file whose answers name a game: the demo state with these changes.
fn state_with(edit: impl FnOnce(&mut Value)) -> String {
    let mut v: Value =
        serde_json::from_str(include_str!("../../../ogp-proto/tests/data/state.json")).unwrap();
    edit(&mut v);
    v.to_string()
}

#[test]
fn games_lists_at_least_150_as_a_table_and_as_json() {
    let r = ogp(&["games"]);
    assert_eq!(r.code, Some(0), "{}", r.stderr);
    let lines: Vec<String> = out(&r).lines().map(str::to_string).collect();
    assert!(lines.len() > 150, "{} lines", lines.len());
    assert!(lines[0].starts_with("ID"), "{}", lines[0]);
    let bf2 = lines.iter().find(|l| l.starts_with("bf2 ")).unwrap();
    assert!(bf2.contains("Battlefield 2") && bf2.contains("gamespy3") && bf2.contains("29900"));

    let j = json_of(&ogp(&["games", "--json"]));
    let list = j.as_array().unwrap();
    assert!(list.len() >= 150);
    let v = list.iter().find(|g| g["id"] == "valheim").unwrap();
    assert_eq!(
        (v["port"].as_u64(), v["query_port"].as_u64()),
        (Some(2456), Some(2457))
    );
    assert_eq!(v["query"], "+1");
    assert!(v["sources"][0]["text"].as_str().unwrap().contains("http"));

    let r = ogp(&["games", "quake"]);
    let t = out(&r);
    assert!(
        t.contains("q3a") && t.contains("quakelive") && !t.contains("valheim"),
        "{t}"
    );
    let r = ogp(&["games", "no-such-game-anywhere"]);
    assert_eq!(r.code, Some(1));
}

#[test]
fn unknown_games_fail_with_the_three_closest() {
    let r = ogp(&["query", "--game", "valhiem", "127.0.0.1:1"]);
    assert_eq!(r.code, Some(2));
    assert!(
        r.stderr
            .contains("unknown game \"valhiem\"; closest: valheim, "),
        "{}",
        r.stderr
    );
    let r = ogp(&["query", "--game", "bf2", "-p", "a2s", "127.0.0.1"]);
    assert_eq!(r.code, Some(2), "{}", r.stderr);
    // without --game a port is still required
    let r = ogp(&["query", "127.0.0.1"]);
    assert_eq!(r.code, Some(2), "{}", r.stderr);
}

/// `ogp query --game` until it answers (the server may still be starting), bounded.
fn query_until_ok(args: &[&str]) -> (Value, Ran) {
    let t = Instant::now();
    loop {
        let r = ogp(args);
        if r.code == Some(0) {
            return (json_of(&r), r);
        }
        assert!(
            t.elapsed() < Duration::from_secs(30),
            "no answer: {}",
            r.stderr
        );
    }
}

/// Waits until UDP port `port` of 127.0.0.1 can be bound, for at most `limit`.
fn port_free(port: u16, limit: Duration) -> bool {
    let t = Instant::now();
    loop {
        if UdpSocket::bind(("127.0.0.1", port)).is_ok() {
            return true;
        }
        if t.elapsed() > limit {
            return false;
        }
        std::thread::sleep(Duration::from_millis(200));
    }
}

#[test]
fn bf2_is_queried_on_its_fixed_query_port_29900() {
    // The catalogue's port, not a test override: another test run may hold it for a
    // while, so wait for it; if it stays taken, say so loudly and skip.
    for attempt in 0..3 {
        if !port_free(29900, Duration::from_secs(30)) {
            eprintln!(
                "WARNING: bf2_is_queried_on_its_fixed_query_port_29900 NOT RUN: \
                 127.0.0.1:29900/udp stayed in use for 30 s"
            );
            return;
        }
        let dir = TempDir::new("games-bf2");
        let state = dir.0.join("state.json");
        std::fs::write(
            &state,
            state_with(|v| v["game_name"] = "battlefield2".into()),
        )
        .unwrap();
        let mut child = KillOnDrop(
            Command::new(BIN)
                .args(["serve", "--state"])
                .arg(&state)
                .args(["--listen", "127.0.0.1:29900"])
                .env("NO_COLOR", "1")
                .stdin(Stdio::null())
                .stdout(Stdio::null())
                .stderr(Stdio::null())
                .spawn()
                .unwrap(),
        );
        // taken between the check and the bind: the server exits; try again
        let sock = UdpSocket::bind("127.0.0.1:0").unwrap();
        sock.connect("127.0.0.1:29900").unwrap();
        let t = Instant::now();
        let mut up = false;
        while t.elapsed() < Duration::from_secs(10) {
            if child.0.try_wait().unwrap().is_some() {
                break;
            }
            if ogp_ready(&sock) {
                up = true;
                break;
            }
        }
        if !up {
            eprintln!("ogp serve could not take 127.0.0.1:29900 (attempt {attempt})");
            continue;
        }
        let (j, r) = query_until_ok(&["query", "--game", "bf2", "127.0.0.1", "--json", "-v"]);
        assert_eq!(j["protocol"], "gamespy3", "{j}");
        assert_eq!(j["addr"], "127.0.0.1:29900", "{j}");
        assert_eq!(j["game_id"], "bf2", "{j}");
        assert_eq!(j["game_name"], "Battlefield 2", "{j}");
        assert_eq!(j["game_rule"], "gamespy_gamename", "{j}");
        assert!(
            r.stderr.contains("game bf2 (Battlefield 2): protocol GameSpy v3, query port 29900 (default game port 16567; queries always go to port 29900)"),
            "{}",
            r.stderr
        );
        // the given game port does not matter to a fixed query port
        let (j, _) = query_until_ok(&[
            "query",
            "--game",
            "battlefield2",
            "127.0.0.1:16569",
            "--json",
        ]);
        assert_eq!(j["addr"], "127.0.0.1:29900", "{j}");
        return;
    }
    panic!("ogp serve never held 127.0.0.1:29900");
}

#[test]
fn an_a2s_game_is_found_on_game_port_plus_one_and_in_scan_lists() {
    let state = state_with(|v| {
        v["game_name"] = "Valheim".into();
        v["a2s"] = serde_json::json!({ "folder": "valheim", "app_id": 892970 });
    });
    let served = serve_with("games-valheim", &state, &[], ogp_ready);
    let game_port = served.port - 1;
    let target = format!("127.0.0.1:{game_port}");
    let (j, r) = query_until_ok(&["query", "--game", "valheim", &target, "--json", "-v"]);
    assert_eq!(j["protocol"], "a2s", "{j}");
    assert_eq!(j["addr"], format!("127.0.0.1:{}", served.port), "{j}");
    assert_eq!(j["game_id"], "valheim", "{j}");
    assert_eq!(j["game_rule"], "a2s_app_id", "{j}");
    assert!(
        r.stderr.contains(&format!(
            "query port {} (game port {game_port}; query port = game port +1)",
            served.port
        )),
        "{}",
        r.stderr
    );

    // the table output works the same way
    let r = ogp(&["query", "--game", "valheim", &target]);
    assert_eq!(r.code, Some(0), "{}", r.stderr);

    // --try-query-ports: every protocol, from the game's query port
    let (j, _) = query_until_ok(&[
        "query",
        "--game",
        "valheim",
        "--try-query-ports",
        &target,
        "--json",
    ]);
    assert_eq!(j["addr"], format!("127.0.0.1:{}", served.port), "{j}");
    assert_eq!(j["game_id"], "valheim", "{j}");

    // scan: `game:ID HOST:GAMEPORT`, and an unknown id is a bad line with suggestions
    let list = format!("game:valheim {target}\ngame:valhiem {target}\n");
    let r = run_with_input(
        Command::new(BIN)
            .args(["scan", "--json", "-"])
            .env("NO_COLOR", "1"),
        Some(list.as_bytes()),
        LIMIT,
    );
    let lines: Vec<Value> = out(&r)
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(lines.len(), 1, "{}\n{}", out(&r), r.stderr);
    assert_eq!(lines[0]["ok"], true, "{}", lines[0]);
    assert_eq!(lines[0]["game_id"], "valheim");
    assert_eq!(lines[0]["target"], format!("127.0.0.1:{}", served.port));
    assert!(
        r.stderr
            .contains("unknown game \"valhiem\"; closest: valheim"),
        "{}",
        r.stderr
    );
}

#[test]
fn a_quake3_game_is_found_by_game_alone() {
    if !common::enabled("a_quake3_game_is_found_by_game_alone") {
        return;
    }
    use ogp_testkit::gameservers::{OpenArena, OpenArenaConfig};
    let mut server = OpenArena::start(&OpenArenaConfig::default());
    let target = format!("127.0.0.1:{}", server.port);
    let (j, r) = query_until_ok(&["query", "--game", "openarena", &target, "--json", "-v"]);
    assert_eq!(j["protocol"], "quake3", "{j}");
    assert_eq!(j["game_id"], "openarena", "{j}");
    assert_eq!(j["game_name"], "OpenArena", "{j}");
    assert_eq!(j["game_rule"], "quake3_gamename", "{j}");
    assert!(r.stderr.contains("protocol Quake III"), "{}", r.stderr);
    assert!(server.terminate());
}
