//! Scanning: many servers, any protocol, a few shared sockets.
//!
//! This module owns the scan engine and its library API. Targets go in through a
//! bounded channel ([`Scan::targets`]), results come out through another
//! ([`Scan::results`]) as each target finishes, so a program streams a list of any size
//! through it in bounded memory. One tokio task drives every query:
//!
//! * a few UDP sockets per address family, shared by all targets (not one per target),
//!   with large receive buffers;
//! * every datagram is handed only to the queries of the address it came from (the
//!   exact IP and port), whose machines check the protocol's own id (OGP RequestID,
//!   GameSpy session id, challenges) and ignore the rest; datagrams from an address with
//!   no query in flight are dropped and counted ([`ScanStats::unknown_source`]); when
//!   several protocols query one address (auto-detection), a datagram goes only to the
//!   machines of its own protocol when its first bytes tell
//!   ([`ogp_proto::detect::guess`]);
//! * on Linux the sockets ask for ICMP errors (`IP_RECVERR`, `IPV6_RECVERR`) and read
//!   them from their error queue: an ICMP port unreachable ends every query to that
//!   address and port at once with [`QueryError::Refused`] (elsewhere a closed port
//!   times out);
//! * a global send-rate cap (a token bucket, [`ScanConfig::rate`]) and an in-flight cap
//!   ([`ScanConfig::max_in_flight`]), which also bounds the finished results held while
//!   the consumer is slow; per-target retries with backoff come from the protocol
//!   machines (more of them, timed from the round trip, once a target has answered
//!   anything: `ogp_proto::client_core`), and each target has a deadline (`options.timing.total_timeout` of [`ScanConfig::options`]);
//! * host names are resolved concurrently, at most [`ScanConfig::resolve_concurrency`]
//!   at a time;
//! * a target without a protocol ([`Target::protocol`] `None`) runs the query of every
//!   auto-detectable protocol ([`Protocol::AUTO`]) against the
//!   address at once, in rounds ([`ogp_proto::detect::Rounds`]: one per attempt of
//!   the timing, the protocols the catalogue names for the port first,
//!   [`ogp_proto::detect::probe_order`]): while the server is silent each protocol
//!   sends at most one datagram a round, and after the last round a protocol that heard
//!   nothing is done; the first correct answer wins, except that a protocol ranked
//!   higher (OGP, then GameSpy v3, A2S, GQP) that is still running gets a short grace
//!   to answer too, so that a server speaking several gives the same result each time.
//!   With [`Target::try_query_ports`], the well-known query ports for the given port are
//!   tried as well ([`query_ports`]), and the answer says which one worked. Without a
//!   correct answer, the error is that of a protocol that heard from the server (a
//!   malformed answer, a rejection, a challenge and then silence), then a refusal,
//!   before the timeout of one that heard nothing; a target whose host refused the port
//!   is `Refused { protocol: None }`, and one that no protocol heard from over any
//!   transport [`QueryError::Undetected`] (what was tried over each).
//!
//! * stream (TCP) protocols (Minecraft: Java Edition) are driven by the same engine:
//!   each such target gets a tokio `TcpStream` of its own, in a task that connects,
//!   hands every read to the sans-IO machine, writes what it emits and sleeps until its
//!   timers (connect, read, total: [`Timing`]), so the bytes and the time spent are the
//!   machine's decisions as for datagrams. The connections share
//!   [`ScanConfig::max_in_flight`] with the datagram targets (one slot each, one socket
//!   each); a connection costs a token of the send rate (its SYN); a refused
//!   connection ends the target at once with [`QueryError::Refused`]; results have the
//!   same form as datagram ones. An auto-detected target also tries
//!   [`Protocol::AUTO_STREAM`] (one connection, on the given port only, closed when
//!   the target ends). Each connection holds a file descriptor: the soft open-file
//!   limit is raised toward the hard one when the scan starts
//!   ([`raise_open_file_limit`]), and when even that is too low the connections
//!   (not the datagram targets) are capped below the in-flight cap;
//!
//! [`query`] is the same engine for one target (`ogp query`'s auto-detection).
//!
//! Nothing here panics on network input or on any list; every loop is bounded, and
//! memory is bounded by the caps above whatever the list size or the servers send.

#![cfg_attr(
    not(test),
    deny(
        clippy::indexing_slicing,
        clippy::unwrap_used,
        clippy::expect_used,
        clippy::panic
    )
)]

mod engine;
mod errqueue;
pub mod pacer;

