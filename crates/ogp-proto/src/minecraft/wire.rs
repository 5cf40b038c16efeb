//! The Server List Ping on the wire: VarInt framing, the handshake, the status request
//! and response, ping and pong, and the legacy `0xFE 0x01` ping of servers before 1.7.
//!
//! Every packet is a VarInt length, then the packet: a VarInt id and its fields. A VarInt
//! is 7 bits a byte, least significant group first, the high bit saying more follow; one
//! of more than 5 bytes (10 for a VarLong) is an error. Strings are a VarInt byte length
//! and UTF-8. Decoders read through the bounded reader and never allocate more than the
//! input; a frame longer than the caller's cap is refused from its length alone.

use std::borrow::Cow;

use crate::error::{DecodeError, DecodeErrorKind};
use crate::reader::Reader;

/// Most bytes of a VarInt.
pub const MAX_VARINT_LEN: usize = 5;
/// Most bytes of a VarLong.
pub const MAX_VARLONG_LEN: usize = 10;
/// Most UTF-16 units of the status JSON (the protocol's string limit).
pub const MAX_STATUS_UNITS: usize = 32_767;
/// Most bytes of the status JSON: each UTF-16 unit is at most 3 bytes of UTF-8.
pub const MAX_STATUS_JSON_BYTES: usize = MAX_STATUS_UNITS * 3;
/// Most bytes of a status response packet (id, string length, JSON), without its own
/// length prefix.
pub const MAX_STATUS_FRAME: usize = 1 + 3 + MAX_STATUS_JSON_BYTES;
/// Most bytes of the host name in a handshake (the vanilla server reads 255 characters).
pub const MAX_HOST_BYTES: usize = 255;

/// The packet id of the handshake, the status request and the status response.
pub const ID_STATUS: i32 = 0x00;
/// The packet id of ping and pong.
pub const ID_PING: i32 = 0x01;

/// The legacy ping (servers 1.4–1.6 answer it, most newer ones too).
pub const LEGACY_PING: [u8; 2] = [0xfe, 0x01];
/// The first byte of the legacy reply (a kick packet).
pub const LEGACY_KICK: u8 = 0xff;

fn varint_of<const MAX: usize>(
    r: &mut Reader<'_>,
    field: &'static str,
) -> Result<u64, DecodeError> {
    let start = r.offset();
    let mut value: u64 = 0;
    for i in 0..MAX {
        let b = r.u8(field)?;
        value |= u64::from(b & 0x7f) << (7 * i);
        if b & 0x80 == 0 {
            return Ok(value);
        }
    }
    Err(DecodeError::invalid(
        start,
        field,
        "VarInt longer than its maximum size",
    ))
}

/// Reads a VarInt (at most 5 bytes; bits past 32 are dropped, as the game does).
pub fn read_varint(r: &mut Reader<'_>, field: &'static str) -> Result<i32, DecodeError> {
    // Truncation to 32 bits is the encoding's definition.
    #[allow(clippy::cast_possible_truncation)]
    varint_of::<MAX_VARINT_LEN>(r, field).map(|v| v as u32 as i32)
}

/// Reads a VarLong (at most 10 bytes).
pub fn read_varlong(r: &mut Reader<'_>, field: &'static str) -> Result<i64, DecodeError> {
    #[allow(clippy::cast_possible_wrap)]
    varint_of::<MAX_VARLONG_LEN>(r, field).map(|v| v as i64)
}

/// Appends `v` as a VarInt (negative values take 5 bytes).
pub fn write_varint(out: &mut Vec<u8>, v: i32) {
    #[allow(clippy::cast_sign_loss)]
    write_unsigned(out, u64::from(v as u32));
}

/// Appends `v` as a VarLong (negative values take 10 bytes).
pub fn write_varlong(out: &mut Vec<u8>, v: i64) {
    #[allow(clippy::cast_sign_loss)]
    write_unsigned(out, v as u64);
}

fn write_unsigned(out: &mut Vec<u8>, mut v: u64) {
    loop {
        // The low 7 bits, by construction.
        #[allow(clippy::cast_possible_truncation)]
        let b = (v & 0x7f) as u8;
        v >>= 7;
        if v == 0 {
            out.push(b);
            return;
        }
        out.push(b | 0x80);
    }
}

/// Appends a string: its VarInt byte length, then its UTF-8.
fn write_string(out: &mut Vec<u8>, s: &str) {
    write_varint(out, i32::try_from(s.len()).unwrap_or(i32::MAX));
    out.extend_from_slice(s.as_bytes());
}

