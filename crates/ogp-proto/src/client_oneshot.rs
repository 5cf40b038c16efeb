//! The one-request datagram shape of the client core: a protocol that asks one datagram
//! and takes one datagram back (CS2D, Satisfactory's lightweight query, Tribes 1 and
//! Starsiege, Mafia II's multiplayer mods, Savage 2, rFactor's `rF_S`, Armagetron
//! Advanced, Ventrilo) tells the machine
//! only its request and how to read a reply ([`OneShot`]); the retries, the timers, the
//! events and the result are the core's [`Exchange`]. No I/O; time is passed in.
//!
//! A datagram is one of five things ([`Read`]): the answer; not the reply to our request
//! (another magic, another challenge or cookie: dropped, the query goes on); our
//! reply's header with a body that does not decode (dropped as malformed: the query goes
//! on, and if nothing better comes the error says what was wrong); a part of a reply in
//! several datagrams (kept by [`Parts`] until the rest comes: Ventrilo); or parts that
//! cannot make a reply (the query fails).
//!
//! Also here: [`Strings`], the string reader these small formats share (a length byte
//! or a NUL, UTF-8 or else Latin-1, the first guess remembered for one warning).

use std::time::Instant;

use crate::client_core::{Event, Exchange, Timing};
use crate::error::{DecodeError, DecodeErrorKind};
use crate::protocol::Protocol;
use crate::reader::Reader;
use crate::text::{decode_utf8_or_latin1, Text};
use crate::{DecodeWarning, Status};

/// What one datagram from the server is (a value returned and consumed at once: the
/// size of its answer does not matter).
#[derive(Debug)]
#[allow(clippy::large_enum_variant)]
pub(crate) enum Read<D> {
    /// The answer: its status, details and warnings.
    Answer(Status, D, Vec<DecodeWarning>),
    /// Not the reply to our request: why it was dropped.
    NotOurs(&'static str),
    /// The reply's header, but the rest does not decode.
    Malformed(DecodeError),
    /// A part of a reply in several datagrams, kept until the rest comes ([`Parts`]).
    Part,
    /// Parts that cannot make a reply (too many, too large): the query fails.
    Failed(PartsError),
}

impl<D> Read<D> {
    /// A decoder's result as what the datagram is: an error in its first `header` bytes
    /// (the magic) is `not_ours`, a later one is malformed; a reply is the answer that
    /// `answer` makes of it (its status and warnings).
    pub(crate) fn decoded<R>(
        got: Result<R, DecodeError>,
        header: usize,
        not_ours: &'static str,
        answer: impl FnOnce(R) -> (Status, D, Vec<DecodeWarning>),
    ) -> Self {
        match got {
            Ok(r) => {
                let (status, details, warnings) = answer(r);
                Read::Answer(status, details, warnings)
            }
            Err(e) if e.kind == DecodeErrorKind::BadMagic || e.offset < header => {
                Read::NotOurs(not_ours)
            }
            Err(e) => Read::Malformed(e),
        }
    }
}

/// A protocol of one request and one reply.
pub(crate) trait OneShot {
    /// What an answer says beyond the status.
    type Details;
    /// What the request asks, for the wire events (`"info"`, `"status"`).
    const WHAT: &'static str;
    /// The protocol's state for one query; `id` is random (a challenge or cookie).
    fn new(id: u32) -> Self;
    /// Writes the request into `out` (empty).
    fn request(&self, out: &mut Vec<u8>);
    /// Writes a datagram to send just before each request into `out` (empty), if the
    /// protocol has one: Armagetron Advanced's small-info request, without which its
    /// server ignores the request. None by default.
    fn primer(&self, _out: &mut Vec<u8>) -> bool {
        false
    }
    /// What the primer asks, for the wire events.
    const PRIMER: &'static str = "primer";
    /// Reads one datagram from the server (a reply in several parts keeps them).
    fn read(&mut self, datagram: &[u8]) -> Read<Self::Details>;
}

/// The machine of a [`OneShot`] protocol: its request, resent by the core's timers until
/// a reply is read.
#[derive(Debug, Clone)]
pub(crate) struct OneShotMachine<P: OneShot> {
    p: P,
    pub(crate) x: Exchange<P::Details>,
    /// Datagrams and bytes of the parts kept so far.
    parts: (usize, usize),
    /// Whether the request follows the primer just sent.
    request_next: bool,
}

impl<P: OneShot> OneShotMachine<P> {
    /// A query of `protocol` starting at `now`.
    pub(crate) fn new(protocol: Protocol, p: P, timing: &Timing, now: Instant) -> Self {
        Self {
            p,
            x: Exchange::new(protocol, timing, now),
            parts: (0, 0),
            request_next: false,
        }
    }

