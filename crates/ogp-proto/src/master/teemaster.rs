//! The Teeworlds 0.6 master protocol (what Teeworlds 0.6 and DDNet's older clients, and
//! `quakestat -teem`, speak with a master on UDP port 8300), both sides, sans-IO.
//!
//! Every message is a connectionless packet: a 6-byte packet header (`FF`×6 from the
//! game; qstat sends `20 00 00 00 00 00`; a master reads past it whatever it holds),
//! then `FF FF FF FF` and a four-letter word:
//!
//! * **`req2`** (client → master), [`Request::List`]: answered by **`lis2`** datagrams
//!   of at most [`MAX_PAGE_SERVERS`] entries of 18 bytes: a 16-byte IPv6 address
//!   (IPv4 as `::ffff:a.b.c.d`) and the big-endian port ([`encode_page`],
//!   [`decode_page`]). The list has no end marker: a client learns how long it is from
//! * **`cou2`** (client → master), [`Request::Count`], answered by **`siz2`** and the
//!   number of servers, big-endian in two bytes ([`encode_count`], [`decode_count`]).
//! * **`bea2`** (server → master), [`Heartbeat`]: the server's port, big-endian in two
//!   bytes, from its own socket's IP. The reference master then checks the server's
//!   reachability with `fw??` / `fw!!` and answers `fwok` (or `fwer`); a master of ours
//!   verifies it instead by querying it back with `gie3` and a random token (the
//!   [`registry`](super::registry)): the answer must carry our token (vanilla 0.6
//!   echoes its low byte, DDNet all 24 bits).
//!
//! Our answers carry `FF`×6 as their header. [`answer`] and [`answer_count`] charge
//! every answer datagram to the shared [`ListBudget`] before it is built. Nothing here
//! panics; decoding reads through the crate's bounded reader, and a page holds at most
//! what its datagram carries.

use std::net::{IpAddr, Ipv6Addr, SocketAddr};
use std::time::Instant;

use super::budget::{answer_pages, Answered, ListAdmission, ListBudget};
use crate::error::DecodeError;
use crate::reader::Reader;

/// The port masters listen on.
pub const DEFAULT_PORT: u16 = 8300;

/// The packet header's length (before `FF FF FF FF` and the word).
pub const HEADER_LEN: usize = 6;

/// The header of our datagrams: a connectionless packet.
pub const HEADER: [u8; HEADER_LEN] = [0xff; HEADER_LEN];

/// One entry of a `lis2` page: 16 address bytes and the port.
pub const ENTRY_LEN: usize = 18;

/// Most entries of one `lis2` page (the reference master's).
pub const MAX_PAGE_SERVERS: usize = 75;

/// Header, `FF`×4 and the word.
const PREAMBLE_LEN: usize = HEADER_LEN + 8;

/// The largest page: the preamble and [`MAX_PAGE_SERVERS`] entries (1,364 bytes).
pub const MAX_PAGE_BYTES: usize = PREAMBLE_LEN + MAX_PAGE_SERVERS * ENTRY_LEN;

/// Longest request or heartbeat taken (they are 14 and 16 bytes).
pub const MAX_REQUEST_BYTES: usize = 64;

const GETLIST: &[u8; 4] = b"req2";
const LIST: &[u8; 4] = b"lis2";
const GETCOUNT: &[u8; 4] = b"cou2";
const COUNT: &[u8; 4] = b"siz2";
const HEARTBEAT: &[u8; 4] = b"bea2";

/// The word and what follows it, if the datagram is a connectionless packet of this
/// protocol's shape: any 6-byte header, `FF FF FF FF`, the word.
fn split(datagram: &[u8]) -> Option<(&[u8], &[u8])> {
    let mut r = Reader::new(datagram);
    r.take(HEADER_LEN, "header").ok()?;
    if r.array::<4>("prefix").ok()? != [0xff; 4] {
        return None;
    }
    let word = r.take(4, "word").ok()?;
    Some((word, r.take_rest()))
}

fn preamble(word: &[u8; 4], out: &mut Vec<u8>) {
    out.extend_from_slice(&HEADER);
    out.extend_from_slice(&[0xff; 4]);
    out.extend_from_slice(word);
}

