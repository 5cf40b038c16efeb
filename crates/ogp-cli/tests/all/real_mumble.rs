//! Real servers, Mumble (issue #38): Debian's `mumble-server` (murmurd 1.3.4) started on
//! loopback (`ogp_testkit::gameservers::mumble`) with two users connected over TLS,
//! read by `ogp query` (named and auto-detected) and by the readers that run here,
//! agreeing field by field on the same server:
//!
//! | | gamedig 5.3.3 `mumble` (`mumbleping`) | qstat 2.17 `-mumble` |
//! |---|---|---|
//! | users, max users | `numplayers`, `maxplayers` | `numplayers`, `maxplayers` |
//! | version | `version` | `rules.version`: always `1.2.3` (a habit of qstat's: it prints that for 1.3.4 too) |
//! | bandwidth | `raw.allowedbandwidth` | `rules.allowed_bandwidth` |
//!
//! murmurd counts every TCP connection as a user while it lasts, logged in or not: an
//! auto-detected query may count its own Minecraft probe's connection.
//! The ping carries no name: qstat says `Unknown`, gamedig an empty name, we none.
//! Runs only with `OGP_INTEROP=1` (a missing server fails: never a silent skip).

use crate::common;

use std::process::Command;
use std::time::Duration;

use common::*;
use ogp_testkit::gameservers::mumble::{Mumble, MumbleConfig};

#[test]
fn a_real_mumble_server_read_by_ogp_gamedig_and_qstat() {
    if !enabled("a_real_mumble_server_read_by_ogp_gamedig_and_qstat") {
        return;
    }
    let mut config = MumbleConfig::new(17);
    config.bandwidth = 64_000;
    let server = Mumble::start(&config);
    let _alice = server.connect_user("Alice");
    let _bob = server.connect_user("Bob");
    let port = server.port;

    let named = ogp_query_port_json(&["-p", "mumble"], port);
    let auto = ogp_query_port_json(&[], port);
    for (label, v) in [("-p mumble", &named), ("auto", &auto)] {
        assert_eq!(v["ok"], true, "{label}: {v}");
        assert_eq!(v["protocol"], "mumble", "{label}: {v}");
        let s = &v["status"];
        // murmurd counts every TCP connection as a user, logged in or not: auto-detection's
        // Minecraft probe connects to the same port while the ping is out, and may be
        // counted (a habit of the server's, said in docs/protocols.md)
        let users = if label == "auto" { 2..=3 } else { 2..=2 };
        assert!(
            int_of(&s["player_count"]).is_some_and(|n| users.contains(&n)),
            "{label}: {s}"
        );
        assert_eq!(s["slot_max"], 17, "{label}: {s}");
        assert_eq!(s["rules"]["bandwidth"], "64000", "{label}: {s}");
        assert!(s.get("host_name").is_none(), "{label}: {s}");
    }
    let ours = &named["status"];
    // Debian's package version, 1.3.4-4: the server's own version
    let deb = Command::new("dpkg-query")
        .args(["-W", "-f", "${Version}", "mumble-server"])
        .output()
        .map(|o| String::from_utf8_lossy(&o.stdout).into_owned())
        .unwrap_or_default();
    let version = ours["game_version"].as_str().unwrap_or_default().to_owned();
    assert!(
        !version.is_empty() && deb.starts_with(&version),
        "{version} vs {deb}"
    );

    let ran = run(
        Command::new("node")
            .arg(gamedig_js())
            .args(["--type", "mumble", "--givenPortOnly"])
            .args(["--socketTimeout", "1500", "--maxRetries", "1"])
            .arg(format!("127.0.0.1:{port}")),
        CLIENT_LIMIT,
    );
    let g = parse_json(&ran, "gamedig mumble", "murmurd");
    let mut r = Report::default();
    r.eq("gamedig error".into(), g.get("error"), None);
    r.eq(
        "gamedig numplayers".into(),
        int_of(&g["numplayers"]),
        int_of(&ours["player_count"]),
    );
    r.eq(
        "gamedig maxplayers".into(),
        int_of(&g["maxplayers"]),
        int_of(&ours["slot_max"]),
    );
    r.eq(
        "gamedig version".into(),
        str_of(&g["version"]),
        Some(version.clone()),
    );
    r.eq(
        "gamedig allowedbandwidth".into(),
        int_of(&g["raw"]["allowedbandwidth"]).map(|b| b.to_string()),
        str_of(&ours["rules"]["bandwidth"]),
    );
    r.finish("gamedig mumble");

    let q = parse_json(&qstat_run("-mumble", port), "qstat -mumble", "murmurd");
    let q = &q[0];
    let mut r = Report::default();
    r.eq(
        "qstat status".into(),
        str_of(&q["status"]),
        Some("online".into()),
    );
    r.eq(
        "qstat numplayers".into(),
        int_of(&q["numplayers"]),
        int_of(&ours["player_count"]),
    );
    r.eq(
        "qstat maxplayers".into(),
        int_of(&q["maxplayers"]),
        int_of(&ours["slot_max"]),
    );
    r.eq(
        "qstat allowed_bandwidth".into(),
        str_of(&q["rules"]["allowed_bandwidth"]),
        str_of(&ours["rules"]["bandwidth"]),
    );
    // qstat's habit: the version it prints is not the server's
    r.eq(
        "qstat version (its habit)".into(),
        str_of(&q["rules"]["version"]),
        Some("1.2.3".into()),
    );
    r.finish("qstat -mumble");

    // a user leaves: the next query counts one
    drop(_bob);
    let mut left = None;
    for _ in 0..20 {
        let v = ogp_query_port_json(&["-p", "mumble"], port);
        left = int_of(&v["status"]["player_count"]);
        if left == Some(1) {
            break;
        }
        std::thread::sleep(Duration::from_millis(100));
    }
    assert_eq!(left, Some(1));
}
