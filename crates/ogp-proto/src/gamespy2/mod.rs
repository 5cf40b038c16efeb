//! GameSpy v2 (Halo, Battlefield Vietnam, Soldier of Fortune II, SWAT 4, Unreal
//! Tournament 2003's GameSpy mode, America's Army…): the client side, sans-IO.
//!
//! * [`wire`]: the request (`FE FD 00`, a 4-byte id, then `FF` or `00` for each of the
//!   three sections: server, players, teams) and the single-datagram reply (`00`, the id
//!   echoed, then the sections), decoded through the bounded reader.
//! * [`mapping`]: the reply to the shared [`Status`](crate::Status) (the key names are
//!   GameSpy v3's, so its mapping is shared; teams are told 0- or 1-based there).
//! * [`client`]: one request, resent by the shared timers, answered only by a reply
//!   that echoes our id.
//!
//! The request is GameSpy v3's sub-protocol A without its fourth flag byte (`FE FD 00
//! <id> FF FF FF`, 10 bytes); the replies differ: GameSpy v3 writes `splitnum` after the
//! id, GameSpy v2 does not.
//! No responder. Every decoder here is total: on any input it returns a value or a
//! [`DecodeError`](crate::DecodeError), never panics, and allocates at most a small
//! multiple of its input.

pub mod client;
pub mod mapping;
pub mod wire;

pub use wire::{decode_reply, decode_reply_with, Reply, Request};

use crate::protocol::{Entry, Signature, Tier, Transport};

/// GameSpy v2's entry (see [`Entry`]): requests told by their length (10 bytes),
/// replies by their first key after the id (no `splitnum`); not served.
pub const ENTRY: Entry = Entry {
    aliases: &["gs2"],
    help: "GameSpy v2 (Halo, Battlefield Vietnam, SWAT 4, Soldier of Fortune II…): \
        FE FD 00, one reply with server, player and team sections.",
    signatures: &[
        Signature {
            tier: Tier::Magic,
            matches: is_reply,
        },
        Signature {
            tier: Tier::Magic,
            matches: is_request,
        },
    ],
    ..Entry::new("gamespy2", "GameSpy v2", Transport::Datagram)
};

/// Whether `datagram` is a GameSpy v2 request: `FE FD 00`, an id and three section
/// bytes (`00` or `FF`), 10 bytes in all (GameSpy v3's requests are longer).
pub fn is_request(datagram: &[u8]) -> bool {
    datagram.len() == wire::REQUEST_LEN
        && datagram.starts_with(&wire::REQUEST_MAGIC)
        && datagram
            .get(7..)
            .is_some_and(|s| s.iter().all(|&b| b == 0 || b == 0xff))
}

/// Whether `datagram` looks like a GameSpy v2 reply: `00`, a 4-byte id, then not
/// GameSpy v3's `splitnum` but a key of printable ASCII ended by a NUL (`hostname`), or
/// the `00` that starts a player section when no server section was asked for.
pub fn is_reply(datagram: &[u8]) -> bool {
    let (Some(0), Some(rest)) = (datagram.first(), datagram.get(5..)) else {
        return false;
    };
    if rest.starts_with(wire::SPLITNUM) {
        return false;
    }
    let head = rest.get(..rest.len().min(64)).unwrap_or_default();
    // What follows the first NUL holds another: a key's value ends with one, and so does
    // the players section's first field name (or its empty end) after its count. A
    // 12-byte Mumble ping (`00 00 00 00`, an 8-byte ident) has at most stray zeros.
    let nul_after = |from: usize| rest.get(from..).is_some_and(|r| r.contains(&0));
    match head.iter().position(|&b| b == 0) {
        Some(0) => matches!(rest.get(1), Some(&c) if c <= 64) && rest.len() >= 3 && nul_after(2),
        Some(n) => {
            head.get(..n)
                .is_some_and(|k| k.iter().all(|b| b.is_ascii_graphic()))
                && nul_after(n + 1)
        }
        None => false,
    }
}
