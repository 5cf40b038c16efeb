//! Property tests for the OGP v1.01 codec: a [`Status`] survives an answer body, a whole
//! datagram and a split answer reassembled in any order; queries and headers survive
//! their encoding; no input makes a decoder panic or report an offset past its input;
//! every strict truncation of a valid answer is an error. The explicit cases at the end
//! pin the field dependencies of spec §3.4 that are easier to read as bytes.

use std::collections::HashSet;

use ogp_proto::error::DecodeError;
use ogp_proto::internals::from_hex;
use ogp_proto::internals::read_color_info;
use ogp_proto::internals::Reader;
use ogp_proto::ogp::answer::{answer_request_flags, MAX_EMPTY_ENTRIES};
use ogp_proto::ogp::query::{
    addon_fields, map_fields, mod_fields, player_fields, request, server_info, team_fields,
};
use ogp_proto::ogp::types::write_color_info;
use ogp_proto::ogp::{
    self, decode_answer_body, encode_answer_body, flags, split_answer, AnswerOptions, Bits,
    DefaultQuery, Header, Message, PacketType, Pushed, Reassembler, SplitInfo,
};
use ogp_proto::Text;
use ogp_proto::{ColorEntry, ColorInfo, MapInfo, ModInfo, Player, Status};
use ogp_testkit::{
    color_back, color_info, demo_state, empty_lists, normalise, status, status_and_charset,
    Charset, Params, EXACT,
};
use proptest::collection::vec;
use proptest::option;
use proptest::prelude::*;
use proptest::sample::Index;

// =======================================================================================
// Helpers

fn everything(colored_names: bool) -> DefaultQuery {
    let mut q = DefaultQuery::everything();
    q.request = q.request.with_if(request::COLORED_NAMES, colored_names);
    q
}

/// The RequestFlags an answer to [`everything`] must have.
fn expected_request_flags(s: &Status, colored: bool) -> Bits {
    request::SERVER_INFO
        .with_if(request::TEAM_LIST, s.teams.is_some())
        .with_if(request::PLAYER_LIST, s.players.is_some())
        .with_if(request::RULE_LIST, s.rules.is_some())
        .with_if(request::ADDON_LIST, s.addons.is_some())
        .with_if(request::LIMIT_LIST, s.limits.is_some())
        .with_if(request::COLORED_NAMES, colored)
}

fn body_of(s: &Status, q: &DefaultQuery, opts: &AnswerOptions) -> Vec<u8> {
    let mut body = Vec::new();
    encode_answer_body(s, q, opts, &mut body);
    body
}

fn decode_body(body: &[u8], utf8: bool) -> Result<ogp::Answer, TestCaseError> {
    decode_answer_body(body, utf8)
        .map_err(|e| TestCaseError::fail(format!("valid answer body rejected: {e}")))
}

/// Encodes `s` for a query for everything, decodes it and compares with
/// [`normalise`]. Also checks that the decoded status encodes to the same bytes.
fn check_body_round_trip(
    s: &Status,
    ask_colors: bool,
    colors: bool,
    utf8: bool,
) -> Result<(), TestCaseError> {
    let q = everything(ask_colors);
    let opts = AnswerOptions { utf8, colors };
    let colored = ask_colors && colors;
    let body = body_of(s, &q, &opts);
    let a = decode_body(&body, utf8)?;
    prop_assert!(a.warnings.is_empty(), "warnings: {:?}", a.warnings);
    prop_assert_eq!(a.request_flags, expected_request_flags(s, colored));
    prop_assert_eq!(a.request_flags, answer_request_flags(s, &q, &opts));
    prop_assert_eq!(&a.status, &normalise(s, colored));
    // the decoded status goes round again by the same rules; when that changes nothing
    // (always for the exact strategies), it encodes to the very same bytes, except that
    // a bNextMap without bMap (rule 5) is not announced again, and that a field set to
    // its filler ("" for a map's URL) was sent but comes back absent
    let again_body = body_of(&a.status, &q, &opts);
    let again = decode_body(&again_body, utf8)?;
    prop_assert_eq!(&again.status, &normalise(&a.status, colored));
    if again.status == a.status && (s.map.is_some() || s.next_map.is_none()) && !sets_a_filler(s) {
        prop_assert_eq!(again_body, body, "re-encoding differs");
    }
    Ok(())
}

/// Whether `s` sets a field that the decoder reads as absent when it holds its filler
/// (ogp-wire-choices X11): the optional strings of maps, players and add-ons when empty, a
/// map file size of 0, an MD5 of zeros, an empty player address.
fn sets_a_filler(s: &Status) -> bool {
    let empty = |t: &Option<Text>| t.as_deref() == Some("");
    let map = |m: &MapInfo| {
        [&m.file_name, &m.version, &m.url, &m.author]
            .into_iter()
            .any(empty)
            || m.file_size == Some(0)
            || m.file_md5 == Some([0; 16])
    };
    s.map.iter().chain(&s.next_map).any(map)
        || s.players.iter().flatten().any(|p| {
            [&p.class, &p.race, &p.global_id, &p.model]
                .into_iter()
                .any(empty)
                || p.address.as_ref().is_some_and(|a| a.0.is_empty())
        })
        || s.addons.iter().flatten().any(|a| {
            [&a.short_name, &a.long_name, &a.version]
                .into_iter()
                .any(empty)
        })
}

