//! The responder on several threads (`NetConfig::threads`, `SO_REUSEPORT` sockets) and
//! with batched I/O: every query is answered whichever thread reads it, a challenge
//! issued by one thread is accepted by another, a source has one rate budget across all
//! threads, and the kernel drop counter is readable.
//!
//! Every wait is bounded by a timeout.

use std::net::SocketAddr;
use std::time::Duration;

use ogp_net::responder::{self, NetConfig};
use ogp_net::StatusCell;
use ogp_proto::client::{Options, Timing};
use ogp_proto::guard::RateConfig;
use ogp_proto::responder::{Listener, ResponderConfig};
use ogp_proto::{Protocol, Status};
use tokio::net::UdpSocket;
use tokio::time::timeout;

const LIMIT: Duration = Duration::from_secs(10);

fn status() -> Status {
    let mut s = Status::default();
    s.host_name = Some("threads".into());
    s
}

async fn spawn(config: ResponderConfig, threads: usize) -> responder::ResponderHandle {
    responder::spawn_many_with(
        &[("127.0.0.1:0".parse().unwrap(), Listener::Standard)],
        StatusCell::new(status()),
        config,
        NetConfig::default().with_threads(threads),
    )
    .await
    .expect("bind")
}

fn opts() -> Options {
    Options::with_timing(
        Timing::default()
            .attempt_timeout(Duration::from_millis(500))
            .retries(3)
            .total_timeout(Duration::from_secs(5)),
    )
}

#[tokio::test]
async fn every_protocol_is_answered_by_two_threads_from_many_ports() {
    let mut config = ResponderConfig::default();
    config.rate = RateConfig::new(1.0e6, 1.0e6);
    config.unproven_rate = RateConfig::new(1.0e6, 1.0e6);
    let h = spawn(config, 2).await;
    let addr = h.local_addr();
    // Each query comes from a new port, so SO_REUSEPORT spreads the challenge and the
    // challenged query over both threads: a challenge issued by one must pass the other.
    for _ in 0..20 {
        for p in [Protocol::Ogp, Protocol::A2s, Protocol::Gamespy3] {
            let o = timeout(LIMIT, ogp_net::client::query(addr, p, &opts()))
                .await
                .expect("in time")
                .unwrap_or_else(|e| panic!("{p:?}: {e}"));
            assert_eq!(o.status.host_name.as_deref(), Some("threads"));
        }
    }
    let s = h.stats();
    assert!(s.received >= 120, "{s:?}");
    assert_eq!(s.rate_limited, 0);
    if cfg!(target_os = "linux") {
        assert_eq!(h.kernel_drops(), Some(0));
    }
    h.shutdown().await.unwrap();
}

/// One source (one IP, many ports) against a budget of 10 with 2 threads: it gets 10
/// answers in all, not 10 per thread.
#[tokio::test]
async fn a_source_has_one_budget_across_threads() {
    let mut config = ResponderConfig::default();
    config.ogp.require_challenge = false;
    config.unproven_rate = RateConfig::new(0.001, 10.0);
    let h = spawn(config, 2).await;
    let addr: SocketAddr = h.local_addr();
    // A query of a type nobody serves: Error 1, one byte more than the query, which is
    // charged to the source's budget of unproven answers (a ping or a challenge, no
    // larger than their request or a challenge, would only be charged overall).
    let bad_type = [0xff, 0xff, 0xff, 0xff, b'O', b'G', b'P', 0, 3, 0x42, 0];
    let mut sockets = Vec::new();
    for _ in 0..40 {
        let s = UdpSocket::bind("127.0.0.1:0").await.unwrap();
        s.send_to(&bad_type, addr).await.unwrap();
        sockets.push(s);
    }
    let mut answered = 0;
    let mut buf = [0u8; 2048];
    for s in &sockets {
        if let Ok(Ok(_)) = timeout(Duration::from_millis(100), s.recv_from(&mut buf)).await {
            answered += 1;
        }
    }
    let s = h.stats();
    assert_eq!(s.received, 40, "{s:?}");
    assert_eq!(answered, 10, "{s:?}");
    assert_eq!(s.rate_limited, 30, "{s:?}");
    h.shutdown().await.unwrap();
}

