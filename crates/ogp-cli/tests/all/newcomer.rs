//! What a newcomer meets (issue 36, item 10): a 65 KB Bedrock MOTD is clipped on the
//! `Name:` line; `ogp games FILTER` that matches nothing says so; `ogp master --help` and
//! `ogp list --help` name the DP master protocol.
//!
//! `OGP_BIN=/path/to/ogp` runs the same checks against another build, to compare
//! (`common::ogp_bin`).

use crate::common;

use std::net::UdpSocket;
use std::time::Duration;

use common::*;
use ogp_proto::bedrock::wire::{Ping, Pong};

const LIMIT: Duration = Duration::from_secs(20);

fn ogp(args: &[&str]) -> Ran {
    ogp_run(args, LIMIT)
}

#[test]
fn a_65_kb_bedrock_motd_is_clipped_on_the_name_line() {
    let sock = UdpSocket::bind("127.0.0.1:0").unwrap();
    let port = sock.local_addr().unwrap().port();
    sock.set_read_timeout(Some(Duration::from_secs(20)))
        .unwrap();
    let motd = "m".repeat(65_000);
    std::thread::spawn(move || {
        let mut buf = [0u8; 2048];
        for _ in 0..16 {
            let Ok((n, from)) = sock.recv_from(&mut buf) else {
                break;
            };
            if let Ok(ping) = Ping::decode(&buf[..n]) {
                let pong = Pong {
                    time: ping.time,
                    server_guid: 7,
                    advertisement: format!(
                        "MCPE;{motd};594;1.20.1;1;10;7;world;Survival;1;19132;19133;"
                    )
                    .into(),
                };
                let mut d = Vec::new();
                pong.encode(&mut d);
                let _ = sock.send_to(&d, from);
            }
        }
    });
    let ran = ogp(&["query", "-p", "bedrock", &format!("127.0.0.1:{port}")]);
    assert_eq!(ran.code, Some(0), "{}", ran.describe());
    let out = String::from_utf8_lossy(&ran.stdout);
    let name = out
        .lines()
        .find(|l| l.trim_start().starts_with("Name:"))
        .unwrap_or_else(|| panic!("{out}"));
    let longest = out.lines().map(|l| l.chars().count()).max().unwrap_or(0);
    eprintln!(
        "bedrock: Name: line of {} characters, longest line {longest}",
        name.chars().count()
    );
    assert!(
        name.chars().count() < 220,
        "{} characters",
        name.chars().count()
    );
    assert!(name.ends_with('…'), "{name}");
    assert!(longest < 220, "a line of {longest} characters");
}

#[test]
fn a_games_filter_that_matches_nothing_says_so() {
    let ran = ogp(&["games", "valhiem"]);
    assert_eq!(ran.code, Some(1), "{}", ran.describe());
    assert!(
        ran.stderr.contains("no game matches \"valhiem\"") && ran.stderr.contains("valheim"),
        "{:?}",
        ran.stderr
    );
    // JSON: an empty list, still JSON, and the same note.
    let ran = ogp(&["games", "valhiem", "--json"]);
    assert_eq!(ran.code, Some(1));
    let v: serde_json::Value = serde_json::from_slice(&ran.stdout).unwrap();
    assert_eq!(v, serde_json::json!([]));
    assert!(ran.stderr.contains("no game matches"), "{:?}", ran.stderr);
}

#[test]
fn master_and_list_help_name_the_dp_master_protocol() {
    for cmd in ["master", "list"] {
        let ran = ogp(&[cmd, "--help"]);
        assert_eq!(ran.code, Some(0), "{}", ran.describe());
        let out = String::from_utf8_lossy(&ran.stdout);
        assert!(
            out.contains("DP master protocol"),
            "ogp {cmd} --help:\n{out}"
        );
    }
}
