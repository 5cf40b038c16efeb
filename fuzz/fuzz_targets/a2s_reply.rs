//! Valve A2S: `a2s::decode` (and `decode_with` a charset) on arbitrary bytes, taken as one datagram or as a reply
//! reassembled from a split (the decoders are the same from the type byte on): INFO
//! (Source `'I'`, GoldSrc `'m'`), PLAYER, RULES, the challenge and ping replies, requests
//! and split fragments.
//!
//! Asserts: no panic; errors and warnings point into the input; whatever decodes is
//! A2S to `is_a2s`; and, as `tests/a2s_props.rs` relies on:
//! * every reply re-encodes to bytes that decode to the same value (booleans and lossy
//!   UTF-8 are normalised by the first decode, so this is a fixed point after one round);
//!   a challenge reply re-encodes to the 9 bytes it starts with;
//! * a reply maps to a `Status` and back to the same wire values, except what
//!   `docs/a2s-mapping.md` lists (trailing bytes, an EDF byte with no field set, unknown
//!   EDF bits, upper-case letters, the GoldSrc reserved byte, and is-mod/VAC/bots that the
//!   reply did not send); the status survives its JSON state file (when every duration
//!   is finite: JSON cannot store NaN or infinity);
//! * a request is what `Request::decode` reads;
//! * a fragment keeps the datagram and its id; a fragment 0 whose layout `detect_first`
//!   recognises parses in that layout as number 0 (compressed ones: Source layout).
//!
//! The same bytes in Frontlines: Fuel of War's dialect (`decode_ffow_with`: its own
//! `'I'`, big-endian players and rules): no panic, errors and warnings in the input, a
//! reply read without a warning re-encodes to bytes that decode to the same reply; and
//! the FFOW client machine fed the bytes as every answer ends.

use ogp_fuzz::a2s::same_players;
use ogp_fuzz::{check_error, check_warnings};
use ogp_proto::a2s::mapping::{
    goldsrc_to_status, info_to_status, players_to_status, rules_to_status, status_to_goldsrc,
    status_to_info, status_to_players, status_to_rules,
};
use ogp_proto::a2s::split::Layout;
use ogp_proto::a2s::{
    self, Decoded, Fragment, GoldSrcInfo, GoldSrcMod, Info, Message, Players, Request,
};
use ogp_proto::{Charset, Status};
use std::time::Instant;

/// Encodes with `encode` and decodes again.
fn again(encode: impl FnOnce(&mut Vec<u8>)) -> (Vec<u8>, Message) {
    let mut b = Vec::new();
    encode(&mut b);
    match a2s::decode(&b) {
        Ok(Decoded { message, warnings }) => {
            check_warnings(&warnings, 0, b.len());
            (b, message)
        }
        Err(e) => panic!("re-encoded reply does not decode: {e}"),
    }
}

/// The status survives its JSON state file (a rule key sent more than once comes back
/// with its values grouped at its first place: `Rules::grouped`).
fn check_json(s: &Status) {
    let mut want = s.clone();
    want.rules = want.rules.as_ref().map(ogp_proto::Rules::grouped);
    match Status::from_json(&s.to_json_pretty()) {
        Ok(back) => assert_eq!(back, want, "status changed through JSON"),
        Err(e) => panic!("status does not load back from its JSON: {e}"),
    }
}

fn check_info(i: &Info) {
    let (_, m) = again(|b| i.encode(b));
    assert_eq!(m, Message::Info(i.clone()), "INFO 'I' round trip");
    let mut s = Status::default();
    info_to_status(i, &mut s);
    let mut want = i.clone();
    want.server_type = want.server_type.to_ascii_lowercase();
    want.environment = want.environment.to_ascii_lowercase();
    want.trailing.clear();
    if let Some(x) = &mut want.extra {
        x.unknown_bits = 0;
    }
    if want.extra.as_ref().is_some_and(|x| x.flags() == 0) {
        want.extra = None;
    }
    assert_eq!(status_to_info(&s), want, "INFO 'I' → status → INFO");
    check_json(&s);
}

fn check_goldsrc(m: &GoldSrcInfo) {
    let (_, back) = again(|b| m.encode(b));
    assert_eq!(back, Message::GoldSrcInfo(m.clone()), "INFO 'm' round trip");
    let mut s = Status::default();
    goldsrc_to_status(m, &mut s);
    let mut want = m.clone();
    want.server_type = want.server_type.to_ascii_lowercase();
    want.environment = want.environment.to_ascii_lowercase();
    want.trailing.clear();
    want.is_mod = Some(want.mod_info.is_some());
    want.mod_info = want.mod_info.map(|x| GoldSrcMod { reserved: 0, ..x });
    want.vac = Some(want.vac.unwrap_or(false));
    want.bots = Some(want.bots.unwrap_or(0));
    assert_eq!(status_to_goldsrc(&s), want, "INFO 'm' → status → INFO");
    check_json(&s);
}