    /// [`QueryDriver::poll_transmit_into`](crate::client_core::QueryDriver::poll_transmit_into).
    /// A primer is sent as the attempt; the request right after it, as an extra datagram.
    pub(crate) fn poll_transmit_into(&mut self, now: Instant, out: &mut Vec<u8>) -> bool {
        if std::mem::take(&mut self.request_next) && !self.x.is_done() {
            out.clear();
            self.p.request(out);
            self.x.sent_extra(Event::Sent {
                what: P::WHAT,
                bytes: out.len(),
                challenge: None,
                id: None,
            });
            return true;
        }
        if !self.x.due_datagram(out) {
            return false;
        }
        if self.p.primer(out) {
            self.request_next = true;
            self.x.sent_query(now, out, P::PRIMER, None, None);
            return true;
        }
        self.p.request(out);
        self.x.sent_query(now, out, P::WHAT, None, None);
        true
    }

    /// [`QueryDriver::handle_datagram`](crate::client_core::QueryDriver::handle_datagram).
    pub(crate) fn handle_datagram(&mut self, now: Instant, datagram: &[u8]) {
        if self.x.is_done() {
            return;
        }
        let bytes = datagram.len();
        match self.p.read(datagram) {
            Read::Answer(status, details, warnings) => {
                let (datagrams, bytes) = (self.parts.0 + 1, self.parts.1.saturating_add(bytes));
                self.x
                    .took_replies(now, datagrams, bytes, P::WHAT, warnings.iter());
                self.x.succeed(status, details);
            }
            Read::NotOurs(why) => self.x.dropped(bytes, why),
            Read::Malformed(e) => self.x.undecodable(e, bytes, "a malformed reply"),
            Read::Part => {
                self.parts = (self.parts.0 + 1, self.parts.1.saturating_add(bytes));
                self.x.ping(now);
            }
            Read::Failed(e) => self.x.fail_reassembly(e),
        }
    }
}

/// Implements [`QueryDriver`](crate::client_core::QueryDriver) for a protocol's
/// `QueryMachine`, a struct whose field `m` is a [`OneShotMachine`].
macro_rules! oneshot_driver {
    ($machine:ty, $details:ty) => {
        impl $crate::client_core::QueryDriver for $machine {
            type Details = $details;

            fn poll_transmit_into(&mut self, now: std::time::Instant, out: &mut Vec<u8>) -> bool {
                self.m.poll_transmit_into(now, out)
            }

            fn handle_datagram(&mut self, now: std::time::Instant, datagram: &[u8]) {
                self.m.handle_datagram(now, datagram);
            }

            fn poll_timeout(&self) -> Option<std::time::Instant> {
                self.m.x.poll_timeout()
            }

            fn handle_timeout(&mut self, now: std::time::Instant) {
                if self.m.x.handle_timeout(now) == Some($crate::client_core::Timeout::GiveUp) {
                    self.m.x.give_up(None);
                }
            }

            fn take_result(
                &mut self,
            ) -> Option<
                Result<$crate::client_core::Answer<$details>, $crate::client_core::QueryError>,
            > {
                self.m.x.take_result()
            }

            fn last_dropped(&self) -> Option<&'static str> {
                self.m.x.last_dropped()
            }
        }
    };
}
pub(crate) use oneshot_driver;