/// On Linux each source address is answered by one thread, chosen by the address (a
/// reuseport BPF program), whatever its ports; each thread answers from limits of its
/// own, holding its share of the overall budget for unproven sources.
#[cfg(target_os = "linux")]
#[tokio::test]
async fn each_source_address_is_answered_by_one_thread() {
    let mut config = ResponderConfig::default();
    config.ogp.require_challenge = false;
    config.unproven_rate = RateConfig::new(1.0e6, 1.0e6);
    // 8 unproven answers in all at once: 4 per thread.
    config.unproven_total = RateConfig::new(0.001, 8.0);
    let h = spawn(config, 2).await;
    let addr = h.local_addr();
    let ping = [0xff, 0xff, 0xff, 0xff, b'O', b'G', b'P', 0, 3, 0, 0];
    // 127.0.0.2 (even) to thread 0, 127.0.0.3 (odd) to thread 1; 6 ports each.
    let mut answered = [0, 0];
    let mut buf = [0u8; 2048];
    for (k, last) in [2u8, 3].into_iter().enumerate() {
        for _ in 0..6 {
            let s = UdpSocket::bind((std::net::Ipv4Addr::new(127, 0, 0, last), 0))
                .await
                .unwrap();
            s.send_to(&ping, addr).await.unwrap();
            if let Ok(Ok(_)) = timeout(Duration::from_millis(200), s.recv_from(&mut buf)).await {
                answered[k] += 1;
            }
        }
    }
    let per_thread = h.thread_stats();
    let received: Vec<u64> = per_thread.iter().map(|s| s.received).collect();
    assert_eq!(received, [6, 6], "{per_thread:?}");
    assert_eq!(answered, [4, 4], "each thread's half of the overall budget");
    h.shutdown().await.unwrap();
}

/// A burst larger than one batch, from one socket, is all answered (the drain reads
/// batch after batch and sends every answer).
#[tokio::test]
async fn a_burst_is_drained_and_answered() {
    let mut config = ResponderConfig::default();
    config.ogp.require_challenge = false;
    config.unproven_rate = RateConfig::new(1.0e6, 1.0e6);
    for threads in [0, 1] {
        let h = spawn(config.clone(), threads).await;
        let addr = h.local_addr();
        let s = UdpSocket::bind("127.0.0.1:0").await.unwrap();
        let ping = [0xff, 0xff, 0xff, 0xff, b'O', b'G', b'P', 0, 3, 0, 0];
        for _ in 0..200 {
            s.send_to(&ping, addr).await.unwrap();
        }
        let mut buf = [0u8; 2048];
        let mut got = 0;
        while got < 200 {
            match timeout(Duration::from_secs(2), s.recv_from(&mut buf)).await {
                Ok(Ok(_)) => got += 1,
                _ => break,
            }
        }
        assert_eq!(got, 200, "threads {threads}: {:?}", h.stats());
        h.shutdown().await.unwrap();
    }
}

/// A challenge asked from one socket is accepted from 24 others (new ports of the same
/// address), each answered with the INFO reply. Where sources are not steered to one
/// thread (not Linux), those ports are spread over the threads, and a challenge issued
/// by one thread must pass at the others.
#[tokio::test]
async fn a_challenge_from_one_thread_opens_every_thread() {
    let h = spawn(ResponderConfig::default(), 3).await;
    let addr = h.local_addr();
    let info = b"\xFF\xFF\xFF\xFFTSource Engine Query\0";
    let mut buf = [0u8; 2048];
    let s = UdpSocket::bind("127.0.0.1:0").await.unwrap();
    s.send_to(info, addr).await.unwrap();
    let (n, _) = timeout(LIMIT, s.recv_from(&mut buf))
        .await
        .unwrap()
        .unwrap();
    assert_eq!((n, buf[4]), (9, 0x41), "a challenge");
    let request = [info.as_slice(), &buf[5..9]].concat();
    for _ in 0..24 {
        let s = UdpSocket::bind("127.0.0.1:0").await.unwrap();
        s.send_to(&request, addr).await.unwrap();
        let (n, _) = timeout(LIMIT, s.recv_from(&mut buf))
            .await
            .unwrap()
            .unwrap();
        assert_eq!(buf[4], b'I', "an INFO reply, not {:02x?}", &buf[..n]);
    }
    h.shutdown().await.unwrap();
}

/// With a tiny receive buffer a burst overflows it: every datagram is either received by
/// the responder or counted as dropped by the kernel (`kernel_drops`), none lost unseen.
#[cfg(target_os = "linux")]
#[tokio::test]
async fn kernel_drops_and_received_add_up_to_the_burst() {
    let h = responder::spawn_many_with(
        &[("127.0.0.1:0".parse().unwrap(), Listener::Standard)],
        StatusCell::new(status()),
        ResponderConfig::default(),
        NetConfig::default().with_threads(1).with_recv_buffer(4096),
    )
    .await
    .expect("bind");
    let addr = h.local_addr();
    let s = std::net::UdpSocket::bind("127.0.0.1:0").unwrap();
    const BURST: u64 = 5000;
    for _ in 0..BURST {
        // Not a protocol we speak: counted as received, never answered.
        s.send_to(b"burst", addr).unwrap();
    }
    let deadline = std::time::Instant::now() + LIMIT;
    let (received, drops) = loop {
        let received = h.stats().received;
        let drops = h.kernel_drops().expect("Linux reports drops");
        if received + drops >= BURST || std::time::Instant::now() > deadline {
            break (received, drops);
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    };
    assert_eq!(
        received + drops,
        BURST,
        "received {received}, dropped {drops}"
    );
    h.shutdown().await.unwrap();
}
