//! The Server List Ping client as a stream state machine on the shared core
//! ([`Transport::Stream`](crate::client::Transport)): no I/O, time passed in.
//!
//! Once connected it writes the handshake and the status request together, waits for
//! the status response, then (unless [`QueryOptions::ping`] is off) writes a ping and
//! waits for the pong, whose round trip becomes the answer's ping. A server that closes,
//! stays silent or answers wrongly after the status still gives the status (with a
//! warning); before it, the query fails: closed early or a bad frame is malformed with
//! the offset, silence a [`QueryError::StreamTimeout`]. With [`QueryOptions::legacy`] it
//! sends the pre-1.7 ping (`FE 01`) and reads the kick reply instead.
//!
//! Bytes are parsed as they come, in any chunking; the core holds at most one frame
//! (the status response's cap, [`MAX_STATUS_FRAME`]) plus a little.

use std::time::Instant;

use serde_json::Value;

use super::mapping::{json_to_status, legacy_to_status};
use super::wire::{
    decode_legacy, decode_pong, decode_status, encode_ping, replace_lone_surrogates, split_frame,
    split_legacy, Handshake, LegacyReply, LEGACY_PING, MAX_STATUS_FRAME, MAX_STATUS_JSON_BYTES,
    MAX_VARINT_LEN,
};
use crate::client_core::{Event, QueryDriver, QueryError, StreamEvent, Timing, Transport};
use crate::client_stream::Stream;
use crate::error::DecodeError;
use crate::protocol::Protocol;
use crate::text::Text;
use crate::Status;

/// The default port.
pub const DEFAULT_PORT: u16 = 25565;

/// Minecraft's own settings of one query (the timers are [`Timing`]).
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct QueryOptions {
    /// The host name sent in the handshake (servers behind proxies route by it); `None`:
    /// the connected address.
    pub host: Option<Text>,
    /// The port sent in the handshake; `None`: the connected port.
    pub port: Option<u16>,
    /// The protocol version sent: -1 (the default) is the convention for a ping that
    /// wants to learn the server's version.
    pub protocol_version: i32,
    /// Ping after the status for the latency (default true).
    pub ping: bool,
    /// Send the legacy ping of servers before 1.7 instead (default false).
    pub legacy: bool,
    /// Most bytes of the status JSON (at most, and by default,
    /// [`MAX_STATUS_JSON_BYTES`]).
    pub max_json_bytes: usize,
}

impl Default for QueryOptions {
    fn default() -> Self {
        Self {
            host: None,
            port: None,
            protocol_version: -1,
            ping: true,
            legacy: false,
            max_json_bytes: MAX_STATUS_JSON_BYTES,
        }
    }
}

/// What a Minecraft answer says beyond the status.
#[derive(Debug, Clone, PartialEq, Default)]
#[non_exhaustive]
pub struct Details {
    /// The status JSON as sent.
    pub json: Option<String>,
    /// The legacy reply, when asked for.
    pub legacy: Option<LegacyReply>,
    /// Whether the pong came back (then the answer's ping is its round trip; otherwise
    /// the status request's).
    pub pong: bool,
    /// How long the connection took, in milliseconds.
    pub connect_ms: f64,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Step {
    Connect,
    Status,
    Pong,
    Legacy,
}

impl Step {
    fn what(self) -> &'static str {
        match self {
            Self::Connect => "the connection",
            Self::Status => "StatusResponse",
            Self::Pong => "Pong",
            Self::Legacy => "LegacyKick",
        }
    }
}

/// One Minecraft query of one server.
#[derive(Debug, Clone)]
pub struct QueryMachine {
    opts: QueryOptions,
    step: Step,
    ping_payload: i64,
    status: Option<(Status, String)>,
    s: Stream<Details>,
}

