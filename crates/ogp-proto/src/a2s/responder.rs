//! The A2S side of a responder: one request datagram in, zero or more reply datagrams
//! out. It has the same shape as [`OgpResponder`](crate::ogp::responder::OgpResponder):
//! the caller owns the challenge keys, the rate limiter and the ban hook shared by all
//! protocols, and passes the datagram as an [`Incoming`].
//!
//! What it does (`interop.md` §5.1, `security.md` §3):
//! 1. requests over 1400 bytes, garbage, replies and unknown types are ignored (silence);
//!    so is a banned source (A2S has no "banned" reply);
//! 2. A2S_INFO (`54 "Source Engine Query\0"` with 0, 4 or 8 trailing bytes; the first 4
//!    are the challenge) is answered only with a valid challenge by default; otherwise
//!    `FF FF FF FF 41 <C>` (9 bytes, less than the 25-byte request). The INFO reply is
//!    never split: it is made to fit one 1400-byte datagram by leaving out the keywords,
//!    then the SourceTV fields, then shortening strings;
//! 3. A2S_PLAYER and A2S_RULES always need a valid challenge; `FFFFFFFF`, `00000000` or
//!    a wrong value get `41 <C>`. One challenge per client IP (the keys' epochs, never the
//!    port) is valid for INFO, PLAYER and RULES alike (qstat reuses the INFO challenge);
//! 4. replies over 1400 bytes are split in the Source layout with the size field 1248,
//!    ids 1…0x7FFF (bit 31 and bit 15 clear), fragments in order, never compressed; a
//!    reply over [`A2sConfig::max_reply_bytes`] keeps the longest prefix of its players or
//!    rules that fits;
//! 5. server type and environment are lower-case letters; The Ship (app id 2400) gets
//!    its INFO fields and its per-player deaths and money;
//! 6. A2S_SERVERQUERY_GETCHALLENGE (`57`) and A2A_PING (`69`) are off by default;
//! 7. optional GoldSrc emulation ([`Flavor`]): `'m'` replies, or `'I'` with protocol 48
//!    and an app id whose low byte is below 128, with GoldSrc-layout splits (at most 15
//!    fragments) and the GoldSrc ping reply.
//!
//! qstat chooses the split layout from the INFO app id's low byte (GoldSrc below 128,
//! Source from 128: [`QSTAT_SOURCE_SPLIT_FROM`]); a status without an app id is therefore
//! announced as [`DEFAULT_APP_ID`](super::mapping::DEFAULT_APP_ID) (255). An app id the
//! status does give is sent as it is, even when qstat then misreads the splits (as it
//! does for the real servers of those games).
//!
//! Unverified sources never get more than 9 bytes (21 for an enabled ping) and never a
//! split reply. Nothing here panics.

use std::net::IpAddr;
use std::time::Instant;

use super::info::InfoReply;
use super::mapping::{
    status_to_goldsrc, status_to_info, status_to_players, status_to_rules, GOLDSRC_PROTOCOL,
    QSTAT_SOURCE_SPLIT_FROM,
};
use super::request::{Request, ASK_CHALLENGE};
use super::split::{encode_fragment, fragment_count, payload_per_fragment, Layout};
use super::{Challenge, PingReply, MAX_DATAGRAM, SINGLE};
use crate::guard::ChallengeKeys;
use crate::responder_core::{
    ignorable_outcome, AnswerKind, Cached, Context, Incoming, ProtocolResponder, Transmits,
    Unanswered,
};
use crate::Status;

/// Which engine the responder looks like.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum Flavor {
    /// Source: `'I'` replies, Source-layout splits (default).
    #[default]
    Source,
    /// GoldSrc with `'m'` INFO replies and GoldSrc-layout splits.
    GoldSrcM,
    /// GoldSrc engine with `'I'` replies of protocol 48 (as Steam's HLDS sends) and
    /// GoldSrc-layout splits; qstat and gamedig pick the GoldSrc layout from these values
    /// (qstat from an app id whose low byte is below 128, gamedig from protocol 48).
    GoldSrcI,
}

/// A2S responder settings.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub struct A2sConfig {
    /// Answer A2S at all (default true). Off, every A2S request is ignored (silence),
    /// counted like any other ignored datagram.
    pub enabled: bool,
    /// Require a challenge before answering A2S_INFO (default true). Off, INFO answers
    /// any source (the pre-2020 amplifier); PLAYER and RULES need one regardless.
    pub require_info_challenge: bool,
    /// Engine emulation (default Source).
    pub flavor: Flavor,
    /// Answer A2S_SERVERQUERY_GETCHALLENGE `57` (default false).
    pub answer_get_challenge: bool,
    /// Answer A2A_PING `69` (default false).
    pub answer_ping: bool,
    /// Largest request read (default 1400).
    pub max_request_bytes: usize,
    /// Largest reply, all fragments' payloads together (default 65536; GoldSrc splits
    /// are further limited to 15 fragments).
    pub max_reply_bytes: usize,
}

