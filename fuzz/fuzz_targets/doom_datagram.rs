//! Chocolate Doom: the query response decoder on one datagram, the mapping, and the
//! client machine.
//!
//! Input: one datagram.
//!
//! Asserts: no panic; errors and warnings point into the datagram; at most
//! `MAX_PROTOCOLS` protocol names, no more than one per byte; a reply read without a
//! warning re-encodes to itself; the status survives its JSON state file; the client
//! machine fed the datagram ends.

use std::time::Instant;

use ogp_fuzz::{answer_every_send, check_error, check_warnings};
use ogp_proto::client::Timing;
use ogp_proto::doom::client::{reply_to_status, QueryMachine, QueryOptions};
use ogp_proto::doom::decode_reply;
use ogp_proto::doom::wire::MAX_PROTOCOLS;
use ogp_proto::Status;

/// One input of the `doom_datagram` target.
pub fn run(datagram: &[u8]) {
    let len = datagram.len();
    match decode_reply(datagram) {
        Ok(r) => {
            check_warnings(&r.warnings, 0, len);
            let names = r.protocols.as_ref().map_or(0, Vec::len);
            assert!(names <= MAX_PROTOCOLS && names <= len);
            let nul_free = !r.version.contains('\0') && !r.description.contains('\0');
            if r.warnings.is_empty() && nul_free {
                let mut b = Vec::new();
                r.encode(&mut b);
                assert_eq!(b, datagram, "re-encodes to itself");
            }
            let status = reply_to_status(&r);
            let json = Status::from_json(&status.to_json_pretty()).expect("state file");
            assert_eq!(json, status, "status changed through JSON");
        }
        Err(e) => check_error(&e, 0, len),
    }
    let now = Instant::now();
    let mut m = QueryMachine::new(QueryOptions::default(), Timing::default().retries(0), now);
    answer_every_send(&mut m, datagram);
}
