//! A small, bounded XML reader for the one XML document a game server answers
//! (Farming Simulator's `dedicated-server-stats.xml`): elements, attributes, text,
//! CDATA, comments and processing instructions, the five predefined entities
//! (`&amp;` `&lt;` `&gt;` `&quot;` `&apos;`) and character references (`&#65;`,
//! `&#x41;`). It hands its caller one [`Event`] at a time and keeps nothing but the
//! names of the open elements, so what it holds is bounded by [`XmlLimits`], not by
//! the document.
//!
//! Refused, each as one [`DecodeError`] with its byte offset: a DTD (`<!DOCTYPE`,
//! `<!ENTITY`: no entity is ever defined by the peer, so no entity expansion attack
//! has anything to expand), an unknown entity, a character reference that is not a
//! character, elements nested deeper than [`XmlLimits::max_depth`], more than
//! [`XmlLimits::max_elements`] elements or [`XmlLimits::max_attributes`] attributes on
//! one, a name longer than [`MAX_NAME`], a closing tag that does not match, a second
//! root, and a document that ends early.

use crate::error::{DecodeError, DecodeErrorKind};
use crate::reader::Reader;

/// A name (element or attribute), at most.
pub const MAX_NAME: usize = 256;

/// What a document may make the reader do, at most.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct XmlLimits {
    /// Elements open at once.
    pub max_depth: usize,
    /// Elements in the document.
    pub max_elements: usize,
    /// Attributes of one element.
    pub max_attributes: usize,
}

/// One thing the document says, in order.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Event<'a> {
    /// An element opens (`depth` 1 is the root), with its attributes (entities decoded).
    Open {
        /// The element's name.
        name: &'a str,
        /// Its attributes, in order.
        attributes: &'a [(String, String)],
        /// How deep it is (1: the root).
        depth: usize,
    },
    /// Text (or CDATA) inside the element open at `depth`, entities decoded.
    Text {
        /// The text.
        text: &'a str,
        /// The depth of the element it is in.
        depth: usize,
    },
    /// The element open at `depth` closes.
    Close {
        /// Its depth.
        depth: usize,
    },
}

fn bad(at: usize, field: &'static str, why: &'static str) -> DecodeError {
    DecodeError::new(at, field, DecodeErrorKind::Invalid(why))
}

fn is_space(b: u8) -> bool {
    matches!(b, b' ' | b'\t' | b'\r' | b'\n')
}

fn is_name_byte(b: u8) -> bool {
    b.is_ascii_alphanumeric() || matches!(b, b'_' | b'-' | b'.' | b':') || b >= 0x80
}

fn skip_space(r: &mut Reader<'_>) {
    let n = r.peek_rest().iter().take_while(|b| is_space(**b)).count();
    let _ = r.take(n, "space");
}

/// Consumes up to and including `end`: what came before it.
fn until<'a>(r: &mut Reader<'a>, end: &[u8], field: &'static str) -> Result<&'a [u8], DecodeError> {
    let at = r.offset();
    let Some(i) = r.peek_rest().windows(end.len()).position(|w| w == end) else {
        return Err(bad(at, field, "the document ends inside it"));
    };
    let before = r.take(i, field)?;
    r.take(end.len(), field)?;
    Ok(before)
}

fn name<'a>(r: &mut Reader<'a>, field: &'static str) -> Result<&'a str, DecodeError> {
    let at = r.offset();
    let n = r
        .peek_rest()
        .iter()
        .take_while(|b| is_name_byte(**b))
        .count();
    if n == 0 {
        return Err(bad(at, field, "a name was expected"));
    }
    if n > MAX_NAME {
        return Err(DecodeError::new(
            at,
            field,
            DecodeErrorKind::TooLarge {
                limit: MAX_NAME as u64,
            },
        ));
    }
    std::str::from_utf8(r.take(n, field)?).map_err(|_| bad(at, field, "a name is not UTF-8"))
}

