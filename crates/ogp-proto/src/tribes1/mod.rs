//! Starsiege: Tribes (Tribes 1, UDP 28001) and Starsiege (2009, UDP 29001,
//! [`starsiege`]): one query, two request bytes; a client each, sans-IO, on the core's
//! one-request shape.
//!
//! The request is 3 bytes: the type (`62` Tribes, `72` Starsiege) and a challenge
//! (`u16`, little-endian). The reply: the type + 1, the challenge echoed, the request
//! type, then the game (`Tribes`…, or `Starsiege`), the version and the name, each a
//! length byte and the text. The game tells the rest:
//!
//! * Tribes: dedicated, password, players, max players (a byte each), the CPU's MHz
//!   (`u16`), the mod, the game type, the map, the MOTD, the team count, the team fields
//!   and the player fields (tab-separated names; each after the first starts with one
//!   extra character, dropped), then per team its name and tab-separated values, per
//!   player ping / 4, loss, team (bytes), the name and the values (`%p`, `%l`, `%t`,
//!   `%n` stand for ping, loss, team and name).
//! * Starsiege: password, dedicated, drop-in, in progress (bytes), players and max
//!   players (`u32`), team play (a byte), the map, the CPU (`u16`), factory vehicles,
//!   tech mix (bytes), six `u32` limits (spawn, frag, time, tech, combat, mass), players
//!   sent (`u32`), then per player a name and a team byte (1 yellow, 2 blue, 4 red,
//!   8 purple) until the end.
//!
//! The decoder is total; it keeps at most [`MAX_PLAYERS`] players and [`MAX_TEAMS`]
//! teams.

pub mod client;
pub mod starsiege;

use crate::client_oneshot::Strings;
use crate::error::{DecodeError, DecodeErrorKind};
use crate::protocol::{Entry, Signature, Tier, Transport};
use crate::reader::Reader;
use crate::text::Text;
use crate::DecodeWarning;

/// Tribes' request type.
pub const TRIBES: u8 = 0x62;
/// Starsiege's request type.
pub const STARSIEGE: u8 = 0x72;
/// Players kept (the rest are counted).
pub const MAX_PLAYERS: usize = 1024;
/// Teams kept.
pub const MAX_TEAMS: usize = 64;

/// Tribes' entry (see [`Entry`]).
pub const ENTRY: Entry = Entry {
    aliases: &["t1s", "tribes", "tbs"],
    help: "Starsiege: Tribes (port 28001): `62` and a challenge, answered by the name, map, \
        teams and players with their fields.",
    auto: false,
    default_port: Some(28001),
    signatures: &[Signature {
        tier: Tier::Weak,
        matches: |d| d.len() > 4 && d.first() == Some(&(TRIBES + 1)) && d.get(3) == Some(&TRIBES),
    }],
    ..Entry::new("tribes1", "Tribes 1", Transport::Datagram)
};

/// The request of `kind` ([`TRIBES`] or [`STARSIEGE`]) with `challenge`.
pub fn request(kind: u8, challenge: u16, out: &mut Vec<u8>) {
    out.push(kind);
    out.extend_from_slice(&challenge.to_le_bytes());
}

/// One player.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
#[non_exhaustive]
pub struct Player {
    /// The name.
    pub name: Text,
    /// The ping in ms (Tribes: the byte × 4).
    pub ping: Option<u32>,
    /// Packet loss (Tribes).
    pub loss: Option<u8>,
    /// The team byte.
    pub team: u8,
    /// Tribes: the player fields and their values.
    pub values: Vec<(Text, Text)>,
}

/// One team (Tribes).
#[derive(Debug, Clone, PartialEq, Eq, Default)]
#[non_exhaustive]
pub struct Team {
    /// The name.
    pub name: Text,
    /// The team fields and their values.
    pub values: Vec<(Text, Text)>,
}

/// A decoded reply.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
#[non_exhaustive]
pub struct Reply {
    /// The request type answered.
    pub kind: u8,
    /// The challenge echoed.
    pub challenge: u16,
    /// The game (`Tribes`, `Starsiege`).
    pub game: Text,
    /// The version.
    pub version: Text,
    /// The server's name.
    pub name: Text,
    /// Whether a password is needed.
    pub password: bool,
    /// Whether it is a dedicated server.
    pub dedicated: bool,
    /// Players.
    pub players: u32,
    /// Max players.
    pub max_players: u32,
    /// The map.
    pub map: Text,
    /// The game type (Tribes) or the mod (Tribes).
    pub game_type: Text,
    /// Other values, by name (the mod, the MOTD, the CPU, the limits…).
    pub rules: Vec<(Text, Text)>,
    /// Teams (Tribes).
    pub teams: Vec<Team>,
    /// Players, at most [`MAX_PLAYERS`].
    pub player_list: Vec<Player>,
    /// What was noticed while decoding.
    pub warnings: Vec<DecodeWarning>,
}

/// The header's length (type, challenge, request type).
pub const HEADER_LEN: usize = 4;

/// A tab-separated field list: each name after the first loses its first character;
/// trimmed, lower case, `team name` and `player name` read as `name`.
fn field_names(s: &str) -> Vec<Text> {
    s.split('\t')
        .enumerate()
        .map(|(i, f)| {
            let f = if i == 0 {
                f
            } else {
                f.get(1..).unwrap_or_default()
            };
            let f = f.trim().to_lowercase();
            if f == "team name" || f == "player name" {
                "name".into()
            } else {
                f.into()
            }
        })
        .collect()
}

