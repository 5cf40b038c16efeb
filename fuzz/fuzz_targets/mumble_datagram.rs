//! Mumble: the ping reply decoder on one datagram, the mapping, and the client machine.
//!
//! Input: one datagram.
//!
//! Asserts: no panic; errors and warnings point into the datagram; a reply of exactly 24
//! bytes re-encodes to itself; the status survives its JSON state file; the client
//! machine fed the datagram ends.

use std::time::Instant;

use ogp_fuzz::{answer_every_send, check_error, check_warnings};
use ogp_proto::client::Timing;
use ogp_proto::mumble::client::{reply_to_status, QueryMachine, QueryOptions};
use ogp_proto::mumble::{decode_reply, REPLY_LEN};
use ogp_proto::Status;

/// One input of the `mumble_datagram` target.
pub fn run(datagram: &[u8]) {
    let len = datagram.len();
    match decode_reply(datagram) {
        Ok(r) => {
            check_warnings(&r.warnings, 0, len);
            if len == REPLY_LEN {
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
    let mut m = QueryMachine::new(
        QueryOptions::default(),
        Timing::default().retries(0),
        1,
        now,
    );
    answer_every_send(&mut m, datagram);
}
