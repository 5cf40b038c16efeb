//! Interop, GameSpy v2 and ASE, client side: the captures of `crates/ogp-proto/tests/data/`
//! replayed by a loopback server (`ogp_testkit::replay::Replay`) and read by `ogp query
//! --json` and by the real third-party readers, qstat 2.17 (`-gs2`, `-eye`), gamedig 5.3.3
//! (`protocol-gamespy2`, `protocol-ase`) and opengsq 3.7.0 (`GameSpy2`, `ASE`); each
//! reader must agree with our JSON field by field, their habits aside (below).
//!
//! * GameSpy v2: the Halo capture (two datagrams, rebuilt from GameQ's values; see its
//!   SOURCES.md), cut into its three sections, each request answered with the sections it
//!   asks for, as sent, under its id: qstat and opengsq ask for all three at once, gamedig
//!   three times, a section each.
//! * ASE: the Multi Theft Auto capture, 3,333 bytes as the server sent them, answered to
//!   every `s`.
//!
//! What each reader gives, asserted as such (reader habits, not ours):
//!
//! | | qstat `-json -nnx` | gamedig | opengsq |
//! |---|---|---|---|
//! | GS2 host name | control characters dropped | as sent | as sent |
//! | GS2 Latin-1 names | bytes ≥ 0x80 dropped | Latin-1 | UTF-8, other bytes dropped |
//! | GS2 players | in reverse order; `team` the `team_t` name for `team_` ≥ 1 (1-based), else 0 | `raw.team` the number | `team` the text |
//! | GS2 teams | not listed | `raw.teams`: `name`, `score_t` | `teams`: `team`, `score` |
//! | ASE port | asks the given port + 123 (the Multi Theft Auto offset) | the given port | the given port |
//! | ASE empty score, time | 0 | `null` (NaN) | 0 |
//!
//! Like the other interop tests, these run only with `OGP_INTEROP=1` (set by
//! `scripts/test.sh` after `scripts/install-interop.sh`).

use crate::common;

use std::process::Command;

use common::*;
use ogp_proto::gamespy2::wire::Request;
use ogp_testkit::replay::Replay;
use serde_json::Value;

fn capture(proto: &str, file: &str) -> Value {
    let path = format!("{ROOT}/crates/ogp-proto/tests/data/{proto}/{file}");
    serde_json::from_slice(&std::fs::read(&path).unwrap()).unwrap()
}

fn unhex(s: &str) -> Vec<u8> {
    ogp_proto::internals::from_hex(s).expect("hex")
}

/// The Halo capture's sections as sent (Latin-1 strings): the server keys, the player
/// section and the team section, each with its leading `00`.
fn halo_sections() -> [Vec<u8>; 3] {
    let c = capture("gamespy2", "gameq-halo-1.json");
    let body = |k: &str| unhex(c["responses"][k][0].as_str().unwrap()).split_off(5);
    let (server, mut roster) = (body("details"), body("roster"));
    // the team section: its `00`, its count, then its first key
    let at = roster
        .windows(7)
        .position(|w| w == b"team_t\0")
        .and_then(|i| i.checked_sub(2))
        .expect("a team section");
    let teams = roster.split_off(at);
    [server, roster, teams]
}

/// A loopback server answering GameSpy v2 requests with the Halo capture: the sections
/// each request asks for, as sent, after the request's id.
fn halo_server() -> Replay {
    let sections = halo_sections();
    Replay::start(move |request| match Request::decode(request) {
        Ok(r) => {
            let mut out = vec![0];
            out.extend_from_slice(&r.id.to_be_bytes());
            for (asked, section) in [r.server, r.players, r.teams].into_iter().zip(&sections) {
                if asked {
                    out.extend_from_slice(section);
                }
            }
            vec![out]
        }
        Err(_) => Vec::new(),
    })
}

/// A loopback server answering `s` with the Multi Theft Auto capture, on a port at least
/// 123 above 1024 (qstat asks the given port + 123).
fn mta_server() -> Replay {
    let c = capture("ase", "gameq-mta-2.json");
    let reply = unhex(c["responses"]["reply"][0].as_str().unwrap());
    Replay::start(move |request| {
        if request == b"s" {
            vec![reply.clone()]
        } else {
            Vec::new()
        }
    })
}

/// Name, score and ping of each player of a JSON list (`i64::MIN`: missing).
fn players(v: &Value, name: &str, score: &str, ping: &str) -> Vec<(String, i64, i64)> {
    let field =
        |p: &Value, path: &str| -> Value { path.split('.').fold(p.clone(), |v, k| v[k].clone()) };
    v.as_array()
        .map(|a| {
            a.iter()
                .map(|p| {
                    let num = |k: &str| {
                        let f = field(p, k);
                        int_of(&f)
                            .or_else(|| str_of(&f).and_then(|s| s.parse().ok()))
                            .unwrap_or(i64::MIN)
                    };
                    (
                        str_of(&field(p, name)).unwrap_or_default(),
                        num(score),
                        num(ping),
                    )
                })
                .collect()
        })
        .unwrap_or_default()
}

