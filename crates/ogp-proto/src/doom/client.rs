//! The Chocolate Doom query client as a state machine: one `00 0D`, resent by the
//! shared client core's timers until a reply comes back, and no I/O. Drive it through
//! [`QueryDriver`].
//!
//! The query carries no id and the reply echoes none: the first datagram from the
//! server that decodes as a reply is the answer (as `chocolate-doom -query` does). The
//! networking layer only passes on datagrams from the queried address.
//!
//! | Status field | from |
//! |---|---|
//! | `host_name` | the description |
//! | `game_version` | the version |
//! | `game_name` | the mission's game (`doom`, `doom2`, `tnt`, `plutonia`, `chex`, `hacx`, `heretic`, `hexen`, `strife`), unset for `none`, an unknown byte, or while the mode is `indetermined` (no game chosen: the first client to join chooses it) |
//! | `game_mode` | the game mode (`shareware`, `registered`, `commercial`, `retail`, `indetermined`) |
//! | `player_count`, `slot_max` | players, max players |
//! | `rules` | `state` (`waiting` or `in game`, else the number), `protocols` (the names, comma-separated) |

use std::time::Instant;

use super::wire::{decode_reply, Reply, REPLY_TYPE, REQUEST};
use crate::client_core::{exchange_driver, Exchange, QueryDriver, Timing};
use crate::model::{Rules, Text};
use crate::protocol::Protocol;
use crate::Status;

/// Chocolate Doom's own settings of one query (none yet; the timers are [`Timing`]).
#[derive(Debug, Clone, PartialEq, Eq, Default)]
#[non_exhaustive]
pub struct QueryOptions {}

/// What a Chocolate Doom answer says beyond the status: the reply as sent.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct Details {
    /// The reply.
    pub reply: Reply,
}

/// The status a reply describes (see the module's table).
pub fn reply_to_status(reply: &Reply) -> Status {
    let mut rules = vec![(
        Text::from("state"),
        match reply.state {
            0 => Text::from("waiting"),
            1 => Text::from("in game"),
            n => Text::from(n.to_string()),
        },
    )];
    if let Some(p) = &reply.protocols {
        rules.push(("protocols".into(), p.join(",").into()));
    }
    Status {
        host_name: Some(reply.description.clone()),
        game_version: (!reply.version.is_empty()).then(|| reply.version.clone()),
        // No game chosen yet (no client has joined): the mission byte means nothing.
        game_name: reply
            .mission_name()
            .filter(|m| *m != "none" && reply.mode_name() != Some("indetermined"))
            .map(Text::from),
        game_mode: reply.mode_name().map(Text::from),
        player_count: Some(u32::from(reply.players)),
        slot_max: Some(u32::from(reply.max_players)),
        rules: Some(Rules(rules)),
        ..Status::default()
    }
}

/// One Chocolate Doom query of one server.
#[derive(Debug, Clone)]
pub struct QueryMachine {
    x: Exchange<Details>,
}

impl QueryMachine {
    /// A query starting at `now` (the protocol has no id to carry).
    pub fn new(opts: QueryOptions, timing: Timing, now: Instant) -> Self {
        let QueryOptions {} = opts;
        Self {
            x: Exchange::new(Protocol::Doom, &timing, now),
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
        self.x.sent_query(now, d, "query", None, None);
        true
    }

    fn handle_datagram(&mut self, now: Instant, datagram: &[u8]) {
        if self.x.is_done() {
            return;
        }
        let bytes = datagram.len();
        if !datagram.starts_with(&REPLY_TYPE) {
            return self.x.dropped(bytes, "not a query response");
        }
        let reply = match decode_reply(datagram) {
            Ok(r) => r,
            Err(e) => return self.x.undecodable(e, bytes, "does not decode"),
        };
        self.x
            .took_reply(now, bytes, "query", reply.warnings.iter());
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
    fn the_first_reply_is_the_answer() {
        let t0 = Instant::now();
        let mut m = QueryMachine::new(QueryOptions::default(), Timing::default(), t0);
        let mut d = Vec::new();
        assert!(m.poll_transmit_into(t0, &mut d));
        assert_eq!(d, [0, 0x0d]);
        m.handle_datagram(t0, b"\x00\x0fnot a reply\0");
        m.handle_datagram(t0, b"\x00\x0ecut");
        assert!(m.take_result().is_none());
        let mut r = Vec::new();
        Reply {
            version: "Chocolate Doom 3.0.0".into(),
            state: 1,
            players: 2,
            max_players: 4,
            mode: 2,
            mission: 1,
            description: "DM".into(),
            ..Reply::default()
        }
        .encode(&mut r);
        m.handle_datagram(t0, &r);
        let a = m.take_result().unwrap().unwrap();
        assert_eq!(a.protocol, Protocol::Doom);
        assert_eq!(a.status.host_name.as_deref(), Some("DM"));
        assert_eq!(a.status.game_name.as_deref(), Some("doom2"));
        assert_eq!(a.status.game_mode.as_deref(), Some("commercial"));
        assert_eq!(
            (a.status.player_count, a.status.slot_max),
            (Some(2), Some(4))
        );
        assert_eq!(a.status.rules.unwrap().get("state"), Some("in game"));
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
