//! The Doom 3 engine client as a state machine: one `getInfo` with the query's id as
//! its challenge, resent by the shared client core's timers until an `infoResponse`
//! that echoes it comes back, and no I/O. Drive it through [`QueryDriver`].
//!
//! A reply with another challenge is dropped (an old reply, or a forged one); one that
//! does not decode is noted and dropped, and the query goes on until its timers end.

use std::time::Instant;

use super::mapping::info_to_status;
use super::wire::{decode_info_response, encode_request, is_reply, Dialect, InfoResponse};
use crate::client_core::{exchange_driver, Event, Exchange, QueryDriver, Timing};
use crate::protocol::Protocol;

/// Doom 3's default port.
pub const DEFAULT_PORT: u16 = 27666;

/// The Doom 3 engine's own settings of one query (the timers are [`Timing`]).
#[derive(Debug, Clone, PartialEq, Eq, Default)]
#[non_exhaustive]
pub struct QueryOptions {
    /// The reply's layout; `None` (the default) tells it from the reply.
    pub dialect: Option<Dialect>,
}

/// What a Doom 3 engine answer says beyond the status: the reply as sent.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct Details {
    /// The reply, every field as sent.
    pub reply: InfoResponse,
}

/// One Doom 3 engine query of one server.
#[derive(Debug, Clone)]
pub struct QueryMachine {
    dialect: Option<Dialect>,
    challenge: u32,
    x: Exchange<Details>,
}

impl QueryMachine {
    /// A query starting at `now`; `id` (pick it at random) is the challenge.
    pub fn new(opts: QueryOptions, timing: Timing, id: u32, now: Instant) -> Self {
        Self {
            dialect: opts.dialect,
            challenge: id,
            x: Exchange::new(Protocol::Doom3, &timing, now),
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
        encode_request(self.challenge, d);
        self.x.sent_query(now, d, "getInfo", None, None);
        true
    }

    fn handle_datagram(&mut self, now: Instant, datagram: &[u8]) {
        if self.x.is_done() {
            return;
        }
        let bytes = datagram.len();
        if !is_reply(datagram) {
            return self.x.dropped(bytes, "not an infoResponse");
        }
        let reply = match decode_info_response(datagram, self.dialect) {
            Ok(r) => r,
            Err(e) => {
                self.x.malformed(e);
                return self.x.dropped(bytes, "does not decode");
            }
        };
        if reply.challenge != self.challenge {
            return self.x.dropped(bytes, "another challenge");
        }
        self.x.warn(reply.warnings.iter());
        self.x.received(1, bytes);
        self.x.ping(now);
        self.x.event(Event::Reply {
            what: "infoResponse",
            bytes,
            datagrams: 1,
        });
        let status = info_to_status(&reply);
        self.x.succeed(status, Details { reply });
    }
}

crate::client_core::start_query!(QueryOptions);

#[cfg(test)]
mod tests {
    use super::*;
    use crate::client_core::{drive_to_end, QueryError};
    use crate::doom3::wire::tests::sample;

    #[test]
    fn the_reply_that_echoes_the_challenge_is_the_answer() {
        let t0 = Instant::now();
        let mut m = QueryMachine::new(QueryOptions::default(), Timing::default(), 0x1234_5678, t0);
        let mut d = Vec::new();
        assert!(m.poll_transmit_into(t0, &mut d));
        assert_eq!(d, b"\xff\xffgetInfo\0\x78\x56\x34\x12");
        let mut other = sample(Dialect::Quake4);
        other.challenge = 1;
        let mut bytes = Vec::new();
        other.encode(&mut bytes);
        m.handle_datagram(t0, &bytes);
        m.handle_datagram(t0, b"\xff\xffinfoResponse\0\x01");
        assert!(m.take_result().is_none());
        let mut bytes = Vec::new();
        sample(Dialect::Quake4).encode(&mut bytes);
        m.handle_datagram(t0, &bytes);
        let a = m.take_result().unwrap().unwrap();
        assert_eq!(a.protocol, Protocol::Doom3);
        assert_eq!(a.status.host_name.as_deref(), Some("Red Server"));
        assert_eq!(a.status.players.as_ref().map(Vec::len), Some(2));
        assert_eq!(a.details.reply.dialect, Dialect::Quake4);
    }

    #[test]
    fn silence_times_out() {
        let t0 = Instant::now();
        let mut m = QueryMachine::new(QueryOptions::default(), Timing::default(), 5, t0);
        assert_eq!(drive_to_end(&mut m, t0, None), 3);
        assert!(matches!(
            m.take_result(),
            Some(Err(QueryError::NoAnswer { .. }))
        ));
    }
}
