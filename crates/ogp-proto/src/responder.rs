//! The sans-IO responder: a datagram, its source address and the current time in;
//! answer datagrams out. This is the entry point for engines that run their own socket
//! loop (as the reference C SDK does); `ogp-net` wraps it in a tokio task.
//!
//! One [`Responder`] answers every protocol on one port: the first bytes of a datagram
//! tell the protocols apart (OGP: `FF FF FF FF "OGP\0"`). The OGP v0.02 draft starts
//! like OGP v1.01 and cannot be told apart from it, so it is answered only by a responder
//! configured for it alone ([`Listener::OgpDraft`]), on a port of its own. A responder
//! owns what the protocols share: the challenge keys, the per-source rate limiter and the
//! ban hook. Memory is
//! fixed at construction; handling a datagram allocates nothing once the [`Transmits`]
//! buffers have grown to the answer size. Nothing here panics on any input.
//!
//! ```
//! use std::time::Instant;
//! use ogp_proto::responder::{Responder, ResponderConfig, Transmits};
//! use ogp_proto::Status;
//!
//! let now = Instant::now();
//! let mut responder = Responder::new(ResponderConfig::default(), [42; 32], now);
//! let mut status = Status::default();
//! status.host_name = Some("My server".into());
//! let mut out = Transmits::default();
//! let probe = [0xff, 0xff, 0xff, 0xff, b'O', b'G', b'P', 0, 3, 1, 0];
//! responder.handle(now, "127.0.0.1:50000".parse().unwrap(), &probe, &status, &mut out);
//! assert_eq!(out.len(), 1); // Error 3 with a challenge
//! ```

use std::fmt;
use std::net::{IpAddr, SocketAddr};
use std::sync::Arc;
use std::time::{Duration, Instant};

use crate::gamespy3::heartbeat::{HeartbeatConfig, Heartbeats};
use crate::gamespy3::responder::Gs3Responder;
use crate::guard::{
    ChallengeKeys, RateConfig, RateDecision, RateLimiter, SharedRateLimiter, SharedTokenBucket,
    TokenBucket,
};
use crate::ogp::uplink::{UplinkConfig, Uplinks};
use crate::{Protocol, Status};

pub use crate::responder_core::{
    AnswerKind, Breakdown, DropReason, Incoming, ProtocolOutcome, ProtocolResponder, Transmits,
    Unanswered,
};

/// What the ban hook decides for a source.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum BanAction {
    /// Answer normally.
    Allow,
    /// Tell it it is banned (OGP Error 0; silence in protocols without such an error).
    Reject,
    /// Silence.
    Ignore,
}

/// A game-provided decision on each source address.
pub type BanHook = Arc<dyn Fn(IpAddr) -> BanAction + Send + Sync>;

/// Which protocols one listener (one socket, one [`Responder`]) answers.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum Listener {
    /// Every protocol its first bytes identify (OGP v1.01). The default.
    #[default]
    Standard,
    /// Only the OGP v0.02 draft (opt-in). Its datagrams start with the same bytes as
    /// OGP v1.01's, so it needs a port of its own; v1.01 queries that reach it are
    /// ignored (most read as draft answers).
    OgpDraft,
}

