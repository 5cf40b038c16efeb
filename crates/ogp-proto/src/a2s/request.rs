//! A2S requests, as clients send them: decoding (for the responder) and encoding (for
//! the client).
//!
//! ```text
//! A2S_INFO      FF FF FF FF 54 "Source Engine Query" 00 [challenge] [more bytes]
//! A2S_PLAYER    FF FF FF FF 55 [challenge] [more bytes]
//! A2S_RULES     FF FF FF FF 56 [challenge] [more bytes]
//! GETCHALLENGE  FF FF FF FF 57 [ignored]
//! A2A_PING      FF FF FF FF 69 [ignored]
//! ```
//!
//! The first four bytes after the request are the challenge; anything after them is
//! counted, not kept (source-server-query appends `FF FF FF FF`; Valve allows padding).
//! A challenge of 1 to 3 bytes is an error. Nothing here panics or allocates.

use super::{kind, SINGLE};
use crate::error::DecodeError;
use crate::reader::Reader;

/// The payload string of A2S_INFO, without its NUL.
pub const INFO_PAYLOAD: &[u8] = b"Source Engine Query";

/// The challenge value clients send to ask for one.
pub const ASK_CHALLENGE: u32 = u32::MAX;

/// An A2S request.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Request {
    /// A2S_INFO.
    Info {
        /// The challenge, if the request carried one.
        challenge: Option<u32>,
        /// Bytes after the challenge (ignored).
        trailing: usize,
    },
    /// A2S_PLAYER.
    Player {
        /// The challenge (`0xFFFFFFFF` asks for one), if present.
        challenge: Option<u32>,
        /// Bytes after the challenge (ignored).
        trailing: usize,
    },
    /// A2S_RULES.
    Rules {
        /// The challenge (`0xFFFFFFFF` asks for one), if present.
        challenge: Option<u32>,
        /// Bytes after the challenge (ignored).
        trailing: usize,
    },
    /// A2S_SERVERQUERY_GETCHALLENGE (deprecated).
    GetChallenge,
    /// A2A_PING (deprecated).
    Ping,
}

impl Request {
    /// A2S_INFO with an optional challenge.
    pub const fn info(challenge: Option<u32>) -> Self {
        Self::Info {
            challenge,
            trailing: 0,
        }
    }

    /// A2S_PLAYER with a challenge (`None` sends `FFFFFFFF`, asking for one).
    pub const fn player(challenge: Option<u32>) -> Self {
        Self::Player {
            challenge: Some(match challenge {
                Some(c) => c,
                None => ASK_CHALLENGE,
            }),
            trailing: 0,
        }
    }

    /// A2S_RULES with a challenge (`None` sends `FFFFFFFF`, asking for one).
    pub const fn rules(challenge: Option<u32>) -> Self {
        Self::Rules {
            challenge: Some(match challenge {
                Some(c) => c,
                None => ASK_CHALLENGE,
            }),
            trailing: 0,
        }
    }

    /// The challenge the request carries.
    pub const fn challenge(&self) -> Option<u32> {
        match self {
            Self::Info { challenge, .. }
            | Self::Player { challenge, .. }
            | Self::Rules { challenge, .. } => *challenge,
            Self::GetChallenge | Self::Ping => None,
        }
    }

    /// Decodes a whole request datagram.
    pub fn decode(datagram: &[u8]) -> Result<Self, DecodeError> {
        let mut r = Reader::new(datagram);
        if r.array::<4>("Header")? != SINGLE {
            return Err(DecodeError::new(
                0,
                "Header",
                crate::error::DecodeErrorKind::BadMagic,
            ));
        }
        Self::decode_body(&mut r)
    }

