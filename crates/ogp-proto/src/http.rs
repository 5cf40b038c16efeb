//! HTTP/1.1 on the stream transport, sans-IO: the request a protocol sends and the
//! response it reads back, for the query families that speak HTTP (FiveM's JSON
//! documents, REST APIs of game servers, the web lists of masters).
//!
//! ```text
//! let mut out = Vec::new();
//! write_get(&Get::new("127.0.0.1:30120", "/players.json"), &mut out)?;   // to the stream
//! let mut reader = ResponseReader::new(HttpLimits::default());
//! let used = reader.feed(&received)?;            // every read, in any chunking
//! if let Some(response) = reader.response() { /* status, headers, body */ }
//! reader.closed()?;                              // when the server closed its side
//! ```
//!
//! What it reads: the status line and headers (parsed by `httparse`, at most
//! [`HttpLimits::max_head`] bytes and [`MAX_HEADERS`] headers), then the body framed by
//! `Transfer-Encoding: chunked` (chunk extensions skipped, trailers read and dropped),
//! `Content-Length`, or the end of the connection; `1xx` interim responses skipped
//! (at most [`MAX_INTERIM`]); no body for `204`, `304` and answers to `HEAD`. Bounded in
//! everything a server controls: the head, each line of the chunked framing, the number
//! of chunks, and the decoded body ([`HttpLimits::max_body`]); a `Content-Length` over
//! the cap is refused before a byte of the body is kept, and conflicting lengths are an
//! error (a response smuggling risk), as is a length with a chunked encoding. The work
//! is incremental: a server that drips one byte a read costs each byte once.
//!
//! What it leaves to the protocol: redirects (the status and `Location` are given; a
//! protocol that follows them must bound them), keep-alive (the bytes after a response
//! are not consumed: the next reader starts on them) and the status's meaning.
//!
//! Errors are [`DecodeError`]s with the offset in the connection's bytes and what was
//! being read, as the other stream protocols give them.

use crate::error::{DecodeError, DecodeErrorKind};

/// Headers read at most in one response head.
pub const MAX_HEADERS: usize = 64;
/// `1xx` interim responses skipped at most before the final one.
pub const MAX_INTERIM: usize = 4;
/// The longest line of the chunked framing (a chunk size with its extensions, a
/// trailer).
pub const MAX_CHUNK_LINE: usize = 1024;
/// Chunks read at most in one body (a body of empty-looking tiny chunks costs a line
/// each).
pub const MAX_CHUNKS: usize = 65_536;

/// What a response may make us hold.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub struct HttpLimits {
    /// The status line and headers together, in bytes.
    pub max_head: usize,
    /// The decoded body, in bytes.
    pub max_body: usize,
}

impl HttpLimits {
    /// Limits of `max_head` and `max_body` bytes.
    pub const fn new(max_head: usize, max_body: usize) -> Self {
        Self { max_head, max_body }
    }
}

impl Default for HttpLimits {
    /// 16 KiB of head, 1 MiB of body.
    fn default() -> Self {
        Self::new(16 * 1024, 1024 * 1024)
    }
}

/// A `GET` (or `HEAD`) request to write.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct Get<'a> {
    /// The `Host` header: the server's name or address, with its port.
    pub host: &'a str,
    /// The path and query, starting with `/`.
    pub path: &'a str,
    /// Whether the connection is kept for another request.
    pub keep_alive: bool,
    /// `HEAD` instead of `GET`.
    pub head: bool,
    /// Extra headers (name, value), e.g. an `Authorization` the user gave.
    pub headers: &'a [(&'a str, &'a str)],
}

impl<'a> Get<'a> {
    /// A `GET` of `path` from `host`, closing the connection after the response.
    pub const fn new(host: &'a str, path: &'a str) -> Self {
        Self {
            host,
            path,
            keep_alive: false,
            head: false,
            headers: &[],
        }
    }
}

/// A credential (a password, a token): its `Debug` hides it, so that options and
/// machines holding one can be printed.
#[derive(Clone, PartialEq, Eq)]
pub struct Secret(pub String);

impl std::fmt::Debug for Secret {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Secret(…)")
    }
}

