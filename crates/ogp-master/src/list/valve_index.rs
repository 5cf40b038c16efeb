//! Valve list pages (issue 41): the pass that makes a page, counted and bounded, and an
//! index of the servers on Valve's list by game, so that a page whose filter names a
//! game (`\appid\`, `\gamedir\`, as real clients' filters always do) walks that game's
//! servers from the seed, not every server of the list.
//!
//! The index is one ordered set of 64-bit keys, one per server on Valve's list (up,
//! IPv4, speaking A2S): the server's game, `(app id, game directory in ASCII lower
//! case)` interned as a 16-bit id, above its 48-bit address and port. A game's servers
//! are then one range of the set, in address order, and a page filtered by game walks
//! the ranges of the games that can match (usually one), merged, from the seed; the
//! rest of the filter is checked on each server as before. About 16 bytes a server
//! (`list::tests::bytes_per_entry`, docs/master.md).
//!
//! At most 65,535 games get an id of their own; past that (servers registered with
//! that many different games), the servers of games without an id share one overflow
//! id, walked by every page filtered by game. The walk checks the whole filter on each
//! server, so the index only has to hold every server of the games that can match, in
//! order: the overflow keeps pages right, only slower, and it is no way around the
//! bound on a pass's work (every entry a pass looks at is counted and paid for,
//! [`ValvePage::looked`]). Kept up to date by [`List::merge`] ([`ValveIndex::add`],
//! [`ValveIndex::remove`]).

use std::cmp::Reverse;
use std::collections::{BTreeSet, BinaryHeap, HashMap};
use std::net::{Ipv4Addr, SocketAddr, SocketAddrV4};
use std::ops::Bound;

use ogp_proto::master::valve::{Filter, END, MAX_ENTRIES_PER_PAGE};
use ogp_proto::Protocol;

use super::{Entry, List};

type Small = compact_str::CompactString;

/// Bits of a key that hold the address and port.
const ADDR_BITS: u32 = 48;
const ADDR_MASK: u64 = (1 << ADDR_BITS) - 1;
/// The id the games without one of their own share.
const OVERFLOW: u16 = u16::MAX;
/// Games with an id of their own, at most (a few in tests, to see the overflow used).
#[cfg(not(test))]
const MAX_GAMES: usize = OVERFLOW as usize;
#[cfg(test)]
const MAX_GAMES: usize = 6;

/// A Valve list page ([`List::valve_page`]).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ValvePage {
    /// The servers, in address order: at most [`MAX_ENTRIES_PER_PAGE`].
    pub servers: Vec<SocketAddrV4>,
    /// Whether the list ends with them.
    pub end: bool,
    /// Entries the pass looked at (and seeks into the index past the first): what the
    /// page cost, to be paid for (`ListBudget::pay_looks`).
    pub looked: usize,
    /// Whether the pass stopped at its allowance of looks before the page was whole:
    /// the servers found so far are the page (none: nothing to send).
    pub cut: bool,
}

/// The key of an IPv4 address and port, in their order.
fn addr_key(a: SocketAddrV4) -> u64 {
    (u64::from(u32::from(*a.ip())) << 16) | u64::from(a.port())
}

fn key_addr(k: u64) -> SocketAddrV4 {
    SocketAddrV4::new(Ipv4Addr::from((k >> 16) as u32), k as u16)
}

/// An entry's address and game, when it is on Valve's list.
fn on_valve_list(addr: SocketAddr, e: &Entry) -> Option<(SocketAddrV4, u16, Small)> {
    let SocketAddr::V4(a) = addr else {
        return None;
    };
    (e.up && e.protocols.contains(Protocol::A2s)).then(|| {
        (
            a,
            e.view.app_id(),
            e.view.folder().to_ascii_lowercase().into(),
        )
    })
}

/// The games of the index, each with its id and the servers holding it.
#[derive(Debug, Default)]
struct Games {
    ids: HashMap<(u16, Small), u16>,
    /// By id: the game and how many servers hold it (0: the id is free).
    games: Vec<(u16, Small, u32)>,
    free: Vec<u16>,
    by_app: BTreeSet<(u16, u16)>,
    by_dir: BTreeSet<(Small, u16)>,
}

