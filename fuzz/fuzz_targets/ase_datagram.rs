//! ASE: the reply decoder on one datagram, the mapping, and the client machine.
//!
//! Input: one datagram.
//!
//! Asserts: no panic; errors and warnings point into the datagram; a reply keeps at most
//! `MAX_RULES` rules and `MAX_PLAYERS` players, at most one of each per two bytes of the
//! datagram; the status survives its JSON state file (rules grouped by key), its teams
//! are at most `MAX_TEAMS` and every player's team index names one of them; a reply
//! without warnings re-encodes to the datagram itself (with the rules' empty key added
//! when the datagram ends before it); the client machine fed the datagram ends.

use std::time::Instant;

use ogp_fuzz::{answer_every_send, check_error};
use ogp_proto::ase::client::{QueryMachine, QueryOptions};
use ogp_proto::ase::mapping::{reply_to_status, MAX_TEAMS};
use ogp_proto::ase::wire::{decode_reply, MAX_PLAYERS, MAX_RULES};
use ogp_proto::client::Timing;

/// One input of the `ase_datagram` target.
pub fn run(datagram: &[u8]) {
    let len = datagram.len();
    match decode_reply(datagram) {
        Ok(r) => {
            for w in &r.warnings {
                assert!(w.offset <= len, "warning at {} of {len}: {w}", w.offset);
            }
            assert!(r.rules.len() <= MAX_RULES && r.rules.len() * 2 <= len);
            assert!(r.players.len() <= MAX_PLAYERS && r.players.len() <= len);
            let status = reply_to_status(&r);
            ogp_fuzz::same_through_json(&status);
            let teams = status.teams.as_ref().map_or(0, Vec::len);
            assert!(teams <= MAX_TEAMS);
            for p in status.players.iter().flatten() {
                if let Some(t) = p.team {
                    assert!(
                        usize::try_from(t).is_ok_and(|t| t < teams),
                        "team {t} of {teams}"
                    );
                }
            }
            let latin1 = r.warnings.iter().any(|w| w.message.contains("Latin-1"));
            if r.warnings.is_empty()
                && r.players.len() < MAX_PLAYERS
                && r.rules.len() < MAX_RULES
                && !latin1
            {
                let mut b = Vec::new();
                r.encode(&mut b);
                // a reply that ends before the rules' empty key gets one
                let mut ended = datagram.to_vec();
                ended.push(1);
                assert!(b == datagram || b == ended, "re-encodes to itself");
            }
        }
        Err(e) => check_error(&e, 0, len),
    }
    let now = Instant::now();
    let mut m = QueryMachine::new(QueryOptions::default(), Timing::default().retries(0), now);
    answer_every_send(&mut m, datagram);
}
