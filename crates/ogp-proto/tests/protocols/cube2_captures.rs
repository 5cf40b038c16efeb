//! Cube 2 against the datagrams in `tests/data/cube2/` (see SOURCES.md there): the real
//! Sauerbraten and Red Eclipse 1.6 replies recorded here and an extinfo exchange with
//! players constructed from Sauerbraten's layout, each fed to the client as its server's
//! answers; and the hostile servers: lying counts, endless extinfo datagrams, drips,
//! oversize datagrams, spoofed replies.

use std::time::{Duration, Instant};

use ogp_proto::client::Answer;
use ogp_proto::client::{QueryDriver, Timing};
use ogp_proto::cube2::client::{QueryMachine, QueryOptions, MAX_EXT_DATAGRAMS};
use ogp_proto::cube2::wire::{self, ExtCommand, MAX_PLAYERS};
use ogp_proto::cube2::{describe, is_cube2_datagram, Decoded};
use ogp_proto::Protocol;
use serde_json::Value;

const ID: u32 = 0x0102_0304;

fn unhex(s: &str) -> Vec<u8> {
    (0..s.len() / 2)
        .map(|i| u8::from_str_radix(&s[2 * i..2 * i + 2], 16).unwrap())
        .collect()
}

fn capture(name: &str) -> Value {
    let path = format!("{}/tests/data/cube2/{name}", env!("CARGO_MANIFEST_DIR"));
    serde_json::from_slice(&std::fs::read(&path).unwrap()).unwrap()
}

fn responses(c: &Value, key: &str) -> Vec<Vec<u8>> {
    c["responses"][key]
        .as_array()
        .unwrap()
        .iter()
        .map(|h| unhex(h.as_str().unwrap()))
        .collect()
}

/// Runs a query whose server answers each request with the capture's replies to it.
fn run(c: &Value) -> Answer<ogp_proto::cube2::client::Details> {
    let t0 = Instant::now();
    let mut m = QueryMachine::new(QueryOptions::default(), Timing::default(), ID, t0);
    let mut t = t0;
    for _ in 0..20 {
        while let Some(d) = m.poll_transmit(t) {
            for (key, req) in c["requests"].as_object().unwrap() {
                if d == unhex(req.as_str().unwrap()) {
                    for r in responses(c, key) {
                        m.handle_datagram(t, &r);
                    }
                }
            }
        }
        if let Some(r) = m.take_result() {
            return r.unwrap();
        }
        t = m.poll_timeout().unwrap();
        m.handle_timeout(t);
    }
    panic!("the query did not end");
}

#[test]
fn the_real_sauerbraten_answers() {
    let c = capture("sauerbraten-2020.json");
    let a = run(&c);
    assert_eq!(a.protocol, Protocol::Cube2);
    let s = &a.status;
    assert_eq!(s.host_name.as_deref(), Some("Sauer capture"));
    assert_eq!(s.game_name.as_deref(), Some("sauerbraten"));
    assert_eq!(s.game_version.as_deref(), Some("260"));
    assert_eq!(s.game_mode.as_deref(), Some("ffa"));
    assert_eq!((s.player_count, s.slot_max), (Some(0), Some(12)));
    assert_eq!(s.uptime_seconds, Some(2));
    assert_eq!(s.players.as_ref().map(Vec::len), Some(0));
    assert!(s.teams.is_none());
    assert!(a.warnings.is_empty(), "{:?}", a.warnings);
    assert_eq!(a.datagrams, 4);
    // Every reply is told apart without its request.
    for key in ["ping", "uptime", "players", "teams"] {
        for d in responses(&c, key) {
            assert!(is_cube2_datagram(&d), "{key}");
            assert_eq!(ogp_proto::detect::guess(&d), Some(Protocol::Cube2), "{key}");
        }
    }
}

