//! The GameSpy v3 side of a responder: one request datagram in, zero or more reply
//! datagrams out. It has the shape of the other protocols' responders: the caller owns
//! the challenge keys, the rate limiter and the ban hook shared by every protocol.
//!
//! What it does (`interop.md` §5.2, `security.md` §3, `docs/gamespy3.md`):
//! 1. `FE FD 09 <sid>` (with or without trailing bytes) gets `09 <sid> <challenge> 00`:
//!    in [`ChallengeMode::Real`] (the default) a stateless challenge bound to the
//!    client's IP (31 bits, as decimal text; at most 16 bytes against the request's 7);
//!    in [`ChallengeMode::Bf2`] the `"0"` Battlefield 2 sends;
//! 2. `FE FD 00 <sid> [challenge] …` (sub-protocols A, B, C) is answered in `Real` mode
//!    only when the 4 challenge bytes are one this responder issued to that IP (read
//!    big-endian, or little-endian as gamedig's `ut3` writes them); otherwise silence.
//!    In `Bf2` mode it is answered with or without challenge bytes: the Battlefield 2
//!    amplifier, opt-in, bounded by the per-source rate limit;
//! 3. sub-protocol B: every section in packets of at most 1400 bytes, in order, numbered
//!    with the last flag on the last, each non-final packet ending the Battlefield 2 way
//!    ([`encode_packets`]); a reply over [`Gs3Config::max_packets`] loses players, then
//!    teams, from the end until it fits;
//! 4. sub-protocol A: one packet with the flagged sections, rows dropped from the end
//!    until it fits; sub-protocol C: the values of the asked header indexes, in order;
//! 5. echo `02` gets `05` and the same bytes (at most 32; smaller than the request);
//! 6. keep-alives `08` and anything malformed, oversized or from a banned source get
//!    no reply.
//!
//! The session id is echoed verbatim. Nothing here panics.

use std::time::Instant;

use super::mapping::{header_value, server_pairs, status_to_info};
use super::reply::{encode_keys_reply, encode_packets, ServerInfo};
use super::request::{InfoKind, Request};
use super::{kind, MAX_PACKET};
use crate::guard::ChallengeKeys;
use crate::responder_core::{
    ignorable_outcome, AnswerKind, Cached, Context, Incoming, ProtocolResponder, Transmits,
    Unanswered,
};
use crate::Status;

/// How the responder treats the `09` challenge exchange.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum ChallengeMode {
    /// A real stateless challenge, required in every server-information request (the
    /// UT3 / GameSpy 4 style). No reply larger than its request goes to a source that
    /// has not proved its address. The default.
    #[default]
    Real,
    /// Exactly what Battlefield 2 does: `09` is answered with `"0"` and requests are
    /// answered with or without challenge bytes. Needed by clients that never send `09`
    /// (qstat `-gs3`, opengsq `gamespy3`/`battlefield2`); a reflection amplifier of about
    /// 127× per packet, bounded only by the per-source rate limit.
    Bf2,
}

/// GameSpy v3 responder settings.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub struct Gs3Config {
    /// Answer GameSpy v3 at all (default true).
    pub enabled: bool,
    /// The challenge mode (default [`ChallengeMode::Real`]).
    pub challenge: ChallengeMode,
    /// Answer echo requests (default true: the reply is smaller than the request).
    pub echo: bool,
    /// Largest request read (default 256 bytes; real requests have 7 to 15).
    pub max_request_bytes: usize,
    /// Most packets in one reply (default 48, about 64 KiB).
    pub max_packets: usize,
}

impl Default for Gs3Config {
    fn default() -> Self {
        Self {
            enabled: true,
            challenge: ChallengeMode::Real,
            echo: true,
            max_request_bytes: 256,
            max_packets: 48,
        }
    }
}

/// What the GameSpy v3 responder did with a datagram.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum Gs3Outcome {
    /// Not answered, and why.
    Ignored(Unanswered),
    /// Answered a `09` with a challenge.
    Challenge,
    /// Answered sub-protocol A or B.
    Info {
        /// Packets sent.
        packets: usize,
        /// Rows left out to fit the limits.
        truncated: bool,
    },
    /// Answered sub-protocol C.
    Keys,
    /// Answered an echo.
    Echo,
    /// A master server's keep-alive (no reply).
    KeepAlive,
}

/// The challenge value `ip` gets: 31 bits (clients parse and write it as a signed
/// 32-bit number), never 0.
fn challenge_value(raw: u32) -> u32 {
    (raw & 0x7fff_ffff).max(1)
}

/// The GameSpy v3 part of a responder.
#[derive(Debug, Clone)]
pub struct Gs3Responder {
    config: Gs3Config,
    /// The full (sub-protocol B) reply of the current status snapshot; its packets carry
    /// the session id at bytes 1..5, patched for each request.
    full_cache: Cached,
}

