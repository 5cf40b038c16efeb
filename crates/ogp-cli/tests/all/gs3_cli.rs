//! `ogp decode --protocol gamespy3` and `ogp query --protocol gamespy3` as a user runs
//! them: real captures decoded in any order (text and the state-file JSON), requests and
//! small replies described, an incomplete reply refused; queries against `ogp serve` in
//! both GameSpy v3 challenge modes, against a loopback fake that never answers `0x09`
//! (the client falls back), and against a dead port. Exit codes: 0 success, 1 no or bad
//! answer / malformed input, 2 bad usage.

use crate::common;

use std::net::UdpSocket;
use std::time::Duration;

use common::{exchange, ogp_run, out, parse_json, serve_with, Ran};
use ogp_proto::gamespy3::request::Request;
use ogp_proto::Status;
use serde_json::Value;

const STATE: &str = include_str!("../../../ogp-proto/tests/data/state.json");
const CAPTURES: &str = concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/../ogp-proto/tests/data/gamespy3"
);
const LIMIT: Duration = Duration::from_secs(20);

fn ogp(args: &[&str]) -> Ran {
    ogp_run(args, LIMIT)
}

/// The reply packets of a capture, as hex.
fn capture(name: &str) -> Vec<String> {
    let path = format!("{CAPTURES}/{name}.json");
    let json: Value = serde_json::from_slice(&std::fs::read(path).unwrap()).unwrap();
    json["responses"]["gs3"]
        .as_array()
        .unwrap()
        .iter()
        .map(|h| h.as_str().unwrap().to_string())
        .collect()
}

#[test]
fn decode_a_three_packet_capture_in_any_order() {
    let mut packets = capture("gameq-bf2-1");
    packets.reverse();
    let args: Vec<&str> = ["decode", "--protocol", "gamespy3"]
        .into_iter()
        .chain(packets.iter().map(String::as_str))
        .collect();
    let r = ogp(&args);
    assert_eq!(r.code, Some(0), "{}", r.describe());
    let text = out(&r);
    assert!(text.starts_with("GameSpy v3 reply (3 packets,"), "{text}");
    assert!(text.contains("SUPER@ - S1 Strike at Karkand Infantry Only"));
    assert!(text.contains("Players (54)"));
    // the value truncated at the end of packet 0 and re-sent in packet 1
    assert!(text.contains(" hekutooo"), "{text}");
    // --json: the status in the state-file schema; the alias gs3
    let mut args = args.clone();
    args[2] = "gs3";
    args.insert(3, "--json");
    let r = ogp(&args);
    assert_eq!(r.code, Some(0), "{}", r.describe());
    let v: Value = serde_json::from_slice(&r.stdout).unwrap();
    assert_eq!(v["kind"], "answer");
    assert_eq!(v["packets"], 3);
    let s = Status::from_json(&v["status"].to_string())
        .unwrap_or_else(|e| panic!("{e}: {}", r.describe()));
    assert_eq!(
        s.host_name.as_deref(),
        Some("SUPER@ - S1 Strike at Karkand Infantry Only")
    );
    assert_eq!(
        s.map.as_ref().map(|m| m.name.as_str()),
        Some("Strike At Karkand")
    );
    let players = s.players.unwrap();
    assert_eq!(players.len(), 54);
    assert_eq!(players[0].name.as_deref(), Some(" Deniko_pirliko_BiH"));
    assert_eq!(players[0].score, Some(90));
    assert_eq!(players[24].name.as_deref(), Some(" hekutooo"));
    let teams: Vec<_> = s
        .teams
        .unwrap()
        .into_iter()
        .map(|t| t.name.unwrap())
        .collect();
    assert_eq!(teams, ["MEC", "US"]);
}

