//! `ogp serve --metrics ADDR`: `GET /metrics` over a plain HTTP/1.0 request. The body
//! must parse as the Prometheus text format (a strict line parser below: `# HELP`,
//! `# TYPE`, samples with a float value, every sample's family typed first, valid
//! names), with the right Content-Type; after A2S and OGP queries (challenged, with a
//! wrong challenge, and garbage of every kind) the counters move by exactly the expected
//! amounts; state-file reloads are counted by outcome and the players gauge follows the
//! served state.
//!
//! Everything runs on 127.0.0.1; every wait is bounded.

use crate::common;

use std::collections::{BTreeMap, HashMap};
use std::io::{Read, Write};
use std::net::{TcpListener, TcpStream, UdpSocket};
use std::time::{Duration, Instant};

use common::exposition::{parse_exposition, Exposition};
use common::{exchange, serve_with};
use ogp_proto::gamespy3::request::{InfoKind, Request};

const STATE: &str = include_str!("../../../ogp-proto/tests/data/state.json");
const WAIT: Duration = Duration::from_millis(500);
const CONTENT_TYPE: &str = "text/plain; version=0.0.4; charset=utf-8";

const A2S_INFO: &[u8] = b"\xFF\xFF\xFF\xFFTSource Engine Query\0";
const OGP_PING: &[u8] = b"\xFF\xFF\xFF\xFFOGP\0\x03\x00\x00";
/// The PHP client's Default Query body.
const PHP_BODY: [u8; 13] = [
    0xbf, 0x01, 0x8f, 0x9f, 0x0f, 0x1f, 0x3f, 0x3f, 0xbf, 0xbf, 0xbf, 0x01, 0x0f,
];

/// An OGP Default Query with HeadSize 7 (the challenge field only).
fn ogp_query(challenge: u32) -> Vec<u8> {
    let mut d = b"\xFF\xFF\xFF\xFFOGP\0\x07\x01\x12".to_vec();
    d.extend_from_slice(&challenge.to_le_bytes());
    d.extend_from_slice(&PHP_BODY);
    d
}

// ------------------------------------------------------------------------------------
// The exposition format

#[test]
fn the_parser_is_strict() {
    let good = "# HELP a_total A.\n# TYPE a_total counter\na_total{x=\"1\\\"\"} 3\n";
    let x = parse_exposition(good).unwrap();
    assert_eq!(x.value("a_total", &[("x", "1\"")]), 3.0);
    for bad in [
        "a 1\n",                                        // no TYPE
        "# TYPE a gauge\na one\n",                      // not a float
        "# TYPE a gauge\na{x=1} 1\n",                   // unquoted label
        "# TYPE a gauge\n1a 1\n",                       // bad name
        "# TYPE a gauge\na 1",                          // no final newline
        "# TYPE a counter\na 1\n",                      // counter without _total
        "# TYPE a gauge\na 1\n# TYPE a gauge\n",        // TYPE twice
        "# TYPE a gauge\na{x=\"1\"} 1\na{x=\"1\"} 2\n", // series twice
    ] {
        assert!(parse_exposition(bad).is_err(), "accepted {bad:?}");
    }
}

// ------------------------------------------------------------------------------------
// HTTP

/// `GET path` over HTTP/1.0: the status code, the headers (names lower-cased), the body.
fn http_get(port: u16, path: &str) -> (u16, HashMap<String, String>, String) {
    let mut s = TcpStream::connect(("127.0.0.1", port)).expect("connect to --metrics");
    s.set_read_timeout(Some(Duration::from_secs(5))).unwrap();
    write!(s, "GET {path} HTTP/1.0\r\nHost: 127.0.0.1\r\n\r\n").unwrap();
    let mut raw = Vec::new();
    s.read_to_end(&mut raw).expect("the whole response");
    let text = String::from_utf8(raw).expect("a UTF-8 response");
    let (head, body) = text.split_once("\r\n\r\n").expect("a header block");
    let mut lines = head.split("\r\n");
    let status_line = lines.next().unwrap_or_default();
    let code = status_line
        .split(' ')
        .nth(1)
        .and_then(|c| c.parse().ok())
        .unwrap_or_else(|| panic!("status line {status_line:?}"));
    let headers = lines
        .filter_map(|l| l.split_once(':'))
        .map(|(k, v)| (k.trim().to_ascii_lowercase(), v.trim().to_string()))
        .collect();
    (code, headers, body.to_string())
}

