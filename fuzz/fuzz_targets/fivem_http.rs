//! The HTTP-JSON games: the client machine of the HTTP-JSON shape (`client_http`) with
//! the FiveM mapping, on a server's bytes (the answers to `/dynamic.json`, `/info.json`
//! and `/players.json` one after the other) fed whole and in chunks; the same bytes to
//! the Eco (`/frontpage`) and ElDewrito (`/`) machines, whose documents have no decoder
//! beyond serde's.
//!
//! Input: a first byte (the chunk size of the second run), then the bytes the server
//! sends.
//!
//! Asserts: no panic; a result once the server closed; the same outcome (the status or
//! the error's kind) however the bytes are chunked; the players, rules and add-ons
//! within their caps; nothing more written than the requests of the protocol.

use std::net::SocketAddr;
use std::time::Instant;

use ogp_proto::client::{QueryDriver, StreamEvent, Timing};
use ogp_proto::fivem::client::{QueryMachine, QueryOptions};
use ogp_proto::fivem::documents::{MAX_PLAYERS, MAX_RESOURCES, MAX_VARS};
use ogp_proto::{eco, eldewrito};

/// Feeds `stream` in chunks of `size` bytes to FiveM's machine, then the close: the
/// status (as JSON) or the error's kind.
fn read(stream: &[u8], size: usize) -> Result<String, &'static str> {
    let t = Instant::now();
    read_with(
        QueryMachine::new(QueryOptions::default(), Timing::default(), t),
        3,
        stream,
        size,
    )
}

/// Feeds `stream` in chunks of `size` bytes to `m` (which writes at most `max_requests`),
/// then the close: the status (as JSON) or the error's kind.
fn read_with<M: QueryDriver>(
    mut m: M,
    max_requests: usize,
    stream: &[u8],
    size: usize,
) -> Result<String, &'static str> {
    let t = Instant::now();
    let peer: SocketAddr = "127.0.0.1:30120".parse().expect("address");
    m.handle_stream(t, StreamEvent::Connected(peer));
    let mut requests = 0;
    let mut out = Vec::new();
    while m.poll_transmit_into(t, &mut out) {
        requests += 1;
    }
    for chunk in stream.chunks(size.max(1)) {
        m.handle_stream(t, StreamEvent::Received(chunk));
        while m.poll_transmit_into(t, &mut out) {
            requests += 1;
        }
        if m.close_due() {
            break;
        }
    }
    assert!(requests <= max_requests, "{requests} requests");
    m.handle_stream(t, StreamEvent::Closed);
    let r = m.take_result().expect("a result once the server closed");
    match r {
        Ok(a) => {
            let s = &a.status;
            assert!(s.players.as_ref().map_or(0, Vec::len) <= MAX_PLAYERS);
            assert!(s.addons.as_ref().map_or(0, Vec::len) <= MAX_RESOURCES);
            assert!(s.rules.as_ref().map_or(0, |r| r.len()) <= MAX_VARS);
            Ok(s.to_json_pretty())
        }
        Err(e) => Err(e.kind()),
    }
}

/// One input of the `fivem_http` target.
pub fn run(data: &[u8]) {
    let Some((&a, stream)) = data.split_first() else {
        return;
    };
    let size = usize::from(a % 17) + 1;
    let whole = read(stream, stream.len());
    let chunked = read(stream, size);
    assert_eq!(whole, chunked, "the chunking changed the outcome");
    let t = Instant::now();
    let eco = |size| {
        let m = eco::client::QueryMachine::new(Default::default(), Timing::default(), t);
        read_with(m, 1, stream, size)
    };
    let e = eco(stream.len());
    assert_eq!(e, eco(size), "the chunking changed Eco's outcome");
    let eld = |size| {
        let m = eldewrito::client::QueryMachine::new(Default::default(), Timing::default(), t);
        read_with(m, 1, stream, size)
    };
    let d = eld(stream.len());
    assert_eq!(d, eld(size), "the chunking changed ElDewrito's outcome");
}
