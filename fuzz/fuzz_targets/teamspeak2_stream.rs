//! TeamSpeak 2's query: the line classifier and table reader on a server's byte stream,
//! and the stream client machine in two chunkings.
//!
//! Input: a first byte (the chunk size for the second run), then the bytes the server
//! sends.
//!
//! Asserts: no panic; a table keeps at most the rows asked; the machine holds at most one
//! line and ends once the stream closes, with the same result however the bytes are
//! chunked.

use std::time::Instant;

use ogp_proto::client::Timing;
use ogp_proto::teamspeak2::client::{QueryMachine, QueryOptions};
use ogp_proto::teamspeak2::wire::{classify, Table};
use ogp_proto::teamspeak3::wire::MAX_RECORD;

/// One input of the `teamspeak2_stream` target.
pub fn run(data: &[u8]) {
    let Some((&a, stream)) = data.split_first() else {
        return;
    };
    let text = String::from_utf8_lossy(stream);
    let mut t = Table::default();
    for line in text.split("\r\n") {
        let _ = classify(line);
        t.push_line(line, 8);
        assert!(t.rows.len() <= 8 && t.rows.iter().all(|r| r.len() <= t.fields.len().max(1)));
    }
    let whole = query(stream, stream.len());
    let pieces = query(stream, usize::from(a) + 1);
    assert_eq!(whole, pieces, "the chunking changed the result");
}

fn query(stream: &[u8], piece: usize) -> Result<String, String> {
    let m = QueryMachine::new(QueryOptions::default(), Timing::default(), Instant::now());
    ogp_fuzz::drive_stream(m, 51234, stream, piece, MAX_RECORD)
}
