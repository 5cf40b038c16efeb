//! `ogp decode` of GameSpy v3 datagrams.
//!
//! Decoding takes any mix of datagrams: requests
//! (`FE FD …`), `09` challenge and `05` echo replies, heartbeats (`03`) and the packets of
//! server-information replies, which are reassembled in any order.

use super::error::{bail, Context as _, Result};
use crate::gamespy3::heartbeat::Heartbeat;
use crate::gamespy3::mapping::info_to_status;
use crate::gamespy3::reply::{decode_reply_with, Pushed, Reassembler, Reply, ServerInfo};
use crate::gamespy3::request::{InfoKind, Request};
use crate::gamespy3::{kind, MAGIC};
use crate::{Charset, Protocol};
use serde_json::{json, Value};

use super::{quote, Input, Msg};

const P: Protocol = Protocol::Gamespy3;

fn kind_json(k: &InfoKind) -> Value {
    match k {
        InfoKind::Full => json!({ "sub_protocol": "B" }),
        InfoKind::Basic {
            server,
            players,
            teams,
        } => json!({ "sub_protocol": "A", "server": server, "players": players, "teams": teams }),
        InfoKind::Keys(keys) => json!({ "sub_protocol": "C", "header_indexes": keys }),
    }
}

fn kind_text(k: &InfoKind) -> String {
    match k {
        InfoKind::Full => "sub-protocol B (everything)".into(),
        InfoKind::Basic {
            server,
            players,
            teams,
        } => {
            let on: Vec<&str> = [(server, "server"), (players, "players"), (teams, "teams")]
                .iter()
                .filter(|(b, _)| **b)
                .map(|(_, n)| *n)
                .collect();
            format!("sub-protocol A ({})", on.join(", "))
        }
        InfoKind::Keys(keys) => {
            let names: Vec<String> = keys
                .iter()
                .map(|&i| {
                    crate::gamespy3::mapping::header_key(i)
                        .map_or_else(|| format!("#{i:02x}"), str::to_string)
                })
                .collect();
            format!("sub-protocol C ({})", names.join(", "))
        }
    }
}

fn session(s: u32) -> String {
    format!("session {s:#010x}")
}

fn request_msg(input: &Input, r: &Request) -> Msg {
    let size = input.bytes.len();
    match r {
        Request::Challenge { session_id } => Msg::new(
            P,
            "challenge_request",
            format!(
                "GameSpy v3 challenge request ({}, {size} bytes)",
                session(*session_id)
            ),
            json!({ "session_id": session_id, "size": size }),
        ),
        Request::Info {
            session_id,
            challenge,
            kind,
        } => Msg::new(
            P,
            "info_request",
            format!(
                "GameSpy v3 server-information request ({}, {}, {}, {size} bytes)",
                session(*session_id),
                challenge.map_or_else(|| "no challenge".to_string(), |c| format!("challenge {c}")),
                kind_text(kind)
            ),
            json!({
                "session_id": session_id, "challenge": challenge, "query": kind_json(kind),
                "size": size,
            }),
        ),
        Request::Echo { data } => Msg::new(
            P,
            "echo_request",
            format!(
                "GameSpy v3 echo request ({} to send back)",
                bytes(data.len())
            ),
            json!({ "data": crate::internals::to_hex(data), "size": size }),
        ),
        Request::KeepAlive { session_id } => Msg::new(
            P,
            "keep_alive",
            format!(
                "GameSpy v3 keep-alive from the master server (instance key {}, {size} bytes)",
                session_id.map_or_else(|| "none".to_string(), |s| format!("{s:#010x}"))
            ),
            json!({ "instance_key": session_id, "size": size }),
        ),
    }
}

fn bytes(n: usize) -> String {
    if n == 1 {
        "1 byte".into()
    } else {
        format!("{n} bytes")
    }
}

fn heartbeat_msg(input: &Input, hb: &Heartbeat) -> Msg {
    let keys: serde_json::Map<String, Value> = hb
        .keys
        .iter()
        .map(|(k, v)| (k.to_string(), Value::from(v.as_str())))
        .collect();
    let fields = json!({
        "instance_key": hb.instance_key,
        "local_ips": hb.local_ips.iter().map(|s| s.as_str()).collect::<Vec<_>>(),
        "local_port": hb.local_port, "natneg": hb.natneg,
        "state_changed": hb.state_changed.map(|s| s.code()),
        "game_name": hb.game_name.as_deref(), "keys": keys, "size": input.bytes.len(),
    });
    let line = format!(
        "GameSpy v3 heartbeat (instance key {:#010x}, game {}, port {}, {} local address(es), {} server key(s), {} bytes)",
        hb.instance_key,
        hb.game_name.as_deref().unwrap_or("?"),
        hb.local_port.map_or_else(|| "?".to_string(), |p| p.to_string()),
        hb.local_ips.len(),
        hb.keys.len(),
        input.bytes.len()
    );
    Msg::new(P, "heartbeat", line, fields)
}