fn offset_within<T>(r: &Result<T, DecodeError>, len: usize) -> Result<(), TestCaseError> {
    if let Err(e) = r {
        prop_assert!(e.offset <= len, "error offset past the input ({len}): {e}");
    }
    Ok(())
}

/// Runs every decoder on `bytes`: none may panic, every error's offset is within the
/// input.
fn decode_anything(bytes: &[u8]) -> Result<(), TestCaseError> {
    let n = bytes.len();
    let packet = ogp::decode(bytes);
    offset_within(&packet, n)?;
    if let Ok(p) = &packet {
        if let Message::Fragment { body } = &p.message {
            // a hostile fragment may be refused but never panics
            let _ = Reassembler::new().push(&p.header, body);
        }
    }
    let q = DefaultQuery::decode(bytes);
    offset_within(&q, n)?;
    if let Ok(q) = q {
        prop_assert!(q.trailing <= n);
    }
    for utf8 in [false, true] {
        offset_within(&decode_answer_body(bytes, utf8), n)?;
    }
    offset_within(&read_color_info(&mut Reader::new(bytes), "c"), n)?;
    Ok(())
}

#[derive(Debug, Clone)]
enum Mutation {
    Flip(Index, u8),
    Insert(Index, u8),
    Delete(Index),
}

fn mutation() -> impl Strategy<Value = Mutation> {
    prop_oneof![
        (any::<Index>(), 0u8..8).prop_map(|(i, b)| Mutation::Flip(i, b)),
        (any::<Index>(), any::<u8>()).prop_map(|(i, b)| Mutation::Insert(i, b)),
        any::<Index>().prop_map(Mutation::Delete),
    ]
}

fn mutate(bytes: &mut Vec<u8>, muts: &[Mutation]) {
    for m in muts {
        match m {
            Mutation::Flip(i, bit) if !bytes.is_empty() => {
                let i = i.index(bytes.len());
                bytes[i] ^= 1 << *bit;
            }
            Mutation::Insert(i, b) => {
                let i = i.index(bytes.len() + 1);
                bytes.insert(i, *b);
            }
            Mutation::Delete(i) if !bytes.is_empty() => {
                let i = i.index(bytes.len());
                bytes.remove(i);
            }
            _ => {}
        }
    }
}

/// The header a decoder returns for `h`: HeadFlags as on the wire.
fn as_decoded(h: &Header) -> Header {
    Header {
        flags: h.wire_flags(),
        ..*h
    }
}

/// A query with its arrays cleared where their dependency bit is clear (they are not on
/// the wire).
fn query_as_decoded(q: &DefaultQuery) -> DefaultQuery {
    let mut d = *q;
    if !q.request.contains(request::SERVER_INFO) {
        d.server_info = Bits::EMPTY;
    }
    if !d.server_info.contains(server_info::MOD) {
        d.mod_fields = Bits::EMPTY;
    }
    if !d.server_info.contains(server_info::MAP) {
        d.map_fields = Bits::EMPTY;
    }
    if !q.request.contains(request::TEAM_LIST) {
        d.team_fields = Bits::EMPTY;
    }
    if !q.request.contains(request::PLAYER_LIST) {
        d.player_fields = Bits::EMPTY;
    }
    if !q.request.contains(request::ADDON_LIST) {
        d.addon_fields = Bits::EMPTY;
    }
    d
}

fn known_bits(all: Bits) -> impl Strategy<Value = Bits> {
    any::<u64>().prop_map(move |v| Bits(v).and(all))
}

fn query_masks() -> impl Strategy<Value = DefaultQuery> {
    (
        known_bits(request::KNOWN),
        known_bits(server_info::ALL),
        known_bits(mod_fields::ALL),
        known_bits(map_fields::ALL),
        known_bits(team_fields::ALL),
        known_bits(player_fields::ALL),
        known_bits(addon_fields::ALL),
    )
        .prop_map(
            |(
                request,
                server_info,
                mod_fields,
                map_fields,
                team_fields,
                player_fields,
                addon_fields,
            )| {
                DefaultQuery {
                    request,
                    server_info,
                    mod_fields,
                    map_fields,
                    team_fields,
                    player_fields,
                    addon_fields,
                }
            },
        )
}

