//! Interop, SA-MP / open.mp, client side (issue #38): no SA-MP server runs here, so the
//! two real servers' replies of `crates/ogp-proto/tests/data/samp/` (see SOURCES.md
//! there) are replayed by a loopback server (`ogp_testkit::replay::Replay`: each request
//! answered with its own 11-byte header and the capture's body for its opcode, `o` not
//! answered, as SA-MP does), and read by `ogp query --json` and by the readers that run
//! here: npm `samp-query` 0.1.5 (`i`, `r`, `d`), PyPI `samp-client` 3.0.1 (`i`, `r`, `c`)
//! and gamedig 5.3.3 (`gtasam`: `i`, `r`, `d`). They agree field by field, their habits
//! aside:
//!
//! | | samp-query | samp-client | gamedig |
//! |---|---|---|---|
//! | strings past ASCII | a Greek table (Windows-1253) | Windows-1252 | Windows-1252 |
//! | rules | `lagcomp` a boolean, `weather` a number | as sent | as sent |
//! | scores, pings | the low 16 bits | as sent (no pings: `c`) | under `raw` |
//!
//! We ask `c` (both SA-MP and open.mp answer it; open.mp has no `d`): no pings to compare.
//!
//! We read strings as UTF-8 when they are, else in `--charset` (`cp1251`, `cp1252`), else
//! Latin-1 with a warning. Runs only with `OGP_INTEROP=1` (set by `scripts/test.sh`
//! after `scripts/install-interop.sh`).

use crate::common;

use std::process::Command;
use std::time::Duration;

use common::*;
use ogp_proto::internals::from_hex;
use ogp_testkit::replay::Replay;
use serde_json::Value;

fn capture(file: &str) -> Value {
    let path = format!("{ROOT}/crates/ogp-proto/tests/data/samp/{file}");
    serde_json::from_slice(&std::fs::read(&path).unwrap()).unwrap()
}

/// The bodies (after the 11-byte header) of a capture's replies, by opcode.
fn bodies(c: &Value) -> Vec<(u8, Vec<u8>)> {
    c["responses"]
        .as_object()
        .unwrap()
        .iter()
        .map(|(op, hex)| {
            let bytes = from_hex(hex.as_str().unwrap()).unwrap();
            (op.as_bytes()[0], bytes[11..].to_vec())
        })
        .collect()
}

/// A loopback SA-MP server answering each request with its header and the body of its
/// opcode, if it has one.
fn server(bodies: Vec<(u8, Vec<u8>)>) -> Replay {
    Replay::start(move |req| {
        if req.len() != 11 || !req.starts_with(b"SAMP") {
            return Vec::new();
        }
        bodies
            .iter()
            .filter(|(op, _)| *op == req[10])
            .map(|(_, body)| [req, body].concat())
            .collect()
    })
}

fn samp_query(port: u16) -> Value {
    let modules = interop_dir().join("npm/node_modules");
    if !modules.join("samp-query/package.json").is_file() {
        missing_peer("npm samp-query 0.1.5 (run scripts/install-interop.sh)");
    }
    let ran = run(
        Command::new("node")
            .arg(script("tests/interop/samp_query.js"))
            .args(["127.0.0.1", &port.to_string()])
            .env("NODE_PATH", &modules),
        CLIENT_LIMIT,
    );
    parse_json(&ran, "samp-query", "replay")
}

fn samp_client(port: u16) -> Value {
    let py = venv_python("samp_client.client", "samp-client", "3.0.1");
    let ran = run(
        Command::new(py)
            .arg(script("tests/interop/samp_client_py.py"))
            .args(["127.0.0.1", &port.to_string()]),
        CLIENT_LIMIT,
    );
    parse_json(&ran, "samp-client", "replay")
}

fn gamedig(port: u16) -> Value {
    let ran = run(
        Command::new("node")
            .arg(gamedig_js())
            .args(["--type", "gtasam", "--givenPortOnly"])
            .args(["--socketTimeout", "1500", "--maxRetries", "1"])
            .arg(format!("127.0.0.1:{port}")),
        CLIENT_LIMIT,
    );
    parse_json(&ran, "gamedig gtasam", "replay")
}

/// Name and score of each player of a JSON list.
fn players(list: &Value) -> Vec<(String, i64)> {
    list.as_array()
        .map(|l| {
            l.iter()
                .map(|p| {
                    (
                        str_of(&p["name"]).unwrap_or_default(),
                        int_of(&p["score"]).unwrap_or(i64::MIN),
                    )
                })
                .collect()
        })
        .unwrap_or_default()
}

