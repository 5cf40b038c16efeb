//! Property tests of the GameSpy v3 codec and client:
//! * random replies ([`ServerInfo`]) written with `encode_packets` (packets of at most
//!   1400 bytes, numbered in order, the last flagged) decode and reassemble in a shuffled
//!   order, with duplicates, to the input as the wire carries it (see [`on_the_wire`]);
//! * random statuses keep their host name, map, player names, scores, pings and teams, and
//!   team names through `status_to_info` → `info_to_status`, directly and over the wire
//!   (see [`expected_back`]);
//! * requests round-trip (byte for byte always; as values except where the protocol is
//!   ambiguous, see [`ambiguous`]);
//! * random and mutated bytes never panic `Request::decode`, `decode_reply`,
//!   `decode_packet`, `Heartbeat::decode`, the reassembler or the client machine, and the
//!   client sends a bounded number of datagrams and always ends by its deadline.

use std::time::{Duration, Instant};

use ogp_proto::client::{QueryDriver, Timing, MAX_EVENTS};
use ogp_proto::gamespy3::client::{Handshake, QueryMachine, QueryOptions};
use ogp_proto::gamespy3::heartbeat::Heartbeat;
use ogp_proto::gamespy3::mapping::{info_to_status, status_to_info, MAX_ROWS};
use ogp_proto::gamespy3::reply::{
    decode_packet, decode_reply, encode_packets, server_section_len, Column, Pushed, Reassembler,
    ServerInfo, LAST_FLAG, MAX_COLUMNS, MAX_KEY, MAX_VALUE, PACKET_HEADER,
};
use ogp_proto::gamespy3::request::{InfoKind, Request, MAX_ECHO};
use ogp_proto::gamespy3::MAX_PACKET;
use ogp_proto::{Status, Text};
use ogp_testkit as strategy;
use ogp_testkit::{Charset, Params};
use proptest::prelude::*;

/// Text of 0–`n` characters: mostly ASCII, sometimes any character, sometimes NUL.
fn text(n: usize) -> impl Strategy<Value = Text> {
    proptest::collection::vec(
        prop_oneof![
            8 => (0x20u8..0x7f).prop_map(char::from),
            2 => any::<char>(),
            1 => Just('\0'),
        ],
        0..n,
    )
    .prop_map(|cs| cs.into_iter().collect::<Text>())
}

/// Text without NUL, 1–`n` characters.
fn key(n: usize) -> impl Strategy<Value = Text> {
    proptest::collection::vec(strategy::wire_char(Charset::Utf8), 1..n)
        .prop_map(|cs| cs.into_iter().collect::<Text>())
}

/// Columns with distinct keys (`<index>:<random>`), `rows` values each (some shorter).
fn columns(
    suffix: &'static str,
    count: std::ops::Range<usize>,
    rows: usize,
    value_len: usize,
) -> impl Strategy<Value = Vec<Column>> {
    proptest::collection::vec(
        (
            key(70),
            proptest::collection::vec(text(value_len), 0..=rows),
        ),
        count,
    )
    .prop_map(move |cols| {
        cols.into_iter()
            .enumerate()
            .map(|(i, (k, values))| Column {
                key: format!("{i}:{k}{suffix}").into(),
                values,
            })
            .collect()
    })
}

fn server_info() -> impl Strategy<Value = ServerInfo> {
    (
        proptest::collection::vec((key(80), text(40)), 0..25),
        proptest::option::of(text(300)),
        proptest::bool::weighted(0.15),
    )
        .prop_flat_map(|(server, long_value, big)| {
            let players = if big {
                columns("_", 1..8, 256, 30).boxed()
            } else {
                columns("_", 0..8, 6, 12).boxed()
            };
            (
                Just(server),
                Just(long_value),
                players,
                columns("_t", 0..3, 4, 10),
            )
        })
        .prop_map(|(mut server, long_value, players, teams)| {
            if let Some(v) = long_value {
                server.push(("long".into(), v));
            }
            ServerInfo {
                server,
                players,
                teams,
            }
        })
}

/// `s` cut to `max` bytes at a character boundary, then without NULs: what the encoder
/// writes.
fn wire(s: &str, max: usize) -> Text {
    let mut end = s.len().min(max);
    while !s.is_char_boundary(end) {
        end -= 1;
    }
    s[..end].chars().filter(|&c| c != '\0').collect()
}

