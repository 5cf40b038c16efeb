//! The GQP grammar on the wire, both directions.
//!
//! ```text
//! datagram  ::= ( SOH encoding ACK )? payload ( EOT | ETB )
//! query     ::= command ( GS command )*                  payload of a query (ends EOT)
//! command   ::= STRING ( RS STRING )*                     name, then arguments
//! replies   ::= ( RS record ( RS record )* )? reply ( GS reply )*      (see G9 for the
//!               leading continuation, which only blocks after the first carry)
//! reply     ::= DIGIT DIGIT STRING RS data                status code, command name
//! data      ::= ACK | record ( RS record )*
//! record    ::= STX STRING | DC1 STRING | DC2 STRING US STRING
//!             | DC3 STRING ( US STRING )* | DC4 STRING ( US STRING )*
//! STRING    ::= ( printable | DLE escaped )*              DLE c  stands for  c XOR 0x40
//! ```
//!
//! The entries G1… of `docs/gqp.md` give the reasons (STX records, DLE escaping, GS
//! between replies, ETB blocks, encodings and their per-datagram scope).
//!
//! Encodings apply per datagram: the payload between the header and the final byte is
//! compressed as a whole (so the compressed bytes need no escaping), then read in the
//! charset (8-bit Latin-1 by default, or UTF-8). Error offsets count from the start of the
//! datagram, or from the start of the decompressed payload for compressed datagrams.
//! Nothing here panics; decompression stops at a caller-given cap.

use std::fmt;
use std::io::Write as _;

use compact_str::CompactString;
use serde::Serialize;

use crate::error::{DecodeError, DecodeErrorKind};
use crate::inflate::Packing;
use crate::model::Text;
use crate::reader::Reader;

/// Start Of Header: opens the encoding header.
pub const SOH: u8 = 0x01;
/// Start of TeXt: a text record (echoed arguments, error messages).
pub const STX: u8 = 0x02;
/// End Of Transmission: ends a query and the last datagram of a reply.
pub const EOT: u8 = 0x04;
/// Acknowledge: ends the encoding header; alone, an empty reply.
pub const ACK: u8 = 0x06;
/// Data Link Escape: the next byte, XOR 0x40, is a literal character.
pub const DLE: u8 = 0x10;
/// A simple string record.
pub const DC1: u8 = 0x11;
/// A name = value record.
pub const DC2: u8 = 0x12;
/// An array record.
pub const DC3: u8 = 0x13;
/// A labelled array record (the first element is the label).
pub const DC4: u8 = 0x14;
/// End of Transmission Block: ends a datagram of a reply that continues in the next.
pub const ETB: u8 = 0x17;
/// Group Separator: between commands, and between replies.
pub const GS: u8 = 0x1d;
/// Record Separator: between a command and its arguments, and between records.
pub const RS: u8 = 0x1e;
/// Unit Separator: between the parts of a record.
pub const US: u8 = 0x1f;

/// Longest encoding header string we read.
pub const MAX_ENCODING_NAME: usize = 64;
/// Most arguments of one command we read.
pub const MAX_ARGS: usize = 64;

const fn is_control(b: u8) -> bool {
    b < 0x20 || b == 0x7f
}

// =======================================================================================
// Status codes

/// A reply's two-digit status code (draft "Status Codes"). Unknown codes are kept.
#[derive(Clone, Copy, PartialEq, Eq, Hash, Serialize)]
#[serde(transparent)]
pub struct StatusCode(pub u8);

impl StatusCode {
    /// 10: the command returned successfully.
    pub const OK: Self = Self(10);
    /// 20: unknown command.
    pub const UNKNOWN_COMMAND: Self = Self(20);
    /// 21: unsupported feature (encoding or authentication).
    pub const UNSUPPORTED_FEATURE: Self = Self(21);
    /// 22: incorrect number of arguments.
    pub const ARGUMENT_COUNT: Self = Self(22);
    /// 23: invalid argument.
    pub const INVALID_ARGUMENT: Self = Self(23);
    /// 30: disabled by the admin.
    pub const DISABLED: Self = Self(30);
    /// 31: temporarily unavailable.
    pub const UNAVAILABLE: Self = Self(31);
    /// 32: unauthorised, or invalid credentials.
    pub const UNAUTHORISED: Self = Self(32);
    /// 40: unsupported encoding.
    pub const UNSUPPORTED_ENCODING: Self = Self(40);
    /// 41: decode error.
    pub const DECODE_ERROR: Self = Self(41);

    /// The draft's meaning of the code, if it defines it.
    pub const fn description(self) -> Option<&'static str> {
        Some(match self.0 {
            10 => "OK",
            20 => "unknown command",
            21 => "unsupported feature",
            22 => "incorrect number of arguments",
            23 => "invalid argument",
            30 => "disabled",
            31 => "temporarily unavailable",
            32 => "unauthorised",
            40 => "unsupported encoding",
            41 => "decode error",
            _ => return None,
        })
    }

    /// Whether the command succeeded (code 10).
    pub const fn is_ok(self) -> bool {
        self.0 == 10
    }
}

