//! The Quake III connectionless query protocol, as ioquake3, OpenArena, Urban Terror,
//! Call of Duty 1–4, Wolfenstein: Enemy Territory, DarkPlaces games (Xonotic, Nexuiz),
//! Warsow and FiveM speak it: both directions, sans-IO.
//!
//! * [`wire`]: the `getinfo CHALLENGE` / `getstatus [CHALLENGE]` requests and the
//!   `infoResponse` / `statusResponse` replies (`FF FF FF FF`, a command line, one
//!   `\key\value` line, then one line per player), decoded through the bounded reader
//!   with caps on lines, variables and players, and encoded back.
//! * [`color`]: the `^N` and DarkPlaces `^xRGB` colour codes, for plain names.
//! * [`mapping`]: the server variables and player lines to and from the shared
//!   [`Status`](crate::Status) (documented key by key there).
//! * [`client`]: `getinfo` with a random challenge the reply must echo, then `getstatus`,
//!   on the shared client core.
//! * [`responder`]: answers both requests from the status model; off by default (the
//!   protocol has no server challenge, so every answer goes to an unproven source).
//!
//! Every decoder here is total: on any input it returns a value or a
//! [`DecodeError`](crate::DecodeError) naming the field and byte offset, never panics,
//! and allocates at most a small multiple of its input.

pub mod client;
pub mod color;
pub mod mapping;
pub mod responder;
pub mod wire;

pub use wire::{
    decode_reply, decode_reply_with, decode_request, Command, DecodeLimits, PlayerLine, Reply,
    ReplyKind, Request,
};

/// The first four bytes of every connectionless datagram.
pub const PREFIX: [u8; 4] = [0xff; 4];

use crate::protocol::{AnswerKind as K, Entry, Serve, Signature, Tier, Transport};

/// The challenge keys' id of Quake III ([`Serve::guard_id`]): it keys the byte budgets
/// (the protocol has no challenge of ours).
pub(crate) const GUARD_ID: u8 = 6;

/// Quake III's entry (see [`Entry`]): `FF FF FF FF` and its words; served (off by
/// default).
pub const ENTRY: Entry = Entry {
    aliases: &["q3", "q3s"],
    help: "Quake III and its family (ioquake3, OpenArena, Urban Terror, Call of Duty, ET, \
        DarkPlaces, Warsow, FiveM): `getinfo` with a challenge, then `getstatus`.",
    signatures: &[Signature {
        tier: Tier::Magic,
        matches: is_quake3_datagram,
    }],
    serve: Some(Serve {
        requests: Signature {
            tier: Tier::Magic,
            matches: is_quake3,
        },
        own_port: false,
        answers: &[K::Info, K::Full],
        guard_id: GUARD_ID,
    }),
    ..Entry::new("quake3", "Quake III", Transport::Datagram)
};

/// Whether `datagram` is a Quake III query (`FF FF FF FF` then `getinfo` or
/// `getstatus`), the test a shared port uses to tell it from A2S, whose requests start
/// with the same four bytes.
pub fn is_quake3(datagram: &[u8]) -> bool {
    wire::request_command(datagram).is_some()
}

/// Whether `datagram` is a Quake III query or reply (`infoResponse`, `statusResponse`).
pub fn is_quake3_datagram(datagram: &[u8]) -> bool {
    is_quake3(datagram) || wire::reply_kind(datagram).is_some()
}
