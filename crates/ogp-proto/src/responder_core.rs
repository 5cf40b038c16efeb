//! The shared responder plumbing, below the protocols: the datagram that came in
//! ([`Incoming`]), the datagrams that go out ([`Transmits`]), and the trait every
//! protocol's responder implements ([`ProtocolResponder`]), whose provided
//! [`handle`](ProtocolResponder::handle) does what every protocol does first (the
//! protocol switched off, the request-size limit) before the protocol's own
//! [`answer`](ProtocolResponder::answer). The [`Responder`](crate::responder::Responder)
//! above the protocols tells them apart, runs the rate limiter and the ban hook, and
//! hands each datagram to one of them with the shared challenge keys.

use std::net::IpAddr;
use std::time::Instant;

use crate::guard::ChallengeKeys;
use crate::{Protocol, Status};

/// One received datagram and what the caller already decided about its source.
#[derive(Debug, Clone, Copy)]
pub struct Incoming<'a> {
    /// When it arrived.
    pub now: Instant,
    /// The source IP address (canonical form).
    pub ip: IpAddr,
    /// The datagram.
    pub datagram: &'a [u8],
    /// The ban hook's "answer with an error" decision (silence is decided by the
    /// caller); protocols without such an error stay silent.
    pub reject: bool,
}

impl<'a> Incoming<'a> {
    /// Its parts: when, from which IP, the datagram, and the ban hook's reject.
    pub fn parts(self) -> (Instant, IpAddr, &'a [u8], bool) {
        (self.now, self.ip, self.datagram, self.reject)
    }
}

/// What a protocol answers with and into: the status, the shared challenge keys, and the
/// output datagrams.
#[derive(Debug)]
pub struct Context<'a> {
    /// The status to answer from.
    pub status: &'a Status,
    /// The challenge keys every protocol shares.
    pub keys: &'a mut ChallengeKeys,
    /// Where the answers go.
    pub out: &'a mut Transmits,
    /// The identity of the status snapshot for answer caches: answers built from the
    /// same non-zero generation are built from the same status and may be reused. 0: no
    /// caching (the status is a plain reference of unknown identity).
    pub generation: u64,
}

impl<'a> Context<'a> {
    /// Its parts.
    pub fn parts(self) -> (&'a Status, &'a mut ChallengeKeys, &'a mut Transmits) {
        (self.status, self.keys, self.out)
    }
}

/// Output datagrams of one call, with their buffers kept for reuse.
#[derive(Debug, Default, Clone)]
pub struct Transmits {
    bufs: Vec<Vec<u8>>,
    len: usize,
}

impl Transmits {
    /// Forgets the datagrams (keeps the buffers).
    pub fn clear(&mut self) {
        self.len = 0;
    }

    /// A new, empty datagram buffer to write into.
    #[allow(clippy::indexing_slicing)] // in bounds: a buffer is pushed when none is spare
    pub fn push_buf(&mut self) -> &mut Vec<u8> {
        if self.len == self.bufs.len() {
            self.bufs.push(Vec::with_capacity(512));
        }
        let b = &mut self.bufs[self.len];
        self.len += 1;
        b.clear();
        b
    }

    /// Forgets the datagrams after the first `len` (keeps the buffers): takes back what
    /// was written since [`len`](Self::len) returned `len`.
    pub fn truncate(&mut self, len: usize) {
        self.len = self.len.min(len);
    }

    /// Number of datagrams.
    pub fn len(&self) -> usize {
        self.len
    }

    /// Whether there are none.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// The datagrams in sending order from the `from`-th on (for answer caches).
    pub(crate) fn iter_from(&self, from: usize) -> impl Iterator<Item = &[u8]> {
        self.bufs
            .iter()
            .take(self.len)
            .skip(from)
            .map(Vec::as_slice)
    }

    /// The datagrams in sending order.
    pub fn iter(&self) -> impl Iterator<Item = &[u8]> {
        self.bufs.iter().take(self.len).map(Vec::as_slice)
    }

    /// Total bytes.
    pub fn total_bytes(&self) -> usize {
        self.iter().map(<[u8]>::len).sum()
    }
}

