//! Decoding captured datagrams for people and tools (`ogp decode`, the bindings'
//! `decode`): any protocol's queries and answers, fragments reassembled, each message
//! one [`Msg`] with a line for people and the fields of its JSON object
//! (`docs/decode.md`). Without a protocol each datagram's is guessed from its first
//! bytes. Sans-IO: bytes in, messages out; reading files and printing are the CLI's.

use std::fmt::Write as _;

use serde_json::{json, Map, Value};

use crate::internals::{from_hex, to_hex};
use crate::ogp::{self, query, Bits, Header, Message, Packet, Pushed, Reassembler};
use crate::result::sanitize;
use crate::{Charset, Protocol, Status};

mod error;
use error::{bail, Context as _};
pub use error::{DecodeError, Result};

mod cube2;
mod d3_ottd_mt;
mod gs1;
mod gs2_ase;
mod gs3;
mod quakeworld;
mod small_udp;
mod teeworlds;

/// One input datagram and where it came from (for messages).
pub struct Input {
    /// The argument as given, or `FILE[n]` for the n-th datagram of a JSON capture.
    pub name: String,
    /// The bytes.
    pub bytes: Vec<u8>,
}

/// One decoded message, ready to print.
pub struct Msg {
    /// Its protocol.
    pub protocol: Protocol,
    /// What it is, in snake_case (`challenge`, `info_request`, `answer`…).
    pub kind: &'static str,
    /// One line for people (sanitized when printed).
    pub line: String,
    /// The other JSON fields, after `protocol` and `kind`.
    pub fields: Map<String, Value>,
    /// An answer's status (rendered below the line; `status` in JSON).
    pub status: Option<Status>,
    /// Lines shown below the line in text (GQP replies), already sanitized.
    pub block: Option<String>,
    /// An answer's decode warnings (`warnings` in JSON, stderr in text).
    pub warnings: Vec<String>,
}

impl Msg {
    pub(crate) fn new(protocol: Protocol, kind: &'static str, line: String, fields: Value) -> Self {
        Self {
            protocol,
            kind,
            line,
            fields: match fields {
                Value::Object(m) => m,
                _ => Map::new(),
            },
            status: None,
            block: None,
            warnings: Vec::new(),
        }
    }

    pub(crate) fn answer(protocol: Protocol, line: String, fields: Value, status: Status) -> Self {
        Self {
            status: Some(status),
            ..Self::new(protocol, "answer", line, fields)
        }
    }

    /// The JSON object: `protocol`, `kind`, the fields, then `status` and `warnings` for
    /// answers.
    pub fn to_json(&self) -> Value {
        let mut m = Map::new();
        m.insert("protocol".into(), json!(self.protocol.name()));
        m.insert("kind".into(), json!(self.kind));
        m.extend(self.fields.clone());
        if let Some(s) = &self.status {
            m.insert(
                "status".into(),
                serde_json::to_value(s).unwrap_or(Value::Null),
            );
            m.insert("warnings".into(), json!(self.warnings));
        }
        Value::Object(m)
    }
}

/// What [`decode`] found: the messages, in order, and the notes on the way (lines
/// `note: …` and `warning: …` for people: a guess between look-alike protocols, a
/// duplicate fragment ignored).
#[derive(Default)]
pub struct Decoded {
    /// The messages.
    pub msgs: Vec<Msg>,
    /// The notes, unsanitized (they may quote the input).
    pub notes: Vec<String>,
}

/// Decodes `inputs` in order: all as `protocol`, or each as the protocol guessed from its
/// first bytes (consecutive datagrams of one protocol together, fragments reassembled).
/// The error is one line, unsanitized (it may quote the input).
pub fn decode(protocol: Option<Protocol>, inputs: Vec<Input>, charset: Charset) -> Result<Decoded> {
    let mut out = Decoded::default();
    for (p, group) in group(protocol, inputs, &mut out.notes)? {
        let msgs = decode_group(p, &group, charset, &mut out.notes)?;
        out.msgs.extend(msgs);
    }
    Ok(out)
}

/// [`decode`] of one datagram or a run of them given as bytes, as a JSON array of the
/// messages' objects (docs/decode.md), with a `notes` array when there are notes: what
/// the bindings' `decode(data)` returns.
pub fn decode_json(
    protocol: Option<Protocol>,
    datagrams: Vec<Vec<u8>>,
    charset: Charset,
) -> Result<String> {
    let inputs = datagrams
        .into_iter()
        .enumerate()
        .map(|(i, bytes)| Input {
            name: format!("datagram {}", i + 1),
            bytes,
        })
        .collect();
    let d = decode(protocol, inputs, charset)?;
    let msgs: Vec<Value> = d.msgs.iter().map(Msg::to_json).collect();
    let v = json!({"messages": msgs, "notes": d.notes});
    Ok(crate::result::to_json(&v)?)
}

