//! `ogp list` over the lists on the web (issue 39): Minetest's, open.mp's, DDNet's and
//! Steam's Web API `GetServerList`, served on loopback over http:// and https:// (a
//! self-signed certificate made here with rcgen, so `--insecure`; without it the
//! certificate is refused). No test reaches the internet: the bodies are constructed
//! from the documented formats (ogp-proto's `master::weblist` docs: minetest/serverlist's
//! announce fields, open.mp's `api.open.mp/servers` fields, Steam's
//! `CGameServers_GetServerList_Response`), with addresses of the documentation ranges.
//! Hostile lists (oversized, endless, a slow drip, deep JSON, lying counts) end with one
//! clear error each; a Steam key is never printed, not even with -vv.

use crate::common;

use std::io::{Read, Write};
use std::net::{TcpListener, TcpStream};
use std::process::Command;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use common::*;

/// Bounds a failure only: every case ends within a few seconds when it works.
const LIMIT: Duration = Duration::from_secs(30);

/// A fake key: 32 hex digits, as Steam's.
const KEY: &str = "0123456789ABCDEF0123456789ABCDEF";

/// What a connection gets: a status and a body, or a writer of its own.
#[derive(Clone)]
enum Answer {
    Body(&'static str, Arc<Vec<u8>>),
    /// Writes a head without a length, then calls the closure until it fails.
    Stream(fn(&mut dyn Write) -> std::io::Result<()>),
}

/// A loopback HTTP (or, with `tls`, HTTPS) server answering each connection with
/// `answer`, the request heads kept in `requests`. Runs until the test ends. (The
/// HTTPS game servers' tests serve their documents with it too.)
pub(crate) struct Web {
    pub(crate) port: u16,
    pub(crate) requests: Arc<Mutex<Vec<String>>>,
}

fn tls_config() -> Arc<rustls::ServerConfig> {
    let c =
        rcgen::generate_simple_self_signed(vec!["localhost".into(), "127.0.0.1".into()]).unwrap();
    let key = rustls::pki_types::PrivateKeyDer::Pkcs8(c.key_pair.serialize_der().into());
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    Arc::new(
        rustls::ServerConfig::builder_with_provider(provider)
            .with_safe_default_protocol_versions()
            .unwrap()
            .with_no_client_auth()
            .with_single_cert(vec![c.cert.der().clone()], key)
            .unwrap(),
    )
}

fn serve(conn: &mut dyn ReadWrite, answer: &Answer) -> Option<String> {
    let mut head = Vec::new();
    let mut b = [0u8; 1];
    while !head.ends_with(b"\r\n\r\n") && head.len() < 16384 {
        match conn.read(&mut b) {
            Ok(1) => head.push(b[0]),
            _ => return None,
        }
    }
    let head = String::from_utf8_lossy(&head).into_owned();
    match answer {
        Answer::Body(status, body) => {
            let _ = write!(
                conn,
                "HTTP/1.1 {status}\r\nContent-Type: application/json\r\nContent-Length: {}\r\nConnection: close\r\n\r\n",
                body.len()
            );
            let _ = conn.write_all(body);
        }
        Answer::Stream(f) => {
            let _ = write!(
                conn,
                "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nConnection: close\r\n\r\n"
            );
            while f(conn).is_ok() {}
        }
    }
    let _ = conn.flush();
    Some(head)
}

trait ReadWrite: Read + Write {}
impl<T: Read + Write> ReadWrite for T {}

impl Web {
    fn start(tls: bool, answer: Answer) -> Self {
        let l = TcpListener::bind("127.0.0.1:0").unwrap();
        let port = l.local_addr().unwrap().port();
        let requests = Arc::new(Mutex::new(Vec::new()));
        let kept = Arc::clone(&requests);
        let config = tls.then(tls_config);
        std::thread::spawn(move || {
            for conn in l.incoming() {
                let Ok(tcp) = conn else { return };
                let _ = tcp.set_read_timeout(Some(Duration::from_secs(5)));
                let _ = tcp.set_write_timeout(Some(Duration::from_secs(5)));
                let (answer, kept, config) = (answer.clone(), Arc::clone(&kept), config.clone());
                std::thread::spawn(move || {
                    let head = match config {
                        Some(c) => {
                            let Ok(s) = rustls::ServerConnection::new(c) else {
                                return;
                            };
                            serve(&mut rustls::StreamOwned::new(s, tcp), &answer)
                        }
                        None => serve(&mut { tcp }, &answer),
                    };
                    if let Some(h) = head {
                        kept.lock().unwrap().push(h);
                    }
                });
            }
        });
        Self { port, requests }
    }

