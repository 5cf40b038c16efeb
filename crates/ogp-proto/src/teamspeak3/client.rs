//! The TeamSpeak 3 ServerQuery client as a stream state machine on the shared core: no
//! I/O, time passed in.
//!
//! It reads the banner (`TS3`, then the welcome line: anything else first is not a
//! ServerQuery), then writes, each after the previous `error` line: `use port=VOICE`,
//! `login NAME PASSWORD` when [`Credentials`] are given, `serverinfo`, `clientlist`,
//! `channellist -topic`, and `quit`: 5 commands (6 with the login), under the servers'
//! default flood limit of 10 commands in 3 seconds (`serverquery_flood_commands`,
//! `serverquery_flood_time`), so one query never gets its address banned. A `use` or
//! `serverinfo` answered with an error id is a rejection with the server's message (a
//! ban for flooding is error 3329); a refused login is
//! [`Rejection::AuthFailed`](crate::client::Rejection); a `clientlist` or `channellist`
//! refused for want of permission leaves its part out.
//!
//! Records are parsed as they come: the core holds one record at most
//! ([`MAX_RECORD`]), [`MAX_CLIENTS`] clients and [`MAX_CHANNELS`] channels are kept
//! (the rest counted), and an answer of more than [`MAX_RECORDS`] records is an error.
//! A server that never sends the `error` line meets the read and total timers.

use std::fmt;
use std::time::Instant;

use super::mapping::to_status;
use super::wire::{error_line, next_record, parse_record, text, End, Record, MAX_RECORD};
use crate::client_core::{Event, Rejection, Timing};
use crate::client_stream::Stream;
use crate::error::DecodeError;
use crate::protocol::Protocol;

/// The ServerQuery port (TCP).
pub const DEFAULT_PORT: u16 = 10011;
/// The default voice port of a virtual server (UDP), what `use port=` names.
pub const DEFAULT_VOICE_PORT: u16 = 9987;
/// The most clients kept.
pub const MAX_CLIENTS: usize = 4_096;
/// The most channels kept.
pub const MAX_CHANNELS: usize = 4_096;
/// The most records one answer may have.
pub const MAX_RECORDS: usize = 100_000;

/// A ServerQuery login. Its `Debug` hides the password; it is never logged.
#[derive(Clone, PartialEq, Eq)]
pub struct Credentials {
    user: String,
    password: String,
}

impl Credentials {
    /// A login as `user` with `password`.
    pub fn new(user: impl Into<String>, password: impl Into<String>) -> Self {
        Self {
            user: user.into(),
            password: password.into(),
        }
    }
}

impl Credentials {
    /// The password as the user gave it and as the `login` command carries it
    /// (escaped): what a dump of the sent bytes must blank out.
    pub fn password_forms(&self) -> [String; 2] {
        [self.password.clone(), super::wire::escape(&self.password)]
    }
}

impl fmt::Debug for Credentials {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "Credentials({:?}, ***)", self.user)
    }
}

/// TeamSpeak 3's own settings of one query.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct QueryOptions {
    /// The virtual server's voice port (`use port=`); 9987 by default.
    pub voice_port: u16,
    /// Log in first (optional: an anonymous ServerQuery sees what the guest group may).
    pub credentials: Option<Credentials>,
}

impl Default for QueryOptions {
    fn default() -> Self {
        Self {
            voice_port: DEFAULT_VOICE_PORT,
            credentials: None,
        }
    }
}

/// What a TeamSpeak 3 answer says beyond the status: the records as sent.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub struct Details {
    /// `serverinfo`'s record.
    pub server: Record,
    /// `clientlist`'s records, query clients included (at most [`MAX_CLIENTS`]).
    pub clients: Vec<Record>,
    /// How many clients `clientlist` listed.
    pub clients_listed: usize,
    /// `channellist`'s records (at most [`MAX_CHANNELS`]).
    pub channels: Vec<Record>,
    /// How many channels `channellist` listed.
    pub channels_listed: usize,
    /// How long the connection took, in milliseconds.
    pub connect_ms: f64,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Step {
    Banner,
    Use,
    Login,
    ServerInfo,
    ClientList,
    ChannelList,
}

