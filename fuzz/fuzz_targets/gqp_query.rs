//! GQP query datagrams: `gqp::decode_query` on arbitrary bytes, with the responder's
//! default limits (32 commands, 4096 payload bytes after decompression).
//!
//! Asserts: no panic; errors point into the datagram (or into the decompressed payload)
//! and an unknown encoding is printable and really unknown; a decoded query has at least
//! one and at most 32 commands of at most `MAX_ARGS` arguments and came in a datagram
//! ending in EOT; it re-encodes (`encode_query`) to a datagram that decodes to the same
//! query and, when not compressed, carries the very same payload bytes (escaping is
//! canonical); the limits are exact (one command fewer, or one payload byte less for an
//! uncompressed query, is an error); `is_gqp` accepts every datagram that starts like a
//! command; `render_query` escapes every control character; tokens parse back to their
//! lower-case form.

use ogp_fuzz::{assert_render_safe, check_gqp_error, gqp_wire_payload};
use ogp_proto::gqp::wire::{MAX_ARGS, SOH};
use ogp_proto::gqp::{auth, decode_query, encode_query, is_gqp, render_query, FrameError};
use ogp_proto::DecodeErrorKind;

/// `GqpConfig::default()`'s limits.
const MAX_COMMANDS: usize = 32;
const MAX_DECODED: usize = 4096;

/// One input of the `gqp_query` target.
pub fn run(data: &[u8]) {
    let q = match decode_query(data, MAX_COMMANDS, MAX_DECODED) {
        Ok(q) => q,
        Err(e) => {
            check_gqp_error(&e, data.len(), MAX_DECODED);
            return;
        }
    };
    assert_eq!(data.last(), Some(&ogp_proto::gqp::wire::EOT));
    assert!(!q.commands.is_empty() && q.commands.len() <= MAX_COMMANDS);
    assert!(q.commands.iter().all(|c| c.args.len() <= MAX_ARGS));
    if data.len() >= 2 && (data[0] == SOH || (0x20..=0x7e).contains(&data[0])) {
        assert!(is_gqp(data));
    }

    // Round trip through the encoder.
    let mut d2 = Vec::new();
    encode_query(&q, &mut d2);
    let q2 = match decode_query(&d2, MAX_COMMANDS, MAX_DECODED) {
        Ok(q2) => q2,
        Err(e) => panic!("re-encoded query does not decode: {e}"),
    };
    assert_eq!(q2, q, "query round trip");
    if q.encoding.compression.is_none() {
        let p1 = gqp_wire_payload(data).expect("decoded, so framed");
        let p2 = gqp_wire_payload(&d2).expect("encoded, so framed");
        assert_eq!(p2, p1, "re-encoded payload differs");

        // The payload limit is exact.
        if let Some(less) = p1.len().checked_sub(1) {
            match decode_query(data, MAX_COMMANDS, less) {
                Err(FrameError::Decode(e)) => {
                    assert!(matches!(e.kind, DecodeErrorKind::TooLarge { .. }), "{e}")
                }
                other => panic!(
                    "payload of {} bytes read with a cap of {less}: {other:?}",
                    p1.len()
                ),
            }
        }
    }
    // The command limit is exact.
    let n = q.commands.len();
    assert_eq!(decode_query(data, n, MAX_DECODED).as_ref(), Ok(&q));
    match decode_query(data, n - 1, MAX_DECODED) {
        Err(FrameError::Decode(e)) => {
            assert!(matches!(e.kind, DecodeErrorKind::TooLarge { .. }), "{e}")
        }
        other => panic!("{n} commands read with a limit of {}: {other:?}", n - 1),
    }

    assert_render_safe(&render_query(&q));
    for a in q.commands.iter().flat_map(|c| c.args.iter()) {
        if let Some(t) = auth::parse_token(a) {
            assert_eq!(auth::format_token(t), a.to_ascii_lowercase());
        }
    }
}
