//! The Unreal 2 engine's native query, as Unreal Tournament 2003 and 2004, Killing Floor,
//! Red Orchestra, Darkest Hour, Devastation and Unreal 2 XMP answer it on the game port
//! plus one (UT2004: 7777, queried on 7778): the client side, sans-IO.
//!
//! * [`wire`]: the five-byte requests (`79 00 00 00` and `00` server information, `01`
//!   rules, `02` players) and the replies, their length-prefixed Latin-1 or UCS-2
//!   strings and `1B RR GG BB` colour codes, decoded through the bounded reader with
//!   caps on rules, players and datagrams.
//! * [`mapping`]: the replies to the shared [`Status`](crate::Status) (documented field
//!   by field there), Killing Floor's extra information fields included.
//! * [`client`]: the three steps on the shared client core, gathering the replies that
//!   come in several datagrams.
//!
//! No responder: `ogp serve` does not answer it. Every decoder here is total: on any
//! input it returns a value or a [`DecodeError`](crate::DecodeError) naming the field
//! and byte offset, never panics, and allocates at most a small multiple of its input.

pub mod client;
pub mod mapping;
pub mod wire;

pub use wire::{decode_reply, DecodeLimits, Info, Kind, PlayerEntry, Reply, Request};

use crate::protocol::{Entry, Signature, Tier, Transport};

/// Unreal 2's entry (see [`Entry`]): a version word and a kind byte; not served.
pub const ENTRY: Entry = Entry {
    aliases: &["ut2s", "ut2004s"],
    help: "Unreal 2 engine (UT2003/UT2004, Killing Floor, Red Orchestra): server info, \
        rules and players on the game port + 1.",
    steps: 3,
    default_port: Some(DEFAULT_PORT),
    signatures: &[Signature {
        tier: Tier::Broad,
        matches: is_unreal2_datagram,
    }],
    ..Entry::new("unreal2", "Unreal 2", Transport::Datagram)
};

/// The query port of a game port: the game port plus this.
pub const QUERY_PORT_OFFSET: u16 = 1;

/// The query port of UT2004's default game port 7777 (the entry's default port).
pub const DEFAULT_PORT: u16 = 7778;

/// Whether `datagram` is an Unreal 2 request (five bytes) or reply (a version whose
/// high bytes are zero, then `00`, `01` or `02`).
pub fn is_unreal2_datagram(datagram: &[u8]) -> bool {
    wire::header(datagram).is_some()
}
