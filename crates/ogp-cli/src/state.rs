//! Reading the state file of `ogp serve`, bounded whatever is at its path.
//!
//! * Only a regular file is read, after following symlinks: the path is looked at with
//!   `stat` before it is opened (opening some devices has side effects), opened with
//!   `O_NONBLOCK` (a FIFO nobody writes to cannot block the open) and looked at again with
//!   `fstat` (it may have been swapped in between). A FIFO, a directory, a device (a
//!   symlink to `/dev/zero`) or a socket is refused with what it is.
//! * At most `--max-state-bytes` are read; a larger file is refused without being read.
//! * The text must be UTF-8, JSON nested at most [`MAX_DEPTH`] deep, a JSON state an
//!   object; the model then bounds every count while it is read and
//!   [`Status::apply_limits`] every string (see `docs/state-file.md`).
//! * Every error is one line naming the file, the line and column (in characters), and
//!   the field's path where there is one: `state.json: line 7 column 18: players[0].name:
//!   invalid type: integer `5`, expected a string`.
//!
//! Nothing here blocks on anything but the file system; `serve` runs it on a thread of its
//! own with a time limit, in case the file system itself hangs.

use std::fmt;
use std::fs::{File, Metadata, OpenOptions};
use std::io::{self, Read as _};
use std::os::unix::fs::{FileTypeExt as _, MetadataExt as _, OpenOptionsExt as _};
use std::path::Path;

use ogp_proto::limits::ClipReport;
use ogp_proto::Status;

/// Default of `--max-state-bytes`: 16 MiB, far more than any status the protocols can
/// carry (about 4,096 entries of a few hundred bytes), far less than memory.
pub const DEFAULT_MAX_STATE_BYTES: u64 = 16 << 20;

/// Deepest nesting of arrays and objects in a JSON state file. The status itself needs 5
/// (`players[0].name_color.entries[0]`); serde_json would stop at 128 with a less clear
/// message.
pub const MAX_DEPTH: usize = 32;

/// What identifies one version of the file: when any of these changes, it is read again.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Stamp {
    dev: u64,
    ino: u64,
    mode: u32,
    len: u64,
    mtime: (i64, i64),
    ctime: (i64, i64),
}

impl Stamp {
    fn of(m: &Metadata) -> Self {
        Self {
            dev: m.dev(),
            ino: m.ino(),
            mode: m.mode(),
            len: m.len(),
            mtime: (m.mtime(), m.mtime_nsec()),
            ctime: (m.ctime(), m.ctime_nsec()),
        }
    }
}

/// What a look at the path found: the stamp of what it leads to, or why there is none.
pub type Seen = Result<Stamp, io::ErrorKind>;

/// Looks at the path (`stat`, following symlinks).
pub fn see(path: &Path) -> Seen {
    std::fs::metadata(path)
        .map(|m| Stamp::of(&m))
        .map_err(|e| e.kind())
}

/// A refused state file: one line, starting with the file's name.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StateError(String);

impl fmt::Display for StateError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for StateError {}

/// A state file that loaded.
#[derive(Debug)]
pub struct Loaded {
    /// The status, within the limits.
    pub status: Status,
    /// The strings that were clipped to fit.
    pub clipped: ClipReport,
}

/// One read of the state file: what was read (the stamp of the opened file), and the
/// outcome.
#[derive(Debug)]
pub struct Load {
    /// The stamp of the file that was read (or of the path, when it was not opened).
    pub seen: Seen,
    /// The status, or why the file was refused.
    pub result: Result<Loaded, StateError>,
}

/// Reads and parses the state file, reading at most `max_bytes` of it.
pub fn load(path: &Path, max_bytes: u64) -> Load {
    let named = |msg: String| StateError(format!("{}{msg}", describe_path(path)));
    let (seen, bytes) = read_capped(path, max_bytes);
    let result = match bytes {
        Ok(bytes) => parse(path, &bytes).map_err(named),
        Err(e) => Err(named(e)),
    };
    Load { seen, result }
}

