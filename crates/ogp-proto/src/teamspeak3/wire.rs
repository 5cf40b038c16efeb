//! TeamSpeak 3 ServerQuery's text framing: escaping, records and the `error` line.
//!
//! The server greets with two lines, `TS3` and `Welcome to the TeamSpeak 3 ServerQuery
//! interface…`, and ends every line with `\n\r`. A command is one line; its answer is
//! zero or more data lines, then `error id=N msg=TEXT`. A data line holds records
//! separated by `|`, a record holds `key=value` (or a bare `key`) parameters separated
//! by spaces. Values escape `\` `/` space `|` and the controls as `\\` `\/` `\s` `\p`
//! `\a` `\b` `\f` `\n` `\r` `\t` `\v`.
//!
//! Records are parsed as they come ([`next_record`]): a reader holds one record at a
//! time, never a whole line, so a `clientlist` of any length takes the memory of its
//! longest record ([`MAX_RECORD`]).

use crate::error::{DecodeError, DecodeErrorKind};
use crate::model::Text;

/// The longest record (or banner line) held before it ends.
pub const MAX_RECORD: usize = 65_536;
/// The most parameters kept from one record.
pub const MAX_PARAMS: usize = 512;

/// `value` escaped for a command (the inverse of [`unescape`]).
pub fn escape(value: &str) -> String {
    let mut out = String::with_capacity(value.len());
    for c in value.chars() {
        match c {
            '\\' => out.push_str("\\\\"),
            '/' => out.push_str("\\/"),
            ' ' => out.push_str("\\s"),
            '|' => out.push_str("\\p"),
            '\x07' => out.push_str("\\a"),
            '\x08' => out.push_str("\\b"),
            '\x0c' => out.push_str("\\f"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            '\x0b' => out.push_str("\\v"),
            c => out.push(c),
        }
    }
    out
}

/// A value as the server escaped it, unescaped. An unknown escape (or a `\` at the end)
/// is kept as sent.
pub fn unescape(value: &str) -> Text {
    if !value.contains('\\') {
        return value.into();
    }
    let mut out = String::with_capacity(value.len());
    let mut chars = value.chars();
    while let Some(c) = chars.next() {
        if c != '\\' {
            out.push(c);
            continue;
        }
        match chars.next() {
            Some('\\') => out.push('\\'),
            Some('/') => out.push('/'),
            Some('s') => out.push(' '),
            Some('p') => out.push('|'),
            Some('a') => out.push('\x07'),
            Some('b') => out.push('\x08'),
            Some('f') => out.push('\x0c'),
            Some('n') => out.push('\n'),
            Some('r') => out.push('\r'),
            Some('t') => out.push('\t'),
            Some('v') => out.push('\x0b'),
            Some(other) => {
                out.push('\\');
                out.push(other);
            }
            None => out.push('\\'),
        }
    }
    out.into()
}

/// One record: its parameters in order, values unescaped (a bare key has an empty
/// value).
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Record(pub Vec<(Text, Text)>);

impl Record {
    /// The value of `key`.
    pub fn get(&self, key: &str) -> Option<&str> {
        self.0
            .iter()
            .find(|(k, _)| k == key)
            .map(|(_, v)| v.as_str())
    }
}

/// Parses one record's text (without its `|` or line end). At most [`MAX_PARAMS`]
/// parameters are kept; true when some were left out.
pub fn parse_record(text: &str) -> (Record, bool) {
    let mut params = Vec::new();
    let mut cut = false;
    for part in text.split(' ').filter(|p| !p.is_empty()) {
        if params.len() == MAX_PARAMS {
            cut = true;
            break;
        }
        let (k, v) = part.split_once('=').unwrap_or((part, ""));
        params.push((unescape(k), unescape(v)));
    }
    (Record(params), cut)
}

/// An `error id=N msg=TEXT` line.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ErrorLine {
    /// The id (0: ok).
    pub id: u32,
    /// The message, unescaped.
    pub msg: Text,
}