    /// Decodes a request from its type byte on.
    pub(crate) fn decode_body(r: &mut Reader<'_>) -> Result<Self, DecodeError> {
        let at = r.offset();
        let t = r.u8("Type")?;
        let challenge = |r: &mut Reader<'_>| -> Result<(Option<u32>, usize), DecodeError> {
            if r.is_empty() {
                return Ok((None, 0));
            }
            let c = r.u32_le("Challenge")?;
            Ok((Some(c), r.take_rest().len()))
        };
        Ok(match t {
            kind::INFO_REQUEST => {
                let p_at = r.offset();
                if r.cstr("Payload")? != INFO_PAYLOAD {
                    return Err(DecodeError::invalid(
                        p_at,
                        "Payload",
                        "not \"Source Engine Query\"",
                    ));
                }
                let (challenge, trailing) = challenge(r)?;
                Self::Info {
                    challenge,
                    trailing,
                }
            }
            kind::PLAYER_REQUEST => {
                let (challenge, trailing) = challenge(r)?;
                Self::Player {
                    challenge,
                    trailing,
                }
            }
            kind::RULES_REQUEST => {
                let (challenge, trailing) = challenge(r)?;
                Self::Rules {
                    challenge,
                    trailing,
                }
            }
            kind::GET_CHALLENGE => {
                r.take_rest();
                Self::GetChallenge
            }
            kind::PING => {
                r.take_rest();
                Self::Ping
            }
            _ => return Err(DecodeError::invalid(at, "Type", "not an A2S request")),
        })
    }

    /// Appends the request datagram. `trailing` bytes are written as `FF`.
    pub fn encode(&self, out: &mut Vec<u8>) {
        out.extend_from_slice(&SINGLE);
        let (t, challenge, trailing) = match *self {
            Self::Info {
                challenge,
                trailing,
            } => {
                out.push(kind::INFO_REQUEST);
                out.extend_from_slice(INFO_PAYLOAD);
                out.push(0);
                (None, challenge, trailing)
            }
            Self::Player {
                challenge,
                trailing,
            } => (Some(kind::PLAYER_REQUEST), challenge, trailing),
            Self::Rules {
                challenge,
                trailing,
            } => (Some(kind::RULES_REQUEST), challenge, trailing),
            Self::GetChallenge => (Some(kind::GET_CHALLENGE), None, 0),
            Self::Ping => (Some(kind::PING), None, 0),
        };
        if let Some(t) = t {
            out.push(t);
        }
        if let Some(c) = challenge {
            out.extend_from_slice(&c.to_le_bytes());
            out.resize(out.len() + trailing, 0xff);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::text::{from_hex, to_hex};

    #[test]
    fn info_with_0_4_and_8_trailing_bytes() {
        let base = "ffffffff54536f7572636520456e67696e6520517565727900";
        assert_eq!(
            Request::decode(&from_hex(base).unwrap()).unwrap(),
            Request::info(None)
        );
        let with_c = format!("{base}4ba1d522");
        assert_eq!(
            Request::decode(&from_hex(&with_c).unwrap()).unwrap(),
            Request::info(Some(0x22d5_a14b))
        );
        let padded = format!("{base}4ba1d522ffffffff");
        assert_eq!(
            Request::decode(&from_hex(&padded).unwrap()).unwrap(),
            Request::Info {
                challenge: Some(0x22d5_a14b),
                trailing: 4
            }
        );
        let mut out = Vec::new();
        Request::info(Some(0x22d5_a14b)).encode(&mut out);
        assert_eq!(to_hex(&out), with_c);
        // a truncated challenge is an error, a wrong payload too
        assert!(Request::decode(&from_hex(&format!("{base}4ba1")).unwrap()).is_err());
        assert!(Request::decode(b"\xff\xff\xff\xffTSource Engine Quer\0").is_err());
        assert!(Request::decode(b"\xff\xff\xff\xffTSource Engine Query").is_err());
    }

    #[test]
    fn player_rules_getchallenge_ping() {
        for (hex, req) in [
            ("ffffffff55ffffffff", Request::player(None)),
            ("ffffffff5600000000", Request::rules(Some(0))),
            ("ffffffff57", Request::GetChallenge),
            ("ffffffff69", Request::Ping),
        ] {
            let b = from_hex(hex).unwrap();
            assert_eq!(Request::decode(&b).unwrap(), req);
            let mut out = Vec::new();
            req.encode(&mut out);
            assert_eq!(to_hex(&out), hex);
        }
        assert_eq!(
            Request::decode(&from_hex("ffffffff55").unwrap()).unwrap(),
            Request::Player {
                challenge: None,
                trailing: 0
            }
        );
        assert!(Request::decode(&from_hex("ffffffff49").unwrap()).is_err());
    }
}
