//! The GQP client as a state machine: one query of one server, with the address-proof
//! token, the optional `login`/`validate` exchange, ETB blocks, retries and timeouts, and
//! no I/O. It embeds the shared client core ([`client`](crate::client)) and
//! keeps only GQP's wire logic; drive it through [`QueryDriver`].
//!
//! Flow (`docs/gqp.md` G25):
//! * **probe** (only without a token from an earlier query): `challenge RS 0000000000000`
//!   in plain text, 24 bytes, so that the 22-byte token reply fits the server's
//!   "no more than the query" rule. A server without the `challenge` extension (20 or 30)
//!   is then queried without tokens.
//! * **login** (only with credentials): `challenge RS <token> GS login RS <user>` → the
//!   login challenge.
//! * **main**: `challenge RS <token> [GS validate RS <user> RS <HMAC>] GS <commands>`, in
//!   the chosen encoding. In status mode the commands are `identify` and the six status
//!   extensions, read into a [`Status`]; in raw mode the caller's commands, whose replies
//!   are returned as they are.
//!
//! A `32challenge` reply with a fresh token (the token expired, or the server answered
//! the proof request) makes the machine adopt it and send again, up to
//! [`Timing::max_challenges`] times. Replies are complete when a datagram ending in `EOT` has
//! arrived and the datagrams (from some point on: older ones may be stale answers to an
//! earlier step) hold one reply per command; identical datagrams are dropped,
//! and what a hostile server can make the machine hold is capped (`max_reply_bytes`,
//! [`MAX_DATAGRAMS`], and the core's caps on events and warnings). Nothing here panics.

use std::fmt;
use std::time::Instant;

use super::auth;
use super::model::{self, STATUS_COMMANDS};
use super::wire::{
    decode_reply, encode_query, Command, Encoding, FrameError, Query, Record, Reply, ReplyDatagram,
    StatusCode,
};
use crate::client_core::{exchange_driver, Event, Exchange, QueryDriver, Rejection, Timing};
use crate::error::DecodeError;
use crate::model::Text;
use crate::protocol::Protocol;
use crate::Status;

/// Most datagrams held for one attempt.
pub const MAX_DATAGRAMS: usize = 64;
/// Size of the token probe (`challenge RS 0…0 EOT`).
pub const PROBE_LEN: usize = 24;

/// What to ask.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub enum QueryMode {
    /// `identify` and the status extensions, read into a [`Status`] (default).
    #[default]
    Status,
    /// These commands; their replies are returned as they are.
    Raw(Vec<Command>),
}

/// A user name and password for `login`/`validate`. The password stays on this side.
#[derive(Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct Credentials {
    /// Login name.
    pub user: Text,
    /// Password (never sent, never printed by `Debug`).
    pub password: Text,
}

impl Credentials {
    /// A `user` with `password`.
    pub fn new(user: impl Into<Text>, password: impl Into<Text>) -> Self {
        Self {
            user: user.into(),
            password: password.into(),
        }
    }
}

impl fmt::Debug for Credentials {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Credentials")
            .field("user", &self.user)
            .field("password", &"…")
            .finish()
    }
}

/// GQP's own settings of one query (the timers are [`Timing`]).
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct QueryOptions {
    /// What to ask (default: the status).
    pub mode: QueryMode,
    /// Encoding of the main query, and so of the replies (default `utf-8`).
    pub encoding: Encoding,
    /// Credentials for protected commands, if any.
    pub credentials: Option<Credentials>,
    /// A token from an earlier query of this server, if any (saves the probe).
    pub token: Option<Text>,
    /// Most reply bytes held for one attempt, all datagrams together, counted after
    /// decompression (default 262144).
    pub max_reply_bytes: usize,
}

impl Default for QueryOptions {
    fn default() -> Self {
        Self {
            mode: QueryMode::Status,
            encoding: Encoding::UTF8,
            credentials: None,
            token: None,
            max_reply_bytes: 262_144,
        }
    }
}

/// A step of the exchange.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Step {
    /// Asking for a token.
    Probe,
    /// Asking for a login challenge.
    Login,
    /// The query itself.
    Main,
}

