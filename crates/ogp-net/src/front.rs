//! What the language bindings share (the Python package, crates/ogp-py; the Node
//! package, crates/ogp-node): `ogp query` and `ogp scan` as functions of plain
//! arguments, each result as the one result JSON of docs/json.md. A binding only
//! converts its arguments in and the JSON out; every check and every message is here
//! (and in [`ogp_proto::front`], the CLI's own helpers), so the packages agree with each
//! other and with the CLI.
//!
//! Errors in arguments are one line (`Err(String)`), raised by a binding as its
//! language's value error before anything is sent.

use std::time::Duration;

use ogp_proto::client::{Answer, Options, QueryError};
use ogp_proto::{front, Charset, Protocol};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::Arc;

use tokio::sync::{mpsc, watch, Mutex, Notify};

use crate::scan::{self, ScanConfig, ScanResult, ScanStats, Target};

/// The unit of a binding's times: Python's are seconds, Node's milliseconds (as the
/// CLI's `--timeout`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Unit {
    /// Seconds (Python).
    #[default]
    Seconds,
    /// Milliseconds (Node).
    Millis,
}

impl Unit {
    /// A timeout or deadline in this unit, as a duration (at least 1 ms, at most
    /// `max_s` seconds: the CLI's ranges are 10 minutes for attempts, an hour for
    /// deadlines); the error names the unit.
    pub fn duration(self, name: &str, v: f64, max_s: f64) -> Result<Duration, String> {
        let (unit, per_second) = match self {
            Self::Seconds => ("seconds", 1.0),
            Self::Millis => ("milliseconds", 1000.0),
        };
        let max = max_s * per_second;
        if !v.is_finite() || v <= 0.0 || v > max {
            return Err(format!(
                "{name} must be a number of {unit} above 0 (at most {max})"
            ));
        }
        Ok(Duration::from_secs_f64(v / per_second).max(Duration::from_millis(1)))
    }
}

/// A protocol argument: `None` and `auto` are auto-detection.
pub fn protocol_arg(protocol: Option<&str>) -> Result<Option<Protocol>, String> {
    match protocol {
        None => Ok(None),
        Some(p) => Protocol::parse_or_auto(p).map_err(|e| e.to_string()),
    }
}

/// A charset argument (`auto` or a name).
pub fn charset_arg(charset: &str) -> Result<Charset, String> {
    charset.parse::<Charset>().map_err(|e| e.to_string())
}

/// `ogp query`'s arguments.
#[derive(Debug, Clone, Copy)]
pub struct QueryArgs<'a> {
    /// `HOST[:PORT]`.
    pub address: &'a str,
    /// A protocol name (`None` or `auto`: detect).
    pub protocol: Option<&'a str>,
    /// A game id of the catalogue (picks protocol and port).
    pub game: Option<&'a str>,
    /// Time per attempt, in `unit`s.
    pub timeout: f64,
    /// The unit of `timeout`.
    pub unit: Unit,
    /// Attempts after the first.
    pub retries: u32,
    /// `auto` or a charset name.
    pub charset: &'a str,
    /// Try the well-known query ports (protocol auto or game only).
    pub try_query_ports: bool,
}

impl<'a> QueryArgs<'a> {
    /// `ogp query ADDRESS`'s defaults: auto, 1 s, 2 retries, charset auto.
    pub fn new(address: &'a str) -> Self {
        Self {
            address,
            protocol: None,
            game: None,
            timeout: 1.0,
            unit: Unit::Seconds,
            retries: 2,
            charset: "auto",
            try_query_ports: false,
        }
    }
}

/// What `ogp query` would do with these arguments: the protocol (`None`: auto), the
/// target with its port, whether to look up Minecraft's SRV record first, and whether
/// to try the well-known query ports (the CLI's checks, with its messages).
#[derive(Clone)]
pub struct Plan {
    protocol: Option<Protocol>,
    target: String,
    srv: bool,
    try_query_ports: bool,
    options: Options,
}

