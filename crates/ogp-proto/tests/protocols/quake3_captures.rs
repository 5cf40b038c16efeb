//! The Quake III codec, mapping and client against real replies of real servers, one per
//! dialect (`tests/data/quake3/`, sources in `SOURCES.md`): ioquake3/OpenArena, Quake III
//! 1.32c, Urban Terror, Call of Duty 1, 2 and 4, Wolfenstein: Enemy Territory, Warsow,
//! DarkPlaces (Nexuiz info, Xonotic status) and FiveM.
//!
//! For every capture: it decodes; it re-encodes to the same bytes; it maps to the status
//! the test expects (host name without colour codes, map, game, slots, players with raw
//! and plain names); and the model encodes to a reply that decodes to the same model
//! (decode → model → encode → decode). The client machine reads captures as its server's
//! replies, and drops a reply whose challenge is not its own.

use std::path::PathBuf;
use std::time::{Duration, Instant};

use ogp_proto::client::{Machine, Options, QueryDriver, QueryError};
use ogp_proto::quake3::client::{QueryMachine, QueryOptions};
use ogp_proto::quake3::mapping::{reply_to_status, status_to_reply};
use ogp_proto::quake3::{decode_reply, ReplyKind};
use ogp_proto::{Protocol, Status};

fn capture(name: &str) -> Vec<u8> {
    let p = PathBuf::from(concat!(env!("CARGO_MANIFEST_DIR"), "/tests/data/quake3")).join(name);
    std::fs::read(&p).unwrap_or_else(|e| panic!("{}: {e}", p.display()))
}

const ALL: [&str; 11] = [
    "openarena_info.bin",
    "ioq3_baseq3_status.bin",
    "urbanterror_status.bin",
    "cod1_status.bin",
    "cod2_status.bin",
    "cod4x_status.bin",
    "wolfet_status.bin",
    "warsow_status.bin",
    "fivem_info.bin",
    "darkplaces_nexuiz_info.bin",
    "darkplaces_xonotic_status.bin",
];

fn status_of(bytes: &[u8]) -> Status {
    let d = decode_reply(bytes).unwrap();
    let mut s = Status::default();
    reply_to_status(&d.reply, &mut s);
    s
}

#[test]
fn every_capture_decodes_and_encodes_back_to_its_bytes() {
    for name in ALL {
        let bytes = capture(name);
        let d = decode_reply(&bytes).unwrap_or_else(|e| panic!("{name}: {e}"));
        assert!(d.warnings.is_empty(), "{name}: {:?}", d.warnings);
        assert_eq!(d.reply.to_bytes(), bytes, "{name}");
        assert_eq!(
            ogp_proto::detect::guess(&bytes),
            Some(Protocol::Quake3),
            "{name}"
        );
    }
}

/// decode → model → encode → decode gives the same model (info replies carry the short
/// ioquake3 set of variables, so only their mapped fields are compared, and every
/// variable encoded is one the server sent, with its value).
#[test]
fn every_capture_survives_model_and_back() {
    for name in ALL {
        let bytes = capture(name);
        let first = status_of(&bytes);
        let kind = decode_reply(&bytes).unwrap().reply.kind;
        let again = status_to_reply(&first, kind);
        let second = status_of(&again.to_bytes());
        match kind {
            ReplyKind::Status => assert_eq!(second, first, "{name}"),
            ReplyKind::Info => {
                let mut a = first.clone();
                let mut b = second.clone();
                let (ra, rb) = (a.rules.take().unwrap(), b.rules.take().unwrap());
                assert_eq!(b, a, "{name}");
                for (k, v) in rb.iter() {
                    assert_eq!(ra.get(k), Some(v), "{name}: {k}");
                }
            }
        }
        // The state file keeps it all, raw names included.
        assert_eq!(
            Status::from_json(&first.to_json_pretty()).unwrap(),
            first,
            "{name}"
        );
    }
}

