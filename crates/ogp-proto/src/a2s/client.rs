//! The A2S client as a state machine: INFO, then PLAYER, then RULES of one server, with
//! the challenge dance at every step, retries, split reassembly and timeouts, and no
//! I/O. Same interface as [`ogp::client::QueryMachine`](crate::ogp::client::QueryMachine):
//! 1. [`QueryMachine::poll_transmit`] → a datagram to send now, if any;
//! 2. [`QueryMachine::handle_datagram`] for every datagram from the queried address;
//! 3. [`QueryMachine::poll_timeout`] → when to call [`QueryMachine::handle_timeout`];
//! 4. [`QueryMachine::result`] once [`QueryMachine::is_done`].
//!
//! Flow: A2S_INFO goes out without a challenge (or with a known one); a server that
//! never challenges INFO answers at once. A `41 <C>` may come at any step: the current
//! request is sent again with `<C>` right away, without using up a retry, at most
//! [`QueryOptions::max_challenges`] times in all (python-a2s stops after 5). PLAYER and
//! RULES carry the known challenge (`FFFFFFFF` when none is known). Split replies are
//! reassembled per step (any layout, any order, bzip2 with a size cap and CRC check).
//! A step that times out after its retries ends the query when it is INFO; PLAYER and
//! RULES are then reported as missing and the query goes on. Nothing here panics; what a
//! hostile server can make it hold is bounded by the reassembly limits and a cap on
//! recorded events.

use std::fmt;
use std::time::{Duration, Instant};

use super::info::InfoReply;
use super::mapping::{goldsrc_to_status, info_to_status, players_to_status, rules_to_status};
use super::players::Players;
use super::request::Request;
use super::rules::Rules;
use super::split::{decode_reassembled, Pushed, Reassembler, ReassemblyError, ReassemblyLimits};
use super::{Decoded, Message};
use crate::error::{DecodeError, DecodeWarning};
use crate::retry::{AttemptTimer, EventLog, Timeout};
use crate::Status;

/// The steps of a query.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Step {
    /// A2S_INFO.
    Info,
    /// A2S_PLAYER.
    Players,
    /// A2S_RULES.
    Rules,
}

impl fmt::Display for Step {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Self::Info => "A2S_INFO",
            Self::Players => "A2S_PLAYER",
            Self::Rules => "A2S_RULES",
        })
    }
}

/// Settings of one query.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct QueryOptions {
    /// Ask for INFO (default true).
    pub info: bool,
    /// Ask for the players (default true).
    pub players: bool,
    /// Ask for the rules (default true).
    pub rules: bool,
    /// A challenge from an earlier query of this server, if any.
    pub challenge: Option<u32>,
    /// Time to wait for a reply before sending again (default 1 s).
    pub attempt_timeout: Duration,
    /// Growth of the attempt timeout per retry, in percent (default 150).
    pub backoff_percent: u32,
    /// Retries per step after its first attempt (default 2).
    pub retries: u32,
    /// Deadline for the whole query (default 5 s).
    pub total_timeout: Duration,
    /// `41` challenge replies tolerated in all (default 5).
    pub max_challenges: u32,
    /// Bounds on split replies.
    pub limits: ReassemblyLimits,
}

impl Default for QueryOptions {
    fn default() -> Self {
        Self {
            info: true,
            players: true,
            rules: true,
            challenge: None,
            attempt_timeout: Duration::from_secs(1),
            backoff_percent: 150,
            retries: 2,
            total_timeout: Duration::from_secs(5),
            max_challenges: 5,
            limits: ReassemblyLimits::default(),
        }
    }
}

/// Why a query failed.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum QueryError {
    /// No reply to a step that the query cannot do without.
    Timeout {
        /// The step.
        step: Step,
        /// Datagrams sent in all.
        attempts: u32,
    },
    /// The server kept answering with challenges.
    ChallengeLoop,
    /// A reply did not decode.
    Malformed(DecodeError),
    /// A split reply was inconsistent, too large, or failed its bzip2 size or CRC check.
    Reassembly(ReassemblyError),
    /// Nothing was asked for.
    NothingToAsk,
}

impl fmt::Display for QueryError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Timeout { step, attempts } => write!(
                f,
                "no reply to {step} (timed out after {attempts} datagram{} sent)",
                if *attempts == 1 { "" } else { "s" }
            ),
            Self::ChallengeLoop => f.write_str("server keeps answering with new challenges"),
            Self::Malformed(e) => write!(f, "malformed reply: {e}"),
            Self::Reassembly(e) => write!(f, "bad split reply: {e}"),
            Self::NothingToAsk => f.write_str("no step enabled"),
        }
    }
}

