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
use serde_json::{json, Value};

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

/// The players' names and teams (at `team`, a JSON pointer: gamedig keeps it under `raw`).
fn names_and_teams(v: &Value, team: &str) -> Vec<(Option<String>, Option<i64>)> {
    v.as_array()
        .map(|a| {
            a.iter()
                .map(|p| (str_of(&p["name"]), p.pointer(team).and_then(int_of)))
                .collect()
        })
        .unwrap_or_default()
}

/// gamedig's name, player count and limit against our status `s`.
fn gamedig_counts(rep: &mut Report, g: &Value, s: &Value) {
    rep.eq("name".into(), str_of(&g["name"]), str_of(&s["host_name"]));
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
}

/// An answer `v` of `protocol` whose status has each value at its JSON pointer.
fn expect_status(v: &Value, protocol: &str, fields: &[(&str, Value)]) {
    assert_eq!(v["ok"], true, "{v}");
    assert_eq!(v["protocol"], protocol, "{v}");
    for (at, want) in fields {
        assert_eq!(v["status"].pointer(at), Some(want), "{at} in {v}");
    }
}

/// gamedig's name, counts, map, version and player names against our status `s`.
fn gamedig_status(rep: &mut Report, g: &Value, s: &Value) {
    gamedig_counts(rep, g, s);
    rep.eq("map".into(), str_of(&g["map"]), str_of(&s["map"]["name"]));
    rep.eq(
        "version".into(),
        str_of(&g["version"]),
        str_of(&s["game_version"]),
    );
    rep.eq(
        "players".into(),
        player_names(&g["players"]),
        player_names(&s["players"]),
    );
}

/// `ogp query -p PROTOCOL` of the replay `r`, human output: shows `text`, and no
/// control character from the server.
fn human_shows(r: &HttpReplay, protocol: &str, text: &str) {
    let human = ogp_run(
        &["query", "-p", protocol, &r.addr().to_string()],
        CLIENT_LIMIT,
    );
    let out = String::from_utf8_lossy(&human.stdout);
    assert!(out.contains(text) && raw_controls(&out) == 0, "{out}");
}

/// `docs` replayed, read by `ogp query -p PROTOCOL` and gamedig's `kind`: the replay
/// (kept alive), our status and gamedig's JSON.
fn ours_and_gamedig(
    docs: Documents,
    protocol: &str,
    kind: &str,
    label: &str,
) -> (HttpReplay, Value, Value) {
    ours_and_gamedig_with(docs, &["-p", protocol], kind, label)
}

/// [`ours_and_gamedig`], `ogp query` with `args`.
fn ours_and_gamedig_with(
    docs: Documents,
    args: &[&str],
    kind: &str,
    label: &str,
) -> (HttpReplay, Value, Value) {
    let r = HttpReplay::start(docs);
    let target = r.addr().to_string();
    let s = ogp_query_json(args, &target)["status"].clone();
    let g = gamedig(kind, &target, label);
    (r, s, g)
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
    human_shows(&r, "eco", "Evil");
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
    human_shows(&r, "eldewrito", "Locked");
}

#[test]
fn eldewrito_gamedig_agrees() {
    if !enabled("http_games") {
        return;
    }
    let (_r, s, g) = ours_and_gamedig(eldewrito(), "eldewrito", "eldewrito", "anotherhalo");
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
    rep.eq(
        "players (name, team)".into(),
        names_and_teams(&g["players"], "/raw/team"),
        names_and_teams(&s["players"], "/team"),
    );
    rep.finish("gamedig eldewrito");
}

/// TShock's recorded answer at our path and at qstat's (it asks without parameters).
fn tshock() -> Documents {
    let d = Documents::recorded("terraria", "shadowrain", &[("", "/v2/server/status")]);
    let body = d.0.get("/v2/server/status").cloned().unwrap_or_default();
    d.with("/v2/server/status?players=true", body)
}

#[test]
fn terraria_recorded_server() {
    let r = HttpReplay::start(tshock());
    let target = r.addr().to_string();
    // the catalogue's query port is the game port + 101
    let game_port = format!("127.0.0.1:{}", r.addr().port() - 101);
    for (args, target) in [
        (["-p", "terraria"], &target),
        (["--game", "terrariatshock"], &game_port),
    ] {
        let v = ogp_query_json(&args, target);
        let s = &v["status"];
        assert_eq!(v["ok"], true, "{v}");
        assert_eq!(v["protocol"], "terraria");
        assert_eq!(s["host_name"], "");
        assert_eq!(s["game_name"], "Terraria");
        assert_eq!(s["game_version"], "v1.3.2.1");
        assert_eq!(s["map"]["name"], "ShadowRain ~ VII");
        assert_eq!(int_of(&s["player_count"]), Some(7));
        assert_eq!(int_of(&s["slot_max"]), Some(86));
        assert_eq!(int_of(&s["connect_port"]), Some(7777));
        assert_eq!(s["password"], false);
        assert_eq!(s["rules"]["tshockversion"], "4.3.16.0");
        assert_eq!(s["rules"]["uptime"], "8.15:10:51");
        assert_eq!(s["rules"]["PvPMode"], "normal");
        assert_eq!(s["rules"]["SpawnProtectionRadius"], "325");
        assert_eq!(s["players"][5]["name"], "Hi-im-jimmy");
        assert_eq!(int_of(&s["players"][5]["team"]), Some(3));
        assert_eq!(s["players"][5]["extra"]["group"], "Member+1");
    }
    assert!(
        r.paths()
            .iter()
            .all(|p| p == "/v2/server/status?players=true"),
        "{:?}",
        r.paths()
    );
}

