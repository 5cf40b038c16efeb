//! Valve A2S helpers shared by `a2s_reply`, `a2s_split`, `a2s_request`, `responder` and
//! `client_machines`: comparisons that survive NaN durations, proving a request's source,
//! building bzip2-compressed split replies, and the checks of what an A2S responder sends.

use std::cell::RefCell;
use std::collections::HashMap;
use std::net::IpAddr;
use std::sync::OnceLock;
use std::time::Instant;

use ogp_proto::a2s::mapping::status_to_players;
use ogp_proto::a2s::request::ASK_CHALLENGE;
use ogp_proto::a2s::responder::{A2sConfig, A2sOutcome, A2sResponder, Flavor};
use ogp_proto::a2s::split::{
    decode_reassembled, detect_first, parse, payload_per_fragment, Layout, COMPRESSED,
    GOLDSRC_MAX_FRAGMENTS, SOURCE_SPLIT_SIZE,
};
use ogp_proto::a2s::{
    self, Challenge, Fragment, Message, PingReply, Players, Pushed, Reassembler, ReassemblyLimits,
    Request, MAX_DATAGRAM, SINGLE, SPLIT,
};
use ogp_proto::guard::ChallengeKeys;
use ogp_proto::internals::protocol_id;
use ogp_proto::model::{A2sInfo, Player, Rules};
use ogp_proto::Status;

use crate::state_status;

/// `tests/data/state.json` with 300 more players and 3000 more rules, so that PLAYER
/// and RULES replies are split and cut; as The Ship (app id 2400) when `ship`.
pub fn big_status(ship: bool) -> &'static Status {
    static BIG: OnceLock<[Status; 2]> = OnceLock::new();
    let [big, the_ship] = BIG.get_or_init(|| {
        let mut s = state_status().clone();
        let players = s.players.get_or_insert_with(Vec::new);
        players.extend((0..300u32).map(|i| {
            let mut p = Player::default();
            p.slot = Some(i);
            p.name = Some(format!("player {i} {}", "x".repeat((i % 40) as usize)).into());
            p.score = Some(i as i32 - 100);
            p.duration = Some(i as f32 * 1.5);
            p.deaths = (i % 3 == 0).then_some(i);
            p.money = (i % 2 == 0).then_some(i as i32 * 10);
            p
        }));
        let rules = s.rules.get_or_insert_with(Rules::default);
        rules
            .0
            .extend((0..3000).map(|i| (format!("rule_{i}").into(), format!("{}", i * 7).into())));
        let mut ship = s.clone();
        ship.a2s.get_or_insert_with(A2sInfo::default).app_id =
            Some(u32::from(a2s::info::SHIP_APP_ID));
        [s, ship]
    });
    if ship {
        the_ship
    } else {
        big
    }
}

/// Player lists equal field by field, durations compared by their bits (a decoded
/// duration may be NaN, which `PartialEq` never finds equal).
pub fn same_players(a: &Players, b: &Players) -> bool {
    a.trailing == b.trailing
        && a.players.len() == b.players.len()
        && a.players.iter().zip(&b.players).all(|(x, y)| {
            (x.index, &x.name, x.score, x.duration.to_bits(), x.ship)
                == (y.index, &y.name, y.score, y.duration.to_bits(), y.ship)
        })
}

/// The A2S request in `d` carrying challenge `c` instead of its own (INFO, PLAYER and
/// RULES only; any bytes after the challenge are kept as `FF`s).
pub fn prove(d: &[u8], c: u32) -> Option<Vec<u8>> {
    let challenge = Some(c);
    let r = match Request::decode(d).ok()? {
        Request::Info { trailing, .. } => Request::Info {
            challenge,
            trailing,
        },
        Request::Player { trailing, .. } => Request::Player {
            challenge,
            trailing,
        },
        Request::Rules { trailing, .. } => Request::Rules {
            challenge,
            trailing,
        },
        Request::GetChallenge | Request::Ping => return None,
    };
    let mut out = Vec::with_capacity(d.len() + 4);
    r.encode(&mut out);
    Some(out)
}

/// Whether `d` is an A2S request with a challenge the keys accept for `ip` (the
/// responder's rule: `0` and `FFFFFFFF` never prove anything).
pub fn verified(d: &[u8], keys: &mut ChallengeKeys, now: Instant, ip: IpAddr) -> bool {
    Request::decode(d)
        .ok()
        .and_then(|r| r.challenge())
        .is_some_and(|c| c != 0 && c != ASK_CHALLENGE && keys.verify(now, protocol_id::A2S, ip, c))
}

