//! The HTTP-JSON shape of the client core: what a protocol that reads its server's
//! JSON documents over HTTP/1.1 (FiveM's `/info.json`, REST APIs of game servers)
//! shares with every other, so that such a protocol is a small folder saying which
//! documents to get and how to map them.
//!
//! [`HttpMachine`] is a stream machine on the [`Stream`] engine. Once connected it
//! writes a `GET` of the protocol's first [`Document`] ([`http::write_get`]: `Host` the
//! server's name or address, `Connection: keep-alive`, the last one `close`), reads the
//! response through [`ResponseReader`] with the document's [`HttpLimits`] (head, body;
//! chunked, `Content-Length` or until close), hands a `2xx` body to the protocol
//! ([`HttpJson::read`]), then writes the next `GET` on the same connection. Requests
//! are not pipelined: one is in flight at a time.
//!
//! What is refused, as one clear error each (a required document) or a warning and the
//! document left out (an optional one):
//!
//! * a redirect (`3xx`): not followed, the `Location` named (sanitised, cut);
//! * `4xx`: the server refused our request (wrong path: not this protocol's server, or
//!   credentials it wants); `5xx`: the server failed. Both
//!   [`QueryError::Rejected`] with the status code;
//! * a response that does not frame ([`DecodeError`] from the reader, with its stream
//!   offset), a body over its cap, JSON that does not parse or nests deeper than
//!   serde_json's limit of 128 ([`parse_json`]);
//! * a connection the server closes before the documents still wanted (no
//!   keep-alive): the query does not reconnect.
//!
//! Timers are the stream engine's: connect, read (silence while a response is awaited)
//! and total, which holds however slowly a server drips its bytes. When the timers run
//! out after every required document came, the answer is what came, with a warning.

use std::fmt;
use std::time::Instant;

use serde::de::{Deserializer, IgnoredAny, MapAccess, SeqAccess, Visitor};
use serde::Deserialize;

use crate::client_core::{Event, QueryError, Rejection, StreamEvent, Timing};
use crate::client_stream::Stream;
use crate::error::{DecodeError, DecodeErrorKind};
use crate::http::{write_get, Get, HttpLimits, Response, ResponseReader, Secret};
use crate::protocol::Protocol;
use crate::Status;

/// Received bytes the engine holds before the response reader takes them (it takes
/// every read whole).
const MAX_INPUT: usize = 64 * 1024;

/// One document a protocol gets.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Document {
    /// The path (and query), starting with `/`.
    pub(crate) path: &'static str,
    /// Whether the query fails without it (else: a warning, and it is left out).
    pub(crate) required: bool,
    /// What its response may make us hold.
    pub(crate) limits: HttpLimits,
}

/// What a protocol speaking HTTP JSON tells the machine (see the module's
/// documentation).
pub(crate) trait HttpJson {
    /// What an answer says beyond the status.
    type Details;
    /// The documents, in the order they are asked.
    fn documents(&self) -> &'static [Document];
    /// The body of document `i`, answered `2xx`: parsed and kept. An error's offset
    /// counts from the body's first byte.
    fn read(&mut self, i: usize, body: &[u8]) -> Result<(), DecodeError>;
    /// The answer from what was read; `missing` are the documents not read (optional
    /// ones only). Warnings go to `warnings`.
    fn finish(
        &mut self,
        missing: &[&'static str],
        warnings: &mut Vec<String>,
    ) -> (Status, Self::Details);
    /// The request target of document `i` when it is not its `path` (a token the user
    /// gave in the query string). The events and errors still name the `path`.
    fn target(&self, _i: usize) -> Option<String> {
        None
    }
    /// Extra headers of every request (`Accept`, credentials: never in events or
    /// errors).
    fn headers(&self) -> Vec<(&'static str, String)> {
        Vec::new()
    }
    /// Whether the connection is HTTPS, and how (see
    /// [`QueryDriver::tls`](crate::client_core::QueryDriver::tls)).
    fn tls(&self) -> Option<crate::client_core::TlsRequest> {
        None
    }
}

/// Parses a JSON body into `T` (typed, so that what is not kept is skipped without
/// being held). An error names the byte where serde_json stopped, counted from the
/// body's start, and says whether the JSON ended early, nests too deep (serde_json's
/// recursion limit, 128) or is not JSON at all.
pub(crate) fn parse_json<'de, T: Deserialize<'de>>(
    body: &'de [u8],
    field: &'static str,
) -> Result<T, DecodeError> {
    serde_json::from_slice(body).map_err(|e| {
        // line and column (1-based, the column in bytes) to a byte offset
        let line_start = body
            .split_inclusive(|b| *b == b'\n')
            .take(e.line().saturating_sub(1))
            .map(<[u8]>::len)
            .sum::<usize>();
        let at = line_start
            .saturating_add(e.column().saturating_sub(1))
            .min(body.len());
        let why = if e.is_eof() {
            "the JSON ends early"
        } else if e.to_string().contains("recursion limit") {
            "the JSON nests too deep"
        } else if e.is_data() {
            "the JSON is not shaped as expected"
        } else {
            "not valid JSON"
        };
        DecodeError::new(at, field, DecodeErrorKind::Invalid(why))
    })
}

// Typed JSON helpers shared by the HTTP-JSON protocols: lenient scalars, capped lists
// and lengths of what is not kept.

/// A value that should be text: a string, or a number or boolean written as JSON
/// writes it; `null`, arrays and objects are skipped (`None`).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Scalar(pub Option<String>);

impl Scalar {
    /// The text, if any.
    pub fn as_str(&self) -> Option<&str> {
        self.0.as_deref()
    }

