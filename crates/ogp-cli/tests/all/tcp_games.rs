//! BeamMP, StarMade and Nadeo's GBXRemote 2 (Trackmania, Shootmania) over TCP, client
//! side: each server's documented bytes (no capture of a real server is public; the
//! formats are those of `docs/families-todo.md`'s sections, from BeamMP-Server's source,
//! qstat's `starmade.c` and gamedig's readers) served by a loopback TCP replay
//! (`ogp_testkit::replay::StreamReplay`), read by `ogp query --json` and `ogp scan`, and,
//! with `OGP_INTEROP=1`, by the readers that run here, which must agree with our JSON:
//!
//! | | qstat 2.17 | gamedig 5.3.3 |
//! |---|---|---|
//! | StarMade | `-starmade` (name, players, max) | `starmade` (name, players, max) |
//! | Nadeo | (`-tm` wants the handshake's length in a segment of its own: not run) | `protocol-nadeo` with `--login`, `--password` (npm `gbxremote`) |
//! | BeamMP | no reader | gamedig reads BeamMP's public list, not the server |
//!
//! The hostile servers (lying lengths, an endless body, deep XML, a callback flood)
//! run always, each one clear error in bounded time.

use crate::common;

use std::time::{Duration, Instant};

use common::*;
use ogp_testkit::replay::{StreamReplay, Turn};
use serde_json::Value;

const JSON: &str = r#"{"players":"2","maxplayers":"8","port":"30814","map":"/levels/gridmap_v2/info.json","private":"false","version":"3.4.1","clientversion":"2.0","name":"^4ogp ^rBeam","tags":"Freeroam,Events","guests":"true","modlist":"","modstotalsize":"0","modstotal":"0","playerslist":"alice;bob;","desc":"a test server"}"#;

/// A BeamMP server answering `I` with `reply`, then closing.
fn beammp(reply: Vec<u8>) -> StreamReplay {
    StreamReplay::start(Vec::new(), move |held| match held.first() {
        None => Turn::Wait,
        Some(b'I') => Turn::Close(reply.clone()),
        Some(_) => Turn::Close(Vec::new()),
    })
}

/// The names of a JSON list of players.
fn names(players: &Value) -> Vec<String> {
    players
        .as_array()
        .unwrap_or_else(|| panic!("no players: {players}"))
        .iter()
        .filter_map(|p| str_of(&p["name"]))
        .collect()
}

fn framed_json() -> Vec<u8> {
    let mut v = u32::try_from(JSON.len()).unwrap().to_le_bytes().to_vec();
    v.extend_from_slice(JSON.as_bytes());
    v
}

#[test]
fn beammp_replays_read_by_ogp_query() {
    let form = b"players=2&maxplayers=8&map=%2Flevels%2Fgridmap_v2%2Finfo.json&name=%5E4ogp+%5ErBeam&playerslist=alice%3Bbob%3B".to_vec();
    for (label, reply) in [("framed JSON", framed_json()), ("old form", form)] {
        let server = beammp(reply);
        let v = ogp_query_port_json(&["-p", "beammp"], server.addr().port());
        assert_eq!(v["ok"], true, "{label}: {v}");
        let s = &v["status"];
        assert_eq!(str_of(&s["host_name"]), Some("ogp Beam".into()), "{label}");
        assert_eq!(str_of(&s["host_name_raw"]), Some("^4ogp ^rBeam".into()));
        assert_eq!(int_of(&s["player_count"]), Some(2), "{label}");
        assert_eq!(int_of(&s["slot_max"]), Some(8), "{label}");
        assert_eq!(
            str_of(&s["map"]["name"]),
            Some("/levels/gridmap_v2/info.json".into())
        );
        assert_eq!(names(&s["players"]), ["alice", "bob"], "{label}");
    }
    // --game finds the protocol and port.
    let server = beammp(framed_json());
    let v = ogp_query_json(
        &["--game", "beammp"],
        &format!("127.0.0.1:{}", server.addr().port()),
    );
    assert_eq!(v["ok"], true, "{v}");
}

