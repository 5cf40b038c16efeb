//! A compact copy of what the API's filters read (issue 41): one 32-byte row per listed
//! server in one vector, and the lower-case names in one arena. A page that is not a
//! later page by address is a pass over these rows (or, for a name search, one
//! `memmem` search of the arena), not over the boxed entries of the tree: a cold first
//! page of a million servers reads about 60 MB in order instead of chasing a million
//! pointers, and a filter no server can match (a game, a map or a protocol nobody has)
//! is answered without a pass.
//!
//! Kept up to date by [`super::List::merge`] ([`Scan::put`], [`Scan::remove`]); a server
//! keeps its slot (its row's index) while it is listed, and a freed slot is reused.

use std::borrow::Borrow;
use std::cmp::Reverse;
use std::collections::{BinaryHeap, HashMap};
use std::fmt::Write as _;
use std::hash::Hash;
use std::net::{Ipv4Addr, SocketAddr, SocketAddrV4, SocketAddrV6};

use memchr::memmem::Finder;
use ogp_proto::master::valve::lowercase_name;

use super::table::{v4_key, v4_of};
use super::{Entry, Protocols, Query};

/// A row in use (a free row has no flags).
const LIVE: u8 = 1;
/// Answering.
const UP: u8 = 2;
/// Password needed.
const PASSWORD: u8 = 4;
/// As many players as slots.
const FULL: u8 = 8;
/// The key of every IPv6 address (the address itself is in [`Scan::v6`]): after every
/// IPv4 one, as in [`SocketAddr`]'s order.
const V6: u64 = 1 << 63;
/// No id (no map, no game).
pub(super) const NONE: u32 = u32::MAX;
/// Ends a name in the arena: never a byte of UTF-8, so never one of a search string,
/// and a match never spans two names.
const END: u8 = 0xFF;
/// A name's header in the arena: its slot, 7 bits a byte (never [`END`]).
const HEADER: usize = 5;
/// Dead bytes of the arena (names replaced or removed) tolerated beyond its live ones
/// before it is compacted.
#[cfg(not(test))]
const COMPACT_MIN: usize = 1 << 20;
#[cfg(test)]
const COMPACT_MIN: usize = 64;

/// Player counts held one by one in [`Scan::by_players`]; counts at or above it share
/// its last place.
#[cfg(not(test))]
const PLAYER_COUNTS: usize = 4096;
#[cfg(test)]
const PLAYER_COUNTS: usize = 3;

/// What the filters read of one server.
#[derive(Debug, Clone, Copy)]
struct Row {
    /// IPv4: the address and port in their order; IPv6: [`V6`].
    key: u64,
    players: u32,
    /// Its set of game names (lower case), by [`Scan::games`].
    game: u32,
    /// Its map (lower case), by [`Scan::maps`], or [`NONE`].
    map: u32,
    /// Its set of protocols, by [`Scan::protocols`].
    protocols: u32,
    /// Where its name starts in the arena.
    name_at: u32,
    flags: u8,
}

impl Row {
    const FREE: Self = Self {
        key: 0,
        players: 0,
        game: NONE,
        map: NONE,
        protocols: NONE,
        name_at: NONE,
        flags: 0,
    };
}

const _: () = assert!(std::mem::size_of::<Row>() == 32);

/// Values shared by many rows, each held once with the count of rows holding it (freed
/// when none does: what this holds is bounded by the rows).
#[derive(Debug)]
struct Interner<K> {
    ids: HashMap<K, u32>,
    keys: Vec<Option<K>>,
    refs: Vec<u32>,
    free: Vec<u32>,
}

impl<K> Default for Interner<K> {
    fn default() -> Self {
        Self {
            ids: HashMap::new(),
            keys: Vec::new(),
            refs: Vec::new(),
            free: Vec::new(),
        }
    }
}

impl<K: Hash + Eq + Clone> Interner<K> {
    /// The id of `q`, held once more.
    fn add<Q>(&mut self, q: &Q, own: impl FnOnce(&Q) -> K) -> u32
    where
        K: Borrow<Q>,
        Q: Hash + Eq + ?Sized,
    {
        if let Some(&id) = self.ids.get(q) {
            if let Some(r) = self.refs.get_mut(id as usize) {
                *r += 1;
            }
            return id;
        }
        let k = own(q);
        let id = match self.free.pop() {
            Some(id) => {
                if let Some(slot) = self.keys.get_mut(id as usize) {
                    *slot = Some(k.clone());
                }
                if let Some(r) = self.refs.get_mut(id as usize) {
                    *r = 1;
                }
                id
            }
            None => {
                self.keys.push(Some(k.clone()));
                self.refs.push(1);
                (self.keys.len() - 1) as u32
            }
        };
        self.ids.insert(k, id);
        id
    }