/// What the wire carries of `info`: keys cut at 63 bytes and values at 255 (at a
/// character boundary), NULs removed, server pairs with an empty key left out, an empty
/// column value written as one space.
fn on_the_wire(info: &ServerInfo) -> ServerInfo {
    let col = |c: &Column| Column {
        key: wire(&c.key, MAX_KEY),
        values: c
            .values
            .iter()
            .map(|v| {
                let v = wire(v, MAX_VALUE);
                if v.is_empty() {
                    " ".into()
                } else {
                    v
                }
            })
            .collect(),
    };
    ServerInfo {
        server: info
            .server
            .iter()
            .map(|(k, v)| (wire(k, MAX_KEY), wire(v, MAX_VALUE)))
            .filter(|(k, _)| !k.is_empty())
            .collect(),
        players: info.players.iter().map(col).collect(),
        teams: info.teams.iter().map(col).collect(),
    }
}

fn encode(info: &ServerInfo, sid: u32) -> Vec<Vec<u8>> {
    let mut out = Vec::new();
    let n = encode_packets(info, sid, MAX_PACKET, |p| out.push(p.to_vec())).expect("encodes");
    assert_eq!(n, out.len());
    out
}

/// A permutation of `v` from `seed` (xorshift Fisher-Yates).
fn shuffle<T>(v: &mut [T], seed: u64) {
    let mut x = seed | 1;
    for i in (1..v.len()).rev() {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        v.swap(i, (x % (i as u64 + 1)) as usize);
    }
}

/// Reassembles `packets` in the given order; the reply and the index that completed it.
fn reassemble(packets: &[Vec<u8>]) -> Option<(ServerInfo, usize)> {
    let mut r = Reassembler::default();
    let mut done = None;
    for (k, p) in packets.iter().enumerate() {
        let d = decode_packet(p).expect("our packets decode");
        if let Pushed::Complete { info, .. } = r.push(d, p.len()).expect("our packets fit") {
            assert!(done.is_none(), "completed twice");
            done = Some((info, k));
        }
    }
    done
}

/// Requests whose bytes also read as another request (choice S3: the forms without a
/// challenge are tried first): a challenge whose first byte is the length of a
/// sub-protocol C list made of the rest.
fn ambiguous(r: &Request) -> bool {
    let b = r.to_bytes();
    match r {
        Request::Info {
            challenge: Some(_), ..
        } => {
            let body = &b[7..];
            let (&count, rest) = body.split_first().unwrap();
            rest.len() == usize::from(count) + 2 && rest.ends_with(&[0, 0])
        }
        _ => false,
    }
}

fn request() -> impl Strategy<Value = Request> {
    let kind = prop_oneof![
        Just(InfoKind::Full),
        (any::<bool>(), any::<bool>(), any::<bool>()).prop_map(|(server, players, teams)| {
            InfoKind::Basic {
                server,
                players,
                teams,
            }
        }),
        proptest::collection::vec(any::<u8>(), 0..40).prop_map(InfoKind::Keys),
    ];
    prop_oneof![
        any::<u32>().prop_map(|session_id| Request::Challenge { session_id }),
        (any::<u32>(), proptest::option::of(any::<u32>()), kind).prop_map(
            |(session_id, challenge, kind)| Request::Info {
                session_id,
                challenge,
                kind
            }
        ),
        proptest::collection::vec(any::<u8>(), 0..=MAX_ECHO)
            .prop_map(|data| Request::Echo { data }),
        proptest::option::of(any::<u32>()).prop_map(|session_id| Request::KeepAlive { session_id }),
    ]
}

/// What `info_to_status(status_to_info(s))` gives back for the fields checked: the host
/// name and map name ("" when absent: both keys are always written), at most
/// [`MAX_ROWS`] players and teams (an empty list reads as none), every player's name (""
/// when absent), its score (`score`, else `frags`, else 0, when any player has one), ping
/// (0 when any has one), team (the wire's 1-based `team_`: negative is "none", -1;
/// `i32::MAX` saturates), every team's name ("" when absent).
/// A player's checked fields: name, score, ping, team.
type Row = (Option<Text>, Option<i32>, Option<u32>, Option<i32>);