// ------------------------------------------------------------------------------------
// StarMade

/// A StarMade reply as qstat's `starmade.c` reads it, byte by byte: the length (66) and
/// timestamp, `2A FFFF 01 6F`, a parameter count of 7, then info version `06 02`, version
/// `03` 0.201, name `04` "ogp StarMade", description `04` "a test server", start time `02`
/// 1700000000000 ms, players `01` 3, max players `01` 32. The start time's bytes hold one
/// `01` that gamedig, which does not know the long, reads as an int, so that its players
/// and max still land at positions 5 and 6.
const STARMADE_REPLY: &str = "000000420000018bcfe5687b2affff016f00000007\
    0602033e4dd2f204000c6f677020537461724d61646504000d612074657374207365727665\
    72020000018bcfe5680001000000030100000020";

fn starmade_reply() -> Vec<u8> {
    let hex: String = STARMADE_REPLY.split_whitespace().collect();
    ogp_proto::internals::from_hex(&hex).unwrap()
}

const STARMADE_REQUEST: [u8; 13] = [0, 0, 0, 9, 0x2a, 0xff, 0xff, 0x01, 0x6f, 0, 0, 0, 0];

fn starmade(reply: Vec<u8>) -> StreamReplay {
    StreamReplay::start(Vec::new(), move |held| {
        if held.len() < 13 {
            Turn::Wait
        } else if held[..13] == STARMADE_REQUEST {
            Turn::Reply {
                consumed: 13,
                reply: reply.clone(),
            }
        } else {
            Turn::Close(Vec::new())
        }
    })
}

#[test]
fn starmade_replay_read_by_ogp_query() {
    let server = starmade(starmade_reply());
    let v = ogp_query_port_json(&["-p", "starmade"], server.addr().port());
    assert_eq!(v["ok"], true, "{v}");
    let s = &v["status"];
    assert_eq!(str_of(&s["host_name"]), Some("ogp StarMade".into()));
    assert_eq!(str_of(&s["game_version"]), Some("0.201".into()));
    assert_eq!(int_of(&s["player_count"]), Some(3));
    assert_eq!(int_of(&s["slot_max"]), Some(32));
    assert_eq!(
        str_of(&s["rules"]["start_time"]),
        Some("1700000000000".into())
    );
}

#[test]
fn qstat_and_gamedig_read_starmade_as_we_do() {
    if !enabled("qstat_and_gamedig_read_starmade_as_we_do") {
        return;
    }
    let mut r = Report::default();
    let server = starmade(starmade_reply());
    let port = server.addr().port();
    let s = ogp_query_port_json(&["-p", "starmade"], port)["status"].clone();
    let q = parse_json(&qstat_run("-starmade", port), "qstat -starmade", "replay");
    let q = &q[0];
    r.eq(
        "qstat status".into(),
        str_of(&q["status"]),
        Some("online".into()),
    );
    r.eq(
        "qstat name".into(),
        str_of(&q["name"]),
        str_of(&s["host_name"]),
    );
    r.qstat_counts(q, &s);
    let g = gamedig_json("starmade", port, "replay");
    r.eq(
        "gamedig name".into(),
        str_of(&g["name"]),
        str_of(&s["host_name"]),
    );
    r.eq(
        "gamedig numplayers".into(),
        int_of(&g["numplayers"]),
        int_of(&s["player_count"]),
    );
    r.eq(
        "gamedig max".into(),
        int_of(&g["maxplayers"]),
        int_of(&s["slot_max"]),
    );
    r.eq(
        "gamedig description".into(),
        str_of(&g["raw"]["description"]),
        str_of(&s["rules"]["description"]),
    );
    r.finish("qstat/gamedig");
}

// ------------------------------------------------------------------------------------
// Nadeo GBXRemote 2

