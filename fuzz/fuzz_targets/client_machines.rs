//! The client state machines (`ogp::client`, `gqp::client`, `ogp_draft::client`,
//! `gamespy3::client`, `a2s::client`) driven through the `client::QueryDriver` trait, as an
//! I/O loop would, by a hostile server: arbitrary datagrams, a real responder's answers
//! (reordered, duplicated, dropped, corrupted, late), synthesized large answers, and time
//! passing.
//!
//! Input: a 16-byte prefix (zero-padded) of options, then operations until the input ends.
//! * prefix: `p[0] % 5` the machine (OGP, GQP, draft, GameSpy v3, A2S); `p[1]` flags (OGP:
//!   bUTF8, split, known challenge; GQP: known token, encoding, credentials, raw mode;
//!   GameSpy v3: `& 3` the handshake (auto, always, never, auto), `& 4` sub-protocol A,
//!   `& 8` sub-protocol C, `& 0x10` exact session ids only; A2S: `& 1`, `& 2`, `& 4` leave
//!   out INFO, PLAYER, RULES, `& 8` a known challenge); `p[2]` attempt
//!   timeout (× 20 ms, 0: 1 s), `p[3]` total timeout (× 50 ms, 0: 5 s), `p[4]` backoff
//!   (× 4 %, 0: 150 %), `p[5]` retries, challenge errors and (top 3 bits) the retries of
//!   a server that has answered, `p[6..8]` MaxBytesPerPacket
//!   (GQP: `p[6]` picks max_reply_bytes, `p[7]` the raw commands; GameSpy v3: `p[6]` picks
//!   the reassembly's max_bytes, 2–256 KiB; A2S: `p[6] & 7` the reassembly's max_bytes,
//!   2–256 KiB, `p[6] >> 6` its max_decompressed, 4 MiB, 4 KiB, 64 KiB or 512 KiB, `p[7]`
//!   its max_fragments, 0 for 128), `p[8..12]` the known challenge or token,
//!   `p[12..16]` the RequestID (GameSpy v3: the session id).
//! * `op & 3 == 0`: a datagram, `[n: u16 LE]` then `n & 0x1fff` bytes;
//! * `op & 3 == 1`: time passes, `[k: u8]` × (1, 10, 100, 1000 ms by `op >> 2 & 3`),
//!   timers firing on the way;
//! * `op & 3 == 2`: the last query goes through a real `Responder` (state.json) and its
//!   answers come back, reversed / with the first repeated / without the first / with a
//!   flipped byte / late, by the bits of `op >> 2`;
//! * `op & 3 == 3`: a synthesized answer, `[a: u8] [b: u8] [c: u8] [d: u8]`: OGP and draft:
//!   a split packet (count `a`, number `b`) with `c` KiB of body (≤ 1.25 MiB per input), so
//!   that the 1 MiB reassembly cap is reachable; GQP: a reply datagram holding `b` (with
//!   `a & 0x20`: `b | c << 8`) records of one kind (plain, UTF-8, deflate or gzip; ≤ 256
//!   KiB of payload per input), so that the caps on held replies are reachable through
//!   compression; GameSpy v3: a reply packet numbered `a & 0x7f` (last with `b & 1`, another
//!   session's with `d & 1`) holding `c` KiB (≤ 1.25 MiB per input) of one-byte player
//!   values, server pairs, one-value columns at offset 255, or a Just Cause 2 player list,
//!   by `d >> 1 & 3`; A2S (≤ 1 MiB per input: decompressing is slow), by `d & 3`: a
//!   Source or GoldSrc fragment (count `a`, number `b`, fragment 0 starting a RULES reply)
//!   with `c` KiB of payload, so that the reassembly caps are reachable, or a
//!   bzip2-compressed RULES (one long value, or 65535 empty rules and zeros) or PLAYER (255
//!   long names) reply of `c` × 16 KiB in `a & 7` + 1 fragments (reversed, declared size
//!   one too many, CRC wrong by bits of `a`), so that `max_decompressed` and what the
//!   decoded replies hold are reachable.
//!
//! Asserts: no panic; every datagram the machine sends is a well-formed query of its
//! protocol (OGP/draft: our RequestID, a challenge field, the asked-for fields; GQP: it
//! decodes, in plain text or the chosen encoding, and never carries the password);
//! it sends at most `1 + retries + max_challenges` datagrams, `retries` being the larger
//! of the retries and the retries once the server has answered (GQP: plus its
//! steps; GameSpy v3: two per attempt, `(1 + retries) × (1 + max_challenges) + 2`
//! attempts); while running, `poll_timeout` is never later than the total deadline, and the
//! result is there once time reaches it; outcomes respect the caps (at most `MAX_EVENTS`
//! events, GQP: at most `MAX_DATAGRAMS` datagrams and `max_reply_bytes` bytes held,
//! RequestID ours, a round-trip time within the elapsed time, timeouts counting every
//! attempt); and the heap the machine holds after each datagram stays within its caps: the
//! 1 MiB reassembly limit (OGP, draft) or 64 × `max_reply_bytes` (GQP) or 64 × the
//! reassembly's `max_bytes` (GameSpy v3: decoded packets), plus 2 MiB of slack, measured
//! with a counting global allocator. GameSpy v3 requests carry our session id and the
//! asked sub-protocol; its outcomes respect `MAX_EVENTS`, `MAX_WARNINGS` and `max_bytes`.
//! A2S: the client sends INFO, PLAYER or RULES requests of the steps asked for (PLAYER
//! and RULES with a challenge, nothing after it), at most `steps × (1 + retries) +
//! max_challenges` of them; a result has INFO exactly when it was asked for, every other
//! step asked for either there or listed once as missing, at most `MAX_EVENTS` events and
//! 64 warnings; only INFO times a query out (counting every datagram sent); the heap it
//! holds stays within `max_bytes` (held fragments) + 4 × the larger of `max_bytes` and
//! `max_decompressed` (the strings of decoded INFO, second INFO, PLAYER and RULES
//! replies) + 4 MiB (at most 65535 rules and 255 players) + the slack.

