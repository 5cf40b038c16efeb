//! The scan engine drives TCP (Minecraft: Java Edition) targets beside datagram ones:
//! several in-process Server List Ping servers, a refused port and a silent one (it
//! accepts and never says a word), through `ogp_net::scan` as the master's poller and
//! `ogp scan` use it.

use std::collections::HashMap;
use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;

use ogp_net::scan::{self, Protocol, QueryError, ScanConfig, Target};
use ogp_proto::client::{Options, Timing};
use ogp_testkit::slp;
use tokio::net::{TcpListener, UdpSocket};

async fn mc_server(motd: &str, online: u32) -> (SocketAddr, tokio::task::JoinHandle<()>) {
    // Not an ephemeral port: auto-detection probes the same number over UDP, where
    // another test's responder may sit on an ephemeral port (it answered OGP once).
    let l = TcpListener::bind(refused_port().await).await.unwrap();
    let addr = l.local_addr().unwrap();
    let json: Arc<str> = slp::status_json(motd, online, 20, "1.20.1", 763).into();
    (addr, tokio::spawn(slp::serve(l, json)))
}

/// A port nothing listens on (bound, read back, closed).
/// A port nothing listens on (TCP nor UDP), out of the range other tests' servers take.
async fn refused_port() -> SocketAddr {
    ogp_testkit::interop::closed_port()
}

