//! The games catalogue: for each game, the protocol its servers answer, its default game
//! port, the rule that gives its query port, and how its servers name it in their
//! answers. The data is `catalogue/games.toml`, built into the crate (no file is read at
//! run time) and described in the repository's `docs/games.md`.
//!
//! * [`catalogue`]: the built-in catalogue.
//! * [`Catalogue::get`] finds a game by id or alias, [`Catalogue::closest`] suggests the
//!   nearest ids for a name that is none.
//! * [`Game::query_port`] applies the game's [`QueryPort`] rule to a game port.
//! * [`Catalogue::identify`] names the game an answer comes from, and the [`Rule`] that
//!   matched.
//!
//! Sans-IO like the rest of the crate: nothing here touches the network.

use std::collections::{BTreeMap, HashMap, HashSet};
use std::fmt;
use std::sync::OnceLock;

use serde::Deserialize;

use crate::protocol::Protocol;
use crate::Status;

/// The catalogue's text, as built into the crate.
pub const CATALOGUE_TOML: &str = include_str!("../catalogue/games.toml");

/// Most games a catalogue may hold (a bound on what [`Catalogue::parse`] builds).
const MAX_GAMES: usize = 10_000;

/// Where a game's servers answer queries, from its game port.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum QueryPort {
    /// On the game port.
    Same,
    /// On the game port plus this (negative: minus).
    Offset(i32),
    /// Always on this port, whatever the game port.
    Fixed(u16),
}

impl QueryPort {
    /// The query port for `game_port`; `None` when an offset leaves 1..=65535.
    pub fn apply(self, game_port: u16) -> Option<u16> {
        match self {
            Self::Same => Some(game_port),
            Self::Fixed(p) => Some(p),
            Self::Offset(n) => i32::from(game_port)
                .checked_add(n)
                .and_then(|p| u16::try_from(p).ok())
                .filter(|p| *p != 0),
        }
    }

    fn parse(s: &str) -> Option<Self> {
        let s = s.trim();
        if s.eq_ignore_ascii_case("same") {
            return Some(Self::Same);
        }
        if let Some(n) = s.strip_prefix('+') {
            return n.parse::<u16>().ok().map(|n| Self::Offset(i32::from(n)));
        }
        if let Some(n) = s.strip_prefix('-') {
            return n.parse::<u16>().ok().map(|n| Self::Offset(-i32::from(n)));
        }
        s.parse::<u16>().ok().filter(|p| *p != 0).map(Self::Fixed)
    }
}

impl fmt::Display for QueryPort {
    /// `same`, `+N`, `-N` or `N`, as the catalogue writes it.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Same => f.write_str("same"),
            Self::Offset(n) if *n >= 0 => write!(f, "+{n}"),
            Self::Offset(n) => write!(f, "{n}"),
            Self::Fixed(p) => write!(f, "{p}"),
        }
    }
}

/// How an answer names a game: what a catalogue entry's `match` lists.
#[derive(Debug, Clone, Default, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields)]
#[non_exhaustive]
pub struct Match {
    /// A2S: Steam application ids (the full id, from the extra data's game id when sent).
    #[serde(default)]
    pub a2s_app_id: Vec<u32>,
    /// A2S: game directories ("folder").
    #[serde(default)]
    pub a2s_folder: Vec<String>,
    /// A2S: game descriptions; only breaks ties.
    #[serde(default)]
    pub a2s_game: Vec<String>,
    /// GameSpy v2 and v3: `gamename` values.
    #[serde(default)]
    pub gamespy_gamename: Vec<String>,
    /// GameSpy v2 and v3: `gamevariant` values; only breaks ties.
    #[serde(default)]
    pub gamespy_gamevariant: Vec<String>,
    /// Quake III: `gamename` (or `com_gamename`, `fs_game`) values; the Doom 3 engine's
    /// `gamename` rule too.
    #[serde(default)]
    pub quake3_gamename: Vec<String>,
    /// Quake III: `protocol` numbers; only breaks ties.
    #[serde(default)]
    pub quake3_protocol: Vec<u32>,
    /// OGP: GameIDs.
    #[serde(default)]
    pub ogp_game_id: Vec<u16>,
    /// Unreal 2: game types of the server information (`xDeathMatch`, `KFGameType`).
    #[serde(default)]
    pub unreal2_gametype: Vec<String>,
    /// ASE: the game name field (`mta`).
    #[serde(default)]
    pub ase_gamename: Vec<String>,
    /// Cube 2: the game its ping reply's attribute layout names (`sauerbraten`,
    /// `redeclipse`).
    #[serde(default)]
    pub cube2_game: Vec<String>,
    /// Quake 2: the `gamename` variable (`baseq2`), without its padding.
    #[serde(default)]
    pub quake2_gamename: Vec<String>,
    /// Any answer in the game's own protocol names it: the protocol is spoken by this
    /// game alone (Minecraft's Server List Ping, Bedrock's RakNet ping).
    #[serde(default)]
    pub by_protocol: bool,
}

