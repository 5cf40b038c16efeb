//! Valve A2S requests: `a2s::Request::decode` on every datagram, then the datagram
//! through a `Responder` whose A2S settings come from the input (the shared `responder`
//! target covers A2S with the default settings among the other protocols, several
//! sources, bans and the rate limit; this one covers every flavor and option).
//!
//! Input: `[c0: u8] [c1: u8]`, then records `[s: u8] [dt: u8] [n: u16 LE] [datagram: n &
//! 0x7ff bytes, fewer if the input ends]` until the input ends.
//! * `c0 & 3`: the flavor (Source, GoldSrc `'m'`, GoldSrc `'I'`, Source); `c0 & 4`: INFO
//!   needs no challenge; `c0 & 8`: A2S_SERVERQUERY_GETCHALLENGE answered; `c0 & 16`:
//!   A2A_PING answered; `c0 & 32`: requests over 29 bytes ignored; `c0 >> 6`: the status
//!   (`tests/data/state.json`; the same with 300 players and 3000 rules, so that PLAYER
//!   and RULES replies are split and cut; that one as The Ship, app id 2400; an empty
//!   status); `c1 & 3`: `max_reply_bytes` (65536, 0, 4000, 1 MiB).
//! * `s & 3` the source (two ports of one IPv4 address, its IPv4-mapped IPv6 form, an
//!   IPv6 address); `s & 8` makes the harness write a valid challenge into an INFO,
//!   PLAYER or RULES request; `dt` × (1 ms, 50 ms, 1 s, 20 s by `s >> 6`) passes before
//!   the datagram (challenges rotate every 60 s). The rate limits are out of the way (the
//!   proven one and the unproven per-source and overall ones).
//!
//! Asserts on the decoder: no panic; an error points into the datagram and
//! `a2s::decode` gives the same for a request type; a request is A2S to `is_a2s`,
//! `a2s::decode` reads the same request without warnings, and it re-encodes to bytes that
//! decode to it: the very bytes of the datagram up to the ignored ones after the
//! challenge (INFO, PLAYER, RULES: as long as the datagram; the legacy requests: the
//! five bytes they start with).
//! Asserts on the responder, with a second `ChallengeKeys` from the same secret deciding
//! whether a request proves its source: what `ogp_fuzz::a2s::check_answer` says (module
//! docs of `a2s::responder`: ignored requests get nothing, unverified sources at most 9
//! bytes (21 for a ping) and never PLAYER, RULES or a split, challenges are current, INFO
//! is the fitted one in one datagram, splits in the flavor's layout reassemble into a
//! prefix of the status's players or rules within `max_reply_bytes`).

use std::net::SocketAddr;
use std::sync::OnceLock;
use std::time::{Duration, Instant};

use ogp_fuzz::a2s::{big_status, check_answer, prove, verified, Answered};
use ogp_fuzz::{check_error, records, state_status};
use ogp_proto::a2s::responder::{A2sConfig, Flavor};
use ogp_proto::a2s::{self, kind, Message, Request, SINGLE};
use ogp_proto::guard::{ChallengeKeys, RateConfig};
use ogp_proto::internals::protocol_id;
use ogp_proto::responder::{Outcome, Responder, ResponderConfig, Transmits};
use ogp_proto::Status;

const SECRET: [u8; 32] = [0x5a; 32];
const PERIOD: Duration = Duration::from_secs(60);
const SOURCES: [&str; 4] = [
    "192.0.2.1:27005",
    "192.0.2.1:40000",
    "[::ffff:192.0.2.1]:1",
    "[2001:db8::1]:27015",
];
const UNITS_MS: [u64; 4] = [1, 50, 1000, 20_000];

