//! The QuakeWorld / Quake 2 codec, mapping and client against real replies of real
//! servers (`tests/data/quake1/` and `tests/data/quake2/`, sources in their
//! `SOURCES.md`): MVDSV 0.35 + KTX (observed here), and two R1Q2 Quake 2 servers (GameQ's
//! test data). Each capture decodes without warnings, re-encodes to its bytes, is told
//! apart by `detect::guess`, maps to what its source says, and is read by the client
//! machine of its protocol (and dropped by the other's). Hostile replies (lying and
//! garbled player lines, oversize, many datagrams) end with an error or a bounded
//! answer.

use std::path::PathBuf;
use std::time::{Duration, Instant};

use ogp_proto::client::{Machine, Options, QueryDriver, QueryError};
use ogp_proto::quakeworld::mapping::reply_to_status;
use ogp_proto::quakeworld::wire::{decode_reply, decode_reply_with, DecodeLimits, Dialect};
use ogp_proto::{DecodeErrorKind, Protocol};

fn capture(path: &str) -> Vec<u8> {
    let p = PathBuf::from(concat!(env!("CARGO_MANIFEST_DIR"), "/tests/data")).join(path);
    std::fs::read(&p).unwrap_or_else(|e| panic!("{}: {e}", p.display()))
}

const ALL: [(&str, Protocol); 3] = [
    ("quake1/mvdsv_ktx_status23.bin", Protocol::Quakeworld),
    ("quake2/r1q2_tastyspleen_status.bin", Protocol::Quake2),
    ("quake2/r1q2_lithium_status.bin", Protocol::Quake2),
];

#[test]
fn every_capture_decodes_and_encodes_back_to_its_bytes() {
    for (name, protocol) in ALL {
        let bytes = capture(name);
        let d = decode_reply(&bytes).unwrap_or_else(|e| panic!("{name}: {e}"));
        assert!(d.warnings.is_empty(), "{name}: {:?}", d.warnings);
        assert_eq!(d.reply.to_bytes(), bytes, "{name}");
        assert_eq!(ogp_proto::detect::guess(&bytes), Some(protocol), "{name}");
    }
}

#[test]
fn mvdsv_maps_to_what_it_was_started_with() {
    let d = decode_reply(&capture("quake1/mvdsv_ktx_status23.bin")).unwrap();
    assert_eq!(d.reply.dialect, Dialect::QuakeWorld);
    let s = reply_to_status(&d.reply);
    assert_eq!(s.host_name.as_deref(), Some("QW test"));
    assert_eq!(s.map.as_ref().map(|m| m.name.as_str()), Some("start"));
    assert_eq!(s.slot_max, Some(6));
    assert_eq!(s.game_type.as_deref(), Some("ktx"));
    assert_eq!(s.game_version.as_deref(), Some("MVDSV 0.35"));
    let p = &s.players.as_ref().unwrap()[0];
    assert_eq!(
        (p.id, p.name.as_deref(), p.frags, p.ping, p.time),
        (Some(1), Some("Tester"), Some(0), Some(999), Some(0))
    );
    let extra: Vec<(&str, &str)> = p
        .extra
        .iter()
        .map(|(k, v)| (k.as_str(), v.as_str()))
        .collect();
    assert_eq!(
        extra,
        [
            ("bottomcolor", "12"),
            ("skin", "base"),
            ("team", "red"),
            ("topcolor", "4")
        ]
    );
}

/// GameQ's `1_result.json` for the same bytes: 11 players with these frags and pings,
/// host name, map, max clients, game.
#[test]
fn quake2_maps_as_gameq_reads_it() {
    let d = decode_reply(&capture("quake2/r1q2_tastyspleen_status.bin")).unwrap();
    let s = reply_to_status(&d.reply);
    assert_eq!(s.host_name.as_deref(), Some("tastyspleen.net::dm"));
    assert_eq!(s.map.as_ref().map(|m| m.name.as_str()), Some("q2dm6"));
    assert_eq!(s.slot_max, Some(17));
    assert_eq!(s.player_count, Some(11));
    assert_eq!(s.game_type.as_deref(), Some("baseq2"));
    assert_eq!(
        s.game_version.as_deref(),
        Some("R1Q2 b7864 i386 Oct  1 2008 Linux")
    );
    let got: Vec<(String, i32, u32)> = s
        .players
        .unwrap()
        .iter()
        .map(|p| {
            (
                p.name.clone().unwrap().to_string(),
                p.frags.unwrap(),
                p.ping.unwrap(),
            )
        })
        .collect();
    let want = [
        ("WallFly[BZZZ]", 0, 2),
        ("ninja", 2, 162),
        ("Richo de Lula", 3, 196),
        ("Fatal[KiD]", 22, 52),
        ("Anus Paste", 15, 25),
        ("hindmost", 12, 22),
        ("[A2W]H3mr0yd", 29, 59),
        ("nx0", 4, 159),
        ("0:0", 26, 40),
        ("mag", 18, 41),
        ("mind", 9, 71),
    ];
    let want: Vec<(String, i32, u32)> = want
        .iter()
        .map(|(n, f, p)| (n.to_string(), *f, *p))
        .collect();
    assert_eq!(got, want);
    let d = decode_reply(&capture("quake2/r1q2_lithium_status.bin")).unwrap();
    let s = reply_to_status(&d.reply);
    assert_eq!(s.host_name.as_deref(), Some("Clanworld's Lithium-DM #1"));
    assert_eq!((s.slot_max, s.player_count), (Some(32), Some(10)));
    assert_eq!(s.game_type.as_deref(), Some("ospl2"));
}

