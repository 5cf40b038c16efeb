//! Character encodings for zero-terminated strings on the wire.
//!
//! Strings in the model are Rust `String`s (Unicode). On the wire a protocol uses either
//! UTF-8 or Latin-1 (ISO 8859-1). Encoding to Latin-1 maps U+0000–U+00FF to one byte each
//! and everything else to `?`, as the reference OGP SDK does. NUL characters cannot be
//! carried by a zero-terminated string and are dropped when encoding. Decoding invalid
//! UTF-8 never fails: it is decoded lossily (U+FFFD) and reported to the caller.

/// A model value for a 16-bit wire field, little-endian: larger values saturate at 65535
/// (the model is wider than some protocols; each encoder clamps to its field).
pub(crate) fn u16_le_sat(v: Option<u32>) -> [u8; 2] {
    u16::try_from(v.unwrap_or(0))
        .unwrap_or(u16::MAX)
        .to_le_bytes()
}

/// The string type of the model: a UTF-8 string stored inline up to 24 bytes, so that
/// decoding a typical answer allocates almost nothing. It derefs to `&str`, converts from
/// `&str` and `String` with `.into()`, and serializes as a plain string.
pub type Text = compact_str::CompactString;

use ascii::AsAsciiStr as _;

/// Appends `s` to `out` in UTF-8 or Latin-1, without NUL characters, followed by a NUL.
pub(crate) fn put_cstr(out: &mut Vec<u8>, s: &str, utf8: bool) {
    if utf8 {
        if s.as_bytes().contains(&0) {
            out.extend(s.bytes().filter(|&b| b != 0));
        } else {
            out.extend_from_slice(s.as_bytes());
        }
    } else if s.is_ascii() {
        out.extend(s.bytes().filter(|&b| b != 0));
    } else {
        out.extend(s.chars().filter(|&c| c != '\0').map(|c| {
            let cp = u32::from(c);
            u8::try_from(cp).unwrap_or(b'?')
        }));
    }
    out.push(0);
}

/// Decodes wire bytes. Returns the string and whether any bytes were invalid UTF-8
/// (only possible when `utf8` is true). Latin-1 decoding cannot fail. Strings of up to 24
/// bytes are stored inline (no allocation).
pub(crate) fn decode(bytes: &[u8], utf8: bool) -> (Text, bool) {
    if bytes.is_empty() {
        (Text::const_new(""), false)
    } else if let Some(ascii) = ascii(bytes) {
        (ascii, false)
    } else if utf8 {
        match std::str::from_utf8(bytes) {
            Ok(s) => (Text::from(s), false),
            Err(_) => (Text::from_utf8_lossy(bytes), true),
        }
    } else {
        (bytes.iter().map(|&b| char::from(b)).collect(), false)
    }
}

/// The text of ASCII bytes, `None` when any byte is not ASCII. Most strings on the wire
/// are short and ASCII, which reads the same in UTF-8 and Latin-1: checking for ASCII
/// costs about a third of UTF-8 validation on them.
#[inline]
pub(crate) fn ascii(bytes: &[u8]) -> Option<Text> {
    bytes.as_ascii_str().ok().map(|a| Text::from(a.as_str()))
}

/// Decodes UTF-8, or Latin-1 when the bytes are not UTF-8 (true then), as servers that
/// announce no charset send either.
pub(crate) fn decode_utf8_or_latin1(bytes: &[u8]) -> (Text, bool) {
    if let Some(t) = ascii(bytes) {
        return (t, false);
    }
    match std::str::from_utf8(bytes) {
        Ok(s) => (Text::from(s), false),
        Err(_) => (bytes.iter().map(|&b| char::from(b)).collect(), true),
    }
}

/// Appends `bytes` as lower-case hexadecimal.
pub fn push_hex(out: &mut String, bytes: &[u8]) {
    const HEX: &[u8; 16] = b"0123456789abcdef";
    let digit = |n: u8| char::from(HEX.get(usize::from(n)).copied().unwrap_or(b'?'));
    for &b in bytes {
        out.push(digit(b >> 4));
        out.push(digit(b & 0x0f));
    }
}

/// Lower-case hexadecimal of `bytes`.
pub fn to_hex(bytes: &[u8]) -> String {
    let mut s = String::with_capacity(bytes.len() * 2);
    push_hex(&mut s, bytes);
    s
}

/// Parses hexadecimal (either case, optional whitespace and `0x`/`:` separators are not
/// accepted: only hex digit pairs). Returns `None` on an odd length or a non-hex digit.
pub fn from_hex(s: &str) -> Option<Vec<u8>> {
    let digits = s.as_bytes();
    if digits.len() % 2 != 0 {
        return None;
    }
    digits
        .chunks_exact(2)
        .map(|pair| {
            let hi = char::from(*pair.first()?).to_digit(16)?;
            let lo = char::from(*pair.get(1)?).to_digit(16)?;
            u8::try_from(hi * 16 + lo).ok()
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn latin1_maps_like_the_reference_sdk() {
        let mut out = Vec::new();
        put_cstr(&mut out, "Ünïcödé Server ✓", false);
        assert_eq!(
            to_hex(&out),
            "dc6eef63f664e920536572766572203f00",
            "capture 03: code points above U+00FF become '?'"
        );
        let (s, lossy) = decode(&out[..out.len() - 1], false);
        assert_eq!(s, "Ünïcödé Server ?");
        assert!(!lossy);
    }

    #[test]
    fn nul_characters_are_dropped() {
        let mut out = Vec::new();
        put_cstr(&mut out, "a\0b", true);
        assert_eq!(out, b"ab\0");
        out.clear();
        put_cstr(&mut out, "ä\0", false);
        assert_eq!(out, [0xe4, 0]);
    }

    #[test]
    fn invalid_utf8_is_lossy_and_reported() {
        let (s, lossy) = decode(&[b'a', 0xff, b'b'], true);
        assert_eq!(s, "a\u{fffd}b");
        assert!(lossy);
    }

    proptest::proptest! {
        /// The ASCII shortcut gives what plain decoding gives: UTF-8 (lossy, flagged),
        /// Latin-1 byte by byte, and UTF-8 falling back to Latin-1.
        #[test]
        fn decoding_matches_plain_decoding(
            bytes in proptest::collection::vec(
                proptest::prop_oneof![0x20u8..0x7f, proptest::num::u8::ANY], 0..40),
        ) {
            let utf8 = std::str::from_utf8(&bytes);
            let lossy = Text::from_utf8_lossy(&bytes);
            let latin1: Text = bytes.iter().map(|&b| char::from(b)).collect();
            proptest::prop_assert_eq!(decode(&bytes, true), (lossy, utf8.is_err()));
            proptest::prop_assert_eq!(decode(&bytes, false), (latin1.clone(), false));
            let either = utf8.map_or(latin1, Text::from);
            proptest::prop_assert_eq!(
                decode_utf8_or_latin1(&bytes),
                (either, std::str::from_utf8(&bytes).is_err())
            );
            proptest::prop_assert_eq!(ascii(&bytes).is_some(), bytes.is_ascii());
        }
    }

    #[test]
    fn hex_round_trip() {
        assert_eq!(from_hex("00ffAb").unwrap(), vec![0, 0xff, 0xab]);
        assert!(from_hex("0").is_none());
        assert!(from_hex("zz").is_none());
        assert_eq!(to_hex(&[0, 0xff, 0xab]), "00ffab");
    }
}
