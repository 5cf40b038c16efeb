//! The SA-MP decoder, mapping and client against the two real servers' replies of
//! `tests/data/samp/` (rebuilt from GameQ's and opengsq's decoded values: see SOURCES.md
//! there): each reply decodes without a warning and encodes back to the same bytes, and
//! the client answered with them says what the readers decoded.

use std::net::SocketAddrV4;
use std::time::Instant;

use ogp_proto::client::{QueryDriver, Timing};
use ogp_proto::internals::from_hex;
use ogp_proto::samp::client::{QueryMachine, QueryOptions};
use ogp_proto::samp::wire::{decode_reply, Body, Request};
use serde_json::Value;

fn capture(name: &str) -> Value {
    let path = format!("{}/tests/data/samp/{name}", env!("CARGO_MANIFEST_DIR"));
    serde_json::from_slice(&std::fs::read(&path).unwrap()).unwrap()
}

fn reply(c: &Value, op: &str) -> Vec<u8> {
    from_hex(c["responses"][op].as_str().unwrap()).unwrap()
}

/// Runs the client against the capture (its `d` or `c` replies as asked).
fn query(c: &Value, detailed: bool) -> ogp_proto::client::Answer<ogp_proto::samp::client::Details> {
    let mut opts = QueryOptions::default();
    opts.server = Some(
        c["address"]
            .as_str()
            .unwrap()
            .parse::<SocketAddrV4>()
            .unwrap(),
    );
    opts.detailed = detailed;
    let t0 = Instant::now();
    let mut m = QueryMachine::new(opts, Timing::default(), t0);
    let (mut now, mut d) = (t0, Vec::new());
    for _ in 0..50 {
        while m.poll_transmit_into(now, &mut d) {
            let op = char::from(Request::of(&d).unwrap().opcode).to_string();
            if c["responses"].get(&op).is_some() {
                m.handle_datagram(now, &reply(c, &op));
            }
        }
        match m.poll_timeout() {
            Some(t) => {
                now = t;
                m.handle_timeout(now);
            }
            None => break,
        }
    }
    m.take_result().unwrap().unwrap()
}

#[test]
fn every_reply_decodes_and_encodes_back() {
    for name in ["gameq-gfzone-1.json", "opengsq-valrise-1.json"] {
        let c = capture(name);
        for op in ["i", "r", "d", "c"] {
            let bytes = reply(&c, op);
            let r = decode_reply(&bytes).unwrap();
            assert!(r.warnings.is_empty(), "{name} {op}: {:?}", r.warnings);
            let mut back = Vec::new();
            r.encode(&mut back);
            assert_eq!(back, bytes, "{name} {op}");
        }
    }
}

#[test]
fn the_gfzone_server_says_what_gameq_decoded() {
    let c = capture("gameq-gfzone-1.json");
    let a = query(&c, true);
    let s = &a.status;
    assert_eq!(s.host_name.as_deref(), Some("GFZONE: RPG Server [0.3.7]"));
    assert_eq!(s.game_type.as_deref(), Some("GFZONE RPG v6.2.8c"));
    assert_eq!(s.game_version.as_deref(), Some("0.3.7-R2"));
    assert_eq!(s.map.as_ref().map(|m| m.name.as_str()), Some("San Andreas"));
    assert_eq!(
        (s.player_count, s.slot_max, s.password),
        (Some(34), Some(350), Some(false))
    );
    assert_eq!(s.game_name.as_deref(), Some("SA-MP"));
    let rules = s.rules.as_ref().unwrap();
    assert_eq!(rules.get("language"), Some("Romanian/English"));
    assert_eq!(rules.get("weburl"), Some("www.gfzone.ro/forum"));
    let p = s.players.as_ref().unwrap();
    assert_eq!(p.len(), 34);
    assert_eq!(p[0].name.as_deref(), Some("Unchiu"));
    assert_eq!(
        (p[0].id, p[0].score, p[0].ping),
        (Some(0), Some(33), Some(21))
    );
    assert_eq!((p[33].id, p[33].name.as_deref()), (Some(170), Some("jrD")));
    assert!(a.warnings.is_empty(), "{:?}", a.warnings);
    // `c` (the default): the same players without ids and pings
    let a = query(&c, false);
    let p = a.status.players.unwrap();
    assert_eq!(
        (p.len(), p[0].id, p[0].ping, p[0].score),
        (34, None, None, Some(33))
    );
}

#[test]
fn the_valrise_server_says_what_opengsq_decoded() {
    let c = capture("opengsq-valrise-1.json");
    let a = query(&c, true);
    let s = &a.status;
    assert_eq!(s.host_name.as_deref(), Some("[ENG] Valrise RPG"));
    assert_eq!((s.player_count, s.slot_max), (Some(17), Some(250)));
    assert_eq!(
        s.rules.as_ref().unwrap().get("SAMPCAC version"),
        Some("0.10.0")
    );
    let p = s.players.as_ref().unwrap();
    assert_eq!(p.len(), 17);
    assert_eq!(
        (p[16].id, p[16].name.as_deref(), p[16].ping),
        (Some(17), Some("Simon_Stewart"), Some(103))
    );
    match decode_reply(&reply(&c, "i")).unwrap().body {
        Body::Info(i) => assert_eq!(i.language, "English"),
        b => panic!("{b:?}"),
    }
}

#[test]
fn the_catalogue_names_sa_mp_from_an_answer() {
    use ogp_proto::games::{catalogue, Rule};
    let a = query(&capture("gameq-gfzone-1.json"), false);
    let got = catalogue()
        .identify(ogp_proto::Protocol::Samp, &a.status)
        .unwrap();
    assert_eq!((got.game.id.as_str(), got.rule), ("gtasam", Rule::Protocol));
    assert!(catalogue()
        .identify(ogp_proto::Protocol::Gamespy3, &a.status)
        .is_none());
}
