//! Every protocol's [`Entry`], bound to its [`Protocol`] variant, and what is derived
//! from them: names and parsing, the auto-detection lists, transports, answer kinds,
//! and the signature tables of [`detect::guess`](crate::detect::guess) and the
//! responder's dispatch. It sits above the protocol folders (it reads their `ENTRY`);
//! the table it is generated from is [`crate::protocol`]'s.

use std::fmt;
use std::str::FromStr;

use crate::protocol::{AnswerKind, Entry, Protocol, Signature, Tier, Transport, UnknownProtocol};

/// Generates [`Protocol::entry`] from the table.
macro_rules! entries {
    ($( $(#[cfg($c:meta)])? $variant:ident => $module:ident $(, serve($cf:ident, $rs:ident, $oc:ident))?; )*) => {
        impl Protocol {
            /// What this protocol tells the crate about itself: its folder's `ENTRY`.
            pub const fn entry(self) -> &'static Entry {
                match self {
                    $( Self::$variant => &crate::$module::ENTRY, )*
                }
            }
        }
    };
}
crate::protocol::for_each_protocol!(entries);

/// Every protocol's entry, in [`Protocol::ALL`] order.
pub const PROTOCOLS: [&Entry; Protocol::ALL.len()] = {
    let mut out = [Protocol::Ogp.entry(); Protocol::ALL.len()];
    let mut i = 0;
    while i < out.len() {
        // Const evaluation: an index out of bounds is a compile error, not a panic.
        #[allow(clippy::indexing_slicing)]
        {
            out[i] = Protocol::ALL[i].entry();
        }
        i += 1;
    }
    out
};

/// How many protocols of `transport` auto-detection tries.
const fn auto_len(transport: Transport) -> usize {
    let (mut n, mut i) = (0, 0);
    while i < PROTOCOLS.len() {
        #[allow(clippy::indexing_slicing)] // const evaluation
        let e = PROTOCOLS[i];
        if e.auto && e.transport as u8 == transport as u8 {
            n += 1;
        }
        i += 1;
    }
    n
}

/// The protocols of `transport` auto-detection tries, in [`Protocol::ALL`] order.
#[allow(clippy::indexing_slicing)] // const evaluation
const fn auto_list<const N: usize>(transport: Transport) -> [Protocol; N] {
    let mut out = [Protocol::Ogp; N];
    let (mut i, mut n) = (0, 0);
    while i < PROTOCOLS.len() {
        let e = PROTOCOLS[i];
        if e.auto && e.transport as u8 == transport as u8 {
            out[n] = Protocol::ALL[i];
            n += 1;
        }
        i += 1;
    }
    out
}

const AUTO_LEN: usize = auto_len(Transport::Datagram);
const AUTO_STREAM_LEN: usize = auto_len(Transport::Stream);

impl Protocol {
    /// The datagram protocols auto-detection tries, best first (the rank that settles a
    /// tie when a server speaks several): those of [`Protocol::ALL`] whose entry says
    /// [`auto`](Entry::auto), in that order.
    pub const AUTO: [Protocol; AUTO_LEN] = auto_list(Transport::Datagram);

    /// The stream protocols auto-detection tries besides [`Protocol::AUTO`]: one
    /// connection each, on the given port only (never on the extra query ports), ranked
    /// after every datagram protocol. A port that accepts the connection and answers
    /// Minecraft's handshake is Minecraft; a refused connection says nothing against
    /// the datagram protocols, which may still answer on the same port number.
    pub const AUTO_STREAM: [Protocol; AUTO_STREAM_LEN] = auto_list(Transport::Stream);

    /// The name used on the command line, in server lists and in JSON: `ogp`,
    /// `gamespy3`, `a2s`, `gqp`, `ogp-draft`, `quake3`, `bedrock`, `minecraft`.
    pub const fn name(self) -> &'static str {
        self.entry().name
    }

    /// The name people read: `OGP`, `GameSpy v3`, `A2S`, `GQP`, `OGP v0.02`,
    /// `Quake III`, `Minecraft Bedrock`, `Minecraft`.
    pub const fn label(self) -> &'static str {
        self.entry().label
    }

    /// Its place in [`Protocol::ALL`].
    pub const fn index(self) -> usize {
        self as usize
    }

    /// How this protocol's bytes travel: the same as its machine's
    /// [`QueryDriver::transport`](crate::client::QueryDriver::transport), known without
    /// making one (the scanner counts connections before it starts a target).
    pub const fn transport(self) -> Transport {
        self.entry().transport
    }

    /// The place in [`Protocol::AUTO`] (lower is preferred); protocols that are never
    /// auto-detected over datagrams come last.
    pub fn rank(self) -> usize {
        Self::AUTO
            .iter()
            .position(|p| *p == self)
            .unwrap_or(Self::AUTO.len())
    }

    /// Parses a name where `auto` is allowed too: `Ok(None)` means auto-detection.
    pub fn parse_or_auto(s: &str) -> Result<Option<Self>, UnknownProtocol> {
        if s.eq_ignore_ascii_case("auto") {
            Ok(None)
        } else {
            s.parse().map(Some)
        }
    }
}

