//! The datagrams of a capture file (`tests/data/<protocol>/<name>.json` of `ogp-proto`).

use ogp_proto::internals::from_hex;

/// The datagrams a capture holds under `responses.<kind>` (`"gs3"`, `"info"`, `"rules"`
/// …), from the capture's JSON text. Panics on a malformed capture: captures are fixed
/// test vectors.
pub fn capture_datagrams(json: &str, kind: &str) -> Vec<Vec<u8>> {
    let v: serde_json::Value = serde_json::from_str(json).expect("capture JSON");
    v["responses"][kind]
        .as_array()
        .unwrap_or_else(|| panic!("no responses.{kind} in the capture"))
        .iter()
        .map(|h| from_hex(h.as_str().expect("hex string")).expect("hex"))
        .collect()
}
