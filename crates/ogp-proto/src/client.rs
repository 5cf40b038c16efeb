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
                }
            }
        }

        impl QueryDriver for Machine {
            type Details = Details;

            fn poll_transmit_into(&mut self, now: Instant, out: &mut Vec<u8>) -> bool {
                match self {
                    $( $(#[cfg($c)])? Self::$variant(m) => m.poll_transmit_into(now, out), )*
                    Self::Unavailable(..) => false,
                }
            }

            fn handle_datagram(&mut self, now: Instant, datagram: &[u8]) {
                match self {
                    $( $(#[cfg($c)])? Self::$variant(m) => m.handle_datagram(now, datagram), )*
                    Self::Unavailable(..) => {}
                }
            }

            fn poll_timeout(&self) -> Option<Instant> {
                match self {
                    $( $(#[cfg($c)])? Self::$variant(m) => m.poll_timeout(), )*
                    Self::Unavailable(..) => None,
                }
            }

            fn handle_timeout(&mut self, now: Instant) {
                match self {
                    $( $(#[cfg($c)])? Self::$variant(m) => m.handle_timeout(now), )*
                    Self::Unavailable(..) => {}
                }
            }

            fn transport(&self) -> Transport {
                match self {
                    $( $(#[cfg($c)])? Self::$variant(m) => m.transport(), )*
                    Self::Unavailable(..) => Transport::Datagram,
                }
            }

            fn handle_stream(&mut self, now: Instant, event: StreamEvent<'_>) {
                match self {
                    $( $(#[cfg($c)])? Self::$variant(m) => m.handle_stream(now, event), )*
                    Self::Unavailable(..) => {}
                }
            }

            fn close_due(&self) -> bool {
                match self {
                    $( $(#[cfg($c)])? Self::$variant(m) => m.close_due(), )*
                    Self::Unavailable(..) => true,
                }
            }

            fn last_dropped(&self) -> Option<&'static str> {
                match self {
                    $( $(#[cfg($c)])? Self::$variant(m) => m.last_dropped(), )*
                    Self::Unavailable(..) => None,
                }
            }

            fn tls(&self) -> Option<$crate::client_core::TlsRequest> {
                match self {
                    $( $(#[cfg($c)])? Self::$variant(m) => m.tls(), )*
                    Self::Unavailable(..) => None,
                }
            }

            fn stream_buffer(&self, more: usize) -> usize {
                match self {
                    $( $(#[cfg($c)])? Self::$variant(m) => m.stream_buffer(more), )*
                    Self::Unavailable(..) => 0,
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
