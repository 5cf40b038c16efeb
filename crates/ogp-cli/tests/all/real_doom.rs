//! Real servers, Chocolate Doom and Doomsday (issue #38).
//!
//! Chocolate Doom: Debian's `chocolate-server` 3.0.0 started
//! on loopback (`ogp_testkit::gameservers::doom`; it binds 0.0.0.0, runs with
//! `-privateserver`, and is only asked on 127.0.0.1), empty, then with a
//! `chocolate-doom` client (Freedoom: Phase 2) joined; read by `ogp query` (named and
//! auto-detected) and by Chocolate Doom's own reader, `chocolate-doom -query`, which
//! prints one line per server: ping, address, `players/max`, `(game)` once one is
//! chosen, and the description. They agree field by field.
//!
//! Doomsday: Debian's `doomsday-server` 2.3.1 playing Freedoom: Phase 1
//! (`ogp_testkit::gameservers::doomsday`), configured with a name, a description, a
//! map and a player limit; its beacon (on the first free UDP port of 13209 to 13224) read
//! by `ogp query`, named and auto-detected, and its first reply by `ogp decode`. No
//! other reader of the beacon runs here (Doomsday's own is its graphical client and the
//! curses shell), so the values are checked against the configuration.
//!
//! Runs only with `OGP_INTEROP=1` (a missing server fails: never a silent skip).

use crate::common;

use std::process::Command;
use std::time::Duration;

use common::*;
use ogp_testkit::gameservers::doom::{ChocolateDoom, CHOCOLATE_DOOM};
use ogp_testkit::gameservers::doomsday::{Doomsday, DoomsdayConfig};
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

#[test]
fn a_real_doomsday_server_read_by_ogp() {
    if !enabled("a_real_doomsday_server_read_by_ogp") {
        return;
    }
    let config = DoomsdayConfig {
        name: "OGP Doomsday test".into(),
        description: "a beacon on loopback".into(),
        map: "E1M3".into(),
        max_players: 6,
        ..DoomsdayConfig::default()
    };
    let server = Doomsday::start(&config);
    let port = server.beacon_port;
    for args in [&["-p", "doomsday"][..], &[]] {
        let v = ogp_query_port_json(args, port);
        assert_eq!(v["ok"], true, "{args:?}: {v}\n{}", server.log_tail());
        assert_eq!(v["protocol"], "doomsday", "{args:?}: {v}");
        let s = &v["status"];
        assert_eq!(s["host_name"], "OGP Doomsday test", "{s}");
        assert_eq!(s["map"]["name"], "E1M3", "{s}");
        assert_eq!(s["slot_max"], 6, "{s}");
        assert_eq!(s["player_count"], 0, "{s}");
        assert_eq!(s["game_name"], "doom1-freedoom", "{s}");
        assert_eq!(s["connect_port"], server.tcp_port, "{s}");
        assert!(
            str_of(&s["game_version"]).is_some_and(|v| v.starts_with("2.")),
            "{s}"
        );
        assert_eq!(s["rules"]["desc"], "a beacon on loopback", "{s}");
    }
    // the first reply, as a file, through `ogp decode` (the protocol guessed)
    let dir = std::env::temp_dir().join(format!("ogp-doomsday-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let file = dir.join("beacon.bin");
    std::fs::write(&file, &server.first_reply).unwrap();
    let ran = ogp_run(
        &["decode", "--json", file.to_str().unwrap()],
        Duration::from_secs(20),
    );
    let _ = std::fs::remove_dir_all(&dir);
    let text = out(&ran);
    assert!(
        text.contains("\"doomsday\"") && text.contains("OGP Doomsday test"),
        "{}",
        ran.describe()
    );
}

/// A hostile Doomsday beacon (replayed): escape sequences and bidirectional controls in
/// its name and map, then a zlib bomb. The first is read, kept as sent in JSON and
/// passes no control character to human output; the bomb is an error, quickly.
#[test]
fn a_hostile_doomsday_beacon_reaches_no_terminal_and_its_bomb_is_an_error() {
    use ogp_proto::doomsday::wire::{pack, Member, Reply, Value as DsValue};
    if !enabled("a_hostile_doomsday_beacon_reaches_no_terminal_and_its_bomb_is_an_error") {
        return;
    }
    let mut reply = Reply::default();
    reply.service_port = 13209;
    reply.members = vec![
        Member::new("name", DsValue::Text(HOSTILE.into())),
        Member::new("map", DsValue::Text(HOSTILE.into())),
    ];
    let mut good = Vec::new();
    reply.encode(&mut good);
    let mut bomb = vec![0x99, 0x33, 0, 0, 0x01, 0x00];
    bomb.extend_from_slice(&pack(&vec![0u8; 1 << 20]));
    for (label, answer) in [("hostile", good), ("bomb", bomb)] {
        let replay = ogp_testkit::replay::Replay::start(move |req| {
            if req == ogp_proto::doomsday::REQUEST {
                vec![answer.clone()]
            } else {
                Vec::new()
            }
        });
        let port = replay.addr().port();
        let target = format!("127.0.0.1:{port}");
        let v = ogp_query_port_json(&["-p", "doomsday"], port);
        if label == "bomb" {
            assert_eq!(v["ok"], false, "{v}");
            continue;
        }
        assert_eq!(v["status"]["host_name"], HOSTILE, "{v}");
        for args in [
            &["query", "-p", "doomsday", &target][..],
            &["query", &target],
        ] {
            let ran = ogp_run(args, Duration::from_secs(20));
            let text = out(&ran);
            assert!(text.contains("evil"), "{}", ran.describe());
            assert!(unsafe_chars(&text).is_empty(), "{args:?}: {text:?}");
        }
    }
}
