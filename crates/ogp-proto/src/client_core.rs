//! The shared client core, below the protocols: what every protocol's client state
//! machine does the same way, so that each protocol keeps only its own wire logic.
//!
//! * [`Timing`]: attempt timeout, backoff, retries, total deadline and the cap on
//!   challenge resends, the same for every protocol; retries adapt to what the server
//!   has shown (see below);
//! * [`Answer`]: one result type (protocol, address, ping, datagrams and bytes, status,
//!   warnings, wire events, and the protocol's own details);
//! * [`QueryError`]: one error type, sorted by fault ([`Fault`]);
//! * [`Event`]: what happened on the wire, for `-v` output;
//! * [`QueryDriver`]: the interface every machine offers to the I/O code that drives it;
//! * `Exchange` (crate-private): the retry and challenge-resend engine and the result
//!   bookkeeping each machine embeds.
//!
//! Retries adapt to the server. While it has sent nothing, each step has
//! [`Timing::retries`] retries, [`Timing::attempt_timeout`] apart and growing by
//! [`Timing::backoff_percent`]: a dead target costs that and no more. Once it has sent
//! anything of its protocol (a challenge, a reply), it is alive: each step then has
//! [`Timing::alive_retries`] retries within the total deadline, and each attempt waits
//! for the server's measured round trip (smoothed as TCP does, RFC 6298: the mean plus
//! four deviations, at least [`MIN_ALIVE_TIMEOUT`], growing by the backoff per retry)
//! instead of the fixed timeout, never longer than the fixed one. Only round trips of
//! first sends are measured (a reply to a resent request may answer either, Karn's
//! rule).
//!
//! Nothing here does I/O, reads a clock or panics: time is passed in.

use std::fmt;
use std::net::SocketAddr;
use std::time::{Duration, Instant};

use crate::error::{DecodeError, DecodeErrorKind};
use crate::protocol::Protocol;
use crate::Status;

pub use crate::protocol::Transport;

/// What happened to a stream machine's connection, for [`QueryDriver::handle_stream`].
#[derive(Debug, Clone, Copy)]
#[non_exhaustive]
pub enum StreamEvent<'a> {
    /// The connection is up; the peer's address.
    Connected(SocketAddr),
    /// Bytes read from the connection, in any chunking.
    Received(&'a [u8]),
    /// The server closed its side (end of stream).
    Closed,
    /// The connection could not be made, or broke.
    Failed(&'a std::io::Error),
}

/// How a stream machine wants its connection wrapped in TLS
/// ([`QueryDriver::tls`]): the networking layer does the handshake after connecting and
/// before [`StreamEvent::Connected`], within the connect timeout; the machine sees only
/// the plaintext.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct TlsRequest {
    /// The name the certificate must be for (and the SNI); `None`: the peer's address.
    pub server_name: Option<String>,
    /// Accept any certificate (a self-signed one): the connection is encrypted but the
    /// server not authenticated.
    pub insecure: bool,
}

/// The interface every protocol's client state machine offers, so that one piece of I/O
/// code (a tokio task, an engine's loop, a scanner) can drive any of them.
///
/// The contract, for a machine `m`:
/// 1. send every datagram [`QueryDriver::poll_transmit`] returns, until it returns `None`
///    (or [`QueryDriver::poll_transmit_into`], which reuses the caller's buffer, until it
///    returns `false`);
/// 2. feed every datagram from the queried address to [`QueryDriver::handle_datagram`];
/// 3. call [`QueryDriver::handle_timeout`] once [`QueryDriver::poll_timeout`] has passed;
/// 4. stop when [`QueryDriver::take_result`] returns `Some`.
///
/// Machines take time as a parameter and never block, panic or do I/O.
pub trait QueryDriver {
    /// The protocol's own details of an answer.
    type Details;

    /// Writes the next datagram to send now, if any, into `out` (cleared first): true
    /// when there is one. A scanner sending thousands of datagrams a second reuses its
    /// buffers through this.
    fn poll_transmit_into(&mut self, now: Instant, out: &mut Vec<u8>) -> bool;

    /// The next datagram to send now, if any, in a buffer of its own.
    fn poll_transmit(&mut self, now: Instant) -> Option<Vec<u8>> {
        // Room for the usual query without growing (longer ones grow it).
        let mut d = Vec::with_capacity(64);
        self.poll_transmit_into(now, &mut d).then_some(d)
    }

    /// A datagram from the queried address.
    fn handle_datagram(&mut self, now: Instant, datagram: &[u8]);

    /// When [`handle_timeout`](Self::handle_timeout) is due (`None` when done).
    fn poll_timeout(&self) -> Option<Instant>;

    /// Advances timers.
    fn handle_timeout(&mut self, now: Instant);

    /// The result, once; `None` while the query runs.
    fn take_result(&mut self) -> Option<Result<Answer<Self::Details>, QueryError>>;

    /// How this machine's bytes travel (default: datagrams). A stream machine is
    /// connected first and driven with [`handle_stream`](Self::handle_stream) instead
    /// of [`handle_datagram`](Self::handle_datagram); see [`crate::client::Transport`].
    fn transport(&self) -> Transport {
        Transport::Datagram
    }

    /// Stream machines: what happened to the connection (connected, bytes read, closed,
    /// failed). Datagram machines ignore it.
    fn handle_stream(&mut self, now: Instant, event: StreamEvent<'_>) {
        let _ = (now, event);
    }

    /// Stream machines: whether the connection should be closed now (the machine is done
    /// with it). Datagram machines never ask.
    fn close_due(&self) -> bool {
        false
    }

    /// Why the last datagram from the server that this machine did not take was dropped
    /// (`"wrong challenge (not the one we sent)"`, `"not the reply to the current step"`…), if one was:
    /// what tells a server that answered wrongly from one that never answered.
    fn last_dropped(&self) -> Option<&'static str> {
        None
    }

    /// Stream machines: whether the connection is wrapped in TLS, and how (default: it
    /// is not).
    fn tls(&self) -> Option<TlsRequest> {
        None
    }

    /// Stream machines: the bytes of memory the machine would hold for received input
    /// after taking `more` bytes now (its input buffer's capacity: it grows by exact
    /// reservations, never past the protocol's cap). The I/O code charges it to a byte
    /// budget shared by many connections before handing the bytes over, and gives
    /// back what `stream_buffer(0)` says is no longer held. Datagram machines hold
    /// nothing between datagrams: 0.
    fn stream_buffer(&self, more: usize) -> usize {
        let _ = more;
        0
    }

    /// Whether the server has sent anything of this machine's protocol (a challenge, a
    /// reply, a part of one) that the machine took: what a probe asks
    /// ([`Machine::probe`](crate::client::Machine::probe)). Default: false (a machine
    /// that does not tell is queried in full).
    fn heard_from(&self) -> bool {
        false
    }
}

