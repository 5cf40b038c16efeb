//! Doomsday's beacon request and reply, decoded through the bounded reader.
//!
//! * Request: the 19 bytes `Doomsday Beacon 1.1` (no NUL; the beacon answers nothing
//!   else: `1.0` was the uncompressed message of Doomsday 1.x).
//! * Reply: the server's TCP port (16 bits little-endian: the port players join), then
//!   the message as Qt's `qCompress` packs it: the inflated size (32 bits big-endian)
//!   and a zlib stream. Inflated, the message is a serialized `de::Record` with its
//!   header: the serialization's version (32 bits; 4 since Doomsday 2.2), the record's
//!   id, a member count, and per member its name, a mode word (the variable's flags)
//!   and a value. Integers are 32-bit little-endian; strings a 32-bit length and UTF-8.
//!   A value is a type byte and its data: 0 none; 1 a number (a byte of hints: 1
//!   boolean, 2 hex, 4 int, 8 unsigned, then an IEEE double, little-endian); 2 text; 3
//!   an array (a count, then as many values). Other types (dictionaries, blocks,
//!   records, times…) are never in a beacon and are an error here.
//!
//! The members of Doomsday 2.3.1's beacon (`ServerInfo::strippedForBroadcast`): `name`,
//! `desc`, `ver` (`2.3.1`), `cver` (compatibility version, 20000), `port`, `sid`
//! (server id), `game` (the game id: `doom1-freedoom`, `doom2`, `heretic`…), `cfg`
//! (`skill3 coop jump`), `map` (`E1M1`), `pnum` (players; absent while there are
//! none), `pmax` and `flags` (1: joinable). `plrs` (the player names) and `pkgs` are
//! stripped from the beacon but read when present. The members come in the order of a
//! hash table.
//!
//! Offsets of errors and warnings count from the datagram's start, except inside the
//! record, where they count from the inflated message's start.
//!
//! Caps: the inflated message ([`MAX_INFLATED`], checked while inflating: a zip bomb is
//! an error after that many bytes), members, values in all, array nesting and string
//! length; every count is checked against the bytes left before anything is allocated.

use std::io::Write as _;

use crate::error::{DecodeError, DecodeErrorKind, DecodeWarning};
use crate::inflate::{inflate, Packing};
use crate::limits::MAX_STRING_BYTES;
use crate::model::Text;
use crate::reader::Reader;
use crate::text::decode_utf8_or_latin1;

/// The request (the beacon's discovery message, version 1.1: compressed replies).
pub const REQUEST: &[u8] = b"Doomsday Beacon 1.1";
/// The most bytes a reply's message may inflate to (a real one is about 300).
pub const MAX_INFLATED: usize = 16 * 1024;
/// The most members of the record.
pub const MAX_MEMBERS: usize = 256;
/// The most values in all (members and array elements).
pub const MAX_VALUES: usize = 1024;
/// The deepest nesting of arrays (a member's value is at depth 1).
pub const MAX_DEPTH: usize = 4;
/// Bytes before the zlib stream: the port and the inflated size.
pub const HEADER_LEN: usize = 6;

/// A value of the record.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub enum Value {
    /// Type 0: no value.
    None,
    /// Type 1: a number, with its hints (1 boolean, 2 hex, 4 int, 8 unsigned).
    Number {
        /// The number.
        value: f64,
        /// The hints byte.
        hints: u8,
    },
    /// Type 2: text.
    Text(Text),
    /// Type 3: an array.
    Array(Vec<Value>),
}

impl Value {
    /// The value as text: a number without a fraction as an integer, an array's
    /// elements separated by commas.
    pub fn to_text(&self) -> Text {
        match self {
            Self::None => Text::default(),
            Self::Number { value, .. } => number_text(*value),
            Self::Text(t) => t.clone(),
            Self::Array(items) => {
                let mut s = String::new();
                for (i, v) in items.iter().enumerate() {
                    if i > 0 {
                        s.push(',');
                    }
                    s.push_str(&v.to_text());
                }
                Text::from(s)
            }
        }
    }

