//! Which connections a server over TCP (the master's HTTP side) keeps: at most
//! [`ConnectionLimits::per_source`] at once from one source (an IPv4 address, or an IPv6
//! /64, as the rate limiters count), [`ConnectionLimits::per_prefix`] from one network
//! (IPv4 /24, IPv6 /48, as the registry's verifications count) and
//! [`ConnectionLimits::total`] in all.
//!
//! A new connection is always taken. When it finds a cap full (its source's, else its
//! prefix's, else the total), it **displaces** one connection of that group: one that
//! has gone longest without a request, by stage first:
//!
//! 1. idle connections: kept alive after an answer whose last bytes are written to the
//!    socket, with no byte of a next request since (they cost their client nothing to
//!    lose: HTTP lets a server close an idle connection at any time);
//! 2. connections whose answer is made but not all written yet: a client that reads
//!    slowly (a big listing on a slow link);
//! 3. connections that have not sent a whole request yet (new, sending slowly, or with
//!    part of their next request in);
//! 4. connections being answered.
//!
//! Within the first stage present in the group, the connection taken is one of the
//! network (prefix) holding the most connections, then of the source holding the most,
//! and the oldest among equals (the longest idle, the answer made first, the oldest
//! half-sent, the request that came first). So a flood of half-sent requests only ever
//! pushes out idle connections, slow readers and its own older half-sent requests: a
//! client that holds fewer connections than the flood's networks is not displaced while
//! it sends its request, and once its request is in it ranks behind every connection
//! still waiting for one. Only a flood from more networks than the total cap, each
//! holding as few connections as the client, races it, oldest first. Slow readers rank
//! before clients sending a request, not after: a slow reader costs its attacker one
//! request for a big page, so a flood of them ranked behind would race every client
//! while it sends its request. The caps bound what one source or one network holds and
//! what the server holds in all.
//!
//! Sans-IO: the caller accepts, asks [`Connections::admit`] (and closes the connection
//! it names as displaced), reports [`Connections::received`] when bytes come from the
//! client, [`Connections::request`] when a request's head is in,
//! [`Connections::answered`] when its answer is made (all of it handed to the writer),
//! [`Connections::flushed`] whenever everything handed to the writer is written to the
//! socket, and [`Connections::release`] when a connection ends. Order is by a counter
//! of these events, not by a clock. The table holds one entry per open connection and
//! one per source and prefix with a connection open: never more than `total` of each.
//!
//! ## Answer bytes
//!
//! An answer made whole in memory is held until its client has read it. The table
//! keeps a process-wide budget of such bytes ([`ConnectionLimits::answer_bytes`]): the
//! answerer asks [`Connections::reserve`] before it makes a big answer (and
//! [`Connections::resize`] once it knows its size); the bytes are given back when the
//! connection reports its answer written ([`Connections::flushed`]) or ends. An answer
//! of at most [`SMALL_ANSWER`] bytes always passes. One that does not fit takes the
//! bytes of the slow readers first (connections whose answers are made and not all
//! written, the answer made first lost first; [`Reservation::displaced`] names them, to
//! close), and is refused when answers still being made hold the rest.
//!
//! A reserved answer must also be written at a minimum rate: within
//! max([`ConnectionLimits::answer_time`], its size / [`ConnectionLimits::answer_rate`])
//! of its reservation, else [`Connections::overdue`] names its connection, to close. So
//! a client that reads a little now and then cannot keep its answer for long.

use std::cmp::Reverse;
use std::collections::{BTreeSet, HashMap};
use std::net::IpAddr;
use std::time::{Duration, Instant};

use crate::guard::source_key;
use crate::master::registry::prefix_of;

/// The caps of [`Connections`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub struct ConnectionLimits {
    /// Connections open at once from one source (IPv4 address, IPv6 /64); at least 1.
    pub per_source: usize,
    /// Connections open at once from one prefix (IPv4 /24, IPv6 /48); at least 1.
    pub per_prefix: usize,
    /// Connections open at once in all; at least 1.
    pub total: usize,
    /// Bytes of answers reserved and not yet written, in all (answers of at most
    /// [`SMALL_ANSWER`] bytes pass even when it is spent).
    pub answer_bytes: usize,
    /// The least time a reserved answer has to be written.
    pub answer_time: Duration,
    /// The least rate, in bytes a second, at which a reserved answer must be written
    /// (after [`ConnectionLimits::answer_time`]); at least 1.
    pub answer_rate: u64,
}

/// An answer of at most this many bytes always gets its reservation.
pub const SMALL_ANSWER: usize = 64 * 1024;

impl ConnectionLimits {
    /// Caps of `per_source` connections per source, `per_prefix` per prefix and `total`
    /// in all (0 is taken as 1).
    pub fn new(per_source: usize, per_prefix: usize, total: usize) -> Self {
        Self {
            per_source: per_source.max(1),
            per_prefix: per_prefix.max(1),
            total: total.max(1),
            answer_bytes: 64 << 20,
            answer_time: Duration::from_secs(30),
            answer_rate: 32 * 1024,
        }
    }

    /// With a budget of `bytes` of answers reserved and not yet written.
    pub fn with_answer_bytes(mut self, bytes: usize) -> Self {
        self.answer_bytes = bytes;
        self
    }

    /// A reserved answer must be written within max(`time`, its size / `rate` bytes a
    /// second) (a `rate` of 0 is taken as 1).
    pub fn with_answer_rate(mut self, time: Duration, rate: u64) -> Self {
        self.answer_time = time;
        self.answer_rate = rate.max(1);
        self
    }

