//! Real Teeworlds servers (issue #38): Debian's `ddnet-server` 16.4 and
//! `teeworlds-server` 0.7.5, started by `ogp_testkit::gameservers::teeworlds` on free
//! loopback ports, read by `ogp query` with `-p teeworlds`, `-p teeworlds7` and
//! auto-detection, and DDNet by qstat 2.17 (`-tees`, field by field: name, map, max
//! players, players).
//!
//! Neither server has bots outside debug builds. The 0.7 server lists a client that
//! has only connected (token handshake and `CONNECT`) as `(connecting)`, a spectator
//! with no country: the test opens two such connections and reads them as players.
//! DDNet lists clients only further into the connection, so its player lists (and
//! `iex+` continuations) are proven from captures in
//! `crates/ogp-proto/tests/teeworlds_captures.rs`. qstat `-tees` gets no answer from
//! 0.7 servers (it speaks 0.6 only): asserted as such.
//!
//! Like the other interop tests, these run only with `OGP_INTEROP=1` (set by
//! `scripts/test.sh` after `scripts/install-gameservers.sh`); a missing server fails.

mod common;

use std::process::Command;

use common::*;
use ogp_testkit::gameservers::teeworlds::{Flavor, Teeworlds, TeeworldsConfig};
use serde_json::Value;

fn ogp_query_json(args: &[&str], target: &str) -> Value {
    let out = Command::new(BIN)
        .arg("query")
        .args(args)
        .args(["--json", "--timeout", "2000", target])
        .env("NO_COLOR", "1")
        .output()
        .expect("run ogp query");
    serde_json::from_slice(&out.stdout).unwrap_or_else(|e| {
        panic!(
            "ogp query {args:?} {target}: not JSON ({e}): {}\n{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        )
    })
}

fn check(r: &mut Report, what: &str, v: &Value, protocol: &str, config: &TeeworldsConfig) {
    r.eq(format!("{what}: ok"), v["ok"].as_bool(), Some(true));
    r.eq(
        format!("{what}: protocol"),
        str_of(&v["protocol"]),
        Some(protocol.into()),
    );
    let s = &v["status"];
    r.eq(
        format!("{what}: name"),
        str_of(&s["host_name"]),
        Some(config.name.clone()),
    );
    r.eq(
        format!("{what}: map"),
        str_of(&s["map"]["name"]),
        Some(config.map.clone()),
    );
    r.eq(
        format!("{what}: max players"),
        int_of(&s["slot_max"]),
        Some(i64::from(config.max_clients)),
    );
}

/// DDNet read by `-p teeworlds` (its `iext`), `-p teeworlds7` (its 0.7 side) and
/// auto-detection (`teeworlds` ranks first), and by qstat `-tees` field by field.
#[test]
fn ddnet_read_by_ogp_and_qstat() {
    if !enabled("ddnet_read_by_ogp_and_qstat") {
        return;
    }
    let mut config = TeeworldsConfig::new(Flavor::Ddnet, "DDNet ogp test");
    config.map = "Tsunami".into();
    config.max_clients = 12;
    let server = Teeworlds::start(&config);
    let target = server.addr().to_string();
    let mut r = Report::default();
    for (args, protocol) in [
        (&["-p", "teeworlds"][..], "teeworlds"),
        (&["-p", "teeworlds7"][..], "teeworlds7"),
        (&[][..], "teeworlds"),
    ] {
        let v = ogp_query_json(args, &target);
        let what = format!("ogp query {args:?}");
        check(&mut r, &what, &v, protocol, &config);
        r.eq(
            format!("{what}: players"),
            v["status"]["players"].as_array().map(Vec::len),
            Some(0),
        );
    }
    let v = ogp_query_json(&["-p", "teeworlds"], &target);
    r.eq(
        "iext: the map's size".into(),
        int_of(&v["status"]["map"]["file_size"]).is_some_and(|n| n > 0),
        true,
    );
    r.eq(
        "iext: the map's CRC".into(),
        str_of(&v["status"]["rules"]["map_crc"]).map(|c| c.len()),
        Some(8),
    );
    let ran = qstat_run("-tees", server.port);
    let q = parse_json(&ran, "qstat -tees", "DDNet");
    let q = &q[0];
    let s = &v["status"];
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
    r.eq(
        "qstat: map".into(),
        str_of(&q["map"]),
        str_of(&s["map"]["name"]),
    );
    r.eq(
        "qstat: game type".into(),
        str_of(&q["gametype"]),
        str_of(&s["game_type"]),
    );
    r.eq(
        "qstat: max players".into(),
        int_of(&q["maxplayers"]),
        int_of(&s["slot_max"]),
    );
    r.eq(
        "qstat: players".into(),
        int_of(&q["numplayers"]),
        int_of(&s["player_count"]),
    );
    r.eq(
        "qstat: player list".into(),
        q["players"].as_array().map(Vec::len),
        s["players"].as_array().map(Vec::len),
    );
    r.finish("ogp query and qstat -tees on DDNet");
}

/// The 0.7 server (game type DM, its default) read by `-p teeworlds7` and auto-detection, with two connected
/// clients as spectators named `(connecting)`; `-p teeworlds` and qstat `-tees` get no
/// answer from it.
#[test]
fn teeworlds07_read_by_ogp_with_connected_clients() {
    if !enabled("teeworlds07_read_by_ogp_with_connected_clients") {
        return;
    }
    let mut config = TeeworldsConfig::new(Flavor::Teeworlds07, "TW 0.7 ogp test");
    config.map = "ctf2".into();
    config.max_clients = 6;
    let server = Teeworlds::start(&config);
    let target = server.addr().to_string();
    let _a = server.connect_client(0x0102_0304);
    let _b = server.connect_client(0x0506_0708);
    let mut r = Report::default();
    for args in [&["-p", "teeworlds7"][..], &[][..]] {
        let v = ogp_query_json(args, &target);
        let what = format!("ogp query {args:?}");
        check(&mut r, &what, &v, "teeworlds7", &config);
        let s = &v["status"];
        r.eq(
            format!("{what}: game type"),
            str_of(&s["game_type"]),
            Some("DM".into()),
        );
        r.eq(
            format!("{what}: clients"),
            int_of(&s["player_count"]),
            Some(2),
        );
        let players = s["players"].as_array().cloned().unwrap_or_default();
        r.eq(format!("{what}: players listed"), players.len(), 2);
        for p in &players {
            r.eq(
                format!("{what}: player name"),
                str_of(&p["name"]),
                Some("(connecting)".into()),
            );
            r.eq(
                format!("{what}: a spectator"),
                str_of(&p["extra"]["spectator"]),
                Some("1".into()),
            );
            r.eq(
                format!("{what}: no country"),
                p["extra"].get("country"),
                None,
            );
        }
    }
    let v = ogp_query_json(&["-p", "teeworlds", "--retries", "0"], &target);
    r.eq(
        "-p teeworlds: no answer".into(),
        v["ok"].as_bool(),
        Some(false),
    );
    let ran = qstat_run("-tees", server.port);
    let q = parse_json(&ran, "qstat -tees", "Teeworlds 0.7");
    r.eq(
        "qstat -tees on 0.7: no answer (it speaks 0.6 only)".into(),
        str_of(&q[0]["status"]).is_some_and(|s| s != "online"),
        true,
    );
    r.finish("ogp query on Teeworlds 0.7");
}