impl std::error::Error for QueryError {}

/// Something that happened on the wire, for tools that show it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum WireEvent {
    /// A request was sent.
    Sent {
        /// The step.
        step: Step,
        /// Size in bytes.
        bytes: usize,
        /// The challenge it carried.
        challenge: Option<u32>,
    },
    /// The server sent a challenge.
    Challenge {
        /// The challenge.
        challenge: u32,
    },
    /// A fragment of a split reply arrived.
    Fragment {
        /// Size in bytes.
        bytes: usize,
        /// Its id.
        id: u32,
    },
    /// A reply completed a step.
    Reply {
        /// The step.
        step: Step,
        /// Size in bytes (of the reassembled reply when split).
        bytes: usize,
        /// Datagrams it came in.
        datagrams: usize,
    },
    /// A step gave no reply in time and was skipped.
    Skipped {
        /// The step.
        step: Step,
    },
    /// A datagram was dropped.
    Dropped {
        /// Size in bytes.
        bytes: usize,
        /// Why.
        why: &'static str,
    },
}

/// A finished query.
#[derive(Debug, Clone, PartialEq)]
pub struct QueryOutcome {
    /// Everything the replies said, in the shared model.
    pub status: Status,
    /// The INFO reply.
    pub info: Option<InfoReply>,
    /// A second INFO reply of the other kind: GoldSrc servers answer one A2S_INFO with
    /// both `'m'` and `'I'`. The status takes the first, then the second over it.
    pub other_info: Option<InfoReply>,
    /// The PLAYER reply.
    pub players: Option<Players>,
    /// The RULES reply.
    pub rules: Option<Rules>,
    /// Steps asked for that got no reply.
    pub missing: Vec<Step>,
    /// Round trip of the request that got the first reply, in milliseconds.
    pub ping_ms: f64,
    /// The last challenge the server gave (reuse it for the next query).
    pub challenge: Option<u32>,
    /// Datagrams received that belonged to replies.
    pub reply_datagrams: usize,
    /// Decoding warnings.
    pub warnings: Vec<DecodeWarning>,
    /// What happened on the wire (at most [`MAX_EVENTS`]).
    pub events: Vec<WireEvent>,
}

/// Most wire events recorded per query.
pub const MAX_EVENTS: usize = 64;

/// How often a query drops held fragments that do not fit a newer fragment.
pub const MAX_REASSEMBLY_RESTARTS: u32 = 8;

/// One A2S query of one server.
#[derive(Debug, Clone)]
pub struct QueryMachine {
    opts: QueryOptions,
    step: Option<Step>,
    challenge: Option<u32>,
    timer: AttemptTimer,
    challenges: u32,
    ping_ms: Option<f64>,
    reasm: Reassembler,
    restarts: u32,
    fragments: usize,
    reply_datagrams: usize,
    info: Option<InfoReply>,
    other_info: Option<InfoReply>,
    players: Option<Players>,
    rules: Option<Rules>,
    missing: Vec<Step>,
    warnings: Vec<DecodeWarning>,
    events: EventLog<WireEvent>,
    last_malformed: Option<DecodeError>,
    result: Option<Result<QueryOutcome, QueryError>>,
}

/// Most warnings kept.
const MAX_WARNINGS: usize = 64;

impl QueryMachine {
    /// A query starting at `now`.
    pub fn new(opts: QueryOptions, now: Instant) -> Self {
        let mut m = Self {
            step: None,
            challenge: opts.challenge,
            timer: AttemptTimer::new(
                now,
                opts.attempt_timeout,
                opts.backoff_percent,
                opts.retries,
                opts.total_timeout,
            ),
            challenges: 0,
            ping_ms: None,
            reasm: Reassembler::with_limits(opts.limits),
            restarts: 0,
            fragments: 0,
            reply_datagrams: 0,
            info: None,
            other_info: None,
            players: None,
            rules: None,
            missing: Vec::new(),
            warnings: Vec::new(),
            events: EventLog::new(MAX_EVENTS),
            last_malformed: None,
            result: None,
            opts,
        };
        m.step = m.next_step(None);
        if m.step.is_none() {
            m.finish(Err(QueryError::NothingToAsk));
        }
        m
    }

