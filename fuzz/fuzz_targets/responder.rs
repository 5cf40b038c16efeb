//! The shared sans-IO responder: a sequence of datagrams from a few sources, over time,
//! through one `Responder` per listener kind (`Listener::Standard`: OGP v1.01, Valve A2S
//! (default settings; `a2s_request` covers the others) and GQP;
//! `Listener::OgpDraft`: the v0.02 draft), both answering from `tests/data/state.json`
//! with a fixed secret.
//!
//! Input format, repeated until the input ends:
//!   `[s: u8] [dt: u8] [n: u16 LE] [datagram: (n & 0x7ff) bytes, fewer if the input ends]`
//! * `s & 7` picks the source (two IPv4 ports of one address and its IPv4-mapped IPv6
//!   form, another IPv4 address, two IPv6 addresses of one /64, an address the ban hook
//!   rejects (OGP Error 0 / draft Banned / A2S silence) and one it ignores);
//! * `s & 8` asks the harness to make the datagram prove its source: a valid challenge
//!   (OGP, draft) is written into its header or (A2S INFO, PLAYER, RULES) after its
//!   type byte and payload, or a valid `challenge RS <token>` command
//!   (GQP) put first, and every `validate` gets the right HMAC for the configured user;
//! * time advances by `dt` × (1 ms, 50 ms, 1 s or 20 s by `s >> 6`) before the datagram
//!   (challenge keys rotate every 60 s, so old challenges expire).
//!
//! Whether a datagram proves its source is decided independently of the responder, with
//! a second `ChallengeKeys` built from the same secret (the fuzzer can learn valid
//! challenges through comparison tracing, so the `s & 8` flag alone is not the truth).
//!
//! Asserts: no panic; the outcome matches the protocol the first bytes name (Unknown,
//! rate-limited and banned datagrams get nothing); the stats add up; and per protocol:
//! * OGP: every datagram sent decodes with `ogp::decode` as an answer with the query's
//!   bUTF8 and (non-zero) RequestID, any challenge in it is the one the keys issue now,
//!   an Error 3 copy is a query that proves its source; without a valid challenge: at most
//!   one datagram of at most `max(16, query + 20)` bytes and never an answer; answers are
//!   one datagram of at most 8192 bytes or split packets of at most MaxBytesPerPacket
//!   (65536 in all) that reassemble to a body `decode_answer_body` reads.
//! * GQP: every datagram decodes with `decode_reply`, ETB blocks then one EOT; at most 32
//!   datagrams of 1400 bytes, 32768 in all; one reply per command answered; `proven` is
//!   the independent verdict; without a proof: one datagram, never more bytes than the
//!   query.
//! * Draft: every datagram decodes with `ogp_draft::decode` as an answer; challenges are
//!   the current ones; without a valid challenge: one datagram of at most
//!   `min(18, query + 4)` bytes and never an answer; answers within 8192 bytes unsplit,
//!   or MaxBytesPerPacket (500–1500) per packet and 65536 in all, reassembling to a body
//!   the draft's `decode_answer_body` reads.
//! * A2S: what `ogp_fuzz::a2s::check_answer` says (module docs of `a2s::responder`:
//!   ignored and banned requests get nothing; without a valid challenge at most 9 bytes
//!   and never PLAYER, RULES or a split; challenges are the current ones; INFO is the
//!   fitted one in one datagram; PLAYER and RULES are one datagram or Source-layout
//!   fragments that reassemble to the status's players or rules).

use std::net::{IpAddr, SocketAddr};
use std::sync::Arc;
use std::time::{Duration, Instant};

use ogp_fuzz::a2s::{self as a2s_check, Answered};
use ogp_fuzz::{records, state_status};
use ogp_proto::a2s::{self, responder::A2sConfig};
use ogp_proto::gqp::responder::{GqpConfig, GqpOutcome, GqpUser};
use ogp_proto::gqp::{self, auth, decode_query, decode_reply, encode_query, Command, Encoding};
use ogp_proto::guard::ChallengeKeys;
use ogp_proto::internals::protocol_id;
use ogp_proto::ogp::responder::OgpOutcome;
use ogp_proto::ogp::{self, ErrorValue, Message, Pushed, Reassembler};
use ogp_proto::ogp_draft::{self, responder::DraftOutcome};
use ogp_proto::responder::{
    BanAction, Listener, Outcome, Responder, ResponderConfig, Stats, Transmits,
};