/// Whether the datagram is one a master takes: `req2`, `cou2` or `bea2` (without
/// decoding it).
pub fn is_master_message(datagram: &[u8]) -> bool {
    split(datagram).is_some_and(|(w, _)| [GETLIST, GETCOUNT, HEARTBEAT].iter().any(|x| w == *x))
}

/// Whether the datagram is a heartbeat, `bea2` (without decoding it).
pub fn is_heartbeat(datagram: &[u8]) -> bool {
    split(datagram).is_some_and(|(w, _)| w == HEARTBEAT)
}

/// A client's request to a master.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Request {
    /// `req2`: the list.
    List,
    /// `cou2`: the number of servers.
    Count,
}

impl Request {
    /// Decodes `req2` or `cou2` (at most [`MAX_REQUEST_BYTES`]; bytes after the word
    /// are ignored).
    pub fn decode(datagram: &[u8]) -> Result<Self, DecodeError> {
        if datagram.len() > MAX_REQUEST_BYTES {
            return Err(DecodeError::invalid(0, "request", "longer than 64 bytes"));
        }
        match split(datagram) {
            Some((w, _)) if w == GETLIST => Ok(Self::List),
            Some((w, _)) if w == GETCOUNT => Ok(Self::Count),
            _ => Err(DecodeError::invalid(
                HEADER_LEN,
                "word",
                "not a Teeworlds master request (req2, cou2)",
            )),
        }
    }

    /// Appends the datagram (with our header).
    pub fn encode(self, out: &mut Vec<u8>) {
        preamble(
            match self {
                Self::List => GETLIST,
                Self::Count => GETCOUNT,
            },
            out,
        );
    }
}

/// A server's heartbeat (`bea2`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Heartbeat {
    /// The port it serves on (and is queried on), never 0.
    pub port: u16,
}

impl Heartbeat {
    /// Decodes `bea2` and its port (at most [`MAX_REQUEST_BYTES`]; bytes after the port
    /// are ignored).
    pub fn decode(datagram: &[u8]) -> Result<Self, DecodeError> {
        if datagram.len() > MAX_REQUEST_BYTES {
            return Err(DecodeError::invalid(0, "heartbeat", "longer than 64 bytes"));
        }
        let Some((w, rest)) = split(datagram) else {
            return Err(DecodeError::invalid(0, "header", "not a Teeworlds packet"));
        };
        if w != HEARTBEAT {
            return Err(DecodeError::invalid(HEADER_LEN, "word", "not bea2"));
        }
        let mut r = Reader::new(rest);
        let port = r.u16_be("port")?;
        if port == 0 {
            return Err(DecodeError::invalid(PREAMBLE_LEN, "port", "0"));
        }
        Ok(Self { port })
    }

    /// Appends the datagram.
    pub fn encode(self, out: &mut Vec<u8>) {
        preamble(HEARTBEAT, out);
        out.extend_from_slice(&self.port.to_be_bytes());
    }
}

/// Appends a `siz2` answer saying `count` servers (65,535 and more as 65,535).
pub fn encode_count(count: usize, out: &mut Vec<u8>) {
    preamble(COUNT, out);
    out.extend_from_slice(&u16::try_from(count).unwrap_or(u16::MAX).to_be_bytes());
}

/// Decodes a `siz2` answer.
pub fn decode_count(datagram: &[u8]) -> Result<u16, DecodeError> {
    match split(datagram) {
        Some((w, rest)) if w == COUNT => Reader::new(rest).u16_be("count"),
        _ => Err(DecodeError::invalid(HEADER_LEN, "word", "not siz2")),
    }
}

/// Appends a `lis2` page of the first [`MAX_PAGE_SERVERS`] of `servers` (IPv4 ones as
/// `::ffff:a.b.c.d`) and returns how many it took.
pub fn encode_page(servers: &[SocketAddr], out: &mut Vec<u8>) -> usize {
    preamble(LIST, out);
    let n = servers.len().min(MAX_PAGE_SERVERS);
    for a in servers.iter().take(n) {
        let ip = match a.ip() {
            IpAddr::V4(v4) => v4.to_ipv6_mapped(),
            IpAddr::V6(v6) => v6,
        };
        out.extend_from_slice(&ip.octets());
        out.extend_from_slice(&a.port().to_be_bytes());
    }
    n
}

