//! The Farming Simulator query as a machine of the client core's HTTP shape
//! (`client_http`): `GET /feed/dedicated-server-stats.xml?code=CODE` on the web
//! interface's port; no I/O, time passed in. The body is XML, read by the bounded
//! [`crate::xml`] reader as it goes: only what is mapped is kept.
//!
//! The document's mapping:
//!
//! | element, attribute | status |
//! |---|---|
//! | `Server` (the root; anything else is refused) | |
//! | `Server@name` | `host_name` |
//! | `Server@mapName` | `map` |
//! | `Server@version` | `game_version` |
//! | `Server@game` | `game_name` (`Farming Simulator` when absent) |
//! | `Server@dayTime`, `Server@mapSize` | `rules` |
//! | `Slots@numUsed`, `Slots@capacity` | `player_count`, `slot_max` |
//! | `Slots/Player` with `isUsed="true"` | `players`: the text is `name`; `isAdmin`, `uptime` in `extra`; at most [`MAX_PLAYERS`] |
//! | `Mods/Mod` | `addons`: `@name` `short_name`, the text `long_name`, `@version` `version`; at most [`MAX_MODS`] |
//!
//! Everything else (vehicles, farmlands) is read past without being kept.

use crate::bounded::{MAX_LIST_ENTRIES, MAX_STRING_BYTES};
use crate::client_http::{http_json_query, required, Capped, Document, HttpJson, Listed};
use crate::error::{DecodeError, DecodeErrorKind};
use crate::http::{query_value, HttpLimits, Secret};
use crate::model::{AddOn, MapInfo, Player, Rules};
use crate::text::Text;
use crate::xml::{self, Event, XmlLimits};
use crate::Status;

/// The default port (the web interface's).
pub const DEFAULT_PORT: u16 = 8080;
/// The body, at most (a big farm's vehicles and fields are a few hundred KB).
pub const MAX_BODY: usize = 2 * 1024 * 1024;
/// Players kept (the rest are counted).
pub const MAX_PLAYERS: usize = MAX_LIST_ENTRIES;
/// Mods kept (the rest are counted).
pub const MAX_MODS: usize = 1024;
/// The document's path, without the code.
pub const PATH: &str = "/feed/dedicated-server-stats.xml";
/// What the document may make the XML reader do.
pub const XML_LIMITS: XmlLimits = XmlLimits {
    max_depth: 16,
    max_elements: 200_000,
    max_attributes: 64,
};

const DOCUMENTS: [Document; 1] = [required(
    PATH,
    HttpLimits::new(crate::client_http::HEAD_LIMIT, MAX_BODY),
)];

/// Farming Simulator's own settings of one query (the timers are
/// [`Timing`](crate::client::Timing)).
#[derive(Debug, Clone, PartialEq, Eq, Default)]
#[non_exhaustive]
pub struct QueryOptions {
    /// The server's stats code (`?code=`): never in events or errors. Without it the
    /// server refuses.
    pub code: Option<Secret>,
}

/// What a Farming Simulator answer says beyond the status.
pub type Details = Listed;

/// What the stats feed says, as read.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Feed {
    /// `Server`'s attributes that are mapped.
    pub server: Vec<(String, String)>,
    /// `Slots@numUsed`, `Slots@capacity`.
    pub slots: (Option<u32>, Option<u32>),
    /// The used slots' players.
    pub players: Capped<Player, MAX_PLAYERS>,
    /// The mods.
    pub mods: Capped<AddOn, MAX_MODS>,
}

/// `s` cut to [`MAX_STRING_BYTES`] at a character boundary, spaces around it trimmed.
fn cut(s: &str) -> String {
    let s = s.trim();
    let mut end = s.len().min(MAX_STRING_BYTES);
    while !s.is_char_boundary(end) {
        end = end.saturating_sub(1);
    }
    s.get(..end).unwrap_or_default().to_owned()
}

fn attr<'a>(attributes: &'a [(String, String)], key: &str) -> Option<&'a str> {
    attributes
        .iter()
        .find(|(k, _)| k == key)
        .map(|(_, v)| v.as_str())
}

