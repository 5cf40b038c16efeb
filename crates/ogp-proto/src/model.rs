//! The status model: one description of a game server's live state, shared by every
//! protocol on both sides.
//!
//! A responder encodes a [`Status`] into whatever protocol a client asks in; a client
//! decodes any protocol's answer into a [`Status`]. Its serde form is the *state-file
//! schema*: `shared/examples/state.json` loads as it is, and what goes in comes out under
//! the same keys. JSON and TOML are both read ([`Status::from_json`],
//! [`Status::from_toml`]); unknown keys are rejected so that a typo in a state file is an
//! error rather than a silently missing field. Counts are bounded while deserializing and
//! strings by [`Status::apply_limits`] (see [`crate::limits`]), so a state file cannot
//! grow into more model than the protocols could carry.
//!
//! `Option` means "this server does not report it" (or: the answer did not carry it). A
//! list that is `Some(vec![])` is a list the server reports as empty; `None` is a list it
//! does not report at all. OGP answers set their field masks from exactly this distinction.
//!
//! Player and bot counts default to what the player list says ([`Status::player_count`],
//! [`Status::bot_count`]); the `player_count`/`bot_count` fields are explicit overrides.
//!
//! Nothing here touches the network or panics.

use std::collections::BTreeMap;
use std::fmt;
use std::net::{IpAddr, Ipv4Addr, Ipv6Addr, SocketAddr};

use serde::{Deserialize, Deserializer, Serialize, Serializer};

use crate::{bounded, text};

pub use crate::text::Text;

/// A game server's status: server info, teams, players, rules, add-ons and limits.
///
/// The model structs are `#[non_exhaustive]`, so that a field can be added without
/// breaking embedders: start from [`Default`] (or a constructor such as
/// [`Player::named`]) and set the fields.
///
/// ```
/// use ogp_proto::model::{Limit, LimitType, MapInfo, Player, Team};
/// use ogp_proto::Status;
///
/// let mut status = Status::default();
/// status.host_name = Some("My server".into());
/// status.map = Some(MapInfo::named("dm_arena"));
/// status.teams = Some(vec![Team::named("Red"), Team::named("Blue")]);
/// let mut alice = Player::named("alice");
/// alice.team = Some(0);
/// alice.score = Some(12);
/// status.players = Some(vec![alice]);
/// status.limits = Some(vec![Limit::new(LimitType::Time, 1800).with_left(Some(600))]);
/// assert_eq!(status.player_count(), Some(1));
/// ```
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
#[non_exhaustive]
pub struct Status {
    /// OGP GameID: identifies the game among OGP games (0 when the game has none).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub game_id: Option<u16>,
    /// Name of the game, e.g. "Half-Life".
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub game_name: Option<Text>,
    /// Version string of the game (A2S `version`, GameSpy `gamever`). Not carried by OGP.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub game_version: Option<Text>,
    /// The server's name as shown in server lists.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub host_name: Option<Text>,
    /// Colour and style information for `host_name` (OGP StringColorInfo).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub host_name_color: Option<ColorInfo>,
    /// The server's name as the game sent it, with its in-band formatting codes
    /// (Minecraft `§a`), when it differs from `host_name`, which is then the plain text.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub host_name_raw: Option<Text>,
    /// Port players connect to. OGP: 0 means "the query port".
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub connect_port: Option<u16>,
    /// Listen or dedicated server.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub server_type: Option<ServerType>,
    /// Operating system the server runs on.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub os: Option<Os>,
    /// Whether joining needs a password.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub password: Option<bool>,
    /// Whether the server is a proxy for game broadcasting (e.g. HLTV, SourceTV).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub proxy: Option<bool>,
    /// The modification being run, if any.
    #[serde(default, skip_serializing_if = "Option::is_none", rename = "mod")]
    pub mod_info: Option<ModInfo>,
    /// Type of game being played, e.g. "CTF", "Deathmatch".
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub game_type: Option<Text>,
    /// What is going on right now: "wait", "openplaying", "closedplaying", "debriefing",
    /// "exiting", "pause" or anything else the game reports.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub game_mode: Option<Text>,
    /// The current map.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub map: Option<MapInfo>,
    /// The next map.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub next_map: Option<MapInfo>,
    /// Number of players, when it is reported explicitly rather than derived from
    /// `players` (see [`Status::player_count`]).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub player_count: Option<u32>,
    /// Maximum number of players.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub slot_max: Option<u32>,
    /// Number of bots, when reported explicitly (see [`Status::bot_count`]).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub bot_count: Option<u32>,
    /// Slots reserved (e.g. for admins).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reserved_slots: Option<u32>,
    /// How long the server has been running, in seconds (OGP v0.02 draft RunTime). Not
    /// carried by OGP v1.01.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub uptime_seconds: Option<u32>,
    /// Teams, in team-number order (a player's `team` indexes this list).
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        deserialize_with = "bounded::opt_list::<_, _, { bounded::MAX_LIST_ENTRIES }>"
    )]
    pub teams: Option<Vec<Team>>,
    /// Players.
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        deserialize_with = "bounded::opt_list::<_, _, { bounded::MAX_LIST_ENTRIES }>"
    )]
    pub players: Option<Vec<Player>>,
    /// Server rules (cvars) as ordered key/value pairs.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rules: Option<Rules>,
    /// Add-ons (anti-cheat, admin tools, mutators).
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        deserialize_with = "bounded::opt_list::<_, _, { bounded::MAX_LIST_ENTRIES }>"
    )]
    pub addons: Option<Vec<AddOn>>,
    /// Match limits (time, score, rounds).
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        deserialize_with = "bounded::opt_list::<_, _, { bounded::MAX_LIST_ENTRIES }>"
    )]
    pub limits: Option<Vec<Limit>>,
    /// What Valve's A2S carries that the common fields do not.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub a2s: Option<A2sInfo>,
}

