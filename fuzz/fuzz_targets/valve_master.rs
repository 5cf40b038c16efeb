//! Valve's Master Server Query Protocol: list requests, list replies and filter strings
//! (`ogp_proto::master::valve`) on arbitrary bytes.
//!
//! Input: `[k: u8]` then the data. `k & 3` picks what the data is: 0 a request datagram,
//! 1 a reply datagram, 2 a filter string (lossy UTF-8) matched against a fixed status,
//! and, split at its first newline, a pattern and a text for [`Glob`], 3 a seed and a
//! list to page through.
//!
//! Asserts: no panic; a decoded request re-encodes to a datagram that decodes to the same
//! request, with a filter of at most 1024 bytes; a decoded reply has at most one entry per
//! 6 bytes and re-encodes (in pages) to the same servers; a parsed filter has at most 64
//! conditions at the top level and matching it terminates; a [`Glob`] matches exactly when
//! a matcher by dynamic programming over every pair of positions does; pages are
//! ascending, after the seed, at most the page size, and `end` exactly when nothing is
//! left.

use std::net::{Ipv4Addr, SocketAddr, SocketAddrV4};

use ogp_fuzz::check_pages;
use ogp_proto::master::valve::{
    decode_page, encode_page, page_after, sortable, Filter, Glob, ListRequest, MAX_CONDITIONS,
    MAX_ENTRIES_PER_PAGE, MAX_FILTER_BYTES,
};

/// Whether `t` matches `p` (`*` matches any run of bytes), by dynamic programming over
/// every pair of positions: slow, obviously right.
fn reference(p: &[u8], t: &[u8]) -> bool {
    let mut m = vec![vec![false; t.len() + 1]; p.len() + 1];
    m[p.len()][t.len()] = true;
    for i in (0..p.len()).rev() {
        for j in (0..=t.len()).rev() {
            m[i][j] = if p[i] == b'*' {
                m[i + 1][j] || (j < t.len() && m[i][j + 1])
            } else {
                j < t.len() && p[i] == t[j] && m[i + 1][j + 1]
            };
        }
    }
    m[0][0]
}
use ogp_proto::Status;

/// One input of the `valve_master` target.
pub fn run(data: &[u8]) {
    let Some((&k, data)) = data.split_first() else {
        return;
    };
    match k & 3 {
        0 => {
            if let Ok(r) = ListRequest::decode(data) {
                assert!(r.filter.len() <= MAX_FILTER_BYTES);
                let mut out = Vec::new();
                r.encode(&mut out);
                assert_eq!(ListRequest::decode(&out).as_ref(), Ok(&r));
            }
        }
        1 => {
            if let Ok(p) = decode_page(data) {
                assert!(p.servers.len() <= data.len() / 6);
                check_pages(&p.servers, p.end, encode_page, |out| {
                    let back = decode_page(out).unwrap();
                    (back.servers, back.end)
                });
            }
        }
        2 => {
            let s = String::from_utf8_lossy(data);
            if let Ok(f) = Filter::parse(&s) {
                assert!(f.conditions.len() <= MAX_CONDITIONS);
                let status = Status::from_json(
                    r#"{"host_name":"fuzz*server","player_count":1,"slot_max":2,
                        "a2s":{"folder":"tf","app_id":440,"keywords":"a,b"}}"#,
                )
                .unwrap();
                let _ = f.matches("10.0.0.1:27015".parse::<SocketAddr>().unwrap(), &status);
            }
            if let Some((p, t)) = s.split_once('\n') {
                if p.len() <= 256 && t.len() <= 256 {
                    let want = reference(p.as_bytes(), t.as_bytes());
                    assert_eq!(Glob::new(p).matches(t), want, "{p:?} {t:?}");
                }
            }
        }
        _ => {
            let Some((seed, list)) = data.split_at_checked(6) else {
                return;
            };
            let entry = |b: &[u8]| {
                SocketAddrV4::new(
                    Ipv4Addr::new(b[0], b[1], b[2], b[3]),
                    u16::from_be_bytes([b[4], b[5]]),
                )
            };
            let seed = entry(seed);
            let mut all: Vec<SocketAddrV4> = list.chunks_exact(6).map(entry).collect();
            all.sort_by_key(|a| sortable(*a));
            all.dedup();
            let max = usize::from(k >> 2).clamp(1, MAX_ENTRIES_PER_PAGE);
            let (page, end) = page_after(&all, seed, max);
            assert!(page.len() <= max);
            assert!(page.windows(2).all(|w| sortable(w[0]) < sortable(w[1])));
            if seed != ogp_proto::master::valve::END {
                assert!(page.iter().all(|a| sortable(*a) > sortable(seed)));
            }
            let left = all
                .iter()
                .filter(|a| seed == ogp_proto::master::valve::END || sortable(**a) > sortable(seed))
                .count();
            assert_eq!(end, page.len() == left);
        }
    }
}