#[test]
fn decode_just_cause_2_and_utf8_names() {
    let r = ogp(&[
        "decode",
        "-p",
        "gamespy3",
        "--json",
        &capture("gameq-justcause2-1")[0],
    ]);
    assert_eq!(r.code, Some(0), "{}", r.describe());
    let v: Value = serde_json::from_slice(&r.stdout).unwrap();
    assert_eq!(v["jc2mp"], true);
    let s = Status::from_json(&v["status"].to_string()).unwrap();
    let names: Vec<_> = s
        .players
        .unwrap()
        .into_iter()
        .map(|p| p.name.unwrap().to_string())
        .collect();
    assert_eq!(names.len(), 7);
    assert_eq!(names[0], "That1EdgyJohn");
    assert_eq!(names[5], "\u{3ba}\u{f6}\u{3c1}\u{3b5}c\u{3b9}\u{3ba}");
    assert_eq!(s.player_count, Some(7));
}

#[test]
fn decode_an_incomplete_reply_fails_with_one_line() {
    let packets = capture("gameq-ut3-1");
    let r = ogp(&["decode", "-p", "gamespy3", &packets[1]]);
    assert_eq!(r.code, Some(1), "{}", r.describe());
    assert!(r.stdout.is_empty());
    assert_eq!(r.stderr.lines().count(), 1, "{}", r.stderr);
    assert!(r.stderr.contains("reply incomplete"), "{}", r.stderr);
    // not GameSpy at all
    let r = ogp(&["decode", "-p", "gamespy3", "ffffffff54"]);
    assert_eq!(r.code, Some(1), "{}", r.describe());
    assert!(
        r.stderr.contains("not a GameSpy v3 reply type"),
        "{}",
        r.stderr
    );
    // no input: bad usage
    let r = ogp(&["decode", "-p", "gamespy3"]);
    assert_eq!(r.code, Some(2), "{}", r.describe());
}

#[test]
fn decode_describes_requests_and_small_replies() {
    let r = ogp(&[
        "decode",
        "-p",
        "gamespy3",
        "fefd09 10203040",
        "fefd00 10203040 01020304 ffffff01",
        "fefd00 20212120 02 0801 0000",
        "09 10203040 3237313131383736 00",
        "fefd08",
    ]);
    assert_eq!(r.code, Some(0), "{}", r.describe());
    let text = out(&r);
    let lines: Vec<&str> = text.lines().collect();
    assert_eq!(lines.len(), 5, "{text}");
    assert!(
        lines[0].starts_with("GameSpy v3 challenge request (session 0x10203040"),
        "{text}"
    );
    assert!(
        lines[1].contains("challenge 16909060, sub-protocol B"),
        "{text}"
    );
    assert!(
        lines[2].contains("sub-protocol C (numplayers, hostname)"),
        "{text}"
    );
    assert!(lines[3].contains("challenge \"27111876\""), "{text}");
    assert!(lines[4].contains("keep-alive"), "{text}");
    let r = ogp(&[
        "decode",
        "-p",
        "gamespy3",
        "--json",
        "fefd00 10203040 ffffff01",
    ]);
    let v: Value = serde_json::from_slice(&r.stdout).unwrap();
    assert_eq!(v["protocol"], "gamespy3");
    assert_eq!(v["kind"], "info_request");
    assert_eq!(v["session_id"], 0x1020_3040);
    assert_eq!(v["challenge"], Value::Null);
    assert_eq!(v["query"]["sub_protocol"], "B");
}

/// `ogp serve` on loopback, answering GameSpy v3 in `mode`.
fn serve(mode: &str) -> common::Served {
    serve_with(
        &format!("gs3-{mode}"),
        STATE,
        &["--gamespy3-challenge", mode],
        |sock| {
            !exchange(
                sock,
                b"\xfe\xfd\x09\x00\x00\x00\x01",
                Duration::from_millis(300),
            )
            .is_empty()
        },
    )
}

fn names(s: &Status) -> Vec<String> {
    s.players
        .iter()
        .flatten()
        .map(|p| p.name.as_deref().unwrap_or_default().to_string())
        .collect()
}

