//! The responder over tokio: every protocol, on any number of UDP sockets, answered from
//! a [`StatusCell`] by the sans-IO [`Responder`] (one per answering thread, all sharing
//! one rate limiter and one challenge secret), so that a source's budget is not
//! multiplied by the number of `--listen` addresses or threads.
//!
//! ```no_run
//! # async fn f() -> std::io::Result<()> {
//! use ogp_net::{responder, StatusCell};
//! use ogp_proto::{responder::ResponderConfig, Status};
//!
//! let status = StatusCell::new(Status::default());
//! let handle = responder::spawn("0.0.0.0:22222".parse().unwrap(), status.clone(), ResponderConfig::default()).await?;
//! status.update(|s| s.host_name = Some("My server".into())); // from any thread, any time
//! handle.shutdown().await?; // sends the GameSpy "exiting" heartbeats, if configured
//! # Ok(()) }
//! ```
//!
//! Each socket has a task that, at each wake-up, reads everything waiting, a batch at a
//! time (`recvmmsg` on Linux: up to 32 datagrams per system call; one `recv_from` per
//! datagram elsewhere), takes one snapshot of the status and one short lock of its
//! responder for the batch (never held across I/O), and sends the answers from the socket
//! the queries came in on, a batch at a time (`sendmmsg`). One more task sleeps until the
//! responder's next timed send ([`Responder::poll_timeout`]) and sends what it hands out
//! (GameSpy v3 heartbeats to master servers, from each listening socket so that masters
//! see the query port). Nothing here makes a protocol decision.
//!
//! By default the socket tasks run in the caller's runtime. With
//! [`NetConfig::threads`] = N they run on N threads of their own, each with a socket per
//! listen address (`SO_REUSEPORT`) and its own [`Responder::worker`] (the same
//! challenge keys). On Linux a BPF program on each address's sockets sends every
//! datagram of a source address to the same thread, so each thread keeps rate limits of
//! its own ([`Responder::use_own_limits`]) and takes no lock on the answering path;
//! elsewhere the threads share sharded limiters
//! ([`SharedRateLimiter`](ogp_proto::guard::SharedRateLimiter)). Either way a source
//! has one budget. Games without tokio use
//! [`spawn_thread`], which runs the same on a thread of its own.
//!
//! Datagrams the kernel dropped because a socket's receive buffer was full
//! ([`NetConfig::recv_buffer`]) are reported by [`ResponderHandle::kernel_drops`].

use std::io;
use std::net::SocketAddr;
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::Instant;

use ogp_proto::gamespy3::responder::Gs3Outcome;
use ogp_proto::responder::{Listener, Outcome, Responder, ResponderConfig, Stats, Transmits};
use tokio::io::Interest;
use tokio::net::UdpSocket;
use tokio::sync::watch;
use tokio::task::JoinHandle;

use crate::batch::{self, RecvBufs, BATCH};
use crate::StatusCell;

/// The socket receive buffer asked for by default (the kernel's default, about 208 KB,
/// drops bursts of a few thousand datagrams before the task reads them). The kernel caps
/// it at `net.core.rmem_max`; a smaller grant is logged once per socket.
pub const SOCKET_RECV_BUFFER: usize = 4 << 20;

/// How the responder uses sockets and threads (what [`ResponderConfig`] leaves to the
/// network layer).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub struct NetConfig {
    /// Socket receive buffer asked for, in bytes (default [`SOCKET_RECV_BUFFER`]); the
    /// kernel caps it at `net.core.rmem_max`, which is logged with the `sysctl` to run.
    pub recv_buffer: usize,
    /// Threads answering (default 0).
    ///
    /// * 0: one task per socket in the caller's tokio runtime (as many sockets as
    ///   listen addresses).
    /// * N ≥ 1: N threads of their own, each with a single-threaded runtime and, for
    ///   every listen address, a socket of its own bound with `SO_REUSEPORT`. Each
    ///   thread answers with its own [`Responder::worker`]: the same challenge keys, its
    ///   own counters. On Linux every datagram of a source address goes to the same
    ///   thread (a reuseport BPF program hashes the IPv4 address or the IPv6 /64), and
    ///   each thread has rate limits of its own, each with 1/N of the tracked sources
    ///   and of the overall budget for unproven sources: nothing is shared on the
    ///   answering path. Where the program cannot be installed (other systems), the
    ///   kernel spreads datagrams by a hash of addresses and ports and the threads share
    ///   sharded limiters (one shard lock per datagram).
    pub threads: usize,
}

