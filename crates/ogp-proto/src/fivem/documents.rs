//! FiveM's three JSON documents, read with caps, and their mapping to the shared
//! [`Status`].
//!
//! Each document is deserialized into a typed form that keeps only what is mapped:
//! what is not named (keys a server adds, the base64 `icon`, whose length alone is
//! kept) is skipped without being held; values that should be text but are numbers,
//! booleans or anything else (servers send `sv_maxclients` as `32` or `"32"`) are read
//! leniently ([`Scalar`]); lists and maps are cut at their caps and counted past them.
//! JSON nesting is bounded by serde_json's recursion limit (128).
//!
//! | document | key | status |
//! |---|---|---|
//! | `/dynamic.json` | `hostname` | `host_name` (colour codes `^0`–`^9` stripped as Quake III's, the raw name in `host_name_raw`) |
//! | | `clients` | `player_count` |
//! | | `sv_maxclients` | `slot_max` |
//! | | `mapname`, `gametype` | `map`, `game_type` |
//! | | `iv` | [`Details::iv`](super::client::Details) |
//! | `/info.json` | `vars` | `rules`, in the order sent (at most [`MAX_VARS`]); `vars.sv_maxClients` is `slot_max` and `vars.sv_projectName` (else `sv_hostname`) the host name when `/dynamic.json` has none |
//! | | `vars.gamename` | `game_name`: `gta5` → `FiveM`, `rdr3` → `RedM`, else as sent (none: `FiveM`) |
//! | | `resources` | `addons` (short name, active), at most [`MAX_RESOURCES`] |
//! | | `server` | `game_version` (`FXServer-master SERVER v1.0.0.5535 win32`), and `os` from its last word (`win32`, `linux`) |
//! | | `version`, `enhancedHostSupport`, `requestSteamTicket`, `icon` (its length) | [`Details`](super::client::Details) |
//! | `/players.json` | each `name`, `id`, `ping`, `identifiers` | `players`: `name` (colours stripped, raw in `name_raw`), `id`, `ping`, `extra["identifiers"]` (joined with `, `, at most [`MAX_IDENTIFIERS`]); at most [`MAX_PLAYERS`] kept |
//!
//! Without `/dynamic.json`, `player_count` is the length of `/players.json`.

use std::fmt;

use serde::de::{Deserializer, IgnoredAny, MapAccess, Visitor};
use serde::Deserialize;

use crate::bounded::MAX_LIST_ENTRIES;
pub use crate::client_http::{Capped, Length, Scalar};
use crate::model::{AddOn, MapInfo, Os, Player, Rules};
use crate::quake3::color;
use crate::text::Text;
use crate::Status;

/// Players kept of `/players.json` (the rest are counted).
pub const MAX_PLAYERS: usize = MAX_LIST_ENTRIES;
/// Resources kept of `/info.json`.
pub const MAX_RESOURCES: usize = MAX_LIST_ENTRIES;
/// Variables kept of `/info.json`.
pub const MAX_VARS: usize = 512;
/// Identifiers kept of one player.
pub const MAX_IDENTIFIERS: usize = 16;

/// The variables of `/info.json`, in the order sent: at most [`MAX_VARS`], and how
/// many there were.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Vars {
    /// Name and value.
    pub kept: Vec<(String, Scalar)>,
    /// How many there were.
    pub total: usize,
}

impl Vars {
    /// The value of `key` (the first, when sent twice).
    pub fn get(&self, key: &str) -> Option<&str> {
        self.kept
            .iter()
            .find(|(k, _)| k == key)
            .and_then(|(_, v)| v.as_str())
    }
}

impl<'de> Deserialize<'de> for Vars {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = Vars;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("an object of variables")
            }
            fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Vars, A::Error> {
                let mut out = Vars::default();
                while out.kept.len() < MAX_VARS {
                    match map.next_entry::<String, Scalar>()? {
                        Some(kv) => out.kept.push(kv),
                        None => {
                            out.total = out.kept.len();
                            return Ok(out);
                        }
                    }
                }
                out.total = out.kept.len();
                while map.next_entry::<IgnoredAny, IgnoredAny>()?.is_some() {
                    out.total = out.total.saturating_add(1);
                }
                Ok(out)
            }
        }
        d.deserialize_map(V)
    }
}

/// `/dynamic.json`.
#[derive(Debug, Clone, Default, PartialEq, Eq, Deserialize)]
#[serde(default)]
pub struct Dynamic {
    /// `hostname`.
    pub hostname: Scalar,
    /// `clients`.
    pub clients: Scalar,
    /// `sv_maxclients`.
    pub sv_maxclients: Scalar,
    /// `mapname`.
    pub mapname: Scalar,
    /// `gametype`.
    pub gametype: Scalar,
    /// `iv`.
    pub iv: Scalar,
}

