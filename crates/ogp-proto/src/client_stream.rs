//! The stream transport of the client core: what a TCP protocol's machine (Minecraft's
//! Server List Ping, and the HTTP-JSON machines of `client_http`: FiveM) shares with
//! every other, so that it is a plug-in like the datagram protocols.
//!
//! A machine says it is stream-based through [`QueryDriver::transport`]. The I/O code
//! then connects first and tells the machine what happens to the connection through
//! [`QueryDriver::handle_stream`]:
//!
//! 1. [`StreamEvent::Connected`] once the connection is up (with the peer's address,
//!    which protocols that name their server in the request use);
//! 2. [`StreamEvent::Received`] with the bytes of every read, in whatever chunks they
//!    came: one byte at a time or many frames at once gives the same answer;
//! 3. [`StreamEvent::Closed`] when the server closed its side, and
//!    [`StreamEvent::Failed`] when the connection could not be made or broke (a refused
//!    connection ends the query at once as [`QueryError::Refused`]).
//!
//! What to write comes from [`QueryDriver::poll_transmit_into`] as for datagrams (here a
//! chunk of the byte stream, written whole); [`QueryDriver::close_due`] says when the
//! machine is done with the connection. Timers stay in the sans-IO core as for UDP, set
//! in [`Timing`]: [`Timing::connect_timeout`] until the connection is up,
//! [`Timing::read_timeout`] for the longest silence while a reply is awaited (every byte
//! restarts it), and [`Timing::total_timeout`] for the whole query, however the server
//! drips its bytes. A timeout is [`QueryError::StreamTimeout`], saying what was awaited
//! and how many bytes had come.
//!
//! `Stream` (crate-private) is the engine each stream machine embeds, beside the
//! datagram machines' `Exchange`, whose result bookkeeping it reuses: the connection
//! state, the timers, the bytes waiting to be written, and the received bytes not yet
//! parsed, capped at a size the protocol sets (a server cannot make us hold more: past
//! the cap the query fails as malformed, with the offset). Offsets in errors count from
//! the first byte the server sent.

use std::time::{Duration, Instant};

use crate::client_core::{Answer, Event, Exchange, QueryError, Timing};
use crate::error::{DecodeError, DecodeErrorKind};
use crate::protocol::Protocol;
use crate::reader::Reader;

#[allow(unused_imports)] // for the documentation links
use crate::client_core::{QueryDriver, StreamEvent};

/// The smallest input buffer allocated (a few bytes read grow it to this).
pub(crate) const MIN_INPUT: usize = 64;
/// An input buffer emptied by a parsed frame is freed when it is larger than this.
pub(crate) const KEEP_INPUT: usize = 4096;

/// The connection's state.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Conn {
    Connecting,
    Open,
    Closed,
}

/// Which timer ran out, for the machine to decide what it means.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum StreamTimeout {
    /// The connection was not up in time.
    Connect,
    /// The server was silent too long while a reply was awaited.
    Read,
    /// The whole query's deadline passed.
    Total,
}

/// The engine of a stream machine (see the module's documentation).
#[derive(Debug, Clone)]
pub(crate) struct Stream<D> {
    pub(crate) x: Exchange<D>,
    protocol: Protocol,
    conn: Conn,
    connect_deadline: Option<Instant>,
    read_timeout: Duration,
    read_deadline: Option<Instant>,
    deadline: Instant,
    /// Bytes to write, not yet handed to the I/O code.
    out: Vec<u8>,
    /// Received bytes not yet consumed.
    input: Vec<u8>,
    /// Stream offset of `input[0]`.
    base: usize,
    max_input: usize,
    /// What the machine waits for, for errors.
    waiting_for: &'static str,
    started: Instant,
    /// How long the connection took to come up, in milliseconds.
    pub(crate) connect_ms: f64,
}