#[derive(Debug, PartialEq)]
struct Checked {
    host: Option<Text>,
    map: Option<Text>,
    players: Option<Vec<Row>>,
    teams: Option<Vec<Option<Text>>>,
}

fn checked(s: &Status) -> Checked {
    Checked {
        host: s.host_name.clone(),
        map: s.map.as_ref().map(|m| m.name.clone()),
        players: s.players.as_ref().map(|ps| {
            ps.iter()
                .map(|p| (p.name.clone(), p.score, p.ping, p.team))
                .collect()
        }),
        teams: s
            .teams
            .as_ref()
            .map(|ts| ts.iter().map(|t| t.name.clone()).collect()),
    }
}

/// See [`Checked`]; `wire`: names also as the wire carries them (an empty name is one
/// space; NUL-free strings from the strategy, cut at 255 bytes).
fn expected_back(s: &Status, over_wire: bool) -> Checked {
    let name = |n: &Option<Text>| {
        let n = n.clone().unwrap_or_default();
        if over_wire {
            let n = wire(&n, MAX_VALUE);
            Some(if n.is_empty() { " ".into() } else { n })
        } else {
            Some(n)
        }
    };
    let ps: Vec<_> = s.players.iter().flatten().take(MAX_ROWS).collect();
    let any_score = ps.iter().any(|p| p.score.or(p.frags).is_some());
    let any_ping = ps.iter().any(|p| p.ping.is_some());
    let any_team = ps.iter().any(|p| p.team.is_some());
    let ts: Vec<_> = s.teams.iter().flatten().take(MAX_ROWS).collect();
    Checked {
        host: Some(wire(
            s.host_name.as_deref().unwrap_or_default(),
            if over_wire { MAX_VALUE } else { usize::MAX },
        )),
        map: Some(wire(
            s.map.as_ref().map_or("", |m| m.name.as_str()),
            if over_wire { MAX_VALUE } else { usize::MAX },
        )),
        players: (!ps.is_empty()).then(|| {
            ps.iter()
                .map(|p| {
                    (
                        name(&p.name),
                        any_score.then(|| p.score.or(p.frags).unwrap_or(0)),
                        any_ping.then(|| p.ping.unwrap_or(0)),
                        any_team.then(|| match p.team {
                            Some(t) if t >= 0 => t.saturating_add(1) - 1,
                            _ => -1,
                        }),
                    )
                })
                .collect()
        }),
        teams: (!ts.is_empty()).then(|| ts.iter().map(|t| name(&t.name)).collect()),
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 256, ..ProptestConfig::default() })]

    #[test]
    fn replies_reassemble_in_any_order_to_what_the_wire_carries(
        info in server_info(),
        sid in any::<u32>(),
        seed in any::<u64>(),
        dups in proptest::collection::vec(any::<proptest::sample::Index>(), 0..4),
    ) {
        let packets = encode(&info, sid);
        let n = packets.len();
        prop_assert!((1..=128).contains(&n));
        for (k, p) in packets.iter().enumerate() {
            prop_assert!(p.len() <= MAX_PACKET, "packet {} has {} bytes", k, p.len());
            let d = decode_packet(p).unwrap();
            prop_assert_eq!(d.session_id, sid);
            prop_assert_eq!(usize::from(d.number), k);
            prop_assert_eq!(d.last, k + 1 == n);
            prop_assert_eq!(p[PACKET_HEADER - 1], k as u8 | if k + 1 == n { LAST_FLAG } else { 0 });
            prop_assert!(!d.jc2mp && d.unknown_sections.is_empty());
        }
        let mut order = packets.clone();
        shuffle(&mut order, seed);
        // duplicates before the last packet: dropped
        let last = order.pop().unwrap();
        for d in &dups {
            if !order.is_empty() {
                let p = order[d.index(order.len())].clone();
                order.push(p);
            }
        }
        order.push(last);
        let (got, at) = reassemble(&order).expect("complete");
        prop_assert_eq!(at, order.len() - 1);
        let mut want = on_the_wire(&info);
        // server keys that do not fit packet 0 are dropped, from the first that does not
        prop_assert!(got.server.len() <= want.server.len());
        prop_assert_eq!(&got.server[..], &want.server[..got.server.len()]);
        if server_section_len(&want.server) + PACKET_HEADER + 4 <= MAX_PACKET {
            prop_assert_eq!(got.server.len(), want.server.len());
        }
        want.server.truncate(got.server.len());
        prop_assert_eq!(got, want);
    }

    #[test]
    fn statuses_keep_names_scores_pings_and_teams(s in strategy::status(Params { cs: Charset::Utf8, mixed: true, big: true })) {
        let info = status_to_info(&s);
        let back = info_to_status(&info);
        prop_assert_eq!(checked(&back), expected_back(&s, false));
        // and over the wire, when the server section fits packet 0 (the strategy's is small)
        let packets = encode(&info, 9);
        prop_assert!(packets.iter().all(|p| p.len() <= MAX_PACKET));
        let (got, _) = reassemble(&packets).expect("complete");
        let back = info_to_status(&got);
        prop_assert_eq!(checked(&back), expected_back(&s, true));
        prop_assert_eq!(back.player_count, Some(s.player_count().unwrap_or(0)));
        prop_assert_eq!(back.slot_max, Some(s.slot_max.unwrap_or(0)));
    }

    #[test]
    fn requests_round_trip(r in request()) {
        let b = r.to_bytes();
        let d = Request::decode(&b).unwrap();
        prop_assert_eq!(d.to_bytes(), b, "byte for byte");
        if !ambiguous(&r) {
            prop_assert_eq!(d, r);
        }
    }

    #[test]
    fn random_bytes_never_panic(bytes in proptest::collection::vec(any::<u8>(), 0..400)) {
        let _ = Request::decode(&bytes);
        let _ = decode_reply(&bytes);
        let _ = decode_packet(&bytes);
        let _ = Heartbeat::decode(&bytes);
        let mut r = Reassembler::default();
        for prefix in [&b"\xfe\xfd"[..], b"\xfe\xfd\x00", b"\x00\x01\x02\x03\x04splitnum\x00", b"\x09\x01\x02\x03\x04", b"\x03"] {
            let mut d = prefix.to_vec();
            d.extend_from_slice(&bytes);
            let _ = Request::decode(&d);
            let _ = decode_reply(&d);
            let _ = Heartbeat::decode(&d);
            if let Ok(p) = decode_packet(&d) {
                prop_assert!(p.warnings.len() <= 16);
                let _ = r.push(p, d.len());
            }
        }
    }

    #[test]
    fn mutated_packets_never_panic_and_errors_point_into_the_input(
        info in server_info(),
        flips in proptest::collection::vec((any::<proptest::sample::Index>(), any::<u8>()), 1..8),
        cut in any::<proptest::sample::Index>(),
    ) {
        let mut packets = encode(&info, 7);
        let mut r = Reassembler::default();
        for p in packets.iter_mut().rev() {
            for (at, v) in &flips {
                let k = at.index(p.len());
                p[k] = *v;
            }
            let q = &p[..cut.index(p.len() + 1)];
            for d in [&p[..], q] {
                if let Err(e) = decode_reply(d) {
                    prop_assert!(e.offset <= d.len(), "{e}");
                }
                if let Ok(pk) = decode_packet(d) {
                    for w in &pk.warnings {
                        prop_assert!(w.offset <= d.len());
                    }
                    if let Ok(Pushed::Complete { info, .. }) = r.push(pk, d.len()) {
                        let _ = info_to_status(&info);
                    }
                }
            }
        }
    }

    #[test]
    fn heartbeats_round_trip(
        ips in proptest::collection::vec(key(16), 0..4),
        port in proptest::option::of(any::<u16>()),
        natneg in proptest::option::of(any::<bool>()),
        game in proptest::option::of(key(12)),
        keys in proptest::collection::vec((key(12), key(20)), 0..10),
        instance_key in any::<u32>(),
    ) {
        use ogp_proto::gamespy3::heartbeat::StateChanged;
        // keys that are not the named ones (those are read into their fields)
        let keys: Vec<(Text, Text)> = keys
            .into_iter()
            .map(|(k, v)| (format!("k_{k}").into(), v))
            .collect();
        let hb = Heartbeat {
            instance_key,
            local_ips: ips,
            local_port: port,
            natneg,
            state_changed: Some(StateChanged::Changed),
            game_name: game,
            keys,
        };
        prop_assert_eq!(Heartbeat::decode(&hb.to_bytes()).unwrap(), hb);
    }

    #[test]
    fn the_client_never_panics_sends_a_bounded_number_and_ends(
        handshake in prop_oneof![Just(Handshake::Auto), Just(Handshake::Always), Just(Handshake::Never)],
        retries in 0u32..3,
        steps in proptest::collection::vec(
            (
                0u16..3000,
                prop_oneof![
                    proptest::collection::vec(any::<u8>(), 0..64),
                    (any::<u8>(), proptest::collection::vec(any::<u8>(), 0..40)).prop_map(|(t, rest)| {
                        // a challenge reply or a packet with our session id
                        let mut d = vec![if t & 1 == 0 { 0x09 } else { 0x00 }];
                        d.extend_from_slice(&0x0102_0304u32.to_be_bytes());
                        if t & 1 == 1 {
                            d.extend_from_slice(b"splitnum\0");
                            d.push(t);
                        }
                        d.extend(rest);
                        d
                    }),
                ],
            ),
            0..30,
        ),
    ) {
        let t0 = Instant::now();
        let mut opts = QueryOptions::default();
        opts.handshake = handshake;
        let timing = Timing::default().retries(retries);
        let max_challenges = timing.max_challenges;
        let total = timing.total_timeout;
        let mut m = QueryMachine::new(opts, timing, 0x0102_0304, t0);
        let mut now = t0;
        let mut sent = 0u32;
        let mut done = false;
        for (dt, d) in &steps {
            while let Some(q) = m.poll_transmit(now) {
                prop_assert!(Request::decode(&q).is_ok());
                sent += 1;
            }
            now += Duration::from_millis(u64::from(*dt));
            while let Some(t) = m.poll_timeout() {
                if t > now {
                    break;
                }
                m.handle_timeout(t);
                while m.poll_transmit(t).is_some() {
                    sent += 1;
                }
            }
            m.handle_datagram(now, d);
            if let Some(r) = m.take_result() {
                if let Ok(o) = r {
                    prop_assert!(o.events.len() <= MAX_EVENTS);
                    prop_assert!(o.ping_ms >= 0.0);
                }
                done = true;
                break;
            }
        }
        if !done {
            // nothing more comes: the machine ends by its deadline
            for _ in 0..100 {
                while m.poll_transmit(now).is_some() {
                    sent += 1;
                }
                let Some(t) = m.poll_timeout() else { break };
                prop_assert!(t <= t0 + total);
                now = now.max(t);
                m.handle_timeout(now);
            }
            prop_assert!(m.is_done());
            prop_assert!(now <= t0 + total);
        }
        // two datagrams per attempt at most; attempts: the first, the fallback, the
        // retries of each step, one more per accepted challenge
        let bound = 2 * ((1 + retries) * (1 + max_challenges) + 2);
        prop_assert!(sent <= bound, "{} datagrams sent, bound {}", sent, bound);
    }
}

