//! Battlefield (Frostbite), TeamSpeak 3 and TeamSpeak 2 over TCP, client side: real
//! servers' answers (`crates/ogp-proto/tests/data/battlefield/`, rebuilt from GameQ's
//! results; `teamspeak3/` and `teamspeak2/`, GameQ's recorded conversations; see each
//! SOURCES.md) served by a loopback TCP replay (`ogp_testkit::replay::StreamReplay`)
//! that answers each request as the server did, read by `ogp query --json`, `ogp scan`
//! and the third-party readers that run here, which must agree with our JSON:
//!
//! | | qstat 2.17 | gamedig 5.3.3 |
//! |---|---|---|
//! | Battlefield | `-bfbc2` (`serverInfo` only: name, players, max, map, game type) | `protocol-battlefield`: `serverInfo`, `version`, `listPlayers all` (player fields under `raw`) |
//! | TeamSpeak 2 | `-ts2,port=VOICE HOST:QUERYPORT` (`si PORT`, `pl PORT`, `quit` at once) | `teamspeak2 --teamspeakQueryPort` |
//! | TeamSpeak 3 | `-ts3,port=VOICE HOST:QUERYPORT` (name, max, players less query clients, player names; its unescaping garbles names with escapes) | `teamspeak3 --teamspeakQueryPort` (numplayers counts query clients) |
//!
//! The reader tests run with `OGP_INTEROP=1`; the hostile servers (a word of 1 GB, a
//! silent `use`, a garbage banner, control characters) run always.

use crate::common;

use std::time::{Duration, Instant};

use common::*;
use ogp_proto::battlefield::wire::{decode_packet, response, split_packet};
use ogp_proto::internals::Reader;
use ogp_testkit::replay::{StreamReplay, Turn};
use serde_json::Value;

fn data(rel: &str) -> Value {
    let path = format!("{ROOT}/crates/ogp-proto/tests/data/{rel}");
    serde_json::from_slice(&std::fs::read(&path).unwrap()).unwrap()
}

fn words(v: &Value) -> Vec<String> {
    v.as_array()
        .unwrap()
        .iter()
        .map(|w| w.as_str().unwrap().to_owned())
        .collect()
}

// ------------------------------------------------------------------------------------
// Battlefield

/// A Frostbite server answering `serverInfo`, `version` and `listPlayers` with `file`'s
/// words, each with the request's sequence number.
fn battlefield(file: &str) -> StreamReplay {
    let d = data(&format!("battlefield/{file}"));
    let (info, version, players) = (
        words(&d["serverInfo"]),
        words(&d["version"]),
        words(&d["listPlayers"]),
    );
    StreamReplay::start(Vec::new(), move |held| {
        let size = match split_packet(&Reader::new(held)) {
            Ok(Some(n)) => n,
            Ok(None) => return Turn::Wait,
            Err(_) => return Turn::Close(Vec::new()),
        };
        let Ok(p) = decode_packet(&mut Reader::new(&held[..size])) else {
            return Turn::Close(Vec::new());
        };
        let answer = match p.words.first().map(|w| w.as_str()) {
            Some("serverInfo") => &info,
            Some("version") => &version,
            Some("listPlayers") => &players,
            _ => &vec!["UnknownCommand".to_owned()],
        };
        let answer: Vec<&str> = answer.iter().map(String::as_str).collect();
        Turn::Reply {
            consumed: size,
            reply: response(p.number(), &answer),
        }
    })
}

const BF_FILES: [&str; 3] = ["gameq-bf3-1.json", "gameq-bf4-1.json", "gameq-bfbc2-1.json"];

fn ours_bf(port: u16) -> Value {
    let v = ogp_query_port_json(&["-p", "battlefield"], port);
    assert_eq!(v["ok"], true, "{v}");
    v["status"].clone()
}

