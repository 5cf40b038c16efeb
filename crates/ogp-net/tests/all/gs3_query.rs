//! `client::query(addr, Protocol::Gamespy3, …)` over loopback UDP: against our responder in both challenge
//! modes, and against replays of the real captures in `ogp-proto/tests/data/gamespy3/`
//! (a fake server that answers `09` as Battlefield 2 does, or not at all, and sends the
//! captured packets reversed and duplicated, with the session id rewritten).

use std::net::SocketAddr;
use std::time::Duration;

use ogp_net::client;
use ogp_proto::client::{Answer, Details, Options, QueryError, Timing};
use ogp_proto::gamespy3::client::{self as gs3_client, Handshake, Step};
use ogp_proto::gamespy3::mapping::info_to_status;
use ogp_proto::gamespy3::reply::{decode_packet, Pushed, Reassembler};
use ogp_proto::gamespy3::request::Request;
use ogp_proto::gamespy3::responder::ChallengeMode;
use ogp_proto::responder::ResponderConfig;
use ogp_proto::{Protocol, Status};
use serde_json::Value;
use tokio::net::UdpSocket;

fn opts(handshake: Handshake) -> Options {
    let mut opts = Options::with_timing(
        Timing::default()
            .attempt_timeout(Duration::from_millis(300))
            .retries(1)
            .total_timeout(Duration::from_secs(3)),
    );
    opts.gamespy3.handshake = handshake;
    opts
}

async fn query_gamespy3(addr: SocketAddr, opts: Options) -> Result<Answer, QueryError> {
    let r = client::query(addr, Protocol::Gamespy3, &opts).await;
    if let Ok(a) = &r {
        assert_eq!((a.protocol, a.addr), (Protocol::Gamespy3, Some(addr)));
    }
    r
}

/// The GameSpy v3 details of an answer.
fn details(o: &Answer) -> &gs3_client::Details {
    match &o.details {
        Details::Gamespy3(d) => d,
        other => panic!("not GameSpy v3 details: {other:?}"),
    }
}

fn demo() -> Status {
    ogp_testkit::demo_state()
}

async fn responder(mode: ChallengeMode) -> ogp_net::responder::ResponderHandle {
    let mut config = ResponderConfig::default();
    config.gamespy3.challenge = mode;
    ogp_net::responder::spawn(
        "127.0.0.1:0".parse().unwrap(),
        ogp_net::StatusCell::new(demo()),
        config,
    )
    .await
    .unwrap()
}

#[tokio::test]
async fn our_responder_in_both_challenge_modes() {
    let want = demo();
    for mode in [ChallengeMode::Real, ChallengeMode::Bf2] {
        let h = responder(mode).await;
        let addr = h.local_addr();
        for handshake in [Handshake::Auto, Handshake::Always, Handshake::Never] {
            let r = query_gamespy3(addr, opts(handshake)).await;
            if mode == ChallengeMode::Real && handshake == Handshake::Never {
                // a real challenge is required: no answer without one
                match r {
                    Err(QueryError::NoAnswer {
                        protocol: Protocol::Gamespy3,
                        step: Some(step),
                        attempts: 2,
                    }) if step == Step::Info.name() => {}
                    other => panic!("{other:?}"),
                }
                continue;
            }
            let o = r.unwrap_or_else(|e| panic!("{mode:?} {handshake:?}: {e}"));
            assert_eq!(o.status.host_name, want.host_name, "{mode:?} {handshake:?}");
            assert_eq!(
                o.status.map.as_ref().map(|m| &m.name),
                want.map.as_ref().map(|m| &m.name)
            );
            let names = |s: &Status| -> Vec<Option<String>> {
                s.players
                    .iter()
                    .flatten()
                    .map(|p| p.name.as_deref().map(str::to_string))
                    .collect()
            };
            assert_eq!(names(&o.status), names(&want), "{mode:?} {handshake:?}");
            let d = details(&o);
            match (mode, handshake) {
                (_, Handshake::Never) => assert!(!d.handshake_answered),
                (ChallengeMode::Real, _) => {
                    assert!(d.handshake_answered);
                    assert!(d.challenge.is_some());
                }
                (ChallengeMode::Bf2, _) => {
                    assert!(d.handshake_answered);
                    assert_eq!(d.challenge, None, "BF2 mode answers \"0\"");
                }
            }
        }
        h.shutdown().await.unwrap();
    }
}

