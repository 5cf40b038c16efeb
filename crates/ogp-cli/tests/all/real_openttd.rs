//! OpenTTD, proven on a real server (issue #38): Debian's `openttd -D` (13.0) started on
//! loopback (`ogp_testkit::gameservers::openttd`), read by `ogp query -p openttd` and by
//! gamedig 5.3.3 (`--type openttd`), which must agree field by field.
//!
//! The game info names no clients (OpenTTD lists them only to those who join): the
//! counts are what a reader can check. qstat's `-ottds` reads the old UDP game info,
//! which OpenTTD 12.0 and later answer with an empty packet: it prints the server as
//! down, so it is not compared here (`docs/protocols.md`).
//!
//! Runs only with `OGP_INTEROP=1`; a missing server fails (scripts/install-gameservers.sh
//! installs it).

use crate::common;

use common::*;
use ogp_testkit::gameservers::openttd::{Openttd, OpenttdConfig};
use serde_json::Value;

fn rule(s: &Value, key: &str) -> Option<String> {
    s["rules"]
        .as_object()
        .and_then(|r| r.get(key))
        .and_then(str_of)
}

/// One server, read by us and by gamedig: name, version, password, clients, the map's
/// size and landscape, companies.
#[test]
fn ogp_query_and_gamedig_read_a_real_openttd_server() {
    if !enabled("ogp_query_and_gamedig_read_a_real_openttd_server") {
        return;
    }
    let mut config = OpenttdConfig::new("ogp ttd \u{e9}t\u{e9}");
    config.max_clients = 12;
    config.max_companies = 4;
    config.map_log2 = (7, 6);
    config.landscape = "toyland".into();
    config.password = "secret".into();
    let server = Openttd::start(&config);

    let v = ogp_query_port_json(&["-p", "openttd"], server.port);
    assert_eq!(v["ok"], true, "{v}");
    assert_eq!(v["protocol"], "openttd", "{v}");
    let s = &v["status"];
    assert_eq!(s["host_name"], "ogp ttd \u{e9}t\u{e9}", "{s}");
    assert_eq!(s["game_version"], "13.0", "{s}");
    assert_eq!(s["slot_max"], 12, "{s}");
    assert_eq!(s["player_count"], 0, "{s}");
    assert_eq!(s["password"], true, "{s}");
    assert_eq!(s["game_type"], "toyland", "{s}");
    assert_eq!(s["server_type"], "dedicated", "{s}");
    assert_eq!(rule(s, "map_width").as_deref(), Some("128"), "{s}");
    assert_eq!(rule(s, "map_height").as_deref(), Some("64"), "{s}");
    assert_eq!(rule(s, "companies_max").as_deref(), Some("4"), "{s}");
    assert_eq!(rule(s, "companies").as_deref(), Some("0"), "{s}");
    assert_eq!(rule(s, "version").as_deref(), Some("6"), "{s}");
    // An alias works too, as does qstat's name for the type.
    let alias = ogp_query_port_json(&["-p", "ottds"], server.port);
    assert_eq!(alias["status"]["host_name"], s["host_name"]);

    let g = gamedig_json("openttd", server.port, "openttd");
    let mut r = Report::default();
    r.eq("name".into(), str_of(&g["name"]), str_of(&s["host_name"]));
    r.eq(
        "version".into(),
        str_of(&g["version"]),
        str_of(&s["game_version"]),
    );
    r.eq(
        "password".into(),
        g["password"].as_bool(),
        s["password"].as_bool(),
    );
    r.eq(
        "maxplayers".into(),
        int_of(&g["maxplayers"]),
        int_of(&s["slot_max"]),
    );
    r.eq(
        "numplayers".into(),
        int_of(&g["numplayers"]),
        int_of(&s["player_count"]),
    );
    let raw = &g["raw"];
    for (theirs, ours) in [
        ("map_width", "map_width"),
        ("map_height", "map_height"),
        ("numcompanies", "companies"),
        ("maxcompanies", "companies_max"),
        ("numspectators", "spectators"),
    ] {
        r.eq(
            theirs.into(),
            int_of(&raw[theirs]).map(|n| n.to_string()),
            rule(s, ours),
        );
    }
    r.eq(
        "landscape".into(),
        str_of(&raw["landscape"]),
        rule(s, "landscape"),
    );
    r.eq(
        "dedicated".into(),
        raw["dedicated"].as_bool(),
        rule(s, "dedicated").map(|d| d == "1"),
    );
    r.finish("gamedig openttd");
}
