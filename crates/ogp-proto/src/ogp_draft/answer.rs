//! The draft's Default Query v1 answer body (001 l.56–92): from a [`Status`] and a
//! [`DefaultQuery`] to bytes, and from bytes back to a [`Status`].
//!
//! ```text
//! AnswerFields (VarBitArray, ours: D8)
//! [PLAYERLIST] [Hostname SzString] [RunTime u32] [MaxPlayers u8] [ModDir SzString] [Map SzString]
//!
//! PLAYERLIST      = PlayerListFields u16 | PlayerCount u8 | PLAYERLISTENTRY × PlayerCount
//! PLAYERLISTENTRY = [Slot u8] [Name SzString] [Frags i16] [ID u32] [WONID u32] [Ping u16]
//!                   [Loss u16] [Team u8] [Model SzString] [Rate u16] [Dead u8]
//! ```
//!
//! The draft names the answer fields' dependencies (bPlayerList, bHostname, bRunTime,
//! bMaxPlayers, bModDir, bMap) but defines no array that holds them (001 l.56–62), so an
//! answer could not be read without its query. We put that array first, with the bits in
//! the table's order (D8 in `docs/ogp-draft.md`); a decoder then needs nothing but the
//! answer. Every mask is `requested ∧ supported` as in v1.01; list entries that lack a
//! field the mask announces are sent with a zero or empty value.
//!
//! How the [`Status`] maps to these fields and back (Frags ← frags or score, WONID ↔ a
//! numeric `global_id`, Team 0xFF ↔ spectator, Rate ↔ `extra["rate"]`, …) is the table in
//! `docs/ogp-draft.md` §3. Strings are UTF-8 (D3). An unknown bit in AnswerFields or in
//! the PLAYERLIST mask is an error, since the size of its data is unknown; PlayerCount is
//! checked against the bytes left before anything is allocated. Nothing here panics.

use crate::error::{DecodeError, DecodeWarning};
use crate::model::{MapInfo, ModInfo, Player, Status, Text};
use crate::ogp::types::{read_bits, read_string, write_bits, write_string, Bits};
use crate::reader::Reader;

use super::query::{player_fields, requests, DefaultQuery};

/// AnswerFields bits (ours, D8): one per dependency of the draft's answer table, in the
/// table's order (001 l.57–62).
pub mod answer_fields {
    use super::Bits;
    /// 0.0 bPlayerList: a PLAYERLIST follows.
    pub const PLAYER_LIST: Bits = Bits::bit(0, 0);
    /// 0.1 bHostname.
    pub const HOSTNAME: Bits = Bits::bit(0, 1);
    /// 0.2 bRunTime.
    pub const RUN_TIME: Bits = Bits::bit(0, 2);
    /// 0.3 bMaxPlayers.
    pub const MAX_PLAYERS: Bits = Bits::bit(0, 3);
    /// 0.4 bModDir.
    pub const MOD_DIR: Bits = Bits::bit(0, 4);
    /// 0.5 bMap.
    pub const MAP: Bits = Bits::bit(0, 5);
    /// The fields bInfo asks for (D10).
    pub const INFO: Bits = Bits(0x3e);
    /// The fields bNoStaticData leaves out (D13).
    pub const STATIC: Bits = HOSTNAME.with(MAX_PLAYERS).with(MOD_DIR);
    /// Every bit.
    pub const ALL: Bits = Bits(0x3f);
}

/// Most entries one PLAYERLIST can hold (PlayerCount is a UINT8). Further players are
/// left out (D14).
pub const MAX_LIST_PLAYERS: usize = 255;

/// Team code 0xFF: spectator (001 l.86).
pub const TEAM_SPECTATOR: u8 = 0xff;

/// Team code 0xFE: no team assigned (ours, D15; the model's −1).
pub const TEAM_NONE: u8 = 0xfe;

