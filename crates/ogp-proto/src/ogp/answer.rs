//! The Default Query v1 answer body (spec §3.4): from a [`Status`] and a [`DefaultQuery`]
//! to bytes, and from bytes back to a [`Status`].
//!
//! ```text
//! GameID u16 | RequestFlags | [SERVERINFO] [TEAMLIST] [PLAYERLIST] [RULELIST] [ADDONLIST] [LIMITLIST]
//! ```
//!
//! **Encoding** answers exactly what was asked and what the status has: every answer mask
//! is `requested ∧ supported` (A19), where a field is supported when the status has it
//! (for lists: when any entry has it; entries that lack it are sent with an empty or zero
//! value). bColoredNames is kept only when the caller opts in (A5). Team, player and
//! add-on lists carry their field mask only when the count is not 0. NextMapInfo follows
//! MapInfo inside the bMap block and uses the same MapFields (A17).
//!
//! **Decoding** trusts the answer's own masks, not the query. Every count is checked
//! against the bytes left before anything is allocated, so a lying count is an error
//! naming the count and its offset. A mask bit this implementation does not know makes
//! the rest of the data unreadable (its layout is unknown) and is an error, except in
//! RequestFlags, where unknown sections can only follow the known ones: they are kept as
//! trailing bytes with a warning. Invalid UTF-8 is decoded lossily with a warning. Nothing
//! here panics.

use super::query::{
    addon_fields, map_fields, mod_fields, player_fields, request, server_info, team_fields,
    DefaultQuery,
};
use super::types::{
    read_bits, read_color_info, read_string, read_var_sint, read_var_uint, write_bits,
    write_color_info, write_string, write_var_sint, write_var_uint, Bits,
};
use crate::error::{DecodeError, DecodeErrorKind, DecodeWarning};
use crate::model::{
    AddOn, Limit, LimitType, MapInfo, ModInfo, Os, Player, PlayerAddress, Rules, ServerType,
    Status, Team, Text,
};
use crate::reader::Reader;

/// How to encode an answer.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct AnswerOptions {
    /// Strings in UTF-8 (else Latin-1 with `?` for what Latin-1 cannot hold).
    pub utf8: bool,
    /// Send StringColorInfo when the query asks for coloured names. Off by default: the
    /// PHP client cannot parse it (A5).
    pub colors: bool,
}

impl Default for AnswerOptions {
    /// Latin-1 (what the spec requires unless the query sets bUTF8), no colours.
    fn default() -> Self {
        Self {
            utf8: false,
            colors: false,
        }
    }
}

/// A decoded answer body.
#[derive(Debug, Clone, PartialEq)]
pub struct Answer {
    /// RequestFlags of the answer (what it contains).
    pub request_flags: Bits,
    /// The status, with `game_id` set.
    pub status: Status,
    /// Bytes after the last known section: the data of sections announced by
    /// RequestFlags bits this implementation does not know, or trailing garbage.
    pub unknown_sections: Vec<u8>,
    /// Things noticed that did not stop decoding.
    pub warnings: Vec<DecodeWarning>,
}

/// Largest count of entries we accept for a list whose entries carry no bytes at all
/// (a field mask of 0). Such entries cost us memory but the peer nothing.
pub const MAX_EMPTY_ENTRIES: u32 = 4096;

/// Largest count of entries we accept for any list (teams, players, rules, add-ons,
/// limits), so that decoding allocates at most a small multiple of the input.
pub const MAX_LIST_ENTRIES: u32 = 4096;

// ---------------------------------------------------------------------------------------
// Encoding

fn has<T>(list: &[T], f: impl Fn(&T) -> bool) -> bool {
    list.iter().any(f)
}

/// The ServerInfoFields the status can answer.
fn supported_server_info(s: &Status) -> Bits {
    use server_info::*;
    Bits::EMPTY
        .with_if(GAME_NAME, s.game_name.is_some())
        .with_if(
            SERVER_FLAGS,
            s.server_type.is_some() || s.os.is_some() || s.password.is_some() || s.proxy.is_some(),
        )
        .with_if(HOST_NAME, s.host_name.is_some())
        .with_if(CONNECT_PORT, s.connect_port.is_some())
        .with_if(MOD, s.mod_info.is_some())
        .with_if(GAME_TYPE, s.game_type.is_some())
        .with_if(GAME_MODE, s.game_mode.is_some())
        .with_if(MAP, s.map.is_some())
        .with_if(NEXT_MAP, s.next_map.is_some())
        .with_if(PLAYER_COUNT, s.player_count().is_some())
        .with_if(SLOT_MAX, s.slot_max.is_some())
        .with_if(BOT_COUNT, s.bot_count().is_some())
        .with_if(RESERVED_SLOTS, s.reserved_slots.is_some())
}