const SECRET: [u8; 32] = [
    0x3c, 0x91, 0x0e, 0x5b, 0xd2, 0x47, 0xa8, 0x13, 0x6f, 0xc0, 0x29, 0x84, 0xfb, 0x52, 0x1d, 0xe6,
    0x70, 0x0b, 0x9a, 0x35, 0xcc, 0x61, 0x18, 0xaf, 0x42, 0xd7, 0x8e, 0x23, 0xb4, 0x5d, 0xf8, 0x06,
];
const PERIOD: Duration = Duration::from_secs(60);
const USER: &str = "admin";
const PASSWORD: &str = "hunter2";
const REJECTED: [u8; 4] = [203, 0, 113, 9];
const IGNORED: [u8; 4] = [203, 0, 113, 10];
const SOURCES: [&str; 8] = [
    "192.0.2.1:27005",
    "192.0.2.1:40000",
    "[::ffff:192.0.2.1]:1",
    "198.51.100.7:5",
    "[2001:db8::1]:27015",
    "[2001:db8::2]:27016",
    "203.0.113.9:27005",
    "203.0.113.10:27005",
];
const UNITS_MS: [u64; 4] = [1, 50, 1000, 20_000];

fn ban(ip: IpAddr) -> BanAction {
    match ip {
        IpAddr::V4(v4) if v4.octets() == REJECTED => BanAction::Reject,
        IpAddr::V4(v4) if v4.octets() == IGNORED => BanAction::Ignore,
        _ => BanAction::Allow,
    }
}

fn config(listener: Listener) -> ResponderConfig {
    let mut cfg = ResponderConfig::default();
    cfg.listener = listener;
    cfg.ogp.colors = true;
    cfg.ogp.player_addresses = true;
    cfg.gqp.users = vec![GqpUser::new(USER, PASSWORD)];
    cfg.gqp.protected = vec!["rules".into()];
    cfg.gqp.player_addresses = true;
    cfg.rate_table_capacity = 64;
    cfg.challenge_period = PERIOD;
    cfg.ban = Some(Arc::new(ban));
    cfg
}

/// The responder's challenge keys, rebuilt from the same secret and start.
fn mirror_keys(t0: Instant) -> ChallengeKeys {
    let mut k = [0u8; 16];
    k.copy_from_slice(&SECRET[..16]);
    ChallengeKeys::new(k, PERIOD, t0)
}

// ---------------------------------------------------------------------------------------
// Making a datagram prove its source

fn prove_ogp(d: &[u8], c: u32) -> Option<Vec<u8>> {
    let (h, body_at) = ogp::Header::decode(d).ok()?;
    let mut out = Vec::with_capacity(d.len() + 4);
    ogp::Header {
        challenge: Some(c),
        ..h.header
    }
    .encode(&mut out);
    out.extend_from_slice(d.get(body_at..)?);
    Some(out)
}

fn prove_draft(d: &[u8], c: u32) -> Option<Vec<u8>> {
    let (h, at) = ogp_draft::decode_header(d).ok()?;
    let mut out = Vec::with_capacity(d.len() + 4);
    ogp_draft::Header {
        challenge: Some(c),
        ..h
    }
    .encode(&mut out);
    out.extend_from_slice(d.get(at..)?);
    Some(out)
}

