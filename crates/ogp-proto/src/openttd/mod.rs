//! OpenTTD's game info over TCP (the game port, 3979 by default), client side, sans-IO.
//!
//! * [`wire`]: the `PACKET_CLIENT_GAME_INFO` request and the `SERVER_GAME_INFO` reply in
//!   every version of its format (1 to 7), through the bounded reader.
//! * [`mapping`]: the reply to the shared [`Status`](crate::Status) (documented field by
//!   field there).
//! * [`client`]: the query as a stream machine on the shared core: connect, write
//!   `03 00 07`, read one packet.
//!
//! OpenTTD 12.0 and later answer the game info only over TCP (the old UDP
//! `CLIENT_FIND_SERVER` gets an empty reply). Every decoder here is total: on any input it
//! returns a value or a [`DecodeError`](crate::DecodeError) naming the field and byte
//! offset, never panics. No responder.

pub mod client;
pub mod mapping;
pub mod wire;

pub use client::DEFAULT_PORT;

use crate::protocol::{Entry, Transport};

/// OpenTTD's entry (see [`Entry`]): TCP, port 3979 when none is given; not served.
///
/// Kept out of auto-detection (`auto: false`): its probe is a TCP connection to the game
/// port, which the server logs and counts against its connection limits, for a protocol
/// only OpenTTD speaks; `-p openttd` asks for it.
pub const ENTRY: Entry = Entry {
    aliases: &["ottd", "ottds"],
    help: "OpenTTD's game info over TCP (PACKET_CLIENT_GAME_INFO); without a port, 3979.",
    default_port: Some(DEFAULT_PORT),
    auto: false,
    ..Entry::new("openttd", "OpenTTD", Transport::Stream)
};