    /// Holds `id` once less.
    fn release(&mut self, id: u32) {
        let Some(r) = self.refs.get_mut(id as usize) else {
            return;
        };
        *r = r.saturating_sub(1);
        if *r == 0 {
            if let Some(k) = self.keys.get_mut(id as usize).and_then(Option::take) {
                self.ids.remove(&k);
                self.free.push(id);
            }
        }
    }

    fn find<Q>(&self, q: &Q) -> Option<u32>
    where
        K: Borrow<Q>,
        Q: Hash + Eq + ?Sized,
    {
        self.ids.get(q).copied()
    }

    /// Whether each id's value passes `f`, by id; `None` when none does.
    fn which(&self, f: impl Fn(&K) -> bool) -> Option<Vec<bool>> {
        let t: Vec<bool> = self
            .keys
            .iter()
            .map(|k| k.as_ref().is_some_and(&f))
            .collect();
        t.contains(&true).then_some(t)
    }

    #[cfg(test)]
    fn live(&self) -> usize {
        self.ids.len()
    }
}

/// The names of a game set: each `LEN:NAME` (lengths in bytes), in the order of
/// [`Query::matches`]'s.
fn game_names(set: &str) -> impl Iterator<Item = &[u8]> {
    let mut rest = set.as_bytes();
    std::iter::from_fn(move || {
        let colon = memchr::memchr(b':', rest)?;
        let len: usize = std::str::from_utf8(rest.get(..colon)?).ok()?.parse().ok()?;
        let name = rest.get(colon + 1..colon + 1 + len)?;
        rest = rest.get(colon + 1 + len..)?;
        Some(name)
    })
}

fn slot_of(header: &[u8]) -> usize {
    header
        .iter()
        .rev()
        .fold(0usize, |s, b| (s << 7) | usize::from(*b))
}

/// The compact copy (see the module's documentation).
#[derive(Debug, Default)]
pub(super) struct Scan {
    rows: Vec<Row>,
    free: Vec<u32>,
    /// The IPv6 addresses, by slot (few servers).
    v6: HashMap<u32, SocketAddrV6>,
    games: Interner<Box<str>>,
    maps: Interner<Box<str>>,
    protocols: Interner<u64>,
    /// Each name: [`HEADER`], the lower-case name, [`END`].
    names: Vec<u8>,
    /// Bytes of `names` no row points at any more.
    dead: usize,
    /// Rows in use by player count (the last place: [`PLAYER_COUNTS`] or more): where
    /// the first page by players without filters starts, so that its pass looks only at
    /// the rows that can be on it.
    by_players: Vec<u32>,
    buf: String,
}

/// The place of a player count in [`Scan::by_players`].
fn players_place(players: u32) -> usize {
    (players as usize).min(PLAYER_COUNTS - 1)
}

/// A query made for the rows: its names looked up once.
struct Compiled<'q> {
    protocols: Option<Vec<bool>>,
    up: Option<bool>,
    game: Option<Vec<bool>>,
    map: Option<u32>,
    name: Option<Finder<'q>>,
    has_players: bool,
    not_full: bool,
    password: Option<bool>,
}

impl Compiled<'_> {
    /// [`Query::matches`] of the row, but for the name.
    fn row(&self, r: &Row) -> bool {
        if let Some(ok) = &self.protocols {
            if !ok.get(r.protocols as usize).copied().unwrap_or(false) {
                return false;
            }
        }
        if let Some(up) = self.up {
            if (r.flags & UP != 0) != up {
                return false;
            }
        }
        if let Some(ok) = &self.game {
            if !ok.get(r.game as usize).copied().unwrap_or(false) {
                return false;
            }
        }
        if let Some(m) = self.map {
            if r.map != m {
                return false;
            }
        }
        if self.has_players && r.players == 0 {
            return false;
        }
        if self.not_full && r.flags & FULL != 0 {
            return false;
        }
        if let Some(p) = self.password {
            if (r.flags & PASSWORD != 0) != p {
                return false;
            }
        }
        true
    }
}

/// A key of a page's order: players (descending; 0 for the address order), address.
pub(super) type Key = (Reverse<u32>, SocketAddr);

