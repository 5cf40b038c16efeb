//! Timed sends to master servers, shared by every protocol that announces a server
//! (GameSpy v3 heartbeats, OGP master server uplinks). Sans-IO: time and the status are
//! passed in, datagrams handed out.
//!
//! An [`Announcer`] is the whole timed-send machine of one listening address: its
//! [`Schedule`] (at start, every `interval`, soon after the status changes but not more
//! often than every `min_gap`, and a last one on [`close`](Announcer::close)), the
//! detection of status changes, and a bounded queue of datagrams to each master. What a
//! datagram holds is the protocol's business: it implements [`Announce`]. The
//! [`Responder`](crate::responder::Responder) drives the announcers of every listening
//! address; the I/O layer only sends what it hands out and sleeps until it asks.

use std::collections::VecDeque;
use std::fmt;
use std::net::SocketAddr;
use std::time::{Duration, Instant};

use crate::Status;

/// Why an announcement is sent.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Occasion {
    /// The first one after start.
    Start,
    /// The regular one, every `interval`.
    Regular,
    /// The status changed since the last one.
    Changed,
    /// The server is stopping.
    Exit,
}

/// How often to announce: every `interval`, and after a status change once at least
/// `min_gap` has passed since the last announcement.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub struct Cadence {
    /// The regular interval (60 s).
    pub interval: Duration,
    /// The shortest gap after a status change (10 s).
    pub min_gap: Duration,
}

impl Cadence {
    /// Every `interval`, changes at most every `min_gap`.
    pub fn new(interval: Duration, min_gap: Duration) -> Self {
        Self { interval, min_gap }
    }
}

impl Default for Cadence {
    /// Every 60 s, changes at most every 10 s (GameSpy's cadence, ours for OGP).
    fn default() -> Self {
        Self::new(Duration::from_secs(60), Duration::from_secs(10))
    }
}

/// When to announce, on a [`Cadence`].
#[derive(Debug, Clone)]
pub struct Schedule {
    interval: Duration,
    min_gap: Duration,
    last: Option<Instant>,
    changed: bool,
}

impl Schedule {
    /// The usual cadence: every 60 s, changes at most every 10 s.
    pub fn new() -> Self {
        Self::with(Duration::from_secs(60), Duration::from_secs(10))
    }

    /// A custom cadence.
    pub fn with(interval: Duration, min_gap: Duration) -> Self {
        Self {
            interval,
            min_gap: min_gap.min(interval),
            last: None,
            changed: false,
        }
    }

    /// Notes that the status changed.
    pub fn status_changed(&mut self) {
        self.changed = true;
    }

    /// When the next announcement is due (`None`: at once, none was sent yet).
    pub fn next_due(&self) -> Option<Instant> {
        let last = self.last?;
        Some(if self.changed {
            last + self.min_gap
        } else {
            last + self.interval
        })
    }

    /// The announcement to send at `now`, if one is due, recorded as sent.
    pub fn poll(&mut self, now: Instant) -> Option<Occasion> {
        let occasion = match self.next_due() {
            None => Occasion::Start,
            Some(due) if now >= due => {
                if self.changed {
                    Occasion::Changed
                } else {
                    Occasion::Regular
                }
            }
            Some(_) => return None,
        };
        self.last = Some(now);
        self.changed = false;
        Some(occasion)
    }
}

impl Default for Schedule {
    fn default() -> Self {
        Self::new()
    }
}

/// What a protocol announces: the datagram for an occasion.
pub trait Announce: fmt::Debug {
    /// Appends the announcement of `status` from the listening address `local`.
    fn encode(&self, status: &Status, occasion: Occasion, local: SocketAddr, out: &mut Vec<u8>);
}

/// Most datagrams waiting to be sent (a few per master).
const MAX_QUEUED: usize = 256;

/// The announcements of one listening address to its masters: at start, every
/// `interval`, soon after a status change (looked at once a second at most), and a last
/// one on [`close`](Self::close). Masters of the other address family than the
/// listening address are skipped (an IPv4 socket cannot reach them).
#[derive(Debug, Clone)]
pub struct Announcer<A> {
    announce: A,
    masters: Vec<SocketAddr>,
    schedule: Schedule,
    min_gap: Duration,
    local: SocketAddr,
    last_status: Option<Status>,
    next_check: Instant,
    queue: VecDeque<(SocketAddr, Vec<u8>)>,
}

