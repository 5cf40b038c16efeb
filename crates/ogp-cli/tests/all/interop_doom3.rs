//! Interop, the Doom 3 engine, client side: the Doom 3 and Quake 4 replies of
//! `crates/ogp-proto/tests/data/doom3/` (rebuilt from GameQ's values, see SOURCES.md
//! there) and an ET:QW reply built from GameQ's ET:QW values, replayed by a loopback
//! server (`ogp_testkit::replay::Replay`, the request's challenge echoed) and read by
//! `ogp query --json` and by the real third-party readers, qstat 2.17 (`-dm3s`, `-q4s`,
//! `-preys`, `-etqws`) and opengsq 3.7.0 (`Doom3`); each must agree with our JSON field
//! by field, their habits aside:
//!
//! | | qstat `-json -nnx` | opengsq |
//! |---|---|---|
//! | host name, player names | colour codes kept | colour codes stripped (`^` and one character, `^X` and six) |
//! | map | ET:QW's `maps/NAME.entities` as `NAME` | as sent |
//! | players | name and ping, last to first; names in ASCII | id, ping, rate, name, clan tag; none when a name is not UTF-8 (Quake 4's Latin-1 names) |
//! | ET:QW | reads the task id | no task id: the challenge read as the protocol version |
//!
//! Runs only with `OGP_INTEROP=1`.

use crate::common;

use std::process::Command;

use common::*;
use ogp_proto::doom3::wire::{D3Player, Dialect, InfoResponse, Tail, REQUEST_PREFIX};
use ogp_testkit::replay::Replay;
use serde_json::Value;

fn capture(file: &str) -> Vec<u8> {
    let path = format!("{ROOT}/crates/ogp-proto/tests/data/doom3/{file}");
    let c: Value = serde_json::from_slice(&std::fs::read(&path).unwrap()).unwrap();
    ogp_proto::internals::from_hex(c["responses"]["reply"][0].as_str().unwrap()).unwrap()
}

/// Where the challenge sits in a reply of this dialect.
fn challenge_at(dialect: Dialect) -> usize {
    if dialect == Dialect::Etqw {
        19
    } else {
        15
    }
}

/// A loopback server answering `getInfo` with `reply`, its challenge the request's.
fn serve(reply: Vec<u8>, dialect: Dialect) -> Replay {
    let at = challenge_at(dialect);
    Replay::start(move |request| {
        let Some(rest) = request.strip_prefix(REQUEST_PREFIX) else {
            return Vec::new();
        };
        let mut out = reply.clone();
        let mut challenge = [0u8; 4];
        for (c, b) in challenge.iter_mut().zip(rest) {
            *c = *b;
        }
        out[at..at + 4].copy_from_slice(&challenge);
        vec![out]
    })
}

/// An ET:QW reply (protocol 10.20, chosen: past 10.19 no rates, from 10.17 clan tags) with the first players, rules
/// and tail of GameQ's `tests/Protocols/Providers/Etqw/1_result.json`.
fn etqw_reply() -> Vec<u8> {
    let player = |id: u8, ping: u16, name: &str, pos: u8, clan: &str| D3Player {
        id,
        ping,
        rate: None,
        name: name.into(),
        clan_position: Some(pos),
        clan: Some(clan.into()),
        bot: Some(false),
    };
    let mut r = InfoResponse {
        dialect: Dialect::Etqw,
        task_id: Some(0),
        challenge: 0,
        protocol: 0x000a_0014,
        size: None,
        rules: [
            ("si_name", "^4<{^1BBA^4}> ^3#1 ^2No Reset ^2XP SAVER"),
            ("si_map", "maps/island.entities"),
            ("si_maxPlayers", "24"),
            ("si_rules", "sdGameRulesCampaign"),
            (
                "si_version",
                "ETQW 1.5.12642.33243  win-x86 Apr 30 2008 14:18:50",
            ),
            ("si_needPass", "0"),
            ("net_serverDedicated", "1"),
            ("gamename", "bbamod"),
        ]
        .into_iter()
        .map(|(k, v)| (k.into(), v.into()))
        .collect(),
        players: vec![
            player(0, 76, "^2HillBilly", 0, ""),
            player(3, 213, "^2HIM-AGAIN", 0, "^4<{^1BBA^4}>^0"),
            player(7, 43, "William_Gates", 1, "^0|^8B^0B^8A^0|^0"),
        ],
        tail: Tail {
            os_mask: Some(7),
            ranked: Some(false),
            time_left: Some(338_436),
            game_state: Some(2),
            server_type: Some(0),
            interested_clients: Some(1),
            tv_clients: None,
        },
        warnings: Vec::new(),
    };
    r.players[1].bot = Some(true);
    let mut out = Vec::new();
    r.encode(&mut out);
    out
}

/// Our status, by `-p doom3` and by auto-detection (the same).
fn ours(port: u16) -> Value {
    let v = ogp_query_port_json(&["-p", "doom3"], port);
    assert_eq!(v["ok"], true, "{v}");
    let auto = ogp_query_port_json(&[], port);
    assert_eq!(auto["protocol"], "doom3", "{auto}");
    assert_eq!(auto["status"], v["status"]);
    v["status"].clone()
}

fn text(v: &Value) -> Option<String> {
    str_of(v)
}

/// Name (as sent, colour codes kept) and ping of each of our players.
fn our_players(s: &Value) -> Vec<(String, i64)> {
    s["players"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| {
            let name = text(&p["name_raw"]).or_else(|| text(&p["name"])).unwrap();
            (name, p["ping"].as_i64().unwrap())
        })
        .collect()
}

