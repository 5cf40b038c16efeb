//! The OpenArena starter works: the server answers on the port it reports, with the
//! host name it was given, heartbeats to its master, and stops on SIGTERM.

use std::net::UdpSocket;
use std::time::Duration;

use ogp_testkit::gameservers::{OpenArena, OpenArenaConfig};
use ogp_testkit::interop;

#[test]
fn openarena_starts_answers_heartbeats_and_stops() {
    if !interop::enabled("openarena_starts_answers_heartbeats_and_stops") {
        return;
    }
    let master = UdpSocket::bind("127.0.0.1:0").unwrap();
    master
        .set_read_timeout(Some(Duration::from_secs(60)))
        .unwrap();
    let config = OpenArenaConfig {
        hostname: "^1Kit ^7OA".into(),
        master: Some(master.local_addr().unwrap()),
        ..OpenArenaConfig::default()
    };
    let mut server = OpenArena::start(&config);
    let mut buf = [0u8; 4096];
    let (n, from) = master.recv_from(&mut buf).expect("a heartbeat within 60 s");
    assert_eq!(&buf[..n], b"\xff\xff\xff\xffheartbeat QuakeArena-1\n");
    assert_eq!(from, server.addr());

    let q = UdpSocket::bind("127.0.0.1:0").unwrap();
    q.set_read_timeout(Some(Duration::from_secs(5))).unwrap();
    q.send_to(b"\xff\xff\xff\xffgetinfo xyz", server.addr())
        .unwrap();
    let (n, _) = q.recv_from(&mut buf).unwrap();
    let info = String::from_utf8_lossy(&buf[..n]);
    assert!(info.contains("\\hostname\\^1Kit ^7OA"), "{info}");
    assert!(info.ends_with("\\challenge\\xyz"), "{info}");

    assert!(server.terminate(), "still running 20 s after SIGTERM");
}
