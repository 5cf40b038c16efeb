//! `ogp-load responder`: replies per second of one responder core, against a raw UDP
//! echo baseline measured the same way.
//!
//! Both servers run alone on a dedicated thread with a tokio current-thread runtime, as
//! one spawned task reading with `recv_from` and answering with `send_to` (one datagram
//! per call) on a `tokio::net::UdpSocket` bound to 127.0.0.1, inside the same
//! `select!`-on-shutdown loop shape. The responder is the real thing
//! (`ogp_net::responder::spawn_on`); the echo server answers every datagram with a copy
//! of a real answer (same size), into which it copies the query's RequestID.
//!
//! The load generator runs on the main thread (the other core) with its own
//! current-thread runtime: `--sources` sockets bound to 127.0.0.10, .11, …, each
//! connected to the server. Each first obtains its challenge through the library client
//! (Error 3 flow), then keeps `--window` queries in flight: a query goes out again as
//! soon as its answer is back (closed loop). The RequestID of each query names its
//! window slot and a generation, so late answers are not counted twice and a slot whose
//! answer is lost (no answer in 100 ms) is sent again with a new generation.

use std::io;
use std::net::{IpAddr, Ipv4Addr, SocketAddr};
use std::path::PathBuf;
use std::sync::mpsc;
use std::sync::Arc;
use std::time::{Duration, Instant};

use anyhow::{anyhow, bail, ensure, Context as _, Result};
use ogp_net::{responder, StatusCell};
use ogp_proto::guard::RateConfig;
use ogp_proto::ogp::{self, DefaultQuery, Header, Message, PacketType};
use ogp_proto::responder::{ResponderConfig, Stats};
use tokio::net::UdpSocket;
use tokio::sync::{oneshot, watch};

use crate::common::{self, MachineCpu};

/// Options of `ogp-load responder`.
#[derive(clap::Args, Debug)]
pub struct Args {
    /// Seconds measured per run, after the warm-up (0.2–600).
    #[arg(long, default_value_t = 3.0)]
    pub seconds: f64,
    /// Sender sockets, each bound to its own address 127.0.0.10, .11, … (1–200).
    #[arg(long, default_value_t = 4, value_parser = clap::value_parser!(u16).range(1..=200))]
    pub sources: u16,
    /// Queries each sender keeps in flight (1–256).
    #[arg(long, default_value_t = 16, value_parser = clap::value_parser!(u16).range(1..=256))]
    pub window: u16,
    /// Responder/echo pairs of runs, alternating; medians are reported (1–50).
    #[arg(long, default_value_t = 3, value_parser = clap::value_parser!(u32).range(1..=50))]
    pub rounds: u32,
    /// Warm-up seconds before each measured run (not counted; 0–60).
    #[arg(long, default_value_t = 0.5)]
    pub warmup: f64,
    /// Hard cap on queries sent per run, all senders together.
    #[arg(long, default_value_t = 50_000_000)]
    pub max_queries: u64,
    /// Run only one of the two servers (for profiling one of them).
    #[arg(long, value_enum)]
    pub only: Option<Only>,
}

/// Which server `--only` keeps.
#[derive(clap::ValueEnum, Debug, Clone, Copy, PartialEq, Eq)]
pub enum Only {
    /// The OGP responder.
    Responder,
    /// The echo baseline (a responder still runs briefly, to hand out challenges and one
    /// real answer).
    Echo,
}

/// Where the servers listen.
const SERVER_ADDR: SocketAddr = SocketAddr::new(IpAddr::V4(Ipv4Addr::new(127, 0, 0, 1)), 0);
/// Same receive buffer as the responder task.
const RECV_BUF: usize = 2048;
/// A window slot without an answer for this long is counted lost and sent again.
const LOSS_TIMEOUT: Duration = Duration::from_millis(100);
/// How often lost slots are looked for.
const SCAN_EVERY: Duration = Duration::from_millis(10);
/// One answer in this many is fully decoded (every answer's size and RequestID are
/// checked).
const DECODE_EVERY: u64 = 1000;

