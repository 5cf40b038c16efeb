//! Abuse defences shared by every protocol's responder: stateless challenges and a
//! per-source rate limiter with bounded memory.
//!
//! **Challenges** ([`ChallengeKeys`]) are a keyed hash of the client's IP address (never
//! its port: real clients query from a new port for each datagram), the protocol and the
//! current epoch: `SipHash-2-4(K_epoch, protocol ‖ ip)`, where `K_epoch` is derived from a
//! random secret and `⌊t / period⌋`. There is no table to fill. A challenge is accepted in
//! the epoch it was issued and the next one, so rotation never fails a client that just
//! got one. The sentinel values 0 and 0xFFFFFFFF are never issued.
//!
//! **Rate limiting** ([`RateLimiter`]) is a token bucket per IPv4 address and per IPv6 /64,
//! held in a fixed set-associative table: memory is fixed at construction however many
//! sources appear. A source that finds no free slot shares one overflow bucket with the
//! others in the same situation, so a flood of spoofed sources can only ever use that
//! bucket's budget.
//!
//! Time is passed in (`Instant`); randomness is passed in (the secret). Nothing here
//! panics or allocates after construction.

use std::hash::Hasher as _;
use std::net::IpAddr;
use std::time::{Duration, Instant};

use siphasher::sip::SipHasher24;
use siphasher::sip128::{Hasher128 as _, SipHasher24 as SipHasher128};

/// A keyed 32-bit hash of `text` (SipHash with `key`): unpredictable ids derived from a
/// responder's secret, such as heartbeat instance keys.
pub(crate) fn keyed_u32(key: &[u8; 16], text: &str) -> u32 {
    let mut h = SipHasher24::new_with_key(key);
    h.write(text.as_bytes());
    let v = h.finish();
    // fold the two halves; truncation is the point
    #[allow(clippy::cast_possible_truncation)]
    let folded = (v ^ (v >> 32)) as u32;
    folded
}

/// Canonical form of a source address: IPv4-mapped IPv6 addresses become IPv4, so that a
/// dual-stack socket treats a client the same way as an IPv4 socket.
pub(crate) fn canonical_ip(ip: IpAddr) -> IpAddr {
    ip.to_canonical()
}

/// Stateless challenge numbers: keyed by a secret, rotating every `period`.
#[derive(Clone)]
pub struct ChallengeKeys {
    master: [u8; 16],
    period_secs: u64,
    base: Instant,
    cached: Option<(u64, SipHasher24)>,
}

impl std::fmt::Debug for ChallengeKeys {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ChallengeKeys")
            .field("period_secs", &self.period_secs)
            .finish_non_exhaustive()
    }
}

impl ChallengeKeys {
    /// Keys from a 16-byte random secret; epochs of `period` (at least one second) count
    /// from `now`.
    pub fn new(secret: [u8; 16], period: Duration, now: Instant) -> Self {
        Self {
            master: secret,
            period_secs: period.as_secs().max(1),
            base: now,
            cached: None,
        }
    }

    /// The rotation period.
    pub fn period(&self) -> Duration {
        Duration::from_secs(self.period_secs)
    }

    fn epoch(&self, now: Instant) -> u64 {
        now.saturating_duration_since(self.base).as_secs() / self.period_secs
    }

    fn epoch_hasher(&mut self, epoch: u64) -> SipHasher24 {
        if let Some((e, h)) = &self.cached {
            if *e == epoch {
                return *h;
            }
        }
        let mut kdf = SipHasher128::new_with_key(&self.master);
        kdf.write(b"ogp challenge epoch");
        kdf.write_u64(epoch);
        let k = kdf.finish128();
        let h = SipHasher24::new_with_keys(k.h1, k.h2);
        self.cached = Some((epoch, h));
        h
    }

    fn compute(&mut self, epoch: u64, protocol: u8, ip: IpAddr) -> u32 {
        let mut h = self.epoch_hasher(epoch);
        h.write_u8(protocol);
        match canonical_ip(ip) {
            IpAddr::V4(v4) => h.write(&v4.octets()),
            IpAddr::V6(v6) => h.write(&v6.octets()),
        }
        let c = h.finish() as u32;
        match c {
            0 => 1,
            u32::MAX => u32::MAX - 1,
            c => c,
        }
    }