use std::alloc::{GlobalAlloc, Layout, System};
use std::cell::Cell;
use std::net::SocketAddr;
use std::time::{Duration, Instant};

use ogp_fuzz::a2s::{bzip2_payload, source_fragments};
use ogp_fuzz::state_status;
use ogp_proto::a2s;
use ogp_proto::client::{
    Answer, QueryDriver, QueryError, Rejection, Timing, MAX_EVENTS, MAX_WARNINGS,
};
use ogp_proto::gamespy3::{self, InfoKind};
use ogp_proto::gqp::client::{Credentials, QueryMode, MAX_DATAGRAMS, PROBE_LEN};
use ogp_proto::gqp::responder::GqpUser;
use ogp_proto::gqp::{
    self, decode_query, encode_reply, Command, Encoding, Record, Reply, StatusCode,
};
use ogp_proto::model::Text;
use ogp_proto::ogp::split::MAX_REASSEMBLED_BYTES;
use ogp_proto::ogp::{self, Message, PacketType, SplitInfo};
use ogp_proto::ogp_draft;
use ogp_proto::responder::{Listener, Responder, ResponderConfig, Transmits};

// ---------------------------------------------------------------------------------------
// Heap accounting

struct Counting;

thread_local! {
    /// The bytes this thread allocated and has not freed (what another thread frees of
    /// them counts there): per thread, so that the workspace's corpus replay, which runs
    /// targets on two threads at once, measures one machine's heap, as libFuzzer's single
    /// thread does.
    static LIVE: Cell<isize> = const { Cell::new(0) };
}

/// Adds to this thread's count (nothing while the thread is being torn down).
fn count(bytes: isize) {
    let _ = LIVE.try_with(|c| c.set(c.get().wrapping_add(bytes)));
}

/// An allocation's size as a count.
fn size(n: usize) -> isize {
    isize::try_from(n).unwrap_or(isize::MAX)
}

// SAFETY: every call is forwarded to the system allocator unchanged; the counter is only
// bookkeeping (a const-initialised thread-local without a destructor: no allocation).
unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, l: Layout) -> *mut u8 {
        let p = System.alloc(l);
        if !p.is_null() {
            count(size(l.size()));
        }
        p
    }
    unsafe fn alloc_zeroed(&self, l: Layout) -> *mut u8 {
        let p = System.alloc_zeroed(l);
        if !p.is_null() {
            count(size(l.size()));
        }
        p
    }
    unsafe fn dealloc(&self, p: *mut u8, l: Layout) {
        System.dealloc(p, l);
        count(-size(l.size()));
    }
    unsafe fn realloc(&self, p: *mut u8, l: Layout, new_size: usize) -> *mut u8 {
        let q = System.realloc(p, l, new_size);
        if !q.is_null() {
            count(size(new_size).wrapping_sub(size(l.size())));
        }
        q
    }
}

#[global_allocator]
static ALLOCATOR: Counting = Counting;

fn live() -> usize {
    usize::try_from(LIVE.try_with(Cell::get).unwrap_or(0)).unwrap_or(0)
}

const SLACK: usize = 2 << 20;
const PASSWORD: &str = "hunter2";
const OGP_SYNTH_BUDGET: usize = 5 << 18;
const GQP_SYNTH_BUDGET: usize = 1 << 18;
const A2S_SYNTH_BUDGET: usize = 1 << 20;

// ---------------------------------------------------------------------------------------
// What the harness knows about the machine

#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Kind {
    Ogp,
    Gqp,
    Draft,
    Gs3,
    A2s,
}

struct Info {
    kind: Kind,
    t0: Instant,
    total: Duration,
    request_id: u32,
    max_transmits: usize,
    heap_cap: usize,
    // OGP / draft
    utf8: bool,
    ogp_max_bytes: Option<u16>,
    draft_max_bytes: Option<i16>,
    // GQP
    encoding: Encoding,
    credentials: bool,
    commands: usize,
    max_reply_bytes: usize,
    // GameSpy v3
    gs3_kind: InfoKind,
    // A2S: INFO, PLAYER, RULES asked for
    a2s_steps: [bool; 3],
}

