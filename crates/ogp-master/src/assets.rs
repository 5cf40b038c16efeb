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
    Router::new()
        .route(
            "/",
            get(|| async {
                page(
                    "text/html; charset=utf-8",
                    include_str!("../assets/index.html"),
                )
            }),
        )
        .route(
            "/app.js",
            get(|| async {
                page(
                    "text/javascript; charset=utf-8",
                    include_str!("../assets/app.js"),
                )
            }),
        )
        .route(
            "/style.css",
            get(|| async {
                page(
                    "text/css; charset=utf-8",
                    include_str!("../assets/style.css"),
                )
            }),
        )
        .route(
            "/favicon.svg",
            get(|| async { page("image/svg+xml", include_str!("../assets/favicon.svg")) }),
        )
}
