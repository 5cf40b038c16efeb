//! A Teeworlds reply (either dialect) to the shared [`Status`].
//!
//! | Status field | from |
//! |---|---|
//! | `host_name` | the name |
//! | `game_name` | `Teeworlds` (`DDraceNetwork` when the version names DDNet's, `0.6.4, 16.4`) |
//! | `game_version` | the version |
//! | `game_type` | the game type |
//! | `map` | the map (with DDNet's `iext`: its size) |
//! | `password` | flag `1` |
//! | `player_count`, `slot_max` | the clients and the client slots (spectators count) |
//! | `bot_count` | 0.7: the clients flagged as bots |
//! | `players` | per client: `name`, `score`, `bot`; `extra`: `clan` (when not empty), `country` (ISO 3166-1 numeric, when not -1), `spectator` = `1` for spectators |
//! | `rules` | `version`, `flags`, `num_players`, `max_players`, `num_clients`, `max_clients`; `map_crc` (`iext`, 8 hex digits), `host_name` and `skill_level` (0.7) |

use super::wire::{Client, Info};
use crate::model::{MapInfo, Player, Rules, Text};
use crate::Status;

fn count(v: i64) -> Option<u32> {
    u32::try_from(v).ok()
}

fn player(c: &Client) -> Player {
    let mut p = Player {
        name: Some(c.name.clone()),
        score: Some(c.score),
        bot: c.bot.then_some(true),
        ..Player::default()
    };
    if !c.clan.is_empty() {
        p.extra.insert("clan".into(), c.clan.clone());
    }
    if c.country != -1 {
        p.extra.insert(
            "country".into(),
            compact_str::format_compact!("{}", c.country),
        );
    }
    if !c.player && !c.bot {
        p.extra.insert("spectator".into(), "1".into());
    }
    p
}

/// The status an info reply and the clients of its continuations describe.
pub fn info_to_status(info: &Info, more: &[Client]) -> Status {
    let ddnet = info.version.contains(", ") || info.game_type.contains("DDrace");
    let mut map = MapInfo::named(info.map.clone());
    map.file_size = info.map_size.and_then(|s| u32::try_from(s).ok());
    let clients: Vec<&Client> = info.clients.iter().chain(more).collect();
    let bots = clients.iter().filter(|c| c.bot).count();
    let mut rules: Vec<(Text, Text)> = vec![
        ("version".into(), info.version.clone()),
        ("flags".into(), num(info.flags)),
        ("num_players".into(), num(info.num_players)),
        ("max_players".into(), num(info.max_players)),
        ("num_clients".into(), num(info.num_clients)),
        ("max_clients".into(), num(info.max_clients)),
    ];
    if let Some(crc) = info.map_crc {
        rules.push((
            "map_crc".into(),
            compact_str::format_compact!("{:08x}", crc as u32),
        ));
    }
    if let Some(s) = info.skill_level {
        rules.push(("host_name".into(), info.host_name.clone()));
        rules.push(("skill_level".into(), num(s)));
    }
    Status {
        host_name: Some(info.name.clone()),
        game_name: Some(if ddnet { "DDraceNetwork" } else { "Teeworlds" }.into()),
        game_version: Some(info.version.clone()),
        game_type: (!info.game_type.is_empty()).then(|| info.game_type.clone()),
        map: (!info.map.is_empty()).then_some(map),
        password: Some(info.flags & 1 != 0),
        player_count: count(info.num_clients),
        slot_max: count(info.max_clients),
        bot_count: (info.skill_level.is_some()).then_some(bots as u32),
        players: Some(clients.into_iter().map(player).collect()),
        rules: Some(Rules(rules)),
        ..Status::default()
    }
}

fn num(v: i64) -> Text {
    compact_str::format_compact!("{v}")
}
