//! The scan engine: one task, a few shared sockets, every target's machines.
//!
//! State: a slab of entries (one per target in progress), an index from
//! (socket, source address) to the entries querying that address, a heap of timers
//! (lazily invalidated, compacted when it outgrows the entries), two send queues
//! (entries with follow-ups first, then fresh entries) drained as the pacer allows, and
//! the finished results not yet taken by the consumer. Admission stops while
//! entries + results reach the in-flight cap, so everything here is bounded by it.

use std::cmp::Reverse;
use std::collections::{BinaryHeap, HashMap, VecDeque};
use std::future::{poll_fn, Future as _};
use std::io;
use std::net::{IpAddr, Ipv4Addr, Ipv6Addr, SocketAddr};
use std::task::Poll;
use std::time::{Duration, Instant};

use tokio::io::Interest;
use tokio::net::UdpSocket;
use tokio::sync::{mpsc, watch};
use tokio::task::{AbortHandle, JoinSet};

use super::errqueue;
use super::pacer::Pacer;
use crate::batch;
use ogp_proto::client::{Machine, QueryDriver, StreamFate, Transport};
use ogp_proto::detect::{probe_order, Rounds};

use super::{query_ports, Answer, Protocol, QueryError, ScanConfig, ScanResult, ScanStats, Target};

/// Receive buffer per datagram: 64 KiB, the largest UDP payload (unsplit answers arrive
/// whole). A batch is `batch::BATCH` of them, 2 MiB of address space of which only the
/// pages datagrams reach are ever touched.
const RECV_BUF: usize = 65536;
/// Datagrams read from one socket before the loop looks at timers and sends again.
const RECV_BATCH: usize = 512;
/// Times a failed send is tried again (it may have failed with another datagram's
/// ICMP error).
const SEND_AGAIN: usize = 4;
/// Stats are published at most this often.
const PUBLISH_EVERY: Duration = Duration::from_millis(100);
/// Shortest and longest wait for a better-ranked protocol once one answered.
const GRACE_MIN: Duration = Duration::from_millis(20);
const GRACE_MAX: Duration = Duration::from_secs(1);
/// Bytes read at a time from a TCP connection: a status of many KiB comes in a few
/// reads, and thousands of connections hold a buffer each.
const STREAM_READ_BUF: usize = 4096;
/// Time a target with a TCP probe is given beyond the machine's own total timeout, so
/// that the machine's timers (which say what was awaited) end it, not the deadline.
const STREAM_SLACK: Duration = Duration::from_millis(250);

struct Probe {
    rank: u32,
    addr: SocketAddr,
    protocol: Protocol,
    /// The machine, while it runs here: a datagram machine until it has a result, a
    /// stream machine until its connection task starts (then the task owns it).
    machine: Option<Machine>,
    error: Option<QueryError>,
    /// A datagram of its protocol came from its address, or bytes on its connection
    /// (signs of life).
    heard: bool,
    /// A stream probe: it holds one of the connection slots until its task ends.
    stream: bool,
    /// The task that drives its connection, while it runs.
    task: Option<AbortHandle>,
    /// The result its task sent back, for `progress` to take.
    finished: Option<Result<Answer, QueryError>>,
    /// Detection rounds: the last round it sent a datagram in (at most one a round
    /// while the server is silent), and datagrams sent.
    round: Option<u32>,
    sent: u32,
    /// A connection that brought no answer: what became of it.
    fate: Option<StreamFate>,
}

impl Probe {
    /// Still running: a machine here, or a connection task.
    fn running(&self) -> bool {
        self.machine.is_some() || self.task.is_some()
    }

    /// A datagram machine (not a stream one waiting for its task).
    fn datagram_machine(&mut self) -> Option<&mut Machine> {
        if self.stream {
            None
        } else {
            self.machine.as_mut()
        }
    }
}

struct Entry {
    gen: u32,
    target: Target,
    addr: Option<SocketAddr>,
    socket: usize,
    probes: Vec<Probe>,
    started: Option<Instant>,
    deadline: Instant,
    settle: Option<Instant>,
    /// Boxed: most entries are waiting, and the slab holds `max_in_flight` of them.
    best: Option<(u32, Box<Answer>)>,
    scheduled: Option<Instant>,
    queued: bool,
    /// Several probes (auto-detection, query ports): the rounds they go out in while
    /// the server is silent.
    rounds: Option<Rounds>,
}

/// What ended a wait.
enum Woke {
    Io,
    Target(Option<Target>),
    Resolved(Option<(u32, u32, Result<SocketAddr, QueryError>)>),
    Permit(Option<mpsc::OwnedPermit<ScanResult>>),
    Stream(Option<StreamDone>),
}

/// What a connection task sends back: entry, generation, probe, what it saw of the
/// server, result. (The answer is boxed: tasks and results are many, answers few.)
type StreamDone = (u32, u32, usize, Life, Result<Box<Answer>, QueryError>);

/// What a connection saw of its server.
#[derive(Debug, Clone, Copy)]
struct Life {
    /// The server sent bytes.
    got: bool,
    /// The connection came up.
    up: bool,
}

/// Entries of one (socket, address): almost always one.
enum Slot {
    One(u32),
    Many(Vec<u32>),
}

struct Sock {
    socket: UdpSocket,
}

pub(crate) struct Engine {
    cfg: ScanConfig,
    v4: Vec<Sock>,
    v6: Vec<Sock>,
    v6_error: Option<String>,
    next_socket: usize,
    entries: Vec<Option<Entry>>,
    gens: Vec<u32>,
    free: Vec<u32>,
    live: usize,
    by_addr: HashMap<(usize, SocketAddr), Slot>,
    timers: BinaryHeap<Reverse<(Instant, u32, u32)>>,
    /// The timers due in one pass of `fire_timers` (kept for its capacity).
    due: Vec<(Instant, u32, u32)>,
    followups: VecDeque<(u32, u32)>,
    fresh: VecDeque<u32>,
    deferred: HashMap<SocketAddr, VecDeque<u32>>,
    done: VecDeque<ScanResult>,
    resolving: JoinSet<(u32, u32, Result<SocketAddr, QueryError>)>,
    waiting: Option<Target>,
    targets: mpsc::Receiver<Target>,
    input_open: bool,
    results: mpsc::Sender<ScanResult>,
    pacer: Pacer,
    /// RequestIDs of the queries.
    ids: crate::RequestIds,
    /// Buffers of sent datagrams, for the next ones (at most two batches' worth).
    spare: Vec<Vec<u8>>,
    /// Datagrams waiting for `flush` (socket, address, bytes).
    outbox: Vec<(usize, SocketAddr, Vec<u8>)>,
    /// Datagrams a full socket did not take; they go first.
    stalled: VecDeque<(usize, SocketAddr, Vec<u8>)>,
    stats: ScanStats,
    stats_tx: watch::Sender<ScanStats>,
    started: Instant,
    published: Instant,
    rx: batch::RecvBatch,
    /// The connection tasks of stream probes.
    streams: JoinSet<StreamDone>,
    /// Connection slots taken (stream probes started, their task not yet ended).
    streams_live: usize,
    /// At most this many at once: the in-flight cap, or less when the open-file limit
    /// allows less.
    stream_cap: usize,
    /// Entries with a stream probe waiting for a connection slot.
    stream_waiting: VecDeque<u32>,
}

