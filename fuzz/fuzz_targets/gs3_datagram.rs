//! GameSpy v3: every decoder on every datagram, and a sequence of datagrams through the
//! reply `Reassembler`.
//!
//! Input: `[a: u8] [b: u8]`, then records `[n: u16 LE] [datagram: n & 0x7ff bytes, fewer
//! if the input ends]` until the input ends. The reassembler's limits come from the first
//! two bytes: `max_packets = a % 128 + 1`, `max_bytes = 256 × (b + 1)` (256 B – 64 KiB),
//! so that both are reachable.
//!
//! Each datagram goes through `Request::decode`, `decode_reply`, `decode_packet` and
//! `Heartbeat::decode`. Asserts: no panic; errors and warnings point into the datagram;
//! a decoded request re-encodes to bytes that decode to the same request; a challenge
//! reply whose text fits 32 bytes and an echo reply round-trip; a decoded heartbeat
//! re-encodes to one that decodes the same (fixed point after one round); a decoded
//! packet, merged alone, re-encodes with `encode_packets` (packets ≤ 1400 bytes, numbered,
//! the last flagged) to packets that reassemble in reverse order to what the wire
//! carries of it (keys cut at 63 bytes, values at 255, a gap or empty value as one space;
//! server keys that do not fit packet 0 dropped from the end); `encode_packets` fails
//! only for a column of more than 256 values.
//!
//! Packets are pushed into the reassembler; every result equals that of a small model of
//! the documented rules (BadNumber beyond `max_packets` or the last packet, Duplicate,
//! TwoLasts, TooLarge above `max_bytes` with nothing changed, Complete once the last
//! packet and every number before it are in, or at once for a lone Just Cause 2 packet
//! 0); a complete reply has at most `MAX_COLUMNS` columns of at most
//! `MAX_COLUMN_VALUES` values, maps to a status, and re-encodes as above.

use std::collections::BTreeSet;

use ogp_fuzz::{check_error, records};
use ogp_proto::gamespy3::heartbeat::Heartbeat;
use ogp_proto::gamespy3::mapping::{info_to_status, status_to_info};
use ogp_proto::gamespy3::reply::{
    decode_packet, decode_reply, decode_reply_with, encode_packets, merge, Column, Packet, Pushed,
    Reassembler, ReassemblyError, ReassemblyLimits, Reply, Section, ServerInfo, LAST_FLAG,
    MAX_COLUMNS, MAX_COLUMN_VALUES, MAX_KEY, MAX_VALUE, PACKET_HEADER,
};
use ogp_proto::gamespy3::request::Request;
use ogp_proto::gamespy3::MAX_PACKET;
use ogp_proto::{Charset, Text};

/// `s` cut to `max` bytes at a character boundary: what the encoder writes (decoded
/// strings hold no NUL).
fn wire(s: &str, max: usize) -> Text {
    let mut end = s.len().min(max);
    while !s.is_char_boundary(end) {
        end -= 1;
    }
    Text::from(&s[..end])
}

/// What the wire carries of `info`.
fn on_the_wire(info: &ServerInfo) -> ServerInfo {
    let col = |c: &Column| Column {
        key: wire(&c.key, MAX_KEY),
        values: c
            .values
            .iter()
            .map(|v| {
                let v = wire(v, MAX_VALUE);
                if v.is_empty() {
                    " ".into()
                } else {
                    v
                }
            })
            .collect(),
    };
    ServerInfo {
        server: info
            .server
            .iter()
            .map(|(k, v)| (wire(k, MAX_KEY), wire(v, MAX_VALUE)))
            .collect(),
        players: info.players.iter().map(col).collect(),
        teams: info.teams.iter().map(col).collect(),
    }
}

/// `info` re-encoded and reassembled in reverse order gives what the wire carries.
fn check_reencode(info: &ServerInfo) {
    let want = on_the_wire(info);
    // keys that collide once cut are merged by a reader: not comparable
    for cols in [&want.players, &want.teams] {
        let keys: BTreeSet<&str> = cols.iter().map(|c| c.key.as_str()).collect();
        if keys.len() != cols.len() {
            return;
        }
    }
    let mut packets: Vec<Vec<u8>> = Vec::new();
    let r = encode_packets(info, 0x0102_0304, MAX_PACKET, |p| packets.push(p.to_vec()));
    let n = match r {
        Ok(n) => n,
        Err(_) => {
            assert!(
                info.players
                    .iter()
                    .chain(&info.teams)
                    .any(|c| c.values.len() > 256),
                "encode_packets failed on {info:?}"
            );
            return;
        }
    };
    assert_eq!(n, packets.len());
    let mut r = Reassembler::default();
    let mut done = None;
    for (k, p) in packets.iter().enumerate().rev() {
        assert!(p.len() <= MAX_PACKET, "packet of {} bytes", p.len());
        assert_eq!(
            p[PACKET_HEADER - 1],
            k as u8 | if k + 1 == n { LAST_FLAG } else { 0 }
        );
        let d = decode_packet(p).expect("our packet decodes");
        assert!(!d.jc2mp && d.unknown_sections.is_empty(), "{d:?}");
        if let Pushed::Complete { info, .. } = r.push(d, p.len()).expect("our packets fit") {
            assert!(done.is_none());
            done = Some(info);
        }
    }
    let mut got = done.expect("our packets complete");
    assert!(got.server.len() <= want.server.len());
    assert_eq!(got.server[..], want.server[..got.server.len()]);
    got.server = want.server.clone();
    assert_eq!(got, want);
}

/// The reassembler's documented rules.
struct Model {
    limits: ReassemblyLimits,
    held: BTreeSet<u8>,
    last: Option<u8>,
    bytes: usize,
}