fn supported_map_fields(maps: &[&MapInfo]) -> Bits {
    use map_fields::*;
    Bits::EMPTY
        .with_if(FILE_NAME, maps.iter().any(|m| m.file_name.is_some()))
        .with_if(FILE_SIZE, maps.iter().any(|m| m.file_size.is_some()))
        .with_if(FILE_MD5, maps.iter().any(|m| m.file_md5.is_some()))
        .with_if(VERSION, maps.iter().any(|m| m.version.is_some()))
        .with_if(URL, maps.iter().any(|m| m.url.is_some()))
        .with_if(AUTHOR, maps.iter().any(|m| m.author.is_some()))
}

fn supported_team_fields(t: &[Team]) -> Bits {
    use team_fields::*;
    Bits::EMPTY
        .with_if(NAME, has(t, |t| t.name.is_some()))
        .with_if(SCORE, has(t, |t| t.score.is_some()))
        .with_if(AVERAGE_PING, has(t, |t| t.average_ping.is_some()))
        .with_if(AVERAGE_LOSS, has(t, |t| t.average_loss.is_some()))
        .with_if(PLAYER_COUNT, has(t, |t| t.player_count.is_some()))
        .with_if(COLOR, has(t, |t| t.color.is_some()))
}

fn player_has_flags(p: &Player) -> bool {
    p.alive.is_some() || p.dead.is_some() || p.bot.is_some() || p.bomb.is_some() || p.vip.is_some()
}

fn supported_player_fields(p: &[Player]) -> Bits {
    use player_fields::*;
    Bits::EMPTY
        .with_if(FLAGS, has(p, player_has_flags))
        .with_if(SLOT, has(p, |p| p.slot.is_some()))
        .with_if(NAME, has(p, |p| p.name.is_some()))
        .with_if(TEAM, has(p, |p| p.team.is_some()))
        .with_if(CLASS, has(p, |p| p.class.is_some()))
        .with_if(RACE, has(p, |p| p.race.is_some()))
        .with_if(SCORE, has(p, |p| p.score.is_some()))
        .with_if(FRAGS, has(p, |p| p.frags.is_some()))
        .with_if(KILLS, has(p, |p| p.kills.is_some()))
        .with_if(DEATH, has(p, |p| p.deaths.is_some()))
        .with_if(SUICIDES, has(p, |p| p.suicides.is_some()))
        .with_if(TEAM_KILLS, has(p, |p| p.team_kills.is_some()))
        .with_if(ID, has(p, |p| p.id.is_some()))
        .with_if(GLOBAL_ID, has(p, |p| p.global_id.is_some()))
        .with_if(PING, has(p, |p| p.ping.is_some()))
        .with_if(LOSS, has(p, |p| p.loss.is_some()))
        .with_if(MODEL, has(p, |p| p.model.is_some()))
        .with_if(TIME, has(p, |p| p.time.is_some()))
        .with_if(ADDRESS, has(p, |p| p.address.is_some()))
}

fn addon_has_flags(a: &AddOn) -> bool {
    a.active.is_some() || a.anti_cheat.is_some() || a.mutator.is_some() || a.admin_tool.is_some()
}

fn supported_addon_fields(a: &[AddOn]) -> Bits {
    use addon_fields::*;
    Bits::EMPTY
        .with_if(FLAGS, has(a, addon_has_flags))
        .with_if(SHORT_NAME, has(a, |a| a.short_name.is_some()))
        .with_if(LONG_NAME, has(a, |a| a.long_name.is_some()))
        .with_if(VERSION, has(a, |a| a.version.is_some()))
}

/// The RequestFlags the status can answer.
fn supported_request(s: &Status) -> Bits {
    use request::*;
    SERVER_INFO
        .with_if(TEAM_LIST, s.teams.is_some())
        .with_if(PLAYER_LIST, s.players.is_some())
        .with_if(RULE_LIST, s.rules.is_some())
        .with_if(ADDON_LIST, s.addons.is_some())
        .with_if(LIMIT_LIST, s.limits.is_some())
}

fn len_u32(n: usize) -> u32 {
    u32::try_from(n).unwrap_or(u32::MAX)
}

fn put_opt_str(out: &mut Vec<u8>, s: Option<&Text>, utf8: bool) {
    write_string(out, s.map_or("", Text::as_str), utf8);
}

/// The answer's RequestFlags for a query: requested ∧ supported, bColoredNames only when
/// `opts.colors`.
pub fn answer_request_flags(status: &Status, query: &DefaultQuery, opts: &AnswerOptions) -> Bits {
    query.request.and(supported_request(status)).with_if(
        request::COLORED_NAMES,
        opts.colors && query.request.contains(request::COLORED_NAMES),
    )
}

/// Appends the answer body for `query` from `status`: GameID, RequestFlags and the
/// sections the answer's RequestFlags announce (see [`answer_request_flags`]).
pub fn encode_answer_body(
    status: &Status,
    query: &DefaultQuery,
    opts: &AnswerOptions,
    out: &mut Vec<u8>,
) {
    let flags = answer_request_flags(status, query, opts);
    encode_answer_sections(status, query, flags, opts, out);
}