    /// The challenge to give `ip` now.
    pub fn issue(&mut self, now: Instant, protocol: u8, ip: IpAddr) -> u32 {
        let e = self.epoch(now);
        self.compute(e, protocol, ip)
    }

    /// Whether `challenge` is valid for `ip` now (issued in this epoch or the previous).
    pub fn verify(&mut self, now: Instant, protocol: u8, ip: IpAddr, challenge: u32) -> bool {
        let e = self.epoch(now);
        let current = self.compute(e, protocol, ip);
        let previous = match e.checked_sub(1) {
            Some(p) => self.compute(p, protocol, ip),
            None => current,
        };
        // Branch-free comparison of both candidates.
        ((current ^ challenge) == 0) | ((previous ^ challenge) == 0)
    }

    /// The challenges valid for `ip` now: the current epoch's, then the previous
    /// epoch's (the same value twice in the first epoch). For protocols that compare a
    /// value derived from the challenge (GameSpy v3 sends 31 bits of it).
    pub fn candidates(&mut self, now: Instant, protocol: u8, ip: IpAddr) -> [u32; 2] {
        let e = self.epoch(now);
        let current = self.compute(e, protocol, ip);
        let previous = match e.checked_sub(1) {
            Some(p) => self.compute(p, protocol, ip),
            None => current,
        };
        [current, previous]
    }

    fn compute_bound(&mut self, epoch: u64, protocol: u8, ip: IpAddr, context: &[u8]) -> u64 {
        let mut h = self.epoch_hasher(epoch);
        h.write_u8(protocol);
        // A tag and the context's length keep these inputs apart from `compute`'s.
        h.write_u8(0xb0);
        match canonical_ip(ip) {
            IpAddr::V4(v4) => h.write(&v4.octets()),
            IpAddr::V6(v6) => h.write(&v6.octets()),
        }
        h.write_u64(context.len() as u64);
        h.write(context);
        h.finish()
    }

    /// A 64-bit challenge bound to `ip` and to `context` (for example a user name), for
    /// protocols that need more than a 32-bit address proof (GQP's `login`). Stateless
    /// like [`issue`](Self::issue): nothing is stored.
    pub fn issue_bound(&mut self, now: Instant, protocol: u8, ip: IpAddr, context: &[u8]) -> u64 {
        let e = self.epoch(now);
        self.compute_bound(e, protocol, ip, context)
    }

    /// The bound challenges valid now: the current epoch's, then the previous epoch's (the
    /// same value twice in the first epoch). A protocol that does not compare the challenge
    /// itself but something derived from it (an HMAC) checks both.
    pub fn bound_candidates(
        &mut self,
        now: Instant,
        protocol: u8,
        ip: IpAddr,
        context: &[u8],
    ) -> [u64; 2] {
        let e = self.epoch(now);
        let current = self.compute_bound(e, protocol, ip, context);
        let previous = match e.checked_sub(1) {
            Some(p) => self.compute_bound(p, protocol, ip, context),
            None => current,
        };
        [current, previous]
    }
}

/// One token bucket for everything (no table): the overall budget of answers that prove
/// nothing.
#[derive(Debug, Clone)]
pub(crate) struct TokenBucket {
    config: RateConfig,
    tokens: f32,
    last: Instant,
}

impl TokenBucket {
    /// A full bucket at `now`.
    pub fn new(config: RateConfig, now: Instant) -> Self {
        Self {
            config,
            tokens: config.burst,
            last: now,
        }
    }

    /// Takes one token.
    pub fn check(&mut self, now: Instant) -> RateDecision {
        self.charge(now, 1.0)
    }

    /// Takes `cost` tokens (bytes, with a budget counted in bytes); nothing is taken
    /// when the bucket holds less.
    pub fn charge(&mut self, now: Instant, cost: f32) -> RateDecision {
        let elapsed = now.saturating_duration_since(self.last).as_secs_f32();
        self.last = self.last.max(now);
        self.tokens = (self.tokens + elapsed * self.config.per_second).min(self.config.burst);
        if self.tokens >= cost {
            self.tokens -= cost;
            RateDecision::Allow
        } else {
            RateDecision::Limited
        }
    }
}

