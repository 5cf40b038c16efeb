//! Minecraft: Bedrock Edition's server-list ping (RakNet's unconnected ping and pong, UDP,
//! default port [`DEFAULT_PORT`]), as the vanilla Bedrock Dedicated Server, Education
//! Edition servers, PocketMine-MP, Nukkit and Geyser answer it: the client side, sans-IO.
//!
//! * [`wire`]: the ping (`01`, time, the offline-message magic, client GUID: 33 bytes)
//!   and the pong (`1C`, the time echoed, server GUID, magic, a u16-length string
//!   `MCPE;motd;protocol;version;online;max;serverId;subMotd;gameMode;…`), decoded
//!   through the bounded reader, and encoded back; the string read field by field.
//! * [`mapping`]: the pong to and from the shared [`Status`](crate::Status) (documented
//!   field by field there).
//! * [`client`]: one ping, resent by the shared timers, answered only by a pong that
//!   echoes our time.
//!
//! No responder: `ogp serve` does not answer pings. Every decoder here is total: on any
//! input it returns a value or a [`DecodeError`](crate::DecodeError) naming the field
//! and byte offset, never panics, and allocates at most its input's length.

pub mod client;
pub mod mapping;
pub mod wire;

pub use wire::{Advertisement, Ping, Pong, MAGIC};

use crate::protocol::{Entry, Signature, Tier, Transport};

/// Minecraft Bedrock's entry (see [`Entry`]): RakNet's magic; not served.
pub const ENTRY: Entry = Entry {
    aliases: &["mcbe", "mcpe"],
    help: "Minecraft: Bedrock Edition (RakNet unconnected ping, UDP 19132).",
    signatures: &[Signature {
        tier: Tier::Magic,
        matches: is_bedrock_datagram,
    }],
    ..Entry::new("bedrock", "Minecraft Bedrock", Transport::Datagram)
};

/// The port Bedrock servers listen on by default (IPv4; 19133 for IPv6).
pub const DEFAULT_PORT: u16 = 19132;

/// Whether `datagram` is a RakNet unconnected ping or pong (its id, then the magic where
/// that packet has it).
pub fn is_bedrock_datagram(datagram: &[u8]) -> bool {
    wire::packet_kind(datagram).is_some()
}
