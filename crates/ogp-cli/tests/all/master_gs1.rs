//! `ogp master` and GameSpy v1 (issue 37, item 3), end to end on loopback: a GameSpy v1
//! server's heartbeat verified by `\echo\` and listed on the GameSpy master list over
//! TCP; the listener's bounds (idle, half-sent and oversized requests, connections per
//! address, a costly request repeated); a lying server; qstat's `-gsm` reading the list
//! (`OGP_INTEROP=1`).

use crate::common;

use std::io::{Read, Write};
use std::net::{SocketAddr, TcpStream, UdpSocket};
use std::path::Path;
use std::process::Command;
use std::time::Duration;

use common::master::{
    closed_within, connect_from, counter, runtime, still_open, wait_for, wait_until, Master,
};
use common::{run, TempDir};
use ogp_testkit::replay::Replay;

/// What qstat 2.17 sends a GameSpy master (observed on loopback), for game `ut`.
const QSTAT_REQUEST: &[u8] = b"\\gamename\\gamespy2\\gamever\\020109017\\location\\5\\validate\\12345678\\final\\\\list\\\\gamename\\ut\\final\\";

/// `ogp master` on loopback (private addresses allowed) with the GameSpy master list on a
/// port of its own, `settings` in its config; and that port (from its log).
fn master(dir: &Path, settings: &str) -> (Master, SocketAddr) {
    let db = format!("sqlite://{}", dir.join("master.db").display());
    let config =
        format!("allow_private = true\ndb = \"{db}\"\ngs1_list = \"127.0.0.1:0\"\n{settings}\n");
    let m = Master::with_config(dir, "master", &config, &[]);
    let mut tcp = None;
    wait_for(
        "the GameSpy master list's port in the log",
        Duration::from_secs(10),
        || {
            tcp = m
                .log_text()
                .split("GameSpy master list on TCP ")
                .nth(1)
                .and_then(|r| r.split_whitespace().next()?.parse().ok());
            tcp.is_some()
        },
    );
    (m, tcp.unwrap())
}

/// A GameSpy v1 server: answers `\echo\TEXT` (as Unreal Tournament does: the text back,
/// a query id and `\final\`) and `\status\` (a small Unreal Tournament status); when
/// `lie`, its echo carries other text. Binary queries (the poller's other protocols) get
/// nothing.
fn gs1_server(lie: bool) -> Replay {
    Replay::start(move |q: &[u8]| {
        if let Some(text) = q.strip_prefix(b"\\echo\\") {
            let text: &[u8] = if lie { b"00000000" } else { text };
            return vec![[b"\\echo\\", text, b"\\queryid\\12.1\\final\\"].concat()];
        }
        if q.starts_with(b"\\status\\") {
            return vec![b"\\gamename\\ut\\gamever\\451\\hostname\\GS1 test\\hostport\\7777\\mapname\\DM-Deck16][\\gametype\\DeathMatchPlus\\numplayers\\0\\maxplayers\\8\\queryid\\13.1\\final\\".to_vec()];
        }
        Vec::new()
    })
}

/// Sends `\heartbeat\PORT\gamename\GAME` to the master from a socket of its own (as
/// Unreal Tournament does: not its query port).
fn heartbeat(master: SocketAddr, port: u16, game: &str) {
    let s = UdpSocket::bind("127.0.0.1:0").unwrap();
    s.send_to(
        format!("\\heartbeat\\{port}\\gamename\\{game}\\statechanged\\1").as_bytes(),
        master,
    )
    .unwrap();
}

/// The whole exchange with the list: the greeting, `request`, and what came until the
/// master closed (or 5 s).
fn list(tcp: SocketAddr, request: &[u8]) -> (Vec<u8>, Vec<u8>) {
    let mut s = TcpStream::connect(tcp).unwrap();
    s.set_read_timeout(Some(Duration::from_secs(5))).unwrap();
    let mut greeting = [0u8; 21];
    s.read_exact(&mut greeting).unwrap();
    s.write_all(request).unwrap();
    let mut answer = Vec::new();
    let _ = s.read_to_end(&mut answer);
    (greeting.to_vec(), answer)
}

fn listed(m: &Master, addr: SocketAddr) -> bool {
    m.servers()
        .iter()
        .any(|s| s["addr"].as_str() == Some(&addr.to_string()))
}

