//! `ogp_status`: the status a game publishes, built field by field or from JSON.

use std::ffi::{c_char, c_int};

use ogp_proto::limits::{MAX_LIST_ENTRIES, MAX_STRING_BYTES};
use ogp_proto::{MapInfo, Player, Rules, Status, Team, Text};

use crate::error::{guard, opt_str, out_string, req_str, Error, Result, OGP_OK};

/// A status being built by the game (opaque). Made by `ogp_status_new`, freed by
/// `ogp_status_free`; `ogp_responder_publish` copies it, so the game keeps it and changes
/// it for the next publication.
///
/// Not thread-safe: one thread at a time may call functions on one `ogp_status` (two
/// statuses are independent).
#[allow(non_camel_case_types)]
#[derive(Debug, Default)]
pub struct ogp_status {
    pub(crate) status: Status,
}

/// The status behind `s`.
///
/// # Safety
///
/// `s` must be `NULL` or a live `ogp_status` not used by another thread.
pub(crate) unsafe fn status_mut<'a>(s: *mut ogp_status) -> Result<&'a mut Status> {
    // SAFETY: `s` is NULL or a live status from `ogp_status_new`, used by this thread
    // alone (the caller's promise).
    unsafe { s.as_mut() }
        .map(|s| &mut s.status)
        .ok_or_else(|| Error::null("status"))
}

/// A string argument of the status: `None` for `NULL`, checked against the length limit.
///
/// # Safety
///
/// As [`opt_str`].
unsafe fn text(ptr: *const c_char, len: usize, what: &str) -> Result<Option<Text>> {
    // SAFETY: forwarded from the caller.
    let s = unsafe { opt_str(ptr, len, what) }?;
    match s {
        Some(s) if s.len() > MAX_STRING_BYTES => Err(Error::invalid(format!(
            "{what}: {} bytes, at most {MAX_STRING_BYTES}",
            s.len()
        ))),
        s => Ok(s.map(Text::from)),
    }
}

/// An optional count: negative is "not reported" (`None`).
fn count(n: i64, what: &str) -> Result<Option<u32>> {
    if n < 0 {
        return Ok(None);
    }
    u32::try_from(n)
        .map(Some)
        .map_err(|_| Error::invalid(format!("{what}: {n} is too large")))
}

/// A new, empty status (nothing reported). Free it with `ogp_status_free`. (Running out of
/// memory aborts the process, as every Rust allocation does.)
#[no_mangle]
pub extern "C" fn ogp_status_new() -> *mut ogp_status {
    std::panic::catch_unwind(|| Box::into_raw(Box::<ogp_status>::default()))
        .unwrap_or(std::ptr::null_mut())
}

/// Frees a status. `NULL` is accepted. A status published with `ogp_responder_publish`
/// may be freed at once: the responder has its own copy.
///
/// # Safety
///
/// `s` must be `NULL` or a status from `ogp_status_new`, not freed before and not in use
/// by another thread.
#[no_mangle]
pub unsafe extern "C" fn ogp_status_free(s: *mut ogp_status) -> c_int {
    guard(|| {
        if !s.is_null() {
            // SAFETY: made by `Box::into_raw` in `ogp_status_new`, freed once.
            drop(unsafe { Box::from_raw(s) });
        }
        Ok(OGP_OK)
    })
}

/// Resets `s` to the empty status.
///
/// # Safety
///
/// `s` must be `NULL` or a live status used by this thread alone.
#[no_mangle]
pub unsafe extern "C" fn ogp_status_clear(s: *mut ogp_status) -> c_int {
    guard(|| {
        // SAFETY: the caller's promise on `s`.
        *unsafe { status_mut(s) }? = Status::default();
        Ok(OGP_OK)
    })
}

/// Sets a string field from `value`/`len`.
///
/// # Safety
///
/// As the setters that call it.
unsafe fn set_text(
    s: *mut ogp_status,
    value: *const c_char,
    len: usize,
    what: &str,
    field: fn(&mut Status) -> &mut Option<Text>,
) -> c_int {
    guard(|| {
        // SAFETY: the caller's promise on `s`.
        let status = unsafe { status_mut(s) }?;
        // SAFETY: the caller's promise on `value`/`len`.
        *field(status) = unsafe { text(value, len, what) }?;
        Ok(OGP_OK)
    })
}

