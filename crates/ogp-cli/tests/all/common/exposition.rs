//! A strict parser of the Prometheus text exposition format (0.0.4), for the metrics
//! tests of `ogp serve` and `ogp master`.
#![allow(dead_code)]

use std::collections::{BTreeMap, HashMap};

/// One sample line: its name, labels and value.
#[derive(Debug, Clone, PartialEq)]
pub struct Sample {
    pub name: String,
    pub labels: BTreeMap<String, String>,
    pub value: f64,
}

/// A scrape: the samples, and each family's TYPE.
#[derive(Debug, Default)]
pub struct Exposition {
    pub types: HashMap<String, String>,
    pub samples: Vec<Sample>,
}

impl Exposition {
    /// The value of the sample `name` with exactly these labels.
    pub fn get(&self, name: &str, labels: &[(&str, &str)]) -> Option<f64> {
        let want: BTreeMap<String, String> = labels
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect();
        self.samples
            .iter()
            .find(|s| s.name == name && s.labels == want)
            .map(|s| s.value)
    }

    pub fn value(&self, name: &str, labels: &[(&str, &str)]) -> f64 {
        self.get(name, labels)
            .unwrap_or_else(|| panic!("no sample {name} {labels:?} in {:#?}", self.samples))
    }
}

fn is_metric_name(s: &str) -> bool {
    let mut chars = s.chars();
    chars
        .next()
        .is_some_and(|c| c.is_ascii_alphabetic() || c == '_' || c == ':')
        && chars.all(|c| c.is_ascii_alphanumeric() || c == '_' || c == ':')
}

fn is_label_name(s: &str) -> bool {
    let mut chars = s.chars();
    chars
        .next()
        .is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
        && chars.all(|c| c.is_ascii_alphanumeric() || c == '_')
}

/// `{k="v",…}` at the start of `s`: the labels and the rest of the line.
fn parse_labels(s: &str) -> Result<(BTreeMap<String, String>, &str), String> {
    let mut labels = BTreeMap::new();
    let mut rest = s.strip_prefix('{').ok_or("no {")?;
    loop {
        if let Some(r) = rest.strip_prefix('}') {
            return Ok((labels, r));
        }
        let eq = rest.find('=').ok_or("label without =")?;
        let key = &rest[..eq];
        if !is_label_name(key) {
            return Err(format!("bad label name {key:?}"));
        }
        let mut chars = rest[eq + 1..].char_indices();
        if chars.next().map(|c| c.1) != Some('"') {
            return Err(format!("label {key} value not quoted"));
        }
        let mut value = String::new();
        let end = loop {
            match chars.next() {
                None => return Err("unterminated label value".into()),
                Some((i, '"')) => break eq + 1 + i + 1,
                Some((_, '\\')) => match chars.next().map(|c| c.1) {
                    Some('\\') => value.push('\\'),
                    Some('"') => value.push('"'),
                    Some('n') => value.push('\n'),
                    other => return Err(format!("bad escape {other:?}")),
                },
                Some((_, '\n')) => return Err("newline in a label value".into()),
                Some((_, c)) => value.push(c),
            }
        };
        if labels.insert(key.to_string(), value).is_some() {
            return Err(format!("label {key} twice"));
        }
        rest = &rest[end..];
        if let Some(r) = rest.strip_prefix(',') {
            rest = r;
        } else if !rest.starts_with('}') {
            return Err(format!("expected , or }} at {rest:?}"));
        }
    }
}

/// A float as the format writes it (Go's ParseFloat syntax plus `+Inf`, `-Inf`, `NaN`).
fn parse_value(s: &str) -> Result<f64, String> {
    match s {
        "+Inf" => Ok(f64::INFINITY),
        "-Inf" => Ok(f64::NEG_INFINITY),
        "NaN" => Ok(f64::NAN),
        _ if s
            .chars()
            .all(|c| c.is_ascii_digit() || matches!(c, '.' | 'e' | 'E' | '+' | '-')) =>
        {
            s.parse::<f64>().map_err(|e| format!("value {s:?}: {e}"))
        }
        _ => Err(format!("value {s:?} is not a float")),
    }
}

