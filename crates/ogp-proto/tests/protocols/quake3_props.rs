//! Property tests of the Quake III codec, mapping and client:
//! * random replies (variables and player lines of every dialect's shape) encode and
//!   decode to themselves;
//! * random statuses keep host name, map, slots, and player names (raw and plain),
//!   scores, pings and teams (DarkPlaces, Warsow) through the wire and back;
//! * random and mutated bytes (from the captures) never panic the request and reply
//!   decoders or the client machine, and every error and warning points into the input.

use std::time::Instant;

use ogp_proto::client::{QueryDriver, Timing};
use ogp_proto::model::{MapInfo, Player};
use ogp_proto::quake3::client::{QueryMachine, QueryOptions};
use ogp_proto::quake3::mapping::{reply_to_status, status_to_reply};
use ogp_proto::quake3::{
    decode_reply, decode_reply_with, decode_request, DecodeLimits, PlayerLine, Reply, ReplyKind,
};
use ogp_proto::{Status, Text};
use proptest::prelude::*;

/// Info-string text: no `\`, newline or NUL.
fn info_text(min: usize, max: usize) -> impl Strategy<Value = Text> {
    proptest::collection::vec(
        prop_oneof![
            8 => (0x20u8..0x7f).prop_filter("not \\", |b| *b != b'\\').prop_map(char::from),
            1 => Just('^'),
            1 => any::<char>().prop_filter("carried", |c| !matches!(c, '\\' | '\n' | '\0')),
        ],
        min..max,
    )
    .prop_map(|cs| cs.into_iter().collect())
}

fn column() -> impl Strategy<Value = Text> {
    any::<i32>().prop_map(|n| Text::from(n.to_string()))
}

fn player_line() -> impl Strategy<Value = PlayerLine> {
    (
        proptest::collection::vec(column(), 2..4),
        info_text(0, 20).prop_map(|t| t.replace('"', "").into()),
        proptest::collection::vec(column(), 0..2),
    )
        .prop_map(|(before, name, after)| PlayerLine {
            before,
            name,
            after,
        })
}

fn reply() -> impl Strategy<Value = Reply> {
    (
        any::<bool>(),
        proptest::collection::vec((info_text(1, 12), info_text(0, 24)), 0..20),
        proptest::collection::vec(player_line(), 0..20),
    )
        .prop_map(|(status, vars, players)| {
            let kind = if status {
                ReplyKind::Status
            } else {
                ReplyKind::Info
            };
            Reply {
                kind,
                vars,
                players: if status { players } else { Vec::new() },
            }
        })
}

fn captures() -> Vec<Vec<u8>> {
    let dir = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/data/quake3");
    let mut v: Vec<Vec<u8>> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "bin"))
        .map(|p| std::fs::read(p).unwrap())
        .collect();
    v.sort();
    v
}

