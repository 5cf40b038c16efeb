//! Chocolate Doom's network query (`chocolate-server`, and the games of its engine:
//! Doom, Heretic, Hexen, Strife): the client side, sans-IO.
//!
//! * [`wire`]: the request (`00 0D`, NET_PACKET_TYPE_QUERY) and the reply (`00 0E`,
//!   the version, the server's state, players, max players, game mode and mission,
//!   the description, and the network protocols it speaks), decoded through the
//!   bounded reader.
//! * [`client`]: one request, resent by the shared timers; the first reply from the
//!   server's address wins (the query carries no id); the reply mapped to the shared
//!   [`Status`](crate::Status).
//!
//! Chocolate Doom's server listens on UDP 2342 by default. No responder. The decoder
//! is total: on any input it returns a value or a [`DecodeError`](crate::DecodeError),
//! never panics, and allocates at most a small multiple of its input.

pub mod client;
pub mod wire;

pub use wire::{decode_reply, Reply, REPLY_TYPE, REQUEST};

use crate::protocol::{Entry, Signature, Tier, Transport};

/// Chocolate Doom's entry (see [`Entry`]): a reply is `00 0E` and a version string
/// (`Chocolate Doom 3.0.0`); the request, `00 0D` alone, only a guess of the last
/// resort. Default port 2342; not served.
pub const ENTRY: Entry = Entry {
    aliases: &["chocolate-doom", "chocolatedoom"],
    help: "Chocolate Doom's query (port 2342; Doom, Heretic, Hexen, Strife): 00 0D, \
        answered by the version, players, game and description.",
    default_port: Some(2342),
    signatures: &[
        Signature {
            tier: Tier::Broad,
            matches: wire::looks_like_reply,
        },
        Signature {
            tier: Tier::Weak,
            matches: |d| d == REQUEST,
        },
    ],
    ..Entry::new("doom", "Chocolate Doom", Transport::Datagram)
};
