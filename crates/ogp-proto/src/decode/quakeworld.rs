//! `ogp decode` of QuakeWorld, Quake 2 and HexenWorld datagrams: the `status` request
//! and the `n` (QuakeWorld, HexenWorld after a fifth `FF`) and `print` (Quake 2) replies;
//! NetQuake's control requests and replies.

use super::error::{Context as _, Result};
use crate::quakeworld::{mapping, wire};
use crate::Protocol;
use serde_json::json;

use super::{plural, Input, Msg};

/// One QuakeWorld or Quake 2 datagram (`protocol` names which, for a request).
pub fn msg(input: &Input, protocol: Protocol) -> Result<Msg> {
    let size = input.bytes.len();
    let label = protocol.entry().label;
    if wire::is_request(&input.bytes) {
        let line = format!("{label} status request ({size} bytes)");
        return Ok(Msg::new(protocol, "query", line, json!({"size": size})));
    }
    let d = wire::decode_reply(&input.bytes).with_context(|| input.name.clone())?;
    let p = match d.reply.dialect {
        wire::Dialect::QuakeWorld => Protocol::Quakeworld,
        wire::Dialect::Quake2 => Protocol::Quake2,
        wire::Dialect::HexenWorld => Protocol::Hexenworld,
    };
    let status = mapping::reply_to_status(&d.reply);
    let line = format!(
        "{} status reply: {}, {} ({size} bytes)",
        p.entry().label,
        plural(d.reply.vars.len(), "variable", "variables"),
        plural(d.reply.players.len(), "player line", "player lines"),
    );
    let fields = json!({
        "variables": d.reply.vars.iter().map(|(k, v)| json!([k.as_str(), v.as_str()])).collect::<Vec<_>>(),
        "players": d.reply.players.iter().map(|l| json!({
            "before": l.before.iter().map(|c| c.as_str()).collect::<Vec<_>>(),
            "name": l.name.as_str(),
            "after": l.after.iter().map(|c| c.as_str()).collect::<Vec<_>>(),
        })).collect::<Vec<_>>(),
        "size": size,
    });
    let mut m = Msg::answer(p, line, fields, status);
    m.warnings = d.warnings.iter().map(ToString::to_string).collect();
    Ok(m)
}

/// One NetQuake control datagram (a request or a reply).
pub fn netquake_msg(input: &Input) -> Result<Msg> {
    use crate::netquake::wire::{decode_reply, decode_request, Reply, Request};
    const P: Protocol = Protocol::Netquake;
    let size = input.bytes.len();
    let text = |b: &[u8]| String::from_utf8_lossy(b).into_owned();
    if let Ok(q) = decode_request(&input.bytes) {
        let what = match &q {
            Request::ServerInfo(g) => format!("server info request ({})", text(g.word())),
            Request::PlayerInfo(n) => format!("player info request (player {n})"),
            Request::RuleInfo(prev) => format!("rule info request (after {:?})", text(prev)),
        };
        let line = format!("NetQuake {what} ({size} bytes)");
        return Ok(Msg::new(P, "query", line, json!({"size": size})));
    }
    let r = decode_reply(&input.bytes).with_context(|| input.name.clone())?;
    let (line, fields) = match &r {
        Reply::ServerInfo(s) => (
            format!(
                "NetQuake server info: {:?} on {:?}, {}/{} players, protocol {} ({size} bytes)",
                text(&s.hostname),
                text(&s.map),
                s.players,
                s.max_players,
                s.version
            ),
            json!({"reply": "server info", "address": text(&s.address), "hostname": text(&s.hostname),
                "map": text(&s.map), "players": s.players, "max_players": s.max_players,
                "version": s.version, "size": size}),
        ),
        Reply::PlayerInfo(p) => (
            format!(
                "NetQuake player {}: {:?}, {} frags, {} s ({size} bytes)",
                p.slot,
                text(&p.name),
                p.frags,
                p.seconds
            ),
            json!({"reply": "player info", "player": p.slot, "name": text(&p.name),
                "colors": p.colors, "frags": p.frags, "seconds": p.seconds, "size": size}),
        ),
        Reply::RuleInfo(Some((k, v))) => (
            format!("NetQuake rule {:?} = {:?} ({size} bytes)", text(k), text(v)),
            json!({"reply": "rule info", "name": text(k), "value": text(v), "size": size}),
        ),
        Reply::RuleInfo(None) => (
            format!("NetQuake rule info: no more rules ({size} bytes)"),
            json!({"reply": "rule info", "size": size}),
        ),
        Reply::Reject(why) => (
            format!("NetQuake reject: {:?} ({size} bytes)", text(why)),
            json!({"reply": "reject", "reason": text(why), "size": size}),
        ),
    };
    Ok(Msg::new(P, "answer", line, fields))
}
