//! The Open Game Protocol v1.01 wire codec, both directions, queries and answers.
//!
//! * [`types`]: the elementary types (VarBitArray, VarUINT8-32, VarSINT8-32, SzString,
//!   StringColorInfo).
//! * [`header`]: the query and answer headers with every flag and the exact HeadSize.
//! * [`query`]: the Default Query v1 body and the field-mask bits.
//! * [`answer`]: the Default Query v1 answer body from and to a [`Status`](crate::Status).
//! * [`split`]: split answers for a MaxBytesPerPacket, and their reassembly.
//! * this module: whole datagrams ([`decode`]) and the error answers, including Error 3's
//!   resendable copy of the query.
//!
//! Where the spec is ambiguous the choice is written down in `docs/ogp-wire-choices.md`,
//! by the spec line it resolves (A1…A24 there). Every function here is pure: bytes in,
//! bytes out. No function panics on any input; decoders allocate at most a small multiple
//! of their input.

pub mod answer;
pub mod client;
pub mod header;
pub mod query;
pub mod responder;
pub mod split;
pub mod types;
pub mod uplink;

use std::fmt;

pub(crate) use answer::read_answer_body;
pub use answer::{decode_answer_body, encode_answer_body, Answer, AnswerOptions};
pub use header::{flags, DecodedHeader, Header, PacketType, SplitInfo, PREFIX};
pub use query::{DecodedQuery, DefaultQuery};
pub use split::{split_answer, Pushed, Reassembler, ReassemblyError, SplitError};
pub use types::Bits;

use crate::error::DecodeError;
use crate::protocol::{AnswerKind as K, Entry, Serve, Signature, Tier, Transport};
use crate::reader::Reader;

/// The challenge keys' id of OGP v1.01 ([`Serve::guard_id`]).
pub(crate) const GUARD_ID: u8 = 1;

/// OGP v1.01's entry (see [`Entry`]): told by its prefix, auto-detected first, served.
pub const ENTRY: Entry = Entry {
    help: "Open Game Protocol v1.01.",
    signatures: &[Signature {
        tier: Tier::Magic,
        matches: is_ogp,
    }],
    serve: Some(Serve {
        requests: Signature {
            tier: Tier::Magic,
            matches: is_ogp,
        },
        own_port: false,
        answers: &[K::Challenge, K::Ping, K::Error, K::Full],
        guard_id: GUARD_ID,
    }),
    ..Entry::new("ogp", "OGP", Transport::Datagram)
};

/// Largest query a responder should read (the reference SDK ignores anything larger).
pub const MAX_QUERY_SIZE: usize = 500;

/// Whether a datagram starts with the OGP prefix `FF FF FF FF "OGP\0"`.
pub fn is_ogp(datagram: &[u8]) -> bool {
    datagram.starts_with(&PREFIX)
}

/// The ErrorValue of an error answer (spec §3.2). Unknown values are kept.
#[derive(Clone, Copy, PartialEq, Eq, Hash)]
pub struct ErrorValue(pub u8);

impl ErrorValue {
    /// 0: the source is banned.
    pub const BANNED: Self = Self(0);
    /// 1: the Type in the header is unknown.
    pub const INVALID_TYPE: Self = Self(1);
    /// 2: a value in the header is incorrect.
    pub const INVALID_VALUE: Self = Self(2);
    /// 3: the challenge number is missing or wrong; the data is a resendable query.
    pub const INVALID_CHALLENGE: Self = Self(3);
    /// 4: the query body is incorrect.
    pub const INVALID_QUERY: Self = Self(4);

    /// The spec's description, if the value is defined.
    pub const fn description(self) -> Option<&'static str> {
        match self.0 {
            0 => Some("banned"),
            1 => Some("invalid type"),
            2 => Some("invalid value"),
            3 => Some("invalid challenge number"),
            4 => Some("invalid query"),
            _ => None,
        }
    }
}

impl fmt::Debug for ErrorValue {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.description() {
            Some(d) => write!(f, "{} ({d})", self.0),
            None => write!(f, "{} (unknown)", self.0),
        }
    }
}

impl fmt::Display for ErrorValue {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Debug::fmt(self, f)
    }
}

