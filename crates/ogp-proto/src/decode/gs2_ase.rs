//! `ogp decode` of GameSpy v2 and ASE datagrams: GameSpy v2 requests (`FE FD 00`, an id
//! and three section bytes, 10 bytes) and replies (`00`, the id, the sections); the ASE
//! request (`s`) and `EYE1` replies.

use super::error::{Context as _, Result};
use crate::{ase, gamespy2, Charset, Protocol};
use serde_json::{json, Value};

use super::{plural, Input, Msg};

/// One GameSpy v2 datagram.
pub fn gamespy2_msg(input: &Input, charset: Charset) -> Result<Msg> {
    const P: Protocol = Protocol::Gamespy2;
    let size = input.bytes.len();
    if let Ok(r) = gamespy2::Request::decode(&input.bytes) {
        let asked: Vec<&str> = [
            (r.server, "server"),
            (r.players, "players"),
            (r.teams, "teams"),
        ]
        .into_iter()
        .filter_map(|(on, name)| on.then_some(name))
        .collect();
        let line = format!(
            "GameSpy v2 request, id {:08x}, for {} ({size} bytes)",
            r.id,
            if asked.is_empty() {
                "nothing".to_owned()
            } else {
                asked.join(", ")
            }
        );
        let fields = json!({"id": r.id, "server": r.server, "players": r.players, "teams": r.teams, "size": size});
        return Ok(Msg::new(P, "query", line, fields));
    }
    let d =
        gamespy2::decode_reply_with(&input.bytes, charset).with_context(|| input.name.clone())?;
    let status = gamespy2::mapping::info_to_status(&d.info);
    let rows = |cols: &[crate::gamespy3::Column]| cols.iter().map(|c| c.values.len()).max();
    let line = format!(
        "GameSpy v2 reply, id {:08x}: {}, {}, {} ({size} bytes)",
        d.id,
        plural(d.info.server.len(), "server key", "server keys"),
        plural(rows(&d.info.players).unwrap_or(0), "player", "players"),
        plural(rows(&d.info.teams).unwrap_or(0), "team", "teams"),
    );
    let columns = |cols: &[crate::gamespy3::Column]| -> Value {
        cols.iter().map(|c| json!({"key": c.key.as_str(), "values": c.values.iter().map(|v| v.as_str()).collect::<Vec<_>>()})).collect()
    };
    let fields = json!({
        "id": d.id,
        "server": d.info.server.iter().map(|(k, v)| json!([k.as_str(), v.as_str()])).collect::<Vec<_>>(),
        "player_count": d.player_count,
        "players": columns(&d.info.players),
        "team_count": d.team_count,
        "teams": columns(&d.info.teams),
        "size": size,
    });
    let mut m = Msg::answer(P, line, fields, status);
    m.warnings = d.warnings.iter().map(ToString::to_string).collect();
    Ok(m)
}

/// One ASE datagram.
pub fn ase_msg(input: &Input, charset: Charset) -> Result<Msg> {
    const P: Protocol = Protocol::Ase;
    let size = input.bytes.len();
    if input.bytes == ase::REQUEST {
        let line = "ASE request `s` (1 byte)".to_owned();
        return Ok(Msg::new(P, "query", line, json!({"size": size})));
    }
    let r = ase::decode_reply_with(&input.bytes, charset).with_context(|| input.name.clone())?;
    let status = ase::mapping::reply_to_status(&r);
    let line = format!(
        "ASE EYE1 reply: {}, {} ({size} bytes)",
        plural(r.rules.len(), "rule", "rules"),
        plural(r.players.len(), "player record", "player records"),
    );
    let text = |t: &Option<crate::model::Text>| t.as_ref().map(|t| t.as_str().to_owned());
    let fields = json!({
        "game_name": r.game_name.as_str(),
        "port": r.port.as_str(),
        "server_name": r.server_name.as_str(),
        "game_type": r.game_type.as_str(),
        "map": r.map.as_str(),
        "version": r.version.as_str(),
        "password": r.password.as_str(),
        "num_players": r.num_players.as_str(),
        "max_players": r.max_players.as_str(),
        "rules": r.rules.iter().map(|(k, v)| json!([k.as_str(), v.as_str()])).collect::<Vec<_>>(),
        "players": r.players.iter().map(|p| json!({
            "flags": p.flags,
            "name": text(&p.name),
            "team": text(&p.team),
            "skin": text(&p.skin),
            "score": text(&p.score),
            "ping": text(&p.ping),
            "time": text(&p.time),
        })).collect::<Vec<_>>(),
        "size": size,
    });
    let mut m = Msg::answer(P, line, fields, status);
    m.warnings = r.warnings.iter().map(ToString::to_string).collect();
    Ok(m)
}
