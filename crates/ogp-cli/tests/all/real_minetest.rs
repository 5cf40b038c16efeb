//! Minetest / Luanti, proven on a real server (issue #38): Debian's `minetestserver`
//! 5.6 started on loopback (`ogp_testkit::gameservers::minetest`), its handshake made by
//! `ogp query -p minetest`: the server's protocol version comes back, and the server's
//! own log says that it added our peer, took our `TOSERVER_INIT`, and deleted the peer
//! at once on our DISCO (`timeout=0`), not after its timeout.
//!
//! No reader here reads a Minetest server (gamedig and the others read only the HTTP
//! server list): the server's log is the second witness.
//!
//! Runs only with `OGP_INTEROP=1`; a missing server fails (scripts/install-gameservers.sh
//! installs it).

use crate::common;

use std::time::Duration;

use common::*;
use ogp_testkit::gameservers::minetest::{Minetest, MinetestConfig};

#[test]
fn ogp_query_shakes_hands_with_a_real_minetest_server_and_lets_go() {
    if !enabled("ogp_query_shakes_hands_with_a_real_minetest_server_and_lets_go") {
        return;
    }
    let t0 = std::time::Instant::now();
    let mut server = Minetest::start(&MinetestConfig::new("ogp mt"));
    eprintln!(
        "minetestserver started in {:.2} s",
        t0.elapsed().as_secs_f64()
    );
    let target = server.addr().to_string();
    let ran = ogp_run(
        &["query", "--json", "-p", "minetest", &target],
        Duration::from_secs(20),
    );
    let v = parse_json(&ran, "ogp query", &target);
    eprintln!("handshake done at {:.2} s: {v}", t0.elapsed().as_secs_f64());
    assert_eq!(v["ok"], true, "{v}");
    assert_eq!(v["protocol"], "minetest", "{v}");
    let s = &v["status"];
    assert_eq!(s["game_name"], "Minetest", "{s}");
    // Minetest 5.6's newest protocol
    assert_eq!(s["rules"]["protocol"], "41", "{s}");
    assert_eq!(s["rules"]["serialization"], "29", "{s}");

    let init = server
        .wait_for_line(Duration::from_secs(5), |l| {
            l.contains("Got TOSERVER_INIT from 127.0.0.1")
        })
        .expect("the server took our TOSERVER_INIT");
    let peer = init
        .rsplit("peer_id=")
        .next()
        .and_then(|p| p.trim_end_matches(')').parse::<u16>().ok())
        .expect("a peer id in the log");
    let chosen = server
        .wait_for_line(Duration::from_secs(5), |l| l.contains("chosen: "))
        .expect("the server chose a protocol");
    assert!(chosen.ends_with("chosen: 41"), "{chosen}");
    let gone = format!("deletingPeer(): peer->id={peer}, timeout=0");
    let freed = server.wait_for_line(Duration::from_secs(5), |l| l.contains(&gone));
    assert!(
        freed.is_some(),
        "the server did not free peer {peer} on our DISCO; log:\n{}",
        server.log().join("\n")
    );
}