impl Default for NetConfig {
    fn default() -> Self {
        Self {
            recv_buffer: SOCKET_RECV_BUFFER,
            threads: 0,
        }
    }
}

impl NetConfig {
    /// With a receive buffer of `bytes`.
    pub fn with_recv_buffer(mut self, bytes: usize) -> Self {
        self.recv_buffer = bytes;
        self
    }

    /// With `threads` answering threads (0: tasks in the caller's runtime).
    pub fn with_threads(mut self, threads: usize) -> Self {
        self.threads = threads;
        self
    }
}

/// Binds a tokio UDP socket with a [`SOCKET_RECV_BUFFER`] receive buffer (dual-stack for
/// `[::]`, as the operating system defaults).
pub fn bind_udp(addr: SocketAddr) -> io::Result<UdpSocket> {
    UdpSocket::from_std(bind_std(addr, SOCKET_RECV_BUFFER, false)?)
}

/// Binds a non-blocking UDP socket asking for a receive buffer of `recv_buffer` bytes
/// (a smaller grant is logged, with the `sysctl` that raises the cap), with
/// `SO_REUSEPORT` when `reuse_port` (Unix; several sockets on one address, each read by
/// its own thread).
pub fn bind_std(
    addr: SocketAddr,
    recv_buffer: usize,
    reuse_port: bool,
) -> io::Result<std::net::UdpSocket> {
    use socket2::{Domain, Protocol, Socket, Type};
    let domain = if addr.is_ipv4() {
        Domain::IPV4
    } else {
        Domain::IPV6
    };
    let s = Socket::new(domain, Type::DGRAM, Some(Protocol::UDP))?;
    if recv_buffer > 0 && s.set_recv_buffer_size(recv_buffer).is_ok() {
        // Linux reports twice what it grants (the kernel's bookkeeping share).
        let reported = s.recv_buffer_size().unwrap_or(0);
        let granted = if cfg!(target_os = "linux") {
            reported / 2
        } else {
            reported
        };
        if granted < recv_buffer {
            tracing::warn!(
                "{addr}: the receive buffer is {granted} bytes (asked {recv_buffer}); \
                 bursts may be dropped by the kernel: raise the limit with \
                 `sysctl -w net.core.rmem_max={recv_buffer}`"
            );
        }
    }
    #[cfg(unix)]
    if reuse_port {
        s.set_reuse_port(true)?;
    }
    #[cfg(not(unix))]
    if reuse_port {
        return Err(io::Error::new(
            io::ErrorKind::Unsupported,
            "several threads per address need SO_REUSEPORT (Unix)",
        ));
    }
    s.set_nonblocking(true)?;
    s.bind(&addr.into())?;
    Ok(s.into())
}

/// The responders of a process (one per answering thread) and what the handle reports.
#[derive(Debug)]
struct Shared {
    /// One per thread; the first also runs the timed sends.
    workers: Vec<Mutex<Responder>>,
    /// The inode of every socket, for its kernel drop counter.
    inodes: Vec<u64>,
}

impl Shared {
    /// A worker's responder; a thread that panicked while holding it cannot have left it
    /// inconsistent (every call leaves it whole), so a poisoned lock is taken as is.
    fn lock(&self, i: usize) -> Option<MutexGuard<'_, Responder>> {
        self.workers
            .get(i)
            .map(|m| m.lock().unwrap_or_else(std::sync::PoisonError::into_inner))
    }

    fn stats(&self) -> Stats {
        let mut all = Stats::default();
        for i in 0..self.workers.len() {
            if let Some(r) = self.lock(i) {
                all.merge(&r.stats());
            }
        }
        all
    }

    fn thread_stats(&self) -> Vec<Stats> {
        (0..self.workers.len())
            .filter_map(|i| self.lock(i).map(|r| r.stats()))
            .collect()
    }

    fn kernel_drops(&self) -> Option<u64> {
        kernel_drops(&self.inodes)
    }
}

/// The inode of a socket (Linux: what `/proc/net/udp` names it by).
fn socket_inode(socket: &impl std::os::fd::AsRawFd) -> Option<u64> {
    use std::os::unix::fs::MetadataExt as _;
    let fd = socket.as_raw_fd();
    std::fs::metadata(format!("/proc/self/fd/{fd}"))
        .ok()
        .map(|m| m.ino())
}