#[test]
fn replies_keep_at_most_max_columns() {
    // 7-byte columns at offset 255: without the cap, ~37 000 columns of 256 slots
    let mut packets = Vec::new();
    for number in 0..4u8 {
        let mut p = vec![0x00, 0, 0, 0, 1];
        p.extend_from_slice(b"splitnum\0");
        p.push(number | if number == 3 { LAST_FLAG } else { 0 });
        p.push(1);
        let mut k = 0u32;
        while p.len() < 60_000 {
            p.extend_from_slice(format!("{number}{k:x}\0").as_bytes());
            p.extend_from_slice(&[255, b'v', 0, 0]);
            k += 1;
        }
        p.push(0);
        packets.push(p);
    }
    let mut r = Reassembler::default();
    let mut done = None;
    for p in &packets {
        if let Pushed::Complete { info, warnings, .. } =
            r.push(decode_packet(p).unwrap(), p.len()).unwrap()
        {
            done = Some((info, warnings));
        }
    }
    let (info, warnings) = done.unwrap();
    assert_eq!(info.players.len(), MAX_COLUMNS);
    assert!(info.players.iter().all(|c| c.values.len() == 256));
    assert!(warnings.iter().any(|w| w.message.contains("128")));
}

#[test]
fn a_big_status_is_one_reply_of_many_packets() {
    let s = ogp_testkit::many_players(256, 40);
    let info = status_to_info(&s);
    let packets = encode(&info, 1);
    assert!(packets.len() > 8, "{}", packets.len());
    let mut rev = packets.clone();
    rev.reverse();
    let (got, _) = reassemble(&rev).unwrap();
    assert_eq!(got, on_the_wire(&info));
    let back = info_to_status(&got);
    assert_eq!(back.players.as_ref().map(Vec::len), Some(256));
}

