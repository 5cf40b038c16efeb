//! The OGP v0.02 draft (`shared/specs/001_…`), end to end, with an explicit clock:
//!
//! * byte-exact datagrams built by hand from the draft's own field tables (001 l.4–92,
//!   plus our AnswerFields, `docs/ogp-draft.md` D8), checked in both directions: our
//!   encoders produce them and our decoders read them back;
//! * the challenge flow, Type 0 Banned, MaxBytesPerPacket 500–1500, split answers, the
//!   abuse rules (oversize, bAnswer, Rcon, unknown types, garbage, v1.01 datagrams);
//! * random statuses through the client machine and the responder in memory, split
//!   answers delivered out of order; any status encodes stably;
//! * malformed input: truncations, lying counts, unknown bits, random bytes: a clean
//!   decode error or silence, never a panic;
//! * amplification: an unverified source never gets more than 18 bytes, nor more than
//!   4 bytes more than it sent.
//!
//! The helpers are local (no shared test module), so this file stands on its own.

use std::collections::BTreeMap;
use std::net::SocketAddr;
use std::sync::Arc;
use std::time::{Duration, Instant};

use ogp_proto::client::{Answer, QueryDriver, QueryError, Rejection, Timing};
use ogp_proto::internals::{from_hex, to_hex};
use ogp_proto::ogp::{ErrorValue, Pushed, Reassembler, PREFIX};
use ogp_proto::ogp_draft::answer::{answer_fields, RATE_KEY};
use ogp_proto::ogp_draft::client::{Details, QueryMachine, QueryOptions};
use ogp_proto::ogp_draft::query::{player_fields, requests};
use ogp_proto::ogp_draft::responder::{DraftConfig, DraftOutcome};
use ogp_proto::ogp_draft::{
    self, decode_answer_body, encode_answer_body, DefaultQuery, Header, Message, PacketType,
    REQUEST_CHALLENGE,
};
use ogp_proto::responder::{BanAction, Listener, Outcome, Responder, ResponderConfig, Transmits};
use ogp_proto::{MapInfo, ModInfo, Player, Protocol, Status, Text};
use proptest::collection::vec;
use proptest::prelude::*;

// =======================================================================================
// Harness

const SECRET: [u8; 32] = [0x3c; 32];
const SRC: &str = "192.0.2.10:40000";

struct Harness {
    r: Responder,
    t0: Instant,
    out: Transmits,
    status: Status,
}

impl Harness {
    fn new(status: Status) -> Self {
        Self::with_config(status, ResponderConfig::default())
    }

    fn with_config(status: Status, config: ResponderConfig) -> Self {
        let t0 = Instant::now();
        let config = {
            let mut cfg = config;
            cfg.listener = Listener::OgpDraft;
            cfg
        };
        Self {
            r: Responder::new(config, SECRET, t0),
            t0,
            out: Transmits::default(),
            status,
        }
    }

    fn send_from(&mut self, src: SocketAddr, d: &[u8]) -> (Outcome, Vec<Vec<u8>>) {
        let o = self.r.handle(self.t0, src, d, &self.status, &mut self.out);
        (o, self.out.iter().map(<[u8]>::to_vec).collect())
    }

    fn send(&mut self, d: &[u8]) -> (Outcome, Vec<Vec<u8>>) {
        self.send_from(addr(SRC), d)
    }

    fn challenge(&mut self) -> u32 {
        self.r.ogp_draft_challenge(self.t0, addr(SRC).ip())
    }

    /// Expects silence and returns why.
    fn ignored(&mut self, d: &[u8]) -> &'static str {
        match self.send(d) {
            (Outcome::OgpDraft(DraftOutcome::Ignored(u)), out) if out.is_empty() => u.why,
            other => panic!("expected silence for {}: {other:?}", to_hex(d)),
        }
    }
}

fn addr(s: &str) -> SocketAddr {
    s.parse().unwrap()
}

fn hex(s: &str) -> Vec<u8> {
    from_hex(&s.replace([' ', '\n'], "")).unwrap_or_else(|| panic!("bad hex {s}"))
}

fn le(v: u32) -> String {
    to_hex(&v.to_le_bytes())
}

/// A draft query by the tables: RequestID 0x11223344, the given challenge, optional
/// MaxBytesPerPacket, Type 2 and `body`.
fn query(challenge: Option<u32>, max: Option<i16>, body: &str) -> Vec<u8> {
    let mut flags = 0x02u8; // bRequestID
    let mut d = PREFIX.to_vec();
    if challenge.is_some() {
        flags |= 0x04;
    }
    if max.is_some() {
        flags |= 0x08;
    }
    d.push(flags);
    d.extend_from_slice(&hex("44332211"));
    if let Some(c) = challenge {
        d.extend_from_slice(&c.to_le_bytes());
    }
    if let Some(m) = max {
        d.extend_from_slice(&m.to_le_bytes());
    }
    d.push(0x02);
    d.extend_from_slice(&hex(body));
    d
}

/// Requests bInfo | bPlayerList, PlayerFields 0.0–0.6 and 1.0–1.3.
const EVERYTHING: &str = "0a ff0f";

/// The project's sample state file.
fn demo_state() -> Status {
    Status::from_json(include_str!("../data/state.json")).expect("state.json parses")
}

/// The sample state with `n` players with names of `name_len` characters.
fn many_players(n: usize, name_len: usize) -> Status {
    let players = (0..n)
        .map(|i| {
            let mut player = Player::default();
            player.slot = Some(u32::try_from(i).unwrap());
            player.name = Some(format!("{i:05}-{}", "x".repeat(name_len.saturating_sub(6))).into());
            player.team = Some(i32::try_from(i % 2).unwrap());
            player.score = Some(i32::try_from(i).unwrap() * 7 - 300);
            player.ping = Some(u32::try_from(i % 300).unwrap());
            player.alive = Some(i % 3 != 0);
            player
        })
        .collect();
    let mut status = demo_state();
    status.players = Some(players);
    status.slot_max = Some(u32::try_from(n).unwrap() + 10);
    status
}

