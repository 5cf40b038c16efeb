//! Doomsday's beacon: the reply decoder on one datagram, the record decoder on the same
//! bytes as an inflated message (zlib would hide most of them from the fuzzer), the
//! mapping, and the client machine.
//!
//! Input: one datagram (or message).
//!
//! Asserts: no panic; errors and warnings of the message point into it; those of the
//! datagram into it or into the message it inflates to (at most `MAX_INFLATED` bytes);
//! at most `MAX_MEMBERS` members; a message read without a warning re-encodes to
//! itself; the status survives its JSON state file (rules grouped by key); the client
//! machine fed the datagram ends.

use std::time::Instant;

use ogp_fuzz::{answer_every_send, check_error, check_warnings};
use ogp_proto::client::Timing;
use ogp_proto::doomsday::client::{reply_to_status, QueryMachine, QueryOptions};
use ogp_proto::doomsday::wire::{decode_message, decode_reply, Reply, MAX_INFLATED, MAX_MEMBERS};
use ogp_proto::Status;

fn check_status(r: &Reply) {
    assert!(r.members.len() <= MAX_MEMBERS);
    let status = reply_to_status(r);
    let json = Status::from_json(&status.to_json_pretty()).expect("state file");
    // a member name sent twice reads back grouped (one JSON key, its values in order)
    let mut want = status;
    want.rules = want.rules.as_ref().map(ogp_proto::Rules::grouped);
    assert_eq!(json, want, "status changed through JSON");
}

/// One input of the `doomsday_datagram` target.
pub fn run(data: &[u8]) {
    let len = data.len();
    match decode_message(data) {
        Ok(r) => {
            check_warnings(&r.warnings, 0, len);
            if r.warnings.is_empty() {
                let mut b = Vec::new();
                r.encode_message(&mut b);
                assert_eq!(b, data, "re-encodes to itself");
            }
            check_status(&r);
        }
        Err(e) => check_error(&e, 0, len),
    }
    let bound = len.max(MAX_INFLATED);
    match decode_reply(data) {
        Ok(r) => {
            check_warnings(&r.warnings, 0, bound);
            check_status(&r);
        }
        Err(e) => check_error(&e, 0, bound),
    }
    let now = Instant::now();
    let mut m = QueryMachine::new(QueryOptions::default(), Timing::default().retries(0), now);
    answer_every_send(&mut m, data);
}
