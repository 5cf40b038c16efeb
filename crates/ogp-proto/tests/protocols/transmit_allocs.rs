//! A client machine writes its datagrams into the caller's buffer
//! (`QueryDriver::poll_transmit_into`): once a query is under way, sending allocates
//! nothing (the GQP draft excepted), so a scanner that reuses its buffers allocates
//! nothing per datagram sent.
//!
//! The `allocation-counter` crate's global allocator, linked into this test binary only,
//! counts the allocations.

use std::time::{Duration, Instant};

use ogp_proto::client::{Machine, Options, QueryDriver, Timing, Transport};
use ogp_proto::Protocol;

#[test]
fn a_retry_of_every_protocol_is_sent_without_an_allocation() {
    let t0 = Instant::now();
    let opts = Options::with_timing(
        Timing::default()
            .attempt_timeout(Duration::from_millis(100))
            .retries(3)
            .total_timeout(Duration::from_secs(5)),
    );
    for p in Protocol::ALL {
        let mut m = Machine::new(p, &opts, 0x1234_5678, t0);
        if m.transport() == Transport::Stream {
            // Over TCP nothing is retried: a lost byte is the kernel's to resend.
            continue;
        }
        let mut buf = Vec::with_capacity(2048);
        assert!(
            m.poll_transmit_into(t0, &mut buf),
            "{p:?}: a first datagram"
        );
        let first = buf.clone();
        while m.poll_transmit_into(t0, &mut buf) {}
        // No answer: the attempt times out and the datagram goes again.
        let t1 = t0 + Duration::from_millis(150);
        m.handle_timeout(t1);
        let mut sent = false;
        let counted = allocation_counter::measure(|| {
            sent = m.poll_transmit_into(t1, &mut buf);
        });
        assert!(sent, "{p:?}: a retry");
        if p == Protocol::Gamespy3 {
            // An unanswered 09 handshake falls back to asking without a challenge.
            assert_eq!(buf.get(2), Some(&0), "{p:?}: the info request, {buf:02x?}");
        } else if p == Protocol::Netquake {
            // Attempts alternate between Quake's and Hexen II's server-info requests.
            assert_eq!(buf, b"\x80\x00\x00\x0e\x02HEXENII\x00\x04", "{p:?}");
        } else {
            assert_eq!(buf, first, "{p:?}: the retry is the first datagram again");
        }
        if p == Protocol::Gqp {
            // The GQP draft builds its command list and its frame (which its encoding
            // may compress) for each datagram: a few allocations, bounded.
            assert!(counted.count_total <= 8, "{p:?}: {counted:?}");
        } else {
            assert_eq!(
                counted.count_total, 0,
                "{p:?}: allocations while sending a retry"
            );
        }
        // The provided `poll_transmit` gives the same bytes in a buffer of its own.
        let mut m = Machine::new(p, &opts, 0x1234_5678, t0);
        assert_eq!(m.poll_transmit(t0), Some(first), "{p:?}");
    }
}
