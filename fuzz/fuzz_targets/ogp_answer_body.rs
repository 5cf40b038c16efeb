//! Default Query v1 answer bodies: `decode_answer_body` on arbitrary bytes, in UTF-8 and
//! in Latin-1 mode.
//!
//! Asserts: no panic; errors and warnings point into the body; a decoded status encodes
//! for `DefaultQuery::everything()` (UTF-8 and Latin-1) to a body that decodes again; and
//! for a query with the answer's own RequestFlags (colours on, same string encoding) to a
//! body that decodes to the same RequestFlags and the same status (counts made explicit).

use ogp_fuzz::{check_error, check_warnings, with_explicit_counts};
use ogp_proto::ogp::answer::AnswerOptions;
use ogp_proto::ogp::query::request;
use ogp_proto::ogp::{decode_answer_body, encode_answer_body, DefaultQuery};

/// One input of the `ogp_answer_body` target.
pub fn run(data: &[u8]) {
    for utf8 in [true, false] {
        let a = match decode_answer_body(data, utf8) {
            Ok(a) => a,
            Err(e) => {
                check_error(&e, 0, data.len());
                continue;
            }
        };
        check_warnings(&a.warnings, 0, data.len());

        // Everything, in both string encodings: must decode again.
        for out_utf8 in [true, false] {
            let opts = AnswerOptions {
                utf8: out_utf8,
                colors: false,
            };
            let mut body = Vec::new();
            encode_answer_body(&a.status, &DefaultQuery::everything(), &opts, &mut body);
            if let Err(e) = decode_answer_body(&body, out_utf8) {
                panic!("status re-encoded for everything() (utf8 {out_utf8}) does not decode: {e}");
            }
        }

        // Exactly what the answer holds: must decode to the same status.
        let query = DefaultQuery {
            request: a.request_flags.and(request::KNOWN),
            ..DefaultQuery::everything()
        };
        let opts = AnswerOptions { utf8, colors: true };
        let mut body = Vec::new();
        encode_answer_body(&a.status, &query, &opts, &mut body);
        let a2 = match decode_answer_body(&body, utf8) {
            Ok(a2) => a2,
            Err(e) => panic!("status re-encoded for its own flags does not decode: {e}"),
        };
        assert_eq!(a2.request_flags, query.request, "answer RequestFlags");
        assert_eq!(
            with_explicit_counts(&a2.status),
            with_explicit_counts(&a.status),
            "answer status round trip"
        );
    }
}