/// Drives a machine of `protocol` to its end, answering each request with `reply`.
fn query(protocol: Protocol, reply: &[u8]) -> Result<ogp_proto::client::Answer, QueryError> {
    let t0 = Instant::now();
    let mut m = Machine::new(protocol, &Options::default(), 7, t0);
    let mut t = t0;
    let mut d = Vec::new();
    for _ in 0..100 {
        while m.poll_transmit_into(t, &mut d) {
            m.handle_datagram(t, reply);
        }
        if let Some(r) = m.take_result() {
            return r;
        }
        t = m.poll_timeout().unwrap_or(t + Duration::from_secs(1));
        m.handle_timeout(t);
    }
    panic!("the machine did not end");
}

#[test]
fn each_client_reads_its_captures_and_not_the_others() {
    for (name, protocol) in ALL {
        let bytes = capture(name);
        let a = query(protocol, &bytes).unwrap_or_else(|e| panic!("{name}: {e}"));
        assert_eq!(a.protocol, protocol);
        assert!(a.status.host_name.is_some(), "{name}");
        for other in [Protocol::Quakeworld, Protocol::Quake2, Protocol::Hexenworld] {
            if other != protocol {
                assert!(
                    matches!(query(other, &bytes), Err(QueryError::NoAnswer { .. })),
                    "{name} read as {other}"
                );
            }
        }
    }
}

// ------------------------------------------------------------------------------------
// Hostile replies

fn qw(lines: &str) -> Vec<u8> {
    let mut v = b"\xff\xff\xff\xffn\\hostname\\evil\\maxclients\\4\n".to_vec();
    v.extend_from_slice(lines.as_bytes());
    v.push(0);
    v
}

/// Counts that lie (frags, times and pings past any integer, negative minutes) are
/// kept in range or left out; garbled lines are errors naming their offset.
#[test]
fn lying_and_garbled_player_lines() {
    let s = reply_to_status(
        &decode_reply(&qw(
            "99999999999 -5 99999999999 -99999999999 \"big\" \"\" 999 -1 \"\"\n",
        ))
        .unwrap()
        .reply,
    );
    let p = &s.players.unwrap()[0];
    assert_eq!(
        (p.id, p.frags, p.time, p.ping),
        (None, Some(-5), None, None)
    );
    // 2^32 − 1 minutes: the time saturates instead of overflowing.
    let s = reply_to_status(&decode_reply(&qw("1 2 4294967295 3 \"t\"\n")).unwrap().reply);
    assert_eq!(s.players.unwrap()[0].time, Some(u32::MAX));
    for (bad, field) in [
        ("1 2 3 4 no quotes\n", "player line"),
        ("1 2 3 4 \"unclosed\n", "player name"),
        ("1 2 3 4 \"n\" \"skin\n", "player column"),
    ] {
        let e = decode_reply(&qw(bad)).unwrap_err();
        assert_eq!(e.field, field, "{bad:?}");
        assert!(e.offset >= 40, "{bad:?}: {e}");
    }
}