/// A heartbeat from a loopback GameSpy v1 server is verified by `\echo\` (to the query
/// port it names) and the server is on the GameSpy master list for its game, in the
/// API, and in the metrics; another game's list does not hold it.
#[test]
fn a_gamespy1_heartbeat_is_verified_and_on_the_gamespy_list() {
    let dir = TempDir::new("gs1-listed");
    let (m, tcp) = master(&dir.0, "");
    let server = gs1_server(false);
    heartbeat(m.udp, server.addr().port(), "UT");
    let took = wait_for("the server listed", Duration::from_secs(10), || {
        listed(&m, server.addr())
    });
    eprintln!("listed {took:?} after its heartbeat");
    // the API shows it like the others, named by its heartbeat's game
    let item = m
        .servers()
        .into_iter()
        .find(|s| s["addr"].as_str() == Some(&server.addr().to_string()))
        .unwrap();
    assert_eq!(item["game"], "ut", "{item}");
    let (greeting, answer) = list(tcp, QSTAT_REQUEST);
    assert!(greeting.starts_with(b"\\basic\\\\secure\\"), "{greeting:?}");
    assert!(greeting[15..].iter().all(u8::is_ascii_uppercase));
    assert_eq!(
        String::from_utf8_lossy(&answer),
        format!("\\ip\\{}\\final\\", server.addr())
    );
    // `ogp list --gs1` reads it too
    let ran = run(
        Command::new(common::BIN).args(["list", &tcp.to_string(), "--gs1", "ut"]),
        Duration::from_secs(20),
    );
    assert_eq!(ran.code, Some(0), "{}", ran.describe());
    assert_eq!(
        String::from_utf8_lossy(&ran.stdout),
        format!("gamespy1 {}\n", server.addr())
    );
    let other = QSTAT_REQUEST.replace_game("bfield1942");
    assert_eq!(list(tcp, &other).1, b"\\final\\");
    assert!(server.received() >= 1, "the echo reached the query port");
    assert_eq!(
        counter(
            &m,
            "ogp_master_verifications_total",
            "protocol=\"gamespy1\",outcome=\"verified\""
        ),
        1
    );
    assert!(
        counter(
            &m,
            "ogp_master_list_requests_total",
            "protocol=\"gamespy\",outcome=\"served\""
        ) >= 2
    );
}

trait ReplaceGame {
    fn replace_game(&self, game: &str) -> Vec<u8>;
}

impl ReplaceGame for [u8] {
    fn replace_game(&self, game: &str) -> Vec<u8> {
        String::from_utf8_lossy(self)
            .replace(
                "\\list\\\\gamename\\ut",
                &format!("\\list\\\\gamename\\{game}"),
            )
            .into_bytes()
    }
}

/// A server whose echo carries other text, and a heartbeat in the name of an address
/// where nobody answers: neither is listed, and the silent one got 14-byte echoes, no
/// more bytes in all than its heartbeat.
#[test]
fn a_lying_or_silent_gamespy1_server_is_not_listed() {
    let dir = TempDir::new("gs1-lying");
    let (m, tcp) = master(&dir.0, "");
    let liar = gs1_server(true);
    heartbeat(m.udp, liar.addr().port(), "ut");
    let victim = UdpSocket::bind("127.0.0.1:0").unwrap();
    victim
        .set_read_timeout(Some(Duration::from_millis(200)))
        .unwrap();
    heartbeat(m.udp, victim.local_addr().unwrap().port(), "ut");
    let mut got = Vec::new();
    let mut buf = [0u8; 512];
    let failed = wait_until(Duration::from_secs(10), || {
        if let Ok(n) = victim.recv(&mut buf) {
            got.push(n);
        }
        counter(&m, "ogp_master_verifications_total", "outcome=\"failed\"") >= 2
    });
    assert!(failed.is_some(), "both verifications end as failed");
    let sent = format!(
        "\\heartbeat\\{}\\gamename\\ut\\statechanged\\1",
        victim.local_addr().unwrap().port()
    )
    .len();
    assert!(!got.is_empty() && got.iter().all(|&n| n == 14), "{got:?}");
    assert!(
        got.iter().sum::<usize>() <= sent,
        "{got:?} for a heartbeat of {sent} bytes"
    );
    assert!(!listed(&m, liar.addr()));
    assert_eq!(list(tcp, QSTAT_REQUEST).1, b"\\final\\");
}