    /// The number as an unsigned 32-bit integer, when it is one.
    pub fn as_u32(&self) -> Option<u32> {
        match self {
            Self::Number { value, .. }
                if value.is_finite()
                    && value.fract() == 0.0
                    && (0.0..=f64::from(u32::MAX)).contains(value) =>
            {
                // Checked above: a whole number in u32's range.
                #[allow(clippy::cast_possible_truncation, clippy::cast_sign_loss)]
                Some(*value as u32)
            }
            _ => None,
        }
    }

    /// The text, when it is text.
    pub fn as_text(&self) -> Option<&Text> {
        match self {
            Self::Text(t) => Some(t),
            _ => None,
        }
    }

    fn encode(&self, out: &mut Vec<u8>) {
        match self {
            Self::None => out.push(0),
            Self::Number { value, hints } => {
                out.extend_from_slice(&[1, *hints]);
                out.extend_from_slice(&value.to_le_bytes());
            }
            Self::Text(t) => {
                out.push(2);
                put_string(out, t);
            }
            Self::Array(items) => {
                out.push(3);
                out.extend_from_slice(&u32::try_from(items.len()).unwrap_or(0).to_le_bytes());
                for v in items {
                    v.encode(out);
                }
            }
        }
    }
}

/// A whole number as an integer, any other as Rust prints it.
fn number_text(v: f64) -> Text {
    if v.is_finite() && v.fract() == 0.0 && v.abs() < 9.007_199_254_740_992e15 {
        // Checked above: whole and within f64's exact integers.
        #[allow(clippy::cast_possible_truncation)]
        Text::from((v as i64).to_string())
    } else {
        Text::from(v.to_string())
    }
}

fn put_string(out: &mut Vec<u8>, s: &str) {
    let b = s.as_bytes();
    out.extend_from_slice(&u32::try_from(b.len()).unwrap_or(0).to_le_bytes());
    out.extend_from_slice(b);
}

/// One member of the record.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub struct Member {
    /// Its name (`name`, `map`, `pmax`…).
    pub name: Text,
    /// The variable's mode word as sent (its allowed types and flags).
    pub mode: u32,
    /// Its value.
    pub value: Value,
}

impl Member {
    /// A member (for tests and replays), with the mode word Doomsday gives a value of
    /// its kind.
    pub fn new(name: impl Into<Text>, value: Value) -> Self {
        let mode = match value {
            Value::Number { .. } => 0x1000_0008,
            _ => 0x1000_0010,
        };
        Self {
            name: name.into(),
            mode,
            value,
        }
    }
}

/// A decoded reply, every field as sent.
#[derive(Debug, Clone, Default, PartialEq)]
#[non_exhaustive]
pub struct Reply {
    /// The TCP port players join (the reply's first two bytes).
    pub service_port: u16,
    /// The inflated size the reply announced (checked against the actual size: a
    /// difference is a warning).
    pub announced_size: u32,
    /// The record serialization's version (4 since Doomsday 2.2).
    pub format: u32,
    /// The record's id on the server.
    pub record_id: u32,
    /// The members, in the order sent.
    pub members: Vec<Member>,
    /// What was read in a tolerant way.
    pub warnings: Vec<DecodeWarning>,
}

impl Reply {
    /// The value of the member `name`, if sent.
    pub fn get(&self, name: &str) -> Option<&Value> {
        self.members
            .iter()
            .find(|m| m.name == name)
            .map(|m| &m.value)
    }

    /// The text of the member `name`, if sent as text.
    pub fn text(&self, name: &str) -> Option<&Text> {
        self.get(name).and_then(Value::as_text)
    }

    /// The member `name` as an unsigned integer, if sent as one.
    pub fn number(&self, name: &str) -> Option<u32> {
        self.get(name).and_then(Value::as_u32)
    }

    /// The inflated message (the serialized record with its header).
    pub fn encode_message(&self, out: &mut Vec<u8>) {
        out.extend_from_slice(&self.format.to_le_bytes());
        out.extend_from_slice(&self.record_id.to_le_bytes());
        out.extend_from_slice(&u32::try_from(self.members.len()).unwrap_or(0).to_le_bytes());
        for m in &self.members {
            put_string(out, &m.name);
            out.extend_from_slice(&m.mode.to_le_bytes());
            m.value.encode(out);
        }
    }