/// Appends the answer body with the given RequestFlags, which must be a subset of
/// [`answer_request_flags`] (a responder over its size budget drops whole sections).
pub fn encode_answer_sections(
    status: &Status,
    query: &DefaultQuery,
    flags: Bits,
    opts: &AnswerOptions,
    out: &mut Vec<u8>,
) {
    let flags = flags.and(answer_request_flags(status, query, opts));
    let utf8 = opts.utf8;
    let colored = flags.contains(request::COLORED_NAMES);
    out.extend_from_slice(&status.game_id.unwrap_or(0).to_le_bytes());
    write_bits(out, flags);
    if flags.contains(request::SERVER_INFO) {
        encode_server_info(status, query, colored, utf8, out);
    }
    if flags.contains(request::TEAM_LIST) {
        let teams = status.teams.as_deref().unwrap_or_default();
        write_var_uint(out, len_u32(teams.len()));
        if !teams.is_empty() {
            let mask = query.team_fields.and(supported_team_fields(teams));
            write_bits(out, mask);
            for t in teams {
                encode_team(t, mask, colored, utf8, out);
            }
        }
    }
    if flags.contains(request::PLAYER_LIST) {
        let players = status.players.as_deref().unwrap_or_default();
        write_var_uint(out, len_u32(players.len()));
        if !players.is_empty() {
            let mask = query.player_fields.and(supported_player_fields(players));
            write_bits(out, mask);
            for p in players {
                encode_player(p, mask, colored, utf8, out);
            }
        }
    }
    if flags.contains(request::RULE_LIST) {
        let rules = status.rules.as_ref().map_or(&[][..], |r| r.0.as_slice());
        write_var_uint(out, len_u32(rules.len()));
        for (k, v) in rules {
            write_string(out, k, utf8);
            write_string(out, v, utf8);
        }
    }
    if flags.contains(request::ADDON_LIST) {
        let addons = status.addons.as_deref().unwrap_or_default();
        write_var_uint(out, len_u32(addons.len()));
        if !addons.is_empty() {
            let mask = query.addon_fields.and(supported_addon_fields(addons));
            write_bits(out, mask);
            for a in addons {
                encode_addon(a, mask, utf8, out);
            }
        }
    }
    if flags.contains(request::LIMIT_LIST) {
        let limits = status.limits.as_deref().unwrap_or_default();
        write_var_uint(out, len_u32(limits.len()));
        for l in limits {
            let kind = u64::from(l.kind.code() & 0x0f);
            write_bits(out, Bits(u64::from(l.left.is_some()) | kind << 1));
            write_var_uint(out, l.limit);
            if let Some(left) = l.left {
                write_var_uint(out, left);
            }
        }
    }
}

fn encode_server_info(s: &Status, q: &DefaultQuery, colored: bool, utf8: bool, out: &mut Vec<u8>) {
    use server_info::*;
    let mask = q.server_info.and(supported_server_info(s));
    write_bits(out, mask);
    if mask.contains(GAME_NAME) {
        put_opt_str(out, s.game_name.as_ref(), utf8);
    }
    if mask.contains(SERVER_FLAGS) {
        let ty = u64::from(s.server_type.map_or(0, ServerType::code) & 0x03);
        let os = u64::from(s.os.map_or(0, Os::code) & 0x07);
        let pw = u64::from(s.password == Some(true));
        let px = u64::from(s.proxy == Some(true));
        write_bits(out, Bits(ty | pw << 2 | px << 3 | os << 4));
    }
    if mask.contains(HOST_NAME) {
        put_opt_str(out, s.host_name.as_ref(), utf8);
        if colored {
            write_color_info(out, s.host_name_color.as_ref());
        }
    }
    if mask.contains(CONNECT_PORT) {
        out.extend_from_slice(&s.connect_port.unwrap_or(0).to_le_bytes());
    }
    if mask.contains(MOD) {
        if let Some(m) = &s.mod_info {
            encode_mod(m, q.mod_fields, utf8, out);
        }
    }
    if mask.contains(GAME_TYPE) {
        put_opt_str(out, s.game_type.as_ref(), utf8);
    }
    if mask.contains(GAME_MODE) {
        put_opt_str(out, s.game_mode.as_ref(), utf8);
    }
    if mask.contains(MAP) {
        let mut maps = Vec::with_capacity(2);
        maps.extend(s.map.as_ref());
        if mask.contains(NEXT_MAP) {
            maps.extend(s.next_map.as_ref());
        }
        let map_mask = q.map_fields.and(supported_map_fields(&maps));
        write_bits(out, map_mask);
        let empty = MapInfo::default();
        encode_map(s.map.as_ref().unwrap_or(&empty), map_mask, utf8, out);
        if mask.contains(NEXT_MAP) {
            encode_map(s.next_map.as_ref().unwrap_or(&empty), map_mask, utf8, out);
        }
    }
    if mask.contains(PLAYER_COUNT) {
        write_var_uint(out, s.player_count().unwrap_or(0));
    }
    if mask.contains(SLOT_MAX) {
        write_var_uint(out, s.slot_max.unwrap_or(0));
    }
    if mask.contains(BOT_COUNT) {
        write_var_uint(out, s.bot_count().unwrap_or(0));
    }
    if mask.contains(RESERVED_SLOTS) {
        write_var_uint(out, s.reserved_slots.unwrap_or(0));
    }
}