/// The listener's bounds: a connection that sends nothing, or half a request, is closed
/// at `gs1_timeout_ms`; an oversized request at once; one address holds at most
/// `gs1_max_connections_per_ip` connections, and another address still gets its list;
/// a costly request repeated from one address is cut by the list budget.
#[test]
fn the_list_listener_bounds_idle_half_sent_greedy_and_repeated_clients() {
    let dir = TempDir::new("gs1-bounds");
    let (m, tcp) = master(
        &dir.0,
        "gs1_timeout_ms = 1000\ngs1_max_connections_per_ip = 4\nlist_bytes_per_second = 1400",
    );
    // silent and half-sent: closed at the deadline, not before
    let start = std::time::Instant::now();
    let mut idle = TcpStream::connect(tcp).unwrap();
    let mut half = TcpStream::connect(tcp).unwrap();
    half.write_all(b"\\gamename\\ut\\validate\\x").unwrap();
    for s in [&mut idle, &mut half] {
        closed_within(s, Duration::from_secs(5)).expect("closed");
        let t = start.elapsed();
        assert!(
            t >= Duration::from_millis(700) && t < Duration::from_secs(3),
            "{t:?}"
        );
    }
    // oversized: refused at once
    let mut big = TcpStream::connect(tcp).unwrap();
    let _ = big.write_all(&[b'a'; 2048]);
    let t = closed_within(&mut big, Duration::from_secs(5)).expect("closed");
    assert!(t < Duration::from_millis(700), "{t:?}");
    // ten connections from one address: at most four stay open
    let rt = runtime();
    let mut held: Vec<TcpStream> = (0..10)
        .map(|_| connect_from(&rt, [127, 0, 0, 5], tcp))
        .collect();
    std::thread::sleep(Duration::from_millis(300));
    let open = held
        .iter_mut()
        .map(|s| closed_within(s, Duration::from_millis(50)).is_none())
        .filter(|&open| open)
        .count();
    assert!(open <= 4, "{open} connections of one address open");
    // another address meanwhile gets its list
    assert!(list(tcp, QSTAT_REQUEST).1.ends_with(b"\\final\\"));
    // the same request twenty times from one address: the budget (1,400 bytes a second,
    // bursts of 5,600) answers the first four and about one a second after
    let mut answered = 0;
    for _ in 0..20 {
        let mut s = connect_from(&rt, [127, 0, 0, 6], tcp);
        s.set_read_timeout(Some(Duration::from_secs(3))).unwrap();
        let mut greeting = [0u8; 21];
        s.read_exact(&mut greeting).unwrap();
        s.write_all(QSTAT_REQUEST).unwrap();
        let mut a = Vec::new();
        let _ = s.read_to_end(&mut a);
        if a.ends_with(b"\\final\\") {
            answered += 1;
        }
    }
    eprintln!("{answered} of 20 repeated requests from one address answered");
    assert!((4..=6).contains(&answered), "{answered} of 20 answered");
    assert!(
        counter(
            &m,
            "ogp_master_list_requests_total",
            "protocol=\"gamespy\",outcome=\"rate_limited\""
        ) >= 14
    );
    assert!(
        counter(
            &m,
            "ogp_master_gs1_displaced_connections_total",
            "cap=\"source\""
        ) >= 6
    );
    assert!(counter(&m, "ogp_master_list_requests_total", "outcome=\"timeout\"") >= 2);
    assert!(counter(&m, "ogp_master_list_requests_total", "outcome=\"refused\"") >= 1);
}

/// qstat's `-gsm,ut` reads our list and then queries the listed server with `\status\`.
#[test]
fn qstat_gsm_reads_the_gamespy_list() {
    if !common::enabled("qstat_gsm_reads_the_gamespy_list") {
        return;
    }
    let dir = TempDir::new("gs1-qstat");
    let (m, tcp) = master(&dir.0, "");
    let server = gs1_server(false);
    heartbeat(m.udp, server.addr().port(), "ut");
    wait_for("the server listed", Duration::from_secs(10), || {
        listed(&m, server.addr())
    });
    let ran = run(
        Command::new(common::quakestat())
            .args(["-R", "-timeout", "5"])
            .arg("-gsm,ut")
            .arg(tcp.to_string()),
        Duration::from_secs(30),
    );
    let out = String::from_utf8_lossy(&ran.stdout);
    eprintln!("{out}");
    assert!(
        out.contains("1 servers") || out.contains("1 server"),
        "{}",
        ran.describe()
    );
    let row = out
        .lines()
        .find(|l| l.contains(&server.addr().to_string()))
        .unwrap_or_else(|| panic!("no row for the server: {}", ran.describe()));
    assert!(row.starts_with("GPS"), "{row}");
    assert!(row.contains("GS1 test"), "{row}");
}