/// Socket index space: v4 sockets are 0..n, v6 sockets n..2n.
fn bind(addr: SocketAddr, recv_buffer: usize) -> io::Result<UdpSocket> {
    use socket2::{Domain, Protocol as SProtocol, Socket, Type};
    let domain = if addr.is_ipv4() {
        Domain::IPV4
    } else {
        Domain::IPV6
    };
    let s = Socket::new(domain, Type::DGRAM, Some(SProtocol::UDP))?;
    if addr.is_ipv6() {
        s.set_only_v6(true)?;
    }
    // ICMP port unreachable, on Linux: closed ports are refused at once.
    errqueue::enable(&s, addr.is_ipv6());
    // Best effort: the kernel caps it (net.core.rmem_max).
    let _ = s.set_recv_buffer_size(recv_buffer);
    let _ = s.set_send_buffer_size(1 << 20);
    s.set_nonblocking(true)?;
    s.bind(&addr.into())?;
    UdpSocket::from_std(s.into())
}

/// IPv4-mapped IPv6 addresses are IPv4 addresses.
fn canonical(addr: SocketAddr) -> SocketAddr {
    match addr {
        SocketAddr::V6(v6) => match v6.ip().to_ipv4_mapped() {
            Some(v4) => SocketAddr::new(IpAddr::V4(v4), v6.port()),
            None => addr,
        },
        SocketAddr::V4(_) => addr,
    }
}

async fn resolve(host: String, limit: Duration) -> Result<SocketAddr, QueryError> {
    let lookup = tokio::net::lookup_host(host.clone());
    match tokio::time::timeout(limit, lookup).await {
        Ok(Ok(mut addrs)) => addrs.next().ok_or(QueryError::Resolve { target: host }),
        _ => Err(QueryError::Resolve { target: host }),
    }
}

impl Engine {
    pub(crate) fn new(
        cfg: ScanConfig,
        targets: mpsc::Receiver<Target>,
        results: mpsc::Sender<ScanResult>,
        stats_tx: watch::Sender<ScanStats>,
    ) -> io::Result<Self> {
        let mut cfg = cfg;
        cfg.sockets = cfg.sockets.clamp(1, 64);
        cfg.max_in_flight = cfg.max_in_flight.max(1);
        cfg.resolve_concurrency = cfg.resolve_concurrency.max(1);
        let mut v4 = Vec::with_capacity(cfg.sockets);
        for _ in 0..cfg.sockets {
            let socket = bind(
                SocketAddr::new(IpAddr::V4(Ipv4Addr::UNSPECIFIED), 0),
                cfg.recv_buffer,
            )?;
            v4.push(Sock { socket });
        }
        // TCP targets hold a socket each: the soft open-file limit is raised for them.
        let stream_cap = super::raise_open_file_limit(cfg.max_in_flight).connections;
        let now = Instant::now();
        // A burst of 10 ms worth of datagrams (at least 1).
        let burst = (cfg.rate / 100).max(1);
        Ok(Self {
            pacer: Pacer::new(cfg.rate, burst, now),
            ids: crate::RequestIds::new(),
            spare: Vec::with_capacity(2 * batch::BATCH),
            v4,
            v6: Vec::new(),
            v6_error: None,
            next_socket: 0,
            entries: Vec::new(),
            gens: Vec::new(),
            free: Vec::new(),
            live: 0,
            by_addr: HashMap::new(),
            timers: BinaryHeap::new(),
            due: Vec::new(),
            followups: VecDeque::new(),
            fresh: VecDeque::new(),
            deferred: HashMap::new(),
            done: VecDeque::new(),
            resolving: JoinSet::new(),
            waiting: None,
            targets,
            input_open: true,
            results,
            outbox: Vec::with_capacity(2 * batch::BATCH),
            stalled: VecDeque::new(),
            stats: ScanStats::default(),
            stats_tx,
            started: now,
            published: now,
            rx: batch::RecvBatch::new(RECV_BUF),
            streams: JoinSet::new(),
            streams_live: 0,
            stream_cap,
            stream_waiting: VecDeque::new(),
            cfg,
        })
    }

    fn socket(&self, i: usize) -> Option<&UdpSocket> {
        let n = self.cfg.sockets;
        if i < n {
            self.v4.get(i).map(|s| &s.socket)
        } else {
            self.v6.get(i - n).map(|s| &s.socket)
        }
    }

    fn socket_count(&self) -> usize {
        self.cfg.sockets + self.v6.len()
    }

    /// The index of the first socket of the address's family, opening the IPv6 ones on
    /// first use.
    fn family_base(&mut self, addr: &SocketAddr) -> Result<usize, QueryError> {
        let n = self.cfg.sockets;
        if addr.is_ipv4() {
            return Ok(0);
        }
        if self.v6.is_empty() {
            if let Some(e) = &self.v6_error {
                return Err(QueryError::Socket { message: e.clone() });
            }
            for _ in 0..n {
                match bind(
                    SocketAddr::new(IpAddr::V6(Ipv6Addr::UNSPECIFIED), 0),
                    self.cfg.recv_buffer,
                ) {
                    Ok(socket) => self.v6.push(Sock { socket }),
                    Err(e) => {
                        let msg = format!("no IPv6 socket: {e}");
                        self.v6.clear();
                        self.v6_error = Some(msg.clone());
                        return Err(QueryError::Socket { message: msg });
                    }
                }
            }
        }
        Ok(n)
    }

    /// A socket of the family starting at `base` with no query in flight to `addr`
    /// (round robin), so that duplicates of a target never share a socket.
    fn free_socket(&mut self, base: usize, addr: SocketAddr) -> Option<usize> {
        let n = self.cfg.sockets;
        self.next_socket = self.next_socket.wrapping_add(1);
        (0..n)
            .map(|k| base + (self.next_socket + k) % n)
            .find(|si| !self.by_addr.contains_key(&(*si, addr)))
    }