impl Status {
    /// Loads a status from its JSON form.
    pub fn from_json(text: &str) -> Result<Self, serde_json::Error> {
        serde_json::from_str(text)
    }

    #[cfg(feature = "toml")]
    /// Loads a status from its TOML form (same keys as JSON).
    pub fn from_toml(text: &str) -> Result<Self, toml::de::Error> {
        toml::from_str(text)
    }

    /// Pretty JSON in the state-file schema, written by the one JSON writer
    /// ([`crate::result::to_json_pretty`]: terminal controls escaped as `\uXXXX`).
    pub fn to_json_pretty(&self) -> String {
        // Serializing this model cannot fail: every key is a string and no serializer
        // here rejects a value. Fall back to an empty object rather than panic.
        crate::json::to_json_pretty(self).unwrap_or_else(|_| String::from("{}"))
    }

    /// Number of players: the explicit `player_count` if set, else the length of `players`.
    pub fn player_count(&self) -> Option<u32> {
        self.player_count.or_else(|| {
            self.players
                .as_ref()
                .map(|p| u32::try_from(p.len()).unwrap_or(u32::MAX))
        })
    }

    /// Number of bots: the explicit `bot_count` if set, else the players flagged as bots
    /// (`None` when no player says whether it is a bot).
    pub fn bot_count(&self) -> Option<u32> {
        self.bot_count.or_else(|| {
            let players = self.players.as_ref()?;
            if players.iter().all(|p| p.bot.is_none()) {
                return None;
            }
            let bots = players.iter().filter(|p| p.bot == Some(true)).count();
            Some(u32::try_from(bots).unwrap_or(u32::MAX))
        })
    }
}

/// Information about the running modification (OGP MODINFO).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
#[non_exhaustive]
pub struct ModInfo {
    /// Name of the mod. On the OGP wire an empty name means "no mod".
    pub name: Text,
    /// Identifier, e.g. the mod directory. Empty on the wire means "same as the name"
    /// (see [`ModInfo::effective_identifier`]).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub identifier: Option<Text>,
    /// Size in bytes the client needs to install it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub size: Option<u32>,
    /// Version string.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub version: Option<Text>,
    /// URL.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub url: Option<Text>,
    /// Author.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub author: Option<Text>,
}

impl ModInfo {
    /// A mod with just a name.
    pub fn named(name: impl Into<Text>) -> Self {
        Self {
            name: name.into(),
            ..Self::default()
        }
    }

    /// The identifier, with the spec's rule applied: empty or absent means the name.
    pub fn effective_identifier(&self) -> &str {
        match &self.identifier {
            Some(id) if !id.is_empty() => id,
            _ => &self.name,
        }
    }
}

/// A map (OGP MAPINFO).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
#[non_exhaustive]
pub struct MapInfo {
    /// Display name.
    pub name: Text,
    /// File name without extension. Empty on the wire means "same as the name" (see
    /// [`MapInfo::effective_file_name`]).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub file_name: Option<Text>,
    /// Size of the map file(s) in bytes.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub file_size: Option<u32>,
    /// MD5 digest of the map file(s); hex in the state file.
    #[serde(default, skip_serializing_if = "Option::is_none", with = "serde_md5")]
    pub file_md5: Option<[u8; 16]>,
    /// Version of the map.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub version: Option<Text>,
    /// Where to get it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub url: Option<Text>,
    /// Author.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub author: Option<Text>,
}

impl MapInfo {
    /// A map with just a name.
    pub fn named(name: impl Into<Text>) -> Self {
        Self {
            name: name.into(),
            ..Self::default()
        }
    }

