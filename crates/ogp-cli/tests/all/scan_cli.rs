//! `ogp scan` and `ogp query`'s auto-detection, end to end against `ogp serve` on
//! loopback: NDJSON and table output, bad lines reported and skipped, dead ports timed
//! out, qstat list lines, standard input, usage errors.

use crate::common;

use std::io::Write as _;
use std::net::UdpSocket;
use std::process::{Command, Stdio};
use std::time::Duration;

use common::*;
use serde_json::Value;

const STATE: &str = include_str!("../../../ogp-proto/tests/data/state.json");
const LIMIT: Duration = Duration::from_secs(20);

fn served() -> Served {
    serve_with("scan", STATE, &[], |s| {
        !exchange(
            s,
            b"\xff\xff\xff\xffTSource Engine Query\0",
            Duration::from_millis(300),
        )
        .is_empty()
    })
}

fn host_name() -> String {
    let v: Value = serde_json::from_str(STATE).unwrap();
    v["host_name"].as_str().unwrap().to_string()
}

fn ogp(args: &[&str]) -> Ran {
    run(Command::new(BIN).args(args).env_remove("OGP_LOG"), LIMIT)
}

#[test]
fn scan_prints_ndjson_reports_bad_lines_and_times_out_dead_ports() {
    let server = served();
    let live = format!("127.0.0.1:{}", server.port);
    let dead_socket = UdpSocket::bind("127.0.0.1:0").unwrap(); // bound, never read
    let dead = dead_socket.local_addr().unwrap().to_string();
    let dir = TempDir::new("scan-list");
    let list = dir.0.join("list.txt");
    let text = format!(
        "# servers\n\
         ogp {live}\n\
         A2S {live}   # qstat's type name\n\
         -a2s {live}\n\
         \n\
         gqp {live}\n\
         auto {live}\n\
         {live}\n\
         ogp {dead}\n\
         this is not a target\n\
         a2s 127.0.0.1\n\
         SNS {live}\n\
         gamespy3 {live}\n\
         -gs4 {live}\n"
    );
    std::fs::write(&list, text).unwrap();
    let ran = ogp(&[
        "scan",
        "--json",
        list.to_str().unwrap(),
        "--timeout",
        "150",
        "--retries",
        "1",
    ]);
    assert_eq!(ran.code, Some(0), "{}", ran.describe());
    let stdout = String::from_utf8(ran.stdout.clone()).unwrap();
    let lines: Vec<Value> = stdout
        .lines()
        .map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("{e}: {l}")))
        .collect();
    assert_eq!(lines.len(), 9, "{}", ran.describe());
    let by_line = |n: u64| {
        lines
            .iter()
            .find(|v| v["line"].as_u64() == Some(n))
            .unwrap_or_else(|| panic!("no result for line {n}: {stdout}"))
    };
    for (n, protocol) in [
        (2, "ogp"),
        (3, "a2s"),
        (4, "a2s"),
        (6, "gqp"),
        (7, "ogp"),
        (8, "ogp"),
        (13, "gamespy3"),
        (14, "gamespy3"),
    ] {
        let v = by_line(n);
        assert_eq!(v["ok"], true, "{v}");
        assert_eq!(v["protocol"], protocol, "{v}");
        assert_eq!(v["target"], live.as_str());
        assert_eq!(v["status"]["host_name"], host_name().as_str(), "{v}");
        assert!(v["ping_ms"].as_f64().is_some_and(|p| p >= 0.0));
    }
    let v = by_line(9);
    assert_eq!(
        (v["ok"].clone(), v["error"].clone()),
        (Value::Bool(false), Value::from("timeout")),
        "{v}"
    );
    let list_name = list.to_str().unwrap();
    for n in [10, 11, 12] {
        assert!(
            ran.stderr.contains(&format!("{list_name}:{n}: ")),
            "line {n} not reported: {}",
            ran.stderr
        );
    }
    assert!(ran.stderr.contains("not supported"), "{}", ran.stderr);
    let summary = ran.stderr.lines().last().unwrap_or_default();
    assert!(
        summary.starts_with("scanned 9 targets")
            && summary.contains("8 answered, 1 timed out, 0 refused, 0 errors; 3 bad lines"),
        "{summary}"
    );
    drop(dead_socket);
}