    fn room(&self) -> bool {
        self.live + self.done.len() < self.cfg.max_in_flight
    }

    fn finished(&self) -> bool {
        !self.input_open
            && self.waiting.is_none()
            && self.live == 0
            && self.done.is_empty()
            && self.resolving.is_empty()
            && self.streams.is_empty()
    }

    pub(crate) async fn run(mut self) -> ScanStats {
        loop {
            let now = Instant::now();
            self.receive_all(now);
            self.fire_timers(now);
            self.admit_ready(now);
            self.collect_resolved(now);
            self.collect_streams(now);
            self.transmit(Instant::now());
            if !self.flush_results() {
                break;
            }
            self.publish(false);
            if self.finished() {
                break;
            }
            if !self.wait().await {
                break;
            }
        }
        self.publish(true);
        self.stats
    }

    fn publish(&mut self, force: bool) {
        let now = Instant::now();
        if force || now.duration_since(self.published) >= PUBLISH_EVERY {
            self.published = now;
            self.stats.elapsed = now.duration_since(self.started);
            self.stats.in_flight = self.live as u64;
            let s = self.stats;
            self.stats_tx.send_replace(s);
        }
    }

    /// Waits for something to do. Returns false when the consumer has gone.
    async fn wait(&mut self) -> bool {
        let now = Instant::now();
        let mut wake = self.timers.peek().map(|Reverse((t, _, _))| *t);
        if self.stalled.is_empty() && !(self.followups.is_empty() && self.fresh.is_empty()) {
            let t = self.pacer.next_token_at(now);
            wake = Some(wake.map_or(t, |w| w.min(t)));
        }
        if !self.done.is_empty() && self.results.capacity() > 0 {
            return true;
        }
        let can_admit = self.input_open && self.waiting.is_none() && self.room();
        let v4 = &self.v4;
        let v6 = &self.v6;
        let stalled = self.stalled.front().map(|(i, _, _)| *i);
        let n = self.cfg.sockets;
        // Readable, or (Linux) in error: ICMP errors wait on the error queue.
        let interest = errqueue::interest();
        let mut readiness: Vec<_> = v4
            .iter()
            .chain(v6.iter())
            .map(|s| Box::pin(s.socket.ready(interest)))
            .collect();
        let sockets_ready = poll_fn(|cx| {
            let mut ready = false;
            for r in &mut readiness {
                if r.as_mut().poll(cx).is_ready() {
                    ready = true;
                }
            }
            if let Some(i) = stalled {
                let s = if i < n { v4.get(i) } else { v6.get(i - n) };
                if s.is_some_and(|s| s.socket.poll_send_ready(cx).is_ready()) {
                    ready = true;
                }
            }
            if ready {
                Poll::Ready(())
            } else {
                Poll::Pending
            }
        });
        let sleep = async {
            match wake {
                Some(t) => tokio::time::sleep_until(t.into()).await,
                None => std::future::pending::<()>().await,
            }
        };
        let has_done = !self.done.is_empty();
        let resolving = !self.resolving.is_empty();
        let streaming = !self.streams.is_empty();
        let woke = tokio::select! {
            biased;
            () = sockets_ready => Woke::Io,
            t = self.targets.recv(), if can_admit => Woke::Target(t),
            r = self.resolving.join_next(), if resolving => Woke::Resolved(r.and_then(Result::ok)),
            r = self.streams.join_next(), if streaming => Woke::Stream(r.and_then(Result::ok)),
            p = self.results.clone().reserve_owned(), if has_done => Woke::Permit(p.ok()),
            () = sleep => Woke::Io,
        };
        drop(readiness);
        match woke {
            Woke::Io => {}
            Woke::Target(Some(t)) => self.admit(t, Instant::now()),
            Woke::Target(None) => self.input_open = false,
            Woke::Resolved(Some((i, g, r))) => self.resolved(i, g, r, Instant::now()),
            Woke::Resolved(None) => {}
            Woke::Stream(Some(done)) => self.stream_done(done, Instant::now()),
            Woke::Stream(None) => {}
            Woke::Permit(Some(permit)) => {
                if let Some(r) = self.done.pop_front() {
                    permit.send(r);
                }
            }
            Woke::Permit(None) => return false,
        }
        true
    }

    /// Hands finished results to the consumer while the channel has room. False when
    /// the consumer has gone.
    fn flush_results(&mut self) -> bool {
        while let Some(r) = self.done.pop_front() {
            match self.results.try_send(r) {
                Ok(()) => {}
                Err(mpsc::error::TrySendError::Full(r)) => {
                    self.done.push_front(r);
                    break;
                }
                Err(mpsc::error::TrySendError::Closed(_)) => return false,
            }
        }
        true
    }

    /// Takes targets from the input without waiting, while there is room.
    fn admit_ready(&mut self, now: Instant) {
        if let Some(t) = self.waiting.take() {
            self.admit(t, now);
        }
        while self.input_open && self.waiting.is_none() && self.room() {
            match self.targets.try_recv() {
                Ok(t) => self.admit(t, now),
                Err(mpsc::error::TryRecvError::Empty) => break,
                Err(mpsc::error::TryRecvError::Disconnected) => {
                    self.input_open = false;
                    break;
                }
            }
        }
    }

    fn insert(&mut self, target: Target, now: Instant) -> (u32, u32) {
        let entry = |gen| Entry {
            gen,
            target,
            addr: None,
            socket: 0,
            probes: Vec::new(),
            started: None,
            deadline: now,
            settle: None,
            best: None,
            scheduled: None,
            queued: false,
            rounds: None,
        };
        self.live += 1;
        if let Some(i) = self.free.pop() {
            let g = self
                .gens
                .get(i as usize)
                .copied()
                .unwrap_or(0)
                .wrapping_add(1);
            if let Some(slot) = self.gens.get_mut(i as usize) {
                *slot = g;
            }
            if let Some(slot) = self.entries.get_mut(i as usize) {
                *slot = Some(entry(g));
            }
            (i, g)
        } else {
            let i = u32::try_from(self.entries.len()).unwrap_or(u32::MAX);
            self.entries.push(Some(entry(0)));
            self.gens.push(0);
            (i, 0)
        }
    }

