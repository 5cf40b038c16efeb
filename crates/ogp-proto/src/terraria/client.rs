//! The TShock query as a machine of the client core's HTTP-JSON shape (`client_http`):
//! `GET /v2/server/status?players=true` on the REST port, with `&token=T` when a token
//! is given; no I/O, time passed in.
//!
//! The document's mapping:
//!
//! | key | status |
//! |---|---|
//! | `status` | must be `"200"` (TShock's own status; anything else is its refusal) |
//! | `name` | `host_name` |
//! | `world` | `map` |
//! | `port` | `connect_port` |
//! | `playercount`, `maxplayers` | `player_count`, `slot_max` |
//! | `serverpassword` | `password` |
//! | `serverversion` | `game_version` |
//! | `players` | `players`: `nickname` (`name`), `team`; `username`, `group` in `extra`; older TShock sends one string of names joined by `, `; at most [`MAX_PLAYERS`] |
//! | `uptime`, `tshockversion` (as `Major.Minor.Build.Revision`) | `rules` |
//! | `rules` | `rules`, each key with its value (at most [`MAX_RULES`]) |
//!
//! `game_name` is `Terraria`.

use serde::Deserialize;

use crate::bounded::MAX_LIST_ENTRIES;
use crate::client_http::{
    http_json_query, required, rules_of, with_extra, Capped, Document, ListOrText, Listed, Object,
    OneDoc, OneDocument, Pairs, Scalar, HEAD_LIMIT,
};
use crate::http::{query_value, HttpLimits, Secret};
use crate::model::{MapInfo, Player};
use crate::text::Text;
use crate::Status;

/// The default port (the REST port: the game port 7777 + 101).
pub const DEFAULT_PORT: u16 = 7878;
/// The body, at most (a full server's is a few KB).
pub const MAX_BODY: usize = 512 * 1024;
/// Players kept (the rest are counted).
pub const MAX_PLAYERS: usize = MAX_LIST_ENTRIES;
/// Entries of `rules` kept.
pub const MAX_RULES: usize = 256;
/// The document's path, without a token.
pub const PATH: &str = "/v2/server/status?players=true";

const DOCUMENTS: [Document; 1] = [required(PATH, HttpLimits::new(HEAD_LIMIT, MAX_BODY))];

/// TShock's own settings of one query (the timers are [`Timing`](crate::client::Timing)).
#[derive(Debug, Clone, PartialEq, Eq, Default)]
#[non_exhaustive]
pub struct QueryOptions {
    /// A REST token (`&token=`): never in events or errors.
    pub token: Option<Secret>,
}

/// What a TShock answer says beyond the status.
pub type Details = Listed;

/// One entry of `players`.
#[derive(Debug, Clone, Default, PartialEq, Eq, Deserialize)]
#[serde(default)]
pub struct PlayerEntry {
    /// `nickname`.
    pub nickname: Scalar,
    /// `username`.
    pub username: Scalar,
    /// `group`.
    pub group: Scalar,
    /// `team`.
    pub team: Scalar,
}

/// `tshockversion`.
#[derive(Debug, Clone, Default, PartialEq, Eq, Deserialize)]
#[serde(default, rename_all = "PascalCase")]
pub struct Version {
    /// `Major`.
    pub major: Scalar,
    /// `Minor`.
    pub minor: Scalar,
    /// `Build`.
    pub build: Scalar,
    /// `Revision`.
    pub revision: Scalar,
}

/// The status document.
#[derive(Debug, Clone, Default, PartialEq, Eq, Deserialize)]
#[serde(default)]
pub struct ServerStatus {
    /// `status` (`"200"`).
    pub status: Scalar,
    /// `error`, when `status` is not 200.
    pub error: Scalar,
    /// `name`.
    pub name: Scalar,
    /// `serverversion`.
    pub serverversion: Scalar,
    /// `tshockversion`.
    pub tshockversion: Option<Object<Version>>,
    /// `port`.
    pub port: Scalar,
    /// `playercount`.
    pub playercount: Scalar,
    /// `maxplayers`.
    pub maxplayers: Scalar,
    /// `world`.
    pub world: Scalar,
    /// `uptime`.
    pub uptime: Scalar,
    /// `serverpassword`.
    pub serverpassword: Scalar,
    /// `players`.
    pub players: Option<ListOrText<PlayerEntry, MAX_PLAYERS>>,
    /// `rules`.
    pub rules: Option<Pairs<MAX_RULES>>,
}

