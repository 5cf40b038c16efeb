//! [`Protocol`]: which query protocol, the one name every layer uses (codecs, client,
//! responder, scanner, command line, JSON output), and [`Entry`], what a protocol tells
//! the rest of the crate about itself.
//!
//! A protocol is its folder plus one line in `for_each_protocol!`'s table below. The
//! folder's `mod.rs` holds its [`Entry`] (`pub const ENTRY: Entry`): names, transport,
//! whether auto-detection tries it, the signatures that tell its datagrams apart, and
//! what its responder answers, if it has one. Everything else is derived from the table
//! and the entries: this enum and its names, parsing and lists ([`Protocol::ALL`],
//! [`Protocol::AUTO`], [`Protocol::AUTO_STREAM`]), the client's
//! [`Machine`](crate::client::Machine), [`Options`](crate::client::Options) and
//! [`Details`](crate::client::Details), the [responder](crate::responder)'s settings,
//! outcomes and dispatch, [`detect::guess`](crate::detect::guess), the answer kinds and
//! the challenge keys' protocol ids. `docs/protocols.md` ("Adding a protocol") shows
//! an entry and the lines outside the folder.
//!
//! This module sits below the protocols: the table names each folder by its identifier
//! only, and `crate::entries`, above them, binds each variant to its folder's entry.

use std::fmt;

/// **The one table of protocols**, in [`Protocol::ALL`] order (its order is also
/// [`Protocol::AUTO`]'s, the rank that settles a tie when a server speaks several).
/// Each line: the [`Protocol`] variant, its folder (which holds `ENTRY`, and
/// `client::{QueryMachine, QueryOptions, Details}`), and, for a protocol `ogp serve`
/// answers, `serve(Config, Responder, Outcome)`: the types of its folder's `responder`
/// module. A `#[cfg(...)]` before a line gates its client and responder (the variant and
/// its entry stay, so that its name parses and its datagrams are still recognised).
///
/// It calls `$callback!` with the table; the crate's generators (the enum here, the
/// entries, the client registry, the responders) each take what they need from it.
macro_rules! for_each_protocol {
    ($callback:ident) => {
        $callback! {
            Ogp => ogp, serve(OgpConfig, OgpResponder, OgpOutcome);
            Gamespy3 => gamespy3, serve(Gs3Config, Gs3Responder, Gs3Outcome);
            A2s => a2s, serve(A2sConfig, A2sResponder, A2sOutcome);
            #[cfg(feature = "gqp")]
            Gqp => gqp, serve(GqpConfig, GqpResponder, GqpOutcome);
            OgpDraft => ogp_draft, serve(DraftConfig, DraftResponder, DraftOutcome);
            Quake3 => quake3, serve(Q3Config, Q3Responder, Q3Outcome);
            Bedrock => bedrock;
            Minecraft => minecraft;
            Gamespy1 => gamespy1;
            Unreal2 => unreal2;
            Gamespy2 => gamespy2;
            Ase => ase;
            Teeworlds => teeworlds;
            Teeworlds7 => teeworlds7;
            Openttd => openttd;
            Doom3 => doom3;
            Minetest => minetest;
            Mumble => mumble;
            Doom => doom;
            Samp => samp;
            Cube2 => cube2;
            Quakeworld => quakeworld;
            Quake2 => quake2;
            Hexenworld => hexenworld;
            Netquake => netquake;
            Doomsday => doomsday;
            Fivem => fivem;
            Battlefield => battlefield;
            Teamspeak3 => teamspeak3;
            Teamspeak2 => teamspeak2;
            Eco => eco;
            Eldewrito => eldewrito;
            Cs2d => cs2d;
            Satisfactory => satisfactory;
            Savage2 => savage2;
            Mafia2mp => mafia2;
            Mafia2online => mafia2online;
            Tribes1 => tribes1;
            Starsiege => starsiege;
            Terraria => terraria;
            Palworld => palworld;
            Kspdmp => kspdmp;
            Buildandshoot => buildandshoot;
            Assettocorsa => assettocorsa;
            Vcmp => vcmp;
            Ffow => ffow;
            Ventrilo => ventrilo;
            Armagetron => armagetron;
            Rfactor => rfactor;
            Beammp => beammp;
            Starmade => starmade;
            Nadeo => nadeo;
            Farmingsimulator => farmingsimulator;
            Hytale => hytale;
            Tibia => tibia;
        }
    };
}
pub(crate) use for_each_protocol;