/// The rule that identified a game, strongest first.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
#[non_exhaustive]
pub enum Rule {
    /// The A2S app id.
    A2sAppId,
    /// The A2S game directory.
    A2sFolder,
    /// The GameSpy v2 or v3 `gamename`.
    GamespyGamename,
    /// The Quake III `gamename`.
    Quake3Gamename,
    /// The OGP GameID.
    OgpGameId,
    /// The Unreal 2 game type.
    Unreal2Gametype,
    /// The ASE game name.
    AseGamename,
    /// The Cube 2 game of the attribute layout.
    Cube2Game,
    /// The Quake 2 `gamename`.
    Quake2Gamename,
    /// The protocol itself, spoken by this game alone.
    Protocol,
}

impl Rule {
    /// The rule's name in JSON and in the catalogue's `match`: `a2s_app_id`,
    /// `a2s_folder`, `gamespy_gamename`, `quake3_gamename`, `ogp_game_id`,
    /// `unreal2_gametype`, `ase_gamename`, `cube2_game`,
    /// `quake2_gamename`, `by_protocol`.
    pub const fn name(self) -> &'static str {
        match self {
            Self::A2sAppId => "a2s_app_id",
            Self::A2sFolder => "a2s_folder",
            Self::GamespyGamename => "gamespy_gamename",
            Self::Quake3Gamename => "quake3_gamename",
            Self::OgpGameId => "ogp_game_id",
            Self::Unreal2Gametype => "unreal2_gametype",
            Self::AseGamename => "ase_gamename",
            Self::Cube2Game => "cube2_game",
            Self::Quake2Gamename => "quake2_gamename",
            Self::Protocol => "by_protocol",
        }
    }
}

impl fmt::Display for Rule {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// One game of the catalogue.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct Game {
    /// Its id (lower case).
    pub id: String,
    /// Other names it is found by (lower case).
    pub aliases: Vec<String>,
    /// The name people read.
    pub name: String,
    /// The protocol its servers answer.
    pub protocol: Protocol,
    /// The variant of the protocol, when it has one.
    pub dialect: Option<String>,
    /// Its default game port.
    pub port: u16,
    /// Where its query port is.
    pub query: QueryPort,
    /// How its servers name it in their answers.
    pub matches: Match,
    /// Notes for people.
    pub notes: Option<String>,
    /// Keys of [`Catalogue::sources`]: where its facts come from.
    pub sources: Vec<String>,
}

impl Game {
    /// The query port for a game port (`None`: the default game port); `None` when the
    /// rule's offset leaves the port range.
    pub fn query_port(&self, game_port: Option<u16>) -> Option<u16> {
        self.query.apply(game_port.unwrap_or(self.port))
    }
}

/// A game named by an answer, and the rule that named it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub struct Identified<'a> {
    /// The game.
    pub game: &'a Game,
    /// The strongest rule that matched.
    pub rule: Rule,
}

/// Why a catalogue text was refused.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CatalogueError(String);

impl fmt::Display for CatalogueError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "games catalogue: {}", self.0)
    }
}

