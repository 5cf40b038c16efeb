//! NetQuake's connection-control queries (Quake and Hexen II servers, qstat's `qs` and
//! `h2s`): a client, sans-IO.
//!
//! * [`wire`]: the `CCREQ_SERVER_INFO`, `CCREQ_PLAYER_INFO` and `CCREQ_RULE_INFO`
//!   requests and their replies, decoded through the bounded reader.
//! * [`mapping`]: the replies to the shared [`Status`](crate::Status).
//! * [`client`]: server info, each player, each rule, on the shared client core.
//!
//! Every decoder here is total: on any input it returns a value or a
//! [`DecodeError`](crate::DecodeError) naming the field and byte offset, never panics.

pub mod client;
pub mod mapping;
pub mod wire;

use crate::protocol::{Entry, Signature, Tier, Transport};

/// NetQuake's entry (see [`Entry`]): a control header that says its own length, then a
/// request or reply op.
pub const ENTRY: Entry = Entry {
    aliases: &["nq", "qs", "h2s", "hexen2"],
    help: "NetQuake: Quake and Hexen II servers (qstat's -qs, -h2s): server info, each \
        player and each rule over the connection-control protocol.",
    signatures: &[Signature {
        tier: Tier::Magic,
        matches: wire::is_netquake,
    }],
    default_port: Some(26000),
    steps: 3,
    ..Entry::new("netquake", "NetQuake", Transport::Datagram)
};
