//! Real Cube 2 servers (issue #38), started on loopback by
//! `ogp_testkit::gameservers::cube2` as `scripts/gameservers.d/cube2.sh` installs them:
//! Sauerbraten (Debian's `cube2-server`) and Red Eclipse 1.6 (its server unpacked
//! without its data). Each is read by `ogp query -p cube2 --json`, by auto-detection
//! (`ogp query --json`) and by `ogp scan`, and by qstat `-cubes`, field by field.
//!
//! Neither server here has players: Sauerbraten adds bots only at a connected master
//! client's request and Red Eclipse has no maps to play; the extinfo players are proven
//! on the captures and hostile tests of `crates/ogp-proto` (`tests/cube2_captures.rs`),
//! and here by an empty list that Sauerbraten's extinfo did send.
//!
//! What qstat 2.17 `-cubes` gives, asserted as such (its limitations, not ours):
//!
//! | | Sauerbraten | Red Eclipse 1.6 |
//! |---|---|---|
//! | name, map, players | right | right |
//! | max players | the 4th attribute: right | the 4th attribute, the seconds left (600): wrong (the slots are the 5th: players and spectators, twice `sv_serverclients`) |
//! | mode | names from an older table (mode 0: `coopedit`; Sauerbraten's 0 is `ffa`) | Sauerbraten's names |
//!
//! Like the other interop tests, these run only with `OGP_INTEROP=1`, and a missing
//! server fails them (never a skip).

use crate::common;

use std::time::Duration;

use common::*;
use ogp_testkit::gameservers::cube2::{Cube2, Cube2Config, Cube2Game};
use serde_json::Value;

fn qstat_cubes(server: &Cube2) -> Value {
    // qstat takes the game port and asks its port + 1.
    let ran = qstat_run("-cubes", server.port);
    let v = parse_json(&ran, "qstat -cubes", &server.addr().to_string());
    v.get(0).cloned().unwrap_or(Value::Null)
}

/// The checks shared by both games: name, game, max players, players, from each way of
/// asking.
fn ogp_reads(
    server: &Cube2,
    config: &Cube2Config,
    game: &str,
    slots: u32,
    r: &mut Report,
) -> Value {
    let target = server.query_addr().to_string();
    let mut last = Value::Null;
    for args in [&["-p", "cube2"][..], &[][..]] {
        let v = ogp_query_json(args, &target);
        let what = format!("{game}: ogp query {args:?}");
        r.eq(format!("{what}: ok"), v["ok"].as_bool(), Some(true));
        r.eq(
            format!("{what}: protocol"),
            str_of(&v["protocol"]),
            Some("cube2".into()),
        );
        let s = &v["status"];
        r.eq(
            format!("{what}: name"),
            str_of(&s["host_name"]),
            Some(config.description.clone()),
        );
        r.eq(
            format!("{what}: game"),
            str_of(&s["game_name"]),
            Some(game.into()),
        );
        r.eq(
            format!("{what}: max players"),
            int_of(&s["slot_max"]),
            Some(i64::from(slots)),
        );
        r.eq(
            format!("{what}: player count"),
            int_of(&s["player_count"]),
            Some(0),
        );
        last = v;
    }
    let ran = ogp_run_with_input(
        &["scan", "--json", "-"],
        Some(format!("cube2 {target}\n").as_bytes()),
        Duration::from_secs(20),
    );
    let line = String::from_utf8_lossy(&ran.stdout)
        .lines()
        .next()
        .unwrap_or("")
        .to_string();
    let v: Value = serde_json::from_str(&line).unwrap_or(Value::Null);
    r.eq(
        format!("{game}: ogp scan: name"),
        str_of(&v["status"]["host_name"]),
        Some(config.description.clone()),
    );
    last
}

