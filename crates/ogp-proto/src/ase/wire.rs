//! ASE's request and reply, decoded through the bounded reader.
//!
//! * Request: the one byte `s`.
//! * Reply: `EYE1`, then nine strings: game name, port, server name, game type, map,
//!   version, password (`1` or `0`), players, max players; then `key value` pairs ended
//!   by an empty key; then, to the end of the datagram, one record per player: a flags
//!   byte, and a string for each bit set: `01` name, `02` team, `04` skin, `08` score,
//!   `10` ping, `20` time (`40` and `80` carry nothing known and are kept in
//!   [`AsePlayer::flags`]).
//!
//! A string is a length byte that counts itself, then that many bytes less one: `01`
//! is the empty string. A length byte of `00` (which cannot count itself) is read as
//! the empty string and noted in [`Reply::warnings`]. Strings are UTF-8 when they are
//! (Multi Theft Auto), else read in the chosen charset (Latin-1 by default).

use crate::charset::Charset;
use crate::error::{DecodeError, DecodeErrorKind, DecodeWarning};
use crate::model::Text;
use crate::reader::Reader;
use crate::text::Unchosen;

/// The request.
pub const REQUEST: &[u8] = b"s";
/// The reply's first four bytes.
pub const MAGIC: [u8; 4] = *b"EYE1";
/// Most rule pairs kept; further pairs are read and dropped with a warning.
pub const MAX_RULES: usize = 1024;
/// Most players kept; further records are read and dropped with a warning.
pub const MAX_PLAYERS: usize = 1024;

/// The player flag bits, in wire order.
pub mod flag {
    /// The name follows.
    pub const NAME: u8 = 0x01;
    /// The team follows.
    pub const TEAM: u8 = 0x02;
    /// The skin follows.
    pub const SKIN: u8 = 0x04;
    /// The score follows.
    pub const SCORE: u8 = 0x08;
    /// The ping follows.
    pub const PING: u8 = 0x10;
    /// The time follows.
    pub const TIME: u8 = 0x20;
}

/// One player record: the fields its flags announced, as sent.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct AsePlayer {
    /// The flags byte.
    pub flags: u8,
    /// `01`.
    pub name: Option<Text>,
    /// `02`.
    pub team: Option<Text>,
    /// `04`.
    pub skin: Option<Text>,
    /// `08`.
    pub score: Option<Text>,
    /// `10`.
    pub ping: Option<Text>,
    /// `20`.
    pub time: Option<Text>,
}

/// A decoded reply, every field as sent.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct Reply {
    /// The game's short name (`mta`, `farcry`).
    pub game_name: Text,
    /// The game port.
    pub port: Text,
    /// The server's name.
    pub server_name: Text,
    /// The game type.
    pub game_type: Text,
    /// The map.
    pub map: Text,
    /// The version.
    pub version: Text,
    /// `1` when a password is needed.
    pub password: Text,
    /// The number of players.
    pub num_players: Text,
    /// The number of slots.
    pub max_players: Text,
    /// The rules, in wire order.
    pub rules: Vec<(Text, Text)>,
    /// The players, in wire order.
    pub players: Vec<AsePlayer>,
    /// What was read in a tolerant way.
    pub warnings: Vec<DecodeWarning>,
}

/// Reads a reply, strings that are not UTF-8 as Latin-1.
pub fn decode_reply(datagram: &[u8]) -> Result<Reply, DecodeError> {
    decode_reply_with(datagram, Charset::Auto)
}

