//! What auto-detection costs a target whose UDP port is bound but silent, and what it
//! says: every protocol's probe goes out together, once a round (`--retries` + 1
//! rounds), so the port gets at most one datagram per protocol per round and one TCP
//! connection (Minecraft), and `ogp query` ends after one protocol's attempts, not after
//! the slowest protocol's steps. The error names what was tried over each transport.
//! With GameSpy v1, Unreal 2, GameSpy v2 and ASE (ten datagram protocols): 40 datagrams in
//! a scan (4 rounds), 30 in `ogp query` (3 rounds), where six protocols sent 24 and 18; a
//! GameSpy v1 server that answers costs one datagram per protocol (10) and is read in one
//! round. With Teeworlds 0.6 / DDNet and 0.7 (twelve datagram protocols): 48 datagrams
//! in a scan, 36 in `ogp query`; a GameSpy v1 server that answers costs 12.
//! round. The Doom 3 engine's `getInfo` makes eleven: 44 and 33, 11 for the answering
//! server. (OpenTTD, a TCP protocol, stays out of auto-detection: no second connection.)
//! round. With Cube 2 (eleven): 44 in a scan, 33 in `ogp query`, 11 for the GameSpy v1
//! server (Cube 2's ping is `81` and a 32-bit id, told apart by its shape).
//! round. With QuakeWorld, Quake 2, HexenWorld and NetQuake (fourteen): 56 and 42, and 14
//! for the GameSpy v1 server.
//!
//! Before: 33 datagrams and one connection in `ogp scan` (GameSpy v3's fallback and
//! Quake III's second step sent on their own schedules), and `ogp query` took 9.5 s with
//! the default timers, ending with `minecraft: malformed reply … truncated` when the
//! port accepted TCP and closed.

use std::collections::BTreeMap;
use std::net::{TcpListener, UdpSocket};
use std::process::{Command, Stdio};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use ogp_proto::Protocol;

/// What the TCP side of the port does.
#[derive(Clone, Copy, PartialEq)]
enum Tcp {
    /// Accepts, then closes at once.
    Close,
    /// Accepts, then says nothing.
    Silent,
}

/// A UDP port that reads and never answers, and a TCP listener on the same number.
struct Silent {
    port: u16,
    datagrams: Arc<Mutex<BTreeMap<String, usize>>>,
    connections: Arc<AtomicUsize>,
    stop: Arc<AtomicBool>,
    /// When the first datagram came.
    first: Arc<Mutex<Option<Instant>>>,
}

impl Silent {
    fn start(tcp: Tcp) -> Self {
        // The same port number free for both (bounded tries).
        let (udp, listener) = (0..50)
            .find_map(|_| {
                let udp = UdpSocket::bind("127.0.0.1:0").ok()?;
                let port = udp.local_addr().ok()?.port();
                let l = TcpListener::bind(("127.0.0.1", port)).ok()?;
                Some((udp, l))
            })
            .expect("a port free for UDP and TCP");
        let port = udp.local_addr().unwrap().port();
        let datagrams = Arc::new(Mutex::new(BTreeMap::new()));
        let connections = Arc::new(AtomicUsize::new(0));
        let stop = Arc::new(AtomicBool::new(false));
        let first = Arc::new(Mutex::new(None));
        udp.set_read_timeout(Some(Duration::from_millis(20)))
            .unwrap();
        {
            let (datagrams, stop, first) = (datagrams.clone(), stop.clone(), first.clone());
            std::thread::spawn(move || {
                let mut buf = [0u8; 2048];
                while !stop.load(Ordering::Relaxed) {
                    if let Ok(n) = udp.recv(&mut buf) {
                        first.lock().unwrap().get_or_insert_with(Instant::now);
                        let p = ogp_proto::detect::guess(&buf[..n])
                            .map_or("unknown", Protocol::name)
                            .to_string();
                        *datagrams.lock().unwrap().entry(p).or_insert(0) += 1;
                    }
                }
            });
        }
        listener.set_nonblocking(true).unwrap();
        {
            let (connections, stop) = (connections.clone(), stop.clone());
            std::thread::spawn(move || {
                let mut held = Vec::new();
                while !stop.load(Ordering::Relaxed) {
                    match listener.accept() {
                        Ok((s, _)) => {
                            connections.fetch_add(1, Ordering::Relaxed);
                            if tcp == Tcp::Silent {
                                held.push(s);
                            }
                        }
                        Err(_) => std::thread::sleep(Duration::from_millis(5)),
                    }
                }
            });
        }
        Self {
            port,
            datagrams,
            connections,
            stop,
            first,
        }
    }