/// `ogp query` reads every field the words say, and `--game` finds the query port.
#[test]
fn battlefield_replays_read_by_ogp_query() {
    for file in BF_FILES {
        let d = data(&format!("battlefield/{file}"));
        let server = battlefield(file);
        let s = ours_bf(server.addr().port());
        let info = words(&d["serverInfo"]);
        assert_eq!(str_of(&s["host_name"]), Some(info[1].clone()), "{file}");
        assert_eq!(int_of(&s["player_count"]), info[2].parse().ok(), "{file}");
        assert_eq!(int_of(&s["slot_max"]), info[3].parse().ok(), "{file}");
        assert_eq!(str_of(&s["game_type"]), Some(info[4].clone()), "{file}");
        assert_eq!(str_of(&s["map"]["name"]), Some(info[5].clone()), "{file}");
        assert_eq!(s["teams"].as_array().unwrap().len(), 2, "{file}");
        assert_eq!(s["players"].as_array().unwrap().len(), 12, "{file}");
        let game = str_of(&s["game_name"]).unwrap();
        assert!(game.starts_with("Battlefield"), "{file}: {game}");
        assert_eq!(
            str_of(&s["game_version"]),
            Some(words(&d["version"])[2].clone())
        );
    }
}

#[test]
fn qstat_and_gamedig_read_battlefield_as_we_do() {
    if !enabled("qstat_and_gamedig_read_battlefield_as_we_do") {
        return;
    }
    let mut r = Report::default();
    for file in BF_FILES {
        let server = battlefield(file);
        let port = server.addr().port();
        let s = ours_bf(port);
        let label = |f: &str| format!("{file} {f}");
        // qstat reads serverInfo only (its first reply).
        let q = parse_json(&qstat_run("-bfbc2", port), "qstat -bfbc2", file);
        let q = &q[0];
        r.eq(
            label("qstat status"),
            str_of(&q["status"]),
            Some("online".into()),
        );
        r.qstat_counts(q, &s);
        r.eq(
            label("qstat map"),
            str_of(&q["map"]),
            str_of(&s["map"]["name"]),
        );
        // gamedig reads all three.
        let g = gamedig_json("protocol-battlefield", port, file);
        r.eq(
            label("gamedig name"),
            str_of(&g["name"]),
            str_of(&s["host_name"]),
        );
        r.eq(
            label("gamedig map"),
            str_of(&g["map"]),
            str_of(&s["map"]["name"]),
        );
        r.eq(
            label("gamedig max"),
            int_of(&g["maxplayers"]),
            int_of(&s["slot_max"]),
        );
        r.eq(
            label("gamedig numplayers"),
            int_of(&g["numplayers"]),
            int_of(&s["player_count"]),
        );
        r.eq(
            label("gamedig version"),
            str_of(&g["version"]),
            str_of(&s["game_version"]),
        );
        r.eq(
            label("gamedig password"),
            g["password"].as_bool(),
            s["password"].as_bool(),
        );
        r.eq(
            label("gamedig game type"),
            str_of(&g["raw"]["gametype"]),
            str_of(&s["game_type"]),
        );
        let tickets: Vec<f64> = g["raw"]["teams"]
            .as_array()
            .map(|t| t.iter().filter_map(|t| t["tickets"].as_f64()).collect())
            .unwrap_or_default();
        let ours_tickets: Vec<f64> = s["teams"]
            .as_array()
            .unwrap()
            .iter()
            .map(|t| str_of(&t["extra"]["score"]).unwrap().parse().unwrap())
            .collect();
        r.list(label("gamedig team tickets"), &tickets, &ours_tickets);
        let theirs: Vec<(String, i64, i64, i64, i64)> = g["players"]
            .as_array()
            .unwrap()
            .iter()
            .map(|p| {
                (
                    str_of(&p["name"]).unwrap_or_default(),
                    int_of(&p["raw"]["score"]).unwrap_or(-1),
                    int_of(&p["raw"]["kills"]).unwrap_or(-1),
                    int_of(&p["raw"]["deaths"]).unwrap_or(-1),
                    // gamedig keeps the teamId as sent; ours counts from team 1 as 0
                    int_of(&p["raw"]["team"]).map_or(-1, |t| if t >= 1 { t - 1 } else { -1 }),
                )
            })
            .collect();
        let ours_p: Vec<(String, i64, i64, i64, i64)> = s["players"]
            .as_array()
            .unwrap()
            .iter()
            .map(|p| {
                (
                    str_of(&p["name"]).unwrap(),
                    int_of(&p["score"]).unwrap_or(-1),
                    int_of(&p["kills"]).unwrap_or(-1),
                    int_of(&p["deaths"]).unwrap_or(-1),
                    int_of(&p["team"]).unwrap_or(-1),
                )
            })
            .collect();
        r.list(label("gamedig players"), &theirs, &ours_p);
        let pings: Vec<i64> = g["players"]
            .as_array()
            .unwrap()
            .iter()
            .filter_map(|p| int_of(&p["raw"]["ping"]))
            .collect();
        let ours_pings: Vec<i64> = s["players"]
            .as_array()
            .unwrap()
            .iter()
            .filter_map(|p| int_of(&p["ping"]))
            .collect();
        r.list(label("gamedig pings"), &pings, &ours_pings);
    }
    r.finish("qstat/gamedig");
}

