//! A responder without answering threads of its own uses one descriptor a port: its
//! timed sends (uplinks, heartbeats) share the answering task's socket. With a copy of
//! each for them, a game (or a benchmark) on thousands of ports needed twice as many
//! descriptors, and met the open-file limit at half the ports.
//!
//! A test binary of its own: it counts the process's open descriptors, which the other
//! tests would change under it.

#![cfg(target_os = "linux")]

use std::collections::HashSet;
use std::net::SocketAddr;
use std::time::Duration;

use ogp_net::responder::{self, NetConfig};
use ogp_net::StatusCell;
use ogp_proto::ogp::uplink::UplinkConfig;
use ogp_proto::responder::{Listener, ResponderConfig};
use ogp_proto::Status;

fn open_descriptors() -> usize {
    std::fs::read_dir("/proc/self/fd").map_or(0, Iterator::count)
}

#[tokio::test]
async fn without_threads_a_port_is_one_descriptor_and_every_port_uplinks_at_start() {
    // 100 uplinks at once fit the receive buffer of a default socket (300 did not
    // always, on a loaded machine: the burst is sent before the last port is bound)
    const PORTS: usize = 100;
    let master = std::net::UdpSocket::bind("127.0.0.1:0").unwrap();
    master
        .set_read_timeout(Some(Duration::from_secs(5)))
        .unwrap();
    let mut config = ResponderConfig::default();
    config.ogp_uplink = Some(UplinkConfig::new(vec![master.local_addr().unwrap()]));
    // the master reads from before the first port is bound
    let from = std::thread::spawn(move || {
        let mut from = HashSet::new();
        let mut buf = [0u8; 64];
        while from.len() < PORTS {
            match master.recv_from(&mut buf) {
                Ok((_, a)) => {
                    from.insert(a);
                }
                Err(_) => break,
            }
        }
        from
    });
    let listeners = vec![(SocketAddr::from(([127, 0, 0, 1], 0)), Listener::Standard); PORTS];
    let before = open_descriptors();
    let handle = responder::spawn_many_with(
        &listeners,
        StatusCell::new(Status::default()),
        config,
        NetConfig::default().with_threads(0),
    )
    .await
    .unwrap();
    let added = open_descriptors().saturating_sub(before);
    assert!(
        (PORTS..PORTS + 20).contains(&added),
        "{added} descriptors for {PORTS} ports (a copy of each for the timed sends: {})",
        2 * PORTS
    );
    // the uplink of each port at start, from that port (sent on the shared socket)
    let ports: HashSet<SocketAddr> = handle.local_addrs().iter().copied().collect();
    assert_eq!(ports.len(), PORTS);
    let from = tokio::task::spawn_blocking(move || from.join().unwrap())
        .await
        .unwrap();
    assert_eq!(from, ports, "an uplink from every port");
    handle.shutdown().await.unwrap();
}
