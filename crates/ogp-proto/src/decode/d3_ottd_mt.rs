//! `ogp decode` of the Doom 3 engine (`getInfo` requests, `infoResponse` replies in each
//! game's layout), OpenTTD (the `CLIENT_GAME_INFO` request and a `SERVER_GAME_INFO`
//! packet, as the stream carries them) and Minetest (the handshake's packets).

use super::error::{anyhow, Context as _, Result};
use crate::internals::Reader;
use crate::minetest::wire::{Body, Control};
use crate::{doom3, minetest, openttd, Protocol};
use serde_json::json;

use super::{plural, Input, Msg};

/// One Doom 3 engine datagram.
pub fn doom3_msg(input: &Input) -> Result<Msg> {
    const P: Protocol = Protocol::Doom3;
    let size = input.bytes.len();
    if let Some(rest) = input.bytes.strip_prefix(doom3::wire::REQUEST_PREFIX) {
        let line = format!(
            "Doom 3 engine getInfo request, challenge {} ({size} bytes)",
            hex(rest)
        );
        return Ok(Msg::new(
            P,
            "query",
            line,
            json!({"challenge": hex(rest), "size": size}),
        ));
    }
    let r = doom3::decode_info_response(&input.bytes, None).with_context(|| input.name.clone())?;
    let status = doom3::mapping::info_to_status(&r);
    let line = format!(
        "Doom 3 engine infoResponse ({} layout), protocol {}: {}, {} ({size} bytes)",
        r.dialect.name(),
        r.protocol_string(),
        plural(r.rules.len(), "rule", "rules"),
        plural(r.players.len(), "player", "players"),
    );
    let fields = json!({
        "dialect": r.dialect.name(),
        "task_id": r.task_id,
        "challenge": r.challenge,
        "protocol": r.protocol_string(),
        "size_field": r.size,
        "rules": r.rules.iter().map(|(k, v)| json!([k.as_str(), v.as_str()])).collect::<Vec<_>>(),
        "players": r.players.iter().map(|p| json!({
            "id": p.id, "ping": p.ping, "rate": p.rate, "name": p.name.as_str(),
            "clan_position": p.clan_position, "clan": p.clan.as_deref(), "bot": p.bot,
        })).collect::<Vec<_>>(),
        "os_mask": r.tail.os_mask,
        "size": size,
    });
    let mut m = Msg::answer(P, line, fields, status);
    m.warnings = r.warnings.iter().map(ToString::to_string).collect();
    Ok(m)
}

/// OpenTTD's bytes: the request, or one packet.
pub fn openttd_msg(input: &Input) -> Result<Msg> {
    const P: Protocol = Protocol::Openttd;
    let size = input.bytes.len();
    if input.bytes == openttd::wire::REQUEST {
        let line = "OpenTTD PACKET_CLIENT_GAME_INFO request (3 bytes)".to_owned();
        return Ok(Msg::new(P, "query", line, json!({"size": size})));
    }
    let name = || input.name.clone();
    let r = Reader::new(&input.bytes);
    let (kind, total) = openttd::wire::split_packet(&r)
        .with_context(name)?
        .ok_or_else(|| anyhow!("{}: an OpenTTD packet cut short", input.name))?;
    if kind != openttd::wire::PACKET_SERVER_GAME_INFO {
        let line = format!("OpenTTD packet of type {kind} ({total} bytes)");
        return Ok(Msg::new(
            P,
            "answer",
            line,
            json!({"type": kind, "size": total}),
        ));
    }
    let body = input
        .bytes
        .get(openttd::wire::HEADER..total)
        .unwrap_or_default();
    let g = openttd::wire::decode_game_info(&mut Reader::with_base(body, openttd::wire::HEADER))
        .with_context(name)?;
    let status = openttd::mapping::game_info_to_status(&g);
    let line = format!(
        "OpenTTD SERVER_GAME_INFO, format {}: {} of {} clients, {} ({total} bytes)",
        g.version,
        g.clients_on,
        g.clients_max,
        plural(g.grfs.len(), "NewGRF", "NewGRFs"),
    );
    let fields = json!({
        "version": g.version,
        "server_name": g.server_name.as_str(),
        "server_revision": g.server_revision.as_str(),
        "clients_on": g.clients_on,
        "clients_max": g.clients_max,
        "companies_on": g.companies_on,
        "companies_max": g.companies_max,
        "map_width": g.map_width,
        "map_height": g.map_height,
        "landscape": g.landscape,
        "dedicated": g.dedicated,
        "password": g.password,
        "size": total,
    });
    let mut m = Msg::answer(P, line, fields, status);
    m.warnings = g.warnings.iter().map(ToString::to_string).collect();
    Ok(m)
}

/// One Minetest packet (ours or the server's).
pub fn minetest_msg(input: &Input) -> Result<Msg> {
    const P: Protocol = Protocol::Minetest;
    let size = input.bytes.len();
    let p = minetest::wire::decode_packet(&input.bytes).with_context(|| input.name.clone())?;
    let what = match &p.body {
        Body::Control(Control::Ack(s)) => format!("ACK of {s}"),
        Body::Control(Control::SetPeerId(id)) => format!("SET_PEER_ID {id}"),
        Body::Control(Control::Ping) => "PING".to_owned(),
        Body::Control(Control::Disco) => "DISCO".to_owned(),
        Body::Hello(h) => format!("TOCLIENT_HELLO, protocol {}", h.protocol),
        Body::AccessDenied(c) => format!("TOCLIENT_ACCESS_DENIED, reason {c}"),
        Body::Other(Some(c)) => format!("command {c:#06x}"),
        Body::Other(None) => "a split packet".to_owned(),
    };
    let line = format!(
        "Minetest packet from peer {}, channel {}{}: {what} ({size} bytes)",
        p.sender,
        p.channel,
        p.reliable
            .map(|s| format!(", reliable {s}"))
            .unwrap_or_default(),
    );
    let fields = json!({
        "sender": p.sender,
        "channel": p.channel,
        "reliable": p.reliable,
        "body": what,
        "size": size,
    });
    Ok(Msg::new(P, "packet", line, fields))
}

fn hex(b: &[u8]) -> String {
    crate::internals::to_hex(b)
}
