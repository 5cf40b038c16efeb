//! The Build and Shoot query as a machine of the client core's HTTP-JSON shape
//! (`client_http`): `GET /json` on the status server's port; no I/O, time passed in.
//!
//! The document is piqueserver's status JSON (`piqueserver/statusserver.py`). Its
//! mapping:
//!
//! | key | status |
//! |---|---|
//! | `serverName` | `host_name` |
//! | `serverVersion` | `game_version` |
//! | `gameMode` | `game_type` (`ctf`, `tc`…) |
//! | `map.name` | `map` (`map.version`, `map.author` in `rules`) |
//! | `maxPlayers` (or, in older servers, `players.maxPlayers`) | `slot_max` |
//! | `players` | `players` and `player_count`: a list of players, or (older servers) `{"blue": [...], "green": [...]}` by team (`team` 0 blue, 1 green); a player is a name or an object: `name`, `kills`, `latency` (`ping`), `team` (its name, in `class`); at most [`MAX_PLAYERS`] |
//! | `serverIdentifier`, `serverUptime` (seconds), `scores.currentBlueScore`, `scores.currentGreenScore`, `scores.maxScore` | `rules`; the uptime also `uptime_seconds` |
//!
//! `game_name` is `Ace of Spades`.

use std::fmt;

use serde::de::{Deserializer, MapAccess, SeqAccess, Visitor};
use serde::Deserialize;

use crate::bounded::MAX_LIST_ENTRIES;
use crate::client_http::{
    http_json_query, required, rules_of, Capped, Document, Listed, NoOptions, Object, OneDoc,
    OneDocument, Scalar, HEAD_LIMIT,
};
use crate::http::HttpLimits;
use crate::model::{MapInfo, Player};
use crate::text::Text;
use crate::Status;

/// The default port (the status server's: the game port 32887 − 1).
pub const DEFAULT_PORT: u16 = 32886;
/// The body, at most (32 players' entries are a few KB).
pub const MAX_BODY: usize = 256 * 1024;
/// Players kept per list (the rest are counted).
pub const MAX_PLAYERS: usize = MAX_LIST_ENTRIES;

const DOCUMENTS: [Document; 1] = [required("/json", HttpLimits::new(HEAD_LIMIT, MAX_BODY))];

/// No settings of its own.
pub type QueryOptions = NoOptions;

/// What a Build and Shoot answer says beyond the status.
pub type Details = Listed;

/// A player's object.
#[derive(Debug, Clone, Default, PartialEq, Eq, Deserialize)]
#[serde(default)]
pub struct PlayerFields {
    /// `name`.
    pub name: Scalar,
    /// `kills`.
    pub kills: Scalar,
    /// `latency` (ms).
    pub latency: Scalar,
    /// `team` (its name: `Blue`, `Green`, `Spectator`).
    pub team: Scalar,
}

/// A player: a name, or an object.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct PlayerEntry(pub PlayerFields);

impl<'de> Deserialize<'de> for PlayerEntry {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = PlayerEntry;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("a name or a player object")
            }
            fn visit_str<E>(self, v: &str) -> Result<PlayerEntry, E> {
                Ok(PlayerEntry(PlayerFields {
                    name: Scalar(Some(v.to_owned())),
                    ..PlayerFields::default()
                }))
            }
            fn visit_map<A: MapAccess<'de>>(self, map: A) -> Result<PlayerEntry, A::Error> {
                PlayerFields::deserialize(serde::de::value::MapAccessDeserializer::new(map))
                    .map(PlayerEntry)
            }
        }
        d.deserialize_any(V)
    }
}

/// The older layout of `players`: by team.
#[derive(Debug, Clone, Default, PartialEq, Eq, Deserialize)]
#[serde(default, rename_all = "camelCase")]
pub struct ByTeam {
    /// `blue`.
    pub blue: Capped<PlayerEntry, MAX_PLAYERS>,
    /// `green`.
    pub green: Capped<PlayerEntry, MAX_PLAYERS>,
    /// `maxPlayers`.
    pub max_players: Scalar,
}

/// `players`: a list, or the lists by team.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Players {
    /// A list (current servers).
    List(Capped<PlayerEntry, MAX_PLAYERS>),
    /// By team (older servers).
    ByTeam(ByTeam),
}

impl<'de> Deserialize<'de> for Players {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = Players;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("a list of players or an object of teams")
            }
            fn visit_seq<A: SeqAccess<'de>>(self, seq: A) -> Result<Players, A::Error> {
                Capped::deserialize(serde::de::value::SeqAccessDeserializer::new(seq))
                    .map(Players::List)
            }
            fn visit_map<A: MapAccess<'de>>(self, map: A) -> Result<Players, A::Error> {
                ByTeam::deserialize(serde::de::value::MapAccessDeserializer::new(map))
                    .map(Players::ByTeam)
            }
        }
        d.deserialize_any(V)
    }
}

/// `map`.
#[derive(Debug, Clone, Default, PartialEq, Eq, Deserialize)]
#[serde(default)]
pub struct Map {
    /// `name`.
    pub name: Scalar,
    /// `version`.
    pub version: Scalar,
    /// `author`.
    pub author: Scalar,
}

/// `scores`.
#[derive(Debug, Clone, Default, PartialEq, Eq, Deserialize)]
#[serde(default, rename_all = "camelCase")]
pub struct Scores {
    /// `currentBlueScore`.
    pub current_blue_score: Scalar,
    /// `currentGreenScore`.
    pub current_green_score: Scalar,
    /// `maxScore`.
    pub max_score: Scalar,
}

