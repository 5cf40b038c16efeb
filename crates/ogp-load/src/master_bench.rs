//! `ogp-load master`: the master server at scale, on loopback.
//!
//! * `--simulated` servers (100,000; up to 1,000,000) are written into a fresh database
//!   first (`--db sqlite`, or `--db postgres`: a throwaway PostgreSQL cluster of
//!   `ogp_testkit::postgres`), `Store::insert_simulated_range`: 10.x.y.z addresses,
//!   varied names, games, maps, players; never polled), then `ogp master` starts on it:
//!   the time until it serves them all;
//! * the live servers: the responder SDK (what `ogp serve` runs), in this process on a
//!   runtime of its own, listens on `--servers` loopback ports and sends an OGP uplink
//!   from each at start, in one burst once every port is bound: the master verifies
//!   each by querying it back and lists it (the registration rate). Ten `ogp serve`
//!   processes of 1,000 ports each took 1.5–2 core-seconds binding their sockets while
//!   their uplinks went out, on the 2 cores the master and PostgreSQL had: the
//!   registration figure measured the senders' start as much as the master;
//! * measured: the poll cycle of the live servers (polls a second, bounded by the
//!   `poll_rate` setting; a cycle of a million at that rate); `--clients` concurrent
//!   keep-alive HTTP clients on each request kind (the first page sorted by players,
//!   each filter, a server's details, the stats): p50/p99; Valve list pages per second
//!   and a whole walk of the list to its end; the master's peak RSS (VmHWM); kill -9
//!   and a restart on the same database: the time until it serves the whole list again,
//!   and that nothing is lost.

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
    /// Live servers registering (the responder SDK in this process, listening on this
    /// many ports: a descriptor each, the open-file limit raised as far as allowed).
    #[arg(long, default_value_t = 10_000, value_parser = clap::value_parser!(u32).range(1..=30_000))]
    pub servers: u32,
    /// Simulated servers written into the database beforehand.
    #[arg(long, default_value_t = 100_000, value_parser = clap::value_parser!(u32).range(0..=1_000_000))]
    pub simulated: u32,
    /// API requests measured per request kind.
    #[arg(long, default_value_t = 1000)]
    pub requests: u32,
    /// Concurrent HTTP clients (keep-alive), each on its own connection.
    #[arg(long, default_value_t = 50, value_parser = clap::value_parser!(u32).range(1..=500))]
    pub clients: u32,
    /// The database: `sqlite` (a file) or `postgres` (a throwaway cluster).
    #[arg(long, default_value = "postgres", value_parser = ["sqlite", "postgres"])]
    pub db: String,
    /// The master's `poll_rate` (datagrams a second of its poller).
    #[arg(long, default_value_t = 10_000)]
    pub poll_rate: u32,
    /// Seconds of Valve list requests.
    #[arg(long, default_value_t = 3)]
    pub list_seconds: u64,
    /// Concurrent Valve list walkers.
    #[arg(long, default_value_t = 8)]
    pub walkers: u32,
    /// The `ogp` binary (default: next to this one).
    #[arg(long, value_name = "PATH")]
    pub ogp_bin: Option<PathBuf>,
    /// Instance counts whose shared poll cycles are measured at the end, on the same
    /// database (more `ogp master` processes, ports of their own): `3` is 1, 2 and 3;
    /// a list (`1,3`) is those.
    #[arg(long, value_delimiter = ',', default_value = "1", value_parser = clap::value_parser!(u32).range(1..=8))]
    pub instances: Vec<u32>,
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
    Ok(metric_sum(&text, "ogp_master_polls_total{", ""))
}

fn listed(agent: &ureq::Agent, base: &str) -> Result<u64> {
    let v: serde_json::Value =
        serde_json::from_str(&http(agent, &format!("{base}/api/v1/stats"))?)?;
    Ok(v["servers"].as_u64().unwrap_or(0))
}

/// Sums the samples in `/metrics` text whose line starts with `prefix` and holds `has`.
fn metric_sum(text: &str, prefix: &str, has: &str) -> f64 {
    text.lines()
        .filter(|l| l.starts_with(prefix) && l.contains(has))
        .filter_map(|l| l.rsplit(' ').next()?.parse::<f64>().ok())
        .sum()
}

/// The sample of `/metrics` text named `name` whose labels hold every one of `has`.
fn metric(text: &str, name: &str, has: &[&str]) -> f64 {
    text.lines()
        .filter(|l| {
            l.strip_prefix(name)
                .is_some_and(|rest| rest.starts_with('{') || rest.starts_with(' '))
                && has.iter().all(|h| l.contains(h))
        })
        .filter_map(|l| l.rsplit(' ').next()?.parse::<f64>().ok())
        .sum()
}

/// What the master did for one request kind, from its `/metrics` before and after: its
/// pages from the list (how many took over 10 ms: made, or waited for; where first pages
/// came from), the list's changes and its writes that waited in its lock, the answers it
/// made (statuses read and JSON), the status reads from the database and the status
/// cache's hits and misses.
fn master_steps(before: &str, after: &str) -> String {
    let d = |name: &str, has: &[&str]| metric(after, name, has) - metric(before, name, has);
    let list = ["step=\"list\""];
    let body = ["step=\"body\""];
    let st = ["op=\"statuses\""];
    let slow_lists = d("ogp_master_page_seconds_count", &list)
        - d(
            "ogp_master_page_seconds_bucket",
            &["step=\"list\"", "le=\"0.01\""],
        );
    let bodies = d("ogp_master_page_seconds_count", &body);
    let reads = d("ogp_master_db_seconds_count", &st);
    format!(
        "master: pages from the list {:.0} ({slow_lists:.0} over 10 ms; first pages from the \
         cache {:.0}, from the pool {:.0}), list versions +{:.0}, writes that waited in its lock \
         {:.0}; answers made {bodies:.0} ({:.1} ms each); status reads {reads:.0} ({:.1} ms \
         each); status cache hits {:.0}, misses {:.0}",
        d("ogp_master_page_seconds_count", &list),
        d("ogp_master_first_pages_total", &["source=\"cache\""]),
        d("ogp_master_first_pages_total", &["source=\"pool\""]),
        d("ogp_master_list_version", &[]),
        d("ogp_master_list_write_waits_total", &[]),
        1000.0 * d("ogp_master_page_seconds_sum", &body) / bodies.max(1.0),
        1000.0 * d("ogp_master_db_seconds_sum", &st) / reads.max(1.0),
        d("ogp_master_status_cache_total", &["outcome=\"hit\""]),
        d("ogp_master_status_cache_total", &["outcome=\"miss\""]),
    )
}

