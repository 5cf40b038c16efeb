//! A Doom 3 engine `infoResponse` to the shared [`Status`].
//!
//! | Status field | from |
//! |---|---|
//! | `host_name` (`host_name_raw`) | `si_name`, colour codes stripped (as sent when it had some) |
//! | `game_name` | `gamename` (`baseDOOM-1`, `Q4MP 1.4.2`…), else the dialect's game |
//! | `game_version` | `si_version` |
//! | `game_type` | `si_gameType` |
//! | `map` | `si_map` (ET:QW's `maps/NAME.entities` read as `NAME`) |
//! | `slot_max` | `si_maxPlayers` (an ET:QW TV server: `ri_maxViewers`) |
//! | `password` | `si_usePass` or `si_needPass` (`1`: yes) |
//! | `server_type` | `net_serverDedicated` (`1`: dedicated) |
//! | `players` | one per record: `slot` (the id), `name` (`name_raw`), `ping`, `bot` (ET:QW); `extra["clan"]`, `extra["rate"]` |
//! | `player_count` | ET:QW TV servers: `ri_numViewers`; else the records |
//! | `rules` | every pair as sent, then `protocol` (`major.minor`), `osmask` and ET:QW's `ranked`, `timeleft`, `gamestate`, `servertype`, `interested_clients` |
//!
//! Key names are matched with their case ignored (`si_maxplayers`, `si_maxPlayers`).

use super::wire::{Dialect, InfoResponse};
use crate::model::{MapInfo, Player, Rules, ServerType, Text};
use crate::quake3::color;
use crate::Status;

fn number<T: std::str::FromStr>(v: Option<&Text>) -> Option<T> {
    v.and_then(|s| s.trim().parse().ok())
}

/// ET:QW's `maps/NAME.entities` as `NAME`.
fn map_name(dialect: Dialect, m: &str) -> &str {
    if dialect != Dialect::Etqw {
        return m;
    }
    let m = m.strip_prefix("maps/").unwrap_or(m);
    m.strip_suffix(".entities").unwrap_or(m)
}

/// The status a reply describes.
pub fn info_to_status(r: &InfoResponse) -> Status {
    let mut s = Status::default();
    if let Some(h) = r.rule("si_name") {
        let plain = color::strip(h);
        s.host_name_raw = (plain != h.as_str()).then(|| h.clone());
        s.host_name = Some(plain.into());
    }
    s.game_name = r
        .rule("gamename")
        .filter(|g| !g.is_empty())
        .cloned()
        .or_else(|| {
            Some(
                match r.dialect {
                    Dialect::Doom3 => "Doom 3",
                    Dialect::Quake4 => "Quake 4",
                    Dialect::Etqw => "Enemy Territory: Quake Wars",
                }
                .into(),
            )
        });
    s.game_version = r.rule("si_version").cloned();
    s.game_type = r.rule("si_gameType").filter(|t| !t.is_empty()).cloned();
    s.map = r
        .rule("si_map")
        .filter(|m| !m.is_empty())
        .map(|m| MapInfo::named(map_name(r.dialect, m)));
    let viewers: Option<u32> = number(r.rule("ri_numViewers"));
    s.slot_max = if viewers.is_some() {
        number(r.rule("ri_maxViewers"))
    } else {
        number(r.rule("si_maxPlayers"))
    };
    s.password = r
        .rule("si_usePass")
        .or_else(|| r.rule("si_needPass"))
        .map(|p| p.trim() != "0" && !p.trim().is_empty());
    s.server_type = r.rule("net_serverDedicated").map(|d| {
        if d.trim() == "1" {
            ServerType::Dedicated
        } else {
            ServerType::Listen
        }
    });
    s.player_count = viewers;
    let players = r
        .players
        .iter()
        .map(|p| {
            let plain = color::strip(&p.name);
            let mut out = Player {
                slot: Some(u32::from(p.id)),
                name_raw: (plain != p.name.as_str()).then(|| p.name.clone()),
                name: Some(plain.into()),
                ping: Some(u32::from(p.ping)),
                bot: p.bot,
                ..Player::default()
            };
            if let Some(c) = p.clan.as_ref().filter(|c| !c.is_empty()) {
                out.extra.insert("clan".into(), c.clone());
            }
            if let Some(rate) = p.rate {
                out.extra.insert("rate".into(), rate.to_string().into());
            }
            out
        })
        .collect();
    s.players = Some(players);
    let mut rules = r.rules.clone();
    let mut add = |k: &str, v: String| rules.push((k.into(), v.into()));
    add("protocol", r.protocol_string());
    let t = &r.tail;
    if let Some(m) = t.os_mask {
        add("osmask", format!("0x{m:X}"));
    }
    if let Some(v) = t.ranked {
        add("ranked", u8::from(v).to_string());
    }
    if let Some(v) = t.time_left {
        add("timeleft", v.to_string());
    }
    if let Some(v) = t.game_state {
        add("gamestate", v.to_string());
    }
    if let Some(v) = t.server_type {
        add("servertype", v.to_string());
    }
    if let Some(v) = t.interested_clients {
        add("interested_clients", v.to_string());
    }
    if let Some((a, b)) = t.tv_clients {
        add("tv_clients", a.to_string());
        add("tv_max_clients", b.to_string());
    }
    s.rules = Some(Rules(rules));
    s
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::doom3::wire::tests::sample;

    #[test]
    fn fields() {
        let mut r = sample(Dialect::Etqw);
        r.rules
            .push(("si_map".into(), "maps/slipgate.entities".into()));
        r.rules
            .retain(|(k, v)| k != "si_map" || v.starts_with("maps/"));
        r.rules.push(("si_needPass".into(), "1".into()));
        let s = info_to_status(&r);
        assert_eq!(s.host_name.as_deref(), Some("Red Server"));
        assert_eq!(s.host_name_raw.as_deref(), Some("^1Red ^7Server"));
        assert_eq!(s.map.unwrap().name, "slipgate");
        assert_eq!(s.slot_max, Some(8));
        assert_eq!(s.password, Some(true));
        assert_eq!(s.game_name.as_deref(), Some("Enemy Territory: Quake Wars"));
        let p = s.players.unwrap();
        assert_eq!(p[0].name.as_deref(), Some("Marine"));
        assert_eq!(p[1].bot, Some(true));
        assert_eq!(p[1].slot, Some(3));
        assert_eq!(p[0].extra.get("clan").map(Text::as_str), Some("[ogp]"));
        assert_eq!(s.rules.unwrap().get("protocol"), Some("13.10"));
    }
}