    /// The file name, with the spec's rule applied: empty or absent means the name.
    pub fn effective_file_name(&self) -> &str {
        match &self.file_name {
            Some(f) if !f.is_empty() => f,
            _ => &self.name,
        }
    }
}

/// A team (OGP TEAMLISTENTRY).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
#[non_exhaustive]
pub struct Team {
    /// Team name.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub name: Option<Text>,
    /// Colour information for the name.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub name_color: Option<ColorInfo>,
    /// Team score.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub score: Option<i32>,
    /// Average ping of the team's players, in milliseconds (OGP sends 16 bits: larger
    /// values are sent as 65535).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub average_ping: Option<u32>,
    /// Average packet loss of the team's players (OGP: 16 bits, saturated).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub average_loss: Option<u32>,
    /// Number of players in the team.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub player_count: Option<u32>,
    /// Team colour, 16-bit RGB 5-6-5.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub color: Option<u16>,
    /// Further per-team values a protocol carries that have no field here (GameSpy
    /// `key_t` columns), by key.
    #[serde(
        default,
        skip_serializing_if = "BTreeMap::is_empty",
        deserialize_with = "bounded::extra"
    )]
    pub extra: BTreeMap<Text, Text>,
}

impl Team {
    /// A team with just a name.
    pub fn named(name: impl Into<Text>) -> Self {
        Self {
            name: Some(name.into()),
            ..Self::default()
        }
    }
}

/// A player (OGP PLAYERLISTENTRY, A2S player, GameSpy player columns).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
#[non_exhaustive]
pub struct Player {
    /// Server slot used by the player.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub slot: Option<u32>,
    /// Name.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub name: Option<Text>,
    /// Colour information for the name.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub name_color: Option<ColorInfo>,
    /// The name as the game sent it, with its in-band colour codes (Quake III `^1`,
    /// DarkPlaces `^xRGB`), when it differs from `name`, which is then the plain text.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub name_raw: Option<Text>,
    /// Team number (index into `teams`); -1 not assigned, -2 spectator.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub team: Option<i32>,
    /// Class.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub class: Option<Text>,
    /// Race.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub race: Option<Text>,
    /// Score.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub score: Option<i32>,
    /// Frags.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub frags: Option<i32>,
    /// Kills.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub kills: Option<u32>,
    /// Deaths.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub deaths: Option<u32>,
    /// Suicides.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub suicides: Option<u32>,
    /// Team kills.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub team_kills: Option<u32>,
    /// Server-wide unique id.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub id: Option<u32>,
    /// Global id, e.g. a Steam id.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub global_id: Option<Text>,
    /// Ping in milliseconds (OGP and its draft send 16 bits: larger values are sent as
    /// 65535; GameSpy v3 sends text, any value).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ping: Option<u32>,
    /// Packet loss (OGP: 16 bits, saturated).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub loss: Option<u32>,
    /// Player model.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub model: Option<Text>,
    /// Whole seconds on the server, up to 136 years. OGP's PlayerTime is 16 bits: longer
    /// times are sent as 65535 (18 h 12 min); A2S sends [`duration`](Self::duration), or
    /// this when there is no duration.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub time: Option<u32>,
    /// Seconds on the server with fractions, as A2S reports it. A state file must give a
    /// finite number: JSON cannot write NaN or infinity back (they become `null`).
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        deserialize_with = "finite_f32"
    )]
    pub duration: Option<f32>,
    /// The player's network address (OGP PlayerAddress). Servers should publish it only
    /// deliberately: it is personal data.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub address: Option<PlayerAddress>,
    /// Player is alive.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub alive: Option<bool>,
    /// Player is dead.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub dead: Option<bool>,
    /// Player is a bot.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub bot: Option<bool>,
    /// Player carries the bomb (OGP bit 1.0, bracketed in the spec).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub bomb: Option<bool>,
    /// Player is a VIP (OGP bit 1.1, bracketed in the spec).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub vip: Option<bool>,
    /// Money (The Ship's A2S_PLAYER extra).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub money: Option<i32>,
    /// Further per-player values a protocol carries that have no field here (GameSpy
    /// `key_` columns), by key.
    #[serde(
        default,
        skip_serializing_if = "BTreeMap::is_empty",
        deserialize_with = "bounded::extra"
    )]
    pub extra: BTreeMap<Text, Text>,
}

impl Player {
    /// A player with just a name.
    pub fn named(name: impl Into<Text>) -> Self {
        Self {
            name: Some(name.into()),
            ..Self::default()
        }
    }
}

/// An add-on (OGP ADDONLISTENTRY).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
#[non_exhaustive]
pub struct AddOn {
    /// Short name.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub short_name: Option<Text>,
    /// Long name.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub long_name: Option<Text>,
    /// Version.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub version: Option<Text>,
    /// Add-on is active.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub active: Option<bool>,
    /// Add-on is an anti-cheat tool.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub anti_cheat: Option<bool>,
    /// Add-on is a mutator.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mutator: Option<bool>,
    /// Add-on is an admin tool.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub admin_tool: Option<bool>,
}

