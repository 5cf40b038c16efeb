//! The GameSpy v2 decoder, mapping and client against the Halo replies in
//! `tests/data/gamespy2/` (see SOURCES.md there: rebuilt from GameQ's values): each
//! decodes without a warning but the Latin-1 one, says what GameQ decoded, and the client
//! given the replies' sections in one datagram (our request asks for all three) answers
//! with the same status.

use std::time::Instant;

use ogp_proto::client::{QueryDriver, Timing};
use ogp_proto::gamespy2::client::{QueryMachine, QueryOptions};
use ogp_proto::gamespy2::mapping::info_to_status;
use ogp_proto::gamespy2::wire::{decode_reply, encode_reply, Request};
use ogp_proto::gamespy3::ServerInfo;
use ogp_proto::{Protocol, Status};
use serde_json::Value;

fn unhex(s: &str) -> Vec<u8> {
    (0..s.len() / 2)
        .map(|i| u8::from_str_radix(&s[2 * i..2 * i + 2], 16).unwrap())
        .collect()
}

fn capture(name: &str) -> Value {
    let path = format!("{}/tests/data/gamespy2/{name}", env!("CARGO_MANIFEST_DIR"));
    serde_json::from_slice(&std::fs::read(&path).unwrap()).unwrap()
}

fn datagram(c: &Value, which: &str) -> Vec<u8> {
    unhex(c["responses"][which][0].as_str().unwrap())
}

/// The Halo capture's two replies as one `ServerInfo`.
fn halo() -> (Value, ServerInfo) {
    let c = capture("gameq-halo-1.json");
    let details = decode_reply(&datagram(&c, "details")).unwrap();
    assert_eq!(details.id, u32::from_be_bytes(*b"CORY"));
    assert!(details.info.players.is_empty() && details.info.teams.is_empty());
    let roster = decode_reply(&datagram(&c, "roster")).unwrap();
    assert_eq!(roster.id, u32::from_be_bytes(*b"CORX"));
    assert!(roster.info.server.is_empty());
    assert_eq!(
        (roster.player_count, roster.team_count),
        (Some(13), Some(2))
    );
    // the only warning: the Latin-1 player name
    assert!(details.warnings.is_empty(), "{:?}", details.warnings);
    assert_eq!(roster.warnings.len(), 1, "{:?}", roster.warnings);
    assert_eq!(roster.warnings[0].message, "not UTF-8: read as Latin-1");
    let info = ServerInfo {
        server: details.info.server,
        players: roster.info.players,
        teams: roster.info.teams,
    };
    (c, info)
}

fn check(e: &Value, s: &Status) {
    let text = |k: &str| e[k].as_str().map(str::to_owned);
    let num = |k: &str| e[k].as_u64().map(|n| u32::try_from(n).unwrap());
    assert_eq!(s.host_name.as_deref().map(str::to_owned), text("host_name"));
    assert_eq!(s.map.as_ref().map(|m| m.name.to_string()), text("map"));
    assert_eq!(s.game_type.as_deref().map(str::to_owned), text("game_type"));
    assert_eq!(
        s.game_version.as_deref().map(str::to_owned),
        text("game_version")
    );
    assert_eq!(s.mod_info.as_ref().map(|m| m.name.to_string()), text("mod"));
    assert_eq!(s.connect_port.map(u32::from), num("connect_port"));
    assert_eq!(s.player_count, num("player_count"));
    assert_eq!(s.slot_max, num("slot_max"));
    assert_eq!(s.password, e["password"].as_bool());
    let players = s.players.as_ref().unwrap();
    assert_eq!(Some(players.len() as u32), num("players"));
    let first = &players[0];
    let f = &e["first_player"];
    assert_eq!(first.name.as_deref(), f["name"].as_str());
    assert_eq!(first.score.map(i64::from), f["score"].as_i64());
    assert_eq!(first.ping.map(u64::from), f["ping"].as_u64());
    // Halo counts teams from 0: team_ 1 is Blue, the second team
    assert_eq!(first.team.map(i64::from), f["team"].as_i64());
    assert!(players
        .iter()
        .any(|p| p.name.as_deref() == e["latin1_player"].as_str()));
    let teams = s.teams.as_ref().unwrap();
    let names: Vec<_> = teams.iter().map(|t| t.name.as_deref().unwrap()).collect();
    assert_eq!(names, ["Red", "Blue"]);
    let scores: Vec<_> = teams.iter().map(|t| t.score.unwrap()).collect();
    assert_eq!(scores, [2, 9]);
    // every team index names a listed team
    assert!(players
        .iter()
        .all(|p| p.team.is_some_and(|t| (0..2).contains(&t))));
}

#[test]
fn halo_replies_say_what_gameq_decoded() {
    let (c, info) = halo();
    assert_eq!(info.get("gamever"), Some("01.00.10.0621"));
    assert_eq!(info.get("player_flags"), Some("1372606472,1091"));
    check(&c["expected"], &info_to_status(&info));
    let rules = info_to_status(&info).rules.unwrap();
    assert_eq!(rules.get("teamplay"), Some("1"));
    assert_eq!(rules.get("fraglimit"), Some("10"));
}

#[test]
fn the_client_reads_the_halo_sections_in_one_reply() {
    let (c, info) = halo();
    let t0 = Instant::now();
    let mut m = QueryMachine::new(QueryOptions::default(), Timing::default(), 0x4f47_5032, t0);
    let d = m.poll_transmit(t0).unwrap();
    assert_eq!(Request::decode(&d).unwrap(), Request::full(0x4f47_5032));
    let mut reply = Vec::new();
    encode_reply(0x4f47_5032, &info, &mut reply);
    m.handle_datagram(t0, &reply);
    let a = m.take_result().unwrap().unwrap();
    assert_eq!(a.protocol, Protocol::Gamespy2);
    assert_eq!(a.details.reply.info, info);
    check(&c["expected"], &a.status);
}