impl std::error::Error for CatalogueError {}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawCatalogue {
    #[serde(default)]
    sources: BTreeMap<String, String>,
    #[serde(default)]
    game: Vec<RawGame>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawGame {
    id: String,
    #[serde(default)]
    aliases: Vec<String>,
    name: String,
    protocol: String,
    #[serde(default)]
    dialect: Option<String>,
    port: i64,
    query: String,
    #[serde(default, rename = "match")]
    matches: Match,
    #[serde(default)]
    notes: Option<String>,
    #[serde(default)]
    sources: Vec<String>,
}

/// The games, checked: see [`Catalogue::parse`].
#[derive(Debug, Clone, Default)]
pub struct Catalogue {
    games: Vec<Game>,
    sources: BTreeMap<String, String>,
    /// The games by identifying value, for [`Catalogue::identify`].
    index: Index,
}

/// The games (their places in `games`, in catalogue order) by each identifying value of
/// their `match` ([`Rule`]); text values in ASCII lower case, as they are compared.
/// Only a game listed under one of an answer's values can be named by it, so
/// `identify` scores those few instead of every game (13,000 instructions a result
/// went to the whole list, for each target of a scan).
#[derive(Debug, Clone, Default)]
struct Index {
    a2s_app_id: HashMap<u32, Vec<usize>>,
    a2s_folder: HashMap<String, Vec<usize>>,
    gamespy_gamename: HashMap<String, Vec<usize>>,
    quake3_gamename: HashMap<String, Vec<usize>>,
    ogp_game_id: HashMap<u16, Vec<usize>>,
    unreal2_gametype: HashMap<String, Vec<usize>>,
    ase_gamename: HashMap<String, Vec<usize>>,
    cube2_game: HashMap<String, Vec<usize>>,
    quake2_gamename: HashMap<String, Vec<usize>>,
    by_protocol: Vec<(Protocol, usize)>,
}

impl Index {
    fn of(games: &[Game]) -> Self {
        fn add<K: std::hash::Hash + Eq>(map: &mut HashMap<K, Vec<usize>>, k: K, i: usize) {
            let v = map.entry(k).or_default();
            if v.last() != Some(&i) {
                v.push(i);
            }
        }
        let mut x = Self::default();
        for (i, g) in games.iter().enumerate() {
            let m = &g.matches;
            for id in &m.a2s_app_id {
                add(&mut x.a2s_app_id, *id, i);
            }
            for f in &m.a2s_folder {
                add(&mut x.a2s_folder, f.to_ascii_lowercase(), i);
            }
            for n in &m.gamespy_gamename {
                add(&mut x.gamespy_gamename, n.to_ascii_lowercase(), i);
            }
            for n in &m.quake3_gamename {
                add(&mut x.quake3_gamename, n.to_ascii_lowercase(), i);
            }
            for id in &m.ogp_game_id {
                add(&mut x.ogp_game_id, *id, i);
            }
            for t in &m.unreal2_gametype {
                add(&mut x.unreal2_gametype, t.to_ascii_lowercase(), i);
            }
            for n in &m.ase_gamename {
                add(&mut x.ase_gamename, n.to_ascii_lowercase(), i);
            }
            for n in &m.cube2_game {
                add(&mut x.cube2_game, n.to_ascii_lowercase(), i);
            }
            for n in &m.quake2_gamename {
                add(&mut x.quake2_gamename, n.to_ascii_lowercase(), i);
            }
            if m.by_protocol {
                x.by_protocol.push((g.protocol, i));
            }
        }
        x
    }

