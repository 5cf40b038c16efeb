//! The GQP client as a state machine: one query of one server, with the address-proof
//! token, the optional `login`/`validate` exchange, ETB blocks, retries and timeouts, and
//! no I/O. Same interface as [`ogp::client::QueryMachine`](crate::ogp::client::QueryMachine):
//! 1. [`QueryMachine::poll_transmit`] → a datagram to send now, if any;
//! 2. [`QueryMachine::handle_datagram`] for every datagram from the queried address
//!    (the caller filters by source address);
//! 3. [`QueryMachine::poll_timeout`] → when to call [`QueryMachine::handle_timeout`];
//! 4. [`QueryMachine::result`] once [`QueryMachine::is_done`].
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
//! `max_challenge_errors` times. Replies are complete when a datagram ending in `EOT` has
//! arrived and the datagrams (from some point on: older ones may be stale answers to an
//! earlier step) hold one reply per command; identical datagrams are dropped,
//! and what a hostile server can make the machine hold is capped (`max_reply_bytes`,
//! [`MAX_DATAGRAMS`], [`MAX_EVENTS`]). Nothing here panics.

use std::fmt;
use std::time::{Duration, Instant};

use super::auth;
use super::model::{self, ModelWarning, STATUS_COMMANDS};
use super::wire::{
    decode_reply, encode_query, Command, Encoding, FrameError, Query, Record, Reply, ReplyDatagram,
    StatusCode,
};
use crate::error::DecodeError;
use crate::model::Text;
use crate::retry::{AttemptTimer, EventLog, Timeout};
use crate::Status;

/// Most datagrams held for one attempt.
pub const MAX_DATAGRAMS: usize = 64;
/// Most wire events recorded per query.
pub const MAX_EVENTS: usize = 64;
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
pub struct Credentials {
    /// Login name.
    pub user: Text,
    /// Password (never sent, never printed by `Debug`).
    pub password: Text,
}

impl fmt::Debug for Credentials {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Credentials")
            .field("user", &self.user)
            .field("password", &"…")
            .finish()
    }
}

/// Settings of one query.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct QueryOptions {
    /// What to ask (default: the status).
    pub mode: QueryMode,
    /// Encoding of the main query, and so of the replies (default `utf-8`).
    pub encoding: Encoding,
    /// Credentials for protected commands, if any.
    pub credentials: Option<Credentials>,
    /// A token from an earlier query of this server, if any (saves the probe).
    pub token: Option<Text>,
    /// Time to wait for an answer before sending again (default 1 s).
    pub attempt_timeout: Duration,
    /// Growth of the attempt timeout per retry, in percent (default 150).
    pub backoff_percent: u32,
    /// Retries after the first attempt of each step (default 2).
    pub retries: u32,
    /// Deadline for the whole query (default 5 s).
    pub total_timeout: Duration,
    /// Fresh tokens accepted before giving up (default 3).
    pub max_challenge_errors: u32,
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
            attempt_timeout: Duration::from_secs(1),
            backoff_percent: 150,
            retries: 2,
            total_timeout: Duration::from_secs(5),
            max_challenge_errors: 3,
            max_reply_bytes: 262_144,
        }
    }
}

/// Why a query failed.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum QueryError {
    /// No usable answer before the deadline.
    Timeout {
        /// Datagrams sent.
        attempts: u32,
    },
    /// The server kept rejecting the tokens it issued.
    ChallengeLoop,
    /// The server rejected the whole query (40 unsupported encoding, 41 decode error).
    Rejected {
        /// The status code.
        code: StatusCode,
        /// Its message, if any.
        message: Option<Text>,
    },
    /// The server does not offer authentication (its code for `login`/`validate`).
    AuthUnsupported(StatusCode),
    /// The server rejected our credentials.
    AuthFailed,
    /// The server's reply did not decode, or did not match the query.
    Malformed(DecodeError),
}