fn names(s: &Status) -> Vec<(Option<&str>, Option<&str>)> {
    s.players
        .iter()
        .flatten()
        .map(|p| (p.name.as_deref(), p.name_raw.as_deref()))
        .collect()
}

#[test]
fn openarena_info() {
    let s = status_of(&capture("openarena_info.bin"));
    assert_eq!(s.host_name.as_deref(), Some("Bar OA"));
    // The name with its colours is kept in the model (and so in the JSON).
    assert_eq!(s.host_name_raw.as_deref(), Some("^1Bar ^7OA"));
    assert_eq!(
        s.rules.as_ref().unwrap().get("hostname"),
        Some("^1Bar ^7OA")
    );
    assert_eq!(s.map.as_ref().unwrap().name, "oa_dm1");
    assert_eq!(s.game_name.as_deref(), Some("Quake3Arena"));
    assert_eq!(s.game_type.as_deref(), Some("0"));
    assert_eq!(
        (s.slot_max, s.player_count(), s.bot_count()),
        (Some(8), Some(0), Some(0))
    );
    assert_eq!(s.password, Some(false));
    assert_eq!(s.rules.as_ref().unwrap().get("protocol"), Some("71"));
    // our own nonce is not a server variable
    assert_eq!(s.rules.as_ref().unwrap().get("challenge"), None);
}

#[test]
fn the_raw_host_name_is_written_back_without_rules() {
    // A state file with host_name_raw and no rules answers with the colours.
    let mut s = Status::default();
    s.host_name = Some("Bar OA".into());
    s.host_name_raw = Some("^1Bar ^7OA".into());
    for kind in [ReplyKind::Info, ReplyKind::Status] {
        let back = status_of(&status_to_reply(&s, kind).to_bytes());
        assert_eq!(
            back.host_name_raw.as_deref(),
            Some("^1Bar ^7OA"),
            "{kind:?}"
        );
    }
    // A raw name that no longer says the plain one is not used.
    s.host_name = Some("Edited".into());
    let back = status_of(&status_to_reply(&s, ReplyKind::Info).to_bytes());
    assert_eq!(
        (back.host_name.as_deref(), back.host_name_raw),
        (Some("Edited"), None)
    );
}

#[test]
fn ioquake3_baseq3_status() {
    let s = status_of(&capture("ioq3_baseq3_status.bin"));
    assert_eq!(s.host_name.as_deref(), Some("XXXADULTS*ONLYXXX"));
    assert_eq!(s.map.as_ref().unwrap().name, "q3tourney4");
    assert_eq!(s.game_name.as_deref(), Some("baseq3"));
    assert_eq!(
        s.game_version.as_deref(),
        Some("Q3 1.32c linux-i386 May  8 2009")
    );
    assert_eq!((s.slot_max, s.reserved_slots), (Some(64), Some(0)));
    assert_eq!(s.player_count(), Some(10));
    let p = &s.players.as_ref().unwrap()[0];
    assert_eq!((p.score, p.ping, p.team), (Some(0), Some(46), None));
    assert_eq!(
        names(&s)[0],
        (Some("*ES*Brochillin"), Some("^w*ES*^3Bro^7chillin"))
    );
    assert_eq!(s.rules.as_ref().unwrap().len(), 28);
}

#[test]
fn urban_terror_status() {
    let s = status_of(&capture("urbanterror_status.bin"));
    assert_eq!(s.host_name.as_deref(), Some("|RFA| RisenFromAshes.us"));
    assert_eq!(s.map.as_ref().unwrap().name, "ut4_wid");
    assert_eq!(s.game_name.as_deref(), Some("q3urt43"));
    assert_eq!(s.game_type.as_deref(), Some("7"));
    // 32 slots, 4 of them private
    assert_eq!((s.slot_max, s.reserved_slots), (Some(28), Some(4)));
    assert_eq!(s.player_count(), Some(22));
    // an empty name is a player too
    assert_eq!(names(&s)[1], (Some(""), None));
    assert_eq!(s.players.as_ref().unwrap()[7].ping, Some(255));
}

