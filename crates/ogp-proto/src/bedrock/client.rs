//! The Bedrock client as a state machine: one unconnected ping, resent by the shared
//! client core's timers until a pong comes back, and no I/O. Drive it through
//! [`QueryDriver`].
//!
//! The ping's time is the query's random id (RakNet servers echo it unchanged, whatever
//! it is: the vanilla server, PocketMine, Nukkit, Geyser and go-raknet all copy it into
//! the pong). A pong whose time is not ours is dropped as spoofed or stale, so an
//! answer is believed only from a source that saw our ping: 32 unpredictable bits, as
//! the other protocols' ids. The client GUID is derived from the id too.

use std::time::Instant;

use super::mapping::pong_to_status;
use super::wire::{packet_kind, Advertisement, Ping, Pong, PONG};
use crate::client_core::{exchange_driver, Event, Exchange, QueryDriver, Timing};
use crate::protocol::Protocol;

/// Bedrock's own settings of one query (the timers are [`Timing`]).
#[derive(Debug, Clone, PartialEq, Eq, Default)]
#[non_exhaustive]
pub struct QueryOptions {
    /// Send the "open connections only" ping (`02`): a full server stays silent.
    pub open_only: bool,
}

/// What a Bedrock answer says beyond the status: the pong as sent.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct Details {
    /// The pong (its time is the one we sent).
    pub pong: Pong,
    /// Its advertisement, field by field.
    pub advertisement: Advertisement,
}

/// One Bedrock ping of one server.
#[derive(Debug, Clone)]
pub struct QueryMachine {
    ping: Ping,
    x: Exchange<Details>,
}

impl QueryMachine {
    /// A ping starting at `now`; `id` (pick it at random) is the time it carries.
    pub fn new(opts: QueryOptions, timing: Timing, id: u32, now: Instant) -> Self {
        let time = u64::from(id);
        Self {
            ping: Ping {
                time,
                client_guid: time.rotate_left(32) ^ 0x4f47_5020_4245_4452,
                open_only: opts.open_only,
            },
            x: Exchange::new(Protocol::Bedrock, &timing, now),
        }
    }

    /// The ping this query sends.
    pub fn ping(&self) -> Ping {
        self.ping
    }
}

impl QueryDriver for QueryMachine {
    type Details = Details;

    exchange_driver!(give_up_on_timeout);

    fn poll_transmit_into(&mut self, now: Instant, d: &mut Vec<u8>) -> bool {
        if !self.x.due_datagram(d) {
            return false;
        }
        self.ping.encode(d);
        self.x.sent_query(now, d, "unconnected ping", None, None);
        true
    }

    fn handle_datagram(&mut self, now: Instant, datagram: &[u8]) {
        if self.x.is_done() {
            return;
        }
        let bytes = datagram.len();
        if packet_kind(datagram) != Some(PONG) {
            return self.x.dropped(bytes, "not an unconnected pong");
        }
        let decoded = match Pong::decode(datagram) {
            Ok(d) => d,
            Err(e) => {
                self.x.malformed(e);
                return self.x.dropped(bytes, "does not decode");
            }
        };
        if decoded.pong.time != self.ping.time {
            return self.x.dropped(bytes, "time is not the one we sent");
        }
        self.x.warn(decoded.warnings);
        let advertisement = Advertisement::parse(&decoded.pong.advertisement);
        if advertisement.dropped > 0 {
            self.x.warn([format!(
                "{} advertisement fields past the first {} ignored",
                advertisement.dropped,
                super::wire::MAX_FIELDS
            )]);
        }
        self.x.received(1, bytes);
        self.x.ping(now);
        self.x.event(Event::Reply {
            what: "unconnected pong",
            bytes,
            datagrams: 1,
        });
        let status = pong_to_status(&decoded.pong);
        self.x.succeed(
            status,
            Details {
                pong: decoded.pong,
                advertisement,
            },
        );
    }
}

crate::client_core::start_query!(QueryOptions);

#[cfg(test)]
mod tests {
    use super::*;
    use crate::client_core::{drive_to_end, QueryError};

    fn pong(time: u64) -> Vec<u8> {
        let mut out = Vec::new();
        Pong {
            time,
            server_guid: 1,
            advertisement: "MCPE;§bHello;924;1.26.3;2;10;1;World;Survival;1;19132;19133;".into(),
        }
        .encode(&mut out);
        out
    }

    #[test]
    fn answers_only_a_pong_with_our_time() {
        let t0 = Instant::now();
        let mut m = QueryMachine::new(QueryOptions::default(), Timing::default(), 0xdead_beef, t0);
        let mut d = Vec::new();
        assert!(m.poll_transmit_into(t0, &mut d));
        assert_eq!(d.len(), 33);
        assert_eq!(Ping::decode(&d).unwrap().time, 0xdead_beef);
        // another time (spoofed or stale) and garbage are dropped
        m.handle_datagram(t0, &pong(1));
        m.handle_datagram(t0, b"\x1c");
        assert!(m.take_result().is_none());
        m.handle_datagram(t0, &pong(0xdead_beef));
        let a = m.take_result().unwrap().unwrap();
        assert_eq!(a.protocol, Protocol::Bedrock);
        assert_eq!(a.status.host_name.as_deref(), Some("Hello"));
        assert_eq!(a.status.player_count, Some(2));
        assert_eq!(a.details.advertisement.protocol(), Some(924));
    }

    #[test]
    fn silence_times_out() {
        let t0 = Instant::now();
        let mut m = QueryMachine::new(QueryOptions::default(), Timing::default(), 7, t0);
        drive_to_end(&mut m, t0, None);
        assert!(matches!(
            m.take_result(),
            Some(Err(QueryError::NoAnswer { .. }))
        ));
    }
}