    pub(crate) fn ok(tls: bool, body: &str) -> Self {
        Self::start(
            tls,
            Answer::Body("200 OK", Arc::new(body.as_bytes().to_vec())),
        )
    }

    fn url(&self, tls: bool, path: &str) -> String {
        let scheme = if tls { "https" } else { "http" };
        format!("{scheme}://127.0.0.1:{}{path}", self.port)
    }
}

/// `ogp list ARGS` with `env` set (and OGP_STEAM_KEY removed unless set there).
fn list(args: &[&str], env: &[(&str, &str)]) -> Ran {
    let mut cmd = Command::new(ogp_bin());
    cmd.arg("list")
        .args(args)
        .env("NO_COLOR", "1")
        .env_remove("OGP_LOG")
        .env_remove("RUST_LOG")
        .env_remove("OGP_STEAM_KEY");
    for (k, v) in env {
        cmd.env(k, v);
    }
    run_with_input(&mut cmd, None, LIMIT)
}

fn lines(r: &Ran) -> Vec<String> {
    String::from_utf8_lossy(&r.stdout)
        .lines()
        .map(str::to_owned)
        .collect()
}

/// Exit 1 with nothing listed and one error line that says `what`.
fn one_error(r: &Ran, what: &str) {
    assert_eq!(r.code, Some(1), "{}", r.describe());
    assert!(r.stdout.is_empty(), "{}", r.describe());
    let errors: Vec<_> = r
        .stderr
        .lines()
        .filter(|l| l.starts_with("ogp: "))
        .collect();
    assert_eq!(errors.len(), 1, "{}", r.describe());
    assert!(errors[0].contains(what), "{what}: {}", r.describe());
}

// Minetest's list: the fields a server announces (minetest/serverlist), constructed.
const MINETEST: &str = r#"{"total":{"servers":3,"clients":7},"total_max":{"servers":40,"clients":200},"list":[
 {"address":"mt.example.org","ip":"203.0.113.7","port":30000,"name":"Example Survival","description":"a test",
  "version":"5.9.1","proto_min":37,"proto_max":46,"url":"https://example.org","creative":false,"damage":true,
  "password":false,"pvp":true,"uptime":3600,"game_time":100,"clients":7,"clients_max":32,
  "clients_list":["alice","bob"],"gameid":"minetest","dedicated":true,"rollback":false,"mapgen":"v7",
  "privs":"shout","can_see_far_names":false,"mods":["default"],"lag":0.1,"ping":0.05},
 {"address":"2001:db8::9","port":30001,"name":"v6 only","clients":0,"clients_max":10,"gameid":"mineclone2"},
 {"address":"host-only.example.org","port":30000,"name":"no ip"}
]}"#;

// open.mp's list: the fields of api.open.mp/servers, constructed.
const OPENMP: &str = r#"[
 {"ip":"203.0.113.9:7777","hn":"Example Freeroam","pc":12,"pm":100,"gm":"Freeroam","la":"English","pa":false,"vn":"omp 1.3.1","omp":true,"pr":false},
 {"ip":"198.51.100.3:7778","hn":"Example RP","pc":0,"pm":50,"gm":"RP","la":"Deutsch","pa":true,"vn":"0.3.7-R2","omp":false,"pr":true},
 {"ip":"0.0.0.0:7777","hn":"no server"}
]"#;

// Steam's GetServerList answer (CGameServers_GetServerList_Response in JSON), constructed.
const STEAM: &str = r#"{"response":{"servers":[
 {"addr":"203.0.113.20:27015","gameport":27015,"steamid":"90123456789012345","name":"Example 2Fort","appid":440,
  "gamedir":"tf","version":"9415573","product":"tf","region":255,"players":20,"max_players":24,"bots":0,
  "map":"ctf_2fort","secure":true,"dedicated":true,"os":"l","gametype":"ctf,increased_maxplayers"},
 {"addr":"198.51.100.21:27016","gameport":27015,"name":"Example Badlands","appid":440,"gamedir":"tf",
  "players":0,"max_players":24,"bots":0,"map":"cp_badlands","secure":true,"dedicated":true,"os":"w"}
]}}"#;

