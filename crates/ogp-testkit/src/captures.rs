//! The datagrams of a capture file (`tests/data/<protocol>/<name>.json` of `ogp-proto`).

use ogp_proto::internals::from_hex;
use serde_json::Value;

/// The datagrams a capture holds under `responses.<kind>` (`"gs3"`, `"info"`, `"rules"`
/// …), from the capture's JSON text. Panics on a malformed capture, or one without that
/// kind: captures are fixed test vectors.
pub fn capture_datagrams(json: &str, kind: &str) -> Vec<Vec<u8>> {
    let v: Value = serde_json::from_str(json).expect("capture JSON");
    assert!(
        v["responses"][kind].is_array(),
        "no responses.{kind} in the capture"
    );
    datagrams_of(&v, kind)
}

/// The datagrams of a parsed capture under `responses.<kind>`; none when it has no such
/// replies (a server that sent no rules). Panics on a datagram that is not hex.
pub fn datagrams_of(capture: &Value, kind: &str) -> Vec<Vec<u8>> {
    let Some(list) = capture["responses"][kind].as_array() else {
        return Vec::new();
    };
    list.iter()
        .map(|h| from_hex(h.as_str().expect("hex string")).expect("hex"))
        .collect()
}