    fn entry(&mut self, i: u32, g: u32) -> Option<&mut Entry> {
        self.entries
            .get_mut(i as usize)
            .and_then(Option::as_mut)
            .filter(|e| e.gen == g)
    }

    fn admit(&mut self, target: Target, now: Instant) {
        let literal = target.host.parse::<SocketAddr>().ok();
        if literal.is_none() && self.resolving.len() >= self.cfg.resolve_concurrency {
            self.waiting = Some(target);
            return;
        }
        self.stats.targets += 1;
        let host = target.host.clone();
        let (i, g) = self.insert(target, now);
        match literal {
            Some(addr) => self.resolved(i, g, Ok(addr), now),
            None if !host.contains(':') => self.resolved(
                i,
                g,
                Err(QueryError::Resolve {
                    target: format!("{host} (no port)"),
                }),
                now,
            ),
            None => {
                let limit = self.cfg.options.timing.total_timeout;
                self.resolving
                    .spawn(async move { (i, g, resolve(host, limit).await) });
            }
        }
    }

    fn collect_resolved(&mut self, now: Instant) {
        while let Some(r) = self.resolving.try_join_next() {
            if let Ok((i, g, r)) = r {
                self.resolved(i, g, r, now);
            }
        }
    }

    fn resolved(&mut self, i: u32, g: u32, r: Result<SocketAddr, QueryError>, now: Instant) {
        let addr = match r {
            Ok(a) => canonical(a),
            Err(e) => return self.finish(i, g, Err(e), now),
        };
        let socket = match self.family_base(&addr) {
            Ok(s) => s,
            Err(e) => return self.finish(i, g, Err(e), now),
        };
        let Some(e) = self.entry(i, g) else { return };
        e.addr = Some(addr);
        e.socket = socket;
        self.fresh.push_back(i);
    }

    /// Creates the entry's machines: its first datagram is about to go out. False when
    /// every socket already has a query in flight to its address: it waits for one of
    /// them to finish.
    fn start(&mut self, i: u32, now: Instant) -> bool {
        let deadline = now + self.cfg.options.timing.total_timeout;
        let Some((base, addr)) = self
            .entries
            .get(i as usize)
            .and_then(Option::as_ref)
            .and_then(|e| Some((e.socket, e.addr?)))
        else {
            return true;
        };
        let Some(socket) = self.free_socket(base, addr) else {
            self.deferred.entry(addr).or_default().push_back(i);
            return false;
        };
        let ids = &mut self.ids;
        let mut keys = Vec::new();
        let Some(e) = self.entries.get_mut(i as usize).and_then(Option::as_mut) else {
            return true;
        };
        // a target's own retries (a probe that may go unanswered): the scan's options
        // with them, else the scan's options as they are
        let own;
        let options = match e.target.retries {
            Some(r) if r != self.cfg.options.timing.retries => {
                let mut o = self.cfg.options.clone();
                o.timing = o.timing.retries(r);
                own = o;
                &own
            }
            _ => &self.cfg.options,
        };
        e.socket = socket;
        // Auto-detection: the datagram protocols in the order the catalogue's ports
        // suggest for each port, then the stream ones.
        let wanted = e.target.protocol;
        let probe = e.target.probe && wanted.is_some();
        let protocols_for = |port: u16| -> Vec<Protocol> {
            match wanted {
                None => probe_order(port)
                    .into_iter()
                    .chain(Protocol::AUTO_STREAM)
                    .collect(),
                Some(p) => vec![p],
            }
        };
        let ports = if e.target.try_query_ports {
            query_ports(addr.port())
        } else {
            vec![addr.port()]
        };
        // Stream protocols rank after every datagram one at the same port
        // (`Protocol::rank` is `AUTO.len()` for them), before those of the next port.
        let width = u32::try_from(Protocol::AUTO.len() + 1).unwrap_or(8);
        let mut streams = 0;
        for (pi, port) in (0u32..).zip(ports) {
            let a = SocketAddr::new(addr.ip(), port);
            keys.push((e.socket, a));
            for p in &protocols_for(port) {
                let stream = p.transport() == Transport::Stream;
                // One connection per target, to the given port only.
                if stream && pi > 0 {
                    continue;
                }
                streams += usize::from(stream);
                let machine = if probe {
                    Machine::probe(*p, options, ids.next(), now)
                } else {
                    Machine::new(*p, options, ids.next(), now)
                };
                let rank = u32::try_from(p.rank()).unwrap_or(width);
                e.probes.push(Probe {
                    rank: pi * width + rank,
                    addr: a,
                    protocol: *p,
                    machine: Some(machine),
                    error: None,
                    heard: false,
                    stream,
                    task: None,
                    finished: None,
                    round: None,
                    sent: 0,
                    fate: None,
                });
            }
        }
        if e.probes.len() > 1 {
            e.rounds = Some(Rounds::new(&options.timing, now));
        }
        e.started = Some(now);
        e.deadline = if streams > 0 {
            deadline + STREAM_SLACK
        } else {
            deadline
        };
        self.streams_live += streams;
        for key in keys {
            match self.by_addr.get_mut(&key) {
                None => {
                    self.by_addr.insert(key, Slot::One(i));
                }
                Some(Slot::One(j)) => {
                    let j = *j;
                    self.by_addr.insert(key, Slot::Many(vec![j, i]));
                }
                Some(Slot::Many(v)) => v.push(i),
            }
        }
        true
    }

    fn unregister(&mut self, i: u32, socket: usize, addrs: &[SocketAddr]) {
        for a in addrs {
            let key = (socket, *a);
            let remove = match self.by_addr.get_mut(&key) {
                Some(Slot::One(j)) => *j == i,
                Some(Slot::Many(v)) => {
                    v.retain(|j| *j != i);
                    if let [only] = v.as_slice() {
                        let only = *only;
                        self.by_addr.insert(key, Slot::One(only));
                    }
                    false
                }
                None => false,
            };
            if remove {
                self.by_addr.remove(&key);
            }
        }
    }