impl<D> Stream<D> {
    /// A stream query starting at `now` that holds at most `max_input` received bytes
    /// not yet consumed.
    pub(crate) fn new(protocol: Protocol, timing: &Timing, now: Instant, max_input: usize) -> Self {
        let mut x = Exchange::new(protocol, timing, now);
        // The datagram timer stays idle: this engine keeps its own.
        x.timer.stop();
        Self {
            x,
            protocol,
            conn: Conn::Connecting,
            connect_deadline: now.checked_add(timing.connect_timeout),
            read_timeout: timing.read_timeout,
            read_deadline: None,
            deadline: now.checked_add(timing.total_timeout).unwrap_or(now),
            out: Vec::new(),
            input: Vec::new(),
            base: 0,
            max_input,
            waiting_for: "the connection",
            started: now,
            connect_ms: 0.0,
        }
    }

    pub(crate) fn is_done(&self) -> bool {
        self.x.is_done()
    }

    /// The connection came up at `now`.
    pub(crate) fn connected(&mut self, now: Instant) {
        if self.conn == Conn::Connecting {
            self.conn = Conn::Open;
            self.connect_deadline = None;
            self.connect_ms = now.saturating_duration_since(self.started).as_secs_f64() * 1000.0;
            self.x.event(Event::Note("connected"));
        }
    }

    /// The connection came up at `now` (the first time only): `bytes` go out, recorded as
    /// sent (`what`), and the wait for `reply` starts. For protocols that ask first.
    pub(crate) fn open_with(
        &mut self,
        now: Instant,
        bytes: &[u8],
        what: &'static str,
        reply: &'static str,
    ) {
        if self.conn == Conn::Connecting {
            self.connected(now);
            self.write(now, bytes, what, reply);
        }
    }

    /// The connection came up at `now` (the first time only): the wait for the server's
    /// first words (`what`) starts. For protocols whose server speaks first.
    pub(crate) fn open_awaiting(&mut self, now: Instant, what: &'static str) {
        if self.conn == Conn::Connecting {
            self.connected(now);
            self.wait_for(now, what);
        }
    }

    /// Queues `bytes` to write, recorded as sent (`what`), and starts waiting for
    /// `reply`: the read timer runs from `now`.
    pub(crate) fn write(
        &mut self,
        now: Instant,
        bytes: &[u8],
        what: &'static str,
        reply: &'static str,
    ) {
        self.out.extend_from_slice(bytes);
        self.x.sent(
            now,
            Event::Sent {
                what,
                bytes: bytes.len(),
                challenge: None,
                id: None,
            },
        );
        self.x.timer.stop();
        self.wait_for(now, reply);
    }

    /// Starts (or restarts) waiting for `what`.
    pub(crate) fn wait_for(&mut self, now: Instant, what: &'static str) {
        self.waiting_for = what;
        self.read_deadline = now.checked_add(self.read_timeout);
    }

    /// Moves the bytes due to be written into `out`; true when there were any.
    pub(crate) fn poll_transmit_into(&mut self, out: &mut Vec<u8>) -> bool {
        out.clear();
        // A query that has ended writes no more: what it had queued (a server that sent
        // every answer before it was asked ends the query before the requests go out)
        // would go to a finished conversation.
        if self.out.is_empty() || self.conn != Conn::Open || self.is_done() {
            return false;
        }
        std::mem::swap(out, &mut self.out);
        true
    }

