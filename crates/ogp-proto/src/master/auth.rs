//! What a server does with wrong bearer tokens (the master's write API): each source (an
//! IPv4 address, or an IPv6 /64) may get a few wrong tokens checked a second, all
//! sources together a few dozen; past that, a wrong token is answered "too many"
//! (HTTP 429 with `Retry-After`). Each source's wrong tokens are reported at most once a
//! minute, with their count.
//!
//! The right token is checked first, in constant time, and is never refused here: an
//! operator who shares an address (a NAT) or a network with a guesser, or who mistyped
//! the token a few times, is not locked out. The price is that a refusal still tells a
//! guesser its token was wrong; what keeps guessing hopeless is the token's length (the
//! master takes none shorter than 16 bytes), while this guard keeps guesses cheap to
//! refuse, visible in the log and counted.
//!
//! Memory is fixed: the rate limiters are fixed tables ([`crate::guard::RateLimiter`]),
//! and the report table holds at most [`WrongTokens::REPORTED_SOURCES`] sources; wrong
//! tokens from further sources are reported together. Sans-IO: time is passed in.

use std::collections::HashMap;
use std::net::{IpAddr, Ipv4Addr};
use std::time::{Duration, Instant};

use crate::guard::{canonical_ip, source_key, RateConfig, RateDecision, RateLimiter};

/// The budgets of wrong tokens.
#[derive(Debug, Clone, Copy, PartialEq)]
#[non_exhaustive]
pub struct WrongTokenLimits {
    /// Wrong tokens checked per source (default 1 a second, in bursts of 10: a script
    /// retrying with a stale token is told 401 several times before 429).
    pub per_source: RateConfig,
    /// Wrong tokens checked from all sources together (default 20 a second, in bursts
    /// of 50).
    pub total: RateConfig,
    /// How often one source's wrong tokens are reported at most (default 60 s).
    pub report_every: Duration,
}

impl Default for WrongTokenLimits {
    fn default() -> Self {
        Self {
            per_source: RateConfig::new(1.0, 10.0),
            total: RateConfig::new(20.0, 50.0),
            report_every: Duration::from_secs(60),
        }
    }
}

/// What to answer to a wrong token.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum WrongTokenAnswer {
    /// Within the budgets: "unauthorized" (HTTP 401).
    Unauthorized,
    /// Over a budget: "too many" (HTTP 429), to try again after this many seconds.
    TooMany {
        /// Seconds until the source's budget holds another check (at least 1).
        retry_after_secs: u32,
    },
}

impl WrongTokenAnswer {
    /// A short name for metrics labels (`unauthorized`, `limited`).
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Unauthorized => "unauthorized",
            Self::TooMany { .. } => "limited",
        }
    }
}

/// A report of one source's wrong tokens (or, with `source` `None`, of the sources the
/// report table had no room for).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct WrongTokenReport {
    /// The source (its first address seen), or `None` for sources beyond the table.
    pub source: Option<IpAddr>,
    /// Wrong tokens since the source's previous report (or its first).
    pub count: u64,
    /// Of them, answered "too many".
    pub limited: u64,
    /// Whether this is the source's first report in a while (a new guesser).
    pub first: bool,
}

impl std::fmt::Display for WrongTokenReport {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let from = match self.source {
            Some(ip) => ip.to_string(),
            None => "sources beyond the report table".to_owned(),
        };
        let s = if self.count == 1 { "" } else { "s" };
        write!(
            f,
            "wrong API token{s} from {from}: {} ({} refused as too many)",
            self.count, self.limited
        )?;
        if self.first {
            f.write_str("; more from it are counted and reported at most once a minute")?;
        }
        Ok(())
    }
}

#[derive(Debug, Clone, Copy)]
struct Pending {
    shown: IpAddr,
    count: u64,
    limited: u64,
    /// When its last report was due; `None` before its first (due at once).
    reported: Option<Instant>,
}

