//! The one JSON writer of every output ([`to_json`], [`to_json_pretty`], re-exported by
//! [`crate::result`]): serde_json's, with every character of
//! [`is_terminal_control`](crate::text::is_terminal_control) escaped as `\uXXXX`
//! (serde_json escapes C0 itself, but writes DEL, C1, the bidirectional controls and
//! U+2028/U+2029 raw). The output is still JSON that any reader reads back to the same
//! strings, and a hostile server's name cannot steer the terminal that shows it. A leaf
//! module: the model and the results both write through it.
//!
//! The escaping is one pass over the finished output, not one per string: outside its
//! strings, JSON is ASCII (and a raw C0 byte is the pretty layout's whitespace, since
//! serde_json escapes C0 inside strings), so a byte that can start one of the characters
//! left raw is inside a string, where `\uXXXX` means the same character.

use serde::Serialize;
use serde_json::ser::{CompactFormatter, Formatter, PrettyFormatter};

use crate::text::is_terminal_control;

/// Whether `b` can start the UTF-8 form of a character of [`is_terminal_control`] that
/// serde_json writes raw: DEL is ASCII, C1 is `C2 80`–`C2 9F`, U+061C is `D8 9C`, and the
/// rest (U+200E/F, U+2028–U+202E, U+2066–U+2069) start with `E2`; C0 serde_json escapes.
/// Every other byte starts no such character (the test
/// `lead_bytes_cover_every_terminal_control` checks every character against this).
const fn may_start_raw_control(b: u8) -> bool {
    matches!(b, 0x7f | 0xc2 | 0xd8 | 0xe2)
}

/// Escapes, in serde_json's finished output `json`, the characters of
/// [`is_terminal_control`] it left raw. Most outputs hold none: the bytes are scanned
/// once (without a branch per byte: a vector loop), and only an output with one of the
/// few bytes that can start one is decoded.
fn escape_raw_controls(json: String) -> String {
    if !json
        .bytes()
        .fold(false, |seen, b| seen | may_start_raw_control(b))
    {
        return json;
    }
    let mut out = String::with_capacity(json.len() + 16);
    let mut clean = 0; // start of the part not yet copied
    let mut from = 0; // where to look for the next candidate byte
    while let Some(at) = json
        .as_bytes()
        .iter()
        .skip(from)
        .position(|&b| may_start_raw_control(b))
        .map(|k| from + k)
    {
        // `at` holds ASCII or a lead byte: a character starts there.
        let Some(c) = json.get(at..).and_then(|t| t.chars().next()) else {
            break;
        };
        from = at + c.len_utf8();
        if is_terminal_control(c) {
            out.push_str(json.get(clean..at).unwrap_or_default());
            // Every such character is in the Basic Multilingual Plane: one \uXXXX.
            out.push_str(&format!("\\u{:04x}", u32::from(c)));
            clean = from;
        }
    }
    out.push_str(json.get(clean..).unwrap_or_default());
    out
}

fn write_with<T: Serialize + ?Sized>(v: &T, f: impl Formatter) -> serde_json::Result<String> {
    // Room for a typical result line: growing from a small buffer cost a scan of a
    // GameSpy v1 server (3 KB of JSON) five reallocations.
    let mut out = Vec::with_capacity(4096);
    v.serialize(&mut serde_json::Serializer::with_formatter(&mut out, f))?;
    // serde_json writes UTF-8.
    let json = String::from_utf8(out).map_err(serde::ser::Error::custom)?;
    Ok(escape_raw_controls(json))
}

/// `v` as compact JSON (serde_json's `to_string`), with the characters of
/// [`is_terminal_control`] escaped: the one JSON writer of every output.
pub fn to_json<T: Serialize + ?Sized>(v: &T) -> serde_json::Result<String> {
    write_with(v, CompactFormatter)
}

/// `v` as pretty JSON (serde_json's `to_string_pretty`), escaped as [`to_json`].
pub fn to_json_pretty<T: Serialize + ?Sized>(v: &T) -> serde_json::Result<String> {
    write_with(v, PrettyFormatter::new())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The byte scan of `escape_raw_controls` finds every character it must escape: each
    /// character of `is_terminal_control` is C0 (which serde_json escapes) or starts with
    /// a byte `may_start_raw_control` names.
    #[test]
    fn lead_bytes_cover_every_terminal_control() {
        let mut n = 0;
        for c in (0..=0x10_FFFF_u32).filter_map(char::from_u32) {
            if is_terminal_control(c) {
                let mut buf = [0u8; 4];
                let lead = c.encode_utf8(&mut buf).as_bytes()[0];
                assert!(
                    u32::from(c) < 0x20 || may_start_raw_control(lead),
                    "{:04x}",
                    u32::from(c)
                );
                n += 1;
            }
        }
        assert!(n > 60, "{n}");
    }

    /// Escapes at the start, the end, next to each other and after characters that
    /// share a lead byte without being controls (`é` is C3, `–` and `✓` are E2), in
    /// keys and values, compact and pretty (whose newlines stay).
    #[test]
    fn only_the_controls_are_escaped() {
        let cases = [
            ("plain", "plain"),
            ("\u{202e}x", "\\u202ex"),
            ("x\u{7f}", "x\\u007f"),
            ("\u{85}\u{2028}", "\\u0085\\u2028"),
            ("a – b ✓ é\u{61c}ü", "a – b ✓ é\\u061cü"),
            ("\u{00a0}\u{2030}\u{2069}", "\u{00a0}\u{2030}\\u2069"),
            ("tab\there\u{1b}", "tab\\there\\u001b"),
        ];
        for (input, want) in cases {
            let map = std::collections::BTreeMap::from([(input, input)]);
            let got = to_json(&map).unwrap();
            assert_eq!(got, format!("{{\"{want}\":\"{want}\"}}"), "{input:?}");
            let back: std::collections::BTreeMap<String, String> =
                serde_json::from_str(&got).unwrap();
            assert_eq!(back.get(input).map(String::as_str), Some(input));
            let pretty = to_json_pretty(&map).unwrap();
            assert_eq!(
                pretty,
                format!("{{\n  \"{want}\": \"{want}\"\n}}"),
                "{input:?}"
            );
        }
    }
}
