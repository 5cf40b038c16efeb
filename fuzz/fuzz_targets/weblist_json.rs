//! The lists on the web (`ogp_proto::master::weblist::decode`: DDNet's, Minetest's,
//! open.mp's and Steam's `GetServerList` JSON documents) on arbitrary bytes, as
//! `ogp list --ddnet/--minetest/--openmp/--steam` reads a body.
//!
//! Input: `[k: u8]` then the document; `k % 4` picks the list.
//!
//! Asserts: no panic; at most `MAX_SERVERS` servers per address of DDNet's (16 each),
//! every server with its protocol and a servable address, each (protocol, address)
//! once; each entry's JSON object names the same address and protocol.

use std::collections::HashSet;

use ogp_proto::master::list_client::invalid_reason;
use ogp_proto::master::weblist::{decode, WebListKind, MAX_SERVERS};

/// One input of the `weblist_json` target.
pub fn run(data: &[u8]) {
    let Some((&k, body)) = data.split_first() else {
        return;
    };
    let kind = match k % 4 {
        0 => WebListKind::Ddnet,
        1 => WebListKind::Minetest,
        2 => WebListKind::OpenMp,
        _ => WebListKind::Steam,
    };
    let Ok(list) = decode(kind, body) else {
        return;
    };
    let cap = if kind == WebListKind::Ddnet {
        MAX_SERVERS * 16
    } else {
        MAX_SERVERS
    };
    assert!(list.servers.len() <= cap);
    let mut seen = HashSet::new();
    for s in &list.servers {
        let (Some(p), Some(a)) = (s.protocol, s.addr) else {
            panic!("a server without its protocol or address");
        };
        assert!(invalid_reason(a).is_none());
        assert!(seen.insert((p, a)));
        let j = s.to_json();
        assert_eq!(j["addr"].as_str(), Some(a.to_string().as_str()));
        assert_eq!(j["protocols"][0].as_str(), Some(p.name()));
    }
}
