//! Valve's A2S server queries (Source and GoldSrc engines), both directions: requests,
//! replies, split and bzip2-compressed replies, and the sans-IO responder and client.
//!
//! * [`request`]: A2S_INFO, A2S_PLAYER, A2S_RULES, A2S_SERVERQUERY_GETCHALLENGE, A2A_PING.
//! * [`info`]: S2A_INFO replies: Source `'I'` (with The Ship's fields and every EDF field)
//!   and GoldSrc `'m'` (tolerating truncated replies).
//! * [`players`]: `'D'` replies, with The Ship's per-player extras.
//! * [`rules`]: `'E'` replies.
//! * [`split`]: split replies in the Source (with and without the size field) and GoldSrc
//!   layouts, bzip2 decompression with a size cap and CRC check, and the [`Reassembler`].
//! * [`mapping`]: the typed wire structs to and from the shared [`Status`](crate::Status)
//!   (documented field by field in `docs/a2s-mapping.md`).
//! * [`responder`] and [`client`]: the sans-IO state machines.
//! * this module: whole datagrams ([`decode`]) and the small replies (`41` challenge,
//!   `6A` ping).
//!
//! A datagram starts with `FF FF FF FF` (one packet) or `FE FF FF FF` (one fragment of a
//! split reply); the next byte tells the message apart. All integers are little-endian;
//! strings are NUL-terminated and decoded as UTF-8, lossily, with a warning.
//!
//! Every decoder here is total: on any input it returns a value or a [`DecodeError`]
//! naming the field and byte offset, never panics, and allocates at most a small multiple
//! of its input (bzip2 output is capped before decompression). Bytes a decoder does not
//! understand are kept (`trailing`) and reported as [`DecodeWarning`]s.

pub mod client;
pub mod ffow;
pub mod info;
pub mod mapping;
pub mod players;
pub mod request;
pub mod responder;
pub mod rules;
pub mod split;

pub use info::{Extra, GoldSrcInfo, GoldSrcMod, Info, InfoReply, ShipInfo, SourceTv};
pub use players::{PlayerEntry, Players, ShipPlayer};
pub use request::Request;
pub use rules::Rules;
pub use split::{Fragment, Layout, Pushed, Reassembler, ReassemblyError, ReassemblyLimits};

use crate::charset::Charset;
use crate::error::{DecodeError, DecodeErrorKind, DecodeWarning};
use crate::model::Text;
use crate::protocol::{AnswerKind as K, Entry, Serve, Signature, Tier, Transport};
use crate::reader::Reader;
use crate::text::{TextRuns, Unchosen};

/// The challenge keys' id of A2S ([`Serve::guard_id`]).
pub(crate) const GUARD_ID: u8 = 2;

/// Valve A2S's entry (see [`Entry`]): any `FF FF FF FF` (after Quake III's words) or the
/// split prefix; three steps (INFO, PLAYER, RULES); served.
pub const ENTRY: Entry = Entry {
    help: "Valve's A2S server queries (Source and GoldSrc engines).",
    steps: 3,
    signatures: &[Signature {
        tier: Tier::Broad,
        matches: |d| d.starts_with(&SINGLE) || d.starts_with(&SPLIT),
    }],
    serve: Some(Serve {
        requests: Signature {
            tier: Tier::Broad,
            matches: is_a2s,
        },
        own_port: false,
        answers: &[K::Challenge, K::Ping, K::Info, K::Players, K::Rules],
        guard_id: GUARD_ID,
    }),
    ..Entry::new("a2s", "A2S", Transport::Datagram)
};

/// Prefix of a reply or request in one datagram.
pub const SINGLE: [u8; 4] = [0xff; 4];
/// Prefix of one fragment of a split reply.
pub const SPLIT: [u8; 4] = [0xfe, 0xff, 0xff, 0xff];

/// Largest datagram Steam sends (UDP payload), and the largest our responder sends.
pub const MAX_DATAGRAM: usize = 1400;

