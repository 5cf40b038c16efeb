//! The `ogp` binary as a user runs it: `serve` a state file (reloading it, surviving a
//! broken one), `query` it (JSON output, host names, a dead port), `decode`, `demo`, and
//! the exit codes (0 success, 1 no or bad answer / malformed input, 2 bad usage).
//! Child processes are killed when the test ends, whatever happens.

use std::net::{SocketAddr, UdpSocket};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Output, Stdio};
use std::time::{Duration, Instant};

use ogp_proto::internals::to_hex;
use ogp_proto::ogp::{decode, decode_answer_body, encode_answer_body, AnswerOptions, DefaultQuery};
use ogp_proto::Status;

const BIN: &str = env!("CARGO_BIN_EXE_ogp");
const STATE: &str = include_str!("../../../ogp-proto/tests/data/state.json");
const CAPTURES: &str = concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/../ogp-proto/tests/data/ogp/sdk"
);

fn ogp(args: &[&str]) -> Output {
    Command::new(BIN)
        .args(args)
        .env("NO_COLOR", "1")
        .env_remove("OGP_LOG")
        .stdin(Stdio::null())
        .output()
        .expect("run ogp")
}

fn stdout(o: &Output) -> String {
    String::from_utf8_lossy(&o.stdout).into_owned()
}

fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

/// Kills and reaps the child when dropped (also when the test panics).
struct KillOnDrop(Child);

impl Drop for KillOnDrop {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// A directory removed when dropped.
struct TempDir(PathBuf);

impl TempDir {
    fn new(name: &str) -> Self {
        let p = std::env::temp_dir().join(format!("ogp-cli-test-{}-{name}", std::process::id()));
        let _ = std::fs::remove_dir_all(&p);
        std::fs::create_dir_all(&p).unwrap();
        Self(p)
    }