fn encode_mod(m: &ModInfo, requested: Bits, utf8: bool, out: &mut Vec<u8>) {
    use mod_fields::*;
    let start = out.len();
    write_string(out, &m.name, utf8);
    // An empty name on the wire means "no mod": nothing else may follow.
    if out.len() == start + 1 {
        return;
    }
    let mask = requested.and(
        Bits::EMPTY
            .with_if(IDENTIFIER, m.identifier.is_some())
            .with_if(SIZE, m.size.is_some())
            .with_if(VERSION, m.version.is_some())
            .with_if(URL, m.url.is_some())
            .with_if(AUTHOR, m.author.is_some()),
    );
    write_bits(out, mask);
    if mask.contains(IDENTIFIER) {
        put_opt_str(out, m.identifier.as_ref(), utf8);
    }
    if mask.contains(SIZE) {
        out.extend_from_slice(&m.size.unwrap_or(0).to_le_bytes());
    }
    if mask.contains(VERSION) {
        put_opt_str(out, m.version.as_ref(), utf8);
    }
    if mask.contains(URL) {
        put_opt_str(out, m.url.as_ref(), utf8);
    }
    if mask.contains(AUTHOR) {
        put_opt_str(out, m.author.as_ref(), utf8);
    }
}

fn encode_map(m: &MapInfo, mask: Bits, utf8: bool, out: &mut Vec<u8>) {
    use map_fields::*;
    write_string(out, &m.name, utf8);
    if mask.contains(FILE_NAME) {
        put_opt_str(out, m.file_name.as_ref(), utf8);
    }
    if mask.contains(FILE_SIZE) {
        out.extend_from_slice(&m.file_size.unwrap_or(0).to_le_bytes());
    }
    if mask.contains(FILE_MD5) {
        out.extend_from_slice(&m.file_md5.unwrap_or_default());
    }
    if mask.contains(VERSION) {
        put_opt_str(out, m.version.as_ref(), utf8);
    }
    if mask.contains(URL) {
        put_opt_str(out, m.url.as_ref(), utf8);
    }
    if mask.contains(AUTHOR) {
        put_opt_str(out, m.author.as_ref(), utf8);
    }
}

fn encode_team(t: &Team, mask: Bits, colored: bool, utf8: bool, out: &mut Vec<u8>) {
    use team_fields::*;
    if mask.contains(NAME) {
        put_opt_str(out, t.name.as_ref(), utf8);
        if colored {
            write_color_info(out, t.name_color.as_ref());
        }
    }
    if mask.contains(SCORE) {
        write_var_sint(out, t.score.unwrap_or(0));
    }
    if mask.contains(AVERAGE_PING) {
        out.extend_from_slice(&crate::text::u16_le_sat(t.average_ping));
    }
    if mask.contains(AVERAGE_LOSS) {
        out.extend_from_slice(&crate::text::u16_le_sat(t.average_loss));
    }
    if mask.contains(PLAYER_COUNT) {
        write_var_uint(out, t.player_count.unwrap_or(0));
    }
    if mask.contains(COLOR) {
        out.extend_from_slice(&t.color.unwrap_or(0).to_le_bytes());
    }
}

fn encode_player(p: &Player, mask: Bits, colored: bool, utf8: bool, out: &mut Vec<u8>) {
    use player_fields::*;
    if mask.contains(FLAGS) {
        let on = |b: Option<bool>| u64::from(b == Some(true));
        let bits =
            on(p.alive) | on(p.dead) << 1 | on(p.bot) << 2 | on(p.bomb) << 7 | on(p.vip) << 8;
        write_bits(out, Bits(bits));
    }
    if mask.contains(SLOT) {
        write_var_uint(out, p.slot.unwrap_or(0));
    }
    if mask.contains(NAME) {
        put_opt_str(out, p.name.as_ref(), utf8);
        if colored {
            write_color_info(out, p.name_color.as_ref());
        }
    }
    if mask.contains(TEAM) {
        write_var_sint(out, p.team.unwrap_or(-1));
    }
    if mask.contains(CLASS) {
        put_opt_str(out, p.class.as_ref(), utf8);
    }
    if mask.contains(RACE) {
        put_opt_str(out, p.race.as_ref(), utf8);
    }
    if mask.contains(SCORE) {
        write_var_sint(out, p.score.unwrap_or(0));
    }
    if mask.contains(FRAGS) {
        write_var_sint(out, p.frags.unwrap_or(0));
    }
    if mask.contains(KILLS) {
        write_var_uint(out, p.kills.unwrap_or(0));
    }
    if mask.contains(DEATH) {
        write_var_uint(out, p.deaths.unwrap_or(0));
    }
    if mask.contains(SUICIDES) {
        write_var_uint(out, p.suicides.unwrap_or(0));
    }
    if mask.contains(TEAM_KILLS) {
        write_var_uint(out, p.team_kills.unwrap_or(0));
    }
    if mask.contains(ID) {
        out.extend_from_slice(&p.id.unwrap_or(0).to_le_bytes());
    }
    if mask.contains(GLOBAL_ID) {
        put_opt_str(out, p.global_id.as_ref(), utf8);
    }
    if mask.contains(PING) {
        out.extend_from_slice(&crate::text::u16_le_sat(p.ping));
    }
    if mask.contains(LOSS) {
        out.extend_from_slice(&crate::text::u16_le_sat(p.loss));
    }
    if mask.contains(MODEL) {
        put_opt_str(out, p.model.as_ref(), utf8);
    }
    if mask.contains(TIME) {
        out.extend_from_slice(&crate::text::u16_le_sat(p.time));
    }
    if mask.contains(ADDRESS) {
        let a = p.address.as_ref().map_or(&[][..], |a| a.0.as_slice());
        write_var_uint(out, len_u32(a.len()));
        out.extend_from_slice(a);
    }
}

