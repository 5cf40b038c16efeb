//! The Unreal 2 codec, mapping and client against a real server's replies
//! (`tests/data/unreal2/`, sources in `SOURCES.md`): Killing Floor's information (with
//! its wave fields and a colour-coded name), a rules reply in three datagrams, and its
//! players. Then what an attacker sends: cut, oversized and never-ending replies.

use std::path::PathBuf;
use std::time::{Duration, Instant};

use ogp_proto::client::{Details, Machine, Options, QueryDriver, QueryError};
use ogp_proto::unreal2::client::{QueryMachine, QueryOptions};
use ogp_proto::unreal2::wire::{decode_reply, encode_players, DecodeLimits, Kind, Reply};
use ogp_proto::unreal2::{mapping, PlayerEntry};
use ogp_proto::{detect, DecodeErrorKind, Protocol};
use serde_json::Value;

struct Capture {
    info: Vec<Vec<u8>>,
    rules: Vec<Vec<u8>>,
    players: Vec<Vec<u8>>,
}

fn capture(name: &str) -> Capture {
    let p = PathBuf::from(concat!(env!("CARGO_MANIFEST_DIR"), "/tests/data/unreal2")).join(name);
    let text = std::fs::read_to_string(&p).unwrap_or_else(|e| panic!("{}: {e}", p.display()));
    let v: Value = serde_json::from_str(&text).unwrap();
    let list = |k: &str| -> Vec<Vec<u8>> {
        v["responses"][k]
            .as_array()
            .unwrap()
            .iter()
            .map(|h| ogp_proto::internals::from_hex(h.as_str().unwrap()).unwrap())
            .collect()
    };
    Capture {
        info: list("info"),
        rules: list("rules"),
        players: list("players"),
    }
}

/// Answers each request of `m` with the capture's datagrams of its kind; the time it took.
fn replay(m: &mut QueryMachine, c: &Capture) -> Duration {
    let t0 = Instant::now();
    let mut now = t0;
    let mut d = Vec::new();
    for _ in 0..200 {
        while m.poll_transmit_into(now, &mut d) {
            let answer = match d.get(4) {
                Some(0) => &c.info,
                Some(1) => &c.rules,
                _ => &c.players,
            };
            for a in answer {
                m.handle_datagram(now, a);
            }
        }
        match m.poll_timeout() {
            Some(t) => {
                now = t;
                m.handle_timeout(now);
            }
            None => break,
        }
    }
    now - t0
}

#[test]
fn killing_floor_decodes_field_by_field() {
    let c = capture("cuzus-killingfloor.json");
    let l = DecodeLimits::default();
    for d in c.info.iter().chain(&c.rules).chain(&c.players) {
        assert_eq!(detect::guess(d), Some(Protocol::Unreal2), "{d:02x?}");
    }
    let Ok(Reply::Info(info)) = decode_reply(&c.info[0], &l) else {
        panic!("info")
    };
    assert_eq!(info.version, 0x80);
    assert_eq!(info.game_port, 7807);
    assert_eq!(info.server_name.chars().filter(|c| *c == '\x1b').count(), 5);
    assert_eq!(info.map, "KF-No-Mercy_TA");
    assert_eq!(info.game_type, "SRGameType");
    assert_eq!((info.players, info.max_players), (2, 24));
    let mut rules = Vec::new();
    for d in &c.rules {
        let Ok(Reply::Rules(r)) = decode_reply(d, &l) else {
            panic!("rules")
        };
        rules.extend(r);
    }
    assert_eq!(rules.len(), 51);
    assert_eq!(rules.iter().filter(|(k, _)| k == "Mutator").count(), 23);
    assert_eq!(mapping::is_killing_floor(Some(&rules)), Some(true));
    // Killing Floor's layout, told by its rules and guessed without them alike
    for hint in [Some(true), None] {
        let e = info.extra(hint);
        assert_eq!(e.waves, Some((1, 10)));
        assert_eq!((e.ping, e.flags), (Some(0), Some(32)));
        assert_eq!(e.skill.as_deref(), Some("0"));
    }
    let Ok(Reply::Players(p)) = decode_reply(&c.players[0], &l) else {
        panic!("players")
    };
    let names: Vec<(&str, u32, i32, u32)> = p
        .iter()
        .map(|e| (e.name.as_str(), e.ping, e.score, e.stats_id))
        .collect();
    assert_eq!(
        names,
        [
            ("_Mary911", 100, 2297, 0x2000_0000),
            ("_27", 100, 2093, 0x2000_0000)
        ]
    );
}