/// Decodes a `lis2` page: its entries in order, `::ffff:a.b.c.d` as IPv4. Bytes that do
/// not make a whole entry are an error (a page cut short).
pub fn decode_page(datagram: &[u8]) -> Result<Vec<SocketAddr>, DecodeError> {
    let rest = match split(datagram) {
        Some((w, rest)) if w == LIST => rest,
        _ => return Err(DecodeError::invalid(HEADER_LEN, "word", "not lis2")),
    };
    if rest.len() % ENTRY_LEN != 0 {
        return Err(DecodeError::invalid(
            PREAMBLE_LEN,
            "entries",
            "not a whole number of 18-byte entries",
        ));
    }
    let mut r = Reader::new(rest);
    let mut out = Vec::with_capacity(rest.len() / ENTRY_LEN);
    while !r.is_empty() {
        let ip = Ipv6Addr::from(r.array::<16>("address")?);
        let port = r.u16_be("port")?;
        let ip = match ip.to_ipv4_mapped() {
            Some(v4) => IpAddr::V4(v4),
            None => IpAddr::V6(ip),
        };
        out.push(SocketAddr::new(ip, port));
    }
    Ok(out)
}

/// Answers `req2` from `from` with the servers `servers` finds: `lis2` pages, each
/// charged against `budget` before it is built ([`answer_pages`]).
pub fn answer(
    servers: impl FnOnce() -> Vec<SocketAddr>,
    from: IpAddr,
    now: Instant,
    budget: &ListBudget,
    send: impl FnMut(&[u8]),
) -> Answered {
    answer_pages(
        servers,
        from,
        now,
        budget,
        MAX_PAGE_BYTES,
        encode_page,
        send,
    )
}

/// Answers `cou2` from `from` with `siz2` and how many servers `count` says (asked only
/// once the answer is within `budget`).
pub fn answer_count(
    count: impl FnOnce() -> usize,
    from: IpAddr,
    now: Instant,
    budget: &ListBudget,
    mut send: impl FnMut(&[u8]),
) -> ListAdmission {
    let admission = budget.charge(now, from, PREAMBLE_LEN + 2);
    if admission == ListAdmission::Answer {
        let mut d = Vec::with_capacity(PREAMBLE_LEN + 2);
        encode_count(count(), &mut d);
        send(&d);
    }
    admission
}

#[cfg(test)]
mod tests {
    use super::super::budget::ListBudgetConfig;
    use super::*;
    use proptest::prelude::*;
    use std::net::Ipv4Addr;

    #[test]
    fn what_qstat_and_the_game_send_decodes() {
        // `quakestat -teem`, observed: its own header, then req2 (and reqt, 0.5's)
        let qstat = b"\x20\x00\x00\x00\x00\x00\xff\xff\xff\xffreq2";
        assert_eq!(Request::decode(qstat).unwrap(), Request::List);
        assert!(is_master_message(qstat));
        assert!(!is_master_message(
            b"\x20\x00\x00\x00\x00\x00\xff\xff\xff\xffreqt"
        ));
        let mut d = Vec::new();
        Request::Count.encode(&mut d);
        assert_eq!(d, b"\xff\xff\xff\xff\xff\xff\xff\xff\xff\xffcou2");
        assert_eq!(Request::decode(&d).unwrap(), Request::Count);
        let mut h = Vec::new();
        Heartbeat { port: 8303 }.encode(&mut h);
        assert_eq!(h, b"\xff\xff\xff\xff\xff\xff\xff\xff\xff\xffbea2\x20\x6f");
        assert_eq!(Heartbeat::decode(&h).unwrap().port, 8303);
        assert!(is_master_message(&h));
        for bad in [
            &b"\xff\xff\xff\xff\xff\xff\xff\xff\xff\xffbea2"[..],
            b"\xff\xff\xff\xff\xff\xff\xff\xff\xff\xffbea2\x00",
            b"\xff\xff\xff\xff\xff\xff\xff\xff\xff\xffbea2\x00\x00",
            b"\xff\xff\xff\xff\xff\xff\xff\xff\xff\xfebea2\x20\x6f",
            b"\xff\xff\xff\xffbea2\x20\x6f",
        ] {
            assert!(Heartbeat::decode(bad).is_err(), "{bad:?}");
        }
        let long = [h.as_slice(), &[0; 60]].concat();
        assert!(Heartbeat::decode(&long).is_err());
        assert!(Request::decode(&[qstat.as_slice(), &[0; 60]].concat()).is_err());
    }