/// Datagrams the kernel dropped at these sockets (receive buffer full), from the `drops`
/// column of `/proc/net/udp` and `/proc/net/udp6`; `None` where that is not readable.
fn kernel_drops(inodes: &[u64]) -> Option<u64> {
    let mut total = None;
    for file in ["/proc/net/udp", "/proc/net/udp6"] {
        let Ok(text) = std::fs::read_to_string(file) else {
            continue;
        };
        for line in text.lines().skip(1) {
            let cols: Vec<&str> = line.split_whitespace().collect();
            let (Some(inode), Some(drops)) = (cols.get(9), cols.get(12)) else {
                continue;
            };
            let (Ok(inode), Ok(drops)) = (inode.parse::<u64>(), drops.parse::<u64>()) else {
                continue;
            };
            if inodes.contains(&inode) {
                total = Some(total.unwrap_or(0) + drops);
            }
        }
    }
    total
}

/// A running responder.
#[derive(Debug)]
pub struct ResponderHandle {
    local_addrs: Vec<SocketAddr>,
    shared: Arc<Shared>,
    shutdown: watch::Sender<bool>,
    tasks: Vec<JoinHandle<()>>,
    threads: Vec<tokio::sync::oneshot::Receiver<()>>,
}

impl ResponderHandle {
    /// The address the (first) socket is bound to.
    pub fn local_addr(&self) -> SocketAddr {
        self.local_addrs
            .first()
            .copied()
            .unwrap_or_else(|| SocketAddr::from(([0, 0, 0, 0], 0)))
    }

    /// The addresses of every socket, in the order given.
    pub fn local_addrs(&self) -> &[SocketAddr] {
        &self.local_addrs
    }

    /// Counters so far, all sockets and threads together.
    pub fn stats(&self) -> Stats {
        self.shared.stats()
    }

    /// Counters so far of each answering thread ([`NetConfig::threads`]; one entry
    /// without threads of its own), in thread order.
    pub fn thread_stats(&self) -> Vec<Stats> {
        self.shared.thread_stats()
    }

    /// Datagrams the kernel dropped at the responder's sockets because their receive
    /// buffers were full (Linux, from `/proc/net/udp`; `None` elsewhere).
    pub fn kernel_drops(&self) -> Option<u64> {
        self.shared.kernel_drops()
    }

    /// A cloneable reader of the counters, for a task that outlives borrows of the handle
    /// (a metrics endpoint).
    pub fn stats_reader(&self) -> StatsReader {
        StatsReader(Arc::clone(&self.shared))
    }

    /// Stops answering, sends the last timed datagrams (the "exiting" heartbeats) and
    /// waits for every task and thread.
    pub async fn shutdown(self) -> io::Result<()> {
        let _ = self.shutdown.send(true);
        for t in self.tasks {
            t.await.map_err(io::Error::other)?;
        }
        for t in self.threads {
            let _ = t.await;
        }
        Ok(())
    }
}

/// Reads a running responder's counters ([`ResponderHandle::stats_reader`]): cheap to
/// clone, usable from any task or thread, also after the responder stopped (the last
/// counts).
///
/// The counters are plain numbers inside each thread's responder, counted under the lock
/// that thread already takes for each batch of datagrams; [`stats`](Self::stats) takes
/// each lock just long enough to copy them (a few hundred bytes), so reading adds no
/// lock, atomic or allocation to the answering path.
#[derive(Debug, Clone)]
pub struct StatsReader(Arc<Shared>);

impl StatsReader {
    /// A snapshot of the counters so far, all sockets and threads together.
    pub fn stats(&self) -> Stats {
        self.0.stats()
    }

    /// Datagrams the kernel dropped at the responder's sockets (receive buffers full);
    /// `None` where the system does not say.
    pub fn kernel_drops(&self) -> Option<u64> {
        self.0.kernel_drops()
    }
}

/// Binds `addr` and serves `status` on it, as a listener of the configured kind
/// ([`ResponderConfig::listener`]), until shut down.
pub async fn spawn(
    addr: SocketAddr,
    status: Arc<StatusCell>,
    config: ResponderConfig,
) -> io::Result<ResponderHandle> {
    let kind = config.listener;
    spawn_many(&[(addr, kind)], status, config).await
}

