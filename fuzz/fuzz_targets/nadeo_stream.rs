//! Nadeo GBXRemote 2: the XML-RPC response reader on arbitrary bytes, the mapping, and
//! the stream client machine (handshake, framed calls, callbacks) in two chunkings.
//!
//! Input: a first byte (its low bit: log in first; the rest, the chunk size for the
//! second run), then the bytes the server sends (the machine's handles are
//! `0x80000001` up, one a call).
//!
//! Asserts: no panic; the reader's errors point into its input; the status survives its
//! JSON state file; the machine ends once the stream closes, with the same result however
//! the bytes are chunked, holding at most a frame's header and `MAX_FRAME` bytes.

use std::time::Instant;

use ogp_fuzz::{check_error, same_through_json};
use ogp_proto::client::Timing;
use ogp_proto::nadeo::client::{Credentials, QueryMachine, QueryOptions};
use ogp_proto::nadeo::wire::{to_status, Replies, HEADER, MAX_FRAME};
use ogp_proto::nadeo::xmlrpc::{parse_response, Response};

/// One input of the `nadeo_stream` target.
pub fn run(data: &[u8]) {
    let Some((&a, stream)) = data.split_first() else {
        return;
    };
    let len = stream.len();
    match parse_response(stream, 8) {
        Ok(Response::Ok(v)) => {
            let r = Replies {
                server_options: Some(v.clone()),
                map_info: Some(v.clone()),
                game_info: Some(v.clone()),
                version: Some(v.clone()),
                players: Some(vec![v]),
            };
            same_through_json(&to_status(&r));
        }
        Ok(Response::Fault { .. }) => {}
        Err(e) => check_error(&e, 8, len),
    }
    let login = a & 1 == 1;
    ogp_fuzz::same_in_two_chunkings(len, usize::from(a >> 1) + 1, |piece| {
        let mut o = QueryOptions::default();
        if login {
            o.credentials = Some(Credentials::new("User", "User"));
        }
        let m = QueryMachine::new(o, Timing::default(), Instant::now());
        ogp_fuzz::drive_stream(m, 5000, stream, piece, HEADER + MAX_FRAME)
    });
}