/// `ogp scan` reads the three replays in one run.
#[test]
fn ogp_scan_reads_battlefield_and_teamspeak3() {
    let servers: Vec<StreamReplay> = BF_FILES.iter().map(|f| battlefield(f)).collect();
    let ts = teamspeak3(9987);
    let mut list = String::new();
    for s in &servers {
        list.push_str(&format!("battlefield 127.0.0.1:{}\n", s.addr().port()));
    }
    list.push_str(&format!("teamspeak3 127.0.0.1:{}\n", ts.addr().port()));
    let ran = ogp_run_with_input(
        &["scan", "--json", "-"],
        Some(list.as_bytes()),
        Duration::from_secs(30),
    );
    let text = out(&ran);
    let lines: Vec<Value> = text
        .lines()
        .filter_map(|l| serde_json::from_str(l).ok())
        .collect();
    let ok: Vec<&Value> = lines.iter().filter(|v| v["ok"] == true).collect();
    assert_eq!(ok.len(), 4, "{text}");
    let names: Vec<String> = ok
        .iter()
        .filter_map(|v| str_of(&v["status"]["host_name"]))
        .collect();
    assert!(names.iter().any(|n| n == "DWM Gaming"), "{names:?}");
    assert!(names.iter().any(|n| n.starts_with("=ADK= #7")), "{names:?}");
}

// ------------------------------------------------------------------------------------
// TeamSpeak 3

const OK: &str = "error id=0 msg=ok\n\r";

/// A ServerQuery replaying GameQ's conversation for the virtual server on `voice`.
fn teamspeak3(voice: u16) -> StreamReplay {
    let d = data("teamspeak3/gameq-ts3-2.json");
    let banner: String = words(&d["banner"])
        .iter()
        .map(|l| format!("{l}\n\r"))
        .collect();
    let server = d["serverinfo"].as_str().unwrap().to_owned();
    let clients = words(&d["clientlist"]).join("|");
    let channels = words(&d["channellist"]).join("|");
    StreamReplay::start(banner.into_bytes(), move |held| {
        let Some(i) = held.iter().position(|&b| b == b'\n') else {
            return Turn::Wait;
        };
        let line = String::from_utf8_lossy(&held[..i]);
        let line = line.trim_matches('\r');
        let reply = match line.split(' ').next().unwrap_or_default() {
            "use" if line == format!("use port={voice}") => OK.to_owned(),
            "use" => "error id=1024 msg=invalid\\sserverID\n\r".to_owned(),
            "serverinfo" => format!("{server}\n\r{OK}"),
            "clientlist" => format!("{clients}\n\r{OK}"),
            "channellist" => format!("{channels}\n\r{OK}"),
            "login" => "error id=520 msg=invalid\\sloginname\\sor\\spassword\n\r".to_owned(),
            "quit" => return Turn::Close(OK.into()),
            _ => "error id=256 msg=command\\snot\\sfound\n\r".to_owned(),
        };
        Turn::Reply {
            consumed: i + 1,
            reply: reply.into_bytes(),
        }
    })
}

