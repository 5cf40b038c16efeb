//! The one JSON writer (`ogp_proto::result::to_json`, `to_json_pretty`): every string
//! and key escapes the characters that act on a terminal (C0, DEL, C1, the bidirectional
//! controls, U+2028/U+2029) as `\uXXXX`, and the output reads back through serde_json to
//! the same value, whatever the string.

use std::collections::BTreeMap;

use ogp_proto::result::{is_terminal_control, to_json, to_json_pretty};
use proptest::prelude::*;

/// The characters the writer must escape, and a few neighbours it must not.
const HOSTILE: &[char] = &[
    '\0',
    '\u{7}',
    '\u{1b}',
    '\n',
    '\u{7f}',
    '\u{80}',
    '\u{9b}',
    '\u{9f}',
    '\u{a0}',
    '\u{61c}',
    '\u{200d}',
    '\u{200e}',
    '\u{200f}',
    '\u{2028}',
    '\u{2029}',
    '\u{202a}',
    '\u{202c}',
    '\u{202e}',
    '\u{202f}',
    '\u{2066}',
    '\u{2069}',
    '\u{206a}',
    '"',
    '\\',
    '/',
    'é',
    '§',
    '\u{fffd}',
    '\u{1f600}',
];

fn hostile_string() -> impl Strategy<Value = String> {
    prop::collection::vec(
        prop_oneof![
            3 => prop::sample::select(HOSTILE),
            1 => any::<char>(),
        ],
        0..40,
    )
    .prop_map(|v| v.into_iter().collect())
}

fn raw_controls(json: &str) -> Vec<char> {
    json.chars()
        .filter(|c| is_terminal_control(*c) && *c != '\n' && *c != ' ')
        .collect()
}

proptest! {
    #[test]
    fn any_string_round_trips_and_nothing_raw_is_left(
        s in prop_oneof![hostile_string(), any::<String>()],
        k in hostile_string(),
    ) {
        for json in [to_json(&s).unwrap(), to_json_pretty(&s).unwrap()] {
            prop_assert_eq!(raw_controls(&json), Vec::<char>::new());
            prop_assert_eq!(serde_json::from_str::<String>(&json).unwrap(), s.clone());
        }
        // Keys too, and nested values.
        let v: BTreeMap<String, Vec<String>> = [(k.clone(), vec![s.clone(), k.clone()])].into();
        for json in [to_json(&v).unwrap(), to_json_pretty(&v).unwrap()] {
            // Pretty output's own line breaks are the only raw newlines.
            prop_assert_eq!(raw_controls(&json), Vec::<char>::new());
            let back: BTreeMap<String, Vec<String>> = serde_json::from_str(&json).unwrap();
            prop_assert_eq!(back, v.clone());
        }
    }
}

#[test]
fn each_terminal_control_is_escaped_as_u_xxxx() {
    let s: String = [
        '\u{7f}', '\u{9b}', '\u{202e}', '\u{202c}', '\u{2066}', '\u{2028}', '\u{61c}',
    ]
    .into_iter()
    .collect();
    assert_eq!(
        to_json(&s).unwrap(),
        r#""\u007f\u009b\u202e\u202c\u2066\u2028\u061c""#
    );
    // Serde's own escapes and plain text are as before.
    assert_eq!(to_json("a\"\\\u{1b}é").unwrap(), r#""a\"\\\u001bé""#);
    // The layout of pretty output is serde_json's.
    let v = serde_json::json!({"a": [1, {"b": "\u{9b}"}], "c": {}});
    assert_eq!(
        to_json_pretty(&v).unwrap(),
        serde_json::to_string_pretty(&v)
            .unwrap()
            .replace('\u{9b}', "\\u009b")
    );
    assert_eq!(
        to_json(&v).unwrap(),
        serde_json::to_string(&v)
            .unwrap()
            .replace('\u{9b}', "\\u009b")
    );
}
