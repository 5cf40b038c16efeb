//! `ogp scan`'s memory against hostile Minecraft servers: 2,000 loopback listeners (in
//! this process) that each answer the status request with a frame just under the cap
//! (98,305 bytes announced, all but the last byte sent) and never finish it. The scan
//! runs with its defaults as a child process; its peak RSS (`VmHWM`)
//! must stay under 64 MB, where it was 269 MB (each connection's buffer grown by
//! doubling to 131,072 bytes, 2,048 connections at once). The byte budget shared by
//! the scan's connections (`ScanConfig::stream_budget`, 16 MiB) is what bounds it.
//!
//! `OGP_HOSTILE_TARGETS` (2000) and `OGP_BIN` (this build's `ogp`) change the run, to
//! measure another binary the same way:
//! `OGP_BIN=/path/to/ogp cargo test -p ogp-cli --test all scan_memory:: -- --nocapture`.

use std::io::Read;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpListener;

/// What a hostile server sends: a status frame announcing 98,305 bytes (the cap), then
/// all of it but the last byte.
fn hostile_frame() -> Vec<u8> {
    use ogp_proto::minecraft::wire::{write_varint, MAX_STATUS_FRAME};
    let len = i32::try_from(MAX_STATUS_FRAME).unwrap();
    let mut out = Vec::with_capacity(MAX_STATUS_FRAME + 5);
    write_varint(&mut out, len);
    let header = out.len();
    // Packet id 0 (status response), the JSON's length, then the JSON that never ends.
    out.push(0);
    write_varint(&mut out, len - 1 - 3);
    out.push(b'{');
    out.resize(header + MAX_STATUS_FRAME - 1, b' ');
    out
}

/// The peak RSS of process `pid` so far (`VmHWM`), in bytes.
fn vm_hwm(pid: u32) -> Option<u64> {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).ok()?;
    let line = status.lines().find(|l| l.starts_with("VmHWM:"))?;
    let kb: u64 = line.split_whitespace().nth(1)?.parse().ok()?;
    Some(kb * 1024)
}

/// Runs `ogp scan` on `list`; returns its standard output, how long it took and its
/// peak RSS in bytes (`VmHWM`, read every 10 ms until it exits: the peak lasts while
/// the connections wait for their timers, seconds).
fn scan(list: &std::path::Path) -> (String, Duration, u64) {
    let bin = std::env::var("OGP_BIN").unwrap_or_else(|_| env!("CARGO_BIN_EXE_ogp").into());
    let t = Instant::now();
    let mut child = Command::new(bin)
        .args(["scan", "--json", "--no-progress"])
        .arg(list)
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let mut stdout = child.stdout.take().unwrap();
    let reader = std::thread::spawn(move || {
        let mut s = String::new();
        stdout.read_to_string(&mut s).unwrap();
        s
    });
    let mut peak = 0;
    // Bounded: the scan's deadline is 6 s a target, all of them at once.
    while t.elapsed() < Duration::from_secs(60) {
        if let Some(hwm) = vm_hwm(child.id()) {
            peak = peak.max(hwm);
        }
        if child.try_wait().unwrap().is_some() {
            break;
        }
        std::thread::sleep(Duration::from_millis(10));
    }
    let _ = child.kill();
    let _ = child.wait();
    let took = t.elapsed();
    (reader.join().unwrap(), took, peak)
}

#[test]
fn hostile_minecraft_servers_cannot_make_the_scan_hold_a_frame_each() {
    let n: usize = std::env::var("OGP_HOSTILE_TARGETS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(2000);
    // Listeners and their connections: two descriptors a target.
    ogp_net::scan::raise_open_file_limit(2 * n + 64);
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(1)
        .enable_all()
        .build()
        .unwrap();
    let frame: std::sync::Arc<[u8]> = hostile_frame().into();
    let mut lines = String::new();
    for _ in 0..n {
        let l = rt.block_on(TcpListener::bind("127.0.0.1:0")).unwrap();
        lines.push_str(&format!("minecraft {}\n", l.local_addr().unwrap()));
        let frame = frame.clone();
        rt.spawn(async move {
            // One connection per listener (the scan opens one per target).
            let Ok((mut s, _)) = l.accept().await else {
                return;
            };
            let mut request = [0u8; 512];
            let _ = s.read(&mut request).await;
            let _ = s.write_all(&frame).await;
            // Never finish: hold the connection until the client closes it.
            let _ = s.read(&mut request).await;
        });
    }
    let dir = std::env::temp_dir().join(format!("ogp-scan-memory-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let list = dir.join("hostile.txt");
    std::fs::write(&list, lines).unwrap();
    let (out, took, peak) = scan(&list);
    let _ = std::fs::remove_dir_all(&dir);
    drop(rt);
    let mut failed = 0;
    let mut why = std::collections::BTreeMap::new();
    for line in out.lines() {
        let v: serde_json::Value = serde_json::from_str(line).unwrap();
        assert_eq!(v["ok"], false, "a hostile server gave an answer: {v}");
        failed += 1;
        // The message without its numbers: how each ended.
        let m: String = v["message"]
            .as_str()
            .unwrap_or("")
            .chars()
            .filter(|c| !c.is_ascii_digit())
            .collect();
        *why.entry(m).or_insert(0) += 1;
    }
    for (m, k) in &why {
        eprintln!("  {k:>5} {m}");
    }
    eprintln!(
        "{n} hostile Minecraft servers: ogp scan took {:.2} s, peak RSS {:.1} MB",
        took.as_secs_f64(),
        peak as f64 / 1e6
    );
    assert_eq!(failed, n, "every target has its result");
    assert!(
        peak < 64_000_000,
        "peak RSS {:.1} MB (at most 64 MB)",
        peak as f64 / 1e6
    );
    // Each connection ends at its read timeout (2.32 s) or the deadline (6 s).
    assert!(took < Duration::from_secs(30), "took {took:?}");
}