/// The [`QueryDriver`] methods every machine answers from its `Exchange` (a field `x`):
/// `poll_timeout`, `take_result` and `last_dropped` (with `results`: the last two only, for
/// a machine with timers of its own), and with `give_up_on_timeout` a `handle_timeout`
/// that gives up when the timers say so.
macro_rules! exchange_driver {
    () => {
        fn poll_timeout(&self) -> Option<std::time::Instant> {
            self.x.poll_timeout()
        }

        $crate::client_core::exchange_driver!(results);
    };
    (results) => {
        fn take_result(
            &mut self,
        ) -> Option<
            Result<$crate::client_core::Answer<Self::Details>, $crate::client_core::QueryError>,
        > {
            self.x.take_result()
        }

        fn last_dropped(&self) -> Option<&'static str> {
            self.x.last_dropped()
        }

        fn heard_from(&self) -> bool {
            self.x.timer.is_alive()
        }
    };
    (give_up_on_timeout) => {
        $crate::client_core::exchange_driver!();

        fn handle_timeout(&mut self, now: std::time::Instant) {
            if self.x.handle_timeout(now) == Some($crate::client_core::Timeout::GiveUp) {
                self.x.give_up(None);
            }
        }
    };
}
pub(crate) use exchange_driver;

/// Timers, retries and the challenge-resend cap of one query, the same for every
/// protocol.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub struct Timing {
    /// Time to wait for a reply before sending again (default 1 s).
    pub attempt_timeout: Duration,
    /// Growth of the attempt timeout per retry, in percent, at least 100 (default 150).
    pub backoff_percent: u32,
    /// Retries of each step after its first attempt (default 2).
    pub retries: u32,
    /// Deadline of the whole query (default 5 s).
    pub total_timeout: Duration,
    /// Challenge (or token) replies followed in all before the query gives up as a
    /// challenge loop (default 5). Following one does not use up a retry.
    pub max_challenges: u32,
    /// Retries of each step once the server has sent anything of its protocol (default
    /// 8), timed from its round trip; [`retries`](Self::retries) when larger. The total
    /// deadline still ends the query.
    pub alive_retries: u32,
    /// Stream protocols (TCP): time to wait for the connection (default 5 s).
    pub connect_timeout: Duration,
    /// Stream protocols: the longest silence while a reply is awaited; every byte read
    /// restarts it (default 5 s). A server that drips bytes is still cut off by
    /// [`total_timeout`](Self::total_timeout).
    pub read_timeout: Duration,
}

impl Default for Timing {
    fn default() -> Self {
        Self {
            attempt_timeout: Duration::from_secs(1),
            backoff_percent: 150,
            retries: 2,
            total_timeout: Duration::from_secs(5),
            max_challenges: 5,
            alive_retries: 8,
            connect_timeout: Duration::from_secs(5),
            read_timeout: Duration::from_secs(5),
        }
    }
}

impl Timing {
    /// The default timing with this attempt timeout and retries, and a total deadline
    /// that leaves room for every attempt of `steps` steps with their backoff.
    pub fn with_attempts(attempt_timeout: Duration, retries: u32, steps: u32) -> Self {
        let mut t = Self {
            attempt_timeout,
            retries,
            ..Self::default()
        };
        t.total_timeout = t.attempts_total().saturating_mul(steps.max(1));
        t
    }

    /// With this attempt timeout.
    #[must_use]
    pub fn attempt_timeout(mut self, d: Duration) -> Self {
        self.attempt_timeout = d;
        self
    }

    /// With this backoff, in percent.
    #[must_use]
    pub fn backoff_percent(mut self, p: u32) -> Self {
        self.backoff_percent = p;
        self
    }

    /// With this many retries per step.
    #[must_use]
    pub fn retries(mut self, n: u32) -> Self {
        self.retries = n;
        self
    }

    /// With this total deadline.
    #[must_use]
    pub fn total_timeout(mut self, d: Duration) -> Self {
        self.total_timeout = d;
        self
    }

    /// With this cap on challenge resends.
    #[must_use]
    pub fn max_challenges(mut self, n: u32) -> Self {
        self.max_challenges = n;
        self
    }

    /// With this many retries per step once the server has sent anything.
    #[must_use]
    pub fn alive_retries(mut self, n: u32) -> Self {
        self.alive_retries = n;
        self
    }

    /// With this connect timeout (stream protocols).
    #[must_use]
    pub fn connect_timeout(mut self, d: Duration) -> Self {
        self.connect_timeout = d;
        self
    }

    /// With this read timeout (stream protocols).
    #[must_use]
    pub fn read_timeout(mut self, d: Duration) -> Self {
        self.read_timeout = d;
        self
    }

    /// The time every attempt of one step takes when none is answered: the attempt
    /// timeout, grown by the backoff per retry.
    pub fn attempts_total(&self) -> Duration {
        let mut total = Duration::ZERO;
        let mut t = self.attempt_timeout;
        for _ in 0..=self.retries.min(64) {
            total = total.saturating_add(t);
            t = grow(t, self.backoff_percent);
        }
        total
    }
}

/// The shortest attempt timeout of a server that has answered, however short its round
/// trip: game servers answer queries from their main loop, a tick (15–100 ms) later, and
/// a busy scanner reads late. Against round trips of 40–400 ms at random, a lossless scan
/// sent 0.7–0.9 % more datagrams than with fixed timeouts (with 100 ms, up to 4.1 %).
pub const MIN_ALIVE_TIMEOUT: Duration = Duration::from_millis(250);

pub(crate) fn grow(t: Duration, percent: u32) -> Duration {
    let grown = t.as_millis() * u128::from(percent.max(100)) / 100;
    Duration::from_millis(u64::try_from(grown).unwrap_or(u64::MAX))
}

/// A server's answer, whatever the protocol.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub struct Answer<D> {
    /// The protocol that answered.
    pub protocol: Protocol,
    /// The address that answered, when the I/O layer that drove the query set it.
    pub addr: Option<SocketAddr>,
    /// Round trip of the request that got the first reply, in milliseconds.
    pub ping_ms: f64,
    /// Datagrams of the answer.
    pub datagrams: usize,
    /// Bytes of those datagrams.
    pub bytes: usize,
    /// The server's status in the shared model.
    pub status: Status,
    /// What did not stop decoding but is worth saying (lossy text, missing parts), one
    /// line each, at most [`MAX_WARNINGS`].
    pub warnings: Vec<String>,
    /// What happened on the wire, at most [`MAX_EVENTS`].
    pub events: Vec<Event>,
    /// The protocol's own details (challenges, raw replies, ids).
    pub details: D,
}

impl<D> Answer<D> {
    /// An answer of `protocol` with this status and details, and nothing counted yet
    /// (for tools that build answers themselves, and tests).
    pub fn new(protocol: Protocol, status: Status, details: D) -> Self {
        Self {
            protocol,
            addr: None,
            ping_ms: 0.0,
            datagrams: 0,
            bytes: 0,
            status,
            warnings: Vec::new(),
            events: Vec::new(),
            details,
        }
    }

    /// The same answer with other details.
    pub fn map_details<E>(self, f: impl FnOnce(D) -> E) -> Answer<E> {
        Answer {
            protocol: self.protocol,
            addr: self.addr,
            ping_ms: self.ping_ms,
            datagrams: self.datagrams,
            bytes: self.bytes,
            status: self.status,
            warnings: self.warnings,
            events: self.events,
            details: f(self.details),
        }
    }
}

/// Most warnings kept per query.
pub const MAX_WARNINGS: usize = 64;
/// Most wire events recorded per query.
pub const MAX_EVENTS: usize = 64;
/// Events the first allocation of a query's event list holds.
const EVENTS_FIRST_ROOM: usize = 8;

