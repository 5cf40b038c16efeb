//! The Palworld query as a machine of the client core's HTTP-JSON shape
//! (`client_http`): `GET /v1/api/info` (required), `/v1/api/metrics` and
//! `/v1/api/players` (each left out with a warning when refused) on one connection,
//! each with `Authorization: Basic` of `admin:PASSWORD`; no I/O, time passed in.
//!
//! The documents' mapping:
//!
//! | document, key | status |
//! |---|---|
//! | info `servername` | `host_name` |
//! | info `version` | `game_version` |
//! | info `description`, `worldguid` | `rules` |
//! | metrics `currentplayernum`, `maxplayernum` | `player_count`, `slot_max` (without metrics: the players listed) |
//! | metrics `uptime` | `uptime_seconds` |
//! | metrics `serverfps`, `serverframetime`, `days`, `basecampnum` | `rules` |
//! | players `players` | `players`: `name`, `ping` (ms, rounded), `userId` (`global_id`), `level`, `accountName` in `extra`; at most [`MAX_PLAYERS`]. The players' `ip` is not copied (personal data) |
//!
//! `game_name` is `Palworld`.

use serde::Deserialize;

use crate::bounded::MAX_LIST_ENTRIES;
use crate::client_http::{
    http_json_query, optional, parse_json, required, rules_of, with_extra, Capped, Document,
    HttpJson, Listed, Object, Scalar, HEAD_LIMIT,
};
use crate::error::DecodeError;
use crate::http::{basic_authorization, HttpLimits, Secret};
use crate::model::Player;
use crate::text::Text;
use crate::Status;

/// The default port (the REST port).
pub const DEFAULT_PORT: u16 = 8212;
/// A body, at most (32 players' entries are a few KB).
pub const MAX_BODY: usize = 512 * 1024;
/// Players kept (the rest are counted).
pub const MAX_PLAYERS: usize = MAX_LIST_ENTRIES;
/// The user of the REST API (the only one).
pub const USER: &str = "admin";

const LIMITS: HttpLimits = HttpLimits::new(HEAD_LIMIT, MAX_BODY);
const DOCUMENTS: [Document; 3] = [
    required("/v1/api/info", LIMITS),
    optional("/v1/api/metrics", LIMITS),
    optional("/v1/api/players", LIMITS),
];

/// Palworld's own settings of one query (the timers are
/// [`Timing`](crate::client::Timing)).
#[derive(Debug, Clone, PartialEq, Eq, Default)]
#[non_exhaustive]
pub struct QueryOptions {
    /// The server's admin password: never in events or errors. Without it the server
    /// refuses (`401`).
    pub password: Option<Secret>,
}

/// What a Palworld answer says beyond the status.
pub type Details = Listed;

/// `/v1/api/info`.
#[derive(Debug, Clone, Default, PartialEq, Eq, Deserialize)]
#[serde(default)]
pub struct Info {
    /// `version`.
    pub version: Scalar,
    /// `servername`.
    pub servername: Scalar,
    /// `description`.
    pub description: Scalar,
    /// `worldguid`.
    pub worldguid: Scalar,
}

/// `/v1/api/metrics`.
#[derive(Debug, Clone, Default, PartialEq, Eq, Deserialize)]
#[serde(default)]
pub struct Metrics {
    /// `serverfps`.
    pub serverfps: Scalar,
    /// `currentplayernum`.
    pub currentplayernum: Scalar,
    /// `serverframetime`.
    pub serverframetime: Scalar,
    /// `maxplayernum`.
    pub maxplayernum: Scalar,
    /// `uptime` (seconds).
    pub uptime: Scalar,
    /// `days`.
    pub days: Scalar,
    /// `basecampnum`.
    pub basecampnum: Scalar,
}

/// One entry of `/v1/api/players`' `players`.
#[derive(Debug, Clone, Default, PartialEq, Eq, Deserialize)]
#[serde(default, rename_all = "camelCase")]
pub struct PlayerEntry {
    /// `name`.
    pub name: Scalar,
    /// `accountName`.
    pub account_name: Scalar,
    /// `userId`.
    pub user_id: Scalar,
    /// `ping` (milliseconds, a float).
    pub ping: Scalar,
    /// `level`.
    pub level: Scalar,
}

/// `/v1/api/players`.
#[derive(Debug, Clone, Default, PartialEq, Eq, Deserialize)]
#[serde(default)]
pub struct Players {
    /// `players`.
    pub players: Capped<PlayerEntry, MAX_PLAYERS>,
}

impl PlayerEntry {
    fn to_player(&self) -> Player {
        with_extra(
            Player {
                name: self.name.as_str().map(Text::from),
                global_id: self.user_id.as_str().map(Text::from),
                ping: self.ping.rounded(),
                ..Player::default()
            },
            &[("level", &self.level), ("accountName", &self.account_name)],
        )
    }
}

