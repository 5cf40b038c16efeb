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
    /// [`Protocol::guess`], and is served on a port of its own.
    OgpDraft,
}

impl Protocol {
    /// Every protocol.
    pub const ALL: [Protocol; 5] = [
        Self::Ogp,
        Self::Gamespy3,
        Self::A2s,
        Self::Gqp,
        Self::OgpDraft,
    ];

    /// The protocols auto-detection tries, best first (the rank that settles a tie when
    /// a server speaks several).
    pub const AUTO: [Protocol; 4] = [Self::Ogp, Self::Gamespy3, Self::A2s, Self::Gqp];

    /// The name used on the command line, in server lists and in JSON: `ogp`,
    /// `gamespy3`, `a2s`, `gqp`, `ogp-draft`.
    pub const fn name(self) -> &'static str {
        match self {
            Self::Ogp => "ogp",
            Self::Gamespy3 => "gamespy3",
            Self::A2s => "a2s",
            Self::Gqp => "gqp",
            Self::OgpDraft => "ogp-draft",
        }
    }

    /// The name people read: `OGP`, `GameSpy v3`, `A2S`, `GQP`, `OGP v0.02`.
    pub const fn label(self) -> &'static str {
        match self {
            Self::Ogp => "OGP",
            Self::Gamespy3 => "GameSpy v3",
            Self::A2s => "A2S",
            Self::Gqp => "GQP",
            Self::OgpDraft => "OGP v0.02",
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

    /// Guesses which protocol one datagram (query or reply) belongs to from its first
    /// bytes (and, for GQP, its last byte), without decoding it:
    ///
    /// * `FF FF FF FF "OGP\0"`: [`Ogp`](Self::Ogp). The OGP v0.02 draft starts with the
    ///   same eight bytes, so this is never [`OgpDraft`](Self::OgpDraft): a caller that
    ///   expects the draft must try decoding with both;
    /// * any other `FF FF FF FF`, or the split prefix `FE FF FF FF`: [`A2s`](Self::A2s);
    /// * `FE FD` (a request), or `00` / `03` / `05` / `09` followed by at least a session
    ///   id (a reply or heartbeat): [`Gamespy3`](Self::Gamespy3);
    /// * anything else ending with GQP's `EOT` or `ETB`: [`Gqp`](Self::Gqp).
    ///
    /// `None` when none of these fits. A `Some` is only a guess: the datagram may still
    /// fail to decode.
    pub fn guess(datagram: &[u8]) -> Option<Self> {
        use crate::gamespy3::kind;
        if datagram.starts_with(&crate::ogp::PREFIX) {
            return Some(Self::Ogp);
        }
        if datagram.starts_with(&crate::a2s::SINGLE) || datagram.starts_with(&crate::a2s::SPLIT) {
            return Some(Self::A2s);
        }
        if datagram.starts_with(&crate::gamespy3::MAGIC) {
            return Some(Self::Gamespy3);
        }
        match (datagram.first(), datagram.last()) {
            (Some(&(kind::INFO | kind::HEARTBEAT | kind::ECHO_REPLY | kind::CHALLENGE)), _)
                if datagram.len() >= 5 =>
            {
                Some(Self::Gamespy3)
            }
            (Some(&first), Some(&(crate::gqp::wire::EOT | crate::gqp::wire::ETB)))
                if first != 0xff && first != 0xfe =>
            {
                Some(Self::Gqp)
            }
            _ => None,
        }
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
            "unknown protocol {:?} (expected ogp, a2s, gamespy3, gqp, ogp-draft or auto)",
            self.0
        )
    }
}

impl std::error::Error for UnknownProtocol {}

impl FromStr for Protocol {
    type Err = UnknownProtocol;

    /// Our names, case-insensitive, plus `gs3`, `gs4` and `gamespy4` for GameSpy v3 and
    /// `ogp_draft` for the draft.
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        Ok(match s.to_ascii_lowercase().as_str() {
            "ogp" => Self::Ogp,
            "a2s" => Self::A2s,
            "gamespy3" | "gs3" | "gs4" | "gamespy4" => Self::Gamespy3,
            "gqp" => Self::Gqp,
            "ogp-draft" | "ogp_draft" => Self::OgpDraft,
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
        assert!("quake3".parse::<Protocol>().is_err());
        assert_eq!(Protocol::OgpDraft.rank(), 4);
        assert_eq!(Protocol::Ogp.rank(), 0);
    }

    #[test]
    fn guess_names_each_protocol_from_its_first_bytes() {
        use crate::text::from_hex;
        let g = |h: &str| Protocol::guess(&from_hex(h).unwrap());
        // OGP v1.01 probe; the draft's datagrams look the same and are guessed as OGP
        assert_eq!(g("ffffffff4f475000030100"), Some(Protocol::Ogp));
        assert_eq!(g("ffffffff4f4750000002"), Some(Protocol::Ogp));
        // A2S: INFO request, challenge, split fragment
        assert_eq!(
            g("ffffffff54536f7572636520456e67696e6520517565727900"),
            Some(Protocol::A2s)
        );
        assert_eq!(g("ffffffff414bf4d522"), Some(Protocol::A2s));
        assert_eq!(g("feffffff0100000002000000"), Some(Protocol::A2s));
        // GameSpy v3: requests, challenge reply, info reply, heartbeat
        assert_eq!(g("fefd0910203040"), Some(Protocol::Gamespy3));
        assert_eq!(g("fefd08"), Some(Protocol::Gamespy3));
        assert_eq!(
            g("09102030403237313131383736 00".replace(' ', "").as_str()),
            Some(Protocol::Gamespy3)
        );
        assert_eq!(g("001020304073706c69746e756d00"), Some(Protocol::Gamespy3));
        assert_eq!(g("0301020304"), Some(Protocol::Gamespy3));
        // GQP: a query and a reply, plain text ending with EOT
        assert_eq!(g("6964656e7469667904"), Some(Protocol::Gqp));
        assert_eq!(g("3030696465"), None);
        assert_eq!(g("303069646504"), Some(Protocol::Gqp));
        // nothing: empty, too short, unknown first byte
        assert_eq!(Protocol::guess(&[]), None);
        assert_eq!(g("00"), None);
        assert_eq!(g("ffff"), None);
        assert_eq!(g("7a7a7a"), None);
    }
}
