//! `ogp master` and the Quake III family (issue 30, the master side), end to end on
//! loopback: a real OpenArena server listed from its own heartbeat and marked down after
//! SIGTERM; qstat's master types and `ogp list --dp` reading the list; forged
//! heartbeats, lying servers, a `getservers` flood and hostile masters.

use crate::common;

use std::net::{SocketAddr, UdpSocket};
use std::path::Path;
use std::process::Command;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use common::master::{counter, wait_for, wait_until, Flood, Master};
use common::{run, TempDir, BIN};
use ogp_proto::master::dpmaster::decode_page;
use ogp_testkit::gameservers::{OpenArena, OpenArenaConfig};

/// `ogp master` on loopback (private addresses allowed), `settings` in its config.
fn master(dir: &Path, settings: &str) -> Master {
    let db = format!("sqlite://{}", dir.join("master.db").display());
    let config = format!("allow_private = true\ndb = \"{db}\"\n{settings}\n");
    Master::with_config(dir, "master", &config, &[])
}

/// How a fake DarkPlaces server answers `getinfo`.
#[derive(Clone, Copy, PartialEq)]
enum Echo {
    /// The challenge as sent.
    Right,
    /// Another challenge.
    Wrong,
    /// None.
    Missing,
}

/// A fake DarkPlaces server on its own socket: it sends `heartbeat DarkPlaces` to
/// `master`, answers `getinfo` with an `infoResponse` (game `game`, protocol `protocol`,
/// one client of 8) whose challenge is as `echo` says, and `getstatus` with one player.
struct FakeDp {
    sock: UdpSocket,
    stop: Arc<AtomicBool>,
    thread: Option<JoinHandle<()>>,
}

impl FakeDp {
    fn start(master: SocketAddr, game: &'static str, protocol: u32, echo: Echo) -> Self {
        Self::start_on("127.0.0.1", master, game, protocol, echo)
    }

    /// [`FakeDp::start`] on a loopback address of its own (`127.0.0.2`…).
    fn start_on(
        ip: &str,
        master: SocketAddr,
        game: &'static str,
        protocol: u32,
        echo: Echo,
    ) -> Self {
        let sock = UdpSocket::bind((ip, 0)).unwrap();
        sock.set_read_timeout(Some(Duration::from_millis(100)))
            .unwrap();
        let stop = Arc::new(AtomicBool::new(false));
        let (s, st) = (sock.try_clone().unwrap(), stop.clone());
        let thread = std::thread::spawn(move || {
            let mut buf = [0u8; 2048];
            while !st.load(Ordering::Relaxed) {
                let Ok((n, from)) = s.recv_from(&mut buf) else {
                    continue;
                };
                let d = &buf[..n];
                let info = |challenge: &str| {
                    let mut r = format!(
                        "\\gamename\\{game}\\protocol\\{protocol}\\clients\\1\\sv_maxclients\\8\\hostname\\Fake {game}\\mapname\\dm1"
                    );
                    match echo {
                        Echo::Right => r.push_str(&format!("\\challenge\\{challenge}")),
                        Echo::Wrong => r.push_str("\\challenge\\not-yours"),
                        Echo::Missing => {}
                    }
                    r
                };
                let text = String::from_utf8_lossy(&d[4.min(n)..]).into_owned();
                let mut words = text.split_whitespace();
                let reply = match words.next() {
                    Some("getinfo") => {
                        let c = words.next().unwrap_or("");
                        format!("infoResponse\n{}", info(c))
                    }
                    Some("getstatus") => {
                        let c = words.next().unwrap_or("");
                        format!("statusResponse\n{}\n3 10 \"player\"\n", info(c))
                    }
                    _ => continue,
                };
                let mut out = vec![0xff; 4];
                out.extend_from_slice(reply.as_bytes());
                let _ = s.send_to(&out, from);
            }
        });
        sock.send_to(b"\xff\xff\xff\xffheartbeat DarkPlaces\n", master)
            .unwrap();
        Self {
            sock,
            stop,
            thread: Some(thread),
        }
    }

    fn addr(&self) -> SocketAddr {
        self.sock.local_addr().unwrap()
    }
}

impl Drop for FakeDp {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::Relaxed);
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}

/// The API's item for `addr`, if listed.
fn item(m: &Master, addr: SocketAddr) -> Option<serde_json::Value> {
    m.servers()
        .into_iter()
        .find(|s| s["addr"] == addr.to_string())
}