/// The `Authorization` value of HTTP Basic authentication (RFC 7617): `Basic ` and
/// base64 of `user:password`. A secret: callers keep it out of events, errors and logs.
pub fn basic_authorization(user: &str, password: &str) -> String {
    const ALPHABET: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    let raw = format!("{user}:{password}");
    let mut out = String::from("Basic ");
    for chunk in raw.as_bytes().chunks(3) {
        let b = [
            chunk.first().copied().unwrap_or(0),
            chunk.get(1).copied().unwrap_or(0),
            chunk.get(2).copied().unwrap_or(0),
        ];
        let n = (u32::from(b[0]) << 16) | (u32::from(b[1]) << 8) | u32::from(b[2]);
        for i in 0..4 {
            if i <= chunk.len() {
                let idx = usize::try_from((n >> (18 - 6 * i)) & 63).unwrap_or(0);
                out.push(char::from(ALPHABET.get(idx).copied().unwrap_or(b'A')));
            } else {
                out.push('=');
            }
        }
    }
    out
}

/// `s` percent-encoded for a query string's value: every byte but the unreserved
/// ones (`A-Z a-z 0-9 - . _ ~`) as `%XX`.
pub fn query_value(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for b in s.bytes() {
        if b.is_ascii_alphanumeric() || b"-._~".contains(&b) {
            out.push(char::from(b));
        } else {
            out.push_str(&format!("%{b:02X}"));
        }
    }
    out
}

/// Why a request cannot be written: a part would break the request's framing.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct BadRequest(pub &'static str);

impl std::fmt::Display for BadRequest {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "cannot send this HTTP request: {}", self.0)
    }
}

impl std::error::Error for BadRequest {}

/// Whether `s` is safe inside a request line or header value: printable ASCII and
/// spaces only (no CR, LF or other controls that would start a header of the caller's
/// choosing), within a sane length.
fn clean(s: &str, spaces: bool) -> bool {
    s.len() <= 8192
        && s.bytes()
            .all(|b| b.is_ascii_graphic() || (spaces && (b == b' ' || b == b'\t')))
}

/// Writes `req` to `out`: `GET path HTTP/1.1`, `Host`, `User-Agent`, `Accept`,
/// `Connection` and the extra headers.
pub fn write_get(req: &Get<'_>, out: &mut Vec<u8>) -> Result<(), BadRequest> {
    if !req.path.starts_with('/') || !clean(req.path, false) {
        return Err(BadRequest(
            "the path must start with / and be printable ASCII",
        ));
    }
    if req.host.is_empty() || !clean(req.host, false) {
        return Err(BadRequest("the host must be printable ASCII"));
    }
    for (name, value) in req.headers {
        let token = !name.is_empty()
            && name
                .bytes()
                .all(|b| b.is_ascii_alphanumeric() || b"!#$%&'*+-.^_`|~".contains(&b));
        if !token || !clean(value, true) {
            return Err(BadRequest(
                "a header's name or value has a control character",
            ));
        }
    }
    let method = if req.head { "HEAD" } else { "GET" };
    out.extend_from_slice(method.as_bytes());
    out.push(b' ');
    out.extend_from_slice(req.path.as_bytes());
    out.extend_from_slice(b" HTTP/1.1\r\nHost: ");
    out.extend_from_slice(req.host.as_bytes());
    out.extend_from_slice(b"\r\nUser-Agent: ogp/");
    out.extend_from_slice(env!("CARGO_PKG_VERSION").as_bytes());
    out.extend_from_slice(b"\r\nAccept: application/json, */*;q=0.5\r\nConnection: ");
    out.extend_from_slice(if req.keep_alive {
        b"keep-alive"
    } else {
        b"close"
    });
    for (name, value) in req.headers {
        out.extend_from_slice(b"\r\n");
        out.extend_from_slice(name.as_bytes());
        out.extend_from_slice(b": ");
        out.extend_from_slice(value.as_bytes());
    }
    out.extend_from_slice(b"\r\n\r\n");
    Ok(())
}

/// A response read whole.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
#[non_exhaustive]
pub struct Response {
    /// The status code.
    pub status: u16,
    /// The reason phrase, as sent (may be empty).
    pub reason: String,
    /// `Content-Type`, when sent.
    pub content_type: Option<String>,
    /// `Location`, when sent (a redirect's target).
    pub location: Option<String>,
    /// Whether the server keeps the connection open after this response.
    pub keep_alive: bool,
    /// The decoded body.
    pub body: Vec<u8>,
}