/// Appends `packet` with its VarInt length in front.
pub fn write_frame(out: &mut Vec<u8>, packet: &[u8]) {
    write_varint(out, i32::try_from(packet.len()).unwrap_or(i32::MAX));
    out.extend_from_slice(packet);
}

/// Where a complete frame lies at the front of the received bytes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Frame {
    /// Bytes of the length prefix.
    pub header: usize,
    /// Bytes of the packet after it.
    pub len: usize,
}

impl Frame {
    /// Bytes of the whole frame.
    pub fn total(&self) -> usize {
        self.header.saturating_add(self.len)
    }
}

/// The frame at the front of `r`: `Ok(None)` while its length prefix or body is still
/// incomplete, an error for a length prefix of more than 5 bytes, a negative or zero
/// length, or one above `max_len` (refused before the body arrives).
pub fn split_frame(r: &Reader<'_>, max_len: usize) -> Result<Option<Frame>, DecodeError> {
    let mut probe = r.clone();
    let start = probe.offset();
    let len = match read_varint(&mut probe, "Length") {
        Ok(l) => l,
        Err(e) if matches!(e.kind, DecodeErrorKind::Truncated { .. }) => return Ok(None),
        Err(e) => return Err(e),
    };
    let len = usize::try_from(len)
        .ok()
        .filter(|l| *l > 0)
        .ok_or(DecodeError::invalid(
            start,
            "Length",
            "not a positive packet length",
        ))?;
    if len > max_len {
        return Err(DecodeError::new(
            start,
            "Length",
            DecodeErrorKind::TooLarge {
                limit: u64::try_from(max_len).unwrap_or(u64::MAX),
            },
        ));
    }
    let header = probe.offset().saturating_sub(start);
    if probe.remaining() < len {
        return Ok(None);
    }
    Ok(Some(Frame { header, len }))
}

/// The handshake of a status query.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Handshake<'a> {
    /// The protocol version we speak: -1 by convention when pinging to learn the
    /// server's version.
    pub protocol_version: i32,
    /// The host name or address the player typed (servers behind proxies route by it).
    pub host: &'a str,
    /// The port.
    pub port: u16,
}

impl Handshake<'_> {
    /// Appends the handshake (next state 1, status) and the status request, each with
    /// its length prefix. A host name longer than [`MAX_HOST_BYTES`] is cut there (at a
    /// character boundary).
    pub fn encode_with_request(&self, out: &mut Vec<u8>) {
        let mut host = self.host;
        while host.len() > MAX_HOST_BYTES {
            let mut cut = MAX_HOST_BYTES;
            while !host.is_char_boundary(cut) {
                cut -= 1;
            }
            host = host.get(..cut).unwrap_or_default();
        }
        let mut p = Vec::with_capacity(16 + host.len());
        write_varint(&mut p, ID_STATUS);
        write_varint(&mut p, self.protocol_version);
        write_string(&mut p, host);
        p.extend_from_slice(&self.port.to_be_bytes());
        write_varint(&mut p, 1);
        write_frame(out, &p);
        write_frame(out, &[0x00]);
    }
}

/// Appends a ping (or, from a server, a pong) carrying `payload`.
pub fn encode_ping(out: &mut Vec<u8>, payload: i64) {
    let mut p = Vec::with_capacity(9);
    write_varint(&mut p, ID_PING);
    p.extend_from_slice(&payload.to_be_bytes());
    write_frame(out, &p);
}

/// Appends a status response carrying `json` (for tests and servers).
pub fn encode_status(out: &mut Vec<u8>, json: &str) {
    let mut p = Vec::with_capacity(json.len() + 4);
    write_varint(&mut p, ID_STATUS);
    write_string(&mut p, json);
    write_frame(out, &p);
}

/// Reads a status response packet (after its length prefix): id 0, then the JSON
/// string, at most `max_json` bytes and [`MAX_STATUS_UNITS`] UTF-16 units.
pub fn decode_status<'a>(r: &mut Reader<'a>, max_json: usize) -> Result<&'a str, DecodeError> {
    let at = r.offset();
    let id = read_varint(r, "PacketId")?;
    if id != ID_STATUS {
        return Err(DecodeError::invalid(
            at,
            "PacketId",
            "not a status response (id 0)",
        ));
    }
    let at = r.offset();
    let len = read_varint(r, "JsonLength")?;
    let len = usize::try_from(len)
        .map_err(|_| DecodeError::invalid(at, "JsonLength", "negative string length"))?;
    let max = max_json.min(MAX_STATUS_JSON_BYTES);
    if len > max {
        return Err(DecodeError::new(
            at,
            "JsonLength",
            DecodeErrorKind::TooLarge {
                limit: u64::try_from(max).unwrap_or(u64::MAX),
            },
        ));
    }
    let at = r.offset();
    let bytes = r.take(len, "Json")?;
    let s = std::str::from_utf8(bytes).map_err(|e| {
        DecodeError::invalid(at.saturating_add(e.valid_up_to()), "Json", "not UTF-8")
    })?;
    if s.encode_utf16().count() > MAX_STATUS_UNITS {
        return Err(DecodeError::new(
            at,
            "Json",
            DecodeErrorKind::TooLarge {
                limit: MAX_STATUS_UNITS as u64,
            },
        ));
    }
    Ok(s)
}

