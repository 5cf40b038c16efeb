//! Interop: real Minecraft: Java Edition servers (npm `minecraft-protocol` 1.68.0,
//! started by `tests/interop/mc-server.js` on a free loopback port) read by
//! `ogp query -p minecraft --json`, and by `mcstatus` 14.2.0 (PyPI), the reference
//! client, on the same server: both must say what the server was given (version name
//! and protocol, max players, online, the MOTD as plain text; ours also raw, with its
//! `§` codes), field for field.
//!
//! Two protocol versions: 1.20.1 (763) and 1.12.2 (340); and a Forge-like 1.20.1 server
//! with a player sample, `forgeData` mods and an icon, read alike by both. The peers are installed by
//! `scripts/install-gameservers.sh` (into `target/interop/npm-mc` and the interop venv);
//! the tests run only when `OGP_INTEROP=1`.

use std::process::Command;
use std::time::Duration;

use ogp_testkit::gameservers::Minecraft;
use ogp_testkit::interop::{self, Report};
use serde_json::Value;

const MOTD: &str = "§aA §lreal§r test server";
const MOTD_PLAIN: &str = "A real test server";

/// Starts the npm server of `version`; returns it and its port once it listens.
fn start(version: &str, max_players: u32) -> (Minecraft, u16) {
    start_with(version, max_players, &[])
}

/// As [`start`], with `MC_*` variables that add to its status (see mc-server.js).
fn start_with(version: &str, max_players: u32, env: &[(&str, &str)]) -> (Minecraft, u16) {
    let server = Minecraft::start(version, MOTD, max_players, env);
    let port = server.port;
    (server, port)
}

fn ogp(port: u16) -> Value {
    ogp_with(&["-p", "minecraft"], port)
}

fn ogp_with(args: &[&str], port: u16) -> Value {
    let ran = interop::run(
        Command::new(env!("CARGO_BIN_EXE_ogp"))
            .args(["query", "--json"])
            .args(args)
            .arg(format!("127.0.0.1:{port}")),
        Duration::from_secs(60),
    );
    interop::parse_json(&ran, "ogp", "minecraft")
}

const MCSTATUS: &str = r#"
import json, sys
from mcstatus import JavaServer
s = JavaServer("127.0.0.1", int(sys.argv[1])).status()
print(json.dumps({
    "version": s.version.name, "protocol": s.version.protocol,
    "max": s.players.max, "online": s.players.online,
    "plain": s.motd.to_plain(), "raw": s.raw,
}))
"#;

fn mcstatus(port: u16) -> Value {
    let py = interop::venv_python("mcstatus", "mcstatus", "14.2.0");
    let ran = interop::run(
        Command::new(py).args(["-c", MCSTATUS, &port.to_string()]),
        Duration::from_secs(60),
    );
    interop::parse_json(&ran, "mcstatus", "minecraft")
}

fn check(version: &str, protocol: i64, max_players: u32) {
    let (_server, port) = start(version, max_players);
    let ours = ogp(port);
    let theirs = mcstatus(port);
    let s = &ours["status"];
    let mut r = Report(Vec::new());
    r.eq("ok".into(), ours["ok"].clone(), Value::Bool(true));
    r.eq(
        "protocol".into(),
        ours["protocol"].as_str(),
        Some("minecraft"),
    );
    // What the server was given.
    r.eq("version".into(), s["game_version"].as_str(), Some(version));
    r.eq(
        "protocol number".into(),
        s["rules"]["protocol"].as_str(),
        Some(protocol.to_string().as_str()),
    );
    r.eq(
        "max".into(),
        s["slot_max"].as_u64(),
        Some(u64::from(max_players)),
    );
    r.eq("online".into(), s["player_count"].as_u64(), Some(0));
    r.eq(
        "motd plain".into(),
        s["host_name"].as_str(),
        Some(MOTD_PLAIN),
    );
    r.eq("motd raw".into(), s["host_name_raw"].as_str(), Some(MOTD));
    r.eq("game".into(), ours["game_id"].as_str(), Some("minecraft"));
    // the games catalogue's name alone finds it (status on the game port)
    let by_game = ogp_with(&["--game", "minecraft"], port);
    r.eq(
        "--game minecraft".into(),
        (
            by_game["protocol"].as_str(),
            by_game["status"]["host_name"].as_str(),
        ),
        (Some("minecraft"), Some(MOTD_PLAIN)),
    );
    // mcstatus on the same server, field for field.
    r.eq(
        "mcstatus version".into(),
        theirs["version"].as_str(),
        s["game_version"].as_str(),
    );
    r.eq(
        "mcstatus protocol".into(),
        theirs["protocol"].as_i64().map(|p| p.to_string()),
        s["rules"]["protocol"].as_str().map(str::to_owned),
    );
    r.eq(
        "mcstatus max".into(),
        theirs["max"].as_u64(),
        s["slot_max"].as_u64(),
    );
    r.eq(
        "mcstatus online".into(),
        theirs["online"].as_u64(),
        s["player_count"].as_u64(),
    );
    r.eq(
        "mcstatus plain".into(),
        theirs["plain"].as_str(),
        s["host_name"].as_str(),
    );
    r.eq(
        "mcstatus raw description".into(),
        theirs["raw"]["description"]["text"].as_str(),
        s["host_name_raw"].as_str(),
    );
    r.finish(&format!("ogp and mcstatus on minecraft-protocol {version}"));
}