fn reply_msg(info: &ServerInfo, sizes: &[usize], jc2mp: bool, warnings: Vec<String>) -> Msg {
    let packets = sizes.len();
    let mut m = Msg::answer(
        P,
        format!(
            "GameSpy v3 reply ({packets} packet{}{}, {} bytes)",
            if packets == 1 { "" } else { "s" },
            if jc2mp {
                ", Just Cause 2 MP player list"
            } else {
                ""
            },
            sizes.iter().sum::<usize>()
        ),
        json!({ "packets": packets, "jc2mp": jc2mp, "size": sizes.iter().sum::<usize>() }),
        info_to_status(info),
    );
    m.warnings = warnings;
    m
}

/// Describes GameSpy v3 datagrams, in order; reply packets are reassembled in any order
/// into one status.
pub fn describe(inputs: &[Input], charset: Charset, notes: &mut Vec<String>) -> Result<Vec<Msg>> {
    let mut msgs = Vec::new();
    let mut reasm = Reassembler::default();
    let mut pending: Vec<&str> = Vec::new();
    let mut sizes: Vec<usize> = Vec::new();
    let mut warnings: Vec<String> = Vec::new();
    let mut jc2mp = false;
    for input in inputs {
        let b = &input.bytes;
        let size = b.len();
        if b.starts_with(&MAGIC) {
            let r = Request::decode(b).with_context(|| input.name.clone())?;
            msgs.push(request_msg(input, &r));
            continue;
        }
        if b.first() == Some(&kind::HEARTBEAT) {
            let hb = Heartbeat::decode(b).with_context(|| input.name.clone())?;
            msgs.push(heartbeat_msg(input, &hb));
            continue;
        }
        match decode_reply_with(b, charset).with_context(|| input.name.clone())? {
            Reply::Challenge(c) => {
                let value = c.value();
                let line = format!(
                    "GameSpy v3 challenge {} ({}, {}, {size} bytes)",
                    quote(&c.text),
                    session(c.session_id),
                    match value {
                        Some(0) => "none needed".to_string(),
                        Some(v) => format!("sent back as {v:#010x}"),
                        None => "not a number".to_string(),
                    }
                );
                msgs.push(Msg::new(
                    P,
                    "challenge",
                    line,
                    json!({
                        "session_id": c.session_id, "text": c.text.as_str(), "challenge": value,
                        "size": size,
                    }),
                ));
            }
            Reply::Echo(data) => msgs.push(Msg::new(
                P,
                "echo",
                format!("GameSpy v3 echo reply ({})", bytes(data.len())),
                json!({ "data": crate::internals::to_hex(&data), "size": size }),
            )),
            Reply::Keys { session_id, values } => {
                let line = format!(
                    "GameSpy v3 sub-protocol C reply ({}): {}",
                    session(session_id),
                    values
                        .iter()
                        .map(|v| quote(v))
                        .collect::<Vec<_>>()
                        .join(", ")
                );
                msgs.push(Msg::new(
                    P,
                    "keys",
                    line,
                    json!({
                        "session_id": session_id,
                        "values": values.iter().map(|v| v.as_str()).collect::<Vec<_>>(),
                        "size": size,
                    }),
                ));
            }
            Reply::Packet(p) => {
                warnings.extend(p.warnings.iter().map(|w| format!("{}: {w}", input.name)));
                jc2mp |= p.jc2mp;
                pending.push(&input.name);
                sizes.push(size);
                match reasm
                    .push(p, size)
                    .with_context(|| format!("{}: reply packets do not fit together", input.name))?
                {
                    Pushed::Complete {
                        info,
                        packets: _,
                        warnings: w,
                    } => {
                        warnings.extend(w.iter().map(ToString::to_string));
                        msgs.push(reply_msg(
                            &info,
                            &std::mem::take(&mut sizes),
                            jc2mp,
                            std::mem::take(&mut warnings),
                        ));
                        pending.clear();
                        jc2mp = false;
                    }
                    Pushed::Duplicate => {
                        pending.pop();
                        sizes.pop();
                        notes.push(format!("warning: {}: duplicate packet ignored", input.name));
                    }
                    Pushed::Incomplete => {}
                }
            }
        }
    }
    if !pending.is_empty() {
        bail!(
            "reply incomplete: have {} (a packet with the last flag, and every number before it, is needed)",
            pending.join(", ")
        );
    }
    Ok(msgs)
}
