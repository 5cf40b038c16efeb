//! The master's UDP port: registrations in, verification queries out from this same
//! socket (so that a server behind NAT, which just sent to it, lets the answer in), and
//! list requests (Valve's, dpmaster's `getservers` / `getserversExt`, QuakeWorld's `c\n`)
//! answered within a byte budget per source and in total, checked before the filter and
//! the list are looked at (dpmaster's and QuakeWorld's answers: again before each
//! further page).
//!
//! However many `--udp` addresses: one registrar (verifications, probes, their caps)
//! and one list budget (per source and in total) for the process, so that no cap
//! multiplies with the sockets.

use std::net::SocketAddr;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use ogp_proto::guard::{RateConfig, RateDecision, RateLimiter};
use ogp_proto::master::addr::canonical;
use ogp_proto::master::dpmaster::{self, Listing, ServersRequest};
use ogp_proto::master::qwmaster;
use ogp_proto::master::registry::{
    classify, Admission, DropReason, Inbound, Known, Registrar, RegistrarConfig, Registration,
    Verdict,
};
use ogp_proto::master::teemaster;
use ogp_proto::master::teemaster7::{self, Tokens};
use ogp_proto::master::valve::{encode_page, Filter, ListAdmission, ListBudget, ListRequest};
use ogp_proto::protocol::Protocol;
use tokio::net::UdpSocket;
use tokio::sync::{mpsc, watch};

use crate::metrics::{label, labels};
use crate::store::Verified;
use crate::{now_ms, Shared};

/// Receive buffer: 65,536 bytes, more than the largest UDP payload (65,507 bytes over
/// IPv4, 65,527 over IPv6).
const RECV_BUF: usize = 65536;

/// DDNet HTTP registrations queued for the UDP task; beyond, the HTTP side answers 503.
pub(crate) const FROM_HTTP_QUEUE: usize = 1024;

/// What the HTTP side hands the UDP task ([`ogp_proto::master::ddnet_register`]).
#[derive(Debug)]
pub(crate) enum FromHttp {
    /// Send DDNet's `chal` datagram to `to` (the IP that made the request).
    Challenge { to: SocketAddr, datagram: Vec<u8> },
    /// Verify `addr` as a Teeworlds 0.6 server (its HTTP request, `len` bytes, carried
    /// the right challenge token).
    Register { addr: SocketAddr, len: usize },
}

/// The socket to send to `to` from (one of its family, or a dual-stack IPv6 one for an
/// IPv4 address), and `to` as that socket takes it.
fn socket_for(socks: &[Arc<UdpSocket>], to: SocketAddr) -> Option<(usize, SocketAddr)> {
    let family = |s: &UdpSocket| s.local_addr().map(|a| a.is_ipv4()).ok();
    if let Some(i) = socks.iter().position(|s| family(s) == Some(to.is_ipv4())) {
        return Some((i, to));
    }
    let mapped = match to {
        SocketAddr::V4(v4) => SocketAddr::new(v4.ip().to_ipv6_mapped().into(), v4.port()),
        SocketAddr::V6(_) => return None,
    };
    socks
        .iter()
        .position(|s| family(s) == Some(false))
        .map(|i| (i, mapped))
}

/// A database write the UDP loop asks for (it never waits for the database itself).
enum Write {
    Verified(Box<Verified>),
    Registered { addr: SocketAddr, wants_poll: bool },
}

fn registrar_config(shared: &Shared) -> RegistrarConfig {
    let c = &shared.config;
    let mut r = RegistrarConfig::default().allow_private(c.allow_private);
    r.max_servers_per_ip = c.max_servers_per_ip;
    let per_second = c.registrations_per_minute as f32 / 60.0;
    r.per_source = RateConfig::new(per_second, per_second.max(128.0));
    r.max_pending = c.max_pending_verifications.max(1);
    r.verifications = RateConfig::new(
        c.verifications_per_second as f32,
        (c.verifications_per_second as f32 * 2.0).max(1.0),
    );
    let per_prefix = c.verifications_per_prefix_per_second as f32;
    r.per_prefix = RateConfig::new(per_prefix, per_prefix.max(256.0));
    r.max_pending_per_prefix = c.max_pending_verifications_per_prefix.max(1);
    r
}

/// Batches of verified servers written and not listed yet, at most (each up to 1,024
/// rows): the writer writes the next while the lister merges the last.
const LISTING_QUEUE: usize = 4;

