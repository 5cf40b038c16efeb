//! The wire format of QuakeWorld's and Quake 2's `status`: requests and replies,
//! decoded through the bounded reader and encoded back.
//!
//! ```text
//! request  FF FF FF FF "status" [" " FLAGS] "\n"   (HexenWorld: FF FF FF FF FF "status\n")
//! reply    FF FF FF FF "n"       "\key\value…" "\n" (PLAYER "\n")*   QuakeWorld
//!          FF FF FF FF FF "n"    "\key\value…" "\n" (PLAYER "\n")*   HexenWorld
//!          FF FF FF FF "print\n" "\key\value…" "\n" (PLAYER "\n")*   Quake 2
//! PLAYER   QuakeWorld, HexenWorld: USERID FRAGS MINUTES PING "NAME" "SKIN" TOP BOTTOM ["TEAM"]
//!          Quake 2:    FRAGS PING "NAME"
//! ```
//!
//! QuakeWorld's `FLAGS` (MVDSV, FTE, ezQuake's server) are a bit set: 1 server info, 2
//! players, 4 spectators, 16 each player's team; we send `23` as qstat does, and servers
//! older than the flags answer it as a plain `status`. A spectator's line has the frags
//! `-9999` (or `S`) and its name starts with `\s\`. QuakeWorld ends the reply with a
//! NUL, and the info string and player lines are the ones Quake III's `statusResponse`
//! carries (shared with it: `infostring.rs`).

use super::PREFIX;
use crate::error::{DecodeError, DecodeErrorKind, DecodeWarning};
use crate::infostring::{
    decode_info, decode_player_lines, encode_info, encode_player, get, take_line, NameEnd,
};
pub use crate::infostring::{DecodeLimits, PlayerLine};
use crate::reader::Reader;
use crate::text::Text;

/// The status flags QuakeWorld's request carries (server info, players, spectators,
/// teams), as qstat sends them.
pub const QW_STATUS_FLAGS: u32 = 23;

/// Which engine's `status`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Dialect {
    /// QuakeWorld (`n` reply, 8 or 9 columns a player).
    QuakeWorld,
    /// Quake 2 (`print` reply, `frags ping "name"`).
    Quake2,
    /// HexenWorld (a fifth `FF` before QuakeWorld's request and reply; its player
    /// lines as QuakeWorld's, as qstat reads them).
    HexenWorld,
}

impl Dialect {
    /// The word after the prefix that starts its reply.
    pub const fn reply_word(self) -> &'static [u8] {
        match self {
            Self::QuakeWorld => b"n",
            Self::Quake2 => b"print\n",
            Self::HexenWorld => b"\xffn",
        }
    }

    /// Appends its `status` request to `out`.
    pub fn encode_request(self, out: &mut Vec<u8>) {
        out.extend_from_slice(&PREFIX);
        match self {
            Self::QuakeWorld => out.extend_from_slice(b"status 23\n"),
            Self::Quake2 => out.extend_from_slice(b"status\n"),
            Self::HexenWorld => out.extend_from_slice(b"\xffstatus\n"),
        }
    }
}

/// A `status` reply: its dialect, its variables in order, its player lines.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Reply {
    /// Which engine's reply.
    pub dialect: Dialect,
    /// The `\key\value` pairs, in order, as sent.
    pub vars: Vec<(Text, Text)>,
    /// The player lines, as sent.
    pub players: Vec<PlayerLine>,
}

impl Reply {
    /// The value of `key` (the first, compared without case, as the engines do).
    pub fn get(&self, key: &str) -> Option<&str> {
        get(&self.vars, key)
    }

