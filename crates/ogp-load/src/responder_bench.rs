//! `ogp-load responder`: replies per second of the responder against two UDP echo
//! baselines (one datagram per system call, and batched), measured the same way, for
//! the common answer of each protocol (OGP full answer, A2S_INFO, GameSpy v3 full, Quake
//! III `getstatus`), on 1 and 2 threads.
//!
//! Every server runs on threads of its own, each with a tokio current-thread runtime:
//!
//! * **responder**: the real one, `ogp_net::responder::spawn_many_with` with
//!   `NetConfig::threads` = T (T threads, each with its own `SO_REUSEPORT` socket, batched
//!   I/O), serving the project's `state.json`.
//! * **batched echo**: T threads with `SO_REUSEPORT` sockets, reading and writing with
//!   the same batched I/O as the responder (`ogp_net::batch`: `recvmmsg`/`sendmmsg`),
//!   answering every datagram with a copy of a real answer of the responder (same size)
//!   into which it copies the query's 4-byte id. The responder with its protocol work
//!   replaced by a 4-byte copy.
//! * **plain echo**: the same with one `recv_from` and one `send_to` per datagram.
//!
//! The load generator runs on the main thread with its own current-thread runtime:
//! `--sources` sockets bound to 127.0.0.10, .11, …, each connected to the server, reading
//! and writing with the same batched I/O. Each first obtains its challenge from the
//! responder, then keeps `--window` queries in flight (closed loop). For OGP and GameSpy
//! v3 the RequestID / session id of each query names its window slot and a generation,
//! so late answers are not counted twice and a slot whose answer is lost (no answer in
//! 100 ms) is sent again with a new generation; A2S_INFO and Quake III `statusResponse`
//! answers carry no id, so each answer of the right size frees the oldest slot.
//!
//! Quake III has no challenge, so its answers are unproven: the responder is configured
//! with Quake III on and its byte budgets and the shared unproven-answer limits raised to
//! the benchmark's rate (as `--rate` is raised for the others), so that what is measured
//! is the answering, not a budget.

use std::io;
use std::net::{IpAddr, Ipv4Addr, SocketAddr};
use std::sync::Arc;
use std::time::{Duration, Instant};

use anyhow::{anyhow, bail, ensure, Context as _, Result};
use ogp_net::batch::{self, RecvBufs, BATCH};
use ogp_net::responder::{self, NetConfig};
use ogp_net::StatusCell;
use ogp_proto::gamespy3::request::{InfoKind, Request};
use ogp_proto::guard::RateConfig;
use ogp_proto::ogp::{self, DefaultQuery, Header, Message, PacketType};
use ogp_proto::responder::{Listener, ResponderConfig, Stats};
use tokio::io::Interest;
use tokio::net::UdpSocket;
use tokio::sync::watch;

use crate::common::{self, MachineCpu};

/// Options of `ogp-load responder`.
#[derive(clap::Args, Debug)]
pub struct Args {
    /// Seconds measured per run, after the warm-up (0.2–600).
    #[arg(long, default_value_t = 3.0)]
    pub seconds: f64,
    /// Sender sockets, each bound to its own address 127.0.0.10, .11, … (1–200). Several
    /// are needed for `SO_REUSEPORT` to spread the load over the server's threads.
    #[arg(long, default_value_t = 16, value_parser = clap::value_parser!(u16).range(1..=200))]
    pub sources: u16,
    /// Queries each sender keeps in flight (1–256).
    #[arg(long, default_value_t = 4, value_parser = clap::value_parser!(u16).range(1..=256))]
    pub window: u16,
    /// Rounds of runs (each round runs every server once); medians are reported (1–50).
    #[arg(long, default_value_t = 3, value_parser = clap::value_parser!(u32).range(1..=50))]
    pub rounds: u32,
    /// Warm-up seconds before each measured run (not counted; 0–60).
    #[arg(long, default_value_t = 0.5)]
    pub warmup: f64,
    /// Hard cap on queries sent per run, all senders together.
    #[arg(long, default_value_t = 50_000_000)]
    pub max_queries: u64,
    /// Protocols whose common answer is measured.
    #[arg(
        long,
        value_enum,
        value_delimiter = ',',
        default_value = "ogp,a2s,gs3,quake3"
    )]
    pub protocols: Vec<Proto>,
    /// Server threads to measure with (each number a set of runs; 1–16).
    #[arg(long, value_delimiter = ',', default_value = "1,2",
          value_parser = clap::value_parser!(u16).range(1..=16))]
    pub threads: Vec<u16>,
    /// Run only one of the servers (for profiling it).
    #[arg(long, value_enum)]
    pub only: Option<Only>,
}

