//! The sans-IO responder, deterministically: `Responder::handle(now, src, datagram, …)`
//! with an explicit clock, so challenge rotation and rate limits are exact.
//!
//! * the exact query bytes of the real clients (PHP/mTxServ, the 2004 PHP client,
//!   pyogpclient, the Onset fork; `ogp-notes.md` §3) get the answers those clients need
//!   (§4, §5, §14);
//! * every error and every silence of `docs/ogp-wire-choices.md` X16;
//! * challenges: IP binding, any port, rotation with grace, IPv6 and IPv4-mapped sources;
//! * amplification: an unverified source never gets more than `max(20, query + 20)` bytes
//!   in one datagram (20 without the copy above 64 bytes), never a split answer;
//! * RequestID, bUTF8/Latin-1, split answers, the unsplit size cap, the rate limit with
//!   100 000 sources, the ban hook, and random datagrams (proptest).

use std::net::{IpAddr, Ipv4Addr, Ipv6Addr, SocketAddr};
use std::sync::Arc;
use std::time::{Duration, Instant};

use ogp_proto::guard::RateConfig;
use ogp_proto::internals::{from_hex, to_hex};
use ogp_proto::ogp::query::request;
use ogp_proto::ogp::responder::OgpOutcome;
use ogp_proto::ogp::{
    self, decode_answer_body, Answer, ErrorAnswer, ErrorValue, Header, Message, PacketType, Pushed,
    Reassembler, SplitInfo, PREFIX,
};
use ogp_proto::responder::{BanAction, Outcome, Responder, ResponderConfig, Transmits};
use ogp_proto::{Rules, Status};
use ogp_testkit::{demo_state, many_players, served};
use proptest::collection::vec;
use proptest::prelude::*;

// =======================================================================================
// Harness

const SECRET: [u8; 32] = [0x5a; 32];

/// The PHP client's full query body (`ogp-notes.md` §3.1).
const PHP_BODY: &str = "bf018f9f0f1f3f3fbfbfbf010f";
/// pyogpclient's query body: the PHP body without bLimitList.
const PYOGP_BODY: &str = "9f018f9f0f1f3f3fbfbfbf010f";
/// The Onset fork's body: non-minimal RequestFlags, three stray bytes.
const ONSET_BODY: &str = "81008f8f031f3f000000";

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
        Self {
            r: Responder::new(config, SECRET, t0),
            t0,
            out: Transmits::default(),
            status,
        }
    }

    /// Handles `d` from `src` at `t0 + at`; returns the outcome and the datagrams.
    fn send_at(&mut self, at: Duration, src: SocketAddr, d: &[u8]) -> (Outcome, Vec<Vec<u8>>) {
        let o = self
            .r
            .handle(self.t0 + at, src, d, &self.status, &mut self.out);
        (o, self.out.iter().map(<[u8]>::to_vec).collect())
    }

    fn send(&mut self, src: &str, d: &[u8]) -> (Outcome, Vec<Vec<u8>>) {
        self.send_at(Duration::ZERO, addr(src), d)
    }

    /// The one datagram answering `d`.
    fn one(&mut self, src: &str, d: &[u8]) -> Vec<u8> {
        let (o, out) = self.send(src, d);
        assert_eq!(
            out.len(),
            1,
            "one datagram expected for {}: {o:?}",
            to_hex(d)
        );
        out.into_iter().next().unwrap()
    }

    fn challenge_at(&mut self, at: Duration, ip: &str) -> u32 {
        self.r.ogp_challenge(self.t0 + at, ip.parse().unwrap())
    }
}

fn addr(s: &str) -> SocketAddr {
    s.parse().unwrap()
}

fn hex(s: &str) -> Vec<u8> {
    from_hex(&s.replace(' ', "")).unwrap_or_else(|| panic!("bad hex {s}"))
}

/// A query with HeadSize 7 (challenge only): prefix, `07 01 flags`, challenge, body.
fn query_with_challenge(flags: u8, challenge: u32, body: &str) -> Vec<u8> {
    let mut d = PREFIX.to_vec();
    d.extend_from_slice(&[0x07, 0x01, flags]);
    d.extend_from_slice(&challenge.to_le_bytes());
    d.extend_from_slice(&hex(body));
    d
}

fn php_query(challenge: u32) -> Vec<u8> {
    query_with_challenge(0x12, challenge, PHP_BODY)
}

const PHP_PROBE: &str = "ffffffff4f475000 03 01 00";
const PYOGP_PROBE: &str = "ffffffff4f475000 07 01 12 00000000";
/// The PHP probe with a packet type we do not answer (0x42): answered with Error 1 (the
/// header and the error value, one byte more than the probe). Unlike the challenge a
/// probe gets, that answer gives a spoofer a byte and is not a challenge, so it is
/// charged to the source's own budget of unproven answers.
const BAD_TYPE_PROBE: &str = "ffffffff4f475000 03 42 00";

fn decode_answer(d: &[u8]) -> Answer {
    match ogp::decode(d)
        .unwrap_or_else(|e| panic!("{e}: {}", to_hex(d)))
        .message
    {
        Message::Answer(a) => *a,
        other => panic!("not an answer: {other:?} ({})", to_hex(d)),
    }
}

fn decode_error(d: &[u8]) -> (Header, ErrorAnswer) {
    let p = ogp::decode(d).unwrap_or_else(|e| panic!("{e}: {}", to_hex(d)));
    match p.message {
        Message::Error(e) => (p.header, e),
        other => panic!("not an error: {other:?} ({})", to_hex(d)),
    }
}

/// The challenge in an answer header (bytes 11..15 after `HS Type Flags` with one flags
/// byte), read the way the PHP client reads it.
fn php_challenge(d: &[u8]) -> u32 {
    u32::from_le_bytes(d[11..15].try_into().unwrap())
}

/// Checks an Error 3 to a challenge-less or wrong-challenge query and returns its
/// challenge: header flags exactly `flags`, a challenge that is neither sentinel, body
/// `03` + a clean copy of the query with the challenge.
fn check_error3(d: &[u8], flags: u8) -> u32 {
    assert_eq!(d[..8], PREFIX);
    assert_eq!(d[9], 0xff, "Type FF");
    assert_eq!(d[10], flags, "answer HeadFlags");
    let (h, e) = decode_error(d);
    assert_eq!(e.value, ErrorValue::INVALID_CHALLENGE);
    let c = h
        .challenge
        .expect("Error 3 carries the challenge in its header");
    assert_eq!(c, php_challenge(d), "PHP reads it at bytes 11..15");
    assert!(c != 0 && c != u32::MAX, "sentinel challenge {c:#x}");
    let copy = e.resend_copy().expect("Error 3 carries a resendable copy");
    let cp = ogp::decode(copy).unwrap();
    assert!(!cp.header.is_answer());
    assert_eq!(cp.header.packet_type, PacketType::DEFAULT_QUERY);
    assert_eq!(
        cp.header.challenge,
        Some(c),
        "the copy carries the new challenge"
    );
    // clean: exact HeadSize and minimal flags, so re-encoding the header gives its bytes
    let mut again = Vec::new();
    cp.header.encode(&mut again);
    assert_eq!(copy[..again.len()], again[..], "copy header is not minimal");
    assert_eq!(cp.skipped_header_bytes, 0);
    c
}