/// What a GQP answer says beyond the status.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub struct Details {
    /// The replies to the status or raw commands (not to `challenge`, `login`,
    /// `validate`).
    pub replies: Vec<Reply>,
    /// The token to reuse for the next query of this server.
    pub token: Option<Text>,
    /// Whether `validate` succeeded.
    pub authenticated: bool,
}

/// One query of one server.
#[derive(Debug)]
pub struct QueryMachine {
    opts: QueryOptions,
    commands: Vec<Command>,
    step: Step,
    token: Option<Text>,
    use_tokens: bool,
    login_challenge: Option<Text>,
    relogged: bool,
    held: Vec<(Vec<u8>, ReplyDatagram)>,
    held_bytes: usize,
    x: Exchange<Details>,
}

/// A reply to a whole query rather than to one command: 40/41 with an empty name, or the
/// proof request (`32challenge DC1 <token>`).
fn whole_query_reply(r: &Reply) -> bool {
    let query_error = r.name.is_empty()
        && matches!(
            r.code,
            StatusCode::UNSUPPORTED_ENCODING | StatusCode::DECODE_ERROR
        );
    let proof_request =
        r.name == "challenge" && r.code == StatusCode::UNAUTHORISED && dc1(r).is_some();
    query_error || proof_request
}

fn dc1(reply: &Reply) -> Option<&Text> {
    reply.records.iter().find_map(|r| match r {
        Record::String(s) => Some(s),
        _ => None,
    })
}

/// The size of a decoded datagram's payload after decompression (its records and
/// separators; at most one byte more than on the wire).
fn payload_len(d: &ReplyDatagram) -> usize {
    let cs = d.encoding.charset;
    let continued: usize = d.continued.iter().map(|r| 1 + r.encoded_len(cs)).sum();
    let replies: usize = d.replies.iter().map(|r| 1 + r.encoded_len(cs)).sum();
    continued + replies
}

impl QueryMachine {
    /// A query starting at `now`.
    pub fn new(opts: QueryOptions, timing: Timing, now: Instant) -> Self {
        let commands = match &opts.mode {
            QueryMode::Status => std::iter::once("identify")
                .chain(STATUS_COMMANDS)
                .map(|c| Command::new(c, Vec::<Text>::new()))
                .collect(),
            QueryMode::Raw(c) => c.clone(),
        };
        let token = opts.token.clone();
        let step = match (&token, &opts.credentials) {
            (None, _) => Step::Probe,
            (Some(_), Some(_)) => Step::Login,
            (Some(_), None) => Step::Main,
        };
        Self {
            commands,
            step,
            token,
            use_tokens: true,
            login_challenge: None,
            relogged: false,
            held: Vec::new(),
            held_bytes: 0,
            x: Exchange::new(Protocol::Gqp, &timing, now),
            opts,
        }
    }

    /// Whether the query has finished.
    pub fn is_done(&self) -> bool {
        self.x.is_done()
    }

    /// The current step.
    pub fn step(&self) -> Step {
        self.step
    }

    /// The plumbing commands before the caller's (challenge, login or validate).
    fn plumbing(&self) -> Vec<Command> {
        let mut v = Vec::new();
        if self.use_tokens {
            if let Some(t) = &self.token {
                v.push(Command::new("challenge", [t.clone()]));
            }
        }
        match (self.step, &self.opts.credentials) {
            (Step::Login, Some(c)) => v.push(Command::new("login", [c.user.clone()])),
            (Step::Main, Some(c)) => {
                if let Some(ch) = &self.login_challenge {
                    v.push(Command::new(
                        "validate",
                        [c.user.clone(), auth::login_response(&c.password, ch)],
                    ));
                }
            }
            _ => {}
        }
        v
    }

    /// The datagram for the current step.
    pub fn encode_query(&self, out: &mut Vec<u8>) {
        if self.step == Step::Probe {
            let pad = PROBE_LEN - "challenge".len() - 2;
            let q = Query {
                encoding: Encoding::PLAIN,
                commands: vec![Command::new("challenge", [Text::from("0".repeat(pad))])],
            };
            return encode_query(&q, out);
        }
        let mut commands = self.plumbing();
        if self.step == Step::Main {
            commands.extend(self.commands.iter().cloned());
        }
        encode_query(
            &Query {
                encoding: self.opts.encoding,
                commands,
            },
            out,
        );
    }