    /// The games one of whose identifying values the answer carries, in catalogue
    /// order: a superset of those `Facts::score` scores.
    fn candidates(&self, f: &Facts<'_>) -> Vec<usize> {
        fn text<'m>(
            map: &'m HashMap<String, Vec<usize>>,
            v: Option<&str>,
        ) -> impl Iterator<Item = &'m usize> {
            v.filter(|v| !v.is_empty())
                .and_then(|v| map.get(&v.to_ascii_lowercase()))
                .into_iter()
                .flatten()
        }
        let mut out: Vec<usize> = f
            .a2s_app_id
            .and_then(|id| self.a2s_app_id.get(&id))
            .into_iter()
            .flatten()
            .chain(text(&self.a2s_folder, f.a2s_folder))
            .chain(text(&self.gamespy_gamename, f.gamespy_gamename))
            .chain(text(&self.quake3_gamename, f.quake3_gamename))
            .chain(text(&self.unreal2_gametype, f.unreal2_gametype))
            .chain(text(&self.ase_gamename, f.ase_gamename))
            .chain(text(&self.cube2_game, f.cube2_game))
            .chain(text(&self.quake2_gamename, f.quake2_gamename))
            .chain(
                f.ogp_game_id
                    .and_then(|id| self.ogp_game_id.get(&id))
                    .into_iter()
                    .flatten(),
            )
            .copied()
            .chain(
                self.by_protocol
                    .iter()
                    .filter(|(p, _)| f.protocol == Some(*p))
                    .map(|(_, i)| *i),
            )
            .collect();
        out.sort_unstable();
        out.dedup();
        out
    }
}

fn err(s: String) -> CatalogueError {
    CatalogueError(s)
}

fn valid_name(s: &str) -> bool {
    !s.is_empty()
        && s.len() <= 64
        && s.bytes()
            .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'-' || b == b'_')
}

impl Catalogue {
    /// Parses and checks a catalogue text: every protocol known, ports in 1..=65535 (the
    /// default game port, a fixed query port, and the default game port moved by an
    /// offset), ids and aliases lower-case, unique across ids and aliases, every entry
    /// with at least one source and only sources the catalogue lists, no two entries
    /// with the same non-empty `match`.
    pub fn parse(text: &str) -> Result<Self, CatalogueError> {
        let raw: RawCatalogue = toml::from_str(text).map_err(|e| err(e.message().into()))?;
        if raw.game.len() > MAX_GAMES {
            return Err(err(format!("more than {MAX_GAMES} games")));
        }
        let mut names = HashSet::new();
        // A match with `by_protocol` is told apart by its protocol too (QuakeWorld's and
        // Bedrock's answers name their games alike: by their protocol alone).
        let mut matches: Vec<(&Match, Option<Protocol>)> = Vec::new();
        let mut games = Vec::with_capacity(raw.game.len());
        for g in &raw.game {
            let id = &g.id;
            for n in std::iter::once(id).chain(&g.aliases) {
                if !valid_name(n) {
                    return Err(err(format!(
                        "{id}: {n:?} is not a lower-case name (a-z, 0-9, - and _)"
                    )));
                }
                if !names.insert(n.to_ascii_lowercase()) {
                    return Err(err(format!("{id}: the name {n:?} is taken twice")));
                }
            }
            if g.name.trim().is_empty() {
                return Err(err(format!("{id}: no display name")));
            }
            let protocol: Protocol = g.protocol.parse().map_err(|e| err(format!("{id}: {e}")))?;
            let port = u16::try_from(g.port)
                .ok()
                .filter(|p| *p != 0)
                .ok_or_else(|| err(format!("{id}: port {} is not in 1..=65535", g.port)))?;
            let query = QueryPort::parse(&g.query).ok_or_else(|| {
                err(format!(
                    "{id}: query {:?} is not same, +N, -N or a port in 1..=65535",
                    g.query
                ))
            })?;
            if query.apply(port).is_none() {
                return Err(err(format!(
                    "{id}: query {query} moves port {port} out of 1..=65535"
                )));
            }
            if g.sources.is_empty() {
                return Err(err(format!("{id}: no source")));
            }
            if let Some(s) = g.sources.iter().find(|s| !raw.sources.contains_key(*s)) {
                return Err(err(format!("{id}: source {s:?} is not in [sources]")));
            }
            if g.matches != Match::default() {
                let key = (&g.matches, g.matches.by_protocol.then_some(protocol));
                if matches.contains(&key) {
                    return Err(err(format!(
                        "{id}: its match is another game's: answers could not tell them apart"
                    )));
                }
                matches.push(key);
            }
            games.push(Game {
                id: id.clone(),
                aliases: g.aliases.clone(),
                name: g.name.clone(),
                protocol,
                dialect: g.dialect.clone(),
                port,
                query,
                matches: g.matches.clone(),
                notes: g.notes.clone(),
                sources: g.sources.clone(),
            });
        }
        Ok(Self {
            index: Index::of(&games),
            games,
            sources: raw.sources,
        })
    }

