//! dpmaster's list pages (`ogp_proto::master::dpmaster::decode_page`) on arbitrary
//! bytes, as `ogp list` reads them from a master, and the list client
//! (`DpListClient`) fed the same bytes as a sequence of pages.
//!
//! Input: `[k: u8]` then the data. `k & 1` picks the header (`getserversResponse` or
//! `getserversExtResponse`) put before the data; the data is also cut at each `\n` into
//! datagrams for the list client.
//!
//! Asserts: no panic; a decoded page has at most one entry per 7 bytes, IPv6 entries
//! only in Ext pages, and re-encodes (in pages of at most 1,400 bytes) to the same
//! servers and end; the list client hands back each server at most once and never more
//! than its cap.

use std::collections::HashSet;
use std::time::{Duration, Instant};

use ogp_fuzz::check_pages;
use ogp_proto::master::dpmaster::{decode_page, encode_page, ServersRequest, MAX_PAGE_BYTES};
use ogp_proto::master::list_client::{DpListClient, ListLimits};

/// One input of the `dpmaster_page` target.
pub fn run(data: &[u8]) {
    let Some((&k, data)) = data.split_first() else {
        return;
    };
    let ext = k & 1 == 1;
    let header: &[u8] = if ext {
        b"\xff\xff\xff\xffgetserversExtResponse"
    } else {
        b"\xff\xff\xff\xffgetserversResponse"
    };
    let d = [header, data].concat();
    if let Ok(p) = decode_page(&d) {
        assert_eq!(p.ext, ext);
        assert!(p.servers.len() <= data.len() / 7);
        assert!(ext || p.servers.iter().all(|a| a.is_ipv4()));
        let encode = |rest: &[_], end, out: &mut Vec<u8>| {
            let n = encode_page(ext, rest, end, out);
            assert!(out.len() <= MAX_PAGE_BYTES);
            n
        };
        check_pages(&p.servers, p.end, encode, |out| {
            let back = decode_page(out).unwrap();
            (back.servers, back.end)
        });
    }
    let t0 = Instant::now();
    let mut limits = ListLimits::new(Duration::from_secs(60), Duration::from_secs(2));
    limits.max_servers = 50;
    limits.max_pages = 8;
    let mut c = DpListClient::new(ServersRequest::new(ext, Some("g"), 1), limits, t0);
    let _ = c.poll_transmit(t0, &mut Vec::new());
    let mut seen = HashSet::new();
    for part in data.split(|&b| b == b'\n') {
        let d = [header, part].concat();
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
    }
}