fn check_players(p: &Players) {
    let (_, back) = again(|b| p.encode(b));
    let Message::Players(back) = back else {
        panic!("PLAYER re-encoded as {back:?}")
    };
    assert!(
        same_players(&back, p),
        "PLAYER round trip: {p:?} → {back:?}"
    );
    let mut s = Status::default();
    players_to_status(p, &mut s);
    let ship = p.players.first().is_some_and(|e| e.ship.is_some());
    let want = Players {
        players: p.players.clone(),
        trailing: Vec::new(),
    };
    let got = status_to_players(&s, ship);
    assert!(
        same_players(&got, &want),
        "PLAYER → status → PLAYER: {got:?}"
    );
    if p.players.iter().all(|e| e.duration.is_finite()) {
        check_json(&s);
    }
}

fn check_message(m: &Message, d: &[u8]) {
    match m {
        Message::Request(r) => assert_eq!(Request::decode(d).as_ref(), Ok(r)),
        Message::Challenge(c) => {
            let (b, back) = again(|b| c.encode(b));
            assert_eq!(back, Message::Challenge(*c));
            assert_eq!(b[..], d[..b.len()], "challenge reply bytes");
        }
        Message::PingReply(p) => {
            let (_, back) = again(|b| p.encode(b));
            assert_eq!(&back, m, "ping reply round trip {p:?}");
        }
        Message::Info(i) => check_info(i),
        Message::GoldSrcInfo(g) => check_goldsrc(g),
        Message::Players(p) => check_players(p),
        Message::Rules(r) => {
            let (_, back) = again(|b| r.encode(b));
            assert_eq!(&back, m, "RULES round trip");
            let mut s = Status::default();
            rules_to_status(r, &mut s);
            assert_eq!(status_to_rules(&s).rules, r.rules, "RULES → status → RULES");
            check_json(&s);
        }
        Message::Fragment(f) => {
            assert_eq!(f.datagram, d);
            assert_eq!(Fragment::peek_id(d), Ok(f.id));
            if let Some(layout) = f.detect_first() {
                if f.compressed() {
                    assert!(matches!(layout, Layout::Source { .. }), "{layout:?}");
                }
                match f.parse(layout) {
                    Ok(p) => assert!(p.number == 0 && p.total > 0, "{p:?}"),
                    Err(e) => panic!("fragment 0 in {layout:?} does not parse: {e}"),
                }
            }
        }
        other => panic!("unexpected message {other:?}"),
    }
}

/// One input of the `a2s_reply` target.
pub fn run(data: &[u8]) {
    let auto = a2s::decode(data);
    match &auto {
        Ok(d) => {
            assert!(a2s::is_a2s(data), "decoded but not A2S to is_a2s");
            check_warnings(&d.warnings, 0, data.len());
            check_message(&d.message, data);
        }
        Err(e) => check_error(e, 0, data.len()),
    }
    // A chosen charset changes only how strings that are not UTF-8 read: the same error,
    // or a message that is the same when nothing had to be replaced.
    match (&auto, a2s::decode_with(data, Charset::Windows1251)) {
        (Ok(a), Ok(c)) => {
            if a.warnings.is_empty() {
                // as text: a duration may be NaN, which is not equal to itself
                let (a, c) = (format!("{:?}", a.message), format!("{:?}", c.message));
                assert_eq!(a, c, "the charset changed UTF-8 strings");
            }
        }
        (Err(a), Err(c)) => assert_eq!(*a, c, "the charset changed the error"),
        (a, c) => panic!("the charset changed whether it decodes: {a:?} / {c:?}"),
    }
    ffow(data);
}

/// FFOW's dialect on the same bytes.
fn ffow(data: &[u8]) {
    match a2s::decode_ffow_with(data, Charset::Auto) {
        Ok(d) => {
            check_warnings(&d.warnings, 0, data.len());
            let mut b = a2s::SINGLE.to_vec();
            match &d.message {
                Message::FfowInfo(i) => {
                    b.clear();
                    i.encode(&mut b);
                }
                Message::Players(p) => p.encode_body_in(&mut b, true),
                Message::Rules(r) => r.encode_body_in(&mut b, true),
                _ => b.clear(),
            }
            if d.warnings.is_empty() && !b.is_empty() {
                let again = a2s::decode_ffow_with(&b, Charset::Auto).expect("re-encoded");
                // as text: a duration may be NaN, which is not equal to itself
                assert_eq!(
                    format!("{:?}", again.message),
                    format!("{:?}", d.message),
                    "FFOW round trip"
                );
            }
        }
        Err(e) => check_error(&e, 0, data.len()),
    }
    let timing = ogp_proto::client::Timing::default().retries(0);
    let mut m = ogp_proto::ffow::client::QueryMachine::new(
        ogp_proto::a2s::client::QueryOptions::default(),
        timing,
        Instant::now(),
    );
    ogp_fuzz::answer_every_send(&mut m, data);
}