#[test]
fn terraria_token_goes_in_the_query_and_stays_out_of_output() {
    let r = HttpReplay::start(Documents::default().with(
        "/v2/server/status?players=true&token=s3cr%26t",
        r#"{"status":"200","name":"Tok","playercount":0,"maxplayers":8,"players":[]}"#,
    ));
    let ran = run(
        Command::new(ogp_bin())
            .args(["query", "-vv", "--json", "-p", "terraria"])
            .arg(r.addr().to_string())
            .env("OGP_TSHOCK_TOKEN", "s3cr&t")
            .env("NO_COLOR", "1"),
        CLIENT_LIMIT,
    );
    let all = format!("{}{}", String::from_utf8_lossy(&ran.stdout), ran.stderr);
    assert!(all.contains("\"Tok\""), "{all}");
    assert!(!all.contains("s3cr"), "{all}");
}

#[test]
fn terraria_hostile_documents() {
    // TShock's refusal in its own status
    let r = HttpReplay::start(Documents::default().with(
        "/v2/server/status?players=true",
        r#"{"status":"403","error":"Invalid token"}"#,
    ));
    let e = query_error(&["-p", "terraria"], &r.addr().to_string());
    assert!(e.contains("status is not 200"), "{e}");
    // lying counts, 5,000 players, 10,000 rules, controls in names
    let players: Vec<Value> = (0..5_000)
        .map(|i| serde_json::json!({"nickname": format!("\u{1b}[31mp{i}"), "team": "x"}))
        .collect();
    let rules: serde_json::Map<String, Value> = (0..10_000)
        .map(|i| (format!("r{i}"), Value::from(i)))
        .collect();
    let body = serde_json::json!({"status": "200", "name": "\u{7}Evil", "playercount": -1,
        "maxplayers": 1e40, "port": 99999, "players": players, "rules": rules});
    let r = HttpReplay::start(
        Documents::default().with("/v2/server/status?players=true", body.to_string()),
    );
    let v = ogp_query_json(&["-p", "terraria"], &r.addr().to_string());
    let s = &v["status"];
    assert_eq!(v["ok"], true, "{v}");
    assert!(s["player_count"].is_null() && s["slot_max"].is_null() && s["connect_port"].is_null());
    let kept = s["players"].as_array().map_or(0, Vec::len);
    assert!(kept > 0 && kept < 5_000, "{kept}");
    let rules = s["rules"].as_object().map_or(0, serde_json::Map::len);
    assert!(rules < 300, "{rules}");
    let text = v.to_string();
    assert!(
        text.contains("5000 players") && text.contains("10000 rules"),
        "{text}"
    );
    human_shows(&r, "terraria", "Evil");
}

#[test]
fn terraria_qstat_and_gamedig_agree() {
    if !enabled("terraria_qstat_and_gamedig_agree") {
        return;
    }
    let (r, s, g) = ours_and_gamedig(tshock(), "terraria", "terrariatshock", "shadowrain");
    let mut rep = Report(Vec::new());
    gamedig_counts(&mut rep, &g, &s);
    rep.eq(
        "gamePort".into(),
        int_of(&g["raw"]["port"]),
        int_of(&s["connect_port"]),
    );
    rep.eq(
        "players (name, team)".into(),
        names_and_teams(&g["players"], "/raw/team"),
        names_and_teams(&s["players"], "/team"),
    );
    rep.finish("gamedig terraria");
    // qstat asks /v2/server/status without parameters and reads it line by line: the
    // world as its map, the counts and the server's version (its name reader takes the
    // empty name's line end, `,`, for the name: not compared)
    let q = qstat_run("-terraria", r.addr().port());
    let q: Value =
        serde_json::from_slice(&q.stdout).unwrap_or_else(|e| panic!("{e}: {}", q.describe()));
    let q = &q[0];
    let mut rep = Report(Vec::new());
    rep.eq("map".into(), str_of(&q["map"]), str_of(&s["map"]["name"]));
    rep.eq(
        "numplayers".into(),
        int_of(&q["numplayers"]),
        int_of(&s["player_count"]),
    );
    rep.eq(
        "maxplayers".into(),
        int_of(&q["maxplayers"]),
        int_of(&s["slot_max"]),
    );
    rep.eq(
        "serverversion".into(),
        str_of(&q["rules"]["serverversion"]),
        str_of(&s["game_version"]),
    );
    rep.eq(
        "uptime".into(),
        str_of(&q["rules"]["uptime"]),
        str_of(&s["rules"]["uptime"]),
    );
    rep.finish("qstat -terraria");
}

fn palworld() -> Documents {
    Documents::recorded(
        "palworld",
        "dedicated",
        &[
            ("info", "/v1/api/info"),
            ("metrics", "/v1/api/metrics"),
            ("players", "/v1/api/players"),
            ("settings", "/v1/api/settings"),
        ],
    )
}

/// `ogp query ARGS --json TARGET` with credentials in the environment `env` (none of
/// the caller's own).
fn query_with_env(args: &[&str], target: &str, env: &[(&str, &str)]) -> (Value, String) {
    let mut cmd = Command::new(ogp_bin());
    cmd.args(["query", "--json", "--timeout", "2000"])
        .args(args)
        .arg(target)
        .env_remove("OGP_PALWORLD_PASSWORD")
        .env_remove("OGP_PALWORLD_PASSWORD_FILE")
        .env_remove("OGP_FS_CODE")
        .env_remove("OGP_FS_CODE_FILE")
        .env("NO_COLOR", "1");
    for (k, v) in env {
        cmd.env(k, v);
    }
    let ran = run(&mut cmd, CLIENT_LIMIT);
    let v: Value =
        serde_json::from_slice(&ran.stdout).unwrap_or_else(|e| panic!("{e}: {}", ran.describe()));
    let all = format!("{}{}", String::from_utf8_lossy(&ran.stdout), ran.stderr);
    (v, all)
}

