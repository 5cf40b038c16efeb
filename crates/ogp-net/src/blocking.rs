//! Blocking wrappers for programs without an async runtime.

use std::net::SocketAddr;

use ogp_proto::ogp::client::{QueryOptions, QueryOutcome};

use crate::client::ClientError;

/// Queries one OGP server, blocking the calling thread (it runs a small single-threaded
/// runtime for the duration of the query; do not call it from inside a tokio runtime).
pub fn query(addr: SocketAddr, opts: QueryOptions) -> Result<QueryOutcome, ClientError> {
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .map_err(ClientError::Io)?;
    rt.block_on(crate::client::query(addr, opts))
}
