//! `ogp.node`: the native half of the Node package `ogp` (crates/ogp-node: index.js,
//! index.d.ts, gamedig.js).
//!
//! Thin, as the Python package's (crates/ogp-py): every check and every message is
//! `ogp_net::front`'s (the CLI's own helpers), a query, scan or list runs the Rust client as
//! `ogp query` and `ogp scan` do, and each result crosses into JavaScript as the one
//! result JSON of docs/json.md, which index.js turns into objects and errors. Times are
//! milliseconds, as in the CLI and in JavaScript.
//!
//! One tokio runtime for the process (napi-rs's); no thread per query. A closed or
//! garbage-collected scan aborts its task, which closes its sockets.

use napi::bindgen_prelude::within_runtime_if_available;
use napi::{Error, Result, Status};
use napi_derive::napi;
use ogp_net::front::{self, QueryArgs, RunningScan, ScanArgs, StartError, Unit};

fn invalid(e: impl std::fmt::Display) -> Error {
    Error::new(Status::InvalidArg, e.to_string())
}

/// `query`'s options (index.d.ts documents them; milliseconds).
#[napi(object)]
pub struct QueryOptions {
    /// A protocol name, or `auto`.
    pub protocol: Option<String>,
    /// A game id of the catalogue (picks protocol and port).
    pub game: Option<String>,
    /// Milliseconds per attempt (1000).
    pub timeout: Option<f64>,
    /// Attempts after the first (2).
    pub retries: Option<u32>,
    /// `auto` or a charset name.
    pub charset: Option<String>,
    /// Try the well-known query ports (auto or game only).
    pub try_query_ports: Option<bool>,
}

fn plan(address: &str, o: &QueryOptions) -> Result<front::Plan> {
    let mut a = QueryArgs::new(address);
    a.protocol = o.protocol.as_deref();
    a.game = o.game.as_deref();
    a.timeout = o.timeout.unwrap_or(1000.0);
    a.unit = Unit::Millis;
    a.retries = o.retries.unwrap_or(a.retries);
    a.charset = o.charset.as_deref().unwrap_or(a.charset);
    a.try_query_ports = o.try_query_ports.unwrap_or(false);
    front::plan(&a).map_err(invalid)
}

/// `ogp query ADDRESS`: the result JSON (an answer or a failure; index.js throws the
/// failures). A bad argument rejects with an `InvalidArg` error before anything is sent.
#[napi]
pub async fn query(address: String, options: Option<QueryOptions>) -> Result<String> {
    let options = options.unwrap_or(QueryOptions {
        protocol: None,
        game: None,
        timeout: None,
        retries: None,
        charset: None,
        try_query_ports: None,
    });
    let plan = plan(&address, &options)?;
    Ok(front::run(plan).await)
}

/// `ogp games --json` (the entries matching `filter`), as JSON.
#[napi]
pub fn games(filter: Option<String>) -> Result<String> {
    front::games_json(filter.as_deref()).map_err(|e| Error::new(Status::GenericFailure, e))
}

/// `ogp decode`: the datagrams (one run, in order) decoded, as JSON `{"messages":
/// [...], "notes": [...]}` (docs/decode.md's objects). A bad argument is an
/// `InvalidArg` error; datagrams that do not decode a `DecodeError` one.
#[napi]
pub fn decode(
    datagrams: Vec<napi::bindgen_prelude::Buffer>,
    protocol: Option<String>,
    charset: Option<String>,
) -> Result<String> {
    let data = datagrams.iter().map(|b| b.to_vec()).collect();
    match front::decode(
        data,
        protocol.as_deref(),
        charset.as_deref().unwrap_or("auto"),
    ) {
        Ok(Ok(json)) => Ok(json),
        Ok(Err(why)) => Err(Error::new(Status::GenericFailure, why)),
        Err(e) => Err(invalid(e)),
    }
}

/// `listServers`' options (index.d.ts documents them; milliseconds).
#[napi(object)]
pub struct ListOptions {
    /// The CLI's flag by name (`valve`, `dp`, `gs1`, `cube2`, `qw`, `tw`, `tw7`, `api`,
    /// `ddnet`, `minetest`, `openmp`, `steam`).
    pub kind: Option<String>,
    /// The list's filter.
    pub filter: Option<String>,
    /// The most servers listed.
    pub limit: Option<u32>,
    /// Milliseconds for the whole run (60000).
    pub timeout: Option<f64>,
    /// Milliseconds a page (2000).
    pub page_timeout: Option<f64>,
    /// Valve's region byte (255).
    pub region: Option<u8>,
    /// `dp`, `gs1`: the game.
    pub game: Option<String>,
    /// `dp`: the protocol number.
    pub protocol: Option<String>,
    /// `gs1`: the game's key.
    pub gs1_key: Option<String>,
    /// `steam`: the file holding the Web API key (else `OGP_STEAM_KEY`).
    pub steam_key_file: Option<String>,
    /// Any HTTPS certificate taken (self-signed servers only).
    pub insecure: Option<bool>,
}