/// Binds every address and serves `status` on all of them with one responder; each
/// listener answers the protocols of its kind (the OGP v0.02 draft needs a port of its
/// own).
pub async fn spawn_many(
    listeners: &[(SocketAddr, Listener)],
    status: Arc<StatusCell>,
    config: ResponderConfig,
) -> io::Result<ResponderHandle> {
    spawn_many_with(listeners, status, config, NetConfig::default()).await
}

/// [`spawn_many`] with network settings: the receive buffer, and the number of
/// answering threads ([`NetConfig::threads`]).
pub async fn spawn_many_with(
    listeners: &[(SocketAddr, Listener)],
    status: Arc<StatusCell>,
    config: ResponderConfig,
    net: NetConfig,
) -> io::Result<ResponderHandle> {
    let copies = net.threads.max(1);
    // sockets[t][i]: thread t's socket for listener i.
    let mut sockets: Vec<Vec<(std::net::UdpSocket, Listener)>> = (0..copies)
        .map(|_| Vec::with_capacity(listeners.len()))
        .collect();
    for (addr, kind) in listeners {
        let bind = |a: SocketAddr| {
            bind_std(a, net.recv_buffer, net.threads > 1)
                .map_err(|e| io::Error::new(e.kind(), format!("binding {a}: {e}")))
        };
        let first = bind(*addr)?;
        // Port 0 picks a port for the first socket; the others join it there.
        let local = first.local_addr()?;
        let mut all = vec![first];
        for _ in 1..copies {
            all.push(bind(local)?);
        }
        for (per_thread, s) in sockets.iter_mut().zip(all) {
            per_thread.push((s, *kind));
        }
    }
    start(sockets, status, config, net)
}

/// Serves `status` on an already bound socket until shut down.
pub fn spawn_on(
    socket: UdpSocket,
    status: Arc<StatusCell>,
    config: ResponderConfig,
) -> io::Result<ResponderHandle> {
    let kind = config.listener;
    spawn_sockets(vec![(socket, kind)], status, config)
}

/// Serves `status` on already bound sockets, each answering the protocols of its kind,
/// with one responder, until shut down.
pub fn spawn_sockets(
    sockets: Vec<(UdpSocket, Listener)>,
    status: Arc<StatusCell>,
    config: ResponderConfig,
) -> io::Result<ResponderHandle> {
    let mut std_sockets = Vec::with_capacity(sockets.len());
    for (s, kind) in sockets {
        std_sockets.push((s.into_std()?, kind));
    }
    start(vec![std_sockets], status, config, NetConfig::default())
}

