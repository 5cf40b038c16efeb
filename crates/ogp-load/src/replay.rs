//! The replay farms of `ogp-load scan`: loopback servers that answer a family's request
//! by replaying a real server's reply from the project's captures
//! (`crates/ogp-proto/tests/data/`), with the parts a real server echoes (a token, a
//! challenge, a header, an ident) taken from the request, so that both `ogp scan` and
//! qstat accept them. Handshakes are answered statelessly: Teeworlds 0.7's server token
//! is a keyed hash of the requester's address, checked when the info request brings it
//! back, as a real server checks its own.
//!
//! One table ([`FAMILIES`]) says per family: its name for `ogp scan -p` and for the
//! farm, its captures, how to answer, what a scanner must report for each capture (ours
//! and qstat's), and qstat's type where qstat reads the family. Each socket replays the
//! capture of its place in the whole list (`index % captures`).

use std::net::{IpAddr, SocketAddr};

use anyhow::{ensure, Context as _, Result};

/// What a scanner must report for one target: compared field by field (`None`: the
/// field is not compared).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Want {
    pub(crate) host: Option<&'static str>,
    pub(crate) map: Option<&'static str>,
    pub(crate) slot_max: Option<u64>,
    pub(crate) players: Option<u64>,
}

/// One capture: its datagrams by name, and what each scanner must make of it.
pub(crate) struct Capture {
    /// Datagrams by name (`reply`, `iext`, a SA-MP opcode…), decoded once.
    pub(crate) parts: Vec<(&'static str, Vec<u8>)>,
    pub(crate) ours: Want,
    /// For qstat (its `-raw ,` server line: map, max players, players), when qstat
    /// reads the family.
    pub(crate) qstat: Option<Want>,
}

impl Capture {
    fn part(&self, name: &str) -> Option<&[u8]> {
        self.parts
            .iter()
            .find(|(n, _)| *n == name)
            .map(|(_, d)| d.as_slice())
    }
}

/// qstat's reading of a family.
pub(crate) struct Qstat {
    /// The type word of its list file (`QWS`), and its flag for output (`-qws`).
    pub(crate) kind: &'static str,
    pub(crate) flag: &'static str,
    /// Added to a farm port for qstat's list (Cube 2: qstat is given the game port and
    /// asks the port above it), and taken off again in its output.
    pub(crate) port_offset: i32,
}

/// A family served by replay.
pub(crate) struct ReplayFamily {
    /// For output: `QuakeWorld`.
    pub(crate) label: &'static str,
    /// The name of `ogp scan`'s list, `--family` and the farm's `--mix`.
    pub(crate) protocol: &'static str,
    /// The second octet of the farm's addresses.
    pub(crate) net: u8,
    pub(crate) qstat: Option<Qstat>,
    /// Loads the captures (at start, in the farm and in the checker).
    pub(crate) load: fn() -> Result<Vec<Capture>>,
    /// The answer to one datagram from `from`, appended to `out` (nothing: ignored).
    pub(crate) answer: fn(&Capture, &[u8], SocketAddr, &mut Vec<Vec<u8>>),
    /// Round trips per target of `ogp scan` against this farm, and why it may be slower
    /// than one exchange (for the report).
    pub(crate) shape: &'static str,
}

fn hex(s: &str) -> Result<Vec<u8>> {
    ensure!(s.len() % 2 == 0, "odd hex length");
    (0..s.len())
        .step_by(2)
        .map(|i| {
            s.get(i..i + 2)
                .and_then(|b| u8::from_str_radix(b, 16).ok())
                .context("bad hex")
        })
        .collect()
}

/// The `responses` of a capture JSON: each name's first (or only) datagram.
fn json_parts(text: &str, names: &[&'static str]) -> Result<Vec<(&'static str, Vec<u8>)>> {
    let v: serde_json::Value = serde_json::from_str(text)?;
    let r = &v["responses"];
    names
        .iter()
        .map(|n| {
            let x = match &r[*n] {
                serde_json::Value::Array(a) => a.first().and_then(|x| x.as_str()),
                other => other.as_str(),
            };
            Ok((*n, hex(x.with_context(|| format!("no response {n}"))?)?))
        })
        .collect()
}

/// The datagram `name` of a capture JSON's `requests`.
fn json_request(text: &str, name: &str) -> Result<Vec<u8>> {
    let v: serde_json::Value = serde_json::from_str(text)?;
    hex(v["requests"][name]
        .as_str()
        .with_context(|| format!("no request {name}"))?)
}

const QW_STATUS: &[u8] = include_bytes!("../../ogp-proto/tests/data/quake1/mvdsv_ktx_status23.bin");

const fn want(
    host: Option<&'static str>,
    map: Option<&'static str>,
    slot_max: u64,
    players: u64,
) -> Want {
    Want {
        host,
        map,
        slot_max: Some(slot_max),
        players: Some(players),
    }
}

// ---------------------------------------------------------------------------------
// QuakeWorld, Quake 2, HexenWorld: `status`, one reply datagram.

fn load_quakeworld() -> Result<Vec<Capture>> {
    Ok(vec![Capture {
        parts: vec![("status", QW_STATUS.to_vec())],
        ours: want(Some("QW test"), Some("start"), 6, 1),
        qstat: Some(want(None, Some("start"), 6, 1)),
    }])
}

/// QuakeWorld and Quake 2: `FF FF FF FF status…` gets the capture's reply.
fn answer_status(c: &Capture, q: &[u8], _: SocketAddr, out: &mut Vec<Vec<u8>>) {
    if q.strip_prefix(&[0xff; 4][..])
        .is_some_and(|b| b.starts_with(b"status"))
    {
        out.extend(c.part("status").map(<[u8]>::to_vec));
    }
}

/// HexenWorld: the same after a fifth `FF`.
fn answer_hexenworld(c: &Capture, q: &[u8], _: SocketAddr, out: &mut Vec<Vec<u8>>) {
    if q.strip_prefix(&[0xff; 5][..])
        .is_some_and(|b| b.starts_with(b"status"))
    {
        out.extend(c.part("status").map(<[u8]>::to_vec));
    }
}

fn load_quake2() -> Result<Vec<Capture>> {
    Ok(vec![
        Capture {
            parts: vec![(
                "status",
                include_bytes!("../../ogp-proto/tests/data/quake2/r1q2_tastyspleen_status.bin")
                    .to_vec(),
            )],
            ours: want(Some("tastyspleen.net::dm"), Some("q2dm6"), 17, 11),
            qstat: Some(want(None, Some("q2dm6"), 17, 11)),
        },
        Capture {
            parts: vec![(
                "status",
                include_bytes!("../../ogp-proto/tests/data/quake2/r1q2_lithium_status.bin")
                    .to_vec(),
            )],
            ours: want(Some("Clanworld's Lithium-DM #1"), Some("q2dm1"), 32, 10),
            qstat: Some(want(None, Some("q2dm1"), 32, 10)),
        },
    ])
}

/// HexenWorld: the project has no capture of a HexenWorld server; its reply is
/// QuakeWorld's after a fifth `FF` (`quakeworld::wire::Dialect::HexenWorld`, as qstat
/// reads it), so the MVDSV capture is replayed with one.
fn load_hexenworld() -> Result<Vec<Capture>> {
    let mut d = vec![0xff];
    d.extend_from_slice(QW_STATUS);
    Ok(vec![Capture {
        parts: vec![("status", d)],
        ours: want(Some("QW test"), Some("start"), 6, 1),
        qstat: Some(want(None, Some("start"), 6, 1)),
    }])
}

// ---------------------------------------------------------------------------------
// Teeworlds 0.6 / DDNet: `gie3` with a token, answered `iext` (DDNet's extended
// request: the 24-bit token) or `inf3` (a vanilla request, qstat's: the token byte).

const DDNET: &str = include_str!("../../ogp-proto/tests/data/teeworlds/ddnet-16.4-real.json");

fn load_teeworlds() -> Result<Vec<Capture>> {
    Ok(vec![Capture {
        parts: json_parts(DDNET, &["iext", "inf3"])?,
        ours: want(Some("DDNet capture"), Some("Tsunami"), 12, 0),
        qstat: Some(want(None, Some("Tsunami"), 12, 0)),
    }])
}

/// `reply` (`FF`×10, a 4-byte word, the token as a decimal string, NUL, the rest) with
/// its token replaced.
fn with_token6(reply: &[u8], token: u32) -> Option<Vec<u8>> {
    let head = reply.get(..14)?;
    let rest = reply.get(14..)?;
    let nul = rest.iter().position(|b| *b == 0)?;
    let mut d = head.to_vec();
    d.extend_from_slice(token.to_string().as_bytes());
    d.extend_from_slice(rest.get(nul..)?);
    Some(d)
}

fn answer_teeworlds(c: &Capture, q: &[u8], _: SocketAddr, out: &mut Vec<Vec<u8>>) {
    if q.get(6..14) != Some(b"\xff\xff\xff\xffgie3".as_slice()) {
        return;
    }
    let (Some(&hi), Some(&mid), Some(&low)) = (q.get(2), q.get(3), q.get(14)) else {
        return;
    };
    let reply = if q.starts_with(b"xe") {
        c.part("iext")
            .and_then(|r| with_token6(r, u32::from_be_bytes([0, hi, mid, low])))
    } else if q.starts_with(&[0xff; 6]) {
        c.part("inf3").and_then(|r| with_token6(r, u32::from(low)))
    } else {
        None
    };
    out.extend(reply);
}

// ---------------------------------------------------------------------------------
// Teeworlds 0.7: the token handshake, then `gie3` between the two tokens.

const TW07: &str = include_str!("../../ogp-proto/tests/data/teeworlds/tw07-0.7.5-real.json");

fn load_teeworlds7() -> Result<Vec<Capture>> {
    Ok(vec![Capture {
        parts: json_parts(TW07, &["inf3"])?,
        ours: want(Some("TW capture"), Some("ctf2"), 6, 2),
        qstat: None,
    }])
}

/// The farm's token for a requester: a keyed hash of its address (no state kept), never
/// `FF FF FF FF` ("no token").
pub(crate) fn tw7_token(from: SocketAddr) -> u32 {
    use std::hash::Hasher as _;
    // SipHash with fixed keys and a fixed secret first: the same token for the same
    // address on every call, in any process of the farm.
    let mut h = std::hash::DefaultHasher::new();
    h.write_u64(0x6f67_702d_6c6f_6164);
    match from.ip() {
        IpAddr::V4(a) => h.write(&a.octets()),
        IpAddr::V6(a) => h.write(&a.octets()),
    }
    h.write_u16(from.port());
    let t = u32::try_from(h.finish() & 0xffff_ffff).unwrap_or(1);
    if t == u32::MAX {
        1
    } else {
        t
    }
}

/// The length of a 0.7 packed integer at the start of `d`: bytes while the extension
/// bit (0x80) is set, then one more (at most 5).
fn varint_len(d: &[u8]) -> Option<usize> {
    let n = d.iter().take(5).position(|b| b & 0x80 == 0)?;
    Some(n + 1)
}

fn answer_teeworlds7(c: &Capture, q: &[u8], from: SocketAddr, out: &mut Vec<Vec<u8>>) {
    let mine = tw7_token(from).to_be_bytes();
    if q.len() >= 12 && q.starts_with(&[0x04, 0, 0, 0xff, 0xff, 0xff, 0xff, 0x05]) {
        // Token request (the server also wants it padded: 520 bytes).
        if q.len() < 520 {
            return;
        }
        let mut d = vec![0x04, 0, 0];
        d.extend_from_slice(q.get(8..12).unwrap_or_default());
        d.push(0x05);
        d.extend_from_slice(&mine);
        out.push(d);
        return;
    }
    if q.first() != Some(&0x21) || q.get(1..5) != Some(mine.as_slice()) {
        return;
    }
    let (Some(theirs), Some(b"\xff\xff\xff\xffgie3"), Some(tok)) =
        (q.get(5..9), q.get(9..17), q.get(17..))
    else {
        return;
    };
    let (Some(tn), Some(reply)) = (varint_len(tok), c.part("inf3")) else {
        return;
    };
    let Some(rest) = reply.get(17..).and_then(|r| r.get(varint_len(r)?..)) else {
        return;
    };
    let mut d = vec![0x21];
    d.extend_from_slice(theirs);
    d.extend_from_slice(&mine);
    d.extend_from_slice(b"\xff\xff\xff\xffinf3");
    d.extend_from_slice(tok.get(..tn).unwrap_or_default());
    d.extend_from_slice(rest);
    out.push(d);
}

// ---------------------------------------------------------------------------------
// Cube 2 (Sauerbraten): the ping and the extinfo requests, each reply starting with the
// request as the server echoes it.

const SAUER: &str = include_str!("../../ogp-proto/tests/data/cube2/sauerbraten-2020.json");

fn load_cube2() -> Result<Vec<Capture>> {
    // Each reply without the request it echoed: the answer puts the new request there.
    let mut parts = Vec::new();
    for (name, reply) in json_parts(SAUER, &["ping", "uptime", "players", "teams"])? {
        let req = json_request(SAUER, name)?;
        ensure!(reply.starts_with(&req), "cube2 {name}: no echo");
        parts.push((name, reply.get(req.len()..).unwrap_or_default().to_vec()));
    }
    Ok(vec![Capture {
        parts,
        ours: want(Some("Sauer capture"), None, 12, 0),
        qstat: Some(want(None, None, 12, 0)),
    }])
}

fn answer_cube2(c: &Capture, q: &[u8], _: SocketAddr, out: &mut Vec<Vec<u8>>) {
    let name = match q {
        [0, 0, ..] => "uptime",
        [0, 1, ..] => "players",
        [0, 2, ..] => "teams",
        [0, ..] | [] => return,
        _ => "ping",
    };
    if let Some(rest) = c.part(name) {
        let mut d = q.to_vec();
        d.extend_from_slice(rest);
        out.push(d);
    }
}

// ---------------------------------------------------------------------------------
// Doom 3: `getInfo` with a challenge, echoed in `infoResponse`.

const DOOM3: &str = include_str!("../../ogp-proto/tests/data/doom3/gameq-doom3-1.json");

fn load_doom3() -> Result<Vec<Capture>> {
    Ok(vec![Capture {
        parts: json_parts(DOOM3, &["reply"])?,
        ours: want(None, Some("game/mp/d3dm3"), 4, 0),
        qstat: Some(want(None, Some("game/mp/d3dm3"), 4, 0)),
    }])
}

fn answer_doom3(c: &Capture, q: &[u8], _: SocketAddr, out: &mut Vec<Vec<u8>>) {
    let Some(challenge) = q.strip_prefix(b"\xff\xffgetInfo\0".as_slice()) else {
        return;
    };
    let Some(reply) = c.part("reply") else { return };
    // `FF FF infoResponse NUL`, then the 4-byte challenge.
    let (Some(head), Some(tail)) = (reply.get(..15), reply.get(19..)) else {
        return;
    };
    let mut ch = [0u8; 4];
    for (o, i) in ch.iter_mut().zip(challenge) {
        *o = *i;
    }
    let mut d = head.to_vec();
    d.extend_from_slice(&ch);
    d.extend_from_slice(tail);
    out.push(d);
}

// ---------------------------------------------------------------------------------
// SA-MP: an 11-byte header (magic, address, port, opcode) copied into the reply.

fn load_samp() -> Result<Vec<Capture>> {
    let names = ["i", "r", "d", "c"];
    Ok(vec![
        Capture {
            parts: json_parts(
                include_str!("../../ogp-proto/tests/data/samp/gameq-gfzone-1.json"),
                &names,
            )?,
            ours: want(
                Some("GFZONE: RPG Server [0.3.7]"),
                Some("San Andreas"),
                350,
                34,
            ),
            qstat: None,
        },
        Capture {
            parts: json_parts(
                include_str!("../../ogp-proto/tests/data/samp/opengsq-valrise-1.json"),
                &names,
            )?,
            ours: want(Some("[ENG] Valrise RPG"), Some("San Andreas"), 250, 17),
            qstat: None,
        },
    ])
}

fn answer_samp(c: &Capture, q: &[u8], _: SocketAddr, out: &mut Vec<Vec<u8>>) {
    let (Some(head), Some(&op)) = (q.get(..11), q.get(10)) else {
        return;
    };
    if !head.starts_with(b"SAMP") {
        return;
    }
    let name = match op {
        b'i' => "i",
        b'r' => "r",
        b'd' => "d",
        b'c' => "c",
        // `o` (open.mp's) and the rest: a SA-MP server does not answer them.
        _ => return,
    };
    if let Some(body) = c.part(name).and_then(|r| r.get(11..)) {
        let mut d = head.to_vec();
        d.extend_from_slice(body);
        out.push(d);
    }
}

// ---------------------------------------------------------------------------------
// Chocolate Doom: `00 0D`, answered as recorded (no id).

const CHOCO: &str = include_str!("../../ogp-proto/tests/data/doom/chocolate-server-3.0.0.json");

fn load_doom() -> Result<Vec<Capture>> {
    Ok(vec![
        Capture {
            parts: json_parts(CHOCO, &["empty"])?,
            ours: want(Some("Test Doom"), None, 8, 0),
            qstat: None,
        },
        Capture {
            parts: json_parts(CHOCO, &["one_player"])?,
            ours: want(Some("Test Doom"), None, 4, 1),
            qstat: None,
        },
    ])
}

fn answer_doom(c: &Capture, q: &[u8], _: SocketAddr, out: &mut Vec<Vec<u8>>) {
    if q.starts_with(&[0x00, 0x0d]) {
        if let Some((_, d)) = c.parts.first() {
            out.push(d.clone());
        }
    }
}

// ---------------------------------------------------------------------------------
// Doomsday: `Doomsday Beacon 1.1`, answered as recorded (no id; the record zlib-packed).

const DOOMSDAY: &str =
    include_str!("../../ogp-proto/tests/data/doomsday/doomsday-server-2.3.1.json");

fn load_doomsday() -> Result<Vec<Capture>> {
    Ok(vec![
        Capture {
            parts: json_parts(DOOMSDAY, &["default"])?,
            ours: want(Some("Doomsday"), Some("E1M1"), 15, 0),
            qstat: None,
        },
        Capture {
            parts: json_parts(DOOMSDAY, &["configured"])?,
            ours: want(Some("OGP Doomsday"), Some("E1M3"), 5, 0),
            qstat: None,
        },
    ])
}

fn answer_doomsday(c: &Capture, q: &[u8], _: SocketAddr, out: &mut Vec<Vec<u8>>) {
    if q == ogp_proto::doomsday::REQUEST {
        if let Some((_, d)) = c.parts.first() {
            out.push(d.clone());
        }
    }
}

// ---------------------------------------------------------------------------------
// Mumble: the 12-byte ping, its 8-byte ident echoed in the 24-byte reply.

/// murmurd 1.3.4's reply (version 1.3.4, 0 users, 12 max, 72,000 bit/s), as the project's
/// catalogue test has it (`tests/protocols/doom_captures.rs`).
const MUMBLE_REPLY: &str = "000103044142434445464748000000000000000c00011940";

fn load_mumble() -> Result<Vec<Capture>> {
    Ok(vec![Capture {
        parts: vec![("reply", hex(MUMBLE_REPLY)?)],
        ours: want(None, None, 12, 0),
        qstat: Some(want(None, None, 12, 0)),
    }])
}

fn answer_mumble(c: &Capture, q: &[u8], _: SocketAddr, out: &mut Vec<Vec<u8>>) {
    let (Some(ident), Some(reply)) = (q.get(4..12), c.part("reply")) else {
        return;
    };
    if q.len() != 12 || !q.starts_with(&[0; 4]) {
        return;
    }
    let (Some(head), Some(tail)) = (reply.get(..4), reply.get(12..)) else {
        return;
    };
    let mut d = head.to_vec();
    d.extend_from_slice(ident);
    d.extend_from_slice(tail);
    out.push(d);
}

// ---------------------------------------------------------------------------------
// Minetest: the handshake. The open gets SET_PEER_ID (the peer id a keyed hash of the
// requester's address: no state kept) and the ACK of its sequence number; a
// TOSERVER_INIT from that peer id gets TOCLIENT_HELLO with the player name echoed.

const MINETEST: &str =
    include_str!("../../ogp-proto/tests/data/minetest/minetest-5.6.1-handshake.json");

fn load_minetest() -> Result<Vec<Capture>> {
    let parts = json_parts(MINETEST, &["set_peer_id", "ack_open", "hello"])?;
    // The HELLO up to the name its INIT sent (22 bytes: header, reliable, command,
    // serialisation, compression, protocol, auth mechanisms).
    ensure!(
        parts.iter().all(|(n, d)| *n != "hello" || d.len() > 22),
        "minetest hello too short"
    );
    Ok(vec![Capture {
        parts,
        ours: Want {
            host: None,
            map: None,
            slot_max: None,
            players: None,
        },
        qstat: None,
    }])
}

/// The farm's peer id for a requester: 2 and up (0 is "none", 1 the server), from a
/// keyed hash of its address.
pub(crate) fn minetest_peer(from: SocketAddr) -> u16 {
    let t = tw7_token(from) % 65_000;
    u16::try_from(t).unwrap_or(0).saturating_add(2)
}

fn answer_minetest(c: &Capture, q: &[u8], from: SocketAddr, out: &mut Vec<Vec<u8>>) {
    const ID: [u8; 4] = [0x4f, 0x45, 0x74, 0x03];
    if !q.starts_with(&ID) {
        return;
    }
    let peer = minetest_peer(from).to_be_bytes();
    match q.get(4..) {
        // From peer 0, channel 0, RELIABLE (its sequence number), ORIGINAL: the open.
        Some([0, 0, 0, 3, s0, s1, 1, ..]) => {
            let (Some(set), Some(ack)) = (c.part("set_peer_id"), c.part("ack_open")) else {
                return;
            };
            let (Some(set_head), Some(ack_head)) = (
                set.get(..set.len().saturating_sub(2)),
                ack.get(..ack.len().saturating_sub(2)),
            ) else {
                return;
            };
            let mut d = set_head.to_vec();
            d.extend_from_slice(&peer);
            out.push(d);
            let mut a = ack_head.to_vec();
            a.extend_from_slice(&[*s0, *s1]);
            out.push(a);
        }
        // From our peer, channel 1, ORIGINAL, command 2: TOSERVER_INIT; the name from
        // byte 17 (after serialisation, compression and the protocol range).
        Some([p0, p1, 1, 1, 0, 2, ..]) if [*p0, *p1] == peer => {
            let (Some(hello), Some(name)) = (c.part("hello"), q.get(17..)) else {
                return;
            };
            let mut d = hello.get(..22).unwrap_or_default().to_vec();
            d.extend_from_slice(name);
            out.push(d);
        }
        _ => {}
    }
}

// ---------------------------------------------------------------------------------
// GameSpy v1: `\status\`, answered by the capture's datagrams in order.

/// The GameSpy v1 captures the farm replays, in turn: real servers' replies to
/// `\status\`, several datagrams each (see the captures' SOURCES.md).
pub(crate) const GS1_CAPTURES: [&[&[u8]]; 4] = [
    &[
        include_bytes!("../../ogp-proto/tests/data/gamespy1/bf1942_1.1.bin"),
        include_bytes!("../../ogp-proto/tests/data/gamespy1/bf1942_1.2.bin"),
        include_bytes!("../../ogp-proto/tests/data/gamespy1/bf1942_1.3.bin"),
    ],
    &[
        include_bytes!("../../ogp-proto/tests/data/gamespy1/ut_1.1.bin"),
        include_bytes!("../../ogp-proto/tests/data/gamespy1/ut_1.2.bin"),
        include_bytes!("../../ogp-proto/tests/data/gamespy1/ut_1.3.bin"),
    ],
    &[
        include_bytes!("../../ogp-proto/tests/data/gamespy1/bf1942_3.1.bin"),
        include_bytes!("../../ogp-proto/tests/data/gamespy1/bf1942_3.2.bin"),
    ],
    &[
        include_bytes!("../../ogp-proto/tests/data/gamespy1/ut_2.1.bin"),
        include_bytes!("../../ogp-proto/tests/data/gamespy1/ut_2.2.bin"),
        include_bytes!("../../ogp-proto/tests/data/gamespy1/ut_2.3.bin"),
    ],
];

fn load_gamespy1() -> Result<Vec<Capture>> {
    Ok(GS1_CAPTURES
        .iter()
        .map(|parts| Capture {
            parts: parts.iter().map(|p| ("part", p.to_vec())).collect(),
            // The GameSpy v1 lines are checked by `scan_bench`'s own checks.
            ours: Want {
                host: None,
                map: None,
                slot_max: None,
                players: None,
            },
            qstat: None,
        })
        .collect())
}

fn answer_gamespy1(c: &Capture, q: &[u8], _: SocketAddr, out: &mut Vec<Vec<u8>>) {
    if q.starts_with(b"\\status\\") {
        out.extend(c.parts.iter().map(|(_, d)| d.clone()));
    }
}

// ---------------------------------------------------------------------------------
// NetQuake: server info, each player, each rule (asked by the name of the one before),
// every reply as QuakeSpasm sent it; stateless, a function of the request.

const NQ_SERVER: &[u8] =
    include_bytes!("../../ogp-proto/tests/data/netquake/quakespasm_server_info.bin");
const NQ_PLAYER0: &[u8] =
    include_bytes!("../../ogp-proto/tests/data/netquake/quakespasm_player_info_0.bin");
const NQ_RULES: &[u8] = include_bytes!("../../ogp-proto/tests/data/netquake/quakespasm_rules.bin");

fn load_netquake() -> Result<Vec<Capture>> {
    let mut parts = vec![
        ("server", NQ_SERVER.to_vec()),
        ("player0", NQ_PLAYER0.to_vec()),
    ];
    // The rule replies, one after the other in the file, each saying its own length.
    let mut rest = NQ_RULES;
    while let Some(h) = rest.first_chunk::<4>() {
        let len = usize::from(u16::from_be_bytes([h[2], h[3]]));
        ensure!(
            len >= 5 && len <= rest.len(),
            "netquake rules: bad length {len}"
        );
        let (d, r) = rest.split_at(len);
        parts.push(("rule", d.to_vec()));
        rest = r;
    }
    ensure!(
        parts.last().is_some_and(|(_, d)| d.len() == 5),
        "netquake rules: no end"
    );
    Ok(vec![Capture {
        parts,
        ours: want(Some("NQ ogp test"), Some("start"), 6, 1),
        qstat: Some(want(None, Some("start"), 6, 1)),
    }])
}

/// `80 00 LEN LEN` (the header, saying the datagram's length) and the op: its body.
fn nq_request(q: &[u8], op: u8) -> Option<&[u8]> {
    let len = usize::from(u16::from_be_bytes([*q.get(2)?, *q.get(3)?]));
    (q.first() == Some(&0x80) && q.get(1) == Some(&0) && len == q.len() && q.get(4) == Some(&op))
        .then(|| q.get(5..))
        .flatten()
}

fn answer_netquake(c: &Capture, q: &[u8], _: SocketAddr, out: &mut Vec<Vec<u8>>) {
    let reply = if nq_request(q, 0x02) == Some(b"QUAKE\0\x03".as_slice()) {
        c.part("server")
    } else if nq_request(q, 0x03) == Some([0u8].as_slice()) {
        c.part("player0")
    } else if let Some(name) = nq_request(q, 0x04).and_then(|b| b.strip_suffix(&[0])) {
        let mut rules = c.parts.iter().filter(|(n, _)| *n == "rule").map(|(_, d)| d);
        if name.is_empty() {
            rules.next()
        } else {
            // The rule after the one named: each reply is `header 85 NAME\0 VALUE\0`.
            let mut named = rules
                .by_ref()
                .skip_while(|d| d.get(5..).and_then(|b| b.split(|x| *x == 0).next()) != Some(name));
            named.next().and_then(|_| named.next())
        }
        .map(Vec::as_slice)
    } else {
        None
    };
    out.extend(reply.map(<[u8]>::to_vec));
}

// ---------------------------------------------------------------------------------

/// Every family a replay farm serves. 127.77–127.81 are the other farms' (the mixed
/// list, Quake III, Minecraft, GameSpy v1, the A2S baseline).
pub(crate) static FAMILIES: [ReplayFamily; 14] = [
    ReplayFamily {
        label: "GameSpy v1",
        protocol: "gamespy1",
        net: 80,
        qstat: None,
        load: load_gamespy1,
        answer: answer_gamespy1,
        shape: "one request, two or three reply datagrams",
    },
    ReplayFamily {
        label: "Teeworlds 0.6 / DDNet",
        protocol: "teeworlds",
        net: 82,
        qstat: Some(Qstat {
            kind: "TEES",
            flag: "-tees",
            port_offset: 0,
        }),
        load: load_teeworlds,
        answer: answer_teeworlds,
        shape: "one round trip",
    },
    ReplayFamily {
        label: "Teeworlds 0.7",
        protocol: "teeworlds7",
        net: 83,
        qstat: None,
        load: load_teeworlds7,
        answer: answer_teeworlds7,
        shape: "two round trips (the token handshake, 520-byte padded request, then gie3)",
    },
    ReplayFamily {
        label: "QuakeWorld",
        protocol: "quakeworld",
        net: 84,
        qstat: Some(Qstat {
            kind: "QWS",
            flag: "-qws",
            port_offset: 0,
        }),
        load: load_quakeworld,
        answer: answer_status,
        shape: "one round trip",
    },
    ReplayFamily {
        label: "Quake 2",
        protocol: "quake2",
        net: 85,
        qstat: Some(Qstat {
            kind: "Q2S",
            flag: "-q2s",
            port_offset: 0,
        }),
        load: load_quake2,
        answer: answer_status,
        shape: "one round trip",
    },
    ReplayFamily {
        label: "HexenWorld",
        protocol: "hexenworld",
        net: 86,
        qstat: Some(Qstat {
            kind: "HWS",
            flag: "-hws",
            port_offset: 0,
        }),
        load: load_hexenworld,
        answer: answer_hexenworld,
        shape: "one round trip",
    },
    ReplayFamily {
        label: "Cube 2",
        protocol: "cube2",
        net: 87,
        qstat: Some(Qstat {
            kind: "CUBE2",
            flag: "-cubes",
            port_offset: -1,
        }),
        load: load_cube2,
        answer: answer_cube2,
        shape: "one round trip (the ping, the three extinfo requests right behind it); qstat sends the ping only",
    },
    ReplayFamily {
        label: "Mumble",
        protocol: "mumble",
        net: 88,
        qstat: Some(Qstat {
            kind: "MUMBLE",
            flag: "-mumble",
            port_offset: 0,
        }),
        load: load_mumble,
        answer: answer_mumble,
        shape: "one round trip",
    },
    ReplayFamily {
        label: "Chocolate Doom",
        protocol: "doom",
        net: 89,
        qstat: None,
        load: load_doom,
        answer: answer_doom,
        shape: "one round trip",
    },
    ReplayFamily {
        label: "SA-MP",
        protocol: "samp",
        net: 90,
        qstat: None,
        load: load_samp,
        answer: answer_samp,
        shape: "two round trips (i and open.mp's o together, then r and c); no wait for the o that SA-MP never answers",
    },
    ReplayFamily {
        label: "Doom 3",
        protocol: "doom3",
        net: 91,
        qstat: Some(Qstat {
            kind: "DM3S",
            flag: "-dm3s",
            port_offset: 0,
        }),
        load: load_doom3,
        answer: answer_doom3,
        shape: "one round trip",
    },
    ReplayFamily {
        label: "Minetest",
        protocol: "minetest",
        net: 92,
        qstat: None,
        load: load_minetest,
        answer: answer_minetest,
        shape: "the handshake: open, SET_PEER_ID, INIT at once and every 25 ms until HELLO (a real server takes it at its next step, 45-105 ms; the farm at once), then a DISCO",
    },
    ReplayFamily {
        label: "NetQuake",
        protocol: "netquake",
        net: 93,
        qstat: Some(Qstat {
            kind: "QS",
            flag: "-qs",
            port_offset: 0,
        }),
        load: load_netquake,
        answer: answer_netquake,
        shape: "server info, then each player, then each rule (asked by the name of the one before): 1 + players + rules + 1 round trips; qstat asks for the server info only",
    },
    ReplayFamily {
        label: "Doomsday",
        protocol: "doomsday",
        net: 94,
        qstat: None,
        load: load_doomsday,
        answer: answer_doomsday,
        shape: "one round trip (a zlib-packed record inflated per reply)",
    },
];

/// The family served by replay under `name` (`ogp scan`'s protocol name).
pub(crate) fn family(name: &str) -> Option<&'static ReplayFamily> {
    FAMILIES.iter().find(|f| f.protocol == name)
}

/// The capture target `index` replays.
pub(crate) fn capture_of(captures: &[Capture], index: u64) -> Option<&Capture> {
    let n = u64::try_from(captures.len()).ok()?.max(1);
    captures.get(usize::try_from(index % n).ok()?)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn from() -> SocketAddr {
        "127.0.0.1:40000".parse().unwrap()
    }

    /// Every family's captures load, and its answer to truncated, oversized and garbage
    /// requests (every prefix of a real request of each family, 2 KB of each byte
    /// value) is at most its capture's datagrams, never a panic.
    #[test]
    fn answers_survive_hostile_requests() {
        let mut requests: Vec<Vec<u8>> = vec![
            b"\xff\xff\xff\xffstatus 23\n".to_vec(),
            b"\xff\xff\xff\xff\xffstatus\n".to_vec(),
            b"xe\x12\x34\x00\x00\xff\xff\xff\xffgie3\x56".to_vec(),
            [0xff; 10].iter().copied().chain(*b"gie3\x05").collect(),
            b"\x21\x00\x00\x00\x00\x11\x22\x33\x44\xff\xff\xff\xffgie3\x80\x80\x80\x80\x80\x80"
                .to_vec(),
            b"\x81\x04\x03\x02\x01".to_vec(),
            b"\x00\x01\xff\x81\x04\x03\x02\x01".to_vec(),
            b"\xff\xffgetInfo\0\x01\x02\x03\x04".to_vec(),
            b"SAMP\x7f\x00\x00\x01\x61\x1ei".to_vec(),
            b"\x00\x0d".to_vec(),
            vec![0; 12],
            b"\\status\\".to_vec(),
            b"\x4f\x45\x74\x03\x00\x00\x00\x03\xff\xdc\x01".to_vec(),
            b"\x4f\x45\x74\x03\x00\x02\x01\x01\x00\x02\x1d\x00\x00\x00\x25\xff\xff\x00\x08ogpprobe"
                .to_vec(),
            b"\x80\x00\x00\x0c\x02QUAKE\x00\x03".to_vec(),
            b"\x80\x00\x00\x06\x03\x00".to_vec(),
            b"\x80\x00\x00\x0f\x04sv_gravity\x00".to_vec(),
        ];
        let mut token = vec![0x04, 0, 0, 0xff, 0xff, 0xff, 0xff, 0x05, 1, 2, 3, 4];
        token.resize(520, 0);
        requests.push(token);
        let mut all = Vec::new();
        for r in &requests {
            for n in 0..=r.len() {
                all.push(r.get(..n).unwrap().to_vec());
            }
        }
        for b in [0u8, 0x21, 0x80, 0xff] {
            all.push(vec![b; 2048]);
        }
        for f in &FAMILIES {
            let captures = (f.load)().unwrap();
            assert!(!captures.is_empty(), "{}", f.label);
            for c in &captures {
                for q in &all {
                    let mut out = Vec::new();
                    (f.answer)(c, q, from(), &mut out);
                    assert!(out.len() <= c.parts.len().max(1), "{}", f.label);
                    assert!(out.iter().all(|d| d.len() <= 2048 + 1500), "{}", f.label);
                }
            }
        }
    }

    /// NetQuake: the server info to Quake's request only, player 0 only, and the rules
    /// in a chain (each asked by the name before) that ends with the reply without a
    /// name, after which nothing; a header that lies about the length gets nothing.
    #[test]
    fn netquake_answers_each_step() {
        let c = &load_netquake().unwrap()[0];
        let ask = |q: &[u8]| {
            let mut out = Vec::new();
            answer_netquake(c, q, from(), &mut out);
            out
        };
        assert_eq!(ask(b"\x80\x00\x00\x0c\x02QUAKE\x00\x03"), [NQ_SERVER]);
        assert!(ask(b"\x80\x00\x00\x0e\x02HEXENII\x00\x04").is_empty());
        assert!(ask(b"\x80\x00\x00\x0d\x02QUAKE\x00\x03").is_empty());
        assert_eq!(ask(b"\x80\x00\x00\x06\x03\x00"), [NQ_PLAYER0]);
        assert!(ask(b"\x80\x00\x00\x06\x03\x01").is_empty());
        let mut prev = Vec::new();
        let mut names = Vec::new();
        for _ in 0..20 {
            let mut q = vec![0x80, 0, 0, 0, 0x04];
            q.extend_from_slice(&prev);
            q.push(0);
            q[3] = q.len() as u8;
            let got = ask(&q);
            assert_eq!(got.len(), 1, "after {prev:?}");
            let Some(rest) = got[0].get(5..).filter(|r| !r.is_empty()) else {
                break;
            };
            prev = rest.split(|b| *b == 0).next().unwrap().to_vec();
            names.push(String::from_utf8(prev.clone()).unwrap());
        }
        assert_eq!(
            names,
            [
                "fraglimit",
                "noexit",
                "sv_friction",
                "sv_gravity",
                "sv_maxspeed",
                "teamplay",
                "timelimit"
            ]
        );
        assert!(ask(b"\x80\x00\x00\x0a\x04nope\x00").is_empty());
    }

    /// Teeworlds 0.7: the token reply carries our token and the farm's (the same for the
    /// same address, another for another); an info request that does not bring the
    /// farm's token back for its address gets nothing, one that does gets `inf3`
    /// between the two tokens with its integer token.
    #[test]
    fn teeworlds7_answers_the_handshake_statelessly() {
        let c = &load_teeworlds7().unwrap()[0];
        let mut q = vec![0x04, 0, 0, 0xff, 0xff, 0xff, 0xff, 0x05, 1, 2, 3, 4];
        let mut out = Vec::new();
        answer_teeworlds7(c, &q, from(), &mut out);
        assert!(out.is_empty(), "an unpadded token request is ignored");
        q.resize(520, 0);
        answer_teeworlds7(c, &q, from(), &mut out);
        let mine = tw7_token(from()).to_be_bytes();
        assert_eq!(out[0].get(..8).unwrap(), &[4, 0, 0, 1, 2, 3, 4, 5]);
        assert_eq!(out[0].get(8..).unwrap(), &mine);
        assert_ne!(
            tw7_token(from()),
            tw7_token("127.0.0.1:40001".parse().unwrap())
        );
        let ask = |theirs: [u8; 4]| {
            let mut q = vec![0x21];
            q.extend_from_slice(&theirs);
            q.extend_from_slice(&[1, 2, 3, 4]);
            q.extend_from_slice(b"\xff\xff\xff\xffgie3\x85\x01");
            let mut out = Vec::new();
            answer_teeworlds7(c, &q, from(), &mut out);
            out
        };
        assert!(ask([9, 9, 9, 9]).is_empty());
        let got = ask(mine);
        let d = &got[0];
        assert_eq!(d.get(1..5).unwrap(), &[1, 2, 3, 4]);
        assert_eq!(d.get(5..9).unwrap(), &mine);
        assert_eq!(d.get(9..19).unwrap(), b"\xff\xff\xff\xffinf3\x85\x01");
        assert!(d.ends_with(c.part("inf3").unwrap().get(18..).unwrap()));
    }
}