/// `path: `, or `path (a symlink to target): ` when it is one.
fn describe_path(path: &Path) -> String {
    match std::fs::read_link(path) {
        Ok(target) => format!("{} (a symlink to {})", path.display(), target.display()),
        Err(_) => path.display().to_string(),
    }
}

/// What a file type is, in words; `None` for a regular file.
fn non_regular(m: &Metadata) -> Option<&'static str> {
    let t = m.file_type();
    if t.is_file() {
        None
    } else if t.is_dir() {
        Some("a directory")
    } else if t.is_fifo() {
        Some("a FIFO (named pipe)")
    } else if t.is_char_device() {
        Some("a character device")
    } else if t.is_block_device() {
        Some("a block device")
    } else if t.is_socket() {
        Some("a socket")
    } else {
        Some("not a file")
    }
}

fn refuse_type(what: &str) -> String {
    format!(": {what}, not a regular file; only a regular file is read")
}

/// Opens and reads the file at `path`, refusing anything but a regular file of at most
/// `max` bytes. Errors are the rest of a line that starts with the path (`: …`).
fn read_capped(path: &Path, max: u64) -> (Seen, Result<Vec<u8>, String>) {
    // Look before opening: opening a device can have effects of its own.
    match std::fs::metadata(path) {
        Ok(m) => {
            if let Some(what) = non_regular(&m) {
                return (Ok(Stamp::of(&m)), Err(refuse_type(what)));
            }
        }
        Err(e) => return (Err(e.kind()), Err(format!(": cannot read it: {e}"))),
    }
    let file = match OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NONBLOCK | libc::O_NOCTTY)
        .open(path)
    {
        Ok(f) => f,
        Err(e) => return (see(path), Err(format!(": cannot open it: {e}"))),
    };
    // Look again at what was opened: the path may have been swapped in between.
    let m = match file.metadata() {
        Ok(m) => m,
        Err(e) => return (see(path), Err(format!(": cannot read it: {e}"))),
    };
    let seen = Ok(Stamp::of(&m));
    if let Some(what) = non_regular(&m) {
        return (seen, Err(refuse_type(what)));
    }
    if m.len() > max {
        return (
            seen,
            Err(format!(
                ": {} bytes, more than --max-state-bytes ({max})",
                m.len()
            )),
        );
    }
    (seen, read_at_most(file, m.len(), max))
}

/// Reads a regular file of `len` bytes (as `fstat` said), refusing it if it grew past
/// `max` in the meantime.
fn read_at_most(file: File, len: u64, max: u64) -> Result<Vec<u8>, String> {
    let cap = usize::try_from(len.min(max)).unwrap_or(0).saturating_add(1);
    let mut bytes = Vec::with_capacity(cap);
    let limit = max.saturating_add(1);
    match file.take(limit).read_to_end(&mut bytes) {
        Ok(_) => {}
        Err(e) => return Err(format!(": cannot read it: {e}")),
    }
    if u64::try_from(bytes.len()).unwrap_or(u64::MAX) > max {
        return Err(format!(
            ": grew past --max-state-bytes ({max}) while being read"
        ));
    }
    Ok(bytes)
}

// -----------------------------------------------------------------------------------
// Parsing