    /// The text read as a number (spaces around it ignored).
    pub fn number<T: std::str::FromStr>(&self) -> Option<T> {
        self.as_str().and_then(|s| s.trim().parse().ok())
    }

    /// The text read as a number of any form (`33.52`), rounded to a whole `u32`
    /// (`None` when negative, too large or not a number).
    pub fn rounded(&self) -> Option<u32> {
        self.number::<f64>().and_then(Self::round)
    }

    /// `x` rounded to a whole `u32`, if it is one.
    pub fn round(x: f64) -> Option<u32> {
        (x.is_finite() && x >= 0.0 && x < f64::from(u32::MAX))
            .then(|| format!("{x:.0}").parse().ok())
            .flatten()
    }
}

impl<'de> Deserialize<'de> for Scalar {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = Scalar;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("a string, number or boolean")
            }
            fn visit_str<E>(self, v: &str) -> Result<Scalar, E> {
                Ok(Scalar(Some(v.to_owned())))
            }
            fn visit_bool<E>(self, v: bool) -> Result<Scalar, E> {
                Ok(Scalar(Some(v.to_string())))
            }
            fn visit_i64<E>(self, v: i64) -> Result<Scalar, E> {
                Ok(Scalar(Some(v.to_string())))
            }
            fn visit_u64<E>(self, v: u64) -> Result<Scalar, E> {
                Ok(Scalar(Some(v.to_string())))
            }
            fn visit_f64<E>(self, v: f64) -> Result<Scalar, E> {
                Ok(Scalar(Some(v.to_string())))
            }
            fn visit_unit<E>(self) -> Result<Scalar, E> {
                Ok(Scalar(None))
            }
            fn visit_none<E>(self) -> Result<Scalar, E> {
                Ok(Scalar(None))
            }
            fn visit_some<D: Deserializer<'de>>(self, d: D) -> Result<Scalar, D::Error> {
                d.deserialize_any(self)
            }
            fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Scalar, A::Error> {
                while seq.next_element::<IgnoredAny>()?.is_some() {}
                Ok(Scalar(None))
            }
            fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Scalar, A::Error> {
                while map.next_entry::<IgnoredAny, IgnoredAny>()?.is_some() {}
                Ok(Scalar(None))
            }
        }
        d.deserialize_any(V)
    }
}

/// A list of at most `MAX` elements, and how many the document had.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Capped<T, const MAX: usize> {
    /// The first `MAX` elements.
    pub kept: Vec<T>,
    /// How many there were.
    pub total: usize,
}

impl<T, const MAX: usize> Capped<T, MAX> {
    /// The warning when the list was cut: `DOC: TOTAL WHAT, the first MAX kept`.
    pub fn cut_warning(&self, doc: &str, what: &str) -> Option<String> {
        (self.total > self.kept.len())
            .then(|| format!("{doc}: {} {what}, the first {MAX} kept", self.total))
    }
}

