//! The Open Tibia status request and its XML reply.
//!
//! On a TCP connection to the login port a client that sends the status protocol's first
//! message `06 00 FF FF 69 6E 66 6F` (its length, 6, as a 16-bit little-endian integer;
//! `FF`, the status protocol; `FF`, the XML request; `info`) is sent one XML document
//! and the connection is closed (The Forgotten Server's `ProtocolStatus`; GameQ's `tibia`
//! reads the same). The document, attributes in this order:
//!
//! ```text
//! <?xml version="1.0"?>
//! <tsqp version="1.0">
//!   <serverinfo uptime="…" ip="…" servername="…" port="…" location="…" url="…"
//!               server="…" version="…" client="…"/>
//!   <owner name="…" email="…"/>
//!   <players online="…" max="…" peak="…"/>
//!   <monsters total="…"/>  <npcs total="…"/>
//!   <rates experience="…" skill="…" loot="…" magic="…" spawn="…"/>
//!   <map name="…" author="…" width="…" height="…"/>
//!   <motd>…</motd>
//! </tsqp>
//! ```
//!
//! Its mapping to the shared status:
//!
//! | document | status |
//! |---|---|
//! | `serverinfo` `servername` | `host_name` |
//! | `serverinfo` `client` (the Tibia client version it speaks) | `game_version` |
//! | `serverinfo` `port` | `connect_port` |
//! | `serverinfo` `uptime` (seconds) | `uptime_seconds` |
//! | `players` `online`, `max` | `player_count`, `slot_max` |
//! | `map` `name`, `author` | `map` (its name and author) |
//! | the other `serverinfo` attributes | `rules` under their own names (`server`, `version`: the server software) |
//! | the other elements' attributes | `rules` as `element_attribute` (`players_peak`, `owner_name`, `rates_experience`, `map_width`…) |
//! | `motd` | `rules` `motd` |
//!
//! The document lists no players, only their count.

use crate::error::DecodeError;
use crate::model::MapInfo;
use crate::text::Text;
use crate::xml::{self, Event, XmlLimits};
use crate::Status;

/// The request: the status protocol's XML `info` request.
pub const REQUEST: [u8; 8] = [6, 0, 0xFF, 0xFF, b'i', b'n', b'f', b'o'];
/// The most bytes a reply may have (The Forgotten Server's is under 1 KiB; a long message
/// of the day fits).
pub const MAX_BODY: usize = 64 * 1024;
/// Attribute values (and the message of the day) kept, at most.
pub const MAX_FIELDS: usize = 128;
/// What the document may make the XML reader do: a root, its children and their
/// attributes.
pub const XML_LIMITS: XmlLimits = XmlLimits {
    max_depth: 4,
    max_elements: 256,
    max_attributes: 32,
};
/// How the document's root element ends: the reply is whole once the bytes end with it.
pub const END: &[u8] = b"</tsqp>";

/// The document's values, as sent.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct Info {
    /// `(element, attribute, value)` of the root's children, in document order (at most
    /// [`MAX_FIELDS`]).
    pub fields: Vec<(String, String, String)>,
    /// The message of the day.
    pub motd: Option<String>,
}

impl Info {
    /// The value of `attribute` of the first `element`.
    pub fn get(&self, element: &str, attribute: &str) -> Option<&str> {
        self.fields
            .iter()
            .find(|(e, a, _)| e == element && a == attribute)
            .map(|(_, _, v)| v.as_str())
    }
}

/// The reply's document `body` (offsets in errors counted from `base`). Up to four bytes
/// before its first `<` are skipped (a length some servers may put first); a document
/// whose root is not `tsqp` is an error.
pub fn decode_info(body: &[u8], base: usize) -> Result<Info, DecodeError> {
    let skip = body
        .iter()
        .take(5)
        .position(|b| *b == b'<')
        .ok_or_else(|| {
            DecodeError::invalid(
                base,
                "Status",
                "no XML document: not an Open Tibia status reply",
            )
        })?;
    let doc = body.get(skip..).unwrap_or_default();
    let mut info = Info::default();
    let mut root_ok = None;
    let mut element = String::new();
    xml::read(doc, "Status", &XML_LIMITS, |e| match e {
        Event::Open {
            name,
            attributes,
            depth,
        } => {
            if depth == 1 {
                root_ok = Some(name == "tsqp");
            } else if depth == 2 {
                name.clone_into(&mut element);
                for (a, v) in attributes {
                    if info.fields.len() < MAX_FIELDS {
                        info.fields.push((name.to_owned(), a.clone(), v.clone()));
                    }
                }
            }
        }
        Event::Text { text, depth } => {
            if depth == 2 && element == "motd" {
                let m = info.motd.get_or_insert_with(String::new);
                if m.len() < MAX_BODY {
                    m.push_str(text);
                }
            }
        }
        Event::Close { .. } => {}
    })
    .map_err(|mut e| {
        e.offset = e.offset.saturating_add(base).saturating_add(skip);
        e
    })?;
    if root_ok != Some(true) {
        return Err(DecodeError::invalid(
            base.saturating_add(skip),
            "Status",
            "the root element is not tsqp: not an Open Tibia status reply",
        ));
    }
    Ok(info)
}

