//! The GQP side of a responder: one query datagram in, zero or more reply datagrams out.
//! Same shape as [`OgpResponder`](crate::ogp::responder::OgpResponder): the caller (the
//! shared [`Responder`](crate::responder::Responder)) owns the challenge keys, the rate
//! limiter and the ban hook, and tells GQP apart with [`is_gqp`](super::is_gqp).
//!
//! Order of work (`docs/gqp.md` G20–G24):
//! 1. silence for: GQP switched off, datagrams over `max_query_bytes`, datagrams that are
//!    not GQP (first byte, final `EOT`), banned sources (GQP has no "banned" reply);
//! 2. a header naming an unknown encoding → one reply `40`; a query that does not decode
//!    (bad escape, raw control byte, invalid UTF-8, bad or oversized compressed data, too
//!    many commands) → one reply `41`; both with an empty command name;
//! 3. the query proves its source's address when one of its commands is
//!    `challenge RS <valid token>`;
//! 4. the commands run in order, one reply each: unknown → 20, disabled → 30, protected
//!    before a successful `validate` in the same query → 32, wrong argument count → 22,
//!    then the command's own answer (10, 21, 23, 31, 32);
//! 5. the replies go out in the query's encoding. To a source that has not proved its
//!    address: one datagram, **never more bytes than the query**; when the replies do not
//!    fit, the 22-byte `32challenge RS DC1 <token>` instead if that fits, else silence.
//!    To a proven source: blocks of at most `max_datagram_bytes` ending in `ETB`, the last
//!    in `EOT`, at most `max_datagrams` of them and `max_reply_bytes` in all; a reply that
//!    cannot fit is answered 31 instead.
//!
//! Nothing here panics; memory is bounded by the caps above.

use std::fmt;
use std::net::IpAddr;
use std::time::Instant;

use super::auth;
use super::model;
use super::wire::{
    self, decode_query, Charset, Command, Encoding, FrameError, Record, Reply, StatusCode,
};
use crate::guard::ChallengeKeys;
use crate::model::Text;
use crate::responder_core::{
    ignorable_outcome, AnswerKind, Context, Incoming, ProtocolResponder, Transmits, Unanswered,
};
use crate::Status;

/// A user who may `validate`, with the password the operator configured.
#[derive(Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct GqpUser {
    /// Login name.
    pub name: Text,
    /// Password (never sent on the wire, never printed by `Debug`).
    pub password: Text,
}

impl GqpUser {
    /// A user `name` with `password`.
    pub fn new(name: impl Into<Text>, password: impl Into<Text>) -> Self {
        Self {
            name: name.into(),
            password: password.into(),
        }
    }
}

impl fmt::Debug for GqpUser {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("GqpUser")
            .field("name", &self.name)
            .field("password", &"…")
            .finish()
    }
}

/// GQP responder settings.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct GqpConfig {
    /// Answer GQP at all (default true). Operators can switch the text protocol off on
    /// public listeners.
    pub enabled: bool,
    /// Replies to a source that has not proved its address never exceed its query
    /// (default true). Turning it off lets any source get one datagram of up to
    /// `max_datagram_bytes`: an amplifier for spoofed queries (the rate limit still
    /// applies).
    pub require_proof: bool,
    /// Largest query datagram read (default 1024); larger ones are ignored.
    pub max_query_bytes: usize,
    /// Largest query payload after decompression (default 4096).
    pub max_decoded_query_bytes: usize,
    /// Most commands in one query (default 32).
    pub max_commands: usize,
    /// Largest reply datagram (default 1400).
    pub max_datagram_bytes: usize,
    /// Most datagrams (ETB blocks) in one reply (default 32).
    pub max_datagrams: usize,
    /// Largest reply, all datagrams together (default 32768).
    pub max_reply_bytes: usize,
    /// Commands the admin disabled (answered 30).
    pub disabled: Vec<Text>,
    /// Commands answered 32 unless a successful `validate` precedes them in the query.
    pub protected: Vec<Text>,
    /// Users who may `validate`. None: `login` and `validate` answer 21.
    pub users: Vec<GqpUser>,
    /// Publish players' network addresses in `players` (default false: personal data).
    pub player_addresses: bool,
    /// `netver` of `identify` (default: the game version).
    pub net_version: Option<Text>,
}