/// Oversize: more player lines, columns, variables or bytes than the limits hold are
/// refused with the limit named, whatever the datagram's size.
#[test]
fn oversize_replies_are_refused_at_the_limits() {
    let many: String = (0..300).map(|i| format!("{i} 0 0 0 \"p{i}\"\n")).collect();
    let e = decode_reply(&qw(&many)).unwrap_err();
    assert!(
        matches!(e.kind, DecodeErrorKind::TooLarge { limit: 256 }),
        "{e}"
    );
    let wide = format!("{} \"n\"\n", "1 ".repeat(40));
    let e = decode_reply(&qw(&wide)).unwrap_err();
    assert!(
        matches!(e.kind, DecodeErrorKind::TooLarge { limit: 8 }),
        "{e}"
    );
    let vars: String = (0..1100).map(|i| format!("\\k{i}\\v")).collect();
    let e = decode_reply(format!("\u{0}{vars}\n").as_bytes()).unwrap_err();
    assert_eq!(e.field, "prefix");
    let mut v = b"\xff\xff\xff\xffn".to_vec();
    v.extend_from_slice(vars.as_bytes());
    let e = decode_reply(&v).unwrap_err();
    assert!(
        matches!(e.kind, DecodeErrorKind::TooLarge { limit: 1024 }),
        "{e}"
    );
    let long = format!("1 0 0 0 \"{}\"\n", "x".repeat(600));
    let e = decode_reply(&qw(&long)).unwrap_err();
    assert!(
        matches!(e.kind, DecodeErrorKind::TooLarge { limit: 512 }),
        "{e}"
    );
    // Tighter limits hold as given.
    let mut limits = DecodeLimits::new();
    limits.max_players = 2;
    let e = decode_reply_with(
        &qw("1 0 0 0 \"a\"\n2 0 0 0 \"b\"\n3 0 0 0 \"c\"\n"),
        &limits,
    )
    .unwrap_err();
    assert!(
        matches!(e.kind, DecodeErrorKind::TooLarge { limit: 2 }),
        "{e}"
    );
    // The client ends at once on an oversize reply (one request, no retries).
    assert!(matches!(
        query(Protocol::Quakeworld, &qw(&many)),
        Err(QueryError::Malformed { .. })
    ));
}

/// Many datagrams: a flood of junk and foreign replies before the real one changes
/// nothing but the count of dropped datagrams; the first real reply ends the query and
/// later ones are ignored.
#[test]
fn many_datagrams_are_bounded() {
    let t0 = Instant::now();
    let mut m = Machine::new(Protocol::Quakeworld, &Options::default(), 1, t0);
    let mut d = Vec::new();
    assert!(m.poll_transmit_into(t0, &mut d));
    for i in 0..10_000u32 {
        let junk: &[u8] = match i % 4 {
            0 => b"\xff\xff\xff\xffprint\n\\hostname\\q2\n",
            1 => b"\xff\xff\xff\xffn\\a\\b\n1 2 \"unclosed\n",
            2 => &[0xff; 1400],
            _ => b"l",
        };
        m.handle_datagram(t0, junk);
    }
    assert!(m.take_result().is_none());
    m.handle_datagram(t0, &qw("1 0 0 10 \"real\"\n"));
    let a = m.take_result().unwrap().unwrap();
    assert_eq!(a.status.players.as_ref().map(Vec::len), Some(1));
    m.handle_datagram(t0, &qw("2 0 0 10 \"late\"\n"));
    assert!(m.take_result().is_none());
    assert!(!m.poll_transmit_into(t0, &mut d));
}

/// The catalogue names the game of each capture: QuakeWorld by its protocol, Quake 2 by
/// its `gamename` (`baseq2`, padded with spaces in the Lithium capture).
#[test]
fn the_catalogue_names_each_captures_game() {
    let c = ogp_proto::games::catalogue();
    for (name, protocol, game, rule) in [
        (
            "quake1/mvdsv_ktx_status23.bin",
            Protocol::Quakeworld,
            "quake",
            "by_protocol",
        ),
        (
            "quake2/r1q2_tastyspleen_status.bin",
            Protocol::Quake2,
            "quake2",
            "quake2_gamename",
        ),
        (
            "quake2/r1q2_lithium_status.bin",
            Protocol::Quake2,
            "quake2",
            "quake2_gamename",
        ),
    ] {
        let s = reply_to_status(&decode_reply(&capture(name)).unwrap().reply);
        let i = c
            .identify(protocol, &s)
            .unwrap_or_else(|| panic!("{name}: no game"));
        assert_eq!((i.game.id.as_str(), i.rule.name()), (game, rule), "{name}");
    }
}

/// Auto-detection asks first the protocol whose games answer on the port: 27500
/// (QuakeWorld), 27910 (Quake 2, Alien Arena), 26950 (HexenWorld).
#[test]
fn their_probes_go_first_on_their_games_ports() {
    assert_eq!(
        ogp_proto::detect::probe_order(27500)[0],
        Protocol::Quakeworld
    );
    assert_eq!(ogp_proto::detect::probe_order(27910)[0], Protocol::Quake2);
    assert_eq!(
        ogp_proto::detect::probe_order(26950)[0],
        Protocol::Hexenworld
    );
}