/// An error answer: its value and the data after it (for Error 3 the resendable copy
/// of the query).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ErrorAnswer {
    /// ErrorValue.
    pub value: ErrorValue,
    /// Bytes after the ErrorValue.
    pub data: Vec<u8>,
}

impl ErrorAnswer {
    /// The query the server asks us to send back, for Error 3 with a copy.
    pub fn resend_copy(&self) -> Option<&[u8]> {
        (self.value == ErrorValue::INVALID_CHALLENGE && is_ogp(&self.data))
            .then_some(self.data.as_slice())
    }
}

/// What a datagram carries.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub enum Message {
    /// A ping query or its answer (header only).
    Ping,
    /// A Default Query v1.
    Query(DecodedQuery),
    /// A Default Query v1 with no body at all: what clients send to obtain a challenge
    /// (the PHP client's probe, pyogpclient's challenge request).
    Probe,
    /// A complete Default Query v1 answer (boxed: it is much larger than the others).
    Answer(Box<Answer>),
    /// One packet of a split answer: collect them with a [`Reassembler`], then
    /// [`decode_answer_body`].
    Fragment {
        /// The packet's share of the answer body.
        body: Vec<u8>,
    },
    /// An error answer.
    Error(ErrorAnswer),
    /// A master server uplink answer.
    MasterUplink {
        /// GameID.
        game_id: u16,
    },
    /// A Type this implementation does not know (or Rcon); the body is kept.
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
    /// HeadSize as on the wire.
    pub head_size: u8,
    /// Header bytes past the known fields that were skipped.
    pub skipped_header_bytes: usize,
    /// The body.
    pub message: Message,
}

/// Decodes one OGP datagram, query or answer. Offsets in errors count from the first
/// byte of the datagram.
pub fn decode(datagram: &[u8]) -> Result<Packet, DecodeError> {
    let mut r = Reader::new(datagram);
    let h = Header::read(&mut r)?;
    let header = h.header;
    let message = if header.is_answer() {
        match header.packet_type {
            PacketType::PING => Message::Ping,
            PacketType::DEFAULT_QUERY => match header.split {
                Some(s) if s.count != 1 || s.number != 0 => Message::Fragment {
                    body: r.take_rest().to_vec(),
                },
                _ => Message::Answer(Box::new(read_answer_body(&mut r, header.utf8())?)),
            },
            PacketType::ERROR => Message::Error(ErrorAnswer {
                value: ErrorValue(r.u8("ErrorValue")?),
                data: r.take_rest().to_vec(),
            }),
            PacketType::MASTER_UPLINK => Message::MasterUplink {
                game_id: r.u16_le("GameID")?,
            },
            _ => Message::Other {
                body: r.take_rest().to_vec(),
            },
        }
    } else {
        match header.packet_type {
            PacketType::PING => Message::Ping,
            PacketType::DEFAULT_QUERY if r.is_empty() => Message::Probe,
            PacketType::DEFAULT_QUERY => Message::Query(DefaultQuery::read(&mut r)?),
            _ => Message::Other {
                body: r.take_rest().to_vec(),
            },
        }
    };
    Ok(Packet {
        header,
        head_size: h.head_size,
        skipped_header_bytes: h.skipped,
        message,
    })
}

/// Decodes just the header of a query datagram: the header and the offset of the body.
pub fn decode_query_header(datagram: &[u8]) -> Result<(Header, usize), DecodeError> {
    let (h, body_at) = Header::decode(datagram)?;
    Ok((h.header, body_at))
}

/// Appends a query datagram: header and (for Default Query v1) the body.
pub fn encode_query(header: &Header, query: Option<&DefaultQuery>, out: &mut Vec<u8>) {
    header.encode(out);
    if let Some(q) = query {
        q.encode(out);
    }
}

/// Appends a complete (unsplit) answer datagram for `query` from `status`. The strings
/// are UTF-8 exactly when `header` has bUTF8 (whatever `opts.utf8` says), so the header
/// cannot contradict the body.
pub fn encode_answer(
    header: &Header,
    status: &crate::Status,
    query: &DefaultQuery,
    opts: &AnswerOptions,
    out: &mut Vec<u8>,
) {
    header.encode(out);
    let opts = AnswerOptions {
        utf8: header.utf8(),
        ..*opts
    };
    encode_answer_body(status, query, &opts, out);
}