#[test]
fn killing_floor_through_the_client() {
    let c = capture("cuzus-killingfloor.json");
    let mut m = QueryMachine::new(QueryOptions::default(), Default::default(), Instant::now());
    let took = replay(&mut m, &c);
    let a = m.take_result().unwrap().unwrap();
    let s = &a.status;
    assert_eq!(
        s.host_name.as_deref(),
        Some("WWW.CUZUS.ORG - BOSS RAGE - V1065")
    );
    assert!(s
        .host_name_raw
        .as_deref()
        .unwrap()
        .starts_with("\x1b\u{fe}@@WWW"));
    assert_eq!(s.map.as_ref().unwrap().name, "KF-No-Mercy_TA");
    assert_eq!(s.game_type.as_deref(), Some("SRGameType"));
    assert_eq!(s.game_version.as_deref(), Some("1065"));
    assert_eq!((s.player_count, s.slot_max), (Some(2), Some(24)));
    assert_eq!(s.connect_port, Some(7807));
    assert_eq!(s.addons.as_ref().unwrap().len(), 23);
    let rules = s.rules.as_ref().unwrap();
    assert_eq!(rules.get("wave_current"), Some("1"));
    assert_eq!(rules.get("wave_total"), Some("10"));
    assert_eq!(rules.get("flags"), Some("32"));
    assert_eq!(rules.get("GameDifficulty"), Some("4.00"));
    let players = s.players.as_ref().unwrap();
    assert_eq!(players.len(), 2);
    assert_eq!(players[0].name.as_deref(), Some("_Mary911"));
    assert_eq!(players[0].score, Some(2297));
    assert_eq!(players[1].ping, Some(100));
    assert_eq!(a.details.datagrams, [1, 3, 1]);
    assert_eq!(a.datagrams, 5);
    // one settle wait (the rules); the players step ends when both players are listed
    assert_eq!(took, Duration::from_millis(100));
}

/// The registry's machine speaks it too, from `-p unreal2`'s name or qstat's.
#[test]
fn registry_and_names() {
    assert_eq!("ut2004s".parse::<Protocol>(), Ok(Protocol::Unreal2));
    assert_eq!("ut2s".parse::<Protocol>(), Ok(Protocol::Unreal2));
    assert!(Protocol::AUTO.contains(&Protocol::Unreal2));
    let c = capture("cuzus-killingfloor.json");
    let mut m = Machine::new(Protocol::Unreal2, &Options::default(), 1, Instant::now());
    let mut d = Vec::new();
    let now = Instant::now();
    assert!(m.poll_transmit_into(now, &mut d));
    assert_eq!(d, [0x79, 0, 0, 0, 0]);
    m.handle_datagram(now, &c.info[0]);
    assert!(m.poll_transmit_into(now, &mut d));
    assert_eq!(d, [0x79, 0, 0, 0, 1]);
    let _ = Details::Unreal2;
}

/// Every cut of every captured datagram is an error or a value, never a panic.
#[test]
fn cut_datagrams_are_errors_not_panics() {
    let c = capture("cuzus-killingfloor.json");
    for d in c.info.iter().chain(&c.rules).chain(&c.players) {
        for n in 0..d.len() {
            let _ = decode_reply(&d[..n], &DecodeLimits::default());
        }
    }
    let e = decode_reply(&c.info[0][..20], &DecodeLimits::default()).unwrap_err();
    assert!(matches!(e.kind, DecodeErrorKind::Truncated { .. }), "{e}");
}