fn check_all(bytes: &[u8]) {
    match decode_reply(bytes) {
        Ok(d) => {
            for w in &d.warnings {
                assert!(w.offset <= bytes.len(), "{w}");
            }
            // What decodes re-encodes to what decodes the same. Bytes that were not UTF-8
            // were read as Latin-1 and are written back as UTF-8, at most twice as long.
            let mut wide = DecodeLimits::default();
            wide.max_info_bytes *= 2;
            wide.max_player_line *= 2;
            let again = decode_reply_with(&d.reply.to_bytes(), &wide).unwrap().reply;
            assert_eq!(again.players.len(), d.reply.players.len());
            let mut s = Status::default();
            reply_to_status(&d.reply, &mut s);
            let _ = status_to_reply(&s, d.reply.kind).to_bytes();
        }
        Err(e) => assert!(e.offset <= bytes.len(), "{e} ({} bytes)", bytes.len()),
    }
    if let Err(e) = decode_request(bytes) {
        assert!(e.offset <= bytes.len(), "{e}");
    }
    // The client machine takes anything and still ends.
    let now = Instant::now();
    let mut m = QueryMachine::new(
        QueryOptions::default(),
        Timing::default().retries(0),
        3,
        now,
    );
    let mut sent = 0;
    while m.poll_transmit(now).is_some() {
        sent += 1;
        m.handle_datagram(now, bytes);
        assert!(sent <= 4);
    }
    let mut t = now;
    for _ in 0..10 {
        if m.take_result().is_some() {
            return;
        }
        t = m.poll_timeout().unwrap_or(t);
        m.handle_timeout(t);
        while m.poll_transmit(t).is_some() {}
    }
    assert!(m.take_result().is_some() || m.poll_timeout().is_none());
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]

    #[test]
    fn replies_round_trip(r in reply()) {
        let bytes = r.to_bytes();
        let d = decode_reply(&bytes).unwrap();
        // A first key starting with nothing is still a key; an info line always starts
        // with `\` on the wire, so what went in comes out.
        prop_assert_eq!(d.reply, r);
    }

    #[test]
    fn statuses_round_trip(
        host in info_text(0, 30),
        map in info_text(1, 16),
        max in 0u32..256,
        private in 0u32..8,
        names in proptest::collection::vec(info_text(0, 16).prop_map(|t| Text::from(t.replace('"', ""))), 0..40),
        team in proptest::option::of(-2i32..4),
        game in proptest::sample::select(vec!["Xonotic", "Warsow", "baseoa"]),
    ) {
        let plain = ogp_proto::quake3::color::strip(&host);
        // `^^11` strips to `^1`, which is a code again: such a plain name has no wire form.
        prop_assume!(ogp_proto::quake3::color::strip(&plain) == plain);
        let mut s = Status::default();
        s.host_name = Some(plain.into());
        s.map = Some(MapInfo::named(map.as_str()));
        s.slot_max = Some(max);
        s.reserved_slots = Some(private);
        s.game_name = Some(game.into());
        s.players = Some(names.iter().enumerate().map(|(i, raw)| {
            let plain = ogp_proto::quake3::color::strip(raw);
            let mut p = Player::named(plain.as_str());
            if plain != raw.as_str() {
                p.name_raw = Some(raw.clone());
            }
            p.score = Some(i as i32 - 5);
            p.ping = Some(i as u32 * 7);
            // Only DarkPlaces and Warsow lines carry a team (ioquake3's do not).
            p.team = team.filter(|_| game != "baseoa");
            p
        }).collect());
        let bytes = status_to_reply(&s, ReplyKind::Status).to_bytes();
        let mut back = Status::default();
        reply_to_status(&decode_reply(&bytes).unwrap().reply, &mut back);
        prop_assert_eq!(&back.host_name, &s.host_name);
        prop_assert_eq!(&back.map, &s.map);
        prop_assert_eq!((back.slot_max, back.reserved_slots), (Some(max), Some(private)));
        prop_assert_eq!(back.players, s.players);
    }

    #[test]
    fn random_bytes_never_panic(bytes in proptest::collection::vec(any::<u8>(), 0..600)) {
        check_all(&bytes);
        let mut prefixed = b"\xff\xff\xff\xffstatusResponse\n".to_vec();
        prefixed.extend_from_slice(&bytes);
        check_all(&prefixed);
    }

    #[test]
    fn mutated_captures_never_panic(
        which in 0usize..9,
        edits in proptest::collection::vec((any::<prop::sample::Index>(), any::<u8>(), 0u8..3), 1..8),
    ) {
        let all = captures();
        let mut bytes = all[which % all.len()].clone();
        for (at, b, op) in edits {
            if bytes.is_empty() { break; }
            let i = at.index(bytes.len());
            match op {
                0 => bytes[i] = b,
                1 => { bytes.remove(i); }
                _ => bytes.insert(i, b),
            }
        }
        check_all(&bytes);
    }
}

#[test]
fn limits_refuse_too_many_players_naming_the_line() {
    let mut bytes = b"\xff\xff\xff\xffstatusResponse\n\\a\\b\n".to_vec();
    for _ in 0..300 {
        bytes.extend_from_slice(b"1 2 \"x\"\n");
    }
    let e = decode_reply(&bytes).unwrap_err();
    assert_eq!(e.field, "player line");
    // the 257th line: 24 bytes of header and variables, 8 per line
    assert_eq!(e.offset, 24 + 256 * 8);
    let long = [
        b"\xff\xff\xff\xffstatusResponse\n\\a\\b\n1 2 \"".as_slice(),
        &[b'n'; 600],
        b"\"\n",
    ]
    .concat();
    let e = decode_reply(&long).unwrap_err();
    assert_eq!((e.field, e.offset), ("player line", 24));
}
