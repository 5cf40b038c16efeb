//! FiveM over HTTP: the client machine of the HTTP-JSON shape (`client_http`) with the
//! FiveM mapping, on a server's bytes (the answers to `/dynamic.json`, `/info.json` and
//! `/players.json` one after the other) fed whole and in chunks.
//!
//! Input: a first byte (the chunk size of the second run), then the bytes the server
//! sends.
//!
//! Asserts: no panic; a result once the server closed; the same outcome (the status or
//! the error's kind) however the bytes are chunked; the players, rules and add-ons
//! within their caps; nothing more written than the three requests.

use std::net::SocketAddr;
use std::time::Instant;

use ogp_proto::client::{QueryDriver, StreamEvent, Timing};
use ogp_proto::fivem::client::{QueryMachine, QueryOptions};
use ogp_proto::fivem::documents::{MAX_PLAYERS, MAX_RESOURCES, MAX_VARS};

/// Feeds `stream` in chunks of `size` bytes, then the close: the status (as JSON) or the
/// error's kind.
fn read(stream: &[u8], size: usize) -> Result<String, &'static str> {
    let t = Instant::now();
    let peer: SocketAddr = "127.0.0.1:30120".parse().expect("address");
    let mut m = QueryMachine::new(QueryOptions::default(), Timing::default(), t);
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
    assert!(requests <= 3, "{requests} requests");
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
    let whole = read(stream, stream.len());
    let chunked = read(stream, usize::from(a % 17) + 1);
    assert_eq!(whole, chunked, "the chunking changed the outcome");
}
