//! Properties of the Bedrock codec: any pong encodes and decodes back to itself; any
//! truncation of an encoded pong or ping is an error, never a panic; any bytes decode to
//! a value or an error; a full advertisement maps to a status and back without losing the
//! host name, counts, version or map.

use ogp_proto::bedrock::mapping::{pong_to_status, status_to_advertisement};
use ogp_proto::bedrock::wire::{Advertisement, Ping, Pong};
use proptest::prelude::*;

fn field() -> impl Strategy<Value = String> {
    // anything but ';' (the separator), with § codes and non-ASCII text
    proptest::string::string_regex("(§[0-9a-z]|[^;§]){0,12}").unwrap()
}

proptest! {
    #[test]
    fn pong_round_trips_and_every_truncation_fails(
        time in any::<u64>(),
        guid in any::<u64>(),
        text in proptest::string::string_regex(".{0,200}").unwrap(),
    ) {
        let pong = Pong { time, server_guid: guid, advertisement: text.as_str().into() };
        let mut b = Vec::new();
        pong.encode(&mut b);
        let d = Pong::decode(&b).unwrap();
        prop_assert_eq!(&d.pong, &pong);
        prop_assert!(d.warnings.is_empty());
        for n in 0..b.len() {
            prop_assert!(Pong::decode(&b[..n]).is_err());
        }
    }

    #[test]
    fn ping_round_trips_and_every_truncation_fails(time in any::<u64>(), guid in any::<u64>(), open in any::<bool>()) {
        let p = Ping { time, client_guid: guid, open_only: open };
        let mut b = Vec::new();
        p.encode(&mut b);
        prop_assert_eq!(Ping::decode(&b), Ok(p));
        for n in 0..b.len() {
            prop_assert!(Ping::decode(&b[..n]).is_err());
        }
    }

    #[test]
    fn any_bytes_decode_or_fail(bytes in proptest::collection::vec(any::<u8>(), 0..300)) {
        let _ = Ping::decode(&bytes);
        if let Ok(d) = Pong::decode(&bytes) {
            for w in &d.warnings {
                prop_assert!(w.offset <= bytes.len());
            }
        }
    }

    #[test]
    fn full_advertisements_map_to_the_model_and_back(
        motd in field(), version in field(), level in field(), mode in field(),
        protocol in 0u32..2000, online in 0u32..1000, max in 0u32..1000,
        port in 1u16.., guid in any::<u64>(),
    ) {
        let text = format!("MCPE;{motd};{protocol};{version};{online};{max};{guid};{level};{mode};1;{port};19133;");
        let pong = Pong { time: 1, server_guid: guid, advertisement: text.as_str().into() };
        let s = pong_to_status(&pong);
        prop_assert_eq!(s.player_count, Some(online));
        prop_assert_eq!(s.slot_max, Some(max));
        prop_assert_eq!(s.connect_port, Some(port));
        let a = status_to_advertisement(&s, guid);
        // nothing edited: the same string comes back
        let back = a.to_text();
        prop_assert_eq!(back.as_str(), text.as_str());
        prop_assert_eq!(Advertisement::parse(&text).fields.len(), 12);
    }
}