    /// How long an answer of `bytes` may take to be written.
    pub fn answer_deadline(&self, bytes: usize) -> Duration {
        let bytes = u64::try_from(bytes).unwrap_or(u64::MAX);
        let secs = bytes / self.answer_rate.max(1);
        let rest = bytes % self.answer_rate.max(1);
        let nanos = rest.saturating_mul(1_000_000_000) / self.answer_rate.max(1);
        let by_rate = Duration::from_secs(secs).saturating_add(Duration::from_nanos(nanos));
        self.answer_time.max(by_rate)
    }
}

/// What [`Connections::reserve`] did.
#[derive(Debug, Clone, PartialEq, Eq)]
#[must_use = "displaced connections must be closed, and a refusal answered"]
pub struct Reservation {
    /// Whether the bytes are reserved: `false` when answers still being made hold too
    /// much of the budget (answer 503, to be tried again).
    pub granted: bool,
    /// Slow readers whose answers' bytes were taken: close them now.
    pub displaced: Vec<ConnectionId>,
}

/// The cap a new connection found full.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum Cap {
    /// Its source held [`ConnectionLimits::per_source`] connections.
    Source,
    /// Its prefix held [`ConnectionLimits::per_prefix`] connections.
    Prefix,
    /// [`ConnectionLimits::total`] connections were open.
    Total,
}

impl Cap {
    /// A short name for logs and metrics labels (`source`, `prefix`, `total`).
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Source => "source",
            Self::Prefix => "prefix",
            Self::Total => "total",
        }
    }
}

impl std::fmt::Display for Cap {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Self::Source => f.write_str("connections per source address"),
            Self::Prefix => f.write_str("connections per network prefix"),
            Self::Total => f.write_str("connections in all"),
        }
    }
}

/// One connection of the table; ids are never reused, so a call about a connection
/// that was displaced does nothing.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct ConnectionId(u64);

/// What [`Connections::admit`] did.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[must_use = "a displaced connection must be closed"]
pub struct Admission {
    /// The new connection; give it to [`Connections::release`] when it ends.
    pub id: ConnectionId,
    /// The connection it displaced, to close now, and the cap that was full.
    pub displaced: Option<(ConnectionId, Cap)>,
}

/// Where a connection stands, in the order connections are displaced.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
enum Stage {
    /// Answered, everything written, kept alive, idle since (or held on purpose).
    Idle,
    /// The answer is made, and not all written yet: the client reads slowly.
    Sending,
    /// No whole request yet.
    Waiting,
    /// A request is being answered.
    Answering,
}

/// What a connection is doing, as the events tell it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Phase {
    /// No whole request yet.
    Reading,
    /// A request is being answered; whether bytes came from the client since its head
    /// (its body, or the start of a next request).
    Answering { input: bool },
    /// The answer is made, not all written; whether bytes came from the client since
    /// its request's head.
    Sending { input: bool },
    /// Everything written, nothing of a next request.
    Idle,
    /// Held on purpose by its answerer, ranked with idle ones until it is answered.
    Held,
}

impl Phase {
    fn stage(self) -> Stage {
        match self {
            Self::Reading => Stage::Waiting,
            Self::Answering { .. } => Stage::Answering,
            Self::Sending { .. } => Stage::Sending,
            Self::Idle | Self::Held => Stage::Idle,
        }
    }
}

/// The order of displacement: stage, then the event counter when it entered it.
type Rank = (Stage, u64, ConnectionId);

/// A source's key: its family and IPv4 address or IPv6 /64.
type SourceKey = (u8, u64);

/// How a holder of connections (a prefix, or a source within its prefix) ranks for
/// losing one: the first stage it holds (the earliest first), then how many it holds
/// (the most first), then how old its first connection of that stage is (the oldest
/// first). The greatest loses first.
type Holder<K> = (Reverse<Stage>, usize, Reverse<u64>, K);

fn holder<K>(ranks: &BTreeSet<Rank>, key: K) -> Option<Holder<K>> {
    ranks
        .first()
        .map(|r| (Reverse(r.0), ranks.len(), Reverse(r.1), key))
}

#[derive(Debug, Clone)]
struct Conn {
    source: SourceKey,
    prefix: IpAddr,
    phase: Phase,
    rank: Rank,
    /// Answer bytes reserved and not yet written, and since when (the reservation's
    /// event counter, and its deadline).
    held: Option<Held>,
}

#[derive(Debug, Clone, Copy)]
struct Held {
    bytes: usize,
    since: u64,
    deadline: Instant,
}

#[derive(Debug, Clone, Default)]
struct Prefix {
    ranks: BTreeSet<Rank>,
    /// Its sources as holders.
    sources: BTreeSet<Holder<SourceKey>>,
}

/// The open connections, ranked within their source and their prefix, and the prefixes
/// and sources ranked as holders.
#[derive(Debug, Clone)]
pub struct Connections {
    limits: ConnectionLimits,
    /// Event counter: the order of admissions, requests and answers.
    tick: u64,
    conns: HashMap<ConnectionId, Conn>,
    by_source: HashMap<SourceKey, BTreeSet<Rank>>,
    by_prefix: HashMap<IpAddr, Prefix>,
    /// The prefixes as holders.
    prefixes: BTreeSet<Holder<IpAddr>>,
    /// Answer bytes reserved and not yet written, in all.
    held: usize,
    /// The connections holding answer bytes, by reservation.
    holders: BTreeSet<(u64, ConnectionId)>,
    /// The same, by deadline.
    deadlines: BTreeSet<(Instant, ConnectionId)>,
}

