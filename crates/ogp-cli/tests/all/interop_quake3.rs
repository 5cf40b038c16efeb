//! Interop, Quake III, both ways:
//!
//! * `ogp serve --quake3` read by the real third-party clients: qstat 2.17 (`-q3s`),
//!   gamedig 5.3.3 (`protocol-quake3`) and opengsq 3.7.0 (`Quake3`), each compared with
//!   the served status: host name, map, max players, player names, scores and pings.
//! * A real OpenArena server (Debian's `openarena-server`, the ioquake3 engine, started by
//!   `ogp_testkit::gameservers::OpenArena` on a free loopback port) read by `ogp query -p
//!   quake3 --json` and by `ogp query --json` (auto-detection): host name (raw and plain),
//!   map and max players as it was started, and its bots as players with ping 0.
//!
//! What each client gives, asserted as such (client limitations, not ours):
//!
//! | | qstat `-q3s -json` | gamedig `protocol-quake3` | opengsq `Quake3` |
//! |---|---|---|---|
//! | host and player names | raw (colour codes kept), bytes ≥ 0x80 dropped | colour codes stripped, UTF-8 read as Windows-1252 | stripped by default, raw with `strip_color=False`, UTF-8 |
//! | players with ping 0 | players | moved to `bots` | players |
//! | max players | `sv_maxclients` (a number) | `sv_maxclients` (a string) | `sv_maxclients` in the info |
//!
//! A team column before the name (DarkPlaces' `score ping team "name"`) is read as the
//! name by gamedig and opengsq, so `ogp serve` writes it only for DarkPlaces games
//! (`crates/ogp-proto/src/quake3/mapping.rs`); the statuses here have teams to prove it.
//!
//! Like the other interop tests, these run only with `OGP_INTEROP=1` (set by
//! `scripts/test.sh` after `scripts/install-interop.sh` and
//! `scripts/install-gameservers.sh`).

use crate::common;

use std::process::Command;
use std::time::{Duration, Instant};

use common::*;
use ogp_proto::model::{MapInfo, Player, Rules};
use ogp_proto::Status;
use ogp_testkit::gameservers::{OpenArena, OpenArenaConfig};
use serde_json::Value;

// ------------------------------------------------------------------------------------
// ogp serve --quake3, read by the clients

/// One status to serve, in the terms a Quake III client reports.
struct Case {
    label: &'static str,
    /// The host name with its colour codes, and without.
    host_raw: &'static str,
    host: &'static str,
    map: &'static str,
    slot_max: u32,
    /// raw name, plain name, score, ping
    players: Vec<(String, String, i32, u32)>,
}

impl Case {
    fn status(&self) -> Status {
        let mut s = Status::default();
        s.host_name = Some(self.host.into());
        s.game_name = Some("baseoa".into());
        s.map = Some(MapInfo::named(self.map));
        s.slot_max = Some(self.slot_max);
        s.rules = Some(Rules(vec![
            ("sv_hostname".into(), self.host_raw.into()),
            ("g_gametype".into(), "0".into()),
            ("timelimit".into(), "15".into()),
        ]));
        s.players = Some(
            self.players
                .iter()
                .enumerate()
                .map(|(i, (raw, plain, score, ping))| {
                    let mut p = Player::named(plain.as_str());
                    if raw != plain {
                        p.name_raw = Some(raw.as_str().into());
                    }
                    p.score = Some(*score);
                    p.ping = Some(*ping);
                    p.team = Some(i as i32 % 2);
                    p
                })
                .collect(),
        );
        s
    }

    /// Players as (name, score, ping), the name as `name` makes it from raw and plain.
    fn players(&self, name: impl Fn(&str, &str) -> String) -> Vec<(String, i64, i64)> {
        self.players
            .iter()
            .map(|(raw, plain, score, ping)| {
                (name(raw, plain), i64::from(*score), i64::from(*ping))
            })
            .collect()
    }
}