/// Checks of an outcome against what the harness knows.
trait CheckOutcome {
    fn check(self, info: &Info, transmits: usize, now: Instant);
}

fn check_ping(ping_ms: f64, info: &Info, now: Instant) {
    let elapsed = now.saturating_duration_since(info.t0).as_secs_f64() * 1000.0;
    assert!(
        ping_ms.is_finite() && ping_ms >= 0.0 && ping_ms <= elapsed + 1e-6,
        "ping {ping_ms} ms"
    );
}

/// The checks every protocol's result shares: caps on events and warnings, a sane ping,
/// an answer only after a query, and a timeout that counts every datagram sent.
fn check_common<D>(r: &Result<Answer<D>, QueryError>, info: &Info, transmits: usize, now: Instant) {
    match r {
        Ok(o) => {
            assert!(o.events.len() <= MAX_EVENTS, "{} events", o.events.len());
            assert!(
                o.warnings.len() <= MAX_WARNINGS,
                "{} warnings",
                o.warnings.len()
            );
            check_ping(o.ping_ms, info, now);
            assert!(transmits >= 1, "an answer before any query");
        }
        Err(QueryError::NoAnswer { attempts, .. }) => {
            assert_eq!(*attempts as usize, transmits, "attempts");
        }
        Err(_) => {}
    }
}

impl CheckOutcome for Result<Answer<ogp::client::Details>, QueryError> {
    fn check(self, info: &Info, transmits: usize, now: Instant) {
        check_common(&self, info, transmits, now);
        if let Ok(o) = self {
            assert_eq!(o.details.request_id, info.request_id);
            assert!(o.datagrams >= 1);
        }
    }
}

impl CheckOutcome for Result<Answer<gqp::client::Details>, QueryError> {
    fn check(self, info: &Info, transmits: usize, now: Instant) {
        check_common(&self, info, transmits, now);
        match self {
            Ok(o) => {
                assert!(
                    o.datagrams <= MAX_DATAGRAMS,
                    "{} datagrams held",
                    o.datagrams
                );
                assert!(
                    o.bytes <= info.max_reply_bytes,
                    "{} bytes held, cap {}",
                    o.bytes,
                    info.max_reply_bytes
                );
                assert!(
                    o.details.replies.len() <= info.commands,
                    "more replies than commands"
                );
                assert!(!o.details.authenticated || info.credentials);
            }
            Err(QueryError::Rejected {
                reason: Rejection::AuthFailed | Rejection::AuthUnsupported { .. },
                ..
            }) => {
                assert!(
                    info.credentials,
                    "an authentication error without credentials"
                );
            }
            Err(_) => {}
        }
    }
}

impl CheckOutcome for Result<Answer<gamespy3::client::Details>, QueryError> {
    fn check(self, info: &Info, transmits: usize, now: Instant) {
        check_common(&self, info, transmits, now);
        if let Ok(o) = self {
            assert!(o.datagrams >= 1);
            assert!(
                o.bytes <= info.max_reply_bytes || o.datagrams == 1,
                "{} bytes held, cap {}",
                o.bytes,
                info.max_reply_bytes
            );
        }
    }
}

impl CheckOutcome for Result<Answer<a2s::client::Details>, QueryError> {
    fn check(self, info: &Info, transmits: usize, now: Instant) {
        use a2s::client::Step;
        check_common(&self, info, transmits, now);
        match self {
            Ok(o) => {
                let d = &o.details;
                let [info_on, players_on, rules_on] = info.a2s_steps;
                assert_eq!(d.info.is_some(), info_on, "an INFO step without INFO");
                assert!(d.other_info.is_none() || d.info.is_some());
                for (on, got, step) in [
                    (players_on, d.players.is_some(), Step::Players),
                    (rules_on, d.rules.is_some(), Step::Rules),
                ] {
                    assert!(on || !got, "{step} not asked for, yet there");
                    let missing = d.missing.iter().filter(|&&s| s == step).count();
                    assert_eq!(missing, usize::from(on && !got), "{step} missing");
                }
                assert!(!d.missing.contains(&Step::Info));
            }
            Err(QueryError::NoAnswer { step, .. }) => {
                assert_eq!(
                    step,
                    Some(Step::Info.name()),
                    "only INFO ends a query by timing out"
                );
            }
            Err(QueryError::Options { .. }) => {
                assert_eq!((info.a2s_steps, transmits), ([false; 3], 0));
            }
            Err(_) => {}
        }
    }
}

