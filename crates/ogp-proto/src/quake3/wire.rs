//! The wire format: requests and replies, decoded through the bounded reader and
//! encoded back.
//!
//! ```text
//! request  FF FF FF FF "getinfo" [" " CHALLENGE] ["\n"]
//!          FF FF FF FF "getstatus" [" " CHALLENGE] ["\n"]
//! reply    FF FF FF FF "infoResponse\n"   "\key\value…"
//!          FF FF FF FF "statusResponse\n" "\key\value…" "\n" (PLAYER "\n")*
//! PLAYER   NUMBER (" " NUMBER)* " \"" NAME "\"" (" " TOKEN)*
//! ```
//!
//! Player lines are `score ping "name"` in ioquake3 and its descendants, `score ping
//! team "name"` in DarkPlaces, and `score ping "name" team` in Warsow: every column is
//! kept as sent ([`PlayerLine`]), and the mapping reads them.
//!
//! A challenge is printable ASCII without `\`, `"` or `;` (ioquake3 refuses to put those
//! in an info string), at most [`MAX_CHALLENGE`] bytes: a responder can echo it into its
//! reply without letting the asker inject variables.

use std::fmt;

use super::PREFIX;
use crate::error::{DecodeError, DecodeErrorKind, DecodeWarning};
use crate::infostring::{
    decode_info, decode_player_lines, encode_info, encode_player, get, take_line, take_while,
    NameEnd,
};
pub use crate::infostring::{DecodeLimits, PlayerLine};
use crate::reader::Reader;
use crate::text::{decode_utf8_or_latin1, Text};

/// Longest challenge we send, accept and echo (ioquake3 ignores longer ones).
pub const MAX_CHALLENGE: usize = 128;

/// The two queries.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Command {
    /// `getinfo`: a short info string (`infoResponse`).
    GetInfo,
    /// `getstatus`: every server variable and one line per player (`statusResponse`).
    GetStatus,
}

impl Command {
    /// Its word on the wire.
    pub const fn word(self) -> &'static str {
        match self {
            Self::GetInfo => "getinfo",
            Self::GetStatus => "getstatus",
        }
    }

    /// The reply it asks for.
    pub const fn reply(self) -> ReplyKind {
        match self {
            Self::GetInfo => ReplyKind::Info,
            Self::GetStatus => ReplyKind::Status,
        }
    }
}

impl fmt::Display for Command {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.word())
    }
}

/// A query.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Request {
    /// What it asks.
    pub command: Command,
    /// The challenge to echo, if any (see [`MAX_CHALLENGE`]).
    pub challenge: Option<Text>,
}

impl Request {
    /// A query with this challenge.
    pub fn new(command: Command, challenge: Option<&str>) -> Self {
        Self {
            command,
            challenge: challenge.map(Text::from),
        }
    }

    /// Appends the datagram to `out`, without a trailing newline as ioquake3's client
    /// and dpmaster send it (a master's `getinfo` with an 8-digit challenge is then 20
    /// bytes, no more than the shortest heartbeat it answers, Call of Duty 4's
    /// `heartbeat COD-4\n`).
    pub fn encode(&self, out: &mut Vec<u8>) {
        out.extend_from_slice(&PREFIX);
        out.extend_from_slice(self.command.word().as_bytes());
        if let Some(c) = &self.challenge {
            out.push(b' ');
            out.extend_from_slice(c.as_bytes());
        }
    }
}

/// The two replies.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ReplyKind {
    /// `infoResponse`.
    Info,
    /// `statusResponse`.
    Status,
}

impl ReplyKind {
    /// Its word on the wire.
    pub const fn word(self) -> &'static str {
        match self {
            Self::Info => "infoResponse",
            Self::Status => "statusResponse",
        }
    }
}

/// A reply: its kind, its variables in order, its player lines.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Reply {
    /// Which reply.
    pub kind: ReplyKind,
    /// The `\key\value` pairs, in order, as sent.
    pub vars: Vec<(Text, Text)>,
    /// The player lines (always empty in an `infoResponse`).
    pub players: Vec<PlayerLine>,
}

impl Reply {
    /// The value of `key` (the first, compared without case, as the engines do).
    pub fn get(&self, key: &str) -> Option<&str> {
        get(&self.vars, key)
    }

