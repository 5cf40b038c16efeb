//! Every JSON output escapes what acts on a terminal (issue 36, item 7), against
//! Minecraft: Java Edition servers on loopback (`ogp_testkit::slp`, serving a status JSON
//! we choose): a hostile MOTD and player sample in `ogp query --json` and `ogp scan
//! --json`, read back whole by serde_json and Python; and a status with a lone surrogate
//! (`\ud800`), read with U+FFFD instead of refused (item 10); with `OGP_INTEROP=1`,
//! mcstatus reads the same server with the surrogate where we have U+FFFD.
//!
//! `OGP_BIN=/path/to/ogp` runs the same checks against another build, to compare
//! (`-- --nocapture` prints the counts).

use crate::common;

use std::net::TcpListener;
use std::process::Command;
use std::sync::Arc;
use std::time::Duration;

use common::*;
use ogp_testkit::interop;
use serde_json::{json, Value};

const LIMIT: Duration = Duration::from_secs(20);

fn ogp(args: &[&str], input: Option<&[u8]>) -> Ran {
    ogp_run_with_input(args, input, LIMIT)
}

/// Serves `status` (the JSON text, sent as it is) on a free loopback port, on a thread
/// of its own for the rest of the test binary's life (each connection bounded by the
/// responder's own timeouts).
fn minecraft(status: String) -> u16 {
    let l = TcpListener::bind("127.0.0.1:0").unwrap();
    let port = l.local_addr().unwrap().port();
    l.set_nonblocking(true).unwrap();
    std::thread::spawn(move || {
        let rt = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .unwrap();
        rt.block_on(async move {
            let l = tokio::net::TcpListener::from_std(l).unwrap();
            let served = ogp_testkit::slp::serve(l, Arc::from(status.as_str()));
            let _ = tokio::time::timeout(Duration::from_secs(60), served).await;
        });
    });
    port
}

/// Every character the JSON writer escapes (and C0, which serde_json escapes itself).
const HOSTILE: &str = concat!("§aevil\u{7}", terminal_controls!());

fn hostile_status() -> String {
    json!({
        "version": {"name": format!("1.20.1{HOSTILE}"), "protocol": 763},
        "players": {"max": 20, "online": 1, "sample": [{"name": format!("p{HOSTILE}"), "id": "00000000-0000-0000-0000-000000000001"}]},
        "description": {"text": HOSTILE},
    })
    .to_string()
}

#[test]
fn query_and_scan_json_escape_every_terminal_control() {
    let port = minecraft(hostile_status());
    let target = format!("127.0.0.1:{port}");
    let ran = ogp(&["query", "-p", "minecraft", "--json", &target], None);
    let out = String::from_utf8_lossy(&ran.stdout).into_owned();
    eprintln!(
        "raw terminal controls in query --json: {}",
        raw_controls(&out)
    );
    assert_eq!(raw_controls(&out), 0, "{out}");
    let v: Value = serde_json::from_str(&out).unwrap_or_else(|e| panic!("{e}: {out}"));
    assert_eq!(v["status"]["host_name_raw"], HOSTILE, "{v}");

    // Python's json reads back the same characters.
    assert_eq!(
        python_code_points(out.as_bytes(), "['status']['host_name_raw']"),
        code_points(HOSTILE)
    );

    let list = format!("minecraft {target}\n");
    let ran = ogp(
        &["scan", "--json", "--no-progress", "-"],
        Some(list.as_bytes()),
    );
    let out = String::from_utf8_lossy(&ran.stdout).into_owned();
    eprintln!(
        "raw terminal controls in scan --json: {}",
        raw_controls(&out)
    );
    assert_eq!(raw_controls(&out), 0, "{out}");
    let v: Value = serde_json::from_str(out.lines().next().unwrap()).unwrap();
    assert_eq!(v["status"]["host_name_raw"], HOSTILE, "{v}");
}

/// `ogp query -p minecraft --json 127.0.0.1:PORT`'s JSON.
fn query_json(port: u16) -> Value {
    let ran = ogp(
        &[
            "query",
            "-p",
            "minecraft",
            "--json",
            &format!("127.0.0.1:{port}"),
        ],
        None,
    );
    serde_json::from_slice(&ran.stdout).unwrap_or_else(|e| panic!("{e}: {}", ran.describe()))
}

