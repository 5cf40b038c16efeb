//! A pong to and from the shared [`Status`].
//!
//! | Status field | from |
//! |---|---|
//! | `host_name` | the MOTD without its `§` formatting codes |
//! | `game_name` | `Minecraft: Bedrock Edition` (`MCPE`), `Minecraft: Education Edition` (`MCEE`), else the edition as sent |
//! | `game_version` | the version |
//! | `player_count`, `slot_max` | online, max |
//! | `map` | the sub-MOTD (the level name on the vanilla server), without `§` codes |
//! | `game_type` | the game mode (`Survival`) |
//! | `connect_port` | the IPv4 port |
//! | `rules` | every field as sent, by name (`edition`, `motd` with its `§` codes, `protocol`, `version`, `online`, `max`, `server_id`, `sub_motd`, `game_mode`, `game_mode_numeric`, `port_v4`, `port_v6`, then `field_12`, …), and `server_guid` (the pong's GUID, decimal) |
//!
//! Back to the wire ([`status_to_advertisement`]) the fields are taken from the rules as
//! sent, with the model's values where the model says otherwise.

use super::wire::{Advertisement, Pong, FIELD_NAMES};
use crate::model::{MapInfo, Rules};
use crate::text::{strip_mc_codes, Text};
use crate::Status;

/// The text without Minecraft's `§` formatting codes (`§` and the character after it).
pub fn strip_codes(s: &str) -> Text {
    strip_mc_codes(s)
}

/// The game name an edition stands for.
pub fn game_name(edition: &str) -> &str {
    match edition {
        "MCPE" => "Minecraft: Bedrock Edition",
        "MCEE" => "Minecraft: Education Edition",
        other => other,
    }
}

/// The rules key of field `i`.
fn field_name(i: usize) -> Text {
    match FIELD_NAMES.get(i) {
        Some(n) => Text::from(*n),
        None => compact_str::format_compact!("field_{i}"),
    }
}

/// Reads `pong` into a status.
pub fn pong_to_status(pong: &Pong) -> Status {
    let a = Advertisement::parse(&pong.advertisement);
    let mut s = Status::default();
    if let Some(m) = a.motd() {
        s.host_name = Some(strip_codes(m));
    }
    if let Some(e) = a.edition() {
        s.game_name = Some(game_name(e).into());
    }
    s.game_version = a.version().filter(|v| !v.is_empty()).map(Text::from);
    s.player_count = a.online();
    s.slot_max = a.max();
    s.map = a
        .sub_motd()
        .filter(|m| !m.is_empty())
        .map(|m| MapInfo::named(strip_codes(m).as_str()));
    s.game_type = a.game_mode().filter(|m| !m.is_empty()).map(Text::from);
    s.connect_port = a.port_v4();
    let mut rules = Rules::default();
    for (i, f) in a.fields.iter().enumerate() {
        rules.0.push((field_name(i), f.clone()));
    }
    rules.0.push((
        "server_guid".into(),
        compact_str::format_compact!("{}", pong.server_guid),
    ));
    s.rules = Some(rules);
    s
}

