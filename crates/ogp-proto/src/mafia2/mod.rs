//! Mafia II's multiplayer mods, Mafia II Multiplayer (`M2MP`) and Mafia II Online
//! (`M2Online`, [`online`]): a client each, sans-IO, on the core's one-request shape,
//! queried on the game port + 1.
//!
//! The request is the magic alone. The reply: the magic, then strings whose length byte
//! counts one more than the text: the name, players and max players (decimal text), the
//! game mode, then a password byte, then the player names (Mafia II Online: each
//! followed by the ping, as text) until an empty name or the end. The decoder is total;
//! it keeps at most [`MAX_PLAYERS`] players.

pub mod client;
pub mod online;

use crate::client_oneshot::Strings;
use crate::error::{DecodeError, DecodeErrorKind};
use crate::protocol::{Entry, Signature, Tier, Transport};
use crate::reader::Reader;
use crate::text::Text;
use crate::DecodeWarning;

/// Mafia II Multiplayer's magic.
pub const MAGIC_MP: &[u8] = b"M2MP";
/// Mafia II Online's magic.
pub const MAGIC_ONLINE: &[u8] = b"M2Online";
/// Players kept (the rest are counted).
pub const MAX_PLAYERS: usize = 1024;

/// Mafia II Multiplayer's entry (see [`Entry`]).
pub const ENTRY: Entry = Entry {
    aliases: &["m2mp", "m2m"],
    help: "Mafia II Multiplayer (the game port + 1, 27017): `M2MP`, answered by the name, \
        players, max, game mode, password and player names.",
    auto: false,
    default_port: Some(27017),
    signatures: &[Signature {
        tier: Tier::Magic,
        matches: |d| d.starts_with(MAGIC_MP),
    }],
    ..Entry::new("mafia2mp", "Mafia II Multiplayer", Transport::Datagram)
};

/// One player.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
#[non_exhaustive]
pub struct Player {
    /// The name.
    pub name: Text,
    /// The ping (Mafia II Online only), as sent.
    pub ping: Option<Text>,
}

/// A decoded reply, every field as sent.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
#[non_exhaustive]
pub struct Reply {
    /// Whether it is Mafia II Online's (`M2Online`).
    pub online: bool,
    /// The server's name.
    pub name: Text,
    /// Players, as sent (decimal text).
    pub players: Text,
    /// Max players, as sent.
    pub max_players: Text,
    /// The game mode.
    pub game_mode: Text,
    /// Whether a password is needed.
    pub password: bool,
    /// The players, at most [`MAX_PLAYERS`].
    pub player_list: Vec<Player>,
    /// What was noticed while decoding.
    pub warnings: Vec<DecodeWarning>,
}

/// Reads a reply of Mafia II Multiplayer (`online` false) or Online.
pub fn decode_reply(datagram: &[u8], online: bool) -> Result<Reply, DecodeError> {
    let magic = if online { MAGIC_ONLINE } else { MAGIC_MP };
    let mut r = Reader::new(datagram);
    if r.take(magic.len(), "magic")? != magic {
        return Err(DecodeError::new(0, "magic", DecodeErrorKind::BadMagic));
    }
    let mut s = Strings::default();
    let mut reply = Reply {
        online,
        name: s.pstr8_plus1(&mut r, "name")?,
        players: s.pstr8_plus1(&mut r, "players")?,
        max_players: s.pstr8_plus1(&mut r, "max players")?,
        game_mode: s.pstr8_plus1(&mut r, "game mode")?,
        password: r.u8("password")? != 0,
        ..Reply::default()
    };
    let mut cut = None;
    while !r.is_empty() {
        let at = r.offset();
        let name = s.pstr8_plus1(&mut r, "player name")?;
        if name.is_empty() {
            break;
        }
        let ping = if online {
            Some(s.pstr8_plus1(&mut r, "player ping")?)
        } else {
            None
        };
        if reply.player_list.len() < MAX_PLAYERS {
            reply.player_list.push(Player { name, ping });
        } else {
            cut.get_or_insert(at);
        }
    }
    if let Some(offset) = cut {
        reply.warnings.push(DecodeWarning {
            offset,
            field: "player name",
            message: "players past the cap dropped",
        });
    }
    reply.warnings.extend(s.warnings());
    Ok(reply)
}

impl Reply {
    /// Writes the reply as a server sends it (tests and replays).
    pub fn encode(&self, out: &mut Vec<u8>) {
        let put = |out: &mut Vec<u8>, t: &str| {
            let b = t.as_bytes();
            let b = b.get(..b.len().min(254)).unwrap_or_default();
            out.push(u8::try_from(b.len() + 1).unwrap_or(u8::MAX));
            out.extend_from_slice(b);
        };
        out.extend_from_slice(if self.online { MAGIC_ONLINE } else { MAGIC_MP });
        for t in [
            &self.name,
            &self.players,
            &self.max_players,
            &self.game_mode,
        ] {
            put(out, t);
        }
        out.push(u8::from(self.password));
        for p in &self.player_list {
            put(out, &p.name);
            if self.online {
                put(out, p.ping.as_deref().unwrap_or("0"));
            }
        }
    }
}
