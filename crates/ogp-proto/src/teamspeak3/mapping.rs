//! A TeamSpeak 3 virtual server's `serverinfo`, `clientlist` and `channellist` to the
//! shared [`Status`].
//!
//! | Status field | from |
//! |---|---|
//! | `game_name` | `TeamSpeak 3` |
//! | `host_name` | `virtualserver_name` |
//! | `game_version` | `virtualserver_version` |
//! | `os` | `virtualserver_platform` (`Linux`, `Windows`, `OS X`/`macOS`) |
//! | `password` | `virtualserver_flag_password` |
//! | `player_count` | `virtualserver_clientsonline` less `virtualserver_queryclientsonline` (as qstat counts; gamedig counts query clients too) |
//! | `slot_max`, `reserved_slots` | `virtualserver_maxclients`, `virtualserver_reserved_slots` |
//! | `uptime_seconds` | `virtualserver_uptime` |
//! | `connect_port` | `virtualserver_port` (the voice port) |
//! | `players` | the voice clients of `clientlist` (`client_type=0`; query clients, type 1, left out): `name` the nickname, `id` the `clid`, `extra` the channel id (`cid`) and its name (`channel`) and the database id |
//! | `rules` | every other `serverinfo` parameter as sent, except `virtualserver_password` (a hash of the server's password, which servers show to some logins); `channels`: how many channels `channellist` listed |

use super::wire::Record;
use crate::model::{Os, Player, Rules, Text};
use crate::Status;

/// Parameters never copied into the rules.
const SECRET: &[&str] = &["virtualserver_password"];

/// The status the records describe.
pub fn to_status(server: &Record, clients: &[Record], channels: &[Record]) -> Status {
    let num = |k: &str| server.get(k).and_then(|v| v.trim().parse::<u64>().ok());
    let u32_of = |k: &str| num(k).map(|v| u32::try_from(v).unwrap_or(u32::MAX));
    let online = u32_of("virtualserver_clientsonline");
    let query = u32_of("virtualserver_queryclientsonline").unwrap_or(0);
    let os = server
        .get("virtualserver_platform")
        .map(|p| match p.to_ascii_lowercase().as_str() {
            "linux" | "freebsd" => Os::Linux,
            "windows" => Os::Windows,
            "os x" | "macos" | "mac" => Os::Mac,
            _ => Os::Unknown,
        });
    let channel_name = |cid: &str| {
        channels
            .iter()
            .find(|c| c.get("cid") == Some(cid))
            .and_then(|c| c.get("channel_name"))
    };
    let players = clients
        .iter()
        .filter(|c| c.get("client_type") != Some("1"))
        .map(|c| {
            let mut p = Player {
                name: c.get("client_nickname").map(Text::from),
                id: c.get("clid").and_then(|v| v.parse().ok()),
                ..Player::default()
            };
            for k in ["cid", "client_database_id"] {
                if let Some(v) = c.get(k) {
                    p.extra.insert(k.into(), v.into());
                }
            }
            if let Some(name) = c.get("cid").and_then(channel_name) {
                p.extra.insert("channel".into(), name.into());
            }
            p
        })
        .collect::<Vec<_>>();
    let mut rules: Vec<(Text, Text)> = server
        .0
        .iter()
        .filter(|(k, _)| !SECRET.contains(&k.as_str()))
        .cloned()
        .collect();
    rules.push(("channels".into(), channels.len().to_string().into()));
    Status {
        game_name: Some("TeamSpeak 3".into()),
        host_name: server.get("virtualserver_name").map(Text::from),
        game_version: server.get("virtualserver_version").map(Text::from),
        os,
        password: server.get("virtualserver_flag_password").map(|v| v == "1"),
        player_count: online.map(|n| n.saturating_sub(query)),
        slot_max: u32_of("virtualserver_maxclients"),
        reserved_slots: u32_of("virtualserver_reserved_slots"),
        uptime_seconds: u32_of("virtualserver_uptime"),
        connect_port: num("virtualserver_port").and_then(|v| u16::try_from(v).ok()),
        players: Some(players),
        rules: Some(Rules(rules)),
        ..Status::default()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::teamspeak3::wire::parse_record;

    #[test]
    fn fields() {
        let (server, _) = parse_record(
            "virtualserver_name=A\\sB virtualserver_platform=Linux virtualserver_password=SECRET= virtualserver_clientsonline=3 virtualserver_queryclientsonline=1 virtualserver_port=9987 virtualserver_flag_password=1",
        );
        let (c1, _) = parse_record("clid=5 cid=2 client_nickname=x client_type=0");
        let (c2, _) = parse_record("clid=6 cid=2 client_nickname=q client_type=1");
        let (ch, _) = parse_record("cid=2 channel_name=Lobby");
        let s = to_status(&server, &[c1, c2], &[ch]);
        assert_eq!(s.host_name.as_deref(), Some("A B"));
        assert_eq!(s.os, Some(Os::Linux));
        assert_eq!(s.player_count, Some(2));
        assert_eq!(s.connect_port, Some(9987));
        assert_eq!(s.password, Some(true));
        let p = s.players.unwrap();
        assert_eq!(p.len(), 1);
        assert_eq!(p[0].extra.get("channel").map(Text::as_str), Some("Lobby"));
        let r = s.rules.unwrap();
        assert_eq!(r.get("virtualserver_password"), None);
        assert_eq!(r.get("channels"), Some("1"));
    }
}
