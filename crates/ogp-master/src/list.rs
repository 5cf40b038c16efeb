//! The list in memory: every listed server's list fields, ordered by address, kept up to
//! date from the database (so that every instance sharing a database serves the same
//! list), and the two ways of reading it: the HTTP API's filters and Valve's pages.

use std::collections::{BTreeMap, BTreeSet};
use std::net::{IpAddr, SocketAddr, SocketAddrV4};
use std::ops::Bound;

use ogp_proto::master::dpmaster::{canonical, Listing, ServersRequest};
use ogp_proto::master::valve::{Filter, View};
use ogp_proto::{Protocol, Status};
use serde::Serialize;

use crate::store::{parse_protocols, ListRow};

mod scan;
mod table;
mod valve_index;

pub use valve_index::ValvePage;

/// The protocols a server speaks, as a set of indices into [`Protocol::ALL`] (8 bytes,
/// no heap: a master holds a million entries).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Protocols(u64);

const _: () = assert!(Protocol::ALL.len() <= 64, "Protocols holds 64 protocols");

impl Protocols {
    fn bit(p: Protocol) -> u64 {
        Protocol::ALL
            .iter()
            .position(|x| *x == p)
            .map_or(0, |i| 1u64 << i)
    }

    /// The set of `ps`.
    pub fn of(ps: &[Protocol]) -> Self {
        Self(ps.iter().fold(0, |m, p| m | Self::bit(*p)))
    }

    /// Whether `p` is in it.
    pub fn contains(self, p: Protocol) -> bool {
        self.0 & Self::bit(p) != 0
    }

    /// Its protocols, in the order of [`Protocol::ALL`].
    pub fn iter(self) -> impl Iterator<Item = Protocol> {
        Protocol::ALL
            .iter()
            .enumerate()
            .filter(move |(i, _)| self.0 & (1u64 << i) != 0)
            .map(|(_, p)| *p)
    }
}

type Small = compact_str::CompactString;

/// One listed server: what the list paths need, kept compact (no whole status, strings
/// of up to 24 bytes inline, not its address, which is its key in the list, nor its
/// name in lower case, which is in the compact copy: a master holds a million of these;
/// about 306 bytes each with its places in the list and the compact copy, docs/master.md).
#[derive(Debug, Clone)]
pub struct Entry {
    /// The protocols it speaks.
    pub protocols: Protocols,
    /// Answering and registering.
    pub up: bool,
    password: Option<bool>,
    /// Ping of its last answer, from the master (NaN: none).
    ping_ms: f64,
    /// When it last answered (ms since the epoch; a listed server has answered).
    last_seen: i64,
    name: Small,
    game_name: Option<Small>,
    /// The catalogue's game the status names, by one of the protocols it speaks, and
    /// the rule that named it (the rule's field apart: 8 bytes less than the pair).
    known: Option<&'static ogp_proto::games::Game>,
    rule: ogp_proto::games::Rule,
    players: u32,
    /// Slots and bots, 0 when [`Entry::has`] says they are not known.
    max_players: u32,
    bots: u32,
    /// [`MAX_PLAYERS`] and [`BOTS`].
    has: u8,
    /// What Valve filters look at, made once (its map is the entry's too).
    view: View,
    /// What few servers have (none in the common case: no allocation).
    rare: Option<Box<Rare>>,
    updated: i64,
}

/// [`Entry::has`]: the slots are known.
const MAX_PLAYERS: u8 = 1;
/// [`Entry::has`]: the bots are known.
const BOTS: u8 = 2;

/// A listed server as pages and look-ups hand it out: its address and its entry.
#[derive(Debug, Clone)]
pub struct Listed {
    /// Its query address.
    pub addr: SocketAddr,
    /// Its list fields.
    pub entry: Entry,
}

impl Listed {
    /// Its query address.
    pub fn addr(&self) -> SocketAddr {
        self.addr
    }

    /// The API item.
    pub fn item(&self) -> Item {
        self.entry.item(self.addr)
    }
}

/// The fields of an [`Entry`] that most servers do not have.
#[derive(Debug, Clone, Default)]
struct Rare {
    mod_id: Option<Small>,
    mod_name: Option<Small>,
    /// What `getservers` looks at (Quake III servers only).
    listing: Option<Listing>,
    /// The game a GameSpy v1 heartbeat named: on the GameSpy master list under it.
    gs1_game: Option<Small>,
}

/// The fields of an API list item, without `status`.
#[derive(Debug, Clone, Serialize)]
pub struct Item {
    /// `IP:PORT`.
    pub addr: String,
    /// Protocol names.
    pub protocols: Vec<&'static str>,
    /// Answering and registering.
    pub up: bool,
    /// Ping from the master.
    pub ping_ms: Option<f64>,
    /// RFC 3339.
    pub last_seen: Option<String>,
    /// Host name.
    pub name: String,
    /// The game as players know it: the catalogue's name when the status identifies a
    /// game of the catalogue, else the status's game name, else the mod's identifier.
    pub game: Option<String>,
    /// The catalogue's id of the game, when the status identifies one.
    pub game_id: Option<&'static str>,
    /// The catalogue's rule that identified it (`a2s_app_id`, `gamespy_gamename`…).
    pub game_rule: Option<&'static str>,
    /// The mod that runs on it, by name, if any.
    #[serde(rename = "mod")]
    pub mod_name: Option<String>,
    /// Map.
    pub map: Option<String>,
    /// Players.
    pub players: u32,
    /// Slots.
    pub max_players: Option<u32>,
    /// Bots.
    pub bots: Option<u32>,
    /// Password needed.
    pub password: Option<bool>,
}

/// RFC 3339 (UTC, seconds) of ms since the epoch.
pub fn rfc3339(ms: i64) -> Option<String> {
    let t = std::time::UNIX_EPOCH
        .checked_add(std::time::Duration::from_millis(u64::try_from(ms).ok()?))?;
    Some(humantime::format_rfc3339_seconds(t).to_string())
}

/// The game of a status as lists show it: its game name ("Counter-Strike", A2S's game
/// description), else its mod's identifier (A2S's game directory).
pub fn game_of(s: &Status) -> Option<&str> {
    let named = s.game_name.as_deref().filter(|g| !g.is_empty());
    named.or_else(|| mod_id_of(s))
}

/// The catalogue's game a status names, read as an answer of each protocol the server
/// speaks in turn (the master holds one status per server, from its richest protocol).
fn known_game(
    protocols: &[Protocol],
    s: &Status,
) -> Option<(&'static ogp_proto::games::Game, ogp_proto::games::Rule)> {
    let c = ogp_proto::games::catalogue();
    protocols
        .iter()
        .find_map(|p| c.identify(*p, s))
        .map(|i| (i.game, i.rule))
}

fn mod_id_of(s: &Status) -> Option<&str> {
    let m = s.mod_info.as_ref()?;
    Some(m.effective_identifier()).filter(|id| !id.is_empty())
}

impl Entry {
    /// The entry of a database row; `None` for a row to drop (removed, or unreadable).
    /// A row that never answered (a server an operator added, before its first good
    /// poll) is not listed.
    fn of(r: ListRow) -> Option<(SocketAddr, Option<Self>, i64)> {
        let addr: SocketAddr = r.addr.parse().ok()?;
        if r.removed || r.last_seen.is_none() {
            return Some((addr, None, r.updated));
        }
        let listing = r.listing();
        let s: Status = r
            .summary
            .as_deref()
            .and_then(|s| serde_json::from_str(s).ok())
            .unwrap_or_default();
        let name = Small::from(s.host_name.as_deref().unwrap_or_default());
        let small = |t: Option<&str>| t.map(Small::from);
        let protocols = parse_protocols(&r.protocols);
        let rare = Rare {
            mod_id: small(mod_id_of(&s)),
            mod_name: small(
                s.mod_info
                    .as_ref()
                    .map(|m| &*m.name)
                    .filter(|n| !n.is_empty()),
            ),
            listing,
            gs1_game: small(r.gs1_game.as_deref()),
        };
        let rare = (rare.mod_id.is_some()
            || rare.mod_name.is_some()
            || rare.listing.is_some()
            || rare.gs1_game.is_some())
        .then(|| Box::new(rare));
        let known = known_game(&protocols, &s);
        let has = if s.slot_max.is_some() { MAX_PLAYERS } else { 0 }
            | if s.bot_count.is_some() { BOTS } else { 0 };
        let e = Self {
            known: known.map(|(g, _)| g),
            rule: known.map_or(ogp_proto::games::Rule::A2sAppId, |(_, r)| r),
            protocols: Protocols::of(&protocols),
            up: r.up,
            ping_ms: r.ping_ms.unwrap_or(f64::NAN),
            last_seen: r.last_seen?,
            name,
            // a GameSpy v1 server's heartbeat names its game before its first poll does
            game_name: small(game_of(&s)).or_else(|| small(r.gs1_game.as_deref())),
            players: s.player_count().unwrap_or(0),
            max_players: s.slot_max.unwrap_or(0),
            bots: s.bot_count.unwrap_or(0),
            has,
            password: s.password,
            view: View::of(&s),
            rare,
            updated: r.updated,
        };
        Some((addr, Some(e), r.updated))
    }

    fn max_players(&self) -> Option<u32> {
        (self.has & MAX_PLAYERS != 0).then_some(self.max_players)
    }

    fn bots(&self) -> Option<u32> {
        (self.has & BOTS != 0).then_some(self.bots)
    }

    /// The change time (ms) of the database row it was made from.
    pub fn updated(&self) -> i64 {
        self.updated
    }

    /// Ping of its last answer, from the master.
    pub fn ping_ms(&self) -> Option<f64> {
        Some(self.ping_ms).filter(|p| !p.is_nan())
    }

    fn known(&self) -> Option<(&'static ogp_proto::games::Game, ogp_proto::games::Rule)> {
        self.known.map(|g| (g, self.rule))
    }

    fn map(&self) -> Option<&str> {
        Some(self.view.map()).filter(|m| !m.is_empty())
    }

    fn mod_id(&self) -> Option<&str> {
        self.rare.as_ref()?.mod_id.as_deref()
    }

