//! Servers an operator adds to `ogp master` (Minecraft servers never register): the
//! config file's `[[server]]` tables and the write API (`POST /api/v1/servers`,
//! `DELETE /api/v1/servers/{addr}`, behind the config's `api_token`). They are polled
//! like any other server, listed only after a good poll, and never listed when they
//! never answer. `ogp serve` (A2S) stands in for a Minecraft server here: the poller
//! speaks TCP once the scan engine does.

use crate::common;

use std::net::UdpSocket;
use std::path::Path;
use std::time::Duration;

use common::master::{
    http_request, ogp_ready, run_with_config, state_with_favicon, wait_for, Master, FAVICON,
};
use common::{serve_with, TempDir};
use serde_json::Value;

const TOKEN: &str = "test-token-0123456789abcdef";

fn listed(m: &Master) -> Vec<String> {
    let mut v: Vec<String> = m
        .servers()
        .iter()
        .map(|s| s["addr"].as_str().unwrap().to_owned())
        .collect();
    v.sort();
    v
}

/// Polls that found nothing, from `/metrics`.
fn down_polls(m: &Master) -> u64 {
    let (_, text) = m.get("/metrics");
    text.lines()
        .find(|l| l.contains("polls_total{") && l.contains("outcome=\"down\""))
        .and_then(|l| l.rsplit(' ').next())
        .and_then(|n| n.parse::<f64>().ok())
        .map_or(0, |n| n as u64)
}

fn post(m: &Master, token: Option<&str>, body: &str) -> (u16, String) {
    let auth = token.map(|t| format!("Bearer {t}"));
    let mut headers = vec![("Content-Type", "application/json")];
    if let Some(a) = &auth {
        headers.push(("Authorization", a.as_str()));
    }
    http_request(m.http, "POST", "/api/v1/servers", &headers, body.as_bytes())
}

fn delete(m: &Master, token: Option<&str>, addr: &str) -> (u16, String) {
    let auth = token.map(|t| format!("Bearer {t}"));
    let headers: Vec<(&str, &str)> = auth
        .as_deref()
        .map(|a| vec![("Authorization", a)])
        .unwrap_or_default();
    http_request(
        m.http,
        "DELETE",
        &format!("/api/v1/servers/{addr}"),
        &headers,
        b"",
    )
}

fn body(addr: &str, protocol: &str) -> String {
    serde_json::json!({ "addr": addr, "protocol": protocol }).to_string()
}

/// A UDP port where nothing ever answers (the socket is held, so the port stays taken
/// and silent).
fn silent() -> (UdpSocket, String) {
    let s = UdpSocket::bind("127.0.0.1:0").unwrap();
    let a = s.local_addr().unwrap().to_string();
    (s, a)
}

fn config(_dir: &Path, extra: &str) -> String {
    format!("poll_interval_secs = 1\nrefresh_ms = 300\n{extra}")
}

/// Without `api_token` the write API is off: POST and DELETE are refused with 403
/// (even with a token), and nothing is added; reading works as before.
#[test]
fn without_a_token_the_write_api_is_off() {
    let dir = TempDir::new("added-off");
    let db = format!("sqlite://{}", dir.0.join("m.db").display());
    let m = Master::with_config(
        &dir.0,
        "off",
        &config(&dir.0, ""),
        &["--allow-private", "--db", &db],
    );
    let (_s, addr) = silent();
    let (code, text) = post(&m, Some(TOKEN), &body(&addr, "a2s"));
    assert_eq!(code, 403, "{text}");
    assert!(text.contains("no api_token"), "{text}");
    let (code, _) = post(&m, None, &body(&addr, "a2s"));
    assert_eq!(code, 403);
    let (code, _) = delete(&m, Some(TOKEN), &addr);
    assert_eq!(code, 403);
    assert_eq!(m.get("/api/v1/servers").0, 200);
    assert!(m
        .log_text()
        .lines()
        .all(|l| !l.contains("added through the API")));
}