/// The error line `text` is, if it is one (`error` then its parameters).
pub fn error_line(text: &str) -> Option<ErrorLine> {
    let rest = text.strip_prefix("error")?;
    if !(rest.is_empty() || rest.starts_with(' ')) {
        return None;
    }
    let (r, _) = parse_record(rest);
    Some(ErrorLine {
        id: r.get("id").and_then(|v| v.parse().ok()).unwrap_or(u32::MAX),
        msg: r.get("msg").unwrap_or_default().into(),
    })
}

/// What ended a piece of the input.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum End {
    /// A `|`: another record of the same line follows.
    Bar,
    /// A line end.
    Line,
}

/// A piece of the input: its text, how it ended, how many bytes it took.
pub type Piece<'a> = (&'a [u8], End, usize);

/// The first record (or line, with `lines_only`) in `input`: its text (without `\r`
/// around it), how it ended and how many bytes it took; `Ok(None)` while it is
/// incomplete; an error when it is longer than [`MAX_RECORD`] (`base`: the stream
/// offset of `input[0]`).
pub fn next_record(
    input: &[u8],
    base: usize,
    lines_only: bool,
) -> Result<Option<Piece<'_>>, DecodeError> {
    let end = input
        .iter()
        .position(|&b| b == b'\n' || (b == b'|' && !lines_only));
    let Some(i) = end else {
        if input.len() >= MAX_RECORD {
            return Err(DecodeError::new(
                base,
                "Record",
                DecodeErrorKind::TooLarge {
                    limit: MAX_RECORD as u64,
                },
            ));
        }
        return Ok(None);
    };
    let how = if input.get(i) == Some(&b'|') {
        End::Bar
    } else {
        End::Line
    };
    let mut text = input.get(..i).unwrap_or_default();
    while let [b'\r', rest @ ..] = text {
        text = rest;
    }
    while let [rest @ .., b'\r'] = text {
        text = rest;
    }
    Ok(Some((text, how, i + 1)))
}

/// Bytes as text: UTF-8 (TeamSpeak's), with a flag when they were not.
pub fn text(bytes: &[u8]) -> (Text, bool) {
    crate::text::decode(bytes, true)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn escaping_round_trips_and_abuse_is_kept() {
        let s = "a b|c/d\\e\n\t\x07";
        assert_eq!(unescape(&escape(s)), s);
        assert_eq!(unescape("x\\sy\\p\\/"), "x y|/");
        // An unknown escape and a lone backslash at the end are kept as sent.
        assert_eq!(unescape("\\q\\"), "\\q\\");
        assert_eq!(unescape("\\\\s"), "\\s");
    }

    #[test]
    fn records_and_errors() {
        let (r, cut) = parse_record("clid=1 client_nickname=A\\sB client_type=0 flag");
        assert!(!cut);
        assert_eq!(r.get("client_nickname"), Some("A B"));
        assert_eq!(r.get("flag"), Some(""));
        let e = error_line("error id=1024 msg=invalid\\sserverID").unwrap();
        assert_eq!((e.id, e.msg.as_str()), (1024, "invalid serverID"));
        assert!(error_line("errorx id=0").is_none());
        assert_eq!(error_line("error").unwrap().id, u32::MAX);
        let many = "k ".repeat(MAX_PARAMS + 5);
        let (r, cut) = parse_record(&many);
        assert!(cut && r.0.len() == MAX_PARAMS);
    }

    #[test]
    fn pieces_end_at_bars_and_lines() {
        let input = b"a=1|b=2\n\rerror id=0\n\r";
        let (t, how, n) = next_record(input, 0, false).unwrap().unwrap();
        assert_eq!((t, how, n), (&b"a=1"[..], End::Bar, 4));
        let (t, how, n) = next_record(&input[4..], 4, false).unwrap().unwrap();
        assert_eq!((t, how, n), (&b"b=2"[..], End::Line, 4));
        let (t, _, _) = next_record(&input[8..], 8, false).unwrap().unwrap();
        assert_eq!(t, b"error id=0");
        assert!(next_record(b"abc", 0, false).unwrap().is_none());
        let long = vec![b'x'; MAX_RECORD];
        assert!(next_record(&long, 7, false).is_err());
    }
}
