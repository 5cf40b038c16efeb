//! Interop: `ogp serve` queried over A2S by the real third-party clients people use
//! (`shared/docs/interop.md` §1, §2.1–2.4, §3.1, §5.1, §8): qstat 2.17 (`quakestat`),
//! gamedig 5.3.3 (npm), python-a2s 1.4.2 and opengsq 3.7.0 (PyPI).
//!
//! Each test starts `ogp serve` on `127.0.0.1:<free port>` with a state file it writes
//! (the child is killed when the test ends, whatever happens), runs one client against
//! three statuses, and asserts that what the client parsed equals the status, mapped the
//! A2S way: server name = `host_name`, map = `map.name`, game = `game_name`, player
//! name/score/duration = the player's `name`/`score`/`time`, rules = `rules` as strings,
//! player count = the number of players, max players = `slot_max`. The statuses:
//!
//! * `small`: ASCII only, three players (one with an empty name), four rules;
//! * `utf8`: names, map, rule keys and values with ü, ✓, CJK and an emoji;
//! * `big`: 100 players with long names and 300 rules, so that the A2S_PLAYER and
//!   A2S_RULES replies are split (checked on the wire here), with keywords long enough that
//!   an unshortened A2S_INFO would not fit one datagram (the responder never splits INFO:
//!   qstat cannot read a split INFO; it drops the keywords instead), and no A2S app id.
//!
//! Client quirks asserted as such (so a change in behaviour shows up):
//! * qstat's `-json` output drops every byte ≥ 0x80 (its JSON escaper reads the strings
//!   through a signed `char`, so they are no code point it accepts), so its JSON is compared with the status's ASCII characters
//!   only; the same query with `-raw` prints the UTF-8 bytes as received and is compared
//!   exactly. `-nnx` turns off qstat's Quake-style name transformation (bit 7 stripped).
//! * qstat reads the split replies that follow an INFO whose app id's low byte is below
//!   128 in the GoldSrc layout: a status with such an app id loses its split players and
//!   rules in qstat (asserted; without an app id the responder announces 255).
//! * qstat lists players in reverse order and adds INFO fields to its rules; opengsq returns
//!   the rules as a set; gamedig returns them as an object: those are compared as sorted
//!   lists. python-a2s and gamedig's `raw.players` keep the wire order and are compared
//!   in order.
//!
//! Running: the peers are installed by `scripts/install-interop.sh` (into `target/interop/`
//! and the system's `quakestat`). These tests run only when `OGP_INTEROP=1`, which
//! `scripts/test.sh` sets after running the install script; without it each test prints a
//! note and returns, so a plain `cargo test` stays usable without the peers. With
//! `OGP_INTEROP=1`, a missing peer is a failure that says to run the install script.

use crate::common;

use std::collections::BTreeMap;
use std::net::UdpSocket;
use std::process::Command;
use std::time::Duration;

use common::*;

use ogp_proto::model::{A2sInfo, MapInfo, Player, Rules};
use ogp_proto::Status;
use serde_json::Value;

// ------------------------------------------------------------------------------------
// The statuses

/// One status to serve, in the terms an A2S client reports.
struct Case {
    label: &'static str,
    host: String,
    map: String,
    game: String,
    slot_max: u32,
    /// name, score, seconds
    players: Vec<(String, i32, u16)>,
    rules: Vec<(String, String)>,
    /// A2S keywords (EDF 0x20), to make INFO too big for one datagram.
    keywords: Option<String>,
    /// A2S app id (none: the responder's default).
    app_id: Option<u16>,
    /// Whether PLAYER and RULES must be split.
    split: bool,
}

impl Case {
    fn status(&self) -> Status {
        let mut status = Status::default();
        status.host_name = Some(self.host.as_str().into());
        status.game_name = Some(self.game.as_str().into());
        status.map = Some(MapInfo::named(self.map.as_str()));
        status.slot_max = Some(self.slot_max);
        status.players = Some(
            self.players
                .iter()
                .enumerate()
                .map(|(i, (name, score, time))| {
                    let mut player = Player::default();
                    player.slot = Some(i as u32);
                    player.name = Some(name.as_str().into());
                    player.score = Some(*score);
                    player.time = Some(u32::from(*time));
                    player
                })
                .collect(),
        );
        status.rules = Some(Rules(
            self.rules
                .iter()
                .map(|(k, v)| (k.as_str().into(), v.as_str().into()))
                .collect(),
        ));
        status.a2s = Some({
            let mut a2s = A2sInfo::default();
            a2s.keywords = self.keywords.as_deref().map(Into::into);
            a2s.app_id = self.app_id.map(u32::from);
            a2s
        });
        status
    }
}

