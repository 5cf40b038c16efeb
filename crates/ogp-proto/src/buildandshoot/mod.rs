//! Build and Shoot / Ace of Spades Classic (0.75, 0.76: piqueserver, pyspades) over
//! HTTP on the status server's port (the game port − 1, default 32886), client side,
//! sans-IO: `GET /json`, as gamedig (`buildandshoot`) reads it.
//!
//! * [`client`]: the query as a machine of the client core's HTTP-JSON shape
//!   (`client_http`), the document mapped to the shared [`Status`](crate::Status)
//!   (documented key by key there).
//!
//! Answered only when the server's status server is on (`status_server.enabled`). Not
//! auto-detected; asked by name (`-p buildandshoot`) or by the catalogue games `bas`
//! and `aosc`.

pub mod client;

pub use client::DEFAULT_PORT;

use crate::protocol::{Entry, Transport};

/// Build and Shoot's entry (see [`Entry`]): HTTP over TCP, port 32886 when none is
/// given; not auto-detected; not served.
pub const ENTRY: Entry = Entry {
    aliases: &["aos", "pyspades", "piqueserver"],
    help: "Build and Shoot / Ace of Spades over HTTP: /json on the status server (game port - 1); without a port, 32886.",
    default_port: Some(DEFAULT_PORT),
    auto: false,
    ..Entry::new("buildandshoot", "Build and Shoot", Transport::Stream)
};