/// A protocol's common answer.
#[derive(clap::ValueEnum, Debug, Clone, Copy, PartialEq, Eq)]
pub enum Proto {
    /// OGP: a default query for everything (UTF-8), with its challenge: the full answer.
    Ogp,
    /// Valve A2S: A2S_INFO with its challenge.
    A2s,
    /// GameSpy v3: the full (sub-protocol B) request with its challenge.
    Gs3,
    /// Quake III: `getstatus` (no challenge in this protocol), answered with the whole
    /// `statusResponse` (`ogp serve --quake3`).
    Quake3,
}

impl Proto {
    fn name(self) -> &'static str {
        match self {
            Proto::Ogp => "OGP full answer",
            Proto::A2s => "A2S_INFO",
            Proto::Gs3 => "GameSpy v3 full",
            Proto::Quake3 => "Quake III getstatus",
        }
    }
}

/// Which server `--only` keeps.
#[derive(clap::ValueEnum, Debug, Clone, Copy, PartialEq, Eq)]
pub enum Only {
    /// The responder.
    Responder,
    /// The batched echo.
    BatchedEcho,
    /// The plain echo.
    PlainEcho,
}

/// The servers, in the order each round runs them.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Which {
    Responder,
    BatchedEcho,
    PlainEcho,
}

impl Which {
    const ALL: [Which; 3] = [Which::Responder, Which::BatchedEcho, Which::PlainEcho];

    fn label(self) -> &'static str {
        match self {
            Which::Responder => "responder",
            Which::BatchedEcho => "batched echo",
            Which::PlainEcho => "plain echo",
        }
    }

    fn thread_prefix(self) -> &'static str {
        match self {
            Which::Responder => "ogp-responder-",
            Which::BatchedEcho | Which::PlainEcho => "echo-server-",
        }
    }

    fn wanted(self, only: Option<Only>) -> bool {
        match only {
            None => true,
            Some(Only::Responder) => self == Which::Responder,
            Some(Only::BatchedEcho) => self == Which::BatchedEcho,
            Some(Only::PlainEcho) => self == Which::PlainEcho,
        }
    }
}

/// Where the servers listen.
const SERVER_ADDR: SocketAddr = SocketAddr::new(IpAddr::V4(Ipv4Addr::new(127, 0, 0, 1)), 0);
/// A window slot without an answer for this long is counted lost and sent again.
const LOSS_TIMEOUT: Duration = Duration::from_millis(100);
/// How often lost slots are looked for.
const SCAN_EVERY: Duration = Duration::from_millis(10);
/// One answer in this many is checked more closely (every answer's size and id are
/// checked).
const DECODE_EVERY: u64 = 1000;

/// The benchmark's rate limit. The load comes from a handful of source addresses, each
/// sending tens of thousands of queries per second, so the per-source limit is set far
/// above that; the limiter still runs (hash, shard lock, table lookup, bucket update)
/// for every datagram, as in production.
const BENCH_RATE: RateConfig = RateConfig::new(10_000_000.0, 1_000_000.0);

/// What the echo servers send back.
#[derive(Debug)]
struct EchoReply {
    /// A real answer of the responder (so sizes match).
    bytes: Vec<u8>,
    /// Where the 4-byte id is in a query and in the answer, if the protocol has one.
    id: Option<(usize, usize)>,
}

/// A server running on threads of its own.
struct Server {
    addr: SocketAddr,
    which: Which,
    stop: Box<dyn FnOnce() -> Result<Option<Stats>>>,
}

impl Server {
    fn responder(cell: &Arc<StatusCell>, config: &ResponderConfig, threads: usize) -> Result<Self> {
        let (ready_tx, ready_rx) = std::sync::mpsc::sync_channel(1);
        let (stop_tx, stop_rx) = tokio::sync::oneshot::channel::<()>();
        let cell = Arc::clone(cell);
        let config = config.clone();
        let thread = std::thread::Builder::new()
            .name("responder-main".into())
            .spawn(move || -> Result<Option<Stats>> {
                let rt = tokio::runtime::Builder::new_current_thread()
                    .enable_all()
                    .build()?;
                rt.block_on(async move {
                    let handle = responder::spawn_many_with(
                        &[(SERVER_ADDR, Listener::Standard)],
                        cell,
                        config,
                        NetConfig::default().with_threads(threads),
                    )
                    .await?;
                    let _ = ready_tx.send(handle.local_addr());
                    let _ = stop_rx.await;
                    let stats = handle.stats();
                    let per_thread = handle.thread_stats();
                    if per_thread.len() > 1 {
                        // Each source address is steered to one thread (Linux): the
                        // split follows the sources, and no thread waits on another.
                        let received: Vec<String> =
                            per_thread.iter().map(|s| s.received.to_string()).collect();
                        println!("        received per thread: {}", received.join(" / "));
                    }
                    if let Some(d) = handle.kernel_drops().filter(|&d| d > 0) {
                        println!("        kernel drops at the responder's sockets: {d}");
                    }
                    handle.shutdown().await?;
                    Ok(Some(stats))
                })
            })?;
        let addr = ready_rx
            .recv_timeout(Duration::from_secs(10))
            .map_err(|_| anyhow!("the responder did not start"))?;
        Ok(Self {
            addr,
            which: Which::Responder,
            stop: Box::new(move || {
                let _ = stop_tx.send(());
                thread
                    .join()
                    .map_err(|_| anyhow!("responder thread panicked"))?
            }),
        })
    }