fn answer_of(d: &[u8]) -> ogp_draft::Answer {
    match ogp_draft::decode(d)
        .unwrap_or_else(|e| panic!("{e}: {}", to_hex(d)))
        .message
    {
        Message::Answer(a) => *a,
        other => panic!("not an answer: {other:?} ({})", to_hex(d)),
    }
}

// =======================================================================================
// Byte-exact datagrams from the draft's tables

#[test]
fn query_bytes_from_the_tables() {
    // l.5 FFFFFFFF, l.6 "OGP\0", l.7–10 HeadFlags 0e (bRequestID 0.1, bChallengeNumber
    // 0.2, bSplit 0.3), l.11 RequestID, l.12 ChallengeNumber 0xFFFFFFFF (ask for one),
    // l.13 MaxBytesPerPacket 1500, l.14–17 Type 2, l.34–40 Requests 0a (bInfo 0.1,
    // bPlayerList 0.3), l.42–55 PlayerFields ff 0f (0.0–0.6, 1.0–1.3)
    let wire = hex("ffffffff 4f475000 0e 44332211 ffffffff dc05 02 0a ff0f");
    assert_eq!(wire, query(Some(REQUEST_CHALLENGE), Some(1500), EVERYTHING));
    let p = ogp_draft::decode(&wire).unwrap();
    assert!(!p.header.is_answer());
    assert_eq!(p.header.request_id, Some(0x1122_3344));
    assert_eq!(p.header.challenge, Some(REQUEST_CHALLENGE));
    assert_eq!(p.header.max_bytes_per_packet, Some(1500));
    assert_eq!(p.header.packet_type, PacketType::DEFAULT_QUERY);
    let Message::Query(q) = p.message else {
        panic!("{:?}", p.message)
    };
    assert_eq!(q.query, DefaultQuery::everything());
    assert_eq!(q.query.requests, requests::INFO.with(requests::PLAYER_LIST));
    assert_eq!(q.query.player_fields, player_fields::ALL);
    assert_eq!(q.trailing, 0);
    // encoded by hand-built header and query …
    let mut out = Vec::new();
    ogp_draft::encode_query(
        &Header {
            request_id: Some(0x1122_3344),
            challenge: Some(REQUEST_CHALLENGE),
            max_bytes_per_packet: Some(1500),
            ..Header::query(PacketType::DEFAULT_QUERY)
        },
        Some(&DefaultQuery::everything()),
        &mut out,
    );
    assert_eq!(out, wire);
    // … and by the client's first datagram
    let mut opts = QueryOptions::default();
    opts.max_bytes_per_packet = Some(1500);
    let mut m = QueryMachine::new(opts, Timing::default(), 0x1122_3344, Instant::now());
    assert_eq!(m.poll_transmit(Instant::now()), Some(wire));
    // without bPlayerList there is no PlayerFields; without fields, no header fields
    let info_only = hex("ffffffff 4f475000 00 02 02");
    let Message::Query(q) = ogp_draft::decode(&info_only).unwrap().message else {
        panic!()
    };
    assert_eq!(q.query.requests, requests::INFO);
    assert_eq!(q.query.player_fields, ogp_proto::ogp::Bits::EMPTY);
}

#[test]
fn challenge_answers_carry_a_challenge_and_no_data() {
    let mut h = Harness::new(demo_state());
    let c = h.challenge();
    assert_ne!(c, REQUEST_CHALLENGE);
    // 0xFFFFFFFF asks for one (l.12): HeadFlags 07 = bAnswer | bRequestID |
    // bChallengeNumber, RequestID echoed, the challenge, Type 1 None, nothing else
    let q = query(Some(REQUEST_CHALLENGE), None, EVERYTHING);
    let (o, out) = h.send(&q);
    assert_eq!(o, Outcome::OgpDraft(DraftOutcome::Challenge));
    assert_eq!(
        out,
        [hex(&format!("ffffffff 4f475000 07 44332211 {} 01", le(c)))]
    );
    assert_eq!(ogp_draft::decode(&out[0]).unwrap().message, Message::None);
    // no challenge at all, a wrong one, 0: the same
    for q in [
        query(None, None, EVERYTHING),
        query(Some(c ^ 1), None, EVERYTHING),
        query(Some(0), None, EVERYTHING),
        query(Some(REQUEST_CHALLENGE), Some(500), ""),
    ] {
        let (o, out) = h.send(&q);
        assert_eq!(o, Outcome::OgpDraft(DraftOutcome::Challenge));
        assert_eq!(out[0].len(), 18, "{}", to_hex(&q));
        assert_eq!(
            ogp_draft::decode(&out[0]).unwrap().header.challenge,
            Some(c)
        );
    }
    // the smallest probe (no optional field, Type 2, no body) gets 14 bytes
    let (_, out) = h.send(&hex("ffffffff 4f475000 00 02"));
    assert_eq!(out, [hex(&format!("ffffffff 4f475000 05 {} 01", le(c)))]);
    // a Type 1 None query is answered the same way
    let (o, out) = h.send(&hex("ffffffff 4f475000 02 01000000 01"));
    assert_eq!(o, Outcome::OgpDraft(DraftOutcome::None));
    assert_eq!(
        out,
        [hex(&format!("ffffffff 4f475000 07 01000000 {} 01", le(c)))]
    );
    // the challenge is the draft's own: bound to the IP (any port), not v1.01's
    let (_, out) = h.send_from(addr("192.0.2.10:1"), &hex("ffffffff 4f475000 00 01"));
    assert_eq!(
        ogp_draft::decode(&out[0]).unwrap().header.challenge,
        Some(c)
    );
    assert_ne!(h.r.ogp_challenge(h.t0, addr(SRC).ip()), c);
}

