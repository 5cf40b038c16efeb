//! Whole OGP datagrams: `ogp_proto::ogp::decode` on arbitrary bytes.
//!
//! Asserts: no panic; errors point into the datagram; a decoded header re-encodes (exact
//! HeadSize) and decodes to the same header; a decoded Default Query re-encodes and
//! decodes to the same field masks with no trailing bytes; a decoded complete answer
//! re-encodes (for a query with the answer's own RequestFlags, colours on) to a datagram
//! that decodes to the same RequestFlags and the same status (counts made explicit).

use ogp_fuzz::{check_error, check_warnings, with_explicit_counts};
use ogp_proto::ogp::answer::AnswerOptions;
use ogp_proto::ogp::query::request;
use ogp_proto::ogp::{self, DecodedQuery, DefaultQuery, Header, Message};

/// One input of the `ogp_datagram` target.
pub fn run(data: &[u8]) {
    let packet = match ogp::decode(data) {
        Ok(p) => p,
        Err(e) => {
            check_error(&e, 0, data.len());
            return;
        }
    };
    assert!(ogp::is_ogp(data));
    assert!(8 + usize::from(packet.head_size) <= data.len());

    // The header round-trips through its encoder, with the exact HeadSize.
    let mut enc = Vec::new();
    packet.header.encode(&mut enc);
    let (h2, body_at) = Header::decode(&enc).expect("re-encoded header must decode");
    assert_eq!(h2.header, packet.header, "header round trip");
    assert_eq!(h2.skipped, 0);
    assert_eq!(8 + usize::from(h2.head_size), enc.len());
    assert_eq!(body_at, enc.len());

    match &packet.message {
        Message::Query(dq) => {
            assert!(dq.trailing <= data.len());
            let mut body = Vec::new();
            dq.query.encode(&mut body);
            let d2 = DefaultQuery::decode(&body).expect("re-encoded query body must decode");
            assert_eq!(d2.query, dq.query, "query masks round trip");
            assert_eq!(d2.trailing, 0);

            let mut dg = Vec::new();
            ogp::encode_query(&packet.header, Some(&dq.query), &mut dg);
            let p2 = ogp::decode(&dg).expect("re-encoded query datagram must decode");
            assert_eq!(p2.header, packet.header);
            assert_eq!(
                p2.message,
                Message::Query(DecodedQuery {
                    query: dq.query,
                    trailing: 0
                })
            );
        }
        Message::Answer(a) => {
            check_warnings(&a.warnings, 0, data.len());
            // A query asking for exactly what the answer holds, with every field.
            let query = DefaultQuery {
                request: a.request_flags.and(request::KNOWN),
                ..DefaultQuery::everything()
            };
            let opts = AnswerOptions {
                utf8: packet.header.utf8(),
                colors: true,
            };
            let mut dg = Vec::new();
            ogp::encode_answer(&packet.header, &a.status, &query, &opts, &mut dg);
            let p2 = match ogp::decode(&dg) {
                Ok(p) => p,
                Err(e) => panic!("re-encoded answer does not decode: {e}"),
            };
            let Message::Answer(a2) = p2.message else {
                panic!("re-encoded answer decodes as {:?}", p2.message)
            };
            assert_eq!(a2.request_flags, query.request, "answer RequestFlags");
            assert_eq!(
                with_explicit_counts(&a2.status),
                with_explicit_counts(&a.status),
                "answer status round trip"
            );
        }
        Message::Error(e) => {
            if let Some(copy) = e.resend_copy() {
                if let Err(err) = ogp::decode(copy) {
                    check_error(&err, 0, copy.len());
                }
            }
        }
        _ => {}
    }
}