// =======================================================================================
// The real clients, byte for byte

#[test]
fn php_client_probe_then_query_from_another_port() {
    let mut h = Harness::new(demo_state());
    // probe from port A
    let e3 = h.one("203.0.113.5:40001", &hex(PHP_PROBE));
    let c = check_error3(&e3, 0x03);
    assert_eq!(c, h.challenge_at(Duration::ZERO, "203.0.113.5"));
    // exact bytes: header 07 FF 03 cc, 03, copy 07 01 02 cc (31 bytes, the SDK sends 32)
    let cc = to_hex(&c.to_le_bytes());
    assert_eq!(
        to_hex(&e3),
        format!("ffffffff4f47500007ff03{cc}03ffffffff4f475000070102{cc}")
    );
    assert_eq!(e3.len(), 31);
    let (_, e) = decode_error(&e3);
    assert_eq!(
        ogp::decode(e.resend_copy().unwrap()).unwrap().message,
        Message::Probe
    );

    // the full query from port B of the same IP
    let q = php_query(c);
    assert_eq!(q.len(), 28);
    let (o, out) = h.send("203.0.113.5:40002", &q);
    assert_eq!(
        o,
        Outcome::Ogp(OgpOutcome::Answer {
            datagrams: 1,
            dropped_sections: false
        })
    );
    let d = &out[0];
    assert_eq!(
        d[8], 0x07,
        "exact HeadSize (the PHP client parses sequentially)"
    );
    assert_eq!(d[9], 0x01, "Type 1");
    assert_eq!(d[10], 0x13, "bAnswer | bChallengeNumber | bUTF8");
    assert_eq!(php_challenge(d), c, "the current challenge is echoed");
    assert!(d.len() <= 8192);
    let a = decode_answer(d);
    assert_eq!(
        a.request_flags,
        request::ALL_LISTS,
        "bColoredNames is cleared"
    );
    assert!(a.warnings.is_empty(), "{:?}", a.warnings);
    assert_eq!(a.status, served(&h.status, request::ALL_LISTS));
    // UTF-8 bytes of the host name are on the wire as they are
    let name = "Demo Arena #1 – Ünïcödé ✓\0".as_bytes();
    assert!(d.windows(name.len()).any(|w| w == name));
}

#[test]
fn php_2004_client_gets_latin1() {
    let mut h = Harness::new(demo_state());
    let e3 = h.one("203.0.113.6:1000", &hex(PHP_PROBE));
    let c = check_error3(&e3, 0x03);
    // the same query with HeadFlags 02 (no bUTF8)
    let q = query_with_challenge(0x02, c, PHP_BODY);
    let d = h.one("203.0.113.6:1001", &q);
    assert_eq!((d[8], d[9], d[10]), (0x07, 0x01, 0x03), "flags 03: Latin-1");
    assert_eq!(php_challenge(&d), c);
    // "Demo Arena #1 – Ünïcödé ✓": one byte per code point ≤ U+00FF, '?' for the others
    let latin1 = b"Demo Arena #1 ? \xdcn\xefc\xf6d\xe9 ?\x00";
    assert!(
        d.windows(latin1.len()).any(|w| w == latin1),
        "Latin-1 host name not found in {}",
        to_hex(&d)
    );
    assert!(
        !d.windows(2).any(|w| w == [0xc3, 0x9c]),
        "no UTF-8 'Ü' in a Latin-1 answer"
    );
    let a = decode_answer(&d);
    let mut want = served(&h.status, request::ALL_LISTS);
    want.host_name = Some("Demo Arena #1 ? Ünïcödé ?".into());
    assert_eq!(a.status, want);
}

#[test]
fn pyogpclient_takes_the_challenge_from_the_end_of_the_body() {
    let mut h = Harness::new(demo_state());
    let e3 = h.one("198.51.100.20:5000", &hex(PYOGP_PROBE));
    let c = check_error3(&e3, 0x13);
    assert_eq!(e3.len(), 31);
    // pyogpclient: the challenge is the last 4 bytes of the body
    let last4 = u32::from_le_bytes(e3[e3.len() - 4..].try_into().unwrap());
    assert_eq!(last4, c);
    let (_, e) = decode_error(&e3);
    let cp = ogp::decode(e.resend_copy().unwrap()).unwrap();
    assert_eq!(cp.message, Message::Probe);
    assert!(cp.header.utf8());

    let q = query_with_challenge(0x12, c, PYOGP_BODY);
    assert_eq!(q.len(), 28);
    let d = h.one("198.51.100.20:5001", &q);
    assert_eq!((d[9], d[10]), (0x01, 0x13));
    let a = decode_answer(&d);
    let sections = request::ALL_LISTS.without(request::LIMIT_LIST);
    assert_eq!(a.request_flags, sections);
    assert_eq!(a.status, served(&h.status, sections));
    assert_eq!(a.status.limits, None);
}

#[test]
fn onset_fork_query_with_non_minimal_flags_and_stray_bytes() {
    let mut h = Harness::new(demo_state());
    let c = check_error3(&h.one("192.0.2.44:7000", &hex(PHP_PROBE)), 0x03);
    let q = query_with_challenge(0x12, c, ONSET_BODY);
    assert_eq!(q.len(), 25);
    let d = h.one("192.0.2.44:7001", &q);
    assert_eq!((d[9], d[10]), (0x01, 0x13));
    let a = decode_answer(&d);
    assert_eq!(a.request_flags, request::SERVER_INFO);
    assert!(a.warnings.is_empty(), "{:?}", a.warnings);
    // 8F 8F 03: GameName, ServerFlags, HostName, ConnectPort, Mod, GameType, GameMode,
    // Map, PlayerCount, SlotMax; no NextMap, BotCount, ReservedSlots
    let n = served(&h.status, request::ALL_LISTS);
    let mut want = Status::default();
    want.game_id = n.game_id;
    want.game_name = n.game_name.clone();
    want.host_name = n.host_name.clone();
    want.connect_port = n.connect_port;
    want.server_type = n.server_type;
    want.os = n.os;
    want.password = n.password;
    want.proxy = n.proxy;
    want.mod_info = n.mod_info.clone();
    want.game_type = n.game_type.clone();
    want.game_mode = n.game_mode.clone();
    want.map = n.map.clone();
    want.player_count = n.player_count;
    want.slot_max = n.slot_max;
    assert_eq!(a.status, want);
}

// =======================================================================================
// Errors and silence