fn greeting() -> Vec<u8> {
    let mut h = 11u32.to_le_bytes().to_vec();
    h.extend_from_slice(b"GBXRemote 2");
    h
}

fn frame(handle: u32, xml: &str) -> Vec<u8> {
    let mut f = u32::try_from(xml.len()).unwrap().to_le_bytes().to_vec();
    f.extend(handle.to_le_bytes());
    f.extend(xml.as_bytes());
    f
}

fn ok(v: &str) -> String {
    format!("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<methodResponse>\n<params>\n<param><value>{v}</value></param>\n</params>\n</methodResponse>")
}

fn fault(code: i32, msg: &str) -> String {
    format!("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<methodResponse>\n<fault>\n<value><struct><member><name>faultCode</name><value><int>{code}</int></value></member><member><name>faultString</name><value><string>{msg}</string></value></member></struct></value>\n</fault>\n</methodResponse>")
}

fn st(members: &[(&str, &str)]) -> String {
    let m: String = members
        .iter()
        .map(|(k, v)| format!("<member><name>{k}</name><value>{v}</value></member>"))
        .collect();
    format!("<struct>{m}</struct>")
}

/// The reply of a Trackmania Forever server (documented shapes) to `method`.
fn nadeo_reply(method: &str) -> String {
    match method {
        "GetServerOptions" => ok(&st(&[
            ("Name", "<string>$fffogp $f00Trackmania</string>"),
            ("Comment", "<string>a test server</string>"),
            ("Password", "<string>No password</string>"),
            ("CurrentMaxPlayers", "<i4>32</i4>"),
            ("CurrentMaxSpectators", "<i4>8</i4>"),
        ])),
        "GetCurrentChallengeInfo" => ok(&st(&[
            ("Name", "<string>$oA01-Race</string>"),
            ("UId", "<string>xyz</string>"),
            ("Environnement", "<string>Stadium</string>"),
            ("Author", "<string>Nadeo</string>"),
        ])),
        "GetCurrentGameInfo" => ok(&st(&[
            ("GameMode", "<i4>1</i4>"),
            ("NbChallenge", "<i4>25</i4>"),
        ])),
        "GetVersion" => ok(&st(&[
            ("Name", "<string>TmForever</string>"),
            ("Version", "<string>2.11.26</string>"),
            ("Build", "<string>2011-02-21_18_00</string>"),
        ])),
        "GetPlayerList" => {
            let p = |login: &str, nick: &str| {
                format!(
                    "<value>{}</value>",
                    st(&[
                        ("Login", &format!("<string>{login}</string>")),
                        ("NickName", &format!("<string>{nick}</string>")),
                        ("PlayerId", "<i4>236</i4>"),
                        ("TeamId", "<i4>-1</i4>"),
                        ("LadderRanking", "<i4>0</i4>"),
                    ])
                )
            };
            ok(&format!(
                "<array><data>{}{}</data></array>",
                p("alice", "$f00Alice"),
                p("bob", "Bob &amp; co")
            ))
        }
        _ => fault(-1000, "Unknown method."),
    }
}

/// The method, handle and XML of the call at the start of `held`, once whole.
fn call_of(held: &[u8]) -> Option<(String, u32, String, usize)> {
    let len = usize::try_from(u32::from_le_bytes(held.get(..4)?.try_into().ok()?)).ok()?;
    let handle = u32::from_le_bytes(held.get(4..8)?.try_into().ok()?);
    let xml = String::from_utf8_lossy(held.get(8..8 + len)?).into_owned();
    let method = xml
        .split("<methodName>")
        .nth(1)?
        .split("</methodName>")
        .next()?
        .to_owned();
    Some((method, handle, xml, 8 + len))
}