impl Connections {
    /// No connection open yet.
    pub fn new(limits: ConnectionLimits) -> Self {
        Self {
            limits,
            tick: 0,
            conns: HashMap::new(),
            by_source: HashMap::new(),
            by_prefix: HashMap::new(),
            prefixes: BTreeSet::new(),
            held: 0,
            holders: BTreeSet::new(),
            deadlines: BTreeSet::new(),
        }
    }

    /// The caps.
    pub fn limits(&self) -> ConnectionLimits {
        self.limits
    }

    fn next(&mut self) -> u64 {
        self.tick = self.tick.wrapping_add(1);
        self.tick
    }

    /// Takes a new connection from `ip`; when a cap is full, the connection of that group
    /// to lose first (see the module docs) is dropped from the table and named in
    /// [`Admission::displaced`]: close it.
    pub fn admit(&mut self, ip: IpAddr) -> Admission {
        let source = source_key(ip);
        let prefix = prefix_of(ip);
        let displaced = if self
            .by_source
            .get(&source)
            .is_some_and(|s| s.len() >= self.limits.per_source)
        {
            self.first_of_source(source).map(|id| (id, Cap::Source))
        } else if self
            .by_prefix
            .get(&prefix)
            .is_some_and(|p| p.ranks.len() >= self.limits.per_prefix)
        {
            self.first_of_prefix(prefix).map(|id| (id, Cap::Prefix))
        } else if self.conns.len() >= self.limits.total {
            let p = self.prefixes.last().map(|h| h.3);
            p.and_then(|p| self.first_of_prefix(p))
                .map(|id| (id, Cap::Total))
        } else {
            None
        };
        if let Some((victim, _)) = displaced {
            self.remove(victim);
        }
        let n = self.next();
        let id = ConnectionId(n);
        let c = Conn {
            source,
            prefix,
            phase: Phase::Reading,
            rank: (Stage::Waiting, n, id),
            held: None,
        };
        self.insert(c);
        Admission { id, displaced }
    }

    fn first_of_source(&self, source: SourceKey) -> Option<ConnectionId> {
        self.by_source.get(&source)?.first().map(|r| r.2)
    }

    fn first_of_prefix(&self, prefix: IpAddr) -> Option<ConnectionId> {
        let source = self.by_prefix.get(&prefix)?.sources.last()?.3;
        self.first_of_source(source)
    }

    /// Takes the holder keys of `source` and `prefix` out of the indexes, before their
    /// connections change.
    fn unindex(&mut self, source: SourceKey, prefix: IpAddr) {
        let Some(p) = self.by_prefix.get_mut(&prefix) else {
            return;
        };
        if let Some(h) = holder(&p.ranks, prefix) {
            self.prefixes.remove(&h);
        }
        if let Some(h) = self.by_source.get(&source).and_then(|r| holder(r, source)) {
            p.sources.remove(&h);
        }
    }

    /// Puts the holder keys of `source` and `prefix` back after their connections
    /// changed, and forgets them when they hold none.
    fn reindex(&mut self, source: SourceKey, prefix: IpAddr) {
        let s = self.by_source.get(&source).and_then(|r| holder(r, source));
        if s.is_none() {
            self.by_source.remove(&source);
        }
        let Some(p) = self.by_prefix.get_mut(&prefix) else {
            return;
        };
        if let Some(h) = s {
            p.sources.insert(h);
        }
        match holder(&p.ranks, prefix) {
            Some(h) => {
                self.prefixes.insert(h);
            }
            None => {
                self.by_prefix.remove(&prefix);
            }
        }
    }

    fn insert(&mut self, c: Conn) {
        self.unindex(c.source, c.prefix);
        self.by_source.entry(c.source).or_default().insert(c.rank);
        self.by_prefix
            .entry(c.prefix)
            .or_default()
            .ranks
            .insert(c.rank);
        self.reindex(c.source, c.prefix);
        self.conns.insert(c.rank.2, c);
    }

    /// Drops `id` from the table, giving back its answer bytes.
    fn remove(&mut self, id: ConnectionId) -> Option<Conn> {
        self.give_back(id);
        self.take(id)
    }

    /// Takes `id` out of the table and its indexes (its answer bytes stay counted).
    fn take(&mut self, id: ConnectionId) -> Option<Conn> {
        let c = self.conns.remove(&id)?;
        self.unindex(c.source, c.prefix);
        if let Some(s) = self.by_source.get_mut(&c.source) {
            s.remove(&c.rank);
        }
        if let Some(p) = self.by_prefix.get_mut(&c.prefix) {
            p.ranks.remove(&c.rank);
        }
        self.reindex(c.source, c.prefix);
        Some(c)
    }

    /// Moves `id` to the phase `to` gives for its phase (`None`: stays); a change of
    /// stage ranks it as entering its new stage now.
    fn step(&mut self, id: ConnectionId, to: impl FnOnce(Phase) -> Option<Phase>) {
        let Some(c) = self.conns.get_mut(&id) else {
            return;
        };
        let Some(phase) = to(c.phase) else {
            return;
        };
        if phase.stage() == c.phase.stage() {
            c.phase = phase;
            return;
        }
        let n = self.next();
        if let Some(mut c) = self.take(id) {
            c.phase = phase;
            c.rank = (phase.stage(), n, id);
            self.insert(c);
        }
    }