#[test]
fn call_of_duty_1_status() {
    let s = status_of(&capture("cod1_status.bin"));
    assert_eq!(s.host_name.as_deref(), Some("neXus#TDM"));
    assert_eq!(s.map.as_ref().unwrap().name, "mp_railyard");
    assert_eq!(s.game_type.as_deref(), Some("tdm"));
    assert_eq!(s.game_version.as_deref(), Some("1.1"));
    assert_eq!(s.password, Some(false));
    assert_eq!(s.player_count(), Some(18));
    // `^^` is no code: the first caret stays, the second starts one
    assert_eq!(
        names(&s)[0],
        (
            Some("^0East^2|^0wood^1.     "),
            Some("^^00East^^22|^^00wood^^11.     ")
        )
    );
    // coloured keys are kept as sent
    assert_eq!(s.rules.as_ref().unwrap().get("^5Owner^6"), Some("bdz"));
}

#[test]
fn call_of_duty_2_status() {
    let s = status_of(&capture("cod2_status.bin"));
    assert_eq!(
        s.host_name.as_deref(),
        Some("IAF Custom#1 eXtreme+ v2.9+   [www.IAOFF.com]")
    );
    assert_eq!(s.game_name.as_deref(), Some("Call of Duty 2"));
    assert_eq!(s.game_type.as_deref(), Some("tdm"));
    assert_eq!(s.game_version.as_deref(), Some("1.3"));
    assert_eq!(s.map.as_ref().unwrap().name, "mp_coastal_guns");
    assert_eq!((s.slot_max, s.reserved_slots), (Some(40), Some(0)));
    assert_eq!(s.password, Some(false));
    assert_eq!(s.player_count(), Some(24));
    let ps = s.players.as_ref().unwrap();
    // 999 is how CoD shows a player still connecting
    assert_eq!(
        (ps[2].name.as_deref(), ps[2].score, ps[2].ping),
        (Some("SchnappDich"), Some(0), Some(999))
    );
    // trailing blanks are the name's, as sent
    assert_eq!(
        ps[9].name.as_deref(),
        Some("BETEPAH                        ")
    );
    assert_eq!(
        names(&s)[1],
        (Some("IAF Je$ter"), Some("^2I^3A^2F ^7Je^2$^7ter"))
    );
    assert_eq!(s.rules.as_ref().unwrap().get("_Clan"), Some("IAF"));
}

#[test]
fn call_of_duty_4_status() {
    let s = status_of(&capture("cod4x_status.bin"));
    assert_eq!(s.host_name.as_deref(), Some("=|h4x|=War 24/7 Server COD4"));
    assert_eq!(s.game_name.as_deref(), Some("Call of Duty 4"));
    assert_eq!(s.game_type.as_deref(), Some("war"));
    assert_eq!(s.map.as_ref().unwrap().name, "mp_crash");
    assert_eq!(s.slot_max, Some(50));
    assert_eq!(s.player_count(), Some(14));
    let p = &s.players.as_ref().unwrap()[4];
    assert_eq!(
        (p.name.as_deref(), p.score, p.ping),
        (Some("carlos"), Some(222), Some(108))
    );
}

#[test]
fn enemy_territory_status() {
    let s = status_of(&capture("wolfet_status.bin"));
    assert_eq!(s.host_name.as_deref(), Some("F|A RECRUITING XP SAVE"));
    assert_eq!(s.game_name.as_deref(), Some("jaymod"));
    assert_eq!(s.map.as_ref().unwrap().name, "et_beach");
    assert_eq!(s.slot_max, Some(51));
    assert_eq!(s.player_count(), Some(41));
    // ET colours any character: ^? ^h ^q ^Q …
    assert_eq!(names(&s)[12].0, Some("Z0_omBiE"));
    assert_eq!(names(&s)[23].0, Some("danger "));
    assert_eq!(s.players.as_ref().unwrap()[23].score, Some(12_118_375));
}