/// Something that happened on the wire, for tools that show it (`ogp query -v`). It
/// prints as one line, an arrow first (`→` sent, `←` received).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum Event {
    /// A datagram was sent.
    Sent {
        /// What it asks (`query`, `A2S_INFO`, `0x09 challenge request`…).
        what: &'static str,
        /// Size in bytes.
        bytes: usize,
        /// The challenge it carried, if the protocol has one (`None`: none sent).
        challenge: Option<u32>,
        /// Its request or session id, if the protocol has one.
        id: Option<u32>,
    },
    /// The server gave a challenge (or a token) to send again with.
    Challenge {
        /// Size of the datagram.
        bytes: usize,
        /// The value, when it is a number.
        challenge: Option<u32>,
    },
    /// A part of a multi-datagram reply arrived.
    Part {
        /// Size in bytes.
        bytes: usize,
        /// Its number (from 0), when the protocol numbers them.
        number: Option<u8>,
        /// How many there are, when the protocol says.
        count: Option<u8>,
    },
    /// A reply (or one step's reply) is complete.
    Reply {
        /// The step it answers.
        what: &'static str,
        /// Its size in bytes.
        bytes: usize,
        /// Datagrams it came in.
        datagrams: usize,
    },
    /// A step got no reply in time and was left out.
    Skipped {
        /// The step.
        what: &'static str,
    },
    /// A change of course (for example asking without a challenge).
    Note(&'static str),
    /// A datagram was dropped.
    Dropped {
        /// Size in bytes.
        bytes: usize,
        /// Why.
        why: &'static str,
    },
}

impl fmt::Display for Event {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match *self {
            Self::Sent {
                what,
                bytes,
                challenge,
                id,
            } => {
                write!(f, "→ {what} {bytes} B")?;
                match (challenge, id) {
                    (Some(c), Some(i)) => write!(f, " (challenge {c:#010x}, id {i:#010x})"),
                    (Some(c), None) => write!(f, " (challenge {c:#010x})"),
                    (None, Some(i)) => write!(f, " (id {i:#010x})"),
                    (None, None) => Ok(()),
                }
            }
            Self::Challenge { bytes, challenge } => match challenge {
                Some(c) => write!(f, "← {bytes} B: challenge {c:#010x}"),
                None => write!(f, "← {bytes} B: new token"),
            },
            Self::Part {
                bytes,
                number,
                count,
            } => match (number, count) {
                (Some(n), Some(c)) => write!(f, "← part {}/{c} {bytes} B", u16::from(n) + 1),
                (Some(n), None) => write!(f, "← part {} {bytes} B", u16::from(n) + 1),
                _ => write!(f, "← part {bytes} B"),
            },
            Self::Reply {
                what,
                bytes,
                datagrams,
            } => write!(
                f,
                "← {what} reply {bytes} B in {datagrams} datagram{}",
                if datagrams == 1 { "" } else { "s" }
            ),
            Self::Skipped { what } => write!(f, "✗ no reply to {what}: left out"),
            Self::Note(n) => write!(f, "· {n}"),
            Self::Dropped { bytes, why } => write!(f, "← dropped {bytes} B ({why})"),
        }
    }
}

/// Whose fault a failed query is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum Fault {
    /// Nothing came back: the host is down, nothing listens, or everything was lost.
    Network,
    /// The server answered, but said no or answered wrongly.
    Server,
    /// Our side: the address, a socket, the options.
    Local,
}

impl Fault {
    /// Its name in JSON and logs: `network`, `server` or `local`.
    pub fn name(self) -> &'static str {
        match self {
            Self::Network => "network",
            Self::Server => "server",
            Self::Local => "local",
        }
    }
}

/// How a server said no.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum Rejection {
    /// The server answered with an error code of its protocol.
    Error {
        /// The code.
        code: u32,
        /// What the code means.
        meaning: String,
    },
    /// The server kept answering with new challenges (or rejecting the tokens it gave).
    ChallengeLoop,
    /// The server rejected our credentials.
    AuthFailed,
    /// The server does not offer authentication.
    AuthUnsupported {
        /// The code it answered with.
        code: u32,
    },
}

impl fmt::Display for Rejection {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Error { code, meaning } => {
                write!(f, "server answered with error {code} ({meaning})")
            }
            Self::ChallengeLoop => f.write_str("server keeps answering with new challenges"),
            Self::AuthFailed => f.write_str("server rejected the credentials"),
            Self::AuthUnsupported { code } => {
                write!(f, "server does not offer authentication ({code})")
            }
        }
    }
}

/// Why a query failed, grouped by cause ([`QueryError::fault`]).
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum QueryError {
    /// No usable answer before the deadline.
    NoAnswer {
        /// The protocol asked.
        protocol: Protocol,
        /// The step that got no reply, for protocols of several steps.
        step: Option<&'static str>,
        /// Datagrams sent in all.
        attempts: u32,
    },
    /// A stream protocol's timer ran out: the connection did not come up, the server
    /// was silent too long, or the whole query took too long (a server that drips its
    /// bytes).
    StreamTimeout {
        /// The protocol asked.
        protocol: Protocol,
        /// What was awaited (`the connection`, `status response`…).
        waiting_for: &'static str,
        /// Which timer: `connect`, `read` or `total`.
        timer: &'static str,
        /// Bytes the server had sent.
        received: usize,
    },
    /// The server's host said nothing listens on that port (ICMP port unreachable, or a
    /// refused TCP connection).
    Refused {
        /// The protocol asked, when one was.
        protocol: Option<Protocol>,
    },
    /// The server answered and said no.
    Rejected {
        /// The protocol.
        protocol: Protocol,
        /// How.
        reason: Rejection,
    },
    /// The server's answer did not decode: the field and byte offset.
    Malformed {
        /// The protocol.
        protocol: Protocol,
        /// What was wrong, where.
        error: DecodeError,
    },
    /// The server's multi-datagram answer did not fit together (inconsistent, too large,
    /// a failed checksum).
    BadReassembly {
        /// The protocol.
        protocol: Protocol,
        /// What was wrong.
        message: String,
    },
    /// The target is not `host:port`, or the host did not resolve.
    Resolve {
        /// The target as given.
        target: String,
    },
    /// A local socket error (for example no IPv6 on this host).
    Socket {
        /// What the system said.
        message: String,
    },
    /// The options ask for nothing this protocol can send, or are out of range.
    Options {
        /// What is wrong.
        message: &'static str,
    },
    /// Auto-detection: no protocol heard anything from the server. What was tried over
    /// each transport: the datagram protocols asked (none answered) and what became of
    /// each stream protocol's connection.
    Undetected {
        /// The datagram protocols asked, in the order their probes went out.
        datagram: Vec<Protocol>,
        /// The stream protocols tried, and what became of each connection.
        stream: Vec<(Protocol, StreamFate)>,
    },
}

/// What became of an auto-detection connection that brought no answer
/// ([`QueryError::Undetected`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum StreamFate {
    /// Refused: nothing listens on that TCP port.
    Refused,
    /// The connection did not come up in time.
    NoConnection,
    /// Accepted, then closed before the server sent a byte.
    Closed,
    /// Accepted, then silent until the timers ran out.
    Silent,
    /// Broke (a socket error).
    Failed,
}