    fn expected(&self) -> usize {
        match self.step {
            Step::Probe => 1,
            Step::Login => self.plumbing().len(),
            Step::Main => self.plumbing().len() + self.commands.len(),
        }
    }

    fn datagram(&mut self, now: Instant, datagram: &[u8]) {
        if self.x.is_done() || !self.x.has_sent() {
            return;
        }
        let bytes = datagram.len();
        let dg = match decode_reply(datagram, self.opts.max_reply_bytes) {
            Ok(d) => d,
            Err(e) => {
                let e = match e {
                    FrameError::Decode(e) => e,
                    FrameError::UnknownEncoding(_) => {
                        DecodeError::invalid(1, "encoding", "unknown encoding")
                    }
                };
                self.x.malformed(e);
                return self.x.dropped(bytes, "does not decode");
            }
        };
        if self.held.iter().any(|(b, _)| b.as_slice() == datagram) {
            return self.x.dropped(bytes, "duplicate datagram");
        }
        // A compressed datagram is held at its decompressed size: a few hundred bytes of
        // deflate can carry max_reply_bytes of records.
        let size = bytes.max(payload_len(&dg));
        if self.held.len() >= MAX_DATAGRAMS || self.held_bytes + size > self.opts.max_reply_bytes {
            self.held.clear();
            self.held_bytes = 0;
            return self
                .x
                .dropped(bytes, "too many reply datagrams: dropped them all");
        }
        self.x.event(Event::Part {
            bytes,
            number: None,
            count: None,
        });
        self.held_bytes += size;
        self.held.push((datagram.to_vec(), dg));
        if !self.held.iter().any(|(_, d)| d.last) {
            return;
        }
        let Some(replies) = self.assemble() else {
            return;
        };
        self.on_replies(now, replies);
    }

