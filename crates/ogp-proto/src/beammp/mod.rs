//! BeamMP's server information over TCP (the game port, 30814 by default), client side,
//! sans-IO.
//!
//! * [`wire`]: the one-byte request `I`, the reply's framing (a 32-bit little-endian
//!   length then JSON, as current servers send it; older ones sent a form-encoded body
//!   and closed) and its fields, through the bounded reader and the capped JSON types.
//! * [`client`]: the query as a stream machine on the shared core: connect, write `I`,
//!   read one reply.
//!
//! The server answers itself (BeamMP-Server's `TNetwork::Identify`): what it last sent
//! BeamMP's backend, the same fields gamedig reads from BeamMP's public list. Every
//! decoder here is total. No responder.

pub mod client;
pub mod wire;

pub use client::DEFAULT_PORT;

use crate::protocol::{Entry, Transport};

/// BeamMP's entry (see [`Entry`]): TCP, port 30814 when none is given; not served.
///
/// Kept out of auto-detection (`auto: false`): its probe is a TCP connection to the game
/// port, which the server logs, for a protocol only BeamMP speaks.
pub const ENTRY: Entry = Entry {
    aliases: &["beam"],
    help:
        "BeamMP's server information over TCP (one byte `I`, a JSON reply); without a port, 30814.",
    default_port: Some(DEFAULT_PORT),
    auto: false,
    ..Entry::new("beammp", "BeamMP", Transport::Stream)
};