impl Step {
    const fn what(self) -> &'static str {
        match self {
            Self::Banner => "the TS3 banner",
            Self::Use => "use",
            Self::Login => "login",
            Self::ServerInfo => "serverinfo",
            Self::ClientList => "clientlist",
            Self::ChannelList => "channellist",
        }
    }
}

/// One TeamSpeak 3 query of one virtual server.
#[derive(Debug, Clone)]
pub struct QueryMachine {
    s: Stream<Details>,
    opts: QueryOptions,
    step: Step,
    connected: bool,
    banner_lines: u8,
    line_start: bool,
    /// Records of the answer being read.
    records: usize,
    server: Option<Record>,
    clients: Vec<Record>,
    clients_listed: usize,
    channels: Vec<Record>,
    channels_listed: usize,
    cut_params: bool,
}

impl QueryMachine {
    /// A query starting at `now`.
    pub fn new(opts: QueryOptions, timing: Timing, now: Instant) -> Self {
        let mut s = Stream::new(Protocol::Teamspeak3, &timing, now, MAX_RECORD);
        s.wait_for(now, Step::Banner.what());
        Self {
            s,
            opts,
            step: Step::Banner,
            connected: false,
            banner_lines: 0,
            line_start: true,
            records: 0,
            server: None,
            clients: Vec::new(),
            clients_listed: 0,
            channels: Vec::new(),
            channels_listed: 0,
            cut_params: false,
        }
    }

    fn ask(&mut self, now: Instant, step: Step) {
        self.step = step;
        self.records = 0;
        self.line_start = true;
        let command = match step {
            Step::Banner => return,
            Step::Use => format!("use port={}\n", self.opts.voice_port),
            Step::Login => match &self.opts.credentials {
                Some(c) => format!(
                    "login client_login_name={} client_login_password={}\n",
                    super::wire::escape(&c.user),
                    super::wire::escape(&c.password)
                ),
                None => return self.ask(now, Step::ServerInfo),
            },
            Step::ServerInfo => "serverinfo\n".to_owned(),
            Step::ClientList => "clientlist\n".to_owned(),
            // `quit` goes with the last command: the server answers `channellist`, then
            // closes; nothing is written once the answer is whole.
            Step::ChannelList => "channellist -topic\nquit\n".to_owned(),
        };
        self.s
            .write(now, command.as_bytes(), step.what(), step.what());
    }

    fn parse(&mut self, now: Instant) {
        while !self.s.is_done() {
            let input = self.s.input();
            let (bytes, base) = (input.peek_rest(), input.offset());
            let banner = self.step == Step::Banner;
            if banner
                && self.banner_lines == 0
                && !b"TS3".starts_with(bytes.get(..3).unwrap_or(bytes))
            {
                return self.s.x.fail_malformed(DecodeError::invalid(
                    base,
                    "Banner",
                    "not TS3: not a TeamSpeak 3 ServerQuery",
                ));
            }
            let (t, end, n) = match next_record(bytes, base, banner) {
                Ok(Some((t, end, n))) => {
                    let (t, _) = text(t);
                    (t, end, n)
                }
                Ok(None) => return,
                Err(e) => return self.s.x.fail_malformed(e),
            };
            self.s.consume(n);
            if banner {
                self.banner(now, base, &t);
                continue;
            }
            let line_start = self.line_start;
            self.line_start = end == End::Line;
            if line_start {
                if let Some(e) = error_line(&t) {
                    self.s.x.received(1, 0);
                    self.s.x.event(Event::Reply {
                        what: self.step.what(),
                        bytes: n,
                        datagrams: 1,
                    });
                    self.s.answered();
                    self.answered(now, base, e.id, &e.msg);
                    continue;
                }
            }
            if t.is_empty() {
                continue;
            }
            self.records += 1;
            if self.records > MAX_RECORDS {
                return self.s.x.fail_malformed(DecodeError::invalid(
                    base,
                    "Record",
                    "more records than one answer may have",
                ));
            }
            self.record(&t);
        }
    }

