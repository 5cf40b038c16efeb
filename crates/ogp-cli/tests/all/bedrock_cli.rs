//! `ogp query`, `ogp scan` and `ogp decode` of Minecraft: Bedrock servers, against a
//! loopback server that answers every unconnected ping with a real server's pong (the
//! captures of `ogp-proto/tests/data/bedrock/`, our ping's time written in as a server
//! echoes it); by protocol name and by auto-detection. With `OGP_INTEROP=1`, mcstatus
//! (the reference Python client) reads the same server and must agree field by field.

use crate::common;

use std::net::UdpSocket;
use std::process::Command;
use std::thread::JoinHandle;
use std::time::Duration;

use common::{ogp_run, out, run, run_with_input, Ran, BIN};
use ogp_proto::bedrock::wire::Ping;
use serde_json::Value;

const DATA: &str = concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/../ogp-proto/tests/data/bedrock"
);
const CAPTURES: [&str; 4] = [
    "bds_1_26_3.bin",
    "bds_1_14_21.bin",
    "lan_world_1_17_20.bin",
    "mcstatus_rainbow_motd.bin",
];
const LIMIT: Duration = Duration::from_secs(30);

fn ogp(args: &[&str]) -> Ran {
    ogp_run(args, LIMIT)
}

/// A Bedrock server on loopback: every unconnected ping is answered with `capture`, the
/// ping's time in bytes 1–8; other datagrams (other protocols' probes) are ignored. It
/// stops after `pings` answers, 64 datagrams, or 20 s of silence. Returns the port, and
/// the thread, which gives the number of pings answered.
fn bedrock_server(capture: &str, pings: usize) -> (u16, JoinHandle<usize>) {
    let sock = UdpSocket::bind("127.0.0.1:0").unwrap();
    let port = sock.local_addr().unwrap().port();
    let pong = std::fs::read(format!("{DATA}/{capture}")).unwrap();
    sock.set_read_timeout(Some(Duration::from_secs(20)))
        .unwrap();
    let handle = std::thread::spawn(move || {
        let mut buf = [0u8; 2048];
        let mut answered = 0;
        for _ in 0..64 {
            if answered == pings {
                break;
            }
            let Ok((n, from)) = sock.recv_from(&mut buf) else {
                break;
            };
            if let Ok(ping) = Ping::decode(&buf[..n]) {
                let mut reply = pong.clone();
                reply[1..9].copy_from_slice(&ping.time.to_be_bytes());
                sock.send_to(&reply, from).unwrap();
                answered += 1;
            }
        }
        answered
    });
    (port, handle)
}

fn query_json(args: &[&str], target: &str) -> Value {
    let mut all = vec!["query", "--json", "--timeout", "3000"];
    all.extend_from_slice(args);
    all.push(target);
    let r = ogp(&all);
    assert_eq!(r.code, Some(0), "{args:?}: {}", r.describe());
    serde_json::from_str(&out(&r)).unwrap()
}

#[test]
fn bedrock_servers_are_read_by_protocol_name_and_by_auto_detection() {
    // by protocol, by auto-detection, and by the games catalogue's name alone
    for args in [
        &["-p", "bedrock"][..],
        &["-p", "mcpe"][..],
        &[][..],
        &["--game", "minecraftbe"][..],
    ] {
        let (port, server) = bedrock_server("bds_1_26_3.bin", 1);
        let v = query_json(args, &format!("127.0.0.1:{port}"));
        assert_eq!(v["protocol"], "bedrock", "{v}");
        assert_eq!(v["game_id"], "minecraftbe", "{v}");
        assert_eq!(v["game_rule"], "by_protocol", "{v}");
        let s = &v["status"];
        assert_eq!(s["host_name"], "Dedicated Server", "{s}");
        assert_eq!(s["game_name"], "Minecraft: Bedrock Edition", "{s}");
        assert_eq!(s["game_version"], "1.26.3", "{s}");
        assert_eq!(s["map"]["name"], "Bedrock level", "{s}");
        assert_eq!(s["slot_max"], 10, "{s}");
        assert_eq!(s["connect_port"], 19132, "{s}");
        assert_eq!(server.join().unwrap(), 1);
    }
}