/// The voice clients of the capture, names unescaped.
fn capture_players() -> Vec<String> {
    let d = data("teamspeak3/gameq-ts3-2.json");
    words(&d["clientlist"])
        .iter()
        .filter(|c| c.contains("client_type=0"))
        .map(|c| {
            let nick = c
                .split(' ')
                .find_map(|p| p.strip_prefix("client_nickname="))
                .unwrap();
            ogp_proto::teamspeak3::wire::unescape(nick).to_string()
        })
        .collect()
}

fn ours_ts3(port: u16, extra: &[&str]) -> Value {
    let mut args = vec!["-p", "teamspeak3"];
    args.extend_from_slice(extra);
    ogp_query_port_json(&args, port)
}

#[test]
fn teamspeak3_replay_read_by_ogp_query() {
    let server = teamspeak3(9987);
    let v = ours_ts3(server.addr().port(), &[]);
    assert_eq!(v["ok"], true, "{v}");
    let s = &v["status"];
    assert_eq!(str_of(&s["host_name"]), Some("DWM Gaming".into()));
    assert_eq!(int_of(&s["slot_max"]), Some(500));
    assert_eq!(int_of(&s["player_count"]), Some(106));
    assert_eq!(
        str_of(&s["game_version"]),
        Some("3.0.11.2 [Build: 1418654632]".into())
    );
    let names: Vec<String> = s["players"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| str_of(&p["name"]).unwrap())
        .collect();
    assert_eq!(names, capture_players());
    assert!(names.contains(&"Zerginater|5|".to_owned()));
    // The password hash is never copied into the rules.
    assert!(!v.to_string().contains("virtualserver_password"), "{v}");
    // Another voice port: the server's own error, at once.
    let v = ours_ts3(server.addr().port(), &["--voice-port", "9988"]);
    assert_eq!(v["ok"], false, "{v}");
    assert!(v.to_string().contains("invalid serverID"), "{v}");
}

/// A login: the name from `--user`, the password from `OGP_TS3_PASSWORD` only, never
/// printed; a refused login is its own error.
#[test]
fn teamspeak3_login_password_stays_out_of_output() {
    let server = teamspeak3(9987);
    let target = format!("127.0.0.1:{}", server.addr().port());
    let ran = run(
        std::process::Command::new(ogp_bin())
            .args([
                "query",
                "-vv",
                "--json",
                "-p",
                "teamspeak3",
                "--user",
                "serveradmin",
            ])
            .arg(&target)
            .env("OGP_TS3_PASSWORD", "s3cr3t-pw")
            .env("NO_COLOR", "1"),
        Duration::from_secs(20),
    );
    let all = format!("{}{}", String::from_utf8_lossy(&ran.stdout), ran.stderr);
    assert!(!all.contains("s3cr3t-pw"), "{all}");
    assert!(all.contains("credentials"), "{all}");
    // the dump's bytes, not its text (the password may straddle two 16-byte lines): the
    // login went out with its password blanked
    let sent = sent_in_dump(&ran.stderr);
    assert!(
        contains_bytes(
            &sent,
            b"login client_login_name=serveradmin client_login_password=*********"
        ),
        "{all}"
    );
    assert!(!contains_bytes(&sent, b"s3cr3t-pw"), "{all}");
    // Without the variable: a usage error, nothing sent.
    let ran = run(
        std::process::Command::new(ogp_bin())
            .args(["query", "-p", "teamspeak3", "--user", "serveradmin"])
            .arg(&target)
            .env_remove("OGP_TS3_PASSWORD"),
        Duration::from_secs(20),
    );
    assert!(
        ran.stderr.contains("OGP_TS3_PASSWORD"),
        "{}",
        ran.describe()
    );
}

