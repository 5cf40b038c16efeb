//! The GBXRemote 2 client as a stream state machine on the shared core: no I/O, time
//! passed in.
//!
//! It reads the handshake (`GBXRemote 2`; `GBXRemote 1`, without handles, is refused),
//! then makes its calls one at a time, each after the reply to the previous:
//! `Authenticate(login, password)` when [`Credentials`] are given (a fault is
//! [`Rejection::AuthFailed`]), `GetServerOptions` (a fault is a rejection with the
//! server's message: without a login most servers refuse it), `GetCurrentChallengeInfo`
//! (Trackmania Forever; on a fault `GetCurrentMapInfo`, ManiaPlanet's name),
//! `GetCurrentGameInfo`, `GetVersion` and `GetPlayerList(MAX_PLAYERS, 0)` (a fault of
//! these leaves their part out, with a warning).
//!
//! Bounds: a frame of at most [`MAX_FRAME`] bytes of XML (a larger length is an error at
//! once), the XML reader's depth and value caps, at most [`MAX_CALLBACKS`] callbacks
//! skipped, at most [`MAX_PLAYERS`] players. A server that drips its bytes or stays
//! silent meets the core's read and total timers.

use std::fmt;
use std::time::Instant;

use super::wire::{
    call_frame, frame, handshake, to_status, Replies, HANDSHAKE, HEADER, MAX_FRAME, REPLY_HANDLE,
};
use super::xmlrpc::{escape, method_call, parse_response, Param, Response, Value};
use crate::client_core::{Event, Rejection, Timing};
use crate::client_stream::Stream;
use crate::error::DecodeError;
use crate::http::Secret;
use crate::protocol::Protocol;

/// The XML-RPC port of Nadeo's dedicated servers.
pub const DEFAULT_PORT: u16 = 5000;
/// The game port beside the default XML-RPC port.
pub const DEFAULT_GAME_PORT: u16 = 2350;
/// Players asked for and kept.
pub const MAX_PLAYERS: usize = crate::bounded::MAX_LIST_ENTRIES;
/// Callbacks skipped before the query fails.
pub const MAX_CALLBACKS: usize = 256;

/// A login of the server's XML-RPC (`User`, `Admin`, `SuperAdmin` or another it knows).
/// Its `Debug` hides the password; it is never logged.
#[derive(Clone, PartialEq, Eq)]
pub struct Credentials {
    login: String,
    password: Secret,
}

impl Credentials {
    /// A login as `login` with `password`.
    pub fn new(login: impl Into<String>, password: impl Into<String>) -> Self {
        Self {
            login: login.into(),
            password: Secret(password.into()),
        }
    }

    /// The password as the user gave it and as the call carries it (escaped): what a
    /// dump of the sent bytes must blank out.
    pub fn password_forms(&self) -> [String; 2] {
        [self.password.0.clone(), escape(&self.password.0)]
    }
}

impl fmt::Debug for Credentials {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "Credentials({:?}, ***)", self.login)
    }
}

/// Nadeo's own settings of one query.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
#[non_exhaustive]
pub struct QueryOptions {
    /// Authenticate first (most servers answer nothing without a login).
    pub credentials: Option<Credentials>,
}

/// What a Nadeo answer says beyond the status: the replies as sent.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub struct Details {
    /// The replies.
    pub replies: Replies,
    /// Players the list had (more than those kept when over the cap).
    pub players_listed: Option<usize>,
    /// Callbacks skipped.
    pub callbacks: usize,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Step {
    Handshake,
    Authenticate,
    ServerOptions,
    ChallengeInfo,
    MapInfo,
    GameInfo,
    Version,
    PlayerList,
}

impl Step {
    const fn method(self) -> &'static str {
        match self {
            Self::Handshake => "the GBXRemote handshake",
            Self::Authenticate => "Authenticate",
            Self::ServerOptions => "GetServerOptions",
            Self::ChallengeInfo => "GetCurrentChallengeInfo",
            Self::MapInfo => "GetCurrentMapInfo",
            Self::GameInfo => "GetCurrentGameInfo",
            Self::Version => "GetVersion",
            Self::PlayerList => "GetPlayerList",
        }
    }
}

