//! What the front-ends share (the `ogp` CLI, the Python package): a target as a user
//! types it turned into `HOST:PORT` and a protocol (`--game`, list lines, default
//! ports), and the timers and options of `ogp query` and `ogp scan`. Pure functions, no
//! I/O: moved here from ogp-cli so that every front-end reads a target and times a
//! query the same way.

use std::net::SocketAddr;
use std::time::Duration;

use crate::client::{Options, Timing};
use crate::games::{catalogue, Game};
use crate::text::sanitize;
use crate::{Charset, Protocol};

/// The game with this id or alias, or a one-line error naming the three closest ids.
pub fn find_game(id: &str) -> Result<&'static Game, String> {
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
        crate::games::QueryPort::Same => "the query port is the game port".to_string(),
        crate::games::QueryPort::Offset(_) => {
            format!("query port = game port {}", game.query)
        }
        crate::games::QueryPort::Fixed(_) => {
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

/// `ogp games --json`: the entries, with how answers name each game and the sources of
/// its facts.
pub fn games_json(games: &[&Game]) -> serde_json::Value {
    use serde_json::json;
    let c = catalogue();
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
    serde_json::Value::Array(list)
}

/// `target` with the protocol's default port (its entry's) when it has none
/// (Minecraft: 25565); `None` when it has none and the protocol has no default.
pub fn with_default_port(target: &str, protocol: Option<Protocol>) -> Option<String> {
    if target.contains(':') {
        return Some(target.to_string());
    }
    let port = protocol?.entry().default_port?;
    Some(format!("{target}:{port}"))
}

/// The timers of `ogp query` in `protocol`: the total deadline leaves room for every
/// attempt of every step (its entry's; A2S: INFO, PLAYER, RULES), with its backoff.
///
/// Stream (TCP) protocols wait for the connection, and for each reply, as long as one
/// step's attempts take over UDP (the timeout with its backoff per retry).
pub fn query_timing(timeout: Duration, retries: u32, protocol: Protocol) -> Timing {
    let t = Timing::with_attempts(timeout, retries, protocol.entry().steps);
    let step = t.attempts_total();
    t.connect_timeout(step).read_timeout(step)
}

/// The timers of `ogp scan`: `base` (the scan engine's defaults: its backoff, more
/// retries for targets that answered anything) with the attempt timeout, retries and
/// per-target deadline given; TCP (Minecraft) waits for the connection, and each reply,
/// as long as a datagram step's attempts, within the deadline.
pub fn scan_timing(base: Timing, timeout: Duration, retries: u32, deadline: Duration) -> Timing {
    let t = base
        .attempt_timeout(timeout)
        .retries(retries)
        .total_timeout(deadline);
    let step = t.attempts_total();
    t.connect_timeout(step).read_timeout(step)
}

/// Minecraft: the name the user typed goes in the handshake (proxies route by it); an
/// address is sent as the connected one.
pub fn set_handshake_host(o: &mut Options, target: &str) {
    if let Some((host, _)) = target.rsplit_once(':') {
        if host.parse::<std::net::IpAddr>().is_err() && !host.starts_with('[') {
            o.minecraft.host = Some(host.into());
        }
    }
}

/// Sets how the protocols that announce no charset (A2S, GameSpy v3, SA-MP) read strings
/// that are not UTF-8.
pub fn set_charset(o: &mut Options, charset: Charset) {
    o.a2s.charset = charset;
    o.gamespy3.charset = charset;
    o.samp.charset = charset;
}

/// The options of `ogp query` in `protocol` (or, with `None`, of its auto-detection:
/// every protocol's steps in the time A2S's three take), without the GQP and OGP
/// extras: timers, charset, Minecraft's handshake host.
pub fn query_options(
    target: &str,
    protocol: Option<Protocol>,
    timeout: Duration,
    retries: u32,
    charset: Charset,
) -> Options {
    let timed = protocol.unwrap_or(Protocol::A2s);
    let mut o = Options::with_timing(query_timing(timeout, retries, timed));
    set_charset(&mut o, charset);
    if protocol.is_none() || protocol == Some(Protocol::Minecraft) {
        set_handshake_host(&mut o, target);
    }
    o
}

/// `host:port`, `1.2.3.4:port` or `[v6]:port`.
pub fn check_host(host: &str) -> Result<(), String> {
    if let Ok(a) = host.parse::<SocketAddr>() {
        return if a.port() == 0 {
            Err(format!("{host}: port 0"))
        } else {
            Ok(())
        };
    }
    let Some((name, port)) = host.rsplit_once(':') else {
        return Err(format!("{host}: no port (expected HOST:PORT)"));
    };
    if name.contains(':') {
        return Err(format!("{host}: IPv6 addresses need brackets: [ADDR]:PORT"));
    }
    if name.is_empty() || name.contains(['[', ']']) {
        return Err(format!("{host}: bad host"));
    }
    match port.parse::<u16>() {
        Ok(p) if p > 0 => Ok(()),
        _ => Err(format!("{host}: bad port {port:?}")),
    }
}

/// qstat server types we know but do not speak (its `dm3s`, `q4s`, `preys`, `etqws`,
/// `ottds`, `bfbc2`, `ts3`, `ts2`, `tbs`, `fls` and `tm` are aliases of our `doom3`,
/// `openttd`, `battlefield`, `teamspeak3`, `teamspeak2`, `tribes1`, `ffow` and `nadeo`, its
/// `mumble`, `terraria`, `ventrilo` and `starmade` our protocols' names).
const QSTAT_OTHER: &[&str] = &[
    "hrs", "hls", "hl2s", "hlqs", "sns", "ams", "efs", "jk3s", "rws", "rss", "gsm", "mhs", "cods",
    "bfs", "wics", "tf", "wop", "sas",
];

/// qstat's game types that send GameSpy v1's `\status\` (its own `gps` is an alias of
/// the protocol): Unreal, Shogo, Descent 3, and the `extend GPS` types of its
/// `qstat.cfg` (C&C Renegade, MoHAA, Serious Sam, netPanzer). Seen on loopback: qstat
/// 2.17 sends `\status\` for each.
const QSTAT_GAMESPY1: &[&str] = &["uns", "sgs", "d3g", "crs", "mas", "sms", "netp"];

/// A list line's protocol word: our names and aliases, `auto`, or a qstat game type.
fn list_protocol(name: &str) -> Result<Option<Protocol>, String> {
    let unknown = match Protocol::parse_or_auto(name) {
        Ok(p) => return Ok(p),
        Err(e) => e,
    };
    let lower = name.to_ascii_lowercase();
    if QSTAT_GAMESPY1.contains(&lower.as_str()) {
        return Ok(Some(Protocol::Gamespy1));
    }
    if QSTAT_OTHER.contains(&lower.as_str()) {
        let ours: Vec<&str> = Protocol::ALL.iter().map(|p| p.name()).collect();
        return Err(format!(
            "qstat type {name} is not supported ({}, auto)",
            ours.join(", ")
        ));
    }
    Err(unknown.to_string())
}

/// One line of a scan list (`ogp scan`'s format: `[PROTOCOL] HOST:PORT`, qstat's types,
/// `game:ID HOST[:GAMEPORT]`, `#` comments): `Ok(None)` for blanks and comments, the
/// protocol (`None`: auto) and target, or why it is bad.
pub fn parse_line(
    line: &str,
    default: Option<Protocol>,
) -> Result<Option<(Option<Protocol>, String)>, String> {
    let line = match line.find('#') {
        Some(i) => line.get(..i).unwrap_or_default(),
        None => line,
    };
    let mut words = line.split_whitespace();
    let (Some(first), second, third) = (words.next(), words.next(), words.next()) else {
        return Ok(None);
    };
    if third.is_some() {
        return Err("expected PROTOCOL HOST:PORT".into());
    }
    let (protocol, host) = match second {
        None => (default, first),
        Some(host)
            if first.len() > 5
                && first
                    .get(..5)
                    .is_some_and(|g| g.eq_ignore_ascii_case("game:")) =>
        {
            let game = find_game(first.get(5..).unwrap_or_default())?;
            let (target, _) = target_for(game, host)?;
            // TeamSpeak: the port given is a voice port, which a scan cannot pass on per
            // target yet: only the game's default voice port is asked, never another.
            let voice = host
                .rsplit_once(':')
                .and_then(|(_, p)| p.parse::<u16>().ok());
            if matches!(game.protocol, Protocol::Teamspeak3 | Protocol::Teamspeak2)
                && voice.is_some_and(|v| v != game.port)
            {
                return Err(format!(
                    "{host}: a scan asks only voice port {} (ogp query --voice-port for others)",
                    game.port
                ));
            }
            return Ok(Some((Some(game.protocol), target)));
        }
        Some(host) if first.trim_start_matches('-').eq_ignore_ascii_case("cubes") => {
            // qstat's Cube 2 type names the game port and asks its port + 1.
            let target = cube2_query_port(host)?;
            check_host(&target)?;
            return Ok(Some((Some(Protocol::Cube2), target)));
        }
        Some(host) => (list_protocol(first.trim_start_matches('-'))?, host),
    };
    // A protocol with a default port (Minecraft) without a port: that port (no SRV
    // look-up in a scan).
    let host = with_default_port(host, protocol).unwrap_or_else(|| host.to_string());
    check_host(&host)?;
    Ok(Some((protocol, host)))
}

/// `host:port` with the port one up: Cube 2's query port of a game port (qstat's `cubes`
/// lines give the game port).
fn cube2_query_port(host: &str) -> Result<String, String> {
    let (name, port) = host
        .rsplit_once(':')
        .ok_or_else(|| format!("{host}: no port"))?;
    let port: u16 = port.parse().map_err(|_| format!("{host}: bad port"))?;
    let query = port
        .checked_add(crate::cube2::QUERY_PORT_OFFSET)
        .ok_or_else(|| format!("{host}: no query port above it"))?;
    Ok(format!("{name}:{query}"))
}
