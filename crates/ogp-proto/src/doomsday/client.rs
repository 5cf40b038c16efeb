//! The Doomsday beacon client as a state machine: one `Doomsday Beacon 1.1`, resent by
//! the shared client core's timers until a reply comes back, and no I/O. Drive it
//! through [`QueryDriver`].
//!
//! The request carries no id and the reply echoes none: the first datagram from the
//! server that decodes as a reply is the answer (as Doomsday's own `ServerFinder`
//! takes it). The networking layer only passes on datagrams from the queried address.
//!
//! | Status field | from |
//! |---|---|
//! | `host_name` | `name` |
//! | `map` | `map` (`E1M1`, `MAP01`) |
//! | `game_name` | `game`, the game id (`doom1-freedoom`, `doom2`, `heretic`, `hexen`…) |
//! | `game_type` | `cfg`, the rules in words (`skill3 coop jump`) |
//! | `game_version` | `ver` |
//! | `connect_port` | the reply's port (the TCP port players join) |
//! | `player_count` | `pnum`, else the names of `plrs`, else 0 (Doomsday sends no `pnum` while nobody plays) |
//! | `slot_max` | `pmax` |
//! | `players` | `plrs`'s names, when sent (2.x strips them from the beacon) |
//! | `rules` | every member but `plrs`, in the order sent, numbers as integers when whole |
//!
//! The beacon says nothing of a password.

use std::time::Instant;

use super::wire::{decode_reply, Reply, Value, REQUEST};
use crate::client_core::{exchange_driver, Exchange, QueryDriver, Timing};
use crate::model::{MapInfo, Player, Rules, Text};
use crate::protocol::Protocol;
use crate::Status;

/// Doomsday's own settings of one query (none yet; the timers are [`Timing`]).
#[derive(Debug, Clone, PartialEq, Eq, Default)]
#[non_exhaustive]
pub struct QueryOptions {}

/// What a Doomsday answer says beyond the status: the reply as sent.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub struct Details {
    /// The reply.
    pub reply: Reply,
}

/// The status a reply describes (see the module's table).
pub fn reply_to_status(reply: &Reply) -> Status {
    let text = |k: &str| reply.text(k).filter(|t| !t.is_empty()).cloned();
    let names: Option<Vec<Text>> = match reply.get("plrs") {
        Some(Value::Array(items)) => Some(items.iter().map(Value::to_text).collect()),
        _ => None,
    };
    let player_count = reply
        .number("pnum")
        .or_else(|| names.as_ref().and_then(|n| u32::try_from(n.len()).ok()))
        .unwrap_or(0);
    let rules = reply
        .members
        .iter()
        .filter(|m| m.name != "plrs")
        .map(|m| (m.name.clone(), m.value.to_text()))
        .collect();
    Status {
        host_name: text("name"),
        map: text("map").map(MapInfo::named),
        game_name: text("game"),
        game_type: text("cfg"),
        game_version: text("ver"),
        connect_port: (reply.service_port != 0).then_some(reply.service_port),
        player_count: Some(player_count),
        slot_max: reply.number("pmax"),
        players: names.map(|n| n.into_iter().map(Player::named).collect()),
        rules: Some(Rules(rules)),
        ..Status::default()
    }
}

/// One Doomsday beacon query of one server.
#[derive(Debug, Clone)]
pub struct QueryMachine {
    x: Exchange<Details>,
}

impl QueryMachine {
    /// A query starting at `now` (the protocol has no id to carry).
    pub fn new(opts: QueryOptions, timing: Timing, now: Instant) -> Self {
        let QueryOptions {} = opts;
        Self {
            x: Exchange::new(Protocol::Doomsday, &timing, now),
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
        self.x.sent_query(now, d, "beacon", None, None);
        true
    }

    fn handle_datagram(&mut self, now: Instant, datagram: &[u8]) {
        if self.x.is_done() {
            return;
        }
        let bytes = datagram.len();
        if datagram == REQUEST {
            // our own request, looped back by a broadcast or a reflector
            return self.x.dropped(bytes, "a beacon request, not a reply");
        }
        let reply = match decode_reply(datagram) {
            Ok(r) => r,
            Err(e) => return self.x.undecodable(e, bytes, "not a beacon reply"),
        };
        self.x
            .took_reply(now, bytes, "beacon", reply.warnings.iter());
        let status = reply_to_status(&reply);
        self.x.succeed(status, Details { reply });
    }
}

crate::client_core::start_query!(QueryOptions, no_id);

#[cfg(test)]
mod tests {
    use super::*;
    use crate::client_core::{drive_to_end, QueryError};
    use crate::doomsday::wire::Member;

    fn reply(members: Vec<Member>) -> Reply {
        Reply {
            service_port: 13209,
            format: 4,
            record_id: 1,
            members,
            ..Reply::default()
        }
    }

    #[test]
    fn the_first_reply_is_the_answer() {
        let t0 = Instant::now();
        let mut m = QueryMachine::new(QueryOptions::default(), Timing::default(), t0);
        let mut d = Vec::new();
        assert!(m.poll_transmit_into(t0, &mut d));
        assert_eq!(d, b"Doomsday Beacon 1.1");
        m.handle_datagram(t0, b"Doomsday Beacon 1.1");
        m.handle_datagram(t0, b"\x99\x33\x00\x00\x00\x10x\x9cgarbage");
        assert!(m.take_result().is_none());
        let n = |v: f64| Value::Number { value: v, hints: 4 };
        let mut r = Vec::new();
        reply(vec![
            Member::new("name", Value::Text("DS".into())),
            Member::new("map", Value::Text("MAP07".into())),
            Member::new("game", Value::Text("doom2".into())),
            Member::new("cfg", Value::Text("skill4 dm".into())),
            Member::new("pmax", n(8.0)),
            Member::new(
                "plrs",
                Value::Array(vec![Value::Text("p1".into()), Value::Text("p2".into())]),
            ),
        ])
        .encode(&mut r);
        m.handle_datagram(t0, &r);
        let a = m.take_result().unwrap().unwrap();
        assert_eq!(a.protocol, Protocol::Doomsday);
        let s = &a.status;
        assert_eq!(s.host_name.as_deref(), Some("DS"));
        assert_eq!(s.map.as_ref().map(|m| m.name.as_str()), Some("MAP07"));
        assert_eq!(s.game_name.as_deref(), Some("doom2"));
        assert_eq!(s.game_type.as_deref(), Some("skill4 dm"));
        assert_eq!(s.connect_port, Some(13209));
        assert_eq!((s.player_count, s.slot_max), (Some(2), Some(8)));
        assert_eq!(s.players.as_ref().map(Vec::len), Some(2));
        let rules = s.rules.as_ref().unwrap();
        assert_eq!(rules.get("pmax"), Some("8"));
        assert_eq!(rules.get("plrs"), None);
    }

    #[test]
    fn no_pnum_is_nobody() {
        let s = reply_to_status(&reply(vec![Member::new("name", Value::Text("x".into()))]));
        assert_eq!((s.player_count, s.slot_max), (Some(0), None));
        assert!(s.players.is_none() && s.map.is_none());
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
