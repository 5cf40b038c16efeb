//! `ogp games` and the `--game ID` / `game:ID` targets: the catalogue of
//! `ogp_proto::games`, looked up and printed. Which protocol and query port a game uses
//! is the catalogue's; this only turns it into a target and text.

use std::process::ExitCode;

use ogp_proto::games::{catalogue, Game};
use serde_json::json;

use crate::render::sanitize;

/// The game with this id or alias, or a one-line error naming the three closest ids.
pub fn find(id: &str) -> Result<&'static Game, String> {
    let c = catalogue();
    c.get(id).ok_or_else(|| {
        let close: Vec<&str> = c.closest(id, 3).iter().map(|g| g.id.as_str()).collect();
        format!(
            "unknown game {:?}; closest: {} (ogp games lists them all)",
            sanitize(id),
            close.join(", ")
        )
    })
}

/// `HOST`, `HOST:PORT`, `[V6]` or `[V6]:PORT`: the host part and the port, if any.
pub fn split_target(target: &str) -> Result<(&str, Option<u16>), String> {
    let bad = || format!("{target}: bad port");
    if let Some(rest) = target.strip_prefix('[') {
        let (_, after) = rest
            .split_once(']')
            .ok_or_else(|| format!("{target}: missing ]"))?;
        let host_len = target.len() - after.len();
        let host = target.get(..host_len).unwrap_or(target);
        return match after.strip_prefix(':') {
            None if after.is_empty() => Ok((host, None)),
            None => Err(bad()),
            Some(p) => p
                .parse()
                .ok()
                .filter(|p| *p != 0)
                .map(|p| (host, Some(p)))
                .ok_or_else(bad),
        };
    }
    match target.rsplit_once(':') {
        // a bare IPv6 address has colons but no port
        Some((h, _)) if h.contains(':') => Err(format!(
            "{target}: IPv6 addresses need brackets: [ADDR]:PORT"
        )),
        Some((h, p)) => p
            .parse()
            .ok()
            .filter(|p| *p != 0)
            .map(|p| (h, Some(p)))
            .ok_or_else(bad),
        None => Ok((target, None)),
    }
}

/// Where to query `game` for `target` (HOST or HOST:GAMEPORT): `HOST:QUERYPORT`, and
/// why that port, in words.
pub fn target_for(game: &Game, target: &str) -> Result<(String, String), String> {
    let (host, port) = split_target(target)?;
    if host.is_empty() {
        return Err(format!("{target}: no host"));
    }
    let game_port = port.unwrap_or(game.port);
    let q = game.query_port(Some(game_port)).ok_or_else(|| {
        format!(
            "{}: query port rule {} takes game port {game_port} out of range",
            game.id, game.query
        )
    })?;
    let given = if port.is_some() {
        format!("game port {game_port}")
    } else {
        format!("default game port {game_port}")
    };
    let rule = match game.query {
        ogp_proto::games::QueryPort::Same => "the query port is the game port".to_string(),
        ogp_proto::games::QueryPort::Offset(_) => {
            format!("query port = game port {}", game.query)
        }
        ogp_proto::games::QueryPort::Fixed(_) => {
            format!("queries always go to port {q}")
        }
    };
    let why = format!(
        "game {} ({}): protocol {}, query port {q} ({given}; {rule})",
        game.id,
        game.name,
        game.protocol.label()
    );
    Ok((format!("{host}:{q}"), why))
}

