//! The Mumble ping client as a state machine: one 12-byte ping, resent by the shared
//! client core's timers until a reply that echoes our ident comes back, and no I/O.
//! Drive it through [`QueryDriver`].
//!
//! The ident's first four bytes are the query's random id: a reply with another ident
//! is dropped as spoofed or stale.
//!
//! | Status field | from |
//! |---|---|
//! | `game_version` | the version, `major.minor.patch` |
//! | `player_count` | users connected |
//! | `slot_max` | max users |
//! | `rules` | `version` (as `game_version`) and `bandwidth` (bits per second per user) |
//!
//! The ping tells no server name: `host_name` stays unset.

use std::time::Instant;

use super::wire::{decode_reply, Reply, Request};
use crate::client_core::{exchange_driver, Exchange, QueryDriver, Timing};
use crate::model::Rules;
use crate::protocol::Protocol;
use crate::Status;

/// Mumble's own settings of one query (none yet; the timers are [`Timing`]).
#[derive(Debug, Clone, PartialEq, Eq, Default)]
#[non_exhaustive]
pub struct QueryOptions {}

/// What a Mumble answer says beyond the status: the reply as sent.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct Details {
    /// The reply (its ident is the one we sent).
    pub reply: Reply,
}

/// The status a reply describes (see the module's table).
pub fn reply_to_status(reply: &Reply) -> Status {
    let version = reply.version();
    Status {
        game_version: Some(version.as_str().into()),
        player_count: Some(reply.users),
        slot_max: Some(reply.max_users),
        rules: Some(Rules(vec![
            ("version".into(), version.as_str().into()),
            ("bandwidth".into(), reply.bandwidth.to_string().into()),
        ])),
        ..Status::default()
    }
}

/// One Mumble ping of one server.
#[derive(Debug, Clone)]
pub struct QueryMachine {
    request: Request,
    x: Exchange<Details>,
}

impl QueryMachine {
    /// A query starting at `now`; `id` (pick it at random) goes in the ident.
    pub fn new(opts: QueryOptions, timing: Timing, id: u32, now: Instant) -> Self {
        let QueryOptions {} = opts;
        Self {
            request: Request::new(id),
            x: Exchange::new(Protocol::Mumble, &timing, now),
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
        self.request.encode(d);
        self.x.sent_query(now, d, "ping", None, None);
        true
    }

    fn handle_datagram(&mut self, now: Instant, datagram: &[u8]) {
        if self.x.is_done() {
            return;
        }
        let bytes = datagram.len();
        let reply = match decode_reply(datagram) {
            Ok(r) => r,
            Err(e) => return self.x.undecodable(e, bytes, "not a ping reply"),
        };
        if reply.ident != self.request.ident {
            return self.x.dropped(bytes, "not a reply with our ident");
        }
        self.x.took_reply(now, bytes, "ping", reply.warnings.iter());
        let status = reply_to_status(&reply);
        self.x.succeed(status, Details { reply });
    }
}

crate::client_core::start_query!(QueryOptions);

#[cfg(test)]
mod tests {
    use super::*;
    use crate::client_core::{drive_to_end, QueryError};

    #[test]
    fn only_a_reply_with_our_ident_is_the_answer() {
        let t0 = Instant::now();
        let mut m = QueryMachine::new(QueryOptions::default(), Timing::default(), 7, t0);
        let mut d = Vec::new();
        assert!(m.poll_transmit_into(t0, &mut d));
        assert_eq!(d.len(), 12);
        let mut reply = Reply {
            major: 1,
            minor: 5,
            patch: 2,
            ident: Request::new(8).ident,
            users: 3,
            max_users: 50,
            bandwidth: 558_000,
            ..Reply::default()
        };
        let mut r = Vec::new();
        reply.encode(&mut r);
        m.handle_datagram(t0, &r);
        m.handle_datagram(t0, &r[..20]);
        assert!(m.take_result().is_none());
        reply.ident = Request::new(7).ident;
        r.clear();
        reply.encode(&mut r);
        m.handle_datagram(t0, &r);
        let a = m.take_result().unwrap().unwrap();
        assert_eq!(a.protocol, Protocol::Mumble);
        assert_eq!(a.status.game_version.as_deref(), Some("1.5.2"));
        assert_eq!(
            (a.status.player_count, a.status.slot_max),
            (Some(3), Some(50))
        );
        assert_eq!(a.status.rules.unwrap().get("bandwidth"), Some("558000"));
    }

    #[test]
    fn spoofed_and_oversized_replies_do_not_answer() {
        // 10,000 replies with other idents, then 64 KiB ones: dropped; the query times out
        let t0 = Instant::now();
        let mut m = QueryMachine::new(QueryOptions::default(), Timing::default(), 9, t0);
        let mut d = Vec::new();
        assert!(m.poll_transmit_into(t0, &mut d));
        let mut r = Vec::new();
        for id in 0..10_000u32 {
            r.clear();
            Reply {
                ident: Request::new(id.wrapping_add(10)).ident,
                ..Reply::default()
            }
            .encode(&mut r);
            m.handle_datagram(t0, &r);
        }
        let mut big = Vec::new();
        Reply {
            ident: Request::new(9).ident,
            users: u32::MAX,
            ..Reply::default()
        }
        .encode(&mut big);
        big.resize(65_507, 0xff);
        m.handle_datagram(t0, &big);
        // the oversized one with our ident is read for its 24 bytes, with a warning
        let a = m.take_result().unwrap().unwrap();
        assert_eq!(a.status.player_count, Some(u32::MAX));
        assert_eq!(a.warnings.len(), 1);
        let mut m = QueryMachine::new(QueryOptions::default(), Timing::default(), 9, t0);
        for id in 0..1000u32 {
            r.clear();
            Reply {
                ident: Request::new(id.wrapping_add(10)).ident,
                ..Reply::default()
            }
            .encode(&mut r);
            m.handle_datagram(t0, &r);
        }
        assert_eq!(drive_to_end(&mut m, t0, Some(&r)), 3);
        assert!(matches!(
            m.take_result(),
            Some(Err(QueryError::NoAnswer { .. }))
        ));
    }

    #[test]
    fn silence_times_out() {
        let t0 = Instant::now();
        let mut m = QueryMachine::new(QueryOptions::default(), Timing::default(), 1, t0);
        assert_eq!(drive_to_end(&mut m, t0, None), 3);
        assert!(matches!(
            m.take_result(),
            Some(Err(QueryError::NoAnswer { .. }))
        ));
    }
}