fn cases() -> Vec<Case> {
    let small = Case {
        label: "small",
        host: "Interop test server #1".into(),
        map: "de_dust2".into(),
        game: "Counter-Strike: Source".into(),
        slot_max: 24,
        players: vec![
            ("Alice".into(), 12, 754),
            ("Bob the Bot".into(), -3, 3600),
            (String::new(), 0, 5),
        ],
        rules: vec![
            ("mp_timelimit".into(), "20".into()),
            ("sv_cheats".into(), "0".into()),
            ("sv_tags".into(), "a=b, c".into()),
            ("motd".into(), "Welcome, have fun!".into()),
        ],
        keywords: None,
        app_id: None,
        split: false,
    };
    let utf8 = Case {
        label: "utf8",
        host: "Ünïcödé ✓ サーバー 服务器 #2".into(),
        map: "ctf_ü✓_地図".into(),
        game: "Démo ✓".into(),
        slot_max: 32,
        players: vec![
            ("Zoë".into(), 5, 31),
            ("✓ check".into(), 7, 62),
            ("日本語プレイヤー".into(), -1, 93),
            ("😀 emoji".into(), 100, 124),
            ("한국어".into(), 0, 155),
        ],
        rules: vec![
            ("motd".into(), "Hällo ✓ 欢迎 😀".into()),
            ("sv_名前".into(), "値".into()),
            ("ü_key".into(), "✓".into()),
            ("plain".into(), "ascii".into()),
        ],
        keywords: None,
        app_id: None,
        split: false,
    };
    let big = Case {
        label: "big",
        host: "Interop big server: 100 players, 300 rules ✓".into(),
        map: "cp_very_long_map_name_for_the_big_test".into(),
        game: "Big Game".into(),
        slot_max: 128,
        players: (0..100)
            .map(|i| {
                (
                    format!("Player {i:03} ✓ with a rather long name, for split replies"),
                    i * 37 - 1000,
                    (i as u16) * 61,
                )
            })
            .collect(),
        rules: (0..300)
            .map(|i| {
                (
                    format!("sv_interop_rule_{i:03}"),
                    format!("value {i} ü {}", "x".repeat(i as usize % 40)),
                )
            })
            .collect(),
        keywords: Some(
            (0..400)
                .map(|i| format!("kw{i}"))
                .collect::<Vec<_>>()
                .join(","),
        ),
        app_id: None,
        split: true,
    };
    vec![small, utf8, big]
}

// ------------------------------------------------------------------------------------
// The server

const INFO_REQUEST: &[u8] = b"\xff\xff\xff\xffTSource Engine Query\0";

/// A challenge from the server at `port`, or None if it does not answer yet.
fn challenge(sock: &UdpSocket) -> Option<[u8; 4]> {
    let got = exchange(sock, INFO_REQUEST, Duration::from_millis(200));
    let d = got.first()?;
    (d.len() == 9 && d[..5] == *b"\xff\xff\xff\xffA").then(|| [d[5], d[6], d[7], d[8]])
}

fn serve(case: &Case) -> Served {
    serve_with(case.label, &case.status().to_json_pretty(), &[], |sock| {
        challenge(sock).is_some()
    })
}

