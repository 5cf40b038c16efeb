//! QuakeWorld's connectionless `status` query, as MVDSV, FTE, ezQuake's and id's
//! QuakeWorld servers answer it: a client, sans-IO (Quake 2's `status`, the same
//! exchange with another reply word, is [`crate::quake2`]).
//!
//! * [`wire`]: the `status` request and the `n` (QuakeWorld) and `print` (Quake 2)
//!   replies: `FF FF FF FF`, the reply word, one `\key\value` line, then one line per
//!   player; the info string and player lines are read by the parser Quake III's
//!   `statusResponse` shares (`infostring.rs`), with caps on lines, variables and
//!   players.
//! * [`mapping`]: the server variables and player lines to the shared
//!   [`Status`](crate::Status) (documented key by key there).
//! * [`client`]: one `status`, retried on the shared client core.
//!
//! Every decoder here is total: on any input it returns a value or a
//! [`DecodeError`](crate::DecodeError) naming the field and byte offset, never panics,
//! and allocates at most a small multiple of its input.

pub mod client;
pub mod mapping;
pub mod wire;

pub use wire::{decode_reply, decode_reply_with, DecodeLimits, Dialect, PlayerLine, Reply};

/// The first four bytes of every connectionless datagram.
pub const PREFIX: [u8; 4] = [0xff; 4];

use crate::protocol::{Entry, Signature, Tier, Transport};

/// QuakeWorld's entry (see [`Entry`]): `FF FF FF FF status`, answered by `n`.
pub const ENTRY: Entry = Entry {
    aliases: &["qw", "qws"],
    help: "QuakeWorld (MVDSV, FTE, ezQuake, KTX and other mods; qstat's -qws): \
        `status 23`, answered by the server info and one line per player.",
    signatures: &[Signature {
        tier: Tier::Magic,
        matches: is_quakeworld_datagram,
    }],
    default_port: Some(27500),
    ..Entry::new("quakeworld", "QuakeWorld", Transport::Datagram)
};

/// Whether `datagram` is a QuakeWorld `status` request with flags (`FF FF FF FF status
/// 23`) or reply (`FF FF FF FF n\…`).
pub fn is_quakeworld_datagram(datagram: &[u8]) -> bool {
    wire::reply_dialect(datagram) == Some(Dialect::QuakeWorld)
        || wire::request_dialect(datagram) == Some(Dialect::QuakeWorld)
}
