//! StarMade: the reply's size and decoder on a server's byte stream, the mapping, and
//! the stream client machine in two chunkings.
//!
//! Input: a first byte (the chunk size for the second run), then the bytes the server
//! sends.
//!
//! Asserts: no panic; errors point into the stream; a reply is never said to be longer
//! than the header and `MAX_BODY`; at most `MAX_VALUES` values are read; the status
//! survives its JSON state file; the machine ends once the stream closes, with the same
//! result however the bytes are chunked.

use std::time::Instant;

use ogp_fuzz::{check_error, same_through_json};
use ogp_proto::client::Timing;
use ogp_proto::internals::Reader;
use ogp_proto::starmade::client::{QueryMachine, QueryOptions};
use ogp_proto::starmade::wire::{
    decode_reply, reply_size, to_status, HEADER, MAX_BODY, MAX_VALUES,
};

/// One input of the `starmade_stream` target.
pub fn run(data: &[u8]) {
    let Some((&a, stream)) = data.split_first() else {
        return;
    };
    let len = stream.len();
    match reply_size(&Reader::new(stream)) {
        Ok(Some(size)) => {
            assert!(size <= HEADER + MAX_BODY);
            if size <= len {
                match decode_reply(&mut Reader::new(&stream[..size])) {
                    Ok(r) => {
                        assert!(r.values.len() <= MAX_VALUES);
                        same_through_json(&to_status(&r));
                    }
                    Err(e) => check_error(&e, 0, size),
                }
            }
        }
        Ok(None) => {}
        Err(e) => check_error(&e, 0, len),
    }
    ogp_fuzz::same_in_two_chunkings(len, usize::from(a) + 1, |piece| {
        let m = QueryMachine::new(QueryOptions::default(), Timing::default(), Instant::now());
        ogp_fuzz::drive_stream(m, 4242, stream, piece, HEADER + MAX_BODY)
    });
}