/// A protocol folder's `client::{QueryOptions, QueryMachine}` for the [`OneShot`]
/// protocol `$p` (its `Details` are `$details`): no options of its own, the machine a
/// [`OneShotMachine`], started with a random id.
macro_rules! oneshot_machine {
    ($protocol:expr, $p:ty, $details:ty) => {
        /// This protocol's own settings of one query (none; the timers are
        /// [`Timing`](crate::client_core::Timing)).
        #[derive(Debug, Clone, PartialEq, Eq, Default)]
        #[non_exhaustive]
        pub struct QueryOptions {}

        /// One query of one server: the request, resent by the core's timers until a
        /// reply is read. Drive it through
        /// [`QueryDriver`](crate::client_core::QueryDriver).
        #[derive(Debug, Clone)]
        pub struct QueryMachine {
            m: $crate::client_oneshot::OneShotMachine<$p>,
        }

        impl QueryMachine {
            /// A query starting at `now`; `id` (pick it at random) goes in the request
            /// where the protocol echoes something.
            pub fn new(
                opts: QueryOptions,
                timing: $crate::client_core::Timing,
                id: u32,
                now: std::time::Instant,
            ) -> Self {
                let QueryOptions {} = opts;
                Self {
                    m: $crate::client_oneshot::OneShotMachine::new(
                        $protocol,
                        <$p as $crate::client_oneshot::OneShot>::new(id),
                        &timing,
                        now,
                    ),
                }
            }
        }

        $crate::client_oneshot::oneshot_driver!(QueryMachine, $details);
        $crate::client_core::start_query!(QueryOptions);
    };
}
pub(crate) use oneshot_machine;

/// Why numbered parts cannot make a reply.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum PartsError {
    /// A reply of more parts than [`Parts::MAX_PARTS`].
    TooMany(u16),
    /// Parts of more bytes than [`Parts::MAX_BYTES`].
    TooLarge,
}

impl std::fmt::Display for PartsError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Self::TooMany(n) => write!(f, "a reply of {n} packets, at most {}", Parts::MAX_PARTS),
            Self::TooLarge => write!(f, "a reply of more than {} bytes", Parts::MAX_BYTES),
        }
    }
}

/// What [`Parts::push`] made of a part.
#[derive(Debug, PartialEq, Eq)]
pub(crate) enum Pushed {
    /// Kept, or a duplicate: more parts are awaited.
    Waiting,
    /// The last part: the reply's bytes, in part order.
    Complete(Vec<u8>),
    /// A number at or past the count: dropped.
    BadNumber,
}

/// The parts of one reply sent as numbered datagrams, each naming the count (Ventrilo):
/// kept in any order, duplicates (a reply resent) ignored, joined when all are in. A part
/// naming another count starts a new reply. At most [`Parts::MAX_PARTS`] parts and
/// [`Parts::MAX_BYTES`] bytes are held.
#[derive(Debug, Clone, Default)]
pub(crate) struct Parts {
    count: u16,
    held: Vec<Option<Vec<u8>>>,
    bytes: usize,
}

impl Parts {
    /// The most parts of one reply.
    pub(crate) const MAX_PARTS: u16 = 64;
    /// The most bytes held.
    pub(crate) const MAX_BYTES: usize = 64 * 1024;

    /// Adds part `number` of `count`.
    pub(crate) fn push(
        &mut self,
        number: u16,
        count: u16,
        body: &[u8],
    ) -> Result<Pushed, PartsError> {
        if count > Self::MAX_PARTS {
            return Err(PartsError::TooMany(count));
        }
        if number >= count {
            return Ok(Pushed::BadNumber);
        }
        if count != self.count {
            *self = Self {
                count,
                held: vec![None; usize::from(count)],
                bytes: 0,
            };
        }
        let Some(slot) = self.held.get_mut(usize::from(number)) else {
            return Ok(Pushed::BadNumber);
        };
        if slot.is_some() {
            return Ok(Pushed::Waiting);
        }
        let bytes = self.bytes.saturating_add(body.len());
        if bytes > Self::MAX_BYTES {
            return Err(PartsError::TooLarge);
        }
        *slot = Some(body.to_vec());
        self.bytes = bytes;
        if self.held.iter().any(Option::is_none) {
            return Ok(Pushed::Waiting);
        }
        let joined = self.held.iter().flatten().flatten().copied().collect();
        *self = Self::default();
        Ok(Pushed::Complete(joined))
    }
}