/// Dead code 0: alive (001 l.90).
pub const DEAD_ALIVE: u8 = 0;
/// Dead code 1: dead (001 l.91).
pub const DEAD_DEAD: u8 = 1;
/// Dead code 0xFF: spectator (001 l.92).
pub const DEAD_SPECTATOR: u8 = 0xff;

/// The key in [`Player::extra`] that holds the draft's Rate.
pub const RATE_KEY: &str = "rate";

/// A decoded answer body.
#[derive(Debug, Clone, PartialEq)]
pub struct Answer {
    /// AnswerFields: what the answer contains.
    pub fields: Bits,
    /// The PLAYERLIST field mask, when a PLAYERLIST is present.
    pub player_fields: Option<u16>,
    /// The status.
    pub status: Status,
    /// Bytes after the last field (ignored).
    pub trailing: Vec<u8>,
    /// Things noticed that did not stop decoding.
    pub warnings: Vec<DecodeWarning>,
}

// ---------------------------------------------------------------------------------------
// The model ↔ wire mapping (docs/ogp-draft.md §3)

/// ModDir: the mod's identifier (its directory), else the A2S game folder.
fn mod_dir(s: &Status) -> Option<&str> {
    match (&s.mod_info, &s.a2s) {
        (Some(m), _) => Some(m.effective_identifier()),
        (None, Some(a)) => a.folder.as_deref(),
        (None, None) => None,
    }
}

/// Frags: the player's frags, else the score; clamped to INT16.
fn frags(p: &Player) -> Option<i16> {
    p.frags
        .or(p.score)
        .map(|v| i16::try_from(v).unwrap_or(if v < 0 { i16::MIN } else { i16::MAX }))
}

/// WONID: the global id when it is a decimal number that fits 32 bits.
fn wonid(p: &Player) -> Option<u32> {
    p.global_id.as_deref().and_then(|g| g.parse().ok())
}

/// Rate: `extra["rate"]` when it is a decimal number that fits 16 bits.
fn rate(p: &Player) -> Option<u16> {
    p.extra.get(RATE_KEY).and_then(|r| r.parse().ok())
}

/// The Team byte for the model's team number: 0–253 as they are, −2 (spectator) 0xFF,
/// anything else (−1 "not assigned", out of range) 0xFE.
pub fn team_code(team: i32) -> u8 {
    match team {
        -2 => TEAM_SPECTATOR,
        0..=253 => u8::try_from(team).unwrap_or(TEAM_NONE),
        _ => TEAM_NONE,
    }
}

/// The model's team number for a Team byte.
pub fn team_from_code(code: u8) -> i32 {
    match code {
        TEAM_SPECTATOR => -2,
        TEAM_NONE => -1,
        n => i32::from(n),
    }
}

/// The Dead byte: spectators (team −2, or neither alive nor dead) 0xFF, dead 1, else 0.
pub fn dead_code(p: &Player) -> u8 {
    if p.team == Some(-2) {
        return DEAD_SPECTATOR;
    }
    match (p.alive, p.dead) {
        (_, Some(true)) => DEAD_DEAD,
        (Some(false), Some(false)) => DEAD_SPECTATOR,
        (Some(false), None) => DEAD_DEAD,
        _ => DEAD_ALIVE,
    }
}

// ---------------------------------------------------------------------------------------
// Encoding

fn has(p: &[Player], f: impl Fn(&Player) -> bool) -> bool {
    p.iter().any(f)
}

/// The PLAYERLIST fields the players can answer.
fn supported_player_fields(p: &[Player]) -> Bits {
    use player_fields::*;
    Bits::EMPTY
        .with_if(SLOT, has(p, |p| p.slot.is_some()))
        .with_if(NAME, has(p, |p| p.name.is_some()))
        .with_if(FRAGS, has(p, |p| frags(p).is_some()))
        .with_if(ID, has(p, |p| p.id.is_some()))
        .with_if(WONID, has(p, |p| wonid(p).is_some()))
        .with_if(PING, has(p, |p| p.ping.is_some()))
        .with_if(LOSS, has(p, |p| p.loss.is_some()))
        .with_if(TEAM, has(p, |p| p.team.is_some()))
        .with_if(MODEL, has(p, |p| p.model.is_some()))
        .with_if(RATE, has(p, |p| rate(p).is_some()))
        .with_if(DEAD, has(p, |p| p.alive.is_some() || p.dead.is_some()))
}