/// The status of the byte-exact answer: two players with every field the draft has (the
/// second one lacking some), and fields the draft cannot carry.
fn table_status() -> Status {
    let mut alice = Player::default();
    alice.slot = Some(3);
    alice.name = Some("Alice".into());
    alice.frags = Some(12);
    alice.score = Some(99);
    alice.id = Some(0x0102_0304);
    alice.global_id = Some("123456".into());
    alice.ping = Some(50);
    alice.loss = Some(1);
    alice.team = Some(1);
    alice.model = Some("gign".into());
    alice.extra = BTreeMap::from([(Text::from(RATE_KEY), Text::from("20000"))]);
    alice.alive = Some(true);
    alice.time = Some(100);
    let mut bob = Player::default();
    bob.slot = Some(7);
    bob.name = Some("Bob".into());
    bob.score = Some(-3);
    bob.id = Some(9);
    bob.global_id = Some("STEAM_0:1:2".into());
    bob.ping = Some(999);
    bob.team = Some(-2);
    let mut status = Status::default();
    status.host_name = Some("Draft Server".into());
    status.uptime_seconds = Some(86_400);
    status.slot_max = Some(16);
    status.mod_info = Some({
        let mut mod_info = ModInfo::default();
        mod_info.name = "Counter-Strike".into();
        mod_info.identifier = Some("cstrike".into());
        mod_info
    });
    status.map = Some({
        let mut map = MapInfo::default();
        map.name = "Dust".into();
        map.file_name = Some("de_dust".into());
        map
    });
    status.game_name = Some("Half-Life".into());
    status.teams = Some(vec![]);
    status.rules = Some([("mp_timelimit", "20")].into_iter().collect());
    status.players = Some(vec![alice, bob]);
    status
}

/// The answer body to EVERYTHING from `table_status()`, by the tables.
const TABLE_BODY: &str = "
    3f
    ff07 02
    03 416c69636500 0c00 04030201 40e20100 3200 0100 01 6769676e00 204e 00
    07 426f6200     fdff 09000000 00000000 e703 0000 ff 00         0000 ff
    447261667420536572766572 00
    80510100
    10
    63737472696b65 00
    64655f64757374 00";

#[test]
fn answer_bytes_from_the_tables() {
    // AnswerFields 3f (ours, D8: bPlayerList, bHostname, bRunTime, bMaxPlayers, bModDir,
    // bMap in the order of l.57–62); PLAYERLIST l.63–77: field mask 0x07ff (bits 0–10),
    // PlayerCount 2; PLAYERLISTENTRY l.78–92: Slot u8, Name, Frags i16, ID u32, WONID
    // u32, Ping u16, Loss u16, Team u8, Model, Rate u16, Dead u8. Alice: frags 12 (not
    // her score), WONID 123456, rate 20000, alive. Bob: no frags so his score −3, a
    // non-numeric global id (WONID 0), no loss, model or rate (zero, empty), spectator
    // (Team 0xFF, Dead 0xFF). Then Hostname, RunTime 86400, MaxPlayers 16, ModDir (the
    // mod's identifier) and Map (the map's file name).
    let mut h = Harness::new(table_status());
    let c = h.challenge();
    let (o, out) = h.send(&query(Some(c), None, EVERYTHING));
    assert_eq!(
        o,
        Outcome::OgpDraft(DraftOutcome::Answer {
            datagrams: 1,
            dropped_sections: false
        })
    );
    let wire = hex(&format!(
        "ffffffff 4f475000 07 44332211 {} 02 {TABLE_BODY}",
        le(c)
    ));
    assert_eq!(to_hex(&out[0]), to_hex(&wire));
    let mut body = Vec::new();
    encode_answer_body(&table_status(), &DefaultQuery::everything(), &mut body);
    assert_eq!(body, hex(TABLE_BODY));

    // and back
    let a = answer_of(&wire);
    assert_eq!(a.fields, answer_fields::ALL);
    assert_eq!(a.player_fields, Some(0x07ff));
    assert!(a.warnings.is_empty() && a.trailing.is_empty());
    let rate = |r: &str| BTreeMap::from([(Text::from(RATE_KEY), Text::from(r))]);
    let mut expected = Status::default();
    expected.host_name = Some("Draft Server".into());
    expected.uptime_seconds = Some(86_400);
    expected.slot_max = Some(16);
    expected.mod_info = Some(ModInfo::named("cstrike"));
    expected.map = Some(MapInfo::named("de_dust"));
    expected.players = Some(vec![
        {
            let mut player = Player::default();
            player.slot = Some(3);
            player.name = Some("Alice".into());
            player.frags = Some(12);
            player.id = Some(0x0102_0304);
            player.global_id = Some("123456".into());
            player.ping = Some(50);
            player.loss = Some(1);
            player.team = Some(1);
            player.model = Some("gign".into());
            player.extra = rate("20000");
            player.alive = Some(true);
            player.dead = Some(false);
            player
        },
        {
            let mut player = Player::default();
            player.slot = Some(7);
            player.name = Some("Bob".into());
            player.frags = Some(-3);
            player.id = Some(9);
            player.global_id = Some("0".into());
            player.ping = Some(999);
            player.loss = Some(0);
            player.team = Some(-2);
            player.model = Some("".into());
            player.extra = rate("0");
            player.alive = Some(false);
            player.dead = Some(false);
            player
        },
    ]);
    assert_eq!(a.status, expected);
    // what was decoded encodes to the same body
    let mut again = Vec::new();
    encode_answer_body(&a.status, &DefaultQuery::everything(), &mut again);
    assert_eq!(again, hex(TABLE_BODY));
}

