//! The responder over tokio: every protocol, on any number of UDP sockets, answered from
//! a [`StatusCell`] by **one** sans-IO [`Responder`] per process, so that one rate
//! limiter and one challenge secret cover every socket (a source's budget is not
//! multiplied by the number of `--listen` addresses).
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
//! Each socket has a task that takes a snapshot of the status for each datagram, lets
//! the responder build the answers (a short, uncontended lock: never held across I/O),
//! and sends them from the socket the query came in on. One more task sleeps until the
//! responder's next timed send ([`Responder::poll_timeout`]) and sends what it hands out
//! (GameSpy v3 heartbeats to master servers, from each listening socket so that masters
//! see the query port). Nothing here makes a protocol decision. Games without tokio use
//! [`spawn_thread`], which runs the same on a thread of its own.

use std::io;
use std::net::SocketAddr;
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::Instant;

use ogp_proto::gamespy3::responder::Gs3Outcome;
use ogp_proto::responder::{Listener, Outcome, Responder, ResponderConfig, Stats, Transmits};
use tokio::net::UdpSocket;
use tokio::sync::watch;
use tokio::task::JoinHandle;

use crate::StatusCell;

/// Receive buffer: any datagram larger than the biggest query we answer (500 bytes) is
/// ignored, so reading a little more than that is enough to tell.
const RECV_BUF: usize = 2048;

/// The socket receive buffer asked for (the kernel's default, about 208 KB, drops bursts
/// of a few thousand datagrams before the task reads them). The kernel caps it at
/// `net.core.rmem_max`; a smaller grant is logged once per socket.
pub const SOCKET_RECV_BUFFER: usize = 4 << 20;

/// Binds a tokio UDP socket with a large receive buffer (dual-stack for
/// `[::]`, as the operating system defaults).
pub fn bind_udp(addr: SocketAddr) -> io::Result<UdpSocket> {
    use socket2::{Domain, Protocol, Socket, Type};
    let domain = if addr.is_ipv4() {
        Domain::IPV4
    } else {
        Domain::IPV6
    };
    let s = Socket::new(domain, Type::DGRAM, Some(Protocol::UDP))?;
    if s.set_recv_buffer_size(SOCKET_RECV_BUFFER).is_ok() {
        // Linux reports twice what it grants (the kernel's bookkeeping share).
        let granted = s.recv_buffer_size().unwrap_or(0) / 2;
        if granted < SOCKET_RECV_BUFFER / 2 {
            tracing::warn!(
                "{addr}: the receive buffer is {granted} bytes (asked {SOCKET_RECV_BUFFER}); \
                 bursts may be dropped by the kernel: raise the limit with \
                 `sysctl -w net.core.rmem_max={SOCKET_RECV_BUFFER}`"
            );
        }
    }
    s.set_nonblocking(true)?;
    s.bind(&addr.into())?;
    UdpSocket::from_std(s.into())
}

/// The one responder of a process, shared by its socket tasks.
#[derive(Debug)]
struct Shared(Mutex<Responder>);

impl Shared {
    /// The responder; a task that panicked while holding it cannot have left it
    /// inconsistent (every call leaves it whole), so a poisoned lock is taken as is.
    fn lock(&self) -> MutexGuard<'_, Responder> {
        self.0
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }
}

/// A running responder.
#[derive(Debug)]
pub struct ResponderHandle {
    local_addrs: Vec<SocketAddr>,
    shared: Arc<Shared>,
    shutdown: watch::Sender<bool>,
    tasks: Vec<JoinHandle<()>>,
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

    /// Counters so far, all sockets together.
    pub fn stats(&self) -> Stats {
        self.shared.lock().stats()
    }

    /// A cloneable reader of the counters, for a task that outlives borrows of the handle
    /// (a metrics endpoint).
    pub fn stats_reader(&self) -> StatsReader {
        StatsReader(Arc::clone(&self.shared))
    }

    /// Stops answering, sends the last timed datagrams (the "exiting" heartbeats) and
    /// waits for every task.
    pub async fn shutdown(self) -> io::Result<()> {
        let _ = self.shutdown.send(true);
        for t in self.tasks {
            t.await.map_err(io::Error::other)?;
        }
        Ok(())
    }
}

/// Reads a running responder's counters ([`ResponderHandle::stats_reader`]): cheap to
/// clone, usable from any task or thread, also after the responder stopped (the last
/// counts).
///
/// The counters are plain numbers inside the responder, counted by the socket tasks under
/// the lock they already take for each datagram; [`stats`](Self::stats) takes that lock
/// just long enough to copy them (a few hundred bytes), so reading adds no lock, atomic or
/// allocation to the answering path.
#[derive(Debug, Clone)]
pub struct StatsReader(Arc<Shared>);