impl StreamFate {
    /// What an auto-detection connection's error says of it (`None`: the server sent
    /// something, so the error is the protocol's own).
    pub fn of(e: &QueryError) -> Option<Self> {
        Some(match e {
            QueryError::Refused { .. } => Self::Refused,
            QueryError::StreamTimeout {
                received: 0, timer, ..
            } if *timer == "connect" => Self::NoConnection,
            QueryError::StreamTimeout { received: 0, .. } => Self::Silent,
            QueryError::Socket { .. } => Self::Failed,
            // A machine that sees the connection close before a byte says truncated at
            // offset 0.
            QueryError::Malformed { error, .. }
                if error.offset == 0 && matches!(error.kind, DecodeErrorKind::Truncated { .. }) =>
            {
                Self::Closed
            }
            _ => return None,
        })
    }
}

impl QueryError {
    /// Whose fault it is.
    pub fn fault(&self) -> Fault {
        match self {
            Self::NoAnswer { .. } | Self::Refused { .. } | Self::Undetected { .. } => {
                Fault::Network
            }
            // A server that sent part of an answer and stalled is at fault.
            Self::StreamTimeout { received, .. } if *received > 0 => Fault::Server,
            Self::StreamTimeout { .. } => Fault::Network,
            Self::Rejected { .. } | Self::Malformed { .. } | Self::BadReassembly { .. } => {
                Fault::Server
            }
            Self::Resolve { .. } | Self::Socket { .. } | Self::Options { .. } => Fault::Local,
        }
    }

    /// A short name of the cause, for JSON and logs: `timeout`, `refused`, `rejected`,
    /// `malformed`, `resolve`, `socket` or `options`.
    pub fn kind(&self) -> &'static str {
        match self {
            Self::NoAnswer { .. } | Self::StreamTimeout { .. } | Self::Undetected { .. } => {
                "timeout"
            }
            Self::Refused { .. } => "refused",
            Self::Rejected { .. } => "rejected",
            Self::Malformed { .. } | Self::BadReassembly { .. } => "malformed",
            Self::Resolve { .. } => "resolve",
            Self::Socket { .. } => "socket",
            Self::Options { .. } => "options",
        }
    }

    /// Whether no answer came at all.
    pub fn is_timeout(&self) -> bool {
        matches!(
            self,
            Self::NoAnswer { .. } | Self::StreamTimeout { .. } | Self::Undetected { .. }
        )
    }

    /// The protocol whose query failed, when one did.
    pub fn protocol(&self) -> Option<Protocol> {
        match self {
            Self::NoAnswer { protocol, .. }
            | Self::StreamTimeout { protocol, .. }
            | Self::Rejected { protocol, .. }
            | Self::Malformed { protocol, .. }
            | Self::BadReassembly { protocol, .. } => Some(*protocol),
            Self::Refused { protocol } => *protocol,
            Self::Resolve { .. }
            | Self::Socket { .. }
            | Self::Options { .. }
            | Self::Undetected { .. } => None,
        }
    }

    /// A socket error from the system's message.
    pub fn socket(e: &std::io::Error) -> Self {
        if e.kind() == std::io::ErrorKind::ConnectionRefused {
            Self::Refused { protocol: None }
        } else {
            Self::Socket {
                message: e.to_string(),
            }
        }
    }
}

impl fmt::Display for QueryError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::NoAnswer {
                protocol,
                step,
                attempts,
            } => {
                write!(f, "{protocol}: no answer")?;
                if let Some(s) = step {
                    write!(f, " to {s}")?;
                }
                write!(
                    f,
                    " (timed out after {attempts} datagram{} sent)",
                    if *attempts == 1 { "" } else { "s" }
                )
            }
            Self::StreamTimeout {
                protocol,
                waiting_for,
                timer,
                received,
            } => write!(
                f,
                "{protocol}: timed out waiting for {waiting_for} ({timer} timeout, {received} byte{} received)",
                if *received == 1 { "" } else { "s" }
            ),
            Self::Refused { protocol } => {
                if let Some(p) = protocol {
                    write!(f, "{p}: ")?;
                }
                f.write_str("connection refused (nothing listens on that port)")
            }
            Self::Rejected { protocol, reason } => write!(f, "{protocol}: {reason}"),
            Self::Malformed { protocol, error } => {
                write!(f, "{protocol}: malformed reply: {error}")
            }
            Self::BadReassembly { protocol, message } => {
                write!(f, "{protocol}: bad multi-datagram reply: {message}")
            }
            Self::Resolve { target } => write!(f, "cannot resolve {target}"),
            Self::Socket { message } => write!(f, "socket error: {message}"),
            Self::Options { message } => write!(f, "bad options: {message}"),
            Self::Undetected { datagram, stream } => {
                let mut sep = "";
                if !datagram.is_empty() {
                    f.write_str("no answer over UDP (")?;
                    for (i, p) in datagram.iter().enumerate() {
                        write!(f, "{}{}", if i > 0 { ", " } else { "" }, p.label())?;
                    }
                    f.write_str(")")?;
                    sep = "; ";
                }
                for (p, fate) in stream {
                    let p = p.label();
                    write!(f, "{sep}TCP: ")?;
                    match fate {
                        StreamFate::Refused => write!(f, "refused (no {p})"),
                        StreamFate::NoConnection => write!(f, "no connection in time (no {p})"),
                        StreamFate::Closed => write!(f, "closed before a {p} status"),
                        StreamFate::Silent => write!(f, "connected, then no {p} status in time"),
                        StreamFate::Failed => write!(f, "the connection failed (no {p})"),
                    }?;
                    sep = "; ";
                }
                if sep.is_empty() {
                    f.write_str("no protocol answered")?;
                }
                Ok(())
            }
        }
    }
}

impl std::error::Error for QueryError {}

/// What [`AttemptTimer::handle_timeout`] decided.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Timeout {
    /// The attempt timed out and a retry is left: a resend is now due.
    Resend,
    /// Stop waiting.
    GiveUp,
}

/// Attempt and total timers, retries and backoff of one query: a datagram is sent when
/// one is due; each attempt waits `attempt_timeout`, which grows by `backoff_percent`
/// with every retry; after `retries` retries, or when the total deadline passes, the
/// query gives up. A resend asked for by the protocol (a new challenge or token) is due
/// at once and does not use up a retry. Once the server has been heard from
/// ([`heard`](Self::heard)), a step has `alive_retries` retries and each attempt waits
/// for the measured round trip (see the module's documentation).
#[derive(Debug, Clone)]
pub(crate) struct AttemptTimer {
    initial_timeout: Duration,
    attempt_timeout: Duration,
    backoff_percent: u32,
    retries: u32,
    alive_retries: u32,
    retries_used: u32,
    send_now: bool,
    attempt_deadline: Option<Instant>,
    deadline: Instant,
    sent_at: Option<Instant>,
    /// The server has sent something of its protocol.
    alive: bool,
    /// Retries of the current step used before it was heard from.
    retries_before_alive: u32,
    /// Smoothed round trip and its mean deviation (RFC 6298), once measured.
    srtt: Option<Duration>,
    rttvar: Duration,
    /// The due send is a retry after a timeout (its round trip cannot be measured).
    retry_due: bool,
    /// The last send was a first send, not yet answered: its round trip can be measured.
    timing_send: bool,
}

