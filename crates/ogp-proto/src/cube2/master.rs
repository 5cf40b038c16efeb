//! The Cube 2 masters' list over TCP, as Red Eclipse's and Sauerbraten's masters answer
//! it: the client sends `list\n`, the master answers one line per server and closes the
//! connection. Red Eclipse 1.6: `clearservers`, then `addserver IP PORT PRIORITY "DESC"
//! "HANDLE" "FLAGS" "BRANCH"`; Sauerbraten: `addserver IP PORT`. The port is the game
//! port (the query port is one up). [`crate::master::list_client::Cube2ListClient`]
//! reads it, bounded.

use std::net::{IpAddr, SocketAddr};

/// What a client sends.
pub const LIST_REQUEST: &[u8] = b"list\n";

/// The longest line read (Red Eclipse's carry a description, a handle and a branch).
pub const MAX_LINE: usize = 1024;

/// The server an `addserver IP PORT …` line names (its game port); `None` for any other
/// line (`clearservers`, and lines that do not parse).
pub fn decode_line(line: &[u8]) -> Option<SocketAddr> {
    let text = std::str::from_utf8(line).ok()?;
    let mut words = text.split_ascii_whitespace();
    if words.next()? != "addserver" {
        return None;
    }
    let ip: IpAddr = words.next()?.parse().ok()?;
    let port: u16 = words.next()?.parse().ok()?;
    Some(SocketAddr::new(ip, port))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lines() {
        assert_eq!(
            decode_line(br#"addserver 127.0.0.1 40011 0 "My RE" "" "" "?""#),
            Some("127.0.0.1:40011".parse().unwrap())
        );
        assert_eq!(
            decode_line(b"addserver 192.0.2.7 28785\r"),
            Some("192.0.2.7:28785".parse().unwrap())
        );
        for l in [
            &b"clearservers"[..],
            b"addserver x 1",
            b"addserver 1.2.3.4 99999",
            b"addserver 1.2.3.4",
            b"\xff",
        ] {
            assert_eq!(decode_line(l), None);
        }
    }
}
