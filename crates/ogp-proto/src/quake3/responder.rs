//! The Quake III side of a responder: `getinfo` and `getstatus` answered from the status
//! model, as ioquake3 answers them.
//!
//! **Off by default.** The protocol has no server challenge: every answer goes to an
//! address nobody proved, so a spoofed source turns the server into a reflector. The
//! bandwidth amplification factor, reply bytes over request bytes:
//!
//! | request (smallest) | reply | factor |
//! |---|---|---|
//! | `getinfo` (11 bytes) | `infoResponse`, about 150–300 bytes | about 14–27× |
//! | `getstatus` (13 bytes) | `statusResponse`, at most [`Q3Config::max_reply_bytes`] (1,400) | at most 108× |
//!
//! Switched on, it is bounded in bytes, as ioquake3 bounds it in answers (10 a second
//! per address, 100 a second in all): every reply is charged, by its size, to a budget
//! per source address ([`Q3Config::per_source`], 14,000 bytes a second by default) and
//! to an overall one ([`Q3Config::total`], 140,000 bytes a second), both before it is
//! sent; a reply either budget cannot pay is not sent. These come on top of the shared
//! per-source and overall answer budgets of the [`Responder`](crate::responder::Responder).
//! A reply longer than `max_reply_bytes` loses players, then variables, from the end.
//!
//! The challenge of a request is echoed as `\challenge\…`; the request decoder refuses
//! one that could inject variables ([`super::wire::decode_request`]).

use std::net::{IpAddr, Ipv4Addr};
use std::time::Instant;

use super::mapping::status_to_reply;
use super::wire::{decode_request, Command, Reply};
use crate::guard::{RateConfig, RateDecision, RateLimiter, TokenBucket};
use crate::responder_core::{
    ignorable_outcome, AnswerKind, Cached, Context, DropReason, Incoming, ProtocolResponder,
    Unanswered,
};
use crate::text::Text;

#[cfg(test)]
use super::wire::ReplyKind;

/// Quake III responder settings.
#[derive(Debug, Clone, Copy, PartialEq)]
#[non_exhaustive]
pub struct Q3Config {
    /// Answer Quake III at all (default **false**: see the module docs).
    pub enabled: bool,
    /// Longest request answered (default 160 bytes).
    pub max_request_bytes: usize,
    /// Longest reply (default 1,400 bytes, one unfragmented datagram).
    pub max_reply_bytes: usize,
    /// Bytes per second (and burst) sent toward one source address (default 14,000 a
    /// second, 28,000 at once).
    pub per_source: RateConfig,
    /// Bytes per second (and burst) sent in all (default 140,000 a second and at once).
    pub total: RateConfig,
    /// Source addresses tracked by the per-source budget (default 4,096).
    pub table_capacity: usize,
}

impl Default for Q3Config {
    fn default() -> Self {
        Self {
            enabled: false,
            max_request_bytes: 160,
            max_reply_bytes: 1400,
            per_source: RateConfig::new(14_000.0, 28_000.0),
            total: RateConfig::new(140_000.0, 140_000.0),
            table_capacity: 4096,
        }
    }
}

impl Q3Config {
    /// The default settings, switched on or off.
    pub fn enabled(enabled: bool) -> Self {
        Self {
            enabled,
            ..Self::default()
        }
    }
}

/// What the Quake III responder did with a datagram.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum Q3Outcome {
    /// Not answered, and why.
    Ignored(Unanswered),
    /// `infoResponse` sent.
    Info,
    /// `statusResponse` sent; `truncated` when players or variables were left out to fit.
    Status {
        /// Whether something was left out.
        truncated: bool,
    },
}

ignorable_outcome!(Q3Outcome);

/// The byte budgets, made at the first answer (keyed from the responder's secret).
#[derive(Debug, Clone)]
struct Budgets {
    per_source: RateLimiter,
    total: TokenBucket,
}

/// The Quake III responder.
#[derive(Debug, Clone)]
pub struct Q3Responder {
    config: Q3Config,
    budgets: Option<Budgets>,
    /// The replies to requests without a challenge (qstat's `getstatus`), kept while the
    /// status is the same snapshot: a hit copies bytes.
    info_cache: Cached,
    status_cache: Cached,
}

impl Q3Responder {
    /// A responder with these settings.
    pub fn new(config: Q3Config) -> Self {
        Self {
            config,
            budgets: None,
            info_cache: Cached::default(),
            status_cache: Cached::default(),
        }
    }

    /// Its settings.
    pub fn config(&self) -> &Q3Config {
        &self.config
    }