#[test]
fn minetest_list_over_http() {
    let web = Web::ok(false, MINETEST);
    let r = list(&["--minetest", &web.url(false, "/list")], &[]);
    assert_eq!(r.code, Some(0), "{}", r.describe());
    assert_eq!(
        lines(&r),
        ["minetest 203.0.113.7:30000", "minetest [2001:db8::9]:30001"]
    );
    // the host name without an address is skipped, with a warning
    assert!(
        r.stderr.contains("a host name, not an address"),
        "{}",
        r.describe()
    );
    let r = list(&["--minetest", "--json", &web.url(false, "/list")], &[]);
    let first: serde_json::Value = serde_json::from_str(&lines(&r)[0]).unwrap();
    assert_eq!(first["name"], "Example Survival");
    assert_eq!(first["game"], "minetest");
    assert_eq!(
        (first["players"].as_u64(), first["max_players"].as_u64()),
        (Some(7), Some(32))
    );
}

#[test]
fn open_mp_and_ddnet_lists_over_https() {
    let web = Web::ok(true, OPENMP);
    let url = web.url(true, "/servers");
    // a self-signed certificate is refused, saying how to take it
    let r = list(&["--openmp", &url], &[]);
    one_error(&r, "certificate");
    assert!(r.stderr.contains("--insecure"), "{}", r.describe());
    let r = list(&["--openmp", "--insecure", &url], &[]);
    assert_eq!(r.code, Some(0), "{}", r.describe());
    assert_eq!(
        lines(&r),
        ["samp 203.0.113.9:7777", "samp 198.51.100.3:7778"]
    );
    assert!(r.stderr.contains("not checked"), "{}", r.describe());
    let r = list(
        &["--openmp", "--insecure", "--limit", "1", "--json", &url],
        &[],
    );
    let l = lines(&r);
    assert_eq!(l.len(), 1, "{}", r.describe());
    let v: serde_json::Value = serde_json::from_str(&l[0]).unwrap();
    assert_eq!(
        (v["name"].as_str(), v["password"].as_bool()),
        (Some("Example Freeroam"), Some(false))
    );

    let ddnet = r#"{"servers":[{"addresses":["tw-0.6+udp://198.51.100.7:8303","tw-0.7+udp://198.51.100.7:8303"],
        "location":"eu:de","info":{"name":"DDNet GER1","map":{"name":"Tutorial"}}}]}"#;
    let web = Web::ok(true, ddnet);
    let r = list(
        &[
            "--ddnet",
            "--insecure",
            &web.url(true, "/ddnet/15/servers.json"),
        ],
        &[],
    );
    assert_eq!(r.code, Some(0), "{}", r.describe());
    assert_eq!(
        lines(&r),
        [
            "teeworlds 198.51.100.7:8303",
            "teeworlds7 198.51.100.7:8303"
        ]
    );
}

#[test]
fn steam_key_from_the_environment_or_a_file_never_shown() {
    let web = Web::ok(true, STEAM);
    let base = web.url(true, "");
    let env = [("OGP_STEAM_KEY", KEY)];
    let r = list(
        &[
            "-vv",
            "--steam",
            "--insecure",
            "--filter",
            "\\appid\\440",
            "--limit",
            "5",
            &base,
        ],
        &env,
    );
    assert_eq!(r.code, Some(0), "{}", r.describe());
    assert_eq!(
        lines(&r),
        ["a2s 203.0.113.20:27015", "a2s 198.51.100.21:27016"]
    );
    assert!(!r.stderr.contains(KEY), "the key in -vv: {}", r.stderr);
    // the request: GetServerList with the key, the filter and the limit
    let req = web.requests.lock().unwrap().join("\n");
    assert!(
        req.contains("GET /IGameServersService/GetServerList/v1/?"),
        "{req}"
    );
    assert!(req.contains(&format!("key={KEY}")), "{req}");
    assert!(req.contains("limit=5"), "{req}");
    assert!(req.contains("filter=%5Cappid%5C440"), "{req}");

    // from a file
    let dir = TempDir::new("steam-key");
    let file = dir.0.join("key");
    std::fs::write(&file, format!("{KEY}\n")).unwrap();
    let r = list(
        &[
            "--steam",
            "--insecure",
            "--steam-key-file",
            file.to_str().unwrap(),
            &base,
        ],
        &[],
    );
    assert_eq!(r.code, Some(0), "{}", r.describe());
    assert_eq!(lines(&r).len(), 2);

    // no key: said, nothing asked
    let before = web.requests.lock().unwrap().len();
    let r = list(&["--steam", "--insecure", &base], &[]);
    one_error(&r, "OGP_STEAM_KEY");
    assert_eq!(web.requests.lock().unwrap().len(), before);

    // a refused key (403), a redirect and a broken answer: errors without the key
    for answer in [
        Answer::Body(
            "403 Forbidden",
            Arc::new(b"<html>Forbidden</html>".to_vec()),
        ),
        Answer::Body("302 Found", Arc::new(Vec::new())),
        Answer::Body(
            "200 OK",
            Arc::new(format!("{{\"response\":{{\"servers\":[{{\"addr\":\"{KEY}\"").into_bytes()),
        ),
    ] {
        let bad = Web::start(false, answer);
        let r = list(&["-vv", "--steam", &bad.url(false, "/")], &env);
        assert_eq!(r.code, Some(1), "{}", r.describe());
        assert!(!r.stderr.contains(KEY), "the key in an error: {}", r.stderr);
    }
}

