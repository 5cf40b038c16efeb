//! Savage 2: A Tortured Soul's server info (UDP 11235): a client, sans-IO, on the core's
//! one-request shape.
//!
//! The request is the one byte `01`. The reply has no magic: 12 bytes of header
//! (skipped), then the name (NUL-terminated, with `^x` colour codes), players and max
//! players (a byte each), the time, the map, the next map and the location (NUL-terminated),
//! min players (a byte), the game type and the version (NUL-terminated), min level (a
//! byte). The decoder is total.

pub mod client;

use crate::client_oneshot::Strings;
use crate::error::DecodeError;
use crate::protocol::{Entry, Transport};
use crate::reader::Reader;
use crate::text::Text;
use crate::DecodeWarning;

/// The request.
pub const REQUEST: [u8; 1] = [0x01];
/// The reply's header, skipped.
pub const HEADER_LEN: usize = 12;
/// The default port (game and query).
pub const DEFAULT_PORT: u16 = 11235;

/// Savage 2's entry (see [`Entry`]): its replies have no magic, so no signature.
pub const ENTRY: Entry = Entry {
    aliases: &["s2ats", "sav2"],
    help: "Savage 2 (port 11235): the byte 01, answered by the name, players, map, next \
        map, game type and version.",
    auto: false,
    default_port: Some(DEFAULT_PORT),
    ..Entry::new("savage2", "Savage 2", Transport::Datagram)
};

/// A decoded reply, every field as sent.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
#[non_exhaustive]
pub struct Reply {
    /// The 12 header bytes.
    pub header: [u8; HEADER_LEN],
    /// The name, with colour codes.
    pub name: Text,
    /// Players.
    pub players: u8,
    /// Max players.
    pub max_players: u8,
    /// The match time, as sent.
    pub time: Text,
    /// The map.
    pub map: Text,
    /// The next map.
    pub next_map: Text,
    /// The server's location.
    pub location: Text,
    /// Min players.
    pub min_players: u8,
    /// The game type.
    pub game_type: Text,
    /// The version.
    pub version: Text,
    /// Min level.
    pub min_level: u8,
    /// What was noticed while decoding.
    pub warnings: Vec<DecodeWarning>,
}

/// Reads a reply.
pub fn decode_reply(datagram: &[u8]) -> Result<Reply, DecodeError> {
    let mut r = Reader::new(datagram);
    let mut s = Strings::default();
    let mut reply = Reply {
        header: r.array("header")?,
        name: s.cstr(&mut r, "name")?,
        players: r.u8("players")?,
        max_players: r.u8("max players")?,
        time: s.cstr(&mut r, "time")?,
        map: s.cstr(&mut r, "map")?,
        next_map: s.cstr(&mut r, "next map")?,
        location: s.cstr(&mut r, "location")?,
        min_players: r.u8("min players")?,
        game_type: s.cstr(&mut r, "game type")?,
        version: s.cstr(&mut r, "version")?,
        min_level: r.u8("min level")?,
        ..Reply::default()
    };
    reply.warnings = s.warnings();
    Ok(reply)
}

impl Reply {
    /// Writes the reply as a server sends it (tests and replays).
    pub fn encode(&self, out: &mut Vec<u8>) {
        out.extend_from_slice(&self.header);
        let cstr = |out: &mut Vec<u8>, t: &str| {
            out.extend(t.bytes().filter(|&b| b != 0));
            out.push(0);
        };
        cstr(out, &self.name);
        out.extend_from_slice(&[self.players, self.max_players]);
        for t in [&self.time, &self.map, &self.next_map, &self.location] {
            cstr(out, t);
        }
        out.push(self.min_players);
        cstr(out, &self.game_type);
        cstr(out, &self.version);
        out.push(self.min_level);
    }
}

/// `s` without `^` colour codes (a `^` and the character after it).
pub fn strip_colours(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    let mut chars = s.chars();
    while let Some(c) = chars.next() {
        if c == '^' {
            chars.next();
        } else {
            out.push(c);
        }
    }
    out
}
