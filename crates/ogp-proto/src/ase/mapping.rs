//! An ASE reply to the shared [`Status`].
//!
//! | Status field | from |
//! |---|---|
//! | `host_name` | the server name |
//! | `game_name` | the game name (`mta`, `farcry`) |
//! | `connect_port` | the port, when it is a number |
//! | `game_type` | the game type |
//! | `map` | the map |
//! | `game_version` | the version |
//! | `password` | the password field (`1`: yes; `0` or empty: no) |
//! | `player_count`, `slot_max` | the players and max players fields, when numbers |
//! | `rules` | the key/value pairs, in wire order |
//! | `players` | one per record: `name`, `score` (an integer; else `extra["score"]`), `ping`, `time` (whole seconds; else `extra["time"]`), `model` (the skin), `team` (an index into `teams`) |
//! | `teams` | the distinct team names of the records, in order of first appearance |
//!
//! Empty fields stay unset (Multi Theft Auto sends every field of every record, most of
//! them empty). Players past [`MAX_TEAMS`] distinct team names keep theirs in
//! `extra["team"]`.

use super::wire::Reply;
use crate::model::{MapInfo, Player, Rules, Team, Text};
use crate::Status;

/// Most teams made from the players' team names.
pub const MAX_TEAMS: usize = 64;

fn some(t: &Text) -> Option<Text> {
    (!t.is_empty()).then(|| t.clone())
}

fn number<T: std::str::FromStr>(t: &str) -> Option<T> {
    t.trim_ascii().parse().ok()
}

/// The status a reply describes.
pub fn reply_to_status(reply: &Reply) -> Status {
    let mut s = Status {
        host_name: Some(reply.server_name.clone()),
        game_name: some(&reply.game_name),
        connect_port: number(&reply.port),
        game_type: some(&reply.game_type),
        map: some(&reply.map).map(MapInfo::named),
        game_version: some(&reply.version),
        password: match reply.password.trim_ascii() {
            "" => None,
            p => Some(p != "0"),
        },
        player_count: number(&reply.num_players),
        slot_max: number(&reply.max_players),
        ..Status::default()
    };
    if !reply.rules.is_empty() {
        s.rules = Some(Rules(reply.rules.clone()));
    }
    let mut teams: Vec<Team> = Vec::new();
    let mut players = Vec::with_capacity(reply.players.len());
    for r in &reply.players {
        let mut p = Player {
            name: r.name.clone(),
            model: r.skin.as_ref().and_then(some),
            ..Player::default()
        };
        let mut keep = |key: &str, v: &Option<Text>, set: &mut dyn FnMut(&str) -> bool| {
            if let Some(v) = v.as_ref().filter(|v| !v.is_empty()) {
                if !set(v) {
                    p.extra.insert(key.into(), v.clone());
                }
            }
        };
        let (mut score, mut ping, mut time) = (None, None, None);
        keep("score", &r.score, &mut |v| {
            score = number(v);
            score.is_some()
        });
        keep("ping", &r.ping, &mut |v| {
            ping = number(v);
            ping.is_some()
        });
        keep("time", &r.time, &mut |v| {
            time = number(v);
            time.is_some()
        });
        (p.score, p.ping, p.time) = (score, ping, time);
        if let Some(name) = r.team.as_ref().filter(|t| !t.is_empty()) {
            match teams.iter().position(|t| t.name.as_ref() == Some(name)) {
                Some(i) => p.team = i32::try_from(i).ok(),
                None if teams.len() < MAX_TEAMS => {
                    p.team = i32::try_from(teams.len()).ok();
                    teams.push(Team {
                        name: Some(name.clone()),
                        ..Team::default()
                    });
                }
                None => {
                    p.extra.insert("team".into(), name.clone());
                }
            }
        }
        players.push(p);
    }
    s.players = Some(players);
    if !teams.is_empty() {
        s.teams = Some(teams);
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ase::wire::{flag, AsePlayer};

    #[test]
    fn fields_and_teams() {
        let all = flag::NAME | flag::TEAM | flag::SKIN | flag::SCORE | flag::PING | flag::TIME;
        let player = |name: &str, team: &str, score: &str| AsePlayer {
            flags: all,
            name: Some(name.into()),
            team: Some(team.into()),
            skin: Some("".into()),
            score: Some(score.into()),
            ping: Some("40".into()),
            time: Some("".into()),
        };
        let reply = Reply {
            game_name: "farcry".into(),
            port: "49001".into(),
            server_name: "Jungle".into(),
            password: "1".into(),
            num_players: "3".into(),
            max_players: "x".into(),
            players: vec![
                player("a", "Red", "5"),
                player("b", "Blue", "n/a"),
                player("c", "Red", "-2"),
            ],
            ..Reply::default()
        };
        let s = reply_to_status(&reply);
        assert_eq!(s.connect_port, Some(49001));
        assert_eq!(s.password, Some(true));
        assert_eq!((s.player_count, s.slot_max), (Some(3), None));
        let teams: Vec<_> = s.teams.unwrap().into_iter().map(|t| t.name).collect();
        assert_eq!(teams, [Some("Red".into()), Some("Blue".into())]);
        let ps = s.players.unwrap();
        assert_eq!(
            ps.iter().map(|p| p.team).collect::<Vec<_>>(),
            [Some(0), Some(1), Some(0)]
        );
        assert_eq!(ps[2].score, Some(-2));
        assert_eq!(ps[1].score, None);
        assert_eq!(ps[1].extra.get("score").map(Text::as_str), Some("n/a"));
        assert_eq!(ps[0].model, None);
        assert_eq!(ps[0].ping, Some(40));
    }
}