/// The payload of a bzip2-compressed split reply: `size: i32 | CRC32: u32 | bzip2
/// stream` of `reply`, with the declared size moved by `size_delta` and the CRC's bits
/// flipped by `crc_xor` (0 and 0 give a correct one).
pub fn bzip2_payload(reply: &[u8], size_delta: i32, crc_xor: u32) -> Vec<u8> {
    let declared = i32::try_from(reply.len())
        .unwrap_or(i32::MAX)
        .wrapping_add(size_delta);
    let mut out = Vec::with_capacity(reply.len() / 8 + 64);
    out.extend_from_slice(&declared.to_le_bytes());
    out.extend_from_slice(&(crc32fast::hash(reply) ^ crc_xor).to_le_bytes());
    out.extend_from_slice(&bzip2_stream(reply));
    out
}

/// `data` compressed with bzip2. Compressing costs about a millisecond even for a few
/// bytes (the instrumented compressor sets up its 100k block) and much more for the
/// megabytes of a bomb, while libFuzzer's mutations mostly leave a record alone: the last
/// 256 results are remembered, by their input (large inputs, which are runs of one byte
/// the harness made: by length and CRC32).
fn bzip2_stream(data: &[u8]) -> Vec<u8> {
    type Key = (usize, u32, Vec<u8>);
    thread_local! {
        static CACHE: RefCell<HashMap<Key, Vec<u8>>> = RefCell::new(HashMap::new());
    }
    let key: Key = if data.len() <= 4096 {
        (data.len(), 0, data.to_vec())
    } else {
        (data.len(), crc32fast::hash(data), Vec::new())
    };
    if let Some(hit) = CACHE.with(|c| c.borrow().get(&key).cloned()) {
        return hit;
    }
    let mut c = bzip2::Compress::new(bzip2::Compression::fast(), 30);
    let mut out = Vec::with_capacity(data.len() / 8 + 64);
    let mut input = data;
    loop {
        out.reserve(64 * 1024);
        let before = c.total_in();
        match c.compress_vec(input, &mut out, bzip2::Action::Finish) {
            Ok(bzip2::Status::StreamEnd) => break,
            Ok(_) => {
                let used = usize::try_from(c.total_in() - before).unwrap_or(input.len());
                input = input.get(used..).unwrap_or_default();
            }
            Err(e) => panic!("bzip2 compression failed: {e}"),
        }
    }
    CACHE.with(|c| {
        let mut c = c.borrow_mut();
        if c.len() >= 256 {
            c.clear();
        }
        c.insert(key, out.clone());
    });
    out
}

/// `payload` split into `pieces` Source-layout fragments (with or without the size
/// field) of reply `id`, in order.
pub fn source_fragments(payload: &[u8], id: u32, size_field: bool, pieces: usize) -> Vec<Vec<u8>> {
    let per = payload.len().div_ceil(pieces.clamp(1, 255)).max(1);
    let chunks: Vec<&[u8]> = payload.chunks(per).collect();
    let total = u8::try_from(chunks.len()).unwrap_or(u8::MAX);
    chunks
        .iter()
        .enumerate()
        .map(|(k, chunk)| {
            let mut d = Vec::with_capacity(chunk.len() + 12);
            d.extend_from_slice(&SPLIT);
            d.extend_from_slice(&id.to_le_bytes());
            d.push(total);
            d.push(k as u8);
            if size_field {
                d.extend_from_slice(&SOURCE_SPLIT_SIZE.to_le_bytes());
            }
            d.extend_from_slice(chunk);
            d
        })
        .collect()
}

/// What an A2S responder was given and sent, for [`check_answer`].
pub struct Answered<'a> {
    /// Its settings.
    pub config: &'a A2sConfig,
    /// The status it answers from.
    pub status: &'a Status,
    /// The request datagram.
    pub request: &'a [u8],
    /// What it sent.
    pub out: &'a [Vec<u8>],
    /// Whether the request proves its source (decided by the harness).
    pub verified: bool,
    /// Whether the ban hook said Reject.
    pub rejected: bool,
    /// The challenge the keys issue to the source now.
    pub current: u32,
}

fn layout_of(flavor: Flavor) -> Layout {
    match flavor {
        Flavor::GoldSrcM | Flavor::GoldSrcI => Layout::GoldSrc,
        _ => Layout::Source { size_field: true },
    }
}