/// Starts the answering tasks (or threads) and the timed sends on bound sockets:
/// `sockets[t]` are the sockets of thread `t`, one per listener, in the same order for
/// every thread.
fn start(
    sockets: Vec<Vec<(std::net::UdpSocket, Listener)>>,
    status: Arc<StatusCell>,
    config: ResponderConfig,
    net: NetConfig,
) -> io::Result<ResponderHandle> {
    let now = Instant::now();
    let mut first = Responder::new(config, crate::random_secret()?, now);
    let first_sockets = sockets.first().map(Vec::as_slice).unwrap_or_default();
    let mut local_addrs = Vec::with_capacity(first_sockets.len());
    let mut timed = Vec::with_capacity(first_sockets.len());
    for (socket, kind) in first_sockets {
        let local = socket.local_addr()?;
        if *kind == Listener::Standard {
            first.add_listener(local, now);
        }
        local_addrs.push(local);
        // answering threads of their own: the timed sends need a descriptor of theirs
        // (their runtime's sockets go with the threads); without, the answering task's
        // own socket is shared (one descriptor a port: a game with thousands of ports)
        if net.threads > 0 {
            timed.push(TimedSocket::Own(socket.try_clone()?));
        }
    }
    let mut inodes = Vec::new();
    for s in sockets.iter().flatten() {
        inodes.extend(socket_inode(&s.0));
    }
    // Several threads: each source to one thread, and each thread its own limits.
    if sockets.len() > 1 {
        let steered = first_sockets
            .iter()
            .try_for_each(|(s, _)| crate::steer::by_source(s, sockets.len()));
        match steered {
            Ok(()) => first.use_own_limits(sockets.len(), now),
            Err(e) => tracing::info!(
                error = %e,
                "sources are not steered to threads; the threads share their rate limits"
            ),
        }
    }
    let mut workers = Vec::with_capacity(sockets.len());
    for _ in 1..sockets.len() {
        workers.push(Mutex::new(first.worker()));
    }
    workers.insert(0, Mutex::new(first));
    let shared = Arc::new(Shared { workers, inodes });
    let (tx, rx) = watch::channel(false);
    let mut tasks = Vec::new();
    let mut threads = Vec::new();
    if net.threads == 0 {
        for (socket, kind) in sockets.into_iter().flatten() {
            let socket = Arc::new(UdpSocket::from_std(socket)?);
            timed.push(TimedSocket::Shared(Arc::clone(&socket)));
            tasks.push(tokio::spawn(answer(
                socket,
                kind,
                Arc::clone(&status),
                Arc::clone(&shared),
                0,
                rx.clone(),
            )));
        }
    } else {
        for (t, per_thread) in sockets.into_iter().enumerate() {
            let rt = tokio::runtime::Builder::new_current_thread()
                .enable_all()
                .build()?;
            let (done_tx, done_rx) = tokio::sync::oneshot::channel::<()>();
            let status = Arc::clone(&status);
            let shared = Arc::clone(&shared);
            let rx = rx.clone();
            std::thread::Builder::new()
                .name(format!("ogp-responder-{t}"))
                .spawn(move || {
                    rt.block_on(async move {
                        let mut local = Vec::with_capacity(per_thread.len());
                        for (socket, kind) in per_thread {
                            match UdpSocket::from_std(socket) {
                                Ok(s) => local.push(tokio::spawn(answer(
                                    Arc::new(s),
                                    kind,
                                    Arc::clone(&status),
                                    Arc::clone(&shared),
                                    t,
                                    rx.clone(),
                                ))),
                                Err(e) => tracing::error!(error = %e, "registering a socket"),
                            }
                        }
                        for task in local {
                            let _ = task.await;
                        }
                    });
                    let _ = done_tx.send(());
                })?;
            threads.push(done_rx);
        }
    }
    tasks.push(tokio::spawn(timed_sends(
        timed,
        status,
        Arc::clone(&shared),
        rx,
    )));
    Ok(ResponderHandle {
        local_addrs,
        shared,
        shutdown: tx,
        tasks,
        threads,
    })
}

/// Answers the datagrams of one socket until shut down, with worker `worker`'s
/// responder: at each wake-up, reads everything waiting, a batch at a time (one system
/// call per batch on Linux), answers the batch under one lock, and sends the answers in
/// batches.
async fn answer(
    socket: Arc<UdpSocket>,
    kind: Listener,
    status: Arc<StatusCell>,
    shared: Arc<Shared>,
    worker: usize,
    mut shutdown: watch::Receiver<bool>,
) {
    // Answers are kept per socket (they wait for the send); the receive buffers are the
    // thread's (`batch::recv_with`): a thread may serve thousands of sockets.
    let mut outs: Vec<Transmits> = (0..BATCH).map(|_| Transmits::default()).collect();
    let mut srcs = [None::<SocketAddr>; BATCH];
    loop {
        tokio::select! {
            r = socket.readable() => if let Err(e) = r {
                tracing::error!(error = %e, "waiting for datagrams failed");
                tokio::time::sleep(std::time::Duration::from_millis(50)).await;
                continue;
            },
            _ = shutdown.changed() => return,
        }
        // Drain: until the socket has nothing more (bounded, so that shutdown and the
        // other tasks of this thread get their turn under a flood).
        for _ in 0..256 {
            let read = socket.try_io(Interest::READABLE, || {
                batch::recv_with(&socket, |bufs, n| {
                    handle_batch(
                        bufs, n, kind, &status, &shared, worker, &mut outs, &mut srcs,
                    );
                    n
                })
            });
            let n = match read {
                Ok(n) => n,
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => break,
                // ICMP errors from earlier sends surface here on some systems; they say
                // nothing about this socket's health.
                Err(e) if is_transient(&e) => continue,
                // Anything else is unexpected; a responder that stopped would go unnoticed
                // by the game, so log it and keep serving after a short pause.
                Err(e) => {
                    tracing::error!(error = %e, "receive failed");
                    tokio::time::sleep(std::time::Duration::from_millis(50)).await;
                    break;
                }
            };
            if n == 0 {
                break;
            }
            send_all(&socket, &outs, &srcs, n).await;
        }
    }
}