impl Games {
    /// The id of `game` held once more, or `None` when it has none and none is free.
    fn add(&mut self, game: &(u16, Small)) -> Option<u16> {
        if let Some(&id) = self.ids.get(game) {
            if let Some(g) = self.games.get_mut(usize::from(id)) {
                g.2 += 1;
            }
            return Some(id);
        }
        let id = match self.free.pop() {
            Some(id) => id,
            None if self.games.len() < MAX_GAMES => {
                self.games.push((0, Small::default(), 0));
                (self.games.len() - 1) as u16
            }
            None => return None,
        };
        if let Some(g) = self.games.get_mut(usize::from(id)) {
            *g = (game.0, game.1.clone(), 1);
        }
        self.ids.insert(game.clone(), id);
        self.by_app.insert((game.0, id));
        self.by_dir.insert((game.1.clone(), id));
        Some(id)
    }

    /// Holds `id` once less.
    fn release(&mut self, id: u16) {
        let Some(g) = self.games.get_mut(usize::from(id)) else {
            return;
        };
        g.2 = g.2.saturating_sub(1);
        if g.2 == 0 {
            let (app, dir) = (g.0, std::mem::take(&mut g.1));
            self.by_app.remove(&(app, id));
            self.by_dir.remove(&(dir.clone(), id));
            self.ids.remove(&(app, dir));
            self.free.push(id);
        }
    }
}

/// The index (see the module's documentation).
#[derive(Debug, Default)]
pub(super) struct ValveIndex {
    /// `game id << 48 | address key` of every server on Valve's list.
    set: BTreeSet<u64>,
    games: Games,
    /// Servers under [`OVERFLOW`]. While there are any, no game gets a new id, so that
    /// a game has an id exactly when its servers are under it.
    overflowed: usize,
}

impl ValveIndex {
    /// Indexes `e` (call it once an entry is listed, with what it is listed as).
    pub(super) fn add(&mut self, at: SocketAddr, e: &Entry) {
        let Some((addr, app, dir)) = on_valve_list(at, e) else {
            return;
        };
        let game = (app, dir);
        let known = self.games.ids.contains_key(&game);
        let id = if known || self.overflowed == 0 {
            self.games.add(&game)
        } else {
            None
        };
        let id = id.unwrap_or(OVERFLOW);
        if self.set.insert(u64::from(id) << ADDR_BITS | addr_key(addr)) {
            if id == OVERFLOW {
                self.overflowed += 1;
            }
        } else if id != OVERFLOW {
            // indexed already (not removed first): hold the game once only
            self.games.release(id);
        }
    }

    /// Takes `e` out (call it before the entry changes or goes).
    pub(super) fn remove(&mut self, at: SocketAddr, e: &Entry) {
        let Some((addr, app, dir)) = on_valve_list(at, e) else {
            return;
        };
        let id = self.games.ids.get(&(app, dir)).copied().unwrap_or(OVERFLOW);
        if self
            .set
            .remove(&(u64::from(id) << ADDR_BITS | addr_key(addr)))
        {
            if id == OVERFLOW {
                self.overflowed = self.overflowed.saturating_sub(1);
            } else {
                self.games.release(id);
            }
        }
    }

    /// The ids of the games whose servers can match `filter`, in no order; `None` when
    /// the filter names no game (every server can match).
    fn games_for(&self, filter: &Filter) -> Option<Vec<u16>> {
        let (apps, dirs) = filter.required_games();
        let fits =
            |app: u16, dir: &str| apps.iter().all(|a| *a == app) && dirs.iter().all(|d| *d == dir);
        let mut ids: Vec<u16> = if let Some(app) = apps.first() {
            self.games
                .by_app
                .range((*app, 0)..=(*app, u16::MAX))
                .map(|(_, id)| *id)
                .collect()
        } else {
            let dir = Small::from(*dirs.first()?);
            self.games
                .by_dir
                .range((dir.clone(), 0)..=(dir, u16::MAX))
                .map(|(_, id)| *id)
                .collect()
        };
        ids.retain(|id| {
            self.games
                .games
                .get(usize::from(*id))
                .is_some_and(|g| fits(g.0, &g.1))
        });
        if self.overflowed > 0 {
            ids.push(OVERFLOW);
        }
        Some(ids)
    }

