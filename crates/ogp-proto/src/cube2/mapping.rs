//! A Cube 2 answer (the ping reply and, from Sauerbraten, the extinfo replies) to the
//! shared [`Status`].
//!
//! | Status field | from |
//! |---|---|
//! | `host_name` | the description (colour codes left out) |
//! | `game_name` | `sauerbraten` or `redeclipse`, by the attribute layout ([`Dialect`]) |
//! | `game_version` | Sauerbraten: the protocol (`260`); Red Eclipse 1.6: `major.minor.patch` (`1.6.0`), else its version attribute |
//! | `game_mode` | the mode's name (Sauerbraten's modes from -3 `SP` to 22 `effic collect`; Red Eclipse's from 0 `demo` to 7 `gauntlet`), else its number |
//! | `map` | the map, when not empty |
//! | `player_count` | the clients of the ping reply |
//! | `slot_max` | Sauerbraten: its 4th attribute, max clients; Red Eclipse: its 5th, the slots (players and spectators: twice `sv_serverclients` in 1.6) |
//! | `password` | master mode 4 (password) |
//! | `uptime_seconds` | extinfo uptime |
//! | `rules` | every attribute by name (`protocol`, `mode`, `seconds_left`, `max_clients`, `master_mode`…; `attrN` past the known ones), `mode_name`, `master_mode_name`, Red Eclipse's `branch` |
//! | `players` | extinfo: `id` (client number), `name`, `team` (an index into `teams`), `frags` and `score` (frags), `deaths`, `team_kills`, `ping`, `bot` (client numbers from 128), `alive`/`dead` (state 0/1), `extra`: `flags`, `accuracy`, `health`, `armour`, `gun`, `privilege`, `state`, `ip` (the three bytes sent, as `a.b.c.x`); Red Eclipse: the names after its branch, when there are as many as clients |
//! | `teams` | extinfo team scores (team modes): name and score; else the players' team names |

use super::wire::{text, Dialect, PingReply, PlayerStats, Teams};
use crate::model::{MapInfo, Player, Rules, Team, Text};
use crate::Status;

/// Sauerbraten's modes from -3.
const SAUER_MODES: [&str; 26] = [
    "SP",
    "DMSP",
    "demo",
    "ffa",
    "coop edit",
    "teamplay",
    "instagib",
    "insta team",
    "efficiency",
    "effic team",
    "tactics",
    "tac team",
    "capture",
    "regen capture",
    "ctf",
    "insta ctf",
    "protect",
    "insta protect",
    "hold",
    "insta hold",
    "effic ctf",
    "effic protect",
    "effic hold",
    "collect",
    "insta collect",
    "effic collect",
];

/// Red Eclipse's modes (1.5–1.6).
const RE_MODES: [&str; 8] = [
    "demo",
    "editing",
    "deathmatch",
    "capture-the-flag",
    "defend-and-control",
    "bomber-ball",
    "time-trial",
    "gauntlet",
];

const SAUER_ATTRS: [&str; 7] = [
    "protocol",
    "mode",
    "seconds_left",
    "max_clients",
    "master_mode",
    "paused",
    "game_speed",
];

const RE_ATTRS: [&str; 15] = [
    "version",
    "mode",
    "mutators",
    "time_left",
    "max_clients",
    "master_mode",
    "game_vars",
    "game_mods",
    "version_major",
    "version_minor",
    "version_patch",
    "platform",
    "arch",
    "game_state",
    "game_state_time_left",
];

/// The name of `mode` in `dialect`.
pub fn mode_name(dialect: Dialect, mode: i32) -> Option<&'static str> {
    match dialect {
        Dialect::Sauerbraten => mode
            .checked_add(3)
            .and_then(|i| usize::try_from(i).ok())
            .and_then(|i| SAUER_MODES.get(i).copied()),
        Dialect::RedEclipse => usize::try_from(mode)
            .ok()
            .and_then(|i| RE_MODES.get(i).copied()),
        Dialect::Other => None,
    }
}