/// How the body is framed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Framing {
    /// `Content-Length`: bytes still to come.
    Length(usize),
    /// Chunked: reading a chunk-size line.
    ChunkSize,
    /// Chunked: bytes of the current chunk still to come.
    ChunkData(usize),
    /// Chunked: the CRLF after a chunk's data.
    ChunkEnd,
    /// Chunked: the trailer lines after the last chunk.
    Trailers,
    /// Until the server closes the connection.
    UntilClose,
}

#[derive(Debug, Clone, PartialEq, Eq)]
enum State {
    Head,
    Body(Framing),
    Done,
}

/// Reads one response from a connection's bytes (see the module's documentation).
#[derive(Debug, Clone)]
pub struct ResponseReader {
    limits: HttpLimits,
    head_request: bool,
    state: State,
    /// The head, or the line of chunked framing, read so far.
    line: Vec<u8>,
    /// Bytes of the connection consumed so far (offsets in errors).
    offset: usize,
    interim: usize,
    chunks: usize,
    response: Response,
}

fn err(offset: usize, field: &'static str, kind: DecodeErrorKind) -> DecodeError {
    DecodeError::new(offset, field, kind)
}

fn invalid(offset: usize, field: &'static str, why: &'static str) -> DecodeError {
    err(offset, field, DecodeErrorKind::Invalid(why))
}

fn too_large(offset: usize, field: &'static str, limit: usize) -> DecodeError {
    err(
        offset,
        field,
        DecodeErrorKind::TooLarge {
            limit: u64::try_from(limit).unwrap_or(u64::MAX),
        },
    )
}

/// A header value as text (obs-text bytes replaced; the callers want ASCII anyway).
fn text(value: &[u8]) -> String {
    String::from_utf8_lossy(value).trim().to_string()
}

impl ResponseReader {
    /// A reader of the response to a `GET`.
    pub fn new(limits: HttpLimits) -> Self {
        Self {
            limits,
            head_request: false,
            state: State::Head,
            line: Vec::new(),
            offset: 0,
            interim: 0,
            chunks: 0,
            response: Response::default(),
        }
    }

    /// A reader of the response to a `HEAD` (no body, whatever the headers say).
    pub fn for_head(limits: HttpLimits) -> Self {
        Self {
            head_request: true,
            ..Self::new(limits)
        }
    }

    /// The response, once read whole.
    pub fn response(&self) -> Option<&Response> {
        (self.state == State::Done).then_some(&self.response)
    }

    /// The response, once read whole, taken out of the reader.
    pub fn take_response(&mut self) -> Option<Response> {
        (self.state == State::Done).then(|| std::mem::take(&mut self.response))
    }

    /// Bytes of the connection consumed so far.
    pub fn consumed(&self) -> usize {
        self.offset
    }

    /// Bytes of memory held: the head or framing line being read and the body's
    /// buffer (a `Content-Length` reserves its body at once, within the cap).
    pub fn held(&self) -> usize {
        self.line
            .capacity()
            .saturating_add(self.response.body.capacity())
    }

    /// Reads `input`, the next bytes of the connection: how many were consumed. Fewer
    /// than given only once the response is whole (the rest belongs to the next
    /// response on a kept connection).
    pub fn feed(&mut self, input: &[u8]) -> Result<usize, DecodeError> {
        let mut used = 0;
        while used < input.len() && self.state != State::Done {
            let rest = input.get(used..).unwrap_or_default();
            let n = match self.state {
                State::Head => self.feed_head(rest)?,
                State::Body(framing) => self.feed_body(framing, rest)?,
                State::Done => 0,
            };
            used = used.saturating_add(n);
            self.offset = self.offset.saturating_add(n);
        }
        Ok(used)
    }