    fn finish(&mut self, i: u32, g: u32, outcome: Result<Answer, QueryError>, now: Instant) {
        let Some(slot) = self.entries.get_mut(i as usize) else {
            return;
        };
        if slot.as_ref().is_none_or(|e| e.gen != g) {
            return;
        }
        let Some(e) = slot.take() else { return };
        // Its connections close now (aborting a task drops its socket).
        for p in e.probes.iter().filter(|p| p.stream) {
            if let Some(t) = &p.task {
                t.abort();
            }
            if p.machine.is_some() || p.task.is_some() {
                self.release_stream();
            }
        }
        self.free.push(i);
        self.live = self.live.saturating_sub(1);
        let mut addrs: Vec<SocketAddr> = e.probes.iter().map(|p| p.addr).collect();
        addrs.dedup();
        if e.started.is_some() {
            self.unregister(i, e.socket, &addrs);
            // A duplicate of this target waiting for a free socket can go now.
            if let Some(a) = e.addr {
                if let Some(q) = self.deferred.get_mut(&a) {
                    if let Some(j) = q.pop_front() {
                        self.fresh.push_front(j);
                    }
                    if q.is_empty() {
                        self.deferred.remove(&a);
                    }
                }
            }
        }
        match &outcome {
            Ok(_) => self.stats.answered += 1,
            Err(e) if e.is_timeout() => self.stats.timed_out += 1,
            Err(_) => self.stats.failed += 1,
        }
        self.done.push_back(ScanResult {
            id: e.target.id,
            target: e.target.host,
            requested: e.target.protocol,
            addr: e.addr,
            outcome,
            elapsed: e
                .started
                .map_or(Duration::ZERO, |s| now.saturating_duration_since(s)),
        });
    }

    /// Whether entry `i` will open a connection once started.
    fn wants_stream(&self, i: u32) -> bool {
        self.entries
            .get(i as usize)
            .and_then(Option::as_ref)
            .is_some_and(|e| match e.target.protocol {
                None => !Protocol::AUTO_STREAM.is_empty(),
                Some(p) => p.transport() == Transport::Stream,
            })
    }

    /// A connection slot is free again: an entry waiting for one can start.
    fn release_stream(&mut self) {
        self.streams_live = self.streams_live.saturating_sub(1);
        if let Some(j) = self.stream_waiting.pop_front() {
            self.fresh.push_front(j);
        }
    }

    fn collect_streams(&mut self, now: Instant) {
        while let Some(r) = self.streams.try_join_next() {
            if let Ok(done) = r {
                self.stream_done(done, now);
            }
        }
    }

    /// A connection task ended with its machine's result.
    fn stream_done(&mut self, (i, g, pi, life, r): StreamDone, now: Instant) {
        let Some(p) = self.entry(i, g).and_then(|e| e.probes.get_mut(pi)) else {
            // Its entry finished first (and released the slot).
            return;
        };
        if p.task.take().is_none() {
            return;
        }
        // Bytes came on the connection: signs of life.
        p.heard = life.got || r.is_ok();
        p.fate = match &r {
            Ok(_) => None,
            // Accepted, then reset before a byte (a server that closes at once with our
            // request unread resets): closed, as a clean close is.
            Err(QueryError::Socket { .. }) if life.up && !life.got => Some(StreamFate::Closed),
            Err(e) => StreamFate::of(e),
        };
        p.finished = Some(r.map(|a| *a));
        self.release_stream();
        self.progress(i, g, now, false);
    }

    fn receive_all(&mut self, now: Instant) {
        // Taken out for the loop (the datagrams are handed to `self`), put back after.
        let mut rx = std::mem::take(&mut self.rx);
        let mut refused = Vec::new();
        for si in 0..self.socket_count() {
            let mut direct = false;
            // Batches of up to `batch::BATCH` datagrams, one system call each.
            for _ in 0..RECV_BATCH.div_ceil(batch::BATCH) {
                let Some(sock) = self.socket(si) else { break };
                match sock.try_io(Interest::READABLE, || batch::recv_batch(sock, &mut rx)) {
                    Ok(n) => {
                        for i in 0..n {
                            if let Some((datagram, src)) = rx.get(i) {
                                self.stats.received += 1;
                                self.on_datagram(si, canonical(src), datagram, now);
                            }
                        }
                        if n < batch::BATCH {
                            break;
                        }
                    }
                    Err(e) if e.kind() == io::ErrorKind::WouldBlock => break,
                    // The socket's pending ICMP error, reported once without saying
                    // whose: the error queue says (on Linux).
                    Err(e) if e.kind() == io::ErrorKind::ConnectionRefused => direct = true,
                    // Other errors of earlier sends and the like: nothing to read.
                    Err(_) => continue,
                }
            }
            let Some(sock) = self.socket(si) else {
                continue;
            };
            refused.clear();
            errqueue::drain(sock, direct, &mut refused);
            for addr in &refused {
                self.on_refused(si, canonical(*addr), now);
            }
        }
        self.rx = rx;
    }

    /// An ICMP port unreachable for a datagram sent to `dest` from socket `socket`: every
    /// probe to that address and port is refused at once.
    fn on_refused(&mut self, socket: usize, dest: SocketAddr, now: Instant) {
        let entries = match self.by_addr.get(&(socket, dest)) {
            None => return,
            Some(Slot::One(i)) => vec![*i],
            Some(Slot::Many(v)) => v.clone(),
        };
        for i in entries {
            let Some(e) = self.entries.get_mut(i as usize).and_then(Option::as_mut) else {
                continue;
            };
            let g = e.gen;
            // ICMP says nothing of TCP on that port: stream probes go on.
            for p in e.probes.iter_mut().filter(|p| p.addr == dest && !p.stream) {
                if let Some(m) = p.machine.take() {
                    p.error = Some(QueryError::Refused {
                        protocol: Some(m.protocol()),
                    });
                }
            }
            self.progress(i, g, now, false);
        }
    }

    fn on_datagram(&mut self, socket: usize, src: SocketAddr, datagram: &[u8], now: Instant) {
        match self.by_addr.get(&(socket, src)) {
            None => self.stats.unknown_source += 1,
            Some(Slot::One(i)) => {
                let i = *i;
                self.deliver(i, src, datagram, now);
            }
            Some(Slot::Many(v)) => {
                for i in v.clone() {
                    self.deliver(i, src, datagram, now);
                }
            }
        }
    }

    fn deliver(&mut self, i: u32, src: SocketAddr, datagram: &[u8], now: Instant) {
        let Some(e) = self.entries.get_mut(i as usize).and_then(Option::as_mut) else {
            return;
        };
        let g = e.gen;
        // Several protocols at this address (auto-detection): the datagram goes to the
        // machines of its own protocol when its first bytes tell, else to all of them.
        // One probe (a protocol given) takes every datagram of its address unasked.
        let claimed = e.probes.len() > 1
            && e.probes.iter().any(|p| {
                p.addr == src && !p.stream && p.machine.as_ref().is_some_and(|m| m.claims(datagram))
            });
        for p in e.probes.iter_mut().filter(|p| p.addr == src && !p.stream) {
            if let Some(m) = p.machine.as_mut() {
                if !claimed || m.claims(datagram) {
                    p.heard = true;
                    m.handle_datagram(now, datagram);
                }
            }
        }
        self.progress(i, g, now, true);
    }

