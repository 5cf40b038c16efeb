//! The wire format: queries and reply packets, `\key\value` pairs decoded through the
//! bounded reader and encoded back.
//!
//! ```text
//! query   "\" WORD "\" [ARGUMENT]            \status\  \basic\  \info\xserverquery  \echo\TEXT
//!         several in one datagram:            \basic\\info\\players\
//! packet  ("\" KEY "\" VALUE)* with, anywhere among them,
//!         "\queryid\" ID "." PART             PART counts from 1 in every reply
//!         "\final\"                           in the last part only
//! ```
//!
//! Keys and values cannot hold `\`. A reply too long for one datagram is split between
//! pairs, each part carrying the same query id and its number; only the last says
//! `\final\`, and nothing says how many parts there are before it comes. Battlefield 1942
//! writes `\final\\queryid\N.M`, Unreal Tournament `\queryid\N.M\final\`. A packet without
//! a query id is a whole reply on its own (as some engines answer `\basic\` or
//! `\echo\`). Text is ISO 8859-1 on the wire in every game we have seen; bytes that are
//! valid UTF-8 are read as UTF-8, others as Latin-1 with a warning.

use std::fmt;

use crate::error::{DecodeError, DecodeErrorKind, DecodeWarning};
use crate::reader::Reader;
use crate::text::{decode_utf8_or_latin1, Text};

/// The queries a GameSpy v1 server answers.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum Query {
    /// `\basic\`: game name, version, location.
    Basic,
    /// `\info\`: host name, map, game type, players and slots.
    Info,
    /// `\rules\`: the game's settings.
    Rules,
    /// `\players\`: one set of `KEY_N` pairs per player.
    Players,
    /// `\status\`: all four of the above in one reply (the usual query).
    Status,
    /// `\teams\`: team names and scores, where the game has them.
    Teams,
    /// `\echo\TEXT`: the server sends `\echo\TEXT` back (a ping, or a nonce that proves
    /// the answer came from the address asked).
    Echo(Text),
}

impl Query {
    /// Its word on the wire.
    pub fn word(&self) -> &'static str {
        match self {
            Self::Basic => "basic",
            Self::Info => "info",
            Self::Rules => "rules",
            Self::Players => "players",
            Self::Status => "status",
            Self::Teams => "teams",
            Self::Echo(_) => "echo",
        }
    }

    fn from_word(word: &str, arg: &str) -> Option<Self> {
        Some(match word.to_ascii_lowercase().as_str() {
            "basic" => Self::Basic,
            "info" => Self::Info,
            "rules" => Self::Rules,
            "players" => Self::Players,
            "status" => Self::Status,
            "teams" => Self::Teams,
            "echo" => Self::Echo(arg.into()),
            _ => return None,
        })
    }

    /// Appends the query to `out`: `\WORD\`, with `xserverquery` as its argument when
    /// asked (the XServerQuery extension of Unreal Tournament servers answers more keys
    /// then; servers without it ignore the argument), or `\echo\TEXT` (`\` dropped from
    /// the text).
    pub fn encode(&self, xserverquery: bool, out: &mut Vec<u8>) {
        out.push(b'\\');
        out.extend_from_slice(self.word().as_bytes());
        out.push(b'\\');
        match self {
            Self::Echo(text) => put_text(out, text),
            Self::Basic | Self::Teams => {}
            _ if xserverquery => out.extend_from_slice(b"xserverquery"),
            _ => {}
        }
    }
}

impl fmt::Display for Query {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "\\{}\\", self.word())
    }
}

/// Longest query datagram we decode (a query is a few words).
pub const MAX_QUERY_BYTES: usize = 512;
/// Most queries in one query datagram.
pub const MAX_QUERIES: usize = 8;
/// Longest echo text we send, accept and echo.
pub const MAX_ECHO: usize = 64;