/// Reads a reply to a request of `kind`.
pub fn decode_reply(datagram: &[u8], kind: u8) -> Result<Reply, DecodeError> {
    let mut r = Reader::new(datagram);
    let head = r.array::<HEADER_LEN>("header")?;
    if head[0] != kind.wrapping_add(1) || head[3] != kind {
        return Err(DecodeError::new(0, "header", DecodeErrorKind::BadMagic));
    }
    let mut s = Strings::default();
    let mut reply = Reply {
        kind,
        challenge: u16::from_le_bytes([head[1], head[2]]),
        game: s.pstr8(&mut r, "game")?,
        version: s.pstr8(&mut r, "version")?,
        name: s.pstr8(&mut r, "name")?,
        ..Reply::default()
    };
    let rule = reply_rule;
    let mut cut = None;
    if reply.game == "Starsiege" {
        reply.password = r.u8("password")? != 0;
        reply.dedicated = r.u8("dedicated")? != 0;
        let mut rules = vec![
            rule("drop_in", r.u8("drop-in")?.to_string()),
            rule("in_progress", r.u8("in progress")?.to_string()),
        ];
        reply.players = r.u32_le("players")?;
        reply.max_players = r.u32_le("max players")?;
        rules.push(rule("team_play", r.u8("team play")?.to_string()));
        reply.map = s.pstr8(&mut r, "map")?;
        rules.push(rule("cpu", r.u16_le("cpu")?.to_string()));
        rules.push(rule(
            "factory_vehicles",
            r.u8("factory vehicles")?.to_string(),
        ));
        rules.push(rule("tech_mix", r.u8("tech mix")?.to_string()));
        for k in [
            "spawn_limit",
            "frag_limit",
            "time_limit",
            "tech_limit",
            "combat_limit",
            "mass_limit",
        ] {
            rules.push(rule(k, r.u32_le("limit")?.to_string()));
        }
        rules.push(rule("players_sent", r.u32_le("players sent")?.to_string()));
        reply.rules = rules;
        while !r.is_empty() {
            let at = r.offset();
            let name = s.pstr8(&mut r, "player name")?;
            let team = r.u8("player team")?;
            if reply.player_list.len() < MAX_PLAYERS {
                reply.player_list.push(Player {
                    name,
                    team,
                    ..Player::default()
                });
            } else {
                cut.get_or_insert(at);
            }
        }
    } else {
        reply.dedicated = r.u8("dedicated")? != 0;
        reply.password = r.u8("password")? != 0;
        reply.players = r.u8("players")?.into();
        reply.max_players = r.u8("max players")?.into();
        let cpu = r.u16_le("cpu")?;
        let mod_name = s.pstr8(&mut r, "mod")?;
        reply.game_type = s.pstr8(&mut r, "game type")?;
        reply.map = s.pstr8(&mut r, "map")?;
        let motd = s.pstr8(&mut r, "motd")?;
        reply.rules = vec![
            rule("cpu", cpu.to_string()),
            rule("mod", mod_name.to_string()),
            rule("motd", motd.to_string()),
        ];
        let team_count = r.u8("team count")?;
        let team_fields = field_names(&s.pstr8(&mut r, "team fields")?);
        let player_fields = field_names(&s.pstr8(&mut r, "player fields")?);
        for _ in 0..team_count {
            let name = s.pstr8(&mut r, "team name")?;
            let values = s.pstr8(&mut r, "team values")?;
            let values = pair(&team_fields, &values, |v| (v == "%t").then(|| name.clone()));
            if reply.teams.len() < MAX_TEAMS {
                reply.teams.push(Team { name, values });
            }
        }
        for _ in 0..reply.players {
            let at = r.offset();
            let ping = u32::from(r.u8("player ping")?) * 4;
            let loss = r.u8("player loss")?;
            let team = r.u8("player team")?;
            let name = s.pstr8(&mut r, "player name")?;
            let values = s.pstr8(&mut r, "player values")?;
            let values = pair(&player_fields, &values, |v| match v {
                "%p" => Some(ping.to_string().into()),
                "%l" => Some(loss.to_string().into()),
                "%t" => Some(team.to_string().into()),
                "%n" => Some(name.clone()),
                _ => None,
            });
            if reply.player_list.len() < MAX_PLAYERS {
                reply.player_list.push(Player {
                    name,
                    ping: Some(ping),
                    loss: Some(loss),
                    team,
                    values,
                });
            } else {
                cut.get_or_insert(at);
            }
        }
    }
    if let Some(offset) = cut {
        reply.warnings.push(DecodeWarning {
            offset,
            field: "player",
            message: "players past the cap dropped",
        });
    }
    reply.warnings.extend(s.warnings());
    Ok(reply)
}

fn reply_rule(k: &str, v: String) -> (Text, Text) {
    (k.into(), v.into())
}

/// Fields paired with the tab-separated `values` (as many as both have), each value
/// trimmed and `subst` applied.
fn pair(fields: &[Text], values: &str, subst: impl Fn(&str) -> Option<Text>) -> Vec<(Text, Text)> {
    fields
        .iter()
        .zip(values.split('\t'))
        .map(|(f, v)| {
            let v = v.trim();
            (f.clone(), subst(v).unwrap_or_else(|| v.into()))
        })
        .collect()
}