    /// Bytes came in on `id` from its client. On an idle connection they are the start
    /// of its next request: it is no longer idle, and ranks with the connections that
    /// have not sent a whole request. While a request is answered or its answer written,
    /// they are noted (the request's body, or the start of a next one: after the answer
    /// the connection is not idle). Cheap when nothing changes: call it on every read.
    pub fn received(&mut self, id: ConnectionId) {
        self.step(id, |p| match p {
            Phase::Idle => Some(Phase::Reading),
            Phase::Answering { input: false } => Some(Phase::Answering { input: true }),
            Phase::Sending { input: false } => Some(Phase::Sending { input: true }),
            _ => None,
        });
    }

    /// A whole request head came in on `id`: it is being answered, and is displaced
    /// only after every connection that is not.
    pub fn request(&mut self, id: ConnectionId) {
        self.step(id, |_| Some(Phase::Answering { input: false }));
    }

    /// The answer on `id` is made: all of it is handed to the writer. Until the writer
    /// has written it ([`Connections::flushed`]), the connection ranks with slow
    /// readers.
    pub fn answered(&mut self, id: ConnectionId) {
        self.step(id, |p| match p {
            Phase::Answering { input } => Some(Phase::Sending { input }),
            Phase::Held => Some(Phase::Sending { input: false }),
            _ => None,
        });
    }

    /// Everything handed to the writer on `id` is written to the socket. After its
    /// answer was made, the connection is idle, first in line to be displaced; or, when
    /// bytes of a next request came meanwhile, waiting for the rest of it. Nothing
    /// otherwise: call it on every flush.
    pub fn flushed(&mut self, id: ConnectionId) {
        if self
            .conns
            .get(&id)
            .is_some_and(|c| matches!(c.phase, Phase::Sending { .. }))
        {
            self.give_back(id);
        }
        self.step(id, |p| match p {
            Phase::Sending { input: false } => Some(Phase::Idle),
            Phase::Sending { input: true } => Some(Phase::Reading),
            _ => None,
        });
    }

    /// Takes `c`'s answer bytes out of the budget and the indexes.
    fn give_back(&mut self, id: ConnectionId) -> Option<Held> {
        let h = self.conns.get_mut(&id)?.held.take()?;
        self.held = self.held.saturating_sub(h.bytes);
        self.holders.remove(&(h.since, id));
        self.deadlines.remove(&(h.deadline, id));
        Some(h)
    }

    /// Reserves `bytes` of answer for the request `id` is answering (added to what it
    /// holds already), due to be written within [`ConnectionLimits::answer_deadline`]
    /// from `now`. An answer of at most [`SMALL_ANSWER`] bytes always passes; a bigger
    /// one that does not fit displaces slow readers, the answer made first first, and
    /// is refused when what is left is held by answers still being made. A connection
    /// that is not answering a request gets nothing.
    pub fn reserve(&mut self, id: ConnectionId, bytes: usize, now: Instant) -> Reservation {
        let mut displaced = Vec::new();
        let answering = self
            .conns
            .get(&id)
            .is_some_and(|c| matches!(c.phase, Phase::Answering { .. } | Phase::Held));
        if !answering {
            return Reservation {
                granted: false,
                displaced,
            };
        }
        let budget = self.limits.answer_bytes;
        let fits = |held: usize| {
            bytes <= SMALL_ANSWER || held.checked_add(bytes).is_some_and(|t| t <= budget)
        };
        while !fits(self.held) {
            let victim = self.holders.iter().map(|h| h.1).find(|v| {
                self.conns
                    .get(v)
                    .is_some_and(|c| c.phase.stage() == Stage::Sending)
            });
            let Some(v) = victim else {
                return Reservation {
                    granted: false,
                    displaced,
                };
            };
            self.remove(v);
            displaced.push(v);
        }
        let n = self.next();
        let total = self
            .give_back(id)
            .map_or(0, |h| h.bytes)
            .saturating_add(bytes);
        self.hold_bytes(id, total, n, now);
        Reservation {
            granted: true,
            displaced,
        }
    }

    /// Records that `id` holds `bytes` of answer since the event `since`.
    fn hold_bytes(&mut self, id: ConnectionId, bytes: usize, since: u64, now: Instant) {
        let deadline = now + self.limits.answer_deadline(bytes);
        let Some(c) = self.conns.get_mut(&id) else {
            return;
        };
        c.held = Some(Held {
            bytes,
            since,
            deadline,
        });
        self.held = self.held.saturating_add(bytes);
        self.holders.insert((since, id));
        self.deadlines.insert((deadline, id));
    }

    /// Sets the bytes `id` holds to `bytes`, once its answer's size is known (from the
    /// estimate it reserved); its deadline counts from `now`. Nothing when it holds
    /// none.
    pub fn resize(&mut self, id: ConnectionId, bytes: usize, now: Instant) {
        if let Some(h) = self.give_back(id) {
            self.hold_bytes(id, bytes, h.since, now);
        }
    }

    /// Bytes of answers reserved and not yet written, in all.
    pub fn answer_bytes(&self) -> usize {
        self.held
    }

    /// The first connection whose reserved answer is not written by its deadline at
    /// `now`, dropped from the table: close it. Call it until `None`.
    pub fn overdue(&mut self, now: Instant) -> Option<ConnectionId> {
        let &(deadline, id) = self.deadlines.first()?;
        if deadline > now {
            return None;
        }
        self.remove(id);
        // a stale entry (should not be) goes too
        self.deadlines.remove(&(deadline, id));
        Some(id)
    }

