//! Minecraft: the frame splitter, the status, pong and legacy decoders, the status
//! mapping, and the client machine fed the input as a byte stream in pieces.
//!
//! Input: the first byte picks the machine (bit 0: legacy ping, bit 1: no ping) and the
//! piece size (`a / 4 + 1` bytes); the rest is what the server sends.
//!
//! Asserts: no panic; errors point into the input; a frame never claims more than the
//! cap; the machine ends (an answer or an error) once the stream closes, with the same
//! result whether the bytes came whole or in pieces; it never counts more bytes than it
//! was given.

use std::net::SocketAddr;
use std::time::Instant;

use ogp_fuzz::check_error;
use ogp_proto::client::{QueryDriver, StreamEvent, Timing};
use ogp_proto::internals::Reader;
use ogp_proto::minecraft::client::{QueryMachine, QueryOptions};
use ogp_proto::minecraft::mapping::json_to_status;
use ogp_proto::minecraft::wire::{
    decode_legacy, decode_pong, decode_status, split_frame, split_legacy, MAX_STATUS_FRAME,
    MAX_STATUS_JSON_BYTES,
};

fn query(opts: &QueryOptions, stream: &[u8], piece: usize) -> Result<String, String> {
    let now = Instant::now();
    let mut m = QueryMachine::new(opts.clone(), Timing::default(), 7, now);
    let peer: SocketAddr = "127.0.0.1:25565".parse().unwrap();
    m.handle_stream(now, StreamEvent::Connected(peer));
    for chunk in stream.chunks(piece.max(1)) {
        // What it writes (handshake, ping) goes nowhere: the server's bytes are fixed.
        while m.poll_transmit(now).is_some() {}
        m.handle_stream(now, StreamEvent::Received(chunk));
    }
    m.handle_stream(now, StreamEvent::Closed);
    match m
        .take_result()
        .expect("the machine ends once the stream closes")
    {
        Ok(a) => {
            assert!(a.bytes <= stream.len());
            Ok(format!("{:?}", a.status))
        }
        Err(e) => Err(e.to_string()),
    }
}

/// One input of the `minecraft_stream` target.
pub fn run(data: &[u8]) {
    let Some((&a, stream)) = data.split_first() else {
        return;
    };
    let len = stream.len();
    let r = Reader::new(stream);
    match split_frame(&r, MAX_STATUS_FRAME) {
        Ok(Some(f)) => {
            assert!(f.len <= MAX_STATUS_FRAME && f.total() <= len);
            let mut body = r.clone();
            body.take(f.header, "h").unwrap();
            let body = body.sub(f.len, "b").unwrap();
            match decode_status(&mut body.clone(), MAX_STATUS_JSON_BYTES) {
                Ok(json) => {
                    if let Ok(v) = serde_json::from_str(json) {
                        let _ = json_to_status(&v);
                    }
                }
                Err(e) => check_error(&e, 0, len),
            }
            if let Err(e) = decode_pong(&mut body.clone()) {
                check_error(&e, 0, len);
            }
        }
        Ok(None) => {}
        Err(e) => check_error(&e, 0, len),
    }
    match split_legacy(&r) {
        Ok(Some(n)) => {
            assert!(n <= len);
            if let Err(e) = decode_legacy(&mut r.clone()) {
                check_error(&e, 0, len);
            }
        }
        Ok(None) => {}
        Err(e) => check_error(&e, 0, len),
    }
    let mut opts = QueryOptions::default();
    opts.legacy = a & 1 != 0;
    opts.ping = a & 2 == 0;
    let whole = query(&opts, stream, len);
    let pieces = query(&opts, stream, usize::from(a / 4) + 1);
    assert_eq!(whole, pieces, "the chunking changed the result");
}