impl fmt::Display for QueryError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Timeout { attempts } => write!(
                f,
                "no answer (timed out after {attempts} attempt{})",
                if *attempts == 1 { "" } else { "s" }
            ),
            Self::ChallengeLoop => f.write_str("server rejects the tokens it issued"),
            Self::Rejected { code, message } => match message {
                Some(m) => write!(f, "server rejected the query with {code}: {m}"),
                None => write!(f, "server rejected the query with {code}"),
            },
            Self::AuthUnsupported(c) => write!(f, "server does not offer authentication ({c})"),
            Self::AuthFailed => f.write_str("server rejected the credentials"),
            Self::Malformed(e) => write!(f, "malformed reply: {e}"),
        }
    }
}

impl std::error::Error for QueryError {}

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

/// Something that happened on the wire, for tools that show it.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum WireEvent {
    /// A query datagram was sent.
    Sent {
        /// Size in bytes.
        bytes: usize,
        /// Which step.
        step: Step,
    },
    /// The server gave us a token.
    Token {
        /// The token.
        token: Text,
    },
    /// A reply datagram was taken.
    Reply {
        /// Size in bytes.
        bytes: usize,
        /// Whether it ended with EOT.
        last: bool,
    },
    /// A datagram was dropped.
    Dropped {
        /// Size in bytes.
        bytes: usize,
        /// Why.
        why: &'static str,
    },
}

