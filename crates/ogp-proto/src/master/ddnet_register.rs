//! DDNet's HTTP registration (DDNet 16's `sv_register_url`, by default
//! `https://master1.ddnet.org/ddnet/15/register`), the master's side, sans-IO.
//!
//! A DDNet server POSTs, every few seconds and on each change, to the URL with headers
//! (observed from DDNet 16.4):
//!
//! * `Address: tw-0.6+udp://connecting-address.invalid:8303` (and a second request with
//!   `tw-0.7+udp://…` and a `Connless-Token`): the scheme and the UDP port; the host is
//!   the address the request comes from.
//! * `Secret`: a UUID naming the server; `Challenge-Secret`: a UUID and `:tw0.6/ipv4`;
//!   `Info-Serial`; and, once it has one, `Challenge-Token`.
//! * a JSON body with its name, map, clients… (not needed: the master polls the server).
//! * `Action: delete` when it shuts down.
//!
//! The master answers JSON `{"status": "success"}`, `"need_challenge"` or `"error"`.
//! The challenge proves the UDP port: the master sends, to the requester's IP and the
//! port named, the connectionless `chal` packet (`FF`×10, `chal`, the challenge secret
//! and a token, each NUL-terminated); the server posts again with that token.
//!
//! A `tw-0.7+udp` address (DDNet's 0.7 side, on the same port) carries `Connless-Token`:
//! eight hexadecimal digits, the server's 0.7 token for the master. Its `chal` is a 0.7
//! connectionless packet to that token (`21`, the token, `FF FF FF FF` for "no token of
//! ours", then `FF FF FF FF chal` and the same two strings), as DDNet's own master sends
//! it; without the header the request is refused (400), as DDNet's master refuses it.
//!
//! [`Challenges::decide`] does the master's part: a request without the right token is
//! answered by a challenge datagram; one with it is a registration of `IP:PORT`, which
//! the master then verifies as every Teeworlds 0.6 server, by `gie3` with its own
//! token (the [`registry`](super::registry)), before listing it (a `tw-0.7+udp` one is
//! [`Decision::Register7`]). The token is a keyed
//! hash of our secret, the requester's IP, the port and the challenge secret: nothing
//! is kept per request. The HTTP request itself proves the IP (a TCP connection cannot
//! come from a spoofed address), and the host may only be `connecting-address.invalid`
//! or that IP: nobody registers an address other than their own. A `chal` goes only to
//! the IP that connected, at most [`MAX_CHALLENGE_BYTES`] long.

use std::hash::Hasher as _;
use std::net::{IpAddr, SocketAddr};

use siphasher::sip128::{Hasher128 as _, SipHasher24};

use super::addr::canonical_ip;
use super::teemaster::HEADER;

/// The path DDNet posts to (the master's part of `sv_register_url`).
pub const PATH: &str = "/ddnet/15/register";

/// Longest header value taken (DDNet's are at most about 60 bytes).
pub const MAX_HEADER: usize = 256;

/// Longest challenge secret taken.
pub const MAX_SECRET: usize = 128;

/// Largest body read (DDNet's info with 64 clients is a few kilobytes).
pub const MAX_BODY_BYTES: usize = 64 << 10;

/// Largest `chal` datagram sent: the preamble (14 bytes; 0.7's 17), a challenge secret
/// of at most [`MAX_SECRET`] bytes, a token of 32, two NULs.
pub const MAX_CHALLENGE_BYTES: usize = 17 + MAX_SECRET + 32 + 2;

/// The host DDNet names to mean "the address this request comes from".
pub const CONNECTING_ADDRESS: &str = "connecting-address.invalid";

/// The game protocol of a registered address.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Scheme {
    /// `tw-0.6+udp`.
    Tw06,
    /// `tw-0.7+udp`.
    Tw07,
}

/// A registration request, as its headers say.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RegisterRequest {
    /// The address's scheme.
    pub scheme: Scheme,
    /// The address's host, when it is an IP (`None`: `connecting-address.invalid`).
    pub host: Option<IpAddr>,
    /// The UDP port.
    pub port: u16,
    /// `Challenge-Secret` (printable ASCII, at most [`MAX_SECRET`] bytes).
    pub challenge_secret: Option<String>,
    /// `Challenge-Token`.
    pub challenge_token: Option<String>,
    /// `Action: delete`.
    pub delete: bool,
    /// `Connless-Token` (a `tw-0.7+udp` address's: the server's 0.7 token).
    pub connless_token: Option<u32>,
}

/// Why a request was refused (the `message` of the `error` answer).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Refused(pub &'static str);

impl std::fmt::Display for Refused {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.0)
    }
}

impl std::error::Error for Refused {}

fn text(v: &[u8], max: usize) -> Option<&str> {
    if v.len() > max || !v.iter().all(|b| b.is_ascii_graphic()) {
        return None;
    }
    std::str::from_utf8(v).ok()
}

