//! `ogp decode` of Cube 2 datagrams (Sauerbraten, Red Eclipse): our requests (the ping,
//! `81` and an id; extinfo, `00` and a command), ping replies after their echoed first
//! integer, and Sauerbraten's extinfo replies.

use super::error::{bail, Result};
use crate::cube2::{self, mapping, wire, Decoded, ExtReply};
use crate::Protocol;
use serde_json::json;

use super::{plural, Input, Msg};

/// One Cube 2 datagram.
pub fn msg(input: &Input) -> Result<Msg> {
    const P: Protocol = Protocol::Cube2;
    let size = input.bytes.len();
    if cube2::is_request(&input.bytes) {
        let what = match input.bytes.first() {
            Some(0x81) => "ping",
            _ => "extinfo request",
        };
        let line = format!("Cube 2 {what} ({size} bytes)");
        return Ok(Msg::new(P, "query", line, json!({"size": size})));
    }
    let Some(d) = cube2::describe(&input.bytes) else {
        bail!(
            "{}: not a Cube 2 datagram (a ping reply after its echoed integer, or an \
             extinfo reply: 00, a command, FF 69)",
            input.name
        );
    };
    Ok(match d {
        Decoded::Ping(p) => {
            let dialect = p.dialect();
            let status = mapping::to_status(&p, None, None, None);
            let line = format!(
                "Cube 2 ping reply ({}): {}, {} ({size} bytes)",
                dialect.name(),
                plural(p.attrs.len(), "attribute", "attributes"),
                plural(usize::try_from(p.clients).unwrap_or(0), "client", "clients"),
            );
            let fields = json!({
                "dialect": dialect.name(),
                "clients": p.clients,
                "attributes": p.attrs,
                "map": wire::text(&p.map).as_str(),
                "description": wire::text(&p.description).as_str(),
                "trailing": p.trailing.iter().map(|s| wire::text(s).to_string()).collect::<Vec<_>>(),
                "size": size,
            });
            Msg::answer(P, line, fields, status)
        }
        Decoded::Ext(cmd, e) => {
            let (line, fields) = match e {
                ExtReply::Uptime(u) => (format!("uptime {u} s"), json!({"uptime": u})),
                ExtReply::PlayerIds(ids) => (
                    format!("player ids: {}", plural(ids.len(), "client", "clients")),
                    json!({"ids": ids}),
                ),
                ExtReply::PlayerError => ("no such player".to_owned(), json!({"error": 1})),
                ExtReply::Player(p) => (
                    format!("player {} `{}`", p.cn, wire::text(&p.name)),
                    json!({
                        "cn": p.cn, "ping": p.ping, "name": wire::text(&p.name).as_str(),
                        "team": wire::text(&p.team).as_str(), "frags": p.frags, "flags": p.flags,
                        "deaths": p.deaths, "teamkills": p.teamkills, "accuracy": p.accuracy,
                        "health": p.health, "armour": p.armour, "gun": p.gun,
                        "privilege": p.privilege, "state": p.state,
                    }),
                ),
                ExtReply::Teams(t) => (
                    format!("team scores: {}", plural(t.teams.len(), "team", "teams")),
                    json!({
                        "team_mode": t.team_mode, "mode": t.mode, "seconds_left": t.seconds_left,
                        "teams": t.teams.iter().map(|s| json!({"name": wire::text(&s.name).as_str(), "score": s.score, "bases": s.bases})).collect::<Vec<_>>(),
                    }),
                ),
            };
            let line = format!("Cube 2 {} reply: {line} ({size} bytes)", cmd.word());
            Msg::new(P, "answer", line, fields)
        }
    })
}