#[tokio::test]
async fn nothing_listening_is_refused_or_times_out() {
    // a bound socket that never answers
    let silent = UdpSocket::bind("127.0.0.1:0").await.unwrap();
    let addr = silent.local_addr().unwrap();
    let e = query_gamespy3(addr, opts(Handshake::Always))
        .await
        .unwrap_err();
    assert_eq!(
        e,
        QueryError::NoAnswer {
            protocol: Protocol::Gamespy3,
            step: Some(Step::Handshake.name()),
            attempts: 2,
        }
    );
    assert_eq!(
        e.to_string(),
        "gamespy3: no answer to 0x09 challenge request (timed out after 2 datagrams sent)"
    );
    drop(silent);
    // nothing bound: ICMP port unreachable on loopback
    let e = query_gamespy3(addr, opts(Handshake::Never))
        .await
        .unwrap_err();
    assert!(
        matches!(
            e,
            QueryError::Refused {
                protocol: Some(Protocol::Gamespy3)
            }
        ),
        "{e:?}"
    );
}

/// A fake server replaying one capture: `09` answered with "0" unless `silent_09`;
/// requests answered with the capture's packets, reversed and the first one twice.
async fn replay(packets: Vec<Vec<u8>>, silent_09: bool) -> SocketAddr {
    let sock = UdpSocket::bind("127.0.0.1:0").await.unwrap();
    let addr = sock.local_addr().unwrap();
    tokio::spawn(async move {
        let mut buf = vec![0u8; 2048];
        while let Ok((n, from)) = sock.recv_from(&mut buf).await {
            match Request::decode(&buf[..n]) {
                Ok(Request::Challenge { session_id }) if !silent_09 => {
                    let mut r = vec![0x09];
                    r.extend_from_slice(&session_id.to_be_bytes());
                    r.extend_from_slice(b"0\0");
                    let _ = sock.send_to(&r, from).await;
                }
                Ok(Request::Info {
                    session_id,
                    challenge: None,
                    ..
                }) => {
                    let mut out: Vec<Vec<u8>> = packets
                        .iter()
                        .rev()
                        .map(|p| {
                            let mut p = p.clone();
                            p[1..5].copy_from_slice(&session_id.to_be_bytes());
                            p
                        })
                        .collect();
                    out.insert(1, out[0].clone());
                    for p in out {
                        let _ = sock.send_to(&p, from).await;
                    }
                }
                _ => {}
            }
        }
    });
    addr
}

#[tokio::test]
async fn replays_of_every_capture() {
    let dir = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../ogp-proto/tests/data/gamespy3"
    );
    let mut files: Vec<_> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    files.sort();
    assert_eq!(files.len(), 22);
    for (i, path) in files.iter().enumerate() {
        let json: Value = serde_json::from_slice(&std::fs::read(path).unwrap()).unwrap();
        let packets = ogp_testkit::datagrams_of(&json, "gs3");
        // offline: what the packets decode to
        let mut r = Reassembler::default();
        let mut want = None;
        for p in &packets {
            if let Pushed::Complete { info, .. } =
                r.push(decode_packet(p).unwrap(), p.len()).unwrap()
            {
                want = Some(info);
            }
        }
        let want = want.unwrap();
        let silent = i % 2 == 1;
        let addr = replay(packets.clone(), silent).await;
        let o = query_gamespy3(addr, opts(Handshake::Auto))
            .await
            .unwrap_or_else(|e| panic!("{}: {e}", path.display()));
        let d = details(&o);
        assert_eq!(d.info, want, "{}", path.display());
        assert_eq!(o.status, info_to_status(&want));
        assert_eq!(o.datagrams, packets.len());
        assert_eq!(d.handshake_answered, !silent);
    }
}