#[test]
fn packets_without_a_break_point_end_before_a_column() {
    // The server section leaves room for the first column's header but not its first
    // value (encode_packets used to fail); and a reply of one-value columns larger than a
    // packet (no column has a second value to break before).
    let mut cases = Vec::new();
    for pad in 0..250 {
        let mut server: Vec<(Text, Text)> = (0..5)
            .map(|i| (format!("k{i}").into(), "v".repeat(250).into()))
            .collect();
        server.push(("x".into(), "v".repeat(pad).into()));
        cases.push(ServerInfo {
            server,
            players: vec![Column {
                key: "player_".into(),
                values: vec!["x".repeat(30).into(), "y".into()],
            }],
            teams: vec![Column {
                key: "team_t".into(),
                values: vec!["t".into()],
            }],
        });
    }
    cases.push(ServerInfo {
        server: vec![("hostname".into(), "h".into())],
        players: (0..100)
            .map(|i| Column {
                key: format!("extra{i}_").into(),
                values: vec!["v".repeat(40).into()],
            })
            .collect(),
        teams: Vec::new(),
    });
    for info in cases {
        let packets = encode(&info, 5);
        assert!(packets.iter().all(|p| p.len() <= MAX_PACKET));
        let mut rev = packets.clone();
        rev.reverse();
        let (got, _) = reassemble(&rev).unwrap();
        let mut want = on_the_wire(&info);
        // (server keys that do not fit packet 0 are dropped)
        assert!(!got.server.is_empty());
        assert_eq!(got.server[..], want.server[..got.server.len()]);
        want.server.truncate(got.server.len());
        assert_eq!(got, want);
    }
}