    /// Appends the datagram to `out`.
    pub fn encode(&self, out: &mut Vec<u8>) {
        out.extend_from_slice(&PREFIX);
        out.extend_from_slice(self.kind.word().as_bytes());
        out.push(b'\n');
        encode_info(&self.vars, out);
        if self.kind == ReplyKind::Status {
            out.push(b'\n');
            for p in &self.players {
                encode_player(p, |_| false, out);
            }
        }
    }

    /// The datagram in a buffer of its own.
    pub fn to_bytes(&self) -> Vec<u8> {
        let mut out = Vec::with_capacity(256);
        self.encode(&mut out);
        out
    }
}

/// A decoded reply and what was noticed on the way.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Decoded {
    /// The reply.
    pub reply: Reply,
    /// Text that was not UTF-8 (read as Latin-1), a key without a value.
    pub warnings: Vec<DecodeWarning>,
}

/// The command of a query datagram, without decoding its challenge.
pub(crate) fn request_command(datagram: &[u8]) -> Option<Command> {
    let rest = datagram.strip_prefix(&PREFIX)?;
    [Command::GetInfo, Command::GetStatus]
        .into_iter()
        .find(|c| word_at_start(rest, c.word()))
}

/// The kind of a reply datagram, without decoding it.
pub(crate) fn reply_kind(datagram: &[u8]) -> Option<ReplyKind> {
    let rest = datagram.strip_prefix(&PREFIX)?;
    [ReplyKind::Info, ReplyKind::Status]
        .into_iter()
        .find(|k| word_at_start(rest, k.word()))
}

/// Whether `rest` starts with `word` followed by the end, a space or a newline.
fn word_at_start(rest: &[u8], word: &str) -> bool {
    rest.strip_prefix(word.as_bytes())
        .is_some_and(|after| matches!(after.first(), None | Some(b' ' | b'\n' | b'\r' | b'\t' | 0)))
}

/// Whether `c` may be echoed into an info string.
fn challenge_byte(c: u8) -> bool {
    c.is_ascii_graphic() && !matches!(c, b'\\' | b'"' | b';')
}

/// Decodes a query.
pub fn decode_request(datagram: &[u8]) -> Result<Request, DecodeError> {
    let mut r = Reader::new(datagram);
    if r.array::<4>("prefix")? != PREFIX {
        return Err(DecodeError::new(0, "prefix", DecodeErrorKind::BadMagic));
    }
    let command = request_command(datagram)
        .ok_or_else(|| DecodeError::invalid(4, "command", "neither getinfo nor getstatus"))?;
    r.take(command.word().len(), "command")?;
    skip_blanks(&mut r);
    let at = r.offset();
    let word = take_while(&mut r, |b| !matches!(b, b' ' | b'\n' | b'\r' | b'\t' | 0));
    if word.len() > MAX_CHALLENGE {
        return Err(DecodeError::new(
            at,
            "challenge",
            DecodeErrorKind::TooLarge {
                limit: MAX_CHALLENGE as u64,
            },
        ));
    }
    if !word.iter().all(|&b| challenge_byte(b)) {
        return Err(DecodeError::invalid(
            at,
            "challenge",
            "a byte that cannot be echoed into an info string",
        ));
    }
    skip_blanks(&mut r);
    if !r.is_empty() {
        return Err(DecodeError::invalid(
            r.offset(),
            "arguments",
            "more than one argument",
        ));
    }
    let challenge = (!word.is_empty()).then(|| decode_utf8_or_latin1(Err(word)).0);
    Ok(Request { command, challenge })
}

fn skip_blanks(r: &mut Reader<'_>) {
    take_while(r, |b| matches!(b, b' ' | b'\n' | b'\r' | b'\t' | 0));
}

/// Decodes a reply with the default limits.
pub fn decode_reply(datagram: &[u8]) -> Result<Decoded, DecodeError> {
    decode_reply_with(datagram, &DecodeLimits::default())
}

