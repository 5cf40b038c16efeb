//! Querying a server in any protocol: one options type, one machine, one answer, one
//! error.
//!
//! ```
//! use std::time::Instant;
//! use ogp_proto::client::{Machine, Options, QueryDriver};
//! use ogp_proto::Protocol;
//!
//! let now = Instant::now();
//! let mut m = Machine::new(Protocol::A2s, &Options::default(), 0x1234_5678, now);
//! let first = m.poll_transmit(now).expect("A2S_INFO is due at once");
//! assert_eq!(&first[..5], b"\xff\xff\xff\xffT");
//! // send it, feed every reply to m.handle_datagram, call m.handle_timeout when
//! // m.poll_timeout() has passed, until m.take_result() gives the Answer or QueryError.
//! ```
//!
//! Each protocol's state machine lives in its own folder (`ogp::client`,
//! `a2s::client`, …) and embeds the shared core: timers and retries ([`Timing`]),
//! challenge resends, capped events and warnings, and the result. [`Machine`] puts them
//! behind one type for I/O code that should not care which protocol it drives (the
//! tokio client, the scanner). A machine over TCP says so ([`Transport::Stream`]) and
//! is driven with connection events instead of datagrams (see
//! [`QueryDriver::handle_stream`]). The variants are generated from the table of
//! protocols in [`crate::protocol`]: adding a protocol adds its machine here.

use std::net::SocketAddr;
use std::time::Instant;

use crate::protocol::Protocol;

use crate::client_core::StartQuery;
pub use crate::client_core::{
    Event, Fault, QueryDriver, QueryError, Rejection, StreamEvent, StreamFate, Timing, TlsRequest,
    Transport, MAX_EVENTS, MAX_WARNINGS,
};

/// A server's answer: protocol, address, ping, datagrams and bytes, status, warnings,
/// wire events, and the protocol's own [`Details`] (or one protocol's details, `D`,
/// from its own machine).
pub type Answer<D = Details> = crate::client_core::Answer<D>;