impl Default for GqpConfig {
    fn default() -> Self {
        Self {
            enabled: true,
            require_proof: true,
            max_query_bytes: 1024,
            max_decoded_query_bytes: 4096,
            max_commands: 32,
            max_datagram_bytes: 1400,
            max_datagrams: 32,
            max_reply_bytes: 32768,
            disabled: Vec::new(),
            protected: Vec::new(),
            users: Vec::new(),
            player_addresses: false,
            net_version: None,
        }
    }
}

/// What the GQP responder did with a datagram.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum GqpOutcome {
    /// Not answered (switched off, too large, not GQP, banned, or a reply to an unproven
    /// source that could not be made as small as its query).
    Ignored(Unanswered),
    /// Answered a query that did not decode: 40 or 41.
    QueryError(StatusCode),
    /// The source has not proved its address and the replies were larger than the query:
    /// answered with a token instead.
    ProofRequired,
    /// Answered the commands.
    Answer {
        /// Datagrams sent (more than 1: ETB blocks).
        datagrams: usize,
        /// Commands answered.
        commands: usize,
        /// Whether the query proved its source's address.
        proven: bool,
    },
}

/// Required commands (draft "Required commands").
pub const REQUIRED_COMMANDS: [&str; 5] = ["identify", "echo", "login", "validate", "extensions"];
/// Our extension commands (listed by `extensions`): the address proof, then the status
/// commands.
pub fn extension_commands() -> impl Iterator<Item = &'static str> {
    std::iter::once("challenge").chain(super::model::STATUS_COMMANDS)
}

/// Room left in a compressed datagram for what compression may add to incompressible text.
const COMPRESSION_MARGIN: usize = 32;
/// Longest user name `login` accepts.
const MAX_USER_LEN: usize = 64;

/// The GQP part of a responder.
#[derive(Debug, Clone)]
pub struct GqpResponder {
    config: GqpConfig,
    scratch: Vec<u8>,
}

struct Ctx<'a> {
    now: Instant,
    ip: IpAddr,
    status: &'a Status,
    keys: &'a mut ChallengeKeys,
    authenticated: bool,
}

impl GqpResponder {
    /// A responder with the given settings.
    pub fn new(config: GqpConfig) -> Self {
        Self {
            config,
            scratch: Vec::with_capacity(1500),
        }
    }

    /// The settings.
    pub fn config(&self) -> &GqpConfig {
        &self.config
    }

    /// Encodes `replies` as one datagram and sends it if it is at most `limit` bytes.
    fn send_fitting(
        &mut self,
        limit: usize,
        enc: Encoding,
        replies: &[Reply],
        out: &mut Transmits,
    ) -> bool {
        self.scratch.clear();
        wire::encode_reply(enc, &[], replies, true, &mut self.scratch);
        if self.scratch.len() > limit {
            return false;
        }
        out.push_buf().extend_from_slice(&self.scratch);
        true
    }

    /// A query-level error (40, 41): plain, empty command name, with a message when that
    /// fits the limit for unproven sources, else without (`4x RS ACK EOT`), else silence.
    /// The query could not be read, so its source has proved nothing.
    fn query_error(
        &mut self,
        code: StatusCode,
        detail: &str,
        request_len: usize,
        out: &mut Transmits,
    ) -> GqpOutcome {
        let limit = if self.config.require_proof {
            request_len
        } else {
            self.config.max_datagram_bytes
        };
        let full = Reply::error(code, "", Some(detail));
        let bare = Reply {
            code,
            name: Text::default(),
            records: Vec::new(),
        };
        if self.send_fitting(limit, Encoding::PLAIN, &[full], out)
            || self.send_fitting(limit, Encoding::PLAIN, &[bare], out)
        {
            return GqpOutcome::QueryError(code);
        }
        GqpOutcome::Ignored(Unanswered::oversized(
            "error reply would be larger than the query",
        ))
    }