#[test]
fn answers_carry_what_was_asked_and_what_the_status_has() {
    let mut h = Harness::new(table_status());
    let c = h.challenge();
    let body_of = |h: &mut Harness, q: &str| {
        let (_, out) = h.send(&query(Some(c), None, q));
        to_hex(&out[0][18..])
    };
    // names and teams only: mask 0x0082 (bName 0.1, bTeam 1.0)
    assert_eq!(
        body_of(&mut h, "08 8201"),
        "01820002416c6963650001426f6200ff"
    );
    // bInfo with bNoStaticData: RunTime and Map only (D13)
    assert_eq!(body_of(&mut h, "03"), "248051010064655f6475737400");
    // bTeamList, bLimits, bMods, bRules: no data defined (D11)
    assert_eq!(body_of(&mut h, "74"), "00");
    // a status without players has no PLAYERLIST; an empty list is sent with count 0
    h.status.players = None;
    assert_eq!(body_of(&mut h, "08 ff0f"), "00");
    h.status.players = Some(vec![]);
    assert_eq!(body_of(&mut h, "08 ff0f"), "01000000");
    // unknown Requests and PlayerFields bits are ignored
    h.status = table_status();
    assert_eq!(body_of(&mut h, "8a01 ff7f"), body_of(&mut h, "0a ff0f"));
}

#[test]
fn banned_sources_get_type_0_or_silence() {
    let banned: std::net::IpAddr = "192.0.2.66".parse().unwrap();
    let silenced: std::net::IpAddr = "192.0.2.67".parse().unwrap();
    let mut config = ResponderConfig::default();
    config.ban = Some(Arc::new(move |ip| {
        if ip == banned {
            BanAction::Reject
        } else if ip == silenced {
            BanAction::Ignore
        } else {
            BanAction::Allow
        }
    }));
    let mut h = Harness::with_config(demo_state(), config);
    let q = query(Some(REQUEST_CHALLENGE), None, EVERYTHING);
    // l.29: Type 0 Banned; RequestID echoed, no challenge, no body
    let (o, out) = h.send_from(addr("192.0.2.66:5"), &q);
    assert_eq!(o, Outcome::OgpDraft(DraftOutcome::Banned));
    assert_eq!(out, [hex("ffffffff 4f475000 03 44332211 00")]);
    assert_eq!(ogp_draft::decode(&out[0]).unwrap().message, Message::Banned);
    let (o, out) = h.send_from(addr("192.0.2.67:5"), &q);
    assert_eq!(o, Outcome::Banned);
    assert!(out.is_empty());
}

#[test]
fn split_answers_follow_max_bytes_per_packet() {
    let status = many_players(200, 24);
    let mut h = Harness::new(status.clone());
    let c = h.challenge();
    let mut full = Vec::new();
    encode_answer_body(&status, &DefaultQuery::everything(), &mut full);
    for (asked, used) in [(500i16, 500usize), (1400, 1400), (1500, 1500), (1501, 1500)] {
        let (o, out) = h.send(&query(Some(c), Some(asked), EVERYTHING));
        let n = out.len();
        assert!(n > 1, "{o:?}");
        assert!(out.iter().all(|p| p.len() <= used), "{asked}");
        assert_eq!(
            o,
            Outcome::OgpDraft(DraftOutcome::Answer {
                datagrams: n,
                dropped_sections: false
            })
        );
        // l.21–28: packet 0 has HeadFlags 0f and the challenge, the others 0b; every
        // packet has the RequestID, SplitPacketCount (total), SplitPacketNo, Type 2
        let count = format!("{n:02x}");
        let mut body = Vec::new();
        for (k, p) in out.iter().enumerate() {
            let head = if k == 0 {
                format!("ffffffff4f4750000f44332211{}{count}0002", le(c))
            } else {
                format!("ffffffff4f4750000b44332211{count}{k:02x}02")
            };
            assert!(
                to_hex(p).starts_with(&head),
                "packet {k}: {}",
                to_hex(&p[..20])
            );
            body.extend_from_slice(&p[head.len() / 2..]);
        }
        assert_eq!(body, full);
    }
    // a small answer stays unsplit even when the query allows splitting
    h.status = demo_state();
    let (_, out) = h.send(&query(Some(c), Some(500), "02"));
    assert_eq!(out.len(), 1);
    assert!(ogp_draft::decode(&out[0]).unwrap().header.split.is_none());
    // without a RequestID in the query the server chooses one for the split packets
    h.status = status;
    let mut q = PREFIX.to_vec();
    q.push(0x0c);
    q.extend_from_slice(&c.to_le_bytes());
    q.extend_from_slice(&500i16.to_le_bytes());
    q.push(2);
    q.extend_from_slice(&hex(EVERYTHING));
    let (_, out) = h.send(&q);
    let ids: Vec<_> = out
        .iter()
        .map(|p| ogp_draft::decode(p).unwrap().header.request_id)
        .collect();
    assert!(
        ids.len() > 1 && ids.iter().all(|id| *id == Some(1)),
        "{ids:?}"
    );
}

#[test]
fn max_bytes_per_packet_below_500_is_ignored() {
    let mut h = Harness::new(demo_state());
    let c = h.challenge();
    for m in [499i16, 0, -1, i16::MIN] {
        assert_eq!(
            h.ignored(&query(Some(c), Some(m), EVERYTHING)),
            "MaxBytesPerPacket below 500"
        );
    }
    let (_, out) = h.send(&query(Some(c), Some(i16::MAX), EVERYTHING));
    assert_eq!(out.len(), 1);
}