/// Datagrams the kernel dropped at the master's UDP socket on `port` (its receive
/// buffer full), from `/proc/net/udp` (Linux; `None` elsewhere).
fn kernel_drops(port: u16) -> Option<u64> {
    let text = std::fs::read_to_string("/proc/net/udp").ok()?;
    let mut drops = None;
    for line in text.lines().skip(1) {
        let cols: Vec<&str> = line.split_whitespace().collect();
        let local = cols.get(1)?.rsplit(':').next()?;
        if u16::from_str_radix(local, 16).ok() == Some(port) {
            *drops.get_or_insert(0) += cols.get(12)?.parse::<u64>().ok()?;
        }
    }
    drops
}

/// When the registrations' stages were reached, since the first `ogp serve` start.
struct Stages {
    /// The last sample before the first registration reached the master's registrar
    /// (so the master's own interval below is not made shorter by the sampling).
    first: Duration,
    /// The registrations of the first burst: those that arrived before every one that
    /// arrived was listed (an uplink the kernel dropped is sent again a minute later).
    burst: u64,
    /// The burst's last registration received, all verified, all listed.
    received: Duration,
    verified: Duration,
    caught_up: Duration,
    /// Every live server listed (`/api/v1/stats` counts them all).
    listed: Duration,
    /// Each sample from the first registration on: when, and how many had been received,
    /// verified and listed by then.
    timeline: Vec<(Duration, u64, u64, u64)>,
}

/// Samples the master's `/metrics` and `/api/v1/stats` every 50 ms until `total`
/// servers (`n` live ones) are listed: when the registrations arrived, were verified,
/// were listed.
fn registration_stages(
    agent: &ureq::Agent,
    base: &str,
    started: Instant,
    n: u64,
    total: u64,
) -> Result<Stages> {
    let counts = || -> Result<(u64, u64)> {
        let m = http(agent, &format!("{base}/metrics"))?;
        Ok((
            metric_sum(&m, "ogp_master_registrations_total{", "") as u64,
            metric_sum(
                &m,
                "ogp_master_verifications_total{",
                "outcome=\"verified\"",
            ) as u64,
        ))
    };
    // the metrics from before the first start (the simulated servers never registered)
    let (reg0, ver0) = counts()?;
    let mut last_zero = Duration::ZERO;
    let mut first = None;
    let (mut received, mut verified) = ((0, Duration::ZERO), (0, Duration::ZERO));
    let mut caught_up = None;
    let mut timeline = Vec::new();
    let limit = Duration::from_secs(300);
    while started.elapsed() < limit {
        let at = started.elapsed();
        let (reg, ver) = counts()?;
        let (reg, ver) = (reg.saturating_sub(reg0), ver.saturating_sub(ver0));
        let live = listed(agent, base)?.saturating_sub(total - n);
        if reg == 0 {
            last_zero = at;
        } else {
            first.get_or_insert(last_zero);
            timeline.push((at, reg, ver, live));
        }
        if caught_up.is_none() {
            if reg > received.0 {
                received = (reg, at);
            }
            if ver > verified.0 {
                verified = (ver, at);
            }
            if reg > 0 && live >= reg {
                caught_up = Some((reg, at));
            }
        }
        if live >= n {
            let (burst, caught) = caught_up.unwrap_or((n, at));
            return Ok(Stages {
                first: first.unwrap_or(last_zero),
                burst,
                received: received.1,
                verified: verified.1,
                caught_up: caught,
                listed: at,
                timeline,
            });
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    bail!("every live server listed: not within {limit:?}")
}

/// `f` again (up to five times) when PostgreSQL aborted it as one side of a deadlock:
/// the benchmark's statements that make thousands of servers due lock their rows in
/// the table's order, the instances' batches of poll records in theirs.
fn retry_deadlocks<T>(mut f: impl FnMut() -> Result<T>) -> Result<T> {
    let mut tries = 1;
    loop {
        match f() {
            Err(e) if tries < 5 && format!("{e:#}").contains("deadlock detected") => {
                tries += 1;
                std::thread::sleep(Duration::from_millis(50));
            }
            r => return r,
        }
    }
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

/// The path of a request kind's `i`-th request.
type PathOf = Box<dyn Fn(u32) -> String + Sync>;

fn now_ms() -> Result<i64> {
    Ok(i64::try_from(
        std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)?
            .as_millis(),
    )?)
}

fn store_call<T>(
    db: &str,
    f: impl for<'a> FnOnce(
        &'a ogp_master::store::Store,
    ) -> std::pin::Pin<Box<dyn std::future::Future<Output = Result<T>> + 'a>>,
) -> Result<T> {
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()?;
    rt.block_on(async {
        let store = ogp_master::store::Store::open(db).await?;
        f(&store).await
    })
}

fn start_master(ogp: &std::path::Path, config: &std::path::Path) -> Result<Kid> {
    Ok(Kid(Command::new(ogp)
        .args(["-q", "master", "--config"])
        .arg(config)
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::inherit())
        .spawn()
        .context("starting ogp master")?))
}

/// Latencies (ms) of `n` GETs of the paths `path(i)`, from `clients` keep-alive clients
/// at once (each its own connection), and the first answer.
/// Each request's start (ms since the first) and latency (ms), in order of latency.
type Timed = Vec<(f64, f64)>;

