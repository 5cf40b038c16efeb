//! `ogp-load master`: the master server at scale, on loopback.
//!
//! * 100,000 simulated servers are written into a fresh SQLite database first
//!   (`Store::insert_simulated`: 10.x.y.z addresses, varied names, games, maps, players;
//!   never polled), then `ogp master` starts on it;
//! * `ogp serve` processes (1,000 ports each) listen on `--servers` loopback ports
//!   (10,000) and send an OGP uplink from each at start: the master verifies each by querying it back, lists it,
//!   and polls it through the scan engine;
//! * measured: the time until all are listed, the first poll cycle (every protocol, to
//!   learn which each speaks) and a regular one (the registering protocol), from the
//!   master's own poll counter; `GET /api/v1/servers` latency with filters over the whole
//!   list (p50/p99, one client, keep-alive); Valve list pages per second (closed loop,
//!   several walkers); the master's peak RSS (VmHWM).

use std::net::{SocketAddr, UdpSocket};
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use anyhow::{bail, Context as _, Result};
use ogp_proto::master::valve::{decode_page, ListRequest, END};

use crate::common;
use crate::common::memory_kb;
use crate::sources::{find_ogp, free_port};

/// Options of `ogp-load master`.
#[derive(clap::Args, Debug)]
pub struct Args {
    /// Live servers registering (one `ogp serve` listening on this many ports).
    #[arg(long, default_value_t = 10_000, value_parser = clap::value_parser!(u32).range(1..=30_000))]
    pub servers: u32,
    /// Simulated servers written into the database beforehand.
    #[arg(long, default_value_t = 100_000, value_parser = clap::value_parser!(u32).range(0..=1_000_000))]
    pub simulated: u32,
    /// API requests measured.
    #[arg(long, default_value_t = 600)]
    pub requests: u32,
    /// Seconds of Valve list requests.
    #[arg(long, default_value_t = 3)]
    pub list_seconds: u64,
    /// Concurrent Valve list walkers.
    #[arg(long, default_value_t = 8)]
    pub walkers: u32,
    /// The `ogp` binary (default: next to this one).
    #[arg(long, value_name = "PATH")]
    pub ogp_bin: Option<PathBuf>,
}

struct Kid(Child);

