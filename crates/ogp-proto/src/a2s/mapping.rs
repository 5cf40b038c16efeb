//! The A2S wire structs to and from the shared [`Status`] model.
//!
//! The full table, field by field, is in `docs/a2s-mapping.md`. In short: the common
//! fields take what they can (name, map, game description, version, counts, password,
//! server type, OS, game port, players, rules); everything only A2S has lives in
//! [`Status::a2s`] ([`A2sInfo`]), including the server-type and environment bytes as
//! sent, so that a decoded reply maps back to the same wire values.
//!
//! When encoding, the common fields win over the A2S-only ones: `proxy: true` gives
//! `'p'`, `server_type` gives `'d'`/`'l'`, `os` gives `'l'`/`'w'`/`'m'` (always lower
//! case), and only when they say nothing is the byte from `a2s` used. Missing values get
//! neutral defaults (empty strings, 0, protocol 17, app id 255, `'d'`, `'l'`). Nothing here
//! panics.

use super::info::{Extra, GoldSrcInfo, GoldSrcMod, Info, ShipInfo, SourceTv, SHIP_APP_ID};
use super::players::{PlayerEntry, Players, ShipPlayer, MAX_PLAYERS};
use super::rules::Rules;
use crate::model::{self, A2sInfo, MapInfo, ModInfo, Os, Player, ServerType, Status, Text};

/// Protocol byte we send when the status has none (what current Source games send).
pub const DEFAULT_PROTOCOL: u8 = 17;

/// Protocol byte of GoldSrc-engine replies.
pub const GOLDSRC_PROTOCOL: u8 = 48;

/// App id we send in `'I'` replies when the status has none. qstat 2.17 reads the split
/// replies that follow an `'I'` INFO in the GoldSrc layout when the low byte of its app id
/// is below [`QSTAT_SOURCE_SPLIT_FROM`] (measured against `quakestat -a2s`: low bytes
/// 0–127 fail, 128–255 work, whatever the high byte), so with 0 it read none of our
/// split PLAYER and RULES replies. 255 is odd, so it is the low 16 bits of no Steam app
/// id (those are multiples of 10), and The Ship's 2400 it is not.
pub const DEFAULT_APP_ID: u16 = 0x00ff;

/// qstat 2.17 takes the Source split layout (with the size field) exactly when the low
/// byte of the `'I'` app id is at least this, and the GoldSrc layout below it.
pub const QSTAT_SOURCE_SPLIT_FROM: u16 = 0x80;

fn clamp_u8(n: u32) -> u8 {
    u8::try_from(n).unwrap_or(u8::MAX)
}

/// The model's server type for an A2S server-type byte (either case).
pub fn server_type_of(b: u8) -> Option<ServerType> {
    match b.to_ascii_lowercase() {
        b'd' | b'p' => Some(ServerType::Dedicated),
        b'l' => Some(ServerType::Listen),
        _ => None,
    }
}

/// The model's OS for an A2S environment byte (either case).
pub fn os_of(b: u8) -> Option<Os> {
    match b.to_ascii_lowercase() {
        b'l' => Some(Os::Linux),
        b'w' => Some(Os::Windows),
        b'm' | b'o' => Some(Os::Mac),
        _ => None,
    }
}

fn char_of(b: u8) -> char {
    char::from(b)
}

fn byte_of(c: char) -> Option<u8> {
    u8::try_from(u32::from(c)).ok()
}

/// The server-type byte for a status (lower case): from `proxy` and `server_type`, with
/// the byte in `a2s` used when they say nothing.
pub fn server_type_byte(s: &Status) -> u8 {
    let sent = s
        .a2s
        .as_ref()
        .and_then(|a| a.server_type)
        .and_then(byte_of)
        .map(|b| b.to_ascii_lowercase());
    if s.proxy == Some(true) {
        return b'p';
    }
    match (s.server_type, sent) {
        (Some(ServerType::Dedicated), Some(b'p')) if s.proxy.is_none() => b'p',
        (Some(ServerType::Dedicated), _) => b'd',
        (Some(ServerType::Listen), _) => b'l',
        (_, Some(b)) => b,
        _ => b'd',
    }
}

