//! The master's metrics, in the Prometheus text format (0.0.4) at `/metrics`.

use prometheus_client::encoding::prometheus_text::encode;
pub use prometheus_client::encoding::prometheus_text::CONTENT_TYPE;
use prometheus_client::metrics::counter::Counter;
use prometheus_client::metrics::family::Family;
use prometheus_client::metrics::gauge::Gauge;
use prometheus_client::metrics::histogram::Histogram;
use prometheus_client::registry::Registry;

type Labels = Vec<(&'static str, String)>;

/// Every metric of one master.
pub struct Metrics {
    registry: Registry,
    /// Registrations by protocol and outcome.
    pub registrations: Family<Labels, Counter>,
    /// Verifications by protocol and outcome.
    pub verifications: Family<Labels, Counter>,
    /// Polls by outcome (up, down).
    pub polls: Family<Labels, Counter>,
    /// Time from claiming a batch of due servers to having recorded all their polls.
    pub poll_batch_seconds: Histogram,
    /// Servers listed, by state (up, down); set when scraped.
    pub servers: Family<Labels, Gauge>,
    /// HTTP requests by route and status code.
    pub http_requests: Family<Labels, Counter>,
    /// HTTP connections open now.
    pub http_connections: Gauge,
    /// HTTP connections closed to make room for a new one, by the cap the new one found
    /// full (source, prefix, total).
    pub http_displaced: Family<Labels, Counter>,
    /// GameSpy master list (TCP) connections open now.
    pub gs1_connections: Gauge,
    /// GameSpy master list connections closed to make room for a new one, by the cap it
    /// found full (source, prefix, total).
    pub gs1_displaced: Family<Labels, Counter>,
    /// Cube 2 master (TCP) connections open now.
    pub cube2_connections: Gauge,
    /// Cube 2 master connections closed to make room for a new one, by the cap it
    /// found full (source, prefix, total).
    pub cube2_displaced: Family<Labels, Counter>,
    /// List requests by protocol (valve, dpmaster, qwmaster, gamespy) and outcome (served,
    /// rate_limited, over_total_budget, bad_filter; dpmaster, qwmaster and gamespy also pages_cut:
    /// the budget ran out after some pages; gamespy also refused: a bad request, and
    /// timeout: no whole request, or the list not read, in time).
    pub list_requests: Family<Labels, Counter>,
    /// Datagrams on the UDP port that were nothing we read (malformed, unknown source).
    pub dropped: Family<Labels, Counter>,
    /// Database statements' latency, by operation.
    pub db_seconds: Family<Labels, Histogram>,
    /// Wrong or missing bearer tokens on the write API, by what they got
    /// (unauthorized: 401; limited: 429).
    pub http_wrong_tokens: Family<Labels, Counter>,
    /// Answers to probes (sent for registrations that found no place) that verified a
    /// server or started its verification.
    pub probe_answers: Counter,
    /// Verifications in progress now (set by the registrar's task as it runs).
    pub verifications_pending: Gauge,
    /// Statuses a full-view page found in the status cache (hit) or read (miss).
    pub status_cache: Family<Labels, Counter>,
    /// Bytes the status cache holds (set when scraped).
    pub status_cache_bytes: Gauge,
    /// The list's version (grows with every change; set when scraped).
    pub list_version: Gauge,
    /// Time of the steps of a listing answer: `list` (a request's page from the list,
    /// waits for a page being made included), `body` (a page's answer made: statuses
    /// and JSON).
    pub page_seconds: Family<Labels, Histogram>,
    /// Writes to the list that found its lock taken for the whole patience and waited
    /// in it (holding new readers back meanwhile).
    pub list_write_waits: Counter,
    /// First pages of the listing by where they came from: `cache` (a lookup on the
    /// async worker), `pool` (a thread of the blocking pool: the page made, or the
    /// list's lock taken by a merge).
    pub first_pages: Family<Labels, Counter>,
}

impl std::fmt::Debug for Metrics {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Metrics")
    }
}

fn db_histogram() -> Histogram {
    Histogram::new([
        0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 1.0,
    ])
}