/// A GBXRemote 2 server with the login `User`/`s3cr3t-pw`; `locked`: it refuses
/// `GetServerOptions` (as servers do to a connection that did not authenticate; the
/// replay keeps no state, so a locked one refuses it always).
fn nadeo(locked: bool) -> StreamReplay {
    StreamReplay::start(greeting(), move |held| {
        let Some((method, handle, xml, n)) = call_of(held) else {
            return Turn::Wait;
        };
        let reply = match method.as_str() {
            "Authenticate"
                if xml.contains("<string>User</string>")
                    && xml.contains("<string>s3cr3t-pw</string>") =>
            {
                ok("<boolean>1</boolean>")
            }
            "Authenticate" => fault(-1000, "Login unknown."),
            "GetServerOptions" if locked => fault(-1000, "Permission denied."),
            m => nadeo_reply(m),
        };
        Turn::Reply {
            consumed: n,
            reply: frame(handle, &reply),
        }
    })
}

fn ogp_nadeo(port: u16, extra: &[&str], env: &[(&str, &str)]) -> Ran {
    let mut c = std::process::Command::new(ogp_bin());
    c.args(["query", "--json", "-p", "nadeo"])
        .args(extra)
        .arg(format!("127.0.0.1:{port}"))
        .env("NO_COLOR", "1")
        .env_remove("OGP_NADEO_LOGIN")
        .env_remove("OGP_NADEO_PASSWORD")
        .env_remove("OGP_NADEO_PASSWORD_FILE");
    for (k, v) in env {
        c.env(k, v);
    }
    run(&mut c, Duration::from_secs(20))
}

#[test]
fn nadeo_replay_read_by_ogp_query_with_a_login() {
    let server = nadeo(false);
    let port = server.addr().port();
    let ran = ogp_nadeo(port, &[], &[("OGP_NADEO_PASSWORD", "s3cr3t-pw")]);
    let v = parse_json(&ran, "ogp query", "nadeo");
    assert_eq!(v["ok"], true, "{v}");
    let s = &v["status"];
    assert_eq!(str_of(&s["host_name"]), Some("ogp Trackmania".into()));
    assert_eq!(str_of(&s["map"]["name"]), Some("A01-Race".into()));
    assert_eq!(str_of(&s["game_mode"]), Some("Time Attack".into()));
    assert_eq!(str_of(&s["game_name"]), Some("TmForever".into()));
    assert_eq!(str_of(&s["game_version"]), Some("2.11.26".into()));
    assert_eq!(int_of(&s["slot_max"]), Some(32));
    assert_eq!(int_of(&s["player_count"]), Some(2));
    assert_eq!(s["password"], false);
    assert_eq!(names(&s["players"]), ["Alice", "Bob & co"]);
    // The password from a file, the login from the environment; --game finds port 5000
    // only by name, so the port is given.
    let dir = TempDir::new("nadeo-pw");
    let file = dir.0.join("pw");
    std::fs::write(&file, "s3cr3t-pw\n").unwrap();
    let ran = ogp_nadeo(
        port,
        &[],
        &[
            ("OGP_NADEO_LOGIN", "User"),
            ("OGP_NADEO_PASSWORD_FILE", file.to_str().unwrap()),
        ],
    );
    assert_eq!(parse_json(&ran, "ogp query", "nadeo")["ok"], true);
}