fn cases() -> Vec<Case> {
    let names = |n: usize| -> Vec<(String, String, i32, u32)> {
        (0..n)
            .map(|i| {
                let plain = format!("Player {i}");
                let raw = format!("^{}Player ^7{i}", i % 8);
                (
                    raw,
                    plain,
                    i as i32 * 3 - 4,
                    if i % 4 == 0 { 0 } else { 20 + i as u32 },
                )
            })
            .collect()
    };
    let mut small = vec![
        ("^2Alice".to_string(), "Alice".to_string(), 12, 35),
        ("Bob the Bot".to_string(), "Bob the Bot".to_string(), -3, 0),
        ("Zoë ✓".to_string(), "Zoë ✓".to_string(), 0, 112),
    ];
    small.push(("^1Red^7Dragon".into(), "RedDragon".into(), 7, 48));
    vec![
        Case {
            label: "small",
            host_raw: "^1Red ^7Server",
            host: "Red Server",
            map: "oa_dm4",
            slot_max: 16,
            players: small,
        },
        Case {
            label: "full",
            host_raw: "^4Blue ^3Ünïcödé ^7Arena",
            host: "Blue Ünïcödé Arena",
            map: "oa_rpg3dm2",
            slot_max: 32,
            players: names(32),
        },
    ]
}

/// `ogp serve --quake3` serving `case`, ready once it answers `getstatus`.
fn serve(case: &Case) -> Served {
    serve_with(
        case.label,
        &case.status().to_json_pretty(),
        &["--quake3"],
        |sock| {
            !exchange(
                sock,
                b"\xff\xff\xff\xffgetstatus",
                Duration::from_millis(300),
            )
            .is_empty()
        },
    )
}

/// What one client reported.
#[derive(Debug, Default)]
struct Seen {
    host: Option<String>,
    map: Option<String>,
    max: Option<i64>,
    players: Vec<(String, i64, i64)>,
}

fn compare(r: &mut Report, label: &str, seen: &Seen, want: Seen) {
    r.eq(format!("{label}: host name"), &seen.host, &want.host);
    r.eq(format!("{label}: map"), &seen.map, &want.map);
    r.eq(format!("{label}: max players"), &seen.max, &want.max);
    r.list(format!("{label}: players"), &seen.players, &want.players);
}

/// Runs `client` against every case and fails with every mismatch.
fn each_case(test: &str, client: impl Fn(&Case, u16, &mut Report)) {
    if !enabled(test) {
        return;
    }
    let mut r = Report::default();
    for case in cases() {
        let served = serve(&case);
        client(&case, served.port, &mut r);
    }
    r.finish(test);
}

fn players_of(v: &Value, name: &str, score: &str, ping: &str) -> Vec<(String, i64, i64)> {
    v.as_array()
        .map(|a| {
            a.iter()
                .map(|p| {
                    (
                        str_of(&p[name]).unwrap_or_default(),
                        int_of(&p[score]).unwrap_or(i64::MIN),
                        int_of(&p[ping]).unwrap_or(i64::MIN),
                    )
                })
                .collect()
        })
        .unwrap_or_default()
}

/// qstat `-q3s`: raw names, bytes ≥ 0x80 dropped from its JSON output.
#[test]
fn qstat_q3s_reads_ogp_serve() {
    each_case("qstat_q3s_reads_ogp_serve", |case, port, r| {
        let ran = qstat_run("-q3s", port);
        let v = parse_json(&ran, "qstat -q3s", case.label);
        let v = &v[0];
        r.eq(
            format!("{}: status", case.label),
            str_of(&v["status"]),
            Some("online".into()),
        );
        let seen = Seen {
            host: str_of(&v["name"]),
            map: str_of(&v["map"]),
            max: int_of(&v["maxplayers"]),
            players: players_of(&v["players"], "name", "score", "ping"),
        };
        r.eq(
            format!("{}: player count", case.label),
            int_of(&v["numplayers"]),
            Some(case.players.len() as i64),
        );
        let want = Seen {
            host: Some(ascii(case.host_raw)),
            map: Some(case.map.into()),
            max: Some(i64::from(case.slot_max)),
            players: case.players(|raw, _| ascii(raw)),
        };
        compare(r, case.label, &seen, want);
    });
}

