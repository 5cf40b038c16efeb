//! The Teeworlds 0.7 master protocol (`ogp_proto::master::teemaster7`), its list client
//! (`Tw7ListClient`) and the registry's `classify` on arbitrary bytes.
//!
//! Input: the first byte chooses; the rest is a datagram (with bit 1 set, a
//! connectionless header to token 7 and `FF FF FF FF` added before it, so that most
//! inputs reach the words).
//!
//! Asserts: no panic; a decoded token request is at least 520 bytes; a decoded
//! heartbeat or request re-encodes to a datagram that decodes to the same; an answer's
//! page holds at most one entry per 18 bytes and re-encodes to the same entries; a token
//! of ours checks for its address and not for another; the list client, given our token
//! and fed the input cut at each `FE` as datagrams, hands back at most its cap of
//! servers.

use std::net::SocketAddr;
use std::time::{Duration, Instant};

use ogp_proto::master::list_client::{ListLimits, Tw7ListClient};
use ogp_proto::master::registry::classify;
use ogp_proto::master::teemaster::ENTRY_LEN;
use ogp_proto::master::teemaster7::{
    decode_answer, encode_heartbeat, encode_page, encode_request, encode_token_reply, Answer,
    Message, Tokens,
};

/// One input of the `teemaster7` target.
pub fn run(data: &[u8]) {
    let Some((&k, data)) = data.split_first() else {
        return;
    };
    let mut d = Vec::new();
    if k & 2 != 0 {
        d.extend_from_slice(b"\x21\x00\x00\x00\x07\x00\x00\x00\x09\xff\xff\xff\xff");
    }
    d.extend_from_slice(data);
    let _ = classify(&d);
    match Message::decode(&d) {
        Ok(Message::TokenRequest { .. }) => assert!(d.len() >= 520),
        Ok(
            m @ Message::Heartbeat {
                to,
                from,
                heartbeat,
            },
        ) => {
            assert_ne!(heartbeat.port, 0);
            let mut out = Vec::new();
            encode_heartbeat(heartbeat, to, from, &mut out);
            assert_eq!(Message::decode(&out), Ok(m));
        }
        Ok(m @ Message::Request { to, from, request }) => {
            let mut out = Vec::new();
            encode_request(request, to, from, &mut out);
            assert_eq!(Message::decode(&out), Ok(m));
        }
        Err(_) => {}
    }
    if let Some(Ok(Answer::Page(p))) = decode_answer(&d, 7) {
        assert!(p.len() <= d.len() / ENTRY_LEN);
        let mut out = Vec::new();
        let n = encode_page(&p, 7, 9, &mut out);
        assert_eq!(
            decode_answer(&out, 7),
            Some(Ok(Answer::Page(p[..n].to_vec())))
        );
    }
    // tokens: the input's first bytes as an address
    let t0 = Instant::now();
    let tokens = Tokens::new([k; 16], t0);
    let port = u16::from_be_bytes([
        d.first().copied().unwrap_or(0),
        d.get(1).copied().unwrap_or(0),
    ]);
    let a = SocketAddr::from(([127, 0, 0, k], port));
    let b = SocketAddr::from(([127, 0, 0, k], port.wrapping_add(1)));
    let t = tokens.token(a, t0);
    assert!(tokens.check(a, t, t0));
    assert_ne!(t, u32::MAX);
    let _ = tokens.check(b, t, t0);
    // the client, our token 7: given the master's token, then the input cut at each `FE`
    let mut limits = ListLimits::new(Duration::from_secs(5), Duration::from_secs(1));
    limits.max_servers = 100;
    limits.max_pages = 50;
    let mut c = Tw7ListClient::new(7, limits, t0);
    let mut out = Vec::new();
    let _ = c.poll_transmit(t0, &mut out);
    let mut reply = Vec::new();
    encode_token_reply(7, 9, &mut reply);
    let _ = c.handle_datagram(&reply, t0);
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
