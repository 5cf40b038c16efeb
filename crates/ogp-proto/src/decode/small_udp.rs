//! `ogp decode` of Mumble pings, Chocolate Doom queries, Doomsday beacons and SA-MP /
//! open.mp datagrams.

use super::error::{Context as _, Result};
use crate::{doom, doomsday, mumble, samp, Charset, Protocol};
use serde_json::json;

use super::{plural, Input, Msg};

/// One Mumble datagram: a 12-byte ping or a 24-byte reply.
pub fn mumble_msg(input: &Input) -> Result<Msg> {
    const P: Protocol = Protocol::Mumble;
    let b = &input.bytes;
    let size = b.len();
    if size == mumble::REQUEST_LEN && b.starts_with(&[0; 4]) {
        let ident = crate::internals::to_hex(b.get(4..).unwrap_or_default());
        let line = format!("Mumble ping, ident {ident} ({size} bytes)");
        return Ok(Msg::new(
            P,
            "query",
            line,
            json!({"ident": ident, "size": size}),
        ));
    }
    let r = mumble::decode_reply(b).with_context(|| input.name.clone())?;
    let status = mumble::client::reply_to_status(&r);
    let line = format!(
        "Mumble ping reply: version {}, {}/{} users ({size} bytes)",
        r.version(),
        r.users,
        r.max_users
    );
    let fields = json!({
        "version": r.version(),
        "ident": crate::internals::to_hex(&r.ident),
        "users": r.users,
        "max_users": r.max_users,
        "bandwidth": r.bandwidth,
        "size": size,
    });
    let mut m = Msg::answer(P, line, fields, status);
    m.warnings = r.warnings.iter().map(ToString::to_string).collect();
    Ok(m)
}

/// One Chocolate Doom datagram: the query `00 0D` or its response.
pub fn doom_msg(input: &Input) -> Result<Msg> {
    const P: Protocol = Protocol::Doom;
    let size = input.bytes.len();
    if input.bytes == doom::REQUEST {
        let line = format!("Chocolate Doom query ({size} bytes)");
        return Ok(Msg::new(P, "query", line, json!({"size": size})));
    }
    let r = doom::decode_reply(&input.bytes).with_context(|| input.name.clone())?;
    let status = doom::client::reply_to_status(&r);
    let line = format!(
        "Chocolate Doom query response: {}/{} players ({size} bytes)",
        r.players, r.max_players
    );
    let fields = json!({
        "version": r.version.as_str(),
        "state": r.state,
        "players": r.players,
        "max_players": r.max_players,
        "mode": r.mode,
        "mission": r.mission,
        "description": r.description.as_str(),
        "protocols": r.protocols.as_ref().map(|p| p.iter().map(|n| n.as_str()).collect::<Vec<_>>()),
        "size": size,
    });
    let mut m = Msg::answer(P, line, fields, status);
    m.warnings = r.warnings.iter().map(ToString::to_string).collect();
    Ok(m)
}

/// One Doomsday beacon datagram: the request `Doomsday Beacon 1.1` or a reply (its
/// record's members as sent, numbers as integers when whole).
pub fn doomsday_msg(input: &Input) -> Result<Msg> {
    const P: Protocol = Protocol::Doomsday;
    let size = input.bytes.len();
    if input.bytes == doomsday::REQUEST {
        let line = format!("Doomsday beacon request ({size} bytes)");
        return Ok(Msg::new(P, "query", line, json!({"size": size})));
    }
    let r = doomsday::decode_reply(&input.bytes).with_context(|| input.name.clone())?;
    let status = doomsday::client::reply_to_status(&r);
    let line = format!(
        "Doomsday beacon reply: port {}, {} members, {}/{} players ({size} bytes, {} inflated)",
        r.service_port,
        r.members.len(),
        status.player_count.unwrap_or(0),
        status
            .slot_max
            .map_or_else(|| "?".to_owned(), |m| m.to_string()),
        r.announced_size
    );
    let members: serde_json::Map<String, serde_json::Value> = r
        .members
        .iter()
        .map(|m| (m.name.to_string(), json!(m.value.to_text().as_str())))
        .collect();
    let fields = json!({
        "service_port": r.service_port,
        "inflated_size": r.announced_size,
        "format": r.format,
        "members": members,
        "size": size,
    });
    let mut m = Msg::answer(P, line, fields, status);
    m.warnings = r.warnings.iter().map(ToString::to_string).collect();
    Ok(m)
}

