//! Halo Online's ElDewrito over HTTP (default port 11775), client side, sans-IO: the
//! JSON document the server writes for `GET /`, as server lists (gamedig `eldewrito`,
//! opengsq) read it.
//!
//! * [`client`]: the query as a machine of the client core's HTTP-JSON shape
//!   (`client_http`): one `GET /`, mapped to the shared [`Status`](crate::Status)
//!   (documented key by key there).
//!
//! opengsq first broadcasts a LAN probe to UDP 11774; the HTTP document alone is enough
//! for one server. Not auto-detected; asked by name (`-p eldewrito`) or by the catalogue
//! game `eldewrito`.

pub mod client;

pub use client::DEFAULT_PORT;

use crate::protocol::{Entry, Transport};

/// ElDewrito's entry (see [`Entry`]): HTTP over TCP, port 11775 when none is given,
/// one step; not auto-detected; not served.
pub const ENTRY: Entry = Entry {
    aliases: &["halo-online"],
    help: "Halo Online's ElDewrito over HTTP: GET /; without a port, 11775.",
    default_port: Some(DEFAULT_PORT),
    auto: false,
    ..Entry::new("eldewrito", "ElDewrito", Transport::Stream)
};