/// Appends an error answer: `header` (Type is forced to Error, bAnswer set), the
/// ErrorValue and `data`.
pub fn encode_error(header: &Header, value: ErrorValue, data: &[u8], out: &mut Vec<u8>) {
    let h = Header {
        packet_type: PacketType::ERROR,
        flags: header.flags.with(flags::ANSWER),
        max_bytes_per_packet: None,
        split: None,
        ..*header
    };
    h.encode(out);
    out.push(value.0);
    out.extend_from_slice(data);
}

/// Appends a clean, resendable copy of a query with a new challenge: the query's header
/// with bChallengeNumber set to `challenge` (one minimal flags byte, exact HeadSize;
/// bAnswer and unknown flag bits cleared), followed by the query's body unchanged. This is the data of an
/// Error 3 answer (A9).
pub fn encode_resendable_copy(
    query_header: &Header,
    body: &[u8],
    challenge: u32,
    out: &mut Vec<u8>,
) {
    let h = Header {
        // Only the flags we know: a stray bit (such as the reference SDK's uninitialised
        // second flags byte) must not travel on in the copy.
        flags: query_header.flags.and(flags::UTF8),
        challenge: Some(challenge),
        split: None,
        ..*query_header
    };
    h.encode(out);
    out.extend_from_slice(body);
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::text::{from_hex, to_hex};

    #[test]
    fn error3_with_clean_copy() {
        // capture 14: query with a wrong challenge and body 01 05
        let q = from_hex("ffffffff4f475000070112deadbeef0105").unwrap();
        let p = decode(&q).unwrap();
        let Message::Query(dq) = &p.message else {
            panic!()
        };
        assert_eq!(dq.trailing, 0);
        let body = &q[8 + usize::from(p.head_size)..];
        let mut copy = Vec::new();
        encode_resendable_copy(&p.header, body, 0xb913_2646, &mut copy);
        assert_eq!(to_hex(&copy), "ffffffff4f475000070112462613b90105");
        let mut ans = Vec::new();
        let mut h = Header::answer(PacketType::ERROR).with_utf8(true);
        h.challenge = Some(0xb913_2646);
        encode_error(&h, ErrorValue::INVALID_CHALLENGE, &copy, &mut ans);
        // the SDK's answer, but with one flags byte in the copy (no stack garbage)
        assert_eq!(
            to_hex(&ans),
            "ffffffff4f47500007ff13462613b903ffffffff4f475000070112462613b90105"
        );
        let Message::Error(e) = decode(&ans).unwrap().message else {
            panic!()
        };
        assert_eq!(e.resend_copy(), Some(copy.as_slice()));
    }

    #[test]
    fn sdk_error3_copy_with_garbage_flags_byte_decodes() {
        let a =
            from_hex("ffffffff4f47500007ff03462613b903ffffffff4f47500008018211462613b9").unwrap();
        let p = decode(&a).unwrap();
        assert_eq!(p.header.challenge, Some(0xb913_2646));
        let Message::Error(e) = p.message else {
            panic!()
        };
        assert_eq!(e.value, ErrorValue::INVALID_CHALLENGE);
        let copy = decode(e.resend_copy().unwrap()).unwrap();
        assert_eq!(copy.message, Message::Probe);
        assert_eq!(copy.header.challenge, Some(0xb913_2646));
        assert_eq!(copy.header.packet_type, PacketType::DEFAULT_QUERY);
    }

    #[test]
    fn pings_and_others() {
        let p = decode(&from_hex("ffffffff4f475000030001").unwrap()).unwrap();
        assert!(p.header.is_answer());
        assert_eq!(p.message, Message::Ping);
        let p = decode(&from_hex("ffffffff4f47500003050001").unwrap()).unwrap();
        assert_eq!(p.message, Message::Other { body: vec![1] });
        let p = decode(&from_hex("ffffffff4f4750000303012a00").unwrap()).unwrap();
        assert!(matches!(p.message, Message::MasterUplink { game_id: 42 }));
        assert!(decode(&from_hex("ffffffff4f47500003ff01").unwrap()).is_err());
        assert!(is_ogp(&PREFIX) && !is_ogp(b"\xff\xff\xff\xffTSource"));
    }
}