/// One GBXRemote query of one server.
#[derive(Debug, Clone)]
pub struct QueryMachine {
    s: Stream<Details>,
    opts: QueryOptions,
    step: Step,
    handle: u32,
    replies: Replies,
    players_listed: Option<usize>,
    callbacks: usize,
    warnings: Vec<String>,
}

impl QueryMachine {
    /// A query starting at `now`.
    pub fn new(opts: QueryOptions, timing: Timing, now: Instant) -> Self {
        let mut s = Stream::new(Protocol::Nadeo, &timing, now, HEADER + MAX_FRAME);
        s.wait_for(now, Step::Handshake.method());
        Self {
            s,
            opts,
            step: Step::Handshake,
            handle: REPLY_HANDLE,
            replies: Replies::default(),
            players_listed: None,
            callbacks: 0,
            warnings: Vec::new(),
        }
    }

    fn call(&mut self, now: Instant, step: Step) {
        self.step = step;
        let players = i32::try_from(MAX_PLAYERS).unwrap_or(i32::MAX);
        let xml = match (step, &self.opts.credentials) {
            (Step::Authenticate, Some(c)) => method_call(
                step.method(),
                &[Param::Str(&c.login), Param::Str(&c.password.0)],
            ),
            (Step::Authenticate, None) => return self.call(now, Step::ServerOptions),
            (Step::PlayerList, _) => {
                method_call(step.method(), &[Param::Int(players), Param::Int(0)])
            }
            (Step::Handshake, _) => return,
            _ => method_call(step.method(), &[]),
        };
        self.handle = self.handle.wrapping_add(1).max(REPLY_HANDLE);
        let mut out = Vec::new();
        call_frame(self.handle, &xml, &mut out);
        self.s.write(now, &out, step.method(), step.method());
    }

    fn parse(&mut self, now: Instant) {
        while !self.s.is_done() {
            let r = self.s.input();
            let at = r.offset();
            if self.step == Step::Handshake {
                let (text, n) = match handshake(&r) {
                    Ok(Some(h)) => h,
                    Ok(None) => return,
                    Err(e) => return self.s.x.fail_malformed(e),
                };
                if text != HANDSHAKE {
                    let why = if text.starts_with(b"GBXRemote ") {
                        "not GBXRemote 2 (GBXRemote 1 has no handles: not read)"
                    } else {
                        "not GBXRemote: not a Nadeo server's XML-RPC"
                    };
                    return self.s.x.fail_malformed(DecodeError::invalid(
                        at.saturating_add(4),
                        "Handshake",
                        why,
                    ));
                }
                self.s.consume(n);
                self.s.x.event(Event::Note("GBXRemote 2"));
                self.s.x.ping(now);
                self.call(now, Step::Authenticate);
                continue;
            }
            let (len, handle) = match frame(&r) {
                Ok(Some(f)) => f,
                Ok(None) => return,
                Err(e) => return self.s.x.fail_malformed(e),
            };
            let size = HEADER.saturating_add(len);
            if handle < REPLY_HANDLE {
                self.s.consume(size);
                self.callbacks = self.callbacks.saturating_add(1);
                if self.callbacks > MAX_CALLBACKS {
                    return self.s.x.fail_malformed(DecodeError::invalid(
                        at,
                        "Callback",
                        "more than 256 callbacks before the reply",
                    ));
                }
                continue;
            }
            if handle != self.handle {
                return self.s.x.fail_malformed(DecodeError::invalid(
                    at.saturating_add(4),
                    "Handle",
                    "a reply to a call we did not make",
                ));
            }
            let parsed = parse_response(
                r.peek_rest().get(HEADER..size).unwrap_or_default(),
                at.saturating_add(HEADER),
            );
            self.s.took_reply(size, self.step.method());
            match parsed {
                Err(e) => return self.s.x.fail_malformed(e),
                Ok(reply) => self.answered(now, reply),
            }
        }
    }

