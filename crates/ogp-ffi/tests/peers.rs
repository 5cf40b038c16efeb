//! The real third-party query clients read the C and C++ examples: `game_server.c`
//! (managed mode: the library's socket and thread), `own_socket.c` (the game's socket,
//! datagrams passed in) and the C++ wrapper's `example.cpp --serve` (managed), each
//! compiled with the sanitizers against `libogp.a`, play a few ticks on a free loopback
//! port and then keep serving the status they print (`status JSON`, from
//! `ogp_status_to_json`). Every client must report exactly that: server name, map,
//! player and slot counts, every player's name and score, every rule's value.
//!
//! | client | protocol | what it is asked |
//! |---|---|---|
//! | qstat 2.17 `-a2s` | A2S | INFO, PLAYER, RULES (`-R -P`) |
//! | qstat 2.17 `-gs4` | GameSpy v3 with the 0x09 challenge | the full status |
//! | gamedig 5.3.3 `protocol-valve --requestRules` | A2S | INFO, PLAYER, RULES |
//! | gamedig 5.3.3 `protocol-gamespy3` | GameSpy v3 | the full status |
//! | python-a2s 1.4.2 | A2S | `info`, `players`, `rules` |
//! | opengsq 3.7.0 `Source` | A2S | `get_info`, `get_players`, `get_rules` |
//! | opengsq 3.7.0 `GameSpy4` | GameSpy v3 with the 0x09 challenge | `get_status` |
//!
//! The examples use the default configuration (real GameSpy v3 challenges), which every
//! client above handles (`shared/docs/interop.md` §3.2). Runs with `OGP_INTEROP=1`, after
//! `scripts/install-interop.sh` and `scripts/install-c.sh`; a
//! missing client is then a failure. Without it each test returns at once with a note.

mod common;

use std::path::{Path, PathBuf};
use std::process::Command;

use ogp_testkit::interop::*;
use serde_json::Value;

use common::{compile, compile_with, start, stop};

/// What the example published, from its `status` line.
#[derive(Debug)]
struct Published {
    host: String,
    game: String,
    map: String,
    slot_max: i64,
    /// (name, score), sorted
    players: Vec<(String, i64)>,
    rules: Vec<(String, String)>,
}

impl Published {
    fn from_json(v: &Value) -> Self {
        let text = |v: &Value| {
            str_of(v)
                .or_else(|| str_of(&v["name"]))
                .unwrap_or_else(|| panic!("no string in {v}"))
        };
        let players = v["players"]
            .as_array()
            .expect("players")
            .iter()
            .map(|p| (text(&p["name"]), int_of(&p["score"]).unwrap_or(0)))
            .collect();
        let rules = v["rules"]
            .as_object()
            .map(|o| o.iter().map(|(k, v)| (k.clone(), text(v))).collect())
            .unwrap_or_default();
        Published {
            host: text(&v["host_name"]),
            game: text(&v["game_name"]),
            map: text(&v["map"]),
            slot_max: int_of(&v["slot_max"]).expect("slot_max"),
            players: sorted(players),
            rules,
        }
    }
}

/// What a client reported, in common terms.
#[derive(Default)]
struct Seen {
    name: Option<String>,
    map: Option<String>,
    /// the game's name, where the protocol has it (A2S INFO) and the client reports it
    game: Option<Option<String>>,
    numplayers: Option<i64>,
    maxplayers: Option<i64>,
    /// (name, score), sorted: qstat lists GameSpy v3 players in reverse order
    players: Vec<(String, i64)>,
    /// every key/value the client reported (its rules, and for GameSpy v3 the server
    /// section too)
    keys: Vec<(String, String)>,
}

/// A number in a JSON number or string.
fn num(v: &Value) -> Option<i64> {
    int_of(v).or_else(|| v.as_str().and_then(|s| s.trim().parse().ok()))
}

fn pairs(v: &Value) -> Vec<(String, String)> {
    match v {
        Value::Object(o) => o
            .iter()
            .map(|(k, v)| (k.clone(), str_of(v).unwrap_or_else(|| v.to_string())))
            .collect(),
        // [[key, value], ...] (tests/interop/a2s_py.py)
        Value::Array(a) => a
            .iter()
            .map(|kv| {
                (
                    str_of(&kv[0]).unwrap_or_default(),
                    str_of(&kv[1]).unwrap_or_default(),
                )
            })
            .collect(),
        _ => Vec::new(),
    }
}

fn players(v: &Value, score: impl Fn(&Value) -> &Value) -> Vec<(String, i64)> {
    let list = v
        .as_array()
        .map(|a| {
            a.iter()
                .map(|p| {
                    (
                        str_of(&p["name"]).unwrap_or_default(),
                        num(score(p)).unwrap_or(i64::MIN),
                    )
                })
                .collect()
        })
        .unwrap_or_default();
    sorted(list)
}