/// Parses the bytes of `path`; errors are the rest of a line that starts with the path.
fn parse(path: &Path, bytes: &[u8]) -> Result<Loaded, String> {
    let is_toml = path
        .extension()
        .is_some_and(|e| e.eq_ignore_ascii_case("toml"));
    // A byte order mark, as some Windows editors write, is not part of the text.
    let bytes = bytes.strip_prefix(b"\xEF\xBB\xBF").unwrap_or(bytes);
    let text = match std::str::from_utf8(bytes) {
        Ok(t) => t,
        Err(e) => {
            let at = e.valid_up_to();
            let bad = bytes.get(at).copied().unwrap_or(0);
            let path = if is_toml {
                None
            } else {
                json_walk(bytes, at).path
            };
            return Err(located(
                bytes,
                at,
                path.as_deref(),
                &format!("invalid UTF-8 (byte 0x{bad:02X}); a state file must be UTF-8"),
            ));
        }
    };
    let mut status = if is_toml {
        parse_toml(text)?
    } else {
        parse_json(text)?
    };
    let clipped = status.apply_limits().map_err(|e| format!(": {e}"))?;
    Ok(Loaded { status, clipped })
}

fn parse_json(text: &str) -> Result<Status, String> {
    let bytes = text.as_bytes();
    let walk = json_walk(bytes, bytes.len());
    if let Some(at) = walk.too_deep_at {
        return Err(located(
            bytes,
            at,
            walk.path.as_deref(),
            &format!(
                "nested too deeply: more than {MAX_DEPTH} levels of arrays and objects \
                 (a status needs 5)"
            ),
        ));
    }
    let first = bytes.iter().position(|b| !b.is_ascii_whitespace());
    let what = match first.and_then(|i| bytes.get(i)) {
        None => {
            return Err(
                ": the file is empty; a state file must be a JSON object (the status)".into(),
            )
        }
        Some(b'{') => None,
        Some(b'[') => Some("an array"),
        Some(b'"') => Some("a string"),
        Some(b'-' | b'0'..=b'9') => Some("a number"),
        Some(b't' | b'f') => Some("a boolean"),
        Some(b'n') => Some("null"),
        Some(_) => None, // not JSON at all: serde_json says where
    };
    if let (Some(what), Some(at)) = (what, first) {
        return Err(located(
            bytes,
            at,
            None,
            &format!("the state file must be a JSON object (the status), not {what}"),
        ));
    }
    let mut de = serde_json::Deserializer::from_str(text);
    let status: Status = serde_path_to_error::deserialize(&mut de)
        .map_err(|e| json_error(bytes, &e.path().to_string(), e.inner()))?;
    de.end().map_err(|e| json_error(bytes, "", &e))?;
    Ok(status)
}

/// A serde_json error as `: line L column C: path: message`.
fn json_error(bytes: &[u8], path: &str, e: &serde_json::Error) -> String {
    let full = e.to_string();
    let suffix = format!(" at line {} column {}", e.line(), e.column());
    let mut msg = full.strip_suffix(&suffix).unwrap_or(&full).to_owned();
    if msg.starts_with("recursion limit exceeded") {
        msg = "nested too deeply".into();
    }
    if e.classify() == serde_json::error::Category::Eof {
        msg.push_str(" (the file ends early: half written?)");
    }
    let path = (!path.is_empty() && path != ".").then_some(path);
    if e.line() == 0 {
        return match path {
            Some(p) => format!(": {p}: {msg}"),
            None => format!(": {msg}"),
        };
    }
    let at = line_start(bytes, e.line()).saturating_add(e.column().saturating_sub(1));
    located(bytes, at.min(bytes.len()), path, &msg)
}

fn parse_toml(text: &str) -> Result<Status, String> {
    let de = toml::Deserializer::new(text);
    serde_path_to_error::deserialize(de).map_err(|e| {
        let path = e.path().to_string();
        let path = (!path.is_empty() && path != ".").then_some(path.as_str());
        let inner = e.inner();
        let mut msg = inner.message().trim_end().to_owned();
        if msg.contains("recursion limit") {
            msg = "nested too deeply".into();
        }
        match inner.span() {
            Some(span) => located(text.as_bytes(), span.start, path, &msg),
            None => match path {
                Some(p) => format!(": {p}: {msg}"),
                None => format!(": {msg}"),
            },
        }
    })
}