pub use crate::budget::{ByteBudget, DEFAULT_BUDGET, MIN_BUDGET};

use std::io;
use std::net::SocketAddr;
use std::time::Duration;

use ogp_proto::client::{Options, Timing};
use tokio::sync::{mpsc, watch};
use tokio::task::JoinHandle;

pub use ogp_proto::client::{Answer, QueryError};
pub use ogp_proto::Protocol;

/// One server to query.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct Target {
    /// The caller's tag for it (a line number, an index…), returned in its result.
    pub id: u64,
    /// `host:port`, `1.2.3.4:port` or `[v6::addr]:port`.
    pub host: String,
    /// The protocol to speak, or `None` to find out ([`Protocol::AUTO`] at once).
    pub protocol: Option<Protocol>,
    /// Also try the well-known query ports for this port ([`query_ports`]).
    pub try_query_ports: bool,
    /// Retries while the server is silent, for this target only (`None`: those of
    /// [`ScanConfig::options`]). `Some(0)`: one datagram, then the target is done after
    /// one attempt's timeout if nothing came back: a probe that may go unanswered.
    pub retries: Option<u32>,
    /// Only ask whether the server speaks the protocol ([`Machine::probe`]): the
    /// protocol's first request, and an answer with an empty status and
    /// [`Details::Probed`](ogp_proto::client::Details::Probed) at its first reply (a
    /// challenge counts). With a protocol given only.
    ///
    /// [`Machine::probe`]: ogp_proto::client::Machine::probe
    pub probe: bool,
}

impl Target {
    /// A target with id 0 that tries only the given port.
    pub fn new(host: impl Into<String>, protocol: Option<Protocol>) -> Self {
        Self {
            id: 0,
            host: host.into(),
            protocol,
            try_query_ports: false,
            retries: None,
            probe: false,
        }
    }

    /// With [`retries`](Self::retries) of its own.
    #[must_use]
    pub fn with_retries(mut self, retries: Option<u32>) -> Self {
        self.retries = retries;
        self
    }

    /// A probe ([`probe`](Self::probe)) or a full query.
    #[must_use]
    pub fn with_probe(mut self, probe: bool) -> Self {
        self.probe = probe;
        self
    }

    /// With this [`id`](Self::id).
    #[must_use]
    pub fn with_id(mut self, id: u64) -> Self {
        self.id = id;
        self
    }

    /// Trying the well-known query ports too ([`try_query_ports`](Self::try_query_ports)).
    #[must_use]
    pub fn with_query_ports(mut self, try_query_ports: bool) -> Self {
        self.try_query_ports = try_query_ports;
        self
    }
}

/// The query ports tried for a given port with [`Target::try_query_ports`], in order of
/// preference: the port itself (Source engine games answer A2S there), +1 (the query
/// port of many Steam games, Unreal Engine 2), −1 (OGP on Onset), +10 (Unreal's
/// GameSpy port), +15, and the usual fixed query ports 27015 (A2S) and 29900 (GameSpy,
/// Battlefield 2). Duplicates and ports out of range are left out.
pub fn query_ports(port: u16) -> Vec<u16> {
    let mut out: Vec<u16> = Vec::with_capacity(7);
    let p = i32::from(port);
    for candidate in [p, p + 1, p - 1, p + 10, p + 15, 27015, 29900] {
        if let Ok(c) = u16::try_from(candidate) {
            if c != 0 && !out.contains(&c) {
                out.push(c);
            }
        }
    }
    out
}

/// What became of one target.
#[derive(Debug, Clone, PartialEq)]
pub struct ScanResult {
    /// The target's [`Target::id`].
    pub id: u64,
    /// The target as given.
    pub target: String,
    /// The protocol asked for (`None`: auto-detection).
    pub requested: Option<Protocol>,
    /// The address it resolved to, if it did.
    pub addr: Option<SocketAddr>,
    /// The answer, or why there is none.
    pub outcome: Result<Answer, QueryError>,
    /// Time from its first datagram to its result.
    pub elapsed: Duration,
}

