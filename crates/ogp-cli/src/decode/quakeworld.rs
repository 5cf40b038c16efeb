//! `ogp decode` of QuakeWorld, Quake 2 and HexenWorld datagrams: the `status` request
//! and the `n` (QuakeWorld, HexenWorld after a fifth `FF`) and `print` (Quake 2) replies.

use anyhow::{Context as _, Result};
use ogp_proto::quakeworld::{mapping, wire};
use ogp_proto::Protocol;
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
