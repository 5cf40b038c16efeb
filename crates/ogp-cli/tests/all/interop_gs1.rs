//! Interop, GameSpy v1: real servers' replies (the captures of
//! `crates/ogp-proto/tests/data/gamespy1/`: Battlefield 1942, Unreal Tournament, Medal of
//! Honor: Allied Assault; see its SOURCES.md) replayed by a loopback server
//! (`ogp_testkit::replay::Replay`), read by `ogp query -p gamespy1 --json` and by the real
//! third-party clients: qstat 2.17 (`-gps`), gamedig 5.3.3 (`protocol-gamespy1`) and
//! opengsq 3.7.0 (`GameSpy1`). Each client's host name, map, player count, max players,
//! `gamename` and players (name, ping, score) must agree with ours, field by field.
//!
//! What each client gives, asserted as such (client habits, not ours):
//!
//! | | qstat `-gps -json` | gamedig `protocol-gamespy1` | opengsq `GameSpy1` |
//! |---|---|---|---|
//! | host name | raw (MoHAA's `^3` kept; ours: `host_name_raw`) | raw, trimmed (UT's leading space dropped) | raw, trimmed |
//! | player names | bytes ≥ 0x80 dropped (`Åiôñ` → `i`) | Latin-1, as ours | bytes ≥ 0x80 dropped, spaces trimmed |
//! | players listed | the first `numplayers` (Battlefield 1942 listed 18 with `numplayers` 17: the 18th dropped) | the first `numplayers` | all |
//! | player order | last first | as sent | as sent |
//! | score | Battlefield 1942: `kills_N`; else `score_N` / `frags_N` | `score_N` / `frags_N` | `score_N` / `frags_N` |
//!
//! Like the other interop tests, these run only with `OGP_INTEROP=1` (set by
//! `scripts/test.sh` after `scripts/install-interop.sh`).

use crate::common;

use std::process::Command;
use std::time::Duration;

use common::*;
use ogp_testkit::replay::Replay;
use serde_json::Value;

/// The captures replayed, each one server's reply to `\status\`.
const CAPTURES: [&str; 9] = [
    "bf1942_1", "bf1942_2", "bf1942_3", "ut_1", "ut_2", "ut_3", "mohaa_1", "mohaa_2", "mohaa_3",
];

fn capture(name: &str) -> Vec<Vec<u8>> {
    let dir = std::path::Path::new(ROOT).join("crates/ogp-proto/tests/data/gamespy1");
    let parts: Vec<Vec<u8>> = (1..=16)
        .map_while(|n| std::fs::read(dir.join(format!("{name}.{n}.bin"))).ok())
        .collect();
    assert!(!parts.is_empty(), "{name}: no capture");
    parts
}

/// A loopback server answering every `\status\` query (with or without
/// `xserverquery`) with the capture's datagrams, in order.
fn replay(name: &str) -> Replay {
    let parts = capture(name);
    Replay::start(move |request: &[u8]| {
        if request.starts_with(b"\\status\\") {
            parts.clone()
        } else {
            Vec::new()
        }
    })
}

/// What a client reports of one server.
#[derive(Debug, Clone, PartialEq, Default)]
struct Seen {
    host: Option<String>,
    map: Option<String>,
    numplayers: Option<i64>,
    maxplayers: Option<i64>,
    gamename: Option<String>,
    /// name, ping, score
    players: Vec<(String, i64, i64)>,
}

/// A client's view from its JSON: `keys` name the host name, map, player count and max
/// players fields of `v`.
fn seen(v: &Value, keys: [&str; 4], gamename: &Value, players: Vec<(String, i64, i64)>) -> Seen {
    let [host, map, numplayers, maxplayers] = keys;
    Seen {
        host: str_of(&v[host]),
        map: str_of(&v[map]),
        numplayers: num(&v[numplayers]),
        maxplayers: num(&v[maxplayers]),
        gamename: str_of(gamename),
        players,
    }
}