    /// Keys in the index, games with an id.
    #[cfg(test)]
    pub(super) fn held(&self) -> (usize, usize) {
        (self.set.len(), self.games.ids.len())
    }
}

/// A page being made: what it has found and looked at.
struct Walk<'a> {
    list: &'a List,
    filter: &'a Filter,
    max_looks: usize,
    page: ValvePage,
}

impl Walk<'_> {
    /// Counts `n` looks; false (the page cut) when they are past the allowance.
    fn look(&mut self, n: usize) -> bool {
        if self.page.looked.saturating_add(n) > self.max_looks {
            self.page.cut = true;
            return false;
        }
        self.page.looked += n;
        true
    }

    /// Looks at `e`; false: the page is done (whole, or cut).
    fn see(&mut self, a: SocketAddrV4, slot: u32, e: &Entry) -> bool {
        if !self.look(1) {
            return false;
        }
        let list = self.list;
        if !e.up
            || !e.protocols.contains(Protocol::A2s)
            || !self.filter.matches_view(SocketAddr::V4(a), &e.view, &|| {
                list.scan.lowercase_name(slot)
            })
        {
            return true;
        }
        if self.page.servers.len() == MAX_ENTRIES_PER_PAGE {
            return false;
        }
        self.page.servers.push(a);
        true
    }

    /// The page, once the walk has stopped (`whole`: it went to the end of the list).
    fn done(mut self, whole: bool) -> ValvePage {
        self.page.end = whole;
        self.page
    }
}

/// A Valve list page of `list` (see [`List::valve_page`]); `indexed`: through the index
/// when the filter names a game.
pub(super) fn page(
    list: &List,
    filter: &Filter,
    seed: SocketAddrV4,
    max_looks: usize,
    indexed: bool,
) -> ValvePage {
    let mut walk = Walk {
        list,
        filter,
        max_looks,
        page: ValvePage::default(),
    };
    let games = if indexed {
        list.valve.games_for(filter)
    } else {
        None
    };
    let Some(games) = games else {
        let start = if seed == END {
            Bound::Unbounded
        } else {
            Bound::Excluded(seed)
        };
        for (a, slot, e) in list.entries.v4_from(start) {
            if !walk.see(a, slot, e) {
                return walk.done(false);
            }
        }
        return walk.done(true);
    };
    let from = if seed == END {
        0
    } else {
        match addr_key(seed).checked_add(1) {
            Some(k) if k <= ADDR_MASK => k,
            _ => return walk.done(true),
        }
    };
    // one seek a game, the first paid with the page
    if !walk.look(games.len().saturating_sub(1)) {
        return walk.done(false);
    }
    let mut ranges: Vec<_> = games
        .iter()
        .map(|id| {
            let base = u64::from(*id) << ADDR_BITS;
            list.valve.set.range(base | from..=base | ADDR_MASK)
        })
        .collect();
    let mut next: BinaryHeap<Reverse<(u64, usize)>> = ranges
        .iter_mut()
        .enumerate()
        .filter_map(|(i, r)| Some(Reverse((r.next()? & ADDR_MASK, i))))
        .collect();
    while let Some(Reverse((k, i))) = next.pop() {
        if let Some(n) = ranges.get_mut(i).and_then(Iterator::next) {
            next.push(Reverse((n & ADDR_MASK, i)));
        }
        let a = key_addr(k);
        let Some((slot, e)) = list.entries.get(SocketAddr::V4(a)) else {
            continue;
        };
        if !walk.see(a, slot, e) {
            return walk.done(false);
        }
    }
    walk.done(true)
}

