//! HexenWorld's connectionless `status` query (Raven's HexenWorld and its ports,
//! Hammer of Thyrion's `hwsv`): a client, sans-IO. The exchange is QuakeWorld's with a
//! fifth `FF` before the request and the reply: the wire format and mapping are
//! [`crate::quakeworld`]'s.

pub mod client;

pub use crate::quakeworld::wire::{decode_reply, decode_reply_with, DecodeLimits, Reply};

use crate::protocol::{Entry, Signature, Tier, Transport};
use crate::quakeworld::wire::{reply_dialect, request_dialect, Dialect};

/// HexenWorld's entry (see [`Entry`]): `FF FF FF FF FF status`, answered by
/// `FF FF FF FF FF n`.
pub const ENTRY: Entry = Entry {
    aliases: &["hw", "hws"],
    help: "HexenWorld (qstat's -hws): `status` after five FF bytes, answered by the server \
        info and one line per player.",
    signatures: &[Signature {
        tier: Tier::Magic,
        matches: is_hexenworld_datagram,
    }],
    default_port: Some(26950),
    ..Entry::new("hexenworld", "HexenWorld", Transport::Datagram)
};

/// Whether `datagram` is a HexenWorld `status` request or reply.
pub fn is_hexenworld_datagram(datagram: &[u8]) -> bool {
    reply_dialect(datagram) == Some(Dialect::HexenWorld)
        || request_dialect(datagram) == Some(Dialect::HexenWorld)
}