/// A successful query.
#[derive(Debug, Clone, PartialEq)]
pub struct QueryOutcome {
    /// The status (status mode; default in raw mode).
    pub status: Status,
    /// The replies to the status or raw commands (not to `challenge`, `login`,
    /// `validate`).
    pub replies: Vec<Reply>,
    /// The token to reuse for the next query of this server.
    pub token: Option<Text>,
    /// Whether `validate` succeeded.
    pub authenticated: bool,
    /// Round-trip time of the answering attempt, in milliseconds.
    pub ping_ms: f64,
    /// Datagrams of the final reply.
    pub answer_datagrams: usize,
    /// Bytes of the final reply.
    pub answer_bytes: usize,
    /// Values that could not be read into the status.
    pub warnings: Vec<ModelWarning>,
    /// What happened on the wire (at most [`MAX_EVENTS`]).
    pub events: Vec<WireEvent>,
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
    timer: AttemptTimer,
    challenge_errors: u32,
    held: Vec<(Vec<u8>, ReplyDatagram)>,
    held_bytes: usize,
    last_malformed: Option<DecodeError>,
    events: EventLog<WireEvent>,
    result: Option<Result<QueryOutcome, QueryError>>,
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
    pub fn new(opts: QueryOptions, now: Instant) -> Self {
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
            timer: AttemptTimer::new(
                now,
                opts.attempt_timeout,
                opts.backoff_percent,
                opts.retries,
                opts.total_timeout,
            ),
            challenge_errors: 0,
            held: Vec::new(),
            held_bytes: 0,
            last_malformed: None,
            events: EventLog::new(MAX_EVENTS),
            result: None,
            opts,
        }
    }

    /// Whether the query has finished.
    pub fn is_done(&self) -> bool {
        self.result.is_some()
    }

    /// The result, once done.
    pub fn result(&mut self) -> Option<Result<QueryOutcome, QueryError>> {
        self.result.take()
    }

    /// The current step.
    pub fn step(&self) -> Step {
        self.step
    }

    fn event(&mut self, e: WireEvent) {
        self.events.push(e);
    }

    fn finish(&mut self, r: Result<QueryOutcome, QueryError>) {
        if self.result.is_none() {
            self.result = Some(r);
        }
        self.timer.stop();
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

    /// The datagram to send now, if any.
    pub fn poll_transmit(&mut self, now: Instant) -> Option<Vec<u8>> {
        if !self.timer.send_due() || self.result.is_some() {
            return None;
        }
        let mut d = Vec::with_capacity(64);
        self.encode_query(&mut d);
        self.timer.sent(now);
        self.held.clear();
        self.held_bytes = 0;
        self.event(WireEvent::Sent {
            bytes: d.len(),
            step: self.step,
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

    /// Advances timers: retries or gives up.
    pub fn handle_timeout(&mut self, now: Instant) {
        if self.result.is_some() {
            return;
        }
        if let Some(Timeout::GiveUp { .. }) = self.timer.handle_timeout(now) {
            self.give_up();
        }
    }

    fn give_up(&mut self) {
        let e = match self.last_malformed {
            Some(e) => QueryError::Malformed(e),
            None => QueryError::Timeout {
                attempts: self.timer.attempts(),
            },
        };
        self.finish(Err(e));
    }

    fn expected(&self) -> usize {
        match self.step {
            Step::Probe => 1,
            Step::Login => self.plumbing().len(),
            Step::Main => self.plumbing().len() + self.commands.len(),
        }
    }

    /// Handles a datagram from the queried address.
    pub fn handle_datagram(&mut self, now: Instant, datagram: &[u8]) {
        if self.result.is_some() || self.timer.sent_at().is_none() {
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
                self.last_malformed = Some(e);
                return self.event(WireEvent::Dropped {
                    bytes,
                    why: "does not decode",
                });
            }
        };
        if self.held.iter().any(|(b, _)| b.as_slice() == datagram) {
            return self.event(WireEvent::Dropped {
                bytes,
                why: "duplicate datagram",
            });
        }
        // A compressed datagram is held at its decompressed size: a few hundred bytes of
        // deflate can carry max_reply_bytes of records.
        let size = bytes.max(payload_len(&dg));
        if self.held.len() >= MAX_DATAGRAMS || self.held_bytes + size > self.opts.max_reply_bytes {
            self.held.clear();
            self.held_bytes = 0;
            return self.event(WireEvent::Dropped {
                bytes,
                why: "too many reply datagrams: dropped them all",
            });
        }
        self.event(WireEvent::Reply {
            bytes,
            last: dg.last,
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
        self.timer.resend_now();
        self.held.clear();
        self.held_bytes = 0;
    }

    fn adopt_token(&mut self, token: Text) -> bool {
        self.event(WireEvent::Token {
            token: token.clone(),
        });
        self.token = Some(token);
        self.challenge_errors += 1;
        if self.challenge_errors > self.opts.max_challenge_errors {
            self.finish(Err(QueryError::ChallengeLoop));
            return false;
        }
        true
    }

    fn on_replies(&mut self, now: Instant, replies: Vec<Reply>) {
        if let [only] = replies.as_slice() {
            if only.name.is_empty()
                && matches!(
                    only.code,
                    StatusCode::UNSUPPORTED_ENCODING | StatusCode::DECODE_ERROR
                )
            {
                return self.finish(Err(QueryError::Rejected {
                    code: only.code,
                    message: only.message().map(Text::from),
                }));
            }
        }
        let mut rest = replies.into_iter();
        if self.step == Step::Probe {
            let Some(r) = rest.next() else { return };
            match dc1(&r) {
                Some(t) if r.name == "challenge" => {
                    self.event(WireEvent::Token { token: t.clone() });
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
                    if self.adopt_token(t.clone()) {
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
                    (code, _) => self.finish(Err(QueryError::AuthUnsupported(code))),
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
                    StatusCode::UNAUTHORISED => return self.finish(Err(QueryError::AuthFailed)),
                    code => return self.finish(Err(QueryError::AuthUnsupported(code))),
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
        let outcome = QueryOutcome {
            status,
            replies,
            token: self.token.clone(),
            authenticated,
            ping_ms: self.timer.rtt_ms(now),
            answer_datagrams: self.held.len(),
            answer_bytes: self.held.iter().map(|(b, _)| b.len()).sum(),
            warnings,
            events: self.events.take(),
        };
        self.finish(Ok(outcome));
    }
}
