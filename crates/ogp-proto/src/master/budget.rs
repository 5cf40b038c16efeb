//! The byte budgets of list answers, shared by every list protocol a master serves
//! (Valve's [`super::valve`], dpmaster's [`super::dpmaster`]).
//!
//! No list protocol has a challenge: a request proves nothing about its source address,
//! and its answer is many times its size. So every answer datagram is charged against
//! its destination's budget and then against the budget of all destinations together,
//! before it is built; a datagram either budget does not cover is not sent. Whatever
//! spoofers send, one address is sent at most its budget, and all addresses together at
//! most the total.

use std::net::{IpAddr, Ipv4Addr};
use std::time::Instant;

use crate::guard::{RateConfig, RateDecision, RateLimiter};

/// The largest answer datagram of any list protocol served (dpmaster's 1,400 bytes;
/// Valve's pages are 1,392): each budget covers at least one such datagram a second.
pub const LARGEST_PAGE_BYTES: usize = 1400;

/// The byte budgets of list answers ([`ListBudget`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub struct ListBudgetConfig {
    /// Bytes a second toward one source address (IPv6: its /64), in bursts of up to four
    /// seconds' worth (default 65,536).
    pub per_source: u32,
    /// Bytes a second toward all sources together, in bursts of up to four seconds'
    /// worth (default 1,048,576).
    pub total: u32,
}

impl ListBudgetConfig {
    /// `per_source` bytes a second toward each source address, `total` toward all.
    pub const fn new(per_source: u32, total: u32) -> Self {
        Self { per_source, total }
    }
}

impl Default for ListBudgetConfig {
    fn default() -> Self {
        Self::new(65_536, 1_048_576)
    }
}

/// What [`ListBudget::charge`] decided about an answer datagram.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum ListAdmission {
    /// Send it (the budgets were charged).
    Answer,
    /// The source's budget is spent: send nothing.
    SourceOverBudget,
    /// The budget of all sources together is spent: send nothing.
    TotalOverBudget,
}

impl ListAdmission {
    /// A short name for metrics and logs.
    pub fn name(self) -> &'static str {
        match self {
            Self::Answer => "served",
            Self::SourceOverBudget => "rate_limited",
            Self::TotalOverBudget => "over_total_budget",
        }
    }
}

/// Decides which list answers are sent (see the module docs).
#[derive(Debug)]
pub struct ListBudget {
    per_source: RateLimiter,
    /// One bucket, under one key ([`Self::ALL`]), for all sources together.
    total: RateLimiter,
}

impl ListBudget {
    /// Sources tracked (memory about 24 bytes each; the table is fixed).
    const SOURCES: usize = 65_536;

    /// The key the total is charged under.
    const ALL: IpAddr = IpAddr::V4(Ipv4Addr::UNSPECIFIED);

    /// Budgets as `config` says (each at least [`LARGEST_PAGE_BYTES`] a second);
    /// `secret` keys the per-source limiter's hash so that nobody can aim collisions.
    pub fn new(config: ListBudgetConfig, secret: [u8; 16], now: Instant) -> Self {
        let rate = |bytes_per_second: u32| {
            let per_second = bytes_per_second.max(LARGEST_PAGE_BYTES as u32) as f32;
            RateConfig::new(per_second, per_second * 4.0)
        };
        Self {
            per_source: RateLimiter::new(rate(config.per_source), Self::SOURCES, secret, now),
            total: RateLimiter::new(rate(config.total), 1, secret, now),
        }
    }

    /// Whether to send an answer datagram of up to `bytes` to `from` at `now`. On
    /// [`ListAdmission::Answer`] both budgets have been charged `bytes`; when the total
    /// refuses, the source's charge stands (a source cannot drain the total faster than
    /// its own budget).
    pub fn charge(&mut self, now: Instant, from: IpAddr, bytes: usize) -> ListAdmission {
        let cost = bytes as f32;
        if self.per_source.charge(now, from, cost) == RateDecision::Limited {
            return ListAdmission::SourceOverBudget;
        }
        if self.total.charge(now, Self::ALL, cost) == RateDecision::Limited {
            return ListAdmission::TotalOverBudget;
        }
        ListAdmission::Answer
    }
}
