//! The HexenWorld client: QuakeWorld's state machine ([`crate::quakeworld::client`]) in
//! HexenWorld's dialect: one `status`, the first `FF FF FF FF FF n` reply from the server is the
//! answer.

use crate::protocol::Protocol;
use crate::quakeworld::client::dialect_machine;
pub use crate::quakeworld::client::{Details, QueryOptions};
use crate::quakeworld::wire::Dialect;

dialect_machine!(Dialect::HexenWorld, Protocol::Hexenworld, "HexenWorld");

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
        assert_eq!(d, b"\xff\xff\xff\xff\xffstatus\n");
        m.handle_datagram(t0, b"\xff\xff\xff\xffn\\hostname\\qw\n");
        assert!(m.take_result().is_none());
        m.handle_datagram(
            t0,
            b"\xff\xff\xff\xff\xffn\\hostname\\HW\\map\\demo1\\maxclients\\16\n3 5 1 40 \"Grunt\" \"\" 1 2\n\x00",
        );
        let a = m.take_result().unwrap().unwrap();
        assert_eq!(a.protocol, Protocol::Hexenworld);
        let p = &a.status.players.as_ref().unwrap()[0];
        assert_eq!(
            (p.frags, p.ping, p.name.as_deref()),
            (Some(5), Some(40), Some("Grunt"))
        );
        assert_eq!(a.status.slot_max, Some(16));
    }
}