    fn echo(reply: &Arc<EchoReply>, threads: usize, batched: bool) -> Result<Self> {
        let first = responder::bind_std(SERVER_ADDR, responder::SOCKET_RECV_BUFFER, threads > 1)?;
        let addr = first.local_addr()?;
        let mut sockets = vec![first];
        for _ in 1..threads {
            sockets.push(responder::bind_std(
                addr,
                responder::SOCKET_RECV_BUFFER,
                true,
            )?);
        }
        let (tx, rx) = watch::channel(false);
        let mut joins = Vec::new();
        for (i, s) in sockets.into_iter().enumerate() {
            let reply = Arc::clone(reply);
            let rx = rx.clone();
            joins.push(
                std::thread::Builder::new()
                    .name(format!("echo-server-{i}"))
                    .spawn(move || -> io::Result<()> {
                        let rt = tokio::runtime::Builder::new_current_thread()
                            .enable_all()
                            .build()?;
                        rt.block_on(async move {
                            let socket = UdpSocket::from_std(s)?;
                            if batched {
                                echo_batched(socket, reply, rx).await
                            } else {
                                echo_plain(socket, reply, rx).await
                            }
                        })
                    })?,
            );
        }
        Ok(Self {
            addr,
            which: if batched {
                Which::BatchedEcho
            } else {
                Which::PlainEcho
            },
            stop: Box::new(move || {
                let _ = tx.send(true);
                for j in joins {
                    j.join().map_err(|_| anyhow!("echo thread panicked"))??;
                }
                Ok(None)
            }),
        })
    }

    fn stop(self) -> Result<Option<Stats>> {
        (self.stop)()
    }
}

fn put_id(reply: &EchoReply, query: &[u8], out: &mut [u8]) {
    if let Some((q, r)) = reply.id {
        if let (Some(id), Some(dst)) = (query.get(q..q + 4), out.get_mut(r..r + 4)) {
            dst.copy_from_slice(id);
        }
    }
}

/// The plain baseline: one `recv_from` and one `send_to` per datagram.
async fn echo_plain(
    socket: UdpSocket,
    reply: Arc<EchoReply>,
    mut shutdown: watch::Receiver<bool>,
) -> io::Result<()> {
    let mut buf = vec![0u8; batch::RECV_BUF];
    let mut out = reply.bytes.clone();
    loop {
        let (n, src) = tokio::select! {
            r = socket.recv_from(&mut buf) => match r {
                Ok(v) => v,
                Err(e) if responder::is_transient(&e) => continue,
                Err(e) => return Err(e),
            },
            _ = shutdown.changed() => return Ok(()),
        };
        put_id(&reply, buf.get(..n).unwrap_or_default(), &mut out);
        // Errors are ignored as the responder ignores them (it only logs them at debug).
        let _ = socket.send_to(&out, src).await;
    }
}