async fn writer(shared: Arc<Shared>, mut rx: mpsc::Receiver<Write>) {
    // the written rows are listed by a task of their own, in the order written (a
    // server's newer row never merged before its older one)
    let (to_lister, mut batches) = mpsc::channel::<Vec<crate::store::ListRow>>(LISTING_QUEUE);
    let lister = {
        let shared = shared.clone();
        tokio::spawn(async move {
            while let Some(rows) = batches.recv().await {
                // Show them at once rather than at the next refresh (the rows the upsert
                // returned).
                let (n, t) = (rows.len(), Instant::now());
                if let Err(e) = shared.list_rows(rows).await {
                    tracing::warn!("listing the verified servers: {e:#}");
                }
                tracing::debug!(
                    target: "ogp_master::writer",
                    "{n} verified servers listed in {:.1} ms",
                    t.elapsed().as_secs_f64() * 1000.0
                );
            }
        })
    };
    while let Some(first) = rx.recv().await {
        // Whatever queued up meanwhile goes in the same round, then one refresh.
        let mut batch = vec![first];
        while batch.len() < 1024 {
            match rx.try_recv() {
                Ok(w) => batch.push(w),
                Err(_) => break,
            }
        }
        let mut verified = Vec::new();
        let mut registered = Vec::new();
        for w in batch {
            match w {
                Write::Verified(v) => verified.push(*v),
                Write::Registered { addr, wants_poll } => registered.push((addr, wants_poll)),
            }
        }
        let mut listed = Vec::new();
        if !verified.is_empty() {
            let t = Instant::now();
            match shared.store.upsert_verified(&verified, now_ms()).await {
                Ok(rows) => {
                    for v in &verified {
                        tracing::info!("{}: verified ({}), listed", v.addr, v.via.name());
                    }
                    listed = rows;
                    // their first poll (every protocol) is due now, not at the next tick
                    shared.poll_now.notify_one();
                }
                Err(e) => tracing::warn!(
                    "database: listing {} verified servers: {e:#}",
                    verified.len()
                ),
            }
            shared.metrics.db("upsert_verified", t);
            tracing::debug!(
                target: "ogp_master::writer",
                "{} verified servers written in {:.1} ms",
                verified.len(),
                t.elapsed().as_secs_f64() * 1000.0
            );
        }
        if !registered.is_empty() {
            let t = Instant::now();
            if let Err(e) = shared.store.note_registrations(&registered, now_ms()).await {
                tracing::warn!("database: noting {} registrations: {e:#}", registered.len());
            }
            shared.metrics.db("note_registrations", t);
        }
        if !listed.is_empty() && to_lister.send(listed).await.is_err() {
            break;
        }
    }
    drop(to_lister);
    let _ = lister.await;
}

/// Registrations and replies queued for the registrar task, and their bytes at most
/// (datagrams of up to 64 KiB: the count alone would let a flood of large ones hold a
/// gigabyte); beyond, they are dropped (metric `dropped{reason="registrar_busy"}`).
const REGISTRAR_QUEUE: usize = 16384;
const REGISTRAR_QUEUE_BYTES: usize = 16 << 20;

/// Bytes of the datagrams queued for the registrar task (see [`REGISTRAR_QUEUE_BYTES`]).
#[derive(Clone, Default)]
struct Queued(Arc<AtomicUsize>);

impl Queued {
    /// Takes `n` bytes of the queue's room: false when there is not that much.
    fn take(&self, n: usize) -> bool {
        let before = self.0.fetch_add(n, Ordering::Relaxed);
        if before.saturating_add(n) > REGISTRAR_QUEUE_BYTES {
            self.0.fetch_sub(n, Ordering::Relaxed);
            return false;
        }
        true
    }

    /// Gives `n` bytes back.
    fn give(&self, n: usize) {
        self.0.fetch_sub(n, Ordering::Relaxed);
    }
}

impl ToRegistrar {
    /// The bytes of its datagram (what it holds of the queue's room).
    fn len(&self) -> usize {
        match self {
            Self::Registration { len, .. } => *len,
            Self::Reply { datagram, .. } => datagram.len(),
        }
    }
}

/// What a socket's receive loop hands the registrar task.
enum ToRegistrar {
    /// A registration, from `from`, that arrived on socket `local`.
    Registration {
        local: usize,
        from: SocketAddr,
        registration: Registration,
        len: usize,
    },
    /// Anything else (a reply to a verification query, an answer to a probe, noise).
    Reply {
        local: usize,
        from: SocketAddr,
        datagram: Vec<u8>,
    },
}