/// `ogp list --json` on a blocking thread: `{"ok": true, "servers": [...]}` or `{"ok":
/// false, "kind": CAUSE, "message": LINE}` (index.js throws a ListError). A bad time
/// rejects with an `InvalidArg` error.
#[napi]
pub async fn list_servers(master: String, options: Option<ListOptions>) -> Result<String> {
    let run = tokio::task::spawn_blocking(move || {
        let o = options.as_ref();
        let text = |f: fn(&ListOptions) -> Option<&String>| o.and_then(f).map(String::as_str);
        let mut a = front::ListArgs::new(&master, Unit::Millis);
        a.kind = text(|o| o.kind.as_ref());
        a.filter = text(|o| o.filter.as_ref()).unwrap_or("");
        a.limit = o.and_then(|o| o.limit).map(|n| n as usize);
        a.timeout = o.and_then(|o| o.timeout).unwrap_or(a.timeout);
        a.page_timeout = o.and_then(|o| o.page_timeout).unwrap_or(a.page_timeout);
        a.region = o.and_then(|o| o.region).unwrap_or(a.region);
        a.game = text(|o| o.game.as_ref());
        a.protocol = text(|o| o.protocol.as_ref());
        a.gs1_key = text(|o| o.gs1_key.as_ref());
        a.steam_key_file = text(|o| o.steam_key_file.as_ref()).map(std::path::Path::new);
        a.insecure = o.and_then(|o| o.insecure).unwrap_or(false);
        front::list_json(&a)
    });
    match run.await {
        Ok(Ok(Ok(servers))) => Ok(format!("{{\"ok\":true,\"servers\":{servers}}}")),
        Ok(Ok(Err((kind, message)))) => {
            Ok(serde_json::json!({"ok": false, "kind": kind, "message": message}).to_string())
        }
        Ok(Err(e)) => Err(invalid(e)),
        Err(e) => Err(Error::new(
            Status::GenericFailure,
            format!("the list task failed: {e}"),
        )),
    }
}

/// `scan`'s options (index.d.ts documents them; milliseconds).
#[napi(object)]
pub struct ScanOptions {
    /// The protocol of lines that name none (auto).
    pub protocol: Option<String>,
    /// Milliseconds per attempt (500).
    pub timeout: Option<f64>,
    /// Attempts after the first (3).
    pub retries: Option<u32>,
    /// Milliseconds a target may take in all (6000).
    pub deadline: Option<f64>,
    /// Targets started per second (5000).
    pub rate: Option<u32>,
    /// Targets at once (2048).
    pub max_in_flight: Option<u32>,
    /// Host names resolved at once (32).
    pub resolvers: Option<u32>,
    /// Shared UDP sockets, 1-64 (2).
    pub sockets: Option<u32>,
    /// Try the well-known query ports of auto targets.
    pub try_query_ports: Option<bool>,
    /// `auto` or a charset name.
    pub charset: Option<String>,
}

/// A running scan (`ogp scan`); index.js makes it an async iterator.
#[napi]
pub struct Scan {
    scan: RunningScan,
}

#[napi]
impl Scan {
    /// Starts a scan of `targets` (list lines, as `ogp scan` reads them). A bad line
    /// throws an `InvalidArg` error before anything is sent.
    #[napi(constructor)]
    pub fn new(targets: Vec<String>, options: Option<ScanOptions>) -> Result<Self> {
        let d = ScanArgs::default();
        let o = options.as_ref();
        let get = |f: fn(&ScanOptions) -> Option<u32>, default: usize| {
            o.and_then(f)
                .map_or(default, |v| usize::try_from(v).unwrap_or(usize::MAX))
        };
        let args = ScanArgs {
            protocol: o.and_then(|o| o.protocol.as_deref()),
            timeout: o.and_then(|o| o.timeout).unwrap_or(d.timeout * 1000.0),
            retries: o.and_then(|o| o.retries).unwrap_or(d.retries),
            deadline: o.and_then(|o| o.deadline).unwrap_or(d.deadline * 1000.0),
            unit: Unit::Millis,
            rate: o.and_then(|o| o.rate).unwrap_or(d.rate),
            max_in_flight: get(|o| o.max_in_flight, d.max_in_flight),
            resolvers: get(|o| o.resolvers, d.resolvers),
            sockets: get(|o| o.sockets, d.sockets),
            try_query_ports: o.and_then(|o| o.try_query_ports).unwrap_or(false),
            charset: o.and_then(|o| o.charset.as_deref()).unwrap_or(d.charset),
        };
        match front::start_scan(&targets, &args, None) {
            Ok(scan) => Ok(Self { scan }),
            Err(e @ StartError::Socket(_)) => {
                Err(Error::new(Status::GenericFailure, e.to_string()))
            }
            Err(e) => Err(invalid(e)),
        }
    }

    /// The next results as one JSON array (those ready now, at least one), or null when
    /// the scan is done.
    #[napi]
    pub async fn next(&self) -> Option<String> {
        self.scan.batches().next().await
    }

    /// Stops the scan now: its task, its sockets and connections go away.
    #[napi]
    pub fn close(&self) {
        self.scan.abort();
    }

    /// Whether the scan's task has ended.
    #[napi]
    pub fn finished(&self) -> bool {
        self.scan.finished()
    }

    /// The scan's counters as JSON: targets, answered, timed_out, failed, in_flight,
    /// sent, received, connections.
    #[napi]
    pub fn stats(&self) -> String {
        let s = self.scan.stats();
        format!(
            "{{\"targets\":{},\"answered\":{},\"timed_out\":{},\"failed\":{},\"in_flight\":{},\"sent\":{},\"received\":{},\"connections\":{}}}",
            s.targets, s.answered, s.timed_out, s.failed, s.in_flight, s.sent, s.received, s.connections
        )
    }
}

/// The tasks alive on the runtime now, and the scans' threads (tests: a closed scan
/// leaves none behind).
#[napi(js_name = "_aliveTasks")]
pub fn alive_tasks() -> u32 {
    within_runtime_if_available(|| {
        let n = tokio::runtime::Handle::current()
            .metrics()
            .num_alive_tasks()
            .saturating_add(front::scans_running());
        u32::try_from(n).unwrap_or(u32::MAX)
    })
}