/// Where the session id sits in every info reply packet (after the type byte).
const SESSION_ID_AT: std::ops::Range<usize> = 1..5;

impl Gs3Responder {
    /// A responder with the given settings.
    pub fn new(config: Gs3Config) -> Self {
        Self {
            config,
            full_cache: Cached::default(),
        }
    }

    /// The settings.
    pub fn config(&self) -> &Gs3Config {
        &self.config
    }

    /// The challenge `ip` gets now in [`ChallengeMode::Real`].
    pub fn challenge(keys: &mut ChallengeKeys, now: Instant, ip: std::net::IpAddr) -> u32 {
        challenge_value(keys.issue(now, super::GUARD_ID, ip))
    }

    /// Writes `info` as packets into `out`; `None` (nothing left in `out`) when it needs
    /// more than `max_packets`.
    fn write(
        info: &ServerInfo,
        session_id: u32,
        max_packets: usize,
        out: &mut Transmits,
    ) -> Option<usize> {
        let start = out.len();
        let mut n = 0;
        let r = encode_packets(info, session_id, MAX_PACKET, |p| {
            n += 1;
            if n <= max_packets {
                out.push_buf().extend_from_slice(p);
            }
        });
        match r {
            Ok(count) if count <= max_packets => Some(count),
            _ => {
                out.truncate(start);
                None
            }
        }
    }

    /// Drops rows (players first, then teams) from the end of `info`, a fraction at a
    /// time, until `fits` says yes; at most a few dozen tries.
    fn fit(mut info: ServerInfo, mut fits: impl FnMut(&ServerInfo) -> bool) -> (ServerInfo, bool) {
        let mut truncated = false;
        for _ in 0..64 {
            if fits(&info) {
                return (info, truncated);
            }
            truncated = true;
            let rows =
                |cols: &[super::Column]| cols.iter().map(|c| c.values.len()).max().unwrap_or(0);
            let (cols, n) = if rows(&info.players) > 0 {
                let n = rows(&info.players);
                (&mut info.players, n)
            } else if rows(&info.teams) > 0 {
                let n = rows(&info.teams);
                (&mut info.teams, n)
            } else if !info.server.is_empty() {
                let keep = info.server.len() * 3 / 4;
                info.server.truncate(keep);
                continue;
            } else {
                break;
            };
            let keep = n - (n / 8).max(1);
            for c in cols.iter_mut() {
                c.values.truncate(keep);
            }
        }
        (info, truncated)
    }

    fn full(
        &mut self,
        status: &Status,
        generation: u64,
        session_id: u32,
        out: &mut Transmits,
    ) -> Gs3Outcome {
        if let Some(packets) = self.full_cache.get(generation) {
            for p in packets {
                let b = out.push_buf();
                b.extend_from_slice(p);
                if let Some(sid) = b.get_mut(SESSION_ID_AT) {
                    sid.copy_from_slice(&session_id.to_be_bytes());
                }
            }
            return Gs3Outcome::Info {
                packets: packets.len(),
                truncated: self.full_cache.flag,
            };
        }
        let start = out.len();
        let outcome = self.full_uncached(status, session_id, out);
        if let Gs3Outcome::Info { truncated, .. } = outcome {
            self.full_cache
                .store(generation, out.iter_from(start), truncated);
        }
        outcome
    }

    fn full_uncached(
        &mut self,
        status: &Status,
        session_id: u32,
        out: &mut Transmits,
    ) -> Gs3Outcome {
        let max = self.config.max_packets.clamp(1, 128);
        let info = status_to_info(status);
        if let Some(packets) = Self::write(&info, session_id, max, out) {
            return Gs3Outcome::Info {
                packets,
                truncated: false,
            };
        }
        let (info, _) = Self::fit(info, |i| {
            encode_packets(i, session_id, MAX_PACKET, |_| {}).is_ok_and(|n| n <= max)
        });
        let packets = Self::write(&info, session_id, max, out).unwrap_or(0);
        Gs3Outcome::Info {
            packets,
            truncated: true,
        }
    }

    fn basic(
        &mut self,
        status: &Status,
        session_id: u32,
        [server, players, teams]: [bool; 3],
        out: &mut Transmits,
    ) -> Gs3Outcome {
        let mut info = status_to_info(status);
        if !server {
            info.server.clear();
        }
        if !players {
            info.players.clear();
        }
        if !teams {
            info.teams.clear();
        }
        let (info, truncated) = Self::fit(info, |i| {
            encode_packets(i, session_id, MAX_PACKET, |_| {}).is_ok_and(|n| n == 1)
        });
        let packets = Self::write(&info, session_id, 1, out).unwrap_or(0);
        Gs3Outcome::Info { packets, truncated }
    }
}