impl RegisterRequest {
    /// Reads the headers (`header(name)` gives a header's value, names as DDNet spells
    /// them; the caller's lookup may ignore case).
    pub fn from_headers<'a>(header: impl Fn(&str) -> Option<&'a [u8]>) -> Result<Self, Refused> {
        let address = header("Address").ok_or(Refused("no Address header"))?;
        let address = text(address, MAX_HEADER).ok_or(Refused("Address: not a short URL"))?;
        let (scheme, rest) = address
            .split_once("://")
            .ok_or(Refused("Address: no scheme"))?;
        let scheme = match scheme {
            "tw-0.6+udp" => Scheme::Tw06,
            "tw-0.7+udp" => Scheme::Tw07,
            _ => return Err(Refused("Address: not a tw-0.6+udp or tw-0.7+udp address")),
        };
        let (host, port) = rest.rsplit_once(':').ok_or(Refused("Address: no port"))?;
        let port: u16 = port
            .parse()
            .ok()
            .filter(|&p| p != 0)
            .ok_or(Refused("Address: not a port from 1 to 65535"))?;
        let host = if host == CONNECTING_ADDRESS {
            None
        } else {
            let bare = host
                .strip_prefix('[')
                .and_then(|h| h.strip_suffix(']'))
                .unwrap_or(host);
            Some(bare.parse().map_err(|_| {
                Refused("Address: the host is neither an IP nor connecting-address.invalid")
            })?)
        };
        let optional = |name: &str, max: usize| match header(name) {
            None => Ok(None),
            Some(v) => text(v, max)
                .map(|t| Some(t.to_owned()))
                .ok_or(Refused("a header that is not short printable ASCII")),
        };
        let connless_token = match header("Connless-Token") {
            None => None,
            Some(v) => Some(
                text(v, 8)
                    .filter(|t| t.len() == 8)
                    .and_then(|t| u32::from_str_radix(t, 16).ok())
                    .ok_or(Refused("Connless-Token: not 8 hexadecimal digits"))?,
            ),
        };
        let delete = match header("Action") {
            None => false,
            Some(b"delete") => true,
            Some(_) => return Err(Refused("Action: only delete is known")),
        };
        Ok(Self {
            scheme,
            host,
            port,
            challenge_secret: optional("Challenge-Secret", MAX_SECRET)?,
            challenge_token: optional("Challenge-Token", MAX_HEADER)?,
            delete,
            connless_token,
        })
    }
}

/// What to do with a request.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Decision {
    /// The token is right: verify `IP:PORT` (by `gie3`) and list it if it answers;
    /// answer `success`.
    Register(SocketAddr),
    /// The token is right for a `tw-0.7+udp` address: answer `success`. `ogp master`
    /// notes it only: DDNet serves 0.7 on the port of its 0.6 side, whose registration
    /// verifies and lists the server (one address is one verification: verifying both
    /// at once would race), and the polls learn that it speaks 0.7.
    Register7(SocketAddr),
    /// Send `datagram` to `to` over UDP and answer `need_challenge`.
    Challenge {
        /// The requester's IP and the port named.
        to: SocketAddr,
        /// The `chal` packet.
        datagram: Vec<u8>,
    },
    /// `Action: delete`: nothing to do (the server's polls find it gone); answer
    /// `success`.
    Deleted,
    /// Answer `error` with the reason.
    Refused(Refused),
}

impl Decision {
    /// The HTTP status and the JSON body to answer.
    pub fn response(&self) -> (u16, String) {
        let status = |s: &str| format!("{{\"status\":\"{s}\"}}");
        match self {
            Self::Register(_) | Self::Register7(_) | Self::Deleted => (200, status("success")),
            Self::Challenge { .. } => (200, status("need_challenge")),
            Self::Refused(r) => (
                400,
                serde_json::json!({"status": "error", "message": r.0}).to_string(),
            ),
        }
    }
}

/// Makes and checks challenge tokens (see the module docs).
#[derive(Debug, Clone)]
pub struct Challenges {
    key: [u8; 16],
}

impl Challenges {
    /// Tokens keyed by `secret` (pick it at random, once per process).
    pub fn new(secret: [u8; 16]) -> Self {
        Self { key: secret }
    }

    /// The token for a server at `ip`, `port` with `challenge_secret`: 32 hexadecimal
    /// digits.
    pub fn token(&self, ip: IpAddr, port: u16, challenge_secret: &str) -> String {
        let mut h = SipHasher24::new_with_key(&self.key);
        match canonical_ip(ip) {
            IpAddr::V4(v4) => h.write(&v4.octets()),
            IpAddr::V6(v6) => h.write(&v6.octets()),
        }
        h.write(&port.to_be_bytes());
        h.write(challenge_secret.as_bytes());
        format!("{:032x}", h.finish128().as_u128())
    }