    fn answered(&mut self, now: Instant, reply: Response) {
        let step = self.step;
        let fault = match reply {
            Response::Ok(v) => {
                self.keep(step, v);
                None
            }
            Response::Fault { code, message } => {
                Some((code, message.chars().take(120).collect::<String>()))
            }
        };
        match (step, fault) {
            (Step::Authenticate, Some(_)) => self.s.x.reject(Rejection::AuthFailed),
            (Step::ServerOptions, Some((code, msg))) => self.s.x.reject(Rejection::Error {
                code: u32::try_from(code.unsigned_abs()).unwrap_or(u32::MAX),
                meaning: format!("GetServerOptions: {msg}"),
            }),
            (Step::ChallengeInfo, Some(_)) => self.call(now, Step::MapInfo),
            (_, fault) => {
                if let Some((code, msg)) = fault {
                    self.warnings
                        .push(format!("{}: fault {code} ({msg})", step.method()));
                }
                match step {
                    Step::Authenticate => self.call(now, Step::ServerOptions),
                    Step::ServerOptions => self.call(now, Step::ChallengeInfo),
                    Step::ChallengeInfo | Step::MapInfo => self.call(now, Step::GameInfo),
                    Step::GameInfo => self.call(now, Step::Version),
                    Step::Version => self.call(now, Step::PlayerList),
                    Step::PlayerList | Step::Handshake => self.done(now),
                }
            }
        }
    }

    fn keep(&mut self, step: Step, v: Value) {
        let r = &mut self.replies;
        match step {
            Step::ServerOptions => r.server_options = Some(v),
            Step::ChallengeInfo | Step::MapInfo => r.map_info = Some(v),
            Step::GameInfo => r.game_info = Some(v),
            Step::Version => r.version = Some(v),
            Step::PlayerList => {
                let mut list = match v {
                    Value::Array(a) => a,
                    _ => Vec::new(),
                };
                self.players_listed = Some(list.len());
                list.truncate(MAX_PLAYERS);
                r.players = Some(list);
            }
            Step::Handshake | Step::Authenticate => {}
        }
    }

    fn done(&mut self, now: Instant) {
        if self.callbacks > 0 {
            self.s.x.event(Event::Note("callbacks skipped"));
        }
        let replies = std::mem::take(&mut self.replies);
        let status = to_status(&replies);
        let details = Details {
            replies,
            players_listed: self.players_listed,
            callbacks: self.callbacks,
        };
        let warnings = std::mem::take(&mut self.warnings);
        self.s.finish(now, status, details, &warnings);
    }

    /// The connection is up: the server speaks first.
    fn connected(&mut self, now: Instant) {
        self.s.open_awaiting(now, Step::Handshake.method());
    }

    /// What a close now truncates.
    fn awaited(&self) -> &'static str {
        self.step.method()
    }
}

crate::client_stream::stream_driver!(QueryMachine, Details);

crate::client_core::start_query!(QueryOptions, no_id);

/// Test support: a server's side of a conversation, answering each call by its method.
#[cfg(test)]
pub(crate) mod tests {
    use crate::client_core::{QueryDriver, StreamEvent};
    use crate::client_stream::testing::{connect, drip_to_the_end};
    use crate::reader::Reader;

    use super::*;

    pub(crate) fn greeting() -> Vec<u8> {
        let mut h = 11u32.to_le_bytes().to_vec();
        h.extend_from_slice(HANDSHAKE);
        h
    }

    fn ok(v: &str) -> String {
        format!("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<methodResponse>\n<params>\n<param><value>{v}</value></param>\n</params>\n</methodResponse>")
    }

    fn member(k: &str, v: &str) -> String {
        format!("<member><name>{k}</name><value>{v}</value></member>")
    }

