//! The Bedrock codec, mapping and client against the real pongs in
//! `tests/data/bedrock/` (see SOURCES.md there): each decodes without a warning, its
//! fields are what the server said, the status model gets them, it encodes back to the
//! same bytes, and the client given it as its server's reply (with our ping's time
//! written in, as a server echoes it) answers with the same status.

use std::time::Instant;

use ogp_proto::bedrock::client::QueryMachine;
use ogp_proto::bedrock::mapping::pong_to_status;
use ogp_proto::bedrock::wire::{Advertisement, Ping, Pong};
use ogp_proto::client::{QueryDriver, Timing};
use ogp_proto::Status;

fn capture(name: &str) -> Vec<u8> {
    let path = format!("{}/tests/data/bedrock/{name}", env!("CARGO_MANIFEST_DIR"));
    std::fs::read(&path).unwrap_or_else(|e| panic!("{path}: {e}"))
}

const ALL: [&str; 4] = [
    "bds_1_26_3.bin",
    "bds_1_14_21.bin",
    "lan_world_1_17_20.bin",
    "mcstatus_rainbow_motd.bin",
];

fn decode(name: &str) -> (Pong, Advertisement, Status) {
    let bytes = capture(name);
    let d = Pong::decode(&bytes).unwrap_or_else(|e| panic!("{name}: {e}"));
    assert!(d.warnings.is_empty(), "{name}: {:?}", d.warnings);
    let mut again = Vec::new();
    d.pong.encode(&mut again);
    assert_eq!(again, bytes, "{name}: encodes back to the same bytes");
    let a = Advertisement::parse(&d.pong.advertisement);
    assert_eq!(a.to_text(), d.pong.advertisement, "{name}");
    let s = pong_to_status(&d.pong);
    (d.pong, a, s)
}

fn rule<'a>(s: &'a Status, k: &str) -> Option<&'a str> {
    s.rules.as_ref().and_then(|r| r.get(k))
}

#[test]
fn bedrock_dedicated_server_1_26_3() {
    let (pong, a, s) = decode("bds_1_26_3.bin");
    assert_eq!(pong.time, 0x0000_019d_16bf_e1bc);
    assert_eq!(pong.server_guid, 9_446_695_611_411_291_546);
    assert_eq!(a.fields.len(), 13);
    assert_eq!(a.server_id(), Some("9446695611411291546"));
    assert_eq!(s.host_name.as_deref(), Some("Dedicated Server"));
    assert_eq!(s.game_name.as_deref(), Some("Minecraft: Bedrock Edition"));
    assert_eq!(s.game_version.as_deref(), Some("1.26.3"));
    assert_eq!((s.player_count, s.slot_max), (Some(0), Some(10)));
    assert_eq!(
        s.map.as_ref().map(|m| m.name.as_str()),
        Some("Bedrock level")
    );
    assert_eq!(s.game_type.as_deref(), Some("Survival"));
    assert_eq!(s.connect_port, Some(19132));
    assert_eq!(rule(&s, "protocol"), Some("924"));
    assert_eq!(rule(&s, "port_v6"), Some("19133"));
    assert_eq!(rule(&s, "game_mode_numeric"), Some("1"));
    assert_eq!(rule(&s, "field_12"), Some("0"));
    assert_eq!(rule(&s, "server_guid"), Some("9446695611411291546"));
}

#[test]
fn bedrock_dedicated_server_1_14_21() {
    let (pong, a, s) = decode("bds_1_14_21.bin");
    assert_eq!(pong.time, 5_110_546);
    assert_eq!(pong.server_guid, 0x8efb_524b_33f8_af1b);
    // the vanilla server's id is its GUID in decimal
    assert_eq!(a.server_id(), Some(pong.server_guid.to_string().as_str()));
    assert_eq!(a.fields.len(), 12);
    assert_eq!(a.protocol(), Some(389));
    assert_eq!(s.game_version.as_deref(), Some("1.14.21"));
    assert_eq!(s.connect_port, Some(19132));
}

#[test]
fn a_lan_world_with_a_utf8_level_name() {
    let (_, a, s) = decode("lan_world_1_17_20.bin");
    assert_eq!(s.host_name.as_deref(), Some("FancyFlameX"));
    assert_eq!(s.map.as_ref().map(|m| m.name.as_str()), Some("我的世界"));
    assert_eq!(s.game_type.as_deref(), Some("Creative"));
    assert_eq!((s.player_count, s.slot_max), (Some(1), Some(8)));
    assert_eq!((a.port_v4(), a.port_v6()), (Some(54392), Some(54393)));
    assert_eq!(s.connect_port, Some(54392));
}

#[test]
fn a_rainbow_motd_with_empty_version_and_level() {
    let (pong, a, s) = decode("mcstatus_rainbow_motd.bin");
    assert_eq!(pong.time, 0);
    assert_eq!(s.host_name.as_deref(), Some("GayBowser"));
    assert_eq!(
        rule(&s, "motd"),
        Some("§r§4G§r§6a§r§ey§r§2B§r§1o§r§9w§r§ds§r§4e§r§6r")
    );
    // empty fields are absent from the model, present in the rules
    assert_eq!(s.game_version, None);
    assert_eq!(rule(&s, "version"), Some(""));
    assert_eq!(s.map, None);
    assert_eq!(a.protocol(), Some(422));
    assert_eq!((s.player_count, s.slot_max), (Some(1), Some(69)));
    assert_eq!(s.game_type.as_deref(), Some("Default"));
    assert_eq!(rule(&s, "port_v6"), Some("-1"));
    assert_eq!(a.port_v6(), None);
}

#[test]
fn every_truncation_of_every_capture_is_an_error() {
    for name in ALL {
        let bytes = capture(name);
        for n in 0..bytes.len() {
            assert!(Pong::decode(&bytes[..n]).is_err(), "{name} cut at {n}");
        }
    }
}

#[test]
fn the_client_reads_every_capture_with_our_time_written_in() {
    for name in ALL {
        let t0 = Instant::now();
        let mut m = QueryMachine::new(Default::default(), Timing::default(), 0x1234_5678, t0);
        let mut ping = Vec::new();
        assert!(m.poll_transmit_into(t0, &mut ping));
        let ping = Ping::decode(&ping).unwrap();
        let mut reply = capture(name);
        // as sent, the capture echoes another client's time: dropped
        m.handle_datagram(t0, &reply);
        assert!(m.take_result().is_none(), "{name}");
        reply[1..9].copy_from_slice(&ping.time.to_be_bytes());
        m.handle_datagram(t0, &reply);
        let a = m
            .take_result()
            .unwrap()
            .unwrap_or_else(|e| panic!("{name}: {e}"));
        let (_, _, want) = decode(name);
        assert_eq!(a.status, want, "{name}");
        assert_eq!((a.datagrams, a.bytes), (1, reply.len()), "{name}");
    }
}