fn encode_addon(a: &AddOn, mask: Bits, utf8: bool, out: &mut Vec<u8>) {
    use addon_fields::*;
    if mask.contains(FLAGS) {
        let on = |b: Option<bool>| u64::from(b == Some(true));
        let bits =
            on(a.active) | on(a.anti_cheat) << 1 | on(a.mutator) << 2 | on(a.admin_tool) << 3;
        write_bits(out, Bits(bits));
    }
    if mask.contains(SHORT_NAME) {
        put_opt_str(out, a.short_name.as_ref(), utf8);
    }
    if mask.contains(LONG_NAME) {
        put_opt_str(out, a.long_name.as_ref(), utf8);
    }
    if mask.contains(VERSION) {
        put_opt_str(out, a.version.as_ref(), utf8);
    }
}

// ---------------------------------------------------------------------------------------
// Decoding

struct Ctx<'w> {
    utf8: bool,
    colored: bool,
    warnings: &'w mut Vec<DecodeWarning>,
}

impl Ctx<'_> {
    fn string(&mut self, r: &mut Reader<'_>, field: &'static str) -> Result<Text, DecodeError> {
        read_string(r, field, self.utf8, self.warnings)
    }

    /// An optional string of a list item: `None` when empty. One field mask covers every
    /// item of a list (both maps, every player, every add-on), so an item that lacks a
    /// field its siblings have carries the filler "" (as this crate's encoder writes it).
    fn opt_string(
        &mut self,
        r: &mut Reader<'_>,
        field: &'static str,
    ) -> Result<Option<Text>, DecodeError> {
        // The filler is one NUL byte: consumed here, no text made of it.
        if r.peek_u8() == Some(0) {
            r.u8(field)?;
            return Ok(None);
        }
        // Any other first byte makes a string of at least one character.
        self.string(r, field).map(Some)
    }
}

fn reject_unknown(
    mask: Bits,
    known: Bits,
    offset: usize,
    field: &'static str,
) -> Result<(), DecodeError> {
    if mask.without(known).is_empty() {
        Ok(())
    } else {
        Err(DecodeError::invalid(
            offset,
            field,
            "unknown field bit set: the layout of what follows is unknown",
        ))
    }
}

/// Checks a list count against the bytes left, given the smallest size of one entry.
fn check_count(
    r: &Reader<'_>,
    count: u32,
    min_entry: usize,
    offset: usize,
    field: &'static str,
) -> Result<usize, DecodeError> {
    let n = usize::try_from(count).unwrap_or(usize::MAX);
    // However few bytes an entry takes on the wire, it costs a whole struct here (a
    // player is a few hundred bytes): cap every list so that a hostile split answer
    // (up to 1 MiB) cannot expand into hundreds of MB. Real servers list far fewer.
    if count > MAX_LIST_ENTRIES {
        return Err(DecodeError::new(
            offset,
            field,
            DecodeErrorKind::TooLarge {
                limit: u64::from(MAX_LIST_ENTRIES),
            },
        ));
    }
    let fits = if min_entry == 0 {
        count <= MAX_EMPTY_ENTRIES
    } else {
        n.checked_mul(min_entry)
            .is_some_and(|need| need <= r.remaining())
    };
    if fits {
        Ok(n)
    } else if min_entry == 0 {
        Err(DecodeError::new(
            offset,
            field,
            DecodeErrorKind::TooLarge {
                limit: u64::from(MAX_EMPTY_ENTRIES),
            },
        ))
    } else {
        Err(DecodeError::invalid(
            offset,
            field,
            "count promises more entries than the data holds",
        ))
    }
}

/// Decodes an answer body (the bytes after the header, or a reassembled split body).
/// `utf8` is the answer header's bit 0.4. Offsets in errors count from the first byte of
/// `body`.
pub fn decode_answer_body(body: &[u8], utf8: bool) -> Result<Answer, DecodeError> {
    read_answer_body(&mut Reader::new(body), utf8)
}