/// Encoded datagrams kept for one status generation ([`Context::generation`]), with
/// their buffers reused from one generation to the next: a hit copies bytes and
/// allocates nothing.
#[derive(Debug, Clone, Default)]
pub(crate) struct Cached {
    generation: u64,
    bufs: Vec<Vec<u8>>,
    len: usize,
    /// A fact about the answer worth returning with it (e.g. "truncated").
    pub(crate) flag: bool,
}

impl Cached {
    /// The datagrams cached for `generation`, if any (never for generation 0).
    pub(crate) fn get(&self, generation: u64) -> Option<&[Vec<u8>]> {
        if generation == 0 || generation != self.generation {
            return None;
        }
        self.bufs.get(..self.len)
    }

    /// Keeps `datagrams` for `generation` (nothing for generation 0).
    pub(crate) fn store<'a>(
        &mut self,
        generation: u64,
        datagrams: impl IntoIterator<Item = &'a [u8]>,
        flag: bool,
    ) {
        if generation == 0 {
            return;
        }
        self.len = 0;
        for d in datagrams {
            if self.len == self.bufs.len() {
                self.bufs.push(Vec::with_capacity(d.len()));
            }
            if let Some(b) = self.bufs.get_mut(self.len) {
                b.clear();
                b.extend_from_slice(d);
            }
            self.len += 1;
        }
        self.generation = generation;
        self.flag = flag;
    }
}

/// Why a datagram got no answer: the reasons [`Stats`](crate::responder::Stats) counts
/// drops by ([`Breakdown::dropped`]). Each is decided where the datagram is dropped: the
/// [`Responder`](crate::responder::Responder) for the first three, the protocol's
/// responder for the others.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
#[non_exhaustive]
pub enum DropReason {
    /// Not a protocol this listener speaks (by its first bytes).
    UnknownProtocol,
    /// Silenced by the ban hook, or from a source it rejects in a protocol without a
    /// "banned" answer.
    Banned,
    /// An answer held back by a rate limit (the source's own or the overall one).
    RateLimited,
    /// A request that needs a valid challenge and carried none or a wrong one, in a
    /// protocol that answers that with silence (GameSpy v3); protocols that answer it
    /// with a new challenge count an answer of kind [`AnswerKind::Challenge`] instead.
    BadChallenge,
    /// A request over the protocol's size limit, or an answer that could not be made to
    /// fit the answer limits.
    Oversized,
    /// Malformed, an answer where a request belongs, or a request type we do not serve.
    Malformed,
    /// The protocol, or this request type, is switched off.
    Disabled,
}

impl DropReason {
    /// Every reason, in [`index`](Self::index) order.
    pub const ALL: [DropReason; 7] = [
        Self::UnknownProtocol,
        Self::Banned,
        Self::RateLimited,
        Self::BadChallenge,
        Self::Oversized,
        Self::Malformed,
        Self::Disabled,
    ];

    /// The number of reasons.
    pub const COUNT: usize = Self::ALL.len();

    /// Its name in metrics and logs: `unknown_protocol`, `banned`, `rate_limited`,
    /// `bad_challenge`, `oversized`, `malformed`, `disabled`.
    pub const fn name(self) -> &'static str {
        match self {
            Self::UnknownProtocol => "unknown_protocol",
            Self::Banned => "banned",
            Self::RateLimited => "rate_limited",
            Self::BadChallenge => "bad_challenge",
            Self::Oversized => "oversized",
            Self::Malformed => "malformed",
            Self::Disabled => "disabled",
        }
    }

    /// Its place in [`ALL`](Self::ALL).
    pub const fn index(self) -> usize {
        match self {
            Self::UnknownProtocol => 0,
            Self::Banned => 1,
            Self::RateLimited => 2,
            Self::BadChallenge => 3,
            Self::Oversized => 4,
            Self::Malformed => 5,
            Self::Disabled => 6,
        }
    }
}

pub use crate::protocol::AnswerKind;

impl AnswerKind {
    /// Every kind, in [`index`](Self::index) order.
    pub const ALL: [AnswerKind; 9] = [
        Self::Challenge,
        Self::Ping,
        Self::Error,
        Self::Info,
        Self::Players,
        Self::Rules,
        Self::Keys,
        Self::Full,
        Self::Commands,
    ];

    /// The number of kinds.
    pub const COUNT: usize = Self::ALL.len();

