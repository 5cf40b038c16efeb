//! The Cube 2 master's side of its TCP protocol: the connection reader ([`Session`]),
//! the list it answers and the list client's line decoder.
//!
//! Input: the first byte sets the size of the chunks (1 to 256 bytes) the rest is fed
//! in, as a client's segments; each chunk arrives a second after the one before.
//!
//! Asserts: no panic; the reader stops with an error at the first line over
//! `MAX_INPUT_LINE` bytes and never takes more lines than its budgets let in (lines
//! that act and the others); a registration names a port from 1 to 65,534, and one
//! connection never registers two; the list written from the registrations (both games'
//! forms) is read back by `decode_line`, server for server, every line at most
//! `MAX_LINE` bytes.

use std::net::{IpAddr, Ipv4Addr, SocketAddr};
use std::time::{Duration, Instant};

use ogp_proto::cube2::master::{
    decode_line, encode_list, Command, Listed, MasterDialect, Session, LINES_PER_SECOND,
    LINE_BURST, MAX_INPUT_LINE, MAX_LINE, OTHER_LINES_PER_SECOND, OTHER_LINE_BURST,
};

/// One input of the `cube2_master_stream` target.
pub fn run(data: &[u8]) {
    let Some((&size, stream)) = data.split_first() else {
        return;
    };
    let size = usize::from(size).max(1);
    let t0 = Instant::now();
    let peer = IpAddr::V4(Ipv4Addr::new(192, 0, 2, 7));
    let mut s = Session::new(peer, t0);
    let mut commands = Vec::new();
    let mut port = None;
    let mut chunks = 0u64;
    let mut failed = false;
    for chunk in stream.chunks(size) {
        let now = t0 + Duration::from_secs(chunks);
        chunks += 1;
        let before = commands.len();
        let r = s.push(now, chunk, &mut commands);
        for c in commands.get(before..).unwrap_or_default() {
            if let Command::Register(r) = c {
                assert!((1..u16::MAX).contains(&r.port));
                assert!(port.is_none_or(|p| p == r.port), "two ports");
                port = Some(r.port);
            }
        }
        let secs = chunks as f32;
        let budget = LINE_BURST
            + LINES_PER_SECOND * secs
            + OTHER_LINE_BURST
            + OTHER_LINES_PER_SECOND * secs
            + 2.0;
        assert!((s.lines() as f32) <= budget, "{} lines", s.lines());
        if r.is_err() {
            failed = true;
            break;
        }
    }
    // a line over the cap never passes: without an error, every line fit
    if !failed {
        let longest = stream
            .split(|&b| b == b'\n' || b == 0)
            .map(<[u8]>::len)
            .max()
            .unwrap_or(0);
        assert!(
            longest <= MAX_INPUT_LINE + 1,
            "a {longest}-byte line passed"
        );
    }
    let servers: Vec<Listed> = commands
        .iter()
        .enumerate()
        .filter_map(|(i, c)| match c {
            Command::Register(r) => Some(Listed::new(
                SocketAddr::new(peer, r.port),
                if i % 2 == 0 {
                    MasterDialect::Sauerbraten
                } else {
                    MasterDialect::RedEclipse
                },
                String::from_utf8_lossy(stream.get(..stream.len().min(300)).unwrap_or_default()),
            )),
            _ => None,
        })
        .collect();
    let mut out = Vec::new();
    encode_list(&servers, &mut out);
    let lines: Vec<&[u8]> = out.split(|&b| b == b'\n').collect();
    assert!(
        lines.iter().all(|l| l.len() <= MAX_LINE),
        "a list line over MAX_LINE"
    );
    let read: Vec<SocketAddr> = lines.into_iter().filter_map(decode_line).collect();
    let want: Vec<SocketAddr> = servers.iter().map(|l| l.addr).collect();
    assert_eq!(read, want);
}