impl QueryMachine {
    /// A query starting at `now`; `id` (pick it at random) becomes the ping payload.
    pub fn new(opts: QueryOptions, timing: Timing, id: u32, now: Instant) -> Self {
        let cap = if opts.legacy {
            3 + 2 * usize::from(u16::MAX)
        } else {
            MAX_VARINT_LEN + MAX_STATUS_FRAME + 16
        };
        Self {
            ping_payload: i64::from(id) << 16 | 0x6f67,
            step: Step::Connect,
            status: None,
            s: Stream::new(Protocol::Minecraft, &timing, now, cap),
            opts,
        }
    }

    fn connected(&mut self, now: Instant, peer: std::net::SocketAddr) {
        if self.step != Step::Connect {
            return;
        }
        self.s.connected(now);
        if self.opts.legacy {
            self.step = Step::Legacy;
            self.s
                .write(now, &LEGACY_PING, "legacy ping FE 01", Step::Legacy.what());
            return;
        }
        let host = match &self.opts.host {
            Some(h) => h.to_string(),
            None => peer.ip().to_string(),
        };
        let mut out = Vec::with_capacity(32 + host.len());
        Handshake {
            protocol_version: self.opts.protocol_version,
            host: &host,
            port: self.opts.port.unwrap_or(peer.port()),
        }
        .encode_with_request(&mut out);
        self.step = Step::Status;
        self.s
            .write(now, &out, "handshake + status request", Step::Status.what());
    }

    /// Parses what has come: whole frames, one step at a time.
    fn parse(&mut self, now: Instant) {
        while !self.s.is_done() {
            let r = self.s.input();
            if r.is_empty() {
                return;
            }
            let step = self.step;
            let frame = if step == Step::Legacy {
                split_legacy(&r).map(|f| f.map(|n| (0, n)))
            } else {
                split_frame(&r, MAX_STATUS_FRAME).map(|f| f.map(|f| (f.header, f.total())))
            };
            let (header, total) = match frame {
                Ok(Some(f)) => f,
                Ok(None) => return,
                Err(e) => return self.bad(e),
            };
            // The packet alone: its fields cannot read into the next frame.
            let mut all = self.s.input();
            let parsed = all
                .take(header, "Length")
                .and_then(|_| all.sub(total.saturating_sub(header), "Packet"))
                .and_then(|mut body| match step {
                    Step::Legacy => decode_legacy(&mut body).map(Parsed::Legacy),
                    Step::Pong => decode_pong(&mut body).map(Parsed::Pong),
                    _ => decode_status(&mut body, self.opts.max_json_bytes)
                        .and_then(|json| parse_json(json, body.offset()).map(|v| (json, v)))
                        .map(|(json, (v, lone))| Parsed::Status(json.to_owned(), v, lone)),
                });
            self.s.consume(total);
            self.s.x.received(1, 0);
            self.s.x.event(Event::Reply {
                what: step.what(),
                bytes: total,
                datagrams: 1,
            });
            match parsed {
                Err(e) => return self.bad(e),
                Ok(Parsed::Legacy(l)) => {
                    self.s.x.ping(now);
                    let status = legacy_to_status(&l);
                    return self.succeed(status, None, Some(l), false);
                }
                Ok(Parsed::Status(json, v, lone)) => {
                    self.s.x.ping(now);
                    self.s.answered();
                    if lone > 0 {
                        self.s.x.warn([format!(
                            "{lone} lone UTF-16 surrogate{} in the status JSON read as U+FFFD",
                            if lone == 1 { "" } else { "s" }
                        )]);
                    }
                    let (status, warnings) = json_to_status(&v);
                    self.s.x.warn(warnings);
                    self.status = Some((status, json));
                    if !self.opts.ping || self.s.is_closed() {
                        return self.finish(false);
                    }
                    self.step = Step::Pong;
                    let mut out = Vec::with_capacity(10);
                    encode_ping(&mut out, self.ping_payload);
                    self.s.write(now, &out, "ping", Step::Pong.what());
                }
                Ok(Parsed::Pong(p)) => {
                    if p == self.ping_payload {
                        self.s.x.repinged(now);
                        return self.finish(true);
                    }
                    self.s.x.warn(["the pong does not echo our ping"]);
                    return self.finish(false);
                }
            }
        }
    }