impl Default for Metrics {
    fn default() -> Self {
        let mut registry = Registry::with_prefix("ogp_master");
        let registrations = Family::<Labels, Counter>::default();
        let verifications = Family::<Labels, Counter>::default();
        let polls = Family::<Labels, Counter>::default();
        let poll_batch_seconds = Histogram::new([0.1, 0.5, 1.0, 2.5, 5.0, 10.0, 30.0, 60.0]);
        let servers = Family::<Labels, Gauge>::default();
        let http_requests = Family::<Labels, Counter>::default();
        let http_connections = Gauge::default();
        let http_displaced = Family::<Labels, Counter>::default();
        let gs1_connections = Gauge::default();
        let gs1_displaced = Family::<Labels, Counter>::default();
        let cube2_connections = Gauge::default();
        let cube2_displaced = Family::<Labels, Counter>::default();
        let list_requests = Family::<Labels, Counter>::default();
        let dropped = Family::<Labels, Counter>::default();
        let db_seconds =
            Family::<Labels, Histogram>::new_with_constructor(db_histogram as fn() -> Histogram);
        registry.register(
            "registrations",
            "Registrations (OGP uplinks, GameSpy v1 and v3, Quake III and QuakeWorld heartbeats) by protocol and outcome",
            registrations.clone(),
        );
        registry.register(
            "verifications",
            "Verifications by query back, by protocol and outcome",
            verifications.clone(),
        );
        registry.register("polls", "Polls of listed servers by outcome", polls.clone());
        registry.register(
            "poll_batch_seconds",
            "Time from claiming a batch of due servers to recording their polls",
            poll_batch_seconds.clone(),
        );
        registry.register("servers", "Servers listed, by state", servers.clone());
        registry.register(
            "http_requests",
            "HTTP requests by route and status code",
            http_requests.clone(),
        );
        registry.register(
            "http_connections",
            "HTTP connections open now",
            http_connections.clone(),
        );
        registry.register(
            "http_displaced_connections",
            "HTTP connections closed to make room for a new one, by the cap it found full",
            http_displaced.clone(),
        );
        registry.register(
            "gs1_connections",
            "GameSpy master list (TCP) connections open now",
            gs1_connections.clone(),
        );
        registry.register(
            "gs1_displaced_connections",
            "GameSpy master list connections closed to make room for a new one, by the cap it found full",
            gs1_displaced.clone(),
        );
        registry.register(
            "cube2_connections",
            "Cube 2 master (TCP) connections open now",
            cube2_connections.clone(),
        );
        registry.register(
            "cube2_displaced_connections",
            "Cube 2 master connections closed to make room for a new one, by the cap it found full",
            cube2_displaced.clone(),
        );
        registry.register(
            "list_requests",
            "List requests (Valve, dpmaster, QuakeWorld, GameSpy) by protocol and outcome",
            list_requests.clone(),
        );
        registry.register(
            "dropped_datagrams",
            "Datagrams on the UDP port that were not read, by reason",
            dropped.clone(),
        );
        registry.register(
            "db_seconds",
            "Database statement latency by operation",
            db_seconds.clone(),
        );
        let http_wrong_tokens = Family::<Labels, Counter>::default();
        registry.register(
            "http_wrong_tokens",
            "Wrong or missing bearer tokens on the write API, by answer (unauthorized, limited)",
            http_wrong_tokens.clone(),
        );
        let probe_answers = Counter::default();
        registry.register(
            "probe_answers",
            "Answers to probes of registrations that found no place, taken",
            probe_answers.clone(),
        );
        let verifications_pending = Gauge::default();
        registry.register(
            "verifications_pending",
            "Verifications in progress now",
            verifications_pending.clone(),
        );
        let status_cache = Family::<Labels, Counter>::default();
        registry.register(
            "status_cache",
            "Statuses of full-view pages found in the status cache (hit) or read from the database (miss)",
            status_cache.clone(),
        );
        let status_cache_bytes = Gauge::default();
        registry.register(
            "status_cache_bytes",
            "Bytes the status cache holds",
            status_cache_bytes.clone(),
        );
        let list_version = Gauge::default();
        registry.register(
            "list_version",
            "The list's version (grows with every change)",
            list_version.clone(),
        );
        let page_seconds =
            Family::<Labels, Histogram>::new_with_constructor(db_histogram as fn() -> Histogram);
        registry.register(
            "page_seconds",
            "Time of the steps of a listing answer: list (the page from the list), body (its answer made)",
            page_seconds.clone(),
        );
        let list_write_waits = Counter::default();
        registry.register(
            "list_write_waits",
            "Writes to the list that found its lock taken for the whole patience and waited in it",
            list_write_waits.clone(),
        );
        let first_pages = Family::<Labels, Counter>::default();
        registry.register(
            "first_pages",
            "First pages of the listing by where they came from: cache (on the async worker), pool (a thread of the blocking pool)",
            first_pages.clone(),
        );
        let info = Family::<Labels, Gauge>::default();
        info.get_or_create(&vec![("version", env!("CARGO_PKG_VERSION").to_owned())])
            .set(1);
        registry.register("build_info", "The running version", info);
        Self {
            registry,
            registrations,
            verifications,
            polls,
            poll_batch_seconds,
            servers,
            http_requests,
            http_connections,
            http_displaced,
            gs1_connections,
            gs1_displaced,
            cube2_connections,
            cube2_displaced,
            list_requests,
            dropped,
            db_seconds,
            http_wrong_tokens,
            probe_answers,
            verifications_pending,
            status_cache,
            status_cache_bytes,
            list_version,
            page_seconds,
            list_write_waits,
            first_pages,
        }
    }
}

/// A label set of one label.
pub fn label(k: &'static str, v: &str) -> Labels {
    vec![(k, v.to_owned())]
}

/// A label set of two labels.
pub fn labels(k1: &'static str, v1: &str, k2: &'static str, v2: &str) -> Labels {
    vec![(k1, v1.to_owned()), (k2, v2.to_owned())]
}

impl Metrics {
    /// The text exposition.
    pub fn encode(&self) -> String {
        let mut out = String::new();
        if encode(&mut out, &self.registry).is_err() {
            out.clear();
        }
        out
    }

    /// Records the time of a step of a listing answer.
    pub fn page(&self, step: &str, started: std::time::Instant) {
        self.page_seconds
            .get_or_create(&label("step", step))
            .observe(started.elapsed().as_secs_f64());
    }

    /// Records a database statement's latency.
    pub fn db(&self, op: &str, started: std::time::Instant) {
        self.db_seconds
            .get_or_create(&label("op", op))
            .observe(started.elapsed().as_secs_f64());
    }
}
