//! The QuakeWorld (and Quake 2) client as a state machine: one `status`, resent by the
//! shared client core's timers until a reply of the dialect comes back, and no I/O.
//! Drive it through [`QueryDriver`].
//!
//! The request carries no id and the reply echoes none: the first datagram from the
//! server that decodes as a reply of the dialect is the answer (qstat and gamedig do
//! the same; the networking layer passes on only datagrams from the queried address).
//! A reply over a limit of ours ([`DecodeLimits`]) ends the query at once (the server
//! would send the same again).

use std::time::Instant;

use super::mapping::reply_to_status;
use super::wire::{decode_reply_with, reply_dialect, DecodeLimits, Dialect, Reply};
use crate::client_core::{exchange_driver, Event, Exchange, QueryDriver, Timing};
use crate::error::DecodeErrorKind;
use crate::protocol::Protocol;

/// The settings of one query (the timers are [`Timing`]).
#[derive(Debug, Clone, PartialEq, Eq, Default)]
#[non_exhaustive]
pub struct QueryOptions {
    /// Caps on what a reply may make us hold.
    pub limits: DecodeLimits,
}

/// What the answer says beyond the status: the reply as sent.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct Details {
    /// The reply, every variable and player line as sent.
    pub reply: Reply,
}

/// One `status` query of one server, in one dialect (shared by the QuakeWorld and
/// Quake 2 protocols).
#[derive(Debug, Clone)]
pub(crate) struct StatusMachine {
    dialect: Dialect,
    limits: DecodeLimits,
    x: Exchange<Details>,
}

impl StatusMachine {
    pub(crate) fn new(
        dialect: Dialect,
        protocol: Protocol,
        opts: QueryOptions,
        timing: Timing,
        now: Instant,
    ) -> Self {
        Self {
            dialect,
            limits: opts.limits,
            x: Exchange::new(protocol, &timing, now),
        }
    }
}

impl QueryDriver for StatusMachine {
    type Details = Details;

    exchange_driver!(give_up_on_timeout);

    fn poll_transmit_into(&mut self, now: Instant, d: &mut Vec<u8>) -> bool {
        if !self.x.due_datagram(d) {
            return false;
        }
        self.dialect.encode_request(d);
        self.x.sent_query(now, d, "status", None, None);
        true
    }

    fn handle_datagram(&mut self, now: Instant, datagram: &[u8]) {
        if self.x.is_done() {
            return;
        }
        let bytes = datagram.len();
        if reply_dialect(datagram) != Some(self.dialect) {
            return self.x.dropped(bytes, "not a status reply");
        }
        let decoded = match decode_reply_with(datagram, &self.limits) {
            Ok(d) => d,
            Err(e) => {
                self.x.heard(now);
                self.x.malformed(e);
                if let DecodeErrorKind::TooLarge { .. } = e.kind {
                    // The server would send the same again: asking again is no use.
                    self.x.dropped(bytes, "over a limit of ours");
                    return self.x.fail_malformed(e);
                }
                return self.x.dropped(bytes, "does not decode");
            }
        };
        self.x.warn(decoded.warnings);
        self.x.received(1, bytes);
        self.x.ping(now);
        self.x.event(Event::Reply {
            what: "status",
            bytes,
            datagrams: 1,
        });
        let status = reply_to_status(&decoded.reply);
        self.x.succeed(
            status,
            Details {
                reply: decoded.reply,
            },
        );
    }
}

/// Defines a protocol's `QueryMachine`: the [`StatusMachine`] in one dialect, started
/// by the client core (`StartQuery`) and driven through it (`QueryDriver`).
macro_rules! dialect_machine {
    ($dialect:expr, $protocol:expr, $label:literal) => {
        #[doc = concat!("One ", $label, " query of one server.")]
        #[derive(Debug, Clone)]
        pub struct QueryMachine($crate::quakeworld::client::StatusMachine);

        impl QueryMachine {
            /// A query starting at `now` (the protocol has no id to carry).
            pub fn new(
                opts: $crate::quakeworld::client::QueryOptions,
                timing: $crate::client_core::Timing,
                now: std::time::Instant,
            ) -> Self {
                Self($crate::quakeworld::client::StatusMachine::new(
                    $dialect, $protocol, opts, timing, now,
                ))
            }
        }

        impl $crate::client_core::QueryDriver for QueryMachine {
            type Details = $crate::quakeworld::client::Details;

            fn poll_transmit_into(&mut self, now: std::time::Instant, d: &mut Vec<u8>) -> bool {
                self.0.poll_transmit_into(now, d)
            }

            fn handle_datagram(&mut self, now: std::time::Instant, datagram: &[u8]) {
                self.0.handle_datagram(now, datagram)
            }

            fn poll_timeout(&self) -> Option<std::time::Instant> {
                self.0.poll_timeout()
            }

            fn handle_timeout(&mut self, now: std::time::Instant) {
                self.0.handle_timeout(now)
            }

            fn take_result(
                &mut self,
            ) -> Option<
                Result<$crate::client_core::Answer<Self::Details>, $crate::client_core::QueryError>,
            > {
                self.0.take_result()
            }

            fn last_dropped(&self) -> Option<&'static str> {
                self.0.last_dropped()
            }
        }

        $crate::client_core::start_query!($crate::quakeworld::client::QueryOptions, no_id);
    };
}
pub(crate) use dialect_machine;

dialect_machine!(Dialect::QuakeWorld, Protocol::Quakeworld, "QuakeWorld");

#[cfg(test)]
mod tests {
    use super::*;
    use crate::client_core::{drive_to_end, QueryError};

    #[test]
    fn the_first_status_reply_is_the_answer() {
        let t0 = Instant::now();
        let mut m = QueryMachine::new(QueryOptions::default(), Timing::default(), t0);
        let mut d = Vec::new();
        assert!(m.poll_transmit_into(t0, &mut d));
        assert_eq!(d, b"\xff\xff\xff\xffstatus 23\n");
        m.handle_datagram(t0, b"\xff\xff\xff\xffprint\n\\hostname\\q2\n");
        m.handle_datagram(t0, b"\xff\xff\xff\xffn\\a\\b\n1 2 \"unclosed\n");
        assert!(m.take_result().is_none());
        m.handle_datagram(t0, b"\xff\xff\xff\xffn\\hostname\\QW\\maxclients\\8\n\x00");
        let a = m.take_result().unwrap().unwrap();
        assert_eq!(a.protocol, Protocol::Quakeworld);
        assert_eq!(a.status.host_name.as_deref(), Some("QW"));
        assert_eq!(a.status.player_count, Some(0));
    }

    #[test]
    fn silence_times_out_and_oversize_ends_at_once() {
        let t0 = Instant::now();
        let mut m = QueryMachine::new(QueryOptions::default(), Timing::default(), t0);
        assert_eq!(drive_to_end(&mut m, t0, None), 3);
        assert!(matches!(
            m.take_result(),
            Some(Err(QueryError::NoAnswer { .. }))
        ));
        let mut m = QueryMachine::new(QueryOptions::default(), Timing::default(), t0);
        let mut big = b"\xff\xff\xff\xffn\\a\\b\n".to_vec();
        for _ in 0..300 {
            big.extend_from_slice(b"1 0 0 0 \"x\" \"\" 0 0\n");
        }
        assert_eq!(drive_to_end(&mut m, t0, Some(&big)), 1);
        assert!(matches!(
            m.take_result(),
            Some(Err(QueryError::Malformed { .. }))
        ));
    }
}
