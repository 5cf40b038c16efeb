//! The Cube 2 master over TCP (opt-in: `cube2_master`; Sauerbraten's and Red Eclipse's
//! masters listen on 28787 and 28800): servers register on it (`regserv PORT`,
//! `server PORT …`) and clients ask it for the list (`list`). The lines are the
//! sans-IO [`ogp_proto::cube2::master`]; this moves their bytes within the master's
//! bounds:
//!
//! * registrations: handed to the UDP task's registrar (the caps per source and prefix
//!   of every registration), which verifies the server by the Cube 2 ping to its game
//!   port + 1 from the master's UDP socket; the answer (`succreg` / `failreg`, Red
//!   Eclipse's `echo` lines) is written once its verdict is in. A verified server's
//!   connection is kept while the server keeps it (it sends a line at least every
//!   `cube2_server_idle_secs`; Sauerbraten registers again hourly) and counts as its
//!   registration: it is noted again every minute, so the server stays up;
//! * connections: the [`ogp_proto::master::connections`] table, as the GameSpy list's
//!   (per address, per network, in total; a newcomer displaces one), a verified
//!   server's connection ranking as one being answered (displaced last);
//! * time: a connection that has registered no verified server has
//!   `cube2_timeout_ms` for all of it (a list, or a registration and its verdict);
//! * input: lines of at most 512 bytes, within a line budget per connection;
//! * output: the list budget shared with the other lists, charged a page (1,400 bytes)
//!   at a time before the page is written, the first before the list is looked at.

use std::collections::HashMap;
use std::net::{IpAddr, SocketAddr};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use ogp_proto::cube2::master::{
    self as wire, Command, MasterDialect, Register, Session, SessionError,
};
use ogp_proto::master::budget::{ListAdmission, LARGEST_PAGE_BYTES};
use ogp_proto::master::connections::{ConnectionLimits, Connections};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::{mpsc, oneshot, watch};
use tokio::task::JoinSet;

use crate::metrics::{label, labels};
use crate::slots::{accept, Permit, Table, Tracker};
use crate::Shared;

/// A registration handed to the registrar task.
pub(crate) struct Request {
    /// The TCP peer: its address is proved by the handshake.
    pub(crate) from: SocketAddr,
    /// The game port it registers.
    pub(crate) port: u16,
    /// The line's bytes (what the verification's pings may add up to).
    pub(crate) len: usize,
    /// Where the verdict goes (`None`: a keep-alive note, nobody waits).
    pub(crate) reply: Option<oneshot::Sender<Outcome>>,
}

/// What became of a registration.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Outcome {
    /// Verified now, or listed already.
    Listed,
    /// Not listed: why (for `failreg`).
    Failed(String),
}

/// Registrations queued for the registrar task.
pub(crate) const QUEUE: usize = 1024;

/// How often a verified server's open connection is noted as its registration.
const KEEPALIVE: Duration = Duration::from_secs(60);

/// Serves the Cube 2 master on `listener` until `stop`; registrations go to `registrar`.
pub(crate) async fn serve(
    shared: Arc<Shared>,
    listener: TcpListener,
    registrar: mpsc::Sender<Request>,
    mut stop: watch::Receiver<bool>,
) {
    let c = &shared.config;
    let limits = ConnectionLimits::new(
        c.cube2_max_connections_per_ip,
        c.cube2_max_connections_per_prefix,
        c.cube2_max_connections,
    );
    let table = Arc::new(Mutex::new(Table {
        connections: Connections::new(limits),
        closers: HashMap::new(),
    }));
    let mut tasks = JoinSet::new();
    let mut last_error_log: Option<Instant> = None;
    loop {
        let (stream, peer) = tokio::select! {
            accepted = accept(&listener, "Cube 2 master", &mut last_error_log) => match accepted {
                Some(x) => x,
                None => continue,
            },
            _ = stop.changed() => break,
        };
        while tasks.try_join_next().is_some() {}
        let (permit, displaced) =
            Permit::take(&table, peer.ip(), &shared.metrics.cube2_connections);
        if let Some(cap) = displaced {
            shared
                .metrics
                .cube2_displaced
                .get_or_create(&label("cap", cap.as_str()))
                .inc();
        }
        let shared = shared.clone();
        let registrar = registrar.clone();
        tasks.spawn(async move {
            let tracker = permit.tracker();
            let outcome = tokio::select! {
                o = connection(&shared, stream, peer, &tracker, &registrar) => o,
                // displaced: dropping the exchange closes its socket
                _ = permit.closed => "displaced",
            };
            tracker.release();
            if !matches!(outcome, "displaced" | "closed" | "registered") {
                shared
                    .metrics
                    .list_requests
                    .get_or_create(&labels("protocol", "cube2", "outcome", outcome))
                    .inc();
            }
        });
    }
}

