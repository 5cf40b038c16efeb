//! The rFactor query as a machine of the core's one-request shape: `rF_S`, resent by the
//! core's timers until a reply decodes.
//!
//! | Status field | from |
//! |---|---|
//! | `host_name`, `map` | the name, the track |
//! | `player_count`, `slot_max`, `bot_count` | players, max players, bots (AI) |
//! | `password` | special bit 1 |
//! | `game_version` | the version, a number as sent (e.g. `1255`) |
//! | `game_type` | the game (mod) field |
//! | `connect_port` | the game port |
//! | `rules` | `gamename`, `motd`, `region`, `vehicles`, `aids` (names, `,`-separated), `damage`, `laps`, `time`, `racecast`, `fixed_setups` (`0` or `1`) |
//!
//! `game_name` is `rFactor`.

use super::{decode_reply, Reply, AIDS, REQUEST};
use crate::client_oneshot::{fixed_request, oneshot_machine};
use crate::model::{MapInfo, Rules};
use crate::protocol::Protocol;
use crate::Status;

/// What an rFactor answer says beyond the status: the reply as sent.
pub type Details = Reply;

/// The names of the aids whose bits are set in `bits`.
pub fn aid_names(bits: u16) -> Vec<&'static str> {
    AIDS.iter()
        .enumerate()
        .filter(|&(i, _)| bits & (1 << i) != 0)
        .map(|(_, n)| *n)
        .collect()
}

/// The status a reply describes (see the module's table).
pub fn reply_to_status(r: &Reply) -> Status {
    let bit = |i: u32| if r.special & (1 << i) != 0 { "1" } else { "0" };
    let laps = if r.laps16 % 16 == 0 {
        (r.laps16 / 16).to_string()
    } else {
        format!("{}", f64::from(r.laps16) / 16.0)
    };
    Status {
        game_name: Some("rFactor".into()),
        host_name: Some(r.name.clone()),
        map: (!r.map.is_empty()).then(|| MapInfo::named(r.map.clone())),
        player_count: Some(r.players.into()),
        slot_max: Some(r.max_players.into()),
        bot_count: Some(r.bots.into()),
        password: Some(r.special & 2 != 0),
        game_version: Some(r.version.to_string().into()),
        game_type: (!r.game.is_empty()).then(|| r.game.clone()),
        connect_port: (r.game_port != 0).then_some(r.game_port),
        rules: Some(Rules(vec![
            ("gamename".into(), r.game_name.clone()),
            ("motd".into(), r.motd.clone()),
            ("region".into(), r.region.to_string().into()),
            ("vehicles".into(), r.vehicles.clone()),
            ("aids".into(), aid_names(r.aids).join(",").into()),
            ("damage".into(), r.damage.to_string().into()),
            ("laps".into(), laps.into()),
            ("time".into(), r.time.to_string().into()),
            ("racecast".into(), bit(2).into()),
            ("fixed_setups".into(), bit(4).into()),
        ])),
        ..Status::default()
    }
}

// no magic: whatever does not decode is malformed
fixed_request!(RFactor, "status", REQUEST, decode_reply, 0, "");

oneshot_machine!(Protocol::Rfactor, RFactor, Details);

#[cfg(test)]
mod tests {
    use std::time::Instant;

    use super::*;
    use crate::client_core::{drive_to_end, QueryDriver, QueryError, Timing};

    pub(crate) fn sample() -> Reply {
        Reply {
            game_name: "rFactor".into(),
            full_update: 1,
            region: 2,
            ip: [192, 0, 2, 7],
            size: 0,
            version: 1255,
            racecast_version: 0,
            game_port: 34397,
            query_port: 34297,
            game: "ARCA Sim Racing".into(),
            name: "Daytona Nights".into(),
            map: "Daytona International".into(),
            motd: "Welcome, keep it clean".into(),
            aids: 0b101,
            ping: 0,
            flags: 0,
            rate: 3,
            players: 5,
            max_players: 20,
            bots: 2,
            special: 2 | 16,
            damage: 50,
            rules: 0,
            credits1: 0,
            credits2: 0,
            time: 45,
            laps16: 24,
            tail: [0; 3],
            vehicles: "ARCA_2008".into(),
            warnings: Vec::new(),
        }
    }

    #[test]
    fn a_reply_round_trips_and_maps() {
        let mut b = Vec::new();
        sample().encode(&mut b);
        assert_eq!(b.len(), super::super::FIXED_LEN + "ARCA_2008".len() + 1);
        assert_eq!(decode_reply(&b).unwrap(), sample());
        for n in 0..super::super::FIXED_LEN {
            assert!(decode_reply(&b[..n]).is_err(), "{n}");
        }
        // the vehicle classes without their NUL: read to the end
        assert_eq!(decode_reply(&b[..b.len() - 1]).unwrap(), sample());
        let t0 = Instant::now();
        let mut m = QueryMachine::new(QueryOptions::default(), Timing::default(), 1, t0);
        m.handle_datagram(t0, b"short");
        assert_eq!(drive_to_end(&mut m, t0, Some(&b)), 1);
        let a = m.take_result().unwrap().unwrap();
        let st = a.status;
        assert_eq!(st.host_name.as_deref(), Some("Daytona Nights"));
        assert_eq!(st.password, Some(true));
        assert_eq!(st.connect_port, Some(34397));
        let rules = st.rules.unwrap();
        assert_eq!(rules.get("aids"), Some("TractionControl,StabilityControl"));
        assert_eq!(rules.get("laps"), Some("1.5"));
        assert_eq!(rules.get("fixed_setups"), Some("1"));
        assert_eq!(rules.get("racecast"), Some("0"));
        // a short reply: malformed, the query ends malformed
        let mut m = QueryMachine::new(QueryOptions::default(), Timing::default(), 1, t0);
        assert_eq!(drive_to_end(&mut m, t0, Some(&b[..100])), 3);
        assert!(matches!(
            m.take_result(),
            Some(Err(QueryError::Malformed { .. }))
        ));
    }
}
