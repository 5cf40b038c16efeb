//! The Tribes 1 query as a machine of the core's one-request shape (Starsiege's is
//! [`super::starsiege::client`], the same machine with the request type `72`): the
//! request, resent by the core's timers until a reply with our challenge decodes.
//!
//! | Status field | from |
//! |---|---|
//! | `game_name` | the game (`Tribes`, `Starsiege`) |
//! | `host_name`, `game_version`, `map` | the name, the version, the map |
//! | `game_type` | Tribes' game type |
//! | `player_count`, `slot_max`, `password` | players, max players, the password flag |
//! | `server_type` | dedicated or listen |
//! | `teams` | Tribes' teams: name, and `score` when a field says it |
//! | `players` | name, ping, loss, team (Tribes: the team byte; Starsiege: 1 yellow, 2 blue, 4 red, 8 purple), Tribes' `score` and `kills` fields; the other fields in `extra` |
//! | `rules` | the CPU, mod, MOTD (Tribes); drop-in, in progress, team play, factory vehicles, tech mix, the six limits, players sent (Starsiege) |

use super::{decode_reply, request, Reply, HEADER_LEN, TRIBES};
use crate::client_oneshot::{oneshot_machine, OneShot, Read};
use crate::model::{MapInfo, Player, Rules, ServerType, Team};
use crate::protocol::Protocol;
use crate::Status;

/// What a Tribes 1 or Starsiege answer says beyond the status: the reply as sent.
pub type Details = Reply;

fn field<'a>(values: &'a [(crate::text::Text, crate::text::Text)], k: &str) -> Option<&'a str> {
    values.iter().find(|(f, _)| f == k).map(|(_, v)| v.as_str())
}

/// The status a reply describes (see the module's table).
pub fn reply_to_status(r: &Reply) -> Status {
    Status {
        game_name: Some(r.game.clone()),
        host_name: Some(r.name.clone()),
        game_version: Some(r.version.clone()),
        map: (!r.map.is_empty()).then(|| MapInfo::named(r.map.clone())),
        game_type: (!r.game_type.is_empty()).then(|| r.game_type.clone()),
        player_count: Some(r.players),
        slot_max: Some(r.max_players),
        password: Some(r.password),
        server_type: Some(if r.dedicated {
            ServerType::Dedicated
        } else {
            ServerType::Listen
        }),
        teams: (!r.teams.is_empty()).then(|| {
            r.teams
                .iter()
                .map(|t| Team {
                    name: Some(t.name.clone()),
                    score: field(&t.values, "score").and_then(|v| v.parse().ok()),
                    ..Team::default()
                })
                .collect()
        }),
        players: Some(
            r.player_list
                .iter()
                .map(|p| Player {
                    name: Some(p.name.clone()),
                    ping: p.ping,
                    loss: p.loss.map(u32::from),
                    team: Some(p.team.into()),
                    score: field(&p.values, "score").and_then(|v| v.parse().ok()),
                    kills: field(&p.values, "kills").and_then(|v| v.parse().ok()),
                    ..Player::default()
                })
                .collect(),
        ),
        rules: Some(Rules(r.rules.clone())),
        ..Status::default()
    }
}

/// Tribes 1 on the one-request shape: `KIND` is the request type (`62` Tribes, `72`
/// Starsiege); the challenge is the query's id's low 16 bits.
#[derive(Debug, Clone)]
pub struct Tribes<const KIND: u8> {
    challenge: u16,
}

impl<const KIND: u8> OneShot for Tribes<KIND> {
    type Details = Details;
    const WHAT: &'static str = "info";

    fn new(id: u32) -> Self {
        Self {
            challenge: (id & 0xFFFF) as u16,
        }
    }

    fn request(&self, out: &mut Vec<u8>) {
        request(KIND, self.challenge, out);
    }

    fn read(&mut self, datagram: &[u8]) -> Read<Details> {
        match decode_reply(datagram, KIND) {
            Ok(r) if r.challenge != self.challenge => {
                Read::NotOurs("not a reply with our challenge")
            }
            got => Read::decoded(got, HEADER_LEN, "not a reply to our request", |r| {
                (reply_to_status(&r), r.clone(), r.warnings)
            }),
        }
    }
}

oneshot_machine!(Protocol::Tribes1, Tribes<TRIBES>, Details);

#[cfg(test)]
mod tests {
    use std::time::Instant;

    use super::*;
    use crate::client_core::{drive_to_end, QueryDriver, Timing};
    use crate::client_oneshot::put_pstr8;

