//! A GameSpy v2 reply to the shared [`Status`]: its keys are GameSpy v3's (`hostname`,
//! `mapname`, `numplayers`, `maxplayers`, `gametype`, `gamever`, `hostport`,
//! `password`…; `player_`, `score_`, `ping_`, `team_`, `deaths_`…; `team_t`,
//! `score_t`…), so [`gamespy3::mapping::info_to_status`](crate::gamespy3::mapping::info_to_status) reads them (documented key by
//! key there and in `docs/gamespy3.md`), with one difference: the player's `team_`.
//!
//! Battlefield 2 (GameSpy v3) counts teams from 1 (`team_` 1 is the first `team_t`);
//! GameSpy v2 games differ: Halo writes 0 and 1 for its two teams (`team_t` Red, Blue),
//! Battlefield Vietnam 1 and 2. Here `team_` is read from 0 when some player has 0 and
//! no value reaches the number of teams, else from 1 as GameSpy v3 does (0 and below:
//! no team, -1).

use crate::gamespy3::mapping::info_to_status as gs3_info_to_status;
use crate::gamespy3::ServerInfo;
use crate::Status;

/// The status a reply describes.
pub fn info_to_status(info: &ServerInfo) -> Status {
    let mut s = gs3_info_to_status(info);
    if zero_based(info) {
        let raw = info.players.iter().find(|c| c.key == "team_");
        if let (Some(players), Some(raw)) = (s.players.as_mut(), raw) {
            for (p, v) in players.iter_mut().zip(&raw.values) {
                if let Ok(n) = v.trim_ascii().parse::<i32>() {
                    p.team = Some(if n >= 0 { n } else { -1 });
                }
            }
        }
    }
    s
}

/// Whether `team_` counts from 0: some player has 0, and every value is below the
/// number of teams (when the reply lists teams).
pub fn zero_based(info: &ServerInfo) -> bool {
    let Some(raw) = info.players.iter().find(|c| c.key == "team_") else {
        return false;
    };
    let teams = info.teams.iter().map(|c| c.values.len()).max().unwrap_or(0);
    let values: Vec<i64> = raw
        .values
        .iter()
        .filter_map(|v| v.trim_ascii().parse().ok())
        .collect();
    values.contains(&0)
        && (teams == 0
            || values
                .iter()
                .all(|&v| v < i64::try_from(teams).unwrap_or(i64::MAX)))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::gamespy3::Column;

    fn info(teams: &[&str]) -> ServerInfo {
        ServerInfo {
            server: vec![("hostname".into(), "h".into())],
            players: vec![
                Column {
                    key: "player_".into(),
                    values: vec!["a".into(), "b".into()],
                },
                Column {
                    key: "team_".into(),
                    values: teams.iter().map(|t| (*t).into()).collect(),
                },
            ],
            teams: vec![Column {
                key: "team_t".into(),
                values: vec!["Red".into(), "Blue".into()],
            }],
        }
    }

    #[test]
    fn teams_count_from_zero_or_one() {
        let team = |i: &ServerInfo| -> Vec<Option<i32>> {
            info_to_status(i)
                .players
                .unwrap()
                .iter()
                .map(|p| p.team)
                .collect()
        };
        // Halo: 0 and 1 with two teams
        assert_eq!(team(&info(&["0", "1"])), [Some(0), Some(1)]);
        // Battlefield Vietnam: 1 and 2
        assert_eq!(team(&info(&["1", "2"])), [Some(0), Some(1)]);
        // 0 with a 2 among two teams: from 1, 0 is no team
        assert_eq!(team(&info(&["0", "2"])), [Some(-1), Some(1)]);
    }
}
