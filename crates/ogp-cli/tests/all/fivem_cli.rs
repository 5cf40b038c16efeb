//! FiveM over HTTP: real servers' JSON documents (`crates/ogp-proto/tests/data/fivem/`,
//! see its SOURCES.md) replayed on loopback by `ogp_testkit::fivem::FivemReplay` (HTTP
//! and UDP `getinfo` on one port, as FXServer), read by us and by gamedig.
//!
//! * Ours, always: `ogp query -p fivem --json`, `ogp query --game redm`-style catalogue
//!   names, and `ogp scan` lines (`fivem HOST:PORT`, `game:fivem HOST:PORT`).
//! * With `OGP_INTEROP=1`: gamedig 5.3.3 (`gta5f`: `getinfo` over UDP, then
//!   `/info.json` and `/players.json`) reads the same replay and agrees field by field
//!   (name, map, maxplayers, numplayers, players' names and pings, the raw variables).

use crate::common;

use std::process::Command;

use common::*;
use ogp_testkit::fivem::{recorded, FivemReplay};
use serde_json::Value;

/// What the ZAP-Hosting ESX test server's documents say, as our JSON must say it.
fn check_zap(v: &Value, what: &str) {
    let s = &v["status"];
    assert_eq!(v["ok"], true, "{what}: {v}");
    assert_eq!(v["protocol"], "fivem", "{what}");
    assert_eq!(
        s["host_name"],
        "test-server built with ZAP-Hosting ESX Pack by ZAP-Hosting.com & the ESX Team!",
        "{what}"
    );
    assert_eq!(s["game_name"], "FiveM", "{what}");
    assert_eq!(s["map"]["name"], "San Andreas", "{what}");
    assert_eq!(s["game_type"], "ESX Legacy", "{what}");
    assert_eq!(
        s["game_version"], "FXServer-master SERVER v1.0.0.5535 win32",
        "{what}"
    );
    assert_eq!(
        (s["player_count"].as_u64(), s["slot_max"].as_u64()),
        (Some(1), Some(32)),
        "{what}"
    );
    assert_eq!(
        s["rules"]["sv_projectName"],
        "[ZAP-Hosting ESX Pack] test-server"
    );
    assert_eq!(s["rules"]["gamename"], "gta5");
    assert_eq!(s["addons"].as_array().map(Vec::len), Some(60), "{what}");
    assert_eq!(s["addons"][0]["short_name"], "hardcap", "{what}");
    let p = &s["players"][0];
    assert_eq!(
        (p["name"].as_str(), p["ping"].as_u64(), p["id"].as_u64()),
        (Some("BallChopHee"), Some(49), Some(1)),
        "{what}: {p}"
    );
    assert!(
        str_of(&p["extra"]["identifiers"]).is_some_and(
            |i| i.starts_with("license:d7370adc") && i.contains("discord:877121992724205598")
        ),
        "{what}: {p}"
    );
    assert_eq!(
        v["warnings"].as_array().map_or(0, Vec::len),
        0,
        "{what}: {v}"
    );
}

#[test]
fn ogp_reads_the_replayed_server() {
    let r = FivemReplay::start(recorded("zap-esx"));
    let target = r.addr().to_string();
    check_zap(&ogp_query_json(&["-p", "fivem"], &target), "-p fivem");
    // one connection, the three documents in order
    assert_eq!(
        r.paths(),
        ["/dynamic.json", "/info.json", "/players.json"],
        "what -p fivem asked"
    );
    // the catalogue's games name the protocol
    check_zap(
        &ogp_query_json(&["--game", "fivem"], &target),
        "--game fivem",
    );
    let ran = ogp_run_with_input(
        &["scan", "-", "--json", "--timeout", "2000"],
        Some(format!("fivem {target}\ngame:redm {target}\n").as_bytes()),
        CLIENT_LIMIT,
    );
    let out = String::from_utf8_lossy(&ran.stdout);
    let lines: Vec<Value> = out
        .lines()
        .map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("{e}: {l}")))
        .collect();
    assert_eq!(lines.len(), 2, "{}", ran.describe());
    for v in &lines {
        check_zap(v, "scan");
    }
}