#[test]
fn query_ogp_serve_in_both_challenge_modes() {
    let want = Status::from_json(STATE).unwrap();
    for mode in ["real", "bf2"] {
        let served = serve(mode);
        let target = format!("127.0.0.1:{}", served.port);
        let r = ogp(&["query", "--protocol", "gamespy3", &target, "--json"]);
        assert_eq!(r.code, Some(0), "{mode}: {}", r.describe());
        let v = parse_json(&r, "ogp query", mode);
        assert_eq!(v["ok"], true, "{mode}");
        assert_eq!(v["protocol"], "gamespy3", "{mode}");
        let s = Status::from_json(&v["status"].to_string()).unwrap();
        assert_eq!(s.host_name, want.host_name, "{mode}");
        assert_eq!(
            s.map.as_ref().map(|m| &m.name),
            want.map.as_ref().map(|m| &m.name)
        );
        assert_eq!(names(&s), names(&want), "{mode}");
        // -v shows the exchange
        let r = ogp(&["query", "-p", "gs3", &target, "-v"]);
        assert_eq!(r.code, Some(0), "{mode}: {}", r.describe());
        assert!(
            out(&r).starts_with(&format!("GameSpy v3 server {target} answered")),
            "{}",
            r.describe()
        );
        // -v: the exchange, on stderr
        let text = &r.stderr;
        assert!(text.contains("→ 0x09 challenge request 7 B"), "{text}");
        if mode == "bf2" {
            assert!(text.contains("challenge 0x00000000"), "{text}");
            assert!(text.contains("→ information request 11 B (id "), "{text}");
        } else {
            assert!(
                text.contains("→ information request 15 B (challenge "),
                "{text}"
            );
        }
        assert!(text.contains("← part 1 "), "{text}");
        assert!(
            out(&r).contains(want.host_name.as_deref().unwrap()),
            "{}",
            r.describe()
        );
    }
}

#[test]
fn query_a_server_that_never_answers_0x09() {
    // a Battlefield 2 build that ignores 0x09 and answers requests without a challenge
    let packets: Vec<Vec<u8>> = capture("gameq-bf2-3")
        .iter()
        .map(|h| ogp_proto::internals::from_hex(h).unwrap())
        .collect();
    let sock = UdpSocket::bind("127.0.0.1:0").unwrap();
    let port = sock.local_addr().unwrap().port();
    sock.set_read_timeout(Some(Duration::from_millis(200)))
        .unwrap();
    let stop = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
    let stop2 = stop.clone();
    let fake = std::thread::spawn(move || {
        let mut buf = [0u8; 2048];
        while !stop2.load(std::sync::atomic::Ordering::Relaxed) {
            let Ok((n, from)) = sock.recv_from(&mut buf) else {
                continue;
            };
            if let Ok(Request::Info {
                session_id,
                challenge: None,
                ..
            }) = Request::decode(&buf[..n])
            {
                for p in packets.iter().rev() {
                    let mut p = p.clone();
                    p[1..5].copy_from_slice(&session_id.to_be_bytes());
                    sock.send_to(&p, from).unwrap();
                }
            }
        }
    });
    let target = format!("127.0.0.1:{port}");
    let r = ogp(&["query", "-p", "gamespy3", &target, "-v", "--timeout", "300"]);
    stop.store(true, std::sync::atomic::Ordering::Relaxed);
    fake.join().unwrap();
    assert_eq!(r.code, Some(0), "{}", r.describe());
    assert!(
        r.stderr
            .contains("no reply to 0x09: asking without a challenge"),
        "{}",
        r.describe()
    );
    let text = out(&r);
    assert!(text.contains("3 datagrams"), "{text}");
    assert!(text.contains("Players (63)"), "{text}");
}

#[test]
fn query_a_dead_port_fails_with_one_line() {
    let port = common::free_port();
    let target = format!("127.0.0.1:{port}");
    let r = ogp(&[
        "query",
        "-p",
        "gamespy3",
        &target,
        "--timeout",
        "200",
        "--retries",
        "0",
    ]);
    assert_eq!(r.code, Some(1), "{}", r.describe());
    assert!(r.stdout.is_empty());
    assert_eq!(r.stderr.lines().count(), 1, "{}", r.stderr);
    assert!(
        r.stderr.starts_with(&format!("ogp: {target}: ")),
        "{}",
        r.stderr
    );
}
