//! The OGP normalisation: what a client decodes from our answer to a [`Status`].
//!
//! [`normalise`] is the answer to a query for everything; [`normalise_sections`] limits
//! it to the sections an answer carries; [`served`] is what a default responder serves.

use ogp_proto::ogp::query::request;
use ogp_proto::ogp::Bits;
use ogp_proto::{AddOn, ColorInfo, LimitType, ModInfo, Os, Player, ServerType, Status, Team};

/// Sets an absent field to its wire zero when the field is on the wire.
fn fill<T: Default>(field: &mut Option<T>, sent: bool) {
    if sent && field.is_none() {
        *field = Some(T::default());
    }
}

/// Reads a field's wire zero as absent, as the decoder does where the zero cannot be a
/// real value (empty optional strings, a map file size of 0, an MD5 of zeros, an empty
/// player address).
fn blank<T: Default + PartialEq>(field: &mut Option<T>) {
    if field.as_ref() == Some(&T::default()) {
        *field = None;
    }
}

/// A colour info as it comes back: a ColorValue16 exactly for codes 0x90–0x9F (absent is
/// sent as 0), nothing for other codes.
pub fn color_back(c: Option<&ColorInfo>) -> ColorInfo {
    let mut c = c.cloned().unwrap_or_default();
    for e in &mut c.entries {
        e.color16 = if (0x90..=0x9f).contains(&e.code) {
            Some(e.color16.unwrap_or(0))
        } else {
            None
        };
    }
    c
}

/// The status a client decodes from our answer to a query for everything (all sections,
/// all fields), worked out from `ogp/answer.rs` and spec §3.4:
///
/// 1. `game_id`: absent is sent as 0.
/// 2. Not carried by OGP and dropped: `game_version`, `a2s`, a player's `duration`,
///    `money` and `extra`, a team's `extra`.
/// 3. ServerFlags is sent when any of `server_type`, `os`, `password`, `proxy` is known;
///    then all four come back: type = code & 0x03, OS = code & 0x07, unknown ones as
///    code 0 / `false`.
/// 4. A mod with an empty name is "no mod" on the wire: only the empty name comes back.
/// 5. `next_map` comes back only with a `map` (bNextMap without bMap carries no data).
///    Map and next map share one MapFields: a field either has is sent for both, an
///    absent one as ""/0/zero MD5, and those come back absent (so do such values set).
/// 6. `player_count`/`bot_count` become explicit: [`Status::player_count`] and
///    [`Status::bot_count`] (derived from the player list unless overridden).
/// 7. Team, player and add-on lists have one field mask each: the fields any entry has.
///    Entries lacking such a field get its wire zero: "" for strings, 0 for numbers, an
///    empty address, team -1 ("not assigned"), and `false` for every flag of the player
///    (alive/dead/bot/bomb/vip) or add-on (active/anti-cheat/mutator/admin-tool) flag
///    group once any entry has any flag of it. The optional strings of players (class,
///    race, global id, model) and add-ons (all three) and an empty address come back
///    absent when empty, sent so or set so.
/// 8. Colour info travels only when the answer has bColoredNames (`colored`: asked for
///    *and* `AnswerOptions::colors`). Then every name on the wire (host name, team names,
///    player names) carries one, absent ones as empty (see [`color_back`]); otherwise
///    no colour info comes back at all.
/// 9. A LimitType keeps its low four bits.
///
/// Strings are not touched: the strategies only generate strings the charset carries
/// (no NUL, and only U+0001–U+00FF for Latin-1).
pub fn normalise(s: &Status, colored: bool) -> Status {
    let mut n = s.clone();
    // 1, 2
    n.game_id = Some(s.game_id.unwrap_or(0));
    n.game_version = None;
    n.a2s = None;
    // 3
    if s.server_type.is_some() || s.os.is_some() || s.password.is_some() || s.proxy.is_some() {
        n.server_type = Some(ServerType::from_code(
            s.server_type.map_or(0, ServerType::code) & 0x03,
        ));
        n.os = Some(Os::from_code(s.os.map_or(0, Os::code) & 0x07));
        n.password = Some(s.password == Some(true));
        n.proxy = Some(s.proxy == Some(true));
    }
    // 8 (host name)
    n.host_name_color =
        (colored && s.host_name.is_some()).then(|| color_back(s.host_name_color.as_ref()));
    // 4
    if let Some(m) = &mut n.mod_info {
        if m.name.is_empty() {
            *m = ModInfo::default();
        }
    }
    // 5
    if n.map.is_none() {
        n.next_map = None;
    }
    for m in n.map.iter_mut().chain(n.next_map.iter_mut()) {
        blank(&mut m.file_name);
        blank(&mut m.file_size);
        blank(&mut m.file_md5);
        blank(&mut m.version);
        blank(&mut m.url);
        blank(&mut m.author);
    }
    // 6
    n.player_count = s.player_count();
    n.bot_count = s.bot_count();
    // 7, 8 (teams)
    if let Some(teams) = &mut n.teams {
        let any = |f: fn(&Team) -> bool| teams.iter().any(f);
        let (name, score, ping, loss, count, color) = (
            any(|t| t.name.is_some()),
            any(|t| t.score.is_some()),
            any(|t| t.average_ping.is_some()),
            any(|t| t.average_loss.is_some()),
            any(|t| t.player_count.is_some()),
            any(|t| t.color.is_some()),
        );
        for t in teams.iter_mut() {
            t.extra.clear();
            fill(&mut t.name, name);
            t.name_color = (colored && name).then(|| color_back(t.name_color.as_ref()));
            fill(&mut t.score, score);
            fill(&mut t.average_ping, ping);
            fill(&mut t.average_loss, loss);
            fill(&mut t.player_count, count);
            fill(&mut t.color, color);
        }
    }
    // 7, 8 (players)
    if let Some(players) = &mut n.players {
        let any = |f: fn(&Player) -> bool| players.iter().any(f);
        let flags = any(|p| {
            p.alive.is_some()
                || p.dead.is_some()
                || p.bot.is_some()
                || p.bomb.is_some()
                || p.vip.is_some()
        });
        let sent = [
            any(|p| p.slot.is_some()),
            any(|p| p.name.is_some()),
            any(|p| p.team.is_some()),
            any(|p| p.score.is_some()),
            any(|p| p.frags.is_some()),
            any(|p| p.kills.is_some()),
            any(|p| p.deaths.is_some()),
            any(|p| p.suicides.is_some()),
            any(|p| p.team_kills.is_some()),
            any(|p| p.id.is_some()),
            any(|p| p.ping.is_some()),
            any(|p| p.loss.is_some()),
            any(|p| p.time.is_some()),
        ];
        for p in players.iter_mut() {
            p.duration = None;
            p.money = None;
            p.extra.clear();
            for f in [
                &mut p.alive,
                &mut p.dead,
                &mut p.bot,
                &mut p.bomb,
                &mut p.vip,
            ] {
                fill(f, flags);
            }
            fill(&mut p.slot, sent[0]);
            fill(&mut p.name, sent[1]);
            p.name_color = (colored && sent[1]).then(|| color_back(p.name_color.as_ref()));
            if sent[2] && p.team.is_none() {
                p.team = Some(-1);
            }
            blank(&mut p.class);
            blank(&mut p.race);
            fill(&mut p.score, sent[3]);
            fill(&mut p.frags, sent[4]);
            fill(&mut p.kills, sent[5]);
            fill(&mut p.deaths, sent[6]);
            fill(&mut p.suicides, sent[7]);
            fill(&mut p.team_kills, sent[8]);
            fill(&mut p.id, sent[9]);
            blank(&mut p.global_id);
            fill(&mut p.ping, sent[10]);
            fill(&mut p.loss, sent[11]);
            blank(&mut p.model);
            fill(&mut p.time, sent[12]);
            if p.address.as_ref().is_some_and(|a| a.0.is_empty()) {
                p.address = None;
            }
        }
    }
    // 7 (add-ons)
    if let Some(addons) = &mut n.addons {
        let any = |f: fn(&AddOn) -> bool| addons.iter().any(f);
        let flags = any(|a| {
            a.active.is_some()
                || a.anti_cheat.is_some()
                || a.mutator.is_some()
                || a.admin_tool.is_some()
        });
        for a in addons.iter_mut() {
            for f in [
                &mut a.active,
                &mut a.anti_cheat,
                &mut a.mutator,
                &mut a.admin_tool,
            ] {
                fill(f, flags);
            }
            blank(&mut a.short_name);
            blank(&mut a.long_name);
            blank(&mut a.version);
        }
    }
    // 9
    if let Some(limits) = &mut n.limits {
        for l in limits.iter_mut() {
            l.kind = LimitType::from_code(l.kind.code() & 0x0f);
        }
    }
    n
}