/// Serves the UDP sockets until `stop`: one receive loop per socket (list requests are
/// answered there, all against one [`ListBudget`] whose clones share its buckets) on a
/// thread of their own, and one registrar for all of them (its caps are the process's),
/// a task of the caller's runtime that sends each verification query from the socket its
/// registration arrived on.
///
/// The receive loops have a thread (and a single-threaded runtime) of their own so that
/// a burst of registrations and verification answers is read as it arrives, never
/// queued behind the runtime's other work (the list's merges, the API's pages, the
/// poller): the kernel drops what overflows a socket's buffer. Returns the registrar's
/// task, to be run on the caller's runtime; fails when the thread cannot be started.
pub(crate) fn start(
    shared: Arc<Shared>,
    socks: Vec<std::net::UdpSocket>,
    from_http: mpsc::Receiver<FromHttp>,
    cube2: Option<mpsc::Receiver<crate::cube2::Request>>,
    stop: watch::Receiver<bool>,
) -> std::io::Result<impl std::future::Future<Output = ()>> {
    let now = Instant::now();
    // Teeworlds 0.7's tokens: a secret of their own
    let mut tw7_secret = [0u8; 16];
    let _ = getrandom::fill(&mut tw7_secret);
    let tokens = Tokens::new(tw7_secret, now);
    let list_budget = shared.list_budget.clone();
    let (to_registrar, from_sockets) = mpsc::channel(REGISTRAR_QUEUE);
    let queued = Queued::default();
    // the registrar's sockets (sending only) are the same sockets, through descriptors
    // of their own registered with the caller's runtime
    let mut senders = Vec::with_capacity(socks.len());
    for s in &socks {
        senders.push(Arc::new(UdpSocket::from_std(s.try_clone()?)?));
    }
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()?;
    let mut loops = Vec::with_capacity(socks.len());
    for (local, sock) in socks.into_iter().enumerate() {
        let sock = {
            let _in = rt.enter();
            UdpSocket::from_std(sock)?
        };
        loops.push(rt.spawn(receive(
            shared.clone(),
            Arc::new(sock),
            local,
            (list_budget.clone(), tokens.clone()),
            (to_registrar.clone(), queued.clone()),
            stop.clone(),
        )));
    }
    drop(to_registrar);
    let (done_tx, done) = tokio::sync::oneshot::channel();
    std::thread::Builder::new()
        .name("ogp-master-udp".into())
        .spawn(move || {
            rt.block_on(async move {
                for l in loops {
                    let _ = l.await;
                }
            });
            let _ = done_tx.send(());
        })?;
    Ok(registrar(
        shared,
        senders,
        (from_sockets, queued, tokens),
        (from_http, cube2),
        stop,
        done,
    ))
}

/// The registrar's task: registrations and answers from the receive loops, DDNet's
/// HTTP registrations and Cube 2's, the verification queries and the verdicts.
async fn registrar(
    shared: Arc<Shared>,
    socks: Vec<Arc<UdpSocket>>,
    (mut from_sockets, queued, tokens): (mpsc::Receiver<ToRegistrar>, Queued, Tokens),
    (mut from_http, mut cube2): (
        mpsc::Receiver<FromHttp>,
        Option<mpsc::Receiver<crate::cube2::Request>>,
    ),
    mut stop: watch::Receiver<bool>,
    // the receive loops' thread has ended
    receivers_done: tokio::sync::oneshot::Receiver<()>,
) {
    let now = Instant::now();
    let mut secret = [0u8; 16];
    let _ = getrandom::fill(&mut secret);
    let families: Vec<Option<SocketAddr>> = socks.iter().map(|s| s.local_addr().ok()).collect();
    let mut waiters = Waiters::default();
    let mut registrar = Registrar::new(registrar_config(&shared), secret, now);
    let (tx, rx) = mpsc::channel(16384);
    let writer_task = tokio::spawn(writer(shared.clone(), rx));
    // One warning per address and 10 minutes for a server that answered and still was
    // not verified.
    let mut warned = RateLimiter::new(RateConfig::new(1.0 / 600.0, 1.0), 4096, secret, now);
    loop {
        let wake = registrar.poll_timeout().map(tokio::time::Instant::from_std);
        let sleep = async {
            match wake {
                Some(t) => tokio::time::sleep_until(t).await,
                None => std::future::pending().await,
            }
        };
        tokio::select! {
            m = from_sockets.recv() => match m {
                Some(m) => {
                    queued.give(m.len());
                    handle(&shared, &mut registrar, &tx, m);
                    // and what else waits, up to a round's worth: its queries go out
                    // together below (a burst is thousands of registrations, and each
                    // answer to a query is one more message)
                    for _ in 1..ROUND {
                        let Ok(m) = from_sockets.try_recv() else { break };
                        queued.give(m.len());
                        handle(&shared, &mut registrar, &tx, m);
                    }
                }
                None => break,
            },
            Some(h) = from_http.recv() => match h {
                FromHttp::Challenge { to, datagram } => {
                    if let Some((i, to)) = socket_for(&socks, to) {
                        if let Some(sock) = socks.get(i) {
                            let _ = sock.send_to(&datagram, to).await;
                        }
                    }
                }
                FromHttp::Register { addr, len } => {
                    if let Some((local, from)) = socket_for(&socks, addr) {
                        let registration = Registration::Teeworlds(teemaster::Heartbeat {
                            port: addr.port(),
                        });
                        let m = ToRegistrar::Registration { local, from, registration, len };
                        handle(&shared, &mut registrar, &tx, m);
                    }
                }
            },
            Some(req) = async {
                match cube2.as_mut() {
                    Some(rx) => rx.recv().await,
                    None => std::future::pending().await,
                }
            } => cube2_registration(&shared, &mut registrar, &tx, &families, &mut waiters, req),
            () = sleep => registrar.handle_timeout(Instant::now()),
            _ = stop.changed() => break,
        }
        let now = Instant::now();
        let queries: Vec<_> = std::iter::from_fn(|| registrar.poll_transmit_on(now)).collect();
        send_batched(&socks, &queries).await;
        while let Some(v) = registrar.poll_verdict() {
            if let Some((local, to, d)) = tw7_fwok(&tokens, &v, now) {
                if let Some(sock) = socks.get(local) {
                    // the address as that socket takes it (a dual-stack one: mapped)
                    let to = match (sock.local_addr(), to) {
                        (Ok(SocketAddr::V6(_)), SocketAddr::V4(v4)) => {
                            SocketAddr::new(v4.ip().to_ipv6_mapped().into(), v4.port())
                        }
                        _ => to,
                    };
                    let _ = sock.send_to(&d, to).await;
                }
            }
            waiters.settle(&v);
            verdict(&shared, &tx, &mut warned, now, v);
        }
        shared
            .metrics
            .verifications_pending
            .set(i64::try_from(registrar.pending()).unwrap_or(i64::MAX));
    }
    drop(tx);
    let _ = tokio::time::timeout(Duration::from_secs(3), writer_task).await;
    // the receive loops end on `stop` too
    let _ = tokio::time::timeout(Duration::from_secs(3), receivers_done).await;
}