#[test]
fn unknown_type_gets_error_1() {
    let mut h = Harness::new(demo_state());
    let (o, out) = h.send("192.0.2.1:1", &hex("ffffffff4f475000 03 05 00"));
    assert_eq!(o, Outcome::Ogp(OgpOutcome::Error(ErrorValue::INVALID_TYPE)));
    assert_eq!(to_hex(&out[0]), "ffffffff4f47500003ff0101");
    // Rcon (Type 2) is not implemented either; with a challenge and a RequestID, both are
    // echoed (the current challenge)
    let c = h.challenge_at(Duration::ZERO, "192.0.2.1");
    let mut q = hex("ffffffff4f475000 0b 02 06");
    q.extend_from_slice(&0x1234_5678u32.to_le_bytes());
    q.extend_from_slice(&0x0a0b_0c0du32.to_le_bytes());
    let d = h.one("192.0.2.1:2", &q);
    let (hd, e) = decode_error(&d);
    assert_eq!(e.value, ErrorValue::INVALID_TYPE);
    assert_eq!(hd.challenge, Some(c));
    assert_eq!(hd.request_id, Some(0x0a0b_0c0d));
    assert!(e.data.is_empty());
}

/// A query with bChallengeNumber and bSplit: `09 01 1a cc mm mm` + body.
fn split_query(challenge: u32, max_bytes: u16, body: &str) -> Vec<u8> {
    let mut d = PREFIX.to_vec();
    d.extend_from_slice(&[0x09, 0x01, 0x1a]);
    d.extend_from_slice(&challenge.to_le_bytes());
    d.extend_from_slice(&max_bytes.to_le_bytes());
    d.extend_from_slice(&hex(body));
    d
}

/// A query with challenge, RequestID and bSplit: `0d 01 1e cc rr mm` + body.
fn split_query_id(challenge: u32, id: u32, max_bytes: u16, body: &str) -> Vec<u8> {
    let mut d = PREFIX.to_vec();
    d.extend_from_slice(&[0x0d, 0x01, 0x1e]);
    d.extend_from_slice(&challenge.to_le_bytes());
    d.extend_from_slice(&id.to_le_bytes());
    d.extend_from_slice(&max_bytes.to_le_bytes());
    d.extend_from_slice(&hex(body));
    d
}

#[test]
fn max_bytes_per_packet_499_is_error_2_and_0_is_unsplit() {
    let mut h = Harness::new(demo_state());
    let ip = "192.0.2.2";
    let c = h.challenge_at(Duration::ZERO, ip);
    for m in [1u16, 250, 499] {
        let d = h.one("192.0.2.2:9", &split_query(c, m, PHP_BODY));
        // 07 FF 13 cc 02: the challenge is the real current one, never filler
        assert_eq!(
            to_hex(&d),
            format!("ffffffff4f47500007ff13{}02", to_hex(&c.to_le_bytes())),
            "MaxBytesPerPacket {m}"
        );
    }
    // without a valid challenge the value is checked first
    let (o, _) = h.send("192.0.2.3:9", &split_query(1, 499, PHP_BODY));
    assert_eq!(
        o,
        Outcome::Ogp(OgpOutcome::Error(ErrorValue::INVALID_VALUE))
    );

    // 0: "no OGP splitting": a normal unsplit answer (our choice, A7)
    let (o, out) = h.send("192.0.2.2:10", &split_query(c, 0, PHP_BODY));
    assert_eq!(
        o,
        Outcome::Ogp(OgpOutcome::Answer {
            datagrams: 1,
            dropped_sections: false
        })
    );
    let p = ogp::decode(&out[0]).unwrap();
    assert_eq!(p.header.split, None, "no split fields");
    assert_eq!(out[0][10], 0x13);
    let Message::Answer(a) = p.message else {
        panic!("not an answer")
    };
    assert_eq!(a.status, served(&h.status, request::ALL_LISTS));
}

#[test]
fn truncated_or_empty_body_with_a_valid_challenge_is_error_4() {
    let mut h = Harness::new(demo_state());
    let c = h.challenge_at(Duration::ZERO, "192.0.2.4");
    let cc = to_hex(&c.to_le_bytes());
    // bServerInfo and nothing after it (capture 20)
    for body in ["01", "", "bf01", "bf018f9f0f1f3f3fbfbfbf01", "04", "0180"] {
        let (o, out) = h.send("192.0.2.4:1", &query_with_challenge(0x12, c, body));
        assert_eq!(
            o,
            Outcome::Ogp(OgpOutcome::Error(ErrorValue::INVALID_QUERY)),
            "body {body:?}"
        );
        assert_eq!(
            to_hex(&out[0]),
            format!("ffffffff4f47500007ff13{cc}04"),
            "body {body:?}"
        );
    }
}

#[test]
fn silence_for_oversize_answers_type_ff_garbage_and_other_protocols() {
    let mut h = Harness::new(demo_state());
    let c = h.challenge_at(Duration::ZERO, "192.0.2.5");
    // exactly 500 bytes (trailing bytes ignored): answered; 501: silence, even with a
    // valid challenge
    let mut q = php_query(c);
    q.resize(500, 0);
    let (o, out) = h.send("192.0.2.5:1", &q);
    assert!(
        matches!(o, Outcome::Ogp(OgpOutcome::Answer { .. })),
        "{o:?}"
    );
    assert_eq!(out.len(), 1);
    q.push(0);
    let (o, out) = h.send("192.0.2.5:1", &q);
    assert!(out.is_empty());
    assert!(matches!(o, Outcome::Ogp(OgpOutcome::Ignored(_))), "{o:?}");
    let mut probe = hex(PHP_PROBE);
    probe.resize(1400, 0);
    assert!(h.send("192.0.2.5:1", &probe).1.is_empty());

    let quiet: Vec<(&str, Vec<u8>)> = vec![
        // bAnswer set (capture 19)
        ("bAnswer", query_with_challenge(0x13, c, PHP_BODY)),
        // Type FF in a query (capture 18)
        ("Type FF", hex("ffffffff4f475000 03 ff 00")),
        ("Type FF + challenge", {
            let mut d = hex("ffffffff4f475000 07 ff 02");
            d.extend_from_slice(&c.to_le_bytes());
            d
        }),
        // fields run past HeadSize (capture 22), HeadSize past the end, too small
        ("past HeadSize", {
            let mut d = hex("ffffffff4f475000 03 01 02");
            d.extend_from_slice(&c.to_le_bytes());
            d
        }),
        ("HeadSize past end", hex("ffffffff4f475000 20 01 00")),
        ("HeadSize 1", hex("ffffffff4f475000 01 01")),
        ("prefix only", PREFIX.to_vec()),
        (
            "endless flags",
            hex("ffffffff4f475000 06 01 80 80 80 80 80"),
        ),
        ("garbage", hex("ffffffff4f475000 30")),
    ];
    for (what, d) in &quiet {
        let (o, out) = h.send("192.0.2.5:2", d);
        assert!(out.is_empty(), "{what}: answered {o:?}");
        assert!(
            matches!(o, Outcome::Ogp(OgpOutcome::Ignored(_))),
            "{what}: {o:?}"
        );
    }
    // An A2S query on the same port is A2S's business: a 9-byte challenge, no OGP answer.
    let (o, out) = h.send("192.0.2.5:3", b"\xff\xff\xff\xffTSource Engine Query\x00");
    assert!(matches!(o, Outcome::A2s(_)), "{o:?}");
    assert_eq!(out.iter().map(Vec::len).collect::<Vec<_>>(), [9]);
    // A GameSpy v3 challenge request is GameSpy v3's business: its 16-byte challenge.
    let (o, out) = h.send("192.0.2.5:3", b"\xfe\xfd\x09\x00\x00\x00\x01");
    assert!(matches!(o, Outcome::Gamespy3(_)), "{o:?}");
    assert_eq!(out.len(), 1);
    assert!(out[0].len() <= 16 && out[0][0] == 0x09);
    for d in [
        b"\xfe\xfc\x09\x00\x00\x00\x01".to_vec(),
        Vec::new(),
        vec![0xff; 7],
        b"\xff\xff\xff\xffOGP".to_vec(),
        b"\xff\xff\xff\xffOGQ\x00\x03\x01\x00".to_vec(),
    ] {
        let (o, out) = h.send("192.0.2.5:3", &d);
        assert_eq!(o, Outcome::Unknown, "{}", to_hex(&d));
        assert!(out.is_empty());
    }
    let st = h.r.stats();
    assert_eq!(st.unknown, 5);
    assert_eq!(st.ignored, 2 + quiet.len() as u64);
}

