//! The ElDewrito query as a machine of the client core's HTTP-JSON shape
//! (`client_http`): `GET /` on the HTTP port (11775), no I/O, time passed in.
//!
//! The document's mapping:
//!
//! | key | status |
//! |---|---|
//! | `name` | `host_name` |
//! | `port` | `connect_port` (the game's UDP port, 11774) |
//! | `map` | `map` (`mapFile` in `rules`) |
//! | `variantType` | `game_type` (`slayer`, `forge`…; the variant's own name, `variant`, in `rules`) |
//! | `status` | `game_mode` (`InGame`, `InLobby`…) |
//! | `numPlayers`, `maxPlayers` | `player_count`, `slot_max` |
//! | `passworded` | `password` (the server writes it, `true`, only when it wants one, and then no players: absent is `false`) |
//! | `isDedicated` | `server_type` |
//! | `eldewritoVersion` | `game_version` (`gameVersion`, the Halo Online build, in `rules`) |
//! | `players` | `players`: `name`, `team`, `score`, `kills`, `deaths`, `isAlive` (`alive`), `uid` (`global_id`), `serviceTag` and `assists` in `extra`; at most [`MAX_PLAYERS`] |
//! | `hostPlayer`, `mapFile`, `variant`, `gameVersion`, `teams`, `sprintEnabled`, `sprintUnlimitedEnabled`, `dualWielding`, `assassinationEnabled`, `votingEnabled`, `VoIP` | `rules`, those sent, in this order |
//!
//! `game_name` is `ElDewrito`.

use std::time::Instant;

use serde::Deserialize;

use crate::bounded::MAX_LIST_ENTRIES;
use crate::client_core::Timing;
use crate::client_http::{
    http_json_driver, parse_json, Capped, Document, HttpJson, HttpMachine, Object, Scalar,
};
use crate::error::{DecodeError, DecodeErrorKind};
use crate::http::HttpLimits;
use crate::model::{MapInfo, Player, Rules, ServerType};
use crate::protocol::Protocol;
use crate::text::Text;
use crate::Status;

/// The default port (HTTP; the game is UDP 11774).
pub const DEFAULT_PORT: u16 = 11775;
/// The head of a response, at most.
pub const MAX_HEAD: usize = 8 * 1024;
/// The body, at most (a full server's is a few KB).
pub const MAX_BODY: usize = 256 * 1024;
/// Players kept (the rest are counted).
pub const MAX_PLAYERS: usize = MAX_LIST_ENTRIES;

const DOCUMENTS: [Document; 1] = [Document {
    path: "/",
    required: true,
    limits: HttpLimits::new(MAX_HEAD, MAX_BODY),
}];

/// ElDewrito's own settings of one query (none yet; the timers are [`Timing`]).
#[derive(Debug, Clone, PartialEq, Eq, Default)]
#[non_exhaustive]
pub struct QueryOptions {}

/// What an ElDewrito answer says beyond the status.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
#[non_exhaustive]
pub struct Details {
    /// Entries of `players` (more than the players kept when over the cap).
    pub players_listed: Option<usize>,
}

/// One entry of `players`.
#[derive(Debug, Clone, Default, PartialEq, Eq, Deserialize)]
#[serde(default, rename_all = "camelCase")]
pub struct PlayerEntry {
    /// `name`.
    pub name: Scalar,
    /// `team`.
    pub team: Scalar,
    /// `score`.
    pub score: Scalar,
    /// `kills`.
    pub kills: Scalar,
    /// `deaths`.
    pub deaths: Scalar,
    /// `assists`.
    pub assists: Scalar,
    /// `isAlive`.
    pub is_alive: Scalar,
    /// `uid`.
    pub uid: Scalar,
    /// `serviceTag`.
    pub service_tag: Scalar,
}

/// The document of `GET /`.
#[derive(Debug, Clone, Default, PartialEq, Eq, Deserialize)]
#[serde(default, rename_all = "camelCase")]
pub struct Info {
    /// `name`.
    pub name: Scalar,
    /// `port`.
    pub port: Scalar,
    /// `hostPlayer`.
    pub host_player: Scalar,
    /// `map`.
    pub map: Scalar,
    /// `mapFile`.
    pub map_file: Scalar,
    /// `variant`.
    pub variant: Scalar,
    /// `variantType`.
    pub variant_type: Scalar,
    /// `status`.
    pub status: Scalar,
    /// `numPlayers`.
    pub num_players: Scalar,
    /// `maxPlayers`.
    pub max_players: Scalar,
    /// `passworded`.
    pub passworded: Scalar,
    /// `isDedicated`.
    pub is_dedicated: Scalar,
    /// `gameVersion`.
    pub game_version: Scalar,
    /// `eldewritoVersion`.
    pub eldewrito_version: Scalar,
    /// `teams`.
    pub teams: Scalar,
    /// `sprintEnabled`.
    pub sprint_enabled: Scalar,
    /// `sprintUnlimitedEnabled`.
    pub sprint_unlimited_enabled: Scalar,
    /// `dualWielding`.
    pub dual_wielding: Scalar,
    /// `assassinationEnabled`.
    pub assassination_enabled: Scalar,
    /// `votingEnabled`.
    pub voting_enabled: Scalar,
    /// `VoIP`.
    #[serde(rename = "VoIP")]
    pub voip: Scalar,
    /// `players`.
    pub players: Option<Capped<Object<PlayerEntry>, MAX_PLAYERS>>,
}