/// Sets the server's name as shown in server lists.
///
/// `value` is UTF-8 of `len` bytes (no NUL needed), at most 4096 bytes; `NULL` unsets
/// the field (not reported). The string is copied.
///
/// # Safety
///
/// `s` must be `NULL` or a live status used by this thread alone; `value` must be `NULL`
/// or point to `len` readable bytes.
#[no_mangle]
pub unsafe extern "C" fn ogp_status_set_host_name(
    s: *mut ogp_status,
    value: *const c_char,
    len: usize,
) -> c_int {
    // SAFETY: forwarded from the caller.
    unsafe { set_text(s, value, len, "host name", |st| &mut st.host_name) }
}

/// Sets the game's name (e.g. "Half-Life").
///
/// `value` is UTF-8 of `len` bytes (no NUL needed), at most 4096 bytes; `NULL` unsets
/// the field (not reported). The string is copied.
///
/// # Safety
///
/// `s` must be `NULL` or a live status used by this thread alone; `value` must be `NULL`
/// or point to `len` readable bytes.
#[no_mangle]
pub unsafe extern "C" fn ogp_status_set_game_name(
    s: *mut ogp_status,
    value: *const c_char,
    len: usize,
) -> c_int {
    // SAFETY: forwarded from the caller.
    unsafe { set_text(s, value, len, "game name", |st| &mut st.game_name) }
}

/// Sets the game's version string (A2S `version`, GameSpy `gamever`).
///
/// `value` is UTF-8 of `len` bytes (no NUL needed), at most 4096 bytes; `NULL` unsets
/// the field (not reported). The string is copied.
///
/// # Safety
///
/// `s` must be `NULL` or a live status used by this thread alone; `value` must be `NULL`
/// or point to `len` readable bytes.
#[no_mangle]
pub unsafe extern "C" fn ogp_status_set_game_version(
    s: *mut ogp_status,
    value: *const c_char,
    len: usize,
) -> c_int {
    // SAFETY: forwarded from the caller.
    unsafe { set_text(s, value, len, "game version", |st| &mut st.game_version) }
}

/// Sets the game type (e.g. "CTF", "Deathmatch").
///
/// `value` is UTF-8 of `len` bytes (no NUL needed), at most 4096 bytes; `NULL` unsets
/// the field (not reported). The string is copied.
///
/// # Safety
///
/// `s` must be `NULL` or a live status used by this thread alone; `value` must be `NULL`
/// or point to `len` readable bytes.
#[no_mangle]
pub unsafe extern "C" fn ogp_status_set_game_type(
    s: *mut ogp_status,
    value: *const c_char,
    len: usize,
) -> c_int {
    // SAFETY: forwarded from the caller.
    unsafe { set_text(s, value, len, "game type", |st| &mut st.game_type) }
}

/// Sets the game mode: "wait", "openplaying", "closedplaying", "debriefing",
/// "exiting", "pause" or anything else.
///
/// `value` is UTF-8 of `len` bytes (no NUL needed), at most 4096 bytes; `NULL` unsets
/// the field (not reported). The string is copied.
///
/// # Safety
///
/// `s` must be `NULL` or a live status used by this thread alone; `value` must be `NULL`
/// or point to `len` readable bytes.
#[no_mangle]
pub unsafe extern "C" fn ogp_status_set_game_mode(
    s: *mut ogp_status,
    value: *const c_char,
    len: usize,
) -> c_int {
    // SAFETY: forwarded from the caller.
    unsafe { set_text(s, value, len, "game mode", |st| &mut st.game_mode) }
}

/// Sets the current map's name; `NULL` unsets it.
///
/// # Safety
///
/// `s` must be `NULL` or a live status used by this thread alone; `name` must be `NULL`
/// or point to `len` readable bytes.
#[no_mangle]
pub unsafe extern "C" fn ogp_status_set_map(
    s: *mut ogp_status,
    name: *const c_char,
    len: usize,
) -> c_int {
    guard(|| {
        // SAFETY: the caller's promise on `s`.
        let status = unsafe { status_mut(s) }?;
        // SAFETY: the caller's promise on `name`/`len`.
        status.map = unsafe { text(name, len, "map name") }?.map(MapInfo::named);
        Ok(OGP_OK)
    })
}

/// Sets a count field.
///
/// # Safety
///
/// As the setters that call it.
unsafe fn set_count(
    s: *mut ogp_status,
    n: i64,
    what: &str,
    field: fn(&mut Status) -> &mut Option<u32>,
) -> c_int {
    guard(|| {
        // SAFETY: the caller's promise on `s`.
        let status = unsafe { status_mut(s) }?;
        *field(status) = count(n, what)?;
        Ok(OGP_OK)
    })
}

