//! The HTTP side: the JSON API (`/api/v1/…`, described by `/api/v1/openapi.json`), the
//! page at `/`, and `/metrics`. Answers carry an ETag (the list's version and the
//! query), are gzip-compressed when the client accepts it, and allow any origin (CORS)
//! for GET since they are public. The write API (`POST /api/v1/servers`, `DELETE
//! /api/v1/servers/{addr}`: servers an operator adds) is off without the config's
//! `api_token`, takes only `Authorization: Bearer TOKEN` (compared in constant time) and
//! is not open to other origins; wrong tokens are limited per address (429), logged once
//! a minute per address and counted ([`ogp_proto::master::auth`]).

use std::collections::HashMap;
use std::future::Future;
use std::hash::{DefaultHasher, Hash, Hasher};
use std::net::SocketAddr;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use axum::extract::{MatchedPath, Path, RawQuery, Request, State};
use axum::http::{header, HeaderMap, HeaderValue, StatusCode};
use axum::middleware::{self, Next};
use axum::response::{IntoResponse, Response};
use axum::routing::get;
use axum::Extension;
use axum::Router;
use hyper::server::conn::http1;
use hyper_util::rt::{TokioIo, TokioTimer};
use hyper_util::server::graceful::GracefulShutdown;
use hyper_util::service::TowerToHyperService;
use ogp_proto::master::addr::canonical;
use ogp_proto::master::auth::{WrongTokenAnswer, WrongTokenLimits, WrongTokens};
use ogp_proto::master::connections::{ConnectionLimits, Connections};
use serde::Deserialize;
use serde_json::{json, Value};
use tokio::net::TcpListener;
use tokio::sync::watch;
use tokio::task::JoinSet;
use tokio_io_timeout::TimeoutStream;
use tower_http::compression::CompressionLayer;
use tower_http::cors::{Any, CorsLayer};
use tower_http::limit::RequestBodyLimitLayer;

use crate::list::{rfc3339, Cursor, Query, Sort};
use crate::metrics::{label, labels};
use crate::slots::{accept, lock, open_gauge, Permit, Table, Tracker};
use crate::Shared;

/// Most items per page (with `view=summary`: [`MAX_SUMMARY_LIMIT`]).
pub const MAX_LIMIT: usize = 1000;
/// Most items per page without statuses.
pub const MAX_SUMMARY_LIMIT: usize = 5000;
/// Most bytes of a listing page's JSON (before compression): a page stops adding servers
/// before it would pass this bound (it holds one server at least) and names the next
/// one in `next`. It is also what a page reserves of `http_answer_bytes` while it is
/// made.
pub const MAX_PAGE_BYTES: usize = 1 << 20;
/// Statuses read from the database first while a page is made.
const STATUS_CHUNK: usize = 16;
/// Most statuses read at a time: each chunk after the first is as many as the room left
/// in the page holds at the size of the longest server so far (at least
/// [`STATUS_CHUNK`]), so a page of small statuses is two reads (a page of 100 was seven,
/// a round trip each), and one of big statuses still stops at its bound after reading
/// a chunk: what a page holds beyond [`MAX_PAGE_BYTES`] while it is made.
const MAX_STATUS_CHUNK: usize = 128;

const OPENAPI: &str = include_str!("../openapi.json");

type Shr = Arc<Shared>;

/// Serves HTTP on `listener` until `stop`.
///
/// Each connection is driven by hyper's HTTP/1 connection builder (axum's `serve` sets
/// none of its limits): the request head must arrive within
/// `http_header_timeout_ms` (so an idle or half-sent connection is closed), is read into
/// at most `http_max_header_bytes`, a pending answer that the client stops reading is
/// dropped after `http_idle_timeout_ms` without progress, and a body over
/// `http_max_body_bytes` is refused with 413. Which connections are kept is decided by
/// [`ogp_proto::master::connections`]: a new one is always taken, and when it finds its
/// source's, its prefix's or the total cap full, the connection of that group that has
/// gone longest without a request is closed, idle ones first: a connection is idle once
/// its answer is written to the socket and no byte of a next request has come
/// ([`Watched`] tells). Big answers reserve their bytes from one budget for the process
/// (`http_answer_bytes`: a listing page [`MAX_PAGE_BYTES`] while it is made, then its
/// size), given back once written or closed, and must be written at
/// `http_answer_rate`; a connection that is not is closed.
pub(crate) async fn serve(shared: Shr, listener: TcpListener, mut stop: watch::Receiver<bool>) {
    let mut secret = [0u8; 16];
    let _ = getrandom::fill(&mut secret);
    let wrong_tokens = Arc::new(Mutex::new(WrongTokens::new(
        WrongTokenLimits::default(),
        secret,
        Instant::now(),
    )));
    let app = router(shared.clone(), wrong_tokens.clone());
    let config = &shared.config;
    let write_timeout = Duration::from_millis(config.http_idle_timeout_ms.max(1));
    let limits = ConnectionLimits::new(
        config.http_max_connections_per_ip,
        config.http_max_connections_per_prefix,
        config.http_max_connections,
    )
    .with_answer_bytes(config.http_answer_bytes)
    .with_answer_rate(write_timeout, config.http_answer_rate);
    let table = Arc::new(Mutex::new(Table {
        connections: Connections::new(limits),
        closers: HashMap::new(),
    }));
    let mut builder = http1::Builder::new();
    builder
        .timer(TokioTimer::new())
        .header_read_timeout(Duration::from_millis(config.http_header_timeout_ms.max(1)))
        .max_buf_size(config.http_max_header_bytes.max(8192))
        .keep_alive(true);
    let graceful = GracefulShutdown::new();
    let mut connections = JoinSet::new();
    let mut last_error_log: Option<Instant> = None;
    let mut sweep = tokio::time::interval(Duration::from_secs(5));
    let mut overdue = tokio::time::interval(Duration::from_millis(250));
    overdue.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    loop {
        let (stream, peer) = tokio::select! {
            accepted = accept(&listener, "HTTP", &mut last_error_log) => match accepted {
                Some(x) => x,
                None => continue,
            },
            _ = stop.changed() => break,
            _ = sweep.tick() => {
                while connections.try_join_next().is_some() {}
                let reports = lock(&wrong_tokens).sweep(Instant::now());
                for r in reports {
                    tracing::warn!("{r}");
                }
                continue;
            }
            _ = overdue.tick() => {
                close_overdue(&table, &shared);
                continue;
            }
        };
        // the tasks of connections that ended, without a turn of the loop each: under a
        // flood of newcomers, displaced connections end as fast as others come
        while connections.try_join_next().is_some() {}
        let (permit, displaced) = Permit::take(&table, peer.ip(), &shared.metrics.http_connections);
        if let Some(cap) = displaced {
            shared
                .metrics
                .http_displaced
                .get_or_create(&label("cap", cap.as_str()))
                .inc();
        }
        let _ = stream.set_nodelay(true);
        let mut io = TimeoutStream::new(stream);
        io.set_write_timeout(Some(write_timeout));
        let io = TokioIo::new(Watched {
            inner: Box::pin(io),
            tracker: permit.tracker(),
        });
        let service = tracked_service(app.clone(), permit.tracker(), peer);
        let conn = builder.serve_connection(io, service);
        let conn = graceful.watch(conn);
        let closed = permit.closed;
        let tracker = permit.tracker;
        connections.spawn(async move {
            // errors are the client's (timeouts, resets, bad requests): nothing to log.
            // A displaced connection's closer is dropped: the connection is dropped, and
            // its socket closed, at once.
            tokio::select! {
                _ = conn => {}
                _ = closed => {}
            }
            tracker.release();
        });
    }
    drop(listener);
    // answers in progress may finish; idle connections close at once
    tokio::select! {
        () = graceful.shutdown() => {}
        () = tokio::time::sleep(Duration::from_secs(3)) => {}
    }
    // what is left is aborted when `connections` is dropped
}