/// The status a reply says (see the module's documentation).
pub fn to_status(i: &Info) -> Status {
    let number = |e, a| i.get(e, a).and_then(|v| v.trim().parse::<u64>().ok());
    let u32_of = |e, a| number(e, a).map(|n| u32::try_from(n).unwrap_or(u32::MAX));
    let text = |e, a| i.get(e, a).filter(|v| !v.is_empty()).map(Text::from);
    const TYPED: [(&str, &str); 8] = [
        ("serverinfo", "servername"),
        ("serverinfo", "client"),
        ("serverinfo", "port"),
        ("serverinfo", "uptime"),
        ("players", "online"),
        ("players", "max"),
        ("map", "name"),
        ("map", "author"),
    ];
    let mut rules: crate::model::Rules = i
        .fields
        .iter()
        .filter(|(e, a, _)| !TYPED.contains(&(e.as_str(), a.as_str())))
        .map(|(e, a, v)| {
            let key = if e == "serverinfo" {
                a.clone()
            } else {
                format!("{e}_{a}")
            };
            (key, v.clone())
        })
        .collect();
    if let Some(m) = &i.motd {
        rules.0.push((Text::from("motd"), Text::from(m.trim())));
    }
    Status {
        game_name: Some(Text::from("Tibia")),
        host_name: text("serverinfo", "servername"),
        game_version: text("serverinfo", "client"),
        connect_port: number("serverinfo", "port").and_then(|p| u16::try_from(p).ok()),
        uptime_seconds: u32_of("serverinfo", "uptime"),
        player_count: u32_of("players", "online"),
        slot_max: u32_of("players", "max"),
        map: text("map", "name").map(|n| MapInfo {
            author: text("map", "author"),
            ..MapInfo::named(n)
        }),
        rules: Some(rules),
        ..Status::default()
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;

    /// The Forgotten Server's document, as its `sendStatusString` writes it (one line).
    pub(crate) const TFS: &str = concat!(
        r#"<?xml version="1.0"?>"#,
        r#"<tsqp version="1.0"><serverinfo uptime="86461" ip="127.0.0.1" servername="Forgotten &amp; Co" port="7171" location="Europe" url="https://otland.net/" server="The Forgotten Server" version="1.6" client="13.10"/>"#,
        r#"<owner name="Admin" email="admin@example.org"/><players online="42" max="1000" peak="77"/>"#,
        r#"<monsters total="15021"/><npcs total="61"/>"#,
        r#"<rates experience="5" skill="3" loot="2" magic="3" spawn="1"/>"#,
        r#"<map name="forgotten" author="Komic" width="2048" height="2048"/><motd>Welcome to the Forgotten Server!</motd></tsqp>"#,
    );

    #[test]
    fn the_forgotten_servers_document() {
        let s = to_status(&decode_info(TFS.as_bytes(), 0).unwrap());
        assert_eq!(s.host_name.as_deref(), Some("Forgotten & Co"));
        assert_eq!(s.game_version.as_deref(), Some("13.10"));
        assert_eq!(s.connect_port, Some(7171));
        assert_eq!(s.uptime_seconds, Some(86461));
        assert_eq!((s.player_count, s.slot_max), (Some(42), Some(1000)));
        let map = s.map.unwrap();
        assert_eq!(map.name.as_str(), "forgotten");
        assert_eq!(map.author.as_deref(), Some("Komic"));
        let rules = s.rules.unwrap();
        assert_eq!(rules.get("server"), Some("The Forgotten Server"));
        assert_eq!(rules.get("version"), Some("1.6"));
        assert_eq!(rules.get("players_peak"), Some("77"));
        assert_eq!(rules.get("rates_experience"), Some("5"));
        assert_eq!(rules.get("map_width"), Some("2048"));
        assert_eq!(rules.get("motd"), Some("Welcome to the Forgotten Server!"));
        assert_eq!(rules.get("servername"), None, "mapped, not repeated");
    }

    #[test]
    fn foreign_and_hostile_documents() {
        // a length first is skipped; anything else before the document is not
        let mut framed = vec![0x10, 0x02];
        framed.extend_from_slice(TFS.as_bytes());
        assert!(decode_info(&framed, 0).is_ok());
        let e = decode_info(b"HTTP/1.1 200 OK\r\n\r\n<tsqp/>", 0).unwrap_err();
        assert!(e.to_string().contains("not an Open Tibia"), "{e}");
        let e = decode_info(b"<html><body/></html>", 0).unwrap_err();
        assert!(e.to_string().contains("not tsqp"), "{e}");
        let e = decode_info(b"<!DOCTYPE x [<!ENTITY a 'b'>]><tsqp>&a;</tsqp>", 0).unwrap_err();
        assert!(
            e.to_string().contains("DTD") || e.to_string().contains("DOCTYPE"),
            "{e}"
        );
        let deep = format!("<tsqp>{}", "<a>".repeat(100));
        assert!(decode_info(deep.as_bytes(), 0).is_err());
        // attributes past the cap are dropped, the rest kept
        let many: String = (0..40)
            .map(|i| {
                format!(
                    "<e{i} {}/>",
                    (0..30)
                        .map(|j| format!("a{j}=\"{j}\""))
                        .collect::<Vec<_>>()
                        .join(" ")
                )
            })
            .collect();
        let i = decode_info(format!("<tsqp>{many}</tsqp>").as_bytes(), 0).unwrap();
        assert_eq!(i.fields.len(), MAX_FIELDS);
        // numbers that lie: ignored or clamped, never a panic
        let s = to_status(&decode_info(br#"<tsqp><serverinfo port="70000" uptime="99999999999"/><players online="-1" max="x"/></tsqp>"#, 0).unwrap());
        assert_eq!(s.connect_port, None);
        assert_eq!(s.uptime_seconds, Some(u32::MAX));
        assert_eq!((s.player_count, s.slot_max), (None, None));
    }
}