    fn banner(&mut self, now: Instant, at: usize, line: &str) {
        self.banner_lines += 1;
        if self.banner_lines == 1 {
            if line != "TS3" {
                self.s.x.fail_malformed(DecodeError::invalid(
                    at,
                    "Banner",
                    "not TS3: not a TeamSpeak 3 ServerQuery",
                ));
            }
            return;
        }
        // The welcome line: the server now reads commands.
        self.s.x.event(Event::Note("TS3 banner"));
        self.s.x.ping(now);
        self.ask(now, Step::Use);
    }

    fn record(&mut self, t: &str) {
        let (r, cut) = parse_record(t);
        self.cut_params |= cut;
        match self.step {
            Step::ServerInfo => {
                if self.server.is_none() {
                    self.server = Some(r);
                }
            }
            Step::ClientList => {
                self.clients_listed += 1;
                if self.clients.len() < MAX_CLIENTS {
                    self.clients.push(r);
                }
            }
            Step::ChannelList => {
                self.channels_listed += 1;
                if self.channels.len() < MAX_CHANNELS {
                    self.channels.push(r);
                }
            }
            // `use` and `login` answer no data; anything else is ignored.
            Step::Banner | Step::Use | Step::Login => {}
        }
    }

    /// The `error` line at stream offset `at` ended the current step's answer.
    fn answered(&mut self, now: Instant, at: usize, id: u32, msg: &str) {
        let msg: String = msg.chars().take(120).collect();
        match (self.step, id) {
            (Step::Use, 0) => self.ask(now, Step::Login),
            (Step::Login, 0) => self.ask(now, Step::ServerInfo),
            (Step::Login, _) => self.s.x.reject(Rejection::AuthFailed),
            (Step::ServerInfo, 0) if self.server.is_some() => self.ask(now, Step::ClientList),
            (Step::ServerInfo, 0) => self.s.x.fail_malformed(DecodeError::invalid(
                at,
                "serverinfo",
                "error id=0 without the server's record",
            )),
            (Step::Use | Step::ServerInfo, _) => self.s.x.reject(Rejection::Error {
                code: id,
                meaning: format!("{}: {msg}", self.step.what()),
            }),
            (Step::ClientList, id) => {
                if id != 0 {
                    self.s.x.event(Event::Note("clientlist refused"));
                }
                self.ask(now, Step::ChannelList);
            }
            (Step::ChannelList, id) => {
                if id != 0 {
                    self.s.x.event(Event::Note("channellist refused"));
                }
                self.finish();
            }
            (Step::Banner, _) => {}
        }
    }

    fn finish(&mut self) {
        let Some(server) = self.server.take() else {
            return;
        };
        if self.cut_params {
            self.s.x.warn(["a record had more parameters than we keep"]);
        }
        if self.clients_listed > self.clients.len() || self.channels_listed > self.channels.len() {
            self.s
                .x
                .warn(["more clients or channels than we keep; the rest left out"]);
        }
        let status = to_status(&server, &self.clients, &self.channels);
        let connect_ms = self.s.connect_ms;
        self.s.x.succeed(
            status,
            Details {
                server,
                clients: std::mem::take(&mut self.clients),
                clients_listed: self.clients_listed,
                channels: std::mem::take(&mut self.channels),
                channels_listed: self.channels_listed,
                connect_ms,
            },
        );
    }

    /// The connection is up.
    fn connected(&mut self, now: Instant) {
        if !self.connected {
            self.connected = true;
            self.s.connected(now);
            self.s.wait_for(now, Step::Banner.what());
        }
    }

    /// What a close now truncates.
    fn awaited(&self) -> &'static str {
        self.step.what()
    }
}

crate::client_stream::stream_driver!(QueryMachine, Details);

crate::client_core::start_query!(QueryOptions, no_id);

#[cfg(test)]
mod tests {
    use std::net::SocketAddr;

    use crate::client_core::{QueryDriver, StreamEvent};
    use std::time::Duration;

    use super::*;

    const BANNER: &[u8] = b"TS3\n\rWelcome to the TeamSpeak 3 ServerQuery interface.\n\r";
    const OK: &[u8] = b"error id=0 msg=ok\n\r";

