//! Human-readable rendering of a [`Status`]: a server block, then tables of teams,
//! players, rules, add-ons and limits. Only columns that some entry has are shown.

use std::fmt::Write as _;

use ogp_proto::{Player, Status};

/// Display width of a string, counted in characters (good enough for names; we do not
/// pull in a Unicode width table for a debugging tool).
fn width(s: &str) -> usize {
    s.chars().count()
}

/// Widest table cell shown; longer ones end in `…` so that one long name does not push
/// every row past the terminal's edge.
const MAX_CELL: usize = 40;

/// Widest rule value shown.
const MAX_VALUE: usize = 100;

/// Widest value of the server block (`Name:`, `Map:`…): a name of 65 KB (a Bedrock MOTD
/// may be that long) ends in `…` instead of filling the screen.
const MAX_FIELD: usize = 200;

/// `s` cut to `n` characters, ending in `…` when cut.
fn clip(s: &str, n: usize) -> String {
    if width(s) <= n {
        return s.to_string();
    }
    let mut t: String = s.chars().take(n.saturating_sub(1)).collect();
    t.push('…');
    t
}

/// A rule value as shown: text sanitized and clipped, and binary data (values where
/// much is control characters or bytes that were not UTF-8, as A2S rules of some games
/// carry) named as such instead of a row of replacement characters.
fn rule_value(v: &str) -> String {
    let n = width(v);
    let odd = v
        .chars()
        .filter(|c| *c == '\u{fffd}' || is_unsafe_char(*c))
        .count();
    if n >= 4 && odd * 4 >= n {
        return format!("(binary, {n} characters)");
    }
    clip(&sanitize(v), MAX_VALUE)
}

/// A string field that is there and not empty.
fn present(v: Option<&ogp_proto::Text>) -> Option<&ogp_proto::Text> {
    v.filter(|v| !v.is_empty())
}

/// Whether a character must not reach a terminal: C0 and C1 controls, DEL, the
/// bidirectional controls and U+2028/U+2029 (the one list, shared with the JSON writer
/// that escapes them: [`ogp_proto::result::is_terminal_control`]).
pub fn is_unsafe_char(c: char) -> bool {
    ogp_proto::result::is_terminal_control(c)
}

/// Text from the network made safe for a terminal: every character of
/// [`is_unsafe_char`] becomes U+FFFD. Every human output path prints peer strings
/// through this.
pub fn sanitize(s: &str) -> String {
    ogp_proto::result::sanitize(s)
}

/// A simple left-aligned text table.
struct Table {
    headers: Vec<&'static str>,
    rows: Vec<Vec<String>>,
}

impl Table {
    fn render(&self, out: &mut String, indent: &str) {
        let rows: Vec<Vec<String>> = self
            .rows
            .iter()
            .map(|r| r.iter().map(|c| clip(c, MAX_CELL)).collect())
            .collect();
        let mut widths: Vec<usize> = self.headers.iter().map(|h| width(h)).collect();
        for row in &rows {
            for (w, cell) in widths.iter_mut().zip(row) {
                *w = (*w).max(width(cell));
            }
        }
        let line = |out: &mut String, cells: &mut dyn Iterator<Item = &str>| {
            out.push_str(indent);
            let mut first = true;
            let mut buf = String::new();
            for (cell, w) in cells.zip(&widths) {
                if !first {
                    buf.push_str("  ");
                }
                first = false;
                buf.push_str(cell);
                buf.extend(std::iter::repeat_n(' ', w.saturating_sub(width(cell))));
            }
            out.push_str(buf.trim_end());
            out.push('\n');
        };
        line(out, &mut self.headers.iter().copied());
        for row in &rows {
            line(out, &mut row.iter().map(String::as_str));
        }
    }
}

fn opt<T: ToString>(v: Option<T>) -> String {
    v.map(|v| v.to_string()).unwrap_or_default()
}

fn opt_str(v: Option<&ogp_proto::Text>) -> String {
    v.map(|s| sanitize(s)).unwrap_or_default()
}