#[test]
fn minecraft_1_20_1_read_by_ogp_and_mcstatus_alike() {
    if !interop::enabled("minecraft_1_20_1_read_by_ogp_and_mcstatus_alike") {
        return;
    }
    check("1.20.1", 763, 50);
}

#[test]
fn minecraft_1_12_2_read_by_ogp_and_mcstatus_alike() {
    if !interop::enabled("minecraft_1_12_2_read_by_ogp_and_mcstatus_alike") {
        return;
    }
    check("1.12.2", 340, 7);
}

/// A 1×1 PNG, as a server icon.
const FAVICON: &str = "data:image/png;base64,iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg==";

const MCSTATUS_FORGE: &str = r#"
import json, sys
from mcstatus import JavaServer
s = JavaServer("127.0.0.1", int(sys.argv[1])).status()
print(json.dumps({
    "icon": s.icon,
    "sample": [[p.name, p.id] for p in (s.players.sample or [])],
    "online": s.players.online,
    "mods": [[m.name, m.marker] for m in (s.forge_data.mods if s.forge_data else [])],
}))
"#;

#[test]
fn a_forge_like_server_with_players_and_an_icon_read_by_ogp_and_mcstatus_alike() {
    if !interop::enabled(
        "a_forge_like_server_with_players_and_an_icon_read_by_ogp_and_mcstatus_alike",
    ) {
        return;
    }
    let players =
        "Alex=ec561538-f3fd-461d-aff5-086b22154bce,Steve=8667ba71-b85a-4004-af54-457a9734eed7";
    let mods = "forge=47.1.0,jei=15.2.0.27";
    let (_server, port) = start_with(
        "1.20.1",
        20,
        &[
            ("MC_FAVICON", FAVICON),
            ("MC_PLAYERS", players),
            ("MC_FORGE", mods),
        ],
    );
    let ours = ogp(port);
    let s = &ours["status"];
    let ran = interop::run(
        Command::new(interop::venv_python("mcstatus", "mcstatus", "14.2.0")).args([
            "-c",
            MCSTATUS_FORGE,
            &port.to_string(),
        ]),
        Duration::from_secs(60),
    );
    let theirs = interop::parse_json(&ran, "mcstatus", "minecraft forge");
    let mut r = Report(Vec::new());
    // What the server was given.
    r.eq(
        "favicon".into(),
        s["rules"]["favicon"].as_str(),
        Some(FAVICON),
    );
    r.eq(
        "modloader".into(),
        s["rules"]["modloader"].as_str(),
        Some("forge"),
    );
    let sample: Vec<(String, String)> = s["players"]
        .as_array()
        .map(|ps| {
            ps.iter()
                .map(|p| {
                    (
                        p["name"].as_str().unwrap_or_default().to_owned(),
                        p["global_id"].as_str().unwrap_or_default().to_owned(),
                    )
                })
                .collect()
        })
        .unwrap_or_default();
    let given: Vec<(String, String)> = players
        .split(',')
        .map(|p| {
            let (n, id) = p.split_once('=').unwrap();
            (n.to_owned(), id.to_owned())
        })
        .collect();
    r.list("players".into(), &sample, &given);
    r.eq("online".into(), s["player_count"].as_u64(), Some(2));
    let addons: Vec<(String, String)> = s["addons"]
        .as_array()
        .map(|a| {
            a.iter()
                .map(|m| {
                    (
                        m["short_name"].as_str().unwrap_or_default().to_owned(),
                        m["version"].as_str().unwrap_or_default().to_owned(),
                    )
                })
                .collect()
        })
        .unwrap_or_default();
    let given_mods: Vec<(String, String)> = mods
        .split(',')
        .map(|m| {
            let (n, v) = m.split_once('=').unwrap();
            (n.to_owned(), v.to_owned())
        })
        .collect();
    r.list("mods".into(), &addons, &given_mods);
    // mcstatus on the same server.
    r.eq(
        "mcstatus icon".into(),
        theirs["icon"].as_str(),
        Some(FAVICON),
    );
    let theirs_sample: Vec<(String, String)> =
        serde_json::from_value(theirs["sample"].clone()).unwrap_or_default();
    r.list("mcstatus players".into(), &theirs_sample, &sample);
    let theirs_mods: Vec<(String, String)> =
        serde_json::from_value(theirs["mods"].clone()).unwrap_or_default();
    r.list("mcstatus mods".into(), &theirs_mods, &addons);
    r.finish("ogp and mcstatus on a Forge-like minecraft-protocol 1.20.1");
}

