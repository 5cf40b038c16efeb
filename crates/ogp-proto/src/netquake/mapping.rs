//! NetQuake's server, player and rule replies to the shared [`Status`].
//!
//! | Status field | from |
//! |---|---|
//! | `host_name` | the host name in plain text (`host_name_raw`: as sent, when it differs) |
//! | `map.name` | the map |
//! | `game_name` | `Quake` (network protocol 3) or `Hexen II` (4) |
//! | `player_count`, `slot_max` | the server reply's counts |
//! | `rules` | the rules in the order the server gave them, then `protocol` (the version) |
//!
//! Players: `slot` the slot asked for, `name` in plain text (`name_raw` as sent),
//! `frags` and `score` the frags, `time` the seconds connected (a negative count is left
//! out), `extra` the `topcolor` and `bottomcolor` (shirt and pants: the colours byte's
//! high and low 4 bits). Plain text folds the Quake character set as QuakeWorld's
//! mapping does ([`crate::quakeworld::mapping::plain`]).

use super::wire::{PlayerInfo, ServerInfo};
use crate::model::{MapInfo, Player, Rules};
use crate::quakeworld::mapping::plain;
use crate::text::{decode_utf8_or_latin1, Text};
use crate::Status;

fn text(bytes: &[u8]) -> Text {
    decode_utf8_or_latin1(Err(bytes)).0
}

/// The status of a server reply, its players and rules.
pub fn to_status(
    info: &ServerInfo,
    players: &[PlayerInfo],
    rules: &[(Vec<u8>, Vec<u8>)],
) -> Status {
    let mut s = Status::default();
    let host = text(&info.hostname);
    let p = plain(&host);
    s.host_name_raw = (p != host.as_str()).then(|| host.clone());
    s.host_name = Some(p.into());
    s.map = Some(MapInfo::named(text(&info.map)));
    s.game_name = match info.version {
        3 => Some("Quake".into()),
        4 => Some("Hexen II".into()),
        _ => None,
    };
    s.player_count = Some(u32::from(info.players));
    s.slot_max = Some(u32::from(info.max_players));
    let mut r: Vec<(Text, Text)> = rules.iter().map(|(k, v)| (text(k), text(v))).collect();
    r.push(("protocol".into(), info.version.to_string().into()));
    s.rules = Some(Rules(r));
    if !players.is_empty() || info.players == 0 {
        s.players = Some(players.iter().map(player).collect());
    }
    s
}

fn player(p: &PlayerInfo) -> Player {
    let raw = text(&p.name);
    let name = plain(&raw);
    let mut out = Player::named(name.as_str());
    if name != raw.as_str() {
        out.name_raw = Some(raw);
    }
    out.slot = Some(u32::from(p.slot));
    out.frags = Some(p.frags);
    out.score = Some(p.frags);
    out.time = u32::try_from(p.seconds).ok();
    out.extra
        .insert("topcolor".into(), ((p.colors >> 4) & 15).to_string().into());
    out.extra
        .insert("bottomcolor".into(), (p.colors & 15).to_string().into());
    out
}