// ------------------------------------------------------------------------------------
// The clients: each runs against 127.0.0.1:PORT and returns its run and what it saw,
// recording what is particular to it (its own error fields) in the report.

type Client = fn(u16, &mut Report) -> (Ran, Seen);

fn qstat(kind: &str, port: u16) -> (Ran, Value) {
    let ran = qstat_run(kind, port);
    let v = parse_json(&ran, "qstat", kind);
    (ran, v[0].clone())
}

fn qstat_seen(v: &Value) -> Seen {
    Seen {
        name: str_of(&v["name"]),
        map: str_of(&v["map"]),
        game: None,
        numplayers: num(&v["numplayers"]),
        maxplayers: num(&v["maxplayers"]),
        players: players(&v["players"], |p| &p["score"]),
        keys: pairs(&v["rules"]),
    }
}

fn qstat_a2s(port: u16, r: &mut Report) -> (Ran, Seen) {
    let (ran, v) = qstat("-a2s", port);
    r.eq("status".into(), str_of(&v["status"]), Some("online".into()));
    (ran, qstat_seen(&v))
}

fn qstat_gs4(port: u16, r: &mut Report) -> (Ran, Seen) {
    let (ran, v) = qstat("-gs4", port);
    r.eq("status".into(), str_of(&v["status"]), Some("online".into()));
    (ran, qstat_seen(&v))
}

fn gamedig(kind: &str, port: u16, r: &mut Report) -> (Ran, Value) {
    let ran = run(
        Command::new("node")
            .arg(gamedig_js())
            .args(["--type", kind, "--givenPortOnly", "--requestRules"])
            .args(["--socketTimeout", "1500", "--maxRetries", "1"])
            .arg(format!("127.0.0.1:{port}")),
        CLIENT_LIMIT,
    );
    let v = parse_json(&ran, "gamedig", kind);
    r.eq("error".into(), v.get("error").cloned(), None);
    (ran, v)
}

fn gamedig_valve(port: u16, r: &mut Report) -> (Ran, Seen) {
    let (ran, v) = gamedig("protocol-valve", port, r);
    let seen = Seen {
        name: str_of(&v["name"]),
        map: str_of(&v["map"]),
        game: Some(str_of(&v["raw"]["game"])),
        numplayers: num(&v["numplayers"]),
        maxplayers: num(&v["maxplayers"]),
        // raw.players: the A2S_PLAYER list (players/bots are gamedig's guess from it)
        players: players(&v["raw"]["players"], |p| &p["score"]),
        keys: pairs(&v["raw"]["rules"]),
    };
    (ran, seen)
}

fn gamedig_gamespy3(port: u16, r: &mut Report) -> (Ran, Seen) {
    let (ran, v) = gamedig("protocol-gamespy3", port, r);
    let seen = Seen {
        name: str_of(&v["name"]),
        map: str_of(&v["map"]),
        game: None,
        numplayers: num(&v["numplayers"]),
        maxplayers: num(&v["maxplayers"]),
        players: players(&v["players"], |p| &p["raw"]["score"]),
        keys: pairs(&v["raw"]),
    };
    (ran, seen)
}

fn python_a2s_script(client: &str, module: &str, version: &str, port: u16) -> (Ran, Value) {
    let py = venv_python(module, client, version);
    let ran = run(
        Command::new(py)
            .arg(script("tests/interop/a2s_py.py"))
            .args([client, "127.0.0.1", &port.to_string(), "2.0"]),
        CLIENT_LIMIT,
    );
    let v = parse_json(&ran, client, "A2S");
    (ran, v)
}

fn a2s_seen(v: &Value, name: &str, map: &str, count: &str) -> Seen {
    let info = &v["info"];
    Seen {
        name: str_of(&info[name]),
        map: str_of(&info[map]),
        game: Some(str_of(&info["game"])),
        numplayers: num(&info[count]),
        maxplayers: num(&info["max_players"]),
        players: players(&v["players"], |p| &p["score"]),
        keys: pairs(&v["rules"]),
    }
}

fn python_a2s(port: u16, r: &mut Report) -> (Ran, Seen) {
    let (ran, v) = python_a2s_script("python-a2s", "a2s", PYTHON_A2S, port);
    r.eq("errors".into(), v["errors"].clone(), serde_json::json!({}));
    (ran, a2s_seen(&v, "server_name", "map_name", "player_count"))
}

fn opengsq_source(port: u16, r: &mut Report) -> (Ran, Seen) {
    let (ran, v) = python_a2s_script("opengsq", "opengsq.protocols", OPENGSQ, port);
    r.eq("errors".into(), v["errors"].clone(), serde_json::json!({}));
    (ran, a2s_seen(&v, "name", "map", "players"))
}

