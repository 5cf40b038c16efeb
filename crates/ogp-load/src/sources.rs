//! `ogp-load sources`: memory of a separate `ogp serve` process after queries from many
//! distinct source addresses.
//!
//! The server is the real `ogp` binary with its default settings (rate limit 20/s burst
//! 40 per source, rate table of 65,536 slots). From this process, each source address
//! 127.a.b.c gets its own socket bound to it, runs the library client's query (a query
//! with challenge 0 → Error 3 with the challenge → the full query with it → the answer),
//! and closes. Sources are started at a fixed pace with a bounded number in flight.
//! Afterwards VmHWM (peak) and VmRSS of the server are read from `/proc/<pid>/status`.

use std::collections::BTreeMap;
use std::net::{IpAddr, Ipv4Addr, SocketAddr};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use anyhow::{bail, ensure, Context as _, Result};
use ogp_proto::client::{Fault, Options, QueryError, Rejection, Timing};
use ogp_proto::Protocol;
use tokio::net::UdpSocket;
use tokio::task::JoinSet;

use crate::common::{self, memory_kb};

/// Options of `ogp-load sources`.
#[derive(clap::Args, Debug)]
pub struct Args {
    /// Distinct source addresses (1–1,000,000).
    #[arg(long, default_value_t = 100_000, value_parser = clap::value_parser!(u32).range(1..=1_000_000))]
    pub count: u32,
    /// The `ogp` binary (default: `ogp` next to this binary, as cargo builds both into
    /// `target/<profile>/`).
    #[arg(long, value_name = "PATH")]
    pub ogp_bin: Option<PathBuf>,
    /// Sources started per second (1–100,000).
    #[arg(long, default_value_t = 5_000, value_parser = clap::value_parser!(u32).range(1..=100_000))]
    pub rate: u32,
    /// Most sources with a query in flight at once (1–1,000).
    #[arg(long, default_value_t = 64, value_parser = clap::value_parser!(u32).range(1..=1_000))]
    pub concurrency: u32,
    /// Milliseconds a source waits for an answer before sending again (it tries 3
    /// times).
    #[arg(long, default_value_t = 500, value_parser = clap::value_parser!(u64).range(10..=10_000))]
    pub timeout_ms: u64,
    /// Stop starting new sources after this many seconds.
    #[arg(long, default_value_t = 300, value_parser = clap::value_parser!(u64).range(1..=3_600))]
    pub max_seconds: u64,
}

/// The `ogp serve` child; killed (by its pid) when dropped.
pub(crate) struct ServerProcess {
    pub(crate) child: Child,
    dir: PathBuf,
}

impl Drop for ServerProcess {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

/// Source address number `i`: 127.a.b.c with a and c in 1–254 and b in 0–255, a moving
/// fastest, so consecutive sources are spread over the whole /8. 127.0.0.0/16 (where the
/// server listens) is never used.
pub(crate) fn source_ip(i: u32) -> Ipv4Addr {
    let a = 1 + (i % 254);
    let b = (i / 254) % 256;
    let c = 1 + (i / (254 * 256)) % 254;
    Ipv4Addr::new(127, a as u8, b as u8, c as u8)
}

pub(crate) fn find_ogp(explicit: Option<&Path>) -> Result<PathBuf> {
    if let Some(p) = explicit {
        ensure!(p.is_file(), "{} is not a file", p.display());
        return Ok(p.to_path_buf());
    }
    let me = std::env::current_exe().context("locating this binary")?;
    let candidate = me.with_file_name(format!("ogp{}", std::env::consts::EXE_SUFFIX));
    if candidate.is_file() {
        return Ok(candidate);
    }
    bail!(
        "{} not found: build it first (cargo build --profile dist -p ogp-cli) or pass --ogp-bin",
        candidate.display()
    )
}

pub(crate) fn free_port() -> Result<u16> {
    let s = std::net::UdpSocket::bind("127.0.0.1:0")?;
    Ok(s.local_addr()?.port())
}

/// Starts `ogp serve` on the project's state file and a free loopback port, with
/// `extra` arguments; `tag` names its temporary directory.
pub(crate) fn start_server(
    bin: &Path,
    tag: &str,
    extra: &[String],
) -> Result<(ServerProcess, SocketAddr)> {
    let dir = std::env::temp_dir().join(format!("ogp-load-{tag}-{}", std::process::id()));
    std::fs::create_dir_all(&dir).with_context(|| format!("creating {}", dir.display()))?;
    let state = dir.join("state.json");
    std::fs::write(&state, common::STATE_JSON)?;
    let port = free_port()?;
    let listen = SocketAddr::new(IpAddr::V4(Ipv4Addr::LOCALHOST), port);
    let child = Command::new(bin)
        .arg("serve")
        .arg("--state")
        .arg(&state)
        .arg("--listen")
        .arg(listen.to_string())
        .args(extra)
        .env("OGP_LOG", "warn")
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::inherit())
        .spawn()
        .with_context(|| format!("starting {}", bin.display()))?;
    println!(
        "server: {} serve --state {} --listen {listen}{}{}  (pid {})",
        bin.display(),
        state.display(),
        if extra.is_empty() { "" } else { " " },
        extra.join(" "),
        child.id()
    );
    Ok((ServerProcess { child, dir }, listen))
}