/// The environment byte for a status (lower case): from `os`, keeping the byte in `a2s`
/// when it names the same OS (`'o'` and `'m'` are both macOS), or when `os` says
/// nothing.
pub fn environment_byte(s: &Status) -> u8 {
    let sent = s
        .a2s
        .as_ref()
        .and_then(|a| a.environment)
        .and_then(byte_of)
        .map(|b| b.to_ascii_lowercase());
    match (s.os, sent) {
        (Some(os), Some(b)) if os_of(b) == Some(os) => b,
        (Some(Os::Linux), _) => b'l',
        (Some(Os::Windows), _) => b'w',
        (Some(Os::Mac), _) => b'm',
        (_, Some(b)) => b,
        _ => b'l',
    }
}

fn a2s_mut(s: &mut Status) -> &mut A2sInfo {
    s.a2s.get_or_insert_with(A2sInfo::default)
}

fn set_common(
    s: &mut Status,
    name: &Text,
    map: &Text,
    game: &Text,
    server_type: u8,
    environment: u8,
) {
    s.host_name = Some(name.clone());
    s.map = Some(MapInfo::named(map.clone()));
    s.game_name = Some(game.clone());
    s.server_type = server_type_of(server_type);
    s.proxy = Some(server_type.eq_ignore_ascii_case(&b'p'));
    s.os = os_of(environment);
}

/// Fills `s` from a Source `'I'` reply.
pub fn info_to_status(i: &Info, s: &mut Status) {
    set_common(s, &i.name, &i.map, &i.game, i.server_type, i.environment);
    s.game_version = Some(i.version.clone());
    s.player_count = Some(u32::from(i.players));
    s.slot_max = Some(u32::from(i.max_players));
    s.bot_count = Some(u32::from(i.bots));
    s.password = Some(i.password);
    let x = i.extra.clone().unwrap_or_default();
    if let Some(p) = x.port {
        s.connect_port = Some(p);
    }
    let a = a2s_mut(s);
    a.protocol = Some(i.protocol);
    a.folder = Some(i.folder.clone());
    // The 16-bit ID field, or the full id from the 64-bit game id (its low 24 bits).
    a.app_id = Some(
        x.game_id
            .map(|g| (g & 0x00ff_ffff) as u32)
            .filter(|&full| full != 0 && full & 0xffff == u32::from(i.app_id))
            .unwrap_or(u32::from(i.app_id)),
    );
    a.server_type = Some(char_of(i.server_type));
    a.environment = Some(char_of(i.environment));
    a.vac = Some(i.vac);
    a.ship_mode = i.ship.map(|x| x.mode);
    a.ship_witnesses = i.ship.map(|x| x.witnesses);
    a.ship_duration = i.ship.map(|x| x.duration);
    a.steam_id = x.steam_id;
    a.sourcetv_port = x.source_tv.as_ref().map(|t| t.port);
    a.sourcetv_name = x.source_tv.map(|t| t.name);
    a.keywords = x.keywords;
    a.game_id = x.game_id;
}

/// Fills `s` from FFOW's `'I'` reply: as a Source one (its mod the folder, its
/// description the game, its anti-cheat byte VAC, its port the game port), with the
/// game mode as the game type and no app id nor bot count (it sends none).
pub fn ffow_to_status(f: &super::ffow::FfowInfo, s: &mut Status) {
    let i = Info {
        protocol: f.protocol,
        name: f.name.clone(),
        map: f.map.clone(),
        folder: f.folder.clone(),
        game: f.description.clone(),
        players: f.players,
        max_players: f.max_players,
        server_type: f.server_type,
        environment: f.environment,
        password: f.password,
        vac: f.secure,
        version: f.version.clone(),
        extra: Some(Extra {
            port: Some(f.port),
            ..Extra::default()
        }),
        ..Info::default()
    };
    info_to_status(&i, s);
    s.bot_count = None;
    s.game_type = (!f.game_mode.is_empty()).then(|| f.game_mode.clone());
    a2s_mut(s).app_id = None;
}