impl StatsReader {
    /// A snapshot of the counters so far, all sockets together.
    pub fn stats(&self) -> Stats {
        self.0.lock().stats()
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
    let mut sockets = Vec::with_capacity(listeners.len());
    for (addr, kind) in listeners {
        let socket = bind_udp(*addr)
            .map_err(|e| io::Error::new(e.kind(), format!("binding {addr}: {e}")))?;
        sockets.push((socket, *kind));
    }
    spawn_sockets(sockets, status, config)
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
    let now = Instant::now();
    let mut responder = Responder::new(config, crate::random_secret()?, now);
    let mut local_addrs = Vec::with_capacity(sockets.len());
    let mut bound = Vec::with_capacity(sockets.len());
    for (socket, kind) in sockets {
        let local = socket.local_addr()?;
        if kind == Listener::Standard {
            responder.add_listener(local, now);
        }
        local_addrs.push(local);
        bound.push((Arc::new(socket), kind));
    }
    let shared = Arc::new(Shared(Mutex::new(responder)));
    let (tx, rx) = watch::channel(false);
    let mut tasks = Vec::with_capacity(bound.len() + 1);
    for (socket, kind) in &bound {
        tasks.push(tokio::spawn(answer(
            Arc::clone(socket),
            *kind,
            Arc::clone(&status),
            Arc::clone(&shared),
            rx.clone(),
        )));
    }
    let senders = bound.into_iter().map(|(s, _)| s).collect();
    tasks.push(tokio::spawn(timed_sends(
        senders,
        status,
        Arc::clone(&shared),
        rx,
    )));
    Ok(ResponderHandle {
        local_addrs,
        shared,
        shutdown: tx,
        tasks,
    })
}

/// Answers the datagrams of one socket until shut down.
async fn answer(
    socket: Arc<UdpSocket>,
    kind: Listener,
    status: Arc<StatusCell>,
    shared: Arc<Shared>,
    mut shutdown: watch::Receiver<bool>,
) {
    let mut buf = vec![0u8; RECV_BUF];
    let mut out = Transmits::default();
    loop {
        let (n, src) = tokio::select! {
            r = socket.recv_from(&mut buf) => match r {
                Ok(v) => v,
                // ICMP errors from earlier sends surface here on some systems; they say
                // nothing about this socket's health.
                Err(e) if is_transient(&e) => continue,
                // Anything else is unexpected; a responder that stopped would go unnoticed
                // by the game, so log it and keep serving after a short pause.
                Err(e) => {
                    tracing::error!(error = %e, "receive failed");
                    tokio::time::sleep(std::time::Duration::from_millis(50)).await;
                    continue;
                }
            },
            _ = shutdown.changed() => return,
        };
        let datagram = buf.get(..n).unwrap_or_default();
        let outcome = {
            let snapshot = status.peek();
            shared
                .lock()
                .handle_on(kind, Instant::now(), src, datagram, &snapshot, &mut out)
        };
        tracing::trace!(%src, ?outcome, "handled");
        if outcome == Outcome::Gamespy3(Gs3Outcome::KeepAlive) {
            tracing::debug!(%src, "GameSpy v3 keep-alive");
        }
        for d in out.iter() {
            if let Err(e) = socket.send_to(d, src).await {
                tracing::debug!(%src, error = %e, "send failed");
            }
        }
    }
}

/// Sleeps until the responder's next timed send, sends what it hands out from the
/// socket it names; at shutdown, the last ones.
async fn timed_sends(
    sockets: Vec<Arc<UdpSocket>>,
    status: Arc<StatusCell>,
    shared: Arc<Shared>,
    mut shutdown: watch::Receiver<bool>,
) {
    let locals: Vec<Option<SocketAddr>> = sockets.iter().map(|s| s.local_addr().ok()).collect();
    let send_all = |batch: Vec<ogp_proto::responder::Transmit>| {
        let sockets = &sockets;
        let locals = &locals;
        async move {
            for t in batch {
                let Some(i) = locals.iter().position(|l| *l == Some(t.from)) else {
                    continue;
                };
                let Some(s) = sockets.get(i) else { continue };
                match s.send_to(&t.datagram, t.to).await {
                    Ok(_) => tracing::debug!(to = %t.to, bytes = t.datagram.len(), "timed send"),
                    Err(e) => tracing::debug!(to = %t.to, error = %e, "timed send failed"),
                }
            }
        }
    };
    loop {
        let due = shared.lock().poll_timeout();
        tokio::select! {
            _ = sleep_until_opt(due) => {
                let batch = {
                    let mut r = shared.lock();
                    r.handle_timeout(Instant::now(), &status.load());
                    std::iter::from_fn(|| r.poll_transmit()).collect::<Vec<_>>()
                };
                send_all(batch).await;
            }
            _ = shutdown.changed() => {
                let batch = {
                    let mut r = shared.lock();
                    r.close(&status.load());
                    std::iter::from_fn(|| r.poll_transmit()).collect::<Vec<_>>()
                };
                send_all(batch).await;
                return;
            }
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
        self.shared.lock().stats()
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
