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

/// Writes `fragment`, escaping the characters serde_json leaves raw that act on a
/// terminal.
fn write_safe<W: ?Sized + io::Write>(w: &mut W, fragment: &str) -> io::Result<()> {
    let mut rest = fragment;
    while let Some((at, c)) = rest.char_indices().find(|(_, c)| is_terminal_control(*c)) {
        let (clean, tail) = rest.split_at(at);
        w.write_all(clean.as_bytes())?;
        // Every such character is in the Basic Multilingual Plane: one \uXXXX.
        write!(w, "\\u{:04x}", u32::from(c))?;
        rest = tail.get(c.len_utf8()..).unwrap_or_default();
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