#[test]
fn ping_needs_no_challenge_and_is_same_size() {
    let mut h = Harness::new(demo_state());
    // capture 15: 03 00 00 → 03 00 01
    let q = hex("ffffffff4f475000 03 00 00");
    let (o, out) = h.send("192.0.2.6:1", &q);
    assert_eq!(o, Outcome::Ogp(OgpOutcome::Ping));
    assert_eq!(to_hex(&out[0]), "ffffffff4f475000030001");
    assert_eq!(out[0].len(), q.len());
    // capture 16: with a (wrong) challenge → 07 00 03 + the current challenge
    let c = h.challenge_at(Duration::ZERO, "192.0.2.6");
    let q = hex("ffffffff4f475000 07 00 02 deadbeef");
    let d = h.one("192.0.2.6:2", &q);
    assert_eq!(d.len(), q.len());
    assert_eq!(
        to_hex(&d),
        format!("ffffffff4f475000070003{}", to_hex(&c.to_le_bytes()))
    );
    // with a RequestID and bUTF8: echoed
    let q = hex("ffffffff4f475000 0b 00 16 deadbeef 44332211");
    let d = h.one("192.0.2.6:3", &q);
    assert_eq!(d.len(), q.len());
    assert_eq!(
        to_hex(&d),
        format!("ffffffff4f4750000b0017{}44332211", to_hex(&c.to_le_bytes()))
    );
}

// =======================================================================================
// Challenges

#[test]
fn wrong_or_zero_challenge_gets_error_3() {
    let mut h = Harness::new(demo_state());
    let c = h.challenge_at(Duration::ZERO, "192.0.2.7");
    for wrong in [0u32, u32::MAX, c ^ 1, c.wrapping_add(1), 0xdead_beef] {
        let d = h.one("192.0.2.7:1", &php_query(wrong));
        assert_eq!(check_error3(&d, 0x13), c, "challenge {wrong:#x}");
        // capture 14: the copy is the query with the new challenge and the body unchanged
        let (_, e) = decode_error(&d);
        assert_eq!(e.resend_copy().unwrap(), php_query(c).as_slice());
    }
    // the copy works as it stands
    let copy = {
        let d = h.one("192.0.2.7:2", &php_query(0));
        decode_error(&d).1.data
    };
    let d = h.one("192.0.2.7:3", &copy);
    assert_eq!(
        decode_answer(&d).status,
        served(&h.status, request::ALL_LISTS)
    );
}

#[test]
fn challenge_binds_the_ip_not_the_port() {
    let mut h = Harness::new(demo_state());
    let c = check_error3(&h.one("192.0.2.8:1111", &hex(PHP_PROBE)), 0x03);
    for port in [1111u16, 1112, 40000, 65535] {
        let d = h.one(&format!("192.0.2.8:{port}"), &php_query(c));
        assert_eq!(d[9], 0x01, "port {port}");
    }
    // another IP: Error 3 with its own challenge
    let d = h.one("192.0.2.9:1111", &php_query(c));
    let c9 = check_error3(&d, 0x13);
    assert_ne!(c9, c);
    assert_eq!(c9, h.challenge_at(Duration::ZERO, "192.0.2.9"));
}

#[test]
fn rotation_keeps_the_previous_challenge_for_one_period() {
    let mut config = ResponderConfig::default();
    config.challenge_period = Duration::from_secs(60);
    let mut h = Harness::with_config(demo_state(), config);
    let src = addr("192.0.2.10:5");
    let c0 = check_error3(&h.send_at(Duration::ZERO, src, &hex(PHP_PROBE)).1[0], 0x03);
    // one period later: still accepted, and the answer carries the new challenge
    let t1 = Duration::from_secs(61);
    let c1 = h.challenge_at(t1, "192.0.2.10");
    assert_ne!(c1, c0);
    let (o, out) = h.send_at(t1, src, &php_query(c0));
    assert!(
        matches!(o, Outcome::Ogp(OgpOutcome::Answer { .. })),
        "{o:?}"
    );
    assert_eq!(
        php_challenge(&out[0]),
        c1,
        "the answer header carries the new one"
    );
    assert_eq!(
        decode_answer(&out[0]).status,
        served(&h.status, request::ALL_LISTS)
    );
    // two periods later: the old one is refused, the one from the previous period works
    let t2 = Duration::from_secs(121);
    let c2 = h.challenge_at(t2, "192.0.2.10");
    let (_, out) = h.send_at(t2, src, &php_query(c0));
    assert_eq!(check_error3(&out[0], 0x13), c2);
    let (o, _) = h.send_at(t2, src, &php_query(c1));
    assert!(
        matches!(o, Outcome::Ogp(OgpOutcome::Answer { .. })),
        "{o:?}"
    );
}

#[test]
fn ipv6_and_ipv4_mapped_sources() {
    let mut h = Harness::new(demo_state());
    // IPv6: any port of the same address
    let c6 = check_error3(&h.one("[2001:db8::5]:4000", &hex(PHP_PROBE)), 0x03);
    let d = h.one("[2001:db8::5]:4001", &php_query(c6));
    assert_eq!(
        decode_answer(&d).status,
        served(&h.status, request::ALL_LISTS)
    );
    // not from another address of the same /64
    let d = h.one("[2001:db8::6]:4001", &php_query(c6));
    check_error3(&d, 0x13);

    // IPv4-mapped IPv6 is the same client as its IPv4 form, both ways
    let c4 = check_error3(&h.one("198.51.100.7:1", &hex(PHP_PROBE)), 0x03);
    let d = h.one("[::ffff:198.51.100.7]:2", &php_query(c4));
    assert_eq!(d[9], 0x01, "mapped source accepted the IPv4 challenge");
    let cm = check_error3(&h.one("[::ffff:198.51.100.7]:3", &hex(PHP_PROBE)), 0x03);
    assert_eq!(cm, c4);
    let d = h.one("198.51.100.7:4", &php_query(cm));
    assert_eq!(d[9], 0x01);
    assert_eq!(
        h.challenge_at(Duration::ZERO, "::ffff:198.51.100.7"),
        h.challenge_at(Duration::ZERO, "198.51.100.7")
    );
}