    /// Whether `bytes` may go to `ip` now (and charges them).
    fn pay(
        &mut self,
        now: Instant,
        ip: IpAddr,
        bytes: usize,
        keys: &mut crate::guard::ChallengeKeys,
    ) -> bool {
        let config = self.config;
        let b = self.budgets.get_or_insert_with(|| {
            let any = IpAddr::V4(Ipv4Addr::UNSPECIFIED);
            let lo = keys.issue_bound(now, super::GUARD_ID, any, b"quake3 budget 0");
            let hi = keys.issue_bound(now, super::GUARD_ID, any, b"quake3 budget 1");
            let mut secret = [0u8; 16];
            for (d, s) in secret
                .iter_mut()
                .zip(lo.to_le_bytes().into_iter().chain(hi.to_le_bytes()))
            {
                *d = s;
            }
            Budgets {
                per_source: RateLimiter::new(
                    config.per_source,
                    config.table_capacity.max(1),
                    secret,
                    now,
                ),
                total: TokenBucket::new(config.total, now),
            }
        });
        // Precision: replies are at most a few KiB, exact in f32.
        let cost = bytes as f32;
        b.per_source.charge(now, ip, cost) == RateDecision::Allow
            && b.total.charge(now, cost) == RateDecision::Allow
    }
}

/// Encodes `reply` with `challenge` last, into at most `max` bytes: players, then
/// variables, are left out from the end until it fits. Returns whether any were.
pub(crate) fn encode_fitting(
    mut reply: Reply,
    challenge: Option<&Text>,
    max: usize,
    out: &mut Vec<u8>,
) -> bool {
    if let Some(c) = challenge {
        reply.vars.push((Text::const_new("challenge"), c.clone()));
    }
    let start = out.len();
    let mut truncated = false;
    loop {
        out.truncate(start);
        reply.encode(out);
        if out.len() - start <= max {
            return truncated;
        }
        truncated = true;
        if reply.players.pop().is_some() {
            continue;
        }
        // Keep the challenge (last) so the asker can still match the reply.
        let n = reply.vars.len();
        if n <= 1 {
            out.truncate(start);
            return true;
        }
        reply.vars.remove(n - 2);
    }
}

impl ProtocolResponder for Q3Responder {
    type Outcome = Q3Outcome;

    fn proven(&self, _outcome: &Q3Outcome) -> bool {
        false
    }

    fn answer_kind(&self, outcome: &Q3Outcome) -> Option<AnswerKind> {
        match outcome {
            Q3Outcome::Ignored(_) => None,
            Q3Outcome::Info => Some(AnswerKind::Info),
            Q3Outcome::Status { .. } => Some(AnswerKind::Full),
        }
    }

    fn max_request_bytes(&self) -> usize {
        self.config.max_request_bytes
    }

    fn enabled(&self) -> bool {
        self.config.enabled
    }

    fn answer(&mut self, incoming: Incoming<'_>, cx: Context<'_>) -> Q3Outcome {
        let (now, ip, datagram, reject) = incoming.parts();
        if reject {
            return Q3Outcome::Ignored(Unanswered::banned("banned source (no error in Quake III)"));
        }
        let request = match decode_request(datagram) {
            Ok(r) => r,
            Err(_) => return Q3Outcome::Ignored(Unanswered::malformed("not a valid request")),
        };
        let generation = cx.generation;
        let (status, keys, out) = cx.parts();
        let max = self.config.max_reply_bytes.max(64);
        // Without a challenge the reply depends on the status alone: cached.
        let cache = match (&request.challenge, request.command) {
            (Some(_), _) => None,
            (None, Command::GetInfo) => Some(&mut self.info_cache),
            (None, Command::GetStatus) => Some(&mut self.status_cache),
        };
        let buf = out.push_buf();
        let hit = cache.as_ref().and_then(|c| {
            let d = c.get(generation)?.first()?;
            buf.extend_from_slice(d);
            Some(c.flag)
        });
        let truncated = match (hit, cache) {
            (Some(flag), _) => flag,
            (None, cache) => {
                let reply = status_to_reply(status, request.command.reply());
                let truncated = encode_fitting(reply, request.challenge.as_ref(), max, buf);
                if let Some(c) = cache {
                    c.store(generation, [buf.as_slice()], truncated);
                }
                truncated
            }
        };
        let bytes = buf.len();
        if bytes == 0 || !self.pay(now, ip, bytes, keys) {
            out.clear();
            return Q3Outcome::Ignored(Unanswered::new(
                DropReason::RateLimited,
                "Quake III byte budget spent",
            ));
        }
        match request.command {
            Command::GetInfo => Q3Outcome::Info,
            Command::GetStatus => Q3Outcome::Status { truncated },
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::quake3::wire::decode_reply;

    #[test]
    fn a_long_reply_is_cut_to_fit_and_keeps_the_challenge() {
        let status = crate::Status {
            host_name: Some("h".into()),
            players: Some(
                (0..200)
                    .map(|i| crate::Player::named(format!("player number {i}")))
                    .collect(),
            ),
            ..Default::default()
        };
        let reply = status_to_reply(&status, ReplyKind::Status);
        let mut out = Vec::new();
        let c = Text::from("abc");
        assert!(encode_fitting(reply, Some(&c), 1400, &mut out));
        assert!(out.len() <= 1400, "{}", out.len());
        let d = decode_reply(&out).unwrap();
        assert_eq!(d.reply.get("challenge"), Some("abc"));
        assert!(!d.reply.players.is_empty() && d.reply.players.len() < 200);
    }
}