/// Fills `s` from a GoldSrc `'m'` reply.
pub fn goldsrc_to_status(m: &GoldSrcInfo, s: &mut Status) {
    set_common(s, &m.name, &m.map, &m.game, m.server_type, m.environment);
    s.player_count = Some(u32::from(m.players));
    s.slot_max = Some(u32::from(m.max_players));
    s.bot_count = m.bots.map(u32::from);
    s.password = Some(m.password);
    if let Some(port) = m
        .address
        .rsplit_once(':')
        .and_then(|(_, p)| p.parse::<u16>().ok())
    {
        s.connect_port = Some(port);
    }
    s.mod_info = m.mod_info.as_ref().map(|x| ModInfo {
        name: m.folder.clone(),
        identifier: None,
        size: Some(x.size as u32),
        version: Some(compact_str::format_compact!("{}", x.version)),
        url: Some(x.url_info.clone()),
        author: None,
    });
    let a = a2s_mut(s);
    a.protocol = Some(m.protocol);
    a.folder = Some(m.folder.clone());
    a.address = Some(m.address.clone());
    a.server_type = Some(char_of(m.server_type));
    a.environment = Some(char_of(m.environment));
    a.vac = m.vac;
    a.mod_download_url = m.mod_info.as_ref().map(|x| x.url_download.clone());
    a.mod_server_only = m.mod_info.as_ref().map(|x| x.server_only);
    a.mod_custom_dll = m.mod_info.as_ref().map(|x| x.custom_dll);
}

/// Fills `s.players` from an `'D'` reply.
pub fn players_to_status(p: &Players, s: &mut Status) {
    s.players = Some(
        p.players
            .iter()
            .map(|e| {
                let mut pl = Player {
                    slot: Some(u32::from(e.index)),
                    name: Some(e.name.clone()),
                    score: Some(e.score),
                    duration: Some(e.duration),
                    ..Player::default()
                };
                if let Some(x) = e.ship {
                    match u32::try_from(x.deaths) {
                        Ok(d) => pl.deaths = Some(d),
                        Err(_) => {
                            pl.extra.insert(
                                Text::const_new("deaths"),
                                compact_str::format_compact!("{}", x.deaths),
                            );
                        }
                    }
                    pl.money = Some(x.money);
                }
                pl
            })
            .collect(),
    );
}

/// Fills `s.rules` from an `'E'` reply.
pub fn rules_to_status(r: &Rules, s: &mut Status) {
    s.rules = Some(model::Rules(r.rules.clone()));
}

fn text_or_empty(t: Option<&Text>) -> Text {
    t.cloned().unwrap_or_default()
}

/// Whether an app id makes replies The Ship's: its low 16 bits, what the INFO reply's
/// ID field carries, are The Ship's id, so clients read (and we write) The Ship's extra
/// INFO and PLAYER fields. The full id alone would disagree with the wire when its low
/// bits are 2400 and the rest are not zero.
pub(crate) fn is_ship(app_id: u32) -> bool {
    app_id & 0xffff == u32::from(SHIP_APP_ID)
}