/// The `/json` document.
#[derive(Debug, Clone, Default, PartialEq, Eq, Deserialize)]
#[serde(default, rename_all = "camelCase")]
pub struct StatusJson {
    /// `serverIdentifier`.
    pub server_identifier: Scalar,
    /// `serverName`.
    pub server_name: Option<Scalar>,
    /// `serverVersion`.
    pub server_version: Scalar,
    /// `serverUptime` (seconds, a float).
    pub server_uptime: Scalar,
    /// `gameMode`.
    pub game_mode: Scalar,
    /// `map`.
    pub map: Option<Object<Map>>,
    /// `players`.
    pub players: Option<Players>,
    /// `maxPlayers`.
    pub max_players: Scalar,
    /// `scores`.
    pub scores: Option<Object<Scores>>,
}

impl StatusJson {
    /// The players, each with its team number (by-team lists), and how many were listed.
    fn players(&self) -> Option<Capped<Player, MAX_PLAYERS>> {
        let (lists, teams): (Vec<&Capped<PlayerEntry, MAX_PLAYERS>>, Vec<Option<i32>>) =
            match self.players.as_ref()? {
                Players::List(l) => (vec![l], vec![None]),
                Players::ByTeam(t) => (vec![&t.blue, &t.green], vec![Some(0), Some(1)]),
            };
        let mut out = Capped::default();
        for (list, team) in lists.into_iter().zip(teams) {
            for e in &list.kept {
                if out.kept.len() < MAX_PLAYERS {
                    out.kept.push(e.to_player(team));
                }
            }
            out.total = out.total.saturating_add(list.total);
        }
        Some(out)
    }
}

impl PlayerEntry {
    fn to_player(&self, team: Option<i32>) -> Player {
        let f = &self.0;
        Player {
            name: f.name.as_str().map(Text::from),
            kills: f.kills.number(),
            ping: f.latency.number(),
            class: f.team.as_str().map(Text::from),
            team: team.or_else(|| match f.team.as_str() {
                Some("Blue") => Some(0),
                Some("Green") => Some(1),
                Some("Spectator") => Some(-2),
                _ => None,
            }),
            ..Player::default()
        }
    }
}

/// The status the document says (see the module's documentation).
pub fn to_status(d: &StatusJson) -> Status {
    let map = d.map.as_ref().map(|m| &m.0);
    let scores = d.scores.as_ref().map(|s| &s.0);
    let players = d.players();
    let by_team_max = match d.players.as_ref() {
        Some(Players::ByTeam(t)) => t.max_players.number(),
        _ => None,
    };
    let none = Scalar::default();
    Status {
        game_name: Some(Text::from("Ace of Spades")),
        host_name: d
            .server_name
            .as_ref()
            .and_then(Scalar::as_str)
            .map(Text::from),
        game_version: d.server_version.as_str().map(Text::from),
        game_type: d.game_mode.as_str().map(Text::from),
        map: map.and_then(|m| m.name.as_str()).map(MapInfo::named),
        slot_max: d.max_players.number().or(by_team_max),
        player_count: players.as_ref().and_then(|p| u32::try_from(p.total).ok()),
        uptime_seconds: d
            .server_uptime
            .number::<f64>()
            .and_then(|u| Scalar::round(u.floor())),
        players: players.map(|p| p.kept),
        rules: Some(rules_of(&[
            ("serverIdentifier", &d.server_identifier),
            ("serverUptime", &d.server_uptime),
            ("map.version", map.map_or(&none, |m| &m.version)),
            ("map.author", map.map_or(&none, |m| &m.author)),
            (
                "scores.currentBlueScore",
                scores.map_or(&none, |s| &s.current_blue_score),
            ),
            (
                "scores.currentGreenScore",
                scores.map_or(&none, |s| &s.current_green_score),
            ),
            ("scores.maxScore", scores.map_or(&none, |s| &s.max_score)),
        ])),
        ..Status::default()
    }
}

impl OneDoc for StatusJson {
    fn documents() -> &'static [Document; 1] {
        &DOCUMENTS
    }

    fn refused(&self) -> Option<&'static str> {
        self.server_name
            .is_none()
            .then_some("no serverName: not a Build and Shoot status server")
    }

    fn answer(&self, warnings: &mut Vec<String>) -> (Status, Details) {
        let details = Listed::of(self.players().as_ref(), "/json", warnings);
        (to_status(self), details)
    }
}

http_json_query!(Buildandshoot, OneDocument<StatusJson>, |_| {
    OneDocument::default()
});

#[cfg(test)]
mod tests {
    use super::*;
    use crate::client_http::parse_json;

    #[test]
    fn both_layouts_and_names_or_objects() {
        let d: StatusJson = parse_json(
            br#"{"serverName":"old","players":{"blue":["a",{"name":"b","kills":3}],"green":["c"],"maxPlayers":12}}"#,
            "/json",
        )
        .unwrap();
        let s = to_status(&d);
        assert_eq!(s.slot_max, Some(12));
        assert_eq!(s.player_count, Some(3));
        let p = s.players.unwrap();
        assert_eq!(p[1].kills, Some(3));
        assert_eq!((p[0].team, p[2].team), (Some(0), Some(1)));
        let d: StatusJson = parse_json(
            br#"{"serverName":"new","maxPlayers":32,"serverUptime":-4,"players":[{"name":"x","team":"Green","latency":"slow"}]}"#,
            "/json",
        )
        .unwrap();
        let s = to_status(&d);
        let p = s.players.unwrap();
        assert_eq!((p[0].team, p[0].ping), (Some(1), None));
        assert_eq!(s.uptime_seconds, None);
        assert!(parse_json::<StatusJson>(br#"{"players":7}"#, "/json").is_err());
    }
}
