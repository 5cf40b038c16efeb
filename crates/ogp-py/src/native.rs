//! The module's functions and the `Scan` class (see the crate's documentation).

use std::sync::Arc;
use std::time::Duration;

use ogp_net::scan::{self, ScanConfig, ScanHandle, ScanResult, Target};
use ogp_proto::client::{Answer, Options, QueryError};
use ogp_proto::{front, Charset, Protocol};
use pyo3::exceptions::{PyRuntimeError, PyValueError};
use pyo3::prelude::*;
use tokio::sync::{mpsc, Mutex};

/// How often a blocking call wakes to let Python run its signal handlers.
const SIGNAL_CHECK: Duration = Duration::from_millis(50);

fn runtime() -> &'static tokio::runtime::Runtime {
    pyo3_async_runtimes::tokio::get_runtime()
}

fn value_error(e: impl std::fmt::Display) -> PyErr {
    PyValueError::new_err(e.to_string())
}

/// A timeout or deadline in seconds, as a duration (at least 1 ms, at most 10 minutes
/// for attempts and an hour for deadlines, the CLI's ranges).
fn seconds(name: &str, s: f64, max: f64) -> PyResult<Duration> {
    if !s.is_finite() || s <= 0.0 || s > max {
        return Err(value_error(format!(
            "{name} must be a number of seconds above 0 (at most {max})"
        )));
    }
    Ok(Duration::from_secs_f64(s).max(Duration::from_millis(1)))
}

fn protocol_arg(protocol: Option<&str>) -> PyResult<Option<Protocol>> {
    match protocol {
        None => Ok(None),
        Some(p) => Protocol::parse_or_auto(p).map_err(value_error),
    }
}

fn charset_arg(charset: &str) -> PyResult<Charset> {
    charset.parse::<Charset>().map_err(value_error)
}

/// What `ogp query` would do with these arguments: the protocol (`None`: auto), the
/// target with its port, whether to look up Minecraft's SRV record first, and whether
/// to try the well-known query ports (the CLI's checks, with its messages).
#[derive(Clone)]
struct Plan {
    protocol: Option<Protocol>,
    target: String,
    srv: bool,
    try_query_ports: bool,
    options: Options,
}

fn plan(
    address: &str,
    protocol: Option<&str>,
    game: Option<&str>,
    timeout: f64,
    retries: u32,
    charset: &str,
    try_query_ports: bool,
) -> PyResult<Plan> {
    let timeout = seconds("timeout", timeout, 600.0)?;
    let charset = charset_arg(charset)?;
    let protocol = protocol_arg(protocol)?;
    let srv = game.is_none() && protocol == Some(Protocol::Minecraft) && !address.contains(':');
    let (protocol, target) = match game {
        Some(_) if protocol.is_some() => {
            return Err(value_error("game picks the protocol: leave out protocol"))
        }
        Some(id) => {
            let g = front::find_game(id).map_err(value_error)?;
            let (t, _why) = front::target_for(g, address).map_err(value_error)?;
            (Some(g.protocol), t)
        }
        None => {
            let t = front::with_default_port(address, protocol)
                .ok_or_else(|| value_error(format!("{address}: no port (expected HOST:PORT)")))?;
            front::check_host(&t).map_err(value_error)?;
            (protocol, t)
        }
    };
    if try_query_ports && game.is_none() && protocol.is_some() {
        return Err(value_error(
            "try_query_ports is for protocol auto (or game)",
        ));
    }
    let options = front::query_options(&target, protocol, timeout, retries, charset);
    Ok(Plan {
        protocol,
        target,
        srv,
        try_query_ports,
        options,
    })
}

/// Runs the plan as `ogp query` does; the result as docs/json.md's compact JSON.
async fn run(plan: Plan) -> String {
    let (about_addr, outcome): (_, Result<Answer, QueryError>) = match plan.protocol {
        Some(p) if !plan.try_query_ports => {
            let addr = if plan.srv {
                match plan.target.rsplit_once(':') {
                    Some((host, _)) => {
                        let limit = plan.options.timing.connect_timeout;
                        let (host, port) = ogp_net::client::minecraft_srv(host, None, limit).await;
                        ogp_net::client::resolve(&format!("{host}:{port}")).await
                    }
                    None => ogp_net::client::resolve(&plan.target).await,
                }
            } else {
                ogp_net::client::resolve(&plan.target).await
            };
            match addr {
                Ok(a) => (Some(a), ogp_net::client::query(a, p, &plan.options).await),
                Err(e) => (None, Err(e)),
            }
        }
        p => {
            let target = Target::new(plan.target.clone(), p).with_query_ports(plan.try_query_ports);
            let mut config = ScanConfig::default();
            config.options = plan.options.clone();
            let r = scan::query(target, config).await;
            (r.addr, r.outcome)
        }
    };
    let about = ogp_proto::result::About {
        target: &plan.target,
        line: None,
        requested: plan.protocol,
        addr: about_addr,
    };
    ogp_proto::result::compact(&about, outcome.as_ref())
}

