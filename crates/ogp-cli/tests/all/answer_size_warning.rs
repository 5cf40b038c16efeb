//! A missing OGP section is blamed on the server's answer size limit only when the
//! answer's size says so (issue 29, item 9). A fake server on loopback, like the
//! reference server, answers in one datagram of about 3 KiB without the sections it does
//! not support (teams, rules, add-ons, limits): `ogp query` (splitting offered, the
//! default) says nothing of a size limit. Asked for no splitting (`--split 0`), one
//! datagram over 2 KiB is what a size limit may have cut, and the warning stays.

use crate::common;

use std::net::UdpSocket;
use std::process::Command;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::Duration;

use common::*;
use ogp_proto::ogp::{
    decode_query_header, encode_answer, AnswerOptions, DefaultQuery, Header, PacketType,
};
use ogp_proto::{Player, Status};

const LIMIT: Duration = Duration::from_secs(30);

/// Server info and 70 players, nothing else: about 3 KiB.
fn status() -> Status {
    let mut s = Status::default();
    s.host_name = Some("no teams, rules, add-ons or limits here".into());
    s.game_name = Some("reference".into());
    s.slot_max = Some(64);
    s.players = Some(
        (0..70)
            .map(|i| {
                let mut p = Player::default();
                p.name = Some(format!("player {i:02} with a name of some length").into());
                p.score = Some(i);
                p.ping = Some(30);
                p
            })
            .collect(),
    );
    s
}

#[test]
fn a_3_kib_answer_without_unsupported_sections_is_not_blamed_on_a_size_limit() {
    let sock = UdpSocket::bind("127.0.0.1:0").unwrap();
    let target = sock.local_addr().unwrap().to_string();
    let stop = Arc::new(AtomicBool::new(false));
    let flag = Arc::clone(&stop);
    let sizes = Arc::new(std::sync::Mutex::new(Vec::new()));
    let seen = Arc::clone(&sizes);
    let server = std::thread::spawn(move || {
        sock.set_read_timeout(Some(Duration::from_millis(50)))
            .unwrap();
        let status = status();
        let mut buf = [0u8; 2048];
        while !flag.load(Ordering::Relaxed) {
            let Ok((n, from)) = sock.recv_from(&mut buf) else {
                continue;
            };
            let Ok((q, _)) = decode_query_header(&buf[..n]) else {
                continue;
            };
            // one datagram whatever was asked, challenge and RequestID echoed
            let h = Header {
                challenge: q.challenge,
                request_id: q.request_id,
                ..Header::answer(PacketType::DEFAULT_QUERY).with_utf8(q.utf8())
            };
            let mut d = Vec::new();
            let opts = AnswerOptions {
                utf8: q.utf8(),
                colors: false,
            };
            encode_answer(&h, &status, &DefaultQuery::everything(), &opts, &mut d);
            seen.lock().unwrap().push(d.len());
            let _ = sock.send_to(&d, from);
        }
    });
    let query = |extra: &[&str]| {
        let ran = run(
            Command::new(BIN)
                .args(["query", &target, "-p", "ogp", "--json", "--timeout", "2000"])
                .args(extra)
                .env_remove("OGP_LOG")
                .env_remove("RUST_LOG"),
            LIMIT,
        );
        assert_eq!(ran.code, Some(0), "{}", ran.describe());
        let v = parse_json(&ran, "ogp query --json", &target);
        assert_eq!(v["status"]["players"].as_array().map(Vec::len), Some(70));
        (ran, v)
    };
    let (ran, v) = query(&[]);
    let bytes = v["bytes"].as_u64().unwrap();
    assert!(
        (2100..6000).contains(&bytes) && v["datagrams"] == 1,
        "{}",
        ran.describe()
    );
    assert_eq!(v["warnings"], serde_json::json!([]), "{}", ran.describe());
    assert!(!ran.stderr.contains("size limit"), "{}", ran.describe());
    // no splitting asked for: a size limit is what may have cut one datagram
    let (ran, v) = query(&["--split", "0"]);
    let warned = v["warnings"].to_string() + &ran.stderr;
    assert!(warned.contains("answer size limit"), "{}", ran.describe());
    stop.store(true, Ordering::Relaxed);
    server.join().unwrap();
    eprintln!("answers sent: {:?} bytes", sizes.lock().unwrap());
}
