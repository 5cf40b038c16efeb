//! The module's functions and the `Scan` class (see the crate's documentation).

use std::time::Duration;

use ogp_net::front::{self, QueryArgs, RunningScan, ScanArgs, StartError, Unit};
use pyo3::exceptions::{PyRuntimeError, PyValueError};
use pyo3::prelude::*;

/// How often a blocking call wakes to let Python run its signal handlers.
const SIGNAL_CHECK: Duration = Duration::from_millis(50);

fn runtime() -> &'static tokio::runtime::Runtime {
    pyo3_async_runtimes::tokio::get_runtime()
}

fn value_error(e: impl std::fmt::Display) -> PyErr {
    PyValueError::new_err(e.to_string())
}

/// The plan of `ogp query` with these arguments (ogp_net::front's checks, as
/// ValueError).
#[allow(clippy::too_many_arguments)]
fn plan(
    address: &str,
    protocol: Option<&str>,
    game: Option<&str>,
    timeout: f64,
    retries: u32,
    charset: &str,
    try_query_ports: bool,
) -> PyResult<front::Plan> {
    front::plan(&QueryArgs {
        address,
        protocol,
        game,
        timeout,
        unit: Unit::Seconds,
        retries,
        charset,
        try_query_ports,
    })
    .map_err(value_error)
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
    block_on(py, front::run(plan))
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
    pyo3_async_runtimes::tokio::future_into_py(py, async move { Ok(front::run(plan).await) })
}

/// `games(filter)`: `ogp games --json` (the entries whose id, alias, name or protocol
/// contains `filter`), as JSON.
#[pyfunction]
#[pyo3(signature = (filter=None))]
fn games(filter: Option<&str>) -> PyResult<String> {
    front::games_json(filter).map_err(PyRuntimeError::new_err)
}

/// `ogp decode` of datagrams given as bytes (one run, in order): `(json, None)` with
/// `{"messages": [...], "notes": [...]}`, or `(None, why)` when they do not decode; a bad
/// argument raises ValueError.
#[pyfunction]
#[pyo3(signature = (datagrams, protocol=None, charset="auto"))]
fn decode(
    datagrams: Vec<Vec<u8>>,
    protocol: Option<&str>,
    charset: &str,
) -> PyResult<(Option<String>, Option<String>)> {
    match front::decode(datagrams, protocol, charset) {
        Ok(Ok(json)) => Ok((Some(json), None)),
        Ok(Err(why)) => Ok((None, Some(why))),
        Err(e) => Err(value_error(e)),
    }
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
    let master = master.to_string();
    let kind = kind.map(str::to_string);
    let filter = filter.to_string();
    let run = runtime().spawn_blocking(move || {
        let mut a = front::ListArgs::new(&master, Unit::Seconds);
        a.kind = kind.as_deref();
        a.filter = &filter;
        a.limit = limit;
        a.timeout = timeout;
        a.page_timeout = page_timeout;
        a.region = region;
        a.game = game.as_deref();
        a.protocol = protocol.as_deref();
        a.gs1_key = gs1_key.as_deref();
        a.steam_key_file = steam_key_file.as_deref();
        a.insecure = insecure;
        front::list_json(&a)
    });
    match block_on(py, run)? {
        Ok(Ok(Ok(json))) => Ok((None, json)),
        Ok(Ok(Err((kind, message)))) => Ok((Some(kind), message)),
        Ok(Err(e)) => Err(value_error(e)),
        Err(e) => Err(PyRuntimeError::new_err(format!(
            "the list task failed: {e}"
        ))),
    }
}