#[cfg(test)]
mod tests {
    use std::net::IpAddr;
    use std::time::{Duration, Instant};

    use ogp_proto::master::valve::{ListAdmission, ListBudget, ListBudgetConfig, MAX_PAGE_BYTES};
    use ogp_proto::{A2sInfo, Status};

    use super::super::tests::{remove_everyone, row, Rng};
    use super::*;
    use crate::store::ListRow;

    /// A2S fields naming a game.
    pub(in crate::list) fn game(app_id: Option<u32>, folder: Option<&str>) -> Option<A2sInfo> {
        let mut a = A2sInfo::default();
        a.app_id = app_id;
        a.folder = folder.map(Into::into);
        Some(a)
    }

    /// A server of some game, changing at random, at one of a few addresses (the
    /// lowest and highest IPv4 addresses among them, and IPv6 ones).
    fn valve_row(r: &mut Rng, updated: i64) -> ListRow {
        let addr = match r.below(10) {
            0 => format!("[2001:db8::{}]:27015", r.below(3)),
            1 => r
                .pick(&["0.0.0.0:0", "0.0.0.0:1", "255.255.255.255:65535"])
                .to_owned(),
            _ => format!(
                "10.0.{}.{}:{}",
                r.below(3),
                r.below(10),
                r.pick(&[1, 27015])
            ),
        };
        let mut s = Status::default();
        s.host_name = Some(r.pick(&["Alpha", "beta zzz", "", "Gamma"]).into());
        s.player_count = Some(r.below(3) as u32);
        s.slot_max = Some(2);
        s.a2s = game(
            r.pick(&[None, Some(440), Some(440 + (1 << 16)), Some(730), Some(255)]),
            r.pick(&[
                None,
                Some("tf"),
                Some("TF"),
                Some("csgo"),
                Some(""),
                Some("tf2"),
            ]),
        );
        let mut row = row(
            &addr,
            "",
            0,
            r.pick(&["a2s", "a2s", "a2s,ogp", "ogp", "quake3"]),
        );
        row.summary = Some(serde_json::to_string(&s).unwrap());
        row.up = r.below(5) != 0;
        row.removed = r.below(8) == 0;
        row.updated = updated;
        row
    }

    fn random_filter(r: &mut Rng) -> String {
        let parts = [
            "\\appid\\440",
            "\\appid\\65976",
            "\\appid\\730",
            "\\appid\\255",
            "\\appid\\1",
            "\\gamedir\\tf",
            "\\gamedir\\TF2",
            "\\gamedir\\csgo",
            "\\gamedir\\",
            "\\gamedir\\nothing",
            "\\napp\\440",
            "\\name_match\\*zzz*",
            "\\empty\\1",
            "\\nor\\1\\appid\\440",
            "\\nand\\2\\gamedir\\tf\\empty\\1",
        ];
        (0..r.below(4)).map(|_| r.pick(&parts)).collect()
    }

    /// What the index must hold: every server on Valve's list, once.
    fn check_held(l: &List) {
        let on: Vec<(SocketAddr, &Entry)> = l
            .entries
            .iter()
            .map(|(a, _, e)| (a, e))
            .filter(|(a, e)| on_valve_list(*a, e).is_some())
            .collect();
        assert_eq!(l.valve.set.len(), on.len());
        // each game with an id is held by its servers, each once
        let mut held: HashMap<(u16, Small), u32> = HashMap::new();
        for (a, e) in &on {
            let (_, app, dir) = on_valve_list(*a, e).unwrap();
            if l.valve.games.ids.contains_key(&(app, dir.clone())) {
                *held.entry((app, dir)).or_default() += 1;
            }
        }
        assert_eq!(held.len(), l.valve.games.ids.len());
        for (game, n) in held {
            let id = l.valve.games.ids[&game];
            assert_eq!(l.valve.games.games[usize::from(id)], (game.0, game.1, n));
        }
        assert_eq!(l.valve.games.by_app.len(), l.valve.games.ids.len());
        assert_eq!(l.valve.games.by_dir.len(), l.valve.games.ids.len());
        assert_eq!(
            l.valve.overflowed,
            l.valve
                .set
                .iter()
                .filter(|k| *k >> ADDR_BITS == u64::from(OVERFLOW))
                .count()
        );
        for (at, e) in on {
            let (a, app, dir) = on_valve_list(at, e).unwrap();
            let id = l
                .valve
                .games
                .ids
                .get(&(app, dir))
                .copied()
                .unwrap_or(OVERFLOW);
            assert!(l
                .valve
                .set
                .contains(&(u64::from(id) << ADDR_BITS | addr_key(a))));
        }
    }