#[test]
fn scan_reads_standard_input_and_prints_a_table() {
    let server = served();
    let live = format!("127.0.0.1:{}", server.port);
    let mut child = Command::new(BIN)
        .args(["scan", "-", "--timeout", "150", "--retries", "1"])
        .env_remove("OGP_LOG")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut stdin = child.stdin.take().unwrap();
    writeln!(stdin, "a2s {live}\nogp [::1]:9\nnonsense").unwrap();
    drop(stdin);
    let child = KillOnDrop(child);
    let mut child = child;
    let t = std::time::Instant::now();
    while child.0.try_wait().unwrap().is_none() {
        assert!(t.elapsed() < LIMIT, "ogp scan did not finish");
        std::thread::sleep(Duration::from_millis(20));
    }
    let mut out = String::new();
    let mut err = String::new();
    use std::io::Read as _;
    child
        .0
        .stdout
        .take()
        .unwrap()
        .read_to_string(&mut out)
        .unwrap();
    child
        .0
        .stderr
        .take()
        .unwrap()
        .read_to_string(&mut err)
        .unwrap();
    assert_eq!(child.0.wait().unwrap().code(), Some(0), "{err}");
    let rows: Vec<&str> = out.lines().collect();
    assert!(rows[0].starts_with("TARGET"), "{out}");
    assert_eq!(rows.len(), 3, "{out}");
    let a2s = rows
        .iter()
        .find(|r| r.contains(" a2s "))
        .expect("an a2s row");
    assert!(a2s.contains(&host_name()), "{out}");
    // IPv6 works or fails with a reason (no IPv6 here), never with a crash.
    assert!(rows.iter().any(|r| r.starts_with("[::1]:9")), "{out}");
    assert!(err.contains("<stdin>:3: "), "{err}");
}

#[test]
fn query_auto_names_the_protocol_and_finds_the_query_port() {
    let server = served();
    let port = server.port;
    // Auto is the default and prefers OGP on a server that speaks everything.
    let ran = ogp(&["query", &format!("127.0.0.1:{port}"), "--timeout", "200"]);
    assert_eq!(ran.code, Some(0), "{}", ran.describe());
    let out = String::from_utf8_lossy(&ran.stdout).into_owned();
    assert!(
        out.starts_with(&format!("OGP server 127.0.0.1:{port} answered")),
        "{out}"
    );
    // Given the port below it (held by us, so that nothing else answers there).
    let Some(below) = port.checked_sub(1) else {
        return;
    };
    let Ok(hold) = UdpSocket::bind(("127.0.0.1", below)) else {
        eprintln!("port {below} is taken; the query-port check is skipped");
        return;
    };
    let ran = ogp(&[
        "query",
        &format!("127.0.0.1:{below}"),
        "--try-query-ports",
        "--timeout",
        "200",
        "--retries",
        "1",
    ]);
    assert_eq!(ran.code, Some(0), "{}", ran.describe());
    let out = String::from_utf8_lossy(&ran.stdout).into_owned();
    assert!(
        out.starts_with(&format!("query port {port} answered (given port {below})")),
        "{out}"
    );
    // Without --try-query-ports the given port is all there is: no answer.
    let ran = ogp(&[
        "query",
        &format!("127.0.0.1:{below}"),
        "--timeout",
        "100",
        "--retries",
        "0",
    ]);
    assert_eq!(ran.code, Some(1), "{}", ran.describe());
    assert_eq!(ran.stderr.lines().count(), 1, "{}", ran.stderr);
    drop(hold);
}

#[test]
fn usage_errors() {
    for args in [
        &["scan", "--rate", "fast"][..],
        &["scan", "--protocol", "nosuch"],
        &["decode", "--protocol", "nosuch", "00"],
        &[
            "query",
            "--protocol",
            "a2s",
            "--try-query-ports",
            "127.0.0.1:1",
        ],
    ] {
        let ran = ogp(args);
        assert_eq!(ran.code, Some(2), "{args:?}: {}", ran.describe());
    }
    let ran = ogp(&["scan", "/nonexistent/list.txt"]);
    assert_eq!(ran.code, Some(1), "{}", ran.describe());
    assert!(ran.stderr.contains("cannot open"), "{}", ran.stderr);
}

/// Ports nothing listens on ([`ogp_testkit::interop::closed_ports`]).
#[cfg(target_os = "linux")]
fn closed_ports(ip: &str, n: usize) -> Option<Vec<String>> {
    let ip = ip.parse().ok()?;
    let ports = ogp_testkit::interop::closed_ports(ip, n)?;
    Some(ports.iter().map(ToString::to_string).collect())
}

