//! Mumble's UDP ping (the voice server `murmurd` / `mumble-server`): the client side,
//! sans-IO.
//!
//! * [`wire`]: the 12-byte request (`00 00 00 00` and an 8-byte ident) and the 24-byte
//!   reply (the server's version, the ident echoed, users, max users, the bandwidth
//!   allowed per user), decoded through the bounded reader.
//! * [`client`]: one request, resent by the shared timers, answered only by a reply
//!   that echoes our ident; the reply mapped to the shared [`Status`](crate::Status)
//!   (`game_version`, `player_count`, `slot_max`, and the rules `version` and
//!   `bandwidth`).
//!
//! The ping carries no server name, channel nor user list: those are only told to a
//! client that logs in over TLS. Mumble answers on its voice port (default 64738, TCP
//! and UDP alike). No responder. The decoder is total: on any input it returns a value
//! or a [`DecodeError`](crate::DecodeError), never panics, and allocates nothing.

pub mod client;
pub mod wire;

pub use wire::{decode_reply, Reply, Request, REPLY_LEN, REQUEST_LEN};

use crate::protocol::{Entry, Signature, Tier, Transport};

/// Mumble's entry (see [`Entry`]): the ping has no magic, but our pings end their ident
/// with `ogp!` ([`Request::new`]), so such a 12-byte ping, and a 24-byte reply that
/// echoes it, are surely Mumble's;
/// any other 24-byte reply whose version's first byte is 0, and a 12-byte request
/// starting with four zeros, are only a guess of the last resort (after GameSpy v3's
/// replies, which also start with `00`). Default port 64738; not served.
pub const ENTRY: Entry = Entry {
    aliases: &["mumbleping", "murmur"],
    help: "Mumble's UDP ping (port 64738): 12 bytes with an ident, answered by the \
        version, users, max users and bandwidth.",
    default_port: Some(64738),
    signatures: &[
        Signature {
            tier: Tier::Magic,
            matches: |d| d.len() == REPLY_LEN && d.get(8..12) == Some(wire::OUR_IDENT_TAIL),
        },
        Signature {
            tier: Tier::Magic,
            matches: |d| {
                d.len() == REQUEST_LEN
                    && d.starts_with(&[0; 4])
                    && d.get(8..12) == Some(wire::OUR_IDENT_TAIL)
            },
        },
        Signature {
            tier: Tier::Weak,
            matches: |d| d.len() == REPLY_LEN && d.first() == Some(&0),
        },
        Signature {
            tier: Tier::Weak,
            matches: |d| d.len() == REQUEST_LEN && d.starts_with(&[0; 4]),
        },
    ],
    ..Entry::new("mumble", "Mumble", Transport::Datagram)
};
