//! Timers and the event log shared by the client state machines
//! ([`ogp`](crate::ogp::client), [`ogp_draft`](crate::ogp_draft::client),
//! [`gqp`](crate::gqp::client), [`a2s`](crate::a2s::client)).
//!
//! An [`AttemptTimer`] holds what every client does the same way: a datagram is sent
//! when one is due; each attempt waits `attempt_timeout`, which grows by
//! `backoff_percent` (at least 100) with every retry; after `retries` retries, or when the
//! total deadline passes, the machine gives up. A resend asked for by the protocol (a new
//! challenge or token) is due at once and does not use up a retry. Like the machines, it
//! has no clock: time is passed in.
//!
//! An [`EventLog`] records wire events up to a cap and ignores the rest, so that a
//! hostile server cannot make a machine hold more.

use std::time::{Duration, Instant};

/// What [`AttemptTimer::handle_timeout`] decided.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Timeout {
    /// The attempt timed out and a retry is left: a resend is now due.
    Resend,
    /// Stop waiting.
    GiveUp {
        /// Whether the total deadline passed (rather than the retries running out).
        deadline: bool,
    },
}

/// Attempt and total timers, retries and backoff of one query.
#[derive(Debug, Clone)]
pub struct AttemptTimer {
    initial_timeout: Duration,
    attempt_timeout: Duration,
    backoff_percent: u32,
    retries: u32,
    retries_used: u32,
    attempts: u32,
    send_now: bool,
    attempt_deadline: Option<Instant>,
    deadline: Instant,
    sent_at: Option<Instant>,
}

impl AttemptTimer {
    /// Timers of a query starting at `now`, with a first datagram due at once.
    pub fn new(
        now: Instant,
        attempt_timeout: Duration,
        backoff_percent: u32,
        retries: u32,
        total_timeout: Duration,
    ) -> Self {
        Self {
            initial_timeout: attempt_timeout,
            attempt_timeout,
            backoff_percent,
            retries,
            retries_used: 0,
            attempts: 0,
            send_now: true,
            attempt_deadline: None,
            deadline: now + total_timeout,
            sent_at: None,
        }
    }

    /// Whether a datagram is due.
    pub fn send_due(&self) -> bool {
        self.send_now
    }

    /// Records that a datagram was sent at `now`: the attempt timer starts.
    pub fn sent(&mut self, now: Instant) {
        self.send_now = false;
        self.attempts += 1;
        self.sent_at = Some(now);
        self.attempt_deadline = Some(now + self.attempt_timeout);
    }

    /// Makes a resend due at once, without using up a retry (a new challenge or token).
    pub fn resend_now(&mut self) {
        self.send_now = true;
        self.attempt_deadline = None;
    }

    /// Stops: nothing due, no attempt timer (the total deadline stays).
    pub fn stop(&mut self) {
        self.send_now = false;
        self.attempt_deadline = None;
    }

    /// Gives the next step of a query fresh retries and the initial attempt timeout.
    pub fn restart_retries(&mut self) {
        self.retries_used = 0;
        self.attempt_timeout = self.initial_timeout;
    }

    /// Datagrams sent.
    pub fn attempts(&self) -> u32 {
        self.attempts
    }

    /// When the last datagram was sent.
    pub fn sent_at(&self) -> Option<Instant> {
        self.sent_at
    }

    /// Time from the last send to `now`, in milliseconds (0 before any send).
    pub fn rtt_ms(&self, now: Instant) -> f64 {
        let rtt = self
            .sent_at
            .map_or(Duration::ZERO, |s| now.saturating_duration_since(s));
        rtt.as_secs_f64() * 1000.0
    }

    /// When [`handle_timeout`](Self::handle_timeout) must be called next.
    pub fn poll_timeout(&self) -> Instant {
        match self.attempt_deadline {
            Some(a) => a.min(self.deadline),
            None => self.deadline,
        }
    }

    /// Advances the timers to `now`: None while waiting, else a resend (now due, with the
    /// attempt timeout grown) or giving up.
    pub fn handle_timeout(&mut self, now: Instant) -> Option<Timeout> {
        if now >= self.deadline {
            return Some(Timeout::GiveUp { deadline: true });
        }
        if self.attempt_deadline.is_none_or(|a| now < a) {
            return None;
        }
        if self.retries_used >= self.retries {
            return Some(Timeout::GiveUp { deadline: false });
        }
        self.retries_used += 1;
        let grown =
            self.attempt_timeout.as_millis() * u128::from(self.backoff_percent.max(100)) / 100;
        self.attempt_timeout = Duration::from_millis(u64::try_from(grown).unwrap_or(u64::MAX));
        self.resend_now();
        Some(Timeout::Resend)
    }
}

/// Events recorded up to a cap; later ones are ignored.
#[derive(Debug, Clone)]
pub struct EventLog<E> {
    events: Vec<E>,
    cap: usize,
}

impl<E> EventLog<E> {
    /// An empty log keeping at most `cap` events.
    pub fn new(cap: usize) -> Self {
        Self {
            events: Vec::new(),
            cap,
        }
    }

    /// Records `e` unless the log is full.
    pub fn push(&mut self, e: E) {
        if self.events.len() < self.cap {
            self.events.push(e);
        }
    }

    /// The events so far, leaving the log empty.
    pub fn take(&mut self) -> Vec<E> {
        std::mem::take(&mut self.events)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn backoff_retries_and_deadline() {
        let t0 = Instant::now();
        let mut t = AttemptTimer::new(t0, Duration::from_secs(1), 150, 2, Duration::from_secs(5));
        let mut sends = Vec::new();
        let mut now = t0;
        loop {
            if t.send_due() {
                t.sent(now);
                sends.push(now - t0);
            }
            now = t.poll_timeout();
            match t.handle_timeout(now) {
                Some(Timeout::GiveUp { deadline }) => {
                    assert!(!deadline);
                    break;
                }
                Some(Timeout::Resend) | None => {}
            }
        }
        assert_eq!(sends, [0, 1000, 2500].map(Duration::from_millis).to_vec());
        assert_eq!(now - t0, Duration::from_millis(4750));
        assert_eq!(t.attempts(), 3);
    }

    #[test]
    fn resends_do_not_use_up_retries_and_the_deadline_wins() {
        let t0 = Instant::now();
        let mut t = AttemptTimer::new(t0, Duration::from_secs(1), 150, 0, Duration::from_secs(2));
        t.sent(t0);
        t.resend_now();
        assert!(t.send_due());
        t.sent(t0);
        assert_eq!(t.handle_timeout(t0 + Duration::from_millis(999)), None);
        assert_eq!(
            t.handle_timeout(t0 + Duration::from_secs(1)),
            Some(Timeout::GiveUp { deadline: false })
        );
        assert_eq!(
            t.handle_timeout(t0 + Duration::from_secs(2)),
            Some(Timeout::GiveUp { deadline: true })
        );
    }

    #[test]
    fn the_log_is_capped() {
        let mut log = EventLog::new(2);
        for i in 0..5 {
            log.push(i);
        }
        assert_eq!(log.take(), [0, 1]);
        assert!(log.take().is_empty());
    }
}
