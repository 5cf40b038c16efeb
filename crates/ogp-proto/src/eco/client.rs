//! The Eco query as a machine of the client core's HTTP-JSON shape (`client_http`):
//! `GET /frontpage` on the web port, no I/O, time passed in.
//!
//! The document is `{"Info": {…}, "Graphs": […]}`; only `Info` is kept (the graphs
//! are skipped without being held). Its mapping:
//!
//! | `Info` key | status |
//! |---|---|
//! | `Description` | `host_name` without Unity's rich-text tags (`<b>`, `<color=#f00>`, `<#0000FE>`, …), the raw text in `host_name_raw` |
//! | `OnlinePlayers` | `player_count` |
//! | `TotalPlayers` | `slot_max`, as gamedig reads it (Eco has no slot limit; this is the players the world has seen) |
//! | `HasPassword` | `password` |
//! | `GamePort` | `connect_port` |
//! | `Version` | `game_version` |
//! | `OnlinePlayersNames` | `players` (names), at most [`MAX_PLAYERS`] |
//! | `Category`, `Language`, `WorldSize`, `DetailedDescription`, `EconomyDesc`, `Laws`, `Animals`, `Plants`, `IsLAN`, `AdminOnline`, `HasMeteor`, `Leader`, `WorldObjective`, `SkillSpecialization`, `TimeSinceStart`, `TimeLeft`, `WebPort`, `UniqueIdentifier` | `rules`, those sent, in this order |
//!
//! `game_name` is `Eco`.

use std::time::Instant;

use serde::Deserialize;

use crate::bounded::MAX_LIST_ENTRIES;
use crate::client_core::Timing;
use crate::client_http::{
    http_json_driver, parse_json, Capped, Document, HttpJson, HttpMachine, Object, Scalar,
};
use crate::error::DecodeError;
use crate::http::HttpLimits;
use crate::model::{Player, Rules};
use crate::protocol::Protocol;
use crate::text::Text;
use crate::Status;

/// The default port (the web port: the game port 3000 + 1).
pub const DEFAULT_PORT: u16 = 3001;
/// The head of a response, at most.
pub const MAX_HEAD: usize = 8 * 1024;
/// `/frontpage`'s body, at most (real ones are about 6 KB, mostly graph keys).
pub const MAX_BODY: usize = 1024 * 1024;
/// Player names kept (the rest are counted).
pub const MAX_PLAYERS: usize = MAX_LIST_ENTRIES;
/// The longest rich-text tag stripped from a name (a longer `<…>` is kept as text).
pub const MAX_TAG: usize = 40;

const DOCUMENTS: [Document; 1] = [Document {
    path: "/frontpage",
    required: true,
    limits: HttpLimits::new(MAX_HEAD, MAX_BODY),
}];

/// Eco's own settings of one query (none yet; the timers are [`Timing`]).
#[derive(Debug, Clone, PartialEq, Eq, Default)]
#[non_exhaustive]
pub struct QueryOptions {}

/// What an Eco answer says beyond the status.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
#[non_exhaustive]
pub struct Details {
    /// Entries of `OnlinePlayersNames` (more than the players kept when over the cap).
    pub players_listed: Option<usize>,
}

/// `Info` of `/frontpage`.
#[derive(Debug, Clone, Default, PartialEq, Eq, Deserialize)]
#[serde(default, rename_all = "PascalCase")]
pub struct Info {
    /// `Description`: the server's name, with rich-text tags.
    pub description: Scalar,
    /// `OnlinePlayers`.
    pub online_players: Scalar,
    /// `TotalPlayers`.
    pub total_players: Scalar,
    /// `HasPassword`.
    pub has_password: Scalar,
    /// `GamePort`.
    pub game_port: Scalar,
    /// `Version`.
    pub version: Scalar,
    /// `OnlinePlayersNames` (servers of 2018 sent none).
    pub online_players_names: Option<Capped<Scalar, MAX_PLAYERS>>,
    /// `Category`.
    pub category: Scalar,
    /// `Language`.
    pub language: Scalar,
    /// `WorldSize`.
    pub world_size: Scalar,
    /// `DetailedDescription`.
    pub detailed_description: Scalar,
    /// `EconomyDesc`.
    pub economy_desc: Scalar,
    /// `Laws`.
    pub laws: Scalar,
    /// `Animals`.
    pub animals: Scalar,
    /// `Plants`.
    pub plants: Scalar,
    /// `IsLAN`.
    #[serde(rename = "IsLAN")]
    pub is_lan: Scalar,
    /// `AdminOnline`.
    pub admin_online: Scalar,
    /// `HasMeteor`.
    pub has_meteor: Scalar,
    /// `Leader`.
    pub leader: Scalar,
    /// `WorldObjective`.
    pub world_objective: Scalar,
    /// `SkillSpecialization`.
    pub skill_specialization: Scalar,
    /// `TimeSinceStart`.
    pub time_since_start: Scalar,
    /// `TimeLeft`.
    pub time_left: Scalar,
    /// `WebPort`.
    pub web_port: Scalar,
    /// `UniqueIdentifier`.
    pub unique_identifier: Scalar,
}

/// `/frontpage`: `Info` kept, the rest skipped.
#[derive(Debug, Clone, Default, PartialEq, Eq, Deserialize)]
#[serde(default, rename_all = "PascalCase")]
pub struct Frontpage {
    /// `Info` (an object).
    pub info: Option<Object<Info>>,
}

