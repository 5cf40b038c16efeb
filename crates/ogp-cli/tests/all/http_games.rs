//! The HTTP-JSON games on the client core's HTTP-JSON shape (Eco, …): real servers'
//! documents (`crates/ogp-proto/tests/data/GAME/`, see each SOURCES.md) replayed on
//! loopback by `ogp_testkit::http_replay::HttpReplay`, read by `ogp query -p NAME` and
//! `--game ID`; with `OGP_INTEROP=1`, gamedig 5.3.3 reads the same replay and agrees
//! field by field. One hostile document per game (the transport's attacks are
//! `fivem_hostile`'s, on the same machine).

use crate::common;

use std::process::Command;

use common::*;
use ogp_testkit::http_replay::{Documents, HttpReplay};
use serde_json::Value;

/// gamedig's JSON for `kind` at `target` (`--givenPortOnly`: the port is the query port).
fn gamedig(kind: &str, target: &str, label: &str) -> Value {
    let ran = run(
        Command::new("node")
            .arg(gamedig_js())
            .args(["--type", kind, "--givenPortOnly"])
            .args(["--socketTimeout", "2000", "--maxRetries", "1"])
            .arg(target),
        CLIENT_LIMIT,
    );
    parse_json(&ran, &format!("gamedig {kind}"), label)
}

/// `ogp query ARGS --json` that fails: its one-line error.
fn query_error(args: &[&str], target: &str) -> String {
    let mut all = vec!["query", "--json", "--timeout", "1000", "--retries", "0"];
    all.extend_from_slice(args);
    all.push(target);
    let ran = ogp_run(&all, CLIENT_LIMIT);
    let v: Value = serde_json::from_slice(&ran.stdout).unwrap_or_else(|e| {
        panic!("{e}: {}", String::from_utf8_lossy(&ran.stdout));
    });
    assert_eq!(v["ok"], false, "{v}");
    let e = str_of(&v["message"]).unwrap_or_default();
    assert!(!e.contains('\n') && raw_controls(&e) == 0, "{e:?}");
    e
}

fn eco(name: &str) -> Documents {
    Documents::recorded("eco", name, &[("frontpage", "/frontpage")])
}

#[test]
fn eco_recorded_servers() {
    let r = HttpReplay::start(eco("letskautsch"));
    let target = r.addr().to_string();
    // the catalogue's query port is the game port + 1
    let game_port = format!("127.0.0.1:{}", r.addr().port() - 1);
    for (args, target) in [(["-p", "eco"], &target), (["--game", "eco"], &game_port)] {
        let v = ogp_query_json(&args, target);
        let s = &v["status"];
        assert_eq!(v["ok"], true, "{v}");
        assert_eq!(v["protocol"], "eco");
        assert_eq!(s["host_name"], "Let's Kautsch OECONOMICA");
        assert!(str_of(&s["host_name_raw"]).is_some_and(|h| h.starts_with("<b><color=#ff0000>L")));
        assert_eq!(s["game_name"], "Eco");
        assert_eq!(s["game_version"], "0.7.7.1 beta");
        assert_eq!(int_of(&s["player_count"]), Some(4));
        assert_eq!(int_of(&s["slot_max"]), Some(77));
        assert_eq!(s["password"], false);
        assert_eq!(int_of(&s["connect_port"]), Some(3000));
        assert_eq!(s["rules"]["Language"], "German");
        assert_eq!(s["rules"]["UniqueIdentifier"], "3499416734684207289");
    }
    assert!(
        r.paths().iter().all(|p| p == "/frontpage"),
        "{:?}",
        r.paths()
    );

    let r = HttpReplay::start(eco("next-multigaming"));
    let v = ogp_query_json(&["-p", "eco"], &r.addr().to_string());
    let s = &v["status"];
    assert_eq!(
        s["host_name"],
        "[FR] Serveur Next Multigaming [EXP 1.5][v7.6.3][~2km]"
    );
    assert_eq!(s["rules"]["Leader"], "Ripley");
    assert_eq!(
        s["rules"]["WorldObjective"],
        "Mettez à jour vos Objectifs (touche \"O\") svp!"
    );
}

