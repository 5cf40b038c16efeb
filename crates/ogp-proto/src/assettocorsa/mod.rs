//! Assetto Corsa's dedicated server (`acServer`, AssettoServer) over HTTP on its HTTP
//! port (`HTTP_PORT`; gamedig's default 9610), client side, sans-IO: `GET /INFO` and
//! the cars' `GET /JSON|N`, as gamedig (`assettocorsa`) reads them.
//!
//! * [`client`]: the query as a machine of the client core's HTTP-JSON shape
//!   (`client_http`), the documents mapped to the shared [`Status`](crate::Status)
//!   (documented key by key there).
//!
//! Not auto-detected; asked by name (`-p assettocorsa`) or by the catalogue game
//! `assettocorsa`.

pub mod client;

pub use client::DEFAULT_PORT;

use crate::protocol::{Entry, Transport};

/// Assetto Corsa's entry (see [`Entry`]): HTTP over TCP, port 9610 when none is given;
/// not auto-detected; not served.
pub const ENTRY: Entry = Entry {
    aliases: &["ac", "acserver"],
    help: "Assetto Corsa over HTTP: /INFO and /JSON|1 on the server's HTTP port; without a port, 9610.",
    default_port: Some(DEFAULT_PORT),
    auto: false,
    ..Entry::new("assettocorsa", "Assetto Corsa", Transport::Stream)
};