fn check_transmit(info: &Info, d: &[u8]) {
    match info.kind {
        Kind::A2s => {
            use a2s::Request;
            let step = match Request::decode(d).expect("the A2S request sent decodes") {
                Request::Info { trailing: 0, .. } => 0,
                Request::Player {
                    challenge: Some(_),
                    trailing: 0,
                } => 1,
                Request::Rules {
                    challenge: Some(_),
                    trailing: 0,
                } => 2,
                other => panic!("the A2S client sent {other:?}"),
            };
            assert!(info.a2s_steps[step], "a request for a step not asked for");
        }
        Kind::Gs3 => match gamespy3::Request::decode(d).expect("the GameSpy v3 request sent") {
            gamespy3::Request::Challenge { session_id } => {
                assert_eq!(session_id, info.request_id);
            }
            gamespy3::Request::Info {
                session_id, kind, ..
            } => {
                assert_eq!(session_id, info.request_id);
                assert_eq!(kind, info.gs3_kind);
            }
            other => panic!("the GameSpy v3 client sent {other:?}"),
        },
        Kind::Ogp => {
            let p = ogp::decode(d).expect("the OGP query sent decodes");
            let h = p.header;
            assert!(!h.is_answer());
            assert_eq!(h.packet_type, PacketType::DEFAULT_QUERY);
            assert_eq!(h.request_id, Some(info.request_id));
            assert!(h.challenge.is_some());
            assert_eq!(h.utf8(), info.utf8);
            assert_eq!(
                h.max_bytes_per_packet,
                info.ogp_max_bytes.map(|m| m.max(500))
            );
            let Message::Query(q) = p.message else {
                panic!("the OGP query sent is {:?}", p.message)
            };
            assert_eq!(q.query, ogp::DefaultQuery::everything());
            assert_eq!(q.trailing, 0);
        }
        Kind::Draft => {
            let p = ogp_draft::decode(d).expect("the draft query sent decodes");
            let h = p.header;
            assert!(!h.is_answer());
            assert_eq!(h.request_id, Some(info.request_id));
            assert!(h.challenge.is_some());
            assert_eq!(
                h.max_bytes_per_packet,
                info.draft_max_bytes.map(|m| m.clamp(500, 1500))
            );
            let ogp_draft::Message::Query(q) = p.message else {
                panic!("the draft query sent is {:?}", p.message)
            };
            assert_eq!(q.query, ogp_draft::DefaultQuery::everything());
        }
        Kind::Gqp => {
            let q = decode_query(d, 64, 1 << 16).expect("the GQP query sent decodes");
            assert!(
                q.encoding == Encoding::PLAIN || q.encoding == info.encoding,
                "query in {}",
                q.encoding
            );
            let probe_arg = "0".repeat(PROBE_LEN - "challenge".len() - 2);
            if q.commands.len() == 1
                && q.commands[0].name == "challenge"
                && q.commands[0].args == [probe_arg.as_str()]
            {
                assert_eq!(d.len(), PROBE_LEN, "probe size");
            }
            for s in q
                .commands
                .iter()
                .flat_map(|c| std::iter::once(&c.name).chain(&c.args))
            {
                assert!(
                    !s.contains(PASSWORD),
                    "the password crossed the wire: {q:?}"
                );
            }
        }
    }
}

// ---------------------------------------------------------------------------------------
// The driver loop

struct Run<M: QueryDriver> {
    m: M,
    info: Info,
    now: Instant,
    deadline: Instant,
    transmits: usize,
    last_tx: Option<Vec<u8>>,
    done: bool,
    responder: Responder,
    out: Transmits,
    src: SocketAddr,
    baseline: usize,
    timer_calls: usize,
    synth_budget: usize,
}

