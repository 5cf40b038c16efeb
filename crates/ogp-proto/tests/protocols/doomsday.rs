//! Doomsday's beacon against replies recorded from Debian's `doomsday-server` 2.3.1
//! (`tests/data/doomsday/`, see SOURCES.md there), and hostile replies: every cut,
//! lying sizes and counts, a zlib bomb, deep arrays, floods of values, garbage.

use std::io::Write as _;
use std::time::Instant;

use ogp_proto::client::{QueryDriver, Timing};
use ogp_proto::doomsday::client::{reply_to_status, QueryMachine, QueryOptions};
use ogp_proto::doomsday::wire::{
    decode_message, decode_reply, pack, Member, Reply, Value as DsValue, MAX_DEPTH, MAX_INFLATED,
    MAX_MEMBERS, MAX_VALUES, REQUEST,
};
use ogp_proto::internals::from_hex;
use ogp_proto::{DecodeErrorKind, Protocol};
use serde_json::Value;

fn capture() -> Value {
    let path = format!(
        "{}/tests/data/doomsday/doomsday-server-2.3.1.json",
        env!("CARGO_MANIFEST_DIR")
    );
    serde_json::from_slice(&std::fs::read(&path).unwrap()).unwrap()
}

fn reply(key: &str) -> Vec<u8> {
    from_hex(capture()["responses"][key].as_str().unwrap()).unwrap()
}

/// A datagram: `port`, the announced size and `message` zlib-packed.
fn datagram(port: u16, announced: u32, message: &[u8]) -> Vec<u8> {
    let mut d = port.to_le_bytes().to_vec();
    d.extend_from_slice(&announced.to_be_bytes());
    d.extend_from_slice(&pack(message));
    d
}

/// A message header: version 4, record id 1, `count` members.
fn header(count: u32) -> Vec<u8> {
    let mut m = vec![4, 0, 0, 0, 1, 0, 0, 0];
    m.extend_from_slice(&count.to_le_bytes());
    m
}

fn kind(d: &[u8]) -> DecodeErrorKind {
    decode_reply(d).unwrap_err().kind
}

#[test]
fn the_real_servers_replies_decode_to_their_expected_values() {
    let c = capture();
    for key in ["default", "configured"] {
        let bytes = reply(key);
        assert!(ogp_proto::doomsday::wire::looks_like_reply(&bytes), "{key}");
        assert_eq!(
            ogp_proto::detect::guess(&bytes),
            Some(Protocol::Doomsday),
            "{key}"
        );
        let r = decode_reply(&bytes).unwrap();
        assert!(r.warnings.is_empty(), "{key}: {:?}", r.warnings);
        let e = &c["expected"][key];
        assert_eq!(
            u64::from(r.service_port),
            e["service_port"].as_u64().unwrap()
        );
        assert_eq!(
            u64::from(r.announced_size),
            e["inflated_size"].as_u64().unwrap()
        );
        assert_eq!(r.members.len() as u64, e["members"].as_u64().unwrap());
        for k in ["name", "desc", "game", "map", "cfg", "ver"] {
            assert_eq!(r.text(k).map(|t| t.as_str()), e[k].as_str(), "{key} {k}");
        }
        for k in ["pmax", "cver", "flags"] {
            assert_eq!(r.number(k).map(u64::from), e[k].as_u64(), "{key} {k}");
        }
        // re-encoded, it decodes to the same members
        let mut back = Vec::new();
        r.encode(&mut back);
        assert_eq!(decode_reply(&back).unwrap().members, r.members);
    }
}

#[test]
fn the_client_maps_the_configured_server_and_the_catalogue_names_it() {
    let t0 = Instant::now();
    let mut m = QueryMachine::new(QueryOptions::default(), Timing::default(), t0);
    let mut d = Vec::new();
    assert!(m.poll_transmit_into(t0, &mut d));
    assert_eq!(d, REQUEST);
    assert_eq!(ogp_proto::detect::guess(&d), Some(Protocol::Doomsday));
    m.handle_datagram(t0, &reply("configured"));
    let s = m.take_result().unwrap().unwrap().status;
    assert_eq!(s.host_name.as_deref(), Some("OGP Doomsday"));
    assert_eq!(s.map.as_ref().map(|m| m.name.as_str()), Some("E1M3"));
    assert_eq!(s.game_name.as_deref(), Some("doom1-freedoom"));
    assert_eq!(s.game_type.as_deref(), Some("skill3 coop jump"));
    assert_eq!(s.game_version.as_deref(), Some("2.3.1"));
    assert_eq!(s.connect_port, Some(13209));
    assert_eq!((s.player_count, s.slot_max), (Some(0), Some(5)));
    let rules = s.rules.as_ref().unwrap();
    assert_eq!(rules.get("desc"), Some("Capture for ogp"));
    assert_eq!(rules.get("cver"), Some("20000"));

    use ogp_proto::games::{catalogue, Rule};
    let got = catalogue().identify(Protocol::Doomsday, &s).unwrap();
    assert_eq!(
        (got.game.id.as_str(), got.rule),
        ("doomsday", Rule::Protocol)
    );
}

#[test]
fn every_cut_and_every_flipped_byte_is_an_error_or_a_reply_never_a_panic() {
    for key in ["default", "configured"] {
        let d = reply(key);
        for n in 0..d.len() {
            assert!(decode_reply(&d[..n]).is_err(), "{key} cut at {n}");
        }
        for i in 0..d.len() {
            for bit in [0x01, 0x80] {
                let mut x = d.clone();
                x[i] ^= bit;
                let _ = decode_reply(&x);
            }
        }
    }
    // the inflated message cut anywhere
    let mut message = Vec::new();
    decode_reply(&reply("configured"))
        .unwrap()
        .encode_message(&mut message);
    for n in 0..message.len() {
        assert!(decode_message(&message[..n]).is_err(), "message cut at {n}");
    }
}

