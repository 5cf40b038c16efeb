//! The byte budgets of list answers, shared by every list protocol a master serves
//! (Valve's [`super::valve`], dpmaster's [`super::dpmaster`], QuakeWorld's
//! [`super::qwmaster`], Teeworlds' [`super::teemaster`]), and the paging of an answer
//! under them ([`answer_pages`]).
//!
//! No list protocol has a challenge: a request proves nothing about its source address,
//! and its answer is many times its size. So every answer datagram is charged against
//! its destination's budget and then against the budget of all destinations together,
//! before it is built; a datagram either budget does not cover is not sent. Whatever
//! spoofers send, one address is sent at most its budget, and all addresses together at
//! most the total.
//!
//! The budgets are the process's, not a socket's: a [`ListBudget`]'s clones share its
//! buckets (behind one lock), so a master that serves lists on several sockets, from
//! several threads, hands each socket a clone and the total and every source's budget
//! hold across all of them.

use std::net::{IpAddr, Ipv4Addr};
use std::sync::{Arc, Mutex};
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

/// Decides which list answers are sent (see the module docs). Clones share the budgets.
#[derive(Debug, Clone)]
pub struct ListBudget {
    buckets: Arc<Mutex<Buckets>>,
}

#[derive(Debug)]
struct Buckets {
    per_source: RateLimiter,
    /// One bucket, under one key ([`ListBudget::ALL`]), for all sources together.
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
        let buckets = Buckets {
            per_source: RateLimiter::new(rate(config.per_source), Self::SOURCES, secret, now),
            total: RateLimiter::new(rate(config.total), 1, secret, now),
        };
        Self {
            buckets: Arc::new(Mutex::new(buckets)),
        }
    }

    /// Whether to send an answer datagram of up to `bytes` to `from` at `now`. On
    /// [`ListAdmission::Answer`] both budgets have been charged `bytes`; when the total
    /// refuses, the source's charge stands (a source cannot drain the total faster than
    /// its own budget). Every clone charges the same budgets.
    pub fn charge(&self, now: Instant, from: IpAddr, bytes: usize) -> ListAdmission {
        let cost = bytes as f32;
        let mut b = self.lock();
        if b.per_source.charge(now, from, cost) == RateDecision::Limited {
            return ListAdmission::SourceOverBudget;
        }
        if b.total.charge(now, Self::ALL, cost) == RateDecision::Limited {
            return ListAdmission::TotalOverBudget;
        }
        ListAdmission::Answer
    }

    /// A thread that panicked while holding the lock left the buckets whole (each
    /// charge is a few assignments): go on with them.
    fn lock(&self) -> std::sync::MutexGuard<'_, Buckets> {
        self.buckets
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    /// How many bytes of work (beyond the page [`charge`](Self::charge) paid for) an
    /// answer to `from` may still cost at `now`, to be paid by [`owe`](Self::owe): what
    /// the source's budget holds plus one burst of debt, but no more than what the total
    /// holds (the total is never owed). So one request can take from the total at most
    /// what its source can pay (two bursts), and the total never goes below zero: an
    /// expensive request shuts no one else out once the total refills.
    pub fn pass_allowance(&self, now: Instant, from: IpAddr) -> usize {
        let b = self.lock();
        let source = b.per_source.tokens(now, from) + b.per_source.config().burst;
        let total = b.total.tokens(now, Self::ALL);
        // f32 → usize saturates, and a negative or NaN value is 0
        source.min(total).max(0.0) as usize
    }

    /// Charges `bytes` of work whose cost was known only once it was done (a list
    /// request's pass over the list): the source's budget down to minus one burst (its
    /// next requests are refused until it has refilled past the debt), the total down
    /// to zero. Within [`pass_allowance`](Self::pass_allowance), what the total is
    /// charged is what the source is.
    pub fn owe(&self, now: Instant, from: IpAddr, bytes: usize) {
        if bytes == 0 {
            return;
        }
        let cost = bytes as f32;
        let mut b = self.lock();
        b.per_source.owe(now, from, cost);
        let held = b.total.tokens(now, Self::ALL).max(0.0);
        let _ = b.total.charge(now, Self::ALL, cost.min(held));
    }
}

