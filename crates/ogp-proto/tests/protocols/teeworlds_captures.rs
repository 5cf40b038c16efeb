//! Teeworlds 0.6 / DDNet and 0.7 against the captures in `tests/data/teeworlds/` (see
//! SOURCES.md there: real DDNet 16.4 and Teeworlds 0.7.5 replies recorded here, and
//! shaped ones for named players and `iex+`), and hostile servers: lying counts,
//! endless and repeated continuations, drips, oversize replies, tokens that do not match.

use std::time::{Duration, Instant};

use ogp_proto::client::{QueryDriver, QueryError, Timing};
use ogp_proto::teeworlds::client::{QueryMachine, QueryOptions, MAX_PARTS, PART_WAIT};
use ogp_proto::teeworlds::wire::{self, encode, Client, Info, Kind, Reply6, MAX_CLIENTS};
use ogp_proto::teeworlds7::client as c7;
use ogp_proto::{Protocol, Status};
use serde_json::Value;

fn unhex(s: &str) -> Vec<u8> {
    (0..s.len() / 2)
        .map(|i| u8::from_str_radix(&s[2 * i..2 * i + 2], 16).unwrap())
        .collect()
}

fn capture(name: &str, reply: &str) -> Vec<u8> {
    let path = format!(
        "{}/tests/data/teeworlds/{name}.json",
        env!("CARGO_MANIFEST_DIR")
    );
    let c: Value = serde_json::from_slice(&std::fs::read(&path).unwrap()).unwrap();
    unhex(c["responses"][reply][0].as_str().unwrap())
}

/// The token the 0.6 captures were asked with, as a query id.
const ID6: u32 = 0x0012_3456;

fn query6(
    id: u32,
    replies: &[Vec<u8>],
) -> (
    Option<Result<ogp_proto::client::Answer<ogp_proto::teeworlds::client::Details>, QueryError>>,
    QueryMachine,
) {
    let t0 = Instant::now();
    let mut m = QueryMachine::new(QueryOptions::default(), Timing::default(), id, t0);
    let mut d = Vec::new();
    assert!(m.poll_transmit_into(t0, &mut d));
    for r in replies {
        m.handle_datagram(t0, r);
    }
    (m.take_result(), m)
}

fn names(s: &Status) -> Vec<String> {
    s.players
        .as_ref()
        .unwrap()
        .iter()
        .map(|p| p.name.as_deref().unwrap_or("").to_string())
        .collect()
}

#[test]
fn ddnet_16_4_real_iext_and_inf3() {
    let iext = capture("ddnet-16.4-real", "iext");
    let Reply6::Info(Kind::Extended, info) = wire::decode_reply6(&iext).unwrap() else {
        panic!("not an iext")
    };
    assert_eq!(info.token, i64::from(ID6));
    assert_eq!(info.map_crc, Some(-1_994_025_349));
    assert_eq!(info.map_size, Some(411_717));
    let (a, _) = query6(ID6, &[iext]);
    let a = a.unwrap().unwrap();
    assert_eq!(a.protocol, Protocol::Teeworlds);
    let s = &a.status;
    assert_eq!(s.host_name.as_deref(), Some("DDNet capture"));
    assert_eq!(s.game_name.as_deref(), Some("DDraceNetwork"));
    assert_eq!(s.map.as_ref().unwrap().name, "Tsunami");
    assert_eq!(s.map.as_ref().unwrap().file_size, Some(411_717));
    assert_eq!((s.player_count, s.slot_max), (Some(0), Some(12)));
    assert_eq!(s.rules.as_ref().unwrap().get("map_crc"), Some("8925967b"));
    // The vanilla inf3 echoes the low byte only.
    let inf3 = capture("ddnet-16.4-real", "inf3");
    let (a, _) = query6(ID6, std::slice::from_ref(&inf3));
    assert_eq!(
        a.unwrap().unwrap().status.host_name.as_deref(),
        Some("DDNet capture")
    );
    let (a, _) = query6(ID6 + 1, &[inf3]);
    assert!(a.is_none(), "an inf3 with another token was taken");
}

#[test]
fn ddnet_shaped_20_clients_in_iext_and_iex_plus() {
    let iext = capture("ddnet-shaped-20", "iext");
    let more = capture("ddnet-shaped-20", "more");
    for order in [[iext.clone(), more.clone()], [more, iext]] {
        let (a, _) = query6(ID6, &order);
        let a = a.unwrap().unwrap();
        assert!(a.warnings.is_empty(), "{:?}", a.warnings);
        assert_eq!(a.datagrams, 2);
        let s = &a.status;
        assert_eq!((s.player_count, s.slot_max), (Some(20), Some(64)));
        let n = names(s);
        assert_eq!(n.len(), 20);
        assert_eq!(
            n[..4],
            ["nameless tee", "brainless tee", "Fröhlich", "spec"]
        );
        assert_eq!(n[19], "tee15");
        let p = &s.players.as_ref().unwrap();
        assert_eq!(p[1].extra.get("clan").map(|c| c.as_str()), Some("DDNet"));
        assert_eq!(p[1].extra.get("country").map(|c| c.as_str()), Some("276"));
        assert_eq!(p[1].score, Some(-312));
        assert!(!p[0].extra.contains_key("country"), "-1 is no country");
        assert_eq!(p[3].extra.get("spectator").map(|c| c.as_str()), Some("1"));
        assert!(!p[2].extra.contains_key("spectator"));
    }
}

