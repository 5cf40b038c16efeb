//! Fixed sample statuses.

use ogp_proto::{Player, Rules, Status};

/// The project's example state file, `crates/ogp-proto/tests/data/state.json`.
pub fn demo_state() -> Status {
    Status::from_json(include_str!("../../ogp-proto/tests/data/state.json"))
        .expect("state.json parses")
}

/// A synthetic status with `n` players with long names (for size limits and splitting).
pub fn many_players(n: usize, name_len: usize) -> Status {
    let mut s = demo_state();
    let players = (0..n)
        .map(|i| {
            let mut player = Player::default();
            player.slot = Some(u32::try_from(i).unwrap_or(u32::MAX));
            player.name = Some(format!("{i:05}-{}", "x".repeat(name_len.saturating_sub(6))).into());
            player.team = Some(i32::try_from(i % 2).unwrap_or(0));
            player.score = Some(i32::try_from(i).unwrap_or(0) * 7 - 300);
            player.ping = Some(u32::try_from(i % 300).unwrap_or(0));
            player.time = Some(u32::try_from(i * 3 % 60_000).unwrap_or(0));
            player.alive = Some(i % 3 != 0);
            player
        })
        .collect();
    s.players = Some(players);
    s.slot_max = Some(u32::try_from(n).unwrap_or(u32::MAX) + 10);
    s
}

/// A status with all five lists present and empty (teams, players, rules, add-ons,
/// limits) and nothing else: each list is a count of 0 on the wire, with no field mask.
pub fn empty_lists() -> Status {
    let mut status = Status::default();
    status.teams = Some(vec![]);
    status.players = Some(vec![]);
    status.rules = Some(Rules::default());
    status.addons = Some(vec![]);
    status.limits = Some(vec![]);
    status
}