/// What the server was given, in one result object of `ogp scan --json` or `ogp query
/// --json`.
fn given(r: &mut Report, label: &str, v: &Value, version: &str, protocol: i64, max: u32) {
    let s = &v["status"];
    r.eq(format!("{label} ok"), v["ok"].clone(), Value::Bool(true));
    r.eq(
        format!("{label} protocol"),
        v["protocol"].as_str(),
        Some("minecraft"),
    );
    r.eq(
        format!("{label} version"),
        s["game_version"].as_str(),
        Some(version),
    );
    r.eq(
        format!("{label} protocol number"),
        s["rules"]["protocol"].as_str(),
        Some(protocol.to_string().as_str()),
    );
    r.eq(
        format!("{label} max"),
        s["slot_max"].as_u64(),
        Some(u64::from(max)),
    );
    r.eq(
        format!("{label} online"),
        s["player_count"].as_u64(),
        Some(0),
    );
    r.eq(
        format!("{label} motd plain"),
        s["host_name"].as_str(),
        Some(MOTD_PLAIN),
    );
    r.eq(
        format!("{label} motd raw"),
        s["host_name_raw"].as_str(),
        Some(MOTD),
    );
}

/// `ogp scan` reads two real servers (two protocol versions) over TCP: one list line
/// names the protocol, the other takes `--protocol minecraft`; each status is what its
/// server was started with.
#[test]
fn ogp_scan_reads_two_npm_minecraft_servers() {
    if !interop::enabled("ogp_scan_reads_two_npm_minecraft_servers") {
        return;
    }
    let (_a, pa) = start("1.20.1", 50);
    let (_b, pb) = start("1.12.2", 7);
    let list = format!("minecraft 127.0.0.1:{pa}\n127.0.0.1:{pb}\n");
    let ran = interop::run_with_input(
        Command::new(env!("CARGO_BIN_EXE_ogp")).args([
            "scan",
            "--json",
            "--no-progress",
            "--protocol",
            "minecraft",
            "--deadline",
            "30000",
        ]),
        Some(list.as_bytes()),
        Duration::from_secs(90),
    );
    assert_eq!(ran.code, Some(0), "{}", ran.stderr);
    let lines: Vec<Value> = String::from_utf8_lossy(&ran.stdout)
        .lines()
        .map(|l| serde_json::from_str(l).expect("one JSON object a line"))
        .collect();
    assert_eq!(lines.len(), 2, "{}", ran.stderr);
    let by_port = |port: u16| {
        lines
            .iter()
            .find(|v| v["target"].as_str() == Some(format!("127.0.0.1:{port}").as_str()))
            .unwrap_or_else(|| panic!("no result for port {port}: {lines:?}"))
    };
    let mut r = Report(Vec::new());
    given(&mut r, "1.20.1", by_port(pa), "1.20.1", 763, 50);
    given(&mut r, "1.12.2", by_port(pb), "1.12.2", 340, 7);
    r.finish("ogp scan on two minecraft-protocol servers");
    assert!(ran.stderr.contains("2 TCP connections"), "{}", ran.stderr);
}

/// `ogp query HOST:PORT` without `-p` finds a real server's Minecraft over TCP.
#[test]
fn ogp_query_auto_detects_an_npm_minecraft_server() {
    if !interop::enabled("ogp_query_auto_detects_an_npm_minecraft_server") {
        return;
    }
    let (_server, port) = start("1.20.1", 50);
    let ran = interop::run(
        Command::new(env!("CARGO_BIN_EXE_ogp")).args([
            "query",
            "--json",
            "--timeout",
            "2000",
            &format!("127.0.0.1:{port}"),
        ]),
        Duration::from_secs(60),
    );
    let v = interop::parse_json(&ran, "ogp", "minecraft auto");
    let mut r = Report(Vec::new());
    given(&mut r, "auto", &v, "1.20.1", 763, 50);
    r.finish("ogp query (auto) on minecraft-protocol 1.20.1");
}