fn measure(
    base: &str,
    clients: u32,
    n: u32,
    path: &(dyn Fn(u32) -> String + Sync),
) -> Result<(Timed, String)> {
    let per = n.div_ceil(clients).max(1);
    let start = Instant::now();
    let results: Vec<Result<(Timed, String)>> = std::thread::scope(|s| {
        let handles: Vec<_> = (0..clients)
            .map(|c| {
                s.spawn(move || -> Result<(Timed, String)> {
                    let agent: ureq::Agent = ureq::Agent::config_builder()
                        .timeout_global(Some(Duration::from_secs(60)))
                        .build()
                        .into();
                    let mut lat = Vec::with_capacity(per as usize);
                    let mut first = String::new();
                    for k in 0..per {
                        let i = c * per + k;
                        let t = Instant::now();
                        let body = http(&agent, &format!("{base}{}", path(i)))?;
                        lat.push((
                            t.duration_since(start).as_secs_f64() * 1000.0,
                            t.elapsed().as_secs_f64() * 1000.0,
                        ));
                        if k == 0 && c == 0 {
                            first = body;
                        }
                    }
                    Ok((lat, first))
                })
            })
            .collect();
        handles
            .into_iter()
            .map(|h| h.join().unwrap_or_else(|_| bail!("a client panicked")))
            .collect()
    });
    let mut all = Vec::new();
    let mut first = String::new();
    for r in results {
        let (l, f) = r?;
        all.extend(l);
        if first.is_empty() {
            first = f;
        }
    }
    all.sort_by(|a, b| a.1.total_cmp(&b.1));
    Ok((all, first))
}

/// The requests of [`measure`] from `clients` keep-alive connections driven by one
/// thread (an event loop, as wrk and k6 load a server), each connection opened by its
/// first request (inside its time, as a client thread's is): the master's latency
/// without `clients` threads of this process runnable at once beside its own workers
/// on the 2 cores. Each answer is read whole and must be 200.
fn measure_evented(
    http: SocketAddr,
    clients: u32,
    n: u32,
    path: &(dyn Fn(u32) -> String + Sync),
) -> Result<Timed> {
    use http_body_util::BodyExt as _;
    let per = n.div_ceil(clients).max(1);
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()?;
    rt.block_on(async {
        let start = Instant::now();
        let mut set = tokio::task::JoinSet::new();
        for c in 0..clients {
            let paths: Vec<String> = (0..per).map(|k| path(c * per + k)).collect();
            set.spawn(async move {
                let mut send = None;
                let mut lat = Vec::with_capacity(paths.len());
                for p in paths {
                    let t = Instant::now();
                    let s = match send.as_mut() {
                        Some(s) => s,
                        None => {
                            let tcp = tokio::net::TcpStream::connect(http).await?;
                            tcp.set_nodelay(true)?;
                            let (s, conn) = hyper::client::conn::http1::handshake(
                                hyper_util::rt::TokioIo::new(tcp),
                            )
                            .await?;
                            tokio::spawn(conn);
                            send.insert(s)
                        }
                    };
                    let req = hyper::Request::get(p.as_str())
                        .header(hyper::header::HOST, http.to_string())
                        .body(http_body_util::Empty::<hyper::body::Bytes>::new())?;
                    let answer = s.send_request(req).await?;
                    let status = answer.status();
                    let body = answer.into_body().collect().await?.to_bytes();
                    if status != hyper::StatusCode::OK {
                        bail!("{p}: {status}: {:.200}", String::from_utf8_lossy(&body));
                    }
                    lat.push((
                        t.duration_since(start).as_secs_f64() * 1000.0,
                        t.elapsed().as_secs_f64() * 1000.0,
                    ));
                }
                Ok::<Timed, anyhow::Error>(lat)
            });
        }
        let mut all = Vec::new();
        while let Some(r) = set.join_next().await {
            all.extend(r??);
        }
        all.sort_by(|a, b| a.1.total_cmp(&b.1));
        Ok(all)
    })
}

/// When the requests over `ms` started in the run of their kind: a burst at its start
/// (a first page made cold) or a stall later on.
fn slow_requests(timed: &[(f64, f64)], ms: f64) -> String {
    let end = timed.iter().map(|t| t.0 + t.1).fold(0.0, f64::max);
    let slow: Vec<f64> = timed.iter().filter(|t| t.1 > ms).map(|t| t.0).collect();
    if slow.is_empty() {
        return format!(
            "requests over {ms:.0} ms: none (the kind's run: {:.2} s)",
            end / 1000.0
        );
    }
    let from = slow.iter().copied().fold(f64::INFINITY, f64::min);
    let to = slow.iter().copied().fold(0.0, f64::max);
    format!(
        "requests over {ms:.0} ms: {}, started {:.3}–{:.3} s into the kind's run of {:.2} s",
        slow.len(),
        from / 1000.0,
        to / 1000.0,
        end / 1000.0
    )
}

/// Walks the Valve list from its start to its end with one client: (servers, pages).
fn valve_walk(master: SocketAddr, limit: Duration) -> Result<(u64, u64)> {
    let sock = UdpSocket::bind("127.0.0.1:0")?;
    sock.connect(master)?;
    sock.set_read_timeout(Some(Duration::from_millis(500)))?;
    let mut req = ListRequest::first(0xff, "");
    let mut buf = [0u8; 2048];
    let mut out = Vec::with_capacity(64);
    let (mut servers, mut pages) = (0u64, 0u64);
    let t = Instant::now();
    while t.elapsed() < limit {
        out.clear();
        req.encode(&mut out);
        sock.send(&out)?;
        let Ok(n) = sock.recv(&mut buf) else { continue };
        let Ok(page) = decode_page(buf.get(..n).unwrap_or_default()) else {
            continue;
        };
        pages += 1;
        servers += page.servers.len() as u64;
        match page.servers.last() {
            Some(l) if !page.end => req = req.after(*l),
            _ => return Ok((servers, pages)),
        }
    }
    bail!("the Valve list's walk did not end within {limit:?} ({servers} servers so far)")
}