/// `getservers`-style `request` to the master; the servers of its pages (until EOT or
/// 2 s of silence) and whether the list ended.
fn getservers(master: SocketAddr, request: &[u8]) -> (Vec<SocketAddr>, bool) {
    let sock = UdpSocket::bind("127.0.0.1:0").unwrap();
    sock.set_read_timeout(Some(Duration::from_secs(2))).unwrap();
    sock.send_to(request, master).unwrap();
    let mut out = Vec::new();
    let mut buf = [0u8; 2048];
    while let Ok(n) = sock.recv(&mut buf) {
        let p = decode_page(&buf[..n]).unwrap();
        out.extend(p.servers);
        if p.end {
            return (out, true);
        }
    }
    (out, false)
}

/// `quakestat -json -R KIND MASTER`: its standard output. qstat's `-timeout` is the
/// whole run's (the master's list, then every listed server): 3 s is too short for it.
fn qstat_master(kind: &str, master: SocketAddr) -> String {
    let ran = run(
        Command::new(common::quakestat())
            .args([
                "-json",
                "-R",
                "-retry",
                "2",
                "-interval",
                "0.5",
                "-timeout",
                "20",
            ])
            .arg(kind)
            .arg(master.to_string()),
        Duration::from_secs(60),
    );
    String::from_utf8_lossy(&ran.stdout).into_owned()
}

/// A real OpenArena server (`dedicated 2`) heartbeats to our master: it is verified and
/// listed with its host name and map; qstat's `-q3m,71` and `-openarenam` and `ogp list
/// --dp` read it from the list; `-xonoticm` reads a DarkPlaces server's list without it.
/// On SIGTERM it sends two more heartbeats and stops: each heartbeat has the master poll
/// it within 5 s, which finds it gone and marks it down.
#[test]
fn openarena_is_listed_from_its_heartbeat_and_marked_down_after_sigterm() {
    if !common::enabled("openarena_is_listed_from_its_heartbeat_and_marked_down_after_sigterm") {
        return;
    }
    let dir = TempDir::new("master-q3-oa");
    // a poll interval far longer than the test: only heartbeats make it poll
    let m = master(&dir.0, "poll_interval_secs = 600");
    let mut oa = OpenArena::start(&OpenArenaConfig {
        hostname: "^1Bar ^7OA".into(),
        master: Some(m.udp),
        bots: 2,
        ..OpenArenaConfig::default()
    });
    let addr = oa.addr();
    let took = wait_for("OpenArena listed", Duration::from_secs(60), || {
        item(&m, addr).is_some_and(|s| s["name"] == "Bar OA" && s["up"] == true)
    });
    eprintln!("listed {took:?} after it started");
    let s = item(&m, addr).unwrap();
    assert_eq!(s["map"], "oa_dm1", "{s}");
    assert!(
        s["protocols"]
            .as_array()
            .unwrap()
            .iter()
            .any(|p| p == "quake3"),
        "{s}"
    );
    assert!(
        counter(
            &m,
            "ogp_master_verifications_total",
            "protocol=\"quake3\",outcome=\"verified\""
        ) >= 1
    );
    // getservers as OpenArena's browser sends it, and the Ext form
    let (l, end) = getservers(m.udp, b"\xff\xff\xff\xffgetservers 71 empty full");
    assert!(end && l.contains(&addr), "{l:?}");
    let (l, end) = getservers(
        m.udp,
        b"\xff\xff\xff\xffgetserversExt Quake3Arena 71 empty full",
    );
    assert!(end && l.contains(&addr), "{l:?}");
    let (l, end) = getservers(m.udp, b"\xff\xff\xff\xffgetservers 68 empty full");
    assert!(end && !l.contains(&addr), "protocol 68: {l:?}");

    // qstat's master types read the list, then query each server
    let shown = addr.to_string();
    for kind in ["-q3m,71", "-openarenam"] {
        let out = qstat_master(kind, m.udp);
        assert!(out.contains(&shown), "{kind}: {out}");
    }
    let fake = FakeDp::start(m.udp, "Xonotic", 3, Echo::Right);
    wait_for(
        "the fake Xonotic server listed",
        Duration::from_secs(30),
        || item(&m, fake.addr()).is_some(),
    );
    let out = qstat_master("-xonoticm", m.udp);
    assert!(out.contains(&fake.addr().to_string()), "-xonoticm: {out}");
    assert!(
        !out.contains(&shown),
        "-xonoticm lists no OpenArena server: {out}"
    );
    assert!(
        counter(
            &m,
            "ogp_master_list_requests_total",
            "protocol=\"dpmaster\",outcome=\"served\""
        ) >= 3
    );

    // ogp list reads it
    let ran = run(
        Command::new(BIN).args(["list", &m.udp.to_string(), "--dp", "Quake3Arena", "71"]),
        Duration::from_secs(30),
    );
    assert_eq!(ran.code, Some(0), "{}", ran.stderr);
    let listed = String::from_utf8_lossy(&ran.stdout).into_owned();
    assert_eq!(listed.trim(), format!("quake3 {shown}"), "{}", ran.stderr);

    // SIGTERM: marked down soon after
    let t = Instant::now();
    assert!(oa.terminate(), "OpenArena did not exit on SIGTERM");
    let exited = t.elapsed();
    let down = wait_for("OpenArena marked down", Duration::from_secs(60), || {
        item(&m, addr).is_some_and(|s| s["up"] == false)
    });
    let total = t.elapsed();
    eprintln!(
        "SIGTERM to exit {exited:?}; SIGTERM to marked down {total:?} (exit to down {down:?})"
    );
    assert!(total < Duration::from_secs(30), "{total:?}");
    let (l, _) = getservers(m.udp, b"\xff\xff\xff\xffgetservers 71 empty full");
    assert!(!l.contains(&addr), "a down server is not listed: {l:?}");
}