    /// Takes as much of `bytes` (read at `now`) into the input as the cap leaves room
    /// for, and returns the rest, to offer again once the machine has parsed (and
    /// consumed) what it holds. `None` when the query is over, or failed because the
    /// input is full of bytes the machine could not consume (it cannot be a reply).
    pub(crate) fn take_some<'b>(&mut self, now: Instant, bytes: &'b [u8]) -> Option<&'b [u8]> {
        if self.is_done() {
            return None;
        }
        let room = self.max_input.saturating_sub(self.input.len());
        if room == 0 && !bytes.is_empty() {
            let offset = self.end_offset();
            self.x.fail_malformed(DecodeError::new(
                offset,
                self.waiting_for,
                DecodeErrorKind::TooLarge {
                    limit: u64::try_from(self.max_input).unwrap_or(u64::MAX),
                },
            ));
            return None;
        }
        let (now_bytes, rest) = bytes.split_at(room.min(bytes.len()));
        // Grown by an exact reservation (`buffer_after` says how much), never past the
        // cap: a doubling `Vec` would hold up to twice the cap.
        let want = self.buffer_after(now_bytes.len());
        if want > self.input.capacity() {
            self.input
                .reserve_exact(want.saturating_sub(self.input.len()));
        }
        self.input.extend_from_slice(now_bytes);
        self.x.received(0, now_bytes.len());
        self.x.heard(now);
        if self.read_deadline.is_some() {
            self.read_deadline = now.checked_add(self.read_timeout);
        }
        Some(rest)
    }

    /// The capacity of the input buffer after taking `more` bytes (as many as the cap
    /// leaves room for): as now when they fit, else the larger of what they need and
    /// twice the present capacity (at least [`MIN_INPUT`]), never more than the cap.
    pub(crate) fn buffer_after(&self, more: usize) -> usize {
        let cap = self.input.capacity();
        let len = self.input.len();
        let need = len.saturating_add(more).min(self.max_input.max(len));
        if need <= cap {
            return cap;
        }
        need.max(cap.saturating_mul(2))
            .max(MIN_INPUT)
            .min(self.max_input.max(need))
    }

    /// A reader over the received bytes not yet consumed, its offsets counted from the
    /// first byte of the stream.
    pub(crate) fn input(&self) -> Reader<'_> {
        Reader::with_base(&self.input, self.base)
    }

    /// The stream offset just past the bytes received so far.
    pub(crate) fn end_offset(&self) -> usize {
        self.base.saturating_add(self.input.len())
    }

    /// Drops the first `n` received bytes (a whole frame, parsed).
    pub(crate) fn consume(&mut self, n: usize) {
        let n = n.min(self.input.len());
        self.input.drain(..n);
        self.base = self.base.saturating_add(n);
        // A large frame parsed: its buffer goes back (to the allocator and to the I/O
        // code's byte budget) rather than staying as large for the next, small reply.
        if self.input.is_empty() && self.input.capacity() > KEEP_INPUT {
            self.input = Vec::new();
        }
    }

    /// A whole frame of `n` bytes (a reply to `what`) was parsed: dropped from the input
    /// and counted as a reply.
    pub(crate) fn took_reply(&mut self, n: usize, what: &'static str) {
        self.consume(n);
        self.x.received(1, 0);
        self.x.event(Event::Reply {
            what,
            bytes: n,
            datagrams: 1,
        });
    }

    /// The query's answer at `now`: `status` and `details`, with `warnings`.
    pub(crate) fn finish(
        &mut self,
        now: Instant,
        status: crate::Status,
        details: D,
        warnings: &[String],
    ) {
        self.x.ping(now);
        self.answered();
        self.x.warn(warnings.iter());
        self.x.succeed(status, details);
    }

    /// A reply is complete: the read timer stops until the next wait.
    pub(crate) fn answered(&mut self) {
        self.read_deadline = None;
    }

    /// The server closed its side.
    pub(crate) fn closed(&mut self) {
        self.conn = Conn::Closed;
        self.read_deadline = None;
    }

    /// Whether the server has closed its side.
    pub(crate) fn is_closed(&self) -> bool {
        self.conn == Conn::Closed
    }

    /// The connection failed: a refused one is [`QueryError::Refused`], anything else a
    /// socket error.
    pub(crate) fn failed(&mut self, e: &std::io::Error) {
        self.conn = Conn::Closed;
        let err = match QueryError::socket(e) {
            QueryError::Refused { .. } => QueryError::Refused {
                protocol: Some(self.protocol),
            },
            other => other,
        };
        self.x.fail(err);
    }

    /// The connection ended (closed, or the cap) with `what` incomplete: the data ended
    /// before it was whole.
    pub(crate) fn fail_truncated(&mut self, what: &'static str) {
        let offset = self.end_offset();
        self.x.fail_malformed(DecodeError::new(
            offset,
            what,
            DecodeErrorKind::Truncated {
                needed: 1,
                available: 0,
            },
        ));
    }

    /// When [`handle_timeout`](Self::handle_timeout) is due.
    pub(crate) fn poll_timeout(&self) -> Option<Instant> {
        if self.is_done() {
            return None;
        }
        let mut t = self.deadline;
        for d in [self.connect_deadline, self.read_deadline]
            .into_iter()
            .flatten()
        {
            t = t.min(d);
        }
        Some(t)
    }

    /// Which timer ran out at `now`, if any.
    pub(crate) fn expired(&self, now: Instant) -> Option<StreamTimeout> {
        if self.is_done() {
            None
        } else if now >= self.deadline {
            Some(StreamTimeout::Total)
        } else if self.connect_deadline.is_some_and(|d| now >= d) {
            Some(StreamTimeout::Connect)
        } else if self.read_deadline.is_some_and(|d| now >= d) {
            Some(StreamTimeout::Read)
        } else {
            None
        }
    }

    /// Fails the query as timed out (`which` timer) while waiting.
    pub(crate) fn time_out(&mut self, which: StreamTimeout) {
        let waiting_for = if which == StreamTimeout::Connect {
            "the connection"
        } else {
            self.waiting_for
        };
        self.x.fail(QueryError::StreamTimeout {
            protocol: self.protocol,
            waiting_for,
            timer: match which {
                StreamTimeout::Connect => "connect",
                StreamTimeout::Read => "read",
                StreamTimeout::Total => "total",
            },
            received: self.end_offset(),
        });
    }

    /// Whether the machine is done with the connection.
    pub(crate) fn close_due(&self) -> bool {
        self.is_done()
    }

    pub(crate) fn take_result(&mut self) -> Option<Result<Answer<D>, QueryError>> {
        self.x.take_result()
    }
}

