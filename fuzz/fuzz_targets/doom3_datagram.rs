//! The Doom 3 engine: the `infoResponse` decoder in each dialect and told apart, the
//! mapping, and the client machine.
//!
//! Input: one datagram.
//!
//! Asserts: no panic; errors and warnings point into the datagram; a reply keeps at most
//! `MAX_RULES` rules and `MAX_PLAYERS` players, at most one of each per two bytes; the
//! status survives its JSON state file (rules grouped by key); a reply without warnings
//! re-encodes to bytes that decode to the same reply; the client machine fed the
//! datagram ends.

use std::time::Instant;

use ogp_fuzz::{answer_every_send, check_error};
use ogp_proto::client::Timing;
use ogp_proto::doom3::client::{QueryMachine, QueryOptions};
use ogp_proto::doom3::mapping::info_to_status;
use ogp_proto::doom3::wire::{decode_info_response, Dialect, MAX_PLAYERS, MAX_RULES};

/// One input of the `doom3_datagram` target.
pub fn run(datagram: &[u8]) {
    let len = datagram.len();
    for dialect in [
        None,
        Some(Dialect::Doom3),
        Some(Dialect::Quake4),
        Some(Dialect::Etqw),
    ] {
        match decode_info_response(datagram, dialect) {
            Ok(r) => {
                for w in &r.warnings {
                    assert!(w.offset <= len, "warning at {} of {len}: {w}", w.offset);
                }
                assert!(r.rules.len() <= MAX_RULES && r.rules.len() * 2 <= len);
                assert!(r.players.len() <= MAX_PLAYERS && r.players.len() * 2 <= len);
                let status = info_to_status(&r);
                ogp_fuzz::same_through_json(&status);
                if r.warnings.is_empty() {
                    let mut b = Vec::new();
                    r.encode(&mut b);
                    let mut again = decode_info_response(&b, Some(r.dialect)).unwrap();
                    again.size = r.size;
                    assert_eq!(again.rules, r.rules);
                    assert_eq!(again.players, r.players);
                }
            }
            Err(e) => check_error(&e, 0, len),
        }
    }
    let now = Instant::now();
    let id = datagram
        .get(15..19)
        .and_then(|b| <[u8; 4]>::try_from(b).ok())
        .map_or(0, u32::from_le_bytes);
    let mut m = QueryMachine::new(
        QueryOptions::default(),
        Timing::default().retries(0),
        id,
        now,
    );
    answer_every_send(&mut m, datagram);
}