/// A fake GameSpy master on loopback TCP: each connection gets `greeting`, then, once
/// the client's request has come, `list`, and is held open for `hold` (or closed at
/// once).
fn fake_master(
    greeting: &'static [u8],
    list: &'static [u8],
    hold: Duration,
) -> (SocketAddr, std::thread::JoinHandle<()>) {
    let l = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = l.local_addr().unwrap();
    let t = std::thread::spawn(move || {
        if let Ok((mut s, _)) = l.accept() {
            let _ = s.write_all(greeting);
            if !list.is_empty() {
                let mut buf = [0u8; 512];
                let _ = s.read(&mut buf);
                let _ = s.write_all(list);
            }
            std::thread::sleep(hold);
        }
    });
    (addr, t)
}

/// `ogp list --gs1` against hostile masters: silent, one that closes before `\final\`,
/// one that stops sending, one that sends junk: each an error line and exit 1, within
/// the page timeout.
#[test]
fn ogp_list_gs1_ends_against_hostile_masters() {
    const GREETING: &[u8] = b"\\basic\\\\secure\\ABCDEF";
    for (greeting, list, hold, says) in [
        (
            &b""[..],
            &b""[..],
            Duration::from_secs(1),
            "sent nothing for 500 ms",
        ),
        (
            GREETING,
            &b"\\ip\\1.2.3.4:1"[..],
            Duration::ZERO,
            "closed the connection",
        ),
        (
            GREETING,
            b"\\ip\\1.2.3.4:1",
            Duration::from_secs(1),
            "sent nothing for 500 ms",
        ),
        (
            GREETING,
            b"\\ip\\junk\\final\\",
            Duration::from_secs(1),
            "not IPv4:PORT",
        ),
    ] {
        let (addr, t) = fake_master(greeting, list, hold);
        let ran = run(
            Command::new(common::BIN).args([
                "list",
                &addr.to_string(),
                "--gs1",
                "ut",
                "--page-timeout",
                "500",
            ]),
            Duration::from_secs(20),
        );
        assert_eq!(ran.code, Some(1), "{}", ran.describe());
        assert!(ran.stderr.contains(says), "{says}: {}", ran.describe());
        assert!(ran.took < Duration::from_secs(3), "{}", ran.describe());
        t.join().unwrap();
    }
}

// --- The Cube 2 master over TCP (issue #38): the other TCP master of `ogp master` ---

/// `ogp master` with its Cube 2 master on a port of its own, `settings` in its config;
/// and that port (from its log).
fn cube2_master(dir: &Path, settings: &str) -> (Master, SocketAddr) {
    let db = format!("sqlite://{}", dir.join("master.db").display());
    let config = format!(
        "allow_private = true\ndb = \"{db}\"\ncube2_master = \"127.0.0.1:0\"\n{settings}\n"
    );
    let m = Master::with_config(dir, "master", &config, &[]);
    let mut tcp = None;
    wait_for(
        "the Cube 2 master's port in the log",
        Duration::from_secs(10),
        || {
            tcp = m
                .log_text()
                .split("Cube 2 master on TCP ")
                .nth(1)
                .and_then(|r| r.split_whitespace().next()?.parse().ok());
            tcp.is_some()
        },
    );
    (m, tcp.unwrap())
}

/// A Cube 2 server's query port: answers the ping (`81` and a 32-bit id) as Sauerbraten
/// does, the request echoed and then its reply; when `lie`, with another id.
fn cube2_server(lie: bool) -> Replay {
    Replay::start(move |q: &[u8]| {
        if q.len() != 5 || q[0] != 0x81 {
            return Vec::new();
        }
        let mut d = q.to_vec();
        if lie {
            d[1] ^= 0xff;
        }
        // clients 0, 5 attributes (protocol 260, mode 0, time 0, 8 slots, open), map,
        // description
        d.extend_from_slice(&[0, 5, 0x80, 0x04, 0x01, 0, 0, 8, 0]);
        d.extend_from_slice(b"complex\0Sim cube\0");
        vec![d]
    })
}

