//! `ogp serve --master`: OGP master server uplinks reach the master from the query
//! socket (so the master can query the server back there), at start and when the
//! server stops on SIGTERM, with the state's GameID.

use crate::common;

use std::net::UdpSocket;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use common::*;
use ogp_proto::ogp::{decode, Message};

const STATE: &str = include_str!("../../../ogp-proto/tests/data/state.json");

/// The next uplink the master socket receives within `limit`: its source and GameID.
fn next_uplink(master: &UdpSocket, limit: Duration) -> Option<(std::net::SocketAddr, u16)> {
    let t = Instant::now();
    let mut buf = [0u8; 2048];
    while t.elapsed() < limit {
        let Ok((n, from)) = master.recv_from(&mut buf) else {
            continue;
        };
        if let Ok(p) = decode(&buf[..n]) {
            if let Message::MasterUplink { game_id } = p.message {
                assert!(p.header.is_answer());
                return Some((from, game_id));
            }
        }
    }
    None
}

#[test]
fn uplinks_at_start_and_at_exit_from_the_query_socket() {
    let master = UdpSocket::bind("127.0.0.1:0").unwrap();
    master
        .set_read_timeout(Some(Duration::from_millis(200)))
        .unwrap();
    let master_addr = master.local_addr().unwrap().to_string();
    let game_id = ogp_proto::Status::from_json(STATE)
        .unwrap()
        .game_id
        .unwrap_or(0);
    let dir = TempDir::new("uplink");
    let state = dir.0.join("state.json");
    std::fs::write(&state, STATE).unwrap();
    let port = free_port();
    let mut child = KillOnDrop(
        Command::new(BIN)
            .args(["serve", "--state"])
            .arg(&state)
            .args(["--listen", &format!("127.0.0.1:{port}")])
            .args(["--master", &master_addr])
            .env_remove("RUST_LOG")
            .env_remove("OGP_LOG")
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap(),
    );
    let (from, id) = next_uplink(&master, Duration::from_secs(10)).expect("the start uplink");
    assert_eq!(
        from.to_string(),
        format!("127.0.0.1:{port}"),
        "from the query socket"
    );
    assert_eq!(id, game_id);
    // Nothing more until a change or a minute has passed.
    assert_eq!(next_uplink(&master, Duration::from_millis(1500)), None);
    Command::new("kill")
        .args(["-TERM", &child.0.id().to_string()])
        .status()
        .unwrap();
    let (from, id) = next_uplink(&master, Duration::from_secs(10)).expect("the exit uplink");
    assert_eq!(from.to_string(), format!("127.0.0.1:{port}"));
    assert_eq!(id, game_id);
    assert_eq!(child.0.wait().unwrap().code(), Some(0));
    let mut err = String::new();
    std::io::Read::read_to_string(child.0.stderr.as_mut().unwrap(), &mut err).unwrap();
    assert!(err.contains("last OGP uplinks sent to 1 master"), "{err}");
}