impl AttemptTimer {
    /// Timers of a query starting at `now`, with a first datagram due at once.
    pub(crate) fn new(now: Instant, t: &Timing) -> Self {
        Self {
            initial_timeout: t.attempt_timeout,
            attempt_timeout: t.attempt_timeout,
            backoff_percent: t.backoff_percent,
            retries: t.retries,
            alive_retries: t.alive_retries,
            retries_used: 0,
            send_now: true,
            attempt_deadline: None,
            deadline: now.checked_add(t.total_timeout).unwrap_or(now),
            sent_at: None,
            alive: false,
            retries_before_alive: 0,
            srtt: None,
            rttvar: Duration::ZERO,
            retry_due: false,
            timing_send: false,
        }
    }

    /// Whether a datagram is due.
    pub(crate) fn send_due(&self) -> bool {
        self.send_now
    }

    /// Records that a datagram was sent at `now`: the attempt timer starts.
    pub(crate) fn sent(&mut self, now: Instant) {
        self.send_now = false;
        self.sent_at = Some(now);
        self.timing_send = !self.retry_due;
        self.retry_due = false;
        self.attempt_deadline = now.checked_add(self.current_timeout());
    }

    /// The server sent something of its protocol at `now` (a challenge, a reply, a part
    /// of one): it is alive, and the round trip of a first send is measured.
    pub(crate) fn heard(&mut self, now: Instant) {
        if !self.alive {
            self.alive = true;
            self.retries_before_alive = self.retries_used;
        }
        if !self.timing_send {
            return;
        }
        self.timing_send = false;
        let Some(sent) = self.sent_at else { return };
        let r = now.saturating_duration_since(sent);
        match self.srtt {
            None => {
                self.srtt = Some(r);
                self.rttvar = r / 2;
            }
            Some(s) => {
                let dev = s.abs_diff(r);
                self.rttvar = (self.rttvar * 3 + dev) / 4;
                self.srtt = Some((s * 7 + r) / 8);
            }
        }
    }

    /// Whether the server has sent anything of its protocol.
    pub(crate) fn is_alive(&self) -> bool {
        self.alive
    }

    /// How long the attempt about to be sent waits: the fixed timeout (grown by the
    /// retries so far) until the server's round trip is known; then that round trip's
    /// timeout (at least [`MIN_ALIVE_TIMEOUT`]), grown by the backoff per retry since
    /// the server was heard from, never longer than the first attempt's.
    fn current_timeout(&self) -> Duration {
        let Some(srtt) = self.srtt.filter(|_| self.alive) else {
            return self.attempt_timeout;
        };
        let mut rto = srtt
            .saturating_add(self.rttvar.saturating_mul(4))
            .max(MIN_ALIVE_TIMEOUT);
        let grown = self.retries_used.saturating_sub(self.retries_before_alive);
        for _ in 0..grown.min(64) {
            if rto >= self.initial_timeout {
                break;
            }
            rto = grow(rto, self.backoff_percent);
        }
        rto.min(self.initial_timeout)
    }

    /// Retries of the current step: more once the server has shown it is alive.
    fn retry_limit(&self) -> u32 {
        if self.alive {
            self.retries.max(self.alive_retries)
        } else {
            self.retries
        }
    }

    /// Makes a resend due at once, without using up a retry (a new challenge or token).
    pub(crate) fn resend_now(&mut self) {
        self.send_now = true;
        self.attempt_deadline = None;
    }

    /// Stops: nothing due, no attempt timer (the total deadline stays).
    pub(crate) fn stop(&mut self) {
        self.send_now = false;
        self.attempt_deadline = None;
    }

    /// Restarts the wait of the current attempt at `now` without a send: requests that
    /// went out earlier (with the previous step's attempt) are awaited as if sent now,
    /// for this step's timeout. No round trip is measured from it.
    pub(crate) fn rearm(&mut self, now: Instant) {
        self.send_now = false;
        self.timing_send = false;
        self.attempt_deadline = now.checked_add(self.current_timeout());
    }

    /// Gives the next step of a query fresh retries and the initial attempt timeout.
    pub(crate) fn restart_retries(&mut self) {
        self.retries_used = 0;
        self.retries_before_alive = 0;
        self.attempt_timeout = self.initial_timeout;
    }

    /// The total deadline.
    pub(crate) fn deadline(&self) -> Instant {
        self.deadline
    }

    /// Time from the last send to `now`, in milliseconds (0 before any send).
    pub(crate) fn rtt_ms(&self, now: Instant) -> f64 {
        let rtt = self
            .sent_at
            .map_or(Duration::ZERO, |s| now.saturating_duration_since(s));
        rtt.as_secs_f64() * 1000.0
    }

    /// When [`handle_timeout`](Self::handle_timeout) must be called next.
    pub(crate) fn poll_timeout(&self) -> Instant {
        match self.attempt_deadline {
            Some(a) => a.min(self.deadline),
            None => self.deadline,
        }
    }

    /// Whether the current attempt has run out at `now` (before the total deadline).
    pub(crate) fn attempt_expired(&self, now: Instant) -> bool {
        now < self.deadline && !self.send_now && self.attempt_deadline.is_some_and(|a| now >= a)
    }

    /// Advances the timers to `now`: None while waiting, else a resend (now due, with the
    /// attempt timeout grown) or giving up.
    pub(crate) fn handle_timeout(&mut self, now: Instant) -> Option<Timeout> {
        if now >= self.deadline {
            return Some(Timeout::GiveUp);
        }
        if self.attempt_deadline.is_none_or(|a| now < a) {
            return None;
        }
        if self.retries_used >= self.retry_limit() {
            return Some(Timeout::GiveUp);
        }
        self.retries_used += 1;
        self.attempt_timeout = grow(self.attempt_timeout, self.backoff_percent);
        self.resend_now();
        self.retry_due = true;
        Some(Timeout::Resend)
    }
}

/// The bookkeeping every client machine shares: timers and retries, the challenge-resend
/// cap, counts, ping, capped warnings and events, the last malformed datagram (reported
/// when nothing better came), and the result.
#[derive(Debug, Clone)]
pub(crate) struct Exchange<D> {
    protocol: Protocol,
    pub(crate) timer: AttemptTimer,
    max_challenges: u32,
    challenges: u32,
    sent: u32,
    datagrams: usize,
    bytes: usize,
    ping_ms: Option<f64>,
    warnings: Vec<String>,
    events: Vec<Event>,
    last_malformed: Option<DecodeError>,
    /// Why the last datagram of the server that was not taken was dropped.
    last_dropped: Option<&'static str>,
    done: bool,
    /// Boxed: a machine waiting for its answer (a scan holds thousands) does not carry
    /// the room of a whole status.
    result: Option<Box<Result<Answer<D>, QueryError>>>,
}

impl<D> Exchange<D> {
    /// A query of `protocol` starting at `now`.
    pub(crate) fn new(protocol: Protocol, timing: &Timing, now: Instant) -> Self {
        Self {
            protocol,
            timer: AttemptTimer::new(now, timing),
            max_challenges: timing.max_challenges,
            challenges: 0,
            sent: 0,
            datagrams: 0,
            bytes: 0,
            ping_ms: None,
            warnings: Vec::new(),
            events: Vec::new(),
            last_malformed: None,
            last_dropped: None,
            done: false,
            result: None,
        }
    }

