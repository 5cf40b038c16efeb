//! The status JSON (and the legacy reply) to the shared [`Status`].
//!
//! | Status field | from |
//! |---|---|
//! | `game_name` | `Minecraft` |
//! | `host_name` | `description` as plain text: the chat component flattened (`text`, then `extra` in order; `translate` when there is no text), `§` codes removed |
//! | `host_name_raw` | the same with its formatting as `§` codes (component colours and styles turned into codes), when it differs from the plain text |
//! | `game_version` | `version.name` |
//! | `player_count` / `slot_max` | `players.online` / `players.max` |
//! | `players` | `players.sample`: `name` plain, `name_raw` with its codes when they differ, `global_id` the UUID |
//! | `addons` | Forge's mods: `forgeData.mods` (`modId`, `modmarker` as version) or `modinfo.modList` (`modid`, `version`) |
//! | `rules` | `protocol` (`version.protocol`), `enforcesSecureChat`, `previewsChat`, `preventsChatReports` (`true`/`false`), `modloader` (`forge` for `forgeData`, else `modinfo.type`), and `favicon`, the `data:image/png;base64,…` URL as sent when it is one and at most [`MAX_FAVICON_BYTES`] long (else left out, with a warning) |
//!
//! The favicon is a rule, not a field of its own: it is one opaque string that only
//! pages show, and rules are where each protocol's extras live.
//!
//! The JSON is parsed with serde_json, whose recursion limit (128) refuses deeper
//! nesting before the stack is at risk; the component walk stops at
//! [`MAX_COMPONENT_DEPTH`] levels and the text at [`MAX_TEXT_BYTES`], and at most
//! [`MAX_SAMPLE`] sample players and [`MAX_MODS`] mods are kept.

use serde_json::Value;

use super::wire::LegacyReply;
use crate::model::{AddOn, Player, Rules};
use crate::text::{strip_mc_codes, Text};
use crate::Status;

/// Longest favicon data URL kept, in bytes.
pub const MAX_FAVICON_BYTES: usize = 64 * 1024;
/// Deepest chat component nesting followed.
pub const MAX_COMPONENT_DEPTH: usize = 32;
/// Longest description kept, in bytes (plain and raw each).
pub const MAX_TEXT_BYTES: usize = 4096;
/// Most sample players kept.
pub const MAX_SAMPLE: usize = 256;
/// Most mods kept.
pub const MAX_MODS: usize = 1024;

/// The `§` code of a chat component colour name.
fn color_code(name: &str) -> Option<char> {
    Some(match name {
        "black" => '0',
        "dark_blue" => '1',
        "dark_green" => '2',
        "dark_aqua" => '3',
        "dark_red" => '4',
        "dark_purple" => '5',
        "gold" => '6',
        "gray" => '7',
        "dark_gray" => '8',
        "blue" => '9',
        "green" => 'a',
        "aqua" => 'b',
        "red" => 'c',
        "light_purple" => 'd',
        "yellow" => 'e',
        "white" => 'f',
        "reset" => 'r',
        _ => return None,
    })
}

const STYLES: [(&str, char); 5] = [
    ("obfuscated", 'k'),
    ("bold", 'l'),
    ("strikethrough", 'm'),
    ("underlined", 'n'),
    ("italic", 'o'),
];

/// `s` without its `§` codes (a `§` and the character after it).
pub fn strip_codes(s: &str) -> String {
    strip_mc_codes(s)
}

/// A bounded text being built.
struct Capped {
    s: String,
    full: bool,
}

impl Capped {
    fn push(&mut self, t: &str) {
        if self.full {
            return;
        }
        let room = MAX_TEXT_BYTES.saturating_sub(self.s.len());
        if t.len() <= room {
            self.s.push_str(t);
            return;
        }
        let mut cut = room;
        while !t.is_char_boundary(cut) {
            cut -= 1;
        }
        self.s.push_str(t.get(..cut).unwrap_or_default());
        self.full = true;
    }
}

fn walk(v: &Value, depth: usize, raw: &mut Capped) {
    if depth > MAX_COMPONENT_DEPTH {
        return;
    }
    match v {
        Value::String(s) => raw.push(s),
        Value::Array(parts) => {
            for p in parts {
                walk(p, depth + 1, raw);
            }
        }
        Value::Object(o) => {
            let mut codes = String::new();
            if let Some(c) = o.get("color").and_then(Value::as_str).and_then(color_code) {
                codes.push('§');
                codes.push(c);
            }
            for (key, code) in STYLES {
                if o.get(key).and_then(Value::as_bool) == Some(true) {
                    codes.push('§');
                    codes.push(code);
                }
            }
            raw.push(&codes);
            match (o.get("text"), o.get("translate")) {
                (Some(t), _) => walk(t, depth + 1, raw),
                (None, Some(Value::String(t))) => raw.push(t),
                _ => {}
            }
            if let Some(extra) = o.get("extra") {
                walk(extra, depth + 1, raw);
            }
        }
        Value::Number(n) => raw.push(&n.to_string()),
        Value::Bool(b) => raw.push(if *b { "true" } else { "false" }),
        Value::Null => {}
    }
}