impl fmt::Debug for StatusCode {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.description() {
            Some(d) => write!(f, "{} ({d})", self.0),
            None => write!(f, "{} (unknown)", self.0),
        }
    }
}

impl fmt::Display for StatusCode {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Debug::fmt(self, f)
    }
}

// =======================================================================================
// Encodings

/// How the strings of a datagram are read (G13).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Charset {
    /// The draft's "plain 8-bit ASCII": one byte per character, bytes 0x80–0xFF read as
    /// Latin-1; characters above U+00FF are sent as `?`. The default.
    #[default]
    Latin1,
    /// UTF-8 (header `utf-8`); invalid UTF-8 is a decode error.
    Utf8,
}

/// Compression of a datagram's payload (G14).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Compression {
    /// Raw DEFLATE (RFC 1951), header `deflate`.
    Deflate,
    /// gzip (RFC 1952), header `gzip`.
    Gzip,
}

/// The encoding a datagram declares in its `SOH … ACK` header (none: plain 8-bit).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default, Serialize)]
pub struct Encoding {
    /// Compression of the payload, if any.
    pub compression: Option<Compression>,
    /// Charset of the strings.
    pub charset: Charset,
}

impl Encoding {
    /// No header: plain 8-bit text.
    pub const PLAIN: Self = Self {
        compression: None,
        charset: Charset::Latin1,
    };
    /// `utf-8`.
    pub const UTF8: Self = Self {
        compression: None,
        charset: Charset::Utf8,
    };

    /// Whether this is the default (no header is sent).
    pub fn is_plain(&self) -> bool {
        *self == Self::PLAIN
    }

    /// Parses a header string: `+`-separated names, ASCII case-insensitive, at most one
    /// compression and one charset, in any order: `utf-8`, `deflate`, `deflate+utf-8`,
    /// `gzip+utf-8`, `ascii`. The empty string is the default. `None` for anything else
    /// (status 40).
    pub fn parse(name: &str) -> Option<Self> {
        let mut e = Self::PLAIN;
        if name.is_empty() {
            return Some(e);
        }
        let (mut seen_charset, mut seen_compression) = (false, false);
        for part in name.split('+') {
            let p = part.to_ascii_lowercase();
            match p.as_str() {
                "utf-8" | "utf8" => {
                    if std::mem::replace(&mut seen_charset, true) {
                        return None;
                    }
                    e.charset = Charset::Utf8;
                }
                "ascii" | "us-ascii" | "8bit" | "iso-8859-1" | "latin-1" | "latin1" => {
                    if std::mem::replace(&mut seen_charset, true) {
                        return None;
                    }
                    e.charset = Charset::Latin1;
                }
                "deflate" | "gzip" => {
                    if std::mem::replace(&mut seen_compression, true) {
                        return None;
                    }
                    e.compression = Some(if p == "gzip" {
                        Compression::Gzip
                    } else {
                        Compression::Deflate
                    });
                }
                _ => return None,
            }
        }
        Some(e)
    }

    /// The header string we send: compression first, then the charset, for example
    /// `deflate+utf-8`; empty for the default.
    pub fn name(&self) -> &'static str {
        match (self.compression, self.charset) {
            (None, Charset::Latin1) => "",
            (None, Charset::Utf8) => "utf-8",
            (Some(Compression::Deflate), Charset::Latin1) => "deflate",
            (Some(Compression::Deflate), Charset::Utf8) => "deflate+utf-8",
            (Some(Compression::Gzip), Charset::Latin1) => "gzip",
            (Some(Compression::Gzip), Charset::Utf8) => "gzip+utf-8",
        }
    }

    /// The encoding names a responder lists in `extensions`.
    pub const SUPPORTED_NAMES: [&'static str; 4] = ["utf-8", "ascii", "deflate", "gzip"];

    /// Bytes the header adds to a datagram.
    pub fn header_len(&self) -> usize {
        if self.is_plain() {
            0
        } else {
            self.name().len() + 2
        }
    }
}

impl fmt::Display for Encoding {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.is_plain() {
            f.write_str("plain")
        } else {
            f.write_str(self.name())
        }
    }
}

// =======================================================================================
// Frames: header, payload, terminator

/// Why a datagram could not be opened or read.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum FrameError {
    /// The header names an encoding we do not support (status 40).
    UnknownEncoding(Text),
    /// The datagram is malformed, its compressed payload is invalid or too large, or its
    /// text is not in its charset (status 41).
    Decode(DecodeError),
}

impl From<DecodeError> for FrameError {
    fn from(e: DecodeError) -> Self {
        Self::Decode(e)
    }
}

impl fmt::Display for FrameError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::UnknownEncoding(n) => write!(f, "unsupported encoding {n:?}"),
            Self::Decode(e) => write!(f, "{e}"),
        }
    }
}

impl std::error::Error for FrameError {}

/// A datagram's payload after its header was read and its compression undone.
struct Frame<'a> {
    encoding: Encoding,
    payload: std::borrow::Cow<'a, [u8]>,
    /// Offset reported for the payload's first byte.
    base: usize,
    /// `EOT` or `ETB`.
    terminator: u8,
}

