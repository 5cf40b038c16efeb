//! An OpenTTD game info to the shared [`Status`].
//!
//! | Status field | from |
//! |---|---|
//! | `game_name` | `OpenTTD` |
//! | `host_name` | the server name |
//! | `game_version` | the server revision |
//! | `password` | whether joining needs a password |
//! | `player_count`, `slot_max` | clients connected, most clients |
//! | `server_type` | dedicated or listen |
//! | `game_type` | the landscape (`temperate`, `arctic`, `tropic`, `toyland`) |
//! | `map` | the map name (format versions before 6; later servers send none) |
//! | `rules` | `version` (of the format), `companies`, `companies_max`, `spectators`, `map_width`, `map_height`, `landscape`, `date`, `start_date` (`YYYY-MM-DD`), `ticks_playing` (7), `gamescript`, `gamescript_version` (5), `newgrfs` (their count, 4), `language` (before 6), `dedicated` |
//!
//! The game info lists no players: OpenTTD names its clients only to those who join.

use super::wire::{date_string, landscape_name, GameInfo};
use crate::model::{MapInfo, Rules, ServerType, Text};
use crate::Status;

/// The status a game info describes.
pub fn game_info_to_status(g: &GameInfo) -> Status {
    let mut rules: Vec<(Text, Text)> = Vec::with_capacity(16);
    let mut rule = |k: &str, v: String| rules.push((k.into(), v.into()));
    rule("version", g.version.to_string());
    if let Some(n) = g.companies_on {
        rule("companies", n.to_string());
    }
    if let Some(n) = g.companies_max {
        rule("companies_max", n.to_string());
    }
    rule("spectators", g.spectators_on.to_string());
    rule("map_width", g.map_width.to_string());
    rule("map_height", g.map_height.to_string());
    rule(
        "landscape",
        landscape_name(g.landscape).map_or_else(|| g.landscape.to_string(), str::to_owned),
    );
    rule("date", date_string(g.date));
    rule("start_date", date_string(g.start_date));
    if let Some(t) = g.ticks_playing {
        rule("ticks_playing", t.to_string());
    }
    if let Some(name) = g.gamescript_name.as_ref().filter(|n| !n.is_empty()) {
        rule("gamescript", name.to_string());
    }
    if let Some(v) = g.gamescript_version.filter(|&v| v != -1) {
        rule("gamescript_version", v.to_string());
    }
    if g.version >= 4 {
        rule("newgrfs", g.grfs.len().to_string());
    }
    if let Some(l) = g.language {
        rule("language", l.to_string());
    }
    rule("dedicated", u8::from(g.dedicated).to_string());
    Status {
        game_name: Some("OpenTTD".into()),
        host_name: Some(g.server_name.clone()),
        game_version: Some(g.server_revision.clone()).filter(|v| !v.is_empty()),
        password: Some(g.password),
        player_count: Some(u32::from(g.clients_on)),
        slot_max: Some(u32::from(g.clients_max)),
        server_type: Some(if g.dedicated {
            ServerType::Dedicated
        } else {
            ServerType::Listen
        }),
        game_type: landscape_name(g.landscape).map(Text::from),
        map: g
            .map_name
            .as_ref()
            .filter(|m| !m.is_empty())
            .map(|m| MapInfo::named(m.clone())),
        rules: Some(Rules(rules)),
        ..Status::default()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fields() {
        let g = GameInfo {
            version: 4,
            server_name: "TTD".into(),
            server_revision: "1.10.3".into(),
            clients_max: 10,
            clients_on: 2,
            map_name: Some("Big Map".into()),
            landscape: 1,
            language: Some(2),
            date: 712_223,
            start_date: 712_223,
            ..GameInfo::default()
        };
        let s = game_info_to_status(&g);
        assert_eq!(s.host_name.as_deref(), Some("TTD"));
        assert_eq!(s.game_version.as_deref(), Some("1.10.3"));
        assert_eq!((s.player_count, s.slot_max), (Some(2), Some(10)));
        assert_eq!(s.map.unwrap().name, "Big Map");
        assert_eq!(s.game_type.as_deref(), Some("arctic"));
        assert_eq!(s.server_type, Some(ServerType::Listen));
        let r = s.rules.unwrap();
        assert_eq!(r.get("date"), Some("1950-01-01"));
        assert_eq!(r.get("newgrfs"), Some("0"));
        assert_eq!(r.get("language"), Some("2"));
        assert_eq!(r.get("ticks_playing"), None);
    }
}