#[test]
fn the_real_red_eclipse_answers() {
    let c = capture("redeclipse-1.6.json");
    let a = run(&c);
    let s = &a.status;
    assert_eq!(s.host_name.as_deref(), Some("RE capture"));
    assert_eq!(s.game_name.as_deref(), Some("redeclipse"));
    assert_eq!(s.game_version.as_deref(), Some("1.6.0"));
    assert_eq!(s.game_mode.as_deref(), Some("deathmatch"));
    assert_eq!(s.map.as_ref().map(|m| m.name.as_str()), Some("futuresport"));
    assert_eq!((s.player_count, s.slot_max), (Some(0), Some(12)));
    let rules = s.rules.as_ref().unwrap();
    assert_eq!(rules.get("time_left"), Some("600"));
    assert_eq!(rules.get("branch"), Some(""));
    // No extinfo asked of Red Eclipse: one datagram each way.
    assert_eq!(a.datagrams, 1);
    assert!(a.warnings.is_empty());
    let d = &responses(&c, "ping")[0];
    assert!(matches!(describe(d), Some(Decoded::Ping(p)) if p.attrs.len() == 15));
}

#[test]
fn players_teams_and_uptime_of_the_constructed_exchange() {
    let c = capture("sauerbraten-players-constructed.json");
    let a = run(&c);
    let s = &a.status;
    assert_eq!(s.host_name.as_deref(), Some("Capture test"));
    assert_eq!(s.game_mode.as_deref(), Some("ctf"));
    assert_eq!(s.password, Some(false));
    assert_eq!(s.uptime_seconds, Some(70000));
    let ps = s.players.as_ref().unwrap();
    let names: Vec<_> = ps.iter().map(|p| p.name.as_deref().unwrap()).collect();
    assert_eq!(names, ["alice", "b\u{fffd}b", "bot"]);
    let (alice, b, bot) = (&ps[0], &ps[1], &ps[2]);
    assert_eq!(
        (alice.frags, alice.deaths, alice.ping),
        (Some(12), Some(3), Some(31))
    );
    assert_eq!(alice.extra.get("flags").map(|v| v.as_str()), Some("2"));
    assert_eq!(alice.extra.get("accuracy").map(|v| v.as_str()), Some("41"));
    assert_eq!(alice.extra.get("privilege").map(|v| v.as_str()), Some("1"));
    assert_eq!(alice.extra.get("ip").map(|v| v.as_str()), Some("192.0.2.x"));
    assert_eq!(
        (b.frags, b.team_kills, b.dead),
        (Some(-1), Some(1), Some(true))
    );
    assert_eq!((bot.bot, bot.id), (Some(true), Some(128)));
    assert_eq!(bot.extra.get("state").map(|v| v.as_str()), Some("5"));
    let teams = s.teams.as_ref().unwrap();
    let t: Vec<_> = teams
        .iter()
        .map(|t| (t.name.as_deref().unwrap(), t.score))
        .collect();
    assert_eq!(t, [("good", Some(3)), ("evil", Some(1))]);
    assert_eq!((alice.team, b.team, bot.team), (Some(0), Some(1), Some(1)));
    assert!(a.warnings.is_empty(), "{:?}", a.warnings);
}

// ------------------------------------------------------------------------------------
// Hostile servers

fn ping_reply(clients: i32) -> Vec<u8> {
    let mut d = Vec::new();
    wire::PingReply {
        clients,
        attrs: vec![260, 0, 0, 8, 0],
        description: b"evil".to_vec(),
        ..Default::default()
    }
    .encode(&wire::ping_request(ID), &mut d);
    d
}

fn ext(cmd: ExtCommand, rest: &[i32]) -> Vec<u8> {
    let mut d = wire::ext_request(cmd, ID);
    for &v in [-1, 105].iter().chain(rest) {
        wire::put_int(&mut d, v);
    }
    d
}

fn player(cn: i32) -> Vec<u8> {
    let mut d = ext(ExtCommand::Players, &[0, -11]);
    wire::PlayerStats {
        cn,
        name: b"p".to_vec(),
        ..Default::default()
    }
    .encode(&mut d);
    d
}