    fn path(&self, f: &str) -> PathBuf {
        self.0.join(f)
    }
}

impl Drop for TempDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

fn ipv6_available() -> bool {
    UdpSocket::bind("[::1]:0").is_ok()
}

/// A UDP port free on 127.0.0.1 (and on ::1 when IPv6 works).
fn free_port() -> u16 {
    for _ in 0..50 {
        let v4 = UdpSocket::bind("127.0.0.1:0").unwrap();
        let port = v4.local_addr().unwrap().port();
        if !ipv6_available() || UdpSocket::bind(("::1", port)).is_ok() {
            return port;
        }
    }
    panic!("no free port");
}

/// Writes a file atomically (a reader never sees it half written).
fn write_atomic(path: &Path, text: &str) {
    let tmp = path.with_extension("tmp");
    std::fs::write(&tmp, text).unwrap();
    std::fs::rename(&tmp, path).unwrap();
}

/// What `ogp query` shows for a served status: the OGP round trip of the status without
/// player addresses (withheld by default, wire choice A20).
fn expected(s: &Status) -> Status {
    let mut s = s.clone();
    for p in s.players.iter_mut().flatten() {
        p.address = None;
    }
    let opts = AnswerOptions {
        utf8: true,
        colors: false,
    };
    let mut body = Vec::new();
    encode_answer_body(&s, &DefaultQuery::everything(), &opts, &mut body);
    decode_answer_body(&body, true)
        .expect("our own answer decodes")
        .status
}

/// `ogp query TARGET --json`, parsed.
fn query_json(target: &str) -> Result<Status, String> {
    let o = ogp(&[
        "query",
        target,
        "--json",
        "--timeout",
        "300",
        "--retries",
        "1",
    ]);
    if !o.status.success() {
        return Err(format!("exit {:?}: {}", o.status.code(), stderr(&o)));
    }
    status_of(&stdout(&o))
}

/// The status in a result object of `ogp query --json` (docs/json.md).
fn status_of(out: &str) -> Result<Status, String> {
    let v: serde_json::Value = serde_json::from_str(out).map_err(|e| format!("{e}: {out}"))?;
    if v["schema"] != 1 || v["ok"] != true {
        return Err(format!("not a successful result: {out}"));
    }
    Status::from_json(&v["status"].to_string()).map_err(|e| format!("{e}: {out}"))
}

fn strip_ansi(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    let mut chars = s.chars();
    while let Some(c) = chars.next() {
        if c == '\u{1b}' {
            for d in chars.by_ref() {
                if d.is_ascii_alphabetic() {
                    break;
                }
            }
        } else {
            out.push(c);
        }
    }
    out
}

/// Polls `f` every 100 ms until it returns `Some` or `limit` passes.
fn within<T>(limit: Duration, mut f: impl FnMut() -> Option<T>) -> Option<T> {
    let t = Instant::now();
    loop {
        if let Some(v) = f() {
            return Some(v);
        }
        if t.elapsed() > limit {
            return None;
        }
        std::thread::sleep(Duration::from_millis(100));
    }
}

#[test]
fn serve_query_reload_and_survive_a_broken_state_file() {
    let dir = TempDir::new("serve");
    let state = dir.path("state.json");
    let log = dir.path("serve.log");
    write_atomic(&state, STATE);
    let port = free_port();
    let v4 = format!("127.0.0.1:{port}");
    let mut args = vec![
        "serve".to_string(),
        "--state".into(),
        state.display().to_string(),
        "--listen".into(),
        v4.clone(),
        "--reload-interval".into(),
        "0.2".into(),
        "--rate".into(),
        "1000".into(),
        "--burst".into(),
        "1000".into(),
    ];
    let v6 = ipv6_available().then(|| format!("[::1]:{port}"));
    if let Some(v6) = &v6 {
        args.push("--listen".into());
        args.push(v6.clone());
    }
    let _server = KillOnDrop(
        Command::new(BIN)
            .args(&args)
            .env("NO_COLOR", "1")
            .env_remove("OGP_LOG")
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(std::fs::File::create(&log).unwrap())
            .spawn()
            .expect("spawn ogp serve"),
    );
    let log_text = || strip_ansi(&std::fs::read_to_string(&log).unwrap_or_default());

    // serving: the query's JSON is the state file's status, as OGP carries it
    let demo = Status::from_json(STATE).unwrap();
    let got = within(Duration::from_secs(10), || query_json(&v4).ok())
        .unwrap_or_else(|| panic!("ogp serve did not answer; log:\n{}", log_text()));
    assert_eq!(got, expected(&demo));
    assert_eq!(got.host_name.as_deref(), Some("Demo Arena #1 – Ünïcödé ✓"));
    assert_eq!(got.players.as_ref().map(Vec::len), Some(3));
    assert!(
        got.players.iter().flatten().all(|p| p.address.is_none()),
        "player addresses are withheld by default"
    );
    // host names resolve
    assert_eq!(
        query_json(&format!("localhost:{port}")).unwrap(),
        expected(&demo)
    );
    if let Some(v6) = &v6 {
        assert_eq!(query_json(v6).unwrap(), expected(&demo));
    }

    // a new state file is picked up within a few seconds
    let mut renamed = demo.clone();
    renamed.host_name = Some("Renamed server".into());
    renamed.players = Some(vec![]);
    write_atomic(&state, &renamed.to_json_pretty());
    let t = Instant::now();
    let got = within(Duration::from_secs(3), || {
        query_json(&v4)
            .ok()
            .filter(|s| s.host_name.as_deref() == Some("Renamed server"))
    })
    .unwrap_or_else(|| panic!("reload not seen within 3 s; log:\n{}", log_text()));
    assert!(t.elapsed() < Duration::from_secs(4));
    assert_eq!(got, expected(&renamed));

    // a broken state file: an error naming the file, and the last good state is served
    write_atomic(&state, "{ \"host_name\": \"half-written");
    let line = within(Duration::from_secs(3), || {
        log_text()
            .lines()
            .find(|l| l.contains("ERROR") && l.contains("state.json"))
            .map(str::to_owned)
    })
    .unwrap_or_else(|| panic!("no error line about the file; log:\n{}", log_text()));
    assert!(line.contains(&state.display().to_string()), "{line}");
    let got = query_json(&v4).unwrap();
    assert_eq!(got.host_name.as_deref(), Some("Renamed server"));
    assert_eq!(got, expected(&renamed));

    // the human-readable form
    let o = ogp(&["query", &v4, "--timeout", "300", "--retries", "1"]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    assert!(stdout(&o).contains("Renamed server"), "{}", stdout(&o));
    assert!(stdout(&o).contains(&format!("OGP server {v4} answered")));

    // fixed again: served again
    write_atomic(&state, STATE);
    within(Duration::from_secs(3), || {
        query_json(&v4).ok().filter(|s| *s == expected(&demo))
    })
    .expect("the repaired state file is served");
}

#[test]
fn query_of_a_dead_port_exits_1_with_one_line() {
    let port = free_port();
    let target = format!("127.0.0.1:{port}");
    let t = Instant::now();
    let o = ogp(&["query", &target, "--timeout", "200", "--retries", "1"]);
    assert_eq!(o.status.code(), Some(1));
    assert!(t.elapsed() < Duration::from_secs(3));
    let err = stderr(&o);
    assert_eq!(err.lines().count(), 1, "{err:?}");
    assert!(err.starts_with(&format!("ogp: {target}: ")), "{err:?}");
    assert!(stdout(&o).is_empty());
    // a name that does not resolve
    let o = ogp(&["query", "no-such-host.invalid:22222", "--timeout", "200"]);
    assert_eq!(o.status.code(), Some(1));
    assert_eq!(stderr(&o).lines().count(), 1, "{}", stderr(&o));
}

#[test]
fn bad_usage_exits_2() {
    for args in [
        &[][..],
        &["frobnicate"],
        &["query"],
        &["query", "127.0.0.1:1", "--split", "100"],
        &["query", "127.0.0.1:1", "--timeout", "soon"],
        &["decode"],
        &["serve"],
        &["serve", "--state", "x.json", "--rate", "0"],
        &["serve", "--state", "x.json", "--listen", "not-an-address"],
    ] {
        let o = ogp(args);
        assert_eq!(o.status.code(), Some(2), "ogp {args:?}: {}", stderr(&o));
        assert!(!stderr(&o).is_empty(), "ogp {args:?}: no message");
    }
    assert_eq!(ogp(&["--help"]).status.code(), Some(0));
}

#[test]
fn decode_captures_and_truncated_hex() {
    let answer = format!("{CAPTURES}/02_php_full_utf8.answer.bin");
    let o = ogp(&["decode", &answer]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    assert!(stdout(&o).contains("Ünïcödé Server ✓"), "{}", stdout(&o));
    // JSON output parses
    let o = ogp(&["decode", "--json", &answer]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).expect("JSON");
    assert!(v.to_string().contains("Ünïcödé Server ✓"));
    // the 9 packets of a split answer, in reverse order
    let parts: Vec<String> = (0..9)
        .rev()
        .map(|i| format!("{CAPTURES}/09_split_500.answer.{i}.bin"))
        .collect();
    let mut args = vec!["decode"];
    args.extend(parts.iter().map(String::as_str));
    let o = ogp(&args);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));

    // truncated: the message names the field and the byte offset
    let bytes = std::fs::read(&answer).unwrap();
    for cut in [17usize, 40, bytes.len() - 1] {
        let hex = to_hex(&bytes[..cut]);
        let e = decode(&bytes[..cut]).expect_err("truncated");
        let o = ogp(&["decode", &hex]);
        assert_eq!(o.status.code(), Some(1), "cut {cut}");
        let err = stderr(&o);
        assert_eq!(err.lines().count(), 1, "{err}");
        assert!(err.contains(e.field), "cut {cut}: {err} lacks {}", e.field);
        assert!(
            err.contains(&format!("at byte {}", e.offset)),
            "cut {cut}: {err} lacks offset {}",
            e.offset
        );
    }
    // the PHP query cut after its RequestFlags
    let o = ogp(&["decode", "ffffffff4f475000070112462613b9bf01"]);
    assert_eq!(o.status.code(), Some(1));
    assert!(
        stderr(&o).contains("ServerInfoFields at byte 17"),
        "{}",
        stderr(&o)
    );
    // not hex, not a file
    let o = ogp(&["decode", "zz-not-hex"]);
    assert_eq!(o.status.code(), Some(1));
}

#[test]
fn demo_runs() {
    let o = ogp(&["demo"]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let out = stdout(&o);
    assert!(out.contains("Demo Arena #1"), "{out}");
    let addr = out
        .split_whitespace()
        .find_map(|w| w.trim_end_matches('.').parse::<SocketAddr>().ok())
        .expect("the demo names its address");
    assert!(addr.ip().is_loopback());
}

#[test]
fn gqp_status_and_raw_commands_on_the_shared_port() {
    let dir = TempDir::new("gqp");
    let state = dir.path("state.json");
    write_atomic(&state, STATE);
    let port = free_port();
    let target = format!("127.0.0.1:{port}");
    let _server = KillOnDrop(
        Command::new(BIN)
            .args(["serve", "--state"])
            .arg(&state)
            .args(["--listen", &target])
            .env_remove("OGP_LOG")
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("spawn ogp serve"),
    );
    // The status over GQP equals the status over OGP, key by key, on the same port.
    let gqp = within(Duration::from_secs(5), || {
        let o = ogp(&[
            "query",
            "--protocol",
            "gqp",
            &target,
            "--json",
            "--timeout",
            "300",
        ]);
        (o.status.code() == Some(0)).then(|| stdout(&o))
    })
    .expect("GQP answers");
    let gqp: Status = status_of(&gqp).unwrap();
    let ogp_status = query_json(&target).unwrap();
    assert_eq!(gqp.host_name, ogp_status.host_name);
    assert_eq!(gqp.map, ogp_status.map);
    let names = |s: &Status| -> Vec<String> {
        s.players
            .iter()
            .flatten()
            .filter_map(|p| p.name.as_deref().map(str::to_owned))
            .collect()
    };
    assert_eq!(names(&gqp), names(&ogp_status));
    assert!(!names(&gqp).is_empty());
    // Raw commands print the records; an unknown command gets status 20.
    let o = ogp(&[
        "query",
        "--protocol",
        "gqp",
        &target,
        "--command",
        "echo a b; nosuch",
    ]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let out = stdout(&o);
    assert!(
        out.contains("10 echo") && out.contains("  a\n") && out.contains("  b\n"),
        "{out}"
    );
    assert!(out.contains("20 nosuch"), "{out}");
    // --command is for GQP only: bad usage.
    assert_eq!(
        ogp(&["query", &target, "--command", "echo"]).status.code(),
        Some(2)
    );
}

#[test]
fn ogp_draft_is_served_on_its_own_port_only() {
    let dir = TempDir::new("draft");
    let state = dir.path("state.json");
    write_atomic(&state, STATE);
    let (main_port, draft_port) = (free_port(), free_port());
    let main = format!("127.0.0.1:{main_port}");
    let draft = format!("127.0.0.1:{draft_port}");
    let _server = KillOnDrop(
        Command::new(BIN)
            .args(["serve", "--state"])
            .arg(&state)
            .args(["--listen", &main, "--listen-ogp-draft", &draft])
            .env_remove("OGP_LOG")
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("spawn ogp serve"),
    );
    let out = within(Duration::from_secs(5), || {
        let o = ogp(&[
            "query",
            "--protocol",
            "ogp-draft",
            &draft,
            "--json",
            "--timeout",
            "300",
        ]);
        (o.status.code() == Some(0)).then(|| stdout(&o))
    })
    .expect("the draft listener answers the draft");
    let s: Status = status_of(&out).unwrap();
    let served: Status = serde_json::from_str(STATE).unwrap();
    assert_eq!(s.host_name, served.host_name);
    // The draft listener does not answer v1.01, and the main listener not the draft.
    let o = ogp(&["query", &draft, "--timeout", "200", "--retries", "0"]);
    assert_eq!(o.status.code(), Some(1));
    let o = ogp(&[
        "query",
        "--protocol",
        "ogp-draft",
        &main,
        "--timeout",
        "200",
        "--retries",
        "0",
    ]);
    assert_eq!(o.status.code(), Some(1));
}

/// The test data of ogp-proto (copies of `shared/captures`).
const DATA: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/../ogp-proto/tests/data");

/// Every line of stdout as a JSON object (`ogp decode --json` prints one per line).
fn json_lines(o: &Output) -> Vec<serde_json::Value> {
    stdout(o)
        .lines()
        .map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("{e}: {l}")))
        .collect()
}

#[test]
fn decode_describes_an_a2s_challenge_without_debug_text() {
    // S2C_CHALLENGE 0x22d5f44b (little-endian on the wire)
    let hex = "ffffffff414bf4d522";
    for args in [&["decode", "-p", "a2s", hex][..], &["decode", hex]] {
        let o = ogp(args);
        assert_eq!(o.status.code(), Some(0), "{args:?}: {}", stderr(&o));
        let text = stdout(&o);
        assert_eq!(text, "A2S challenge 0x22d5f44b\n", "{args:?}");
        assert!(
            !text.contains("Challenge {") && !text.contains("{ "),
            "{text}"
        );
    }
    let o = ogp(&["decode", "--json", "-p", "a2s", hex]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let out = stdout(&o);
    assert!(!out.contains("Challenge {") && !out.contains("{ "), "{out}");
    let v = json_lines(&o);
    assert_eq!(v.len(), 1, "{out}");
    assert_eq!(v[0]["protocol"], "a2s");
    assert_eq!(v[0]["kind"], "challenge");
    assert_eq!(v[0]["challenge"], 0x22d5_f44b);
    // requests: one line each, the challenge in hex, no Debug text
    let o = ogp(&[
        "decode",
        "ffffffff54536f7572636520456e67696e6520517565727900 4bf4d522",
        "ffffffff55ffffffff",
    ]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let text = stdout(&o);
    let lines: Vec<&str> = text.lines().collect();
    assert_eq!(lines.len(), 2, "{text}");
    assert!(
        lines[0].starts_with("A2S INFO request (challenge 0x22d5f44b"),
        "{text}"
    );
    assert!(
        lines[1].starts_with("A2S PLAYER request (asks for a challenge"),
        "{text}"
    );
    assert!(!text.contains('{'), "{text}");
}

#[test]
fn decode_guesses_the_protocol_of_each_capture() {
    use ogp_proto::gqp;
    use ogp_proto::ogp_draft;
    let a2s = format!("{DATA}/a2s/gameq-cs16-1.json");
    let gs3 = format!("{DATA}/gamespy3/gameq-crysis-1.json");
    let ogp_answer = format!("{CAPTURES}/02_php_full_utf8.answer.bin");
    let ogp_query = format!("{CAPTURES}/02_php_full_utf8.query.bin");
    // GQP and the OGP v0.02 draft have no captures: encoded here
    let mut gqp_query = Vec::new();
    gqp::encode_query(
        &gqp::Query {
            encoding: gqp::Encoding::default(),
            commands: vec![gqp::Command::new("identify", Vec::<String>::new())],
        },
        &mut gqp_query,
    );
    let mut draft = Vec::new();
    let status = Status::from_json(STATE).unwrap();
    let mut header = ogp_draft::Header::query(ogp_draft::PacketType::DEFAULT_QUERY);
    header.flags = ogp_draft::flags::ANSWER;
    ogp_draft::encode_answer(
        &header,
        &status,
        &ogp_draft::DefaultQuery::everything(),
        &mut draft,
    );
    let cases = [
        (a2s.clone(), "a2s", "A2S reply: INFO, PLAYER, RULES"),
        (gs3.clone(), "gamespy3", "GameSpy v3 reply (1 packet"),
        (ogp_answer, "ogp", "OGP answer"),
        (
            ogp_query,
            "ogp",
            "OGP query: ServerInfo, TeamList, PlayerList",
        ),
        (to_hex(&gqp_query), "gqp", "GQP query: identify"),
        (to_hex(&draft), "ogp-draft", "OGP v0.02 answer"),
    ];
    for (input, name, line) in &cases {
        let o = ogp(&["decode", input]);
        assert_eq!(o.status.code(), Some(0), "{name}: {}", stderr(&o));
        assert!(stdout(&o).starts_with(line), "{name}: {}", stdout(&o));
        let o = ogp(&["decode", "--json", input]);
        assert_eq!(o.status.code(), Some(0), "{name}: {}", stderr(&o));
        let v = json_lines(&o);
        assert!(v.iter().all(|m| m["protocol"] == *name), "{name}: {v:?}");
    }
    // -p auto is accepted, and mixed inputs are decoded in order, each with its protocol
    let o = ogp(&["decode", "-p", "auto", "--json", &gs3, "ffffffff414bf4d522"]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let v = json_lines(&o);
    let kinds: Vec<(&str, &str)> = v
        .iter()
        .map(|m| (m["protocol"].as_str().unwrap(), m["kind"].as_str().unwrap()))
        .collect();
    assert_eq!(kinds, [("gamespy3", "answer"), ("a2s", "challenge")]);
    assert_eq!(v[0]["status"]["host_name"], "Grand Central");
    assert!(v[0]["warnings"].is_array());
}

#[test]
fn decode_reads_json_captures() {
    // A2S: info, players and 2 GoldSrc rules fragments, in the capture's order
    let o = ogp(&["decode", "--json", &format!("{DATA}/a2s/gameq-cs16-1.json")]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let v = json_lines(&o);
    assert_eq!(v.len(), 1, "{}", stdout(&o));
    assert_eq!(v[0]["kind"], "answer");
    assert_eq!(v[0]["datagrams"], 4);
    assert_eq!(
        v[0]["status"]["host_name"],
        "|SgK| CLASSIC 1000 FPS #1USA sgkclan.org  "
    );
    assert!(v[0]["status"]["rules"]
        .as_object()
        .is_some_and(|r| !r.is_empty()));
    // OGP: the SDK's query, then its 9-packet split answer, reassembled
    let o = ogp(&[
        "decode",
        "--json",
        &format!("{CAPTURES}/09_split_500.decoded.json"),
    ]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let v = json_lines(&o);
    let kinds: Vec<&str> = v.iter().map(|m| m["kind"].as_str().unwrap()).collect();
    assert_eq!(kinds, ["query", "answer"], "{}", stdout(&o));
    assert_eq!(v[1]["packet_sizes"].as_array().map(Vec::len), Some(9));
    assert_eq!(v[1]["status"]["players"].as_array().map(Vec::len), Some(40));
    // a JSON file without datagrams: one line, exit 1
    let dir = TempDir::new("decode-json");
    let empty = dir.path("empty.json");
    std::fs::write(&empty, "{\"responses\": {}}").unwrap();
    let o = ogp(&["decode", empty.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(1));
    assert_eq!(stderr(&o).lines().count(), 1, "{}", stderr(&o));
}

#[test]
fn decode_of_garbage_names_the_input_and_what_was_tried() {
    for (input, name) in [("7a7a7a7a", "7a7a7a7a"), ("00", "00")] {
        let o = ogp(&["decode", input]);
        assert_eq!(o.status.code(), Some(1), "{input}: {}", stdout(&o));
        assert!(o.stdout.is_empty());
        let err = stderr(&o);
        assert_eq!(err.lines().count(), 1, "{err}");
        assert!(err.starts_with(&format!("ogp: {name}: ")), "{err}");
        for tried in ["OGP v1.01", "draft", "A2S", "GameSpy v3", "GQP"] {
            assert!(err.contains(tried), "{err} lacks {tried}");
        }
    }
}

#[test]
fn decode_never_prints_control_characters_from_the_input() {
    // ESC [2J (clear screen) and a BEL inside: a GameSpy v3 sub-protocol C reply, an A2S
    // ping reply, a GQP reply record (DLE-escaped there); the protocols guessed
    for hex in [
        "00 20212120 1b5b324a07 00 6869 00",
        "ffffffff6a 1b5b324a07 00",
        "3230656368 6f 1e 02 105b 5b324a 1047 04",
    ] {
        let o = ogp(&["decode", hex]);
        assert_eq!(o.status.code(), Some(0), "{hex}: {}", stderr(&o));
        let out = stdout(&o);
        assert!(
            !out.chars().any(|c| c.is_control() && c != '\n'),
            "{hex}: {out:?}"
        );
        assert!(!out.contains('\u{1b}') && !out.contains('\u{7}'), "{out:?}");
    }
}

/// "Привет" in Windows-1251 (not UTF-8), as a Russian GoldSrc or Source server sends it.
const CP1251_HELLO: [u8; 6] = [0xcf, 0xf0, 0xe8, 0xe2, 0xe5, 0xf2];

#[test]
fn charset_reads_names_that_are_not_utf8() {
    // decode: an A2S RULES reply whose value is in Windows-1251
    let mut rules = b"\xff\xff\xff\xffE\x01\x00motd\x00".to_vec();
    rules.extend_from_slice(&CP1251_HELLO);
    rules.push(0);
    let hex = to_hex(&rules);
    let motd = |extra: &[&str]| {
        let mut args = vec!["decode", "--json", "-p", "a2s"];
        args.extend_from_slice(extra);
        args.push(&hex);
        let o = ogp(&args);
        assert_eq!(o.status.code(), Some(0), "{args:?}: {}", stderr(&o));
        let v = json_lines(&o);
        (
            v[0]["status"]["rules"]["motd"]
                .as_str()
                .unwrap_or_default()
                .to_owned(),
            stderr(&o),
        )
    };
    let (value, warnings) = motd(&["--charset", "cp1251"]);
    assert_eq!((value.as_str(), warnings.as_str()), ("Привет", ""));
    let (value, warnings) = motd(&[]);
    assert_eq!(value, "\u{fffd}".repeat(6));
    assert!(warnings.contains("invalid UTF-8"), "{warnings}");
    let o = ogp(&["decode", "--charset", "koi8-r", &hex]);
    assert_eq!(o.status.code(), Some(2));
    assert!(
        stderr(&o).contains("expected auto, latin1, cp1251 or cp1252"),
        "{}",
        stderr(&o)
    );

    // query: a server that answers INFO with a Windows-1251 name, and empty players and
    // rules, without challenges; with -p a2s and with auto-detection
    let sock = UdpSocket::bind("127.0.0.1:0").unwrap();
    sock.set_read_timeout(Some(Duration::from_millis(100)))
        .unwrap();
    let addr = sock.local_addr().unwrap().to_string();
    let mut info = b"\xff\xff\xff\xffI\x11".to_vec();
    info.extend_from_slice(&CP1251_HELLO);
    info.extend_from_slice(
        b"\x00de_dust2\x00cstrike\x00Counter-Strike\x00\x0a\x00\x02\x10\x00dl\x00\x001.0\x00",
    );
    let stop = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
    let server = {
        let stop = stop.clone();
        std::thread::spawn(move || {
            let mut buf = [0u8; 1500];
            while !stop.load(std::sync::atomic::Ordering::Relaxed) {
                let Ok((n, from)) = sock.recv_from(&mut buf) else {
                    continue;
                };
                let reply: &[u8] = match buf.get(4).filter(|_| n > 4 && buf[..4] == [0xff; 4]) {
                    Some(b'T') => &info,
                    Some(b'U') => b"\xff\xff\xff\xffD\x00",
                    Some(b'V') => b"\xff\xff\xff\xffE\x00\x00",
                    _ => continue,
                };
                let _ = sock.send_to(reply, from);
            }
        })
    };
    for protocol in ["a2s", "auto"] {
        let o = ogp(&[
            "query",
            "--json",
            "-p",
            protocol,
            "--charset",
            "cp1251",
            &addr,
        ]);
        let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap_or_default();
        assert_eq!(
            v["status"]["host_name"],
            "Привет",
            "{protocol}: {}",
            stderr(&o)
        );
        assert_eq!(v["protocol"], "a2s", "{protocol}");
        let o = ogp(&["query", "--json", "-p", protocol, &addr]);
        let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap_or_default();
        assert_eq!(
            v["status"]["host_name"],
            "\u{fffd}".repeat(6),
            "{protocol}: {}",
            stderr(&o)
        );
    }
    let list = format!("a2s {addr}\n");
    let mut scan = Command::new(BIN)
        .args(["scan", "--json", "--charset", "windows-1251", "-"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    use std::io::Write as _;
    scan.stdin
        .take()
        .unwrap()
        .write_all(list.as_bytes())
        .unwrap();
    let o = scan.wait_with_output().unwrap();
    let v: serde_json::Value = serde_json::from_str(
        String::from_utf8_lossy(&o.stdout)
            .lines()
            .next()
            .unwrap_or(""),
    )
    .unwrap_or_default();
    assert_eq!(
        v["status"]["host_name"],
        "Привет",
        "scan: {}",
        String::from_utf8_lossy(&o.stdout)
    );
    stop.store(true, std::sync::atomic::Ordering::Relaxed);
    server.join().unwrap();
}

/// A Quake III server on loopback that answers like ioquake3: `getinfo CHALLENGE` with an
/// `infoResponse` echoing the challenge, `getstatus` with a real server's reply (the
/// ioquake3 capture). It stops once it has answered one of each (other protocols'
/// queries, as auto-detection sends, are ignored), after 64 datagrams, or 20 s of silence.
fn quake3_server() -> (u16, std::thread::JoinHandle<()>) {
    let sock = UdpSocket::bind("127.0.0.1:0").unwrap();
    let port = sock.local_addr().unwrap().port();
    let status = std::fs::read(format!("{DATA}/quake3/ioq3_baseq3_status.bin")).unwrap();
    sock.set_read_timeout(Some(Duration::from_secs(20)))
        .unwrap();
    let handle = std::thread::spawn(move || {
        let mut buf = [0u8; 2048];
        let (mut info, mut status_sent) = (false, false);
        for _ in 0..64 {
            if info && status_sent {
                return;
            }
            let Ok((n, from)) = sock.recv_from(&mut buf) else {
                return;
            };
            let d = &buf[..n];
            if let Some(rest) = d.strip_prefix(b"\xff\xff\xff\xffgetinfo") {
                let challenge = rest.trim_ascii();
                let mut reply = b"\xff\xff\xff\xffinfoResponse\n\\hostname\\^1Red ^7Q3\\mapname\\q3dm17\\sv_maxclients\\16\\clients\\10\\gamename\\baseq3\\protocol\\68\\challenge\\".to_vec();
                reply.extend_from_slice(challenge);
                sock.send_to(&reply, from).unwrap();
                info = true;
            } else if d.starts_with(b"\xff\xff\xff\xffgetstatus") {
                sock.send_to(&status, from).unwrap();
                status_sent = true;
            }
        }
    });
    (port, handle)
}

#[test]
fn quake3_servers_are_read_by_protocol_name_and_by_auto_detection() {
    for args in [&["-p", "quake3"][..], &["-p", "q3s"][..], &[][..]] {
        let (port, server) = quake3_server();
        let target = format!("127.0.0.1:{port}");
        let mut all = vec!["query", "--json", "--timeout", "2000"];
        all.extend_from_slice(args);
        all.push(&target);
        let out = ogp(&all);
        assert_eq!(out.status.code(), Some(0), "{args:?}: {}", stderr(&out));
        let v: serde_json::Value = serde_json::from_str(&stdout(&out)).unwrap();
        assert_eq!(v["protocol"], "quake3", "{v}");
        let s = &v["status"];
        // the status reply's variables win over the info reply's where both carry one
        assert_eq!(s["host_name"], "XXXADULTS*ONLYXXX", "{s}");
        assert_eq!(s["map"]["name"], "q3tourney4", "{s}");
        assert_eq!(s["slot_max"], 64, "{s}");
        assert_eq!(s["players"].as_array().map(Vec::len), Some(10), "{s}");
        server.join().unwrap();
    }
}

#[test]
fn decode_reads_quake3_queries_and_replies() {
    let dir = std::env::temp_dir().join(format!("ogp-q3-decode-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let query = dir.join("getinfo.bin");
    std::fs::write(&query, b"\xff\xff\xff\xffgetinfo abc123\n").unwrap();
    let reply = format!("{DATA}/quake3/urbanterror_status.bin");
    let out = ogp(&["decode", "--json", query.to_str().unwrap(), &reply]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let lines = json_lines(&out);
    assert_eq!(lines.len(), 2, "{}", stdout(&out));
    assert_eq!(lines[0]["protocol"], "quake3");
    assert_eq!(lines[0]["kind"], "query");
    assert_eq!(lines[0]["command"], "getinfo");
    assert_eq!(lines[0]["challenge"], "abc123");
    assert_eq!(lines[1]["kind"], "answer");
    assert_eq!(lines[1]["reply"], "statusResponse");
    assert_eq!(
        lines[1]["status"]["players"].as_array().map(Vec::len),
        Some(22)
    );
    let text = ogp(&["decode", &reply]);
    assert_eq!(text.status.code(), Some(0));
    assert!(stdout(&text).contains("Quake III statusResponse: 58 variables, 22 players"));
    let _ = std::fs::remove_dir_all(&dir);
}
