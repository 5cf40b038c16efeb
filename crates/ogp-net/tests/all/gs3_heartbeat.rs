//! GameSpy v3 heartbeats from the responder task to a fake master on loopback: the first
//! one at start, one after a status change, the last one at shutdown; keep-alives from
//! the master get no reply; the responder keeps answering queries meanwhile.

use std::time::Duration;

use ogp_net::responder;
use ogp_net::StatusCell;
use ogp_proto::announce::Cadence;
use ogp_proto::gamespy3::heartbeat::{Heartbeat, HeartbeatConfig, StateChanged};
use ogp_proto::gamespy3::responder::ChallengeMode;
use ogp_proto::responder::ResponderConfig;
use ogp_proto::Status;
use tokio::net::UdpSocket;
use tokio::time::timeout;

async fn next_heartbeat(master: &UdpSocket) -> (Heartbeat, std::net::SocketAddr) {
    let mut buf = vec![0u8; 4096];
    let (n, from) = timeout(Duration::from_secs(3), master.recv_from(&mut buf))
        .await
        .expect("a heartbeat within 3 s")
        .unwrap();
    (Heartbeat::decode(&buf[..n]).expect("decodes"), from)
}

#[tokio::test]
async fn heartbeats_at_start_on_change_and_at_exit() {
    let master = UdpSocket::bind("127.0.0.1:0").await.unwrap();
    let cell = StatusCell::new({
        let mut status = Status::default();
        status.host_name = Some("Beating".into());
        status.game_name = Some("battlefield2".into());
        status.slot_max = Some(16);
        status
    });
    let hb = HeartbeatConfig::new(vec![master.local_addr().unwrap()]).cadence(Cadence::new(
        Duration::from_secs(30),
        Duration::from_millis(200),
    ));
    let mut config = ResponderConfig::default();
    config.gamespy3.challenge = ChallengeMode::Bf2;
    config.gamespy3_heartbeat = Some(hb);
    let h = responder::spawn("127.0.0.1:0".parse().unwrap(), cell.clone(), config)
        .await
        .unwrap();
    let (first, from) = next_heartbeat(&master).await;
    assert_eq!(from, h.local_addr(), "sent from the query socket");
    assert_eq!(first.state_changed, Some(StateChanged::Initial));
    assert_eq!(first.local_port, Some(h.local_addr().port()));
    assert_eq!(first.local_ips, vec![ogp_proto::Text::from("127.0.0.1")]);
    assert_eq!(first.game_name.as_deref(), Some("battlefield2"));
    let key = |hb: &Heartbeat, k: &str| {
        hb.keys
            .iter()
            .find(|(kk, _)| kk == k)
            .map(|(_, v)| v.to_string())
    };
    assert_eq!(key(&first, "hostname").as_deref(), Some("Beating"));

    // A keep-alive from the master: no reply.
    master
        .send_to(
            &[&[0xfe, 0xfd, 0x08][..], &first.instance_key.to_be_bytes()].concat(),
            h.local_addr(),
        )
        .await
        .unwrap();

    cell.update(|s| s.host_name = Some("Changed".into()));
    let (changed, _) = next_heartbeat(&master).await;
    assert_eq!(changed.state_changed, Some(StateChanged::Changed));
    assert_eq!(changed.instance_key, first.instance_key);
    assert_eq!(key(&changed, "hostname").as_deref(), Some("Changed"));

    // Queries are answered meanwhile (from another socket: the master's receives only
    // heartbeats).
    let client = UdpSocket::bind("127.0.0.1:0").await.unwrap();
    client.connect(h.local_addr()).await.unwrap();
    client
        .send(b"\xfe\xfd\x00\x01\x02\x03\x04\xff\xff\xff\x01")
        .await
        .unwrap();
    let mut buf = vec![0u8; 2048];
    let n = timeout(Duration::from_secs(3), client.recv(&mut buf))
        .await
        .expect("an answer")
        .unwrap();
    assert_eq!(&buf[..5], b"\x00\x01\x02\x03\x04");
    assert!(n > 20);

    h.shutdown().await.unwrap();
    let (last, _) = next_heartbeat(&master).await;
    assert_eq!(last.state_changed, Some(StateChanged::Exiting));
    // Nothing else arrived (the keep-alive was not answered with anything).
    let mut buf = [0u8; 64];
    assert!(
        timeout(Duration::from_millis(200), master.recv_from(&mut buf))
            .await
            .is_err()
    );
}
