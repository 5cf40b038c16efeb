//! The Open Tibia status protocol over TCP (the login port, 7171 by default), client
//! side, sans-IO: what The Forgotten Server and the other Open Tibia servers answer about
//! themselves.
//!
//! * [`wire`]: the 8-byte request (a 16-bit little-endian length, 6, then `FF`, the status
//!   protocol, `FF`, its XML request, and `info`) and the XML document the server writes
//!   back before it closes (`<tsqp>`: server information, owner, players, monsters, NPCs,
//!   rates, map, message of the day), read by the bounded [`crate::xml`] reader.
//! * [`client`]: the query as a stream machine on the shared core: connect, write the
//!   request, read the document to the close.
//!
//! A server answers one status query per address every `statusTimeout` (5 s by default
//! in The Forgotten Server's configuration); a second within it is closed unanswered.
//! Every decoder here is total. No responder.

pub mod client;
pub mod wire;

pub use client::DEFAULT_PORT;

use crate::protocol::{Entry, Transport};

/// The Open Tibia status entry (see [`Entry`]): TCP, port 7171 when none is given; not
/// served.
///
/// Kept out of auto-detection (`auto: false`): its probe is a TCP connection to the login
/// port, and the server answers one status query per address in its `statusTimeout`, so
/// a probe would spend the answer a real query needs.
pub const ENTRY: Entry = Entry {
    aliases: &["tfs", "otserv", "opentibia"],
    help: "Open Tibia servers' status (The Forgotten Server and others: `info` over TCP, an XML reply); without a port, 7171.",
    default_port: Some(DEFAULT_PORT),
    auto: false,
    ..Entry::new("tibia", "Open Tibia", Transport::Stream)
};