    /// Whether the query has finished (its result may have been taken since).
    pub(crate) fn is_done(&self) -> bool {
        self.done
    }

    /// Whether any datagram was sent.
    #[cfg_attr(not(feature = "gqp"), allow(dead_code))]
    pub(crate) fn has_sent(&self) -> bool {
        self.sent > 0
    }

    /// Whether the timer has a datagram due.
    pub(crate) fn send_due(&self) -> bool {
        !self.done && self.timer.send_due()
    }

    /// Whether a datagram is due; if so `out` is cleared, to encode the query into (then
    /// [`sent`](Self::sent)).
    pub(crate) fn due_datagram(&self, out: &mut Vec<u8>) -> bool {
        let due = self.send_due();
        if due {
            out.clear();
        }
        due
    }

    /// Records a datagram sent at `now` as an attempt (the attempt timer starts).
    pub(crate) fn sent(&mut self, now: Instant, event: Event) {
        self.timer.sent(now);
        self.sent_extra(event);
    }

    /// Records the query datagram `d`, encoded after [`due_datagram`](Self::due_datagram),
    /// as an attempt sent at `now`: its [`Event::Sent`] says `what` it asks, its size and
    /// the `challenge` and `id` it carries.
    pub(crate) fn sent_query(
        &mut self,
        now: Instant,
        d: &[u8],
        what: &'static str,
        challenge: Option<u32>,
        id: Option<u32>,
    ) {
        let event = Event::Sent {
            what,
            bytes: d.len(),
            challenge,
            id,
        };
        self.sent(now, event);
    }

    /// Encodes a due query into `out` with `encode` and records it as an attempt sent
    /// at `now` ([`sent_query`](Self::sent_query)); false when none is due.
    pub(crate) fn transmit_query(
        &mut self,
        now: Instant,
        out: &mut Vec<u8>,
        what: &'static str,
        challenge: Option<u32>,
        encode: impl FnOnce(&mut Vec<u8>),
    ) -> bool {
        if !self.due_datagram(out) {
            return false;
        }
        encode(out);
        self.sent_query(now, out, what, challenge, None);
        true
    }

    /// When the current step of a query with `steps_left` steps (it included) gives way
    /// to the next: an equal share of the time left at `now`, so that a silent step does
    /// not starve the ones after it; `None` for the last step (it runs to the deadline).
    pub(crate) fn step_share(&self, now: Instant, steps_left: u32) -> Option<Instant> {
        let rest = self.timer.deadline().saturating_duration_since(now);
        (steps_left > 1)
            .then(|| now.checked_add(rest / steps_left))
            .flatten()
    }

    /// Records a datagram sent along with an attempt (no timer of its own).
    pub(crate) fn sent_extra(&mut self, event: Event) {
        self.sent = self.sent.saturating_add(1);
        self.event(event);
    }

    /// Records a wire event (up to [`MAX_EVENTS`]).
    pub(crate) fn event(&mut self, e: Event) {
        if self.events.len() < MAX_EVENTS {
            // Room for a first attempt of several datagrams (Cube 2's four) and a retry
            // in the first allocation: a retry then sends without allocating.
            if self.events.capacity() == 0 {
                self.events.reserve_exact(EVENTS_FIRST_ROOM);
            }
            self.events.push(e);
        }
    }

    /// Records a dropped datagram.
    pub(crate) fn dropped(&mut self, bytes: usize, why: &'static str) {
        self.last_dropped = Some(why);
        self.event(Event::Dropped { bytes, why });
    }

    /// Why the last datagram dropped was dropped ([`QueryDriver::last_dropped`]).
    pub(crate) fn last_dropped(&self) -> Option<&'static str> {
        self.last_dropped
    }

    /// Records warnings (up to [`MAX_WARNINGS`]).
    pub(crate) fn warn<W: fmt::Display>(&mut self, warnings: impl IntoIterator<Item = W>) {
        for w in warnings {
            if self.warnings.len() >= MAX_WARNINGS {
                break;
            }
            // The same thing noticed twice (in a resent reply, in two steps) is said once.
            let w = w.to_string();
            if !self.warnings.contains(&w) {
                self.warnings.push(w);
            }
        }
    }

    /// Remembers a datagram of this server that did not decode.
    pub(crate) fn malformed(&mut self, e: DecodeError) {
        self.last_malformed = Some(e);
    }

    /// Forgets the malformed datagram (a new step starts).
    pub(crate) fn clear_malformed(&mut self) {
        self.last_malformed = None;
    }

    /// Counts datagrams and bytes of the answer.
    pub(crate) fn received(&mut self, datagrams: usize, bytes: usize) {
        self.datagrams = self.datagrams.saturating_add(datagrams);
        self.bytes = self.bytes.saturating_add(bytes);
    }

    /// Takes one whole reply of `bytes` in one datagram, at `now`: its `warnings`, the
    /// count, the ping and the [`Event::Reply`] saying `what` it is (the single-reply
    /// protocols' common step before they succeed).
    pub(crate) fn took_reply<W: fmt::Display>(
        &mut self,
        now: Instant,
        bytes: usize,
        what: &'static str,
        warnings: impl IntoIterator<Item = W>,
    ) {
        self.took_replies(now, 1, bytes, what, warnings);
    }

    /// [`took_reply`](Self::took_reply) of a reply in `datagrams` datagrams of `bytes`
    /// in all, the last one taken at `now`.
    pub(crate) fn took_replies<W: fmt::Display>(
        &mut self,
        now: Instant,
        datagrams: usize,
        bytes: usize,
        what: &'static str,
        warnings: impl IntoIterator<Item = W>,
    ) {
        self.warn(warnings);
        self.received(datagrams, bytes);
        self.ping(now);
        self.event(Event::Reply {
            what,
            bytes,
            datagrams,
        });
    }

    /// Drops a datagram of `bytes` that does not decode, keeping `e` as the query's
    /// error should nothing better come.
    pub(crate) fn undecodable(&mut self, e: DecodeError, bytes: usize, why: &'static str) {
        self.malformed(e);
        self.dropped(bytes, why);
    }

    /// Takes the round trip of the current attempt as the ping, if none was taken yet;
    /// the server is heard from ([`heard`](Self::heard)).
    pub(crate) fn ping(&mut self, now: Instant) {
        if self.ping_ms.is_none() {
            self.ping_ms = Some(self.timer.rtt_ms(now));
        }
        self.timer.heard(now);
    }

    /// The server sent something of its protocol at `now`: it is alive, and its retries
    /// adapt ([`AttemptTimer`]).
    pub(crate) fn heard(&mut self, now: Instant) {
        self.timer.heard(now);
    }

    /// The ping is the round trip of the last send, answered at `now` (a stream
    /// protocol's ping/pong, measured after the reply that first set it).
    pub(crate) fn repinged(&mut self, now: Instant) {
        self.ping_ms = Some(self.timer.rtt_ms(now));
    }

    /// Counts a challenge (or token) that came at `now`, to follow (the server is heard
    /// from). False, with the query failed as a challenge loop, when there were too
    /// many.
    pub(crate) fn follow_challenge(&mut self, now: Instant) -> bool {
        self.timer.heard(now);
        self.challenges = self.challenges.saturating_add(1);
        if self.challenges > self.max_challenges {
            self.fail(QueryError::Rejected {
                protocol: self.protocol,
                reason: Rejection::ChallengeLoop,
            });
            return false;
        }
        true
    }

    /// Advances the timers; `Some(Timeout::GiveUp)` when the caller must give up (see
    /// [`give_up`](Self::give_up)).
    pub(crate) fn handle_timeout(&mut self, now: Instant) -> Option<Timeout> {
        if self.done {
            return None;
        }
        self.timer.handle_timeout(now)
    }

    /// When the next timeout is due (`None` once done).
    pub(crate) fn poll_timeout(&self) -> Option<Instant> {
        (!self.done).then(|| self.timer.poll_timeout())
    }

    /// Fails with the malformed datagram seen, or else no answer to `step`.
    pub(crate) fn give_up(&mut self, step: Option<&'static str>) {
        let e = match self.last_malformed {
            Some(error) => QueryError::Malformed {
                protocol: self.protocol,
                error,
            },
            None => QueryError::NoAnswer {
                protocol: self.protocol,
                step,
                attempts: self.sent,
            },
        };
        self.fail(e);
    }

    /// Fails with a decode error of the answer.
    pub(crate) fn fail_malformed(&mut self, error: DecodeError) {
        self.fail(QueryError::Malformed {
            protocol: self.protocol,
            error,
        });
    }

    /// Fails with a reassembly error.
    pub(crate) fn fail_reassembly(&mut self, e: impl fmt::Display) {
        self.fail(QueryError::BadReassembly {
            protocol: self.protocol,
            message: e.to_string(),
        });
    }

    /// Fails with a server's refusal.
    pub(crate) fn reject(&mut self, reason: Rejection) {
        self.fail(QueryError::Rejected {
            protocol: self.protocol,
            reason,
        });
    }

    /// Ends the query with `e` (the first end wins).
    pub(crate) fn fail(&mut self, e: QueryError) {
        self.finish(Err(e));
    }

    /// Ends the query with its answer (the first end wins).
    pub(crate) fn succeed(&mut self, status: Status, details: D) {
        let answer = Answer {
            protocol: self.protocol,
            addr: None,
            ping_ms: self.ping_ms.unwrap_or(0.0),
            datagrams: self.datagrams,
            bytes: self.bytes,
            status,
            warnings: std::mem::take(&mut self.warnings),
            events: std::mem::take(&mut self.events),
            details,
        };
        self.finish(Ok(answer));
    }

    fn finish(&mut self, r: Result<Answer<D>, QueryError>) {
        if !self.done {
            self.done = true;
            self.result = Some(Box::new(r));
        }
        self.timer.stop();
    }

    /// The result, once.
    pub(crate) fn take_result(&mut self) -> Option<Result<Answer<D>, QueryError>> {
        self.result.take().map(|r| *r)
    }
}