/// The name of master mode `mm` (the same numbers in both games; Sauerbraten's -1 is
/// `auth`).
pub fn master_mode_name(mm: i32) -> Option<&'static str> {
    Some(match mm {
        -1 => "auth",
        0 => "open",
        1 => "veto",
        2 => "locked",
        3 => "private",
        4 => "password",
        _ => return None,
    })
}

/// The status the answer describes.
pub fn to_status(
    ping: &PingReply,
    uptime: Option<i32>,
    players: Option<&[PlayerStats]>,
    teams: Option<&Teams>,
) -> Status {
    let dialect = ping.dialect();
    let attr = |i: usize| ping.attrs.get(i).copied();
    let (max_at, names): (usize, &[&str]) = match dialect {
        Dialect::Sauerbraten => (3, &SAUER_ATTRS),
        Dialect::RedEclipse => (4, &RE_ATTRS),
        Dialect::Other => (usize::MAX, &[]),
    };
    let mode = attr(1).filter(|_| dialect != Dialect::Other);
    let mm = attr(if dialect == Dialect::RedEclipse { 5 } else { 4 })
        .filter(|_| dialect != Dialect::Other);
    let version = match (dialect, attr(8), attr(9), attr(10)) {
        (Dialect::RedEclipse, Some(a), Some(b), Some(c)) => Some(format!("{a}.{b}.{c}")),
        _ => attr(0).map(|v| v.to_string()),
    };
    let mut s = Status {
        host_name: Some(text(&ping.description)),
        game_name: Some(dialect.name().into()),
        game_version: version.map(Text::from),
        game_mode: mode
            .map(|m| mode_name(dialect, m).map_or_else(|| m.to_string().into(), Text::from)),
        map: (!ping.map.is_empty()).then(|| MapInfo::named(text(&ping.map))),
        player_count: u32::try_from(ping.clients).ok(),
        slot_max: attr(max_at).and_then(|v| u32::try_from(v).ok()),
        password: mm.map(|m| m == 4),
        uptime_seconds: uptime.and_then(|u| u32::try_from(u).ok()),
        ..Status::default()
    };
    let mut rules: Vec<(Text, Text)> = ping
        .attrs
        .iter()
        .enumerate()
        .map(|(i, v)| {
            let key = names
                .get(i)
                .map_or_else(|| format!("attr{i}").into(), |n| Text::from(*n));
            (key, v.to_string().into())
        })
        .collect();
    if let Some(n) = mode.and_then(|m| mode_name(dialect, m)) {
        rules.push(("mode_name".into(), n.into()));
    }
    if let Some(n) = mm.and_then(master_mode_name) {
        rules.push(("master_mode_name".into(), n.into()));
    }
    if dialect == Dialect::RedEclipse {
        if let Some(b) = ping.trailing.first() {
            rules.push(("branch".into(), text(b)));
        }
    }
    s.rules = Some(Rules(rules));

    let mut team_list: Vec<Team> = Vec::new();
    if let Some(t) = teams.filter(|t| t.team_mode) {
        for ts in &t.teams {
            team_list.push(Team {
                name: Some(text(&ts.name)),
                score: Some(ts.score),
                ..Team::default()
            });
        }
    }
    if let Some(ps) = players {
        let mut out = Vec::with_capacity(ps.len());
        for p in ps {
            out.push(player(p, &mut team_list));
        }
        s.players = Some(out);
    } else if dialect == Dialect::RedEclipse {
        let names = ping.trailing.get(1..).unwrap_or_default();
        if !names.is_empty() && usize::try_from(ping.clients).ok() == Some(names.len()) {
            s.players = Some(names.iter().map(|n| Player::named(text(n))).collect());
        }
    }
    if !team_list.is_empty() {
        s.teams = Some(team_list);
    }
    s
}

/// Most teams made from the players' team names.
const MAX_TEAMS: usize = 64;