    fn next_step(&self, after: Option<Step>) -> Option<Step> {
        let order = [
            (Step::Info, self.opts.info),
            (Step::Players, self.opts.players),
            (Step::Rules, self.opts.rules),
        ];
        let start = match after {
            None => 0,
            Some(Step::Info) => 1,
            Some(Step::Players) => 2,
            Some(Step::Rules) => 3,
        };
        order
            .iter()
            .skip(start)
            .find(|(_, on)| *on)
            .map(|(s, _)| *s)
    }

    /// The step in progress.
    pub fn step(&self) -> Option<Step> {
        self.step
    }

    /// Whether the query has finished.
    pub fn is_done(&self) -> bool {
        self.result.is_some()
    }

    /// The result, once done.
    pub fn result(&mut self) -> Option<Result<QueryOutcome, QueryError>> {
        self.result.take()
    }

    fn event(&mut self, e: WireEvent) {
        self.events.push(e);
    }

    fn finish(&mut self, r: Result<QueryOutcome, QueryError>) {
        if self.result.is_none() {
            self.result = Some(r);
        }
        self.timer.stop();
        self.step = None;
    }

    /// The request for the current step.
    pub fn request(&self) -> Option<Request> {
        Some(match self.step? {
            Step::Info => Request::info(self.challenge),
            Step::Players => Request::player(self.challenge),
            Step::Rules => Request::rules(self.challenge),
        })
    }

    /// The datagram to send now, if any.
    pub fn poll_transmit(&mut self, now: Instant) -> Option<Vec<u8>> {
        if !self.timer.send_due() || self.result.is_some() {
            return None;
        }
        let step = self.step?;
        let req = self.request()?;
        let mut d = Vec::with_capacity(32);
        req.encode(&mut d);
        self.timer.sent(now);
        self.event(WireEvent::Sent {
            step,
            bytes: d.len(),
            challenge: req.challenge(),
        });
        Some(d)
    }

    /// When [`handle_timeout`](Self::handle_timeout) must be called next.
    pub fn poll_timeout(&self) -> Option<Instant> {
        if self.result.is_some() {
            return None;
        }
        Some(self.timer.poll_timeout())
    }

    /// Advances timers: retries, skips a step, or gives up.
    pub fn handle_timeout(&mut self, now: Instant) {
        if self.result.is_some() {
            return;
        }
        let Some(step) = self.step else { return };
        if let Some(Timeout::GiveUp { deadline }) = self.timer.handle_timeout(now) {
            self.step_failed(step, now, deadline);
        }
    }

    fn step_failed(&mut self, step: Step, now: Instant, deadline: bool) {
        if step == Step::Info {
            let e = match self.last_malformed {
                Some(e) => QueryError::Malformed(e),
                None => QueryError::Timeout {
                    step,
                    attempts: self.timer.attempts(),
                },
            };
            return self.finish(Err(e));
        }
        self.event(WireEvent::Skipped { step });
        self.missing.push(step);
        if deadline {
            // Nothing more can be asked: every later step is missing too.
            let mut s = self.next_step(Some(step));
            while let Some(x) = s {
                self.missing.push(x);
                s = self.next_step(Some(x));
            }
            return self.complete();
        }
        self.advance(step, now);
    }

    fn advance(&mut self, done: Step, _now: Instant) {
        self.reasm.reset();
        self.fragments = 0;
        self.timer.restart_retries();
        self.last_malformed = None;
        match self.next_step(Some(done)) {
            Some(s) => {
                self.step = Some(s);
                self.timer.resend_now();
            }
            None => self.complete(),
        }
    }

    fn complete(&mut self) {
        let mut status = Status::default();
        for info in [&self.info, &self.other_info].into_iter().flatten() {
            match info {
                InfoReply::Source(i) => info_to_status(i, &mut status),
                InfoReply::GoldSrc(m) => goldsrc_to_status(m, &mut status),
            }
        }
        if let Some(p) = &self.players {
            players_to_status(p, &mut status);
        }
        if let Some(r) = &self.rules {
            rules_to_status(r, &mut status);
        }
        let outcome = QueryOutcome {
            status,
            info: self.info.take(),
            other_info: self.other_info.take(),
            players: self.players.take(),
            rules: self.rules.take(),
            missing: std::mem::take(&mut self.missing),
            ping_ms: self.ping_ms.unwrap_or(0.0),
            challenge: self.challenge,
            reply_datagrams: self.reply_datagrams,
            warnings: std::mem::take(&mut self.warnings),
            events: self.events.take(),
        };
        self.finish(Ok(outcome));
    }