/// Messages from the receive loops the registrar handles in one round, before it sends
/// the queries they make.
const ROUND: usize = 256;

/// Sends `msgs` (socket, destination, datagram), each from its socket
/// ([`ogp_net::batch::send_all`]: [`ogp_net::batch::BATCH`] a system call).
async fn send_batched(socks: &[Arc<UdpSocket>], msgs: &[(usize, SocketAddr, Vec<u8>)]) {
    for (local, sock) in socks.iter().enumerate() {
        let mine: Vec<(&[u8], SocketAddr)> = msgs
            .iter()
            .filter(|(l, _, _)| *l == local)
            .map(|(_, to, d)| (d.as_slice(), *to))
            .collect();
        ogp_net::batch::send_all(sock, &mine).await;
    }
}

/// One socket's receive loop: list requests answered here, the rest handed to the
/// registrar task.
async fn receive(
    shared: Arc<Shared>,
    sock: Arc<UdpSocket>,
    local: usize,
    (mut list_budget, tokens): (ListBudget, Tokens),
    (to_registrar, queued): (mpsc::Sender<ToRegistrar>, Queued),
    mut stop: watch::Receiver<bool>,
) {
    // As large as a datagram can be: a verification answer of any size arrives whole
    // (the scan engine that polls reads 64 KiB too).
    let mut buf = vec![0u8; RECV_BUF];
    let mut out = Vec::with_capacity(1400);
    loop {
        tokio::select! {
            r = sock.recv_from(&mut buf) => match r {
                Ok((n, from)) => {
                    let d = buf.get(..n).unwrap_or_default();
                    let m = &shared.metrics;
                    let now = Instant::now();
                    let inbound = classify(d);
                    let busy = || {
                        m.dropped
                            .get_or_create(&label("reason", "registrar_busy"))
                            .inc();
                    };
                    // what goes to the registrar takes its room in the queue first
                    let to_queue =
                        matches!(inbound, Ok(Inbound::Registration(_) | Inbound::Other));
                    if to_queue && !queued.take(n) {
                        busy();
                        continue;
                    }
                    let message = match inbound {
                        Err(_) => {
                            m.dropped.get_or_create(&label("reason", "malformed")).inc();
                            continue;
                        }
                        Ok(Inbound::List(req)) => {
                            answer_list(&shared, &sock, &mut list_budget, &mut out, from, &req, now)
                                .await;
                            continue;
                        }
                        Ok(Inbound::DpList(req)) => {
                            answer_dp_list(&shared, &sock, &mut list_budget, from, &req, now).await;
                            continue;
                        }
                        Ok(Inbound::QwList) => {
                            answer_qw_list(&shared, &sock, &mut list_budget, from, now).await;
                            continue;
                        }
                        Ok(Inbound::TwList(req)) => {
                            answer_tw_list(&shared, &sock, &list_budget, from, req, now).await;
                            continue;
                        }
                        Ok(Inbound::Tw7(msg)) => {
                            let tw = (&list_budget, &tokens);
                            let Some(registration) = tw7(&shared, &sock, tw, from, msg, now).await
                            else {
                                continue;
                            };
                            // the heartbeat stands for the token request that got its token
                            let len = n.saturating_add(teemaster7::HEARTBEAT_CREDIT);
                            if !queued.take(len) {
                                busy();
                                continue;
                            }
                            ToRegistrar::Registration {
                                local,
                                from,
                                registration,
                                len,
                            }
                        }
                        Ok(Inbound::Registration(registration)) => ToRegistrar::Registration {
                            local,
                            from,
                            registration,
                            len: n,
                        },
                        Ok(Inbound::Other) => ToRegistrar::Reply {
                            local,
                            from,
                            datagram: d.to_vec(),
                        },
                    };
                    if to_registrar.try_send(message).is_err() {
                        queued.give(n);
                        busy();
                    }
                }
                Err(e) => {
                    if !ogp_net::responder::is_transient(&e) {
                        tracing::warn!("UDP receive: {e}");
                        tokio::time::sleep(Duration::from_millis(10)).await;
                    }
                }
            },
            _ = stop.changed() => break,
        }
    }
}

