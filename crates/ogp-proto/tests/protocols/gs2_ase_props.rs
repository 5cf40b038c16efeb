//! Properties of the GameSpy v2 and ASE decoders: any reply of well-formed sections
//! encodes and decodes back to itself (GameSpy v2: whatever the count, the keys and the
//! values; ASE: whatever the flags); any bytes decode to a value or an error whose offset
//! is in the input, never a panic; the mapping never loses a player.

use ogp_proto::ase::mapping::reply_to_status;
use ogp_proto::ase::wire::{decode_reply as ase_decode, AsePlayer, Reply as AseReply};
use ogp_proto::gamespy2::mapping::info_to_status;
use ogp_proto::gamespy2::wire::{decode_reply as gs2_decode, encode_reply};
use ogp_proto::gamespy3::{Column, ServerInfo};
use proptest::prelude::*;

/// A GameSpy v2 string: no NUL, any other text (non-ASCII included).
fn text() -> impl Strategy<Value = String> {
    proptest::string::string_regex("[^\u{0}]{0,12}").unwrap()
}

fn key() -> impl Strategy<Value = String> {
    proptest::string::string_regex("[a-z]{1,8}").unwrap()
}

/// Columns of `rows` values each, keys ending in `suffix`.
fn columns(rows: usize, suffix: &'static str) -> impl Strategy<Value = Vec<Column>> {
    proptest::collection::vec(
        (key(), proptest::collection::vec(text(), rows..=rows)),
        0..5,
    )
    .prop_map(move |cols| {
        cols.into_iter()
            .map(|(k, values)| Column {
                key: format!("{k}{suffix}").into(),
                values: values.into_iter().map(Into::into).collect(),
            })
            .collect()
    })
}

fn info() -> impl Strategy<Value = ServerInfo> {
    (
        proptest::collection::vec((key(), text()), 1..10),
        0usize..70,
        0usize..5,
    )
        .prop_flat_map(|(server, players, teams)| {
            (Just(server), columns(players, "_"), columns(teams, "_t"))
        })
        .prop_map(|(server, players, teams)| ServerInfo {
            server: server
                .into_iter()
                .map(|(k, v)| (k.into(), v.into()))
                .collect(),
            players,
            teams,
        })
}

fn ase_text() -> impl Strategy<Value = String> {
    proptest::string::string_regex(".{0,20}").unwrap()
}

fn ase_player() -> impl Strategy<Value = AsePlayer> {
    (any::<u8>(), proptest::collection::vec(ase_text(), 6..=6)).prop_map(|(flags, f)| {
        let on = |bit: u8, i: usize| (flags & bit != 0).then(|| f[i].as_str().into());
        AsePlayer {
            flags,
            name: on(0x01, 0),
            team: on(0x02, 1),
            skin: on(0x04, 2),
            score: on(0x08, 3),
            ping: on(0x10, 4),
            time: on(0x20, 5),
        }
    })
}

proptest! {
    #[test]
    fn gs2_replies_round_trip(info in info(), id in any::<u32>()) {
        let mut b = Vec::new();
        encode_reply(id, &info, &mut b);
        let r = gs2_decode(&b).unwrap();
        prop_assert_eq!(r.id, id);
        // a section without columns has no rows to keep
        prop_assert_eq!(&r.info.server, &info.server);
        prop_assert_eq!(&r.info.players, &info.players);
        prop_assert_eq!(&r.info.teams, &info.teams);
        let rows = info.players.first().map_or(0, |c| c.values.len());
        let status = info_to_status(&r.info);
        if rows > 0 {
            prop_assert_eq!(status.players.map(|p| p.len()), Some(rows));
        }
    }

    #[test]
    fn ase_replies_round_trip(
        head in proptest::collection::vec(ase_text(), 9..=9),
        rules in proptest::collection::vec((proptest::string::string_regex(".{1,10}").unwrap(), ase_text()), 0..8),
        players in proptest::collection::vec(ase_player(), 0..40),
    ) {
        let mut reply = AseReply::default();
        for (slot, v) in [
            &mut reply.game_name,
            &mut reply.port,
            &mut reply.server_name,
            &mut reply.game_type,
            &mut reply.map,
            &mut reply.version,
            &mut reply.password,
            &mut reply.num_players,
            &mut reply.max_players,
        ]
        .into_iter()
        .zip(&head)
        {
            *slot = v.as_str().into();
        }
        reply.rules = rules.into_iter().map(|(k, v)| (k.into(), v.into())).collect();
        reply.players = players;
        let mut b = Vec::new();
        reply.encode(&mut b);
        let r = ase_decode(&b).unwrap();
        prop_assert_eq!(&r, &reply);
        let s = reply_to_status(&r);
        prop_assert_eq!(s.players.map(|p| p.len()), Some(reply.players.len()));
        // a truncation is a value or an error, never a panic: every one of the first
        // 300 bytes (the head and the first rules and players), then one in 61 (a reply
        // of 40 players has some 8,000: decoding each cut is quadratic, most of this
        // test's time in a debug build, and the cuts past the head repeat the same fields)
        for n in (0..b.len()).filter(|&n| n < 300 || n % 61 == 0) {
            if let Err(e) = ase_decode(&b[..n]) {
                prop_assert!(e.offset <= n);
            }
        }
    }

    #[test]
    fn any_bytes_decode_or_fail(bytes in proptest::collection::vec(any::<u8>(), 0..400)) {
        for d in [bytes.clone(), [&[0u8, 0, 0, 0, 1][..], &bytes].concat(), [&b"EYE1"[..], &bytes].concat()] {
            match gs2_decode(&d) {
                Ok(r) => {
                    for w in &r.warnings {
                        prop_assert!(w.offset <= d.len());
                    }
                    let _ = info_to_status(&r.info);
                }
                Err(e) => prop_assert!(e.offset <= d.len()),
            }
            match ase_decode(&d) {
                Ok(r) => {
                    prop_assert!(r.players.len() <= d.len());
                    let _ = reply_to_status(&r);
                }
                Err(e) => prop_assert!(e.offset <= d.len()),
            }
        }
    }
}