/// Token-bucket settings.
#[derive(Debug, Clone, Copy, PartialEq)]
#[non_exhaustive]
pub struct RateConfig {
    /// Tokens (datagrams answered) added per second.
    pub per_second: f32,
    /// Bucket size: how many can be answered in a burst.
    pub burst: f32,
}

impl RateConfig {
    /// `per_second` tokens added per second, at most `burst` saved up.
    pub const fn new(per_second: f32, burst: f32) -> Self {
        Self { per_second, burst }
    }
}

impl Default for RateConfig {
    /// 20 answers per second with bursts of 40 per source: far above what any client or
    /// scanner needs for one server, far below what makes a useful reflector.
    fn default() -> Self {
        Self {
            per_second: 20.0,
            burst: 40.0,
        }
    }
}

#[derive(Debug, Clone, Copy, Default)]
struct Slot {
    /// 0 = empty, 4 = IPv4 address, 6 = IPv6 /64.
    family: u8,
    key: u64,
    tokens: f32,
    last_ms: u64,
}

const WAYS: usize = 4;

/// Per-source token buckets in a fixed-size table.
#[derive(Debug, Clone)]
pub struct RateLimiter {
    slots: Box<[Slot]>,
    set_mask: usize,
    hash: SipHasher24,
    config: RateConfig,
    overflow: Slot,
    base: Instant,
}

/// What the limiter decided.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RateDecision {
    /// Within the source's budget.
    Allow,
    /// Over budget: drop silently.
    Limited,
}

impl RateLimiter {
    /// A limiter with room for about `capacity` tracked sources (rounded up to a power of
    /// two, at least 64), hashing with `secret` so that nobody can aim collisions.
    pub fn new(config: RateConfig, capacity: usize, secret: [u8; 16], now: Instant) -> Self {
        let slots = capacity.clamp(64, 1 << 24).next_power_of_two();
        let sets = slots / WAYS;
        Self {
            slots: vec![Slot::default(); slots].into_boxed_slice(),
            set_mask: sets - 1,
            hash: SipHasher24::new_with_key(&secret),
            config,
            overflow: Slot::default(),
            base: now,
        }
    }

    /// Bytes of memory the table uses.
    pub fn memory_bytes(&self) -> usize {
        std::mem::size_of_val(&*self.slots)
    }

    /// The settings.
    pub fn config(&self) -> RateConfig {
        self.config
    }

    fn refill(&self, slot: &mut Slot, now_ms: u64) {
        let elapsed = now_ms.saturating_sub(slot.last_ms) as f32 / 1000.0;
        slot.tokens = (slot.tokens + elapsed * self.config.per_second).min(self.config.burst);
        slot.last_ms = now_ms;
    }

    fn take(&self, slot: &mut Slot, now_ms: u64, cost: f32, owed: bool) -> RateDecision {
        self.refill(slot, now_ms);
        if owed {
            slot.tokens = (slot.tokens - cost).max(-self.config.burst);
            RateDecision::Allow
        } else if slot.tokens >= cost {
            slot.tokens -= cost;
            RateDecision::Allow
        } else {
            RateDecision::Limited
        }
    }

    /// Charges one datagram to `ip`'s bucket.
    pub fn check(&mut self, now: Instant, ip: IpAddr) -> RateDecision {
        self.charge(now, ip, 1.0)
    }

    /// Charges `cost` tokens (bytes, say, with a budget counted in bytes) to `ip`'s
    /// bucket; nothing is taken when the bucket holds less.
    pub fn charge(&mut self, now: Instant, ip: IpAddr, cost: f32) -> RateDecision {
        let (family, key) = source_key(ip);
        let h = keyed_source_hash(&self.hash, family, key);
        self.charge_hashed(now, family, key, h, cost, false)
    }

    /// Takes `cost` tokens from `ip`'s bucket whatever it holds, down to minus one
    /// burst: work whose cost was known only once it was done (a list request's pass
    /// over the list) is paid for by the source's next requests, which are refused
    /// until the bucket has refilled past the debt.
    pub fn owe(&mut self, now: Instant, ip: IpAddr, cost: f32) {
        let (family, key) = source_key(ip);
        let h = keyed_source_hash(&self.hash, family, key);
        self.charge_hashed(now, family, key, h, cost, true);
    }

