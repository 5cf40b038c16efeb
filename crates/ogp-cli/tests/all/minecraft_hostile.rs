//! `ogp query -p minecraft` against hostile TCP servers on loopback (in-process
//! listeners): a slow drip, an endless VarInt, a length of 2 GB, a never-ending JSON,
//! a server that never says anything, a refused port. Each ends with a clear one-line
//! error of the right kind, well within the query's deadline (`--timeout 1000 --retries
//! 0`: connect and read timeouts of 1 s, 2 s in all).

use std::io::{Read, Write};
use std::net::{TcpListener, TcpStream};
use std::process::Command;
use std::time::{Duration, Instant};

use serde_json::Value;

/// Serves one connection with `behave` on a free loopback port; returns the port.
fn serve(behave: fn(TcpStream)) -> u16 {
    let l = TcpListener::bind("127.0.0.1:0").unwrap();
    let port = l.local_addr().unwrap().port();
    std::thread::spawn(move || {
        if let Ok((s, _)) = l.accept() {
            behave(s);
        }
    });
    port
}

/// Reads the handshake and status request (whatever comes first) so that the client's
/// write succeeds.
fn read_request(s: &mut TcpStream) {
    let mut buf = [0u8; 256];
    let _ = s.read(&mut buf);
}

/// Writes `bytes` a chunk at a time with `pause` between, stopping when the client has
/// gone (bounded: at most `limit` bytes).
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

/// Runs the query, returns its JSON and how long it took.
fn query(port: u16) -> (Value, Duration) {
    let t = Instant::now();
    let out = Command::new(env!("CARGO_BIN_EXE_ogp"))
        .args(["query", "-p", "minecraft", "--json", "--timeout", "1000"])
        .args(["--retries", "0", &format!("127.0.0.1:{port}")])
        .output()
        .unwrap();
    let took = t.elapsed();
    assert!(!out.status.success(), "a hostile server gave an answer");
    let v: Value = serde_json::from_slice(&out.stdout).unwrap_or_else(|e| {
        panic!("{e}: {}", String::from_utf8_lossy(&out.stdout));
    });
    (v, took)
}

fn check(v: &Value, took: Duration, error: &str, message: &str) {
    assert_eq!(v["ok"], false, "{v}");
    assert_eq!(v["error"], error, "{v}");
    let m = v["message"].as_str().unwrap();
    assert!(m.contains(message), "{m:?} does not say {message:?}");
    assert!(!m.contains('\n'));
    // The deadline is 2 s; the process start and a loaded machine get the rest.
    assert!(took < Duration::from_secs(20), "took {took:?}");
}

#[test]
fn a_slow_drip_is_cut_off_at_the_deadline() {
    let port = serve(|mut s| {
        read_request(&mut s);
        // A length of 100, then a byte every 100 ms: never silent for the read timeout.
        let _ = s.write_all(&[100]);
        write_slowly(&mut s, b" ", Duration::from_millis(100), 600);
    });
    let (v, took) = query(port);
    check(
        &v,
        took,
        "timeout",
        "timed out waiting for StatusResponse (total timeout,",
    );
    assert!(
        took >= Duration::from_secs(2),
        "before the deadline: {took:?}"
    );
    assert_eq!(v["fault"], "server");
}

#[test]
fn an_endless_varint_is_malformed() {
    let port = serve(|mut s| {
        read_request(&mut s);
        write_slowly(&mut s, &[0x80; 1024], Duration::ZERO, 64 << 20);
    });
    let (v, took) = query(port);
    check(
        &v,
        took,
        "malformed",
        "Length at byte 0: VarInt longer than its maximum size",
    );
}

#[test]
fn a_length_of_two_gigabytes_is_refused_at_once() {
    let port = serve(|mut s| {
        read_request(&mut s);
        let _ = s.write_all(&[0xff, 0xff, 0xff, 0xff, 0x07]);
        // Then stay open: the length alone must end it.
        std::thread::sleep(Duration::from_secs(30));
    });
    let (v, took) = query(port);
    check(
        &v,
        took,
        "malformed",
        "Length at byte 0: value exceeds our limit of 98305",
    );
    assert!(took < Duration::from_secs(10), "took {took:?}");
}

#[test]
fn a_never_ending_json_is_malformed_at_the_frame_cap() {
    let port = serve(|mut s| {
        read_request(&mut s);
        // The largest frame allowed (98,305 bytes: id 0, a 98,301-byte string), then a
        // JSON that only opens arrays, for ever.
        let _ = s.write_all(&[0x81, 0x80, 0x06, 0x00, 0xfd, 0xff, 0x05]);
        write_slowly(&mut s, &[b'['; 4096], Duration::ZERO, 64 << 20);
    });
    let (v, took) = query(port);
    check(&v, took, "malformed", "Json at byte");
}

#[test]
fn a_server_that_says_nothing_is_a_read_timeout() {
    let port = serve(|mut s| {
        read_request(&mut s);
        std::thread::sleep(Duration::from_secs(30));
    });
    let (v, took) = query(port);
    check(
        &v,
        took,
        "timeout",
        "timed out waiting for StatusResponse (read timeout, 0 bytes received)",
    );
    assert_eq!(v["fault"], "network");
}

#[test]
fn a_closed_port_is_refused_at_once() {
    let port = {
        let l = TcpListener::bind("127.0.0.1:0").unwrap();
        l.local_addr().unwrap().port()
    };
    let (v, took) = query(port);
    check(&v, took, "refused", "minecraft: connection refused");
    assert!(took < Duration::from_secs(10), "took {took:?}");
}