fn num(v: &Value) -> Option<i64> {
    int_of(v).or_else(|| v.as_str().and_then(|s| s.trim().parse().ok()))
}

/// Our answer, and the kills of each player (qstat's score for Battlefield 1942).
fn ours(port: u16) -> (Seen, Vec<i64>) {
    let ran = ogp_run(
        &[
            "query",
            "--json",
            "-p",
            "gamespy1",
            &format!("127.0.0.1:{port}"),
        ],
        CLIENT_LIMIT,
    );
    let v = parse_json(&ran, "ogp query", "gamespy1");
    assert_eq!(v["ok"], true, "{v}");
    let s = &v["status"];
    let players = s["players"].as_array().cloned().unwrap_or_default();
    let seen = Seen {
        host: str_of(&s["host_name_raw"]).or_else(|| str_of(&s["host_name"])),
        map: str_of(&s["map"]["name"]),
        numplayers: num(&s["player_count"]),
        maxplayers: num(&s["slot_max"]),
        gamename: str_of(&s["game_name"]),
        players: players
            .iter()
            .map(|p| {
                (
                    str_of(&p["name"]).unwrap_or_default(),
                    num(&p["ping"]).unwrap_or(-1),
                    num(&p["score"]).or_else(|| num(&p["frags"])).unwrap_or(0),
                )
            })
            .collect(),
    };
    let kills = players
        .iter()
        .map(|p| num(&p["kills"]).unwrap_or(0))
        .collect();
    (seen, kills)
}

/// Compares a client's view with ours, field by field.
fn compare(r: &mut Report, name: &str, got: Seen, want: Seen) {
    r.eq(format!("{name}: host name"), got.host, want.host);
    r.eq(format!("{name}: map"), got.map, want.map);
    r.eq(
        format!("{name}: numplayers"),
        got.numplayers,
        want.numplayers,
    );
    r.eq(
        format!("{name}: maxplayers"),
        got.maxplayers,
        want.maxplayers,
    );
    r.eq(format!("{name}: gamename"), got.gamename, want.gamename);
    r.list(format!("{name}: players"), &got.players, &want.players);
}

/// Runs `client` on every capture and compares, reporting every difference at the end.
fn each_capture(
    test: &str,
    client: impl Fn(&str, u16, &mut Report) -> Option<Seen>,
    habits: impl Fn(&str, Seen, &[i64]) -> Seen,
) {
    if !enabled(test) {
        return;
    }
    let mut r = Report::default();
    for name in CAPTURES {
        let server = replay(name);
        let port = server.addr().port();
        let (want, kills) = ours(port);
        assert!(
            want.host.is_some() && !want.players.is_empty() || name == "ut_3" || name == "bf1942_2",
            "{name}: {want:?}"
        );
        if let Some(got) = client(name, port, &mut r) {
            compare(&mut r, name, got, habits(name, want, &kills));
        }
    }
    r.finish(test);
}

/// The first `numplayers` players (gamedig and qstat list no more).
fn first_numplayers(mut s: Seen) -> Seen {
    let n = s
        .numplayers
        .and_then(|n| usize::try_from(n).ok())
        .unwrap_or(0);
    s.players.truncate(n);
    s
}

/// The host name without spaces around it (gamedig and opengsq trim it).
fn trimmed_host(mut s: Seen) -> Seen {
    s.host = s.host.map(|h| h.trim().to_string());
    s
}

#[test]
fn qstat_gps_reads_the_captures_as_we_do() {
    each_capture(
        "qstat -gps",
        |name, port, r| {
            let ran = qstat_run("-gps", port);
            let v = parse_json(&ran, "qstat -gps", name);
            let v = &v[0];
            r.eq(
                format!("{name}: status"),
                str_of(&v["status"]),
                Some("online".into()),
            );
            let mut players: Vec<_> = v["players"]
                .as_array()
                .cloned()
                .unwrap_or_default()
                .iter()
                .map(|p| {
                    (
                        str_of(&p["name"]).unwrap_or_default(),
                        num(&p["ping"]).unwrap_or(-1),
                        num(&p["score"]).unwrap_or(0),
                    )
                })
                .collect();
            players.reverse();
            Some(seen(
                v,
                ["name", "map", "numplayers", "maxplayers"],
                &v["rules"]["gamename"],
                players,
            ))
        },
        |name, want, kills| {
            let bf = name.starts_with("bf1942");
            let mut s = want;
            for (p, k) in s.players.iter_mut().zip(kills) {
                p.0 = ascii(&p.0);
                if bf {
                    p.2 = *k;
                }
            }
            first_numplayers(s)
        },
    );
}

