//! The Chocolate Doom decoder and client against replies recorded from Debian's
//! `chocolate-server` (`tests/data/doom/`, see SOURCES.md there): empty, then with a
//! client joined.

use std::time::Instant;

use ogp_proto::client::{QueryDriver, Timing};
use ogp_proto::doom::client::{QueryMachine, QueryOptions};
use ogp_proto::doom::decode_reply;
use ogp_proto::internals::from_hex;
use serde_json::Value;

fn reply(key: &str) -> Vec<u8> {
    let path = format!(
        "{}/tests/data/doom/chocolate-server-3.0.0.json",
        env!("CARGO_MANIFEST_DIR")
    );
    let c: Value = serde_json::from_slice(&std::fs::read(&path).unwrap()).unwrap();
    from_hex(c["responses"][key].as_str().unwrap()).unwrap()
}

#[test]
fn the_real_servers_replies_decode_and_encode_back() {
    for key in ["empty", "one_player"] {
        let bytes = reply(key);
        let r = decode_reply(&bytes).unwrap();
        assert!(r.warnings.is_empty());
        assert_eq!(r.version, "Chocolate Doom 3.0.0");
        assert_eq!(r.description, "Test Doom");
        let mut back = Vec::new();
        r.encode(&mut back);
        assert_eq!(back, bytes);
    }
}

#[test]
fn the_client_reads_the_joined_server() {
    let t0 = Instant::now();
    let mut m = QueryMachine::new(QueryOptions::default(), Timing::default(), t0);
    let mut d = Vec::new();
    assert!(m.poll_transmit_into(t0, &mut d));
    m.handle_datagram(t0, &reply("one_player"));
    let a = m.take_result().unwrap().unwrap();
    let s = a.status;
    assert_eq!((s.player_count, s.slot_max), (Some(1), Some(4)));
    assert_eq!(s.game_name.as_deref(), Some("doom2"));
    assert_eq!(s.game_mode.as_deref(), Some("commercial"));
    assert_eq!(s.host_name.as_deref(), Some("Test Doom"));
}

#[test]
fn the_catalogue_names_chocolate_doom_and_mumble_from_their_answers() {
    use ogp_proto::games::{catalogue, Rule};
    let s = ogp_proto::doom::client::reply_to_status(&decode_reply(&reply("empty")).unwrap());
    let got = catalogue().identify(ogp_proto::Protocol::Doom, &s).unwrap();
    assert_eq!(
        (got.game.id.as_str(), got.rule),
        ("chocolatedoom", Rule::Protocol)
    );
    let m = ogp_proto::mumble::decode_reply(
        &from_hex("000103044142434445464748000000000000000c00011940").unwrap(),
    )
    .unwrap();
    let s = ogp_proto::mumble::client::reply_to_status(&m);
    let got = catalogue()
        .identify(ogp_proto::Protocol::Mumble, &s)
        .unwrap();
    assert_eq!(got.game.id.as_str(), "mumble");
}