const CASES: [(&str, &str, Dialect); 4] = [
    ("gameq-doom3-1.json", "-dm3s", Dialect::Doom3),
    ("gameq-doom3-1.json", "-preys", Dialect::Doom3),
    ("gameq-quake4-1.json", "-q4s", Dialect::Quake4),
    ("", "-etqws", Dialect::Etqw),
];

fn reply_of(file: &str) -> Vec<u8> {
    if file.is_empty() {
        etqw_reply()
    } else {
        capture(file)
    }
}

#[test]
fn qstat_reads_each_dialect_as_we_do() {
    if !enabled("qstat_reads_each_dialect_as_we_do") {
        return;
    }
    let mut r = Report::default();
    for (file, kind, dialect) in CASES {
        let server = serve(reply_of(file), dialect);
        let port = server.addr().port();
        let s = ours(port);
        let v = parse_json(&qstat_run(kind, port), kind, file);
        let v = &v[0];
        let label = |f: &str| format!("{kind} {f}");
        r.eq(label("status"), text(&v["status"]), Some("online".into()));
        r.eq(
            label("host name"),
            text(&v["name"]),
            text(&s["host_name_raw"]).or_else(|| text(&s["host_name"])),
        );
        r.eq(label("map"), text(&v["map"]), text(&s["map"]["name"]));
        r.eq(
            label("max players"),
            v["maxplayers"].clone(),
            s["slot_max"].clone(),
        );
        let ours_p = our_players(&s);
        r.eq(
            label("players"),
            v["numplayers"].as_u64(),
            Some(ours_p.len() as u64),
        );
        let theirs: Vec<(String, i64)> = v["players"]
            .as_array()
            .map(|a| {
                a.iter()
                    .map(|p| {
                        (
                            text(&p["name"]).unwrap_or_default(),
                            p["ping"].as_i64().unwrap_or(-1),
                        )
                    })
                    .collect()
            })
            .unwrap_or_default();
        // qstat lists the players last to first, names in ASCII (`-nnx`)
        let want: Vec<(String, i64)> = ours_p.iter().rev().map(|(n, p)| (ascii(n), *p)).collect();
        r.list(label("player names and pings"), &theirs, &want);
        r.eq(
            label("rule protocol"),
            text(&v["rules"]["protocol"]),
            text(&s["rules"]["protocol"]),
        );
    }
    r.finish("qstat Doom 3 engine");
}

const OPENGSQ_SCRIPT: &str = r#"
import asyncio, json, sys
from opengsq.protocols import Doom3
async def main():
    s = await Doom3(sys.argv[1], int(sys.argv[2]), timeout=3.0).get_status(strip_color=True)
    print(json.dumps({"info": s.info, "players": s.players}))
asyncio.run(main())
"#;

#[test]
fn opengsq_reads_each_dialect_as_we_do() {
    if !enabled("opengsq_reads_each_dialect_as_we_do") {
        return;
    }
    let py = venv_python("opengsq.protocols", "opengsq", OPENGSQ);
    let mut r = Report::default();
    for (file, kind, dialect) in CASES {
        if kind == "-preys" {
            continue;
        }
        let server = serve(reply_of(file), dialect);
        let port = server.addr().port();
        let s = ours(port);
        let ran = run(
            Command::new(&py).args(["-c", OPENGSQ_SCRIPT, "127.0.0.1", &port.to_string()]),
            CLIENT_LIMIT,
        );
        let v = parse_json(&ran, "opengsq Doom3", file);
        let label = |f: &str| format!("{} {f}", dialect.name());
        let i = &v["info"];
        r.eq(label("si_name"), text(&i["si_name"]), text(&s["host_name"]));
        r.eq(
            label("si_map"),
            text(&i["si_map"]),
            text(&s["rules"]["si_map"]),
        );
        // opengsq has no task id: on ET:QW it reads the challenge as the version
        let version = if dialect == Dialect::Etqw {
            let c = u32::from_le_bytes(*b"ogsq");
            Some(format!("{}.{}", c >> 16, c & 0xffff))
        } else {
            text(&s["rules"]["protocol"])
        };
        r.eq(label("version"), text(&i["version"]), version);
        let theirs: Vec<(String, i64, String)> = v["players"]
            .as_array()
            .unwrap()
            .iter()
            .map(|p| {
                (
                    text(&p["name"]).unwrap_or_default(),
                    p["ping"].as_i64().unwrap_or(-1),
                    text(&p["clantag"]).unwrap_or_default(),
                )
            })
            .collect();
        let want: Vec<(String, i64, String)> = s["players"]
            .as_array()
            .unwrap()
            .iter()
            .map(|p| {
                (
                    text(&p["name"]).unwrap(),
                    p["ping"].as_i64().unwrap(),
                    text(&p["extra"]["clan"])
                        .map(|c| opengsq_strip(&c))
                        .unwrap_or_default(),
                )
            })
            .collect();
        // opengsq reads strings as UTF-8 only: the Quake 4 capture's Latin-1 names fail
        // every layout it tries, and it gives no players
        let want = if dialect == Dialect::Quake4 {
            Vec::new()
        } else {
            want
        };
        r.list(label("players"), &theirs, &want);
    }
    r.finish("opengsq Doom3");
}

/// opengsq's colour stripping (`^` and one character; `^X` and six).
fn opengsq_strip(s: &str) -> String {
    let mut out = String::new();
    let mut chars = s.chars().peekable();
    while let Some(c) = chars.next() {
        if c != '^' {
            out.push(c);
            continue;
        }
        match chars.next() {
            Some('X') => {
                for _ in 0..6 {
                    chars.next();
                }
            }
            Some(_) => {}
            None => out.push('^'),
        }
    }
    out
}
