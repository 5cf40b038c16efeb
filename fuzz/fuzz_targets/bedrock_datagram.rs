//! Minecraft Bedrock: the ping and pong decoders on one datagram, the advertisement
//! reader, the mapping both ways, and the client machine.
//!
//! Input: one datagram.
//!
//! Asserts: no panic; errors and warnings point into the datagram; a decoded ping
//! re-encodes to its first 33 bytes; a decoded pong re-encodes to bytes that decode to
//! the same pong (without the warnings of bytes after the string); the advertisement
//! holds at most `MAX_FIELDS` fields; the status survives its JSON state file and maps
//! back to an advertisement whose status has the same host name, counts and map; the
//! client machine fed the datagram (and the datagram with our time written in) ends.

use std::time::Instant;

use ogp_fuzz::check_error;
use ogp_proto::bedrock::client::{QueryMachine, QueryOptions};
use ogp_proto::bedrock::mapping::{pong_to_status, status_to_advertisement};
use ogp_proto::bedrock::wire::{Advertisement, Ping, Pong, MAX_FIELDS, PING_LEN};
use ogp_proto::client::{QueryDriver, Timing};
use ogp_proto::Status;

/// One input of the `bedrock_datagram` target.
pub fn run(datagram: &[u8]) {
    let len = datagram.len();
    match Ping::decode(datagram) {
        Ok(p) => {
            let mut b = Vec::new();
            p.encode(&mut b);
            assert_eq!(&b[..], &datagram[..PING_LEN]);
        }
        Err(e) => check_error(&e, 0, len),
    }
    match Pong::decode(datagram) {
        Ok(d) => {
            for w in &d.warnings {
                assert!(w.offset <= len, "warning at {} of {len}: {w}", w.offset);
            }
            let mut b = Vec::new();
            d.pong.encode(&mut b);
            assert_eq!(Pong::decode(&b).expect("re-encoded pong").pong, d.pong);
            let a = Advertisement::parse(&d.pong.advertisement);
            assert!(a.fields.len() <= MAX_FIELDS);
            let status = pong_to_status(&d.pong);
            let json = Status::from_json(&status.to_json_pretty()).expect("state file");
            assert_eq!(json, status, "status changed through JSON");
            let back = Pong {
                time: d.pong.time,
                server_guid: d.pong.server_guid,
                advertisement: status_to_advertisement(&status, d.pong.server_guid).to_text(),
            };
            let again = pong_to_status(&back);
            if a.fields.len() >= 12 && a.dropped == 0 && !d.pong.advertisement.contains('\u{fffd}')
            {
                assert_eq!(again.host_name, status.host_name);
                assert_eq!(again.player_count, status.player_count);
                assert_eq!(again.slot_max, status.slot_max);
                assert_eq!(again.map, status.map);
            }
        }
        Err(e) => check_error(&e, 0, len),
    }
    for echo in [false, true] {
        let now = Instant::now();
        let mut m = QueryMachine::new(
            QueryOptions::default(),
            Timing::default().retries(0),
            5,
            now,
        );
        let mut reply = datagram.to_vec();
        if echo {
            if let Some(t) = reply.get_mut(1..9) {
                t.copy_from_slice(&5u64.to_be_bytes());
            }
        }
        let mut t = now;
        for _ in 0..8 {
            while m.poll_transmit(t).is_some() {
                m.handle_datagram(t, &reply);
            }
            if m.take_result().is_some() {
                break;
            }
            let Some(next) = m.poll_timeout() else { break };
            t = next;
            m.handle_timeout(t);
        }
    }
}