/// Decodes consecutive datagrams of one protocol (fragments are reassembled).
fn decode_group(
    protocol: Protocol,
    inputs: &[Input],
    charset: Charset,
    notes: &mut Vec<String>,
) -> Result<Vec<Msg>> {
    match protocol {
        Protocol::A2s => a2s_msgs(inputs, charset, notes),
        Protocol::Gamespy3 => gs3::describe(inputs, charset, notes),
        Protocol::OgpDraft => draft_msgs(inputs, notes),
        Protocol::Gqp => inputs.iter().map(gqp_msg).collect(),
        Protocol::Quake3 => inputs.iter().map(quake3_msg).collect(),
        Protocol::Bedrock => inputs.iter().map(bedrock_msg).collect(),
        Protocol::Gamespy1 => gs1::describe(inputs, notes),
        Protocol::Unreal2 => inputs.iter().map(unreal2_msg).collect(),
        Protocol::Gamespy2 => inputs
            .iter()
            .map(|i| gs2_ase::gamespy2_msg(i, charset))
            .collect(),
        Protocol::Ase => inputs
            .iter()
            .map(|i| gs2_ase::ase_msg(i, charset))
            .collect(),
        Protocol::Teeworlds => inputs.iter().map(teeworlds::v6_msg).collect(),
        Protocol::Teeworlds7 => inputs.iter().map(teeworlds::v7_msg).collect(),
        Protocol::Doom3 => inputs.iter().map(d3_ottd_mt::doom3_msg).collect(),
        Protocol::Openttd => inputs.iter().map(d3_ottd_mt::openttd_msg).collect(),
        Protocol::Minetest => inputs.iter().map(d3_ottd_mt::minetest_msg).collect(),
        Protocol::Mumble => inputs.iter().map(small_udp::mumble_msg).collect(),
        Protocol::Doom => inputs.iter().map(small_udp::doom_msg).collect(),
        Protocol::Doomsday => inputs.iter().map(small_udp::doomsday_msg).collect(),
        Protocol::Samp => inputs
            .iter()
            .map(|i| small_udp::samp_msg(i, charset))
            .collect(),
        Protocol::Cube2 => inputs.iter().map(cube2::msg).collect(),
        Protocol::Quakeworld | Protocol::Quake2 | Protocol::Hexenworld => inputs
            .iter()
            .map(|i| quakeworld::msg(i, protocol))
            .collect(),
        Protocol::Netquake => inputs.iter().map(quakeworld::netquake_msg).collect(),
        _ => ogp_msgs(inputs, notes),
    }
}

/// What the guess looks for, for the error message.
pub const TRIED: &str = "tried OGP v1.01 and the v0.02 draft (FF FF FF FF \"OGP\\0\"), A2S \
    (FF FF FF FF, or FE FF FF FF split), GameSpy v3 (FE FD request, or 00/03/05/09 reply \
    with a session id), GQP (text ending with EOT or ETB), GameSpy v1 (\\key\\value \
    text), Unreal 2 (70-9F 00 00 00 then 00, 01 or 02), GameSpy v2 (a 10-byte FE FD 00 \
    request, or 00, an id and a key without splitnum), ASE (EYE1, or s), Teeworlds 0.6 \
    (FF×10 or xe…, then inf3, iext, iex+ or gie3) and Teeworlds 0.7 (21, two tokens, \
    then inf3 or gie3; 04 00 00 token packets), the Doom 3 engine (FF FF getInfo or \
    infoResponse), Minetest (4F 45 74 03), Chocolate Doom (00 0E and a version, or 00 0D), Doomsday \
    (Doomsday Beacon 1.1, or a port, a size and a zlib stream), SA-MP \
    (SAMP), Mumble (a 24-byte reply, or a 12-byte ping) and Cube 2 (an extinfo reply 00 NN \
    FF 69, or a ping reply that decodes), the Quake 1 family (QuakeWorld, Quake 2, HexenWorld: \
    FF FF FF FF n or print; NetQuake: control packets 80 00); name one with -p (OpenTTD with \
    -p openttd)";

/// Splits the inputs into runs of one protocol: all of them with `-p`, else each
/// datagram's guessed protocol.
fn group(
    protocol: Option<Protocol>,
    inputs: Vec<Input>,
    notes: &mut Vec<String>,
) -> Result<Vec<(Protocol, Vec<Input>)>> {
    if let Some(p) = protocol {
        return Ok(vec![(p, inputs)]);
    }
    let mut groups: Vec<(Protocol, Vec<Input>)> = Vec::new();
    let mut noted = false;
    for input in inputs {
        let p = guess(&input, &mut noted, notes)?;
        match groups.last_mut() {
            Some((last, g)) if *last == p => g.push(input),
            _ => groups.push((p, vec![input])),
        }
    }
    Ok(groups)
}