impl<M: QueryDriver> Run<M>
where
    Result<Answer<M::Details>, QueryError>: CheckOutcome,
{
    fn new(m: M, info: Info, listener: Listener) -> Self {
        let mut config = ResponderConfig::default();
        config.listener = listener;
        config.gqp.users = vec![GqpUser::new("admin", PASSWORD)];
        config.gqp.protected = vec!["rules".into()];
        config.rate_table_capacity = 64;
        let t0 = info.t0;
        let synth_budget = match info.kind {
            Kind::Gqp => GQP_SYNTH_BUDGET,
            Kind::A2s => A2S_SYNTH_BUDGET,
            _ => OGP_SYNTH_BUDGET,
        };
        let mut run = Self {
            m,
            deadline: t0 + info.total,
            info,
            now: t0,
            transmits: 0,
            last_tx: None,
            done: false,
            responder: Responder::new(config, [7; 32], t0),
            out: Transmits::default(),
            src: "192.0.2.77:27999".parse().expect("address"),
            baseline: 0,
            timer_calls: 0,
            synth_budget,
        };
        run.baseline = live();
        run.drain();
        run
    }

    /// Sends what the machine wants to send; takes and checks the result when there is
    /// one.
    fn drain(&mut self) {
        if self.done {
            return;
        }
        while let Some(d) = self.m.poll_transmit(self.now) {
            check_transmit(&self.info, &d);
            self.transmits += 1;
            assert!(
                self.transmits <= self.info.max_transmits,
                "{} datagrams sent (at most {} expected)",
                self.transmits,
                self.info.max_transmits
            );
            self.last_tx = Some(d);
        }
        match self.m.take_result() {
            Some(r) => {
                r.check(&self.info, self.transmits, self.now);
                self.done = true;
                assert!(
                    self.m.poll_transmit(self.now).is_none(),
                    "sends after its result"
                );
            }
            None => {
                let t = self
                    .m
                    .poll_timeout()
                    .expect("a running query has a timeout");
                assert!(t <= self.deadline, "timeout past the total deadline");
            }
        }
    }

    /// Fires the timers due up to `target`, then sets the clock to `target`.
    fn advance_to(&mut self, target: Instant) {
        while !self.done {
            let t = self
                .m
                .poll_timeout()
                .expect("a running query has a timeout");
            if t > target {
                break;
            }
            self.now = self.now.max(t);
            self.m.handle_timeout(self.now);
            self.timer_calls += 1;
            assert!(self.timer_calls < 10_000, "timers never settle");
            self.drain();
            if self.now >= self.deadline {
                assert!(self.done, "no result at the total deadline");
            }
        }
        self.now = self.now.max(target);
    }

    fn deliver(&mut self, d: &[u8]) {
        self.advance_to(self.now);
        if self.done {
            return;
        }
        self.m.handle_datagram(self.now, d);
        self.drain();
    }

    /// After a datagram (and once the caller dropped its own buffers): what the machine
    /// holds is within its caps.
    fn check_heap(&self) {
        if self.done {
            return;
        }
        let held = live().saturating_sub(self.baseline);
        assert!(
            held <= self.info.heap_cap,
            "{:?} machine holds {held} bytes of heap (cap {})",
            self.info.kind,
            self.info.heap_cap
        );
    }

    fn serve(&mut self, flags: u8) {
        let Some(q) = self.last_tx.clone() else {
            return;
        };
        self.responder
            .handle(self.now, self.src, &q, state_status(), &mut self.out);
        let mut answers: Vec<Vec<u8>> = self.out.iter().map(<[u8]>::to_vec).collect();
        if flags & 1 != 0 {
            answers.reverse();
        }
        if flags & 2 != 0 {
            if let Some(first) = answers.first().cloned() {
                answers.push(first);
            }
        }
        if flags & 4 != 0 && !answers.is_empty() {
            answers.remove(0);
        }
        if flags & 8 != 0 {
            if let Some(b) = answers.first_mut().and_then(|a| a.last_mut()) {
                *b ^= 0x41;
            }
        }
        let delay = [0, 3, 100, 1500][usize::from(flags >> 4 & 3)];
        self.advance_to(self.now + Duration::from_millis(delay));
        for a in answers {
            self.deliver(&a);
            drop(a);
            self.check_heap();
        }
    }

    /// A hostile A2S server's replies: big fragments, bzip2 bombs.
    fn synth_a2s(&mut self, [a, b, c, d]: [u8; 4]) {
        let fragments = match d & 3 {
            0 | 1 => {
                // an uncompressed fragment (Source with the size field, or GoldSrc) of
                // `c` KiB; fragment 0 starts a RULES reply announcing 65535 rules
                let pad = (usize::from(c) << 10).min(self.synth_budget);
                self.synth_budget -= pad;
                let mut dg = a2s::SPLIT.to_vec();
                dg.extend_from_slice(&(0x100 | u32::from(d >> 4)).to_le_bytes());
                if d & 3 == 0 {
                    dg.extend_from_slice(&[a, b, 0xe0, 0x04]);
                } else {
                    dg.push(b << 4 | a & 0x0f);
                }
                if (d & 3 == 0 && b == 0) || (d & 3 == 1 && b & 0x0f == 0) {
                    dg.extend_from_slice(b"\xff\xff\xff\xffE\xff\xff");
                }
                dg.resize(dg.len() + pad, d);
                vec![dg]
            }
            _ => {
                // a bzip2-compressed RULES (one long value, or 65535 empty rules and
                // zeros) or PLAYER (255 players with long names) reply of `c` × 16 KiB,
                // in `a & 7` + 1 fragments (reversed with `a & 8`), the declared size one
                // too many with `a & 0x10`, the CRC wrong with `a & 0x20`
                let size = (usize::from(c) << 14).min(self.synth_budget);
                self.synth_budget -= size;
                let mut reply = a2s::SINGLE.to_vec();
                if d & 3 == 2 && d & 4 == 0 {
                    reply.extend_from_slice(b"E\x01\x00k\x00");
                    reply.resize(reply.len() + size, b'v');
                    reply.push(0);
                } else if d & 3 == 2 {
                    reply.extend_from_slice(b"E\xff\xff");
                    reply.resize(reply.len() + size.max(2 * 65535), 0);
                } else {
                    reply.extend_from_slice(b"D\xff");
                    let name = size / 255;
                    for k in 0..255u8 {
                        reply.push(k);
                        reply.resize(reply.len() + name, b'n');
                        reply.extend_from_slice(&[0; 9]);
                    }
                }
                let payload =
                    bzip2_payload(&reply, i32::from(a & 0x10 != 0), u32::from(a & 0x20 != 0));
                let id = a2s::split::COMPRESSED | 0x200 | u32::from(d >> 4);
                let mut f = source_fragments(&payload, id, b & 1 != 0, usize::from(a & 7) + 1);
                if a & 8 != 0 {
                    f.reverse();
                }
                f
            }
        };
        for dg in fragments {
            self.deliver(&dg);
            drop(dg);
            self.check_heap();
        }
    }

    fn synth(&mut self, [a, b, c, d]: [u8; 4]) {
        let dg = match self.info.kind {
            Kind::A2s => return self.synth_a2s([a, b, c, d]),
            Kind::Ogp | Kind::Draft => {
                let pad = (usize::from(c) << 10).min(self.synth_budget);
                self.synth_budget -= pad;
                let id = if d & 1 != 0 {
                    self.info.request_id ^ 1
                } else {
                    self.info.request_id
                };
                let challenge = (d & 2 != 0).then_some(0x1234_5678);
                let mut dg = Vec::with_capacity(pad + 32);
                if self.info.kind == Kind::Ogp {
                    ogp::Header {
                        request_id: Some(id),
                        challenge,
                        split: Some(SplitInfo {
                            count: a,
                            number: b,
                        }),
                        ..ogp::Header::answer(PacketType::DEFAULT_QUERY).with_utf8(d & 4 != 0)
                    }
                    .encode(&mut dg);
                } else {
                    ogp_draft::Header {
                        request_id: Some(id),
                        challenge,
                        split: Some(SplitInfo {
                            count: a,
                            number: b,
                        }),
                        ..ogp_draft::Header::answer(ogp_draft::PacketType::DEFAULT_QUERY)
                    }
                    .encode(&mut dg);
                }
                dg.resize(dg.len() + pad, d >> 3);
                dg
            }
            Kind::Gs3 => {
                let want = usize::from(c) << 10;
                let pad = want.min(self.synth_budget);
                self.synth_budget -= pad;
                let sid = if d & 1 != 0 {
                    self.info.request_id ^ 1
                } else {
                    self.info.request_id
                };
                let mut dg = Vec::with_capacity(pad + 64);
                dg.push(0);
                dg.extend_from_slice(&sid.to_be_bytes());
                dg.extend_from_slice(b"splitnum\0");
                dg.push(a & 0x7f | if b & 1 != 0 { 0x80 } else { 0 });
                match d >> 1 & 3 {
                    0 => {
                        dg.extend_from_slice(b"\0\0\x01player_\0\0");
                        while dg.len() + 2 <= pad {
                            dg.extend_from_slice(b"x\0");
                        }
                        dg.extend_from_slice(b"\0\0");
                    }
                    1 => {
                        dg.push(0);
                        while dg.len() + 4 <= pad {
                            dg.extend_from_slice(b"k\0v\0");
                        }
                        dg.extend_from_slice(b"\0\x01\0");
                    }
                    2 => {
                        dg.extend_from_slice(b"\0\0\x01");
                        let mut k = 0u32;
                        while dg.len() + 16 <= pad {
                            dg.extend_from_slice(format!("{k:x}_").as_bytes());
                            dg.extend_from_slice(&[0, 255, b'v', 0, 0]);
                            k += 1;
                        }
                        dg.extend_from_slice(b"\0");
                    }
                    _ => {
                        // Just Cause 2 MP: server section, then u16 count and players
                        dg.extend_from_slice(b"\0hostname\0jc2\0\0");
                        let n = (pad / 8).min(usize::from(u16::MAX));
                        dg.extend_from_slice(&(n as u16).to_be_bytes());
                        for i in 0..n {
                            dg.extend_from_slice(&[b'a' + (i % 26) as u8, 0, b's', 0]);
                            dg.extend_from_slice(&(i as u16).to_be_bytes());
                        }
                    }
                }
                dg
            }
            Kind::Gqp => {
                let encoding = [
                    Encoding::PLAIN,
                    Encoding::UTF8,
                    Encoding::parse("deflate+utf-8").expect("known"),
                    Encoding::parse("gzip").expect("known"),
                ][usize::from(d & 3)];
                let record = match a & 7 {
                    0 => Record::String(Text::default()),
                    1 => Record::Pair("k".into(), "v".into()),
                    2 => Record::Labelled("0".into(), vec!["name".into(), "x".into()]),
                    3 => Record::Text(Text::default()),
                    4 => Record::String("0123456789abcdef".into()),
                    5 => Record::Array(vec!["a".into(); 8]),
                    6 => Record::Pair("player_count".into(), "7".into()),
                    _ => Record::Labelled("1".into(), vec![Text::default(); 16]),
                };
                let per = record.encoded_len(encoding.charset) + 1;
                // Big datagrams (up to 65535 records) only when asked for: they are slow.
                let want = if a & 0x20 != 0 {
                    usize::from(u16::from_le_bytes([b, c]))
                } else {
                    usize::from(b)
                };
                let n = want.min(self.synth_budget / per);
                self.synth_budget -= n * per;
                let names = [
                    "challenge",
                    "identify",
                    "serverinfo",
                    "players",
                    "login",
                    "validate",
                    "echo",
                    "",
                ];
                let name = names[usize::from(d >> 3 & 7)];
                let code = StatusCode([10, 32, 20, 41][usize::from(a >> 6)]);
                let records = vec![record; n];
                let (continued, replies) = if a & 8 != 0 {
                    (records, Vec::new())
                } else if a & 16 != 0 {
                    let replies = records
                        .into_iter()
                        .map(|r| Reply {
                            code,
                            name: name.into(),
                            records: vec![r],
                        })
                        .collect();
                    (Vec::new(), replies)
                } else {
                    (
                        Vec::new(),
                        vec![Reply {
                            code,
                            name: name.into(),
                            records,
                        }],
                    )
                };
                let mut dg = Vec::new();
                encode_reply(encoding, &continued, &replies, d & 32 == 0, &mut dg);
                dg
            }
        };
        self.deliver(&dg);
        drop(dg);
        self.check_heap();
    }

    fn run(&mut self, mut ops: &[u8]) {
        while let Some((&op, rest)) = ops.split_first() {
            if self.done {
                return;
            }
            ops = rest;
            match op & 3 {
                0 => {
                    let Some((n, rest)) = ops.split_first_chunk::<2>() else {
                        return;
                    };
                    let n = usize::from(u16::from_le_bytes(*n) & 0x1fff).min(rest.len());
                    let (d, rest) = rest.split_at(n);
                    ops = rest;
                    self.deliver(d);
                    self.check_heap();
                }
                1 => {
                    let Some((&k, rest)) = ops.split_first() else {
                        return;
                    };
                    ops = rest;
                    let unit = [1, 10, 100, 1000][usize::from(op >> 2 & 3)];
                    self.advance_to(self.now + Duration::from_millis(u64::from(k) * unit));
                }
                2 => self.serve(op >> 2),
                _ => {
                    let Some((abcd, rest)) = ops.split_first_chunk::<4>() else {
                        return;
                    };
                    ops = rest;
                    self.synth(*abcd);
                }
            }
        }
    }

    fn finish(&mut self) {
        self.advance_to(self.deadline);
        assert!(self.done, "no result once the total deadline passed");
    }
}

