//! `ogp games` and the `--game ID` / `game:ID` targets: the catalogue of
//! `ogp_proto::games`, looked up and printed. Which protocol and query port a game uses
//! is the catalogue's; this only turns it into a target and text.

use std::process::ExitCode;

use ogp_proto::games::{catalogue, Game};

use crate::render::sanitize;

pub use ogp_proto::front::{find_game as find, split_target, target_for};

/// `ogp games [FILTER] [--json]`.
pub fn run(filter: Option<&str>, as_json: bool) -> anyhow::Result<ExitCode> {
    let c = catalogue();
    if let Some(e) = ogp_proto::games::catalogue_error() {
        anyhow::bail!("{e}");
    }
    let games: Vec<&Game> = c.filter(filter.unwrap_or("")).collect();
    let mut out = String::new();
    if as_json {
        let list = ogp_proto::front::games_json(&games);
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
