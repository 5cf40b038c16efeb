//! Minecraft: Java Edition's Server List Ping over TCP (default port 25565), client
//! side, sans-IO.
//!
//! * [`wire`]: VarInt framing, the handshake and status request, the JSON status
//!   response, ping and pong, and the legacy `FE 01` ping of servers before 1.7, decoded
//!   through the bounded reader with the protocol's caps (a VarInt of at most 5 bytes, a
//!   JSON string of at most 32,767 UTF-16 units).
//! * [`mapping`]: the status JSON (chat component description, players and sample,
//!   version, flags, Forge mods, favicon) and the legacy reply to the shared
//!   [`Status`](crate::Status) (documented key by key there).
//! * [`srv`]: where a server named without a port is (`_minecraft._tcp.HOST` SRV
//!   records, then 25565): the decisions, not the look-up.
//! * [`client`]: the query as a stream machine on the shared core
//!   ([`Transport::Stream`](crate::client::Transport)).
//!
//! Every decoder here is total: on any input it returns a value or a
//! [`DecodeError`](crate::DecodeError) naming the field and byte offset, never panics.

pub mod client;
pub mod mapping;
pub mod srv;
pub mod wire;

pub use client::DEFAULT_PORT;

use crate::protocol::{Entry, Transport};

/// Minecraft: Java Edition's entry (see [`Entry`]): TCP, tried by auto-detection with one
/// connection ([`Protocol::AUTO_STREAM`](crate::Protocol::AUTO_STREAM)), port 25565 when
/// none is given; two steps (the status, then ping/pong); not served.
pub const ENTRY: Entry = Entry {
    aliases: &["mc"],
    help: "Minecraft: Java Edition's Server List Ping over TCP; without a port, 25565.",
    default_port: Some(DEFAULT_PORT),
    steps: 2,
    ..Entry::new("minecraft", "Minecraft", Transport::Stream)
};