impl AddOn {
    /// An add-on with just a short name.
    pub fn named(short_name: impl Into<Text>) -> Self {
        Self {
            short_name: Some(short_name.into()),
            ..Self::default()
        }
    }
}

/// A match limit (OGP LIMITLISTENTRY).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
#[non_exhaustive]
pub struct Limit {
    /// What is limited.
    #[serde(rename = "type")]
    pub kind: LimitType,
    /// The limit.
    pub limit: u32,
    /// How much is left, if known.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub left: Option<u32>,
}

impl Limit {
    /// A limit of `kind` at `limit`, with nothing said about what is left.
    pub const fn new(kind: LimitType, limit: u32) -> Self {
        Self {
            kind,
            limit,
            left: None,
        }
    }

    /// With `left` of it left.
    #[must_use]
    pub const fn with_left(mut self, left: Option<u32>) -> Self {
        self.left = left;
        self
    }
}

/// Rules as ordered key/value pairs. Duplicate keys (which some servers send) are kept,
/// in order.
///
/// Serialized as a JSON object / TOML table: each key once, in the order of its first
/// appearance, its value a string, or, for a key sent more than once, an array of its
/// values in the order sent (`{"a":"1","mod":["x","y"]}`), so that tools that keep one
/// value per object key (jq, Python's `json`) lose none. Read back, an array becomes that
/// many pairs; the position of a repeated key's later values among the other keys is the
/// one thing not kept ([`Rules::grouped`]; docs/json.md).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Rules(pub Vec<(Text, Text)>);

impl Rules {
    /// The first value for `key`.
    pub fn get(&self, key: &str) -> Option<&str> {
        self.0
            .iter()
            .find(|(k, _)| k == key)
            .map(|(_, v)| v.as_str())
    }

    /// Number of rules.
    pub fn len(&self) -> usize {
        self.0.len()
    }

    /// Whether there are none.
    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    /// Iterates over the pairs in order.
    pub fn iter(&self) -> impl Iterator<Item = (&str, &str)> {
        self.0.iter().map(|(k, v)| (k.as_str(), v.as_str()))
    }

    /// The same pairs with each key's pairs moved up to the key's first appearance,
    /// values in order: what these rules read back as from their JSON (a key sent more
    /// than once is written once, with an array of its values).
    #[must_use]
    pub fn grouped(&self) -> Rules {
        self.by_key()
            .into_iter()
            .flat_map(|(k, values)| values.into_iter().map(move |v| (k, v)))
            .collect()
    }

    /// Each key once, in the order of its first appearance, with all its values in order.
    fn by_key(&self) -> Vec<(&str, Vec<&str>)> {
        let mut at: std::collections::HashMap<&str, usize> =
            std::collections::HashMap::with_capacity(self.0.len());
        let mut groups: Vec<(&str, Vec<&str>)> = Vec::with_capacity(self.0.len());
        for (k, v) in self.iter() {
            match at.get(k).and_then(|&i| groups.get_mut(i)) {
                Some((_, values)) => values.push(v),
                None => {
                    at.insert(k, groups.len());
                    groups.push((k, vec![v]));
                }
            }
        }
        groups
    }
}

impl<K: Into<Text>, V: Into<Text>> FromIterator<(K, V)> for Rules {
    fn from_iter<I: IntoIterator<Item = (K, V)>>(iter: I) -> Self {
        Self(
            iter.into_iter()
                .map(|(k, v)| (k.into(), v.into()))
                .collect(),
        )
    }
}

/// Most pairs checked for repeated keys with [`SeenKeys`] and a linear search; longer
/// lists are sorted (a list of keys that all look alike would cost quadratic time).
pub(crate) const FEW_KEYS: usize = 64;

/// Whether no key comes twice in `pairs`.
pub(crate) fn names_each_key_once(pairs: &[(Text, Text)]) -> bool {
    if pairs.len() <= FEW_KEYS {
        let mut seen = SeenKeys::default();
        return pairs.iter().enumerate().all(|(i, (k, _))| {
            !seen.mark(k) || !pairs.iter().take(i).any(|(earlier, _)| earlier == k)
        });
    }
    let mut keys: Vec<&str> = pairs.iter().map(|(k, _)| k.as_str()).collect();
    keys.sort_unstable();
    keys.windows(2).all(|w| w.first() != w.get(1))
}

/// The keys seen so far, as a filter: "surely not seen" or "maybe" (by length and the
/// first, middle and last bytes), so that a list of distinct keys is checked without
/// comparing strings or hashing them whole.
#[derive(Default)]
pub(crate) struct SeenKeys([u64; 4]);

