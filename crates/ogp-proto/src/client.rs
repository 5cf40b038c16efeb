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
//! tokio client, the scanner); adding a protocol means its folder plus one line in each
//! `match` here.

use std::net::SocketAddr;
use std::time::Instant;

use crate::protocol::Protocol;
use crate::{a2s, gamespy3, gqp, ogp, ogp_draft};

pub use crate::client_core::{
    Event, Fault, QueryDriver, QueryError, Rejection, Timing, MAX_EVENTS, MAX_WARNINGS,
};

/// A server's answer: protocol, address, ping, datagrams and bytes, status, warnings,
/// wire events, and the protocol's own [`Details`] (or one protocol's details, `D`,
/// from its own machine).
pub type Answer<D = Details> = crate::client_core::Answer<D>;

/// Settings of a query in any protocol: the shared timers, and each protocol's own part.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Options {
    /// Timers, retries and the challenge-resend cap (every protocol).
    pub timing: Timing,
    /// OGP's part.
    pub ogp: ogp::client::QueryOptions,
    /// The OGP v0.02 draft's part.
    pub ogp_draft: ogp_draft::client::QueryOptions,
    /// A2S's part.
    pub a2s: a2s::client::QueryOptions,
    /// GameSpy v3's part.
    pub gamespy3: gamespy3::client::QueryOptions,
    /// GQP's part.
    pub gqp: gqp::client::QueryOptions,
}

impl Options {
    /// The default options with these timers.
    pub fn with_timing(timing: Timing) -> Self {
        Self {
            timing,
            ..Self::default()
        }
    }
}

/// What an answer says beyond the status, per protocol.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub enum Details {
    /// OGP v1.01.
    Ogp(ogp::client::Details),
    /// The OGP v0.02 draft.
    OgpDraft(ogp_draft::client::Details),
    /// Valve A2S: the replies as sent.
    A2s(Box<a2s::client::Details>),
    /// GameSpy v3: the reply as sent.
    Gamespy3(Box<gamespy3::client::Details>),
    /// GQP: the replies and the token.
    Gqp(Box<gqp::client::Details>),
}

/// Any protocol's client state machine, driven through [`QueryDriver`].
#[derive(Debug)]
#[non_exhaustive]
pub enum Machine {
    /// OGP v1.01.
    Ogp(Box<ogp::client::QueryMachine>),
    /// The OGP v0.02 draft.
    OgpDraft(Box<ogp_draft::client::QueryMachine>),
    /// Valve A2S.
    A2s(Box<a2s::client::QueryMachine>),
    /// GameSpy v3.
    Gamespy3(Box<gamespy3::client::QueryMachine>),
    /// GQP.
    Gqp(Box<gqp::client::QueryMachine>),
}

macro_rules! each {
    ($self:expr, $m:ident => $e:expr) => {
        match $self {
            Machine::Ogp($m) => $e,
            Machine::OgpDraft($m) => $e,
            Machine::A2s($m) => $e,
            Machine::Gamespy3($m) => $e,
            Machine::Gqp($m) => $e,
        }
    };
}

impl Machine {
    /// A query of `protocol` starting at `now`. `id` becomes the RequestID or session id
    /// where the protocol has one: pick it at random, it is what tells our answers from
    /// spoofed or stale ones.
    pub fn new(protocol: Protocol, opts: &Options, id: u32, now: Instant) -> Self {
        let t = opts.timing;
        match protocol {
            Protocol::Ogp => Self::Ogp(Box::new(ogp::client::QueryMachine::new(
                opts.ogp.clone(),
                t,
                id,
                now,
            ))),
            Protocol::OgpDraft => Self::OgpDraft(Box::new(ogp_draft::client::QueryMachine::new(
                opts.ogp_draft.clone(),
                t,
                id,
                now,
            ))),
            Protocol::A2s => Self::A2s(Box::new(a2s::client::QueryMachine::new(
                opts.a2s.clone(),
                t,
                now,
            ))),
            Protocol::Gamespy3 => Self::Gamespy3(Box::new(gamespy3::client::QueryMachine::new(
                opts.gamespy3.clone(),
                t,
                id,
                now,
            ))),
            Protocol::Gqp => Self::Gqp(Box::new(gqp::client::QueryMachine::new(
                opts.gqp.clone(),
                t,
                now,
            ))),
        }
    }

    /// The protocol it speaks.
    pub fn protocol(&self) -> Protocol {
        match self {
            Self::Ogp(_) => Protocol::Ogp,
            Self::OgpDraft(_) => Protocol::OgpDraft,
            Self::A2s(_) => Protocol::A2s,
            Self::Gamespy3(_) => Protocol::Gamespy3,
            Self::Gqp(_) => Protocol::Gqp,
        }
    }

    /// The result, once, with the queried address filled in.
    pub fn take_answer(&mut self, addr: SocketAddr) -> Option<Result<Answer, QueryError>> {
        let mut r = self.take_result()?;
        if let Ok(a) = &mut r {
            a.addr = Some(addr);
        }
        Some(r)
    }
}

impl QueryDriver for Machine {
    type Details = Details;

    fn poll_transmit(&mut self, now: Instant) -> Option<Vec<u8>> {
        each!(self, m => m.poll_transmit(now))
    }

    fn handle_datagram(&mut self, now: Instant, datagram: &[u8]) {
        each!(self, m => m.handle_datagram(now, datagram))
    }

    fn poll_timeout(&self) -> Option<Instant> {
        each!(self, m => m.poll_timeout())
    }

    fn handle_timeout(&mut self, now: Instant) {
        each!(self, m => m.handle_timeout(now))
    }

    fn take_result(&mut self) -> Option<Result<Answer, QueryError>> {
        Some(match self {
            Self::Ogp(m) => m.take_result()?.map(|a| a.map_details(Details::Ogp)),
            Self::OgpDraft(m) => m.take_result()?.map(|a| a.map_details(Details::OgpDraft)),
            Self::A2s(m) => m
                .take_result()?
                .map(|a| a.map_details(|d| Details::A2s(Box::new(d)))),
            Self::Gamespy3(m) => m
                .take_result()?
                .map(|a| a.map_details(|d| Details::Gamespy3(Box::new(d)))),
            Self::Gqp(m) => m
                .take_result()?
                .map(|a| a.map_details(|d| Details::Gqp(Box::new(d)))),
        })
    }
}