    /// The server closed its side: ends a body read until the close, else an error
    /// when the response is not whole.
    pub fn closed(&mut self) -> Result<(), DecodeError> {
        match self.state {
            State::Done => Ok(()),
            State::Body(Framing::UntilClose) => {
                self.state = State::Done;
                Ok(())
            }
            State::Head => Err(err(
                self.offset,
                "HTTP response head",
                DecodeErrorKind::Truncated {
                    needed: self.line.len().saturating_add(1),
                    available: self.line.len(),
                },
            )),
            State::Body(Framing::Length(left) | Framing::ChunkData(left)) => Err(err(
                self.offset,
                "HTTP body",
                DecodeErrorKind::Truncated {
                    needed: left,
                    available: 0,
                },
            )),
            State::Body(_) => Err(err(
                self.offset,
                "HTTP chunked body",
                DecodeErrorKind::Truncated {
                    needed: 1,
                    available: 0,
                },
            )),
        }
    }

    /// Reads head bytes up to the blank line; then parses the head.
    fn feed_head(&mut self, rest: &[u8]) -> Result<usize, DecodeError> {
        // the end of the head may straddle reads: look from its first line feed, at most
        // 2 bytes back
        let before = self.line.len();
        let room = self.limits.max_head.saturating_sub(before);
        let take = rest.len().min(room.saturating_add(1));
        self.line
            .extend_from_slice(rest.get(..take).unwrap_or_default());
        let end = head_end(&self.line, before.saturating_sub(2));
        let Some(end) = end else {
            if self.line.len() > self.limits.max_head {
                return Err(too_large(
                    self.offset.saturating_sub(before),
                    "HTTP response head",
                    self.limits.max_head,
                ));
            }
            return Ok(take);
        };
        if end > self.limits.max_head {
            return Err(too_large(
                self.offset.saturating_sub(before),
                "HTTP response head",
                self.limits.max_head,
            ));
        }
        // the bytes after the head in this read are not consumed here
        let consumed = end.saturating_sub(before);
        let head = std::mem::take(&mut self.line);
        let head = head.get(..end).unwrap_or_default();
        let start = self.offset.saturating_sub(before);
        self.parse_head(head, start)?;
        Ok(consumed)
    }

    fn parse_head(&mut self, head: &[u8], start: usize) -> Result<(), DecodeError> {
        let mut headers = [httparse::EMPTY_HEADER; MAX_HEADERS];
        let mut parsed = httparse::Response::new(&mut headers);
        match parsed.parse(head) {
            Ok(httparse::Status::Complete(_)) => {}
            Ok(httparse::Status::Partial) => {
                return Err(invalid(start, "HTTP response head", "incomplete head"))
            }
            Err(httparse::Error::TooManyHeaders) => {
                return Err(too_large(start, "HTTP headers", MAX_HEADERS))
            }
            Err(_) => {
                return Err(invalid(
                    start,
                    "HTTP response head",
                    "not an HTTP/1.x status line and headers",
                ))
            }
        }
        let status = parsed.code.unwrap_or(0);
        let version = parsed.version.unwrap_or(0);
        if (100..200).contains(&status) {
            if status == 101 {
                return Err(invalid(
                    start,
                    "HTTP status",
                    "101: the server switched protocols",
                ));
            }
            self.interim = self.interim.saturating_add(1);
            if self.interim > MAX_INTERIM {
                return Err(too_large(start, "HTTP interim responses", MAX_INTERIM));
            }
            return Ok(()); // the final response's head comes next
        }
        let mut length: Option<usize> = None;
        let mut chunked = false;
        let mut close = false;
        let mut keep = false;
        let mut r = Response {
            status,
            reason: parsed.reason.unwrap_or("").to_string(),
            ..Response::default()
        };
        for h in parsed.headers.iter() {
            let name = h.name;
            if name.eq_ignore_ascii_case("content-length") {
                let v = std::str::from_utf8(h.value).unwrap_or("").trim();
                let n = if !v.is_empty() && v.bytes().all(|b| b.is_ascii_digit()) {
                    v.parse::<usize>().ok()
                } else {
                    None
                };
                let Some(n) = n else {
                    return Err(invalid(start, "Content-Length", "not a decimal length"));
                };
                if length.is_some_and(|m| m != n) {
                    return Err(invalid(start, "Content-Length", "two different lengths"));
                }
                length = Some(n);
            } else if name.eq_ignore_ascii_case("transfer-encoding") {
                let v = text(h.value).to_ascii_lowercase();
                let last = v.rsplit(',').next().unwrap_or("").trim().to_string();
                if last != "chunked" {
                    return Err(invalid(
                        start,
                        "Transfer-Encoding",
                        "an encoding other than chunked",
                    ));
                }
                chunked = true;
            } else if name.eq_ignore_ascii_case("connection") {
                for token in text(h.value).split(',') {
                    let token = token.trim();
                    close |= token.eq_ignore_ascii_case("close");
                    keep |= token.eq_ignore_ascii_case("keep-alive");
                }
            } else if name.eq_ignore_ascii_case("content-type") {
                r.content_type = Some(text(h.value));
            } else if name.eq_ignore_ascii_case("location") {
                r.location = Some(text(h.value));
            }
        }
        if chunked && length.is_some() {
            return Err(invalid(
                start,
                "Transfer-Encoding",
                "both chunked and a Content-Length",
            ));
        }
        // HTTP/1.0 closes unless it says keep-alive; 1.1 keeps unless it says close
        r.keep_alive = if version == 0 { keep && !close } else { !close };
        let framing = if self.head_request || status == 204 || status == 304 {
            None
        } else if chunked {
            Some(Framing::ChunkSize)
        } else if let Some(n) = length {
            if n > self.limits.max_body {
                return Err(too_large(start, "Content-Length", self.limits.max_body));
            }
            (n > 0).then_some(Framing::Length(n))
        } else {
            r.keep_alive = false;
            Some(Framing::UntilClose)
        };
        if let Some(Framing::Length(n)) = framing {
            r.body.reserve_exact(n);
        }
        self.response = r;
        self.state = framing.map_or(State::Done, State::Body);
        Ok(())
    }