impl Default for A2sConfig {
    fn default() -> Self {
        Self {
            enabled: true,
            require_info_challenge: true,
            flavor: Flavor::Source,
            answer_get_challenge: false,
            answer_ping: false,
            max_request_bytes: MAX_DATAGRAM,
            max_reply_bytes: 65536,
        }
    }
}

/// What the A2S responder did with a datagram.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum A2sOutcome {
    /// Not answered, and why.
    Ignored(Unanswered),
    /// Answered with `41 <C>`.
    Challenge,
    /// Answered A2S_INFO.
    Info,
    /// Answered A2S_PLAYER.
    Players {
        /// Datagrams sent (more than 1 when split).
        datagrams: usize,
        /// Players left out to fit the size limits.
        truncated: bool,
    },
    /// Answered A2S_RULES.
    Rules {
        /// Datagrams sent (more than 1 when split).
        datagrams: usize,
        /// Rules left out to fit the size limits.
        truncated: bool,
    },
    /// Answered A2A_PING.
    Ping,
}

/// The A2S part of a responder.
#[derive(Debug, Clone)]
pub struct A2sResponder {
    config: A2sConfig,
    next_split_id: u32,
    buf: Vec<u8>,
    /// The INFO reply of the current status snapshot.
    info_cache: Cached,
    /// The PLAYER reply body (before any split) and whether players were left out.
    players_cache: Cached,
    /// The RULES reply body (before any split) and whether rules were left out.
    rules_cache: Cached,
}

/// Bytes `s` takes on the wire as a NUL-terminated string (NULs inside are dropped).
fn cstr_len(s: &str) -> usize {
    s.bytes().filter(|&b| b != 0).count() + 1
}

/// Longest string kept when an INFO reply must be shortened to fit one datagram.
const SHORT_STRING: usize = 64;

fn shorten(s: &mut crate::Text, max: usize) {
    if s.len() > max {
        let mut end = max;
        while !s.is_char_boundary(end) {
            end -= 1;
        }
        s.truncate(end);
    }
}

impl A2sResponder {
    /// A responder with the given settings.
    pub fn new(config: A2sConfig) -> Self {
        Self {
            config,
            next_split_id: 1,
            buf: Vec::with_capacity(2048),
            info_cache: Cached::default(),
            players_cache: Cached::default(),
            rules_cache: Cached::default(),
        }
    }

    /// The settings.
    pub fn config(&self) -> &A2sConfig {
        &self.config
    }

    /// The challenge `ip` gets now.
    pub fn challenge(keys: &mut ChallengeKeys, now: Instant, ip: IpAddr) -> u32 {
        keys.issue(now, super::GUARD_ID, ip)
    }

    fn split_id(&mut self) -> u32 {
        let id = self.next_split_id;
        self.next_split_id = if id >= 0x7fff { 1 } else { id + 1 };
        id
    }

    fn layout(&self) -> Layout {
        match self.config.flavor {
            Flavor::Source => Layout::Source { size_field: true },
            Flavor::GoldSrcM | Flavor::GoldSrcI => Layout::GoldSrc,
        }
    }

    /// Largest reply that can be sent: the configured cap, and what the layout can number.
    fn reply_limit(&self) -> usize {
        let layout = self.layout();
        let by_layout = match layout {
            Layout::GoldSrc => super::split::GOLDSRC_MAX_FRAGMENTS * payload_per_fragment(layout),
            Layout::Source { .. } => 255 * payload_per_fragment(layout),
        };
        self.config.max_reply_bytes.min(by_layout).max(MAX_DATAGRAM)
    }

    /// Sends `self.buf` as one datagram or split; returns the number of datagrams.
    fn send(&mut self, out: &mut Transmits) -> usize {
        let buf = std::mem::take(&mut self.buf);
        let n = self.send_body(&buf, out);
        self.buf = buf;
        n
    }

    /// Sends `body` as one datagram or split, each fragment written straight into its
    /// output buffer; returns the number of datagrams.
    fn send_body(&mut self, body: &[u8], out: &mut Transmits) -> usize {
        if body.len() <= MAX_DATAGRAM {
            out.push_buf().extend_from_slice(body);
            return 1;
        }
        let layout = self.layout();
        let Ok(n) = fragment_count(body.len(), layout) else {
            return 0;
        };
        let Ok(total) = u8::try_from(n) else { return 0 };
        let id = self.split_id();
        for number in 0..total {
            encode_fragment(body, id, layout, number, total, out.push_buf());
        }
        n
    }