/// A server (or spoofer) that sends players datagrams without end, each full of entries:
/// the step ends at the datagram cap and holds at most `max_players` players.
#[test]
fn endless_players_are_capped() {
    let t0 = Instant::now();
    let opts = QueryOptions::default();
    let mut m = QueryMachine::new(opts, Default::default(), t0);
    let mut d = Vec::new();
    assert!(m.poll_transmit_into(t0, &mut d));
    let c = capture("cuzus-killingfloor.json");
    let mut info = c.info[0].clone();
    // claim 1000 players, so that no count ends the step early
    let Ok(Reply::Info(i)) = decode_reply(&info, &DecodeLimits::default()) else {
        panic!("info")
    };
    let at = info.len() - i.tail.len() - 8;
    info[at..at + 4].copy_from_slice(&1000i32.to_le_bytes());
    m.handle_datagram(t0, &info);
    // rules: none come; the players step is the one attacked
    let mut now = t0;
    for _ in 0..50 {
        while m.poll_transmit_into(now, &mut d) {
            if d.get(4) == Some(&2) {
                for i in 0..10_000u32 {
                    let entries: Vec<PlayerEntry> = (0..40)
                        .map(|j| PlayerEntry::new(i * 40 + j + 1, "x".repeat(30), 9, 0, 0))
                        .collect();
                    let mut p = Vec::new();
                    encode_players(0x80, &entries, &mut p);
                    m.handle_datagram(now, &p);
                    if m.poll_timeout().is_none() {
                        break;
                    }
                }
            }
        }
        match m.poll_timeout() {
            Some(t) => {
                now = t;
                m.handle_timeout(now);
            }
            None => break,
        }
    }
    let a = m.take_result().unwrap().unwrap();
    let held = a.details.players.as_ref().unwrap().len();
    assert!(held <= DecodeLimits::default().max_players, "{held}");
    assert!(a.details.datagrams[2] <= DecodeLimits::default().max_datagrams);
    assert!(
        a.warnings.iter().any(|w| w.contains("dropped")),
        "{:?}",
        a.warnings
    );
    assert_eq!(a.details.missing, [Kind::Rules]);
}

/// Nothing answers: one request per attempt, then a timeout naming the steps.
#[test]
fn silence_is_a_timeout() {
    let t0 = Instant::now();
    let mut m = QueryMachine::new(QueryOptions::default(), Default::default(), t0);
    let c = Capture {
        info: vec![],
        rules: vec![],
        players: vec![],
    };
    replay(&mut m, &c);
    match m.take_result() {
        Some(Err(QueryError::NoAnswer { .. })) => {}
        other => panic!("{other:?}"),
    }
}

/// The catalogue names the capture's server Killing Floor by its game type, UT2004 by
/// its own, and puts every Unreal 2 game's query port one above its game port.
#[test]
fn the_catalogue_names_the_game() {
    use ogp_proto::games::{catalogue, Rule};
    let c = capture("cuzus-killingfloor.json");
    let mut m = QueryMachine::new(QueryOptions::default(), Default::default(), Instant::now());
    replay(&mut m, &c);
    let a = m.take_result().unwrap().unwrap();
    let g = catalogue().identify(Protocol::Unreal2, &a.status).unwrap();
    assert_eq!(
        (g.game.id.as_str(), g.rule),
        ("killingfloor", Rule::Unreal2Gametype)
    );
    let mut s = a.status.clone();
    s.game_type = Some("xDeathMatch".into());
    let g = catalogue().identify(Protocol::Unreal2, &s).unwrap();
    assert_eq!(g.game.id, "unrealtournament2004");
    // another protocol's answer with the same game type names nothing
    assert!(catalogue().identify(Protocol::Quake3, &s).is_none());
    let u2: Vec<_> = catalogue()
        .games()
        .iter()
        .filter(|g| g.protocol == Protocol::Unreal2)
        .collect();
    assert_eq!(u2.len(), 7);
    for g in u2 {
        assert_eq!(g.query_port(None), Some(g.port + 1), "{}", g.id);
    }
}