fn check_request(d: &[u8]) {
    let request_kind = d.starts_with(&SINGLE)
        && matches!(
            d.get(4),
            Some(
                &(kind::INFO_REQUEST
                    | kind::PLAYER_REQUEST
                    | kind::RULES_REQUEST
                    | kind::GET_CHALLENGE
                    | kind::PING)
            )
        );
    let r = match Request::decode(d) {
        Ok(r) => r,
        Err(e) => {
            check_error(&e, 0, d.len());
            if request_kind {
                assert_eq!(a2s::decode(d).map(|m| m.message), Err(e));
            }
            return;
        }
    };
    assert!(
        request_kind && a2s::is_a2s(d),
        "{r:?} from a datagram not A2S"
    );
    let decoded = a2s::decode(d).expect("a request decodes as a message");
    assert_eq!(decoded.message, Message::Request(r));
    assert!(decoded.warnings.is_empty());
    let mut b = Vec::new();
    r.encode(&mut b);
    assert_eq!(Request::decode(&b), Ok(r), "request round trip");
    match r {
        Request::Info { trailing, .. }
        | Request::Player { trailing, .. }
        | Request::Rules { trailing, .. } => {
            assert_eq!(b.len(), d.len(), "{r:?}");
            assert!(trailing == 0 || r.challenge().is_some());
            let kept = d.len() - trailing;
            assert_eq!(b[..kept], d[..kept], "{r:?}");
        }
        Request::GetChallenge | Request::Ping => assert_eq!(b, d[..5]),
    }
}

/// One input of the `a2s_request` target.
pub fn run(data: &[u8]) {
    let (c0, c1, rest) = match data {
        [c0, c1, rest @ ..] => (*c0, *c1, rest),
        _ => return,
    };
    let a2s = {
        let mut config = A2sConfig::default();
        config.require_info_challenge = c0 & 4 == 0;
        config.flavor = [
            Flavor::Source,
            Flavor::GoldSrcM,
            Flavor::GoldSrcI,
            Flavor::Source,
        ][usize::from(c0 & 3)];
        config.answer_get_challenge = c0 & 8 != 0;
        config.answer_ping = c0 & 16 != 0;
        config.max_request_bytes = if c0 & 32 != 0 { 29 } else { a2s::MAX_DATAGRAM };
        config.max_reply_bytes = [65536, 0, 4000, 1 << 20][usize::from(c1 & 3)];
        config
    };
    static EMPTY: OnceLock<Status> = OnceLock::new();
    let status = match c0 >> 6 {
        0 => state_status(),
        1 => big_status(false),
        2 => big_status(true),
        _ => EMPTY.get_or_init(Status::default),
    };
    let t0 = Instant::now();
    // Every budget out of the way: answers to a valid challenge spend `rate`, every other
    // answer (challenges, open INFO, pings) `unproven_rate` and `unproven_total`, so that
    // a RateLimited outcome stays a failure.
    let unlimited = RateConfig::new(1e9, 1e9);
    let mut config = ResponderConfig::default();
    config.a2s = a2s;
    config.rate = unlimited;
    config.unproven_rate = unlimited;
    config.unproven_total = unlimited;
    config.challenge_period = PERIOD;
    let mut responder = Responder::new(config, SECRET, t0);
    let mut keys = {
        let mut k = [0u8; 16];
        k.copy_from_slice(&SECRET[..16]);
        ChallengeKeys::new(k, PERIOD, t0)
    };
    let mut out = Transmits::default();
    let mut now = t0;
    for ([s, dt, ..], raw) in records::<4>(rest) {
        check_request(raw);
        now += Duration::from_millis(u64::from(dt) * UNITS_MS[usize::from(s >> 6)]);
        let src: SocketAddr = SOURCES[usize::from(s & 3)].parse().expect("address");
        let ip = src.ip().to_canonical();
        let proved = if s & 8 != 0 {
            prove(raw, keys.issue(now, protocol_id::A2S, ip))
        } else {
            None
        };
        let d = proved.as_deref().unwrap_or(raw);
        let o = responder.handle(now, src, d, status, &mut out);
        let sent: Vec<Vec<u8>> = out.iter().map(<[u8]>::to_vec).collect();
        match o {
            Outcome::A2s(o) => {
                assert!(a2s::is_a2s(d));
                let answered = Answered {
                    config: &a2s,
                    status,
                    request: d,
                    out: &sent,
                    verified: verified(d, &mut keys, now, ip),
                    rejected: false,
                    current: keys.issue(now, protocol_id::A2S, ip),
                };
                check_answer(o, &answered);
            }
            Outcome::RateLimited | Outcome::Banned => panic!("{o:?} without a limit or a ban"),
            _ => assert!(!a2s::is_a2s(d), "an A2S datagram handled as {o:?}"),
        }
    }
}