    /// Joins the held datagrams in arrival order. A lone 40/41 or proof request in an
    /// `EOT` datagram answers the whole query. Otherwise the replies are complete when
    /// the datagrams from some point on (older ones may be stale: a late answer to an
    /// earlier step or attempt) join into exactly one reply per command and include an
    /// `EOT` datagram. `None` while incomplete.
    fn assemble(&self) -> Option<Vec<Reply>> {
        for (_, d) in self.held.iter().rev() {
            if let [only] = d.replies.as_slice() {
                if d.last && d.continued.is_empty() && whole_query_reply(only) {
                    return Some(d.replies.clone());
                }
            }
        }
        let expected = self.expected();
        'start: for start in 0..self.held.len() {
            let tail = self.held.get(start..).unwrap_or_default();
            if !tail.iter().any(|(_, d)| d.last) {
                break;
            }
            let mut replies: Vec<Reply> = Vec::new();
            for (_, d) in tail {
                if !d.continued.is_empty() {
                    let Some(last) = replies.last_mut() else {
                        continue 'start;
                    };
                    last.records.extend(d.continued.iter().cloned());
                }
                replies.extend(d.replies.iter().cloned());
                if replies.len() > expected {
                    continue 'start;
                }
            }
            if replies.len() == expected {
                return Some(replies);
            }
        }
        None
    }

    fn resend(&mut self) {
        self.x.timer.resend_now();
        self.held.clear();
        self.held_bytes = 0;
    }

    fn adopt_token(&mut self, now: Instant, token: Text, bytes: usize) -> bool {
        self.x.event(Event::Challenge {
            bytes,
            challenge: None,
        });
        self.token = Some(token);
        self.x.follow_challenge(now)
    }

    fn on_replies(&mut self, now: Instant, replies: Vec<Reply>) {
        // Whole replies of this server: it is alive, and its retries adapt.
        self.x.heard(now);
        if let [only] = replies.as_slice() {
            if only.name.is_empty()
                && matches!(
                    only.code,
                    StatusCode::UNSUPPORTED_ENCODING | StatusCode::DECODE_ERROR
                )
            {
                let meaning = only.message().map_or_else(
                    || only.code.description().unwrap_or("unknown").to_string(),
                    str::to_string,
                );
                return self.x.reject(Rejection::Error {
                    code: u32::from(only.code.0),
                    meaning,
                });
            }
        }
        let mut rest = replies.into_iter();
        if self.step == Step::Probe {
            let Some(r) = rest.next() else { return };
            match dc1(&r) {
                Some(t) if r.name == "challenge" => {
                    self.x.event(Event::Challenge {
                        bytes: self.held_bytes,
                        challenge: None,
                    });
                    self.token = Some(t.clone());
                }
                _ => self.use_tokens = false,
            }
            self.step = if self.opts.credentials.is_some() {
                Step::Login
            } else {
                Step::Main
            };
            return self.resend();
        }
        if self.use_tokens && self.token.is_some() {
            let Some(r) = rest.next() else { return };
            if r.code == StatusCode::UNAUTHORISED {
                if let Some(t) = dc1(&r) {
                    if self.adopt_token(now, t.clone(), self.held_bytes) {
                        if self.opts.credentials.is_some() {
                            self.step = Step::Login;
                        }
                        self.resend();
                    }
                    return;
                }
            }
        }
        let mut authenticated = false;
        match (self.step, &self.opts.credentials) {
            (Step::Login, Some(_)) => {
                let Some(r) = rest.next() else { return };
                match (r.code, dc1(&r)) {
                    (StatusCode::OK, Some(c)) => {
                        self.login_challenge = Some(c.clone());
                        self.step = Step::Main;
                        self.resend();
                    }
                    (code, _) => self.x.reject(Rejection::AuthUnsupported {
                        code: u32::from(code.0),
                    }),
                }
                return;
            }
            (Step::Main, Some(_)) if self.login_challenge.is_some() => {
                let Some(r) = rest.next() else { return };
                match r.code {
                    StatusCode::OK => authenticated = true,
                    StatusCode::UNAUTHORISED if !self.relogged => {
                        self.relogged = true;
                        self.login_challenge = None;
                        self.step = Step::Login;
                        return self.resend();
                    }
                    StatusCode::UNAUTHORISED => return self.x.reject(Rejection::AuthFailed),
                    code => {
                        return self.x.reject(Rejection::AuthUnsupported {
                            code: u32::from(code.0),
                        })
                    }
                }
            }
            _ => {}
        }
        let replies: Vec<Reply> = rest.collect();
        let mut status = Status::default();
        let mut warnings = Vec::new();
        if self.opts.mode == QueryMode::Status {
            // serverinfo first, so that identify only fills what it lacks
            for r in replies.iter().filter(|r| r.name != "identify") {
                model::apply_reply(&mut status, r, &mut warnings);
            }
            for r in replies.iter().filter(|r| r.name == "identify") {
                model::apply_reply(&mut status, r, &mut warnings);
            }
        }
        self.x.ping(now);
        self.x.received(
            self.held.len(),
            self.held.iter().map(|(b, _)| b.len()).sum(),
        );
        let bytes = self.held_bytes;
        self.x.event(Event::Reply {
            what: "query",
            bytes,
            datagrams: self.held.len(),
        });
        self.x.warn(warnings);
        let details = Details {
            replies,
            token: self.token.clone(),
            authenticated,
        };
        self.x.succeed(status, details);
    }
}

impl QueryDriver for QueryMachine {
    type Details = Details;

    exchange_driver!(give_up_on_timeout);

    fn poll_transmit_into(&mut self, now: Instant, d: &mut Vec<u8>) -> bool {
        if !self.x.due_datagram(d) {
            return false;
        }
        self.encode_query(d);
        self.held.clear();
        self.held_bytes = 0;
        let what = match self.step {
            Step::Probe => "token probe",
            Step::Login => "login",
            Step::Main => "query",
        };
        self.x.sent_query(now, d, what, None, None);
        true
    }

    fn handle_datagram(&mut self, now: Instant, datagram: &[u8]) {
        self.datagram(now, datagram);
    }
}

crate::client_core::start_query!(QueryOptions, no_id);
