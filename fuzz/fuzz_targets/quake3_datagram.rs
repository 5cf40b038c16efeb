//! Quake III: the request and reply decoders on one datagram, the mapping both ways, and
//! the client machine.
//!
//! Input: one datagram. The first byte picks the limits: `max_players = a % 64 + 1`,
//! `max_columns = a / 64 + 1`, so the caps are reached.
//!
//! Asserts: no panic; errors and warnings point into the datagram; a decoded request
//! re-encodes to bytes that decode to the same request; a decoded reply re-encodes to
//! bytes that decode to the same reply (within limits twice as long: bytes that were not
//! UTF-8 are read as Latin-1 and written back as UTF-8) and holds at most `max_players`
//! player lines of at most `max_columns` columns; its status survives its JSON state
//! file, encodes back to a reply that decodes, and maps to the same host name, map and
//! player names again; the client machine fed the datagram as every reply ends.

use std::time::Instant;

use ogp_fuzz::check_error;
use ogp_proto::client::{QueryDriver, Timing};
use ogp_proto::quake3::client::{QueryMachine, QueryOptions};
use ogp_proto::quake3::mapping::{reply_to_status, status_to_reply};
use ogp_proto::quake3::{decode_reply_with, decode_request, DecodeLimits};
use ogp_proto::Status;

/// One input of the `quake3_datagram` target.
pub fn run(data: &[u8]) {
    let Some((&a, datagram)) = data.split_first() else {
        return;
    };
    let len = datagram.len();
    match decode_request(datagram) {
        Ok(r) => {
            let mut b = Vec::new();
            r.encode(&mut b);
            assert_eq!(decode_request(&b).expect("re-encoded request"), r);
        }
        Err(e) => check_error(&e, 0, len),
    }
    let mut limits = DecodeLimits::default();
    limits.max_players = usize::from(a % 64) + 1;
    limits.max_columns = usize::from(a / 64) + 1;
    match decode_reply_with(datagram, &limits) {
        Ok(d) => {
            for w in &d.warnings {
                assert!(w.offset <= len, "warning at {} of {len}: {w}", w.offset);
            }
            assert!(d.reply.players.len() <= limits.max_players);
            for p in &d.reply.players {
                assert!(p.before.len() + p.after.len() <= limits.max_columns);
            }
            let mut wide = limits;
            wide.max_info_bytes *= 2;
            wide.max_player_line *= 2;
            let again = decode_reply_with(&d.reply.to_bytes(), &wide).expect("re-encoded reply");
            assert_eq!(again.reply, d.reply, "reply changed through the wire");

            let mut status = Status::default();
            reply_to_status(&d.reply, &mut status);
            let json = Status::from_json(&status.to_json_pretty()).expect("state file");
            assert_eq!(json, status, "status changed through JSON");
            let back = status_to_reply(&status, d.reply.kind).to_bytes();
            let mut wider = wide;
            wider.max_players = usize::MAX;
            wider.max_columns = usize::MAX;
            wider.max_info_bytes *= 2;
            wider.max_player_line *= 2;
            let back = decode_reply_with(&back, &wider).expect("status encodes to a reply");
            let mut again = Status::default();
            reply_to_status(&back.reply, &mut again);
            let names = |s: &Status| -> Vec<_> {
                s.players.iter().flatten().map(|p| p.name.clone()).collect()
            };
            assert_eq!(names(&again), names(&status));
            assert_eq!(again.map, status.map);
        }
        Err(e) => check_error(&e, 0, len),
    }
    let now = Instant::now();
    let mut m = QueryMachine::new(
        QueryOptions::default(),
        Timing::default().retries(0),
        5,
        now,
    );
    let ended = ogp_fuzz::drive_client(&mut m, 8, |m, t| m.handle_datagram(t, datagram));
    assert!(ended || m.poll_timeout().is_none(), "the client did not end");
}