impl Scan {
    /// Puts `e`, the server at `addr`, in `slot` (a server listed already: its slot) or
    /// in a new slot ([`NONE`]); returns its slot.
    pub(super) fn put(&mut self, slot: u32, addr: SocketAddr, e: &Entry) -> u32 {
        let old = self
            .rows
            .get(slot as usize)
            .copied()
            .filter(|r| r.flags & LIVE != 0);
        // the new values are taken before the old are let go: an unchanged one is kept
        self.buf.clear();
        for k in [
            e.game_name.as_deref(),
            e.mod_id(),
            e.mod_name(),
            e.known.map(|g| g.name.as_str()),
            e.known.map(|g| g.id.as_str()),
        ]
        .into_iter()
        .flatten()
        {
            let _ = write!(self.buf, "{}:", k.len());
            self.buf.extend(k.chars().map(|c| c.to_ascii_lowercase()));
        }
        let game = if self.buf.is_empty() {
            NONE
        } else {
            self.games
                .add(self.buf.as_str(), |s: &str| -> Box<str> { s.into() })
        };
        self.buf.clear();
        let map = match e.map() {
            Some(m) => {
                self.buf.extend(m.chars().map(|c| c.to_ascii_lowercase()));
                self.maps
                    .add(self.buf.as_str(), |s: &str| -> Box<str> { s.into() })
            }
            None => NONE,
        };
        let protocols = self.protocols.add(&e.protocols.0, |p| *p);
        if self.by_players.is_empty() {
            self.by_players = vec![0; PLAYER_COUNTS];
        }
        if let Some(n) = self.by_players.get_mut(players_place(e.players)) {
            *n += 1;
        }
        let slot = match old {
            Some(o) => {
                if let Some(n) = self.by_players.get_mut(players_place(o.players)) {
                    *n = n.saturating_sub(1);
                }
                self.games.release(o.game);
                self.maps.release(o.map);
                self.protocols.release(o.protocols);
                slot
            }
            None => self.alloc(),
        };
        // the only copy of the lower-case name the list holds (the Valve filters' too)
        self.buf.clear();
        lowercase_name(&e.name, &mut self.buf);
        let name = std::mem::take(&mut self.buf);
        let same = old.is_some_and(|o| self.name_of(o.name_at) == Some(name.as_bytes()));
        let name_at = match old {
            Some(o) if same => o.name_at,
            _ => {
                if let Some(o) = old {
                    self.kill_name(o.name_at);
                }
                self.push_name(slot, name.as_bytes())
            }
        };
        self.buf = name;
        let key = match addr {
            SocketAddr::V4(a) => v4_key(&a),
            SocketAddr::V6(a) => {
                self.v6.insert(slot, a);
                V6
            }
        };
        let mut flags = LIVE;
        if e.up {
            flags |= UP;
        }
        if e.password.unwrap_or(false) {
            flags |= PASSWORD;
        }
        if e.max_players().is_some_and(|m| e.players >= m) {
            flags |= FULL;
        }
        if let Some(r) = self.rows.get_mut(slot as usize) {
            *r = Row {
                key,
                players: e.players,
                game,
                map,
                protocols,
                name_at,
                flags,
            };
        }
        self.maybe_compact();
        slot
    }

    /// Frees `slot` (a server no longer listed).
    pub(super) fn remove(&mut self, slot: u32) {
        let Some(r) = self.rows.get_mut(slot as usize) else {
            return;
        };
        if r.flags & LIVE == 0 {
            return;
        }
        let o = *r;
        *r = Row::FREE;
        if let Some(n) = self.by_players.get_mut(players_place(o.players)) {
            *n = n.saturating_sub(1);
        }
        self.games.release(o.game);
        self.maps.release(o.map);
        self.protocols.release(o.protocols);
        self.kill_name(o.name_at);
        self.v6.remove(&slot);
        self.free.push(slot);
        self.maybe_compact();
    }

    fn alloc(&mut self) -> u32 {
        if let Some(s) = self.free.pop() {
            return s;
        }
        self.rows.push(Row::FREE);
        (self.rows.len() - 1) as u32
    }

    fn name_end(&self, at: usize) -> usize {
        self.names
            .get(at..)
            .and_then(|n| memchr::memchr(END, n))
            .map_or(self.names.len(), |i| at + i)
    }

    fn name_of(&self, at: u32) -> Option<&[u8]> {
        let at = at as usize;
        self.names.get(at..self.name_end(at))
    }