/// The password never shows: not in `-vv`'s dump of the sent bytes (blanked there), not
/// in the output; a wrong one is its own error; no login at a locked server, the
/// server's refusal.
#[test]
fn nadeo_password_stays_out_of_output_and_refusals() {
    let server = nadeo(false);
    let port = server.addr().port();
    let ran = ogp_nadeo(
        port,
        &["-vv", "--user", "User"],
        &[("OGP_NADEO_PASSWORD", "s3cr3t-pw")],
    );
    let all = format!("{}{}", String::from_utf8_lossy(&ran.stdout), ran.stderr);
    assert!(!all.contains("s3cr3t-pw"), "{all}");
    let sent = sent_in_dump(&ran.stderr);
    assert!(
        contains_bytes(
            &sent,
            b"<string>User</string></value></param><param><value><string>*********</string>"
        ),
        "{all}"
    );
    assert!(!contains_bytes(&sent, b"s3cr3t-pw"), "{all}");
    let ran = ogp_nadeo(port, &[], &[("OGP_NADEO_PASSWORD", "wrong")]);
    let v = parse_json(&ran, "ogp query", "nadeo");
    assert!(v.to_string().contains("rejected the credentials"), "{v}");
    let locked = nadeo(true);
    let ran = ogp_nadeo(locked.addr().port(), &[], &[]);
    let v = parse_json(&ran, "ogp query", "nadeo");
    assert!(v.to_string().contains("Permission denied."), "{v}");
    // A login without a password: a usage error, nothing sent.
    let ran = ogp_nadeo(port, &["--user", "User"], &[]);
    assert!(
        ran.stderr.contains("OGP_NADEO_PASSWORD"),
        "{}",
        ran.describe()
    );
}

#[test]
fn gamedig_reads_nadeo_as_we_do() {
    if !enabled("gamedig_reads_nadeo_as_we_do") {
        return;
    }
    let mut r = Report::default();
    let server = nadeo(false);
    let port = server.addr().port();
    let ran = ogp_nadeo(port, &[], &[("OGP_NADEO_PASSWORD", "s3cr3t-pw")]);
    let s = parse_json(&ran, "ogp query", "nadeo")["status"].clone();
    let ran = run(
        std::process::Command::new("node")
            .arg(gamedig_js())
            .args(["--type", "protocol-nadeo", "--givenPortOnly"])
            .args(["--login", "User", "--password", "s3cr3t-pw"])
            .args(["--socketTimeout", "3000", "--maxRetries", "1"])
            .arg(format!("127.0.0.1:{port}")),
        CLIENT_LIMIT,
    );
    let g = parse_json(&ran, "gamedig nadeo", "replay");
    r.eq(
        "gamedig name".into(),
        str_of(&g["name"]),
        str_of(&s["host_name"]),
    );
    r.eq(
        "gamedig map".into(),
        str_of(&g["map"]),
        str_of(&s["map"]["name"]),
    );
    r.eq(
        "gamedig max".into(),
        int_of(&g["maxplayers"]),
        int_of(&s["slot_max"]),
    );
    r.eq(
        "gamedig numplayers".into(),
        int_of(&g["numplayers"]),
        int_of(&s["player_count"]),
    );
    r.eq(
        "gamedig version".into(),
        str_of(&g["version"]),
        str_of(&s["game_version"]),
    );
    r.eq(
        "gamedig password".into(),
        g["password"].as_bool(),
        s["password"].as_bool(),
    );
    r.eq(
        "gamedig game mode".into(),
        str_of(&g["raw"]["gametype"]),
        str_of(&s["game_mode"]),
    );
    r.list(
        "gamedig players".into(),
        &names(&g["players"]),
        &names(&s["players"]),
    );
    r.finish("gamedig");
}

// ------------------------------------------------------------------------------------
// Open Tibia: the status protocol's XML `info` (The Forgotten Server's document)

const TIBIA_REQUEST: [u8; 8] = [6, 0, 0xff, 0xff, b'i', b'n', b'f', b'o'];

/// The Forgotten Server's reply, as its `ProtocolStatus::sendStatusString` writes it:
/// the document, raw, then the close.
const TIBIA_XML: &str = concat!(
    r#"<?xml version="1.0"?>"#,
    r#"<tsqp version="1.0"><serverinfo uptime="3600" ip="127.0.0.1" servername="ogp Tibia" port="7171" location="Europe" url="https://example.org/" server="The Forgotten Server" version="1.6" client="13.10"/>"#,
    r#"<owner name="Admin" email=""/><players online="7" max="900" peak="12"/><monsters total="15021"/><npcs total="61"/>"#,
    r#"<rates experience="5" skill="3" loot="2" magic="3" spawn="1"/><map name="forgotten" author="Komic" width="2048" height="2048"/><motd>Welcome</motd></tsqp>"#,
);