/// The benchmark's rate limit. The load comes from a handful of source addresses, each
/// sending hundreds of thousands of queries per second, so the per-source limit is set
/// far above that; the limiter still runs (hash, table lookup, bucket update) for every
/// datagram, as in production.
const BENCH_RATE: RateConfig = RateConfig::new(10_000_000.0, 1_000_000.0);

/// What the echo server sends back.
#[derive(Debug)]
struct EchoReply {
    /// A real answer of the responder (so sizes match and it decodes).
    bytes: Vec<u8>,
    /// Where the RequestID is in a query.
    query_rid_at: usize,
    /// Where the RequestID is in the answer.
    reply_rid_at: usize,
}

enum Kind {
    Responder {
        cell: Arc<StatusCell>,
        config: Box<ResponderConfig>,
    },
    Echo(Arc<EchoReply>),
}

impl Kind {
    fn label(&self) -> &'static str {
        match self {
            Kind::Responder { .. } => "responder",
            Kind::Echo(_) => "echo",
        }
    }
}

type Ready = (SocketAddr, Option<PathBuf>);

/// A server running on its own thread.
struct Server {
    addr: SocketAddr,
    schedstat: Option<PathBuf>,
    stop: oneshot::Sender<()>,
    thread: std::thread::JoinHandle<Result<Option<Stats>>>,
}

impl Server {
    fn start(kind: Kind) -> Result<Self> {
        let (ready_tx, ready_rx) = mpsc::sync_channel::<Ready>(1);
        let (stop_tx, stop_rx) = oneshot::channel::<()>();
        let thread = std::thread::Builder::new()
            .name(format!("{}-server", kind.label()))
            .spawn(move || -> Result<Option<Stats>> {
                let rt = tokio::runtime::Builder::new_current_thread()
                    .enable_all()
                    .build()?;
                rt.block_on(serve(kind, ready_tx, stop_rx))
            })?;
        match ready_rx.recv_timeout(Duration::from_secs(10)) {
            Ok((addr, schedstat)) => Ok(Self {
                addr,
                schedstat,
                stop: stop_tx,
                thread,
            }),
            Err(_) => {
                drop(stop_tx);
                match thread.join() {
                    Ok(Err(e)) => Err(e.context("server thread")),
                    _ => bail!("server thread did not start"),
                }
            }
        }
    }

    fn stop(self) -> Result<Option<Stats>> {
        let _ = self.stop.send(());
        self.thread
            .join()
            .map_err(|_| anyhow!("server thread panicked"))?
    }
}

async fn serve(
    kind: Kind,
    ready: mpsc::SyncSender<Ready>,
    stop: oneshot::Receiver<()>,
) -> Result<Option<Stats>> {
    let socket = UdpSocket::bind(SERVER_ADDR).await?;
    let addr = socket.local_addr()?;
    let schedstat = common::this_thread_schedstat_path();
    match kind {
        Kind::Responder { cell, config } => {
            let handle = responder::spawn_on(socket, cell, *config)?;
            let _ = ready.send((addr, schedstat));
            let _ = stop.await;
            let stats = handle.stats();
            handle.shutdown().await?;
            Ok(Some(stats))
        }
        Kind::Echo(reply) => {
            let (tx, rx) = watch::channel(false);
            let task = tokio::spawn(echo(socket, reply, rx));
            let _ = ready.send((addr, schedstat));
            let _ = stop.await;
            let _ = tx.send(true);
            task.await??;
            Ok(None)
        }
    }
}