impl<A: Announce> Announcer<A> {
    /// Announcements of `announce` from `local` to `masters` on the given cadence, the
    /// first due at `now`.
    pub fn with(
        announce: A,
        masters: &[SocketAddr],
        cadence: Cadence,
        local: SocketAddr,
        now: Instant,
    ) -> Self {
        let masters = masters
            .iter()
            .copied()
            .filter(|m| m.is_ipv4() == local.is_ipv4())
            .collect();
        Self {
            announce,
            masters,
            schedule: Schedule::with(cadence.interval, cadence.min_gap),
            min_gap: cadence.min_gap,
            local,
            last_status: None,
            next_check: now,
            queue: VecDeque::new(),
        }
    }

    /// The listening address the announcements leave from.
    pub fn local(&self) -> SocketAddr {
        self.local
    }

    /// What is announced.
    pub fn announce(&self) -> &A {
        &self.announce
    }

    /// Whether any master is reachable from this address.
    pub fn has_masters(&self) -> bool {
        !self.masters.is_empty()
    }

    /// When [`handle_timeout`](Self::handle_timeout) is due.
    pub fn poll_timeout(&self) -> Instant {
        self.next_check
    }

    /// Notes a status change and queues an announcement when one is due.
    pub fn handle_timeout(&mut self, now: Instant, status: &Status) {
        if now < self.next_check {
            return;
        }
        match &self.last_status {
            Some(last) if last == status => {}
            Some(_) => {
                self.schedule.status_changed();
                self.last_status = Some(status.clone());
            }
            None => self.last_status = Some(status.clone()),
        }
        if let Some(occasion) = self.schedule.poll(now) {
            self.queue_announcement(status, occasion);
        }
        let check = Duration::from_secs(1).min(self.min_gap.max(Duration::from_millis(10)));
        let due = self
            .schedule
            .next_due()
            .map_or(now + check, |d| d.min(now + check));
        self.next_check = due.max(now + Duration::from_millis(5));
    }

    /// Queues the last announcement, for [`Occasion::Exit`].
    pub fn close(&mut self, status: &Status) {
        self.queue_announcement(status, Occasion::Exit);
    }

    /// The next datagram to send from [`local`](Self::local): the master's address and
    /// the announcement.
    pub fn poll_transmit(&mut self) -> Option<(SocketAddr, Vec<u8>)> {
        self.queue.pop_front()
    }

    fn queue_announcement(&mut self, status: &Status, occasion: Occasion) {
        let mut bytes = Vec::with_capacity(256);
        self.announce
            .encode(status, occasion, self.local, &mut bytes);
        for m in &self.masters {
            if self.queue.len() < MAX_QUEUED {
                self.queue.push_back((*m, bytes.clone()));
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[derive(Debug)]
    struct Tag;

    impl Announce for Tag {
        fn encode(&self, _: &Status, occasion: Occasion, _: SocketAddr, out: &mut Vec<u8>) {
            out.push(occasion as u8);
        }
    }

    #[test]
    fn schedule_sends_at_start_every_minute_and_after_changes() {
        let t0 = Instant::now();
        let mut s = Schedule::new();
        assert_eq!(s.poll(t0), Some(Occasion::Start));
        assert_eq!(s.poll(t0 + Duration::from_secs(59)), None);
        assert_eq!(
            s.poll(t0 + Duration::from_secs(60)),
            Some(Occasion::Regular)
        );
        s.status_changed();
        assert_eq!(s.poll(t0 + Duration::from_secs(65)), None);
        assert_eq!(
            s.next_due(),
            Some(t0 + Duration::from_secs(70)),
            "a change is sent 10 s after the last announcement"
        );
        assert_eq!(
            s.poll(t0 + Duration::from_secs(70)),
            Some(Occasion::Changed)
        );
        assert_eq!(s.next_due(), Some(t0 + Duration::from_secs(130)));
    }

    #[test]
    fn masters_of_the_other_family_are_skipped() {
        let t0 = Instant::now();
        let masters: Vec<SocketAddr> = vec![
            "127.0.0.1:27900".parse().unwrap(),
            "[::1]:27900".parse().unwrap(),
        ];
        let local4: SocketAddr = "127.0.0.1:1".parse().unwrap();
        let local6: SocketAddr = "[::1]:1".parse().unwrap();
        for (local, want) in [(local4, masters[0]), (local6, masters[1])] {
            let mut a = Announcer::with(Tag, &masters, Cadence::default(), local, t0);
            a.handle_timeout(t0, &Status::default());
            assert_eq!(a.poll_transmit(), Some((want, vec![Occasion::Start as u8])));
            assert_eq!(a.poll_transmit(), None);
            a.close(&Status::default());
            assert_eq!(a.poll_transmit(), Some((want, vec![Occasion::Exit as u8])));
        }
    }
}
