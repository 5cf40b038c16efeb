//! Teeworlds 0.6 / DDNet and 0.7: the reply decoders on one datagram, the mapping, and
//! both client machines.
//!
//! Input: one datagram.
//!
//! Asserts: no panic; errors and warnings point into the datagram; a reply keeps at most
//! `MAX_CLIENTS` clients, no more than one per five bytes; the status survives its JSON
//! state file; a 0.6 / DDNet reply read without a warning re-encodes to one that reads
//! back the same; both client machines fed the datagram end.

use std::time::Instant;

use ogp_fuzz::{answer_every_send, check_error};
use ogp_proto::client::Timing;
use ogp_proto::teeworlds::client::{QueryMachine, QueryOptions};
use ogp_proto::teeworlds::mapping::info_to_status;
use ogp_proto::teeworlds::wire::{decode_reply6, decode_reply7, encode, Reply6, MAX_CLIENTS};
use ogp_proto::teeworlds7::client as c7;

/// One input of the `teeworlds_datagram` target.
pub fn run(datagram: &[u8]) {
    let len = datagram.len();
    match decode_reply6(datagram) {
        Ok(r) => {
            let (clients, warnings) = match &r {
                Reply6::Info(_, i) => (&i.clients, &i.warnings),
                Reply6::More(m) => (&m.clients, &m.warnings),
            };
            assert!(clients.len() <= MAX_CLIENTS && clients.len() * 5 <= len);
            for w in warnings {
                assert!(w.offset <= len, "warning at {} of {len}: {w}", w.offset);
            }
            if let Reply6::Info(kind, i) = &r {
                ogp_fuzz::same_through_json(&info_to_status(i, &[]));
                if i.warnings.is_empty() && i.clients.len() < MAX_CLIENTS {
                    // Re-encoded, it reads back the same (numbers and flags in their
                    // shortest form: `007` and a player flag `2` read as 7 and `1`).
                    let mut b = Vec::new();
                    encode::info6(&mut b, *kind, i);
                    assert_eq!(decode_reply6(&b).ok().as_ref(), Some(&r), "round trip");
                }
            }
        }
        Err(e) => check_error(&e, 0, len),
    }
    match decode_reply7(datagram, None) {
        Ok((_, i)) => {
            assert!(i.clients.len() <= MAX_CLIENTS && i.clients.len() * 5 <= len);
            ogp_fuzz::same_through_json(&info_to_status(&i, &[]));
        }
        Err(e) => check_error(&e, 0, len),
    }
    let now = Instant::now();
    let mut m = QueryMachine::new(
        QueryOptions::default(),
        Timing::default().retries(0),
        0x12_3456,
        now,
    );
    answer_every_send(&mut m, datagram);
    let mut m = c7::QueryMachine::new(
        c7::QueryOptions::default(),
        Timing::default().retries(0),
        0x1122_3344,
        now,
    );
    answer_every_send(&mut m, datagram);
}
