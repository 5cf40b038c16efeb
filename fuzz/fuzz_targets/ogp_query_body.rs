//! Default Query v1 request bodies: `DefaultQuery::decode` on arbitrary bytes.
//!
//! Asserts: no panic; errors point into the body; trailing bytes are within the body; the
//! minimal re-encoding is no longer than what was read and decodes to the same query with
//! no trailing bytes; masks whose dependency bit is clear are empty.

use ogp_fuzz::check_error;
use ogp_proto::ogp::query::{request, server_info};
use ogp_proto::ogp::{Bits, DefaultQuery};

/// One input of the `ogp_query_body` target.
pub fn run(data: &[u8]) {
    let d = match DefaultQuery::decode(data) {
        Ok(d) => d,
        Err(e) => {
            check_error(&e, 0, data.len());
            return;
        }
    };
    assert!(d.trailing <= data.len());
    let q = d.query;
    let dep = |mask: Bits, on: bool| assert!(on || mask.is_empty(), "mask without its bit");
    dep(q.server_info, q.request.contains(request::SERVER_INFO));
    dep(q.mod_fields, q.server_info.contains(server_info::MOD));
    dep(q.map_fields, q.server_info.contains(server_info::MAP));
    dep(q.team_fields, q.request.contains(request::TEAM_LIST));
    dep(q.player_fields, q.request.contains(request::PLAYER_LIST));
    dep(q.addon_fields, q.request.contains(request::ADDON_LIST));

    let mut body = Vec::new();
    q.encode(&mut body);
    assert!(
        body.len() <= data.len() - d.trailing,
        "re-encoding is longer than the input"
    );
    let d2 = DefaultQuery::decode(&body).expect("re-encoded query must decode");
    assert_eq!(d2.query, q, "query round trip");
    assert_eq!(d2.trailing, 0);
}