    /// Issue 41: pages made through the index equal the plain pass's, page after page
    /// and from seeds that are no page's, as random batches add, change and remove
    /// servers of a few games (more than get ids here: the overflow is used, and
    /// emptied); and they look at no more entries. Emptied, the index holds nothing.
    #[test]
    fn indexed_valve_pages_equal_the_plain_pass_through_random_changes() {
        let (mut checked, mut overflowing) = (0, 0);
        for seed in 1..=3u64 {
            let mut r = Rng(seed.wrapping_mul(0x9e37_79b9_7f4a_7c15));
            let mut l = List::default();
            let mut updated = 10;
            for _ in 0..40 {
                updated += 1;
                let n = r.below(40);
                l.apply((0..n).map(|_| valve_row(&mut r, updated)).collect());
                check_held(&l);
                for _ in 0..10 {
                    let text = random_filter(&mut r);
                    let f = Filter::parse(&text).unwrap();
                    let mut seeds = vec![
                        END,
                        SocketAddrV4::new(Ipv4Addr::new(10, 0, r.below(3) as u8, 5), 2),
                        "255.255.255.255:65535".parse().unwrap(),
                    ];
                    let mut pages = 0;
                    while let Some(seed) = seeds.pop() {
                        let a = page(&l, &f, seed, usize::MAX, true);
                        let b = page(&l, &f, seed, usize::MAX, false);
                        let what = format!("{text:?} after {seed}");
                        assert_eq!((&a.servers, a.end), (&b.servers, b.end), "{what}");
                        assert!(!a.cut && !b.cut);
                        assert!(a.looked <= b.looked, "{what}: {} > {}", a.looked, b.looked);
                        checked += 1;
                        overflowing += usize::from(l.valve.overflowed > 0);
                        pages += 1;
                        // small pages: take the page's third server as the next seed
                        if let (false, Some(s)) = (a.end, a.servers.get(2)) {
                            if pages < 20 {
                                seeds.push(*s);
                            }
                        }
                    }
                }
            }
            remove_everyone(&mut l, updated + 1);
            assert_eq!(l.valve.held(), (0, 0));
            assert_eq!(l.valve.overflowed, 0);
        }
        assert!(
            overflowing > 0 && overflowing < checked,
            "{overflowing} of {checked}"
        );
    }

    /// A page filtered by game looks at that game's servers only: 232 of them for a
    /// whole page, whatever else the list holds; a filter for a game nobody has looks
    /// at nothing.
    #[test]
    fn a_page_filtered_by_game_looks_at_that_games_servers() {
        let mut l = List::default();
        let rows = (0..2_400u32)
            .map(|i| {
                let mut s = Status::default();
                let (app, dir) = if i % 10 == 0 {
                    (440, "tf")
                } else {
                    (730, "csgo")
                };
                s.a2s = game(Some(app), Some(dir));
                let mut row = row(&format!("10.1.{}.{}:27015", i >> 8, i & 0xff), "", 0, "a2s");
                row.summary = Some(serde_json::to_string(&s).unwrap());
                row
            })
            .collect();
        l.apply(rows);
        let look = |f: &str, seed| {
            let p = l.valve_page(&Filter::parse(f).unwrap(), seed, usize::MAX);
            (p.servers.len(), p.end, p.looked)
        };
        assert_eq!(look("\\appid\\440", END), (231, false, 232));
        assert_eq!(look("\\gamedir\\TF", END), (231, false, 232));
        assert_eq!(look("\\appid\\440\\gamedir\\tf", END), (231, false, 232));
        let last = l.valve_page(&Filter::parse("\\appid\\440").unwrap(), END, 232);
        let seed = *last.servers.last().unwrap();
        assert_eq!(look("\\appid\\440", seed), (9, true, 9));
        assert_eq!(look("\\appid\\7", END), (0, true, 0));
        assert_eq!(look("\\appid\\440\\gamedir\\csgo", END), (0, true, 0));
        assert_eq!(look("\\gamedir\\nothing", END), (0, true, 0));
        // without the index: every server, 2,400 looks for nothing
        assert_eq!(look("\\map\\nothing", END), (0, true, 2_400));
        assert_eq!(look("", END), (231, false, 232));
    }