    /// Time from the first datagram to `end` (the process's exit): the detection's
    /// own time, without the process's start on a loaded machine.
    fn since_first(&self, end: Instant) -> Duration {
        self.first
            .lock()
            .unwrap()
            .map_or(Duration::ZERO, |f| end.saturating_duration_since(f))
    }

    /// Datagrams per protocol (told by their first bytes), and connections.
    fn counts(&self) -> (BTreeMap<String, usize>, usize) {
        // The last datagrams may still be in flight on loopback.
        std::thread::sleep(Duration::from_millis(100));
        (
            self.datagrams.lock().unwrap().clone(),
            self.connections.load(Ordering::Relaxed),
        )
    }
}

impl Drop for Silent {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::Relaxed);
    }
}

/// Runs `ogp ARGS` (`OGP_BIN` to run another binary the same way), feeding `stdin`;
/// returns stdout, stderr and when it exited.
fn ogp(args: &[&str], stdin: &str) -> (String, String, Instant) {
    let bin = std::env::var("OGP_BIN").unwrap_or_else(|_| env!("CARGO_BIN_EXE_ogp").into());
    let mut child = Command::new(bin)
        .args(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    {
        use std::io::Write;
        let mut i = child.stdin.take().unwrap();
        i.write_all(stdin.as_bytes()).unwrap();
    }
    let out = child.wait_with_output().unwrap();
    let end = Instant::now();
    (
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
        end,
    )
}

/// At most one datagram per auto-detected protocol per round, and nothing else.
fn check_counts(counts: &BTreeMap<String, usize>, rounds: usize) {
    let total: usize = counts.values().sum();
    for p in Protocol::AUTO {
        let n = counts.get(p.name()).copied().unwrap_or(0);
        assert!(
            (1..=rounds).contains(&n),
            "{}: {n} datagrams in {rounds} rounds ({counts:?})",
            p.name()
        );
    }
    assert_eq!(counts.get("unknown"), None, "{counts:?}");
    assert!(total <= rounds * Protocol::AUTO.len(), "{total} datagrams");
}

/// What the port's TCP side does, and what the error says of it.
const CASES: [(Tcp, &str); 2] = [
    (Tcp::Close, "closed before a Minecraft status"),
    (Tcp::Silent, "connected, then no Minecraft status in time"),
];

const TRIED_UDP: &str =
    "no answer over UDP (OGP, GameSpy v3, A2S, GQP, Quake III, Minecraft Bedrock, GameSpy v1, Unreal 2, GameSpy v2, ASE, Teeworlds 0.6 / DDNet, Teeworlds 0.7, Doom 3 engine, Mumble, Chocolate Doom, SA-MP, Cube 2, QuakeWorld, Quake 2, HexenWorld, NetQuake, Doomsday); TCP: ";

#[test]
fn a_silent_port_costs_a_scan_one_datagram_per_protocol_per_round() {
    for (tcp, says) in CASES {
        let s = Silent::start(tcp);
        let (out, err, end) = ogp(
            &["scan", "--json", "--no-progress", "-"],
            &format!("127.0.0.1:{}\n", s.port),
        );
        let took = s.since_first(end);
        let (counts, connections) = s.counts();
        eprintln!(
            "scan: {} datagrams {counts:?}, {connections} connection(s), {:.2} s",
            counts.values().sum::<usize>(),
            took.as_secs_f64()
        );
        // --retries 3: four rounds.
        check_counts(&counts, 4);
        assert_eq!(connections, 1, "{err}");
        let v: serde_json::Value = serde_json::from_str(out.trim()).unwrap();
        assert_eq!(v["error"], "timeout", "{v}");
        assert_eq!(
            v["message"].as_str().unwrap(),
            format!("{TRIED_UDP}{says}"),
            "{v}"
        );
        // The rounds end 2.32 s after the first datagram (before: 4.6 s, Quake III's
        // second step).
        assert!(took < Duration::from_millis(3500), "took {took:?}");
    }
}

#[test]
fn a_silent_port_ends_ogp_query_after_one_protocol_s_attempts() {
    for (tcp, says) in CASES {
        let s = Silent::start(tcp);
        let target = format!("127.0.0.1:{}", s.port);
        // 500 ms growing 1.5x, 2 retries: 2.375 s of attempts (before: 4.75 s, the
        // connection's read timeout after its connect timeout's worth of datagrams).
        let (_, err, end) = ogp(&["query", "--timeout", "500", &target], "");
        let took = s.since_first(end);
        let (counts, connections) = s.counts();
        eprintln!(
            "query: {} datagrams {counts:?}, {connections} connection(s), {:.2} s: {}",
            counts.values().sum::<usize>(),
            took.as_secs_f64(),
            err.trim()
        );
        check_counts(&counts, 3);
        assert_eq!(connections, 1);
        assert_eq!(
            err.trim(),
            format!("ogp: {target}: {TRIED_UDP}{says}"),
            "one line naming what was tried"
        );
        assert!(took < Duration::from_millis(3500), "took {took:?}");
    }
}

/// The datagrams of a GameSpy v1 capture (`ogp-proto/tests/data/gamespy1/NAME.N.bin`).
fn gamespy1_capture(name: &str) -> Vec<Vec<u8>> {
    let dir =
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../ogp-proto/tests/data/gamespy1");
    (1..=16)
        .map_while(|n| std::fs::read(dir.join(format!("{name}.{n}.bin"))).ok())
        .collect()
}

/// A GameSpy v1 server (a real Unreal Tournament reply, replayed) is found by
/// auto-detection in its first round: one datagram per protocol, the answer read from
/// its three parts, and `ogp query` done as soon as it is (GameSpy v1 ranks last, but
/// the others' silence is not waited out).
#[test]
fn an_answering_gamespy1_server_is_found_in_one_round() {
    let parts = gamespy1_capture("ut_1");
    assert_eq!(parts.len(), 3);
    let counts = Arc::new(Mutex::new(BTreeMap::<String, usize>::new()));
    let first = Arc::new(Mutex::new(None::<Instant>));
    let server = {
        let (counts, first) = (counts.clone(), first.clone());
        ogp_testkit::replay::Replay::start(move |request: &[u8]| {
            first.lock().unwrap().get_or_insert_with(Instant::now);
            let p = ogp_proto::detect::guess(request).map_or("unknown", Protocol::name);
            *counts.lock().unwrap().entry(p.to_string()).or_insert(0) += 1;
            if request == ogp_proto::gamespy1::PROBE {
                parts.clone()
            } else {
                Vec::new()
            }
        })
    };
    let target = server.addr().to_string();
    let (out, err, end) = ogp(&["query", "--json", &target], "");
    let took = first
        .lock()
        .unwrap()
        .map_or(Duration::ZERO, |f| end.saturating_duration_since(f));
    std::thread::sleep(Duration::from_millis(100));
    let counts = counts.lock().unwrap().clone();
    eprintln!(
        "gamespy1 answering: {} datagrams {counts:?}, {:.3} s",
        counts.values().sum::<usize>(),
        took.as_secs_f64()
    );
    let v: serde_json::Value =
        serde_json::from_str(out.trim()).unwrap_or_else(|e| panic!("{e}: {out} {err}"));
    assert_eq!(v["protocol"], "gamespy1", "{v}");
    assert_eq!(v["datagrams"], 3, "{v}");
    assert_eq!(v["status"]["game_name"], "ut", "{v}");
    assert_eq!(v["status"]["player_count"], 11, "{v}");
    check_counts(&counts, 1);
    // One round, not the silent protocols' 2.3 s of attempts.
    assert!(took < Duration::from_millis(1500), "took {took:?}");
}
