//! `ogp._ogp`: the native half of the Python package `ogp` (crates/ogp-py/python/ogp).
//!
//! Thin: every decision is the Rust client's. A query runs `ogp_net::client::query` (one
//! protocol) or the scan engine's `ogp_net::scan::query` (auto-detection, query ports)
//! exactly as `ogp query` does, and a scan runs `ogp_net::scan::start` as `ogp scan`
//! does; targets, games and timers go through `ogp_proto::front`, the CLI's own
//! helpers. Each result crosses into Python as the one result JSON of docs/json.md
//! (`ogp_proto::result::compact`, the CLI's writer); the Python half only turns it into
//! objects and exceptions.
//!
//! One tokio runtime for the process (pyo3-async-runtimes'). Blocking calls release the
//! GIL and wake every 50 ms to let Python handle signals, so Ctrl-C stops them at once;
//! a stopped or cancelled query or scan aborts its task, which closes its sockets.

// The unit-test build of this crate is empty: an extension module does not link
// libpython, and `cargo test --all-targets` builds the library's test target even with
// `test = false`; the tests are Python's (tests/python.rs).
#[cfg(not(test))]
mod native;
