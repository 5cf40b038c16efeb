//! The heartbeat a GameSpy v1 server sends its master servers, sans-IO:
//! `\heartbeat\PORT\gamename\NAME` (UDP, to the master's port 27900), with
//! `\statechanged\N` added when the server's state changed (a new map, a player joining)
//! so that the master queries it again at once. `PORT` is the server's query port; the
//! master asks `\status\` there to verify and list the server.
//!
//! Other pairs after those are kept in order ([`Heartbeat::extra`]), at most
//! [`MAX_PAIRS`] in all, in at most [`MAX_HEARTBEAT`] bytes.

use super::wire::decode_pairs;
use crate::error::{DecodeError, DecodeErrorKind};
use crate::text::Text;

/// Longest heartbeat we decode.
pub const MAX_HEARTBEAT: usize = 512;
/// Most pairs in a heartbeat.
pub const MAX_PAIRS: usize = 16;
/// Longest game name we accept (the games' are 2 to 16 bytes).
pub const MAX_GAME_NAME: usize = 64;

/// A server's heartbeat.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct Heartbeat {
    /// The server's query port.
    pub port: u16,
    /// Its game (`ut`, `bfield1942`, `mohaa`…).
    pub game_name: Text,
    /// `\statechanged\N`, when sent (the games send 1, or 2 when the server is shutting
    /// down).
    pub state_changed: Option<u32>,
    /// Other pairs, in order.
    pub extra: Vec<(Text, Text)>,
}

impl Heartbeat {
    /// A heartbeat for `port` and `game_name`.
    pub fn new(port: u16, game_name: impl Into<Text>) -> Self {
        Self {
            port,
            game_name: game_name.into(),
            state_changed: None,
            extra: Vec::new(),
        }
    }

    /// Appends the datagram to `out` (`\` dropped from text).
    pub fn encode(&self, out: &mut Vec<u8>) {
        let put = |out: &mut Vec<u8>, s: &str| out.extend(s.bytes().filter(|&b| b != b'\\'));
        out.extend_from_slice(format!("\\heartbeat\\{}\\gamename\\", self.port).as_bytes());
        put(out, &self.game_name);
        if let Some(n) = self.state_changed {
            out.extend_from_slice(format!("\\statechanged\\{n}").as_bytes());
        }
        for (k, v) in &self.extra {
            out.push(b'\\');
            put(out, k);
            out.push(b'\\');
            put(out, v);
        }
    }
}

/// Whether `datagram` starts as a heartbeat (`\heartbeat\`).
pub fn is_heartbeat(datagram: &[u8]) -> bool {
    datagram
        .get(..11)
        .is_some_and(|h| h.eq_ignore_ascii_case(b"\\heartbeat\\"))
}

/// Decodes a heartbeat: `\heartbeat\` first, a port, a `gamename`; `statechanged` and
/// other pairs optional.
pub fn decode_heartbeat(datagram: &[u8]) -> Result<Heartbeat, DecodeError> {
    if datagram.len() > MAX_HEARTBEAT {
        return Err(DecodeError::new(
            0,
            "heartbeat",
            DecodeErrorKind::TooLarge {
                limit: MAX_HEARTBEAT as u64,
            },
        ));
    }
    if !is_heartbeat(datagram) {
        return Err(DecodeError::new(0, "heartbeat", DecodeErrorKind::BadMagic));
    }
    let mut warnings = Vec::new();
    let pairs = decode_pairs(datagram, MAX_PAIRS, &mut warnings)?;
    let mut port = None;
    let mut game = None;
    let mut state_changed = None;
    let mut extra = Vec::new();
    for p in pairs {
        let key = p.key.to_ascii_lowercase();
        match key.as_str() {
            "heartbeat" if port.is_none() => {
                let ok = !p.value.is_empty() && p.value.bytes().all(|b| b.is_ascii_digit());
                port = ok
                    .then(|| p.value.parse::<u16>().ok())
                    .flatten()
                    .filter(|&n| n != 0);
                if port.is_none() {
                    return Err(DecodeError::invalid(
                        p.at,
                        "port",
                        "not a port (1 to 65535)",
                    ));
                }
            }
            "gamename" if game.is_none() => {
                if p.value.is_empty() || p.value.len() > MAX_GAME_NAME {
                    return Err(DecodeError::invalid(
                        p.at,
                        "gamename",
                        "empty or longer than 64 bytes",
                    ));
                }
                game = Some(p.value);
            }
            "statechanged" if state_changed.is_none() => {
                let n = p
                    .value
                    .trim()
                    .parse::<u32>()
                    .map_err(|_| DecodeError::invalid(p.at, "statechanged", "not a number"))?;
                state_changed = Some(n);
            }
            _ => extra.push((p.key, p.value)),
        }
    }
    let (Some(port), Some(game_name)) = (port, game) else {
        return Err(DecodeError::invalid(
            datagram.len(),
            "gamename",
            "no game name",
        ));
    };
    Ok(Heartbeat {
        port,
        game_name,
        state_changed,
        extra,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn heartbeats_decode_and_encode() {
        let h = decode_heartbeat(b"\\heartbeat\\7778\\gamename\\ut").unwrap();
        assert_eq!(h, Heartbeat::new(7778, "ut"));
        let h =
            decode_heartbeat(b"\\heartbeat\\23000\\gamename\\bfield1942\\statechanged\\1").unwrap();
        assert_eq!((h.port, h.state_changed), (23000, Some(1)));
        let mut out = Vec::new();
        h.encode(&mut out);
        assert_eq!(
            out,
            b"\\heartbeat\\23000\\gamename\\bfield1942\\statechanged\\1"
        );
        assert_eq!(decode_heartbeat(&out).unwrap(), h);
        let h = decode_heartbeat(b"\\heartbeat\\12300\\gamename\\mohaa\\extra\\x\\").unwrap();
        assert_eq!(h.extra, [("extra".into(), "x".into())]);
    }

    #[test]
    fn bad_heartbeats_are_errors() {
        for (bytes, field) in [
            (&b"\\heartbeat\\0\\gamename\\ut"[..], "port"),
            (b"\\heartbeat\\70000\\gamename\\ut", "port"),
            (b"\\heartbeat\\-1\\gamename\\ut", "port"),
            (b"\\heartbeat\\7778", "gamename"),
            (b"\\heartbeat\\7778\\gamename\\", "gamename"),
            (
                b"\\heartbeat\\7778\\gamename\\ut\\statechanged\\x",
                "statechanged",
            ),
            (b"\\status\\", "heartbeat"),
        ] {
            let e = decode_heartbeat(bytes).unwrap_err();
            assert_eq!(e.field, field, "{e}");
        }
        let long = [b"\\heartbeat\\1\\gamename\\ut".as_slice(), &[b'a'; 600]].concat();
        assert!(decode_heartbeat(&long).is_err());
        let many: Vec<u8> = [b"\\heartbeat\\1\\gamename\\ut".as_slice()]
            .into_iter()
            .chain(std::iter::repeat_n(b"\\k\\v".as_slice(), 20))
            .flatten()
            .copied()
            .collect();
        assert!(matches!(
            decode_heartbeat(&many).unwrap_err().kind,
            DecodeErrorKind::TooLarge { limit: 16 }
        ));
    }
}