/// `: line L column C: path: message`, for the byte at offset `at`.
fn located(bytes: &[u8], at: usize, path: Option<&str>, msg: &str) -> String {
    let (line, column) = position(bytes, at);
    match path {
        Some(p) if !p.is_empty() => format!(": line {line} column {column}: {p}: {msg}"),
        _ => format!(": line {line} column {column}: {msg}"),
    }
}

/// The 1-based line and column (in characters, as an editor counts them) of the byte at
/// offset `at`.
fn position(bytes: &[u8], at: usize) -> (usize, usize) {
    let before = bytes.get(..at).unwrap_or(bytes);
    let start = before
        .iter()
        .rposition(|&b| b == b'\n')
        .map_or(0, |i| i + 1);
    let line = 1 + before.iter().filter(|&&b| b == b'\n').count();
    let column = 1 + before
        .get(start..)
        .unwrap_or_default()
        .iter()
        .filter(|&&b| b & 0xC0 != 0x80)
        .count();
    (line, column)
}

/// The offset of the first byte of 1-based line `line`.
fn line_start(bytes: &[u8], line: usize) -> usize {
    if line <= 1 {
        return 0;
    }
    bytes
        .iter()
        .enumerate()
        .filter(|(_, &b)| b == b'\n')
        .nth(line - 2)
        .map_or(bytes.len(), |(i, _)| i + 1)
}

/// Where a walk over JSON bytes stopped.
struct Walked {
    /// The offset of the first bracket nested deeper than [`MAX_DEPTH`], if any.
    too_deep_at: Option<usize>,
    /// The path of the value the walk stopped in (`players[0].name`), if inside one.
    path: Option<String>,
}

enum Frame {
    Object { key: Vec<u8>, in_value: bool },
    Array { index: usize },
}

/// Longest key kept for a path.
const MAX_KEY_IN_PATH: usize = 64;

/// Most segments shown in a path (a status nests 5 deep; deeper is cut with `…`).
const MAX_PATH_SEGMENTS: usize = 8;