/// `s` without Unity's rich-text tags: each `<…>` of at most [`MAX_TAG`] characters
/// holding no `<` is dropped.
pub fn strip_tags(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    let mut rest = s;
    while let Some(i) = rest.find('<') {
        let (before, from) = rest.split_at(i);
        out.push_str(before);
        let tail = from.get(1..).unwrap_or_default();
        match tail.find(['>', '<']) {
            Some(j) if tail.as_bytes().get(j) == Some(&b'>') && j <= MAX_TAG => {
                rest = tail.get(j.saturating_add(1)..).unwrap_or_default();
            }
            _ => {
                out.push('<');
                rest = tail;
            }
        }
    }
    out.push_str(rest);
    out
}

/// The status `Info` says (see the module's documentation).
pub fn to_status(info: &Info) -> Status {
    let mut s = Status {
        game_name: Some(Text::from("Eco")),
        ..Status::default()
    };
    if let Some(raw) = info.description.as_str() {
        let plain = strip_tags(raw);
        s.host_name_raw = (plain != raw).then(|| Text::from(raw));
        s.host_name = Some(Text::from(plain.trim()));
    }
    s.player_count = info.online_players.number();
    s.slot_max = info.total_players.number();
    s.password = info.has_password.as_str().and_then(|p| p.parse().ok());
    s.connect_port = info.game_port.number();
    s.game_version = info.version.as_str().map(Text::from);
    s.players = info.online_players_names.as_ref().map(|n| {
        n.kept
            .iter()
            .filter_map(Scalar::as_str)
            .map(Player::named)
            .collect()
    });
    let rules = [
        ("Category", &info.category),
        ("Language", &info.language),
        ("WorldSize", &info.world_size),
        ("DetailedDescription", &info.detailed_description),
        ("EconomyDesc", &info.economy_desc),
        ("Laws", &info.laws),
        ("Animals", &info.animals),
        ("Plants", &info.plants),
        ("IsLAN", &info.is_lan),
        ("AdminOnline", &info.admin_online),
        ("HasMeteor", &info.has_meteor),
        ("Leader", &info.leader),
        ("WorldObjective", &info.world_objective),
        ("SkillSpecialization", &info.skill_specialization),
        ("TimeSinceStart", &info.time_since_start),
        ("TimeLeft", &info.time_left),
        ("WebPort", &info.web_port),
        ("UniqueIdentifier", &info.unique_identifier),
    ];
    s.rules = Some(Rules(
        rules
            .iter()
            .filter_map(|(k, v)| Some((Text::from(*k), Text::from(v.as_str()?))))
            .collect(),
    ));
    s
}

/// The protocol's side of the HTTP-JSON machine.
#[derive(Debug, Clone, Default)]
pub struct Eco {
    info: Option<Info>,
}

impl HttpJson for Eco {
    type Details = Details;

    fn documents(&self) -> &'static [Document] {
        &DOCUMENTS
    }

    fn read(&mut self, _i: usize, body: &[u8]) -> Result<(), DecodeError> {
        let page: Frontpage = parse_json(body, "/frontpage")?;
        let info = page.info.map(|o| o.0).ok_or_else(|| {
            DecodeError::new(
                0,
                "/frontpage",
                crate::error::DecodeErrorKind::Invalid("no Info object: not an Eco server"),
            )
        })?;
        self.info = Some(info);
        Ok(())
    }

    fn finish(
        &mut self,
        _missing: &[&'static str],
        warnings: &mut Vec<String>,
    ) -> (Status, Details) {
        let info = self.info.take().unwrap_or_default();
        let names = info.online_players_names.as_ref();
        warnings.extend(names.and_then(|n| n.cut_warning("/frontpage", "player names")));
        let details = Details {
            players_listed: names.map(|n| n.total),
        };
        (to_status(&info), details)
    }
}

/// One Eco query of one server.
#[derive(Debug, Clone)]
pub struct QueryMachine {
    m: HttpMachine<Eco>,
}

impl QueryMachine {
    /// A query starting at `now`.
    pub fn new(_opts: QueryOptions, timing: Timing, now: Instant) -> Self {
        Self {
            m: HttpMachine::new(Protocol::Eco, Eco::default(), &timing, now, None),
        }
    }
}

http_json_driver!(QueryMachine, Details);

crate::client_core::start_query!(QueryOptions, no_id);

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rich_text_tags_are_stripped_and_odd_angles_kept() {
        assert_eq!(strip_tags("<b><color=#ff0000>L</color>et's</b>"), "Let's");
        assert_eq!(strip_tags("<#0000FE>[</color>FR"), "[FR");
        assert_eq!(strip_tags("a < b > c"), "a  c");
        assert_eq!(strip_tags("1 <2 <b>x"), "1 <2 x");
        assert_eq!(strip_tags("open <"), "open <");
        let long = format!("<{}>", "x".repeat(60));
        assert_eq!(strip_tags(&long), long);
    }

    #[test]
    fn lying_fields_do_not_become_numbers() {
        let page: Frontpage = parse_json(
            br#"{"Info":{"OnlinePlayers":-5,"TotalPlayers":"lots","HasPassword":"maybe","GamePort":70000,"OnlinePlayersNames":"x"}}"#,
            "/frontpage",
        )
        .unwrap_or_default();
        // a string where a list is wanted: the JSON is refused
        assert!(page.info.is_none());
        // a list where the Info object is wanted: refused (serde's structs take lists)
        assert!(parse_json::<Frontpage>(br#"{"Info":[1,2]}"#, "/frontpage").is_err());
        let page: Frontpage = parse_json(
            br#"{"Info":{"OnlinePlayers":-5,"TotalPlayers":"lots","HasPassword":"maybe","GamePort":70000}}"#,
            "/frontpage",
        )
        .unwrap();
        let s = to_status(&page.info.unwrap().0);
        assert_eq!(s.player_count, None);
        assert_eq!(s.slot_max, None);
        assert_eq!(s.password, None);
        assert_eq!(s.connect_port, None);
    }
}