impl<T, const MAX: usize> Default for Capped<T, MAX> {
    fn default() -> Self {
        Self {
            kept: Vec::new(),
            total: 0,
        }
    }
}

impl<'de, T: Deserialize<'de>, const MAX: usize> Deserialize<'de> for Capped<T, MAX> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V<T, const MAX: usize>(std::marker::PhantomData<T>);
        impl<'de, T: Deserialize<'de>, const MAX: usize> Visitor<'de> for V<T, MAX> {
            type Value = Capped<T, MAX>;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("a list")
            }
            fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Self::Value, A::Error> {
                let mut out = Capped::default();
                while out.kept.len() < MAX {
                    match seq.next_element::<T>()? {
                        Some(v) => out.kept.push(v),
                        None => {
                            out.total = out.kept.len();
                            return Ok(out);
                        }
                    }
                }
                out.total = out.kept.len();
                while seq.next_element::<IgnoredAny>()?.is_some() {
                    out.total = out.total.saturating_add(1);
                }
                Ok(out)
            }
        }
        d.deserialize_seq(V(std::marker::PhantomData))
    }
}

/// A list, or the same list written as one string (older servers: names joined by
/// `, `): either is kept as what it is.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ListOrText<T, const MAX: usize> {
    /// A JSON array, capped.
    List(Capped<T, MAX>),
    /// A string.
    Text(String),
}

impl<T, const MAX: usize> ListOrText<T, MAX> {
    /// The names of a string list: split at `sep`, trimmed, empty ones dropped, at most
    /// `MAX` kept, and how many there were.
    pub fn split_text(text: &str, sep: &str) -> Capped<String, MAX> {
        let mut out = Capped::default();
        for name in text.split(sep).map(str::trim).filter(|n| !n.is_empty()) {
            if out.kept.len() < MAX {
                out.kept.push(name.to_owned());
            }
            out.total = out.total.saturating_add(1);
        }
        out
    }
}

impl<'de, T: Deserialize<'de>, const MAX: usize> Deserialize<'de> for ListOrText<T, MAX> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V<T, const MAX: usize>(std::marker::PhantomData<T>);
        impl<'de, T: Deserialize<'de>, const MAX: usize> Visitor<'de> for V<T, MAX> {
            type Value = ListOrText<T, MAX>;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("a list or a string")
            }
            fn visit_str<E>(self, v: &str) -> Result<Self::Value, E> {
                Ok(ListOrText::Text(v.to_owned()))
            }
            fn visit_seq<A: SeqAccess<'de>>(self, seq: A) -> Result<Self::Value, A::Error> {
                Capped::deserialize(serde::de::value::SeqAccessDeserializer::new(seq))
                    .map(ListOrText::List)
            }
        }
        d.deserialize_any(V(std::marker::PhantomData))
    }
}

/// An object's keys and text values, in order: at most `MAX` kept (values that are
/// not text, number or boolean skipped), and how many there were.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Pairs<const MAX: usize>(pub Capped<(String, String), MAX>);

impl<'de, const MAX: usize> Deserialize<'de> for Pairs<MAX> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V<const MAX: usize>;
        impl<'de, const MAX: usize> Visitor<'de> for V<MAX> {
            type Value = Pairs<MAX>;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("an object")
            }
            fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Self::Value, A::Error> {
                let mut out = Capped::default();
                while let Some(k) = map.next_key::<std::borrow::Cow<'de, str>>()? {
                    if out.kept.len() < MAX {
                        if let Some(v) = map.next_value::<Scalar>()?.0 {
                            out.kept.push((k.into_owned(), v));
                        }
                    } else {
                        map.next_value::<IgnoredAny>()?;
                    }
                    out.total = out.total.saturating_add(1);
                }
                Ok(Pairs(out))
            }
        }
        d.deserialize_map(V::<MAX>)
    }
}

/// The length of a string that is not kept (the base64 icon).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Length(pub usize);

