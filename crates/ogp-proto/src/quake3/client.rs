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
//!
//! Each step has its own share of the deadline: with both steps asked, `getinfo` may
//! take at most half of the time left, then `getstatus` gets the rest. A server that
//! ignores `getinfo` (or whose `infoResponse` is dropped) is still read from its
//! `statusResponse`, and a silent one costs no more than before. A reply dropped by a
//! limit of ours ([`DecodeLimits`]) ends its step at once (the server would send the
//! same again), and is named, with its size and the limit, in the warning of its step
//! (and, when nothing was answered, in the error).

use std::fmt;
use std::time::Instant;

use super::mapping::reply_to_status;
use super::wire::{
    decode_reply_with, reply_kind, Command, DecodeLimits, Reply, ReplyKind, Request,
};
use crate::client_core::QueryError;
use crate::client_core::{Event, Exchange, QueryDriver, Timeout, Timing};
use crate::error::{DecodeError, DecodeErrorKind};
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

/// Why the reply to a step was dropped: `reply of 65,000 bytes dropped: info string
/// over our limit of 16,384 bytes`.
fn drop_note(bytes: usize, e: &DecodeError) -> String {
    match e.kind {
        DecodeErrorKind::TooLarge { limit } => format!(
            "reply of {} bytes dropped: {} over our limit of {}",
            thousands(bytes as u64),
            e.field,
            thousands(limit)
        ),
        _ => format!("reply of {} bytes dropped: {e}", thousands(bytes as u64)),
    }
}

/// `n` with a comma every three digits (`65,000`).
fn thousands(n: u64) -> String {
    let digits = n.to_string();
    let mut out = String::with_capacity(digits.len() + digits.len() / 3);
    for (i, c) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i) % 3 == 0 {
            out.push(',');
        }
        out.push(c);
    }
    out
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
    /// When the current step gives way to the next, if one follows.
    step_deadline: Option<Instant>,
    /// Why the last reply to the current step was dropped.
    dropped: Option<String>,
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
            step_deadline: None,
            dropped: None,
            x: Exchange::new(Protocol::Quake3, &timing, now),
            opts,
        };
        m.step = m.next_step(None);
        m.share_deadline(now);
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

    /// The current step's share of the time left at `now`: an equal part for it and
    /// each step after it. The last step runs to the query's deadline.
    fn share_deadline(&mut self, now: Instant) {
        let mut left = 0u32;
        let mut s = self.step;
        while let Some(c) = s {
            left = left.saturating_add(1);
            s = self.next_step(Some(c));
        }
        self.step_deadline = self.x.step_share(now, left);
    }

    fn advance(&mut self, done: Command, now: Instant) {
        self.x.timer.restart_retries();
        self.dropped = None;
        match self.next_step(Some(done)) {
            Some(s) => {
                self.step = Some(s);
                self.share_deadline(now);
                self.x.timer.resend_now();
            }
            None => self.complete(),
        }
    }

    fn skipped(&mut self, step: Command, out_of_time: bool, now: Instant) {
        self.x.event(Event::Skipped { what: step.word() });
        let why = self.dropped.take();
        self.x.warn([match &why {
            Some(why) => format!("no reply to {step}: {why}"),
            None => format!("no reply to {step}"),
        }]);
        let first_new = self.missing.len();
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
            let never_sent: Vec<String> = self
                .missing
                .iter()
                .skip(first_new + 1)
                .map(|c| format!("no reply to {c}"))
                .collect();
            self.x.warn(never_sent);
            self.complete();
        } else {
            self.advance(step, now);
        }
    }

    fn complete(&mut self) {
        self.step = None;
        if self.info.is_none() && self.status.is_none() {
            let step = match self.missing.as_slice() {
                [c] => Some(c.word()),
                [_, _, ..] => Some("getinfo or getstatus"),
                [] => None,
            };
            return self.x.give_up(step);
        }
        let mut status = Status::default();
        for r in [&self.info, &self.status].into_iter().flatten() {
            reply_to_status(r, &mut status);
        }
        let missing = std::mem::take(&mut self.missing);
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

    fn poll_timeout(&self) -> Option<Instant> {
        let t = self.x.poll_timeout()?;
        Some(self.step_deadline.map_or(t, |d| d.min(t)))
    }

    crate::client_core::exchange_driver!(results);

    fn poll_transmit_into(&mut self, now: Instant, d: &mut Vec<u8>) -> bool {
        let (Some(step), Some(req)) = (self.step, self.request()) else {
            return false;
        };
        self.x
            .transmit_query(now, d, step.word(), None, |d| req.encode(d))
    }

    fn handle_timeout(&mut self, now: Instant) {
        let Some(step) = self.step else { return };
        let out_of_time = now >= self.x.timer.deadline();
        if !out_of_time && self.step_deadline.is_some_and(|d| now >= d) {
            // This step's share is spent: the next one gets its own.
            return self.skipped(step, false, now);
        }
        if self.x.handle_timeout(now) == Some(Timeout::GiveUp) {
            self.skipped(step, out_of_time, now);
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
                // The server is alive: its step keeps the retries of a live server.
                self.x.heard(now);
                self.dropped = Some(drop_note(bytes, &e));
                self.x.malformed(e);
                if let DecodeErrorKind::TooLarge { .. } = e.kind {
                    // The server would send the same again: asking again is no use.
                    self.x.dropped(bytes, "over a limit of ours");
                    return self.skipped(step, false, now);
                }
                return self.x.dropped(bytes, "does not decode");
            }
        };
        match decoded.reply.get("challenge") {
            Some(c) if c != self.challenge.as_str() => {
                self.dropped = Some(format!(
                    "reply of {} bytes dropped: its challenge is not ours",
                    thousands(bytes as u64)
                ));
                return self
                    .x
                    .dropped(bytes, "wrong challenge (not the one we sent)");
            }
            None if self.opts.require_challenge => {
                self.dropped = Some(format!(
                    "reply of {} bytes dropped: it echoes no challenge",
                    thousands(bytes as u64)
                ));
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
        self.advance(step, now);
    }
}

crate::client_core::start_query!(QueryOptions);