fn open_frame(datagram: &[u8], max_decoded: usize) -> Result<Frame<'_>, FrameError> {
    let Some((&terminator, body)) = datagram.split_last() else {
        return Err(DecodeError::new(
            0,
            "EOT",
            DecodeErrorKind::Truncated {
                needed: 1,
                available: 0,
            },
        )
        .into());
    };
    if terminator != EOT && terminator != ETB {
        return Err(DecodeError::invalid(
            datagram.len().saturating_sub(1),
            "EOT",
            "does not end with EOT (or ETB)",
        )
        .into());
    }
    let mut r = Reader::new(body);
    let mut encoding = Encoding::PLAIN;
    if r.peek_u8() == Some(SOH) {
        r.u8("SOH")?;
        let start = r.offset();
        let rest = r.peek_rest();
        let Some(len) = rest.iter().position(|&b| b == ACK) else {
            return Err(
                DecodeError::invalid(start, "encoding", "no ACK after the encoding").into(),
            );
        };
        if len > MAX_ENCODING_NAME {
            return Err(DecodeError::new(
                start,
                "encoding",
                DecodeErrorKind::TooLarge {
                    limit: MAX_ENCODING_NAME as u64,
                },
            )
            .into());
        }
        let name = r.take(len, "encoding")?;
        r.u8("ACK")?;
        if !name.iter().all(|b| (0x20..=0x7e).contains(b)) {
            return Err(DecodeError::invalid(
                start,
                "encoding",
                "encoding name is not printable ASCII",
            )
            .into());
        }
        let name = std::str::from_utf8(name).unwrap_or_default();
        encoding = Encoding::parse(name).ok_or_else(|| FrameError::UnknownEncoding(name.into()))?;
    }
    let base = r.offset();
    let raw = r.take_rest();
    let (payload, base) = match encoding.compression {
        None => {
            if raw.len() > max_decoded {
                return Err(DecodeError::new(
                    base,
                    "payload",
                    DecodeErrorKind::TooLarge {
                        limit: max_decoded as u64,
                    },
                )
                .into());
            }
            (std::borrow::Cow::Borrowed(raw), base)
        }
        Some(c) => (
            std::borrow::Cow::Owned(inflate(c, raw, base, max_decoded)?),
            0,
        ),
    };
    Ok(Frame {
        encoding,
        payload,
        base,
        terminator,
    })
}

fn inflate(c: Compression, data: &[u8], at: usize, cap: usize) -> Result<Vec<u8>, DecodeError> {
    let packing = match c {
        Compression::Deflate => Packing::Deflate,
        Compression::Gzip => Packing::Gzip,
    };
    crate::inflate::inflate(packing, data, at, "compressed payload", cap)
}

fn deflate(c: Compression, data: &[u8], out: &mut Vec<u8>) {
    // Writing into memory cannot fail; on the impossible error nothing is appended and
    // the peer sees invalid compressed data (status 41), never a panic.
    let level = flate2::Compression::default();
    let done = match c {
        Compression::Deflate => {
            let mut e = flate2::write::DeflateEncoder::new(Vec::new(), level);
            e.write_all(data).and_then(|()| e.finish())
        }
        Compression::Gzip => {
            let mut e = flate2::write::GzEncoder::new(Vec::new(), level);
            e.write_all(data).and_then(|()| e.finish())
        }
    };
    if let Ok(bytes) = done {
        out.extend_from_slice(&bytes);
    }
}

/// Writes a datagram: header, `payload` (compressed if the encoding says so) and the
/// terminator.
fn write_frame(encoding: Encoding, payload: &[u8], terminator: u8, out: &mut Vec<u8>) {
    if !encoding.is_plain() {
        out.push(SOH);
        out.extend_from_slice(encoding.name().as_bytes());
        out.push(ACK);
    }
    match encoding.compression {
        None => out.extend_from_slice(payload),
        Some(c) => deflate(c, payload, out),
    }
    out.push(terminator);
}

// =======================================================================================
// Strings

/// Appends `s` as a STRING: in the charset, control characters DLE-escaped (G6).
pub fn put_string(out: &mut Vec<u8>, s: &str, charset: Charset) {
    let mut push = |b: u8| {
        if is_control(b) {
            out.push(DLE);
            out.push(b ^ 0x40);
        } else {
            out.push(b);
        }
    };
    match charset {
        Charset::Utf8 => s.bytes().for_each(&mut push),
        Charset::Latin1 => s
            .chars()
            .for_each(|c| push(u8::try_from(u32::from(c)).unwrap_or(b'?'))),
    }
}

/// Bytes `s` takes as a STRING.
fn string_len(s: &str, charset: Charset) -> usize {
    let escapes = s.bytes().filter(|&b| is_control(b)).count();
    match charset {
        Charset::Utf8 => s.len() + escapes,
        Charset::Latin1 => s.chars().count() + escapes,
    }
}

