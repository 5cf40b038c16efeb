//! Character encodings for zero-terminated strings on the wire.
//!
//! Strings in the model are Rust `String`s (Unicode). On the wire a protocol uses either
//! UTF-8 or Latin-1 (ISO 8859-1). Encoding to Latin-1 maps U+0000–U+00FF to one byte each
//! and everything else to `?`, as the reference OGP SDK does. NUL characters cannot be
//! carried by a zero-terminated string and are dropped when encoding. Decoding invalid
//! UTF-8 never fails: it is decoded lossily (U+FFFD) and reported to the caller.

use crate::error::DecodeError;
use crate::reader::Reader;

/// Whether a character must not reach a terminal raw: C0 and C1 controls (ESC starts
/// the sequences that move the cursor, clear the screen or recolour it; C1 CSI U+009B
/// does the same in one character), DEL, the bidirectional controls that reorder what is
/// shown (the embeddings, overrides and isolates U+202A–U+202E and U+2066–U+2069, the
/// marks U+200E, U+200F and U+061C), and the line and paragraph separators U+2028 and
/// U+2029. The human output replaces them; every JSON output escapes them
/// ([`crate::result::to_json`]).
pub fn is_terminal_control(c: char) -> bool {
    c.is_control()
        || matches!(
            c,
            '\u{061c}'
                | '\u{200e}'
                | '\u{200f}'
                | '\u{202a}'..='\u{202e}'
                | '\u{2066}'..='\u{2069}'
                | '\u{2028}'
                | '\u{2029}'
        )
}

/// Text from the network made safe for a terminal: every character of
/// [`is_terminal_control`] becomes U+FFFD. Every human output prints peer strings
/// through this.
pub fn sanitize(s: &str) -> String {
    s.chars()
        .map(|c| {
            if is_terminal_control(c) {
                '\u{fffd}'
            } else {
                c
            }
        })
        .collect()
}

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
#[inline(always)]
pub(crate) fn decode(bytes: &[u8], utf8: bool) -> (Text, bool) {
    if bytes.is_empty() {
        (Text::const_new(""), false)
    } else if utf8 || bytes.is_ascii() {
        match std::str::from_utf8(bytes) {
            Ok(s) => (Text::from(s), false),
            Err(_) => (Text::from_utf8_lossy(bytes), true),
        }
    } else {
        (bytes.iter().map(|&b| char::from(b)).collect(), false)
    }
}

/// Zero-terminated strings read from a stretch of text (GameSpy v3 keys and values, A2S
/// rules), validated as UTF-8 a run at a time rather than string by string.
///
/// A string outside the run validated last starts a new run: the valid UTF-8 from the
/// string on, as far as it reaches, in one pass. Strings inside it are then sliced out
/// of it with no check of their own. A run ends at the first byte that is not UTF-8, so
/// each byte is scanned about once.
#[derive(Debug, Default)]
pub(crate) struct TextRuns<'a> {
    run: &'a str,
    /// Reader offset of the run's first byte.
    at: usize,
}

impl<'a> TextRuns<'a> {
    /// Reads a zero-terminated string like [`Reader::cstr`], as text when its bytes are
    /// valid UTF-8 (`Err` with the bytes when not).
    pub(crate) fn cstr(
        &mut self,
        r: &mut Reader<'a>,
        field: &'static str,
    ) -> Result<Result<&'a str, &'a [u8]>, DecodeError> {
        let at = r.offset();
        let rest = r.peek_rest();
        let bytes = r.cstr(field)?;
        let inside = at >= self.at
            && at.saturating_add(bytes.len()) <= self.at.saturating_add(self.run.len());
        if !inside {
            self.at = at;
            self.run = match std::str::from_utf8(rest) {
                Ok(s) => s,
                // The run ends before the string does: the string is not UTF-8.
                Err(e) if e.valid_up_to() < bytes.len() => "",
                Err(e) => rest
                    .get(..e.valid_up_to())
                    .and_then(|v| std::str::from_utf8(v).ok())
                    .unwrap_or(""),
            };
        }
        let from = at.saturating_sub(self.at);
        let text = from
            .checked_add(bytes.len())
            .and_then(|end| self.run.get(from..end));
        Ok(text.ok_or(bytes))
    }
}

/// Decodes what [`TextRuns::cstr`] found: text already known to be UTF-8 is taken as it
/// is (in Latin-1 only when it is ASCII, which reads the same); other bytes are decoded
/// as [`decode`] does.
pub(crate) fn decode_found(found: Result<&str, &[u8]>, utf8: bool) -> (Text, bool) {
    match found {
        Ok(s) if utf8 || s.is_ascii() => (Text::from(s), false),
        Ok(s) => decode(s.as_bytes(), false),
        Err(bytes) => decode(bytes, utf8),
    }
}