fn prove_gqp(d: &[u8], keys: &mut ChallengeKeys, now: Instant, ip: IpAddr) -> Option<Vec<u8>> {
    let cfg = GqpConfig::default();
    let mut q = decode_query(d, cfg.max_commands, cfg.max_decoded_query_bytes).ok()?;
    let token = auth::issue_token(keys, now, ip);
    match q
        .commands
        .iter_mut()
        .find(|c| c.name == "challenge" && c.args.len() == 1)
    {
        Some(c) => c.args[0] = token,
        None => q.commands.insert(0, Command::new("challenge", [token])),
    }
    for c in q.commands.iter_mut().filter(|c| c.name == "validate") {
        if let [user, response] = c.args.as_mut_slice() {
            let challenge = auth::issue_login_challenge(keys, now, ip, user);
            let password = if user == USER { PASSWORD } else { "" };
            *response = auth::login_response(password, &challenge);
        }
    }
    let mut out = Vec::new();
    encode_query(&q, &mut out);
    Some(out)
}

// ---------------------------------------------------------------------------------------
// Whether a datagram proves its source (independently of the responder)

fn ogp_verified(d: &[u8], keys: &mut ChallengeKeys, now: Instant, ip: IpAddr) -> bool {
    ogp::Header::decode(d)
        .ok()
        .and_then(|(h, _)| h.header.challenge)
        .is_some_and(|c| keys.verify(now, protocol_id::OGP, ip, c))
}

fn draft_verified(d: &[u8], keys: &mut ChallengeKeys, now: Instant, ip: IpAddr) -> bool {
    ogp_draft::decode_header(d)
        .ok()
        .and_then(|(h, _)| h.challenge)
        .is_some_and(|c| keys.verify(now, protocol_id::OGP_DRAFT, ip, c))
}

fn gqp_verified(d: &[u8], keys: &mut ChallengeKeys, now: Instant, ip: IpAddr) -> bool {
    let cfg = GqpConfig::default();
    let Ok(q) = decode_query(d, cfg.max_commands, cfg.max_decoded_query_bytes) else {
        return false;
    };
    q.commands.iter().any(|c| {
        c.name == "challenge"
            && matches!(c.args.as_slice(), [t] if auth::verify_token(keys, now, ip, t))
    })
}

// ---------------------------------------------------------------------------------------
// Checks of what was sent

struct Ctx<'a> {
    keys: &'a mut ChallengeKeys,
    now: Instant,
    ip: IpAddr,
}

fn check_ogp(o: OgpOutcome, d: &[u8], out: &[Vec<u8>], verified: bool, cx: &mut Ctx<'_>) {
    let total: usize = out.iter().map(Vec::len).sum();
    if !verified {
        assert!(
            out.len() <= 1,
            "{} datagrams to an unverified source: {o:?}",
            out.len()
        );
        assert!(
            total <= (d.len() + 20).max(16),
            "{total} bytes for a {}-byte query from an unverified source: {o:?}",
            d.len()
        );
        assert!(
            !matches!(o, OgpOutcome::Answer { .. }),
            "answer without challenge"
        );
    }
    if out.is_empty() {
        return;
    }
    let (qh, _) = ogp::decode_query_header(d).expect("answered, so the header decodes");
    let current = cx.keys.issue(cx.now, protocol_id::OGP, cx.ip);
    let mut packets = Vec::with_capacity(out.len());
    for a in out {
        let p = match ogp::decode(a) {
            Ok(p) => p,
            Err(e) => panic!("OGP datagram sent does not decode: {e} ({o:?})"),
        };
        let h = p.header;
        assert!(h.is_answer());
        assert_eq!(h.utf8(), qh.utf8(), "bUTF8 not echoed");
        if let Some(id) = qh.request_id.filter(|&id| id != 0) {
            assert_eq!(h.request_id, Some(id), "RequestID not echoed");
        }
        if let Some(c) = h.challenge {
            assert_eq!(c, current, "challenge in an answer is not the current one");
        }
        if let Message::Error(e) = &p.message {
            assert_eq!(out.len(), 1);
            if e.value == ErrorValue::INVALID_CHALLENGE {
                assert_eq!(h.challenge, Some(current), "Error 3 without the challenge");
                if let Some(copy) = e.resend_copy() {
                    assert!(
                        ogp_verified(copy, cx.keys, cx.now, cx.ip),
                        "Error 3 copy does not prove the source"
                    );
                    assert!(ogp::decode_query_header(copy).is_ok_and(|(c, _)| !c.is_answer()));
                }
            }
        }
        packets.push(p);
    }
    let OgpOutcome::Answer { datagrams, .. } = o else {
        return;
    };
    assert_eq!(datagrams, out.len());
    let split_at = qh
        .max_bytes_per_packet
        .filter(|&m| m != 0)
        .map(|m| usize::from(m.min(8192)));
    match split_at {
        None => {
            assert_eq!(out.len(), 1);
            assert!(total <= 8192, "unsplit answer of {total} bytes");
            assert!(matches!(packets[0].message, Message::Answer(_)));
        }
        Some(m) => {
            assert!(total <= 65536, "split answer of {total} bytes");
            assert!(
                out.iter().all(|p| p.len() <= m),
                "packet over MaxBytesPerPacket {m}"
            );
            if out.len() == 1 {
                assert!(matches!(packets[0].message, Message::Answer(_)));
                return;
            }
            let mut r = Reassembler::new();
            let mut done = None;
            for p in &packets {
                let Message::Fragment { body } = &p.message else {
                    panic!("split packet is {:?}", p.message)
                };
                match r.push(&p.header, body) {
                    Ok(Pushed::Complete { header, body }) => done = Some((header, body)),
                    Ok(Pushed::Incomplete) => {}
                    other => panic!("split packets do not reassemble: {other:?}"),
                }
            }
            let (header, body) = done.expect("every packet sent");
            if let Err(e) = ogp::decode_answer_body(&body, header.utf8()) {
                panic!("reassembled answer does not decode: {e}");
            }
        }
    }
}