/// Closes the connections whose big answers are not written at the least rate
/// (`http_answer_rate`), counted as displaced by `answer_rate`.
fn close_overdue(table: &Mutex<Table>, shared: &Shared) {
    let mut t = lock(table);
    let now = Instant::now();
    let mut n = 0u64;
    while let Some(id) = t.connections.overdue(now) {
        // dropping the closer ends the connection's task, which drops its answer
        t.closers.remove(&id);
        n += 1;
    }
    if n > 0 {
        shared
            .metrics
            .http_displaced
            .get_or_create(&label("cap", "answer_rate"))
            .inc_by(n);
        shared
            .metrics
            .http_connections
            .set(open_gauge(t.connections.open()));
    }
}

/// A connection's socket as hyper reads and writes it, telling the table when bytes come
/// from the client and when everything hyper wrote is on the socket (hyper flushes only
/// once its buffer is written): so a connection is idle once its answer is written, not
/// once hyper has buffered it, and no longer idle at the first byte of a next request.
struct Watched<T> {
    inner: std::pin::Pin<Box<T>>,
    tracker: Tracker,
}

impl<T: tokio::io::AsyncRead> tokio::io::AsyncRead for Watched<T> {
    fn poll_read(
        mut self: std::pin::Pin<&mut Self>,
        cx: &mut std::task::Context<'_>,
        buf: &mut tokio::io::ReadBuf<'_>,
    ) -> std::task::Poll<std::io::Result<()>> {
        let before = buf.filled().len();
        let r = self.inner.as_mut().poll_read(cx, buf);
        if matches!(r, std::task::Poll::Ready(Ok(()))) && buf.filled().len() > before {
            self.tracker.received();
        }
        r
    }
}

impl<T: tokio::io::AsyncWrite> tokio::io::AsyncWrite for Watched<T> {
    fn poll_write(
        mut self: std::pin::Pin<&mut Self>,
        cx: &mut std::task::Context<'_>,
        buf: &[u8],
    ) -> std::task::Poll<std::io::Result<usize>> {
        self.inner.as_mut().poll_write(cx, buf)
    }

    fn poll_write_vectored(
        mut self: std::pin::Pin<&mut Self>,
        cx: &mut std::task::Context<'_>,
        bufs: &[std::io::IoSlice<'_>],
    ) -> std::task::Poll<std::io::Result<usize>> {
        self.inner.as_mut().poll_write_vectored(cx, bufs)
    }

    fn is_write_vectored(&self) -> bool {
        self.inner.is_write_vectored()
    }

    fn poll_flush(
        mut self: std::pin::Pin<&mut Self>,
        cx: &mut std::task::Context<'_>,
    ) -> std::task::Poll<std::io::Result<()>> {
        let r = self.inner.as_mut().poll_flush(cx);
        if matches!(r, std::task::Poll::Ready(Ok(()))) {
            self.tracker.flushed();
        }
        r
    }

    fn poll_shutdown(
        mut self: std::pin::Pin<&mut Self>,
        cx: &mut std::task::Context<'_>,
    ) -> std::task::Poll<std::io::Result<()>> {
        self.inner.as_mut().poll_shutdown(cx)
    }
}

/// The router as one connection's hyper service: each request is reported to the table
/// when its head is in and again when its answer's body is made (or dropped), and carries
/// the peer's address for the handlers.
fn tracked_service(
    app: Router,
    tracker: Tracker,
    peer: SocketAddr,
) -> impl hyper::service::Service<
    Request<hyper::body::Incoming>,
    Response = Response<TrackedBody>,
    Error = std::convert::Infallible,
    Future = impl Future<Output = Result<Response<TrackedBody>, std::convert::Infallible>> + Send,
> + Clone {
    let inner = TowerToHyperService::new(app);
    hyper::service::service_fn(move |mut req: Request<hyper::body::Incoming>| {
        tracker.request();
        req.extensions_mut().insert(Peer {
            addr: peer,
            tracker: tracker.clone(),
        });
        let answer = hyper::service::Service::call(&inner, req);
        let tracker = tracker.clone();
        async move {
            let res = answer.await?;
            Ok(res.map(|inner| TrackedBody {
                inner,
                answering: Some(Answering(tracker)),
            }))
        }
    })
}

/// The connection a request came on: its peer, and its place in the table (for the
/// handlers that hold a connection on purpose).
#[derive(Clone)]
struct Peer {
    addr: SocketAddr,
    tracker: Tracker,
}

/// Marks its connection's answer made when dropped (hyper drops an answer's body once it
/// has taken all of it into its buffer, or when the connection ends); [`Watched`] tells
/// when it is written.
struct Answering(Tracker);

impl Drop for Answering {
    fn drop(&mut self) {
        self.0.answered();
    }
}

/// An answer's body that reports its end to the connection table.
struct TrackedBody {
    inner: axum::body::Body,
    answering: Option<Answering>,
}

impl axum::body::HttpBody for TrackedBody {
    type Data = axum::body::Bytes;
    type Error = axum::Error;

    fn poll_frame(
        mut self: std::pin::Pin<&mut Self>,
        cx: &mut std::task::Context<'_>,
    ) -> std::task::Poll<Option<Result<hyper::body::Frame<Self::Data>, Self::Error>>> {
        let r = std::pin::Pin::new(&mut self.inner).poll_frame(cx);
        if matches!(r, std::task::Poll::Ready(None | Some(Err(_)))) {
            self.answering = None;
        }
        r
    }

    fn is_end_stream(&self) -> bool {
        self.inner.is_end_stream()
    }