/// The baseline: the responder task's loop with the protocol work replaced by copying
/// four bytes.
async fn echo(
    socket: UdpSocket,
    reply: Arc<EchoReply>,
    mut shutdown: watch::Receiver<bool>,
) -> io::Result<()> {
    let mut buf = vec![0u8; RECV_BUF];
    let mut out = reply.bytes.clone();
    let q = reply.query_rid_at;
    let r = reply.reply_rid_at;
    loop {
        let (n, src) = tokio::select! {
            r = socket.recv_from(&mut buf) => match r {
                Ok(v) => v,
                Err(e) if ogp_net::responder::is_transient(&e) => continue,
                Err(e) => return Err(e),
            },
            _ = shutdown.changed() => return Ok(()),
        };
        if let (Some(id), Some(dst)) = (
            buf.get(q..q + 4).filter(|_| n >= q + 4),
            out.get_mut(r..r + 4),
        ) {
            dst.copy_from_slice(id);
        }
        // Errors are ignored as the responder ignores them (it only logs them at debug).
        let _ = socket.send_to(&out, src).await;
    }
}

/// The query datagrams of one sender (one per window slot) and what answers look like.
#[derive(Debug, Clone)]
struct Plan {
    /// Per sender: its source address and its query (with its valid challenge).
    queries: Vec<(SocketAddr, Vec<u8>)>,
    /// Size of every answer.
    answer_len: usize,
    /// Where the RequestID is in a query.
    query_rid_at: usize,
    /// Where the RequestID is in an answer.
    answer_rid_at: usize,
}

fn source_addr(i: u16) -> SocketAddr {
    let last = u8::try_from(10 + u32::from(i)).unwrap_or(u8::MAX);
    SocketAddr::new(IpAddr::V4(Ipv4Addr::new(127, 0, 0, last)), 0)
}

/// Where the RequestID sits: it is the last header field of a query without
/// MaxBytesPerPacket and of an unsplit answer, so it ends where the header ends.
fn rid_offset(datagram: &[u8]) -> Result<usize> {
    let hs = usize::from(*datagram.get(8).context("datagram too short")?);
    let at = (8 + hs)
        .checked_sub(4)
        .context("header too short for a RequestID")?;
    ensure!(at + 4 <= datagram.len(), "RequestID past the end");
    Ok(at)
}

fn read_rid(d: &[u8], at: usize) -> Option<u32> {
    d.get(at..at + 4)
        .and_then(|b| <[u8; 4]>::try_from(b).ok())
        .map(u32::from_le_bytes)
}

fn encode_rid(slot: usize, generation: u32) -> u32 {
    // slot < 256; generation < 2^23: never 0, never wraps.
    ((generation << 8) | (slot as u32 & 0xff)) + 1
}

/// Obtains each sender's challenge from the responder (library client, Error 3 flow)
/// and one real answer to learn its size and to serve from the echo server.
async fn plan(server: SocketAddr, sources: u16) -> Result<(Plan, Vec<u8>)> {
    let opts = ogp_proto::client::Options::with_timing(
        ogp_proto::client::Timing::default()
            .attempt_timeout(Duration::from_millis(300))
            .retries(3)
            .total_timeout(Duration::from_secs(3)),
    );
    let mut queries = Vec::new();
    let mut sample = None;
    for i in 0..sources {
        let addr = source_addr(i);
        let socket = UdpSocket::bind(addr)
            .await
            .with_context(|| format!("binding {addr}"))?;
        socket.connect(server).await?;
        let outcome = ogp_net::client::query_on(&socket, ogp_proto::Protocol::Ogp, &opts)
            .await
            .with_context(|| format!("challenge flow from {addr}"))?;
        ensure!(
            outcome.datagrams == 1,
            "the answer was split into {} datagrams",
            outcome.datagrams
        );
        let ogp_proto::client::Details::Ogp(details) = outcome.details else {
            bail!("not an OGP answer");
        };
        let challenge = details.challenge.context("no challenge in the answer")?;
        let header = Header {
            challenge: Some(challenge),
            request_id: Some(encode_rid(0, 0)),
            ..Header::query(PacketType::DEFAULT_QUERY).with_utf8(true)
        };
        let mut q = Vec::new();
        ogp::encode_query(&header, Some(&DefaultQuery::everything()), &mut q);
        if sample.is_none() {
            sample = Some(raw_exchange(&socket, &q).await?);
        }
        queries.push((addr, q));
    }
    let answer = sample.context("no sources")?;
    let first = &queries.first().context("no sources")?.1;
    let query_rid_at = rid_offset(first)?;
    let answer_rid_at = rid_offset(&answer)?;
    // Check the offsets against the decoder.
    let (qh, _) = ogp::decode_query_header(first).map_err(|e| anyhow!("query: {e}"))?;
    ensure!(qh.request_id == read_rid(first, query_rid_at));
    let packet = ogp::decode(&answer).map_err(|e| anyhow!("answer: {e}"))?;
    ensure!(
        matches!(packet.message, Message::Answer(_)),
        "not an answer: {:?}",
        packet.message
    );
    ensure!(packet.header.request_id == read_rid(&answer, answer_rid_at));
    ensure!(packet.header.request_id == Some(encode_rid(0, 0)));
    let plan = Plan {
        queries,
        answer_len: answer.len(),
        query_rid_at,
        answer_rid_at,
    };
    Ok((plan, answer))
}

