//! The Savage 2 query as a machine of the core's one-request shape: the byte `01`,
//! resent by the core's timers until a reply decodes.
//!
//! | Status field | from |
//! |---|---|
//! | `host_name` | the name without `^x` colour codes (as sent in `host_name_raw`) |
//! | `player_count`, `slot_max` | players, max players |
//! | `map`, `next_map` | the map, the next map |
//! | `game_type` | the game type |
//! | `game_version` | the version |
//! | `rules` | `time`, `location`, `minplayers`, `minlevel` |
//!
//! `game_name` is `Savage 2`.

use super::{decode_reply, strip_colours, Reply, REQUEST};
use crate::client_oneshot::{fixed_request, oneshot_machine};
use crate::model::{MapInfo, Rules};
use crate::protocol::Protocol;
use crate::Status;

/// What a Savage 2 answer says beyond the status: the reply as sent.
pub type Details = Reply;

/// The status a reply describes (see the module's table).
pub fn reply_to_status(r: &Reply) -> Status {
    let opt_map = |m: &str| (!m.is_empty()).then(|| MapInfo::named(m));
    Status {
        game_name: Some("Savage 2".into()),
        host_name: Some(strip_colours(&r.name).into()),
        host_name_raw: Some(r.name.clone()),
        player_count: Some(r.players.into()),
        slot_max: Some(r.max_players.into()),
        map: opt_map(&r.map),
        next_map: opt_map(&r.next_map),
        game_type: Some(r.game_type.clone()),
        game_version: Some(r.version.clone()),
        rules: Some(Rules(vec![
            ("time".into(), r.time.clone()),
            ("location".into(), r.location.clone()),
            ("minplayers".into(), r.min_players.to_string().into()),
            ("minlevel".into(), r.min_level.to_string().into()),
        ])),
        ..Status::default()
    }
}

// no magic: whatever does not decode is malformed
fixed_request!(Savage2, "info", REQUEST, decode_reply, 0, "");

oneshot_machine!(Protocol::Savage2, Savage2, Details);

#[cfg(test)]
mod tests {
    use std::time::Instant;

    use super::*;
    use crate::client_core::{drive_to_end, QueryDriver, QueryError, Timing};

    pub(crate) fn sample() -> Reply {
        Reply {
            header: [0x01, 0, 0, 0, 0x6a, 0x2b, 0, 0, 0, 0, 0, 0],
            name: "^yNewerth ^wCentral".into(),
            players: 12,
            max_players: 40,
            time: "0:42:10".into(),
            map: "crossroads".into(),
            next_map: "eden2".into(),
            location: "EU".into(),
            min_players: 4,
            game_type: "Normal".into(),
            version: "2.1.0.2".into(),
            min_level: 0,
            warnings: Vec::new(),
        }
    }

    #[test]
    fn a_reply_round_trips_and_maps() {
        let mut b = Vec::new();
        sample().encode(&mut b);
        assert_eq!(decode_reply(&b).unwrap(), sample());
        for n in 0..b.len() {
            assert!(decode_reply(&b[..n]).is_err(), "{n}");
        }
        let t0 = Instant::now();
        let mut m = QueryMachine::new(QueryOptions::default(), Timing::default(), 1, t0);
        m.handle_datagram(t0, b"short");
        assert_eq!(drive_to_end(&mut m, t0, Some(&b)), 1);
        let a = m.take_result().unwrap().unwrap();
        assert_eq!(a.status.host_name.as_deref(), Some("Newerth Central"));
        assert_eq!(a.status.next_map.unwrap().name, "eden2");
        assert_eq!(a.status.rules.unwrap().get("location"), Some("EU"));
        // a reply without NULs: malformed, the query ends malformed
        let mut m = QueryMachine::new(QueryOptions::default(), Timing::default(), 1, t0);
        assert_eq!(drive_to_end(&mut m, t0, Some(&[b'x'; 2000])), 3);
        assert!(matches!(
            m.take_result(),
            Some(Err(QueryError::Malformed { .. }))
        ));
    }
}