impl<'de> Deserialize<'de> for Length {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = Length;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("a string")
            }
            fn visit_str<E>(self, v: &str) -> Result<Length, E> {
                Ok(Length(v.len()))
            }
            fn visit_unit<E>(self) -> Result<Length, E> {
                Ok(Length(0))
            }
            fn visit_bool<E>(self, _: bool) -> Result<Length, E> {
                Ok(Length(0))
            }
            fn visit_i64<E>(self, _: i64) -> Result<Length, E> {
                Ok(Length(0))
            }
            fn visit_u64<E>(self, _: u64) -> Result<Length, E> {
                Ok(Length(0))
            }
            fn visit_f64<E>(self, _: f64) -> Result<Length, E> {
                Ok(Length(0))
            }
        }
        d.deserialize_any(V)
    }
}

/// A JSON object read as `T`: serde's derived structs also take a list (their fields
/// in order), which no server means; this takes an object only.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Object<T>(pub T);

impl<'de, T: Deserialize<'de>> Deserialize<'de> for Object<T> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V<T>(std::marker::PhantomData<T>);
        impl<'de, T: Deserialize<'de>> Visitor<'de> for V<T> {
            type Value = Object<T>;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("an object")
            }
            fn visit_map<A: MapAccess<'de>>(self, map: A) -> Result<Object<T>, A::Error> {
                T::deserialize(serde::de::value::MapAccessDeserializer::new(map)).map(Object)
            }
        }
        d.deserialize_map(V(std::marker::PhantomData))
    }
}

/// At most `max` characters of `s`, each control replaced by `?` (a `Location` or a
/// reason phrase from the server, in an error).
fn clean(s: &str, max: usize) -> String {
    let mut out: String = s
        .chars()
        .take(max)
        .map(|c| if c.is_control() { '?' } else { c })
        .collect();
    if s.chars().nth(max).is_some() {
        out.push('…');
    }
    out
}

/// Why a non-`2xx` response is refused, for [`Rejection::Error`].
fn refusal(r: &Response, path: &str) -> String {
    let reason = clean(&r.reason, 40);
    let head = format!("HTTP {} {} for {path}", r.status, reason.trim());
    match r.status {
        300..=399 => format!(
            "{head}: a redirect{}, not followed",
            r.location
                .as_deref()
                .map(|l| format!(" to {}", clean(l, 80)))
                .unwrap_or_default()
        ),
        400..=499 => format!(
            "{head}: the server refused our request (it does not serve this document: not this protocol's server, or it wants credentials)"
        ),
        500..=599 => format!("{head}: the server failed (its own error)"),
        _ => format!("{head}: not a final success status"),
    }
}

/// The HTTP-JSON machine of a protocol `P` (see the module's documentation).
#[derive(Debug, Clone)]
pub(crate) struct HttpMachine<P: HttpJson> {
    pub(crate) p: P,
    pub(crate) s: Stream<P::Details>,
    host: Option<String>,
    /// The document in flight (or next): an index in `p.documents()`.
    next: usize,
    started: bool,
    reader: ResponseReader,
    /// Where the response in flight starts, in the stream.
    response_at: usize,
    missing: Vec<&'static str>,
}

impl<P: HttpJson> HttpMachine<P> {
    /// A query of `p`'s documents starting at `now`; `host` is the `Host` header
    /// (`None`: the connected address).
    pub(crate) fn new(
        protocol: Protocol,
        p: P,
        timing: &Timing,
        now: Instant,
        host: Option<String>,
    ) -> Self {
        let first = p
            .documents()
            .first()
            .map_or_else(HttpLimits::default, |d| d.limits);
        Self {
            p,
            s: Stream::new(protocol, timing, now, MAX_INPUT),
            host,
            next: 0,
            started: false,
            reader: ResponseReader::new(first),
            response_at: 0,
            missing: Vec::new(),
        }
    }

    fn doc(&self) -> Option<Document> {
        self.p.documents().get(self.next).copied()
    }

    /// Writes the `GET` of the current document.
    fn request(&mut self, now: Instant) {
        let Some(doc) = self.doc() else {
            return self.finish();
        };
        let last = self.next.saturating_add(1) >= self.p.documents().len();
        let host = self.host.clone().unwrap_or_default();
        let target = self.p.target(self.next);
        let owned = self.p.headers();
        let headers: Vec<(&str, &str)> = owned.iter().map(|(k, v)| (*k, v.as_str())).collect();
        let mut get = Get::new(&host, target.as_deref().unwrap_or(doc.path));
        get.keep_alive = !last;
        get.headers = &headers;
        let mut out = Vec::with_capacity(160);
        if let Err(e) = write_get(&get, &mut out) {
            return self.s.x.fail(QueryError::Options { message: e.0 });
        }
        self.reader = ResponseReader::new(doc.limits);
        self.response_at = self.s.end_offset();
        self.s.write(now, &out, doc.path, doc.path);
    }