#[test]
fn warsow_status_has_the_team_after_the_name() {
    let s = status_of(&capture("warsow_status.bin"));
    assert_eq!(
        s.host_name.as_deref(),
        Some("___ gibcity-|-insta ___ #1 /// bb2")
    );
    assert_eq!(s.game_name.as_deref(), Some("Warsow"));
    assert_eq!(s.map.as_ref().unwrap().name, "bipbeta2");
    assert_eq!(s.slot_max, Some(17));
    assert_eq!(s.player_count(), Some(17));
    let ps = s.players.as_ref().unwrap();
    assert_eq!(
        (ps[0].name.as_deref(), ps[0].team),
        (Some("Stylo."), Some(2))
    );
    assert_eq!(
        (ps[6].score, ps[6].ping, ps[6].team),
        (Some(-9999), Some(0), Some(0))
    );
}

#[test]
fn fivem_info() {
    let s = status_of(&capture("fivem_info.bin"));
    assert!(s
        .host_name
        .as_deref()
        .unwrap()
        .starts_with("State of Union RP | "));
    assert_eq!(s.game_name.as_deref(), Some("CitizenFX"));
    assert_eq!(s.game_type.as_deref(), Some("Freeroam"));
    assert_eq!(s.map.as_ref().unwrap().name, "fivem-map-skater");
    assert_eq!((s.slot_max, s.player_count()), (Some(30), Some(4)));
    assert_eq!(s.rules.as_ref().unwrap().get("iv"), Some("173148099"));
}

#[test]
fn darkplaces_info() {
    let s = status_of(&capture("darkplaces_nexuiz_info.bin"));
    assert_eq!(s.host_name.as_deref(), Some("[o8] Nexican v2.5.1"));
    assert_eq!(s.game_name.as_deref(), Some("Nexuiz"));
    assert_eq!(s.map.as_ref().unwrap().name, "dance");
    assert_eq!(
        (s.slot_max, s.player_count(), s.bot_count()),
        (Some(24), Some(4), Some(2))
    );
    assert!(s
        .rules
        .as_ref()
        .unwrap()
        .get("qcstatus")
        .unwrap()
        .starts_with("ctf:2.5.1"));
}

#[test]
fn darkplaces_xonotic_status() {
    let s = status_of(&capture("darkplaces_xonotic_status.bin"));
    assert_eq!(s.host_name.as_deref(), Some("Xonotic 0.7.0 CTF Server"));
    assert_eq!(s.game_name.as_deref(), Some("Xonotic"));
    assert_eq!(s.map.as_ref().unwrap().name, "lostspace2");
    assert_eq!(s.slot_max, Some(14));
    assert_eq!(s.bot_count(), Some(0));
    // `clients` says 12; the reply lists 7 (the server cut the list): both are kept
    assert_eq!(s.players.as_ref().map(Vec::len), Some(7));
    assert_eq!(s.rules.as_ref().unwrap().get("clients"), Some("12"));
    let plain: Vec<_> = names(&s).iter().map(|(n, _)| n.unwrap()).collect();
    // ^xRGB (upper and lower case hex) and ^digit codes go; UTF-8 stays
    assert_eq!(
        plain,
        ["[力] Integer", "Akd", "me", "É", "icetea", "*rei", "SWeed"]
    );
    assert_eq!(names(&s)[3].1, Some("^xF00É^7"));
    let p = &s.players.as_ref().unwrap()[2];
    assert_eq!((p.score, p.ping), (Some(-666), Some(41)));
}

