//! The responder as a tokio task: one UDP socket, every protocol, answers from a
//! [`StatusCell`].
//!
//! The task takes a snapshot of the status for each datagram, lets the sans-IO
//! [`Responder`] build the answers, drops the snapshot and only then sends: no lock is
//! held during I/O and the game's thread is never blocked. Answers go out from the socket
//! the query came in on.
//!
//! With a [`HeartbeatConfig`], the task also sends GameSpy v3 heartbeats to master
//! servers from the same socket (so masters see the query port): one at start, one
//! every 60 seconds, one soon after the status changes (checked once a second, at most
//! every 10 seconds), and a last one marked "exiting" at shutdown. Keep-alives from the
//! masters are logged.

use std::io;
use std::net::SocketAddr;
use std::sync::{Arc, Mutex};
use std::time::Instant;

use std::time::Duration;

use ogp_proto::gamespy3::heartbeat::{Heartbeat, Schedule, StateChanged};
use ogp_proto::gamespy3::responder::Gs3Outcome;
use ogp_proto::responder::{Outcome, Responder, ResponderConfig, Stats, Transmits};
use ogp_proto::Status;
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

/// GameSpy v3 heartbeats to master servers.
#[derive(Debug, Clone)]
pub struct HeartbeatConfig {
    /// The master servers.
    pub masters: Vec<SocketAddr>,
    /// The `gamename` to announce (default: the status's `game_name`).
    pub game_name: Option<String>,
    /// Regular cadence (the spec's 60 s).
    pub interval: Duration,
    /// Shortest gap between heartbeats after a status change (10 s).
    pub min_gap: Duration,
}

impl HeartbeatConfig {
    /// Heartbeats to `masters` on the spec's cadence.
    pub fn new(masters: Vec<SocketAddr>) -> Self {
        Self {
            masters,
            game_name: None,
            interval: Duration::from_secs(60),
            min_gap: Duration::from_secs(10),
        }
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

/// Binds `addr`, serves `status` on it and sends heartbeats, until shut down.
pub async fn spawn_with_heartbeat(
    addr: SocketAddr,
    status: Arc<StatusCell>,
    config: ResponderConfig,
    heartbeat: HeartbeatConfig,
) -> io::Result<ResponderHandle> {
    let socket = UdpSocket::bind(addr).await?;
    start(socket, status, config, Some(heartbeat))
}

/// Serves `status` on an already bound socket until shut down.
pub fn spawn_on(
    socket: UdpSocket,
    status: Arc<StatusCell>,
    config: ResponderConfig,
) -> io::Result<ResponderHandle> {
    start(socket, status, config, None)
}

fn start(
    socket: UdpSocket,
    status: Arc<StatusCell>,
    config: ResponderConfig,
    heartbeat: Option<HeartbeatConfig>,
) -> io::Result<ResponderHandle> {
    let local_addr = socket.local_addr()?;
    let responder = Responder::new(config, crate::random_secret()?, Instant::now());
    let stats = Arc::new(Mutex::new(Stats::default()));
    let (tx, rx) = watch::channel(false);
    let beats = heartbeat.map(|h| Beats::new(h, local_addr));
    let task = tokio::spawn(run(socket, status, responder, stats.clone(), rx, beats));
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
    mut beats: Option<Beats>,
) -> io::Result<()> {
    let mut buf = vec![0u8; RECV_BUF];
    let mut out = Transmits::default();
    loop {
        let tick = beats.as_ref().map(|b| b.next_check);
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
            _ = shutdown.changed() => {
                if let Some(b) = &mut beats {
                    b.send(&socket, &status.load(), StateChanged::Exiting).await;
                }
                return Ok(());
            }
            _ = sleep_until_opt(tick) => {
                if let Some(b) = &mut beats {
                    b.tick(&socket, &status).await;
                }
                continue;
            }
        };
        let datagram = buf.get(..n).unwrap_or_default();
        let outcome = {
            let snapshot = status.peek();
            responder.handle(Instant::now(), src, datagram, &snapshot, &mut out)
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
        // Publish the counters after the answers went out (an uncontended lock; a
        // reader holding it only delays the update to the next datagram).
        if let Ok(mut s) = stats.try_lock() {
            *s = responder.stats();
        }
    }
}

async fn sleep_until_opt(at: Option<tokio::time::Instant>) {
    match at {
        Some(at) => tokio::time::sleep_until(at).await,
        None => std::future::pending().await,
    }
}

/// The heartbeat side of the task.
struct Beats {
    config: HeartbeatConfig,
    schedule: Schedule,
    instance_key: u32,
    local: SocketAddr,
    last_status: Option<Arc<Status>>,
    next_check: tokio::time::Instant,
}

impl Beats {
    fn new(config: HeartbeatConfig, local: SocketAddr) -> Self {
        Self {
            schedule: Schedule::with(config.interval, config.min_gap),
            config,
            instance_key: crate::random_u32(),
            local,
            last_status: None,
            next_check: tokio::time::Instant::now(),
        }
    }

    /// Notes status changes and sends a heartbeat when one is due.
    async fn tick(&mut self, socket: &UdpSocket, status: &StatusCell) {
        let now = tokio::time::Instant::now();
        let snapshot = status.load();
        if let Some(last) = &self.last_status {
            if !Arc::ptr_eq(last, &snapshot) && **last != *snapshot {
                self.schedule.status_changed();
            }
        }
        self.last_status = Some(Arc::clone(&snapshot));
        if let Some(kind) = self.schedule.poll(now.into_std()) {
            self.send(socket, &snapshot, kind).await;
        }
        let check = Duration::from_secs(1).min(self.config.min_gap.max(Duration::from_millis(10)));
        let due = self.schedule.next_due().map_or(now + check, |d| {
            tokio::time::Instant::from_std(d).min(now + check)
        });
        self.next_check = due.max(now + Duration::from_millis(5));
    }

    async fn send(&mut self, socket: &UdpSocket, status: &Status, kind: StateChanged) {
        let mut keys = ogp_proto::gamespy3::mapping::server_pairs(status);
        keys.retain(|(k, _)| k != "gamename");
        let ip = self.local.ip();
        let hb = Heartbeat {
            instance_key: self.instance_key,
            local_ips: if ip.is_unspecified() || !ip.is_ipv4() {
                Vec::new()
            } else {
                vec![ip.to_string().into()]
            },
            local_port: Some(self.local.port()),
            natneg: Some(false),
            state_changed: Some(kind),
            game_name: self
                .config
                .game_name
                .as_deref()
                .map(Into::into)
                .or_else(|| status.game_name.clone()),
            keys,
        };
        let bytes = hb.to_bytes();
        for m in &self.config.masters {
            match socket.send_to(&bytes, m).await {
                Ok(_) => tracing::debug!(master = %m, ?kind, bytes = bytes.len(), "heartbeat sent"),
                Err(e) => tracing::debug!(master = %m, error = %e, "heartbeat not sent"),
            }
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
