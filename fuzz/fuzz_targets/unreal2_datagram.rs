//! Unreal 2: the request and reply decoders on one datagram, the information tail read
//! every way, the mapping, and the client machine.
//!
//! Input: `[a]` then one datagram. `a` picks the limits: `max_players = a % 16 + 1`,
//! `max_rules = a / 16 + 1`, so the caps are reached.
//!
//! Asserts: no panic; errors point into the datagram; a request re-encodes to itself; a
//! reply holds at most `max_rules` rules or `max_players` players, and, when its text
//! is Latin-1 and its strings fit one length byte as we write them, re-encodes to bytes
//! that decode to the same reply; the tail's unread bytes are within it; the status
//! survives its JSON state file (a repeated rule key's values grouped, as JSON keeps
//! them); the client machine fed the datagram as every reply
//! ends.

use std::time::Instant;

use ogp_fuzz::check_error;
use ogp_proto::client::{QueryDriver, Timing};
use ogp_proto::unreal2::client::{QueryMachine, QueryOptions};
use ogp_proto::unreal2::mapping::to_status;
use ogp_proto::unreal2::wire::{
    decode_reply, decode_request, encode_players, encode_rules, DecodeLimits, Reply,
};

/// Whether `s` re-encodes as it was read: Latin-1, and short enough for one string.
fn plain(s: &str) -> bool {
    s.chars().count() <= 126 && s.chars().all(|c| u32::from(c) < 0x100)
}

/// One input of the `unreal2_datagram` target.
pub fn run(data: &[u8]) {
    let Some((&a, datagram)) = data.split_first() else {
        return;
    };
    let len = datagram.len();
    if let Some(r) = decode_request(datagram) {
        let mut b = Vec::new();
        r.encode(&mut b);
        assert_eq!(&b[..], datagram);
    }
    let mut limits = DecodeLimits::default();
    limits.max_players = usize::from(a % 16) + 1;
    limits.max_rules = usize::from(a / 16) + 1;
    match decode_reply(datagram, &limits) {
        Ok(reply) => {
            let mut b = Vec::new();
            let status = match &reply {
                Reply::Info(i) => {
                    for kf in [None, Some(false), Some(true)] {
                        let e = i.extra(kf);
                        assert!(e.unread <= i.tail.len());
                    }
                    // A UCS-2 name whose first unit ends in 01 reads back as the stray 01
                    // some servers send (the protocol cannot tell them apart).
                    let stray = i.server_name_ucs2
                        && i.server_name
                            .chars()
                            .next()
                            .is_some_and(|c| u32::from(c) & 0xff == 1);
                    if !stray
                        && [&i.ip, &i.server_name, &i.map, &i.game_type]
                            .iter()
                            .all(|s| plain(s))
                    {
                        i.encode(&mut b);
                        assert_eq!(decode_reply(&b, &limits).expect("re-encoded info"), reply);
                    }
                    to_status(Some(i), None, None)
                }
                Reply::Rules(r) => {
                    assert!(r.len() <= limits.max_rules);
                    if r.iter().all(|(k, v)| plain(k) && plain(v)) {
                        encode_rules(0x80, r, &mut b);
                        assert_eq!(decode_reply(&b, &limits).expect("re-encoded rules"), reply);
                    }
                    to_status(None, Some(r), None)
                }
                Reply::Players(p) => {
                    assert!(p.len() <= limits.max_players);
                    if p.iter().all(|e| plain(&e.name)) {
                        encode_players(0x80, p, &mut b);
                        assert_eq!(
                            decode_reply(&b, &limits).expect("re-encoded players"),
                            reply
                        );
                    }
                    to_status(None, None, Some(p))
                }
            };
            // A key sent more than once (`Mutator`) comes back with its values moved up to
            // its first place (docs/json.md): the one change JSON makes.
            ogp_fuzz::same_through_json(&status);
        }
        Err(e) => check_error(&e, 0, len),
    }
    let now = Instant::now();
    let mut opts = QueryOptions::default();
    opts.limits = limits;
    let mut m = QueryMachine::new(opts, Timing::default().retries(0), now);
    let ended = ogp_fuzz::drive_client(&mut m, 16, |m, t| {
        m.handle_datagram(t, datagram);
        m.handle_datagram(t, datagram);
    });
    assert!(ended, "the client did not end in 16 rounds");
}