/// Sets the number of players explicitly. Unset (the default), it is the length of
/// the player list.
///
/// A negative `count` unsets it; at most 4294967295.
///
/// # Safety
///
/// `s` must be `NULL` or a live status used by this thread alone.
#[no_mangle]
pub unsafe extern "C" fn ogp_status_set_player_count(s: *mut ogp_status, count: i64) -> c_int {
    // SAFETY: forwarded from the caller.
    unsafe { set_count(s, count, "player count", |st| &mut st.player_count) }
}

/// Sets the maximum number of players.
///
/// A negative `count` unsets it; at most 4294967295.
///
/// # Safety
///
/// `s` must be `NULL` or a live status used by this thread alone.
#[no_mangle]
pub unsafe extern "C" fn ogp_status_set_slot_max(s: *mut ogp_status, count: i64) -> c_int {
    // SAFETY: forwarded from the caller.
    unsafe { set_count(s, count, "slot max", |st| &mut st.slot_max) }
}

/// Sets the number of bots explicitly. Unset (the default), it is the number of
/// players flagged as bots (`ogp_status_set_player_bot`).
///
/// A negative `count` unsets it; at most 4294967295.
///
/// # Safety
///
/// `s` must be `NULL` or a live status used by this thread alone.
#[no_mangle]
pub unsafe extern "C" fn ogp_status_set_bot_count(s: *mut ogp_status, count: i64) -> c_int {
    // SAFETY: forwarded from the caller.
    unsafe { set_count(s, count, "bot count", |st| &mut st.bot_count) }
}

/// Sets whether joining needs a password: 1 yes, 0 no, negative unsets it.
///
/// # Safety
///
/// `s` must be `NULL` or a live status used by this thread alone.
#[no_mangle]
pub unsafe extern "C" fn ogp_status_set_password(s: *mut ogp_status, password: c_int) -> c_int {
    guard(|| {
        // SAFETY: the caller's promise on `s`.
        let status = unsafe { status_mut(s) }?;
        status.password = (password >= 0).then_some(password != 0);
        Ok(OGP_OK)
    })
}

/// Sets the port players connect to (0–65535; OGP: 0 means the query port); negative
/// unsets it.
///
/// # Safety
///
/// `s` must be `NULL` or a live status used by this thread alone.
#[no_mangle]
pub unsafe extern "C" fn ogp_status_set_connect_port(s: *mut ogp_status, port: i32) -> c_int {
    guard(|| {
        // SAFETY: the caller's promise on `s`.
        let status = unsafe { status_mut(s) }?;
        status.connect_port = if port < 0 {
            None
        } else {
            Some(
                u16::try_from(port)
                    .map_err(|_| Error::invalid(format!("connect port {port} is over 65535")))?,
            )
        };
        Ok(OGP_OK)
    })
}

/// Sets the rule (server variable) `key` to `value`, replacing its value if it is set,
/// else adding it at the end; a `NULL` `value` removes the rule. Both are UTF-8 with
/// explicit lengths, copied.
///
/// # Safety
///
/// `s` must be `NULL` or a live status used by this thread alone; `key` and `value` must
/// be `NULL` or point to `key_len` and `value_len` readable bytes.
#[no_mangle]
pub unsafe extern "C" fn ogp_status_set_rule(
    s: *mut ogp_status,
    key: *const c_char,
    key_len: usize,
    value: *const c_char,
    value_len: usize,
) -> c_int {
    guard(|| {
        // SAFETY: the caller's promise on `s`.
        let status = unsafe { status_mut(s) }?;
        // SAFETY: the caller's promise on `key`/`key_len`.
        let key = unsafe { text(key, key_len, "rule key") }?.ok_or_else(|| Error::null("key"))?;
        // SAFETY: the caller's promise on `value`/`value_len`.
        let value = unsafe { text(value, value_len, "rule value") }?;
        let rules = &mut status.rules.get_or_insert_with(Rules::default).0;
        let at = rules.iter().position(|(k, _)| *k == key);
        match (at, value) {
            (Some(i), Some(v)) => {
                if let Some(r) = rules.get_mut(i) {
                    r.1 = v;
                }
            }
            (Some(i), None) => {
                rules.remove(i);
            }
            (None, Some(v)) => {
                if rules.len() >= MAX_LIST_ENTRIES {
                    return Err(Error::invalid(format!(
                        "more than {MAX_LIST_ENTRIES} rules"
                    )));
                }
                rules.push((key, v));
            }
            (None, None) => {}
        }
        Ok(OGP_OK)
    })
}