/// Checks on the wire what the case is about: INFO in one datagram, PLAYER and RULES
/// split (or not) in the Source layout with ids below 0x8000.
fn check_wire(case: &Case, port: u16) {
    let sock = UdpSocket::bind("127.0.0.1:0").unwrap();
    sock.connect(("127.0.0.1", port)).unwrap();
    let c = challenge(&sock).expect("a challenge");
    let with = |kind: &[u8]| [kind, &c[..]].concat();
    let info = exchange(&sock, &with(INFO_REQUEST), Duration::from_secs(2));
    assert_eq!(info.len(), 1, "{}: INFO in one datagram", case.label);
    assert_eq!(
        &info[0][..5],
        b"\xff\xff\xff\xffI",
        "{}: INFO 'I'",
        case.label
    );
    assert!(
        info[0].len() <= 1400,
        "{}: INFO within 1400 bytes",
        case.label
    );
    for (what, kind) in [("PLAYER", 0x55u8), ("RULES", 0x56)] {
        let got = exchange(
            &sock,
            &with(&[0xff, 0xff, 0xff, 0xff, kind]),
            Duration::from_secs(2),
        );
        assert!(!got.is_empty(), "{}: no {what} reply", case.label);
        if case.split {
            assert!(got.len() > 1, "{}: {what} reply not split", case.label);
            for (n, d) in got.iter().enumerate() {
                assert_eq!(
                    &d[..4],
                    b"\xfe\xff\xff\xff",
                    "{}: {what} fragment",
                    case.label
                );
                let id = u32::from_le_bytes([d[4], d[5], d[6], d[7]]);
                assert!(id < 0x8000 && id != 0, "{}: split id {id:#x}", case.label);
                assert_eq!(usize::from(d[8]), got.len(), "{}: total", case.label);
                assert_eq!(usize::from(d[9]), n, "{}: fragment number", case.label);
                assert_eq!(
                    u16::from_le_bytes([d[10], d[11]]),
                    1248,
                    "{}: size",
                    case.label
                );
            }
        } else {
            assert_eq!(got.len(), 1, "{}: {what} in one datagram", case.label);
            assert_eq!(&got[0][..4], b"\xff\xff\xff\xff", "{}: {what}", case.label);
        }
    }
}

// ------------------------------------------------------------------------------------
// Comparing

fn want_players(case: &Case) -> Vec<(String, i64, f64)> {
    case.players
        .iter()
        .map(|(n, s, t)| (n.clone(), i64::from(*s), f64::from(*t)))
        .collect()
}

fn want_rules(case: &Case) -> Vec<(String, String)> {
    case.rules.clone()
}

// ------------------------------------------------------------------------------------
// The clients

fn qstat_cmd(port: u16, format: &[&str]) -> Command {
    let mut c = Command::new(quakestat());
    c.args(format)
        .args([
            "-nnx",
            "-R",
            "-P",
            "-retry",
            "2",
            "-interval",
            "0.5",
            "-timeout",
            "3",
        ])
        .arg("-a2s")
        .arg(format!("127.0.0.1:{port}"));
    c
}

/// INFO fields qstat adds to its rules (not the server's rules).
const QSTAT_INFO_RULES: &[&str] = &[
    "protocol",
    "gamedir",
    "gamename",
    "bots",
    "dedicated",
    "sv_os",
    "password",
    "secure",
    "version",
    "game_port",
    "hostport",
    "sourcetv_port",
    "sourcetv_name",
    "keywords",
    "game_tags",
];

