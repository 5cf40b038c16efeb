//! OpenTTD: the packet splitter and game-info decoder on a server's byte stream, the
//! mapping, and the stream client machine in two chunkings.
//!
//! Input: a first byte (the chunk size for the second run), then the bytes the server
//! sends.
//!
//! Asserts: no panic; errors point into the stream; a packet is never said to be longer
//! than the stream nor than 65,535 bytes; a game info without warnings re-encodes to its
//! own packet; its status survives its JSON state file; the machine ends once the
//! stream closes, with the same result however the bytes are chunked.

use std::time::Instant;

use ogp_fuzz::check_error;
use ogp_proto::client::Timing;
use ogp_proto::internals::Reader;
use ogp_proto::openttd::client::{QueryMachine, QueryOptions};
use ogp_proto::openttd::mapping::game_info_to_status;
use ogp_proto::openttd::wire::{decode_game_info, split_packet, HEADER, PACKET_SERVER_GAME_INFO};
use ogp_proto::Status;

/// One input of the `openttd_stream` target.
pub fn run(data: &[u8]) {
    let Some((&a, stream)) = data.split_first() else {
        return;
    };
    let len = stream.len();
    let r = Reader::new(stream);
    match split_packet(&r) {
        Ok(Some((kind, size))) => {
            assert!(size <= len && size <= usize::from(u16::MAX) && size >= HEADER);
            let body = &stream[HEADER..size];
            match decode_game_info(&mut Reader::with_base(body, HEADER)) {
                Ok(g) => {
                    let s = game_info_to_status(&g);
                    let json = Status::from_json(&s.to_json_pretty()).expect("state file");
                    assert_eq!(json, s, "status changed through JSON");
                    if g.warnings.is_empty() && kind == PACKET_SERVER_GAME_INFO {
                        let mut p = Vec::new();
                        g.encode_packet(&mut p);
                        // the same fields; the encoder writes only what it read
                        let again = decode_game_info(&mut Reader::new(&p[HEADER..])).unwrap();
                        assert_eq!(again, g, "re-encodes to the same info");
                    }
                }
                Err(e) => check_error(&e, 0, len),
            }
        }
        Ok(None) => {}
        Err(e) => check_error(&e, 0, len),
    }
    let whole = query(stream, len);
    let pieces = query(stream, usize::from(a) + 1);
    assert_eq!(whole, pieces, "the chunking changed the result");
}

fn query(stream: &[u8], piece: usize) -> Result<String, String> {
    let m = QueryMachine::new(QueryOptions::default(), Timing::default(), Instant::now());
    ogp_fuzz::drive_stream(m, 3979, stream, piece, usize::MAX)
}
