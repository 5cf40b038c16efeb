//! StarMade's server-info command and its reply, big-endian.
//!
//! Request (13 bytes): length 9 (u32), packet type `2A`, packet id `FF FF`, command `01`
//! (server info), command type `6F` (with parameters), parameter count 0 (u32).
//!
//! Reply: the length of what follows the 12-byte header (u32), a timestamp (u64), then
//! packet type `2A`, packet id (u16), command (u8), command type (u8), a parameter count
//! (u32) and the values, each a tag and its bytes: `01` i32, `02` i64, `03` f32, `04`
//! string (u16 length, UTF-8), `05` boolean, `06` byte, `07` i16 (qstat's `starmade.c`
//! names them; `08`, a byte array, it does not read, nor do we). At most [`MAX_VALUES`]
//! values are read. By position they are:
//!
//! | value | status |
//! |---|---|
//! | 0 info version | `rules` `info_version` |
//! | 1 version | `game_version` (a float, or text) |
//! | 2 name | `host_name` |
//! | 3 description | `rules` `description` |
//! | 4 start time | `rules` `start_time` (milliseconds since 1970) |
//! | 5 players | `player_count` |
//! | 6 max players | `slot_max` |

use crate::error::DecodeError;
use crate::model::Rules;
use crate::reader::Reader;
use crate::text::Text;
use crate::Status;

/// The request.
pub const REQUEST: [u8; 13] = [0, 0, 0, 9, 0x2a, 0xff, 0xff, 0x01, 0x6f, 0, 0, 0, 0];
/// The reply's header: its length (u32) and timestamp (u64).
pub const HEADER: usize = 12;
/// The most bytes a reply may have after its header (a server info is well under 1 KB).
pub const MAX_BODY: usize = 64 * 1024;
/// Values read, at most.
pub const MAX_VALUES: usize = 64;

/// One tagged value.
#[derive(Debug, Clone, PartialEq)]
pub enum Value {
    /// `01`.
    Int(i32),
    /// `02`.
    Long(i64),
    /// `03`.
    Float(f32),
    /// `04`.
    Str(String),
    /// `05`.
    Bool(bool),
    /// `06`.
    Byte(u8),
    /// `07`.
    Short(i16),
}

impl Value {
    /// The value as an integer, if it is one.
    pub fn int(&self) -> Option<i64> {
        match *self {
            Self::Int(v) => Some(i64::from(v)),
            Self::Long(v) => Some(v),
            Self::Byte(v) => Some(i64::from(v)),
            Self::Short(v) => Some(i64::from(v)),
            _ => None,
        }
    }

    /// The value as text.
    pub fn text(&self) -> String {
        match self {
            Self::Int(v) => v.to_string(),
            Self::Long(v) => v.to_string(),
            Self::Float(v) => v.to_string(),
            Self::Str(v) => v.clone(),
            Self::Bool(v) => v.to_string(),
            Self::Byte(v) => v.to_string(),
            Self::Short(v) => v.to_string(),
        }
    }
}

/// A reply, as sent.
#[derive(Debug, Clone, PartialEq)]
pub struct Reply {
    /// The server's timestamp.
    pub timestamp: u64,
    /// The packet id.
    pub packet_id: u16,
    /// The command answered (`01`).
    pub command: u8,
    /// The command type.
    pub command_type: u8,
    /// The parameter count the server said.
    pub count: u32,
    /// The values, in order.
    pub values: Vec<Value>,
}

fn u32_be(r: &mut Reader<'_>, field: &'static str) -> Result<u32, DecodeError> {
    r.array::<4>(field).map(u32::from_be_bytes)
}

/// The size of the reply at the start of `r` (header included) once its header is
/// there; an error when it says more than [`MAX_BODY`].
pub fn reply_size(r: &Reader<'_>) -> Result<Option<usize>, DecodeError> {
    let mut h = r.clone();
    let Ok(len) = u32_be(&mut h, "Length") else {
        return Ok(None);
    };
    let len = usize::try_from(len).unwrap_or(usize::MAX);
    if len > MAX_BODY {
        return Err(DecodeError::too_large(r.offset(), "Length", MAX_BODY));
    }
    Ok(Some(HEADER.saturating_add(len)))
}

/// A whole reply (header included, `r` holding exactly it).
pub fn decode_reply(r: &mut Reader<'_>) -> Result<Reply, DecodeError> {
    u32_be(r, "Length")?;
    let timestamp = r.array::<8>("Timestamp").map(u64::from_be_bytes)?;
    let at = r.offset();
    if r.u8("PacketType")? != 0x2a {
        return Err(DecodeError::invalid(
            at,
            "PacketType",
            "not 2A: not a StarMade reply",
        ));
    }
    let packet_id = r.u16_be("PacketId")?;
    let command = r.u8("Command")?;
    let command_type = r.u8("CommandType")?;
    let count = u32_be(r, "ParameterCount")?;
    let mut values = Vec::new();
    while !r.is_empty() && values.len() < MAX_VALUES {
        values.push(value(r)?);
    }
    Ok(Reply {
        timestamp,
        packet_id,
        command,
        command_type,
        count,
        values,
    })
}

