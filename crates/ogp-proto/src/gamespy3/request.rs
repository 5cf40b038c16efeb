//! GameSpy v3 requests (client → server): `FE FD <type> <session id> …`.
//!
//! * `09` challenge request: `FE FD 09 <sid>`, with or without trailing bytes (gamedig
//!   sends four zero bytes more);
//! * `00` server information, in three sub-protocols, each with or without a 4-byte
//!   challenge right after the session id:
//!   - A: `<HH PP TT 00>`, one packet with the sections whose flag is `FF`;
//!   - B: `<HH PP TT xx>` with the low bit of `xx` set: everything, in as many packets as
//!     needed (what every real client sends: `FF FF FF 01`);
//!   - C: `<YY> <YY header indexes> 00 00`: the values of the listed server keys;
//! * `02` echo: up to 32 bytes to be sent back after `05`;
//! * `08` keep-alive (master → server): no reply.
//!
//! How lengths tell the forms apart is written in `docs/gamespy3.md` (choice S3). Every
//! decoder here is total: a datagram is a [`Request`] or a [`DecodeError`]; nothing
//! panics, and nothing is allocated beyond the request's own length.

use super::{kind, MAGIC};
use crate::error::{DecodeError, DecodeErrorKind};
use crate::reader::Reader;

/// Most bytes an echo request carries back (spec: "up to 32 bytes").
pub const MAX_ECHO: usize = 32;

/// What a server-information request asks for.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum InfoKind {
    /// Sub-protocol A: one packet with the flagged sections.
    Basic {
        /// Server keys (`HH` = `FF`).
        server: bool,
        /// Player columns (`PP` = `FF`).
        players: bool,
        /// Team columns (`TT` = `FF`).
        teams: bool,
    },
    /// Sub-protocol B: every section, in as many packets as needed.
    Full,
    /// Sub-protocol C: the values of these header indexes (1 = hostname, …), in order.
    Keys(Vec<u8>),
}

/// A GameSpy v3 request.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Request {
    /// `FE FD 09 <sid>`: asks for a challenge.
    Challenge {
        /// The session id, echoed in the reply.
        session_id: u32,
    },
    /// `FE FD 00 <sid> [challenge] …`: server information.
    Info {
        /// The session id, echoed in every reply packet.
        session_id: u32,
        /// The 4 challenge bytes, big-endian, when present.
        challenge: Option<u32>,
        /// What is asked for.
        kind: InfoKind,
    },
    /// `FE FD 02 <data>`: echo.
    Echo {
        /// The bytes to send back (at most [`MAX_ECHO`]).
        data: Vec<u8>,
    },
    /// `FE FD 08 …`: a master server's keep-alive.
    KeepAlive {
        /// The 4 bytes after the type, when present (the instance key of the heartbeat).
        session_id: Option<u32>,
    },
}

impl Request {
    /// The session id, for the requests that carry one.
    pub fn session_id(&self) -> Option<u32> {
        match self {
            Self::Challenge { session_id } | Self::Info { session_id, .. } => Some(*session_id),
            Self::KeepAlive { session_id } => *session_id,
            Self::Echo { .. } => None,
        }
    }

    /// The sub-protocol B request every real client sends, with a challenge or without.
    pub fn full(session_id: u32, challenge: Option<u32>) -> Self {
        Self::Info {
            session_id,
            challenge,
            kind: InfoKind::Full,
        }
    }