/// A machine past its ping, with the extinfo requests sent.
fn in_extinfo(t0: Instant, timing: Timing) -> QueryMachine {
    let mut m = QueryMachine::new(QueryOptions::default(), timing, ID, t0);
    while m.poll_transmit(t0).is_some() {}
    m.handle_datagram(t0, &ping_reply(3));
    while m.poll_transmit(t0).is_some() {}
    m
}

#[test]
fn lying_counts_are_errors_not_allocations() {
    // An attribute count far past what the datagram holds, a negative one, one at the
    // 32-bit limit.
    for count in [1_000_000, -1, i32::MAX] {
        let mut d = wire::ping_request(ID);
        wire::put_int(&mut d, 0);
        wire::put_int(&mut d, count);
        let t0 = Instant::now();
        let mut m = QueryMachine::new(QueryOptions::default(), Timing::default(), ID, t0);
        m.handle_datagram(t0, &d);
        assert_eq!(m.last_dropped(), Some("does not decode"), "{count}");
    }
    // A player count of a billion in the ping reply is reported as sent, nothing more.
    let t0 = Instant::now();
    let mut m = in_extinfo(t0, Timing::default());
    // An ids datagram listing more client numbers than the engine has.
    let many: Vec<i32> = (0..=MAX_PLAYERS as i32).collect();
    let mut rest = vec![0, -10];
    rest.extend(&many);
    m.handle_datagram(t0, &ext(ExtCommand::Players, &rest));
    assert_eq!(m.last_dropped(), Some("does not decode"));
    // A name longer than the engine's strings.
    let mut d = ext(ExtCommand::Players, &[0, -11, 0, 0]);
    wire::put_string(&mut d, &[b'x'; 5000]);
    m.handle_datagram(t0, &d);
    assert_eq!(m.last_dropped(), Some("does not decode"));
    // A team count past ours and a base count past ours.
    let mut d = ext(ExtCommand::Teams, &[0, 2, 100]);
    for _ in 0..70 {
        wire::put_string(&mut d, b"t");
        wire::put_int(&mut d, 0);
        wire::put_int(&mut d, -1);
    }
    m.handle_datagram(t0, &d);
    assert_eq!(m.last_dropped(), Some("does not decode"));
    let mut d = ext(ExtCommand::Teams, &[0, 2, 100]);
    wire::put_string(&mut d, b"t");
    wire::put_int(&mut d, 0);
    wire::put_int(&mut d, 1_000_000_000);
    m.handle_datagram(t0, &d);
    assert_eq!(m.last_dropped(), Some("does not decode"));
}

#[test]
fn a_player_count_that_lies_does_not_wait_for_players() {
    // The ping says 100 players, the ids list two: the two are the answer.
    let t0 = Instant::now();
    let mut m = QueryMachine::new(QueryOptions::default(), Timing::default(), ID, t0);
    while m.poll_transmit(t0).is_some() {}
    m.handle_datagram(t0, &ping_reply(100));
    while m.poll_transmit(t0).is_some() {}
    m.handle_datagram(t0, &ext(ExtCommand::Uptime, &[5]));
    m.handle_datagram(t0, &ext(ExtCommand::Teams, &[1, 0, 0]));
    m.handle_datagram(t0, &ext(ExtCommand::Players, &[0, -10, 1, 2]));
    m.handle_datagram(t0, &player(1));
    m.handle_datagram(t0, &player(2));
    let a = m.take_result().unwrap().unwrap();
    assert_eq!(a.status.player_count, Some(100));
    assert_eq!(a.status.players.unwrap().len(), 2);
}

