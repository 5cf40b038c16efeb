//! `ogp query -p gamespy2|ase`, auto-detection, `ogp scan` lines (`gs2 HOST:PORT`, `eye
//! HOST:PORT`, qstat's type names) and `ogp decode`, against loopback servers
//! (`ogp_testkit::replay::Replay`) sending hostile replies: escape sequences, C1 controls
//! and bidirectional overrides in every string reach no terminal (replaced in human
//! output, escaped in JSON), and the values are read as sent.

use crate::common;

use std::time::Duration;

use common::*;
use ogp_proto::ase::wire::{flag, AsePlayer, Reply as AseReply};
use ogp_proto::gamespy2::wire::{encode_sections, Request};
use ogp_proto::gamespy3::{Column, ServerInfo};
use ogp_testkit::replay::Replay;
use serde_json::Value;

const LIMIT: Duration = Duration::from_secs(20);

fn gs2_server() -> Replay {
    let info = ServerInfo {
        server: vec![
            ("hostname".into(), HOSTILE.into()),
            ("mapname".into(), format!("map{HOSTILE}").into()),
            ("numplayers".into(), "1".into()),
            ("maxplayers".into(), "8".into()),
            (format!("k{HOSTILE}").into(), format!("v{HOSTILE}").into()),
        ],
        players: vec![
            Column {
                key: "player_".into(),
                values: vec![format!("p{HOSTILE}").into()],
            },
            Column {
                key: "team_".into(),
                values: vec!["1".into()],
            },
        ],
        teams: vec![Column {
            key: "team_t".into(),
            values: vec![format!("t{HOSTILE}").into()],
        }],
    };
    Replay::start(move |request| match Request::decode(request) {
        Ok(r) => {
            let mut out = Vec::new();
            encode_sections(&r, &info, &mut out);
            vec![out]
        }
        Err(_) => Vec::new(),
    })
}

fn ase_reply() -> Vec<u8> {
    let mut r = AseReply::default();
    r.game_name = "mta".into();
    r.port = "22003".into();
    r.server_name = HOSTILE.into();
    r.map = format!("map{HOSTILE}").as_str().into();
    r.num_players = "1".into();
    r.max_players = "8".into();
    r.rules = vec![(format!("k{HOSTILE}").into(), format!("v{HOSTILE}").into())];
    r.players = vec![AsePlayer {
        flags: flag::NAME | flag::TEAM | flag::SKIN | flag::SCORE | flag::PING,
        name: Some(format!("p{HOSTILE}").into()),
        team: Some(format!("t{HOSTILE}").into()),
        skin: Some(format!("s{HOSTILE}").into()),
        score: Some("7".into()),
        ping: Some("50".into()),
        time: None,
    }];
    let mut out = Vec::new();
    r.encode(&mut out);
    out
}

fn ase_server() -> Replay {
    let reply = ase_reply();
    Replay::start(move |request| {
        if request == b"s" {
            vec![reply.clone()]
        } else {
            Vec::new()
        }
    })
}

/// Human output of `ogp ARGS`: it succeeded, shows the name, and nothing unsafe.
fn human(args: &[&str], input: Option<&[u8]>) -> String {
    let ran = ogp_run_with_input(args, input, LIMIT);
    assert_eq!(ran.code, Some(0), "{args:?}: {}", ran.describe());
    let out = String::from_utf8_lossy(&ran.stdout).into_owned();
    assert!(out.contains("evil"), "{args:?}: {out}");
    assert_eq!(
        unsafe_chars(&out),
        Vec::<char>::new(),
        "{args:?} stdout: {out:?}"
    );
    assert_eq!(
        unsafe_chars(&ran.stderr),
        Vec::<char>::new(),
        "{args:?} stderr"
    );
    out
}

fn json(args: &[&str]) -> Value {
    let ran = ogp_run(args, LIMIT);
    assert_eq!(ran.code, Some(0), "{args:?}: {}", ran.describe());
    parse_json(&ran, "ogp", &format!("{args:?}"))
}

