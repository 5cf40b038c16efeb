//! The Teeworlds 0.6 master protocol (`ogp_proto::master::teemaster`), its list client
//! (`TwListClient`) and DDNet's HTTP registration headers
//! (`ogp_proto::master::ddnet_register`) on arbitrary bytes.
//!
//! Input: the first byte chooses; the rest is a datagram (its 6-byte packet header and
//! `FF FF FF FF` added when the first byte's bit 1 is set, so that most inputs reach the
//! words), or, with bit 2, lines `NAME: VALUE` taken as a registration's headers.
//!
//! Asserts: no panic; a decoded request, heartbeat or count re-encodes to a datagram
//! that decodes to the same; a page holds at most one entry per 18 bytes and re-encodes
//! to the same entries; the list client, fed the input as datagrams, never hands back
//! more distinct servers than its cap; a registration decision's challenge goes only to
//! the requester's IP, within `MAX_CHALLENGE_BYTES`.

use std::net::{IpAddr, SocketAddr};
use std::time::{Duration, Instant};

use ogp_proto::master::ddnet_register::{
    Challenges, Decision, RegisterRequest, MAX_CHALLENGE_BYTES,
};
use ogp_proto::master::list_client::{ListLimits, TwListClient};
use ogp_proto::master::teemaster::{
    decode_count, decode_page, encode_count, encode_page, Heartbeat, Request, ENTRY_LEN,
};

/// One input of the `teemaster` target.
pub fn run(data: &[u8]) {
    let Some((&k, data)) = data.split_first() else {
        return;
    };
    if k & 4 != 0 {
        headers(data);
        return;
    }
    let mut d = Vec::new();
    if k & 2 != 0 {
        d.extend_from_slice(&[0xff; 10]);
    }
    d.extend_from_slice(data);
    if let Ok(r) = Request::decode(&d) {
        let mut out = Vec::new();
        r.encode(&mut out);
        assert_eq!(Request::decode(&out), Ok(r));
    }
    if let Ok(h) = Heartbeat::decode(&d) {
        assert_ne!(h.port, 0);
        let mut out = Vec::new();
        h.encode(&mut out);
        assert_eq!(Heartbeat::decode(&out), Ok(h));
    }
    if let Ok(n) = decode_count(&d) {
        let mut out = Vec::new();
        encode_count(usize::from(n), &mut out);
        assert_eq!(decode_count(&out), Ok(n));
    }
    if let Ok(p) = decode_page(&d) {
        assert!(p.len() <= d.len() / ENTRY_LEN);
        let mut out = Vec::new();
        let n = encode_page(&p, &mut out);
        assert_eq!(decode_page(&out).ok(), Some(p[..n].to_vec()));
    }
    // the client, fed the input cut into datagrams at each `FE`
    let t0 = Instant::now();
    let mut limits = ListLimits::new(Duration::from_secs(5), Duration::from_secs(1));
    limits.max_servers = 100;
    limits.max_pages = 50;
    let mut c = TwListClient::new(limits, t0);
    let mut out = Vec::new();
    let _ = c.poll_transmit(t0, &mut out);
    let _ = c.poll_transmit(t0, &mut out);
    let mut servers = std::collections::HashSet::new();
    for chunk in d.split(|&b| b == 0xfe) {
        match c.handle_datagram(chunk, t0) {
            Ok(Some(p)) => servers.extend(p.servers),
            Ok(None) => {}
            Err(_) => break,
        }
    }
    assert!(servers.len() <= 100);
}

/// Lines `NAME: VALUE` as a registration's headers, from 127.0.0.1.
fn headers(data: &[u8]) {
    let lines: Vec<(&[u8], &[u8])> = data
        .split(|&b| b == b'\n')
        .filter_map(|l| {
            let at = l.iter().position(|&b| b == b':')?;
            let (name, value) = l.split_at(at);
            Some((name, value.get(1..).unwrap_or_default()))
        })
        .collect();
    let Ok(r) = RegisterRequest::from_headers(|name| {
        lines
            .iter()
            .find(|(n, _)| n.eq_ignore_ascii_case(name.as_bytes()))
            .map(|(_, v)| *v)
    }) else {
        return;
    };
    let peer = IpAddr::from([127, 0, 0, 1]);
    match Challenges::new([7; 16]).decide(&r, peer) {
        Decision::Challenge { to, datagram } => {
            assert_eq!(to, SocketAddr::new(peer, r.port));
            assert!(datagram.len() <= MAX_CHALLENGE_BYTES);
        }
        Decision::Register(to) | Decision::Register7(to) => assert_eq!(to.ip(), peer),
        Decision::Deleted | Decision::Refused(_) => {}
    }
}