/// The Source `'I'` reply for a status.
pub fn status_to_info(s: &Status) -> Info {
    let a = s.a2s.clone().unwrap_or_default();
    let full_app_id = a.app_id.unwrap_or(u32::from(DEFAULT_APP_ID));
    // The ID field is 16 bits: its low 16 bits there, the full id in the game id.
    let app_id = (full_app_id & 0xffff) as u16;
    let game_id = a
        .game_id
        .or((full_app_id > 0xffff).then_some(u64::from(full_app_id)));
    let extra = Extra {
        port: s.connect_port,
        steam_id: a.steam_id,
        source_tv: match (a.sourcetv_port, &a.sourcetv_name) {
            (None, None) => None,
            (port, name) => Some(SourceTv {
                port: port.unwrap_or(0),
                name: text_or_empty(name.as_ref()),
            }),
        },
        keywords: a.keywords.clone(),
        game_id,
        unknown_bits: 0,
    };
    Info {
        protocol: a.protocol.unwrap_or(DEFAULT_PROTOCOL),
        name: text_or_empty(s.host_name.as_ref()),
        map: s.map.as_ref().map(|m| m.name.clone()).unwrap_or_default(),
        folder: text_or_empty(a.folder.as_ref()),
        game: text_or_empty(s.game_name.as_ref()),
        app_id,
        players: clamp_u8(s.player_count().unwrap_or(0)),
        max_players: clamp_u8(s.slot_max.unwrap_or(0)),
        bots: clamp_u8(s.bot_count().unwrap_or(0)),
        server_type: server_type_byte(s),
        environment: environment_byte(s),
        password: s.password.unwrap_or(false),
        vac: a.vac.unwrap_or(false),
        ship: is_ship(full_app_id).then(|| ShipInfo {
            mode: a.ship_mode.unwrap_or(0),
            witnesses: a.ship_witnesses.unwrap_or(0),
            duration: a.ship_duration.unwrap_or(0),
        }),
        version: text_or_empty(s.game_version.as_ref()),
        extra: (extra.flags() != 0).then_some(extra),
        trailing: Vec::new(),
    }
}

/// The GoldSrc `'m'` reply for a status (protocol 48 unless the status says otherwise).
pub fn status_to_goldsrc(s: &Status) -> GoldSrcInfo {
    let a = s.a2s.clone().unwrap_or_default();
    let mod_info = s.mod_info.as_ref().map(|m| GoldSrcMod {
        url_info: text_or_empty(m.url.as_ref()),
        url_download: text_or_empty(a.mod_download_url.as_ref()),
        reserved: 0,
        version: m
            .version
            .as_deref()
            .and_then(|v| v.parse().ok())
            .unwrap_or(0),
        size: m.size.map_or(0, |x| x as i32),
        server_only: a.mod_server_only.unwrap_or(false),
        custom_dll: a.mod_custom_dll.unwrap_or(false),
    });
    GoldSrcInfo {
        address: text_or_empty(a.address.as_ref()),
        name: text_or_empty(s.host_name.as_ref()),
        map: s.map.as_ref().map(|m| m.name.clone()).unwrap_or_default(),
        folder: text_or_empty(a.folder.as_ref()),
        game: text_or_empty(s.game_name.as_ref()),
        players: clamp_u8(s.player_count().unwrap_or(0)),
        max_players: clamp_u8(s.slot_max.unwrap_or(0)),
        protocol: a.protocol.unwrap_or(GOLDSRC_PROTOCOL),
        server_type: server_type_byte(s),
        environment: environment_byte(s),
        password: s.password.unwrap_or(false),
        is_mod: Some(mod_info.is_some()),
        mod_info,
        vac: Some(a.vac.unwrap_or(false)),
        bots: Some(clamp_u8(s.bot_count().unwrap_or(0))),
        trailing: Vec::new(),
    }
}