/// [`decode_answer_body`] from a reader (offsets in errors are those of `r`).
pub(crate) fn read_answer_body(r: &mut Reader<'_>, utf8: bool) -> Result<Answer, DecodeError> {
    let mut warnings = Vec::new();
    let game_id = r.u16_le("GameID")?;
    let flags_offset = r.offset();
    let flags = read_bits(r, "RequestFlags")?;
    let mut cx = Ctx {
        utf8,
        colored: flags.contains(request::COLORED_NAMES),
        warnings: &mut warnings,
    };
    let mut status = Status {
        game_id: Some(game_id),
        ..Status::default()
    };
    if flags.contains(request::SERVER_INFO) {
        decode_server_info(r, &mut cx, &mut status)?;
    }
    if flags.contains(request::TEAM_LIST) {
        status.teams = Some(decode_teams(r, &mut cx)?);
    }
    if flags.contains(request::PLAYER_LIST) {
        status.players = Some(decode_players(r, &mut cx)?);
    }
    if flags.contains(request::RULE_LIST) {
        let offset = r.offset();
        let count = read_var_uint(r, "RuleCount")?;
        let n = check_count(r, count, 2, offset, "RuleCount")?;
        let mut rules = Vec::with_capacity(n);
        for _ in 0..n {
            let k = cx.string(r, "RuleKey")?;
            let v = cx.string(r, "RuleValue")?;
            rules.push((k, v));
        }
        status.rules = Some(Rules(rules));
    }
    if flags.contains(request::ADDON_LIST) {
        status.addons = Some(decode_addons(r, &mut cx)?);
    }
    if flags.contains(request::LIMIT_LIST) {
        let offset = r.offset();
        let count = read_var_uint(r, "LimitCount")?;
        let n = check_count(r, count, 2, offset, "LimitCount")?;
        let mut limits = Vec::with_capacity(n);
        for _ in 0..n {
            let t = read_bits(r, "LimitType")?;
            let limit = read_var_uint(r, "Limit")?;
            let left = if t.0 & 1 != 0 {
                Some(read_var_uint(r, "Left")?)
            } else {
                None
            };
            limits.push(Limit {
                kind: LimitType::from_code(((t.0 >> 1) & 0x0f) as u8),
                limit,
                left,
            });
        }
        status.limits = Some(limits);
    }
    if !flags.without(request::KNOWN).is_empty() {
        warnings.push(DecodeWarning {
            offset: flags_offset,
            field: "RequestFlags",
            message: "unknown sections announced; their bytes are kept undecoded",
        });
    } else if !r.is_empty() {
        warnings.push(DecodeWarning {
            offset: r.offset(),
            field: "answer",
            message: "trailing bytes after the last section were ignored",
        });
    }
    Ok(Answer {
        request_flags: flags,
        status,
        unknown_sections: r.take_rest().to_vec(),
        warnings,
    })
}

fn decode_server_info(
    r: &mut Reader<'_>,
    cx: &mut Ctx<'_>,
    s: &mut Status,
) -> Result<(), DecodeError> {
    use server_info::*;
    let offset = r.offset();
    let mask = read_bits(r, "ServerInfoFields")?;
    reject_unknown(mask, ALL, offset, "ServerInfoFields")?;
    if mask.contains(GAME_NAME) {
        s.game_name = Some(cx.string(r, "GameName")?);
    }
    if mask.contains(SERVER_FLAGS) {
        let f = read_bits(r, "ServerFlags")?.0;
        s.server_type = Some(ServerType::from_code((f & 0x03) as u8));
        s.password = Some(f & 0x04 != 0);
        s.proxy = Some(f & 0x08 != 0);
        s.os = Some(Os::from_code(((f >> 4) & 0x07) as u8));
    }
    if mask.contains(HOST_NAME) {
        s.host_name = Some(cx.string(r, "HostName")?);
        if cx.colored {
            s.host_name_color = Some(read_color_info(r, "HostNameColor")?);
        }
    }
    if mask.contains(CONNECT_PORT) {
        s.connect_port = Some(r.u16_le("ConnectPort")?);
    }
    if mask.contains(MOD) {
        let name = cx.string(r, "ModName")?;
        let mut m = ModInfo {
            name,
            ..ModInfo::default()
        };
        if !m.name.is_empty() {
            use mod_fields::*;
            let offset = r.offset();
            let mf = read_bits(r, "ModFields")?;
            reject_unknown(mf, mod_fields::ALL, offset, "ModFields")?;
            if mf.contains(IDENTIFIER) {
                m.identifier = Some(cx.string(r, "ModIdentifier")?);
            }
            if mf.contains(SIZE) {
                m.size = Some(r.u32_le("ModSize")?);
            }
            if mf.contains(VERSION) {
                m.version = Some(cx.string(r, "ModVersion")?);
            }
            if mf.contains(URL) {
                m.url = Some(cx.string(r, "ModURL")?);
            }
            if mf.contains(AUTHOR) {
                m.author = Some(cx.string(r, "ModAuthor")?);
            }
        }
        s.mod_info = Some(m);
    }
    if mask.contains(GAME_TYPE) {
        s.game_type = Some(cx.string(r, "GameType")?);
    }
    if mask.contains(GAME_MODE) {
        s.game_mode = Some(cx.string(r, "GameMode")?);
    }
    if mask.contains(MAP) {
        let offset = r.offset();
        let mf = read_bits(r, "MapFields")?;
        reject_unknown(mf, map_fields::ALL, offset, "MapFields")?;
        s.map = Some(decode_map(r, cx, mf, "MapName")?);
        if mask.contains(NEXT_MAP) {
            s.next_map = Some(decode_map(r, cx, mf, "NextMapName")?);
        }
    }
    if mask.contains(PLAYER_COUNT) {
        s.player_count = Some(read_var_uint(r, "PlayerCount")?);
    }
    if mask.contains(SLOT_MAX) {
        s.slot_max = Some(read_var_uint(r, "SlotMax")?);
    }
    if mask.contains(BOT_COUNT) {
        s.bot_count = Some(read_var_uint(r, "BotCount")?);
    }
    if mask.contains(RESERVED_SLOTS) {
        s.reserved_slots = Some(read_var_uint(r, "ReservedSlots")?);
    }
    Ok(())
}