    /// The reply of a Trackmania Forever server to `method`.
    pub(crate) fn reply(method: &str) -> String {
        match method {
            "Authenticate" => ok("<boolean>1</boolean>"),
            "GetServerOptions" => ok(&format!(
                "<struct>{}{}{}{}</struct>",
                member("Name", "<string>$fffogp $f00TM</string>"),
                member("Password", "<string></string>"),
                member("CurrentMaxPlayers", "<i4>32</i4>"),
                member("CurrentMaxSpectators", "<i4>8</i4>")
            )),
            "GetCurrentChallengeInfo" => ok(&format!(
                "<struct>{}{}</struct>",
                member("Name", "<string>$oA01-Race</string>"),
                member("Environnement", "<string>Stadium</string>")
            )),
            "GetCurrentGameInfo" => ok(&format!(
                "<struct>{}{}</struct>",
                member("GameMode", "<i4>1</i4>"),
                member("NbChallenge", "<i4>25</i4>")
            )),
            "GetVersion" => ok(&format!(
                "<struct>{}{}</struct>",
                member("Name", "<string>TmForever</string>"),
                member("Version", "<string>2.11.26</string>")
            )),
            "GetPlayerList" => ok(&format!(
                "<array><data><value><struct>{}{}{}</struct></value><value><struct>{}</struct></value></data></array>",
                member("Login", "<string>alice</string>"),
                member("NickName", "<string>$f00Alice</string>"),
                member("TeamId", "<i4>-1</i4>"),
                member("Name", "<string>bob</string>")
            )),
            _ => "<methodResponse><fault><value><struct><member><name>faultCode</name><value><int>-1000</int></value></member><member><name>faultString</name><value><string>Unknown method.</string></value></member></struct></value></fault></methodResponse>".into(),
        }
    }

    /// The method and handle of a call frame.
    pub(crate) fn call_of(frame: &[u8]) -> (String, u32) {
        let (len, handle) = super::frame(&Reader::new(frame)).unwrap().unwrap();
        let xml = String::from_utf8_lossy(&frame[HEADER..HEADER + len]);
        let m = xml
            .split("<methodName>")
            .nth(1)
            .and_then(|r| r.split("</methodName>").next())
            .unwrap()
            .to_owned();
        (m, handle)
    }

    fn framed(handle: u32, xml: &str) -> Vec<u8> {
        let mut f = Vec::new();
        call_frame(handle, xml, &mut f);
        f
    }

    /// Drives a whole conversation; `answer` gives the reply frames to each call.
    fn converse(
        opts: QueryOptions,
        mut answer: impl FnMut(&str, u32) -> Vec<u8>,
    ) -> (QueryMachine, Vec<String>) {
        let t0 = Instant::now();
        let mut m = QueryMachine::new(opts, Timing::default(), t0);
        assert!(connect(&mut m, t0, DEFAULT_PORT).is_empty());
        m.handle_stream(t0, StreamEvent::Received(&greeting()));
        let mut calls = Vec::new();
        let mut out = Vec::new();
        for _ in 0..20 {
            if !m.poll_transmit_into(t0, &mut out) {
                break;
            }
            let (method, handle) = call_of(&out);
            calls.push(method.clone());
            let bytes = answer(&method, handle);
            for chunk in bytes.chunks(7) {
                m.handle_stream(t0, StreamEvent::Received(chunk));
            }
        }
        (m, calls)
    }

    #[test]
    fn a_whole_query_with_a_login() {
        let opts = QueryOptions {
            credentials: Some(Credentials::new("User", "p<w")),
        };
        let (mut m, calls) = converse(opts, |method, h| framed(h, &reply(method)));
        assert_eq!(
            calls,
            [
                "Authenticate",
                "GetServerOptions",
                "GetCurrentChallengeInfo",
                "GetCurrentGameInfo",
                "GetVersion",
                "GetPlayerList"
            ]
        );
        let a = m.take_result().unwrap().unwrap();
        let s = &a.status;
        assert_eq!(s.host_name.as_deref(), Some("ogp TM"));
        assert_eq!(s.host_name_raw.as_deref(), Some("$fffogp $f00TM"));
        assert_eq!(s.map.as_ref().map(|m| m.name.as_str()), Some("A01-Race"));
        assert_eq!(s.game_mode.as_deref(), Some("Time Attack"));
        assert_eq!(s.game_name.as_deref(), Some("TmForever"));
        assert_eq!(
            (s.player_count, s.slot_max, s.password),
            (Some(2), Some(32), Some(false))
        );
        let names: Vec<_> = s
            .players
            .clone()
            .unwrap()
            .into_iter()
            .filter_map(|p| p.name)
            .collect();
        assert_eq!(names, ["Alice", "bob"]);
        assert!(format!("{:?}", m).contains("***"));
        assert!(!format!("{:?}", m).contains("p<w"));
    }