/// How a protocol that announces no charset reads a string that is not UTF-8 when the
/// client chose none ([`Charset::Auto`](crate::Charset::Auto)).
#[derive(Debug, Clone, Copy)]
pub(crate) enum Unchosen {
    /// U+FFFD for the invalid bytes (A2S).
    Replace,
    /// Latin-1, byte by byte (GameSpy v3).
    Latin1,
}

/// Decodes what a string reader of `r` found: as UTF-8 when it is; else in the charset
/// chosen for `r`; else by the protocol's `unchosen` rule, and then `true`: a guess, for
/// the caller to warn of.
#[inline(always)]
pub(crate) fn decode_text(
    found: Result<&str, &[u8]>,
    r: &Reader<'_>,
    unchosen: Unchosen,
) -> (Text, bool) {
    let (text, guessed) = match unchosen {
        Unchosen::Replace => decode_found(found, true),
        Unchosen::Latin1 => decode_utf8_or_latin1(found),
    };
    if guessed {
        if let Some(t) = in_charset(found, r) {
            return (t, false);
        }
    }
    (text, guessed)
}

/// What a string reader of `r` found that is not UTF-8, read in the charset chosen for
/// `r`; `None` for `Auto`. Out of line and cold: [`decode_text`] stays small enough to be
/// inlined into every string reader.
#[cold]
#[inline(never)]
fn in_charset(found: Result<&str, &[u8]>, r: &Reader<'_>) -> Option<Text> {
    found.err().and_then(|b| r.charset().decode_8bit(b))
}

/// Decodes UTF-8, or Latin-1 when the bytes are not UTF-8 (true then), as servers that
/// announce no charset send either.
pub(crate) fn decode_utf8_or_latin1(found: Result<&str, &[u8]>) -> (Text, bool) {
    match found.map_err(|bytes| (bytes, std::str::from_utf8(bytes))) {
        Ok(s) | Err((_, Ok(s))) => (Text::from(s), false),
        Err((bytes, Err(_))) => (bytes.iter().map(|&b| char::from(b)).collect(), true),
    }
}

/// `s` without Minecraft's `§` formatting codes (a `§` and the character after it, a `§`
/// at the end alone), as both editions send them (Java's MOTD and components, Bedrock's
/// advertisement).
pub(crate) fn strip_mc_codes<T: FromIterator<char>>(s: &str) -> T {
    let mut chars = s.chars();
    std::iter::from_fn(move || loop {
        match chars.next()? {
            '§' => {
                chars.next();
            }
            c => return Some(c),
        }
    })
    .collect()
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
    fn minecraft_codes_are_stripped() {
        for (raw, plain) in [
            ("§r§4G§r§6a§lX§", "GaX"),
            ("§aHi §lthere", "Hi there"),
            ("no codes: 100% ✓", "no codes: 100% ✓"),
            ("§§a§", "a"),
            ("§✓x", "x"),
            ("", ""),
        ] {
            assert_eq!(strip_mc_codes::<String>(raw), plain, "{raw:?}");
            assert_eq!(strip_mc_codes::<Text>(raw), plain, "{raw:?}");
        }
    }

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
        /// Strings read through text runs decode as plain decoding decodes each one, for
        /// any bytes between and inside them (invalid UTF-8, split sequences, Latin-1).
        #[test]
        fn text_runs_decode_like_plain_decoding(
            bytes in proptest::collection::vec(
                proptest::prop_oneof![
                    4 => 0x20u8..0x7f,
                    1 => proptest::num::u8::ANY,
                    1 => proptest::strategy::Just(0u8),
                    1 => 0xc2u8..0xf0,
                ],
                0..80,
            ),
        ) {
            let mut r = Reader::new(&bytes);
            let mut plain = Reader::new(&bytes);
            let mut runs = TextRuns::default();
            while let Ok(found) = runs.cstr(&mut r, "S") {
                let want = plain.cstr("S").expect("the same string");
                if let Ok(s) = found {
                    proptest::prop_assert_eq!(s.as_bytes(), want);
                }
                proptest::prop_assert_eq!(found.is_ok(), std::str::from_utf8(want).is_ok());
                proptest::prop_assert_eq!(decode_found(found, true), decode(want, true));
                proptest::prop_assert_eq!(decode_found(found, false), decode(want, false));
                let latin1: Text = want.iter().map(|&b| char::from(b)).collect();
                let either = std::str::from_utf8(want).map_or((latin1, true), |s| (s.into(), false));
                proptest::prop_assert_eq!(decode_utf8_or_latin1(found), either);
            }
            proptest::prop_assert!(plain.cstr("S").is_err());
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
