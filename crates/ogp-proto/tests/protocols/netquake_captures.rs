//! The NetQuake codec, mapping and client against a real server's replies
//! (`tests/data/netquake/`, sources in its `SOURCES.md`: QuakeSpasm 0.95.1 run as a
//! dedicated server here, one connected client). Each capture decodes, re-encodes to its
//! bytes and is told apart by `detect::guess`; the client machine, answered from the
//! captures as the server answered, reads the host name, map, slots, the player and the
//! rules the server was started with; every truncation of a capture is an error, never
//! a panic.

use std::path::PathBuf;
use std::time::{Duration, Instant};

use ogp_proto::client::{Machine, Options, QueryDriver};
use ogp_proto::netquake::wire::{decode_reply, decode_request, Reply, Request};
use ogp_proto::Protocol;

fn capture(name: &str) -> Vec<u8> {
    let p = PathBuf::from(concat!(env!("CARGO_MANIFEST_DIR"), "/tests/data/netquake")).join(name);
    std::fs::read(&p).unwrap_or_else(|e| panic!("{}: {e}", p.display()))
}

/// The datagrams of a file of several, one after the other (each header says its
/// length).
fn datagrams(bytes: &[u8]) -> Vec<Vec<u8>> {
    let mut out = Vec::new();
    let mut rest = bytes;
    while let Some(h) = rest.first_chunk::<4>() {
        let len = usize::from(u16::from_be_bytes([h[2], h[3]]));
        assert!(len >= 5 && len <= rest.len(), "bad length {len}");
        let (d, r) = rest.split_at(len);
        out.push(d.to_vec());
        rest = r;
    }
    out
}

/// Every datagram the server sent: server info, player 0, the 8 rule replies.
fn all() -> Vec<Vec<u8>> {
    let mut v = vec![
        capture("quakespasm_server_info.bin"),
        capture("quakespasm_player_info_0.bin"),
    ];
    v.extend(datagrams(&capture("quakespasm_rules.bin")));
    v
}

#[test]
fn every_capture_decodes_and_encodes_back_to_its_bytes() {
    let all = all();
    assert_eq!(all.len(), 10);
    for d in &all {
        let r = decode_reply(d).unwrap_or_else(|e| panic!("{d:?}: {e}"));
        assert_eq!(&r.to_bytes(), d);
        assert_eq!(ogp_proto::detect::guess(d), Some(Protocol::Netquake));
        for n in 0..d.len() {
            assert!(
                decode_reply(d.get(..n).unwrap()).is_err(),
                "prefix {n} of {d:?}"
            );
        }
    }
    let Ok(Reply::ServerInfo(s)) = decode_reply(&all[0]) else {
        panic!("not a server info")
    };
    assert_eq!(
        (
            &s.address[..],
            &s.hostname[..],
            &s.map[..],
            s.players,
            s.max_players,
            s.version
        ),
        (
            &b"127.0.0.1:27556"[..],
            &b"NQ ogp test"[..],
            &b"start"[..],
            1,
            6,
            3
        )
    );
    let Ok(Reply::PlayerInfo(p)) = decode_reply(&all[1]) else {
        panic!("not a player info")
    };
    assert_eq!(
        (p.slot, &p.name[..], p.colors, p.frags, p.seconds),
        (0, &b"Ranger"[..], 0x4d, 0, 0)
    );
    assert_eq!(decode_reply(&all[9]).unwrap(), Reply::RuleInfo(None));
}

/// The captures as the server answered: server info to `QUAKE` 3 (nothing to Hexen II's
/// request), player 0 (nothing for another slot), each rule after the one named.
fn answer(q: &[u8]) -> Option<Vec<u8>> {
    let all = all();
    match decode_request(q).ok()? {
        Request::ServerInfo(g) if g.version() == 3 => all.first().cloned(),
        Request::PlayerInfo(0) => all.get(1).cloned(),
        Request::RuleInfo(prev) => {
            let rules = all.get(2..)?;
            if prev.is_empty() {
                return rules.first().cloned();
            }
            let at = rules.iter().position(
                |d| matches!(decode_reply(d), Ok(Reply::RuleInfo(Some((k, _)))) if k == prev),
            )?;
            rules.get(at + 1).cloned()
        }
        _ => None,
    }
}

#[test]
fn the_client_reads_what_the_server_was_started_with() {
    let t0 = Instant::now();
    let mut m = Machine::new(Protocol::Netquake, &Options::default(), 1, t0);
    let (mut t, mut sent, mut d) = (t0, 0usize, Vec::new());
    let mut result = None;
    for _ in 0..1000 {
        while m.poll_transmit_into(t, &mut d) {
            sent += 1;
            if let Some(r) = answer(&d) {
                m.handle_datagram(t, &r);
            }
        }
        if let Some(r) = m.take_result() {
            result = Some(r);
            break;
        }
        t = m.poll_timeout().unwrap_or(t + Duration::from_secs(1));
        m.handle_timeout(t);
    }
    let a = result.expect("an end").expect("an answer");
    assert!(a.warnings.is_empty(), "{:?}", a.warnings);
    // Server info, one player, 7 rules and the end.
    assert_eq!(sent, 1 + 1 + 8);
    let s = &a.status;
    assert_eq!(s.host_name.as_deref(), Some("NQ ogp test"));
    assert_eq!(s.map.as_ref().map(|m| m.name.as_str()), Some("start"));
    assert_eq!(s.game_name.as_deref(), Some("Quake"));
    assert_eq!((s.player_count, s.slot_max), (Some(1), Some(6)));
    let p = &s.players.as_ref().unwrap()[0];
    assert_eq!((p.name.as_deref(), p.frags), (Some("Ranger"), Some(0)));
    assert_eq!(
        (
            p.extra.get("topcolor").map(|c| c.as_str()),
            p.extra.get("bottomcolor").map(|c| c.as_str())
        ),
        (Some("4"), Some("13"))
    );
    let rules = s.rules.as_ref().unwrap();
    assert_eq!(rules.len(), 8);
    assert_eq!(rules.get("sv_gravity"), Some("800"));
    assert_eq!(rules.get("protocol"), Some("3"));
}