fn list_players(s: &Status) -> &[Player] {
    let all = s.players.as_deref().unwrap_or_default();
    all.get(..MAX_LIST_PLAYERS).unwrap_or(all)
}

/// The AnswerFields of the answer to `query` from `status`: requested ∧ supported.
pub fn answer_fields(status: &Status, query: &DefaultQuery) -> Bits {
    use answer_fields::*;
    let r = query.requests;
    let mut info = Bits::EMPTY
        .with_if(HOSTNAME, status.host_name.is_some())
        .with_if(RUN_TIME, status.uptime_seconds.is_some())
        .with_if(MAX_PLAYERS, status.slot_max.is_some())
        .with_if(MOD_DIR, mod_dir(status).is_some())
        .with_if(MAP, status.map.is_some());
    if r.contains(requests::NO_STATIC_DATA) {
        info = info.without(STATIC);
    }
    Bits::EMPTY
        .with_if(
            PLAYER_LIST,
            r.contains(requests::PLAYER_LIST) && status.players.is_some(),
        )
        .with(if r.contains(requests::INFO) {
            info
        } else {
            Bits::EMPTY
        })
}

/// The PLAYERLIST field mask of the answer to `query` from `status`: requested ∧
/// supported.
pub fn answer_player_fields(status: &Status, query: &DefaultQuery) -> u16 {
    let mask = query
        .player_fields
        .and(player_fields::ALL)
        .and(supported_player_fields(list_players(status)));
    u16::try_from(mask.0).unwrap_or(0)
}

fn put_player(out: &mut Vec<u8>, p: &Player, mask: Bits) {
    use player_fields::*;
    let on = |b: Bits| mask.contains(b);
    if on(SLOT) {
        out.push(p.slot.map_or(0, |s| u8::try_from(s).unwrap_or(u8::MAX)));
    }
    if on(NAME) {
        write_string(out, p.name.as_deref().unwrap_or_default(), true);
    }
    if on(FRAGS) {
        out.extend_from_slice(&frags(p).unwrap_or(0).to_le_bytes());
    }
    if on(ID) {
        out.extend_from_slice(&p.id.unwrap_or(0).to_le_bytes());
    }
    if on(WONID) {
        out.extend_from_slice(&wonid(p).unwrap_or(0).to_le_bytes());
    }
    if on(PING) {
        out.extend_from_slice(&crate::text::u16_le_sat(p.ping));
    }
    if on(LOSS) {
        out.extend_from_slice(&crate::text::u16_le_sat(p.loss));
    }
    if on(TEAM) {
        out.push(p.team.map_or(TEAM_NONE, team_code));
    }
    if on(MODEL) {
        write_string(out, p.model.as_deref().unwrap_or_default(), true);
    }
    if on(RATE) {
        out.extend_from_slice(&rate(p).unwrap_or(0).to_le_bytes());
    }
    if on(DEAD) {
        out.push(dead_code(p));
    }
}