fn decode_map(
    r: &mut Reader<'_>,
    cx: &mut Ctx<'_>,
    mask: Bits,
    name_field: &'static str,
) -> Result<MapInfo, DecodeError> {
    use map_fields::*;
    let mut m = MapInfo::named(cx.string(r, name_field)?);
    // Both maps share the mask: a map that lacks a field carries a filler, which reads as
    // absent ("", a size of 0, an MD5 of zeros: none of them describes a real file).
    if mask.contains(FILE_NAME) {
        m.file_name = cx.opt_string(r, "MapFileName")?;
    }
    if mask.contains(FILE_SIZE) {
        m.file_size = Some(r.u32_le("MapFileSize")?).filter(|&n| n != 0);
    }
    if mask.contains(FILE_MD5) {
        m.file_md5 = Some(r.array::<16>("MapFileMD5")?).filter(|h| h != &[0; 16]);
    }
    if mask.contains(VERSION) {
        m.version = cx.opt_string(r, "MapVersion")?;
    }
    if mask.contains(URL) {
        m.url = cx.opt_string(r, "MapURL")?;
    }
    if mask.contains(AUTHOR) {
        m.author = cx.opt_string(r, "MapAuthor")?;
    }
    Ok(m)
}

fn decode_teams(r: &mut Reader<'_>, cx: &mut Ctx<'_>) -> Result<Vec<Team>, DecodeError> {
    use team_fields::*;
    let offset = r.offset();
    let count = read_var_uint(r, "TeamCount")?;
    if count == 0 {
        return Ok(Vec::new());
    }
    let mask_offset = r.offset();
    let mask = read_bits(r, "TeamFields")?;
    reject_unknown(mask, ALL, mask_offset, "TeamFields")?;
    let min = [NAME, SCORE, PLAYER_COUNT]
        .iter()
        .filter(|b| mask.contains(**b))
        .count()
        + usize::from(cx.colored && mask.contains(NAME))
        + 2 * [AVERAGE_PING, AVERAGE_LOSS, COLOR]
            .iter()
            .filter(|b| mask.contains(**b))
            .count();
    let n = check_count(r, count, min, offset, "TeamCount")?;
    let mut teams = Vec::with_capacity(n);
    for _ in 0..n {
        let mut t = Team::default();
        if mask.contains(NAME) {
            t.name = Some(cx.string(r, "TeamName")?);
            if cx.colored {
                t.name_color = Some(read_color_info(r, "TeamNameColor")?);
            }
        }
        if mask.contains(SCORE) {
            t.score = Some(read_var_sint(r, "TeamScore")?);
        }
        if mask.contains(AVERAGE_PING) {
            t.average_ping = Some(u32::from(r.u16_le("TeamAveragePing")?));
        }
        if mask.contains(AVERAGE_LOSS) {
            t.average_loss = Some(u32::from(r.u16_le("TeamAverageLoss")?));
        }
        if mask.contains(PLAYER_COUNT) {
            t.player_count = Some(read_var_uint(r, "TeamPlayerCount")?);
        }
        if mask.contains(COLOR) {
            t.color = Some(r.u16_le("TeamColor")?);
        }
        teams.push(t);
    }
    Ok(teams)
}

fn player_min_size(mask: Bits, colored: bool) -> usize {
    use player_fields::*;
    let one = [
        FLAGS, SLOT, NAME, TEAM, CLASS, RACE, SCORE, FRAGS, KILLS, DEATH, SUICIDES, TEAM_KILLS,
        GLOBAL_ID, MODEL, ADDRESS,
    ];
    let two = [PING, LOSS, TIME];
    one.iter().filter(|b| mask.contains(**b)).count()
        + 2 * two.iter().filter(|b| mask.contains(**b)).count()
        + 4 * usize::from(mask.contains(ID))
        + usize::from(colored && mask.contains(NAME))
}

