//! Servers an operator adds (Minecraft servers and others that never register): the
//! `[[server]]` tables of the config file and the write API's bodies, checked before
//! they reach the database, and the write API's bearer token.

use std::net::SocketAddr;

use ogp_proto::master::addr::{canonical, may_poll};
use ogp_proto::Protocol;
use serde::Deserialize;
use subtle::ConstantTimeEq;

use crate::store::Added;

/// Longest `name` or `note` of an added server, in bytes.
pub const MAX_TEXT_BYTES: usize = 256;
/// Largest body of `POST /api/v1/servers`, in bytes.
pub const MAX_BODY_BYTES: usize = 1024;
/// Shortest accepted `api_token`, in bytes.
pub const MIN_TOKEN_BYTES: usize = 16;

/// One `[[server]]` table of the config file.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields)]
#[non_exhaustive]
pub struct ServerEntry {
    /// `IP:PORT`, `[IPv6]:PORT` or `HOST:PORT` (a host name is resolved when the master
    /// starts).
    pub addr: String,
    /// A protocol name `ogp query -p` takes (`minecraft`, `a2s`, …).
    pub protocol: String,
    /// The operator's name for it (kept in the database).
    #[serde(default)]
    pub name: Option<String>,
    /// The operator's note about it (kept in the database).
    #[serde(default)]
    pub note: Option<String>,
}

impl ServerEntry {
    /// A table with `addr` and `protocol`.
    pub fn new(addr: impl Into<String>, protocol: impl Into<String>) -> Self {
        Self {
            addr: addr.into(),
            protocol: protocol.into(),
            name: None,
            note: None,
        }
    }
}

/// The body of `POST /api/v1/servers`.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct Body {
    addr: String,
    protocol: String,
    #[serde(default)]
    name: Option<String>,
    #[serde(default)]
    note: Option<String>,
}

/// An added server's address as it is stored ([`canonical`]: `[::ffff:a.b.c.d]:port`
/// is `a.b.c.d:port`), if it may be polled: a port, and a global address
/// ([`ogp_proto::master::addr`]: IPv6 forms that carry an IPv4 address are judged by
/// it) unless `allow_private`, and never an unspecified, multicast or broadcast one.
pub fn check_addr(addr: SocketAddr, allow_private: bool) -> Result<SocketAddr, String> {
    let addr = canonical(addr);
    if addr.port() == 0 {
        return Err(format!("{addr}: port 0"));
    }
    if !may_poll(addr.ip(), allow_private) {
        return Err(format!(
            "{addr}: not a global address (loopback, private, link-local, documentation, an \
             IPv6 form of one, …; allow_private lists the private ones)"
        ));
    }
    Ok(addr)
}

fn check_text(what: &str, v: Option<String>) -> Result<Option<String>, String> {
    match v {
        Some(t) if t.len() > MAX_TEXT_BYTES => {
            Err(format!("{what}: longer than {MAX_TEXT_BYTES} bytes"))
        }
        Some(t) if t.chars().any(char::is_control) => Err(format!("{what}: control characters")),
        other => Ok(other),
    }
}

fn parse_protocol(p: &str) -> Result<Protocol, String> {
    p.parse::<Protocol>().map_err(|e| format!("protocol: {e}"))
}

/// A `[[server]]` table whose address is an `IP:PORT` already, or its protocol and
/// texts checked and the address left to resolve.
pub(crate) fn check_entry(
    e: &ServerEntry,
    allow_private: bool,
) -> Result<(Protocol, Option<SocketAddr>), String> {
    let protocol = parse_protocol(&e.protocol)?;
    check_text("name", e.name.clone())?;
    check_text("note", e.note.clone())?;
    let addr = match e.addr.parse::<SocketAddr>() {
        Ok(a) => Some(check_addr(a, allow_private)?),
        Err(_) => None,
    };
    if addr.is_none() {
        let (host, port) = e
            .addr
            .rsplit_once(':')
            .ok_or_else(|| format!("addr {:?}: expected HOST:PORT", e.addr))?;
        if host.is_empty() || port.parse::<u16>().map_or(true, |p| p == 0) {
            return Err(format!("addr {:?}: expected HOST:PORT", e.addr));
        }
    }
    Ok((protocol, addr))
}