#[test]
fn a_refused_packet_leaves_the_reassembler_unchanged() {
    use ogp_proto::gamespy3::reply::{ReassemblyError, ReassemblyLimits};
    let info = ServerInfo {
        server: vec![("hostname".into(), "h".into())],
        players: vec![Column {
            key: "player_".into(),
            values: (0..60)
                .map(|i| format!("{i:02}{}", "n".repeat(40)).into())
                .collect(),
        }],
        teams: Vec::new(),
    };
    let packets = encode(&info, 3);
    assert_eq!(packets.len(), 2);
    let mut limits = ReassemblyLimits::default();
    limits.max_packets = 128;
    limits.max_bytes = packets[0].len() + 10;
    let mut r = Reassembler::with_limits(limits);
    let push = |r: &mut Reassembler, p: &Vec<u8>| r.push(decode_packet(p).unwrap(), p.len());
    assert_eq!(push(&mut r, &packets[0]), Ok(Pushed::Incomplete));
    // the last packet is too large to hold: refused, and it must not count as the last
    // one or as held bytes
    assert_eq!(
        push(&mut r, &packets[1]),
        Err(ReassemblyError::TooLarge {
            limit: limits.max_bytes
        })
    );
    assert_eq!(r.held(), 1);
    r.reset();
    assert_eq!(push(&mut r, &packets[1]), Ok(Pushed::Incomplete));
    let mut r2 = Reassembler::with_limits({
        let mut l = limits;
        l.max_bytes = packets[1].len() + 10;
        l
    });
    assert_eq!(push(&mut r2, &packets[1]), Ok(Pushed::Incomplete));
    assert!(push(&mut r2, &packets[0]).is_err());
    // before the fix the refused packet's bytes stayed counted and a later small one was
    // refused too; and a refused last packet made its resend a "second last"
    let mut r3 = Reassembler::with_limits({
        let mut l = limits;
        l.max_bytes = packets[1].len() + 10;
        l
    });
    assert!(push(&mut r3, &packets[0]).is_err());
    assert_eq!(push(&mut r3, &packets[1]), Ok(Pushed::Incomplete));
    let mut r4 = Reassembler::with_limits({
        let mut l = limits;
        l.max_bytes = 20;
        l
    });
    assert!(push(&mut r4, &packets[1]).is_err());
    assert_ne!(push(&mut r4, &packets[1]), Err(ReassemblyError::TwoLasts));
}
