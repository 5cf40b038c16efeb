//! Eco (Strange Loop Games) over HTTP on its web port (the game port + 1, default
//! 3001), client side, sans-IO: the server's `/frontpage` JSON document, as server lists
//! (gamedig `eco`, GameQ `eco`) read it.
//!
//! * [`client`]: the query as a machine of the client core's HTTP-JSON shape
//!   (`client_http`): one `GET /frontpage`, its `Info` object mapped to the shared
//!   [`Status`](crate::Status) (documented key by key there).
//!
//! Not auto-detected (it would cost every target a TCP connection and a request); asked
//! by name (`-p eco`) or by the catalogue game `eco` (web port = game port + 1).

pub mod client;

pub use client::DEFAULT_PORT;

use crate::protocol::{Entry, Transport};

/// Eco's entry (see [`Entry`]): HTTP over TCP, port 3001 when none is given, one step;
/// not auto-detected; not served.
pub const ENTRY: Entry = Entry {
    aliases: &[],
    help: "Eco over HTTP: /frontpage on the web port; without a port, 3001.",
    default_port: Some(DEFAULT_PORT),
    auto: false,
    ..Entry::new("eco", "Eco", Transport::Stream)
};
