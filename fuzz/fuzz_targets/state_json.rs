//! State files: `Status::from_json` and `Status::from_toml` on arbitrary UTF-8.
//!
//! Asserts: no panic; a status that loads (from JSON or TOML) serializes to JSON (compact
//! and `to_json_pretty`) that loads back to an equal status; and it encodes, as a
//! responder would, to an OGP answer body for `DefaultQuery::everything()` plus
//! bColoredNames (UTF-8 and Latin-1, colours on) that decodes.

use ogp_proto::ogp::answer::AnswerOptions;
use ogp_proto::ogp::query::request;
use ogp_proto::ogp::{decode_answer_body, encode_answer_body, DefaultQuery};
use ogp_proto::Status;

fn check(s: &Status) {
    let compact = serde_json::to_string(s).expect("a status always serializes");
    match Status::from_json(&compact) {
        Ok(back) => assert_eq!(&back, s, "JSON round trip of {compact}"),
        Err(e) => panic!("serialized status does not load: {e}: {compact}"),
    }
    let pretty = s.to_json_pretty();
    match Status::from_json(&pretty) {
        Ok(back) => assert_eq!(&back, s, "pretty JSON round trip"),
        Err(e) => panic!("pretty status does not load: {e}: {pretty}"),
    }

    let query = DefaultQuery {
        request: DefaultQuery::everything()
            .request
            .with(request::COLORED_NAMES),
        ..DefaultQuery::everything()
    };
    for utf8 in [true, false] {
        let mut body = Vec::new();
        encode_answer_body(s, &query, &AnswerOptions { utf8, colors: true }, &mut body);
        if let Err(e) = decode_answer_body(&body, utf8) {
            panic!("answer encoded from a loaded status does not decode (utf8 {utf8}): {e}");
        }
    }
}

/// One input of the `state_json` target.
pub fn run(data: &[u8]) {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    if let Ok(s) = Status::from_json(text) {
        check(&s);
    }
    if let Ok(s) = Status::from_toml(text) {
        check(&s);
    }
}
