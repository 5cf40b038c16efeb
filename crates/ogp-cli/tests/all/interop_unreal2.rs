//! Unreal 2: a real Killing Floor server's replies (`crates/ogp-proto/tests/data/unreal2/`,
//! one information datagram, rules in three datagrams, players) replayed on loopback by
//! `ogp_testkit::replay::Replay`, and read by us and by the three third-party clients.
//!
//! * Ours, always: `ogp query -p unreal2 --json`, `ogp query --json` (auto-detection) and
//!   `ogp scan` lines in qstat's names (`ut2004s HOST:PORT`) read the replay.
//! * With `OGP_INTEROP=1`: qstat 2.17 (`-ut2s`, `-ut2004s`), gamedig 5.3.3
//!   (`protocol-unreal2`) and opengsq 3.7.0 (`Unreal2`, `tests/interop/unreal2_py.py`)
//!   read the same replay, and agree with our JSON field by field.
//!
//! What each client gives, asserted as such (client habits, not ours):
//!
//! | | qstat `-ut2s -json` | gamedig `protocol-unreal2` | opengsq `Unreal2` |
//! |---|---|---|---|
//! | port given | the game port: it asks port + 1 | the query port | the query port |
//! | requests | `78 00 00 00 00`, then `03` (all), resent | `00`, `01`, `02`, each waiting its whole timeout for more datagrams | `00`, `01`, `02`, one datagram each |
//! | host name | ESC and bytes ≥ 0x80 dropped, the colour's ASCII bytes kept (`@@WWW…`) | colour codes stripped | colour codes stripped, then bytes that are not UTF-8 |
//! | rules | every datagram, a value per answer joined with `\|` (its resends answer twice); `Mutator` joined | every datagram; mutators apart | the first datagram only; mutators apart |
//! | Killing Floor's waves | not read | read (told by the `KillingFloorMut` mutator) | not read: the waves are taken for ping and flags |
//! | players | name, score, ping (`team` from the stats id's bits) | `raw.id`, `raw.ping`, `raw.score`, `raw.statsId`; ping 0 makes a bot | id, name, ping, score, stats id |
//!
//! A real server's answer to qstat's `03` is not in the capture; the replay answers it
//! with the three replies in order.

use crate::common;

use std::net::SocketAddr;
use std::process::Command;

use common::*;
use ogp_testkit::replay::Replay;
use serde_json::Value;

/// The capture's datagrams: information, rules, players.
fn capture() -> [Vec<Vec<u8>>; 3] {
    let p = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../ogp-proto/tests/data/unreal2/cuzus-killingfloor.json"
    );
    let v: Value = serde_json::from_str(&std::fs::read_to_string(p).expect("capture")).unwrap();
    ["info", "rules", "players"].map(|k| {
        v["responses"][k]
            .as_array()
            .unwrap()
            .iter()
            .map(|h| from_hex(h.as_str().unwrap()))
            .collect()
    })
}

fn from_hex(s: &str) -> Vec<u8> {
    (0..s.len())
        .step_by(2)
        .map(|i| u8::from_str_radix(&s[i..i + 2], 16).unwrap())
        .collect()
}

/// A server replaying the capture on `addr` (port 0: any): each request is answered
/// with the datagrams of its kind (`03`: all three replies).
fn replay_on(addr: SocketAddr) -> Replay {
    let [info, rules, players] = capture();
    Replay::start_on(addr, move |req: &[u8]| {
        if req.len() != 5 || req[1..4] != [0, 0, 0] {
            return Vec::new();
        }
        match req[4] {
            0 => info.clone(),
            1 => rules.clone(),
            2 => players.clone(),
            3 => [&info[..], &rules[..], &players[..]].concat(),
            _ => Vec::new(),
        }
    })
}

fn replay() -> Replay {
    replay_on("127.0.0.1:0".parse().unwrap())
}

/// The players of a client's JSON array `v` as (name, score, ping), each read at its JSON
/// pointer (`/name`, `/raw/score`).
fn players_at(v: &Value, name: &str, score: &str, ping: &str) -> Vec<(String, i64, i64)> {
    let at = |p: &Value, ptr: &str| p.pointer(ptr).cloned().unwrap_or(Value::Null);
    v.as_array()
        .map(|a| {
            a.iter()
                .map(|p| {
                    (
                        str_of(&at(p, name)).unwrap_or_default(),
                        int_of(&at(p, score)).unwrap_or(i64::MIN),
                        int_of(&at(p, ping)).unwrap_or(i64::MIN),
                    )
                })
                .collect()
        })
        .unwrap_or_default()
}