/// Appends `v` as decimal digits (no allocation).
fn push_decimal(out: &mut Vec<u8>, v: u32) {
    let mut digits = [0u8; 10];
    let mut n = v;
    let mut i = digits.len();
    loop {
        i -= 1;
        if let Some(d) = digits.get_mut(i) {
            *d = b'0' + (n % 10) as u8;
        }
        n /= 10;
        if n == 0 || i == 0 {
            break;
        }
    }
    out.extend_from_slice(digits.get(i..).unwrap_or_default());
}

ignorable_outcome!(Gs3Outcome);

impl ProtocolResponder for Gs3Responder {
    type Outcome = Gs3Outcome;

    fn answer_kind(&self, outcome: &Gs3Outcome) -> Option<AnswerKind> {
        match outcome {
            Gs3Outcome::Ignored(_) | Gs3Outcome::KeepAlive => None,
            Gs3Outcome::Challenge => Some(AnswerKind::Challenge),
            Gs3Outcome::Info { .. } => Some(AnswerKind::Info),
            Gs3Outcome::Keys => Some(AnswerKind::Keys),
            Gs3Outcome::Echo => Some(AnswerKind::Ping),
        }
    }

    fn max_request_bytes(&self) -> usize {
        self.config.max_request_bytes
    }

    fn proven(&self, outcome: &Gs3Outcome) -> bool {
        self.config.challenge == ChallengeMode::Real
            && matches!(outcome, Gs3Outcome::Info { .. } | Gs3Outcome::Keys)
    }

    fn enabled(&self) -> bool {
        self.config.enabled
    }

    fn answer(&mut self, incoming: Incoming<'_>, cx: Context<'_>) -> Gs3Outcome {
        let (now, ip, datagram, reject) = incoming.parts();
        let generation = cx.generation;
        let (status, keys, out) = cx.parts();
        let Ok(request) = Request::decode(datagram) else {
            return Gs3Outcome::Ignored(Unanswered::malformed("not a GameSpy v3 request"));
        };
        if reject {
            return Gs3Outcome::Ignored(Unanswered::banned("banned source"));
        }
        match request {
            Request::KeepAlive { .. } => Gs3Outcome::KeepAlive,
            Request::Echo { data } => {
                if !self.config.echo {
                    return Gs3Outcome::Ignored(Unanswered::disabled("echo is off"));
                }
                let b = out.push_buf();
                b.push(kind::ECHO_REPLY);
                b.extend_from_slice(&data);
                Gs3Outcome::Echo
            }
            Request::Challenge { session_id } => {
                // `09 <sid> <challenge as decimal text> 00`, written in place (what
                // `ChallengeReply::encode` writes, without building the text first).
                let b = out.push_buf();
                b.push(kind::CHALLENGE);
                b.extend_from_slice(&session_id.to_be_bytes());
                match self.config.challenge {
                    ChallengeMode::Bf2 => b.push(b'0'),
                    ChallengeMode::Real => {
                        push_decimal(b, Self::challenge(keys, now, ip));
                    }
                }
                b.push(0);
                Gs3Outcome::Challenge
            }
            Request::Info {
                session_id,
                challenge,
                kind,
            } => {
                if self.config.challenge == ChallengeMode::Real {
                    let ok = challenge.is_some_and(|c| {
                        let [a, b] = keys.candidates(now, super::GUARD_ID, ip);
                        let valid = [challenge_value(a), challenge_value(b)];
                        valid.contains(&c) || valid.contains(&c.swap_bytes())
                    });
                    if !ok {
                        return Gs3Outcome::Ignored(Unanswered::bad_challenge(
                            "no valid challenge",
                        ));
                    }
                }
                match kind {
                    InfoKind::Full => self.full(status, generation, session_id, out),
                    InfoKind::Basic {
                        server,
                        players,
                        teams,
                    } => self.basic(status, session_id, [server, players, teams], out),
                    InfoKind::Keys(indexes) => {
                        let pairs = server_pairs(status);
                        let values: Vec<_> = indexes
                            .iter()
                            .take(64)
                            .map(|&i| header_value(&pairs, i))
                            .collect();
                        let refs: Vec<&str> = values.iter().map(|v| v.as_str()).collect();
                        let b = out.push_buf();
                        encode_keys_reply(session_id, &refs, b);
                        if b.len() > MAX_PACKET {
                            b.truncate(MAX_PACKET - 1);
                            b.push(0);
                        }
                        Gs3Outcome::Keys
                    }
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::push_decimal;

    #[test]
    fn decimal_digits_as_to_string() {
        for v in [0, 1, 9, 10, 99, 100, 12345, 0x7fff_ffff, u32::MAX] {
            let mut b = vec![b'x'];
            push_decimal(&mut b, v);
            assert_eq!(b, format!("x{v}").into_bytes());
        }
    }
}
