//! The scanner's global send-rate cap: a token bucket that takes time as a parameter
//! (sans-IO, so it is tested without sleeping). Plain arithmetic; nothing here panics.

use std::time::{Duration, Instant};

/// A token bucket: `rate` tokens per second, at most `burst` saved up.
#[derive(Debug, Clone)]
pub struct Pacer {
    rate: f64,
    burst: f64,
    tokens: f64,
    last: Instant,
}

impl Pacer {
    /// A full bucket at `now`. `rate` is raised to 1/s and `burst` to 1 if lower.
    pub fn new(rate: u32, burst: u32, now: Instant) -> Self {
        let burst = f64::from(burst.max(1));
        Self {
            rate: f64::from(rate.max(1)),
            burst,
            tokens: burst,
            last: now,
        }
    }

    fn refill(&mut self, now: Instant) {
        let dt = now.saturating_duration_since(self.last).as_secs_f64();
        self.last = self.last.max(now);
        self.tokens = (self.tokens + dt * self.rate).min(self.burst);
    }

    /// Whether a token is available at `now` (without taking it).
    pub fn ready(&mut self, now: Instant) -> bool {
        self.refill(now);
        self.tokens >= 1.0
    }

    /// Takes a token if one is available at `now`.
    pub fn take(&mut self, now: Instant) -> bool {
        if self.ready(now) {
            self.tokens -= 1.0;
            true
        } else {
            false
        }
    }

    /// Gives back a token taken but not used.
    pub fn refund(&mut self) {
        self.tokens = (self.tokens + 1.0).min(self.burst);
    }

    /// When the next token will be available (`now` if one is).
    pub fn next_token_at(&mut self, now: Instant) -> Instant {
        if self.ready(now) {
            return now;
        }
        let wait = (1.0 - self.tokens) / self.rate;
        now + Duration::from_secs_f64(wait.clamp(0.0, 1.0))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rate_and_burst_are_respected() {
        let t0 = Instant::now();
        let mut p = Pacer::new(1000, 10, t0);
        let burst = (0..100).filter(|_| p.take(t0)).count();
        assert_eq!(burst, 10);
        assert!(!p.take(t0));
        // 1000/s: one token per millisecond.
        let next = p.next_token_at(t0);
        assert!(next > t0 && next <= t0 + Duration::from_millis(1));
        let t1 = t0 + Duration::from_millis(5);
        assert_eq!((0..100).filter(|_| p.take(t1)).count(), 5);
        // Over one simulated second, about `rate` tokens (plus the initial burst).
        let mut sent = 0;
        for ms in 0..1000u64 {
            let now = t1 + Duration::from_millis(ms);
            while p.take(now) {
                sent += 1;
            }
        }
        assert!((995..=1001).contains(&sent), "{sent}");
        // Time going backwards never adds tokens.
        assert!(!p.take(t0));
    }
}
