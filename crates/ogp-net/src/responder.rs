//! The responder as a tokio task: one UDP socket, every protocol, answers from a
//! [`StatusCell`].
//!
//! The task takes a snapshot of the status for each datagram, lets the sans-IO
//! [`Responder`] build the answers, drops the snapshot and only then sends: no lock is
//! held during I/O and the game's thread is never blocked. Answers go out from the socket
//! the query came in on.

use std::io;
use std::net::SocketAddr;
use std::sync::{Arc, Mutex};
use std::time::Instant;

use ogp_proto::responder::{Responder, ResponderConfig, Stats, Transmits};
use tokio::net::UdpSocket;
use tokio::sync::watch;
use tokio::task::JoinHandle;

use crate::StatusCell;

/// Receive buffer: any datagram larger than the biggest query we answer (500 bytes) is
/// ignored, so reading a little more than that is enough to tell.
const RECV_BUF: usize = 2048;

/// A running responder.
#[derive(Debug)]
pub struct ResponderHandle {
    local_addr: SocketAddr,
    stats: Arc<Mutex<Stats>>,
    shutdown: watch::Sender<bool>,
    task: JoinHandle<io::Result<()>>,
}

impl ResponderHandle {
    /// The address the socket is bound to.
    pub fn local_addr(&self) -> SocketAddr {
        self.local_addr
    }

    /// Counters so far.
    pub fn stats(&self) -> Stats {
        self.stats.lock().map(|s| *s).unwrap_or_default()
    }

    /// Stops the task and waits for it.
    pub async fn shutdown(self) -> io::Result<()> {
        let _ = self.shutdown.send(true);
        self.task.await.map_err(io::Error::other)?
    }
}

/// Binds `addr` and serves `status` on it until shut down.
pub async fn spawn(
    addr: SocketAddr,
    status: Arc<StatusCell>,
    config: ResponderConfig,
) -> io::Result<ResponderHandle> {
    let socket = UdpSocket::bind(addr).await?;
    spawn_on(socket, status, config)
}

/// Serves `status` on an already bound socket until shut down.
pub fn spawn_on(
    socket: UdpSocket,
    status: Arc<StatusCell>,
    config: ResponderConfig,
) -> io::Result<ResponderHandle> {
    let local_addr = socket.local_addr()?;
    let responder = Responder::new(config, crate::random_secret()?, Instant::now());
    let stats = Arc::new(Mutex::new(Stats::default()));
    let (tx, rx) = watch::channel(false);
    let task = tokio::spawn(run(socket, status, responder, stats.clone(), rx));
    Ok(ResponderHandle {
        local_addr,
        stats,
        shutdown: tx,
        task,
    })
}

async fn run(
    socket: UdpSocket,
    status: Arc<StatusCell>,
    mut responder: Responder,
    stats: Arc<Mutex<Stats>>,
    mut shutdown: watch::Receiver<bool>,
) -> io::Result<()> {
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
            _ = shutdown.changed() => return Ok(()),
        };
        let datagram = buf.get(..n).unwrap_or_default();
        let outcome = {
            let snapshot = status.peek();
            responder.handle(Instant::now(), src, datagram, &snapshot, &mut out)
        };
        tracing::trace!(%src, ?outcome, "handled");
        for d in out.iter() {
            if let Err(e) = socket.send_to(d, src).await {
                tracing::debug!(%src, error = %e, "send failed");
            }
        }
        // Publish the counters after the answers went out (an uncontended lock; a
        // reader holding it only delays the update to the next datagram).
        if let Ok(mut s) = stats.try_lock() {
            *s = responder.stats();
        }
    }
}

fn is_transient(e: &io::Error) -> bool {
    matches!(
        e.kind(),
        io::ErrorKind::ConnectionRefused
            | io::ErrorKind::ConnectionReset
            | io::ErrorKind::Interrupted
            | io::ErrorKind::WouldBlock
    )
}