fn check_gqp(o: GqpOutcome, d: &[u8], out: &[Vec<u8>], verified: bool) {
    let total: usize = out.iter().map(Vec::len).sum();
    if !verified {
        assert!(
            out.len() <= 1,
            "{} datagrams to an unproven source: {o:?}",
            out.len()
        );
        assert!(
            total <= d.len(),
            "{total} bytes for a {}-byte query from an unproven source: {o:?}",
            d.len()
        );
    }
    let cfg = GqpConfig::default();
    assert!(out.len() <= cfg.max_datagrams);
    assert!(total <= cfg.max_reply_bytes);
    let query = decode_query(d, cfg.max_commands, cfg.max_decoded_query_bytes).ok();
    let mut replies = 0usize;
    for (i, a) in out.iter().enumerate() {
        assert!(
            a.len() <= cfg.max_datagram_bytes,
            "reply datagram of {} bytes",
            a.len()
        );
        let rd = match decode_reply(a, 1 << 20) {
            Ok(rd) => rd,
            Err(e) => panic!("GQP datagram sent does not decode: {e} ({o:?})"),
        };
        assert_eq!(rd.last, i + 1 == out.len(), "EOT only on the last datagram");
        if i == 0 {
            assert!(
                rd.continued.is_empty(),
                "the first datagram continues nothing"
            );
        }
        replies += rd.replies.len();
        let expected = match (&o, &query) {
            (GqpOutcome::Answer { .. }, Some(q)) => q.encoding,
            _ => Encoding::PLAIN,
        };
        assert_eq!(rd.encoding, expected, "reply encoding ({o:?})");
    }
    match o {
        GqpOutcome::Answer {
            datagrams,
            commands,
            proven,
        } => {
            assert_eq!(datagrams, out.len());
            assert_eq!(
                proven, verified,
                "responder and harness disagree on the proof"
            );
            assert_eq!(replies, commands, "one reply per command answered");
            let q = query.expect("answered, so the query decodes");
            assert!(commands <= q.commands.len());
            if verified {
                assert_eq!(commands, q.commands.len());
            }
        }
        GqpOutcome::QueryError(_) | GqpOutcome::ProofRequired => {
            assert_eq!((out.len(), replies), (1, 1));
        }
        _ => {}
    }
}