    /// Appends the reply's bytes (for tests and replays): the port, the message's size
    /// (its actual size; `announced_size` is not used) and the message, zlib-packed.
    pub fn encode(&self, out: &mut Vec<u8>) {
        let mut message = Vec::new();
        self.encode_message(&mut message);
        out.extend_from_slice(&self.service_port.to_le_bytes());
        out.extend_from_slice(&u32::try_from(message.len()).unwrap_or(0).to_be_bytes());
        out.extend_from_slice(&pack(&message));
    }
}

/// `message` as a zlib stream (compressing into memory cannot fail; were it to, the
/// result is empty and the reply does not decode).
pub fn pack(message: &[u8]) -> Vec<u8> {
    let mut e = flate2::write::ZlibEncoder::new(Vec::new(), flate2::Compression::default());
    e.write_all(message)
        .and_then(|()| e.finish())
        .unwrap_or_default()
}

/// Whether `d` looks like a reply: a port, an inflated size from 12 bytes (an empty
/// record) to [`MAX_INFLATED`], and a zlib header (deflate with a window of at most
/// 32 KiB, whose check bits hold). The port is any two bytes, so the rest must hold
/// for a guess (a GameSpy v3 challenge reply whose session id has two zero bytes in
/// the right place, and whose digits start `80`, would pass too).
pub fn looks_like_reply(d: &[u8]) -> bool {
    match (d.get(2..6), d.get(6), d.get(7)) {
        (Some(size), Some(&cmf), Some(&flg)) => {
            let size = size.try_into().map_or(0, u32::from_be_bytes);
            (12..=MAX_INFLATED as u32).contains(&size)
                && d.len() > 8
                && cmf & 0x0f == 8
                && cmf >> 4 <= 7
                && (u16::from(cmf) << 8 | u16::from(flg)) % 31 == 0
        }
        _ => false,
    }
}

/// Reads a reply.
pub fn decode_reply(datagram: &[u8]) -> Result<Reply, DecodeError> {
    let mut r = Reader::new(datagram);
    let service_port = r.u16_le("service port")?;
    let announced_size = u32::from_be_bytes(r.array::<4>("inflated size")?);
    let at = r.offset();
    if usize::try_from(announced_size).map_or(true, |n| n > MAX_INFLATED) {
        return Err(DecodeError::new(
            at.saturating_sub(4),
            "inflated size",
            DecodeErrorKind::TooLarge {
                limit: MAX_INFLATED as u64,
            },
        ));
    }
    let message = inflate(Packing::Zlib, r.take_rest(), at, "message", MAX_INFLATED)?;
    let mut reply = decode_message(&message)?;
    reply.service_port = service_port;
    reply.announced_size = announced_size;
    if usize::try_from(announced_size).ok() != Some(message.len()) {
        reply.warnings.push(DecodeWarning {
            offset: 2,
            field: "inflated size",
            message: "differs from the message's size",
        });
    }
    Ok(reply)
}

/// Reads an inflated message: the serialized record with its header (offsets count from
/// the message's start).
pub fn decode_message(message: &[u8]) -> Result<Reply, DecodeError> {
    let mut r = Reader::new(message);
    let mut d = Decoder {
        values: 0,
        latin1: None,
    };
    let format = r.u32_le("format")?;
    let record_id = r.u32_le("record id")?;
    let at = r.offset();
    let count = r.u32_le("members")?;
    let count = usize::try_from(count).unwrap_or(usize::MAX);
    if count > MAX_MEMBERS {
        return Err(DecodeError::new(
            at,
            "members",
            DecodeErrorKind::TooLarge {
                limit: MAX_MEMBERS as u64,
            },
        ));
    }
    // A member takes at least 9 bytes (an empty name, the mode, a type byte).
    if count.saturating_mul(9) > r.remaining() {
        return Err(DecodeError::new(
            at,
            "members",
            DecodeErrorKind::Truncated {
                needed: count.saturating_mul(9),
                available: r.remaining(),
            },
        ));
    }
    let mut members = Vec::with_capacity(count);
    for _ in 0..count {
        let name = d.string(&mut r, "member name")?;
        let mode = r.u32_le("member mode")?;
        let value = d.value(&mut r, 1)?;
        members.push(Member { name, mode, value });
    }
    let mut warnings = Vec::new();
    if !r.is_empty() {
        warnings.push(DecodeWarning {
            offset: r.offset(),
            field: "message",
            message: "bytes after the record ignored",
        });
    }
    if let Some(at) = d.latin1 {
        warnings.push(DecodeWarning {
            offset: at,
            field: "string",
            message: "not UTF-8: read as Latin-1",
        });
    }
    Ok(Reply {
        format,
        record_id,
        members,
        warnings,
        ..Reply::default()
    })
}

