//! `ogp-load fivem`: 10,000 loopback FiveM servers, `ogp scan -p fivem` side by side
//! with gamedig (`protocol-fivem`, a pool of `GameDig.query` workers:
//! `tests/interop/gamedig_bulk.mjs`) on the same servers, in one run (issue 39).
//!
//! The servers run in child processes of this binary (`ogp-load fivem-serve`, up to
//! `--per-process` servers each on one thread), each child on its own loopback address
//! 127.83.k.1, ports 10000 and up: every port a TCP listener speaking HTTP/1.1
//! (keep-alive, as FXServer) with the recorded `zap-esx` documents of
//! `crates/ogp-proto/tests/data/fivem/` (`/dynamic.json`, `/info.json`, and
//! `/players.json` with the recorded player four times over: [`PLAYERS`]), and a UDP
//! socket on the same port answering `getinfo` (what gamedig asks first) with FXServer's
//! `infoResponse` (`ogp_testkit::fivem::info_response`).
//!
//! ogp asks the three documents on one connection; gamedig asks `getinfo` over UDP, then
//! `/info.json` and `/players.json`. A target counts as read when its players came back:
//! for ogp a result with `"ok":true` and [`PLAYERS`] players, for gamedig an `ok` line
//! with [`PLAYERS`]. The measuring (time, peak RSS sampled from /proc, CPU of the reaped
//! child) is the scan benchmark's (`scan_bench::run_child`).

use std::collections::HashMap;
use std::path::PathBuf;
use std::process::Command;
use std::sync::Arc;
use std::time::Duration;

use anyhow::{Context as _, Result};
use tokio::io::{AsyncReadExt as _, AsyncWriteExt as _};

use crate::scan_bench::Run;
use crate::{common, farm};
/// The loopback network of the FiveM servers: 127.83.k.1 (127.77–127.82 are the other
/// farms').
const FIVEM_NET: u8 = 83;
/// Players every server lists.
pub const PLAYERS: usize = 4;
/// The recorded player's name (the players are named `NAME0`, `NAME1`, …).
const PLAYER: &str = "BallChopHee";

/// Options of `ogp-load fivem`.
#[derive(clap::Args, Debug)]
pub struct Args {
    #[command(flatten)]
    pub farm: farm::FarmArgs,
    /// gamedig concurrencies tried (workers of the pool; the best run counts).
    #[arg(long, default_value = "25,50,100,250,500", value_delimiter = ',')]
    pub concurrency: Vec<u32>,
    /// gamedig's package directory (default: target/interop/npm/node_modules/gamedig).
    #[arg(long, value_name = "DIR")]
    pub gamedig: Option<PathBuf>,
    /// Skip the gamedig comparison.
    #[arg(long)]
    pub no_gamedig: bool,
}

/// The recorded `zap-esx` documents, with [`PLAYERS`] players (the recorded one with
/// ids and names of their own) and `clients` saying so.
pub fn documents() -> Result<ogp_testkit::fivem::Documents> {
    let mut docs = ogp_testkit::fivem::recorded("zap-esx");
    let player: serde_json::Value = docs
        .0
        .get("/players.json")
        .and_then(|b| serde_json::from_slice::<Vec<serde_json::Value>>(b).ok())
        .and_then(|v| v.into_iter().next())
        .context("the recorded players.json lists no player")?;
    let players: Vec<serde_json::Value> = (0..PLAYERS)
        .map(|i| {
            let mut p = player.clone();
            p["id"] = (i + 1).into();
            p["name"] = format!("{PLAYER}{i}").into();
            p
        })
        .collect();
    let mut dynamic: serde_json::Value = docs
        .0
        .get("/dynamic.json")
        .and_then(|b| serde_json::from_slice(b).ok())
        .context("the recorded dynamic.json")?;
    dynamic["clients"] = PLAYERS.into();
    docs.0
        .insert("/players.json".into(), serde_json::to_vec(&players)?);
    docs.0
        .insert("/dynamic.json".into(), serde_json::to_vec(&dynamic)?);
    Ok(docs)
}