    /// A bad frame: fatal before the status, a warning after it.
    fn bad(&mut self, e: DecodeError) {
        if self.status.is_some() {
            self.s.x.warn([format!("after the status: {e}")]);
            self.finish(false);
        } else {
            self.s.x.fail_malformed(e);
        }
    }

    /// Ends with the status received (`pong`: its round trip is the ping).
    fn finish(&mut self, pong: bool) {
        if let Some((status, json)) = self.status.take() {
            self.succeed(status, Some(json), None, pong);
        }
    }

    fn succeed(
        &mut self,
        status: Status,
        json: Option<String>,
        legacy: Option<LegacyReply>,
        pong: bool,
    ) {
        let details = Details {
            json,
            legacy,
            pong,
            connect_ms: self.s.connect_ms,
        };
        self.s.x.succeed(status, details);
    }
}

enum Parsed {
    /// The JSON as sent, parsed, and its lone surrogates replaced.
    Status(String, Value, usize),
    Pong(i64),
    Legacy(LegacyReply),
}

/// Parses the status JSON, lone surrogates replaced with U+FFFD
/// ([`replace_lone_surrogates`]: how many is the second value); an error names the byte
/// where serde_json stopped (its column on the first line, counted from `end -
/// json.len()`).
fn parse_json(json: &str, end: usize) -> Result<(Value, usize), DecodeError> {
    let (fixed, lone) = replace_lone_surrogates(json);
    serde_json::from_str(&fixed)
        .map(|v| (v, lone))
        .map_err(|e| {
            let start = end.saturating_sub(json.len());
            let at = if e.line() == 1 {
                start.saturating_add(e.column().saturating_sub(1))
            } else {
                start
            };
            DecodeError::invalid(
                at,
                "Json",
                if e.is_eof() {
                    "the JSON ends early"
                } else if e.to_string().contains("recursion limit") {
                    "the JSON nests too deep"
                } else {
                    "not valid JSON"
                },
            )
        })
}

impl QueryDriver for QueryMachine {
    type Details = Details;

    fn poll_transmit_into(&mut self, _now: Instant, out: &mut Vec<u8>) -> bool {
        self.s.poll_transmit_into(out)
    }

    fn handle_datagram(&mut self, _now: Instant, datagram: &[u8]) {
        self.s
            .x
            .dropped(datagram.len(), "a stream protocol takes no datagrams");
    }

    fn poll_timeout(&self) -> Option<Instant> {
        self.s.poll_timeout()
    }

    fn handle_timeout(&mut self, now: Instant) {
        let Some(which) = self.s.expired(now) else {
            return;
        };
        if self.status.is_some() {
            self.s
                .x
                .warn(["no pong in time: the latency is the status request's"]);
            return self.finish(false);
        }
        self.s.time_out(which);
    }

    fn take_result(&mut self) -> Option<Result<crate::client_core::Answer<Details>, QueryError>> {
        self.s.take_result()
    }

    fn transport(&self) -> Transport {
        Transport::Stream
    }

    fn handle_stream(&mut self, now: Instant, event: StreamEvent<'_>) {
        if self.s.is_done() {
            return;
        }
        match event {
            StreamEvent::Connected(peer) => self.connected(now, peer),
            StreamEvent::Received(bytes) => {
                // The core holds at most its cap: parse, then take the rest.
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
                if self.status.is_some() {
                    self.s.x.warn([
                        "the server closed without a pong: the latency is the status request's",
                    ]);
                    self.finish(false);
                } else {
                    self.s.fail_truncated(self.step.what());
                }
            }
            StreamEvent::Failed(e) => {
                if self.status.is_some() {
                    self.s
                        .x
                        .warn([format!("the connection broke after the status: {e}")]);
                    self.finish(false);
                } else {
                    self.s.failed(e);
                }
            }
        }
    }

    fn close_due(&self) -> bool {
        self.s.close_due()
    }

    fn stream_buffer(&self, more: usize) -> usize {
        self.s.buffer_after(more)
    }
}

crate::client_core::start_query!(QueryOptions);