    fn connected(&mut self, now: Instant, peer: std::net::SocketAddr) {
        if self.started {
            return;
        }
        self.started = true;
        self.s.connected(now);
        if self.host.is_none() {
            self.host = Some(peer.to_string());
        }
        self.request(now);
    }

    /// Feeds what the engine holds to the response reader.
    fn parse(&mut self, now: Instant) {
        while !self.s.is_done() {
            let mut input = self.s.input();
            let bytes = input.take_rest();
            if bytes.is_empty() {
                return;
            }
            let used = match self.reader.feed(bytes) {
                Ok(n) => n,
                Err(mut e) => {
                    e.offset = e.offset.saturating_add(self.response_at);
                    return self.bad(e);
                }
            };
            self.s.consume(used);
            let Some(response) = self.reader.take_response() else {
                return;
            };
            self.response(now, response);
            if used == 0 {
                // nothing consumed and a response whole: cannot be, but never spin
                return;
            }
        }
    }

    /// A whole response to the current document.
    fn response(&mut self, now: Instant, r: Response) {
        let Some(doc) = self.doc() else { return };
        self.s.answered();
        self.s.x.received(1, 0);
        self.s.x.event(Event::Reply {
            what: doc.path,
            bytes: self.reader.consumed(),
            datagrams: 1,
        });
        if self.next == 0 {
            self.s.x.ping(now);
        }
        if (200..300).contains(&r.status) {
            if let Err(mut e) = self.p.read(self.next, &r.body) {
                // the body's offset in the stream: the response's end minus its length
                let body_at = self
                    .response_at
                    .saturating_add(self.reader.consumed())
                    .saturating_sub(r.body.len());
                e.offset = e.offset.saturating_add(body_at);
                if doc.required {
                    return self.s.x.fail_malformed(e);
                }
                self.s.x.warn([format!("{}: {e}; left out", doc.path)]);
                self.missing.push(doc.path);
            }
        } else {
            let why = refusal(&r, doc.path);
            if doc.required {
                return self.s.x.reject(Rejection::Error {
                    code: u32::from(r.status),
                    meaning: why,
                });
            }
            self.s.x.warn([format!("{why}; left out")]);
            self.missing.push(doc.path);
        }
        self.next = self.next.saturating_add(1);
        if self.doc().is_none() {
            return self.finish();
        }
        if !r.keep_alive || self.s.is_closed() {
            return self.closed_early();
        }
        self.request(now);
    }

    /// The connection ends before the documents still wanted.
    fn closed_early(&mut self) {
        let rest: Vec<Document> = self
            .p
            .documents()
            .get(self.next..)
            .unwrap_or_default()
            .to_vec();
        if let Some(required) = rest.iter().find(|d| d.required) {
            let offset = self.s.end_offset();
            return self.s.x.fail_malformed(DecodeError::new(
                offset,
                required.path,
                DecodeErrorKind::Invalid(
                    "the server closed the connection before it (no keep-alive)",
                ),
            ));
        }
        for d in rest {
            self.s.x.warn([format!(
                "{}: the server closed the connection before it; left out",
                d.path
            )]);
            self.missing.push(d.path);
        }
        self.next = self.p.documents().len();
        self.finish();
    }

    /// A response that does not frame: the connection cannot carry another request,
    /// so the query fails with it (its cause) when a required document is still to
    /// come.
    fn bad(&mut self, e: DecodeError) {
        if self.doc().is_none() {
            return;
        }
        let Some(doc) = self.doc().filter(|_| self.required_read()) else {
            return self.s.x.fail_malformed(e);
        };
        // The connection cannot carry another request after a broken response.
        self.s.x.warn([format!("{}: {e}; left out", doc.path)]);
        self.missing.push(doc.path);
        self.next = self.next.saturating_add(1);
        self.closed_early();
    }