    /// Every game, in catalogue order.
    pub fn games(&self) -> &[Game] {
        &self.games
    }

    /// The sources, by key: where the facts come from.
    pub fn sources(&self) -> &BTreeMap<String, String> {
        &self.sources
    }

    /// The game with this id or alias, case-insensitively.
    pub fn get(&self, name: &str) -> Option<&Game> {
        let name = name.trim();
        self.games.iter().find(|g| {
            g.id.eq_ignore_ascii_case(name)
                || g.aliases.iter().any(|a| a.eq_ignore_ascii_case(name))
        })
    }

    /// The `n` games whose id or an alias is closest to `name` (Levenshtein distance,
    /// lower case), closest first; ties in catalogue order.
    pub fn closest(&self, name: &str, n: usize) -> Vec<&Game> {
        let name = name.trim().to_ascii_lowercase();
        let mut scored: Vec<(usize, usize, &Game)> = self
            .games
            .iter()
            .enumerate()
            .map(|(i, g)| {
                let d = std::iter::once(&g.id)
                    .chain(&g.aliases)
                    .map(|a| strsim::levenshtein(&name, a))
                    .min()
                    .unwrap_or(usize::MAX);
                (d, i, g)
            })
            .collect();
        scored.sort_by_key(|(d, i, _)| (*d, *i));
        scored.into_iter().take(n).map(|(_, _, g)| g).collect()
    }

    /// The games whose id, an alias, the name or the protocol contains `filter`,
    /// case-insensitively (an empty filter: every game).
    pub fn filter<'a>(&'a self, filter: &'a str) -> impl Iterator<Item = &'a Game> + 'a {
        let f = filter.trim().to_lowercase();
        self.games.iter().filter(move |g| {
            f.is_empty()
                || g.id.contains(&f)
                || g.aliases.iter().any(|a| a.contains(&f))
                || g.name.to_lowercase().contains(&f)
                || g.protocol.name() == f
        })
    }

    /// The game an answer of `protocol` with this status comes from, and the rule that
    /// named it; `None` when nothing matches.
    ///
    /// Only the answer's own protocol's identifiers count. Each game with at least one
    /// identifying value that the answer carries ([`Rule`]) is scored: one point per
    /// `match` field whose value the answer carries and matches, one off per such field
    /// that does not (so the game description tells CS2 from CS:GO, both app 730).
    /// The highest score wins, then the strongest rule, then catalogue order.
    pub fn identify(&self, protocol: Protocol, status: &Status) -> Option<Identified<'_>> {
        let facts = Facts::of(protocol, status);
        // Only games listed under one of the answer's values can score (in catalogue
        // order, so ties still go to the first).
        let candidates = self.index.candidates(&facts);
        best(
            &facts,
            candidates.into_iter().filter_map(|i| self.games.get(i)),
        )
    }
}

/// The best-scoring game of `games` for these facts: the highest score, then the
/// strongest rule, then the first.
fn best<'g>(facts: &Facts<'_>, games: impl Iterator<Item = &'g Game>) -> Option<Identified<'g>> {
    let mut best: Option<(i32, Rule, &Game)> = None;
    for g in games {
        let Some((score, rule)) = facts.score(&g.matches, g.protocol) else {
            continue;
        };
        let better = match best {
            None => true,
            Some((s, r, _)) => score > s || (score == s && rule < r),
        };
        if better {
            best = Some((score, rule, g));
        }
    }
    best.map(|(_, rule, game)| Identified { game, rule })
}