/// Sends `lines` on `s` and reads one line back (up to 8 s): `None` if the master
/// closed first.
fn cube2_say(s: &mut TcpStream, lines: &[u8]) -> Option<String> {
    s.write_all(lines).ok()?;
    s.set_read_timeout(Some(Duration::from_secs(8))).unwrap();
    let mut got = Vec::new();
    let mut b = [0u8; 1];
    loop {
        match s.read(&mut b) {
            Ok(1) if b[0] == b'\n' => return Some(String::from_utf8_lossy(&got).into_owned()),
            Ok(1) => got.push(b[0]),
            _ => return None,
        }
    }
}

fn cube2_list(tcp: SocketAddr) -> String {
    let mut s = TcpStream::connect(tcp).unwrap();
    s.set_read_timeout(Some(Duration::from_secs(5))).unwrap();
    s.write_all(b"list\n").unwrap();
    let mut out = Vec::new();
    let _ = s.read_to_end(&mut out);
    String::from_utf8_lossy(&out).into_owned()
}

/// `regserv` from a server whose query port answers the ping with our id: `succreg`,
/// listed in the API and on the list (`addserver 127.0.0.1 GAMEPORT`), its connection
/// kept open. One that answers with another id, one whose port is silent: `failreg`,
/// closed, not listed. A Red Eclipse `server` line claiming another address: refused
/// in Red Eclipse's words, nothing verified. Registrations from 40 other sources for
/// silent ports meanwhile: each `failreg`, none listed, the real one verified at once.
#[test]
fn cube2_registrations_are_verified_by_the_ping_and_spoofed_claims_are_not() {
    let dir = TempDir::new("cube2-verified");
    let (m, tcp) = cube2_master(&dir.0, "");
    let rt = runtime();
    // 40 sources registering silent ports, each from its own network (the connections
    // of one network are capped at 32)
    let silent: Vec<_> = (0..40u8)
        .map(|i| {
            let mut s = connect_from(&rt, [127, 0, 10 + i, 1], tcp);
            s.write_all(format!("regserv {}\n", 20_000 + u16::from(i)).as_bytes())
                .unwrap();
            s
        })
        .collect();
    let server = cube2_server(false);
    let game_port = server.addr().port() - 1;
    let mut s = TcpStream::connect(tcp).unwrap();
    let t = std::time::Instant::now();
    assert_eq!(
        cube2_say(&mut s, format!("regserv {game_port}\n").as_bytes()).as_deref(),
        Some("succreg")
    );
    assert!(t.elapsed() < Duration::from_secs(2), "{:?}", t.elapsed());
    wait_for("the server in the API", Duration::from_secs(5), || {
        listed(&m, server.addr())
    });
    let item = m
        .servers()
        .into_iter()
        .find(|v| v["addr"].as_str() == Some(&server.addr().to_string()))
        .unwrap();
    assert_eq!(item["protocols"][0], "cube2", "{item}");
    assert_eq!(item["name"], "Sim cube", "{item}");
    let list = cube2_list(tcp);
    assert!(
        list.starts_with("clearservers\n")
            && list.contains(&format!("addserver 127.0.0.1 {game_port}\n")),
        "{list}"
    );
    // another port on the same connection: refused as Sauerbraten's master does
    assert_eq!(
        cube2_say(&mut s, b"regserv 1234\n").as_deref(),
        Some("failreg invalid port")
    );
    assert!(still_open(&s), "a verified server's connection is kept");

    // a liar: its answer carries another id
    let liar = cube2_server(true);
    let mut l = TcpStream::connect(tcp).unwrap();
    l.write_all(format!("regserv {}\n", liar.addr().port() - 1).as_bytes())
        .unwrap();
    // Red Eclipse's line naming another address than the connection's
    let mut c = TcpStream::connect(tcp).unwrap();
    assert_eq!(
        cube2_say(
            &mut c,
            format!("server {game_port} 192.0.2.9 230 \"spoof\" 1 \"\"\n").as_bytes()
        )
        .as_deref(),
        Some("echo \"server IP does not match the connection's, server will not be listed\"")
    );
    let reply = cube2_say(&mut l, b"").unwrap_or_default();
    assert!(
        reply.starts_with("failreg failed pinging server"),
        "{reply}"
    );
    assert!(closed_within(&mut l, Duration::from_secs(1)).is_some());
    for (i, mut s) in silent.into_iter().enumerate() {
        let reply = cube2_say(&mut s, b"").unwrap_or_default();
        assert!(reply.starts_with("failreg"), "source {i}: {reply}");
    }
    assert_eq!(m.servers().len(), 1, "{:?}", m.servers());
    assert_eq!(
        counter(
            &m,
            "ogp_master_registrations_total",
            "protocol=\"cube2\",outcome=\"verifying\""
        ),
        42
    );
}