/// Removes every rule (the server then reports an empty rule list).
///
/// # Safety
///
/// `s` must be `NULL` or a live status used by this thread alone.
#[no_mangle]
pub unsafe extern "C" fn ogp_status_clear_rules(s: *mut ogp_status) -> c_int {
    guard(|| {
        // SAFETY: the caller's promise on `s`.
        unsafe { status_mut(s) }?.rules = Some(Rules::default());
        Ok(OGP_OK)
    })
}

/// Removes every player (the server then reports an empty player list).
///
/// # Safety
///
/// `s` must be `NULL` or a live status used by this thread alone.
#[no_mangle]
pub unsafe extern "C" fn ogp_status_clear_players(s: *mut ogp_status) -> c_int {
    guard(|| {
        // SAFETY: the caller's promise on `s`.
        unsafe { status_mut(s) }?.players = Some(Vec::new());
        Ok(OGP_OK)
    })
}

/// Adds a player: name (UTF-8, `name_len` bytes, clipped to 4096 bytes; `NULL` for no
/// name), score, ping in milliseconds and seconds on the server. Returns the player's
/// index (0, 1, …) for `ogp_status_set_player_team`/`_bot`, or a negative error code.
/// At most 4096 players.
///
/// # Safety
///
/// `s` must be `NULL` or a live status used by this thread alone; `name` must be `NULL`
/// or point to `name_len` readable bytes.
#[no_mangle]
pub unsafe extern "C" fn ogp_status_add_player(
    s: *mut ogp_status,
    name: *const c_char,
    name_len: usize,
    score: i32,
    ping_ms: u32,
    time_s: u32,
) -> c_int {
    guard(|| {
        // SAFETY: the caller's promise on `s`.
        let status = unsafe { status_mut(s) }?;
        // SAFETY: the caller's promise on `name`/`name_len`.
        let name = unsafe { opt_str(name, name_len, "player name") }?.map(clip);
        let players = status.players.get_or_insert_with(Vec::new);
        if players.len() >= MAX_LIST_ENTRIES {
            return Err(Error::invalid(format!(
                "more than {MAX_LIST_ENTRIES} players"
            )));
        }
        players.push({
            let mut player = Player::default();
            player.name = name;
            player.score = Some(score);
            player.ping = Some(ping_ms);
            player.time = Some(time_s);
            player
        });
        c_int::try_from(players.len() - 1).map_err(|_| Error::invalid("too many players"))
    })
}

/// A player's name, clipped at a character boundary like a state file's.
fn clip(s: &str) -> Text {
    if s.len() <= MAX_STRING_BYTES {
        return Text::from(s);
    }
    let mut end = MAX_STRING_BYTES;
    while !s.is_char_boundary(end) {
        end -= 1;
    }
    Text::from(s.get(..end).unwrap_or_default())
}

/// The player at `index`.
///
/// # Safety
///
/// As [`status_mut`].
unsafe fn player_mut<'a>(s: *mut ogp_status, index: c_int) -> Result<&'a mut Player> {
    // SAFETY: forwarded from the caller.
    let status = unsafe { status_mut(s) }?;
    usize::try_from(index)
        .ok()
        .and_then(|i| status.players.as_mut()?.get_mut(i))
        .ok_or_else(|| Error::invalid(format!("no player {index}")))
}

/// `ogp_status_set_player_team`: no team.
const TEAM_NONE: i32 = -1;
/// `ogp_status_set_player_team`: a spectator.
const TEAM_SPECTATOR: i32 = -2;

/// Sets the team of the player at `index`: an index into the team list
/// (`ogp_status_add_team`; the team is added first), -1 for none, -2 for spectator.
/// Anything else is `OGP_ERR_INVALID`.
///
/// # Safety
///
/// `s` must be `NULL` or a live status used by this thread alone.
#[no_mangle]
pub unsafe extern "C" fn ogp_status_set_player_team(
    s: *mut ogp_status,
    index: c_int,
    team: i32,
) -> c_int {
    guard(|| {
        // SAFETY: the caller's promise on `s`.
        let teams = unsafe { status_mut(s) }?.teams.as_ref().map_or(0, Vec::len);
        let known = match usize::try_from(team) {
            Ok(i) => i < teams,
            Err(_) => team == TEAM_NONE || team == TEAM_SPECTATOR,
        };
        if !known {
            return Err(Error::invalid(format!(
                "team {team}: not -1 (none), -2 (spectator) or the index of one of the {teams} teams added"
            )));
        }
        // SAFETY: the caller's promise on `s`.
        unsafe { player_mut(s, index) }?.team = Some(team);
        Ok(OGP_OK)
    })
}

