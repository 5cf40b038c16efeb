//! TeamSpeak 3 ServerQuery: the record splitter, the record and error-line parsers and
//! unescaping on a server's byte stream, and the stream client machine in two chunkings.
//!
//! Input: a first byte (the chunk size for the second run), then the bytes the server
//! sends.
//!
//! Asserts: no panic; a piece is never longer than the stream nor than the record cap;
//! escaping round-trips through unescaping; the machine holds at most one record and ends
//! once the stream closes, with the same result however the bytes are chunked.

use std::time::Instant;

use ogp_fuzz::check_error;
use ogp_proto::client::Timing;
use ogp_proto::teamspeak3::client::{QueryMachine, QueryOptions};
use ogp_proto::teamspeak3::wire::{
    error_line, escape, next_record, parse_record, unescape, MAX_RECORD,
};

/// One input of the `teamspeak3_stream` target.
pub fn run(data: &[u8]) {
    let Some((&a, stream)) = data.split_first() else {
        return;
    };
    let len = stream.len();
    let mut at = 0;
    while let Some(rest) = stream.get(at..) {
        match next_record(rest, at, false) {
            Ok(Some((text, _, n))) => {
                assert!(n >= 1 && n <= rest.len() && text.len() < n);
                let t = String::from_utf8_lossy(text);
                let (r, _) = parse_record(&t);
                for (_, v) in &r.0 {
                    assert_eq!(unescape(&escape(v)), *v, "escape round trip");
                }
                let _ = error_line(&t);
                at += n;
            }
            Ok(None) => break,
            Err(e) => {
                check_error(&e, 0, len);
                break;
            }
        }
    }
    let whole = query(stream, len);
    let pieces = query(stream, usize::from(a) + 1);
    assert_eq!(whole, pieces, "the chunking changed the result");
}

fn query(stream: &[u8], piece: usize) -> Result<String, String> {
    let m = QueryMachine::new(QueryOptions::default(), Timing::default(), Instant::now());
    ogp_fuzz::drive_stream(m, 10011, stream, piece, MAX_RECORD)
}