/// Decodes a query datagram: one query or several (`\basic\\info\`), each with its
/// argument (`xserverquery`, or an echo's text).
pub fn decode_query(datagram: &[u8]) -> Result<Vec<Query>, DecodeError> {
    if datagram.len() > MAX_QUERY_BYTES {
        return Err(DecodeError::new(
            0,
            "query",
            DecodeErrorKind::TooLarge {
                limit: MAX_QUERY_BYTES as u64,
            },
        ));
    }
    let mut warnings = Vec::new();
    let pairs = decode_pairs(datagram, MAX_QUERIES, &mut warnings)?;
    let mut out = Vec::with_capacity(pairs.len());
    for p in pairs {
        let Some(q) = Query::from_word(&p.key, &p.value) else {
            return Err(DecodeError::invalid(
                p.at,
                "query",
                "not basic, info, rules, players, status, teams or echo",
            ));
        };
        if let Query::Echo(t) = &q {
            if t.len() > MAX_ECHO {
                return Err(DecodeError::new(
                    p.at,
                    "echo",
                    DecodeErrorKind::TooLarge {
                        limit: MAX_ECHO as u64,
                    },
                ));
            }
        }
        out.push(q);
    }
    if out.is_empty() {
        return Err(DecodeError::invalid(0, "query", "no query word"));
    }
    Ok(out)
}

/// Which reply a packet belongs to, and where in it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct QueryId {
    /// The server's number of the query it answers (the same in every part).
    pub id: u32,
    /// This part's number, from 1.
    pub part: u16,
}

impl fmt::Display for QueryId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}.{}", self.id, self.part)
    }
}

/// One datagram of a reply.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Packet {
    /// The `\key\value` pairs in order, without `queryid` and `final`.
    pub pairs: Vec<(Text, Text)>,
    /// Its `\queryid\` (`None`: the packet is a whole reply on its own).
    pub query_id: Option<QueryId>,
    /// Whether it says `\final\` (the last part).
    pub is_final: bool,
}

impl Packet {
    /// The value of `key` (the first, compared without case).
    pub fn get(&self, key: &str) -> Option<&str> {
        get(&self.pairs, key)
    }

    /// Appends the datagram to `out`: the pairs (`\` dropped from keys and values), then
    /// `\final\` when it is the last part, then `\queryid\ID.PART` (Battlefield 1942's
    /// order). An empty packet is a lone `\`, which decodes to an empty packet again.
    pub fn encode(&self, out: &mut Vec<u8>) {
        if self.pairs.is_empty() && !self.is_final && self.query_id.is_none() {
            out.push(b'\\');
        }
        for (k, v) in &self.pairs {
            put_pair(out, k, v);
        }
        if self.is_final {
            out.extend_from_slice(b"\\final\\");
        }
        if let Some(q) = self.query_id {
            out.extend_from_slice(format!("\\queryid\\{q}").as_bytes());
        }
    }

    /// The datagram in a buffer of its own.
    pub fn to_bytes(&self) -> Vec<u8> {
        let mut out = Vec::with_capacity(256);
        self.encode(&mut out);
        out
    }
}

/// The value of `key` among `pairs` (the first, compared without case).
pub fn get<'a>(pairs: &'a [(Text, Text)], key: &str) -> Option<&'a str> {
    pairs
        .iter()
        .find(|(k, _)| k.eq_ignore_ascii_case(key))
        .map(|(_, v)| v.as_str())
}

fn put_text(out: &mut Vec<u8>, s: &str) {
    out.extend(s.bytes().filter(|&b| b != b'\\'));
}

fn put_pair(out: &mut Vec<u8>, k: &str, v: &str) {
    out.push(b'\\');
    put_text(out, k);
    out.push(b'\\');
    put_text(out, v);
}

/// The bytes `\key\value` takes on the wire.
pub(crate) fn pair_len(k: &str, v: &str) -> usize {
    let n = |s: &str| s.bytes().filter(|&b| b != b'\\').count();
    2 + n(k) + n(v)
}

