//! # ogp-net: the networking layer
//!
//! The tokio side of the project: the embeddable responder, the client and the scanner
//! drive the sans-IO codecs of [`ogp_proto`] over UDP sockets. Protocol logic does not
//! live here; this crate owns sockets, timers and concurrency only.
//!
//! This crate is being built up issue by issue; the OGP responder and client come next.

#![forbid(unsafe_code)]

pub use ogp_proto;
