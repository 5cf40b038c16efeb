//! `ogp decode`: decode datagrams given as hex or files, for debugging.

use std::fmt::Write as _;
use std::io::Read as _;

use anyhow::{bail, Context as _, Result};
use ogp_proto::ogp::{self, query, Bits, Header, Message, Packet, Pushed, Reassembler};
use ogp_proto::text;
use serde_json::{json, Map, Value};

use crate::render;

/// One input datagram and where it came from (for messages).
pub struct Input {
    /// The argument as given.
    pub name: String,
    /// The bytes.
    pub bytes: Vec<u8>,
}

/// Parses hex leniently: whitespace, `:` and `-` separators and a leading `0x` are
/// ignored; `\xNN` escapes are accepted.
pub fn parse_hex(s: &str) -> Option<Vec<u8>> {
    let s = s.trim();
    let s = s.strip_prefix("0x").unwrap_or(s);
    let cleaned: String = s
        .replace("\\x", "")
        .chars()
        .filter(|c| !c.is_whitespace() && *c != ':' && *c != '-')
        .collect();
    if cleaned.is_empty() {
        return None;
    }
    text::from_hex(&cleaned)
}

/// Reads an argument: `-` is standard input, an existing path is a file (raw bytes, or
/// hex text if it is nothing but hex), anything else must be hex.
pub fn read_input(arg: &str) -> Result<Input> {
    let raw = if arg == "-" {
        let mut b = Vec::new();
        std::io::stdin()
            .read_to_end(&mut b)
            .context("reading standard input")?;
        b
    } else if std::path::Path::new(arg).is_file() {
        std::fs::read(arg).with_context(|| format!("reading {arg}"))?
    } else {
        return match parse_hex(arg) {
            Some(bytes) => Ok(Input {
                name: short(arg),
                bytes,
            }),
            None => bail!("{}: neither a file nor hex digits", short(arg)),
        };
    };
    let bytes = match std::str::from_utf8(&raw).ok().and_then(parse_hex) {
        Some(hex) => hex,
        None => raw,
    };
    let name = std::path::Path::new(arg)
        .file_name()
        .map_or_else(|| arg.to_string(), |n| n.to_string_lossy().into_owned());
    Ok(Input { name, bytes })
}

fn short(arg: &str) -> String {
    if arg.chars().count() > 24 {
        format!("{}…", arg.chars().take(24).collect::<String>())
    } else {
        arg.to_string()
    }
}

/// The result of decoding all inputs.
pub struct Decoded {
    /// One entry per logical message (a split answer's fragments become one).
    pub items: Vec<Item>,
}

/// One decoded message.
pub struct Item {
    /// Which inputs it came from.
    pub sources: String,
    /// Datagram sizes.
    pub sizes: Vec<usize>,
    /// The header (packet 0's for split answers).
    pub header: Header,
    /// HeadSize on the wire.
    pub head_size: Option<u8>,
    /// The message.
    pub message: Message,
}

/// Decodes every input; fragments of split answers are reassembled.
pub fn decode_all(inputs: &[Input]) -> Result<Decoded> {
    let mut items = Vec::new();
    let mut reasm = Reassembler::new();
    let mut frag_sources: Vec<String> = Vec::new();
    let mut frag_sizes: Vec<usize> = Vec::new();
    for input in inputs {
        let packet: Packet = ogp::decode(&input.bytes).with_context(|| input.name.clone())?;
        if let Message::Fragment { body } = &packet.message {
            frag_sources.push(input.name.clone());
            frag_sizes.push(input.bytes.len());
            match reasm
                .push(&packet.header, body)
                .with_context(|| input.name.clone())?
            {
                Pushed::Complete { header, body } => {
                    let mut r = ogp_proto::reader::Reader::new(&body);
                    let answer = ogp::decode_answer_body(&mut r, header.utf8())
                        .context("reassembled split answer")?;
                    items.push(Item {
                        sources: frag_sources.join(" + "),
                        sizes: std::mem::take(&mut frag_sizes),
                        header,
                        head_size: None,
                        message: Message::Answer(Box::new(answer)),
                    });
                    frag_sources.clear();
                }
                Pushed::Duplicate => {
                    eprintln!("warning: {}: duplicate split packet ignored", input.name);
                }
                Pushed::Incomplete => {}
            }
            continue;
        }
        items.push(Item {
            sources: input.name.clone(),
            sizes: vec![input.bytes.len()],
            header: packet.header,
            head_size: Some(packet.head_size),
            message: packet.message,
        });
    }
    if reasm.received() > 0 {
        let missing: Vec<String> = reasm.missing().iter().map(u8::to_string).collect();
        bail!(
            "split answer incomplete: have {} packet(s), missing packet number(s) {}",
            reasm.received(),
            missing.join(", ")
        );
    }
    Ok(Decoded { items })
}