/// The batched baseline: the responder's I/O loop (drain with `recvmmsg`, answer the
/// batch, send it with `sendmmsg`) with the protocol work replaced by a 4-byte copy.
async fn echo_batched(
    socket: UdpSocket,
    reply: Arc<EchoReply>,
    mut shutdown: watch::Receiver<bool>,
) -> io::Result<()> {
    let mut bufs = RecvBufs::default();
    let mut outs: Vec<Vec<u8>> = (0..BATCH).map(|_| reply.bytes.clone()).collect();
    let mut dests = [None::<SocketAddr>; BATCH];
    loop {
        tokio::select! {
            r = socket.readable() => r?,
            _ = shutdown.changed() => return Ok(()),
        }
        for _ in 0..256 {
            let n = match socket.try_io(Interest::READABLE, || batch::recv(&socket, &mut bufs)) {
                Ok(0) => break,
                Ok(n) => n,
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => break,
                Err(e) if responder::is_transient(&e) => continue,
                Err(e) => return Err(e),
            };
            for (i, (out, dest)) in outs.iter_mut().zip(dests.iter_mut()).take(n).enumerate() {
                *dest = bufs.get(i).map(|(d, src)| {
                    put_id(&reply, d, out);
                    src
                });
            }
            let mut done = 0;
            while done < n {
                let r = socket.try_io(Interest::WRITABLE, || {
                    let mut msgs: [(&[u8], SocketAddr); BATCH] = [(&[], SERVER_ADDR); BATCH];
                    let mut k = 0;
                    for (slot, (o, d)) in msgs
                        .iter_mut()
                        .zip(outs.iter().zip(dests.iter()).take(n).skip(done))
                    {
                        *slot = (o.as_slice(), d.unwrap_or(SERVER_ADDR));
                        k += 1;
                    }
                    batch::send(&socket, msgs.get(..k).unwrap_or_default())
                });
                match r {
                    Ok(0) => break,
                    Ok(sent) => done += sent,
                    Err(e) if e.kind() == io::ErrorKind::WouldBlock => socket.writable().await?,
                    Err(_) => done += 1,
                }
            }
        }
    }
}

/// The query datagrams of the senders and what answers look like.
#[derive(Debug, Clone)]
struct Plan {
    protocol: Proto,
    /// Per sender: its source address and its query (with its valid challenge).
    queries: Vec<(SocketAddr, Vec<u8>)>,
    /// Size of every answer.
    answer_len: usize,
    /// Where the 4-byte id is in a query and in an answer, if the protocol has one.
    id: Option<(usize, usize)>,
}

fn source_addr(i: u16) -> SocketAddr {
    let last = u8::try_from(10 + u32::from(i)).unwrap_or(u8::MAX);
    SocketAddr::new(IpAddr::V4(Ipv4Addr::new(127, 0, 0, last)), 0)
}

/// Where the RequestID sits in OGP: it is the last header field of a query without
/// MaxBytesPerPacket and of an unsplit answer, so it ends where the header ends.
fn rid_offset(datagram: &[u8]) -> Result<usize> {
    let hs = usize::from(*datagram.get(8).context("datagram too short")?);
    let at = (8 + hs)
        .checked_sub(4)
        .context("header too short for a RequestID")?;
    ensure!(at + 4 <= datagram.len(), "RequestID past the end");
    Ok(at)
}

fn read_id(d: &[u8], at: usize) -> Option<u32> {
    d.get(at..at + 4)
        .and_then(|b| <[u8; 4]>::try_from(b).ok())
        .map(u32::from_le_bytes)
}

fn encode_id(slot: usize, generation: u32) -> u32 {
    // slot < 256; generation < 2^23: never 0, never wraps.
    ((generation << 8) | (slot as u32 & 0xff)) + 1
}

fn set_id(q: &mut [u8], at: Option<usize>, id: u32) {
    if let Some(dst) = at.and_then(|at| q.get_mut(at..at + 4)) {
        dst.copy_from_slice(&id.to_le_bytes());
    }
}

/// The query of `protocol` from `socket` (connected to the responder), with the
/// challenge this responder gives its address.
async fn challenged_query(socket: &UdpSocket, protocol: Proto) -> Result<Vec<u8>> {
    match protocol {
        Proto::Ogp => {
            let opts = ogp_proto::client::Options::with_timing(
                ogp_proto::client::Timing::default()
                    .attempt_timeout(Duration::from_millis(300))
                    .retries(3)
                    .total_timeout(Duration::from_secs(3)),
            );
            let outcome = ogp_net::client::query_on(socket, ogp_proto::Protocol::Ogp, &opts)
                .await
                .context("OGP challenge flow")?;
            let ogp_proto::client::Details::Ogp(details) = outcome.details else {
                bail!("not an OGP answer");
            };
            let challenge = details.challenge.context("no challenge in the answer")?;
            let header = Header {
                challenge: Some(challenge),
                request_id: Some(encode_id(0, 0)),
                ..Header::query(PacketType::DEFAULT_QUERY).with_utf8(true)
            };
            let mut q = Vec::new();
            ogp::encode_query(&header, Some(&DefaultQuery::everything()), &mut q);
            Ok(q)
        }
        Proto::A2s => {
            let info = b"\xFF\xFF\xFF\xFFTSource Engine Query\0";
            let r = raw_exchange(socket, info).await?;
            ensure!(
                r.len() == 9 && r.get(4) == Some(&0x41),
                "no A2S challenge: {r:02x?}"
            );
            Ok([info.as_slice(), r.get(5..9).unwrap_or_default()].concat())
        }
        Proto::Gs3 => {
            // The session id is big-endian on the wire; the generator reads ids
            // little-endian: choose the number whose wire bytes are encode_id(0, 0)'s.
            let sid = u32::from_be_bytes(encode_id(0, 0).to_le_bytes());
            let ask = Request::Challenge { session_id: sid }.to_bytes();
            let r = raw_exchange(socket, &ask).await?;
            let text = r
                .get(5..r.len().saturating_sub(1))
                .context("short GameSpy v3 challenge reply")?;
            let c: u32 = std::str::from_utf8(text)?
                .parse()
                .context("GameSpy v3 challenge")?;
            Ok(Request::Info {
                session_id: sid,
                challenge: Some(c),
                kind: InfoKind::Full,
            }
            .to_bytes())
        }
        Proto::Quake3 => Ok(QUAKE3_GETSTATUS.to_vec()),
    }
}