/// Blocks on `fut` on the runtime with the GIL released, waking to run Python's signal
/// handlers: an exception from one (KeyboardInterrupt) aborts the task and is raised.
fn block_on<T: Send + 'static>(
    py: Python<'_>,
    fut: impl std::future::Future<Output = T> + Send + 'static,
) -> PyResult<T> {
    let mut task = runtime().spawn(fut);
    loop {
        let r = py.detach(|| {
            runtime().block_on(async { tokio::time::timeout(SIGNAL_CHECK, &mut task).await })
        });
        match r {
            Ok(Ok(v)) => return Ok(v),
            Ok(Err(e)) => {
                return Err(PyRuntimeError::new_err(format!(
                    "the query task failed: {e}"
                )))
            }
            Err(_elapsed) => {
                if let Err(e) = py.check_signals() {
                    task.abort();
                    return Err(e);
                }
            }
        }
    }
}

/// `query(address, protocol, game, timeout, retries, charset, try_query_ports)`: one
/// query, blocking; the result JSON (answer or failure).
#[pyfunction]
#[pyo3(signature = (address, protocol=None, game=None, timeout=1.0, retries=2, charset="auto", try_query_ports=false))]
#[allow(clippy::too_many_arguments)]
fn query(
    py: Python<'_>,
    address: &str,
    protocol: Option<&str>,
    game: Option<&str>,
    timeout: f64,
    retries: u32,
    charset: &str,
    try_query_ports: bool,
) -> PyResult<String> {
    let plan = plan(
        address,
        protocol,
        game,
        timeout,
        retries,
        charset,
        try_query_ports,
    )?;
    block_on(py, run(plan))
}

/// `query_async(...)`: as [`query`], an awaitable of the result JSON.
#[pyfunction]
#[pyo3(signature = (address, protocol=None, game=None, timeout=1.0, retries=2, charset="auto", try_query_ports=false))]
#[allow(clippy::too_many_arguments)]
fn query_async<'py>(
    py: Python<'py>,
    address: &str,
    protocol: Option<&str>,
    game: Option<&str>,
    timeout: f64,
    retries: u32,
    charset: &str,
    try_query_ports: bool,
) -> PyResult<Bound<'py, PyAny>> {
    let plan = plan(
        address,
        protocol,
        game,
        timeout,
        retries,
        charset,
        try_query_ports,
    )?;
    pyo3_async_runtimes::tokio::future_into_py(py, async move { Ok(run(plan).await) })
}

/// `games(filter)`: `ogp games --json` (the entries whose id, alias, name or protocol
/// contains `filter`), as JSON.
#[pyfunction]
#[pyo3(signature = (filter=None))]
fn games(filter: Option<&str>) -> PyResult<String> {
    if let Some(e) = ogp_proto::games::catalogue_error() {
        return Err(PyRuntimeError::new_err(e.to_string()));
    }
    let list: Vec<_> = ogp_proto::games::catalogue()
        .filter(filter.unwrap_or(""))
        .collect();
    ogp_proto::result::to_json(&front::games_json(&list))
        .map_err(|e| PyRuntimeError::new_err(e.to_string()))
}

