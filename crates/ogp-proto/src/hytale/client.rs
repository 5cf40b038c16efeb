//! The Hytale query as a machine of the client core's HTTP-JSON shape (`client_http`):
//! `GET /Nitrado/Query` with `Accept` naming the plugin's JSON (version 1, or plain
//! JSON), over HTTPS unless told otherwise; no I/O, time passed in.
//!
//! The document's mapping (each section is there only when the plugin's permissions
//! let anonymous users read it):
//!
//! | key | status |
//! |---|---|
//! | `Server.Name` (else `Basic.Name`) | `host_name` |
//! | `Server.Version` (else `Basic.Version`) | `game_version` |
//! | `Server.MaxPlayers` (else `Basic.MaxPlayers`) | `slot_max` |
//! | `Universe.CurrentPlayers` (else `Basic.CurrentPlayers`, else the players listed) | `player_count` |
//! | `Universe.DefaultWorld` | `map` |
//! | `Players` (a list, or an object by UUID as the plugin's first version wrote it) | `players`: `Name` (`name`), `UUID` (`global_id`), `World` in `extra`; at most [`MAX_PLAYERS`] |
//! | `Plugins` (an object by identifier) | `addons`: the identifier (`short_name`), `Version`, `Enabled` (`active`); at most [`MAX_PLUGINS`] |
//! | `Server.Revision`, `Patchline`, `ProtocolVersion`, `Basic.Address` | `rules` |
//!
//! `game_name` is `Hytale`.

use std::fmt;

use serde::de::{Deserializer, MapAccess, SeqAccess, Visitor};
use serde::Deserialize;

use crate::bounded::MAX_LIST_ENTRIES;
use crate::client_core::TlsRequest;
use crate::client_http::{
    http_json_query, required, rules_of, with_extra, Capped, Document, Listed, Object, OneDoc,
    OneDocument, Scalar, HEAD_LIMIT,
};
use crate::http::HttpLimits;
use crate::model::{AddOn, MapInfo, Player};
use crate::text::Text;
use crate::Status;

/// The default port (the web server's).
pub const DEFAULT_PORT: u16 = 5523;
/// The body, at most (a full server's players and plugins are a few tens of KB).
pub const MAX_BODY: usize = 1024 * 1024;
/// Players kept (the rest are counted).
pub const MAX_PLAYERS: usize = MAX_LIST_ENTRIES;
/// Plugins kept (the rest are counted).
pub const MAX_PLUGINS: usize = 1024;
/// The document's path.
pub const PATH: &str = "/Nitrado/Query";
/// What the request accepts: the plugin's versioned JSON, or its current one.
pub const ACCEPT: &str =
    "application/x.hytale.nitrado.query+json;version=1, application/json;q=0.9";

const DOCUMENTS: [Document; 1] = [required(PATH, HttpLimits::new(HEAD_LIMIT, MAX_BODY))];

/// Hytale's own settings of one query (the timers are [`Timing`](crate::client::Timing)).
#[derive(Debug, Clone, PartialEq, Eq, Default)]
#[non_exhaustive]
pub struct QueryOptions {
    /// Plain HTTP instead of HTTPS.
    pub plain: bool,
    /// HTTPS: accept any certificate (the web server's self-signed one).
    pub insecure: bool,
    /// HTTPS: the name the certificate must be for (`None`: the address queried).
    pub server_name: Option<String>,
}

/// What a Hytale answer says beyond the status.
pub type Details = Listed;

/// A list of `T`, or an object whose values are `T` (its keys kept): at most `MAX`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Keyed<T, const MAX: usize>(pub Capped<(String, T), MAX>);

impl<T, const MAX: usize> Default for Keyed<T, MAX> {
    fn default() -> Self {
        Self(Capped::default())
    }
}