    /// Appends the datagram to `out` (QuakeWorld's with its closing NUL, which Quake 2
    /// servers do not send).
    pub fn encode(&self, out: &mut Vec<u8>) {
        out.extend_from_slice(&PREFIX);
        out.extend_from_slice(self.dialect.reply_word());
        encode_info(&self.vars, out);
        out.push(b'\n');
        let qw = self.dialect != Dialect::Quake2;
        for p in &self.players {
            encode_player(p, |i| qw && (i == 0 || i == 3), out);
        }
        if qw {
            out.push(0);
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

/// The dialect of a reply datagram, without decoding it.
pub fn reply_dialect(datagram: &[u8]) -> Option<Dialect> {
    let rest = datagram.strip_prefix(&PREFIX)?;
    if rest.starts_with(Dialect::Quake2.reply_word()) {
        return Some(Dialect::Quake2);
    }
    // `n` then the info string (`\`), or nothing but its end (an empty server info).
    match rest {
        [b'n', b'\\' | b'\n' | 0, ..] | [b'n'] => Some(Dialect::QuakeWorld),
        [0xff, b'n', b'\\' | b'\n' | 0, ..] | [0xff, b'n'] => Some(Dialect::HexenWorld),
        _ => None,
    }
}

/// Whether `datagram` is a `status` request.
pub fn is_request(datagram: &[u8]) -> bool {
    request_dialect(datagram).is_some()
}

/// The dialect a `status` request is in: QuakeWorld's carries flags (`status 23`), a
/// bare `status` is Quake 2's (old QuakeWorld clients send it too).
pub fn request_dialect(datagram: &[u8]) -> Option<Dialect> {
    let rest = datagram.strip_prefix(&PREFIX)?;
    if let Some(r) = rest.strip_prefix(b"\xffstatus") {
        return matches!(r, [] | [b'\n' | 0, ..]).then_some(Dialect::HexenWorld);
    }
    let rest = rest.strip_prefix(b"status")?;
    let rest = match rest {
        [b' ', rest @ ..] => rest,
        [] | [b'\n' | 0, ..] => return Some(Dialect::Quake2),
        _ => return None,
    };
    let digits = rest.iter().take_while(|b| b.is_ascii_digit()).count();
    (digits > 0
        && rest
            .get(digits..)
            .is_some_and(|t| t.iter().all(|b| matches!(b, b'\n' | 0 | b' '))))
    .then_some(Dialect::QuakeWorld)
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
    let dialect = reply_dialect(datagram)
        .ok_or_else(|| DecodeError::invalid(4, "command", "neither n nor print"))?;
    r.take(dialect.reply_word().len(), "command")?;
    let mut warnings = Vec::new();
    let base = r.offset();
    let info = take_line(&mut r, limits.max_info_bytes, "info string")?;
    // The closing NUL may follow the info string directly (a server with no players).
    let info = info.strip_suffix(&[0]).unwrap_or(info);
    let vars = decode_info(info, base, limits.max_vars, &mut warnings)?;
    let name_end = match dialect {
        Dialect::QuakeWorld | Dialect::HexenWorld => NameEnd::NextQuote,
        Dialect::Quake2 => NameEnd::LastQuote,
    };
    let players = decode_player_lines(&mut r, limits, name_end, &mut warnings)?;
    Ok(Decoded {
        reply: Reply {
            dialect,
            vars,
            players,
        },
        warnings,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    const MVDSV: &[u8] = b"\xff\xff\xff\xffn\\maxfps\\77\\*version\\MVDSV 0.35\\hostname\\QW test\\maxclients\\6\\map\\start\n1 0 0 999 \"Tester\" \"base\" 4 12 \"red\"\n\x00";

    #[test]
    fn mvdsv_reply_decodes_and_round_trips() {
        let d = decode_reply(MVDSV).unwrap();
        assert!(d.warnings.is_empty(), "{:?}", d.warnings);
        let r = d.reply;
        assert_eq!(r.dialect, Dialect::QuakeWorld);
        assert_eq!(r.get("hostname"), Some("QW test"));
        assert_eq!(r.players.len(), 1);
        assert_eq!(r.players[0].before, ["1", "0", "0", "999"]);
        assert_eq!(r.players[0].name, "Tester");
        assert_eq!(r.players[0].after, ["base", "4", "12", "red"]);
        assert_eq!(r.to_bytes(), MVDSV);
    }

    #[test]
    fn quake2_reply_decodes() {
        let d = decode_reply(
            b"\xff\xff\xff\xffprint\n\\hostname\\Q2\\mapname\\q2dm1\\maxclients\\8\n3 50 \"a\"b\"\n",
        )
        .unwrap()
        .reply;
        assert_eq!(d.dialect, Dialect::Quake2);
        assert_eq!(d.players[0].name, "a\"b");
        assert_eq!(decode_reply(&d.to_bytes()).unwrap().reply, d);
    }

    #[test]
    fn requests_and_kinds() {
        let mut out = Vec::new();
        Dialect::QuakeWorld.encode_request(&mut out);
        assert_eq!(out, b"\xff\xff\xff\xffstatus 23\n");
        assert!(is_request(&out));
        assert!(!is_request(b"\xff\xff\xff\xffstatusResponse"));
        assert_eq!(request_dialect(&out), Some(Dialect::QuakeWorld));
        assert_eq!(
            request_dialect(b"\xff\xff\xff\xffstatus\n"),
            Some(Dialect::Quake2)
        );
        assert_eq!(request_dialect(b"\xff\xff\xff\xffstatus x"), None);
        let mut hw = Vec::new();
        Dialect::HexenWorld.encode_request(&mut hw);
        assert_eq!(hw, b"\xff\xff\xff\xff\xffstatus\n");
        assert_eq!(request_dialect(&hw), Some(Dialect::HexenWorld));
        assert_eq!(
            reply_dialect(b"\xff\xff\xff\xff\xffn\\a\\b"),
            Some(Dialect::HexenWorld)
        );
        let r = decode_reply(
            b"\xff\xff\xff\xff\xffn\\hostname\\HW\n3 1 2 50 \"Paladin\" \"\" 1 2\n\x00",
        )
        .unwrap()
        .reply;
        assert_eq!(
            (r.dialect, r.players[0].name.as_str()),
            (Dialect::HexenWorld, "Paladin")
        );
        assert_eq!(decode_reply(&r.to_bytes()).unwrap().reply, r);
        assert_eq!(
            reply_dialect(b"\xff\xff\xff\xffn"),
            Some(Dialect::QuakeWorld)
        );
        assert_eq!(reply_dialect(b"\xff\xff\xff\xffnone"), None);
        assert_eq!(
            reply_dialect(b"\xff\xff\xff\xffprint\nx"),
            Some(Dialect::Quake2)
        );
    }

    #[test]
    fn an_unclosed_quoted_column_is_an_error_with_its_offset() {
        let e = decode_reply(b"\xff\xff\xff\xffn\\a\\b\n1 2 3 4 \"n\" \"skin\n").unwrap_err();
        assert_eq!(e.field, "player column");
        assert_eq!(e.offset, 22);
    }
}
