//! GameSpy v1 (the "QR" query of Unreal Tournament, Battlefield 1942, Medal of Honor:
//! Allied Assault, Serious Sam, Deus Ex and many games of 1999–2004), client side,
//! sans-IO: plain-text `\key\value` queries and replies over UDP.
//!
//! * [`wire`]: the queries (`\status\`, `\basic\`, `\info\`, `\rules\`, `\players\`,
//!   `\teams\`, `\echo\TEXT`) and reply packets (`\queryid\ID.PART`, `\final\`), decoded
//!   through the bounded reader and encoded back, and [`wire::split_reply`] to write a
//!   reply as parts.
//! * [`reassembly`]: a reply split over several datagrams put back together in any
//!   order, bounded in parts, bytes and pairs, with what is missing when parts are lost.
//! * [`mapping`]: the pairs to and from the shared [`Status`](crate::Status), with each
//!   game's dialect (documented key by key there and in `docs/gamespy1.md`).
//! * [`client`]: the query state machine on the shared client core.
//! * [`heartbeat`]: `\heartbeat\PORT\gamename\NAME[\statechanged\N]`, what a server
//!   sends its master.
//!
//! Every decoder here is total: on any input it returns a value or a
//! [`DecodeError`](crate::DecodeError) naming the field and byte offset, never panics,
//! and holds at most a small multiple of its input within the documented caps
//! ([`wire::PacketLimits`]: 8 KiB and 1,024 pairs a datagram;
//! [`reassembly::ReassemblyLimits`]: 16 parts, 64 KiB and 4,096 pairs a reply).
//!
//! ## Its entry
//!
//! [`ENTRY`] plugs GameSpy v1 into the client registry, detection, `decode` and the
//! command line:
//!
//! * **name** `gamespy1`, label `GameSpy v1`, aliases `gps` (qstat's type), `gs1`,
//!   `gamespy`; auto-detected.
//! * **client**: `gamespy1::client::QueryMachine` (`QueryOptions`, `Details`), started
//!   with `start_query!(QueryOptions)` (the query id picks the echo text).
//! * **probe**: [`PROBE`], `\status\` (8 bytes). Every GameSpy v1 server answers it;
//!   none of the other protocols' servers does (they want binary magic first).
//! * **signature of a first reply** ([`is_gamespy1_reply`]): a datagram that starts with
//!   `\`, decodes as pairs, and carries `\queryid\` or `\final\` or one of the keys
//!   `gamename`, `hostname`, `echo`. Quake III replies start with `FF FF FF FF`, A2S
//!   with `FF FF FF FF` or `FE FF FF FF`, GameSpy v3 with a type byte `00`–`09`, OGP
//!   with its magic: none starts with `\` (0x5C).
//! * **signature of a query** ([`is_gamespy1`]), for a shared responder port: `\` then
//!   one of the query words.
//! * **default ports** (the query port; the catalogue's hints), from GameQ's and
//!   opengsq's game lists: Unreal Tournament `ut` 7778 (game port + 1), Battlefield 1942
//!   `bfield1942` 23000, Medal of Honor: Allied Assault `mohaa` 12300 (game port + 97),
//!   Serious Sam `serioussam` 25601 (game port + 1).
//! * **catalogue identification**: the `gamename` value (`ut`, `bfield1942`, `mohaa`,
//!   `serioussam`, `serioussamse`…), in `Status::game_name`.
//! * **master**: [`heartbeat::decode_heartbeat`] reads what servers send to UDP 27900.

pub mod client;
pub mod heartbeat;
pub mod mapping;
pub mod reassembly;
pub mod wire;

pub use heartbeat::{decode_heartbeat, is_heartbeat, Heartbeat};
pub use mapping::{reply_to_status, status_to_pairs, Mapped};
pub use reassembly::{Pushed, Reassembler, ReassemblyError, ReassemblyLimits};
pub use wire::{
    decode_packet, decode_packet_with, decode_query, split_reply, Packet, PacketLimits, Query,
    QueryId,
};

use crate::protocol::{Entry, Protocol, Signature, Tier, Transport};

/// The protocol answers and errors are reported under.
pub(crate) const PROTOCOL: Protocol = Protocol::Gamespy1;

