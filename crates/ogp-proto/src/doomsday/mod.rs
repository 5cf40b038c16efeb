//! Doomsday's beacon (the Doomsday Engine's servers, `doomsday-server` 2.x: Doom,
//! Heretic, Hexen and their add-ons): the client side, sans-IO.
//!
//! * [`wire`]: the request (the 19 bytes `Doomsday Beacon 1.1`) and the reply (the
//!   server's TCP port, then its serialized server information, zlib-packed), decoded
//!   through the bounded reader and inflated with a hard cap.
//! * [`client`]: one request, resent by the shared timers; the first reply from the
//!   server's address wins (the request carries no id); the record mapped to the
//!   shared [`Status`](crate::Status).
//!
//! The beacon is a UDP socket of its own, apart from the TCP port players join
//! (`-port`, 13209 by default): it binds the first free port of 13209 to 13224 (on all
//! addresses), whatever the TCP port, so a second server on one machine answers on
//! 13210. No responder. The decoder is total: on any input it returns a value or a
//! [`DecodeError`](crate::DecodeError), never panics, and allocates at most
//! [`wire::MAX_INFLATED`] bytes and a bounded number of values.

pub mod client;
pub mod wire;

pub use wire::{decode_reply, Reply, REQUEST};

use crate::protocol::{Entry, Signature, Tier, Transport};

/// Doomsday's entry (see [`Entry`]): the request is its own magic; a reply (a port, a
/// size and a zlib header) only a broad guess. Default port 13209; not served.
pub const ENTRY: Entry = Entry {
    aliases: &["doomsday-beacon", "deng"],
    help: "Doomsday's beacon (UDP 13209 to 13224; Doom, Heretic, Hexen on the Doomsday \
        Engine): `Doomsday Beacon 1.1`, answered by the server's record, zlib-packed: \
        name, map, game, players, max players, version.",
    default_port: Some(13209),
    signatures: &[
        Signature {
            tier: Tier::Magic,
            matches: |d| d == REQUEST,
        },
        Signature {
            tier: Tier::Broad,
            matches: wire::looks_like_reply,
        },
    ],
    ..Entry::new("doomsday", "Doomsday", Transport::Datagram)
};