    /// Issue 41's attack: requests whose filter matches nothing, so that each would
    /// walk the whole list (5,000 servers here), from one source and from 500, for 10
    /// simulated seconds, each request's pass bounded and paid as the master does
    /// (`udp::answer_list`): the entries looked at stay within what the budgets pay
    /// for, where the unbounded passes would have looked at hundreds of times more.
    #[test]
    fn passes_for_nothing_look_at_no_more_than_the_budgets_pay_for() {
        let mut l = List::default();
        let rows = (0..5_000u32)
            .map(|i| {
                let mut s = Status::default();
                s.host_name = Some(format!("Server {i}").into());
                s.a2s = game(Some(440), Some("tf"));
                let mut row = row(&format!("10.2.{}.{}:27015", i >> 8, i & 0xff), "", 0, "a2s");
                row.summary = Some(serde_json::to_string(&s).unwrap());
                row
            })
            .collect();
        l.apply(rows);
        let t0 = Instant::now();
        let (per_source, total) = (4_096u32, 40_960u32);
        let bpl = ogp_proto::master::valve::BYTES_PER_LOOK as f64;
        for (sources, filter) in [
            (1u32, "\\name_match\\*zzz*"),
            (1, "\\appid\\440\\map\\nothing"),
            (500, "\\name_match\\*zzz*"),
        ] {
            let f = Filter::parse(filter).unwrap();
            let budget = ListBudget::new(ListBudgetConfig::new(per_source, total), [1; 16], t0);
            let (mut looked, mut admitted, mut cut, mut requests) = (0usize, 0usize, 0, 0);
            for tick in 0..100u32 {
                let now = t0 + Duration::from_millis(u64::from(tick) * 100);
                // 100 requests a second from one source, 10 a second from each of 500
                for i in 0..sources.max(10) {
                    let from = IpAddr::V4(Ipv4Addr::from(0xc633_6400 + i % sources));
                    requests += 1;
                    if budget.admit(now, from) != ListAdmission::Answer {
                        continue;
                    }
                    admitted += 1;
                    let p = l.valve_page(&f, END, budget.looks_allowed(now, from));
                    budget.pay_looks(now, from, p.looked);
                    assert!(p.servers.is_empty());
                    cut += usize::from(p.cut);
                    looked += p.looked;
                }
            }
            let seconds = 10.0;
            let bytes = if sources == 1 {
                (8.0 + seconds) * f64::from(per_source)
            } else {
                (4.0 + seconds) * f64::from(total)
            };
            let bound = bytes / bpl;
            // paying for pages only, as before, as many requests would each have walked
            // the whole list
            let unpaid = (bytes / MAX_PAGE_BYTES as f64).floor() * 5_000.0;
            eprintln!(
                "{sources} source(s), {filter:?}: {requests} requests, {admitted} admitted \
                 ({cut} cut), {looked} entries looked at (bound {bound:.0}; paying for \
                 pages only: {unpaid:.0})"
            );
            assert!(looked as f64 <= bound * 1.001, "{looked} > {bound}");
            assert!(
                looked as f64 >= bound * 0.8,
                "the budget was used: {looked}"
            );
            assert!(looked as f64 * 10.0 < unpaid);
        }
    }
}
