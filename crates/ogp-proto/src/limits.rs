//! How much a status read from a state file may hold.
//!
//! The model's serde form is read from files that anyone with write access to a directory
//! can swap, so what it may hold is bounded by what the protocols can carry at most:
//!
//! * **Counts** (teams, players, rules, add-ons, limits, colour entries, `extra` columns)
//!   are checked *while* deserializing: a list past its cap is an error naming its length,
//!   and nothing past the cap is kept, so a file of a few bytes per entry cannot grow
//!   into hundreds of bytes of model per entry.
//! * **Strings** are checked afterwards by [`Status::apply_limits`] (a string in the model
//!   is never larger than its text in the file). Strings that players choose, everything
//!   under `players` and `teams`, are clipped at a character boundary and reported; every
//!   other string is refused with its path (`host_name: 70000 bytes, at most 4096`).
//!
//! `docs/state-file.md` has the table, with the reason for each number.

use std::collections::BTreeMap;
use std::fmt;

use crate::model::{ColorInfo, Player, Status, Team, Text};

pub use crate::bounded::{
    MAX_ADDRESS_BYTES, MAX_COLOR_ENTRIES, MAX_EXTRA_ENTRIES, MAX_LIST_ENTRIES, MAX_STRING_BYTES,
    MAX_UNDECODED_COLOR_BYTES,
};

/// A value past its limit, refused: the field's path and what is wrong, e.g.
/// `host_name: 70000 bytes, at most 4096`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LimitError {
    /// Where, as `players[12].name`.
    pub path: String,
    /// What is wrong.
    pub problem: String,
}

impl fmt::Display for LimitError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: {}", self.path, self.problem)
    }
}

impl std::error::Error for LimitError {}

/// One clipped string.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Clipped {
    /// Where, as `players[12].name`.
    pub path: String,
    /// Its length before clipping, in bytes.
    pub bytes: usize,
}

/// The strings [`Status::apply_limits`] clipped: how many, and the first few.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ClipReport {
    /// How many strings were clipped.
    pub count: usize,
    /// The first [`ClipReport::KEPT`] of them.
    pub first: Vec<Clipped>,
}

impl ClipReport {
    /// How many clipped strings are named.
    pub const KEPT: usize = 4;

    /// Whether nothing was clipped.
    pub fn is_empty(&self) -> bool {
        self.count == 0
    }
}

impl fmt::Display for ClipReport {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let plural = if self.count == 1 { "" } else { "s" };
        write!(
            f,
            "{} string{plural} clipped to {MAX_STRING_BYTES} bytes: ",
            self.count
        )?;
        for (i, c) in self.first.iter().enumerate() {
            let sep = if i == 0 { "" } else { ", " };
            write!(f, "{sep}{} ({} bytes)", c.path, c.bytes)?;
        }
        if self.count > self.first.len() {
            write!(f, " and {} more", self.count - self.first.len())?;
        }
        Ok(())
    }
}

