//! The GameSpy v2 client as a state machine: one request for all three sections,
//! resent by the shared client core's timers until a reply with our id comes back, and
//! no I/O. Drive it through [`QueryDriver`].
//!
//! The request's 4-byte id is the query's random id; servers echo it in the reply, and a
//! reply with another id is dropped as spoofed or stale (32 unpredictable bits, as the
//! other protocols' ids). The reply is one datagram.

use std::time::Instant;

use super::mapping::info_to_status;
use super::wire::{decode_reply_with, Reply, Request};
use crate::client_core::{exchange_driver, Exchange, QueryDriver, Timing};
use crate::protocol::Protocol;
use crate::Charset;

/// GameSpy v2's own settings of one query (the timers are [`Timing`]).
#[derive(Debug, Clone, PartialEq, Eq, Default)]
#[non_exhaustive]
pub struct QueryOptions {
    /// How to read strings that are not UTF-8 (default [`Charset::Auto`]: as Latin-1,
    /// with a warning).
    pub charset: Charset,
}

/// What a GameSpy v2 answer says beyond the status: the reply as sent.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct Details {
    /// The reply (its id is the one we sent).
    pub reply: Reply,
}

/// One GameSpy v2 query of one server.
#[derive(Debug, Clone)]
pub struct QueryMachine {
    request: Request,
    charset: Charset,
    x: Exchange<Details>,
}

impl QueryMachine {
    /// A query starting at `now`; `id` (pick it at random) is the id it carries.
    pub fn new(opts: QueryOptions, timing: Timing, id: u32, now: Instant) -> Self {
        Self {
            request: Request::full(id),
            charset: opts.charset,
            x: Exchange::new(Protocol::Gamespy2, &timing, now),
        }
    }

    /// The request this query sends.
    pub fn request(&self) -> Request {
        self.request
    }
}

impl QueryDriver for QueryMachine {
    type Details = Details;

    exchange_driver!(give_up_on_timeout);

    fn poll_transmit_into(&mut self, now: Instant, d: &mut Vec<u8>) -> bool {
        if !self.x.due_datagram(d) {
            return false;
        }
        self.request.encode(d);
        self.x
            .sent_query(now, d, "status request", None, Some(self.request.id));
        true
    }

    fn handle_datagram(&mut self, now: Instant, datagram: &[u8]) {
        if self.x.is_done() {
            return;
        }
        let bytes = datagram.len();
        let id = datagram
            .get(1..5)
            .and_then(|s| <[u8; 4]>::try_from(s).ok())
            .map(u32::from_be_bytes);
        if datagram.first() != Some(&0) || id != Some(self.request.id) {
            return self.x.dropped(bytes, "not a reply with our id");
        }
        let reply = match decode_reply_with(datagram, self.charset) {
            Ok(r) => r,
            Err(e) => return self.x.undecodable(e, bytes, "does not decode"),
        };
        self.x
            .took_reply(now, bytes, "status reply", reply.warnings.iter());
        let status = info_to_status(&reply.info);
        self.x.succeed(status, Details { reply });
    }
}

crate::client_core::start_query!(QueryOptions);

#[cfg(test)]
mod tests {
    use super::*;
    use crate::client_core::{drive_to_end, QueryError};
    use crate::gamespy2::wire::encode_reply;
    use crate::gamespy3::{Column, ServerInfo};

    fn reply(id: u32) -> Vec<u8> {
        let info = ServerInfo {
            server: vec![
                ("hostname".into(), "Blood Gulch".into()),
                ("numplayers".into(), "1".into()),
                ("maxplayers".into(), "16".into()),
            ],
            players: vec![Column {
                key: "player_".into(),
                values: vec!["Chief".into()],
            }],
            teams: Vec::new(),
        };
        let mut out = Vec::new();
        encode_reply(id, &info, &mut out);
        out
    }

    #[test]
    fn answers_only_a_reply_with_our_id() {
        let t0 = Instant::now();
        let mut m = QueryMachine::new(QueryOptions::default(), Timing::default(), 0xdead_beef, t0);
        let mut d = Vec::new();
        assert!(m.poll_transmit_into(t0, &mut d));
        assert_eq!(d, b"\xfe\xfd\x00\xde\xad\xbe\xef\xff\xff\xff");
        m.handle_datagram(t0, &reply(1));
        m.handle_datagram(t0, b"\x00\xde\xad\xbe\xefhostname");
        assert!(m.take_result().is_none());
        m.handle_datagram(t0, &reply(0xdead_beef));
        let a = m.take_result().unwrap().unwrap();
        assert_eq!(a.protocol, Protocol::Gamespy2);
        assert_eq!(a.status.host_name.as_deref(), Some("Blood Gulch"));
        assert_eq!(
            (a.status.player_count, a.status.slot_max),
            (Some(1), Some(16))
        );
        assert_eq!(a.status.players.unwrap().len(), 1);
    }

    #[test]
    fn silence_times_out_and_a_broken_reply_is_reported() {
        let t0 = Instant::now();
        let mut m = QueryMachine::new(QueryOptions::default(), Timing::default(), 7, t0);
        let broken = b"\x00\x00\x00\x00\x07hostname";
        assert_eq!(drive_to_end(&mut m, t0, Some(broken)), 3);
        assert!(matches!(
            m.take_result(),
            Some(Err(QueryError::Malformed { .. }))
        ));
    }
}