/// What our JSON says of the Halo capture, checked against the capture's own values.
fn ours_halo(port: u16) -> Value {
    let v = ogp_query_port_json(&["-p", "gamespy2"], port);
    assert_eq!(v["ok"], true, "{v}");
    let s = v["status"].clone();
    assert_eq!(s["map"]["name"], "bloodgulch");
    assert_eq!(s["players"].as_array().map(Vec::len), Some(13));
    // auto-detection finds it too, and says the same
    let auto = ogp_query_port_json(&[], port);
    assert_eq!(auto["protocol"], "gamespy2", "{auto}");
    assert_eq!(auto["status"], s);
    s
}

fn ours_mta(port: u16) -> Value {
    let v = ogp_query_port_json(&["-p", "ase"], port);
    assert_eq!(v["ok"], true, "{v}");
    let s = v["status"].clone();
    assert_eq!(s["players"].as_array().map(Vec::len), Some(122));
    assert_eq!(v["game_id"], "gtasamta", "{v}");
    let auto = ogp_query_port_json(&[], port);
    assert_eq!(auto["protocol"], "ase", "{auto}");
    assert_eq!(auto["status"], s);
    s
}

fn text(v: &Value) -> Option<String> {
    str_of(v)
}

/// Name and score of each team of a JSON list.
fn teams(list: &Value, name: &str, score: &str) -> Vec<(String, i64)> {
    players(list, name, score, "")
        .into_iter()
        .map(|(n, s, _)| (n, s))
        .collect()
}

/// Players with an empty score (ASE) read as 0, as qstat and opengsq read them.
fn zero_for_empty(mut p: Vec<(String, i64, i64)>) -> Vec<(String, i64, i64)> {
    for x in &mut p {
        if x.1 == i64::MIN {
            x.1 = 0;
        }
    }
    p
}

/// gamedig's JSON for `protocol-KIND` on the loopback `port`.
fn gamedig(kind: &str, port: u16, label: &str) -> Value {
    gamedig_json(&format!("protocol-{kind}"), port, label)
}

/// The JSON that `script` (opengsq, run by the venv's Python) prints for the loopback
/// `port`.
fn opengsq(script: &str, port: u16, label: &str) -> Value {
    let py = venv_python("opengsq.protocols", "opengsq", OPENGSQ);
    let ran = run(
        Command::new(py).args(["-c", script, "127.0.0.1", &port.to_string()]),
        CLIENT_LIMIT,
    );
    parse_json(&ran, "opengsq", label)
}

/// What gamedig's normalised result says that ours says too: no error, host name, map,
/// password, max players, players, version.
fn gamedig_header(r: &mut Report, v: &Value, ours: &Value) {
    r.eq("error".into(), v.get("error").cloned(), None);
    r.eq(
        "host name".into(),
        text(&v["name"]),
        text(&ours["host_name"]),
    );
    r.eq("map".into(), text(&v["map"]), text(&ours["map"]["name"]));
    let same = [
        ("password", "password"),
        ("maxplayers", "slot_max"),
        ("numplayers", "player_count"),
    ];
    for (theirs, our) in same {
        r.eq(theirs.into(), v[theirs].clone(), ours[our].clone());
    }
    r.eq(
        "version".into(),
        text(&v["version"]),
        text(&ours["game_version"]),
    );
}

/// What qstat's JSON says that ours says too (`host` is the host name qstat shows):
/// online, host name, map, game type, players, max players.
fn qstat_header(r: &mut Report, v: &Value, ours: &Value, host: Option<String>) {
    r.eq("status".into(), text(&v["status"]), Some("online".into()));
    r.eq("host name".into(), text(&v["name"]), host);
    r.eq("map".into(), text(&v["map"]), text(&ours["map"]["name"]));
    r.eq(
        "game type".into(),
        text(&v["gametype"]),
        text(&ours["game_type"]),
    );
    r.eq(
        "players".into(),
        v["numplayers"].clone(),
        ours["player_count"].clone(),
    );
    r.eq(
        "max players".into(),
        v["maxplayers"].clone(),
        ours["slot_max"].clone(),
    );
}

/// The same field of every player of a JSON list, as sent.
fn column(list: &Value, path: &[&str]) -> Vec<Value> {
    list.as_array()
        .map(|a| {
            a.iter()
                .map(|p| path.iter().fold(p, |v, k| &v[*k]).clone())
                .collect()
        })
        .unwrap_or_default()
}