    /// What to do with `request`, which came from `peer` (the HTTP connection's IP).
    pub fn decide(&self, request: &RegisterRequest, peer: IpAddr) -> Decision {
        let peer = canonical_ip(peer);
        if let Some(host) = request.host {
            if canonical_ip(host) != peer {
                return Decision::Refused(Refused(
                    "Address: only the address the request comes from can be registered",
                ));
            }
        }
        if request.delete {
            return Decision::Deleted;
        }
        let seven = match (request.scheme, request.connless_token) {
            (Scheme::Tw06, _) => None,
            (Scheme::Tw07, Some(t)) => Some(t),
            (Scheme::Tw07, None) => {
                return Decision::Refused(Refused(
                    "registering with tw-0.7+udp:// requires header Connless-Token",
                ))
            }
        };
        let to = SocketAddr::new(peer, request.port);
        let Some(secret) = request.challenge_secret.as_deref() else {
            return Decision::Refused(Refused("no Challenge-Secret header"));
        };
        let want = self.token(peer, request.port, secret);
        match request.challenge_token.as_deref() {
            Some(got) if same(got.as_bytes(), want.as_bytes()) => match seven {
                None => Decision::Register(to),
                Some(_) => Decision::Register7(to),
            },
            _ => {
                let mut datagram = Vec::with_capacity(MAX_CHALLENGE_BYTES);
                match seven {
                    None => datagram.extend_from_slice(&HEADER),
                    Some(t) => {
                        datagram.push(crate::teeworlds::wire::CONNLESS7);
                        datagram.extend_from_slice(&t.to_be_bytes());
                        datagram.extend_from_slice(&[0xff; 4]);
                    }
                }
                datagram.extend_from_slice(b"\xff\xff\xff\xffchal");
                datagram.extend_from_slice(secret.as_bytes());
                datagram.push(0);
                datagram.extend_from_slice(want.as_bytes());
                datagram.push(0);
                Decision::Challenge { to, datagram }
            }
        }
    }
}