/// Splits a reply into packets of at most `max_bytes` each (a pair longer than that
/// goes alone in its packet), numbered from 1 with query id `id`, the last one final.
/// At most `max_parts` packets: pairs that do not fit are left out (and counted in the
/// second value).
pub fn split_reply(
    pairs: &[(Text, Text)],
    id: u32,
    max_bytes: usize,
    max_parts: u16,
) -> (Vec<Packet>, usize) {
    // Room for `\final\\queryid\ID.PART`.
    let trailer = 7 + 9 + 10 + 1 + 5;
    let room = max_bytes.saturating_sub(trailer).max(1);
    let mut packets: Vec<Packet> = Vec::new();
    let mut used = 0usize;
    let mut left_out = 0usize;
    for (k, v) in pairs {
        let n = pair_len(k, v);
        let fits = packets.last().is_some_and(|_| used + n <= room);
        if !fits {
            if packets.len() >= usize::from(max_parts.max(1)) {
                left_out += 1;
                continue;
            }
            packets.push(Packet::default());
            used = 0;
        }
        used += n;
        if let Some(p) = packets.last_mut() {
            p.pairs.push((k.clone(), v.clone()));
        }
    }
    if packets.is_empty() {
        packets.push(Packet::default());
    }
    let count = packets.len();
    for (i, p) in packets.iter_mut().enumerate() {
        p.query_id = Some(QueryId {
            id,
            part: u16::try_from(i + 1).unwrap_or(u16::MAX),
        });
        p.is_final = i + 1 == count;
    }
    (packets, left_out)
}

/// Caps on what one packet can make a decoder hold.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub struct PacketLimits {
    /// Longest packet in bytes (default 8,192: the games send at most about 1,400).
    pub max_bytes: usize,
    /// Most pairs in one packet (default 1,024).
    pub max_pairs: usize,
}

impl Default for PacketLimits {
    fn default() -> Self {
        Self {
            max_bytes: 8192,
            max_pairs: 1024,
        }
    }
}

/// A decoded packet and what was noticed on the way.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Decoded {
    /// The packet.
    pub packet: Packet,
    /// Text that was not UTF-8 (read as Latin-1), a key without a value.
    pub warnings: Vec<DecodeWarning>,
}

/// Decodes a reply packet with the default limits.
pub fn decode_packet(datagram: &[u8]) -> Result<Decoded, DecodeError> {
    decode_packet_with(datagram, &PacketLimits::default())
}

/// Decodes a reply packet within `limits`.
pub fn decode_packet_with(datagram: &[u8], limits: &PacketLimits) -> Result<Decoded, DecodeError> {
    if datagram.len() > limits.max_bytes {
        return Err(DecodeError::new(
            0,
            "packet",
            DecodeErrorKind::TooLarge {
                limit: limits.max_bytes as u64,
            },
        ));
    }
    let mut warnings = Vec::new();
    // Two pairs more than the cap: `queryid` and `final` are not counted.
    let raw = decode_pairs(datagram, limits.max_pairs.saturating_add(2), &mut warnings)?;
    let mut packet = Packet {
        pairs: Vec::with_capacity(raw.len()),
        ..Packet::default()
    };
    for p in raw {
        if p.key.eq_ignore_ascii_case("queryid") {
            if packet.query_id.is_some() {
                return Err(DecodeError::invalid(p.at, "queryid", "two query ids"));
            }
            packet.query_id = Some(parse_query_id(&p.value, p.at)?);
        } else if p.key.eq_ignore_ascii_case("final") && p.value.is_empty() {
            packet.is_final = true;
        } else {
            if packet.pairs.len() >= limits.max_pairs {
                return Err(DecodeError::new(
                    p.at,
                    "key",
                    DecodeErrorKind::TooLarge {
                        limit: limits.max_pairs as u64,
                    },
                ));
            }
            packet.pairs.push((p.key, p.value));
        }
    }
    Ok(Decoded { packet, warnings })
}