/// Reads a STRING up to the next control byte other than DLE (not consumed), undoing
/// the escapes, and decodes it in `charset`.
fn read_string(
    r: &mut Reader<'_>,
    field: &'static str,
    charset: Charset,
    scratch: &mut Vec<u8>,
) -> Result<Text, DecodeError> {
    let start = r.offset();
    scratch.clear();
    while let Some(b) = r.peek_u8() {
        if b == DLE {
            let at = r.offset();
            r.u8(field)?;
            let c = r.u8(field)?;
            if c != 0x3f && !(0x40..=0x5f).contains(&c) {
                return Err(DecodeError::invalid(
                    at,
                    field,
                    "DLE must be followed by a byte in 0x3F..=0x5F",
                ));
            }
            scratch.push(c ^ 0x40);
        } else if is_control(b) {
            break;
        } else {
            r.u8(field)?;
            scratch.push(b);
        }
    }
    match charset {
        Charset::Latin1 => Ok(crate::text::decode(scratch, false).0),
        Charset::Utf8 => match std::str::from_utf8(scratch) {
            Ok(s) => Ok(Text::from(s)),
            Err(_) => Err(DecodeError::invalid(start, field, "invalid UTF-8")),
        },
    }
}

fn unexpected(r: &Reader<'_>, field: &'static str) -> DecodeError {
    DecodeError::invalid(r.offset(), field, "unexpected control byte")
}

// =======================================================================================
// Queries

/// One command: its name and arguments.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize)]
pub struct Command {
    /// The command's name, e.g. `identify`.
    pub name: Text,
    /// Its arguments.
    pub args: Vec<Text>,
}

impl Command {
    /// A command.
    pub fn new<I, S>(name: impl Into<Text>, args: I) -> Self
    where
        I: IntoIterator<Item = S>,
        S: Into<Text>,
    {
        Self {
            name: name.into(),
            args: args.into_iter().map(Into::into).collect(),
        }
    }

    /// Parses a command line as people type it: words separated by white space, the
    /// first the name (`echo a b`). `None` for a line with no word.
    pub fn parse_line(line: &str) -> Option<Self> {
        let mut words = line.split_whitespace();
        let name = words.next()?;
        Some(Self::new(name, words))
    }

    /// Parses several command lines separated by `;` (`identify; echo a b`).
    pub fn parse_lines(lines: &str) -> Vec<Self> {
        lines.split(';').filter_map(Self::parse_line).collect()
    }
}

/// A whole query.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize)]
pub struct Query {
    /// Its encoding (plain when there is no header).
    pub encoding: Encoding,
    /// Its commands, at least one.
    pub commands: Vec<Command>,
}

/// Encodes a query datagram.
pub fn encode_query(query: &Query, out: &mut Vec<u8>) {
    let cs = query.encoding.charset;
    let mut payload = Vec::with_capacity(64);
    for (i, c) in query.commands.iter().enumerate() {
        if i > 0 {
            payload.push(GS);
        }
        put_string(&mut payload, &c.name, cs);
        for a in &c.args {
            payload.push(RS);
            put_string(&mut payload, a, cs);
        }
    }
    write_frame(query.encoding, &payload, EOT, out);
}

/// Decodes a query datagram: at most `max_commands` commands, a payload of at most
/// `max_decoded` bytes (after decompression).
pub fn decode_query(
    datagram: &[u8],
    max_commands: usize,
    max_decoded: usize,
) -> Result<Query, FrameError> {
    let frame = open_frame(datagram, max_decoded)?;
    if frame.terminator != EOT {
        return Err(DecodeError::invalid(
            datagram.len().saturating_sub(1),
            "EOT",
            "a query ends with EOT",
        )
        .into());
    }
    let cs = frame.encoding.charset;
    let mut r = Reader::with_base(&frame.payload, frame.base);
    let mut scratch = Vec::new();
    let mut commands = Vec::new();
    loop {
        if commands.len() >= max_commands {
            return Err(DecodeError::new(
                r.offset(),
                "command",
                DecodeErrorKind::TooLarge {
                    limit: max_commands as u64,
                },
            )
            .into());
        }
        let name = read_string(&mut r, "command name", cs, &mut scratch)?;
        let mut args = Vec::new();
        while r.peek_u8() == Some(RS) {
            if args.len() >= MAX_ARGS {
                return Err(DecodeError::new(
                    r.offset(),
                    "argument",
                    DecodeErrorKind::TooLarge {
                        limit: MAX_ARGS as u64,
                    },
                )
                .into());
            }
            r.u8("RS")?;
            args.push(read_string(&mut r, "argument", cs, &mut scratch)?);
        }
        commands.push(Command { name, args });
        match r.peek_u8() {
            None => break,
            Some(GS) => {
                r.u8("GS")?;
            }
            Some(_) => return Err(unexpected(&r, "command").into()),
        }
    }
    Ok(Query {
        encoding: frame.encoding,
        commands,
    })
}

// =======================================================================================
// Replies

/// One record of a reply.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Record {
    /// `STX STRING`: text, as the draft's examples carry echoed arguments and error
    /// messages (G4).
    Text(Text),
    /// `DC1 STRING`: a simple string.
    String(Text),
    /// `DC2 STRING US STRING`: name = value.
    Pair(Text, Text),
    /// `DC3 STRING (US STRING)*`: an array (on the wire at least one element: an empty
    /// array reads back as one empty string).
    Array(Vec<Text>),
    /// `DC4 STRING (US STRING)*`: a labelled array.
    Labelled(Text, Vec<Text>),
}