/// With `api_token`: no token or a wrong one is 401; bad bodies, unknown protocols,
/// long bodies are clear 4xx; the right token adds (201, then 200 again), and the cap
/// `max_added_servers` is a 409; DELETE needs the token too, and a server of the config
/// file cannot be deleted through the API.
#[test]
fn the_write_api_needs_the_token_and_checks_what_it_is_given() {
    let dir = TempDir::new("added-auth");
    let db = format!("sqlite://{}", dir.0.join("m.db").display());
    let (_c, in_config) = silent();
    let conf = config(
        &dir.0,
        &format!(
            "api_token = \"{TOKEN}\"\nmax_added_servers = 2\n[[server]]\naddr = \"{in_config}\"\nprotocol = \"minecraft\"\nname = \"from the file\"\n"
        ),
    );
    let m = Master::with_config(&dir.0, "auth", &conf, &["--allow-private", "--db", &db]);
    let (_a, a) = silent();
    let (_b, b) = silent();
    let (_c2, c) = silent();

    for (token, what) in [
        (None, "no token"),
        (Some("wrong-token-0123456789abcdef"), "a wrong token"),
        (Some(&TOKEN[..TOKEN.len() - 1]), "a prefix of the token"),
    ] {
        let (code, text) = post(&m, token, &body(&a, "minecraft"));
        assert_eq!(code, 401, "{what}: {text}");
        let (code, _) = delete(&m, token, &a);
        assert_eq!(code, 401, "{what}");
    }
    let (code, text) = http_request(
        m.http,
        "POST",
        "/api/v1/servers",
        &[("Authorization", &format!("Basic {TOKEN}"))],
        body(&a, "a2s").as_bytes(),
    );
    assert_eq!(code, 401, "{text}");

    let bad = [
        ("not json", "body:"),
        (r#"{"addr":"127.0.0.1:1"}"#, "missing field `protocol`"),
        (
            r#"{"addr":"nowhere","protocol":"a2s"}"#,
            "addr: not an address",
        ),
        (r#"{"addr":"127.0.0.1:0","protocol":"a2s"}"#, "port 0"),
        (
            r#"{"addr":"127.0.0.1:1","protocol":"doom9"}"#,
            "protocol: unknown protocol",
        ),
        (
            r#"{"addr":"127.0.0.1:1","protocol":"a2s","admin":true}"#,
            "unknown field `admin`",
        ),
    ];
    for (b, want) in bad {
        let (code, text) = post(&m, Some(TOKEN), b);
        assert_eq!(code, 400, "{b}: {text}");
        assert!(text.contains(want), "{b}: {text}");
    }
    let long = format!(
        r#"{{"addr":"{a}","protocol":"a2s","note":"{}"}}"#,
        "x".repeat(4096)
    );
    let (code, _) = post(&m, Some(TOKEN), &long);
    assert_eq!(code, 413);

    let (code, text) = post(&m, Some(TOKEN), &body(&a, "minecraft"));
    assert_eq!(code, 201, "{text}");
    let v: Value = serde_json::from_str(&text).unwrap();
    assert_eq!(v["addr"], a.as_str());
    assert_eq!(v["protocol"], "minecraft");
    let (code, _) = post(&m, Some(TOKEN), &body(&a, "minecraft"));
    assert_eq!(code, 200, "adding again is not an error");
    assert_eq!(post(&m, Some(TOKEN), &body(&b, "a2s")).0, 201);
    let (code, text) = post(&m, Some(TOKEN), &body(&c, "a2s"));
    assert_eq!(code, 409, "{text}");
    assert!(text.contains("max_added_servers (2)"), "{text}");
    let (code, text) = post(&m, Some(TOKEN), &body(&in_config, "a2s"));
    assert_eq!(code, 409, "{text}");
    assert!(text.contains("config file"), "{text}");

    let (code, text) = delete(&m, Some(TOKEN), &in_config);
    assert_eq!(code, 409, "{text}");
    assert_eq!(delete(&m, Some(TOKEN), "nowhere").0, 400);
    assert_eq!(delete(&m, Some(TOKEN), &b).0, 204);
    assert_eq!(delete(&m, Some(TOKEN), &b).0, 404);
    // room again under the cap
    assert_eq!(post(&m, Some(TOKEN), &body(&c, "a2s")).0, 201);
    // none of them ever answered: none is listed
    assert!(listed(&m).is_empty(), "{:?}", listed(&m));
}

/// Without `allow_private`, loopback, private, link-local and documentation addresses
/// are refused (400), as registrations from them are.
#[test]
fn the_write_api_refuses_private_addresses() {
    let dir = TempDir::new("added-private");
    let db = format!("sqlite://{}", dir.0.join("m.db").display());
    let conf = config(&dir.0, &format!("api_token = \"{TOKEN}\"\n"));
    let m = Master::with_config(&dir.0, "private", &conf, &["--db", &db]);
    for a in [
        "127.0.0.1:25565",
        "10.1.2.3:25565",
        "192.168.1.1:25565",
        "169.254.1.1:25565",
        "192.0.2.1:25565",
        "[::1]:25565",
        "[fe80::1]:25565",
        "[::ffff:127.0.0.1]:25565",
    ] {
        let (code, text) = post(&m, Some(TOKEN), &body(a, "minecraft"));
        assert_eq!(code, 400, "{a}: {text}");
        assert!(text.contains("not a global address"), "{a}: {text}");
    }
}

/// A `[[server]]` of the config file and one added through the API are polled and
/// listed after their first good poll, with the status's `favicon` rule as the server
/// gave it; one that never answers is polled (and found down) but never listed; one
/// deleted through the API leaves the list.
#[test]
fn added_servers_are_polled_and_listed_only_after_a_good_poll() {
    let dir = TempDir::new("added-polled");
    let db = format!("sqlite://{}", dir.0.join("m.db").display());
    polled_and_listed(&dir, &db);
}

/// The same on PostgreSQL (a throwaway cluster, scripts/install-postgres.sh): the
/// migration, the statements that add, release and list added servers.
#[test]
fn added_servers_on_postgres() {
    let pg = ogp_testkit::postgres::Cluster::start();
    let dir = TempDir::new("added-pg");
    polled_and_listed(&dir, &pg.url());
}

fn polled_and_listed(dir: &TempDir, db: &str) {
    let db = db.to_owned();
    let served = serve_with(
        "added-a",
        &state_with_favicon("Config Craft"),
        &[],
        ogp_ready,
    );
    let by_api = serve_with("added-b", &state_with_favicon("Api Craft"), &[], ogp_ready);
    let (_s, dead) = silent();
    let good = format!("127.0.0.1:{}", served.port);
    let api = format!("127.0.0.1:{}", by_api.port);
    let conf = config(
        &dir.0,
        &format!(
            "api_token = \"{TOKEN}\"\n[[server]]\naddr = \"{good}\"\nprotocol = \"a2s\"\n[[server]]\naddr = \"{dead}\"\nprotocol = \"a2s\"\nnote = \"never answers\"\n"
        ),
    );
    let m = Master::with_config(&dir.0, "polled", &conf, &["--allow-private", "--db", &db]);
    assert_eq!(post(&m, Some(TOKEN), &body(&api, "a2s")).0, 201);
    let (_d, dead_api) = silent();
    assert_eq!(post(&m, Some(TOKEN), &body(&dead_api, "a2s")).0, 201);

    wait_for(
        "both answering servers listed, up, with their favicon",
        Duration::from_secs(60),
        || {
            let s = m.servers();
            [&good, &api].iter().all(|a| {
                s.iter().any(|x| {
                    x["addr"] == a.as_str()
                        && x["up"] == true
                        && x["status"]["rules"]["favicon"] == FAVICON
                })
            })
        },
    );
    // the silent ones have been polled and found down several times: still not listed
    wait_for("polls that found nothing", Duration::from_secs(60), || {
        down_polls(&m) >= 6
    });
    let mut want = vec![good.clone(), api.clone()];
    want.sort();
    assert_eq!(listed(&m), want, "{}", m.log_text());
    assert_eq!(m.get(&format!("/api/v1/servers/{dead}")).0, 404);

    // deleted through the API: it leaves the list (it does not register)
    assert_eq!(delete(&m, Some(TOKEN), &api).0, 204);
    wait_for(
        "the deleted server unlisted",
        Duration::from_secs(30),
        || listed(&m) == vec![good.clone()],
    );
    drop(m);

    // a restart without the [[server]] tables: the config file's servers leave too
    let m = Master::with_config(
        &dir.0,
        "polled2",
        &config(&dir.0, ""),
        &["--allow-private", "--db", &db],
    );
    wait_for(
        "the config file's server unlisted",
        Duration::from_secs(30),
        || listed(&m).is_empty(),
    );
}

/// A bad `[[server]]` table or a short token stops `ogp master` with a clear message.
#[test]
fn bad_server_tables_are_clear_errors() {
    let dir = TempDir::new("added-bad");
    for (conf, want) in [
        (
            "[[server]]\naddr = \"127.0.0.1:25565\"\nprotocol = \"doom9\"\n",
            "[[server]] #1 (\"127.0.0.1:25565\"): protocol: unknown protocol \"doom9\"",
        ),
        (
            "[[server]]\naddr = \"127.0.0.1\"\nprotocol = \"minecraft\"\n",
            "expected HOST:PORT",
        ),
        (
            "[[server]]\naddr = \"127.0.0.1:25565\"\nprotocol = \"minecraft\"\nport = 1\n",
            "unknown field `port`",
        ),
        (
            "api_token = \"short\"\n",
            "api_token: shorter than 16 bytes",
        ),
        (
            "[[server]]\naddr = \"127.0.0.1:25565\"\nprotocol = \"minecraft\"\n",
            "not a global address",
        ),
    ] {
        let out = run_with_config(&dir.0, conf);
        let err = &out.stderr;
        assert_ne!(out.code, Some(0), "{conf}");
        assert!(err.contains(want), "{conf}: {err}");
    }
}