/// The Cube 2 master's bounds: an idle connection and a drip (a byte every 100 ms)
/// are closed at `cube2_timeout_ms`; a line without end at 512 bytes; 10,000 `regserv`
/// lines in one go after the line budget, none of them acted on; connections over the
/// cap of one address displace the oldest; the list still answers.
#[test]
fn the_cube2_master_bounds_idle_dripping_endless_and_flooding_clients() {
    let dir = TempDir::new("cube2-bounds");
    let (m, tcp) = cube2_master(
        &dir.0,
        "cube2_timeout_ms = 600\ncube2_max_connections_per_ip = 3",
    );
    let rt = runtime();
    let mut idle = connect_from(&rt, [127, 0, 4, 1], tcp);
    let mut drip = connect_from(&rt, [127, 0, 4, 2], tcp);
    let t = std::time::Instant::now();
    let mut closed = None;
    for _ in 0..30 {
        if drip.write_all(b"l").is_err() {
            closed = Some(t.elapsed());
            break;
        }
        std::thread::sleep(Duration::from_millis(100));
    }
    let closed = closed.or_else(|| closed_within(&mut drip, Duration::from_secs(1)));
    assert!(
        closed.is_some_and(|d| d < Duration::from_secs(2)),
        "{closed:?}"
    );
    assert!(closed_within(&mut idle, Duration::from_secs(1)).is_some());

    let mut endless = connect_from(&rt, [127, 0, 4, 3], tcp);
    let _ = endless.write_all(&[b'a'; 600]);
    let took = closed_within(&mut endless, Duration::from_millis(500));
    assert!(took.is_some(), "an endless line is closed at once");

    let mut flood = connect_from(&rt, [127, 0, 4, 4], tcp);
    let lines = b"regserv 28785\n".repeat(10_000);
    let _ = flood.write_all(&lines);
    assert!(closed_within(&mut flood, Duration::from_millis(500)).is_some());

    // four connections from one address, cap three: the first is displaced
    let mut four: Vec<_> = (0..4)
        .map(|_| connect_from(&rt, [127, 0, 4, 5], tcp))
        .collect();
    assert!(closed_within(&mut four[0], Duration::from_millis(300)).is_some());
    assert!(still_open(&four[3]));
    drop(four);

    assert!(cube2_list(tcp).starts_with("clearservers\n"));
    let reg = |outcome: &str| {
        counter(
            &m,
            "ogp_master_registrations_total",
            &format!("protocol=\"cube2\",outcome=\"{outcome}\""),
        )
    };
    // The lines of one read past the budget are not acted on; a read that ends within
    // it (the flood's first bytes may come alone on a loaded machine) may queue one
    // registration, whose failure closes the connection: at most one, never a flood.
    assert!(reg("verifying") <= 1, "{}", reg("verifying"));
    let list = |o: &str| {
        counter(
            &m,
            "ogp_master_list_requests_total",
            &format!("protocol=\"cube2\",outcome=\"{o}\""),
        )
    };
    // (a registration's failure is counted when its verification gives up, which may be
    // after the connection closed: waited for, bounded)
    let closed_once = || list("too_many_lines") + list("registration_failed") == 1;
    assert!(
        wait_until(Duration::from_secs(10), closed_once).is_some(),
        "the flood is closed once, for its lines or its one failed registration: {} + {}",
        list("too_many_lines"),
        list("registration_failed")
    );
    assert_eq!(list("line_too_long"), 1);
    assert!(list("timeout") >= 2, "{}", list("timeout"));
    assert_eq!(list("served"), 1);
    assert!(counter(&m, "ogp_master_cube2_displaced_connections_total", "source") >= 1);
}
