//! Ventrilo's status query (UDP 3784): a client, sans-IO, on the core's one-request
//! shape, its reply reassembled from numbered packets by the core (the core's `Parts`).
//!
//! Every packet is a 20-byte header and a body, both obfuscated. The header: two key
//! bytes (start, step), then big-endian words: zero, the command (1 general, 2 detailed:
//! we ask 2), an id, the total length, this packet's length, the packet count, this
//! packet's number, the body's two key bytes, the body's CRC-16 (CCITT, polynomial
//! `0x1021`). Header byte `i` (from 2) is offset by [`HEADER_TABLE`], walked from the key
//! start in steps of the key step, plus `(i - 2) mod 5`; body byte `i` by [`BODY_TABLE`]
//! from the body's key, plus `i mod 72` (adding when writing, subtracting when reading,
//! modulo 256). The request's body is 16 bytes: the password, NUL-padded (none here).
//!
//! The reply's bodies, joined in packet order, are text: `KEY: value` lines; `CHANNEL:`
//! and `CLIENT:` lines hold `k=v` lists separated by `,` (a client's `NAME`, `PING`,
//! `CID`, `ADMIN`, `SEC`…; a channel's `CID`, `PID`, `PROT`, `NAME`, `COMM`). The
//! decoders are total.

pub mod client;

use crate::client_oneshot::Strings;
use crate::error::{DecodeError, DecodeErrorKind};
use crate::protocol::{Entry, Transport};
use crate::reader::Reader;
use crate::text::Text;
use crate::DecodeWarning;

/// The default port.
pub const DEFAULT_PORT: u16 = 3784;
/// The header's length.
pub const HEADER_LEN: usize = 20;
/// The detailed status command (the one we send).
pub const DETAILED: u16 = 2;
/// The request body's length: the password, NUL-padded.
pub const REQUEST_BODY_LEN: usize = 16;
/// At most this many clients are kept (more are dropped, with a warning).
pub const MAX_CLIENTS: usize = 1024;
/// At most this many channels are kept (more are dropped, with a warning).
pub const MAX_CHANNELS: usize = 1024;
/// At most this many `KEY: value` lines are kept.
pub const MAX_FIELDS: usize = 1024;
/// At most this many `k=v` pairs of one channel or client are kept.
pub const MAX_PAIRS: usize = 64;

/// Ventrilo's entry (see [`Entry`]): its packets are obfuscated with random keys, so no
/// signature.
pub const ENTRY: Entry = Entry {
    aliases: &["vent"],
    help: "Ventrilo (port 3784): the obfuscated detailed-status request, answered in \
        numbered packets by the name, counts, channels and clients.",
    auto: false,
    default_port: Some(DEFAULT_PORT),
    ..Entry::new("ventrilo", "Ventrilo", Transport::Datagram)
};