    /// Sends a cached reply body (PLAYER or RULES) for `generation`, if there is one;
    /// returns the datagrams sent and the cached "truncated" flag.
    fn send_cached(
        &mut self,
        players: bool,
        generation: u64,
        out: &mut Transmits,
    ) -> Option<(usize, bool)> {
        let cache = if players {
            &mut self.players_cache
        } else {
            &mut self.rules_cache
        };
        let body = std::mem::take(cache);
        let r = body
            .get(generation)
            .and_then(|b| b.first())
            .map(|b| (self.send_body(b, out), body.flag));
        if players {
            self.players_cache = body;
        } else {
            self.rules_cache = body;
        }
        r
    }

    /// The INFO reply for `status` in this responder's flavor, fitted to one datagram.
    pub fn info(&self, status: &Status) -> InfoReply {
        self.fitted_info(status, &mut Vec::new())
    }

    /// Encodes the INFO reply into `buf` (cleared first), leaving out the keywords, then
    /// SourceTV, then shortening strings until it fits one datagram; returns it.
    fn fitted_info(&self, status: &Status, buf: &mut Vec<u8>) -> InfoReply {
        let mut reply = match self.config.flavor {
            Flavor::GoldSrcM => InfoReply::GoldSrc(status_to_goldsrc(status)),
            Flavor::Source | Flavor::GoldSrcI => {
                let mut i = status_to_info(status);
                if self.config.flavor == Flavor::GoldSrcI {
                    i.protocol = GOLDSRC_PROTOCOL;
                    if i.app_id & 0xff >= QSTAT_SOURCE_SPLIT_FROM {
                        i.app_id = 10;
                    }
                }
                InfoReply::Source(i)
            }
        };
        for shrink in 0..4 {
            buf.clear();
            reply.encode(buf);
            if buf.len() <= MAX_DATAGRAM {
                break;
            }
            match (&mut reply, shrink) {
                (InfoReply::Source(i), 0) => {
                    if let Some(x) = &mut i.extra {
                        x.keywords = None;
                    }
                }
                (InfoReply::Source(i), 1) => {
                    if let Some(x) = &mut i.extra {
                        x.source_tv = None;
                    }
                }
                (InfoReply::Source(i), _) => {
                    for s in [
                        &mut i.name,
                        &mut i.map,
                        &mut i.folder,
                        &mut i.game,
                        &mut i.version,
                    ] {
                        shorten(s, SHORT_STRING);
                    }
                    if let Some(x) = &mut i.extra {
                        if let Some(tv) = &mut x.source_tv {
                            shorten(&mut tv.name, SHORT_STRING);
                        }
                    }
                }
                (InfoReply::GoldSrc(m), _) => {
                    for s in [
                        &mut m.address,
                        &mut m.name,
                        &mut m.map,
                        &mut m.folder,
                        &mut m.game,
                    ] {
                        shorten(s, SHORT_STRING);
                    }
                    if let Some(x) = &mut m.mod_info {
                        shorten(&mut x.url_info, SHORT_STRING);
                        shorten(&mut x.url_download, SHORT_STRING);
                    }
                }
            }
        }
        reply
    }
}

ignorable_outcome!(A2sOutcome);

impl ProtocolResponder for A2sResponder {
    type Outcome = A2sOutcome;

    fn answer_kind(&self, outcome: &A2sOutcome) -> Option<AnswerKind> {
        match outcome {
            A2sOutcome::Ignored(_) => None,
            A2sOutcome::Challenge => Some(AnswerKind::Challenge),
            A2sOutcome::Info => Some(AnswerKind::Info),
            A2sOutcome::Players { .. } => Some(AnswerKind::Players),
            A2sOutcome::Rules { .. } => Some(AnswerKind::Rules),
            A2sOutcome::Ping => Some(AnswerKind::Ping),
        }
    }

    fn max_request_bytes(&self) -> usize {
        self.config.max_request_bytes
    }

    fn enabled(&self) -> bool {
        self.config.enabled
    }

    fn proven(&self, outcome: &A2sOutcome) -> bool {
        match outcome {
            A2sOutcome::Players { .. } | A2sOutcome::Rules { .. } => true,
            A2sOutcome::Info => self.config.require_info_challenge,
            _ => false,
        }
    }