fn decode_players(r: &mut Reader<'_>, cx: &mut Ctx<'_>) -> Result<Vec<Player>, DecodeError> {
    use player_fields::*;
    let offset = r.offset();
    let count = read_var_uint(r, "PlayerCount")?;
    if count == 0 {
        return Ok(Vec::new());
    }
    let mask_offset = r.offset();
    let mask = read_bits(r, "PlayerFields")?;
    reject_unknown(mask, ALL, mask_offset, "PlayerFields")?;
    let n = check_count(
        r,
        count,
        player_min_size(mask, cx.colored),
        offset,
        "PlayerCount",
    )?;
    let mut players: Vec<Player> = Vec::with_capacity(n);
    for _ in 0..n {
        // Built in place: a player is a few hundred bytes, and moving it in costs a copy.
        players.push(Player::default());
        let Some(p) = players.last_mut() else { break };
        if mask.contains(FLAGS) {
            let f = read_bits(r, "PlayerFlags")?.0;
            p.alive = Some(f & 1 != 0);
            p.dead = Some(f & 2 != 0);
            p.bot = Some(f & 4 != 0);
            p.bomb = Some(f & (1 << 7) != 0);
            p.vip = Some(f & (1 << 8) != 0);
        }
        if mask.contains(SLOT) {
            p.slot = Some(read_var_uint(r, "PlayerSlot")?);
        }
        if mask.contains(NAME) {
            p.name = Some(cx.string(r, "PlayerName")?);
            if cx.colored {
                p.name_color = Some(read_color_info(r, "PlayerNameColor")?);
            }
        }
        if mask.contains(TEAM) {
            p.team = Some(read_var_sint(r, "PlayerTeamNo")?);
        }
        if mask.contains(CLASS) {
            p.class = cx.opt_string(r, "PlayerClass")?;
        }
        if mask.contains(RACE) {
            p.race = cx.opt_string(r, "PlayerRace")?;
        }
        if mask.contains(SCORE) {
            p.score = Some(read_var_sint(r, "PlayerScore")?);
        }
        if mask.contains(FRAGS) {
            p.frags = Some(read_var_sint(r, "PlayerFrags")?);
        }
        if mask.contains(KILLS) {
            p.kills = Some(read_var_uint(r, "PlayerKills")?);
        }
        if mask.contains(DEATH) {
            p.deaths = Some(read_var_uint(r, "PlayerDeath")?);
        }
        if mask.contains(SUICIDES) {
            p.suicides = Some(read_var_uint(r, "PlayerSuicides")?);
        }
        if mask.contains(TEAM_KILLS) {
            p.team_kills = Some(read_var_uint(r, "PlayerTeamKills")?);
        }
        if mask.contains(ID) {
            p.id = Some(r.u32_le("PlayerID")?);
        }
        if mask.contains(GLOBAL_ID) {
            p.global_id = cx.opt_string(r, "PlayerGlobalID")?;
        }
        if mask.contains(PING) {
            p.ping = Some(u32::from(r.u16_le("PlayerPing")?));
        }
        if mask.contains(LOSS) {
            p.loss = Some(u32::from(r.u16_le("PlayerLoss")?));
        }
        if mask.contains(MODEL) {
            p.model = cx.opt_string(r, "PlayerModel")?;
        }
        if mask.contains(TIME) {
            p.time = Some(u32::from(r.u16_le("PlayerTime")?));
        }
        if mask.contains(ADDRESS) {
            let len = read_var_uint(r, "PlayerAddressLen")?;
            let len = usize::try_from(len).unwrap_or(usize::MAX);
            let a = r.take(len, "PlayerAddress")?;
            p.address = (!a.is_empty()).then(|| PlayerAddress(a.to_vec()));
        }
    }
    Ok(players)
}

fn decode_addons(r: &mut Reader<'_>, cx: &mut Ctx<'_>) -> Result<Vec<AddOn>, DecodeError> {
    use addon_fields::*;
    let offset = r.offset();
    let count = read_var_uint(r, "AddOnCount")?;
    if count == 0 {
        return Ok(Vec::new());
    }
    let mask_offset = r.offset();
    let mask = read_bits(r, "AddOnFields")?;
    reject_unknown(mask, ALL, mask_offset, "AddOnFields")?;
    let min = [FLAGS, SHORT_NAME, LONG_NAME, VERSION]
        .iter()
        .filter(|b| mask.contains(**b))
        .count();
    let n = check_count(r, count, min, offset, "AddOnCount")?;
    let mut addons = Vec::with_capacity(n);
    for _ in 0..n {
        let mut a = AddOn::default();
        if mask.contains(FLAGS) {
            let f = read_bits(r, "AddOnFlags")?.0;
            a.active = Some(f & 1 != 0);
            a.anti_cheat = Some(f & 2 != 0);
            a.mutator = Some(f & 4 != 0);
            a.admin_tool = Some(f & 8 != 0);
        }
        if mask.contains(SHORT_NAME) {
            a.short_name = cx.opt_string(r, "AddOnShortName")?;
        }
        if mask.contains(LONG_NAME) {
            a.long_name = cx.opt_string(r, "AddOnLongName")?;
        }
        if mask.contains(VERSION) {
            a.version = cx.opt_string(r, "AddOnVersion")?;
        }
        addons.push(a);
    }
    Ok(addons)
}