/// Appends an answer body with exactly the sections in `fields` (AnswerFields bits; a
/// bit whose data the status lacks is sent empty or zero) and the PLAYERLIST mask
/// `player_mask`.
pub fn encode_answer_sections(status: &Status, fields: Bits, player_mask: u16, out: &mut Vec<u8>) {
    use answer_fields::*;
    let fields = fields.and(ALL);
    write_bits(out, fields);
    if fields.contains(PLAYER_LIST) {
        let players = list_players(status);
        let mask = player_mask & 0x7ff;
        out.extend_from_slice(&mask.to_le_bytes());
        out.push(u8::try_from(players.len()).unwrap_or(u8::MAX));
        for p in players {
            put_player(out, p, Bits(u64::from(mask)));
        }
    }
    if fields.contains(HOSTNAME) {
        write_string(out, status.host_name.as_deref().unwrap_or_default(), true);
    }
    if fields.contains(RUN_TIME) {
        out.extend_from_slice(&status.uptime_seconds.unwrap_or(0).to_le_bytes());
    }
    if fields.contains(MAX_PLAYERS) {
        let max = status.slot_max.unwrap_or(0);
        out.push(u8::try_from(max).unwrap_or(u8::MAX));
    }
    if fields.contains(MOD_DIR) {
        write_string(out, mod_dir(status).unwrap_or_default(), true);
    }
    if fields.contains(MAP) {
        let map = status.map.as_ref().map(MapInfo::effective_file_name);
        write_string(out, map.unwrap_or_default(), true);
    }
}

/// Appends the answer body for `query` from `status`.
pub fn encode_answer_body(status: &Status, query: &DefaultQuery, out: &mut Vec<u8>) {
    encode_answer_sections(
        status,
        answer_fields(status, query),
        answer_player_fields(status, query),
        out,
    );
}

// ---------------------------------------------------------------------------------------
// Decoding

/// Smallest size of one PLAYERLISTENTRY with `mask` (strings take at least their NUL).
fn min_entry_size(mask: Bits) -> usize {
    use player_fields::*;
    [
        (SLOT, 1),
        (NAME, 1),
        (FRAGS, 2),
        (ID, 4),
        (WONID, 4),
        (PING, 2),
        (LOSS, 2),
        (TEAM, 1),
        (MODEL, 1),
        (RATE, 2),
        (DEAD, 1),
    ]
    .iter()
    .filter(|(b, _)| mask.contains(*b))
    .map(|(_, n)| n)
    .sum()
}

fn read_player(
    r: &mut Reader<'_>,
    mask: Bits,
    warnings: &mut Vec<DecodeWarning>,
) -> Result<Player, DecodeError> {
    use player_fields::*;
    let on = |b: Bits| mask.contains(b);
    let mut p = Player::default();
    if on(SLOT) {
        p.slot = Some(u32::from(r.u8("Slot")?));
    }
    if on(NAME) {
        p.name = Some(read_string(r, "Name", true, warnings)?);
    }
    if on(FRAGS) {
        p.frags = Some(i32::from(r.i16_le("Frags")?));
    }
    if on(ID) {
        p.id = Some(r.u32_le("ID")?);
    }
    if on(WONID) {
        p.global_id = Some(compact_str::format_compact!("{}", r.u32_le("WONID")?));
    }
    if on(PING) {
        p.ping = Some(u32::from(r.u16_le("Ping")?));
    }
    if on(LOSS) {
        p.loss = Some(u32::from(r.u16_le("Loss")?));
    }
    if on(TEAM) {
        p.team = Some(team_from_code(r.u8("Team")?));
    }
    if on(MODEL) {
        p.model = Some(read_string(r, "Model", true, warnings)?);
    }
    if on(RATE) {
        let rate = r.u16_le("Rate")?;
        p.extra.insert(
            Text::const_new(RATE_KEY),
            compact_str::format_compact!("{rate}"),
        );
    }
    if on(DEAD) {
        let at = r.offset();
        match r.u8("Dead")? {
            DEAD_ALIVE => (p.alive, p.dead) = (Some(true), Some(false)),
            DEAD_DEAD => (p.alive, p.dead) = (Some(false), Some(true)),
            DEAD_SPECTATOR => (p.alive, p.dead) = (Some(false), Some(false)),
            _ => warnings.push(DecodeWarning {
                offset: at,
                field: "Dead",
                message: "value the draft does not define (0, 1 or 0xFF); ignored",
            }),
        }
    }
    Ok(p)
}