/// The [`QueryDriver`] of a stream machine whose engine ([`Stream`]) is its field `s`,
/// for `$machine` with `$details`: everything but the protocol's own three steps, which
/// the machine has as inherent methods: `connected(&mut self, now)` (the connection is
/// up: write the first request, or wait for a banner), `parse(&mut self, now)` (consume
/// every whole frame the engine holds) and `awaited(&self) -> &'static str` (what a
/// close before the answer truncates). Received bytes are taken as far as the engine's
/// cap leaves room, parsed, and the rest taken after, so any chunking reads alike. A
/// third argument, `|machine, now|`, is what a close by the server does instead (a reply
/// that ends at the close).
macro_rules! stream_driver {
    ($machine:ty, $details:ty) => {
        $crate::client_stream::stream_driver!($machine, $details, |m: &mut $machine, _now| {
            let what = m.awaited();
            m.s.fail_truncated(what);
        });
    };
    ($machine:ty, $details:ty, $on_close:expr) => {
        impl $crate::client_core::QueryDriver for $machine {
            type Details = $details;

            fn poll_transmit_into(&mut self, _now: std::time::Instant, out: &mut Vec<u8>) -> bool {
                self.s.poll_transmit_into(out)
            }

            fn handle_datagram(&mut self, _now: std::time::Instant, datagram: &[u8]) {
                self.s
                    .x
                    .dropped(datagram.len(), "a stream protocol takes no datagrams");
            }

            fn poll_timeout(&self) -> Option<std::time::Instant> {
                self.s.poll_timeout()
            }

            fn handle_timeout(&mut self, now: std::time::Instant) {
                if let Some(which) = self.s.expired(now) {
                    self.s.time_out(which);
                }
            }

            fn take_result(
                &mut self,
            ) -> Option<
                Result<$crate::client_core::Answer<$details>, $crate::client_core::QueryError>,
            > {
                self.s.take_result()
            }

            fn transport(&self) -> $crate::client_core::Transport {
                $crate::client_core::Transport::Stream
            }

            fn handle_stream(
                &mut self,
                now: std::time::Instant,
                event: $crate::client_core::StreamEvent<'_>,
            ) {
                use $crate::client_core::StreamEvent;
                if self.s.is_done() {
                    return;
                }
                match event {
                    StreamEvent::Connected(_) => self.connected(now),
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
                        ($on_close)(self, now);
                    }
                    StreamEvent::Failed(e) => self.s.failed(e),
                }
            }

            fn close_due(&self) -> bool {
                self.s.close_due()
            }

            fn stream_buffer(&self, more: usize) -> usize {
                self.s.buffer_after(more)
            }
        }
    };
}
pub(crate) use stream_driver;