/// `/info.json`.
#[derive(Debug, Clone, Default, PartialEq, Eq, Deserialize)]
#[serde(default)]
pub struct Info {
    /// `vars`.
    pub vars: Vars,
    /// `resources`.
    pub resources: Capped<Scalar, MAX_RESOURCES>,
    /// `server`.
    pub server: Scalar,
    /// `version`.
    pub version: Scalar,
    /// `enhancedHostSupport`.
    #[serde(rename = "enhancedHostSupport")]
    pub enhanced_host_support: Scalar,
    /// `requestSteamTicket`.
    #[serde(rename = "requestSteamTicket")]
    pub request_steam_ticket: Scalar,
    /// `icon`: its length only.
    pub icon: Option<Length>,
}

/// One entry of `/players.json`.
#[derive(Debug, Clone, Default, PartialEq, Eq, Deserialize)]
#[serde(default)]
pub struct PlayerEntry {
    /// `name`.
    pub name: Scalar,
    /// `id`: the server id.
    pub id: Scalar,
    /// `ping`, in milliseconds.
    pub ping: Scalar,
    /// `identifiers` (`license:…`, `discord:…`, `fivem:…`).
    pub identifiers: Capped<Scalar, MAX_IDENTIFIERS>,
}

/// `/players.json`.
pub type Players = Capped<PlayerEntry, MAX_PLAYERS>;

/// What of the three documents came.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Documents {
    /// `/dynamic.json`.
    pub dynamic: Option<Dynamic>,
    /// `/info.json`.
    pub info: Option<Info>,
    /// `/players.json`.
    pub players: Option<Players>,
}

fn text(s: &str) -> Text {
    Text::from(s)
}

/// A name without its colour codes, and the raw name when it had some.
fn plain_and_raw(raw: &str) -> (Text, Option<Text>) {
    let plain = color::strip(raw);
    let had = plain != raw;
    (text(&plain), had.then(|| text(raw)))
}

/// The game a `gamename` variable names.
pub fn game_of(gamename: Option<&str>) -> &str {
    match gamename.map(str::trim) {
        None | Some("") => "FiveM",
        Some(g) if g.eq_ignore_ascii_case("gta5") => "FiveM",
        Some(g) if g.eq_ignore_ascii_case("rdr3") => "RedM",
        Some(g) => g,
    }
}