/// Issue 36, item 4: Debian's OpenArena server started during a flood of 5,000 forged
/// uplinks a second (from 10,000 addresses; from 60,000 fresh prefixes), with the
/// default capacities, is listed within 10 s of its start (counted from when it
/// answers, which is when it sends its heartbeat). It sends one heartbeat at
/// start and the next 300 s later: before, that one was dropped as busy (listed 0 times
/// in 3), and now a registration that finds no place gets a probe, which it answers.
#[test]
fn openarena_is_listed_within_10_s_during_a_registration_flood() {
    if !common::enabled("openarena_is_listed_within_10_s_during_a_registration_flood") {
        return;
    }
    for sources in [10_000u32, 60_000] {
        let dir = TempDir::new("master-q3-oa-flood");
        let m = master(&dir.0, "poll_interval_secs = 600");
        let flood = Flood::start(m.udp, 5000, sources);
        // the master saturated (registrations that find no place: dropped as busy, or
        // probed), and the flood's first pass over its prefixes (2 s for 10,000, 12 s for
        // 60,000) taking the reserve kept for new prefixes when OpenArena's heartbeat
        // comes (0.3 to 0.7 s after its start)
        let no_place = || {
            counter(&m, "ogp_master_registrations_total", "outcome=\"busy\"")
                + counter(&m, "ogp_master_registrations_total", "outcome=\"probed\"")
        };
        wait_for(
            "the flood to saturate the master",
            Duration::from_secs(10),
            || no_place() >= 200,
        );
        let started = Instant::now();
        let oa = OpenArena::start(&OpenArenaConfig {
            hostname: "Flooded OA".into(),
            master: Some(m.udp),
            ..OpenArenaConfig::default()
        });
        // its heartbeat goes out as its map is loaded, when it starts answering: the
        // 10 s count from then (a loaded machine can take seconds to start it)
        let answering = started.elapsed();
        let addr = oa.addr();
        let listed = wait_until(Duration::from_secs(10), || item(&m, addr).is_some())
            .map(|_| started.elapsed());
        let (sent, rate) = flood.stop();
        let no_place = no_place();
        eprintln!(
            "{sources} sources: {sent} forged uplinks ({rate:.0}/s), {no_place} found no \
             place; OpenArena answered {answering:?} after its start, listed {listed:?} \
             after it"
        );
        assert!(
            listed.is_some(),
            "OpenArena not listed within 10 s of answering ({sources} sources)"
        );
    }
}