#[test]
fn qstat_and_gamedig_read_teamspeak3_as_we_do() {
    if !enabled("qstat_and_gamedig_read_teamspeak3_as_we_do") {
        return;
    }
    let mut r = Report::default();
    let server = teamspeak3(9987);
    let port = server.addr().port();
    let v = ours_ts3(port, &[]);
    let s = &v["status"];
    let ours_names: Vec<String> = s["players"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| str_of(&p["name"]).unwrap())
        .collect();
    // qstat: the query port as the address, the voice port as the type's `port` option.
    let ran = run(
        std::process::Command::new(quakestat())
            .args(["-json", "-nnx", "-R", "-P", "-timeout", "3"])
            .arg("-ts3,port=9987")
            .arg(format!("127.0.0.1:{port}")),
        CLIENT_LIMIT,
    );
    let q = parse_json(&ran, "qstat -ts3", "replay");
    let q = &q[0];
    r.eq(
        "qstat status".into(),
        str_of(&q["status"]),
        Some("online".into()),
    );
    r.qstat_counts(q, s);
    let theirs: Vec<String> = q["players"]
        .as_array()
        .map(|a| a.iter().filter_map(|p| str_of(&p["name"])).collect())
        .unwrap_or_default();
    // qstat unescapes with an overlapping strcpy, which garbles names with escapes
    // (`MagnusEffect\s(15)` came out `MagnusEffect (5))` here): those are counted, and
    // the names without an escaped character compared.
    r.eq("qstat player count".into(), theirs.len(), ours_names.len());
    let plain = |n: &&String| !n.contains([' ', '|', '/', '\\']);
    let theirs: Vec<String> = theirs.iter().filter(plain).cloned().collect();
    let ours_plain: Vec<String> = ours_names.iter().filter(plain).cloned().collect();
    assert!(ours_plain.len() >= 5, "{ours_plain:?}");
    r.list("qstat players".into(), &sorted(theirs), &sorted(ours_plain));
    // gamedig: the voice port as the address, the query port as an option.
    let ran = run(
        std::process::Command::new("node")
            .arg(gamedig_js())
            .args(["--type", "teamspeak3", "--givenPortOnly"])
            .args(["--teamspeakQueryPort", &port.to_string()])
            .args(["--socketTimeout", "3000", "--maxRetries", "1"])
            .arg("127.0.0.1:9987"),
        CLIENT_LIMIT,
    );
    let g = parse_json(&ran, "gamedig teamspeak3", "replay");
    r.eq(
        "gamedig name".into(),
        str_of(&g["name"]),
        str_of(&s["host_name"]),
    );
    r.eq(
        "gamedig max".into(),
        str_of(&g["maxplayers"])
            .and_then(|m| m.parse().ok())
            .or(int_of(&g["maxplayers"])),
        int_of(&s["slot_max"]),
    );
    r.eq(
        "gamedig version".into(),
        str_of(&g["version"]),
        str_of(&s["game_version"]),
    );
    // gamedig unescapes only `\s` and `\/`: compare the names it reads fully.
    let theirs: Vec<String> = g["players"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|p| str_of(&p["name"]))
        .collect();
    r.eq(
        "gamedig player count".into(),
        theirs.len(),
        ours_names.len(),
    );
    for (t, o) in theirs.iter().zip(&ours_names) {
        if !t.contains('\\') {
            r.eq(format!("gamedig player {o}"), t, o);
        }
    }
    r.finish("qstat/gamedig");
}

// ------------------------------------------------------------------------------------
// Hostile servers: one clear error each, in bounded time

fn timed(args: &[&str], port: u16) -> (Value, Duration) {
    let t0 = Instant::now();
    let v = ogp_query_port_json(args, port);
    (v, t0.elapsed())
}