    /// Its name in metrics and logs: `challenge`, `ping`, `error`, `info`, `players`,
    /// `rules`, `keys`, `full`, `commands`.
    pub const fn name(self) -> &'static str {
        match self {
            Self::Challenge => "challenge",
            Self::Ping => "ping",
            Self::Error => "error",
            Self::Info => "info",
            Self::Players => "players",
            Self::Rules => "rules",
            Self::Keys => "keys",
            Self::Full => "full",
            Self::Commands => "commands",
        }
    }

    /// Its place in [`ALL`](Self::ALL).
    pub const fn index(self) -> usize {
        match self {
            Self::Challenge => 0,
            Self::Ping => 1,
            Self::Error => 2,
            Self::Info => 3,
            Self::Players => 4,
            Self::Rules => 5,
            Self::Keys => 6,
            Self::Full => 7,
            Self::Commands => 8,
        }
    }
}

/// Answers by protocol and kind, and drops by reason: fixed arrays of counters (no
/// allocation), part of [`Stats`](crate::responder::Stats).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub struct Breakdown {
    answers: [[u64; AnswerKind::COUNT]; Protocol::ALL.len()],
    dropped: [u64; DropReason::COUNT],
}

// By hand: the standard library derives `Default` for arrays of up to 32 elements,
// and there are more protocols.
impl Default for Breakdown {
    fn default() -> Self {
        Self {
            answers: [[0; AnswerKind::COUNT]; Protocol::ALL.len()],
            dropped: [0; DropReason::COUNT],
        }
    }
}

impl Breakdown {
    /// Requests of `protocol` answered with an answer of `kind` (the answer was sent:
    /// not held back by a rate limit).
    pub fn answers(&self, protocol: Protocol, kind: AnswerKind) -> u64 {
        self.answers
            .get(protocol.index())
            .and_then(|row| row.get(kind.index()))
            .copied()
            .unwrap_or(0)
    }

    /// Datagrams dropped (no answer sent) for `reason`.
    pub fn dropped(&self, reason: DropReason) -> u64 {
        self.dropped.get(reason.index()).copied().unwrap_or(0)
    }

    /// Every answer counter: each protocol with each kind it answers with
    /// ([`AnswerKind::of`]), zeros included.
    pub fn answer_counts(&self) -> impl Iterator<Item = (Protocol, AnswerKind, u64)> + '_ {
        Protocol::ALL.into_iter().flat_map(move |p| {
            AnswerKind::of(p)
                .iter()
                .map(move |&k| (p, k, self.answers(p, k)))
        })
    }

    /// Every drop counter, zeros included.
    pub fn drop_counts(&self) -> impl Iterator<Item = (DropReason, u64)> + '_ {
        DropReason::ALL.into_iter().map(|r| (r, self.dropped(r)))
    }

    /// Adds `other`'s counts to these.
    pub fn merge(&mut self, other: &Breakdown) {
        for (row, o) in self.answers.iter_mut().zip(other.answers.iter()) {
            for (n, m) in row.iter_mut().zip(o.iter()) {
                *n += m;
            }
        }
        for (n, m) in self.dropped.iter_mut().zip(other.dropped.iter()) {
            *n += m;
        }
    }

    /// Counts one answer.
    pub(crate) fn count_answer(&mut self, protocol: Protocol, kind: AnswerKind) {
        if let Some(n) = self
            .answers
            .get_mut(protocol.index())
            .and_then(|row| row.get_mut(kind.index()))
        {
            *n += 1;
        }
    }

    /// Counts one drop.
    pub(crate) fn count_drop(&mut self, reason: DropReason) {
        if let Some(n) = self.dropped.get_mut(reason.index()) {
            *n += 1;
        }
    }
}

/// Why a protocol did not answer a datagram: the counted [`DropReason`] and a detail for
/// logs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub struct Unanswered {
    /// The reason it is counted under.
    pub reason: DropReason,
    /// What exactly (for logs and tests).
    pub why: &'static str,
}

impl Unanswered {
    /// Not answered for `reason`, in detail `why`.
    pub const fn new(reason: DropReason, why: &'static str) -> Self {
        Self { reason, why }
    }

    /// [`DropReason::Malformed`].
    pub const fn malformed(why: &'static str) -> Self {
        Self::new(DropReason::Malformed, why)
    }

    /// [`DropReason::Oversized`].
    pub const fn oversized(why: &'static str) -> Self {
        Self::new(DropReason::Oversized, why)
    }