/// The wrong-token guard (see the module docs).
#[derive(Debug)]
pub struct WrongTokens {
    limits: WrongTokenLimits,
    per_source: RateLimiter,
    total: RateLimiter,
    pending: HashMap<(u8, u64), Pending>,
    /// Sources the table had no room for, together.
    beyond: Option<Pending>,
}

impl WrongTokens {
    /// Sources whose wrong tokens are counted apart (about 64 bytes each).
    pub const REPORTED_SOURCES: usize = 4096;

    /// Sources the per-source limiter tracks (a fixed table; sources beyond it share a
    /// bucket).
    const LIMITED_SOURCES: usize = 16_384;

    /// The key the total is charged under.
    const ALL: IpAddr = IpAddr::V4(Ipv4Addr::UNSPECIFIED);

    /// A guard with `limits`; `secret` keys the limiter's hash so that nobody can aim
    /// collisions.
    pub fn new(limits: WrongTokenLimits, secret: [u8; 16], now: Instant) -> Self {
        Self {
            limits,
            per_source: RateLimiter::new(limits.per_source, Self::LIMITED_SOURCES, secret, now),
            total: RateLimiter::new(limits.total, 1, secret, now),
            pending: HashMap::new(),
            beyond: None,
        }
    }

    /// A wrong token from `ip` at `now`: what to answer, and a report to log if one is
    /// due for this source (its first wrong token in a while, or the count since its
    /// previous report once [`WrongTokenLimits::report_every`] has passed).
    pub fn wrong(
        &mut self,
        now: Instant,
        ip: IpAddr,
    ) -> (WrongTokenAnswer, Option<WrongTokenReport>) {
        // the source's budget first: a source over it does not use the total's
        let allowed = self.per_source.check(now, ip) == RateDecision::Allow
            && self.total.check(now, Self::ALL) == RateDecision::Allow;
        let answer = if allowed {
            WrongTokenAnswer::Unauthorized
        } else {
            let per = self
                .limits
                .per_source
                .per_second
                .min(self.limits.total.per_second);
            let secs = if per > 0.0 { (1.0 / per).ceil() } else { 60.0 };
            WrongTokenAnswer::TooMany {
                retry_after_secs: (secs as u32).clamp(1, 3600),
            }
        };
        let key = source_key(ip);
        let room = self.pending.len() < Self::REPORTED_SOURCES;
        let every = self.limits.report_every;
        let entry = match self.pending.get_mut(&key) {
            Some(p) => Some(p),
            None if room => Some(self.pending.entry(key).or_insert(Pending {
                shown: canonical_ip(ip),
                count: 0,
                limited: 0,
                reported: None,
            })),
            None => None,
        };
        let (p, source) = match entry {
            Some(p) => {
                let shown = p.shown;
                (p, Some(shown))
            }
            None => (
                self.beyond.get_or_insert(Pending {
                    shown: Self::ALL,
                    count: 0,
                    limited: 0,
                    reported: None,
                }),
                None,
            ),
        };
        p.count = p.count.saturating_add(1);
        if !allowed {
            p.limited = p.limited.saturating_add(1);
        }
        let report = Self::due(p, now, every, source);
        (answer, report)
    }

    fn due(
        p: &mut Pending,
        now: Instant,
        every: Duration,
        source: Option<IpAddr>,
    ) -> Option<WrongTokenReport> {
        // never reported: due at once (not "a minute ago", which the clock may not
        // hold: a monotonic clock that starts at boot has no instant before it)
        let since = p.reported.map(|r| now.saturating_duration_since(r));
        if p.count == 0 || since.is_some_and(|s| s < every) {
            return None;
        }
        let r = WrongTokenReport {
            source,
            count: p.count,
            limited: p.limited,
            first: since.is_none_or(|s| s >= every.saturating_mul(2)) || p.count == 1,
        };
        p.count = 0;
        p.limited = 0;
        p.reported = Some(now);
        Some(r)
    }

