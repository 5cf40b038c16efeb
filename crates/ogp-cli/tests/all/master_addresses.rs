//! The addresses `ogp master` takes (issue 36, item 1): the write API and `[[server]]`
//! tables took IPv6 forms that reach internal IPv4 addresses or are not global (201 for
//! each), the poller then polled them in every protocol, and `8.8.8.8:X` and
//! `[::ffff:8.8.8.8]:X` were two servers. Now every entrance judges an address by
//! `ogp_proto::master::addr` and stores an IPv4-mapped one as its IPv4, and the poller
//! polls no row whose address is not global, whoever wrote it.

use crate::common;

use std::net::{Ipv4Addr, SocketAddrV4, TcpListener, UdpSocket};
use std::path::Path;
use std::time::{Duration, Instant};

use common::master::{
    ogp_ready, on_valve_list, post_server, run_with_config, state, wait_for, Master,
};
use common::{serve_with, TempDir};

const TOKEN: &str = "test-token-0123456789abcdef";

/// The forms, and more of the registries' blocks that are not global.
const REFUSED: [&str; 14] = [
    "[::10.0.0.1]:25565",
    "[64:ff9b::a9fe:a9fe]:80",
    "[2002:7f00:1::1]:25565",
    "[2001:0:53aa:64c:0:fbff:4aff:fffe]:25565",
    "[::ffff:0:10.0.0.1]:25565",
    "[::ffff:127.0.0.1]:25565",
    "[fec0::1]:25565",
    "[100::1]:25565",
    "[3fff::1]:25565",
    "[2001:2::1]:25565",
    "198.18.0.1:25565",
    "[2001:20::1]:25565",
    "100.64.0.1:25565",
    "192.0.0.1:25565",
];

fn post(m: &Master, addr: &str, protocol: &str) -> (u16, String) {
    post_server(m, TOKEN, addr, protocol)
}

fn master(dir: &Path, name: &str, private: bool) -> Master {
    let db = format!("sqlite://{}", dir.join("m.db").display());
    // one instance name and no lease slack: the second master takes over the first's
    // leases at once
    let conf = format!(
        "api_token = \"{TOKEN}\"\npoll_interval_secs = 1\nrefresh_ms = 200\ninstance = \"one\"\nlease_slack_secs = 0\n"
    );
    let mut args = vec!["--db", db.as_str()];
    if private {
        args.push("--allow-private");
    }
    Master::with_config(dir, name, &conf, &args)
}

/// Every form is refused with 400 by the write API, and stops the master at start in a
/// `[[server]]` table.
#[test]
fn ipv6_forms_of_internal_addresses_are_refused_by_the_api_and_the_config() {
    let dir = TempDir::new("addr-refused");
    let m = master(&dir.0, "refused", false);
    for a in REFUSED {
        let (code, text) = post(&m, a, "minecraft");
        assert_eq!(code, 400, "{a}: {text}");
        assert!(text.contains("not a global address"), "{a}: {text}");
    }
    drop(m);
    for a in [
        "[64:ff9b::a9fe:a9fe]:80",
        "[2002:7f00:1::1]:25565",
        "[::10.0.0.1]:1",
    ] {
        let conf = format!("[[server]]\naddr = \"{a}\"\nprotocol = \"minecraft\"\n");
        let out = run_with_config(&dir.0, &conf);
        assert_ne!(out.code, Some(0), "{a}");
        assert!(
            out.stderr.contains("[[server]] #1") && out.stderr.contains("not a global address"),
            "{a}: {}",
            out.stderr
        );
    }
}

