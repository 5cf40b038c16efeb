//! A loopback UDP server that answers with recorded datagrams: a real server's replies
//! (captures) replayed to any client, ours or a third party's (qstat, gamedig, opengsq),
//! so that both read the same bytes.
//!
//! ```no_run
//! use ogp_testkit::replay::Replay;
//! let reply = vec![b"\\hostname\\Test\\final\\".to_vec()];
//! let server = Replay::start(move |request: &[u8]| {
//!     if request.starts_with(b"\\status\\") { reply.clone() } else { Vec::new() }
//! });
//! println!("replaying on {}", server.addr());
//! ```
//!
//! The answer function sees each request and returns the datagrams to send back, in
//! order (none: stay silent). It can splice parts of the request into the reply (an id
//! that the protocol echoes), reorder parts or drop some. The server stops when dropped.
//!
//! [`StreamReplay`] is the same over TCP, for the protocols that hold a conversation
//! (Battlefield's Frostbite query, TeamSpeak's ServerQuery): it greets each connection
//! with recorded bytes (a banner, or nothing), then hands the bytes received so far to
//! the answer function, which says how many of them make a whole request and what to
//! write back ([`Turn`]); requests are answered in order, as a server reads them.

use std::io::{Read, Write};
use std::net::{SocketAddr, TcpListener, TcpStream, UdpSocket};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::Duration;

/// A replaying server on `127.0.0.1` (a free port); stops when dropped.
pub struct Replay {
    addr: SocketAddr,
    stop: Arc<AtomicBool>,
    received: Arc<AtomicUsize>,
    thread: Option<JoinHandle<()>>,
}

impl Replay {
    /// Starts a server that answers each request with `answer(request)`.
    pub fn start<F>(answer: F) -> Self
    where
        F: Fn(&[u8]) -> Vec<Vec<u8>> + Send + 'static,
    {
        Self::start_on("127.0.0.1:0".parse().expect("address"), answer)
    }

    /// The same on a given address (`127.0.0.1:PORT`, `[::1]:0`).
    pub fn start_on<F>(addr: SocketAddr, answer: F) -> Self
    where
        F: Fn(&[u8]) -> Vec<Vec<u8>> + Send + 'static,
    {
        let sock = UdpSocket::bind(addr).expect("bind the replay socket");
        sock.set_read_timeout(Some(Duration::from_millis(20)))
            .expect("read timeout");
        let addr = sock.local_addr().expect("local address");
        let stop = Arc::new(AtomicBool::new(false));
        let received = Arc::new(AtomicUsize::new(0));
        let (s, r) = (Arc::clone(&stop), Arc::clone(&received));
        let thread = std::thread::spawn(move || {
            let mut buf = vec![0u8; 65_536];
            while !s.load(Ordering::Relaxed) {
                let Ok((n, from)) = sock.recv_from(&mut buf) else {
                    continue;
                };
                r.fetch_add(1, Ordering::Relaxed);
                for d in answer(buf.get(..n).unwrap_or_default()) {
                    let _ = sock.send_to(&d, from);
                }
            }
        });
        Self {
            addr,
            stop,
            received,
            thread: Some(thread),
        }
    }

    /// Where it listens.
    pub fn addr(&self) -> SocketAddr {
        self.addr
    }

    /// Requests received so far.
    pub fn received(&self) -> usize {
        self.received.load(Ordering::Relaxed)
    }
}

impl Drop for Replay {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::Relaxed);
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}

/// What a [`StreamReplay`] does with the bytes received so far.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Turn {
    /// No whole request yet: read more.
    Wait,
    /// The first `consumed` bytes were a request: write `reply` (maybe nothing).
    Reply {
        /// Bytes of the request.
        consumed: usize,
        /// What to write back.
        reply: Vec<u8>,
    },
    /// Write `reply`, then close the connection.
    Close(Vec<u8>),
}

/// A replaying TCP server on `127.0.0.1` (a free port); stops when dropped. Each
/// connection is served by a thread of its own.
pub struct StreamReplay {
    addr: SocketAddr,
    stop: Arc<AtomicBool>,
    connections: Arc<AtomicUsize>,
    thread: Option<JoinHandle<()>>,
}

