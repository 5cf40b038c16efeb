//! StarMade's server-info command over TCP (4242 by default), client side, sans-IO.
//!
//! * [`wire`]: the 13-byte request and the reply (big-endian: a header, then tagged
//!   values), through the bounded reader; the values to the shared status.
//! * [`client`]: the query as a stream machine on the shared core: connect, write the
//!   request, read one reply.
//!
//! The format is gamedig's `protocols/starmade.js` and qstat's `starmade.c` (which
//! names the tags). Every decoder here is total. No responder.

pub mod client;
pub mod wire;

pub use client::DEFAULT_PORT;

use crate::protocol::{Entry, Transport};

/// StarMade's entry (see [`Entry`]): TCP, port 4242 when none is given; not served.
///
/// Kept out of auto-detection (`auto: false`): its probe is a TCP connection, for a
/// protocol only StarMade speaks.
pub const ENTRY: Entry = Entry {
    aliases: &["sm"],
    help: "StarMade's server-info command over TCP; without a port, 4242.",
    default_port: Some(DEFAULT_PORT),
    auto: false,
    ..Entry::new("starmade", "StarMade", Transport::Stream)
};
