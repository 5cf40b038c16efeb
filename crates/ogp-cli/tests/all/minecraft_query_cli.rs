//! Minecraft's UDP query (`enable-query=true`) is read by `ogp query -p gamespy3`: a
//! loopback server that behaves as the vanilla server does (the `09` handshake answered
//! with the challenge token as a decimal string, the session id echoed with the high 4
//! bits of every byte cleared, a full stat only for a 15-byte request: type `00`, session
//! id, token, 4 padding bytes) answers with a real Minecraft full stat (GameQ's capture,
//! `splitnum\0\x80\0`, the key/value section, `\x01player_\0\0` and the names).

use crate::common;

use std::net::UdpSocket;
use std::process::Command;
use std::time::Duration;

use common::{run, BIN};
use serde_json::Value;

const TOKEN: u32 = 9_513_307;

/// Full stats answered, and every request seen.
type Served = std::thread::JoinHandle<(usize, Vec<Vec<u8>>)>;

/// Serves one query.
fn vanilla_server(capture: &str) -> (u16, Served) {
    let path = format!(
        "{}/../ogp-proto/tests/data/gamespy3/{capture}.json",
        env!("CARGO_MANIFEST_DIR")
    );
    let json: Value = serde_json::from_slice(&std::fs::read(path).unwrap()).unwrap();
    let packets = ogp_testkit::datagrams_of(&json, "gs3");
    let sock = UdpSocket::bind("127.0.0.1:0").unwrap();
    let port = sock.local_addr().unwrap().port();
    sock.set_read_timeout(Some(Duration::from_secs(20)))
        .unwrap();
    let handle = std::thread::spawn(move || {
        let mut buf = [0u8; 2048];
        let mut seen = Vec::new();
        let mut full = 0;
        for _ in 0..16 {
            let Ok((n, from)) = sock.recv_from(&mut buf) else {
                break;
            };
            let d = buf[..n].to_vec();
            seen.push(d.clone());
            if n < 7 || d[..2] != [0xfe, 0xfd] {
                continue;
            }
            let sid: Vec<u8> = d[3..7].iter().map(|b| b & 0x0f).collect();
            match d[2] {
                9 => {
                    let mut r = vec![9];
                    r.extend_from_slice(&sid);
                    r.extend_from_slice(format!("{TOKEN}\0").as_bytes());
                    sock.send_to(&r, from).unwrap();
                }
                0 if n == 15 && d[7..11] == TOKEN.to_be_bytes() => {
                    for p in &packets {
                        let mut p = p.clone();
                        p[1..5].copy_from_slice(&sid);
                        sock.send_to(&p, from).unwrap();
                    }
                    full += 1;
                    break;
                }
                _ => {}
            }
        }
        (full, seen)
    });
    (port, handle)
}

#[test]
fn gamespy3_reads_a_vanilla_minecraft_full_stat() {
    let (port, server) = vanilla_server("gameq-minecraft-2");
    let r = run(
        Command::new(BIN).args([
            "query",
            "--json",
            "--timeout",
            "3000",
            "-p",
            "gamespy3",
            &format!("127.0.0.1:{port}"),
        ]),
        Duration::from_secs(30),
    );
    assert_eq!(r.code, Some(0), "{}", r.describe());
    let v: Value = serde_json::from_slice(&r.stdout).unwrap();
    let (full, seen) = server.join().unwrap();
    assert_eq!(full, 1, "requests: {seen:02x?}");
    assert_eq!(v["protocol"], "gamespy3");
    let s = &v["status"];
    // Minecraft names its keys `map` and `version` (not `mapname`, `gamever`)
    assert_eq!(s["map"]["name"], "spawnisland", "{s}");
    assert_eq!(s["game_version"], "1.8", "{s}");
    assert!(s["rules"].get("map").is_none(), "{s}");
    assert_eq!(s["connect_port"], 25565, "{s}");
    assert_eq!(s["player_count"], 15, "{s}");
    assert_eq!(s["slot_max"], 60, "{s}");
    let rules = &s["rules"];
    assert_eq!(rules["game_id"], "MINECRAFT", "{s}");
    assert_eq!(s["game_type"], "SMP", "{s}");
    assert_eq!(rules["hostip"], "74.50.111.251", "{s}");
    assert!(
        s["host_name"].as_str().unwrap_or("").contains("Skyblock"),
        "{s}"
    );
    let names: Vec<&str> = s["players"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| p["name"].as_str().unwrap())
        .collect();
    assert_eq!(names.len(), 15, "{s}");
    assert_eq!(names[0], "Acefire97");
}
