//! TeamSpeak 2's TCP query, client side, sans-IO.
//!
//! * [`wire`]: the line framing (`OK` and `ERROR` lines end an answer), `key=value`
//!   lines and tab-separated tables with a header line.
//! * [`mapping`]: `si`, `pl` and `cl` to the shared [`Status`](crate::Status)
//!   (documented field by field there).
//! * [`client`]: the query as a stream machine on the shared core: the `[TS]` banner,
//!   then `sel VOICE`, `si`, `pl`, `cl` and `quit`, each after the previous answer.
//!
//! Two ports, as TeamSpeak 3: the query port we connect to (TCP 51234) and the voice port
//! `sel` names (UDP 8767 by default; `--voice-port`). No responder.

pub mod client;
pub mod mapping;
pub mod wire;

pub use client::DEFAULT_PORT;

use crate::protocol::{Entry, Transport};

/// TeamSpeak 2's entry (see [`Entry`]): TCP, port 51234 when none is given; not served.
///
/// Kept out of auto-detection (`auto: false`), as TeamSpeak 3.
pub const ENTRY: Entry = Entry {
    aliases: &["ts2"],
    help: "TeamSpeak 2's TCP query (sel, si, pl, cl); without a port, 51234; the voice port with --voice-port (8767).",
    default_port: Some(DEFAULT_PORT),
    auto: false,
    steps: 4,
    ..Entry::new("teamspeak2", "TeamSpeak 2", Transport::Stream)
};
