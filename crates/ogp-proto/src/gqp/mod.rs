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

//! The folder's entry ([`ENTRY`]) is built without the `gqp` feature too, so that the
//! name parses and GQP datagrams are still recognised; the codec, client and responder
//! need the feature.

#[cfg(feature = "gqp")]
pub mod auth;
#[cfg(feature = "gqp")]
pub mod client;
#[cfg(feature = "gqp")]
pub mod model;
#[cfg(feature = "gqp")]
pub mod responder;
#[cfg(feature = "gqp")]
pub mod wire;

use crate::protocol::{Entry, Signature, Tier, Transport};

/// The challenge keys' id of GQP (see [`crate::protocol::Serve::guard_id`]).
#[cfg_attr(not(feature = "gqp"), allow(dead_code))]
pub(crate) const GUARD_ID: u8 = 4;

/// GQP's end of a datagram (`EOT`) and of a part of a longer reply (`ETB`), and the start
/// of an encoding header (`SOH`), known here without the feature.
const EOT: u8 = 0x04;
const ETB: u8 = 0x17;
const SOH: u8 = 0x01;

/// GQP's entry (see [`Entry`]): text ending with `EOT` or `ETB` (a weak guess, the last
/// tried); served with the `gqp` feature.
pub const ENTRY: Entry = Entry {
    help: "GQP, the text-based Gameserver Query Protocol draft.",
    signatures: &[Signature {
        tier: Tier::Weak,
        matches: is_gqp_datagram,
    }],
    serve: SERVE,
    ..Entry::new("gqp", "GQP", Transport::Datagram)
};

#[cfg(feature = "gqp")]
const SERVE: Option<crate::protocol::Serve> = Some(crate::protocol::Serve {
    requests: Signature {
        tier: Tier::Weak,
        matches: is_gqp,
    },
    own_port: false,
    answers: &[
        crate::protocol::AnswerKind::Challenge,
        crate::protocol::AnswerKind::Error,
        crate::protocol::AnswerKind::Commands,
    ],
    guard_id: GUARD_ID,
});
#[cfg(not(feature = "gqp"))]
const SERVE: Option<crate::protocol::Serve> = None;

/// Whether `datagram` can be a GQP query or reply: it starts with `SOH` (an encoding
/// header) or printable ASCII (a command or a record), as GQP text does, and ends with
/// `EOT` or `ETB`. (A binary request that happens to end in `04`, such as a Cube 2 ping's
/// random id, is not GQP.)
fn is_gqp_datagram(datagram: &[u8]) -> bool {
    matches!(
        (datagram.first(), datagram.last()),
        (Some(&first), Some(&(EOT | ETB))) if first == SOH || (0x20..=0x7e).contains(&first)
    )
}

#[cfg(feature = "gqp")]
pub use wire::{
    decode_query, decode_reply, encode_query, encode_reply, render_query, render_replies, Charset,
    Command, Compression, Encoding, FrameError, Query, Record, Reply, ReplyDatagram, StatusCode,
};

#[cfg(feature = "gqp")]
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

#[cfg(all(test, feature = "gqp"))]
mod tests {
    use super::*;

    #[test]
    fn ends_are_the_wire_constants() {
        assert_eq!((EOT, ETB, SOH), (wire::EOT, wire::ETB, wire::SOH));
    }

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