/// `ogp games [FILTER] [--json]`.
pub fn run(filter: Option<&str>, as_json: bool) -> anyhow::Result<ExitCode> {
    let c = catalogue();
    if let Some(e) = ogp_proto::games::catalogue_error() {
        anyhow::bail!("{e}");
    }
    let games: Vec<&Game> = c.filter(filter.unwrap_or("")).collect();
    let mut out = String::new();
    if as_json {
        let list: Vec<serde_json::Value> = games
            .iter()
            .map(|g| {
                let m = &g.matches;
                json!({
                    "id": g.id,
                    "aliases": g.aliases,
                    "name": g.name,
                    "protocol": g.protocol.name(),
                    "dialect": g.dialect,
                    "port": g.port,
                    "query": g.query.to_string(),
                    "query_port": g.query_port(None),
                    "match": {
                        "a2s_app_id": m.a2s_app_id,
                        "a2s_folder": m.a2s_folder,
                        "a2s_game": m.a2s_game,
                        "gamespy_gamename": m.gamespy_gamename,
                        "gamespy_gamevariant": m.gamespy_gamevariant,
                        "quake3_gamename": m.quake3_gamename,
                        "quake3_protocol": m.quake3_protocol,
                        "ogp_game_id": m.ogp_game_id,
                        "unreal2_gametype": m.unreal2_gametype,
                        "ase_gamename": m.ase_gamename,
                        "cube2_game": m.cube2_game,
                        "quake2_gamename": m.quake2_gamename,
                    },
                    "notes": g.notes,
                    "sources": g.sources.iter()
                        .map(|s| json!({"key": s, "text": c.sources().get(s)}))
                        .collect::<Vec<_>>(),
                })
            })
            .collect();
        out = ogp_proto::result::to_json_pretty(&list)?;
        out.push('\n');
    } else if !games.is_empty() {
        out.push_str(&format!(
            "{:<20} {:<44} {:<10} {:>5} {:>7}\n",
            "ID", "NAME", "PROTOCOL", "PORT", "QUERY"
        ));
        for g in &games {
            let query = match g.query {
                ogp_proto::games::QueryPort::Offset(_) => {
                    format!("{}={}", g.query, g.query_port(None).unwrap_or_default())
                }
                q => q.to_string(),
            };
            out.push_str(&format!(
                "{:<20} {:<44} {:<10} {:>5} {query:>7}\n",
                g.id,
                g.name,
                g.protocol.name(),
                g.port
            ));
        }
    }
    crate::emit(&out)?;
    if games.is_empty() {
        eprintln!("ogp: {}", no_match(filter.unwrap_or("")));
        return Ok(ExitCode::from(1));
    }
    Ok(ExitCode::SUCCESS)
}

/// What `ogp games FILTER` says when nothing matches: what the filter is matched
/// against, and the three closest ids.
fn no_match(filter: &str) -> String {
    let close: Vec<&str> = catalogue()
        .closest(filter, 3)
        .iter()
        .map(|g| g.id.as_str())
        .collect();
    format!(
        "no game matches {:?} (it is looked for in the ids, aliases, names and protocols); \
         closest: {} (ogp games lists them all)",
        sanitize(filter),
        close.join(", ")
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn targets_derive_the_query_port() {
        let bf2 = find("bf2").unwrap();
        assert_eq!(target_for(bf2, "127.0.0.1").unwrap().0, "127.0.0.1:29900");
        assert_eq!(target_for(bf2, "h:16569").unwrap().0, "h:29900");
        let v = find("valheim").unwrap();
        assert_eq!(target_for(v, "[::1]:3000").unwrap().0, "[::1]:3001");
        assert_eq!(target_for(v, "[::1]").unwrap().0, "[::1]:2457");
        assert!(target_for(v, "::1").is_err());
        assert!(target_for(v, "h:0").is_err());
        let why = target_for(bf2, "127.0.0.1").unwrap().1;
        assert!(why.contains("GameSpy v3") && why.contains("29900"), "{why}");
    }

    #[test]
    fn a_filter_that_matches_nothing_says_so() {
        let m = no_match("valhiem\u{1b}[2J");
        assert!(
            m.starts_with("no game matches \"valhiem\u{fffd}[2J\"") && m.contains("valheim"),
            "{m}"
        );
    }

    #[test]
    fn unknown_games_name_the_three_closest() {
        let e = find("valhiem").unwrap_err();
        assert!(
            e.starts_with("unknown game \"valhiem\"; closest: valheim, "),
            "{e}"
        );
        assert_eq!(e.matches(", ").count(), 2, "{e}");
    }
}