const SERVER_INFO_NAMES: &[(Bits, &str)] = &[
    (query::server_info::GAME_NAME, "game_name"),
    (query::server_info::SERVER_FLAGS, "server_flags"),
    (query::server_info::HOST_NAME, "host_name"),
    (query::server_info::CONNECT_PORT, "connect_port"),
    (query::server_info::MOD, "mod"),
    (query::server_info::GAME_TYPE, "game_type"),
    (query::server_info::GAME_MODE, "game_mode"),
    (query::server_info::MAP, "map"),
    (query::server_info::NEXT_MAP, "next_map"),
    (query::server_info::PLAYER_COUNT, "player_count"),
    (query::server_info::SLOT_MAX, "slot_max"),
    (query::server_info::BOT_COUNT, "bot_count"),
    (query::server_info::RESERVED_SLOTS, "reserved_slots"),
];
const MOD_NAMES: &[(Bits, &str)] = &[
    (query::mod_fields::IDENTIFIER, "identifier"),
    (query::mod_fields::SIZE, "size"),
    (query::mod_fields::VERSION, "version"),
    (query::mod_fields::URL, "url"),
    (query::mod_fields::AUTHOR, "author"),
];
const MAP_NAMES: &[(Bits, &str)] = &[
    (query::map_fields::FILE_NAME, "file_name"),
    (query::map_fields::FILE_SIZE, "file_size"),
    (query::map_fields::FILE_MD5, "file_md5"),
    (query::map_fields::VERSION, "version"),
    (query::map_fields::URL, "url"),
    (query::map_fields::AUTHOR, "author"),
];
const TEAM_NAMES: &[(Bits, &str)] = &[
    (query::team_fields::NAME, "name"),
    (query::team_fields::SCORE, "score"),
    (query::team_fields::AVERAGE_PING, "average_ping"),
    (query::team_fields::AVERAGE_LOSS, "average_loss"),
    (query::team_fields::PLAYER_COUNT, "player_count"),
    (query::team_fields::COLOR, "color"),
];
const PLAYER_NAMES: &[(Bits, &str)] = &[
    (query::player_fields::FLAGS, "flags"),
    (query::player_fields::SLOT, "slot"),
    (query::player_fields::NAME, "name"),
    (query::player_fields::TEAM, "team"),
    (query::player_fields::CLASS, "class"),
    (query::player_fields::RACE, "race"),
    (query::player_fields::SCORE, "score"),
    (query::player_fields::FRAGS, "frags"),
    (query::player_fields::KILLS, "kills"),
    (query::player_fields::DEATH, "deaths"),
    (query::player_fields::SUICIDES, "suicides"),
    (query::player_fields::TEAM_KILLS, "team_kills"),
    (query::player_fields::ID, "id"),
    (query::player_fields::GLOBAL_ID, "global_id"),
    (query::player_fields::PING, "ping"),
    (query::player_fields::LOSS, "loss"),
    (query::player_fields::MODEL, "model"),
    (query::player_fields::TIME, "time"),
    (query::player_fields::ADDRESS, "address"),
];
const ADDON_NAMES: &[(Bits, &str)] = &[
    (query::addon_fields::FLAGS, "flags"),
    (query::addon_fields::SHORT_NAME, "short_name"),
    (query::addon_fields::LONG_NAME, "long_name"),
    (query::addon_fields::VERSION, "version"),
];