/// Header bytes of the messages.
pub mod kind {
    /// A2S_INFO request `'T'`.
    pub const INFO_REQUEST: u8 = 0x54;
    /// A2S_PLAYER request `'U'`.
    pub const PLAYER_REQUEST: u8 = 0x55;
    /// A2S_RULES request `'V'`.
    pub const RULES_REQUEST: u8 = 0x56;
    /// A2S_SERVERQUERY_GETCHALLENGE request `'W'`.
    pub const GET_CHALLENGE: u8 = 0x57;
    /// A2A_PING request `'i'`.
    pub const PING: u8 = 0x69;
    /// S2C_CHALLENGE reply `'A'`.
    pub const CHALLENGE: u8 = 0x41;
    /// Source S2A_INFO reply `'I'`.
    pub const INFO: u8 = 0x49;
    /// GoldSrc S2A_INFO reply `'m'`.
    pub const INFO_GOLDSRC: u8 = 0x6d;
    /// S2A_PLAYER reply `'D'`.
    pub const PLAYERS: u8 = 0x44;
    /// S2A_RULES reply `'E'`.
    pub const RULES: u8 = 0x45;
    /// A2A_PING reply `'j'`.
    pub const PING_REPLY: u8 = 0x6a;
}

/// An S2C_CHALLENGE reply: `FF FF FF FF 41 <challenge>`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Challenge {
    /// The challenge, as the little-endian `long` of the wire (send it back with
    /// `to_le_bytes`: the four bytes are returned as they came).
    pub challenge: u32,
}

impl Challenge {
    /// Appends the whole datagram.
    pub fn encode(&self, out: &mut Vec<u8>) {
        out.extend_from_slice(&SINGLE);
        out.push(kind::CHALLENGE);
        out.extend_from_slice(&self.challenge.to_le_bytes());
    }
}

/// An A2A_PING reply.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum PingReply {
    /// GoldSrc: `6A 00`.
    GoldSrc,
    /// Source: `6A "000000000000000" 00`.
    Source,
    /// Another content string, kept.
    Other(Text),
}

impl PingReply {
    /// The Source engine's content string.
    pub const SOURCE_CONTENT: &'static str = "000000000000000";

    /// Appends the whole datagram.
    pub fn encode(&self, out: &mut Vec<u8>) {
        out.extend_from_slice(&SINGLE);
        out.push(kind::PING_REPLY);
        let s = match self {
            Self::GoldSrc => "",
            Self::Source => Self::SOURCE_CONTENT,
            Self::Other(s) => s.as_str(),
        };
        crate::text::put_cstr(out, s, true);
    }
}

/// What a datagram (or a reassembled split reply) carries.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub enum Message {
    /// A request.
    Request(Request),
    /// S2C_CHALLENGE.
    Challenge(Challenge),
    /// A2A_PING reply.
    PingReply(PingReply),
    /// Source S2A_INFO `'I'`.
    Info(Info),
    /// GoldSrc S2A_INFO `'m'`.
    GoldSrcInfo(GoldSrcInfo),
    /// S2A_PLAYER.
    Players(Players),
    /// S2A_RULES.
    Rules(Rules),
    /// Frontlines: Fuel of War's `'I'` (its own layout; [`decode_ffow_with`]).
    FfowInfo(ffow::FfowInfo),
    /// One fragment of a split reply: feed it to a [`Reassembler`].
    Fragment(Fragment),
}

/// A decoded datagram and what was noticed while decoding it.
#[derive(Debug, Clone, PartialEq)]
pub struct Decoded {
    /// The message.
    pub message: Message,
    /// Oddities that did not stop decoding (lossy UTF-8, trailing bytes, …).
    pub warnings: Vec<DecodeWarning>,
}

/// Whether a datagram looks like A2S (starts with `FF FF FF FF` followed by a request or
/// reply byte we know, or with the split prefix).
pub fn is_a2s(datagram: &[u8]) -> bool {
    match datagram.split_first_chunk::<4>() {
        Some((p, rest)) if *p == SINGLE => matches!(
            rest.first(),
            Some(
                &(kind::INFO_REQUEST
                    | kind::PLAYER_REQUEST
                    | kind::RULES_REQUEST
                    | kind::GET_CHALLENGE
                    | kind::PING
                    | kind::CHALLENGE
                    | kind::INFO
                    | kind::INFO_GOLDSRC
                    | kind::PLAYERS
                    | kind::RULES
                    | kind::PING_REPLY)
            )
        ),
        Some((p, _)) => *p == SPLIT,
        None => false,
    }
}

/// Decodes one datagram: a request, a reply, or one fragment of a split reply. Offsets
/// in errors count from the first byte of the datagram.
pub fn decode(datagram: &[u8]) -> Result<Decoded, DecodeError> {
    decode_with(datagram, Charset::Auto)
}

/// [`decode`], reading strings that are not UTF-8 in `charset`.
pub fn decode_with(datagram: &[u8], charset: Charset) -> Result<Decoded, DecodeError> {
    decode_in(datagram, charset, false)
}