fn tibia(reply: Vec<u8>) -> StreamReplay {
    StreamReplay::start(Vec::new(), move |held| {
        if held.len() < TIBIA_REQUEST.len() {
            Turn::Wait
        } else if held[..TIBIA_REQUEST.len()] == TIBIA_REQUEST {
            Turn::Close(reply.clone())
        } else {
            Turn::Close(Vec::new())
        }
    })
}

#[test]
fn tibia_replay_read_by_ogp_query() {
    let server = tibia(TIBIA_XML.as_bytes().to_vec());
    let v = ogp_query_port_json(&["-p", "tibia"], server.addr().port());
    assert_eq!(v["ok"], true, "{v}");
    let s = &v["status"];
    assert_eq!(str_of(&s["host_name"]), Some("ogp Tibia".into()));
    assert_eq!(str_of(&s["game_version"]), Some("13.10".into()));
    assert_eq!(int_of(&s["player_count"]), Some(7));
    assert_eq!(int_of(&s["slot_max"]), Some(900));
    assert_eq!(int_of(&s["uptime_seconds"]), Some(3600));
    assert_eq!(str_of(&s["map"]["name"]), Some("forgotten".into()));
    assert_eq!(
        str_of(&s["rules"]["server"]),
        Some("The Forgotten Server".into())
    );
    assert_eq!(str_of(&s["rules"]["players_peak"]), Some("12".into()));
    // the catalogue's game names the protocol and its port
    let v = ogp_query_port_json(&["--game", "tibia"], server.addr().port());
    assert_eq!(
        v["ok"], true,
        "a server answers one status query per address in 5 s, but the replay does not count: {v}"
    );
    assert_eq!(v["protocol"], "tibia", "{v}");
}

/// `ogp scan` reads the four protocols in one run (the Nadeo login from the
/// environment).
#[test]
fn ogp_scan_reads_beammp_starmade_nadeo_and_tibia() {
    let (b, m, n, t) = (
        beammp(framed_json()),
        starmade(starmade_reply()),
        nadeo(false),
        tibia(TIBIA_XML.as_bytes().to_vec()),
    );
    let list = format!(
        "beammp 127.0.0.1:{}\nstarmade 127.0.0.1:{}\nnadeo 127.0.0.1:{}\ntibia 127.0.0.1:{}\n",
        b.addr().port(),
        m.addr().port(),
        n.addr().port(),
        t.addr().port()
    );
    let ran = run_with_input(
        std::process::Command::new(ogp_bin())
            .args(["scan", "--json", "-"])
            .env("NO_COLOR", "1")
            .env("OGP_NADEO_PASSWORD", "s3cr3t-pw")
            .env_remove("OGP_NADEO_LOGIN"),
        Some(list.as_bytes()),
        Duration::from_secs(30),
    );
    let text = out(&ran);
    let mut names: Vec<String> = text
        .lines()
        .filter_map(|l| serde_json::from_str::<Value>(l).ok())
        .filter(|v| v["ok"] == true)
        .filter_map(|v| str_of(&v["status"]["host_name"]))
        .collect();
    names.sort();
    assert_eq!(
        names,
        ["ogp Beam", "ogp StarMade", "ogp Tibia", "ogp Trackmania"],
        "{text}"
    );
}

// ------------------------------------------------------------------------------------
// Hostile servers: one clear error each, in bounded time

fn timed(args: &[&str], port: u16) -> (Value, Duration) {
    let t0 = Instant::now();
    let v = ogp_query_port_json(args, port);
    (v, t0.elapsed())
}