/// The largest PLAYER or RULES reply: `max_reply_bytes`, within what the layout can
/// number (15 GoldSrc or 255 Source fragments), never below one datagram.
fn reply_limit(config: &A2sConfig) -> usize {
    let layout = layout_of(config.flavor);
    let fragments = match layout {
        Layout::GoldSrc => GOLDSRC_MAX_FRAGMENTS,
        Layout::Source { .. } => 255,
    };
    config
        .max_reply_bytes
        .min(fragments * payload_per_fragment(layout))
        .max(MAX_DATAGRAM)
}

/// Length of a whole reply (with `FF FF FF FF`) that `encode_body` writes.
fn reply_len(encode_body: impl FnOnce(&mut Vec<u8>)) -> usize {
    let mut b = SINGLE.to_vec();
    encode_body(&mut b);
    b.len()
}

/// Asserts what `A2sResponder` promises (module docs of `a2s::responder`): ignored
/// datagrams get nothing; unverified sources at most one datagram of 9 bytes (21 for an
/// enabled ping; INFO of up to 1400 bytes when INFO needs no challenge), never a split
/// reply nor PLAYER/RULES; a challenge is the current one; INFO is one datagram of at most
/// 1400 bytes, the responder's own fitted INFO for the status; PLAYER and RULES are one
/// datagram or fragments of at most 1400 bytes in the flavor's layout (Source: size field
/// 1248; GoldSrc: at most 15), numbered in order, of one id in 1…0x7FFF, that reassemble
/// into a reply within `max_reply_bytes` (see `reply_limit`) holding the longest prefix of
/// the status's players or rules that fits (`truncated` exactly when some were left
/// out).
pub fn check_answer(o: A2sOutcome, x: &Answered<'_>) {
    let total: usize = x.out.iter().map(Vec::len).sum();
    let request = Request::decode(x.request);
    if x.request.len() > x.config.max_request_bytes || request.is_err() || x.rejected {
        assert!(
            matches!(o, A2sOutcome::Ignored(_)),
            "{o:?} for an oversized, undecodable or rejected request"
        );
    }
    if !x.verified {
        let open_info = o == A2sOutcome::Info && !x.config.require_info_challenge;
        if !open_info {
            let cap = if o == A2sOutcome::Ping { 21 } else { 9 };
            assert!(
                x.out.len() <= 1 && total <= cap,
                "{} datagrams, {total} bytes to an unverified source: {o:?}",
                x.out.len()
            );
        }
        assert!(
            !matches!(o, A2sOutcome::Players { .. } | A2sOutcome::Rules { .. }),
            "{o:?} without a valid challenge"
        );
    }
    match o {
        A2sOutcome::Ignored(_) => assert!(x.out.is_empty(), "{o:?} with datagrams"),
        A2sOutcome::Challenge => {
            let mut want = Vec::new();
            Challenge {
                challenge: x.current,
            }
            .encode(&mut want);
            assert_eq!(x.out, [want], "not the current challenge");
            match request {
                Ok(Request::GetChallenge) => assert!(x.config.answer_get_challenge),
                Ok(Request::Info { .. }) => {
                    assert!(x.config.require_info_challenge && !x.verified)
                }
                Ok(Request::Player { .. } | Request::Rules { .. }) => assert!(!x.verified),
                other => panic!("a challenge for {other:?}"),
            }
        }
        A2sOutcome::Ping => {
            assert!(x.config.answer_ping);
            assert_eq!(request, Ok(Request::Ping));
            let reply = match x.config.flavor {
                Flavor::GoldSrcM | Flavor::GoldSrcI => PingReply::GoldSrc,
                _ => PingReply::Source,
            };
            let mut want = Vec::new();
            reply.encode(&mut want);
            assert_eq!(x.out, [want]);
        }
        A2sOutcome::Info => {
            assert!(matches!(request, Ok(Request::Info { .. })), "{request:?}");
            assert_eq!(x.out.len(), 1);
            assert!(x.out[0].len() <= MAX_DATAGRAM, "INFO of {total} bytes");
            let mut want = Vec::new();
            A2sResponder::new(*x.config)
                .info(x.status)
                .encode(&mut want);
            assert_eq!(x.out[0], want, "not the fitted INFO of the status");
            match a2s::decode(&x.out[0]).map(|d| d.message) {
                Ok(Message::GoldSrcInfo(_)) => assert_eq!(x.config.flavor, Flavor::GoldSrcM),
                Ok(Message::Info(i)) => {
                    assert_ne!(x.config.flavor, Flavor::GoldSrcM);
                    if x.config.flavor == Flavor::GoldSrcI {
                        assert_eq!(i.protocol, 48);
                        assert!(i.app_id & 0xff < 0x80, "app id {}", i.app_id);
                    }
                }
                other => panic!("INFO sent decodes as {other:?}"),
            }
        }
        A2sOutcome::Players {
            datagrams,
            truncated,
        } => {
            assert!(matches!(request, Ok(Request::Player { .. })), "{request:?}");
            let reply = reassemble(x, datagrams);
            let Ok(Message::Players(got)) = decode_reassembled(&reply).map(|d| d.message) else {
                panic!("PLAYER reply does not decode")
            };
            let ship = x
                .status
                .a2s
                .as_ref()
                .is_some_and(|a| a.app_id == Some(u32::from(a2s::info::SHIP_APP_ID)))
                && x.config.flavor != Flavor::GoldSrcM;
            let mut want = status_to_players(x.status, ship);
            let (n, full) = (got.players.len(), want.players.len());
            assert!(n <= full);
            if n < full {
                want.players.truncate(n + 1);
                let one_more = reply_len(|b| want.encode_body(b));
                assert!(
                    one_more > reply_limit(x.config),
                    "{n} of {full} players sent, {} would fit in {one_more} bytes",
                    n + 1
                );
            }
            want.players.truncate(n);
            assert!(same_players(&got, &want), "players are not the status's");
            assert_eq!(truncated, n < full, "truncated");
        }
        A2sOutcome::Rules {
            datagrams,
            truncated,
        } => {
            assert!(matches!(request, Ok(Request::Rules { .. })), "{request:?}");
            let reply = reassemble(x, datagrams);
            let Ok(Message::Rules(got)) = decode_reassembled(&reply).map(|d| d.message) else {
                panic!("RULES reply does not decode")
            };
            let mut want = a2s::mapping::status_to_rules(x.status);
            let (n, full) = (got.rules.len(), want.rules.len());
            assert!(got.trailing.is_empty());
            assert!(n <= full);
            if n < full {
                want.rules.truncate(n + 1);
                let one_more = reply_len(|b| want.encode_body(b));
                assert!(
                    one_more > reply_limit(x.config),
                    "{n} of {full} rules sent, {} would fit in {one_more} bytes",
                    n + 1
                );
            }
            assert_eq!(got.rules[..], want.rules[..n], "rules");
            assert_eq!(truncated, n < full, "truncated");
        }
        _ => {}
    }
}