/// How a paged answer went ([`answer_pages`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Answered {
    /// Pages sent.
    pub pages: usize,
    /// Servers in them.
    pub servers: usize,
    /// Whether the whole list went (the last page sent held its last server).
    pub complete: bool,
    /// The budget's decision that stopped it ([`ListAdmission::Answer`]: nothing did).
    pub stopped_by: ListAdmission,
}

/// Answers a list request from `from` with the servers `servers` finds (called only
/// once the first page is within budget, so that a refused request costs no list
/// work): pages of at most `page_bytes`, each charged a whole page against `budget`
/// *before* `encode` builds it (it appends a page of the servers it is given and says
/// how many it took) and `send` gets it. A page the budget refuses is not sent and ends
/// the answer there, so whatever a request asks for, its source is sent no more than
/// its budget allows. At least one page is sent (an empty list's, with its end marker
/// where the protocol has one); a page that takes no server ends the answer, incomplete.
pub fn answer_pages<T>(
    servers: impl FnOnce() -> Vec<T>,
    from: IpAddr,
    now: Instant,
    budget: &ListBudget,
    page_bytes: usize,
    mut encode: impl FnMut(&[T], &mut Vec<u8>) -> usize,
    mut send: impl FnMut(&[u8]),
) -> Answered {
    let mut done = Answered {
        pages: 0,
        servers: 0,
        complete: false,
        stopped_by: ListAdmission::Answer,
    };
    let mut page = Vec::with_capacity(page_bytes);
    let admission = budget.charge(now, from, page_bytes);
    if admission != ListAdmission::Answer {
        done.stopped_by = admission;
        return done;
    }
    let list = servers();
    let mut rest = list.as_slice();
    loop {
        page.clear();
        let n = encode(rest, &mut page);
        send(&page);
        done.pages += 1;
        done.servers += n;
        rest = rest.get(n..).unwrap_or_default();
        if rest.is_empty() {
            done.complete = true;
            return done;
        }
        if n == 0 {
            // an encoder that takes nothing would page forever
            return done;
        }
        let admission = budget.charge(now, from, page_bytes);
        if admission != ListAdmission::Answer {
            done.stopped_by = admission;
            return done;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    /// A source that owed for a pass is refused until its budget has refilled past the
    /// debt (and no longer), and owes at most one burst whatever the pass cost; other
    /// sources are not held up by it.
    #[test]
    fn a_source_that_owed_is_refused_until_it_has_refilled() {
        let t0 = Instant::now();
        let page = LARGEST_PAGE_BYTES;
        // 2 pages a second per source: a burst of 8 pages
        let budget = ListBudget::new(
            ListBudgetConfig::new(2 * page as u32, u32::MAX),
            [7; 16],
            t0,
        );
        let (costly, other): (IpAddr, IpAddr) =
            ("192.0.2.7".parse().unwrap(), "192.0.2.8".parse().unwrap());
        assert_eq!(budget.charge(t0, costly, page), ListAdmission::Answer);
        // 7 pages left and a burst of debt
        assert_eq!(budget.pass_allowance(t0, costly), 15 * page);
        budget.owe(t0, costly, 1_000_000 * page);
        assert_eq!(
            budget.pass_allowance(t0, costly),
            0,
            "a burst owed, no more"
        );
        assert_eq!(budget.charge(t0, other, page), ListAdmission::Answer);
        // -8 pages: a page's worth again after 4.5 s
        let at = |ms| t0 + Duration::from_millis(ms);
        assert_eq!(
            budget.charge(at(4_400), costly, page),
            ListAdmission::SourceOverBudget
        );
        assert_eq!(
            budget.charge(at(4_550), costly, page),
            ListAdmission::Answer
        );
        assert_eq!(
            budget.charge(at(4_550), costly, page),
            ListAdmission::SourceOverBudget
        );
        // what it owes is what it did not pay: a small debt is refilled soon
        budget.owe(at(10_000), other, page);
        assert_eq!(
            budget.charge(at(10_000), other, page),
            ListAdmission::Answer
        );
        budget.owe(at(10_000), other, 9 * page);
        assert_eq!(
            budget.charge(at(10_000), other, page),
            ListAdmission::SourceOverBudget
        );
        // -3 pages: one page's worth after 2 s
        assert_eq!(
            budget.charge(at(11_900), other, page),
            ListAdmission::SourceOverBudget
        );
        assert_eq!(
            budget.charge(at(12_050), other, page),
            ListAdmission::Answer
        );
    }

    /// The total is never owed: a request's pass takes from it at most what the total
    /// holds and what its source can pay (two bursts), so one costly request leaves the
    /// list open to everyone, and after many the total reopens as soon as it refills a
    /// page, not after paying back seconds of debt.
    #[test]
    fn passes_take_from_the_total_only_what_it_holds() {
        let t0 = Instant::now();
        let page = LARGEST_PAGE_BYTES;
        // per source: 2 pages a second (burst 8); total: 20 (burst 80)
        let config = ListBudgetConfig::new(2 * page as u32, 20 * page as u32);
        let budget = ListBudget::new(config, [8; 16], t0);
        let source = |i: u32| IpAddr::V4(Ipv4Addr::from(0xc000_0200 + i));
        assert_eq!(budget.charge(t0, source(0), page), ListAdmission::Answer);
        let may = budget.pass_allowance(t0, source(0));
        assert_eq!(may, 15 * page, "what the source can pay");
        budget.owe(t0, source(0), may);
        // the total held 79 pages and gave 15: 64 more pages for the others
        let served = (1..=100)
            .filter(|i| budget.charge(t0, source(*i), page) == ListAdmission::Answer)
            .count();
        assert_eq!(served, 64);
        assert_eq!(
            budget.pass_allowance(t0, source(101)),
            0,
            "the total is empty"
        );
        budget.owe(t0, source(1), 50 * page);
        assert_eq!(
            budget.charge(t0, source(102), page),
            ListAdmission::TotalOverBudget
        );
        // 20 pages a second: one page's worth after 50 ms, however much was done
        let soon = t0 + Duration::from_millis(51);
        assert_eq!(
            budget.charge(soon, source(102), page),
            ListAdmission::Answer
        );
    }

    /// Two sockets, two threads, one budget: the total and each source's budget hold
    /// across the clones (issue 36, item 5: each socket had budgets of its own).
    #[test]
    fn clones_share_the_total_and_each_sources_budget() {
        let t0 = Instant::now();
        let page = LARGEST_PAGE_BYTES;
        // 2 pages a second per source (burst 8), 4 in all (burst 16)
        let config = ListBudgetConfig::new(2 * page as u32, 4 * page as u32);
        let budget = ListBudget::new(config, [4; 16], t0);
        let victim: IpAddr = "203.0.113.9".parse().unwrap();
        let served: Vec<(u32, u32)> = std::thread::scope(|s| {
            let sockets: Vec<_> = (0..2)
                .map(|_| {
                    let b = budget.clone();
                    s.spawn(move || {
                        let (mut theirs, mut all) = (0, 0);
                        for i in 0..1000u32 {
                            let from = IpAddr::from([10, 0, (i % 50) as u8, 1]);
                            if b.charge(t0, victim, page) == ListAdmission::Answer {
                                theirs += 1;
                            }
                            if b.charge(t0, from, page) == ListAdmission::Answer {
                                all += 1;
                            }
                        }
                        (theirs, all)
                    })
                })
                .collect();
            sockets.into_iter().map(|h| h.join().unwrap()).collect()
        });
        let victim_pages: u32 = served.iter().map(|s| s.0).sum();
        let all_pages: u32 = served.iter().map(|s| s.0 + s.1).sum();
        assert!(
            victim_pages <= 8,
            "the victim got {victim_pages} pages: {served:?}"
        );
        assert_eq!(all_pages, 16, "the total's burst, across both: {served:?}");
    }
}
