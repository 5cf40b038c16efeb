//! The A2S client as a state machine: INFO, then PLAYER, then RULES of one server, with
//! the challenge dance at every step, retries, split reassembly and timeouts, and no
//! I/O. It embeds the shared client core ([`client`](crate::client)) and keeps
//! only A2S's wire logic; drive it through [`QueryDriver`].
//!
//! Flow: A2S_INFO goes out without a challenge (or with a known one); a server that
//! never challenges INFO answers at once. A `41 <C>` may come at any step: the current
//! request is sent again with `<C>` right away, without using up a retry, at most
//! [`Timing::max_challenges`] times in all (python-a2s stops after 5). PLAYER and RULES
//! carry the known challenge (`FFFFFFFF` when none is known). Split replies are
//! reassembled per step (any layout, any order, bzip2 with a size cap and CRC check).
//! A step that times out after its retries ends the query when it is INFO; PLAYER and
//! RULES are then reported as missing (in [`Details::missing`] and as a warning) and the
//! query goes on. Nothing here panics; what a hostile server can make it hold is bounded
//! by the reassembly limits and a cap on recorded events.
//!
//! [`Machine`]`<true>` is Frontlines: Fuel of War's ([`crate::ffow`]): its own
//! information request and reply first, then, while no challenge is known, the old
//! challenge request (`57`) in place of PLAYER and RULES, whose `41` reply makes the
//! step go out again with it; the players and rules are read big-endian.

use std::fmt;
use std::time::Instant;

use super::ffow::{FfowInfo, INFO_REQUEST as FFOW_INFO_REQUEST};
use super::info::InfoReply;
use super::mapping::{
    ffow_to_status, goldsrc_to_status, info_to_status, players_to_status, rules_to_status,
};
use super::players::Players;
use super::request::Request;
use super::rules::Rules;
use super::split::{decode_reassembled_in, Pushed, Reassembler, ReassemblyError, ReassemblyLimits};
use super::{Decoded, Message};
use crate::client_core::{
    exchange_driver, Event, Exchange, QueryDriver, QueryError, Timeout, Timing,
};
use crate::protocol::Protocol;
use crate::{Charset, Status};

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

impl Step {
    /// The request's name: `A2S_INFO`, `A2S_PLAYER`, `A2S_RULES`.
    pub const fn name(self) -> &'static str {
        match self {
            Self::Info => "A2S_INFO",
            Self::Players => "A2S_PLAYER",
            Self::Rules => "A2S_RULES",
        }
    }
}

impl fmt::Display for Step {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// A2S's own settings of one query (the timers are [`Timing`]).
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct QueryOptions {
    /// Ask for INFO (default true).
    pub info: bool,
    /// Ask for the players (default true).
    pub players: bool,
    /// Ask for the rules (default true).
    pub rules: bool,
    /// A challenge from an earlier query of this server, if any.
    pub challenge: Option<u32>,
    /// Bounds on split replies.
    pub limits: ReassemblyLimits,
    /// How to read strings that are not UTF-8 (default [`Charset::Auto`]: replaced,
    /// with a warning).
    pub charset: Charset,
}

impl Default for QueryOptions {
    fn default() -> Self {
        Self {
            info: true,
            players: true,
            rules: true,
            challenge: None,
            limits: ReassemblyLimits::default(),
            charset: Charset::Auto,
        }
    }
}

/// What an A2S answer says beyond the status: the replies as sent.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub struct Details {
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
    /// The last challenge the server gave (reuse it for the next query).
    pub challenge: Option<u32>,
    /// FFOW's information reply (its servers send no A2S one).
    pub ffow: Option<FfowInfo>,
}

/// How often a query drops held fragments that do not fit a newer fragment.
pub const MAX_REASSEMBLY_RESTARTS: u32 = 8;

/// One A2S query of one server.
pub type QueryMachine = Machine<false>;

/// One query of one server: A2S's (`FFOW` false) or Frontlines: Fuel of War's (true).
#[derive(Debug, Clone)]
pub struct Machine<const FFOW: bool> {
    opts: QueryOptions,
    step: Option<Step>,
    challenge: Option<u32>,
    reasm: Reassembler,
    /// Wire bytes of the fragments held for the current step.
    fragment_bytes: usize,
    restarts: u32,
    // Boxed: a machine waiting for its replies (a scan holds thousands) stays small.
    info: Option<Box<InfoReply>>,
    other_info: Option<Box<InfoReply>>,
    ffow: Option<Box<FfowInfo>>,
    players: Option<Players>,
    rules: Option<Rules>,
    missing: Vec<Step>,
    x: Exchange<Details>,
}