    /// A Tribes reply in the documented layout: two teams, two players.
    pub(crate) fn tribes(challenge: u16) -> Vec<u8> {
        let mut b = vec![0x63];
        b.extend_from_slice(&challenge.to_le_bytes());
        b.push(0x62);
        for s in ["Tribes", "1.11", "Tribes Vets"] {
            put_pstr8(&mut b, s);
        }
        b.extend_from_slice(&[1, 0, 2, 32]);
        b.extend_from_slice(&450u16.to_le_bytes());
        for s in ["base", "CTF", "Raindance", "Welcome"] {
            put_pstr8(&mut b, s);
        }
        b.push(2);
        put_pstr8(&mut b, "Team Name\t\u{1}Score");
        put_pstr8(&mut b, "Player Name\t\u{1}Ping\t\u{1}Score\t\u{1}Kills");
        for (t, sc) in [("Blood Eagle", "3"), ("Diamond Sword", "1")] {
            put_pstr8(&mut b, t);
            put_pstr8(&mut b, &format!("%t\t{sc}"));
        }
        for (ping, team, n, vals) in [
            (20u8, 0u8, "Gravity", "%n\t%p\t12\t4"),
            (35, 1, "Vic", "%n\t%p\t7\t2"),
        ] {
            b.extend_from_slice(&[ping, 0, team]);
            put_pstr8(&mut b, n);
            put_pstr8(&mut b, vals);
        }
        b
    }

    #[test]
    fn a_tribes_reply_maps_its_fields() {
        let b = tribes(9);
        let r = decode_reply(&b, TRIBES).unwrap();
        assert!(r.warnings.is_empty(), "{:?}", r.warnings);
        let s = reply_to_status(&r);
        assert_eq!(s.host_name.as_deref(), Some("Tribes Vets"));
        assert_eq!((s.player_count, s.slot_max), (Some(2), Some(32)));
        assert_eq!(s.teams.as_ref().unwrap()[0].score, Some(3));
        let p = &s.players.as_ref().unwrap()[1];
        assert_eq!(
            (p.name.as_deref(), p.ping, p.score, p.kills),
            (Some("Vic"), Some(140), Some(7), Some(2))
        );
        for n in 0..b.len() {
            assert!(decode_reply(&b[..n], TRIBES).is_err(), "{n}");
        }
        // a player count that lies
        let mut lying = b.clone();
        lying[4 + 7 + 5 + 12 + 2] = 200;
        assert!(decode_reply(&lying, TRIBES).is_err());
        assert_eq!(
            decode_reply(&b, 0x72).unwrap_err().kind,
            crate::error::DecodeErrorKind::BadMagic
        );
    }

    #[test]
    fn starsiege_and_the_challenge() {
        let mut b = vec![0x73, 5, 0, 0x72];
        for s in ["Starsiege", "1.0.0.4", "Mars Front"] {
            put_pstr8(&mut b, s);
        }
        b.extend_from_slice(&[1, 1, 1, 1]);
        b.extend_from_slice(&2u32.to_le_bytes());
        b.extend_from_slice(&16u32.to_le_bytes());
        b.push(1);
        put_pstr8(&mut b, "Moonstrike");
        b.extend_from_slice(&800u16.to_le_bytes());
        b.extend_from_slice(&[1, 0]);
        for v in [0u32, 20, 30, 0, 0, 0, 2] {
            b.extend_from_slice(&v.to_le_bytes());
        }
        for (n, t) in [("Harabec", 1u8), ("Caanon", 4)] {
            put_pstr8(&mut b, n);
            b.push(t);
        }
        let t0 = Instant::now();
        let mut m = crate::tribes1::starsiege::client::QueryMachine::new(
            Default::default(),
            Timing::default(),
            5,
            t0,
        );
        let mut d = Vec::new();
        assert!(m.poll_transmit_into(t0, &mut d));
        assert_eq!(d, [0x72, 5, 0]);
        let mut other = b.clone();
        other[1] = 6;
        m.handle_datagram(t0, &other);
        m.handle_datagram(t0, &tribes(5));
        assert!(m.take_result().is_none());
        m.handle_datagram(t0, &b);
        let a = m.take_result().unwrap().unwrap();
        assert_eq!(a.protocol, Protocol::Starsiege);
        assert_eq!(a.status.map.unwrap().name, "Moonstrike");
        let p = a.status.players.unwrap();
        assert_eq!((p[1].name.as_deref(), p[1].team), (Some("Caanon"), Some(4)));
        assert_eq!(a.status.rules.unwrap().get("time_limit"), Some("30"));

        let mut m = QueryMachine::new(QueryOptions::default(), Timing::default(), 9, t0);
        assert_eq!(drive_to_end(&mut m, t0, Some(&tribes(9))), 1);
        assert_eq!(
            m.take_result().unwrap().unwrap().protocol,
            Protocol::Tribes1
        );
    }
}
