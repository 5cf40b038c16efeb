//! The Open Game Protocol **v0.02 draft** (`shared/specs/001_…`): its wire codec, both
//! directions, queries and answers, a responder and a client.
//!
//! The draft is an early, partly German version of OGP. No implementation of it is known;
//! its gaps are filled as written down in `docs/ogp-draft.md` (D1…D20 there, each next to
//! the draft lines it resolves). In short:
//!
//! ```text
//! FF FF FF FF "OGP\0" | HeadFlags | [RequestID] [ChallengeNumber] [MaxBytesPerPacket | SplitCount SplitNo] | Type | body
//! Type 2 query:  Requests [PlayerFields]
//! Type 2 answer: AnswerFields (ours) [PLAYERLIST] [Hostname] [RunTime] [MaxPlayers] [ModDir] [Map]
//! ```
//!
//! * [`header`]: HeadFlags, the optional fields in the draft's order, the Type byte;
//! * [`query`]: the Default Query v1 body (Requests, PlayerFields);
//! * [`answer`]: the answer body from and to a [`Status`](crate::Status);
//! * [`split`]: split answers for MaxBytesPerPacket 500–1500;
//! * [`responder`]: [`DraftResponder`](responder::DraftResponder), one datagram in,
//!   answers out;
//! * [`client`]: [`QueryMachine`](client::QueryMachine), one query as a state machine;
//! * this module: whole datagrams ([`decode`], [`encode_query`], [`encode_answer`]).
//!
//! A v0.02 datagram cannot be told apart from a v1.01 one by its first bytes (both start
//! with `FF FF FF FF "OGP\0"`), so the draft is only served on a listener of its own
//! ([`Listener::OgpDraft`](crate::responder::Listener::OgpDraft)). The elementary types
//! (VarBitArray, SzString) and the split reassembler are v1.01's, from [`crate::ogp`].
//!
//! Every function here is pure. No function panics on any input; decoders allocate at
//! most a small multiple of their input (a PLAYERLIST holds at most 255 entries).

pub mod answer;
pub mod client;
pub mod header;
pub mod query;
pub mod responder;
pub mod split;

pub(crate) use answer::read_answer_body;
pub use answer::{decode_answer_body, encode_answer_body, Answer};
pub use header::{flags, Header, PacketType, REQUEST_CHALLENGE};
pub use query::{DecodedQuery, DefaultQuery};
pub use split::split_answer;

use crate::error::DecodeError;
use crate::protocol::{AnswerKind as K, Entry, Serve, Signature, Tier, Transport};
use crate::reader::Reader;

/// The challenge keys' id of the OGP v0.02 draft ([`Serve::guard_id`]).
pub(crate) const GUARD_ID: u8 = 5;

/// The OGP v0.02 draft's entry (see [`Entry`]). Its datagrams cannot be told apart from
/// v1.01's by their first bytes, so it has no signature of its own, is never
/// auto-detected by a query nor guessed by [`detect::guess`](crate::detect::guess), and
/// is served on a port of its own.
pub const ENTRY: Entry = Entry {
    aliases: &["ogp_draft"],
    help: "The first OGP draft, v0.02 (served on its own port).",
    auto: false,
    serve: Some(Serve {
        requests: Signature {
            tier: Tier::Magic,
            matches: crate::ogp::is_ogp,
        },
        own_port: true,
        answers: &[K::Challenge, K::Error, K::Full],
        guard_id: GUARD_ID,
    }),
    ..Entry::new("ogp-draft", "OGP v0.02", Transport::Datagram)
};

/// Largest query a responder reads (as for v1.01).
pub const MAX_QUERY_SIZE: usize = crate::ogp::MAX_QUERY_SIZE;