    /// Handles a datagram from the queried address.
    pub fn handle_datagram(&mut self, now: Instant, datagram: &[u8]) {
        if self.result.is_some() {
            return;
        }
        let bytes = datagram.len();
        let decoded = match super::decode(datagram) {
            Ok(d) => d,
            Err(e) => {
                if super::is_a2s(datagram) {
                    self.last_malformed = Some(e);
                }
                return self.event(WireEvent::Dropped {
                    bytes,
                    why: "does not decode",
                });
            }
        };
        if let Message::Fragment(f) = &decoded.message {
            self.event(WireEvent::Fragment { bytes, id: f.id });
            return match self.reasm.push(&f.datagram) {
                Ok(Pushed::Incomplete) => self.fragments += 1,
                Ok(Pushed::Duplicate) => self.event(WireEvent::Dropped {
                    bytes,
                    why: "duplicate fragment",
                }),
                Ok(Pushed::Complete {
                    reply, fragments, ..
                }) => {
                    self.fragments = 0;
                    match decode_reassembled(&reply) {
                        Ok(d) => self.handle_message(now, d, reply.len(), usize::from(fragments)),
                        Err(e) => self.finish(Err(QueryError::Malformed(e))),
                    }
                }
                // A fragment that does not fit the held ones: the held ones are most
                // likely a late duplicate of an earlier reply (servers reuse split ids
                // across PLAYER and RULES). Start over with this fragment, a bounded
                // number of times.
                Err(
                    ReassemblyError::OtherId { .. }
                    | ReassemblyError::TotalMismatch
                    | ReassemblyError::Conflict { .. },
                ) if self.restarts < MAX_REASSEMBLY_RESTARTS => {
                    self.restarts += 1;
                    self.reasm.reset();
                    self.fragments = 0;
                    self.event(WireEvent::Dropped {
                        bytes: 0,
                        why: "held fragments of another reply",
                    });
                    self.handle_datagram(now, datagram)
                }
                Err(ReassemblyError::OtherId { .. }) => self.event(WireEvent::Dropped {
                    bytes,
                    why: "fragment of another reply",
                }),
                Err(e) => self.finish(Err(QueryError::Reassembly(e))),
            };
        }
        self.handle_message(now, decoded, bytes, 1);
    }

    fn handle_message(&mut self, now: Instant, d: Decoded, bytes: usize, datagrams: usize) {
        let Some(step) = self.step else { return };
        let Decoded { message, warnings } = d;
        let accept = |m: &mut Self, step_done: Step| {
            for w in warnings
                .iter()
                .take(MAX_WARNINGS.saturating_sub(m.warnings.len()))
            {
                m.warnings.push(w.clone());
            }
            m.reply_datagrams += datagrams;
            if m.ping_ms.is_none() {
                m.ping_ms = Some(m.timer.rtt_ms(now));
            }
            m.event(WireEvent::Reply {
                step: step_done,
                bytes,
                datagrams,
            });
            m.advance(step_done, now);
        };
        match message {
            Message::Challenge(c) => {
                self.event(WireEvent::Challenge {
                    challenge: c.challenge,
                });
                self.challenges += 1;
                if self.challenges > self.opts.max_challenges {
                    return self.finish(Err(QueryError::ChallengeLoop));
                }
                self.challenge = Some(c.challenge);
                self.reasm.reset();
                self.timer.resend_now();
            }
            Message::Info(i) if step == Step::Info => {
                self.info = Some(InfoReply::Source(i));
                accept(self, Step::Info);
            }
            Message::GoldSrcInfo(m) if step == Step::Info => {
                self.info = Some(InfoReply::GoldSrc(m));
                accept(self, Step::Info);
            }
            Message::Info(i)
                if matches!(self.info, Some(InfoReply::GoldSrc(_)))
                    && self.other_info.is_none() =>
            {
                self.other_info = Some(InfoReply::Source(i));
            }
            Message::GoldSrcInfo(m)
                if matches!(self.info, Some(InfoReply::Source(_))) && self.other_info.is_none() =>
            {
                self.other_info = Some(InfoReply::GoldSrc(m));
            }
            Message::Players(p) if step == Step::Players => {
                self.players = Some(p);
                accept(self, Step::Players);
            }
            Message::Rules(r) if step == Step::Rules => {
                self.rules = Some(r);
                accept(self, Step::Rules);
            }
            _ => self.event(WireEvent::Dropped {
                bytes,
                why: "not the reply to the current step",
            }),
        }
    }
}