/// [`decode_with`] in FFOW's dialect: its own `'I'` ([`ffow::FfowInfo`]), the players'
/// numbers and the rules' count big-endian.
pub fn decode_ffow_with(datagram: &[u8], charset: Charset) -> Result<Decoded, DecodeError> {
    decode_in(datagram, charset, true)
}

/// [`decode_with`], in FFOW's dialect when `ffow`.
pub(crate) fn decode_in(
    datagram: &[u8],
    charset: Charset,
    ffow: bool,
) -> Result<Decoded, DecodeError> {
    let mut r = Reader::new(datagram).with_charset(charset);
    let prefix = r.array::<4>("Header")?;
    if prefix == SPLIT {
        let fragment = split::Fragment::decode_raw(datagram)?;
        return Ok(Decoded {
            message: Message::Fragment(fragment),
            warnings: Vec::new(),
        });
    }
    if prefix != SINGLE {
        return Err(DecodeError::new(0, "Header", DecodeErrorKind::BadMagic));
    }
    decode_body(&mut r, ffow)
}

/// Decodes a message from the byte after `FF FF FF FF` (used for reassembled replies,
/// whose reader starts at offset 4 of the reassembled data), in FFOW's dialect when
/// `ffow`.
pub(crate) fn decode_body(r: &mut Reader<'_>, ffow: bool) -> Result<Decoded, DecodeError> {
    let mut w = Vec::new();
    let at = r.offset();
    let message = match r.peek_u8() {
        Some(
            kind::INFO_REQUEST
            | kind::PLAYER_REQUEST
            | kind::RULES_REQUEST
            | kind::GET_CHALLENGE
            | kind::PING,
        ) => Message::Request(Request::decode_body(r)?),
        Some(kind::CHALLENGE) => {
            r.u8("Type")?;
            let challenge = r.u32_le("Challenge")?;
            note_trailing(r, "Challenge", &mut w);
            Message::Challenge(Challenge { challenge })
        }
        Some(kind::PING_REPLY) => {
            r.u8("Type")?;
            let reply = if r.is_empty() {
                PingReply::GoldSrc
            } else {
                match string(r, "Content", &mut w)?.as_str() {
                    "" => PingReply::GoldSrc,
                    PingReply::SOURCE_CONTENT => PingReply::Source,
                    s => PingReply::Other(s.into()),
                }
            };
            note_trailing(r, "Content", &mut w);
            Message::PingReply(reply)
        }
        Some(kind::INFO) if ffow => Message::FfowInfo(ffow::FfowInfo::decode_body(r, &mut w)?),
        Some(kind::INFO) => Message::Info(Info::decode_body(r, &mut w)?),
        Some(kind::INFO_GOLDSRC) => Message::GoldSrcInfo(GoldSrcInfo::decode_body(r, &mut w)?),
        Some(kind::PLAYERS) => Message::Players(Players::decode_body_in(r, &mut w, ffow)?),
        Some(kind::RULES) => Message::Rules(Rules::decode_body_in(r, &mut w, ffow)?),
        Some(_) => return Err(DecodeError::invalid(at, "Type", "unknown A2S message type")),
        None => {
            return Err(DecodeError::new(
                at,
                "Type",
                DecodeErrorKind::Truncated {
                    needed: 1,
                    available: 0,
                },
            ))
        }
    };
    Ok(Decoded {
        message,
        warnings: w,
    })
}

/// Reads a NUL-terminated string, decoding it as UTF-8; bytes that are not are read in
/// the reader's [`Charset`], or (`Auto`) replaced, with a warning.
pub(crate) fn string(
    r: &mut Reader<'_>,
    field: &'static str,
    w: &mut Vec<DecodeWarning>,
) -> Result<Text, DecodeError> {
    let at = r.offset();
    let found = Err(r.cstr(field)?);
    decoded(found, at, r, field, w)
}

/// [`string`] where strings follow one another with nothing between them (rules): the
/// run of them is validated as UTF-8 once ([`TextRuns`]), not string by string.
pub(crate) fn text_string<'a>(
    r: &mut Reader<'a>,
    runs: &mut TextRuns<'a>,
    field: &'static str,
    w: &mut Vec<DecodeWarning>,
) -> Result<Text, DecodeError> {
    let at = r.offset();
    let found = runs.cstr(r, field)?;
    decoded(found, at, r, field, w)
}