/// A row whose address is not global (written by a master with `allow_private`, as a
/// shared PostgreSQL may hold) is not polled by a master without it: neither its UDP
/// port nor, for Minecraft, its TCP port hears from the poller.
#[test]
fn the_poller_polls_no_internal_row_whoever_wrote_it() {
    let dir = TempDir::new("addr-poller");
    let udp = UdpSocket::bind("127.0.0.1:0").unwrap();
    let tcp = TcpListener::bind("127.0.0.1:0").unwrap();
    let (u, t) = (udp.local_addr().unwrap(), tcp.local_addr().unwrap());
    {
        let m = master(&dir.0, "writer", true);
        assert_eq!(post(&m, &u.to_string(), "a2s").0, 201);
        assert_eq!(post(&m, &t.to_string(), "minecraft").0, 201);
        // the master with allow_private polls them: the test's sockets hear it
        udp.set_read_timeout(Some(Duration::from_secs(10))).unwrap();
        let mut buf = [0u8; 2048];
        assert!(
            udp.recv_from(&mut buf).is_ok(),
            "not polled with allow_private"
        );
    }
    // drain what came, then a master without allow_private on the same database
    udp.set_nonblocking(true).unwrap();
    tcp.set_nonblocking(true).unwrap();
    std::thread::sleep(Duration::from_millis(300));
    let mut buf = [0u8; 2048];
    while udp.recv_from(&mut buf).is_ok() {}
    while tcp.accept().is_ok() {}
    let m = master(&dir.0, "strict", false);
    let started = Instant::now();
    // both rows are due at once (1 s interval): three poll rounds
    while started.elapsed() < Duration::from_secs(3) {
        assert!(
            udp.recv_from(&mut buf).is_err(),
            "the poller sent to {u}:\n{}",
            m.log_text()
        );
        assert!(tcp.accept().is_err(), "the poller connected to {t}");
        std::thread::sleep(Duration::from_millis(20));
    }
    assert!(
        m.log_text()
            .contains("server(s) whose address is not global"),
        "{}",
        m.log_text()
    );
}

/// `127.0.0.1:X` and `[::ffff:127.0.0.1]:X` are one server through the write API; a
/// server registering through a dual-stack socket (its source `::ffff:127.0.0.1`) is
/// listed as its IPv4 address, and so is on the Valve list (IPv4 only).
#[test]
fn a_mapped_address_is_its_ipv4() {
    let dir = TempDir::new("addr-mapped");
    let db = format!("sqlite://{}", dir.0.join("m.db").display());
    let conf = format!("api_token = \"{TOKEN}\"\nallow_private = true\n");
    let m = Master::with_config(&dir.0, "mapped", &conf, &["--db", &db, "--udp", "[::]:0"]);
    let (_silent, port) = {
        let s = UdpSocket::bind("127.0.0.1:0").unwrap();
        let p = s.local_addr().unwrap().port();
        (s, p)
    };
    assert_eq!(post(&m, &format!("127.0.0.1:{port}"), "a2s").0, 201);
    let (code, text) = post(&m, &format!("[::ffff:127.0.0.1]:{port}"), "a2s");
    assert_eq!((code, text.contains("again")), (200, true), "{text}");

    // the dual-stack socket's port, from the log
    let log = m.log_text();
    let dual: u16 = log
        .split("UDP on [::]:")
        .nth(1)
        .and_then(|r| r.split(' ').next())
        .and_then(|p| p.parse().ok())
        .unwrap_or_else(|| panic!("no dual-stack socket in the log:\n{log}"));
    let to = format!("127.0.0.1:{dual}");
    let s = serve_with(
        "addr-mapped",
        &state("Mapped"),
        &["--master", &to],
        ogp_ready,
    );
    let want = SocketAddrV4::new(Ipv4Addr::LOCALHOST, s.port);
    let client = UdpSocket::bind("127.0.0.1:0").unwrap();
    client.connect(m.udp).unwrap();
    wait_for(
        "the server on the Valve list",
        Duration::from_secs(15),
        || on_valve_list(&client, want),
    );
    let addrs: Vec<String> = m
        .servers()
        .iter()
        .map(|v| v["addr"].as_str().unwrap_or_default().to_owned())
        .collect();
    assert!(addrs.contains(&want.to_string()), "{addrs:?}");
    assert!(
        !addrs.iter().any(|a| a.contains("::ffff")),
        "a mapped address is listed: {addrs:?}"
    );
}