    fn fire_timers(&mut self, now: Instant) {
        // The timers due now are taken out first, then handled: a timer that handling
        // one sets again at or before `now` waits for the next pass (after this pass's
        // sends), instead of being popped again and again within this one. Bounded:
        // each pop removes an item.
        let mut due = std::mem::take(&mut self.due);
        due.clear();
        while let Some(Reverse(timer)) = self.timers.peek().copied() {
            if timer.0 > now {
                break;
            }
            self.timers.pop();
            due.push(timer);
        }
        for &(t, i, g) in &due {
            let Some(e) = self.entry(i, g) else { continue };
            if e.scheduled != Some(t) {
                continue;
            }
            e.scheduled = None;
            for p in &mut e.probes {
                if let Some(m) = p.datagram_machine() {
                    if m.poll_timeout().is_some_and(|d| d <= now) {
                        m.handle_timeout(now);
                    }
                }
            }
            self.progress(i, g, now, true);
        }
        self.due = due;
        if self.timers.len() > 4 * self.cfg.max_in_flight + 1024 {
            let entries = &self.entries;
            self.timers.retain(|Reverse((t, i, g))| {
                entries
                    .get(*i as usize)
                    .and_then(Option::as_ref)
                    .is_some_and(|e| e.gen == *g && e.scheduled == Some(*t))
            });
        }
    }

    /// After anything happened to entry `i`: collect results, finish it or schedule its
    /// next timer (and, with `may_send`, a look at what it wants to send).
    fn progress(&mut self, i: u32, g: u32, now: Instant, may_send: bool) {
        let Some(e) = self
            .entries
            .get_mut(i as usize)
            .and_then(Option::as_mut)
            .filter(|e| e.gen == g)
        else {
            return;
        };
        // Not started yet: nothing has happened to it.
        let Some(started) = e.started else { return };
        // After the last detection round, a datagram probe that heard nothing is done.
        if e.rounds.as_ref().is_some_and(|r| now >= r.end()) {
            for p in e.probes.iter_mut().filter(|p| !p.stream && !p.heard) {
                if let Some(m) = p.machine.take() {
                    p.error = Some(QueryError::NoAnswer {
                        protocol: m.protocol(),
                        step: None,
                        attempts: p.sent,
                    });
                }
            }
        }
        for p in &mut e.probes {
            let r = if let Some(r) = p.finished.take() {
                r
            } else {
                let addr = p.addr;
                let Some(m) = p.datagram_machine() else {
                    continue;
                };
                let Some(r) = m.take_answer(addr) else {
                    continue;
                };
                p.machine = None;
                r
            };
            match r {
                Ok(answer) => {
                    if e.best.as_ref().is_none_or(|(rank, _)| p.rank < *rank) {
                        e.best = Some((p.rank, Box::new(answer)));
                    }
                }
                Err(err) => p.error = Some(err),
            }
        }
        let running_better =
            |e: &Entry, rank: u32| e.probes.iter().any(|p| p.running() && p.rank < rank);
        let outcome = if let Some((rank, _)) = &e.best {
            let rank = *rank;
            let settle = *e.settle.get_or_insert_with(|| {
                let waited = now.saturating_duration_since(started);
                now + (waited * 2).clamp(GRACE_MIN, GRACE_MAX)
            });
            if !running_better(e, rank) || now >= settle || now >= e.deadline {
                e.best.take().map(|(_, a)| Ok(*a))
            } else {
                None
            }
        } else if now >= e.deadline || e.probes.iter().all(|p| !p.running()) {
            Some(Err(summarize(&e.probes, e.target.protocol.is_none())))
        } else {
            None
        };
        if let Some(o) = outcome {
            return self.finish(i, g, o, now);
        }
        // Next wake-up: the earliest machine timer, the settle time or the deadline.
        let mut next = e.deadline;
        for p in e.probes.iter().filter(|p| !p.stream) {
            if let Some(t) = p.machine.as_ref().and_then(Machine::poll_timeout) {
                next = next.min(t);
            }
        }
        if let Some(s) = e.settle {
            next = next.min(s);
        }
        // The next detection round, while a probe waits for one.
        let waiting = e
            .probes
            .iter()
            .any(|p| !p.stream && !p.heard && p.machine.is_some());
        if let Some(t) = e
            .rounds
            .as_ref()
            .filter(|_| waiting)
            .and_then(|r| r.next(now))
        {
            next = next.min(t);
        }
        // A machine due now (it has something to send once its timeout is handled) is
        // looked at by this pass's `transmit`, which schedules it again after its sends:
        // no timer for it now, that the next pass would only pop again.
        let sends_now = next <= now && (may_send || e.queued);
        if !sends_now && e.scheduled.is_none_or(|s| next < s) {
            e.scheduled = Some(next);
            self.timers.push(Reverse((next, i, g)));
        }
        if may_send && !e.queued {
            e.queued = true;
            self.followups.push_back((i, g));
        }
    }