/// Reads a pong packet (after its length prefix): id 1 and the 8-byte payload.
pub fn decode_pong(r: &mut Reader<'_>) -> Result<i64, DecodeError> {
    let at = r.offset();
    let id = read_varint(r, "PacketId")?;
    if id != ID_PING {
        return Err(DecodeError::invalid(at, "PacketId", "not a pong (id 1)"));
    }
    r.array::<8>("Payload").map(i64::from_be_bytes)
}

/// A legacy (pre-1.7) ping reply.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
#[non_exhaustive]
pub struct LegacyReply {
    /// The protocol number (1.4 and later; `None` from older servers).
    pub protocol: Option<i32>,
    /// The version name (1.4 and later).
    pub version: Option<String>,
    /// The message of the day, with its `§` codes.
    pub motd: String,
    /// Players online.
    pub online: Option<u32>,
    /// Slots.
    pub max: Option<u32>,
}

/// The bytes a complete legacy reply at the front of `r` takes: `Ok(None)` while it is
/// incomplete.
pub fn split_legacy(r: &Reader<'_>) -> Result<Option<usize>, DecodeError> {
    let mut probe = r.clone();
    let at = probe.offset();
    match probe.peek_u8() {
        None => return Ok(None),
        Some(LEGACY_KICK) => {}
        Some(_) => {
            return Err(DecodeError::new(at, "PacketId", DecodeErrorKind::BadMagic));
        }
    }
    if probe.remaining() < 3 {
        return Ok(None);
    }
    let _ = probe.u8("PacketId")?;
    let units = usize::from(probe.u16_be("Length")?);
    let total = 3 + units * 2;
    Ok((r.remaining() >= total).then_some(total))
}

/// Reads a complete legacy reply: `0xFF`, a u16 count of UTF-16 units, then that string
/// in UTF-16BE: `§1\0protocol\0version\0motd\0online\0max` (1.4–1.6), or
/// `motd§online§max` (before 1.4).
pub fn decode_legacy(r: &mut Reader<'_>) -> Result<LegacyReply, DecodeError> {
    let at = r.offset();
    if r.u8("PacketId")? != LEGACY_KICK {
        return Err(DecodeError::new(at, "PacketId", DecodeErrorKind::BadMagic));
    }
    let units = usize::from(r.u16_be("Length")?);
    let bytes = r.take(units * 2, "Reason")?;
    let text: String = char::decode_utf16(bytes.chunks_exact(2).map(|c| {
        u16::from_be_bytes([
            c.first().copied().unwrap_or(0),
            c.get(1).copied().unwrap_or(0),
        ])
    }))
    .map(|c| c.unwrap_or(char::REPLACEMENT_CHARACTER))
    .collect();
    let number = |s: Option<&str>| s.and_then(|s| s.trim().parse::<u32>().ok());
    if let Some(rest) = text.strip_prefix("§1\0") {
        let mut f = rest.split('\0');
        let protocol = f.next().and_then(|s| s.trim().parse().ok());
        let version = f.next().map(str::to_owned);
        let motd = f.next().unwrap_or_default().to_owned();
        let online = number(f.next());
        let max = number(f.next());
        return Ok(LegacyReply {
            protocol,
            version,
            motd,
            online,
            max,
        });
    }
    let mut f = text.rsplitn(3, '§');
    let max = number(f.next());
    let online = number(f.next());
    match (f.next(), online, max) {
        (Some(motd), Some(_), Some(_)) => Ok(LegacyReply {
            motd: motd.to_owned(),
            online,
            max,
            ..LegacyReply::default()
        }),
        _ => Err(DecodeError::invalid(
            at.saturating_add(3),
            "Reason",
            "not a server list reply (neither §1 fields nor motd§online§max)",
        )),
    }
}