/// Forged heartbeats: the master sends each forged source one `getinfo` (20 bytes, no
/// more than the 25- or 28-byte heartbeat) and lists nothing; the victims never answer,
/// and nothing more comes.
#[test]
fn forged_heartbeats_cost_the_victim_one_getinfo_no_larger() {
    let dir = TempDir::new("master-q3-forged");
    let m = master(&dir.0, "");
    let victims: Vec<UdpSocket> = (0..5)
        .map(|_| UdpSocket::bind("127.0.0.1:0").unwrap())
        .collect();
    let heartbeats: [&[u8]; 2] = [
        b"\xff\xff\xff\xffheartbeat DarkPlaces\n",
        b"\xff\xff\xff\xffheartbeat QuakeArena-1\n",
    ];
    for (i, v) in victims.iter().enumerate() {
        // as if forged: the victim's address, and the victim never answers
        v.send_to(heartbeats[i % 2], m.udp).unwrap();
    }
    wait_for(
        "the five verifications to fail",
        Duration::from_secs(30),
        || {
            counter(
                &m,
                "ogp_master_verifications_total",
                "protocol=\"quake3\",outcome=\"failed\"",
            ) >= 5
        },
    );
    for (i, v) in victims.iter().enumerate() {
        v.set_read_timeout(Some(Duration::from_millis(200)))
            .unwrap();
        let mut got = Vec::new();
        let mut buf = [0u8; 2048];
        while let Ok(n) = v.recv(&mut buf) {
            got.push(buf[..n].to_vec());
        }
        assert_eq!(got.len(), 1, "victim {i}: {got:?}");
        assert!(
            got[0].starts_with(b"\xff\xff\xff\xffgetinfo "),
            "{:?}",
            got[0]
        );
        assert!(
            got[0].len() <= heartbeats[i % 2].len(),
            "{} bytes",
            got[0].len()
        );
    }
    assert!(m.servers().is_empty());
}

/// A server whose `infoResponse` carries a wrong challenge or none is not verified;
/// one that echoes it is.
#[test]
fn a_wrong_or_missing_challenge_is_not_verified() {
    let dir = TempDir::new("master-q3-challenge");
    let m = master(&dir.0, "");
    // each on an address of its own: the master warns once per IP address
    let wrong = FakeDp::start_on("127.0.0.2", m.udp, "Xonotic", 3, Echo::Wrong);
    let missing = FakeDp::start_on("127.0.0.3", m.udp, "Xonotic", 3, Echo::Missing);
    let right = FakeDp::start(m.udp, "Xonotic", 3, Echo::Right);
    wait_for("two failed verifications", Duration::from_secs(30), || {
        counter(
            &m,
            "ogp_master_verifications_total",
            "protocol=\"quake3\",outcome=\"failed\"",
        ) >= 2
    });
    wait_for("the honest server listed", Duration::from_secs(30), || {
        item(&m, right.addr()).is_some()
    });
    assert!(item(&m, wrong.addr()).is_none());
    assert!(item(&m, missing.addr()).is_none());
    // the log says what happened to each: its answers were refused, and why (issue 36,
    // item 10: a wrong challenge was "timed out … look for an overlong field")
    for (fake, why) in [
        (&wrong, "wrong challenge"),
        (&missing, "no challenge echoed"),
    ] {
        let addr = fake.addr().to_string();
        let log = m.log_text();
        let line = log
            .lines()
            .find(|l| l.contains("WARN") && l.contains(&format!("{addr}:")))
            .unwrap_or_else(|| panic!("no warning for {addr}:\n{log}"));
        assert!(
            line.contains("not verified") && line.contains(why),
            "{line}"
        );
        assert!(
            !line.contains("timed out") && !line.contains("overlong"),
            "{line}"
        );
    }
    let (l, end) = getservers(m.udp, b"\xff\xff\xff\xffgetservers Xonotic 3");
    assert!(end);
    assert_eq!(l, vec![right.addr()]);
}