/// A running scan (`ogp scan`): results come out as each target completes. Closing it
/// (or dropping it) aborts what is still running.
#[pyclass(module = "ogp._ogp")]
struct Scan {
    scan: RunningScan,
    /// The end of a socket pair the scan's thread writes a byte to when a batch is
    /// ready: `scan_async` waits for it in its event loop (`add_reader`), so no thread
    /// but Python's own ever takes the interpreter's lock for a scan.
    #[cfg(unix)]
    woken: std::os::unix::net::UnixStream,
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
        let args = ScanArgs {
            protocol,
            timeout,
            retries,
            deadline,
            unit: Unit::Seconds,
            rate,
            max_in_flight,
            resolvers,
            sockets,
            try_query_ports,
            charset,
        };
        #[cfg(unix)]
        let (woken, wake) = {
            let (woken, waker) = std::os::unix::net::UnixStream::pair()
                .map_err(|e| PyRuntimeError::new_err(e.to_string()))?;
            woken
                .set_nonblocking(true)
                .map_err(|e| PyRuntimeError::new_err(e.to_string()))?;
            waker
                .set_nonblocking(true)
                .map_err(|e| PyRuntimeError::new_err(e.to_string()))?;
            let wake: front::Wake = Box::new(move || {
                use std::io::Write;
                // Full: the reader has bytes to wake it already.
                let _ = (&waker).write(&[1]);
            });
            (woken, Some(wake))
        };
        #[cfg(not(unix))]
        let wake = None;
        match front::start_scan(&targets, &args, wake) {
            Ok(scan) => Ok(Self {
                scan,
                #[cfg(unix)]
                woken,
            }),
            Err(e @ StartError::Socket(_)) => Err(PyRuntimeError::new_err(e.to_string())),
            Err(e) => Err(value_error(e)),
        }
    }

    /// The next results as one JSON array (those ready now, at least one, at most
    /// [`BATCH`]: one crossing into Python for many results), blocking with the GIL
    /// released; `None` when the scan is done.
    fn next_blocking(&self, py: Python<'_>) -> PyResult<Option<String>> {
        let results = self.scan.batches();
        loop {
            // The timer is made inside the runtime (a tokio Sleep needs its context).
            let r = py.detach(|| {
                runtime()
                    .block_on(async { tokio::time::timeout(SIGNAL_CHECK, results.next()).await })
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
        let results = self.scan.batches();
        pyo3_async_runtimes::tokio::future_into_py(py, async move { Ok(results.next().await) })
    }

    /// The file descriptor that turns readable when a batch may be ready (-1 where
    /// there is none: not Unix; `scan_async` then awaits [`Scan::next_async`]).
    fn wake_fd(&self) -> i64 {
        #[cfg(unix)]
        {
            use std::os::fd::AsRawFd;
            i64::from(self.woken.as_raw_fd())
        }
        #[cfg(not(unix))]
        {
            -1
        }
    }

    /// The next results as one JSON array if a batch is ready now, `None` when the scan
    /// is done, `""` when nothing is ready yet (then wait for [`Scan::wake_fd`]). Reads
    /// the wake-up bytes first, so a batch that comes after this call wakes the fd.
    fn try_next(&self) -> Option<String> {
        #[cfg(unix)]
        {
            use std::io::Read;
            let mut buf = [0u8; 64];
            while matches!((&self.woken).read(&mut buf), Ok(n) if n > 0) {}
        }
        match self.scan.batches().try_next() {
            Ok(batch) => batch,
            Err(()) => Some(String::new()),
        }
    }

    /// Stops the scan now: its task, its sockets and connections go away.
    fn close(&self) {
        self.scan.abort();
    }

    /// Whether the scan's task has ended (done, or closed and dropped).
    fn finished(&self) -> bool {
        self.scan.finished()
    }

    /// The scan's counters: targets, answered, timed_out, failed, in_flight, sent,
    /// received, connections.
    fn stats(&self) -> std::collections::HashMap<&'static str, u64> {
        let s = self.scan.stats();
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

/// The tasks alive on the runtime now, and the scans' threads (tests: a cancelled scan
/// leaves none behind).
#[pyfunction]
fn _alive_tasks() -> usize {
    runtime()
        .metrics()
        .num_alive_tasks()
        .saturating_add(front::scans_running())
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
            let json = front::run(plan.clone()).await;
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
    m.add_function(wrap_pyfunction!(decode, m)?)?;
    m.add_function(wrap_pyfunction!(list_servers, m)?)?;
    m.add_function(wrap_pyfunction!(_alive_tasks, m)?)?;
    m.add_function(wrap_pyfunction!(_bench_rust_queries, m)?)?;
    m.add_class::<Scan>()?;
    m.add("__version__", env!("CARGO_PKG_VERSION"))?;
    Ok(())
}