/// Settings of a scan.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct ScanConfig {
    /// Datagrams sent per second, all targets together (default 5000).
    pub rate: u32,
    /// Targets in progress at once, resolving or queried, plus finished results not yet
    /// taken by the consumer (default 2048).
    pub max_in_flight: usize,
    /// Host names resolved at once (default 32).
    pub resolve_concurrency: usize,
    /// What every query asks and its timers (default: 500 ms per attempt, growing 1.1×
    /// per retry, 3 retries while the target has sent nothing, so a silent target
    /// costs 4 datagrams in 2.32 s; [`Timing::alive_retries`] (8) timed from its round
    /// trip once it has answered anything; [`Timing::total_timeout`] is the deadline of
    /// one target from its first datagram, default 6 s). Four datagrams, not three:
    /// at 15 % loss each way, three unanswered exchanges (1 − 0.85²)³ lose 2.1 % of
    /// the live servers before they are heard from at all, four lose 0.6 %. TCP
    /// targets wait 2.32 s for the connection and for each reply
    /// ([`Timing::connect_timeout`], [`Timing::read_timeout`]), within the deadline.
    pub options: Options,
    /// UDP sockets per address family (default 2).
    pub sockets: usize,
    /// Receive buffer asked for each socket, in bytes (default 4 MiB; the kernel may
    /// grant less).
    pub recv_buffer: usize,
    /// Capacity of the target and result channels (default 256).
    pub channel_capacity: usize,
    /// Bytes of received input all TCP connections may hold together (default
    /// [`DEFAULT_BUDGET`], 16 MiB): a connection whose reply would take more waits,
    /// not reading, until others give bytes back or its timers end it. Share one
    /// (a clone) between scans to bound them together.
    pub stream_budget: ByteBudget,
}

impl Default for ScanConfig {
    fn default() -> Self {
        Self {
            rate: 5000,
            max_in_flight: 2048,
            resolve_concurrency: 32,
            options: Options::with_timing(
                Timing::default()
                    .attempt_timeout(Duration::from_millis(500))
                    .backoff_percent(110)
                    .retries(3)
                    .total_timeout(Duration::from_secs(6))
                    // TCP: as long as a datagram step's four attempts.
                    .connect_timeout(Duration::from_millis(2320))
                    .read_timeout(Duration::from_millis(2320)),
            ),
            sockets: 2,
            recv_buffer: 4 << 20,
            channel_capacity: 256,
            stream_budget: ByteBudget::default(),
        }
    }
}

/// Counters of a scan.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct ScanStats {
    /// Targets taken in.
    pub targets: u64,
    /// Targets answered.
    pub answered: u64,
    /// Targets that timed out.
    pub timed_out: u64,
    /// Targets that failed otherwise (resolution, protocol, socket, unsupported).
    pub failed: u64,
    /// Targets in progress now.
    pub in_flight: u64,
    /// Datagrams sent.
    pub sent: u64,
    /// Datagrams received.
    pub received: u64,
    /// Datagrams dropped because no query was in flight to their source address (late
    /// replies, strangers, spoofers).
    pub unknown_source: u64,
    /// Sends that failed.
    pub send_errors: u64,
    /// TCP connections opened (stream protocols: Minecraft).
    pub connections: u64,
    /// Time since the scan started.
    pub elapsed: Duration,
}

/// A running scan: send [`Target`]s into `targets` (drop it when done), read
/// [`ScanResult`]s from `results` until it returns `None`.
#[derive(Debug)]
pub struct Scan {
    /// Where targets go in (bounded: `send` waits while the scan is full).
    pub targets: mpsc::Sender<Target>,
    /// Where results come out, as each target finishes.
    pub results: mpsc::Receiver<ScanResult>,
    /// Live counters and the end of the scan.
    pub handle: ScanHandle,
}

/// Counters of a running scan, and its end.
#[derive(Debug)]
pub struct ScanHandle {
    stats: watch::Receiver<ScanStats>,
    task: JoinHandle<ScanStats>,
}

impl ScanHandle {
    /// The counters now (updated a few times a second, and at the end).
    pub fn stats(&self) -> ScanStats {
        *self.stats.borrow()
    }

    /// The counters as a watch of their own, to keep where the handle is not kept (it
    /// holds the scan's task, and with it the runtime's driver, open).
    pub fn stats_watch(&self) -> watch::Receiver<ScanStats> {
        self.stats.clone()
    }

    /// Stops the scan now: its task ends at its next await, and with it every socket,
    /// connection and resolver task it holds (a front-end whose user cancelled: Ctrl-C,
    /// a cancelled asyncio task). Results not yet taken are dropped.
    pub fn abort(&self) {
        self.task.abort();
    }

    /// Whether the scan's task has ended (finished, or aborted and dropped).
    pub fn is_finished(&self) -> bool {
        self.task.is_finished()
    }

