//! # ogp-net: the networking layer
//!
//! The tokio side of the project. It owns sockets, timers and concurrency, and nothing
//! else: every protocol decision is made by the sans-IO machines of [`ogp_proto`]
//! ([`ogp_proto::responder::Responder`], [`ogp_proto::client::Machine`]).
//!
//! * [`StatusCell`]: the status a game publishes, swapped atomically from any thread.
//! * [`responder`]: a tokio task that answers every protocol on one UDP socket.
//! * [`client`]: `query(addr, protocol, &options)` for any protocol, and its
//!   [`blocking`] wrapper.
//! * [`front`]: `ogp query` and `ogp scan` as functions of plain arguments, for the
//!   language bindings (Python, Node).
//! * [`list`]: server lists from masters and the web (`ogp list`), blocking.
//! * [`scan`]: many servers at once over a few shared sockets, and protocol
//!   auto-detection.
//!
//! Nothing here panics on network input; every loop is bounded by a deadline or by the
//! socket closing.

#![forbid(unsafe_code)]

pub mod batch;
pub mod blocking;
pub mod budget;
pub mod client;
pub mod front;
pub mod list;
pub mod responder;
pub mod scan;
mod steer;
mod tls;

use std::sync::Arc;

pub use arc_swap::Guard;
pub use ogp_proto;
pub use responder::{bind_udp, NetConfig};

use arc_swap::ArcSwap;
use ogp_proto::Status;

/// The status a game publishes. Readers (the responder) take a snapshot without
/// locking; writers replace the whole status atomically, from any thread, cheaply.
#[derive(Debug)]
pub struct StatusCell(ArcSwap<Status>);

impl StatusCell {
    /// A cell holding `status`.
    pub fn new(status: Status) -> Arc<Self> {
        Arc::new(Self(ArcSwap::from_pointee(status)))
    }

    /// Replaces the status.
    pub fn set(&self, status: Status) {
        self.0.store(Arc::new(status));
    }

    /// Changes the status with `f` (copy, change, swap). Concurrent writers do not lose
    /// each other's changes.
    pub fn update(&self, f: impl Fn(&mut Status)) {
        self.0.rcu(|old| {
            let mut s = Status::clone(old);
            f(&mut s);
            s
        });
    }

    /// A snapshot of the current status.
    pub fn load(&self) -> Arc<Status> {
        self.0.load_full()
    }

    /// A cheap temporary snapshot (do not hold it across an `.await`).
    pub fn peek(&self) -> Guard<Arc<Status>> {
        self.0.load()
    }
}

/// 32 random bytes from the operating system, for responder secrets.
pub fn random_secret() -> std::io::Result<[u8; 32]> {
    let mut s = [0u8; 32];
    getrandom::fill(&mut s).map_err(|e| std::io::Error::other(e.to_string()))?;
    Ok(s)
}

/// A random non-zero u32, for RequestIDs.
pub fn random_u32() -> u32 {
    let mut b = [0u8; 4];
    if getrandom::fill(&mut b).is_err() {
        return clock_u32();
    }
    u32::from_le_bytes(b).max(1)
}

/// The clock's nanoseconds: the fallback when the OS has no randomness to give.
/// RequestIDs need only be unlikely to repeat then, not secret.
fn clock_u32() -> u32 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.subsec_nanos())
        .unwrap_or(1)
        .max(1)
}

/// Unpredictable non-zero RequestIDs without a system call each, for a scan that starts
/// thousands of queries a second: SipHash-1-3 of a counter under a 128-bit key drawn once
/// from the OS. Whoever does not see our queries cannot tell the next ID from the ones
/// before (SipHash is a pseudo-random function), which is what keeps a forged answer
/// from matching.
pub(crate) struct RequestIds {
    key: [u8; 16],
    counter: u64,
}

impl RequestIds {
    pub(crate) fn new() -> Self {
        let mut key = [0u8; 16];
        if getrandom::fill(&mut key).is_err() {
            for (k, b) in key.iter_mut().zip(clock_u32().to_le_bytes()) {
                *k = b;
            }
        }
        Self { key, counter: 0 }
    }

    pub(crate) fn next(&mut self) -> u32 {
        use std::hash::Hasher as _;
        self.counter = self.counter.wrapping_add(1);
        let mut h = siphasher::sip::SipHasher13::new_with_key(&self.key);
        h.write_u64(self.counter);
        let v = h.finish();
        // Both halves folded: every bit of the 64-bit output counts.
        (((v >> 32) ^ v) as u32).max(1)
    }
}

#[cfg(test)]
mod tests {
    use super::RequestIds;

    #[test]
    fn request_ids_are_non_zero_distinct_and_keyed() {
        let mut a = RequestIds::new();
        let mut b = RequestIds::new();
        let xs: Vec<u32> = (0..10_000).map(|_| a.next()).collect();
        assert!(xs.iter().all(|&x| x != 0));
        let mut sorted = xs.clone();
        sorted.sort_unstable();
        sorted.dedup();
        // 10,000 draws from 2^32 values: a repeat or two is possible, not more.
        assert!(sorted.len() >= 9_990, "{} distinct", sorted.len());
        // Another key, another sequence.
        let ys: Vec<u32> = (0..100).map(|_| b.next()).collect();
        assert_ne!(&xs[..100], &ys[..]);
        // Not a counter in disguise: consecutive IDs differ in about half their bits.
        let flips: u32 = xs.windows(2).map(|w| (w[0] ^ w[1]).count_ones()).sum();
        let mean = f64::from(flips) / 9_999.0;
        assert!((14.0..18.0).contains(&mean), "mean bit flips {mean}");
    }
}
