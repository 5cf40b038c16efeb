//! Teeworlds 0.7 (the `teeworlds7` protocol): a token handshake, then `gie3`. The wire
//! format is in [`super::wire`], the mapping in [`super::mapping`].

pub mod client;

use super::wire;
use crate::protocol::{Entry, Signature, Tier, Transport};

/// Teeworlds 0.7's entry (see [`Entry`]): connectionless packets start with `21`, two
/// tokens and `FF FF FF FF` with `inf3` or `gie3`; the handshake's control packets with
/// `04 00 00`, a token and `05`; two steps (the token, the info); not served.
pub const ENTRY: Entry = Entry {
    aliases: &["tee7", "teeworlds07"],
    help: "Teeworlds 0.7: a token handshake (a 520-byte control packet), then gie3 \
        with both tokens, answered by inf3.",
    signatures: &[
        Signature {
            tier: Tier::Magic,
            matches: wire::is_packet7,
        },
        Signature {
            tier: Tier::Weak,
            matches: wire::is_token7,
        },
    ],
    default_port: Some(super::DEFAULT_PORT),
    steps: 2,
    ..Entry::new("teeworlds7", "Teeworlds 0.7", Transport::Datagram)
};