#[test]
fn darkplaces_status_lines_carry_the_team_before_the_name_and_rgb_colours() {
    // DarkPlaces writes `score ping team "name"` (its sv_main.c), names with ^xRGB.
    let bytes = b"\xff\xff\xff\xffstatusResponse\n\\gamename\\Xonotic\\hostname\\^x4F0Xon\\sv_maxclients\\16\\bots\\1\n10 40 1 \"^xF00red^7 one\"\n-5 0 2 \"bot\"\n";
    let s = status_of(bytes);
    assert_eq!(s.host_name.as_deref(), Some("Xon"));
    assert_eq!(s.bot_count(), Some(1));
    let ps = s.players.as_ref().unwrap();
    assert_eq!(
        (ps[0].name.as_deref(), ps[0].name_raw.as_deref(), ps[0].team),
        (Some("red one"), Some("^xF00red^7 one"), Some(1))
    );
    assert_eq!((ps[1].score, ps[1].team), (Some(-5), Some(2)));
    let again = status_to_reply(&s, ReplyKind::Status).to_bytes();
    assert_eq!(again, bytes.to_vec());
}

/// Runs `m` against a server that answers each request with `reply(request)`.
fn drive(
    m: &mut QueryMachine,
    mut reply: impl FnMut(&[u8]) -> Option<Vec<u8>>,
) -> Result<ogp_proto::client::Answer<ogp_proto::quake3::client::Details>, QueryError> {
    let mut now = Instant::now();
    for _ in 0..100 {
        while let Some(d) = m.poll_transmit(now) {
            if let Some(r) = reply(&d) {
                m.handle_datagram(now + Duration::from_millis(5), &r);
            }
        }
        if let Some(r) = m.take_result() {
            return r;
        }
        now = m.poll_timeout().expect("a running query has a timeout");
        m.handle_timeout(now);
    }
    panic!("query did not end");
}

fn with_challenge(capture: &[u8], challenge: &str) -> Vec<u8> {
    let mut d = decode_reply(capture).unwrap().reply;
    match d.vars.iter_mut().find(|(k, _)| k == "challenge") {
        Some(slot) => slot.1 = challenge.into(),
        None => d.vars.push(("challenge".into(), challenge.into())),
    }
    d.to_bytes()
}

#[test]
fn client_reads_info_then_status_and_checks_the_challenge() {
    let mut m = QueryMachine::new(
        QueryOptions::default(),
        Default::default(),
        0xdead_beef,
        Instant::now(),
    );
    assert_eq!(m.challenge(), "deadbeef");
    let mut asked = Vec::new();
    let answer = drive(&mut m, |req| {
        let r = ogp_proto::quake3::decode_request(req).unwrap();
        asked.push(r.clone());
        let c = r.challenge.unwrap();
        Some(match r.command {
            ogp_proto::quake3::Command::GetInfo => {
                with_challenge(&capture("openarena_info.bin"), &c)
            }
            ogp_proto::quake3::Command::GetStatus => capture("ioq3_baseq3_status.bin"),
        })
    })
    .unwrap();
    assert_eq!(asked.len(), 2);
    assert_eq!(answer.protocol, Protocol::Quake3);
    assert_eq!(answer.datagrams, 2);
    // the status reply's variables win over the info reply's
    assert_eq!(
        answer.status.host_name.as_deref(),
        Some("XXXADULTS*ONLYXXX")
    );
    assert_eq!(answer.status.player_count(), Some(10));
    assert_eq!(
        answer.details.info.as_ref().unwrap().get("challenge"),
        Some("deadbeef")
    );
}

