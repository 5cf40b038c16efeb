//! FiveM and RedM (the CitizenFX server, FXServer) over HTTP on the game port (default
//! 30120), client side, sans-IO: the three JSON documents server lists read.
//!
//! * [`documents`]: `/dynamic.json` (host name, players, slots, map, game type),
//!   `/info.json` (variables, resources, server version; the base64 icon is not kept)
//!   and `/players.json` (name, id, ping, identifiers), read with caps, and their
//!   mapping to the shared [`Status`](crate::Status) (documented key by key there).
//! * [`client`]: the query as a machine of the client core's HTTP-JSON shape
//!   (`client_http`): the three `GET`s on one kept-alive connection.
//!
//! The same server answers Quake III's `getinfo` over UDP on the same port (read by the
//! [`quake3`](crate::quake3) protocol, without players); this protocol is asked by
//! name (`-p fivem`, or a catalogue game: `fivem`, `redm`). Auto-detection does not
//! try it (it would cost every target a TCP connection and three requests).

pub mod client;
pub mod documents;

pub use client::DEFAULT_PORT;

use crate::protocol::{Entry, Transport};

/// FiveM's entry (see [`Entry`]): HTTP over TCP, port 30120 when none is given, three
/// steps (the documents); not auto-detected; not served.
pub const ENTRY: Entry = Entry {
    aliases: &["redm", "citizenfx", "fxserver"],
    help: "FiveM and RedM (CitizenFX) over HTTP: /dynamic.json, /info.json, /players.json; \
           without a port, 30120.",
    default_port: Some(DEFAULT_PORT),
    steps: 3,
    auto: false,
    ..Entry::new("fivem", "FiveM", Transport::Stream)
};
