//! Hytale servers with Nitrado's query plugin (`Nitrado:Query` on `Nitrado:WebServer`,
//! default port 5523), client side, sans-IO: `GET /Nitrado/Query`, as gamedig (`hytale`)
//! reads it. The web server speaks HTTPS by default, with a self-signed certificate
//! unless its owner installed one.
//!
//! * [`client`]: the query as a machine of the client core's HTTP-JSON shape
//!   (`client_http`), the document mapped to the shared [`Status`](crate::Status)
//!   (documented key by key there). It asks the networking layer for TLS
//!   ([`TlsRequest`](crate::client::TlsRequest)): the certificate checked unless
//!   [`client::QueryOptions::insecure`]; plain HTTP with [`client::QueryOptions::plain`].
//!
//! Not auto-detected; asked by name (`-p hytale`) or by the catalogue game `hytale`.

pub mod client;

pub use client::DEFAULT_PORT;

use crate::protocol::{Entry, Transport};

/// Hytale's entry (see [`Entry`]): HTTPS over TCP, port 5523 when none is given; not
/// auto-detected; not served.
pub const ENTRY: Entry = Entry {
    aliases: &["nitrado"],
    help: "Hytale's Nitrado query plugin over HTTPS (--insecure for a self-signed certificate, --no-tls for HTTP): GET /Nitrado/Query; without a port, 5523.",
    default_port: Some(DEFAULT_PORT),
    auto: false,
    ..Entry::new("hytale", "Hytale (Nitrado query)", Transport::Stream)
};