/// Checks the arguments as `ogp query` does; the plan [`run`] carries out.
pub fn plan(a: &QueryArgs<'_>) -> Result<Plan, String> {
    let timeout = a.unit.duration("timeout", a.timeout, 600.0)?;
    let charset = charset_arg(a.charset)?;
    let protocol = protocol_arg(a.protocol)?;
    let address = a.address;
    let srv = a.game.is_none() && protocol == Some(Protocol::Minecraft) && !address.contains(':');
    let (protocol, target) = match a.game {
        Some(_) if protocol.is_some() => {
            return Err("game picks the protocol: leave out protocol".into())
        }
        Some(id) => {
            let g = front::find_game(id)?;
            let (t, _why) = front::target_for(g, address)?;
            (Some(g.protocol), t)
        }
        None => {
            let t = front::with_default_port(address, protocol)
                .ok_or_else(|| format!("{address}: no port (expected HOST:PORT)"))?;
            front::check_host(&t)?;
            (protocol, t)
        }
    };
    if a.try_query_ports && a.game.is_none() && protocol.is_some() {
        return Err("try_query_ports is for protocol auto (or game)".into());
    }
    let options = front::query_options(&target, protocol, timeout, a.retries, charset);
    Ok(Plan {
        protocol,
        target,
        srv,
        try_query_ports: a.try_query_ports,
        options,
    })
}