impl SeenKeys {
    /// Marks `key` seen; false when it surely was not seen before.
    pub(crate) fn mark(&mut self, key: &str) -> bool {
        let b = key.as_bytes();
        let byte = |i: usize| u32::from(b.get(i).copied().unwrap_or(0));
        let h = (b.len() as u32).wrapping_mul(0x9e37_79b9)
            ^ byte(0).wrapping_mul(0x85eb_ca6b)
            ^ byte(b.len() / 2).wrapping_mul(0xc2b2_ae35)
            ^ byte(b.len().wrapping_sub(1)).wrapping_mul(0x27d4_eb2f);
        let bit = (h >> 24) as usize; // 0..256
        let mask = 1u64 << (bit % 64);
        match self.0.get_mut(bit / 64) {
            Some(word) => {
                let was = *word & mask != 0;
                *word |= mask;
                was
            }
            None => true,
        }
    }
}

/// One key's values as serialized: a string when there is one, else an array.
struct RuleValuesOut<'a>(&'a [&'a str]);

impl Serialize for RuleValuesOut<'_> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        match self.0 {
            [one] => s.serialize_str(one),
            many => s.collect_seq(many),
        }
    }
}

impl Serialize for Rules {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        // Most rule lists name each key once: written as they are, without grouping (a
        // hash map and a vector per key: a fifth of a GameSpy v1 scan's JSON).
        if names_each_key_once(&self.0) {
            return s.collect_map(self.0.iter().map(|(k, v)| (k.as_str(), v.as_str())));
        }
        let groups = self.by_key();
        s.collect_map(groups.iter().map(|(k, v)| (k, RuleValuesOut(v))))
    }
}

impl<'de> Deserialize<'de> for Rules {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> serde::de::Visitor<'de> for V {
            type Value = Rules;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("a map of rule names to string values (or arrays of them)")
            }
            fn visit_map<A: serde::de::MapAccess<'de>>(self, m: A) -> Result<Rules, A::Error> {
                let max = bounded::MAX_LIST_ENTRIES;
                let mut out = Vec::with_capacity(m.size_hint().unwrap_or(0).min(1024));
                let mut over = false;
                bounded::bounded_map(m, max, |k: Text, v: RuleValues| {
                    for value in v.0 {
                        if out.len() < max {
                            out.push((k.clone(), value));
                        } else {
                            over = true;
                        }
                    }
                })?;
                if over {
                    return Err(serde::de::Error::custom(format_args!(
                        "more than {max} rule values"
                    )));
                }
                // a key written twice in one object (JSON allows it; we wrote it so
                // before arrays) reads like its array: grouped at its first place, so
                // that what is read writes back to itself
                Ok(Rules(out).grouped())
            }
        }
        d.deserialize_map(V)
    }
}

/// A rule's value or values in a state file: one [`RuleValue`], or an array of them (a
/// key the server sent more than once), at most [`crate::limits::MAX_LIST_ENTRIES`].
struct RuleValues(Vec<Text>);

impl<'de> Deserialize<'de> for RuleValues {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> serde::de::Visitor<'de> for V {
            type Value = RuleValues;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("a string, number or boolean, or an array of them")
            }
            fn visit_str<E: serde::de::Error>(self, v: &str) -> Result<RuleValues, E> {
                RuleValueVisitor.visit_str(v).map(RuleValues::one)
            }
            fn visit_string<E: serde::de::Error>(self, v: String) -> Result<RuleValues, E> {
                RuleValueVisitor.visit_string(v).map(RuleValues::one)
            }
            fn visit_i64<E: serde::de::Error>(self, v: i64) -> Result<RuleValues, E> {
                RuleValueVisitor.visit_i64(v).map(RuleValues::one)
            }
            fn visit_u64<E: serde::de::Error>(self, v: u64) -> Result<RuleValues, E> {
                RuleValueVisitor.visit_u64(v).map(RuleValues::one)
            }
            fn visit_f64<E: serde::de::Error>(self, v: f64) -> Result<RuleValues, E> {
                RuleValueVisitor.visit_f64(v).map(RuleValues::one)
            }
            fn visit_bool<E: serde::de::Error>(self, v: bool) -> Result<RuleValues, E> {
                RuleValueVisitor.visit_bool(v).map(RuleValues::one)
            }
            fn visit_seq<A: serde::de::SeqAccess<'de>>(
                self,
                seq: A,
            ) -> Result<RuleValues, A::Error> {
                let values: Vec<RuleValue> = bounded::bounded_seq(seq, bounded::MAX_LIST_ENTRIES)?;
                Ok(RuleValues(values.into_iter().map(|v| v.0).collect()))
            }
        }
        d.deserialize_any(V)
    }
}

impl RuleValues {
    fn one(v: RuleValue) -> Self {
        Self(vec![v.0])
    }
}

