//! DDNet's HTTP server list (the document `https://master1.ddnet.org/ddnet/15/servers.json`
//! serves): `{"servers": [{"addresses": ["tw-0.6+udp://1.2.3.4:8303", …], "location":
//! "eu:de", "info": {"name": …, "map": {"name": …}, "clients": [ … ], …}}, …]}`.
//!
//! [`decode_list`] reads one such document, sans-IO, into the addresses to query: each
//! `tw-0.6+udp://` address as [`Protocol::Teeworlds`], each `tw-0.7+udp://` one as
//! [`Protocol::Teeworlds7`] (other schemes, `ddnet+quic://` and the like, are skipped and
//! counted). Bounded: at most [`MAX_SERVERS`] servers and [`MAX_ADDRESSES`] addresses
//! each are kept (past that the document is an error, not a silent cut), the document
//! must be at most [`MAX_BYTES`], and the servers' `info` is read only for its name,
//! and map (the rest, clients included, is skipped without being kept).

use std::net::SocketAddr;

use serde::Deserialize;

use super::list_client::invalid_reason;
use crate::bounded;
use crate::model::Text;
use crate::protocol::Protocol;

/// Most servers of one document (the real list has about 2,000).
pub const MAX_SERVERS: usize = 20_000;
/// Most addresses of one server.
pub const MAX_ADDRESSES: usize = 16;
/// Largest document (the real one is about 4 MB with every client of every server).
pub const MAX_BYTES: usize = 32 << 20;

#[derive(Deserialize)]
struct Doc {
    #[serde(deserialize_with = "bounded::list::<_, _, MAX_SERVERS>")]
    servers: Vec<Server>,
}

#[derive(Deserialize)]
struct Server {
    #[serde(deserialize_with = "bounded::list::<_, _, MAX_ADDRESSES>")]
    addresses: Vec<Text>,
    #[serde(default)]
    location: Option<Text>,
    #[serde(default)]
    info: Option<ServerInfo>,
}

#[derive(Deserialize)]
struct ServerInfo {
    #[serde(default)]
    name: Option<Text>,
    #[serde(default)]
    map: Option<MapName>,
}

#[derive(Deserialize)]
struct MapName {
    #[serde(default)]
    name: Option<Text>,
}

/// One address of the list.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct Listed {
    /// The protocol its scheme names.
    pub protocol: Protocol,
    /// The address.
    pub addr: SocketAddr,
    /// The server's name, as listed.
    pub name: Option<Text>,
    /// Its map, as listed.
    pub map: Option<Text>,
    /// Its location (`eu:de`).
    pub location: Option<Text>,
}

/// A decoded document.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct List {
    /// Every address to query, in the document's order, each once.
    pub servers: Vec<Listed>,
    /// Addresses skipped, and why.
    pub skipped: Vec<(Text, &'static str)>,
}

/// Why a document was refused.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum DdnetListError {
    /// Larger than [`MAX_BYTES`].
    TooLarge {
        /// Its size.
        bytes: usize,
    },
    /// Not the document's shape (or over a cap: the message says which).
    Malformed(String),
}

impl std::fmt::Display for DdnetListError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Self::TooLarge { bytes } => write!(
                f,
                "server list of {bytes} bytes: over our limit of {MAX_BYTES}"
            ),
            Self::Malformed(m) => write!(f, "not DDNet's server list: {m}"),
        }
    }
}

impl std::error::Error for DdnetListError {}

/// The protocol and address of one listed address (`tw-0.6+udp://1.2.3.4:8303`).
pub fn parse_address(a: &str) -> Result<(Protocol, SocketAddr), &'static str> {
    let (scheme, rest) = a.split_once("://").ok_or("no scheme")?;
    let protocol = match scheme {
        "tw-0.6+udp" => Protocol::Teeworlds,
        "tw-0.7+udp" => Protocol::Teeworlds7,
        _ => return Err("a scheme we do not query"),
    };
    let addr: SocketAddr = rest.parse().map_err(|_| "not IP:PORT")?;
    match invalid_reason(addr) {
        Some(why) => Err(why),
        None => Ok((protocol, addr)),
    }
}

/// Reads one document.
pub fn decode_list(body: &[u8]) -> Result<List, DdnetListError> {
    if body.len() > MAX_BYTES {
        return Err(DdnetListError::TooLarge { bytes: body.len() });
    }
    let doc: Doc =
        serde_json::from_slice(body).map_err(|e| DdnetListError::Malformed(e.to_string()))?;
    let mut out = List::default();
    let mut seen = std::collections::HashSet::new();
    for s in doc.servers {
        let info = s.info.as_ref();
        let name = info.and_then(|i| i.name.clone());
        let map = info.and_then(|i| i.map.as_ref()?.name.clone());
        for a in s.addresses {
            match parse_address(&a) {
                Ok((protocol, addr)) => {
                    if seen.insert((protocol, addr)) {
                        out.servers.push(Listed {
                            protocol,
                            addr,
                            name: name.clone(),
                            map: map.clone(),
                            location: s.location.clone(),
                        });
                    }
                }
                Err(why) => out.skipped.push((a, why)),
            }
        }
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    const DOC: &str = r#"{"servers":[
        {"addresses":["tw-0.6+udp://203.0.113.5:8303","tw-0.7+udp://203.0.113.5:8303","ddnet+quic://203.0.113.5:8303"],
         "location":"eu:de",
         "info":{"max_clients":64,"max_players":64,"passworded":false,"game_type":"DDraceNetwork",
                 "name":"DDNet GER1","map":{"name":"Tutorial","sha256":"00","size":1},"version":"16.4",
                 "clients":[{"name":"a","clan":"","country":-1,"score":-9999,"is_player":true}]}},
        {"addresses":["tw-0.6+udp://[2001:db8::1]:8304","tw-0.6+udp://0.0.0.0:8303","tw-0.6+udp://203.0.113.5:8303"]}
    ]}"#;

    #[test]
    fn reads_the_documents_shape() {
        let l = decode_list(DOC.as_bytes()).unwrap();
        let got: Vec<_> = l
            .servers
            .iter()
            .map(|s| (s.protocol, s.addr.to_string()))
            .collect();
        assert_eq!(
            got,
            [
                (Protocol::Teeworlds, "203.0.113.5:8303".to_string()),
                (Protocol::Teeworlds7, "203.0.113.5:8303".to_string()),
                (Protocol::Teeworlds, "[2001:db8::1]:8304".to_string()),
            ]
        );
        assert_eq!(l.servers[0].name.as_deref(), Some("DDNet GER1"));
        assert_eq!(l.servers[0].map.as_deref(), Some("Tutorial"));
        assert_eq!(l.skipped.len(), 2);
    }

    #[test]
    fn over_the_caps_is_an_error() {
        let many = format!(
            r#"{{"servers":[{{"addresses":[{}]}}]}}"#,
            vec![r#""tw-0.6+udp://203.0.113.5:1""#; MAX_ADDRESSES + 1].join(",")
        );
        assert!(matches!(
            decode_list(many.as_bytes()),
            Err(DdnetListError::Malformed(_))
        ));
        assert!(decode_list(b"{\"servers\":{}}").is_err());
        assert!(decode_list(b"[]").is_err());
        assert!(decode_list(&vec![b' '; MAX_BYTES + 1]).is_err());
    }
}