#[test]
fn client_drops_a_reply_with_another_challenge() {
    // A spoofed or stale infoResponse (it echoes someone else's challenge) is not ours.
    let mut opts = QueryOptions::default();
    opts.status = false;
    let timing = ogp_proto::client::Timing::default().retries(1);
    let mut m = QueryMachine::new(opts, timing, 7, Instant::now());
    let err = drive(&mut m, |_| Some(capture("openarena_info.bin"))).unwrap_err();
    assert!(err.is_timeout(), "{err}");
    // the same bytes with our challenge are taken
    let mut m = QueryMachine::new(opts_info_only(), timing, 7, Instant::now());
    let ok = drive(&mut m, |_| {
        Some(with_challenge(&capture("openarena_info.bin"), "00000007"))
    })
    .unwrap();
    assert_eq!(ok.status.host_name.as_deref(), Some("Bar OA"));
}

fn opts_info_only() -> QueryOptions {
    let mut o = QueryOptions::default();
    o.status = false;
    o
}

#[test]
fn client_goes_on_when_a_step_gets_no_reply() {
    // FiveM-like: answers getinfo only.
    let timing = ogp_proto::client::Timing::default().retries(0);
    let mut m = QueryMachine::new(QueryOptions::default(), timing, 1, Instant::now());
    let a = drive(&mut m, |req| {
        let r = ogp_proto::quake3::decode_request(req).unwrap();
        (r.command == ogp_proto::quake3::Command::GetInfo)
            .then(|| with_challenge(&capture("fivem_info.bin"), &r.challenge.unwrap()))
    })
    .unwrap();
    assert_eq!(a.status.player_count(), Some(4));
    assert_eq!(a.warnings, ["no reply to getstatus"]);
}

#[test]
fn the_shared_machine_speaks_quake3() {
    let now = Instant::now();
    let mut m = Machine::new(Protocol::Quake3, &Options::default(), 0x0102_0304, now);
    let first = m.poll_transmit(now).unwrap();
    assert_eq!(first, b"\xff\xff\xff\xffgetinfo 01020304");
    assert!(m.claims(&capture("openarena_info.bin")));
    assert!(!Machine::new(Protocol::A2s, &Options::default(), 1, now)
        .claims(&capture("openarena_info.bin")));
}

/// A query's result, each request sent (its command and when, from the start), and when
/// it ended.
type Timed = (
    Result<ogp_proto::client::Answer<ogp_proto::quake3::client::Details>, QueryError>,
    Vec<(String, Duration)>,
    Duration,
);

/// Runs `m` against a server that answers each request with `reply(request)` 5 ms
/// later, on a clock that starts at `t0`.
fn drive_timed(
    m: &mut QueryMachine,
    t0: Instant,
    mut reply: impl FnMut(&[u8]) -> Option<Vec<u8>>,
) -> Timed {
    let mut now = t0;
    let mut sends = Vec::new();
    for _ in 0..100 {
        while let Some(d) = m.poll_transmit(now) {
            let r = ogp_proto::quake3::decode_request(&d).unwrap();
            sends.push((r.command.word().to_string(), now - t0));
            if let Some(r) = reply(&d) {
                now += Duration::from_millis(5);
                m.handle_datagram(now, &r);
            }
        }
        if let Some(r) = m.take_result() {
            return (r, sends, now - t0);
        }
        now = m.poll_timeout().expect("a running query has a timeout");
        m.handle_timeout(now);
    }
    panic!("query did not end");
}

/// `ogp query -p quake3`'s timing: 1 s, 2 retries, one step's attempts (4.75 s).
fn cli_timing() -> ogp_proto::client::Timing {
    ogp_proto::client::Timing::with_attempts(Duration::from_secs(1), 2, 1)
}