impl Status {
    /// Applies the state-file limits (see the [module](self)): refuses a count or a
    /// non-player string past its limit, naming the field; clips strings under `players`
    /// and `teams` and says which.
    pub fn apply_limits(&mut self) -> Result<ClipReport, LimitError> {
        let mut w = Walk::default();
        for (name, s) in [
            ("game_name", &self.game_name),
            ("game_version", &self.game_version),
            ("host_name", &self.host_name),
            ("host_name_raw", &self.host_name_raw),
            ("game_type", &self.game_type),
            ("game_mode", &self.game_mode),
        ] {
            refuse_long(s.as_ref(), || name.to_owned())?;
        }
        if let Some(c) = &self.host_name_color {
            check_color(c, || "host_name_color".to_owned())?;
        }
        if let Some(m) = &self.mod_info {
            refuse_long(Some(&m.name), || "mod.name".to_owned())?;
            for (name, s) in [
                ("identifier", &m.identifier),
                ("version", &m.version),
                ("url", &m.url),
                ("author", &m.author),
            ] {
                refuse_long(s.as_ref(), || format!("mod.{name}"))?;
            }
        }
        for (map_key, map) in [("map", &self.map), ("next_map", &self.next_map)] {
            let Some(m) = map else { continue };
            refuse_long(Some(&m.name), || format!("{map_key}.name"))?;
            for (name, s) in [
                ("file_name", &m.file_name),
                ("version", &m.version),
                ("url", &m.url),
                ("author", &m.author),
            ] {
                refuse_long(s.as_ref(), || format!("{map_key}.{name}"))?;
            }
        }
        if let Some(teams) = &mut self.teams {
            check_count(teams.len(), MAX_LIST_ENTRIES, || "teams".to_owned())?;
            for (i, t) in teams.iter_mut().enumerate() {
                w.team(i, t)?;
            }
        }
        if let Some(players) = &mut self.players {
            check_count(players.len(), MAX_LIST_ENTRIES, || "players".to_owned())?;
            for (i, p) in players.iter_mut().enumerate() {
                w.player(i, p)?;
            }
        }
        if let Some(rules) = &self.rules {
            check_count(rules.len(), MAX_LIST_ENTRIES, || "rules".to_owned())?;
            for (k, v) in rules.iter() {
                if k.len() > MAX_STRING_BYTES {
                    return Err(too_long(format!("rules key {:?}…", clip_str(k, 32)), k));
                }
                refuse_long_str(v, || format!("rules.{k}"))?;
            }
        }
        if let Some(addons) = &self.addons {
            check_count(addons.len(), MAX_LIST_ENTRIES, || "addons".to_owned())?;
            for (i, a) in addons.iter().enumerate() {
                for (name, s) in [
                    ("short_name", &a.short_name),
                    ("long_name", &a.long_name),
                    ("version", &a.version),
                ] {
                    refuse_long(s.as_ref(), || format!("addons[{i}].{name}"))?;
                }
            }
        }
        if let Some(limits) = &self.limits {
            check_count(limits.len(), MAX_LIST_ENTRIES, || "limits".to_owned())?;
        }
        if let Some(a) = &self.a2s {
            for (name, s) in [
                ("folder", &a.folder),
                ("keywords", &a.keywords),
                ("sourcetv_name", &a.sourcetv_name),
                ("address", &a.address),
                ("mod_download_url", &a.mod_download_url),
            ] {
                refuse_long(s.as_ref(), || format!("a2s.{name}"))?;
            }
        }
        Ok(w.report)
    }
}

/// The walk over players and teams, collecting what was clipped.
#[derive(Default)]
struct Walk {
    report: ClipReport,
}

impl Walk {
    fn clip(&mut self, s: &mut Text, path: impl FnOnce() -> String) {
        if s.len() <= MAX_STRING_BYTES {
            return;
        }
        let bytes = s.len();
        let end = floor_char_boundary(s, MAX_STRING_BYTES);
        s.truncate(end);
        self.report.count += 1;
        if self.report.first.len() < ClipReport::KEPT {
            self.report.first.push(Clipped {
                path: path(),
                bytes,
            });
        }
    }

    fn clip_opt(&mut self, s: &mut Option<Text>, path: impl FnOnce() -> String) {
        if let Some(s) = s {
            self.clip(s, path);
        }
    }

    fn extra(
        &mut self,
        extra: &mut BTreeMap<Text, Text>,
        at: impl Fn() -> String,
    ) -> Result<(), LimitError> {
        check_count(extra.len(), MAX_EXTRA_ENTRIES, || format!("{}.extra", at()))?;
        for (k, v) in extra.iter_mut() {
            if k.len() > MAX_STRING_BYTES {
                return Err(too_long(
                    format!("{}.extra key {:?}…", at(), clip_str(k, 32)),
                    k,
                ));
            }
            self.clip(v, || format!("{}.extra.{k}", at()));
        }
        Ok(())
    }