/// Answers the first `n` datagrams of `bufs` into `outs` (one per datagram), under one
/// lock of the worker's responder and with one snapshot of the status.
#[allow(clippy::too_many_arguments)]
fn handle_batch(
    bufs: &RecvBufs,
    n: usize,
    kind: Listener,
    status: &StatusCell,
    shared: &Shared,
    worker: usize,
    outs: &mut [Transmits],
    srcs: &mut [Option<SocketAddr>; BATCH],
) {
    let snapshot = status.peek();
    let Some(mut responder) = shared.lock(worker) else {
        return;
    };
    let now = Instant::now();
    for (i, (out, src_slot)) in outs.iter_mut().zip(srcs.iter_mut()).take(n).enumerate() {
        out.clear();
        *src_slot = None;
        let Some((datagram, src)) = bufs.get(i) else {
            continue;
        };
        let outcome = responder.handle_shared(kind, now, src, datagram, &snapshot, out);
        *src_slot = Some(src);
        tracing::trace!(%src, ?outcome, "handled");
        if outcome == Outcome::Gamespy3(Gs3Outcome::KeepAlive) {
            tracing::debug!(%src, "GameSpy v3 keep-alive");
        }
    }
}

/// Sends the answers of the first `n` datagrams of a batch, [`BATCH`] datagrams per
/// system call, waiting for the socket when its send buffer is full.
async fn send_all(
    socket: &UdpSocket,
    outs: &[Transmits],
    srcs: &[Option<SocketAddr>; BATCH],
    n: usize,
) {
    let msgs: Vec<(&[u8], SocketAddr)> = outs
        .iter()
        .zip(srcs.iter())
        .take(n)
        .filter_map(|(o, s)| s.map(|s| (o, s)))
        .flat_map(|(o, s)| o.iter().map(move |d| (d, s)))
        .collect();
    batch::send_all(socket, &msgs).await;
}

/// Sleeps until the responder's next timed send, sends what it hands out from the
/// socket it names; at shutdown, the last ones.
async fn timed_sends(
    sockets: Vec<TimedSocket>,
    status: Arc<StatusCell>,
    shared: Arc<Shared>,
    mut shutdown: watch::Receiver<bool>,
) {
    // by local address: a send is found its socket in one lookup, not a walk of
    // thousands of ports
    let by_local: std::collections::HashMap<SocketAddr, usize> = sockets
        .iter()
        .enumerate()
        .filter_map(|(i, s)| Some((s.local_addr().ok()?, i)))
        .collect();
    let send_all = |batch: Vec<ogp_proto::responder::Transmit>| {
        let sockets = &sockets;
        let by_local = &by_local;
        async move {
            for t in batch {
                let Some(s) = by_local.get(&t.from).and_then(|&i| sockets.get(i)) else {
                    continue;
                };
                match s.send_to(&t.datagram, t.to).await {
                    Ok(_) => tracing::debug!(to = %t.to, bytes = t.datagram.len(), "timed send"),
                    Err(e) => tracing::debug!(to = %t.to, error = %e, "timed send failed"),
                }
            }
        }
    };
    let Some(first) = shared.workers.first() else {
        return;
    };
    let lock = || {
        first
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    };
    loop {
        let due = lock().poll_timeout();
        tokio::select! {
            _ = sleep_until_opt(due) => {
                let batch = {
                    let mut r = lock();
                    r.handle_timeout(Instant::now(), &status.load());
                    std::iter::from_fn(|| r.poll_transmit()).collect::<Vec<_>>()
                };
                send_all(batch).await;
            }
            _ = shutdown.changed() => {
                let batch = {
                    let mut r = lock();
                    r.close(&status.load());
                    std::iter::from_fn(|| r.poll_transmit()).collect::<Vec<_>>()
                };
                send_all(batch).await;
                return;
            }
        }
    }
}

/// A socket the timed sends go out on.
enum TimedSocket {
    /// A descriptor of their own (the answering task's socket is another thread's): a
    /// non-blocking send, a full send buffer loses this one, and the next is due soon.
    Own(std::net::UdpSocket),
    /// The answering task's socket, on the same runtime.
    Shared(Arc<UdpSocket>),
}