#[test]
fn endless_extinfo_datagrams_end_the_query() {
    // Distinct players the ids never listed, then the same player again and again: the
    // query ends within MAX_EXT_DATAGRAMS, with what came and a warning.
    let t0 = Instant::now();
    let mut m = in_extinfo(t0, Timing::default());
    m.handle_datagram(t0, &ext(ExtCommand::Players, &[0, -10, 0, 1]));
    let mut sent = 0;
    while m.take_result().is_none() {
        let cn = if sent % 2 == 0 { 0 } else { 1000 + sent };
        m.handle_datagram(t0, &player(cn));
        sent += 1;
        assert!(sent <= MAX_EXT_DATAGRAMS as i32 + 1, "never ended");
    }
    let mut m2 = in_extinfo(t0, Timing::default());
    // Players before any ids: at most MAX_PLAYERS kept.
    for cn in 0..(2 * MAX_PLAYERS as i32) {
        m2.handle_datagram(t0, &player(cn));
    }
    let a = loop {
        if let Some(r) = m2.take_result() {
            break r.unwrap();
        }
        let t = m2.poll_timeout().unwrap();
        m2.handle_timeout(t);
        while m2.poll_transmit(t).is_some() {}
    };
    assert_eq!(a.details.players.len(), MAX_PLAYERS);
}

#[test]
fn a_drip_of_repeats_does_not_keep_the_query_alive() {
    // A server that answers the ping, then sends the same uptime reply every 50 ms
    // forever: the query ends by its retries, well within its total timeout.
    let t0 = Instant::now();
    let timing = Timing::default()
        .attempt_timeout(Duration::from_millis(500))
        .retries(2)
        .total_timeout(Duration::from_secs(10));
    let mut m = in_extinfo(t0, timing);
    let drip = ext(ExtCommand::Uptime, &[5]);
    let mut t = t0;
    let mut n = 0;
    loop {
        m.handle_datagram(t, &drip);
        while m.poll_transmit(t).is_some() {}
        if let Some(r) = m.take_result() {
            let a = r.unwrap();
            assert!(a.warnings.iter().any(|w| w.contains("no reply")));
            break;
        }
        t += Duration::from_millis(50);
        if m.poll_timeout().is_some_and(|d| d <= t) {
            m.handle_timeout(t);
        }
        n += 1;
        assert!(n < 200, "the drip kept the query alive");
    }
    assert!(t - t0 < Duration::from_secs(10));
}

#[test]
fn oversize_and_spoofed_datagrams() {
    let t0 = Instant::now();
    let mut m = QueryMachine::new(QueryOptions::default(), Timing::default(), ID, t0);
    while m.poll_transmit(t0).is_some() {}
    // 64 KiB: a ping reply whose strings never end.
    let mut d = wire::ping_request(ID);
    d.extend_from_slice(&[0, 5, 1, 2, 3, 4, 5]);
    d.resize(65_535, b'a');
    m.handle_datagram(t0, &d);
    assert_eq!(m.last_dropped(), Some("does not decode"));
    // A reply to someone else's ping.
    let mut other = Vec::new();
    wire::PingReply::default().encode(&wire::ping_request(ID + 1), &mut other);
    m.handle_datagram(t0, &other);
    assert_eq!(m.last_dropped(), Some("not the reply to our ping"));
    assert!(m.take_result().is_none());
    // Random bytes are never guessed as Cube 2 extinfo, nor panic the describer.
    let mut x = 0x1234_5678u32;
    for len in 0..300 {
        let d: Vec<u8> = (0..len)
            .map(|_| {
                x ^= x << 13;
                x ^= x >> 17;
                x ^= x << 5;
                x.to_le_bytes()[0]
            })
            .collect();
        let _ = describe(&d);
    }
}

#[test]
fn the_catalogue_names_each_game_from_its_answer() {
    use ogp_proto::games::{catalogue, Rule};
    let c = catalogue();
    for (file, id, query_port) in [
        ("sauerbraten-2020.json", "sauerbraten", 28786),
        ("redeclipse-1.6.json", "redeclipse", 28802),
    ] {
        let s = run(&capture(file)).status;
        let got = c.identify(Protocol::Cube2, &s).unwrap();
        assert_eq!((got.game.id.as_str(), got.rule), (id, Rule::Cube2Game));
        // The same game name in another protocol's answer says nothing.
        assert!(c.identify(Protocol::Ase, &s).is_none());
        assert_eq!(c.get(id).unwrap().query_port(None), Some(query_port));
    }
}
