//! The DarkMultiPlayer query as a machine of the client core's HTTP-JSON shape
//! (`client_http`): `GET /` on the HTTP port; no I/O, time passed in.
//!
//! The document is DMP's `ServerInfo` (`Server/ServerInfo.cs`, written by .NET's
//! `DataContractJsonSerializer`). Its mapping:
//!
//! | key | status |
//! |---|---|
//! | `server_name` | `host_name` |
//! | `player_count`, `max_players` | `player_count`, `slot_max` |
//! | `port` | `connect_port` (the game port) |
//! | `game_mode` | `game_mode` (`SANDBOX`, `SCIENCE`, `CAREER`) |
//! | `players` | `players`: the names, one string joined by `, ` (a list of names is read too); at most [`MAX_PLAYERS`] |
//! | `warp_mode`, `mod_control`, `cheats` | `rules`, those sent, in this order |
//!
//! `game_name` is `Kerbal Space Program`.

use serde::Deserialize;

use crate::bounded::MAX_LIST_ENTRIES;
use crate::client_http::{
    http_json_query, required, rules_of, Capped, Document, ListOrText, Listed, NoOptions, OneDoc,
    OneDocument, Scalar, HEAD_LIMIT,
};
use crate::http::HttpLimits;
use crate::model::Player;
use crate::text::Text;
use crate::Status;

/// The default port (the HTTP port: the game port 6702 + 1).
pub const DEFAULT_PORT: u16 = 6703;
/// The body, at most (a full server's is well under a KB).
pub const MAX_BODY: usize = 256 * 1024;
/// Players kept (the rest are counted).
pub const MAX_PLAYERS: usize = MAX_LIST_ENTRIES;

const DOCUMENTS: [Document; 1] = [required("/", HttpLimits::new(HEAD_LIMIT, MAX_BODY))];

/// No settings of its own.
pub type QueryOptions = NoOptions;

/// What a DMP answer says beyond the status.
pub type Details = Listed;

/// The `ServerInfo` document.
#[derive(Debug, Clone, Default, PartialEq, Eq, Deserialize)]
#[serde(default)]
pub struct ServerInfo {
    /// `server_name`.
    pub server_name: Option<Scalar>,
    /// `players`.
    pub players: Option<ListOrText<Scalar, MAX_PLAYERS>>,
    /// `player_count`.
    pub player_count: Scalar,
    /// `max_players`.
    pub max_players: Scalar,
    /// `port`.
    pub port: Scalar,
    /// `game_mode`.
    pub game_mode: Scalar,
    /// `warp_mode`.
    pub warp_mode: Scalar,
    /// `mod_control`.
    pub mod_control: Scalar,
    /// `cheats`.
    pub cheats: Scalar,
}

impl ServerInfo {
    /// The player names (and how many were listed).
    pub fn names(&self) -> Option<Capped<String, MAX_PLAYERS>> {
        Some(match self.players.as_ref()? {
            ListOrText::Text(t) => ListOrText::<Scalar, MAX_PLAYERS>::split_text(t, ", "),
            ListOrText::List(l) => Capped {
                kept: l.kept.iter().filter_map(|n| n.0.clone()).collect(),
                total: l.total,
            },
        })
    }
}

/// The status the document says (see the module's documentation).
pub fn to_status(d: &ServerInfo) -> Status {
    Status {
        game_name: Some(Text::from("Kerbal Space Program")),
        host_name: d
            .server_name
            .as_ref()
            .and_then(Scalar::as_str)
            .map(Text::from),
        player_count: d.player_count.number(),
        slot_max: d.max_players.number(),
        connect_port: d.port.number(),
        game_mode: d.game_mode.as_str().map(Text::from),
        players: d
            .names()
            .map(|n| n.kept.into_iter().map(Player::named).collect()),
        rules: Some(rules_of(&[
            ("warp_mode", &d.warp_mode),
            ("mod_control", &d.mod_control),
            ("cheats", &d.cheats),
        ])),
        ..Status::default()
    }
}

impl OneDoc for ServerInfo {
    fn documents() -> &'static [Document; 1] {
        &DOCUMENTS
    }

    fn refused(&self) -> Option<&'static str> {
        self.server_name
            .is_none()
            .then_some("no server_name: not a DarkMultiPlayer server")
    }

    fn answer(&self, warnings: &mut Vec<String>) -> (Status, Details) {
        let details = Listed::of(self.names().as_ref(), "/", warnings);
        (to_status(self), details)
    }
}

http_json_query!(Kspdmp, OneDocument<ServerInfo>, |_| OneDocument::default());

#[cfg(test)]
mod tests {
    use super::*;
    use crate::client_http::{parse_json, HttpJson};

    #[test]
    fn names_from_the_string_or_a_list_and_lying_counts() {
        let d: ServerInfo = parse_json(
            br#"{"server_name":"x","players":"a, b c, ","player_count":"two","max_players":-1,"port":65536}"#,
            "/",
        )
        .unwrap();
        let s = to_status(&d);
        let names: Vec<_> = s
            .players
            .unwrap()
            .into_iter()
            .filter_map(|p| p.name)
            .collect();
        assert_eq!(names, ["a", "b c"]);
        assert_eq!(
            (s.player_count, s.slot_max, s.connect_port),
            (None, None, None)
        );
        let d: ServerInfo =
            parse_json(br#"{"server_name":"x","players":["a",1,null]}"#, "/").unwrap();
        assert_eq!(d.names().unwrap().kept, ["a", "1"]);
        let mut m = OneDocument::<ServerInfo>::default();
        assert!(m.read(0, br#"{"name":"x"}"#).is_err());
    }
}