impl<'de, T: Deserialize<'de>, const MAX: usize> Deserialize<'de> for Keyed<T, MAX> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V<T, const MAX: usize>(std::marker::PhantomData<T>);
        impl<'de, T: Deserialize<'de>, const MAX: usize> Visitor<'de> for V<T, MAX> {
            type Value = Keyed<T, MAX>;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("a list or an object")
            }
            fn visit_seq<A: SeqAccess<'de>>(self, seq: A) -> Result<Self::Value, A::Error> {
                let list = Capped::<T, MAX>::deserialize(
                    serde::de::value::SeqAccessDeserializer::new(seq),
                )?;
                Ok(Keyed(Capped {
                    kept: list.kept.into_iter().map(|v| (String::new(), v)).collect(),
                    total: list.total,
                }))
            }
            fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Self::Value, A::Error> {
                let mut out = Capped::default();
                while let Some(k) = map.next_key::<std::borrow::Cow<'de, str>>()? {
                    if out.kept.len() < MAX {
                        let v = map.next_value::<T>()?;
                        out.kept.push((k.into_owned(), v));
                    } else {
                        map.next_value::<serde::de::IgnoredAny>()?;
                    }
                    out.total = out.total.saturating_add(1);
                }
                Ok(Keyed(out))
            }
        }
        d.deserialize_any(V(std::marker::PhantomData))
    }
}

/// `Basic` and `Server` (the keys both have).
#[derive(Debug, Clone, Default, PartialEq, Eq, Deserialize)]
#[serde(default, rename_all = "PascalCase")]
pub struct Server {
    /// `Name`.
    pub name: Scalar,
    /// `Version`.
    pub version: Scalar,
    /// `MaxPlayers`.
    pub max_players: Scalar,
    /// `CurrentPlayers` (`Basic` only).
    pub current_players: Scalar,
    /// `Revision`.
    pub revision: Scalar,
    /// `Patchline`.
    pub patchline: Scalar,
    /// `ProtocolVersion`.
    pub protocol_version: Scalar,
    /// `Address`.
    pub address: Scalar,
}

/// `Universe`.
#[derive(Debug, Clone, Default, PartialEq, Eq, Deserialize)]
#[serde(default, rename_all = "PascalCase")]
pub struct Universe {
    /// `CurrentPlayers`.
    pub current_players: Scalar,
    /// `DefaultWorld`.
    pub default_world: Scalar,
}

/// One entry of `Players`.
#[derive(Debug, Clone, Default, PartialEq, Eq, Deserialize)]
#[serde(default, rename_all = "PascalCase")]
pub struct PlayerEntry {
    /// `Name`.
    pub name: Scalar,
    /// `UUID`.
    #[serde(rename = "UUID")]
    pub uuid: Scalar,
    /// `World`.
    pub world: Scalar,
}

/// One entry of `Plugins`.
#[derive(Debug, Clone, Default, PartialEq, Eq, Deserialize)]
#[serde(default, rename_all = "PascalCase")]
pub struct PluginEntry {
    /// `Version`.
    pub version: Scalar,
    /// `Enabled`.
    pub enabled: Scalar,
}

/// The query document.
#[derive(Debug, Clone, Default, PartialEq, Eq, Deserialize)]
#[serde(default, rename_all = "PascalCase")]
pub struct QueryDoc {
    /// `Basic`.
    pub basic: Option<Object<Server>>,
    /// `Server`.
    pub server: Option<Object<Server>>,
    /// `Universe`.
    pub universe: Option<Object<Universe>>,
    /// `Players`.
    pub players: Option<Keyed<Object<PlayerEntry>, MAX_PLAYERS>>,
    /// `Plugins`.
    pub plugins: Option<Keyed<Object<PluginEntry>, MAX_PLUGINS>>,
}

impl QueryDoc {
    /// `Server`'s `key`, else `Basic`'s.
    fn either(&self, key: impl Fn(&Server) -> &Scalar) -> Scalar {
        [&self.server, &self.basic]
            .into_iter()
            .flatten()
            .map(|s| key(&s.0))
            .find(|v| v.as_str().is_some())
            .cloned()
            .unwrap_or_default()
    }

    fn player_list(&self) -> Option<Capped<Player, MAX_PLAYERS>> {
        let p = &self.players.as_ref()?.0;
        Some(Capped {
            kept: p
                .kept
                .iter()
                .map(|(_, e)| {
                    let e = &e.0;
                    with_extra(
                        Player {
                            name: e.name.as_str().map(Text::from),
                            global_id: e.uuid.as_str().map(Text::from),
                            ..Player::default()
                        },
                        &[("World", &e.world)],
                    )
                })
                .collect(),
            total: p.total,
        })
    }
}