    /// Decodes a request datagram.
    pub fn decode(datagram: &[u8]) -> Result<Self, DecodeError> {
        let mut r = Reader::new(datagram);
        if r.array::<2>("Header")? != MAGIC {
            return Err(DecodeError::new(0, "Header", DecodeErrorKind::BadMagic));
        }
        let t = r.u8("ProtocolId")?;
        match t {
            kind::CHALLENGE => {
                let session_id = u32::from_be_bytes(r.array::<4>("SessionId")?);
                // Trailing bytes (gamedig's four zeros) are allowed and ignored.
                Ok(Self::Challenge { session_id })
            }
            kind::INFO => {
                let session_id = u32::from_be_bytes(r.array::<4>("SessionId")?);
                let at = r.offset();
                let body = r.take_rest();
                let (challenge, kind) = decode_info_body(body).ok_or_else(|| {
                    DecodeError::invalid(at, "Request", "not sub-protocol A, B or C")
                })?;
                Ok(Self::Info {
                    session_id,
                    challenge,
                    kind,
                })
            }
            kind::ECHO => {
                let rest = r.take_rest();
                let data = rest.get(..rest.len().min(MAX_ECHO)).unwrap_or_default();
                Ok(Self::Echo {
                    data: data.to_vec(),
                })
            }
            kind::KEEP_ALIVE => {
                let session_id = r.array::<4>("SessionId").ok().map(u32::from_be_bytes);
                Ok(Self::KeepAlive { session_id })
            }
            _ => Err(DecodeError::invalid(
                2,
                "ProtocolId",
                "not a GameSpy v3 request type",
            )),
        }
    }

    /// Appends the request's bytes to `out`.
    pub fn encode(&self, out: &mut Vec<u8>) {
        out.extend_from_slice(&MAGIC);
        match self {
            Self::Challenge { session_id } => {
                out.push(kind::CHALLENGE);
                out.extend_from_slice(&session_id.to_be_bytes());
            }
            Self::Info {
                session_id,
                challenge,
                kind,
            } => {
                out.push(kind::INFO);
                out.extend_from_slice(&session_id.to_be_bytes());
                if let Some(c) = challenge {
                    out.extend_from_slice(&c.to_be_bytes());
                }
                match kind {
                    InfoKind::Basic {
                        server,
                        players,
                        teams,
                    } => {
                        let flag = |on: &bool| if *on { 0xff } else { 0x00 };
                        out.extend_from_slice(&[flag(server), flag(players), flag(teams), 0x00]);
                    }
                    InfoKind::Full => out.extend_from_slice(&[0xff, 0xff, 0xff, 0x01]),
                    InfoKind::Keys(keys) => {
                        let keys = keys.get(..keys.len().min(255)).unwrap_or_default();
                        out.push(keys.len() as u8);
                        out.extend_from_slice(keys);
                        out.extend_from_slice(&[0, 0]);
                    }
                }
            }
            Self::Echo { data } => {
                out.push(kind::ECHO);
                out.extend_from_slice(data.get(..data.len().min(MAX_ECHO)).unwrap_or_default());
            }
            Self::KeepAlive { session_id } => {
                out.push(kind::KEEP_ALIVE);
                if let Some(s) = session_id {
                    out.extend_from_slice(&s.to_be_bytes());
                }
            }
        }
    }

    /// The request's bytes.
    pub fn to_bytes(&self) -> Vec<u8> {
        let mut v = Vec::with_capacity(16);
        self.encode(&mut v);
        v
    }
}

/// Sub-protocol A or B in the 4 bytes `HH PP TT xx`: B when the low bit of `xx` is set,
/// A when each flag is `00` or `FF` and `xx` is `00`.
fn a_or_b(flags: [u8; 4]) -> Option<InfoKind> {
    let [h, p, t, x] = flags;
    if x & 1 == 1 {
        return Some(InfoKind::Full);
    }
    let flag = |b: u8| match b {
        0xff => Some(true),
        0x00 => Some(false),
        _ => None,
    };
    (x == 0).then_some(())?;
    Some(InfoKind::Basic {
        server: flag(h)?,
        players: flag(p)?,
        teams: flag(t)?,
    })
}

/// Sub-protocol C in `YY KK… 00 00`, exactly.
fn keys(body: &[u8]) -> Option<InfoKind> {
    let (&count, rest) = body.split_first()?;
    let (keys, end) = rest.split_at_checked(usize::from(count))?;
    (end == [0, 0]).then(|| InfoKind::Keys(keys.to_vec()))
}