/// One connection: its lines until it closes, asks for the list, runs out of time or
/// breaks a bound. The outcome for the metrics.
async fn connection(
    shared: &Shared,
    mut stream: TcpStream,
    peer: SocketAddr,
    tracker: &Tracker,
    registrar: &mpsc::Sender<Request>,
) -> &'static str {
    let _ = stream.set_nodelay(true);
    let c = &shared.config;
    let timeout = Duration::from_millis(c.cube2_timeout_ms.max(1));
    let server_idle = Duration::from_secs(c.cube2_server_idle_secs.max(1));
    let start = tokio::time::Instant::now();
    let mut session = Session::new(peer.ip(), Instant::now());
    // the game port whose server was verified on this connection
    let mut verified: Option<(u16, MasterDialect)> = None;
    let mut deadline = start + timeout;
    let mut keepalive = tokio::time::interval_at(start + KEEPALIVE, KEEPALIVE);
    let mut buf = [0u8; 1024];
    let mut commands = Vec::new();
    loop {
        let n = tokio::select! {
            r = tokio::time::timeout_at(deadline, stream.read(&mut buf)) => match r {
                Err(_) => return if verified.is_some() { "registered" } else { "timeout" },
                Ok(Ok(0) | Err(_)) => return if verified.is_some() { "registered" } else { "closed" },
                Ok(Ok(n)) => n,
            },
            _ = keepalive.tick(), if verified.is_some() => {
                if let Some((port, _)) = verified {
                    let note = Request { from: peer, port, len: line_len(port), reply: None };
                    let _ = registrar.try_send(note);
                }
                continue;
            }
        };
        tracker.received();
        commands.clear();
        let pushed = session.push(
            Instant::now(),
            buf.get(..n).unwrap_or_default(),
            &mut commands,
        );
        // a connection over a bound is closed before any of its lines is acted on (a
        // flood of lines must not queue a registration each)
        if let Err(e) = pushed {
            tracing::debug!("{peer}: Cube 2 master: {e}");
            return match e {
                SessionError::LineTooLong => "line_too_long",
                SessionError::TooManyLines => "too_many_lines",
                _ => "refused",
            };
        }
        for command in commands.drain(..) {
            match command {
                // answered, then the connection is closed (a server's too, as the
                // games' masters do)
                Command::List => {
                    tracker.request();
                    let outcome = answer_list(shared, &mut stream, peer.ip()).await;
                    tracker.answered();
                    let _ = stream.shutdown().await;
                    tracker.flushed();
                    return outcome;
                }
                Command::Register(r) => {
                    let mut out = Vec::new();
                    wire::verifying(r.dialect, r.port, &mut out);
                    if !out.is_empty() && stream.write_all(&out).await.is_err() {
                        return "closed";
                    }
                    let len = line_len(r.port);
                    let outcome = register(shared, registrar, peer, &r, len, deadline).await;
                    let mut out = Vec::new();
                    match &outcome {
                        Outcome::Listed => {
                            wire::registered(r.dialect, r.port, &mut out);
                            if verified.is_none() {
                                tracing::info!(
                                    "{peer}: Cube 2 server on port {} registered",
                                    r.port
                                );
                            }
                            verified = Some((r.port, r.dialect));
                            // a server's connection: kept, displaced last
                            tracker.request();
                        }
                        Outcome::Failed(why) => {
                            tracing::debug!("{peer}: Cube 2 registration of {}: {why}", r.port);
                            wire::refusal(r.dialect, why, &mut out);
                        }
                    }
                    if stream.write_all(&out).await.is_err() {
                        return "closed";
                    }
                    if outcome != Outcome::Listed && verified.is_none() {
                        let _ = stream.shutdown().await;
                        return "registration_failed";
                    }
                }
                Command::Refused(dialect, why) => {
                    let mut out = Vec::new();
                    wire::refusal(dialect, why, &mut out);
                    if stream.write_all(&out).await.is_err() {
                        return "closed";
                    }
                }
                _ => {}
            }
        }
        if verified.is_some() {
            deadline = tokio::time::Instant::now() + server_idle;
        }
    }
}

/// Hands a registration to the registrar and waits for its verdict, until `deadline`
/// for a connection with no verified server yet (at least the verification's own time).
async fn register(
    shared: &Shared,
    registrar: &mpsc::Sender<Request>,
    from: SocketAddr,
    r: &Register,
    len: usize,
    deadline: tokio::time::Instant,
) -> Outcome {
    let (tx, rx) = oneshot::channel();
    let request = Request {
        from,
        port: r.port,
        len,
        reply: Some(tx),
    };
    if registrar.try_send(request).is_err() {
        shared
            .metrics
            .dropped
            .get_or_create(&label("reason", "registrar_busy"))
            .inc();
        return Outcome::Failed("master busy, try again later".into());
    }
    // the registrar's verification ends within its own timeout (5 s by default)
    let limit = deadline.max(tokio::time::Instant::now() + Duration::from_secs(6));
    match tokio::time::timeout_at(limit, rx).await {
        Ok(Ok(o)) => o,
        Ok(Err(_)) => Outcome::Failed("master busy, try again later".into()),
        Err(_) => Outcome::Failed("failed pinging server (check your ports)".into()),
    }
}

/// Writes the list a page at a time, each charged to the list budget before it is
/// written (the first before the list is looked at).
async fn answer_list(shared: &Shared, stream: &mut TcpStream, ip: IpAddr) -> &'static str {
    let charge = || {
        shared
            .list_budget
            .charge(Instant::now(), ip, LARGEST_PAGE_BYTES)
    };
    match charge() {
        ListAdmission::Answer => {}
        refused => return refused.name(),
    }
    let servers = match shared.list.read() {
        Ok(l) => l.cube2_servers(),
        Err(_) => return "closed",
    };
    let mut out = Vec::new();
    wire::encode_list(&servers, &mut out);
    for (i, page) in out.chunks(LARGEST_PAGE_BYTES).enumerate() {
        if i > 0 && charge() != ListAdmission::Answer {
            return "pages_cut";
        }
        if stream.write_all(page).await.is_err() {
            return "closed";
        }
    }
    "served"
}

/// The bytes of the shortest line registering `port` (`regserv PORT\n`): what the
/// verification's pings may add up to (a 5-byte ping and its retries).
fn line_len(port: u16) -> usize {
    "regserv \n".len() + port.to_string().len()
}