#[test]
fn three_readers_read_the_real_servers_captures_as_we_do() {
    if !enabled("three_readers_read_the_real_servers_captures_as_we_do") {
        return;
    }
    for file in ["gameq-gfzone-1.json", "opengsq-valrise-1.json"] {
        let replay = server(bodies(&capture(file)));
        let port = replay.addr().port();
        let ours = ogp_query_port_json(&["-p", "samp"], port);
        let auto = ogp_query_port_json(&[], port);
        assert_eq!(auto["protocol"], "samp", "{file}: {auto}");
        assert_eq!(auto["status"], ours["status"], "{file}");
        let s = &ours["status"];
        let rule = |k: &str| str_of(&s["rules"][k]);

        let q = samp_query(port);
        let mut r = Report::default();
        r.eq(format!("{file} error"), q.get("error"), None);
        r.eq(
            format!("{file} hostname"),
            str_of(&q["hostname"]),
            str_of(&s["host_name"]),
        );
        r.eq(
            format!("{file} gamemode"),
            str_of(&q["gamemode"]),
            str_of(&s["game_type"]),
        );
        r.eq(
            format!("{file} mapname (the language)"),
            str_of(&q["mapname"]),
            rule("language"),
        );
        r.eq(
            format!("{file} passworded"),
            q["passworded"].as_bool(),
            s["password"].as_bool(),
        );
        r.eq(
            format!("{file} online"),
            int_of(&q["online"]),
            int_of(&s["player_count"]),
        );
        r.eq(
            format!("{file} maxplayers"),
            int_of(&q["maxplayers"]),
            int_of(&s["slot_max"]),
        );
        for k in ["version", "mapname", "weburl", "worldtime"] {
            r.eq(format!("{file} rule {k}"), str_of(&q["rules"][k]), rule(k));
        }
        r.eq(
            format!("{file} rule lagcomp"),
            q["rules"]["lagcomp"].as_bool(),
            rule("lagcomp").map(|v| v == "On"),
        );
        r.eq(
            format!("{file} rule weather"),
            int_of(&q["rules"]["weather"]),
            rule("weather").and_then(|w| w.parse().ok()),
        );
        r.list(
            format!("{file} players"),
            &players(&q["players"]),
            &players(&s["players"]),
        );
        r.finish("samp-query");

        let c = samp_client(port);
        let mut r = Report::default();
        r.eq(
            format!("{file} error"),
            c.get("error").filter(|e| !e.is_null()),
            None,
        );
        let i = &c["info"];
        r.eq(
            format!("{file} hostname"),
            str_of(&i["hostname"]),
            str_of(&s["host_name"]),
        );
        r.eq(
            format!("{file} gamemode"),
            str_of(&i["gamemode"]),
            str_of(&s["game_type"]),
        );
        r.eq(
            format!("{file} language"),
            str_of(&i["language"]),
            rule("language"),
        );
        r.eq(
            format!("{file} password"),
            i["password"].as_bool(),
            s["password"].as_bool(),
        );
        r.eq(
            format!("{file} players"),
            int_of(&i["players"]),
            int_of(&s["player_count"]),
        );
        r.eq(
            format!("{file} max_players"),
            int_of(&i["max_players"]),
            int_of(&s["slot_max"]),
        );
        let mut ours_rules = s["rules"].as_object().unwrap().clone();
        ours_rules.remove("language");
        r.eq(
            format!("{file} rules"),
            c["rules"].as_object(),
            Some(&ours_rules),
        );
        r.list(
            format!("{file} clients"),
            &players(&c["clients"]),
            &players(&s["players"]),
        );
        r.finish("samp-client");

        let g = gamedig(port);
        let mut r = Report::default();
        r.eq(format!("{file} error"), g.get("error"), None);
        r.eq(
            format!("{file} name"),
            str_of(&g["name"]),
            str_of(&s["host_name"]),
        );
        r.eq(
            format!("{file} numplayers"),
            int_of(&g["numplayers"]),
            int_of(&s["player_count"]),
        );
        r.eq(
            format!("{file} maxplayers"),
            int_of(&g["maxplayers"]),
            int_of(&s["slot_max"]),
        );
        r.eq(
            format!("{file} version"),
            str_of(&g["version"]),
            str_of(&s["game_version"]),
        );
        r.eq(
            format!("{file} gamemode"),
            str_of(&g["raw"]["gamemode"]),
            str_of(&s["game_type"]),
        );
        // gamedig keeps the score under `raw`
        let g_players: Vec<(String, i64)> = g["players"]
            .as_array()
            .map(|l| {
                l.iter()
                    .map(|p| {
                        (
                            str_of(&p["name"]).unwrap_or_default(),
                            int_of(&p["raw"]["score"]).unwrap_or(i64::MIN),
                        )
                    })
                    .collect()
            })
            .unwrap_or_default();
        r.list(
            format!("{file} players"),
            &g_players,
            &players(&s["players"]),
        );
        r.finish("gamedig gtasam");
    }
}