#[test]
fn oversize_answers_drop_whole_sections() {
    let mut h = Harness::new(many_players(255, 60));
    let c = h.challenge();
    let (o, out) = h.send(&query(Some(c), None, EVERYTHING));
    assert_eq!(
        o,
        Outcome::OgpDraft(DraftOutcome::Answer {
            datagrams: 1,
            dropped_sections: true
        })
    );
    assert!(out[0].len() <= 8192);
    let a = answer_of(&out[0]);
    assert_eq!(a.status.players, None);
    assert_eq!(a.status.host_name, h.status.host_name);
    // split answers have a larger budget: the list fits
    let (_, out) = h.send(&query(Some(c), Some(1500), EVERYTHING));
    assert!(out.len() > 5);
    // more than 255 players: the first 255 are listed (PlayerCount is a UINT8)
    h.status = many_players(300, 6);
    let (_, out) = h.send(&query(Some(c), None, "08 0200"));
    let a = answer_of(&out[0]);
    let names = a.status.players.unwrap();
    assert_eq!(names.len(), 255);
    assert_eq!(names[254].name.as_deref(), Some("00254-"));
}

#[test]
fn abuse_rules() {
    let mut h = Harness::new(demo_state());
    let c = h.challenge();
    // over 500 bytes, even with a valid challenge
    let mut big = query(Some(c), None, EVERYTHING);
    big.resize(501, 0);
    assert_eq!(h.ignored(&big), "request larger than the limit");
    big.truncate(500);
    assert_eq!(
        h.send(&big).1.len(),
        1,
        "500 bytes are fine (trailing bytes ignored)"
    );
    // bAnswer set
    let mut a = query(Some(c), None, EVERYTHING);
    a[8] |= 1;
    assert_eq!(h.ignored(&a), "bAnswer set");
    // Rcon, Type 0 as a query, an undefined Type
    for (t, why) in [
        (3u8, "Rcon is not implemented"),
        (0, "Type other than None or Default query v1"),
        (0x7f, "Type other than None or Default query v1"),
    ] {
        let mut q = query(Some(c), None, "");
        *q.last_mut().unwrap() = t;
        assert_eq!(h.ignored(&q), why);
    }
    // malformed headers: an unknown HeadFlags bit, truncated fields
    for d in [
        "ffffffff 4f475000 10 02",
        "ffffffff 4f475000 02 443322",
        "ffffffff 4f475000 06 44332211 0102",
        "ffffffff 4f475000 00",
        "ffffffff 4f475000",
    ] {
        assert_eq!(h.ignored(&hex(d)), "malformed header", "{d}");
    }
    // with a valid challenge: an empty or truncated body
    assert_eq!(
        h.ignored(&query(Some(c), None, "")),
        "Default Query without a body"
    );
    assert_eq!(
        h.ignored(&query(Some(c), None, "08")),
        "malformed query body"
    );
    assert_eq!(
        h.ignored(&query(Some(c), None, "88")),
        "malformed query body"
    );
    // not OGP at all
    let (o, out) = h.send(b"\xff\xff\xff\xffTSource Engine Query\0");
    assert_eq!((o, out.len()), (Outcome::Unknown, 0));
    // v1.01 datagrams reaching the draft listener: read as answers or as unknown flags
    for d in [
        "ffffffff4f475000 03 01 00",
        "ffffffff4f475000 07 01 12 462613b9 bf018f9f0f1f3f3fbfbfbf010f",
        "ffffffff4f475000 07 01 02 462613b9 bf018f9f0f1f3f3fbfbfbf010f",
        "ffffffff4f475000 07 01 12 00000000",
        "ffffffff4f475000 09 01 1a 462613b9 f401 3f",
    ] {
        let why = h.ignored(&hex(d));
        assert!(
            why == "bAnswer set" || why == "malformed header",
            "{d}: {why}"
        );
    }
}

#[test]
fn require_challenge_off_answers_at_once() {
    let mut config = ResponderConfig::default();
    config.ogp_draft.require_challenge = false;
    let mut h = Harness::with_config(table_status(), config);
    let c = h.challenge();
    let (_, out) = h.send(&query(None, None, EVERYTHING));
    assert_eq!(
        out[0][8], 0x03,
        "no challenge field when the query had none"
    );
    // asking for a challenge still gets one, with the data
    let (_, out) = h.send(&query(Some(REQUEST_CHALLENGE), None, EVERYTHING));
    let p = ogp_draft::decode(&out[0]).unwrap();
    assert_eq!(p.header.challenge, Some(c));
    assert!(matches!(p.message, Message::Answer(_)));
}

// =======================================================================================
// Malformed answers

fn table_answer() -> Vec<u8> {
    hex(&format!(
        "ffffffff 4f475000 07 44332211 01020304 02 {TABLE_BODY}"
    ))
}

#[test]
fn every_truncation_of_an_answer_is_an_error() {
    let wire = table_answer();
    for n in 0..wire.len() {
        let e = ogp_draft::decode(&wire[..n]).expect_err("truncated");
        assert!(e.offset <= n, "{n}: {e}");
    }
    assert!(ogp_draft::decode(&wire).is_ok());
}

#[test]
fn lying_counts_and_unknown_bits_are_errors() {
    // offsets count from the first byte of the body
    let dec = |body: &str| decode_answer_body(&hex(body)).unwrap_err();
    // PlayerCount 200 with entries of at least 2 bytes (Slot, Dead) in 4 bytes
    let e = dec("01 0104 c8 0100 0200");
    assert_eq!((e.field, e.offset), ("PlayerCount", 3));
    assert_eq!(
        e.to_string(),
        "PlayerCount at byte 3: count promises more entries than the data holds"
    );
    // PlayerCount 3, two entries
    let e = dec("01 0100 03 01 02");
    assert_eq!((e.field, e.offset), ("PlayerCount", 3));
    let e = dec("01 0200 02 4100 42");
    assert_eq!((e.field, e.offset), ("Name", 6));
    // PLAYERLIST mask bit 11, AnswerFields bit 0.6 and a second byte
    assert_eq!(dec("01 0008 00").field, "PlayerListFields");
    assert_eq!(dec("40").field, "AnswerFields");
    assert_eq!(dec("8001").field, "AnswerFields");
    // an undefined Dead value is a warning, not an error
    let b = hex("01 0004 01 07");
    let a = decode_answer_body(&b).unwrap();
    assert_eq!(a.warnings.len(), 1);
    assert_eq!(a.warnings[0].field, "Dead");
    // undefined Types in answers are kept as Other
    let p = ogp_draft::decode(&hex("ffffffff 4f475000 01 09 aabb")).unwrap();
    assert_eq!(
        p.message,
        Message::Other {
            body: vec![0xaa, 0xbb]
        }
    );
}