impl Feed {
    /// Reads the document (see the module's documentation).
    pub fn read(body: &[u8]) -> Result<Self, DecodeError> {
        let mut feed = Feed::default();
        let mut root = None::<bool>;
        // (depth 1, 2, 3 names of the open path), and the text of the entry open
        let mut path: [String; 3] = Default::default();
        let mut text = String::new();
        // what the text of the entry open names: a kept player (true) or mod (false)
        let mut naming = None::<bool>;
        xml::read(body, PATH, &XML_LIMITS, |e| match e {
            Event::Open {
                name,
                attributes,
                depth,
            } => {
                if let Some(p) = depth.checked_sub(1).and_then(|i| path.get_mut(i)) {
                    name.clone_into(p);
                }
                match (depth, path[0].as_str(), path[1].as_str()) {
                    (1, _, _) => {
                        root = Some(name == "Server");
                        for key in ["name", "mapName", "version", "game", "dayTime", "mapSize"] {
                            if let Some(v) = attr(attributes, key) {
                                feed.server.push((key.to_owned(), cut(v)));
                            }
                        }
                    }
                    (2, "Server", "Slots") => {
                        let n = |k| attr(attributes, k).and_then(|v| v.trim().parse().ok());
                        feed.slots = (n("numUsed"), n("capacity"));
                    }
                    (3, "Server", "Slots") if name == "Player" => {
                        text.clear();
                        naming = None;
                        if attr(attributes, "isUsed") == Some("true") {
                            let mut p = Player::default();
                            for key in ["isAdmin", "uptime"] {
                                if let Some(v) = attr(attributes, key) {
                                    p.extra.insert(Text::from(key), Text::from(cut(v)));
                                }
                            }
                            feed.players.total = feed.players.total.saturating_add(1);
                            if feed.players.kept.len() < MAX_PLAYERS {
                                feed.players.kept.push(p);
                                naming = Some(true);
                            }
                        }
                    }
                    (3, "Server", "Mods") if name == "Mod" => {
                        text.clear();
                        naming = None;
                        feed.mods.total = feed.mods.total.saturating_add(1);
                        if feed.mods.kept.len() < MAX_MODS {
                            feed.mods.kept.push(AddOn {
                                short_name: attr(attributes, "name").map(|v| Text::from(cut(v))),
                                version: attr(attributes, "version").map(|v| Text::from(cut(v))),
                                ..AddOn::default()
                            });
                            naming = Some(false);
                        }
                    }
                    _ => {}
                }
            }
            Event::Text { text: t, depth: 3 } => {
                if text.len() < MAX_STRING_BYTES {
                    text.push_str(t);
                }
            }
            Event::Text { .. } => {}
            Event::Close { depth: 3 } => {
                let value = (!text.trim().is_empty()).then(|| Text::from(cut(&text)));
                match naming.take() {
                    Some(true) => {
                        if let Some(p) = feed.players.kept.last_mut() {
                            p.name = value;
                        }
                    }
                    Some(false) => {
                        if let Some(m) = feed.mods.kept.last_mut() {
                            m.long_name = value;
                        }
                    }
                    None => {}
                }
                text.clear();
            }
            Event::Close { .. } => {}
        })?;
        if root != Some(true) {
            return Err(DecodeError::new(
                0,
                PATH,
                DecodeErrorKind::Invalid(
                    "the root is not Server: not a Farming Simulator stats feed",
                ),
            ));
        }
        Ok(feed)
    }

    fn server(&self, key: &str) -> Option<&str> {
        attr(&self.server, key)
    }