fn config(max_in_flight: usize) -> ScanConfig {
    let mut c = ScanConfig::default();
    c.max_in_flight = max_in_flight;
    // Generous timers: a loaded machine must not fail the live servers; the silent one
    // costs the read timeout.
    c.options = Options::with_timing(
        Timing::default()
            .attempt_timeout(Duration::from_millis(500))
            .retries(3)
            .total_timeout(Duration::from_secs(20))
            .connect_timeout(Duration::from_secs(10))
            .read_timeout(Duration::from_secs(3)),
    );
    c
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn minecraft_servers_a_refused_port_and_a_silent_one_in_one_scan() {
    let mut servers = Vec::new();
    for k in 0..6u32 {
        servers.push(mc_server(&format!("server {k}"), k + 1).await);
    }
    let refused = refused_port().await;
    // Silent: accepts (the backlog does) and never answers.
    let silent = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let silent_addr = silent.local_addr().unwrap();
    // A datagram target in the same scan: a UDP port that never answers.
    let quiet_udp = UdpSocket::bind("127.0.0.1:0").await.unwrap();

    // Fewer slots than targets: connections wait for one another.
    let scan = scan::start(config(3)).unwrap();
    let mut want: HashMap<u64, Option<u32>> = HashMap::new();
    for (k, (addr, _)) in servers.iter().enumerate() {
        let id = k as u64;
        want.insert(id, Some(k as u32 + 1));
        scan.targets
            .send(Target::new(addr.to_string(), Some(Protocol::Minecraft)).with_id(id))
            .await
            .unwrap();
    }
    for (id, addr, p) in [
        (100, refused, Some(Protocol::Minecraft)),
        (101, silent_addr, Some(Protocol::Minecraft)),
        (102, quiet_udp.local_addr().unwrap(), Some(Protocol::A2s)),
    ] {
        scan.targets
            .send(Target::new(addr.to_string(), p).with_id(id))
            .await
            .unwrap();
    }
    drop(scan.targets);
    let mut results = scan.results;
    let mut seen = HashMap::new();
    while let Some(r) = tokio::time::timeout(Duration::from_secs(60), results.recv())
        .await
        .expect("the scan ends")
    {
        seen.insert(r.id, r);
    }
    let stats = scan.handle.join().await;
    assert_eq!(seen.len(), 9);
    for (id, online) in &want {
        let r = &seen[id];
        let a = r.outcome.as_ref().unwrap_or_else(|e| panic!("{id}: {e}"));
        assert_eq!(a.protocol, Protocol::Minecraft);
        assert_eq!(a.addr, r.addr);
        assert_eq!(a.status.player_count, *online);
        assert_eq!(a.status.slot_max, Some(20));
        assert_eq!(
            a.status.host_name.as_deref(),
            Some(format!("server {id}").as_str())
        );
    }
    // Refused at once, not after a timer.
    let r = &seen[&100];
    assert!(
        matches!(
            r.outcome,
            Err(QueryError::Refused {
                protocol: Some(Protocol::Minecraft)
            })
        ),
        "{:?}",
        r.outcome
    );
    assert!(r.elapsed < Duration::from_secs(3), "{:?}", r.elapsed);
    // The silent server: its machine's read timer, saying what was awaited.
    match &seen[&101].outcome {
        Err(QueryError::StreamTimeout {
            protocol: Protocol::Minecraft,
            timer,
            received: 0,
            ..
        }) => assert_eq!(*timer, "read"),
        other => panic!("{other:?}"),
    }
    assert!(seen[&102].outcome.as_ref().unwrap_err().is_timeout());
    assert_eq!(stats.answered, 6);
    assert_eq!(stats.connections, 8);
    drop(silent);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn auto_detection_finds_minecraft_over_tcp_and_says_refused_for_a_closed_port() {
    let (addr, _server) = mc_server("auto", 7).await;
    let mut c = config(16);
    c.options.timing = c.options.timing.total_timeout(Duration::from_secs(6));
    let r = scan::query(Target::new(addr.to_string(), None), c.clone()).await;
    let a = r.outcome.expect("minecraft answers");
    assert_eq!(a.protocol, Protocol::Minecraft);
    assert_eq!(a.status.player_count, Some(7));
    // A silent UDP port whose TCP port is closed: the datagram protocols' timeout, not
    // the TCP refusal (the TCP try says nothing against them). Not an ephemeral port:
    // another test's TCP server may hold the same number (seen under load).
    let quiet = UdpSocket::bind(refused_port().await).await.unwrap();
    let mut short = c.clone();
    short.options.timing = short
        .options
        .timing
        .attempt_timeout(Duration::from_millis(200))
        .retries(1)
        .total_timeout(Duration::from_secs(2));
    let r = scan::query(
        Target::new(quiet.local_addr().unwrap().to_string(), None),
        short,
    )
    .await;
    let e = r.outcome.unwrap_err();
    assert!(e.is_timeout(), "{e:?}");
    assert_ne!(e.protocol(), Some(Protocol::Minecraft), "{e:?}");
    // Nothing on TCP nor UDP: refused by the host, whatever the protocol.
    let closed = refused_port().await;
    let r = scan::query(Target::new(closed.to_string(), None), c).await;
    assert!(
        matches!(r.outcome, Err(QueryError::Refused { protocol: None })),
        "{:?}",
        r.outcome
    );
}

#[test]
fn the_open_file_limit_is_raised_toward_the_hard_one() {
    let l = scan::raise_open_file_limit(4000);
    assert!(l.soft <= l.hard);
    assert!(l.connections >= 1 && l.connections <= 4000);
    assert_eq!(
        l.capped,
        l.soft.saturating_sub(scan::FILES_RESERVED) < 4000,
        "{l:?}"
    );
    if l.hard >= 4000 + scan::FILES_RESERVED {
        assert!(l.soft >= 4000 + scan::FILES_RESERVED, "{l:?}");
        assert!(!l.capped);
    }
}

/// A server that sends its whole conversation on connect, before reading a request (the
/// TeamSpeak 2 capture of the fuzz seeds): the machine ends while it still has a command
/// to write; its answer stands (it was "the query machine stopped without a result").
#[tokio::test]
async fn a_server_that_answers_before_it_is_asked_is_read() {
    let seed = std::fs::read(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../fuzz/corpus/teamspeak2_stream/gameq-ts2-1.bin"
    ))
    .unwrap();
    let conversation = seed[1..].to_vec(); // the first byte is the fuzz target's
    let l = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = l.local_addr().unwrap();
    let server = tokio::spawn(async move {
        use tokio::io::{AsyncReadExt, AsyncWriteExt};
        let (mut s, _) = l.accept().await.unwrap();
        s.write_all(&conversation).await.unwrap();
        // read what the client writes until it closes (no reset from unread bytes)
        let mut sink = [0u8; 256];
        while matches!(
            tokio::time::timeout(Duration::from_secs(5), s.read(&mut sink)).await,
            Ok(Ok(n)) if n > 0
        ) {}
    });
    let mut opts = Options::default();
    opts.timing = Timing::default().attempt_timeout(Duration::from_secs(2));
    let r = tokio::time::timeout(
        Duration::from_secs(5),
        ogp_net::client::query(addr, Protocol::Teamspeak2, &opts),
    )
    .await
    .expect("bounded");
    let answer = r.expect("the server's answers are read");
    let name = answer.status.host_name.map(|t| t.to_string());
    assert_eq!(name.as_deref(), Some("Hamburg-Funk"));
    server.await.unwrap();
}
