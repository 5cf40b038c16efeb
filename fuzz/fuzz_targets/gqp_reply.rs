//! GQP reply datagrams: `gqp::decode_reply` on arbitrary bytes (payload cap 64 KiB after
//! decompression), then what a client does with the replies (`gqp::model::apply_reply`).
//!
//! Asserts: no panic; errors point into the datagram (or into the decompressed payload);
//! a decoded datagram re-encodes (`encode_reply`, same encoding, continued records,
//! replies and terminator) to one that decodes to the same thing and, when not
//! compressed, carries the very same payload bytes; `last` is true exactly for datagrams
//! ending in EOT; `render_replies` escapes every control character; reading the replies
//! into a status never keeps more than 64 warnings, and the status's own records read back
//! into a status whose records are the same (the model mapping is idempotent).

use ogp_fuzz::{assert_render_safe, check_gqp_error, gqp_wire_payload};
use ogp_proto::gqp::model::{
    addons_records, apply_reply, limits_records, players_records, rules_records,
    serverinfo_records, teams_records,
};
use ogp_proto::gqp::wire::EOT;
use ogp_proto::gqp::{decode_reply, encode_reply, render_replies, Record, Reply};
use ogp_proto::Status;

const MAX_DECODED: usize = 1 << 16;

/// The records a server would answer the status commands with, from `s`.
fn status_replies(s: &Status) -> Vec<Reply> {
    let mut v = vec![Reply::ok("serverinfo", serverinfo_records(s))];
    let lists: [(&str, Option<Vec<Record>>); 5] = [
        ("players", players_records(s, true)),
        ("teams", teams_records(s)),
        ("rules", rules_records(s)),
        ("addons", addons_records(s)),
        ("limits", limits_records(s)),
    ];
    for (name, records) in lists {
        if let Some(r) = records {
            v.push(Reply::ok(name, r));
        }
    }
    v
}

/// One input of the `gqp_reply` target.
pub fn run(data: &[u8]) {
    let rd = match decode_reply(data, MAX_DECODED) {
        Ok(rd) => rd,
        Err(e) => {
            check_gqp_error(&e, data.len(), MAX_DECODED);
            return;
        }
    };
    assert_eq!(rd.last, data.last() == Some(&EOT));
    assert!(!rd.continued.is_empty() || !rd.replies.is_empty());

    // Round trip through the encoder.
    let mut d2 = Vec::new();
    encode_reply(rd.encoding, &rd.continued, &rd.replies, rd.last, &mut d2);
    let rd2 = match decode_reply(&d2, MAX_DECODED) {
        Ok(r) => r,
        Err(e) => panic!("re-encoded reply does not decode: {e}"),
    };
    assert_eq!(rd2, rd, "reply round trip");
    if rd.encoding.compression.is_none() {
        assert_eq!(
            gqp_wire_payload(&d2),
            gqp_wire_payload(data),
            "re-encoded payload differs"
        );
    }

    assert_render_safe(&render_replies(&rd.replies));

    // What a client reads from them.
    let mut status = Status::default();
    let mut warnings = Vec::new();
    for r in &rd.replies {
        apply_reply(&mut status, r, &mut warnings);
    }
    assert!(warnings.len() <= 64, "{} warnings", warnings.len());
    let first = status_replies(&status);
    let mut back = Status::default();
    let mut w2 = Vec::new();
    for r in &first {
        apply_reply(&mut back, r, &mut w2);
    }
    assert!(
        w2.is_empty(),
        "a status's own records give warnings: {w2:?}"
    );
    assert_eq!(status_replies(&back), first, "records → status → records");
}
