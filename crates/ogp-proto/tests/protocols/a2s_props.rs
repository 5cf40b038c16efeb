//! Property tests of the A2S codec: random INFO / PLAYER / RULES replies and requests
//! round-trip through encode → decode; random replies split in any layout reassemble in
//! any order with duplicates; random and mutated bytes never panic any decoder, the
//! reassembler, the responder or the client.

use std::net::{IpAddr, Ipv4Addr};
use std::time::{Duration, Instant};

use ogp_proto::a2s::client::{QueryMachine, QueryOptions};
use ogp_proto::a2s::request::Request;
use ogp_proto::a2s::responder::{A2sConfig, A2sResponder};
use ogp_proto::a2s::split::{decompress, split_reply, Layout};
use ogp_proto::a2s::{
    decode, Extra, GoldSrcInfo, GoldSrcMod, Info, Message, PlayerEntry, Players, Pushed,
    Reassembler, Rules, ShipInfo, ShipPlayer, SourceTv,
};
use ogp_proto::client::{QueryDriver, Timing};
use ogp_proto::guard::ChallengeKeys;
use ogp_proto::responder::Transmits;
use ogp_proto::responder::{Incoming, ProtocolResponder};
use ogp_proto::{Status, Text};
use proptest::prelude::*;

fn text() -> impl Strategy<Value = Text> {
    "[^\u{0}]{0,30}".prop_map(Text::from)
}

fn letter() -> impl Strategy<Value = u8> {
    prop_oneof![
        Just(b'd'),
        Just(b'l'),
        Just(b'p'),
        Just(b'w'),
        Just(b'm'),
        Just(b'o'),
        any::<u8>()
    ]
}

fn extra() -> impl Strategy<Value = Extra> {
    (
        proptest::option::of(any::<u16>()),
        proptest::option::of(any::<u64>()),
        proptest::option::of(
            (any::<u16>(), text()).prop_map(|(port, name)| SourceTv { port, name }),
        ),
        proptest::option::of(text()),
        proptest::option::of(any::<u64>()),
        prop_oneof![Just(0u8), (0u8..8).prop_map(|b| b << 1)],
    )
        .prop_map(
            |(port, steam_id, source_tv, keywords, game_id, unknown_bits)| Extra {
                port,
                steam_id,
                source_tv,
                keywords,
                game_id,
                unknown_bits,
            },
        )
}

prop_compose! {
    fn info()(
        protocol in any::<u8>(),
        (name, map, folder, game, version) in (text(), text(), text(), text(), text()),
        app_id in prop_oneof![Just(2400u16), any::<u16>()],
        (players, max_players, bots) in (any::<u8>(), any::<u8>(), any::<u8>()),
        (server_type, environment) in (letter(), letter()),
        (password, vac) in (any::<bool>(), any::<bool>()),
        ship in (any::<u8>(), any::<u8>(), any::<u8>()),
        extra in proptest::option::of(extra()),
    ) -> Info {
        Info {
            protocol, name, map, folder, game, app_id, players, max_players, bots,
            server_type, environment, password, vac,
            ship: (app_id == 2400).then_some(ShipInfo { mode: ship.0, witnesses: ship.1, duration: ship.2 }),
            version, extra, trailing: Vec::new(),
        }
    }
}

prop_compose! {
    fn goldsrc()(
        (address, name, map, folder, game) in (text(), text(), text(), text(), text()),
        (players, max_players, protocol) in (any::<u8>(), any::<u8>(), any::<u8>()),
        (server_type, environment, password) in (letter(), letter(), any::<bool>()),
        level in 0u8..4,
        is_mod in any::<bool>(),
        m in (text(), text(), any::<i32>(), any::<i32>(), any::<bool>(), any::<bool>()),
        (vac, bots) in (any::<bool>(), any::<u8>()),
        trailing in proptest::collection::vec(any::<u8>(), 0..4),
    ) -> GoldSrcInfo {
        let is_mod = (level >= 1).then_some(is_mod);
        GoldSrcInfo {
            address, name, map, folder, game, players, max_players, protocol, server_type,
            environment, password, is_mod,
            mod_info: (is_mod == Some(true)).then(|| GoldSrcMod {
                url_info: m.0, url_download: m.1, reserved: 0, version: m.2, size: m.3,
                server_only: m.4, custom_dll: m.5,
            }),
            vac: (level >= 2).then_some(vac),
            bots: (level >= 3).then_some(bots),
            trailing: if level >= 3 { trailing } else { Vec::new() },
        }
    }
}