/// Generates [`Options`], [`Details`], [`Machine`] and their plumbing from the table of
/// protocols ([`crate::protocol`]): each folder's `client::{QueryOptions, Details,
/// QueryMachine}`.
macro_rules! registry {
    ($( $(#[cfg($c:meta)])? $variant:ident => $module:ident $(, serve($cf:ident, $rs:ident, $oc:ident))?; )*) => {
        /// Settings of a query in any protocol: the shared timers, and each protocol's
        /// own part.
        #[derive(Debug, Clone, PartialEq, Eq, Default)]
        #[non_exhaustive]
        pub struct Options {
            /// Timers, retries and the challenge-resend cap (every protocol).
            pub timing: Timing,
            $(
                $(#[cfg($c)])?
                #[doc = concat!("[`Protocol::", stringify!($variant), "`]'s part.")]
                pub $module: crate::$module::client::QueryOptions,
            )*
        }

        /// What an answer says beyond the status, per protocol.
        #[derive(Debug, Clone, PartialEq)]
        #[non_exhaustive]
        pub enum Details {
            $(
                $(#[cfg($c)])?
                #[doc = concat!("[`Protocol::", stringify!($variant), "`].")]
                $variant(Box<crate::$module::client::Details>),
            )*
            /// None: a probe's answer ([`Machine::probe`]), which says only that the
            /// server answered the protocol's first request (a challenge counts); its
            /// status is empty.
            Probed,
        }

        /// Any protocol's client state machine, driven through [`QueryDriver`].
        #[derive(Debug)]
        #[non_exhaustive]
        pub enum Machine {
            $(
                $(#[cfg($c)])?
                #[doc = concat!("[`Protocol::", stringify!($variant), "`].")]
                $variant(Box<crate::$module::client::QueryMachine>),
            )*
            /// A protocol this build does not speak (its cargo feature is off): the
            /// query fails at once.
            Unavailable(Protocol, Option<QueryError>),
            /// A probe: whether the server speaks the protocol ([`Machine::probe`]).
            Probe(Box<Probing>),
        }

        impl Machine {
            /// A query of `protocol` starting at `now`. `id` becomes the RequestID or
            /// session id where the protocol has one: pick it at random, it is what
            /// tells our answers from spoofed or stale ones.
            pub fn new(protocol: Protocol, opts: &Options, id: u32, now: Instant) -> Self {
                match protocol {
                    $(
                        $(#[cfg($c)])?
                        Protocol::$variant => Self::$variant(Box::new(
                            <crate::$module::client::QueryMachine as StartQuery>::start(
                                opts.$module.clone(),
                                opts.timing,
                                id,
                                now,
                            ),
                        )),
                    )*
                    #[allow(unreachable_patterns)]
                    other => Self::Unavailable(
                        other,
                        Some(QueryError::Options {
                            message: "this build does not speak that protocol",
                        }),
                    ),
                }
            }

            /// The protocol it speaks.
            pub fn protocol(&self) -> Protocol {
                match self {
                    $( $(#[cfg($c)])? Self::$variant(_) => Protocol::$variant, )*
                    Self::Unavailable(p, _) => *p,
                    Self::Probe(m) => m.inner.protocol(),
                }
            }
        }

        impl QueryDriver for Machine {
            type Details = Details;

            fn poll_transmit_into(&mut self, now: Instant, out: &mut Vec<u8>) -> bool {
                match self {
                    $( $(#[cfg($c)])? Self::$variant(m) => m.poll_transmit_into(now, out), )*
                    Self::Unavailable(..) => false,
                    Self::Probe(m) => m.poll_transmit_into(now, out),
                }
            }

            fn handle_datagram(&mut self, now: Instant, datagram: &[u8]) {
                match self {
                    $( $(#[cfg($c)])? Self::$variant(m) => m.handle_datagram(now, datagram), )*
                    Self::Unavailable(..) => {}
                    Self::Probe(m) => m.handle_datagram(now, datagram),
                }
            }

            fn poll_timeout(&self) -> Option<Instant> {
                match self {
                    $( $(#[cfg($c)])? Self::$variant(m) => m.poll_timeout(), )*
                    Self::Unavailable(..) => None,
                    Self::Probe(m) => m.poll_timeout(),
                }
            }

            fn handle_timeout(&mut self, now: Instant) {
                match self {
                    $( $(#[cfg($c)])? Self::$variant(m) => m.handle_timeout(now), )*
                    Self::Unavailable(..) => {}
                    Self::Probe(m) => m.handle_timeout(now),
                }
            }

            fn transport(&self) -> Transport {
                match self {
                    $( $(#[cfg($c)])? Self::$variant(m) => m.transport(), )*
                    Self::Unavailable(..) => Transport::Datagram,
                    Self::Probe(m) => m.transport(),
                }
            }

            fn handle_stream(&mut self, now: Instant, event: StreamEvent<'_>) {
                match self {
                    $( $(#[cfg($c)])? Self::$variant(m) => m.handle_stream(now, event), )*
                    Self::Unavailable(..) => {}
                    Self::Probe(m) => m.handle_stream(now, event),
                }
            }

            fn close_due(&self) -> bool {
                match self {
                    $( $(#[cfg($c)])? Self::$variant(m) => m.close_due(), )*
                    Self::Unavailable(..) => true,
                    Self::Probe(m) => m.close_due(),
                }
            }

            fn last_dropped(&self) -> Option<&'static str> {
                match self {
                    $( $(#[cfg($c)])? Self::$variant(m) => m.last_dropped(), )*
                    Self::Unavailable(..) => None,
                    Self::Probe(m) => m.last_dropped(),
                }
            }

            fn tls(&self) -> Option<$crate::client_core::TlsRequest> {
                match self {
                    $( $(#[cfg($c)])? Self::$variant(m) => m.tls(), )*
                    Self::Unavailable(..) => None,
                    Self::Probe(m) => m.tls(),
                }
            }

            fn stream_buffer(&self, more: usize) -> usize {
                match self {
                    $( $(#[cfg($c)])? Self::$variant(m) => m.stream_buffer(more), )*
                    Self::Unavailable(..) => 0,
                    Self::Probe(m) => m.stream_buffer(more),
                }
            }

            fn heard_from(&self) -> bool {
                match self {
                    $( $(#[cfg($c)])? Self::$variant(m) => m.heard_from(), )*
                    Self::Unavailable(..) => false,
                    Self::Probe(m) => m.heard_from(),
                }
            }

            fn take_result(&mut self) -> Option<Result<Answer, QueryError>> {
                match self {
                    $(
                        $(#[cfg($c)])?
                        Self::$variant(m) => Some(
                            m.take_result()?
                                .map(|a| a.map_details(|d| Details::$variant(Box::new(d)))),
                        ),
                    )*
                    Self::Unavailable(_, e) => e.take().map(Err),
                    Self::Probe(m) => m.take_result(),
                }
            }
        }
    };
}

crate::protocol::for_each_protocol!(registry);

impl Options {
    /// The default options with these timers.
    pub fn with_timing(timing: Timing) -> Self {
        Self {
            timing,
            ..Self::default()
        }
    }
}

impl Machine {
    /// The result, once, with the queried address filled in.
    pub fn take_answer(&mut self, addr: SocketAddr) -> Option<Result<Answer, QueryError>> {
        let mut r = self.take_result()?;
        if let Ok(a) = &mut r {
            a.addr = Some(addr);
        }
        Some(r)
    }
}

impl Machine {
    /// A probe of `protocol` starting at `now`: whether the server speaks it, at the
    /// cost of one exchange. The protocol's first request goes out (the first datagram
    /// of a send of several), resent on silence with the query's retries, and never
    /// the requests of its later steps: a silent server fails the probe after
    /// `1 + retries` datagrams, where a query falls back to its next request (Quake
    /// III's `getstatus` after `getinfo`, Unreal 2's rules and players after its
    /// server info). The probe ends with an answer as soon as the server sends
    /// anything the protocol's machine takes (a challenge counts; see
    /// [`QueryDriver::heard_from`]): an answer whose [`Details`] are
    /// [`Details::Probed`] and whose status is empty, unless that first reply was the
    /// whole answer. A machine that cannot tell ([`QueryDriver::heard_from`] false:
    /// stream protocols, machines with timers of their own) is queried in full.
    pub fn probe(protocol: Protocol, opts: &Options, id: u32, now: Instant) -> Self {
        let inner = Self::new(protocol, opts, id, now);
        // machines that cannot tell they heard from the server are not cut short
        let max_sends = (inner.transport() == Transport::Datagram)
            .then(|| opts.timing.retries.saturating_add(1));
        Self::Probe(Box::new(Probing {
            inner,
            last_sent: None,
            sends: 0,
            max_sends,
            result: None,
            done: false,
            scratch: Vec::new(),
        }))
    }
}

/// A [`Machine::probe`]: the protocol's machine, of which only the first datagram of
/// each send goes out and which ends at the server's first reply of its protocol.
#[derive(Debug)]
pub struct Probing {
    inner: Machine,
    /// When the last datagram went out (the ping is measured from it).
    last_sent: Option<Instant>,
    /// Sends so far, and at most (`None`: as many as the query's).
    sends: u32,
    max_sends: Option<u32>,
    /// The probe's answer, once the server was heard from.
    result: Option<Result<Answer, QueryError>>,
    /// A result was reached (and maybe taken): nothing more is sent or taken.
    done: bool,
    /// The datagrams of a send after its first, written and not sent.
    scratch: Vec<u8>,
}

impl Probing {
    /// After the inner machine took a datagram or a timeout: its own result (a first
    /// reply that was the whole answer, or a failure), else an answer once it heard
    /// from the server.
    fn settle(&mut self, now: Instant, bytes: usize) {
        if self.done {
            return;
        }
        let heard = self.inner.heard_from();
        match self.inner.take_result() {
            Some(Ok(a)) => self.result = Some(Ok(a)),
            Some(Err(_)) | None if heard => {
                let mut a = Answer::new(
                    self.inner.protocol(),
                    crate::Status::default(),
                    Details::Probed,
                );
                let sent = self.last_sent.unwrap_or(now);
                a.ping_ms = now.saturating_duration_since(sent).as_secs_f64() * 1000.0;
                a.datagrams = 1;
                a.bytes = bytes;
                self.result = Some(Ok(a));
            }
            r => self.result = r,
        }
        self.done = self.result.is_some();
    }
}

impl QueryDriver for Probing {
    type Details = Details;

    fn poll_transmit_into(&mut self, now: Instant, out: &mut Vec<u8>) -> bool {
        if self.done || !self.inner.poll_transmit_into(now, out) {
            return false;
        }
        if self.max_sends.is_some_and(|m| self.sends >= m) {
            // the query moves on to a later request: the first went unanswered
            self.result = Some(Err(QueryError::NoAnswer {
                protocol: self.inner.protocol(),
                step: None,
                attempts: self.sends,
            }));
            self.done = true;
            out.clear();
            return false;
        }
        self.sends = self.sends.saturating_add(1);
        // the rest of this send is written and dropped: the first request alone asks
        // whether the server speaks the protocol (bounded: each call takes a datagram
        // the machine had due now)
        for _ in 0..64 {
            if !self.inner.poll_transmit_into(now, &mut self.scratch) {
                break;
            }
        }
        self.last_sent = Some(now);
        true
    }

    fn handle_datagram(&mut self, now: Instant, datagram: &[u8]) {
        if !self.done {
            self.inner.handle_datagram(now, datagram);
            self.settle(now, datagram.len());
        }
    }

    fn poll_timeout(&self) -> Option<Instant> {
        if self.done {
            None
        } else {
            self.inner.poll_timeout()
        }
    }

    fn handle_timeout(&mut self, now: Instant) {
        if !self.done {
            self.inner.handle_timeout(now);
            self.settle(now, 0);
        }
    }

    fn take_result(&mut self) -> Option<Result<Answer, QueryError>> {
        self.result.take()
    }

    fn transport(&self) -> Transport {
        self.inner.transport()
    }

    fn handle_stream(&mut self, now: Instant, event: StreamEvent<'_>) {
        if !self.done {
            self.inner.handle_stream(now, event);
            self.settle(now, 0);
        }
    }

    fn close_due(&self) -> bool {
        self.done || self.inner.close_due()
    }

    fn last_dropped(&self) -> Option<&'static str> {
        self.inner.last_dropped()
    }

    fn tls(&self) -> Option<TlsRequest> {
        self.inner.tls()
    }

    fn stream_buffer(&self, more: usize) -> usize {
        self.inner.stream_buffer(more)
    }

    fn heard_from(&self) -> bool {
        self.inner.heard_from()
    }
}

impl Machine {
    /// Whether a datagram from the queried address can be this machine's: its protocol
    /// is the one [`crate::detect::guess`] names, or the first bytes do not tell.
    pub fn claims(&self, datagram: &[u8]) -> bool {
        match (crate::detect::guess(datagram), self.protocol()) {
            (None, _) => true,
            (Some(Protocol::Ogp), Protocol::OgpDraft) => true,
            (Some(p), mine) => p == mine,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_protocols_transport_is_its_machines() {
        let now = Instant::now();
        for p in Protocol::ALL {
            let m = Machine::new(p, &Options::default(), 1, now);
            assert_eq!(p.transport(), m.transport(), "{p}");
        }
        for p in Protocol::AUTO_STREAM {
            assert_eq!(p.transport(), Transport::Stream);
            assert!(!Protocol::AUTO.contains(&p));
        }
        assert_eq!(Protocol::Minecraft.transport(), Transport::Stream);
    }

    /// A probe sends the first request, resends it after a lost datagram with the
    /// query's retries, and ends at the first reply of its protocol: an A2S challenge.
    #[test]
    fn a_probe_sends_the_first_request_and_ends_at_a_challenge() {
        let t0 = Instant::now();
        let opts = Options::with_timing(Timing::default().retries(3));
        let mut m = Machine::probe(Protocol::A2s, &opts, 7, t0);
        assert_eq!(m.protocol(), Protocol::A2s);
        let first = m.poll_transmit(t0).unwrap();
        assert_eq!(&first[..5], b"\xff\xff\xff\xffT");
        assert!(m.poll_transmit(t0).is_none());
        // lost: the same request again after the attempt's timeout
        let t1 = m.poll_timeout().unwrap();
        m.handle_timeout(t1);
        assert_eq!(m.poll_transmit(t1).as_deref(), Some(&first[..]));
        assert!(m.take_result().is_none());
        // a datagram of another protocol proves nothing
        m.handle_datagram(t1, b"\xff\xff\xff\xffOGP\0\x08\x00\x00");
        assert!(m.take_result().is_none());
        let t2 = t1 + std::time::Duration::from_millis(30);
        m.handle_datagram(t2, b"\xff\xff\xff\xffA\x01\x02\x03\x04");
        assert!(m.heard_from());
        let a = m.take_result().expect("done").expect("an answer");
        assert_eq!(a.protocol, Protocol::A2s);
        assert_eq!(a.details, Details::Probed);
        assert_eq!(a.status, crate::Status::default());
        assert!(
            (a.ping_ms - 30.0).abs() < 1.0 + a.ping_ms.max(0.0) / 10.0,
            "{}",
            a.ping_ms
        );
        assert!(m.poll_transmit(t2).is_none());
        assert!(m.poll_timeout().is_none());
    }

    /// A silent server fails a probe after its first request's retries, where the
    /// query goes on to its later requests (Quake III's getstatus, Unreal 2's rules and
    /// players, Cube 2's extinfo).
    #[test]
    fn a_silent_probe_fails_after_its_first_requests_retries() {
        let silent = |m: &mut Machine| {
            let mut t = Instant::now();
            let mut sent = 0;
            for _ in 0..32 {
                sent += std::iter::from_fn(|| m.poll_transmit(t)).count();
                if let Some(r) = m.take_result() {
                    assert!(r.is_err(), "{r:?}");
                    return sent;
                }
                t = m.poll_timeout().expect("a timer while running");
                m.handle_timeout(t);
            }
            panic!("never done")
        };
        for retries in [0, 1] {
            let opts = Options::with_timing(Timing::default().retries(retries));
            let per = retries as usize + 1;
            for (p, steps) in [(Protocol::Quake3, 2), (Protocol::Unreal2, 3)] {
                let now = Instant::now();
                assert_eq!(
                    silent(&mut Machine::new(p, &opts, 7, now)),
                    steps * per,
                    "{p}"
                );
                assert_eq!(silent(&mut Machine::probe(p, &opts, 7, now)), per, "{p}");
            }
        }
    }

    #[test]
    fn machines_claim_their_protocols_replies() {
        let ogp = b"\xff\xff\xff\xffOGP\0\x08\x00\x00";
        let now = Instant::now();
        let opts = Options::default();
        let m = |p| Machine::new(p, &opts, 1, now);
        assert!(m(Protocol::Ogp).claims(ogp));
        assert!(m(Protocol::OgpDraft).claims(ogp));
        assert!(!m(Protocol::A2s).claims(ogp));
        assert!(!m(Protocol::Gamespy3).claims(ogp));
        assert!(!m(Protocol::Gqp).claims(ogp));
        // Bytes that name no protocol go to every machine.
        assert!(m(Protocol::Gqp).claims(b"\x7f"));
    }
}