/// Decodes what a string reader found; `r`, the reader it came from, says the charset
/// (looked at only for bytes that are not UTF-8: the common case pays nothing for it).
fn decoded(
    found: Result<&str, &[u8]>,
    at: usize,
    r: &Reader<'_>,
    field: &'static str,
    w: &mut Vec<DecodeWarning>,
) -> Result<Text, DecodeError> {
    let (s, replaced) = crate::text::decode_text(found, r, Unchosen::Replace);
    if replaced {
        w.push(DecodeWarning {
            offset: at,
            field,
            message: "invalid UTF-8, decoded lossily",
        });
    }
    Ok(s)
}

/// Consumes what is left, noting it as a warning; returns the bytes.
pub(crate) fn take_trailing(
    r: &mut Reader<'_>,
    after: &'static str,
    w: &mut Vec<DecodeWarning>,
) -> Vec<u8> {
    let at = r.offset();
    let rest = r.take_rest();
    if !rest.is_empty() {
        w.push(DecodeWarning {
            offset: at,
            field: after,
            message: "unknown bytes after the message, kept as trailing",
        });
    }
    rest.to_vec()
}

fn note_trailing(r: &mut Reader<'_>, after: &'static str, w: &mut Vec<DecodeWarning>) {
    let _ = take_trailing(r, after, w);
}

/// Appends a NUL-terminated UTF-8 string (NUL characters inside are dropped).
pub(crate) fn put_str(out: &mut Vec<u8>, s: &str) {
    crate::text::put_cstr(out, s, true);
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::text::from_hex;

    /// A RULES reply whose one rule has a Windows-1251 value, "Привет" (not UTF-8), as a
    /// Russian GoldSrc server sends it.
    #[test]
    fn strings_that_are_not_utf8_are_read_in_the_chosen_charset() {
        let mut d = b"\xff\xff\xff\xffE\x01\x00motd\x00".to_vec();
        d.extend_from_slice(&[0xcf, 0xf0, 0xe8, 0xe2, 0xe5, 0xf2, 0x00]);
        let value = |charset| match decode_with(&d, charset).unwrap() {
            Decoded {
                message: Message::Rules(r),
                warnings,
            } => (r.rules[0].1.to_string(), warnings.len()),
            other => panic!("{other:?}"),
        };
        assert_eq!(value(Charset::Windows1251), ("Привет".to_string(), 0));
        assert_eq!(value(Charset::Latin1), ("Ïðèâåò".to_string(), 0));
        assert_eq!(value(Charset::Windows1252), ("Ïðèâåò".to_string(), 0));
        // by default: replaced, with a warning; and UTF-8 stays UTF-8 in any charset
        assert_eq!(value(Charset::Auto), ("\u{fffd}".repeat(6), 1));
        assert_eq!(decode(&d).unwrap(), decode_with(&d, Charset::Auto).unwrap());
        let utf8 = b"\xff\xff\xff\xffE\x01\x00motd\x00\xd0\x9f\x00".to_vec();
        let Message::Rules(r) = decode_with(&utf8, Charset::Windows1251).unwrap().message else {
            panic!("not rules")
        };
        assert_eq!(r.rules[0].1, "П");
    }

    #[test]
    fn challenge_and_ping_replies() {
        let d = decode(&from_hex("ffffffff414ba1d522").unwrap()).unwrap();
        assert_eq!(
            d.message,
            Message::Challenge(Challenge {
                challenge: 0x22d5_a14b
            })
        );
        let mut out = Vec::new();
        Challenge {
            challenge: 0x22d5_a14b,
        }
        .encode(&mut out);
        assert_eq!(out, from_hex("ffffffff414ba1d522").unwrap());
        for p in [PingReply::GoldSrc, PingReply::Source] {
            let mut out = Vec::new();
            p.encode(&mut out);
            assert_eq!(decode(&out).unwrap().message, Message::PingReply(p));
        }
        let mut out = Vec::new();
        PingReply::Source.encode(&mut out);
        assert_eq!(out.len(), 21);
        assert!(decode(&from_hex("ffffffff6a").unwrap()).is_ok());
    }

    #[test]
    fn garbage_is_an_error() {
        assert!(decode(&[]).is_err());
        assert!(decode(&[0xff, 0xff, 0xff]).is_err());
        assert!(decode(&[0xff, 0xff, 0xff, 0xff]).is_err());
        assert!(decode(&[0xff, 0xff, 0xff, 0xff, 0x99]).is_err());
        assert!(decode(&[0x00, 0xff, 0xff, 0xff, 0x49]).is_err());
        assert!(decode(&[0xff, 0xff, 0xff, 0xff, 0x41, 1, 2]).is_err());
        assert!(!is_a2s(b"\xff\xff\xff\xffOGP\0"));
        assert!(is_a2s(b"\xff\xff\xff\xffTSource Engine Query\0"));
    }
}