/// Any header, query or answer form. HeadFlags may hold any bit a VarBitArray of nine
/// bytes carries (bits 0.0–8.6).
fn header() -> impl Strategy<Value = Header> {
    (
        any::<bool>(),
        any::<u8>(),
        any::<u64>(),
        option::of(any::<u32>()),
        option::of(any::<u32>()),
        option::of(any::<u16>()),
        option::of(any::<(u8, u8)>()),
    )
        .prop_map(|(answer, ty, bits, challenge, request_id, max, split)| {
            let bits = Bits(bits & ((1 << 63) - 1));
            Header {
                packet_type: PacketType(ty),
                flags: if answer {
                    bits.with(flags::ANSWER)
                } else {
                    bits.without(flags::ANSWER)
                },
                challenge,
                request_id,
                max_bytes_per_packet: if answer { None } else { max },
                split: if answer {
                    split.map(|(count, number)| SplitInfo { count, number })
                } else {
                    None
                },
            }
        })
}

fn answer_header(utf8: bool, challenge: Option<u32>, request_id: Option<u32>) -> Header {
    let mut h = Header::answer(PacketType::DEFAULT_QUERY).with_utf8(utf8);
    h.challenge = challenge;
    h.request_id = request_id;
    h
}

// =======================================================================================
// Properties

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]

    /// UTF-8 answers carry an exactly representable status unchanged, up to
    /// [`normalise`].
    #[test]
    fn answer_body_round_trip_utf8(
        s in status(EXACT),
        ask_colors in any::<bool>(),
        colors in any::<bool>(),
    ) {
        check_body_round_trip(&s, ask_colors, colors, true)?;
    }

    /// The same in Latin-1, for statuses whose strings are all ≤ U+00FF.
    #[test]
    fn answer_body_round_trip_latin1(
        s in status(Params { cs: Charset::Latin1, ..EXACT }),
        ask_colors in any::<bool>(),
        colors in any::<bool>(),
    ) {
        check_body_round_trip(&s, ask_colors, colors, false)?;
    }

    /// Entries that lack a field their list sends get the wire zero (rules 3, 5, 7 of
    /// [`normalise`]).
    #[test]
    fn answer_body_round_trip_mixed_presence(
        s in status(Params { mixed: true, big: false, ..EXACT }),
        ask_colors in any::<bool>(),
        colors in any::<bool>(),
    ) {
        check_body_round_trip(&s, ask_colors, colors, true)?;
    }

    /// A whole unsplit answer datagram decodes to its header and the status.
    #[test]
    fn answer_datagram_round_trip(
        (utf8, s) in status_and_charset(true),
        challenge in option::of(any::<u32>()),
        request_id in option::of(any::<u32>()),
        ask_colors in any::<bool>(),
        colors in any::<bool>(),
    ) {
        let h = answer_header(utf8, challenge, request_id);
        let q = everything(ask_colors);
        let opts = AnswerOptions { utf8, colors };
        let mut d = Vec::new();
        ogp::encode_answer(&h, &s, &q, &opts, &mut d);
        let p = ogp::decode(&d).map_err(|e| TestCaseError::fail(e.to_string()))?;
        prop_assert_eq!(p.header, as_decoded(&h));
        prop_assert_eq!(p.head_size, h.head_size());
        prop_assert_eq!(d[8], h.head_size());
        prop_assert_eq!(p.skipped_header_bytes, 0);
        let Message::Answer(a) = p.message else {
            return Err(TestCaseError::fail(format!("not an answer: {:?}", p.message)));
        };
        prop_assert!(a.warnings.is_empty(), "warnings: {:?}", a.warnings);
        prop_assert_eq!(a.status, normalise(&s, ask_colors && colors));
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(64))]

    /// Split for a random MaxBytesPerPacket, delivered in a random order with some
    /// packets twice, reassembled and decoded: the same status. Every datagram respects
    /// MaxBytesPerPacket (spec §3.1: "Maximum number of bytes a packet may contain").
    #[test]
    fn split_answer_round_trip(
        (utf8, s) in status_and_charset(true),
        challenge in option::of(any::<u32>()),
        request_id in any::<u32>(),
        max_bytes in 500u16..=1500,
        order in vec(any::<u32>(), 256),
        dups in vec((any::<Index>(), any::<u32>()), 0..5),
    ) {
        let h = answer_header(utf8, challenge, None);
        let opts = AnswerOptions { utf8, colors: false };
        let body = body_of(&s, &everything(false), &opts);
        let packets = split_answer(&h, request_id, &body, max_bytes)
            .map_err(|e| TestCaseError::fail(format!("{} bytes: {e}", body.len())))?;
        for (i, d) in packets.iter().enumerate() {
            prop_assert!(
                d.len() <= usize::from(max_bytes),
                "packet {} of {} is {} bytes, over MaxBytesPerPacket {} (body {} bytes)",
                i, packets.len(), d.len(), max_bytes, body.len()
            );
        }
        let expected = normalise(&s, false);
        let n = packets.len();
        if n == 1 {
            let p = ogp::decode(&packets[0]).map_err(|e| TestCaseError::fail(e.to_string()))?;
            prop_assert_eq!(p.header, as_decoded(&h));
            let Message::Answer(a) = p.message else {
                return Err(TestCaseError::fail("an unsplit answer is not an Answer"));
            };
            prop_assert_eq!(a.status, expected);
            return Ok(());
        }

        // delivery order: packets sorted by a random key, duplicates mixed in
        let mut deliveries: Vec<(u32, usize)> =
            (0..n).map(|i| (order[i % order.len()], i)).collect();
        deliveries.extend(dups.iter().map(|(i, key)| (*key, i.index(n))));
        deliveries.sort_by_key(|&(key, _)| key);

        let mut r = Reassembler::new();
        let mut seen = HashSet::new();
        let mut completed = 0;
        for (_, i) in deliveries {
            let p = ogp::decode(&packets[i]).map_err(|e| TestCaseError::fail(e.to_string()))?;
            let split = p.header.split.ok_or_else(|| TestCaseError::fail("no split fields"))?;
            prop_assert_eq!(
                (usize::from(split.count), usize::from(split.number)),
                (n, i)
            );
            prop_assert_eq!(p.header.request_id, Some(request_id));
            prop_assert_eq!(p.header.challenge, if i == 0 { challenge } else { None });
            prop_assert_eq!(p.header.utf8(), utf8);
            let Message::Fragment { body: part } = &p.message else {
                return Err(TestCaseError::fail(format!("not a fragment: {:?}", p.message)));
            };
            let pushed = r
                .push(&p.header, part)
                .map_err(|e| TestCaseError::fail(format!("push refused: {e}")))?;
            // a model of the reassembler: duplicates are dropped, the last new part
            // completes, completion starts afresh
            if !seen.insert(i) {
                prop_assert_eq!(pushed, Pushed::Duplicate);
            } else if seen.len() < n {
                prop_assert_eq!(pushed, Pushed::Incomplete);
            } else {
                seen.clear();
                completed += 1;
                let Pushed::Complete { header, body: whole } = pushed else {
                    return Err(TestCaseError::fail(format!("not complete: {pushed:?}")));
                };
                prop_assert_eq!(header.challenge, challenge);
                prop_assert_eq!(header.split.map(|s| s.number), Some(0));
                prop_assert_eq!(&whole, &body);
                let a = decode_body(&whole, header.utf8())?;
                prop_assert!(a.warnings.is_empty(), "warnings: {:?}", a.warnings);
                prop_assert_eq!(&a.status, &expected);
            }
        }
        prop_assert!(completed >= 1);
    }

    /// Splitting arbitrary bodies: every datagram within MaxBytesPerPacket, the parts
    /// concatenate to the body, and more than 255 packets is an error, not a wrong count.
    #[test]
    fn split_sizes(len in 0usize..40_000, max_bytes in 500u16..=1500, challenge in option::of(any::<u32>())) {
        let body: Vec<u8> = (0..len).map(|i| i as u8).collect();
        let h = answer_header(true, challenge, None);
        match split_answer(&h, 7, &body, max_bytes) {
            Ok(packets) => {
                let mut whole = Vec::new();
                for (i, d) in packets.iter().enumerate() {
                    prop_assert!(
                        d.len() <= usize::from(max_bytes),
                        "packet {} of {} is {} bytes, over {} (body {})",
                        i, packets.len(), d.len(), max_bytes, len
                    );
                    let (dh, body_at) =
                        Header::decode(d).map_err(|e| TestCaseError::fail(e.to_string()))?;
                    if packets.len() > 1 {
                        prop_assert_eq!(dh.header.split.map(|s| usize::from(s.count)), Some(packets.len()));
                    }
                    whole.extend_from_slice(&d[body_at..]);
                }
                prop_assert_eq!(whole, body);
            }
            Err(ogp::SplitError::TooManyPackets(n)) => prop_assert!(n > 255),
            Err(e) => return Err(TestCaseError::fail(e.to_string())),
        }
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]

    /// Query masks restricted to the known bits survive encoding, as a body and as a
    /// datagram; every strict truncation of the body is an error.
    #[test]
    fn query_round_trip(
        q in query_masks(),
        challenge in option::of(any::<u32>()),
        request_id in option::of(any::<u32>()),
        max in option::of(any::<u16>()),
        utf8 in any::<bool>(),
    ) {
        let mut body = Vec::new();
        q.encode(&mut body);
        let d = DefaultQuery::decode(&body)
            .map_err(|e| TestCaseError::fail(e.to_string()))?;
        prop_assert_eq!(d.query, query_as_decoded(&q));
        prop_assert_eq!(d.trailing, 0);
        for len in 0..body.len() {
            let r = DefaultQuery::decode(&body[..len]);
            prop_assert!(r.is_err(), "truncated to {}: {:?}", len, r);
            offset_within(&r, len)?;
        }

        let mut h = Header::query(PacketType::DEFAULT_QUERY).with_utf8(utf8);
        h.challenge = challenge;
        h.request_id = request_id;
        h.max_bytes_per_packet = max;
        let mut dg = Vec::new();
        ogp::encode_query(&h, Some(&q), &mut dg);
        let p = ogp::decode(&dg).map_err(|e| TestCaseError::fail(e.to_string()))?;
        prop_assert_eq!(p.header, as_decoded(&h));
        prop_assert_eq!(p.head_size, dg[8]);
        let Message::Query(dq) = p.message else {
            return Err(TestCaseError::fail(format!("not a query: {:?}", p.message)));
        };
        prop_assert_eq!(dq.query, query_as_decoded(&q));
        prop_assert_eq!(dq.trailing, 0);
    }

    /// Any header, query or answer form, survives encoding with its exact HeadSize; the
    /// body starts at 8 + HeadSize.
    #[test]
    fn header_round_trip(h in header(), body in vec(any::<u8>(), 0..8)) {
        let mut d = Vec::new();
        h.encode(&mut d);
        prop_assert_eq!(d.len(), 8 + usize::from(h.head_size()));
        prop_assert_eq!(d[8], h.head_size());
        d.extend_from_slice(&body);
        let (dh, body_at) = Header::decode(&d).map_err(|e| TestCaseError::fail(e.to_string()))?;
        prop_assert_eq!(dh.header, as_decoded(&h));
        prop_assert_eq!(dh.head_size, h.head_size());
        prop_assert_eq!(dh.skipped, 0);
        prop_assert_eq!(body_at, 8 + usize::from(dh.head_size));
        prop_assert_eq!(&d[body_at..], &body[..]);
        // re-encoding the decoded header gives the same bytes
        let mut again = Vec::new();
        dh.header.encode(&mut again);
        prop_assert_eq!(&again[..], &d[..d.len() - body.len()]);
        // every strict truncation of the header is an error
        for len in 0..8 + usize::from(h.head_size()) {
            let r = Header::decode(&d[..len]);
            prop_assert!(r.is_err(), "truncated to {}", len);
            offset_within(&r, len)?;
        }
    }

    /// Random bytes, with and without an OGP prefix, never make a decoder panic.
    #[test]
    fn random_bytes_never_panic(
        bytes in vec(any::<u8>(), 0..2000),
        prefixed in any::<bool>(),
    ) {
        decode_anything(&bytes)?;
        if prefixed {
            let mut d = ogp::PREFIX.to_vec();
            d.extend_from_slice(&bytes);
            decode_anything(&d)?;
        }
    }

    /// Valid answers with flipped, inserted and deleted bytes never make a decoder
    /// panic, whether the damage is in the header or the body.
    #[test]
    fn mutated_answers_never_panic(
        s in status(Params { big: false, ..EXACT }),
        ask_colors in any::<bool>(),
        muts in vec(mutation(), 1..8),
        in_body in any::<bool>(),
    ) {
        let h = answer_header(true, Some(1), None);
        let opts = AnswerOptions { utf8: true, colors: true };
        let body = body_of(&s, &everything(ask_colors), &opts);
        if in_body {
            let mut b = body.clone();
            mutate(&mut b, &muts);
            decode_anything(&b)?;
        }
        let mut d = Vec::new();
        h.encode(&mut d);
        d.extend_from_slice(&body);
        mutate(&mut d, &muts);
        decode_anything(&d)?;
    }

    /// Every strict truncation of a valid answer body, and of a valid answer datagram,
    /// is an error (never a panic, never a shorter status).
    #[test]
    fn truncated_answers_are_errors(
        s in status(Params { big: false, ..EXACT }),
        ask_colors in any::<bool>(),
        colors in any::<bool>(),
    ) {
        let opts = AnswerOptions { utf8: true, colors };
        let body = body_of(&s, &everything(ask_colors), &opts);
        for len in 0..body.len() {
            let r = decode_answer_body(&body[..len], true);
            prop_assert!(r.is_err(), "body truncated to {} of {} decoded", len, body.len());
            offset_within(&r, len)?;
        }
        let mut d = Vec::new();
        answer_header(true, Some(9), Some(3)).encode(&mut d);
        d.extend_from_slice(&body);
        for len in 0..d.len() {
            let r = ogp::decode(&d[..len]);
            prop_assert!(r.is_err(), "datagram truncated to {} of {} decoded", len, d.len());
            offset_within(&r, len)?;
        }
    }

    /// StringColorInfo: round trip (see [`color_back`]) and every strict truncation is an
    /// error.
    #[test]
    fn color_info_round_trip(c in color_info(), tail in vec(any::<u8>(), 0..4)) {
        let mut out = Vec::new();
        write_color_info(&mut out, Some(&c));
        let len = out.len();
        out.extend_from_slice(&tail);
        let mut r = Reader::new(&out);
        let back = read_color_info(&mut r, "c").map_err(|e| TestCaseError::fail(e.to_string()))?;
        prop_assert_eq!(back, color_back(Some(&c)));
        prop_assert_eq!(r.offset(), len, "ColorSize bounds the read");
        for cut in 0..len {
            let r = read_color_info(&mut Reader::new(&out[..cut]), "c");
            prop_assert!(r.is_err(), "truncated to {}", cut);
            offset_within(&r, cut)?;
        }
    }
}