async fn raw_exchange(socket: &UdpSocket, query: &[u8]) -> Result<Vec<u8>> {
    let mut buf = vec![0u8; 65536];
    for _ in 0..5 {
        socket.send(query).await?;
        if let Ok(r) = tokio::time::timeout(Duration::from_millis(300), socket.recv(&mut buf)).await
        {
            let n = r?;
            return Ok(buf.get(..n).unwrap_or_default().to_vec());
        }
    }
    bail!("no answer to a query with a valid challenge")
}

/// The timing of one run.
#[derive(Debug, Clone, Copy)]
struct Window {
    measure_from: Instant,
    end: Instant,
    max_sends: u64,
}

/// What one sender saw.
#[derive(Debug, Default, Clone, Copy)]
struct Tally {
    /// Answers accepted inside the measured window.
    counted: u64,
    /// Datagrams received.
    received: u64,
    /// Queries sent.
    sends: u64,
    /// Slots given up on (no answer in 100 ms) and sent again.
    lost: u64,
    /// Answers to an older generation of a slot, or with an unknown RequestID.
    stale: u64,
    /// Datagrams of another size than the answer.
    bad_size: u64,
    /// Answers fully decoded, and how many of those failed.
    decoded: u64,
    decode_failed: u64,
}

impl Tally {
    fn add(&mut self, o: &Tally) {
        self.counted += o.counted;
        self.received += o.received;
        self.sends += o.sends;
        self.lost += o.lost;
        self.stale += o.stale;
        self.bad_size += o.bad_size;
        self.decoded += o.decoded;
        self.decode_failed += o.decode_failed;
    }
}