#[test]
fn hostile_battlefield_servers() {
    // A word of 1 GB announced: the packet size says more than we hold.
    let huge = StreamReplay::start(Vec::new(), |held| {
        if held.len() < 12 {
            return Turn::Wait;
        }
        let mut p = response(1, &["OK"]);
        p[4..8].copy_from_slice(&(1u32 << 30).to_le_bytes());
        Turn::Reply {
            consumed: held.len(),
            reply: p,
        }
    });
    let (v, took) = timed(
        &["-p", "battlefield", "--timeout", "300"],
        huge.addr().port(),
    );
    assert_eq!(v["ok"], false, "{v}");
    assert!(v.to_string().contains("PacketSize"), "{v}");
    assert!(took < Duration::from_secs(5), "{took:?}");
    // A lying word count inside a small packet.
    let lying = StreamReplay::start(Vec::new(), |held| {
        if held.len() < 12 {
            return Turn::Wait;
        }
        let mut p = response(1, &["OK", "x"]);
        p[8..12].copy_from_slice(&1_000_000u32.to_le_bytes());
        Turn::Reply {
            consumed: held.len(),
            reply: p,
        }
    });
    let (v, _) = timed(&["-p", "battlefield"], lying.addr().port());
    assert!(v.to_string().contains("NumWords"), "{v}");
}

#[test]
fn hostile_teamspeak3_servers() {
    // A garbage banner: at once.
    let garbage = StreamReplay::start(b"SSH-2.0-OpenSSH_9.2\r\n".to_vec(), |_| Turn::Wait);
    let (v, took) = timed(&["-p", "teamspeak3"], garbage.addr().port());
    assert!(v.to_string().contains("not TS3"), "{v}");
    assert!(took < Duration::from_secs(5), "{took:?}");
    // A server that never answers `use`: the read timer, a few seconds at most.
    let silent = StreamReplay::start(b"TS3\n\rWelcome\n\r".to_vec(), |_| Turn::Wait);
    let (v, took) = timed(
        &["-p", "teamspeak3", "--timeout", "200", "--retries", "0"],
        silent.addr().port(),
    );
    assert_eq!(v["ok"], false, "{v}");
    assert!(v.to_string().contains("use"), "{v}");
    assert!(took < Duration::from_secs(5), "{took:?}");
    // Control characters in names (escaped `\n`, `\a`, raw ESC) never reach a terminal.
    let evil = StreamReplay::start(b"TS3\n\rWelcome\n\r".to_vec(), |held| {
        let Some(i) = held.iter().position(|&b| b == b'\n') else {
            return Turn::Wait;
        };
        let reply: &[u8] = match held.split(|&b| b == b' ' || b == b'\n').next() {
            Some(b"serverinfo") => b"virtualserver_name=evil\\n\x1b[2J\\a\n\rerror id=0 msg=ok\n\r",
            Some(b"clientlist") => b"clid=1 cid=1 client_nickname=x\x1b]0;pwn\x07\\r client_type=0\n\rerror id=0 msg=ok\n\r",
            _ => b"error id=0 msg=ok\n\r",
        };
        Turn::Reply {
            consumed: i + 1,
            reply: reply.to_vec(),
        }
    });
    let target = format!("127.0.0.1:{}", evil.addr().port());
    let ran = ogp_run(
        &["query", "-p", "teamspeak3", &target],
        Duration::from_secs(20),
    );
    let text = out(&ran);
    assert!(text.contains("evil"), "{text}");
    assert_eq!(raw_controls(&text), 0, "{text:?}");
}

// ------------------------------------------------------------------------------------
// TeamSpeak 2