    /// Sends what the pacer allows: follow-ups of running entries first, then first
    /// datagrams of fresh ones. Datagrams are queued and go out a batch at a time per
    /// socket (`sendmmsg` on Linux).
    fn transmit(&mut self, now: Instant) {
        // What a full socket refused last time goes first.
        if !self.stalled.is_empty() {
            self.outbox.extend(self.stalled.drain(..));
            self.flush();
            if !self.stalled.is_empty() {
                return;
            }
        }
        // Bounded: every round either sends (uses a token) or removes a queue item.
        let mut rounds = self.followups.len() + self.fresh.len() + 1;
        while rounds > 0 && self.stalled.is_empty() && self.pacer.ready(now) {
            rounds -= 1;
            let i = if let Some((i, g)) = self.followups.pop_front() {
                // A stale item: that entry finished and its slot was reused.
                if self
                    .entries
                    .get(i as usize)
                    .and_then(Option::as_ref)
                    .is_none_or(|e| e.gen != g || e.started.is_none())
                {
                    continue;
                }
                i
            } else if let Some(i) = self.fresh.pop_front() {
                // A target that connects waits for a connection slot.
                if self.wants_stream(i) && self.streams_live >= self.stream_cap {
                    self.stream_waiting.push_back(i);
                    continue;
                }
                if !self.start(i, now) {
                    continue;
                }
                i
            } else {
                break;
            };
            let Some(e) = self.entries.get_mut(i as usize).and_then(Option::as_mut) else {
                continue;
            };
            let g = e.gen;
            let si = e.socket;
            let mut exhausted = false;
            'probes: for (pi, p) in e.probes.iter_mut().enumerate() {
                let Some(m) = p.machine.as_mut() else {
                    continue;
                };
                if p.stream {
                    // The connection (a SYN) takes a token like a datagram; from then
                    // on its task moves the bytes and sleeps as the machine says.
                    if !self.pacer.take(now) {
                        exhausted = true;
                        break 'probes;
                    }
                    let Some(m) = p.machine.take() else { continue };
                    let addr = p.addr;
                    let lease = Some(self.cfg.stream_budget.lease());
                    p.task = Some(self.streams.spawn(async move {
                        // Bytes from the server (signs of life), and whether the
                        // connection came up (the request is written only then).
                        let (mut got, mut up) = (false, false);
                        let mut count = |w: crate::client::Wire<'_>| match w {
                            crate::client::Wire::Received(d) => got |= !d.is_empty(),
                            crate::client::Wire::Sent(_) => up = true,
                        };
                        let r = crate::client::drive_stream_with(
                            addr,
                            m,
                            &mut count,
                            STREAM_READ_BUF,
                            lease,
                        )
                        .await
                        .map(|mut a| {
                            a.addr = Some(addr);
                            Box::new(a)
                        });
                        (i, g, pi, Life { got, up }, r)
                    }));
                    self.stats.connections += 1;
                    continue;
                }
                // Detection rounds: while the server is silent, one datagram of each
                // protocol a round, and none after the last.
                let round = match &e.rounds {
                    Some(r) if !p.heard => match r.current(now) {
                        Some(k) if p.round != Some(k) => Some(k),
                        _ => continue,
                    },
                    _ => None,
                };
                loop {
                    if !self.pacer.take(now) {
                        exhausted = true;
                        break 'probes;
                    }
                    // A buffer of an earlier datagram, already sent: no allocation per
                    // datagram once the scan is under way.
                    let mut d = self.spare.pop().unwrap_or_default();
                    if m.poll_transmit_into(now, &mut d) {
                        self.outbox.push((si, p.addr, d));
                        p.sent = p.sent.saturating_add(1);
                        if round.is_some() {
                            p.round = round;
                            break;
                        }
                    } else {
                        self.spare.push(d);
                        // The token was not used: give it back.
                        self.pacer.refund();
                        break;
                    }
                }
            }
            if exhausted {
                e.queued = true;
                self.followups.push_front((i, g));
            } else {
                e.queued = false;
            }
            if self.outbox.len() >= batch::BATCH {
                self.flush();
            }
            self.progress(i, g, now, false);
            if exhausted {
                break;
            }
        }
        self.flush();
    }

    /// Sends the outbox, socket by socket (in order within each), a batch per system
    /// call. What a full socket does not take waits in `stalled` (and so does everything
    /// after it), to go first next time.
    fn flush(&mut self) {
        if self.outbox.is_empty() {
            return;
        }
        let mut out = std::mem::take(&mut self.outbox);
        // Stable: each socket's datagrams keep their order.
        out.sort_by_key(|(si, _, _)| *si);
        let mut at = 0;
        while at < out.len() {
            let si = out.get(at).map_or(0, |(si, _, _)| *si);
            let end = out
                .iter()
                .skip(at)
                .position(|(s, _, _)| *s != si)
                .map_or(out.len(), |k| at + k);
            let run = out.get(at..end).unwrap_or_default();
            let taken = if self.stalled.is_empty() {
                self.send_run(si, run)
            } else {
                0
            };
            for (s, addr, d) in out.drain(at + taken..end) {
                self.stalled.push_back((s, addr, d));
            }
            at += taken;
        }
        // The sent datagrams' buffers serve the next ones.
        for (_, _, d) in out.drain(..) {
            if self.spare.len() < 2 * batch::BATCH {
                self.spare.push(d);
            }
        }
        self.outbox = out;
    }

    /// Sends `run` (datagrams of socket `si`) from the start, a batch per call; returns
    /// how many are done with (sent, or failed for good). The rest did not fit in the
    /// socket's buffer.
    fn send_run(&mut self, si: usize, run: &[(usize, SocketAddr, Vec<u8>)]) -> usize {
        let Some(sock) = self.socket(si) else {
            return run.len();
        };
        let unspecified = SocketAddr::from((Ipv4Addr::UNSPECIFIED, 0));
        let (mut done, mut sent, mut failed, mut tries) = (0, 0u64, 0u64, 0);
        while done < run.len() {
            let mut msgs: [(&[u8], SocketAddr); batch::BATCH] = [(&[], unspecified); batch::BATCH];
            let mut k = 0;
            for (slot, (_, addr, d)) in msgs.iter_mut().zip(run.iter().skip(done)) {
                *slot = (d.as_slice(), *addr);
                k += 1;
            }
            let msgs = msgs.get(..k).unwrap_or_default();
            match sock.try_io(Interest::WRITABLE, || batch::send(sock, msgs)) {
                Ok(n) if n > 0 => {
                    done += n;
                    sent += n as u64;
                    tries = 0;
                }
                Ok(_) => break,
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => break,
                // A pending ICMP error of an earlier datagram to anyone (Linux,
                // IP_RECVERR: port or host unreachable, time exceeded…) fails the next
                // send once, unsent: send again (the error itself waits on the error
                // queue). Bounded: after `SEND_AGAIN` tries the datagram is given up
                // (its machine sends it again).
                Err(_) => {
                    tries += 1;
                    if tries > SEND_AGAIN {
                        done += 1;
                        failed += 1;
                        tries = 0;
                    }
                }
            }
        }
        self.stats.sent += sent;
        self.stats.send_errors += failed;
        done
    }
}

