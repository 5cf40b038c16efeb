//! SA-MP / open.mp and VC:MP (the `MP04` dialect): the reply decoder on one datagram,
//! the mapping, and the client machines.
//!
//! Input: one datagram.
//!
//! Asserts: no panic; errors and warnings point into the datagram; at most `MAX_RULES`
//! rules and `MAX_PLAYERS` players, no more than the datagram's bytes allow; a reply read
//! without a warning re-encodes to itself; the status of an information reply survives
//! its JSON state file (rules grouped by key); the client machine fed the datagram ends.
//! VC:MP: the same, except that a reply re-encodes to bytes that decode to the same
//! reply (its version is NUL-padded: bytes after the NUL are not kept).

use std::time::Instant;

use ogp_fuzz::{answer_every_send, check_error, check_warnings};
use ogp_proto::client::Timing;
use ogp_proto::samp::client::{to_status, Details, QueryMachine, QueryOptions};
use ogp_proto::samp::wire::{decode_reply_as, Body, Dialect, MAX_PLAYERS, MAX_RULES};
use ogp_proto::Charset;

/// One input of the `samp_datagram` target.
pub fn run(datagram: &[u8]) {
    decode(datagram, &Dialect::SAMP);
    decode(datagram, &Dialect::VCMP);
    let now = Instant::now();
    let mut m = QueryMachine::new(QueryOptions::default(), Timing::default().retries(0), now);
    answer_every_send(&mut m, datagram);
    let mut m = ogp_proto::vcmp::client::QueryMachine::new(
        QueryOptions::default(),
        Timing::default().retries(0),
        now,
    );
    answer_every_send(&mut m, datagram);
}

fn decode(datagram: &[u8], dialect: &Dialect) {
    let len = datagram.len();
    match decode_reply_as(datagram, Charset::Auto, dialect) {
        Ok(r) => {
            check_warnings(&r.warnings, 0, len);
            let mut d = Details::default();
            match &r.body {
                Body::Rules(rules) => {
                    assert!(rules.len() <= MAX_RULES && rules.len() * 2 <= len);
                    d.rules = Some(rules.clone());
                }
                Body::Players(p) => {
                    assert!(p.len() <= MAX_PLAYERS && p.len() * 5 <= len);
                    d.players = Some(p.clone());
                }
                Body::Info(i) => d.info = i.clone(),
                Body::Extra(e) => d.extra = Some(e.clone()),
                _ => {}
            }
            let latin1 = r.warnings.iter().any(|w| w.message.contains("Latin-1"));
            if r.warnings.is_empty() && !latin1 {
                let mut b = Vec::new();
                r.encode_as(dialect, &mut b);
                if dialect.version_len == 0 {
                    assert_eq!(b, datagram, "re-encodes to itself");
                } else {
                    let again = decode_reply_as(&b, Charset::Auto, dialect).expect("re-encoded");
                    assert_eq!(again.body, r.body, "re-encodes to the same reply");
                }
            }
            let status = to_status(&d);
            ogp_fuzz::same_through_json(&status);
        }
        Err(e) => check_error(&e, 0, len),
    }
}