/// Generates the enum and [`Protocol::ALL`] from the table.
macro_rules! protocol_enum {
    ($( $(#[cfg($c:meta)])? $variant:ident => $module:ident $(, serve($cf:ident, $rs:ident, $oc:ident))?; )*) => {
        /// A game-server query protocol this crate speaks. Each is described by its
        /// [`Entry`] ([`Protocol::entry`]).
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
        #[non_exhaustive]
        pub enum Protocol {
            $(
                #[doc = concat!("`", stringify!($module), "`: see its [entry](crate::", stringify!($module), "::ENTRY).")]
                $variant,
            )*
        }

        impl Protocol {
            /// Every protocol, in the table's order.
            pub const ALL: [Protocol; [$(Protocol::$variant),*].len()] = [$(Protocol::$variant),*];
        }
    };
}
for_each_protocol!(protocol_enum);

/// How a protocol's bytes travel.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum Transport {
    /// Datagrams (UDP): sent with
    /// [`QueryDriver::poll_transmit`](crate::client::QueryDriver::poll_transmit),
    /// received with
    /// [`QueryDriver::handle_datagram`](crate::client::QueryDriver::handle_datagram).
    Datagram,
    /// A byte stream (TCP): connected first, then driven with
    /// [`QueryDriver::handle_stream`](crate::client::QueryDriver::handle_stream).
    Stream,
}

/// How strongly a [`Signature`] names its protocol: signatures are tried tier by tier
/// (in [`Protocol::ALL`] order within a tier), so that a narrow test of shared first
/// bytes (Quake III's words after `FF FF FF FF`) comes before a broad one (A2S: any
/// `FF FF FF FF`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Tier {
    /// Bytes no other protocol starts with (a magic, or shared first bytes and words
    /// that follow them).
    Magic,
    /// First bytes some other protocol may share, when no magic matched.
    Broad,
    /// A guess from a byte or two (a type byte, a last byte), the last resort.
    Weak,
}

impl Tier {
    /// Every tier, in the order they are tried.
    pub const ALL: [Tier; 3] = [Tier::Magic, Tier::Broad, Tier::Weak];
}

/// A test that tells a protocol's datagrams apart from their bytes, without decoding.
#[derive(Debug, Clone, Copy)]
pub struct Signature {
    /// When it is tried.
    pub tier: Tier,
    /// Whether a datagram fits. Reads only through bounds-checked slice methods.
    pub matches: fn(&[u8]) -> bool,
}

/// What a protocol's responder answers (the entry of a protocol `ogp serve` speaks).
#[derive(Debug, Clone, Copy)]
pub struct Serve {
    /// Which requests on a shared port are this protocol's.
    pub requests: Signature,
    /// Answered only on a listener of its own
    /// ([`Listener::OgpDraft`](crate::responder::Listener::OgpDraft)): its requests
    /// look like another protocol's.
    pub own_port: bool,
    /// The kinds of answer it sends.
    pub answers: &'static [AnswerKind],
    /// Its id in the challenge keys (see
    /// [`ChallengeKeys`](crate::guard::ChallengeKeys)), mixed into every challenge so
    /// that one learnt over one protocol does not open another. Unique and never 0.
    pub guard_id: u8,
}

/// What one protocol tells the rest of the crate: one `const ENTRY` in its folder.
#[derive(Debug, Clone, Copy)]
pub struct Entry {
    /// The name used on the command line, in server lists and in JSON (lower case).
    pub name: &'static str,
    /// The name people read.
    pub label: &'static str,
    /// Other names it is parsed from (lower case).
    pub aliases: &'static [&'static str],
    /// One line for `-p`'s help.
    pub help: &'static str,
    /// How its bytes travel.
    pub transport: Transport,
    /// Whether auto-detection tries it (a datagram protocol in [`Protocol::AUTO`], a
    /// stream protocol in [`Protocol::AUTO_STREAM`]).
    pub auto: bool,
    /// The port a target named without one gets (`None`: a port must be given).
    pub default_port: Option<u16>,
    /// Steps of a query that each get the attempt timeout and retries (A2S: INFO,
    /// PLAYER, RULES: 3).
    pub steps: u32,
    /// What tells its datagrams (queries and replies) apart, for
    /// [`detect::guess`](crate::detect::guess).
    pub signatures: &'static [Signature],
    /// What its responder answers; `None` when `ogp serve` does not speak it.
    pub serve: Option<Serve>,
}

impl Entry {
    /// An entry with the given names and transport: auto-detected, no default port, one
    /// step, no signature, not served. Fill in the rest with struct update syntax.
    pub const fn new(name: &'static str, label: &'static str, transport: Transport) -> Self {
        Self {
            name,
            label,
            aliases: &[],
            help: "",
            transport,
            auto: true,
            default_port: None,
            steps: 1,
            signatures: &[],
            serve: None,
        }
    }
}

/// What kind of answer a protocol sent (one per answered request, however many
/// datagrams it took). Each protocol answers with a few of them ([`AnswerKind::of`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
#[non_exhaustive]
pub enum AnswerKind {
    /// A challenge for the client to send back (A2S `41`, OGP Error 3, the GameSpy v3
    /// `09` reply, the draft's Type 1 None, GQP's `32 challenge` token).
    Challenge,
    /// A ping or echo answer (OGP ping, A2A_PING, GameSpy v3 echo).
    Ping,
    /// An error answer (OGP errors other than 3, the draft's Banned, GQP 40/41).
    Error,
    /// Server information (A2S_INFO; GameSpy v3 sub-protocols A and B).
    Info,
    /// A2S_PLAYER.
    Players,
    /// A2S_RULES.
    Rules,
    /// GameSpy v3 sub-protocol C (the values of the asked keys).
    Keys,
    /// A full status answer (an OGP or draft Default Query answer).
    Full,
    /// GQP command replies.
    Commands,
}

/// A protocol name that is not one of ours.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct UnknownProtocol(pub String);

impl fmt::Display for UnknownProtocol {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "unknown protocol {:?} (expected ", self.0)?;
        for p in Protocol::ALL {
            write!(f, "{}, ", p.name())?;
        }
        f.write_str("or auto)")
    }
}

impl std::error::Error for UnknownProtocol {}