#[test]
fn vanilla_shaped_inf3() {
    let (a, _) = query6(0x56, &[capture("vanilla-shaped", "inf3")]);
    let a = a.unwrap().unwrap();
    let s = &a.status;
    assert_eq!(s.game_name.as_deref(), Some("Teeworlds"));
    assert_eq!(s.password, Some(true));
    assert_eq!(s.game_type.as_deref(), Some("CTF"));
    assert_eq!(names(s).len(), 4);
    assert_eq!(s.rules.as_ref().unwrap().get("num_players"), Some("3"));
}

fn query7(
    id: u32,
    token: &[u8],
    info: &[u8],
) -> Option<Result<ogp_proto::client::Answer<c7::Details>, QueryError>> {
    let t0 = Instant::now();
    let mut m = c7::QueryMachine::new(c7::QueryOptions::default(), Timing::default(), id, t0);
    let mut d = Vec::new();
    assert!(m.poll_transmit_into(t0, &mut d));
    assert_eq!(d.len(), 520);
    m.handle_datagram(t0, token);
    assert!(m.poll_transmit_into(t0, &mut d), "gie3 after the token");
    m.handle_datagram(t0, info);
    m.take_result()
}

#[test]
fn teeworlds_0_7_5_real_with_two_connecting_clients() {
    // Recorded with our token 11223344 and integer token 0x33 (= id >> 8 & 0xff).
    let a = query7(
        0x1122_3344,
        &capture("tw07-0.7.5-real", "token"),
        &capture("tw07-0.7.5-real", "inf3"),
    );
    // Our integer token is (id >> 8) as u8 = 0x33.
    let a = a.unwrap().unwrap();
    assert_eq!(a.protocol, Protocol::Teeworlds7);
    let s = &a.status;
    assert_eq!(s.host_name.as_deref(), Some("TW capture"));
    assert_eq!(s.map.as_ref().unwrap().name, "ctf2");
    assert_eq!((s.player_count, s.slot_max), (Some(2), Some(6)));
    assert_eq!(s.bot_count, Some(0));
    assert_eq!(names(s), ["(connecting)", "(connecting)"]);
    for p in s.players.as_ref().unwrap() {
        assert_eq!(p.extra.get("spectator").map(|c| c.as_str()), Some("1"));
    }
    let a = query7(
        0x1122_3344,
        &capture("ddnet-16.4-07-real", "token"),
        &capture("ddnet-16.4-07-real", "inf3"),
    )
    .unwrap()
    .unwrap();
    assert_eq!(a.status.game_version.as_deref(), Some("0.7↔0.6.4, 16.4"));
    assert_eq!(a.status.slot_max, Some(12));
    // Another query's token: the token reply is not ours, nothing is asked.
    let t0 = Instant::now();
    let mut m = c7::QueryMachine::new(
        c7::QueryOptions::default(),
        Timing::default(),
        0x1122_3345,
        t0,
    );
    let mut d = Vec::new();
    assert!(m.poll_transmit_into(t0, &mut d));
    m.handle_datagram(t0, &capture("tw07-0.7.5-real", "token"));
    assert!(!m.poll_transmit_into(t0, &mut d));
}

// ------------------------------------------------------------------------------------
// Hostile servers

fn client(i: usize) -> Client {
    Client {
        name: format!("t{i}").into(),
        player: true,
        ..Client::default()
    }
}

fn iext(num_clients: i64, clients: Vec<Client>) -> Vec<u8> {
    let mut d = Vec::new();
    let mut info = Info::default();
    info.token = i64::from(ID6);
    info.name = "liar".into();
    info.num_clients = num_clients;
    info.max_clients = 64;
    info.clients = clients;
    encode::info6(&mut d, Kind::Extended, &info);
    d
}

fn more(part: i64, clients: Vec<Client>) -> Vec<u8> {
    let mut d = Vec::new();
    encode::more(&mut d, i64::from(ID6), part, &clients);
    d
}

#[test]
fn hostile_lying_count_waits_part_wait_at_most_and_says_so() {
    let t0 = Instant::now();
    let mut m = QueryMachine::new(QueryOptions::default(), Timing::default(), ID6, t0);
    let mut d = Vec::new();
    assert!(m.poll_transmit_into(t0, &mut d));
    m.handle_datagram(t0, &iext(i64::MAX, vec![client(0)]));
    assert!(m.poll_timeout().unwrap() <= t0 + PART_WAIT);
    m.handle_timeout(t0 + PART_WAIT);
    let a = m.take_result().unwrap().unwrap();
    assert_eq!(names(&a.status), ["t0"]);
    assert!(
        a.warnings.iter().any(|w| w.contains("continuation")),
        "{:?}",
        a.warnings
    );
    // A negative count: the one datagram is the answer.
    let (a, _) = query6(ID6, &[iext(-5, vec![client(0)])]);
    assert_eq!(names(&a.unwrap().unwrap().status), ["t0"]);
}