/// Runs the plan as `ogp query` does; the result as docs/json.md's compact JSON.
pub async fn run(plan: Plan) -> String {
    let (about_addr, outcome): (_, Result<Answer, QueryError>) = match plan.protocol {
        Some(p) if !plan.try_query_ports => {
            let addr = if plan.srv {
                match plan.target.rsplit_once(':') {
                    Some((host, _)) => {
                        let limit = plan.options.timing.connect_timeout;
                        let (host, port) = crate::client::minecraft_srv(host, None, limit).await;
                        crate::client::resolve(&format!("{host}:{port}")).await
                    }
                    None => crate::client::resolve(&plan.target).await,
                }
            } else {
                crate::client::resolve(&plan.target).await
            };
            match addr {
                Ok(a) => (Some(a), crate::client::query(a, p, &plan.options).await),
                Err(e) => (None, Err(e)),
            }
        }
        p => {
            let target = Target::new(plan.target.clone(), p).with_query_ports(plan.try_query_ports);
            let config = ScanConfig {
                options: plan.options.clone(),
                ..ScanConfig::default()
            };
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

/// `ogp games --json` (the entries whose id, alias, name or protocol contains
/// `filter`), as JSON.
pub fn games_json(filter: Option<&str>) -> Result<String, String> {
    if let Some(e) = ogp_proto::games::catalogue_error() {
        return Err(e.to_string());
    }
    let list: Vec<_> = ogp_proto::games::catalogue()
        .filter(filter.unwrap_or(""))
        .collect();
    ogp_proto::result::to_json(&front::games_json(&list)).map_err(|e| e.to_string())
}

/// `ogp decode`'s work on datagrams given as bytes ([`ogp_proto::decode::decode_json`]):
/// `Ok(Err(why))` when they do not decode (one line, unsanitized), `Err` for a bad
/// argument.
#[allow(clippy::type_complexity)]
pub fn decode(
    datagrams: Vec<Vec<u8>>,
    protocol: Option<&str>,
    charset: &str,
) -> Result<Result<String, String>, String> {
    let protocol = protocol_arg(protocol)?;
    let charset = charset_arg(charset)?;
    if datagrams.is_empty() {
        return Err("no datagram to decode".into());
    }
    Ok(ogp_proto::decode::decode_json(protocol, datagrams, charset).map_err(|e| e.to_string()))
}

/// `ogp list --json`'s arguments (the CLI's flags; times in the binding's unit).
#[derive(Debug, Clone)]
#[non_exhaustive]
pub struct ListArgs<'a> {
    /// The master (`HOST[:PORT]`) or the list's URL.
    pub master: &'a str,
    /// The CLI's flag by name (`valve`, `dp`, `gs1`, `cube2`, `qw`, `tw`, `tw7`, `api`,
    /// `ddnet`, `minetest`, `openmp`, `steam`); `None`: by the address.
    pub kind: Option<&'a str>,
    /// The list's filter.
    pub filter: &'a str,
    /// The most servers listed.
    pub limit: Option<usize>,
    /// The whole run's time (60 s).
    pub timeout: f64,
    /// A page's time (2 s).
    pub page_timeout: f64,
    /// The unit of the times.
    pub unit: Unit,
    /// Valve's region byte (255: all).
    pub region: u8,
    /// `dp` and `gs1`: the game.
    pub game: Option<&'a str>,
    /// `dp`: the protocol number.
    pub protocol: Option<&'a str>,
    /// `gs1`: the game's key.
    pub gs1_key: Option<&'a str>,
    /// `steam`: the file holding the Web API key (else `OGP_STEAM_KEY`).
    pub steam_key_file: Option<&'a std::path::Path>,
    /// Any HTTPS certificate taken (self-signed servers only).
    pub insecure: bool,
}

impl<'a> ListArgs<'a> {
    /// The CLI's defaults for `master`.
    pub fn new(master: &'a str, unit: Unit) -> Self {
        let per_second = match unit {
            Unit::Seconds => 1.0,
            Unit::Millis => 1000.0,
        };
        Self {
            master,
            kind: None,
            filter: "",
            limit: None,
            timeout: 60.0 * per_second,
            page_timeout: 2.0 * per_second,
            unit,
            region: 255,
            game: None,
            protocol: None,
            gs1_key: None,
            steam_key_file: None,
            insecure: false,
        }
    }
}

/// `ogp list --json`, blocking (run it off the async threads): `Ok(Ok(json))` is the
/// servers' objects as one JSON array, `Ok(Err((cause, message)))` a failed run (the
/// cause is [`crate::list::ListErrorKind::name`], the message the CLI's line; a Steam
/// key is never in it), `Err` a bad time argument (or JSON that failed to serialize).
#[allow(clippy::type_complexity)]
pub fn list_json(a: &ListArgs<'_>) -> Result<Result<String, (&'static str, String)>, String> {
    use crate::list::{self, ListEvent, ListOptions, ListParams, SteamKey};
    let mut options = ListOptions::new(
        a.unit.duration("timeout", a.timeout, 86_400.0)?,
        a.unit.duration("page_timeout", a.page_timeout, 600.0)?,
    );
    options.limit = a.limit;
    options.insecure = a.insecure;
    let fail = |e: list::ListError| Ok(Err((e.kind.name(), e.to_string())));
    let mut p = ListParams {
        filter: a.filter.to_string(),
        region: Some(a.region),
        game: a.game.map(str::to_string),
        protocol: a.protocol.map(str::to_string),
        gs1_key: a.gs1_key.map(str::to_string),
        ..ListParams::default()
    };
    if a.kind == Some("steam") {
        match SteamKey::find(a.steam_key_file) {
            Ok(k) => p.steam_key = k,
            Err(e) => return fail(e),
        }
    }
    let source = match list::ListSource::new(a.kind, a.master, p) {
        Ok(s) => s,
        Err(e) => return fail(e),
    };
    let mut items = Vec::new();
    let run = list::list_servers(&source, &options, &mut |e| {
        if let ListEvent::Server { item, .. } = e {
            items.push(item);
        }
        Ok(())
    });
    match run {
        Ok(_) => ogp_proto::result::to_json(&items)
            .map(Ok)
            .map_err(|e| e.to_string()),
        Err(e) => fail(e),
    }
}

/// `ogp scan`'s arguments.
#[derive(Debug, Clone)]
pub struct ScanArgs<'a> {
    /// The default protocol of lines that name none (`None`: auto).
    pub protocol: Option<&'a str>,
    /// Time per attempt, in `unit`s.
    pub timeout: f64,
    /// Attempts after the first.
    pub retries: u32,
    /// Time a target may take in all, in `unit`s.
    pub deadline: f64,
    /// The unit of `timeout` and `deadline`.
    pub unit: Unit,
    /// Targets started per second.
    pub rate: u32,
    /// Targets at once.
    pub max_in_flight: usize,
    /// Host names resolved at once.
    pub resolvers: usize,
    /// Shared UDP sockets (1-64).
    pub sockets: usize,
    /// Try the well-known query ports of auto targets.
    pub try_query_ports: bool,
    /// `auto` or a charset name.
    pub charset: &'a str,
}

impl Default for ScanArgs<'_> {
    /// `ogp scan`'s defaults.
    fn default() -> Self {
        Self {
            protocol: None,
            timeout: 0.5,
            retries: 3,
            deadline: 6.0,
            unit: Unit::Seconds,
            rate: 5000,
            max_in_flight: 2048,
            resolvers: 32,
            sockets: 2,
            try_query_ports: false,
            charset: "auto",
        }
    }
}