/// gamedig `protocol-quake3`: plain names read as Windows-1252; players with ping 0 are
/// listed as bots.
#[test]
fn gamedig_quake3_reads_ogp_serve() {
    each_case("gamedig_quake3_reads_ogp_serve", |case, port, r| {
        let ran = run(
            Command::new("node")
                .arg(gamedig_js())
                .args(["--type", "protocol-quake3", "--givenPortOnly"])
                .args(["--socketTimeout", "1500", "--maxRetries", "1"])
                .arg(format!("127.0.0.1:{port}")),
            CLIENT_LIMIT,
        );
        let v = parse_json(&ran, "gamedig protocol-quake3", case.label);
        r.eq(
            format!("{}: error", case.label),
            v.get("error").cloned(),
            None,
        );
        let mut players = players_of(&v["players"], "name", "", "");
        let raw = |list: &Value| -> Vec<(i64, i64)> {
            list.as_array()
                .map(|a| {
                    a.iter()
                        .map(|p| {
                            (
                                int_of(&p["raw"]["frags"]).unwrap_or(i64::MIN),
                                int_of(&p["raw"]["ping"]).unwrap_or(i64::MIN),
                            )
                        })
                        .collect()
                })
                .unwrap_or_default()
        };
        for (p, (score, ping)) in players.iter_mut().zip(raw(&v["players"])) {
            (p.1, p.2) = (score, ping);
        }
        let mut bots = players_of(&v["bots"], "name", "", "");
        for (p, (score, ping)) in bots.iter_mut().zip(raw(&v["bots"])) {
            (p.1, p.2) = (score, ping);
        }
        let seen = Seen {
            host: str_of(&v["name"]),
            map: str_of(&v["map"]),
            max: str_of(&v["maxplayers"]).and_then(|m| m.parse().ok()),
            players,
        };
        let all = case.players(|_, plain| as_cp1252(plain));
        let (want_bots, want_players): (Vec<_>, Vec<_>) = all.into_iter().partition(|p| p.2 == 0);
        let want = Seen {
            host: Some(as_cp1252(case.host)),
            map: Some(case.map.into()),
            max: Some(i64::from(case.slot_max)),
            players: want_players,
        };
        compare(r, case.label, &seen, want);
        r.list(format!("{}: bots", case.label), &bots, &want_bots);
    });
}

/// opengsq `Quake3`: `get_info` (the challenge echoed), `get_status` with colour codes
/// stripped and without; UTF-8 read as sent.
#[test]
fn opengsq_quake3_reads_ogp_serve() {
    each_case("opengsq_quake3_reads_ogp_serve", |case, port, r| {
        let py = venv_python("opengsq.protocols", "opengsq", OPENGSQ);
        let ran = run(
            Command::new(py)
                .arg(script("tests/interop/q3_py.py"))
                .args(["127.0.0.1", &port.to_string(), "2.0"]),
            CLIENT_LIMIT,
        );
        let v = parse_json(&ran, "opengsq quake3", case.label);
        r.eq(
            format!("{}: error", case.label),
            v["error"].clone(),
            Value::Null,
        );
        let l = case.label;
        r.eq(
            format!("{l}: getinfo challenge"),
            str_of(&v["info"]["challenge"]),
            Some("opengsq".into()),
        );
        r.eq(
            format!("{l}: getinfo clients"),
            str_of(&v["info"]["clients"]),
            Some(case.players.len().to_string()),
        );
        for (which, host, name) in [("plain", case.host, false), ("raw", case.host_raw, true)] {
            let s = &v[which];
            let seen = Seen {
                host: str_of(&s["info"]["sv_hostname"]),
                map: str_of(&s["info"]["mapname"]),
                max: str_of(&s["info"]["sv_maxclients"]).and_then(|m| m.parse().ok()),
                players: players_of(&s["players"], "name", "frags", "ping"),
            };
            let want = Seen {
                host: Some(host.into()),
                map: Some(case.map.into()),
                max: Some(i64::from(case.slot_max)),
                players: case.players(|raw, plain| if name { raw } else { plain }.to_string()),
            };
            compare(r, &format!("{l} ({which})"), &seen, want);
        }
    });
}