impl AnswerKind {
    /// The kinds `protocol`'s responder answers with (none for a protocol that is not
    /// served).
    pub const fn of(protocol: Protocol) -> &'static [AnswerKind] {
        match protocol.entry().serve {
            Some(s) => s.answers,
            None => &[],
        }
    }
}

impl fmt::Display for Protocol {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl FromStr for Protocol {
    type Err = UnknownProtocol;

    /// Our names and each entry's aliases, case-insensitive (`gs3`, `gs4` and
    /// `gamespy4` for GameSpy v3, `ogp_draft` for the draft, `q3` and `q3s` (qstat's
    /// name) for Quake III, …).
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        Protocol::ALL
            .into_iter()
            .find(|p| {
                let e = p.entry();
                e.name.eq_ignore_ascii_case(s)
                    || e.aliases.iter().any(|a| a.eq_ignore_ascii_case(s))
            })
            .ok_or_else(|| UnknownProtocol(s.to_string()))
    }
}

/// An entry's `j`th datagram signature, or (`requests`) its request signature if it is
/// served.
const fn pick(e: &Entry, j: usize, requests: bool) -> Option<Signature> {
    if requests {
        match e.serve {
            Some(s) if j == 0 => Some(s.requests),
            _ => None,
        }
    } else if j < e.signatures.len() {
        #[allow(clippy::indexing_slicing)] // checked above
        Some(e.signatures[j])
    } else {
        None
    }
}

/// How many signatures [`pick`] selects from the entries.
const fn count(requests: bool) -> usize {
    let mut n = 0;
    let mut i = 0;
    while i < PROTOCOLS.len() {
        let mut j = 0;
        #[allow(clippy::indexing_slicing)] // const evaluation
        while pick(PROTOCOLS[i], j, requests).is_some() {
            n += 1;
            j += 1;
        }
        i += 1;
    }
    n
}

/// The signatures [`pick`] selects, tier by tier, in [`Protocol::ALL`] order within one.
#[allow(clippy::indexing_slicing)] // const evaluation
const fn ordered<const N: usize>(requests: bool) -> [(Protocol, Signature); N] {
    let never = Signature {
        tier: Tier::Weak,
        matches: |_| false,
    };
    let mut out = [(Protocol::Ogp, never); N];
    let mut n = 0;
    let mut t = 0;
    while t < Tier::ALL.len() {
        let mut i = 0;
        while i < PROTOCOLS.len() {
            let mut j = 0;
            while let Some(s) = pick(PROTOCOLS[i], j, requests) {
                if s.tier as u8 == Tier::ALL[t] as u8 {
                    out[n] = (Protocol::ALL[i], s);
                    n += 1;
                }
                j += 1;
            }
            i += 1;
        }
        t += 1;
    }
    out
}

/// Every protocol's datagram signatures, in the order [`detect::guess`] tries them.
///
/// [`detect::guess`]: crate::detect::guess
pub(crate) const SIGNATURES: [(Protocol, Signature); count(false)] = ordered(false);

/// Every served protocol's request signature, in the order the responder tries them.
pub(crate) const REQUESTS: [(Protocol, Signature); count(true)] = ordered(true);