/// Runs the benchmark.
pub fn run(args: &Args) -> Result<()> {
    common::print_command(
        "master",
        &format!(
            "--db {} --servers {} --simulated {} --requests {} --clients {} --poll-rate {} --list-seconds {} --walkers {} --instances {}",
            args.db, args.servers, args.simulated, args.requests, args.clients, args.poll_rate, args.list_seconds, args.walkers,
            args.instances.iter().map(u32::to_string).collect::<Vec<_>>().join(",")
        ),
    );
    common::print_load("before");
    let ogp = find_ogp(args.ogp_bin.as_deref())?;
    let dir = std::env::temp_dir().join(format!("ogp-load-master-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir)?;
    let pg = (args.db == "postgres").then(ogp_testkit::postgres::Cluster::start);
    let db = match &pg {
        Some(pg) => pg.url(),
        None => format!("sqlite://{}", dir.join("master.db").display()),
    };
    let t = Instant::now();
    const CHUNK: u32 = 20_000;
    let now = now_ms()?;
    let simulated = args.simulated;
    store_call(&db, |store| {
        Box::pin(async move {
            // each chunk's rows changed 6 s after the chunk before, the last one now: a
            // list polled over the last minutes, not a million rows changed in the same
            // millisecond (which the master's first refresh after its start would read
            // the keys of again, all of them, in the overlap it keeps for late writers)
            let chunks = simulated.div_ceil(CHUNK);
            let mut i = 0;
            while i < simulated {
                let end = (i + CHUNK).min(simulated);
                let at = now - 6_000 * i64::from(chunks - 1 - i / CHUNK);
                store.insert_simulated_range(i..end, at, 0).await?;
                i = end;
            }
            Ok(())
        })
    })?;
    println!(
        "{} simulated servers written in {:.1} s ({})",
        args.simulated,
        t.elapsed().as_secs_f64(),
        args.db
    );

    let udp_port = free_port()?;
    let gs1_port = std::net::TcpListener::bind("127.0.0.1:0")?
        .local_addr()?
        .port();
    let http_port = std::net::TcpListener::bind("127.0.0.1:0")?
        .local_addr()?
        .port();
    let config = dir.join("master.toml");
    std::fs::write(
        &config,
        format!(
            "udp = [\"127.0.0.1:{udp_port}\"]\nhttp = \"127.0.0.1:{http_port}\"\ngs1_list = \"127.0.0.1:{gs1_port}\"\ndb = \"{db}\"\nallow_private = true\n\
             poll_interval_secs = 20\nmax_servers_per_ip = 100000\nregistrations_per_minute = 100000000\n\
             verifications_per_second = 100000\nmax_pending_verifications = 100000\nlist_bytes_per_second = 1000000000\n\
             list_total_bytes_per_second = 1000000000\n\
             verifications_per_prefix_per_second = 100000\nmax_pending_verifications_per_prefix = 100000\n\
             http_max_connections_per_ip = 1000\nhttp_max_connections_per_prefix = 1000\nhttp_max_connections = 1000\n\
             poll_rate = {}\nrefresh_ms = 500\n",
            args.poll_rate
        ),
    )?;
    let t = Instant::now();
    let mut master = start_master(&ogp, &config)?;
    let base = format!("http://127.0.0.1:{http_port}");
    let agent: ureq::Agent = ureq::Agent::config_builder()
        .timeout_global(Some(Duration::from_secs(30)))
        .build()
        .into();
    wait_until("the master's HTTP", Duration::from_secs(300), || {
        Ok(http(&agent, &format!("{base}/api/v1/stats")).is_ok())
    })?;
    let start = t.elapsed();
    println!(
        "master up in {:.1} s with {} servers listed",
        start.as_secs_f64(),
        listed(&agent, &base)?
    );

    // the live servers: the responder SDK on `--servers` ports, an uplink from each at
    // start (the clock starts when the first socket is bound)
    let polls_before = polls(&agent, &base)?;
    let metrics_before = http(&agent, &format!("{base}/metrics"))?;
    let started = Instant::now();
    let live = LiveServers::start(args.servers, SocketAddr::from(([127, 0, 0, 1], udp_port)))?;
    println!(
        "{} live servers (the responder SDK, a runtime of two threads) bound and uplinking {:.2} s after the first socket",
        args.servers,
        started.elapsed().as_secs_f64()
    );
    let total = u64::from(args.servers) + u64::from(args.simulated);
    let st = registration_stages(&agent, &base, started, u64::from(args.servers), total)?;
    let listed_in = st.listed;
    let reg_rate = f64::from(args.servers) / listed_in.as_secs_f64();
    println!(
        "{} live servers registered, verified and listed in {:.2} s from the first socket bound: {:.0} a second",
        args.servers,
        listed_in.as_secs_f64(),
        reg_rate
    );
    let secs = |d: Duration| d.as_secs_f64();
    let dropped = kernel_drops(udp_port).map_or("unknown".into(), |d| d.to_string());
    println!(
        "  the master alone: first uplink received {:.2} s after the first socket bound; {} received by {:.2} s \
         (dropped by the kernel at the master's socket: {dropped}), \
         verified by {:.2} s, listed by {:.2} s: {:.0} a second from the first uplink received to the last listed \
         ({:.0} a second to the last verified)",
        secs(st.first),
        st.burst,
        secs(st.received),
        secs(st.verified),
        secs(st.caught_up),
        st.burst as f64 / secs(st.caught_up.saturating_sub(st.first)).max(1e-3),
        st.burst as f64 / secs(st.verified.saturating_sub(st.first)).max(1e-3)
    );
    let timeline: Vec<String> = st
        .timeline
        .iter()
        .map(|(at, r, v, l)| format!("{:.2} {r}/{v}/{l}", secs(*at)))
        .collect();
    println!(
        "  received/verified/listed, sampled every 50 ms: {}",
        timeline.join(", ")
    );
    let metrics_after = http(&agent, &format!("{base}/metrics"))?;
    let db_calls = |op: &str| {
        let label = format!("op=\"{op}\"");
        let has = [label.as_str()];
        let d =
            |name: &str| metric(&metrics_after, name, &has) - metric(&metrics_before, name, &has);
        let n = d("ogp_master_db_seconds_count");
        format!(
            "{op} {n:.0} ({:.1} ms each)",
            1000.0 * d("ogp_master_db_seconds_sum") / n.max(1.0)
        )
    };
    println!(
        "  the master's database calls meanwhile: {}, {}, {}, {}, {}",
        db_calls("upsert_verified"),
        db_calls("note_registrations"),
        db_calls("changed_keys_since"),
        db_calls("claim_due"),
        db_calls("record_polls")
    );
    for l in metrics_after.lines() {
        if l.starts_with("ogp_master_registrations_total")
            || l.starts_with("ogp_master_verifications_total")
        {
            println!("  {l}");
        }
    }
    let n = f64::from(args.servers);
    let first = wait_until(
        "the first poll of every live server",
        Duration::from_secs(300),
        || Ok(polls(&agent, &base)? - polls_before >= n),
    )?;
    println!(
        "first polls of the {} live servers (discovery: every auto-detectable protocol) done {:.2} s after the last was listed",
        args.servers,
        first.as_secs_f64()
    );
    // A full poll cycle: every live server made due at once (in the database, as another
    // instance could), then the time until the master has polled them all.
    let mut per_second = Vec::new();
    for label in ["poll cycle", "poll cycle again"] {
        // polls are counted when they end and written in batches within 200 ms: the
        // poller idle first, so that no poll of before ends inside the cycle
        wait_idle(&agent, std::slice::from_ref(&base))?;
        let mark = polls(&agent, &base)?;
        let due = retry_deadlocks(|| {
            store_call(&db, |store| {
                Box::pin(async move { store.make_due(now_ms()?).await })
            })
        })?;
        let cycle = wait_until(label, Duration::from_secs(300), || {
            Ok(polls(&agent, &base)? - mark >= due as f64)
        })?;
        let rate = due as f64 / cycle.as_secs_f64();
        per_second.push(rate);
        println!(
            "{label}: {due} servers due at once, all polled in {:.2} s: {rate:.0} polls/s (poll_rate {} datagrams/s)",
            cycle.as_secs_f64(),
            args.poll_rate
        );
    }
    let best = per_second.iter().copied().fold(0.0, f64::max);
    println!(
        "a cycle of 1,000,000 servers at {best:.0} polls/s: {:.0} s (target: ≤ 300 s)",
        1e6 / best
    );
    // the same cycles shared by more instances (`--instances`), stopped after
    instance_cycles(
        args,
        &Instances {
            ogp: &ogp,
            config: &config,
            ports: (udp_port, http_port),
            db: &db,
            agent: &agent,
            base: &base,
        },
    )?;

    // the API: each request kind from `clients` clients at once
    let sim = args.simulated.max(1);
    let details = move |i: u32| {
        // a server of the list, scattered (the simulated ones are 10.x.y.z)
        let k = i.wrapping_mul(2_654_435_761) % sim;
        format!(
            "/api/v1/servers/10.{}.{}.{}:27015",
            (k >> 16) & 0xff,
            (k >> 8) & 0xff,
            k & 0xff
        )
    };
    let kinds: Vec<(&str, PathOf)> = vec![
        (
            "first page by players",
            Box::new(|_| "/api/v1/servers?sort=players&limit=100".into()),
        ),
        (
            "first page by players, summary",
            Box::new(|_| "/api/v1/servers?sort=players&view=summary&limit=100".into()),
        ),
        (
            "game",
            Box::new(|_| "/api/v1/servers?game=tf&limit=100".into()),
        ),
        (
            "map",
            Box::new(|_| "/api/v1/servers?map=2fort&limit=100".into()),
        ),
        (
            "name",
            Box::new(|_| "/api/v1/servers?name=server%2042&limit=100".into()),
        ),
        (
            "protocol",
            Box::new(|_| "/api/v1/servers?protocol=ogp&limit=100".into()),
        ),
        (
            "not empty",
            Box::new(|_| "/api/v1/servers?has_players=true&limit=100".into()),
        ),
        (
            "not full",
            Box::new(|_| "/api/v1/servers?not_full=true&limit=100".into()),
        ),
        (
            "no password",
            Box::new(|_| "/api/v1/servers?password=false&limit=100".into()),
        ),
        (
            "all filters, by players",
            Box::new(|_| {
                "/api/v1/servers?game=tf&has_players=true&not_full=true&password=false&sort=players&limit=100".into()
            }),
        ),
        ("details", Box::new(details)),
        ("stats", Box::new(|_| "/api/v1/stats".into())),
    ];
    println!(
        "the API over {total} servers, {} clients at once, {} requests per kind (target: p99 ≤ 50 ms):",
        args.clients, args.requests
    );
    let mut worst: f64 = 0.0;
    let mut worst_threads: f64 = 0.0;
    let http_addr: SocketAddr = format!("127.0.0.1:{http_port}").parse()?;
    common::print_load("before the API requests");
    println!(
        "  | request kind | path | p50 ms | p99 ms | max ms | {} client threads: p50 / p99 / max ms |",
        args.clients
    );
    println!("  |---|---|---|---|---|---|");
    for (name, path) in &kinds {
        // first the clients on one event loop (the figure), then the same requests from
        // a thread per client (as before: their threads compete with the master's)
        let before = http(&agent, &format!("{base}/metrics"))?;
        let timed = measure_evented(http_addr, args.clients, args.requests, path.as_ref())?;
        let after = http(&agent, &format!("{base}/metrics"))?;
        let (timed_threads, first) = measure(&base, args.clients, args.requests, path.as_ref())?;
        if !(first.contains("\"servers\"") || first.contains("\"addr\"")) {
            bail!("bad answer to {name}: {first:.200}");
        }
        let lat: Vec<f64> = timed.iter().map(|t| t.1).collect();
        let lat_threads: Vec<f64> = timed_threads.iter().map(|t| t.1).collect();
        let p99 = percentile(&lat, 0.99);
        let p99_threads = percentile(&lat_threads, 0.99);
        worst = worst.max(p99);
        worst_threads = worst_threads.max(p99_threads);
        println!(
            "  | {name} | `{}` | {:.1} | {p99:.1} | {:.1} | {:.1} / {p99_threads:.1} / {:.1} |",
            path(0),
            percentile(&lat, 0.5),
            lat.last().copied().unwrap_or(f64::NAN),
            percentile(&lat_threads, 0.5),
            lat_threads.last().copied().unwrap_or(f64::NAN),
        );
        println!("    {}", master_steps(&before, &after));
        println!("    {}", slow_requests(&timed, 50.0));
        println!(
            "    client threads: {}",
            slow_requests(&timed_threads, 50.0)
        );
    }
    println!(
        "  worst p99: {worst:.1} ms (with {} client threads: {worst_threads:.1} ms)",
        args.clients
    );
    common::print_load("after the API requests");

    // Valve list pages, closed loop, then one whole walk
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
    let t = Instant::now();
    let (walked, walk_pages) = valve_walk(master_addr, Duration::from_secs(600))?;
    println!(
        "Valve list walked to its end: {walked} servers in {walk_pages} pages, {:.1} s",
        t.elapsed().as_secs_f64()
    );
    // the game masters' lists, each read to its end by `ogp list` (one in a hundred
    // simulated servers on each: `Store::insert_simulated`)
    for (label, args) in [
        (
            "dpmaster",
            vec![
                format!("127.0.0.1:{udp_port}"),
                "--dp".into(),
                "Quake3Arena".into(),
                "68".into(),
            ],
        ),
        (
            "GameSpy v1",
            vec![format!("127.0.0.1:{gs1_port}"), "--gs1".into(), "ut".into()],
        ),
    ] {
        let t = Instant::now();
        let out = Command::new(&ogp)
            .args(["-q", "list"])
            .args(&args)
            .stdin(Stdio::null())
            .stderr(Stdio::inherit())
            .output()
            .with_context(|| format!("ogp list {}", args.join(" ")))?;
        if !out.status.success() {
            bail!("ogp list {} failed: {}", args.join(" "), out.status);
        }
        let servers = out
            .stdout
            .split(|b| *b == b'\n')
            .filter(|l| !l.is_empty())
            .count();
        println!(
            "{label} list read to its end by `ogp list {}`: {servers} servers, {:.2} s",
            args.join(" "),
            t.elapsed().as_secs_f64()
        );
    }

    let (hwm, rss) = memory_kb(master.0.id())?;
    println!(
        "ogp master memory: VmHWM {:.1} MB, VmRSS {:.1} MB (target: ≤ 512 MB)",
        hwm as f64 / 1024.0,
        rss as f64 / 1024.0
    );

    // kill -9 and a restart on the same database: the time until the whole list is
    // served again, and the same servers
    let before = listed(&agent, &base)?;
    let _ = master.0.kill();
    let _ = master.0.wait();
    let t = Instant::now();
    let master = start_master(&ogp, &config)?;
    wait_until("the restarted master", Duration::from_secs(300), || {
        Ok(http(&agent, &format!("{base}/api/v1/stats")).is_ok())
    })?;
    let restart = t.elapsed();
    let after = listed(&agent, &base)?;
    println!(
        "kill -9 and restart: serving {after} servers (before: {before}) {:.2} s after the start (target: ≤ 10 s, nothing lost)",
        restart.as_secs_f64()
    );
    if after < before {
        bail!("the restart lost servers: {before} before, {after} after");
    }
    let (hwm, _) = memory_kb(master.0.id())?;
    println!("restarted master: VmHWM {:.1} MB", hwm as f64 / 1024.0);
    common::print_load("after");
    drop(master);
    drop(live);
    drop(pg);
    let _ = std::fs::remove_dir_all(&dir);
    Ok(())
}

/// The live servers: [`ogp_net::responder::spawn_many_with`] (what `ogp serve` runs)
/// on a runtime of their own (two workers), listening on `n` loopback
/// ports, with an OGP uplink to the master from each at start, and rates that never
/// refuse the master's queries. Stopped when dropped.
struct LiveServers {
    stop: Option<tokio::sync::oneshot::Sender<()>>,
    thread: Option<std::thread::JoinHandle<()>>,
}

impl LiveServers {
    fn start(n: u32, master: SocketAddr) -> Result<Self> {
        use ogp_net::responder::{self, NetConfig};
        use ogp_proto::guard::RateConfig;
        use ogp_proto::ogp::uplink::UplinkConfig;
        use ogp_proto::responder::{Listener, ResponderConfig};
        // a descriptor a port, and the rest of the process
        let _ = rlimit::increase_nofile_limit(u64::from(n).saturating_add(4096));
        let cell = ogp_net::StatusCell::new(common::status()?);
        let mut config = ResponderConfig::default();
        config.rate = RateConfig::new(1e6, 1e6);
        config.unproven_rate = RateConfig::new(1e6, 1e6);
        config.ogp_uplink = Some(UplinkConfig::new(vec![master]));
        // port 0 each: the system picks n distinct ports
        let listeners: Vec<(SocketAddr, Listener)> = (0..n)
            .map(|_| (SocketAddr::from(([127, 0, 0, 1], 0)), Listener::Standard))
            .collect();
        let (ready_tx, ready_rx) = std::sync::mpsc::sync_channel(1);
        let (stop, stop_rx) = tokio::sync::oneshot::channel::<()>();
        let thread = std::thread::Builder::new()
            .name("live-servers".into())
            .spawn(move || {
                // two workers: the answers to the master's verification queries go out
                // while the uplinks of the start still are
                let rt = match tokio::runtime::Builder::new_multi_thread()
                    .worker_threads(2)
                    .enable_all()
                    .build()
                {
                    Ok(rt) => rt,
                    Err(e) => {
                        let _ = ready_tx.send(Err(anyhow::Error::from(e)));
                        return;
                    }
                };
                rt.block_on(async move {
                    let net = NetConfig::default().with_threads(0);
                    match responder::spawn_many_with(&listeners, cell, config, net).await {
                        Ok(handle) => {
                            let _ = ready_tx.send(Ok(()));
                            let _ = stop_rx.await;
                            let _ = handle.shutdown().await;
                        }
                        Err(e) => {
                            let _ = ready_tx.send(Err(anyhow::Error::from(e)));
                        }
                    }
                });
            })?;
        ready_rx
            .recv()
            .context("the live servers' thread")?
            .with_context(|| format!("{n} live servers listening (one socket each)"))?;
        Ok(Self {
            stop: Some(stop),
            thread: Some(thread),
        })
    }
}

impl Drop for LiveServers {
    fn drop(&mut self) {
        if let Some(stop) = self.stop.take() {
            let _ = stop.send(());
        }
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}

/// What the shared poll cycles need of the run: the `ogp` binary, the first instance's
/// config and ports (`udp`, `http`), the database, an HTTP agent and the first
/// instance's base URL.
struct Instances<'a> {
    ogp: &'a std::path::Path,
    config: &'a std::path::Path,
    ports: (u16, u16),
    db: &'a str,
    agent: &'a ureq::Agent,
    base: &'a str,
}

/// A shared poll cycle: servers made due, seconds until the instances' counters had
/// grown by as many, seconds until every one's answer was written, each instance's
/// polls, servers without an answer written since.
struct Cycle {
    due: u64,
    secs: f64,
    written: f64,
    each: Vec<f64>,
    left: i64,
}

/// A runtime and the store opened on it, for the benchmark's own calls.
type Db = (tokio::runtime::Runtime, ogp_master::store::Store);

/// The master's `rediscover_every` (its default; the benchmark's config leaves it).
const REDISCOVER_EVERY: u32 = 30;

/// The benchmark's `poll_interval_secs`, in ms.
const POLL_INTERVAL_MS: i64 = 20_000;

/// The instance counts of `--instances`: one number N is 1 to N, a list is itself.
fn instance_counts(v: &[u32]) -> Vec<u32> {
    let mut out: Vec<u32> = match v {
        [n] => (1..=*n).collect(),
        _ => v.to_vec(),
    };
    out.sort_unstable();
    out.dedup();
    out
}

/// Each instance's `ogp_master_polls_total`.
fn polls_each(agent: &ureq::Agent, bases: &[String]) -> Result<Vec<f64>> {
    bases.iter().map(|b| polls(agent, b)).collect()
}

/// Waits (at most 30 s) until no instance has ended a poll for 0.5 s, and 0.4 s more
/// for the last batch to be written (within 200 ms): the pollers idle, so that a cycle
/// starts from nothing in flight.
fn wait_idle(agent: &ureq::Agent, bases: &[String]) -> Result<()> {
    let t = Instant::now();
    let mut last = polls_each(agent, bases)?;
    let mut quiet = Instant::now();
    while t.elapsed() < Duration::from_secs(30) && quiet.elapsed() < Duration::from_millis(500) {
        std::thread::sleep(Duration::from_millis(100));
        let now = polls_each(agent, bases)?;
        if now != last {
            last = now;
            quiet = Instant::now();
        }
    }
    std::thread::sleep(Duration::from_millis(400));
    Ok(())
}

/// What the polls of a shared cycle are.
#[derive(Debug, Clone, Copy)]
enum Mix {
    /// Regular polls (the protocol each server registered with).
    Regular,
    /// Every poll a rediscovery.
    Rediscoveries,
    /// The master's default mix: one poll in [`REDISCOVER_EVERY`] a rediscovery
    /// (`Store::make_due_mixed`).
    Default,
    /// Regular polls, each lease kept (`Store::make_due`): the instances' own shares.
    Kept,
}

/// One poll cycle shared by the instances at `bases`: every live server made due at
/// once with its lease given up (`Store::make_due_shared`, `Store::make_due_mixed`:
/// regular polls, rediscoveries or the default mix of them; [`Mix::Kept`]:
/// `Store::make_due`, each lease kept, the instances' own shares), then the time until
/// the instances' poll counters have grown by as many; then the time until every one of
/// them has an answer written since (at most 20 s more: the batches written; a server
/// that did not answer stays left out).
fn shared_cycle(
    run: &Instances<'_>,
    db: &Db,
    bases: &[String],
    mix: Mix,
    label: &str,
) -> Result<Cycle> {
    wait_idle(run.agent, bases)?;
    let mark = polls_each(run.agent, bases)?;
    let since = now_ms()?;
    let due = retry_deadlocks(|| {
        Ok(match mix {
            Mix::Kept => db.0.block_on(db.1.make_due(since))?,
            Mix::Regular => db.0.block_on(db.1.make_due_shared(since, None))?,
            Mix::Rediscoveries => {
                db.0.block_on(db.1.make_due_shared(since, Some(REDISCOVER_EVERY)))?
            }
            Mix::Default => {
                db.0.block_on(db.1.make_due_mixed(since, REDISCOVER_EVERY))?
            }
        })
    })?;
    let mut each = Vec::new();
    let took = wait_until(label, Duration::from_secs(600), || {
        each = polls_each(run.agent, bases)?
            .iter()
            .zip(&mark)
            .map(|(n, m)| n - m)
            .collect();
        Ok(each.iter().sum::<f64>() >= due as f64)
    })?;
    let mut left = 0;
    let t = Instant::now();
    while t.elapsed() < Duration::from_secs(20) {
        left = db.0.block_on(db.1.unanswered_since(now_ms()?, since))?;
        if left == 0 {
            break;
        }
        std::thread::sleep(Duration::from_millis(200));
    }
    let written = took + t.elapsed();
    Ok(Cycle {
        due,
        secs: took.as_secs_f64(),
        written: written.as_secs_f64(),
        each,
        left,
    })
}

/// Poll cycles shared by 1, 2, 3… instances on the run's database (`--instances`): the
/// first instance is the run's master; each other is an `ogp master` of the same config
/// on ports of its own, started when its count comes and waited for until every
/// instance counts as live in the database. For each count, a cycle of regular polls,
/// one of rediscoveries (the registered protocol queried, every other auto-detectable
/// one probed) and one of the default mix (one poll in ten a rediscovery). The other instances are stopped at the end (their
/// leases void 5 s later: the first instance takes their servers as they fall due).
fn instance_cycles(args: &Args, run: &Instances<'_>) -> Result<()> {
    let counts = instance_counts(&args.instances);
    let text = std::fs::read_to_string(run.config)?;
    let (udp, http_port) = run.ports;
    let mut kids = Vec::new();
    let mut bases = vec![run.base.to_owned()];
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()?;
    let store = rt.block_on(ogp_master::store::Store::open(run.db))?;
    let db: Db = (rt, store);
    let timers = ogp_master::store::Timers {
        poll_interval_ms: POLL_INTERVAL_MS,
        registration_timeout_ms: 0,
        grace_ms: 0,
        history_retention_ms: 0,
        lease_slack_ms: 0,
        poll_max_ms: 0,
        instance_live_ms: ogp_master::store::instance_live_ms(POLL_INTERVAL_MS),
    };
    println!(
        "poll cycles shared by instances on one database (each its own poll_rate of {} datagrams/s; every live server due at once, leases given up):",
        args.poll_rate
    );
    println!("  | instances | regular polls: cycle s (all written) | polls/s | rediscoveries: cycle s (all written) | polls/s | default mix (1 in {REDISCOVER_EVERY}): cycle s (all written) | polls/s | a million at the default mix | polls per instance (regular; rediscoveries; mix) |");
    let mut first = None;
    let started = Instant::now();
    for k in counts {
        while bases.len() < k as usize {
            let (u, h) = (free_port()?, free_port_tcp()?);
            // its own UDP and HTTP ports; the GameSpy v1 list stays the first one's
            let conf: String = text
                .replace(&format!("127.0.0.1:{udp}\""), &format!("127.0.0.1:{u}\""))
                .replace(
                    &format!("127.0.0.1:{http_port}\""),
                    &format!("127.0.0.1:{h}\""),
                )
                .lines()
                .filter(|l| !l.starts_with("gs1_list"))
                .map(|l| format!("{l}\n"))
                .collect();
            let path = run
                .config
                .with_file_name(format!("master-{}.toml", bases.len() + 1));
            std::fs::write(&path, conf)?;
            let t = Instant::now();
            let mut kid = start_master(run.ogp, &path)?;
            let base = format!("http://127.0.0.1:{h}");
            wait_until("another instance's HTTP", Duration::from_secs(300), || {
                if let Some(status) = kid.0.try_wait()? {
                    bail!("another instance exited at its start: {status}");
                }
                Ok(http(run.agent, &format!("{base}/api/v1/stats")).is_ok())
            })?;
            kids.push(kid);
            println!(
                "  instance {} up in {:.1} s, serving {} servers",
                bases.len() + 1,
                t.elapsed().as_secs_f64(),
                listed(run.agent, &base)?
            );
            bases.push(base);
        }
        let want = i64::from(k);
        wait_until("every instance live", Duration::from_secs(60), || {
            Ok(db.0.block_on(db.1.live(now_ms()?, timers))? == want)
        })?;
        let fmt = |v: &[f64]| {
            v.iter()
                .map(|n| format!("{n:.0}"))
                .collect::<Vec<_>>()
                .join(" + ")
        };
        if k > 1 {
            // the leases the instances hold, kept: the one started last takes its share
            // from the others as the servers fall due (here all at once)
            let kept = shared_cycle(
                run,
                &db,
                &bases,
                Mix::Kept,
                &format!("a poll cycle of {k} instance(s), leases kept"),
            )?;
            println!(
                "  {k} instances, the first cycle after the last one started, leases kept (make_due): {:.2} s ({:.2}), polls per instance {}",
                kept.secs,
                kept.written,
                fmt(&kept.each)
            );
        }
        let reg = shared_cycle(
            run,
            &db,
            &bases,
            Mix::Regular,
            &format!("a poll cycle of {k} instance(s)"),
        )?;
        let red = shared_cycle(
            run,
            &db,
            &bases,
            Mix::Rediscoveries,
            &format!("a rediscovery cycle of {k} instance(s)"),
        )?;
        let mix = shared_cycle(
            run,
            &db,
            &bases,
            Mix::Default,
            &format!("a default-mix cycle of {k} instance(s)"),
        )?;
        let mix_rate = mix.due as f64 / mix.secs;
        println!(
            "  | {k} | {:.2} ({:.2}) | {:.0} | {:.2} ({:.2}) | {:.0} | {:.2} ({:.2}) | {mix_rate:.0} | {:.0} s | {}; {}; {} |",
            reg.secs,
            reg.written,
            reg.due as f64 / reg.secs,
            red.secs,
            red.written,
            red.due as f64 / red.secs,
            mix.secs,
            mix.written,
            1e6 / mix_rate,
            fmt(&reg.each),
            fmt(&red.each),
            fmt(&mix.each)
        );
        if reg.left + red.left + mix.left > 0 {
            println!(
                "  WARNING: {} (regular), {} (rediscoveries) and {} (default mix) of {} servers without an answer written since they were made due",
                reg.left, red.left, mix.left, reg.due
            );
        }
        let (regular, rediscovery) = (reg.secs, red.secs);
        let (k1, r1, d1) = *first.get_or_insert((k, regular, rediscovery));
        if k > k1 {
            println!(
                "  {k} instances: the regular cycle {:.0} % and the rediscovery cycle {:.0} % of {k1}'s",
                100.0 * regular / r1,
                100.0 * rediscovery / d1
            );
        }
    }
    println!(
        "  (the shared cycles took {:.1} s in all)",
        started.elapsed().as_secs_f64()
    );
    drop(kids);
    Ok(())
}

/// A free loopback TCP port.
fn free_port_tcp() -> Result<u16> {
    Ok(std::net::TcpListener::bind("127.0.0.1:0")?
        .local_addr()?
        .port())
}
