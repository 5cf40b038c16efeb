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
use crate::Status;

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

    /// The datagrams in sending order.
    pub fn iter(&self) -> impl Iterator<Item = &[u8]> {
        self.bufs.iter().take(self.len).map(Vec::as_slice)
    }

    /// Total bytes.
    pub fn total_bytes(&self) -> usize {
        self.iter().map(<[u8]>::len).sum()
    }
}

/// What a protocol responder's outcome says beyond its own variants: that a datagram was
/// ignored, and why.
pub trait ProtocolOutcome: Copy + std::fmt::Debug {
    /// The outcome of a datagram ignored for `why`.
    fn ignored(why: &'static str) -> Self;

    /// Whether this outcome is "ignored".
    fn is_ignored(&self) -> bool;
}

/// Implements [`ProtocolOutcome`] for outcome enums with an `Ignored(&'static str)`
/// variant.
macro_rules! ignorable_outcome {
    ($t:ty) => {
        impl $crate::responder_core::ProtocolOutcome for $t {
            fn ignored(why: &'static str) -> Self {
                Self::Ignored(why)
            }

            fn is_ignored(&self) -> bool {
                matches!(self, Self::Ignored(_))
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
    /// answer (challenges, errors, answers without a challenge) to a budget of its own.
    fn proven(&self, outcome: &Self::Outcome) -> bool;

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
        if !self.enabled() {
            return Self::Outcome::ignored("protocol switched off");
        }
        if incoming.datagram.len() > self.max_request_bytes() {
            return Self::Outcome::ignored("request larger than the limit");
        }
        self.answer(incoming, Context { status, keys, out })
    }
}
