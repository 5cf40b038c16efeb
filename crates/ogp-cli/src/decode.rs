//! `ogp decode`: decode datagrams given as hex, files (raw bytes, hex text or JSON
//! captures) or standard input, for debugging. Each message becomes one line for people
//! (an answer also its status) or one JSON object per line (`docs/decode.md`). Without
//! `-p` each datagram's protocol is guessed from its first bytes. The decoding is
//! [`ogp_proto::decode`]'s (the bindings' `decode` too); this reads and prints.

use std::fmt::Write as _;
use std::io::Read as _;
use std::process::ExitCode;

use anyhow::{bail, Context as _, Result};
use ogp_proto::decode::{capture_datagrams, parse_hex, short, Input, Msg};
use ogp_proto::{Charset, Protocol};
use serde_json::Value;

use crate::render::{self, sanitize};

/// `ogp decode`: reads every input, guesses protocols when `protocol` is `None`, decodes
/// and prints.
/// Errors are one line with control characters replaced (they may quote the input).
pub fn run(
    protocol: Option<Protocol>,
    args: &[String],
    json: bool,
    charset: Charset,
) -> Result<ExitCode> {
    run_inner(protocol, args, json, charset)
        .map_err(|e| anyhow::anyhow!(sanitize(&format!("{e:#}"))))
}

fn run_inner(
    protocol: Option<Protocol>,
    args: &[String],
    json: bool,
    charset: Charset,
) -> Result<ExitCode> {
    let mut inputs = Vec::new();
    for a in args {
        inputs.extend(read_inputs(a)?);
    }
    let decoded =
        ogp_proto::decode::decode(protocol, inputs, charset).map_err(|e| anyhow::anyhow!("{e}"))?;
    for n in &decoded.notes {
        eprintln!("{}", sanitize(n));
    }
    print(&decoded.msgs, json)?;
    Ok(ExitCode::SUCCESS)
}

fn print(msgs: &[Msg], json: bool) -> Result<()> {
    let mut out = String::new();
    for (i, m) in msgs.iter().enumerate() {
        for w in &m.warnings {
            eprintln!("warning: {}", sanitize(w));
        }
        if json {
            let _ = writeln!(out, "{}", ogp_proto::result::to_json(&m.to_json())?);
            continue;
        }
        let _ = writeln!(out, "{}", sanitize(&m.line));
        let mut block = false;
        if let Some(s) = &m.status {
            let _ = write!(out, "\n{}", render::status(s));
            block = true;
        }
        if let Some(b) = &m.block {
            out.push_str(b);
            block = true;
        }
        if block && i + 1 < msgs.len() {
            out.push('\n');
        }
    }
    crate::emit(&out)
}

/// Reads an argument: `-` is standard input, an existing path is a file (raw bytes, hex
/// text, or a JSON capture holding several datagrams), anything else must be hex.
pub fn read_inputs(arg: &str) -> Result<Vec<Input>> {
    let raw = if arg == "-" {
        let mut b = Vec::new();
        std::io::stdin()
            .read_to_end(&mut b)
            .context("reading standard input")?;
        b
    } else if std::path::Path::new(arg).is_file() {
        std::fs::read(arg).with_context(|| format!("reading {}", sanitize(arg)))?
    } else {
        return match parse_hex(arg) {
            Some(bytes) => Ok(vec![Input {
                name: short(arg),
                bytes,
            }]),
            None => bail!("{}: neither a file nor hex digits", sanitize(&short(arg))),
        };
    };
    let name = std::path::Path::new(arg)
        .file_name()
        .map_or_else(|| arg.to_string(), |n| n.to_string_lossy().into_owned());
    if raw.trim_ascii_start().first() == Some(&b'{') {
        if let Ok(v) = serde_json::from_slice::<Value>(&raw) {
            return capture_datagrams(&name, &v).map_err(|e| anyhow::anyhow!("{e}"));
        }
    }
    let bytes = match std::str::from_utf8(&raw).ok().and_then(parse_hex) {
        Some(hex) => hex,
        None => raw,
    };
    Ok(vec![Input { name, bytes }])
}