    /// Waits for the scan to end (all targets in, all results out) and returns the final
    /// counters.
    pub async fn join(self) -> ScanStats {
        match self.task.await {
            Ok(s) => s,
            Err(_) => *self.stats.borrow(),
        }
    }
}

/// File descriptors kept aside from a scan's connections (its UDP sockets, the
/// resolver's, standard streams, a program's own files).
pub const FILES_RESERVED: u64 = 64;

/// The open-file limit a scan works under, from [`raise_open_file_limit`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub struct FileLimit {
    /// The soft limit now (after raising it).
    pub soft: u64,
    /// The hard limit (the most the soft one can be raised to without privileges).
    pub hard: u64,
    /// TCP connections the scan keeps at most: the in-flight cap asked for, or the soft
    /// limit less [`FILES_RESERVED`] when that is lower (at least 1).
    pub connections: usize,
    /// Whether the limit caps the connections below the in-flight cap.
    pub capped: bool,
}

/// Raises the soft open-file limit (`RLIMIT_NOFILE`) toward the hard one, as far as
/// `max_in_flight` connections and [`FILES_RESERVED`] need (never lowering it), and
/// says how many connections it allows. Every scan does this when it starts (a TCP
/// target holds a socket); a program calls it first to tell its user when the limit
/// caps the scan. Elsewhere than on Unix the limit is not known, and nothing caps.
pub fn raise_open_file_limit(max_in_flight: usize) -> FileLimit {
    let want = u64::try_from(max_in_flight.max(1)).unwrap_or(u64::MAX);
    let need = want.saturating_add(FILES_RESERVED);
    #[cfg(unix)]
    let (soft, hard) = {
        let soft = rlimit::increase_nofile_limit(need).unwrap_or(0);
        let (now, hard) = rlimit::Resource::NOFILE.get().unwrap_or((soft, soft));
        (now.max(soft), hard)
    };
    #[cfg(not(unix))]
    let (soft, hard) = (need, need);
    let allowed = soft.saturating_sub(FILES_RESERVED).max(1);
    let connections = usize::try_from(allowed.min(want)).unwrap_or(max_in_flight.max(1));
    let capped = allowed < want;
    if capped {
        tracing::warn!(
            soft,
            hard,
            "the open-file limit caps the scan's TCP connections at {connections} (in-flight cap {max_in_flight})"
        );
    }
    FileLimit {
        soft,
        hard,
        connections,
        capped,
    }
}

/// Starts a scan on the current tokio runtime. Fails only if no socket can be opened.
pub fn start(config: ScanConfig) -> io::Result<Scan> {
    let cap = config.channel_capacity.max(1);
    let (targets_tx, targets_rx) = mpsc::channel(cap);
    let (results_tx, results_rx) = mpsc::channel(cap);
    let (stats_tx, stats_rx) = watch::channel(ScanStats::default());
    let engine = engine::Engine::new(config, targets_rx, results_tx, stats_tx)?;
    let task = tokio::spawn(engine.run());
    Ok(Scan {
        targets: targets_tx,
        results: results_rx,
        handle: ScanHandle {
            stats: stats_rx,
            task,
        },
    })
}

/// Queries one target with the scan engine (any protocol, or auto-detection, and
/// [`Target::try_query_ports`]).
pub async fn query(target: Target, config: ScanConfig) -> ScanResult {
    let fallback = ScanResult {
        id: target.id,
        target: target.host.clone(),
        requested: target.protocol,
        addr: None,
        outcome: Err(QueryError::Socket {
            message: "the scan ended early".into(),
        }),
        elapsed: Duration::ZERO,
    };
    let config = ScanConfig {
        sockets: 1,
        recv_buffer: 256 << 10,
        ..config
    };
    let mut scan = match start(config) {
        Ok(s) => s,
        Err(e) => {
            return ScanResult {
                outcome: Err(QueryError::socket(&e)),
                ..fallback
            }
        }
    };
    // The engine task stops with this future, also when the caller drops it before the
    // result (a cancelled query: its sockets close at once).
    let _stop = AbortOnDrop(scan.handle.task.abort_handle());
    if scan.targets.send(target).await.is_err() {
        return fallback;
    }
    drop(scan.targets);
    let result = scan.results.recv().await;
    result.unwrap_or(fallback)
}

/// Aborts a task when dropped.
struct AbortOnDrop(tokio::task::AbortHandle);

impl Drop for AbortOnDrop {
    fn drop(&mut self) {
        self.0.abort();
    }
}