    /// The tokens `ip`'s bucket holds at `now` (negative while it owes; a source without
    /// a bucket has a whole burst, or the shared overflow bucket's tokens when its set
    /// is full, as [`charge`](Self::charge) would find). Takes nothing.
    pub fn tokens(&self, now: Instant, ip: IpAddr) -> f32 {
        let (family, key) = source_key(ip);
        let h = keyed_source_hash(&self.hash, family, key);
        let now_ms = self.millis(now);
        let start = ((h as usize) & self.set_mask) * WAYS;
        let burst = self.config.burst;
        let mut reusable = false;
        for slot in self.slots.get(start..start + WAYS).unwrap_or_default() {
            let mut s = *slot;
            self.refill(&mut s, now_ms);
            if slot.family == family && slot.key == key {
                return s.tokens;
            }
            reusable |= slot.family == 0 || s.tokens >= burst;
        }
        if reusable {
            burst
        } else {
            let mut o = self.overflow;
            self.refill(&mut o, now_ms);
            o.tokens
        }
    }

    /// Whether `ip` has its own bucket here, charged within `within` before `now`. Only
    /// a charge makes a bucket, so with a limiter that only charges sources that proved
    /// their address, this says the source proved it recently. Takes nothing.
    pub fn knows(&self, now: Instant, ip: IpAddr, within: Duration) -> bool {
        let (family, key) = source_key(ip);
        let h = keyed_source_hash(&self.hash, family, key);
        self.knows_hashed(now, family, key, h, within)
    }

    /// Milliseconds since the table's start.
    fn millis(&self, now: Instant) -> u64 {
        u64::try_from(now.saturating_duration_since(self.base).as_millis()).unwrap_or(u64::MAX)
    }

    fn knows_hashed(
        &self,
        now: Instant,
        family: u8,
        key: u64,
        hash: u64,
        within: Duration,
    ) -> bool {
        let now_ms = self.millis(now);
        let within_ms = u64::try_from(within.as_millis()).unwrap_or(u64::MAX);
        let start = ((hash as usize) & self.set_mask) * WAYS;
        self.slots
            .get(start..start + WAYS)
            .unwrap_or_default()
            .iter()
            .any(|s| {
                s.family == family && s.key == key && now_ms.saturating_sub(s.last_ms) <= within_ms
            })
    }

    /// [`charge`](Self::charge) with the source's key and keyed hash already computed.
    fn charge_hashed(
        &mut self,
        now: Instant,
        family: u8,
        key: u64,
        hash: u64,
        cost: f32,
        owed: bool,
    ) -> RateDecision {
        let now_ms = self.millis(now);
        let set = (hash as usize) & self.set_mask;
        let start = set * WAYS;
        let burst = self.config.burst;
        let per_ms = self.config.per_second / 1000.0;
        // Find the source's slot, or the best slot to reuse: an empty one, or one whose
        // bucket has refilled completely (it carries no state worth keeping).
        let mut reuse = None;
        for i in start..start + WAYS {
            let Some(slot) = self.slots.get(i) else { break };
            if slot.family == family && slot.key == key {
                let mut s = *slot;
                let d = self.take(&mut s, now_ms, cost, owed);
                if let Some(dst) = self.slots.get_mut(i) {
                    *dst = s;
                }
                return d;
            }
            let idle_full = slot.family == 0
                || slot.tokens + now_ms.saturating_sub(slot.last_ms) as f32 * per_ms >= burst;
            if idle_full && reuse.is_none() {
                reuse = Some(i);
            }
        }
        match reuse.and_then(|i| self.slots.get_mut(i)) {
            Some(slot) => {
                let allow = burst >= cost || owed;
                *slot = Slot {
                    family,
                    key,
                    tokens: if allow {
                        (burst - cost).max(-burst)
                    } else {
                        burst
                    },
                    last_ms: now_ms,
                };
                if allow {
                    RateDecision::Allow
                } else {
                    RateDecision::Limited
                }
            }
            None => {
                let mut o = self.overflow;
                let d = self.take(&mut o, now_ms, cost, owed);
                self.overflow = o;
                d
            }
        }
    }
}

