//! The Quake III client as a state machine: `getinfo CHALLENGE`, then `getstatus
//! CHALLENGE`, with retries and timeouts from the shared client core, and no I/O. Drive
//! it through [`QueryDriver`].
//!
//! The challenge is eight hexadecimal digits of the query's random id. A reply that
//! carries a `challenge` variable must carry ours, or it is dropped (a spoofed or stale
//! answer); servers that echo none (some older engines in `statusResponse`) are
//! believed, as qstat does. A step that gets no reply after its retries is left out
//! (reported in [`Details::missing`] and as a warning) and the query goes on; the query
//! fails only when no step was answered.

use std::fmt;
use std::time::Instant;

use super::mapping::reply_to_status;
use super::wire::{
    decode_reply_with, reply_kind, Command, DecodeLimits, Reply, ReplyKind, Request,
};
use crate::client_core::QueryError;
use crate::client_core::{exchange_driver, Event, Exchange, QueryDriver, Timeout, Timing};
use crate::protocol::Protocol;
use crate::text::Text;
use crate::Status;

/// Quake III's own settings of one query (the timers are [`Timing`]).
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct QueryOptions {
    /// Send `getinfo` (default true).
    pub info: bool,
    /// Send `getstatus` (default true): every variable and the players.
    pub status: bool,
    /// Caps on what a reply may make us hold.
    pub limits: DecodeLimits,
    /// Drop replies that echo no challenge (default false: some engines leave it out of
    /// `statusResponse`). A master verifying a heartbeat sets it: its `getinfo` proves
    /// the address only when the `infoResponse` carries the challenge back.
    pub require_challenge: bool,
}

impl Default for QueryOptions {
    fn default() -> Self {
        Self {
            info: true,
            status: true,
            limits: DecodeLimits::default(),
            require_challenge: false,
        }
    }
}

/// What a Quake III answer says beyond the status: the replies as sent.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
#[non_exhaustive]
pub struct Details {
    /// The `infoResponse`.
    pub info: Option<Reply>,
    /// The `statusResponse`.
    pub status: Option<Reply>,
    /// The challenge we sent.
    pub challenge: Text,
    /// Steps asked for that got no reply.
    pub missing: Vec<Command>,
}

/// One Quake III query of one server.
#[derive(Debug, Clone)]
pub struct QueryMachine {
    opts: QueryOptions,
    step: Option<Command>,
    challenge: Text,
    info: Option<Reply>,
    status: Option<Reply>,
    missing: Vec<Command>,
    x: Exchange<Details>,
}

/// The challenge sent with query id `id`.
fn challenge_of(id: u32) -> Text {
    struct Hex(u32);
    impl fmt::Display for Hex {
        fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
            write!(f, "{:08x}", self.0)
        }
    }
    compact_str::format_compact!("{}", Hex(id))
}

impl QueryMachine {
    /// A query starting at `now`; `id` (pick it at random) makes the challenge.
    pub fn new(opts: QueryOptions, timing: Timing, id: u32, now: Instant) -> Self {
        let mut m = Self {
            step: None,
            challenge: challenge_of(id),
            info: None,
            status: None,
            missing: Vec::new(),
            x: Exchange::new(Protocol::Quake3, &timing, now),
            opts,
        };
        m.step = m.next_step(None);
        if m.step.is_none() {
            m.x.fail(QueryError::Options {
                message: "neither getinfo nor getstatus enabled",
            });
        }
        m
    }

    fn next_step(&self, after: Option<Command>) -> Option<Command> {
        match after {
            None if self.opts.info => Some(Command::GetInfo),
            None | Some(Command::GetInfo) if self.opts.status => Some(Command::GetStatus),
            _ => None,
        }
    }

    /// The challenge this query sends.
    pub fn challenge(&self) -> &str {
        &self.challenge
    }

    /// The request of the current step.
    pub fn request(&self) -> Option<Request> {
        Some(Request::new(self.step?, Some(&self.challenge)))
    }

    fn advance(&mut self, done: Command) {
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

    fn skipped(&mut self, step: Command, out_of_time: bool) {
        self.x.event(Event::Skipped { what: step.word() });
        let mut s = Some(step);
        while let Some(c) = s {
            self.missing.push(c);
            s = if out_of_time {
                self.next_step(Some(c))
            } else {
                None
            };
        }
        if out_of_time {
            self.complete();
        } else {
            self.advance(step);
        }
    }

    fn complete(&mut self) {
        self.step = None;
        if self.info.is_none() && self.status.is_none() {
            return self.x.give_up(self.missing.first().map(|c| c.word()));
        }
        let mut status = Status::default();
        for r in [&self.info, &self.status].into_iter().flatten() {
            reply_to_status(r, &mut status);
        }
        let missing = std::mem::take(&mut self.missing);
        self.x
            .warn(missing.iter().map(|c| format!("no reply to {c}")));
        let details = Details {
            info: self.info.take(),
            status: self.status.take(),
            challenge: self.challenge.clone(),
            missing,
        };
        self.x.succeed(status, details);
    }
}

impl QueryDriver for QueryMachine {
    type Details = Details;

    exchange_driver!();

    fn poll_transmit_into(&mut self, now: Instant, d: &mut Vec<u8>) -> bool {
        let (Some(step), Some(req)) = (self.step, self.request()) else {
            return false;
        };
        if !self.x.due_datagram(d) {
            return false;
        }
        req.encode(d);
        self.x.sent_query(now, d, step.word(), None, None);
        true
    }

    fn handle_timeout(&mut self, now: Instant) {
        let Some(step) = self.step else { return };
        if self.x.handle_timeout(now) == Some(Timeout::GiveUp) {
            let out_of_time = now >= self.x.timer.deadline();
            self.skipped(step, out_of_time);
        }
    }

    fn handle_datagram(&mut self, now: Instant, datagram: &[u8]) {
        let Some(step) = self.step else { return };
        let bytes = datagram.len();
        let Some(kind) = reply_kind(datagram) else {
            return self.x.dropped(bytes, "not a Quake III reply");
        };
        if kind != step.reply() {
            return self.x.dropped(bytes, "not the reply to the current step");
        }
        let decoded = match decode_reply_with(datagram, &self.opts.limits) {
            Ok(d) => d,
            Err(e) => {
                self.x.malformed(e);
                return self.x.dropped(bytes, "does not decode");
            }
        };
        match decoded.reply.get("challenge") {
            Some(c) if c != self.challenge.as_str() => {
                return self
                    .x
                    .dropped(bytes, "wrong challenge (not the one we sent)");
            }
            None if self.opts.require_challenge => {
                return self.x.dropped(bytes, "no challenge echoed");
            }
            _ => {}
        }
        self.x.warn(decoded.warnings);
        self.x.received(1, bytes);
        self.x.ping(now);
        self.x.event(Event::Reply {
            what: step.word(),
            bytes,
            datagrams: 1,
        });
        match kind {
            ReplyKind::Info => self.info = Some(decoded.reply),
            ReplyKind::Status => self.status = Some(decoded.reply),
        }
        self.advance(step);
    }
}

crate::client_core::start_query!(QueryOptions);