impl TimedSocket {
    fn local_addr(&self) -> io::Result<SocketAddr> {
        match self {
            Self::Own(s) => s.local_addr(),
            Self::Shared(s) => s.local_addr(),
        }
    }

    async fn send_to(&self, datagram: &[u8], to: SocketAddr) -> io::Result<usize> {
        match self {
            Self::Own(s) => s.send_to(datagram, to),
            Self::Shared(s) => s.send_to(datagram, to).await,
        }
    }
}

async fn sleep_until_opt(at: Option<Instant>) {
    match at {
        Some(at) => tokio::time::sleep_until(at.into()).await,
        None => std::future::pending().await,
    }
}

/// Whether a receive error says nothing about the socket's health (ICMP errors of earlier
/// sends, interruptions): receive again.
pub fn is_transient(e: &io::Error) -> bool {
    matches!(
        e.kind(),
        io::ErrorKind::ConnectionRefused
            | io::ErrorKind::ConnectionReset
            | io::ErrorKind::Interrupted
            | io::ErrorKind::WouldBlock
    )
}

/// A responder running on a thread of its own, for games without tokio.
#[derive(Debug)]
pub struct ThreadedResponder {
    local_addrs: Vec<SocketAddr>,
    shared: Arc<Shared>,
    stop: Option<tokio::sync::oneshot::Sender<()>>,
    thread: Option<std::thread::JoinHandle<io::Result<()>>>,
}

impl ThreadedResponder {
    /// The addresses of every socket, in the order given.
    pub fn local_addrs(&self) -> &[SocketAddr] {
        &self.local_addrs
    }

    /// Counters so far, all sockets together.
    pub fn stats(&self) -> Stats {
        self.shared.stats()
    }

    /// Stops answering, sends the last timed datagrams and joins the thread.
    pub fn stop(mut self) -> io::Result<()> {
        self.stop_inner()
    }

    fn stop_inner(&mut self) -> io::Result<()> {
        if let Some(s) = self.stop.take() {
            let _ = s.send(());
        }
        match self.thread.take() {
            Some(t) => t
                .join()
                .map_err(|_| io::Error::other("the responder thread panicked"))?,
            None => Ok(()),
        }
    }
}

impl Drop for ThreadedResponder {
    fn drop(&mut self) {
        let _ = self.stop_inner();
    }
}

/// Binds every address and serves `status` on a thread of its own (its own
/// single-threaded tokio runtime), until [`ThreadedResponder::stop`] or drop. For games
/// and engines without an async runtime: publish the status with
/// [`StatusCell::set`]/[`StatusCell::update`] from any thread.
pub fn spawn_thread(
    listeners: &[(SocketAddr, Listener)],
    status: Arc<StatusCell>,
    config: ResponderConfig,
) -> io::Result<ThreadedResponder> {
    let listeners = listeners.to_vec();
    let (ready_tx, ready_rx) = std::sync::mpsc::channel();
    let (stop_tx, stop_rx) = tokio::sync::oneshot::channel::<()>();
    let thread = std::thread::Builder::new()
        .name("ogp-responder".into())
        .spawn(move || -> io::Result<()> {
            let rt = tokio::runtime::Builder::new_current_thread()
                .enable_all()
                .build()?;
            rt.block_on(async move {
                let handle = match spawn_many(&listeners, status, config).await {
                    Ok(h) => h,
                    Err(e) => {
                        let _ = ready_tx.send(Err(io::Error::new(e.kind(), e.to_string())));
                        return Err(e);
                    }
                };
                let _ = ready_tx.send(Ok((
                    handle.local_addrs().to_vec(),
                    Arc::clone(&handle.shared),
                )));
                let _ = stop_rx.await;
                handle.shutdown().await
            })
        })?;
    match ready_rx.recv() {
        Ok(Ok((local_addrs, shared))) => Ok(ThreadedResponder {
            local_addrs,
            shared,
            stop: Some(stop_tx),
            thread: Some(thread),
        }),
        Ok(Err(e)) => {
            let _ = thread.join();
            Err(e)
        }
        Err(_) => Err(match thread.join() {
            Ok(Err(e)) => e,
            _ => io::Error::other("the responder thread ended before it started"),
        }),
    }
}