impl Record {
    /// Bytes this record takes in a payload in `cs`, its type byte included.
    pub fn encoded_len(&self, cs: Charset) -> usize {
        let list = |v: &[Text]| -> usize {
            v.iter().map(|s| string_len(s, cs)).sum::<usize>() + v.len().saturating_sub(1)
        };
        1 + match self {
            Self::Text(s) | Self::String(s) => string_len(s, cs),
            Self::Pair(k, v) => string_len(k, cs) + 1 + string_len(v, cs),
            Self::Array(v) => list(v),
            Self::Labelled(l, v) => {
                string_len(l, cs) + v.iter().map(|s| 1 + string_len(s, cs)).sum::<usize>()
            }
        }
    }

    fn encode(&self, cs: Charset, out: &mut Vec<u8>) {
        match self {
            Self::Text(s) => {
                out.push(STX);
                put_string(out, s, cs);
            }
            Self::String(s) => {
                out.push(DC1);
                put_string(out, s, cs);
            }
            Self::Pair(k, v) => {
                out.push(DC2);
                put_string(out, k, cs);
                out.push(US);
                put_string(out, v, cs);
            }
            Self::Array(v) => {
                out.push(DC3);
                for (i, s) in v.iter().enumerate() {
                    if i > 0 {
                        out.push(US);
                    }
                    put_string(out, s, cs);
                }
            }
            Self::Labelled(l, v) => {
                out.push(DC4);
                put_string(out, l, cs);
                for s in v {
                    out.push(US);
                    put_string(out, s, cs);
                }
            }
        }
    }
}

/// The reply to one command.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Reply {
    /// Its status code.
    pub code: StatusCode,
    /// The command's name, as the query spelled it.
    pub name: Text,
    /// Its records; none is sent as `ACK` (an empty reply).
    pub records: Vec<Record>,
}

impl Reply {
    /// A successful reply.
    pub fn ok(name: impl Into<Text>, records: Vec<Record>) -> Self {
        Self {
            code: StatusCode::OK,
            name: name.into(),
            records,
        }
    }

    /// An error reply whose message is `error: ` and the code's description, then
    /// `: detail` if there is one (G7).
    pub fn error(code: StatusCode, name: impl Into<Text>, detail: Option<&str>) -> Self {
        let mut m = CompactString::const_new("error: ");
        m.push_str(code.description().unwrap_or("error"));
        if let Some(d) = detail {
            m.push_str(": ");
            m.push_str(d);
        }
        Self {
            code,
            name: name.into(),
            records: vec![Record::Text(m)],
        }
    }

    /// The first text record (an error reply's message).
    pub fn message(&self) -> Option<&str> {
        self.records.iter().find_map(|r| match r {
            Record::Text(t) => Some(t.as_str()),
            _ => None,
        })
    }

    /// Bytes this reply takes in a payload in `charset` (without separators around it).
    pub fn encoded_len(&self, charset: Charset) -> usize {
        let records = if self.records.is_empty() {
            1
        } else {
            self.records
                .iter()
                .map(|r| r.encoded_len(charset))
                .sum::<usize>()
                + self.records.len()
                - 1
        };
        2 + string_len(&self.name, charset) + 1 + records
    }

    /// Appends this reply to a payload.
    pub fn encode(&self, charset: Charset, out: &mut Vec<u8>) {
        out.push(b'0' + (self.code.0 / 10) % 10);
        out.push(b'0' + self.code.0 % 10);
        put_string(out, &self.name, charset);
        out.push(RS);
        if self.records.is_empty() {
            out.push(ACK);
        }
        for (i, r) in self.records.iter().enumerate() {
            if i > 0 {
                out.push(RS);
            }
            r.encode(charset, out);
        }
    }
}

/// One reply datagram.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize)]
pub struct ReplyDatagram {
    /// Its encoding.
    pub encoding: Encoding,
    /// Records that continue the last reply of the previous datagram (G9); empty in the
    /// first or only datagram.
    pub continued: Vec<Record>,
    /// The replies that start in this datagram.
    pub replies: Vec<Reply>,
    /// Whether it ended with `EOT` (the last datagram) rather than `ETB`.
    pub last: bool,
}

/// Encodes a reply datagram: `continued` records first (preceded by `RS`), then the
/// replies separated by `GS`, then `EOT` (`last`) or `ETB`.
pub fn encode_reply(
    encoding: Encoding,
    continued: &[Record],
    replies: &[Reply],
    last: bool,
    out: &mut Vec<u8>,
) {
    let mut payload = Vec::with_capacity(256);
    encode_reply_payload(encoding.charset, continued, replies, &mut payload);
    write_frame(encoding, &payload, if last { EOT } else { ETB }, out);
}