/// `ID.PART` (or `ID` alone: part 1).
fn parse_query_id(v: &str, at: usize) -> Result<QueryId, DecodeError> {
    let (id, part) = v.split_once('.').unwrap_or((v, "1"));
    let digits = |s: &str| !s.is_empty() && s.len() <= 10 && s.bytes().all(|b| b.is_ascii_digit());
    match (digits(id), digits(part)) {
        (true, true) => {}
        _ => {
            return Err(DecodeError::invalid(
                at,
                "queryid",
                "not a number and a part number (N.M)",
            ))
        }
    }
    let id: u32 = id
        .parse()
        .map_err(|_| DecodeError::invalid(at, "queryid", "query id out of range"))?;
    let part: u16 = match part.parse() {
        Ok(p) if p >= 1 => p,
        _ => {
            return Err(DecodeError::invalid(
                at,
                "queryid",
                "part number not in 1 to 65535",
            ))
        }
    };
    Ok(QueryId { id, part })
}

/// One `\key\value` pair as read, with the offset of its key.
#[derive(Debug)]
pub(crate) struct RawPair {
    pub(crate) key: Text,
    pub(crate) value: Text,
    pub(crate) at: usize,
}

/// `\key\value\key\value…`: at most `max` pairs. The datagram must start with `\`; a
/// last key without a value gets an empty one (with a warning unless it is `final`).
pub(crate) fn decode_pairs(
    datagram: &[u8],
    max: usize,
    warnings: &mut Vec<DecodeWarning>,
) -> Result<Vec<RawPair>, DecodeError> {
    let mut r = Reader::new(datagram);
    if r.u8("packet")? != b'\\' {
        return Err(DecodeError::new(0, "packet", DecodeErrorKind::BadMagic));
    }
    // The UTF-8 is checked once for the datagram, not once per field: a field inside the
    // valid part is a slice of it (the separators are ASCII, so its ends are character
    // boundaries); a field with a bad byte is read as Latin-1, and the check starts again
    // at the next field.
    let mut utf8 = Utf8Run::new(datagram);
    let mut pairs = Vec::with_capacity(64.min(max));
    while !r.is_empty() {
        let at = r.offset();
        let key = take_field(&mut r);
        let had_sep = r.peek_u8() == Some(b'\\');
        if had_sep {
            r.take(1, "key")?;
        }
        let vat = r.offset();
        let value = take_field(&mut r);
        if r.peek_u8() == Some(b'\\') {
            r.take(1, "value")?;
        }
        if key.is_empty() && value.is_empty() && r.is_empty() && !had_sep {
            break;
        }
        if pairs.len() >= max {
            return Err(DecodeError::new(
                at,
                "key",
                DecodeErrorKind::TooLarge { limit: max as u64 },
            ));
        }
        let key = text(&mut utf8, key, at, "key", warnings);
        if !had_sep && !key.eq_ignore_ascii_case("final") {
            warn(warnings, at, "key", "a key without a value");
        }
        let value = text(&mut utf8, value, vat, "value", warnings);
        pairs.push(RawPair { key, value, at });
    }
    Ok(pairs)
}

/// The UTF-8 run of a datagram that a field is read from: `text` is valid UTF-8 and starts
/// at offset `start`.
struct Utf8Run<'a> {
    datagram: &'a [u8],
    start: usize,
    text: &'a str,
}

impl<'a> Utf8Run<'a> {
    fn new(datagram: &'a [u8]) -> Self {
        let mut run = Self {
            datagram,
            start: 0,
            text: "",
        };
        run.restart(0);
        run
    }

    /// The run becomes the longest UTF-8 prefix of the datagram from `at` on.
    fn restart(&mut self, at: usize) {
        let bytes = self.datagram.get(at..).unwrap_or_default();
        self.start = at;
        self.text = match std::str::from_utf8(bytes) {
            Ok(s) => s,
            Err(e) => bytes
                .get(..e.valid_up_to())
                .and_then(|b| std::str::from_utf8(b).ok())
                .unwrap_or_default(),
        };
    }