#[test]
fn qstat_json() {
    if !enabled("qstat_json") {
        return;
    }
    let mut r = Report::default();
    for case in cases() {
        let before = r.0.len();
        let s = serve(&case);
        check_wire(&case, s.port);
        let ran = run(&mut qstat_cmd(s.port, &["-json"]), CLIENT_LIMIT);
        let v = parse_json(&ran, "qstat -json", case.label);
        let v = &v[0];
        let l = case.label;
        r.eq(
            format!("{l}: status"),
            str_of(&v["status"]),
            Some("online".into()),
        );
        r.eq(
            format!("{l}: name"),
            str_of(&v["name"]),
            Some(ascii(&case.host)),
        );
        r.eq(
            format!("{l}: map"),
            str_of(&v["map"]),
            Some(ascii(&case.map)),
        );
        r.eq(
            format!("{l}: gamename"),
            str_of(&v["rules"]["gamename"]),
            Some(ascii(&case.game)),
        );
        r.eq(
            format!("{l}: numplayers"),
            int_of(&v["numplayers"]),
            Some(case.players.len() as i64),
        );
        r.eq(
            format!("{l}: maxplayers"),
            int_of(&v["maxplayers"]),
            Some(i64::from(case.slot_max)),
        );
        let players: Vec<(String, i64)> = v["players"]
            .as_array()
            .map(|a| {
                a.iter()
                    .map(|p| {
                        (
                            str_of(&p["name"]).unwrap_or_default(),
                            int_of(&p["score"]).unwrap_or(i64::MIN),
                        )
                    })
                    .collect()
            })
            .unwrap_or_default();
        let want: Vec<(String, i64)> = want_players(&case)
            .into_iter()
            .map(|(n, s, _)| (ascii(&n), s))
            .collect();
        r.list(
            format!("{l}: players (sorted)"),
            &sorted(players),
            &sorted(want),
        );
        let rules: Vec<(String, String)> = v["rules"]
            .as_object()
            .map(|o| {
                o.iter()
                    .filter(|(k, _)| !QSTAT_INFO_RULES.contains(&k.as_str()))
                    .map(|(k, v)| (k.clone(), str_of(v).unwrap_or_else(|| v.to_string())))
                    .collect()
            })
            .unwrap_or_default();
        let want: Vec<(String, String)> = want_rules(&case)
            .into_iter()
            .map(|(k, v)| (ascii(&k), ascii(&v)))
            .collect();
        r.list(
            format!("{l}: rules (sorted)"),
            &sorted(rules),
            &sorted(want),
        );
        if r.0.len() > before {
            r.fail(format!("{l}: qstat run: {}", ran.describe()));
        }
    }
    r.finish("qstat -json");
}

#[test]
fn qstat_raw_utf8() {
    if !enabled("qstat_raw_utf8") {
        return;
    }
    const D: &str = "\t";
    let mut r = Report::default();
    for case in cases() {
        let before = r.0.len();
        let s = serve(&case);
        let ran = run(&mut qstat_cmd(s.port, &["-raw", D]), CLIENT_LIMIT);
        let l = case.label;
        // One line per server (A2S, address, name, map, max, players, ping, retries), one
        // rules line (k=v), then one line per player (name, score, seconds); the bytes of
        // the strings are printed as they came.
        let Ok(out) = String::from_utf8(ran.stdout.clone()) else {
            r.fail(format!(
                "{l}: qstat -raw printed invalid UTF-8; {}",
                ran.describe()
            ));
            continue;
        };
        let mut lines = out.lines();
        let head: Vec<&str> = lines.next().unwrap_or("").split(D).collect();
        r.eq(
            format!("{l}: server line"),
            head.get(2..4),
            Some(&[case.host.as_str(), case.map.as_str()][..]),
        );
        r.eq(
            format!("{l}: max, players"),
            head.get(4..6).map(|s| s.join(",")),
            Some(format!("{},{}", case.slot_max, case.players.len())),
        );
        let rules: BTreeMap<String, String> = lines
            .next()
            .unwrap_or("")
            .split(D)
            .filter_map(|kv| kv.split_once('='))
            .map(|(k, v)| (k.to_owned(), v.to_owned()))
            .filter(|(k, _)| !QSTAT_INFO_RULES.contains(&k.as_str()))
            .collect();
        r.list(
            format!("{l}: rules"),
            &rules.into_iter().collect::<Vec<_>>(),
            &sorted(want_rules(&case)),
        );
        let players: Vec<(String, i64, f64)> = lines
            .take_while(|line| !line.is_empty())
            .map(|line| {
                let f: Vec<&str> = line.split(D).collect();
                (
                    f.first().copied().unwrap_or("").to_owned(),
                    f.get(1).and_then(|x| x.parse().ok()).unwrap_or(i64::MIN),
                    f.get(2).and_then(|x| x.parse().ok()).unwrap_or(f64::NAN),
                )
            })
            .collect();
        let key = |v: Vec<(String, i64, f64)>| -> Vec<(String, i64, i64)> {
            sorted(v.into_iter().map(|(n, s, t)| (n, s, t as i64)).collect())
        };
        r.list(
            format!("{l}: players (sorted)"),
            &key(players),
            &key(want_players(&case)),
        );
        if r.0.len() > before {
            r.fail(format!("{l}: qstat run: {}", ran.describe()));
        }
    }
    r.finish("qstat -raw");
}

