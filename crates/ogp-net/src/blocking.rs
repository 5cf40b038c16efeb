//! Blocking wrappers for programs without an async runtime.

use std::net::SocketAddr;

use ogp_proto::client::{Answer, Options, QueryError};
use ogp_proto::Protocol;

/// Queries one server in `protocol`, blocking the calling thread (it runs a small
/// single-threaded runtime for the duration of the query; do not call it from inside a
/// tokio runtime).
pub fn query(addr: SocketAddr, protocol: Protocol, opts: &Options) -> Result<Answer, QueryError> {
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .map_err(|e| QueryError::socket(&e))?;
    rt.block_on(crate::client::query(addr, protocol, opts))
}