/// A [`OneShot`] protocol `$name` of a fixed request: it sends `$request` every attempt
/// and reads each datagram with `$decode` (a decoder error in the first `$header` bytes
/// means not ours: `$not_ours`), the answer's status from the module's
/// `reply_to_status`, its details the reply (a `Details` with its `warnings`).
macro_rules! fixed_request {
    ($name:ident, $what:expr, $request:expr, $decode:expr, $header:expr, $not_ours:expr) => {
        #[doc = concat!("`", stringify!($name), "` on the one-request shape.")]
        #[derive(Debug, Clone)]
        pub struct $name;

        impl $crate::client_oneshot::OneShot for $name {
            type Details = Details;
            const WHAT: &'static str = $what;

            fn new(_id: u32) -> Self {
                Self
            }

            fn request(&self, out: &mut Vec<u8>) {
                out.extend_from_slice(&$request);
            }

            fn read(&mut self, datagram: &[u8]) -> $crate::client_oneshot::Read<Details> {
                $crate::client_oneshot::Read::decoded($decode(datagram), $header, $not_ours, |r| {
                    (reply_to_status(&r), r.clone(), r.warnings)
                })
            }
        }
    };
}
pub(crate) use fixed_request;

/// The string reader of the small formats: strings after a length byte or before a NUL,
/// read as UTF-8 when they are and else as Latin-1 (these servers announce no charset);
/// the offset of the first string read as Latin-1 is kept for one warning.
#[derive(Debug, Default)]
pub(crate) struct Strings {
    latin1_at: Option<usize>,
}

impl Strings {
    /// `b`, found at `at`, as text.
    pub(crate) fn text(&mut self, at: usize, b: &[u8]) -> Text {
        let (t, guessed) = decode_utf8_or_latin1(std::str::from_utf8(b).map_err(|_| b));
        if guessed {
            self.latin1_at.get_or_insert(at);
        }
        t
    }

    /// A string after its length in one byte.
    pub(crate) fn pstr8(
        &mut self,
        r: &mut Reader<'_>,
        field: &'static str,
    ) -> Result<Text, DecodeError> {
        let n = r.u8(field)?;
        let at = r.offset();
        let b = r.take(usize::from(n), field)?;
        Ok(self.text(at, b))
    }

    /// A string after a length byte that counts one more than the text (Mafia II's).
    pub(crate) fn pstr8_plus1(
        &mut self,
        r: &mut Reader<'_>,
        field: &'static str,
    ) -> Result<Text, DecodeError> {
        let at = r.offset();
        let n = r.u8(field)?;
        let Some(n) = n.checked_sub(1) else {
            return Err(DecodeError::new(
                at,
                field,
                DecodeErrorKind::Invalid("a length of 0 (it counts its own byte)"),
            ));
        };
        let at = r.offset();
        let b = r.take(usize::from(n), field)?;
        Ok(self.text(at, b))
    }

    /// A string ending at a NUL.
    pub(crate) fn cstr(
        &mut self,
        r: &mut Reader<'_>,
        field: &'static str,
    ) -> Result<Text, DecodeError> {
        let at = r.offset();
        let b = r.cstr(field)?;
        Ok(self.text(at, b))
    }

    /// A string in a field of `n` bytes, up to its first NUL (rFactor's NUL-padded
    /// fields).
    pub(crate) fn fixed(
        &mut self,
        r: &mut Reader<'_>,
        n: usize,
        field: &'static str,
    ) -> Result<Text, DecodeError> {
        let at = r.offset();
        let b = r.take(n, field)?;
        let b = b.split(|&c| c == 0).next().unwrap_or_default();
        Ok(self.text(at, b))
    }

    /// A string ending at a NUL or at the end of the datagram.
    pub(crate) fn cstr_or_rest(&mut self, r: &mut Reader<'_>) -> Text {
        let at = r.offset();
        let rest = r.take_rest();
        let b = rest.split(|&c| c == 0).next().unwrap_or_default();
        self.text(at, b)
    }

    /// The warning to give, if a string was read as Latin-1.
    pub(crate) fn warnings(&self) -> Vec<DecodeWarning> {
        self.latin1_at
            .map(|offset| DecodeWarning {
                offset,
                field: "string",
                message: "not UTF-8: read as Latin-1",
            })
            .into_iter()
            .collect()
    }
}

/// Writes `s` after its length in one byte, cut at 255 bytes (replies built by tests,
/// replays and fuzz checks).
pub(crate) fn put_pstr8(out: &mut Vec<u8>, s: &str) {
    let b = s.as_bytes();
    let b = b.get(..b.len().min(255)).unwrap_or_default();
    out.push(u8::try_from(b.len()).unwrap_or(u8::MAX));
    out.extend_from_slice(b);
}
