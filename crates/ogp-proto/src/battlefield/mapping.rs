//! A Frostbite server's answers (`serverInfo`, `version`, `listPlayers all`) to the
//! shared [`Status`].
//!
//! | Status field | from |
//! |---|---|
//! | `game_name` | the game `version` names (`BC2` Battlefield: Bad Company 2, `BF3`, `BF4`, `BFHL` Battlefield Hardline, `MOH`, `MOHW`…; as sent when unknown), else the `serverInfo` layout |
//! | `game_version` | `version`'s build number |
//! | `host_name`, `player_count`, `slot_max`, `game_type`, `map` | server name, players, max players, game mode, map |
//! | `password`, `uptime_seconds` | its password word, its uptime |
//! | `server_type` | dedicated (Frostbite servers are) |
//! | `teams` | one per team score: `Team N`, its score rounded (the score as sent in `extra.score`) |
//! | `players` | each row of `listPlayers`: `name`, `score`, `kills`, `deaths`, `ping` (BF4 and later), `team` (`teamId` 1… as 0…; 0, neutral, none); the other fields (`clanTag`, `guid`, `squadId`, `rank`, `type`) in `extra` |
//! | `rules` | `layout`, `rounds_played`, `rounds_total`, `target_score`, `online_state`, `ranked`, `punkbuster`, `round_time`, `game_mod`, `map_pack`, `game_address`, `punkbuster_version`, `join_queue`, `region`, `ping_site`, `country`, `matchmaking`, `blaze_player_count`, `blaze_game_state`, `extra_N`: those sent |

use super::wire::{Layout, PlayerTable, ServerInfo};
use crate::model::{MapInfo, Player, Rules, ServerType, Team, Text};
use crate::Status;

/// The game a `version` answer names.
pub fn game_name(version_game: Option<&str>, layout: Layout) -> Option<Text> {
    let known = match version_game {
        Some("BC2") => "Battlefield: Bad Company 2",
        Some("BF3") => "Battlefield 3",
        Some("BF4") => "Battlefield 4",
        Some("BFHL" | "BFH") => "Battlefield Hardline",
        Some("BF1" | "TUNGUSKA") => "Battlefield 1",
        Some("MOH") => "Medal of Honor",
        Some("MOHW") => "Medal of Honor: Warfighter",
        Some("VU") => "Venice Unleashed",
        Some(other) if !other.is_empty() => return Some(other.into()),
        _ => match layout {
            Layout::BadCompany2 => "Battlefield: Bad Company 2",
            Layout::Bf3 => "Battlefield 3",
            Layout::Bf4 => "Battlefield 4",
            Layout::Common => "Battlefield",
        },
    };
    Some(known.into())
}

fn b(v: bool) -> String {
    if v { "true" } else { "false" }.to_owned()
}