/// Walks JSON bytes (valid or not) up to offset `until`, or to the first bracket nested
/// deeper than [`MAX_DEPTH`], keeping the path to where it is. Memory: one frame per
/// level, at most [`MAX_DEPTH`] of them.
fn json_walk(bytes: &[u8], until: usize) -> Walked {
    let mut stack: Vec<Frame> = Vec::new();
    let mut in_string = false;
    let mut escaped = false;
    let mut in_key = false;
    let mut too_deep_at = None;
    for (i, &b) in bytes.iter().enumerate().take(until) {
        if in_string {
            if escaped {
                escaped = false;
            } else if b == b'\\' {
                escaped = true;
            } else if b == b'"' {
                in_string = false;
                in_key = false;
                continue;
            }
            if in_key {
                if let Some(Frame::Object { key, .. }) = stack.last_mut() {
                    if key.len() < MAX_KEY_IN_PATH {
                        key.push(b);
                    }
                }
            }
            continue;
        }
        match b {
            b'"' => {
                in_string = true;
                if let Some(Frame::Object { key, in_value }) = stack.last_mut() {
                    if !*in_value {
                        in_key = true;
                        key.clear();
                    }
                }
            }
            b'{' | b'[' => {
                if stack.len() >= MAX_DEPTH {
                    too_deep_at = Some(i);
                    break;
                }
                stack.push(if b == b'{' {
                    Frame::Object {
                        key: Vec::new(),
                        in_value: false,
                    }
                } else {
                    Frame::Array { index: 0 }
                });
            }
            b'}' | b']' => {
                stack.pop();
            }
            b':' => {
                if let Some(Frame::Object { in_value, .. }) = stack.last_mut() {
                    *in_value = true;
                }
            }
            b',' => match stack.last_mut() {
                Some(Frame::Object { in_value, .. }) => *in_value = false,
                Some(Frame::Array { index }) => *index = index.saturating_add(1),
                None => {}
            },
            _ => {}
        }
    }
    let mut path = String::new();
    for (n, f) in stack.iter().enumerate() {
        if n == MAX_PATH_SEGMENTS {
            path.push('…');
            break;
        }
        match f {
            Frame::Object {
                key,
                in_value: true,
            } => {
                if !path.is_empty() {
                    path.push('.');
                }
                path.push_str(&String::from_utf8_lossy(key));
            }
            Frame::Object { .. } => break,
            Frame::Array { index } => path.push_str(&format!("[{index}]")),
        }
    }
    Walked {
        too_deep_at,
        path: (!path.is_empty()).then_some(path),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Parses state-file bytes as `load` does; errors start with the path.
    fn parse_file(path: &Path, bytes: &[u8]) -> Result<Loaded, StateError> {
        parse(path, bytes).map_err(|msg| StateError(format!("{}{msg}", path.display())))
    }

    fn err(name: &str, text: &[u8]) -> String {
        parse_file(Path::new(name), text).unwrap_err().to_string()
    }

    #[test]
    fn json_errors_name_line_column_and_path() {
        let e = err("s.json", b"{\n  \"host_name\": 5\n}");
        assert_eq!(
            e,
            "s.json: line 2 column 16: host_name: invalid type: integer `5`, expected a string"
        );
        let e = err(
            "s.json",
            "{\"players\": [{}, {\"name\": \"Zoë\", \"ping\": \"fast\"}]}".as_bytes(),
        );
        assert!(
            e.starts_with("s.json: line 1 column 47: players[1].ping: invalid type: string"),
            "{e}"
        );
        // columns count characters, not bytes
        let e = err(
            "s.json",
            "{\"host_name\": \"ÄÖÜ\", \"bogus\": 1}".as_bytes(),
        );
        assert!(e.starts_with("s.json: line 1 column 28: bogus: "), "{e}");
        assert!(e.contains("unknown field `bogus`"), "{e}");
        // trailing garbage
        let e = err("s.json", b"{}\n]");
        assert_eq!(e, "s.json: line 2 column 1: trailing characters");
    }

    #[test]
    fn half_written_json_says_so() {
        let e = err("s.json", b"{ \"host_name\": \"half-writ");
        assert_eq!(
            e,
            "s.json: line 1 column 25: host_name: EOF while parsing a string \
             (the file ends early: half written?)"
        );
    }

    #[test]
    fn top_level_must_be_an_object() {
        for (text, what) in [
            ("  [1, 2]", "an array"),
            ("\"x\"", "a string"),
            ("\n-5", "a number"),
            ("true", "a boolean"),
            ("null", "null"),
        ] {
            let e = err("s.json", text.as_bytes());
            assert!(
                e.ends_with(&format!(
                    "the state file must be a JSON object (the status), not {what}"
                )),
                "{e}"
            );
            assert!(e.starts_with("s.json: line "), "{e}");
        }
        assert_eq!(
            err("s.json", b" \n "),
            "s.json: the file is empty; a state file must be a JSON object (the status)"
        );
        // TOML's top level is always a table: an empty file is an empty status
        assert!(parse_file(Path::new("s.toml"), b"").is_ok());
    }

    #[test]
    fn deep_nesting_is_refused_with_its_place() {
        let mut text = String::from("{\"players\": [{\"extra\": ");
        text.push_str(&"[".repeat(100_000));
        let e = err("s.json", text.as_bytes());
        assert_eq!(
            e,
            "s.json: line 1 column 53: players[0].extra[0][0][0][0][0]…: nested too deeply: more \
             than 32 levels of arrays and objects (a status needs 5)"
        );
        let e = err("s.json", "[".repeat(100_000).as_bytes());
        assert!(
            e.starts_with("s.json: line 1 column 33: [0][0][0][0][0][0][0][0]…: nested too deeply"),
            "{e}"
        );
        // brackets inside strings do not count
        let text = format!("{{\"host_name\": \"{}\"}}", "[".repeat(100));
        assert!(parse_file(Path::new("s.json"), text.as_bytes()).is_ok());
    }

    #[test]
    fn invalid_utf8_names_line_column_and_path() {
        let e = err(
            "s.json",
            b"{\n  \"players\": [\n    {\"name\": \"Zo\xC3\xAB\"},\n    {\"name\": \"B\xFFb\"}\n  ]\n}",
        );
        assert_eq!(
            e,
            "s.json: line 4 column 16: players[1].name: invalid UTF-8 (byte 0xFF); a state \
             file must be UTF-8"
        );
        let e = err("s.toml", b"host_name = \"a\"\nmap = { name = \"\xC3\" }\n");
        assert_eq!(
            e,
            "s.toml: line 2 column 17: invalid UTF-8 (byte 0xC3); a state file must be UTF-8"
        );
    }

    #[test]
    fn a_byte_order_mark_is_skipped() {
        let s = parse_file(Path::new("s.json"), b"\xEF\xBB\xBF{\"host_name\": \"x\"}").unwrap();
        assert_eq!(s.status.host_name.as_deref(), Some("x"));
    }

    #[test]
    fn limits_name_the_field() {
        let text = format!("{{\"host_name\": \"{}\"}}", "x".repeat(70_000));
        assert_eq!(
            err("s.json", text.as_bytes()),
            "s.json: host_name: 70000 bytes, at most 4096"
        );
        let text = format!("{{\"players\": [{}]}}", vec!["{}"; 4500].join(","));
        let e = err("s.json", text.as_bytes());
        assert!(
            e.starts_with("s.json: line 1 column ")
                && e.ends_with(": players: 4500 entries, at most 4096"),
            "{e}"
        );
        let text = format!(
            "{{\"players\": [{{}}, {{\"name\": \"{}\"}}]}}",
            "y".repeat(70_000)
        );
        let ok = parse_file(Path::new("s.json"), text.as_bytes()).unwrap();
        assert_eq!(ok.clipped.count, 1);
        assert_eq!(ok.clipped.first[0].path, "players[1].name");
        assert_eq!(
            ok.status.players.unwrap()[1].name.as_ref().map(|n| n.len()),
            Some(4096)
        );
    }

    #[test]
    fn toml_errors_name_line_and_path() {
        let e = err("s.toml", b"host_name = \"a\"\nbogus = 1\n");
        assert!(e.starts_with("s.toml: line 2 column 1: "), "{e}");
        assert!(e.contains("bogus"), "{e}");
        let e = err(
            "s.toml",
            b"[[players]]\nname = \"a\"\n[[players]]\nping = \"x\"\n",
        );
        assert!(
            e.starts_with("s.toml: line 4 column 8: players[1].ping: invalid type"),
            "{e}"
        );
        let ok = parse_file(
            Path::new("s.toml"),
            b"host_name = \"a\"\n[rules]\ntimelimit = 20\n",
        )
        .unwrap();
        assert_eq!(ok.status.rules.unwrap().get("timelimit"), Some("20"));
    }

    #[test]
    fn the_example_state_loads() {
        let text = include_bytes!("../../ogp-proto/tests/data/state.json");
        let ok = parse_file(Path::new("state.json"), text).unwrap();
        assert!(ok.clipped.is_empty());
        assert_eq!(ok.status.players.map(|p| p.len()), Some(3));
    }

    #[test]
    fn positions_count_characters() {
        let b = "ab\nçd\n".as_bytes();
        assert_eq!(position(b, 0), (1, 1));
        assert_eq!(position(b, 3), (2, 1));
        assert_eq!(position(b, 5), (2, 2)); // 'd' after the two bytes of 'ç'
        assert_eq!(line_start(b, 2), 3);
        assert_eq!(line_start(b, 9), b.len());
    }
}
