//! `ogp master`: the master server (crate `ogp-master`) as a command, in builds with the
//! cargo feature `master` (`cargo install --locked --path crates/ogp-cli --features
//! master`). Without it the flags still parse (`--help`, completions and the manual page
//! are the same in both builds) and the command says how to get the master.
//!
//! The feature is off by default: the master brings the bundled SQLite, PostgreSQL's client
//! and the HTTP API's stack, about a quarter of a cold release build, which someone who
//! only queries servers (and `cargo run -- demo`) should not wait for.

use std::net::SocketAddr;
use std::path::PathBuf;
use std::process::ExitCode;

#[cfg(feature = "master")]
use anyhow::Context;
#[cfg(feature = "master")]
use ogp_master::{Master, MasterConfig};
#[cfg(feature = "master")]
use tokio::signal::unix::{signal, SignalKind};

/// `ogp master` flags (a TOML file gives the rest: docs/master.md).
#[derive(Debug, clap::Args)]
#[cfg_attr(not(feature = "master"), allow(dead_code))]
pub struct MasterArgs {
    /// TOML config file; flags given as well win over it.
    #[arg(long, value_name = "FILE")]
    config: Option<PathBuf>,
    /// UDP address for registrations (OGP uplinks, GameSpy v1 and v3 and Quake III / DarkPlaces
    /// heartbeats) and list requests (Valve's, and the DP master protocol's `getservers`)
    /// (repeatable) [default: 0.0.0.0:27900].
    #[arg(long, value_name = "ADDR:PORT")]
    udp: Vec<SocketAddr>,
    /// HTTP address for the page, the API and /metrics, or `off` [default:
    /// 127.0.0.1:8080].
    #[arg(long, value_name = "ADDR:PORT|off")]
    http: Option<String>,
    /// Database: sqlite://PATH or postgres://USER@HOST/DB [default:
    /// sqlite://ogp-master.db].
    #[arg(long, value_name = "URL")]
    db: Option<String>,
    /// List servers on loopback and private addresses too (LANs and tests).
    #[arg(long)]
    allow_private: bool,
    /// TCP address of the GameSpy master list (`\\list\\` of GameSpy v1 games' browsers
    /// and `quakestat -gsm`; the classic port is 28900) [default: off].
    #[arg(long, value_name = "ADDR:PORT")]
    gs1_list: Option<SocketAddr>,
    /// TCP address of the Cube 2 master: Sauerbraten's and Red Eclipse's servers
    /// register on it and their clients ask it for the list (their masters' ports are
    /// 28787 and 28800) [default: off].
    #[arg(long, value_name = "ADDR:PORT")]
    cube2_master: Option<SocketAddr>,
    /// Seconds between polls of each listed server [default: 60].
    #[arg(long, value_name = "SECS", value_parser = clap::value_parser!(u64).range(1..=86_400))]
    poll_interval: Option<u64>,
}

/// Without the master: says how to build an `ogp` that has it.
#[cfg(not(feature = "master"))]
pub fn run(_args: &MasterArgs) -> anyhow::Result<ExitCode> {
    anyhow::bail!(
        "this ogp was built without the master server (cargo feature `master`); \
         install one that has it: cargo install --locked --path crates/ogp-cli --features master"
    )
}

/// Builds the config from the file and the flags.
#[cfg(feature = "master")]
fn config(args: &MasterArgs) -> anyhow::Result<MasterConfig> {
    let mut c = match &args.config {
        Some(path) => {
            let text = std::fs::read_to_string(path)
                .with_context(|| format!("reading {}", path.display()))?;
            MasterConfig::from_toml(&text).with_context(|| format!("{}", path.display()))?
        }
        None => MasterConfig::default(),
    };
    if !args.udp.is_empty() {
        c.udp.clone_from(&args.udp);
    }
    match args.http.as_deref() {
        None => {}
        Some("off") => c.http = None,
        Some(a) => {
            c.http = Some(
                a.parse()
                    .with_context(|| format!("--http {a}: expected ADDR:PORT or off"))?,
            )
        }
    }
    if let Some(db) = &args.db {
        c.db.clone_from(db);
    }
    if args.allow_private {
        c.allow_private = true;
    }
    if let Some(p) = args.poll_interval {
        c.poll_interval_secs = p;
    }
    if let Some(a) = args.gs1_list {
        c.gs1_list = Some(a);
    }
    if let Some(a) = args.cube2_master {
        c.cube2_master = Some(a);
    }
    Ok(c)
}

/// Runs the master until SIGTERM or SIGINT.
#[cfg(feature = "master")]
pub fn run(args: &MasterArgs) -> anyhow::Result<ExitCode> {
    let config = config(args)?;
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        // database calls run on blocking threads, one at a time for SQLite: a few are
        // plenty, and each thread can cost a malloc arena
        .max_blocking_threads(4)
        .enable_all()
        .build()?;
    rt.block_on(async {
        let mut term = signal(SignalKind::terminate()).context("cannot listen for signals")?;
        let mut int = signal(SignalKind::interrupt()).context("cannot listen for signals")?;
        let master = Master::start(config.clone()).await?;
        for a in master.udp_addrs() {
            tracing::info!("UDP on {a} (registrations, Valve list requests)");
        }
        if let Some(a) = master.gs1_list_addr() {
            tracing::info!("GameSpy master list on TCP {a}");
        }
        if let Some(a) = master.cube2_master_addr() {
            tracing::info!("Cube 2 master on TCP {a}");
        }
        if let Some(a) = master.http_addr() {
            tracing::info!("HTTP on http://{a}/ (page, /api/v1/servers, /metrics)");
        }
        tracing::info!(
            "database {}, instance {}, {} servers listed",
            redact(&config.db),
            master.instance(),
            master.listed()
        );
        tokio::select! {
            _ = term.recv() => {}
            _ = int.recv() => {}
        }
        tracing::info!("stopping");
        master.shutdown().await;
        Ok(ExitCode::SUCCESS)
    })
}

/// A database URL without its password.
#[cfg(feature = "master")]
fn redact(url: &str) -> String {
    match (url.find("://"), url.find('@')) {
        (Some(s), Some(at)) if at > s => {
            let userinfo = url.get(s + 3..at).unwrap_or_default();
            match userinfo.split_once(':') {
                Some((user, _)) => format!(
                    "{}{user}:***{}",
                    url.get(..s + 3).unwrap_or_default(),
                    url.get(at..).unwrap_or_default()
                ),
                None => url.to_owned(),
            }
        }
        _ => url.to_owned(),
    }
}
