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

use std::net::{SocketAddr, UdpSocket};
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

#[cfg(test)]
mod tests {
    use super::*;

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
