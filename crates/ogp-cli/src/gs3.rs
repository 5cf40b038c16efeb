//! `ogp decode --protocol gamespy3`.
//!
//! Decoding takes any mix of datagrams: requests
//! (`FE FD …`), `09` challenge and `05` echo replies, heartbeats (`03`) and the packets of
//! server-information replies, which are reassembled in any order.

use std::fmt::Write as _;
use std::process::ExitCode;

use anyhow::{bail, Context as _, Result};
use ogp_proto::gamespy3::heartbeat::Heartbeat;
use ogp_proto::gamespy3::mapping::info_to_status;
use ogp_proto::gamespy3::reply::{decode_reply, Pushed, Reassembler, Reply, ServerInfo};
use ogp_proto::gamespy3::request::{InfoKind, Request};
use ogp_proto::gamespy3::{kind, MAGIC};
use serde_json::{json, Value};

use crate::decode::Input;
use crate::render::sanitize;

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
                    ogp_proto::gamespy3::mapping::header_key(i)
                        .map_or_else(|| format!("#{i:02x}"), str::to_string)
                })
                .collect();
            format!("sub-protocol C ({})", names.join(", "))
        }
    }
}

/// A request or a small reply, described.
fn describe_one(input: &Input, json: bool, what: Value, text: String, out: &mut String) {
    if json {
        let _ = writeln!(
            out,
            "{}",
            serde_json::to_string_pretty(&what).unwrap_or_default()
        );
    } else {
        let _ = writeln!(
            out,
            "GameSpy v3 {} ({} bytes): {}",
            input.name,
            input.bytes.len(),
            sanitize(&text)
        );
    }
}

fn describe_request(input: &Input, r: &Request, json: bool, out: &mut String) {
    let (what, text) = match r {
        Request::Challenge { session_id } => (
            json!({ "protocol": "gamespy3", "request": "challenge", "session_id": session_id }),
            format!("0x09 challenge request, session id {session_id:#010x}"),
        ),
        Request::Info {
            session_id,
            challenge,
            kind,
        } => (
            json!({
                "protocol": "gamespy3", "request": "info", "session_id": session_id,
                "challenge": challenge, "kind": kind_json(kind),
            }),
            format!(
                "server-information request, session id {session_id:#010x}, {}, {}",
                challenge.map_or_else(|| "no challenge".to_string(), |c| format!("challenge {c}")),
                kind_text(kind)
            ),
        ),
        Request::Echo { data } => (
            json!({ "protocol": "gamespy3", "request": "echo", "data": ogp_proto::text::to_hex(data) }),
            format!("echo request, {} bytes to send back", data.len()),
        ),
        Request::KeepAlive { session_id } => (
            json!({ "protocol": "gamespy3", "request": "keep-alive", "instance_key": session_id }),
            format!(
                "keep-alive (master server), instance key {}",
                session_id.map_or_else(|| "none".to_string(), |s| format!("{s:#010x}"))
            ),
        ),
    };
    describe_one(input, json, what, text, out);
}

fn describe_heartbeat(input: &Input, hb: &Heartbeat, json: bool, out: &mut String) {
    let keys: serde_json::Map<String, Value> = hb
        .keys
        .iter()
        .map(|(k, v)| (k.to_string(), Value::from(v.as_str())))
        .collect();
    let what = json!({
        "protocol": "gamespy3", "message": "heartbeat", "instance_key": hb.instance_key,
        "local_ips": hb.local_ips.iter().map(|s| s.as_str()).collect::<Vec<_>>(),
        "local_port": hb.local_port, "natneg": hb.natneg,
        "state_changed": hb.state_changed.map(|s| s.code()),
        "game_name": hb.game_name.as_deref(), "keys": keys,
    });
    let text = format!(
        "heartbeat, instance key {:#010x}, game {}, port {}, {} local address(es), {} server key(s)",
        hb.instance_key,
        hb.game_name.as_deref().unwrap_or("?"),
        hb.local_port.map_or_else(|| "?".to_string(), |p| p.to_string()),
        hb.local_ips.len(),
        hb.keys.len()
    );
    describe_one(input, json, what, text, out);
}