#[test]
fn a_zlib_bomb_stops_at_the_cap() {
    // 8 MiB of zeros packs into about 8 KiB: inflation stops past MAX_INFLATED
    let mut e = flate2::write::ZlibEncoder::new(Vec::new(), flate2::Compression::best());
    for _ in 0..8 {
        e.write_all(&[0u8; 1 << 20]).unwrap();
    }
    let bomb = e.finish().unwrap();
    let mut d = vec![0x99, 0x33, 0, 0, 0x01, 0x00];
    d.extend_from_slice(&bomb);
    let t = Instant::now();
    assert_eq!(
        kind(&d),
        DecodeErrorKind::TooLarge {
            limit: MAX_INFLATED as u64
        }
    );
    assert!(t.elapsed().as_secs() < 5);
    // just past the cap, announcing a small size: still an error
    let d = datagram(1, 10, &vec![b'x'; MAX_INFLATED + 1]);
    assert_eq!(
        kind(&d),
        DecodeErrorKind::TooLarge {
            limit: MAX_INFLATED as u64
        }
    );
    // a size announced past the cap: refused before inflating
    let d = datagram(1, u32::MAX, b"tiny");
    assert_eq!(
        decode_reply(&d).unwrap_err().field,
        "inflated size",
        "{:?}",
        decode_reply(&d)
    );
}

#[test]
fn lying_counts_and_lengths_are_errors_before_any_allocation() {
    // a member count past the cap, and one that the bytes cannot hold
    let d = datagram(1, 12, &header(u32::MAX));
    assert_eq!(
        kind(&d),
        DecodeErrorKind::TooLarge {
            limit: MAX_MEMBERS as u64
        }
    );
    let d = datagram(1, 12, &header(200));
    assert!(matches!(kind(&d), DecodeErrorKind::Truncated { .. }));
    // a name length of 4 GiB
    let mut m = header(1);
    m.extend_from_slice(&[0xff, 0xff, 0xff, 0xff]);
    m.extend_from_slice(&[0; 8]);
    assert!(matches!(
        kind(&datagram(1, m.len() as u32, &m)),
        DecodeErrorKind::TooLarge { .. }
    ));
    // an array announcing 2^32 - 1 elements
    let mut m = header(1);
    m.extend_from_slice(&[
        1, 0, 0, 0, b'a', 0x20, 0, 0, 0x10, 3, 0xff, 0xff, 0xff, 0xff, 0,
    ]);
    assert!(matches!(
        kind(&datagram(1, m.len() as u32, &m)),
        DecodeErrorKind::Truncated { .. }
    ));
    // a value type no beacon carries (a dictionary)
    let mut m = header(1);
    m.extend_from_slice(&[1, 0, 0, 0, b'a', 0x20, 0, 0, 0x10, 4, 0, 0, 0, 0]);
    assert!(matches!(
        kind(&datagram(1, m.len() as u32, &m)),
        DecodeErrorKind::Invalid(_)
    ));
}

#[test]
fn deep_arrays_and_floods_of_values_are_capped() {
    // arrays nested past MAX_DEPTH
    let mut v = DsValue::Text("x".into());
    for _ in 0..MAX_DEPTH {
        v = DsValue::Array(vec![v]);
    }
    let mut deep = Reply::default();
    deep.members = vec![Member::new("a", v)];
    let mut d = Vec::new();
    deep.encode(&mut d);
    assert_eq!(
        decode_reply(&d).unwrap_err().field,
        "array",
        "{:?}",
        decode_reply(&d)
    );
    // more values than MAX_VALUES (one array of nones)
    let mut flood = Reply::default();
    flood.members = vec![Member::new(
        "plrs",
        DsValue::Array(vec![DsValue::None; MAX_VALUES + 1]),
    )];
    let mut d = Vec::new();
    flood.encode(&mut d);
    assert_eq!(
        kind(&d),
        DecodeErrorKind::TooLarge {
            limit: MAX_VALUES as u64
        }
    );
    // as many as allowed: a reply, its names the players
    let names: Vec<DsValue> = (0..MAX_VALUES - 1)
        .map(|i| DsValue::Text(format!("p{i}").into()))
        .collect();
    let mut full = Reply::default();
    full.members = vec![Member::new("plrs", DsValue::Array(names))];
    let mut d = Vec::new();
    full.encode(&mut d);
    let s = reply_to_status(&decode_reply(&d).unwrap());
    assert_eq!(s.player_count, Some(MAX_VALUES as u32 - 1));
}

#[test]
fn garbage_and_strange_text_are_errors_or_warnings() {
    for g in [
        &b""[..],
        b"\x00",
        b"Doomsday Beacon 1.1",
        b"\x99\x33\x00\x00\x00\x10",
        b"\x99\x33\x00\x00\x00\x10\x78\x9c",
        b"\x99\x33\x00\x00\x00\x10\x78\x9cnot zlib at all",
        &[0xff; 64],
    ] {
        assert!(decode_reply(g).is_err(), "{g:?}");
    }
    // Latin-1 in a name, bytes after the record, a wrong announced size: warnings
    let mut m = header(1);
    m.extend_from_slice(&[4, 0, 0, 0, b'n', b'a', b'm', b'e', 0x10, 0, 0, 0x10, 2]);
    m.extend_from_slice(&[4, 0, 0, 0, b'C', b'a', b'f', 0xe9, 0xAA]);
    let r = decode_reply(&datagram(7, 3, &m)).unwrap();
    assert_eq!(r.text("name").map(|t| t.as_str()), Some("Café"));
    assert_eq!(r.warnings.len(), 3, "{:?}", r.warnings);
}