/// Closed ports are refused at once (Linux reports the ICMP port unreachable to the
/// scan engine's shared sockets), in `ogp scan` and in `ogp query`'s auto-detection,
/// where they used to time out.
#[cfg(target_os = "linux")]
#[test]
fn closed_ports_are_refused_at_once() {
    let server = served();
    let live = format!("127.0.0.1:{}", server.port);
    let mut checked = 0;
    for ip in ["127.0.0.1", "::1"] {
        let Some(closed) = closed_ports(ip, 20) else {
            eprintln!("cannot bind {ip} here; skipped");
            continue;
        };
        checked += 1;
        let dir = TempDir::new("refused");
        let list = dir.0.join("list.txt");
        let mut text = format!("auto {live}\n");
        for (i, a) in closed.iter().enumerate() {
            let p = ["auto", "ogp", "a2s", "gamespy3", "gqp"][i % 5];
            text.push_str(&format!("{p} {a}\n"));
        }
        std::fs::write(&list, text).unwrap();
        // 1 s per attempt, 3 s per target: a refusal comes long before either.
        let ran = ogp(&[
            "scan",
            "--json",
            list.to_str().unwrap(),
            "--timeout",
            "1000",
            "--deadline",
            "3000",
        ]);
        assert_eq!(ran.code, Some(0), "{}", ran.describe());
        let stdout = String::from_utf8(ran.stdout.clone()).unwrap();
        let lines: Vec<Value> = stdout
            .lines()
            .map(|l| serde_json::from_str(l).unwrap())
            .collect();
        assert_eq!(lines.len(), 21, "{}", ran.describe());
        for v in &lines {
            if v["line"] == 1 {
                assert_eq!(v["ok"], true, "{v}");
            } else {
                assert_eq!(v["error"], "refused", "{v}");
            }
        }
        eprintln!("ogp scan, 20 closed ports on {ip} + 1 live: {:?}", ran.took);
        assert!(ran.took < Duration::from_secs(2), "{}", ran.describe());
        let summary = ran.stderr.lines().last().unwrap_or_default();
        assert!(
            summary.contains("1 answered, 0 timed out, 20 refused, 0 errors"),
            "{summary}"
        );

        // `ogp query` with auto-detection (the default) on a closed port.
        let target = &closed[0];
        let ran = ogp(&["query", target]);
        eprintln!("ogp query {target} (auto): {:?}", ran.took);
        assert_eq!(ran.code, Some(1), "{}", ran.describe());
        assert_eq!(
            ran.stderr.trim_end(),
            format!("ogp: {target}: connection refused (nothing listens on that port)"),
            "{}",
            ran.describe()
        );
        assert!(ran.took < Duration::from_secs(2), "{}", ran.describe());
    }
    assert!(checked > 0);
}

/// A slow OGP server answers the first OGP query with an Error-3 challenge and then
/// says nothing: auto-detection reports OGP's timeout (the protocol that heard from the
/// server), not GQP's decoder fed the OGP datagram ("gqp: malformed reply").
#[test]
fn auto_query_blames_the_protocol_that_answered() {
    use ogp_proto::ogp::{self, ErrorValue, Header, PacketType};
    let sock = UdpSocket::bind("127.0.0.1:0").unwrap();
    sock.set_read_timeout(Some(Duration::from_millis(100)))
        .unwrap();
    let addr = sock.local_addr().unwrap().to_string();
    let stop = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
    let stopped = stop.clone();
    let fake = std::thread::spawn(move || {
        let mut buf = [0u8; 2048];
        let mut answered = false;
        while !stopped.load(std::sync::atomic::Ordering::Relaxed) {
            let Ok((len, src)) = sock.recv_from(&mut buf) else {
                continue;
            };
            let d = &buf[..len];
            if answered || !ogp::is_ogp(d) {
                continue;
            }
            let q = ogp::decode(d).unwrap();
            let mut h = Header::answer(PacketType::ERROR);
            h.challenge = Some(0x5eed);
            h.request_id = q.header.request_id;
            let mut out = Vec::new();
            ogp::encode_error(&h, ErrorValue::INVALID_CHALLENGE, &[], &mut out);
            let _ = sock.send_to(&out, src);
            answered = true;
        }
    });
    // (attempts of 400 ms: at 150 ms the one reply missed its attempt on a loaded machine)
    let ran = ogp(&["query", &addr, "--timeout", "400", "--retries", "1"]);
    stop.store(true, std::sync::atomic::Ordering::Relaxed);
    fake.join().unwrap();
    assert_eq!(ran.code, Some(1), "{}", ran.describe());
    assert!(
        ran.stderr
            .starts_with(&format!("ogp: {addr}: ogp: no answer")),
        "{}",
        ran.describe()
    );
    assert!(!ran.stderr.contains("malformed"), "{}", ran.describe());
}