// =======================================================================================
// Field dependencies, as explicit cases

fn hex(s: &str) -> Vec<u8> {
    from_hex(&s.replace(' ', "")).unwrap()
}

/// UTF-8 strings, no colours.
const UTF8: AnswerOptions = AnswerOptions {
    utf8: true,
    colors: false,
};

fn decode_ok(body: &[u8]) -> ogp::Answer {
    let a = decode_answer_body(body, true).unwrap();
    assert!(a.warnings.is_empty(), "{:?}", a.warnings);
    a
}

#[test]
fn state_json_round_trips_through_an_answer() {
    let s = demo_state();
    for (ask, colors) in [(false, false), (true, false), (false, true), (true, true)] {
        let q = everything(ask);
        let opts = AnswerOptions { utf8: true, colors };
        let body = body_of(&s, &q, &opts);
        let a = decode_ok(&body);
        assert_eq!(a.status, normalise(&s, ask && colors));
    }
    // like the SDK's answer to the PHP query: GameID 42, all lists, all 13 server fields
    let body = body_of(&s, &everything(true), &UTF8);
    assert_eq!(body[..6], hex("2a00 3f 8f9f0f"));
}

#[test]
fn a_subset_query_gets_only_those_fields() {
    let s = demo_state();
    let q = DefaultQuery {
        request: request::PLAYER_LIST,
        player_fields: player_fields::NAME.with(player_fields::SCORE),
        ..DefaultQuery::default()
    };
    let body = body_of(&s, &q, &UTF8);
    // GameID, RequestFlags bPlayerList, count 3, PlayerFields 0.2|1.0, then name + score
    assert_eq!(
        body,
        hex("2a00 04 03 8401  416c69636500 80b004  426f622074686520426f7400 8038ff  5a6fc3ab00 00")
    );
    let a = decode_ok(&body);
    assert_eq!(a.request_flags, request::PLAYER_LIST);
    let players = a.status.players.as_ref().unwrap();
    let want: Vec<(Option<&str>, Option<i32>)> = vec![
        (Some("Alice"), Some(1200)),
        (Some("Bob the Bot"), Some(-200)),
        (Some("Zoë"), Some(0)),
    ];
    let got: Vec<_> = players
        .iter()
        .map(|p| (p.name.as_deref(), p.score))
        .collect();
    assert_eq!(got, want);
    for p in players {
        let mut only = Player::default();
        only.name = p.name.clone();
        only.score = p.score;
        assert_eq!(p, &only, "no other field");
    }
    // nothing else was sent: no server info, no counts
    assert_eq!(a.status, {
        let mut s = Status::default();
        s.game_id = Some(42);
        s.players = a.status.players.clone();
        s
    });

    // a field the query asks for but no entry has is not in the mask
    let q = DefaultQuery {
        request: request::PLAYER_LIST,
        player_fields: player_fields::NAME.with(player_fields::ADDRESS),
        ..DefaultQuery::default()
    };
    let mut s2 = s.clone();
    for p in s2.players.as_mut().unwrap() {
        p.address = None;
    }
    let body = body_of(&s2, &q, &UTF8);
    assert_eq!(
        body[..5],
        hex("2a00 04 03 04"),
        "PlayerFields = bPlayerName only"
    );
}

