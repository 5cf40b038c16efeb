//! The Unreal 2 replies to the shared [`Status`].
//!
//! | Status field | from |
//! |---|---|
//! | `host_name` | the server name, colour codes (`1B RR GG BB`) and controls stripped |
//! | `host_name_raw` | the server name as sent, when it has colour codes |
//! | `map.name` | the map, colour codes stripped |
//! | `game_type` | the game type (`xDeathMatch`, `KFGameType`…) |
//! | `game_version` | the `ServerVersion` rule |
//! | `connect_port` | the game port (when it is a port) |
//! | `player_count`, `slot_max` | players, maximum players (the information's count: a players reply may list fewer) |
//! | `password` | the `GamePassword` rule (`True`/`False`) |
//! | `rules` | every rule as sent (`Mutator` repeats), then the information tail as `ping`, `flags`, `skill` and Killing Floor's `wave_current`, `wave_total` when sent |
//! | `addons` | each `Mutator` rule, as a mutator |
//! | `players` | the players reply's entries with an id (0 is a scoreboard line): `name` stripped, `name_raw` as sent when it has colour codes, `id`, `ping`, `score`, `bot` when the ping is 0, `extra["stats_id"]` when not 0 |
//!
//! Killing Floor lays the information tail out with two wave counts first: it is read
//! so when the rules name the `KillingFloorMut` mutator, carry `Num trader weapons`, or
//! say `ServerVersion` 1065 (the facts gamedig uses), else by the layout that leaves
//! fewer bytes unread ([`Info::extra`]).

use super::wire::{has_colors, strip_colors, Info, PlayerEntry};
use crate::model::{AddOn, MapInfo, Player, Rules};
use crate::text::Text;
use crate::Status;

fn rule<'a>(rules: &'a [(Text, Text)], key: &str) -> Option<&'a str> {
    rules
        .iter()
        .find(|(k, _)| k.eq_ignore_ascii_case(key))
        .map(|(_, v)| v.as_str())
}

/// Whether the rules are Killing Floor's (`None`: no rules to tell).
pub fn is_killing_floor(rules: Option<&[(Text, Text)]>) -> Option<bool> {
    let rules = rules?;
    Some(
        rules
            .iter()
            .any(|(k, v)| k.eq_ignore_ascii_case("mutator") && v == "KillingFloorMut")
            || rule(rules, "Num trader weapons").is_some()
            || rule(rules, "ServerVersion") == Some("1065"),
    )
}

/// The status of the replies a query got.
pub fn to_status(
    info: Option<&Info>,
    rules: Option<&[(Text, Text)]>,
    players: Option<&[PlayerEntry]>,
) -> Status {
    let mut s = Status::default();
    if let Some(i) = info {
        let plain = strip_colors(&i.server_name);
        if has_colors(&i.server_name) {
            s.host_name_raw = Some(i.server_name.clone());
        }
        s.host_name = Some(plain.into());
        s.map = Some(MapInfo::named(strip_colors(&i.map)));
        if !i.game_type.is_empty() {
            s.game_type = Some(i.game_type.clone());
        }
        s.connect_port = u16::try_from(i.game_port).ok().filter(|p| *p != 0);
        s.player_count = u32::try_from(i.players).ok();
        s.slot_max = u32::try_from(i.max_players).ok();
    }
    let mut out_rules: Vec<(Text, Text)> = Vec::new();
    if let Some(r) = rules {
        out_rules.extend(r.iter().cloned());
        if let Some(v) = rule(r, "ServerVersion") {
            s.game_version = Some(v.into());
        }
        if let Some(p) = rule(r, "GamePassword") {
            s.password = Some(p.trim().eq_ignore_ascii_case("true"));
        }
        let mutators: Vec<AddOn> = r
            .iter()
            .filter(|(k, _)| k.eq_ignore_ascii_case("mutator"))
            .map(|(_, v)| {
                let mut a = AddOn::named(v.as_str());
                a.mutator = Some(true);
                a
            })
            .collect();
        if !mutators.is_empty() {
            s.addons = Some(mutators);
        }
    }
    if let Some(i) = info {
        let e = i.extra(is_killing_floor(rules));
        let num = |v: i32| Text::from(v.to_string());
        if let Some((w, t)) = e.waves {
            out_rules.push(("wave_current".into(), num(w)));
            out_rules.push(("wave_total".into(), num(t)));
        }
        if let Some(p) = e.ping {
            out_rules.push(("ping".into(), num(p)));
        }
        if let Some(f) = e.flags {
            out_rules.push(("flags".into(), num(f)));
        }
        if let Some(k) = e.skill {
            out_rules.push(("skill".into(), strip_colors(&k).into()));
        }
    }
    if rules.is_some() || info.is_some() {
        s.rules = Some(Rules(out_rules));
    }
    if let Some(p) = players {
        let list: Vec<Player> = p.iter().filter(|e| e.id != 0).map(player).collect();
        s.players = Some(list);
    }
    s
}

fn player(e: &PlayerEntry) -> Player {
    let mut p = Player::named(strip_colors(&e.name));
    if has_colors(&e.name) {
        p.name_raw = Some(e.name.clone());
    }
    p.id = Some(e.id);
    p.ping = Some(e.ping);
    p.score = Some(e.score);
    p.bot = Some(e.ping == 0);
    if e.stats_id != 0 {
        p.extra
            .insert("stats_id".into(), e.stats_id.to_string().into());
    }
    p
}