fn scrape(port: u16) -> Exposition {
    let (code, headers, body) = http_get(port, "/metrics");
    assert_eq!(code, 200, "{body}");
    assert_eq!(
        headers.get("content-type").map(String::as_str),
        Some(CONTENT_TYPE)
    );
    parse_exposition(&body).unwrap_or_else(|e| panic!("{e}\n--- body ---\n{body}"))
}

fn free_tcp_port() -> u16 {
    TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .map(|a| a.port())
        .expect("a free TCP port")
}

/// Polls the metrics until `f` holds, or panics after `limit`.
fn wait_for(port: u16, limit: Duration, what: &str, f: impl Fn(&Exposition) -> bool) {
    let t = Instant::now();
    loop {
        let x = scrape(port);
        if f(&x) {
            return;
        }
        assert!(
            t.elapsed() < limit,
            "{what} not seen within {limit:?}: {x:#?}"
        );
        std::thread::sleep(Duration::from_millis(100));
    }
}

// ------------------------------------------------------------------------------------
// The test

const ANSWERS: &str = "ogp_serve_answers_total";
const DROPPED: &str = "ogp_serve_dropped_total";

/// Every answer and drop series, with its value.
fn counts(x: &Exposition) -> BTreeMap<String, f64> {
    x.samples
        .iter()
        .filter(|s| s.name == ANSWERS || s.name == DROPPED)
        .map(|s| (format!("{}{:?}", s.name, s.labels), s.value))
        .collect()
}

fn key(name: &str, labels: &[(&str, &str)]) -> String {
    let l: BTreeMap<String, String> = labels
        .iter()
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect();
    format!("{name}{l:?}")
}