    /// The status the feed says (see the module's documentation).
    pub fn to_status(&self) -> Status {
        let rules: Vec<(Text, Text)> = ["dayTime", "mapSize"]
            .iter()
            .filter_map(|k| Some((Text::from(*k), Text::from(self.server(k)?))))
            .collect();
        Status {
            game_name: Some(Text::from(
                self.server("game").unwrap_or("Farming Simulator"),
            )),
            host_name: self.server("name").map(Text::from),
            map: self.server("mapName").map(MapInfo::named),
            game_version: self.server("version").map(Text::from),
            player_count: self.slots.0,
            slot_max: self.slots.1,
            players: Some(self.players.kept.clone()),
            addons: Some(self.mods.kept.clone()),
            rules: Some(Rules(rules)),
            ..Status::default()
        }
    }
}

/// The protocol's side of the HTTP machine.
#[derive(Debug, Clone, Default)]
pub struct FarmingSimulator {
    target: Option<Secret>,
    feed: Option<Feed>,
}

impl From<QueryOptions> for FarmingSimulator {
    fn from(o: QueryOptions) -> Self {
        Self {
            target: o
                .code
                .map(|c| Secret(format!("{PATH}?code={}", query_value(&c.0)))),
            feed: None,
        }
    }
}

impl HttpJson for FarmingSimulator {
    type Details = Details;

    fn documents(&self) -> &'static [Document] {
        &DOCUMENTS
    }

    fn target(&self, _i: usize) -> Option<String> {
        self.target.as_ref().map(|t| t.0.clone())
    }

    fn headers(&self) -> Vec<(&'static str, String)> {
        vec![("Accept", "application/xml, text/xml".into())]
    }

    fn read(&mut self, _i: usize, body: &[u8]) -> Result<(), DecodeError> {
        self.feed = Some(Feed::read(body)?);
        Ok(())
    }

    fn finish(
        &mut self,
        _missing: &[&'static str],
        warnings: &mut Vec<String>,
    ) -> (Status, Details) {
        let feed = self.feed.take().unwrap_or_default();
        let details = Listed::of(Some(&feed.players), PATH, warnings);
        warnings.extend(feed.mods.cut_warning(PATH, "mods"));
        (feed.to_status(), details)
    }
}

http_json_query!(Farmingsimulator, FarmingSimulator);

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn used_slots_mods_and_the_code_kept_secret() {
        let doc = br#"<?xml version="1.0" encoding="utf-8" standalone="no" ?>
<Server game="Farming Simulator 22" version="1.2" name="A &amp; B" mapName="Elmcreek" dayTime="1000" mapSize="2048">
 <Slots capacity="4" numUsed="1">
  <Player isUsed="true" isAdmin="false" uptime="12" x="1" y="2" z="3"> Farmer </Player>
  <Player isUsed="false"/>
 </Slots>
 <Vehicles><Vehicle name="x"><Fill type="WHEAT"/></Vehicle></Vehicles>
 <Mods><Mod name="FS22_a" author="me" version="1.0.0.0" hash="h">Mod A</Mod></Mods>
</Server>"#;
        let s = Feed::read(doc).unwrap().to_status();
        assert_eq!(s.host_name.as_deref(), Some("A & B"));
        assert_eq!(s.game_name.as_deref(), Some("Farming Simulator 22"));
        assert_eq!((s.player_count, s.slot_max), (Some(1), Some(4)));
        let players = s.players.unwrap();
        assert_eq!(players.len(), 1);
        assert_eq!(players[0].name.as_deref(), Some("Farmer"));
        assert_eq!(players[0].extra["uptime"], "12");
        let mods = s.addons.unwrap();
        assert_eq!(mods[0].long_name.as_deref(), Some("Mod A"));
        assert_eq!(mods[0].short_name.as_deref(), Some("FS22_a"));
        let e = Feed::read(b"<html><body>no</body></html>").unwrap_err();
        assert!(e.to_string().contains("not a Farming Simulator"), "{e}");
        let p = FarmingSimulator::from(QueryOptions {
            code: Some(Secret("s e&cret".into())),
        });
        assert_eq!(
            p.target(0).as_deref(),
            Some("/feed/dedicated-server-stats.xml?code=s%20e%26cret")
        );
        assert!(!format!("{p:?}").contains("s%20e"), "{p:?}");
    }
}