fn print_reply(info: &ServerInfo, packets: usize, jc2mp: bool, json: bool, out: &mut String) {
    let status = info_to_status(info);
    if json {
        let _ = writeln!(out, "{}", status.to_json_pretty());
    } else {
        let _ = write!(
            out,
            "GameSpy v3 reply ({packets} packet{}{})\n\n{}",
            if packets == 1 { "" } else { "s" },
            if jc2mp {
                ", Just Cause 2 MP player list"
            } else {
                ""
            },
            crate::render::status(&status)
        );
    }
}

/// Describes GameSpy v3 datagrams; reply packets are reassembled in any order and
/// printed as a status (the state-file schema with `--json`).
pub fn describe(inputs: &[Input], json: bool) -> Result<String> {
    let mut out = String::new();
    let mut reasm = Reassembler::default();
    let mut pending: Vec<&str> = Vec::new();
    let mut jc2mp = false;
    for input in inputs {
        let b = &input.bytes;
        if b.starts_with(&MAGIC) {
            let r = Request::decode(b).with_context(|| input.name.clone())?;
            describe_request(input, &r, json, &mut out);
            continue;
        }
        if b.first() == Some(&kind::HEARTBEAT) {
            let hb = Heartbeat::decode(b).with_context(|| input.name.clone())?;
            describe_heartbeat(input, &hb, json, &mut out);
            continue;
        }
        match decode_reply(b).with_context(|| input.name.clone())? {
            Reply::Challenge(c) => {
                let value = c.value();
                let what = json!({
                    "protocol": "gamespy3", "reply": "challenge", "session_id": c.session_id,
                    "text": c.text.as_str(), "challenge": value,
                });
                let text = format!(
                    "0x09 challenge reply, session id {:#010x}, challenge {:?}{}",
                    c.session_id,
                    c.text.as_str(),
                    match value {
                        Some(0) => " (none needed)".to_string(),
                        Some(v) => format!(" (sent as {v:#010x})"),
                        None => " (not a number)".to_string(),
                    }
                );
                describe_one(input, json, what, text, &mut out);
            }
            Reply::Echo(data) => describe_one(
                input,
                json,
                json!({ "protocol": "gamespy3", "reply": "echo", "data": ogp_proto::text::to_hex(&data) }),
                format!("echo reply, {} bytes", data.len()),
                &mut out,
            ),
            Reply::Keys { session_id, values } => {
                let what = json!({
                    "protocol": "gamespy3", "reply": "keys", "session_id": session_id,
                    "values": values.iter().map(|v| v.as_str()).collect::<Vec<_>>(),
                });
                let text = format!(
                    "sub-protocol C reply, session id {session_id:#010x}: {}",
                    values
                        .iter()
                        .map(|v| format!("{:?}", v.as_str()))
                        .collect::<Vec<_>>()
                        .join(", ")
                );
                describe_one(input, json, what, text, &mut out);
            }
            Reply::Packet(p) => {
                for w in &p.warnings {
                    eprintln!("warning: {}: {w}", input.name);
                }
                jc2mp |= p.jc2mp;
                pending.push(&input.name);
                match reasm
                    .push(p, b.len())
                    .with_context(|| format!("{}: reply packets do not fit together", input.name))?
                {
                    Pushed::Complete {
                        info,
                        packets,
                        warnings,
                    } => {
                        for w in &warnings {
                            eprintln!("warning: {w}");
                        }
                        print_reply(&info, packets, jc2mp, json, &mut out);
                        pending.clear();
                        jc2mp = false;
                    }
                    Pushed::Duplicate => {
                        pending.pop();
                        eprintln!("warning: {}: duplicate packet ignored", input.name);
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
    Ok(out)
}

/// `ogp decode --protocol gamespy3`.
pub fn run_decode(args: &[String], json: bool) -> Result<ExitCode> {
    let inputs = args
        .iter()
        .map(|a| crate::decode::read_input(a))
        .collect::<Result<Vec<_>>>()?;
    crate::emit(&describe(&inputs, json)?)?;
    Ok(ExitCode::SUCCESS)
}
