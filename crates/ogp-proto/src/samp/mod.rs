//! SA-MP (San Andreas Multiplayer) and open.mp's query: the client side, sans-IO.
//!
//! * [`wire`]: the 11-byte requests (`SAMP`, the server's address and port, an opcode:
//!   `i` information, `r` rules, `c` and `d` players, `o` open.mp's extra information,
//!   `p` ping) and their replies, decoded through the bounded reader, strings in the
//!   server's code page ([`Charset`](crate::Charset)).
//! * [`client`]: the information, then the rules, players and open.mp's information
//!   together; the replies mapped to the shared [`Status`](crate::Status).
//!
//! * [`vcmp`]: VC:MP (Vice City Multiplayer), the same query in another dialect.
//!
//! Servers answer on their game port (default 7777). No responder. Every decoder here
//! is total: on any input it returns a value or a [`DecodeError`](crate::DecodeError),
//! never panics, and allocates at most a small multiple of its input.

pub mod client;
pub mod vcmp;
pub mod wire;

pub use wire::{decode_reply, decode_reply_as, decode_reply_with, Dialect, Reply, Request, MAGIC};

use crate::protocol::{Entry, Signature, Tier, Transport};

/// SA-MP's entry (see [`Entry`]): requests and replies start with `SAMP`; default port
/// 7777; not served.
pub const ENTRY: Entry = Entry {
    aliases: &["sa-mp", "openmp", "open.mp", "omp", "gtasam", "gtasao"],
    help: "SA-MP and open.mp (port 7777): `SAMP`, the address, port and i, r, c, d, o; \
        strings in the server's code page (--charset).",
    default_port: Some(7777),
    signatures: &[Signature {
        tier: Tier::Magic,
        matches: |d| d.len() >= wire::HEADER_LEN && d.starts_with(&MAGIC),
    }],
    ..Entry::new("samp", "SA-MP", Transport::Datagram)
};