    fn mod_name(&self) -> Option<&str> {
        self.rare.as_ref()?.mod_name.as_deref()
    }

    /// Whether a game master's list can hold it (see `List::game_lists`): what
    /// [`List::dp_servers`], [`List::qw_servers`], [`List::tw_servers`],
    /// [`List::gs1_servers`] and [`List::cube2_servers`] look at, up or not.
    fn on_game_lists(&self) -> bool {
        self.listing().is_some()
            || self.gs1_game().is_some()
            || [
                Protocol::Quakeworld,
                Protocol::Teeworlds,
                Protocol::Teeworlds7,
                Protocol::Cube2,
            ]
            .into_iter()
            .any(|p| self.protocols.contains(p))
    }

    fn listing(&self) -> Option<&Listing> {
        self.rare.as_ref()?.listing.as_ref()
    }

    fn gs1_game(&self) -> Option<&str> {
        self.rare.as_ref()?.gs1_game.as_deref()
    }

    /// The API item of the server at `addr`.
    pub fn item(&self, addr: SocketAddr) -> Item {
        Item {
            addr: addr.to_string(),
            protocols: self.protocols.iter().map(|p| p.name()).collect(),
            up: self.up,
            ping_ms: self.ping_ms(),
            last_seen: rfc3339(self.last_seen),
            name: self.name.to_string(),
            game: self
                .known
                .map(|g| g.name.as_str())
                .or(self.game_name.as_deref())
                .map(str::to_owned),
            game_id: self.known.map(|g| g.id.as_str()),
            game_rule: self.known().map(|(_, r)| r.name()),
            mod_name: self.mod_name().map(str::to_owned),
            map: self.map().map(str::to_owned),
            players: self.players,
            max_players: self.max_players(),
            bots: self.bots(),
            password: self.password,
        }
    }
}

/// The HTTP API's filters (all optional, combined with AND).
#[derive(Debug, Clone, Default, PartialEq, Eq, Hash)]
pub struct Query {
    /// Game (catalogue name or id, game name, mod identifier or mod name),
    /// case-insensitive, exact.
    pub game: Option<String>,
    /// Speaks this protocol.
    pub protocol: Option<Protocol>,
    /// Map, case-insensitive, exact.
    pub map: Option<String>,
    /// Name contains, case-insensitive.
    pub name: Option<String>,
    /// At least one player.
    pub has_players: bool,
    /// Not full.
    pub not_full: bool,
    /// Password needed (true) or not (false).
    pub password: Option<bool>,
    /// Up (true) or down (false).
    pub up: Option<bool>,
}

impl Query {
    /// Whether `e` matches; `name` gives its name in lower case (asked for by a name
    /// search only).
    fn matches<'n>(&self, e: &Entry, name: impl FnOnce() -> &'n str) -> bool {
        if let Some(p) = self.protocol {
            if !e.protocols.contains(p) {
                return false;
            }
        }
        if let Some(up) = self.up {
            if e.up != up {
                return false;
            }
        }
        if let Some(g) = &self.game {
            let own = [
                e.game_name.as_deref(),
                e.mod_id(),
                e.mod_name(),
                e.known.map(|g| g.name.as_str()),
                e.known.map(|g| g.id.as_str()),
            ];
            if !own.iter().flatten().any(|x| x.eq_ignore_ascii_case(g)) {
                return false;
            }
        }
        if let Some(m) = &self.map {
            if !e.map().is_some_and(|x| x.eq_ignore_ascii_case(m)) {
                return false;
            }
        }
        if let Some(n) = &self.name {
            if !name().contains(n.as_str()) {
                return false;
            }
        }
        if self.has_players && e.players == 0 {
            return false;
        }
        if self.not_full && e.max_players().is_some_and(|m| e.players >= m) {
            return false;
        }
        if let Some(p) = self.password {
            if e.password.unwrap_or(false) != p {
                return false;
            }
        }
        true
    }
}

/// The order of an API listing.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash)]
pub enum Sort {
    /// By address (IPv4 first).
    #[default]
    Addr,
    /// By players, most first; then by address.
    Players,
}

/// Where a listing page starts: after this server (keyset pagination, for either order).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Cursor {
    /// After this address ([`Sort::Addr`]): `IP:PORT`.
    Addr(SocketAddr),
    /// After this player count and address ([`Sort::Players`]): `PLAYERS,IP:PORT`.
    Players(u32, SocketAddr),
}

impl Cursor {
    /// The cursor of `sort` from its text.
    pub fn parse(sort: Sort, s: &str) -> Option<Self> {
        match sort {
            Sort::Addr => s.parse().ok().map(Self::Addr),
            Sort::Players => {
                let (p, a) = s.split_once(',')?;
                Some(Self::Players(p.parse().ok()?, a.parse().ok()?))
            }
        }
    }

    fn of(sort: Sort, e: &Listed) -> String {
        match sort {
            Sort::Addr => e.addr.to_string(),
            Sort::Players => format!("{},{}", e.entry.players, e.addr),
        }
    }
}

/// How long a cached first page or total is served after the list changed: any number
/// of clients asking the same thing cost one pass over the list a second at most.
pub const CACHE_STALE: std::time::Duration = std::time::Duration::from_secs(1);
/// Most first pages and totals cached (the cache is emptied when full).
const CACHE_ENTRIES: usize = 1024;

#[derive(Debug)]
struct Cached<T> {
    version: u64,
    at: std::time::Instant,
    value: T,
    /// A request found it stale and is making it again: others take it as it is.
    refreshing: bool,
}

impl<T: Clone> Cached<T> {
    fn new(version: u64, at: std::time::Instant, value: T) -> Self {
        Self {
            version,
            at,
            value,
            refreshing: false,
        }
    }

    fn fresh(&self, version: u64, now: std::time::Instant) -> bool {
        self.version == version || now.saturating_duration_since(self.at) < CACHE_STALE
    }
}

/// What [`List::page`] says of a first page's freshness.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Freshness {
    /// Made at the list's version, or less than [`CACHE_STALE`] ago (or a later page,
    /// made now).
    Fresh,
    /// Older: the caller is to make it again ([`List::refresh_first_page`]), off the
    /// request's path; other requests are answered with it meanwhile.
    Stale,
}

/// First pages (by query, order and size) and totals (by query), made once for every
/// client asking: a page of a million servers is a pass over all of them.
#[derive(Debug, Default)]
struct Cache {
    first: std::collections::HashMap<(Query, Sort, usize), Cached<Page>>,
    totals: std::collections::HashMap<Query, Cached<usize>>,
    /// Held while a first page missing from the cache is made, one per page: the
    /// clients asking for it at once wait for that one pass rather than each making its
    /// own, and a page of another query does not wait for it.
    making: std::collections::HashMap<(Query, Sort, usize), std::sync::Arc<std::sync::Mutex<()>>>,
}

/// What `stats` answers, kept up to date as entries come and go (not counted per
/// request: a million entries are a pass of tens of milliseconds).
#[derive(Debug)]
struct Counts {
    up: usize,
    players_up: u64,
    by_protocol: [usize; Protocol::ALL.len()],
}

// By hand: the standard library derives `Default` for arrays of at most 32 elements,
// and there are more protocols than that.
impl Default for Counts {
    fn default() -> Self {
        Self {
            up: 0,
            players_up: 0,
            by_protocol: [0; Protocol::ALL.len()],
        }
    }
}

impl Counts {
    fn add(&mut self, e: &Entry) {
        if e.up {
            self.up += 1;
            self.players_up += u64::from(e.players);
        }
        for (i, p) in Protocol::ALL.iter().enumerate() {
            if e.protocols.contains(*p) {
                if let Some(n) = self.by_protocol.get_mut(i) {
                    *n += 1;
                }
            }
        }
    }

    fn remove(&mut self, e: &Entry) {
        if e.up {
            self.up = self.up.saturating_sub(1);
            self.players_up = self.players_up.saturating_sub(u64::from(e.players));
        }
        for (i, p) in Protocol::ALL.iter().enumerate() {
            if e.protocols.contains(*p) {
                if let Some(n) = self.by_protocol.get_mut(i) {
                    *n = n.saturating_sub(1);
                }
            }
        }
    }
}

/// The list.
#[derive(Debug, Default)]
pub struct List {
    /// The entries by address and by slot.
    entries: table::Table,
    /// What the filters read of each entry, compact and contiguous: the pass a page
    /// makes (issue 41).
    scan: scan::Scan,
    /// The entries that a game master's list can hold (a Quake III listing, a GameSpy
    /// v1 game, QuakeWorld, Teeworlds, Cube 2), in the entries' order: those lists walk
    /// this, not the whole list, so a list request costs what its own servers cost, not
    /// a pass over a million A2S servers (issue 41).
    game_lists: BTreeSet<SocketAddr>,
    /// The servers on Valve's list by game: the pages whose filter names a game walk
    /// that game's servers only (issue 41).
    valve: valve_index::ValveIndex,
    counts: Counts,
    cache: std::sync::Mutex<Cache>,
    /// Grows with every change: part of the ETag.
    pub version: u64,
    /// The newest `updated` seen (ms), where the next refresh starts.
    pub high_water: i64,
}

/// Entries of database rows, made without holding the list's lock (the JSON is parsed
/// here).
pub fn prepare(rows: Vec<ListRow>) -> Vec<(SocketAddr, Option<Entry>, i64)> {
    rows.into_iter().filter_map(Entry::of).collect()
}

/// One page of an API answer.
#[derive(Debug, Clone)]
pub struct Page {
    /// The servers.
    pub entries: Vec<Listed>,
    /// The cursor of the next page.
    pub next: Option<String>,
    /// Servers matching the filters (counted at most [`CACHE_STALE`] ago).
    pub total: usize,
    /// The list's version the page was made at (a cached page may be up to
    /// [`CACHE_STALE`] older than the list).
    pub version: u64,
}

impl List {
    /// Servers listed (up or down).
    pub fn len(&self) -> usize {
        self.entries.len()
    }

    /// Whether nothing is listed.
    pub fn is_empty(&self) -> bool {
        self.entries.len() == 0
    }

