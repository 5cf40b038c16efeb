//! The one JSON writer of every output ([`to_json`], [`to_json_pretty`], re-exported by
//! [`crate::result`]): serde_json's, with every character of
//! [`is_terminal_control`](crate::text::is_terminal_control) escaped as `\uXXXX`
//! (serde_json escapes C0 itself, but writes DEL, C1, the bidirectional controls and
//! U+2028/U+2029 raw). The output is still JSON that any reader reads back to the same
//! strings, and a hostile server's name cannot steer the terminal that shows it. A leaf
//! module: the model and the results both write through it.

use std::io;

use serde::Serialize;
use serde_json::ser::{CompactFormatter, Formatter, PrettyFormatter};

use crate::text::is_terminal_control;

/// A serde_json [`Formatter`] that writes what `F` writes, with every character of
/// [`is_terminal_control`] in strings (and keys) escaped as `\uXXXX`.
struct TerminalSafe<F>(F);

/// Whether `b` can start the UTF-8 form of a character of [`is_terminal_control`]: C0
/// and DEL are ASCII, C1 is `C2 80`–`C2 9F`, U+061C is `D8 9C`, and the rest (U+200E/F,
/// U+2028–U+202E, U+2066–U+2069) start with `E2`. Every other byte starts no such
/// character, so a fragment without these is written as it is (the test
/// `lead_bytes_cover_every_terminal_control` checks every character against this).
const fn may_start_control(b: u8) -> bool {
    b < 0x20 || matches!(b, 0x7f | 0xc2 | 0xd8 | 0xe2)
}

/// Writes `fragment`, escaping the characters serde_json leaves raw that act on a
/// terminal. Most fragments hold none: the bytes are scanned for the few that can start
/// one, and only the characters at those places are decoded.
fn write_safe<W: ?Sized + io::Write>(w: &mut W, fragment: &str) -> io::Result<()> {
    // Without a branch per byte (the compiler makes it a vector loop): most fragments
    // have none of those bytes and are written at once.
    if !fragment
        .bytes()
        .fold(false, |seen, b| seen | may_start_control(b))
    {
        return w.write_all(fragment.as_bytes());
    }
    let mut rest = fragment;
    let mut from = 0;
    while let Some(at) = rest
        .as_bytes()
        .iter()
        .skip(from)
        .position(|b| may_start_control(*b))
        .map(|k| from + k)
    {
        // `at` holds ASCII or a lead byte: a character starts there.
        let Some(c) = rest.get(at..).and_then(|t| t.chars().next()) else {
            break;
        };
        if !is_terminal_control(c) {
            from = at + c.len_utf8();
            continue;
        }
        let (clean, tail) = rest.split_at(at);
        w.write_all(clean.as_bytes())?;
        // Every such character is in the Basic Multilingual Plane: one \uXXXX.
        write!(w, "\\u{:04x}", u32::from(c))?;
        rest = tail.get(c.len_utf8()..).unwrap_or_default();
        from = 0;
    }
    w.write_all(rest.as_bytes())
}

impl<F: Formatter> Formatter for TerminalSafe<F> {
    fn write_string_fragment<W: ?Sized + io::Write>(
        &mut self,
        w: &mut W,
        fragment: &str,
    ) -> io::Result<()> {
        write_safe(w, fragment)
    }

    // The layout is `F`'s (PrettyFormatter's indentation lives in these).
    fn begin_array<W: ?Sized + io::Write>(&mut self, w: &mut W) -> io::Result<()> {
        self.0.begin_array(w)
    }
    fn end_array<W: ?Sized + io::Write>(&mut self, w: &mut W) -> io::Result<()> {
        self.0.end_array(w)
    }
    fn begin_array_value<W: ?Sized + io::Write>(
        &mut self,
        w: &mut W,
        first: bool,
    ) -> io::Result<()> {
        self.0.begin_array_value(w, first)
    }
    fn end_array_value<W: ?Sized + io::Write>(&mut self, w: &mut W) -> io::Result<()> {
        self.0.end_array_value(w)
    }
    fn begin_object<W: ?Sized + io::Write>(&mut self, w: &mut W) -> io::Result<()> {
        self.0.begin_object(w)
    }
    fn end_object<W: ?Sized + io::Write>(&mut self, w: &mut W) -> io::Result<()> {
        self.0.end_object(w)
    }
    fn begin_object_key<W: ?Sized + io::Write>(
        &mut self,
        w: &mut W,
        first: bool,
    ) -> io::Result<()> {
        self.0.begin_object_key(w, first)
    }
    fn end_object_key<W: ?Sized + io::Write>(&mut self, w: &mut W) -> io::Result<()> {
        self.0.end_object_key(w)
    }
    fn begin_object_value<W: ?Sized + io::Write>(&mut self, w: &mut W) -> io::Result<()> {
        self.0.begin_object_value(w)
    }
    fn end_object_value<W: ?Sized + io::Write>(&mut self, w: &mut W) -> io::Result<()> {
        self.0.end_object_value(w)
    }
}

fn write_with<T: Serialize + ?Sized>(v: &T, f: impl Formatter) -> serde_json::Result<String> {
    let mut out = Vec::with_capacity(128);
    v.serialize(&mut serde_json::Serializer::with_formatter(
        &mut out,
        TerminalSafe(f),
    ))?;
    // serde_json writes UTF-8, and the escapes are ASCII.
    String::from_utf8(out).map_err(serde::ser::Error::custom)
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

    /// The byte scan of `write_safe` finds every character it must escape: each
    /// character of `is_terminal_control` starts with a byte `may_start_control` names.
    #[test]
    fn lead_bytes_cover_every_terminal_control() {
        let mut n = 0;
        for c in (0..=0x10_FFFF_u32).filter_map(char::from_u32) {
            if is_terminal_control(c) {
                let mut buf = [0u8; 4];
                let lead = c.encode_utf8(&mut buf).as_bytes()[0];
                assert!(may_start_control(lead), "{:04x}", u32::from(c));
                n += 1;
            }
        }
        assert!(n > 60, "{n}");
    }

    /// Escapes at the start, the end, next to each other and after characters that
    /// share a lead byte without being controls (`é` is C3, `–` and `✓` are E2).
    #[test]
    fn write_safe_escapes_only_the_controls() {
        let cases = [
            ("plain", "plain"),
            ("\u{202e}x", "\\u202ex"),
            ("x\u{7f}", "x\\u007f"),
            ("\u{85}\u{2028}", "\\u0085\\u2028"),
            ("a – b ✓ é\u{61c}ü", "a – b ✓ é\\u061cü"),
            ("\u{00a0}\u{2030}\u{2069}", "\u{00a0}\u{2030}\\u2069"),
        ];
        for (input, want) in cases {
            let mut out = Vec::new();
            write_safe(&mut out, input).unwrap();
            assert_eq!(String::from_utf8(out).unwrap(), want, "{input:?}");
        }
    }
}