struct Decoder {
    values: usize,
    latin1: Option<usize>,
}

impl Decoder {
    fn string(&mut self, r: &mut Reader<'_>, field: &'static str) -> Result<Text, DecodeError> {
        let at = r.offset();
        let len = usize::try_from(r.u32_le(field)?).unwrap_or(usize::MAX);
        if len > MAX_STRING_BYTES {
            return Err(DecodeError::new(
                at,
                field,
                DecodeErrorKind::TooLarge {
                    limit: MAX_STRING_BYTES as u64,
                },
            ));
        }
        let b = r.take(len, field)?;
        let (t, guessed) = decode_utf8_or_latin1(std::str::from_utf8(b).map_err(|_| b));
        if guessed {
            self.latin1.get_or_insert(at);
        }
        Ok(t)
    }

    fn value(&mut self, r: &mut Reader<'_>, depth: usize) -> Result<Value, DecodeError> {
        let at = r.offset();
        self.values += 1;
        if self.values > MAX_VALUES {
            return Err(DecodeError::new(
                at,
                "value",
                DecodeErrorKind::TooLarge {
                    limit: MAX_VALUES as u64,
                },
            ));
        }
        Ok(match r.u8("value type")? {
            0 => Value::None,
            1 => {
                let hints = r.u8("number hints")?;
                Value::Number {
                    value: f64::from_le_bytes(r.array::<8>("number")?),
                    hints,
                }
            }
            2 => Value::Text(self.string(r, "text")?),
            3 => {
                if depth >= MAX_DEPTH {
                    return Err(DecodeError::new(
                        at,
                        "array",
                        DecodeErrorKind::TooLarge {
                            limit: MAX_DEPTH as u64,
                        },
                    ));
                }
                let count_at = r.offset();
                let count = usize::try_from(r.u32_le("array count")?).unwrap_or(usize::MAX);
                // An element takes at least its type byte.
                if count > r.remaining() {
                    return Err(DecodeError::new(
                        count_at,
                        "array count",
                        DecodeErrorKind::Truncated {
                            needed: count,
                            available: r.remaining(),
                        },
                    ));
                }
                let mut items = Vec::with_capacity(count.min(MAX_VALUES));
                for _ in 0..count {
                    items.push(self.value(r, depth + 1)?);
                }
                Value::Array(items)
            }
            _ => {
                return Err(DecodeError::invalid(
                    at,
                    "value type",
                    "not a value type a beacon carries (none, number, text, array)",
                ))
            }
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// doomsday-server 2.3.1 (Debian 12) on loopback: `-game doom1-freedoom -port
    /// 23209`, no players, its default name and description.
    const REAL: &str = concat!(
        "a95a0000011c789c63616060f0b26060e006d2cc409c9c962ec0c020c00424188ab33373728c1592",
        "f3f30b14b24a730b40f2b9890560791620dbd5d0d7104417e4265670000519411c20d0730031f212",
        "7353c14a81520c2ef9f9b9c529899560e5f9452508e50eabae81952797a5162119d271d9811548a5",
        "e524a61783853920667fb007c9a7a41627c39de95b9a539259909358995aa4e0915f5c027226d030",
        "b03cc80c233d633db03bd3612ee20319017491a16e5a516a2a8805d2539c9902b729d36dd53e4700",
        "b1de31d5"
    );

    #[test]
    fn the_real_servers_reply_decodes_and_round_trips() {
        let d = crate::text::from_hex(REAL).unwrap();
        assert!(looks_like_reply(&d));
        let r = decode_reply(&d).unwrap();
        assert!(r.warnings.is_empty(), "{:?}", r.warnings);
        assert_eq!((r.service_port, r.announced_size), (23209, 284));
        assert_eq!((r.format, r.members.len()), (4, 11));
        assert_eq!(r.text("name").map(Text::as_str), Some("Doomsday"));
        assert_eq!(r.text("desc").map(Text::as_str), Some("Multiplayer Host"));
        assert_eq!(r.text("game").map(Text::as_str), Some("doom1-freedoom"));
        assert_eq!(r.text("map").map(Text::as_str), Some("E1M1"));
        assert_eq!(r.text("cfg").map(Text::as_str), Some("skill3 coop jump"));
        assert_eq!(r.text("ver").map(Text::as_str), Some("2.3.1"));
        assert_eq!(r.number("pmax"), Some(15));
        assert_eq!(r.number("port"), Some(23209));
        assert_eq!(r.number("cver"), Some(20000));
        assert_eq!(r.number("flags"), Some(1));
        assert_eq!(r.get("pnum"), None);
        // the message re-encoded byte for byte (the zlib stream may differ)
        let mut message = Vec::new();
        r.encode_message(&mut message);
        assert_eq!(decode_message(&message).unwrap().members, r.members);
        assert_eq!(message.len(), 284);
    }

    #[test]
    fn every_cut_and_a_lying_size_are_errors() {
        let d = crate::text::from_hex(REAL).unwrap();
        for n in 0..d.len() {
            assert!(decode_reply(&d[..n]).is_err(), "{n}");
        }
        let mut big = d.clone();
        big[3] = 0x01; // announces 16 MiB + 284
        big[2] = 0x01;
        assert_eq!(
            decode_reply(&big).unwrap_err().kind,
            DecodeErrorKind::TooLarge {
                limit: MAX_INFLATED as u64
            }
        );
        let mut off = d.clone();
        off[5] = 0x10; // announces 272
        assert_eq!(decode_reply(&off).unwrap().warnings.len(), 1);
    }

    #[test]
    fn a_built_reply_round_trips() {
        let reply = Reply {
            service_port: 13209,
            announced_size: 0,
            format: 4,
            record_id: 7,
            members: vec![
                Member::new("name", Value::Text("Ünï".into())),
                Member::new(
                    "pmax",
                    Value::Number {
                        value: 8.0,
                        hints: 4,
                    },
                ),
                Member::new(
                    "plrs",
                    Value::Array(vec![Value::Text("a".into()), Value::None]),
                ),
            ],
            warnings: Vec::new(),
        };
        let mut d = Vec::new();
        reply.encode(&mut d);
        assert!(looks_like_reply(&d));
        let back = decode_reply(&d).unwrap();
        assert_eq!(back.members, reply.members);
        assert_eq!(back.number("pmax"), Some(8));
        assert_eq!(back.text("name").map(Text::as_str), Some("Ünï"));
        assert_eq!(back.get("plrs").unwrap().to_text(), "a,");
        assert!(back.warnings.is_empty(), "{:?}", back.warnings);
        assert!(!looks_like_reply(REAL.as_bytes()));
        assert!(!looks_like_reply(REQUEST));
    }

    #[test]
    fn numbers_read_as_integers_only_when_whole() {
        let n = |value| Value::Number { value, hints: 0 };
        assert_eq!(n(15.0).as_u32(), Some(15));
        assert_eq!(n(-1.0).as_u32(), None);
        assert_eq!(n(1.5).as_u32(), None);
        assert_eq!(n(f64::NAN).as_u32(), None);
        assert_eq!(n(5e9).as_u32(), None);
        assert_eq!(n(2_183_286_633.0).to_text(), "2183286633");
        assert_eq!(n(1.5).to_text(), "1.5");
        assert_eq!(n(f64::INFINITY).to_text(), "inf");
    }
}