    fn size_hint(&self) -> hyper::body::SizeHint {
        self.inner.size_hint()
    }
}

fn router(shared: Shr, wrong_tokens: Arc<Mutex<WrongTokens>>) -> Router {
    let cors = CorsLayer::new()
        .allow_origin(Any)
        .allow_methods([axum::http::Method::GET])
        .expose_headers([header::ETAG]);
    Router::new()
        .route("/api/v1/servers", get(servers).post(add_server))
        .route("/api/v1/servers/{addr}", get(server).delete(remove_server))
        .route("/api/v1/stats", get(stats))
        .route(
            "/api/v1/openapi.json",
            get(|| async { ([(header::CONTENT_TYPE, "application/json")], OPENAPI) }),
        )
        .route("/metrics", get(metrics))
        .route(
            ogp_proto::master::ddnet_register::PATH,
            axum::routing::post(ddnet_register),
        )
        .merge(crate::assets::routes())
        .layer(axum::Extension(wrong_tokens))
        .layer(middleware::from_fn_with_state(shared.clone(), count))
        .layer(CompressionLayer::new().gzip(true))
        .layer(RequestBodyLimitLayer::new(
            shared.config.http_max_body_bytes,
        ))
        .layer(cors)
        .with_state(shared)
}

async fn count(
    State(shared): State<Shr>,
    matched: Option<MatchedPath>,
    req: Request,
    next: Next,
) -> Response {
    let route = matched.map_or_else(|| "other".to_owned(), |m| m.as_str().to_owned());
    let res = next.run(req).await;
    shared
        .metrics
        .http_requests
        .get_or_create(&labels("route", &route, "code", res.status().as_str()))
        .inc();
    res
}

fn error(code: StatusCode, message: &str) -> Response {
    (
        code,
        [(header::CONTENT_TYPE, "application/json")],
        json_text(&json!({ "error": message })),
    )
        .into_response()
}

/// `v` as JSON by the one writer of every JSON output ([`ogp_proto::result::to_json`]):
/// what acts on a terminal (C0, DEL, C1, bidi controls, U+2028/9) in a server's name or
/// rules is escaped, so `curl` of the API cannot steer the terminal that shows it.
fn json_text<T: serde::Serialize + ?Sized>(v: &T) -> String {
    ogp_proto::result::to_json(v).unwrap_or_else(|_| "null".into())
}

fn json_response(body: String, etag: Option<String>) -> Response {
    let mut r = ([(header::CONTENT_TYPE, "application/json")], body).into_response();
    if let Some(e) = etag.and_then(|e| HeaderValue::from_str(&e).ok()) {
        r.headers_mut().insert(header::ETAG, e);
        r.headers_mut()
            .insert(header::CACHE_CONTROL, HeaderValue::from_static("no-cache"));
    }
    r
}

fn etag_for(version: u64, what: &str) -> String {
    let mut h = DefaultHasher::new();
    what.hash(&mut h);
    format!("W/\"{version:x}-{:x}\"", h.finish())
}

fn not_modified(headers: &HeaderMap, etag: &str) -> bool {
    headers
        .get(header::IF_NONE_MATCH)
        .and_then(|v| v.to_str().ok())
        .is_some_and(|v| v.split(',').any(|t| t.trim() == etag || t.trim() == "*"))
}

#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
struct ListParams {
    game: Option<String>,
    protocol: Option<String>,
    map: Option<String>,
    name: Option<String>,
    has_players: Option<String>,
    not_full: Option<String>,
    password: Option<String>,
    up: Option<String>,
    cursor: Option<String>,
    limit: Option<String>,
    view: Option<String>,
    sort: Option<String>,
}

fn flag(name: &str, v: Option<&str>) -> Result<Option<bool>, String> {
    match v {
        None | Some("") => Ok(None),
        Some("true" | "1" | "yes") => Ok(Some(true)),
        Some("false" | "0" | "no") => Ok(Some(false)),
        Some(other) => Err(format!("{name}: expected true or false, got {other:?}")),
    }
}

fn nonempty(v: Option<String>) -> Option<String> {
    v.filter(|s| !s.is_empty())
}

/// What a listing request asks for.
struct Listing {
    q: Query,
    sort: Sort,
    cursor: Option<Cursor>,
    limit: usize,
    summary: bool,
}

fn parse_params(raw: Option<&str>) -> Result<Listing, String> {
    let p: ListParams = serde_urlencoded_like(raw.unwrap_or(""))?;
    let protocol = match nonempty(p.protocol) {
        Some(s) => Some(
            s.parse()
                .map_err(|_| format!("protocol: unknown protocol {s:?}"))?,
        ),
        None => None,
    };
    let summary = match p.view.as_deref() {
        None | Some("" | "full") => false,
        Some("summary") => true,
        Some(v) => return Err(format!("view: expected summary or full, got {v:?}")),
    };
    let max = if summary {
        MAX_SUMMARY_LIMIT
    } else {
        MAX_LIMIT
    };
    let limit = match nonempty(p.limit) {
        Some(l) => l
            .parse::<usize>()
            .map_err(|_| format!("limit: not a number: {l:?}"))?
            .clamp(1, max),
        None => 100,
    };
    let sort = match p.sort.as_deref() {
        None | Some("" | "addr") => Sort::Addr,
        Some("players") => Sort::Players,
        Some(v) => return Err(format!("sort: expected addr or players, got {v:?}")),
    };
    let cursor = match nonempty(p.cursor) {
        Some(c) => Some(Cursor::parse(sort, &c).ok_or_else(|| match sort {
            Sort::Addr => format!("cursor: not an address: {c:?}"),
            Sort::Players => format!("cursor: not PLAYERS,ADDRESS: {c:?}"),
        })?),
        None => None,
    };
    let q = Query {
        game: nonempty(p.game),
        protocol,
        map: nonempty(p.map),
        name: nonempty(p.name).map(|n| n.to_lowercase()),
        has_players: flag("has_players", p.has_players.as_deref())?.unwrap_or(false),
        not_full: flag("not_full", p.not_full.as_deref())?.unwrap_or(false),
        password: flag("password", p.password.as_deref())?,
        up: flag("up", p.up.as_deref())?,
    };
    Ok(Listing {
        q,
        sort,
        cursor,
        limit,
        summary,
    })
}

/// Query-string parsing through axum's own deserializer.
fn serde_urlencoded_like(raw: &str) -> Result<ListParams, String> {
    let uri: axum::http::Uri = format!("/?{raw}")
        .parse()
        .map_err(|_| "bad query string".to_owned())?;
    axum::extract::Query::<ListParams>::try_from_uri(&uri)
        .map(|q| q.0)
        .map_err(|e| e.body_text())
}

/// Reserves `bytes` of `http_answer_bytes` for `peer`'s answer, waiting up to a second
/// for answers being made to give theirs; 503 with `Retry-After: 1` when they do not.
async fn reserve(shared: &Shared, peer: &Peer, bytes: usize) -> Result<(), Response> {
    for _ in 0..20 {
        let (granted, displaced) = peer.tracker.reserve(bytes);
        if displaced > 0 {
            shared
                .metrics
                .http_displaced
                .get_or_create(&label("cap", "answer_bytes"))
                .inc_by(displaced as u64);
        }
        if granted {
            return Ok(());
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    let mut r = error(
        StatusCode::SERVICE_UNAVAILABLE,
        "too many big answers being sent: try again later",
    );
    r.headers_mut()
        .insert(header::RETRY_AFTER, HeaderValue::from_static("1"));
    Err(r)
}

async fn servers(
    State(shared): State<Shr>,
    Extension(peer): Extension<Peer>,
    RawQuery(raw): RawQuery,
    headers: HeaderMap,
) -> Response {
    let Listing {
        q,
        sort,
        cursor,
        limit,
        summary,
    } = match parse_params(raw.as_deref()) {
        Ok(x) => x,
        Err(e) => return error(StatusCode::BAD_REQUEST, &e),
    };
    // a first page the cache has is a lookup and a copy, answered here; any other page
    // may be a pass over the whole list: off the async workers (a thread of the
    // blocking pool for each of 50 requests at once, on 2 cores, was their p99). The
    // lock only if it is free now: this worker does not wait for a merge holding it
    // (such a request takes the pool).
    let asked = Instant::now();
    // `None`: the lock is taken; `Some(None)`: the cache lacks the page
    let look = || {
        shared
            .list
            .try_read()
            .ok()
            .map(|l| l.cached_first_page(&q, sort, limit))
    };
    let from_pool = || {
        let shared = shared.clone();
        let q = q.clone();
        tokio::task::spawn_blocking(move || {
            shared
                .list
                .read()
                .map(|l| l.page(&q, sort, cursor, limit))
                .ok()
        })
    };
    let first = |source| {
        shared
            .metrics
            .first_pages
            .get_or_create(&label("source", source))
            .inc();
    };
    let made = match cursor.is_none().then(look) {
        Some(Some(Some(hit))) => {
            first("cache");
            Ok(Some(hit))
        }
        Some(Some(None)) => {
            // a first page the cache lacks: one request of those asking for it at once
            // takes the pool's thread that makes it; the others wait here, not each on
            // a thread of its own (50 clients asking for a new query: 50 threads, on 2
            // cores, for one pass), then find it in the cache
            let gate = shared.first_pages.gate(&q, sort, limit);
            let _one = gate.lock().await;
            match look() {
                Some(Some(hit)) => {
                    first("cache");
                    Ok(Some(hit))
                }
                _ => {
                    first("pool");
                    from_pool().await
                }
            }
        }
        // the lock taken (by a merge of a few hundred rows)
        Some(None) => {
            first("pool");
            from_pool().await
        }
        // a later page
        None => from_pool().await,
    };
    shared.metrics.page("list", asked);
    let page = match made {
        Ok(Some((page, fresh))) => {
            if fresh == crate::list::Freshness::Stale {
                // made again for the next requests, not this one
                let shared = shared.clone();
                tokio::task::spawn_blocking(move || {
                    if let Ok(l) = shared.list.read() {
                        l.refresh_first_page(&q, sort, limit);
                    }
                });
            }
            page
        }
        _ => return error(StatusCode::INTERNAL_SERVER_ERROR, "list unavailable"),
    };
    let etag = etag_for(page.version, raw.as_deref().unwrap_or(""));
    if not_modified(&headers, &etag) {
        return StatusCode::NOT_MODIFIED.into_response();
    }
    if cursor.is_some() {
        return match page_body(&shared, &peer, &page, sort, summary).await {
            Ok(b) => bytes_response(b, etag),
            Err(r) => r,
        };
    }
    // a first page's answer, made once for its version by the first request that needs
    // it, while the others wait for it
    let key = raw.unwrap_or_default();
    let mine = std::sync::atomic::AtomicBool::new(false);
    let made = shared
        .first_bodies
        .get_or_make(&key, page.version, || {
            mine.store(true, std::sync::atomic::Ordering::Relaxed);
            async {
                let t = Instant::now();
                let b = page_body(&shared, &peer, &page, sort, summary).await;
                shared.metrics.page("body", t);
                b
            }
        })
        .await;
    match made {
        Ok(b) => {
            // the maker reserved its bytes; the others reserve theirs now
            if !mine.load(std::sync::atomic::Ordering::Relaxed) {
                if let Err(r) = reserve(&shared, &peer, b.len()).await {
                    return r;
                }
            }
            bytes_response(b, etag)
        }
        Err(r) => r,
    }
}

/// A listing page's answer, with the statuses of the full view read from the database;
/// its bytes reserved for `peer`.
async fn page_body(
    shared: &Shared,
    peer: &Peer,
    page: &crate::list::Page,
    sort: Sort,
    summary: bool,
) -> Result<axum::body::Bytes, Response> {
    reserve(shared, peer, MAX_PAGE_BYTES).await?;
    let mut body = String::with_capacity(
        MAX_PAGE_BYTES.min(256 + page.entries.len() * if summary { 256 } else { 4096 }),
    );
    body.push_str("{\"servers\":[");
    let mut next = page.next.clone();
    let mut item_text = String::new();
    // the cursor of the last server on the page, in the page's order
    let mut last_cursor = String::new();
    let mut rest = &page.entries[..];
    let mut chunk_len = STATUS_CHUNK;
    // the longest server's text so far
    let mut longest = 1;
    let mut first = true;
    'chunks: while !rest.is_empty() {
        let (chunk, after) = rest.split_at(chunk_len.min(rest.len()));
        rest = after;
        // Statuses are spliced in as the database holds them (valid JSON written by
        // us), without parsing and writing them again; read a chunk at a time, so that
        // a page of big statuses stops at its bound without reading the rest. Those kept
        // from a row at least as new as the list's entry are not read again.
        let mut statuses = HashMap::new();
        if !summary {
            let read = read_statuses(&shared.statuses, &shared.store, &shared.metrics, chunk);
            match read.await {
                Ok(s) => statuses = s,
                Err(e) => {
                    tracing::warn!("reading statuses: {e:#}");
                    return Err(error(
                        StatusCode::SERVICE_UNAVAILABLE,
                        "database unavailable",
                    ));
                }
            }
        }
        for e in chunk {
            let item = e.item();
            let json = json_text(&item);
            item_text.clear();
            match json.strip_suffix('}') {
                Some(open) if !summary => {
                    item_text.push_str(open);
                    item_text.push_str(",\"status\":");
                    item_text.push_str(statuses.get(&e.addr).map_or("null", |t| &**t));
                    item_text.push('}');
                }
                _ => item_text.push_str(&json),
            }
            if !first && body.len() + 1 + item_text.len() > MAX_PAGE_BYTES {
                // the page is full: the next one starts after the last server here
                next = Some(last_cursor.clone());
                break 'chunks;
            }
            if !first {
                body.push(',');
            }
            first = false;
            body.push_str(&item_text);
            longest = longest.max(item_text.len());
            last_cursor = match sort {
                Sort::Addr => item.addr,
                Sort::Players => format!("{},{}", item.players, item.addr),
            };
        }
        // the next chunk: as many servers as the room left holds at the longest's size
        // (small statuses: the rest of the page in one more read), at least STATUS_CHUNK
        chunk_len = (MAX_PAGE_BYTES.saturating_sub(body.len()) / longest)
            .clamp(STATUS_CHUNK, MAX_STATUS_CHUNK);
    }
    body.push_str("],\"next\":");
    body.push_str(&json_text(&next));
    body.push_str(",\"total\":");
    body.push_str(&page.total.to_string());
    body.push('}');
    peer.tracker.resize(body.len());
    Ok(axum::body::Bytes::from(body))
}

/// The statuses of `chunk`'s servers: those the status cache keeps from a row at least
/// as new as the list's entry, the others read from the database in one read (and
/// kept). A server without a status has none in the answer.
async fn read_statuses(
    cache: &crate::status_cache::StatusCache,
    store: &crate::store::Store,
    metrics: &crate::metrics::Metrics,
    chunk: &[crate::list::Listed],
) -> anyhow::Result<HashMap<SocketAddr, crate::status_cache::Text>> {
    let mut out = HashMap::with_capacity(chunk.len());
    let mut missing: HashMap<String, SocketAddr> = HashMap::new();
    for e in chunk {
        match cache.get(e.addr, e.entry.updated()) {
            Some(t) => {
                out.insert(e.addr, t);
            }
            None => {
                missing.insert(e.addr.to_string(), e.addr);
            }
        }
    }
    let counted = &metrics.status_cache;
    counted
        .get_or_create(&label("outcome", "hit"))
        .inc_by(out.len() as u64);
    counted
        .get_or_create(&label("outcome", "miss"))
        .inc_by(missing.len() as u64);
    if missing.is_empty() {
        return Ok(out);
    }
    let t = Instant::now();
    let rows = store.statuses(missing.keys().cloned().collect()).await?;
    metrics.db("statuses", t);
    for (text_addr, updated, text) in rows {
        let Some(addr) = missing.get(&text_addr) else {
            continue;
        };
        let text: crate::status_cache::Text = text.into();
        cache.put(*addr, updated, text.clone());
        out.insert(*addr, text);
    }
    Ok(out)
}

/// Most first pages' answers kept (emptied when full): at most 1 MiB each.
const FIRST_BODIES: usize = 64;

/// A first page's answer, made once.
type BodyCell = tokio::sync::OnceCell<axum::body::Bytes>;

/// Most first pages whose making is gated at once ([`FirstPages`]; emptied when full).
const FIRST_PAGES: usize = 1024;

/// One gate per first page (query, order and size) that the list's cache may lack: the
/// requests asking for it at once pass one at a time, so that the first makes it on
/// the blocking pool while the others wait asynchronously and then find it made.
#[derive(Default)]
pub(crate) struct FirstPages {
    gates: Mutex<HashMap<(Query, Sort, usize), Gate>>,
}

/// Passed by the requests for one first page one at a time ([`FirstPages`]).
type Gate = Arc<tokio::sync::Mutex<()>>;

impl FirstPages {
    fn gate(&self, q: &Query, sort: Sort, limit: usize) -> Gate {
        let mut gates = lock(&self.gates);
        if gates.len() >= FIRST_PAGES {
            gates.clear();
        }
        gates.entry((q.clone(), sort, limit)).or_default().clone()
    }
}

/// The answers to first pages, by query string, each made once for the list version of
/// the page it shows (single flight): the first request that needs it makes it, and
/// those that ask while it is made wait for it, rather than each making its own. (At a
/// million servers, 50 clients asking together for a full view each read a hundred
/// statuses from PostgreSQL whenever the list's page changed: p99 330–570 ms.)
#[derive(Default)]
pub(crate) struct FirstBodies {
    bodies: Mutex<HashMap<String, (u64, Arc<BodyCell>)>>,
    /// Answers made (or tried): what the single flight saves is counted here.
    made: std::sync::atomic::AtomicU64,
}

impl FirstBodies {
    /// The cell of `key`'s answer at `version`: the kept one, or a new one kept in place
    /// of an older version's (a request with a page older than the kept one's gets a
    /// cell of its own, kept nowhere).
    fn cell(&self, key: &str, version: u64) -> Arc<BodyCell> {
        let mut bodies = lock(&self.bodies);
        match bodies.get(key) {
            Some((v, cell)) if *v == version => return cell.clone(),
            Some((v, _)) if *v > version => return Arc::default(),
            Some(_) => {}
            None if bodies.len() >= FIRST_BODIES => bodies.clear(),
            None => {}
        }
        let cell: Arc<BodyCell> = Arc::default();
        bodies.insert(key.to_owned(), (version, cell.clone()));
        cell
    }

    /// `key`'s answer at `version`: the kept one, the one being made (waited for), or
    /// one `make` makes now. When `make` fails, its error is this request's answer and
    /// the next waiting request makes it.
    pub(crate) async fn get_or_make<E, F>(
        &self,
        key: &str,
        version: u64,
        make: impl FnOnce() -> F,
    ) -> Result<axum::body::Bytes, E>
    where
        F: Future<Output = Result<axum::body::Bytes, E>>,
    {
        self.cell(key, version)
            .get_or_try_init(|| {
                self.made.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                make()
            })
            .await
            .cloned()
    }

    /// Answers made (or tried) so far.
    #[cfg(test)]
    pub(crate) fn made(&self) -> u64 {
        self.made.load(std::sync::atomic::Ordering::Relaxed)
    }
}

fn bytes_response(body: axum::body::Bytes, etag: String) -> Response {
    let mut r = ([(header::CONTENT_TYPE, "application/json")], body).into_response();
    if let Ok(e) = HeaderValue::from_str(&etag) {
        r.headers_mut().insert(header::ETAG, e);
        r.headers_mut()
            .insert(header::CACHE_CONTROL, HeaderValue::from_static("no-cache"));
    }
    r
}

async fn server(
    State(shared): State<Shr>,
    Extension(peer): Extension<Peer>,
    Path(addr): Path<String>,
    headers: HeaderMap,
) -> Response {
    let Ok(a) = addr.parse::<SocketAddr>().map(canonical) else {
        return error(
            StatusCode::BAD_REQUEST,
            "not an address (IP:PORT, [IPv6]:PORT)",
        );
    };
    let (entry, version) = match shared.list.read() {
        Ok(l) => (l.listed(a), l.version),
        Err(_) => return error(StatusCode::INTERNAL_SERVER_ERROR, "list unavailable"),
    };
    let Some(entry) = entry else {
        return error(StatusCode::NOT_FOUND, "no such server in the list");
    };
    let etag = etag_for(version, &addr);
    if not_modified(&headers, &etag) {
        return StatusCode::NOT_MODIFIED.into_response();
    }
    let key = a.to_string();
    let (status, history) = match tokio::try_join!(
        shared.store.statuses(vec![key.clone()]),
        shared.store.history(key)
    ) {
        Ok(x) => x,
        Err(e) => {
            tracing::warn!("reading a server: {e:#}");
            return error(StatusCode::SERVICE_UNAVAILABLE, "database unavailable");
        }
    };
    let mut v = serde_json::to_value(entry.item()).unwrap_or(Value::Null);
    if let Value::Object(o) = &mut v {
        let status = status
            .into_iter()
            .next()
            .and_then(|(_, _, s)| serde_json::from_str(&s).ok())
            .unwrap_or(Value::Null);
        o.insert("status".into(), status);
        let points: Vec<Value> = history
            .into_iter()
            .filter_map(|(t, n)| Some(json!({ "t": rfc3339(t)?, "players": n })))
            .collect();
        o.insert("history".into(), Value::Array(points));
    }
    let text = json_text(&v);
    drop(v);
    if let Err(r) = reserve(&shared, &peer, text.len()).await {
        return r;
    }
    json_response(text, Some(etag))
}

/// How long a wrong token over its address's budget waits for its 429 (the
/// `Retry-After`, at most 2 s).
fn too_many_delay(retry_after_secs: u32) -> Duration {
    Duration::from_secs(u64::from(retry_after_secs.min(2)))
}

/// The write API's gate: off (403) without `api_token` in the config; the right bearer
/// token (compared in constant time, before anything else) always passes; a wrong or
/// missing one gets 401, or, once its address is over its budget of wrong tokens
/// ([`ogp_proto::master::auth`]), 429 with `Retry-After` after that long and the
/// connection closed, so that one address gets at most about one answer a second per
/// connection it may hold. While it waits, the connection ranks with idle ones: the
/// first to be displaced when others need room. Wrong tokens are logged at most once a
/// minute per address and counted. `None` when the request may go on.
async fn refusal(
    shared: &Shared,
    guard: &Mutex<WrongTokens>,
    peer: &Peer,
    headers: &HeaderMap,
) -> Option<Response> {
    let Some(token) = shared.config.api_token.as_deref() else {
        return Some(error(
            StatusCode::FORBIDDEN,
            "the write API is off: the master's config has no api_token",
        ));
    };
    let given = headers
        .get(header::AUTHORIZATION)
        .map(HeaderValue::as_bytes);
    if crate::added::authorized(given, token) {
        return None;
    }
    let (answer, report) = lock(guard).wrong(Instant::now(), peer.addr.ip());
    if let Some(r) = report {
        tracing::warn!("{r}");
    }
    shared
        .metrics
        .http_wrong_tokens
        .get_or_create(&label("outcome", answer.as_str()))
        .inc();
    let r = match answer {
        WrongTokenAnswer::TooMany { retry_after_secs } => {
            peer.tracker.hold();
            tokio::time::sleep(too_many_delay(retry_after_secs)).await;
            let mut r = error(
                StatusCode::TOO_MANY_REQUESTS,
                "too many wrong bearer tokens from this address: try again later",
            );
            let h = r.headers_mut();
            h.insert(header::RETRY_AFTER, HeaderValue::from(retry_after_secs));
            // each further guess costs a new connection
            h.insert(header::CONNECTION, HeaderValue::from_static("close"));
            r
        }
        _ => {
            let mut r = error(
                StatusCode::UNAUTHORIZED,
                "a bearer token is needed: Authorization: Bearer TOKEN (the config's api_token)",
            );
            r.headers_mut()
                .insert(header::WWW_AUTHENTICATE, HeaderValue::from_static("Bearer"));
            r
        }
    };
    Some(r)
}

/// `POST /api/v1/servers`: adds a server to poll (JSON `{"addr", "protocol"}`); it is
/// listed after its first good poll.
async fn add_server(
    State(shared): State<Shr>,
    Extension(guard): Extension<Arc<Mutex<WrongTokens>>>,
    Extension(peer): Extension<Peer>,
    headers: HeaderMap,
    req: Request,
) -> Response {
    if let Some(r) = refusal(&shared, &guard, &peer, &headers).await {
        return r;
    }
    let Ok(body) = axum::body::to_bytes(req.into_body(), crate::added::MAX_BODY_BYTES).await else {
        return error(
            StatusCode::PAYLOAD_TOO_LARGE,
            &format!("body: longer than {} bytes", crate::added::MAX_BODY_BYTES),
        );
    };
    let added = match crate::added::parse_body(&body, shared.config.allow_private) {
        Ok(a) => a,
        Err(e) => return error(StatusCode::BAD_REQUEST, &e),
    };
    let _writing = shared.writing.lock().await;
    let existing = match shared.store.added_servers().await {
        Ok(x) => x,
        Err(e) => {
            tracing::warn!("reading the added servers: {e:#}");
            return error(StatusCode::SERVICE_UNAVAILABLE, "database unavailable");
        }
    };
    let key = added.addr.to_string();
    let body = |state: &str| {
        json_text(&json!({ "addr": key, "protocol": added.protocol.name(), "added": state }))
    };
    match existing
        .iter()
        .find(|(a, _)| *a == key)
        .map(|(_, s)| s.as_str())
    {
        Some(crate::store::SOURCE_CONFIG) => {
            return error(
                StatusCode::CONFLICT,
                "this server is added in the master's config file",
            )
        }
        Some(_) => {}
        None => {
            let api = existing
                .iter()
                .filter(|(_, s)| s == crate::store::SOURCE_API)
                .count();
            if api >= shared.config.max_added_servers {
                return error(
                    StatusCode::CONFLICT,
                    &format!(
                        "max_added_servers ({}) reached: remove one first",
                        shared.config.max_added_servers
                    ),
                );
            }
        }
    }
    let new = existing.iter().all(|(a, _)| *a != key);
    if let Err(e) = shared
        .store
        .add_servers(
            std::slice::from_ref(&added),
            crate::store::SOURCE_API,
            crate::now_ms(),
        )
        .await
    {
        tracing::warn!("adding {key}: {e:#}");
        return error(StatusCode::SERVICE_UNAVAILABLE, "database unavailable");
    }
    tracing::info!("{key} added through the API ({})", added.protocol);
    let code = if new {
        StatusCode::CREATED
    } else {
        StatusCode::OK
    };
    (
        code,
        [(header::CONTENT_TYPE, "application/json")],
        body(if new { "new" } else { "again" }),
    )
        .into_response()
}

/// `POST /ddnet/15/register`: DDNet 16's HTTP registration (its `sv_register_url`):
/// challenged over UDP from the master's socket, then verified by `gie3` as a `bea2`
/// heartbeat is ([`ogp_proto::master::ddnet_register`]). Open to anyone, as the UDP
/// registrations are: the connection's own IP is the only one it can register. Counted
/// as `registrations{protocol="ddnet_http"}` by outcome.
async fn ddnet_register(
    State(shared): State<Shr>,
    Extension(peer): Extension<Peer>,
    headers: HeaderMap,
    req: Request,
) -> Response {
    use ogp_proto::master::ddnet_register::{Decision, RegisterRequest, MAX_BODY_BYTES};
    // the body (the server's info) is not needed: the master polls the server
    let Ok(body) = axum::body::to_bytes(req.into_body(), MAX_BODY_BYTES).await else {
        return error(
            StatusCode::PAYLOAD_TOO_LARGE,
            &format!("body: longer than {MAX_BODY_BYTES} bytes"),
        );
    };
    let decision =
        match RegisterRequest::from_headers(|name| headers.get(name).map(HeaderValue::as_bytes)) {
            Ok(r) => shared.ddnet_challenges.decide(&r, peer.addr.ip()),
            Err(e) => Decision::Refused(e),
        };
    let (outcome, queued) = match &decision {
        Decision::Register(addr) => (
            "verifying",
            Some(crate::udp::FromHttp::Register {
                addr: *addr,
                len: body.len().saturating_add(256),
            }),
        ),
        // DDNet's 0.7 side, on the port of its 0.6 side, whose registration lists and
        // verifies the server (verifying both at once would race, one address being one
        // verification): the challenge proved the port, and the poll's rediscovery learns
        // that it speaks `teeworlds7`
        Decision::Register7(_) => ("noted", None),
        Decision::Challenge { to, datagram } => (
            "challenged",
            Some(crate::udp::FromHttp::Challenge {
                to: *to,
                datagram: datagram.clone(),
            }),
        ),
        Decision::Deleted => ("deleted", None),
        Decision::Refused(r) => {
            tracing::debug!("{}: DDNet registration refused: {r}", peer.addr);
            ("refused", None)
        }
    };
    if let Some(q) = queued {
        let sent = shared.from_http.as_ref().map(|tx| tx.try_send(q));
        match sent {
            Some(Ok(())) => {}
            None => {
                return error(
                    StatusCode::SERVICE_UNAVAILABLE,
                    "this master has no UDP port to verify servers from",
                )
            }
            Some(Err(_)) => {
                let mut r = error(StatusCode::SERVICE_UNAVAILABLE, "busy: try again later");
                r.headers_mut()
                    .insert(header::RETRY_AFTER, HeaderValue::from_static("1"));
                return r;
            }
        }
    }
    shared
        .metrics
        .registrations
        .get_or_create(&labels("protocol", "ddnet_http", "outcome", outcome))
        .inc();
    let (code, body) = decision.response();
    (
        StatusCode::from_u16(code).unwrap_or(StatusCode::BAD_REQUEST),
        [(header::CONTENT_TYPE, "application/json")],
        body,
    )
        .into_response()
}

/// `DELETE /api/v1/servers/{addr}`: stops polling a server the API added; it leaves
/// the list unless it registers.
async fn remove_server(
    State(shared): State<Shr>,
    Path(addr): Path<String>,
    Extension(guard): Extension<Arc<Mutex<WrongTokens>>>,
    Extension(peer): Extension<Peer>,
    headers: HeaderMap,
) -> Response {
    if let Some(r) = refusal(&shared, &guard, &peer, &headers).await {
        return r;
    }
    let Ok(a) = addr.parse::<SocketAddr>().map(canonical) else {
        return error(
            StatusCode::BAD_REQUEST,
            "not an address (IP:PORT, [IPv6]:PORT)",
        );
    };
    let _writing = shared.writing.lock().await;
    let t = &shared.timers;
    match shared
        .store
        .release_server(a, crate::store::SOURCE_API, crate::now_ms(), *t)
        .await
    {
        Ok(true) => {
            tracing::info!("{a} removed through the API");
            StatusCode::NO_CONTENT.into_response()
        }
        Ok(false) => match shared.store.added_servers().await {
            Ok(x) if x.iter().any(|(k, _)| *k == a.to_string()) => error(
                StatusCode::CONFLICT,
                "this server is added in the master's config file: remove it there",
            ),
            Ok(_) => error(
                StatusCode::NOT_FOUND,
                "no server added through the API at this address",
            ),
            Err(_) => error(StatusCode::SERVICE_UNAVAILABLE, "database unavailable"),
        },
        Err(e) => {
            tracing::warn!("removing {a}: {e:#}");
            error(StatusCode::SERVICE_UNAVAILABLE, "database unavailable")
        }
    }
}

async fn stats(State(shared): State<Shr>, headers: HeaderMap) -> Response {
    let Ok(l) = shared.list.read() else {
        return error(StatusCode::INTERNAL_SERVER_ERROR, "list unavailable");
    };
    let etag = etag_for(l.version, "stats");
    if not_modified(&headers, &etag) {
        return StatusCode::NOT_MODIFIED.into_response();
    }
    let (servers, up, players, by) = l.stats();
    drop(l);
    let body = json!({ "servers": servers, "up": up, "players": players, "by_protocol": by });
    json_response(json_text(&body), Some(etag))
}

async fn metrics(State(shared): State<Shr>) -> Response {
    let (bytes, _) = shared.statuses.size();
    shared
        .metrics
        .status_cache_bytes
        .set(i64::try_from(bytes).unwrap_or(i64::MAX));
    if let Ok(l) = shared.list.read() {
        let (servers, up, _, _) = l.stats();
        shared
            .metrics
            .list_version
            .set(i64::try_from(l.version).unwrap_or(i64::MAX));
        let m = &shared.metrics.servers;
        m.get_or_create(&label("state", "up"))
            .set(i64::try_from(up).unwrap_or(i64::MAX));
        m.get_or_create(&label("state", "down"))
            .set(i64::try_from(servers - up).unwrap_or(i64::MAX));
    }
    (
        [(
            header::CONTENT_TYPE,
            "application/openmetrics-text; version=1.0.0; charset=utf-8",
        )],
        shared.metrics.encode(),
    )
        .into_response()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A maker that counts its calls and takes `ms` (a read from the database).
    async fn slow(
        calls: &std::sync::atomic::AtomicU64,
        ms: u64,
        text: &'static str,
    ) -> Result<axum::body::Bytes, String> {
        calls.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        tokio::time::sleep(Duration::from_millis(ms)).await;
        Ok(axum::body::Bytes::from_static(text.as_bytes()))
    }

    /// Fifty requests at once for a first page nobody has made: one makes it, the others
    /// wait for it; a later version is made once more, and a request with an older page
    /// than the kept one makes its own without replacing it.
    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn concurrent_requests_for_a_cold_first_page_make_it_once() {
        let bodies = Arc::new(FirstBodies::default());
        let calls = Arc::new(std::sync::atomic::AtomicU64::new(0));
        let ask = |version: u64, text: &'static str| {
            let bodies = bodies.clone();
            let calls = calls.clone();
            tokio::spawn(async move {
                bodies
                    .get_or_make("sort=players", version, || slow(&calls, 30, text))
                    .await
            })
        };
        let many: Vec<_> = (0..50).map(|_| ask(7, "v7")).collect();
        for a in many {
            assert_eq!(a.await.unwrap().unwrap(), "v7");
        }
        assert_eq!(bodies.made(), 1);
        assert_eq!(calls.load(std::sync::atomic::Ordering::Relaxed), 1);
        // kept: no more made
        assert_eq!(ask(7, "again").await.unwrap().unwrap(), "v7");
        assert_eq!(bodies.made(), 1);
        // the next version: made once for all that ask
        let many: Vec<_> = (0..20).map(|_| ask(8, "v8")).collect();
        for a in many {
            assert_eq!(a.await.unwrap().unwrap(), "v8");
        }
        assert_eq!(bodies.made(), 2);
        // an older page's request makes its own, and v8 stays kept
        assert_eq!(ask(7, "old").await.unwrap().unwrap(), "old");
        assert_eq!(ask(8, "new").await.unwrap().unwrap(), "v8");
        assert_eq!(bodies.made(), 3);
    }

    /// A maker that fails answers its own request with the error; the next request makes
    /// it, and a maker whose request is dropped (client gone) leaves it to a waiter.
    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn a_failed_or_dropped_maker_leaves_the_page_to_the_next() {
        let bodies = FirstBodies::default();
        let failed: Result<axum::body::Bytes, String> = bodies
            .get_or_make("k", 1, || async { Err("database unavailable".to_owned()) })
            .await;
        assert_eq!(failed, Err("database unavailable".to_owned()));
        let calls = std::sync::atomic::AtomicU64::new(0);
        let made = bodies.get_or_make("k", 1, || slow(&calls, 0, "ok")).await;
        assert_eq!(made.unwrap(), "ok");
        let dropped = tokio::time::timeout(
            Duration::from_millis(10),
            bodies.get_or_make("d", 1, || slow(&calls, 10_000, "never")),
        )
        .await;
        assert!(dropped.is_err());
        let made = bodies
            .get_or_make("d", 1, || slow(&calls, 0, "second"))
            .await;
        assert_eq!(made.unwrap(), "second");
        assert_eq!(bodies.made(), 4);
    }

    /// A full-view page's statuses: read from the database once, then from the status
    /// cache while the list's entries are unchanged; once the list has a server's change,
    /// its new status (never the kept one), and only that one read again.
    #[tokio::test]
    async fn a_pages_statuses_are_read_again_once_the_list_has_their_change() {
        let store = crate::store::Store::open("sqlite::memory:").await.unwrap();
        store.insert_simulated_with(40, 1_000, 0).await.unwrap();
        let mut list = crate::list::List::default();
        list.apply(store.changed_since(0, String::new(), 1000).await.unwrap());
        let page = |list: &crate::list::List| {
            list.refresh_first_page(&crate::list::Query::default(), Sort::Players, 10)
                .entries
        };
        let (cache, metrics) = (
            crate::status_cache::StatusCache::default(),
            crate::metrics::Metrics::default(),
        );
        let count = |outcome: &str| {
            metrics
                .status_cache
                .get_or_create(&label("outcome", outcome))
                .get()
        };
        let entries = page(&list);
        let first = read_statuses(&cache, &store, &metrics, &entries)
            .await
            .unwrap();
        assert_eq!(first.len(), 10);
        assert_eq!((count("hit"), count("miss")), (0, 10));
        let again = read_statuses(&cache, &store, &metrics, &entries)
            .await
            .unwrap();
        assert_eq!(again, first);
        assert_eq!((count("hit"), count("miss")), (10, 10));
        // a poll changes the top server's status: until the list has the change, the
        // page (made from the list's entries) shows the one it had
        let top = entries[0].addr;
        let new = "{\"host_name\":\"changed\"}";
        store.set_status(top, new, 2_000).await.unwrap();
        let before = read_statuses(&cache, &store, &metrics, &entries)
            .await
            .unwrap();
        assert_eq!(before, first);
        // the list has it: the new status, read again, the others still kept
        list.apply(
            store
                .changed_since(1_000, String::new(), 1000)
                .await
                .unwrap(),
        );
        let entries = page(&list);
        assert_eq!(entries[0].addr, top);
        let after = read_statuses(&cache, &store, &metrics, &entries)
            .await
            .unwrap();
        assert_eq!(after.get(&top).map(|t| &**t), Some(new));
        assert_eq!((count("hit"), count("miss")), (29, 11));
        for e in &entries[1..] {
            assert_eq!(after.get(&e.addr), first.get(&e.addr));
        }
    }

    /// At most [`FIRST_BODIES`] answers are kept.
    #[tokio::test]
    async fn the_kept_answers_are_bounded() {
        let bodies = FirstBodies::default();
        for i in 0..FIRST_BODIES * 3 {
            let r: Result<_, String> = bodies
                .get_or_make(&i.to_string(), 1, || async {
                    Ok(axum::body::Bytes::from_static(b"x"))
                })
                .await;
            assert!(r.is_ok());
            assert!(lock(&bodies.bodies).len() <= FIRST_BODIES);
        }
    }

    /// A client asking for thousands of different first pages (a name search each)
    /// leaves at most [`FIRST_PAGES`] gates, and one query's gate is the same for all
    /// who ask for it at once.
    #[test]
    fn the_gates_of_first_pages_are_bounded() {
        let pages = FirstPages::default();
        let q = |i: usize| Query {
            name: Some(format!("attack {i}")),
            ..Query::default()
        };
        let kept = pages.gate(&q(0), Sort::Players, 100);
        assert!(Arc::ptr_eq(&kept, &pages.gate(&q(0), Sort::Players, 100)));
        assert!(!Arc::ptr_eq(&kept, &pages.gate(&q(0), Sort::Addr, 100)));
        for i in 0..FIRST_PAGES * 3 {
            let _ = pages.gate(&q(i), Sort::Players, 100);
            assert!(lock(&pages.gates).len() <= FIRST_PAGES);
        }
    }
}