// ------------------------------------------------------------------------------------
// A real OpenArena server, read by ogp query

/// Host name (raw and plain), map and max players of a real OpenArena server, read by
/// `ogp query -p quake3` and by auto-detection.
#[test]
fn ogp_query_reads_a_real_openarena_server() {
    if !enabled("ogp_query_reads_a_real_openarena_server") {
        return;
    }
    let config = OpenArenaConfig {
        hostname: "^1Bar ^7OA ^3test".into(),
        max_clients: 12,
        ..OpenArenaConfig::default()
    };
    let oa = OpenArena::start(&config);
    let target = oa.addr().to_string();
    let mut r = Report::default();
    for args in [&["-p", "quake3"][..], &[][..]] {
        let v = ogp_query_json(args, &target);
        let what = format!("ogp query {args:?}");
        r.eq(format!("{what}: ok"), v["ok"].as_bool(), Some(true));
        r.eq(
            format!("{what}: protocol"),
            str_of(&v["protocol"]),
            Some("quake3".into()),
        );
        let s = &v["status"];
        r.eq(
            format!("{what}: plain host name"),
            str_of(&s["host_name"]),
            Some("Bar OA test".into()),
        );
        r.eq(
            format!("{what}: raw host name"),
            str_of(&s["rules"]["sv_hostname"]),
            Some(config.hostname.clone()),
        );
        r.eq(
            format!("{what}: map"),
            str_of(&s["map"]["name"]),
            Some(config.map.clone()),
        );
        r.eq(
            format!("{what}: max players"),
            int_of(&s["slot_max"]),
            Some(i64::from(config.max_clients)),
        );
        r.eq(
            format!("{what}: players"),
            s["players"].as_array().map(Vec::len).unwrap_or(0),
            0,
        );
    }
    r.finish("ogp query on OpenArena");
}

/// With `bot_minplayers 3` the server adds three bots within seconds: `ogp query` reads
/// them as three players with ping 0 (re-queried until they are in, or a minute).
#[test]
fn ogp_query_reads_openarena_bots_as_players() {
    if !enabled("ogp_query_reads_openarena_bots_as_players") {
        return;
    }
    let config = OpenArenaConfig {
        hostname: "OA bots".into(),
        bots: 3,
        ..OpenArenaConfig::default()
    };
    let oa = OpenArena::start(&config);
    let target = oa.addr().to_string();
    let deadline = Instant::now() + Duration::from_secs(60);
    let last = loop {
        let v = ogp_query_json(&["-p", "quake3"], &target);
        if v["status"]["players"].as_array().map_or(0, Vec::len) >= 3 {
            break v;
        }
        assert!(
            Instant::now() < deadline,
            "3 bots not read within 60 s; last answer: {v:#}"
        );
        std::thread::sleep(Duration::from_millis(500));
    };
    let s = &last["status"];
    let players = s["players"].as_array().expect("players");
    assert_eq!(players.len(), 3, "{s:#}");
    for p in players {
        assert_eq!(int_of(&p["ping"]), Some(0), "a bot's ping: {p}");
        assert!(
            str_of(&p["name"]).is_some_and(|n| !n.is_empty()),
            "a bot's name: {p}"
        );
    }
    assert_eq!(str_of(&s["host_name"]).as_deref(), Some("OA bots"));
    assert_eq!(int_of(&s["slot_max"]), Some(i64::from(config.max_clients)));
}
