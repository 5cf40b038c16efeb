//! Open Tibia status: the XML document's decoder on a server's byte stream, the mapping,
//! and the stream client machine in two chunkings.
//!
//! Input: a first byte (the chunk size for the second run), then the bytes the server
//! sends.
//!
//! Asserts: no panic; errors point into the stream; the fields kept stay within
//! `MAX_FIELDS`; the status survives its JSON state file; the machine ends once the
//! stream closes, with the same result however the bytes are chunked, holding at most
//! `MAX_BODY` bytes.

use std::time::Instant;

use ogp_fuzz::{check_error, same_through_json};
use ogp_proto::client::Timing;
use ogp_proto::tibia::client::{QueryMachine, QueryOptions};
use ogp_proto::tibia::wire::{decode_info, to_status, MAX_BODY, MAX_FIELDS};

/// One input of the `tibia_stream` target.
pub fn run(data: &[u8]) {
    let Some((&a, stream)) = data.split_first() else {
        return;
    };
    let len = stream.len();
    match decode_info(stream, 0) {
        Ok(info) => {
            assert!(info.fields.len() <= MAX_FIELDS);
            same_through_json(&to_status(&info));
        }
        Err(e) => check_error(&e, 0, len),
    }
    ogp_fuzz::same_in_two_chunkings(len, usize::from(a) + 1, |piece| {
        let m = QueryMachine::new(QueryOptions::default(), Timing::default(), Instant::now());
        ogp_fuzz::drive_stream(m, 7171, stream, piece, MAX_BODY)
    });
}
