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

use std::io;
use std::net::SocketAddr;

use serde::Serialize;
use serde_json::ser::{CompactFormatter, Formatter, PrettyFormatter};

pub use crate::text::is_terminal_control;

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

/// A serde_json [`Formatter`] that writes what `F` writes, with every character of
/// [`is_terminal_control`] in strings (and keys) escaped as `\uXXXX`.
struct TerminalSafe<F>(F);

/// Writes `fragment`, escaping the characters serde_json leaves raw that act on a
/// terminal.
fn write_safe<W: ?Sized + io::Write>(w: &mut W, fragment: &str) -> io::Result<()> {
    let mut rest = fragment;
    while let Some((at, c)) = rest.char_indices().find(|(_, c)| is_terminal_control(*c)) {
        let (clean, tail) = rest.split_at(at);
        w.write_all(clean.as_bytes())?;
        // Every such character is in the Basic Multilingual Plane: one \uXXXX.
        write!(w, "\\u{:04x}", u32::from(c))?;
        rest = tail.get(c.len_utf8()..).unwrap_or_default();
    }
    w.write_all(rest.as_bytes())
}

impl<F: Formatter> Formatter for TerminalSafe<F> {
    fn write_string_fragment<W: ?Sized + io::Write>(
        &mut self,
        w: &mut W,
        fragment: &str,
    ) -> io::Result<()> {
        write_safe(w, fragment)
    }

    // The layout is `F`'s (PrettyFormatter's indentation lives in these).
    fn begin_array<W: ?Sized + io::Write>(&mut self, w: &mut W) -> io::Result<()> {
        self.0.begin_array(w)
    }
    fn end_array<W: ?Sized + io::Write>(&mut self, w: &mut W) -> io::Result<()> {
        self.0.end_array(w)
    }
    fn begin_array_value<W: ?Sized + io::Write>(
        &mut self,
        w: &mut W,
        first: bool,
    ) -> io::Result<()> {
        self.0.begin_array_value(w, first)
    }
    fn end_array_value<W: ?Sized + io::Write>(&mut self, w: &mut W) -> io::Result<()> {
        self.0.end_array_value(w)
    }
    fn begin_object<W: ?Sized + io::Write>(&mut self, w: &mut W) -> io::Result<()> {
        self.0.begin_object(w)
    }
    fn end_object<W: ?Sized + io::Write>(&mut self, w: &mut W) -> io::Result<()> {
        self.0.end_object(w)
    }
    fn begin_object_key<W: ?Sized + io::Write>(
        &mut self,
        w: &mut W,
        first: bool,
    ) -> io::Result<()> {
        self.0.begin_object_key(w, first)
    }
    fn end_object_key<W: ?Sized + io::Write>(&mut self, w: &mut W) -> io::Result<()> {
        self.0.end_object_key(w)
    }
    fn begin_object_value<W: ?Sized + io::Write>(&mut self, w: &mut W) -> io::Result<()> {
        self.0.begin_object_value(w)
    }
    fn end_object_value<W: ?Sized + io::Write>(&mut self, w: &mut W) -> io::Result<()> {
        self.0.end_object_value(w)
    }
}

fn write_with<T: Serialize + ?Sized>(v: &T, f: impl Formatter) -> serde_json::Result<String> {
    let mut out = Vec::with_capacity(128);
    v.serialize(&mut serde_json::Serializer::with_formatter(
        &mut out,
        TerminalSafe(f),
    ))?;
    // serde_json writes UTF-8, and the escapes are ASCII.
    String::from_utf8(out).map_err(serde::ser::Error::custom)
}

/// `v` as compact JSON (serde_json's `to_string`), with the characters of
/// [`is_terminal_control`] escaped: the one JSON writer of every output.
pub fn to_json<T: Serialize + ?Sized>(v: &T) -> serde_json::Result<String> {
    write_with(v, CompactFormatter)
}

/// `v` as pretty JSON (serde_json's `to_string_pretty`), escaped as [`to_json`].
pub fn to_json_pretty<T: Serialize + ?Sized>(v: &T) -> serde_json::Result<String> {
    write_with(v, PrettyFormatter::new())
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
