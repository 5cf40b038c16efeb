//! Terraria's TShock REST API over HTTP (the game port + 101, default 7878), client
//! side, sans-IO: `GET /v2/server/status?players=true`, as gamedig (`terraria`) and
//! qstat (`-terraria`) read it.
//!
//! * [`client`]: the query as a machine of the client core's HTTP-JSON shape
//!   (`client_http`), the document mapped to the shared [`Status`](crate::Status)
//!   (documented key by key there). A REST token, when the server wants one, is
//!   [`client::QueryOptions::token`] (the command line reads it from
//!   `OGP_TSHOCK_TOKEN` only).
//!
//! Not auto-detected; asked by name (`-p terraria`) or by the catalogue game
//! `terrariatshock` (REST port = game port + 101).

pub mod client;

pub use client::DEFAULT_PORT;

use crate::protocol::{Entry, Transport};

/// TShock's entry (see [`Entry`]): HTTP over TCP, port 7878 when none is given; not
/// auto-detected; not served.
pub const ENTRY: Entry = Entry {
    aliases: &["tshock"],
    help: "Terraria's TShock REST API over HTTP: /v2/server/status; without a port, 7878.",
    default_port: Some(DEFAULT_PORT),
    auto: false,
    ..Entry::new("terraria", "Terraria (TShock)", Transport::Stream)
};