/// The family a sample belongs to: its own name, or for histograms and summaries the
/// name without `_bucket`, `_sum`, `_count`.
fn family_of<'a>(name: &'a str, types: &HashMap<String, String>) -> Option<&'a str> {
    if types.contains_key(name) {
        return Some(name);
    }
    ["_bucket", "_sum", "_count"].iter().find_map(|suffix| {
        let base = name.strip_suffix(suffix)?;
        matches!(types.get(base)?.as_str(), "histogram" | "summary").then_some(base)
    })
}

/// Parses a scrape strictly; any line that is not valid is an error naming it.
pub fn parse_exposition(body: &str) -> Result<Exposition, String> {
    if !body.ends_with('\n') {
        return Err("the body does not end with a newline".into());
    }
    let mut x = Exposition::default();
    let mut helped = HashMap::<String, ()>::new();
    let mut seen_samples = HashMap::<String, ()>::new();
    for (n, line) in body.lines().enumerate() {
        let at = |e: String| format!("line {}: {e}: {line:?}", n + 1);
        if let Some(rest) = line.strip_prefix("# HELP ") {
            let (name, _help) = rest.split_once(' ').unwrap_or((rest, ""));
            if !is_metric_name(name) {
                return Err(at(format!("bad name {name:?}")));
            }
            if helped.insert(name.to_string(), ()).is_some() {
                return Err(at("second HELP".into()));
            }
        } else if let Some(rest) = line.strip_prefix("# TYPE ") {
            let (name, kind) = rest.split_once(' ').ok_or_else(|| at("no type".into()))?;
            if !is_metric_name(name) {
                return Err(at(format!("bad name {name:?}")));
            }
            if !matches!(
                kind,
                "counter" | "gauge" | "histogram" | "summary" | "untyped"
            ) {
                return Err(at(format!("bad type {kind:?}")));
            }
            if seen_samples.contains_key(name) {
                return Err(at("TYPE after the family's samples".into()));
            }
            if x.types.insert(name.to_string(), kind.to_string()).is_some() {
                return Err(at("second TYPE".into()));
            }
        } else if line.starts_with('#') {
            // a comment: allowed by the format, but this server writes none
            return Err(at("unexpected comment".into()));
        } else if line.is_empty() {
            return Err(at("empty line".into()));
        } else {
            let name_end = line.find(['{', ' ']).ok_or_else(|| at("no value".into()))?;
            let name = &line[..name_end];
            if !is_metric_name(name) {
                return Err(at(format!("bad name {name:?}")));
            }
            let (labels, rest) = if line[name_end..].starts_with('{') {
                parse_labels(&line[name_end..]).map_err(at)?
            } else {
                (BTreeMap::new(), &line[name_end..])
            };
            let rest = rest
                .strip_prefix(' ')
                .ok_or_else(|| at("no space before the value".into()))?;
            let mut fields = rest.split(' ');
            let value = parse_value(fields.next().unwrap_or_default()).map_err(at)?;
            if let Some(ts) = fields.next() {
                ts.parse::<i64>()
                    .map_err(|e| at(format!("timestamp {ts:?}: {e}")))?;
            }
            if fields.next().is_some() {
                return Err(at("trailing fields".into()));
            }
            let family = family_of(name, &x.types)
                .ok_or_else(|| at(format!("no TYPE line before the samples of {name}")))?;
            seen_samples.insert(family.to_string(), ());
            if x.types.get(family).map(String::as_str) == Some("counter")
                && !(value >= 0.0 && name.ends_with("_total"))
            {
                return Err(at("a counter must be >= 0 and named *_total".into()));
            }
            let sample = Sample {
                name: name.to_string(),
                labels,
                value,
            };
            if x.samples
                .iter()
                .any(|s| s.name == sample.name && s.labels == sample.labels)
            {
                return Err(at("the same series twice".into()));
            }
            x.samples.push(sample);
        }
    }
    Ok(x)
}