/// The longest an attempt's later requests ([`Burst`]) may follow its first.
pub(crate) const BURST_WINDOW: Duration = Duration::from_millis(50);

/// The requests of one attempt that go out right behind its first (which carries the
/// attempt's timer), without timers of their own: the protocol's tags of them, in
/// order. They are taken within [`BURST_WINDOW`] of the first (a quarter of the attempt
/// timeout when that is shorter) or not at all: a driver that stops polling after one
/// datagram (auto-detection sends one per protocol per round while a server is silent)
/// and comes back a round later gets the next attempt, not the rest of an old one. The
/// protocol then asks the dropped requests with a later attempt.
#[derive(Debug, Clone)]
pub(crate) struct Burst {
    items: Vec<u8>,
    at: Option<Instant>,
    window: Duration,
}

impl Burst {
    /// An empty burst for a query with these timers.
    pub(crate) fn new(timing: &Timing) -> Self {
        Self {
            items: Vec::new(),
            at: None,
            window: (timing.attempt_timeout / 4).min(BURST_WINDOW),
        }
    }

    /// The first request of an attempt went out at `now`; `rest` follow it.
    pub(crate) fn start(&mut self, now: Instant, rest: impl IntoIterator<Item = u8>) {
        self.items.clear();
        self.items.extend(rest);
        self.at = Some(now);
    }

    /// The next request to send now, if one is left and the burst is not stale; a stale
    /// burst is emptied (what it held: [`take_stale`](Self::take_stale)).
    pub(crate) fn next(&mut self, now: Instant) -> Option<u8> {
        if self.items.is_empty() || self.is_stale(now) {
            return None;
        }
        Some(self.items.remove(0))
    }

    /// Whether requests are left that can no longer go out at `now`.
    pub(crate) fn is_stale(&self, now: Instant) -> bool {
        !self.items.is_empty()
            && self
                .at
                .is_none_or(|at| now.saturating_duration_since(at) > self.window)
    }

    /// Empties a stale burst, giving what it held (empty when not stale).
    pub(crate) fn take_stale(&mut self, now: Instant) -> Vec<u8> {
        if self.is_stale(now) {
            std::mem::take(&mut self.items)
        } else {
            Vec::new()
        }
    }

    /// Forgets the rest of the attempt.
    pub(crate) fn clear(&mut self) {
        self.items.clear();
    }
}

/// How the registry (`crate::client`) starts a protocol's machine: every protocol's the same way.
pub(crate) trait StartQuery {
    /// The protocol's own options.
    type Options;

    /// A query starting at `now`; `id` is the RequestID or session id where the
    /// protocol has one.
    fn start(opts: Self::Options, timing: Timing, id: u32, now: Instant) -> Self;
}

/// [`StartQuery`] for a protocol's `QueryMachine` from its `new(opts, timing, id, now)`,
/// or with `no_id` from its `new(opts, timing, now)` (protocols without a RequestID or
/// session id).
macro_rules! start_query {
    ($options:ty) => {
        impl $crate::client_core::StartQuery for QueryMachine {
            type Options = $options;

            fn start(
                opts: $options,
                timing: $crate::client_core::Timing,
                id: u32,
                now: std::time::Instant,
            ) -> Self {
                Self::new(opts, timing, id, now)
            }
        }
    };
    ($options:ty, no_id) => {
        impl $crate::client_core::StartQuery for QueryMachine {
            type Options = $options;

            fn start(
                opts: $options,
                timing: $crate::client_core::Timing,
                _id: u32,
                now: std::time::Instant,
            ) -> Self {
                Self::new(opts, timing, now)
            }
        }
    };
}
pub(crate) use start_query;