/// What a datagram carries.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub enum Message {
    /// Type 0 in an answer: the source is banned.
    Banned,
    /// Type 1 None: no data. In an answer, the header's ChallengeNumber is the challenge
    /// to use (D9).
    None,
    /// A Default Query v1.
    Query(DecodedQuery),
    /// A Default Query v1 with no body at all (only useful to obtain a challenge).
    Probe,
    /// A complete Default Query v1 answer (boxed: it is much larger than the others).
    Answer(Box<Answer>),
    /// One packet of a split answer: collect the packets with a
    /// [`Reassembler`](crate::ogp::Reassembler), then [`decode_answer_body`].
    Fragment {
        /// The packet's share of the answer body.
        body: Vec<u8>,
    },
    /// Rcon, a Type the draft does not define, or Type 0 in a query; the body is kept.
    Other {
        /// The body bytes.
        body: Vec<u8>,
    },
}

/// A decoded datagram.
#[derive(Debug, Clone, PartialEq)]
pub struct Packet {
    /// The header.
    pub header: Header,
    /// The body.
    pub message: Message,
}

/// Decodes one draft datagram, query or answer. Offsets in errors count from the first
/// byte of the datagram.
pub fn decode(datagram: &[u8]) -> Result<Packet, DecodeError> {
    let mut r = Reader::new(datagram);
    let header = Header::read(&mut r)?;
    let message = match (header.is_answer(), header.packet_type) {
        (true, PacketType::BANNED) => Message::Banned,
        (_, PacketType::NONE) => Message::None,
        (true, PacketType::DEFAULT_QUERY) => match header.split {
            Some(s) if s.count != 1 => Message::Fragment {
                body: r.take_rest().to_vec(),
            },
            _ => Message::Answer(Box::new(read_answer_body(&mut r)?)),
        },
        (false, PacketType::DEFAULT_QUERY) if r.is_empty() => Message::Probe,
        (false, PacketType::DEFAULT_QUERY) => Message::Query(DefaultQuery::read(&mut r)?),
        _ => Message::Other {
            body: r.take_rest().to_vec(),
        },
    };
    Ok(Packet { header, message })
}

/// Decodes just the header of a datagram: the header and the offset of the body.
pub fn decode_header(datagram: &[u8]) -> Result<(Header, usize), DecodeError> {
    Header::decode(datagram)
}

/// Appends a query datagram: header and (for a Default Query v1) the body.
pub fn encode_query(header: &Header, query: Option<&DefaultQuery>, out: &mut Vec<u8>) {
    header.encode(out);
    if let Some(q) = query {
        q.encode(out);
    }
}

/// Appends a complete (unsplit) answer datagram for `query` from `status`.
pub fn encode_answer(
    header: &Header,
    status: &crate::Status,
    query: &DefaultQuery,
    out: &mut Vec<u8>,
) {
    header.encode(out);
    encode_answer_body(status, query, out);
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::text::from_hex;

    #[test]
    fn messages_by_direction_and_type() {
        let m = |hex: &str| decode(&from_hex(hex).unwrap()).map(|p| p.message);
        assert_eq!(m("ffffffff4f4750000100").unwrap(), Message::Banned);
        assert_eq!(
            m("ffffffff4f4750000000").unwrap(),
            Message::Other { body: vec![] }
        );
        assert_eq!(m("ffffffff4f4750000001").unwrap(), Message::None);
        assert_eq!(m("ffffffff4f4750000101").unwrap(), Message::None);
        assert_eq!(m("ffffffff4f4750000002").unwrap(), Message::Probe);
        assert!(matches!(
            m("ffffffff4f475000000202").unwrap(),
            Message::Query(_)
        ));
        assert!(matches!(
            m("ffffffff4f475000010200").unwrap(),
            Message::Answer(_)
        ));
        assert_eq!(
            m("ffffffff4f4750000902000299").unwrap(),
            Message::Fragment { body: vec![0x99] }
        );
        assert_eq!(
            m("ffffffff4f4750000b01000000020102").unwrap(),
            Message::Fragment { body: vec![] }
        );
        assert_eq!(
            m("ffffffff4f4750000103aa").unwrap(),
            Message::Other { body: vec![0xaa] }
        );
        // a split header with count 1 is a whole answer
        assert!(matches!(
            m("ffffffff4f475000090100020000").unwrap(),
            Message::Answer(_)
        ));
        // a body that does not decode is an error with its offset
        let e = m("ffffffff4f47500001027f").unwrap_err();
        assert_eq!((e.field, e.offset), ("AnswerFields", 10));
    }
}