/// One sender: keeps `window` queries in flight until the end of the run.
async fn drive(
    socket: UdpSocket,
    query: Vec<u8>,
    window: usize,
    plan: Arc<Plan>,
    win: Window,
) -> io::Result<Tally> {
    let mut t = Tally::default();
    let mut q = query;
    let qa = plan.query_rid_at;
    let aa = plan.answer_rid_at;
    let mut generation = vec![0u32; window];
    let mut sent_at = vec![Instant::now(); window];
    let mut buf = vec![0u8; 65536];

    async fn send(
        socket: &UdpSocket,
        q: &mut [u8],
        at: usize,
        rid: u32,
        t: &mut Tally,
    ) -> io::Result<()> {
        if let Some(dst) = q.get_mut(at..at + 4) {
            dst.copy_from_slice(&rid.to_le_bytes());
        }
        t.sends += 1;
        match socket.send(q).await {
            Ok(_) => Ok(()),
            Err(e) if ogp_net::responder::is_transient(&e) => Ok(()),
            Err(e) => Err(e),
        }
    }

    for slot in 0..window {
        send(&socket, &mut q, qa, encode_rid(slot, 0), &mut t).await?;
        if let Some(s) = sent_at.get_mut(slot) {
            *s = Instant::now();
        }
    }
    let mut next_scan = Instant::now() + SCAN_EVERY;
    let tick = tokio::time::sleep(SCAN_EVERY);
    tokio::pin!(tick);
    let mut accepted = 0u64;
    loop {
        let got = tokio::select! {
            biased;
            r = socket.recv(&mut buf) => match r {
                Ok(n) => Some(n),
                Err(e) if ogp_net::responder::is_transient(&e) => None,
                Err(e) => return Err(e),
            },
            () = &mut tick => {
                tick.as_mut().reset(tokio::time::Instant::now() + SCAN_EVERY);
                None
            }
        };
        let now = Instant::now();
        if now >= win.end || t.sends >= win.max_sends {
            break;
        }
        if let Some(n) = got {
            t.received += 1;
            let d = buf.get(..n).unwrap_or_default();
            if n != plan.answer_len {
                t.bad_size += 1;
                continue;
            }
            let Some(v) = read_rid(d, aa).and_then(|r| r.checked_sub(1)) else {
                t.stale += 1;
                continue;
            };
            let slot = (v & 0xff) as usize;
            let g = v >> 8;
            let current = generation.get(slot).copied();
            if current != Some(g) {
                t.stale += 1;
                continue;
            }
            accepted += 1;
            if now >= win.measure_from {
                t.counted += 1;
            }
            if accepted % DECODE_EVERY == 1 {
                t.decoded += 1;
                let ok = matches!(
                    ogp::decode(d).map(|p| p.message),
                    Ok(Message::Answer(a)) if a.status.host_name.is_some()
                );
                if !ok {
                    t.decode_failed += 1;
                }
            }
            let g = (g + 1) & 0x7f_ffff;
            if let Some(x) = generation.get_mut(slot) {
                *x = g;
            }
            if let Some(s) = sent_at.get_mut(slot) {
                *s = now;
            }
            send(&socket, &mut q, qa, encode_rid(slot, g), &mut t).await?;
        }
        if now >= next_scan {
            next_scan = now + SCAN_EVERY;
            for slot in 0..window {
                let (Some(s), Some(gen)) = (sent_at.get_mut(slot), generation.get_mut(slot)) else {
                    continue;
                };
                if now.saturating_duration_since(*s) >= LOSS_TIMEOUT {
                    t.lost += 1;
                    *gen = (*gen + 1) & 0x7f_ffff;
                    *s = now;
                    let rid = encode_rid(slot, *gen);
                    send(&socket, &mut q, qa, rid, &mut t).await?;
                }
            }
        }
    }
    Ok(t)
}

/// CPU readings at the start and the end of the measured window.
#[derive(Debug, Default, Clone, Copy)]
struct Busy {
    /// Fraction of the window the server thread ran.
    server: Option<f64>,
    /// Fraction of the window the load generator thread ran.
    generator: Option<f64>,
    /// Cores busy machine-wide, on average.
    machine_cores: Option<f64>,
}

async fn sample_cpu(server: Option<PathBuf>, win: Window) -> Busy {
    let me = common::this_thread_schedstat_path();
    let read = || {
        (
            Instant::now(),
            common::thread_cpu(server.as_deref()),
            common::thread_cpu(me.as_deref()),
            MachineCpu::read(),
        )
    };
    tokio::time::sleep_until(win.measure_from.into()).await;
    let a = read();
    tokio::time::sleep_until(win.end.into()).await;
    let b = read();
    let wall = b.0.saturating_duration_since(a.0).as_secs_f64();
    let frac = |x: Option<Duration>, y: Option<Duration>| match (x, y) {
        (Some(x), Some(y)) if wall > 0.0 => Some(y.saturating_sub(x).as_secs_f64() / wall),
        _ => None,
    };
    Busy {
        server: frac(a.1, b.1),
        generator: frac(a.2, b.2),
        machine_cores: match (a.3, b.3) {
            (Some(x), Some(y)) => Some(y.busy_cores_since(&x)),
            _ => None,
        },
    }
}

/// The result of one run.
#[derive(Debug, Clone, Copy)]
struct RunResult {
    rate: f64,
    tally: Tally,
    busy: Busy,
    stats: Option<Stats>,
}