/// A rule value in a state file: a string, or a number or boolean written bare (TOML
/// users write `timelimit = 20`), kept as its text.
struct RuleValue(Text);

impl<'de> Deserialize<'de> for RuleValue {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        d.deserialize_any(RuleValueVisitor)
    }
}

/// Reads a [`RuleValue`] (also for each of [`RuleValues`]).
struct RuleValueVisitor;

impl serde::de::Visitor<'_> for RuleValueVisitor {
    type Value = RuleValue;
    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a string, number or boolean")
    }
    fn visit_str<E: serde::de::Error>(self, v: &str) -> Result<RuleValue, E> {
        Ok(RuleValue(Text::from(v)))
    }
    fn visit_string<E: serde::de::Error>(self, v: String) -> Result<RuleValue, E> {
        Ok(RuleValue(Text::from(v)))
    }
    fn visit_i64<E: serde::de::Error>(self, v: i64) -> Result<RuleValue, E> {
        Ok(RuleValue(compact_str::format_compact!("{v}")))
    }
    fn visit_u64<E: serde::de::Error>(self, v: u64) -> Result<RuleValue, E> {
        Ok(RuleValue(compact_str::format_compact!("{v}")))
    }
    fn visit_f64<E: serde::de::Error>(self, v: f64) -> Result<RuleValue, E> {
        Ok(RuleValue(compact_str::format_compact!("{v}")))
    }
    fn visit_bool<E: serde::de::Error>(self, v: bool) -> Result<RuleValue, E> {
        Ok(RuleValue(Text::const_new(if v { "1" } else { "0" })))
    }
}

macro_rules! named_code {
    (
        $(#[$meta:meta])*
        $name:ident { $($(#[$vmeta:meta])* $variant:ident = $code:literal => $text:literal,)* }
    ) => {
        $(#[$meta])*
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
        pub enum $name {
            $($(#[$vmeta])* $variant,)*
            /// A value the spec does not define, kept as it was on the wire.
            Other(u8),
        }

        impl $name {
            /// The wire code.
            pub const fn code(self) -> u8 {
                match self {
                    $(Self::$variant => $code,)*
                    Self::Other(c) => c,
                }
            }

            /// The value for a wire code; undefined codes become [`Self::Other`].
            pub const fn from_code(c: u8) -> Self {
                match c {
                    $($code => Self::$variant,)*
                    c => Self::Other(c),
                }
            }

            /// The state-file name, or `None` for [`Self::Other`].
            pub const fn name(self) -> Option<&'static str> {
                match self {
                    $(Self::$variant => Some($text),)*
                    Self::Other(_) => None,
                }
            }
        }

        impl fmt::Display for $name {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                match self.name() {
                    Some(n) => f.write_str(n),
                    None => write!(f, "unknown ({})", self.code()),
                }
            }
        }

        impl Serialize for $name {
            fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
                match self.name() {
                    Some(n) => s.serialize_str(n),
                    None => s.serialize_u8(self.code()),
                }
            }
        }

        impl<'de> Deserialize<'de> for $name {
            fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
                struct V;
                impl serde::de::Visitor<'_> for V {
                    type Value = $name;
                    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                        f.write_str(concat!("one of ", $("\"", $text, "\" ",)* "or a number"))
                    }
                    fn visit_str<E: serde::de::Error>(self, v: &str) -> Result<$name, E> {
                        match v {
                            $($text => Ok($name::$variant),)*
                            _ => Err(E::unknown_variant(v, &[$($text),*])),
                        }
                    }
                    fn visit_u64<E: serde::de::Error>(self, v: u64) -> Result<$name, E> {
                        u8::try_from(v)
                            .map($name::from_code)
                            .map_err(|_| E::custom("code out of range"))
                    }
                    fn visit_i64<E: serde::de::Error>(self, v: i64) -> Result<$name, E> {
                        u8::try_from(v)
                            .map($name::from_code)
                            .map_err(|_| E::custom("code out of range"))
                    }
                }
                d.deserialize_any(V)
            }
        }
    };
}

named_code! {
    /// Kind of server (OGP ServerFlags bits 0.0–0.1).
    ServerType {
        /// Not known.
        Unknown = 0 => "unknown",
        /// A listen server (a player hosts it).
        Listen = 1 => "listen",
        /// A dedicated server.
        Dedicated = 2 => "dedicated",
    }
}

named_code! {
    /// Operating system (OGP ServerFlags bits 0.4–0.6).
    Os {
        /// Not known.
        Unknown = 0 => "unknown",
        /// Windows.
        Windows = 1 => "windows",
        /// Linux.
        Linux = 2 => "linux",
        /// macOS.
        Mac = 3 => "mac",
    }
}

named_code! {
    /// What a limit counts (OGP LimitType bits 0.1–0.4).
    LimitType {
        /// Time in seconds.
        Time = 0 => "time",
        /// Player score.
        PlayerScore = 1 => "player_score",
        /// Rounds.
        Round = 2 => "round",
        /// Team score.
        TeamScore = 3 => "team_score",
    }
}

/// Colour and style information for a string (OGP StringColorInfo).
///
/// Entries are applied in order; `delta` is the position of the change relative to the
/// previous entry, in characters of the decoded string (the spec leaves the unit open;
/// see `docs/ogp-wire-choices.md`). Bytes a decoder could not interpret are kept in
/// `undecoded` and written back unchanged.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
#[non_exhaustive]
pub struct ColorInfo {
    /// The colour changes.
    #[serde(
        default,
        deserialize_with = "bounded::list::<_, _, { bounded::MAX_COLOR_ENTRIES }>"
    )]
    pub entries: Vec<ColorEntry>,
    /// Bytes that followed the last entry the decoder understood.
    #[serde(default, skip_serializing_if = "Vec::is_empty", with = "serde_hex")]
    pub undecoded: Vec<u8>,
}