#[test]
fn hostile_web_lists_end_with_one_error_each() {
    // oversized: a 33 MB document (over 32 MiB), over https
    let mut big = b"[".to_vec();
    big.resize(33 << 20, b' ');
    let web = Web::start(true, Answer::Body("200 OK", Arc::new(big)));
    let r = list(&["--openmp", "--insecure", &web.url(true, "/")], &[]);
    one_error(&r, "over our limit");

    // endless: a body without a length that never ends is cut at the limit
    let web = Web::start(false, Answer::Stream(|w| w.write_all(&[b' '; 65536])));
    let r = list(&["--minetest", &web.url(false, "/")], &[]);
    one_error(&r, "over our limit");

    // a slow drip: a byte every 100 ms ends by five page timeouts
    let web = Web::start(
        false,
        Answer::Stream(|w| {
            std::thread::sleep(Duration::from_millis(100));
            w.write_all(b" ")?;
            w.flush()
        }),
    );
    let r = list(
        &["--minetest", "--page-timeout", "200", &web.url(false, "/")],
        &[],
    );
    assert!(r.took < Duration::from_secs(5), "{}", r.describe());
    one_error(&r, "imeout");

    // deep JSON
    let deep = format!(
        r#"{{"list":[{{"name":{}1{}}}]}}"#,
        "[".repeat(5000),
        "]".repeat(5000)
    );
    let web = Web::ok(false, &deep);
    let r = list(&["--minetest", &web.url(false, "/")], &[]);
    one_error(&r, "recursion limit");

    // lying: more servers than a list may have
    let many = format!(
        "[{}]",
        vec![r#"{"ip":"203.0.113.9:7777"}"#; 20_001].join(",")
    );
    let web = Web::ok(false, &many);
    let r = list(&["--openmp", &web.url(false, "/")], &[]);
    one_error(&r, "at most 20000");

    // lying counts and addresses: left out, skipped, never a server
    let web = Web::ok(
        false,
        r#"[{"ip":"203.0.113.9:7777","pc":-5,"pm":1e99,"hn":7},{"ip":"203.0.113.9:99999"},{"ip":"203.0.113.9:7777"}]"#,
    );
    let r = list(&["--openmp", "--json", &web.url(false, "/")], &[]);
    assert_eq!(r.code, Some(0), "{}", r.describe());
    let l = lines(&r);
    assert_eq!(l.len(), 1, "{}", r.describe());
    let v: serde_json::Value = serde_json::from_str(&l[0]).unwrap();
    assert!(
        v.get("players").is_none() && v.get("max_players").is_none() && v.get("name").is_none()
    );
    assert!(
        r.stderr.contains("not IP:PORT") && r.stderr.contains("listed twice"),
        "{}",
        r.describe()
    );

    // the wrong shape
    let web = Web::ok(false, r#"{"servers":[]}"#);
    let r = list(&["--openmp", &web.url(false, "/")], &[]);
    one_error(&r, "not open.mp's server list");
}

#[test]
fn https_to_the_api_and_plain_urls_are_checked() {
    let r = list(&["--minetest", "127.0.0.1:1"], &[]);
    one_error(&r, "http:// or https://");
    let r = list(&["ftp://127.0.0.1/"], &[]);
    one_error(&r, "only http:// and https://");
    // nothing listens: a connection error, at once
    let free = TcpListener::bind("127.0.0.1:0").unwrap();
    let port = free.local_addr().unwrap().port();
    drop(free);
    let r = list(&["--minetest", &format!("https://127.0.0.1:{port}/")], &[]);
    assert_eq!(r.code, Some(1), "{}", r.describe());
    let _ = TcpStream::connect(("127.0.0.1", port));
}