    /// Whether `addr` is listed.
    pub fn contains(&self, addr: SocketAddr) -> bool {
        self.entries.slot(addr).is_some()
    }

    /// The entry of `addr`.
    pub fn get(&self, addr: SocketAddr) -> Option<&Entry> {
        self.entries.get(addr).map(|(_, e)| e)
    }

    /// The entry of `addr` with its address (a copy).
    pub fn listed(&self, addr: SocketAddr) -> Option<Listed> {
        self.get(addr).map(|e| Listed {
            addr,
            entry: e.clone(),
        })
    }

    /// Servers listed on `ip`, counted up to `at_most` (a registration asks whether the
    /// cap is reached: counting past it would cost every registration from a crowded
    /// address a walk over all its servers).
    pub fn on_ip(&self, ip: IpAddr, at_most: usize) -> usize {
        // the trees are ordered by address, so an IP's servers are one range of one
        self.entries.on_ip(ip, at_most)
    }

    /// Whether the entry in `slot` matches `q` (its lower-case name from the compact
    /// copy, when `q` searches names).
    fn matches(&self, q: &Query, slot: u32, e: &Entry) -> bool {
        q.matches(e, || self.scan.lowercase_name(slot))
    }

    /// Applies rows read from the database; returns how many changed the list.
    pub fn apply(&mut self, rows: Vec<ListRow>) -> usize {
        let rows = self.unseen(rows);
        self.merge(prepare(rows))
    }

    /// The rows not applied yet (a refresh reads the last seconds again).
    pub fn unseen(&self, rows: Vec<ListRow>) -> Vec<ListRow> {
        rows.into_iter()
            .filter(|r| self.is_unseen(&r.addr, r.updated))
            .collect()
    }

    /// Whether the row of `addr` changed at `updated` is not applied yet.
    pub fn is_unseen(&self, addr: &str, updated: i64) -> bool {
        addr.parse::<SocketAddr>()
            .map_or(true, |a| self.get(a).is_none_or(|e| e.updated < updated))
    }

    /// Puts prepared entries in (see [`prepare`]); returns how many changed the list.
    pub fn merge(&mut self, prepared: Vec<(SocketAddr, Option<Entry>, i64)>) -> usize {
        let mut changed = 0;
        for (addr, entry, updated) in prepared {
            self.high_water = self.high_water.max(updated);
            match entry {
                None => {
                    if let Some((slot, old)) = self.entries.remove(addr) {
                        self.counts.remove(&old);
                        self.scan.remove(slot);
                        self.game_lists.remove(&addr);
                        self.valve.remove(addr, &old);
                        changed += 1;
                    }
                }
                Some(e) => {
                    self.counts.add(&e);
                    if e.on_game_lists() {
                        self.game_lists.insert(addr);
                    } else {
                        self.game_lists.remove(&addr);
                    }
                    let old = self.entries.get(addr);
                    if let Some((_, old)) = old {
                        self.counts.remove(old);
                        self.valve.remove(addr, old);
                    }
                    self.valve.add(addr, &e);
                    let old = old.map_or(scan::NONE, |(slot, _)| slot);
                    let slot = self.scan.put(old, addr, &e);
                    self.entries.put(addr, slot, e);
                    changed += 1;
                }
            }
        }
        if changed > 0 {
            self.version += 1;
        }
        changed
    }

    /// Statistics: servers, up, players, servers per protocol (kept up to date by
    /// [`List::merge`], not counted here).
    pub fn stats(&self) -> (usize, usize, u64, BTreeMap<&'static str, usize>) {
        let by = Protocol::ALL
            .iter()
            .zip(self.counts.by_protocol)
            .filter(|(_, n)| *n > 0)
            .map(|(p, n)| (p.name(), n))
            .collect();
        (
            self.entries.len(),
            self.counts.up,
            self.counts.players_up,
            by,
        )
    }

    fn cache(&self) -> std::sync::MutexGuard<'_, Cache> {
        self.cache
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    /// Servers matching `q`: the list's size without filters, else a pass over its
    /// compact copy, cached ([`CACHE_STALE`]; `again`: counted now whatever the cache holds).
    fn total(&self, q: &Query, again: bool) -> usize {
        if *q == Query::default() {
            return self.entries.len();
        }
        let now = std::time::Instant::now();
        if !again {
            if let Some(c) = self
                .cache()
                .totals
                .get(q)
                .filter(|c| c.fresh(self.version, now))
            {
                return c.value;
            }
        }
        let total = self.scan.count(q);
        self.keep_total(q, total, now)
    }

    /// Caches `total` as the count of `q` at this version; returns it.
    fn keep_total(&self, q: &Query, total: usize, now: std::time::Instant) -> usize {
        let mut c = self.cache();
        if c.totals.len() >= CACHE_ENTRIES {
            c.totals.clear();
        }
        c.totals
            .insert(q.clone(), Cached::new(self.version, now, total));
        total
    }

    /// A page of the servers matching `q` in `sort`'s order, after `cursor`, at most
    /// `limit`. A later page in address order walks the tree from its cursor, any other
    /// is one pass over the list's compact copy (which counts its total too). First pages come from a cache: one
    /// missing is made once however many ask at the same time; one older than
    /// [`CACHE_STALE`] (with changes since) is answered as it is and said
    /// [`Freshness::Stale`] to the first request that finds it, which is to have it made
    /// again ([`List::refresh_first_page`]) off its path.
    pub fn page(
        &self,
        q: &Query,
        sort: Sort,
        cursor: Option<Cursor>,
        limit: usize,
    ) -> (Page, Freshness) {
        let limit = limit.max(1);
        if cursor.is_some() {
            return (
                self.make_page(q, sort, cursor, limit, false),
                Freshness::Fresh,
            );
        }
        let key = (q.clone(), sort, limit);
        if let Some(hit) = self.cached_first(&key) {
            return hit;
        }
        let one = {
            let mut c = self.cache();
            if c.making.len() >= CACHE_ENTRIES {
                c.making.clear();
            }
            std::sync::Arc::clone(c.making.entry(key.clone()).or_default())
        };
        let _one = one
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        if let Some(hit) = self.cached_first(&key) {
            return hit;
        }
        (self.refresh_first_page(q, sort, limit), Freshness::Fresh)
    }

    /// The first page of `q` in `sort`'s order, at most `limit`, if the cache has it
    /// (as [`List::page`] answers it: fresh, or stale to the first that finds it so);
    /// `None` when it is to be made. A lookup and a copy: an async task may ask.
    pub fn cached_first_page(
        &self,
        q: &Query,
        sort: Sort,
        limit: usize,
    ) -> Option<(Page, Freshness)> {
        self.cached_first(&(q.clone(), sort, limit.max(1)))
    }

    fn cached_first(&self, key: &(Query, Sort, usize)) -> Option<(Page, Freshness)> {
        let now = std::time::Instant::now();
        let mut c = self.cache();
        let hit = c.first.get_mut(key)?;
        if hit.fresh(self.version, now) || hit.refreshing {
            return Some((hit.value.clone(), Freshness::Fresh));
        }
        hit.refreshing = true;
        Some((hit.value.clone(), Freshness::Stale))
    }

    /// Makes every cached page and total older than [`CACHE_STALE`] (tests).
    #[cfg(test)]
    fn age_cache(&self) {
        let mut c = self.cache();
        let Some(old) = std::time::Instant::now().checked_sub(CACHE_STALE * 2) else {
            return;
        };
        for v in c.first.values_mut() {
            v.at = old;
        }
        for v in c.totals.values_mut() {
            v.at = old;
        }
    }

    /// Makes a first page (and its total) now and caches it.
    pub fn refresh_first_page(&self, q: &Query, sort: Sort, limit: usize) -> Page {
        let limit = limit.max(1);
        let now = std::time::Instant::now();
        let page = self.make_page(q, sort, None, limit, true);
        let mut c = self.cache();
        if c.first.len() >= CACHE_ENTRIES {
            c.first.clear();
        }
        c.first.insert(
            (q.clone(), sort, limit),
            Cached::new(self.version, now, page.clone()),
        );
        page
    }

    fn make_page(
        &self,
        q: &Query,
        sort: Sort,
        cursor: Option<Cursor>,
        limit: usize,
        count_again: bool,
    ) -> Page {
        use std::cmp::Reverse;
        let mut entries = Vec::with_capacity(limit.min(1024));
        let mut next = None;
        let total = match (sort, cursor) {
            (Sort::Addr, Some(Cursor::Addr(a) | Cursor::Players(_, a))) => {
                // a later page by address: the tree from its cursor
                for (addr, slot, e) in self.entries.from(Bound::Excluded(a)) {
                    if !self.matches(q, slot, e) {
                        continue;
                    }
                    if entries.len() == limit {
                        next = entries.last().map(|l: &Listed| Cursor::of(sort, l));
                        break;
                    }
                    entries.push(Listed {
                        addr,
                        entry: e.clone(),
                    });
                }
                self.total(q, count_again)
            }
            _ => {
                // keyset: (players descending, address), or the address alone; the
                // `limit + 1` first after the cursor, and the total, in one pass
                let after = match cursor {
                    Some(Cursor::Players(p, a)) => Some((Reverse(p), a)),
                    Some(Cursor::Addr(a)) => Some((Reverse(u32::MAX), a)),
                    None => None,
                };
                let (keys, matched) = self.scan.first(q, sort == Sort::Players, after, limit);
                entries.extend(keys.iter().take(limit).filter_map(|a| self.listed(*a)));
                if keys.len() > limit {
                    next = entries.last().map(|l| Cursor::of(sort, l));
                }
                if *q == Query::default() {
                    self.entries.len()
                } else {
                    self.keep_total(q, matched, std::time::Instant::now())
                }
            }
        };
        Page {
            entries,
            next,
            total,
            version: self.version,
        }
    }

    /// Servers matching `q`, counted over the entries (not the compact copy; tests).
    #[cfg(test)]
    fn count_plain(&self, q: &Query) -> usize {
        self.entries
            .iter()
            .filter(|(_, slot, e)| self.matches(q, *slot, e))
            .count()
    }

