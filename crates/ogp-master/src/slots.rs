//! The connections a TCP listener keeps (the HTTP server's and the GameSpy master
//! list's): the sans-IO table of [`ogp_proto::master::connections`] behind a lock, with
//! a closer per connection (dropping it ends the connection's task) and a gauge of the
//! connections open.

use std::collections::HashMap;
use std::net::{IpAddr, SocketAddr};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use ogp_proto::master::connections::{Cap, ConnectionId, Connections};
use prometheus_client::metrics::gauge::Gauge;
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::oneshot;

pub(crate) fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
}

/// The connections kept, and how to close each: dropping its closer.
pub(crate) struct Table {
    pub(crate) connections: Connections,
    pub(crate) closers: HashMap<ConnectionId, oneshot::Sender<()>>,
}

/// A connection taken into the table: its tracker, and what resolves when it is
/// displaced.
pub(crate) struct Permit {
    pub(crate) tracker: Tracker,
    pub(crate) closed: oneshot::Receiver<()>,
}

impl Permit {
    /// Takes a connection from `ip`, closing the one it displaces; the cap that was full
    /// when one was displaced.
    pub(crate) fn take(
        table: &Arc<Mutex<Table>>,
        ip: IpAddr,
        gauge: &Gauge,
    ) -> (Self, Option<Cap>) {
        let (tx, rx) = oneshot::channel();
        let mut t = lock(table);
        let admission = t.connections.admit(ip);
        let displaced = admission.displaced.map(|(victim, cap)| {
            // dropping the closer ends the victim's task, which drops its connection
            t.closers.remove(&victim);
            cap
        });
        t.closers.insert(admission.id, tx);
        gauge.set(open_gauge(t.connections.open()));
        let tracker = Tracker {
            table: table.clone(),
            id: admission.id,
            gauge: gauge.clone(),
        };
        (
            Self {
                tracker,
                closed: rx,
            },
            displaced,
        )
    }

    pub(crate) fn tracker(&self) -> Tracker {
        self.tracker.clone()
    }
}

/// Tells the table what a connection does: a request came, its answer went, it ended.
#[derive(Clone)]
pub(crate) struct Tracker {
    table: Arc<Mutex<Table>>,
    id: ConnectionId,
    gauge: Gauge,
}

impl Tracker {
    pub(crate) fn received(&self) {
        lock(&self.table).connections.received(self.id);
    }

    pub(crate) fn request(&self) {
        lock(&self.table).connections.request(self.id);
    }

    pub(crate) fn answered(&self) {
        lock(&self.table).connections.answered(self.id);
    }

    pub(crate) fn flushed(&self) {
        lock(&self.table).connections.flushed(self.id);
    }

    pub(crate) fn hold(&self) {
        lock(&self.table).connections.hold(self.id);
    }

    /// Reserves `bytes` of `http_answer_bytes` for this connection's answer, closing the
    /// slow readers whose bytes it takes: whether they are reserved, and how many
    /// connections were closed for them.
    pub(crate) fn reserve(&self, bytes: usize) -> (bool, usize) {
        let mut t = lock(&self.table);
        let r = t.connections.reserve(self.id, bytes, Instant::now());
        for v in &r.displaced {
            t.closers.remove(v);
        }
        if !r.displaced.is_empty() {
            self.gauge.set(open_gauge(t.connections.open()));
        }
        (r.granted, r.displaced.len())
    }

    /// The answer reserved for is made: `bytes` long.
    pub(crate) fn resize(&self, bytes: usize) {
        lock(&self.table)
            .connections
            .resize(self.id, bytes, Instant::now());
    }

    pub(crate) fn release(&self) {
        let mut t = lock(&self.table);
        t.connections.release(self.id);
        t.closers.remove(&self.id);
        self.gauge.set(open_gauge(t.connections.open()));
    }
}

pub(crate) fn open_gauge(n: usize) -> i64 {
    i64::try_from(n).unwrap_or(i64::MAX)
}

/// The next connection of `listener`, or `None` after an error (out of file
/// descriptors, a connection reset before it was taken): then it waits a little rather
/// than spin, and says so at most once a second (`last_error`), naming `what`.
pub(crate) async fn accept(
    listener: &TcpListener,
    what: &str,
    last_error: &mut Option<Instant>,
) -> Option<(TcpStream, SocketAddr)> {
    match listener.accept().await {
        Ok(x) => Some(x),
        Err(e) => {
            if last_error.is_none_or(|t| t.elapsed() >= Duration::from_secs(1)) {
                tracing::warn!("{what} accept: {e}");
                *last_error = Some(Instant::now());
            }
            tokio::time::sleep(Duration::from_millis(20)).await;
            None
        }
    }
}
