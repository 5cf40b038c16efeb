//! The Doom 3 engine's query (id Tech 4: Doom 3, Quake 4, Prey, Enemy Territory: Quake
//! Wars): `getInfo` answered by `infoResponse`, client side, sans-IO.
//!
//! * [`wire`]: the request and the reply in each game's layout (told from the reply),
//!   through the bounded reader, with caps on rules and players.
//! * [`mapping`]: the reply to the shared [`Status`](crate::Status) (documented field
//!   by field there).
//! * [`client`]: one request, resent by the shared timers; the reply must echo its
//!   challenge.
//!
//! Default ports: Doom 3 27666, Quake 4 28004, Prey 27719, ET:QW 27733. Every decoder
//! here is total: on any input it returns a value or a
//! [`DecodeError`](crate::DecodeError), never panics. No responder.

pub mod client;
pub mod mapping;
pub mod wire;

pub use client::DEFAULT_PORT;
pub use wire::{decode_info_response, Dialect, InfoResponse};

use crate::protocol::{Entry, Signature, Tier, Transport};

/// The Doom 3 engine's entry (see [`Entry`]): `FF FF getInfo` and `FF FF infoResponse`
/// (no other protocol of ours starts with `FF FF` and a letter); Doom 3's port 27666
/// when none is given; not served.
pub const ENTRY: Entry = Entry {
    aliases: &["dm3s", "q4s", "preys", "etqws", "quake4", "prey", "etqw"],
    help: "The Doom 3 engine (Doom 3, Quake 4, Prey, ET:QW): `getInfo`, answered by \
        infoResponse; without a port, 27666.",
    default_port: Some(DEFAULT_PORT),
    signatures: &[
        Signature {
            tier: Tier::Magic,
            matches: wire::is_reply,
        },
        Signature {
            tier: Tier::Magic,
            matches: wire::is_request,
        },
    ],
    ..Entry::new("doom3", "Doom 3 engine", Transport::Datagram)
};