/// Renders the whole status.
pub fn status(s: &Status) -> String {
    let mut out = String::new();
    let mut kv: Vec<(&str, String)> = Vec::new();
    let mut add = |k: &'static str, v: Option<String>| {
        if let Some(v) = v {
            kv.push((k, v));
        }
    };
    add("Name", s.host_name.as_ref().map(|h| sanitize(h)));
    add(
        "Game",
        s.game_name.as_ref().map(|g| {
            let mut g = sanitize(g);
            if let Some(v) = present(s.game_version.as_ref()) {
                let _ = write!(g, " {}", sanitize(v));
            }
            // GameID 0 is "not set".
            if let Some(id) = s.game_id.filter(|id| *id != 0) {
                let _ = write!(g, " (GameID {id})");
            }
            g
        }),
    );
    if s.game_name.is_none() {
        add(
            "GameID",
            s.game_id.filter(|id| *id != 0).map(|i| i.to_string()),
        );
    }
    add("Type", s.game_type.as_ref().map(|t| sanitize(t)));
    add("Mode", s.game_mode.as_ref().map(|t| sanitize(t)));
    add("Map", s.map.as_ref().map(describe_map));
    add("Next map", s.next_map.as_ref().map(describe_map));
    let players = s.player_count().map(|n| {
        let mut p = n.to_string();
        if let Some(max) = s.slot_max {
            let _ = write!(p, " / {max}");
        }
        if let Some(b) = s.bot_count() {
            let _ = write!(p, "  (bots {b})");
        }
        if let Some(r) = s.reserved_slots {
            let _ = write!(p, "  (reserved {r})");
        }
        p
    });
    add("Players", players);
    if s.player_count().is_none() {
        add("Slots", s.slot_max.map(|m| m.to_string()));
    }
    let mut server = Vec::new();
    server.extend(s.server_type.map(|t| t.to_string()));
    server.extend(s.os.map(|o| o.to_string()));
    if s.password == Some(true) {
        server.push("password".into());
    }
    if s.proxy == Some(true) {
        server.push("proxy".into());
    }
    add("Server", (!server.is_empty()).then(|| server.join(", ")));
    add(
        "Connect port",
        s.connect_port.map(|p| {
            if p == 0 {
                "0 (same as query port)".to_string()
            } else {
                p.to_string()
            }
        }),
    );
    add(
        "Mod",
        s.mod_info.as_ref().filter(|m| !m.name.is_empty()).map(|m| {
            let mut d = sanitize(&m.name);
            if let Some(v) = present(m.version.as_ref()) {
                let _ = write!(d, " {}", sanitize(v));
            }
            let id = m.effective_identifier();
            if id != m.name {
                let _ = write!(d, " [{}]", sanitize(id));
            }
            if let Some(a) = present(m.author.as_ref()) {
                let _ = write!(d, " by {}", sanitize(a));
            }
            if let Some(u) = present(m.url.as_ref()) {
                let _ = write!(d, " <{}>", sanitize(u));
            }
            d
        }),
    );
    let kw = kv.iter().map(|(k, _)| width(k)).max().unwrap_or(0);
    for (k, v) in &kv {
        let _ = writeln!(out, "{k:>kw$}: {}", clip(v, MAX_FIELD));
    }

    if let Some(teams) = &s.teams {
        let _ = writeln!(out, "\nTeams ({})", teams.len());
        if !teams.is_empty() {
            let mut cols: Vec<&'static str> = vec!["#"];
            let any = |f: &dyn Fn(&ogp_proto::Team) -> bool| teams.iter().any(f);
            let c_name = any(&|t| t.name.is_some());
            let c_score = any(&|t| t.score.is_some());
            let c_players = any(&|t| t.player_count.is_some());
            let c_ping = any(&|t| t.average_ping.is_some());
            let c_loss = any(&|t| t.average_loss.is_some());
            let c_color = any(&|t| t.color.is_some());
            for (on, h) in [
                (c_name, "Name"),
                (c_score, "Score"),
                (c_players, "Players"),
                (c_ping, "Ping"),
                (c_loss, "Loss"),
                (c_color, "Color"),
            ] {
                if on {
                    cols.push(h);
                }
            }
            let rows = teams
                .iter()
                .enumerate()
                .map(|(i, t)| {
                    let mut r = vec![i.to_string()];
                    if c_name {
                        r.push(opt_str(t.name.as_ref()));
                    }
                    if c_score {
                        r.push(opt(t.score));
                    }
                    if c_players {
                        r.push(opt(t.player_count));
                    }
                    if c_ping {
                        r.push(opt(t.average_ping));
                    }
                    if c_loss {
                        r.push(opt(t.average_loss));
                    }
                    if c_color {
                        r.push(t.color.map(|c| format!("#{c:04x}")).unwrap_or_default());
                    }
                    r
                })
                .collect();
            Table {
                headers: cols,
                rows,
            }
            .render(&mut out, "  ");
        }
    }

    if let Some(players) = &s.players {
        let _ = writeln!(out, "\nPlayers ({})", players.len());
        if !players.is_empty() {
            player_table(players, s).render(&mut out, "  ");
        }
    }

    if let Some(rules) = &s.rules {
        let _ = writeln!(out, "\nRules ({})", rules.len());
        let kw = rules
            .iter()
            .map(|(k, _)| width(&clip(&sanitize(k), MAX_CELL)))
            .max()
            .unwrap_or(0);
        for (k, v) in rules.iter() {
            let k = clip(&sanitize(k), MAX_CELL);
            let pad = kw.saturating_sub(width(&k));
            let _ = writeln!(out, "  {k}{}  {}", " ".repeat(pad), rule_value(v));
        }
    }

    if let Some(addons) = &s.addons {
        let _ = writeln!(out, "\nAdd-ons ({})", addons.len());
        if !addons.is_empty() {
            let rows = addons
                .iter()
                .map(|a| {
                    let mut flags = Vec::new();
                    for (v, n) in [
                        (a.active, "active"),
                        (a.anti_cheat, "anti-cheat"),
                        (a.mutator, "mutator"),
                        (a.admin_tool, "admin"),
                    ] {
                        if v == Some(true) {
                            flags.push(n);
                        }
                    }
                    vec![
                        opt_str(a.short_name.as_ref()),
                        opt_str(a.long_name.as_ref()),
                        opt_str(a.version.as_ref()),
                        flags.join(", "),
                    ]
                })
                .collect();
            Table {
                headers: vec!["Name", "Long name", "Version", "Flags"],
                rows,
            }
            .render(&mut out, "  ");
        }
    }

    if let Some(limits) = &s.limits {
        let _ = writeln!(out, "\nLimits ({})", limits.len());
        if !limits.is_empty() {
            let rows = limits
                .iter()
                .map(|l| vec![l.kind.to_string(), l.limit.to_string(), opt(l.left)])
                .collect();
            Table {
                headers: vec!["Type", "Limit", "Left"],
                rows,
            }
            .render(&mut out, "  ");
        }
    }
    out
}