    /// Appends body bytes, within the cap.
    fn push_body(&mut self, bytes: &[u8]) -> Result<(), DecodeError> {
        if self.response.body.len().saturating_add(bytes.len()) > self.limits.max_body {
            return Err(too_large(self.offset, "HTTP body", self.limits.max_body));
        }
        self.response.body.extend_from_slice(bytes);
        Ok(())
    }

    /// Reads a CRLF-ended line of the chunked framing into `self.line`: consumed bytes,
    /// and whether the line is whole.
    fn feed_line(
        &mut self,
        rest: &[u8],
        field: &'static str,
    ) -> Result<(usize, bool), DecodeError> {
        let (n, whole) = match memchr::memchr(b'\n', rest) {
            Some(i) => (i.saturating_add(1), true),
            None => (rest.len(), false),
        };
        if self.line.len().saturating_add(n) > MAX_CHUNK_LINE {
            return Err(too_large(self.offset, field, MAX_CHUNK_LINE));
        }
        self.line
            .extend_from_slice(rest.get(..n).unwrap_or_default());
        Ok((n, whole))
    }

    fn feed_body(&mut self, framing: Framing, rest: &[u8]) -> Result<usize, DecodeError> {
        match framing {
            Framing::Length(left) | Framing::ChunkData(left) => {
                let n = left.min(rest.len());
                self.push_body(rest.get(..n).unwrap_or_default())?;
                let left = left.saturating_sub(n);
                self.state = match (framing, left) {
                    (Framing::Length(_), 0) => State::Done,
                    (Framing::Length(_), _) => State::Body(Framing::Length(left)),
                    (_, 0) => State::Body(Framing::ChunkEnd),
                    _ => State::Body(Framing::ChunkData(left)),
                };
                Ok(n)
            }
            Framing::UntilClose => {
                self.push_body(rest)?;
                Ok(rest.len())
            }
            Framing::ChunkSize => {
                let (n, whole) = self.feed_line(rest, "HTTP chunk size")?;
                if whole {
                    let line = std::mem::take(&mut self.line);
                    let size = chunk_size(&line).ok_or_else(|| {
                        invalid(self.offset, "HTTP chunk size", "not a hexadecimal size")
                    })?;
                    self.chunks = self.chunks.saturating_add(1);
                    if self.chunks > MAX_CHUNKS {
                        return Err(too_large(self.offset, "HTTP chunks", MAX_CHUNKS));
                    }
                    if size
                        > self
                            .limits
                            .max_body
                            .saturating_sub(self.response.body.len())
                    {
                        return Err(too_large(self.offset, "HTTP body", self.limits.max_body));
                    }
                    self.state = State::Body(if size == 0 {
                        Framing::Trailers
                    } else {
                        Framing::ChunkData(size)
                    });
                }
                Ok(n)
            }
            Framing::ChunkEnd => {
                let (n, whole) = self.feed_line(rest, "HTTP chunk end")?;
                if whole {
                    let line = std::mem::take(&mut self.line);
                    if line != b"\r\n" && line != b"\n" {
                        return Err(invalid(
                            self.offset,
                            "HTTP chunk end",
                            "bytes after a chunk's data",
                        ));
                    }
                    self.state = State::Body(Framing::ChunkSize);
                }
                Ok(n)
            }
            Framing::Trailers => {
                let (n, whole) = self.feed_line(rest, "HTTP trailer")?;
                if whole {
                    let line = std::mem::take(&mut self.line);
                    if line == b"\r\n" || line == b"\n" {
                        self.state = State::Done;
                    } else {
                        // a trailer line, dropped; counted against the chunk budget
                        self.chunks = self.chunks.saturating_add(1);
                        if self.chunks > MAX_CHUNKS {
                            return Err(too_large(self.offset, "HTTP trailers", MAX_CHUNKS));
                        }
                    }
                }
                Ok(n)
            }
        }
    }
}

