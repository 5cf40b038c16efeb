//! Battlefield's Frostbite query over TCP (Bad Company 2, 3, 4, Hardline, 1; Medal of
//! Honor 2010 and Warfighter), client side, sans-IO.
//!
//! * [`wire`]: the remote-administration packet (sequence, size, words) and the answers
//!   of `serverInfo` (each game's layout), `version` and `listPlayers all`, through the
//!   bounded reader.
//! * [`mapping`]: the answers to the shared [`Status`](crate::Status) (documented field
//!   by field there).
//! * [`client`]: the query as a stream machine on the shared core: connect, then
//!   `serverInfo`, `version`, `listPlayers all`, each after the previous answer; no
//!   login.
//!
//! The query port is the game's remote-administration port: 47200 for Battlefield 3, 4,
//! Hardline and 1 (game port 25200 + 22000), 48888 for Bad Company 2 and Medal of Honor.
//! Every decoder here is total: on any input it returns a value or a
//! [`DecodeError`](crate::DecodeError) naming the field and offset, never panics. No
//! responder.

pub mod client;
pub mod mapping;
pub mod wire;

pub use client::DEFAULT_PORT;

use crate::protocol::{Entry, Transport};

/// Battlefield's entry (see [`Entry`]): TCP, port 47200 when none is given; not served.
///
/// Kept out of auto-detection (`auto: false`): its probe is a TCP connection to a
/// remote-administration port, which the server logs.
pub const ENTRY: Entry = Entry {
    aliases: &["frostbite", "bfbc2"],
    help: "Battlefield's Frostbite query over TCP (serverInfo, version, listPlayers all); without a port, 47200.",
    default_port: Some(DEFAULT_PORT),
    auto: false,
    steps: 3,
    ..Entry::new("battlefield", "Battlefield (Frostbite)", Transport::Stream)
};
