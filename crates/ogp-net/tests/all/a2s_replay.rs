//! Our A2S client against replays of real servers' replies over loopback UDP.
//!
//! Every capture in `ogp-proto/tests/data/a2s/` that holds an INFO reply is served by a
//! fake server on 127.0.0.1 that keeps the challenge flow live (a request without the
//! right challenge gets `41 <C>`) and sends the captured datagrams of each reply, split
//! fragments **reversed and with the last one duplicated**. The client's status must
//! carry what the same datagrams decode to offline (the offline decoding is checked
//! against the origins' own expectations in `ogp-proto/tests/protocols/a2s_captures.rs`).

use std::net::SocketAddr;
use std::time::Duration;

use ogp_proto::a2s::{self, mapping, split, Message, Request};
use ogp_proto::client::{Details, Options, Timing};
use ogp_proto::{Protocol, Status};
use ogp_testkit::datagrams_of as datagrams;
use serde_json::Value;
use tokio::net::UdpSocket;

const CHALLENGE: u32 = 0x1234_5678;

/// What the datagrams of one reply decode to offline, merged into `status`.
fn decode_into(datagrams: &[Vec<u8>], status: &mut Status) {
    let mut reasm = split::Reassembler::new();
    for d in datagrams {
        let message = match a2s::decode(d).expect("capture decodes").message {
            Message::Fragment(_) => match reasm.push(d).expect("fragment") {
                split::Pushed::Complete { reply, .. } => {
                    reasm = split::Reassembler::new();
                    split::decode_reassembled(&reply)
                        .expect("reply decodes")
                        .message
                }
                _ => continue,
            },
            m => m,
        };
        match message {
            Message::Info(i) => mapping::info_to_status(&i, status),
            Message::GoldSrcInfo(g) => mapping::goldsrc_to_status(&g, status),
            Message::Players(p) => mapping::players_to_status(&p, status),
            Message::Rules(r) => mapping::rules_to_status(&r, status),
            _ => {}
        }
    }
}

/// Fragments reversed with the last one sent twice; single datagrams as they are.
fn shuffled(mut ds: Vec<Vec<u8>>) -> Vec<Vec<u8>> {
    if ds.len() > 1 && ds.iter().all(|d| d.starts_with(&[0xfe, 0xff, 0xff, 0xff])) {
        ds.reverse();
        if let Some(last) = ds.last().cloned() {
            ds.push(last);
        }
    }
    ds
}

/// Serves one capture until the test ends (the task is dropped with the runtime).
async fn fake_server(capture: Value) -> SocketAddr {
    let socket = UdpSocket::bind("127.0.0.1:0").await.expect("bind");
    let addr = socket.local_addr().expect("addr");
    let info = datagrams(&capture, "info");
    let players = shuffled(datagrams(&capture, "players"));
    let rules = shuffled(datagrams(&capture, "rules"));
    tokio::spawn(async move {
        let mut buf = vec![0u8; 2048];
        let mut challenge_reply = vec![0xff, 0xff, 0xff, 0xff, 0x41];
        challenge_reply.extend_from_slice(&CHALLENGE.to_le_bytes());
        loop {
            let Ok((n, src)) = socket.recv_from(&mut buf).await else {
                return;
            };
            let Ok(d) = a2s::decode(&buf[..n]) else {
                continue;
            };
            let Message::Request(req) = d.message else {
                continue;
            };
            let (challenge, reply) = match req {
                Request::Info { challenge, .. } => (challenge, &info),
                Request::Player { challenge, .. } => (challenge, &players),
                Request::Rules { challenge, .. } => (challenge, &rules),
                _ => continue,
            };
            if challenge != Some(CHALLENGE) {
                let _ = socket.send_to(&challenge_reply, src).await;
                continue;
            }
            for d in reply {
                let _ = socket.send_to(d, src).await;
            }
        }
    });
    addr
}

fn names_and_scores(s: &Status) -> Vec<(String, Option<i32>)> {
    s.players
        .iter()
        .flatten()
        .map(|p| (p.name.as_deref().unwrap_or("").to_owned(), p.score))
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_capture_replayed_over_loopback_reads_like_offline() {
    let dir = concat!(env!("CARGO_MANIFEST_DIR"), "/../ogp-proto/tests/data/a2s");
    let mut files: Vec<_> = std::fs::read_dir(dir)
        .expect("captures")
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|e| e == "json"))
        .collect();
    files.sort();
    assert!(files.len() >= 150, "{} captures", files.len());
    let mut replayed = 0;
    for path in files {
        let capture: Value =
            serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
        let info = datagrams(&capture, "info");
        if info.is_empty() {
            continue;
        }
        let (players, rules) = (datagrams(&capture, "players"), datagrams(&capture, "rules"));
        let mut expected = Status::default();
        // A GoldSrc server that sends 'm' and 'I' for one request: the client keeps both,
        // the first then the second over it, as offline.
        decode_into(&info, &mut expected);
        decode_into(&players, &mut expected);
        decode_into(&rules, &mut expected);

        let addr = fake_server(capture.clone()).await;
        let mut opts = Options::with_timing(
            Timing::default()
                .attempt_timeout(Duration::from_millis(300))
                .total_timeout(Duration::from_secs(4)),
        );
        opts.a2s.players = !players.is_empty();
        opts.a2s.rules = !rules.is_empty();
        let name = path.file_name().unwrap().to_string_lossy().into_owned();
        let o = ogp_net::client::query(addr, Protocol::A2s, &opts)
            .await
            .unwrap_or_else(|e| panic!("{name}: {e}"));
        assert_eq!((o.protocol, o.addr), (Protocol::A2s, Some(addr)), "{name}");
        let Details::A2s(d) = &o.details else {
            panic!("{name}: not A2S details: {:?}", o.details)
        };
        assert!(d.missing.is_empty(), "{name}: missing {:?}", d.missing);
        assert!(
            !o.warnings.iter().any(|w| w.starts_with("no A2S_")),
            "{name}: {:?}",
            o.warnings
        );
        assert_eq!(
            d.challenge,
            Some(CHALLENGE),
            "{name}: the challenge flow ran"
        );
        let got = &o.status;
        assert_eq!(got.host_name, expected.host_name, "{name}: server name");
        assert_eq!(got.map, expected.map, "{name}: map");
        assert_eq!(got.slot_max, expected.slot_max, "{name}: max players");
        assert_eq!(
            names_and_scores(got),
            names_and_scores(&expected),
            "{name}: players"
        );
        assert_eq!(got.rules, expected.rules, "{name}: rules");
        replayed += 1;
    }
    assert!(replayed >= 140, "only {replayed} captures replayed");
}