/// The rate limiter's key of a source: its family (4 or 6) and its IPv4 address or IPv6
/// /64.
pub(crate) fn source_key(ip: IpAddr) -> (u8, u64) {
    match canonical_ip(ip) {
        IpAddr::V4(v4) => (4u8, u64::from(u32::from(v4))),
        IpAddr::V6(v6) => (6u8, (u128::from(v6) >> 64) as u64),
    }
}

fn keyed_source_hash(hash: &SipHasher24, family: u8, key: u64) -> u64 {
    let mut h = *hash;
    h.write_u8(family);
    h.write_u64(key);
    h.finish()
}

/// Shards of a [`SharedRateLimiter`]: a power of two, enough that two to a few dozen
/// threads rarely meet on one.
const SHARDS: usize = 64;

/// A [`RateLimiter`] that several threads share (the responder threads of one process,
/// each with its own `SO_REUSEPORT` socket), so that a source has one budget however
/// its datagrams are spread over the threads.
///
/// The kernel spreads datagrams over `SO_REUSEPORT` sockets by a hash of the 4-tuple
/// (address **and port** of the source), and real clients query from a new port each
/// time: one source's datagrams reach every thread. A shard per thread would therefore
/// give a source one budget per thread. Instead the table is split into
/// [`SHARDS`](SharedRateLimiter::shards) shards by a keyed hash of the source (its IPv4
/// address or IPv6 /64, the limiter's own key), each behind its own mutex: every thread
/// charges a source in the same shard, so its budget is exactly one bucket, and two
/// threads take the same lock only when their sources fall in the same shard (1 in 64 at
/// random). Each lock is held for one table lookup (a few dozen nanoseconds) and never
/// across anything else.
///
/// Memory is the same as one [`RateLimiter`] of the same capacity. Each shard has its
/// own overflow bucket (for sources that find no free slot), so a flood of spoofed
/// sources can spend at most `shards` overflow budgets rather than one.
#[derive(Debug)]
pub struct SharedRateLimiter {
    shards: Box<[std::sync::Mutex<RateLimiter>]>,
    hash: SipHasher24,
    config: RateConfig,
}

impl SharedRateLimiter {
    /// A limiter with room for about `capacity` tracked sources in all, split into
    /// shards; `secret` keys the hash as in [`RateLimiter::new`].
    pub fn new(config: RateConfig, capacity: usize, secret: [u8; 16], now: Instant) -> Self {
        let per_shard = (capacity / SHARDS).max(64);
        let shards = (0..SHARDS)
            .map(|_| std::sync::Mutex::new(RateLimiter::new(config, per_shard, secret, now)))
            .collect();
        Self {
            shards,
            hash: SipHasher24::new_with_key(&secret),
            config,
        }
    }

    /// The number of shards.
    pub fn shards(&self) -> usize {
        self.shards.len()
    }

    /// The settings.
    pub fn config(&self) -> RateConfig {
        self.config
    }

    /// Bytes of memory the tables use.
    pub fn memory_bytes(&self) -> usize {
        self.shards
            .iter()
            .map(|s| {
                s.lock()
                    .unwrap_or_else(std::sync::PoisonError::into_inner)
                    .memory_bytes()
            })
            .sum()
    }

    /// [`RateLimiter::knows`] on the shared table.
    pub fn knows(&self, now: Instant, ip: IpAddr, within: Duration) -> bool {
        let (family, key) = source_key(ip);
        let h = keyed_source_hash(&self.hash, family, key);
        let shard = (h >> 58) as usize & (SHARDS - 1);
        self.shards.get(shard).is_some_and(|m| {
            m.lock()
                .unwrap_or_else(std::sync::PoisonError::into_inner)
                .knows_hashed(now, family, key, h, within)
        })
    }