/// GameSpy v1's entry (see [`Entry`]): `\status\` and its `\key\value` reply parts,
/// both told apart by their first byte `\` (no other protocol's datagrams start with
/// it); a client only.
pub const ENTRY: Entry = Entry {
    aliases: &["gps", "gs1", "gamespy"],
    help: "GameSpy v1 (Unreal Tournament, Battlefield 1942, MoHAA, Serious Sam, Deus Ex…): \
        `\\status\\` over UDP, the reply's `\\key\\value` parts put back together.",
    signatures: &[
        Signature {
            tier: Tier::Magic,
            matches: is_gamespy1_reply,
        },
        Signature {
            tier: Tier::Magic,
            matches: is_gamespy1,
        },
    ],
    ..Entry::new("gamespy1", "GameSpy v1", Transport::Datagram)
};

/// The auto-detection probe: `\status\`.
pub const PROBE: &[u8] = b"\\status\\";

/// The query words a server answers.
const WORDS: [&str; 7] = [
    "status", "basic", "info", "rules", "players", "teams", "echo",
];

/// Whether `datagram` is a GameSpy v1 query (`\` and a query word), the test a shared
/// port uses to tell it from the binary protocols.
pub fn is_gamespy1(datagram: &[u8]) -> bool {
    let Some(rest) = datagram.strip_prefix(b"\\") else {
        return false;
    };
    WORDS.iter().any(|w| {
        rest.get(..w.len())
            .is_some_and(|h| h.eq_ignore_ascii_case(w.as_bytes()))
            && matches!(rest.get(w.len()), None | Some(b'\\'))
    })
}

/// Whether `datagram` looks like a GameSpy v1 reply (see the module's documentation).
pub fn is_gamespy1_reply(datagram: &[u8]) -> bool {
    if datagram.first() != Some(&b'\\') {
        return false;
    }
    match decode_packet(datagram) {
        Ok(d) => {
            let p = &d.packet;
            p.query_id.is_some()
                || p.is_final
                || ["gamename", "hostname", "echo"]
                    .iter()
                    .any(|k| p.get(k).is_some())
        }
        Err(_) => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn signatures() {
        assert!(is_gamespy1(PROBE));
        assert!(is_gamespy1(b"\\basic\\\\info\\"));
        assert!(is_gamespy1(b"\\echo\\x"));
        assert!(!is_gamespy1(b"\\statusx\\"));
        assert!(!is_gamespy1(b"\xff\xff\xff\xffgetstatus"));
        assert!(is_gamespy1_reply(b"\\gamename\\ut\\queryid\\1.1"));
        assert!(is_gamespy1_reply(b"\\echo\\x\\final\\"));
        assert!(!is_gamespy1_reply(b"\\status\\"));
        assert!(!is_gamespy1_reply(b"\xff\xff\xff\xffinfoResponse\n\\a\\b"));
    }

    /// The catalogue's GameSpy v1 games put its probe first on their query ports.
    #[cfg(feature = "games")]
    #[test]
    fn its_probe_goes_first_on_its_games_ports() {
        for port in [7778, 23000, 12300, 25601] {
            assert_eq!(
                crate::detect::probe_order(port)[0],
                Protocol::Gamespy1,
                "{port}"
            );
        }
    }

    /// Detection names GameSpy v1 for its probe and replies (a heartbeat too), and no
    /// other protocol's probe or reply as GameSpy v1.
    #[test]
    fn detection_tells_gamespy1_apart() {
        use crate::detect::guess;
        for d in [
            PROBE,
            b"\\echo\\0000abcd",
            b"\\hostname\\h\\queryid\\4.1",
            b"\\final\\\\queryid\\4.2",
            b"\\heartbeat\\7778\\gamename\\ut",
        ] {
            assert_eq!(guess(d), Some(Protocol::Gamespy1), "{d:?}");
        }
        for d in [
            &b"\xff\xff\xff\xffTSource Engine Query\0"[..],
            b"\xff\xff\xff\xffgetinfo xxx",
            b"\xff\xff\xff\xffstatusResponse\n\\sv_hostname\\x\n",
            b"\xfe\xfd\x09\x01\x02\x03\x04",
            b"\x00\x01\x02\x03\x04hostname\0x\0",
            b"\\unknownword\\",
        ] {
            assert_ne!(guess(d), Some(Protocol::Gamespy1), "{d:?}");
        }
    }
}