#[test]
fn a_server_that_ignores_getinfo_is_read_from_getstatus_within_the_deadline() {
    let t0 = Instant::now();
    let mut m = QueryMachine::new(QueryOptions::default(), cli_timing(), 9, t0);
    let (r, sends, took) = drive_timed(&mut m, t0, |req| {
        let r = ogp_proto::quake3::decode_request(req).unwrap();
        (r.command == ogp_proto::quake3::Command::GetStatus)
            .then(|| capture("ioq3_baseq3_status.bin"))
    });
    let a = r.expect("getstatus answered");
    assert_eq!(a.status.player_count(), Some(10));
    assert_eq!(a.warnings, ["no reply to getinfo"]);
    assert_eq!(a.details.missing, [ogp_proto::quake3::Command::GetInfo]);
    // getinfo had half of the 4.75 s (sent at 0 and 1 s); getstatus went out at 2.375 s.
    let words: Vec<&str> = sends.iter().map(|(w, _)| w.as_str()).collect();
    assert_eq!(words, ["getinfo", "getinfo", "getstatus"]);
    assert_eq!(sends[2].1, Duration::from_micros(2_375_000));
    assert!(took < Duration::from_millis(2400), "{took:?}");
}

#[test]
fn a_silent_server_costs_the_same_deadline_split_between_the_steps() {
    let t0 = Instant::now();
    let mut m = QueryMachine::new(QueryOptions::default(), cli_timing(), 9, t0);
    let (r, sends, took) = drive_timed(&mut m, t0, |_| None);
    let e = r.unwrap_err();
    assert_eq!(e.kind(), "timeout");
    assert_eq!(
        e.to_string(),
        "quake3: no answer to getinfo or getstatus (timed out after 4 datagrams sent)"
    );
    let at: Vec<(&str, u128)> = sends
        .iter()
        .map(|(w, t)| (w.as_str(), t.as_millis()))
        .collect();
    assert_eq!(
        at,
        [
            ("getinfo", 0),
            ("getinfo", 1000),
            ("getstatus", 2375),
            ("getstatus", 3375)
        ]
    );
    assert_eq!(took, Duration::from_millis(4750));
}

/// A reply of `size` bytes whose info string is longer than 16 KiB.
fn oversized(kind: &str, size: usize) -> Vec<u8> {
    let mut d = b"\xff\xff\xff\xff".to_vec();
    d.extend_from_slice(kind.as_bytes());
    d.extend_from_slice(b"\n\\hostname\\");
    d.resize(size, b'x');
    d
}

#[test]
fn a_reply_dropped_by_a_limit_says_which_limit() {
    // getinfo answered; getstatus answered with 65,000 bytes, over the 16 KiB info string.
    let t0 = Instant::now();
    let mut m = QueryMachine::new(QueryOptions::default(), cli_timing(), 3, t0);
    let (r, sends, took) = drive_timed(&mut m, t0, |req| {
        let r = ogp_proto::quake3::decode_request(req).unwrap();
        Some(match r.command {
            ogp_proto::quake3::Command::GetInfo => {
                with_challenge(&capture("openarena_info.bin"), &r.challenge.unwrap())
            }
            ogp_proto::quake3::Command::GetStatus => oversized("statusResponse", 65_000),
        })
    });
    let a = r.unwrap();
    assert_eq!(
        a.warnings,
        ["no reply to getstatus: reply of 65,000 bytes dropped: info string over our limit of 16,384"]
    );
    assert!(a
        .events
        .iter()
        .any(|e| e.to_string() == "← dropped 65000 B (over a limit of ours)"));
    // The server would send the same again: the step ends at once, not at the deadline.
    assert_eq!(sends.len(), 2);
    assert_eq!(took, Duration::from_millis(10));

    // Both steps answered too large: the error says so, not "no answer".
    let mut m = QueryMachine::new(QueryOptions::default(), cli_timing(), 3, t0);
    let (r, _, _) = drive_timed(&mut m, t0, |req| {
        let r = ogp_proto::quake3::decode_request(req).unwrap();
        Some(oversized(
            match r.command {
                ogp_proto::quake3::Command::GetInfo => "infoResponse",
                ogp_proto::quake3::Command::GetStatus => "statusResponse",
            },
            65_000,
        ))
    });
    let e = r.unwrap_err();
    assert_eq!(e.kind(), "malformed");
    assert!(e.to_string().contains("limit of 16384"), "{e}");
}
