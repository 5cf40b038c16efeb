//! The XML-RPC of Nadeo's servers: the calls we write, and a small reader of the
//! `methodResponse` documents they answer.
//!
//! The reader takes what XML-RPC's specification allows a value to be (`string`, `i4`,
//! `int`, `i8`, `boolean`, `double`, `dateTime.iso8601` and `base64` as text, `nil`,
//! `struct`, `array`, and untyped text as a string), the five named entities and
//! numeric character references, a prolog and comments; nothing else of XML. It is
//! bounded: values nest at most [`MAX_DEPTH`] deep, a document has at most
//! [`MAX_VALUES`] values, and its size is the frame's, which the client caps. Any input
//! gives a value or a [`DecodeError`] with the byte offset, never a panic.

use crate::error::DecodeError;

/// How deep values may nest (a struct in an array is 2).
pub const MAX_DEPTH: usize = 16;
/// The most values one document may have.
pub const MAX_VALUES: usize = 100_000;

/// An XML-RPC value.
#[derive(Debug, Clone, PartialEq)]
pub enum Value {
    /// `string`, untyped text, `dateTime.iso8601`, `base64`.
    Str(String),
    /// `i4`, `int`, `i8`.
    Int(i64),
    /// `boolean`.
    Bool(bool),
    /// `double`.
    Double(f64),
    /// `struct`: its members, in order.
    Struct(Vec<(String, Value)>),
    /// `array`.
    Array(Vec<Value>),
    /// `nil`.
    Nil,
}

impl Value {
    /// A struct's member `key`.
    pub fn get(&self, key: &str) -> Option<&Value> {
        match self {
            Self::Struct(m) => m.iter().find(|(k, _)| k == key).map(|(_, v)| v),
            _ => None,
        }
    }

    /// The text of a string.
    pub fn as_str(&self) -> Option<&str> {
        match self {
            Self::Str(s) => Some(s),
            _ => None,
        }
    }

    /// An integer.
    pub fn as_int(&self) -> Option<i64> {
        match *self {
            Self::Int(v) => Some(v),
            _ => None,
        }
    }

    /// The value as text (numbers and booleans as written; `None` for structs, arrays and
    /// nil).
    pub fn text(&self) -> Option<String> {
        match self {
            Self::Str(s) => Some(s.clone()),
            Self::Int(v) => Some(v.to_string()),
            Self::Bool(v) => Some(v.to_string()),
            Self::Double(v) => Some(v.to_string()),
            _ => None,
        }
    }
}

/// A `methodResponse`: a value, or a fault.
#[derive(Debug, Clone, PartialEq)]
pub enum Response {
    /// `params`: the one value.
    Ok(Value),
    /// `fault`: its `faultCode` and `faultString`.
    Fault {
        /// `faultCode`.
        code: i64,
        /// `faultString`.
        message: String,
    },
}

/// A call's parameter.
#[derive(Debug, Clone, Copy)]
pub enum Param<'a> {
    /// A `string`.
    Str(&'a str),
    /// An `int`.
    Int(i32),
}

/// `s` with `&`, `<` and `>` escaped.
pub fn escape(s: &str) -> String {
    s.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
}

/// The `methodCall` document of `method` with `params`.
pub fn method_call(method: &str, params: &[Param<'_>]) -> String {
    let mut x =
        format!("<?xml version=\"1.0\"?><methodCall><methodName>{method}</methodName><params>");
    for p in params {
        match p {
            Param::Str(s) => {
                x.push_str("<param><value><string>");
                x.push_str(&escape(s));
                x.push_str("</string></value></param>");
            }
            Param::Int(i) => x.push_str(&format!("<param><value><int>{i}</int></value></param>")),
        }
    }
    x.push_str("</params></methodCall>");
    x
}

const FIELD: &str = "XML-RPC";

struct Parser<'a> {
    b: &'a [u8],
    i: usize,
    base: usize,
    values: usize,
}

impl<'a> Parser<'a> {
    fn err(&self, why: &'static str) -> DecodeError {
        DecodeError::invalid(self.base.saturating_add(self.i), FIELD, why)
    }