/// What an answer says of its game, for its protocol.
#[derive(Default, Clone, Copy)]
struct Facts<'a> {
    a2s_app_id: Option<u32>,
    a2s_folder: Option<&'a str>,
    a2s_game: Option<&'a str>,
    gamespy_gamename: Option<&'a str>,
    gamespy_gamevariant: Option<&'a str>,
    quake3_gamename: Option<&'a str>,
    quake3_protocol: Option<u32>,
    ogp_game_id: Option<u16>,
    unreal2_gametype: Option<&'a str>,
    ase_gamename: Option<&'a str>,
    cube2_game: Option<&'a str>,
    quake2_gamename: Option<&'a str>,
    protocol: Option<Protocol>,
}

/// The Steam app id of an A2S answer: the low 24 bits of the extra data's 64-bit game
/// id when sent (S2A_INFO's own field is 16 bits, and 0 for many games), else the
/// app id field; never 0.
fn app_id(a: &crate::A2sInfo) -> Option<u32> {
    a.game_id
        .and_then(|g| u32::try_from(g & 0x00FF_FFFF).ok())
        .filter(|id| *id != 0)
        .or(a.app_id.filter(|id| *id != 0))
}

/// +1 when the answer's value is listed, -1 when it is not, 0 when either side has none.
fn text_point(listed: &[String], value: Option<&str>) -> Option<bool> {
    let v = value.filter(|v| !v.is_empty())?;
    (!listed.is_empty()).then(|| listed.iter().any(|l| l.eq_ignore_ascii_case(v)))
}

fn num_point<T: PartialEq + Copy>(listed: &[T], value: Option<T>) -> Option<bool> {
    let v = value?;
    (!listed.is_empty()).then(|| listed.contains(&v))
}

impl<'a> Facts<'a> {
    fn of(protocol: Protocol, s: &'a Status) -> Self {
        let game = s.game_name.as_deref();
        match protocol {
            Protocol::A2s => {
                let a2s = s.a2s.as_ref();
                Self {
                    a2s_app_id: a2s.and_then(app_id),
                    a2s_folder: a2s.and_then(|a| a.folder.as_deref()),
                    a2s_game: game,
                    ..Self::default()
                }
            }
            Protocol::Gamespy2 => Self {
                gamespy_gamename: game,
                gamespy_gamevariant: s.mod_info.as_ref().map(|m| m.name.as_str()),
                ..Self::default()
            },
            Protocol::Ase => Self {
                ase_gamename: game,
                ..Self::default()
            },
            Protocol::Gamespy3 => Self {
                // Minecraft's query has no gamename; its `game_id` is one
                gamespy_gamename: game.or_else(|| s.rules.as_ref()?.get("game_id")),
                gamespy_gamevariant: s.mod_info.as_ref().map(|m| m.name.as_str()),
                ..Self::default()
            },
            // GameSpy v1's `gamename` (`ut`, `bfield1942`, `mohaa`…), the master's name
            Protocol::Gamespy1 => Self {
                gamespy_gamename: game,
                ..Self::default()
            },
            Protocol::Quake3 => Self {
                quake3_gamename: game,
                quake3_protocol: s
                    .rules
                    .as_ref()
                    .and_then(|r| r.get("protocol"))
                    .and_then(|p| p.trim().parse().ok()),
                ..Self::default()
            },
            Protocol::Ogp | Protocol::OgpDraft => Self {
                ogp_game_id: s.game_id,
                ..Self::default()
            },
            Protocol::Unreal2 => Self {
                unreal2_gametype: s.game_type.as_deref(),
                ..Self::default()
            },
            // The Doom 3 engine's `gamename` rule (`baseDOOM-1`, `Q4MP 1.4.2`), read as
            // Quake III's
            Protocol::Doom3 => Self {
                quake3_gamename: s.rules.as_ref().and_then(|r| r.get("gamename")),
                ..Self::default()
            },
            Protocol::Cube2 => Self {
                cube2_game: game,
                ..Self::default()
            },
            // Quake 2's `gamename` (`baseq2`; some servers pad it with spaces)
            Protocol::Quake2 => Self {
                quake2_gamename: s
                    .rules
                    .as_ref()
                    .and_then(|r| r.get("gamename"))
                    .map(str::trim),
                ..Self::default()
            },
            // FiveM's `vars.gamename` (`gta5`, `rdr3`), read as Quake III's `gamename`
            // (its `getinfo` says `CitizenFX` for both), or `CitizenFX` without it
            Protocol::Fivem => Self {
                quake3_gamename: s
                    .rules
                    .as_ref()
                    .and_then(|r| r.get("gamename"))
                    .filter(|g| !g.trim().is_empty())
                    .or(Some("CitizenFX")),
                ..Self::default()
            },
            _ => Self::default(),
        }
        .with_protocol(protocol)
    }