#[test]
fn hostile_tcp_game_servers() {
    let quick = ["--timeout", "300", "--retries", "0"];
    let cases: Vec<(&str, StreamReplay, &str)> = vec![
        // BeamMP: a length of 16 MiB - 1: refused at once.
        ("beammp", beammp(vec![0xff, 0xff, 0xff, 0, b'{']), "Length"),
        // BeamMP: an unframed body that never ends: the cap, then one error.
        (
            "beammp",
            StreamReplay::start(Vec::new(), |held| {
                if held.is_empty() {
                    return Turn::Wait;
                }
                Turn::Reply {
                    consumed: 0,
                    reply: vec![b'a'; 64 * 1024],
                }
            }),
            "limit",
        ),
        // StarMade: a length of 4 GiB.
        ("starmade", starmade(vec![0xff; 16]), "Length"),
        // Nadeo: a frame of 4 GiB announced.
        (
            "nadeo",
            StreamReplay::start(greeting(), |held| match call_of(held) {
                None => Turn::Wait,
                Some((_, h, _, n)) => {
                    let mut f = vec![0xff, 0xff, 0xff, 0xff];
                    f.extend(h.to_le_bytes());
                    Turn::Reply {
                        consumed: n,
                        reply: f,
                    }
                }
            }),
            "FrameLength",
        ),
        // Nadeo: XML nested 10,000 deep.
        (
            "nadeo",
            StreamReplay::start(greeting(), |held| match call_of(held) {
                None => Turn::Wait,
                Some((_, h, _, n)) => Turn::Reply {
                    consumed: n,
                    reply: frame(
                        h,
                        &ok(&format!(
                            "{}{}",
                            "<array><data><value>".repeat(10_000),
                            "</value></data></array>".repeat(10_000)
                        )),
                    ),
                },
            }),
            "nest deeper",
        ),
        // Nadeo: callbacks and never the reply.
        (
            "nadeo",
            StreamReplay::start(greeting(), |held| {
                match call_of(held) {
                None => Turn::Wait,
                Some((_, _, _, n)) => Turn::Reply {
                    consumed: n,
                    reply: (0..300)
                        .flat_map(|i| frame(i, "<methodCall><methodName>TrackMania.PlayerChat</methodName></methodCall>"))
                        .collect(),
                },
            }
            }),
            "callbacks",
        ),
        // Open Tibia: closed unanswered (a second query within the server's statusTimeout).
        ("tibia", tibia(Vec::new()), "statusTimeout"),
        // Open Tibia: a web server on the port.
        (
            "tibia",
            tibia(b"HTTP/1.1 400 Bad Request\r\n\r\n".to_vec()),
            "not an Open Tibia",
        ),
        // Open Tibia: a document that never ends: the cap, then one error.
        (
            "tibia",
            StreamReplay::start(Vec::new(), |held| {
                if held.len() < 8 {
                    return Turn::Wait;
                }
                Turn::Reply {
                    consumed: 0,
                    reply: format!("<tsqp><motd>{}", "x".repeat(128 * 1024)).into_bytes(),
                }
            }),
            "limit",
        ),
        // Nadeo: not GBXRemote.
        (
            "nadeo",
            StreamReplay::start(b"SSH-2.0-OpenSSH_9.2\r\n".to_vec(), |_| Turn::Wait),
            "HandshakeLength",
        ),
    ];
    for (protocol, server, want) in cases {
        let mut args = vec!["-p", protocol];
        args.extend(quick);
        let (v, took) = timed(&args, server.addr().port());
        assert_eq!(v["ok"], false, "{protocol} {want}: {v}");
        assert!(v.to_string().contains(want), "{protocol} {want}: {v}");
        assert!(took < Duration::from_secs(5), "{protocol} {want}: {took:?}");
    }
    // A silent GBXRemote server: the read timer, well within a second here.
    let silent = StreamReplay::start(greeting(), |_| Turn::Wait);
    let (v, took) = timed(
        &["-p", "nadeo", "--timeout", "200", "--retries", "0"],
        silent.addr().port(),
    );
    assert!(v.to_string().contains("GetServerOptions"), "{v}");
    assert!(took < Duration::from_secs(5), "{took:?}");
}