/// The reply a PLAYER or RULES answer carries, one datagram or reassembled, checked as
/// [`check_answer`] says.
fn reassemble(x: &Answered<'_>, datagrams: usize) -> Vec<u8> {
    assert_eq!(datagrams, x.out.len());
    assert!(
        x.out.iter().all(|d| d.len() <= MAX_DATAGRAM),
        "a datagram over {MAX_DATAGRAM} bytes"
    );
    let cap = reply_limit(x.config);
    match x.out {
        [] => panic!("answered with nothing"),
        [one] => {
            assert!(one.starts_with(&SINGLE));
            return one.clone();
        }
        _ => {}
    }
    let layout = layout_of(x.config.flavor);
    if layout == Layout::GoldSrc {
        assert!(
            x.out.len() <= GOLDSRC_MAX_FRAGMENTS,
            "{} fragments",
            x.out.len()
        );
    }
    let id = Fragment::peek_id(&x.out[0]).expect("a fragment sent");
    assert!(id != 0 && id & !0x7fff == 0, "split id {id:#x}");
    assert!(id & COMPRESSED == 0);
    assert_eq!(detect_first(&x.out[0], id), Some(layout));
    let mut r = Reassembler::with_limits({
        let mut limits = ReassemblyLimits::default();
        limits.max_fragments = u8::MAX;
        limits.max_bytes = usize::MAX;
        limits
    });
    for (k, d) in x.out.iter().enumerate() {
        assert_eq!(Fragment::peek_id(d), Ok(id), "one id per reply");
        let p = parse(d, layout).expect("a fragment in the flavor's layout");
        assert_eq!(
            (usize::from(p.number), usize::from(p.total)),
            (k, x.out.len())
        );
        if let Some(size) = p.size {
            assert_eq!(size, SOURCE_SPLIT_SIZE);
        }
        match r.push(d) {
            Ok(Pushed::Complete {
                reply,
                layout: l,
                fragments,
            }) => {
                assert_eq!(k + 1, x.out.len(), "complete before the last fragment");
                assert_eq!((l, usize::from(fragments)), (layout, x.out.len()));
                assert!(reply.len() <= cap, "reply of {} bytes", reply.len());
                return reply;
            }
            Ok(Pushed::Incomplete) => {}
            other => panic!("the fragments sent do not reassemble: {other:?}"),
        }
    }
    panic!("the fragments sent never complete")
}
