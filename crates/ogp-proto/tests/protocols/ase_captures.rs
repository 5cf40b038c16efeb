//! The ASE decoder, mapping and client against the Multi Theft Auto reply in
//! `tests/data/ase/` (see SOURCES.md there): it decodes without a warning, says what
//! GameQ decoded, encodes back to the same bytes, and the client given it as its server's
//! reply answers with the same status.

use std::time::Instant;

use ogp_proto::ase::client::{QueryMachine, QueryOptions};
use ogp_proto::ase::mapping::reply_to_status;
use ogp_proto::ase::wire::{decode_reply, flag};
use ogp_proto::client::{QueryDriver, Timing};
use ogp_proto::{Protocol, Status};
use serde_json::Value;

fn unhex(s: &str) -> Vec<u8> {
    (0..s.len() / 2)
        .map(|i| u8::from_str_radix(&s[2 * i..2 * i + 2], 16).unwrap())
        .collect()
}

fn capture(name: &str) -> (Value, Vec<u8>) {
    let path = format!("{}/tests/data/ase/{name}", env!("CARGO_MANIFEST_DIR"));
    let c: Value = serde_json::from_slice(&std::fs::read(&path).unwrap()).unwrap();
    let bytes = unhex(c["responses"]["reply"][0].as_str().unwrap());
    (c, bytes)
}

fn check(e: &Value, s: &Status) {
    let text = |k: &str| e[k].as_str().map(str::to_owned);
    let num = |k: &str| e[k].as_u64().map(|n| u32::try_from(n).unwrap());
    assert_eq!(s.host_name.as_deref().map(str::to_owned), text("host_name"));
    assert_eq!(s.game_name.as_deref().map(str::to_owned), text("game_name"));
    assert_eq!(s.game_type.as_deref().map(str::to_owned), text("game_type"));
    assert_eq!(s.map.as_ref().map(|m| m.name.to_string()), text("map"));
    assert_eq!(
        s.game_version.as_deref().map(str::to_owned),
        text("game_version")
    );
    assert_eq!(s.connect_port.map(u32::from), num("connect_port"));
    assert_eq!(s.password, e["password"].as_bool());
    assert_eq!(s.player_count, num("player_count"));
    assert_eq!(s.slot_max, num("slot_max"));
    let rules = s.rules.as_ref().unwrap();
    for (k, v) in e["rules"].as_object().unwrap() {
        assert_eq!(rules.get(k), v.as_str(), "{k}");
    }
    let players = s.players.as_ref().unwrap();
    assert_eq!(Some(players.len() as u32), num("players"));
    let (first, last) = (&players[0], players.last().unwrap());
    let (f, l) = (&e["first_player"], &e["last_player"]);
    assert_eq!(first.name.as_deref(), f["name"].as_str());
    assert_eq!(first.score.map(i64::from), f["score"].as_i64());
    assert_eq!(first.ping.map(u64::from), f["ping"].as_u64());
    assert_eq!(last.name.as_deref(), l["name"].as_str());
    assert_eq!(last.score, None, "an empty score stays unset");
    assert_eq!(last.ping.map(u64::from), l["ping"].as_u64());
    // every field of every record is empty but name, score and ping: no team, skin, time
    assert!(s.teams.is_none());
    assert!(players
        .iter()
        .all(|p| p.team.is_none() && p.model.is_none() && p.time.is_none() && p.extra.is_empty()));
}

#[test]
fn multi_theft_auto_reply_says_what_gameq_decoded() {
    let (c, bytes) = capture("gameq-mta-2.json");
    let r = decode_reply(&bytes).unwrap();
    assert!(r.warnings.is_empty(), "{:?}", r.warnings);
    assert!(r.players.iter().all(|p| p.flags == 0x3f));
    assert_eq!(r.players.len(), 122);
    assert_eq!(r.players[19].score.as_deref(), Some(""));
    assert!(r.players.iter().all(|p| p.flags & flag::TIME != 0));
    let mut again = Vec::new();
    r.encode(&mut again);
    assert_eq!(again, bytes, "encodes back to the same bytes");
    check(&c["expected"], &reply_to_status(&r));
}

#[test]
fn the_client_reads_the_multi_theft_auto_reply() {
    let (c, bytes) = capture("gameq-mta-2.json");
    let t0 = Instant::now();
    let mut m = QueryMachine::new(QueryOptions::default(), Timing::default(), t0);
    assert_eq!(m.poll_transmit(t0).unwrap(), b"s");
    m.handle_datagram(t0, &bytes);
    let a = m.take_result().unwrap().unwrap();
    assert_eq!(a.protocol, Protocol::Ase);
    assert_eq!(a.datagrams, 1);
    check(&c["expected"], &a.status);
}