/// The header's obfuscation table (a constant of the protocol).
pub const HEADER_TABLE: [u8; 256] = [
    0x80, 0xE5, 0x0E, 0x38, 0xBA, 0x63, 0x4C, 0x99, 0x88, 0x63, 0x4C, 0xD6, 0x54, 0xB8, 0x65, 0x7E,
    0xBF, 0x8A, 0xF0, 0x17, 0x8A, 0xAA, 0x4D, 0x0F, 0xB7, 0x23, 0x27, 0xF6, 0xEB, 0x12, 0xF8, 0xEA,
    0x17, 0xB7, 0xCF, 0x52, 0x57, 0xCB, 0x51, 0xCF, 0x1B, 0x14, 0xFD, 0x6F, 0x84, 0x38, 0xB5, 0x24,
    0x11, 0xCF, 0x7A, 0x75, 0x7A, 0xBB, 0x78, 0x74, 0xDC, 0xBC, 0x42, 0xF0, 0x17, 0x3F, 0x5E, 0xEB,
    0x74, 0x77, 0x04, 0x4E, 0x8C, 0xAF, 0x23, 0xDC, 0x65, 0xDF, 0xA5, 0x65, 0xDD, 0x7D, 0xF4, 0x3C,
    0x4C, 0x95, 0xBD, 0xEB, 0x65, 0x1C, 0xF4, 0x24, 0x5D, 0x82, 0x18, 0xFB, 0x50, 0x86, 0xB8, 0x53,
    0xE0, 0x4E, 0x36, 0x96, 0x1F, 0xB7, 0xCB, 0xAA, 0xAF, 0xEA, 0xCB, 0x20, 0x27, 0x30, 0x2A, 0xAE,
    0xB9, 0x07, 0x40, 0xDF, 0x12, 0x75, 0xC9, 0x09, 0x82, 0x9C, 0x30, 0x80, 0x5D, 0x8F, 0x0D, 0x09,
    0xA1, 0x64, 0xEC, 0x91, 0xD8, 0x8A, 0x50, 0x1F, 0x40, 0x5D, 0xF7, 0x08, 0x2A, 0xF8, 0x60, 0x62,
    0xA0, 0x4A, 0x8B, 0xBA, 0x4A, 0x6D, 0x00, 0x0A, 0x93, 0x32, 0x12, 0xE5, 0x07, 0x01, 0x65, 0xF5,
    0xFF, 0xE0, 0xAE, 0xA7, 0x81, 0xD1, 0xBA, 0x25, 0x62, 0x61, 0xB2, 0x85, 0xAD, 0x7E, 0x9D, 0x3F,
    0x49, 0x89, 0x26, 0xE5, 0xD5, 0xAC, 0x9F, 0x0E, 0xD7, 0x6E, 0x47, 0x94, 0x16, 0x84, 0xC8, 0xFF,
    0x44, 0xEA, 0x04, 0x40, 0xE0, 0x33, 0x11, 0xA3, 0x5B, 0x1E, 0x82, 0xFF, 0x7A, 0x69, 0xE9, 0x2F,
    0xFB, 0xEA, 0x9A, 0xC6, 0x7B, 0xDB, 0xB1, 0xFF, 0x97, 0x76, 0x56, 0xF3, 0x52, 0xC2, 0x3F, 0x0F,
    0xB6, 0xAC, 0x77, 0xC4, 0xBF, 0x59, 0x5E, 0x80, 0x74, 0xBB, 0xF2, 0xDE, 0x57, 0x62, 0x4C, 0x1A,
    0xFF, 0x95, 0x6D, 0xC7, 0x04, 0xA2, 0x3B, 0xC4, 0x1B, 0x72, 0xC7, 0x6C, 0x82, 0x60, 0xD1, 0x0D,
];

