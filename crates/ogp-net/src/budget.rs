//! A byte budget shared by many TCP connections: what their query machines may hold of
//! received input, all together.
//!
//! One hostile server can make a connection hold one frame of its protocol (Minecraft's
//! status: 98,326 bytes); thousands of them at once, each a frame just under the cap
//! and never finished, would make the process hold thousands of frames. With a budget,
//! a connection takes bytes from it before its machine's buffer grows
//! ([`QueryDriver::stream_buffer`](ogp_proto::client::QueryDriver::stream_buffer)) and
//! gives them back when the buffer shrinks or the connection ends; when the budget is
//! spent, a connection stops reading (the kernel's window pushes back on the server)
//! until bytes come back or its machine's timers end it. A scan has one
//! ([`ScanConfig::stream_budget`](crate::scan::ScanConfig::stream_budget)); cloning it shares
//! it, so that several scans (a master's poller and its verifications) keep one bound.

use std::sync::Arc;

use tokio::sync::{OwnedSemaphorePermit, Semaphore};

/// The smallest budget: 256 KiB (262,144 bytes), about two frames of the largest size a
/// stream machine holds (Minecraft's legacy kick, 131,073 bytes: two take 262,146, so the
/// second waits for a few bytes of the first); a budget smaller than one frame would
/// starve every large reply.
pub const MIN_BUDGET: usize = 256 << 10;

/// The default budget of a scan: 16 MiB, 170 status frames of the largest size at once
/// (most statuses are a few KiB: thousands of them).
pub const DEFAULT_BUDGET: usize = 16 << 20;

/// Bytes that TCP connections may hold of received input, all together (see the
/// module's documentation). Cloning shares the budget.
#[derive(Debug, Clone)]
pub struct ByteBudget {
    sem: Arc<Semaphore>,
    total: usize,
}

impl ByteBudget {
    /// A budget of `bytes` (at least [`MIN_BUDGET`], at most what a semaphore counts).
    pub fn new(bytes: usize) -> Self {
        let total = bytes.clamp(MIN_BUDGET, Semaphore::MAX_PERMITS);
        Self {
            sem: Arc::new(Semaphore::new(total)),
            total,
        }
    }

    /// The budget's size in bytes.
    pub fn total(&self) -> usize {
        self.total
    }

    /// Bytes not taken now.
    pub fn available(&self) -> usize {
        self.sem.available_permits()
    }

    /// A lease of nothing yet, for one connection.
    pub(crate) fn lease(&self) -> Lease {
        Lease {
            budget: self.clone(),
            permit: None,
        }
    }
}

impl Default for ByteBudget {
    fn default() -> Self {
        Self::new(DEFAULT_BUDGET)
    }
}

/// The same budget (a clone), not merely one of the same size.
impl PartialEq for ByteBudget {
    fn eq(&self, other: &Self) -> bool {
        Arc::ptr_eq(&self.sem, &other.sem)
    }
}

impl Eq for ByteBudget {}

/// The bytes one connection holds of a budget; they go back when it is dropped.
#[derive(Debug)]
pub(crate) struct Lease {
    budget: ByteBudget,
    permit: Option<OwnedSemaphorePermit>,
}

impl Lease {
    /// Bytes held.
    pub(crate) fn held(&self) -> usize {
        self.permit
            .as_ref()
            .map_or(0, OwnedSemaphorePermit::num_permits)
    }

    /// Whether it holds `bytes`, or the whole budget when that is less.
    pub(crate) fn covers(&self, bytes: usize) -> bool {
        self.held() >= bytes.min(self.budget.total)
    }

    /// Holds at least `bytes` (at most the budget's size), waiting for others to give
    /// bytes back. Cancel-safe: dropped while waiting, it holds what it held.
    pub(crate) async fn grow_to(&mut self, bytes: usize) {
        let bytes = bytes.min(self.budget.total);
        let Some(more) = bytes.checked_sub(self.held()).filter(|m| *m > 0) else {
            return;
        };
        // A semaphore counts a request in u32: a larger one (never, below 4 GiB of
        // budget) waits in steps.
        let mut left = more;
        while left > 0 {
            let step = u32::try_from(left).unwrap_or(u32::MAX);
            let Ok(p) = Arc::clone(&self.budget.sem).acquire_many_owned(step).await else {
                // Never closed; were it, nothing is held back.
                return;
            };
            left = left.saturating_sub(p.num_permits());
            match &mut self.permit {
                Some(held) => held.merge(p),
                None => self.permit = Some(p),
            }
        }
    }

    /// Gives back what is held beyond `bytes`.
    pub(crate) fn shrink_to(&mut self, bytes: usize) {
        let Some(held) = &mut self.permit else { return };
        let extra = held.num_permits().saturating_sub(bytes);
        if extra > 0 {
            // Dropping the split part gives it back.
            drop(held.split(extra));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    #[tokio::test]
    async fn leases_take_and_give_back_and_wait_when_spent() {
        let b = ByteBudget::new(MIN_BUDGET);
        let mut a = b.lease();
        a.grow_to(MIN_BUDGET - 10_000).await;
        assert_eq!(a.held(), MIN_BUDGET - 10_000);
        assert_eq!(b.available(), 10_000);
        // More than is left: waits until `a` gives some back.
        let mut c = b.lease();
        let wait = tokio::time::timeout(Duration::from_millis(50), c.grow_to(40_000)).await;
        assert!(wait.is_err(), "a spent budget handed out bytes");
        assert_eq!(c.held(), 0);
        a.shrink_to(4096);
        assert_eq!(a.held(), 4096);
        c.grow_to(40_000).await;
        assert_eq!(c.held(), 40_000);
        drop((a, c));
        assert_eq!(b.available(), MIN_BUDGET);
        // Never more than the whole budget, however much is asked.
        let mut d = b.lease();
        d.grow_to(usize::MAX).await;
        assert_eq!(d.held(), MIN_BUDGET);
        // Clones share; equal budgets are the same one.
        assert_eq!(b.clone(), b);
        assert_ne!(ByteBudget::new(MIN_BUDGET), b);
        assert_eq!(b.clone().available(), 0);
    }
}