    fn connected(t0: Instant, opts: QueryOptions) -> QueryMachine {
        let mut m = QueryMachine::new(opts, Timing::default(), t0);
        let peer: SocketAddr = "127.0.0.1:10011".parse().unwrap();
        m.handle_stream(t0, StreamEvent::Connected(peer));
        m
    }

    fn sent(m: &mut QueryMachine, t: Instant) -> String {
        let mut out = Vec::new();
        assert!(m.poll_transmit_into(t, &mut out), "nothing to send");
        String::from_utf8(out).unwrap()
    }

    fn feed(m: &mut QueryMachine, t: Instant, bytes: &[u8]) {
        m.handle_stream(t, StreamEvent::Received(bytes));
    }

    fn whole(m: &mut QueryMachine, t0: Instant, byte_by_byte: bool) {
        let script: Vec<(&str, Vec<u8>)> = vec![
            ("", BANNER.to_vec()),
            ("use port=9987\n", OK.to_vec()),
            (
                "serverinfo\n",
                [&b"virtualserver_name=My\\sServer virtualserver_maxclients=32 virtualserver_clientsonline=3 virtualserver_queryclientsonline=1\n\r"[..], OK].concat(),
            ),
            (
                "clientlist\n",
                [&b"clid=1 cid=1 client_nickname=A\\p\\sb client_type=0|clid=2 cid=1 client_nickname=q client_type=1|clid=3 cid=2 client_nickname=C client_type=0\n\r"[..], OK].concat(),
            ),
            (
                "channellist -topic\nquit\n",
                [&b"cid=1 pid=0 channel_name=Lobby total_clients=2|cid=2 pid=0 channel_name=AFK total_clients=1\n\r"[..], OK].concat(),
            ),
        ];
        for (want, reply) in script {
            if !want.is_empty() {
                assert_eq!(sent(m, t0), want);
            }
            if byte_by_byte {
                for b in &reply {
                    feed(m, t0, std::slice::from_ref(b));
                }
            } else {
                feed(m, t0, &reply);
            }
        }
    }

    #[test]
    fn a_whole_query_in_any_chunking() {
        for byte_by_byte in [false, true] {
            let t0 = Instant::now();
            let mut m = connected(t0, QueryOptions::default());
            // The banner comes first; `use` goes after it.
            let mut out = Vec::new();
            assert!(!m.poll_transmit_into(t0, &mut out));
            whole(&mut m, t0, byte_by_byte);
            let mut out = Vec::new();
            assert!(!m.poll_transmit_into(t0, &mut out));
            let a = m.take_result().unwrap().unwrap();
            assert_eq!(a.status.host_name.as_deref(), Some("My Server"));
            let names: Vec<_> = a
                .status
                .players
                .as_ref()
                .unwrap()
                .iter()
                .map(|p| p.name.clone().unwrap())
                .collect();
            assert_eq!(names, ["A| b", "C"]);
            assert_eq!(a.status.player_count, Some(2));
            assert_eq!(a.details.channels.len(), 2);
        }
    }

    #[test]
    fn login_is_escaped_and_a_refusal_is_auth_failed() {
        let t0 = Instant::now();
        let opts = QueryOptions {
            credentials: Some(Credentials::new("serveradmin", "p w|d")),
            ..QueryOptions::default()
        };
        assert!(!format!("{opts:?}").contains("p w|d"));
        let mut m = connected(t0, opts);
        feed(&mut m, t0, BANNER);
        assert_eq!(sent(&mut m, t0), "use port=9987\n");
        feed(&mut m, t0, OK);
        assert_eq!(
            sent(&mut m, t0),
            "login client_login_name=serveradmin client_login_password=p\\sw\\pd\n"
        );
        feed(
            &mut m,
            t0,
            b"error id=520 msg=invalid\\sloginname\\sor\\spassword\n\r",
        );
        let e = m.take_result().unwrap().unwrap_err().to_string();
        assert!(e.contains("credentials"), "{e}");
    }