/// The `'D'` reply for a status: at most 255 players; The Ship's extras when `ship`
/// (deaths and money, 0 when unknown).
pub fn status_to_players(s: &Status, ship: bool) -> Players {
    let list = s.players.as_deref().unwrap_or_default();
    Players {
        players: list
            .iter()
            .take(MAX_PLAYERS)
            .map(|p| PlayerEntry {
                index: p.slot.map_or(0, clamp_u8),
                name: text_or_empty(p.name.as_ref()),
                score: p.score.or(p.frags).unwrap_or(0),
                duration: p.duration.or(p.time.map(|t| t as f32)).unwrap_or(0.0),
                ship: ship.then(|| ShipPlayer {
                    deaths: p
                        .deaths
                        .and_then(|d| i32::try_from(d).ok())
                        .or_else(|| p.extra.get("deaths").and_then(|d| d.parse().ok()))
                        .unwrap_or(0),
                    money: p.money.unwrap_or(0),
                }),
            })
            .collect(),
        trailing: Vec::new(),
    }
}

/// The `'E'` reply for a status (at most 65535 rules).
pub fn status_to_rules(s: &Status) -> Rules {
    Rules {
        rules: s
            .rules
            .as_ref()
            .map(|r| r.0.iter().take(usize::from(u16::MAX)).cloned().collect())
            .unwrap_or_default(),
        trailing: Vec::new(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn letters() {
        let mut s = Status::default();
        assert_eq!((server_type_byte(&s), environment_byte(&s)), (b'd', b'l'));
        s.proxy = Some(true);
        s.server_type = Some(ServerType::Listen);
        assert_eq!(server_type_byte(&s), b'p');
        s.proxy = None;
        assert_eq!(server_type_byte(&s), b'l');
        s.os = Some(Os::Mac);
        assert_eq!(environment_byte(&s), b'm');
        let mut s = Status::default();
        a2s_mut(&mut s).server_type = Some('D');
        a2s_mut(&mut s).environment = Some('W');
        assert_eq!((server_type_byte(&s), environment_byte(&s)), (b'd', b'w'));
        assert_eq!(server_type_of(b'P'), Some(ServerType::Dedicated));
        assert_eq!(os_of(b'o'), Some(Os::Mac));
        assert_eq!(os_of(0), None);
    }

    #[test]
    fn info_status_info() {
        let i = Info {
            protocol: 17,
            name: "n".into(),
            map: "m".into(),
            folder: "tf".into(),
            game: "TF".into(),
            app_id: 440,
            players: 3,
            max_players: 24,
            bots: 1,
            server_type: b'p',
            environment: b'w',
            password: true,
            vac: true,
            ship: None,
            version: "1".into(),
            extra: Some(Extra {
                port: Some(27015),
                steam_id: Some(9),
                source_tv: Some(SourceTv {
                    port: 27020,
                    name: "tv".into(),
                }),
                keywords: Some("k".into()),
                game_id: Some(440),
                unknown_bits: 0,
            }),
            trailing: Vec::new(),
        };
        let mut s = Status::default();
        info_to_status(&i, &mut s);
        assert_eq!(s.proxy, Some(true));
        assert_eq!(s.connect_port, Some(27015));
        assert_eq!(status_to_info(&s), i);
    }

    #[test]
    fn the_ship_follows_the_wire_id_whatever_the_full_id() {
        // ID field 2400 (The Ship's fields on the wire) with a game id whose low 24 bits
        // make a larger full app id (0x01_0960): the fields stay (a fuzzer's find).
        let mut i = status_to_info(&Status::default());
        i.app_id = SHIP_APP_ID;
        i.ship = Some(ShipInfo {
            mode: 68,
            witnesses: 155,
            duration: 110,
        });
        i.extra = Some(Extra {
            port: None,
            steam_id: None,
            source_tv: None,
            keywords: None,
            game_id: Some(0x0001_0960),
            unknown_bits: 0,
        });
        let mut s = Status::default();
        info_to_status(&i, &mut s);
        assert_eq!(s.a2s.as_ref().and_then(|a| a.app_id), Some(0x0001_0960));
        assert_eq!(status_to_info(&s), i);
        assert!(is_ship(0x0001_0960) && is_ship(2400) && !is_ship(440));
    }
}