/// The body's obfuscation table (a constant of the protocol).
pub const BODY_TABLE: [u8; 256] = [
    0x82, 0x8B, 0x7F, 0x68, 0x90, 0xE0, 0x44, 0x09, 0x19, 0x3B, 0x8E, 0x5F, 0xC2, 0x82, 0x38, 0x23,
    0x6D, 0xDB, 0x62, 0x49, 0x52, 0x6E, 0x21, 0xDF, 0x51, 0x6C, 0x76, 0x37, 0x86, 0x50, 0x7D, 0x48,
    0x1F, 0x65, 0xE7, 0x52, 0x6A, 0x88, 0xAA, 0xC1, 0x32, 0x2F, 0xF7, 0x54, 0x4C, 0xAA, 0x6D, 0x7E,
    0x6D, 0xA9, 0x8C, 0x0D, 0x3F, 0xFF, 0x6C, 0x09, 0xB3, 0xA5, 0xAF, 0xDF, 0x98, 0x02, 0xB4, 0xBE,
    0x6D, 0x69, 0x0D, 0x42, 0x73, 0xE4, 0x34, 0x50, 0x07, 0x30, 0x79, 0x41, 0x2F, 0x08, 0x3F, 0x42,
    0x73, 0xA7, 0x68, 0xFA, 0xEE, 0x88, 0x0E, 0x6E, 0xA4, 0x70, 0x74, 0x22, 0x16, 0xAE, 0x3C, 0x81,
    0x14, 0xA1, 0xDA, 0x7F, 0xD3, 0x7C, 0x48, 0x7D, 0x3F, 0x46, 0xFB, 0x6D, 0x92, 0x25, 0x17, 0x36,
    0x26, 0xDB, 0xDF, 0x5A, 0x87, 0x91, 0x6F, 0xD6, 0xCD, 0xD4, 0xAD, 0x4A, 0x29, 0xDD, 0x7D, 0x59,
    0xBD, 0x15, 0x34, 0x53, 0xB1, 0xD8, 0x50, 0x11, 0x83, 0x79, 0x66, 0x21, 0x9E, 0x87, 0x5B, 0x24,
    0x2F, 0x4F, 0xD7, 0x73, 0x34, 0xA2, 0xF7, 0x09, 0xD5, 0xD9, 0x42, 0x9D, 0xF8, 0x15, 0xDF, 0x0E,
    0x10, 0xCC, 0x05, 0x04, 0x35, 0x81, 0xB2, 0xD5, 0x7A, 0xD2, 0xA0, 0xA5, 0x7B, 0xB8, 0x75, 0xD2,
    0x35, 0x0B, 0x39, 0x8F, 0x1B, 0x44, 0x0E, 0xCE, 0x66, 0x87, 0x1B, 0x64, 0xAC, 0xE1, 0xCA, 0x67,
    0xB4, 0xCE, 0x33, 0xDB, 0x89, 0xFE, 0xD8, 0x8E, 0xCD, 0x58, 0x92, 0x41, 0x50, 0x40, 0xCB, 0x08,
    0xE1, 0x15, 0xEE, 0xF4, 0x64, 0xFE, 0x1C, 0xEE, 0x25, 0xE7, 0x21, 0xE6, 0x6C, 0xC6, 0xA6, 0x2E,
    0x52, 0x23, 0xA7, 0x20, 0xD2, 0xD7, 0x28, 0x07, 0x23, 0x14, 0x24, 0x3D, 0x45, 0xA5, 0xC7, 0x90,
    0xDB, 0x77, 0xDD, 0xEA, 0x38, 0x59, 0x89, 0x32, 0xBC, 0x00, 0x3A, 0x6D, 0x61, 0x4E, 0xDB, 0x29,
];

/// The CRC-16 table of polynomial `0x1021` (`i` < 256: in bounds).
#[allow(clippy::indexing_slicing)]
const CRC_TABLE: [u16; 256] = {
    let mut t = [0u16; 256];
    let mut i = 0;
    while i < 256 {
        let mut c = (i as u16) << 8;
        let mut bit = 0;
        while bit < 8 {
            c = if c & 0x8000 != 0 {
                (c << 1) ^ 0x1021
            } else {
                c << 1
            };
            bit += 1;
        }
        t[i] = c;
        i += 1;
    }
    t
};

/// The body's checksum, as the header carries it.
pub fn crc(body: &[u8]) -> u16 {
    body.iter().fold(0u16, |c, &b| {
        let t = CRC_TABLE
            .get(usize::from(c >> 8))
            .copied()
            .unwrap_or_default();
        t ^ u16::from(b) ^ (c << 8)
    })
}

/// A packet's header, in the clear.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
#[non_exhaustive]
pub struct Header {
    /// The header's key: start and step.
    pub key: [u8; 2],
    /// Zero in every packet.
    pub zero: u16,
    /// The command.
    pub command: u16,
    /// The id.
    pub id: u16,
    /// The length of the whole reply's text.
    pub total_len: u16,
    /// This packet's body length.
    pub len: u16,
    /// How many packets the reply has.
    pub count: u16,
    /// This packet's number, from 0.
    pub number: u16,
    /// The body's key: start and step.
    pub body_key: [u8; 2],
    /// The body's checksum.
    pub crc: u16,
}

/// Offsets `bytes` by `table` walked from `key[0]` in steps of `key[1]`, plus
/// `i mod modulus`; `add` adds (obfuscating) or subtracts (reading).
fn walk(bytes: &mut [u8], table: &[u8; 256], key: [u8; 2], modulus: usize, add: bool) {
    let mut at = key[0];
    for (i, b) in bytes.iter_mut().enumerate() {
        let t = table.get(usize::from(at)).copied().unwrap_or_default();
        let step = t.wrapping_add((i % modulus) as u8);
        *b = if add {
            b.wrapping_add(step)
        } else {
            b.wrapping_sub(step)
        };
        at = at.wrapping_add(key[1]);
    }
}