    /// The field of `len` bytes at `at` as text when it is UTF-8.
    fn field(&mut self, at: usize, len: usize) -> Option<&'a str> {
        let end = at.checked_add(len)?;
        if at < self.start || end > self.start + self.text.len() {
            // Past the run (after a bad byte): check again from this field on.
            self.restart(at);
        }
        self.text
            .get(at.checked_sub(self.start)?..end.checked_sub(self.start)?)
    }
}

fn take_field<'a>(r: &mut Reader<'a>) -> &'a [u8] {
    let rest = r.peek_rest();
    let n = memchr::memchr(b'\\', rest).unwrap_or(rest.len());
    r.take(n, "field").unwrap_or_default()
}

/// Most warnings one packet records.
const MAX_PACKET_WARNINGS: usize = 16;

fn warn(warnings: &mut Vec<DecodeWarning>, offset: usize, field: &'static str, m: &'static str) {
    if warnings.len() < MAX_PACKET_WARNINGS {
        warnings.push(DecodeWarning {
            offset,
            field,
            message: m,
        });
    }
}

/// The text of the field `bytes` at offset `at`: UTF-8 when it is (a slice of the datagram's
/// UTF-8 run), otherwise Latin-1 (with a warning).
fn text(
    utf8: &mut Utf8Run<'_>,
    bytes: &[u8],
    at: usize,
    field: &'static str,
    warnings: &mut Vec<DecodeWarning>,
) -> Text {
    if let Some(s) = utf8.field(at, bytes.len()) {
        return Text::from(s);
    }
    let (t, guessed) = decode_utf8_or_latin1(Err(bytes));
    if guessed {
        warn(warnings, at, field, "not UTF-8: read as Latin-1");
    }
    t
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn queries_decode_and_encode() {
        let mut out = Vec::new();
        Query::Status.encode(false, &mut out);
        assert_eq!(out, b"\\status\\");
        out.clear();
        Query::Info.encode(true, &mut out);
        assert_eq!(out, b"\\info\\xserverquery");
        out.clear();
        Query::Echo("a\\b".into()).encode(false, &mut out);
        assert_eq!(out, b"\\echo\\ab");
        assert_eq!(
            decode_query(b"\\basic\\\\info\\\\players\\").unwrap(),
            [Query::Basic, Query::Info, Query::Players]
        );
        assert_eq!(
            decode_query(b"\\echo\\nonce").unwrap(),
            [Query::Echo("nonce".into())]
        );
        let e = decode_query(b"\\secure\\abc").unwrap_err();
        assert_eq!(e.field, "query");
        assert!(decode_query(b"status").is_err());
        assert!(decode_query(b"\\").is_err());
        assert!(decode_query(&[b'\\'; 600]).is_err());
    }

    #[test]
    fn query_ids_and_final_anywhere() {
        let d = decode_packet(b"\\a\\1\\final\\\\queryid\\1142.3").unwrap();
        assert_eq!(d.packet.pairs, [("a".into(), "1".into())]);
        assert_eq!(d.packet.query_id, Some(QueryId { id: 1142, part: 3 }));
        assert!(d.packet.is_final);
        assert!(d.warnings.is_empty());
        let d = decode_packet(b"\\a\\1\\queryid\\20.3\\final\\").unwrap();
        assert!(d.packet.is_final);
        assert_eq!(d.packet.query_id, Some(QueryId { id: 20, part: 3 }));
        assert!(d.warnings.is_empty());
        // An empty packet (found by the fuzzer) encodes to bytes that decode to it.
        let d = decode_packet(b"\\").unwrap();
        assert_eq!(
            decode_packet(&d.packet.to_bytes()).unwrap().packet,
            d.packet
        );
        let d = decode_packet(b"\\a\\1\\queryid\\7").unwrap();
        assert_eq!(d.packet.query_id, Some(QueryId { id: 7, part: 1 }));
        for bad in [
            &b"\\queryid\\1.0"[..],
            b"\\queryid\\x.1",
            b"\\queryid\\1.99999",
            b"\\queryid\\99999999999.1",
            b"\\queryid\\1.1\\queryid\\1.2",
        ] {
            let e = decode_packet(bad).unwrap_err();
            assert_eq!(e.field, "queryid", "{e}");
        }
        let e = decode_packet(b"hostname\\x").unwrap_err();
        assert_eq!(e.kind, DecodeErrorKind::BadMagic);
    }

    #[test]
    fn caps_hold() {
        let many: Vec<u8> = (0..2000)
            .flat_map(|i| format!("\\k{i}\\v").into_bytes())
            .collect();
        let e = decode_packet(&many).unwrap_err();
        assert!(matches!(e.kind, DecodeErrorKind::TooLarge { .. }), "{e}");
        let big = vec![b'\\'; 9000];
        assert!(matches!(
            decode_packet(&big).unwrap_err().kind,
            DecodeErrorKind::TooLarge { limit: 8192 }
        ));
    }

    #[test]
    fn split_and_encode_round_trip() {
        let pairs: Vec<(Text, Text)> = (0..100)
            .map(|i| (format!("key{i}").into(), format!("value {i}").into()))
            .collect();
        let (packets, left) = split_reply(&pairs, 9, 300, 16);
        assert_eq!(left, 0);
        assert!(packets.len() > 1);
        let mut again = Vec::new();
        for (i, p) in packets.iter().enumerate() {
            let b = p.to_bytes();
            assert!(b.len() <= 300, "{}", b.len());
            let d = decode_packet(&b).unwrap().packet;
            assert_eq!(&d, p);
            assert_eq!(d.is_final, i + 1 == packets.len());
            again.extend(d.pairs);
        }
        assert_eq!(again, pairs);
        let (packets, left) = split_reply(&pairs, 9, 300, 2);
        assert_eq!(packets.len(), 2);
        assert!(left > 0);
    }

    use proptest::strategy::Strategy as _;

    proptest::proptest! {
        /// Reading each field from the datagram's UTF-8 run gives what decoding each field
        /// alone gives (UTF-8, else Latin-1), warnings included, whatever the bytes.
        #[test]
        fn utf8_runs_read_each_field_as_alone(
            body in proptest::collection::vec(
                proptest::prop_oneof![
                    4 => proptest::char::range('a', 'z').prop_map(|c| c as u8),
                    2 => proptest::strategy::Just(b'\\'),
                    1 => proptest::num::u8::ANY,
                    1 => proptest::sample::select(vec![0xc3u8, 0xa9, 0xe2, 0x80, 0xff]),
                ],
                0..80,
            )
        ) {
            let mut datagram = vec![b'\\'];
            datagram.extend(&body);
            let mut warnings = Vec::new();
            let Ok(got) = decode_pairs(&datagram, 1000, &mut warnings) else {
                return Ok(());
            };
            // The reference: every field decoded on its own.
            let mut want_warnings = Vec::new();
            let alone = |bytes: &[u8], at: usize, field, w: &mut Vec<DecodeWarning>| {
                let (t, guessed) = decode_utf8_or_latin1(Err(bytes));
                if guessed {
                    warn(w, at, field, "not UTF-8: read as Latin-1");
                }
                t
            };
            for p in &got {
                let key_len = datagram[p.at..].iter().position(|&b| b == b'\\').unwrap_or(datagram.len() - p.at);
                let key = alone(&datagram[p.at..p.at + key_len], p.at, "key", &mut want_warnings);
                proptest::prop_assert_eq!(&p.key, &key);
                let vat = (p.at + key_len + 1).min(datagram.len());
                let value_len = datagram[vat..].iter().position(|&b| b == b'\\').unwrap_or(datagram.len() - vat);
                let value = alone(&datagram[vat..vat + value_len], vat, "value", &mut want_warnings);
                proptest::prop_assert_eq!(&p.value, &value);
            }
            let latin1 = |w: &[DecodeWarning]| w.iter().filter(|w| w.message.starts_with("not UTF-8")).count();
            proptest::prop_assert_eq!(latin1(&warnings), latin1(&want_warnings).min(MAX_PACKET_WARNINGS));
        }
    }
}