    fn listed(list: &[Text], name: &str) -> bool {
        list.iter().any(|n| n == name)
    }

    fn run(&self, cmd: &Command, ctx: &mut Ctx<'_>) -> Reply {
        let name = cmd.name.as_str();
        let err = |code, detail: Option<&str>| Reply::error(code, name, detail);
        let known = REQUIRED_COMMANDS.contains(&name) || extension_commands().any(|c| c == name);
        if !known {
            if name.is_empty() {
                // The draft's `20 <RS> <ACK>`: nothing to name, nothing to say (G8).
                return Reply {
                    code: StatusCode::UNKNOWN_COMMAND,
                    name: Text::default(),
                    records: Vec::new(),
                };
            }
            return err(StatusCode::UNKNOWN_COMMAND, None);
        }
        if Self::listed(&self.config.disabled, name) {
            return err(StatusCode::DISABLED, None);
        }
        let auth_command = matches!(name, "challenge" | "login" | "validate");
        if !auth_command && !ctx.authenticated && Self::listed(&self.config.protected, name) {
            return err(StatusCode::UNAUTHORISED, Some("validate first"));
        }
        let args = cmd.args.as_slice();
        let (min, max) = match name {
            "echo" => (0, usize::MAX),
            "challenge" => (0, 1),
            "login" => (1, 2),
            "validate" => (2, 2),
            _ => (0, 0),
        };
        if args.len() < min || args.len() > max {
            return err(StatusCode::ARGUMENT_COUNT, None);
        }
        let status = ctx.status;
        let ok = |records| Reply::ok(name, records);
        let section = |records: Option<Vec<Record>>| match records {
            Some(r) => ok(r),
            None => err(StatusCode::UNAVAILABLE, Some("not reported by this server")),
        };
        match name {
            "identify" => ok(model::identify_records(
                status,
                self.config.net_version.as_deref(),
            )),
            "echo" => ok(args.iter().cloned().map(Record::Text).collect()),
            "extensions" => {
                let mut commands = vec![];
                for c in extension_commands() {
                    if !Self::listed(&self.config.disabled, c) {
                        commands.push(Text::from(c));
                    }
                }
                ok(vec![
                    Record::Labelled("commands".into(), commands),
                    Record::Labelled(
                        "encodings".into(),
                        Encoding::SUPPORTED_NAMES.map(Text::from).to_vec(),
                    ),
                ])
            }
            "challenge" => self.challenge(name, args.first(), ctx),
            "login" => self.login(name, args, ctx),
            "validate" => self.validate(name, args, ctx),
            "serverinfo" => ok(model::serverinfo_records(status)),
            "players" => section(model::players_records(status, self.config.player_addresses)),
            "teams" => section(model::teams_records(status)),
            "rules" => section(model::rules_records(status)),
            "addons" => section(model::addons_records(status)),
            "limits" => section(model::limits_records(status)),
            _ => err(StatusCode::UNKNOWN_COMMAND, None),
        }
    }

    fn challenge(&self, name: &str, arg: Option<&Text>, ctx: &mut Ctx<'_>) -> Reply {
        let fresh =
            |ctx: &mut Ctx<'_>| Record::String(auth::issue_token(ctx.keys, ctx.now, ctx.ip));
        match arg {
            None => Reply::ok(name, vec![fresh(ctx)]),
            Some(a) if auth::is_token_request(a) => Reply::ok(name, vec![fresh(ctx)]),
            Some(a) if auth::parse_token(a).is_some() => {
                if auth::verify_token(ctx.keys, ctx.now, ctx.ip, a) {
                    Reply::ok(name, Vec::new())
                } else {
                    Reply {
                        code: StatusCode::UNAUTHORISED,
                        name: name.into(),
                        records: vec![fresh(ctx)],
                    }
                }
            }
            Some(_) => Reply::error(
                StatusCode::INVALID_ARGUMENT,
                name,
                Some("a token is 8 hex digits"),
            ),
        }
    }

