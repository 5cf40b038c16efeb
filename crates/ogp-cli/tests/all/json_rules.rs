//! Rules a server sends under one key more than once reach every JSON output whole, in a
//! form that readers keeping one value per object key (serde_json's `Value`, jq, Python's
//! `json`) do not cut: `ogp decode --json` of an answer datagram, and `ogp query --json`
//! against a loopback responder, in each protocol that carries rules.

use crate::common;

use std::process::Command;
use std::time::Duration;

use common::*;
use ogp_proto::ogp::{encode_answer, AnswerOptions, DefaultQuery, Header, PacketType};
use ogp_proto::responder::{Listener, ResponderConfig};
use ogp_proto::{Rules, Status};
use serde_json::{json, Value};

const LIMIT: Duration = Duration::from_secs(30);

/// Six rules, three of them under one key, interleaved with the others.
const RULES: [(&str, &str); 6] = [
    ("a", "1"),
    ("mod", "x"),
    ("b", "2"),
    ("mod", "y"),
    ("mod", "z"),
    ("c", "3"),
];

fn status() -> Status {
    let mut s = Status::default();
    s.host_name = Some("repeated rules".into());
    s.rules = Some(Rules::from_iter(RULES));
    s
}

/// The rules object of an output's status holds all six values, `mod` as an array in
/// order; Python's `json` reads the same.
fn check_rules(out: &[u8], status: &Value, what: &str) {
    let rules = &status["rules"];
    assert_eq!(rules["mod"], json!(["x", "y", "z"]), "{what}: {rules}");
    assert_eq!(rules["a"], "1", "{what}: {rules}");
    assert_eq!(rules["c"], "3", "{what}: {rules}");
    let values: usize = rules
        .as_object()
        .unwrap_or_else(|| panic!("{what}: rules not an object: {rules}"))
        .values()
        .map(|v| v.as_array().map_or(1, Vec::len))
        .sum();
    assert_eq!(values, RULES.len(), "{what}: {rules}");
    // the same through Python's json, which keeps the last of repeated keys
    let py = run_with_input(
        Command::new("python3").args([
            "-c",
            "import json, sys\n\
             v = json.load(sys.stdin)\n\
             s = v['status'] if 'status' in v else v['messages'][0]['status']\n\
             r = s['rules']\n\
             print(sum(len(x) if isinstance(x, list) else 1 for x in r.values()))",
        ]),
        Some(out),
        LIMIT,
    );
    assert_eq!(py.code, Some(0), "{what}: {}", py.describe());
    assert_eq!(
        String::from_utf8_lossy(&py.stdout).trim(),
        RULES.len().to_string(),
        "{what}: python3's json lost rules"
    );
}

#[test]
fn decode_json_keeps_repeated_rule_keys() {
    let mut datagram = Vec::new();
    encode_answer(
        &Header::answer(PacketType::DEFAULT_QUERY).with_utf8(true),
        &status(),
        &DefaultQuery::everything(),
        &AnswerOptions {
            utf8: true,
            colors: false,
        },
        &mut datagram,
    );
    let dir = TempDir::new("json-rules");
    let file = dir.0.join("answer.bin");
    std::fs::write(&file, &datagram).unwrap();
    // the plain output names all six
    let ran = run(
        Command::new(BIN)
            .arg("decode")
            .arg(&file)
            .env("NO_COLOR", "1"),
        LIMIT,
    );
    assert_eq!(ran.code, Some(0), "{}", ran.describe());
    let text = String::from_utf8_lossy(&ran.stdout);
    for v in ["x", "y", "z"] {
        assert!(
            text.lines().any(|l| l.contains("mod") && l.contains(v)),
            "mod = {v} missing:\n{text}"
        );
    }
    let ran = run(
        Command::new(BIN).arg("decode").arg("--json").arg(&file),
        LIMIT,
    );
    assert_eq!(ran.code, Some(0), "{}", ran.describe());
    let v = parse_json(&ran, "ogp decode --json", "answer.bin");
    let status = find_status(&v).unwrap_or_else(|| panic!("no status in {v}"));
    check_rules(&ran.stdout, status, "decode --json");
}

/// The first `status` object anywhere in `v`.
fn find_status(v: &Value) -> Option<&Value> {
    match v {
        Value::Object(m) => m
            .get("status")
            .filter(|s| s.is_object())
            .or_else(|| m.values().find_map(find_status)),
        Value::Array(a) => a.iter().find_map(find_status),
        _ => None,
    }
}

#[test]
fn query_json_keeps_repeated_rule_keys() {
    let cell = ogp_net::StatusCell::new(status());
    let server = ogp_net::responder::spawn_thread(
        &[("127.0.0.1:0".parse().unwrap(), Listener::Standard)],
        cell,
        ResponderConfig::default(),
    )
    .expect("a loopback responder");
    let target = server.local_addrs()[0].to_string();
    for protocol in ["ogp", "a2s", "gamespy3"] {
        let ran = run(
            Command::new(BIN)
                .args(["query", &target, "-p", protocol, "--json"])
                .args(["--timeout", "2000"])
                .env_remove("OGP_LOG")
                .env_remove("RUST_LOG"),
            LIMIT,
        );
        assert_eq!(ran.code, Some(0), "{protocol}: {}", ran.describe());
        let v = parse_json(&ran, "ogp query --json", protocol);
        check_rules(
            &ran.stdout,
            &v["status"],
            &format!("query -p {protocol} --json"),
        );
    }
    server.stop().unwrap();
}