#[test]
fn invalid_utf8_is_lossy_with_a_warning() {
    let a = answer_of(&hex("ffffffff 4f475000 01 02 02 41ff4200"));
    assert_eq!(a.status.host_name.as_deref(), Some("A\u{fffd}B"));
    assert_eq!(a.warnings.len(), 1);
}

// =======================================================================================
// Client ↔ responder

/// Runs one query of `status` through a client machine and a draft responder in memory;
/// `order` rearranges each batch of answer datagrams before the client sees them.
fn query_through(
    status: &Status,
    config: DraftConfig,
    opts: QueryOptions,
    request_id: u32,
    order: impl Fn(&mut Vec<Vec<u8>>),
) -> (Option<Result<Answer<Details>, QueryError>>, Vec<usize>) {
    let t0 = Instant::now();
    let config = {
        let mut cfg = ResponderConfig::default();
        cfg.listener = Listener::OgpDraft;
        cfg.ogp_draft = config;
        cfg
    };
    let mut r = Responder::new(config, SECRET, t0);
    let mut m = QueryMachine::new(opts, Timing::default(), request_id, t0);
    let mut out = Transmits::default();
    let mut sizes = Vec::new();
    for _ in 0..4 {
        let Some(q) = m.poll_transmit(t0) else { break };
        r.handle(t0, addr(SRC), &q, status, &mut out);
        let mut batch: Vec<Vec<u8>> = out.iter().map(<[u8]>::to_vec).collect();
        sizes.extend(batch.iter().map(Vec::len));
        order(&mut batch);
        for d in &batch {
            m.handle_datagram(t0 + Duration::from_millis(1), d);
        }
    }
    (m.take_result(), sizes)
}

#[test]
fn client_gets_the_table_status() {
    let (r, sizes) = query_through(
        &table_status(),
        DraftConfig::default(),
        QueryOptions::default(),
        7,
        |_| {},
    );
    let o = r.unwrap().unwrap();
    assert_eq!(sizes[0], 18, "first the challenge");
    assert_eq!(o.status, answer_of(&table_answer()).status);
    assert_eq!(o.datagrams, 1);
    // a banned client gets a rejection with error 0 (banned)
    let t0 = Instant::now();
    let mut config = ResponderConfig::default();
    config.listener = Listener::OgpDraft;
    config.ban = Some(Arc::new(|_| BanAction::Reject));
    let mut r = Responder::new(config, SECRET, t0);
    let mut m = QueryMachine::new(QueryOptions::default(), Timing::default(), 7, t0);
    let mut out = Transmits::default();
    let q = m.poll_transmit(t0).unwrap();
    r.handle(t0, addr(SRC), &q, &table_status(), &mut out);
    m.handle_datagram(t0, out.iter().next().unwrap());
    assert_eq!(
        m.take_result(),
        Some(Err(QueryError::Rejected {
            protocol: Protocol::OgpDraft,
            reason: Rejection::Error {
                code: u32::from(ErrorValue::BANNED.0),
                meaning: "banned".into()
            }
        }))
    );
}

/// A string the draft carries exactly: UTF-8 without NUL.
fn wire_string() -> BoxedStrategy<Text> {
    let c = prop_oneof![
        3 => (0x20u8..0x7f).prop_map(char::from),
        1 => any::<char>().prop_map(|c| if c == '\0' { '0' } else { c }),
    ];
    vec(c, 0..10).prop_map(|v| v.into_iter().collect()).boxed()
}

fn maybe<T: std::fmt::Debug + Clone + 'static>(
    on: bool,
    s: impl Strategy<Value = T> + 'static,
) -> BoxedStrategy<Option<T>> {
    if on {
        s.prop_map(Some).boxed()
    } else {
        Just(None).boxed()
    }
}

/// A player with the fields `m` selects (the same for the whole list, as the PLAYERLIST
/// has one mask), each with a value the draft carries exactly.
fn draft_player(m: [bool; 11]) -> BoxedStrategy<Player> {
    let team = prop_oneof![0i32..=253, Just(-1), Just(-2)];
    let dead = prop_oneof![
        Just((Some(true), Some(false))),
        Just((Some(false), Some(true))),
        Just((Some(false), Some(false))),
    ];
    (
        (
            maybe(m[0], 0u32..=255),
            maybe(m[1], wire_string()),
            maybe(m[2], any::<i16>()),
            maybe(m[3], any::<u32>()),
            maybe(m[4], any::<u32>()),
            maybe(m[5], any::<u16>()),
        ),
        (
            maybe(m[6], any::<u16>()),
            maybe(m[7], team),
            maybe(m[8], wire_string()),
            maybe(m[9], any::<u16>()),
            maybe(m[10], dead),
        ),
    )
        .prop_map(
            |((slot, name, frags, id, wonid, ping), (loss, team, model, rate, dead))| {
                let (mut alive, mut dead) = dead.unwrap_or((None, None));
                if team == Some(-2) && dead.is_some() {
                    // a spectator's Dead byte is 0xFF whatever the flags say
                    (alive, dead) = (Some(false), Some(false));
                }
                {
                    let mut player = Player::default();
                    player.slot = slot;
                    player.name = name;
                    player.frags = frags.map(i32::from);
                    player.id = id;
                    player.global_id = wonid.map(|w| w.to_string().into());
                    player.ping = ping.map(u32::from);
                    player.loss = loss.map(u32::from);
                    player.team = team;
                    player.model = model;
                    player.extra = rate
                        .map(|r| BTreeMap::from([(Text::from(RATE_KEY), r.to_string().into())]))
                        .unwrap_or_default();
                    player.alive = alive;
                    player.dead = dead;
                    player
                }
            },
        )
        .boxed()
}

