//! The ASE client as a state machine: one `s`, resent by the shared client core's
//! timers until an `EYE1` reply comes back, and no I/O. Drive it through
//! [`QueryDriver`].
//!
//! ASE's request carries no id and its reply echoes none: the first datagram from the
//! server that decodes as a reply is the answer (qstat and gamedig do the same). The
//! networking layer only passes on datagrams from the queried address.

use std::time::Instant;

use super::mapping::reply_to_status;
use super::wire::{decode_reply_with, Reply, MAGIC, REQUEST};
use crate::client_core::{exchange_driver, Exchange, QueryDriver, Timing};
use crate::protocol::Protocol;
use crate::Charset;

/// ASE's own settings of one query (the timers are [`Timing`]).
#[derive(Debug, Clone, PartialEq, Eq, Default)]
#[non_exhaustive]
pub struct QueryOptions {
    /// How to read strings that are not UTF-8 (default [`Charset::Auto`]: as Latin-1,
    /// with a warning).
    pub charset: Charset,
}

/// What an ASE answer says beyond the status: the reply as sent.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct Details {
    /// The reply, every field as sent.
    pub reply: Reply,
}

/// One ASE query of one server.
#[derive(Debug, Clone)]
pub struct QueryMachine {
    charset: Charset,
    x: Exchange<Details>,
}

impl QueryMachine {
    /// A query starting at `now` (ASE has no id to carry).
    pub fn new(opts: QueryOptions, timing: Timing, now: Instant) -> Self {
        Self {
            charset: opts.charset,
            x: Exchange::new(Protocol::Ase, &timing, now),
        }
    }
}

impl QueryDriver for QueryMachine {
    type Details = Details;

    exchange_driver!(give_up_on_timeout);

    fn poll_transmit_into(&mut self, now: Instant, d: &mut Vec<u8>) -> bool {
        if !self.x.due_datagram(d) {
            return false;
        }
        d.extend_from_slice(REQUEST);
        self.x.sent_query(now, d, "status request", None, None);
        true
    }

    fn handle_datagram(&mut self, now: Instant, datagram: &[u8]) {
        if self.x.is_done() {
            return;
        }
        let bytes = datagram.len();
        if !datagram.starts_with(&MAGIC) {
            return self.x.dropped(bytes, "not an EYE1 reply");
        }
        let reply = match decode_reply_with(datagram, self.charset) {
            Ok(r) => r,
            Err(e) => return self.x.undecodable(e, bytes, "does not decode"),
        };
        self.x
            .took_reply(now, bytes, "EYE1 reply", reply.warnings.iter());
        let status = reply_to_status(&reply);
        self.x.succeed(status, Details { reply });
    }
}

crate::client_core::start_query!(QueryOptions, no_id);

#[cfg(test)]
mod tests {
    use super::*;
    use crate::client_core::{drive_to_end, QueryError};

    #[test]
    fn the_first_eye1_reply_is_the_answer() {
        let t0 = Instant::now();
        let mut m = QueryMachine::new(QueryOptions::default(), Timing::default(), t0);
        let mut d = Vec::new();
        assert!(m.poll_transmit_into(t0, &mut d));
        assert_eq!(d, b"s");
        m.handle_datagram(t0, b"\xff\xff\xff\xffinfo");
        m.handle_datagram(t0, b"EYE1\x09cut");
        assert!(m.take_result().is_none());
        let mut r = Vec::new();
        Reply {
            server_name: "MTA".into(),
            num_players: "0".into(),
            ..Reply::default()
        }
        .encode(&mut r);
        m.handle_datagram(t0, &r);
        let a = m.take_result().unwrap().unwrap();
        assert_eq!(a.protocol, Protocol::Ase);
        assert_eq!(a.status.host_name.as_deref(), Some("MTA"));
        assert_eq!(a.status.player_count, Some(0));
    }

    #[test]
    fn silence_times_out() {
        let t0 = Instant::now();
        let mut m = QueryMachine::new(QueryOptions::default(), Timing::default(), t0);
        assert_eq!(drive_to_end(&mut m, t0, None), 3);
        assert!(matches!(
            m.take_result(),
            Some(Err(QueryError::NoAnswer { .. }))
        ));
    }
}