    /// Charges one datagram to `ip`'s bucket.
    pub fn check(&self, now: Instant, ip: IpAddr) -> RateDecision {
        let (family, key) = source_key(ip);
        let h = keyed_source_hash(&self.hash, family, key);
        // The top bits choose the shard; the shard's table uses the low bits for its set.
        let shard = (h >> 58) as usize & (SHARDS - 1);
        match self.shards.get(shard) {
            // A thread that panicked holding the lock cannot have left the table
            // inconsistent (every slot is written whole), so a poisoned lock is used as is.
            Some(m) => m
                .lock()
                .unwrap_or_else(std::sync::PoisonError::into_inner)
                .charge_hashed(now, family, key, h, 1.0, false),
            None => RateDecision::Limited,
        }
    }
}

/// A [`TokenBucket`] that several threads share (the overall budget of answers that
/// prove nothing): one mutex, taken only for such answers.
#[derive(Debug)]
pub(crate) struct SharedTokenBucket(std::sync::Mutex<TokenBucket>);

impl SharedTokenBucket {
    /// A full bucket at `now`.
    pub fn new(config: RateConfig, now: Instant) -> Self {
        Self(std::sync::Mutex::new(TokenBucket::new(config, now)))
    }

    /// Takes one token.
    pub fn check(&self, now: Instant) -> RateDecision {
        self.0
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .check(now)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::internals::protocol_id;
    use std::net::{Ipv4Addr, Ipv6Addr};

    fn v4(a: u8, b: u8, c: u8, d: u8) -> IpAddr {
        IpAddr::V4(Ipv4Addr::new(a, b, c, d))
    }

    #[test]
    fn challenges_bind_ip_and_protocol_and_rotate_with_grace() {
        let t0 = Instant::now();
        let mut k = ChallengeKeys::new([7; 16], Duration::from_secs(60), t0);
        let ip = v4(127, 0, 0, 1);
        let c = k.issue(t0, protocol_id::OGP, ip);
        assert_ne!(c, 0);
        assert_ne!(c, u32::MAX);
        assert!(k.verify(t0, protocol_id::OGP, ip, c));
        assert!(!k.verify(t0, protocol_id::A2S, ip, c), "other protocol");
        assert!(
            !k.verify(t0, protocol_id::OGP, v4(127, 0, 0, 2), c),
            "other ip"
        );
        assert!(!k.verify(t0, protocol_id::OGP, ip, c ^ 1));
        // mapped IPv6 form of the same IPv4 address is the same client
        let mapped = IpAddr::V6(Ipv4Addr::new(127, 0, 0, 1).to_ipv6_mapped());
        assert!(k.verify(t0, protocol_id::OGP, mapped, c));
        // next epoch: still accepted, and a new one is issued
        let t1 = t0 + Duration::from_secs(61);
        assert!(k.verify(t1, protocol_id::OGP, ip, c));
        let c1 = k.issue(t1, protocol_id::OGP, ip);
        assert_ne!(c1, c);
        // two epochs later: rejected
        let t2 = t0 + Duration::from_secs(121);
        assert!(!k.verify(t2, protocol_id::OGP, ip, c));
        assert!(k.verify(t2, protocol_id::OGP, ip, c1));
        // another secret gives other challenges
        let mut other = ChallengeKeys::new([8; 16], Duration::from_secs(60), t0);
        assert!(!other.verify(t0, protocol_id::OGP, ip, c));
    }

    #[test]
    fn bound_challenges_bind_ip_context_and_rotate() {
        let t0 = Instant::now();
        let mut k = ChallengeKeys::new([7; 16], Duration::from_secs(60), t0);
        let ip = v4(127, 0, 0, 1);
        let c = k.issue_bound(t0, protocol_id::GQP, ip, b"alice");
        assert_eq!(
            k.bound_candidates(t0, protocol_id::GQP, ip, b"alice"),
            [c, c]
        );
        assert_ne!(k.issue_bound(t0, protocol_id::GQP, ip, b"bob"), c);
        assert_ne!(
            k.issue_bound(t0, protocol_id::GQP, v4(127, 0, 0, 2), b"alice"),
            c
        );
        assert_ne!(k.issue_bound(t0, protocol_id::OGP, ip, b"alice"), c);
        let t1 = t0 + Duration::from_secs(61);
        let [now1, prev1] = k.bound_candidates(t1, protocol_id::GQP, ip, b"alice");
        assert_eq!(prev1, c);
        assert_ne!(now1, c);
    }

    #[test]
    fn shared_limiter_gives_a_source_one_budget_from_any_thread() {
        let t0 = Instant::now();
        let l = std::sync::Arc::new(SharedRateLimiter::new(
            RateConfig::new(0.001, 10.0),
            1 << 12,
            [3; 16],
            t0,
        ));
        assert_eq!(l.shards(), SHARDS);
        let ip = v4(192, 0, 2, 7);
        let allowed: usize = (0..4)
            .map(|_| {
                let l = std::sync::Arc::clone(&l);
                std::thread::spawn(move || {
                    (0..10)
                        .filter(|_| l.check(t0, ip) == RateDecision::Allow)
                        .count()
                })
            })
            .map(|t| t.join().unwrap())
            .sum();
        assert_eq!(
            allowed, 10,
            "one bucket of 10 for the source, all threads together"
        );
        // Another source has its own budget.
        assert_eq!(l.check(t0, v4(192, 0, 2, 8)), RateDecision::Allow);
        assert!(l.memory_bytes() >= (1 << 12) * std::mem::size_of::<Slot>());
    }

    #[test]
    fn a_limiter_knows_the_sources_it_charged_recently() {
        let t0 = Instant::now();
        let l = SharedRateLimiter::new(RateConfig::default(), 1 << 12, [5; 16], t0);
        let (a, b) = (v4(192, 0, 2, 7), v4(192, 0, 2, 8));
        let minute = Duration::from_secs(60);
        assert!(!l.knows(t0, a, minute), "nothing charged yet");
        assert_eq!(l.check(t0, a), RateDecision::Allow);
        assert!(l.knows(t0 + minute, a, minute));
        assert!(
            !l.knows(t0 + minute + Duration::from_secs(1), a, minute),
            "too long ago"
        );
        assert!(!l.knows(t0, b, minute), "another source");
        // Asking takes nothing: the burst of 40 is still whole.
        for _ in 0..100 {
            l.knows(t0, a, minute);
        }
        let left = (0..100)
            .filter(|_| l.check(t0, a) == RateDecision::Allow)
            .count();
        assert_eq!(left, 39);
    }

    #[test]
    fn token_bucket_per_source() {
        let t0 = Instant::now();
        let cfg = RateConfig {
            per_second: 10.0,
            burst: 5.0,
        };
        let mut rl = RateLimiter::new(cfg, 1024, [1; 16], t0);
        let a = v4(10, 0, 0, 1);
        let allowed = (0..20)
            .filter(|_| rl.check(t0, a) == RateDecision::Allow)
            .count();
        assert_eq!(allowed, 5);
        // another source is unaffected
        assert_eq!(rl.check(t0, v4(10, 0, 0, 2)), RateDecision::Allow);
        // refills at 10/s
        let t1 = t0 + Duration::from_millis(300);
        let allowed = (0..20)
            .filter(|_| rl.check(t1, a) == RateDecision::Allow)
            .count();
        assert_eq!(allowed, 3);
        // one IPv6 /64 is one source
        let p = |low: u16| IpAddr::V6(Ipv6Addr::new(0x2001, 0xdb8, 0, 1, 0, 0, 0, low));
        let allowed = (0..20u16)
            .filter(|i| rl.check(t0, p(*i)) == RateDecision::Allow)
            .count();
        assert_eq!(allowed, 5);
    }

    #[test]
    fn memory_is_fixed_and_floods_share_the_overflow_bucket() {
        let t0 = Instant::now();
        let cfg = RateConfig {
            per_second: 1.0,
            burst: 2.0,
        };
        let mut rl = RateLimiter::new(cfg, 64, [2; 16], t0);
        let before = rl.memory_bytes();
        let mut allowed = 0;
        for i in 0..100_000u32 {
            let ip = IpAddr::V4(Ipv4Addr::from(0x0a00_0000 + i));
            if rl.check(t0, ip) == RateDecision::Allow {
                allowed += 1;
            }
        }
        assert_eq!(rl.memory_bytes(), before);
        // each of the 64 slots gave its first-time burst; the overflow bucket its burst;
        // every further new source found no slot (all slots are active) and was limited
        assert!(allowed <= 64 * 2 + 2, "allowed {allowed}");
        assert!(allowed >= 64, "allowed {allowed}");
    }
}