/// A finished verification: listed (through the writer) or counted and, for a server
/// that answered, logged.
fn verdict(
    shared: &Shared,
    tx: &mpsc::Sender<Write>,
    warned: &mut RateLimiter,
    now: Instant,
    v: Verdict,
) {
    match v {
        Verdict::Verified {
            addr,
            game,
            answer,
            gamespy1,
            ..
        } => {
            let protocol = answer.protocol;
            let name = if gamespy1 {
                "gamespy1"
            } else {
                protocol.name()
            };
            let listing = answer.details.as_ref().and_then(Listing::of_details);
            let game = game.or_else(|| listing.as_ref().and_then(|l| l.game.clone()));
            shared
                .metrics
                .verifications
                .get_or_create(&labels("protocol", name, "outcome", "verified"))
                .inc();
            let v = Verified {
                addr: canonical(addr),
                via: protocol,
                gs1_game: game.clone().filter(|_| gamespy1),
                game_hint: game,
                listing,
                ping_ms: answer.ping_ms,
                status: answer.status,
            };
            if tx.try_send(Write::Verified(Box::new(v))).is_err() {
                shared
                    .metrics
                    .dropped
                    .get_or_create(&label("reason", "writer_busy"))
                    .inc();
            }
        }
        Verdict::Failed {
            addr,
            protocol,
            error,
            withheld,
            replies,
            refused,
        } => {
            shared
                .metrics
                .verifications
                .get_or_create(&labels("protocol", protocol.name(), "outcome", "failed"))
                .inc();
            // A forged registration's source never answers: that is the flood's noise,
            // logged at debug. One that answered is a real server the operator wants to
            // hear about.
            let warn = replies > 0 && warned.check(now, addr.ip()) == RateDecision::Allow;
            if let (true, Some(why)) = (warn, refused) {
                // It answered, and what it answered was refused: say why (a wrong
                // verification challenge is not a timeout, nor an overlong field).
                tracing::warn!(
                    "{addr}: not verified ({}), not listed: it answered {replies} \
                     datagram(s) to the verification query and none was taken: {why}",
                    protocol.name()
                );
            } else if warn {
                tracing::warn!(
                    "{addr}: not verified ({}), not listed: {error}; it answered \
                     {replies} datagram(s), but gave no usable answer to the status \
                     query. A server sends no answer that does not fit one datagram \
                     (this project's OGP responder: 8,192 bytes unsplit): look for an \
                     overlong field in its status (host name, game name, map)",
                    protocol.name()
                );
            } else {
                tracing::debug!(
                    "{addr}: not verified ({}): {error} ({withheld} datagrams withheld)",
                    protocol.name()
                );
            }
        }
    }
}

/// A registration or another datagram, in the registrar task.
fn handle(shared: &Shared, registrar: &mut Registrar, tx: &mpsc::Sender<Write>, m: ToRegistrar) {
    let now = Instant::now();
    let metrics = &shared.metrics;
    match m {
        ToRegistrar::Registration {
            local,
            from,
            registration: r,
            len,
        } => {
            // the list holds an IPv4-mapped source (a dual-stack socket's) as its IPv4
            // a GameSpy v1 heartbeat names its query port
            let key = canonical(r.query_addr(from));
            let known = match shared.list.read() {
                // a GameSpy v1 server listed without its game (verified through a
                // probe, which keeps no game) is verified again to learn it
                Ok(l) => Known {
                    listed: l.contains(key)
                        && (!matches!(r, Registration::Gamespy1(_)) || l.has_gs1_game(key)),
                    servers_on_ip: l.on_ip(key.ip(), shared.config.max_servers_per_ip),
                },
                Err(_) => return,
            };
            let admission = registrar.register_on(now, local, from, &r, len, known);
            let outcome = match admission {
                Admission::Listed => {
                    let w = Write::Registered {
                        addr: key,
                        wants_poll: r.wants_poll(),
                    };
                    if tx.try_send(w).is_err() {
                        metrics
                            .dropped
                            .get_or_create(&label("reason", "writer_busy"))
                            .inc();
                    }
                    "listed"
                }
                Admission::Verifying => "verifying",
                Admission::Probed(_) => "probed",
                Admission::Dropped(reason) => reason.name(),
            };
            metrics
                .registrations
                .get_or_create(&labels("protocol", r.protocol_name(), "outcome", outcome))
                .inc();
        }
        ToRegistrar::Reply {
            local,
            from,
            datagram,
        } => {
            let answered = registrar.stats().answered;
            if !registrar.handle_reply_on(now, local, from, &datagram) {
                metrics
                    .dropped
                    .get_or_create(&label("reason", "unknown"))
                    .inc();
            } else if registrar.stats().answered > answered {
                metrics.probe_answers.inc();
            }
        }
    }
}