/// Our players as (name, score, ping), names through `f`.
fn our_players(s: &Value, f: impl Fn(&str) -> String) -> Vec<(String, i64, i64)> {
    players(&s["players"], "name", "score", "ping")
        .into_iter()
        .map(|(n, sc, p)| (f(&n), sc, p))
        .collect()
}

#[test]
fn qstat_gs2_reads_the_halo_capture() {
    if !enabled("qstat_gs2_reads_the_halo_capture") {
        return;
    }
    let server = halo_server();
    let port = server.addr().port();
    let ours = ours_halo(port);
    let v = parse_json(&qstat_run("-gs2", port), "qstat -gs2", "halo");
    let v = &v[0];
    let mut r = Report::default();
    let host = ours["host_name"].as_str().unwrap_or_default();
    let no_controls: String = host.chars().filter(|c| !c.is_control()).collect();
    qstat_header(&mut r, v, &ours, Some(no_controls));
    r.eq(
        "rule gamever".into(),
        text(&v["rules"]["gamever"]),
        text(&ours["game_version"]),
    );
    let mut want = our_players(&ours, ascii);
    want.reverse();
    r.list(
        "players".into(),
        &players(&v["players"], "name", "score", "ping"),
        &want,
    );
    // team_ 1 is the first team_t for qstat; 0 stays a number
    let teams: Vec<String> = ours["teams"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|t| text(&t["name"]))
        .collect();
    let mut want_team: Vec<Value> = ours["players"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| match p["team"].as_i64() {
            Some(t @ 1..) => teams
                .get(usize::try_from(t - 1).unwrap())
                .map_or(Value::Null, |n| Value::from(n.as_str())),
            Some(t) => Value::from(t),
            None => Value::Null,
        })
        .collect();
    want_team.reverse();
    r.list(
        "player teams".into(),
        &column(&v["players"], &["team"]),
        &want_team,
    );
    r.finish("qstat -gs2");
}

#[test]
fn gamedig_gamespy2_reads_the_halo_capture() {
    if !enabled("gamedig_gamespy2_reads_the_halo_capture") {
        return;
    }
    let server = halo_server();
    let port = server.addr().port();
    let ours = ours_halo(port);
    let v = gamedig("gamespy2", port, "halo");
    let mut r = Report::default();
    gamedig_header(&mut r, &v, &ours);
    let want = our_players(&ours, str::to_owned);
    r.list(
        "players".into(),
        &players(&v["players"], "name", "raw.score", "raw.ping"),
        &want,
    );
    r.list(
        "teams".into(),
        &teams(&v["raw"]["teams"], "name", "score_t"),
        &teams(&ours["teams"], "name", "score"),
    );
    // gamedig keeps team_ as sent: our index, 0-based for Halo
    r.list(
        "player teams".into(),
        &column(&v["players"], &["raw", "team"]),
        &column(&ours["players"], &["team"]),
    );
    r.finish("gamedig protocol-gamespy2");
}

const OPENGSQ_GS2: &str = r#"
import asyncio, json, sys
from opengsq.protocols import GameSpy2
out = {"error": None}
try:
    s = asyncio.run(GameSpy2(sys.argv[1], int(sys.argv[2]), timeout=2.0).get_status())
    out.update(info=s.info, players=s.players, teams=s.teams)
except Exception as e:
    out["error"] = f"{type(e).__name__}: {e}"
json.dump(out, sys.stdout)
"#;

#[test]
fn opengsq_gamespy2_reads_the_halo_capture() {
    if !enabled("opengsq_gamespy2_reads_the_halo_capture") {
        return;
    }
    let server = halo_server();
    let port = server.addr().port();
    let ours = ours_halo(port);
    let py = venv_python("opengsq.protocols", "opengsq", OPENGSQ);
    let ran = run(
        Command::new(py).args(["-c", OPENGSQ_GS2, "127.0.0.1", &port.to_string()]),
        CLIENT_LIMIT,
    );
    let v = parse_json(&ran, "opengsq GameSpy2", "halo");
    let mut r = Report::default();
    r.eq("error".into(), v["error"].clone(), Value::Null);
    let info = &v["info"];
    r.eq(
        "host name".into(),
        text(&info["hostname"]),
        text(&ours["host_name"]),
    );
    r.eq(
        "map".into(),
        text(&info["mapname"]),
        text(&ours["map"]["name"]),
    );
    r.eq(
        "max players".into(),
        text(&info["maxplayers"]),
        ours["slot_max"].as_i64().map(|n| n.to_string()),
    );
    r.eq(
        "mod".into(),
        text(&info["gamevariant"]),
        text(&ours["mod"]["name"]),
    );
    // UTF-8 with the other bytes dropped: the Latin-1 name loses its accented letters
    let utf8_only = |s: &str| s.chars().filter(char::is_ascii).collect::<String>();
    r.list(
        "players".into(),
        &players(&v["players"], "player", "score", "ping"),
        &our_players(&ours, utf8_only),
    );
    r.list(
        "teams".into(),
        &teams(&v["teams"], "team", "score"),
        &teams(&ours["teams"], "name", "score"),
    );
    r.finish("opengsq GameSpy2");
}