/// What the capture says, as our JSON must say it.
fn check_ours(v: &Value, what: &str) {
    let s = &v["status"];
    assert_eq!(v["ok"], true, "{what}: {v}");
    assert_eq!(v["protocol"], "unreal2", "{what}");
    assert_eq!(
        s["host_name"], "WWW.CUZUS.ORG - BOSS RAGE - V1065",
        "{what}"
    );
    assert!(
        str_of(&s["host_name_raw"]).is_some_and(|h| h.starts_with("\u{1b}\u{fe}@@WWW")),
        "{what}: {s}"
    );
    assert_eq!(s["map"]["name"], "KF-No-Mercy_TA", "{what}");
    assert_eq!(s["game_type"], "SRGameType", "{what}");
    assert_eq!(
        (s["player_count"].as_u64(), s["slot_max"].as_u64()),
        (Some(2), Some(24))
    );
    assert_eq!(
        s["rules"]["Mutator"].as_array().map(Vec::len),
        Some(23),
        "{what}"
    );
    assert_eq!(s["rules"]["wave_total"], "10", "{what}");
    let players = players_at(&s["players"], "/name", "/score", "/ping");
    assert_eq!(
        players,
        [("_Mary911".into(), 2297, 100), ("_27".into(), 2093, 100)],
        "{what}"
    );
    assert_eq!(v["datagrams"], 5, "{what}");
}

#[test]
fn ogp_reads_the_replayed_server() {
    let r = replay();
    let target = r.addr().to_string();
    check_ours(&ogp_query_json(&["-p", "unreal2"], &target), "-p unreal2");
    check_ours(&ogp_query_json(&[], &target), "auto-detection");
    // qstat's type names in a scan list
    let ran = ogp_run_with_input(
        &["scan", "-", "--json", "--timeout", "1000"],
        Some(format!("ut2004s {target}\n").as_bytes()),
        CLIENT_LIMIT,
    );
    let line = String::from_utf8_lossy(&ran.stdout);
    let v: Value = serde_json::from_str(line.lines().next().unwrap_or_default())
        .unwrap_or_else(|e| panic!("scan: {e}: {}", ran.describe()));
    check_ours(&v, "scan ut2004s");
}

/// Splits qstat's `a|b|…` value, one entry per answer it took.
fn split_bar(v: &Value) -> Vec<String> {
    str_of(v)
        .map(|s| s.split('|').map(str::to_string).collect())
        .unwrap_or_default()
}

