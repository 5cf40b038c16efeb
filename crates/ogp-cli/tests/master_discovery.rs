//! How soon `ogp master` finds what a newly registered server speaks (issue 36, item
//! 11): an `ogp serve` that sends its OGP uplink at start answers A2S too, and must be
//! on the master's Valve list (A2S servers only) within 1 s of its start. Before, the
//! first poll's discovery was written only when its slowest protocol had given up, and
//! the list read the database once a second: 5–6 s.
//!
//! `cargo test -p ogp-cli --test master_discovery -- --nocapture` prints the latencies.

mod common;

use std::net::{Ipv4Addr, SocketAddrV4, UdpSocket};
use std::time::{Duration, Instant};

use common::master::{ogp_ready, state, Master};
use common::{serve_with, TempDir};
use ogp_proto::master::valve::{decode_page, ListRequest};

/// Whether the master's Valve list holds `server` (one page: the test lists few).
fn on_valve_list(client: &UdpSocket, server: SocketAddrV4) -> bool {
    let mut req = Vec::new();
    ListRequest::first(0xff, "").encode(&mut req);
    client.send(&req).unwrap();
    let mut buf = [0u8; 2048];
    client
        .set_read_timeout(Some(Duration::from_millis(200)))
        .unwrap();
    match client.recv(&mut buf) {
        Ok(n) => decode_page(&buf[..n])
            .map(|p| p.servers.contains(&server))
            .unwrap_or(false),
        Err(_) => false,
    }
}

/// Registration (the server's start: its uplink goes out as it starts) to the Valve
/// list, for three servers one after another; each within 1 s.
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
    for t in &took {
        assert!(
            *t < Duration::from_secs(1),
            "not listed within 1 s: {took:?}"
        );
    }
}
