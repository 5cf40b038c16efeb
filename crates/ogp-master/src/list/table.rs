//! The entries of the list by address (issue 41: what a million of them cost): two
//! ordered trees from the address to the entry's slot, one for IPv4 (its address and
//! port as one `u64`: 12 bytes a place, where a `SocketAddr` key and a box were 40) and
//! one for IPv6 (few servers), and the entries themselves by slot in chunks of
//! [`CHUNK`], one allocation each, never moved as the list grows (no box and no
//! allocator's header per entry, no copy of the whole list when it grows). A slot is
//! the entry's row in the compact copy ([`super::scan`]), which hands slots out.

use std::collections::BTreeMap;
use std::net::{IpAddr, Ipv4Addr, SocketAddr, SocketAddrV4, SocketAddrV6};
use std::ops::Bound;

use super::Entry;

/// Entries per chunk (a chunk is about 850 KB).
const CHUNK: usize = 4096;

/// The key of an IPv4 address: in the order of the addresses.
pub(super) fn v4_key(a: &SocketAddrV4) -> u64 {
    (u64::from(u32::from(*a.ip())) << 16) | u64::from(a.port())
}

/// The address of a [`v4_key`].
pub(super) fn v4_of(key: u64) -> SocketAddrV4 {
    SocketAddrV4::new(Ipv4Addr::from((key >> 16) as u32), key as u16)
}

/// The entries by address and by slot (see the module's documentation).
#[derive(Debug, Default)]
pub(super) struct Table {
    v4: BTreeMap<u64, u32>,
    v6: BTreeMap<SocketAddrV6, u32>,
    chunks: Vec<Box<[Option<Entry>]>>,
}

/// A bound on the IPv6 tree for a bound on addresses (every IPv4 address is before
/// every IPv6 one, as in [`SocketAddr`]'s order).
fn v6_bound(b: Bound<SocketAddr>) -> Bound<SocketAddrV6> {
    match b {
        Bound::Included(SocketAddr::V6(a)) => Bound::Included(a),
        Bound::Excluded(SocketAddr::V6(a)) => Bound::Excluded(a),
        _ => Bound::Unbounded,
    }
}

impl Table {
    /// Entries.
    pub(super) fn len(&self) -> usize {
        self.v4.len() + self.v6.len()
    }

    /// The slot of `a`.
    pub(super) fn slot(&self, a: SocketAddr) -> Option<u32> {
        match a {
            SocketAddr::V4(a) => self.v4.get(&v4_key(&a)).copied(),
            SocketAddr::V6(a) => self.v6.get(&a).copied(),
        }
    }

    /// The entry in `slot`.
    pub(super) fn at(&self, slot: u32) -> Option<&Entry> {
        let s = slot as usize;
        self.chunks.get(s / CHUNK)?.get(s % CHUNK)?.as_ref()
    }

    fn cell(&mut self, slot: u32) -> Option<&mut Option<Entry>> {
        let s = slot as usize;
        while self.chunks.len() <= s / CHUNK {
            self.chunks
                .push(std::iter::repeat_with(|| None).take(CHUNK).collect());
        }
        self.chunks.get_mut(s / CHUNK)?.get_mut(s % CHUNK)
    }

    /// The slot and entry of `a`.
    pub(super) fn get(&self, a: SocketAddr) -> Option<(u32, &Entry)> {
        let slot = self.slot(a)?;
        Some((slot, self.at(slot)?))
    }

    /// Lists `e` at `a` in `slot` (or replaces the entry of `a`, in its slot).
    pub(super) fn put(&mut self, a: SocketAddr, slot: u32, e: Entry) {
        match a {
            SocketAddr::V4(a) => self.v4.insert(v4_key(&a), slot),
            SocketAddr::V6(a) => self.v6.insert(a, slot),
        };
        if let Some(c) = self.cell(slot) {
            *c = Some(e);
        }
    }

    /// Takes `a` off; returns its slot and entry.
    pub(super) fn remove(&mut self, a: SocketAddr) -> Option<(u32, Entry)> {
        let slot = match a {
            SocketAddr::V4(a) => self.v4.remove(&v4_key(&a)),
            SocketAddr::V6(a) => self.v6.remove(&a),
        }?;
        Some((slot, self.cell(slot)?.take()?))
    }

    /// The entries from `lower` on, in address order, with their addresses and slots.
    pub(super) fn from(
        &self,
        lower: Bound<SocketAddr>,
    ) -> impl Iterator<Item = (SocketAddr, u32, &Entry)> {
        let v4 = match lower {
            Bound::Included(SocketAddr::V4(a)) => Bound::Included(v4_key(&a)),
            Bound::Excluded(SocketAddr::V4(a)) => Bound::Excluded(v4_key(&a)),
            Bound::Unbounded => Bound::Unbounded,
            // past every IPv4 address
            Bound::Included(SocketAddr::V6(_)) | Bound::Excluded(SocketAddr::V6(_)) => {
                Bound::Excluded(u64::MAX)
            }
        };
        let v4 = self
            .v4
            .range((v4, Bound::Unbounded))
            .map(|(k, s)| (SocketAddr::V4(v4_of(*k)), *s));
        let v6 = self
            .v6
            .range((v6_bound(lower), Bound::Unbounded))
            .map(|(a, s)| (SocketAddr::V6(*a), *s));
        v4.chain(v6).filter_map(|(a, s)| Some((a, s, self.at(s)?)))
    }

    /// Every entry, in address order (tests).
    #[cfg(test)]
    pub(super) fn iter(&self) -> impl Iterator<Item = (SocketAddr, u32, &Entry)> {
        self.from(Bound::Unbounded)
    }

    /// The IPv4 entries after `lower`, in address order.
    pub(super) fn v4_from(
        &self,
        lower: Bound<SocketAddrV4>,
    ) -> impl Iterator<Item = (SocketAddrV4, u32, &Entry)> {
        let lower = match lower {
            Bound::Included(a) => Bound::Included(v4_key(&a)),
            Bound::Excluded(a) => Bound::Excluded(v4_key(&a)),
            Bound::Unbounded => Bound::Unbounded,
        };
        self.v4
            .range((lower, Bound::Unbounded))
            .filter_map(|(k, s)| Some((v4_of(*k), *s, self.at(*s)?)))
    }

    /// Entries on `ip` (one range of a tree), counted up to `at_most`.
    pub(super) fn on_ip(&self, ip: IpAddr, at_most: usize) -> usize {
        match ip {
            IpAddr::V4(ip) => self
                .v4
                .range(v4_key(&SocketAddrV4::new(ip, 0))..=v4_key(&SocketAddrV4::new(ip, u16::MAX)))
                .take(at_most)
                .count(),
            IpAddr::V6(ip) => self
                .v6
                .range(SocketAddrV6::new(ip, 0, 0, 0)..=SocketAddrV6::new(ip, u16::MAX, 0, 0))
                .take(at_most)
                .count(),
        }
    }

    /// Bytes held by the chunks and the trees' nodes (their places, at the fill a
    /// sequential insert leaves: 6 of 11), and entries (tests).
    #[cfg(test)]
    pub(super) fn bytes(&self) -> (usize, usize) {
        let chunks = self.chunks.len() * CHUNK * std::mem::size_of::<Option<Entry>>();
        (
            chunks + self.v4.len() * 160 / 6 + self.v6.len() * 456 / 6,
            self.len(),
        )
    }
}