/// `list_servers(master, kind, filter, limit, timeout, page_timeout, region, game,
/// protocol, gs1_key, steam_key_file, insecure)`: `ogp list --json`, blocking with the GIL
/// released; `(kind_of_error, message)` or the servers' JSON objects as one JSON array.
/// The Steam key is read here (the file, else OGP_STEAM_KEY), never passed from Python.
#[pyfunction]
#[pyo3(signature = (master, kind=None, filter="", limit=None, timeout=60.0, page_timeout=2.0, region=255, game=None, protocol=None, gs1_key=None, steam_key_file=None, insecure=false))]
#[allow(clippy::too_many_arguments)]
fn list_servers(
    py: Python<'_>,
    master: &str,
    kind: Option<&str>,
    filter: &str,
    limit: Option<usize>,
    timeout: f64,
    page_timeout: f64,
    region: u8,
    game: Option<String>,
    protocol: Option<String>,
    gs1_key: Option<String>,
    steam_key_file: Option<std::path::PathBuf>,
    insecure: bool,
) -> PyResult<(Option<&'static str>, String)> {
    use ogp_net::list::{self, ListErrorKind, ListEvent, ListOptions, ListParams, SteamKey};
    let mut options = ListOptions::new(
        seconds("timeout", timeout, 86_400.0)?,
        seconds("page_timeout", page_timeout, 600.0)?,
    );
    options.limit = limit;
    options.insecure = insecure;
    let fail = |e: list::ListError| {
        let k = match e.kind {
            ListErrorKind::Usage => "usage",
            ListErrorKind::Resolve => "resolve",
            ListErrorKind::Network => "network",
            ListErrorKind::Tls => "tls",
            ListErrorKind::Http => "http",
            ListErrorKind::Timeout => "timeout",
            ListErrorKind::Malformed => "malformed",
            _ => "output",
        };
        (Some(k), e.to_string())
    };
    let mut p = ListParams::default();
    p.filter = filter.to_string();
    p.region = Some(region);
    p.game = game;
    p.protocol = protocol;
    p.gs1_key = gs1_key;
    if kind == Some("steam") {
        match SteamKey::find(steam_key_file.as_deref()) {
            Ok(k) => p.steam_key = k,
            Err(e) => return Ok(fail(e)),
        }
    }
    let source = match list::ListSource::new(kind, master, p) {
        Ok(s) => s,
        Err(e) => return Ok(fail(e)),
    };
    let run = runtime().spawn_blocking(move || {
        let mut items = Vec::new();
        list::list_servers(&source, &options, &mut |e| {
            if let ListEvent::Server { item, .. } = e {
                items.push(item);
            }
            Ok(())
        })
        .map(|_| items)
    });
    match block_on(py, run)? {
        Ok(Ok(items)) => ogp_proto::result::to_json(&items)
            .map(|j| (None, j))
            .map_err(|e| PyRuntimeError::new_err(e.to_string())),
        Ok(Err(e)) => Ok(fail(e)),
        Err(e) => Err(PyRuntimeError::new_err(format!(
            "the list task failed: {e}"
        ))),
    }
}

/// One result of a scan as JSON (`ogp scan --json`'s line, without its newline).
fn scan_json(r: &ScanResult) -> String {
    let about = ogp_proto::result::About {
        target: &r.target,
        line: Some(r.id),
        requested: r.requested,
        addr: r.addr,
    };
    ogp_proto::result::compact(&about, r.outcome.as_ref())
}

/// The most results handed to Python at once.
const BATCH: usize = 512;

/// The next result (waiting for it) and those ready after it, up to [`BATCH`], as one
/// JSON array of result objects; `None` when the scan is done. Cancel-safe: a result is
/// taken from the channel only when it is added.
async fn next_batch(rx: &mut mpsc::Receiver<ScanResult>) -> Option<String> {
    let first = rx.recv().await?;
    let mut out = String::with_capacity(4096);
    out.push('[');
    out.push_str(&scan_json(&first));
    for _ in 1..BATCH {
        match rx.try_recv() {
            Ok(r) => {
                out.push(',');
                out.push_str(&scan_json(&r));
            }
            Err(_) => break,
        }
    }
    out.push(']');
    Some(out)
}

/// A running scan (`ogp scan`): results come out as each target completes. Closing it
/// (or dropping it) aborts what is still running.
#[pyclass(module = "ogp._ogp")]
struct Scan {
    results: Arc<Mutex<mpsc::Receiver<ScanResult>>>,
    handle: ScanHandle,
    feeder: tokio::task::JoinHandle<()>,
}

impl Drop for Scan {
    fn drop(&mut self) {
        self.feeder.abort();
        self.handle.abort();
    }
}

#[pymethods]
impl Scan {
    /// Starts a scan of `targets` (list lines, as `ogp scan` reads them: `HOST:PORT`,
    /// `PROTOCOL HOST:PORT`, `game:ID HOST[:PORT]`; each result's `line` is its index
    /// + 1). A bad line raises ValueError before anything is sent.
    #[new]
    #[pyo3(signature = (targets, protocol=None, timeout=0.5, retries=3, deadline=6.0, rate=5000, max_in_flight=2048, resolvers=32, sockets=2, try_query_ports=false, charset="auto"))]
    #[allow(clippy::too_many_arguments)]
    fn new(
        targets: Vec<String>,
        protocol: Option<&str>,
        timeout: f64,
        retries: u32,
        deadline: f64,
        rate: u32,
        max_in_flight: usize,
        resolvers: usize,
        sockets: usize,
        try_query_ports: bool,
        charset: &str,
    ) -> PyResult<Self> {
        let default = protocol_arg(protocol)?;
        let mut list = Vec::with_capacity(targets.len());
        for (i, line) in targets.iter().enumerate() {
            let number = u64::try_from(i).unwrap_or(u64::MAX).saturating_add(1);
            match front::parse_line(line, default) {
                Ok(None) => {}
                Ok(Some((p, host))) => list.push(
                    Target::new(host, p)
                        .with_id(number)
                        .with_query_ports(try_query_ports),
                ),
                Err(why) => return Err(value_error(format!("target {number}: {why}"))),
            }
        }
        if rate == 0 || max_in_flight == 0 || resolvers == 0 || !(1..=64).contains(&sockets) {
            return Err(value_error(
                "rate, max_in_flight and resolvers must be at least 1, sockets 1-64",
            ));
        }
        let mut cfg = ScanConfig::default();
        cfg.rate = rate;
        cfg.max_in_flight = max_in_flight;
        cfg.resolve_concurrency = resolvers;
        cfg.sockets = sockets;
        cfg.options = Options::with_timing(front::scan_timing(
            cfg.options.timing,
            seconds("timeout", timeout, 600.0)?,
            retries,
            seconds("deadline", deadline, 3600.0)?,
        ));
        front::set_charset(&mut cfg.options, charset_arg(charset)?);
        let _guard = runtime().enter();
        scan::raise_open_file_limit(max_in_flight);
        let s = scan::start(cfg)
            .map_err(|e| PyRuntimeError::new_err(format!("cannot open a UDP socket: {e}")))?;
        let tx = s.targets;
        let feeder = runtime().spawn(async move {
            for t in list {
                if tx.send(t).await.is_err() {
                    return;
                }
            }
        });
        Ok(Self {
            results: Arc::new(Mutex::new(s.results)),
            handle: s.handle,
            feeder,
        })
    }