/// A status made only of what the draft carries, exactly as a decoder returns it.
fn draft_status() -> BoxedStrategy<Status> {
    let players = any::<[bool; 11]>().prop_flat_map(|m| {
        prop_oneof![
            4 => vec(draft_player(m), 0..8),
            1 => vec(draft_player(m), 200..=255),
        ]
    });
    (
        proptest::option::of(wire_string()),
        proptest::option::of(any::<u32>()),
        proptest::option::of(0u32..=255),
        proptest::option::of(wire_string()),
        proptest::option::of(wire_string()),
        proptest::option::of(players),
    )
        .prop_map(|(host_name, uptime_seconds, slot_max, dir, map, players)| {
            let mut status = Status::default();
            status.host_name = host_name;
            status.uptime_seconds = uptime_seconds;
            status.slot_max = slot_max;
            status.mod_info = dir.map(ModInfo::named);
            status.map = map.map(MapInfo::named);
            status.players = players;
            status
        })
        .boxed()
}

/// Text that may look like a number: decimal (in and out of range), signed, or not.
fn numberish() -> BoxedStrategy<Text> {
    prop_oneof![
        any::<u16>().prop_map(|n| n.to_string().into()),
        any::<u32>().prop_map(|n| n.to_string().into()),
        any::<u64>().prop_map(|n| n.to_string().into()),
        any::<i32>().prop_map(|n| format!("{n:+}").into()),
        (0u32..100).prop_map(|n| format!("00{n}").into()),
        wire_string(),
    ]
    .boxed()
}

/// Any player: each field present or not on its own, values out of the draft's ranges.
fn any_player() -> BoxedStrategy<Player> {
    use proptest::option::of;
    (
        (
            of(any::<u32>()),
            of(wire_string()),
            of(any::<i32>()),
            of(any::<i32>()),
            of(any::<u32>()),
            of(numberish()),
            of(any::<u16>()),
        ),
        (
            of(any::<u16>()),
            of(prop_oneof![-3i32..=256, any::<i32>()]),
            of(wire_string()),
            of(numberish()),
            of(any::<bool>()),
            of(any::<bool>()),
            of(any::<u32>()),
        ),
    )
        .prop_map(
            |(
                (slot, name, frags, score, id, global_id, ping),
                (loss, team, model, rate, alive, dead, kills),
            )| {
                let mut extra = BTreeMap::new();
                if let Some(r) = rate {
                    extra.insert(Text::from(RATE_KEY), r);
                }
                {
                    let mut player = Player::default();
                    player.slot = slot;
                    player.name = name;
                    player.frags = frags;
                    player.score = score;
                    player.id = id;
                    player.global_id = global_id;
                    player.ping = ping.map(u32::from);
                    player.loss = loss.map(u32::from);
                    player.team = team;
                    player.model = model;
                    player.extra = extra;
                    player.alive = alive;
                    player.dead = dead;
                    player.kills = kills;
                    player
                }
            },
        )
        .boxed()
}

