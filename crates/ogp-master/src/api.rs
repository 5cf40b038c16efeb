//! The HTTP side: the JSON API (`/api/v1/…`, described by `/api/v1/openapi.json`), the
//! page at `/`, and `/metrics`. Answers carry an ETag (the list's version and the
//! query), are gzip-compressed when the client accepts it, and allow any origin (CORS)
//! since they are public and read-only.

use std::collections::BTreeMap;
use std::hash::{DefaultHasher, Hash, Hasher};
use std::net::SocketAddr;
use std::sync::Arc;

use axum::extract::{MatchedPath, Path, RawQuery, Request, State};
use axum::http::{header, HeaderMap, HeaderValue, StatusCode};
use axum::middleware::{self, Next};
use axum::response::{IntoResponse, Response};
use axum::routing::get;
use axum::Router;
use serde::Deserialize;
use serde_json::{json, Value};
use tokio::net::TcpListener;
use tokio::sync::watch;
use tower_http::compression::CompressionLayer;
use tower_http::cors::{Any, CorsLayer};

use crate::list::{rfc3339, Query};
use crate::metrics::{label, labels};
use crate::Shared;

/// Most items per page (with `view=summary`: [`MAX_SUMMARY_LIMIT`]).
pub const MAX_LIMIT: usize = 1000;
/// Most items per page without statuses.
pub const MAX_SUMMARY_LIMIT: usize = 5000;

const OPENAPI: &str = include_str!("../openapi.json");

type Shr = Arc<Shared>;

/// Serves HTTP on `listener` until `stop`.
pub(crate) async fn serve(shared: Shr, listener: TcpListener, mut stop: watch::Receiver<bool>) {
    let app = router(shared);
    let res = axum::serve(listener, app)
        .with_graceful_shutdown(async move {
            let _ = stop.changed().await;
        })
        .await;
    if let Err(e) = res {
        tracing::error!("HTTP server: {e}");
    }
}

fn router(shared: Shr) -> Router {
    let cors = CorsLayer::new()
        .allow_origin(Any)
        .allow_methods([axum::http::Method::GET])
        .expose_headers([header::ETAG]);
    Router::new()
        .route("/api/v1/servers", get(servers))
        .route("/api/v1/servers/{addr}", get(server))
        .route("/api/v1/stats", get(stats))
        .route(
            "/api/v1/openapi.json",
            get(|| async { ([(header::CONTENT_TYPE, "application/json")], OPENAPI) }),
        )
        .route("/metrics", get(metrics))
        .merge(crate::assets::routes())
        .layer(middleware::from_fn_with_state(shared.clone(), count))
        .layer(CompressionLayer::new().gzip(true))
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
        json!({ "error": message }).to_string(),
    )
        .into_response()
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

fn parse_params(raw: Option<&str>) -> Result<(Query, Option<SocketAddr>, usize, bool), String> {
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
    let cursor = match nonempty(p.cursor) {
        Some(c) => Some(
            c.parse()
                .map_err(|_| format!("cursor: not an address: {c:?}"))?,
        ),
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
    Ok((q, cursor, limit, summary))
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

async fn servers(
    State(shared): State<Shr>,
    RawQuery(raw): RawQuery,
    headers: HeaderMap,
) -> Response {
    let (q, cursor, limit, summary) = match parse_params(raw.as_deref()) {
        Ok(x) => x,
        Err(e) => return error(StatusCode::BAD_REQUEST, &e),
    };
    let (page, version) = match shared.list.read() {
        Ok(l) => (l.page(&q, cursor, limit), l.version),
        Err(_) => return error(StatusCode::INTERNAL_SERVER_ERROR, "list unavailable"),
    };
    let etag = etag_for(version, raw.as_deref().unwrap_or(""));
    if not_modified(&headers, &etag) {
        return StatusCode::NOT_MODIFIED.into_response();
    }
    // Statuses are spliced in as the database holds them (valid JSON written by us),
    // without parsing and writing them again.
    let mut statuses: BTreeMap<String, String> = BTreeMap::new();
    if !summary {
        let addrs = page.entries.iter().map(|e| e.addr.to_string()).collect();
        let t = std::time::Instant::now();
        match shared.store.statuses(addrs).await {
            Ok(rows) => statuses.extend(rows),
            Err(e) => {
                tracing::warn!("reading statuses: {e:#}");
                return error(StatusCode::SERVICE_UNAVAILABLE, "database unavailable");
            }
        }
        shared.metrics.db("statuses", t);
    }
    let mut body =
        String::with_capacity(256 + page.entries.len() * if summary { 256 } else { 4096 });
    body.push_str("{\"servers\":[");
    for (i, e) in page.entries.iter().enumerate() {
        if i > 0 {
            body.push(',');
        }
        let item = e.item();
        let json = serde_json::to_string(&item).unwrap_or_else(|_| "{}".into());
        match json.strip_suffix('}') {
            Some(open) if !summary => {
                body.push_str(open);
                body.push_str(",\"status\":");
                body.push_str(statuses.get(&item.addr).map_or("null", String::as_str));
                body.push('}');
            }
            _ => body.push_str(&json),
        }
    }
    body.push_str("],\"next\":");
    body.push_str(&serde_json::to_string(&page.next).unwrap_or_else(|_| "null".into()));
    body.push_str(",\"total\":");
    body.push_str(&page.total.to_string());
    body.push('}');
    json_response(body, Some(etag))
}

async fn server(
    State(shared): State<Shr>,
    Path(addr): Path<String>,
    headers: HeaderMap,
) -> Response {
    let Ok(a) = addr.parse::<SocketAddr>() else {
        return error(
            StatusCode::BAD_REQUEST,
            "not an address (IP:PORT, [IPv6]:PORT)",
        );
    };
    let (entry, version) = match shared.list.read() {
        Ok(l) => (l.get(a).cloned(), l.version),
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
            .and_then(|(_, s)| serde_json::from_str(&s).ok())
            .unwrap_or(Value::Null);
        o.insert("status".into(), status);
        let points: Vec<Value> = history
            .into_iter()
            .filter_map(|(t, n)| Some(json!({ "t": rfc3339(t)?, "players": n })))
            .collect();
        o.insert("history".into(), Value::Array(points));
    }
    json_response(v.to_string(), Some(etag))
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
    json_response(body.to_string(), Some(etag))
}

async fn metrics(State(shared): State<Shr>) -> Response {
    if let Ok(l) = shared.list.read() {
        let (servers, up, _, _) = l.stats();
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