/// A TeamSpeak 2 query port replaying GameQ's conversation for the server on `voice`;
/// it takes `sel PORT` then `si`, `pl`, `cl`, and qstat's `si PORT`, `pl PORT`. The
/// answers to commands that came together go out in one write (qstat sends `si`, `pl`
/// and `quit` at once and reads the answers of one read only: answered one write each,
/// it sometimes saw no players).
fn teamspeak2(voice: u16) -> StreamReplay {
    let d = data("teamspeak2/gameq-ts2-1.json");
    let lines = |k: &str| -> String { words(&d[k]).iter().map(|l| format!("{l}\r\n")).collect() };
    let (si, pl, cl) = (lines("si"), lines("pl"), lines("cl"));
    let banner = format!("{}\r\n", d["banner"].as_str().unwrap());
    StreamReplay::start(banner.into_bytes(), move |held| {
        let mut out = String::new();
        let mut consumed = 0;
        while let Some(i) = held[consumed..].iter().position(|&b| b == b'\n') {
            let line = String::from_utf8_lossy(&held[consumed..consumed + i]).into_owned();
            consumed += i + 1;
            let mut w = line.trim_matches('\r').split(' ');
            let (cmd, port) = (w.next().unwrap_or_default(), w.next());
            let right_port = port.is_none_or(|p| p == voice.to_string());
            match cmd {
                "sel" if right_port => out.push_str("OK\r\n"),
                "si" if right_port => out.push_str(&format!("{si}OK\r\n")),
                "pl" if right_port => out.push_str(&format!("{pl}OK\r\n")),
                "cl" if right_port => out.push_str(&format!("{cl}OK\r\n")),
                "quit" => return Turn::Close(out.into_bytes()),
                _ => out.push_str("ERROR, invalid id\r\n"),
            }
        }
        if consumed == 0 {
            return Turn::Wait;
        }
        Turn::Reply {
            consumed,
            reply: out.into_bytes(),
        }
    })
}

#[test]
fn teamspeak2_replay_read_by_ogp_query_qstat_and_gamedig() {
    let server = teamspeak2(8767);
    let port = server.addr().port();
    let v = ogp_query_port_json(&["-p", "teamspeak2"], port);
    assert_eq!(v["ok"], true, "{v}");
    let s = &v["status"];
    assert_eq!(str_of(&s["host_name"]), Some("Hamburg-Funk".into()));
    assert_eq!(int_of(&s["slot_max"]), Some(250));
    assert_eq!(int_of(&s["player_count"]), Some(3));
    let names: Vec<String> = s["players"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| str_of(&p["name"]).unwrap())
        .collect();
    assert_eq!(
        names,
        [
            "Flauschis-Freundin 110",
            "VL CB-FUNK-BERLIN Original",
            "CrosslinkCL5 FRN_hamburg-funk"
        ]
    );
    assert_eq!(
        str_of(&s["players"][0]["extra"]["channel"]),
        Some("***WILLKOMMEN***".into())
    );
    let v = ogp_query_port_json(&["-p", "teamspeak2", "--voice-port", "9000"], port);
    assert!(v.to_string().contains("invalid id"), "{v}");
    if !enabled("teamspeak2_replay_read_by_ogp_query_qstat_and_gamedig") {
        return;
    }
    let mut r = Report::default();
    let ran = run(
        std::process::Command::new(quakestat())
            .args(["-json", "-nnx", "-R", "-P", "-timeout", "3"])
            .arg("-ts2,port=8767")
            .arg(format!("127.0.0.1:{port}")),
        CLIENT_LIMIT,
    );
    let q = parse_json(&ran, "qstat -ts2", "replay");
    let q = &q[0];
    r.eq(
        "qstat status".into(),
        str_of(&q["status"]),
        Some("online".into()),
    );
    r.qstat_counts(q, s);
    let theirs: Vec<String> = q["players"]
        .as_array()
        .map(|a| a.iter().filter_map(|p| str_of(&p["name"])).collect())
        .unwrap_or_default();
    r.list(
        "qstat players".into(),
        &sorted(theirs),
        &sorted(names.clone()),
    );
    let ran = run(
        std::process::Command::new("node")
            .arg(gamedig_js())
            .args(["--type", "teamspeak2", "--givenPortOnly"])
            .args(["--teamspeakQueryPort", &port.to_string()])
            .args(["--socketTimeout", "3000", "--maxRetries", "1"])
            .arg("127.0.0.1:8767"),
        CLIENT_LIMIT,
    );
    let g = parse_json(&ran, "gamedig teamspeak2", "replay");
    r.eq(
        "gamedig name".into(),
        str_of(&g["name"]),
        str_of(&s["host_name"]),
    );
    let theirs: Vec<String> = g["players"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|p| str_of(&p["name"]))
        .collect();
    r.list("gamedig players".into(), &theirs, &names);
    r.finish("qstat/gamedig");
}