/// Compares without stopping at the first difference.
fn same(a: &[u8], b: &[u8]) -> bool {
    a.len() == b.len() && a.iter().zip(b).fold(0u8, |acc, (x, y)| acc | (x ^ y)) == 0
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The headers DDNet 16.4 sent, observed.
    fn ddnet(token: Option<&str>) -> Vec<(&'static str, String)> {
        let mut h = vec![
            (
                "Address",
                "tw-0.6+udp://connecting-address.invalid:18303".to_owned(),
            ),
            ("Secret", "7968e06b-1ae4-47c2-ae30-2ecc4233b8d9".to_owned()),
            (
                "Challenge-Secret",
                "bcf63773-98c7-43c3-a2ef-19ba8d93b6a5:tw0.6/ipv4".to_owned(),
            ),
            ("Info-Serial", "0".to_owned()),
        ];
        if let Some(t) = token {
            h.push(("Challenge-Token", t.to_owned()));
        }
        h
    }

    fn parse(h: &[(&'static str, String)]) -> Result<RegisterRequest, Refused> {
        RegisterRequest::from_headers(|name| {
            h.iter()
                .find(|(n, _)| n.eq_ignore_ascii_case(name))
                .map(|(_, v)| v.as_bytes())
        })
    }

    #[test]
    fn a_challenge_then_a_registration() {
        let c = Challenges::new([3; 16]);
        let peer: IpAddr = "127.0.0.1".parse().unwrap();
        let r = parse(&ddnet(None)).unwrap();
        assert_eq!((r.scheme, r.host, r.port), (Scheme::Tw06, None, 18303));
        let Decision::Challenge { to, datagram } = c.decide(&r, peer) else {
            panic!()
        };
        assert_eq!(to, "127.0.0.1:18303".parse().unwrap());
        assert!(datagram.len() <= MAX_CHALLENGE_BYTES);
        let body = datagram
            .strip_prefix(b"\xff\xff\xff\xff\xff\xff\xff\xff\xff\xffchal".as_slice())
            .unwrap();
        let mut parts = body.split(|&b| b == 0);
        assert_eq!(
            parts.next().unwrap(),
            b"bcf63773-98c7-43c3-a2ef-19ba8d93b6a5:tw0.6/ipv4"
        );
        let token = std::str::from_utf8(parts.next().unwrap())
            .unwrap()
            .to_owned();
        assert_eq!(token.len(), 32);
        assert_eq!(
            c.decide(&r, peer).response().1,
            r#"{"status":"need_challenge"}"#
        );
        // the token back: registered
        let r = parse(&ddnet(Some(&token))).unwrap();
        let d = c.decide(&r, peer);
        assert_eq!(d, Decision::Register("127.0.0.1:18303".parse().unwrap()));
        assert_eq!(d.response(), (200, r#"{"status":"success"}"#.to_owned()));
        // from another IP, or for another port, the token is no proof: challenged again
        let other: IpAddr = "127.0.0.2".parse().unwrap();
        assert!(matches!(c.decide(&r, other), Decision::Challenge { .. }));
        let mut h = ddnet(Some(&token));
        h[0].1 = "tw-0.6+udp://connecting-address.invalid:18304".into();
        assert!(matches!(
            c.decide(&parse(&h).unwrap(), peer),
            Decision::Challenge { .. }
        ));
        // the same IP in its IPv4-mapped form is the same requester
        let mapped: IpAddr = "::ffff:127.0.0.1".parse().unwrap();
        assert!(matches!(c.decide(&r, mapped), Decision::Register(_)));
    }

    #[test]
    fn a_07_address_is_challenged_over_07_and_registered_for_the_07_query() {
        let c = Challenges::new([3; 16]);
        let peer: IpAddr = "127.0.0.1".parse().unwrap();
        let mut h = ddnet(None);
        h[0].1 = "tw-0.7+udp://connecting-address.invalid:18303".into();
        h[2].1 = "bcf63773-98c7-43c3-a2ef-19ba8d93b6a5:tw0.7/ipv4".into();
        h.push(("Connless-Token", "0a1B2c3D".into()));
        let r = parse(&h).unwrap();
        assert_eq!(
            (r.scheme, r.connless_token),
            (Scheme::Tw07, Some(0x0a1b_2c3d))
        );
        let Decision::Challenge { to, datagram } = c.decide(&r, peer) else {
            panic!()
        };
        assert_eq!(to, "127.0.0.1:18303".parse().unwrap());
        assert!(datagram.len() <= MAX_CHALLENGE_BYTES);
        let body = datagram
            .strip_prefix(b"\x21\x0a\x1b\x2c\x3d\xff\xff\xff\xff\xff\xff\xff\xffchal".as_slice())
            .unwrap();
        let token = std::str::from_utf8(body.split(|&b| b == 0).nth(1).unwrap()).unwrap();
        h.push(("Challenge-Token", token.to_owned()));
        let d = c.decide(&parse(&h).unwrap(), peer);
        assert_eq!(d, Decision::Register7("127.0.0.1:18303".parse().unwrap()));
        assert_eq!(d.response().0, 200);
        for bad in ["0a1b2c3", "0a1b2c3d0", "0a1b2c3g", ""] {
            let mut h = ddnet(None);
            h.push(("Connless-Token", bad.into()));
            assert!(parse(&h).is_err(), "{bad}");
        }
    }

    #[test]
    fn other_addresses_and_malformed_headers_are_refused() {
        let c = Challenges::new([3; 16]);
        let peer: IpAddr = "127.0.0.1".parse().unwrap();
        let with = |address: &str| {
            let mut h = ddnet(None);
            h[0].1 = address.into();
            parse(&h)
        };
        // someone else's address
        let r = with("tw-0.6+udp://192.0.2.1:8303").unwrap();
        assert!(matches!(c.decide(&r, peer), Decision::Refused(_)));
        assert_eq!(c.decide(&r, peer).response().0, 400);
        // its own, named
        let r = with("tw-0.6+udp://127.0.0.1:8303").unwrap();
        assert!(matches!(c.decide(&r, peer), Decision::Challenge { .. }));
        // 0.7 without its Connless-Token
        let r = with("tw-0.7+udp://connecting-address.invalid:8303").unwrap();
        assert!(matches!(c.decide(&r, peer), Decision::Refused(_)));
        for bad in [
            "tw-0.6+udp://connecting-address.invalid:0",
            "tw-0.6+udp://connecting-address.invalid:70000",
            "tw-0.6+udp://connecting-address.invalid",
            "ddnet+quic://connecting-address.invalid:8303",
            "tw-0.6+udp://example.org:8303",
            "no scheme",
            "tw-0.6+udp://connecting-address.invalid:8303\u{1}",
        ] {
            assert!(with(bad).is_err(), "{bad}");
        }
        assert!(with(&format!("tw-0.6+udp://{}:1", "a".repeat(300))).is_err());
        assert!(parse(&[]).is_err(), "no Address");
        let mut h = ddnet(None);
        h[2].1 = "x".repeat(MAX_SECRET + 1);
        assert!(parse(&h).is_err(), "a long challenge secret");
        let mut h = ddnet(None);
        h.remove(2);
        assert!(matches!(
            c.decide(&parse(&h).unwrap(), peer),
            Decision::Refused(_)
        ));
        let mut h = ddnet(None);
        h.push(("Action", "delete".into()));
        assert_eq!(c.decide(&parse(&h).unwrap(), peer), Decision::Deleted);
    }
}