// =======================================================================================
// Amplification

/// Query templates an unverified source might send (none with a valid challenge). `cw` is
/// a wrong challenge.
fn unverified_templates(cw: u32) -> Vec<(&'static str, Vec<u8>)> {
    let c = to_hex(&cw.to_le_bytes());
    vec![
        ("php probe", hex(PHP_PROBE)),
        ("pyogp probe", hex(PYOGP_PROBE)),
        (
            "probe with RequestID",
            hex("ffffffff4f475000 07 01 14 44332211"),
        ),
        (
            "RequestID and split, no challenge",
            hex("ffffffff4f475000 09 01 1c 44332211 f401"),
        ),
        ("php query", php_query(cw)),
        ("onset query", query_with_challenge(0x12, cw, ONSET_BODY)),
        (
            "split 500 + RequestID",
            split_query_id(cw, 0x0102_0304, 500, PHP_BODY),
        ),
        (
            "split 1400 + RequestID 0",
            split_query_id(cw, 0, 1400, PHP_BODY),
        ),
        ("split 499", split_query(cw, 499, PHP_BODY)),
        (
            "HeadSize extension",
            hex(&format!("ffffffff4f475000 09 01 12 {c} aabb {PHP_BODY}")),
        ),
        (
            "non-minimal flags + RequestID",
            hex(&format!(
                "ffffffff4f475000 0c 01 96 00 {c} 01000000 {PHP_BODY}"
            )),
        ),
        ("ping", hex("ffffffff4f475000 03 00 00")),
        (
            "ping with everything",
            hex(&format!("ffffffff4f475000 0d 00 1e {c} 01000000 f401")),
        ),
        (
            "type 5",
            hex(&format!("ffffffff4f475000 0b 05 06 {c} 01000000")),
        ),
        ("rcon", hex("ffffffff4f475000 03 02 00")),
    ]
}

#[test]
fn unverified_sources_get_at_most_query_plus_20_bytes_in_one_datagram() {
    // a status whose full answer is large, split or not
    let mut h = Harness::new(many_players(300, 30));
    let mut n = 0u32;
    let mut answered = 0u32;
    for len in 11..=500usize {
        for pad in [0x00u8, 0xbf] {
            for (what, base) in unverified_templates(0x5eed_0001) {
                if base.len() > len {
                    continue;
                }
                n += 1;
                let ip = if n % 3 == 0 {
                    IpAddr::V6(Ipv6Addr::new(0x2001, 0xdb8, 0, n as u16, 0, 0, 0, 1))
                } else {
                    IpAddr::V4(Ipv4Addr::from(0x0a00_0000 + n))
                };
                let mut d = base.clone();
                d.resize(len, pad);
                // make sure the wrong challenge really is wrong for this source
                let valid = h.r.ogp_challenge(h.t0, ip);
                if let Ok((qh, _)) = ogp::decode_query_header(&d) {
                    assert_ne!(qh.challenge, Some(valid), "test bug: valid challenge");
                }
                let (o, out) = h.send_at(Duration::ZERO, SocketAddr::new(ip, 27000), &d);
                let total: usize = out.iter().map(Vec::len).sum();
                assert!(out.len() <= 1, "{what} ({len} B): {} datagrams", out.len());
                assert!(
                    total <= (16 + 4).max(len + 20),
                    "{what} ({len} B): {total} B answered: {}",
                    out.first().map(|d| to_hex(d)).unwrap_or_default()
                );
                if len > 64 {
                    assert!(
                        total <= 20,
                        "{what} ({len} B): {total} B, no copy above 64 B"
                    );
                }
                assert!(
                    !matches!(o, Outcome::Ogp(OgpOutcome::Answer { .. })),
                    "{what} ({len} B): a full answer to an unverified source"
                );
                answered += u32::from(!out.is_empty());
            }
        }
    }
    assert!(n > 10_000, "{n} queries");
    assert!(
        answered > n / 2,
        "most of them are answered (Error 3, pings…)"
    );
}

#[test]
fn unverified_split_requests_get_one_small_datagram() {
    let mut h = Harness::new(many_players(300, 30));
    for m in [500u16, 1400, 65535] {
        let (o, out) = h.send("10.9.9.9:1", &split_query_id(0, 7, m, PHP_BODY));
        assert_eq!(out.len(), 1, "max {m}");
        assert_eq!(
            o,
            Outcome::Ogp(OgpOutcome::Error(ErrorValue::INVALID_CHALLENGE))
        );
        assert_eq!(decode_error(&out[0]).0.split, None);
    }
}

// =======================================================================================
// RequestID, charset

#[test]
fn request_id_is_echoed_or_chosen() {
    let mut h = Harness::new(demo_state());
    let c = h.challenge_at(Duration::ZERO, "192.0.2.11");
    let q = |id: u32| {
        let mut d = hex("ffffffff4f475000 0b 01 16");
        d.extend_from_slice(&c.to_le_bytes());
        d.extend_from_slice(&id.to_le_bytes());
        d.extend_from_slice(&hex(PHP_BODY));
        d
    };
    // capture 12: echoed
    let d = h.one("192.0.2.11:1", &q(0x1122_3344));
    assert_eq!((d[8], d[9], d[10]), (0x0b, 0x01, 0x17));
    assert_eq!(d[15..19], hex("44332211"));
    let p = ogp::decode(&d).unwrap();
    assert_eq!(p.header.request_id, Some(0x1122_3344));
    assert_eq!(p.header.challenge, Some(c));
    // 0: the server chooses a non-zero one (capture 13)
    let a = ogp::decode(&h.one("192.0.2.11:1", &q(0))).unwrap();
    let b = ogp::decode(&h.one("192.0.2.11:1", &q(0))).unwrap();
    let (ia, ib) = (a.header.request_id.unwrap(), b.header.request_id.unwrap());
    assert!(ia != 0 && ib != 0);
    assert_ne!(ia, ib, "two chosen RequestIDs differ");
    // errors echo it too: Error 3 with a wrong challenge
    let mut wrong = q(0x55);
    wrong[11] ^= 0xff;
    let d = h.one("192.0.2.11:1", &wrong);
    let (eh, e) = decode_error(&d);
    assert_eq!(e.value, ErrorValue::INVALID_CHALLENGE);
    assert_eq!(eh.request_id, Some(0x55));
    assert_eq!(d[10], 0x17);
}