    /// Reports due at `now` for sources that have sent no wrong token since their last
    /// report was due (their counts would wait for their next wrong token otherwise), and
    /// forgets sources with nothing to report for a while. Call it every few seconds.
    pub fn sweep(&mut self, now: Instant) -> Vec<WrongTokenReport> {
        let every = self.limits.report_every;
        let mut out = Vec::new();
        self.pending.retain(|_, p| {
            let shown = p.shown;
            if let Some(r) = Self::due(p, now, every, Some(shown)) {
                out.push(WrongTokenReport { first: false, ..r });
            }
            p.count > 0
                || p.reported
                    .is_some_and(|r| now.saturating_duration_since(r) < every)
        });
        if let Some(p) = &mut self.beyond {
            if let Some(r) = Self::due(p, now, every, None) {
                out.push(WrongTokenReport { first: false, ..r });
            }
        }
        out
    }

    /// Sources with wrong tokens counted apart now.
    pub fn reported_sources(&self) -> usize {
        self.pending.len()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ip(s: &str) -> IpAddr {
        s.parse().unwrap()
    }

    #[test]
    fn a_source_gets_a_burst_then_one_a_second_and_others_keep_theirs() {
        let t0 = Instant::now();
        let mut w = WrongTokens::new(WrongTokenLimits::default(), [7; 16], t0);
        let answers: Vec<_> = (0..100)
            .map(|_| w.wrong(t0, ip("198.51.100.7")).0)
            .collect();
        let checked = answers
            .iter()
            .filter(|a| **a == WrongTokenAnswer::Unauthorized)
            .count();
        assert_eq!(checked, 10);
        assert_eq!(
            answers[99],
            WrongTokenAnswer::TooMany {
                retry_after_secs: 1
            }
        );
        // another source is not refused for it
        assert_eq!(
            w.wrong(t0, ip("198.51.100.8")).0,
            WrongTokenAnswer::Unauthorized
        );
        // a second later, one more
        let t1 = t0 + Duration::from_millis(1001);
        assert_eq!(
            w.wrong(t1, ip("198.51.100.7")).0,
            WrongTokenAnswer::Unauthorized
        );
        assert_ne!(
            w.wrong(t1, ip("198.51.100.7")).0,
            WrongTokenAnswer::Unauthorized
        );
    }

    #[test]
    fn many_sources_together_are_held_to_the_total() {
        let t0 = Instant::now();
        let mut w = WrongTokens::new(WrongTokenLimits::default(), [7; 16], t0);
        let mut checked = 0;
        // 10 s of 1,000 sources each sending one wrong token a second
        for s in 0..10u32 {
            let now = t0 + Duration::from_secs(u64::from(s));
            for i in 0..1000u32 {
                let a = IpAddr::from((0x0a00_0000 + i * 256).to_be_bytes());
                if w.wrong(now, a).0 == WrongTokenAnswer::Unauthorized {
                    checked += 1;
                }
            }
        }
        // a burst of 50 and 20 a second
        assert!((50..=50 + 20 * 10).contains(&checked), "{checked}");
    }

    #[test]
    fn reports_come_at_most_once_a_minute_per_source_with_the_count() {
        let t0 = Instant::now();
        let mut w = WrongTokens::new(WrongTokenLimits::default(), [7; 16], t0);
        let a = ip("2001:db8::1");
        let mut reports = Vec::new();
        // 10 wrong tokens a second for 125 s: 9 left of the burst and 1 a second checked
        for ms in (0..125_000u64).step_by(100) {
            let (_, r) = w.wrong(t0 + Duration::from_millis(ms), a);
            reports.extend(r);
            reports.extend(w.sweep(t0 + Duration::from_millis(ms)));
        }
        let counts: Vec<_> = reports.iter().map(|r| (r.count, r.first)).collect();
        assert_eq!(counts, vec![(1, true), (600, false), (600, false)]);
        assert_eq!(reports[0].source, Some(a));
        assert!(reports[0].to_string().starts_with(
            "wrong API token from 2001:db8::1: 1 (0 refused as too many); more from it"
        ));
        assert_eq!(
            reports[1].to_string(),
            "wrong API tokens from 2001:db8::1: 600 (531 refused as too many)"
        );
        // the /64 is one source
        let (_, r) = w.wrong(t0 + Duration::from_secs(125), ip("2001:db8::2"));
        assert_eq!(r, None);
        // the last 49 are reported by the sweep once due, then the source is forgotten
        let late = w.sweep(t0 + Duration::from_secs(181));
        assert_eq!(late.len(), 1);
        assert_eq!(late[0].count, 50);
        assert!(w.sweep(t0 + Duration::from_secs(242)).is_empty());
        assert_eq!(w.reported_sources(), 0);
    }

    #[test]
    fn a_million_sources_stay_within_the_report_table() {
        let t0 = Instant::now();
        let mut w = WrongTokens::new(WrongTokenLimits::default(), [7; 16], t0);
        let mut reports = 0usize;
        let mut beyond = None;
        for i in 0..1_000_000u32 {
            let now = t0 + Duration::from_micros(u64::from(i) * 10);
            let (_, r) = w.wrong(now, IpAddr::from((0x0b00_0000 + i).to_be_bytes()));
            if let Some(r) = r {
                reports += 1;
                if r.source.is_none() {
                    beyond = Some(r);
                }
            }
            assert!(w.reported_sources() <= WrongTokens::REPORTED_SOURCES);
        }
        // one report per source with room, and one for all the others (first one)
        assert_eq!(reports, WrongTokens::REPORTED_SOURCES + 1);
        assert_eq!(beyond.map(|r| r.count), Some(1));
        // 10 s in: nothing more is due yet; a minute after, the others' count
        let later = w.sweep(t0 + Duration::from_secs(71));
        let rest: u64 = later
            .iter()
            .filter(|r| r.source.is_none())
            .map(|r| r.count)
            .sum();
        assert_eq!(rest, 1_000_000 - WrongTokens::REPORTED_SOURCES as u64 - 1);
        let _ = w.sweep(t0 + Duration::from_secs(200));
        assert_eq!(w.reported_sources(), 0);
    }

    /// The earliest instant the clock can stand for: a process started at boot on a
    /// platform whose clock starts there has the same (no instant a minute before it).
    fn the_clocks_origin() -> Instant {
        let mut t = Instant::now();
        let mut step = Duration::from_secs(1 << 62);
        while !step.is_zero() {
            match t.checked_sub(step) {
                Some(x) => t = x,
                None => step /= 2,
            }
        }
        t
    }

    #[test]
    fn a_first_wrong_token_in_the_clocks_first_minute_is_reported_at_once() {
        let origin = the_clocks_origin();
        let t0 = origin + Duration::from_secs(5);
        assert_eq!(t0.checked_sub(Duration::from_secs(60)), None);
        let mut w = WrongTokens::new(WrongTokenLimits::default(), [7; 16], origin);
        let a = ip("198.51.100.7");
        let (_, r) = w.wrong(t0, a);
        assert_eq!(
            r,
            Some(WrongTokenReport {
                source: Some(a),
                count: 1,
                limited: 0,
                first: true
            })
        );
        // then once a minute, as anywhere else on the clock
        for s in 6..65 {
            let (_, r) = w.wrong(origin + Duration::from_secs(s), a);
            assert_eq!(r, None, "at {s} s");
        }
        let (_, r) = w.wrong(origin + Duration::from_secs(65), a);
        assert_eq!(r.map(|r| (r.count, r.first)), Some((60, false)));
        // the sources beyond the report table too: their first is reported at once
        let mut w = WrongTokens::new(WrongTokenLimits::default(), [7; 16], origin);
        for i in 0..WrongTokens::REPORTED_SOURCES as u32 {
            let _ = w.wrong(t0, IpAddr::from((0x0b00_0000 + i).to_be_bytes()));
        }
        let (_, r) = w.wrong(t0, ip("192.0.2.1"));
        assert_eq!(r.map(|r| (r.source, r.count)), Some((None, 1)));
    }
}
