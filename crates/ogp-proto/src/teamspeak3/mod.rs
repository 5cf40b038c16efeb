//! TeamSpeak 3's ServerQuery over TCP, client side, sans-IO.
//!
//! * [`wire`]: the text framing: escaping, records, the `error` line.
//! * [`mapping`]: `serverinfo`, `clientlist` and `channellist` to the shared
//!   [`Status`](crate::Status) (documented field by field there).
//! * [`client`]: the query as a stream machine on the shared core: the banner, then
//!   `use port=VOICE`, an optional `login`, `serverinfo`, `clientlist`, `channellist
//!   -topic` and `quit`, each after the previous answer.
//!
//! Two ports: the ServerQuery port we connect to (TCP 10011, the target's port) and the
//! virtual server's voice port that `use` names (UDP 9987 by default;
//! [`client::QueryOptions::voice_port`], `--voice-port` on the command line). Every
//! decoder here is total. No responder.

pub mod client;
pub mod mapping;
pub mod wire;

pub use client::DEFAULT_PORT;

use crate::protocol::{Entry, Transport};

/// TeamSpeak 3's entry (see [`Entry`]): TCP, port 10011 when none is given; not served.
///
/// Kept out of auto-detection (`auto: false`): a ServerQuery connection counts against
/// the server's flood limit for our address.
pub const ENTRY: Entry = Entry {
    aliases: &["ts3"],
    help: "TeamSpeak 3 ServerQuery over TCP (use, serverinfo, clientlist, channellist); without a port, 10011; the voice port with --voice-port (9987).",
    default_port: Some(DEFAULT_PORT),
    auto: false,
    steps: 4,
    ..Entry::new("teamspeak3", "TeamSpeak 3", Transport::Stream)
};