    #[test]
    fn maniaplanet_callbacks_and_faults() {
        // No login; the challenge call faults (ManiaPlanet), callbacks come first.
        let (mut m, calls) = converse(QueryOptions::default(), |method, h| {
            let mut b = framed(
                7,
                "<methodCall><methodName>ManiaPlanet.PlayerChat</methodName></methodCall>",
            );
            let r = match method {
                "GetCurrentChallengeInfo" | "GetVersion" => reply("Nope"),
                "GetCurrentMapInfo" => reply("GetCurrentChallengeInfo"),
                m => reply(m),
            };
            b.extend(framed(h, &r));
            b
        });
        assert_eq!(calls[0], "GetServerOptions");
        assert!(calls.contains(&"GetCurrentMapInfo".to_owned()));
        let a = m.take_result().unwrap().unwrap();
        assert_eq!(a.details.callbacks, calls.len());
        assert!(
            a.warnings
                .iter()
                .any(|w| w.contains("GetVersion: fault -1000")),
            "{:?}",
            a.warnings
        );
        assert!(a.status.map.is_some());
    }

    #[test]
    fn refusals() {
        let opts = QueryOptions {
            credentials: Some(Credentials::new("User", "bad")),
        };
        let (mut m, _) = converse(opts, |_, h| framed(h, &reply("Nope")));
        let e = m.take_result().unwrap().unwrap_err().to_string();
        assert!(e.contains("rejected the credentials"), "{e}");
        let (mut m, _) = converse(QueryOptions::default(), |_, h| framed(h, &reply("Nope")));
        let e = m.take_result().unwrap().unwrap_err().to_string();
        assert!(e.contains("GetServerOptions: Unknown method."), "{e}");
        let (mut m, _) = converse(QueryOptions::default(), |_, h| framed(h ^ 1, &reply("x")));
        let e = m.take_result().unwrap().unwrap_err().to_string();
        assert!(e.contains("did not make"), "{e}");
    }

    #[test]
    fn hostile_servers() {
        let t0 = Instant::now();
        let start = |greet: &[u8]| {
            let mut m = QueryMachine::new(QueryOptions::default(), Timing::default(), t0);
            connect(&mut m, t0, DEFAULT_PORT);
            m.handle_stream(t0, StreamEvent::Received(greet));
            m
        };
        // Not GBXRemote 2.
        let mut v1 = 11u32.to_le_bytes().to_vec();
        v1.extend_from_slice(b"GBXRemote 1");
        let e = start(&v1).take_result().unwrap().unwrap_err().to_string();
        assert!(e.contains("GBXRemote 1"), "{e}");
        let e = start(b"HTTP/1.1 400")
            .take_result()
            .unwrap()
            .unwrap_err()
            .to_string();
        assert!(e.contains("HandshakeLength"), "{e}");
        // A flood of callbacks.
        let mut m = start(&greeting());
        let cb = framed(1, "<x/>");
        for _ in 0..=MAX_CALLBACKS {
            m.handle_stream(t0, StreamEvent::Received(&cb));
        }
        let e = m.take_result().unwrap().unwrap_err().to_string();
        assert!(e.contains("callbacks"), "{e}");
        // A lying length: an error at once; a huge frame held: never past the cap.
        let mut m = start(&greeting());
        m.handle_stream(
            t0,
            StreamEvent::Received(&[0xff, 0xff, 0xff, 0xff, 1, 0, 0, 0x80]),
        );
        let e = m.take_result().unwrap().unwrap_err().to_string();
        assert!(e.contains("FrameLength"), "{e}");
        // A drip meets the total timer.
        let mut m = start(&greeting());
        drip_to_the_end(&mut m, t0, b' ', HEADER + MAX_FRAME);
    }
}