async fn answer_list(
    shared: &Shared,
    sock: &UdpSocket,
    budget: &mut ListBudget,
    out: &mut Vec<u8>,
    from: SocketAddr,
    req: &ListRequest,
    now: Instant,
) {
    let m = &shared.metrics;
    // the budgets first: a refused request costs no filter and no list work
    let admission = budget.admit(now, from.ip());
    if admission != ListAdmission::Answer {
        m.list_requests
            .get_or_create(&labels("protocol", "valve", "outcome", admission.name()))
            .inc();
        return;
    }
    let filter = match Filter::parse(&req.filter) {
        Ok(f) => f,
        Err(e) => {
            tracing::debug!("{from}: list request refused: {e}");
            m.list_requests
                .get_or_create(&labels("protocol", "valve", "outcome", "bad_filter"))
                .inc();
            return;
        }
    };
    // the pass is bounded by what the budgets can pay for, and paid once it is done
    let max_looks = budget.looks_allowed(now, from.ip());
    let page = match shared.list.read() {
        Ok(l) => l.valve_page(&filter, req.seed, max_looks),
        Err(_) => return,
    };
    budget.pay_looks(now, from.ip(), page.looked);
    let outcome = match (page.cut, page.servers.is_empty()) {
        (false, _) => admission.name(),
        (true, false) => "pass_cut",
        (true, true) => "too_costly",
    };
    m.list_requests
        .get_or_create(&labels("protocol", "valve", "outcome", outcome))
        .inc();
    if page.cut && page.servers.is_empty() {
        // nothing found within what the source can pay: no page to send (an empty one
        // without the end marker would give the client no seed to go on from)
        return;
    }
    out.clear();
    encode_page(&page.servers, page.end, out);
    let _ = sock.send_to(out, from).await;
}

/// A dpmaster list request: pages of the matching servers, each within the budgets
/// (`dpmaster::answer` decides; the list is looked at only once the first page is
/// within them). Counted by outcome: `served` (the whole list went), `rate_limited` or
/// `over_total_budget` (refused, or cut after some pages: `pages_cut`).
async fn answer_dp_list(
    shared: &Shared,
    sock: &UdpSocket,
    budget: &mut ListBudget,
    from: SocketAddr,
    req: &ServersRequest,
    now: Instant,
) {
    let mut pages = Vec::new();
    let done = dpmaster::answer(
        req,
        || match shared.list.read() {
            Ok(l) => l.dp_servers(req),
            Err(_) => Vec::new(),
        },
        from.ip(),
        now,
        budget,
        |p| pages.push(p.to_vec()),
    );
    for p in &pages {
        let _ = sock.send_to(p, from).await;
    }
    let outcome = match (done.complete, done.pages) {
        (true, _) => "served",
        (false, 0) => done.stopped_by.name(),
        (false, _) => "pages_cut",
    };
    shared
        .metrics
        .list_requests
        .get_or_create(&labels("protocol", "dpmaster", "outcome", outcome))
        .inc();
}

/// A QuakeWorld list request (`c\n`): pages of the up QuakeWorld servers (IPv4), each
/// within the budgets (`qwmaster::answer`; the list is looked at only once the first
/// page is within them). Counted as dpmaster's are, under `qwmaster`.
async fn answer_qw_list(
    shared: &Shared,
    sock: &UdpSocket,
    budget: &mut ListBudget,
    from: SocketAddr,
    now: Instant,
) {
    let mut pages = Vec::new();
    let done = qwmaster::answer(
        || match shared.list.read() {
            Ok(l) => l.qw_servers(),
            Err(_) => Vec::new(),
        },
        from.ip(),
        now,
        budget,
        |p| pages.push(p.to_vec()),
    );
    for p in &pages {
        let _ = sock.send_to(p, from).await;
    }
    let outcome = match (done.complete, done.pages) {
        (true, _) => "served",
        (false, 0) => done.stopped_by.name(),
        (false, _) => "pages_cut",
    };
    shared
        .metrics
        .list_requests
        .get_or_create(&labels("protocol", "qwmaster", "outcome", outcome))
        .inc();
}

/// A Teeworlds 0.6 master request: `cou2` answered by `siz2`, `req2` by `lis2` pages of
/// the up servers verified in the Teeworlds protocol, each datagram within the budgets
/// (the list is looked at only once the first is within them). Counted as dpmaster's
/// are, under `teeworlds`.
async fn answer_tw_list(
    shared: &Shared,
    sock: &UdpSocket,
    budget: &ListBudget,
    from: SocketAddr,
    req: teemaster::Request,
    now: Instant,
) {
    let servers = || match shared.list.read() {
        Ok(l) => l.tw_servers(Protocol::Teeworlds),
        Err(_) => Vec::new(),
    };
    let mut pages = Vec::new();
    let outcome = match req {
        teemaster::Request::Count => teemaster::answer_count(
            || servers().len(),
            from.ip(),
            now,
            budget,
            |p| pages.push(p.to_vec()),
        )
        .name(),
        teemaster::Request::List => {
            let done =
                teemaster::answer(servers, from.ip(), now, budget, |p| pages.push(p.to_vec()));
            match (done.complete, done.pages) {
                (true, _) => "served",
                (false, 0) => done.stopped_by.name(),
                (false, _) => "pages_cut",
            }
        }
    };
    for p in &pages {
        let _ = sock.send_to(p, from).await;
    }
    shared
        .metrics
        .list_requests
        .get_or_create(&labels("protocol", "teeworlds", "outcome", outcome))
        .inc();
}