#[test]
fn eco_hostile_documents() {
    // not Eco's shape: a clear error naming the document
    let r = HttpReplay::start(Documents::default().with("/frontpage", r#"{"Info":[1,2]}"#));
    let e = query_error(&["-p", "eco"], &r.addr().to_string());
    assert!(
        e.contains("/frontpage") && e.contains("not shaped as expected"),
        "{e}"
    );
    let r = HttpReplay::start(Documents::default().with("/frontpage", r#"{"players":[]}"#));
    let e = query_error(&["-p", "eco"], &r.addr().to_string());
    assert!(e.contains("not an Eco server"), "{e}");
    // lying numbers and 20,000 names: no count from text, the names capped and counted
    let names = vec!["\u{1b}[2Jx"; 20_000];
    let body = serde_json::json!({"Info": {
        "Description": "<color=red>\u{7}Evil</color>", "OnlinePlayers": -3,
        "TotalPlayers": "lots", "GamePort": 99999, "OnlinePlayersNames": names}});
    let r = HttpReplay::start(Documents::default().with("/frontpage", body.to_string()));
    let v = ogp_query_json(&["-p", "eco"], &r.addr().to_string());
    let s = &v["status"];
    assert_eq!(v["ok"], true, "{v}");
    assert!(s["player_count"].is_null() && s["slot_max"].is_null() && s["connect_port"].is_null());
    let kept = s["players"].as_array().map_or(0, Vec::len);
    assert!(kept > 0 && kept < 20_000, "{kept}");
    assert!(
        v.to_string().contains("20000 player names"),
        "no warning: {v}"
    );
    let human = ogp_run(&["query", "-p", "eco", &r.addr().to_string()], CLIENT_LIMIT);
    let out = String::from_utf8_lossy(&human.stdout);
    assert!(out.contains("Evil") && raw_controls(&out) == 0, "{out}");
    // over the body's cap (1 MiB): refused before it is read
    let big = format!(
        r#"{{"Info":{{"Description":"{}"}}}}"#,
        "x".repeat(1_100_000)
    );
    let r = HttpReplay::start(Documents::default().with("/frontpage", big));
    let e = query_error(&["-p", "eco"], &r.addr().to_string());
    assert!(e.contains("exceeds our limit of 1048576"), "{e}");
}

#[test]
fn eco_gamedig_agrees() {
    if !enabled("http_games") {
        return;
    }
    for name in ["letskautsch", "next-multigaming"] {
        let r = HttpReplay::start(eco(name));
        let target = r.addr().to_string();
        let s = ogp_query_json(&["-p", "eco"], &target)["status"].clone();
        let g = gamedig("eco", &target, name);
        let mut rep = Report(Vec::new());
        // gamedig keeps the rich-text tags: our raw name
        rep.eq(
            "name".into(),
            str_of(&g["name"]),
            str_of(&s["host_name_raw"]),
        );
        rep.eq(
            "numplayers".into(),
            int_of(&g["numplayers"]),
            int_of(&s["player_count"]),
        );
        rep.eq(
            "maxplayers".into(),
            int_of(&g["maxplayers"]),
            int_of(&s["slot_max"]),
        );
        rep.eq(
            "password".into(),
            g["password"].as_bool(),
            s["password"].as_bool(),
        );
        rep.eq(
            "version".into(),
            str_of(&g["version"]),
            str_of(&s["game_version"]),
        );
        rep.eq(
            "raw.GamePort".into(),
            int_of(&g["raw"]["GamePort"]),
            int_of(&s["connect_port"]),
        );
        rep.eq(
            "raw.Language".into(),
            str_of(&g["raw"]["Language"]),
            str_of(&s["rules"]["Language"]),
        );
        rep.eq(
            "players".into(),
            g["players"].as_array().map(Vec::len),
            Some(0),
        );
        rep.finish(&format!("gamedig eco ({name})"));
    }
}

fn eldewrito() -> Documents {
    Documents::recorded("eldewrito", "anotherhalo", &[("", "/")])
}

#[test]
fn eldewrito_recorded_server() {
    let r = HttpReplay::start(eldewrito());
    let target = r.addr().to_string();
    for args in [["-p", "eldewrito"], ["--game", "eldewrito"]] {
        let v = ogp_query_json(&args, &target);
        let s = &v["status"];
        assert_eq!(v["ok"], true, "{v}");
        assert_eq!(v["protocol"], "eldewrito");
        assert_eq!(s["host_name"], "HaloOnline Server");
        assert_eq!(s["game_name"], "ElDewrito");
        assert_eq!(s["game_version"], "0.4.11.2");
        assert_eq!(s["map"]["name"], "Guardian");
        assert_eq!(s["game_type"], "slayer");
        assert_eq!(s["game_mode"], "InGame");
        assert_eq!(int_of(&s["player_count"]), Some(12));
        assert_eq!(int_of(&s["slot_max"]), Some(16));
        assert_eq!(int_of(&s["connect_port"]), Some(11774));
        assert_eq!(s["password"], false);
        assert_eq!(s["rules"]["variant"], "Sword Mode");
        assert_eq!(s["players"][1]["name"], "Player 2");
        assert_eq!(int_of(&s["players"][1]["team"]), Some(1));
        assert_eq!(int_of(&s["players"][1]["deaths"]), Some(6));
        assert_eq!(s["players"][1]["alive"], false);
    }
    assert_eq!(r.paths(), vec!["/".to_string(), "/".to_string()]);
}

#[test]
fn eldewrito_hostile_documents() {
    // another server's JSON: a clear error
    let r = HttpReplay::start(Documents::default().with("/", r#"{"Info":{}}"#));
    let e = query_error(&["-p", "eldewrito"], &r.addr().to_string());
    assert!(e.contains("not an ElDewrito server"), "{e}");
    // a list at the top: refused, not read as fields in order
    let r = HttpReplay::start(Documents::default().with("/", r#"["n",11774]"#));
    let e = query_error(&["-p", "eldewrito"], &r.addr().to_string());
    assert!(e.contains("not shaped as expected"), "{e}");
    // a password-protected server: no players, `passworded`
    let body = r#"{"name":"\u001b]0;pwn\u0007Locked","passworded":true,"numPlayers":3,"maxPlayers":16,"eldewritoVersion":"0.6.1.0"}"#;
    let r = HttpReplay::start(Documents::default().with("/", body));
    let v = ogp_query_json(&["-p", "eldewrito"], &r.addr().to_string());
    assert_eq!(v["status"]["password"], true, "{v}");
    assert!(v["status"]["players"].is_null());
    let human = ogp_run(
        &["query", "-p", "eldewrito", &r.addr().to_string()],
        CLIENT_LIMIT,
    );
    let out = String::from_utf8_lossy(&human.stdout);
    assert!(out.contains("Locked") && raw_controls(&out) == 0, "{out}");
}

#[test]
fn eldewrito_gamedig_agrees() {
    if !enabled("http_games") {
        return;
    }
    let r = HttpReplay::start(eldewrito());
    let target = r.addr().to_string();
    let s = ogp_query_json(&["-p", "eldewrito"], &target)["status"].clone();
    let g = gamedig("eldewrito", &target, "anotherhalo");
    let mut rep = Report(Vec::new());
    rep.eq("name".into(), str_of(&g["name"]), str_of(&s["host_name"]));
    rep.eq("map".into(), str_of(&g["map"]), str_of(&s["map"]["name"]));
    rep.eq(
        "maxplayers".into(),
        int_of(&g["maxplayers"]),
        int_of(&s["slot_max"]),
    );
    rep.eq(
        "version".into(),
        str_of(&g["version"]),
        str_of(&s["game_version"]),
    );
    rep.eq(
        "connect port".into(),
        str_of(&g["connect"]).and_then(|c| c.rsplit(':').next().map(str::to_owned)),
        int_of(&s["connect_port"]).map(|p| p.to_string()),
    );
    // gamedig keeps the team under `raw`
    let players = |v: &Value, team: &str| -> Vec<(Option<String>, Option<i64>)> {
        v.as_array()
            .map(|a| {
                a.iter()
                    .map(|p| (str_of(&p["name"]), p.pointer(team).and_then(int_of)))
                    .collect()
            })
            .unwrap_or_default()
    };
    rep.eq(
        "players (name, team)".into(),
        players(&g["players"], "/raw/team"),
        players(&s["players"], "/team"),
    );
    rep.finish("gamedig eldewrito");
}