/// [`normalise`] for an answer whose RequestFlags are `sections`: the sections the answer
/// does not carry come back absent (server info: every server-info field).
pub fn normalise_sections(s: &Status, colored: bool, sections: Bits) -> Status {
    let mut n = normalise(s, colored);
    if !sections.contains(request::SERVER_INFO) {
        let mut lists = Status::default();
        lists.game_id = n.game_id;
        lists.teams = n.teams.take();
        lists.players = n.players.take();
        lists.rules = n.rules.take();
        lists.addons = n.addons.take();
        lists.limits = n.limits.take();
        n = lists;
    }
    if !sections.contains(request::TEAM_LIST) {
        n.teams = None;
    }
    if !sections.contains(request::PLAYER_LIST) {
        n.players = None;
    }
    if !sections.contains(request::RULE_LIST) {
        n.rules = None;
    }
    if !sections.contains(request::ADDON_LIST) {
        n.addons = None;
    }
    if !sections.contains(request::LIMIT_LIST) {
        n.limits = None;
    }
    n
}

/// `s` without player addresses: what a responder with the default
/// `OgpConfig { player_addresses: false, .. }` serves (wire choice A20).
pub fn without_addresses(s: &Status) -> Status {
    let mut s = s.clone();
    for p in s.players.iter_mut().flatten() {
        p.address = None;
    }
    s
}

/// What a client decodes from a default responder's answer with RequestFlags `sections`
/// (no colours, no player addresses).
pub fn served(s: &Status, sections: Bits) -> Status {
    normalise_sections(&without_addresses(s), false, sections)
}
