//! GameSpy v1: the query, packet and heartbeat decoders on one datagram, the reassembly of
//! a reply split from it, the mapping both ways, and the client machine.
//!
//! Input: `[a]` then one datagram. `a` picks the split: the pairs of the decoded packet
//! are written back as parts of at most `64 + 8 * a` bytes, fed to the reassembler
//! last-first with part `a % 3 + 1` fed twice.
//!
//! Asserts: no panic; errors and warnings point into the datagram; a decoded query,
//! packet or heartbeat re-encodes to bytes that decode to the same value; the caps hold;
//! the split reply reassembles to the same pairs in any order; the status survives its
//! JSON state file and encodes to pairs that map to the same status; the client machine
//! fed the datagram as every reply ends.

use std::time::Instant;

use ogp_fuzz::{answer_every_send, check_error};
use ogp_proto::client::Timing;
use ogp_proto::gamespy1::client::{QueryMachine, QueryOptions};
use ogp_proto::gamespy1::{
    decode_heartbeat, decode_packet, decode_packet_with, decode_query, reply_to_status,
    split_reply, status_to_pairs, PacketLimits, Pushed, Reassembler, ReassemblyLimits,
};
use ogp_proto::Status;

/// One input of the `gs1_datagram` target.
pub fn run(data: &[u8]) {
    let Some((&a, datagram)) = data.split_first() else {
        return;
    };
    let len = datagram.len();
    match decode_query(datagram) {
        Ok(qs) => {
            assert!(!qs.is_empty() && qs.len() <= 8);
            let mut b = Vec::new();
            for q in &qs {
                q.encode(false, &mut b);
            }
            // Latin-1 read, UTF-8 written: only a longer datagram may pass a cap.
            match decode_query(&b) {
                Ok(again) => assert_eq!(again, qs),
                Err(e) => assert!(b.len() > len, "re-encoded query: {e}"),
            }
        }
        Err(e) => check_error(&e, 0, len),
    }
    match decode_heartbeat(datagram) {
        Ok(h) => {
            let mut b = Vec::new();
            h.encode(&mut b);
            match decode_heartbeat(&b) {
                Ok(again) => assert_eq!(again, h),
                Err(e) => assert!(b.len() > len, "re-encoded heartbeat: {e}"),
            }
        }
        Err(e) => check_error(&e, 0, len),
    }
    match decode_packet(datagram) {
        Ok(d) => {
            for w in &d.warnings {
                assert!(w.offset <= len, "warning at {} of {len}: {w}", w.offset);
            }
            assert!(d.packet.pairs.len() <= 1024);
            // Latin-1 read, UTF-8 written: within limits twice as long.
            let mut wide = PacketLimits::default();
            wide.max_bytes *= 2;
            let again = decode_packet_with(&d.packet.to_bytes(), &wide).expect("re-encoded packet");
            assert_eq!(again.packet, d.packet, "packet changed through the wire");

            let max = 64 + 8 * usize::from(a);
            let (parts, left_out) = split_reply(&d.packet.pairs, 1, max, 16);
            if left_out == 0 {
                let mut limits = ReassemblyLimits::default();
                limits.max_bytes *= 2;
                let mut r = Reassembler::with_limits(limits);
                let dup = usize::from(a % 3);
                let mut order: Vec<usize> = (0..parts.len()).rev().collect();
                if dup < parts.len() {
                    order.insert(0, dup);
                }
                let mut done = false;
                for i in order {
                    let bytes = parts[i].to_bytes();
                    let p = decode_packet_with(&bytes, &wide).expect("a part").packet;
                    match r.push(p, bytes.len()).expect("parts within the caps") {
                        Pushed::Complete => done = true,
                        Pushed::Incomplete | Pushed::Duplicate => {}
                        Pushed::OtherQuery => panic!("one query id"),
                    }
                }
                assert!(done, "every part pushed");
                assert_eq!(
                    r.take_pairs(),
                    d.packet.pairs,
                    "pairs changed through parts"
                );
            }

            let status = reply_to_status(&d.packet.pairs).status;
            let json = Status::from_json(&status.to_json_pretty()).expect("state file");
            assert_eq!(json, status, "status changed through JSON");
            let back = reply_to_status(&status_to_pairs(&status)).status;
            assert_eq!(back, status, "status changed through pairs");
        }
        Err(e) => check_error(&e, 0, len),
    }
    let now = Instant::now();
    let mut m = QueryMachine::new(
        QueryOptions::default(),
        Timing::default().retries(0).alive_retries(0),
        5,
        now,
    );
    answer_every_send(&mut m, datagram);
}