    /// The page as it was made before the compact copy: a pass over the tree's
    /// entries, its total counted in the same pass or in one of its own (tests: what
    /// [`List::make_page`] must equal, and what it is timed against).
    #[cfg(test)]
    fn make_page_plain(&self, q: &Query, sort: Sort, at: Option<Cursor>, limit: usize) -> Page {
        let (cursor, count_again) = (at, true);
        let mut entries = Vec::with_capacity(limit.min(1024));
        let mut next = None;
        // A first page made now counts its total in its own pass (a second pass over a
        // million entries was half of a cold first page's time).
        let counting = count_again && cursor.is_none() && *q != Query::default();
        let mut matched = 0usize;
        match sort {
            Sort::Addr => {
                let lower = match cursor {
                    Some(Cursor::Addr(a) | Cursor::Players(_, a)) => Bound::Excluded(a),
                    None => Bound::Unbounded,
                };
                for (addr, slot, e) in self.entries.from(lower) {
                    if !self.matches(q, slot, e) {
                        continue;
                    }
                    matched += 1;
                    if entries.len() == limit {
                        if next.is_none() {
                            next = entries.last().map(|l: &Listed| Cursor::of(sort, l));
                        }
                        if counting {
                            continue;
                        }
                        break;
                    }
                    entries.push(Listed {
                        addr,
                        entry: e.clone(),
                    });
                }
            }
            Sort::Players => {
                // keyset: (players descending, address); the `limit + 1` first after
                // the cursor, in one pass with a bounded heap
                use std::cmp::Reverse;
                let after = match cursor {
                    Some(Cursor::Players(p, a)) => Some((Reverse(p), a)),
                    Some(Cursor::Addr(a)) => Some((Reverse(u32::MAX), a)),
                    None => None,
                };
                let mut heap: std::collections::BinaryHeap<(Reverse<u32>, SocketAddr)> =
                    std::collections::BinaryHeap::with_capacity(limit + 2);
                for (addr, slot, e) in self.entries.iter() {
                    let k = (Reverse(e.players), addr);
                    if after.is_some_and(|a| k <= a) {
                        continue;
                    }
                    let may_enter = heap.len() <= limit || heap.peek().is_some_and(|top| k < *top);
                    if !may_enter && !counting {
                        continue;
                    }
                    if !self.matches(q, slot, e) {
                        continue;
                    }
                    matched += 1;
                    if !may_enter {
                        continue;
                    }
                    heap.push(k);
                    if heap.len() > limit + 1 {
                        heap.pop();
                    }
                }
                let keys = heap.into_sorted_vec();
                let more = keys.len() > limit;
                for (_, a) in keys.into_iter().take(limit) {
                    entries.extend(self.listed(a));
                }
                if more {
                    next = entries.last().map(|l| Cursor::of(sort, l));
                }
            }
        }
        let total = if counting {
            matched
        } else if *q == Query::default() {
            self.entries.len()
        } else {
            self.count_plain(q)
        };
        Page {
            entries,
            next,
            total,
            version: self.version,
        }
    }

    /// A Valve list page: the up IPv4 servers that speak A2S, match `filter` and come
    /// after `seed`, at most one datagram's worth, and whether the list ends there; made
    /// by a pass that looks at no more than `max_looks` entries (`ListBudget::looks_allowed`)
    /// and says how many it did. A filter that names a game walks that game's servers
    /// only (the index `valve`).
    pub fn valve_page(&self, filter: &Filter, seed: SocketAddrV4, max_looks: usize) -> ValvePage {
        valve_index::page(self, filter, seed, max_looks, true)
    }
}

impl List {
    /// The entries that a game master's list can hold, in list order (the index
    /// `game_lists`, kept by [`List::merge`]).
    fn on_game_lists(&self) -> impl Iterator<Item = (SocketAddr, &Entry)> {
        self.game_lists
            .iter()
            .filter_map(|a| Some((*a, self.get(*a)?)))
    }

    /// The servers a dpmaster list request asks for, in list order: up Quake III servers
    /// whose listing ([`ServersRequest::matches`]) and address family
    /// ([`ServersRequest::wants_family`]) fit it.
    pub fn dp_servers(&self, req: &ServersRequest) -> Vec<SocketAddr> {
        self.on_game_lists()
            .filter(|(_, e)| e.up)
            .filter_map(|(addr, e)| {
                let l = e.listing()?;
                let addr = canonical(addr);
                (req.wants_family(addr) && req.matches(l, e.players, e.max_players()))
                    .then_some(addr)
            })
            .collect()
    }

    /// The servers a QuakeWorld list request (`c\n`) gets, in list order: the up IPv4
    /// servers that speak QuakeWorld (registered by a heartbeat, or found so by a poll).
    pub fn qw_servers(&self) -> Vec<SocketAddr> {
        self.on_game_lists()
            .filter(|(_, e)| e.up && e.protocols.contains(Protocol::Quakeworld))
            .map(|(addr, _)| canonical(addr))
            .filter(SocketAddr::is_ipv4)
            .collect()
    }

    /// The servers a Teeworlds master list (`req2`) holds, in list order: the up servers
    /// that speak `protocol` (`teeworlds`, 0.6: verified by a `bea2` heartbeat, or
    /// polled in it; `teeworlds7`: by a 0.7 heartbeat, or polled in it).
    pub fn tw_servers(&self, protocol: Protocol) -> Vec<SocketAddr> {
        self.on_game_lists()
            .filter(|(_, e)| e.up && e.protocols.contains(protocol))
            .map(|(addr, _)| canonical(addr))
            .collect()
    }

    /// The servers a GameSpy master list request for `game` asks for, in list order:
    /// up IPv4 servers registered by a GameSpy v1 heartbeat naming `game` (any case).
    pub fn gs1_servers(&self, game: &str) -> Vec<SocketAddrV4> {
        self.on_game_lists()
            .filter(|(_, e)| e.up)
            .filter(|(_, e)| e.gs1_game().is_some_and(|g| g.eq_ignore_ascii_case(game)))
            .filter_map(|(addr, _)| match canonical(addr) {
                SocketAddr::V4(v4) => Some(v4),
                SocketAddr::V6(_) => None,
            })
            .collect()
    }

    /// The servers of a Cube 2 master's list, in list order: up servers that speak
    /// Cube 2 (registered on the Cube 2 master, or added by the operator), at their game
    /// address (the query address's port minus one), written as Red Eclipse's when
    /// their status names Red Eclipse, else as Sauerbraten's.
    pub fn cube2_servers(&self) -> Vec<ogp_proto::cube2::master::Listed> {
        use ogp_proto::cube2::master::{Listed, MasterDialect};
        self.on_game_lists()
            .filter(|(_, e)| e.up && e.protocols.contains(Protocol::Cube2))
            .filter_map(|(addr, e)| {
                let addr = canonical(addr);
                let port = addr
                    .port()
                    .checked_sub(ogp_proto::cube2::QUERY_PORT_OFFSET)?;
                let dialect = if e.game_name.as_deref() == Some("redeclipse") {
                    MasterDialect::RedEclipse
                } else {
                    MasterDialect::Sauerbraten
                };
                Some(Listed::new(
                    SocketAddr::new(addr.ip(), port),
                    dialect,
                    &*e.name,
                ))
            })
            .collect()
    }