#[test]
fn next_map_without_map_keeps_the_bit_and_sends_no_map() {
    let s = demo_state();
    let q = DefaultQuery {
        request: request::SERVER_INFO,
        server_info: server_info::NEXT_MAP,
        map_fields: map_fields::ALL,
        ..DefaultQuery::default()
    };
    let body = body_of(&s, &q, &UTF8);
    // capture 28: ServerInfoFields 80 10 and nothing after it
    assert_eq!(body, hex("2a00 01 8010"));
    let a = decode_ok(&body);
    assert_eq!((a.status.map, a.status.next_map), (None, None));

    // a status with a next map but no map: bNextMap stays, no map data
    let mut s2 = s.clone();
    s2.map = None;
    let body = body_of(&s2, &everything(false), &UTF8);
    let a = decode_ok(&body);
    assert_eq!((a.status.map, a.status.next_map), (None, None));
    assert_eq!(
        a.status.game_mode, s.game_mode,
        "what follows is still in step"
    );
    assert_eq!(a.status.player_count, Some(3));

    // a peer's bNextMap alone, followed by PlayerCount: no map is read
    let a = decode_ok(&hex("2a00 01 809001 07"));
    assert_eq!((a.status.map, a.status.next_map), (None, None));
    assert_eq!(a.status.player_count, Some(7));

    // bMap and bNextMap: both maps with the same MapFields
    let a = decode_ok(&hex("2a00 01 8018 01 4100 6100 4200 6200"));
    let (m, n) = (a.status.map.unwrap(), a.status.next_map.unwrap());
    assert_eq!((m.name.as_str(), m.file_name.as_deref()), ("A", Some("a")));
    assert_eq!((n.name.as_str(), n.file_name.as_deref()), ("B", Some("b")));
}