/// Test support: drives `m` from `now` through its timers to its end (at most 100
/// rounds), answering every datagram it sends with `reply` when there is one; returns
/// the datagrams sent.
#[cfg(test)]
pub(crate) fn drive_to_end<M: QueryDriver>(m: &mut M, now: Instant, reply: Option<&[u8]>) -> usize {
    let (mut t, mut sent, mut d) = (now, 0, Vec::new());
    for _ in 0..100 {
        while m.poll_transmit_into(t, &mut d) {
            d.clear();
            sent += 1;
            if let Some(r) = reply {
                m.handle_datagram(t, r);
            }
        }
        match m.poll_timeout() {
            Some(next) => {
                t = next;
                m.handle_timeout(t);
            }
            None => break,
        }
    }
    sent
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_warning_is_said_once() {
        let mut x: Exchange<()> =
            Exchange::new(Protocol::Gamespy3, &Timing::default(), Instant::now());
        x.warn(["player count 3 but 2 players"]);
        x.warn(["player count 3 but 2 players", "cut string"]);
        assert_eq!(x.warnings, ["player count 3 but 2 players", "cut string"]);
    }

    fn timing(retries: u32, total: u64) -> Timing {
        Timing {
            retries,
            total_timeout: Duration::from_secs(total),
            ..Timing::default()
        }
    }

    #[test]
    fn backoff_retries_and_deadline() {
        let t0 = Instant::now();
        let mut t = AttemptTimer::new(t0, &timing(2, 5));
        let mut sends = Vec::new();
        let mut now = t0;
        loop {
            if t.send_due() {
                t.sent(now);
                sends.push(now - t0);
            }
            now = t.poll_timeout();
            match t.handle_timeout(now) {
                Some(Timeout::GiveUp) => break,
                Some(Timeout::Resend) | None => {}
            }
        }
        assert_eq!(sends, [0, 1000, 2500].map(Duration::from_millis).to_vec());
        assert_eq!(now - t0, Duration::from_millis(4750));
        assert_eq!(timing(2, 5).attempts_total(), Duration::from_millis(4750));
    }

    /// Sends of `t` from `now` until it gives up, answering nothing, as offsets from `t0`;
    /// and the time it gave up.
    fn run_silent(t: &mut AttemptTimer, t0: Instant, mut now: Instant) -> (Vec<u64>, u64) {
        let mut sends = Vec::new();
        for _ in 0..100 {
            if t.send_due() {
                t.sent(now);
                sends.push((now - t0).as_millis() as u64);
            }
            now = t.poll_timeout();
            if t.handle_timeout(now) == Some(Timeout::GiveUp) {
                break;
            }
        }
        (sends, (now - t0).as_millis() as u64)
    }

    #[test]
    fn a_server_that_answered_gets_more_retries_timed_from_its_round_trip() {
        let ms = Duration::from_millis;
        let timing = Timing::default()
            .attempt_timeout(ms(500))
            .retries(2)
            .alive_retries(6)
            .total_timeout(Duration::from_secs(60));
        let t0 = Instant::now();
        let mut t = AttemptTimer::new(t0, &timing);
        t.sent(t0);
        assert!(!t.is_alive());
        // A challenge 100 ms later: alive, round trip 100 ms (timeout 100 + 4 × 50).
        t.heard(t0 + ms(100));
        assert!(t.is_alive());
        t.resend_now();
        let (sends, gave_up) = run_silent(&mut t, t0, t0 + ms(100));
        // 300 ms, then growing 1.5× per retry up to the first attempt's 500 ms; 6 retries
        // where a silent server gets 2.
        assert_eq!(sends, [100, 400, 850, 1350, 1850, 2350, 2850]);
        assert_eq!(gave_up, 3350);

        // A server that never answered keeps the fixed schedule and the 2 retries.
        let mut t = AttemptTimer::new(t0, &timing);
        assert_eq!(run_silent(&mut t, t0, t0), (vec![0, 500, 1250], 2375));
    }

    #[test]
    fn the_round_trip_of_a_resent_request_is_not_measured() {
        let ms = Duration::from_millis;
        let timing = Timing::default()
            .attempt_timeout(ms(500))
            .total_timeout(Duration::from_secs(60));
        let t0 = Instant::now();
        let mut t = AttemptTimer::new(t0, &timing);
        t.sent(t0);
        assert_eq!(t.handle_timeout(t0 + ms(500)), Some(Timeout::Resend));
        t.sent(t0 + ms(500));
        // An answer 20 ms after the resend may answer the first send (520 ms): alive, but
        // no round trip; the next attempt waits the fixed timeout (grown: 750 ms).
        t.heard(t0 + ms(520));
        assert!(t.is_alive());
        t.resend_now();
        t.sent(t0 + ms(520));
        assert_eq!(t.poll_timeout(), t0 + ms(1270));
        // That first send answered 120 ms later: measured, 120 + 4 × 60 = 360 ms.
        t.heard(t0 + ms(640));
        t.resend_now();
        t.sent(t0 + ms(640));
        assert_eq!(t.poll_timeout(), t0 + ms(1000));
        // A very short round trip still waits at least MIN_ALIVE_TIMEOUT.
        let mut t = AttemptTimer::new(t0, &timing);
        t.sent(t0);
        t.heard(t0 + ms(1));
        t.resend_now();
        t.sent(t0 + ms(1));
        assert_eq!(t.poll_timeout(), t0 + ms(1) + MIN_ALIVE_TIMEOUT);
    }

    #[test]
    fn resends_do_not_use_up_retries_and_the_deadline_wins() {
        let t0 = Instant::now();
        let mut t = AttemptTimer::new(t0, &timing(0, 2));
        t.sent(t0);
        t.resend_now();
        assert!(t.send_due());
        t.sent(t0);
        assert_eq!(t.handle_timeout(t0 + Duration::from_millis(999)), None);
        assert_eq!(
            t.handle_timeout(t0 + Duration::from_secs(1)),
            Some(Timeout::GiveUp)
        );
    }

    #[test]
    fn exchange_counts_caps_and_reports() {
        let t0 = Instant::now();
        let mut x: Exchange<()> = Exchange::new(Protocol::A2s, &timing(0, 5), t0);
        for _ in 0..(MAX_EVENTS + 10) {
            x.dropped(1, "test");
        }
        x.warn((0..100).map(|i| i.to_string()));
        for _ in 0..5 {
            assert!(x.follow_challenge(t0));
        }
        assert!(!x.follow_challenge(t0));
        assert!(x.is_done());
        let e = x.take_result().unwrap().unwrap_err();
        assert_eq!(e.kind(), "rejected");
        assert_eq!(e.fault(), Fault::Server);
        assert_eq!(
            e.to_string(),
            "a2s: server keeps answering with new challenges"
        );
        // the first end wins
        let mut x: Exchange<()> = Exchange::new(Protocol::Ogp, &timing(0, 5), t0);
        x.sent(t0, Event::Note("sent"));
        x.give_up(Some("query"));
        x.succeed(Status::default(), ());
        let e = x.take_result().unwrap().unwrap_err();
        assert_eq!(
            e.to_string(),
            "ogp: no answer to query (timed out after 1 datagram sent)"
        );
        assert!(x.take_result().is_none());
    }

    #[test]
    fn events_print_one_line_each() {
        let lines = [
            Event::Sent {
                what: "A2S_INFO",
                bytes: 25,
                challenge: None,
                id: None,
            },
            Event::Challenge {
                bytes: 9,
                challenge: Some(7),
            },
            Event::Part {
                bytes: 1400,
                number: Some(0),
                count: Some(3),
            },
            Event::Reply {
                what: "A2S_INFO",
                bytes: 80,
                datagrams: 1,
            },
        ]
        .map(|e| e.to_string());
        assert_eq!(
            lines,
            [
                "→ A2S_INFO 25 B",
                "← 9 B: challenge 0x00000007",
                "← part 1/3 1400 B",
                "← A2S_INFO reply 80 B in 1 datagram",
            ]
        );
    }
}