/// Any status: the draft's fields with any values, and fields it cannot carry.
fn any_status() -> BoxedStrategy<Status> {
    use proptest::option::of;
    let players = prop_oneof![
        4 => vec(any_player(), 0..8),
        1 => vec(any_player(), 250..300),
    ];
    let mod_info = (wire_string(), of(wire_string())).prop_map(|(name, identifier)| {
        let mut mod_info = ModInfo::default();
        mod_info.name = name;
        mod_info.identifier = identifier;
        mod_info
    });
    let map = (wire_string(), of(wire_string())).prop_map(|(name, file_name)| {
        let mut map = MapInfo::default();
        map.name = name;
        map.file_name = file_name;
        map
    });
    let folder = of(wire_string()).prop_map(|folder| {
        let mut a2s = ogp_proto::A2sInfo::default();
        a2s.folder = folder;
        a2s
    });
    (
        (of(wire_string()), of(any::<u32>()), of(any::<u32>())),
        (of(mod_info), of(folder), of(map), of(players)),
        (of(wire_string()), of(any::<u16>()), of(any::<u32>())),
    )
        .prop_map(
            |(
                (host_name, uptime_seconds, slot_max),
                (mod_info, a2s, map, players),
                (game_name, connect_port, player_count),
            )| {
                let mut status = Status::default();
                status.host_name = host_name;
                status.uptime_seconds = uptime_seconds;
                status.slot_max = slot_max;
                status.mod_info = mod_info;
                status.a2s = a2s;
                status.map = map;
                status.players = players;
                status.game_name = game_name;
                status.connect_port = connect_port;
                status.player_count = player_count;
                status
            },
        )
        .boxed()
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 256, ..ProptestConfig::default() })]

    /// A status the draft carries comes back unchanged through the client machine and
    /// the responder, unsplit or split (packets delivered rotated, reversed, duplicated),
    /// and every packet keeps to MaxBytesPerPacket.
    #[test]
    fn draft_statuses_round_trip_through_client_and_responder(
        status in draft_status(),
        max in proptest::option::of(500i16..=1500),
        request_id in any::<u32>(),
        rotate in any::<usize>(),
        reverse in any::<bool>(),
    ) {
        let mut config = DraftConfig::default();
        config.max_unsplit_bytes = 65_507;
        let mut opts = QueryOptions::default();
        opts.max_bytes_per_packet = max;
        let (r, sizes) = query_through(&status, config, opts, request_id, |b| {
            if b.len() > 1 {
                let n = b.len();
                b.rotate_left(rotate % n);
                if reverse {
                    b.reverse();
                }
                let first = b[0].clone();
                b.push(first);
            }
        });
        let o = r.expect("done").expect("answered");
        prop_assert_eq!(&o.status, &status);
        prop_assert!(o.warnings.is_empty());
        if let Some(m) = max {
            prop_assert!(sizes.iter().all(|&s| s <= m as usize), "{:?}", sizes);
        }
    }

    /// Any status (with fields the draft cannot carry, values out of its ranges, lists
    /// whose entries lack fields): what a client decodes encodes to the same bytes again.
    #[test]
    fn any_status_encodes_stably(
        status in any_status(),
        requests in 0u64..0x80,
        fields in 0u64..0x800,
    ) {
        let q = DefaultQuery {
            requests: ogp_proto::ogp::Bits(requests),
            player_fields: ogp_proto::ogp::Bits(fields),
        };
        let mut first = Vec::new();
        encode_answer_body(&status, &q, &mut first);
        let a = decode_answer_body(&first).expect("decodes");
        prop_assert!(a.trailing.is_empty());
        let mut second = Vec::new();
        encode_answer_body(&a.status, &q, &mut second);
        prop_assert_eq!(to_hex(&first), to_hex(&second));
    }

    /// No bytes make a decoder panic; errors point into the input.
    #[test]
    fn random_bytes_never_panic(
        tail in vec(any::<u8>(), 0..64),
        with_prefix in any::<bool>(),
    ) {
        let mut d = if with_prefix { PREFIX.to_vec() } else { Vec::new() };
        d.extend_from_slice(&tail);
        if let Err(e) = ogp_draft::decode(&d) {
            prop_assert!(e.offset <= d.len(), "{} for {}", e, to_hex(&d));
        }
        if let Err(e) = decode_answer_body(&tail) {
            prop_assert!(e.offset <= tail.len());
        }
        let mut m = QueryMachine::new(QueryOptions::default(), Timing::default(), 1, Instant::now());
        m.poll_transmit(Instant::now());
        m.handle_datagram(Instant::now(), &d);
        if let Ok(p) = ogp_draft::decode(&d) {
            if let (Some(s), Message::Fragment { body }) = (p.header.split, p.message) {
                // a fragment is one of at least two packets, never a whole answer
                prop_assert!(s.count >= 2 && s.count <= 127 && s.number < s.count);
                let mut r = Reassembler::<Header>::default();
                let pushed = r.push_part(p.header, p.header.request_id, s, &body);
                prop_assert_eq!(pushed, Ok(Pushed::Incomplete));
            }
        }
    }

    /// An unverified source never gets more than one datagram, more than 18 bytes, or
    /// more than 4 bytes more than it sent, whatever it sends; nothing panics.
    #[test]
    fn no_amplification_before_address_proof(
        flags in 0u8..0x10,
        extra_flag in proptest::option::of(0x10u8..=0xff),
        request_id in any::<u32>(),
        challenge in any::<u32>(),
        max in any::<i16>(),
        packet_type in prop_oneof![0u8..=3, any::<u8>()],
        body in vec(any::<u8>(), 0..40),
        big in any::<bool>(),
        cut in any::<usize>(),
    ) {
        let status = if big { many_players(255, 30) } else { table_status() };
        let mut h = Harness::new(status);
        let valid = h.challenge();
        prop_assume!(challenge != valid);
        let mut d = PREFIX.to_vec();
        d.push(extra_flag.unwrap_or(flags));
        if flags & 0x02 != 0 { d.extend_from_slice(&request_id.to_le_bytes()); }
        if flags & 0x04 != 0 { d.extend_from_slice(&challenge.to_le_bytes()); }
        if flags & 0x08 != 0 {
            if flags & 0x01 != 0 { d.extend_from_slice(&[2, 0]); }
            else { d.extend_from_slice(&max.to_le_bytes()); }
        }
        d.push(packet_type);
        d.extend_from_slice(&body);
        // sometimes cut short anywhere
        if cut % 4 == 0 {
            d.truncate(cut / 4 % (d.len() + 1));
        }
        let (o, out) = h.send(&d);
        let total: usize = out.iter().map(Vec::len).sum();
        prop_assert!(out.len() <= 1, "{:?}", o);
        prop_assert!(total <= 18 && total <= d.len() + 4, "{} B for {}: {:?}", total, to_hex(&d), o);
        let full = matches!(o, Outcome::OgpDraft(DraftOutcome::Answer { .. }));
        prop_assert!(!full, "a full answer to an unverified source: {:?}", o);
        for a in &out {
            prop_assert!(ogp_draft::decode(a).is_ok_and(|p| p.header.is_answer()));
        }
    }

    /// With a valid challenge, any body gets silence or an answer within the limits.
    #[test]
    fn verified_queries_get_bounded_answers(
        max in proptest::option::of(any::<i16>()),
        body in vec(any::<u8>(), 0..40),
    ) {
        let mut h = Harness::new(many_players(255, 30));
        let c = h.challenge();
        let mut q = query(Some(c), max, "");
        q.extend_from_slice(&body);
        let (o, out) = h.send(&q);
        let total: usize = out.iter().map(Vec::len).sum();
        prop_assert!(total <= 65_536, "{:?}", o);
        let limit = match max {
            Some(m) => usize::try_from(m.clamp(500, 1500)).unwrap(),
            None => 8192,
        };
        prop_assert!(out.iter().all(|p| p.len() <= limit), "{:?}", o);
    }
}