/// A Teeworlds 0.7 master message ([`teemaster7`]): a token request answered with our
/// token for its source (within the list budget); a heartbeat or a request acted on
/// only when it carries that token (else dropped: `dropped{reason="bad_token"}`). A
/// request is answered as the 0.6 one is (`siz2`, `lis2` pages of the up `teeworlds7`
/// servers, within the budgets), counted under `teeworlds7`; a heartbeat comes back
/// as the registration to verify, or, from a server already listed, is acknowledged
/// with `fwok` (17 bytes to a heartbeat of 19: the 0.7 server wants one a minute, or
/// it looks for another master).
async fn tw7(
    shared: &Shared,
    sock: &UdpSocket,
    (budget, tokens): (&ListBudget, &Tokens),
    from: SocketAddr,
    msg: teemaster7::Message,
    now: Instant,
) -> Option<Registration> {
    let m = &shared.metrics;
    let count = |outcome: &str| {
        m.list_requests
            .get_or_create(&labels("protocol", "teeworlds7", "outcome", outcome))
            .inc();
    };
    let bad_token = || {
        m.dropped.get_or_create(&label("reason", "bad_token")).inc();
    };
    let mut out = Vec::new();
    match msg {
        teemaster7::Message::TokenRequest { theirs } => {
            let a = teemaster7::answer_token(tokens, from, theirs, now, budget, |d| {
                out.push(d.to_vec())
            });
            if a != ListAdmission::Answer {
                count(a.name());
            }
        }
        teemaster7::Message::Heartbeat {
            to,
            from: theirs,
            heartbeat,
        } => {
            if !tokens.check(from, to, now) {
                bad_token();
                return None;
            }
            let r = Registration::Teeworlds7(heartbeat);
            let key = canonical(r.query_addr(from));
            let listed = shared.list.read().is_ok_and(|l| l.contains(key));
            if !listed {
                return Some(r);
            }
            let mut d = Vec::with_capacity(17);
            teemaster7::encode_fwok(theirs, to, &mut d);
            let _ = sock.send_to(&d, from).await;
            // noted as a registration of a listed server
            return Some(r);
        }
        teemaster7::Message::Request {
            to,
            from: theirs,
            request,
        } => {
            if !tokens.check(from, to, now) {
                bad_token();
                return None;
            }
            let servers = || match shared.list.read() {
                Ok(l) => l.tw_servers(Protocol::Teeworlds7),
                Err(_) => Vec::new(),
            };
            let tt = (theirs, to);
            let outcome = match request {
                teemaster::Request::Count => teemaster7::answer_count(
                    || servers().len(),
                    from.ip(),
                    tt,
                    now,
                    budget,
                    |p| out.push(p.to_vec()),
                )
                .name(),
                teemaster::Request::List => {
                    let done = teemaster7::answer(servers, from.ip(), tt, now, budget, |p| {
                        out.push(p.to_vec())
                    });
                    match (done.complete, done.pages) {
                        (true, _) => "served",
                        (false, 0) => done.stopped_by.name(),
                        (false, _) => "pages_cut",
                    }
                }
            };
            count(outcome);
        }
    }
    for d in &out {
        let _ = sock.send_to(d, from).await;
    }
    None
}

/// The `fwok` a verified Teeworlds 0.7 server is sent from the socket its
/// registration came on (its source is the master the server chose), to the server's
/// token its answer carried, from our token for it: the 0.7 server then logs "server
/// registered" and takes that token for its next heartbeats.
fn tw7_fwok(tokens: &Tokens, v: &Verdict, now: Instant) -> Option<(usize, SocketAddr, Vec<u8>)> {
    let Verdict::Verified {
        addr,
        answer,
        local,
        ..
    } = v
    else {
        return None;
    };
    let Some(ogp_proto::client::Details::Teeworlds7(d)) = answer.details.as_ref() else {
        return None;
    };
    let mut out = Vec::with_capacity(17);
    teemaster7::encode_fwok(d.server_token, tokens.token(*addr, now), &mut out);
    Some((*local, *addr, out))
}

/// Cube 2 registrations (over the master's TCP port) waiting for their verdict, by
/// canonical query address: one waiter an address (a newer one replaces it), and
/// those whose connection has gone are swept when there are many.
#[derive(Default)]
struct Waiters(
    std::collections::HashMap<SocketAddr, tokio::sync::oneshot::Sender<crate::cube2::Outcome>>,
);

impl Waiters {
    const SWEEP_AT: usize = 4096;

    fn wait(&mut self, key: SocketAddr, tx: tokio::sync::oneshot::Sender<crate::cube2::Outcome>) {
        if self.0.len() >= Self::SWEEP_AT {
            self.0.retain(|_, tx| !tx.is_closed());
        }
        if self.0.len() < Self::SWEEP_AT * 2 {
            self.0.insert(key, tx);
        }
    }

    fn settle(&mut self, v: &Verdict) {
        let (addr, outcome) = match v {
            Verdict::Verified { addr, .. } => (*addr, crate::cube2::Outcome::Listed),
            Verdict::Failed { addr, error, .. } => (
                *addr,
                crate::cube2::Outcome::Failed(format!("failed pinging server: {error}")),
            ),
        };
        if let Some(tx) = self.0.remove(&canonical(addr)) {
            let _ = tx.send(outcome);
        }
    }
}