    /// The next results as one JSON array (those ready now, at least one, at most
    /// [`BATCH`]: one crossing into Python for many results), blocking with the GIL
    /// released; `None` when the scan is done.
    fn next_blocking(&self, py: Python<'_>) -> PyResult<Option<String>> {
        let results = Arc::clone(&self.results);
        loop {
            let r = py.detach(|| {
                runtime().block_on(async {
                    let mut rx = results.lock().await;
                    tokio::time::timeout(SIGNAL_CHECK, next_batch(&mut rx)).await
                })
            });
            match r {
                Ok(batch) => return Ok(batch),
                Err(_elapsed) => {
                    if let Err(e) = py.check_signals() {
                        self.close();
                        return Err(e);
                    }
                }
            }
        }
    }

    /// An awaitable of the next results as one JSON array (as [`Scan::next_blocking`]),
    /// or `None` when the scan is done.
    fn next_async<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        let results = Arc::clone(&self.results);
        pyo3_async_runtimes::tokio::future_into_py(py, async move {
            let mut rx = results.lock().await;
            Ok(next_batch(&mut rx).await)
        })
    }

    /// Stops the scan now: its task, its sockets and connections go away.
    fn close(&self) {
        self.feeder.abort();
        self.handle.abort();
    }

    /// Whether the scan's task has ended (done, or closed and dropped).
    fn finished(&self) -> bool {
        self.handle.is_finished()
    }

    /// The scan's counters: targets, answered, timed_out, failed, in_flight, sent,
    /// received, connections.
    fn stats(&self) -> std::collections::HashMap<&'static str, u64> {
        let s = self.handle.stats();
        [
            ("targets", s.targets),
            ("answered", s.answered),
            ("timed_out", s.timed_out),
            ("failed", s.failed),
            ("in_flight", s.in_flight),
            ("sent", s.sent),
            ("received", s.received),
            ("connections", s.connections),
        ]
        .into_iter()
        .collect()
    }
}

/// The tasks alive on the runtime now (tests: a cancelled scan leaves none behind).
#[pyfunction]
fn _alive_tasks() -> usize {
    runtime().metrics().num_alive_tasks()
}

/// Benchmark baseline: `n` queries of `address` in `protocol` one after another with
/// the Rust client alone (no Python between them), as [`query`] runs each; the seconds
/// they took. `bench/a2s_10k.py` subtracts it from `n` calls of `ogp.query`.
#[pyfunction]
fn _bench_rust_queries(py: Python<'_>, address: &str, protocol: &str, n: u32) -> PyResult<f64> {
    let plan = plan(address, Some(protocol), None, 1.0, 2, "auto", false)?;
    block_on(py, async move {
        let t = std::time::Instant::now();
        for _ in 0..n {
            let json = run(plan.clone()).await;
            std::hint::black_box(json);
        }
        t.elapsed().as_secs_f64()
    })
}

/// The native module.
#[pymodule]
fn _ogp(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(query, m)?)?;
    m.add_function(wrap_pyfunction!(query_async, m)?)?;
    m.add_function(wrap_pyfunction!(games, m)?)?;
    m.add_function(wrap_pyfunction!(list_servers, m)?)?;
    m.add_function(wrap_pyfunction!(_alive_tasks, m)?)?;
    m.add_function(wrap_pyfunction!(_bench_rust_queries, m)?)?;
    m.add_class::<Scan>()?;
    m.add("__version__", env!("CARGO_PKG_VERSION"))?;
    Ok(())
}