    /// The name of the server in `slot`, in lower case ("" for a free slot).
    pub(super) fn lowercase_name(&self, slot: u32) -> &str {
        self.rows
            .get(slot as usize)
            .filter(|r| r.flags & LIVE != 0)
            .and_then(|r| self.name_of(r.name_at))
            .and_then(|n| std::str::from_utf8(n).ok())
            .unwrap_or_default()
    }

    /// Appends `slot`'s name; returns where it starts. (The arena is at most twice its
    /// live names, so 4 GB of it would be more than the whole list's memory budget.)
    fn push_name(&mut self, slot: u32, name: &[u8]) -> u32 {
        let mut s = slot;
        for _ in 0..HEADER {
            self.names.push((s & 0x7f) as u8);
            s >>= 7;
        }
        let at = self.names.len();
        self.names.extend_from_slice(name);
        self.names.push(END);
        u32::try_from(at).unwrap_or(NONE)
    }

    fn kill_name(&mut self, at: u32) {
        if let Some(n) = self.name_of(at) {
            self.dead += HEADER + n.len() + 1;
        }
    }

    /// Copies the live names to a new arena when the dead ones outweigh them.
    fn maybe_compact(&mut self) {
        let live = self.names.len().saturating_sub(self.dead);
        if self.dead <= live.max(COMPACT_MIN) {
            return;
        }
        let old = std::mem::take(&mut self.names);
        let mut names = Vec::with_capacity(live);
        let mut pos = 0;
        while let Some(header) = old.get(pos..pos + HEADER) {
            let at = pos + HEADER;
            let end = old
                .get(at..)
                .and_then(|n| memchr::memchr(END, n))
                .map_or(old.len(), |i| at + i);
            if let Some(r) = self.rows.get_mut(slot_of(header)) {
                if r.flags & LIVE != 0 && r.name_at as usize == at {
                    names.extend_from_slice(header);
                    r.name_at = u32::try_from(names.len()).unwrap_or(NONE);
                    names.extend_from_slice(old.get(at..=end).unwrap_or_default());
                }
            }
            pos = end + 1;
        }
        self.names = names;
        self.dead = 0;
    }

