//! The GameSpy master list over TCP (opt-in: `gs1_list`): the greeting with a
//! challenge, the client's `validate` and `\list\` messages, the servers that GameSpy v1
//! heartbeats listed for its game. The exchange is the sans-IO
//! [`ogp_proto::master::gsmaster`]; this moves its bytes within the bounds of every list
//! the master serves:
//!
//! * connections: the [`ogp_proto::master::connections`] table, as HTTP's (per address,
//!   per network, in total; a newcomer displaces one), with its own caps;
//! * time: the whole exchange, from accept to the list's last byte, within
//!   `gs1_timeout_ms` (a silent, half-sent or slowly read connection is closed then);
//! * input: at most [`gsmaster::MAX_REQUEST`] bytes before the request is whole;
//! * output: the list budget shared with the UDP lists, charged a page (1,400 bytes) at a
//!   time before the page is written, the first before the list is looked at; a page
//!   over budget is not sent and the connection closed without `\final\`.

use std::collections::HashMap;
use std::net::{IpAddr, SocketAddr};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use ogp_proto::master::budget::{ListAdmission, LARGEST_PAGE_BYTES};
use ogp_proto::master::connections::{ConnectionLimits, Connections};
use ogp_proto::master::gsmaster::{self, RequestReader};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::watch;
use tokio::task::JoinSet;

use crate::metrics::{label, labels};
use crate::slots::{accept, Permit, Table, Tracker};
use crate::Shared;

/// Serves the GameSpy master list on `listener` until `stop`.
pub(crate) async fn serve(
    shared: Arc<Shared>,
    listener: TcpListener,
    mut stop: watch::Receiver<bool>,
) {
    let c = &shared.config;
    let limits = ConnectionLimits::new(
        c.gs1_max_connections_per_ip,
        c.gs1_max_connections_per_prefix,
        c.gs1_max_connections,
    );
    let table = Arc::new(Mutex::new(Table {
        connections: Connections::new(limits),
        closers: HashMap::new(),
    }));
    let timeout = Duration::from_millis(c.gs1_timeout_ms.max(1));
    let mut tasks = JoinSet::new();
    let mut last_error_log: Option<Instant> = None;
    loop {
        let (stream, peer) = tokio::select! {
            accepted = accept(&listener, "GameSpy master list", &mut last_error_log) => match accepted {
                Some(x) => x,
                None => continue,
            },
            _ = stop.changed() => break,
        };
        while tasks.try_join_next().is_some() {}
        let (permit, displaced) = Permit::take(&table, peer.ip(), &shared.metrics.gs1_connections);
        if let Some(cap) = displaced {
            shared
                .metrics
                .gs1_displaced
                .get_or_create(&label("cap", cap.as_str()))
                .inc();
        }
        let shared = shared.clone();
        tasks.spawn(async move {
            let tracker = permit.tracker();
            let outcome = tokio::select! {
                o = tokio::time::timeout(timeout, exchange(&shared, stream, peer, &tracker)) => {
                    o.unwrap_or("timeout")
                }
                // displaced: dropping the exchange closes its socket
                _ = permit.closed => "displaced",
            };
            tracker.release();
            if outcome != "displaced" && outcome != "closed" {
                shared
                    .metrics
                    .list_requests
                    .get_or_create(&labels("protocol", "gamespy", "outcome", outcome))
                    .inc();
            }
        });
    }
    // connections in progress are dropped with the tasks
}

/// One connection's exchange: the outcome for the metrics.
async fn exchange(
    shared: &Shared,
    mut stream: TcpStream,
    peer: SocketAddr,
    tracker: &Tracker,
) -> &'static str {
    let _ = stream.set_nodelay(true);
    let mut random = [0u8; gsmaster::CHALLENGE_LEN];
    let _ = getrandom::fill(&mut random);
    let mut out = Vec::with_capacity(64);
    gsmaster::greeting(&gsmaster::challenge(random), &mut out);
    if stream.write_all(&out).await.is_err() {
        return "closed";
    }
    let mut reader = RequestReader::new();
    let mut buf = [0u8; 512];
    let request = loop {
        let n = match stream.read(&mut buf).await {
            Ok(0) | Err(_) => return "closed",
            Ok(n) => n,
        };
        tracker.received();
        match reader.push(buf.get(..n).unwrap_or_default()) {
            Ok(Some(r)) => break r,
            Ok(None) => {}
            Err(e) => {
                tracing::debug!("{peer}: GameSpy master list: {e}");
                return "refused";
            }
        }
    };
    tracker.request();
    let outcome = answer(shared, &mut stream, peer.ip(), &request).await;
    tracker.answered();
    let _ = stream.shutdown().await;
    tracker.flushed();
    outcome
}

/// Writes the list a page at a time, each charged to the list budget before it is
/// written (the first before the list is looked at).
async fn answer(
    shared: &Shared,
    stream: &mut TcpStream,
    ip: IpAddr,
    request: &gsmaster::ListRequest,
) -> &'static str {
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
        Ok(l) => l.gs1_servers(&request.game),
        Err(_) => return "closed",
    };
    let mut out = Vec::new();
    gsmaster::encode_list(&servers, request.compressed, &mut out);
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
