//! Cube 2: the datagram describer (a ping reply after its echoed integer, or an extinfo
//! reply), the mapping, and the client machine.
//!
//! Input: one datagram.
//!
//! Asserts: no panic; a ping reply keeps at most `MAX_ATTRS` attributes and
//! `MAX_TRAILING` trailing strings, every string at most `MAX_STRING` characters, never
//! more attributes than bytes; a ping reply re-encodes after the same first integer to
//! bytes that describe the same way; the status survives its JSON state file; an
//! extinfo ids reply lists at most `MAX_PLAYERS` client numbers; the client machine, fed
//! the datagram as the reply to its ping and to each extinfo request (after their
//! echoes), ends.

use ogp_fuzz::drive_client;
use ogp_proto::client::Timing;
use ogp_proto::cube2::client::{QueryMachine, QueryOptions};
use ogp_proto::cube2::wire::{
    ext_request, ping_request, ExtCommand, MAX_ATTRS, MAX_PLAYERS, MAX_STRING, MAX_TRAILING,
};
use ogp_proto::cube2::{describe, mapping, Decoded, ExtReply};

/// One input of the `cube2_datagram` target.
pub fn run(datagram: &[u8]) {
    let len = datagram.len();
    match describe(datagram) {
        Some(Decoded::Ping(p)) => {
            assert!(p.attrs.len() <= MAX_ATTRS && p.attrs.len() <= len);
            assert!(p.trailing.len() <= MAX_TRAILING);
            for s in [&p.map, &p.description].into_iter().chain(&p.trailing) {
                assert!(s.len() <= MAX_STRING);
            }
            let status = mapping::to_status(&p, None, None, None);
            ogp_fuzz::same_through_json(&status);
            let mut again = Vec::new();
            p.encode(&ping_request(1), &mut again);
            assert_eq!(describe(&again), Some(Decoded::Ping(p)), "re-encodes");
        }
        Some(Decoded::Ext(_, ExtReply::PlayerIds(ids))) => assert!(ids.len() <= MAX_PLAYERS),
        _ => {}
    }
    let now = std::time::Instant::now();
    let mut m = QueryMachine::new(
        QueryOptions::default(),
        Timing::default().retries(0),
        1,
        now,
    );
    let mut replies = vec![[ping_request(1), datagram.to_vec()].concat()];
    for c in ExtCommand::ALL {
        replies.push([ext_request(c, 1), datagram.to_vec()].concat());
    }
    let ended = drive_client(&mut m, 8, |m, t| {
        for r in &replies {
            ogp_proto::client::QueryDriver::handle_datagram(m, t, r);
        }
    });
    assert!(
        ended || ogp_proto::client::QueryDriver::poll_timeout(&m).is_none(),
        "the client did not end"
    );
}