    fn compile<'q>(&self, q: &'q Query) -> Option<Compiled<'q>> {
        let protocols = match q.protocol {
            Some(p) => Some(self.protocols.which(|bits| Protocols(*bits).contains(p))?),
            None => None,
        };
        let game = match &q.game {
            Some(g) => {
                let g = g.to_ascii_lowercase();
                Some(
                    self.games
                        .which(|set| game_names(set).any(|n| n == g.as_bytes()))?,
                )
            }
            None => None,
        };
        let map = match &q.map {
            Some(m) => Some(self.maps.find(m.to_ascii_lowercase().as_str())?),
            None => None,
        };
        Some(Compiled {
            protocols,
            up: q.up,
            game,
            map,
            name: q
                .name
                .as_deref()
                .filter(|n| !n.is_empty())
                .map(|n| Finder::new(n.as_bytes())),
            has_players: q.has_players,
            not_full: q.not_full,
            password: q.password,
        })
    }

    /// Calls `f` with the slot and row of each server matching `c`.
    fn each(&self, c: &Compiled<'_>, mut f: impl FnMut(u32, &Row)) {
        let Some(finder) = &c.name else {
            for (i, r) in self.rows.iter().enumerate() {
                if r.flags & LIVE != 0 && c.row(r) {
                    f(i as u32, r);
                }
            }
            return;
        };
        let mut pos = 0;
        while let Some(i) = self.names.get(pos..).and_then(|h| finder.find(h)) {
            let hit = pos + i;
            let start = self
                .names
                .get(..hit)
                .and_then(|h| memchr::memrchr(END, h))
                .map_or(0, |e| e + 1);
            let at = start + HEADER;
            if hit < at {
                // in a header: the name may still hold it further on
                pos = hit + 1;
                continue;
            }
            pos = self.name_end(hit) + 1;
            let slot = slot_of(self.names.get(start..at).unwrap_or_default());
            if let Some(r) = self.rows.get(slot) {
                if r.flags & LIVE != 0 && r.name_at as usize == at && c.row(r) {
                    f(slot as u32, r);
                }
            }
        }
    }

    fn addr(&self, slot: u32, r: &Row) -> SocketAddr {
        if r.key & V6 == 0 {
            SocketAddr::V4(v4_of(r.key))
        } else {
            self.v6.get(&slot).copied().map_or(
                SocketAddr::V4(SocketAddrV4::new(Ipv4Addr::UNSPECIFIED, 0)),
                SocketAddr::V6,
            )
        }
    }

    /// Servers matching `q`.
    pub(super) fn count(&self, q: &Query) -> usize {
        let Some(c) = self.compile(q) else {
            return 0;
        };
        let mut n = 0;
        self.each(&c, |_, _| n += 1);
        n
    }

    /// The addresses of the first `limit + 1` servers matching `q` after `after`, in the
    /// order of [`Key`] (`by_players`: players first), and how many match in all.
    pub(super) fn first(
        &self,
        q: &Query,
        by_players: bool,
        after: Option<Key>,
        limit: usize,
    ) -> (Vec<SocketAddr>, usize) {
        let Some(c) = self.compile(q) else {
            return (Vec::new(), 0);
        };
        // the first page by players without filters: only the rows with as many players
        // as the `limit + 1`-th most (by the counts kept) can be on it
        let least = (by_players && after.is_none() && *q == Query::default())
            .then(|| self.least_players(limit + 1));
        let mut heap: BinaryHeap<Key> = BinaryHeap::with_capacity(limit + 2);
        let mut matched = 0usize;
        // the heap's last when it is full, its address as a key (any IPv4 one is before
        // an IPv6 one: `u64::MAX`)
        let mut last: Option<(Reverse<u32>, u64)> = None;
        let visit = |slot: u32, r: &Row| {
            matched += 1;
            let p = Reverse(if by_players { r.players } else { 0 });
            // later than the whole page by its row alone, or not after the cursor
            if let Some((lp, lk)) = last {
                if p > lp || (p == lp && r.key & V6 == 0 && r.key >= lk) {
                    return;
                }
            }
            if after.is_some_and(|a| p < a.0) {
                return;
            }
            let k = (p, self.addr(slot, r));
            if after.is_some_and(|a| k <= a) {
                return;
            }
            if heap.len() <= limit || heap.peek().is_some_and(|top| k < *top) {
                heap.push(k);
                if heap.len() > limit + 1 {
                    heap.pop();
                }
                if heap.len() > limit {
                    last = heap.peek().map(|(p, a)| {
                        let key = match a {
                            SocketAddr::V4(a) => v4_key(a),
                            SocketAddr::V6(_) => u64::MAX,
                        };
                        (*p, key)
                    });
                }
            }
        };
        match least {
            Some(least) => {
                let mut visit = visit;
                for (i, r) in self.rows.iter().enumerate() {
                    if r.players >= least && r.flags & LIVE != 0 {
                        visit(i as u32, r);
                    }
                }
                // every row in use matches
                matched = self.rows.len() - self.free.len();
            }
            None => self.each(&c, visit),
        }
        let addrs = heap.into_sorted_vec().into_iter().map(|(_, a)| a).collect();
        (addrs, matched)
    }

    /// The least player count that `n` rows in use reach: the `n` rows with the most
    /// players have at least that many (0 when fewer rows are in use).
    fn least_players(&self, n: usize) -> u32 {
        let mut seen = 0usize;
        for (place, count) in self.by_players.iter().enumerate().rev() {
            seen += *count as usize;
            if seen >= n {
                return place as u32;
            }
        }
        0
    }

    /// Bytes held (capacities, hash tables estimated), and rows in use: what the copy
    /// costs (tests).
    #[cfg(test)]
    pub(super) fn bytes(&self) -> (usize, usize) {
        let rows = self.rows.capacity() * std::mem::size_of::<Row>();
        let strings = |i: &Interner<Box<str>>| {
            i.keys
                .iter()
                .flatten()
                .map(|k| 2 * (k.len() + 40))
                .sum::<usize>()
        };
        (
            rows + self.names.capacity()
                + self.free.capacity() * 4
                + self.by_players.capacity() * 4
                + self.v6.capacity() * 40
                + strings(&self.games)
                + strings(&self.maps)
                + self.protocols.keys.capacity() * 40,
            self.rows.len() - self.free.len(),
        )
    }

    /// Distinct games, maps and protocol sets held, the arena's bytes, and the rows
    /// counted by players (tests: all freed when the list is empty).
    #[cfg(test)]
    pub(super) fn held(&self) -> (usize, usize, usize, usize, usize) {
        (
            self.games.live(),
            self.maps.live(),
            self.protocols.live(),
            self.names.len() - self.dead,
            self.by_players.iter().map(|n| *n as usize).sum(),
        )
    }
}
