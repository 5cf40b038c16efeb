//! `ogp serve --no-a2s` and `--no-ogp`: the switched-off protocol is silent, the others
//! still answer (a full, challenged OGP answer; an A2S_INFO after its challenge). And
//! `--threads` / `--recv-buffer`: every protocol answers whichever thread reads it. And
//! `--quake3`: Quake III is silent without it, answers getinfo and getstatus with it.
//!
//! Everything runs on 127.0.0.1; every wait is bounded.

use crate::common;

use std::net::UdpSocket;
use std::time::Duration;

use common::{exchange, exchange_n, serve_with};

const STATE: &str = include_str!("../../../ogp-proto/tests/data/state.json");
const WAIT: Duration = Duration::from_millis(500);

/// The A2S_INFO request without a challenge.
const A2S_INFO: &[u8] = b"\xFF\xFF\xFF\xFFTSource Engine Query\0";
/// The PHP client's OGP challenge probe.
const OGP_PROBE: &[u8] = b"\xFF\xFF\xFF\xFFOGP\0\x03\x01\x00";
/// The PHP client's Default Query body.
const PHP_BODY: [u8; 13] = [
    0xbf, 0x01, 0x8f, 0x9f, 0x0f, 0x1f, 0x3f, 0x3f, 0xbf, 0xbf, 0xbf, 0x01, 0x0f,
];

/// An OGP Default Query with HeadSize 7 (the challenge field only).
fn ogp_query(challenge: u32) -> Vec<u8> {
    let mut d = b"\xFF\xFF\xFF\xFFOGP\0\x07\x01\x12".to_vec();
    d.extend_from_slice(&challenge.to_le_bytes());
    d.extend_from_slice(&PHP_BODY);
    d
}

/// A full OGP answer after the challenge exchange: its datagram, or what went wrong.
fn ogp_full_answer(sock: &UdpSocket) -> Result<Vec<u8>, String> {
    let first = exchange_n(sock, &ogp_query(0), 1, WAIT);
    let [error3] = first.as_slice() else {
        return Err(format!(
            "{} datagrams to a challenge-less query",
            first.len()
        ));
    };
    // Error 3: Type 0xFF, the challenge in the header at bytes 11..15.
    if error3.get(9) != Some(&0xff) {
        return Err(format!("not an error answer: {error3:02x?}"));
    }
    let c = error3
        .get(11..15)
        .and_then(|b| b.try_into().ok())
        .map(u32::from_le_bytes)
        .ok_or("short Error 3")?;
    let answer = exchange_n(sock, &ogp_query(c), 1, WAIT);
    match answer.as_slice() {
        [a] if a.get(9) == Some(&0x01) => Ok(a.clone()),
        other => Err(format!("not one Default Query answer: {other:02x?}")),
    }
}

/// A2S_INFO after its challenge: the INFO reply, or what went wrong.
fn a2s_info(sock: &UdpSocket) -> Result<Vec<u8>, String> {
    let first = exchange_n(sock, A2S_INFO, 1, WAIT);
    let [challenge] = first.as_slice() else {
        return Err(format!("{} datagrams to A2S_INFO", first.len()));
    };
    if challenge.get(4) != Some(&0x41) {
        return Err(format!("not a challenge: {challenge:02x?}"));
    }
    let mut request = A2S_INFO.to_vec();
    request.extend_from_slice(challenge.get(5..9).ok_or("short challenge")?);
    match exchange_n(sock, &request, 1, WAIT).as_slice() {
        [info] if info.get(4) == Some(&0x49) => Ok(info.clone()),
        other => Err(format!("not one INFO reply: {other:02x?}")),
    }
}

#[test]
fn no_a2s_silences_a2s_and_ogp_still_answers() {
    let served = serve_with("no-a2s", STATE, &["--no-a2s"], |s| {
        !exchange(s, OGP_PROBE, Duration::from_millis(300)).is_empty()
    });
    let sock = UdpSocket::bind("127.0.0.1:0").unwrap();
    sock.connect(("127.0.0.1", served.port)).unwrap();
    // every A2S request, with or without a (made-up) challenge, gets silence
    for request in [
        A2S_INFO.to_vec(),
        [A2S_INFO, &[1, 2, 3, 4]].concat(),
        b"\xFF\xFF\xFF\xFFU\xFF\xFF\xFF\xFF".to_vec(),
        b"\xFF\xFF\xFF\xFFV\xFF\xFF\xFF\xFF".to_vec(),
    ] {
        let got = exchange(&sock, &request, WAIT);
        assert!(got.is_empty(), "{request:02x?} answered: {got:02x?}");
    }
    let answer = ogp_full_answer(&sock).unwrap();
    assert!(answer.len() > 100, "{answer:02x?}");
}

#[test]
fn no_ogp_silences_ogp_and_a2s_still_answers() {
    let served = serve_with("no-ogp", STATE, &["--no-ogp"], |s| {
        !exchange(s, A2S_INFO, Duration::from_millis(300)).is_empty()
    });
    let sock = UdpSocket::bind("127.0.0.1:0").unwrap();
    sock.connect(("127.0.0.1", served.port)).unwrap();
    for request in [OGP_PROBE.to_vec(), ogp_query(0)] {
        let got = exchange(&sock, &request, WAIT);
        assert!(got.is_empty(), "{request:02x?} answered: {got:02x?}");
    }
    let info = a2s_info(&sock).unwrap();
    assert!(info.len() > 20, "{info:02x?}");
}

