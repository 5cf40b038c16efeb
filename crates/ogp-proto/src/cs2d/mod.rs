//! CS2D's server query (Unreal Software's Counter-Strike 2D, UDP 36963): a client,
//! sans-IO, on the core's one-request shape.
//!
//! The request is the 8 bytes `01 00 FB 01 F5 03 FB 05` (server info and the player
//! list); the reply starts `01 00 FB 01`, then: flags (bit 0 password, 1 registered users
//! only, 2 fog of war, 3 friendly fire, 5 bots and a game-mode byte, 6 Lua scripts,
//! 7 forced light), name and map (each a length byte and the text), players, max players,
//! the game mode (only with flag bit 5), bots, a second flags byte (bit 0 recoil,
//! 1 off-screen damage, 2 downloads), 2 bytes, then the player list when the server
//! sends it: a count, and per player an id, a name, a team, a score (`i32`) and deaths
//! (`u32`), little-endian. Servers drop requests now and then: the core's retries resend.
//! The decoder is total: a value or a [`DecodeError`], never a panic; it allocates what
//! the datagram holds and no more.

pub mod client;

use crate::client_oneshot::{put_pstr8, Strings};
use crate::error::{DecodeError, DecodeErrorKind};
use crate::protocol::{Entry, Signature, Tier, Transport};
use crate::reader::Reader;
use crate::text::Text;
use crate::DecodeWarning;

/// The request.
pub const REQUEST: [u8; 8] = [0x01, 0x00, 0xFB, 0x01, 0xF5, 0x03, 0xFB, 0x05];
/// The first bytes of a reply.
pub const REPLY_HEADER: [u8; 4] = [0x01, 0x00, 0xFB, 0x01];
/// The default port (game and query).
pub const DEFAULT_PORT: u16 = 36963;

/// CS2D's entry (see [`Entry`]): its 8-byte request and the replies that start like it.
pub const ENTRY: Entry = Entry {
    aliases: &["c2d", "counterstrike2d"],
    help: "CS2D (port 36963): `01 00 FB 01 F5 03 FB 05`, answered by the flags, name, map, \
        players, bots and the player list.",
    auto: false,
    default_port: Some(DEFAULT_PORT),
    signatures: &[Signature {
        tier: Tier::Magic,
        matches: |d| d.starts_with(&REPLY_HEADER) && d.len() > REPLY_HEADER.len(),
    }],
    ..Entry::new("cs2d", "CS2D", Transport::Datagram)
};

/// One player of the list.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
#[non_exhaustive]
pub struct Player {
    /// The player's id on the server.
    pub id: u8,
    /// The name.
    pub name: Text,
    /// The team (1 terrorists, 2 counter-terrorists, 0 spectators).
    pub team: u8,
    /// The score.
    pub score: i32,
    /// Deaths.
    pub deaths: u32,
}

/// A decoded reply, every field as sent.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
#[non_exhaustive]
pub struct Reply {
    /// The first flags byte.
    pub flags: u8,
    /// The server's name.
    pub name: Text,
    /// The map.
    pub map: Text,
    /// Players.
    pub players: u8,
    /// Max players.
    pub max_players: u8,
    /// The game mode (0 standard, 1 deathmatch, 2 team deathmatch, 3 construction,
    /// 4 zombies), when flag bit 5 says it is sent.
    pub game_mode: Option<u8>,
    /// Bots.
    pub bots: u8,
    /// The second flags byte.
    pub flags2: u8,
    /// The 2 bytes before the player list (`FB 05`, the request's player-list code), as
    /// sent.
    pub list_tag: [u8; 2],
    /// The player list, when sent.
    pub player_list: Option<Vec<Player>>,
    /// What was noticed while decoding.
    pub warnings: Vec<DecodeWarning>,
}

/// Reads a reply.
pub fn decode_reply(datagram: &[u8]) -> Result<Reply, DecodeError> {
    let mut r = Reader::new(datagram);
    if r.array::<4>("header")? != REPLY_HEADER {
        return Err(DecodeError::new(0, "header", DecodeErrorKind::BadMagic));
    }
    let mut s = Strings::default();
    let flags = r.u8("flags")?;
    let mut reply = Reply {
        flags,
        name: s.pstr8(&mut r, "name")?,
        map: s.pstr8(&mut r, "map")?,
        players: r.u8("players")?,
        max_players: r.u8("max players")?,
        game_mode: if flags & 0x20 != 0 {
            Some(r.u8("game mode")?)
        } else {
            None
        },
        bots: r.u8("bots")?,
        flags2: r.u8("flags2")?,
        ..Reply::default()
    };
    if !r.is_empty() {
        reply.list_tag = r.array("player list header")?;
        let count = r.u8("player count")?;
        let mut list = Vec::with_capacity(usize::from(count).min(r.remaining() / 11));
        for _ in 0..count {
            list.push(Player {
                id: r.u8("player id")?,
                name: s.pstr8(&mut r, "player name")?,
                team: r.u8("player team")?,
                score: r.i32_le("player score")?,
                deaths: r.u32_le("player deaths")?,
            });
        }
        reply.player_list = Some(list);
    }
    if !r.is_empty() {
        reply.warnings.push(DecodeWarning {
            offset: r.offset(),
            field: "trailing bytes",
            message: "bytes after the player list ignored",
        });
    }
    reply.warnings.extend(s.warnings());
    Ok(reply)
}

impl Reply {
    /// Writes the reply as a server sends it (tests and replays); strings longer than
    /// 255 bytes are cut.
    pub fn encode(&self, out: &mut Vec<u8>) {
        out.extend_from_slice(&REPLY_HEADER);
        out.push(self.flags);
        put_pstr8(out, &self.name);
        put_pstr8(out, &self.map);
        out.extend_from_slice(&[self.players, self.max_players]);
        if self.flags & 0x20 != 0 {
            out.push(self.game_mode.unwrap_or(0));
        }
        out.extend_from_slice(&[self.bots, self.flags2]);
        if let Some(list) = &self.player_list {
            out.extend_from_slice(&self.list_tag);
            out.push(u8::try_from(list.len()).unwrap_or(u8::MAX));
            for p in list.iter().take(usize::from(u8::MAX)) {
                out.push(p.id);
                put_pstr8(out, &p.name);
                out.push(p.team);
                out.extend_from_slice(&p.score.to_le_bytes());
                out.extend_from_slice(&p.deaths.to_le_bytes());
            }
        }
    }
}