#[test]
fn sauerbraten_read_by_ogp_and_qstat() {
    if !enabled("sauerbraten_read_by_ogp_and_qstat") {
        return;
    }
    let config = Cube2Config::new(Cube2Game::Sauerbraten, "Real Sauer test", 7);
    let server = Cube2::start(&config);
    let mut r = Report::default();
    let v = ogp_reads(&server, &config, "sauerbraten", config.max_clients, &mut r);
    let s = &v["status"];
    // Extinfo answered: an empty players list, the uptime, no teams (mode ffa).
    r.eq(
        "sauerbraten: players".into(),
        s["players"].as_array().map(Vec::len),
        Some(0),
    );
    r.eq(
        "sauerbraten: uptime sent".into(),
        s["uptime_seconds"].is_u64(),
        true,
    );
    r.eq(
        "sauerbraten: protocol 260".into(),
        str_of(&s["game_version"]),
        Some("260".into()),
    );
    r.eq(
        "sauerbraten: mode".into(),
        str_of(&s["game_mode"]),
        Some("ffa".into()),
    );
    r.eq(
        "sauerbraten: no extinfo missing".into(),
        v["warnings"].as_array().map(Vec::len),
        Some(0),
    );

    let q = qstat_cubes(&server);
    r.eq(
        "qstat: status".into(),
        str_of(&q["status"]),
        Some("online".into()),
    );
    r.qstat_counts(&q, s);
    r.eq("qstat: map".into(), str_of(&q["map"]), Some(String::new()));
    r.eq(
        "qstat: protocol".into(),
        str_of(&q["rules"]["attr0"]),
        str_of(&s["rules"]["protocol"]),
    );
    r.eq(
        "qstat: mode number".into(),
        str_of(&q["rules"]["attr1"]),
        str_of(&s["rules"]["mode"]),
    );
    r.finish("Sauerbraten");
}

#[test]
fn red_eclipse_read_by_ogp_and_qstat() {
    if !enabled("red_eclipse_read_by_ogp_and_qstat") {
        return;
    }
    let config = Cube2Config::new(Cube2Game::RedEclipse, "Real RE test", 9);
    let server = Cube2::start(&config);
    let mut r = Report::default();
    // Red Eclipse 1.6 counts the spectators' slots too: twice `sv_serverclients`.
    let v = ogp_reads(
        &server,
        &config,
        "redeclipse",
        2 * config.max_clients,
        &mut r,
    );
    let s = &v["status"];
    r.eq(
        "redeclipse: version".into(),
        str_of(&s["game_version"]),
        Some("1.6.0".into()),
    );
    r.eq(
        "redeclipse: protocol 230".into(),
        str_of(&s["rules"]["version"]),
        Some("230".into()),
    );
    // Red Eclipse has no extinfo: nothing asked, nothing missing.
    r.eq(
        "redeclipse: warnings".into(),
        v["warnings"].as_array().map(Vec::len),
        Some(0),
    );
    r.eq(
        "redeclipse: one datagram".into(),
        int_of(&v["datagrams"]),
        Some(1),
    );
    let map = str_of(&s["map"]["name"]);
    r.eq(
        "redeclipse: a map".into(),
        map.as_deref().is_some_and(|m| !m.is_empty()),
        true,
    );

    let q = qstat_cubes(&server);
    r.eq(
        "qstat: status".into(),
        str_of(&q["status"]),
        Some("online".into()),
    );
    r.eq(
        "qstat: name".into(),
        str_of(&q["name"]),
        str_of(&s["host_name"]),
    );
    r.eq("qstat: map".into(), str_of(&q["map"]), map);
    r.eq(
        "qstat: players".into(),
        int_of(&q["numplayers"]),
        int_of(&s["player_count"]),
    );
    // qstat's habit: Red Eclipse's 4th attribute (the time left) as its max players.
    r.eq(
        "qstat: max players is the time left".into(),
        int_of(&q["maxplayers"]),
        str_of(&s["rules"]["time_left"]).and_then(|t| t.parse().ok()),
    );
    r.eq(
        "qstat: the 5th attribute".into(),
        str_of(&q["rules"]["attr4"]).and_then(|t| t.parse().ok()),
        int_of(&s["slot_max"]),
    );
    r.finish("Red Eclipse");
}