impl ColorInfo {
    /// Colour information made of these changes (nothing undecoded).
    pub fn new(entries: Vec<ColorEntry>) -> Self {
        Self {
            entries,
            undecoded: Vec::new(),
        }
    }
}

/// One colour change (OGP StringColorInfoEntry).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
#[non_exhaustive]
pub struct ColorEntry {
    /// Position of the change relative to the previous entry.
    pub delta: u32,
    /// The colour code (0x00–0x0F text colour, 0x10 reset, 0x20–0x2F background, 0x30
    /// reset background, 0x40–0x42 bold/underline/italic, 0x90–0x9F 16-bit colours).
    pub code: u8,
    /// The 16-bit RGB 5-6-5 colour, present exactly when `code` is in 0x90–0x9F.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub color16: Option<u16>,
}

impl ColorEntry {
    /// A change to colour `code` at `delta` characters after the previous one, with a
    /// 16-bit colour when `code` is in 0x90–0x9F.
    pub const fn new(delta: u32, code: u8, color16: Option<u16>) -> Self {
        Self {
            delta,
            code,
            color16,
        }
    }
}

/// A player's network address (OGP PlayerAddress): a raw `sockaddr` as the server sent it.
///
/// The state file shows `ip:port` (`[v6]:port` for IPv6) when the bytes are a canonical
/// 8-byte `sockaddr_in` or 28-byte `sockaddr_in6` (family little-endian, port in network
/// order) with a flowinfo of 0, which the text form cannot hold; any other bytes are
/// shown as `raw:` followed by hex, so nothing is lost.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct PlayerAddress(pub Vec<u8>);

impl PlayerAddress {
    /// The canonical sockaddr bytes of a socket address.
    pub fn from_socket_addr(addr: SocketAddr) -> Self {
        let mut b = Vec::with_capacity(28);
        match addr {
            SocketAddr::V4(a) => {
                b.extend_from_slice(&2u16.to_le_bytes());
                b.extend_from_slice(&a.port().to_be_bytes());
                b.extend_from_slice(&a.ip().octets());
            }
            SocketAddr::V6(a) => {
                b.extend_from_slice(&10u16.to_le_bytes());
                b.extend_from_slice(&a.port().to_be_bytes());
                b.extend_from_slice(&a.flowinfo().to_le_bytes());
                b.extend_from_slice(&a.ip().octets());
                b.extend_from_slice(&a.scope_id().to_le_bytes());
            }
        }
        Self(b)
    }

    /// The socket address, when the bytes are a canonical `sockaddr_in`/`sockaddr_in6`.
    pub fn socket_addr(&self) -> Option<SocketAddr> {
        let b = self.0.as_slice();
        let (fam, rest) = b.split_first_chunk::<2>()?;
        let (port, rest) = rest.split_first_chunk::<2>()?;
        let port = u16::from_be_bytes(*port);
        match (u16::from_le_bytes(*fam), rest.len()) {
            (2, 4) => {
                let ip: [u8; 4] = rest.try_into().ok()?;
                Some(SocketAddr::new(IpAddr::V4(Ipv4Addr::from(ip)), port))
            }
            (10, 24) => {
                let (flow, rest) = rest.split_first_chunk::<4>()?;
                let (ip, scope) = rest.split_first_chunk::<16>()?;
                let scope: [u8; 4] = scope.try_into().ok()?;
                let a = std::net::SocketAddrV6::new(
                    Ipv6Addr::from(*ip),
                    port,
                    u32::from_le_bytes(*flow),
                    u32::from_le_bytes(scope),
                );
                Some(SocketAddr::V6(a))
            }
            _ => None,
        }
    }
}