fn value(r: &mut Reader<'_>) -> Result<Value, DecodeError> {
    let at = r.offset();
    Ok(match r.u8("Tag")? {
        1 => Value::Int(r.array::<4>("Int").map(i32::from_be_bytes)?),
        2 => Value::Long(r.array::<8>("Long").map(i64::from_be_bytes)?),
        3 => Value::Float(r.array::<4>("Float").map(f32::from_be_bytes)?),
        4 => {
            let n = r.u16_be("StringLength")?;
            let s = r.take(usize::from(n), "String")?;
            Value::Str(String::from_utf8_lossy(s).into_owned())
        }
        5 => Value::Bool(r.u8("Boolean")? != 0),
        6 => Value::Byte(r.u8("Byte")?),
        7 => Value::Short(r.array::<2>("Short").map(i16::from_be_bytes)?),
        _ => {
            return Err(DecodeError::invalid(
                at,
                "Tag",
                "not a value type StarMade sends (01 to 07)",
            ))
        }
    })
}

/// The status a reply says (see the module's documentation).
pub fn to_status(reply: &Reply) -> Status {
    let v = |i: usize| reply.values.get(i);
    let count = |i: usize| {
        v(i).and_then(Value::int)
            .and_then(|n| u32::try_from(n).ok())
    };
    let mut rules = Vec::new();
    for (i, k) in [(0, "info_version"), (3, "description"), (4, "start_time")] {
        if let Some(x) = v(i) {
            rules.push((Text::from(k), Text::from(x.text())));
        }
    }
    Status {
        game_name: Some(Text::from("StarMade")),
        game_version: v(1).map(|x| Text::from(x.text())),
        host_name: v(2).map(|x| Text::from(x.text())),
        player_count: count(5),
        slot_max: count(6),
        rules: Some(Rules(rules)),
        ..Status::default()
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;

    /// A reply as a server sends it: info version 2, version 0.201, name, description,
    /// start time (a long), 3 of 32 players.
    pub(crate) fn sample() -> Vec<u8> {
        let mut b = vec![0x2a, 0xff, 0xff, 0x01, 0x6f, 0, 0, 0, 7];
        b.extend([6, 2, 3]);
        b.extend(0.201f32.to_be_bytes());
        for s in ["ogp StarMade", "a test server"] {
            b.push(4);
            b.extend(u16::try_from(s.len()).unwrap().to_be_bytes());
            b.extend(s.as_bytes());
        }
        b.push(2);
        b.extend(1_700_000_000_000i64.to_be_bytes());
        b.push(1);
        b.extend(3i32.to_be_bytes());
        b.push(1);
        b.extend(32i32.to_be_bytes());
        let mut out = u32::try_from(b.len()).unwrap().to_be_bytes().to_vec();
        out.extend(1_700_000_000_123u64.to_be_bytes());
        out.extend(b);
        out
    }

    #[test]
    fn the_sample_reads() {
        let b = sample();
        assert_eq!(reply_size(&Reader::new(&b)).unwrap(), Some(b.len()));
        let r = decode_reply(&mut Reader::new(&b)).unwrap();
        assert_eq!(r.count, 7);
        let s = to_status(&r);
        assert_eq!(s.host_name.as_deref(), Some("ogp StarMade"));
        assert_eq!(s.game_version.as_deref(), Some("0.201"));
        assert_eq!((s.player_count, s.slot_max), (Some(3), Some(32)));
        assert_eq!(s.rules.unwrap().0.len(), 3);
    }

    #[test]
    fn hostile_replies() {
        let e = reply_size(&Reader::new(&[0, 1, 0, 1])).unwrap_err();
        assert!(e.to_string().contains("Length"), "{e}");
        assert_eq!(reply_size(&Reader::new(&[0, 1])).unwrap(), None);
        let mut b = sample();
        b[12] = 0x20;
        let e = decode_reply(&mut Reader::new(&b)).unwrap_err();
        assert_eq!((e.field, e.offset), ("PacketType", 12));
        let mut b = sample();
        b[21] = 9;
        let e = decode_reply(&mut Reader::new(&b)).unwrap_err();
        assert_eq!((e.field, e.offset), ("Tag", 21));
        let b = sample();
        let e = decode_reply(&mut Reader::new(&b[..b.len() - 1])).unwrap_err();
        assert_eq!(e.field, "Int");
        // A flood of values: at most MAX_VALUES read.
        let mut b = sample();
        b.extend(std::iter::repeat_n([6u8, 1], 1000).flatten());
        assert_eq!(
            decode_reply(&mut Reader::new(&b)).unwrap().values.len(),
            MAX_VALUES
        );
    }
}
