//! `_minecraft._tcp.HOST` SRV look-ups through `client::minecraft_srv`, against a tiny
//! DNS server on loopback written here: it answers one SRV record for one name and
//! NXDOMAIN for any other, and counts the queries.

use std::net::SocketAddr;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::Duration;

use ogp_net::client::minecraft_srv;
use tokio::net::UdpSocket;

const NAME: &str = "_minecraft._tcp.mc.test.example";

/// The question's name (labels joined by dots) and where the question ends.
fn question(q: &[u8]) -> Option<(String, usize)> {
    let mut at = 12;
    let mut labels = Vec::new();
    for _ in 0..64 {
        let len = *q.get(at)? as usize;
        at += 1;
        if len == 0 {
            return Some((labels.join("."), at + 4));
        }
        labels.push(String::from_utf8_lossy(q.get(at..at + len)?).into_owned());
        at += len;
    }
    None
}

fn encode_name(out: &mut Vec<u8>, name: &str) {
    for label in name.split('.').filter(|l| !l.is_empty()) {
        out.push(label.len() as u8);
        out.extend_from_slice(label.as_bytes());
    }
    out.push(0);
}

/// Serves SRV `priority weight port target` for NAME (two records, the better one
/// second), NXDOMAIN for other names.
async fn dns_server(port: u16) -> (SocketAddr, Arc<AtomicUsize>) {
    let sock = UdpSocket::bind("127.0.0.1:0").await.unwrap();
    let addr = sock.local_addr().unwrap();
    let queries = Arc::new(AtomicUsize::new(0));
    let seen = queries.clone();
    tokio::spawn(async move {
        let mut buf = [0u8; 1500];
        for _ in 0..100 {
            let Ok((n, from)) = sock.recv_from(&mut buf).await else {
                return;
            };
            let q = &buf[..n];
            let Some((name, end)) = question(q) else {
                continue;
            };
            seen.fetch_add(1, Ordering::SeqCst);
            let ours = name.eq_ignore_ascii_case(NAME) && q.get(end - 4..end - 2) == Some(&[0, 33]);
            let mut r = Vec::new();
            r.extend_from_slice(&q[..2]); // id
            r.extend_from_slice(if ours { &[0x81, 0x80] } else { &[0x81, 0x83] });
            r.extend_from_slice(&[0, 1, 0, if ours { 2 } else { 0 }, 0, 0, 0, 0]);
            r.extend_from_slice(&q[12..end]);
            if ours {
                for (priority, weight, p, target) in [
                    (20u16, 0u16, 1u16, "backup.test.example"),
                    (10, 5, port, "localhost"),
                ] {
                    let mut rdata = Vec::new();
                    rdata.extend_from_slice(&priority.to_be_bytes());
                    rdata.extend_from_slice(&weight.to_be_bytes());
                    rdata.extend_from_slice(&p.to_be_bytes());
                    encode_name(&mut rdata, target);
                    r.extend_from_slice(&[0xc0, 12, 0, 33, 0, 1, 0, 0, 0, 60]);
                    r.extend_from_slice(&(rdata.len() as u16).to_be_bytes());
                    r.extend_from_slice(&rdata);
                }
            }
            let _ = sock.send_to(&r, from).await;
        }
    });
    (addr, queries)
}

const LIMIT: Duration = Duration::from_secs(10);

#[tokio::test]
async fn the_srv_record_names_host_and_port() {
    let (dns, queries) = dns_server(25599).await;
    let got = minecraft_srv("mc.test.example", Some(dns), LIMIT).await;
    assert_eq!(got, ("localhost".to_string(), 25599));
    assert!(queries.load(Ordering::SeqCst) >= 1);
}

#[tokio::test]
async fn no_record_falls_back_to_25565() {
    let (dns, queries) = dns_server(25599).await;
    let got = minecraft_srv("other.test.example", Some(dns), LIMIT).await;
    assert_eq!(got, ("other.test.example".to_string(), 25565));
    assert!(queries.load(Ordering::SeqCst) >= 1);
}

#[tokio::test]
async fn addresses_are_not_looked_up() {
    let (dns, queries) = dns_server(25599).await;
    for ip in ["127.0.0.1", "::1", "[::1]"] {
        let got = minecraft_srv(ip, Some(dns), LIMIT).await;
        assert_eq!(got, (ip.to_string(), 25565));
    }
    assert_eq!(queries.load(Ordering::SeqCst), 0);
}

#[tokio::test]
async fn a_silent_dns_server_costs_the_limit_then_falls_back() {
    let silent = UdpSocket::bind("127.0.0.1:0").await.unwrap();
    let t = std::time::Instant::now();
    let got = minecraft_srv(
        "mc.test.example",
        Some(silent.local_addr().unwrap()),
        Duration::from_millis(300),
    )
    .await;
    assert_eq!(got, ("mc.test.example".to_string(), 25565));
    assert!(t.elapsed() < Duration::from_secs(5), "{:?}", t.elapsed());
}
