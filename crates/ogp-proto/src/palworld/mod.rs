//! Palworld's REST API over HTTP (the REST port, default 8212; the game is UDP 8211),
//! client side, sans-IO: `/v1/api/info`, `/v1/api/metrics` and `/v1/api/players` with
//! HTTP Basic authentication as `admin` and the server's admin password, as gamedig
//! (`palworld`) reads them.
//!
//! * [`client`]: the query as a machine of the client core's HTTP-JSON shape
//!   (`client_http`), the documents mapped to the shared [`Status`](crate::Status)
//!   (documented key by key there). The password is
//!   [`client::QueryOptions::password`]: the command line reads it from
//!   `OGP_PALWORLD_PASSWORD` or the file named by `OGP_PALWORLD_PASSWORD_FILE`, never
//!   from its arguments; it is never in events, errors or `-vv` dumps.
//!
//! Not auto-detected; asked by name (`-p palworld`) or by the catalogue game
//! `palworld` (REST port 8212).

pub mod client;

pub use client::DEFAULT_PORT;

use crate::protocol::{Entry, Transport};

/// Palworld's entry (see [`Entry`]): HTTP over TCP, port 8212 when none is given; not
/// auto-detected; not served.
pub const ENTRY: Entry = Entry {
    aliases: &[],
    help: "Palworld's REST API over HTTP: /v1/api/info, metrics, players (admin password from OGP_PALWORLD_PASSWORD); without a port, 8212.",
    default_port: Some(DEFAULT_PORT),
    auto: false,
    ..Entry::new("palworld", "Palworld", Transport::Stream)
};