/// Waits until the server at `addr` answers an OGP query (at most 10 s).
pub(crate) async fn wait_ready(addr: SocketAddr) -> Result<()> {
    for _ in 0..50 {
        let quick = Options::with_timing(
            Timing::default()
                .attempt_timeout(Duration::from_millis(200))
                .retries(0)
                .total_timeout(Duration::from_millis(200)),
        );
        if ogp_net::client::query(addr, Protocol::Ogp, &quick)
            .await
            .is_ok()
        {
            return Ok(());
        }
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
    bail!("the server did not answer within 10 s")
}

/// One source: its own socket and address, one complete query, then the socket closes.
async fn one_source(ip: Ipv4Addr, server: SocketAddr, opts: Options) -> Result<(), &'static str> {
    let socket = UdpSocket::bind(SocketAddr::new(IpAddr::V4(ip), 0))
        .await
        .map_err(|_| "bind failed")?;
    socket.connect(server).await.map_err(|_| "connect failed")?;
    match ogp_net::client::query_on(&socket, Protocol::Ogp, &opts).await {
        Ok(o) if o.status.host_name.is_some() => Ok(()),
        Ok(_) => Err("answer without host name"),
        Err(QueryError::NoAnswer { .. }) => Err("timeout"),
        Err(QueryError::Rejected {
            reason: Rejection::ChallengeLoop,
            ..
        }) => Err("challenge loop"),
        Err(QueryError::Rejected { .. }) => Err("server error"),
        Err(QueryError::Refused { .. }) => Err("refused"),
        Err(e) if e.fault() == Fault::Server => Err("bad answer"),
        Err(_) => Err("socket error"),
    }
}

/// Runs `ogp-load sources`.
pub fn run(args: &Args) -> Result<()> {
    let bin = find_ogp(args.ogp_bin.as_deref())?;
    common::print_command(
        "sources",
        &format!(
            "--count {} --rate {} --concurrency {} --timeout-ms {} --max-seconds {}",
            args.count, args.rate, args.concurrency, args.timeout_ms, args.max_seconds
        ),
    );
    common::print_load("before");
    let (server, addr) = start_server(&bin, "sources", &[])?;
    let pid = server.child.id();
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()?;
    let opts = Options::with_timing(
        Timing::default()
            .attempt_timeout(Duration::from_millis(args.timeout_ms))
            .total_timeout(Duration::from_millis(args.timeout_ms * 4)),
    );

    rt.block_on(wait_ready(addr))?;
    let (hwm0, rss0) = memory_kb(pid)?;
    println!(
        "after start and one query: VmHWM {}  VmRSS {}",
        common::mb(hwm0),
        common::mb(rss0)
    );

    let started = Instant::now();
    let stop_at = started + Duration::from_secs(args.max_seconds);
    let (launched, outcomes) = rt.block_on(async {
        let mut set: JoinSet<Result<(), &'static str>> = JoinSet::new();
        let mut outcomes: BTreeMap<&'static str, u32> = BTreeMap::new();
        let mut record = |r: Result<Result<(), &'static str>, tokio::task::JoinError>| {
            let key = match r {
                Ok(Ok(())) => "answered",
                Ok(Err(e)) => e,
                Err(_) => "task failed",
            };
            *outcomes.entry(key).or_default() += 1;
        };
        let mut launched = 0u32;
        let progress_every = (args.count / 10).max(1);
        for i in 0..args.count {
            let due = started + Duration::from_secs_f64(f64::from(i) / f64::from(args.rate));
            if due > Instant::now() {
                tokio::time::sleep_until(due.into()).await;
            }
            if Instant::now() >= stop_at {
                println!("--max-seconds reached: stopping after {launched} sources");
                break;
            }
            while set.len() >= args.concurrency as usize {
                if let Some(r) = set.join_next().await {
                    record(r);
                }
            }
            set.spawn(one_source(source_ip(i), addr, opts.clone()));
            launched += 1;
            if launched % progress_every == 0 {
                let (hwm, rss) = memory_kb(pid).unwrap_or((0, 0));
                println!(
                    "  {launched:>7} sources started ({:.1} s): server VmHWM {}  VmRSS {}",
                    started.elapsed().as_secs_f64(),
                    common::mb(hwm),
                    common::mb(rss)
                );
            }
        }
        // Every query ends by its own deadline (4 x --timeout-ms).
        while let Some(r) = set.join_next().await {
            record(r);
        }
        (launched, outcomes)
    });
    let elapsed = started.elapsed();
    let (hwm, rss) = memory_kb(pid)?;
    drop(server);

    let answered = outcomes.get("answered").copied().unwrap_or(0);
    println!();
    println!(
        "summary: {launched} distinct source addresses in {:.1} s ({:.0}/s), each probe + full query",
        elapsed.as_secs_f64(),
        f64::from(launched) / elapsed.as_secs_f64()
    );
    println!("  sources answered  {answered} of {launched}");
    for (k, v) in &outcomes {
        if *k != "answered" {
            println!("  {k:<17} {v}");
        }
    }
    println!(
        "  server VmHWM      {}  ({} kB; peak resident, target < 20 MB)",
        common::mb(hwm),
        hwm
    );
    println!(
        "  server VmRSS      {}  ({} kB; at the end)",
        common::mb(rss),
        rss
    );
    println!(
        "  growth            VmHWM +{}  over the {} after start",
        common::mb(hwm.saturating_sub(hwm0)),
        common::mb(hwm0)
    );
    common::print_load("after");
    Ok(())
}