    /// Ends with what was read.
    fn finish(&mut self) {
        if self.s.is_done() {
            return;
        }
        let mut warnings = Vec::new();
        let (status, details) = self.p.finish(&self.missing, &mut warnings);
        self.s.x.warn(warnings);
        self.s.x.succeed(status, details);
    }

    /// Whether every required document still to come is read: then a timeout or a
    /// close leaves out the optional rest.
    fn required_read(&self) -> bool {
        self.p
            .documents()
            .get(self.next..)
            .unwrap_or_default()
            .iter()
            .all(|d| !d.required)
    }

    pub(crate) fn handle_timeout(&mut self, now: Instant) {
        let Some(which) = self.s.expired(now) else {
            return;
        };
        if self.started && self.next > 0 && self.required_read() {
            let left: Vec<&'static str> = self
                .p
                .documents()
                .get(self.next..)
                .unwrap_or_default()
                .iter()
                .map(|d| d.path)
                .collect();
            for path in left {
                self.s
                    .x
                    .warn([format!("{path}: no answer in time; left out")]);
                self.missing.push(path);
            }
            self.next = self.p.documents().len();
            return self.finish();
        }
        self.s.time_out(which);
    }

    pub(crate) fn handle_stream(&mut self, now: Instant, event: StreamEvent<'_>) {
        if self.s.is_done() {
            return;
        }
        match event {
            StreamEvent::Connected(peer) => self.connected(now, peer),
            StreamEvent::Received(bytes) => {
                let mut rest = bytes;
                while let Some(r) = self.s.take_some(now, rest) {
                    self.parse(now);
                    if r.is_empty() {
                        break;
                    }
                    rest = r;
                }
            }
            StreamEvent::Closed => {
                self.s.closed();
                match self.reader.closed() {
                    Ok(()) => {
                        if let Some(r) = self.reader.take_response() {
                            self.response(now, r);
                        }
                    }
                    Err(mut e) => {
                        e.offset = e.offset.saturating_add(self.response_at);
                        self.bad(e);
                    }
                }
                if !self.s.is_done() {
                    self.closed_early();
                }
            }
            StreamEvent::Failed(e) => {
                if self.next > 0 && self.required_read() {
                    self.s.x.warn([format!("the connection broke: {e}")]);
                    return self.closed_early();
                }
                self.s.failed(e);
            }
        }
    }

    /// What the machine holds of received input: the engine's buffer and the body
    /// being read (which may grow by `more`).
    pub(crate) fn stream_buffer(&self, more: usize) -> usize {
        self.s
            .buffer_after(more)
            .saturating_add(self.reader.held())
            .saturating_add(more)
    }
}

/// Implements [`QueryDriver`](crate::client_core::QueryDriver) for a protocol's
/// `QueryMachine`, a struct whose field `m` is an [`HttpMachine`].
macro_rules! http_json_driver {
    ($machine:ty, $details:ty) => {
        impl $crate::client_core::QueryDriver for $machine {
            type Details = $details;

            fn poll_transmit_into(&mut self, _now: std::time::Instant, out: &mut Vec<u8>) -> bool {
                self.m.s.poll_transmit_into(out)
            }

            fn handle_datagram(&mut self, _now: std::time::Instant, datagram: &[u8]) {
                self.m
                    .s
                    .x
                    .dropped(datagram.len(), "a stream protocol takes no datagrams");
            }

            fn poll_timeout(&self) -> Option<std::time::Instant> {
                self.m.s.poll_timeout()
            }

            fn handle_timeout(&mut self, now: std::time::Instant) {
                self.m.handle_timeout(now);
            }

            fn take_result(
                &mut self,
            ) -> Option<
                Result<$crate::client_core::Answer<$details>, $crate::client_core::QueryError>,
            > {
                self.m.s.take_result()
            }

            fn transport(&self) -> $crate::client_core::Transport {
                $crate::client_core::Transport::Stream
            }

            fn handle_stream(
                &mut self,
                now: std::time::Instant,
                event: $crate::client_core::StreamEvent<'_>,
            ) {
                self.m.handle_stream(now, event);
            }

            fn close_due(&self) -> bool {
                self.m.s.close_due()
            }

            fn stream_buffer(&self, more: usize) -> usize {
                self.m.stream_buffer(more)
            }

            fn tls(&self) -> Option<$crate::client_core::TlsRequest> {
                $crate::client_http::HttpJson::tls(&self.m.p)
            }
        }
    };
}
pub(crate) use http_json_driver;