/// One SA-MP datagram: an 11-byte request (15 for a ping) or a reply.
pub fn samp_msg(input: &Input, charset: Charset) -> Result<Msg> {
    use samp::wire::{opcode, Body};
    const P: Protocol = Protocol::Samp;
    let b = &input.bytes;
    let size = b.len();
    let header = samp::Request::of(b);
    let addr = |h: &samp::Request| std::net::SocketAddrV4::new(h.addr.into(), h.port).to_string();
    if let Some(h) = header
        .filter(|h| size == samp::wire::HEADER_LEN || (h.opcode == opcode::PING && size == 15))
    {
        let line = format!(
            "SA-MP request `{}` for {} ({size} bytes)",
            char::from(h.opcode).escape_default(),
            addr(&h)
        );
        let fields = json!({"opcode": h.opcode, "address": addr(&h), "size": size});
        return Ok(Msg::new(P, "query", line, fields));
    }
    let r = samp::wire::decode_reply_with(b, charset).with_context(|| input.name.clone())?;
    let mut details = samp::client::Details::default();
    let (what, fields) = match &r.body {
        Body::Info(i) => {
            details.info = i.clone();
            (
                format!("information, {}/{} players", i.players, i.max_players),
                json!({
                    "password": i.password,
                    "players": i.players,
                    "max_players": i.max_players,
                    "host_name": i.host_name.as_str(),
                    "game_mode": i.game_mode.as_str(),
                    "language": i.language.as_str(),
                }),
            )
        }
        Body::Rules(rules) => {
            details.rules = Some(rules.clone());
            (
                plural(rules.len(), "rule", "rules"),
                json!({"rules": rules.iter().map(|(k, v)| json!([k.as_str(), v.as_str()])).collect::<Vec<_>>()}),
            )
        }
        Body::Players(ps) => {
            details.players = Some(ps.clone());
            (
                plural(ps.len(), "player", "players"),
                json!({"players": ps.iter().map(|p| json!({
                    "id": p.id, "name": p.name.as_str(), "score": p.score, "ping": p.ping,
                })).collect::<Vec<_>>()}),
            )
        }
        Body::Extra(e) => {
            details.extra = Some(e.clone());
            (
                "open.mp information".to_owned(),
                json!({
                    "discord": e.discord.as_str(),
                    "light_banner": e.light_banner.as_str(),
                    "dark_banner": e.dark_banner.as_str(),
                    "logo": e.logo.as_ref().map(|l| l.as_str()),
                }),
            )
        }
        Body::Ping(p) => (
            format!("ping {}", crate::internals::to_hex(p)),
            json!({"ping": crate::internals::to_hex(p)}),
        ),
    };
    let line = format!(
        "SA-MP reply `{}` for {}: {what} ({size} bytes)",
        char::from(r.header.opcode).escape_default(),
        addr(&r.header)
    );
    let mut fields = fields;
    if let Some(o) = fields.as_object_mut() {
        o.insert("opcode".into(), json!(r.header.opcode));
        o.insert("size".into(), json!(size));
    }
    let mut m = match &r.body {
        Body::Info(_) => Msg::answer(P, line, fields, samp::client::to_status(&details)),
        _ => Msg::new(P, "reply", line, fields),
    };
    m.warnings = r.warnings.iter().map(ToString::to_string).collect();
    Ok(m)
}