/// `--threads 3 --recv-buffer 1048576`: three SO_REUSEPORT sockets on the one port; every
/// protocol still answers, from many client ports (spread over the threads).
#[test]
fn threads_and_recv_buffer_serve_every_protocol() {
    let served = serve_with(
        "threads",
        STATE,
        &["--threads", "3", "--recv-buffer", "1048576"],
        |s| !exchange(s, OGP_PROBE, Duration::from_millis(300)).is_empty(),
    );
    for _ in 0..12 {
        // A new port for each exchange: the kernel hashes the 4-tuple onto a thread.
        let sock = UdpSocket::bind("127.0.0.1:0").unwrap();
        sock.connect(("127.0.0.1", served.port)).unwrap();
        let answer = ogp_full_answer(&sock).unwrap();
        assert!(answer.len() > 100, "{answer:02x?}");
        let sock = UdpSocket::bind("127.0.0.1:0").unwrap();
        sock.connect(("127.0.0.1", served.port)).unwrap();
        let info = a2s_info(&sock).unwrap();
        assert!(info.len() > 20, "{info:02x?}");
    }
}

/// `getstatus`, as qstat and OpenArena's browser send it.
const Q3_GETSTATUS: &[u8] = b"\xFF\xFF\xFF\xFFgetstatus";

/// `getinfo CHALLENGE`.
fn q3_getinfo(challenge: &str) -> Vec<u8> {
    [&b"\xFF\xFF\xFF\xFFgetinfo "[..], challenge.as_bytes()].concat()
}

/// Without `--quake3` neither Quake III request is answered (the protocol has no server
/// challenge, so it is off by default), while OGP still answers on the same port.
#[test]
fn quake3_is_off_by_default() {
    let served = serve_with("q3-off", STATE, &[], |s| {
        !exchange(s, OGP_PROBE, Duration::from_millis(300)).is_empty()
    });
    let sock = UdpSocket::bind("127.0.0.1:0").unwrap();
    sock.connect(("127.0.0.1", served.port)).unwrap();
    for request in [
        Q3_GETSTATUS.to_vec(),
        b"\xFF\xFF\xFF\xFFgetstatus abc".to_vec(),
        q3_getinfo("xyz"),
    ] {
        let got = exchange(&sock, &request, WAIT);
        assert!(got.is_empty(), "{request:02x?} answered: {got:02x?}");
    }
    let log = std::fs::read_to_string(served.state_path().with_file_name("serve.log")).unwrap();
    assert!(log.contains("Quake III off"), "{log}");
}

/// `--quake3`: `getinfo` echoes the challenge; `getstatus` carries the served host name,
/// map and players (score, ping, name); the startup line names the amplifier and its
/// budgets, as given by the flags.
#[test]
fn quake3_flag_answers_getinfo_and_getstatus() {
    let served = serve_with(
        "q3-on",
        STATE,
        &[
            "--quake3",
            "--quake3-budget",
            "20000",
            "--quake3-total-budget",
            "300000",
        ],
        |s| !exchange(s, Q3_GETSTATUS, Duration::from_millis(300)).is_empty(),
    );
    let sock = UdpSocket::bind("127.0.0.1:0").unwrap();
    sock.connect(("127.0.0.1", served.port)).unwrap();

    let info = exchange_n(&sock, &q3_getinfo("q3c-77"), 1, WAIT);
    let [info] = info.as_slice() else {
        panic!("{} datagrams to getinfo", info.len())
    };
    let info = ogp_proto::quake3::decode_reply(info).unwrap().reply;
    assert_eq!(info.kind, ogp_proto::quake3::ReplyKind::Info);
    assert_eq!(info.get("challenge"), Some("q3c-77"));
    assert_eq!(info.get("hostname"), Some("Demo Arena #1 – Ünïcödé ✓"));
    assert_eq!(info.get("clients"), Some("3"));

    let status = exchange_n(&sock, Q3_GETSTATUS, 1, WAIT);
    let [status] = status.as_slice() else {
        panic!("{} datagrams to getstatus", status.len())
    };
    let status = ogp_proto::quake3::decode_reply(status).unwrap().reply;
    assert_eq!(status.kind, ogp_proto::quake3::ReplyKind::Status);
    assert_eq!(status.get("sv_hostname"), Some("Demo Arena #1 – Ünïcödé ✓"));
    assert_eq!(status.get("mapname"), Some("Harbor"));
    assert_eq!(status.get("sv_maxclients"), Some("26"));
    assert_eq!(status.get("sv_privateClients"), Some("2"));
    assert_eq!(status.get("timelimit"), Some("20"));
    let players: Vec<(&str, &str, &str)> = status
        .players
        .iter()
        .map(|p| (p.name.as_str(), p.before[0].as_str(), p.before[1].as_str()))
        .collect();
    assert_eq!(
        players,
        [
            ("Alice", "1200", "35"),
            ("Bob the Bot", "-200", "0"),
            ("Zoë", "0", "112")
        ]
    );

    let log = std::fs::read_to_string(served.state_path().with_file_name("serve.log")).unwrap();
    assert!(
        log.contains("Quake III on (no challenge: an amplifier, a getstatus reply up to 107x its 13-byte request, bounded to 20000 bytes/s per source and 300000 bytes/s in all)"),
        "{log}"
    );
    assert!(log.contains("GameSpy v3, Quake III;"), "{log}");
}
