//! GQP, the "Gameserver Query Protocol" draft (`shared/specs/003`): a text protocol of
//! commands and records separated by ASCII control codes, both directions.
//!
//! * [`wire`]: the grammar: queries (optional `SOH encoding ACK` header, commands
//!   separated by `GS`, arguments by `RS`, ended by `EOT`), replies (a two-digit status
//!   code, the command name, records separated by `RS`, replies separated by `GS`, ended by
//!   `EOT` or, for a block of a longer transmission, `ETB`), DLE escaping of control bytes
//!   inside strings, encodings (`utf-8`, `deflate`, `gzip` and their combinations) with a
//!   cap on decompressed sizes, and [`render_replies`] for people.
//! * [`model`]: the extension commands that carry the [status model](crate::Status)
//!   (`serverinfo`, `players`, `teams`, `rules`, `addons`, `limits`) in records, and back.
//! * [`auth`]: address-proof tokens and the `login`/`validate` pair, in which the password
//!   never crosses the wire (HMAC-SHA256 of a stateless challenge).
//! * [`responder`]: one query datagram in, reply datagrams out, with the abuse limits.
//! * [`client`]: the query state machine (status mode and raw commands).
//!
//! The draft leaves much open; every choice made here is written down next to the draft
//! line it resolves in `docs/gqp.md` (entries G1…). Every function here is pure: bytes in,
//! bytes out. No function panics on any input, and decoders allocate at most a small
//! multiple of their (capped) input.

pub mod auth;
pub mod client;
pub mod model;
pub mod responder;
pub mod wire;

pub use wire::{
    decode_query, decode_reply, encode_query, encode_reply, render_query, render_replies, Charset,
    Command, Compression, Encoding, FrameError, Query, Record, Reply, ReplyDatagram, StatusCode,
};

/// Whether a datagram can be GQP, for a listener shared with the binary protocols (G20):
/// it starts with `SOH` (an encoding header) or a printable ASCII byte (the first
/// command's name), and its last byte is `EOT`. The binary protocols start with `0xFF`
/// (OGP, A2S) or `0xFE` (GameSpy v3), which are neither.
pub fn is_gqp(datagram: &[u8]) -> bool {
    match (datagram.first(), datagram.last()) {
        (Some(&first), Some(&last)) => {
            datagram.len() >= 2
                && last == wire::EOT
                && (first == wire::SOH || (0x20..=0x7e).contains(&first))
        }
        _ => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tells_gqp_from_the_binary_protocols() {
        assert!(is_gqp(b"identify\x04"));
        assert!(is_gqp(b"\x01utf-8\x06identify\x04"));
        assert!(!is_gqp(b"\xff\xff\xff\xffOGP\x00\x04"));
        assert!(!is_gqp(b"\xfe\xfd\x09abcd\x04"));
        assert!(!is_gqp(b"identify"));
        assert!(!is_gqp(b"\x04"));
        assert!(!is_gqp(b""));
        assert!(!is_gqp(b"\x1didentify\x04"));
    }
}