fn read_player_list(
    r: &mut Reader<'_>,
    warnings: &mut Vec<DecodeWarning>,
) -> Result<(u16, Vec<Player>), DecodeError> {
    let mask_at = r.offset();
    let mask = r.u16_le("PlayerListFields")?;
    if mask & !0x7ff != 0 {
        return Err(DecodeError::invalid(
            mask_at,
            "PlayerListFields",
            "unknown field bit: the layout of an entry is unknown",
        ));
    }
    let mask_bits = Bits(u64::from(mask));
    let count_at = r.offset();
    let count = usize::from(r.u8("PlayerCount")?);
    if count.saturating_mul(min_entry_size(mask_bits)) > r.remaining() {
        return Err(DecodeError::invalid(
            count_at,
            "PlayerCount",
            "count promises more entries than the data holds",
        ));
    }
    let mut players = Vec::with_capacity(count);
    for _ in 0..count {
        players.push(read_player(r, mask_bits, warnings)?);
    }
    Ok((mask, players))
}

/// Decodes an answer body (the bytes after the header, or a reassembled split body).
/// Offsets in errors count from the first byte of `body`.
pub fn decode_answer_body(body: &[u8]) -> Result<Answer, DecodeError> {
    read_answer_body(&mut Reader::new(body))
}