/// Reads a reply, strings that are not UTF-8 in `charset` (`Auto`: Latin-1, with a
/// warning).
pub fn decode_reply_with(datagram: &[u8], charset: Charset) -> Result<Reply, DecodeError> {
    let mut r = Reader::new(datagram).with_charset(charset);
    if r.array::<4>("magic")? != MAGIC {
        return Err(DecodeError::new(0, "magic", DecodeErrorKind::BadMagic));
    }
    let mut s = Strings::default();
    let mut reply = Reply {
        game_name: s.read(&mut r, "game name")?,
        port: s.read(&mut r, "port")?,
        server_name: s.read(&mut r, "server name")?,
        game_type: s.read(&mut r, "game type")?,
        map: s.read(&mut r, "map")?,
        version: s.read(&mut r, "version")?,
        password: s.read(&mut r, "password")?,
        num_players: s.read(&mut r, "players")?,
        max_players: s.read(&mut r, "max players")?,
        ..Reply::default()
    };
    while !r.is_empty() {
        let key = s.read(&mut r, "rule key")?;
        if key.is_empty() {
            break;
        }
        let value = s.read(&mut r, "rule value")?;
        if reply.rules.len() < MAX_RULES {
            reply.rules.push((key, value));
        } else if reply.rules.len() == MAX_RULES {
            s.note(r.offset(), "rule", "rules past the cap dropped");
        }
    }
    let mut dropped = false;
    while !r.is_empty() {
        let flags = r.u8("player flags")?;
        let mut p = AsePlayer {
            flags,
            ..AsePlayer::default()
        };
        let slots: [(u8, &mut Option<Text>, &'static str); 6] = [
            (flag::NAME, &mut p.name, "player name"),
            (flag::TEAM, &mut p.team, "player team"),
            (flag::SKIN, &mut p.skin, "player skin"),
            (flag::SCORE, &mut p.score, "player score"),
            (flag::PING, &mut p.ping, "player ping"),
            (flag::TIME, &mut p.time, "player time"),
        ];
        let mut cut = false;
        for (bit, slot, field) in slots {
            if flags & bit != 0 {
                match s.read(&mut r, field) {
                    Ok(t) => *slot = Some(t),
                    Err(e) => {
                        // A datagram cut inside the last record: keep the others.
                        s.note(
                            e.offset,
                            "player",
                            "the datagram ends inside a player record",
                        );
                        cut = true;
                        break;
                    }
                }
            }
        }
        if reply.players.len() < MAX_PLAYERS {
            // A cut record keeps the fields read before the end.
            reply.players.push(p);
        } else if !dropped {
            dropped = true;
            s.note(r.offset(), "player", "players past the cap dropped");
        }
        if cut {
            break;
        }
    }
    reply.warnings = s.finish();
    Ok(reply)
}

/// The string reader and what it noticed.
#[derive(Default)]
struct Strings {
    latin1: Option<usize>,
    zero_length: Option<usize>,
    warnings: Vec<DecodeWarning>,
}

impl Strings {
    /// One length-prefixed string.
    fn read(&mut self, r: &mut Reader<'_>, field: &'static str) -> Result<Text, DecodeError> {
        let at = r.offset();
        let len = r.u8(field)?;
        let Some(n) = usize::from(len).checked_sub(1) else {
            self.zero_length.get_or_insert(at);
            return Ok(Text::default());
        };
        let bytes = r.take(n, field)?;
        let found = std::str::from_utf8(bytes).map_err(|_| bytes);
        let (text, guessed) = crate::text::decode_text(found, r, Unchosen::Latin1);
        if guessed {
            self.latin1.get_or_insert(at);
        }
        Ok(text)
    }

    fn note(&mut self, offset: usize, field: &'static str, message: &'static str) {
        self.warnings.push(DecodeWarning {
            offset,
            field,
            message,
        });
    }

    fn finish(mut self) -> Vec<DecodeWarning> {
        if let Some(at) = self.zero_length {
            self.note(at, "string", "a length byte of 00 read as an empty string");
        }
        if let Some(at) = self.latin1 {
            self.note(at, "string", "not UTF-8: read as Latin-1");
        }
        self.warnings
    }
}

/// Appends `s` as a length-prefixed string (cut to 254 bytes at a character boundary).
pub fn put_string(out: &mut Vec<u8>, s: &str) {
    let mut end = s.len().min(254);
    while !s.is_char_boundary(end) {
        end -= 1;
    }
    let s = s.get(..end).unwrap_or_default();
    out.push(u8::try_from(s.len() + 1).unwrap_or(u8::MAX));
    out.extend_from_slice(s.as_bytes());
}

impl Reply {
    /// Appends the reply's bytes to `out` (for tests and replays): what
    /// [`decode_reply`] reads back, strings cut to 254 bytes.
    pub fn encode(&self, out: &mut Vec<u8>) {
        out.extend_from_slice(&MAGIC);
        for f in [
            &self.game_name,
            &self.port,
            &self.server_name,
            &self.game_type,
            &self.map,
            &self.version,
            &self.password,
            &self.num_players,
            &self.max_players,
        ] {
            put_string(out, f);
        }
        for (k, v) in &self.rules {
            put_string(out, k);
            put_string(out, v);
        }
        put_string(out, "");
        for p in &self.players {
            out.push(p.flags);
            let fields = [
                (flag::NAME, &p.name),
                (flag::TEAM, &p.team),
                (flag::SKIN, &p.skin),
                (flag::SCORE, &p.score),
                (flag::PING, &p.ping),
                (flag::TIME, &p.time),
            ];
            for (bit, f) in fields {
                if p.flags & bit != 0 {
                    put_string(out, f.as_deref().unwrap_or_default());
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sample() -> Reply {
        Reply {
            game_name: "mta".into(),
            port: "22003".into(),
            server_name: "Test".into(),
            game_type: "DM".into(),
            map: "SA".into(),
            version: "1.6".into(),
            password: "0".into(),
            num_players: "1".into(),
            max_players: "32".into(),
            rules: vec![("weather".into(), "sunny".into())],
            players: vec![AsePlayer {
                flags: flag::NAME | flag::PING | flag::TEAM,
                name: Some("Carl".into()),
                team: Some("Grove".into()),
                ping: Some("50".into()),
                ..AsePlayer::default()
            }],
            warnings: Vec::new(),
        }
    }

    #[test]
    fn a_reply_round_trips() {
        let mut d = Vec::new();
        sample().encode(&mut d);
        assert_eq!(decode_reply(&d).unwrap(), sample());
        assert!(d.starts_with(b"EYE1\x04mta\x0622003"));
    }

    #[test]
    fn a_hostile_reply_is_held_to_the_caps() {
        let mut head = Vec::new();
        Reply::default().encode(&mut head);
        head.pop(); // the rules' empty key
                    // 64 KiB of two-byte rules: MAX_RULES kept
        let mut d = head.clone();
        while d.len() < 65_000 {
            d.extend_from_slice(&[2, b'k', 1]);
        }
        let r = decode_reply(&d).unwrap();
        assert_eq!(r.rules.len(), MAX_RULES);
        // 64 KiB of one-byte player records (no flags): MAX_PLAYERS kept
        let mut d = head;
        d.push(1);
        d.resize(65_000, 0);
        let r = decode_reply(&d).unwrap();
        assert_eq!(r.players.len(), MAX_PLAYERS);
        assert_eq!(r.warnings.len(), 1, "{:?}", r.warnings);
    }

    #[test]
    fn bad_input_is_an_error_never_a_panic() {
        assert!(decode_reply(b"EYE").is_err());
        assert!(decode_reply(b"EYE2\x01").is_err());
        // a field longer than the datagram
        let e = decode_reply(b"EYE1\x09mta").unwrap_err();
        assert_eq!(e.field, "game name");
        // nine empty fields, no rules end, a zero length byte
        let r = decode_reply(b"EYE1\x01\x01\x01\x01\x01\x01\x01\x01\x00").unwrap();
        assert!(r.server_name.is_empty() && r.rules.is_empty());
        assert_eq!(r.warnings.len(), 1);
        // a player whose flags announce a field that is not there: kept, without it
        let mut d = Vec::new();
        sample().encode(&mut d);
        d.extend_from_slice(&[flag::NAME | flag::PING, 3, b'a', b'b', 9]);
        let r = decode_reply(&d).unwrap();
        assert_eq!(r.players[0], sample().players[0]);
        assert_eq!(r.players[1].name.as_deref(), Some("ab"));
        assert_eq!(r.players[1].ping, None);
        assert_eq!(
            r.warnings[0].message,
            "the datagram ends inside a player record"
        );
        // unknown flag bits carry nothing
        d.truncate(d.len() - 5);
        d.push(0xc0);
        let r = decode_reply(&d).unwrap();
        assert_eq!(r.players.len(), 2);
        assert_eq!(r.players[1].flags, 0xc0);
    }
}