/// The status the documents say (see the module's documentation), and warnings about
/// what was cut.
pub fn to_status(d: &Documents) -> (Status, Vec<String>) {
    let mut s = Status::default();
    let mut warnings = Vec::new();
    let vars = d.info.as_ref().map(|i| &i.vars);
    let var = |k: &str| vars.and_then(|v| v.get(k));
    let dynamic = d.dynamic.as_ref();

    let host = dynamic
        .and_then(|x| x.hostname.as_str())
        .or_else(|| var("sv_hostname"))
        .or_else(|| var("sv_projectName"));
    if let Some(h) = host {
        let (plain, raw) = plain_and_raw(h);
        s.host_name = Some(plain);
        s.host_name_raw = raw;
    }
    if let Some(x) = dynamic {
        s.map = x
            .mapname
            .as_str()
            .filter(|m| !m.is_empty())
            .map(MapInfo::named);
        s.game_type = x.gametype.as_str().filter(|g| !g.is_empty()).map(text);
        s.player_count = x.clients.number();
        s.slot_max = x.sv_maxclients.number();
    }
    if s.slot_max.is_none() {
        s.slot_max = var("sv_maxClients").and_then(|m| m.trim().parse().ok());
    }
    if let Some(info) = &d.info {
        s.game_name = Some(text(game_of(var("gamename"))));
        if let Some(server) = info.server.as_str() {
            s.game_version = Some(text(server));
            s.os = match server.rsplit(' ').next().map(str::to_ascii_lowercase) {
                Some(w) if w.starts_with("win") => Some(Os::Windows),
                Some(w) if w.starts_with("linux") => Some(Os::Linux),
                _ => None,
            };
        }
        s.rules = Some(Rules(
            info.vars
                .kept
                .iter()
                .map(|(k, v)| (text(k), text(v.as_str().unwrap_or(""))))
                .collect(),
        ));
        if info.vars.total > info.vars.kept.len() {
            warnings.push(format!(
                "/info.json: {} variables, the first {MAX_VARS} kept",
                info.vars.total
            ));
        }
        s.addons = Some(
            info.resources
                .kept
                .iter()
                .filter_map(|r| r.as_str())
                .map(|r| {
                    let mut a = AddOn::named(r);
                    a.active = Some(true);
                    a
                })
                .collect(),
        );
        warnings.extend(info.resources.cut_warning("/info.json", "resources"));
    }
    if let Some(list) = &d.players {
        let players = list
            .kept
            .iter()
            .map(|e| {
                let mut p = Player::default();
                if let Some(n) = e.name.as_str() {
                    let (plain, raw) = plain_and_raw(n);
                    p.name = Some(plain);
                    p.name_raw = raw;
                }
                p.id = e.id.number();
                p.ping = e.ping.number();
                let ids: Vec<&str> = e
                    .identifiers
                    .kept
                    .iter()
                    .filter_map(Scalar::as_str)
                    .collect();
                if !ids.is_empty() {
                    p.extra.insert("identifiers".into(), text(&ids.join(", ")));
                }
                p
            })
            .collect();
        s.players = Some(players);
        if let Some(w) = list.cut_warning("/players.json", "players") {
            warnings.push(w);
            if s.player_count.is_none() {
                s.player_count = u32::try_from(list.total).ok();
            }
        }
    }
    (s, warnings)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::client_http::parse_json;

    #[test]
    fn scalars_are_read_leniently() {
        let d: Dynamic = parse_json(
            br#"{"hostname":"^1Red ^7Server","clients":3,"sv_maxclients":"48","mapname":null,"gametype":[1,{"a":2}],"extra":{"x":[1]}}"#,
            "d",
        )
        .unwrap();
        let docs = Documents {
            dynamic: Some(d),
            ..Documents::default()
        };
        let (s, w) = to_status(&docs);
        assert!(w.is_empty());
        assert_eq!(s.host_name.as_deref(), Some("Red Server"));
        assert_eq!(s.host_name_raw.as_deref(), Some("^1Red ^7Server"));
        assert_eq!((s.player_count, s.slot_max), (Some(3), Some(48)));
        assert_eq!((s.map, s.game_type), (None, None));
    }

    #[test]
    fn redm_is_told_by_its_gamename() {
        let info: Info =
            parse_json(br#"{"vars":{"gamename":"rdr3","sv_maxClients":"32"},"server":"FXServer-master SERVER v1.0.0.7290 linux"}"#, "i")
                .unwrap();
        let docs = Documents {
            info: Some(info),
            ..Documents::default()
        };
        let (s, _) = to_status(&docs);
        assert_eq!(s.game_name.as_deref(), Some("RedM"));
        assert_eq!(s.slot_max, Some(32));
        assert_eq!(s.os, Some(Os::Linux));
        assert_eq!(game_of(Some("gta5")), "FiveM");
        assert_eq!(game_of(None), "FiveM");
        assert_eq!(game_of(Some("ny")), "ny");
    }

    #[test]
    fn lists_are_cut_and_counted() {
        let many = format!(
            "[{}]",
            (0..MAX_PLAYERS + 10)
                .map(|i| format!(
                    r#"{{"name":"p{i}","id":{i},"ping":{i},"identifiers":[{}]}}"#,
                    (0..40)
                        .map(|k| format!("\"x:{k}\""))
                        .collect::<Vec<_>>()
                        .join(",")
                ))
                .collect::<Vec<_>>()
                .join(",")
        );
        let players: Players = parse_json(many.as_bytes(), "p").unwrap();
        assert_eq!(
            (players.kept.len(), players.total),
            (MAX_PLAYERS, MAX_PLAYERS + 10)
        );
        assert_eq!(players.kept[0].identifiers.kept.len(), MAX_IDENTIFIERS);
        assert_eq!(players.kept[0].identifiers.total, 40);
        let docs = Documents {
            players: Some(players),
            ..Documents::default()
        };
        let (s, w) = to_status(&docs);
        assert_eq!(s.player_count(), Some((MAX_PLAYERS + 10) as u32));
        assert_eq!(s.players.as_ref().unwrap().len(), MAX_PLAYERS);
        assert_eq!(w.len(), 1, "{w:?}");
        let vars = format!(
            "{{\"vars\":{{{}}}}}",
            (0..MAX_VARS + 1)
                .map(|i| format!("\"k{i}\":\"v\""))
                .collect::<Vec<_>>()
                .join(",")
        );
        let info: Info = parse_json(vars.as_bytes(), "i").unwrap();
        assert_eq!(
            (info.vars.kept.len(), info.vars.total),
            (MAX_VARS, MAX_VARS + 1)
        );
        // a players document that is not a list is not shaped as expected
        assert!(parse_json::<Players>(b"{\"a\":1}", "p").is_err());
    }
}
