//! OGP v0.02 draft datagrams: `ogp_draft::decode` on arbitrary bytes (queries and
//! answers), and `ogp_draft::decode_answer_body` on the same bytes taken as a body.
//!
//! Asserts: no panic; errors and warnings point into the input; a decoded header
//! re-encodes (`encoded_len` bytes, no longer than it was) and decodes to the same header;
//! a decoded Default Query re-encodes no longer than it was read and decodes to the same
//! query with no trailing bytes (and as a whole datagram, to the same header and query);
//! a fragment is one of 2–127 packets that a fresh reassembler takes as incomplete; a
//! decoded answer body re-encodes with its own AnswerFields and PLAYERLIST mask to a body
//! that decodes without warnings to the same fields and mask, no longer than it was when
//! nothing was lossy, and to the same bytes again when encoded once more (the mapping
//! reaches a fixed point after one round).

use ogp_fuzz::check_error;
use ogp_proto::ogp::split::{Pushed, Reassembler};
use ogp_proto::ogp_draft::answer::{encode_answer_sections, Answer};
use ogp_proto::ogp_draft::{self, decode_answer_body, DecodedQuery, DefaultQuery, Header, Message};

/// Re-encodes a decoded answer body with its own fields; checks the fixed point. `base`
/// and `len` locate the body in the input (for warning offsets); `consumed` is the number
/// of bytes the body's fields took.
fn check_answer(a: &Answer, base: usize, len: usize, consumed: usize) {
    for w in &a.warnings {
        assert!(
            w.offset >= base && w.offset <= base + len,
            "warning offset {w}"
        );
    }
    assert_eq!(a.player_fields.is_some(), a.status.players.is_some());
    let mask = a.player_fields.unwrap_or(0);
    let mut b1 = Vec::new();
    encode_answer_sections(&a.status, a.fields, mask, &mut b1);
    let a2 = match decode_answer_body(&b1) {
        Ok(a2) => a2,
        Err(e) => panic!("re-encoded answer body does not decode: {e}"),
    };
    assert!(
        a2.warnings.is_empty(),
        "re-encoded body warns: {:?}",
        a2.warnings
    );
    assert!(a2.trailing.is_empty());
    assert_eq!(a2.fields, a.fields, "AnswerFields round trip");
    assert_eq!(
        a2.player_fields, a.player_fields,
        "PLAYERLIST mask round trip"
    );
    let lossy = a.warnings.iter().any(|w| w.field != "Answer");
    if !lossy {
        // AnswerFields may come non-minimal; everything else has one encoding.
        assert!(
            b1.len() <= consumed,
            "re-encoded body is longer: {} > {consumed}",
            b1.len()
        );
    }
    let mut b2 = Vec::new();
    encode_answer_sections(&a2.status, a2.fields, mask, &mut b2);
    assert_eq!(b2, b1, "second round changes the body");
}

/// One input of the `ogp_draft_datagram` target.
pub fn run(data: &[u8]) {
    // The bytes as a body.
    match decode_answer_body(data) {
        Ok(a) => {
            assert!(a.trailing.len() <= data.len());
            check_answer(&a, 0, data.len(), data.len() - a.trailing.len());
        }
        Err(e) => check_error(&e, 0, data.len()),
    }

    // The bytes as a datagram.
    let p = match ogp_draft::decode(data) {
        Ok(p) => p,
        Err(e) => {
            check_error(&e, 0, data.len());
            return;
        }
    };
    let (h, body_at) = ogp_draft::decode_header(data).expect("decode() read the header");
    assert_eq!(h, p.header);
    let mut enc = Vec::new();
    h.encode(&mut enc);
    assert_eq!(enc.len(), h.encoded_len());
    assert!(enc.len() <= body_at, "re-encoded header is longer");
    let (h2, _) = Header::decode(&enc).expect("re-encoded header decodes");
    assert_eq!(h2, h, "header round trip");
    let body = &data[body_at..];

    match &p.message {
        Message::Query(dq) => {
            assert!(dq.trailing <= body.len());
            let mut b = Vec::new();
            dq.query.encode(&mut b);
            assert!(
                b.len() <= body.len() - dq.trailing,
                "re-encoded query is longer"
            );
            let d2 = DefaultQuery::decode(&b).expect("re-encoded query decodes");
            assert_eq!(
                d2,
                DecodedQuery {
                    query: dq.query,
                    trailing: 0
                }
            );
            let mut dg = Vec::new();
            ogp_draft::encode_query(&h, Some(&dq.query), &mut dg);
            let p2 = ogp_draft::decode(&dg).expect("re-encoded query datagram decodes");
            assert_eq!(p2.header, h);
            assert_eq!(
                p2.message,
                Message::Query(DecodedQuery {
                    query: dq.query,
                    trailing: 0
                })
            );
        }
        Message::Answer(a) => {
            assert!(h.is_answer());
            check_answer(a, body_at, body.len(), body.len() - a.trailing.len());
        }
        Message::Fragment { body: part } => {
            let s = h.split.expect("a fragment has split fields");
            assert!(s.count >= 2 && s.count <= 127 && s.number < s.count);
            assert_eq!(part.as_slice(), body);
            let mut r = Reassembler::<Header>::default();
            assert_eq!(
                r.push_part(h, h.request_id, s, part),
                Ok(Pushed::Incomplete)
            );
        }
        Message::Probe => assert!(body.is_empty() && !h.is_answer()),
        _ => {}
    }
}