/// The status the documents say (see the module's documentation).
pub fn to_status(info: &Info, metrics: Option<&Metrics>, players: Option<&Players>) -> Status {
    let mut s = Status {
        game_name: Some(Text::from("Palworld")),
        host_name: info.servername.as_str().map(Text::from),
        game_version: info.version.as_str().map(Text::from),
        players: players.map(|p| p.players.kept.iter().map(PlayerEntry::to_player).collect()),
        ..Status::default()
    };
    let none = Metrics::default();
    let m = metrics.unwrap_or(&none);
    s.player_count = m
        .currentplayernum
        .number()
        .or_else(|| players.and_then(|p| u32::try_from(p.players.total).ok()));
    s.slot_max = m.maxplayernum.number();
    s.uptime_seconds = m.uptime.number();
    s.rules = Some(rules_of(&[
        ("description", &info.description),
        ("worldguid", &info.worldguid),
        ("serverfps", &m.serverfps),
        ("serverframetime", &m.serverframetime),
        ("days", &m.days),
        ("basecampnum", &m.basecampnum),
    ]));
    s
}

/// The protocol's side of the HTTP-JSON machine.
#[derive(Debug, Clone, Default)]
pub struct Palworld {
    authorization: Option<Secret>,
    info: Option<Info>,
    metrics: Option<Metrics>,
    players: Option<Players>,
}

impl From<QueryOptions> for Palworld {
    fn from(o: QueryOptions) -> Self {
        Self {
            authorization: o.password.map(|p| Secret(basic_authorization(USER, &p.0))),
            ..Self::default()
        }
    }
}

impl HttpJson for Palworld {
    type Details = Details;

    fn documents(&self) -> &'static [Document] {
        &DOCUMENTS
    }

    fn headers(&self) -> Vec<(&'static str, String)> {
        self.authorization
            .iter()
            .map(|a| ("Authorization", a.0.clone()))
            .collect()
    }

    fn read(&mut self, i: usize, body: &[u8]) -> Result<(), DecodeError> {
        match i {
            0 => self.info = Some(parse_json::<Object<Info>>(body, "/v1/api/info")?.0),
            1 => self.metrics = Some(parse_json::<Object<Metrics>>(body, "/v1/api/metrics")?.0),
            _ => self.players = Some(parse_json::<Object<Players>>(body, "/v1/api/players")?.0),
        }
        Ok(())
    }

    fn finish(
        &mut self,
        _missing: &[&'static str],
        warnings: &mut Vec<String>,
    ) -> (Status, Details) {
        let info = self.info.take().unwrap_or_default();
        let details = Listed::of(
            self.players.as_ref().map(|p| &p.players),
            "/v1/api/players",
            warnings,
        );
        let status = to_status(&info, self.metrics.as_ref(), self.players.as_ref());
        (status, details)
    }
}

http_json_query!(Palworld, Palworld);

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_password_is_only_in_the_header_and_pings_are_sane() {
        let p = Palworld::from(QueryOptions {
            password: Some(Secret("hunter2".into())),
        });
        assert_eq!(
            p.headers(),
            vec![("Authorization", "Basic YWRtaW46aHVudGVyMg==".to_string())]
        );
        assert!(!format!("{p:?}").contains("YWRtaW46"), "{p:?}");
        let o = QueryOptions {
            password: Some(Secret("hunter2".into())),
        };
        assert!(!format!("{o:?}").contains("hunter2"));
        let players: Players = parse_json(
            br#"{"players":[{"name":"a","ping":12.6},{"name":"b","ping":-3},{"name":"c","ping":1e300}]}"#,
            "x",
        )
        .unwrap();
        let s = to_status(&Info::default(), None, Some(&players));
        let pings: Vec<_> = s.players.unwrap().iter().map(|p| p.ping).collect();
        assert_eq!(pings, [Some(13), None, None]);
        assert_eq!(s.player_count, Some(3));
    }

    #[test]
    fn each_request_carries_the_credentials() {
        use crate::client_core::{QueryDriver, StreamEvent, Timing};
        let t = std::time::Instant::now();
        let o = QueryOptions {
            password: Some(Secret("hunter2".into())),
        };
        let mut m = QueryMachine::new(o, Timing::default(), t);
        m.handle_stream(t, StreamEvent::Connected(([127, 0, 0, 1], 8212).into()));
        let mut out = Vec::new();
        assert!(m.poll_transmit_into(t, &mut out));
        let request = String::from_utf8_lossy(&out);
        assert!(
            request.starts_with("GET /v1/api/info HTTP/1.1\r\n"),
            "{request}"
        );
        assert!(
            request.contains("\r\nAuthorization: Basic YWRtaW46aHVudGVyMg==\r\n"),
            "{request}"
        );
        let body = br#"{"servername":"s"}"#;
        let response = format!(
            "HTTP/1.1 200 OK\r\nContent-Length: {}\r\n\r\n{}",
            body.len(),
            String::from_utf8_lossy(body)
        );
        m.handle_stream(t, StreamEvent::Received(response.as_bytes()));
        assert!(m.poll_transmit_into(t, &mut out));
        let request = String::from_utf8_lossy(&out);
        assert!(request.starts_with("GET /v1/api/metrics "), "{request}");
        assert!(request.contains("Authorization: Basic "), "{request}");
    }
}