    /// Whether `addr` is listed with the GameSpy master list's game (a server verified
    /// through a probe is listed without it, and verified again at its next heartbeat).
    pub fn has_gs1_game(&self, addr: SocketAddr) -> bool {
        self.get(addr).is_some_and(|e| e.gs1_game().is_some())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    pub(super) fn row(addr: &str, name: &str, players: u32, protocols: &str) -> ListRow {
        let mut s = Status::default();
        s.host_name = Some(name.into());
        s.player_count = Some(players);
        s.slot_max = Some(10);
        s.map = Some(ogp_proto::MapInfo::named("2fort"));
        ListRow {
            addr: addr.into(),
            protocols: protocols.into(),
            up: true,
            removed: false,
            ping_ms: Some(1.0),
            last_seen: Some(1_700_000_000_000),
            summary: Some(serde_json::to_string(&s).unwrap()),
            updated: 5,
            game_hint: None,
            list_protocol: None,
            list_gametype: None,
            gs1_game: None,
        }
    }

    #[test]
    fn the_qw_list_holds_up_ipv4_quakeworld_servers() {
        let mut down = row("127.0.0.1:3", "q", 1, "quakeworld");
        down.up = false;
        let mut l = List::default();
        l.apply(vec![
            row("127.0.0.1:1", "q", 0, "quakeworld"),
            row("[::ffff:127.0.0.2]:2", "q", 3, "quake2,quakeworld"),
            down,
            row("[2001:db8::1]:4", "q", 2, "quakeworld"),
            row("127.0.0.1:5", "q", 2, "quake3"),
        ]);
        let names: Vec<String> = l.qw_servers().iter().map(SocketAddr::to_string).collect();
        assert_eq!(names, ["127.0.0.1:1", "127.0.0.2:2"]);
    }

    #[test]
    fn getservers_lists_up_quake3_servers_by_game_protocol_and_family() {
        let q3 = |addr: &str, game: &str, protocol: i64, players: u32| {
            let mut r = row(addr, "q", players, "quake3");
            r.game_hint = Some(game.into());
            r.list_protocol = Some(protocol);
            r
        };
        let mut down = q3("127.0.0.1:5", "Quake3Arena", 71, 1);
        down.up = false;
        let mut l = List::default();
        l.apply(vec![
            q3("127.0.0.1:1", "Quake3Arena", 71, 1),
            q3("127.0.0.1:2", "Quake3Arena", 71, 0),
            q3("127.0.0.1:3", "Xonotic", 3, 10),
            q3("[::ffff:127.0.0.4]:4", "Quake3Arena", 71, 2),
            q3("[2001:db8::1]:6", "Quake3Arena", 71, 2),
            down,
            row("127.0.0.1:7", "a2s", 1, "a2s"),
        ]);
        let ask = |s: &[u8]| {
            let d = [&b"\xff\xff\xff\xff"[..], s].concat();
            let names: Vec<String> = l
                .dp_servers(&ServersRequest::decode(&d).unwrap())
                .iter()
                .map(SocketAddr::to_string)
                .collect();
            names
        };
        assert_eq!(ask(b"getservers 71"), ["127.0.0.1:1", "127.0.0.4:4"]);
        assert_eq!(
            ask(b"getservers 71 empty full"),
            ["127.0.0.1:1", "127.0.0.1:2", "127.0.0.4:4"]
        );
        assert_eq!(
            ask(b"getserversExt Quake3Arena 71"),
            ["127.0.0.1:1", "127.0.0.4:4", "[2001:db8::1]:6"]
        );
        assert_eq!(
            ask(b"getserversExt Quake3Arena 71 ipv6"),
            ["[2001:db8::1]:6"]
        );
        assert!(ask(b"getservers Xonotic 3").is_empty(), "full: 10 of 10");
        assert_eq!(ask(b"getservers Xonotic 3 full"), ["127.0.0.1:3"]);
    }

    #[test]
    fn catalogue_games_are_named_and_filtered_and_gamedir_still_works() {
        let mut valheim = row("127.0.0.1:10", "v", 1, "a2s");
        let mut s: Status = serde_json::from_str(valheim.summary.as_deref().unwrap()).unwrap();
        s.game_name = Some("my viking server".into());
        let mut a = ogp_proto::A2sInfo::default();
        a.app_id = Some(892_970);
        a.folder = Some("valheim".into());
        s.a2s = Some(a);
        valheim.summary = Some(serde_json::to_string(&s).unwrap());
        let mut bf2 = row("127.0.0.1:11", "b", 1, "ogp,gamespy3");
        let mut s: Status = serde_json::from_str(bf2.summary.as_deref().unwrap()).unwrap();
        s.game_name = Some("battlefield2".into());
        bf2.summary = Some(serde_json::to_string(&s).unwrap());
        let mut l = List::default();
        l.apply(vec![valheim, bf2, row("127.0.0.1:12", "c", 1, "a2s")]);
        let items: Vec<Item> = l
            .page(&Query::default(), Sort::Addr, None, 10)
            .0
            .entries
            .iter()
            .map(Listed::item)
            .collect();
        let named: Vec<_> = items
            .iter()
            .map(|i| (i.game.as_deref(), i.game_id, i.game_rule))
            .collect();
        assert_eq!(
            named,
            [
                (Some("Valheim"), Some("valheim"), Some("a2s_app_id")),
                (Some("Battlefield 2"), Some("bf2"), Some("gamespy_gamename")),
                (None, None, None)
            ]
        );
        for (name, addr) in [
            ("valheim", "127.0.0.1:10"),
            ("Battlefield 2", "127.0.0.1:11"),
            ("BF2", "127.0.0.1:11"),
            // the status's own name still finds it
            ("my viking server", "127.0.0.1:10"),
        ] {
            let q = Query {
                game: Some(name.into()),
                ..Query::default()
            };
            let found: Vec<String> = l
                .page(&q, Sort::Addr, None, 10)
                .0
                .entries
                .iter()
                .map(|e| e.addr().to_string())
                .collect();
            assert_eq!(found, [addr], "{name}");
        }
        // Valve's \gamedir\ filter reads the server's own folder, as before
        let f = Filter::parse("\\gamedir\\valheim").unwrap();
        let v = l
            .valve_page(&f, ogp_proto::master::valve::END, usize::MAX)
            .servers;
        assert_eq!(v, ["127.0.0.1:10".parse::<SocketAddrV4>().unwrap()]);
    }

    #[test]
    fn game_is_the_game_name_and_the_filter_takes_any_of_its_names() {
        let mut with_mod = row("127.0.0.1:1", "a", 1, "ogp");
        let mut s: Status = serde_json::from_str(with_mod.summary.as_deref().unwrap()).unwrap();
        s.game_name = Some("Demo Arena".into());
        let mut m = ogp_proto::ModInfo::named("ctfplus");
        m.identifier = Some("ctfp".into());
        s.mod_info = Some(m);
        with_mod.summary = Some(serde_json::to_string(&s).unwrap());
        // A GoldSrc mod with no game description: its directory names the game.
        let mut only_mod = row("127.0.0.1:2", "b", 1, "a2s");
        let mut s = Status::default();
        s.game_name = Some("".into());
        s.mod_info = Some(ogp_proto::ModInfo::named("cstrike"));
        only_mod.summary = Some(serde_json::to_string(&s).unwrap());
        let mut l = List::default();
        l.apply(vec![with_mod, only_mod, row("127.0.0.1:3", "c", 1, "gqp")]);
        let items: Vec<Item> = l
            .page(&Query::default(), Sort::Addr, None, 10)
            .0
            .entries
            .iter()
            .map(Listed::item)
            .collect();
        let games: Vec<_> = items
            .iter()
            .map(|i| (i.game.as_deref(), i.mod_name.as_deref()))
            .collect();
        assert_eq!(
            games,
            [
                (Some("Demo Arena"), Some("ctfplus")),
                (Some("cstrike"), Some("cstrike")),
                (None, None)
            ]
        );
        let json = serde_json::to_value(&items[0]).unwrap();
        assert_eq!(
            (json["game"].as_str(), json["mod"].as_str()),
            (Some("Demo Arena"), Some("ctfplus"))
        );
        for name in ["demo arena", "CTFP", "CtfPlus"] {
            let q = Query {
                game: Some(name.into()),
                ..Query::default()
            };
            let found: Vec<_> = l
                .page(&q, Sort::Addr, None, 10)
                .0
                .entries
                .iter()
                .map(|e| e.addr().port())
                .collect();
            assert_eq!(found, [1], "{name}");
        }
    }

    #[test]
    fn pages_filters_and_valve_pages() {
        let mut l = List::default();
        let mut rows = Vec::new();
        for i in 0..500u32 {
            rows.push(row(
                &format!("127.0.{}.{}:27015", i / 256, i % 256),
                &format!("Server {i}"),
                i % 11,
                if i % 2 == 0 { "a2s,ogp" } else { "ogp" },
            ));
        }
        rows.push(row("[::1]:27015", "six", 1, "a2s"));
        assert_eq!(l.apply(rows), 501);
        assert_eq!((l.version, l.high_water), (1, 5));
        // paging visits every server once, in address order
        let q = Query::default();
        let mut seen = Vec::new();
        let mut cursor = None;
        loop {
            let p = l.page(&q, Sort::Addr, cursor, 100).0;
            assert_eq!(p.total, 501);
            seen.extend(p.entries.iter().map(|e| e.addr()));
            match p.next {
                Some(n) => cursor = Cursor::parse(Sort::Addr, &n),
                None => break,
            }
        }
        assert_eq!(seen.len(), 501);
        assert!(seen.windows(2).all(|w| w[0] < w[1]));
        // filters
        let q = Query {
            name: Some("server 1".into()),
            has_players: true,
            not_full: true,
            ..Query::default()
        };
        let p = l.page(&q, Sort::Addr, None, 1000).0;
        assert!(p
            .entries
            .iter()
            .all(|e| e.item().name.starts_with("Server 1") && (1..10).contains(&e.item().players)));
        assert_eq!(p.total, p.entries.len());
        // Valve pages: IPv4, A2S only, 231 at most, ending with the terminator flag
        let f = Filter::parse("").unwrap();
        let a = l.valve_page(&f, ogp_proto::master::valve::END, usize::MAX);
        assert_eq!((a.servers.len(), a.end, a.looked), (231, false, 463));
        let b = l.valve_page(&f, *a.servers.last().unwrap(), usize::MAX);
        assert_eq!((b.servers.len(), b.end, b.looked), (19, true, 39));
        let f = Filter::parse("\\empty\\1").unwrap();
        let c = l.valve_page(&f, ogp_proto::master::valve::END, usize::MAX);
        assert!(c.servers.len() < 231);
        // a pass stops at its allowance: what it found, not the end of the list
        let d = l.valve_page(&f, ogp_proto::master::valve::END, 40);
        assert_eq!((d.looked, d.cut, d.end), (40, true, false));
        assert_eq!(d.servers[..], c.servers[..d.servers.len()]);
        // removal
        let mut gone = row("127.0.0.0:27015", "x", 0, "");
        gone.removed = true;
        gone.updated = 9;
        l.apply(vec![gone]);
        assert_eq!((l.len(), l.high_water), (500, 9));
        assert_eq!(l.on_ip("127.0.0.1".parse().unwrap(), usize::MAX), 1);
    }

    #[test]
    fn servers_on_an_ip_are_counted_up_to_the_cap_asked() {
        let mut l = List::default();
        let mut rows: Vec<ListRow> = (0..10)
            .map(|p| row(&format!("192.0.2.7:{}", 27000 + p), "x", 0, ""))
            .collect();
        rows.push(row("192.0.2.8:27000", "x", 0, ""));
        l.apply(rows);
        let ip = "192.0.2.7".parse().unwrap();
        assert_eq!(l.on_ip(ip, usize::MAX), 10);
        assert_eq!(l.on_ip(ip, 3), 3);
        assert_eq!(l.on_ip(ip, 10), 10);
        assert_eq!(l.on_ip("192.0.2.9".parse().unwrap(), 64), 0);
    }

    fn many(n: u32) -> Vec<ListRow> {
        (0..n)
            .map(|i| {
                row(
                    &format!("127.0.{}.{}:27015", i / 256, i % 256),
                    &format!("Server {i}"),
                    (i * 7) % 11,
                    if i % 2 == 0 { "a2s,ogp" } else { "ogp" },
                )
            })
            .collect()
    }

    /// A first page made now counts its total in the pass that makes it (one pass over
    /// the list, where it was two): the count a pass of its own gives, in either order,
    /// with more matches than the page holds, and kept for the next pages.
    #[test]
    fn a_first_pages_total_is_counted_in_its_own_pass() {
        let mut l = List::default();
        l.apply(many(500));
        for q in [
            Query {
                has_players: true,
                ..Query::default()
            },
            Query {
                name: Some("server 1".into()),
                ..Query::default()
            },
        ] {
            let want = l.count_plain(&q);
            assert!(want > 100, "{q:?}: {want}");
            for sort in [Sort::Addr, Sort::Players] {
                let p = l.refresh_first_page(&q, sort, 10);
                assert_eq!((p.total, p.entries.len()), (want, 10), "{q:?} {sort:?}");
                assert!(p.entries.iter().all(|e| l.matches(
                    &q,
                    l.entries.slot(e.addr).unwrap(),
                    &e.entry
                )));
                assert_eq!(p.next, p.entries.last().map(|e| Cursor::of(sort, e)));
                assert_eq!(l.total(&q, false), want);
            }
        }
    }

    #[test]
    fn sorted_by_players_pages_visit_every_server_once_most_players_first() {
        let mut l = List::default();
        l.apply(many(500));
        for q in [
            Query::default(),
            Query {
                has_players: true,
                ..Query::default()
            },
        ] {
            let want = l.page(&q, Sort::Addr, None, 1000).0.total;
            let mut seen: Vec<(u32, SocketAddr)> = Vec::new();
            let mut cursor = None;
            for _ in 0..100 {
                let p = l.page(&q, Sort::Players, cursor, 37).0;
                assert_eq!(p.total, want);
                seen.extend(p.entries.iter().map(|e| (e.entry.players, e.addr())));
                match p.next {
                    Some(n) => cursor = Some(Cursor::parse(Sort::Players, &n).unwrap()),
                    None => break,
                }
            }
            assert_eq!(seen.len(), want, "{q:?}");
            assert!(
                seen.windows(2)
                    .all(|w| w[0].0 > w[1].0 || (w[0].0 == w[1].0 && w[0].1 < w[1].1)),
                "not in order: {seen:?}"
            );
            assert_eq!(seen.first().map(|s| s.0), Some(10));
        }
        // a cursor past the end, and cursors that are not ones
        let end = Cursor::parse(Sort::Players, "0,255.255.255.255:65535").unwrap();
        assert!(l
            .page(&Query::default(), Sort::Players, Some(end), 10)
            .0
            .entries
            .is_empty());
        for bad in [
            "",
            "5",
            "x,127.0.0.1:1",
            "5,nowhere",
            "-1,127.0.0.1:1",
            "5;127.0.0.1:1",
        ] {
            assert_eq!(Cursor::parse(Sort::Players, bad), None, "{bad:?}");
        }
        assert_eq!(Cursor::parse(Sort::Addr, "5,127.0.0.1:1"), None);
    }

    /// The counts `stats` answers from, against a count over the list, through
    /// additions, changes (players, up, protocols) and removals.
    #[test]
    fn stats_are_kept_up_to_date_as_entries_change() {
        fn recount(l: &List) -> (usize, usize, u64, BTreeMap<&'static str, usize>) {
            let mut by = BTreeMap::new();
            let (mut up, mut players) = (0, 0u64);
            for (_, _, e) in l.entries.iter() {
                if e.up {
                    up += 1;
                    players += u64::from(e.players);
                }
                for p in e.protocols.iter() {
                    *by.entry(p.name()).or_insert(0) += 1;
                }
            }
            (l.len(), up, players, by)
        }
        let mut l = List::default();
        l.apply(many(300));
        assert_eq!(l.stats(), recount(&l));
        assert_eq!(l.stats().1, 300);
        let mut changes = Vec::new();
        for i in 0..100u32 {
            let mut r = row(
                &format!("127.0.{}.{}:27015", i / 256, i % 256),
                "changed",
                i % 5,
                if i % 3 == 0 { "quake3" } else { "a2s" },
            );
            r.updated = 6;
            r.up = i % 4 != 0;
            r.removed = i % 10 == 0;
            changes.push(r);
        }
        l.apply(changes);
        assert_eq!(l.len(), 290);
        assert_eq!(l.stats(), recount(&l));
        assert!(l.stats().3.contains_key("quake3"));
    }

    /// A first page is made once and served to every client until the list changes,
    /// and for up to `CACHE_STALE` after; another query is made afresh.
    #[test]
    fn first_pages_are_cached_until_the_list_changes() {
        let mut l = List::default();
        l.apply(many(100));
        let q = Query {
            has_players: true,
            ..Query::default()
        };
        let a = l.page(&q, Sort::Players, None, 5).0;
        let b = l.page(&q, Sort::Players, None, 5).0;
        assert_eq!(a.version, b.version);
        let mut r = row("127.0.9.9:1", "new", 50, "a2s");
        r.updated = 7;
        l.apply(vec![r]);
        // within the stale window: the cached page, with the version it was made at
        let c = l.page(&q, Sort::Players, None, 5).0;
        assert_eq!((c.version, c.total), (a.version, a.total));
        // another size is another page, made now (its total too may be up to
        // `CACHE_STALE` old)
        let d = l.page(&q, Sort::Players, None, 6).0;
        assert_eq!(d.version, l.version);
        assert!(d.total == a.total || d.total == a.total + 1);
        // older than CACHE_STALE: answered as it is, and the first request to find it
        // so is told to make it again; the others meanwhile get it as it is
        l.age_cache();
        let (e, fresh) = l.page(&q, Sort::Players, None, 5);
        assert_eq!((e.version, fresh), (a.version, Freshness::Stale));
        let (f, fresh) = l.page(&q, Sort::Players, None, 5);
        assert_eq!((f.version, fresh), (a.version, Freshness::Fresh));
        let g = l.refresh_first_page(&q, Sort::Players, 5);
        assert_eq!((g.version, g.total), (l.version, a.total + 1));
        let (h, fresh) = l.page(&q, Sort::Players, None, 5);
        assert_eq!(
            (h.version, h.total, fresh),
            (l.version, a.total + 1, Freshness::Fresh)
        );
        assert_eq!(
            d.entries.first().map(|e| e.addr().to_string()).as_deref(),
            Some("127.0.9.9:1")
        );
    }

    fn rss_kb() -> u64 {
        std::fs::read_to_string("/proc/self/status")
            .unwrap_or_default()
            .lines()
            .find_map(|l| l.strip_prefix("VmRSS:"))
            .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
            .unwrap_or(0)
    }

    /// `n` servers as `ogp-load master --simulated` writes them
    /// (`Store::insert_simulated_range`), one in a hundred speaking OGP besides A2S (the
    /// benchmark's live servers).
    fn simulated(n: u32) -> List {
        let mut l = List::default();
        for chunk in 0..n.div_ceil(5000) {
            let rows = (chunk * 5000..((chunk + 1) * 5000).min(n))
                .map(|i| {
                    let mut s = Status::default();
                    s.host_name = Some(format!("Simulated server {i}").into());
                    s.game_name = Some(["tf", "cstrike", "bf2", "quake"][(i % 4) as usize].into());
                    s.map = Some(ogp_proto::MapInfo::named(
                        ["de_dust2", "2fort", "strike_at_karkand"][(i % 3) as usize],
                    ));
                    s.player_count = Some(i % 33);
                    s.slot_max = Some(32);
                    s.password = Some(i % 10 == 0);
                    let mut r = row(
                        &SocketAddr::from(([10, (i >> 16) as u8, (i >> 8) as u8, i as u8], 27015))
                            .to_string(),
                        "",
                        0,
                        if i % 100 == 0 { "a2s,ogp" } else { "a2s" },
                    );
                    r.summary = Some(serde_json::to_string(&s).unwrap());
                    r
                })
                .collect();
            l.apply(rows);
        }
        l
    }

    /// A first page being made holds up the requests for that page only: another
    /// query's first page is made meanwhile.
    #[test]
    fn a_first_page_being_made_holds_up_only_its_own_requests() {
        let mut l = List::default();
        l.apply(many(50));
        let l = std::sync::Arc::new(l);
        let a = (
            Query {
                has_players: true,
                ..Query::default()
            },
            Sort::Addr,
            10,
        );
        let held = std::sync::Arc::clone(l.cache().making.entry(a).or_default());
        let _making_a = held.lock().unwrap();
        let b = Query {
            not_full: true,
            ..Query::default()
        };
        let want = l.count_plain(&b);
        let (tx, rx) = std::sync::mpsc::channel();
        let other = std::sync::Arc::clone(&l);
        std::thread::spawn(move || {
            let _ = tx.send(other.page(&b, Sort::Addr, None, 10).0.total);
        });
        assert_eq!(
            rx.recv_timeout(std::time::Duration::from_secs(10)).ok(),
            Some(want)
        );
    }

    /// What an entry costs: `cargo test --release -p ogp-master --lib
    /// list::tests::bytes_per_entry -- --ignored --nocapture` (docs/master.md).
    #[test]
    #[ignore = "a measurement: a million entries"]
    fn bytes_per_entry() {
        let n = 1_000_000u32;
        let before = rss_kb();
        let l = simulated(n);
        let after = rss_kb();
        let (scan, rows) = l.scan.bytes();
        let (table, _) = l.entries.bytes();
        println!(
            "size_of::<Entry>() = {} bytes; {} entries: {} MB of RSS, {} bytes each; \
             of which the entries and the trees: {} MB, {} bytes each; \
             the compact copy: {} MB, {} bytes each",
            std::mem::size_of::<Entry>(),
            l.len(),
            (after - before) / 1024,
            (after - before) * 1024 / u64::from(n),
            table >> 20,
            table / rows.max(1),
            scan >> 20,
            scan / rows.max(1)
        );
        // the Valve index (one key a server), built again in address order and in a
        // random one (a database's refreshes come in no order of addresses)
        let mut shuffled: Vec<(SocketAddr, &Entry)> =
            l.entries.iter().map(|(a, _, e)| (a, e)).collect();
        let mut r = Rng(7);
        for i in (1..shuffled.len()).rev() {
            shuffled.swap(i, r.below(i + 1));
        }
        let mut copies = Vec::new();
        for (order, entries) in [
            (
                "address",
                l.entries.iter().map(|(a, _, e)| (a, e)).collect(),
            ),
            ("random", shuffled),
        ] {
            let before = rss_kb();
            let mut copy = valve_index::ValveIndex::default();
            for (a, e) in entries {
                copy.add(a, e);
            }
            let after = rss_kb();
            println!(
                "Valve index, {order} order: {} keys, {} bytes each",
                copy.held().0,
                after.saturating_sub(before) * 1024 / u64::from(n)
            );
            copies.push(copy);
        }
    }

    /// The requests of issue 41 (those of `ogp-load master`), each a cold first page of
    /// 100 at a million servers: the plain pass over the entries against the compact
    /// copy, in one run: `cargo test --release -p ogp-master --lib
    /// list::tests::cold_first_pages -- --ignored --nocapture` (docs/master.md).
    #[test]
    #[ignore = "a measurement: a million entries"]
    fn cold_first_pages() {
        let t = std::time::Instant::now();
        let l = simulated(1_000_000);
        println!("{} entries made in {:?}", l.len(), t.elapsed());
        let t = std::time::Instant::now();
        let mut copy = scan::Scan::default();
        for (addr, _, e) in l.entries.iter() {
            copy.put(scan::NONE, addr, e);
        }
        println!(
            "their compact copy made again in {:?} (what it adds to the merges)",
            t.elapsed()
        );
        drop(copy);
        let q = Query::default;
        let kinds = [
            ("first page by players", q(), Sort::Players),
            (
                "game=tf",
                Query {
                    game: Some("tf".into()),
                    ..q()
                },
                Sort::Addr,
            ),
            (
                "map=2fort",
                Query {
                    map: Some("2fort".into()),
                    ..q()
                },
                Sort::Addr,
            ),
            (
                "name=server 42",
                Query {
                    name: Some("server 42".into()),
                    ..q()
                },
                Sort::Addr,
            ),
            (
                "protocol=ogp",
                Query {
                    protocol: Some(Protocol::Ogp),
                    ..q()
                },
                Sort::Addr,
            ),
            (
                "has_players",
                Query {
                    has_players: true,
                    ..q()
                },
                Sort::Addr,
            ),
            (
                "not_full",
                Query {
                    not_full: true,
                    ..q()
                },
                Sort::Addr,
            ),
            (
                "password=false",
                Query {
                    password: Some(false),
                    ..q()
                },
                Sort::Addr,
            ),
            (
                "all filters, by players",
                Query {
                    game: Some("tf".into()),
                    has_players: true,
                    not_full: true,
                    password: Some(false),
                    ..q()
                },
                Sort::Players,
            ),
            (
                "game nobody has",
                Query {
                    game: Some("nothing".into()),
                    ..q()
                },
                Sort::Addr,
            ),
        ];
        println!("| request (first page of 100) | matches | plain pass: min / max ms | compact copy: min / max ms |");
        println!("|---|---|---|---|");
        for (name, q, sort) in kinds {
            let mut plain = Vec::new();
            let mut scan = Vec::new();
            let mut total = 0;
            for _ in 0..5 {
                let t = std::time::Instant::now();
                let a = l.make_page_plain(&q, sort, None, 100);
                plain.push(t.elapsed().as_secs_f64() * 1e3);
                let t = std::time::Instant::now();
                let b = l.make_page(&q, sort, None, 100, true);
                scan.push(t.elapsed().as_secs_f64() * 1e3);
                assert_eq!(
                    (b.total, addrs(&b.entries)),
                    (a.total, addrs(&a.entries)),
                    "{name}"
                );
                total = a.total;
            }
            let mm = |v: &[f64]| {
                (
                    v.iter().copied().fold(f64::MAX, f64::min),
                    v.iter().copied().fold(0.0, f64::max),
                )
            };
            let ((p0, p1), (s0, s1)) = (mm(&plain), mm(&scan));
            println!("| {name} | {total} | {p0:.1} / {p1:.1} | {s0:.1} / {s1:.1} |");
        }
    }

    fn addrs(entries: &[Listed]) -> Vec<SocketAddr> {
        entries.iter().map(Listed::addr).collect()
    }

    /// A small deterministic generator (xorshift64*).
    pub(super) struct Rng(pub(super) u64);

    impl Rng {
        pub(super) fn below(&mut self, n: usize) -> usize {
            self.0 ^= self.0 >> 12;
            self.0 ^= self.0 << 25;
            self.0 ^= self.0 >> 27;
            (self.0.wrapping_mul(0x2545_f491_4f6c_dd1d) >> 33) as usize % n
        }

        pub(super) fn pick<T: Clone>(&mut self, xs: &[T]) -> T {
            xs[self.below(xs.len())].clone()
        }
    }

    /// Removes every entry of `l` (rows marked removed, changed at `updated`).
    pub(super) fn remove_everyone(l: &mut List, updated: i64) {
        let everyone: Vec<ListRow> = l
            .entries
            .iter()
            .map(|(a, _, _)| {
                let mut gone = row(&a.to_string(), "", 0, "");
                gone.removed = true;
                gone.updated = updated;
                gone
            })
            .collect();
        l.apply(everyone);
        assert!(l.is_empty());
    }

    fn random_row(r: &mut Rng, updated: i64) -> ListRow {
        let addr = match r.below(4) {
            0 => format!("[2001:db8::{}]:{}", r.below(6), r.pick(&[1, 27015])),
            1 => format!("[::ffff:10.0.0.{}]:{}", r.below(4), r.pick(&[1, 27015])),
            _ => format!(
                "10.0.{}.{}:{}",
                r.below(3),
                r.below(12),
                r.pick(&[1, 27015, 65535])
            ),
        };
        let mut s = Status::default();
        s.host_name = r
            .pick(&[
                Some("Alpha"),
                Some("alpha BETA"),
                Some("Ünïcode Straße"),
                Some(""),
                None,
                Some("Server 42"),
                Some("server 421 x"),
            ])
            .map(Into::into);
        s.game_name = r
            .pick(&[
                None,
                Some("tf"),
                Some("TF"),
                Some("cstrike"),
                Some(""),
                Some("battlefield2"),
            ])
            .map(Into::into);
        s.mod_info = match r.below(4) {
            0 => {
                let mut m = ogp_proto::ModInfo::named("ctfplus");
                m.identifier = Some("ctfp".into());
                Some(m)
            }
            1 => Some(ogp_proto::ModInfo::named("cstrike")),
            _ => None,
        };
        s.map = r
            .pick(&[
                None,
                Some("2fort"),
                Some("2FORT"),
                Some("de_dust2"),
                Some(""),
            ])
            .map(ogp_proto::MapInfo::named);
        s.player_count = Some(r.below(4) as u32);
        s.slot_max = r.pick(&[None, Some(0), Some(2), Some(3)]);
        s.password = r.pick(&[None, Some(true), Some(false)]);
        let mut row = row(
            &addr,
            "",
            0,
            r.pick(&[
                "a2s",
                "ogp",
                "a2s,ogp",
                "quake3",
                "gamespy3",
                "ogp,gamespy3",
                "quakeworld",
                "a2s,teeworlds,cube2",
                "teeworlds7",
            ]),
        );
        row.summary = Some(serde_json::to_string(&s).unwrap());
        row.up = r.below(4) != 0;
        row.removed = r.below(6) == 0;
        row.gs1_game = r.pick(&[None, None, Some("ut".to_owned())]);
        row.list_protocol = r.pick(&[None, None, Some(68)]);
        row.updated = updated;
        row
    }

    fn random_query(r: &mut Rng) -> Query {
        let some = |r: &mut Rng, xs: &[&str]| (r.below(2) == 0).then(|| r.pick(xs).to_owned());
        Query {
            game: some(
                r,
                &[
                    "tf",
                    "Tf",
                    "ctfp",
                    "CTFPLUS",
                    "cstrike",
                    "Battlefield 2",
                    "BF2",
                    "ut",
                    "nothing",
                    "",
                ],
            ),
            protocol: (r.below(3) == 0).then(|| {
                r.pick(&[
                    Protocol::A2s,
                    Protocol::Ogp,
                    Protocol::Gamespy3,
                    Protocol::Quakeworld,
                ])
            }),
            map: some(r, &["2fort", "2Fort", "de_dust2", "none", ""]),
            name: some(
                r,
                &[
                    "", "a", "alpha", "beta", "straße", "42", "server 4", "zzz", "ü", "x",
                ],
            ),
            has_players: r.below(3) == 0,
            not_full: r.below(3) == 0,
            password: r.pick(&[None, None, Some(true), Some(false)]),
            up: r.pick(&[None, None, Some(true), Some(false)]),
        }
    }

    /// The cache's lookup alone (what the API answers on its async worker) finds a first
    /// page once one was made, the same page [`List::page`] answers, and none before,
    /// nor one of another order or length.
    #[test]
    fn a_cached_first_page_is_found_without_making_it() {
        let mut r = Rng(7);
        let mut l = List::default();
        l.apply((0..50).map(|_| random_row(&mut r, 1)).collect());
        let q = Query::default();
        assert!(l.cached_first_page(&q, Sort::Players, 10).is_none());
        let (made, fresh) = l.page(&q, Sort::Players, None, 10);
        assert_eq!(fresh, Freshness::Fresh);
        let (hit, fresh) = l.cached_first_page(&q, Sort::Players, 10).expect("cached");
        assert_eq!(fresh, Freshness::Fresh);
        let addrs = |p: &Page| p.entries.iter().map(|e| e.addr).collect::<Vec<_>>();
        assert_eq!(addrs(&hit), addrs(&made));
        assert_eq!((hit.total, hit.version), (made.total, made.version));
        assert!(
            l.cached_first_page(&q, Sort::Addr, 10).is_none(),
            "another sort"
        );
        assert!(
            l.cached_first_page(&q, Sort::Players, 11).is_none(),
            "another limit"
        );
    }

    /// The compact copy's pages equal the plain pass's, in both orders, page after page
    /// and from cursors that are no page's, as random batches add, change and remove
    /// servers (names changing too: the arena is compacted along the way); emptied, the
    /// copy holds nothing.
    #[test]
    fn compact_pages_equal_the_plain_pass_through_random_changes() {
        for seed in 1..=2u64 {
            let mut r = Rng(seed.wrapping_mul(0x9e37_79b9_7f4a_7c15));
            let mut l = List::default();
            let mut updated = 10;
            for _ in 0..20 {
                updated += 1;
                let batch: Vec<ListRow> = (0..30).map(|_| random_row(&mut r, updated)).collect();
                l.apply(batch);
                assert_eq!(l.scan.held().4, l.len());
                // the game masters' index holds exactly the entries they can list
                let want: Vec<SocketAddr> = l
                    .entries
                    .iter()
                    .filter(|(_, _, e)| e.on_game_lists())
                    .map(|(a, _, _)| a)
                    .collect();
                assert_eq!(l.game_lists.iter().copied().collect::<Vec<_>>(), want);
                for k in 0..13 {
                    // no filter too, each round: the first page by players then starts
                    // from the counts of players kept
                    let q = if k == 0 {
                        Query::default()
                    } else {
                        random_query(&mut r)
                    };
                    for sort in [Sort::Addr, Sort::Players] {
                        let limit = r.pick(&[1, 3, 7, 100]);
                        let mut cursors = vec![
                            None,
                            Some(Cursor::Addr(random_row(&mut r, 0).addr.parse().unwrap())),
                            Some(Cursor::Players(
                                r.below(5) as u32,
                                random_row(&mut r, 0).addr.parse().unwrap(),
                            )),
                        ];
                        let mut pages = 0;
                        while let Some(cursor) = cursors.pop() {
                            let a = l.make_page(&q, sort, cursor, limit, true);
                            let b = l.make_page_plain(&q, sort, cursor, limit);
                            let what = format!("{q:?} {sort:?} {cursor:?} {limit}");
                            assert_eq!(addrs(&a.entries), addrs(&b.entries), "{what}");
                            assert_eq!((&a.next, a.total), (&b.next, b.total), "{what}");
                            assert_eq!(l.scan.count(&q), b.total, "{what}");
                            let next = b.next;
                            pages += 1;
                            if pages < 40 {
                                if let Some(n) = next {
                                    cursors.push(Some(Cursor::parse(sort, &n).unwrap()));
                                }
                            }
                        }
                    }
                }
            }
            remove_everyone(&mut l, updated + 1);
            assert_eq!(l.scan.held(), (0, 0, 0, 0, 0));
            assert!(l.game_lists.is_empty());
        }
    }

    /// The list requests at a million A2S servers and 1,000 game masters' servers: the
    /// game masters' lists (their index walked, against the pass over every entry that
    /// each request made before it) and Valve pages whose filter matches nothing
    /// (`cargo test --release -p ogp-master --lib list::tests::list_requests_at_a_million
    /// -- --ignored --nocapture`, docs/master.md).
    #[test]
    #[ignore = "a measurement: a million entries"]
    fn list_requests_at_a_million() {
        let mut l = simulated(1_000_000);
        let theirs: Vec<ListRow> = (0..1000u32)
            .map(|i| {
                let addr = format!("11.0.{}.{}:27960", i >> 8, i & 0xff);
                let mut r = row(
                    &addr,
                    "q",
                    1,
                    ["quake3", "quakeworld", "gamespy3"][i as usize % 3],
                );
                if i % 3 == 0 {
                    r.list_protocol = Some(68);
                }
                if i % 3 == 2 {
                    r.gs1_game = Some("ut".into());
                }
                r
            })
            .collect();
        l.apply(theirs);
        let req = ServersRequest::decode(b"\xff\xff\xff\xffgetservers 68 empty full")
            .expect("a getservers request");
        let ms = |f: &mut dyn FnMut() -> usize| {
            let t = std::time::Instant::now();
            let n = f();
            (n, t.elapsed().as_secs_f64() * 1e3)
        };
        let (all, pass) = ms(&mut || {
            l.entries
                .iter()
                .filter(|(_, _, e)| e.on_game_lists())
                .count()
        });
        println!(
            "a pass over the {} entries (each request before): {pass:.2} ms, {all} on game lists",
            l.len()
        );
        let lists: [(&str, &mut dyn FnMut() -> usize); 5] = [
            ("dpmaster getservers 68", &mut || l.dp_servers(&req).len()),
            ("QuakeWorld", &mut || l.qw_servers().len()),
            ("GameSpy v1 ut", &mut || l.gs1_servers("ut").len()),
            ("Teeworlds", &mut || l.tw_servers(Protocol::Teeworlds).len()),
            ("Cube 2", &mut || l.cube2_servers().len()),
        ];
        for (name, f) in lists {
            let (n, t) = ms(f);
            println!("{name}: {n} servers in {t:.3} ms");
            assert!(t < pass, "{name}: {t} ms, not under the pass's {pass} ms");
        }
        // Valve pages (issue 41), among them 1,000 servers of a small game spread over
        // the list: before, every page walked the list from the seed until 231 servers
        // matched (the plain pass, kept here to compare); now a filter naming a game
        // walks its servers only, and a pass stops at what its source can pay
        let small: Vec<ListRow> = (0..1000u32)
            .map(|i| {
                let j = i * 1000;
                let ip = [10, (j >> 16) as u8, (j >> 8) as u8, j as u8];
                let mut r = row(&SocketAddr::from((ip, 27016)).to_string(), "gm", 1, "a2s");
                let mut s = Status::default();
                s.host_name = Some(format!("Small game {i}").into());
                let mut a = ogp_proto::A2sInfo::default();
                a.app_id = Some(4000);
                a.folder = Some("garrysmod".into());
                s.a2s = Some(a);
                r.summary = Some(serde_json::to_string(&s).unwrap());
                r
            })
            .collect();
        l.apply(small);
        let fresh = {
            let t0 = std::time::Instant::now();
            let b = ogp_proto::master::valve::ListBudget::new(Default::default(), [0; 16], t0);
            let from = "192.0.2.1".parse().unwrap();
            let _ = b.admit(t0, from);
            b.looks_allowed(t0, from)
        };
        println!("| filter | before: looked, ms | after: looked, ms | after, bounded ({fresh} looks): looked, ms | ns a look (before / after) |");
        for filter in [
            "",
            "\\appid\\4000",
            "\\gamedir\\garrysmod",
            "\\appid\\4000\\name_match\\*zzz*",
            "\\gamedir\\nothing",
            "\\name_match\\*zzz*",
            "\\appid\\255\\name_match\\*zzz*",
        ] {
            let f = Filter::parse(filter).unwrap();
            let end = ogp_proto::master::valve::END;
            let best = |g: &dyn Fn() -> ValvePage| {
                (0..3)
                    .map(|_| {
                        let t = std::time::Instant::now();
                        let p = g();
                        (t.elapsed().as_secs_f64() * 1e3, p)
                    })
                    .min_by(|a, b| a.0.total_cmp(&b.0))
                    .unwrap()
            };
            let (t0, p0) = best(&|| valve_index::page(&l, &f, end, usize::MAX, false));
            let (t1, p1) = best(&|| l.valve_page(&f, end, usize::MAX));
            let (t2, p2) = best(&|| l.valve_page(&f, end, fresh));
            assert_eq!((&p0.servers, p0.end), (&p1.servers, p1.end), "{filter}");
            let ns = |t: f64, p: &ValvePage| t * 1e6 / p.looked.max(1) as f64;
            println!(
                "| `{filter}` ({} servers) | {}, {t0:.2} | {}, {t1:.2} | {}, {t2:.2} | {:.0} / {:.0} |",
                p1.servers.len(),
                p0.looked,
                p1.looked,
                p2.looked,
                ns(t0, &p0),
                ns(t1, &p1),
            );
        }
        assert_eq!(l.dp_servers(&req).len(), 334);
        assert_eq!(l.qw_servers().len(), 333);
        assert_eq!(l.gs1_servers("ut").len(), 333);
    }

    #[test]
    fn the_gamespy_list_holds_up_ipv4_servers_of_its_game() {
        let mut rows = Vec::new();
        for (addr, game, up) in [
            ("1.2.3.4:7778", Some("ut"), true),
            ("1.2.3.5:7778", Some("UT"), true),
            ("1.2.3.6:7778", Some("ut"), false),
            ("1.2.3.7:23000", Some("bfield1942"), true),
            ("1.2.3.8:7778", None, true),
            ("[2001:4860::1]:7778", Some("ut"), true),
        ] {
            let mut r = row(addr, "x", 1, "gamespy3");
            r.gs1_game = game.map(str::to_owned);
            r.up = up;
            rows.push(r);
        }
        let mut list = List::default();
        list.apply(rows);
        let got: Vec<String> = list
            .gs1_servers("Ut")
            .iter()
            .map(|a| a.to_string())
            .collect();
        assert_eq!(got, ["1.2.3.4:7778", "1.2.3.5:7778"]);
        assert_eq!(list.gs1_servers("bfield1942").len(), 1);
        assert!(list.gs1_servers("quake3").is_empty());
        assert!(list.has_gs1_game("1.2.3.4:7778".parse().unwrap()));
        // the API names the heartbeat's game while the status does not
        let item = list.listed("1.2.3.4:7778".parse().unwrap()).unwrap().item();
        assert_eq!(item.game.as_deref(), Some("ut"));
        assert!(!list.has_gs1_game("1.2.3.8:7778".parse().unwrap()));
    }

    #[test]
    fn the_teeworlds_list_holds_up_teeworlds_06_servers() {
        let mut rows = Vec::new();
        for (addr, protocols, up) in [
            ("1.2.3.4:8303", "teeworlds", true),
            ("1.2.3.5:8303", "teeworlds", false),
            ("1.2.3.6:8303", "teeworlds7", true),
            ("1.2.3.7:27960", "quake3", true),
            ("[2001:4860::1]:8303", "teeworlds", true),
        ] {
            let mut r = row(addr, "x", 1, protocols);
            r.up = up;
            rows.push(r);
        }
        let mut list = List::default();
        list.apply(rows);
        let got: Vec<String> = list
            .tw_servers(Protocol::Teeworlds)
            .iter()
            .map(|a| a.to_string())
            .collect();
        assert_eq!(got, ["1.2.3.4:8303", "[2001:4860::1]:8303"]);
        let got: Vec<String> = list
            .tw_servers(Protocol::Teeworlds7)
            .iter()
            .map(|a| a.to_string())
            .collect();
        assert_eq!(got, ["1.2.3.6:8303"]);
    }
}