#[test]
fn hostile_endless_and_repeated_continuations_are_bounded() {
    let t0 = Instant::now();
    let mut m = QueryMachine::new(QueryOptions::default(), Timing::default(), ID6, t0);
    let mut d = Vec::new();
    assert!(m.poll_transmit_into(t0, &mut d));
    // Continuations before their iext, repeated ones, and far more than we take.
    for _ in 0..50 {
        m.handle_datagram(t0, &more(1, vec![client(1)]));
    }
    for part in 2..10_000 {
        m.handle_datagram(t0, &more(part, vec![client(part as usize)]));
    }
    m.handle_datagram(t0, &iext(1_000_000, vec![client(0)]));
    let a = m
        .take_result()
        .expect("ended at the continuation cap")
        .unwrap();
    let n = a.status.players.unwrap().len();
    assert!(n <= 1 + MAX_PARTS, "{n} clients kept");
    assert!(a.datagrams <= 1 + MAX_PARTS, "{} datagrams", a.datagrams);
}

#[test]
fn hostile_drip_cannot_stretch_the_wait() {
    let t0 = Instant::now();
    let mut m = QueryMachine::new(QueryOptions::default(), Timing::default(), ID6, t0);
    let mut d = Vec::new();
    assert!(m.poll_transmit_into(t0, &mut d));
    m.handle_datagram(t0, &iext(64, vec![client(0)]));
    let mut t = t0;
    for part in 1..MAX_PARTS as i64 {
        t += Duration::from_millis(40);
        m.handle_timeout(t);
        if m.take_result().is_some() {
            assert!(t < t0 + PART_WAIT + Duration::from_millis(40), "ended late");
            return;
        }
        m.handle_datagram(t, &more(part, vec![client(part as usize)]));
    }
    m.handle_timeout(t0 + PART_WAIT);
    assert!(m.take_result().is_some(), "still waiting after PART_WAIT");
}

#[test]
fn hostile_oversize_reply_keeps_at_most_max_clients() {
    let many: Vec<Client> = (0..MAX_CLIENTS + 500).map(client).collect();
    let d = iext((MAX_CLIENTS + 500) as i64, many);
    let Reply6::Info(_, info) = wire::decode_reply6(&d).unwrap() else {
        panic!()
    };
    assert_eq!(info.clients.len(), MAX_CLIENTS);
    assert!(!info.warnings.is_empty());
    let (a, _) = query6(ID6, &[d]);
    assert_eq!(
        a.unwrap().unwrap().status.players.unwrap().len(),
        MAX_CLIENTS
    );
}

#[test]
fn hostile_wrong_tokens_and_garbage_are_dropped() {
    let mut wrong = Vec::new();
    let mut info = Info::default();
    info.token = i64::from(ID6) + 1;
    encode::info6(&mut wrong, Kind::Extended, &info);
    let mut wrong_more = Vec::new();
    encode::more(&mut wrong_more, 7, 1, &[client(0)]);
    let cut = iext(1, vec![client(0)])[..30].to_vec();
    let (a, m) = query6(
        ID6,
        &[
            wrong,
            wrong_more,
            cut,
            b"\xff\xff\xff\xff\xff\xff\xff\xff\xff\xffiext99999999999999999999999\0".to_vec(),
        ],
    );
    assert!(a.is_none());
    assert!(m.last_dropped().is_some());
    // 0.7: an info before the handshake, and one to another token, are dropped.
    let t0 = Instant::now();
    let mut m = c7::QueryMachine::new(
        c7::QueryOptions::default(),
        Timing::default(),
        0x1122_3344,
        t0,
    );
    let mut d = Vec::new();
    assert!(m.poll_transmit_into(t0, &mut d));
    m.handle_datagram(t0, &capture("tw07-0.7.5-real", "inf3"));
    assert!(m.take_result().is_none());
    let mut tok = Vec::new();
    encode::token_reply(&mut tok, 0x1122_3344, 1);
    m.handle_datagram(t0, &tok);
    // The recorded inf3 is from server token a2d6b5c3, not 1.
    m.handle_datagram(t0, &capture("tw07-0.7.5-real", "inf3"));
    assert!(m.take_result().is_none());
}

#[test]
fn every_prefix_of_every_capture_decodes_or_errs() {
    for (name, replies) in [
        ("ddnet-16.4-real", &["iext", "inf3"][..]),
        ("ddnet-shaped-20", &["iext", "more"][..]),
        ("vanilla-shaped", &["inf3"][..]),
    ] {
        for r in replies {
            let b = capture(name, r);
            for n in 0..b.len() {
                let _ = wire::decode_reply6(&b[..n]);
            }
        }
    }
    for name in ["tw07-0.7.5-real", "ddnet-16.4-07-real"] {
        let b = capture(name, "inf3");
        for n in 0..b.len() {
            let _ = wire::decode_reply7(&b[..n], None);
        }
    }
}