impl Drop for Kid {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

fn http(agent: &ureq::Agent, url: &str) -> Result<String> {
    let mut r = agent.get(url).call().with_context(|| url.to_owned())?;
    Ok(r.body_mut()
        .with_config()
        .limit(256 << 20)
        .read_to_string()?)
}

fn polls(agent: &ureq::Agent, base: &str) -> Result<f64> {
    let text = http(agent, &format!("{base}/metrics"))?;
    Ok(text
        .lines()
        .filter(|l| l.starts_with("ogp_master_polls_total{"))
        .filter_map(|l| l.rsplit(' ').next()?.parse::<f64>().ok())
        .sum())
}

fn listed(agent: &ureq::Agent, base: &str) -> Result<u64> {
    let v: serde_json::Value =
        serde_json::from_str(&http(agent, &format!("{base}/api/v1/stats"))?)?;
    Ok(v["servers"].as_u64().unwrap_or(0))
}

fn wait_until(
    what: &str,
    limit: Duration,
    mut f: impl FnMut() -> Result<bool>,
) -> Result<Duration> {
    let t = Instant::now();
    while t.elapsed() < limit {
        if f()? {
            return Ok(t.elapsed());
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    bail!("{what}: not within {limit:?}")
}

fn percentile(sorted: &[f64], p: f64) -> f64 {
    let i = ((sorted.len() as f64 - 1.0) * p).round() as usize;
    sorted.get(i).copied().unwrap_or(f64::NAN)
}

/// Runs the benchmark.
pub fn run(args: &Args) -> Result<()> {
    common::print_command(
        "master",
        &format!(
            "--servers {} --simulated {} --requests {} --list-seconds {} --walkers {}",
            args.servers, args.simulated, args.requests, args.list_seconds, args.walkers
        ),
    );
    common::print_load("before");
    let ogp = find_ogp(args.ogp_bin.as_deref())?;
    let dir = std::env::temp_dir().join(format!("ogp-load-master-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir)?;
    let db = format!("sqlite://{}", dir.join("master.db").display());
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()?;
    let t = Instant::now();
    rt.block_on(async {
        let store = ogp_master::store::Store::open(&db).await?;
        store
            .insert_simulated(
                args.simulated,
                std::time::SystemTime::now()
                    .duration_since(std::time::UNIX_EPOCH)?
                    .as_millis() as i64,
            )
            .await
    })?;
    println!(
        "{} simulated servers written in {:.1} s",
        args.simulated,
        t.elapsed().as_secs_f64()
    );

    let udp_port = free_port()?;
    let http_port = std::net::TcpListener::bind("127.0.0.1:0")?
        .local_addr()?
        .port();
    let config = dir.join("master.toml");
    std::fs::write(
        &config,
        format!(
            "udp = [\"127.0.0.1:{udp_port}\"]\nhttp = \"127.0.0.1:{http_port}\"\ndb = \"{db}\"\nallow_private = true\n\
             poll_interval_secs = 20\nmax_servers_per_ip = 100000\nregistrations_per_minute = 100000000\n\
             verifications_per_second = 100000\nmax_pending_verifications = 100000\nlist_bytes_per_second = 1000000000\n\
             list_total_bytes_per_second = 1000000000\n\
             verifications_per_prefix_per_second = 100000\nmax_pending_verifications_per_prefix = 100000\n\
             refresh_ms = 500\n"
        ),
    )?;
    let master = Kid(Command::new(&ogp)
        .args(["-q", "master", "--config"])
        .arg(&config)
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::inherit())
        .spawn()
        .context("starting ogp master")?);
    let base = format!("http://127.0.0.1:{http_port}");
    let agent: ureq::Agent = ureq::Agent::config_builder()
        .timeout_global(Some(Duration::from_secs(30)))
        .build()
        .into();
    let start = wait_until("the master's HTTP", Duration::from_secs(60), || {
        Ok(http(&agent, &format!("{base}/api/v1/stats")).is_ok())
    })?;
    println!(
        "master up in {:.1} s with {} servers listed",
        start.as_secs_f64(),
        listed(&agent, &base)?
    );

    // the live servers: one ogp serve, many ports, an uplink from each at start
    let state = dir.join("state.json");
    std::fs::write(&state, serde_json::to_string(&common::status()?)?)?;
    // several processes, as many servers are: each `ogp serve` caps what it sends to
    // addresses that have not proved themselves (challenges: 10,000/s in all), and the
    // master's verification probes all come from one address
    let ports = free_udp_ports(args.servers)?;
    let polls_before = polls(&agent, &base)?;
    let mut serves = Vec::new();
    let _started = Instant::now();
    for chunk in ports.chunks(1000) {
        let mut serve = Command::new(&ogp);
        serve.args(["-q", "serve", "--state"]).arg(&state).args([
            "--rate",
            "1000000",
            "--burst",
            "1000000",
            "--master",
            &format!("127.0.0.1:{udp_port}"),
        ]);
        for p in chunk {
            serve.args(["--listen", &format!("127.0.0.1:{p}")]);
        }
        serves.push(Kid(serve
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::inherit())
            .spawn()
            .context("starting ogp serve")?));
        // servers do not all start in the same millisecond
        std::thread::sleep(Duration::from_millis(300));
    }
    let total = u64::from(args.servers) + u64::from(args.simulated);
    let listed_in = wait_until("every live server listed", Duration::from_secs(120), || {
        Ok(listed(&agent, &base)? >= total)
    })?;
    println!(
        "{} live servers registered, verified and listed in {:.2} s",
        args.servers,
        listed_in.as_secs_f64()
    );
    for l in http(&agent, &format!("{base}/metrics"))?.lines() {
        if l.starts_with("ogp_master_registrations_total")
            || l.starts_with("ogp_master_verifications_total")
        {
            println!("  {l}");
        }
    }
    let n = f64::from(args.servers);
    wait_until(
        "the first poll of every live server",
        Duration::from_secs(120),
        || Ok(polls(&agent, &base)? - polls_before >= n),
    )?;
    // polls are counted when they end and written in batches within 200 ms: let the last
    // batch land before making them due again (else it would put them 20 s off)
    std::thread::sleep(Duration::from_secs(2));
    // A full poll cycle: every live server made due at once (in the database, as another
    // instance could), then the time until the master has polled them all.
    for label in ["poll cycle", "poll cycle again"] {
        let mark = polls(&agent, &base)?;
        let rt = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()?;
        let due = rt.block_on(async {
            let store = ogp_master::store::Store::open(&db).await?;
            store
                .make_due(
                    std::time::SystemTime::now()
                        .duration_since(std::time::UNIX_EPOCH)?
                        .as_millis() as i64,
                )
                .await
        })?;
        let cycle = wait_until(label, Duration::from_secs(120), || {
            Ok(polls(&agent, &base)? - mark >= due as f64)
        })?;
        println!(
            "{label}: {due} servers due at once, all polled in {:.2} s (target: within 10 s)",
            cycle.as_secs_f64()
        );
        std::thread::sleep(Duration::from_secs(2)); // the last batch written
    }

    // the API over the whole list
    let queries = [
        "limit=100",
        "view=summary&limit=1000",
        "game=tf&has_players=true&limit=100",
        "name=server%2042&view=summary",
        "map=2fort&not_full=true&password=false&limit=100",
        "protocol=ogp&limit=100",
        "has_players=true&not_full=true&view=summary&limit=500",
    ];
    let mut lat = Vec::new();
    let mut by_query: Vec<Vec<f64>> = vec![Vec::new(); queries.len()];
    for i in 0..args.requests {
        let k = i as usize % queries.len();
        let q = queries[k];
        let t = Instant::now();
        let body = http(&agent, &format!("{base}/api/v1/servers?{q}"))?;
        let ms = t.elapsed().as_secs_f64() * 1000.0;
        lat.push(ms);
        by_query[k].push(ms);
        if i < queries.len() as u32 && !body.contains("\"servers\"") {
            bail!("bad answer to {q}: {body:.200}");
        }
    }
    for (q, mut l) in queries.iter().zip(by_query) {
        l.sort_by(f64::total_cmp);
        println!(
            "  ?{q}: p50 {:.1} ms, p99 {:.1} ms",
            percentile(&l, 0.5),
            percentile(&l, 0.99)
        );
    }
    lat.sort_by(f64::total_cmp);
    println!(
        "GET /api/v1/servers with filters over {total} servers, {} requests: p50 {:.1} ms, p99 {:.1} ms, max {:.1} ms (target: p99 ≤ 50 ms)",
        lat.len(),
        percentile(&lat, 0.5),
        percentile(&lat, 0.99),
        lat.last().copied().unwrap_or(f64::NAN)
    );

    // Valve list pages, closed loop
    let master_addr: SocketAddr = format!("127.0.0.1:{udp_port}").parse()?;
    let deadline = Instant::now() + Duration::from_secs(args.list_seconds);
    let pages: u64 = std::thread::scope(|s| {
        let handles: Vec<_> = (0..args.walkers)
            .map(|_| {
                s.spawn(move || -> u64 {
                    let Ok(sock) = UdpSocket::bind("127.0.0.1:0") else {
                        return 0;
                    };
                    if sock.connect(master_addr).is_err()
                        || sock
                            .set_read_timeout(Some(Duration::from_millis(500)))
                            .is_err()
                    {
                        return 0;
                    }
                    let mut req = ListRequest::first(0xff, "");
                    let mut buf = [0u8; 2048];
                    let mut out = Vec::with_capacity(64);
                    let mut pages = 0;
                    while Instant::now() < deadline {
                        out.clear();
                        req.encode(&mut out);
                        if sock.send(&out).is_err() {
                            break;
                        }
                        let Ok(n) = sock.recv(&mut buf) else { continue };
                        let Ok(page) = decode_page(buf.get(..n).unwrap_or_default()) else {
                            continue;
                        };
                        pages += 1;
                        req = match page.servers.last() {
                            Some(l) if !page.end => req.after(*l),
                            _ => req.after(END),
                        };
                    }
                    pages
                })
            })
            .collect();
        handles.into_iter().map(|h| h.join().unwrap_or(0)).sum()
    });
    println!(
        "Valve list pages: {pages} in {} s with {} walkers = {:.0} pages/s (target: ≥ 5,000)",
        args.list_seconds,
        args.walkers,
        pages as f64 / args.list_seconds as f64
    );
    let (hwm, rss) = memory_kb(master.0.id())?;
    println!(
        "ogp master memory: VmHWM {:.1} MB, VmRSS {:.1} MB (target: ≤ 200 MB)",
        hwm as f64 / 1024.0,
        rss as f64 / 1024.0
    );
    common::print_load("after");
    drop(master);
    let _ = std::fs::remove_dir_all(&dir);
    Ok(())
}

/// `n` distinct free UDP ports (held open while collected, so none repeats).
fn free_udp_ports(n: u32) -> Result<Vec<u16>> {
    let socks: Vec<UdpSocket> = (0..n)
        .map(|_| UdpSocket::bind("127.0.0.1:0"))
        .collect::<std::io::Result<_>>()?;
    socks.iter().map(|s| Ok(s.local_addr()?.port())).collect()
}
