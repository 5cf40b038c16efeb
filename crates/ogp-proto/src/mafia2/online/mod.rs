//! Mafia II Online (`M2Online`): Mafia II Multiplayer's query ([`crate::mafia2`]) with
//! its own magic, and a ping after each player's name.

use super::MAGIC_ONLINE;
use crate::protocol::{Entry, Signature, Tier, Transport};

pub use super::{decode_reply, Reply};

/// Mafia II Online's entry (see [`Entry`]).
pub const ENTRY: Entry = Entry {
    aliases: &["m2o"],
    help: "Mafia II Online (the game port + 1, 27016): `M2Online`, answered as Mafia II \
        Multiplayer's query with a ping per player.",
    auto: false,
    default_port: Some(27016),
    signatures: &[Signature {
        tier: Tier::Magic,
        matches: |d| d.starts_with(MAGIC_ONLINE),
    }],
    ..Entry::new("mafia2online", "Mafia II Online", Transport::Datagram)
};

/// The Mafia II Online machine: Mafia II Multiplayer's with the other magic.
pub mod client {
    use crate::client_oneshot::oneshot_machine;
    use crate::mafia2::client::Mafia2;
    use crate::protocol::Protocol;

    pub use crate::mafia2::client::{reply_to_status, Details};

    oneshot_machine!(Protocol::Mafia2online, Mafia2<true>, Details);
}