    fn answer(&mut self, incoming: Incoming<'_>, cx: Context<'_>) -> A2sOutcome {
        let (now, ip, datagram, reject) = incoming.parts();
        let generation = cx.generation;
        let (status, keys, out) = cx.parts();
        let Ok(request) = Request::decode(datagram) else {
            return A2sOutcome::Ignored(Unanswered::malformed("not an A2S request"));
        };
        if reject {
            return A2sOutcome::Ignored(Unanswered::banned("banned source"));
        }
        let verified = |keys: &mut ChallengeKeys| {
            request.challenge().is_some_and(|c| {
                c != 0 && c != ASK_CHALLENGE && keys.verify(now, super::GUARD_ID, ip, c)
            })
        };
        let send_challenge = |keys: &mut ChallengeKeys, out: &mut Transmits| {
            Challenge {
                challenge: keys.issue(now, super::GUARD_ID, ip),
            }
            .encode(out.push_buf());
            A2sOutcome::Challenge
        };
        match request {
            Request::Ping => {
                if !self.config.answer_ping {
                    return A2sOutcome::Ignored(Unanswered::disabled("A2A_PING is off"));
                }
                let reply = match self.config.flavor {
                    Flavor::Source => PingReply::Source,
                    Flavor::GoldSrcM | Flavor::GoldSrcI => PingReply::GoldSrc,
                };
                reply.encode(out.push_buf());
                A2sOutcome::Ping
            }
            Request::GetChallenge => {
                if !self.config.answer_get_challenge {
                    return A2sOutcome::Ignored(Unanswered::disabled(
                        "A2S_SERVERQUERY_GETCHALLENGE is off",
                    ));
                }
                send_challenge(keys, out)
            }
            Request::Info { .. } => {
                if self.config.require_info_challenge && !verified(keys) {
                    return send_challenge(keys, out);
                }
                if let Some(cached) = self.info_cache.get(generation) {
                    for d in cached {
                        out.push_buf().extend_from_slice(d);
                    }
                    return A2sOutcome::Info;
                }
                let start = out.len();
                self.fitted_info(status, out.push_buf());
                self.info_cache
                    .store(generation, out.iter_from(start), false);
                A2sOutcome::Info
            }
            Request::Player { .. } => {
                if !verified(keys) {
                    return send_challenge(keys, out);
                }
                if let Some((datagrams, truncated)) = self.send_cached(true, generation, out) {
                    return A2sOutcome::Players {
                        datagrams,
                        truncated,
                    };
                }
                let ship = status
                    .a2s
                    .as_ref()
                    .and_then(|a| a.app_id)
                    .is_some_and(super::mapping::is_ship)
                    && self.config.flavor != Flavor::GoldSrcM;
                let mut players = status_to_players(status, ship);
                let full = players.players.len();
                let limit = self.reply_limit();
                self.buf.clear();
                self.buf.extend_from_slice(&SINGLE);
                players.encode_body(&mut self.buf);
                if self.buf.len() > limit {
                    // Keep the longest prefix of players that fits.
                    let mut size = SINGLE.len() + 2;
                    let keep = players
                        .players
                        .iter()
                        .take_while(|p| {
                            size += 1 + cstr_len(&p.name) + 8 + if ship { 8 } else { 0 };
                            size <= limit
                        })
                        .count();
                    players.players.truncate(keep);
                    self.buf.clear();
                    self.buf.extend_from_slice(&SINGLE);
                    players.encode_body(&mut self.buf);
                }
                let datagrams = self.send(out);
                let truncated = players.players.len() < full;
                self.players_cache
                    .store(generation, [self.buf.as_slice()], truncated);
                A2sOutcome::Players {
                    datagrams,
                    truncated,
                }
            }
            Request::Rules { .. } => {
                if !verified(keys) {
                    return send_challenge(keys, out);
                }
                if let Some((datagrams, truncated)) = self.send_cached(false, generation, out) {
                    return A2sOutcome::Rules {
                        datagrams,
                        truncated,
                    };
                }
                let mut rules = status_to_rules(status);
                let full = rules.rules.len();
                let limit = self.reply_limit();
                self.buf.clear();
                self.buf.extend_from_slice(&SINGLE);
                rules.encode_body(&mut self.buf);
                if self.buf.len() > limit {
                    // Keep the longest prefix of rules that fits.
                    let mut size = SINGLE.len() + 3;
                    let keep = rules
                        .rules
                        .iter()
                        .take_while(|(k, v)| {
                            size += cstr_len(k) + cstr_len(v);
                            size <= limit
                        })
                        .count();
                    rules.rules.truncate(keep);
                    self.buf.clear();
                    self.buf.extend_from_slice(&SINGLE);
                    rules.encode_body(&mut self.buf);
                }
                let datagrams = self.send(out);
                let truncated = rules.rules.len() < full;
                self.rules_cache
                    .store(generation, [self.buf.as_slice()], truncated);
                A2sOutcome::Rules {
                    datagrams,
                    truncated,
                }
            }
        }
    }
}