#[test]
fn utf8_bit_follows_the_query() {
    let mut h = Harness::new(demo_state());
    let c = h.challenge_at(Duration::ZERO, "192.0.2.12");
    for (flags, utf8) in [(0x12u8, true), (0x02, false)] {
        let d = h.one("192.0.2.12:1", &query_with_challenge(flags, c, PHP_BODY));
        let p = ogp::decode(&d).unwrap();
        assert_eq!(p.header.utf8(), utf8);
        assert_eq!(d[10] & 0x10 != 0, utf8, "answer bit 0.4");
        let motd_utf8 = "Hällo and welcome\0".as_bytes();
        let motd_latin1 = b"H\xe4llo and welcome\x00";
        let has = |n: &[u8]| d.windows(n.len()).any(|w| w == n);
        assert_eq!(has(motd_utf8), utf8);
        assert_eq!(has(motd_latin1), !utf8);
        let Message::Answer(a) = p.message else {
            panic!()
        };
        assert_eq!(
            a.status.rules.unwrap().get("motd"),
            Some("Hällo and welcome")
        );
    }
}

// =======================================================================================
// Splitting and the unsplit cap

fn reassemble(datagrams: &[Vec<u8>]) -> (Header, Answer) {
    let mut r = Reassembler::new();
    let mut done = None;
    // in reverse order: the client must not depend on it
    for d in datagrams.iter().rev() {
        let p = ogp::decode(d).unwrap();
        let Message::Fragment { body } = p.message else {
            panic!("not a fragment: {:?}", p.message)
        };
        match r.push(&p.header, &body).unwrap() {
            Pushed::Complete { header, body } => done = Some((header, body)),
            Pushed::Incomplete => {}
            Pushed::Duplicate => panic!("duplicate"),
        }
    }
    let (header, body) = done.expect("complete");
    let a = decode_answer_body(&body, header.utf8()).unwrap();
    (header, a)
}

#[test]
fn split_answers_fit_the_limit_and_reassemble() {
    let mut h = Harness::new(many_players(300, 20));
    let c = h.challenge_at(Duration::ZERO, "192.0.2.13");
    for (m, id) in [(500u16, 0xabcd_ef01u32), (1400, 7), (4000, 9)] {
        let (o, out) = h.send("192.0.2.13:1", &split_query_id(c, id, m, PHP_BODY));
        let n = out.len();
        assert!(n > 1, "max {m}: {n} datagrams");
        assert_eq!(
            o,
            Outcome::Ogp(OgpOutcome::Answer {
                datagrams: n,
                dropped_sections: false
            })
        );
        for (i, d) in out.iter().enumerate() {
            assert!(d.len() <= usize::from(m), "packet {i}: {} > {m}", d.len());
            let hd = ogp::decode(d).unwrap().header;
            assert_eq!(hd.request_id, Some(id), "packet {i}");
            assert_eq!(
                hd.split,
                Some(SplitInfo {
                    count: u8::try_from(n).unwrap(),
                    number: u8::try_from(i).unwrap()
                })
            );
            assert_eq!(hd.packet_type, PacketType::DEFAULT_QUERY);
            if i == 0 {
                assert_eq!(hd.challenge, Some(c), "packet 0 carries the challenge");
                assert_eq!((d[8], d[10]), (0x0d, 0x1f));
            } else {
                assert_eq!(hd.challenge, None, "packet {i}");
                assert_eq!((d[8], d[10]), (0x09, 0x1d));
            }
        }
        let (header, a) = reassemble(&out);
        assert_eq!(header.challenge, Some(c));
        assert_eq!(a.request_flags, request::ALL_LISTS);
        assert_eq!(a.status, served(&h.status, request::ALL_LISTS));
    }
    // bSplit without bRequestID: one is chosen, the same for every packet
    let (_, out) = h.send("192.0.2.13:1", &split_query(c, 500, PHP_BODY));
    assert!(out.len() > 1);
    let ids: Vec<_> = out
        .iter()
        .map(|d| ogp::decode(d).unwrap().header.request_id)
        .collect();
    assert!(ids[0].is_some_and(|i| i != 0));
    assert!(ids.iter().all(|i| *i == ids[0]));
    assert_eq!(
        reassemble(&out).1.status,
        served(&h.status, request::ALL_LISTS)
    );
    // a small status asked with bSplit: one unsplit datagram
    h.status = demo_state();
    let (_, out) = h.send("192.0.2.13:1", &split_query_id(c, 3, 1400, PHP_BODY));
    assert_eq!(out.len(), 1);
    assert_eq!(ogp::decode(&out[0]).unwrap().header.split, None);
    assert_eq!(
        decode_answer(&out[0]).status,
        served(&h.status, request::ALL_LISTS)
    );
}

#[test]
fn unsplit_answers_are_capped_by_dropping_whole_sections() {
    // 2000 players with long names: only server info fits in 8192 bytes
    let mut h = Harness::new(many_players(2000, 40));
    let c = h.challenge_at(Duration::ZERO, "192.0.2.14");
    let (o, out) = h.send("192.0.2.14:1", &php_query(c));
    assert_eq!(
        o,
        Outcome::Ogp(OgpOutcome::Answer {
            datagrams: 1,
            dropped_sections: true
        })
    );
    assert!(out[0].len() <= 8192, "{} bytes", out[0].len());
    let a = decode_answer(&out[0]);
    assert_eq!(a.request_flags, request::SERVER_INFO);
    assert_eq!(a.status, served(&h.status, request::SERVER_INFO));
    assert_eq!(
        a.status.player_count,
        Some(2000),
        "the count is still there"
    );

    // huge rules: limits, add-ons and rules go (in that order), teams and players stay
    let mut s = demo_state();
    s.rules = Some(Rules(
        (0..300)
            .map(|i| (format!("rule_{i:04}").into(), "v".repeat(40).into()))
            .collect(),
    ));
    h.status = s;
    let (o, out) = h.send("192.0.2.14:1", &php_query(c));
    assert!(matches!(
        o,
        Outcome::Ogp(OgpOutcome::Answer {
            datagrams: 1,
            dropped_sections: true
        })
    ));
    assert!(out[0].len() <= 8192);
    let a = decode_answer(&out[0]);
    let kept = request::SERVER_INFO
        .with(request::TEAM_LIST)
        .with(request::PLAYER_LIST);
    assert_eq!(a.request_flags, kept);
    assert_eq!(a.status, served(&h.status, kept));

    // a split answer that would need more than 255 packets of 500 bytes drops sections
    // too, and every packet still fits
    h.status = many_players(3000, 40);
    let (o, out) = h.send("192.0.2.14:1", &split_query_id(c, 5, 500, PHP_BODY));
    assert!(
        matches!(
            o,
            Outcome::Ogp(OgpOutcome::Answer {
                dropped_sections: true,
                ..
            })
        ),
        "{o:?}"
    );
    assert!(out.len() <= 255);
    assert!(out.iter().all(|d| d.len() <= 500));
    let a = if out.len() == 1 {
        decode_answer(&out[0])
    } else {
        reassemble(&out).1
    };
    assert!(!a.request_flags.contains(request::PLAYER_LIST));
    assert!(a.request_flags.contains(request::SERVER_INFO));
    assert_eq!(a.status, served(&h.status, a.request_flags));
}

