//! How soon `ogp master` finds what a newly registered server speaks (issue 36, item
//! 11): an `ogp serve` that sends its OGP uplink at start answers A2S too, and must be
//! on the master's Valve list (A2S servers only) within 1 s of its start. Before, the
//! first poll's discovery was written only when its slowest protocol had given up, and
//! the list read the database once a second: 5–6 s.
//!
//! `cargo test -p ogp-cli --features master --test all master_discovery:: -- --nocapture` prints the latencies.

use crate::common;

use std::net::{Ipv4Addr, SocketAddrV4, UdpSocket};
use std::time::{Duration, Instant};

use common::master::{ogp_ready, on_valve_list, post_server, state, Master};
use common::{serve_with, TempDir};

/// Registration (the server's start: its uplink goes out as it starts) to the Valve
/// list, for three servers one after another: the median within 1 s, each within 3 s.
#[test]
fn a_registered_a2s_server_is_on_the_valve_list_within_a_second() {
    let dir = TempDir::new("master-discovery");
    let db = format!("sqlite://{}", dir.0.join("m.db").display());
    let m = Master::with_config(
        &dir.0,
        "discovery",
        "allow_private = true\n",
        &["--db", &db],
    );
    let client = UdpSocket::bind("127.0.0.3:0").unwrap();
    client.connect(m.udp).unwrap();
    let master = m.udp.to_string();
    let mut took = Vec::new();
    let mut servers = Vec::new();
    for i in 0..3 {
        let t = Instant::now();
        let s = serve_with(
            &format!("discovery-{i}"),
            &state(&format!("Discovery {i}")),
            &["--master", &master],
            ogp_ready,
        );
        let addr = SocketAddrV4::new(Ipv4Addr::LOCALHOST, s.port);
        // 40 requests a second at most: within the list's byte budget per source
        while !on_valve_list(&client, addr) {
            assert!(
                t.elapsed() < Duration::from_secs(15),
                "{addr} not on the Valve list after 15 s:\n{}",
                m.log_text()
            );
            std::thread::sleep(Duration::from_millis(25));
        }
        took.push(t.elapsed());
        servers.push(s);
    }
    eprintln!("start of `ogp serve --master` to the Valve list: {took:?}");
    // The clock starts at the spawn of `ogp serve`, so a slow process start on a loaded
    // machine (the test command runs three binaries and the fuzz build at once) can add to
    // one of them: the median is held to 1 s, each to 3 s. Before, each took 6.0 s.
    let mut sorted = took.clone();
    sorted.sort();
    assert!(
        sorted[1] < Duration::from_secs(1),
        "median not listed within 1 s: {took:?}"
    );
    for t in &took {
        assert!(
            *t < Duration::from_secs(3),
            "not listed within 3 s: {took:?}"
        );
    }
}

/// A discovery poll's queries go out together: a silent server added through the write
/// API gets the first query of every datagram protocol within 100 ms of the first one
/// (the retries come later). Before, the scan engine ran two queries to one address at
/// a time (one per socket): four kinds arrived within 3 s, A2S's 2.33 s after the
/// first, when OGP's had given up.
#[test]
fn the_discovery_queries_of_every_protocol_go_out_together() {
    let dir = TempDir::new("master-discovery-together");
    let db = format!("sqlite://{}", dir.0.join("m.db").display());
    let token = "test-token-0123456789abcdef";
    let conf = format!("allow_private = true\napi_token = \"{token}\"\n");
    let m = Master::with_config(&dir.0, "together", &conf, &["--db", &db]);
    let silent = UdpSocket::bind("127.0.0.1:0").unwrap();
    let addr = silent.local_addr().unwrap().to_string();
    let (code, text) = post_server(&m, token, &addr, "a2s");
    assert_eq!(code, 201, "{text}");
    // the first datagram of each kind (its first 6 bytes: each protocol's query), and
    // when it came
    let mut firsts: Vec<(Vec<u8>, Instant)> = Vec::new();
    let t = Instant::now();
    let mut buf = [0u8; 2048];
    silent
        .set_read_timeout(Some(Duration::from_millis(100)))
        .unwrap();
    while t.elapsed() < Duration::from_secs(3) {
        if let Ok(n) = silent.recv(&mut buf) {
            // GameSpy v3's challenge and its later challenge-less query are one kind, and
            // so are Unreal 2's info query and its later steps (`79 00 00 00` + the step)
            // and NetQuake's server-info requests (a control packet `80 00`, asking for
            // Quake on one attempt and Hexen II on the next)
            let len = if buf[..n].starts_with(&[0xfe, 0xfd]) || buf[..n].starts_with(&[0x80, 0]) {
                2
            } else if buf[..n].starts_with(&[0x79, 0, 0, 0]) {
                4
            } else {
                6
            };
            let kind = buf[..n.min(len)].to_vec();
            if !firsts.iter().any(|(k, _)| *k == kind) {
                firsts.push((kind, Instant::now()));
            }
        }
    }
    assert!(
        firsts.len() >= 4,
        "{} kinds of query: {firsts:?}",
        firsts.len()
    );
    for (k, at) in &firsts {
        eprintln!("{k:02x?} at {:?}", *at - firsts[0].1);
    }
    let spread = firsts.last().unwrap().1 - firsts[0].1;
    eprintln!(
        "{} kinds of discovery query, the last {spread:?} after the first",
        firsts.len()
    );
    assert!(spread < Duration::from_millis(100), "{spread:?}");
}
