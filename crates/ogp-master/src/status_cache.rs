//! The statuses that full-view pages splice in, kept in memory by address with the
//! change time of the row each was read from (issue 41): a page made again after the
//! list changed reads from the database only the servers whose rows changed since
//! (the top servers of a page change rarely), instead of a hundred statuses each time.
//!
//! A status is served only when its row is at least as new as the list's entry of the
//! server (`updated`): once the list says a server changed, its status is read again.
//! The cache holds at most [`MAX_BYTES`] of status text (with [`ENTRY_OVERHEAD`] counted
//! for each entry); when full, the statuses kept longest go first.

use std::collections::{HashMap, VecDeque};
use std::net::SocketAddr;
use std::sync::{Arc, Mutex};

/// Most bytes kept: status text plus [`ENTRY_OVERHEAD`] an entry.
pub(crate) const MAX_BYTES: usize = 4 << 20;
/// What an entry costs beside its text (its address, time, stamp, places in the map and
/// the queue).
pub(crate) const ENTRY_OVERHEAD: usize = 96;

/// A status as the database holds it (JSON written by us).
pub(crate) type Text = Arc<str>;

#[derive(Debug)]
struct Kept {
    updated: i64,
    text: Text,
    /// When it was put in (the queue's order).
    stamp: u64,
}

#[derive(Debug, Default)]
struct Inner {
    kept: HashMap<SocketAddr, Kept>,
    /// Addresses in the order they were put in, with their stamp then (an address put in
    /// again leaves its older place behind, skipped when reached).
    order: VecDeque<(SocketAddr, u64)>,
    bytes: usize,
    next_stamp: u64,
}

/// Statuses by address, bounded by bytes ([`MAX_BYTES`]).
#[derive(Debug)]
pub(crate) struct StatusCache {
    inner: Mutex<Inner>,
    max_bytes: usize,
}

impl Default for StatusCache {
    fn default() -> Self {
        Self::with_max_bytes(MAX_BYTES)
    }
}

fn cost(text: &str) -> usize {
    text.len() + ENTRY_OVERHEAD
}

impl StatusCache {
    /// A cache of at most `max_bytes`.
    pub(crate) fn with_max_bytes(max_bytes: usize) -> Self {
        Self {
            inner: Mutex::default(),
            max_bytes,
        }
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Inner> {
        self.inner
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    /// `addr`'s status, if one is kept from a row at least as new as `updated` (the
    /// list entry's change time).
    pub(crate) fn get(&self, addr: SocketAddr, updated: i64) -> Option<Text> {
        self.lock()
            .kept
            .get(&addr)
            .filter(|k| k.updated >= updated)
            .map(|k| k.text.clone())
    }

    /// Keeps `addr`'s status read from a row changed at `updated` (unless a newer one is
    /// kept), putting out the oldest kept until the bound holds. A status bigger than
    /// the whole bound is not kept.
    pub(crate) fn put(&self, addr: SocketAddr, updated: i64, text: Text) {
        let add = cost(&text);
        if add > self.max_bytes {
            return;
        }
        let mut g = self.lock();
        let inner = &mut *g;
        if let Some(k) = inner.kept.get(&addr) {
            if k.updated > updated {
                return;
            }
            inner.bytes -= cost(&k.text);
        }
        let stamp = inner.next_stamp;
        inner.next_stamp += 1;
        inner.kept.insert(
            addr,
            Kept {
                updated,
                text,
                stamp,
            },
        );
        inner.order.push_back((addr, stamp));
        inner.bytes += add;
        while inner.bytes > self.max_bytes {
            let Some((a, s)) = inner.order.pop_front() else {
                break;
            };
            if inner.kept.get(&a).is_some_and(|k| k.stamp == s) {
                if let Some(k) = inner.kept.remove(&a) {
                    inner.bytes -= cost(&k.text);
                }
            }
        }
        // the places left behind by addresses put in again: dropped when they are as
        // many as the kept ones, so the queue stays within twice the map
        if inner.order.len() > 2 * inner.kept.len() + 64 {
            let kept = &inner.kept;
            inner
                .order
                .retain(|(a, s)| kept.get(a).is_some_and(|k| k.stamp == *s));
        }
    }

    /// Bytes kept (text and overhead) and entries.
    pub(crate) fn size(&self) -> (usize, usize) {
        let g = self.lock();
        (g.bytes, g.kept.len())
    }

    /// Places in the queue (tests: it stays bounded).
    #[cfg(test)]
    fn queue_len(&self) -> usize {
        self.lock().order.len()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn addr(i: u32) -> SocketAddr {
        SocketAddr::from(([10, (i >> 16) as u8, (i >> 8) as u8, i as u8], 27015))
    }

    /// A status is served for the list entry it was read for and any older one, never
    /// once the list's entry is newer than the row it came from.
    #[test]
    fn a_status_is_not_served_once_the_list_says_it_changed() {
        let c = StatusCache::default();
        c.put(addr(1), 100, "{\"v\":1}".into());
        assert_eq!(c.get(addr(1), 100).as_deref(), Some("{\"v\":1}"));
        assert_eq!(c.get(addr(1), 99).as_deref(), Some("{\"v\":1}"));
        assert_eq!(c.get(addr(1), 101), None);
        assert_eq!(c.get(addr(2), 0), None);
        // read again after the change: served for the new entry
        c.put(addr(1), 101, "{\"v\":2}".into());
        assert_eq!(c.get(addr(1), 101).as_deref(), Some("{\"v\":2}"));
        // a late reader of the older row does not put it back over the newer one
        c.put(addr(1), 100, "{\"v\":1}".into());
        assert_eq!(c.get(addr(1), 101).as_deref(), Some("{\"v\":2}"));
        assert_eq!(c.size().1, 1);
        assert_eq!(c.size().0, "{\"v\":2}".len() + ENTRY_OVERHEAD);
    }

    /// A flood of distinct servers (pages of every filter) keeps the bytes within the
    /// bound, the newest kept and the oldest out; the queue stays bounded when the same
    /// servers are put in again and again.
    #[test]
    fn the_bound_holds_under_a_flood_of_distinct_statuses() {
        let max = 64 << 10;
        let c = StatusCache::with_max_bytes(max);
        let text: Text = "x".repeat(400).into();
        for i in 0..10_000 {
            c.put(addr(i), 1, text.clone());
            assert!(c.size().0 <= max, "{} bytes at {i}", c.size().0);
        }
        let (bytes, n) = c.size();
        assert_eq!(n, max / cost(&text));
        assert_eq!(bytes, n * cost(&text));
        assert!(c.get(addr(9_999), 1).is_some());
        assert!(c.get(addr(0), 1).is_none());
        // one too big for the bound is not kept, and puts nothing out
        c.put(addr(20_000), 1, "y".repeat(max).into());
        assert!(c.get(addr(20_000), 1).is_none());
        assert_eq!(c.size(), (bytes, n));
        // the same few servers changing for ever: the queue does not grow
        for round in 2..2_000 {
            for i in 0..10 {
                c.put(addr(i), round, text.clone());
            }
        }
        assert!(
            c.queue_len() <= 2 * c.size().1 + 64 + 1,
            "{}",
            c.queue_len()
        );
        assert!(c.size().0 <= max);
        assert!(c.get(addr(3), 1_999).is_some());
    }
}