impl<const FFOW: bool> Machine<FFOW> {
    /// A query starting at `now`.
    pub fn new(opts: QueryOptions, timing: Timing, now: Instant) -> Self {
        let mut m = Self {
            step: None,
            challenge: opts.challenge,
            reasm: Reassembler::with_limits(opts.limits),
            fragment_bytes: 0,
            restarts: 0,
            info: None,
            other_info: None,
            ffow: None,
            players: None,
            rules: None,
            missing: Vec::new(),
            x: Exchange::new(
                if FFOW { Protocol::Ffow } else { Protocol::A2s },
                &timing,
                now,
            ),
            opts,
        };
        m.step = m.next_step(None);
        if m.step.is_none() {
            m.x.fail(QueryError::Options {
                message: "no A2S request enabled",
            });
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

    /// The step in progress (`None` once the query is done).
    pub fn step(&self) -> Option<Step> {
        if self.x.is_done() {
            None
        } else {
            self.step
        }
    }

    /// Whether the query has finished.
    pub fn is_done(&self) -> bool {
        self.x.is_done()
    }

    /// The request for the current step (FFOW: the old challenge request while no
    /// challenge is known; its information request is not an A2S one: `None`).
    pub fn request(&self) -> Option<Request> {
        Some(match self.step? {
            Step::Info if FFOW => return None,
            _ if FFOW && self.challenge.is_none() => Request::GetChallenge,
            Step::Info => Request::info(self.challenge),
            Step::Players => Request::player(self.challenge),
            Step::Rules => Request::rules(self.challenge),
        })
    }

    fn step_failed(&mut self, step: Step) {
        if step == Step::Info {
            return self.x.give_up(Some(step.name()));
        }
        self.x.event(Event::Skipped { what: step.name() });
        self.missing.push(step);
        self.advance(step);
    }

    fn out_of_time(&mut self, step: Step) {
        // Nothing more can be asked: this step and every later one are missing.
        if step == Step::Info {
            return self.x.give_up(Some(step.name()));
        }
        self.x.event(Event::Skipped { what: step.name() });
        let mut s = Some(step);
        while let Some(x) = s {
            self.missing.push(x);
            s = self.next_step(Some(x));
        }
        self.complete();
    }

    fn advance(&mut self, done: Step) {
        self.reasm.reset();
        self.fragment_bytes = 0;
        self.x.timer.restart_retries();
        self.x.clear_malformed();
        match self.next_step(Some(done)) {
            Some(s) => {
                self.step = Some(s);
                self.x.timer.resend_now();
            }
            None => self.complete(),
        }
    }

    fn complete(&mut self) {
        self.step = None;
        let mut status = Status::default();
        for info in [&self.info, &self.other_info].into_iter().flatten() {
            match &**info {
                InfoReply::Source(i) => info_to_status(i, &mut status),
                InfoReply::GoldSrc(m) => goldsrc_to_status(m, &mut status),
            }
        }
        if let Some(p) = &self.players {
            players_to_status(p, &mut status);
        }
        if let Some(f) = &self.ffow {
            ffow_to_status(f, &mut status);
        }
        if let Some(r) = &self.rules {
            rules_to_status(r, &mut status);
        }
        let missing = std::mem::take(&mut self.missing);
        self.x.warn(missing.iter().map(|s| format!("no {s} reply")));
        let details = Details {
            info: self.info.take().map(|b| *b),
            other_info: self.other_info.take().map(|b| *b),
            players: self.players.take(),
            rules: self.rules.take(),
            missing,
            challenge: self.challenge,
            ffow: self.ffow.take().map(|b| *b),
        };
        self.x.succeed(status, details);
    }

    fn handle_message(&mut self, now: Instant, d: Decoded, bytes: usize, datagrams: usize) {
        let Some(step) = self.step else { return };
        let Decoded { message, warnings } = d;
        let accept = |m: &mut Self, step_done: Step| {
            m.x.warn(warnings);
            m.x.received(datagrams, bytes);
            m.x.ping(now);
            m.x.event(Event::Reply {
                what: step_done.name(),
                bytes,
                datagrams,
            });
            m.advance(step_done);
        };
        match message {
            // The challenge already held: a late or repeated answer to an earlier
            // request (resent after a timeout), not a new challenge. The request in
            // flight carries it already; following it again would count towards a
            // challenge loop.
            Message::Challenge(c) if self.challenge == Some(c.challenge) => {
                self.x.heard(now);
                self.x.dropped(bytes, "the challenge already held");
            }
            Message::Challenge(c) => {
                self.x.event(Event::Challenge {
                    bytes,
                    challenge: Some(c.challenge),
                });
                if self.x.follow_challenge(now) {
                    self.challenge = Some(c.challenge);
                    self.reasm.reset();
                    self.fragment_bytes = 0;
                    self.x.timer.resend_now();
                }
            }
            Message::Info(i) if step == Step::Info => {
                self.info = Some(Box::new(InfoReply::Source(i)));
                accept(self, Step::Info);
            }
            Message::GoldSrcInfo(m) if step == Step::Info => {
                self.info = Some(Box::new(InfoReply::GoldSrc(m)));
                accept(self, Step::Info);
            }
            Message::Info(i)
                if matches!(self.info.as_deref(), Some(InfoReply::GoldSrc(_)))
                    && self.other_info.is_none() =>
            {
                self.other_info = Some(Box::new(InfoReply::Source(i)));
            }
            Message::GoldSrcInfo(m)
                if matches!(self.info.as_deref(), Some(InfoReply::Source(_)))
                    && self.other_info.is_none() =>
            {
                self.other_info = Some(Box::new(InfoReply::GoldSrc(m)));
            }
            Message::FfowInfo(f) if FFOW && step == Step::Info => {
                self.ffow = Some(Box::new(f));
                accept(self, Step::Info);
            }
            Message::Players(p) if step == Step::Players => {
                self.players = Some(p);
                accept(self, Step::Players);
            }
            Message::Rules(r) if step == Step::Rules => {
                self.rules = Some(r);
                accept(self, Step::Rules);
            }
            _ => self.x.dropped(bytes, "not the reply to the current step"),
        }
    }
}

impl<const FFOW: bool> QueryDriver for Machine<FFOW> {
    type Details = Details;

    exchange_driver!();

    fn poll_transmit_into(&mut self, now: Instant, d: &mut Vec<u8>) -> bool {
        if FFOW && self.step == Some(Step::Info) {
            return self.x.transmit_query(now, d, "FFOW info", None, |d| {
                d.extend_from_slice(&FFOW_INFO_REQUEST)
            });
        }
        let (Some(step), Some(req)) = (self.step, self.request()) else {
            return false;
        };
        self.x
            .transmit_query(now, d, step.name(), req.challenge(), |d| req.encode(d))
    }

    fn handle_timeout(&mut self, now: Instant) {
        let Some(step) = self.step else { return };
        if self.x.handle_timeout(now) == Some(Timeout::GiveUp) {
            if now >= self.x.timer.deadline() {
                self.out_of_time(step);
            } else {
                self.step_failed(step);
            }
        }
    }

    fn handle_datagram(&mut self, now: Instant, datagram: &[u8]) {
        if self.x.is_done() {
            return;
        }
        let bytes = datagram.len();
        let decoded = match super::decode_in(datagram, self.opts.charset, FFOW) {
            Ok(d) => d,
            Err(e) => {
                if super::is_a2s(datagram) {
                    self.x.malformed(e);
                }
                return self.x.dropped(bytes, "does not decode");
            }
        };
        let Message::Fragment(f) = &decoded.message else {
            return self.handle_message(now, decoded, bytes, 1);
        };
        self.x.heard(now);
        self.x.event(Event::Part {
            bytes,
            number: None,
            count: None,
        });
        match self.reasm.push(&f.datagram) {
            Ok(Pushed::Incomplete) => {
                self.fragment_bytes = self.fragment_bytes.saturating_add(bytes)
            }
            Ok(Pushed::Duplicate) => self.x.dropped(bytes, "duplicate fragment"),
            Ok(Pushed::Complete {
                reply, fragments, ..
            }) => {
                let wire = std::mem::take(&mut self.fragment_bytes).saturating_add(bytes);
                match decode_reassembled_in(&reply, self.opts.charset, FFOW) {
                    Ok(d) => self.handle_message(now, d, wire, usize::from(fragments)),
                    Err(e) => self.x.fail_malformed(e),
                }
            }
            // A fragment that does not fit the held ones: the held ones are most likely
            // a late duplicate of an earlier reply (servers reuse split ids across
            // PLAYER and RULES). Start over with this fragment, a bounded number of
            // times.
            Err(
                ReassemblyError::OtherId { .. }
                | ReassemblyError::TotalMismatch
                | ReassemblyError::Conflict { .. },
            ) if self.restarts < MAX_REASSEMBLY_RESTARTS => {
                self.restarts += 1;
                self.reasm.reset();
                self.fragment_bytes = 0;
                self.x.dropped(0, "held fragments of another reply");
                self.handle_datagram(now, datagram)
            }
            Err(ReassemblyError::OtherId { .. }) => {
                self.x.dropped(bytes, "fragment of another reply")
            }
            Err(e) => self.x.fail_reassembly(e),
        }
    }
}

crate::client_core::start_query!(QueryOptions, no_id);