    #[test]
    fn pages_hold_75_entries_of_18_bytes() {
        let servers: Vec<SocketAddr> = (0..200u32)
            .map(|i| SocketAddr::from((Ipv4Addr::from(0x0a00_0000 + i), 8303)))
            .chain(std::iter::once("[2001:db8::1]:8304".parse().unwrap()))
            .collect();
        let mut rest = &servers[..];
        let mut all = Vec::new();
        let mut pages = 0;
        while !rest.is_empty() {
            let mut d = Vec::new();
            let n = encode_page(rest, &mut d);
            assert!(d.len() <= MAX_PAGE_BYTES);
            all.extend(decode_page(&d).unwrap());
            rest = &rest[n..];
            pages += 1;
        }
        assert_eq!((all, pages), (servers, 3));
        let mut d = Vec::new();
        encode_page(&["1.2.3.4:8303".parse().unwrap()], &mut d);
        assert_eq!(
            d,
            b"\xff\xff\xff\xff\xff\xff\xff\xff\xff\xfflis2\
              \0\0\0\0\0\0\0\0\0\0\xff\xff\x01\x02\x03\x04\x20\x6f"
        );
        assert!(decode_page(&d[..d.len() - 1]).is_err(), "cut short");
        assert!(decode_page(b"\xff\xff\xff\xff\xff\xff\xff\xff\xff\xfflis2")
            .unwrap()
            .is_empty());
        let mut c = Vec::new();
        encode_count(70_000, &mut c);
        assert_eq!(decode_count(&c).unwrap(), u16::MAX);
        assert!(decode_count(&c[..c.len() - 1]).is_err());
    }

    #[test]
    fn a_flood_of_requests_is_cut_by_the_budget() {
        let t0 = Instant::now();
        let per_source = 8_000u32;
        let b = ListBudget::new(ListBudgetConfig::new(per_source, u32::MAX), [4; 16], t0);
        let servers: Vec<SocketAddr> = (0..1000u32)
            .map(|i| SocketAddr::from((Ipv4Addr::from(0x0a00_0000 + i), 8303)))
            .collect();
        let victim: IpAddr = "192.0.2.7".parse().unwrap();
        let mut out = 0usize;
        for tick in 0..1000u64 {
            let now = t0 + std::time::Duration::from_millis(tick * 10);
            answer(|| servers.clone(), victim, now, &b, |p| out += p.len());
            answer_count(|| 1000, victim, now, &b, |p| out += p.len());
        }
        let cap = f64::from(per_source) * (4.0 + 10.0);
        assert!((out as f64) <= cap, "{out} bytes out, budget {cap}");
        let b = ListBudget::new(ListBudgetConfig::default(), [4; 16], t0);
        let mut pages = 0;
        let a = answer(|| servers.clone(), victim, t0, &b, |_| pages += 1);
        assert_eq!(
            (a.pages, a.servers, a.complete, pages),
            (14, 1000, true, 14)
        );
    }

    proptest! {
        #[test]
        fn decoders_take_anything(d in proptest::collection::vec(any::<u8>(), 0..2000)) {
            let _ = Request::decode(&d);
            let _ = Heartbeat::decode(&d);
            let _ = decode_count(&d);
            if let Ok(p) = decode_page(&d) {
                prop_assert!(p.len() <= d.len() / ENTRY_LEN);
            }
            let mut with = b"\xff\xff\xff\xff\xff\xff\xff\xff\xff\xfflis2".to_vec();
            with.extend_from_slice(&d);
            let _ = decode_page(&with);
        }
    }
}