/// Encodes a legacy reply in the 1.4–1.6 form (for tests and servers).
pub fn encode_legacy(out: &mut Vec<u8>, reply: &LegacyReply) {
    let s = format!(
        "§1\0{}\0{}\0{}\0{}\0{}",
        reply.protocol.unwrap_or(0),
        reply.version.as_deref().unwrap_or_default(),
        reply.motd,
        reply.online.unwrap_or(0),
        reply.max.unwrap_or(0)
    );
    let units: Vec<u16> = s.encode_utf16().take(usize::from(u16::MAX)).collect();
    out.push(LEGACY_KICK);
    out.extend_from_slice(&u16::try_from(units.len()).unwrap_or(u16::MAX).to_be_bytes());
    for u in units {
        out.extend_from_slice(&u.to_be_bytes());
    }
}

/// The escape a lone surrogate becomes: U+FFFD, six bytes like the escape it replaces.
const REPLACEMENT_ESCAPE: &str = "\\ufffd";

/// The status JSON with every lone UTF-16 surrogate escape (`\ud800` not followed by a
/// low surrogate `\udc00`–`\udfff`, or a low one alone) replaced with `\ufffd`, and how
/// many were replaced.
///
/// Java servers write their JSON from UTF-16 strings, so a MOTD cut in the middle of a
/// pair, or made that way, carries one. JSON's grammar allows it but a Rust string cannot
/// hold it, and serde_json refuses the whole text. Python's `json` (mcstatus) keeps it in
/// its `str`, which Python then refuses to encode as UTF-8 (printing it fails; `errors=
/// "replace"` gives `?`). We take the Unicode way, U+FFFD, and keep the rest of the
/// status. The replacement has the escape's length, so byte offsets of errors still
/// point into the text as sent.
pub fn replace_lone_surrogates(json: &str) -> (Cow<'_, str>, usize) {
    if !json.contains("\\u") {
        return (Cow::Borrowed(json), 0);
    }
    let mut r = Reader::new(json.as_bytes());
    let mut out = String::new();
    let mut copied = 0;
    let mut replaced = 0usize;
    while let Some(n) = r.peek_rest().iter().position(|&b| b == b'\\') {
        let at = r.offset().saturating_add(n);
        if r.take(n.saturating_add(1), "escape").is_err() {
            break;
        }
        if r.peek_u8() != Some(b'u') {
            // `\"`, `\\` and the rest: the escaped byte is not the start of another.
            let _ = r.take(1, "escape");
            continue;
        }
        let _ = r.take(1, "escape");
        let Some(unit) = r.take(4, "escape").ok().and_then(hex_unit) else {
            continue;
        };
        let lone = match unit {
            0xd800..=0xdbff => {
                let low = r
                    .peek_rest()
                    .strip_prefix(b"\\u")
                    .and_then(|rest| rest.get(..4))
                    .and_then(hex_unit)
                    .is_some_and(|u| (0xdc00..=0xdfff).contains(&u));
                if low {
                    // A whole pair: both escapes stay.
                    let _ = r.take(6, "escape");
                }
                !low
            }
            0xdc00..=0xdfff => true,
            _ => false,
        };
        if lone {
            out.push_str(json.get(copied..at).unwrap_or_default());
            out.push_str(REPLACEMENT_ESCAPE);
            copied = r.offset();
            replaced = replaced.saturating_add(1);
        }
    }
    if replaced == 0 {
        return (Cow::Borrowed(json), 0);
    }
    out.push_str(json.get(copied..).unwrap_or_default());
    (Cow::Owned(out), replaced)
}

/// Four hexadecimal digits as a UTF-16 unit.
fn hex_unit(hex: &[u8]) -> Option<u16> {
    if hex.len() != 4 || !hex.iter().all(u8::is_ascii_hexdigit) {
        return None;
    }
    u16::from_str_radix(std::str::from_utf8(hex).ok()?, 16).ok()
}

