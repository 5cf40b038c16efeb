//! `ogp serve --metrics ADDR`: `GET /metrics` in the Prometheus text exposition format
//! (version 0.0.4), encoded by `prometheus-client`, served by `axum`.
//!
//! How it is put together (the pattern for other `/metrics` endpoints of this project):
//! * One [`Registry`] per process, with the prefix `ogp_serve`; counter names are
//!   registered without `_total` (the encoder adds it).
//! * Counts that live elsewhere are not copied into metric objects as they change: a
//!   [`Collector`] ([`ResponderCollector`]) reads a snapshot at each scrape (the
//!   responder's [`Stats`], copied under the lock the responder already has, and the
//!   served status) and encodes it as constant counters and gauges. The answering path
//!   does no extra work for metrics.
//! * Events this process sees itself (state-file reloads) are `prometheus-client`
//!   counters (atomics) registered in the same registry.
//! * [`router`] is an `axum` router with one route, `GET /metrics`, which encodes the
//!   registry into a string with `prometheus_text::encode` and sends it with
//!   `prometheus_text::CONTENT_TYPE`.

use std::fmt;
use std::net::SocketAddr;
use std::sync::Arc;

use anyhow::{Context as _, Result};
use axum::http::{header, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::routing::get;
use axum::Router;
use ogp_net::responder::StatsReader;
use ogp_net::StatusCell;
use ogp_proto::responder::Stats;
use prometheus_client::collector::Collector;
use prometheus_client::encoding::{prometheus_text, DescriptorEncoder, EncodeMetric};
use prometheus_client::metrics::counter::{ConstCounter, Counter};
use prometheus_client::metrics::family::Family;
use prometheus_client::metrics::gauge::ConstGauge;
use prometheus_client::metrics::info::Info;
use prometheus_client::registry::Registry;

/// The prefix of every metric name.
pub const PREFIX: &str = "ogp_serve";

/// How a read of the state file after the first ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Reload {
    /// Read, checked and served.
    Ok,
    /// Refused, failed, or not done within its time limit.
    Error,
}

impl Reload {
    fn label(self) -> &'static str {
        match self {
            Self::Ok => "ok",
            Self::Error => "error",
        }
    }
}

/// The label set of `ogp_serve_state_reloads_total`.
type OutcomeLabel = [(&'static str, &'static str); 1];

/// The metrics of one `ogp serve` process.
#[derive(Debug)]
pub struct Metrics {
    registry: Registry,
    reloads: Family<OutcomeLabel, Counter>,
}

impl Metrics {
    /// The registry: the responder's counters and the served status read at each scrape
    /// from `stats` and `status`, the reload counters, the build information.
    pub fn new(stats: StatsReader, status: Arc<StatusCell>) -> Self {
        let mut registry = Registry::with_prefix(PREFIX);
        registry.register(
            "build",
            "Build information of the ogp binary",
            Info::new([("version", env!("CARGO_PKG_VERSION"))]),
        );
        let reloads = Family::<OutcomeLabel, Counter>::default();
        registry.register(
            "state_reloads",
            "Reads of the state file after the first, by outcome (error: refused, failed or overdue; an unchanged file is not read)",
            reloads.clone(),
        );
        for outcome in [Reload::Ok, Reload::Error] {
            // present from the start, at 0
            let _ = reloads.get_or_create(&[("outcome", outcome.label())]);
        }
        registry.register_collector(Box::new(ResponderCollector { stats, status }));
        Self { registry, reloads }
    }

    /// Counts one read of the state file.
    pub fn reloaded(&self, outcome: Reload) {
        self.reloads
            .get_or_create(&[("outcome", outcome.label())])
            .inc();
    }

    /// The exposition text.
    pub fn encode(&self) -> Result<String, fmt::Error> {
        let mut body = String::with_capacity(4096);
        prometheus_text::encode(&mut body, &self.registry)?;
        Ok(body)
    }
}

/// Encodes the responder's counters and the served status at each scrape.
#[derive(Debug)]
pub struct ResponderCollector {
    stats: StatsReader,
    status: Arc<StatusCell>,
}

