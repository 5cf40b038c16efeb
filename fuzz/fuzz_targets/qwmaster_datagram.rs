//! QuakeWorld's master protocol (`ogp_proto::master::qwmaster`) on arbitrary bytes:
//! what a master reads (heartbeats, shutdowns, list requests, the ping's answer, all
//! classified by the registry) and what `ogp list --qw` reads (answer pages, and the
//! list client fed a sequence of them).
//!
//! Input: the data, tried as a heartbeat, a list request, a ping answer and through
//! `registry::classify`; then with the answer header (`FF FF FF FF d \n`) put before it
//! as a page; then cut at each `\n` into datagrams for the list client, each with the
//! header.
//!
//! Asserts: no panic; a decoded heartbeat re-encodes to one that decodes the same; a
//! decoded page has exactly one entry per 6 bytes and survives paging (pages of at most
//! 1,400 bytes); the list client hands back each server at most once and never more
//! than its cap; the ping machine ends.

use std::collections::HashSet;
use std::net::SocketAddr;
use std::time::{Duration, Instant};

use ogp_fuzz::check_pages;
use ogp_proto::client::QueryDriver;
use ogp_proto::master::list_client::{ListLimits, QwListClient};
use ogp_proto::master::qwmaster::{
    decode_list_request, decode_page, encode_page, is_ping_reply, Heartbeat, PingMachine,
    MAX_PAGE_BYTES, REPLY_HEADER,
};
use ogp_proto::master::registry::classify;

/// One input of the `qwmaster_datagram` target.
pub fn run(data: &[u8]) {
    if let Ok(h) = Heartbeat::decode(data) {
        let mut out = Vec::new();
        h.encode(&mut out);
        assert_eq!(Heartbeat::decode(&out), Ok(h));
    }
    let _ = decode_list_request(data);
    let _ = classify(data);
    let t0 = Instant::now();
    let mut m = PingMachine::new(Default::default(), t0);
    let _ = m.poll_transmit(t0);
    m.handle_datagram(t0, data);
    assert_eq!(m.take_result().is_some(), is_ping_reply(data));
    let d = [&REPLY_HEADER[..], data].concat();
    if let Ok(p) = decode_page(&d) {
        assert_eq!(p.servers.len() * 6, data.len());
        let servers: Vec<SocketAddr> = p.servers.iter().copied().map(SocketAddr::V4).collect();
        let encode = |rest: &[SocketAddr], _end, out: &mut Vec<u8>| {
            let n = encode_page(rest, out);
            assert!(out.len() <= MAX_PAGE_BYTES);
            n
        };
        check_pages(&servers, true, encode, |out| {
            let back = decode_page(out).unwrap();
            (back.servers.into_iter().map(SocketAddr::V4).collect(), true)
        });
    }
    let mut limits = ListLimits::new(Duration::from_secs(60), Duration::from_secs(2));
    limits.max_servers = 50;
    limits.max_pages = 8;
    let mut c = QwListClient::new(limits, t0);
    let _ = c.poll_transmit(t0, &mut Vec::new());
    let mut seen = HashSet::new();
    for part in data.split(|&b| b == b'\n') {
        let d = [&REPLY_HEADER[..], part].concat();
        match c.handle_datagram(&d, t0) {
            Ok(Some(p)) => {
                for a in p.servers {
                    assert!(seen.insert(a), "{a} twice");
                }
            }
            Ok(None) => {}
            Err(_) => break,
        }
        assert!(seen.len() <= 50);
        if c.is_finished() {
            break;
        }
    }
}