    fn team(&mut self, i: usize, t: &mut Team) -> Result<(), LimitError> {
        let at = || format!("teams[{i}]");
        self.clip_opt(&mut t.name, || format!("{}.name", at()));
        if let Some(c) = &t.name_color {
            check_color(c, || format!("{}.name_color", at()))?;
        }
        self.extra(&mut t.extra, at)
    }

    fn player(&mut self, i: usize, p: &mut Player) -> Result<(), LimitError> {
        let at = || format!("players[{i}]");
        for (name, s) in [
            ("name", &mut p.name),
            ("name_raw", &mut p.name_raw),
            ("class", &mut p.class),
            ("race", &mut p.race),
            ("global_id", &mut p.global_id),
            ("model", &mut p.model),
        ] {
            self.clip_opt(s, || format!("{}.{name}", at()));
        }
        if let Some(c) = &p.name_color {
            check_color(c, || format!("{}.name_color", at()))?;
        }
        if let Some(a) = &p.address {
            if a.0.len() > MAX_ADDRESS_BYTES {
                return Err(LimitError {
                    path: format!("{}.address", at()),
                    problem: format!("{} bytes, at most {MAX_ADDRESS_BYTES}", a.0.len()),
                });
            }
        }
        self.extra(&mut p.extra, at)
    }
}

fn check_count(n: usize, max: usize, path: impl FnOnce() -> String) -> Result<(), LimitError> {
    if n > max {
        return Err(LimitError {
            path: path(),
            problem: format!("{n} entries, at most {max}"),
        });
    }
    Ok(())
}

fn check_color(c: &ColorInfo, path: impl Fn() -> String) -> Result<(), LimitError> {
    check_count(c.entries.len(), MAX_COLOR_ENTRIES, || {
        format!("{}.entries", path())
    })?;
    if c.undecoded.len() > MAX_UNDECODED_COLOR_BYTES {
        return Err(LimitError {
            path: format!("{}.undecoded", path()),
            problem: format!(
                "{} bytes, at most {MAX_UNDECODED_COLOR_BYTES}",
                c.undecoded.len()
            ),
        });
    }
    Ok(())
}

fn too_long(path: String, s: &str) -> LimitError {
    LimitError {
        path,
        problem: format!("{} bytes, at most {MAX_STRING_BYTES}", s.len()),
    }
}

fn refuse_long_str(s: &str, path: impl FnOnce() -> String) -> Result<(), LimitError> {
    if s.len() > MAX_STRING_BYTES {
        return Err(too_long(path(), s));
    }
    Ok(())
}

fn refuse_long(s: Option<&Text>, path: impl FnOnce() -> String) -> Result<(), LimitError> {
    match s {
        Some(s) => refuse_long_str(s, path),
        None => Ok(()),
    }
}

/// The largest char boundary of `s` at or below `at`.
fn floor_char_boundary(s: &str, at: usize) -> usize {
    let mut end = at.min(s.len());
    while end > 0 && !s.is_char_boundary(end) {
        end -= 1;
    }
    end
}

/// `s` cut to at most `max` bytes at a char boundary (for naming a long key).
fn clip_str(s: &str, max: usize) -> &str {
    s.get(..floor_char_boundary(s, max)).unwrap_or("")
}