    fn rest(&self) -> &'a [u8] {
        self.b.get(self.i..).unwrap_or_default()
    }

    fn skip_to(&mut self, end: &[u8], why: &'static str) -> Result<(), DecodeError> {
        let at = self
            .rest()
            .windows(end.len())
            .position(|w| w == end)
            .ok_or_else(|| self.err(why))?;
        self.i = self.i.saturating_add(at).saturating_add(end.len());
        Ok(())
    }

    /// Skips whitespace, processing instructions and comments.
    fn skip_misc(&mut self) -> Result<(), DecodeError> {
        loop {
            let r = self.rest();
            let ws = r.iter().take_while(|b| b.is_ascii_whitespace()).count();
            self.i = self.i.saturating_add(ws);
            let r = self.rest();
            if r.starts_with(b"<?") {
                self.skip_to(b"?>", "a processing instruction that does not end")?;
            } else if r.starts_with(b"<!--") {
                self.skip_to(b"-->", "a comment that does not end")?;
            } else {
                return Ok(());
            }
        }
    }

    /// The name of the tag at the cursor (after `<` or `</`), and whether it closes.
    fn peek_tag(&self) -> Option<(&'a [u8], bool)> {
        let r = self.rest().strip_prefix(b"<")?;
        let (r, closing) = match r.strip_prefix(b"/") {
            Some(r) => (r, true),
            None => (r, false),
        };
        let n = r
            .iter()
            .take_while(|b| !b.is_ascii_whitespace() && !matches!(b, b'>' | b'/'))
            .count();
        Some((r.get(..n)?, closing))
    }

    /// Reads the opening tag `name`; true when it closes itself (`<name/>`).
    fn open(&mut self, name: &[u8], why: &'static str) -> Result<bool, DecodeError> {
        self.skip_misc()?;
        match self.peek_tag() {
            Some((n, false)) if n == name => {}
            _ => return Err(self.err(why)),
        }
        let end = self
            .rest()
            .iter()
            .position(|&b| b == b'>')
            .ok_or_else(|| self.err("a tag that does not end"))?;
        let self_closing = end > 0 && self.rest().get(end - 1) == Some(&b'/');
        self.i = self.i.saturating_add(end).saturating_add(1);
        Ok(self_closing)
    }

    /// Reads the closing tag `name`.
    fn close(&mut self, name: &[u8], why: &'static str) -> Result<(), DecodeError> {
        self.skip_misc()?;
        match self.peek_tag() {
            Some((n, true)) if n == name => {}
            _ => return Err(self.err(why)),
        }
        let end = self
            .rest()
            .iter()
            .position(|&b| b == b'>')
            .ok_or_else(|| self.err("a tag that does not end"))?;
        self.i = self.i.saturating_add(end).saturating_add(1);
        Ok(())
    }

    /// The text up to the next `<`, entities decoded.
    fn text(&mut self) -> String {
        let r = self.rest();
        let n = r.iter().position(|&b| b == b'<').unwrap_or(r.len());
        self.i = self.i.saturating_add(n);
        unescape(&String::from_utf8_lossy(r.get(..n).unwrap_or_default()))
    }

    /// The text of `<name>…</name>` (the opening tag read).
    fn text_of(&mut self, name: &[u8], self_closing: bool) -> Result<String, DecodeError> {
        if self_closing {
            return Ok(String::new());
        }
        let t = self.text();
        self.close(name, "a scalar whose closing tag is missing")?;
        Ok(t)
    }

    fn value(&mut self, depth: usize) -> Result<Value, DecodeError> {
        if depth > MAX_DEPTH {
            return Err(self.err("values nest deeper than 16"));
        }
        self.values = self.values.saturating_add(1);
        if self.values > MAX_VALUES {
            return Err(self.err("more than 100000 values"));
        }
        if self.open(b"value", "not a <value>")? {
            return Ok(Value::Str(String::new()));
        }
        let raw = self.text();
        let v = match self.peek_tag() {
            Some((b"value", true)) => Value::Str(raw),
            Some((name, false)) if raw.trim().is_empty() => self.typed(name, depth)?,
            _ => return Err(self.err("text beside a typed value")),
        };
        self.close(b"value", "a <value> whose closing tag is missing")?;
        Ok(v)
    }

    fn typed(&mut self, name: &'a [u8], depth: usize) -> Result<Value, DecodeError> {
        let closed = self.open(name, "not a value type")?;
        Ok(match name {
            b"string" | b"dateTime.iso8601" | b"base64" => Value::Str(self.text_of(name, closed)?),
            b"i4" | b"int" | b"i8" => {
                let at = self.err("not an integer");
                Value::Int(self.text_of(name, closed)?.trim().parse().map_err(|_| at)?)
            }
            b"double" => {
                let at = self.err("not a double");
                Value::Double(self.text_of(name, closed)?.trim().parse().map_err(|_| at)?)
            }
            b"boolean" => {
                let at = self.err("not a boolean (0 or 1)");
                match self.text_of(name, closed)?.trim() {
                    "1" => Value::Bool(true),
                    "0" => Value::Bool(false),
                    _ => return Err(at),
                }
            }
            b"nil" => {
                self.text_of(name, closed)?;
                Value::Nil
            }
            b"struct" => {
                let mut members = Vec::new();
                if !closed {
                    loop {
                        self.skip_misc()?;
                        if matches!(self.peek_tag(), Some((b"struct", true))) {
                            break;
                        }
                        self.open(b"member", "not a <member>")?;
                        let c = self.open(b"name", "a member without a <name>")?;
                        let key = self.text_of(b"name", c)?;
                        let v = self.value(depth.saturating_add(1))?;
                        self.close(b"member", "a <member> whose closing tag is missing")?;
                        members.push((key, v));
                    }
                    self.close(b"struct", "a <struct> whose closing tag is missing")?;
                }
                Value::Struct(members)
            }
            b"array" => {
                let mut items = Vec::new();
                if !closed {
                    if !self.open(b"data", "an <array> without <data>")? {
                        loop {
                            self.skip_misc()?;
                            if matches!(self.peek_tag(), Some((b"data", true))) {
                                break;
                            }
                            items.push(self.value(depth.saturating_add(1))?);
                        }
                        self.close(b"data", "a <data> whose closing tag is missing")?;
                    }
                    self.close(b"array", "an <array> whose closing tag is missing")?;
                }
                Value::Array(items)
            }
            _ => return Err(self.err("not an XML-RPC value type")),
        })
    }
}