/// `raw` (text or an attribute's value starting at offset `at`) with its entities
/// decoded; bytes that are not UTF-8 replaced.
pub fn unescape(raw: &[u8], at: usize, field: &'static str) -> Result<String, DecodeError> {
    // Searched in the bytes, not in their lossy text: a byte that is not UTF-8 becomes
    // three bytes of U+FFFD there, and the error's offset must stay the byte's own. (An
    // `&` is ASCII, never inside a multi-byte character, so each run between two decodes
    // alone.)
    let mut out = String::with_capacity(raw.len());
    let mut rest = raw;
    let mut done = 0usize;
    while let Some(i) = rest.iter().position(|b| *b == b'&') {
        out.push_str(&String::from_utf8_lossy(rest.get(..i).unwrap_or_default()));
        let after = rest.get(i.saturating_add(1)..).unwrap_or_default();
        let here = at.saturating_add(done).saturating_add(i);
        let Some(semi) = after.iter().position(|b| *b == b';').filter(|s| *s <= 10) else {
            return Err(bad(here, field, "an & that starts no entity"));
        };
        let entity = std::str::from_utf8(after.get(..semi).unwrap_or_default()).unwrap_or("");
        let c = match entity {
            "amp" => '&',
            "lt" => '<',
            "gt" => '>',
            "quot" => '"',
            "apos" => '\'',
            _ => {
                let n = if let Some(hex) = entity
                    .strip_prefix("#x")
                    .or_else(|| entity.strip_prefix("#X"))
                {
                    u32::from_str_radix(hex, 16).ok()
                } else if let Some(dec) = entity.strip_prefix('#') {
                    dec.parse::<u32>().ok()
                } else {
                    return Err(bad(here, field, "an unknown entity (no DTD is read)"));
                };
                match n.filter(|n| *n != 0).and_then(char::from_u32) {
                    Some(c) => c,
                    None => {
                        return Err(bad(
                            here,
                            field,
                            "a character reference that is no character",
                        ))
                    }
                }
            }
        };
        out.push(c);
        let used = i.saturating_add(semi).saturating_add(2);
        rest = rest.get(used..).unwrap_or_default();
        done = done.saturating_add(used);
    }
    out.push_str(&String::from_utf8_lossy(rest));
    Ok(out)
}