    fn login(&self, name: &str, args: &[Text], ctx: &mut Ctx<'_>) -> Reply {
        if self.config.users.is_empty() {
            return Reply::error(
                StatusCode::UNSUPPORTED_FEATURE,
                name,
                Some("authentication is not configured"),
            );
        }
        let [user] = args else {
            // `login RS user RS password`, as the draft lists it: we never take a password
            // in clear (G16).
            return Reply::error(
                StatusCode::UNSUPPORTED_FEATURE,
                name,
                Some("plain-text passwords are not accepted: send login <user>, then validate <user> <HMAC-SHA256(password, challenge) hex>"),
            );
        };
        if user.is_empty() || user.len() > MAX_USER_LEN {
            return Reply::error(
                StatusCode::INVALID_ARGUMENT,
                name,
                Some("user name of 1 to 64 bytes"),
            );
        }
        // Unknown users get a challenge too, so that `login` does not tell which exist.
        let c = auth::issue_login_challenge(ctx.keys, ctx.now, ctx.ip, user);
        Reply::ok(name, vec![Record::String(c)])
    }

    fn validate(&self, name: &str, args: &[Text], ctx: &mut Ctx<'_>) -> Reply {
        if self.config.users.is_empty() {
            return Reply::error(
                StatusCode::UNSUPPORTED_FEATURE,
                name,
                Some("authentication is not configured"),
            );
        }
        let [user, response] = args else {
            return Reply::error(StatusCode::ARGUMENT_COUNT, name, None);
        };
        let Some(response) = crate::text::from_hex(response).filter(|r| r.len() == 32) else {
            return Reply::error(
                StatusCode::INVALID_ARGUMENT,
                name,
                Some("the response is 64 hex digits"),
            );
        };
        let account = self.config.users.iter().find(|u| u.name == *user);
        // Check an unknown user against an empty password all the same (same work).
        let password = account.map_or("", |u| u.password.as_str());
        let valid =
            auth::verify_login_response(ctx.keys, ctx.now, ctx.ip, user, password, &response);
        if valid && account.is_some() {
            ctx.authenticated = true;
            Reply::ok(name, Vec::new())
        } else {
            Reply::error(StatusCode::UNAUTHORISED, name, Some("invalid credentials"))
        }
    }

    /// Packs the replies into at most `max_blocks` datagrams and writes them; returns how
    /// many.
    fn send_blocks(
        &self,
        enc: Encoding,
        replies: &[Reply],
        max_blocks: usize,
        out: &mut Transmits,
    ) -> usize {
        let margin = if enc.compression.is_some() {
            COMPRESSION_MARGIN
        } else {
            0
        };
        let overhead = enc.header_len() + 1 + margin;
        let limits = PackLimits {
            budget: self.config.max_datagram_bytes.saturating_sub(overhead),
            max_blocks: max_blocks.max(1),
            max_total: self.config.max_reply_bytes,
            overhead,
            cs: enc.charset,
        };
        let mut blocks = vec![Block::default()];
        let mut cur = Cursor {
            blocks: 1,
            used: 0,
            total: overhead,
        };
        for r in replies {
            let mut trial = cur;
            if place(&mut trial, r, &limits, None) {
                place(&mut cur, r, &limits, Some(&mut blocks));
                continue;
            }
            let too_large = Reply::error(
                StatusCode::UNAVAILABLE,
                r.name.clone(),
                Some("reply too large"),
            );
            // A command name too long for a block (a compressed query can carry 4 KiB of
            // it) cannot be echoed even in the 31: then `31 RS ACK`, without the name.
            let bare = Reply {
                code: StatusCode::UNAVAILABLE,
                name: Text::default(),
                records: Vec::new(),
            };
            for fallback in [&too_large, &bare] {
                let mut trial = cur;
                if place(&mut trial, fallback, &limits, None) {
                    place(&mut cur, fallback, &limits, Some(&mut blocks));
                    break;
                }
            }
            // else: not even `31 RS ACK` fits in what is left; the reply is left out (only
            // with caps far below the defaults).
        }
        let n = blocks.len();
        for (i, b) in blocks.iter().enumerate() {
            let buf = out.push_buf();
            wire::encode_reply(enc, &b.continued, &b.replies, i + 1 == n, buf);
        }
        n
    }
}