/// The settings of an HTTP-JSON game that has none of its own (each such folder's
/// `client::QueryOptions`; the timers are [`Timing`](crate::client::Timing)).
#[derive(Debug, Clone, PartialEq, Eq, Default)]
#[non_exhaustive]
pub struct NoOptions {}

/// What an answer of an HTTP-JSON game whose only list is its players says beyond the
/// status (each such folder's `client::Details`).
#[derive(Debug, Clone, PartialEq, Eq, Default)]
#[non_exhaustive]
pub struct Listed {
    /// Entries of the document's player list (more than the players kept when over the
    /// cap; `None` when it sent none).
    pub players_listed: Option<usize>,
}

impl Listed {
    /// The details of `list` (a cut list also warns, `DOC: N players, the first M kept`).
    pub(crate) fn of<T, const MAX: usize>(
        list: Option<&Capped<T, MAX>>,
        doc: &str,
        warnings: &mut Vec<String>,
    ) -> Self {
        warnings.extend(list.and_then(|l| l.cut_warning(doc, "players")));
        Self {
            players_listed: list.map(|l| l.total),
        }
    }
}

/// The `QueryMachine` of an HTTP-JSON folder: `$p` (its [`HttpJson`], built by `$make`
/// from the folder's `QueryOptions`, by default `From` them) on an [`HttpMachine`] of
/// `Protocol::$variant`, with its driver and start; the folder's `Details` are `$p`'s.
macro_rules! http_json_query {
    ($variant:ident, $p:ty) => {
        $crate::client_http::http_json_query!($variant, $p, <$p>::from);
    };
    ($variant:ident, $p:ty, $make:expr) => {
        /// One query of one server.
        #[derive(Debug, Clone)]
        pub struct QueryMachine {
            m: $crate::client_http::HttpMachine<$p>,
        }

        impl QueryMachine {
            /// A query starting at `now`.
            pub fn new(
                opts: QueryOptions,
                timing: $crate::client_core::Timing,
                now: std::time::Instant,
            ) -> Self {
                Self {
                    m: $crate::client_http::HttpMachine::new(
                        $crate::protocol::Protocol::$variant,
                        ($make)(opts),
                        &timing,
                        now,
                        None,
                    ),
                }
            }
        }

        $crate::client_http::http_json_driver!(QueryMachine, Details);

        $crate::client_core::start_query!(QueryOptions, no_id);
    };
}
pub(crate) use http_json_query;

/// The head of a response the HTTP-JSON games take, at most.
pub(crate) const HEAD_LIMIT: usize = 8 * 1024;

/// The document of a game that answers one JSON document (see [`OneDocument`]).
pub(crate) trait OneDoc: for<'de> Deserialize<'de> + Default + fmt::Debug + Clone {
    /// The one document (an array of one, so that it is `'static`).
    fn documents() -> &'static [Document; 1];
    /// Why a parsed document is not an answer of this protocol's server (`None`: it is).
    fn refused(&self) -> Option<&'static str>;
    /// The answer the document gives; warnings (a list cut) to `warnings`.
    fn answer(&self, warnings: &mut Vec<String>) -> (Status, Listed);
    /// Extra headers of the request (`Accept`).
    fn headers() -> Vec<(&'static str, String)> {
        Vec::new()
    }
}

/// The [`HttpJson`] of a game answering one JSON object `D` (its top level must be an
/// object), asked at `D`'s path or at `target` (a token in the query string).
#[derive(Debug, Clone, Default)]
pub(crate) struct OneDocument<D> {
    target: Option<Secret>,
    doc: Option<D>,
    tls: Option<crate::client_core::TlsRequest>,
}

impl<D> OneDocument<D> {
    /// Asks at `target` instead of the document's path.
    pub(crate) fn at(target: Option<String>) -> Self {
        Self {
            target: target.map(Secret),
            doc: None,
            tls: None,
        }
    }

    /// Asked over HTTPS, as `tls` says.
    pub(crate) fn over_tls(tls: crate::client_core::TlsRequest) -> Self {
        Self {
            target: None,
            doc: None,
            tls: Some(tls),
        }
    }
}