/// The protocols a [`Responder`] answers: those of the table of protocols
/// ([`crate::protocol`]) with `serve(Config, Responder, Outcome)`, each with a field of
/// [`ResponderConfig`] (and of the responder) named after its folder. The settings, the
/// outcome, the per-protocol responders and their dispatch are generated from it (which
/// datagrams go to which protocol is decided by the entries' request signatures).
macro_rules! responders {
    // Keeps the served protocols of the table, then generates.
    (@keep [$($kept:tt)*]) => { responders!(@emit $($kept)*); };
    (@keep [$($kept:tt)*] $(#[cfg($c:meta)])? $variant:ident => $module:ident, serve($cf:ident, $rs:ident, $oc:ident); $($rest:tt)*) => {
        responders!(@keep [$($kept)* $(#[cfg($c)])? $variant => $module: crate::$module::responder::$cf, crate::$module::responder::$rs, crate::$module::responder::$oc;] $($rest)*);
    };
    (@keep [$($kept:tt)*] $(#[cfg($c:meta)])? $variant:ident => $module:ident; $($rest:tt)*) => {
        responders!(@keep [$($kept)*] $($rest)*);
    };
    (@emit $( $(#[cfg($c:meta)])? $variant:ident => $field:ident: $config:ty, $resp:ty, $outcome:ty; )*) => {
        /// Responder settings.
        #[derive(Clone)]
        #[non_exhaustive]
        pub struct ResponderConfig {
            /// Which protocols this responder answers (default: [`Listener::Standard`]).
            pub listener: Listener,
            $(
                $(#[cfg($c)])?
                #[doc = concat!("[`Protocol::", stringify!($variant), "`]'s settings.")]
                pub $field: $config,
            )*
            /// Per-source rate limit of answers to sources that proved their address (a
            /// valid challenge or token): a spoofer using the address cannot spend it.
            pub rate: RateConfig,
            /// Per-source rate limit of the other answers that a spoofer can trigger in a
            /// source's name and that give it something: answers without a valid challenge
            /// that are larger than their request (errors, pings, answers a protocol gives
            /// without a challenge), except a protocol's challenge. Challenges (in one
            /// datagram of at most 3 times the request) and answers no larger than their
            /// request are not held to it, only to `unproven_total`: a per-source limit on
            /// them is what lets a spoofer cut off a client that asks for a fresh challenge
            /// before every query.
            pub unproven_rate: RateConfig,
            /// Overall limit of every answer without a valid challenge, all sources
            /// together: a flood of spoofed sources costs bounded work and sends a bounded
            /// number of (small) datagrams. Sources that proved their address within
            /// `challenge_period` (a client that keeps watching the server) are not cut off
            /// when a flood spends it: they are held to `unproven_rate` instead. Responders
            /// with limits of their own ([`Responder::use_own_limits`]) each hold their
            /// share of it.
            pub unproven_total: RateConfig,
            /// Sources tracked by the rate limiter (memory is about 24 bytes each), shared
            /// out like `unproven_total`.
            pub rate_table_capacity: usize,
            /// How often challenge keys rotate (the previous period's challenges stay
            /// valid).
            pub challenge_period: Duration,
            /// Optional ban hook.
            pub ban: Option<BanHook>,
            /// GameSpy v3 heartbeats to master servers, sent from every listening address
            /// ([`Responder::add_listener`]); none by default.
            pub gamespy3_heartbeat: Option<HeartbeatConfig>,
            /// OGP master server uplinks, sent from every listening address
            /// ([`Responder::add_listener`]); none by default.
            pub ogp_uplink: Option<UplinkConfig>,
        }

        impl fmt::Debug for ResponderConfig {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                let mut d = f.debug_struct("ResponderConfig");
                d.field("listener", &self.listener);
                $( $(#[cfg($c)])? d.field(stringify!($field), &self.$field); )*
                d.field("rate", &self.rate)
                    .field("unproven_rate", &self.unproven_rate)
                    .field("unproven_total", &self.unproven_total)
                    .field("rate_table_capacity", &self.rate_table_capacity)
                    .field("challenge_period", &self.challenge_period)
                    .field("ban", &self.ban.as_ref().map(|_| "hook"))
                    .field("gamespy3_heartbeat", &self.gamespy3_heartbeat)
                    .field("ogp_uplink", &self.ogp_uplink)
                    .finish()
            }
        }

        impl Default for ResponderConfig {
            fn default() -> Self {
                Self {
                    listener: Listener::default(),
                    $( $(#[cfg($c)])? $field: <$config>::default(), )*
                    rate: RateConfig::default(),
                    unproven_rate: RateConfig::default(),
                    unproven_total: RateConfig {
                        per_second: 10_000.0,
                        burst: 10_000.0,
                    },
                    rate_table_capacity: 1 << 16,
                    challenge_period: Duration::from_secs(300),
                    ban: None,
                    gamespy3_heartbeat: None,
                    ogp_uplink: None,
                }
            }
        }

        /// What the responder did with a datagram (for logs and counters).
        #[derive(Debug, Clone, Copy, PartialEq, Eq)]
        #[non_exhaustive]
        pub enum Outcome {
            /// Not a protocol we speak: no answer.
            Unknown,
            /// Dropped by the per-source rate limit.
            RateLimited,
            /// Dropped by the ban hook.
            Banned,
            $(
                $(#[cfg($c)])?
                #[doc = concat!("Handled as [`Protocol::", stringify!($variant), "`].")]
                $variant($outcome),
            )*
        }

        /// Each protocol's responder.
        struct Protocols {
            $( $(#[cfg($c)])? $field: $resp, )*
        }

        impl Protocols {
            fn new(config: &ResponderConfig) -> Self {
                Self {
                    $( $(#[cfg($c)])? $field: <$resp>::new(Clone::clone(&config.$field)), )*
                }
            }

            /// `protocol`'s responder on one datagram (`None`: not built in).
            fn run(
                &mut self,
                protocol: Protocol,
                incoming: Incoming<'_>,
                status: (&Status, u64),
                keys: &mut ChallengeKeys,
                out: &mut Transmits,
            ) -> Option<Handled> {
                match protocol {
                    $(
                        $(#[cfg($c)])?
                        Protocol::$variant => {
                            Some(run(&mut self.$field, Outcome::$variant, incoming, status, keys, out))
                        }
                    )*
                    #[allow(unreachable_patterns)]
                    _ => None,
                }
            }
        }
    };
}

macro_rules! responders_from_table {
    ($($table:tt)*) => { responders!(@keep [] $($table)*); };
}
crate::protocol::for_each_protocol!(responders_from_table);

/// Counters of what the responder did: plain numbers, counted where each datagram's fate
/// is decided, copied out by [`Responder::stats`].
///
/// Every datagram received is either answered (counted in
/// [`breakdown`](Self::breakdown) by protocol and [`AnswerKind`]) or dropped (counted by
/// [`DropReason`]), except GameSpy v3 keep-alives, which need no reply.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct Stats {
    /// Datagrams received.
    pub received: u64,
    /// Bytes received.
    pub received_bytes: u64,
    /// Datagrams not in any protocol we speak.
    pub unknown: u64,
    /// Answers dropped by a rate limit (the source's own, or the overall one of answers
    /// that prove nothing).
    pub rate_limited: u64,
    /// Dropped by the ban hook.
    pub banned: u64,
    /// Ignored by a protocol (malformed, oversize, …).
    pub ignored: u64,
    /// Datagrams sent.
    pub sent: u64,
    /// Bytes sent.
    pub sent_bytes: u64,
    /// Answers by protocol and kind, drops by reason.
    pub breakdown: Breakdown,
}

impl Stats {
    /// Adds `other`'s counts to these (the counters of several worker threads).
    pub fn merge(&mut self, other: &Stats) {
        self.received += other.received;
        self.received_bytes += other.received_bytes;
        self.unknown += other.unknown;
        self.rate_limited += other.rate_limited;
        self.banned += other.banned;
        self.ignored += other.ignored;
        self.sent += other.sent;
        self.sent_bytes += other.sent_bytes;
        self.breakdown.merge(&other.breakdown);
    }
}

/// Answers every protocol from one status, with shared abuse defences.
pub struct Responder {
    keys: ChallengeKeys,
    limits: Limits,
    config: ResponderConfig,
    listener: Listener,
    protocols: Protocols,
    ban: Option<BanHook>,
    stats: Stats,
    heartbeat: Option<HeartbeatConfig>,
    heartbeats: Vec<Heartbeats>,
    uplink: Option<UplinkConfig>,
    uplinks: Vec<Uplinks>,
    instance_keys: [u8; 16],
    /// The last status snapshot seen by [`Responder::handle_shared`], kept alive so that
    /// its identity is not reused while answers built from it are cached.
    snapshot: Option<Arc<Status>>,
    /// Its generation (1, 2, …; 0 = none).
    generation: u64,
}

/// A datagram the responder sends on its own (a heartbeat, an uplink), not in answer to
/// one.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Transmit {
    /// The listening address to send it from.
    pub from: SocketAddr,
    /// Where to.
    pub to: SocketAddr,
    /// The datagram.
    pub datagram: Vec<u8>,
}

impl fmt::Debug for Responder {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Responder")
            .field("listener", &self.listener)
            .field("ogp", self.protocols.ogp.config())
            .field("ogp_draft", self.protocols.ogp_draft.config())
            .field("rate", &self.config.rate)
            .field("own_limits", &matches!(self.limits, Limits::Own { .. }))
            .field("stats", &self.stats)
            .finish_non_exhaustive()
    }
}

fn half(secret: &[u8; 32], second: bool) -> [u8; 16] {
    let mut k = [0u8; 16];
    let src = if second {
        secret.get(16..)
    } else {
        secret.get(..16)
    };
    if let Some(src) = src {
        k.copy_from_slice(src);
    }
    k
}

impl Responder {
    /// A responder. `secret` must be random (it keys the challenges and the rate
    /// limiter's hash); `now` starts its clock.
    pub fn new(config: ResponderConfig, secret: [u8; 32], now: Instant) -> Self {
        Self {
            keys: ChallengeKeys::new(half(&secret, false), config.challenge_period, now),
            limits: Limits::shared(&config, half(&secret, true), now),
            listener: config.listener,
            protocols: Protocols::new(&config),
            ban: config.ban.clone(),
            stats: Stats::default(),
            heartbeat: config.gamespy3_heartbeat.clone(),
            heartbeats: Vec::new(),
            uplink: config.ogp_uplink.clone(),
            uplinks: Vec::new(),
            instance_keys: half(&secret, true),
            snapshot: None,
            generation: 0,
            config,
        }
    }

    /// Another responder for another thread of the same process: the same settings, the
    /// same challenge keys (a challenge issued by one is valid at the other) and the
    /// **same** rate limiters (shared, not copied: a source has one budget however its
    /// datagrams are spread over the threads), with counters of its own (add them up with
    /// [`Stats::merge`]) and no timed sends (heartbeats and uplinks stay with `self`).
    pub fn worker(&self) -> Self {
        let config = self.config.clone();
        Self {
            keys: self.keys.clone(),
            limits: self.limits.for_worker(),
            listener: config.listener,
            protocols: Protocols::new(&config),
            ban: config.ban.clone(),
            stats: Stats::default(),
            heartbeat: None,
            heartbeats: Vec::new(),
            uplink: None,
            uplinks: Vec::new(),
            instance_keys: self.instance_keys,
            snapshot: None,
            generation: 0,
            config,
        }
    }

    /// Gives this responder rate limits of its own, for a thread that only ever sees its
    /// share of the sources: the kernel steers every datagram of a source address to the
    /// same one of `workers` sockets (`ogp_net` does it with a reuseport BPF program on
    /// Linux). Nothing is then shared on the answering path, so no lock is taken; each
    /// source still has exactly one budget, this thread's. Each worker keeps
    /// 1/`workers` of the tracked sources and of the overall budget for unproven
    /// sources (`unproven_total`); the per-source rates are unchanged. Call it on every
    /// responder of the group, the one that does the timed sends included, before the
    /// first datagram; `workers` of 0 or 1 leaves the limits whole.
    pub fn use_own_limits(&mut self, workers: usize, now: Instant) {
        self.limits = Limits::own(&self.config, self.instance_keys, workers, now);
    }

    /// Tells the responder it answers on `local` (a bound socket's address): the
    /// heartbeats and uplinks to master servers, if configured, go out from each
    /// listening address, the first due at `now`. Returns whether timed sends were
    /// started for it.
    pub fn add_listener(&mut self, local: SocketAddr, now: Instant) -> bool {
        let mut started = false;
        if let Some(config) = &self.heartbeat {
            if !self.heartbeats.iter().any(|h| h.local() == local) {
                let key = crate::guard::keyed_u32(&self.instance_keys, &local.to_string());
                let h = Heartbeats::new(config.clone(), local, key, now);
                if h.has_masters() {
                    self.heartbeats.push(h);
                    started = true;
                }
            }
        }
        if let Some(config) = &self.uplink {
            if !self.uplinks.iter().any(|u| u.local() == local) {
                let u = Uplinks::new(config.clone(), local, now);
                if u.has_masters() {
                    self.uplinks.push(u);
                    started = true;
                }
            }
        }
        started
    }

    /// When [`handle_timeout`](Self::handle_timeout) is due next (`None`: no timed
    /// sends).
    pub fn poll_timeout(&self) -> Option<Instant> {
        let beats = self.heartbeats.iter().map(Heartbeats::poll_timeout);
        beats
            .chain(self.uplinks.iter().map(Uplinks::poll_timeout))
            .min()
    }

    /// Advances the timed sends to `now` with the current status: heartbeats and
    /// uplinks that are due are queued for [`poll_transmit`](Self::poll_transmit).
    pub fn handle_timeout(&mut self, now: Instant, status: &Status) {
        for h in &mut self.heartbeats {
            h.handle_timeout(now, status);
        }
        for u in &mut self.uplinks {
            u.handle_timeout(now, status);
        }
    }

    /// Queues the last timed sends before the responder stops (the "exiting"
    /// heartbeats, a last uplink).
    pub fn close(&mut self, status: &Status) {
        for h in &mut self.heartbeats {
            h.close(status);
        }
        for u in &mut self.uplinks {
            u.close(status);
        }
    }

    /// The next datagram the responder sends on its own, if any.
    pub fn poll_transmit(&mut self) -> Option<Transmit> {
        fn next<A: crate::announce::Announce>(
            all: &mut [crate::announce::Announcer<A>],
        ) -> Option<Transmit> {
            all.iter_mut().find_map(|a| {
                let from = a.local();
                a.poll_transmit()
                    .map(|(to, datagram)| Transmit { from, to, datagram })
            })
        }
        next(&mut self.heartbeats).or_else(|| next(&mut self.uplinks))
    }

    /// A responder keyed with 32 random bytes from the operating system (the `os-rng`
    /// feature, on by default).
    #[cfg(feature = "os-rng")]
    pub fn with_random_secret(config: ResponderConfig, now: Instant) -> std::io::Result<Self> {
        let mut secret = [0u8; 32];
        getrandom::fill(&mut secret).map_err(|e| std::io::Error::other(e.to_string()))?;
        Ok(Self::new(config, secret, now))
    }

    /// Counters so far.
    pub fn stats(&self) -> Stats {
        self.stats
    }

    /// The challenge this responder currently issues to `ip` for OGP (for tests and
    /// tools).
    pub fn ogp_challenge(&mut self, now: Instant, ip: IpAddr) -> u32 {
        self.keys.issue(now, crate::ogp::GUARD_ID, ip)
    }

    /// The challenge this responder currently issues to `ip` for GameSpy v3 in its real
    /// challenge mode (for tests and tools).
    pub fn gamespy3_challenge(&mut self, now: Instant, ip: IpAddr) -> u32 {
        Gs3Responder::challenge(&mut self.keys, now, ip)
    }

    /// The challenge this responder currently issues to `ip` for the OGP v0.02 draft (for
    /// tests and tools).
    pub fn ogp_draft_challenge(&mut self, now: Instant, ip: IpAddr) -> u32 {
        self.keys.issue(now, crate::ogp_draft::GUARD_ID, ip)
    }

    /// Handles one datagram from `src` received at `now` on a listener of the configured
    /// kind ([`ResponderConfig::listener`]), answering from `status`. The answers are
    /// left in `out` (cleared first), to be sent to `src` from the socket the datagram
    /// arrived on.
    pub fn handle(
        &mut self,
        now: Instant,
        src: SocketAddr,
        datagram: &[u8],
        status: &Status,
        out: &mut Transmits,
    ) -> Outcome {
        self.handle_on(self.listener, now, src, datagram, status, out)
    }

    /// [`handle_on`](Self::handle_on) with the status as the shared snapshot it is
    /// published as: answers that depend only on the status (and the request's shape)
    /// are encoded once per snapshot, recognised by its identity ([`Arc::ptr_eq`]), and
    /// reused with only the per-query bytes patched in. The responder keeps the last
    /// snapshot alive until a new one comes, so an identity is never reused while cached.
    pub fn handle_shared(
        &mut self,
        listener: Listener,
        now: Instant,
        src: SocketAddr,
        datagram: &[u8],
        status: &Arc<Status>,
        out: &mut Transmits,
    ) -> Outcome {
        let same = self
            .snapshot
            .as_ref()
            .is_some_and(|s| Arc::ptr_eq(s, status));
        if !same {
            self.snapshot = Some(Arc::clone(status));
            self.generation = self.generation.wrapping_add(1).max(1);
        }
        let generation = self.generation;
        self.dispatch(listener, now, src, datagram, status, generation, out)
    }

    /// [`handle`](Self::handle) for a datagram that arrived on a listener of kind
    /// `listener`: one responder (one rate limiter, one challenge secret) serves every
    /// socket of a process, standard and draft ports alike.
    pub fn handle_on(
        &mut self,
        listener: Listener,
        now: Instant,
        src: SocketAddr,
        datagram: &[u8],
        status: &Status,
        out: &mut Transmits,
    ) -> Outcome {
        self.dispatch(listener, now, src, datagram, status, 0, out)
    }

    /// [`handle_on`](Self::handle_on) with the snapshot's generation for the answer
    /// caches (0: none).
    #[allow(clippy::too_many_arguments)]
    fn dispatch(
        &mut self,
        listener: Listener,
        now: Instant,
        src: SocketAddr,
        datagram: &[u8],
        status: &Status,
        generation: u64,
        out: &mut Transmits,
    ) -> Outcome {
        out.clear();
        self.stats.received += 1;
        self.stats.received_bytes += datagram.len() as u64;
        // The first bytes tell the protocols apart: each served protocol's entry's request
        // signature, tier by tier (OGP: FF FF FF FF "OGP\0"; GameSpy v3: FE FD and a
        // request type; Quake III: FF FF FF FF and its words; A2S: FF FF FF FF and a
        // request letter; GQP: SOH or a printable command character, ending with EOT).
        // A draft listener answers only the protocols served on a port of their own (the
        // OGP v0.02 draft, whose datagrams start with the same bytes as v1.01's).
        let Some(protocol) = crate::entries::served(listener == Listener::OgpDraft, datagram)
        else {
            self.stats.unknown += 1;
            self.stats.breakdown.count_drop(DropReason::UnknownProtocol);
            return Outcome::Unknown;
        };
        let ip = crate::guard::canonical_ip(src.ip());
        let ban = self.ban.as_ref().map_or(BanAction::Allow, |hook| hook(ip));
        if ban == BanAction::Ignore {
            self.stats.banned += 1;
            self.stats.breakdown.count_drop(DropReason::Banned);
            return Outcome::Banned;
        }
        let incoming = Incoming {
            now,
            ip,
            datagram,
            reject: ban == BanAction::Reject,
        };
        let status = (status, generation);
        let keys = &mut self.keys;
        let Handled {
            outcome,
            unanswered,
            proven,
            kind,
        } = match self.protocols.run(protocol, incoming, status, keys, out) {
            Some(handled) => handled,
            // Never chosen above without the protocol's feature.
            None => {
                self.stats.unknown += 1;
                self.stats.breakdown.count_drop(DropReason::UnknownProtocol);
                return Outcome::Unknown;
            }
        };
        if let Some(u) = unanswered {
            self.stats.ignored += 1;
            self.stats.breakdown.count_drop(u.reason);
        }
        // Charged after the protocol has said whether the source proved its address
        // (see `decide`).
        if !out.is_empty() {
            let charge = if proven {
                Charge::Proven
            } else if gives_nothing(kind, datagram.len(), out) {
                Charge::GivesNothing
            } else {
                Charge::Unproven
            };
            let allowed = self
                .limits
                .allow(now, ip, charge, self.config.challenge_period);
            if !allowed {
                out.clear();
                self.stats.rate_limited += 1;
                self.stats.breakdown.count_drop(DropReason::RateLimited);
                return Outcome::RateLimited;
            }
            if let Some(kind) = kind {
                self.stats.breakdown.count_answer(protocol, kind);
            }
        }
        self.stats.sent += out.len() as u64;
        self.stats.sent_bytes += out.total_bytes() as u64;
        outcome
    }
}

/// The rate limits of a responder: shared by the workers of a process when a source's
/// datagrams may reach any of them, or its own when the kernel steers each source to one
/// worker ([`Responder::use_own_limits`]).
// Inline on purpose: one per responder (per thread), read for every datagram answered.
#[allow(clippy::large_enum_variant)]
enum Limits {
    Shared {
        proven: Arc<SharedRateLimiter>,
        unproven: Arc<SharedRateLimiter>,
        total: Arc<SharedTokenBucket>,
    },
    Own {
        proven: RateLimiter,
        unproven: RateLimiter,
        total: TokenBucket,
    },
}

impl Limits {
    fn shared(config: &ResponderConfig, secret: [u8; 16], now: Instant) -> Self {
        let table = |rate| SharedRateLimiter::new(rate, config.rate_table_capacity, secret, now);
        Self::Shared {
            proven: Arc::new(table(config.rate)),
            unproven: Arc::new(table(config.unproven_rate)),
            total: Arc::new(SharedTokenBucket::new(config.unproven_total, now)),
        }
    }

    fn own(config: &ResponderConfig, secret: [u8; 16], workers: usize, now: Instant) -> Self {
        let workers = workers.max(1);
        let capacity = (config.rate_table_capacity / workers).max(1);
        // Workers are few (threads); the share of the budget is exact enough in f32.
        let share = 1.0 / workers as f32;
        let total = RateConfig::new(
            config.unproven_total.per_second * share,
            (config.unproven_total.burst * share).max(1.0),
        );
        Self::Own {
            proven: RateLimiter::new(config.rate, capacity, secret, now),
            unproven: RateLimiter::new(config.unproven_rate, capacity, secret, now),
            total: TokenBucket::new(total, now),
        }
    }

    /// The limits of another worker: the same shared tables, or (own limits) copies:
    /// the other worker sees other sources.
    fn for_worker(&self) -> Self {
        match self {
            Self::Shared {
                proven,
                unproven,
                total,
            } => Self::Shared {
                proven: Arc::clone(proven),
                unproven: Arc::clone(unproven),
                total: Arc::clone(total),
            },
            Self::Own {
                proven,
                unproven,
                total,
            } => Self::Own {
                proven: proven.clone(),
                unproven: unproven.clone(),
                total: total.clone(),
            },
        }
    }

    /// Whether answers to `ip` may go out now (and charges them).
    fn allow(&mut self, now: Instant, ip: IpAddr, charge: Charge, period: Duration) -> bool {
        match self {
            Self::Shared {
                proven: p,
                unproven: u,
                total: t,
            } => decide(&mut &**p, &mut &**u, &mut &**t, now, ip, charge, period),
            Self::Own {
                proven: p,
                unproven: u,
                total: t,
            } => decide(p, u, t, now, ip, charge, period),
        }
    }
}

/// A per-source budget, shared or not.
trait SourceBudget {
    fn check(&mut self, now: Instant, ip: IpAddr) -> RateDecision;
    fn knows(&self, now: Instant, ip: IpAddr, within: Duration) -> bool;
}

impl SourceBudget for RateLimiter {
    fn check(&mut self, now: Instant, ip: IpAddr) -> RateDecision {
        RateLimiter::check(self, now, ip)
    }
    fn knows(&self, now: Instant, ip: IpAddr, within: Duration) -> bool {
        RateLimiter::knows(self, now, ip, within)
    }
}

impl SourceBudget for &SharedRateLimiter {
    fn check(&mut self, now: Instant, ip: IpAddr) -> RateDecision {
        SharedRateLimiter::check(self, now, ip)
    }
    fn knows(&self, now: Instant, ip: IpAddr, within: Duration) -> bool {
        SharedRateLimiter::knows(self, now, ip, within)
    }
}

/// The overall budget, shared or not.
trait Bucket {
    fn check(&mut self, now: Instant) -> RateDecision;
}

impl Bucket for TokenBucket {
    fn check(&mut self, now: Instant) -> RateDecision {
        TokenBucket::check(self, now)
    }
}

impl Bucket for &SharedTokenBucket {
    fn check(&mut self, now: Instant) -> RateDecision {
        SharedTokenBucket::check(self, now)
    }
}

/// The largest ratio of a challenge answer to its request that is answered without a
/// per-source limit (security.md §3.2: a challenge may carry a copy of the query).
const MAX_CHALLENGE_RATIO: usize = 3;

/// Which budget an answer is charged to.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Charge {
    /// To a source that proved its address: its own budget.
    Proven,
    /// An answer that proves nothing but gives a spoofer nothing either: no larger than
    /// its request, or a challenge of one datagram at most [`MAX_CHALLENGE_RATIO`] times
    /// its request. Only the overall budget.
    GivesNothing,
    /// Any other answer that proves nothing: the source's budget and the overall one.
    Unproven,
}

/// Whether an unproven answer (`out`, of `kind`, to a request of `request` bytes) is
/// one that a spoofer gains nothing by: no more bytes than the request (sending to the
/// victim directly costs the same), or the protocol's challenge in one datagram of at
/// most [`MAX_CHALLENGE_RATIO`] times the request (the step every real client takes
/// before each query, so that a per-source limit on it is what a spoofer uses to cut
/// the client off).
fn gives_nothing(kind: Option<AnswerKind>, request: usize, out: &Transmits) -> bool {
    let bytes = out.total_bytes();
    bytes <= request
        || (kind == Some(AnswerKind::Challenge)
            && out.len() == 1
            && bytes <= request.saturating_mul(MAX_CHALLENGE_RATIO))
}

/// Answers to a valid challenge ([`Charge::Proven`]) spend the source's own budget,
/// which a spoofer cannot touch.
///
/// Answers that give a spoofer nothing ([`Charge::GivesNothing`]: challenges and
/// answers no larger than their request) spend only the overall budget, never the
/// source's: a spoofer sending in a client's name at any rate would otherwise spend the
/// client's budget, and the client, which asks for a fresh challenge before every
/// query, would be cut off. When a flood of spoofed sources has spent the overall
/// budget, a source that proved its address within `period` (it has a bucket in the
/// proven table, where only proof puts one) still gets them from its per-source budget
/// of unproven answers.
///
/// Every other answer that proves nothing ([`Charge::Unproven`]) spends the source's
/// budget of unproven answers and the overall budget; a source that proved its address
/// within `period` skips the overall one, so that a flood that spends it does not
/// starve the clients that keep querying us. What can be sent toward any address stays
/// capped by the per-source budget.
fn decide(
    p: &mut impl SourceBudget,
    u: &mut impl SourceBudget,
    t: &mut impl Bucket,
    now: Instant,
    ip: IpAddr,
    charge: Charge,
    period: Duration,
) -> bool {
    let ok = |d: RateDecision| d == RateDecision::Allow;
    match charge {
        Charge::Proven => ok(p.check(now, ip)),
        Charge::GivesNothing => {
            ok(t.check(now)) || (p.knows(now, ip, period) && ok(u.check(now, ip)))
        }
        Charge::Unproven => ok(u.check(now, ip)) && (p.knows(now, ip, period) || ok(t.check(now))),
    }
}

/// What one protocol's responder did with one datagram.
struct Handled {
    /// Its outcome.
    outcome: Outcome,
    /// Why it was not answered, if it was not.
    unanswered: Option<Unanswered>,
    /// Whether its answers went to a proven source.
    proven: bool,
    /// The kind of answer, if it answered.
    kind: Option<AnswerKind>,
}

/// One protocol's responder on one datagram.
fn run<R: ProtocolResponder>(
    r: &mut R,
    wrap: fn(R::Outcome) -> Outcome,
    incoming: Incoming<'_>,
    (status, generation): (&Status, u64),
    keys: &mut ChallengeKeys,
    out: &mut Transmits,
) -> Handled {
    let o = r.handle_cached(incoming, status, generation, keys, out);
    Handled {
        outcome: wrap(o),
        unanswered: o.unanswered(),
        proven: r.proven(&o),
        kind: r.answer_kind(&o),
    }
}