/// A Cube 2 registration from the TCP listener: through the registrar like any other
/// (its caps per source and prefix), verified from the UDP socket of the peer's address
/// family; the verdict goes back to the connection.
fn cube2_registration(
    shared: &Shared,
    registrar: &mut Registrar,
    tx: &mpsc::Sender<Write>,
    families: &[Option<SocketAddr>],
    waiters: &mut Waiters,
    req: crate::cube2::Request,
) {
    use crate::cube2::Outcome;
    let r = Registration::Cube2 { port: req.port };
    let from = canonical(req.from);
    // a socket of the peer's family (an IPv6 one may be dual-stack: the last resort)
    let local = families
        .iter()
        .position(|a| a.is_some_and(|a| a.is_ipv4() == from.is_ipv4()))
        .or_else(|| families.iter().position(|a| a.is_some_and(|a| a.is_ipv6())));
    let mut waiter = req.reply;
    let reply = |waiter: &mut Option<tokio::sync::oneshot::Sender<Outcome>>, o: Outcome| {
        if let Some(t) = waiter.take() {
            let _ = t.send(o);
        }
    };
    let Some(local) = local else {
        reply(
            &mut waiter,
            Outcome::Failed("master has no UDP socket for this address family".into()),
        );
        return;
    };
    let key = canonical(r.query_addr(from));
    let known = match shared.list.read() {
        Ok(l) => Known {
            listed: l.contains(key),
            servers_on_ip: l.on_ip(key.ip(), shared.config.max_servers_per_ip),
        },
        Err(_) => return,
    };
    let now = Instant::now();
    let admission = registrar.register_on(now, local, from, &r, req.len, known);
    let outcome = match admission {
        Admission::Listed => {
            let w = Write::Registered {
                addr: key,
                wants_poll: false,
            };
            if tx.try_send(w).is_err() {
                shared
                    .metrics
                    .dropped
                    .get_or_create(&label("reason", "writer_busy"))
                    .inc();
            }
            reply(&mut waiter, Outcome::Listed);
            "listed"
        }
        Admission::Verifying | Admission::Probed(_) => {
            if let Some(t) = waiter.take() {
                waiters.wait(key, t);
            }
            if matches!(admission, Admission::Verifying) {
                "verifying"
            } else {
                "probed"
            }
        }
        Admission::Dropped(reason) => {
            let why = match reason {
                DropReason::TooManyOnIp => "too many servers on ip".into(),
                DropReason::Private => "address not listed here".into(),
                other => format!("master busy ({}), try again later", other.name()),
            };
            reply(&mut waiter, Outcome::Failed(why));
            reason.name()
        }
    };
    shared
        .metrics
        .registrations
        .get_or_create(&labels("protocol", "cube2", "outcome", outcome))
        .inc();
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use crate::store::Store;
    use crate::{now_ms, Master, MasterConfig};

    /// The receive loops have a thread of their own: a list request is answered while
    /// the runtime's only thread is blocked (by a long merge, say). On the runtime, it
    /// waited until the thread was free again, while the kernel dropped what overflowed
    /// the socket's buffer.
    #[tokio::test(flavor = "current_thread")]
    async fn the_udp_port_answers_while_the_runtime_is_blocked() {
        let mut r = [0u8; 4];
        let _ = getrandom::fill(&mut r);
        let path = std::env::temp_dir().join(format!(
            "ogp-master-udp-thread-{}-{:08x}.db",
            std::process::id(),
            u32::from_le_bytes(r)
        ));
        let db = format!("sqlite://{}", path.display());
        let store = Store::open(&db).await.unwrap();
        store.insert_simulated(4, now_ms()).await.unwrap();
        drop(store);
        let config = MasterConfig {
            db,
            udp: vec!["127.0.0.1:0".parse().unwrap()],
            http: None,
            allow_private: true,
            ..MasterConfig::default()
        };
        let master = Master::start(config).await.unwrap();
        let to = master.udp_addrs()[0];
        let client = std::thread::spawn(move || {
            let s = std::net::UdpSocket::bind("127.0.0.1:0").unwrap();
            s.set_read_timeout(Some(Duration::from_secs(2))).unwrap();
            // Valve's list request: any region, from the start, no filter
            s.send_to(b"\x31\xff0.0.0.0:0\0\0", to).unwrap();
            let mut buf = [0u8; 2048];
            s.recv_from(&mut buf).map(|(n, _)| buf[..n].to_vec())
        });
        // the runtime's only thread, blocked longer than the client waits
        std::thread::sleep(Duration::from_millis(2500));
        let answer = client
            .join()
            .unwrap()
            .expect("answered while the runtime was blocked");
        assert!(
            answer.starts_with(b"\xff\xff\xff\xff\x66\x0a"),
            "{answer:?}"
        );
        // the 2 A2S servers of the 4 (one is Quake III, one GameSpy v1) and the end
        // marker, 6 bytes each
        assert_eq!(answer.len(), 6 + 3 * 6);
        master.shutdown().await;
        for suffix in ["", "-wal", "-shm"] {
            let _ = std::fs::remove_file(format!("{}{suffix}", path.display()));
        }
    }
}
