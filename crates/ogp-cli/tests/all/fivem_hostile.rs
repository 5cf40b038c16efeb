//! `ogp query -p fivem` against hostile HTTP servers on loopback (in-process
//! listeners): endless headers, endless chunks, a body that never ends, a slow drip, a
//! lying `Content-Length`, garbage, a redirect, a 500, deeply nested JSON, 10,000
//! players. Each ends with one clear one-line error of the right kind (or, for the
//! players, a bounded answer), well within the deadline (`--timeout 1000 --retries 0`:
//! connect and read timeouts of 1 s, 3 s in all for the three documents), and no
//! control character from the server reaches the terminal.

use std::io::{Read, Write};
use std::net::{TcpListener, TcpStream};
use std::process::Command;
use std::time::{Duration, Instant};

use serde_json::Value;

use crate::common::raw_controls;

/// Serves one connection with `behave` on a free loopback port; returns the port.
fn serve(behave: fn(TcpStream)) -> u16 {
    let l = TcpListener::bind("127.0.0.1:0").unwrap();
    let port = l.local_addr().unwrap().port();
    std::thread::spawn(move || {
        if let Ok((s, _)) = l.accept() {
            let _ = s.set_read_timeout(Some(Duration::from_secs(10)));
            behave(s);
        }
    });
    port
}

/// Reads one request head; false when the client has gone.
fn read_request(s: &mut TcpStream) -> bool {
    let mut head = Vec::new();
    let mut b = [0u8; 512];
    while !head.windows(4).any(|w| w == b"\r\n\r\n") {
        match s.read(&mut b) {
            Ok(0) | Err(_) => return false,
            Ok(n) => head.extend_from_slice(&b[..n]),
        }
        if head.len() > 16384 {
            return false;
        }
    }
    true
}

/// Writes `chunk` again and again with `pause` between, until the client has gone or
/// `limit` bytes were written.
fn write_slowly(s: &mut TcpStream, chunk: &[u8], pause: Duration, limit: usize) {
    let mut sent = 0;
    while sent < limit {
        if s.write_all(chunk).is_err() {
            return;
        }
        sent += chunk.len();
        if !pause.is_zero() {
            std::thread::sleep(pause);
        }
    }
}

/// Answers every request on the connection with `response` (at most 5).
fn answer_each(mut s: TcpStream, response: &[u8]) {
    for _ in 0..5 {
        if !read_request(&mut s) || s.write_all(response).is_err() {
            return;
        }
    }
}

/// Runs the query (JSON, then as a person reads it), returns the JSON and how long
/// the JSON run took.
fn query(port: u16, ok: bool) -> (Value, Duration) {
    let target = format!("127.0.0.1:{port}");
    let t = Instant::now();
    let out = Command::new(env!("CARGO_BIN_EXE_ogp"))
        .args(["query", "-p", "fivem", "--json", "--timeout", "1000"])
        .args(["--retries", "0", &target])
        .output()
        .unwrap();
    let took = t.elapsed();
    assert_eq!(
        out.status.success(),
        ok,
        "{}",
        String::from_utf8_lossy(&out.stdout)
    );
    let v: Value = serde_json::from_slice(&out.stdout).unwrap_or_else(|e| {
        panic!("{e}: {}", String::from_utf8_lossy(&out.stdout));
    });
    (v, took)
}

/// The same server queried as a person reads it: no raw control character on
/// standard output or error.
fn human(port: u16) {
    let out = Command::new(env!("CARGO_BIN_EXE_ogp"))
        .args([
            "query",
            "-p",
            "fivem",
            "--timeout",
            "1000",
            "--retries",
            "0",
        ])
        .arg(format!("127.0.0.1:{port}"))
        .output()
        .unwrap();
    for (name, text) in [("stdout", &out.stdout), ("stderr", &out.stderr)] {
        let text = String::from_utf8_lossy(text);
        assert_eq!(raw_controls(&text), 0, "{name}: {text:?}");
    }
}