#[test]
fn empty_lists_have_no_field_mask() {
    let mut s = empty_lists();
    s.game_id = Some(1);
    let q = DefaultQuery {
        request: request::ALL_LISTS.without(request::SERVER_INFO),
        ..DefaultQuery::everything()
    };
    let body = body_of(&s, &q, &UTF8);
    // five counts of 0, no field masks
    assert_eq!(body, hex("0100 3e 00 00 00 00 00"));
    let a = decode_ok(&body);
    assert_eq!(a.status, s);

    // a team count of 0 followed by the player list: nothing between them
    let a = decode_ok(&hex("2a00 06 00 01 04 416c00"));
    assert_eq!(a.status.teams, Some(vec![]));
    assert_eq!(
        a.status.players.unwrap()[0].name.as_deref(),
        Some("Al"),
        "the byte after TeamCount 0 is PlayerCount"
    );
}

#[test]
fn an_empty_mod_name_ends_modinfo() {
    let mut s = demo_state();
    s.mod_info = Some({
        let mut mod_info = ModInfo::default();
        mod_info.name = Text::default();
        mod_info.identifier = Some("ignored".into());
        mod_info.size = Some(1);
        mod_info
    });
    let q = DefaultQuery {
        request: request::SERVER_INFO,
        server_info: server_info::MOD.with(server_info::GAME_TYPE),
        mod_fields: mod_fields::ALL,
        ..DefaultQuery::default()
    };
    let body = body_of(&s, &q, &UTF8);
    // ServerInfoFields 1.0|1.1, ModName "" and no ModFields, then GameType "CTF"
    assert_eq!(body, hex("2a00 01 8003 00 43544600"));
    let a = decode_ok(&body);
    assert_eq!(a.status.mod_info, Some(ModInfo::default()));
    assert_eq!(a.status.game_type.as_deref(), Some("CTF"));

    // a named mod carries its ModFields
    let a = decode_ok(&hex("2a00 01 8003 6d00 03 696400 01000000 43544600"));
    let m = a.status.mod_info.unwrap();
    assert_eq!(
        (m.name.as_str(), m.identifier.as_deref(), m.size),
        ("m", Some("id"), Some(1))
    );
    assert_eq!(a.status.game_type.as_deref(), Some("CTF"));
}