    #[test]
    fn errors_garbage_and_floods() {
        let t0 = Instant::now();
        // A use refused: the server's id and message.
        let mut m = connected(t0, QueryOptions::default());
        feed(&mut m, t0, BANNER);
        feed(&mut m, t0, b"error id=1024 msg=invalid\\sserverID\n\r");
        let e = m.take_result().unwrap().unwrap_err().to_string();
        assert!(e.contains("1024") && e.contains("invalid serverID"), "{e}");
        // A garbage banner fails at its first bytes.
        let mut m = connected(t0, QueryOptions::default());
        feed(&mut m, t0, b"HTTP/1.1 400");
        let e = m.take_result().unwrap().unwrap_err().to_string();
        assert!(e.contains("Banner at byte 0"), "{e}");
        let mut m = connected(t0, QueryOptions::default());
        feed(&mut m, t0, b"TS3x\n\r");
        assert!(m.take_result().unwrap().is_err());
        // One endless record: capped.
        let mut m = connected(t0, QueryOptions::default());
        feed(&mut m, t0, BANNER);
        feed(&mut m, t0, OK);
        assert_eq!(sent(&mut m, t0), "use port=9987\nserverinfo\n");
        let big = vec![b'x'; 3 * MAX_RECORD];
        feed(&mut m, t0, &big);
        let e = m.take_result().unwrap().unwrap_err().to_string();
        assert!(e.contains("malformed") || e.contains("Record"), "{e}");
        assert!(m.stream_buffer(0) <= MAX_RECORD);
        // Endless records without an error line: bounded by the record cap.
        let mut m = connected(t0, QueryOptions::default());
        feed(&mut m, t0, BANNER);
        feed(&mut m, t0, OK);
        let rec = b"clid=1 client_type=0|".repeat(1000);
        let mut n = 0;
        while m.take_result().is_none() {
            feed(&mut m, t0, &rec);
            n += 1;
            assert!(n <= 101, "never stopped");
        }
    }

    /// A serverinfo answered `error id=0` with no record points at that line, however
    /// much came after it in the same read (found by the corpus replay: the offset was
    /// the end of what had been received).
    #[test]
    fn an_empty_serverinfo_points_at_its_error_line() {
        let t0 = Instant::now();
        // the line begins with the `\r` of the line end before it (TeamSpeak ends its
        // lines with `\n\r`)
        let at = BANNER.len() + OK.len() - 1;
        for rest in [
            &b""[..],
            &b"virtualserver_name=late\n\rerror id=0 msg=ok\n\r"[..],
        ] {
            let mut m = connected(t0, QueryOptions::default());
            feed(&mut m, t0, &[BANNER, OK, OK, rest].concat());
            let e = m.take_result().unwrap().unwrap_err().to_string();
            assert!(e.contains(&format!("byte {at}:")), "{e}");
        }
    }

    #[test]
    fn ten_thousand_clients_keep_a_bounded_list() {
        let t0 = Instant::now();
        let mut m = connected(t0, QueryOptions::default());
        feed(&mut m, t0, BANNER);
        feed(&mut m, t0, OK);
        feed(&mut m, t0, b"virtualserver_name=x\n\r");
        feed(&mut m, t0, OK);
        let mut list = Vec::new();
        for i in 0..10_000 {
            if i > 0 {
                list.push(b'|');
            }
            list.extend_from_slice(
                format!("clid={i} cid=1 client_nickname=n{i} client_type=0").as_bytes(),
            );
        }
        list.extend_from_slice(b"\n\r");
        list.extend_from_slice(OK);
        for chunk in list.chunks(4096) {
            feed(&mut m, t0, chunk);
            assert!(m.stream_buffer(0) <= MAX_RECORD);
        }
        feed(&mut m, t0, OK);
        let a = m.take_result().unwrap().unwrap();
        assert_eq!(a.details.clients.len(), MAX_CLIENTS);
        assert_eq!(a.details.clients_listed, 10_000);
        assert!(!a.warnings.is_empty());
    }

    /// A server that never answers `use` meets the read timer.
    #[test]
    fn silence_after_use_times_out() {
        let t0 = Instant::now();
        let mut m = connected(t0, QueryOptions::default());
        feed(&mut m, t0, BANNER);
        let due = m.poll_timeout().unwrap();
        assert!(due <= t0 + Duration::from_secs(60));
        m.handle_timeout(due);
        let e = m.take_result().unwrap().unwrap_err().to_string();
        assert!(e.contains("use"), "{e}");
    }
}
