//! The Doom 3 engine decoder, mapping and client against the Doom 3 and Quake 4 replies
//! of `tests/data/doom3/` (rebuilt from GameQ's values: see SOURCES.md there): each
//! decodes in its dialect, says what GameQ read, encodes back to the same bytes, and the
//! client given it as its server's reply (its challenge `PiNG`) answers with the same
//! status.

use std::time::Instant;

use ogp_proto::client::{QueryDriver, Timing};
use ogp_proto::doom3::client::{QueryMachine, QueryOptions};
use ogp_proto::doom3::mapping::info_to_status;
use ogp_proto::doom3::{decode_info_response, Dialect};
use ogp_proto::Protocol;
use serde_json::Value;

fn unhex(s: &str) -> Vec<u8> {
    (0..s.len() / 2)
        .map(|i| u8::from_str_radix(&s[2 * i..2 * i + 2], 16).unwrap())
        .collect()
}

fn capture(name: &str) -> (Value, Vec<u8>) {
    let path = format!("{}/tests/data/doom3/{name}", env!("CARGO_MANIFEST_DIR"));
    let c: Value = serde_json::from_slice(&std::fs::read(&path).unwrap()).unwrap();
    let bytes = unhex(c["responses"]["reply"][0].as_str().unwrap());
    (c, bytes)
}

fn check(name: &str, dialect: Dialect) {
    let (c, bytes) = capture(name);
    let e = &c["expected"];
    let r = decode_info_response(&bytes, None).unwrap();
    assert_eq!(r.dialect, dialect, "{name}");
    assert_eq!(r.challenge, u32::from_le_bytes(*b"PiNG"));
    assert_eq!(r.protocol_string(), e["protocol"].as_str().unwrap());
    assert_eq!(r.rules.len() as u64, e["rules"].as_u64().unwrap());
    assert_eq!(r.tail.os_mask, Some(0));
    let mut again = Vec::new();
    r.encode(&mut again);
    // the encoder writes UTF-8: the same bytes when every string is ASCII
    if r.warnings.is_empty() {
        assert_eq!(again, bytes, "{name}: encodes back");
    }
    let s = info_to_status(&r);
    assert_eq!(s.host_name_raw.as_deref(), e["host_name_raw"].as_str());
    assert_eq!(s.map.as_ref().map(|m| m.name.as_str()), e["map"].as_str());
    assert_eq!(s.slot_max.map(u64::from), e["slot_max"].as_u64());
    assert_eq!(s.game_name.as_deref(), e["game_name"].as_str());
    assert_eq!(s.game_type.as_deref(), e["game_type"].as_str());
    let want = e["players"].as_array().unwrap();
    let got = s.players.as_ref().unwrap();
    assert_eq!(got.len(), want.len());
    for (p, w) in got.iter().zip(want) {
        assert_eq!(p.slot.map(u64::from), w[0].as_u64());
        assert_eq!(
            p.name_raw.as_ref().or(p.name.as_ref()).map(|n| n.as_str()),
            w[1].as_str()
        );
        assert_eq!(p.ping.map(u64::from), w[2].as_u64());
        let clan = p.extra.get("clan").map(|c| c.as_str()).unwrap_or("");
        assert_eq!(clan, w[3].as_str().unwrap());
    }
    // the client, its challenge the capture's
    let t0 = Instant::now();
    let mut m = QueryMachine::new(
        QueryOptions::default(),
        Timing::default(),
        u32::from_le_bytes(*b"PiNG"),
        t0,
    );
    let mut d = Vec::new();
    assert!(m.poll_transmit_into(t0, &mut d));
    assert_eq!(d, b"\xff\xffgetInfo\0PiNG");
    m.handle_datagram(t0, &bytes);
    let a = m.take_result().unwrap().unwrap();
    assert_eq!(a.protocol, Protocol::Doom3);
    assert_eq!(a.status, s);
}

#[test]
fn doom3_reply_of_a_tourney_server() {
    check("gameq-doom3-1.json", Dialect::Doom3);
    let (_, bytes) = capture("gameq-doom3-1.json");
    let s = info_to_status(&decode_info_response(&bytes, None).unwrap());
    assert_eq!(
        s.host_name.as_deref(),
        Some("ETS|European Tournament Squad!")
    );
    assert_eq!(s.rules.unwrap().get(".Location"), Some("Germany"));
}

#[test]
fn quake4_reply_with_seven_players_and_clan_tags() {
    check("gameq-quake4-1.json", Dialect::Quake4);
    let (_, bytes) = capture("gameq-quake4-1.json");
    let r = decode_info_response(&bytes, None).unwrap();
    // Latin-1 names, read as such with a warning
    assert!(r.warnings.iter().any(|w| w.field == "PlayerName"));
    assert_eq!(r.players[0].rate, Some(25_600));
    // forced into Doom 3's layout, the clan tags do not fit: the reply is refused
    assert!(decode_info_response(&bytes, Some(Dialect::Doom3)).is_err());
}