/// A chat component as `§`-coded text and as plain text.
pub fn description_text(v: &Value) -> (String, String) {
    let mut raw = Capped {
        s: String::new(),
        full: false,
    };
    walk(v, 0, &mut raw);
    let plain = strip_codes(&raw.s);
    (raw.s, plain)
}

fn count(v: Option<&Value>, field: &str, warnings: &mut Vec<String>) -> Option<u32> {
    let v = v?;
    match v.as_i64() {
        Some(n) => match u32::try_from(n) {
            Ok(n) => Some(n),
            Err(_) => {
                warnings.push(format!("{field} {n} is out of range"));
                None
            }
        },
        None => {
            warnings.push(format!("{field} is not a number"));
            None
        }
    }
}

fn flag(status: &mut Rules, o: &serde_json::Map<String, Value>, key: &str) {
    if let Some(b) = o.get(key).and_then(Value::as_bool) {
        status
            .0
            .push((key.into(), if b { "true" } else { "false" }.into()));
    }
}

fn set_name(status: &mut Status, raw: String, plain: String) {
    if raw != plain {
        status.host_name_raw = Some(raw.into());
    }
    status.host_name = Some(plain.into());
}

/// Reads the status JSON (already parsed) into a [`Status`]; what did not fit the model
/// is said in the returned warnings.
pub fn json_to_status(v: &Value) -> (Status, Vec<String>) {
    let mut s = Status {
        game_name: Some("Minecraft".into()),
        ..Status::default()
    };
    let mut warnings = Vec::new();
    let mut rules = Rules::default();
    let Some(o) = v.as_object() else {
        warnings.push("the status is not a JSON object".into());
        return (s, warnings);
    };
    if let Some(d) = o.get("description") {
        let (raw, plain) = description_text(d);
        set_name(&mut s, raw, plain);
    }
    if let Some(ver) = o.get("version").and_then(Value::as_object) {
        if let Some(n) = ver.get("name").and_then(Value::as_str) {
            s.game_version = Some(n.into());
        }
        if let Some(p) = ver.get("protocol").and_then(Value::as_i64) {
            rules.0.push(("protocol".into(), p.to_string().into()));
        }
    }
    if let Some(p) = o.get("players").and_then(Value::as_object) {
        s.player_count = count(p.get("online"), "players.online", &mut warnings);
        s.slot_max = count(p.get("max"), "players.max", &mut warnings);
        if let Some(sample) = p.get("sample").and_then(Value::as_array) {
            if sample.len() > MAX_SAMPLE {
                warnings.push(format!(
                    "kept {MAX_SAMPLE} of {} sample players",
                    sample.len()
                ));
            }
            s.players = Some(
                sample
                    .iter()
                    .take(MAX_SAMPLE)
                    .filter_map(Value::as_object)
                    .map(|e| {
                        let raw = e.get("name").and_then(Value::as_str).unwrap_or_default();
                        let plain = strip_codes(raw);
                        let mut pl = Player::default();
                        if plain != raw {
                            pl.name_raw = Some(raw.into());
                        }
                        pl.name = Some(plain.into());
                        pl.global_id = e.get("id").and_then(Value::as_str).map(Text::from);
                        pl
                    })
                    .collect(),
            );
        }
    }
    for key in ["enforcesSecureChat", "previewsChat", "preventsChatReports"] {
        flag(&mut rules, o, key);
    }
    let mut mods = Vec::new();
    if let Some(f) = o.get("forgeData").and_then(Value::as_object) {
        rules.0.push(("modloader".into(), "forge".into()));
        for m in f
            .get("mods")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
        {
            mods.push((m.get("modId"), m.get("modmarker")));
        }
    } else if let Some(m) = o.get("modinfo").and_then(Value::as_object) {
        if let Some(t) = m.get("type").and_then(Value::as_str) {
            rules.0.push(("modloader".into(), t.into()));
        }
        for e in m
            .get("modList")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
        {
            mods.push((e.get("modid"), e.get("version")));
        }
    }
    if mods.len() > MAX_MODS {
        warnings.push(format!("kept {MAX_MODS} of {} mods", mods.len()));
    }
    let addons: Vec<AddOn> = mods
        .into_iter()
        .take(MAX_MODS)
        .filter_map(|(id, version)| {
            let mut a = AddOn::named(id?.as_str()?);
            a.version = version.and_then(Value::as_str).map(Text::from);
            Some(a)
        })
        .collect();
    if !addons.is_empty() {
        s.addons = Some(addons);
    }
    if let Some(f) = o.get("favicon").and_then(Value::as_str) {
        if !f.starts_with("data:image/") {
            warnings.push("favicon is not a data:image/ URL: left out".into());
        } else if f.len() > MAX_FAVICON_BYTES {
            warnings.push(format!(
                "favicon of {} bytes is over {MAX_FAVICON_BYTES}: left out",
                f.len()
            ));
        } else {
            rules.0.push(("favicon".into(), f.into()));
        }
    }
    if !rules.0.is_empty() {
        s.rules = Some(rules);
    }
    (s, warnings)
}