/// Red Eclipse's master (`-ms1`, in the same process as the server, which registers
/// with it; the master verifies it by a ping on its query port): `ogp list --cube2`
/// lists the server at its query port, and that address answers.
#[test]
fn red_eclipse_master_lists_its_server() {
    if !enabled("red_eclipse_master_lists_its_server") {
        return;
    }
    let master_port = std::net::TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .map(|a| a.port())
        .expect("a free TCP port");
    let config = Cube2Config::new(Cube2Game::RedEclipse, "Listed RE", 4).with_master(master_port);
    let server = Cube2::start(&config);
    let master = format!("127.0.0.1:{master_port}");
    let want = server.query_addr().to_string();
    // Registration and the master's ping take a moment: asked again for up to 15 s.
    let deadline = std::time::Instant::now() + Duration::from_secs(15);
    let listed = loop {
        let ran = ogp_run(
            &["list", &master, "--cube2", "--json"],
            Duration::from_secs(10),
        );
        let lines: Vec<Value> = String::from_utf8_lossy(&ran.stdout)
            .lines()
            .filter_map(|l| serde_json::from_str(l).ok())
            .collect();
        if lines
            .iter()
            .any(|v| str_of(&v["addr"]).as_deref() == Some(want.as_str()))
        {
            break lines;
        }
        assert!(
            std::time::Instant::now() < deadline,
            "{want} not listed by {master} within 15 s: {}",
            ran.describe()
        );
        std::thread::sleep(Duration::from_millis(300));
    };
    assert_eq!(listed.len(), 1, "{listed:?}");
    assert_eq!(
        str_of(&listed[0]["game_addr"]),
        Some(server.addr().to_string())
    );
    let ran = ogp_run(&["list", &master, "--cube2"], Duration::from_secs(10));
    assert_eq!(
        String::from_utf8_lossy(&ran.stdout).trim(),
        format!("cube2 {want}")
    );
    let v = ogp_query_json(&["-p", "cube2"], &want);
    assert_eq!(
        str_of(&v["status"]["host_name"]).as_deref(),
        Some("Listed RE")
    );
}

/// `ogp master` with its Cube 2 master on a port of its own (loopback servers allowed),
/// and that port (from its log).
#[cfg(feature = "master")]
fn cube2_master(dir: &std::path::Path) -> (common::master::Master, std::net::SocketAddr) {
    let db = format!("sqlite://{}", dir.join("master.db").display());
    let config = format!(
        "allow_private = true\ndb = \"{db}\"\ncube2_master = \"127.0.0.1:0\"\npoll_interval_secs = 1\n"
    );
    let m = common::master::Master::with_config(dir, "master", &config, &[]);
    let mut tcp = None;
    common::master::wait_for(
        "the Cube 2 master's port in the log",
        Duration::from_secs(10),
        || {
            tcp = m
                .log_text()
                .split("Cube 2 master on TCP ")
                .nth(1)
                .and_then(|r| r.split_whitespace().next()?.parse().ok());
            tcp.is_some()
        },
    );
    (m, tcp.unwrap())
}

/// A master's whole answer to `list\n` (it closes the connection after it), as lines.
#[cfg(feature = "master")]
fn raw_list(master: std::net::SocketAddr) -> Vec<String> {
    use std::io::{Read, Write};
    let mut s = std::net::TcpStream::connect(master).expect("connect to the master");
    s.set_read_timeout(Some(Duration::from_secs(5))).unwrap();
    s.write_all(b"list\n").unwrap();
    let mut out = Vec::new();
    let _ = s.read_to_end(&mut out);
    String::from_utf8_lossy(&out)
        .lines()
        .map(str::to_owned)
        .collect()
}