/// [`decode_answer_body`] from a reader (offsets in errors are those of `r`).
pub(crate) fn read_answer_body(r: &mut Reader<'_>) -> Result<Answer, DecodeError> {
    use answer_fields::*;
    let mut warnings = Vec::new();
    let fields_at = r.offset();
    let fields = read_bits(r, "AnswerFields")?;
    if !ALL.contains(fields) {
        return Err(DecodeError::invalid(
            fields_at,
            "AnswerFields",
            "unknown field bit: the layout of its data is unknown",
        ));
    }
    let mut status = Status::default();
    let mut player_fields = None;
    if fields.contains(PLAYER_LIST) {
        let (mask, players) = read_player_list(r, &mut warnings)?;
        player_fields = Some(mask);
        status.players = Some(players);
    }
    if fields.contains(HOSTNAME) {
        status.host_name = Some(read_string(r, "Hostname", true, &mut warnings)?);
    }
    if fields.contains(RUN_TIME) {
        status.uptime_seconds = Some(r.u32_le("RunTime")?);
    }
    if fields.contains(MAX_PLAYERS) {
        status.slot_max = Some(u32::from(r.u8("MaxPlayers")?));
    }
    if fields.contains(MOD_DIR) {
        let dir = read_string(r, "ModDir", true, &mut warnings)?;
        status.mod_info = Some(ModInfo {
            name: dir,
            ..ModInfo::default()
        });
    }
    if fields.contains(MAP) {
        status.map = Some(MapInfo::named(read_string(r, "Map", true, &mut warnings)?));
    }
    if !r.is_empty() {
        warnings.push(DecodeWarning {
            offset: r.offset(),
            field: "Answer",
            message: "trailing bytes after the last field were ignored",
        });
    }
    Ok(Answer {
        fields,
        player_fields,
        status,
        trailing: r.take_rest().to_vec(),
        warnings,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::text::{from_hex, to_hex};

    fn dec(hex: &str) -> Result<Answer, DecodeError> {
        let b = from_hex(hex).unwrap();
        decode_answer_body(&b)
    }

    #[test]
    fn info_fields_in_table_order() {
        let s = Status {
            host_name: Some("Srv".into()),
            uptime_seconds: Some(3600),
            slot_max: Some(300),
            mod_info: Some(ModInfo {
                name: "Counter-Strike".into(),
                identifier: Some("cstrike".into()),
                ..ModInfo::default()
            }),
            map: Some(MapInfo {
                name: "Dust".into(),
                file_name: Some("de_dust".into()),
                ..MapInfo::default()
            }),
            ..Status::default()
        };
        let mut out = Vec::new();
        encode_answer_body(&s, &DefaultQuery::everything(), &mut out);
        // 3e: bHostname..bMap; "Srv"; 3600; 300 saturates at 255; "cstrike"; "de_dust"
        assert_eq!(
            to_hex(&out),
            "3e53727600100e0000ff63737472696b650064655f6475737400"
        );
        let a = dec(&to_hex(&out)).unwrap();
        assert_eq!(a.status.host_name.as_deref(), Some("Srv"));
        assert_eq!(a.status.uptime_seconds, Some(3600));
        assert_eq!(a.status.slot_max, Some(255));
        assert_eq!(a.status.mod_info.unwrap().effective_identifier(), "cstrike");
        assert_eq!(a.status.map, Some(MapInfo::named("de_dust")));
        // bNoStaticData leaves Hostname, MaxPlayers and ModDir out
        let q = DefaultQuery {
            requests: requests::INFO.with(requests::NO_STATIC_DATA),
            ..DefaultQuery::default()
        };
        assert_eq!(
            answer_fields(&s, &q),
            answer_fields::RUN_TIME.with(answer_fields::MAP)
        );
    }

    #[test]
    fn values_that_do_not_fit_saturate() {
        let p = |slot, frags| Player {
            slot: Some(slot),
            frags: Some(frags),
            ..Player::default()
        };
        let s = Status {
            players: Some(vec![p(300, 40_000), p(255, -40_000), p(0, -5)]),
            ..Status::default()
        };
        let q = DefaultQuery {
            requests: requests::PLAYER_LIST,
            player_fields: player_fields::SLOT.with(player_fields::FRAGS),
        };
        let mut out = Vec::new();
        encode_answer_body(&s, &q, &mut out);
        assert_eq!(to_hex(&out), "01050003ffff7fff0080 00fbff".replace(' ', ""));
    }

    #[test]
    fn team_and_dead_codes() {
        assert_eq!(team_code(-2), 0xff);
        assert_eq!(team_code(-1), 0xfe);
        assert_eq!(team_code(253), 253);
        assert_eq!(team_code(254), 0xfe);
        assert_eq!(team_code(-7), 0xfe);
        for c in 0..=255u8 {
            assert_eq!(team_code(team_from_code(c)), c);
        }
        let p = |alive, dead, team| Player {
            alive,
            dead,
            team,
            ..Player::default()
        };
        assert_eq!(dead_code(&p(Some(true), Some(false), None)), 0);
        assert_eq!(dead_code(&p(None, None, Some(1))), 0);
        assert_eq!(dead_code(&p(Some(false), Some(true), None)), 1);
        assert_eq!(dead_code(&p(Some(false), None, None)), 1);
        assert_eq!(dead_code(&p(Some(false), Some(false), None)), 0xff);
        assert_eq!(dead_code(&p(Some(true), Some(false), Some(-2))), 0xff);
    }

    #[test]
    fn bad_bodies_are_errors() {
        assert_eq!(dec("").unwrap_err().field, "AnswerFields");
        let e = dec("40").unwrap_err();
        assert_eq!((e.field, e.offset), ("AnswerFields", 0));
        let e = dec("01ff0f00").unwrap_err();
        assert_eq!((e.field, e.offset), ("PlayerListFields", 1));
        // 5 entries of at least 4 bytes (ID) in 3 bytes
        let e = dec("0108000501020304").unwrap_err();
        assert_eq!((e.field, e.offset), ("PlayerCount", 3));
        assert_eq!(dec("0102000141").unwrap_err().field, "Name");
        assert_eq!(dec("04010000").unwrap_err().field, "RunTime");
        // an empty list, and empty entries (no field) are fine
        let a = dec("01000000").unwrap();
        assert_eq!(a.status.players, Some(vec![]));
        let a = dec("010000ff").unwrap();
        assert_eq!(a.status.players.map(|p| p.len()), Some(255));
        // trailing bytes are a warning
        let a = dec("00aa").unwrap();
        assert_eq!(a.trailing, [0xaa]);
        assert_eq!(a.warnings.len(), 1);
    }
}