#[test]
fn text_output_strips_codes_and_scan_reads_every_capture() {
    let (port, server) = bedrock_server("mcstatus_rainbow_motd.bin", 1);
    let r = ogp(&["query", "-p", "bedrock", &format!("127.0.0.1:{port}")]);
    assert_eq!(r.code, Some(0), "{}", r.describe());
    assert!(out(&r).contains("GayBowser"), "{}", out(&r));
    server.join().unwrap();

    // ogp scan: one line per server, through the shared machine registry
    let servers: Vec<_> = CAPTURES.iter().map(|c| bedrock_server(c, 1)).collect();
    let list: String = servers
        .iter()
        .map(|(port, _)| format!("bedrock 127.0.0.1:{port}\n"))
        .collect();
    let r = run_with_input(
        Command::new(BIN).args(["scan", "--json", "--timeout", "3000", "-"]),
        Some(list.as_bytes()),
        LIMIT,
    );
    assert_eq!(r.code, Some(0), "{}", r.describe());
    let lines: Vec<Value> = out(&r)
        .lines()
        .filter_map(|l| serde_json::from_str(l).ok())
        .filter(|v: &Value| v.get("status").is_some())
        .collect();
    let mut names: Vec<String> = lines
        .iter()
        .map(|v| v["status"]["host_name"].as_str().unwrap_or("").to_string())
        .collect();
    names.sort();
    assert_eq!(
        names,
        [
            "Dedicated Server",
            "Dedicated Server",
            "FancyFlameX",
            "GayBowser"
        ],
        "{}",
        out(&r)
    );
    for (_, s) in servers {
        assert_eq!(s.join().unwrap(), 1);
    }
}

#[test]
fn decode_reads_pings_and_pongs() {
    let ping = "01000000000000002a00ffff00fefefefefdfdfdfd123456780000000000000007";
    let pong = format!("{DATA}/lan_world_1_17_20.bin");
    let r = ogp(&["decode", "--json", ping, &pong]);
    assert_eq!(r.code, Some(0), "{}", r.describe());
    let lines: Vec<Value> = out(&r)
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(lines.len(), 2, "{}", out(&r));
    assert_eq!(lines[0]["protocol"], "bedrock");
    assert_eq!(lines[0]["kind"], "query");
    assert_eq!(lines[0]["time"], 42);
    assert_eq!(lines[0]["client_guid"], 7);
    assert_eq!(lines[1]["kind"], "answer");
    assert_eq!(lines[1]["status"]["map"]["name"], "我的世界");
    assert_eq!(lines[1]["status"]["rules"]["port_v6"], "54393");
    let text = ogp(&["decode", &pong]);
    assert_eq!(text.code, Some(0));
    assert!(
        out(&text).contains("Bedrock unconnected pong: 12 fields"),
        "{}",
        out(&text)
    );
    // a truncated pong is refused with the field and offset
    let cut = ogp(&["decode", "-p", "bedrock", "1c0000000000000000"]);
    assert_eq!(cut.code, Some(1), "{}", cut.describe());
    assert!(
        cut.stderr.contains("server GUID at byte 9"),
        "{}",
        cut.stderr
    );
}

/// mcstatus's `BedrockServer(host, port).status()` and `ogp query -p bedrock --json`,
/// against the same server answering with each capture, agree field by field.
#[test]
fn mcstatus_reads_every_capture_as_we_do() {
    if !common::enabled("mcstatus_reads_every_capture_as_we_do") {
        return;
    }
    let py = common::venv_python("mcstatus", "mcstatus", common::MCSTATUS);
    let script = common::script("tests/interop/mcstatus_bedrock.py");
    let mut m = common::Report::default();
    for capture in CAPTURES {
        let (port, server) = bedrock_server(capture, 2);
        let theirs = run(
            Command::new(&py).args([
                script.to_str().unwrap(),
                "127.0.0.1",
                &port.to_string(),
                "5",
            ]),
            common::CLIENT_LIMIT,
        );
        let theirs = common::parse_json(&theirs, "mcstatus", capture);
        assert!(theirs.get("error").is_none(), "{capture}: {theirs}");
        let ours = query_json(&["-p", "bedrock"], &format!("127.0.0.1:{port}"));
        assert_eq!(server.join().unwrap(), 2, "{capture}");
        let s = &ours["status"];
        let rule = |k: &str| s["rules"][k].clone();
        let f = |what: &str| format!("{capture}: {what}");
        m.eq(f("edition"), rule("edition"), theirs["brand"].clone());
        m.eq(f("MOTD as sent"), rule("motd"), theirs["motd_raw"].clone());
        m.eq(
            f("MOTD plain"),
            s["host_name"].clone(),
            theirs["motd_plain"].clone(),
        );
        m.eq(f("version"), rule("version"), theirs["version"].clone());
        m.eq(
            f("protocol"),
            rule("protocol")
                .as_str()
                .and_then(|p| p.parse::<i64>().ok()),
            theirs["protocol"].as_i64(),
        );
        m.eq(
            f("online"),
            s["player_count"].clone(),
            theirs["online"].clone(),
        );
        m.eq(f("max"), s["slot_max"].clone(), theirs["max"].clone());
        m.eq(
            f("level name"),
            rule("sub_motd"),
            theirs["map_name"].clone(),
        );
        m.eq(
            f("game mode"),
            rule("game_mode"),
            theirs["gamemode"].clone(),
        );
    }
    m.finish("mcstatus");
}
