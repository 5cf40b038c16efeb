//! Test support shared by the integration tests of `ogp-proto`, `ogp-net`, `ogp-cli` and
//! `ogp-ffi` (not published):
//!
//! * proptest strategies for random [`ogp_proto::Status`] values ([`status`],
//!   [`status_and_charset`], [`big_status`] and the parts they are built from);
//! * the OGP normalisation: the status a client decodes from our answer
//!   ([`normalise`], [`normalise_sections`], [`served`]);
//! * sample statuses ([`demo_state`], [`many_players`], [`empty_lists`]);
//! * [`capture_datagrams`], [`datagrams_of`]: the datagrams of a capture file;
//! * [`interop`]: the `OGP_INTEROP` gate, the pinned third-party query clients and
//!   running them, for the interop tests of `ogp-cli` and `ogp-ffi`;
//! * [`postgres`]: a throwaway PostgreSQL cluster;
//! * [`gameservers`]: real game servers on loopback (OpenArena);
//! * [`slp`]: a lightweight Minecraft Server List Ping responder (tokio);
//! * [`replay`]: a loopback UDP server that answers with recorded datagrams (captures);
//! * [`fivem`]: a loopback FiveM server replaying recorded JSON documents over HTTP,
//!   with `getinfo` over UDP on the same port, on
//! * [`http_replay`]: a loopback HTTP server replaying recorded documents by path.

pub mod bindings;
mod captures;
pub mod fivem;
pub mod gameservers;
pub mod http_replay;
pub mod interop;
mod normalise;
pub mod postgres;
pub mod replay;
mod samples;
pub mod slp;
mod strategy;

pub use captures::*;
pub use normalise::*;
pub use samples::*;
pub use strategy::*;
