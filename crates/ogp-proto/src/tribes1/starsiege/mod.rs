//! Starsiege (2009): Tribes 1's query ([`crate::tribes1`]) with the request type `72`.

use super::STARSIEGE;
use crate::protocol::{Entry, Signature, Tier, Transport};

pub use super::{decode_reply, Reply};

/// Starsiege's entry (see [`Entry`]).
pub const ENTRY: Entry = Entry {
    aliases: &[],
    help: "Starsiege (port 29001): `72` and a challenge, answered by Tribes 1's header, the \
        limits and the players with their teams.",
    auto: false,
    default_port: Some(29001),
    signatures: &[Signature {
        tier: Tier::Weak,
        matches: |d| {
            d.len() > 4 && d.first() == Some(&(STARSIEGE + 1)) && d.get(3) == Some(&STARSIEGE)
        },
    }],
    ..Entry::new("starsiege", "Starsiege", Transport::Datagram)
};

/// The Starsiege machine: Tribes 1's with the other request type.
pub mod client {
    use crate::client_oneshot::oneshot_machine;
    use crate::protocol::Protocol;
    use crate::tribes1::client::Tribes;

    pub use crate::tribes1::client::{reply_to_status, Details};

    oneshot_machine!(Protocol::Starsiege, Tribes<0x72>, Details);
}
