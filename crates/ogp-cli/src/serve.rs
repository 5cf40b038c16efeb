//! `ogp serve`: a standalone responder for a state file, reloaded when it changes.

use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::{Duration, SystemTime};

use anyhow::{bail, Context as _, Result};
use ogp_net::{responder, StatusCell};
use ogp_proto::gamespy3::heartbeat::HeartbeatConfig;
use ogp_proto::responder::{Listener, ResponderConfig};
use ogp_proto::Status;

/// Options of `ogp serve`.
pub struct ServeOptions {
    /// The state file (JSON, or TOML when it ends in .toml).
    pub state: PathBuf,
    /// Addresses to listen on.
    pub listen: Vec<SocketAddr>,
    /// Addresses to answer the OGP v0.02 draft on.
    pub listen_ogp_draft: Vec<SocketAddr>,
    /// Responder settings.
    pub config: ResponderConfig,
    /// How often to look at the file for changes.
    pub reload_interval: Duration,
    /// GameSpy v3 master servers to send heartbeats to.
    pub gamespy3_masters: Vec<SocketAddr>,
    /// The `gamename` of the heartbeats.
    pub gamespy3_game: Option<String>,
}

/// Loads a state file. Errors name the file, and the line and column where the parser
/// gives them.
pub fn load_state(path: &Path) -> Result<Status> {
    let text = std::fs::read_to_string(path).with_context(|| format!("{}", path.display()))?;
    parse_state(path, &text)
}

fn parse_state(path: &Path, text: &str) -> Result<Status> {
    let is_toml = path
        .extension()
        .is_some_and(|e| e.eq_ignore_ascii_case("toml"));
    if is_toml {
        Status::from_toml(text).map_err(|e| {
            let where_ = e
                .span()
                .map(|s| {
                    let before = text.get(..s.start).unwrap_or("");
                    let line = before.matches('\n').count() + 1;
                    let col = before.rsplit('\n').next().map_or(0, |l| l.chars().count()) + 1;
                    format!("line {line} column {col}: ")
                })
                .unwrap_or_default();
            anyhow::anyhow!("{}: {where_}{}", path.display(), e.message())
        })
    } else {
        Status::from_json(text).map_err(|e| anyhow::anyhow!("{}: {e}", path.display()))
    }
}

fn stamp(path: &Path) -> Option<(SystemTime, u64)> {
    let m = std::fs::metadata(path).ok()?;
    Some((m.modified().ok()?, m.len()))
}

/// Runs until Ctrl-C.
pub async fn run(opts: ServeOptions) -> Result<()> {
    let status = load_state(&opts.state)?;
    let cell = StatusCell::new(status);
    if opts.listen.is_empty() {
        bail!("nothing to listen on");
    }
    let mut config = opts.config.clone();
    if !opts.gamespy3_masters.is_empty() {
        config.gamespy3_heartbeat = Some(
            HeartbeatConfig::new(opts.gamespy3_masters.clone())
                .game_name(opts.gamespy3_game.as_deref().map(Into::into)),
        );
    }
    // One responder for every socket: one rate limiter and one challenge secret.
    let listeners: Vec<(SocketAddr, Listener)> = opts
        .listen
        .iter()
        .map(|a| (*a, Listener::Standard))
        .chain(
            opts.listen_ogp_draft
                .iter()
                .map(|a| (*a, Listener::OgpDraft)),
        )
        .collect();
    let handle = responder::spawn_many(&listeners, Arc::clone(&cell), config)
        .await
        .context("listening")?;
    let locals = handle.local_addrs();
    let (standard, draft) = locals.split_at(opts.listen.len().min(locals.len()));
    let addrs: Vec<String> = standard.iter().map(ToString::to_string).collect();
    for d in draft {
        tracing::info!("answering the OGP v0.02 draft on {d}");
    }
    tracing::info!(
        "serving {} on {} (OGP, A2S, GQP, GameSpy v3; OGP challenge {}, GameSpy v3 {}, rate {}/s burst {})",
        opts.state.display(),
        addrs.join(", "),
        if opts.config.ogp.require_challenge {
            "required"
        } else {
            "OFF"
        },
        match (opts.config.gamespy3.enabled, opts.config.gamespy3.challenge) {
            (false, _) => "off",
            (true, ogp_proto::gamespy3::responder::ChallengeMode::Real) => "challenge required",
            (true, ogp_proto::gamespy3::responder::ChallengeMode::Bf2) =>
                "in bf2 mode (no challenge: an amplifier, bounded by the rate limit)",
        },
        opts.config.rate.per_second,
        opts.config.rate.burst
    );
    let mut last = stamp(&opts.state);
    let mut tick = tokio::time::interval(opts.reload_interval);
    tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Skip);
    let ctrl_c = tokio::signal::ctrl_c();
    tokio::pin!(ctrl_c);
    loop {
        tokio::select! {
            _ = &mut ctrl_c => break,
            _ = tick.tick() => {
                let now = stamp(&opts.state);
                if now.is_some() && now != last {
                    last = now;
                    match load_state(&opts.state) {
                        Ok(s) => {
                            cell.set(s);
                            tracing::info!("reloaded {}", opts.state.display());
                        }
                        Err(e) => tracing::error!("reload failed, still serving the last good state: {e:#}"),
                    }
                }
            }
        }
    }
    let sent = handle.stats().sent;
    handle.shutdown().await.ok();
    tracing::info!("stopped ({sent} datagrams sent)");
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bad_state_files_name_file_and_line() {
        let e = parse_state(Path::new("s.json"), "{\n  \"host_name\": 5\n}").unwrap_err();
        let msg = format!("{e:#}");
        assert!(msg.starts_with("s.json: "), "{msg}");
        assert!(msg.contains("line 2"), "{msg}");
        let e = parse_state(Path::new("s.toml"), "host_name = \"a\"\nbogus = 1\n").unwrap_err();
        let msg = format!("{e:#}");
        assert!(msg.contains("s.toml: line 2"), "{msg}");
        assert!(msg.contains("bogus"), "{msg}");
        let ok = parse_state(
            Path::new("s.toml"),
            "host_name = \"a\"\n[rules]\ntimelimit = 20\n",
        )
        .unwrap();
        assert_eq!(ok.rules.unwrap().get("timelimit"), Some("20"));
    }
}
