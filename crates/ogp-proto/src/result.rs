//! The one JSON shape of a query result, success and failure alike: what `ogp query
//! --json` prints (pretty), each line of `ogp scan --json`, and the C API's
//! `ogp_query`. Its fields and their meaning are documented in the repository's
//! `docs/json.md`; [`SCHEMA`] is its version, raised when a field changes meaning or goes
//! away (new fields do not raise it).
//!
//! Every JSON this crate's front-ends print goes through one writer, [`to_json`] and
//! [`to_json_pretty`]: serde_json's, with every character of
//! [`is_terminal_control`] escaped as `\uXXXX` (serde_json escapes C0 itself, but
//! writes DEL, C1, the bidirectional controls and U+2028/U+2029 raw). The output is still
//! JSON that any reader reads back to the same strings, and a hostile server's name
//! cannot steer the terminal that shows it.

use std::net::SocketAddr;

use serde::Serialize;

pub use crate::json::{to_json, to_json_pretty};
pub use crate::text::{is_terminal_control, sanitize};

use crate::client::{Answer, QueryError};
use crate::protocol::Protocol;
use crate::Status;

/// The version of the result schema.
pub const SCHEMA: u32 = 1;

/// One result, borrowed from the answer or error it describes.
#[derive(Serialize)]
struct ResultJson<'a> {
    schema: u32,
    target: &'a str,
    #[serde(skip_serializing_if = "Option::is_none")]
    line: Option<u64>,
    protocol: &'static str,
    ok: bool,
    #[serde(skip_serializing_if = "Option::is_none")]
    addr: Option<SocketAddr>,
    #[serde(skip_serializing_if = "Option::is_none")]
    ping_ms: Option<f64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    datagrams: Option<usize>,
    #[serde(skip_serializing_if = "Option::is_none")]
    bytes: Option<usize>,
    #[serde(skip_serializing_if = "Option::is_none")]
    warnings: Option<&'a [String]>,
    /// The catalogue's game the answer names (`games` feature), its display name and
    /// the rule that matched.
    #[serde(skip_serializing_if = "Option::is_none")]
    game_id: Option<&'static str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    game_name: Option<&'static str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    game_rule: Option<&'static str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    status: Option<&'a Status>,
    #[serde(skip_serializing_if = "Option::is_none")]
    error: Option<&'static str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    fault: Option<&'static str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    message: Option<String>,
}

/// What a result is about: the target as given, its list line (scan), the protocol
/// asked for (`None`: auto-detection) and the address it resolved to.
#[derive(Debug, Clone, Copy)]
pub struct About<'a> {
    /// The target as given.
    pub target: &'a str,
    /// The line of the scan list.
    pub line: Option<u64>,
    /// The protocol asked for; `None` for auto-detection.
    pub requested: Option<Protocol>,
    /// The address the target resolved to.
    pub addr: Option<SocketAddr>,
}

fn value<'a>(about: &About<'a>, outcome: Result<&'a Answer, &QueryError>) -> ResultJson<'a> {
    let base = ResultJson {
        schema: SCHEMA,
        target: about.target,
        line: about.line,
        protocol: about.requested.map_or("auto", Protocol::name),
        ok: false,
        addr: about.addr,
        ping_ms: None,
        datagrams: None,
        bytes: None,
        warnings: None,
        game_id: None,
        game_name: None,
        game_rule: None,
        status: None,
        error: None,
        fault: None,
        message: None,
    };
    match outcome {
        Ok(a) => {
            let ping = (a.ping_ms * 1000.0).round() / 1000.0;
            let (game_id, game_name, game_rule) = game_of(a);
            ResultJson {
                protocol: a.protocol.name(),
                ok: true,
                addr: a.addr.or(about.addr),
                ping_ms: Some(if ping.is_finite() { ping } else { 0.0 }),
                datagrams: Some(a.datagrams),
                bytes: Some(a.bytes),
                warnings: Some(&a.warnings),
                game_id,
                game_name,
                game_rule,
                status: Some(&a.status),
                ..base
            }
        }
        Err(e) => ResultJson {
            error: Some(e.kind()),
            fault: Some(e.fault().name()),
            message: Some(e.to_string()),
            ..base
        },
    }
}

/// The catalogue's id, name and matching rule of the game the answer names.
#[cfg(feature = "games")]
fn game_of(
    a: &Answer,
) -> (
    Option<&'static str>,
    Option<&'static str>,
    Option<&'static str>,
) {
    match crate::games::catalogue().identify(a.protocol, &a.status) {
        Some(i) => (
            Some(i.game.id.as_str()),
            Some(i.game.name.as_str()),
            Some(i.rule.name()),
        ),
        None => (None, None, None),
    }
}

#[cfg(not(feature = "games"))]
fn game_of(
    _: &Answer,
) -> (
    Option<&'static str>,
    Option<&'static str>,
    Option<&'static str>,
) {
    (None, None, None)
}

/// The result as compact JSON, without a newline.
pub fn compact(about: &About<'_>, outcome: Result<&Answer, &QueryError>) -> String {
    to_json(&value(about, outcome)).unwrap_or_else(|_| "{}".into())
}

/// The result on one line, with its newline (NDJSON).
pub fn line(about: &About<'_>, outcome: Result<&Answer, &QueryError>) -> String {
    let mut s = compact(about, outcome);
    s.push('\n');
    s
}

/// The result pretty-printed, with a final newline.
pub fn pretty(about: &About<'_>, outcome: Result<&Answer, &QueryError>) -> String {
    let mut s = to_json_pretty(&value(about, outcome)).unwrap_or_else(|_| "{}".into());
    s.push('\n');
    s
}
