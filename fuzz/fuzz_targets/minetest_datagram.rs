//! Minetest: the packet decoder and the handshake machine.
//!
//! Input: datagrams of the server, each a 2-byte big-endian length and its bytes.
//!
//! Asserts: no panic; errors point into the datagram; the machine, given the datagrams
//! in order between its sends (time moving an INIT repeat each), sends at most its
//! attempts, the early INITs, the acknowledgements' cap and a DISCO, and ends.

use std::time::{Duration, Instant};

use ogp_fuzz::check_error;
use ogp_proto::client::{QueryDriver, Timing};
use ogp_proto::minetest::client::{QueryMachine, QueryOptions, EARLY_INITS, INIT_REPEAT, MAX_ACKS};
use ogp_proto::minetest::wire::decode_packet;

/// One input of the `minetest_datagram` target.
pub fn run(data: &[u8]) {
    let mut datagrams = Vec::new();
    let mut rest = data;
    while let [a, b, tail @ ..] = rest {
        let n = usize::from(u16::from_be_bytes([*a, *b])).min(tail.len());
        let (d, more) = tail.split_at(n);
        datagrams.push(d);
        rest = more;
    }
    for d in &datagrams {
        if let Err(e) = decode_packet(d) {
            check_error(&e, 0, d.len());
        }
    }
    let mut now = Instant::now();
    let mut m = QueryMachine::new(QueryOptions::default(), Timing::default().retries(1), now);
    let mut sent = 0usize;
    let mut d = Vec::new();
    for g in &datagrams {
        while m.poll_transmit_into(now, &mut d) {
            sent += 1;
        }
        m.handle_datagram(now, g);
        now += INIT_REPEAT;
        m.handle_timeout(now);
    }
    for _ in 0..64 {
        while m.poll_transmit_into(now, &mut d) {
            sent += 1;
        }
        if m.take_result().is_some() {
            assert!(
                // two opens, the early INITs and the core's resends of it (at most 9
                // more, as the client's own test bounds them), the ACKs, the DISCO
                sent <= 2 + usize::from(EARLY_INITS) + 9 + MAX_ACKS + 1,
                "{sent} datagrams sent"
            );
            return;
        }
        match m.poll_timeout() {
            Some(t) => now = t.max(now + Duration::from_millis(1)),
            None => break,
        }
        m.handle_timeout(now);
    }
    panic!("the machine did not end");
}