/// Whole HTTP responses by path, shared by every server of a child.
type Responses = HashMap<String, Vec<u8>>;

fn responses(docs: &ogp_testkit::fivem::Documents) -> Responses {
    docs.0
        .iter()
        .map(|(path, body)| {
            let mut r = format!(
                "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: {}\r\n\r\n",
                body.len()
            )
            .into_bytes();
            r.extend_from_slice(body);
            (path.clone(), r)
        })
        .collect()
}

/// One HTTP connection: requests until `Connection: close`, the client's close, 10 s of
/// silence, 16 KiB of head or 100 requests.
async fn serve_http(mut conn: tokio::net::TcpStream, docs: Arc<Responses>) {
    let mut buf = Vec::with_capacity(512);
    let mut chunk = [0u8; 2048];
    for _ in 0..100 {
        let end = loop {
            if let Some(i) = buf.windows(4).position(|w| w == b"\r\n\r\n") {
                break i + 4;
            }
            if buf.len() > 16 * 1024 {
                return;
            }
            match tokio::time::timeout(Duration::from_secs(10), conn.read(&mut chunk)).await {
                Ok(Ok(n)) if n > 0 => buf.extend_from_slice(chunk.get(..n).unwrap_or_default()),
                _ => return,
            }
        };
        let head = String::from_utf8_lossy(buf.get(..end).unwrap_or_default()).into_owned();
        buf.drain(..end);
        let (path, close) = ogp_testkit::http_replay::request_of(&head);
        let answer: &[u8] = match docs.get(path) {
            Some(r) => r,
            None => b"HTTP/1.1 404 Not Found\r\nContent-Length: 0\r\n\r\n",
        };
        if conn.write_all(answer).await.is_err() || close {
            return;
        }
    }
}

/// `getinfo CHALLENGE` over UDP: FXServer's `infoResponse`.
async fn serve_udp(udp: tokio::net::UdpSocket, docs: Arc<ogp_testkit::fivem::Documents>) {
    let mut buf = [0u8; 2048];
    loop {
        let Ok((n, from)) = udp.recv_from(&mut buf).await else {
            continue;
        };
        if let Some(answer) =
            ogp_testkit::fivem::answer_getinfo(&docs, buf.get(..n).unwrap_or_default())
        {
            let _ = udp.send_to(&answer, from).await;
        }
    }
}

/// `ogp-load fivem-serve`: binds the servers (TCP and UDP on each port), prints `ready
/// <bound> <failed,…>`, and serves until standard input closes (or an hour passes).
pub fn serve(args: &farm::ChildArgs) -> Result<()> {
    // A listener, a UDP socket and the accepted connections each hold a descriptor.
    let _ = ogp_net::scan::raise_open_file_limit(args.count as usize * 3);
    let docs = Arc::new(documents()?);
    let http = Arc::new(responses(&docs));
    crate::scan_bench::serve_each(args.ip, args.count, args.offset, |addr, _| {
        let (docs, http) = (Arc::clone(&docs), Arc::clone(&http));
        async move {
            let listener = tokio::net::TcpListener::bind(addr).await?;
            let udp = tokio::net::UdpSocket::bind(addr).await?;
            Ok(tokio::spawn(async move {
                tokio::spawn(serve_udp(udp, docs));
                loop {
                    if let Ok((conn, _)) = listener.accept().await {
                        tokio::spawn(serve_http(conn, Arc::clone(&http)));
                    }
                }
            }))
        }
    })
}

/// An `ogp scan --json` line of a target read whole: ok, with its [`PLAYERS`] players
/// (by their names: string matching, not a JSON parse, so that reading the lines
/// costs little beside the scanner, even in a debug build of this harness).
fn ogp_read(line: &str) -> bool {
    line.contains("\"ok\":true") && line.matches(&format!("\"name\":\"{PLAYER}")).count() == PLAYERS
}

/// A `gamedig_bulk.mjs` line of a target read whole: `ok ADDR PLAYERS`.
fn gamedig_read(line: &str) -> bool {
    let mut w = line.split_whitespace();
    w.next() == Some("ok") && w.nth(1).and_then(|n| n.parse::<usize>().ok()) == Some(PLAYERS)
}