fn check(v: &Value, took: Duration, error: &str, message: &str) {
    assert_eq!(v["ok"], false, "{v}");
    assert_eq!(v["error"], error, "{v}");
    let m = v["message"].as_str().unwrap();
    assert!(m.contains(message), "{m:?} does not say {message:?}");
    assert!(!m.contains('\n'));
    assert_eq!(raw_controls(m), 0, "{m:?}");
    // The deadline is 3 s; the process start and a loaded machine get the rest.
    assert!(took < Duration::from_secs(20), "took {took:?}");
}

#[test]
fn endless_headers_are_cut_at_the_head_cap() {
    let port = serve(|mut s| {
        read_request(&mut s);
        let _ = s.write_all(b"HTTP/1.1 200 OK\r\n");
        write_slowly(
            &mut s,
            b"X-Padding: aaaaaaaaaaaaaaaa\r\n",
            Duration::ZERO,
            1 << 20,
        );
    });
    let (v, took) = query(port, false);
    check(&v, took, "malformed", "HTTP response head");
}

#[test]
fn endless_chunks_are_cut_at_the_body_cap() {
    let port = serve(|mut s| {
        read_request(&mut s);
        let _ = s.write_all(b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n");
        write_slowly(
            &mut s,
            b"10\r\n{{{{{{{{{{{{{{{{\r\n",
            Duration::ZERO,
            8 << 20,
        );
    });
    let (v, took) = query(port, false);
    check(&v, took, "malformed", "HTTP body");
}

#[test]
fn a_body_that_never_ends_is_cut_at_the_body_cap() {
    let port = serve(|mut s| {
        read_request(&mut s);
        // no length, no chunks: the body runs until the close, which never comes
        let _ = s.write_all(b"HTTP/1.0 200 OK\r\n\r\n[");
        write_slowly(&mut s, &[b' '; 4096], Duration::ZERO, 8 << 20);
    });
    let (v, took) = query(port, false);
    check(&v, took, "malformed", "HTTP body");
}

#[test]
fn a_slow_drip_is_cut_off_at_the_deadline() {
    let port = serve(|mut s| {
        read_request(&mut s);
        // a byte every 100 ms: never silent for the read timeout
        let _ = s.write_all(b"HTTP/1.1 200 OK\r\nContent-Length: 1000\r\n\r\n");
        write_slowly(&mut s, b" ", Duration::from_millis(100), 100);
    });
    let (v, took) = query(port, false);
    check(&v, took, "timeout", "total timeout");
    assert!(took < Duration::from_secs(8), "took {took:?}");
}

#[test]
fn a_lying_content_length_is_truncated() {
    let port = serve(|mut s| {
        read_request(&mut s);
        let _ = s.write_all(b"HTTP/1.1 200 OK\r\nContent-Length: 1000\r\n\r\n{\"clients\":1}");
        // and closes
    });
    let (v, took) = query(port, false);
    check(&v, took, "malformed", "HTTP body");
}

#[test]
fn garbage_is_not_http() {
    let port = serve(|mut s| {
        read_request(&mut s);
        let _ = s.write_all(b"\x00\x01\x1b[2J\x1b]0;pwned\x07SSH-2.0-OpenSSH\r\n\r\n");
    });
    let (v, took) = query(port, false);
    check(&v, took, "malformed", "not an HTTP/1.x status line");
    human(serve(|mut s| {
        read_request(&mut s);
        let _ = s.write_all(b"\x00\x01\x1b[2J\x1b]0;pwned\x07SSH-2.0-OpenSSH\r\n\r\n");
    }));
}

/// A redirect with a C1 control (U+009B, CSI) in its reason and `Location`.
const REDIRECT: &[u8] = b"HTTP/1.1 301 Moved \xc2\x9b2J\r\nLocation: http://evil.example/\xc2\x9b2J\r\nContent-Length: 0\r\n\r\n";

#[test]
fn a_redirect_is_refused() {
    let port = serve(|s| answer_each(s, REDIRECT));
    let (v, took) = query(port, false);
    check(&v, took, "rejected", "HTTP 301");
    let m = v["message"].as_str().unwrap();
    assert!(
        m.contains("redirect to http://evil.example/?2J, not followed"),
        "{m}"
    );
    assert!(m.contains("/info.json"), "{m}");
    human(serve(|s| answer_each(s, REDIRECT)));
}

#[test]
fn a_server_error_is_the_servers_fault() {
    let port = serve(|s| {
        answer_each(
            s,
            b"HTTP/1.1 500 Internal Server Error\r\nContent-Length: 5\r\n\r\noops!",
        )
    });
    let (v, took) = query(port, false);
    check(
        &v,
        took,
        "rejected",
        "HTTP 500 Internal Server Error for /info.json",
    );
    assert!(v["message"].as_str().unwrap().contains("the server failed"));
}

/// Answers `/dynamic.json` with a 404 and `/info.json` with `body`.
fn info_is(mut s: TcpStream, body: &str) {
    if !read_request(&mut s) {
        return;
    }
    let _ = s.write_all(b"HTTP/1.1 404 Not Found\r\nContent-Length: 0\r\n\r\n");
    if !read_request(&mut s) {
        return;
    }
    let _ = s.write_all(
        format!(
            "HTTP/1.1 200 OK\r\nContent-Length: {}\r\n\r\n{body}",
            body.len()
        )
        .as_bytes(),
    );
}

#[test]
fn deeply_nested_json_is_refused_or_skipped() {
    // 100,000 brackets where an object belongs: refused at the first
    let port = serve(|s| info_is(s, &"[".repeat(100_000)));
    let (v, took) = query(port, false);
    check(&v, took, "malformed", "the JSON is not shaped as expected");
    assert!(v["message"]
        .as_str()
        .unwrap()
        .contains("/info.json at byte "));
    // 100,000 brackets in a value that is not kept: skipped (serde_json skips without
    // recursing), the rest read
    let port = serve(|s| {
        let deep = format!("{}{}", "[".repeat(100_000), "]".repeat(100_000));
        info_is(
            s,
            &format!("{{\"x\":{deep},\"vars\":{{\"a\":{deep},\"gamename\":\"rdr3\"}}}}"),
        )
    });
    let (v, took) = query(port, true);
    assert!(took < Duration::from_secs(20), "took {took:?}");
    assert_eq!(v["status"]["game_name"], "RedM", "{v}");
    assert_eq!(v["status"]["rules"]["a"], "", "{v}");
}

#[test]
fn ten_thousand_players_are_cut_and_counted() {
    let port = serve(|mut s| {
        let players: Vec<String> = (0..10_000)
            .map(|i| {
                format!(
                    r#"{{"endpoint":"127.0.0.1","id":{i},"identifiers":["license:{i:040x}","discord:{i}"],"name":"player\u001b[31m{i}","ping":{}}}"#,
                    i % 300
                )
            })
            .collect();
        let docs = [
            r#"{"clients":10000,"hostname":"big","sv_maxclients":10000,"mapname":"m","gametype":"g","iv":"1"}"#.to_string(),
            r#"{"vars":{"gamename":"gta5"},"resources":[],"server":"FXServer"}"#.to_string(),
            format!("[{}]", players.join(",")),
        ];
        for d in docs {
            if !read_request(&mut s) {
                return;
            }
            let _ = s.write_all(
                format!("HTTP/1.1 200 OK\r\nContent-Length: {}\r\n\r\n{d}", d.len()).as_bytes(),
            );
        }
    });
    let (v, took) = query(port, true);
    assert!(took < Duration::from_secs(20), "took {took:?}");
    let s = &v["status"];
    assert_eq!(s["player_count"], 10_000);
    assert_eq!(s["players"].as_array().map(Vec::len), Some(4096));
    assert!(
        v["warnings"]
            .to_string()
            .contains("10000 players, the first 4096 kept"),
        "{}",
        v["warnings"]
    );
    // the escape in the names is escaped in the JSON
    let raw = v.to_string();
    assert_eq!(raw_controls(&raw), 0);
}