fn check_draft(o: DraftOutcome, d: &[u8], out: &[Vec<u8>], verified: bool, cx: &mut Ctx<'_>) {
    let total: usize = out.iter().map(Vec::len).sum();
    if !verified {
        assert!(
            out.len() <= 1,
            "{} datagrams to an unverified source: {o:?}",
            out.len()
        );
        assert!(
            total <= 18 && total <= d.len() + 4,
            "{total} bytes for a {}-byte query from an unverified source: {o:?}",
            d.len()
        );
        assert!(
            !matches!(o, DraftOutcome::Answer { .. }),
            "answer without challenge"
        );
    }
    if out.is_empty() {
        return;
    }
    let (qh, _) = ogp_draft::decode_header(d).expect("answered, so the header decodes");
    let current = cx.keys.issue(cx.now, protocol_id::OGP_DRAFT, cx.ip);
    let mut packets = Vec::with_capacity(out.len());
    for a in out {
        let p = match ogp_draft::decode(a) {
            Ok(p) => p,
            Err(e) => panic!("draft datagram sent does not decode: {e} ({o:?})"),
        };
        assert!(p.header.is_answer());
        if let Some(id) = qh.request_id {
            assert_eq!(p.header.request_id, Some(id), "RequestID not echoed");
        }
        if let Some(c) = p.header.challenge {
            assert_eq!(c, current, "challenge in an answer is not the current one");
        }
        packets.push(p);
    }
    let DraftOutcome::Answer { datagrams, .. } = o else {
        assert_eq!(out.len(), 1);
        return;
    };
    assert_eq!(datagrams, out.len());
    match qh.max_bytes_per_packet {
        None => {
            assert_eq!(out.len(), 1);
            assert!(total <= 8192, "unsplit answer of {total} bytes");
            assert!(matches!(packets[0].message, ogp_draft::Message::Answer(_)));
        }
        Some(m) => {
            let m = usize::try_from(m.clamp(500, 1500)).unwrap_or(1500);
            assert!(total <= 65536, "split answer of {total} bytes");
            assert!(
                out.iter().all(|p| p.len() <= m),
                "packet over MaxBytesPerPacket {m}"
            );
            if out.len() == 1 {
                assert!(matches!(packets[0].message, ogp_draft::Message::Answer(_)));
                return;
            }
            let mut r = Reassembler::<ogp_draft::Header>::default();
            let mut done = None;
            for p in &packets {
                let ogp_draft::Message::Fragment { body } = &p.message else {
                    panic!("split packet is {:?}", p.message)
                };
                let s = p.header.split.expect("a fragment is split");
                match r.push_part(p.header, p.header.request_id, s, body) {
                    Ok(Pushed::Complete { body, .. }) => done = Some(body),
                    Ok(Pushed::Incomplete) => {}
                    other => panic!("split packets do not reassemble: {other:?}"),
                }
            }
            let body = done.expect("every packet sent");
            if let Err(e) = ogp_draft::decode_answer_body(&body) {
                panic!("reassembled draft answer does not decode: {e}");
            }
        }
    }
}

// ---------------------------------------------------------------------------------------

struct Side {
    responder: Responder,
    listener: Listener,
    a2s: A2sConfig,
    out: Transmits,
    sent: u64,
    sent_bytes: u64,
    received: u64,
}

impl Side {
    fn new(listener: Listener, t0: Instant) -> Self {
        Self {
            responder: Responder::new(config(listener), SECRET, t0),
            listener,
            a2s: config(listener).a2s,
            out: Transmits::default(),
            sent: 0,
            sent_bytes: 0,
            received: 0,
        }
    }