    fn with_protocol(mut self, protocol: Protocol) -> Self {
        self.protocol = Some(protocol);
        self
    }

    /// The game's score and its strongest matching rule; `None` when no identifying
    /// value matches.
    fn score(&self, m: &Match, game_protocol: Protocol) -> Option<(i32, Rule)> {
        let identifying = [
            (Rule::A2sAppId, num_point(&m.a2s_app_id, self.a2s_app_id)),
            (Rule::A2sFolder, text_point(&m.a2s_folder, self.a2s_folder)),
            (
                Rule::GamespyGamename,
                text_point(&m.gamespy_gamename, self.gamespy_gamename),
            ),
            (
                Rule::Quake3Gamename,
                text_point(&m.quake3_gamename, self.quake3_gamename),
            ),
            (Rule::OgpGameId, num_point(&m.ogp_game_id, self.ogp_game_id)),
            (
                Rule::Unreal2Gametype,
                text_point(&m.unreal2_gametype, self.unreal2_gametype),
            ),
            (
                Rule::AseGamename,
                text_point(&m.ase_gamename, self.ase_gamename),
            ),
            (Rule::Cube2Game, text_point(&m.cube2_game, self.cube2_game)),
            (
                Rule::Quake2Gamename,
                text_point(&m.quake2_gamename, self.quake2_gamename),
            ),
            (
                Rule::Protocol,
                // only for: an answer in another protocol says nothing against it
                (m.by_protocol && self.protocol == Some(game_protocol)).then_some(true),
            ),
        ];
        let rule = identifying
            .iter()
            .find(|(_, p)| *p == Some(true))
            .map(|(r, _)| *r)?;
        let tie_breaking = [
            text_point(&m.a2s_game, self.a2s_game),
            text_point(&m.gamespy_gamevariant, self.gamespy_gamevariant),
            num_point(&m.quake3_protocol, self.quake3_protocol),
        ];
        let score = identifying
            .iter()
            .map(|(_, p)| *p)
            .chain(tie_breaking)
            .map(|p| match p {
                Some(true) => 1,
                Some(false) => -1,
                None => 0,
            })
            .sum();
        Some((score, rule))
    }
}

/// The built-in catalogue (`catalogue/games.toml`), parsed on first use. Its text is
/// checked by this crate's tests, so it parses; were it ever not to, this is an empty
/// catalogue and [`catalogue_error`] says why.
pub fn catalogue() -> &'static Catalogue {
    &built_in().0
}

/// Why the built-in catalogue did not parse, if it did not.
pub fn catalogue_error() -> Option<&'static CatalogueError> {
    built_in().1.as_ref()
}