ignorable_outcome!(GqpOutcome);

impl ProtocolResponder for GqpResponder {
    type Outcome = GqpOutcome;

    fn answer_kind(&self, outcome: &GqpOutcome) -> Option<AnswerKind> {
        match outcome {
            GqpOutcome::Ignored(_) => None,
            GqpOutcome::QueryError(_) => Some(AnswerKind::Error),
            GqpOutcome::ProofRequired => Some(AnswerKind::Challenge),
            GqpOutcome::Answer { .. } => Some(AnswerKind::Commands),
        }
    }

    fn max_request_bytes(&self) -> usize {
        self.config.max_query_bytes
    }

    fn proven(&self, outcome: &GqpOutcome) -> bool {
        matches!(outcome, GqpOutcome::Answer { proven: true, .. })
    }

    fn enabled(&self) -> bool {
        self.config.enabled
    }

    fn answer(&mut self, incoming: Incoming<'_>, cx: Context<'_>) -> GqpOutcome {
        let (now, ip, datagram, reject) = incoming.parts();
        let (status, keys, out) = cx.parts();
        if !super::is_gqp(datagram) {
            return GqpOutcome::Ignored(Unanswered::malformed("not GQP"));
        }
        if reject {
            return GqpOutcome::Ignored(Unanswered::banned("banned"));
        }
        let query = match decode_query(
            datagram,
            self.config.max_commands,
            self.config.max_decoded_query_bytes,
        ) {
            Ok(q) => q,
            Err(FrameError::UnknownEncoding(name)) => {
                let detail = compact_str::format_compact!("{name}");
                return self.query_error(
                    StatusCode::UNSUPPORTED_ENCODING,
                    &detail,
                    datagram.len(),
                    out,
                );
            }
            Err(FrameError::Decode(e)) => {
                let detail = compact_str::format_compact!("{e}");
                return self.query_error(StatusCode::DECODE_ERROR, &detail, datagram.len(), out);
            }
        };
        // Disabling `challenge` disables address proofs: every reply is then capped.
        let proofs = !Self::listed(&self.config.disabled, "challenge");
        let proven = proofs
            && query.commands.iter().any(|c| {
                c.name == "challenge"
                    && matches!(c.args.as_slice(), [t] if auth::verify_token(keys, now, ip, t))
            });
        let mut ctx = Ctx {
            now,
            ip,
            status,
            keys,
            authenticated: false,
        };
        let enc = query.encoding;
        let capped = !proven && self.config.require_proof;
        // For an unproven source, stop working as soon as the replies cannot fit its
        // query: plain text only grows on the wire; compressed text is given room for a
        // 16:1 ratio (beyond it the proof request goes out instead, which is just as safe).
        let cutoff = if enc.compression.is_some() {
            datagram.len().saturating_mul(16)
        } else {
            datagram.len()
        };
        let mut replies: Vec<Reply> = Vec::with_capacity(query.commands.len());
        let mut plain = 0usize;
        let mut over = false;
        for c in &query.commands {
            let r = self.run(c, &mut ctx);
            plain += r.encoded_len(enc.charset) + usize::from(!replies.is_empty());
            replies.push(r);
            if capped && plain > cutoff {
                over = true;
                break;
            }
        }
        let commands = replies.len();
        if proven || !self.config.require_proof {
            let max_blocks = if proven { self.config.max_datagrams } else { 1 };
            let n = self.send_blocks(enc, &replies, max_blocks, out);
            return GqpOutcome::Answer {
                datagrams: n,
                commands,
                proven,
            };
        }
        // Unproven: one datagram, no larger than the query; else the proof request if
        // that fits (and proofs are possible); else silence.
        let limit = datagram.len();
        if !over && self.send_fitting(limit, enc, &replies, out) {
            return GqpOutcome::Answer {
                datagrams: 1,
                commands,
                proven,
            };
        }
        if proofs {
            let token = auth::issue_token(ctx.keys, now, ip);
            let fallback = Reply {
                code: StatusCode::UNAUTHORISED,
                name: Text::const_new("challenge"),
                records: vec![Record::String(token)],
            };
            if self.send_fitting(limit, Encoding::PLAIN, &[fallback], out) {
                return GqpOutcome::ProofRequired;
            }
        }
        GqpOutcome::Ignored(Unanswered::oversized(
            "reply to an unproven source would be larger than its query",
        ))
    }
}