#[test]
fn colored_names_only_with_the_option() {
    let s = demo_state();
    let ask = everything(true);
    // asked, but the option is off (the default): bColoredNames cleared, no colour info
    let body = body_of(&s, &ask, &UTF8);
    assert_eq!(body[2], 0x3f, "RequestFlags without 1.0");
    let a = decode_ok(&body);
    assert!(!a.request_flags.contains(request::COLORED_NAMES));
    assert_eq!(a.status.host_name_color, None);
    assert!(a
        .status
        .players
        .unwrap()
        .iter()
        .all(|p| p.name_color.is_none()));

    // the option is on but the query did not ask
    let on = AnswerOptions {
        utf8: true,
        colors: true,
    };
    let body = body_of(&s, &everything(false), &on);
    assert_eq!(body[2], 0x3f);

    // asked and on: bColoredNames set, every name followed by a StringColorInfo
    let mut s2 = s.clone();
    let mut red = ColorInfo::default();
    red.entries = vec![ColorEntry::new(0, 0x91, Some(0xf800))];
    red.undecoded = vec![];
    s2.players.as_mut().unwrap()[0].name_color = Some(red.clone());
    let body = body_of(&s2, &ask, &on);
    assert_eq!(body[2..4], hex("bf01"));
    let a = decode_ok(&body);
    assert!(a.request_flags.contains(request::COLORED_NAMES));
    assert_eq!(a.status.host_name_color, Some(ColorInfo::default()));
    let players = a.status.players.unwrap();
    assert_eq!(players[0].name_color, Some(red));
    assert_eq!(players[1].name_color, Some(ColorInfo::default()));
    assert!(a
        .status
        .teams
        .unwrap()
        .iter()
        .all(|t| t.name_color == Some(ColorInfo::default())));

    // the host name's colour info sits right after the host name
    let q = DefaultQuery {
        request: request::SERVER_INFO.with(request::COLORED_NAMES),
        server_info: server_info::HOST_NAME.with(server_info::CONNECT_PORT),
        ..DefaultQuery::default()
    };
    let mut tiny = Status::default();
    tiny.game_id = Some(42);
    tiny.host_name = Some("Host".into());
    tiny.connect_port = Some(7777);
    assert_eq!(
        body_of(&tiny, &q, &on),
        hex("2a00 8101 0c 486f737400 00 611e")
    );
}

