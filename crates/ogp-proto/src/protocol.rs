//! [`Protocol`]: which query protocol, the one name every layer uses (codecs, client,
//! responder, scanner, command line, JSON output).

use std::fmt;
use std::str::FromStr;

/// The protocols, one line each, in [`Protocol::ALL`] order: variant, name (command
/// line, lists, JSON), label (what people read), whether auto-detection tries it, other
/// names it is parsed from, and its doc line. **The one place a protocol is named**:
/// the enum, its lists, names and parsing are generated from it.
macro_rules! protocols {
    ($( $variant:ident = $name:literal, $label:literal, $auto:literal, [$($alias:literal),*], $doc:literal; )*) => {
        /// A game-server query protocol this crate speaks.
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
        #[non_exhaustive]
        pub enum Protocol {
            $( #[doc = $doc] $variant, )*
        }

        impl Protocol {
            /// Every protocol.
            pub const ALL: [Protocol; [$(Protocol::$variant),*].len()] = [$(Protocol::$variant),*];

            const AUTO_FLAGS: [bool; Self::ALL.len()] = [$($auto),*];

            /// The name used on the command line, in server lists and in JSON: `ogp`,
            /// `gamespy3`, `a2s`, `gqp`, `ogp-draft`, `quake3`, `bedrock`.
            pub const fn name(self) -> &'static str {
                match self { $( Self::$variant => $name, )* }
            }

            /// The name people read: `OGP`, `GameSpy v3`, `A2S`, `GQP`, `OGP v0.02`,
            /// `Quake III`, `Minecraft Bedrock`.
            pub const fn label(self) -> &'static str {
                match self { $( Self::$variant => $label, )* }
            }

            /// Its place in [`Protocol::ALL`].
            pub const fn index(self) -> usize {
                self as usize
            }

            /// Our names and aliases, lower case.
            fn from_lowercase(s: &str) -> Option<Self> {
                match s {
                    $( $name $(| $alias)* => Some(Self::$variant), )*
                    _ => None,
                }
            }
        }

        /// What [`UnknownProtocol`] says is expected.
        const EXPECTED: &str = concat!($($name, ", ",)* "or auto");
    };
}

protocols! {
    Ogp = "ogp", "OGP", true, [], "Open Game Protocol v1.01.";
    Gamespy3 = "gamespy3", "GameSpy v3", true, ["gs3", "gs4", "gamespy4"], "GameSpy v3 (also GameSpy v4, its challenge variant), as Battlefield 2 speaks it.";
    A2s = "a2s", "A2S", true, [], "Valve A2S (INFO, PLAYER, RULES).";
    Gqp = "gqp", "GQP", true, [], "The GQP text-protocol draft.";
    OgpDraft = "ogp-draft", "OGP v0.02", false, ["ogp_draft"], "The OGP v0.02 draft. Its datagrams cannot be told apart from v1.01's by their first bytes, so it is never auto-detected by a query nor guessed by `detect::guess`, and is served on a port of its own.";
    Quake3 = "quake3", "Quake III", true, ["q3", "q3s"], "The Quake III connectionless queries (`getinfo`, `getstatus`).";
    Bedrock = "bedrock", "Minecraft Bedrock", true, ["mcbe", "mcpe"], "Minecraft: Bedrock Edition's RakNet unconnected ping and pong (UDP 19132).";
    Minecraft = "minecraft", "Minecraft", false, ["mc"], "Minecraft: Java Edition's Server List Ping, over TCP (and the legacy ping of servers before 1.7).";
}

// Const evaluation: an index out of bounds is a compile error, not a panic.
#[allow(clippy::indexing_slicing)]
const AUTO_LEN: usize = {
    let mut n = 0;
    let mut i = 0;
    while i < Protocol::ALL.len() {
        if Protocol::AUTO_FLAGS[i] {
            n += 1;
        }
        i += 1;
    }
    n
};

impl Protocol {
    /// The protocols auto-detection tries, best first (the rank that settles a tie when
    /// a server speaks several): those of [`Protocol::ALL`] it tries, in that order.
    #[allow(clippy::indexing_slicing)] // const evaluation, as AUTO_LEN
    pub const AUTO: [Protocol; AUTO_LEN] = {
        let mut out = [Protocol::Ogp; AUTO_LEN];
        let (mut i, mut n) = (0, 0);
        while i < Protocol::ALL.len() {
            if Protocol::AUTO_FLAGS[i] {
                out[n] = Protocol::ALL[i];
                n += 1;
            }
            i += 1;
        }
        out
    };

    /// The place in [`Protocol::AUTO`] (lower is preferred); protocols that are never
    /// auto-detected come last.
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

impl fmt::Display for Protocol {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// A protocol name that is not one of ours.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct UnknownProtocol(pub String);

impl fmt::Display for UnknownProtocol {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "unknown protocol {:?} (expected {EXPECTED})", self.0)
    }
}

impl std::error::Error for UnknownProtocol {}

impl FromStr for Protocol {
    type Err = UnknownProtocol;

    /// Our names, case-insensitive, plus `gs3`, `gs4` and `gamespy4` for GameSpy v3 and
    /// `ogp_draft` for the draft, `q3` and `q3s` (qstat's name) for Quake III.
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        Self::from_lowercase(&s.to_ascii_lowercase()).ok_or_else(|| UnknownProtocol(s.to_string()))
    }
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
            "quake4".parse::<Protocol>().unwrap_err().to_string(),
            "unknown protocol \"quake4\" (expected ogp, gamespy3, a2s, gqp, ogp-draft, quake3, bedrock, minecraft, or auto)"
        );
        assert_eq!(
            Protocol::AUTO,
            [
                Protocol::Ogp,
                Protocol::Gamespy3,
                Protocol::A2s,
                Protocol::Gqp,
                Protocol::Quake3,
                Protocol::Bedrock
            ]
        );
        for (i, p) in Protocol::ALL.into_iter().enumerate() {
            assert_eq!(p.index(), i);
        }
        assert_eq!("Q3".parse::<Protocol>(), Ok(Protocol::Quake3));
        // never auto-detected: after every protocol that is
        assert_eq!(Protocol::OgpDraft.rank(), Protocol::AUTO.len());
        assert_eq!(Protocol::Quake3.rank(), 4);
        assert_eq!(Protocol::Ogp.rank(), 0);
        assert_eq!("MCPE".parse::<Protocol>(), Ok(Protocol::Bedrock));
    }
}