#[cfg(test)]
mod tests {
    #[test]
    fn lone_surrogates_are_replaced_and_pairs_kept() {
        use super::replace_lone_surrogates as fix;
        assert_eq!(fix(r#""a\ud800b""#), (r#""a\ufffdb""#.into(), 1));
        assert_eq!(fix(r#""\udc00\ud800""#), (r#""\ufffd\ufffd""#.into(), 2));
        // A pair, an escaped backslash before `ud800`, and a high surrogate at the end.
        assert_eq!(fix(r#""\ud83d\ude00""#).1, 0);
        assert_eq!(fix(r#""\\ud800""#).1, 0);
        assert_eq!(fix(r#""x\uD83D""#), (r#""x\ufffd""#.into(), 1));
        assert_eq!(
            fix(r#""\ud800\ud800\udc00""#),
            (r#""\ufffd\ud800\udc00""#.into(), 1)
        );
        // Cut escapes are left for the JSON parser to refuse.
        assert_eq!(fix(r#""\ud8"#).1, 0);
        assert_eq!(fix("\\").1, 0);
        // Every fixed text parses, to U+FFFD where the lone one was.
        let (fixed, _) = fix(r#"{"text":"a\ud800b\udfff"}"#);
        let v: serde_json::Value = serde_json::from_str(&fixed).unwrap();
        assert_eq!(v["text"], "a\u{fffd}b\u{fffd}");
    }

    use super::*;

    fn varint(bytes: &[u8]) -> Result<i32, DecodeError> {
        read_varint(&mut Reader::new(bytes), "v")
    }

    #[test]
    fn varints_of_the_protocol_wiki() {
        for (v, bytes) in [
            (0, &[0x00][..]),
            (1, &[0x01]),
            (127, &[0x7f]),
            (128, &[0x80, 0x01]),
            (255, &[0xff, 0x01]),
            (25_565, &[0xdd, 0xc7, 0x01]),
            (2_097_151, &[0xff, 0xff, 0x7f]),
            (i32::MAX, &[0xff, 0xff, 0xff, 0xff, 0x07]),
            (-1, &[0xff, 0xff, 0xff, 0xff, 0x0f]),
            (i32::MIN, &[0x80, 0x80, 0x80, 0x80, 0x08]),
        ] {
            assert_eq!(varint(bytes), Ok(v), "{bytes:02x?}");
            let mut out = Vec::new();
            write_varint(&mut out, v);
            assert_eq!(out, bytes);
        }
        let mut out = Vec::new();
        write_varlong(&mut out, -1);
        assert_eq!(out.len(), 10);
        assert_eq!(read_varlong(&mut Reader::new(&out), "v"), Ok(-1));
    }

    #[test]
    fn a_varint_of_six_bytes_is_an_error_not_a_wait() {
        let e = varint(&[0x80; 6]).unwrap_err();
        assert_eq!(e.offset, 0);
        assert!(e.to_string().contains("VarInt longer"), "{e}");
        // Five continuation bytes are already too many for a length prefix.
        let e = split_frame(&Reader::new(&[0x80; 5]), 100).unwrap_err();
        assert!(e.to_string().contains("VarInt longer"), "{e}");
        // Four are a prefix still arriving.
        assert_eq!(split_frame(&Reader::new(&[0x80; 4]), 100), Ok(None));
    }

    #[test]
    fn a_length_above_the_cap_is_refused_from_the_prefix() {
        // 2 GiB - 1 in five bytes, and nothing of the body.
        let e =
            split_frame(&Reader::with_base(&[0xff, 0xff, 0xff, 0xff, 0x07], 7), 1000).unwrap_err();
        assert_eq!((e.field, e.offset), ("Length", 7));
        assert!(matches!(e.kind, DecodeErrorKind::TooLarge { limit: 1000 }));
    }

    #[test]
    fn the_handshake_is_as_the_wiki_shows() {
        let mut out = Vec::new();
        Handshake {
            protocol_version: 763,
            host: "localhost",
            port: 25565,
        }
        .encode_with_request(&mut out);
        let mut want = vec![0x10, 0x00, 0xfb, 0x05, 0x09];
        want.extend_from_slice(b"localhost");
        want.extend_from_slice(&[0x63, 0xdd, 0x01, 0x01, 0x00]);
        assert_eq!(out, want);
    }

    #[test]
    fn legacy_replies_of_both_forms() {
        let mut out = Vec::new();
        let r = LegacyReply {
            protocol: Some(78),
            version: Some("1.6.4".into()),
            motd: "§aA server".into(),
            online: Some(3),
            max: Some(20),
        };
        encode_legacy(&mut out, &r);
        assert_eq!(split_legacy(&Reader::new(&out[..out.len() - 1])), Ok(None));
        assert_eq!(split_legacy(&Reader::new(&out)), Ok(Some(out.len())));
        assert_eq!(decode_legacy(&mut Reader::new(&out)), Ok(r));
        let old: Vec<u8> = "Old§1§10"
            .encode_utf16()
            .flat_map(u16::to_be_bytes)
            .collect();
        let mut out = vec![0xff, 0, 8];
        out.extend_from_slice(&old);
        let r = decode_legacy(&mut Reader::new(&out)).unwrap();
        assert_eq!(
            (r.motd.as_str(), r.online, r.max),
            ("Old", Some(1), Some(10))
        );
    }
}