/// Appends the payload (no header, no terminator) of a reply datagram.
pub(crate) fn encode_reply_payload(
    cs: Charset,
    continued: &[Record],
    replies: &[Reply],
    payload: &mut Vec<u8>,
) {
    for r in continued {
        payload.push(RS);
        r.encode(cs, payload);
    }
    for (i, r) in replies.iter().enumerate() {
        if i > 0 || !continued.is_empty() {
            payload.push(GS);
        }
        r.encode(cs, payload);
    }
}

fn read_records(
    r: &mut Reader<'_>,
    cs: Charset,
    scratch: &mut Vec<u8>,
    records: &mut Vec<Record>,
) -> Result<(), DecodeError> {
    loop {
        let at = r.offset();
        let kind = r.u8("record type")?;
        let mut s = |r: &mut Reader<'_>, field| read_string(r, field, cs, scratch);
        let rec = match kind {
            STX => Record::Text(s(r, "text")?),
            DC1 => Record::String(s(r, "string")?),
            DC2 => {
                let k = s(r, "name")?;
                if r.u8("US")? != US {
                    return Err(DecodeError::invalid(
                        r.offset().saturating_sub(1),
                        "US",
                        "name = value record without US",
                    ));
                }
                Record::Pair(k, s(r, "value")?)
            }
            DC3 | DC4 => {
                let first = s(r, "element")?;
                let mut rest = Vec::new();
                while r.peek_u8() == Some(US) {
                    r.u8("US")?;
                    rest.push(s(r, "element")?);
                }
                if kind == DC4 {
                    Record::Labelled(first, rest)
                } else {
                    rest.insert(0, first);
                    Record::Array(rest)
                }
            }
            _ => return Err(DecodeError::invalid(at, "record type", "not a record type")),
        };
        records.push(rec);
        if r.peek_u8() == Some(RS) {
            r.u8("RS")?;
        } else {
            return Ok(());
        }
    }
}

/// Decodes a reply datagram whose payload is at most `max_decoded` bytes after
/// decompression.
pub fn decode_reply(datagram: &[u8], max_decoded: usize) -> Result<ReplyDatagram, FrameError> {
    let frame = open_frame(datagram, max_decoded)?;
    let cs = frame.encoding.charset;
    let mut r = Reader::with_base(&frame.payload, frame.base);
    let mut scratch = Vec::new();
    let mut out = ReplyDatagram {
        encoding: frame.encoding,
        last: frame.terminator == EOT,
        ..ReplyDatagram::default()
    };
    if r.peek_u8() == Some(RS) {
        r.u8("RS")?;
        read_records(&mut r, cs, &mut scratch, &mut out.continued)?;
        match r.peek_u8() {
            None => return Ok(out),
            Some(GS) => {
                r.u8("GS")?;
            }
            Some(_) => return Err(unexpected(&r, "record").into()),
        }
    }
    loop {
        let at = r.offset();
        let [d1, d2] = r.array::<2>("status code")?;
        if !d1.is_ascii_digit() || !d2.is_ascii_digit() {
            return Err(DecodeError::invalid(at, "status code", "not two decimal digits").into());
        }
        let code = StatusCode((d1 - b'0') * 10 + (d2 - b'0'));
        let name = read_string(&mut r, "command name", cs, &mut scratch)?;
        if r.u8("RS")? != RS {
            return Err(DecodeError::invalid(
                r.offset().saturating_sub(1),
                "RS",
                "no RS after the command name",
            )
            .into());
        }
        let mut records = Vec::new();
        if r.peek_u8() == Some(ACK) {
            r.u8("ACK")?;
        } else {
            read_records(&mut r, cs, &mut scratch, &mut records)?;
        }
        out.replies.push(Reply {
            code,
            name,
            records,
        });
        match r.peek_u8() {
            None => return Ok(out),
            Some(GS) => {
                r.u8("GS")?;
            }
            Some(_) => return Err(unexpected(&r, "reply").into()),
        }
    }
}

// =======================================================================================
// Rendering

/// Appends `s` with control characters shown as `\u{…}` escapes, so that peer text cannot
/// drive a terminal.
fn push_safe(out: &mut String, s: &str) {
    for c in s.chars() {
        if c.is_control() {
            out.extend(c.escape_unicode());
        } else {
            out.push(c);
        }
    }
}

/// Renders replies for people, one reply per block:
///
/// ```text
/// 10 identify
///   gamename = ut
/// 20 unknown command (unknown command)
///   error: unknown command
/// ```
///
/// Records: text and strings on their own line, `name = value`, `[a, b]` for arrays and
/// `label: [a, b]` for labelled arrays, `(empty)` for an empty reply. Control characters
/// from the peer are escaped.
pub fn render_replies(replies: &[Reply]) -> String {
    let mut out = String::new();
    for reply in replies {
        out.push_str(&format!("{:02} ", reply.code.0));
        push_safe(&mut out, &reply.name);
        if !reply.code.is_ok() {
            out.push_str(" (");
            out.push_str(reply.code.description().unwrap_or("unknown status"));
            out.push(')');
        }
        out.push('\n');
        if reply.records.is_empty() {
            out.push_str("  (empty)\n");
        }
        for rec in &reply.records {
            out.push_str("  ");
            let list = |out: &mut String, v: &[Text]| {
                out.push('[');
                for (i, s) in v.iter().enumerate() {
                    if i > 0 {
                        out.push_str(", ");
                    }
                    push_safe(out, s);
                }
                out.push(']');
            };
            match rec {
                Record::Text(s) | Record::String(s) => push_safe(&mut out, s),
                Record::Pair(k, v) => {
                    push_safe(&mut out, k);
                    out.push_str(" = ");
                    push_safe(&mut out, v);
                }
                Record::Array(v) => list(&mut out, v),
                Record::Labelled(l, v) => {
                    push_safe(&mut out, l);
                    out.push_str(": ");
                    list(&mut out, v);
                }
            }
            out.push('\n');
        }
    }
    out
}