/// `s` with the five named entities and numeric references decoded (others kept).
pub fn unescape(s: &str) -> String {
    if !s.contains('&') {
        return s.to_owned();
    }
    let mut out = String::with_capacity(s.len());
    let mut rest = s;
    while let Some(at) = rest.find('&') {
        let (before, from) = rest.split_at(at);
        out.push_str(before);
        let entity = from.get(1..).and_then(|f| f.get(..f.find(';')?.min(10)));
        let c = entity.and_then(|e| match e {
            "lt" => Some('<'),
            "gt" => Some('>'),
            "amp" => Some('&'),
            "quot" => Some('"'),
            "apos" => Some('\''),
            _ => {
                let n = e.strip_prefix('#')?;
                let code = match n.strip_prefix(['x', 'X']) {
                    Some(h) => u32::from_str_radix(h, 16).ok()?,
                    None => n.parse().ok()?,
                };
                char::from_u32(code)
            }
        });
        match (c, entity) {
            (Some(c), Some(e)) => {
                out.push(c);
                rest = from.get(e.len().saturating_add(2)..).unwrap_or_default();
            }
            _ => {
                out.push('&');
                rest = from.get(1..).unwrap_or_default();
            }
        }
    }
    out.push_str(rest);
    out
}

/// A `methodResponse` document, its offsets counted from `base`.
pub fn parse_response(xml: &[u8], base: usize) -> Result<Response, DecodeError> {
    let mut p = Parser {
        b: xml,
        i: 0,
        base,
        values: 0,
    };
    p.open(b"methodResponse", "not a <methodResponse>")?;
    p.skip_misc()?;
    let r = match p.peek_tag() {
        Some((b"fault", false)) => {
            p.open(b"fault", "not a <fault>")?;
            let v = p.value(1)?;
            p.close(b"fault", "a <fault> whose closing tag is missing")?;
            Response::Fault {
                code: v.get("faultCode").and_then(Value::as_int).unwrap_or(0),
                message: v
                    .get("faultString")
                    .and_then(Value::text)
                    .unwrap_or_default(),
            }
        }
        _ => {
            let empty = p.open(b"params", "neither <params> nor <fault>")?;
            let v = if empty {
                Value::Nil
            } else {
                p.open(b"param", "<params> without a <param>")?;
                let v = p.value(1)?;
                p.close(b"param", "a <param> whose closing tag is missing")?;
                p.close(b"params", "a <params> whose closing tag is missing")?;
                v
            };
            Response::Ok(v)
        }
    };
    p.close(
        b"methodResponse",
        "a <methodResponse> whose closing tag is missing",
    )?;
    Ok(r)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ok(xml: &str) -> Value {
        match parse_response(xml.as_bytes(), 0).unwrap() {
            Response::Ok(v) => v,
            f => panic!("{f:?}"),
        }
    }

    #[test]
    fn values_of_every_type() {
        let v = ok("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<methodResponse><params><param><value><struct>\
            <member><name>Name</name><value><string>$f00a &amp; b</string></value></member>\
            <member><name>N</name><value><i4>-5</i4></value></member>\
            <member><name>B</name><value><boolean>1</boolean></value></member>\
            <member><name>D</name><value><double>1.5</double></value></member>\
            <member><name>U</name><value>raw &#x41;&#66;</value></member>\
            <member><name>E</name><value><string/></value></member>\
            <member><name>A</name><value><array><data><value><int>1</int></value><value/></data></array></value></member>\
            <member><name>Z</name><value><array><data/></array></value></member>\
            </struct></value></param></params></methodResponse>");
        assert_eq!(v.get("Name").and_then(Value::as_str), Some("$f00a & b"));
        assert_eq!(v.get("N").and_then(Value::as_int), Some(-5));
        assert_eq!(v.get("B"), Some(&Value::Bool(true)));
        assert_eq!(v.get("D"), Some(&Value::Double(1.5)));
        assert_eq!(v.get("U").and_then(Value::as_str), Some("raw AB"));
        assert_eq!(v.get("E").and_then(Value::as_str), Some(""));
        assert_eq!(
            v.get("A"),
            Some(&Value::Array(vec![
                Value::Int(1),
                Value::Str(String::new())
            ]))
        );
        assert_eq!(v.get("Z"), Some(&Value::Array(vec![])));
        let f = parse_response(b"<methodResponse><fault><value><struct><member><name>faultCode</name><value><int>-1000</int></value></member><member><name>faultString</name><value><string>Permission denied.</string></value></member></struct></value></fault></methodResponse>", 0).unwrap();
        assert_eq!(
            f,
            Response::Fault {
                code: -1000,
                message: "Permission denied.".into()
            }
        );
    }

    #[test]
    fn deep_huge_and_broken_documents_are_errors() {
        let deep = format!(
            "<methodResponse><params><param>{}{}</param></params></methodResponse>",
            "<value><array><data>".repeat(1000),
            "</data></array></value>".repeat(1000)
        );
        let e = parse_response(deep.as_bytes(), 8).unwrap_err();
        assert!(e.to_string().contains("nest deeper"), "{e}");
        let many = format!(
            "<methodResponse><params><param><value><array><data>{}</data></array></value></param></params></methodResponse>",
            "<value/>".repeat(MAX_VALUES + 1)
        );
        let e = parse_response(many.as_bytes(), 0).unwrap_err();
        assert!(e.to_string().contains("100000"), "{e}");
        for bad in [
            "",
            "<methodResponse>",
            "<methodResponse><params><param><value><i4>x</i4></value></param></params></methodResponse>",
            "<methodResponse><params><param><value><struct><member><value/></member></struct></value></param></params></methodResponse>",
            "<methodResponse><params><param><value>a<i4>1</i4></value></param></params></methodResponse>",
            "<methodResponse><params><param><value><foo/></value></param></params></methodResponse>",
            "<!-- x",
        ] {
            assert!(parse_response(bad.as_bytes(), 8).is_err(), "{bad}");
        }
        assert_eq!(
            unescape("a &bogus; &amp &#xZZ; &#1114112;"),
            "a &bogus; &amp &#xZZ; &#1114112;"
        );
    }

    #[test]
    fn calls_escape_their_strings() {
        let c = method_call("Authenticate", &[Param::Str("a<&>"), Param::Int(7)]);
        assert!(c.contains("<string>a&lt;&amp;&gt;</string>"), "{c}");
        assert!(c.contains("<int>7</int>"), "{c}");
    }
}