const LONE: &str = r#"{"version":{"name":"1.20.1","protocol":763},"players":{"max":20,"online":0},"description":{"text":"lone \ud800 surrogate"}}"#;

#[test]
fn a_lone_surrogate_is_read_as_u_fffd() {
    let port = minecraft(LONE.to_string());
    let v = query_json(port);
    eprintln!(
        "lone surrogate: {}",
        v["message"].as_str().unwrap_or("answered")
    );
    assert_eq!(v["ok"], true, "{v}");
    assert_eq!(v["status"]["host_name"], "lone \u{fffd} surrogate");
    assert_eq!(v["status"]["slot_max"], 20);
}

/// mcstatus (Python's `json`) keeps the lone surrogate in its `str` (which Python then
/// refuses to print as UTF-8); we have U+FFFD in its place, and the rest the same.
#[test]
fn mcstatus_reads_the_lone_surrogate_where_we_read_u_fffd() {
    if !interop::enabled("mcstatus_reads_the_lone_surrogate_where_we_read_u_fffd") {
        return;
    }
    let port = minecraft(LONE.to_string());
    let script = "import sys; from mcstatus import JavaServer; \
        s = JavaServer('127.0.0.1', int(sys.argv[1])).status(); \
        print(' '.join(str(ord(c)) for c in s.motd.to_plain()))";
    let ran = run(
        Command::new(interop::venv_python("mcstatus", "mcstatus", "14.2.0")).args([
            "-c",
            script,
            &port.to_string(),
        ]),
        LIMIT,
    );
    assert_eq!(ran.code, Some(0), "{}", ran.describe());
    let theirs: Vec<u32> = String::from_utf8_lossy(&ran.stdout)
        .split_whitespace()
        .map(|n| n.parse().unwrap())
        .collect();
    assert!(theirs.contains(&0xd800), "{theirs:?}");
    let v = query_json(port);
    let ours: Vec<u32> = v["status"]["host_name"]
        .as_str()
        .unwrap()
        .chars()
        .map(u32::from)
        .collect();
    let theirs_replaced: Vec<u32> = theirs
        .iter()
        .map(|&c| {
            if (0xd800..=0xdfff).contains(&c) {
                0xfffd
            } else {
                c
            }
        })
        .collect();
    assert_eq!(ours, theirs_replaced);
}

/// The master's HTTP API writes JSON with the same writer: an `ogp serve` registered with
/// a hostile host name is listed, and neither the list (with and without the statuses)
/// nor the server's details carry a terminal control raw; serde_json reads the name
/// back whole.
#[test]
#[cfg(feature = "master")]
fn the_master_api_escapes_terminal_controls() {
    use common::master::{ogp_ready, state, wait_for, Master};
    const NAME: &str = concat!("evil", terminal_controls!());
    let dir = TempDir::new("master-json-escapes");
    let db = format!("sqlite://{}", dir.0.join("m.db").display());
    let m = Master::with_config(&dir.0, "escapes", "allow_private = true\n", &["--db", &db]);
    let s = serve_with(
        "master-escapes",
        &state(NAME),
        &["--master", &m.udp.to_string()],
        ogp_ready,
    );
    wait_for("the hostile server listed", Duration::from_secs(15), || {
        m.servers().iter().any(|v| v["name"] == NAME)
    });
    let paths = [
        "/api/v1/servers".to_owned(),
        "/api/v1/servers?view=summary".to_owned(),
        format!("/api/v1/servers/127.0.0.1:{}", s.port),
    ];
    for path in &paths {
        let (code, body) = m.get(path);
        assert_eq!(code, 200, "{path}: {body}");
        assert_eq!(raw_controls(&body), 0, "{path}: {body}");
        serde_json::from_str::<Value>(&body).expect("valid JSON");
        assert!(body.contains("\\u202e"), "{path}: {body}");
    }
    let (_, body) = m.get(&paths[2]);
    let v: Value = serde_json::from_str(&body).unwrap();
    assert_eq!(v["name"], NAME, "{v}");
}