/// Flags the player at `index` as a bot (1) or not (0).
///
/// # Safety
///
/// `s` must be `NULL` or a live status used by this thread alone.
#[no_mangle]
pub unsafe extern "C" fn ogp_status_set_player_bot(
    s: *mut ogp_status,
    index: c_int,
    bot: c_int,
) -> c_int {
    guard(|| {
        // SAFETY: the caller's promise on `s`.
        unsafe { player_mut(s, index) }?.bot = Some(bot != 0);
        Ok(OGP_OK)
    })
}

/// Removes every team (the server then reports an empty team list).
///
/// # Safety
///
/// `s` must be `NULL` or a live status used by this thread alone.
#[no_mangle]
pub unsafe extern "C" fn ogp_status_clear_teams(s: *mut ogp_status) -> c_int {
    guard(|| {
        // SAFETY: the caller's promise on `s`.
        unsafe { status_mut(s) }?.teams = Some(Vec::new());
        Ok(OGP_OK)
    })
}

/// Adds a team with a name (UTF-8, `name_len` bytes; `NULL` for none) and a score.
/// Returns its index (what `ogp_status_set_player_team` takes), or a negative error
/// code.
///
/// # Safety
///
/// `s` must be `NULL` or a live status used by this thread alone; `name` must be `NULL`
/// or point to `name_len` readable bytes.
#[no_mangle]
pub unsafe extern "C" fn ogp_status_add_team(
    s: *mut ogp_status,
    name: *const c_char,
    name_len: usize,
    score: i32,
) -> c_int {
    guard(|| {
        // SAFETY: the caller's promise on `s`.
        let status = unsafe { status_mut(s) }?;
        // SAFETY: the caller's promise on `name`/`name_len`.
        let name = unsafe { opt_str(name, name_len, "team name") }?.map(clip);
        let teams = status.teams.get_or_insert_with(Vec::new);
        if teams.len() >= MAX_LIST_ENTRIES {
            return Err(Error::invalid(format!(
                "more than {MAX_LIST_ENTRIES} teams"
            )));
        }
        teams.push({
            let mut team = Team::default();
            team.name = name;
            team.score = Some(score);
            team
        });
        c_int::try_from(teams.len() - 1).map_err(|_| Error::invalid("too many teams"))
    })
}

/// Replaces the whole status with `json` (UTF-8, `len` bytes): the state-file schema
/// that `ogp serve --state` reads (docs/state-file.md), with the same limits. On error
/// the status is unchanged and `ogp_last_error_message` names the field.
///
/// # Safety
///
/// `s` must be `NULL` or a live status used by this thread alone; `json` must be `NULL`
/// or point to `len` readable bytes.
#[no_mangle]
pub unsafe extern "C" fn ogp_status_set_json(
    s: *mut ogp_status,
    json: *const c_char,
    len: usize,
) -> c_int {
    guard(|| {
        // SAFETY: the caller's promise on `s`.
        let status = unsafe { status_mut(s) }?;
        // SAFETY: the caller's promise on `json`/`len`.
        let json = unsafe { req_str(json, len, "json") }?;
        let mut parsed =
            Status::from_json(json).map_err(|e| Error::invalid(format!("status JSON: {e}")))?;
        parsed
            .apply_limits()
            .map_err(|e| Error::invalid(format!("status JSON: {e}")))?;
        *status = parsed;
        Ok(OGP_OK)
    })
}

/// The status as JSON (the state-file schema) in `*out` (NUL-terminated; its length
/// without the NUL in `*out_len` unless `out_len` is `NULL`). Free it with
/// `ogp_string_free`.
///
/// # Safety
///
/// `s` must be `NULL` or a live status used by this thread alone; `out` must be `NULL` or
/// valid for a write, `out_len` too.
#[no_mangle]
pub unsafe extern "C" fn ogp_status_to_json(
    s: *mut ogp_status,
    out: *mut *mut c_char,
    out_len: *mut usize,
) -> c_int {
    guard(|| {
        // SAFETY: the caller's promise on `s`.
        let status = unsafe { status_mut(s) }?;
        let json = ogp_proto::result::to_json(status).map_err(|e| Error::invalid(e.to_string()))?;
        // SAFETY: the caller's promise on `out`/`out_len`.
        unsafe { out_string(json, out, out_len) }?;
        Ok(OGP_OK)
    })
}