fn players() -> impl Strategy<Value = Players> {
    (
        proptest::collection::vec(
            (
                any::<u8>(),
                text(),
                any::<i32>(),
                -1.0e7f32..1.0e7,
                any::<(i32, i32)>(),
            ),
            0..40,
        ),
        any::<bool>(),
    )
        .prop_map(|(list, ship)| Players {
            players: list
                .into_iter()
                .map(
                    |(index, name, score, duration, (deaths, money))| PlayerEntry {
                        index,
                        name,
                        score,
                        duration,
                        ship: ship.then_some(ShipPlayer { deaths, money }),
                    },
                )
                .collect(),
            trailing: Vec::new(),
        })
}

fn rules() -> impl Strategy<Value = Rules> {
    proptest::collection::vec((text(), text()), 0..100).prop_map(|rules| Rules {
        rules,
        trailing: Vec::new(),
    })
}

fn enc(f: impl FnOnce(&mut Vec<u8>)) -> Vec<u8> {
    let mut v = Vec::new();
    f(&mut v);
    v
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 256, ..ProptestConfig::default() })]

    #[test]
    fn info_round_trips(i in info()) {
        let b = enc(|o| i.encode(o));
        prop_assert_eq!(decode(&b).unwrap().message, Message::Info(i));
    }

    #[test]
    fn goldsrc_info_round_trips(m in goldsrc()) {
        let b = enc(|o| m.encode(o));
        let d = decode(&b).unwrap();
        prop_assert_eq!(d.message, Message::GoldSrcInfo(m));
    }

    #[test]
    fn players_round_trip(p in players()) {
        let b = enc(|o| p.encode(o));
        prop_assert_eq!(decode(&b).unwrap().message, Message::Players(p));
    }

    #[test]
    fn rules_round_trip(r in rules()) {
        let b = enc(|o| r.encode(o));
        prop_assert_eq!(decode(&b).unwrap().message, Message::Rules(r));
    }

    #[test]
    fn requests_round_trip(kind in 0u8..5, c in proptest::option::of(any::<u32>()), t in 0usize..9) {
        let r = match kind {
            0 => Request::Info { challenge: c, trailing: if c.is_some() { t } else { 0 } },
            1 => Request::Player { challenge: c, trailing: if c.is_some() { t } else { 0 } },
            2 => Request::Rules { challenge: c, trailing: if c.is_some() { t } else { 0 } },
            3 => Request::GetChallenge,
            _ => Request::Ping,
        };
        let b = enc(|o| r.encode(o));
        prop_assert_eq!(Request::decode(&b).unwrap(), r);
        prop_assert_eq!(decode(&b).unwrap().message, Message::Request(r));
    }

    #[test]
    fn status_mapping_round_trips(i in info(), p in players(), r in rules()) {
        use ogp_proto::a2s::mapping::*;
        let mut s = Status::default();
        info_to_status(&i, &mut s);
        players_to_status(&p, &mut s);
        rules_to_status(&r, &mut s);
        let back = status_to_info(&s);
        let mut want = i.clone();
        want.server_type = want.server_type.to_ascii_lowercase();
        want.environment = want.environment.to_ascii_lowercase();
        if let Some(x) = &mut want.extra {
            x.unknown_bits = 0;
        }
        if want.extra.as_ref().is_some_and(|x| x.flags() == 0) {
            want.extra = None;
        }
        prop_assert_eq!(back, want);
        let ship = p.players.first().is_some_and(|e| e.ship.is_some());
        prop_assert_eq!(status_to_players(&s, ship), p);
        prop_assert_eq!(status_to_rules(&s), r);
        // and through the state file's JSON, where a key sent more than once is written
        // once with its values in an array (docs/json.md): every pair comes back, each
        // key's values in order, grouped at the key's first place
        let again = Status::from_json(&s.to_json_pretty()).unwrap();
        let mut want = s.clone();
        want.rules = want.rules.as_ref().map(ogp_proto::Rules::grouped);
        prop_assert_eq!(again, want);
    }

    #[test]
    fn split_and_reassemble_in_any_order(
        body in proptest::collection::vec(any::<u8>(), 0..12_000),
        layout in prop_oneof![
            Just(Layout::Source { size_field: true }),
            Just(Layout::Source { size_field: false }),
            Just(Layout::GoldSrc),
        ],
        id in 0u32..0x8000,
        order in any::<proptest::sample::Index>(),
        dups in proptest::collection::vec(any::<proptest::sample::Index>(), 0..4),
        seed in any::<u64>(),
    ) {
        let mut reply = vec![0xff, 0xff, 0xff, 0xff, 0x45];
        reply.extend_from_slice(&body);
        let Ok(mut frags) = split_reply(&reply, id, layout) else {
            // only GoldSrc can run out of fragment numbers
            prop_assert_eq!(layout, Layout::GoldSrc);
            return Ok(());
        };
        let n = frags.len();
        // a random permutation (Fisher-Yates from the seed), one fragment rotated first
        let mut x = seed | 1;
        for i in (1..n).rev() {
            x ^= x << 13; x ^= x >> 7; x ^= x << 17;
            frags.swap(i, (x % (i as u64 + 1)) as usize);
        }
        frags.rotate_left(order.index(n));
        // duplicates, inserted before the last fragment so the reply is not yet complete
        if n > 1 {
            for d in &dups {
                let f = frags[d.index(n - 1)].clone();
                frags.insert(d.index(n - 1), f);
            }
        }
        let last_unique = frags.len() - 1;
        let mut ra = Reassembler::new();
        let mut done = None;
        for (k, f) in frags.iter().enumerate() {
            match ra.push(f).unwrap() {
                Pushed::Complete { reply: r, layout: l, fragments } => {
                    prop_assert!(done.is_none());
                    prop_assert_eq!(l, layout);
                    prop_assert_eq!(usize::from(fragments), n);
                    done = Some((k, r));
                }
                Pushed::Incomplete | Pushed::Duplicate => {}
            }
        }
        let (k, r) = done.unwrap();
        prop_assert!(k <= last_unique);
        prop_assert_eq!(r, reply);
    }

    #[test]
    fn random_bytes_never_panic(bytes in proptest::collection::vec(any::<u8>(), 0..300)) {
        let _ = decode(&bytes);
        let _ = Request::decode(&bytes);
        let _ = decompress(&bytes, 1 << 16);
        let mut ra = Reassembler::new();
        let _ = ra.push(&bytes);
        for prefix in [[0xffu8; 4], [0xfe, 0xff, 0xff, 0xff]] {
            let mut d = prefix.to_vec();
            d.extend_from_slice(&bytes);
            let _ = decode(&d);
            let _ = ra.push(&d);
        }
    }

    #[test]
    fn mutated_replies_never_panic(i in info(), p in players(), flips in proptest::collection::vec((any::<proptest::sample::Index>(), any::<u8>()), 1..8), cut in any::<proptest::sample::Index>()) {
        for mut b in [enc(|o| i.encode(o)), enc(|o| p.encode(o))] {
            for (at, v) in &flips {
                let k = at.index(b.len());
                b[k] = *v;
            }
            let _ = decode(&b);
            let _ = decode(&b[..cut.index(b.len() + 1)]);
            if let Ok(frags) = split_reply(&b, 7, Layout::Source { size_field: true }) {
                let mut ra = Reassembler::new();
                for f in frags.iter().rev() {
                    if let Ok(Pushed::Complete { reply, .. }) = ra.push(f) {
                        let _ = ogp_proto::a2s::split::decode_reassembled(&reply);
                    }
                }
            }
        }
    }

    #[test]
    fn responder_and_client_never_panic_and_unverified_get_at_most_9_bytes(
        datagrams in proptest::collection::vec(
            prop_oneof![
                proptest::collection::vec(any::<u8>(), 0..64),
                (0u8..0x80, proptest::collection::vec(any::<u8>(), 0..40)).prop_map(|(t, rest)| {
                    let mut d = vec![0xff, 0xff, 0xff, 0xff, t];
                    d.extend(rest);
                    d
                }),
                (any::<u32>(), proptest::collection::vec(any::<u8>(), 0..40)).prop_map(|(id, rest)| {
                    let mut d = vec![0xfe, 0xff, 0xff, 0xff];
                    d.extend_from_slice(&id.to_le_bytes());
                    d.extend(rest);
                    d
                }),
            ],
            1..20,
        ),
    ) {
        let now = Instant::now();
        let mut keys = ChallengeKeys::new([3; 16], Duration::from_secs(300), now);
        let mut r = A2sResponder::new(A2sConfig::default());
        let mut out = Transmits::default();
        let mut s = Status::default();
        s.host_name = Some("x".into());
        let mut m = QueryMachine::new(QueryOptions::default(), Timing::default(), now);
        let _ = m.poll_transmit(now);
        for d in &datagrams {
            out.clear();
            let ip = IpAddr::V4(Ipv4Addr::new(192, 0, 2, 1));
            r.handle(Incoming { now, ip, datagram: d, reject: false }, &s, &mut keys, &mut out);
            prop_assert!(out.total_bytes() <= 9, "{} bytes for {:?}", out.total_bytes(), d);
            m.handle_datagram(now, d);
            let _ = m.poll_transmit(now);
        }
        m.handle_timeout(now + Duration::from_secs(10));
        prop_assert!(m.is_done());
    }
}