/// One packet in the clear: its header and body.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
#[non_exhaustive]
pub struct Packet {
    /// The header.
    pub header: Header,
    /// The body, `header.len` bytes.
    pub body: Vec<u8>,
}

/// Reads one packet: the header in the clear, the body of its length.
pub fn decode_packet(datagram: &[u8]) -> Result<Packet, DecodeError> {
    let mut r = Reader::new(datagram);
    let key: [u8; 2] = r.array("key")?;
    let mut clear: [u8; HEADER_LEN - 2] = r.array("header")?;
    walk(&mut clear, &HEADER_TABLE, key, 5, false);
    let mut h = Reader::new(&clear);
    let word = |h: &mut Reader<'_>, f| h.u16_be(f);
    let mut header = Header {
        key,
        zero: word(&mut h, "zero")?,
        command: word(&mut h, "command")?,
        id: word(&mut h, "id")?,
        total_len: word(&mut h, "total length")?,
        len: word(&mut h, "length")?,
        count: word(&mut h, "packet count")?,
        number: word(&mut h, "packet number")?,
        ..Header::default()
    };
    header.body_key = h.array("body key")?;
    header.crc = word(&mut h, "crc")?;
    if header.zero != 0 {
        return Err(DecodeError::new(2, "zero", DecodeErrorKind::BadMagic));
    }
    let mut body = r.take(usize::from(header.len), "body")?.to_vec();
    walk(&mut body, &BODY_TABLE, header.body_key, 72, false);
    Ok(Packet { header, body })
}

impl Packet {
    /// Writes the packet obfuscated with its keys (requests, tests and replays); the
    /// length is the body's, cut at 65535 bytes.
    pub fn encode(&self, out: &mut Vec<u8>) {
        encode_packet(&self.header, &self.body, out);
    }
}

/// Writes a packet of `h` and `body` obfuscated with its keys; the length is the
/// body's, cut at 65535 bytes.
fn encode_packet(h: &Header, body: &[u8], out: &mut Vec<u8>) {
    out.extend_from_slice(&h.key);
    let start = out.len();
    let len = u16::try_from(body.len()).unwrap_or(u16::MAX);
    for w in [h.zero, h.command, h.id, h.total_len, len, h.count, h.number] {
        out.extend_from_slice(&w.to_be_bytes());
    }
    out.extend_from_slice(&h.body_key);
    out.extend_from_slice(&h.crc.to_be_bytes());
    if let Some(clear) = out.get_mut(start..) {
        walk(clear, &HEADER_TABLE, h.key, 5, true);
    }
    let start = out.len();
    out.extend_from_slice(body.get(..usize::from(len)).unwrap_or_default());
    if let Some(body) = out.get_mut(start..) {
        walk(body, &BODY_TABLE, h.body_key, 72, true);
    }
}

/// Writes the detailed-status request, its keys from `keys` (the header's step and the
/// body's step are never 0). Nothing is allocated but `out`'s growth: a retry is
/// written into the buffer of the first attempt.
pub fn encode_request(keys: u32, out: &mut Vec<u8>) {
    const BODY: [u8; REQUEST_BODY_LEN] = [0; REQUEST_BODY_LEN];
    let [a, b, c, d] = keys.to_le_bytes();
    let len = REQUEST_BODY_LEN as u16;
    let header = Header {
        key: [a, b.max(1)],
        command: DETAILED,
        total_len: len,
        len,
        count: 1,
        body_key: [c, d.max(1)],
        crc: crc(&BODY),
        ..Header::default()
    };
    encode_packet(&header, &BODY, out);
}

/// Cuts `text` into the packets of one reply (tests and replays): bodies of at most
/// `per_packet` bytes, keys from `keys`.
pub fn encode_reply(text: &[u8], per_packet: usize, keys: u32, out: &mut Vec<Vec<u8>>) {
    let chunks: Vec<&[u8]> = text.chunks(per_packet.max(1)).collect();
    let count = u16::try_from(chunks.len()).unwrap_or(u16::MAX);
    let total_len = u16::try_from(text.len()).unwrap_or(u16::MAX);
    for (n, c) in chunks.iter().enumerate() {
        let k = keys
            .wrapping_mul(0x9E37_79B9)
            .wrapping_add(n as u32)
            .to_le_bytes();
        let mut b = Vec::new();
        Packet {
            header: Header {
                key: [k[0], k[1].max(1)],
                command: DETAILED,
                total_len,
                len: c.len() as u16,
                count,
                number: n as u16,
                body_key: [k[2], k[3].max(1)],
                crc: crc(c),
                ..Header::default()
            },
            body: c.to_vec(),
        }
        .encode(&mut b);
        out.push(b);
    }
}