/// qstat's known failure (`interop.md` §2.1): after an `'I'` INFO whose app id has a low
/// byte below 128 it reads split replies in the GoldSrc layout, so it gets nothing from
/// our Source-layout splits. We send an app id the status gives as it is (here 320, Half-
/// Life 2: Deathmatch, low byte 0x40), so qstat loses the big status's players and rules
/// exactly as it does with that game's real servers; without an app id we send 255 and it
/// reads them (`qstat_json`). If this starts passing, qstat changed.
#[test]
fn qstat_misreads_splits_after_a_low_app_id() {
    if !enabled("qstat_misreads_splits_after_a_low_app_id") {
        return;
    }
    let mut case = cases().pop().unwrap();
    case.app_id = Some(320);
    let s = serve(&case);
    check_wire(&case, s.port);
    // qstat on a machine busy with a fresh build has printed an empty list ([]) once,
    // after 2 s: one more run then, so that what is checked is qstat's reading
    let mut ran = run(&mut qstat_cmd(s.port, &["-json"]), CLIENT_LIMIT);
    let mut v = parse_json(&ran, "qstat -json", case.label);
    if v.as_array().is_some_and(Vec::is_empty) {
        ran = run(&mut qstat_cmd(s.port, &["-json"]), CLIENT_LIMIT);
        v = parse_json(&ran, "qstat -json", case.label);
    }
    let v = &v[0];
    let ctx = ran.describe();
    assert_eq!(str_of(&v["status"]).as_deref(), Some("online"), "{ctx}");
    assert_eq!(str_of(&v["name"]), Some(ascii(&case.host)), "{ctx}");
    assert_eq!(int_of(&v["numplayers"]), Some(100), "{ctx}");
    assert_eq!(v["players"].as_array().map(Vec::len), Some(0), "{ctx}");
    let server_rules = v["rules"].as_object().map_or(usize::MAX, |o| {
        o.keys()
            .filter(|k| !QSTAT_INFO_RULES.contains(&k.as_str()))
            .count()
    });
    assert_eq!(server_rules, 0, "{ctx}");
}

#[test]
fn gamedig() {
    if !enabled("gamedig") {
        return;
    }
    let js = gamedig_js();
    let mut r = Report::default();
    for case in cases() {
        let before = r.0.len();
        let s = serve(&case);
        let ran = run(
            Command::new("node")
                .arg(&js)
                .args([
                    "--type",
                    "protocol-valve",
                    "--givenPortOnly",
                    "--requestRules",
                ])
                .args(["--socketTimeout", "1500", "--maxRetries", "1"])
                .arg(format!("127.0.0.1:{}", s.port)),
            CLIENT_LIMIT,
        );
        let v = parse_json(&ran, "gamedig", case.label);
        let l = case.label;
        r.eq(format!("{l}: error"), str_of(&v["error"]), None);
        r.eq(
            format!("{l}: name"),
            str_of(&v["name"]),
            Some(case.host.clone()),
        );
        r.eq(
            format!("{l}: map"),
            str_of(&v["map"]),
            Some(case.map.clone()),
        );
        r.eq(
            format!("{l}: game"),
            str_of(&v["raw"]["game"]),
            Some(case.game.clone()),
        );
        r.eq(
            format!("{l}: numplayers"),
            int_of(&v["numplayers"]),
            Some(case.players.len() as i64),
        );
        r.eq(
            format!("{l}: maxplayers"),
            int_of(&v["maxplayers"]),
            Some(i64::from(case.slot_max)),
        );
        // raw.players: the A2S_PLAYER list in wire order (players/bots are a guess from it)
        let players: Vec<(String, i64, f64)> = v["raw"]["players"]
            .as_array()
            .map(|a| {
                a.iter()
                    .map(|p| {
                        (
                            str_of(&p["name"]).unwrap_or_default(),
                            int_of(&p["score"]).unwrap_or(i64::MIN),
                            p["time"].as_f64().unwrap_or(f64::NAN),
                        )
                    })
                    .collect()
            })
            .unwrap_or_default();
        r.list(format!("{l}: raw.players"), &players, &want_players(&case));
        let listed =
            v["players"].as_array().map_or(0, Vec::len) + v["bots"].as_array().map_or(0, Vec::len);
        r.eq(format!("{l}: players + bots"), listed, case.players.len());
        let rules: Vec<(String, String)> = v["raw"]["rules"]
            .as_object()
            .map(|o| {
                o.iter()
                    .map(|(k, v)| (k.clone(), str_of(v).unwrap_or_default()))
                    .collect()
            })
            .unwrap_or_default();
        r.list(
            format!("{l}: raw.rules (sorted)"),
            &sorted(rules),
            &sorted(want_rules(&case)),
        );
        if r.0.len() > before {
            r.fail(format!("{l}: gamedig run: {}", ran.describe()));
        }
    }
    r.finish("gamedig");
}

