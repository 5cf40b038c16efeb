//! The Quake 2 client: QuakeWorld's state machine ([`crate::quakeworld::client`]) in
//! Quake 2's dialect: one `status`, the first `print` reply from the server is the
//! answer.

use std::time::Instant;

use crate::client_core::Timing;
use crate::protocol::Protocol;
use crate::quakeworld::client::{delegate_driver, StatusMachine};
pub use crate::quakeworld::client::{Details, QueryOptions};
use crate::quakeworld::wire::Dialect;

/// One Quake 2 query of one server.
#[derive(Debug, Clone)]
pub struct QueryMachine(StatusMachine);

impl QueryMachine {
    /// A query starting at `now` (the protocol has no id to carry).
    pub fn new(opts: QueryOptions, timing: Timing, now: Instant) -> Self {
        Self(StatusMachine::new(
            Dialect::Quake2,
            Protocol::Quake2,
            opts,
            timing,
            now,
        ))
    }
}

delegate_driver!(QueryMachine);

crate::client_core::start_query!(QueryOptions, no_id);

#[cfg(test)]
mod tests {
    use super::*;
    use crate::client_core::QueryDriver;

    #[test]
    fn a_print_reply_is_the_answer() {
        let t0 = Instant::now();
        let mut m = QueryMachine::new(QueryOptions::default(), Timing::default(), t0);
        let mut d = Vec::new();
        assert!(m.poll_transmit_into(t0, &mut d));
        assert_eq!(d, b"\xff\xff\xff\xffstatus\n");
        m.handle_datagram(t0, b"\xff\xff\xff\xffn\\hostname\\qw\n");
        assert!(m.take_result().is_none());
        m.handle_datagram(
            t0,
            b"\xff\xff\xff\xffprint\n\\hostname\\Q2\\mapname\\q2dm1\\maxclients\\16\n5 40 \"Grunt\"\n",
        );
        let a = m.take_result().unwrap().unwrap();
        assert_eq!(a.protocol, Protocol::Quake2);
        let p = &a.status.players.as_ref().unwrap()[0];
        assert_eq!(
            (p.frags, p.ping, p.name.as_deref()),
            (Some(5), Some(40), Some("Grunt"))
        );
        assert_eq!(a.status.slot_max, Some(16));
    }
}