fn names(bits: Bits, table: &[(Bits, &'static str)]) -> Vec<&'static str> {
    let mut v: Vec<&str> = table
        .iter()
        .filter(|(b, _)| bits.contains(*b))
        .map(|(_, n)| *n)
        .collect();
    let known = table.iter().fold(Bits::EMPTY, |acc, (b, _)| acc.with(*b));
    if !bits.without(known).is_empty() {
        v.push("(unknown bits)");
    }
    v
}

/// What a default query asks for, by section.
fn describe_query(q: &ogp::DefaultQuery) -> Map<String, Value> {
    let mut m = Map::new();
    let r = q.request;
    if r.contains(query::request::SERVER_INFO) {
        m.insert(
            "server_info".into(),
            json!(names(q.server_info, SERVER_INFO_NAMES)),
        );
        if q.server_info.contains(query::server_info::MOD) {
            m.insert("mod".into(), json!(names(q.mod_fields, MOD_NAMES)));
        }
        if q.server_info.contains(query::server_info::MAP) {
            m.insert("map".into(), json!(names(q.map_fields, MAP_NAMES)));
        }
    }
    if r.contains(query::request::TEAM_LIST) {
        m.insert("teams".into(), json!(names(q.team_fields, TEAM_NAMES)));
    }
    if r.contains(query::request::PLAYER_LIST) {
        m.insert(
            "players".into(),
            json!(names(q.player_fields, PLAYER_NAMES)),
        );
    }
    if r.contains(query::request::RULE_LIST) {
        m.insert("rules".into(), json!(true));
    }
    if r.contains(query::request::ADDON_LIST) {
        m.insert("addons".into(), json!(names(q.addon_fields, ADDON_NAMES)));
    }
    if r.contains(query::request::LIMIT_LIST) {
        m.insert("limits".into(), json!(true));
    }
    if r.contains(query::request::COLORED_NAMES) {
        m.insert("colored_names".into(), json!(true));
    }
    m
}

fn header_json(h: &Header, head_size: Option<u8>, sizes: &[usize]) -> Map<String, Value> {
    let mut m = Map::new();
    m.insert("protocol".into(), json!("ogp"));
    m.insert(
        "direction".into(),
        json!(if h.is_answer() { "answer" } else { "query" }),
    );
    m.insert("type".into(), json!(h.packet_type.0));
    m.insert(
        "type_name".into(),
        json!(h.packet_type.name().unwrap_or("unknown")),
    );
    if let Some(hs) = head_size {
        m.insert("head_size".into(), json!(hs));
    }
    m.insert("head_flags".into(), json!(text::to_hex(&h.flags.to_wire())));
    m.insert("utf8".into(), json!(h.utf8()));
    if let Some(c) = h.challenge {
        m.insert("challenge".into(), json!(c));
    }
    if let Some(id) = h.request_id {
        m.insert("request_id".into(), json!(id));
    }
    if let Some(mbp) = h.max_bytes_per_packet {
        m.insert("max_bytes_per_packet".into(), json!(mbp));
    }
    if let Some(s) = h.split {
        m.insert("split_count".into(), json!(s.count));
    }
    if sizes.len() > 1 {
        m.insert("packet_sizes".into(), json!(sizes));
    } else if let Some(s) = sizes.first() {
        m.insert("size".into(), json!(s));
    }
    m
}

/// The JSON form of an item: for complete answers the status in the state-file
/// schema; for everything else a description.
pub fn item_json(item: &Item) -> Value {
    if let Message::Answer(a) = &item.message {
        return serde_json::to_value(&a.status).unwrap_or(Value::Null);
    }
    let mut m = header_json(&item.header, item.head_size, &item.sizes);
    match &item.message {
        Message::Ping => {
            m.insert("message".into(), json!("ping"));
        }
        Message::Probe => {
            m.insert(
                "message".into(),
                json!("challenge probe (default query with no body)"),
            );
        }
        Message::Query(q) => {
            m.insert("message".into(), json!("default query v1"));
            m.insert("asks".into(), Value::Object(describe_query(&q.query)));
            if q.trailing > 0 {
                m.insert("trailing_bytes".into(), json!(q.trailing));
            }
        }
        Message::Error(e) => {
            m.insert("message".into(), json!("error"));
            m.insert("error_value".into(), json!(e.value.0));
            m.insert(
                "error".into(),
                json!(e.value.description().unwrap_or("unknown")),
            );
            if let Some(copy) = e.resend_copy() {
                m.insert("resend".into(), json!(text::to_hex(copy)));
            } else if !e.data.is_empty() {
                m.insert("data".into(), json!(text::to_hex(&e.data)));
            }
        }
        Message::MasterUplink { game_id } => {
            m.insert("message".into(), json!("master server uplink"));
            m.insert("game_id".into(), json!(game_id));
        }
        Message::Other { body } => {
            m.insert("message".into(), json!("unknown type"));
            m.insert("body".into(), json!(text::to_hex(body)));
        }
        Message::Answer(_) | Message::Fragment { .. } => {}
        _ => {}
    }
    Value::Object(m)
}

/// The human-readable form of an item.
pub fn item_text(item: &Item) -> String {
    let h = &item.header;
    let mut out = String::new();
    let dir = if h.is_answer() { "answer" } else { "query" };
    let ty = h.packet_type.name().unwrap_or("unknown type");
    let _ = write!(out, "OGP {ty} {dir}");
    if item.sizes.len() > 1 {
        let total: usize = item.sizes.iter().sum();
        let _ = write!(
            out,
            ", split into {} packets ({total} bytes)",
            item.sizes.len()
        );
    } else if let Some(s) = item.sizes.first() {
        let _ = write!(out, ", {s} bytes");
    }
    out.push('\n');
    let mut facts: Vec<String> = Vec::new();
    if let Some(hs) = item.head_size {
        facts.push(format!("HeadSize {hs}"));
    }
    facts.push(format!("flags {}", text::to_hex(&h.flags.to_wire())));
    if let Some(c) = h.challenge {
        facts.push(format!("challenge {c:#010x}"));
    }
    if let Some(id) = h.request_id {
        facts.push(format!("request id {id}"));
    }
    if let Some(m) = h.max_bytes_per_packet {
        facts.push(format!("max {m} bytes/packet"));
    }
    if h.utf8() {
        facts.push(
            if h.is_answer() {
                "UTF-8 strings"
            } else {
                "accepts UTF-8"
            }
            .into(),
        );
    } else if h.is_answer() {
        facts.push("Latin-1 strings".into());
    }
    let _ = writeln!(out, "  {}", facts.join(" · "));
    match &item.message {
        Message::Ping => out.push_str("  ping\n"),
        Message::Probe => out.push_str("  challenge probe: a default query with no body\n"),
        Message::Query(q) => {
            out.push_str("  asks for:\n");
            for (section, v) in describe_query(&q.query) {
                let fields = match v {
                    Value::Array(a) => a
                        .iter()
                        .filter_map(Value::as_str)
                        .collect::<Vec<_>>()
                        .join(", "),
                    _ => String::new(),
                };
                let _ = writeln!(out, "    {section:<13} {fields}");
            }
            if q.trailing > 0 {
                let _ = writeln!(out, "  ({} trailing byte(s) ignored)", q.trailing);
            }
        }
        Message::Answer(a) => {
            out.push('\n');
            out.push_str(&render::status(&a.status));
            for w in &a.warnings {
                let _ = writeln!(out, "warning: {w}");
            }
        }
        Message::Error(e) => {
            let _ = writeln!(out, "  error {}", e.value);
            if let Some(copy) = e.resend_copy() {
                let _ = writeln!(out, "  query to send back: {}", text::to_hex(copy));
            } else if !e.data.is_empty() {
                let _ = writeln!(out, "  data: {}", text::to_hex(&e.data));
            }
        }
        Message::MasterUplink { game_id } => {
            let _ = writeln!(out, "  master server uplink, GameID {game_id}");
        }
        Message::Other { body } => {
            let _ = writeln!(out, "  body: {}", text::to_hex(body));
        }
        _ => {}
    }
    out
}

/// Describes a GQP datagram (query or reply).
pub fn gqp_describe(input: &Input, json: bool) -> Result<String> {
    use ogp_proto::gqp;
    if let Ok(q) = gqp::decode_query(&input.bytes, 4096, 1 << 20) {
        return Ok(if json {
            format!("{}\n", serde_json::to_string_pretty(&q)?)
        } else {
            format!(
                "GQP query, {} bytes\n{}",
                input.bytes.len(),
                gqp::render_query(&q)
            )
        });
    }
    match gqp::decode_reply(&input.bytes, 1 << 20) {
        Ok(r) => Ok(if json {
            format!("{}\n", serde_json::to_string_pretty(&r)?)
        } else {
            format!(
                "GQP reply, {} bytes\n{}",
                input.bytes.len(),
                gqp::render_replies(&r.replies)
            )
        }),
        Err(e) => bail!("{}: {e}", input.name),
    }
}

/// Describes OGP v0.02 draft datagrams; fragments of a split answer are reassembled.
pub fn draft_describe(inputs: &[Input], json: bool) -> Result<String> {
    use ogp_proto::ogp_draft::{self, Message as M};
    let mut out = String::new();
    let mut reasm: ogp_proto::ogp::Reassembler<ogp_draft::Header> =
        ogp_proto::ogp::Reassembler::default();
    for input in inputs {
        let p = ogp_draft::decode(&input.bytes).with_context(|| input.name.clone())?;
        let status = match p.message {
            M::Answer(a) => Some(a.status),
            M::Fragment { body } => {
                let Some(split) = p.header.split else {
                    continue;
                };
                match reasm
                    .push_part(p.header, p.header.request_id, split, &body)
                    .with_context(|| input.name.clone())?
                {
                    Pushed::Complete { body, .. } => {
                        let mut r = ogp_proto::reader::Reader::new(&body);
                        Some(ogp_draft::decode_answer_body(&mut r)?.status)
                    }
                    _ => continue,
                }
            }
            other => {
                let d = format!("{other:?}");
                let h = &p.header;
                if json {
                    let v = json!({
                        "protocol": "ogp-draft",
                        "direction": if h.is_answer() { "answer" } else { "query" },
                        "type": h.packet_type.0,
                        "challenge": h.challenge,
                        "request_id": h.request_id,
                        "message": d,
                    });
                    let _ = writeln!(out, "{}", serde_json::to_string_pretty(&v)?);
                } else {
                    let _ = writeln!(
                        out,
                        "OGP v0.02 {} , {} bytes, type {}, challenge {:?}, request id {:?}\n  {d}",
                        if h.is_answer() { "answer" } else { "query" },
                        input.bytes.len(),
                        h.packet_type.0,
                        h.challenge,
                        h.request_id
                    );
                }
                continue;
            }
        };
        if let Some(s) = status {
            if json {
                let _ = writeln!(out, "{}", s.to_json_pretty());
            } else {
                let _ = writeln!(out, "OGP v0.02 answer\n\n{}", render::status(&s));
            }
        }
    }
    if reasm.received() > 0 {
        bail!(
            "split answer incomplete: missing packet number(s) {:?}",
            reasm.missing()
        );
    }
    Ok(out)
}

/// Describes A2S datagrams. INFO, PLAYER and RULES replies (split ones reassembled, in any
/// order) are merged into one status, printed in the state-file schema with the A2S-only
/// fields; requests and challenges are described.
pub fn a2s_describe(inputs: &[Input], json: bool) -> Result<String> {
    use ogp_proto::a2s::{self, mapping, split, Message as M};
    let mut out = String::new();
    let mut status = ogp_proto::Status::default();
    let mut any_reply = false;
    let mut reasm = split::Reassembler::new();
    let mut pending: Vec<&str> = Vec::new();
    let mut messages = Vec::new();
    for input in inputs {
        let d = a2s::decode(&input.bytes).with_context(|| input.name.clone())?;
        for w in &d.warnings {
            eprintln!("warning: {}: {w}", input.name);
        }
        match d.message {
            M::Fragment(_) => {
                pending.push(&input.name);
                match reasm
                    .push(&input.bytes)
                    .with_context(|| input.name.clone())?
                {
                    split::Pushed::Complete { reply, .. } => {
                        let d =
                            split::decode_reassembled(&reply).context("reassembled split reply")?;
                        messages.push(d.message);
                        pending.clear();
                        reasm = split::Reassembler::new();
                    }
                    split::Pushed::Duplicate => {
                        eprintln!("warning: {}: duplicate fragment ignored", input.name)
                    }
                    _ => {}
                }
            }
            m => messages.push(m),
        }
    }
    if !pending.is_empty() {
        bail!("split reply incomplete: have {}", pending.join(", "));
    }
    for m in messages {
        match m {
            M::Info(i) => {
                mapping::info_to_status(&i, &mut status);
                any_reply = true;
            }
            M::GoldSrcInfo(g) => {
                mapping::goldsrc_to_status(&g, &mut status);
                any_reply = true;
            }
            M::Players(p) => {
                mapping::players_to_status(&p, &mut status);
                any_reply = true;
            }
            M::Rules(r) => {
                mapping::rules_to_status(&r, &mut status);
                any_reply = true;
            }
            other => {
                let d = format!("{other:?}");
                if json {
                    let _ = writeln!(
                        out,
                        "{}",
                        serde_json::to_string_pretty(&json!({ "protocol": "a2s", "message": d }))?
                    );
                } else {
                    let _ = writeln!(out, "A2S {d}");
                }
            }
        }
    }
    if any_reply {
        if json {
            let _ = writeln!(out, "{}", status.to_json_pretty());
        } else {
            let _ = write!(out, "A2S reply\n\n{}", render::status(&status));
        }
    }
    Ok(out)
}