/// The protocol whose requests `datagram` starts like, among those a listener answers
/// (`own_port`: a listener of its own, such as the OGP v0.02 draft's); `None` when none
/// fits.
pub(crate) fn served(own_port: bool, datagram: &[u8]) -> Option<Protocol> {
    REQUESTS
        .iter()
        .find(|(p, s)| {
            p.entry().serve.is_some_and(|sv| sv.own_port == own_port) && (s.matches)(datagram)
        })
        .map(|(p, _)| *p)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_round_trip_and_aliases_parse() {
        for p in Protocol::ALL {
            assert_eq!(p.name().parse::<Protocol>(), Ok(p));
            assert_eq!(p.to_string(), p.name());
        }
        assert_eq!("GS4".parse::<Protocol>(), Ok(Protocol::Gamespy3));
        assert_eq!(Protocol::parse_or_auto("Auto"), Ok(None));
        assert_eq!(
            "quake9".parse::<Protocol>().unwrap_err().to_string(),
            "unknown protocol \"quake9\" (expected ogp, gamespy3, a2s, gqp, ogp-draft, quake3, bedrock, minecraft, gamespy1, unreal2, gamespy2, ase, teeworlds, teeworlds7, openttd, doom3, minetest, mumble, doom, samp, cube2, quakeworld, quake2, hexenworld, netquake, doomsday, fivem, battlefield, teamspeak3, teamspeak2, eco, eldewrito, cs2d, satisfactory, savage2, mafia2mp, mafia2online, tribes1, starsiege, terraria, palworld, kspdmp, buildandshoot, assettocorsa, vcmp, ffow, ventrilo, armagetron, rfactor, beammp, starmade, nadeo, farmingsimulator, hytale, tibia, or auto)"
        );
        assert_eq!(
            Protocol::AUTO,
            [
                Protocol::Ogp,
                Protocol::Gamespy3,
                Protocol::A2s,
                Protocol::Gqp,
                Protocol::Quake3,
                Protocol::Bedrock,
                Protocol::Gamespy1,
                Protocol::Unreal2,
                Protocol::Gamespy2,
                Protocol::Ase,
                Protocol::Teeworlds,
                Protocol::Teeworlds7,
                Protocol::Doom3,
                Protocol::Mumble,
                Protocol::Doom,
                Protocol::Samp,
                Protocol::Cube2,
                Protocol::Quakeworld,
                Protocol::Quake2,
                Protocol::Hexenworld,
                Protocol::Netquake,
                Protocol::Doomsday,
            ]
        );
        assert_eq!("quake4".parse::<Protocol>(), Ok(Protocol::Doom3));
        assert_eq!(Protocol::AUTO_STREAM, [Protocol::Minecraft]);
        for (i, p) in Protocol::ALL.into_iter().enumerate() {
            assert_eq!(p.index(), i);
        }
        assert_eq!("Q3".parse::<Protocol>(), Ok(Protocol::Quake3));
        // never auto-detected: after every protocol that is
        assert_eq!(Protocol::OgpDraft.rank(), Protocol::AUTO.len());
        assert_eq!(Protocol::Quake3.rank(), 4);
        assert_eq!(Protocol::Ogp.rank(), 0);
        assert_eq!("MCPE".parse::<Protocol>(), Ok(Protocol::Bedrock));
        assert_eq!("GPS".parse::<Protocol>(), Ok(Protocol::Gamespy1));
    }

    /// Names and aliases are lower case and no two entries share one (the first would
    /// win silently); guard ids are unique and never 0; a served protocol answers with
    /// something.
    #[test]
    fn entries_do_not_collide() {
        let mut names = std::collections::HashSet::new();
        let mut ids = std::collections::HashSet::new();
        for e in PROTOCOLS {
            for n in std::iter::once(&e.name).chain(e.aliases) {
                assert_eq!(*n, n.to_ascii_lowercase(), "{n}");
                assert_ne!(*n, "auto");
                assert!(names.insert(*n), "{n} named twice");
            }
            assert!(!e.help.is_empty(), "{}: help", e.name);
            assert!(e.steps >= 1, "{}", e.name);
            if let Some(s) = e.serve {
                assert_ne!(s.guard_id, 0, "{}", e.name);
                assert!(
                    ids.insert(s.guard_id),
                    "{}: guard id {} twice",
                    e.name,
                    s.guard_id
                );
                assert!(!s.answers.is_empty(), "{}", e.name);
            }
        }
    }

    #[test]
    fn signatures_go_tier_by_tier() {
        let tiers: Vec<Tier> = SIGNATURES.iter().map(|(_, s)| s.tier).collect();
        assert!(tiers.windows(2).all(|w| w[0] <= w[1]), "{tiers:?}");
        let order: Vec<Protocol> = REQUESTS.iter().map(|(p, _)| *p).collect();
        // Quake III's words before A2S's bare FF FF FF FF.
        let pos = |p| order.iter().position(|q| *q == p).unwrap();
        assert!(pos(Protocol::Quake3) < pos(Protocol::A2s));
        assert_eq!(
            served(true, b"\xff\xff\xff\xffOGP\0"),
            Some(Protocol::OgpDraft)
        );
        assert_eq!(served(false, b"\xff\xff\xff\xffOGP\0"), Some(Protocol::Ogp));
        assert_eq!(
            served(false, b"\xff\xff\xff\xffgetinfo"),
            Some(Protocol::Quake3)
        );
        assert_eq!(served(true, b"\xff\xff\xff\xffgetinfo"), None);
        assert_eq!(served(false, b"\x7f"), None);
    }
}