fn non_empty(s: &Option<ogp_proto::Text>) -> Option<&str> {
    s.as_deref().filter(|s| !s.is_empty())
}

fn describe_map(m: &ogp_proto::MapInfo) -> String {
    let mut d = sanitize(&m.name);
    let file = m.effective_file_name();
    if file != m.name {
        let _ = write!(d, " ({})", sanitize(file));
    }
    if let Some(v) = non_empty(&m.version) {
        let _ = write!(d, " {}", sanitize(v));
    }
    if let Some(a) = non_empty(&m.author) {
        let _ = write!(d, " by {}", sanitize(a));
    }
    d
}

fn player_table(players: &[Player], s: &Status) -> Table {
    type Col = (&'static str, fn(&Player, &Status) -> Option<String>);
    let cols: &[Col] = &[
        ("Slot", |p, _| p.slot.map(|v| v.to_string())),
        ("Name", |p, _| p.name.as_ref().map(|n| sanitize(n))),
        ("Team", |p, s| {
            p.team.map(|t| match t {
                -1 => "-".to_string(),
                -2 => "spectator".to_string(),
                t => s
                    .teams
                    .as_ref()
                    .and_then(|teams| usize::try_from(t).ok().and_then(|i| teams.get(i)))
                    .and_then(|team| team.name.as_ref())
                    .map(|n| sanitize(n))
                    .unwrap_or_else(|| t.to_string()),
            })
        }),
        ("Score", |p, _| p.score.map(|v| v.to_string())),
        ("Frags", |p, _| p.frags.map(|v| v.to_string())),
        ("Kills", |p, _| p.kills.map(|v| v.to_string())),
        ("Deaths", |p, _| p.deaths.map(|v| v.to_string())),
        ("Ping", |p, _| p.ping.map(|v| v.to_string())),
        ("Time", |p, _| {
            p.time
                .or_else(|| p.duration.map(|d| d.max(0.0) as u32))
                .map(|t| format!("{}:{:02}", t / 60, t % 60))
        }),
        ("Class", |p, _| p.class.as_ref().map(|v| sanitize(v))),
        ("Flags", |p, _| {
            let mut f = Vec::new();
            for (v, n) in [
                (p.bot, "bot"),
                (p.dead, "dead"),
                (p.bomb, "bomb"),
                (p.vip, "vip"),
            ] {
                if v == Some(true) {
                    f.push(n);
                }
            }
            (p.alive.is_some() || p.dead.is_some() || p.bot.is_some()).then(|| f.join(","))
        }),
        ("Global id", |p, _| {
            p.global_id.as_ref().map(|v| sanitize(v))
        }),
        ("Address", |p, _| p.address.as_ref().map(|a| a.to_string())),
    ];
    let shown: Vec<&Col> = cols
        .iter()
        .filter(|(_, f)| players.iter().any(|p| f(p, s).is_some()))
        .collect();
    Table {
        headers: shown.iter().map(|(h, _)| *h).collect(),
        rows: players
            .iter()
            .map(|p| {
                shown
                    .iter()
                    .map(|(_, f)| f(p, s).unwrap_or_default())
                    .collect()
            })
            .collect(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn empty_and_unset_fields_are_not_shown() {
        let s = Status::from_json(
            r#"{"game_name":"cstrike","game_id":0,"host_name":"h",
                "mod":{"name":"cstrike","version":"1","url":"","author":""}}"#,
        )
        .unwrap();
        let out = status(&s);
        assert!(out.contains("Mod: cstrike 1\n"), "{out}");
        assert!(!out.contains("<>") && !out.contains(" by "), "{out}");
        assert!(!out.contains("GameID"), "{out}");
    }

    #[test]
    fn binary_rule_values_and_long_cells_are_kept_in_bounds() {
        let long = "x".repeat(500);
        let json = serde_json::json!({
            "rules": {"bin": "\u{fffd}\u{fffd}\u{1}\u{fffd}ab\u{fffd}", "long": long, "ok": "1"},
            "players": [{"name": long}],
        });
        let out = status(&Status::from_json(&json.to_string()).unwrap());
        assert!(out.contains("bin   (binary, 7 characters)"), "{out}");
        assert!(out.contains("ok    1"), "{out}");
        assert!(
            out.lines().all(|l| width(l) <= 2 + 4 + 2 + MAX_VALUE),
            "{out}"
        );
        assert!(
            out.contains(&format!("{}…", "x".repeat(MAX_CELL - 1))),
            "{out}"
        );
    }

    #[test]
    fn a_long_name_is_clipped_on_its_line() {
        let long = "m".repeat(65_000);
        let json = serde_json::json!({"host_name": long, "map": {"name": long}});
        let out = status(&Status::from_json(&json.to_string()).unwrap());
        for line in out.lines() {
            assert!(width(line) <= MAX_FIELD + 10, "{} characters", width(line));
        }
        assert!(out.contains(&format!("Name: {}…", "m".repeat(MAX_FIELD - 1))));
    }

    #[test]
    fn nothing_that_steers_a_terminal_gets_through() {
        let hostile =
            "a\u{1b}[2J\u{1b}[31mb\u{9b}2Jc\u{7f}\u{202e}d\u{2066}e\u{200f}f\u{2028}g\u{0}\r\n";
        let safe = sanitize(hostile);
        assert!(!safe.chars().any(is_unsafe_char), "{safe:?}");
        assert_eq!(
            safe.chars().filter(|c| *c == '\u{fffd}').count(),
            11,
            "{safe:?}"
        );
        // Letters, accents, CJK, emoji and ordinary right-to-left text are kept.
        for fine in ["Zoë", "サーバー", "🎮 server", "שרת", "[TAG] name | 50%"] {
            assert_eq!(sanitize(fine), fine);
        }
    }
}