/// Decodes a reply within `limits`.
pub fn decode_reply_with(datagram: &[u8], limits: &DecodeLimits) -> Result<Decoded, DecodeError> {
    let mut r = Reader::new(datagram);
    if r.array::<4>("prefix")? != PREFIX {
        return Err(DecodeError::new(0, "prefix", DecodeErrorKind::BadMagic));
    }
    let kind = reply_kind(datagram).ok_or_else(|| {
        DecodeError::invalid(4, "command", "neither infoResponse nor statusResponse")
    })?;
    r.take(kind.word().len(), "command")?;
    take_while(&mut r, |b| b == b' ' || b == b'\r');
    if r.peek_u8() == Some(b'\n') {
        r.take(1, "command")?;
    }
    let mut warnings = Vec::new();
    let base = r.offset();
    let info = take_line(&mut r, limits.max_info_bytes, "info string")?;
    let vars = decode_info(info, base, limits.max_vars, &mut warnings)?;
    let mut players = Vec::new();
    if kind == ReplyKind::Status {
        players = decode_player_lines(&mut r, limits, NameEnd::LastQuote, &mut warnings)?;
    } else if !r.is_empty() {
        warnings.push(DecodeWarning {
            offset: r.offset(),
            field: "infoResponse",
            message: "bytes after the info string",
        });
    }
    Ok(Decoded {
        reply: Reply {
            kind,
            vars,
            players,
        },
        warnings,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn requests_decode_and_encode() {
        let r = decode_request(b"\xff\xff\xff\xffgetinfo abc123").unwrap();
        assert_eq!(r, Request::new(Command::GetInfo, Some("abc123")));
        let r = decode_request(b"\xff\xff\xff\xffgetstatus\n").unwrap();
        assert_eq!(r, Request::new(Command::GetStatus, None));
        let mut out = Vec::new();
        Request::new(Command::GetInfo, Some("x1")).encode(&mut out);
        assert_eq!(out, b"\xff\xff\xff\xffgetinfo x1");
        assert_eq!(
            decode_request(&out).unwrap().challenge.as_deref(),
            Some("x1")
        );
    }

    #[test]
    fn challenges_that_could_inject_variables_are_refused() {
        let e = decode_request(b"\xff\xff\xff\xffgetinfo a\\hostname\\evil").unwrap_err();
        assert_eq!((e.field, e.offset), ("challenge", 12));
        let long = [b"\xff\xff\xff\xffgetinfo ".as_slice(), &[b'a'; 129]].concat();
        assert!(matches!(
            decode_request(&long).unwrap_err().kind,
            DecodeErrorKind::TooLarge { limit: 128 }
        ));
        assert!(decode_request(b"\xff\xff\xff\xffgetinfo a b").is_err());
        assert!(decode_request(b"\xff\xff\xff\xffgetinfoX").is_err());
    }

    #[test]
    fn what_the_fuzzer_found_round_trips() {
        // a NUL in a value, a quote inside a name, a CR between columns and at the end
        for bytes in [
            &b"\xff\xff\xff\xffinfoResponse\n\\modname\\da\x01\0\0\x0eta"[..],
            b"\xff\xff\xff\xffstatusResponse\n\\a\\b\n1 2 \"^\"MACHETERO<,\"\n",
            b"\xff\xff\xff\xffstatusResponse\n\\a\\b\n17 53 \"Monia\"pr\rotocol\r \r",
        ] {
            let d = decode_reply(bytes).unwrap().reply;
            assert_eq!(decode_reply(&d.to_bytes()).unwrap().reply, d);
        }
    }

    #[test]
    fn player_columns_and_errors_name_the_offset() {
        let d = decode_reply(b"\xff\xff\xff\xffstatusResponse\n\\a\\b\n1 2 3 \"n\"\n4 5 \"m\" 2\n")
            .unwrap();
        assert_eq!(d.reply.players[0].before, ["1", "2", "3"]);
        assert_eq!(d.reply.players[1].after, ["2"]);
        let e = decode_reply(b"\xff\xff\xff\xffstatusResponse\n\\a\\b\n1 2 \"ok\"\n1 2 nope\n")
            .unwrap_err();
        assert_eq!(e.field, "player line");
        assert_eq!(e.offset, 41);
        assert_eq!(e.to_string(), "player line at byte 41: no quoted name");
    }
}