fn cpu_s(r: &Run) -> f64 {
    r.cpu.map_or(f64::NAN, |c| c.as_secs_f64())
}

/// `ogp-load fivem`.
pub fn run(args: &Args) -> Result<()> {
    common::print_command(
        "fivem",
        &format!(
            "{} --concurrency {}{}",
            args.farm.spelled(),
            farm::join(&args.concurrency),
            if args.no_gamedig { " --no-gamedig" } else { "" },
        ),
    );
    common::print_load("before");
    // The clients inherit it: node cannot raise its own.
    let _ = ogp_net::scan::raise_open_file_limit(65_536);
    let farm = farm::start_farm("fivem-serve", FIVEM_NET, &args.farm)?;
    let n = farm.targets;
    let ours = farm::ogp_scans(&args.farm, &farm, "fivem", ogp_read)?;
    let theirs = if args.no_gamedig {
        Vec::new()
    } else {
        let dir = args.gamedig.clone().unwrap_or_else(|| {
            ogp_testkit::interop::gamedig_js()
                .parent()
                .and_then(|p| p.parent())
                .map(PathBuf::from)
                .unwrap_or_default()
        });
        let script = ogp_testkit::interop::script("tests/interop/gamedig_bulk.mjs");
        farm::client_runs(&farm, "gamedig", &args.concurrency, gamedig_read, |c| {
            let mut cmd = Command::new("node");
            cmd.arg(&script)
                .arg(&dir)
                .arg(&farm.list)
                .arg(c.to_string())
                .arg("3000");
            cmd
        })?
    };
    println!();
    println!("{n} loopback FiveM servers ({PLAYERS} players each), best run of each:");
    let line = |name: &str, setting: String, r: &Run| {
        println!(
            "  {name:<8} {setting:<22} read {} of {n} in {:.2} s ({:.0}/s), CPU {:.2} s ({:.1} µs/target), peak RSS {}",
            r.answered,
            r.seconds,
            r.answered as f64 / r.seconds.max(1e-6),
            cpu_s(r),
            cpu_s(r) * 1e6 / n.max(1) as f64,
            r.peak_kb.map_or("?".into(), common::mb),
        );
    };
    let o = farm::best_run(&ours);
    if let Some((m, r)) = o {
        line("ogp scan", format!("--max-in-flight {m}"), r);
    }
    if let Some((c, r)) = farm::best_run(&theirs) {
        line("gamedig", format!("concurrency {c}"), r);
        if let Some((_, ro)) = o {
            println!(
                "  ratio gamedig / ogp scan: time {:.2}x, CPU {:.2}x, peak RSS {:.2}x",
                r.seconds / ro.seconds.max(1e-6),
                cpu_s(r) / cpu_s(ro),
                r.peak_kb.unwrap_or(0) as f64 / ro.peak_kb.unwrap_or(1).max(1) as f64,
            );
        }
    }
    common::print_load("after");
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_are_told_from_failures() {
        assert!(gamedig_read("ok 127.83.0.1:10000 4"));
        assert!(!gamedig_read("ok 127.83.0.1:10000 0"));
        assert!(!gamedig_read("err 127.83.0.1:10001 timeout"));
        let four = r#"{"ok":true,"status":{"players":[{"name":"BallChopHee0"},{"name":"BallChopHee1"},{"name":"BallChopHee2"},{"name":"BallChopHee3"}]}}"#;
        assert!(ogp_read(four));
        assert!(!ogp_read(&four.replace("\"ok\":true", "\"ok\":false")));
        assert!(!ogp_read(r#"{"ok":true,"status":{"players":[]}}"#));
        assert!(!ogp_read(r#"{"ok":false}"#));
        let docs = documents().unwrap();
        let players: Vec<serde_json::Value> =
            serde_json::from_slice(docs.0.get("/players.json").unwrap()).unwrap();
        assert_eq!(players.len(), PLAYERS);
    }
}