fn text(s: &Scalar) -> Option<Text> {
    s.as_str().map(Text::from)
}

fn player(p: &PlayerEntry) -> Player {
    let mut out = Player {
        name: text(&p.name),
        team: p.team.number(),
        score: p.score.number(),
        kills: p.kills.number(),
        deaths: p.deaths.number(),
        alive: p.is_alive.as_str().and_then(|a| a.parse().ok()),
        global_id: text(&p.uid),
        ..Player::default()
    };
    for (k, v) in [("serviceTag", &p.service_tag), ("assists", &p.assists)] {
        if let Some(v) = text(v) {
            out.extra.insert(Text::from(k), v);
        }
    }
    out
}

/// The status the document says (see the module's documentation).
pub fn to_status(i: &Info) -> Status {
    let mut s = Status {
        game_name: Some(Text::from("ElDewrito")),
        host_name: text(&i.name),
        connect_port: i.port.number(),
        map: i.map.as_str().filter(|m| !m.is_empty()).map(MapInfo::named),
        game_type: text(&i.variant_type).filter(|t| !t.is_empty()),
        game_mode: text(&i.status).filter(|t| !t.is_empty()),
        player_count: i.num_players.number(),
        slot_max: i.max_players.number(),
        password: Some(i.passworded.as_str() == Some("true")),
        server_type: match i.is_dedicated.as_str() {
            Some("true") => Some(ServerType::Dedicated),
            Some("false") => Some(ServerType::Listen),
            _ => None,
        },
        game_version: text(&i.eldewrito_version),
        ..Status::default()
    };
    s.players = i
        .players
        .as_ref()
        .map(|p| p.kept.iter().map(|o| player(&o.0)).collect());
    let rules = [
        ("hostPlayer", &i.host_player),
        ("mapFile", &i.map_file),
        ("variant", &i.variant),
        ("gameVersion", &i.game_version),
        ("teams", &i.teams),
        ("sprintEnabled", &i.sprint_enabled),
        ("sprintUnlimitedEnabled", &i.sprint_unlimited_enabled),
        ("dualWielding", &i.dual_wielding),
        ("assassinationEnabled", &i.assassination_enabled),
        ("votingEnabled", &i.voting_enabled),
        ("VoIP", &i.voip),
    ];
    s.rules = Some(Rules(
        rules
            .iter()
            .filter_map(|(k, v)| Some((Text::from(*k), text(v)?)))
            .collect(),
    ));
    s
}

/// The protocol's side of the HTTP-JSON machine.
#[derive(Debug, Clone, Default)]
pub struct Eldewrito {
    info: Option<Info>,
}

impl HttpJson for Eldewrito {
    type Details = Details;

    fn documents(&self) -> &'static [Document] {
        &DOCUMENTS
    }

    fn read(&mut self, _i: usize, body: &[u8]) -> Result<(), DecodeError> {
        let Object(info): Object<Info> = parse_json(body, "/")?;
        if info.eldewrito_version.as_str().is_none() && info.name.as_str().is_none() {
            return Err(DecodeError::new(
                0,
                "/",
                DecodeErrorKind::Invalid("no name nor eldewritoVersion: not an ElDewrito server"),
            ));
        }
        self.info = Some(info);
        Ok(())
    }

    fn finish(
        &mut self,
        _missing: &[&'static str],
        warnings: &mut Vec<String>,
    ) -> (Status, Details) {
        let info = self.info.take().unwrap_or_default();
        let listed = info.players.as_ref().map(|p| p.total);
        warnings.extend(
            info.players
                .as_ref()
                .and_then(|p| p.cut_warning("/", "players")),
        );
        (
            to_status(&info),
            Details {
                players_listed: listed,
            },
        )
    }
}

/// One ElDewrito query of one server.
#[derive(Debug, Clone)]
pub struct QueryMachine {
    m: HttpMachine<Eldewrito>,
}

impl QueryMachine {
    /// A query starting at `now`.
    pub fn new(_opts: QueryOptions, timing: Timing, now: Instant) -> Self {
        Self {
            m: HttpMachine::new(
                Protocol::Eldewrito,
                Eldewrito::default(),
                &timing,
                now,
                None,
            ),
        }
    }
}

http_json_driver!(QueryMachine, Details);

crate::client_core::start_query!(QueryOptions, no_id);

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lying_values_are_not_taken() {
        let Object(i): Object<Info> = parse_json(
            br#"{"name":"x","numPlayers":-1,"maxPlayers":1e99,"port":123456,"passworded":"yes",
                "players":[{"name":"a","team":"red","kills":-4,"isAlive":1}]}"#,
            "/",
        )
        .unwrap();
        let s = to_status(&i);
        assert_eq!(
            (s.player_count, s.slot_max, s.connect_port),
            (None, None, None)
        );
        assert_eq!(s.password, Some(false));
        let p = &s.players.unwrap()[0];
        assert_eq!((p.team, p.kills, p.alive), (None, None, None));
        // a player that is not an object: refused
        assert!(parse_json::<Object<Info>>(br#"{"players":[[1,2]]}"#, "/").is_err());
    }
}