// ------------------------------------------------------------------------------------
// NetQuake: hostile servers

mod netquake {
    use super::*;
    use ogp_proto::netquake::client::{MAX_PLAYERS, MAX_RULES};
    use ogp_proto::netquake::wire::{
        decode_reply, decode_request, PlayerInfo, Reply, Request, ServerInfo,
    };

    /// Runs a NetQuake query against `answer`; the answer and the datagrams sent.
    fn run(
        answer: impl Fn(Request) -> Option<Reply>,
    ) -> (Result<ogp_proto::client::Answer, QueryError>, usize) {
        let t0 = Instant::now();
        let mut m = Machine::new(Protocol::Netquake, &Options::default(), 1, t0);
        let (mut t, mut sent, mut d) = (t0, 0usize, Vec::new());
        for _ in 0..10_000 {
            while m.poll_transmit_into(t, &mut d) {
                sent += 1;
                if let Some(r) = decode_request(&d).ok().and_then(&answer) {
                    m.handle_datagram(t, &r.to_bytes());
                }
            }
            if let Some(r) = m.take_result() {
                return (r, sent);
            }
            t = m.poll_timeout().unwrap_or(t + Duration::from_secs(1));
            m.handle_timeout(t);
        }
        panic!("the machine did not end");
    }

    fn info(players: u8) -> Reply {
        Reply::ServerInfo(ServerInfo {
            address: b"LOCAL".to_vec(),
            hostname: b"evil".to_vec(),
            map: b"e1m1".to_vec(),
            players,
            max_players: 255,
            version: 3,
        })
    }

    /// A server that says 255 players and answers every slot: at most MAX_PLAYERS player
    /// steps; one that answers rules forever, each new: at most MAX_RULES; one that
    /// names the same rule again: the rules end there.
    #[test]
    fn lying_counts_and_endless_rules_are_capped() {
        let (a, sent) = run(|q| match q {
            Request::ServerInfo(_) => Some(info(255)),
            Request::PlayerInfo(n) => Some(Reply::PlayerInfo(PlayerInfo {
                slot: n,
                name: b"x".to_vec(),
                ..PlayerInfo::default()
            })),
            Request::RuleInfo(prev) => {
                let mut k = prev.clone();
                k.push(b'a');
                Some(Reply::RuleInfo(Some((k, b"1".to_vec()))))
            }
        });
        let a = a.unwrap();
        assert_eq!(a.status.players.as_ref().map(Vec::len), Some(MAX_PLAYERS));
        assert_eq!(
            a.status.rules.as_ref().map(|r| r.len()),
            Some(MAX_RULES + 1)
        );
        assert_eq!(sent, 1 + MAX_PLAYERS + MAX_RULES + 1);
        assert!(
            a.warnings.iter().any(|w| w.contains("rules")),
            "{:?}",
            a.warnings
        );
        let (a, sent) = run(|q| match q {
            Request::ServerInfo(_) => Some(info(0)),
            Request::RuleInfo(_) => Some(Reply::RuleInfo(Some((b"loop".to_vec(), b"1".to_vec())))),
            Request::PlayerInfo(_) => None,
        });
        assert_eq!(a.unwrap().status.rules.map(|r| r.len()), Some(2));
        assert_eq!(sent, 3);
    }

    /// Replies for another slot, garbled or oversized lengths, and a server that goes
    /// silent after its info: dropped, and the answer keeps what came.
    #[test]
    fn garbled_and_wrong_replies_are_dropped() {
        let (a, _) = run(|q| match q {
            Request::ServerInfo(_) => Some(info(2)),
            Request::PlayerInfo(n) => Some(Reply::PlayerInfo(PlayerInfo {
                slot: n.wrapping_add(1),
                ..PlayerInfo::default()
            })),
            Request::RuleInfo(_) => None,
        });
        let a = a.unwrap();
        assert_eq!(a.status.player_count, Some(2));
        assert_eq!(a.status.players, None);
        assert!(a
            .warnings
            .iter()
            .any(|w| w.contains("no reply to player info")));
        let mut b = info(1).to_bytes();
        b[3] = b[3].wrapping_add(1);
        assert_eq!(decode_reply(&b).unwrap_err().field, "header");
        b.truncate(5);
        assert!(decode_reply(&b).is_err());
        assert!(decode_reply(&[0x80, 0, 0, 5, 0x83]).is_err());
    }
}