impl StreamReplay {
    /// Starts a server that writes `greeting` to each connection, then answers with
    /// `answer(bytes received and not yet consumed)`.
    pub fn start<F>(greeting: Vec<u8>, answer: F) -> Self
    where
        F: Fn(&[u8]) -> Turn + Send + Sync + 'static,
    {
        let listener = TcpListener::bind("127.0.0.1:0").expect("bind the replay listener");
        listener
            .set_nonblocking(true)
            .expect("non-blocking listener");
        let addr = listener.local_addr().expect("local address");
        let stop = Arc::new(AtomicBool::new(false));
        let connections = Arc::new(AtomicUsize::new(0));
        let (s, c) = (Arc::clone(&stop), Arc::clone(&connections));
        let answer = Arc::new(answer);
        let greeting = Arc::new(greeting);
        let thread = std::thread::spawn(move || {
            while !s.load(Ordering::Relaxed) {
                let Ok((conn, _)) = listener.accept() else {
                    std::thread::sleep(Duration::from_millis(5));
                    continue;
                };
                c.fetch_add(1, Ordering::Relaxed);
                let (s, answer, greeting) =
                    (Arc::clone(&s), Arc::clone(&answer), Arc::clone(&greeting));
                std::thread::spawn(move || serve_stream(conn, &s, &greeting, &*answer));
            }
        });
        Self {
            addr,
            stop,
            connections,
            thread: Some(thread),
        }
    }

    /// Where it listens.
    pub fn addr(&self) -> SocketAddr {
        self.addr
    }

    /// Connections accepted so far.
    pub fn connections(&self) -> usize {
        self.connections.load(Ordering::Relaxed)
    }
}

fn serve_stream(
    mut conn: TcpStream,
    stop: &AtomicBool,
    greeting: &[u8],
    answer: &(dyn Fn(&[u8]) -> Turn + Send + Sync),
) {
    let _ = conn.set_nonblocking(false);
    let _ = conn.set_read_timeout(Some(Duration::from_millis(20)));
    if !greeting.is_empty() && conn.write_all(greeting).is_err() {
        return;
    }
    let mut held = Vec::new();
    let mut buf = [0u8; 4096];
    while !stop.load(Ordering::Relaxed) {
        loop {
            match answer(&held) {
                Turn::Wait => break,
                Turn::Reply { consumed, reply } => {
                    held.drain(..consumed.min(held.len()));
                    if !reply.is_empty() && conn.write_all(&reply).is_err() {
                        return;
                    }
                    if consumed == 0 {
                        break;
                    }
                }
                Turn::Close(reply) => {
                    let _ = conn.write_all(&reply);
                    return;
                }
            }
        }
        match conn.read(&mut buf) {
            Ok(0) => return,
            Ok(n) => held.extend_from_slice(buf.get(..n).unwrap_or_default()),
            Err(e)
                if matches!(
                    e.kind(),
                    std::io::ErrorKind::WouldBlock | std::io::ErrorKind::TimedOut
                ) => {}
            Err(_) => return,
        }
    }
}

impl Drop for StreamReplay {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::Relaxed);
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_stream_replay_greets_and_answers_lines_in_order() {
        let server = StreamReplay::start(b"hi\n".to_vec(), |held: &[u8]| {
            match held.iter().position(|&b| b == b'\n') {
                None => Turn::Wait,
                Some(_) if held.starts_with(b"quit") => Turn::Close(b"bye\n".to_vec()),
                Some(i) => Turn::Reply {
                    consumed: i + 1,
                    reply: [b"re:", &held[..=i]].concat(),
                },
            }
        });
        let mut c = TcpStream::connect(server.addr()).unwrap();
        c.set_read_timeout(Some(Duration::from_secs(2))).unwrap();
        c.write_all(b"a\nb\nquit\n").unwrap();
        let mut got = Vec::new();
        c.read_to_end(&mut got).unwrap();
        assert_eq!(got, b"hi\nre:a\nre:b\nbye\n");
        assert_eq!(server.connections(), 1);
    }

    #[test]
    fn answers_what_the_function_returns_and_counts_requests() {
        let server = Replay::start(|req: &[u8]| {
            if req == b"ping" {
                vec![b"one".to_vec(), b"two".to_vec()]
            } else {
                Vec::new()
            }
        });
        let c = UdpSocket::bind("127.0.0.1:0").unwrap();
        c.set_read_timeout(Some(Duration::from_secs(2))).unwrap();
        c.send_to(b"junk", server.addr()).unwrap();
        c.send_to(b"ping", server.addr()).unwrap();
        let mut buf = [0u8; 16];
        let n = c.recv(&mut buf).unwrap();
        assert_eq!(&buf[..n], b"one");
        let n = c.recv(&mut buf).unwrap();
        assert_eq!(&buf[..n], b"two");
        assert_eq!(server.received(), 2);
    }
}