/// A running scan: results come out of `results` as each target completes. Dropping it
/// (or [`RunningScan::abort`]) stops what is still running, its sockets with it.
///
/// The scan runs as `ogp scan` runs it: on a thread of its own with a one-thread
/// runtime (the engine, the feeder of targets, and the results made JSON and gathered
/// in batches there), so a binding's thread only takes the finished batches, one
/// wake-up a batch. The thread ends with the scan, or when it is stopped; its runtime
/// takes every task, socket and connection of the scan with it.
pub struct RunningScan {
    results: Batches,
    stats: watch::Receiver<ScanStats>,
    /// Told to stop the scan's thread; its flag set when the thread is done.
    thread: Arc<ScanThread>,
}

/// What a scan's thread and its [`RunningScan`] share. (Not the scan's task handle: a
/// task's handle keeps its runtime's driver, an epoll and an eventfd, open until it is
/// dropped, and a binding's object may be dropped long after its scan.)
#[derive(Default)]
struct ScanThread {
    stop: Notify,
    done: AtomicBool,
}

impl RunningScan {
    /// The scan's results, in batches (a handle the binding's awaitables share).
    pub fn batches(&self) -> Batches {
        self.results.clone()
    }

    /// Stops the scan now.
    pub fn abort(&self) {
        self.thread.stop.notify_one();
    }

    /// Whether the scan has ended (its thread, its runtime and sockets with it).
    pub fn finished(&self) -> bool {
        self.thread.done.load(Ordering::SeqCst)
    }

    /// The scan's counters.
    pub fn stats(&self) -> ScanStats {
        *self.stats.borrow()
    }
}

impl Drop for RunningScan {
    fn drop(&mut self) {
        self.abort();
    }
}

/// Scans whose thread is running (tests: a stopped scan leaves none behind).
static SCANS_RUNNING: AtomicUsize = AtomicUsize::new(0);

/// How many scans' threads are running now (with their runtimes, sockets and tasks).
pub fn scans_running() -> usize {
    SCANS_RUNNING.load(Ordering::SeqCst)
}

/// Why a scan did not start.
#[derive(Debug)]
pub enum StartError {
    /// A bad argument or target line (a value error in the binding's language).
    Args(String),
    /// The scan's UDP sockets did not open.
    Socket(std::io::Error),
}

impl std::fmt::Display for StartError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Self::Args(why) => f.write_str(why),
            Self::Socket(e) => write!(f, "cannot open a UDP socket: {e}"),
        }
    }
}

impl std::error::Error for StartError {}

impl From<String> for StartError {
    fn from(why: String) -> Self {
        Self::Args(why)
    }
}

