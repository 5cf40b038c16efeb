//! One result schema (docs/json.md) for `ogp query --json` and each line of `ogp scan
//! --json`, success and failure alike: the same keys, the protocol, address and ping of
//! an answer, the error kind and fault of a failure, printed on standard output in both
//! cases.

use crate::common;

use std::net::UdpSocket;
use std::process::Command;
use std::time::Duration;

use common::*;
use serde_json::Value;

const STATE: &str = include_str!("../../../ogp-proto/tests/data/state.json");
const LIMIT: Duration = Duration::from_secs(20);

fn keys(v: &Value) -> Vec<String> {
    let mut k: Vec<String> = v.as_object().unwrap().keys().cloned().collect();
    k.sort();
    k
}

fn query(args: &[&str]) -> (Ran, Value) {
    let ran = run(
        Command::new(BIN)
            .arg("query")
            .args(args)
            .args(["--json", "--timeout", "300", "--retries", "0"])
            .env_remove("OGP_LOG")
            .env_remove("RUST_LOG"),
        LIMIT,
    );
    let v = parse_json(&ran, "ogp query", &args.join(" "));
    (ran, v)
}

#[test]
fn query_and_scan_print_one_schema() {
    let served = serve_with("json", STATE, &[], |s| {
        !exchange(
            s,
            b"\xff\xff\xff\xffTSource Engine Query\0",
            Duration::from_millis(300),
        )
        .is_empty()
    });
    let target = format!("127.0.0.1:{}", served.port);
    let dead = {
        let s = UdpSocket::bind("127.0.0.1:0").unwrap();
        format!("127.0.0.1:{}", s.local_addr().unwrap().port())
    };
    let mut ok_keys = None;
    for protocol in ["ogp", "a2s", "gamespy3", "gqp", "auto"] {
        let (ran, v) = query(&[&target, "-p", protocol]);
        assert_eq!(ran.code, Some(0), "{}", ran.describe());
        assert_eq!(v["schema"], 1);
        assert_eq!(v["ok"], true);
        assert_eq!(v["target"], target.as_str());
        assert_eq!(v["addr"], target.as_str());
        let want = if protocol == "auto" { "ogp" } else { protocol };
        assert_eq!(v["protocol"], want);
        assert!(v["ping_ms"].as_f64().unwrap() >= 0.0);
        assert!(v["datagrams"].as_u64().unwrap() >= 1);
        assert!(v["bytes"].as_u64().unwrap() > 0);
        assert!(v["warnings"].is_array());
        assert!(v["status"]["host_name"].is_string());
        let k = keys(&v);
        assert_eq!(ok_keys.get_or_insert_with(|| k.clone()), &k, "{protocol}");
    }
    // A failure is a result too, on stdout, with exit code 1.
    let (ran, v) = query(&[&dead, "-p", "a2s"]);
    assert_eq!(ran.code, Some(1), "{}", ran.describe());
    assert_eq!(v["schema"], 1);
    assert_eq!(v["ok"], false);
    assert_eq!(v["protocol"], "a2s");
    assert_eq!(v["error"], "refused");
    assert_eq!(v["fault"], "network");
    assert!(v["message"].as_str().unwrap().contains("refused"));
    assert!(v.get("status").is_none());
    assert!(
        !ran.stderr.trim().is_empty(),
        "a one-line reason on stderr too"
    );
    let (ran, v) = query(&["nosuchhost.invalid:1", "-p", "ogp"]);
    assert_eq!(ran.code, Some(1), "{}", ran.describe());
    assert_eq!(
        (&v["error"], &v["fault"]),
        (&"resolve".into(), &"local".into())
    );
    let fail_keys = keys(&v);
    // Each scan line has the same keys, plus its list line.
    let list = format!("ogp {target}\nnosuchhost.invalid:1\n");
    let out = run_with_input(
        Command::new(BIN)
            .args([
                "scan",
                "--json",
                "--no-progress",
                "--timeout",
                "300",
                "--retries",
                "0",
                "-",
            ])
            .env_remove("OGP_LOG"),
        Some(list.as_bytes()),
        LIMIT,
    );
    let lines: Vec<Value> = String::from_utf8_lossy(&out.stdout)
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(lines.len(), 2);
    for v in &lines {
        let mut k = keys(v);
        k.retain(|k| k != "line");
        let want = if v["ok"] == true {
            ok_keys.as_ref().unwrap()
        } else {
            &fail_keys
        };
        assert_eq!(&k, want, "{v}");
        assert_eq!(v["schema"], 1);
    }
}