impl Model {
    fn push(&mut self, p: &Packet, bytes: usize) -> Result<Option<usize>, ReassemblyError> {
        let n = p.number;
        if usize::from(n) >= self.limits.max_packets.min(128) {
            return Err(ReassemblyError::BadNumber { number: n });
        }
        if self.held.contains(&n) {
            return Ok(None);
        }
        if p.last {
            if self.last.is_some() {
                return Err(ReassemblyError::TwoLasts);
            }
            if self.held.iter().any(|&h| h > n) {
                return Err(ReassemblyError::BadNumber { number: n });
            }
        } else if self.last.is_some_and(|l| n > l) {
            return Err(ReassemblyError::BadNumber { number: n });
        }
        if self.bytes + bytes > self.limits.max_bytes {
            return Err(ReassemblyError::TooLarge {
                limit: self.limits.max_bytes,
            });
        }
        let lone_jc2 = p.jc2mp && n == 0 && self.held.is_empty();
        self.held.insert(n);
        self.bytes += bytes;
        if p.last {
            self.last = Some(n);
        }
        let complete = lone_jc2
            || self
                .last
                .is_some_and(|l| self.held.len() == usize::from(l) + 1);
        if complete {
            let count = self.held.len();
            self.held.clear();
            self.last = None;
            self.bytes = 0;
            return Ok(Some(count));
        }
        Ok(None)
    }
}

fn check_info_bounds(info: &ServerInfo) {
    assert!(info.players.len() + info.teams.len() <= MAX_COLUMNS);
    for c in info.players.iter().chain(&info.teams) {
        assert!(c.values.len() <= MAX_COLUMN_VALUES);
        assert!(!c.key.is_empty());
    }
    let status = info_to_status(info);
    let _ = status_to_info(&status);
}

fn single(d: &[u8]) {
    match Request::decode(d) {
        Ok(r) => {
            let b = r.to_bytes();
            assert_eq!(Request::decode(&b).expect("re-encoded request"), r);
        }
        Err(e) => check_error(&e, 0, d.len()),
    }
    // A chosen charset changes only how strings that are not UTF-8 read.
    match (decode_reply(d), decode_reply_with(d, Charset::Windows1251)) {
        (Ok(_), Ok(_)) => {}
        (Err(a), Err(c)) => assert_eq!(a, c, "the charset changed the error"),
        (a, c) => panic!("the charset changed whether it decodes: {a:?} / {c:?}"),
    }
    match decode_reply(d) {
        Ok(Reply::Challenge(c)) => {
            let _ = c.value();
            if c.text.len() <= 32 {
                let mut b = Vec::new();
                c.encode(&mut b);
                assert_eq!(decode_reply(&b), Ok(Reply::Challenge(c)));
            }
        }
        Ok(Reply::Echo(data)) => {
            let mut b = vec![0x05];
            b.extend_from_slice(&data);
            assert_eq!(b, d);
        }
        Ok(Reply::Keys { values, .. }) => assert!(values.len() <= 256),
        Ok(Reply::Packet(_)) => {}
        Err(e) => check_error(&e, 0, d.len()),
    }
    match Heartbeat::decode(d) {
        Ok(h) => {
            let again = Heartbeat::decode(&h.to_bytes()).expect("re-encoded heartbeat");
            assert_eq!(again, h);
        }
        Err(e) => check_error(&e, 0, d.len()),
    }
    if let Ok(p) = decode_packet(d) {
        for w in &p.warnings {
            assert!(
                w.offset <= d.len(),
                "warning at {} of {}: {w}",
                w.offset,
                d.len()
            );
        }
        for &(at, _) in &p.unknown_sections {
            assert!(at < d.len());
        }
        if p.jc2mp {
            // the player list ends the packet: three player columns of one length
            let [.., a, b, c] = &p.chunks[..] else {
                panic!("a Just Cause 2 packet without its columns: {p:?}")
            };
            let keys = [&a.key, &b.key, &c.key].map(|k| k.as_str());
            assert_eq!(keys, ["player_", "steamid_", "ping_"]);
            assert!([a, b, c]
                .iter()
                .all(|x| x.section == Section::Players && x.offset == 0));
            assert!(a.values.len() == b.values.len() && b.values.len() == c.values.len());
        }
        let (info, _) = merge(vec![p]);
        check_info_bounds(&info);
        check_reencode(&info);
    }
}

/// One input of the `gs3_datagram` target.
pub fn run(data: &[u8]) {
    let (a, b, rest) = match data {
        [a, b, rest @ ..] => (*a, *b, rest),
        _ => return,
    };
    let mut limits = ReassemblyLimits::default();
    limits.max_packets = usize::from(a % 128) + 1;
    limits.max_bytes = 256 * (usize::from(b) + 1);
    let mut r = Reassembler::with_limits(limits);
    let mut model = Model {
        limits,
        held: BTreeSet::new(),
        last: None,
        bytes: 0,
    };
    for (_, d) in records::<2>(rest) {
        single(d);
        let Ok(p) = decode_packet(d) else { continue };
        let want = model.push(&p, d.len());
        let got = r.push(p, d.len());
        match (&got, &want) {
            (Ok(Pushed::Complete { info, packets, .. }), Ok(Some(count))) => {
                assert_eq!(packets, count);
                check_info_bounds(info);
                check_reencode(info);
            }
            (Ok(Pushed::Incomplete), Ok(None)) | (Ok(Pushed::Duplicate), Ok(None)) => {}
            (Err(g), Err(w)) => assert_eq!(g, w),
            _ => panic!("reassembler {got:?}, model {want:?}"),
        }
        assert_eq!(r.held(), model.held.len());
    }
}