#[test]
fn lying_counts_are_errors_naming_the_count() {
    for (body, field, offset) in [
        // PlayerCount 1000, PlayerFields bName, 3 bytes left
        ("2a00 04 fee803 04 410042", "PlayerCount", 3),
        ("2a00 02 05 01 4100", "TeamCount", 3),
        ("2a00 08 0a 6100 6200", "RuleCount", 3),
        ("2a00 10 64 02 4100", "AddOnCount", 3),
        ("2a00 20 fe1027 0102", "LimitCount", 3),
        // entries without any field: a count over the fixed limit
        ("2a00 04 fe8813 00", "PlayerCount", 3),
        ("2a00 02 ff00000100 00", "TeamCount", 3),
        // a huge count with the largest entries
        ("2a00 04 ffffffffff bfbfbf01", "PlayerCount", 3),
    ] {
        let bytes = hex(body);
        let e = decode_answer_body(&bytes, true).unwrap_err();
        assert_eq!((e.field, e.offset), (field, offset), "{body}: {e}");
        assert!(e.to_string().contains(field), "{e}");
    }

    // up to the limit, field-less entries are fine
    let mut body = hex("2a00 04 fe");
    body.extend_from_slice(&u16::try_from(MAX_EMPTY_ENTRIES).unwrap().to_le_bytes());
    body.push(0);
    let a = decode_ok(&body);
    assert_eq!(
        a.status.players.unwrap().len(),
        usize::try_from(MAX_EMPTY_ENTRIES).unwrap()
    );

    // the same inside a datagram: offsets count from the first byte of the datagram
    let mut d = Vec::new();
    Header::answer(PacketType::DEFAULT_QUERY).encode(&mut d);
    let start = d.len();
    d.extend_from_slice(&hex("2a00 04 fee803 04 410042"));
    let e = ogp::decode(&d).unwrap_err();
    assert_eq!((e.field, e.offset), ("PlayerCount", start + 3));
}

#[test]
fn unknown_field_bits_are_errors_unknown_sections_are_kept() {
    // ServerInfoFields bit 0.5 is not defined: what follows cannot be read
    let e = decode_answer_body(&hex("2a00 01 20"), true).unwrap_err();
    assert_eq!((e.field, e.offset), ("ServerInfoFields", 3));
    // PlayerFields bit 3.1
    let e = decode_answer_body(&hex("2a00 04 01 80808002"), true).unwrap_err();
    assert_eq!(e.field, "PlayerFields");
    // RequestFlags bit 0.6 (an unknown section after the known ones): a warning
    let a = decode_answer_body(&hex("2a00 40 ffff"), true).unwrap();
    assert_eq!(a.warnings.len(), 1);
    assert_eq!(a.warnings[0].field, "RequestFlags");
    assert_eq!(a.unknown_sections, [0xff, 0xff]);
}

/// A list of more than MAX_LIST_ENTRIES entries is refused before anything is allocated,
/// however small its entries are on the wire (found by fuzzing: a 1 MiB split answer of
/// one-byte players would otherwise expand to ~300 MB).
#[test]
fn huge_lists_of_tiny_entries_are_refused() {
    use ogp_proto::ogp::answer::MAX_LIST_ENTRIES;
    // GameID, RequestFlags = bPlayerList, PlayerCount = 5000 (FE 88 13), PlayerFields =
    // bPlayerFlags, then 5000 one-byte flag entries.
    let mut body = vec![0x2a, 0x00, 0x04, 0xfe, 0x88, 0x13, 0x01];
    body.extend(std::iter::repeat_n(0x01, 5000));
    let e = ogp_proto::ogp::decode_answer_body(&body, true).unwrap_err();
    assert_eq!(e.field, "PlayerCount");
    assert_eq!(
        e.kind,
        ogp_proto::DecodeErrorKind::TooLarge {
            limit: u64::from(MAX_LIST_ENTRIES)
        }
    );
    // 4096 entries are fine
    let mut ok = vec![0x2a, 0x00, 0x04, 0xfe, 0x00, 0x10, 0x01];
    ok.extend(std::iter::repeat_n(0x01, 4096));
    let a = ogp_proto::ogp::decode_answer_body(&ok, true).unwrap();
    assert_eq!(a.status.players.map(|p| p.len()), Some(4096));
}
