//! The Minetest handshake decoder and encoders against a handshake recorded from
//! Debian's `minetest-server` 5.6.1 (`tests/data/minetest/`, see SOURCES.md there): the
//! server's packets decode to what it said, and our requests are the bytes it answered.
//! (`ogp-load scan --family minetest` replays the same capture.)

use ogp_proto::internals::from_hex;
use ogp_proto::minetest::wire::{
    decode_packet, encode_ack, encode_disco, encode_init, encode_open, Body, Control, PLAYER_NAME,
};
use serde_json::Value;

fn capture(side: &str, key: &str) -> Vec<u8> {
    let path = format!(
        "{}/tests/data/minetest/minetest-5.6.1-handshake.json",
        env!("CARGO_MANIFEST_DIR")
    );
    let c: Value = serde_json::from_slice(&std::fs::read(&path).unwrap()).unwrap();
    from_hex(c[side][key].as_str().unwrap()).unwrap()
}

#[test]
fn the_real_servers_handshake_decodes() {
    let p = decode_packet(&capture("responses", "set_peer_id")).unwrap();
    assert_eq!((p.sender, p.channel, p.reliable), (1, 0, Some(65500)));
    assert_eq!(p.body, Body::Control(Control::SetPeerId(2)));
    let p = decode_packet(&capture("responses", "ack_open")).unwrap();
    assert_eq!((p.sender, p.reliable), (1, None));
    assert_eq!(p.body, Body::Control(Control::Ack(65500)));
    let p = decode_packet(&capture("responses", "hello")).unwrap();
    assert_eq!((p.sender, p.channel, p.reliable), (1, 0, Some(65501)));
    let Body::Hello(h) = p.body else {
        panic!("not a HELLO: {p:?}")
    };
    assert_eq!(
        (h.serialization, h.compression, h.protocol, h.auth_mechs),
        (29, 0, 41, 4)
    );
    assert_eq!(h.name.to_string(), PLAYER_NAME);
}

#[test]
fn our_requests_are_the_ones_it_answered() {
    let mut out = Vec::new();
    encode_open(&mut out);
    assert_eq!(out, capture("requests", "open"));
    out.clear();
    encode_ack(&mut out, 2, 0, 65500);
    assert_eq!(out, capture("requests", "ack_peer_id"));
    out.clear();
    encode_init(&mut out, 2, PLAYER_NAME);
    assert_eq!(out, capture("requests", "init"));
    out.clear();
    encode_ack(&mut out, 2, 0, 65501);
    assert_eq!(out, capture("requests", "ack_hello"));
    out.clear();
    encode_disco(&mut out, 2);
    assert_eq!(out, capture("requests", "disco"));
}

/// Every truncation of the server's packets is an error or a packet, never a panic.
#[test]
fn truncated_packets_fail_cleanly() {
    for key in ["set_peer_id", "ack_open", "hello"] {
        let d = capture("responses", key);
        for n in 0..d.len() {
            let _ = decode_packet(d.get(..n).unwrap());
        }
        assert!(decode_packet(&d).is_ok());
    }
}