fn player(p: &PlayerStats, teams: &mut Vec<Team>) -> Player {
    let mut out = Player {
        id: u32::try_from(p.cn).ok(),
        name: Some(text(&p.name)),
        frags: Some(p.frags),
        score: Some(p.frags),
        deaths: u32::try_from(p.deaths).ok(),
        team_kills: u32::try_from(p.teamkills).ok(),
        ping: u32::try_from(p.ping).ok(),
        bot: Some(p.cn >= 128),
        alive: Some(p.state == 0),
        dead: Some(p.state == 1),
        ..Player::default()
    };
    for (k, v) in [
        ("flags", p.flags),
        ("accuracy", p.accuracy),
        ("health", p.health),
        ("armour", p.armour),
        ("gun", p.gun),
        ("privilege", p.privilege),
        ("state", p.state),
    ] {
        out.extra.insert(k.into(), v.to_string().into());
    }
    let [a, b, c] = p.ip;
    out.extra
        .insert("ip".into(), format!("{a}.{b}.{c}.x").into());
    let team = text(&p.team);
    if !team.is_empty() {
        match teams.iter().position(|t| t.name.as_ref() == Some(&team)) {
            Some(i) => out.team = i32::try_from(i).ok(),
            None if teams.len() < MAX_TEAMS => {
                out.team = i32::try_from(teams.len()).ok();
                teams.push(Team {
                    name: Some(team),
                    ..Team::default()
                });
            }
            None => {
                out.extra.insert("team".into(), team);
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sauerbraten_and_red_eclipse_layouts() {
        let sauer = PingReply {
            clients: 2,
            attrs: vec![260, 11, 300, 16, 4],
            map: b"forge".to_vec(),
            description: b"\x0c3My\x0c7 server".to_vec(),
            ..PingReply::default()
        };
        let s = to_status(&sauer, Some(99), None, None);
        assert_eq!(s.host_name.as_deref(), Some("My server"));
        assert_eq!(s.game_mode.as_deref(), Some("ctf"));
        assert_eq!((s.player_count, s.slot_max), (Some(2), Some(16)));
        assert_eq!(s.password, Some(true));
        assert_eq!(s.uptime_seconds, Some(99));
        assert_eq!(s.rules.as_ref().unwrap().get("seconds_left"), Some("300"));

        // Red Eclipse 1.6 as its server answers with no map data (`-g`).
        let re = PingReply {
            clients: 0,
            attrs: vec![230, 5, 0, 600, 32, 0, 4998, 0, 1, 6, 0, 2, 64, 0, 0],
            map: b"octavus".to_vec(),
            trailing: vec![Vec::new()],
            ..PingReply::default()
        };
        let s = to_status(&re, None, None, None);
        assert_eq!(s.game_name.as_deref(), Some("redeclipse"));
        assert_eq!(s.game_version.as_deref(), Some("1.6.0"));
        assert_eq!(s.game_mode.as_deref(), Some("bomber-ball"));
        // qstat takes the 4th attribute (time left, 600) for the max players.
        assert_eq!(s.slot_max, Some(32));
        assert_eq!(s.password, Some(false));
        assert_eq!(
            s.rules.as_ref().unwrap().get("game_state_time_left"),
            Some("0")
        );
    }

    #[test]
    fn extinfo_players_and_teams() {
        let ping = PingReply {
            clients: 2,
            attrs: vec![260, 2, 0, 8, 0],
            ..PingReply::default()
        };
        let p = |cn: i32, name: &[u8], team: &[u8]| PlayerStats {
            cn,
            ping: 20,
            name: name.to_vec(),
            team: team.to_vec(),
            frags: 3,
            deaths: 1,
            ip: [127, 0, 0],
            ..PlayerStats::default()
        };
        let teams = Teams {
            team_mode: true,
            mode: 2,
            seconds_left: 100,
            teams: vec![super::super::wire::TeamScore {
                name: b"evil".to_vec(),
                score: 7,
                bases: Vec::new(),
            }],
        };
        let s = to_status(
            &ping,
            None,
            Some(&[p(0, b"a", b"good"), p(128, b"bot", b"evil")]),
            Some(&teams),
        );
        let ps = s.players.unwrap();
        assert_eq!(ps[0].team, Some(1));
        assert_eq!(ps[1].team, Some(0));
        assert_eq!(ps[1].bot, Some(true));
        assert_eq!(ps[0].extra.get("ip").map(Text::as_str), Some("127.0.0.x"));
        let ts = s.teams.unwrap();
        assert_eq!(ts[0].score, Some(7));
        assert_eq!(ts[1].name.as_deref(), Some("good"));
    }
}