#[test]
fn gamespy2_output_is_safe_and_exact() {
    let server = gs2_server();
    let target = format!("127.0.0.1:{}", server.addr().port());
    for args in [
        vec!["query", "-p", "gamespy2", "-v", &target],
        vec!["query", "-p", "gs2", &target],
        vec!["query", &target],
    ] {
        human(&args, None);
    }
    let v = json(&["query", "--json", "-p", "gamespy2", &target]);
    let s = &v["status"];
    assert_eq!(s["host_name"], HOSTILE);
    assert_eq!(s["map"]["name"], format!("map{HOSTILE}"));
    assert_eq!(s["players"][0]["name"], format!("p{HOSTILE}"));
    // one team listed, team_ 1: counted from 1, the first team
    assert_eq!(s["players"][0]["team"], 0);
    assert_eq!(s["teams"][0]["name"], format!("t{HOSTILE}"));
    assert_eq!(s["rules"][format!("k{HOSTILE}")], format!("v{HOSTILE}"));
    // auto-detection names it
    let v = json(&["query", "--json", &target]);
    assert_eq!(v["protocol"], "gamespy2");
    // scan lines, ours and qstat's
    let list = format!("gamespy2 {target}\ngs2 {target}\n-gs2 {target}\nauto {target}\n");
    let table = human(&["scan", "--no-progress", "-"], Some(list.as_bytes()));
    assert_eq!(
        table.lines().filter(|l| l.contains("evil")).count(),
        4,
        "{table}"
    );
}

#[test]
fn ase_output_is_safe_and_exact() {
    let server = ase_server();
    let target = format!("127.0.0.1:{}", server.addr().port());
    for args in [
        vec!["query", "-p", "ase", "-v", &target],
        vec!["query", "-p", "eye", &target],
        vec!["query", &target],
    ] {
        human(&args, None);
    }
    let v = json(&["query", "--json", "-p", "ase", &target]);
    let s = &v["status"];
    assert_eq!(s["host_name"], HOSTILE);
    assert_eq!(s["players"][0]["name"], format!("p{HOSTILE}"));
    assert_eq!(s["players"][0]["model"], format!("s{HOSTILE}"));
    assert_eq!(s["players"][0]["team"], 0);
    assert_eq!(s["teams"][0]["name"], format!("t{HOSTILE}"));
    assert_eq!(s["players"][0]["score"], 7);
    assert_eq!(v["game_id"], "gtasamta");
    let v = json(&["query", "--json", &target]);
    assert_eq!(v["protocol"], "ase");
    let list = format!("ase {target}\neye {target}\n-eye {target}\nauto {target}\n");
    let table = human(&["scan", "--no-progress", "-"], Some(list.as_bytes()));
    assert_eq!(
        table.lines().filter(|l| l.contains("evil")).count(),
        4,
        "{table}"
    );
}

#[test]
fn decode_reads_both_and_shows_nothing_unsafe() {
    let hex = ogp_proto::internals::to_hex(&ase_reply());
    let out = human(&["decode", &hex], None);
    assert!(
        out.starts_with("ASE EYE1 reply: 1 rule, 1 player record"),
        "{out}"
    );
    let mut gs2 = Vec::new();
    let info = ServerInfo {
        server: vec![("hostname".into(), HOSTILE.into())],
        ..ServerInfo::default()
    };
    encode_sections(&Request::full(9), &info, &mut gs2);
    let out = human(&["decode", &ogp_proto::internals::to_hex(&gs2)], None);
    assert!(
        out.starts_with("GameSpy v2 reply, id 00000009: 1 server key"),
        "{out}"
    );
    // the requests, guessed from their bytes
    let ran = ogp_run(&["decode", "--json", "fefd0001020304ffffff", "73"], LIMIT);
    let lines: Vec<Value> = String::from_utf8_lossy(&ran.stdout)
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(lines[0]["protocol"], "gamespy2");
    assert_eq!(lines[0]["id"], 0x0102_0304);
    assert_eq!(lines[1]["protocol"], "ase");
    assert_eq!(lines[1]["kind"], "query");
}
