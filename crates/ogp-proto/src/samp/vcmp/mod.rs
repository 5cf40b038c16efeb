//! VC:MP (Vice City Multiplayer): SA-MP's query ([`crate::samp`]) with `VCMP` requests,
//! `MP04` replies and the server's version ahead of the information
//! ([`Dialect::VCMP`](super::wire::Dialect::VCMP)); `i` and `c` only. Default port 8192,
//! queried on the game port.

use crate::protocol::{Entry, Signature, Tier, Transport};

pub use super::wire::{decode_reply_as, Dialect, Reply};

/// VC:MP's entry (see [`Entry`]): requests start with `VCMP`, replies with `MP04`;
/// default port 8192; not auto-detected (SA-MP's servers are, on 7777); not served.
pub const ENTRY: Entry = Entry {
    aliases: &["vcm", "vc-mp", "vicecitymp"],
    help: "VC:MP, Vice City Multiplayer (port 8192): SA-MP's query with `VCMP` out and \
        `MP04` back, the version ahead of the information; i and c.",
    auto: false,
    default_port: Some(8192),
    signatures: &[Signature {
        tier: Tier::Magic,
        matches: |d| {
            d.len() >= super::wire::HEADER_LEN
                && (d.starts_with(&Dialect::VCMP.reply_magic)
                    || d.starts_with(&Dialect::VCMP.request_magic))
        },
    }],
    ..Entry::new("vcmp", "VC:MP", Transport::Datagram)
};

/// The VC:MP machine: SA-MP's on [`Dialect::VCMP`].
pub mod client {
    pub use crate::samp::client::{to_status, Details, QueryOptions};

    /// One VC:MP query of one server.
    pub type QueryMachine = crate::samp::client::Machine<true>;

    crate::client_core::start_query!(QueryOptions, no_id);
}