/// A server whose `/dynamic.json` is missing and whose names carry colour codes: the
/// host name comes from `sv_projectName`, stripped, the raw name kept.
#[test]
fn colour_codes_and_a_missing_document() {
    let r = FivemReplay::start(recorded("inhouse"));
    let v = ogp_query_json(&["-p", "fivem"], &r.addr().to_string());
    let s = &v["status"];
    assert_eq!(v["ok"], true, "{v}");
    assert_eq!(
        s["host_name"],
        "In-House Development |  Drugs and Heists  |  Wars  |  Active Gangs  |  Active Staff  |  Exclusive Scripts  | 16+"
    );
    assert!(str_of(&s["host_name_raw"]).is_some_and(|h| h.starts_with("^5In-House")));
    assert_eq!(s["slot_max"], 128);
    assert_eq!(s["addons"].as_array().map(Vec::len), Some(5));
    // /dynamic.json and /players.json answered 404: left out, each with a warning
    let warnings: Vec<String> = v["warnings"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(str_of)
        .collect();
    assert_eq!(warnings.len(), 2, "{warnings:?}");
    assert!(warnings[0].contains("HTTP 404") && warnings[0].contains("/dynamic.json"));
    assert!(warnings[1].contains("/players.json"));
    // the base64 icon is nowhere in the output
    assert!(!v.to_string().contains("iVBORw0KGgo"));
}

#[test]
fn gamedig_agrees_with_ours() {
    if !enabled("fivem_cli") {
        return;
    }
    let r = FivemReplay::start(recorded("zap-esx"));
    let ours = ogp_query_json(&["-p", "fivem"], &r.addr().to_string());
    check_zap(&ours, "ours");
    let s = &ours["status"];
    let before = r.paths().len();
    let ran = run(
        Command::new("node")
            .arg(gamedig_js())
            .args(["--type", "gta5f", "--givenPortOnly"])
            .args(["--socketTimeout", "2000", "--maxRetries", "1"])
            .arg(r.addr().to_string()),
        CLIENT_LIMIT,
    );
    let g = parse_json(&ran, "gamedig gta5f", "zap-esx");
    // what gamedig asks: getinfo over UDP (answered from /dynamic.json), then two
    // documents over HTTP
    assert_eq!(
        r.paths().get(before..).map(<[String]>::to_vec),
        Some(vec!["/info.json".to_string(), "/players.json".to_string()]),
        "gamedig's requests"
    );
    let mut rep = Report(Vec::new());
    rep.eq("name".into(), str_of(&g["name"]), str_of(&s["host_name"]));
    rep.eq("map".into(), str_of(&g["map"]), str_of(&s["map"]["name"]));
    // gamedig keeps getinfo's values as sent (text)
    let num = |v: &Value| int_of(v).or_else(|| str_of(v).and_then(|s| s.parse().ok()));
    rep.eq(
        "maxplayers".into(),
        num(&g["maxplayers"]),
        int_of(&s["slot_max"]),
    );
    // gamedig's numplayers is getinfo's `clients` only when the reply carries `iv`
    // (FXServer always sends it; the recorded /dynamic.json has none, so the replay's
    // getinfo has none): otherwise it counts getinfo's player lines, which FiveM never
    // sends (0). Its `raw.clients` is the count.
    rep.eq(
        "numplayers (getinfo without iv: 0)".into(),
        num(&g["numplayers"]),
        Some(0),
    );
    rep.eq(
        "raw.clients".into(),
        num(&g["raw"]["clients"]),
        int_of(&s["player_count"]),
    );
    let players = |v: &Value, name: &str, ping: &str| -> Vec<(String, i64)> {
        v.as_array()
            .map(|a| {
                a.iter()
                    .map(|p| {
                        (
                            str_of(&p[name]).unwrap_or_default(),
                            p.pointer(ping).and_then(int_of).unwrap_or(i64::MIN),
                        )
                    })
                    .collect()
            })
            .unwrap_or_default()
    };
    rep.eq(
        "players (name, ping)".into(),
        players(&g["players"], "name", "/raw/ping"),
        players(&s["players"], "name", "/ping"),
    );
    rep.eq(
        "raw.info.vars".into(),
        g["raw"]["info"]["vars"].clone(),
        s["rules"].clone(),
    );
    rep.eq(
        "raw.info.resources".into(),
        g["raw"]["info"]["resources"]
            .as_array()
            .map(|a| a.iter().filter_map(str_of).collect::<Vec<_>>()),
        s["addons"].as_array().map(|a| {
            a.iter()
                .map(|x| str_of(&x["short_name"]).unwrap_or_default())
                .collect()
        }),
    );
    rep.eq(
        "raw.players[0].identifiers".into(),
        g["raw"]["players"][0]["identifiers"]
            .as_array()
            .map(|a| a.iter().filter_map(str_of).collect::<Vec<_>>().join(", ")),
        str_of(&s["players"][0]["extra"]["identifiers"]),
    );
    rep.finish("gamedig gta5f");
}