/// Starts a scan of `targets` (list lines, as `ogp scan` reads them: `HOST:PORT`,
/// `PROTOCOL HOST:PORT`, `game:ID HOST[:PORT]`; each result's `line` is its index + 1).
/// A bad line is an error before anything is sent. The scan runs on a thread of its
/// own ([`RunningScan`]); no runtime is needed to call this. `wake`, if given, is called
/// on the scan's thread each time a batch is ready and once when the scan's thread ends
/// (a binding wakes its event loop with it: Python writes a byte to a socket its loop
/// watches, no lock of the interpreter taken on the scan's thread).
pub fn start_scan(
    targets: &[String],
    a: &ScanArgs<'_>,
    wake: Option<Wake>,
) -> Result<RunningScan, StartError> {
    let default = protocol_arg(a.protocol)?;
    let mut list = Vec::with_capacity(targets.len());
    for (i, line) in targets.iter().enumerate() {
        let number = u64::try_from(i).unwrap_or(u64::MAX).saturating_add(1);
        match front::parse_line(line, default) {
            Ok(None) => {}
            Ok(Some((p, host))) => list.push(
                Target::new(host, p)
                    .with_id(number)
                    .with_query_ports(a.try_query_ports),
            ),
            Err(why) => return Err(StartError::Args(format!("target {number}: {why}"))),
        }
    }
    if a.rate == 0 || a.max_in_flight == 0 || a.resolvers == 0 || !(1..=64).contains(&a.sockets) {
        return Err(StartError::Args(
            "rate, max_in_flight and resolvers must be at least 1, sockets 1-64".into(),
        ));
    }
    let base = ScanConfig::default();
    let timing = front::scan_timing(
        base.options.timing,
        a.unit.duration("timeout", a.timeout, 600.0)?,
        a.retries,
        a.unit.duration("deadline", a.deadline, 3600.0)?,
    );
    let mut cfg = ScanConfig {
        rate: a.rate,
        max_in_flight: a.max_in_flight,
        resolve_concurrency: a.resolvers,
        sockets: a.sockets,
        options: Options::with_timing(timing),
        ..base
    };
    front::set_charset(&mut cfg.options, charset_arg(a.charset)?);
    scan::raise_open_file_limit(a.max_in_flight);
    let (reply, started) = std::sync::mpsc::sync_channel(1);
    let thread = Arc::new(ScanThread::default());
    let shared = Arc::clone(&thread);
    SCANS_RUNNING.fetch_add(1, Ordering::SeqCst);
    let spawned = std::thread::Builder::new()
        .name("ogp-scan".into())
        .spawn(move || {
            let wake = wake.unwrap_or_else(|| Box::new(|| {}));
            scan_thread(cfg, list, &reply, &shared.stop, &*wake);
            shared.done.store(true, Ordering::SeqCst);
            SCANS_RUNNING.fetch_sub(1, Ordering::SeqCst);
            wake();
        });
    if let Err(e) = spawned {
        SCANS_RUNNING.fetch_sub(1, Ordering::SeqCst);
        return Err(StartError::Socket(e));
    }
    let (batches, stats) = match started.recv() {
        Ok(r) => r.map_err(StartError::Socket)?,
        Err(_) => {
            return Err(StartError::Socket(std::io::Error::other(
                "the scan's thread ended before it started",
            )))
        }
    };
    Ok(RunningScan {
        results: Batches(Arc::new(Mutex::new(batches))),
        stats,
        thread,
    })
}

type Started = std::io::Result<(mpsc::Receiver<String>, watch::Receiver<ScanStats>)>;

/// What a scan calls when a batch is ready ([`start_scan`]).
pub type Wake = Box<dyn Fn() + Send + 'static>;