/// One datagram's protocol. OGP v1.01 and the v0.02 draft share their first eight bytes:
/// v1.01 is preferred, the draft taken when only it decodes the datagram (into a Type it
/// defines).
fn guess(input: &Input, noted: &mut bool, notes: &mut Vec<String>) -> Result<Protocol> {
    let name = &input.name;
    match crate::detect::guess(&input.bytes) {
        Some(Protocol::Ogp) => {
            let v1 = ogp::decode(&input.bytes).is_ok();
            // Only a Type the draft defines counts: a broken v1.01 datagram often reads
            // as a draft datagram of some unknown Type.
            let draft = crate::ogp_draft::decode(&input.bytes)
                .is_ok_and(|p| !matches!(p.message, crate::ogp_draft::Message::Other { .. }));
            if draft && !v1 {
                notes.push(format!(
                    "note: {name}: not OGP v1.01, decoded as the OGP v0.02 draft"
                ));
                return Ok(Protocol::OgpDraft);
            }
            if draft && !*noted {
                notes.push(format!(
                    "note: {name}: OGP v1.01 and the v0.02 draft look alike; decoded as v1.01 (-p ogp-draft for the draft)"
                ));
                *noted = true;
            }
            Ok(Protocol::Ogp)
        }
        Some(p) => Ok(p),
        None => bail!("{name}: not a datagram of a known protocol: {TRIED}"),
    }
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
    from_hex(&cleaned)
}

/// The datagrams of a JSON capture, in order: `datagrams_in_order` when present, else
/// every list in `responses`; `query_hex` then `answers_hex`; each `rules` entry's
/// `match_hex` then `reply_hex`.
pub fn capture_datagrams(name: &str, v: &Value) -> Result<Vec<Input>> {
    let mut hex: Vec<&Value> = Vec::new();
    if let Some(order) = v.get("datagrams_in_order") {
        hex.extend(list(Some(order)));
    } else if let Some(r) = v.get("responses").and_then(Value::as_object) {
        for l in r.values() {
            hex.extend(list(Some(l)));
        }
    }
    hex.extend(v.get("query_hex"));
    hex.extend(list(v.get("answers_hex")));
    for rule in list(v.get("rules")) {
        hex.extend(rule.get("match_hex"));
        hex.extend(list(rule.get("reply_hex")));
    }
    if hex.is_empty() {
        bail!(
            "{}: JSON without datagrams (looked for datagrams_in_order, responses, query_hex, answers_hex and rules)",
            sanitize(name)
        );
    }
    hex.iter()
        .enumerate()
        .map(|(i, h)| {
            let name = format!("{name}[{i}]");
            match h.as_str().and_then(parse_hex) {
                Some(bytes) => Ok(Input { name, bytes }),
                None => bail!("{}: not a hex string", sanitize(&name)),
            }
        })
        .collect()
}

/// The elements of a JSON array (none when it is missing or not an array).
fn list(v: Option<&Value>) -> Vec<&Value> {
    v.and_then(Value::as_array)
        .map(|a| a.iter().collect())
        .unwrap_or_default()
}

/// An argument cut to 24 characters for messages.
pub fn short(arg: &str) -> String {
    if arg.chars().count() > 24 {
        format!("{}…", arg.chars().take(24).collect::<String>())
    } else {
        arg.to_string()
    }
}

/// A string in double quotes, escaped as in JSON (control characters as `\uXXXX`, as
/// every JSON output escapes them).
pub fn quote(s: &str) -> String {
    crate::result::to_json(s).unwrap_or_default()
}

/// `: hex` for a body, or nothing when it is empty.
fn body_text(body: &[u8]) -> String {
    if body.is_empty() {
        String::new()
    } else {
        format!(": {}", to_hex(body))
    }
}

fn hex_json(b: &[u8]) -> Value {
    json!(to_hex(b))
}

/// ` (a, b)` or nothing.
fn paren(facts: &[String]) -> String {
    if facts.is_empty() {
        String::new()
    } else {
        format!(" ({})", facts.join(", "))
    }
}

fn plural(n: usize, one: &str, many: &str) -> String {
    if n == 1 {
        format!("1 {one}")
    } else {
        format!("{n} {many}")
    }
}

/// The OGP messages of all inputs.
struct Items {
    /// One entry per logical message (a split answer's fragments become one).
    pub items: Vec<Item>,
}

