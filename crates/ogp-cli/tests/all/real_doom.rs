//! Real servers, Chocolate Doom (issue #38): Debian's `chocolate-server` 3.0.0 started
//! on loopback (`ogp_testkit::gameservers::doom`; it binds 0.0.0.0, runs with
//! `-privateserver`, and is only asked on 127.0.0.1), empty, then with a
//! `chocolate-doom` client (Freedoom: Phase 2) joined; read by `ogp query` (named and
//! auto-detected) and by Chocolate Doom's own reader, `chocolate-doom -query`, which
//! prints one line per server: ping, address, `players/max`, `(game)` once one is
//! chosen, and the description. They agree field by field.
//!
//! Runs only with `OGP_INTEROP=1` (a missing server fails: never a silent skip).

use crate::common;

use std::process::Command;
use std::time::Duration;

use common::*;
use ogp_testkit::gameservers::doom::{ChocolateDoom, CHOCOLATE_DOOM};
use serde_json::Value;

/// `chocolate-doom -query`'s line for the server: players, max, game, description.
fn chocolate_query(port: u16) -> (i64, i64, Option<String>, String) {
    let target = format!("127.0.0.1:{port}");
    let ran = run(
        Command::new(CHOCOLATE_DOOM)
            .args(["-query", &target])
            .env("SDL_VIDEODRIVER", "dummy")
            .env("HOME", std::env::temp_dir()),
        CLIENT_LIMIT,
    );
    let stdout = String::from_utf8_lossy(&ran.stdout).into_owned();
    let line = stdout
        .lines()
        .rev()
        .find(|l| l.contains(&target) && !l.contains("Querying"))
        .unwrap_or_else(|| panic!("no line for {target}: {}", ran.describe()));
    // "   1 127.0.0.1:P       1/4 (doom2) NAME"
    let rest = line
        .split_once(&target)
        .map(|(_, r)| r.trim_start())
        .unwrap_or("");
    let (counts, rest) = rest.split_once(' ').unwrap_or((rest, ""));
    let (p, m) = counts.split_once('/').expect("players/max");
    let (game, name) = match rest.strip_prefix('(').and_then(|r| r.split_once(") ")) {
        Some((g, n)) => (Some(g.to_owned()), n),
        None => (None, rest),
    };
    (
        p.parse().expect("players"),
        m.parse().expect("max"),
        game,
        name.to_owned(),
    )
}

fn agree(label: &str, ours: &Value, port: u16) {
    let (players, max, game, name) = chocolate_query(port);
    let s = &ours["status"];
    let mut r = Report::default();
    r.eq(
        format!("{label} players"),
        Some(players),
        int_of(&s["player_count"]),
    );
    r.eq(
        format!("{label} max players"),
        Some(max),
        int_of(&s["slot_max"]),
    );
    r.eq(format!("{label} game"), game, str_of(&s["game_name"]));
    r.eq(
        format!("{label} description"),
        Some(name),
        str_of(&s["host_name"]),
    );
    r.finish("chocolate-doom -query");
}

#[test]
fn a_real_chocolate_doom_server_read_by_ogp_and_chocolate_doom() {
    if !enabled("a_real_chocolate_doom_server_read_by_ogp_and_chocolate_doom") {
        return;
    }
    let mut server = ChocolateDoom::start("OGP Doom test");
    let port = server.port;
    for args in [&["-p", "doom"][..], &[]] {
        let v = ogp_query_port_json(args, port);
        assert_eq!(v["ok"], true, "{args:?}: {v}");
        assert_eq!(v["protocol"], "doom", "{args:?}: {v}");
        let s = &v["status"];
        assert_eq!(s["host_name"], "OGP Doom test");
        assert_eq!(s["player_count"], 0);
        assert_eq!(s["game_mode"], "indetermined");
        assert!(s.get("game_name").is_none(), "{s}");
        assert!(
            str_of(&s["game_version"]).is_some_and(|v| v.starts_with("Chocolate Doom 3.")),
            "{s}"
        );
        assert_eq!(s["rules"]["state"], "waiting");
    }
    agree("empty", &ogp_query_port_json(&["-p", "doom"], port), port);

    server.join_player();
    let v = ogp_query_port_json(&[], port);
    assert_eq!(v["protocol"], "doom", "{v}");
    let s = &v["status"];
    assert_eq!(s["player_count"], 1, "{s}");
    assert_eq!(s["slot_max"], 4, "{s}");
    // Freedoom: Phase 2 is a Doom II IWAD (commercial)
    assert_eq!(s["game_name"], "doom2", "{s}");
    assert_eq!(s["game_mode"], "commercial", "{s}");
    agree("one player", &v, port);
}

/// A hostile Chocolate Doom server (replayed): escape sequences and bidirectional
/// controls in its description and version, a count byte announcing 255 protocols and
/// 60 KiB of names after it. The query reads it within our caps, JSON keeps the text as
/// sent, and human output passes no control character to the terminal.
#[test]
fn a_hostile_doom_server_reaches_no_terminal() {
    if !enabled("a_hostile_doom_server_reaches_no_terminal") {
        return;
    }
    let mut reply = vec![0, 0x0e];
    reply.extend_from_slice(format!("Chocolate {HOSTILE}\0").as_bytes());
    reply.extend_from_slice(&[1, 3, 4, 2, 1]);
    reply.extend_from_slice(format!("{HOSTILE}\0").as_bytes());
    reply.push(255);
    while reply.len() < 60_000 {
        reply.extend_from_slice(b"PROTOCOL\0");
    }
    let replay = ogp_testkit::replay::Replay::start(move |req| {
        if req == [0, 0x0d] {
            vec![reply.clone()]
        } else {
            Vec::new()
        }
    });
    let port = replay.addr().port();
    let v = ogp_query_port_json(&["-p", "doom"], port);
    assert_eq!(v["status"]["host_name"], HOSTILE, "{v}");
    let protocols = str_of(&v["status"]["rules"]["protocols"]).unwrap_or_default();
    assert_eq!(
        protocols.split(',').count(),
        ogp_proto::doom::wire::MAX_PROTOCOLS
    );
    let target = format!("127.0.0.1:{port}");
    for args in [&["query", "-p", "doom", &target][..], &["query", &target]] {
        let ran = ogp_run(args, Duration::from_secs(20));
        let text = out(&ran);
        assert!(text.contains("evil"), "{}", ran.describe());
        assert!(unsafe_chars(&text).is_empty(), "{args:?}: {text:?}");
    }
}