/// The config file's servers, checked (host names resolved to their first address);
/// an error names the table (1-based) and what is wrong with it.
pub(crate) async fn resolve_entries(
    entries: &[ServerEntry],
    allow_private: bool,
) -> anyhow::Result<Vec<Added>> {
    let mut out: Vec<Added> = Vec::with_capacity(entries.len());
    for (i, e) in entries.iter().enumerate() {
        let which = |m: String| anyhow::anyhow!("[[server]] #{} ({:?}): {m}", i + 1, e.addr);
        let (protocol, addr) = check_entry(e, allow_private).map_err(which)?;
        let addr = match addr {
            Some(a) => a,
            None => {
                let a = tokio::net::lookup_host(e.addr.as_str())
                    .await
                    .map_err(|err| which(format!("cannot resolve: {err}")))?
                    .next()
                    .ok_or_else(|| which("the name has no address".into()))?;
                check_addr(a, allow_private).map_err(which)?
            }
        };
        if out.iter().any(|o| o.addr == addr) {
            return Err(which(format!("{addr} is listed twice")));
        }
        out.push(Added {
            addr,
            protocol,
            name: e.name.clone(),
            note: e.note.clone(),
        });
    }
    Ok(out)
}

/// The server a `POST /api/v1/servers` body adds: JSON `{"addr": "IP:PORT", "protocol":
/// NAME}` (optional `name`, `note`), no other key.
pub(crate) fn parse_body(body: &[u8], allow_private: bool) -> Result<Added, String> {
    let b: Body = serde_json::from_slice(body).map_err(|e| format!("body: {e}"))?;
    let addr = b.addr.parse::<SocketAddr>().map_err(|_| {
        format!(
            "addr: not an address (IP:PORT, [IPv6]:PORT), got {:?}",
            b.addr.chars().take(64).collect::<String>()
        )
    })?;
    let addr = check_addr(addr, allow_private).map_err(|e| format!("addr: {e}"))?;
    Ok(Added {
        addr,
        protocol: parse_protocol(&b.protocol)?,
        name: check_text("name", b.name)?,
        note: check_text("note", b.note)?,
    })
}

