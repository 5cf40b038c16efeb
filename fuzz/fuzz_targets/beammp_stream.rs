//! BeamMP: the reply's framing and decoder on a server's byte stream, the mapping, and
//! the stream client machine in two chunkings.
//!
//! Input: a first byte (the chunk size for the second run), then the bytes the server
//! sends.
//!
//! Asserts: no panic; errors point into the stream; a body is never said to be longer
//! than the stream nor than `MAX_BODY`; its status survives its JSON state file; the
//! machine ends once the stream closes, with the same result however the bytes are
//! chunked, holding at most the length and `MAX_BODY` bytes.

use std::time::Instant;

use ogp_fuzz::{check_error, same_through_json};
use ogp_proto::beammp::client::{QueryMachine, QueryOptions};
use ogp_proto::beammp::wire::{decode_info, frame, to_status, MAX_BODY};
use ogp_proto::client::Timing;
use ogp_proto::internals::Reader;

/// One input of the `beammp_stream` target.
pub fn run(data: &[u8]) {
    let Some((&a, stream)) = data.split_first() else {
        return;
    };
    let len = stream.len();
    match frame(&Reader::new(stream), true) {
        Ok(Some(f)) => {
            assert!(f.header + f.len <= len && f.len <= MAX_BODY);
            match decode_info(&stream[f.header..f.header + f.len], f.header) {
                Ok(info) => same_through_json(&to_status(&info)),
                Err(e) => check_error(&e, 0, len),
            }
        }
        Ok(None) => {}
        Err(e) => check_error(&e, 0, len),
    }
    ogp_fuzz::same_in_two_chunkings(len, usize::from(a) + 1, |piece| {
        let m = QueryMachine::new(QueryOptions::default(), Timing::default(), Instant::now());
        ogp_fuzz::drive_stream(m, 30814, stream, piece, MAX_BODY + 4)
    });
}
