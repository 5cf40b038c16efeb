//! Properties of the Unreal 2 codec and client: any bytes decode to a value or an error
//! (errors point into the datagram); rules and players with any text (Latin-1 or UCS-2,
//! colour codes) encode and decode back to themselves, and every cut of them is an error
//! or a prefix; a rules reply split over any number of datagrams, in order, is gathered
//! whole by the client; the client ends on any sequence of datagrams.

use std::time::Instant;

use ogp_proto::client::{QueryDriver, Timing};
use ogp_proto::unreal2::client::{QueryMachine, QueryOptions};
use ogp_proto::unreal2::wire::{
    decode_reply, encode_players, encode_rules, strip_colors, DecodeLimits, Info, Reply,
};
use ogp_proto::unreal2::PlayerEntry;
use proptest::prelude::*;

/// Text as servers send it: Latin-1 or wider, with colour codes; no NUL (a string ends
/// there), at most 120 UTF-16 units (one length byte of UCS-2).
fn text() -> impl Strategy<Value = String> {
    proptest::string::string_regex("(\u{1b}[\u{1}-\u{ff}]{3}|[^\u{0}\u{1}]){0,40}")
        .unwrap()
        // at most 120 UTF-16 units: what one UCS-2 length byte carries, with its NUL
        .prop_map(|s| {
            let mut units = 0;
            s.chars()
                .take_while(|c| {
                    units += c.len_utf16();
                    units <= 120
                })
                .collect::<String>()
        })
        // a UCS-2 string that starts with a unit whose low byte is 01 reads as the stray
        // 01 some servers send (gamedig's rule, which we follow): not generated
        .prop_filter("no leading xx01 unit in UCS-2", |s| {
            s.chars().all(|c| u32::from(c) < 0x100)
                || s.encode_utf16().next().is_none_or(|u| u & 0xff != 1)
        })
}

fn limits() -> DecodeLimits {
    DecodeLimits::default()
}

proptest! {
    #[test]
    fn any_bytes_decode_or_fail(head in 0x70u8..0xa0, kind in 0u8..3, body in proptest::collection::vec(any::<u8>(), 0..300)) {
        let mut d = vec![head, 0, 0, 0, kind];
        d.extend(&body);
        match decode_reply(&d, &limits()) {
            Ok(Reply::Info(i)) => {
                for kf in [None, Some(true), Some(false)] {
                    prop_assert!(i.extra(kf).unread <= i.tail.len());
                }
            }
            Ok(_) => {}
            Err(e) => prop_assert!(e.offset <= d.len(), "{}", e),
        }
    }

    #[test]
    fn rules_round_trip_and_cuts_are_prefixes(pairs in proptest::collection::vec((text(), text()), 0..6)) {
        let pairs: Vec<_> = pairs.into_iter().map(|(k, v)| (k.as_str().into(), v.as_str().into())).collect();
        let mut b = Vec::new();
        encode_rules(0x80, &pairs, &mut b);
        prop_assert_eq!(decode_reply(&b, &limits()), Ok(Reply::Rules(pairs.clone())));
        for n in 5..b.len() {
            if let Ok(Reply::Rules(r)) = decode_reply(&b[..n], &limits()) {
                prop_assert!(r.len() < pairs.len() && pairs.starts_with(&r));
            }
        }
    }

    #[test]
    fn players_round_trip(entries in proptest::collection::vec((1u32.., text(), any::<u32>(), any::<i32>(), any::<u32>()), 0..10)) {
        let players: Vec<PlayerEntry> = entries
            .into_iter()
            .map(|(id, name, ping, score, stats)| PlayerEntry::new(id, name, ping, score, stats))
            .collect();
        let mut b = Vec::new();
        encode_players(0x80, &players, &mut b);
        prop_assert_eq!(decode_reply(&b, &limits()), Ok(Reply::Players(players.clone())));
        // the names without colour codes hold no control character
        for p in &players {
            prop_assert!(!strip_colors(&p.name).chars().any(char::is_control));
        }
    }

}

proptest! {
    // The client properties run the machine: fewer cases (a debug build, a shared machine).
    #![proptest_config(ProptestConfig::with_cases(64))]

    #[test]
    fn split_rules_are_gathered_whole(
        pairs in proptest::collection::vec(("[A-Za-z ]{1,20}", "[ -~]{0,20}"), 1..60),
        cuts in proptest::collection::vec(any::<prop::sample::Index>(), 0..5),
    ) {
        let pairs: Vec<_> = pairs.into_iter().map(|(k, v)| (k.as_str().into(), v.as_str().into())).collect();
        let mut at: Vec<usize> = cuts.iter().map(|i| i.index(pairs.len())).collect();
        at.push(0);
        at.push(pairs.len());
        at.sort_unstable();
        at.dedup();
        let datagrams: Vec<Vec<u8>> = at
            .windows(2)
            .map(|w| {
                let mut b = Vec::new();
                encode_rules(0x80, &pairs[w[0]..w[1]], &mut b);
                b
            })
            .collect();
        let mut info = Vec::new();
        let mut i = Info::default();
        i.version = 0x80;
        i.server_name = "s".into();
        i.encode(&mut info);
        let t0 = Instant::now();
        let mut m = QueryMachine::new(QueryOptions::default(), Timing::default(), t0);
        let mut now = t0;
        for _ in 0..50 {
            while let Some(req) = m.poll_transmit(now) {
                match req.get(4) {
                    Some(0) => m.handle_datagram(now, &info),
                    Some(1) => datagrams.iter().for_each(|d| m.handle_datagram(now, d)),
                    _ => {}
                }
            }
            let Some(t) = m.poll_timeout() else { break };
            now = t;
            m.handle_timeout(now);
        }
        let a = m.take_result().unwrap().unwrap();
        prop_assert_eq!(a.details.rules.as_ref(), Some(&pairs));
        prop_assert_eq!(a.details.datagrams[1], datagrams.len());
        // no players were counted: none asked
        prop_assert_eq!(a.details.players.as_deref(), Some(&[][..]));
    }

    #[test]
    fn the_client_ends_on_any_datagrams(datagrams in proptest::collection::vec(proptest::collection::vec(any::<u8>(), 0..64), 0..8), heads in proptest::collection::vec(0u8..3, 8)) {
        let t0 = Instant::now();
        let mut m = QueryMachine::new(QueryOptions::default(), Timing::default().retries(1), t0);
        let mut now = t0;
        let mut ended = false;
        for _ in 0..64 {
            while let Some(req) = m.poll_transmit(now) {
                let _ = req;
                for (d, h) in datagrams.iter().zip(&heads) {
                    let mut g = vec![0x80, 0, 0, 0, *h];
                    g.extend(d);
                    m.handle_datagram(now, &g);
                    m.handle_datagram(now, d);
                }
            }
            if m.take_result().is_some() {
                ended = true;
                break;
            }
            let Some(t) = m.poll_timeout() else { break };
            now = t;
            m.handle_timeout(now);
        }
        prop_assert!(ended);
    }
}
