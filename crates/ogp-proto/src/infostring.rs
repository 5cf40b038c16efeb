//! What the id Software query replies share: the `\key\value…` info string and the
//! player lines of `NUMBER… "name" …` that QuakeWorld, Quake 2, HexenWorld and Quake III
//! (`statusResponse`) send after it. Decoded through the bounded reader, with the caps
//! the caller passes; the protocol folders (`quake3`, `quakeworld`) keep their own
//! framing and mapping.

use crate::error::{DecodeError, DecodeErrorKind, DecodeWarning};
use crate::reader::Reader;
use crate::text::{decode_utf8_or_latin1, Text};

/// One player line: the columns before the quoted name, the name as sent (with its
/// colour codes), and the columns after it (a quoted column, QuakeWorld's skin and
/// team, is kept without its quotes).
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct PlayerLine {
    /// Columns before the name (`score ping`, or `score ping team`).
    pub before: Vec<Text>,
    /// The name, raw.
    pub name: Text,
    /// Columns after the name (Warsow's team; QuakeWorld's skin, colours, team).
    pub after: Vec<Text>,
}

/// Caps on what a reply can make a decoder hold (Quake III's `statusResponse`, and
/// QuakeWorld's, Quake 2's and HexenWorld's `status` replies: their player lines have at
/// most 8 columns besides the name, QuakeWorld's with its team).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub struct DecodeLimits {
    /// Most variables (default 1,024; ioquake3's info strings hold at most 8 KiB).
    pub max_vars: usize,
    /// Most player lines (default 256; the engines have at most 64 to 255 slots).
    pub max_players: usize,
    /// Longest info line in bytes (default 16,384, ioquake3's largest message).
    pub max_info_bytes: usize,
    /// Longest player line in bytes (default 512).
    pub max_player_line: usize,
    /// Most columns besides the name on one player line (default 8).
    pub max_columns: usize,
}

impl Default for DecodeLimits {
    fn default() -> Self {
        Self {
            max_vars: 1024,
            max_players: 256,
            max_info_bytes: 16_384,
            max_player_line: 512,
            max_columns: 8,
        }
    }
}

impl DecodeLimits {
    /// The default limits.
    pub fn new() -> Self {
        Self::default()
    }
}

/// Where a quoted name ends.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum NameEnd {
    /// At the last quote of the line: Quake III mods put quotes inside names, and no
    /// quoted column follows the name.
    LastQuote,
    /// At the next quote: QuakeWorld's engines refuse quotes in names, and quoted
    /// columns (skin, team) follow.
    NextQuote,
}

/// Takes the bytes for which `keep` holds (at least none, at most the rest).
pub(crate) fn take_while<'a>(r: &mut Reader<'a>, keep: impl Fn(u8) -> bool) -> &'a [u8] {
    let n = r
        .peek_rest()
        .iter()
        .position(|&b| !keep(b))
        .unwrap_or(r.remaining());
    r.take(n, "bytes").unwrap_or_default()
}

/// Takes a line (without its `\n`, which is consumed), of at most `max` bytes.
pub(crate) fn take_line<'a>(
    r: &mut Reader<'a>,
    max: usize,
    field: &'static str,
) -> Result<&'a [u8], DecodeError> {
    let at = r.offset();
    let line = take_while(r, |b| b != b'\n');
    if line.len() > max {
        return Err(DecodeError::new(
            at,
            field,
            DecodeErrorKind::TooLarge { limit: max as u64 },
        ));
    }
    if r.peek_u8() == Some(b'\n') {
        r.take(1, field)?;
    }
    Ok(line)
}

/// Text as UTF-8, else Latin-1 with a warning (at most 64 warnings a reply).
pub(crate) fn text(
    bytes: &[u8],
    at: usize,
    field: &'static str,
    warnings: &mut Vec<DecodeWarning>,
) -> Text {
    let (t, guessed) = decode_utf8_or_latin1(Err(bytes));
    if guessed && warnings.len() < 64 {
        warnings.push(DecodeWarning {
            offset: at,
            field,
            message: "not UTF-8: read as Latin-1",
        });
    }
    t
}

/// `\key\value\key\value…` (the leading `\` may be missing, as some servers send it),
/// at most `max_vars` pairs; `base` is the offset of `info` in its datagram.
pub(crate) fn decode_info(
    info: &[u8],
    base: usize,
    max_vars: usize,
    warnings: &mut Vec<DecodeWarning>,
) -> Result<Vec<(Text, Text)>, DecodeError> {
    let mut r = Reader::with_base(info, base);
    if r.peek_u8() == Some(b'\\') {
        r.take(1, "info string")?;
    }
    let mut vars = Vec::new();
    while !r.is_empty() {
        let at = r.offset();
        if vars.len() >= max_vars {
            return Err(DecodeError::new(
                at,
                "info key",
                DecodeErrorKind::TooLarge {
                    limit: max_vars as u64,
                },
            ));
        }
        let key = take_while(&mut r, |b| b != b'\\');
        let had_sep = r.peek_u8() == Some(b'\\');
        if had_sep {
            r.take(1, "info string")?;
        }
        let vat = r.offset();
        let value = take_while(&mut r, |b| b != b'\\');
        if r.peek_u8() == Some(b'\\') {
            r.take(1, "info string")?;
        }
        if !had_sep && warnings.len() < 64 {
            warnings.push(DecodeWarning {
                offset: at,
                field: "info key",
                message: "a key without a value",
            });
        }
        vars.push((
            text(key, at, "info key", warnings),
            text(value, vat, "info value", warnings),
        ));
    }
    Ok(vars)
}

/// What separates the columns of a player line (`\r`: a line may end with CR LF).
fn blank(b: u8) -> bool {
    matches!(b, b' ' | b'\t' | b'\r')
}

