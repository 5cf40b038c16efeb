//! ASE, the All-Seeing Eye's query (Multi Theft Auto: San Andreas, Far Cry, Chrome,
//! Purge Jihad, Soldat…): the client side, sans-IO.
//!
//! * [`wire`]: the request (`s`) and the reply (`EYE1`, nine length-prefixed fields,
//!   key/value pairs ended by an empty key, then one record per player: a flags byte and
//!   the fields its bits name: name, team, skin, score, ping, time), decoded through the
//!   bounded reader.
//! * [`mapping`]: the reply to the shared [`Status`](crate::Status) (documented field
//!   by field there).
//! * [`client`]: one request, resent by the shared timers; the first `EYE1` reply wins.
//!
//! Multi Theft Auto answers ASE on its game port + 123 (22003 → 22126). The request
//! carries no id and the reply echoes none: like qstat and gamedig, the client takes
//! the first `EYE1` datagram from the server's address. No responder. Every decoder here
//! is total: on any input it returns a value or a [`DecodeError`](crate::DecodeError),
//! never panics, and allocates at most a small multiple of its input.

pub mod client;
pub mod mapping;
pub mod wire;

pub use wire::{decode_reply, decode_reply_with, AsePlayer, Reply, MAGIC, REQUEST};

use crate::protocol::{Entry, Signature, Tier, Transport};

/// ASE's entry (see [`Entry`]): replies start with `EYE1`, the request is `s`; not
/// served.
pub const ENTRY: Entry = Entry {
    aliases: &["eye", "allseeingeye"],
    help: "ASE, the All-Seeing Eye (Multi Theft Auto on game port + 123, Far Cry…): \
        `s`, answered by EYE1 and length-prefixed fields.",
    signatures: &[
        Signature {
            tier: Tier::Magic,
            matches: |d| d.starts_with(&MAGIC),
        },
        // The request, one byte: a guess of the last resort.
        Signature {
            tier: Tier::Weak,
            matches: |d| d == REQUEST,
        },
    ],
    ..Entry::new("ase", "ASE", Transport::Datagram)
};
