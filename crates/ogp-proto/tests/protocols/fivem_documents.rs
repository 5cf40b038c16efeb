//! The FiveM client machine on the HTTP-JSON shape of the stream core, driven by hand
//! (no I/O) with real servers' documents (`tests/data/fivem/`): the three requests on
//! one kept-alive connection, any chunking, a chunked answer, an optional document
//! refused, a server that closes early, timers.

use std::net::SocketAddr;
use std::time::{Duration, Instant};

use ogp_proto::client::{QueryDriver, QueryError, StreamEvent, Timing, Transport};
use ogp_proto::fivem::client::{QueryMachine, QueryOptions};
use ogp_proto::Protocol;

fn doc(name: &str) -> Vec<u8> {
    let p = format!("{}/tests/data/fivem/{name}", env!("CARGO_MANIFEST_DIR"));
    std::fs::read(&p).unwrap_or_else(|e| panic!("{p}: {e}"))
}

fn peer() -> SocketAddr {
    "127.0.0.1:30120".parse().unwrap()
}

fn ok(body: &[u8]) -> Vec<u8> {
    [
        format!(
            "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: {}\r\n\r\n",
            body.len()
        )
        .into_bytes(),
        body.to_vec(),
    ]
    .concat()
}

fn chunked(body: &[u8]) -> Vec<u8> {
    let mut out = b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n".to_vec();
    for c in body.chunks(100) {
        out.extend_from_slice(format!("{:x}\r\n", c.len()).as_bytes());
        out.extend_from_slice(c);
        out.extend_from_slice(b"\r\n");
    }
    out.extend_from_slice(b"0\r\n\r\n");
    out
}

/// Drives a machine through its requests, answering each with `answers[i]` fed `step`
/// bytes at a time; returns the requests written and the result.
fn drive(
    answers: &[Vec<u8>],
    step: usize,
) -> (
    Vec<String>,
    Result<ogp_proto::client::Answer<ogp_proto::fivem::client::Details>, QueryError>,
) {
    let t = Instant::now();
    let mut m = QueryMachine::new(QueryOptions::default(), Timing::default(), t);
    assert_eq!(m.transport(), Transport::Stream);
    assert!(
        m.poll_transmit(t).is_none(),
        "nothing before the connection"
    );
    m.handle_stream(t, StreamEvent::Connected(peer()));
    let mut requests = Vec::new();
    for a in answers {
        let Some(req) = m.poll_transmit(t) else { break };
        requests.push(String::from_utf8(req).unwrap());
        for c in a.chunks(step.max(1)) {
            m.handle_stream(t, StreamEvent::Received(c));
        }
    }
    assert!(m.poll_transmit(t).is_none(), "nothing more to write");
    let r = m.take_result().expect("a result");
    assert!(m.close_due());
    (requests, r)
}

#[test]
fn three_documents_on_one_connection_in_any_chunking() {
    let answers = [
        ok(&doc("zap-esx.dynamic.json")),
        ok(&doc("zap-esx.info.json")),
        chunked(&doc("zap-esx.players.json")),
    ];
    let mut first = None;
    for step in [usize::MAX, 1, 7, 4096] {
        let (req, r) = drive(&answers, step);
        assert_eq!(req.len(), 3);
        assert!(req[0].starts_with("GET /dynamic.json HTTP/1.1\r\nHost: 127.0.0.1:30120\r\n"));
        assert!(req[0].contains("\r\nConnection: keep-alive\r\n"));
        assert!(req[1].starts_with("GET /info.json "));
        assert!(req[2].starts_with("GET /players.json "));
        assert!(
            req[2].contains("\r\nConnection: close\r\n"),
            "the last one closes"
        );
        let a = r.unwrap();
        assert_eq!(a.protocol, Protocol::Fivem);
        assert!(a.warnings.is_empty(), "{:?}", a.warnings);
        let s = &a.status;
        assert_eq!(s.game_name.as_deref(), Some("FiveM"));
        assert_eq!(s.player_count(), Some(1));
        assert_eq!(s.slot_max, Some(32));
        assert_eq!(
            s.rules.as_ref().unwrap().get("sv_enforceGameBuild"),
            Some("1604")
        );
        assert_eq!(s.rules.as_ref().unwrap().len(), 13);
        let p = &s.players.as_ref().unwrap()[0];
        assert_eq!(
            (p.name.as_deref(), p.ping, p.id),
            (Some("BallChopHee"), Some(49), Some(1))
        );
        assert!(a.details.missing.is_empty());
        match &first {
            None => first = Some(a.status.clone()),
            Some(f) => assert_eq!(f, &a.status, "chunking {step}"),
        }
    }
}