/// Decodes one player line (`at` its offset in the datagram), with at most
/// `max_columns` columns besides the name.
pub(crate) fn decode_player(
    line: &[u8],
    at: usize,
    max_columns: usize,
    name_end: NameEnd,
    warnings: &mut Vec<DecodeWarning>,
) -> Result<PlayerLine, DecodeError> {
    let mut r = Reader::with_base(line, at);
    let mut p = PlayerLine::default();
    let columns = |p: &PlayerLine| p.before.len() + p.after.len();
    let too_many = |cat: usize| {
        DecodeError::new(
            cat,
            "player column",
            DecodeErrorKind::TooLarge {
                limit: max_columns as u64,
            },
        )
    };
    loop {
        take_while(&mut r, blank);
        match r.peek_u8() {
            Some(b'"') => break,
            None => {
                return Err(DecodeError::invalid(
                    r.offset(),
                    "player line",
                    "no quoted name",
                ))
            }
            Some(_) => {}
        }
        let cat = r.offset();
        let col = take_while(&mut r, |b| !blank(b) && b != b'"');
        if columns(&p) >= max_columns {
            return Err(too_many(cat));
        }
        p.before.push(text(col, cat, "player column", warnings));
    }
    r.take(1, "player name")?;
    let nat = r.offset();
    let rest = r.peek_rest();
    let end = match name_end {
        NameEnd::LastQuote => rest.iter().rposition(|&b| b == b'"'),
        NameEnd::NextQuote => rest.iter().position(|&b| b == b'"'),
    };
    let Some(end) = end else {
        return Err(DecodeError::new(
            nat,
            "player name",
            DecodeErrorKind::Invalid("no closing quote"),
        ));
    };
    let name = r.take(end, "player name")?;
    r.take(1, "player name")?;
    p.name = text(name, nat, "player name", warnings);
    loop {
        take_while(&mut r, blank);
        if r.is_empty() {
            break;
        }
        let cat = r.offset();
        if columns(&p) >= max_columns {
            return Err(too_many(cat));
        }
        let col = if r.peek_u8() == Some(b'"') {
            r.take(1, "player column")?;
            let col = take_while(&mut r, |b| b != b'"');
            if r.peek_u8() != Some(b'"') {
                return Err(DecodeError::invalid(
                    cat,
                    "player column",
                    "no closing quote",
                ));
            }
            r.take(1, "player column")?;
            col
        } else {
            take_while(&mut r, |b| !blank(b))
        };
        p.after.push(text(col, cat, "player column", warnings));
    }
    Ok(p)
}

/// Appends one player line, its name quoted, its columns bare but those after the name
/// for which `quoted` holds (their index after the name: QuakeWorld quotes its skin, 0,
/// and team, 3).
pub(crate) fn encode_player(p: &PlayerLine, quoted: impl Fn(usize) -> bool, out: &mut Vec<u8>) {
    for c in &p.before {
        put_token(out, c);
        out.push(b' ');
    }
    out.push(b'"');
    // Quotes inside stay: the Quake III decoder reads the name to the last quote.
    out.extend(p.name.bytes().filter(|&b| b != b'\n'));
    out.push(b'"');
    for (i, c) in p.after.iter().enumerate() {
        out.push(b' ');
        if quoted(i) {
            out.push(b'"');
            out.extend(c.bytes().filter(|b| !matches!(b, b'"' | b'\n')));
            out.push(b'"');
        } else {
            put_token(out, c);
        }
    }
    out.push(b'\n');
}

/// Appends the `\key\value…` string: `\` and newlines cannot be carried and are
/// dropped (anything else, NUL included, is written as the decoder keeps it).
pub(crate) fn encode_info(vars: &[(Text, Text)], out: &mut Vec<u8>) {
    for (k, v) in vars {
        out.push(b'\\');
        put_info(out, k);
        out.push(b'\\');
        put_info(out, v);
    }
}

fn put_info(out: &mut Vec<u8>, s: &str) {
    out.extend(s.bytes().filter(|b| !matches!(b, b'\\' | b'\n')));
}

/// A column: without the decoder's separators (space, tab, CR, quote, newline).
fn put_token(out: &mut Vec<u8>, s: &str) {
    let before = out.len();
    out.extend(
        s.bytes()
            .filter(|b| !matches!(b, b' ' | b'"' | b'\n' | b'\t' | b'\r')),
    );
    if out.len() == before {
        out.push(b'0');
    }
}

/// The value of `key` among `vars` (the first, compared without case, as the engines do).
pub(crate) fn get<'a>(vars: &'a [(Text, Text)], key: &str) -> Option<&'a str> {
    vars.iter()
        .find(|(k, _)| k.eq_ignore_ascii_case(key))
        .map(|(_, v)| v.as_str())
}

/// The player lines from `r` to its end (blank lines and NULs skipped), within
/// `limits`.
pub(crate) fn decode_player_lines(
    r: &mut Reader<'_>,
    limits: &DecodeLimits,
    name_end: NameEnd,
    warnings: &mut Vec<DecodeWarning>,
) -> Result<Vec<PlayerLine>, DecodeError> {
    let mut players = Vec::new();
    while !r.is_empty() {
        let at = r.offset();
        let line = take_line(r, limits.max_player_line, "player line")?;
        if line.iter().all(|b| b.is_ascii_whitespace() || *b == 0) {
            continue;
        }
        if players.len() >= limits.max_players {
            return Err(DecodeError::new(
                at,
                "player line",
                DecodeErrorKind::TooLarge {
                    limit: limits.max_players as u64,
                },
            ));
        }
        players.push(decode_player(
            line,
            at,
            limits.max_columns,
            name_end,
            warnings,
        )?);
    }
    Ok(players)
}