fn built_in() -> &'static (Catalogue, Option<CatalogueError>) {
    static CATALOGUE: OnceLock<(Catalogue, Option<CatalogueError>)> = OnceLock::new();
    CATALOGUE.get_or_init(|| match Catalogue::parse(CATALOGUE_TOML) {
        Ok(c) => (c, None),
        Err(e) => (Catalogue::default(), Some(e)),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The index names the same game as scoring every game: for every identifying
    /// value of every game of the built-in catalogue (as listed and upper-cased), alone
    /// and with each tie-breaking value of that game, and for values no game lists, in
    /// each protocol.
    #[test]
    fn the_index_names_what_scoring_every_game_names() {
        let c = catalogue();
        assert!(catalogue_error().is_none());
        let protocols = [
            Protocol::A2s,
            Protocol::Gamespy3,
            Protocol::Quake3,
            Protocol::Ogp,
            Protocol::Minecraft,
            Protocol::Bedrock,
            Protocol::Gamespy1,
            Protocol::Unreal2,
            Protocol::Gamespy2,
            Protocol::Ase,
            Protocol::Teeworlds,
            Protocol::Teeworlds7,
            Protocol::Openttd,
            Protocol::Doom3,
            Protocol::Minetest,
            Protocol::Mumble,
            Protocol::Doom,
            Protocol::Doomsday,
            Protocol::Samp,
            Protocol::Cube2,
        ];
        let mut checked = 0;
        let mut named = 0;
        let mut check = |f: &Facts<'_>| {
            let all = best(f, c.games.iter()).map(|i| (i.game.id.as_str(), i.rule));
            let indexed = best(f, c.index.candidates(f).into_iter().map(|i| &c.games[i]))
                .map(|i| (i.game.id.as_str(), i.rule));
            assert_eq!(all, indexed);
            checked += 1;
            named += usize::from(all.is_some());
        };
        let upper = |v: &[String]| -> Vec<String> {
            v.iter()
                .flat_map(|s| [s.clone(), s.to_ascii_uppercase()])
                .collect()
        };
        for g in c.games() {
            let m = &g.matches;
            let (folders, gamespy, quake3) = (
                upper(&m.a2s_folder),
                upper(&m.gamespy_gamename),
                upper(&m.quake3_gamename),
            );
            let (unreal2, ase) = (upper(&m.unreal2_gametype), upper(&m.ase_gamename));
            let cube2 = upper(&m.cube2_game);
            let quake2 = upper(&m.quake2_gamename);
            for p in protocols {
                let base = Facts::default().with_protocol(p);
                check(&base);
                let games = m.a2s_game.iter().map(|s| Some(s.as_str())).chain([None]);
                for game in games {
                    for id in m.a2s_app_id.iter().copied().chain([0xFF_FFFF]) {
                        check(&Facts {
                            a2s_app_id: Some(id),
                            a2s_game: game,
                            ..base
                        });
                    }
                    for f in &folders {
                        check(&Facts {
                            a2s_folder: Some(f),
                            a2s_game: game,
                            ..base
                        });
                    }
                }
                for n in &gamespy {
                    for v in m.gamespy_gamevariant.iter().map(String::as_str) {
                        check(&Facts {
                            gamespy_gamename: Some(n),
                            gamespy_gamevariant: Some(v),
                            ..base
                        });
                    }
                    check(&Facts {
                        gamespy_gamename: Some(n),
                        ..base
                    });
                }
                for n in &quake3 {
                    for v in m.quake3_protocol.iter().copied() {
                        check(&Facts {
                            quake3_gamename: Some(n),
                            quake3_protocol: Some(v),
                            ..base
                        });
                    }
                    check(&Facts {
                        quake3_gamename: Some(n),
                        ..base
                    });
                }
                for id in m.ogp_game_id.iter().copied().chain([u16::MAX]) {
                    check(&Facts {
                        ogp_game_id: Some(id),
                        ..base
                    });
                }
                for t in unreal2.iter().map(String::as_str).chain(["NoSuchGameType"]) {
                    check(&Facts {
                        unreal2_gametype: Some(t),
                        ..base
                    });
                }
                for n in ase.iter().map(String::as_str).chain(["nosuchgame"]) {
                    check(&Facts {
                        ase_gamename: Some(n),
                        ..base
                    });
                }
                for n in cube2.iter().map(String::as_str).chain(["nosuchgame"]) {
                    check(&Facts {
                        cube2_game: Some(n),
                        ..base
                    });
                }
                for n in quake2.iter().map(String::as_str).chain(["nosuchgame"]) {
                    check(&Facts {
                        quake2_gamename: Some(n),
                        ..base
                    });
                }
            }
        }
        assert!(checked > 4_000, "{checked}");
        assert!(named > 1_000, "{named}");
    }
}