/// Quake III's `getstatus`, as qstat sends it.
const QUAKE3_GETSTATUS: &[u8] = b"\xFF\xFF\xFF\xFFgetstatus";

/// Obtains each sender's query from the responder and one real answer to learn its
/// size and to serve from the echo servers.
async fn plan(server: SocketAddr, sources: u16, protocol: Proto) -> Result<(Plan, Vec<u8>)> {
    let mut queries = Vec::new();
    let mut sample = None;
    for i in 0..sources {
        let addr = source_addr(i);
        let socket = UdpSocket::bind(addr)
            .await
            .with_context(|| format!("binding {addr}"))?;
        socket.connect(server).await?;
        let q = challenged_query(&socket, protocol)
            .await
            .with_context(|| format!("challenge from {addr}"))?;
        if sample.is_none() {
            sample = Some(raw_exchange(&socket, &q).await?);
        }
        queries.push((addr, q));
    }
    let answer = sample.context("no sources")?;
    let first = &queries.first().context("no sources")?.1;
    let id = match protocol {
        Proto::Ogp => {
            let (q, a) = (rid_offset(first)?, rid_offset(&answer)?);
            let (qh, _) = ogp::decode_query_header(first).map_err(|e| anyhow!("query: {e}"))?;
            ensure!(qh.request_id == read_id(first, q));
            let packet = ogp::decode(&answer).map_err(|e| anyhow!("answer: {e}"))?;
            ensure!(
                matches!(packet.message, Message::Answer(_)),
                "not an answer: {:?}",
                packet.message
            );
            ensure!(packet.header.request_id == read_id(&answer, a));
            Some((q, a))
        }
        Proto::A2s => {
            ensure!(answer.get(4) == Some(&b'I'), "not an A2S_INFO reply");
            None
        }
        Proto::Gs3 => {
            // FE FD 00 <sid> … in the request; 00 <sid> … in each reply packet.
            ensure!(read_id(first, 3) == Some(encode_id(0, 0)));
            ensure!(read_id(&answer, 1) == Some(encode_id(0, 0)));
            ensure!(answer.first() == Some(&0), "not a GameSpy v3 info reply");
            Some((3, 1))
        }
        Proto::Quake3 => {
            let r = ogp_proto::quake3::decode_reply(&answer)
                .map_err(|e| anyhow!("Quake III answer: {e}"))?
                .reply;
            ensure!(
                r.kind == ogp_proto::quake3::ReplyKind::Status && !r.players.is_empty(),
                "not a statusResponse with players"
            );
            None
        }
    };
    let plan = Plan {
        protocol,
        queries,
        answer_len: answer.len(),
        id,
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
    /// Answers to an older generation of a slot, or with an unknown id.
    stale: u64,
    /// Datagrams of another size than the answer.
    bad_size: u64,
    /// Answers checked closely, and how many of those failed.
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

/// Whether an answer looks like the protocol's common answer (the close check).
fn looks_right(protocol: Proto, d: &[u8]) -> bool {
    match protocol {
        Proto::Ogp => matches!(
            ogp::decode(d).map(|p| p.message),
            Ok(Message::Answer(a)) if a.status.host_name.is_some()
        ),
        Proto::A2s => d.starts_with(b"\xFF\xFF\xFF\xFFI"),
        Proto::Gs3 => d.first() == Some(&0) && d.windows(8).any(|w| w == b"hostname"),
        Proto::Quake3 => d.starts_with(b"\xFF\xFF\xFF\xFFstatusResponse\n"),
    }
}

/// Queries waiting to be sent by one sender (buffers reused).
struct SendQueue {
    bufs: Vec<Vec<u8>>,
    len: usize,
}

impl SendQueue {
    fn push(&mut self, query: &[u8], id_at: Option<usize>, id: u32) {
        if self.len == self.bufs.len() {
            self.bufs.push(Vec::with_capacity(query.len()));
        }
        if let Some(b) = self.bufs.get_mut(self.len) {
            b.clear();
            b.extend_from_slice(query);
            set_id(b, id_at, id);
        }
        self.len += 1;
    }

    async fn flush(&mut self, socket: &UdpSocket, to: SocketAddr, t: &mut Tally) -> io::Result<()> {
        let mut done = 0;
        while done < self.len {
            let r = socket.try_io(Interest::WRITABLE, || {
                let mut msgs: [(&[u8], SocketAddr); BATCH] = [(&[], to); BATCH];
                let mut k = 0;
                for (slot, b) in msgs
                    .iter_mut()
                    .zip(self.bufs.iter().take(self.len).skip(done))
                {
                    *slot = (b.as_slice(), to);
                    k += 1;
                }
                batch::send(socket, msgs.get(..k).unwrap_or_default())
            });
            match r {
                Ok(0) => break,
                Ok(n) => {
                    done += n;
                    t.sends += n as u64;
                }
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => socket.writable().await?,
                Err(e) if responder::is_transient(&e) => done += 1,
                Err(e) => return Err(e),
            }
        }
        self.len = 0;
        Ok(())
    }
}

/// One sender: keeps `window` queries in flight until the end of the run.
async fn drive(
    socket: UdpSocket,
    server: SocketAddr,
    query: Vec<u8>,
    window: usize,
    plan: Arc<Plan>,
    win: Window,
) -> io::Result<Tally> {
    let mut t = Tally::default();
    let (q_at, a_at) = (plan.id.map(|i| i.0), plan.id.map(|i| i.1));
    let mut generation = vec![0u32; window];
    let mut sent_at = vec![Instant::now(); window];
    let mut oldest = 0usize;
    let mut bufs = RecvBufs::default();
    let mut queue = SendQueue {
        bufs: Vec::new(),
        len: 0,
    };
    for slot in 0..window {
        queue.push(&query, q_at, encode_id(slot, 0));
    }
    queue.flush(&socket, server, &mut t).await?;
    let mut next_scan = Instant::now() + SCAN_EVERY;
    let tick = tokio::time::sleep(SCAN_EVERY);
    tokio::pin!(tick);
    let mut accepted = 0u64;
    loop {
        tokio::select! {
            biased;
            r = socket.readable() => r?,
            () = &mut tick => {
                tick.as_mut().reset(tokio::time::Instant::now() + SCAN_EVERY);
            }
        }
        let now = Instant::now();
        if now >= win.end || t.sends >= win.max_sends {
            break;
        }
        loop {
            let n = match socket.try_io(Interest::READABLE, || batch::recv(&socket, &mut bufs)) {
                Ok(0) => break,
                Ok(n) => n,
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => break,
                Err(e) if responder::is_transient(&e) => continue,
                Err(e) => return Err(e),
            };
            for i in 0..n {
                let Some((d, _)) = bufs.get(i) else { continue };
                t.received += 1;
                if d.len() != plan.answer_len {
                    t.bad_size += 1;
                    continue;
                }
                let slot = match a_at {
                    Some(at) => {
                        let Some(v) = read_id(d, at).and_then(|r| r.checked_sub(1)) else {
                            t.stale += 1;
                            continue;
                        };
                        let slot = (v & 0xff) as usize;
                        if generation.get(slot).copied() != Some(v >> 8) {
                            t.stale += 1;
                            continue;
                        }
                        slot
                    }
                    // No id: the answer frees the oldest slot.
                    None => {
                        let s = oldest;
                        oldest = (oldest + 1) % window;
                        s
                    }
                };
                accepted += 1;
                if now >= win.measure_from {
                    t.counted += 1;
                }
                if accepted % DECODE_EVERY == 1 {
                    t.decoded += 1;
                    if !looks_right(plan.protocol, d) {
                        t.decode_failed += 1;
                    }
                }
                let (Some(g), Some(s)) = (generation.get_mut(slot), sent_at.get_mut(slot)) else {
                    continue;
                };
                *g = (*g + 1) & 0x7f_ffff;
                *s = now;
                queue.push(&query, q_at, encode_id(slot, *g));
            }
            queue.flush(&socket, server, &mut t).await?;
        }
        if now >= next_scan {
            next_scan = now + SCAN_EVERY;
            for slot in 0..window {
                let (Some(s), Some(g)) = (sent_at.get_mut(slot), generation.get_mut(slot)) else {
                    continue;
                };
                if now.saturating_duration_since(*s) >= LOSS_TIMEOUT {
                    t.lost += 1;
                    *g = (*g + 1) & 0x7f_ffff;
                    *s = now;
                    queue.push(&query, q_at, encode_id(slot, *g));
                }
            }
            queue.flush(&socket, server, &mut t).await?;
        }
    }
    Ok(t)
}

/// CPU time of every thread of this process whose name starts with `prefix`.
fn threads_cpu(prefix: &str) -> Option<Duration> {
    let mut total = Duration::ZERO;
    let mut found = false;
    for e in std::fs::read_dir("/proc/self/task").ok()?.flatten() {
        let dir = e.path();
        let Ok(comm) = std::fs::read_to_string(dir.join("comm")) else {
            continue;
        };
        if comm.trim_end().starts_with(prefix) {
            if let Some(d) = common::thread_cpu(Some(&dir.join("schedstat"))) {
                total += d;
                found = true;
            }
        }
    }
    found.then_some(total)
}

/// CPU readings at the start and the end of the measured window.
#[derive(Debug, Default, Clone, Copy)]
struct Busy {
    /// Cores the server's threads used, on average.
    server: Option<f64>,
    /// Fraction of the window the load generator thread ran.
    generator: Option<f64>,
    /// Cores busy machine-wide, on average.
    machine_cores: Option<f64>,
}

async fn sample_cpu(prefix: &'static str, win: Window) -> Busy {
    let me = common::this_thread_schedstat_path();
    let read = || {
        (
            Instant::now(),
            threads_cpu(prefix),
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

async fn run_once(server: &Server, plan: &Arc<Plan>, args: &Args) -> Result<RunResult> {
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
        tasks.push(tokio::spawn(drive(
            s,
            server.addr,
            q,
            window,
            Arc::clone(plan),
            win,
        )));
    }
    let sampler = tokio::spawn(sample_cpu(server.which.thread_prefix(), win));
    let mut tally = Tally::default();
    for t in tasks {
        tally.add(&t.await??);
    }
    let busy = sampler.await?;
    Ok(RunResult {
        rate: tally.counted as f64 / measured.as_secs_f64(),
        tally,
        busy,
        stats: None,
    })
}

fn print_run(round: u32, label: &str, r: &RunResult) {
    let pct = |x: Option<f64>| x.map_or("?".into(), |x| format!("{:.0}%", x * 100.0));
    let cores = r
        .busy
        .machine_cores
        .map_or("?".into(), |c| format!("{c:.2}"));
    let t = &r.tally;
    println!(
        "  round {round} {label:<12} {:>9.0} replies/s   server threads {:>5}, generator {:>4}, machine {cores} cores busy   lost {} stale {} bad-size {} checked {}/{} ok",
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

/// Server CPU time per reply, in microseconds.
fn cpu_per_reply_us(r: &RunResult) -> Option<f64> {
    r.busy
        .server
        .filter(|_| r.rate > 0.0)
        .map(|b| b / r.rate * 1e6)
}

/// Medians of one server's runs.
#[derive(Debug, Clone, Copy, Default)]
struct Summary {
    rate: f64,
    cpu_us: f64,
    busy: f64,
}

fn summarise(runs: &[RunResult]) -> Summary {
    Summary {
        rate: common::median(runs.iter().map(|r| r.rate).collect()),
        cpu_us: common::median(runs.iter().filter_map(cpu_per_reply_us).collect()),
        busy: common::median(runs.iter().filter_map(|r| r.busy.server).collect()),
    }
}

/// One line of the final table.
struct Row {
    protocol: Proto,
    threads: u16,
    answer_len: usize,
    query_len: usize,
    servers: [Option<Summary>; 3],
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
    // Quake III answers are all unproven (no challenge): its budgets and the shared
    // unproven limits out of the way, as `rate` is for the challenged protocols.
    config.quake3.enabled = true;
    config.quake3.per_source = RateConfig::new(1e12, 1e12);
    config.quake3.total = RateConfig::new(1e12, 1e12);
    config.unproven_rate = BENCH_RATE;
    config.unproven_total = BENCH_RATE;
    let list = |v: &[String]| v.join(",");
    common::print_command(
        "responder",
        &format!(
            "--seconds {} --sources {} --window {} --rounds {} --warmup {} --max-queries {} --protocols {} --threads {}{}",
            args.seconds,
            args.sources,
            args.window,
            args.rounds,
            args.warmup,
            args.max_queries,
            list(&args.protocols.iter().map(|p| format!("{p:?}").to_lowercase()).collect::<Vec<_>>()),
            list(&args.threads.iter().map(u16::to_string).collect::<Vec<_>>()),
            match args.only {
                None => "",
                Some(Only::Responder) => " --only responder",
                Some(Only::BatchedEcho) => " --only batched-echo",
                Some(Only::PlainEcho) => " --only plain-echo",
            }
        ),
    );
    common::print_load("before");
    println!(
        "responder rate limit for the benchmark: {}/s per source, burst {} (few source addresses carry all the load; the limiter still runs on every datagram)",
        BENCH_RATE.per_second, BENCH_RATE.burst
    );
    println!(
        "{} senders x window {} = {} queries in flight; warm-up {} s, measured {} s per run",
        args.sources,
        args.window,
        u32::from(args.sources) * u32::from(args.window),
        args.warmup,
        args.seconds
    );
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()?;
    let mut rows = Vec::new();
    for &protocol in &args.protocols {
        for &threads in &args.threads {
            println!();
            println!(
                "{} on {threads} thread(s): {}",
                protocol.name(),
                common::loadavg()
            );
            let mut runs: [Vec<RunResult>; 3] = [Vec::new(), Vec::new(), Vec::new()];
            let mut shape = (0, 0);
            for round in 1..=args.rounds {
                // The responder hands out fresh challenges each start; the echo servers of
                // the round answer with its answer and take the same queries.
                let server = Server::responder(&cell, &config, usize::from(threads))?;
                let outcome = rt.block_on(async {
                    let (plan, answer) = plan(server.addr, args.sources, protocol).await?;
                    let plan = Arc::new(plan);
                    let r = if Which::Responder.wanted(args.only) {
                        Some(run_once(&server, &plan, args).await?)
                    } else {
                        None
                    };
                    anyhow::Ok((plan, answer, r))
                });
                let stats = server.stop()?;
                let (plan, answer, run) = outcome?;
                shape = (plan.queries.first().map_or(0, |q| q.1.len()), answer.len());
                if let Some(mut r) = run {
                    r.stats = stats;
                    print_run(round, Which::Responder.label(), &r);
                    if let Some(v) = runs.get_mut(0) {
                        v.push(r);
                    }
                }
                let reply = Arc::new(EchoReply {
                    bytes: answer,
                    id: plan.id,
                });
                for (i, which) in Which::ALL.into_iter().enumerate().skip(1) {
                    if !which.wanted(args.only) {
                        continue;
                    }
                    let server =
                        Server::echo(&reply, usize::from(threads), which == Which::BatchedEcho)?;
                    let r = rt.block_on(run_once(&server, &plan, args));
                    server.stop()?;
                    let r = r?;
                    print_run(round, which.label(), &r);
                    if let Some(v) = runs.get_mut(i) {
                        v.push(r);
                    }
                }
            }
            let servers =
                [0, 1, 2].map(|i| runs.get(i).filter(|v| !v.is_empty()).map(|v| summarise(v)));
            rows.push(Row {
                protocol,
                threads,
                answer_len: shape.1,
                query_len: shape.0,
                servers,
            });
        }
    }
    println!();
    println!(
        "summary (medians of {} rounds; replies/s, and server CPU µs per reply in brackets):",
        args.rounds
    );
    println!(
        "  {:<16} {:>3} {:>11}  {:>20} {:>20} {:>20}  {:>9} {:>9}",
        "answer",
        "thr",
        "bytes q/a",
        "responder",
        "batched echo",
        "plain echo",
        "÷batched",
        "÷plain"
    );
    let cell_text = |s: Option<Summary>| {
        s.map_or("-".to_string(), |s| {
            format!("{:.0} ({:.2})", s.rate, s.cpu_us)
        })
    };
    for r in &rows {
        let [resp, batched, plain] = r.servers;
        let ratio = |other: Option<Summary>| match (resp, other) {
            (Some(a), Some(b)) if b.rate > 0.0 => format!("{:.3}", a.rate / b.rate),
            _ => "-".into(),
        };
        println!(
            "  {:<16} {:>3} {:>11}  {:>20} {:>20} {:>20}  {:>9} {:>9}",
            r.protocol.name(),
            r.threads,
            format!("{}/{}", r.query_len, r.answer_len),
            cell_text(resp),
            cell_text(batched),
            cell_text(plain),
            ratio(batched),
            ratio(plain),
        );
    }
    println!("  server threads busy (cores, medians): ");
    for r in &rows {
        let b = |s: Option<Summary>| s.map_or("-".into(), |s| format!("{:.2}", s.busy));
        let [resp, batched, plain] = r.servers;
        println!(
            "    {:<16} {} thread(s): responder {}, batched echo {}, plain echo {}",
            r.protocol.name(),
            r.threads,
            b(resp),
            b(batched),
            b(plain)
        );
    }
    common::print_load("after");
    Ok(())
}