/// The status text, parsed.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
#[non_exhaustive]
pub struct Reply {
    /// The `KEY: value` lines other than channels and clients, in order.
    pub fields: Vec<(Text, Text)>,
    /// The channels: their `k=v` lists.
    pub channels: Vec<Vec<(Text, Text)>>,
    /// The clients: their `k=v` lists.
    pub clients: Vec<Vec<(Text, Text)>>,
    /// What was noticed while decoding.
    pub warnings: Vec<DecodeWarning>,
}

impl Reply {
    /// The value of `key` (the first line naming it).
    pub fn get(&self, key: &str) -> Option<&str> {
        self.fields
            .iter()
            .find(|(k, _)| &**k == key)
            .map(|(_, v)| &**v)
    }
}

/// The value of `key` in a `k=v` list.
pub fn get<'a>(list: &'a [(Text, Text)], key: &str) -> Option<&'a str> {
    list.iter().find(|(k, _)| &**k == key).map(|(_, v)| &**v)
}

/// A `k=v` list, at most [`MAX_PAIRS`] pairs; whether pairs were left out.
fn pairs(s: &str) -> (Vec<(Text, Text)>, bool) {
    let mut all = s.split(',').filter(|kv| !kv.is_empty());
    let kept = all
        .by_ref()
        .take(MAX_PAIRS)
        .map(|kv| match kv.split_once('=') {
            Some((k, v)) => (k.into(), v.into()),
            None => (kv.into(), Text::default()),
        })
        .collect();
    (kept, all.next().is_some())
}

/// Reads the reply's text (the packets' bodies, joined): UTF-8, else Latin-1; NULs end
/// it. Never fails: a line without `: ` is a key with an empty value.
pub fn decode_text(body: &[u8]) -> Reply {
    let mut s = Strings::default();
    let end = body.iter().position(|&b| b == 0).unwrap_or(body.len());
    let text = s.text(0, body.get(..end).unwrap_or_default());
    let mut reply = Reply::default();
    let mut cut = false;
    for line in text.split('\n') {
        let line = line.strip_suffix('\r').unwrap_or(line);
        let (key, value) = line.split_once(": ").unwrap_or((line, ""));
        if key.is_empty() {
            continue;
        }
        let list = match key {
            "CHANNEL" => Some((&mut reply.channels, MAX_CHANNELS)),
            "CLIENT" => Some((&mut reply.clients, MAX_CLIENTS)),
            _ => None,
        };
        match list {
            Some((list, max)) if list.len() < max => {
                let (kv, more) = pairs(value);
                cut |= more;
                list.push(kv);
            }
            None if reply.fields.len() < MAX_FIELDS => {
                reply.fields.push((key.into(), value.into()));
            }
            _ => cut = true,
        }
    }
    reply.warnings = s.warnings();
    if cut {
        reply.warnings.push(DecodeWarning {
            offset: 0,
            field: "status text",
            message: "more lines, clients, channels or values than kept: the rest dropped",
        });
    }
    reply
}

/// Writes a reply's text (tests and replays): its fields, then its channels and clients.
pub fn encode_text(r: &Reply) -> Vec<u8> {
    let mut out = String::new();
    for (k, v) in &r.fields {
        out.push_str(&format!("{k}: {v}\n"));
    }
    for (key, lists) in [("CHANNEL", &r.channels), ("CLIENT", &r.clients)] {
        for l in lists {
            let kv: Vec<String> = l.iter().map(|(k, v)| format!("{k}={v}")).collect();
            out.push_str(&format!("{key}: {}\n", kv.join(",")));
        }
    }
    out.into_bytes()
}