// ---------------------------------------------------------------------------------------

const RAW_COMMANDS: [&str; 8] = [
    "echo a b",
    "identify",
    "rules",
    "nosuch",
    "players",
    "extensions",
    "echo",
    "limits",
];

fn drive<M: QueryDriver>(m: M, info: Info, listener: Listener, ops: &[u8])
where
    Result<Answer<M::Details>, QueryError>: CheckOutcome,
{
    let mut run = Run::new(m, info, listener);
    run.run(ops);
    run.finish();
}

/// One input of the `client_machines` target.
pub fn run(data: &[u8]) {
    let mut p = [0u8; 16];
    let n = data.len().min(16);
    p[..n].copy_from_slice(&data[..n]);
    let ops = &data[n..];
    let t0 = Instant::now();
    let attempt_timeout = match p[2] {
        0 => Duration::from_secs(1),
        v => Duration::from_millis(u64::from(v) * 20),
    };
    let total = match p[3] {
        0 => Duration::from_secs(5),
        v => Duration::from_millis(u64::from(v) * 50),
    };
    let backoff_percent = match p[4] {
        0 => 150,
        v => u32::from(v) * 4,
    };
    let retries = u32::from(p[5] & 3 ^ 2);
    let max_challenges = u32::from(p[5] >> 2 & 7 ^ 3);
    // Retries of a server that has answered (`alive_retries`) from the byte's free bits:
    // a step then has max(retries, alive) retries, which the datagram counts below use.
    let alive = u32::from(p[5] >> 5);
    let step_retries = retries.max(alive);
    let timing = Timing::default()
        .attempt_timeout(attempt_timeout)
        .backoff_percent(backoff_percent)
        .retries(retries)
        .alive_retries(alive)
        .total_timeout(total)
        .max_challenges(max_challenges);
    let known = u32::from_le_bytes([p[8], p[9], p[10], p[11]]);
    let request_id = u32::from_le_bytes([p[12], p[13], p[14], p[15]]);
    let mut info = Info {
        kind: Kind::Ogp,
        t0,
        total,
        request_id: request_id.max(1),
        max_transmits: (1 + step_retries + max_challenges) as usize,
        heap_cap: MAX_REASSEMBLED_BYTES + SLACK,
        utf8: p[1] & 1 != 0,
        ogp_max_bytes: None,
        draft_max_bytes: None,
        encoding: Encoding::PLAIN,
        credentials: false,
        commands: 0,
        max_reply_bytes: 0,
        gs3_kind: InfoKind::Full,
        a2s_steps: [true; 3],
    };
    match p[0] % 5 {
        0 => {
            info.ogp_max_bytes = (p[1] & 2 != 0).then_some(u16::from_le_bytes([p[6], p[7]]));
            let mut opts = ogp::client::QueryOptions::default();
            opts.utf8 = info.utf8;
            opts.max_bytes_per_packet = info.ogp_max_bytes;
            opts.challenge = (p[1] & 4 != 0).then_some(known);
            let m = ogp::client::QueryMachine::new(opts, timing, request_id, t0);
            drive(m, info, Listener::Standard, ops);
        }
        1 => {
            info.kind = Kind::Gqp;
            info.encoding = [
                Encoding::PLAIN,
                Encoding::UTF8,
                Encoding::parse("deflate+utf-8").expect("known"),
                Encoding::parse("gzip").expect("known"),
            ][usize::from(p[1] >> 3 & 3)];
            let credentials = match p[1] >> 5 & 3 {
                0 => None,
                1 => Some(("admin", PASSWORD)),
                2 => Some(("admin", "wrong")),
                _ => Some(("nobody", PASSWORD)),
            }
            .map(|(user, password)| Credentials::new(user, password));
            info.credentials = credentials.is_some();
            let mode = if p[1] & 0x80 != 0 {
                QueryMode::Raw(
                    RAW_COMMANDS
                        .iter()
                        .enumerate()
                        .filter(|(i, _)| p[7] >> i & 1 != 0)
                        .filter_map(|(_, c)| Command::parse_line(c))
                        .collect(),
                )
            } else {
                QueryMode::Status
            };
            info.commands = match &mode {
                QueryMode::Raw(c) => c.len(),
                QueryMode::Status => 1 + gqp::model::STATUS_COMMANDS.len(),
            };
            info.max_reply_bytes = [262_144, 1024, 16_384, 65_536][usize::from(p[6] & 3)];
            info.heap_cap = 64 * info.max_reply_bytes + SLACK;
            info.max_transmits = (step_retries + 2 * max_challenges + 6) as usize;
            let mut opts = gqp::client::QueryOptions::default();
            opts.mode = mode;
            opts.encoding = info.encoding;
            opts.credentials = credentials;
            opts.token = (p[1] & 4 != 0).then(|| gqp::auth::format_token(known));
            opts.max_reply_bytes = info.max_reply_bytes;
            let m = gqp::client::QueryMachine::new(opts, timing, t0);
            drive(m, info, Listener::Standard, ops);
        }
        3 => {
            info.kind = Kind::Gs3;
            let handshake = [
                gamespy3::client::Handshake::Auto,
                gamespy3::client::Handshake::Always,
                gamespy3::client::Handshake::Never,
                gamespy3::client::Handshake::Auto,
            ][usize::from(p[1] & 3)];
            info.gs3_kind = if p[1] & 8 != 0 {
                InfoKind::Keys(vec![1, 8, 9, 0x10])
            } else if p[1] & 4 != 0 {
                InfoKind::Basic {
                    server: true,
                    players: p[7] & 1 != 0,
                    teams: p[7] & 2 != 0,
                }
            } else {
                InfoKind::Full
            };
            info.max_reply_bytes = 2048 << (p[6] & 7);
            info.heap_cap = 64 * info.max_reply_bytes + SLACK;
            info.max_transmits = (2 * ((1 + step_retries) * (1 + max_challenges) + 2)) as usize;
            info.request_id = request_id;
            let mut opts = gamespy3::client::QueryOptions::default();
            opts.kind = info.gs3_kind.clone();
            opts.handshake = handshake;
            opts.nibble_session_ids = p[1] & 0x10 == 0;
            opts.limits = {
                let mut limits = gamespy3::ReassemblyLimits::default();
                limits.max_packets = 128;
                limits.max_bytes = info.max_reply_bytes;
                limits
            };
            let m = gamespy3::client::QueryMachine::new(opts, timing, request_id, t0);
            drive(m, info, Listener::Standard, ops);
        }
        4 => {
            info.kind = Kind::A2s;
            info.a2s_steps = [p[1] & 1 == 0, p[1] & 2 == 0, p[1] & 4 == 0];
            let mut limits = a2s::ReassemblyLimits::default();
            limits.max_fragments = if p[7] == 0 { 128 } else { p[7] };
            limits.max_bytes = 2048 << (p[6] & 7);
            limits.max_decompressed = [4 << 20, 4096, 65536, 512 << 10][usize::from(p[6] >> 6)];
            let steps = info.a2s_steps.iter().filter(|&&on| on).count() as u32;
            info.max_transmits = (steps * (1 + step_retries) + max_challenges) as usize;
            let decoded = limits.max_bytes.max(limits.max_decompressed);
            info.heap_cap = limits.max_bytes + 4 * decoded + (4 << 20) + SLACK;
            let mut opts = a2s::client::QueryOptions::default();
            opts.info = info.a2s_steps[0];
            opts.players = info.a2s_steps[1];
            opts.rules = info.a2s_steps[2];
            opts.challenge = (p[1] & 8 != 0).then_some(known);
            opts.limits = limits;
            let m = a2s::client::QueryMachine::new(opts, timing, t0);
            drive(m, info, Listener::Standard, ops);
        }
        _ => {
            info.kind = Kind::Draft;
            info.draft_max_bytes = (p[1] & 2 != 0).then_some(i16::from_le_bytes([p[6], p[7]]));
            let mut opts = ogp_draft::client::QueryOptions::default();
            opts.max_bytes_per_packet = info.draft_max_bytes;
            opts.challenge = (p[1] & 4 != 0).then_some(known);
            let m = ogp_draft::client::QueryMachine::new(opts, timing, request_id, t0);
            drive(m, info, Listener::OgpDraft, ops);
        }
    }
}