async fn run_once(
    server: &Server,
    plan: &Arc<Plan>,
    args: &Args,
) -> Result<(Tally, Busy, Duration)> {
    let mut sockets = Vec::new();
    for (addr, q) in &plan.queries {
        let s = UdpSocket::bind(addr)
            .await
            .with_context(|| format!("binding {addr}"))?;
        s.connect(server.addr).await?;
        sockets.push((s, q.clone()));
    }
    let start = Instant::now();
    let measure_from = start + Duration::from_secs_f64(args.warmup);
    let measured = Duration::from_secs_f64(args.seconds);
    let win = Window {
        measure_from,
        end: measure_from + measured,
        max_sends: (args.max_queries / u64::from(args.sources)).max(1),
    };
    let mut tasks = Vec::new();
    for (s, q) in sockets {
        let window = usize::from(args.window);
        tasks.push(tokio::spawn(drive(s, q, window, Arc::clone(plan), win)));
    }
    let sampler = tokio::spawn(sample_cpu(server.schedstat.clone(), win));
    let mut tally = Tally::default();
    for t in tasks {
        tally.add(&t.await??);
    }
    let busy = sampler.await?;
    Ok((tally, busy, measured))
}

fn print_run(round: u32, label: &str, r: &RunResult) {
    let pct = |x: Option<f64>| x.map_or("?".into(), |x| format!("{:.0}%", x * 100.0));
    let cores = r
        .busy
        .machine_cores
        .map_or("?".into(), |c| format!("{c:.2}"));
    let t = &r.tally;
    println!(
        "round {round} {label:<9} {:>9.0} replies/s   server thread {:>4}, generator {:>4}, machine {cores} cores busy   lost {} stale {} bad-size {} decoded {}/{} ok",
        r.rate,
        pct(r.busy.server),
        pct(r.busy.generator),
        t.lost,
        t.stale,
        t.bad_size,
        t.decoded - t.decode_failed,
        t.decoded,
    );
    if let Some(s) = r.stats {
        println!(
            "        responder stats: received {} sent {} rate-limited {} ignored {}",
            s.received, s.sent, s.rate_limited, s.ignored
        );
    }
}

/// CPU time of the server thread per reply, in microseconds.
fn cpu_per_reply_us(r: &RunResult) -> Option<f64> {
    r.busy
        .server
        .filter(|_| r.rate > 0.0)
        .map(|b| b / r.rate * 1e6)
}