impl ServerStatus {
    /// The players as the document lists them (and how many it listed).
    fn players(&self) -> Option<Capped<Player, MAX_PLAYERS>> {
        Some(match self.players.as_ref()? {
            ListOrText::List(l) => Capped {
                kept: l.kept.iter().map(PlayerEntry::to_player).collect(),
                total: l.total,
            },
            ListOrText::Text(t) => {
                let names = ListOrText::<PlayerEntry, MAX_PLAYERS>::split_text(t, ",");
                Capped {
                    kept: names.kept.into_iter().map(Player::named).collect(),
                    total: names.total,
                }
            }
        })
    }
}

impl PlayerEntry {
    fn to_player(&self) -> Player {
        with_extra(
            Player {
                name: self.nickname.as_str().map(Text::from),
                team: self.team.number(),
                ..Player::default()
            },
            &[("username", &self.username), ("group", &self.group)],
        )
    }
}

/// The status the document says (see the module's documentation).
pub fn to_status(d: &ServerStatus) -> Status {
    let mut s = Status {
        game_name: Some(Text::from("Terraria")),
        host_name: d.name.as_str().map(Text::from),
        map: d.world.as_str().map(MapInfo::named),
        connect_port: d.port.number(),
        player_count: d.playercount.number(),
        slot_max: d.maxplayers.number(),
        password: d.serverpassword.as_str().and_then(|p| p.parse().ok()),
        game_version: d.serverversion.as_str().map(Text::from),
        players: d.players().map(|p| p.kept),
        ..Status::default()
    };
    let version = d.tshockversion.as_ref().map(|v| {
        let v = &v.0;
        let parts = [&v.major, &v.minor, &v.build, &v.revision];
        let parts: Vec<&str> = parts.iter().filter_map(|p| p.as_str()).collect();
        Scalar(Some(parts.join(".")))
    });
    let none = Scalar::default();
    let mut rules = rules_of(&[
        ("uptime", &d.uptime),
        ("tshockversion", version.as_ref().unwrap_or(&none)),
    ]);
    for (k, v) in d.rules.iter().flat_map(|r| r.0.kept.iter()) {
        rules
            .0
            .push((Text::from(k.as_str()), Text::from(v.as_str())));
    }
    s.rules = Some(rules);
    s
}

impl OneDoc for ServerStatus {
    fn documents() -> &'static [Document; 1] {
        &DOCUMENTS
    }

    fn refused(&self) -> Option<&'static str> {
        match self.status.as_str() {
            Some("200") => None,
            Some(_) => {
                Some("TShock's status is not 200: it refused the request (a token it wants?)")
            }
            None => Some("no status: not a TShock server"),
        }
    }

    fn answer(&self, warnings: &mut Vec<String>) -> (Status, Details) {
        let details = Listed::of(self.players().as_ref(), PATH, warnings);
        if let Some(r) = self.rules.as_ref() {
            warnings.extend(r.0.cut_warning(PATH, "rules"));
        }
        (to_status(self), details)
    }
}

/// The request target with the token, if one is given.
fn target(o: QueryOptions) -> OneDocument<ServerStatus> {
    OneDocument::at(
        o.token
            .map(|t| format!("{PATH}&token={}", query_value(&t.0))),
    )
}

http_json_query!(Terraria, OneDocument<ServerStatus>, target);

#[cfg(test)]
mod tests {
    use super::*;
    use crate::client_http::parse_json;

    #[test]
    fn old_string_players_and_lying_fields() {
        let d: ServerStatus = parse_json(
            br#"{"status":"200","players":"a, b,, c","playercount":"many","port":-1,"serverpassword":"x"}"#,
            "x",
        )
        .unwrap();
        let s = to_status(&d);
        let names: Vec<_> = s
            .players
            .unwrap()
            .into_iter()
            .filter_map(|p| p.name)
            .collect();
        assert_eq!(names, ["a", "b", "c"]);
        assert_eq!(s.player_count, None);
        assert_eq!(s.connect_port, None);
        assert_eq!(s.password, None);
        use crate::client_http::HttpJson;
        let mut t = target(QueryOptions::default());
        assert!(t.read(0, br#"{"status":"401","error":"no"}"#).is_err());
        assert!(t.read(0, br#"{"name":"x"}"#).is_err());
        let t = target(QueryOptions {
            token: Some(Secret("a&b c".into())),
        });
        assert_eq!(
            t.target(0).unwrap(),
            "/v2/server/status?players=true&token=a%26b%20c"
        );
        assert!(!format!("{t:?}").contains("a&b"));
    }
}