/// The status the document says (see the module's documentation).
pub fn to_status(d: &QueryDoc) -> Status {
    let universe = d.universe.as_ref().map(|u| &u.0);
    let basic = d.basic.as_ref().map(|b| &b.0);
    let players = d.player_list();
    let none = Scalar::default();
    Status {
        game_name: Some(Text::from("Hytale")),
        host_name: d.either(|s| &s.name).as_str().map(Text::from),
        game_version: d.either(|s| &s.version).as_str().map(Text::from),
        slot_max: d.either(|s| &s.max_players).number(),
        player_count: universe
            .and_then(|u| u.current_players.number())
            .or_else(|| basic.and_then(|b| b.current_players.number()))
            .or_else(|| players.as_ref().and_then(|p| u32::try_from(p.total).ok())),
        map: universe
            .and_then(|u| u.default_world.as_str())
            .map(MapInfo::named),
        players: players.map(|p| p.kept),
        addons: d.plugins.as_ref().map(|p| {
            p.0.kept
                .iter()
                .map(|(id, e)| AddOn {
                    short_name: Some(Text::from(id.as_str())),
                    version: e.0.version.as_str().map(Text::from),
                    active: e.0.enabled.as_str().and_then(|b| b.parse().ok()),
                    ..AddOn::default()
                })
                .collect()
        }),
        rules: Some(rules_of(&[
            ("Revision", &d.either(|s| &s.revision)),
            ("Patchline", &d.either(|s| &s.patchline)),
            ("ProtocolVersion", &d.either(|s| &s.protocol_version)),
            ("Address", basic.map_or(&none, |b| &b.address)),
        ])),
        ..Status::default()
    }
}

impl OneDoc for QueryDoc {
    fn documents() -> &'static [Document; 1] {
        &DOCUMENTS
    }

    fn refused(&self) -> Option<&'static str> {
        (self.basic.is_none() && self.server.is_none() && self.universe.is_none())
            .then_some("no Basic, Server or Universe: not Nitrado's query plugin (or its permissions hide them)")
    }

    fn answer(&self, warnings: &mut Vec<String>) -> (Status, Details) {
        let details = Listed::of(self.player_list().as_ref(), PATH, warnings);
        if let Some(p) = &self.plugins {
            warnings.extend(p.0.cut_warning(PATH, "plugins"));
        }
        (to_status(self), details)
    }

    fn headers() -> Vec<(&'static str, String)> {
        vec![("Accept", ACCEPT.into())]
    }
}

/// The machine's side for `o`: over TLS unless plain.
fn make(o: QueryOptions) -> OneDocument<QueryDoc> {
    if o.plain {
        return OneDocument::default();
    }
    OneDocument::over_tls(TlsRequest {
        server_name: o.server_name,
        insecure: o.insecure,
    })
}

http_json_query!(Hytale, OneDocument<QueryDoc>, make);

#[cfg(test)]
mod tests {
    use super::*;
    use crate::client_core::QueryDriver;
    use crate::client_http::parse_json;

    #[test]
    fn both_shapes_of_players_and_tls_by_default() {
        let d: QueryDoc = parse_json(
            br#"{"Basic":{"Name":"b","CurrentPlayers":3,"MaxPlayers":9},"Players":{"u1":{"Name":"a","UUID":"u1"}},"Plugins":{"Nitrado:Query":{"Version":"1.1","Loaded":true,"Enabled":true}}}"#,
            PATH,
        )
        .unwrap();
        let s = to_status(&d);
        assert_eq!(s.host_name.as_deref(), Some("b"));
        assert_eq!((s.player_count, s.slot_max), (Some(3), Some(9)));
        assert_eq!(s.players.unwrap()[0].global_id.as_deref(), Some("u1"));
        assert_eq!(s.addons.unwrap()[0].active, Some(true));
        let d: QueryDoc = parse_json(
            br#"{"Universe":{},"Players":[{"Name":"x"},{"Name":"y"}]}"#,
            PATH,
        )
        .unwrap();
        assert_eq!(to_status(&d).player_count, Some(2));
        assert!(parse_json::<QueryDoc>(br#"{}"#, PATH)
            .unwrap()
            .refused()
            .is_some());
        let t = std::time::Instant::now();
        let m = QueryMachine::new(QueryOptions::default(), crate::client::Timing::default(), t);
        assert_eq!(m.tls(), Some(TlsRequest::default()));
        let o = QueryOptions {
            plain: true,
            ..QueryOptions::default()
        };
        let m = QueryMachine::new(o, crate::client::Timing::default(), t);
        assert_eq!(m.tls(), None);
    }
}