/// One error for a target whose every probe failed (or that ran out of time). The
/// protocols that heard from the server say more than those that did not: among them a
/// failure (malformed, rejected) before a timeout (a challenge, then silence); then a
/// refusal or a local error; then timeouts; options errors last. Ties go to the
/// best-ranked protocol. Probes still running at the deadline count as unanswered. An
/// auto-detected target refused by its host is refused whatever the protocol.
fn summarize(probes: &[Probe], auto: bool) -> QueryError {
    let mut best: Option<(u32, QueryError)> = None;
    for p in probes {
        let e = match &p.error {
            Some(e) => e.clone(),
            // A connection still running at the deadline (its machine's own total
            // timer normally ends it first).
            None if p.stream && p.running() => QueryError::StreamTimeout {
                protocol: p.protocol,
                waiting_for: "the answer",
                timer: "total",
                received: 0,
            },
            None if p.running() => QueryError::NoAnswer {
                protocol: p.protocol,
                step: None,
                attempts: 0,
            },
            None => continue,
        };
        let class = match e {
            QueryError::Options { .. } => 4,
            // Auto-detection: a port that takes no TCP connection, or whose
            // connection says nothing, says nothing against the datagram protocols.
            _ if auto && p.stream && !p.heard => 3,
            _ if p.heard && !e.is_timeout() => 0,
            _ if p.heard => 1,
            _ if !e.is_timeout() => 2,
            _ => 3,
        };
        let key = class * 1_000_000 + p.rank;
        if best.as_ref().is_none_or(|(k, _)| key < *k) {
            best = Some((key, e));
        }
    }
    match best {
        Some((_, QueryError::Refused { .. })) if auto => QueryError::Refused { protocol: None },
        // Nothing heard over any transport: what was tried over each.
        Some((key, _)) if auto && key / 1_000_000 == 3 && !probes.iter().any(|p| p.heard) => {
            undetected(probes)
        }
        Some((_, e)) => e,
        None => QueryError::NoAnswer {
            protocol: Protocol::Ogp,
            step: None,
            attempts: 0,
        },
    }
}

/// The error of an auto-detected target that heard nothing: the datagram protocols
/// asked (each once, in the order they went out) and what became of each connection.
fn undetected(probes: &[Probe]) -> QueryError {
    let mut datagram = Vec::new();
    let mut stream = Vec::new();
    for p in probes {
        if p.stream {
            // Still running at the deadline: silent.
            let fate = match (&p.fate, &p.error) {
                (Some(f), _) => *f,
                (None, Some(_)) => StreamFate::Failed,
                (None, None) => StreamFate::Silent,
            };
            if !stream.iter().any(|(q, _)| *q == p.protocol) {
                stream.push((p.protocol, fate));
            }
        } else if !datagram.contains(&p.protocol) {
            datagram.push(p.protocol);
        }
    }
    QueryError::Undetected { datagram, stream }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::Arc;

    /// With fewer connection slots than the in-flight cap (as when the open-file limit
    /// caps it), TCP targets wait for a slot, never hold more connections than the cap,
    /// and all finish; datagram targets are not held back.
    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn tcp_targets_wait_for_a_connection_slot() {
        let mut addrs = Vec::new();
        for k in 0..6u32 {
            let l = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
            addrs.push(l.local_addr().unwrap());
            let json: Arc<str> =
                ogp_testkit::slp::status_json(&format!("s{k}"), k, 10, "1.20.1", 763).into();
            tokio::spawn(ogp_testkit::slp::serve(l, json));
        }
        let mut cfg = ScanConfig {
            max_in_flight: 64,
            ..ScanConfig::default()
        };
        cfg.options.timing = cfg
            .options
            .timing
            .total_timeout(Duration::from_secs(20))
            .connect_timeout(Duration::from_secs(10))
            .read_timeout(Duration::from_secs(10));
        let (targets_tx, targets_rx) = mpsc::channel(16);
        let (results_tx, mut results_rx) = mpsc::channel(16);
        let (stats_tx, _stats_rx) = watch::channel(ScanStats::default());
        let mut engine = Engine::new(cfg, targets_rx, results_tx, stats_tx).unwrap();
        engine.stream_cap = 1;
        let run = tokio::spawn(async move {
            // The engine's own loop, checking the cap between its steps.
            let mut most = 0;
            loop {
                let now = Instant::now();
                engine.receive_all(now);
                engine.fire_timers(now);
                engine.admit_ready(now);
                engine.collect_resolved(now);
                engine.collect_streams(now);
                engine.transmit(Instant::now());
                most = most.max(engine.streams_live);
                assert!(
                    engine.streams_live <= 1,
                    "{} connections",
                    engine.streams_live
                );
                if !engine.flush_results() || engine.finished() || !engine.wait().await {
                    break;
                }
            }
            (most, engine.stats.connections)
        });
        for (k, a) in addrs.iter().enumerate() {
            targets_tx
                .send(Target::new(a.to_string(), Some(Protocol::Minecraft)).with_id(k as u64))
                .await
                .unwrap();
        }
        drop(targets_tx);
        let mut answered = 0;
        while let Some(r) = tokio::time::timeout(Duration::from_secs(60), results_rx.recv())
            .await
            .unwrap()
        {
            let a = r.outcome.unwrap();
            assert_eq!(a.status.player_count, Some(r.id as u32));
            answered += 1;
        }
        let (most, connections) = run.await.unwrap();
        assert_eq!(answered, 6);
        assert_eq!(most, 1);
        assert_eq!(connections, 6);
    }

    /// A target's own retries: `Some(0)` sends one datagram to a silent server and ends
    /// after one attempt; the scan's (here 3) send four.
    #[tokio::test]
    async fn a_targets_own_retries_bound_its_datagrams() {
        let silent: Vec<std::net::UdpSocket> = (0..2)
            .map(|_| std::net::UdpSocket::bind("127.0.0.1:0").unwrap())
            .collect();
        let mut cfg = ScanConfig::default();
        cfg.options.timing = cfg
            .options
            .timing
            .attempt_timeout(Duration::from_millis(30))
            .backoff_percent(100)
            .retries(3);
        let mut scan = super::super::start(cfg).unwrap();
        for (k, (s, retries)) in silent.iter().zip([Some(0), None]).enumerate() {
            let t = Target::new(s.local_addr().unwrap().to_string(), Some(Protocol::A2s))
                .with_id(k as u64)
                .with_retries(retries);
            scan.targets.send(t).await.unwrap();
        }
        drop(scan.targets);
        let mut elapsed = [Duration::ZERO; 2];
        while let Some(r) = scan.results.recv().await {
            assert!(r.outcome.is_err(), "{r:?}");
            elapsed[r.id as usize] = r.elapsed;
        }
        let got: Vec<usize> = silent
            .iter()
            .map(|s| {
                s.set_nonblocking(true).unwrap();
                let mut buf = [0u8; 1500];
                std::iter::from_fn(|| s.recv(&mut buf).ok()).count()
            })
            .collect();
        assert_eq!(got, [1, 4]);
        assert!(elapsed[0] < elapsed[1], "{elapsed:?}");
    }
}