#[derive(Debug, Default)]
struct Block {
    continued: Vec<Record>,
    replies: Vec<Reply>,
}

#[derive(Debug, Clone, Copy)]
struct Cursor {
    /// Blocks started.
    blocks: usize,
    /// Payload bytes in the current block.
    used: usize,
    /// Bytes of all blocks so far, with their header, terminator and margin.
    total: usize,
}

struct PackLimits {
    budget: usize,
    max_blocks: usize,
    max_total: usize,
    overhead: usize,
    cs: Charset,
}

/// Places `item_cost` bytes (`at_start` when the block is empty) in the current block or
/// a new one. Returns whether a new block was started, or `None` if it fits nowhere.
fn advance(cur: &mut Cursor, cost_here: usize, cost_new: usize, lim: &PackLimits) -> Option<bool> {
    if cur.used + cost_here <= lim.budget && cur.total + cost_here <= lim.max_total {
        cur.used += cost_here;
        cur.total += cost_here;
        return Some(false);
    }
    if cur.blocks < lim.max_blocks
        && cost_new <= lim.budget
        && cur.total + lim.overhead + cost_new <= lim.max_total
    {
        cur.blocks += 1;
        cur.used = cost_new;
        cur.total += lim.overhead + cost_new;
        return Some(true);
    }
    None
}

/// Places one reply: its head with its first record (or ACK) together, then each further
/// record in the same block or, continued, in the next (G9). With `sink`, the parts are
/// also written into the blocks. Returns false when it does not fit (the cursor is then
/// meaningless; callers try on a copy first).
fn place(
    cur: &mut Cursor,
    reply: &Reply,
    lim: &PackLimits,
    mut sink: Option<&mut Vec<Block>>,
) -> bool {
    let cs = lim.cs;
    let mut records = reply.records.iter();
    let first = records.next();
    let head_only = Reply {
        code: reply.code,
        name: reply.name.clone(),
        records: first.cloned().into_iter().collect(),
    };
    let atom = head_only.encoded_len(cs);
    let sep = usize::from(cur.used > 0);
    let Some(new_block) = advance(cur, sep + atom, atom, lim) else {
        return false;
    };
    let mut continuing = false;
    if let Some(blocks) = sink.as_deref_mut() {
        if new_block {
            blocks.push(Block::default());
        }
        if let Some(b) = blocks.last_mut() {
            b.replies.push(head_only);
        }
    }
    for rec in records {
        let cost = 1 + rec.encoded_len(cs);
        let Some(new_block) = advance(cur, cost, cost, lim) else {
            return false;
        };
        if let Some(blocks) = sink.as_deref_mut() {
            if new_block {
                blocks.push(Block::default());
                continuing = true;
            }
            if let Some(b) = blocks.last_mut() {
                if continuing {
                    b.continued.push(rec.clone());
                } else if let Some(r) = b.replies.last_mut() {
                    r.records.push(rec.clone());
                }
            }
        }
    }
    true
}
