//! A TeamSpeak 2 server's `si`, `pl` and `cl` to the shared [`Status`].
//!
//! | Status field | from |
//! |---|---|
//! | `game_name` | `TeamSpeak 2` |
//! | `host_name` | `server_name` |
//! | `os` | `server_platform` (`Win32`, `Linux`) |
//! | `password` | `server_password` |
//! | `player_count` | `server_currentusers` (else the rows of `pl`) |
//! | `slot_max` | `server_maxusers` |
//! | `uptime_seconds` | `server_uptime` |
//! | `connect_port` | `server_udpport` (the voice port) |
//! | `players` | each row of `pl`: `name` the `nick`, `id` the `p_id`, `ping`; `extra` the channel id (`c_id`) and name (`channel`), the login name; the address (`ip`) left out |
//! | `rules` | every `si` line as sent; `channels`: how many rows `cl` had |

use super::wire::Table;
use crate::model::{Os, Player, Rules, Text};
use crate::Status;

/// The status the answers describe.
pub fn to_status(si: &[(Text, Text)], players: &Table, channels: &Table) -> Status {
    let get = |k: &str| si.iter().find(|(key, _)| key == k).map(|(_, v)| v.as_str());
    let num = |k: &str| get(k).and_then(|v| v.trim().parse::<u64>().ok());
    let u32_of = |k: &str| num(k).map(|v| u32::try_from(v).unwrap_or(u32::MAX));
    let channel_name = |cid: &str| {
        channels
            .rows
            .iter()
            .find(|r| channels.get(r, "id") == Some(cid))
            .and_then(|r| channels.get(r, "name"))
    };
    let list = players
        .rows
        .iter()
        .map(|row| {
            let mut p = Player {
                name: players.get(row, "nick").map(Text::from),
                id: players.get(row, "p_id").and_then(|v| v.parse().ok()),
                ping: players.get(row, "ping").and_then(|v| v.parse().ok()),
                ..Player::default()
            };
            if let Some(c) = players.get(row, "c_id") {
                p.extra.insert("c_id".into(), c.into());
                if let Some(name) = channel_name(c) {
                    p.extra.insert("channel".into(), name.into());
                }
            }
            if let Some(l) = players.get(row, "loginname").filter(|l| !l.is_empty()) {
                p.extra.insert("loginname".into(), l.into());
            }
            p
        })
        .collect::<Vec<_>>();
    let mut rules: Vec<(Text, Text)> = si.to_vec();
    rules.push(("channels".into(), channels.listed.to_string().into()));
    Status {
        game_name: Some("TeamSpeak 2".into()),
        host_name: get("server_name").map(Text::from),
        os: get("server_platform").map(|p| match p.to_ascii_lowercase().as_str() {
            "win32" | "windows" => Os::Windows,
            "linux" => Os::Linux,
            _ => Os::Unknown,
        }),
        password: get("server_password").map(|v| v == "1"),
        player_count: u32_of("server_currentusers").or_else(|| u32::try_from(players.listed).ok()),
        slot_max: u32_of("server_maxusers"),
        uptime_seconds: u32_of("server_uptime"),
        connect_port: num("server_udpport").and_then(|v| u16::try_from(v).ok()),
        players: Some(list),
        rules: Some(Rules(rules)),
        ..Status::default()
    }
}