fn opengsq_gamespy4(port: u16, r: &mut Report) -> (Ran, Seen) {
    let py = venv_python("opengsq.protocols", "opengsq", OPENGSQ);
    let ran = run(
        Command::new(py)
            .arg(script("tests/interop/gs3_py.py"))
            .args(["gamespy4", "127.0.0.1", &port.to_string(), "2.0"]),
        CLIENT_LIMIT,
    );
    let v = parse_json(&ran, "opengsq gamespy4", "GameSpy v3");
    r.eq("error".into(), v["error"].clone(), Value::Null);
    let info = &v["info"];
    let seen = Seen {
        name: str_of(&info["hostname"]),
        map: str_of(&info["mapname"]),
        game: None,
        numplayers: num(&info["numplayers"]),
        maxplayers: num(&info["maxplayers"]),
        players: players(&v["players"], |p| &p["score"]),
        keys: pairs(info),
    };
    (ran, seen)
}

const CLIENTS: &[(&str, Client)] = &[
    ("qstat -a2s", qstat_a2s),
    ("qstat -gs4", qstat_gs4),
    ("gamedig protocol-valve", gamedig_valve),
    ("gamedig protocol-gamespy3", gamedig_gamespy3),
    ("python-a2s", python_a2s),
    ("opengsq source", opengsq_source),
    ("opengsq gamespy4", opengsq_gamespy4),
];

// ------------------------------------------------------------------------------------

/// Fails now, before anything starts, when a client is missing.
fn check_installed() {
    quakestat();
    gamedig_js();
    venv_python("a2s", "python-a2s", PYTHON_A2S);
    venv_python("opengsq.protocols", "opengsq", OPENGSQ);
}

/// Starts `binary` with `args` (which must make it print its `status` line), lets every
/// client query it, compares, and stops it.
fn every_client_reads(label: &str, binary: &Path, args: &[&str]) {
    let mut running = start(binary, args);
    let line = running.line_after("status ");
    let json: Value = serde_json::from_str(&line)
        .unwrap_or_else(|e| panic!("{label}: status line is not JSON ({e}): {line}"));
    let want = Published::from_json(&json);
    assert!(
        !want.players.is_empty() && !want.rules.is_empty(),
        "{label}: publishes no players or no rules: {want:?}"
    );
    eprintln!("{label} published {want:?}");
    let mut failed = Vec::new();
    for (client, query) in CLIENTS {
        let mut r = Report::default();
        let (ran, seen) = query(running.port, &mut r);
        r.eq("name".into(), seen.name, Some(want.host.clone()));
        r.eq("map".into(), seen.map, Some(want.map.clone()));
        if let Some(game) = seen.game {
            r.eq("game".into(), game, Some(want.game.clone()));
        }
        r.eq(
            "player count".into(),
            seen.numplayers,
            Some(want.players.len() as i64),
        );
        r.eq("slots".into(), seen.maxplayers, Some(want.slot_max));
        r.list("players (sorted)".into(), &seen.players, &want.players);
        for (k, v) in &want.rules {
            let got = seen.keys.iter().find(|(sk, _)| sk == k).map(|(_, v)| v);
            r.eq(format!("rule {k:?}"), got.cloned(), Some(v.clone()));
        }
        if r.0.is_empty() {
            eprintln!("{label}: {client} read it all ({:.1?})", ran.took);
        } else {
            failed.push(format!(
                "{client}:\n  {}\n  {}",
                r.0.join("\n  "),
                ran.describe()
            ));
        }
    }
    stop(running, label);
    assert!(
        failed.is_empty(),
        "{label} published {want:?}\nbut {} of {} clients read something else:\n{}",
        failed.len(),
        CLIENTS.len(),
        failed.join("\n")
    );
}

/// Play 7 ticks of 30 ms, then keep the status.
const ARGS: &[&str] = &[
    "--bind",
    "127.0.0.1",
    "--port",
    "0",
    "--tick-ms",
    "30",
    "--ticks",
    "7",
];

#[test]
fn clients_read_game_server_managed_mode() {
    if !enabled("clients_read_game_server_managed_mode") {
        return;
    }
    check_installed();
    every_client_reads("game_server", &compile("game_server"), ARGS);
}

#[test]
fn clients_read_own_socket_mode() {
    if !enabled("clients_read_own_socket_mode") {
        return;
    }
    check_installed();
    every_client_reads("own_socket", &compile("own_socket"), ARGS);
}

#[test]
fn clients_read_cpp_example() {
    if !enabled("clients_read_cpp_example") {
        return;
    }
    check_installed();
    let bin: PathBuf = compile_with(
        "CXX",
        "c++",
        "-std=c++17",
        "examples/cpp/example.cpp",
        "cpp_example",
    );
    every_client_reads(
        "cpp example",
        &bin,
        &["--bind", "127.0.0.1", "--port", "0", "--serve"],
    );
}