/// One decoded message.
struct Item {
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
fn decode_all(inputs: &[Input], notes: &mut Vec<String>) -> Result<Items> {
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
                    let answer = ogp::decode_answer_body(&body, header.utf8())
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
                    frag_sources.pop();
                    frag_sizes.pop();
                    notes.push(format!(
                        "warning: {}: duplicate split packet ignored",
                        input.name
                    ));
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
    Ok(Items { items })
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

// ---- OGP v1.01 ----

fn ogp_msgs(inputs: &[Input], notes: &mut Vec<String>) -> Result<Vec<Msg>> {
    Ok(decode_all(inputs, notes)?
        .items
        .into_iter()
        .map(ogp_msg)
        .collect())
}

/// The sections a query asks for, by their spec names.
fn sections(request: Bits) -> Vec<&'static str> {
    [
        (query::request::SERVER_INFO, "ServerInfo"),
        (query::request::TEAM_LIST, "TeamList"),
        (query::request::PLAYER_LIST, "PlayerList"),
        (query::request::RULE_LIST, "RuleList"),
        (query::request::ADDON_LIST, "AddOnList"),
        (query::request::LIMIT_LIST, "LimitList"),
        (query::request::COLORED_NAMES, "ColoredNames"),
    ]
    .iter()
    .filter(|(b, _)| request.contains(*b))
    .map(|(_, n)| *n)
    .collect()
}

fn header_json(h: &Header, head_size: Option<u8>, sizes: &[usize]) -> Map<String, Value> {
    let mut m = Map::new();
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
    m.insert("head_flags".into(), hex_json(&h.flags.to_wire()));
    m.insert("utf8".into(), json!(h.utf8()));
    m.insert("challenge".into(), json!(h.challenge));
    m.insert("request_id".into(), json!(h.request_id));
    if let Some(mbp) = h.max_bytes_per_packet {
        m.insert("max_bytes_per_packet".into(), json!(mbp));
    }
    if let Some(s) = h.split {
        m.insert("split_count".into(), json!(s.count));
    }
    m.insert("size".into(), json!(sizes.iter().sum::<usize>()));
    if sizes.len() > 1 {
        m.insert("packet_sizes".into(), json!(sizes));
    }
    m
}

/// The facts of an OGP (or draft) header's optional fields for the text line:
/// challenge, request id, packet size.
fn id_facts(
    challenge: Option<u32>,
    request_id: Option<u32>,
    max_bytes: Option<impl std::fmt::Display>,
) -> Vec<String> {
    let mut facts = Vec::new();
    if let Some(c) = challenge {
        facts.push(format!("challenge {c:#010x}"));
    }
    if let Some(id) = request_id {
        facts.push(format!("request id {id}"));
    }
    if let Some(m) = max_bytes {
        facts.push(format!("max {m} bytes/packet"));
    }
    facts
}

/// The header's facts for the text line: challenge, request id, packet size, charset.
fn header_facts(h: &Header, sizes: &[usize]) -> Vec<String> {
    let mut facts = id_facts(h.challenge, h.request_id, h.max_bytes_per_packet);
    if h.utf8() {
        facts.push(
            if h.is_answer() {
                "UTF-8"
            } else {
                "accepts UTF-8"
            }
            .into(),
        );
    } else if h.is_answer() {
        facts.push("Latin-1".into());
    }
    let total: usize = sizes.iter().sum();
    if sizes.len() > 1 {
        facts.push(format!("{total} bytes in {} packets", sizes.len()));
    } else {
        facts.push(format!("{total} bytes"));
    }
    facts
}

fn ogp_msg(item: Item) -> Msg {
    let h = &item.header;
    let mut f = header_json(h, item.head_size, &item.sizes);
    let facts = paren(&header_facts(h, &item.sizes));
    let dir = if h.is_answer() { "answer" } else { "query" };
    let (kind, line) = match item.message {
        Message::Ping => ("ping", format!("OGP ping {dir}{facts}")),
        Message::Probe => (
            "challenge_request",
            format!("OGP challenge request: a default query with no body{facts}"),
        ),
        Message::Query(q) => {
            f.insert("asks".into(), Value::Object(describe_query(&q.query)));
            f.insert("trailing_bytes".into(), json!(q.trailing));
            let s = sections(q.query.request);
            let s = if s.is_empty() {
                "nothing".to_string()
            } else {
                s.join(", ")
            };
            ("query", format!("OGP query: {s}{facts}"))
        }
        Message::Answer(a) => {
            let mut m = Msg::answer(
                Protocol::Ogp,
                format!("OGP answer{facts}"),
                Value::Object(f),
                a.status,
            );
            m.warnings = a
                .warnings
                .iter()
                .map(|w| format!("{}: {w}", item.sources))
                .collect();
            return m;
        }
        Message::Error(e) => {
            f.insert("error_value".into(), json!(e.value.0));
            f.insert(
                "error".into(),
                json!(e.value.description().unwrap_or("unknown")),
            );
            let mut line = format!(
                "OGP error {}: {}{facts}",
                e.value.0,
                e.value.description().unwrap_or("unknown")
            );
            if let Some(copy) = e.resend_copy() {
                f.insert("resend".into(), hex_json(copy));
                let _ = write!(line, "; query to send back: {}", to_hex(copy));
            } else {
                f.insert("data".into(), hex_json(&e.data));
            }
            ("error", line)
        }
        Message::MasterUplink { game_id } => {
            f.insert("game_id".into(), json!(game_id));
            (
                "master_uplink",
                format!("OGP master server uplink, GameID {game_id}{facts}"),
            )
        }
        Message::Other { body } => {
            f.insert("body".into(), hex_json(&body));
            (
                "other",
                format!(
                    "OGP {dir} of unknown type {}{facts}{}",
                    h.packet_type.0,
                    body_text(&body)
                ),
            )
        }
        _ => (
            "other",
            format!("OGP {dir} of type {}{facts}", h.packet_type.0),
        ),
    };
    Msg::new(Protocol::Ogp, kind, line, Value::Object(f))
}

// ---- OGP v0.02 draft ----

const DRAFT_REQUESTS: &[(Bits, &str)] = {
    use crate::ogp_draft::query::requests as r;
    &[
        (r::NO_STATIC_DATA, "no_static_data"),
        (r::INFO, "info"),
        (r::TEAM_LIST, "team_list"),
        (r::PLAYER_LIST, "player_list"),
        (r::LIMITS, "limits"),
        (r::MODS, "mods"),
        (r::RULES, "rules"),
    ]
};

const DRAFT_PLAYER_FIELDS: &[(Bits, &str)] = {
    use crate::ogp_draft::query::player_fields as p;
    &[
        (p::SLOT, "slot"),
        (p::NAME, "name"),
        (p::FRAGS, "frags"),
        (p::ID, "id"),
        (p::WONID, "wonid"),
        (p::PING, "ping"),
        (p::LOSS, "loss"),
        (p::TEAM, "team"),
        (p::MODEL, "model"),
        (p::RATE, "rate"),
        (p::DEAD, "dead"),
    ]
};

fn draft_msgs(inputs: &[Input], notes: &mut Vec<String>) -> Result<Vec<Msg>> {
    use crate::ogp_draft::{self, Message as M};
    const P: Protocol = Protocol::OgpDraft;
    let mut msgs = Vec::new();
    let mut reasm: Reassembler<ogp_draft::Header> = Reassembler::default();
    let mut pending: Vec<&str> = Vec::new();
    let mut sizes: Vec<usize> = Vec::new();
    for input in inputs {
        let p = ogp_draft::decode(&input.bytes).with_context(|| input.name.clone())?;
        let h = p.header;
        let dir = if h.is_answer() { "answer" } else { "query" };
        let mut f = Map::new();
        f.insert("direction".into(), json!(dir));
        f.insert("type".into(), json!(h.packet_type.0));
        f.insert("challenge".into(), json!(h.challenge));
        f.insert("request_id".into(), json!(h.request_id));
        if let Some(m) = h.max_bytes_per_packet {
            f.insert("max_bytes_per_packet".into(), json!(m));
        }
        let mut facts = id_facts(h.challenge, h.request_id, h.max_bytes_per_packet);
        let (answer, size) = match p.message {
            M::Answer(a) => (*a, input.bytes.len()),
            M::Fragment { body } => {
                let Some(split) = h.split else { continue };
                pending.push(&input.name);
                sizes.push(input.bytes.len());
                match reasm
                    .push_part(h, h.request_id, split, &body)
                    .with_context(|| input.name.clone())?
                {
                    Pushed::Complete { body, .. } => {
                        let a = ogp_draft::decode_answer_body(&body)
                            .context("reassembled split answer")?;
                        pending.clear();
                        f.insert("packet_sizes".into(), json!(sizes));
                        let total = std::mem::take(&mut sizes).into_iter().sum();
                        (a, total)
                    }
                    Pushed::Duplicate => {
                        pending.pop();
                        sizes.pop();
                        notes.push(format!(
                            "warning: {}: duplicate split packet ignored",
                            input.name
                        ));
                        continue;
                    }
                    Pushed::Incomplete => continue,
                }
            }
            other => {
                f.insert("size".into(), json!(input.bytes.len()));
                facts.push(format!("{} bytes", input.bytes.len()));
                let facts = paren(&facts);
                let (kind, line) = match other {
                    M::Banned => ("banned", format!("OGP v0.02 answer: banned{facts}")),
                    M::None if h.is_answer() => (
                        "challenge",
                        format!("OGP v0.02 challenge answer (type None){facts}"),
                    ),
                    M::None => ("none", format!("OGP v0.02 query of type None{facts}")),
                    M::Probe => (
                        "challenge_request",
                        format!("OGP v0.02 challenge request: a default query with no body{facts}"),
                    ),
                    M::Query(q) => {
                        let req = names(q.query.requests, DRAFT_REQUESTS);
                        f.insert("requests".into(), json!(req));
                        f.insert(
                            "player_fields".into(),
                            json!(names(q.query.player_fields, DRAFT_PLAYER_FIELDS)),
                        );
                        f.insert("trailing_bytes".into(), json!(q.trailing));
                        (
                            "query",
                            format!("OGP v0.02 query: {}{facts}", req.join(", ")),
                        )
                    }
                    M::Other { body } => {
                        f.insert("body".into(), hex_json(&body));
                        (
                            "other",
                            format!(
                                "OGP v0.02 {dir} of type {}{facts}{}",
                                h.packet_type.0,
                                body_text(&body)
                            ),
                        )
                    }
                    _ => (
                        "other",
                        format!("OGP v0.02 {dir} of type {}{facts}", h.packet_type.0),
                    ),
                };
                msgs.push(Msg::new(P, kind, line, Value::Object(f)));
                continue;
            }
        };
        f.insert("size".into(), json!(size));
        facts.push(format!("{size} bytes"));
        let mut m = Msg::answer(
            P,
            format!("OGP v0.02 answer{}", paren(&facts)),
            Value::Object(f),
            answer.status,
        );
        m.warnings = answer
            .warnings
            .iter()
            .map(|w| format!("{}: {w}", input.name))
            .collect();
        msgs.push(m);
    }
    if reasm.received() > 0 {
        let missing: Vec<String> = reasm.missing().iter().map(u8::to_string).collect();
        bail!(
            "split answer incomplete: have {}, missing packet number(s) {}",
            pending.join(", "),
            missing.join(", ")
        );
    }
    Ok(msgs)
}

// ---- A2S ----

/// Describes A2S datagrams, in order. INFO, PLAYER and RULES replies (split ones
/// reassembled, in any order) are merged into one status, the last message.
fn a2s_msgs(inputs: &[Input], charset: Charset, notes: &mut Vec<String>) -> Result<Vec<Msg>> {
    use crate::a2s::{self, mapping, split, Message as M, PingReply, Request as R};
    const P: Protocol = Protocol::A2s;
    let mut msgs = Vec::new();
    let mut status = Status::default();
    let mut replies: Vec<&'static str> = Vec::new();
    let mut warnings = Vec::new();
    let mut reasm = split::Reassembler::new();
    let mut pending: Vec<&str> = Vec::new();
    let mut datagrams = 0usize;
    for input in inputs {
        let d = a2s::decode_with(&input.bytes, charset).with_context(|| input.name.clone())?;
        let name = &input.name;
        let w: Vec<String> = d.warnings.iter().map(|w| format!("{name}: {w}")).collect();
        let message = match d.message {
            M::Fragment(_) => {
                pending.push(name);
                warnings.extend(w);
                match reasm.push(&input.bytes).with_context(|| name.clone())? {
                    split::Pushed::Complete { reply, .. } => {
                        let d = split::decode_reassembled_with(&reply, charset)
                            .context("reassembled split reply")?;
                        warnings.extend(d.warnings.iter().map(|w| format!("{name}: {w}")));
                        datagrams += pending.len();
                        pending.clear();
                        reasm = split::Reassembler::new();
                        d.message
                    }
                    split::Pushed::Duplicate => {
                        pending.pop();
                        notes.push(format!("warning: {name}: duplicate fragment ignored"));
                        continue;
                    }
                    _ => continue,
                }
            }
            m => {
                if matches!(
                    m,
                    M::Info(_) | M::GoldSrcInfo(_) | M::Players(_) | M::Rules(_)
                ) {
                    warnings.extend(w);
                    datagrams += 1;
                } else {
                    notes.extend(w.into_iter().map(|w| format!("warning: {w}")));
                }
                m
            }
        };
        let size = input.bytes.len();
        let challenge_text = |c: Option<u32>| match c {
            None => "no challenge".to_string(),
            Some(u32::MAX) => "asks for a challenge".to_string(),
            Some(c) => format!("challenge {c:#010x}"),
        };
        let (kind, line, fields) = match message {
            M::Info(i) => {
                mapping::info_to_status(&i, &mut status);
                replies.push("info");
                continue;
            }
            M::GoldSrcInfo(g) => {
                mapping::goldsrc_to_status(&g, &mut status);
                replies.push("info");
                continue;
            }
            M::Players(p) => {
                mapping::players_to_status(&p, &mut status);
                replies.push("players");
                continue;
            }
            M::Rules(r) => {
                mapping::rules_to_status(&r, &mut status);
                replies.push("rules");
                continue;
            }
            M::Request(r) => {
                let (kind, what, challenge, trailing) = match r {
                    R::Info {
                        challenge,
                        trailing,
                    } => ("info_request", "INFO", challenge, trailing),
                    R::Player {
                        challenge,
                        trailing,
                    } => ("player_request", "PLAYER", challenge, trailing),
                    R::Rules {
                        challenge,
                        trailing,
                    } => ("rules_request", "RULES", challenge, trailing),
                    R::GetChallenge => {
                        msgs.push(Msg::new(
                            P,
                            "challenge_request",
                            format!("A2S challenge request (A2S_SERVERQUERY_GETCHALLENGE, {size} bytes)"),
                            json!({ "size": size }),
                        ));
                        continue;
                    }
                    R::Ping => {
                        msgs.push(Msg::new(
                            P,
                            "ping",
                            format!("A2S ping (A2A_PING, {size} bytes)"),
                            json!({ "size": size }),
                        ));
                        continue;
                    }
                };
                (
                    kind,
                    format!(
                        "A2S {what} request ({}, {size} bytes)",
                        challenge_text(challenge)
                    ),
                    json!({ "challenge": challenge, "trailing_bytes": trailing, "size": size }),
                )
            }
            M::Challenge(c) => (
                "challenge",
                format!("A2S challenge {:#010x}", c.challenge),
                json!({ "challenge": c.challenge, "size": size }),
            ),
            M::PingReply(r) => {
                let (engine, content) = match &r {
                    PingReply::GoldSrc => ("goldsrc", ""),
                    PingReply::Source => ("source", PingReply::SOURCE_CONTENT),
                    PingReply::Other(t) => ("other", t.as_str()),
                };
                (
                    "ping_reply",
                    format!(
                        "A2S ping reply ({engine} style, content {})",
                        quote(content)
                    ),
                    json!({ "engine": engine, "content": content, "size": size }),
                )
            }
            _ => (
                "other",
                format!("A2S message of an unknown kind ({size} bytes)"),
                json!({ "size": size }),
            ),
        };
        msgs.push(Msg::new(P, kind, line, fields));
    }
    if !pending.is_empty() {
        bail!("split reply incomplete: have {}", pending.join(", "));
    }
    if !replies.is_empty() {
        let upper: Vec<&str> = replies
            .iter()
            .map(|r| match *r {
                "info" => "INFO",
                "players" => "PLAYER",
                _ => "RULES",
            })
            .collect();
        let mut m = Msg::answer(
            P,
            format!(
                "A2S reply: {} ({})",
                upper.join(", "),
                plural(datagrams, "datagram", "datagrams")
            ),
            json!({ "replies": replies, "datagrams": datagrams }),
            status,
        );
        m.warnings = warnings;
        msgs.push(m);
    }
    Ok(msgs)
}

// ---- GQP ----

/// Describes a GQP datagram (query or reply).
/// A Quake III query (`getinfo`, `getstatus`) or reply (`infoResponse`,
/// `statusResponse`, mapped to the status model).
fn quake3_msg(input: &Input) -> Result<Msg> {
    use crate::quake3::{mapping, wire};
    const P: Protocol = Protocol::Quake3;
    let size = input.bytes.len();
    if let Ok(q) = wire::decode_request(&input.bytes) {
        let challenge = q.challenge.as_ref().map(|c| c.to_string());
        let line = format!(
            "Quake III {}{} ({size} bytes)",
            q.command,
            challenge
                .as_deref()
                .map(|c| format!(", challenge {}", quote(c)))
                .unwrap_or_default()
        );
        let fields = json!({"command": q.command.word(), "challenge": challenge, "size": size});
        return Ok(Msg::new(P, "query", line, fields));
    }
    let d = wire::decode_reply(&input.bytes).with_context(|| input.name.clone())?;
    let mut status = Status::default();
    mapping::reply_to_status(&d.reply, &mut status);
    let line = format!(
        "Quake III {}: {} variables, {} ({size} bytes)",
        d.reply.kind.word(),
        d.reply.vars.len(),
        plural(d.reply.players.len(), "player", "players"),
    );
    let fields = json!({
        "reply": d.reply.kind.word(),
        "variables": d.reply.vars.len(),
        "players": d.reply.players.len(),
        "size": size,
    });
    let mut m = Msg::answer(P, line, fields, status);
    m.warnings = d.warnings.iter().map(ToString::to_string).collect();
    Ok(m)
}

/// A Bedrock unconnected ping or pong (mapped to the status model).
fn bedrock_msg(input: &Input) -> Result<Msg> {
    use crate::bedrock::{mapping, wire};
    const P: Protocol = Protocol::Bedrock;
    let size = input.bytes.len();
    if let Ok(p) = wire::Ping::decode(&input.bytes) {
        let line = format!(
            "Bedrock unconnected ping{}, time {}, client GUID {:016x} ({size} bytes)",
            if p.open_only {
                " (open connections)"
            } else {
                ""
            },
            p.time,
            p.client_guid
        );
        let fields = json!({"time": p.time, "client_guid": p.client_guid, "open_only": p.open_only, "size": size});
        return Ok(Msg::new(P, "query", line, fields));
    }
    let d = wire::Pong::decode(&input.bytes).with_context(|| input.name.clone())?;
    let a = wire::Advertisement::parse(&d.pong.advertisement);
    let status = mapping::pong_to_status(&d.pong);
    let line = format!(
        "Bedrock unconnected pong: {}, time {}, server GUID {:016x} ({size} bytes)",
        plural(a.fields.len(), "field", "fields"),
        d.pong.time,
        d.pong.server_guid
    );
    let fields = json!({
        "time": d.pong.time,
        "server_guid": d.pong.server_guid,
        "advertisement": d.pong.advertisement.as_str(),
        "size": size,
    });
    let mut m = Msg::answer(P, line, fields, status);
    m.warnings = d.warnings.iter().map(ToString::to_string).collect();
    Ok(m)
}

/// Without the `gqp` feature there is no GQP codec to decode with.
#[cfg(not(feature = "gqp"))]
fn gqp_msg(input: &Input) -> Result<Msg> {
    bail!(
        "{}: GQP is not in this build (ogp-proto's feature `gqp`)",
        input.name
    )
}

#[cfg(feature = "gqp")]
fn gqp_msg(input: &Input) -> Result<Msg> {
    use crate::gqp;
    const P: Protocol = Protocol::Gqp;
    let size = input.bytes.len();
    let object = |v: Value, size: usize| {
        let mut m = match v {
            Value::Object(m) => m,
            _ => Map::new(),
        };
        m.insert("size".into(), json!(size));
        Value::Object(m)
    };
    let query = gqp::decode_query(&input.bytes, 4096, 1 << 20);
    if let Ok(q) = query {
        let commands: Vec<String> = q
            .commands
            .iter()
            .map(|c| {
                let mut s = c.name.to_string();
                for a in &c.args {
                    let _ = write!(s, " {}", quote(a));
                }
                s
            })
            .collect();
        let line = format!(
            "GQP query: {} ({}{size} bytes)",
            commands.join("; "),
            if q.encoding.is_plain() {
                String::new()
            } else {
                format!("{}, ", q.encoding.name())
            }
        );
        return Ok(Msg::new(
            P,
            "query",
            line,
            object(serde_json::to_value(&q)?, size),
        ));
    }
    match gqp::decode_reply(&input.bytes, 1 << 20) {
        Ok(r) => {
            let block: String = gqp::render_replies(&r.replies)
                .lines()
                .map(|l| format!("  {}\n", sanitize(l)))
                .collect();
            let names: Vec<&str> = r.replies.iter().map(|r| r.name.as_str()).collect();
            let line = format!(
                "GQP reply: {} ({}, {size} bytes{})",
                names.join(", "),
                plural(r.replies.len(), "reply", "replies"),
                if r.last { "" } else { ", more follow" }
            );
            let mut m = Msg::new(P, "reply", line, object(serde_json::to_value(&r)?, size));
            m.block = Some(block);
            Ok(m)
        }
        Err(e) => match query {
            Err(qe) => bail!(
                "{}: neither a GQP query ({qe}) nor a GQP reply ({e})",
                input.name
            ),
            Ok(_) => bail!("{}: {e}", input.name),
        },
    }
}

/// An Unreal 2 request, or one datagram of a reply (mapped to the status model on its
/// own: a rules or players datagram may be one of several).
fn unreal2_msg(input: &Input) -> Result<Msg> {
    use crate::unreal2::{mapping, wire};
    const P: Protocol = Protocol::Unreal2;
    let size = input.bytes.len();
    if let Some(q) = wire::decode_request(&input.bytes) {
        let line = format!(
            "Unreal 2 {} request, version {:#x} ({size} bytes)",
            q.kind, q.version
        );
        let fields = json!({"request": q.kind.word(), "version": q.version, "size": size});
        return Ok(Msg::new(P, "query", line, fields));
    }
    let reply = wire::decode_reply(&input.bytes, &wire::DecodeLimits::default())
        .with_context(|| input.name.clone())?;
    let (line, fields, status) = match &reply {
        wire::Reply::Info(i) => {
            let e = i.extra(None);
            let line = format!(
                "Unreal 2 server info, version {:#x}{} ({size} bytes)",
                i.version,
                if e.waves.is_some() {
                    ", Killing Floor's wave fields"
                } else {
                    ""
                }
            );
            let fields = json!({
                "reply": "server info",
                "version": i.version,
                "killing_floor_layout": e.waves.is_some(),
                "unread": e.unread,
                "size": size,
            });
            (line, fields, mapping::to_status(Some(i), None, None))
        }
        wire::Reply::Rules(r) => {
            let mutators = r
                .iter()
                .filter(|(k, _)| k.eq_ignore_ascii_case("mutator"))
                .count();
            let line = format!(
                "Unreal 2 rules: {}, {} ({size} bytes)",
                plural(r.len(), "rule", "rules"),
                plural(mutators, "mutator", "mutators")
            );
            let fields =
                json!({"reply": "rules", "rules": r.len(), "mutators": mutators, "size": size});
            (line, fields, mapping::to_status(None, Some(r), None))
        }
        wire::Reply::Players(p) => {
            let line = format!(
                "Unreal 2 players: {} ({size} bytes)",
                plural(p.len(), "entry", "entries")
            );
            let fields = json!({"reply": "players", "entries": p.len(), "size": size});
            (line, fields, mapping::to_status(None, None, Some(p)))
        }
    };
    Ok(Msg::answer(P, line, fields, status))
}