#[test]
fn third_party_clients_agree_with_ours() {
    if !enabled("interop_unreal2") {
        return;
    }
    // qstat asks the game port plus one: the replay listens there.
    let query_port = loop {
        let p = free_port();
        if p > 1 {
            break p;
        }
    };
    let r = replay_on(SocketAddr::from(([127, 0, 0, 1], query_port)));
    let ours = ogp_query_json(&["-p", "unreal2"], &r.addr().to_string());
    check_ours(&ours, "ours");
    let s = &ours["status"];
    let our_players = players_at(&s["players"], "/name", "/score", "/ping");
    let our_rule = |k: &str| str_of(&s["rules"][k]);

    // qstat
    for kind in ["-ut2s", "-ut2004s"] {
        let mut rep = Report(Vec::new());
        let ran = qstat_run(kind, query_port - 1);
        let v = parse_json(&ran, "qstat", kind);
        let v = &v[0];
        rep.eq(
            format!("{kind}: status"),
            str_of(&v["status"]),
            Some("online".into()),
        );
        rep.eq(
            format!("{kind}: name (colour bytes ≥ 0x80 and ESC dropped)"),
            str_of(&v["name"]),
            Some("@@WWW.CUZUS.ORG ooo- @BOSS RAGE ooo- V1065".into()),
        );
        rep.eq(
            format!("{kind}: map"),
            str_of(&v["map"]),
            str_of(&s["map"]["name"]),
        );
        rep.eq(
            format!("{kind}: gametype"),
            str_of(&v["gametype"]),
            str_of(&s["game_type"]),
        );
        rep.eq(
            format!("{kind}: numplayers"),
            int_of(&v["numplayers"]),
            int_of(&s["player_count"]),
        );
        rep.eq(
            format!("{kind}: maxplayers"),
            int_of(&v["maxplayers"]),
            int_of(&s["slot_max"]),
        );
        rep.eq(
            format!("{kind}: hostport"),
            str_of(&v["rules"]["hostport"]),
            Some(s["connect_port"].to_string()),
        );
        for k in [
            "ServerVersion",
            "GameDifficulty",
            "AdminEmail",
            "Translocator",
        ] {
            rep.eq(
                format!("{kind}: rule {k}"),
                split_bar(&v["rules"][k]).first().cloned(),
                our_rule(k),
            );
        }
        let mut mutators = split_bar(&v["rules"]["Mutator"]);
        mutators.dedup();
        let ours_m: Vec<String> = s["rules"]["Mutator"]
            .as_array()
            .unwrap()
            .iter()
            .filter_map(str_of)
            .collect();
        rep.eq(
            format!("{kind}: mutators (the first answer's)"),
            mutators.get(..ours_m.len()).map(<[String]>::to_vec),
            Some(ours_m),
        );
        let players = players_at(&v["players"], "/name", "/score", "/ping");
        rep.eq(
            format!("{kind}: players (any order)"),
            sorted(players),
            sorted(our_players.clone()),
        );
        rep.finish(&format!("qstat {kind}"));
    }

    // gamedig
    let mut rep = Report(Vec::new());
    let ran = run(
        Command::new("node")
            .arg(gamedig_js())
            .args(["--type", "protocol-unreal2", "--givenPortOnly"])
            .args(["--socketTimeout", "400", "--maxRetries", "1"])
            .arg(r.addr().to_string()),
        CLIENT_LIMIT,
    );
    let v = parse_json(&ran, "gamedig protocol-unreal2", "capture");
    rep.eq("gamedig: error".into(), v.get("error").cloned(), None);
    rep.eq(
        "gamedig: name".into(),
        str_of(&v["name"]),
        str_of(&s["host_name"]),
    );
    rep.eq(
        "gamedig: map".into(),
        str_of(&v["map"]),
        str_of(&s["map"]["name"]),
    );
    rep.eq(
        "gamedig: gametype".into(),
        str_of(&v["raw"]["gametype"]),
        str_of(&s["game_type"]),
    );
    rep.eq(
        "gamedig: numplayers".into(),
        int_of(&v["numplayers"]),
        int_of(&s["player_count"]),
    );
    rep.eq(
        "gamedig: maxplayers".into(),
        int_of(&v["maxplayers"]),
        int_of(&s["slot_max"]),
    );
    rep.eq(
        "gamedig: connect port".into(),
        str_of(&v["connect"]).and_then(|c| c.rsplit(':').next().map(str::to_string)),
        Some(s["connect_port"].to_string()),
    );
    for (theirs, ours) in [
        ("wavecurrent", "wave_current"),
        ("wavetotal", "wave_total"),
        ("flags", "flags"),
        ("skillLevel", "skill"),
    ] {
        rep.eq(
            format!("gamedig: {theirs}"),
            Some(v["raw"][theirs].to_string().trim_matches('"').to_string()),
            our_rule(ours),
        );
    }
    let mutators: Vec<Value> = v["raw"]["mutators"].as_array().cloned().unwrap_or_default();
    rep.eq(
        "gamedig: mutators".into(),
        Some(Value::Array(mutators)),
        s["rules"]["Mutator"].as_array().cloned().map(Value::Array),
    );
    for k in [
        "ServerVersion",
        "GameDifficulty",
        "AdminEmail",
        "Translocator",
        "Starting cash",
    ] {
        rep.eq(
            format!("gamedig: rule {k}"),
            str_of(&v["raw"]["rules"][k]),
            our_rule(k),
        );
    }
    let players = players_at(&v["players"], "/name", "/raw/score", "/raw/ping");
    rep.eq("gamedig: players".into(), players, our_players.clone());
    rep.finish("gamedig");

    // opengsq
    let mut rep = Report(Vec::new());
    let py = venv_python("opengsq.protocols", "opengsq", OPENGSQ);
    let ran = run(
        Command::new(py)
            .arg(script("tests/interop/unreal2_py.py"))
            .args(["127.0.0.1", &r.addr().port().to_string(), "2.0"]),
        CLIENT_LIMIT,
    );
    let v = parse_json(&ran, "opengsq unreal2", "capture");
    rep.eq("opengsq: error".into(), v["error"].clone(), Value::Null);
    let d = &v["details"];
    rep.eq(
        "opengsq: server name".into(),
        str_of(&d["server_name"]),
        str_of(&s["host_name"]),
    );
    rep.eq(
        "opengsq: map".into(),
        str_of(&d["map_name"]),
        str_of(&s["map"]["name"]),
    );
    rep.eq(
        "opengsq: game type".into(),
        str_of(&d["game_type"]),
        str_of(&s["game_type"]),
    );
    rep.eq(
        "opengsq: players".into(),
        int_of(&d["num_players"]),
        int_of(&s["player_count"]),
    );
    rep.eq(
        "opengsq: max players".into(),
        int_of(&d["max_players"]),
        int_of(&s["slot_max"]),
    );
    rep.eq(
        "opengsq: game port".into(),
        int_of(&d["game_port"]),
        int_of(&s["connect_port"]),
    );
    // Killing Floor's waves read as ping and flags (opengsq's habit)
    rep.eq(
        "opengsq: ping, flags (= our waves)".into(),
        (int_of(&d["ping"]), int_of(&d["flags"])),
        (
            our_rule("wave_current").and_then(|w| w.parse().ok()),
            our_rule("wave_total").and_then(|w| w.parse().ok()),
        ),
    );
    // the first rules datagram only
    for k in ["WeaponStay", "FriendlyFireScale", "Starting cash"] {
        rep.eq(
            format!("opengsq: rule {k}"),
            str_of(&v["rules"][k]),
            our_rule(k),
        );
    }
    let players = players_at(&v["players"], "/name", "/score", "/ping");
    rep.eq("opengsq: players".into(), players, our_players);
    rep.finish("opengsq");
}