#[test]
fn an_optional_document_refused_is_left_out() {
    let not_found = b"HTTP/1.1 404 Not Found\r\nContent-Length: 9\r\n\r\nnot found".to_vec();
    let (req, r) = drive(
        &[not_found.clone(), ok(&doc("inhouse.info.json")), not_found],
        usize::MAX,
    );
    assert_eq!(req.len(), 3);
    let a = r.unwrap();
    assert_eq!(a.details.missing, ["/dynamic.json", "/players.json"]);
    assert_eq!(a.warnings.len(), 2, "{:?}", a.warnings);
    assert_eq!(a.details.icon_bytes, Some(40));
    assert_eq!(a.details.version.as_deref(), Some("1683688455"));
    assert_eq!(a.status.slot_max, Some(128));
    assert!(a.status.players.is_none());
    assert_eq!(
        a.status.host_name_raw.as_deref().map(|h| &h[..10]),
        Some("^5In-House")
    );
}

#[test]
fn a_required_document_refused_fails_and_says_why() {
    let e = drive(
        &[
            ok(&doc("zap-esx.dynamic.json")),
            b"HTTP/1.1 403 Forbidden\r\nContent-Length: 0\r\n\r\n".to_vec(),
        ],
        usize::MAX,
    )
    .1
    .unwrap_err();
    let m = e.to_string();
    assert!(matches!(e, QueryError::Rejected { .. }), "{e:?}");
    assert!(m.contains("HTTP 403 Forbidden for /info.json"), "{m}");
}

#[test]
fn a_server_that_closes_after_a_document_ends_the_query() {
    // Connection: close after /dynamic.json: /info.json cannot be asked
    let close = b"HTTP/1.1 200 OK\r\nConnection: close\r\nContent-Length: 2\r\n\r\n{}".to_vec();
    let e = drive(&[close], usize::MAX).1.unwrap_err();
    assert!(
        e.to_string().contains("closed the connection before it"),
        "{e}"
    );
    // /info.json's answer cut short by the close: truncated, with the offset
    let t = Instant::now();
    let mut m = QueryMachine::new(QueryOptions::default(), Timing::default(), t);
    m.handle_stream(t, StreamEvent::Connected(peer()));
    m.poll_transmit(t).unwrap();
    m.handle_stream(t, StreamEvent::Received(&ok(b"{}")));
    m.poll_transmit(t).unwrap();
    m.handle_stream(
        t,
        StreamEvent::Received(b"HTTP/1.1 200 OK\r\nContent-Length: 50\r\n\r\n{\"va"),
    );
    m.handle_stream(t, StreamEvent::Closed);
    let e = m.take_result().unwrap().unwrap_err();
    assert!(matches!(e, QueryError::Malformed { .. }), "{e:?}");
}

#[test]
fn players_not_in_time_are_left_out_and_silence_times_out() {
    let timing = Timing::with_attempts(Duration::from_millis(500), 0, 3)
        .connect_timeout(Duration::from_millis(500))
        .read_timeout(Duration::from_millis(500));
    let t = Instant::now();
    let mut m = QueryMachine::new(QueryOptions::default(), timing, t);
    m.handle_stream(t, StreamEvent::Connected(peer()));
    m.poll_transmit(t).unwrap();
    m.handle_stream(t, StreamEvent::Received(&ok(&doc("zap-esx.dynamic.json"))));
    m.poll_transmit(t).unwrap();
    m.handle_stream(t, StreamEvent::Received(&ok(&doc("zap-esx.info.json"))));
    m.poll_transmit(t).unwrap();
    // /players.json never comes
    let due = m.poll_timeout().unwrap();
    assert!(due <= t + Duration::from_millis(500));
    m.handle_timeout(due);
    let a = m.take_result().unwrap().unwrap();
    assert_eq!(a.details.missing, ["/players.json"]);
    assert_eq!(a.status.player_count(), Some(1), "/dynamic.json's count");

    // a server silent from the start: a read timeout naming the document
    let mut m = QueryMachine::new(QueryOptions::default(), timing, t);
    m.handle_stream(t, StreamEvent::Connected(peer()));
    m.poll_transmit(t).unwrap();
    let due = m.poll_timeout().unwrap();
    m.handle_timeout(due);
    let e = m.take_result().unwrap().unwrap_err();
    assert!(
        e.to_string()
            .contains("timed out waiting for /dynamic.json (read timeout"),
        "{e}"
    );
}