/// Runs `ogp-load responder`.
pub fn run(args: &Args) -> Result<()> {
    ensure!(
        (0.2..=600.0).contains(&args.seconds),
        "--seconds must be within 0.2–600"
    );
    ensure!(
        (0.0..=60.0).contains(&args.warmup),
        "--warmup must be within 0–60"
    );
    let status = common::status()?;
    let cell = StatusCell::new(status);
    let mut config = ResponderConfig::default();
    config.rate = BENCH_RATE;
    common::print_command(
        "responder",
        &format!(
            "--seconds {} --sources {} --window {} --rounds {} --warmup {} --max-queries {}{}",
            args.seconds,
            args.sources,
            args.window,
            args.rounds,
            args.warmup,
            args.max_queries,
            match args.only {
                None => "",
                Some(Only::Responder) => " --only responder",
                Some(Only::Echo) => " --only echo",
            }
        ),
    );
    common::print_load("before");
    println!(
        "responder rate limit for the benchmark: {}/s per source, burst {} (few source addresses carry all the load; the limiter still runs on every datagram)",
        BENCH_RATE.per_second, BENCH_RATE.burst
    );
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()?;
    let mut responder_runs = Vec::new();
    let mut echo_runs = Vec::new();
    let mut shape: Option<(usize, usize)> = None;
    let mut echo_reply: Option<Arc<EchoReply>> = None;
    for round in 1..=args.rounds {
        // Responder run (obtains fresh challenges from this responder).
        let server = Server::start(Kind::Responder {
            cell: Arc::clone(&cell),
            config: Box::new(config.clone()),
        })?;
        let skip = args.only == Some(Only::Echo);
        let outcome = rt.block_on(async {
            let (plan, answer) = plan(server.addr, args.sources).await?;
            let plan = Arc::new(plan);
            let r = if skip {
                None
            } else {
                Some(run_once(&server, &plan, args).await?)
            };
            anyhow::Ok((plan, answer, r))
        });
        let stats = server.stop()?;
        let (plan, answer, run) = outcome?;
        if shape.is_none() {
            shape = Some((plan.queries.first().map_or(0, |q| q.1.len()), answer.len()));
            println!(
                "query {} bytes, answer {} bytes (DefaultQuery::everything, state.json, valid challenge, unsplit)",
                plan.queries.first().map_or(0, |q| q.1.len()),
                answer.len()
            );
            println!(
                "{} senders x window {} = {} queries in flight; warm-up {} s, measured {} s per run",
                args.sources,
                args.window,
                u32::from(args.sources) * u32::from(args.window),
                args.warmup,
                args.seconds
            );
        }
        if let Some((tally, busy, measured)) = run {
            let r = RunResult {
                rate: tally.counted as f64 / measured.as_secs_f64(),
                tally,
                busy,
                stats,
            };
            print_run(round, "responder", &r);
            responder_runs.push(r);
        }
        let reply = echo_reply
            .get_or_insert_with(|| {
                Arc::new(EchoReply {
                    bytes: answer,
                    query_rid_at: plan.query_rid_at,
                    reply_rid_at: plan.answer_rid_at,
                })
            })
            .clone();

        if args.only == Some(Only::Responder) {
            continue;
        }
        // Echo run, same senders, same queries, same answer size.
        let server = Server::start(Kind::Echo(reply))?;
        let outcome = rt.block_on(run_once(&server, &plan, args));
        server.stop()?;
        let (tally, busy, measured) = outcome?;
        let r = RunResult {
            rate: tally.counted as f64 / measured.as_secs_f64(),
            tally,
            busy,
            stats: None,
        };
        print_run(round, "echo", &r);
        echo_runs.push(r);
    }
    let (qlen, alen) = shape.unwrap_or_default();
    let resp = common::median(responder_runs.iter().map(|r| r.rate).collect());
    let echo = common::median(echo_runs.iter().map(|r| r.rate).collect());
    let resp_cpu = common::median(responder_runs.iter().filter_map(cpu_per_reply_us).collect());
    let echo_cpu = common::median(echo_runs.iter().filter_map(cpu_per_reply_us).collect());
    let gen_busy = common::median(echo_runs.iter().filter_map(|r| r.busy.generator).collect());
    let echo_server_busy = common::median(echo_runs.iter().filter_map(|r| r.busy.server).collect());
    println!();
    println!("summary (medians of {} rounds):", args.rounds);
    println!("  answer size      {alen} bytes (query {qlen} bytes)");
    println!("  responder        {resp:.0} replies/s   server CPU {resp_cpu:.2} µs/reply");
    println!("  echo baseline    {echo:.0} replies/s   server CPU {echo_cpu:.2} µs/reply");
    println!(
        "  ratio            {:.3} responder/echo (replies/s; target >= 0.8)",
        resp / echo
    );
    println!(
        "  CPU-cost ratio   {:.3} echo µs/reply ÷ responder µs/reply",
        echo_cpu / resp_cpu
    );
    let resp_server_busy = common::median(
        responder_runs
            .iter()
            .filter_map(|r| r.busy.server)
            .collect(),
    );
    println!(
        "  server thread    busy {:.0}% (responder runs), {:.0}% (echo runs); generator {:.0}% (echo runs)",
        resp_server_busy * 100.0,
        echo_server_busy * 100.0,
        gen_busy * 100.0
    );
    if resp_server_busy < 0.9 || echo_server_busy < 0.9 {
        println!(
            "  NOTE: a server thread below ~90% busy was not saturated (the generator was too slow, or another process took its core), so its replies/s is below its capacity; compare the µs/reply figures (CPU-cost ratio) instead, or re-run on a quiet machine"
        );
    }
    common::print_load("after");
    Ok(())
}