// =======================================================================================
// Rate limit, memory, ban hook

#[test]
fn rate_limit_per_source() {
    let limit = RateConfig::new(10.0, 5.0);
    let mut config = ResponderConfig::default();
    config.rate = limit;
    config.unproven_rate = limit;
    let mut h = Harness::with_config(demo_state(), config);
    let a = addr("192.0.2.20:1");
    let b = addr("192.0.2.21:1");
    let probe = hex(BAD_TYPE_PROBE);
    for i in 0..5 {
        let (o, out) = h.send_at(Duration::ZERO, a, &probe);
        assert_eq!(out.len(), 1, "query {i}: {o:?}");
        assert_eq!(o, Outcome::Ogp(OgpOutcome::Error(ErrorValue::INVALID_TYPE)));
        assert!(out[0].len() > probe.len());
    }
    let (o, out) = h.send_at(Duration::ZERO, a, &probe);
    assert_eq!(o, Outcome::RateLimited);
    assert!(out.is_empty());
    // a query with a valid challenge spends the source's own budget, which the probes
    // (which anyone can send in its name) did not touch; from any port, up to its burst
    let c = h.challenge_at(Duration::ZERO, "192.0.2.20");
    for port in 2..7 {
        let from = addr(&format!("192.0.2.20:{port}"));
        let (o, out) = h.send_at(Duration::ZERO, from, &php_query(c));
        assert!(
            matches!(o, Outcome::Ogp(OgpOutcome::Answer { .. })),
            "{o:?}"
        );
        assert_eq!(out.len(), 1);
    }
    let (o, out) = h.send_at(Duration::ZERO, addr("192.0.2.20:2"), &php_query(c));
    assert_eq!(o, Outcome::RateLimited);
    assert!(out.is_empty());
    // another IP is unaffected
    let (o, out) = h.send_at(Duration::ZERO, b, &probe);
    assert_eq!(o, Outcome::Ogp(OgpOutcome::Error(ErrorValue::INVALID_TYPE)));
    assert_eq!(out.len(), 1);
    // the challenge a probe gets gives a spoofer nothing: not charged to the source, so
    // the exhausted source still gets it
    let (o, out) = h.send_at(Duration::ZERO, a, &hex(PHP_PROBE));
    assert_eq!(
        o,
        Outcome::Ogp(OgpOutcome::Error(ErrorValue::INVALID_CHALLENGE))
    );
    assert_eq!(out.len(), 1);
    // 200 ms refill 2 answers
    let t = Duration::from_millis(200);
    let answered = (0..5)
        .filter(|_| !h.send_at(t, a, &probe).1.is_empty())
        .count();
    assert_eq!(answered, 2);
    // after a second it answers again, up to the burst
    let t = Duration::from_millis(1200);
    let answered = (0..10)
        .filter(|_| !h.send_at(t, a, &probe).1.is_empty())
        .count();
    assert_eq!(answered, 5);
    assert_eq!(h.r.stats().rate_limited, 2 + 3 + 5);
    // not OGP: not charged, not answered
    let (o, _) = h.send_at(t, a, b"hello");
    assert_eq!(o, Outcome::Unknown);
}

#[test]
fn a_hundred_thousand_sources() {
    // the per-source table alone (the overall budget of unproven answers is the subject
    // of unproven_answers_have_an_overall_budget)
    let mut unbounded = ResponderConfig::default();
    unbounded.unproven_total = RateConfig::new(1e9, 1e9);
    let mut h = Harness::with_config(demo_state(), unbounded.clone());
    let probe = hex(BAD_TYPE_PROBE);
    // all at one instant: fresh sources are answered while their slots are free; the
    // table's size bounds how many (plus the shared overflow bucket's burst of 40)
    let mut answered = 0usize;
    let mut first_missed = None;
    for i in 0..100_000u32 {
        let src = SocketAddr::new(IpAddr::V4(Ipv4Addr::from(0x0b00_0000 + i)), 9999);
        let (o, out) = h.send_at(Duration::ZERO, src, &probe);
        if out.len() == 1 {
            answered += 1;
        } else {
            assert_eq!(o, Outcome::RateLimited, "source {i}");
            first_missed.get_or_insert(i);
        }
    }
    let first_missed = first_missed.unwrap_or(u32::MAX);
    eprintln!(
        "one instant: {answered} of 100000 fresh sources answered, first refused {first_missed}"
    );
    assert!(first_missed >= 1000, "source {first_missed} refused early");
    assert!(
        answered >= 40_000,
        "only {answered} of 100000 fresh sources answered"
    );
    assert!(
        answered <= 65_536 + 40,
        "{answered} answered: more than the table holds"
    );
    // time passes: the buckets refill, the slots are reusable, new sources are answered
    for i in 0..1000u32 {
        let src = SocketAddr::new(IpAddr::V4(Ipv4Addr::from(0x0c00_0000 + i)), 9999);
        let (o, out) = h.send_at(Duration::from_secs(3), src, &probe);
        assert_eq!(out.len(), 1, "fresh source {i} after refill: {o:?}");
    }
    // and with time advancing 1 ms per datagram, every one of 100 000 sources is
    // answered (a new source's bucket is full again 50 ms later, so its slot is free)
    let mut h = Harness::new(demo_state());
    for i in 0..100_000u32 {
        let src = SocketAddr::new(
            IpAddr::V6(Ipv6Addr::from(
                0x2001_0db8_0000_0000_0000_0000_0000_0000u128 + (u128::from(i) << 64),
            )),
            9999,
        );
        let (o, out) = h.send_at(Duration::from_millis(u64::from(i)), src, &probe);
        assert_eq!(out.len(), 1, "source {i}: {o:?}");
    }
    assert_eq!(h.r.stats().rate_limited, 0);
}

#[test]
fn ban_hook_reject_and_ignore() {
    let banned: IpAddr = "192.0.2.66".parse().unwrap();
    let silenced: IpAddr = "192.0.2.67".parse().unwrap();
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
    let c = h.challenge_at(Duration::ZERO, "192.0.2.66");
    // capture 23: the PHP query → 03 FF 11 00 (no challenge echoed)
    let (o, out) = h.send("192.0.2.66:1", &php_query(c));
    assert_eq!(o, Outcome::Ogp(OgpOutcome::Error(ErrorValue::BANNED)));
    assert_eq!(to_hex(&out[0]), "ffffffff4f47500003ff1100");
    // the probe too (no bUTF8)
    assert_eq!(
        to_hex(&h.one("192.0.2.66:2", &hex(PHP_PROBE))),
        "ffffffff4f47500003ff0100"
    );
    // a mapped IPv6 form of the banned address is banned
    assert_eq!(
        to_hex(&h.one("[::ffff:192.0.2.66]:2", &hex(PHP_PROBE))),
        "ffffffff4f47500003ff0100"
    );
    // capture 24: ignore → nothing
    let c = h.challenge_at(Duration::ZERO, "192.0.2.67");
    let (o, out) = h.send("192.0.2.67:1", &php_query(c));
    assert_eq!(o, Outcome::Banned);
    assert!(out.is_empty());
    // others are served
    let c = h.challenge_at(Duration::ZERO, "192.0.2.68");
    assert_eq!(h.one("192.0.2.68:1", &php_query(c))[9], 0x01);
}