/// Test support for the stream machines.
#[cfg(test)]
pub(crate) mod testing {
    use std::net::SocketAddr;
    use std::time::{Duration, Instant};

    use crate::client_core::{QueryDriver, StreamEvent, Timing};

    /// Connects `m` at `t0` (to loopback `port`) and returns what it writes at once.
    pub(crate) fn connect<M: QueryDriver>(m: &mut M, t0: Instant, port: u16) -> Vec<u8> {
        m.handle_stream(
            t0,
            StreamEvent::Connected(SocketAddr::from(([127, 0, 0, 1], port))),
        );
        let mut out = Vec::new();
        m.poll_transmit_into(t0, &mut out);
        out
    }

    /// Feeds `m` one byte of `drip` every 500 ms, just inside its read timer, until it
    /// ends; asserts that it ended within the total timer, holding at most `cap` bytes.
    pub(crate) fn drip_to_the_end<M: QueryDriver>(m: &mut M, t0: Instant, drip: u8, cap: usize) {
        let (mut now, mut drips) = (t0, 0);
        while m.take_result().is_none() {
            let due = m.poll_timeout().expect("a timer while the query runs");
            let next = now + Duration::from_millis(500);
            if next < due {
                now = next;
                m.handle_stream(now, StreamEvent::Received(&[drip]));
                drips += 1;
                assert!(m.stream_buffer(0) <= cap);
            } else {
                now = due;
                m.handle_timeout(now);
            }
            assert!(drips < 10_000);
        }
        let total = Timing::default().total_timeout;
        assert!(now.duration_since(t0) <= total, "{:?}", now - t0);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A frame just under the cap, read 4 KiB at a time, never makes the buffer grow
    /// past the cap (a doubling `Vec` went from 65,536 to 131,072 for a cap of
    /// 98,326), and the size the I/O code is told beforehand is the size it gets.
    #[test]
    fn the_input_buffer_never_grows_past_its_cap() {
        let cap = 98_326;
        let now = Instant::now();
        let mut s: Stream<()> = Stream::new(Protocol::Minecraft, &Timing::default(), now, cap);
        assert_eq!(s.buffer_after(0), 0);
        let chunk = [7u8; 4096];
        let mut most = 0;
        while s.end_offset() < cap - 1 {
            let n = chunk.len().min(cap - 1 - s.end_offset());
            let told = s.buffer_after(n);
            let rest = s.take_some(now, &chunk[..n]).unwrap();
            assert!(rest.is_empty());
            assert_eq!(s.input.capacity(), told, "at {}", s.end_offset());
            assert!(s.input.capacity() <= cap, "{} > {cap}", s.input.capacity());
            most = most.max(s.input.capacity());
        }
        assert_eq!(most, cap);
        // Parsed and consumed whole: the buffer goes back.
        s.consume(cap - 1);
        assert_eq!(s.buffer_after(0), 0);
        // A small reply afterwards takes a small buffer.
        assert_eq!(s.buffer_after(10), MIN_INPUT);
        assert_eq!(s.buffer_after(1000), 1000);
    }
}