/// The status the answers describe (`players`: `None` when `listPlayers` was not
/// answered).
pub fn to_status(
    s: &ServerInfo,
    version: (Option<&str>, Option<&str>),
    players: Option<&PlayerTable>,
) -> Status {
    let mut rules: Vec<(Text, Text)> = Vec::with_capacity(24);
    let mut rule = |k: &str, v: String| rules.push((k.into(), v.into()));
    rule("layout", s.layout.name().to_owned());
    rule("rounds_played", s.rounds_played.to_string());
    rule("rounds_total", s.rounds_total.to_string());
    rule("target_score", s.target_score.to_string());
    rule("online_state", s.online_state.to_string());
    for (k, v) in [
        ("ranked", s.ranked),
        ("punkbuster", s.punkbuster),
        ("join_queue", s.join_queue),
        ("matchmaking", s.matchmaking),
    ] {
        if let Some(v) = v {
            rule(k, b(v));
        }
    }
    if let Some(t) = s.round_time {
        rule("round_time", t.to_string());
    }
    for (k, v) in [
        ("game_mod", &s.game_mod),
        ("map_pack", &s.map_pack),
        ("game_address", &s.game_address),
        ("punkbuster_version", &s.punkbuster_version),
        ("region", &s.region),
        ("ping_site", &s.ping_site),
        ("country", &s.country),
        ("blaze_game_state", &s.blaze_game_state),
    ] {
        if let Some(v) = v {
            rule(k, v.to_string());
        }
    }
    if let Some(n) = s.blaze_player_count {
        rule("blaze_player_count", n.to_string());
    }
    for (i, x) in s.extra.iter().enumerate() {
        rule(&format!("extra_{i}"), x.to_string());
    }
    let teams = s
        .team_scores
        .iter()
        .enumerate()
        .map(|(i, score)| {
            let mut t = Team::named(format!("Team {}", i + 1));
            t.score = score
                .trim()
                .parse::<f64>()
                .ok()
                .filter(|f| f.is_finite())
                .map(|f| f.round().clamp(f64::from(i32::MIN), f64::from(i32::MAX)) as i32);
            t.extra.insert("score".into(), score.clone());
            t
        })
        .collect::<Vec<_>>();
    Status {
        game_name: game_name(version.0, s.layout),
        game_version: version.1.filter(|v| !v.is_empty()).map(Text::from),
        host_name: Some(s.name.clone()),
        player_count: Some(s.players),
        slot_max: Some(s.max_players),
        game_type: Some(s.game_mode.clone()).filter(|m| !m.is_empty()),
        map: Some(&s.map)
            .filter(|m| !m.is_empty())
            .map(|m| MapInfo::named(m.clone())),
        password: s.password,
        uptime_seconds: s.uptime,
        server_type: Some(ServerType::Dedicated),
        teams: Some(teams).filter(|t| !t.is_empty()),
        players: players.map(players_of),
        rules: Some(Rules(rules)),
        ..Status::default()
    }
}

fn players_of(t: &PlayerTable) -> Vec<Player> {
    t.rows
        .iter()
        .map(|row| {
            let mut p = Player::default();
            let num = |f: &str| t.get(row, f).and_then(|v| v.trim().parse::<i64>().ok());
            for (field, value) in t.fields.iter().zip(row) {
                match field.as_str() {
                    "name" => p.name = Some(value.clone()),
                    "score" => p.score = num("score").and_then(|v| i32::try_from(v).ok()),
                    "kills" => p.kills = num("kills").and_then(|v| u32::try_from(v).ok()),
                    "deaths" => p.deaths = num("deaths").and_then(|v| u32::try_from(v).ok()),
                    "ping" => p.ping = num("ping").and_then(|v| u32::try_from(v).ok()),
                    "teamId" => {
                        p.team = num("teamId")
                            .filter(|&v| v >= 1)
                            .and_then(|v| i32::try_from(v - 1).ok());
                        p.extra.insert(field.clone(), value.clone());
                    }
                    _ => {
                        p.extra.insert(field.clone(), value.clone());
                    }
                }
            }
            p
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::battlefield::wire::{decode_players, decode_server_info, tests::texts};

    #[test]
    fn fields() {
        let s = decode_server_info(&texts(&[
            "OK",
            "srv",
            "1",
            "16",
            "RushLarge0",
            "MP_001",
            "0",
            "2",
            "2",
            "168",
            "2277.6",
            "0",
            "",
            "false",
            "false",
            "true",
            "100",
            "50",
        ]))
        .unwrap();
        let t = decode_players(&texts(&[
            "OK", "4", "name", "teamId", "kills", "ping", "1", "bob", "2", "7", "65",
        ]))
        .unwrap();
        let st = to_status(&s, (Some("BF3"), Some("1149977")), Some(&t));
        assert_eq!(st.game_name.as_deref(), Some("Battlefield 3"));
        assert_eq!(st.game_version.as_deref(), Some("1149977"));
        assert_eq!(st.password, Some(true));
        let teams = st.teams.unwrap();
        assert_eq!(teams[1].score, Some(2278));
        assert_eq!(
            teams[1].extra.get("score").map(Text::as_str),
            Some("2277.6")
        );
        let p = &st.players.unwrap()[0];
        assert_eq!(p.name.as_deref(), Some("bob"));
        assert_eq!((p.team, p.kills, p.ping), (Some(1), Some(7), Some(65)));
        assert_eq!(st.rules.unwrap().get("punkbuster"), Some("false"));
    }
}