impl fmt::Display for PlayerAddress {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.socket_addr() {
            // `[v6%scope]:port` has no place for the flowinfo: keep such bytes raw.
            Some(SocketAddr::V6(a)) if a.flowinfo() != 0 => {
                write!(f, "raw:{}", text::to_hex(&self.0))
            }
            Some(a) => write!(f, "{a}"),
            None => write!(f, "raw:{}", text::to_hex(&self.0)),
        }
    }
}

impl Serialize for PlayerAddress {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.collect_str(self)
    }
}

impl<'de> Deserialize<'de> for PlayerAddress {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let s = String::deserialize(d)?;
        if let Some(hex) = s.strip_prefix("raw:") {
            return text::from_hex(hex)
                .map(PlayerAddress)
                .ok_or_else(|| serde::de::Error::custom("raw: address must be hex"));
        }
        s.parse::<SocketAddr>()
            .map(PlayerAddress::from_socket_addr)
            .map_err(|_| {
                serde::de::Error::custom("address must be ip:port, [ipv6]:port or raw:HEX")
            })
    }
}

/// What Valve's A2S protocol carries beyond the common fields. Filled by the A2S client,
/// read by the A2S responder; other protocols ignore it.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
#[non_exhaustive]
pub struct A2sInfo {
    /// Network protocol version of the game.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub protocol: Option<u8>,
    /// Game directory ("folder"), e.g. "cstrike".
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub folder: Option<Text>,
    /// Steam application id. S2A_INFO's ID field is 16 bits: an id above 65535 is sent
    /// there as its low 16 bits, and in full in the extra data's game id (EDF 0x01) when
    /// the status gives no game id of its own; decoding takes the full id from the game
    /// id when one is present.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub app_id: Option<u32>,
    /// Full 64-bit game id (EDF 0x01).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub game_id: Option<u64>,
    /// Server's Steam id (EDF 0x10).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub steam_id: Option<u64>,
    /// Tags / keywords (EDF 0x20).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub keywords: Option<Text>,
    /// SourceTV port (EDF 0x40).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sourcetv_port: Option<u16>,
    /// SourceTV name (EDF 0x40).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sourcetv_name: Option<Text>,
    /// Server type letter as sent ('d', 'l', 'p', ...).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub server_type: Option<char>,
    /// Environment letter as sent ('l', 'w', 'm', 'o').
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub environment: Option<char>,
    /// Whether the server uses Valve Anti-Cheat.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub vac: Option<bool>,
    /// The Ship: game mode.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ship_mode: Option<u8>,
    /// The Ship: number of witnesses.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ship_witnesses: Option<u8>,
    /// The Ship: time before arrest, in seconds.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ship_duration: Option<u8>,
    /// GoldSrc 'm' replies: the server's own address as it reports it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub address: Option<Text>,
    /// GoldSrc 'm' replies: the mod's download URL (its info URL is `mod.url`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mod_download_url: Option<Text>,
    /// GoldSrc 'm' replies: the mod runs on the server only.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mod_server_only: Option<bool>,
    /// GoldSrc 'm' replies: the mod has its own client DLL.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mod_custom_dll: Option<bool>,
}

/// Deserializes an optional `f32` that must be finite: NaN, infinities and numbers too
/// large for an `f32` (which would load as infinity) are errors.
fn finite_f32<'de, D: Deserializer<'de>>(d: D) -> Result<Option<f32>, D::Error> {
    match Option::<f32>::deserialize(d)? {
        Some(v) if !v.is_finite() => Err(serde::de::Error::custom(
            "must be a finite number (NaN and infinity cannot be stored)",
        )),
        v => Ok(v),
    }
}

/// serde for an optional 16-byte MD5 as lower-case hex.
mod serde_md5 {
    use super::*;

    pub(super) fn serialize<S: Serializer>(v: &Option<[u8; 16]>, s: S) -> Result<S::Ok, S::Error> {
        match v {
            Some(d) => s.serialize_str(&text::to_hex(d)),
            None => s.serialize_none(),
        }
    }

    pub(super) fn deserialize<'de, D: Deserializer<'de>>(
        d: D,
    ) -> Result<Option<[u8; 16]>, D::Error> {
        let s = String::deserialize(d)?;
        text::from_hex(&s)
            .and_then(|v| <[u8; 16]>::try_from(v).ok())
            .map(Some)
            .ok_or_else(|| serde::de::Error::custom("file_md5 must be 32 hex digits"))
    }
}

/// serde for bytes as lower-case hex.
mod serde_hex {
    use super::*;

    pub(super) fn serialize<S: Serializer>(v: &[u8], s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(&text::to_hex(v))
    }

    pub(super) fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<Vec<u8>, D::Error> {
        let s = String::deserialize(d)?;
        text::from_hex(&s).ok_or_else(|| serde::de::Error::custom("expected hex digits"))
    }
}