    /// The answerer of `id` holds it on purpose (a refusal delayed on purpose): it ranks
    /// with idle connections, whatever the client sends, until its answer is made.
    pub fn hold(&mut self, id: ConnectionId) {
        self.step(id, |p| match p {
            Phase::Answering { .. } => Some(Phase::Held),
            _ => None,
        });
    }

    /// Ends a connection (nothing if it was displaced already).
    pub fn release(&mut self, id: ConnectionId) {
        let _ = self.remove(id);
    }

    /// Whether `id` is still in the table (not released, not displaced).
    pub fn is_open(&self, id: ConnectionId) -> bool {
        self.conns.contains_key(&id)
    }

    /// Connections open now.
    pub fn open(&self) -> usize {
        self.conns.len()
    }

    /// Sources with a connection open now.
    pub fn sources(&self) -> usize {
        self.by_source.len()
    }

    /// Prefixes with a connection open now.
    pub fn prefixes(&self) -> usize {
        self.by_prefix.len()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ip(s: &str) -> IpAddr {
        s.parse().unwrap()
    }

    fn admit(c: &mut Connections, s: &str) -> ConnectionId {
        c.admit(ip(s)).id
    }

    #[test]
    fn within_the_caps_nothing_is_displaced() {
        let mut c = Connections::new(ConnectionLimits::new(3, 5, 8));
        for s in ["10.0.0.1", "10.0.0.1", "10.0.0.2", "10.0.1.1", "10.0.2.1"] {
            assert_eq!(c.admit(ip(s)).displaced, None);
        }
        assert_eq!((c.open(), c.sources(), c.prefixes()), (5, 4, 3));
    }

    #[test]
    fn a_source_over_its_cap_displaces_its_own_oldest_half_sent_connection() {
        let mut c = Connections::new(ConnectionLimits::new(3, 100, 100));
        let a: Vec<_> = (0..3).map(|_| admit(&mut c, "127.0.0.2")).collect();
        let other = admit(&mut c, "127.0.0.1");
        let d = c.admit(ip("127.0.0.2"));
        assert_eq!(d.displaced, Some((a[0], Cap::Source)));
        assert!(!c.is_open(a[0]) && c.is_open(other));
        // a call about the displaced connection does nothing
        c.request(a[0]);
        c.release(a[0]);
        assert_eq!(c.open(), 4);
        // a client of that address with a whole request outlasts its half-sent ones
        c.request(d.id);
        for _ in 0..10 {
            let x = c.admit(ip("127.0.0.2"));
            assert_ne!(x.displaced.map(|d| d.0), Some(d.id));
        }
        assert!(c.is_open(d.id));
    }

    /// What `n` newcomers from networks of their own displace, in turn; each asks at
    /// once, so they rank behind every connection without a whole request.
    fn displaced_by_newcomers(c: &mut Connections, n: u8) -> Vec<Option<ConnectionId>> {
        (0..n)
            .map(|i| {
                let d = c.admit(IpAddr::from([10, 9, i, 1]));
                c.request(d.id);
                d.displaced.map(|x| x.0)
            })
            .collect()
    }

    #[test]
    fn idle_kept_alive_connections_go_first_then_half_sent_then_answering() {
        let mut c = Connections::new(ConnectionLimits::new(10, 10, 4));
        let answering = admit(&mut c, "10.0.0.1");
        let half_old = admit(&mut c, "10.0.1.1");
        let half_new = admit(&mut c, "10.0.2.1");
        let idle = admit(&mut c, "10.0.3.1");
        c.request(answering);
        c.request(idle);
        c.answered(idle);
        c.flushed(idle);
        assert_eq!(
            displaced_by_newcomers(&mut c, 4),
            vec![Some(idle), Some(half_old), Some(half_new), Some(answering)]
        );
    }

    /// The stage of `id` as the table ranks it.
    fn stage(c: &Connections, id: ConnectionId) -> Option<Stage> {
        c.conns.get(&id).map(|x| x.rank.0)
    }

    #[test]
    fn idle_means_everything_written_and_nothing_of_a_next_request() {
        let mut c = Connections::new(ConnectionLimits::new(10, 10, 10));
        let a = admit(&mut c, "10.0.0.1");
        assert_eq!(stage(&c, a), Some(Stage::Waiting));
        use Stage::{Answering, Idle, Sending, Waiting};
        type Event = fn(&mut Connections, ConnectionId);
        let (rx, req, ans, fl, hold): (Event, Event, Event, Event, Event) = (
            Connections::received,
            Connections::request,
            Connections::answered,
            Connections::flushed,
            Connections::hold,
        );
        let script: &[(&str, &[Event], Stage)] = &[
            ("bytes of a first request", &[rx], Waiting),
            // a flush after the head of a streamed answer is not its end
            ("its head, a flush", &[req, fl], Answering),
            ("answer made, not written: a slow reader", &[ans], Sending),
            ("written", &[fl, fl], Idle),
            ("the first byte of the next request", &[rx], Waiting),
            (
                "bytes while the answer is written",
                &[req, ans, rx],
                Sending,
            ),
            ("then written: not idle", &[fl], Waiting),
            (
                "bytes after the head (a body or more)",
                &[req, rx, ans, fl],
                Waiting,
            ),
            (
                "a pipelined request parsed first",
                &[req, ans, req, fl],
                Answering,
            ),
            ("held on purpose, whatever comes", &[hold, rx, fl], Idle),
            ("then answered", &[ans], Sending),
            ("and written", &[fl], Idle),
        ];
        for (what, events, expected) in script {
            for e in *events {
                e(&mut c, a);
            }
            assert_eq!(stage(&c, a), Some(*expected), "{what}");
        }
        // a connection with nothing asked cannot be held or answered
        let b = admit(&mut c, "10.0.0.2");
        c.hold(b);
        c.answered(b);
        c.flushed(b);
        assert_eq!(stage(&c, b), Some(Stage::Waiting));
    }

    #[test]
    fn a_slow_reader_goes_after_idle_connections_and_before_half_sent_requests() {
        let mut c = Connections::new(ConnectionLimits::new(10, 10, 4));
        // the slow reader's answer was made first
        let slow = admit(&mut c, "10.0.0.1");
        c.request(slow);
        c.answered(slow);
        let idle = admit(&mut c, "10.0.1.1");
        c.request(idle);
        c.answered(idle);
        c.flushed(idle);
        // half of a second request: not idle
        let next = admit(&mut c, "10.0.2.1");
        c.request(next);
        c.answered(next);
        c.flushed(next);
        c.received(next);
        let answering = admit(&mut c, "10.0.3.1");
        c.request(answering);
        assert_eq!(
            displaced_by_newcomers(&mut c, 4),
            vec![Some(idle), Some(slow), Some(next), Some(answering)]
        );
    }

    /// 20,000 slow readers from 20,000 sources in 256 networks (each asks at once for a
    /// big page and reads nothing): a client that has not sent its whole request yet is
    /// never displaced for them, and the table holds its caps.
    #[test]
    fn a_flood_of_slow_readers_does_not_race_a_client_sending_its_request() {
        let mut c = Connections::new(ConnectionLimits::new(32, 128, 512));
        let client = admit(&mut c, "192.0.2.1");
        for i in 0..20_000u32 {
            let d = c.admit(IpAddr::from((i % 65_536 + (10 << 24)).to_be_bytes()));
            assert_ne!(d.displaced.map(|x| x.0), Some(client), "at {i}");
            c.request(d.id);
            c.answered(d.id);
            assert!(c.open() <= 512);
        }
        assert!(c.is_open(client));
        assert!(c.sources() <= 512 && c.prefixes() <= 512);
    }

    #[test]
    fn the_networks_holding_most_lose_first_so_a_slow_client_is_not_raced() {
        let mut c = Connections::new(ConnectionLimits::new(32, 128, 64));
        // a client that has not sent its request yet
        let client = admit(&mut c, "192.0.2.1");
        // 10,000 half-sent connections from 100 addresses in 10 /24s
        for i in 0..10_000u32 {
            let a = IpAddr::from([10, (i % 10) as u8, 0, (i % 100) as u8]);
            let d = c.admit(a);
            assert_ne!(d.displaced.map(|x| x.0), Some(client), "at {i}");
        }
        assert!(c.is_open(client));
        assert_eq!(c.open(), 64);
        // each of the 10 networks holds its share, 6 or 7, and no more
        assert_eq!(c.prefixes(), 11);
        // within a network, the source holding most loses first
        let mut c = Connections::new(ConnectionLimits::new(32, 4, 100));
        let light = admit(&mut c, "198.51.100.1");
        let heavy: Vec<_> = (0..3).map(|_| admit(&mut c, "198.51.100.2")).collect();
        let d = c.admit(ip("198.51.100.3"));
        assert_eq!(d.displaced, Some((heavy[0], Cap::Prefix)));
        assert!(c.is_open(light));
    }

    #[test]
    fn a_prefix_over_its_cap_displaces_within_the_prefix() {
        let mut c = Connections::new(ConnectionLimits::new(2, 4, 100));
        let outside = admit(&mut c, "192.0.2.1");
        let inside: Vec<_> = (1..=4u8)
            .map(|i| admit(&mut c, &format!("198.51.100.{i}")))
            .collect();
        let d = c.admit(ip("198.51.100.200"));
        assert_eq!(d.displaced, Some((inside[0], Cap::Prefix)));
        assert!(c.is_open(outside));
        assert_eq!(c.open(), 5);
    }

    #[test]
    fn ipv6_sources_are_64s_and_prefixes_48s_and_mapped_ipv4_is_ipv4() {
        let mut c = Connections::new(ConnectionLimits::new(1, 2, 100));
        let a = admit(&mut c, "2001:db8::1");
        assert_eq!(c.admit(ip("2001:db8::2")).displaced, Some((a, Cap::Source)));
        let _b = admit(&mut c, "2001:db8:0:1::1");
        let d = c.admit(ip("2001:db8:0:2::1"));
        assert_eq!(d.displaced.map(|x| x.1), Some(Cap::Prefix));
        let v4 = admit(&mut c, "192.0.2.1");
        assert_eq!(
            c.admit(ip("::ffff:192.0.2.1")).displaced,
            Some((v4, Cap::Source))
        );
    }

    /// The holder a group loses first, computed from the connections alone.
    fn brute_first<K: Ord + Copy>(
        conns: &[&Conn],
        key: impl Fn(&Conn) -> K,
    ) -> Option<(K, Vec<Rank>)> {
        let mut by: std::collections::BTreeMap<K, BTreeSet<Rank>> = Default::default();
        for c in conns {
            by.entry(key(c)).or_default().insert(c.rank);
        }
        by.into_iter()
            .max_by_key(|(k, r)| holder(r, *k))
            .map(|(k, r)| (k, r.into_iter().collect()))
    }

    /// Random admissions, requests, answers and releases from a few networks: every
    /// displacement is the one the rule picks when recomputed from scratch, and the
    /// indexes hold exactly the open connections.
    #[test]
    fn the_indexes_agree_with_the_rule_recomputed_from_scratch() {
        let mut c = Connections::new(ConnectionLimits::new(4, 9, 20));
        let mut open: Vec<ConnectionId> = Vec::new();
        let mut x = 0x2545_f491_4f6c_dd1du64;
        let mut rnd = |n: u64| {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            x % n
        };
        for step in 0..20_000 {
            match rnd(10) {
                0..=4 => {
                    let ip = IpAddr::from([10, rnd(4) as u8, 0, rnd(6) as u8]);
                    let (source, prefix) = (source_key(ip), prefix_of(ip));
                    let all: Vec<&Conn> = c.conns.values().collect();
                    let in_source: Vec<&Conn> =
                        all.iter().copied().filter(|x| x.source == source).collect();
                    let in_prefix: Vec<&Conn> =
                        all.iter().copied().filter(|x| x.prefix == prefix).collect();
                    let expected = if in_source.len() >= 4 {
                        in_source
                            .iter()
                            .map(|x| x.rank)
                            .min()
                            .map(|r| (r.2, Cap::Source))
                    } else if in_prefix.len() >= 9 {
                        brute_first(&in_prefix, |x| x.source).map(|(_, r)| (r[0].2, Cap::Prefix))
                    } else if all.len() >= 20 {
                        let (p, _) = brute_first(&all, |x| x.prefix).unwrap();
                        let in_p: Vec<&Conn> =
                            all.iter().copied().filter(|x| x.prefix == p).collect();
                        brute_first(&in_p, |x| x.source).map(|(_, r)| (r[0].2, Cap::Total))
                    } else {
                        None
                    };
                    let a = c.admit(ip);
                    assert_eq!(a.displaced, expected, "step {step}");
                    open.push(a.id);
                }
                5 | 6 => {
                    if let Some(&id) = open.get(rnd(open.len().max(1) as u64) as usize) {
                        c.request(id);
                    }
                }
                7 | 8 => {
                    if let Some(&id) = open.get(rnd(open.len().max(1) as u64) as usize) {
                        match rnd(5) {
                            0 => c.answered(id),
                            1 => c.flushed(id),
                            2 => c.received(id),
                            3 => c.hold(id),
                            4 if step % 3 == 0 => {
                                let bytes = (rnd(4) as usize) << 18;
                                let r = c.reserve(id, bytes, Instant::now());
                                for v in r.displaced {
                                    assert!(!c.is_open(v));
                                }
                            }
                            _ => {
                                c.answered(id);
                                c.flushed(id);
                            }
                        }
                    }
                }
                _ => {
                    if !open.is_empty() {
                        let id = open.swap_remove(rnd(open.len() as u64) as usize);
                        c.release(id);
                    }
                }
            }
            open.retain(|id| c.is_open(*id));
            assert_eq!(c.open(), open.len());
            let ranks: usize = c.by_source.values().map(BTreeSet::len).sum();
            let pranks: usize = c.by_prefix.values().map(|p| p.ranks.len()).sum();
            let holders: usize = c.by_prefix.values().map(|p| p.sources.len()).sum();
            assert_eq!((ranks, pranks), (open.len(), open.len()));
            assert_eq!(
                (holders, c.prefixes.len()),
                (c.by_source.len(), c.by_prefix.len())
            );
            let held: Vec<Held> = c.conns.values().filter_map(|x| x.held).collect();
            assert_eq!(
                c.answer_bytes(),
                held.iter().map(|h| h.bytes).sum::<usize>()
            );
            assert_eq!(
                (c.holders.len(), c.deadlines.len()),
                (held.len(), held.len())
            );
        }
    }

    const MIB: usize = 1 << 20;

    /// A table with a budget of 4 MiB of answers, and `n` connections from networks of
    /// their own, each with a request in.
    fn answering(n: u8) -> (Connections, Vec<ConnectionId>) {
        let limits = ConnectionLimits::new(10, 10, 100).with_answer_bytes(4 * MIB);
        let mut c = Connections::new(limits);
        let ids = (0..n)
            .map(|i| {
                let id = admit(&mut c, &format!("10.0.{i}.1"));
                c.request(id);
                id
            })
            .collect();
        (c, ids)
    }

    #[test]
    fn answers_share_a_budget_given_back_when_written_or_closed() {
        let (mut c, ids) = answering(8);
        let now = Instant::now();
        for &id in &ids[..4] {
            assert_eq!(
                c.reserve(id, MIB, now),
                Reservation {
                    granted: true,
                    displaced: vec![]
                }
            );
        }
        assert_eq!(c.answer_bytes(), 4 * MIB);
        // the four are still being made: nothing to take, the fifth is refused
        let r = c.reserve(ids[4], MIB, now);
        assert!(!r.granted && r.displaced.is_empty());
        // small answers always pass
        assert!(c.reserve(ids[5], SMALL_ANSWER, now).granted);
        assert_eq!(c.answer_bytes(), 4 * MIB + SMALL_ANSWER);
        // an answer written gives its bytes back; a connection closed too
        c.answered(ids[0]);
        c.flushed(ids[0]);
        c.release(ids[1]);
        assert_eq!(c.answer_bytes(), 2 * MIB + SMALL_ANSWER);
        // a flush before the answer is made (after its head) gives nothing back
        c.flushed(ids[2]);
        assert_eq!(c.answer_bytes(), 2 * MIB + SMALL_ANSWER);
        // a connection that asked nothing gets nothing
        let idle = ids[0];
        assert!(!c.reserve(idle, 10, now).granted);
        // the estimate, then the size made
        assert!(c.reserve(ids[4], MIB, now).granted);
        c.resize(ids[4], 100, now);
        assert_eq!(c.answer_bytes(), MIB + SMALL_ANSWER + 100 + MIB);
    }

    #[test]
    fn a_big_answer_that_does_not_fit_takes_the_bytes_of_the_oldest_slow_readers() {
        let (mut c, ids) = answering(8);
        let now = Instant::now();
        for &id in &ids[..4] {
            assert!(c.reserve(id, MIB, now).granted);
        }
        // three answers made, not written: slow readers; the fourth is still being made
        for &id in &ids[..3] {
            c.answered(id);
        }
        let r = c.reserve(ids[4], 2 * MIB, now);
        assert_eq!(
            r,
            Reservation {
                granted: true,
                displaced: vec![ids[0], ids[1]]
            }
        );
        assert!(!c.is_open(ids[0]) && !c.is_open(ids[1]) && c.is_open(ids[2]));
        assert_eq!(c.answer_bytes(), 4 * MIB);
        // more than the slow readers hold: they go, and it is refused all the same
        let r = c.reserve(ids[5], 3 * MIB, now);
        assert_eq!(
            r,
            Reservation {
                granted: false,
                displaced: vec![ids[2]]
            }
        );
        assert_eq!(c.answer_bytes(), 3 * MIB);
        // more than the whole budget is never granted
        c.release(ids[3]);
        c.release(ids[4]);
        assert!(!c.reserve(ids[6], 4 * MIB + 1, now).granted);
        assert_eq!(c.answer_bytes(), 0);
    }

    #[test]
    fn an_answer_not_written_at_the_minimum_rate_is_overdue() {
        let limits =
            ConnectionLimits::new(10, 10, 100).with_answer_rate(Duration::from_secs(2), 32 * 1024);
        assert_eq!(limits.answer_deadline(1000), Duration::from_secs(2));
        assert_eq!(limits.answer_deadline(MIB), Duration::from_secs(32));
        assert_eq!(limits.answer_deadline(48 * 1024), Duration::from_secs(2));
        assert_eq!(
            limits.answer_deadline(80 * 1024),
            Duration::from_millis(2500)
        );
        assert!(limits.answer_deadline(usize::MAX).as_secs() > 1 << 40);
        let mut c = Connections::new(limits);
        let t = Instant::now();
        let (slow, fast) = (admit(&mut c, "10.0.0.1"), admit(&mut c, "10.0.1.1"));
        for id in [slow, fast] {
            c.request(id);
            assert!(c.reserve(id, MIB, t).granted);
            c.answered(id);
        }
        // the fast one is written; the slow one is not, however it keeps reading
        c.flushed(fast);
        c.received(slow);
        assert_eq!(c.overdue(t + Duration::from_secs(31)), None);
        assert_eq!(c.overdue(t + Duration::from_secs(32)), Some(slow));
        assert_eq!(c.overdue(t + Duration::from_secs(99)), None);
        assert!(!c.is_open(slow) && c.is_open(fast));
        assert_eq!(c.answer_bytes(), 0);
    }

    #[test]
    fn zero_caps_are_one() {
        let l = ConnectionLimits::new(0, 0, 0);
        assert_eq!((l.per_source, l.per_prefix, l.total), (1, 1, 1));
    }

    /// 100,000 half-sent connections from 65,536 addresses in 256 /24s, against a table
    /// of 512: the table never holds more than its caps, a client that sends a whole
    /// request every 1,000 connections is never displaced before its answer, and the
    /// table is empty once all are released.
    #[test]
    fn a_flood_from_many_sources_never_grows_the_table_or_displaces_a_client_with_a_request() {
        let mut c = Connections::new(ConnectionLimits::new(32, 128, 512));
        let mut held = std::collections::VecDeque::new();
        let mut displaced = 0u64;
        for i in 0..100_000u32 {
            let a = c.admit(IpAddr::from((i % 65_536 + (10 << 24)).to_be_bytes()));
            if a.displaced.is_some() {
                displaced += 1;
            }
            held.push_back(a.id);
            if i % 1000 == 0 {
                // a client: connects, sends its request, and is answered 200 floods later
                let client = c.admit(IpAddr::from([192, 0, 2, 1]));
                c.request(client.id);
                for j in 0..200u32 {
                    let _ = c.admit(IpAddr::from((j + (11 << 24)).to_be_bytes()));
                }
                assert!(c.is_open(client.id), "the client was displaced at {i}");
                c.answered(client.id);
                c.release(client.id);
            }
            assert!(c.open() <= 512);
        }
        assert!(c.sources() <= 512 && c.prefixes() <= 512);
        assert!(displaced > 99_000, "{displaced}");
        let open = c.open();
        assert_eq!(open, 512);
        for id in held {
            c.release(id);
        }
        // the 200-connection bursts' last ones were never released by id here
        let left: Vec<_> = c.conns.keys().copied().collect();
        for id in left {
            c.release(id);
        }
        assert_eq!((c.open(), c.sources(), c.prefixes()), (0, 0, 0));
        assert!(c.prefixes.is_empty() && c.by_source.is_empty() && c.by_prefix.is_empty());
    }
}
