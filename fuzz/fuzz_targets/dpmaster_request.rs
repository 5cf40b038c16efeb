//! dpmaster's requests (`ogp_proto::master::dpmaster`): heartbeats and `getservers` /
//! `getserversExt` list requests on arbitrary bytes, as a master's UDP port reads them.
//!
//! Input: the datagram, prefixed with `FF FF FF FF` and, when the first byte is odd,
//! with `getservers` (so that most inputs reach the option parser).
//!
//! Asserts: no panic; a decoded request has at most 64-byte names and re-encodes to a
//! datagram that decodes to the same request; a decoded heartbeat has a tag of at most
//! 64 printable bytes and re-encodes to itself; a request is one or the other, never
//! both.

use ogp_proto::master::dpmaster::{
    is_heartbeat, is_list_request, Heartbeat, ServersRequest, MAX_NAME, MAX_TAG,
};

/// One input of the `dpmaster_request` target.
pub fn run(data: &[u8]) {
    let Some((&k, data)) = data.split_first() else {
        return;
    };
    let mut d = vec![0xff; 4];
    if k & 1 == 1 {
        d.extend_from_slice(b"getservers");
    }
    d.extend_from_slice(data);
    assert!(!(is_heartbeat(&d) && is_list_request(&d)));
    if let Ok(r) = ServersRequest::decode(&d) {
        assert!(r.game.as_ref().is_none_or(|g| g.len() <= MAX_NAME));
        assert!(r.gametype.as_ref().is_none_or(|g| g.len() <= MAX_NAME));
        let mut out = Vec::new();
        r.encode(&mut out);
        assert_eq!(ServersRequest::decode(&out).as_ref(), Ok(&r));
    }
    if let Ok(h) = Heartbeat::decode(&d) {
        assert!(h.tag.len() <= MAX_TAG && h.tag.bytes().all(|b| b.is_ascii_graphic()));
        let mut out = Vec::new();
        h.encode(&mut out);
        assert_eq!(Heartbeat::decode(&out).as_ref(), Ok(&h));
    }
}