/// Where the head in `buf` ends (just past its blank line), looking from `from`: the
/// blank line is `\r\n\r\n`, or a bare `\n\n` (or `\n\r\n`), which servers written
/// by hand send and `httparse` reads.
fn head_end(buf: &[u8], from: usize) -> Option<usize> {
    let rest = buf.get(from..)?;
    memchr::memchr_iter(b'\n', rest).find_map(|i| {
        let after = rest.get(i.saturating_add(1)..)?;
        let blank = if after.starts_with(b"\n") {
            2
        } else if after.starts_with(b"\r\n") {
            3
        } else {
            return None;
        };
        Some(from.saturating_add(i).saturating_add(blank))
    })
}

/// The size of a chunk-size line (`1a;ext=1\r\n`): hexadecimal digits, at most 15 of
/// them (no overflow), then optional extensions.
fn chunk_size(line: &[u8]) -> Option<usize> {
    let line = line.strip_suffix(b"\n")?;
    let line = line.strip_suffix(b"\r").unwrap_or(line);
    let digits_end = line
        .iter()
        .position(|b| !b.is_ascii_hexdigit())
        .unwrap_or(line.len());
    if digits_end == 0 || digits_end > 15 {
        return None;
    }
    let (digits, ext) = line.split_at(digits_end);
    let ext_ok = ext.is_empty()
        || ext
            .first()
            .is_some_and(|&b| b == b';' || b == b' ' || b == b'\t');
    if !ext_ok {
        return None;
    }
    let s = std::str::from_utf8(digits).ok()?;
    usize::from_str_radix(s, 16).ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn read_all(limits: HttpLimits, chunks: &[&[u8]]) -> Result<(Response, usize), DecodeError> {
        let mut r = ResponseReader::new(limits);
        let mut used = 0;
        for c in chunks {
            used += r.feed(c)?;
        }
        if r.response().is_none() {
            r.closed()?;
        }
        Ok((r.take_response().unwrap(), used))
    }

    fn bytewise(bytes: &[u8]) -> Vec<&[u8]> {
        bytes.chunks(1).collect()
    }

    #[test]
    fn basic_credentials_and_query_values_encode() {
        // RFC 7617's example
        assert_eq!(
            basic_authorization("Aladdin", "open sesame"),
            "Basic QWxhZGRpbjpvcGVuIHNlc2FtZQ=="
        );
        assert_eq!(basic_authorization("admin", "a"), "Basic YWRtaW46YQ==");
        assert_eq!(basic_authorization("admin", "ab"), "Basic YWRtaW46YWI=");
        assert_eq!(query_value("aB3-._~"), "aB3-._~");
        assert_eq!(query_value("a b&c=\r\n"), "a%20b%26c%3D%0D%0A");
    }

    #[test]
    fn writes_a_get_and_refuses_header_injection() {
        let mut out = Vec::new();
        let mut g = Get::new("127.0.0.1:30120", "/players.json");
        g.keep_alive = true;
        write_get(&g, &mut out).unwrap();
        let s = String::from_utf8(out).unwrap();
        assert!(s.starts_with("GET /players.json HTTP/1.1\r\nHost: 127.0.0.1:30120\r\n"));
        assert!(s.contains("\r\nConnection: keep-alive\r\n"));
        assert!(s.ends_with("\r\n\r\n"));
        for (host, path) in [
            ("a", "/x\r\nEvil: 1"),
            ("a\r\nEvil: 1", "/"),
            ("a", "x"),
            ("", "/"),
            ("a", "/ x"),
        ] {
            assert!(
                write_get(&Get::new(host, path), &mut Vec::new()).is_err(),
                "{host:?} {path:?}"
            );
        }
        let headers = [("Authorization", "Bearer a\r\nX: 1")];
        let mut g = Get::new("a", "/");
        g.headers = &headers;
        assert!(write_get(&g, &mut Vec::new()).is_err());
    }

    #[test]
    fn content_length_chunked_and_close_in_any_chunking() {
        let cases: [(&[u8], &[u8]); 4] = [
            (b"HTTP/1.1 200 OK\r\nContent-Length: 5\r\nContent-Type: application/json\r\n\r\nhello", b"hello"),
            (b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n3;x=y\r\nhel\r\n2\r\nlo\r\n0\r\nX-T: 1\r\n\r\n", b"hello"),
            (b"HTTP/1.0 200 OK\r\n\r\nhello", b"hello"),
            (b"HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 200 OK\r\nContent-Length: 5\r\n\r\nhello", b"hello"),
        ];
        for (wire, body) in cases {
            let (whole, used) = read_all(HttpLimits::default(), &[wire]).unwrap();
            assert_eq!(whole.body, body);
            assert_eq!(whole.status, 200);
            assert_eq!(used, wire.len());
            let (drip, _) = read_all(HttpLimits::default(), &bytewise(wire)).unwrap();
            assert_eq!(drip, whole);
        }
    }

    #[test]
    fn keep_alive_leaves_the_next_response_unread() {
        let two = b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nabHTTP/1.1 404 Not Found\r\nContent-Length: 0\r\n\r\n";
        let mut r = ResponseReader::new(HttpLimits::default());
        let used = r.feed(two).unwrap();
        let first = r.take_response().unwrap();
        assert_eq!(
            (first.status, first.body.as_slice(), first.keep_alive),
            (200, &b"ab"[..], true)
        );
        let mut next = ResponseReader::new(HttpLimits::default());
        next.feed(&two[used..]).unwrap();
        assert_eq!(next.response().unwrap().status, 404);
        assert!(next.response().unwrap().body.is_empty());
    }

    #[test]
    fn hostile_responses_are_bounded_errors() {
        let limits = HttpLimits::new(256, 64);
        let endless_head = [b"HTTP/1.1 200 OK\r\n".as_slice(), &b"X: y\r\n".repeat(100)].concat();
        let big_length = b"HTTP/1.1 200 OK\r\nContent-Length: 65\r\n\r\n".to_vec();
        let huge_length =
            b"HTTP/1.1 200 OK\r\nContent-Length: 99999999999999999999999\r\n\r\n".to_vec();
        let two_lengths =
            b"HTTP/1.1 200 OK\r\nContent-Length: 1\r\nContent-Length: 2\r\n\r\nab".to_vec();
        let both =
            b"HTTP/1.1 200 OK\r\nContent-Length: 1\r\nTransfer-Encoding: chunked\r\n\r\n".to_vec();
        let big_chunk =
            b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\nfffffffffffffff\r\n".to_vec();
        let long_chunk_line = [
            b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n1;".as_slice(),
            &[b'a'; 2000],
        ]
        .concat();
        let endless_chunks = [
            b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n".as_slice(),
            &b"1\r\na\r\n".repeat(100),
        ]
        .concat();
        let until_close = [b"HTTP/1.0 200 OK\r\n\r\n".as_slice(), &[b'x'; 100]].concat();
        let garbage = b"\x00\x01garbage\r\n\r\n".to_vec();
        let bad_chunk_end =
            b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n1\r\nab\r\n".to_vec();
        let gzip = b"HTTP/1.1 200 OK\r\nTransfer-Encoding: gzip\r\n\r\n".to_vec();
        let interims = b"HTTP/1.1 100 Continue\r\n\r\n".repeat(10);
        for (what, wire) in [
            ("endless head", endless_head),
            ("length over the cap", big_length),
            ("a length past usize", huge_length),
            ("two lengths", two_lengths),
            ("length and chunked", both),
            ("a chunk over the cap", big_chunk),
            ("a long chunk line", long_chunk_line),
            ("endless chunks", endless_chunks),
            ("a body until close over the cap", until_close),
            ("garbage", garbage),
            ("bytes after a chunk", bad_chunk_end),
            ("gzip", gzip),
            ("interim responses", interims),
        ] {
            let whole = ResponseReader::new(limits).feed(&wire).map(|_| ());
            assert!(whole.is_err(), "{what}");
            let mut r = ResponseReader::new(limits);
            let drip = wire.iter().try_for_each(|b| r.feed(&[*b]).map(|_| ()));
            assert!(drip.is_err(), "{what} dripped");
            let e = drip.unwrap_err();
            assert!(e.offset <= wire.len(), "{what}: {e:?}");
        }
    }

    #[test]
    fn a_connection_closed_early_is_truncated() {
        for wire in [
            &b"HTTP/1.1 200 OK\r\nContent-Len"[..],
            b"HTTP/1.1 200 OK\r\nContent-Length: 9\r\n\r\nabc",
            b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nab",
            b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n",
        ] {
            let mut r = ResponseReader::new(HttpLimits::default());
            r.feed(wire).unwrap();
            assert!(r.response().is_none());
            let e = r.closed().unwrap_err();
            assert!(matches!(e.kind, DecodeErrorKind::Truncated { .. }), "{e:?}");
        }
    }

    #[test]
    fn no_body_for_head_204_and_304() {
        let wire = b"HTTP/1.1 200 OK\r\nContent-Length: 1000\r\n\r\n";
        let mut r = ResponseReader::for_head(HttpLimits::new(1024, 10));
        assert_eq!(r.feed(wire).unwrap(), wire.len());
        assert!(r.response().unwrap().body.is_empty());
        for code in [204, 304] {
            let wire = format!("HTTP/1.1 {code} X\r\n\r\n");
            let mut r = ResponseReader::new(HttpLimits::default());
            r.feed(wire.as_bytes()).unwrap();
            assert_eq!(r.response().unwrap().status, code);
        }
    }

    /// A head ended by bare line feeds (`\n\n`) is read, in any chunking; it was
    /// reported as too large.
    #[test]
    fn a_head_of_bare_line_feeds_is_read() {
        for wire in [
            &b"HTTP/1.1 200 OK\nContent-Length: 2\n\nab"[..],
            b"HTTP/1.1 200 OK\nContent-Length: 2\n\r\nab",
            b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\nab",
        ] {
            let (whole, used) = read_all(HttpLimits::default(), &[wire]).unwrap();
            assert_eq!((whole.status, whole.body.as_slice()), (200, &b"ab"[..]));
            assert_eq!(used, wire.len());
            let (drip, _) = read_all(HttpLimits::default(), &bytewise(wire)).unwrap();
            assert_eq!(drip, whole);
        }
        // a head of bare line feeds past the cap is still too large
        let long = [b"HTTP/1.1 200 OK\n".as_slice(), &b"X: y\n".repeat(100)].concat();
        let e = ResponseReader::new(HttpLimits::new(256, 64))
            .feed(&long)
            .unwrap_err();
        assert!(matches!(e.kind, DecodeErrorKind::TooLarge { .. }), "{e:?}");
        assert_eq!(head_end(b"a\n\nb", 0), Some(3));
        assert_eq!(head_end(b"a\r\n\r\nb", 0), Some(5));
        assert_eq!(head_end(b"a\r\nb\r\n", 0), None);
    }

    #[test]
    fn chunk_sizes() {
        assert_eq!(chunk_size(b"1a\r\n"), Some(26));
        assert_eq!(chunk_size(b"1A;name=value\r\n"), Some(26));
        assert_eq!(chunk_size(b"0\n"), Some(0));
        for bad in [
            &b"\r\n"[..],
            b"-1\r\n",
            b"1x\r\n",
            b"1000000000000000\r\n",
            b"12",
        ] {
            assert_eq!(chunk_size(bad), None, "{bad:?}");
        }
    }
}
