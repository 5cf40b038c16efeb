//! Kerbal Space Program's DarkMultiPlayer (DMP) server over HTTP (its HTTP port, the
//! game port + 1, default 6703), client side, sans-IO: `GET /`, the server's
//! `ServerInfo` JSON, as gamedig (`kspdmp`) and qstat (`-ksp`) read it.
//!
//! * [`client`]: the query as a machine of the client core's HTTP-JSON shape
//!   (`client_http`), the document mapped to the shared [`Status`](crate::Status)
//!   (documented key by key there).
//!
//! Not auto-detected; asked by name (`-p kspdmp`) or by the catalogue game `kspd`.

pub mod client;

pub use client::DEFAULT_PORT;

use crate::protocol::{Entry, Transport};

/// DMP's entry (see [`Entry`]): HTTP over TCP, port 6703 when none is given; not
/// auto-detected; not served.
pub const ENTRY: Entry = Entry {
    aliases: &["ksp", "dmp"],
    help: "Kerbal Space Program's DarkMultiPlayer over HTTP: GET / on the game port + 1; without a port, 6703.",
    default_port: Some(DEFAULT_PORT),
    auto: false,
    ..Entry::new("kspdmp", "KSP DarkMultiPlayer", Transport::Stream)
};