impl<D: OneDoc> HttpJson for OneDocument<D> {
    type Details = Listed;

    fn documents(&self) -> &'static [Document] {
        D::documents()
    }

    fn target(&self, _i: usize) -> Option<String> {
        self.target.as_ref().map(|t| t.0.clone())
    }

    fn headers(&self) -> Vec<(&'static str, String)> {
        D::headers()
    }

    fn tls(&self) -> Option<crate::client_core::TlsRequest> {
        self.tls.clone()
    }

    fn read(&mut self, _i: usize, body: &[u8]) -> Result<(), DecodeError> {
        let path = D::documents()[0].path;
        let Object(doc) = parse_json::<Object<D>>(body, path)?;
        if let Some(why) = doc.refused() {
            return Err(DecodeError::new(0, path, DecodeErrorKind::Invalid(why)));
        }
        self.doc = Some(doc);
        Ok(())
    }

    fn finish(
        &mut self,
        _missing: &[&'static str],
        warnings: &mut Vec<String>,
    ) -> (Status, Listed) {
        self.doc.take().unwrap_or_default().answer(warnings)
    }
}

/// `p` with each of `pairs` that has a non-empty value in its `extra`.
pub(crate) fn with_extra(
    mut p: crate::model::Player,
    pairs: &[(&str, &Scalar)],
) -> crate::model::Player {
    for (k, v) in pairs {
        if let Some(v) = v.as_str().filter(|v| !v.is_empty()) {
            p.extra
                .insert(crate::text::Text::from(*k), crate::text::Text::from(v));
        }
    }
    p
}

/// A document that must be there (see [`Document`]), with `limits`.
pub(crate) const fn required(path: &'static str, limits: HttpLimits) -> Document {
    Document {
        path,
        required: true,
        limits,
    }
}

/// A document that may be left out, with a warning (see [`Document`]).
pub(crate) const fn optional(path: &'static str, limits: HttpLimits) -> Document {
    Document {
        path,
        required: false,
        limits,
    }
}

/// Rules from `(key, value)` pairs: those whose value is text, in order.
pub(crate) fn rules_of(pairs: &[(&str, &Scalar)]) -> crate::model::Rules {
    crate::model::Rules(
        pairs
            .iter()
            .filter_map(|(k, v)| {
                Some((
                    crate::text::Text::from(*k),
                    crate::text::Text::from(v.as_str()?),
                ))
            })
            .collect(),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn json_errors_name_the_byte_and_the_cause() {
        let e = parse_json::<serde_json::Value>(b"{\"a\":\n [1,", "x").unwrap_err();
        assert_eq!(e.kind, DecodeErrorKind::Invalid("the JSON ends early"));
        let e = parse_json::<serde_json::Value>(b"{\"a\":\n x}", "x").unwrap_err();
        assert_eq!(e.kind, DecodeErrorKind::Invalid("not valid JSON"));
        assert_eq!(e.offset, 7);
        let deep = [vec![b'['; 10_000], vec![b']'; 10_000]].concat();
        let e = parse_json::<serde_json::Value>(&deep, "x").unwrap_err();
        assert_eq!(e.kind, DecodeErrorKind::Invalid("the JSON nests too deep"));
        assert!(e.offset <= 130, "{e:?}");
        let e = parse_json::<Vec<u8>>(b"{}", "x").unwrap_err();
        assert_eq!(
            e.kind,
            DecodeErrorKind::Invalid("the JSON is not shaped as expected")
        );
    }

    #[test]
    fn refusals_say_whose_fault_and_keep_controls_out() {
        let mut r = Response {
            status: 302,
            reason: "Found\u{1b}[2J".into(),
            location: Some(format!("http://evil/\u{7}{}", "a".repeat(200))),
            ..Response::default()
        };
        let why = refusal(&r, "/info.json");
        assert!(why.contains("redirect to http://evil/?"), "{why}");
        assert!(!why.chars().any(char::is_control), "{why}");
        assert!(why.len() < 250);
        r.status = 404;
        assert!(refusal(&r, "/x").contains("refused our request"));
        r.status = 500;
        assert!(refusal(&r, "/x").contains("the server failed"));
    }
}