#[test]
fn qstat_eye_reads_the_mta_capture() {
    if !enabled("qstat_eye_reads_the_mta_capture") {
        return;
    }
    let server = mta_server();
    let port = server.addr().port();
    let ours = ours_mta(port);
    // qstat asks the given port + 123
    let v = parse_json(&qstat_run("-eye", port - 123), "qstat -eye", "mta");
    let v = &v[0];
    let mut r = Report::default();
    qstat_header(&mut r, v, &ours, text(&ours["host_name"]));
    r.eq(
        "game name".into(),
        text(&v["rules"]["gamename"]),
        text(&ours["game_name"]),
    );
    r.eq(
        "version".into(),
        text(&v["rules"]["_version"]),
        text(&ours["game_version"]),
    );
    for (k, val) in ours["rules"].as_object().into_iter().flatten() {
        r.eq(format!("rule {k}"), text(&v["rules"][k]), text(val));
    }
    r.list(
        "players".into(),
        &players(&v["players"], "name", "score", "ping"),
        &zero_for_empty(our_players(&ours, str::to_owned)),
    );
    r.finish("qstat -eye");
}

#[test]
fn gamedig_ase_reads_the_mta_capture() {
    if !enabled("gamedig_ase_reads_the_mta_capture") {
        return;
    }
    let server = mta_server();
    let port = server.addr().port();
    let ours = ours_mta(port);
    let v = gamedig("ase", port, "mta");
    let mut r = Report::default();
    gamedig_header(&mut r, &v, &ours);
    r.eq(
        "game name".into(),
        text(&v["raw"]["gamename"]),
        text(&ours["game_name"]),
    );
    for (k, val) in ours["rules"].as_object().into_iter().flatten() {
        r.eq(format!("rule {k}"), text(&v["raw"][k]), text(val));
    }
    r.list(
        "players".into(),
        &players(&v["players"], "name", "raw.score", "raw.ping"),
        &our_players(&ours, str::to_owned),
    );
    r.finish("gamedig protocol-ase");
}

const OPENGSQ_ASE: &str = r#"
import asyncio, dataclasses, json, sys
from opengsq.protocols import ASE
out = {"error": None}
try:
    s = asyncio.run(ASE(sys.argv[1], int(sys.argv[2]), timeout=2.0).get_status())
    out.update(dataclasses.asdict(s))
except Exception as e:
    out["error"] = f"{type(e).__name__}: {e}"
json.dump(out, sys.stdout)
"#;

#[test]
fn opengsq_ase_reads_the_mta_capture() {
    if !enabled("opengsq_ase_reads_the_mta_capture") {
        return;
    }
    let server = mta_server();
    let port = server.addr().port();
    let ours = ours_mta(port);
    let v = opengsq(OPENGSQ_ASE, port, "mta");
    let mut r = Report::default();
    r.eq("error".into(), v["error"].clone(), Value::Null);
    r.eq(
        "host name".into(),
        text(&v["hostname"]),
        text(&ours["host_name"]),
    );
    r.eq(
        "game name".into(),
        text(&v["game_name"]),
        text(&ours["game_name"]),
    );
    r.eq(
        "game port".into(),
        v["game_port"].clone(),
        ours["connect_port"].clone(),
    );
    r.eq("map".into(), text(&v["map"]), text(&ours["map"]["name"]));
    r.eq(
        "game type".into(),
        text(&v["game_type"]),
        text(&ours["game_type"]),
    );
    r.eq(
        "password".into(),
        v["password"].clone(),
        ours["password"].clone(),
    );
    r.eq(
        "players".into(),
        v["num_players"].clone(),
        ours["player_count"].clone(),
    );
    r.eq(
        "max players".into(),
        v["max_players"].clone(),
        ours["slot_max"].clone(),
    );
    for (k, val) in ours["rules"].as_object().into_iter().flatten() {
        r.eq(format!("rule {k}"), text(&v["rules"][k]), text(val));
    }
    r.list(
        "players".into(),
        &players(&v["players"], "name", "score", "ping"),
        &zero_for_empty(our_players(&ours, str::to_owned)),
    );
    r.finish("opengsq ASE");
}
