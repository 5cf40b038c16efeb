//! Quake 2's connectionless `status` query (id's Quake 2, Yamagi, Q2PRO, R1Q2 and the
//! games on its engine): a client, sans-IO. The exchange is QuakeWorld's with another
//! reply word (`print`) and a shorter player line (`frags ping "name"`): the wire format
//! and mapping are [`crate::quakeworld`]'s.

pub mod client;

pub use crate::quakeworld::wire::{decode_reply, decode_reply_with, DecodeLimits, Reply};

use crate::protocol::{Entry, Signature, Tier, Transport};
use crate::quakeworld::wire::{reply_dialect, request_dialect, Dialect};

/// Quake 2's entry (see [`Entry`]): `FF FF FF FF status`, answered by `print`.
pub const ENTRY: Entry = Entry {
    aliases: &["q2", "q2s"],
    help: "Quake 2 and its engine's games (qstat's -q2s): `status`, answered by `print`, \
        the server info and one line per player.",
    signatures: &[Signature {
        tier: Tier::Magic,
        matches: is_quake2_datagram,
    }],
    default_port: Some(27910),
    ..Entry::new("quake2", "Quake 2", Transport::Datagram)
};

/// Whether `datagram` is a bare `status` request (`FF FF FF FF status`) or a Quake 2
/// reply (`FF FF FF FF print\n`).
pub fn is_quake2_datagram(datagram: &[u8]) -> bool {
    reply_dialect(datagram) == Some(Dialect::Quake2)
        || request_dialect(datagram) == Some(Dialect::Quake2)
}