// -----------------------------------------------------------------------------------
#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::{MapInfo, Rules};

    fn long(n: usize) -> Text {
        "é".repeat(n / 2).into()
    }

    #[test]
    fn long_server_strings_are_refused_with_their_path() {
        let mut s = Status {
            host_name: Some(long(70_000)),
            ..Status::default()
        };
        let e = s.apply_limits().unwrap_err();
        assert_eq!(e.to_string(), "host_name: 70000 bytes, at most 4096");
        let mut s = Status {
            next_map: Some(MapInfo {
                url: Some(long(5000)),
                ..MapInfo::named("x")
            }),
            ..Status::default()
        };
        assert_eq!(
            s.apply_limits().unwrap_err().to_string(),
            "next_map.url: 5000 bytes, at most 4096"
        );
        let mut s = Status {
            rules: Some(Rules::from_iter([("ok", "1"), ("motd", &*long(4098))])),
            ..Status::default()
        };
        assert_eq!(
            s.apply_limits().unwrap_err().to_string(),
            "rules.motd: 4098 bytes, at most 4096"
        );
    }

    #[test]
    fn player_strings_are_clipped_at_a_char_boundary_and_reported() {
        let mut players = vec![Player::default(); 8];
        for p in &mut players {
            p.name = Some(long(5001 * 2));
        }
        if let Some(p) = players.get_mut(3) {
            p.name = Some("short".into());
        }
        let mut s = Status {
            players: Some(players),
            ..Status::default()
        };
        let report = s.apply_limits().unwrap();
        assert_eq!(report.count, 7);
        assert_eq!(report.first.len(), ClipReport::KEPT);
        assert_eq!(report.first[0].path, "players[0].name");
        assert_eq!(report.first[0].bytes, 10002);
        assert_eq!(report.first[3].path, "players[4].name");
        let players = s.players.unwrap();
        let name = players[0].name.as_deref().unwrap();
        assert_eq!(name.len(), 4096);
        assert!(name.chars().all(|c| c == 'é'));
        assert_eq!(players[3].name.as_deref(), Some("short"));
        assert_eq!(
            report.to_string(),
            "7 strings clipped to 4096 bytes: players[0].name (10002 bytes), \
             players[1].name (10002 bytes), players[2].name (10002 bytes), \
             players[4].name (10002 bytes) and 3 more"
        );
    }

    #[test]
    fn counts_are_refused_while_deserializing_with_the_length() {
        let mut text = String::from("{\"players\": [");
        for i in 0..MAX_LIST_ENTRIES + 5 {
            text.push_str(if i == 0 { "{}" } else { ",{}" });
        }
        text.push_str("]}");
        let e = Status::from_json(&text).unwrap_err().to_string();
        assert!(e.starts_with("4101 entries, at most 4096"), "{e}");
        // exactly the cap loads
        let ok = text.replacen("{},{},{},{},{},", "", 1);
        let s = Status::from_json(&ok).unwrap();
        assert_eq!(s.players.map(|p| p.len()), Some(MAX_LIST_ENTRIES));
        // extra columns
        let extra: Vec<String> = (0..=MAX_EXTRA_ENTRIES)
            .map(|i| format!("\"k{i}\": \"v\""))
            .collect();
        let text = format!("{{\"teams\": [{{\"extra\": {{{}}}}}]}}", extra.join(","));
        let e = Status::from_json(&text).unwrap_err().to_string();
        assert!(e.starts_with("129 entries, at most 128"), "{e}");
        // rules
        let rules: Vec<String> = (0..=MAX_LIST_ENTRIES)
            .map(|i| format!("\"r{i}\": 1"))
            .collect();
        let text = format!("{{\"rules\": {{{}}}}}", rules.join(","));
        let e = Status::from_json(&text).unwrap_err().to_string();
        assert!(e.starts_with("4097 entries, at most 4096"), "{e}");
        // null is still "not reported"
        let s = Status::from_json("{\"players\": null, \"teams\": []}").unwrap();
        assert_eq!(s.players, None);
        assert_eq!(s.teams, Some(vec![]));
    }

    #[test]
    fn extra_keys_and_values() {
        let mut p = Player::default();
        p.extra.insert("clan".into(), long(6000));
        let mut s = Status {
            players: Some(vec![Player::default(), p]),
            ..Status::default()
        };
        let r = s.apply_limits().unwrap();
        assert_eq!(r.first[0].path, "players[1].extra.clan");
        let mut t = Team::default();
        t.extra.insert(long(5000), "v".into());
        let mut s = Status {
            teams: Some(vec![t]),
            ..Status::default()
        };
        let e = s.apply_limits().unwrap_err();
        assert!(e.path.starts_with("teams[0].extra key \"éé"), "{e}");
        assert_eq!(e.problem, "5000 bytes, at most 4096");
    }
}