/// The advertisement a server with `status` sends: `MCPE;motd;protocol;version;online;
/// max;serverId;subMotd;gameMode;gameModeNumeric;portV4;portV6;`, each field from the
/// rules as sent unless the model says otherwise (host name, version, counts, map, game
/// type, connect port); `server_guid` fills a missing server id.
pub fn status_to_advertisement(status: &Status, server_guid: u64) -> Advertisement {
    let rule = |k: &str| status.rules.as_ref().and_then(|r| r.get(k));
    let num = |n: Option<u32>| n.map(|n| compact_str::format_compact!("{n}"));
    let keep = |k: &str, plain: Option<&str>| -> Option<Text> {
        // the rule as sent wins while its plain form is still what the model says
        match (rule(k), plain) {
            (Some(raw), Some(p)) if strip_codes(raw) == p => Some(raw.into()),
            (_, Some(p)) => Some(p.into()),
            (raw, None) => raw.map(Text::from),
        }
    };
    let mut fields: Vec<Text> = vec![
        rule("edition").unwrap_or("MCPE").into(),
        keep("motd", status.host_name.as_deref()).unwrap_or_default(),
        rule("protocol").unwrap_or("0").into(),
        status
            .game_version
            .clone()
            .or_else(|| rule("version").map(Text::from))
            .unwrap_or_default(),
        num(status.player_count())
            .or_else(|| rule("online").map(Text::from))
            .unwrap_or_else(|| "0".into()),
        num(status.slot_max)
            .or_else(|| rule("max").map(Text::from))
            .unwrap_or_else(|| "0".into()),
        rule("server_id")
            .map(Text::from)
            .unwrap_or_else(|| compact_str::format_compact!("{server_guid}")),
        keep("sub_motd", status.map.as_ref().map(|m| m.name.as_str())).unwrap_or_default(),
        status
            .game_type
            .clone()
            .or_else(|| rule("game_mode").map(Text::from))
            .unwrap_or_default(),
        rule("game_mode_numeric").unwrap_or("").into(),
        status
            .connect_port
            .map(|p| compact_str::format_compact!("{p}"))
            .or_else(|| rule("port_v4").map(Text::from))
            .unwrap_or_default(),
        rule("port_v6").unwrap_or("").into(),
    ];
    // Trailing empty fields are not sent; the edition and the MOTD always are (an empty
    // MOTD is a host name too).
    while fields.len() > 2 && fields.last().is_some_and(|f| f.is_empty()) {
        fields.pop();
    }
    Advertisement { fields, dropped: 0 }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_empty_motd_survives_the_way_back() {
        // found by the bedrock_datagram fuzz target: every field but the edition empty
        let pong = Pong {
            time: 0,
            server_guid: 5,
            advertisement: "aMC;;;;;;;;;;;;;".into(),
        };
        let s = pong_to_status(&pong);
        assert_eq!(s.host_name.as_deref(), Some(""));
        let back = status_to_advertisement(&s, 5);
        assert_eq!(back.to_text(), "aMC;;");
        let again = pong_to_status(&Pong {
            advertisement: back.to_text(),
            ..pong
        });
        assert_eq!(again.host_name, s.host_name);
    }

    #[test]
    fn codes_are_stripped_and_fields_named() {
        assert_eq!(strip_codes("§r§4G§r§6a§lX§"), "GaX");
        let pong = Pong {
            time: 0,
            server_guid: 5,
            advertisement: "MCEE;§aHi;390;1.14.60;3;40;77;§oWorld;Survival;1;19132;-1;0;".into(),
        };
        let s = pong_to_status(&pong);
        assert_eq!(s.host_name.as_deref(), Some("Hi"));
        assert_eq!(s.game_name.as_deref(), Some("Minecraft: Education Edition"));
        assert_eq!(s.map.as_ref().map(|m| m.name.as_str()), Some("World"));
        assert_eq!((s.player_count, s.slot_max), (Some(3), Some(40)));
        assert_eq!(s.connect_port, Some(19132));
        let r = s.rules.as_ref().unwrap();
        assert_eq!(r.get("motd"), Some("§aHi"));
        assert_eq!(r.get("port_v6"), Some("-1"));
        assert_eq!(r.get("field_12"), Some("0"));
        assert_eq!(r.get("server_guid"), Some("5"));
        // back to the wire: the raw MOTD is kept while it still says the host name
        let a = status_to_advertisement(&s, 5);
        assert_eq!(
            a.to_text(),
            "MCEE;§aHi;390;1.14.60;3;40;77;§oWorld;Survival;1;19132;-1;"
        );
        let mut edited = s;
        edited.host_name = Some("New".into());
        assert!(status_to_advertisement(&edited, 5)
            .to_text()
            .starts_with("MCEE;New;390;"));
    }
}
