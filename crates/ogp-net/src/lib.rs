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
//! * [`scan`]: many servers at once over a few shared sockets, and protocol
//!   auto-detection.
//!
//! Nothing here panics on network input; every loop is bounded by a deadline or by the
//! socket closing.

#![forbid(unsafe_code)]

pub mod batch;
pub mod blocking;
pub mod client;
pub mod responder;
pub mod scan;

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
        // No OS randomness: fall back to the clock; RequestIDs need only be unlikely to
        // repeat, not secret.
        let t = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map(|d| d.subsec_nanos())
            .unwrap_or(1);
        return t.max(1);
    }
    u32::from_le_bytes(b).max(1)
}
