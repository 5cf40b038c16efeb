//! GameSpy v2: the request and reply decoders on one datagram, the mapping, and the
//! client machine.
//!
//! Input: one datagram.
//!
//! Asserts: no panic; errors and warnings point into the datagram; a decoded request
//! re-encodes to the datagram; a decoded reply keeps at most `MAX_KEYS` server keys and
//! `MAX_COLUMNS` columns of at most 255 rows each (a counted section) or `MAX_ROWS` (one
//! without a count), and holds no more values than the datagram has bytes; the status
//! survives its JSON state file (rules grouped by key), with a team index below the
//! number of teams whenever the reply lists teams and counts from 0; a reply re-encoded
//! (UTF-8) decodes to the same columns when every column is as long as the section's
//! count; the client machine fed the datagram, with our id written in, ends.

use std::time::Instant;

use ogp_fuzz::{answer_every_send, check_error};
use ogp_proto::client::Timing;
use ogp_proto::gamespy2::client::{QueryMachine, QueryOptions};
use ogp_proto::gamespy2::mapping::{info_to_status, zero_based};
use ogp_proto::gamespy2::wire::{
    decode_reply, encode_reply, Request, MAX_COLUMNS, MAX_KEYS, MAX_ROWS,
};

/// One input of the `gs2_datagram` target.
pub fn run(datagram: &[u8]) {
    let len = datagram.len();
    match Request::decode(datagram) {
        Ok(r) => {
            let mut b = Vec::new();
            r.encode(&mut b);
            if datagram[7..].iter().all(|&x| x == 0 || x == 0xff) {
                assert_eq!(b, datagram);
            }
        }
        Err(e) => check_error(&e, 0, len),
    }
    match decode_reply(datagram) {
        Ok(r) => {
            for w in &r.warnings {
                assert!(w.offset <= len, "warning at {} of {len}: {w}", w.offset);
            }
            let info = &r.info;
            assert!(info.server.len() <= MAX_KEYS);
            let mut values = info.server.len() * 2;
            for (cols, count) in [(&info.players, r.player_count), (&info.teams, r.team_count)] {
                assert!(cols.len() <= MAX_COLUMNS);
                let cap = count.map_or(MAX_ROWS, usize::from);
                for c in cols.iter() {
                    assert!(c.values.len() <= cap, "{} rows, cap {cap}", c.values.len());
                    values += c.values.len();
                }
            }
            assert!(values <= len, "{values} values from {len} bytes");
            let status = info_to_status(info);
            ogp_fuzz::same_through_json(&status);
            let teams = info.teams.iter().map(|c| c.values.len()).max().unwrap_or(0);
            if zero_based(info) && teams > 0 {
                for p in status.players.iter().flatten() {
                    if let Some(t) = p.team {
                        assert!(t < i32::try_from(teams).unwrap(), "team {t} of {teams}");
                    }
                }
            }
            let full = |cols: &[ogp_proto::gamespy3::Column], count: Option<u8>| {
                count.is_some_and(|n| cols.iter().all(|c| c.values.len() == usize::from(n)))
                    && cols
                        .iter()
                        .all(|c| !c.key.is_empty() && !c.key.contains('\0'))
            };
            let clean = |s: &str| !s.is_empty() && !s.contains('\0');
            if full(&info.players, r.player_count)
                && full(&info.teams, r.team_count)
                && info
                    .server
                    .iter()
                    .all(|(k, v)| clean(k) && !v.contains('\0'))
                && info
                    .players
                    .iter()
                    .chain(&info.teams)
                    .all(|c| c.values.iter().all(|v| !v.contains('\0')))
                && !info.server.is_empty()
                && info.server.len() < MAX_KEYS
            {
                let mut b = Vec::new();
                encode_reply(r.id, info, &mut b);
                let again = decode_reply(&b).expect("re-encoded reply");
                assert_eq!(again.info.server, info.server);
                assert_eq!(again.info.players, info.players);
                assert_eq!(again.info.teams, info.teams);
            }
        }
        Err(e) => check_error(&e, 0, len),
    }
    let now = Instant::now();
    let mut m = QueryMachine::new(
        QueryOptions::default(),
        Timing::default().retries(0),
        5,
        now,
    );
    let mut reply = datagram.to_vec();
    if let Some(id) = reply.get_mut(1..5) {
        id.copy_from_slice(&5u32.to_be_bytes());
    }
    answer_every_send(&mut m, &reply);
}