/// Encodes one counter without labels.
fn counter(e: &mut DescriptorEncoder<'_>, name: &str, help: &str, v: u64) -> fmt::Result {
    let c = ConstCounter::new(v);
    c.encode(e.encode_descriptor(name, help, None, c.metric_type())?)
}

/// Encodes one gauge without labels.
fn gauge(e: &mut DescriptorEncoder<'_>, name: &str, help: &str, v: i64) -> fmt::Result {
    let g = ConstGauge::new(v);
    g.encode(e.encode_descriptor(name, help, None, g.metric_type())?)
}

impl Collector for ResponderCollector {
    fn encode(&self, mut e: DescriptorEncoder<'_>) -> fmt::Result {
        let s: Stats = self.stats.stats();
        {
            let mut family = e.encode_descriptor(
                "answers",
                "Requests answered, by protocol and type of answer (one per request, however many datagrams).",
                None,
                prometheus_client::metrics::MetricType::Counter,
            )?;
            for (protocol, kind, n) in s.breakdown.answer_counts() {
                let labels = [("protocol", protocol.name()), ("type", kind.name())];
                ConstCounter::new(n).encode(family.encode_family(&labels)?)?;
            }
        }
        {
            let mut family = e.encode_descriptor(
                "dropped",
                "Datagrams received and not answered, by reason.",
                None,
                prometheus_client::metrics::MetricType::Counter,
            )?;
            for (reason, n) in s.breakdown.drop_counts() {
                let labels = [("reason", reason.name())];
                ConstCounter::new(n).encode(family.encode_family(&labels)?)?;
            }
        }
        counter(
            &mut e,
            "received_datagrams",
            "Datagrams received.",
            s.received,
        )?;
        counter(
            &mut e,
            "received_bytes",
            "Bytes received (UDP payload).",
            s.received_bytes,
        )?;
        counter(
            &mut e,
            "sent_datagrams",
            "Datagrams sent in answer.",
            s.sent,
        )?;
        counter(
            &mut e,
            "sent_bytes",
            "Bytes sent in answer (UDP payload).",
            s.sent_bytes,
        )?;
        if let Some(drops) = self.stats.kernel_drops() {
            counter(
                &mut e,
                "kernel_dropped_datagrams",
                "Datagrams the kernel dropped at the responder's sockets (receive buffer full; --recv-buffer).",
                drops,
            )?;
        }
        let status = self.status.peek();
        gauge(
            &mut e,
            "players",
            "Players in the served status.",
            i64::from(status.player_count().unwrap_or(0)),
        )?;
        if let Some(max) = status.slot_max {
            gauge(
                &mut e,
                "slots",
                "Player slots in the served status (slot_max).",
                i64::from(max),
            )?;
        }
        Ok(())
    }
}

/// The router: `GET /metrics` and nothing else.
pub fn router(metrics: Arc<Metrics>) -> Router {
    Router::new()
        .route("/metrics", get(scrape))
        .with_state(metrics)
}

async fn scrape(axum::extract::State(metrics): axum::extract::State<Arc<Metrics>>) -> Response {
    match metrics.encode() {
        Ok(body) => (
            [(header::CONTENT_TYPE, prometheus_text::CONTENT_TYPE)],
            body,
        )
            .into_response(),
        Err(_) => (
            StatusCode::INTERNAL_SERVER_ERROR,
            "cannot encode the metrics\n",
        )
            .into_response(),
    }
}

/// Binds `addr` for the metrics endpoint (TCP), so that a taken port is an error at
/// start-up.
pub async fn bind(addr: SocketAddr) -> Result<tokio::net::TcpListener> {
    tokio::net::TcpListener::bind(addr)
        .await
        .with_context(|| format!("--metrics: cannot listen on {addr}"))
}

/// Serves `GET /metrics` on `listener` until `stop` resolves.
pub async fn serve(
    listener: tokio::net::TcpListener,
    metrics: Arc<Metrics>,
    stop: impl std::future::Future<Output = ()> + Send + 'static,
) -> std::io::Result<()> {
    axum::serve(listener, router(metrics))
        .with_graceful_shutdown(stop)
        .await
}