    /// [`DropReason::Banned`].
    pub const fn banned(why: &'static str) -> Self {
        Self::new(DropReason::Banned, why)
    }

    /// [`DropReason::BadChallenge`].
    pub const fn bad_challenge(why: &'static str) -> Self {
        Self::new(DropReason::BadChallenge, why)
    }

    /// [`DropReason::Disabled`].
    pub const fn disabled(why: &'static str) -> Self {
        Self::new(DropReason::Disabled, why)
    }
}

impl std::fmt::Display for Unanswered {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{} ({})", self.why, self.reason.name())
    }
}

/// What a protocol responder's outcome says beyond its own variants: that a datagram was
/// ignored, and why.
pub trait ProtocolOutcome: Copy + std::fmt::Debug {
    /// The outcome of a datagram ignored for `why`.
    fn ignored(why: Unanswered) -> Self;

    /// Why the datagram was ignored, if it was.
    fn unanswered(&self) -> Option<Unanswered>;

    /// Whether this outcome is "ignored".
    fn is_ignored(&self) -> bool {
        self.unanswered().is_some()
    }
}

/// Implements [`ProtocolOutcome`] for outcome enums with an `Ignored(Unanswered)`
/// variant.
macro_rules! ignorable_outcome {
    ($t:ty) => {
        impl $crate::responder_core::ProtocolOutcome for $t {
            fn ignored(why: $crate::responder_core::Unanswered) -> Self {
                Self::Ignored(why)
            }

            fn unanswered(&self) -> Option<$crate::responder_core::Unanswered> {
                match self {
                    Self::Ignored(why) => Some(*why),
                    _ => None,
                }
            }
        }
    };
}
pub(crate) use ignorable_outcome;

/// One protocol's side of the responder: answers the datagrams its first bytes identify,
/// from one status, with the shared challenge keys.
pub trait ProtocolResponder {
    /// What it did with a datagram (for logs and counters).
    type Outcome: ProtocolOutcome;

    /// Whether the answers of this outcome went to a source that proved it receives at
    /// its address (a valid challenge or token). Such answers are charged to the
    /// source's own budget, which a spoofer using its address cannot spend; every other
    /// answer to the overall budget of answers that prove nothing, and, unless it gives a
    /// spoofer nothing (a challenge of at most 3× the request, or no larger than the
    /// request), to the source's budget of those.
    fn proven(&self, outcome: &Self::Outcome) -> bool;

    /// The kind of answer this outcome sent, if it answered.
    fn answer_kind(&self, outcome: &Self::Outcome) -> Option<AnswerKind>;

    /// The largest request it reads; larger ones are ignored unread.
    fn max_request_bytes(&self) -> usize;

    /// Whether the protocol is switched on.
    fn enabled(&self) -> bool {
        true
    }

    /// Answers one datagram of this protocol (size and switch already checked), leaving
    /// the answers in `out`.
    fn answer(&mut self, incoming: Incoming<'_>, cx: Context<'_>) -> Self::Outcome;

    /// Handles one datagram of this protocol: ignored when the protocol is off or the
    /// datagram is larger than [`max_request_bytes`](Self::max_request_bytes), else
    /// [`answer`](Self::answer)ed.
    fn handle(
        &mut self,
        incoming: Incoming<'_>,
        status: &Status,
        keys: &mut ChallengeKeys,
        out: &mut Transmits,
    ) -> Self::Outcome {
        self.handle_cached(incoming, status, 0, keys, out)
    }

    /// [`handle`](Self::handle) with the status snapshot's generation (its identity):
    /// answers built for the same non-zero generation may be reused with only the
    /// per-query bytes patched in; 0 caches nothing.
    fn handle_cached(
        &mut self,
        incoming: Incoming<'_>,
        status: &Status,
        generation: u64,
        keys: &mut ChallengeKeys,
        out: &mut Transmits,
    ) -> Self::Outcome {
        if !self.enabled() {
            return Self::Outcome::ignored(Unanswered::disabled("protocol switched off"));
        }
        if incoming.datagram.len() > self.max_request_bytes() {
            return Self::Outcome::ignored(Unanswered::oversized("request larger than the limit"));
        }
        self.answer(
            incoming,
            Context {
                status,
                keys,
                out,
                generation,
            },
        )
    }
}
