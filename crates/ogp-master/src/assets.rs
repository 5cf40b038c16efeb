//! The page at `/`: static files embedded in the binary.

use std::sync::Arc;

use axum::http::header;
use axum::response::IntoResponse;
use axum::routing::get;
use axum::Router;

use crate::Shared;

const CSP: &str = "default-src 'self'; img-src 'self' data:; style-src 'self'; script-src 'self'; base-uri 'none'; frame-ancestors 'none'; form-action 'none'";

fn page(content_type: &'static str, body: &'static str) -> impl IntoResponse {
    (
        [
            (header::CONTENT_TYPE, content_type),
            (header::CONTENT_SECURITY_POLICY, CSP),
            (header::X_CONTENT_TYPE_OPTIONS, "nosniff"),
            (header::REFERRER_POLICY, "no-referrer"),
        ],
        body,
    )
}

/// The routes of the page's files.
pub(crate) fn routes() -> Router<Arc<Shared>> {
    Router::new().route(
        "/",
        get(|| async { page("text/html; charset=utf-8", "<!doctype html><title>ogp master</title><p>See /api/v1/servers.</p>") }),
    )
}