/// The scan's thread: its runtime runs the engine, the feeder and the batcher until the
/// batcher has handed over the last result, or until `stop`; then drops them all.
fn scan_thread(
    cfg: ScanConfig,
    list: Vec<Target>,
    reply: &std::sync::mpsc::SyncSender<Started>,
    stop: &Notify,
    wake: &(dyn Fn() + Send),
) {
    let rt = match tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
    {
        Ok(rt) => rt,
        Err(e) => {
            let _ = reply.send(Err(e));
            return;
        }
    };
    rt.block_on(async {
        let s = match scan::start(cfg) {
            Ok(s) => s,
            Err(e) => {
                let _ = reply.send(Err(e));
                return;
            }
        };
        let tx = s.targets;
        tokio::spawn(async move {
            for t in list {
                if tx.send(t).await.is_err() {
                    return;
                }
            }
        });
        let (batches, out) = mpsc::channel(BATCHES_HELD);
        let handle = s.handle;
        if reply.send(Ok((out, handle.stats_watch()))).is_err() {
            return;
        }
        tokio::select! {
            () = batcher(s.results, batches, wake) => {}
            () = stop.notified() => {}
        }
        drop(handle);
    });
}

/// One result of a scan as JSON (`ogp scan --json`'s line, without its newline).
pub fn scan_json(r: &ScanResult) -> String {
    let about = ogp_proto::result::About {
        target: &r.target,
        line: Some(r.id),
        requested: r.requested,
        addr: r.addr,
    };
    ogp_proto::result::compact(&about, r.outcome.as_ref())
}

/// The most results handed to a binding at once.
pub const BATCH: usize = 512;

/// How long a batch waits for more results after its first: a binding pays a
/// crossing into its language (a wake-up of its thread, a promise, an await) a batch,
/// so results that come a few at a time are gathered for this long (or until [`BATCH`],
/// or the end of the scan) before they go.
pub const LINGER: Duration = Duration::from_millis(2);

/// Batches made and not yet taken by the binding (then the batcher waits, and the
/// scan's results channel fills, and the scan slows to the binding's pace).
const BATCHES_HELD: usize = 8;

/// Gathers the scan's results into batches, each one JSON array of result objects.
async fn batcher(
    mut rx: mpsc::Receiver<ScanResult>,
    tx: mpsc::Sender<String>,
    wake: &(dyn Fn() + Send),
) {
    while let Some(first) = rx.recv().await {
        let mut out = String::with_capacity(4096);
        out.push('[');
        out.push_str(&scan_json(&first));
        let linger = tokio::time::sleep(LINGER);
        tokio::pin!(linger);
        let mut n = 1;
        let mut done = false;
        while n < BATCH {
            tokio::select! {
                biased;
                r = rx.recv() => match r {
                    Some(r) => {
                        out.push(',');
                        out.push_str(&scan_json(&r));
                        n += 1;
                    }
                    None => {
                        done = true;
                        break;
                    }
                },
                () = &mut linger => break,
            }
        }
        out.push(']');
        if tx.send(out).await.is_err() {
            return;
        }
        wake();
        if done {
            return;
        }
    }
}

/// A scan's results, shared by the awaitables a binding hands out.
#[derive(Clone)]
pub struct Batches(Arc<Mutex<mpsc::Receiver<String>>>);

impl Batches {
    /// The next batch (waiting for it): up to [`BATCH`] results as one JSON array of
    /// result objects (one crossing into the other language for many results); `None`
    /// when the scan is done or stopped. Cancel-safe.
    pub async fn next(&self) -> Option<String> {
        self.0.lock().await.recv().await
    }

    /// The next batch if one is ready now: `Ok(None)` when the scan is done or stopped,
    /// `Err(())` when none is ready yet.
    #[allow(clippy::result_unit_err)]
    pub fn try_next(&self) -> Result<Option<String>, ()> {
        let mut rx = self.0.try_lock().map_err(|_| ())?;
        match rx.try_recv() {
            Ok(b) => Ok(Some(b)),
            Err(mpsc::error::TryRecvError::Empty) => Err(()),
            Err(mpsc::error::TryRecvError::Disconnected) => Ok(None),
        }
    }
}
