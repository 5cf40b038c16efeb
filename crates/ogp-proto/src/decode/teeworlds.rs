//! `ogp decode` of Teeworlds datagrams: 0.6 / DDNet requests (`gie3`, vanilla or in
//! DDNet's extended header) and replies (`inf3`, `iext`, `iex+`); 0.7 token requests
//! and replies, `gie3` and `inf3`. Each `iex+` is described alone (its clients only).

use super::error::{Context as _, Result};
use crate::teeworlds::mapping::info_to_status;
use crate::teeworlds::wire::{self, Client, Info, Kind, Reply6};
use crate::Protocol;
use serde_json::{json, Value};

use super::{plural, Input, Msg};

fn clients(c: &[Client]) -> Value {
    c.iter()
        .map(|c| {
            json!({
                "name": c.name.as_str(),
                "clan": c.clan.as_str(),
                "country": c.country,
                "score": c.score,
                "player": c.player,
                "bot": c.bot,
            })
        })
        .collect()
}

fn info_fields(i: &Info, size: usize) -> Value {
    json!({
        "token": i.token,
        "version": i.version.as_str(),
        "name": i.name.as_str(),
        "host_name": i.host_name.as_str(),
        "map": i.map.as_str(),
        "map_crc": i.map_crc,
        "map_size": i.map_size,
        "game_type": i.game_type.as_str(),
        "flags": i.flags,
        "skill_level": i.skill_level,
        "num_players": i.num_players,
        "max_players": i.max_players,
        "num_clients": i.num_clients,
        "max_clients": i.max_clients,
        "clients": clients(&i.clients),
        "size": size,
    })
}

/// One Teeworlds 0.6 / DDNet datagram.
pub fn v6_msg(input: &Input) -> Result<Msg> {
    const P: Protocol = Protocol::Teeworlds;
    let b = &input.bytes;
    let size = b.len();
    if wire::is_request6(b) {
        let line = format!("Teeworlds 0.6 gie3 request ({size} bytes)");
        return Ok(Msg::new(P, "query", line, json!({"size": size})));
    }
    let reply = wire::decode_reply6(b).with_context(|| input.name.clone())?;
    Ok(match reply {
        Reply6::Info(kind, i) => {
            let what = if kind == Kind::Extended {
                "iext"
            } else {
                "inf3"
            };
            let line = format!(
                "Teeworlds 0.6 {what} reply, token {}: {} ({size} bytes)",
                i.token,
                plural(i.clients.len(), "client", "clients")
            );
            let mut m = Msg::answer(P, line, info_fields(&i, size), info_to_status(&i, &[]));
            m.warnings = i.warnings.iter().map(ToString::to_string).collect();
            m
        }
        Reply6::More(more) => {
            let line = format!(
                "DDNet iex+ continuation {}, token {}: {} ({size} bytes)",
                more.part,
                more.token,
                plural(more.clients.len(), "client", "clients")
            );
            let fields = json!({
                "token": more.token,
                "part": more.part,
                "clients": clients(&more.clients),
                "size": size,
            });
            let mut m = Msg::new(P, "part", line, fields);
            m.warnings = more.warnings.iter().map(ToString::to_string).collect();
            m
        }
    })
}

/// One Teeworlds 0.7 datagram.
pub fn v7_msg(input: &Input) -> Result<Msg> {
    const P: Protocol = Protocol::Teeworlds7;
    let b = &input.bytes;
    let size = b.len();
    if wire::is_token7(b) {
        let line = format!("Teeworlds 0.7 token control packet ({size} bytes)");
        return Ok(Msg::new(P, "challenge", line, json!({"size": size})));
    }
    if b.get(9..17) == Some(wire::GETINFO.as_slice()) {
        let line = format!("Teeworlds 0.7 gie3 request ({size} bytes)");
        return Ok(Msg::new(P, "query", line, json!({"size": size})));
    }
    let (server_token, i) = wire::decode_reply7(b, None).with_context(|| input.name.clone())?;
    let line = format!(
        "Teeworlds 0.7 inf3 reply, server token {server_token:08x}: {} ({size} bytes)",
        plural(i.clients.len(), "client", "clients")
    );
    let mut m = Msg::answer(P, line, info_fields(&i, size), info_to_status(&i, &[]));
    m.warnings = i.warnings.iter().map(ToString::to_string).collect();
    Ok(m)
}