/// A server whose host name and player name are Windows-1251 (a Russian server), with
/// an escape sequence in the host name.
fn cyrillic_server() -> Replay {
    let name = b"\xd1\xe5\xf0\xe2\xe5\xf0 \xb91 \x1b[2J"; // "Сервер №1 ESC[2J" in cp1251
    let mut info = vec![0, 1, 0, 10, 0];
    for s in [&name[..], b"RP", b"\xd0\xf3\xf1\xf1\xea\xe8\xe9"] {
        info.extend_from_slice(&u32::try_from(s.len()).unwrap().to_le_bytes());
        info.extend_from_slice(s);
    }
    let rules = b"\x01\x00\x07version\x080.3.7-R2".to_vec();
    let clients = b"\x01\x00\x04\xcf\xe5\xf2\xff\x05\x00\x00\x00".to_vec(); // "Петя", 5
    server(vec![(b'i', info), (b'r', rules), (b'c', clients)])
}

#[test]
fn code_pages_are_read_as_asked_and_never_reach_the_terminal_raw() {
    if !enabled("code_pages_are_read_as_asked_and_never_reach_the_terminal_raw") {
        return;
    }
    let replay = cyrillic_server();
    let port = replay.addr().port();
    let ru = ogp_query_port_json(&["-p", "samp", "--charset", "cp1251"], port);
    assert_eq!(ru["status"]["host_name"], "Сервер №1 \u{1b}[2J");
    assert_eq!(ru["status"]["rules"]["language"], "Русский");
    assert_eq!(ru["status"]["players"][0]["name"], "Петя");
    assert_eq!(ru["warnings"], serde_json::json!([]));
    // without a charset: Latin-1, with a warning
    let auto = ogp_query_port_json(&["-p", "samp"], port);
    assert_eq!(auto["status"]["players"][0]["name"], "Ïåòÿ");
    assert!(auto["warnings"].to_string().contains("Latin-1"), "{auto}");
    // samp-client reads Windows-1252: as we do when asked for it
    let we = ogp_query_port_json(&["-p", "samp", "--charset", "cp1252"], port);
    let c = samp_client(port);
    assert_eq!(
        str_of(&c["info"]["hostname"]),
        str_of(&we["status"]["host_name"])
    );
    assert_eq!(players(&c["clients"]), players(&we["status"]["players"]));
    // samp-query's Greek table is its habit: not the server's text
    let q = samp_query(port);
    assert_ne!(str_of(&q["hostname"]), str_of(&ru["status"]["host_name"]));
    // human output: the escape sequence is not passed on
    let target = format!("127.0.0.1:{port}");
    let ran = ogp_run(
        &["query", "-p", "samp", "--charset", "cp1251", &target],
        Duration::from_secs(20),
    );
    let text = out(&ran);
    assert!(text.contains("Сервер №1"), "{text}");
    assert!(unsafe_chars(&text).is_empty(), "{text:?}");
}

#[test]
fn an_openmp_server_is_told_by_its_o_reply() {
    if !enabled("an_openmp_server_is_told_by_its_o_reply") {
        return;
    }
    let mut b = bodies(&capture("opengsq-valrise-1.json"));
    let mut o = Vec::new();
    for s in [
        "discord.gg/openmp",
        "https://x/light.png",
        "https://x/dark.png",
        "https://x/logo.png",
    ] {
        o.extend_from_slice(&u32::try_from(s.len()).unwrap().to_le_bytes());
        o.extend_from_slice(s.as_bytes());
    }
    b.push((b'o', o));
    let replay = server(b);
    let v = ogp_query_port_json(&[], replay.addr().port());
    assert_eq!(v["protocol"], "samp", "{v}");
    assert_eq!(v["status"]["game_name"], "open.mp");
    assert_eq!(v["status"]["rules"]["discord"], "discord.gg/openmp");
    assert_eq!(v["status"]["rules"]["logo"], "https://x/logo.png");
}