/// Reads the document `body`, handing `on` each [`Event`] (see the module's
/// documentation for what is refused). `field` names the document in errors.
pub fn read(
    body: &[u8],
    field: &'static str,
    limits: &XmlLimits,
    mut on: impl FnMut(Event<'_>),
) -> Result<(), DecodeError> {
    let mut r = Reader::new(body);
    if r.peek_rest().starts_with(b"\xEF\xBB\xBF") {
        r.take(3, field)?;
    }
    let mut open: Vec<&str> = Vec::new();
    let mut elements = 0usize;
    let mut root_done = false;
    let mut attributes: Vec<(String, String)> = Vec::new();
    loop {
        if open.is_empty() {
            skip_space(&mut r);
        }
        let at = r.offset();
        let Some(b) = r.peek_u8() else {
            if !open.is_empty() || !root_done {
                return Err(bad(at, field, "the document ends early"));
            }
            return Ok(());
        };
        if b != b'<' {
            // text
            let n = r.peek_rest().iter().take_while(|b| **b != b'<').count();
            let raw = r.take(n, field)?;
            if open.is_empty() {
                return Err(bad(at, field, "text outside the root element"));
            }
            let text = unescape(raw, at, field)?;
            on(Event::Text {
                text: &text,
                depth: open.len(),
            });
            continue;
        }
        let rest = r.peek_rest();
        if rest.starts_with(b"<?") {
            r.take(2, field)?;
            until(&mut r, b"?>", field)?;
        } else if rest.starts_with(b"<!--") {
            r.take(4, field)?;
            until(&mut r, b"-->", field)?;
        } else if rest.starts_with(b"<![CDATA[") {
            r.take(9, field)?;
            let raw = until(&mut r, b"]]>", field)?;
            if open.is_empty() {
                return Err(bad(at, field, "CDATA outside the root element"));
            }
            on(Event::Text {
                text: &String::from_utf8_lossy(raw),
                depth: open.len(),
            });
        } else if rest.starts_with(b"<!") {
            return Err(bad(
                at,
                field,
                "a DTD or declaration (<!DOCTYPE, <!ENTITY): refused",
            ));
        } else if rest.starts_with(b"</") {
            r.take(2, field)?;
            let n = name(&mut r, field)?;
            skip_space(&mut r);
            if r.u8(field)? != b'>' {
                return Err(bad(at, field, "a closing tag that does not end with >"));
            }
            if open.pop() != Some(n) {
                return Err(bad(at, field, "a closing tag that matches no open element"));
            }
            on(Event::Close {
                depth: open.len().saturating_add(1),
            });
            root_done = open.is_empty();
        } else {
            r.take(1, field)?;
            if root_done {
                return Err(bad(at, field, "a second root element"));
            }
            elements = elements.saturating_add(1);
            if elements > limits.max_elements {
                return Err(DecodeError::new(
                    at,
                    field,
                    DecodeErrorKind::TooLarge {
                        limit: limits.max_elements as u64,
                    },
                ));
            }
            if open.len() >= limits.max_depth {
                return Err(bad(at, field, "elements nest too deep"));
            }
            let n = name(&mut r, field)?;
            attributes.clear();
            let empty = loop {
                skip_space(&mut r);
                let at = r.offset();
                match r.peek_u8() {
                    Some(b'>') => {
                        r.take(1, field)?;
                        break false;
                    }
                    Some(b'/') => {
                        r.take(1, field)?;
                        if r.u8(field)? != b'>' {
                            return Err(bad(at, field, "a / not followed by >"));
                        }
                        break true;
                    }
                    None => return Err(bad(at, field, "the document ends inside a tag")),
                    Some(_) => {}
                }
                if attributes.len() >= limits.max_attributes {
                    return Err(DecodeError::new(
                        at,
                        field,
                        DecodeErrorKind::TooLarge {
                            limit: limits.max_attributes as u64,
                        },
                    ));
                }
                let key = name(&mut r, field)?;
                skip_space(&mut r);
                if r.u8(field)? != b'=' {
                    return Err(bad(at, field, "an attribute without ="));
                }
                skip_space(&mut r);
                let q = r.u8(field)?;
                if q != b'"' && q != b'\'' {
                    return Err(bad(at, field, "an attribute value without quotes"));
                }
                let vat = r.offset();
                let raw = until(&mut r, &[q], field)?;
                if raw.contains(&b'<') {
                    return Err(bad(vat, field, "a < in an attribute value"));
                }
                attributes.push((key.to_owned(), unescape(raw, vat, field)?));
            };
            open.push(n);
            on(Event::Open {
                name: n,
                attributes: &attributes,
                depth: open.len(),
            });
            if empty {
                open.pop();
                on(Event::Close {
                    depth: open.len().saturating_add(1),
                });
                root_done = open.is_empty();
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const L: XmlLimits = XmlLimits {
        max_depth: 8,
        max_elements: 100,
        max_attributes: 4,
    };

    fn events(doc: &str) -> Result<Vec<String>, DecodeError> {
        let mut out = Vec::new();
        read(doc.as_bytes(), "x", &L, |e| {
            out.push(match e {
                Event::Open {
                    name,
                    attributes,
                    depth,
                } => format!("{depth}<{name}{attributes:?}"),
                Event::Text { text, depth } => format!("{depth}:{text}"),
                Event::Close { depth } => format!("{depth}>"),
            });
        })?;
        Ok(out)
    }

    fn why(doc: &str) -> String {
        events(doc).unwrap_err().to_string()
    }

    #[test]
    fn elements_attributes_text_and_entities() {
        let doc = "\u{feff}<?xml version=\"1.0\"?><!-- c --><a k=\"1 &amp; &#65;&#x42;\" j='&quot;'>t&lt;<b/><![CDATA[<raw>]]></a>\n";
        assert_eq!(
            events(doc).unwrap(),
            [
                r#"1<a[("k", "1 & AB"), ("j", "\"")]"#,
                "1:t<",
                "2<b[]",
                "2>",
                "1:<raw>",
                "1>"
            ]
        );
    }

    #[test]
    fn hostile_documents_are_refused() {
        assert!(why("<!DOCTYPE a [<!ENTITY x \"y\">]><a>&x;</a>").contains("DTD"));
        assert!(why("<a>&x;</a>").contains("unknown entity"));
        assert!(why("<a>&#0;</a>").contains("no character"));
        assert!(why("<a>&#xD800;</a>").contains("no character"));
        assert!(why("<a>& b</a>").contains("starts no entity"));
        assert!(why(&"<a>".repeat(9)).contains("nest too deep"));
        assert!(why(&format!("<a>{}</a>", "<b/>".repeat(100))).contains("100"));
        assert!(why("<a p='1' q='2' r='3' s='4' t='5'/>").contains('4'));
        assert!(why("<a></b>").contains("matches no open"));
        assert!(why("<a/><b/>").contains("second root"));
        assert!(why("<a><b>").contains("ends early"));
        assert!(why("<a k=\"1").contains("ends inside"));
        assert!(why("<a k=1/>").contains("quotes"));
        assert!(why("<a k=\"<\"/>").contains("attribute value"));
        assert!(why("").contains("ends early"));
        assert!(why(&format!("<{}/>", "n".repeat(300))).contains("256"));
    }
    #[test]
    fn an_entity_error_after_bytes_that_are_not_utf8_points_at_the_ampersand() {
        // Found by the tibia_stream fuzz target: the offset was counted in the lossy
        // text, where each 0xFF is three bytes, and pointed past the input.
        let mut raw = vec![0xFFu8; 40];
        raw.extend_from_slice(b" &a");
        let e = unescape(&raw, 100, "Text").unwrap_err();
        assert_eq!(e.offset, 141, "{e}"); // 40 bytes and a space before it
        let mut raw = vec![0xFFu8; 3];
        raw.extend_from_slice(b"&amp;x&lt;");
        assert_eq!(
            unescape(&raw, 0, "Text").unwrap(),
            "\u{FFFD}\u{FFFD}\u{FFFD}&x<"
        );
    }
}