/// A `getservers` flood from one source: it is sent at most its byte budget (here 2,800
/// bytes a second, bursts of four seconds: each page is charged 1,400 bytes), and the
/// refusals are counted.
#[test]
fn a_getservers_flood_is_cut_by_the_per_source_budget() {
    let dir = TempDir::new("master-q3-flood");
    let per_source = 2_800u64;
    let m = master(&dir.0, &format!("list_bytes_per_second = {per_source}"));
    let fake = FakeDp::start(m.udp, "Xonotic", 3, Echo::Right);
    wait_for("the fake server listed", Duration::from_secs(30), || {
        item(&m, fake.addr()).is_some()
    });
    let sock = UdpSocket::bind("127.0.0.1:0").unwrap();
    sock.set_read_timeout(Some(Duration::from_millis(300)))
        .unwrap();
    let req = b"\xff\xff\xff\xffgetservers Xonotic 3 empty full";
    let t = Instant::now();
    for _ in 0..500 {
        sock.send_to(req, m.udp).unwrap();
    }
    let (mut pages, mut bytes) = (0u64, 0u64);
    let mut buf = [0u8; 2048];
    while let Ok(n) = sock.recv(&mut buf) {
        pages += 1;
        bytes += n as u64;
    }
    let secs = t.elapsed().as_secs_f64();
    // what the budget allows in `secs`, counted in whole 1,400-byte pages
    let allowed_pages = ((per_source as f64 * (4.0 + secs)) / 1400.0).floor() as u64;
    eprintln!(
        "500 requests in {secs:.2} s: {pages} pages, {bytes} bytes; budget {allowed_pages} pages"
    );
    assert!(
        pages >= 1 && pages <= allowed_pages,
        "{pages} pages > {allowed_pages}"
    );
    assert!(bytes <= per_source * (4 + secs.ceil() as u64));
    wait_for("the refusals counted", Duration::from_secs(10), || {
        counter(
            &m,
            "ogp_master_list_requests_total",
            "protocol=\"dpmaster\",outcome=\"rate_limited\"",
        ) >= 400
    });
}

/// Issue 36, item 5: the list budgets are the process's, whatever the number of `--udp`
/// addresses. A master on two addresses, with 2,800 bytes a second per source and 5,600
/// in all (bursts of four seconds); 16 sources and one victim send `getservers` and
/// Valve list requests to both addresses for 3 s. All the answers together stay within
/// the total (each page charged 1,400 or 1,392 bytes), and the victim's within its own
/// budget, across both sockets. Before, each socket had budgets of its own: twice both.
#[test]
fn list_budgets_hold_across_two_udp_addresses() {
    let dir = TempDir::new("master-two-sockets");
    let (per_source, total) = (2_800u64, 5_600u64);
    let db = format!("sqlite://{}", dir.0.join("master.db").display());
    let config = format!(
        "allow_private = true\ndb = \"{db}\"\nlist_bytes_per_second = {per_source}\n\
         list_total_bytes_per_second = {total}\n"
    );
    let m = Master::with_config(&dir.0, "master", &config, &["--udp", "127.0.0.1:0"]);
    let addrs = m.udp_addrs();
    assert_eq!(addrs.len(), 2, "{}", m.log_text());
    let bind = |ip: [u8; 4]| {
        let s = UdpSocket::bind((std::net::Ipv4Addr::from(ip), 0)).unwrap();
        s.set_nonblocking(true).unwrap();
        s
    };
    let victim = bind([127, 0, 9, 1]);
    let sources: Vec<UdpSocket> = (1..=16).map(|i| bind([127, 0, 10, i])).collect();
    let requests: [&[u8]; 2] = [
        b"\xff\xff\xff\xffgetservers 68 empty full",
        b"1\xff0.0.0.0:0\x00\x00",
    ];
    // (pages, bytes charged) of what a socket received
    let drain = |s: &UdpSocket, got: &mut (u64, u64)| {
        let mut buf = [0u8; 2048];
        while let Ok(n) = s.recv(&mut buf) {
            got.0 += 1;
            got.1 += if buf[..n].starts_with(b"\xff\xff\xff\xff\x66\x0a") {
                1_392
            } else {
                1_400
            };
        }
    };
    let mut victim_got = (0, 0);
    let mut others_got = (0, 0);
    let t = Instant::now();
    let mut round = 0usize;
    let mut sent = 0;
    // 1.5 s of the victim alone (its own budget is what stops it), then everyone for 3 s
    while t.elapsed() < Duration::from_millis(4500) {
        let senders = if t.elapsed() < Duration::from_millis(1500) {
            1
        } else {
            1 + sources.len()
        };
        for (i, s) in std::iter::once(&victim)
            .chain(&sources)
            .take(senders)
            .enumerate()
        {
            for a in &addrs {
                let _ = s.send_to(requests[(i + round) % 2], a);
                sent += 1;
            }
        }
        round += 1;
        std::thread::sleep(Duration::from_millis(20));
        drain(&victim, &mut victim_got);
        for s in &sources {
            drain(s, &mut others_got);
        }
    }
    std::thread::sleep(Duration::from_millis(300));
    drain(&victim, &mut victim_got);
    for s in &sources {
        drain(s, &mut others_got);
    }
    // every answer was charged by now
    let secs = t.elapsed().as_secs_f64();
    let all = victim_got.1 + others_got.1;
    let total_bound = (total as f64 * (4.0 + secs)) as u64;
    let victim_bound = (per_source as f64 * (4.0 + secs)) as u64;
    eprintln!(
        "{sent} list requests to two addresses in {secs:.2} s: {} pages, {all} bytes charged in \
         all (bound {total_bound}); the victim {} pages, {} bytes (bound {victim_bound})",
        victim_got.0 + others_got.0,
        victim_got.0,
        victim_got.1,
    );
    assert!(all <= total_bound, "{all} > {total_bound} bytes in all");
    assert!(
        victim_got.1 <= victim_bound,
        "the victim got {} > {victim_bound} bytes",
        victim_got.1
    );
    // and the budget was used: the flood is answered up to it, not silenced
    assert!(all >= total_bound / 2, "{all} bytes");
}