/// Renders a query for people: its encoding when there is one, then one command per
/// line with its arguments quoted and escaped (`echo "this text"`).
pub fn render_query(query: &Query) -> String {
    let mut out = String::new();
    if !query.encoding.is_plain() {
        out.push_str("encoding: ");
        out.push_str(query.encoding.name());
        out.push('\n');
    }
    for c in &query.commands {
        push_safe(&mut out, &c.name);
        for a in &c.args {
            out.push_str(&format!(" {:?}", a.as_str()));
        }
        out.push('\n');
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn queries_render_with_quoted_arguments() {
        let q = Query {
            encoding: Encoding::UTF8,
            commands: vec![
                Command::new("echo", ["this text", "a\u{4}\""]),
                Command::new("identify", Vec::<Text>::new()),
            ],
        };
        assert_eq!(
            render_query(&q),
            "encoding: utf-8\necho \"this text\" \"a\\u{4}\\\"\"\nidentify\n"
        );
    }

    fn q(bytes: &[u8]) -> Result<Query, FrameError> {
        decode_query(bytes, 32, 4096)
    }

    #[test]
    fn strings_escape_every_control_byte_with_dle() {
        let mut out = Vec::new();
        put_string(&mut out, "a\u{4}b\u{10}c\u{0}\u{7f}\u{1e}", Charset::Utf8);
        assert_eq!(out, b"a\x10Db\x10Pc\x10@\x10?\x10^");
        let mut r = Reader::new(&out);
        let s = read_string(&mut r, "s", Charset::Utf8, &mut Vec::new()).unwrap();
        assert_eq!(s, "a\u{4}b\u{10}c\u{0}\u{7f}\u{1e}");
        assert!(r.is_empty());
        // Latin-1: characters above U+00FF become '?'
        out.clear();
        put_string(&mut out, "é✓", Charset::Latin1);
        assert_eq!(out, [0xe9, b'?']);
        assert_eq!(string_len("é✓\u{1}", Charset::Latin1), 4);
        assert_eq!(string_len("é✓\u{1}", Charset::Utf8), 7);
    }

    #[test]
    fn bad_escapes_and_raw_controls_are_errors() {
        let e = q(b"ec\x10\x01ho\x04").unwrap_err();
        assert_eq!(
            e,
            FrameError::Decode(DecodeError::invalid(
                2,
                "command name",
                "DLE must be followed by a byte in 0x3F..=0x5F"
            ))
        );
        let e = q(b"ec\x05ho\x04").unwrap_err();
        assert_eq!(
            e,
            FrameError::Decode(DecodeError::invalid(
                2,
                "command",
                "unexpected control byte"
            ))
        );
        assert!(matches!(q(b"echo\x10\x04"), Err(FrameError::Decode(_))));
        assert!(matches!(q(b"echo"), Err(FrameError::Decode(_))));
        assert!(matches!(q(b"echo\x17"), Err(FrameError::Decode(_))));
    }

    #[test]
    fn queries_round_trip_in_every_encoding() {
        for enc in [
            "",
            "utf-8",
            "deflate",
            "gzip",
            "deflate+utf-8",
            "gzip+utf-8",
            "UTF-8+Deflate",
        ] {
            let encoding = Encoding::parse(enc).unwrap();
            let query = Query {
                encoding,
                commands: vec![
                    Command::new("echo", ["a b", "\u{1}x\u{1d}", "é"]),
                    Command::new("identify", Vec::<Text>::new()),
                    Command::new("", [""]),
                ],
            };
            let mut d = Vec::new();
            encode_query(&query, &mut d);
            assert_eq!(d.last(), Some(&EOT));
            assert_eq!(q(&d).unwrap(), query, "{enc}");
        }
    }

    #[test]
    fn encodings_parse_and_name() {
        assert_eq!(Encoding::parse(""), Some(Encoding::PLAIN));
        assert_eq!(Encoding::parse("utf-8"), Some(Encoding::UTF8));
        let d = Encoding::parse("deflate+utf-8").unwrap();
        assert_eq!(d.name(), "deflate+utf-8");
        assert_eq!(Encoding::parse("utf-8+deflate"), Some(d));
        assert_eq!(Encoding::parse("UNICODE"), None);
        assert_eq!(Encoding::parse("deflate+gzip"), None);
        assert_eq!(Encoding::parse("utf-8+ascii"), None);
        assert_eq!(Encoding::parse("deflate+"), None);
        assert_eq!(
            q(b"\x01bzip2+utf-8\x06echo\x04"),
            Err(FrameError::UnknownEncoding("bzip2+utf-8".into()))
        );
        assert!(matches!(
            q(b"\x01utf-8echo\x04"),
            Err(FrameError::Decode(_))
        ));
    }

    #[test]
    fn compressed_payloads_are_capped_and_checked() {
        let big = Query {
            encoding: Encoding::parse("deflate").unwrap(),
            commands: vec![Command::new("echo", ["a".repeat(5000)])],
        };
        let mut d = Vec::new();
        encode_query(&big, &mut d);
        assert!(d.len() < 100, "compresses well: {}", d.len());
        let e = q(&d).unwrap_err();
        assert!(matches!(
            e,
            FrameError::Decode(DecodeError {
                kind: DecodeErrorKind::TooLarge { limit: 4096 },
                ..
            })
        ));
        // truncated and corrupt compressed data
        let small = Query {
            encoding: Encoding::parse("gzip").unwrap(),
            commands: vec![Command::new("echo", ["hello"])],
        };
        let mut d = Vec::new();
        encode_query(&small, &mut d);
        let mut cut = d.clone();
        cut.remove(cut.len() - 3);
        assert!(matches!(q(&cut), Err(FrameError::Decode(_))));
        let mut bad = d.clone();
        let n = bad.len();
        bad[n - 4] ^= 0x55;
        assert!(matches!(q(&bad), Err(FrameError::Decode(_))));
    }

    #[test]
    fn invalid_utf8_is_a_decode_error_and_latin1_is_not() {
        assert!(matches!(
            q(b"\x01utf-8\x06ec\xffho\x04"),
            Err(FrameError::Decode(_))
        ));
        let query = q(b"ec\xe9ho\x04").unwrap();
        assert_eq!(query.commands[0].name, "ec\u{e9}ho");
    }

    #[test]
    fn replies_round_trip_with_every_record_type() {
        let replies = vec![
            Reply::ok(
                "x",
                vec![
                    Record::Text("t".into()),
                    Record::String("".into()),
                    Record::Pair("k".into(), "v\u{4}".into()),
                    Record::Array(vec!["a".into(), "".into()]),
                    Record::Labelled("l".into(), vec![]),
                    Record::Labelled("l".into(), vec!["1".into(), "2".into()]),
                ],
            ),
            Reply::ok("empty", vec![]),
            Reply::error(StatusCode::UNKNOWN_COMMAND, "nope", None),
        ];
        for enc in ["", "utf-8", "deflate+utf-8", "gzip"] {
            let encoding = Encoding::parse(enc).unwrap();
            for continued in [vec![], vec![Record::String("more".into())]] {
                let mut d = Vec::new();
                encode_reply(encoding, &continued, &replies, true, &mut d);
                let got = decode_reply(&d, 65536).unwrap();
                assert_eq!(got.replies, replies);
                assert_eq!(got.continued, continued);
                assert!(got.last);
                if encoding.compression.is_none() {
                    let mut payload = Vec::new();
                    encode_reply_payload(encoding.charset, &[], &replies, &mut payload);
                    let lens: usize = replies
                        .iter()
                        .map(|r| r.encoded_len(encoding.charset))
                        .sum();
                    assert_eq!(payload.len(), lens + replies.len() - 1);
                }
            }
        }
        // continued records only, in an ETB block
        let mut d = Vec::new();
        encode_reply(
            Encoding::PLAIN,
            &[Record::String("x".into())],
            &[],
            false,
            &mut d,
        );
        assert_eq!(d, b"\x1e\x11x\x17");
        let got = decode_reply(&d, 100).unwrap();
        assert!(!got.last && got.replies.is_empty() && got.continued.len() == 1);
    }

    #[test]
    fn malformed_replies_are_errors() {
        for bad in [
            &b""[..],
            b"\x04",
            b"1\x04",
            b"1xname\x1e\x06\x04",
            b"10name\x04",
            b"10name\x1e\x04",
            b"10name\x1e\x07x\x04",
            b"10name\x1e\x12k\x04",
            b"10name\x1e\x06\x1e\x04",
            b"10name\x1e\x06\x06\x04",
            b"10name\x1e\x06",
            b"10name\x1e\x11a\x05\x04",
            b"\x1e\x04",
        ] {
            assert!(decode_reply(bad, 1000).is_err(), "{bad:?}");
        }
    }

    #[test]
    fn render_is_readable_and_escapes_controls() {
        let s = render_replies(&[
            Reply::ok(
                "identify",
                vec![
                    Record::Pair("gamename".into(), "ut".into()),
                    Record::Labelled("0".into(), vec!["name".into(), "\u{1b}[31m".into()]),
                ],
            ),
            Reply::error(StatusCode::UNKNOWN_COMMAND, "x", None),
            Reply::ok("echo", vec![]),
        ]);
        assert_eq!(
            s,
            "10 identify\n  gamename = ut\n  0: [name, \\u{1b}[31m]\n\
             20 x (unknown command)\n  error: unknown command\n10 echo\n  (empty)\n"
        );
    }
}
