//! [`Protocol`]: which query protocol, the one name every layer uses (codecs, client,
//! responder, scanner, command line, JSON output).

use std::fmt;
use std::str::FromStr;

/// A game-server query protocol this crate speaks.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
#[non_exhaustive]
pub enum Protocol {
    /// Open Game Protocol v1.01.
    Ogp,
    /// GameSpy v3 (also GameSpy v4, its challenge variant), as Battlefield 2 speaks it.
    Gamespy3,
    /// Valve A2S (INFO, PLAYER, RULES).
    A2s,
    /// The GQP text-protocol draft.
    Gqp,
    /// The OGP v0.02 draft. Its datagrams cannot be told apart from v1.01's by their
    /// first bytes, so it is never auto-detected by a query nor returned by
    /// [`crate::detect::guess`], and is served on a port of its own.
    OgpDraft,
    /// The Quake III connectionless queries (`getinfo`, `getstatus`).
    Quake3,
}

impl Protocol {
    /// Every protocol.
    pub const ALL: [Protocol; 6] = [
        Self::Ogp,
        Self::Gamespy3,
        Self::A2s,
        Self::Gqp,
        Self::OgpDraft,
        Self::Quake3,
    ];

    /// The protocols auto-detection tries, best first (the rank that settles a tie when
    /// a server speaks several).
    pub const AUTO: [Protocol; 5] = [
        Self::Ogp,
        Self::Gamespy3,
        Self::A2s,
        Self::Gqp,
        Self::Quake3,
    ];

    /// The name used on the command line, in server lists and in JSON: `ogp`,
    /// `gamespy3`, `a2s`, `gqp`, `ogp-draft`, `quake3`.
    pub const fn name(self) -> &'static str {
        match self {
            Self::Ogp => "ogp",
            Self::Gamespy3 => "gamespy3",
            Self::A2s => "a2s",
            Self::Gqp => "gqp",
            Self::OgpDraft => "ogp-draft",
            Self::Quake3 => "quake3",
        }
    }

    /// The name people read: `OGP`, `GameSpy v3`, `A2S`, `GQP`, `OGP v0.02`, `Quake III`.
    pub const fn label(self) -> &'static str {
        match self {
            Self::Ogp => "OGP",
            Self::Gamespy3 => "GameSpy v3",
            Self::A2s => "A2S",
            Self::Gqp => "GQP",
            Self::OgpDraft => "OGP v0.02",
            Self::Quake3 => "Quake III",
        }
    }

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
        write!(
            f,
            "unknown protocol {:?} (expected ogp, a2s, gamespy3, gqp, ogp-draft, quake3 or auto)",
            self.0
        )
    }
}

impl std::error::Error for UnknownProtocol {}

impl FromStr for Protocol {
    type Err = UnknownProtocol;

    /// Our names, case-insensitive, plus `gs3`, `gs4` and `gamespy4` for GameSpy v3 and
    /// `ogp_draft` for the draft, `q3` and `q3s` (qstat's name) for Quake III.
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        Ok(match s.to_ascii_lowercase().as_str() {
            "ogp" => Self::Ogp,
            "a2s" => Self::A2s,
            "gamespy3" | "gs3" | "gs4" | "gamespy4" => Self::Gamespy3,
            "gqp" => Self::Gqp,
            "ogp-draft" | "ogp_draft" => Self::OgpDraft,
            "quake3" | "q3" | "q3s" => Self::Quake3,
            _ => return Err(UnknownProtocol(s.to_string())),
        })
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
        assert!("quake4".parse::<Protocol>().is_err());
        assert_eq!("Q3".parse::<Protocol>(), Ok(Protocol::Quake3));
        // never auto-detected: after every protocol that is
        assert_eq!(Protocol::OgpDraft.rank(), Protocol::AUTO.len());
        assert_eq!(Protocol::Quake3.rank(), 4);
        assert_eq!(Protocol::Ogp.rank(), 0);
    }
}