/// What a hostile master sends for the request with this number (0, 1, …).
type Pages = fn(usize) -> Box<dyn Iterator<Item = Vec<u8>>>;

/// A hostile dpmaster on a socket of its own, answering each request with the datagrams
/// `pages` gives, one every 200 µs (so that the client's socket buffer keeps up), until
/// stopped.
fn hostile_master(pages: Pages) -> (SocketAddr, Arc<AtomicBool>) {
    let sock = UdpSocket::bind("127.0.0.1:0").unwrap();
    sock.set_read_timeout(Some(Duration::from_millis(100)))
        .unwrap();
    let addr = sock.local_addr().unwrap();
    let stop = Arc::new(AtomicBool::new(false));
    let st = stop.clone();
    std::thread::spawn(move || {
        let mut buf = [0u8; 2048];
        let mut asked = 0;
        while !st.load(Ordering::Relaxed) {
            let Ok((_, from)) = sock.recv_from(&mut buf) else {
                continue;
            };
            for p in pages(asked) {
                if st.load(Ordering::Relaxed) || sock.send_to(&p, from).is_err() {
                    break;
                }
                std::thread::sleep(Duration::from_micros(200));
            }
            asked += 1;
        }
    });
    (addr, stop)
}

fn page(from: u32, n: u32, end: bool) -> Vec<u8> {
    let servers: Vec<SocketAddr> = (from..from + n)
        .map(|i| SocketAddr::from((std::net::Ipv4Addr::from(0x0a00_0000 + i), 27960)))
        .collect();
    let mut d = Vec::new();
    ogp_proto::master::dpmaster::encode_page(true, &servers, end, &mut d);
    d
}

/// `ogp list --dp` against hostile masters: garbage, pages without the end marker,
/// endless pages; each ends with a clear error (exit 1) within its bounds.
#[test]
fn hostile_dp_masters_end_ogp_list_with_a_clear_error() {
    let cases: [(&str, Pages, &str); 3] = [
        (
            "garbage",
            |_| {
                Box::new(
                    [
                        b"\xff\xff\xff\xffgetserversResponse?junk".to_vec(),
                        vec![0; 50],
                    ]
                    .into_iter(),
                )
            },
            "no answer",
        ),
        (
            "no EOT",
            |_| Box::new([page(0, 10, false), page(10, 10, false)].into_iter()),
            "without its end marker",
        ),
        (
            "endless pages",
            |_| Box::new((0..u32::MAX / 200).map(|i| page(i * 100, 100, false))),
            "more than 100000 servers",
        ),
    ];
    for (what, pages, want) in cases {
        let (addr, stop) = hostile_master(pages);
        let ran = run(
            Command::new(BIN).args([
                "list",
                &addr.to_string(),
                "--dp",
                "Quake3Arena",
                "71",
                "--page-timeout",
                "500",
                "--timeout",
                "20000",
            ]),
            Duration::from_secs(60),
        );
        stop.store(true, Ordering::Relaxed);
        assert_eq!(ran.code, Some(1), "{what}: {}", ran.stderr);
        assert!(ran.stderr.contains(want), "{what}: {}", ran.stderr);
        assert!(ran.took < Duration::from_secs(20), "{what}: {:?}", ran.took);
    }
}