/// The part after the session id: `[challenge] A|B|C`. The forms without a challenge are
/// tried first; see choice S3 in `docs/gamespy3.md`.
fn decode_info_body(body: &[u8]) -> Option<(Option<u32>, InfoKind)> {
    if let Ok(flags) = <[u8; 4]>::try_from(body) {
        if let Some(k) = a_or_b(flags) {
            return Some((None, k));
        }
    }
    if let Some(k) = keys(body) {
        return Some((None, k));
    }
    let (c, rest) = body.split_first_chunk::<4>()?;
    let challenge = Some(u32::from_be_bytes(*c));
    if let Ok(flags) = <[u8; 4]>::try_from(rest) {
        if let Some(k) = a_or_b(flags) {
            return Some((challenge, k));
        }
    }
    keys(rest).map(|k| (challenge, k))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn hex(s: &str) -> Vec<u8> {
        crate::text::from_hex(&s.replace(' ', "")).unwrap()
    }

    #[test]
    fn real_clients_requests() {
        // qstat -gs3, opengsq gamespy3: no challenge
        assert_eq!(
            Request::decode(&hex("fefd00 10203040 ffffff01")).unwrap(),
            Request::full(0x1020_3040, None)
        );
        // qstat -gs4: BE challenge
        assert_eq!(
            Request::decode(&hex("fefd00 10203040 01020304 ffffff01")).unwrap(),
            Request::full(0x1020_3040, Some(0x0102_0304))
        );
        // gamedig 0x09 with four zero bytes more
        assert_eq!(
            Request::decode(&hex("fefd09 00000001 00000000")).unwrap(),
            Request::Challenge { session_id: 1 }
        );
    }

    #[test]
    fn spec_examples() {
        // sub-protocol A: headers and teams
        assert_eq!(
            Request::decode(&hex("fefd00 20212120 ff00ff00")).unwrap(),
            Request::Info {
                session_id: 0x2021_2120,
                challenge: None,
                kind: InfoKind::Basic {
                    server: true,
                    players: false,
                    teams: true
                }
            }
        );
        // sub-protocol C: numplayers and hostname
        let c = hex("fefd00 20212120 02 08 01 0000");
        let r = Request::decode(&c).unwrap();
        assert_eq!(
            r,
            Request::Info {
                session_id: 0x2021_2120,
                challenge: None,
                kind: InfoKind::Keys(vec![8, 1])
            }
        );
        assert_eq!(r.to_bytes(), c);
        // echo keeps at most 32 bytes
        let e = Request::decode(&[&[0xfe, 0xfd, 0x02][..], &[7u8; 40]].concat()).unwrap();
        assert_eq!(e, Request::Echo { data: vec![7; 32] });
        assert_eq!(
            Request::decode(&hex("fefd08")).unwrap(),
            Request::KeepAlive { session_id: None }
        );
    }

    #[test]
    fn round_trips_and_rejects() {
        for r in [
            Request::full(7, None),
            Request::full(7, Some(99)),
            Request::Info {
                session_id: 1,
                challenge: Some(5),
                kind: InfoKind::Keys(vec![1, 2, 3, 4, 5]),
            },
            Request::Info {
                session_id: 1,
                challenge: Some(5),
                kind: InfoKind::Basic {
                    server: false,
                    players: true,
                    teams: false,
                },
            },
            Request::Challenge { session_id: 3 },
            Request::KeepAlive {
                session_id: Some(9),
            },
        ] {
            assert_eq!(Request::decode(&r.to_bytes()).unwrap(), r);
        }
        for bad in [
            &b""[..],
            &[0xfe],
            &[0xfe, 0xfd],
            &[0xfe, 0xfd, 0x00, 1, 2, 3],
            &[0xfe, 0xfd, 0x00, 1, 2, 3, 4, 0x12, 0x34],
            &[0xfe, 0xfd, 0x07, 1, 2, 3, 4],
            &[0xff, 0xfd, 0x09, 1, 2, 3, 4],
        ] {
            assert!(Request::decode(bad).is_err(), "{bad:x?}");
        }
    }
}