#[test]
fn metrics_count_answers_by_type_and_drops_by_reason() {
    let metrics_port = free_tcp_port();
    let metrics_addr = format!("127.0.0.1:{metrics_port}");
    let served = serve_with(
        "metrics",
        STATE,
        &["--metrics", &metrics_addr, "--reload-interval", "0.1"],
        |s| !exchange(s, A2S_INFO, Duration::from_millis(300)).is_empty(),
    );
    let sock = UdpSocket::bind("127.0.0.1:0").unwrap();
    sock.connect(("127.0.0.1", served.port)).unwrap();

    // other paths: 404
    assert_eq!(http_get(metrics_port, "/").0, 404);

    let before = scrape(metrics_port);
    assert_eq!(
        before.value(
            "ogp_serve_build_info",
            &[("version", env!("CARGO_PKG_VERSION"))]
        ),
        1.0
    );
    assert_eq!(before.types["ogp_serve_answers_total"], "counter");
    assert_eq!(before.types["ogp_serve_players"], "gauge");
    assert_eq!(before.value("ogp_serve_players", &[]), 3.0);

    let mut sent = 0u64;
    let mut answered = 0u64;
    let mut ask = |d: &[u8], replies: usize| -> Vec<Vec<u8>> {
        let got = exchange(&sock, d, WAIT);
        assert_eq!(got.len(), replies, "{d:02x?} got {got:02x?}");
        sent += 1;
        answered += replies as u64;
        got
    };

    // A2S: the challenge, then INFO, PLAYER, RULES with it; INFO with a wrong one gets a
    // new challenge
    let c = ask(A2S_INFO, 1)[0][5..9].to_vec();
    ask(&[A2S_INFO, &c].concat(), 1);
    ask(&[b"\xFF\xFF\xFF\xFFU".as_slice(), &c].concat(), 1);
    ask(&[b"\xFF\xFF\xFF\xFFV".as_slice(), &c].concat(), 1);
    let wrong: Vec<u8> = c.iter().map(|b| b ^ 0x5a).collect();
    assert_eq!(ask(&[A2S_INFO, &wrong].concat(), 1)[0][4], 0x41);
    // OGP: Error 3 with a challenge, the full answer with it, a ping
    let error3 = ask(&ogp_query(0), 1);
    let oc = u32::from_le_bytes(error3[0][11..15].try_into().unwrap());
    ask(&ogp_query(oc), 1);
    ask(OGP_PING, 1);
    // garbage of every kind: silence
    ask(b"garbage, not a query", 0);
    ask(b"\xFF\xFF\xFF\xFFA\x01\x02\x03\x04", 0); // a challenge reply as a request
    ask(
        &[b"\xFF\xFF\xFF\xFFT".as_slice(), &[b'x'; 1500]].concat(),
        0,
    );
    ask(b"\xFF\xFF\xFF\xFFi", 0); // A2A_PING, off by default
    let gs3 = Request::Info {
        session_id: 7,
        challenge: Some(12345),
        kind: InfoKind::Full,
    }
    .to_bytes();
    ask(&gs3, 0);

    let after = scrape(metrics_port);
    let mut want = counts(&before);
    for (labels, n) in [
        (&[("protocol", "a2s"), ("type", "challenge")], 2.0),
        (&[("protocol", "a2s"), ("type", "info")], 1.0),
        (&[("protocol", "a2s"), ("type", "players")], 1.0),
        (&[("protocol", "a2s"), ("type", "rules")], 1.0),
        (&[("protocol", "ogp"), ("type", "challenge")], 1.0),
        (&[("protocol", "ogp"), ("type", "full")], 1.0),
        (&[("protocol", "ogp"), ("type", "ping")], 1.0),
    ] {
        *want.get_mut(&key(ANSWERS, labels)).expect(ANSWERS) += n;
    }
    for reason in [
        "unknown_protocol",
        "malformed",
        "oversized",
        "disabled",
        "bad_challenge",
    ] {
        *want
            .get_mut(&key(DROPPED, &[("reason", reason)]))
            .expect(DROPPED) += 1.0;
    }
    assert_eq!(counts(&after), want, "answers and drops moved as expected");
    let delta = |name: &str| after.value(name, &[]) - before.value(name, &[]);
    assert_eq!(delta("ogp_serve_received_datagrams_total"), sent as f64);
    assert_eq!(delta("ogp_serve_sent_datagrams_total"), answered as f64);
    assert!(delta("ogp_serve_received_bytes_total") > 1500.0);
    assert!(delta("ogp_serve_sent_bytes_total") > 100.0);

    // reloads: a good file with one player, then a broken one
    let reloads = |x: &Exposition, outcome: &str| {
        x.value("ogp_serve_state_reloads_total", &[("outcome", outcome)])
    };
    assert_eq!(reloads(&after, "ok"), 0.0);
    assert_eq!(reloads(&after, "error"), 0.0);
    std::fs::write(
        served.state_path(),
        r#"{"host_name": "reloaded", "players": [{"name": "only one"}]}"#,
    )
    .unwrap();
    wait_for(metrics_port, Duration::from_secs(10), "the reload", |x| {
        reloads(x, "ok") == 1.0 && x.value("ogp_serve_players", &[]) == 1.0
    });
    std::fs::write(served.state_path(), "{ not json").unwrap();
    wait_for(metrics_port, Duration::from_secs(10), "the refusal", |x| {
        reloads(x, "error") == 1.0 && reloads(x, "ok") == 1.0
    });
    // the last good state is still served
    assert_eq!(scrape(metrics_port).value("ogp_serve_players", &[]), 1.0);
}