/// Reads a legacy reply into a [`Status`].
pub fn legacy_to_status(r: &LegacyReply) -> Status {
    let mut s = Status {
        game_name: Some("Minecraft".into()),
        game_version: r.version.as_deref().map(Text::from),
        player_count: r.online,
        slot_max: r.max,
        ..Status::default()
    };
    set_name(&mut s, r.motd.clone(), strip_codes(&r.motd));
    if let Some(p) = r.protocol {
        s.rules = Some(Rules(vec![("protocol".into(), p.to_string().into())]));
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    fn status(json: &str) -> (Status, Vec<String>) {
        json_to_status(&serde_json::from_str(json).unwrap())
    }

    #[test]
    fn the_npm_servers_status() {
        let (s, w) = status(
            r#"{"version":{"name":"1.20.1","protocol":763},"players":{"max":50,"online":0,"sample":[]},"description":{"text":"§aA §lreal§r test server"}}"#,
        );
        assert!(w.is_empty(), "{w:?}");
        assert_eq!(s.host_name.as_deref(), Some("A real test server"));
        assert_eq!(s.host_name_raw.as_deref(), Some("§aA §lreal§r test server"));
        assert_eq!(s.game_version.as_deref(), Some("1.20.1"));
        assert_eq!((s.player_count, s.slot_max), (Some(0), Some(50)));
        assert_eq!(s.rules.unwrap().get("protocol"), Some("763"));
    }

    #[test]
    fn nested_components_colours_and_styles() {
        let (raw, plain) = description_text(
            &serde_json::from_str(
                r#"{"text":"","extra":[{"text":"Hyp","color":"gold","bold":true},"ixel",{"translate":"x","extra":[{"text":" §cNet"}]}]}"#,
            )
            .unwrap(),
        );
        assert_eq!(raw, "§6§lHypixelx §cNet");
        assert_eq!(plain, "Hypixelx Net");
    }

    #[test]
    fn a_plain_string_description_has_no_raw_copy() {
        let (s, _) = status(r#"{"description":"A Minecraft Server"}"#);
        assert_eq!(s.host_name.as_deref(), Some("A Minecraft Server"));
        assert_eq!(s.host_name_raw, None);
    }

    #[test]
    fn sample_forge_flags_and_favicon() {
        let (s, w) = status(
            r#"{"players":{"max":-1,"online":2,"sample":[{"name":"§bAlex","id":"ec561538-f3fd-461d-aff5-086b22154bce"},{"name":"Steve","id":"8667ba71-b85a-4004-af54-457a9734eed7"}]},
               "enforcesSecureChat":true,"previewsChat":false,"favicon":"data:image/png;base64,iVBORw0KGgo=",
               "forgeData":{"channels":[],"mods":[{"modId":"forge","modmarker":"47.1.0"},{"modId":"jei"}],"fmlNetworkVersion":3}}"#,
        );
        assert_eq!(w, ["players.max -1 is out of range"]);
        let p = s.players.unwrap();
        assert_eq!(p[0].name.as_deref(), Some("Alex"));
        assert_eq!(p[0].name_raw.as_deref(), Some("§bAlex"));
        assert_eq!(
            p[1].global_id.as_deref(),
            Some("8667ba71-b85a-4004-af54-457a9734eed7")
        );
        let r = s.rules.unwrap();
        assert_eq!(r.get("enforcesSecureChat"), Some("true"));
        assert_eq!(r.get("previewsChat"), Some("false"));
        assert_eq!(r.get("modloader"), Some("forge"));
        assert_eq!(r.get("favicon"), Some("data:image/png;base64,iVBORw0KGgo="));
        let a = s.addons.unwrap();
        assert_eq!(a[0].short_name.as_deref(), Some("forge"));
        assert_eq!(a[0].version.as_deref(), Some("47.1.0"));
        assert_eq!(a.len(), 2);
    }

    #[test]
    fn old_forge_modinfo() {
        let (s, _) =
            status(r#"{"modinfo":{"type":"FML","modList":[{"modid":"mcp","version":"9.42"}]}}"#);
        assert_eq!(s.rules.unwrap().get("modloader"), Some("FML"));
        assert_eq!(s.addons.unwrap()[0].version.as_deref(), Some("9.42"));
    }

    #[test]
    fn a_deep_description_stops_at_the_depth_cap_without_overflowing() {
        // serde_json refuses 128 levels and more; below that the walk stops at its cap.
        let deep = format!("{}\"x\"{}", "[".repeat(120), "]".repeat(120));
        let (raw, _) = description_text(&serde_json::from_str(&deep).unwrap());
        assert_eq!(raw, "");
        let too_deep = format!("{}{}", "[".repeat(100_000), "]".repeat(100_000));
        assert!(serde_json::from_str::<Value>(&too_deep).is_err());
    }
}