    fn handle(
        &mut self,
        now: Instant,
        src: SocketAddr,
        raw: &[u8],
        prove: bool,
        keys: &mut ChallengeKeys,
    ) {
        let ip = src.ip().to_canonical();
        let ogp_like = ogp::is_ogp(raw);
        let proved = if !prove {
            None
        } else if ogp_like && self.listener == Listener::OgpDraft {
            prove_draft(raw, keys.issue(now, protocol_id::OGP_DRAFT, ip))
        } else if ogp_like {
            prove_ogp(raw, keys.issue(now, protocol_id::OGP, ip))
        } else if a2s::is_a2s(raw) {
            a2s_check::prove(raw, keys.issue(now, protocol_id::A2S, ip))
        } else {
            prove_gqp(raw, keys, now, ip)
        };
        let d = proved.as_deref().unwrap_or(raw);
        let status = state_status();
        let o = self.responder.handle(now, src, d, status, &mut self.out);
        let out: Vec<Vec<u8>> = self.out.iter().map(<[u8]>::to_vec).collect();
        self.received += 1;
        self.sent += out.len() as u64;
        self.sent_bytes += out.iter().map(|b| b.len() as u64).sum::<u64>();
        let stats: Stats = self.responder.stats();
        assert_eq!(
            (stats.received, stats.sent, stats.sent_bytes),
            (self.received, self.sent, self.sent_bytes),
            "stats"
        );
        assert_eq!(
            self.out.total_bytes() as u64,
            out.iter().map(|b| b.len() as u64).sum::<u64>()
        );

        let standard = self.listener == Listener::Standard;
        let mut cx = Ctx { keys, now, ip };
        match o {
            Outcome::Unknown | Outcome::RateLimited | Outcome::Banned => {
                assert!(out.is_empty(), "{o:?} with datagrams");
                if o == Outcome::Unknown {
                    let known = ogp_like || (standard && (gqp::is_gqp(d) || a2s::is_a2s(d)));
                    assert!(!known, "a datagram of a protocol we serve is Unknown");
                }
                if o == Outcome::Banned {
                    assert_eq!(ban(ip), BanAction::Ignore);
                }
            }
            Outcome::Ogp(x) => {
                assert!(standard && ogp_like);
                let verified = ogp_verified(d, cx.keys, now, ip);
                check_ogp(x, d, &out, verified, &mut cx);
                if ban(ip) == BanAction::Reject && !out.is_empty() {
                    assert_eq!(x, OgpOutcome::Error(ErrorValue::BANNED));
                }
            }
            Outcome::Gqp(x) => {
                assert!(standard && !ogp_like && gqp::is_gqp(d));
                if ban(ip) == BanAction::Reject {
                    assert!(out.is_empty(), "GQP answered a rejected source");
                }
                let verified = gqp_verified(d, cx.keys, now, ip);
                check_gqp(x, d, &out, verified);
            }
            Outcome::A2s(x) => {
                assert!(standard && !ogp_like && a2s::is_a2s(d));
                let answered = Answered {
                    config: &self.a2s,
                    status,
                    request: d,
                    out: &out,
                    verified: a2s_check::verified(d, cx.keys, now, ip),
                    rejected: ban(ip) == BanAction::Reject,
                    current: cx.keys.issue(now, protocol_id::A2S, ip),
                };
                a2s_check::check_answer(x, &answered);
            }
            Outcome::OgpDraft(x) => {
                assert!(!standard && ogp_like);
                let verified = draft_verified(d, cx.keys, now, ip);
                check_draft(x, d, &out, verified, &mut cx);
                if ban(ip) == BanAction::Reject && !out.is_empty() {
                    assert_eq!(x, DraftOutcome::Banned);
                }
            }
            _ => {}
        }
    }
}

/// One input of the `responder` target.
pub fn run(data: &[u8]) {
    let t0 = Instant::now();
    let mut keys = mirror_keys(t0);
    let sources: Vec<SocketAddr> = SOURCES
        .iter()
        .map(|s| s.parse().expect("address"))
        .collect();
    let mut sides = [
        Side::new(Listener::Standard, t0),
        Side::new(Listener::OgpDraft, t0),
    ];
    let mut now = t0;
    for ([s, dt, ..], datagram) in records::<4>(data) {
        now += Duration::from_millis(u64::from(dt) * UNITS_MS[usize::from(s >> 6)]);
        let src = sources[usize::from(s & 7)];
        for side in &mut sides {
            side.handle(now, src, datagram, s & 8 != 0, &mut keys);
        }
    }
}