/// Real Sauerbraten (`regserv PORT`) and Red Eclipse 1.6 (`server PORT …`) servers
/// register with `ogp master`'s Cube 2 master; each is verified by the Cube 2 ping
/// echoing our id on its game port + 1 and listed in the HTTP API; `ogp list --cube2`
/// reads both back from our master, at their query and game addresses; the list's
/// lines are each game's: `addserver IP PORT` for Sauerbraten (its clients would read a
/// third word as a password), Red Eclipse's seven words for Red Eclipse.
#[cfg(feature = "master")]
#[test]
fn sauerbraten_and_red_eclipse_register_with_ogp_master() {
    if !enabled("sauerbraten_and_red_eclipse_register_with_ogp_master") {
        return;
    }
    let dir = TempDir::new("cube2-master");
    let (m, tcp) = cube2_master(&dir.0);
    let sauer = Cube2::start(
        &Cube2Config::new(Cube2Game::Sauerbraten, "Sauer on ogp", 6).registering_with(tcp.port()),
    );
    let re = Cube2::start(
        &Cube2Config::new(Cube2Game::RedEclipse, "RE on ogp", 5).registering_with(tcp.port()),
    );
    let want = [sauer.query_addr().to_string(), re.query_addr().to_string()];
    let mut listed = Vec::new();
    common::master::wait_for(
        "both servers listed in the HTTP API",
        Duration::from_secs(10),
        || {
            listed = m.servers();
            want.iter().all(|w| {
                listed
                    .iter()
                    .any(|s| str_of(&s["addr"]).as_deref() == Some(w))
            })
        },
    );
    for s in &listed {
        assert_eq!(s["protocols"][0], "cube2", "{s}");
    }
    let log = m.log_text();
    assert!(
        log.contains(&format!("Cube 2 server on port {} registered", sauer.port)),
        "{log}"
    );
    // ogp list reads both back, at the query address, with the game address
    let ran = ogp_run(
        &["list", &tcp.to_string(), "--cube2", "--json"],
        Duration::from_secs(10),
    );
    let lines: Vec<Value> = String::from_utf8_lossy(&ran.stdout)
        .lines()
        .filter_map(|l| serde_json::from_str(l).ok())
        .collect();
    assert_eq!(lines.len(), 2, "{}", ran.describe());
    for (server, query) in [(&sauer, &want[0]), (&re, &want[1])] {
        let line = lines
            .iter()
            .find(|v| str_of(&v["addr"]).as_deref() == Some(query.as_str()))
            .unwrap_or_else(|| panic!("{query} not in {lines:?}"));
        assert_eq!(str_of(&line["game_addr"]), Some(server.addr().to_string()));
    }
    let raw = raw_list(tcp);
    assert_eq!(
        raw.first().map(String::as_str),
        Some("clearservers"),
        "{raw:?}"
    );
    assert!(
        raw.contains(&format!("addserver 127.0.0.1 {}", sauer.port)),
        "{raw:?}"
    );
    assert!(
        raw.contains(&format!(
            "addserver 127.0.0.1 {} 0 \"RE on ogp\" \"\" \"\" \"?\"",
            re.port
        )),
        "{raw:?}"
    );
}

/// Red Eclipse's own master (`-ms1`) and ours, each with a Red Eclipse server
/// registered, answer `list` in the same shape: `clearservers`, then the same
/// `addserver` line but for the port.
#[cfg(feature = "master")]
#[test]
fn red_eclipse_master_and_ours_answer_list_alike() {
    if !enabled("red_eclipse_master_and_ours_answer_list_alike") {
        return;
    }
    let dir = TempDir::new("cube2-master-shape");
    let (_m, ours) = cube2_master(&dir.0);
    // Below the ephemeral range: no other test binary's socket takes it first.
    let theirs_port = ogp_testkit::interop::closed_port().port();
    let desc = "Same RE";
    let on_theirs =
        Cube2::start(&Cube2Config::new(Cube2Game::RedEclipse, desc, 4).with_master(theirs_port));
    let on_ours = Cube2::start(
        &Cube2Config::new(Cube2Game::RedEclipse, desc, 4).registering_with(ours.port()),
    );
    let theirs: std::net::SocketAddr = ([127, 0, 0, 1], theirs_port).into();
    let shape = |lines: &[String], port: u16| -> Vec<String> {
        lines
            .iter()
            .map(|l| l.replace(&format!(" {port} "), " PORT "))
            .collect()
    };
    let mut a = Vec::new();
    let mut b = Vec::new();
    common::master::wait_for(
        "a server on each master's list",
        Duration::from_secs(10),
        || {
            a = raw_list(theirs);
            b = raw_list(ours);
            a.len() == 2 && b.len() == 2
        },
    );
    assert_eq!(
        shape(&a, on_theirs.port),
        shape(&b, on_ours.port),
        "theirs {a:?}, ours {b:?}"
    );
    assert_eq!(
        shape(&b, on_ours.port),
        [
            "clearservers",
            "addserver 127.0.0.1 PORT 0 \"Same RE\" \"\" \"\" \"?\""
        ]
    );
}
