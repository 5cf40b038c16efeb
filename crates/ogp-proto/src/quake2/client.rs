//! The Quake 2 client: QuakeWorld's state machine ([`crate::quakeworld::client`]) in
//! Quake 2's dialect: one `status`, the first print reply from the server is the
//! answer.

use crate::protocol::Protocol;
use crate::quakeworld::client::dialect_machine;
pub use crate::quakeworld::client::{Details, QueryOptions};
use crate::quakeworld::wire::Dialect;

dialect_machine!(Dialect::Quake2, Protocol::Quake2, "Quake 2");

#[cfg(test)]
mod tests {
    use std::time::Instant;

    use super::*;
    use crate::client_core::{QueryDriver, Timing};

    #[test]
    fn its_reply_is_the_answer() {
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
