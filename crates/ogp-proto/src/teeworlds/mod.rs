//! Teeworlds (0.6, DDNet, 0.7): the client side, sans-IO. Two protocols share this
//! folder, because their servers differ in what they answer:
//!
//! * `teeworlds` (this module's [`ENTRY`]): Teeworlds 0.6 and DDNet. One `gie3` in
//!   DDNet's extended header; vanilla 0.6 answers `inf3`, DDNet answers `iext` and, past
//!   one datagram of clients, `iex+` continuations ([`client`]).
//! * `teeworlds7` ([`v7`], also reachable as `crate::teeworlds7`): Teeworlds 0.7. Its
//!   servers answer nothing before a token handshake (a 520-byte control packet), then
//!   `gie3` with both tokens. A protocol of its own, so that auto-detection sends each
//!   server one probe per protocol per round, and a 0.6-only server is never sent the
//!   large handshake by a query that asked for 0.6.
//!
//! * [`wire`]: both dialects' requests and replies, decoded through the bounded reader.
//! * [`mapping`]: a reply to the shared [`Status`](crate::Status) (field by field there).
//!
//! The default port is 8303. No responder. Every decoder here is total: on any input it
//! returns a value or a [`DecodeError`](crate::DecodeError), never panics, and allocates
//! at most a small multiple of its input.

pub mod client;
pub mod mapping;
pub mod v7;
pub mod wire;

pub use wire::{decode_reply6, decode_reply7, Client, Info, Kind, More, Reply6};

use std::time::Instant;

use crate::client_core::{Event, Exchange};
use crate::protocol::{Entry, Signature, Tier, Transport};

/// Takes an info reply (`what`: `inf3`, `iext`) of `bytes` that came at `now` as the
/// answer's first datagram: its warnings, the count, the ping and the event.
pub(crate) fn took_info<D>(
    x: &mut Exchange<D>,
    now: Instant,
    what: &'static str,
    bytes: usize,
    info: &Info,
) {
    x.warn(info.warnings.iter());
    x.received(1, bytes);
    x.ping(now);
    x.event(Event::Reply {
        what,
        bytes,
        datagrams: 1,
    });
}

/// The port servers use unless told otherwise.
pub const DEFAULT_PORT: u16 = 8303;

/// Teeworlds 0.6 / DDNet's entry (see [`Entry`]): replies start with `FF`×10 and
/// `inf3`, `iext` or `iex+`; not served.
pub const ENTRY: Entry = Entry {
    aliases: &["tee", "tees", "ddnet", "teeworlds6"],
    help: "Teeworlds 0.6 and DDNet: gie3 in DDNet's extended header, answered by inf3 \
        (0.6) or iext and its iex+ continuations (DDNet).",
    signatures: &[
        Signature {
            tier: Tier::Magic,
            matches: wire::is_reply6,
        },
        Signature {
            tier: Tier::Magic,
            matches: wire::is_request6,
        },
    ],
    default_port: Some(DEFAULT_PORT),
    ..Entry::new("teeworlds", "Teeworlds 0.6 / DDNet", Transport::Datagram)
};