/// Runs tests/interop/a2s_py.py with the given client.
fn python_client(client: &str, module: &str, version: &str) {
    if !enabled(client) {
        return;
    }
    let py = venv_python(module, client, version);
    let script = root().join("tests/interop/a2s_py.py");
    assert!(script.is_file(), "{} missing", script.display());
    let mut r = Report::default();
    for case in cases() {
        let before = r.0.len();
        let s = serve(&case);
        let ran = run(
            Command::new(&py)
                .arg(&script)
                .args([client, "127.0.0.1", &s.port.to_string(), "2.0"]),
            CLIENT_LIMIT,
        );
        let v = parse_json(&ran, client, case.label);
        let l = case.label;
        r.eq(format!("{l}: exit code"), ran.code, Some(0));
        r.eq(
            format!("{l}: errors"),
            v["errors"].clone(),
            Value::Object(Default::default()),
        );
        let info = &v["info"];
        // python-a2s and opengsq name the INFO fields differently
        let field = |a: &str, b: &str| {
            if info.get(a).is_some() {
                info[a].clone()
            } else {
                info[b].clone()
            }
        };
        r.eq(
            format!("{l}: name"),
            str_of(&field("server_name", "name")),
            Some(case.host.clone()),
        );
        r.eq(
            format!("{l}: map"),
            str_of(&field("map_name", "map")),
            Some(case.map.clone()),
        );
        r.eq(
            format!("{l}: game"),
            str_of(&info["game"]),
            Some(case.game.clone()),
        );
        r.eq(
            format!("{l}: player count"),
            int_of(&field("player_count", "players")),
            Some(case.players.len() as i64),
        );
        r.eq(
            format!("{l}: max players"),
            int_of(&info["max_players"]),
            Some(i64::from(case.slot_max)),
        );
        if case.keywords.is_some() {
            // INFO would not fit one datagram with them: the responder leaves them out
            r.eq(
                format!("{l}: keywords"),
                info["keywords"].clone(),
                Value::Null,
            );
        }
        let players: Vec<(String, i64, f64)> = v["players"]
            .as_array()
            .map(|a| {
                a.iter()
                    .map(|p| {
                        (
                            str_of(&p["name"]).unwrap_or_default(),
                            int_of(&p["score"]).unwrap_or(i64::MIN),
                            p["duration"].as_f64().unwrap_or(f64::NAN),
                        )
                    })
                    .collect()
            })
            .unwrap_or_default();
        let rules: Vec<(String, String)> = v["rules"]
            .as_array()
            .map(|a| {
                a.iter()
                    .map(|kv| {
                        (
                            str_of(&kv[0]).unwrap_or_default(),
                            str_of(&kv[1]).unwrap_or_default(),
                        )
                    })
                    .collect()
            })
            .unwrap_or_default();
        r.list(format!("{l}: players"), &players, &want_players(&case));
        if client == "opengsq" {
            // a set of (key, value): no order
            r.list(
                format!("{l}: rules (sorted)"),
                &sorted(rules),
                &sorted(want_rules(&case)),
            );
        } else {
            // a dict in wire order
            r.list(format!("{l}: rules"), &rules, &want_rules(&case));
        }
        if r.0.len() > before {
            r.fail(format!("{l}: {client} run: {}", ran.describe()));
        }
    }
    r.finish(client);
}

#[test]
fn python_a2s() {
    python_client("python-a2s", "a2s", PYTHON_A2S);
}

#[test]
fn opengsq() {
    python_client("opengsq", "opengsq.protocols", OPENGSQ);
}