#[test]
fn palworld_documented_server() {
    let r = HttpReplay::start(palworld());
    let target = r.addr().to_string();
    let dir = std::env::temp_dir().join(format!("ogp-palworld-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let file = dir.join("password");
    std::fs::write(&file, "filed-pw\n").unwrap();
    let file = file.to_string_lossy().to_string();
    for (args, env) in [
        (["-p", "palworld"], ("OGP_PALWORLD_PASSWORD", "s3cr3t-pw")),
        (
            ["--game", "palworld"],
            ("OGP_PALWORLD_PASSWORD_FILE", file.as_str()),
        ),
    ] {
        let (v, all) = query_with_env(&[args[0], args[1], "-vv"], &target, &[env]);
        let sent = sent_in_dump(&all);
        assert!(contains_bytes(&sent, b"Authorization: ******"), "{all}");
        let s = &v["status"];
        assert_eq!(v["ok"], true, "{v}");
        assert_eq!(v["protocol"], "palworld");
        assert_eq!(s["host_name"], "Pal Test Server");
        assert_eq!(s["game_name"], "Palworld");
        assert_eq!(s["game_version"], "v0.3.11.63225");
        assert_eq!(int_of(&s["player_count"]), Some(2));
        assert_eq!(int_of(&s["slot_max"]), Some(32));
        assert_eq!(int_of(&s["uptime_seconds"]), Some(3600));
        assert_eq!(s["rules"]["days"], "12");
        assert_eq!(s["players"][0]["name"], "Tanuki");
        assert_eq!(int_of(&s["players"][0]["ping"]), Some(34));
        assert_eq!(s["players"][0]["global_id"], "steam_76561190000000001");
        assert_eq!(s["players"][1]["extra"]["level"], "7");
        // the players' addresses are not copied; the password and its base64 never shown
        assert!(!all.contains("192.0.2.10"), "{all}");
        for secret in [
            "s3cr3t-pw",
            "YWRtaW46czNjcjN0LXB3",
            "filed-pw",
            "YWRtaW46ZmlsZWQtcHc",
        ] {
            assert!(!all.contains(secret), "{secret} in {all}");
            assert!(
                !contains_bytes(&sent, secret.as_bytes()),
                "{secret} sent in {all}"
            );
        }
        assert!(all.contains("→ sent"), "no -vv dump: {all}");
    }
    let _ = std::fs::remove_dir_all(&dir);
    assert_eq!(
        r.paths(),
        ["/v1/api/info", "/v1/api/metrics", "/v1/api/players"].repeat(2)
    );
}

#[test]
fn palworld_hostile_and_refused() {
    // no password: the server refuses (401), one clear error
    let r = HttpReplay::start(Documents::default());
    let (v, _) = query_with_env(&["-p", "palworld"], &r.addr().to_string(), &[]);
    assert_eq!(v["ok"], false, "{v}");
    assert!(v.to_string().contains("/v1/api/info"), "{v}");
    // metrics refused: the players listed count; 6,000 players capped
    let players: Vec<Value> = (0..6_000)
        .map(|i| serde_json::json!({"name": format!("\u{1b}]0;p{i}"), "ping": "x"}))
        .collect();
    let r = HttpReplay::start(
        Documents::default()
            .with("/v1/api/info", r#"{"servername":"\u0007Evil","version":7}"#)
            .with(
                "/v1/api/players",
                serde_json::json!({ "players": players }).to_string(),
            ),
    );
    let (v, _) = query_with_env(
        &["-p", "palworld"],
        &r.addr().to_string(),
        &[("OGP_PALWORLD_PASSWORD", "x")],
    );
    let s = &v["status"];
    assert_eq!(v["ok"], true, "{v}");
    assert_eq!(int_of(&s["player_count"]), Some(6_000), "{v}");
    let kept = s["players"].as_array().map_or(0, Vec::len);
    assert!(kept > 0 && kept < 6_000, "{kept}");
    let text = v.to_string();
    assert!(
        text.contains("/v1/api/metrics") && text.contains("6000 players"),
        "{text}"
    );
    // an unreadable password file: a usage error naming it, nothing sent
    let ran = run(
        Command::new(ogp_bin())
            .args(["query", "-p", "palworld", &r.addr().to_string()])
            .env_remove("OGP_PALWORLD_PASSWORD")
            .env("OGP_PALWORLD_PASSWORD_FILE", "/nonexistent/pw"),
        CLIENT_LIMIT,
    );
    assert!(
        ran.stderr.contains("OGP_PALWORLD_PASSWORD_FILE"),
        "{}",
        ran.describe()
    );
}

#[test]
fn palworld_gamedig_agrees() {
    if !enabled("palworld_gamedig_agrees") {
        return;
    }
    let r = HttpReplay::start(palworld());
    let target = r.addr().to_string();
    let (v, _) = query_with_env(
        &["-p", "palworld"],
        &target,
        &[("OGP_PALWORLD_PASSWORD", "pw")],
    );
    let s = &v["status"];
    let ran = run(
        Command::new("node")
            .arg(gamedig_js())
            .args(["--type", "palworld", "--givenPortOnly"])
            .args(["--username", "admin", "--password", "pw"])
            .args(["--socketTimeout", "2000", "--maxRetries", "1"])
            .arg(&target),
        CLIENT_LIMIT,
    );
    let g = parse_json(&ran, "gamedig palworld", "dedicated");
    let mut rep = Report(Vec::new());
    gamedig_counts(&mut rep, &g, s);
    rep.eq(
        "version".into(),
        str_of(&g["version"]),
        str_of(&s["game_version"]),
    );
    let names = |v: &Value| -> Vec<Option<String>> {
        v.as_array()
            .map(|a| a.iter().map(|p| str_of(&p["name"])).collect())
            .unwrap_or_default()
    };
    rep.eq("players".into(), names(&g["players"]), names(&s["players"]));
    rep.finish("gamedig palworld");
}

/// `ogp query` by protocol and by game (the query port `offset` from the game port)
/// of the replay `r`: each answer's status, checked by `check`.
fn by_protocol_and_game(
    r: &HttpReplay,
    protocol: &str,
    game: &str,
    offset: i32,
    check: impl Fn(&Value),
) {
    let target = r.addr().to_string();
    let game_port = i32::from(r.addr().port()) - offset;
    let game_target = format!("127.0.0.1:{game_port}");
    for (args, target) in [
        (["-p", protocol], &target),
        (["--game", game], &game_target),
    ] {
        let v = ogp_query_json(&args, target);
        assert_eq!(v["ok"], true, "{v}");
        assert_eq!(v["protocol"], protocol);
        check(&v["status"]);
    }
}

/// gamedig's and our names of players, in order.
fn player_names(v: &Value) -> Vec<Option<String>> {
    v.as_array()
        .map(|a| a.iter().map(|p| str_of(&p["name"])).collect())
        .unwrap_or_default()
}

#[test]
fn kspdmp_server_and_hostile() {
    let r = HttpReplay::start(Documents::recorded("kspdmp", "dedicated", &[("", "/")]));
    by_protocol_and_game(&r, "kspdmp", "kspd", 1, |s| {
        assert_eq!(s["host_name"], "DMP Test Server");
        assert_eq!(s["game_name"], "Kerbal Space Program");
        assert_eq!(int_of(&s["player_count"]), Some(3));
        assert_eq!(int_of(&s["slot_max"]), Some(20));
        assert_eq!(int_of(&s["connect_port"]), Some(6702));
        assert_eq!(s["game_mode"], "SANDBOX");
        assert_eq!(s["rules"]["warp_mode"], "SUBSPACE");
        assert_eq!(player_names(&s["players"]).len(), 3);
        assert_eq!(s["players"][2]["name"], "Bob");
    });
    // another server's JSON; 10,000 names in the string, a lying count
    let r = HttpReplay::start(Documents::default().with("/", r#"{"Info":{}}"#));
    let e = query_error(&["-p", "kspdmp"], &r.addr().to_string());
    assert!(e.contains("not a DarkMultiPlayer server"), "{e}");
    let names = vec!["\u{1b}[2Jx"; 10_000].join(", ");
    let body = serde_json::json!({"server_name": "n", "players": names, "player_count": 1e99});
    let r = HttpReplay::start(Documents::default().with("/", body.to_string()));
    let v = ogp_query_json(&["-p", "kspdmp"], &r.addr().to_string());
    assert_eq!(v["ok"], true, "{v}");
    assert!(v["status"]["player_count"].is_null());
    let kept = v["status"]["players"].as_array().map_or(0, Vec::len);
    assert!(kept > 0 && kept < 10_000, "{kept}");
    assert!(v.to_string().contains("10000 players"), "{v}");
}

#[test]
fn buildandshoot_server_and_hostile() {
    let r = HttpReplay::start(Documents::recorded(
        "buildandshoot",
        "piqueserver",
        &[("", "/json")],
    ));
    for game in ["bas", "aosc"] {
        by_protocol_and_game(&r, "buildandshoot", game, -1, |s| {
            assert_eq!(s["host_name"], "piqueserver test");
            assert_eq!(s["game_version"], "0.75");
            assert_eq!(s["game_type"], "ctf");
            assert_eq!(s["map"]["name"], "hallway");
            assert_eq!(int_of(&s["player_count"]), Some(2));
            assert_eq!(int_of(&s["slot_max"]), Some(32));
            assert_eq!(int_of(&s["uptime_seconds"]), Some(1234));
            assert_eq!(s["rules"]["map.author"], "Ben Aksoy");
            assert_eq!(s["players"][1]["name"], "Sniper");
            assert_eq!(int_of(&s["players"][1]["team"]), Some(1));
            assert_eq!(int_of(&s["players"][1]["ping"]), Some(120));
            assert_eq!(int_of(&s["players"][0]["kills"]), Some(7));
        });
    }
    // not a status server; 5,000 players by team in the older layout
    let r = HttpReplay::start(Documents::default().with("/json", r#"{"players":[]}"#));
    let e = query_error(&["-p", "buildandshoot"], &r.addr().to_string());
    assert!(e.contains("not a Build and Shoot status server"), "{e}");
    let blue = vec!["\u{7}b"; 2_500];
    let body = serde_json::json!({"serverName": "old", "players":
        {"blue": blue, "green": blue, "maxPlayers": -5}});
    let r = HttpReplay::start(Documents::default().with("/json", body.to_string()));
    let v = ogp_query_json(&["-p", "buildandshoot"], &r.addr().to_string());
    assert_eq!(v["ok"], true, "{v}");
    assert_eq!(int_of(&v["status"]["player_count"]), Some(5_000));
    assert!(v["status"]["slot_max"].is_null());
    assert!(v.to_string().contains("5000 players"), "{v}");
}

fn assettocorsa() -> Documents {
    Documents::recorded(
        "assettocorsa",
        "test",
        &[("info", "/INFO"), ("cars", "/JSON|*")],
    )
}

#[test]
fn assettocorsa_server_and_hostile() {
    let r = HttpReplay::start(assettocorsa());
    by_protocol_and_game(&r, "assettocorsa", "assettocorsa", 0, |s| {
        assert_eq!(s["host_name"], "AC Test Server");
        assert_eq!(s["game_version"], "AssettoServer 0.0.54");
        assert_eq!(s["map"]["name"], "ks_nurburgring-layout_gp_a");
        assert_eq!(int_of(&s["player_count"]), Some(2));
        assert_eq!(int_of(&s["slot_max"]), Some(18));
        assert_eq!(int_of(&s["connect_port"]), Some(9600));
        assert_eq!(s["password"], false);
        assert_eq!(s["rules"]["cars"], "ks_mazda_mx5_cup,bmw_m3_e30");
        assert_eq!(
            player_names(&s["players"]),
            [Some("Alice".into()), Some("Bob".into())]
        );
        assert_eq!(s["players"][1]["extra"]["car"], "bmw_m3_e30");
    });
    assert_eq!(r.paths(), ["/INFO", "/JSON|1"].repeat(2));
    // no cars document: the status without players, with a warning
    let r = HttpReplay::start(
        Documents::default().with("/INFO", r#"{"name":"\u001b]0;x\u0007n","clients":1}"#),
    );
    let v = ogp_query_json(&["-p", "assettocorsa"], &r.addr().to_string());
    assert_eq!(v["ok"], true, "{v}");
    assert!(v["status"]["players"].is_null());
    assert!(v.to_string().contains("/JSON|1"), "{v}");
    let human = ogp_run(
        &["query", "-p", "assettocorsa", &r.addr().to_string()],
        CLIENT_LIMIT,
    );
    let out = String::from_utf8_lossy(&human.stdout);
    assert_eq!(raw_controls(&out), 0, "{out}");
    // a list where /INFO's object is: refused
    let r = HttpReplay::start(Documents::default().with("/INFO", "[1,2,3]"));
    let e = query_error(&["-p", "assettocorsa"], &r.addr().to_string());
    assert!(
        e.contains("/INFO") && e.contains("not shaped as expected"),
        "{e}"
    );
}

#[test]
fn kspdmp_buildandshoot_assettocorsa_gamedig_agree() {
    if !enabled("kspdmp_buildandshoot_assettocorsa_gamedig_agree") {
        return;
    }
    // DMP: gamedig iterates the players string character by character before splitting
    // it (a nameless player per character, then the names): name, max, port and the
    // named players compared
    let (_r, s, g) = ours_and_gamedig(
        Documents::recorded("kspdmp", "dedicated", &[("", "/")]),
        "kspdmp",
        "kspd",
        "dedicated",
    );
    let mut rep = Report(Vec::new());
    rep.eq("name".into(), str_of(&g["name"]), str_of(&s["host_name"]));
    rep.eq(
        "maxplayers".into(),
        int_of(&g["maxplayers"]),
        int_of(&s["slot_max"]),
    );
    rep.eq(
        "gamePort".into(),
        int_of(&g["raw"]["port"]),
        int_of(&s["connect_port"]),
    );
    let named: Vec<Option<String>> = player_names(&g["players"])
        .into_iter()
        .filter(|n| n.as_deref().is_some_and(|n| !n.is_empty()))
        .collect();
    rep.eq("named players".into(), named, player_names(&s["players"]));
    rep.finish("gamedig kspd");

    let (_r, s, g) = ours_and_gamedig(
        Documents::recorded("buildandshoot", "piqueserver", &[("", "/json")]),
        "buildandshoot",
        "bas",
        "piqueserver",
    );
    let mut rep = Report(Vec::new());
    gamedig_status(&mut rep, &g, &s);
    rep.finish("gamedig bas");

    let (_r, s, g) = ours_and_gamedig(assettocorsa(), "assettocorsa", "assettocorsa", "test");
    let mut rep = Report(Vec::new());
    gamedig_counts(&mut rep, &g, &s);
    rep.eq("map".into(), str_of(&g["map"]), str_of(&s["map"]["name"]));
    rep.eq(
        "version".into(),
        str_of(&g["version"]),
        str_of(&s["game_version"]),
    );
    rep.eq(
        "password".into(),
        g["password"].as_bool(),
        s["password"].as_bool(),
    );
    rep.eq(
        "players".into(),
        player_names(&g["players"]),
        player_names(&s["players"]),
    );
    rep.finish("gamedig assettocorsa");
}

/// `ogp scan` reads the five games of the second batch in one run, by protocol and by
/// game, Palworld's password from the environment.
#[test]
fn ogp_scan_reads_the_second_batch() {
    let tshock = HttpReplay::start(tshock());
    let pal = HttpReplay::start(palworld());
    let dmp = HttpReplay::start(Documents::recorded("kspdmp", "dedicated", &[("", "/")]));
    let bas = HttpReplay::start(Documents::recorded(
        "buildandshoot",
        "piqueserver",
        &[("", "/json")],
    ));
    let ac = HttpReplay::start(assettocorsa());
    let port = |r: &HttpReplay| r.addr().port();
    let list = format!(
        "terraria 127.0.0.1:{}\npalworld 127.0.0.1:{}\nkspdmp 127.0.0.1:{}\nbuildandshoot 127.0.0.1:{}\nassettocorsa 127.0.0.1:{}\ngame:terrariatshock 127.0.0.1:{}\ngame:aosc 127.0.0.1:{}\n",
        port(&tshock),
        port(&pal),
        port(&dmp),
        port(&bas),
        port(&ac),
        port(&tshock) - 101,
        port(&bas) + 1,
    );
    let ran = run_with_input(
        Command::new(ogp_bin())
            .args(["scan", "-", "--json", "--timeout", "2000"])
            .env("NO_COLOR", "1")
            .env_remove("OGP_PALWORLD_PASSWORD_FILE")
            .env("OGP_PALWORLD_PASSWORD", "scan-pw"),
        Some(list.as_bytes()),
        CLIENT_LIMIT,
    );
    let out = String::from_utf8_lossy(&ran.stdout);
    assert!(!out.contains("scan-pw"), "{out}");
    let mut names: Vec<String> = out
        .lines()
        .filter_map(|l| serde_json::from_str::<Value>(l).ok())
        .filter(|v| v["ok"] == true)
        .filter_map(|v| str_of(&v["status"]["host_name"]))
        .collect();
    names.sort();
    assert_eq!(
        names,
        [
            "",
            "",
            "AC Test Server",
            "DMP Test Server",
            "Pal Test Server",
            "piqueserver test",
            "piqueserver test"
        ],
        "{}",
        ran.describe()
    );
}

const FS_CODE: &str = "c0de&x=1";
const FS_PATH: &str = "/feed/dedicated-server-stats.xml?code=c0de%26x%3D1";

fn farmingsimulator() -> Documents {
    Documents::recorded("farmingsimulator", "dedicated", &[("", FS_PATH)])
}

#[test]
fn farmingsimulator_documented_server() {
    let r = HttpReplay::start(farmingsimulator());
    let target = r.addr().to_string();
    let dir = std::env::temp_dir().join(format!("ogp-fs-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let file = dir.join("code");
    std::fs::write(&file, format!("{FS_CODE}\n")).unwrap();
    let file = file.to_string_lossy().to_string();
    for (args, env) in [
        (["-p", "farmingsimulator"], ("OGP_FS_CODE", FS_CODE)),
        (["--game", "fs22"], ("OGP_FS_CODE_FILE", file.as_str())),
    ] {
        let (v, all) = query_with_env(&[args[0], args[1], "-vv"], &target, &[env]);
        let sent = sent_in_dump(&all);
        assert!(contains_bytes(&sent, b"?code=****"), "{all}");
        for secret in [FS_CODE, "c0de%26x"] {
            assert!(!all.contains(secret), "{secret} in {all}");
        }
        expect_status(
            &v,
            "farmingsimulator",
            &[
                ("/host_name", json!("FS Test Farm & Friends")),
                ("/game_name", json!("Farming Simulator 22")),
                ("/game_version", json!("1.14.0.0")),
                ("/map/name", json!("Elmcreek")),
                ("/player_count", json!(2)),
                ("/slot_max", json!(16)),
                ("/players/0/name", json!("Farmer Jo")),
                ("/players/1/name", json!("Harvester Hal")),
                ("/players/0/extra/isAdmin", json!("true")),
                ("/addons/1/short_name", json!("FS22_Courseplay")),
                ("/addons/1/long_name", json!("Courseplay")),
                ("/rules/mapSize", json!("2048")),
            ],
        );
        assert_eq!(v["status"]["players"].as_array().map(Vec::len), Some(2));
    }
    let _ = std::fs::remove_dir_all(&dir);
    assert_eq!(r.paths(), [FS_PATH].repeat(2));
    // no code: the server refuses, one clear error naming the document (not the code)
    let (v, _) = query_with_env(&["-p", "farmingsimulator"], &target, &[]);
    assert_eq!(v["ok"], false, "{v}");
    let e = v["message"].to_string();
    assert!(
        e.contains("/feed/dedicated-server-stats.xml") && e.contains("404"),
        "{e}"
    );
}

/// `ogp query -p farmingsimulator` of one hostile document served at the code's path:
/// its JSON.
fn farmingsimulator_hostile(body: impl Into<Vec<u8>>) -> Value {
    let r = HttpReplay::start(Documents::default().with(FS_PATH, body));
    let (v, _) = query_with_env(
        &["-p", "farmingsimulator"],
        &r.addr().to_string(),
        &[("OGP_FS_CODE", FS_CODE)],
    );
    v
}

#[test]
fn farmingsimulator_hostile_documents() {
    let refused = |body: String, why: &str| {
        let v = farmingsimulator_hostile(body);
        assert_eq!(v["ok"], false, "{v}");
        let e = str_of(&v["message"]).unwrap_or_default();
        assert!(
            e.contains(why) && !e.contains('\n') && raw_controls(&e) == 0,
            "{e}"
        );
    };
    // billion laughs: no DTD is read, so nothing expands
    let laughs = r#"<?xml version="1.0"?><!DOCTYPE lolz [<!ENTITY lol "lol"><!ENTITY lol2 "&lol;&lol;&lol;&lol;">]><Server name="&lol2;"/>"#;
    refused(laughs.into(), "DTD");
    refused(r#"<Server name="&lol;"/>"#.into(), "unknown entity");
    refused("<Server>".repeat(10_000), "nest too deep");
    refused(
        format!("<Server>{}</Server>", "<a/>".repeat(250_000)),
        "200000",
    );
    refused(
        format!("<Server name=\"{}\"/>", "x".repeat(2_200_000)),
        "exceeds our limit",
    );
    refused(
        "<html><body>login</body></html>".into(),
        "not a Farming Simulator",
    );
    refused("<Server><Slots>".into(), "ends early");
    // 10,000 used slots with control characters, a lying count: capped, counted, clean
    let players: String = (0..10_000)
        .map(|i| format!("<Player isUsed=\"true\">\u{1b}[2J&#7;p{i}</Player>"))
        .collect();
    let v = farmingsimulator_hostile(format!(
        "<Server name=\"&#x1b;]0;Evil\"><Slots capacity=\"-1\" numUsed=\"lots\">{players}</Slots></Server>"
    ));
    let s = &v["status"];
    assert_eq!(v["ok"], true, "{v}");
    assert!(
        s["player_count"].is_null() && s["slot_max"].is_null(),
        "{s}"
    );
    let kept = s["players"].as_array().map_or(0, Vec::len);
    assert!(kept > 0 && kept < 10_000, "{kept}");
    assert!(v.to_string().contains("10000 players"), "{v}");
    let r =
        HttpReplay::start(Documents::default().with(FS_PATH, "<Server name=\"&#x1b;]0;Evil\"/>"));
    let ran = run(
        Command::new(ogp_bin())
            .args(["query", "-p", "farmingsimulator", &r.addr().to_string()])
            .env("OGP_FS_CODE", FS_CODE),
        CLIENT_LIMIT,
    );
    let out = String::from_utf8_lossy(&ran.stdout);
    assert!(out.contains("Evil") && raw_controls(&out) == 0, "{out}");
}

#[test]
fn farmingsimulator_gamedig_agrees() {
    if !enabled("farmingsimulator_gamedig_agrees") {
        return;
    }
    let r = HttpReplay::start(farmingsimulator());
    let target = r.addr().to_string();
    let (v, _) = query_with_env(
        &["-p", "farmingsimulator"],
        &target,
        &[("OGP_FS_CODE", FS_CODE)],
    );
    let s = &v["status"];
    let ran = run(
        Command::new("node")
            .arg(gamedig_js())
            .args(["--type", "farmingsimulator22", "--givenPortOnly"])
            .args(["--token", "c0de%26x%3D1"])
            .args(["--socketTimeout", "2000", "--maxRetries", "1"])
            .arg(&target),
        CLIENT_LIMIT,
    );
    let g = parse_json(&ran, "gamedig farmingsimulator22", "dedicated");
    let mut rep = Report(Vec::new());
    gamedig_status(&mut rep, &g, s);
    let mods = |v: &Value, key: &str| -> Vec<Option<String>> {
        v.as_array()
            .map(|a| a.iter().map(|m| str_of(&m[key])).collect())
            .unwrap_or_default()
    };
    rep.eq(
        "mods".into(),
        mods(&g["raw"]["mods"], "short_name"),
        mods(&s["addons"], "short_name"),
    );
    rep.eq(
        "mod titles".into(),
        mods(&g["raw"]["mods"], "name"),
        mods(&s["addons"], "long_name"),
    );
    rep.finish("gamedig farmingsimulator22");
}

#[test]
fn ogp_scan_reads_farmingsimulator() {
    let r = HttpReplay::start(farmingsimulator());
    let list = format!(
        "farmingsimulator 127.0.0.1:{0}\ngame:farmingsimulator25 127.0.0.1:{0}\n",
        r.addr().port()
    );
    let ran = run_with_input(
        Command::new(ogp_bin())
            .args(["scan", "-", "--json", "--timeout", "2000"])
            .env("NO_COLOR", "1")
            .env_remove("OGP_FS_CODE_FILE")
            .env("OGP_FS_CODE", FS_CODE),
        Some(list.as_bytes()),
        CLIENT_LIMIT,
    );
    let out = String::from_utf8_lossy(&ran.stdout);
    assert!(!out.contains(FS_CODE), "{out}");
    let names: Vec<String> = out
        .lines()
        .filter_map(|l| serde_json::from_str::<Value>(l).ok())
        .filter(|v| v["ok"] == true)
        .filter_map(|v| str_of(&v["status"]["host_name"]))
        .collect();
    assert_eq!(names, ["FS Test Farm & Friends"; 2], "{}", ran.describe());
}

fn hytale_doc() -> String {
    let file = format!(
        "{}/../ogp-proto/tests/data/hytale/nitrado.json",
        env!("CARGO_MANIFEST_DIR")
    );
    std::fs::read_to_string(file).unwrap()
}

/// The recorded Hytale answer's status, as `ogp query` read it (`v`).
fn hytale_checks(v: &Value) {
    expect_status(
        v,
        "hytale",
        &[
            ("/host_name", json!("Hytale Test Realm")),
            ("/game_name", json!("Hytale")),
            ("/game_version", json!("2026.01.24-6e2d4fc36")),
            ("/map/name", json!("orbis")),
            ("/player_count", json!(2)),
            ("/slot_max", json!(50)),
            ("/players/0/name", json!("Kweebec")),
            ("/players/1/name", json!("Trork")),
            (
                "/players/1/global_id",
                json!("a1b2c3d4-e5f6-4789-8abc-def012345678"),
            ),
            ("/addons/1/short_name", json!("Nitrado:Query")),
            ("/addons/1/active", json!(true)),
            ("/rules/Patchline", json!("release")),
        ],
    );
}

#[test]
fn hytale_over_https_and_http() {
    // HTTPS with a self-signed certificate: refused (one clear TLS error) unless
    // --insecure; --game hytale the same
    let web = crate::list_web::Web::ok(true, &hytale_doc());
    let target = format!("127.0.0.1:{}", web.port);
    let e = query_error(&["-p", "hytale"], &target);
    assert!(e.contains("TLS") && e.contains("--insecure"), "{e}");
    for args in [["-p", "hytale"], ["--game", "hytale"]] {
        hytale_checks(&ogp_query_json(&[args[0], args[1], "--insecure"], &target));
    }
    let heads = web.requests.lock().unwrap().clone();
    assert_eq!(heads.len(), 2, "{heads:?}");
    assert!(
        heads
            .iter()
            .all(|h| h.starts_with("GET /Nitrado/Query HTTP/1.1\r\n")
                && h.contains("\r\nAccept: application/x.hytale.nitrado.query+json;version=1")),
        "{heads:?}"
    );
    // a plain HTTP server asked over TLS: no answer to the TLS hello (this replay waits
    // for a request head; a real one answers 400, which rustls calls corrupt, naming
    // --no-tls); asked with --no-tls, read
    let r = HttpReplay::start(Documents::recorded(
        "hytale",
        "nitrado",
        &[("", "/Nitrado/Query")],
    ));
    let e = query_error(&["-p", "hytale", "--insecure"], &r.addr().to_string());
    assert!(e.contains("TLS") || e.contains("timed out"), "{e}");
    hytale_checks(&ogp_query_json(
        &["-p", "hytale", "--no-tls"],
        &r.addr().to_string(),
    ));
    // ogp scan, over HTTPS (--insecure) and HTTP (--no-tls)
    for (flag, port) in [("--insecure", web.port), ("--no-tls", r.addr().port())] {
        let list = format!("hytale 127.0.0.1:{port}\ngame:hytale 127.0.0.1:{port}\n");
        let ran = run_with_input(
            Command::new(ogp_bin())
                .args(["scan", "-", "--json", "--timeout", "2000", flag])
                .env("NO_COLOR", "1"),
            Some(list.as_bytes()),
            CLIENT_LIMIT,
        );
        let names: Vec<String> = String::from_utf8_lossy(&ran.stdout)
            .lines()
            .filter_map(|l| serde_json::from_str::<Value>(l).ok())
            .filter(|v| v["ok"] == true)
            .filter_map(|v| str_of(&v["status"]["host_name"]))
            .collect();
        assert_eq!(
            names,
            ["Hytale Test Realm"; 2],
            "{flag}: {}",
            ran.describe()
        );
    }
}

#[test]
fn hytale_hostile_documents() {
    let query = |body: String| {
        let r = HttpReplay::start(Documents::default().with("/Nitrado/Query", body));
        ogp_query_json(&["-p", "hytale", "--no-tls"], &r.addr().to_string())
    };
    // not the plugin's answer; deep JSON; over the body's cap
    for (body, why) in [
        (
            r#"{"players":[]}"#.to_string(),
            "not Nitrado's query plugin",
        ),
        (
            format!(r#"{{"Server":{{"Name":{}"#, "[".repeat(5_000)),
            "ends early",
        ),
        (
            format!(r#"{{"Server":{{"Name":"{}"}}}}"#, "x".repeat(1_100_000)),
            "exceeds our limit",
        ),
        (r#"{"Server":[1,2]}"#.to_string(), "not shaped as expected"),
    ] {
        let v = query(body);
        assert_eq!(v["ok"], false, "{v}");
        let e = str_of(&v["message"]).unwrap_or_default();
        assert!(e.contains(why), "{e}");
    }
    // 100,000 levels of nesting where nothing is kept: skipped without recursion
    let deep = format!(
        r#"{{"Server":{{"Name":"n","X":{}{}}}}}"#,
        "[".repeat(100_000),
        "]".repeat(100_000)
    );
    assert_eq!(query(deep)["status"]["host_name"], "n");
    // 10,000 players as an object by UUID, lying counts, control characters
    let players: serde_json::Map<String, Value> = (0..10_000)
        .map(|i| {
            (
                format!("u{i}"),
                serde_json::json!({"Name": format!("\u{1b}[2Jp{i}")}),
            )
        })
        .collect();
    let body = serde_json::json!({"Server": {"Name": "\u{7}Evil", "MaxPlayers": -4},
        "Universe": {"CurrentPlayers": "many"}, "Players": players});
    let v = query(body.to_string());
    let s = &v["status"];
    assert_eq!(v["ok"], true, "{v}");
    assert_eq!(int_of(&s["player_count"]), Some(10_000), "{s}");
    assert!(s["slot_max"].is_null());
    let kept = s["players"].as_array().map_or(0, Vec::len);
    assert!(kept > 0 && kept < 10_000, "{kept}");
    assert!(v.to_string().contains("10000 players"), "{v}");
    let r = HttpReplay::start(Documents::default().with("/Nitrado/Query", body.to_string()));
    let ran = ogp_run(
        &["query", "-p", "hytale", "--no-tls", &r.addr().to_string()],
        CLIENT_LIMIT,
    );
    let out = String::from_utf8_lossy(&ran.stdout);
    assert!(out.contains("Evil") && raw_controls(&out) == 0, "{out}");
}

#[test]
fn hytale_gamedig_agrees() {
    if !enabled("hytale_gamedig_agrees") {
        return;
    }
    // gamedig asks over http:// only: the same document over HTTP
    let (_r, s, g) = ours_and_gamedig_with(
        Documents::recorded("hytale", "nitrado", &[("", "/Nitrado/Query")]),
        &["-p", "hytale", "--no-tls"],
        "hytale",
        "nitrado",
    );
    let mut rep = Report(Vec::new());
    gamedig_status(&mut rep, &g, &s);
    rep.finish("gamedig hytale");
}