/// Whether an `Authorization` header value is `Bearer TOKEN` with this token, compared
/// in constant time (its length aside).
pub(crate) fn authorized(header: Option<&[u8]>, token: &str) -> bool {
    let Some(h) = header else { return false };
    let Some(given) = h
        .strip_prefix(b"Bearer ")
        .or_else(|| h.strip_prefix(b"bearer "))
    else {
        return false;
    };
    bool::from(given.ct_eq(token.as_bytes()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bodies_are_checked() {
        let ok = parse_body(br#"{"addr":"8.8.8.8:25565","protocol":"minecraft"}"#, false).unwrap();
        assert_eq!(ok.protocol, Protocol::Minecraft);
        assert_eq!(ok.addr, "8.8.8.8:25565".parse().unwrap());
        let err = |b: &str, private| parse_body(b.as_bytes(), private).unwrap_err();
        assert!(err(r#"{"addr":"127.0.0.1:25565","protocol":"mc"}"#, false)
            .contains("not a global address"));
        assert!(parse_body(br#"{"addr":"127.0.0.1:25565","protocol":"mc"}"#, true).is_ok());
        assert!(err(r#"{"addr":"8.8.8.8:0","protocol":"mc"}"#, false).contains("port 0"));
        assert!(err(r#"{"addr":"example.com:1","protocol":"mc"}"#, false)
            .starts_with("addr: not an address"));
        assert!(err(r#"{"addr":"8.8.8.8:1","protocol":"doom9"}"#, false)
            .starts_with("protocol: unknown protocol"));
        assert!(
            err(r#"{"addr":"8.8.8.8:1","protocol":"mc","x":1}"#, false).contains("unknown field")
        );
        assert!(err(r#"{"addr":"8.8.8.8:1"}"#, false).contains("missing field"));
        assert!(err("not json", false).starts_with("body:"));
        let long = format!(
            r#"{{"addr":"8.8.8.8:1","protocol":"mc","note":"{}"}}"#,
            "x".repeat(300)
        );
        assert!(err(&long, false).starts_with("note: longer"));
    }

    /// Issue 36, item 1: IPv6 forms that reach internal IPv4 addresses, or are not
    /// global, were taken (201); a mapped address and its IPv4 were two servers.
    #[test]
    fn ipv6_forms_of_internal_addresses_are_refused_and_mapped_ones_stored_as_ipv4() {
        // a few of them (tests/master_addresses.rs in ogp-cli sends them all)
        for a in [
            "[::10.0.0.1]:25565",
            "[64:ff9b::a9fe:a9fe]:80",
            "[2002:7f00:1::1]:25565",
        ] {
            let body = format!(r#"{{"addr":"{a}","protocol":"minecraft"}}"#);
            let e = parse_body(body.as_bytes(), false).unwrap_err();
            assert!(e.contains("not a global address"), "{a}: {e}");
            let e = check_entry(&ServerEntry::new(a, "minecraft"), false).unwrap_err();
            assert!(e.contains("not a global address"), "{a}: {e}");
        }
        let mapped = parse_body(br#"{"addr":"[::ffff:8.8.8.8]:7","protocol":"a2s"}"#, false);
        assert_eq!(mapped.unwrap().addr, "8.8.8.8:7".parse().unwrap());
        let (_, a) = check_entry(&ServerEntry::new("[::ffff:8.8.8.8]:7", "a2s"), false).unwrap();
        assert_eq!(a, Some("8.8.8.8:7".parse().unwrap()));
        // even with allow_private: no multicast, broadcast or unspecified address
        for a in [
            "224.0.0.1:7",
            "[ff02::1]:7",
            "255.255.255.255:7",
            "0.0.0.0:7",
            "[::]:7",
        ] {
            let body = format!(r#"{{"addr":"{a}","protocol":"a2s"}}"#);
            assert!(parse_body(body.as_bytes(), true).is_err(), "{a}");
        }
    }

    #[tokio::test]
    async fn a_mapped_table_and_its_ipv4_are_one_server() {
        let e = |a: &str| ServerEntry::new(a, "a2s");
        let err = resolve_entries(&[e("8.8.8.8:1"), e("[::ffff:8.8.8.8]:1")], false)
            .await
            .unwrap_err();
        assert!(
            format!("{err:#}").contains("8.8.8.8:1 is listed twice"),
            "{err:#}"
        );
    }

    #[test]
    fn the_token_must_match_exactly() {
        let t = "0123456789abcdef-secret";
        assert!(authorized(Some(b"Bearer 0123456789abcdef-secret"), t));
        assert!(!authorized(Some(b"Bearer 0123456789abcdef-secreT"), t));
        assert!(!authorized(Some(b"Bearer 0123456789abcdef-secret "), t));
        assert!(!authorized(Some(b"Bearer "), t));
        assert!(!authorized(Some(b"Basic 0123456789abcdef-secret"), t));
        assert!(!authorized(Some(b"0123456789abcdef-secret"), t));
        assert!(!authorized(None, t));
    }

    #[tokio::test]
    async fn config_tables_are_checked() {
        let e = |a: &str, p: &str| ServerEntry::new(a, p);
        let ok = resolve_entries(&[e("127.0.0.1:25565", "minecraft")], true)
            .await
            .unwrap();
        assert_eq!(ok.len(), 1);
        let msg = |v: Vec<ServerEntry>, private| async move {
            format!("{:#}", resolve_entries(&v, private).await.unwrap_err())
        };
        assert_eq!(
            msg(vec![e("127.0.0.1:25565", "minecraft")], false).await,
            "[[server]] #1 (\"127.0.0.1:25565\"): 127.0.0.1:25565: not a global address (loopback, private, link-local, documentation, an IPv6 form of one, …; allow_private lists the private ones)"
        );
        assert!(
            msg(vec![e("8.8.8.8:1", "a2s"), e("8.8.8.8:1", "mc")], false)
                .await
                .starts_with("[[server]] #2 (\"8.8.8.8:1\"): 8.8.8.8:1 is listed twice")
        );
        assert!(msg(vec![e("8.8.8.8:1", "nope")], false)
            .await
            .contains("unknown protocol \"nope\""));
        assert!(msg(vec![e("8.8.8.8", "mc")], false)
            .await
            .contains("expected HOST:PORT"));
        assert!(msg(vec![e("localhost:25565", "mc")], false)
            .await
            .contains("not a global address"));
    }
}