#[test]
fn gamedig_gamespy1_reads_the_captures_as_we_do() {
    each_capture(
        "gamedig protocol-gamespy1",
        |name, port, r| {
            let ran = run(
                Command::new("node")
                    .arg(gamedig_js())
                    .args(["--type", "protocol-gamespy1", "--givenPortOnly"])
                    .args(["--socketTimeout", "1500", "--maxRetries", "1"])
                    .arg(format!("127.0.0.1:{port}")),
                CLIENT_LIMIT,
            );
            let v = parse_json(&ran, "gamedig", name);
            r.eq(format!("{name}: error"), v.get("error").cloned(), None);
            Some(seen(
                &v,
                ["name", "map", "numplayers", "maxplayers"],
                &v["raw"]["gamename"],
                v["players"]
                    .as_array()
                    .cloned()
                    .unwrap_or_default()
                    .iter()
                    .map(|p| {
                        let raw = &p["raw"];
                        (
                            str_of(&p["name"]).unwrap_or_default(),
                            num(&raw["ping"]).unwrap_or(-1),
                            num(&raw["score"])
                                .or_else(|| num(&raw["frags"]))
                                .unwrap_or(0),
                        )
                    })
                    .collect(),
            ))
        },
        |_, want, _| first_numplayers(trimmed_host(want)),
    );
}

#[test]
fn opengsq_gamespy1_reads_the_captures_as_we_do() {
    each_capture(
        "opengsq GameSpy1",
        |name, port, r| {
            let py = venv_python("opengsq.protocols", "opengsq", OPENGSQ);
            let ran = run(
                Command::new(py)
                    .arg(script("tests/interop/gs1_py.py"))
                    .args(["127.0.0.1", &port.to_string(), "2.0"]),
                CLIENT_LIMIT,
            );
            let v = parse_json(&ran, "opengsq", name);
            r.eq(format!("{name}: error"), v["error"].clone(), Value::Null);
            let info = &v["info"];
            Some(seen(
                info,
                ["hostname", "mapname", "numplayers", "maxplayers"],
                &info["gamename"],
                v["players"]
                    .as_array()
                    .cloned()
                    .unwrap_or_default()
                    .iter()
                    .map(|p| {
                        (
                            str_of(&p["player"])
                                .or_else(|| str_of(&p["playername"]))
                                .unwrap_or_default(),
                            num(&p["ping"]).unwrap_or(-1),
                            num(&p["score"]).or_else(|| num(&p["frags"])).unwrap_or(0),
                        )
                    })
                    .collect(),
            ))
        },
        |_, want, _| {
            let mut want = trimmed_host(want);
            for p in &mut want.players {
                p.0 = ascii(&p.0).trim().to_string();
            }
            want
        },
    );
}

/// The replay answers as the captured server did: one whole reply (three parts) per
/// query, read by one query (a second only if the machine is too loaded to answer the
/// first in its attempt time).
#[test]
fn the_replay_answers_ogp_with_the_whole_reply() {
    let server = replay("ut_1");
    let start = std::time::Instant::now();
    let (seen, _) = ours(server.addr().port());
    assert_eq!(seen.gamename.as_deref(), Some("ut"));
    assert_eq!(seen.players.len(), 11);
    assert!(start.elapsed() < Duration::from_secs(5));
    assert!(
        (1..=2).contains(&server.received()),
        "{}",
        server.received()
    );
}
