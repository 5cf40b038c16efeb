//! Farming Simulator 19, 22 and 25 dedicated servers over HTTP (the web interface's
//! port, default 8080), client side, sans-IO: `GET
//! /feed/dedicated-server-stats.xml?code=CODE`, the server's stats feed, as gamedig
//! (`farmingsimulator`) reads it.
//!
//! * [`client`]: the query as a machine of the client core's HTTP shape
//!   (`client_http`), the XML document read by the bounded [`crate::xml`] reader and
//!   mapped to the shared [`Status`](crate::Status) (documented attribute by attribute
//!   there). The code is a per-server secret shown in the web interface:
//!   [`client::QueryOptions::code`]; the command line reads it from `OGP_FS_CODE` or the
//!   file named by `OGP_FS_CODE_FILE`, never from its arguments; it is never in events,
//!   errors or `-vv` dumps.
//!
//! Not auto-detected; asked by name (`-p farmingsimulator`) or by the catalogue games
//! `farmingsimulator19`, `farmingsimulator22` and `farmingsimulator25` (port 8080).

pub mod client;

pub use client::DEFAULT_PORT;

use crate::protocol::{Entry, Transport};

/// Farming Simulator's entry (see [`Entry`]): HTTP over TCP, port 8080 when none is
/// given; not auto-detected; not served.
pub const ENTRY: Entry = Entry {
    aliases: &["fs", "farmsim"],
    help: "Farming Simulator 19/22/25 over HTTP: the web interface's stats feed (its code from OGP_FS_CODE); without a port, 8080.",
    default_port: Some(DEFAULT_PORT),
    auto: false,
    ..Entry::new("farmingsimulator", "Farming Simulator", Transport::Stream)
};
