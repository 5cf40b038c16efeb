//! Battlefield (Frostbite): the packet splitter and decoder on a server's byte stream, the
//! `serverInfo` and `listPlayers` decoders on its words, the mapping, and the stream
//! client machine in two chunkings.
//!
//! Input: a first byte (the chunk size for the second run), then the bytes the server
//! sends.
//!
//! Asserts: no panic; errors point into the stream; a packet is never said to be longer
//! than the stream nor than the cap; a decoded packet re-encodes to its own bytes when its
//! words are UTF-8; a status survives its JSON state file; the machine ends once the stream
//! closes, with the same result however the bytes are chunked.

use std::time::Instant;

use ogp_fuzz::check_error;
use ogp_proto::battlefield::client::{QueryMachine, QueryOptions};
use ogp_proto::battlefield::mapping::to_status;
use ogp_proto::battlefield::wire::{
    decode_packet, decode_players, decode_server_info, encode, split_packet, MAX_PACKET,
};
use ogp_proto::client::Timing;
use ogp_proto::internals::Reader;
use ogp_proto::Status;

/// One input of the `battlefield_stream` target.
pub fn run(data: &[u8]) {
    let Some((&a, stream)) = data.split_first() else {
        return;
    };
    let len = stream.len();
    match split_packet(&Reader::new(stream)) {
        Ok(Some(size)) => {
            assert!(size <= len && size <= MAX_PACKET);
            match decode_packet(&mut Reader::new(&stream[..size])) {
                Ok(p) => {
                    let words: Vec<&str> = p.words.iter().map(|w| w.as_str()).collect();
                    let mut again = Vec::new();
                    encode(p.sequence, &words, &mut again);
                    // Latin-1 words re-encode longer (as UTF-8); UTF-8 ones exactly.
                    if again.len() == size {
                        assert_eq!(again, &stream[..size], "re-encodes to its bytes");
                    }
                    if let Ok(info) = decode_server_info(&p.words) {
                        let players = decode_players(&p.words).ok();
                        let s = to_status(&info, (None, None), players.as_ref());
                        let json = Status::from_json(&s.to_json_pretty()).expect("state file");
                        assert_eq!(json, s, "status changed through JSON");
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
    ogp_fuzz::drive_stream(m, 47200, stream, piece, MAX_PACKET)
}