// =======================================================================================
// Any datagram

fn source() -> impl Strategy<Value = SocketAddr> {
    prop_oneof![
        (any::<u32>(), any::<u16>())
            .prop_map(|(ip, port)| SocketAddr::new(IpAddr::V4(Ipv4Addr::from(ip)), port)),
        (any::<u128>(), any::<u16>())
            .prop_map(|(ip, port)| SocketAddr::new(IpAddr::V6(Ipv6Addr::from(ip)), port)),
    ]
}

/// Random datagrams: raw bytes, or the OGP prefix followed by a plausible header (small
/// HeadSize, a real Type, random flags) and random bytes.
fn datagram() -> impl Strategy<Value = (Vec<u8>, bool)> {
    prop_oneof![
        (vec(any::<u8>(), 0..600), any::<bool>()).prop_map(|(b, prefixed)| {
            let mut d = if prefixed {
                PREFIX.to_vec()
            } else {
                Vec::new()
            };
            d.extend_from_slice(&b);
            d.truncate(600);
            (d, false)
        }),
        (
            // HeadSize: mostly one of the sizes the optional fields make
            prop_oneof![
                3 => proptest::sample::select(vec![3u8, 5, 7, 9, 11, 13]),
                1 => 0u8..20,
            ],
            prop_oneof![
                3 => Just(1u8),
                1 => Just(0u8),
                1 => proptest::sample::select(vec![2u8, 3, 5, 0xff]),
                1 => any::<u8>(),
            ],
            // HeadFlags: mostly the known bits
            prop_oneof![3 => 0u8..0x20, 1 => any::<u8>()],
            prop_oneof![vec(any::<u8>(), 0..64), vec(any::<u8>(), 0..590)],
            any::<bool>(),
        )
            .prop_map(|(hs, ty, flags, rest, valid)| {
                let mut d = PREFIX.to_vec();
                d.extend_from_slice(&[hs, ty, flags]);
                d.extend_from_slice(&rest);
                // `valid`: put the source's real challenge where a challenge would be
                (d, valid)
            }),
    ]
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 512, ..ProptestConfig::default() })]

    /// No datagram makes the responder panic, and a source without a valid challenge
    /// never gets more than one datagram or more than `len + 20` bytes.
    #[test]
    fn any_datagram_from_any_source(
        items in vec((datagram(), source(), 0u64..290_000), 1..6),
        big in any::<bool>(),
    ) {
        let status = if big { many_players(300, 20) } else { demo_state() };
        let mut h = Harness::new(status);
        for ((mut d, valid), src, at_ms) in items {
            let at = Duration::from_millis(at_ms);
            let c = h.r.ogp_challenge(h.t0 + at, src.ip());
            if valid && d.len() >= 15 {
                d[11..15].copy_from_slice(&c.to_le_bytes());
            }
            let holds_valid = ogp::decode_query_header(&d)
                .is_ok_and(|(qh, _)| qh.challenge == Some(c));
            let len = d.len();
            let (o, out) = h.send_at(at, src, &d);
            let total: usize = out.iter().map(Vec::len).sum();
            if !holds_valid {
                prop_assert!(out.len() <= 1, "{} datagrams to {}", out.len(), to_hex(&d));
                prop_assert!(
                    total <= len + 20,
                    "{} B for {} B: {} → {:?}", total, len, to_hex(&d), o
                );
                let full = matches!(o, Outcome::Ogp(OgpOutcome::Answer { .. }));
                prop_assert!(!full, "a full answer to an unverified source: {:?}", o);
            }
            let is_gqp = ogp_proto::gqp::is_gqp(&d);
            if (ogp::is_ogp(&d) && len > 500) || (!ogp::is_ogp(&d) && !is_gqp) {
                prop_assert!(out.is_empty());
            }
            if is_gqp && !holds_valid {
                // GQP (same port) never answers an unproven source with more than it sent
                prop_assert!(total <= len, "GQP: {} B for {} B", total, len);
            }
            // every answer to an OGP datagram is a well-formed OGP answer
            for a in out.iter().filter(|_| ogp::is_ogp(&d)) {
                let p = ogp::decode_query_header(a);
                prop_assert!(p.is_ok_and(|(ah, _)| ah.is_answer()), "{}", to_hex(a));
            }
        }
    }
}

/// Sends a split query with MaxBytesPerPacket `max` and returns the datagrams and the
/// reassembled answer.
fn split_answer_for(h: &mut Harness, max: u16) -> (Vec<Vec<u8>>, Answer) {
    let c = h.challenge_at(Duration::ZERO, "127.0.0.1");
    let (_, out) = h.send("127.0.0.1:4000", &split_query(c, max, PHP_BODY));
    let mut r = Reassembler::new();
    let mut answer = None;
    for d in &out {
        let p = ogp::decode(d).unwrap();
        match p.message {
            Message::Answer(a) => answer = Some(*a),
            Message::Fragment { body } => {
                if let Pushed::Complete { body, header } = r.push(&p.header, &body).unwrap() {
                    answer = Some(decode_answer_body(&body, header.utf8()).unwrap());
                }
            }
            other => panic!("unexpected {other:?}"),
        }
    }
    (out, answer.expect("a complete answer"))
}

#[test]
fn split_packets_never_exceed_the_unsplit_cap_nor_the_total_cap() {
    // A client asking for 65535-byte packets gets packets of at most 8192 bytes: a UDP
    // datagram cannot even carry 65535 bytes of payload.
    let mut h = Harness::new(many_players(300, 60));
    let (out, a) = split_answer_for(&mut h, 65535);
    assert!(out.len() > 1, "a 300-player answer of ~24 KB is split");
    assert!(
        out.iter().all(|d| d.len() <= 8192),
        "{:?}",
        out.iter().map(Vec::len).max()
    );
    assert_eq!(a.status.players.map(|p| p.len()), Some(300));

    // A split answer never totals more than 64 KiB: whole sections are dropped instead.
    let mut h = Harness::new(many_players(3000, 60));
    let (out, a) = split_answer_for(&mut h, 1400);
    assert!(out.iter().all(|d| d.len() <= 1400));
    let total: usize = out.iter().map(Vec::len).sum();
    assert!(total <= 65536, "total {total}");
    assert!(
        !a.request_flags.contains(request::PLAYER_LIST),
        "players dropped to fit"
    );
    assert!(a.request_flags.contains(request::SERVER_INFO));
}
