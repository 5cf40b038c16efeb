//! Batched datagram I/O: on Linux `recvmmsg` and `sendmmsg` through `nix` (no unsafe
//! code here), elsewhere one `recv_from`/`send_to` per datagram; both drain what is
//! waiting, up to [`BATCH`] datagrams per call.
//!
//! The buffers ([`RecvBufs`]) belong to a socket task and are plain bytes (the task stays
//! `Send`); the kernel headers `nix` needs hold raw pointers, so they live in a
//! thread-local, allocated once per thread and reused by every call on it (each call is
//! synchronous, so no two calls share them at once). Calls are non-blocking and made
//! inside tokio's readiness (`UdpSocket::try_io`), so a would-block clears the socket's
//! readiness as a plain `recv_from` would.

use std::io;
use std::net::SocketAddr;

use tokio::net::UdpSocket;

/// Datagrams per call, received or sent.
pub const BATCH: usize = 32;

/// Receive buffer per datagram: any datagram larger than the biggest query we answer
/// (1400 bytes) is ignored, so reading a little more than that is enough to tell.
pub const RECV_BUF: usize = 2048;

/// Where a batch of received datagrams lands.
pub struct RecvBufs {
    bufs: Box<[[u8; RECV_BUF]; BATCH]>,
    got: [(usize, Option<SocketAddr>); BATCH],
}

impl std::fmt::Debug for RecvBufs {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RecvBufs").finish_non_exhaustive()
    }
}

impl Default for RecvBufs {
    fn default() -> Self {
        Self {
            bufs: Box::new([[0u8; RECV_BUF]; BATCH]),
            got: [(0, None); BATCH],
        }
    }
}

impl RecvBufs {
    /// The `i`-th datagram read by the last [`recv`]: its bytes and its source (`None`
    /// past the end, or for a source that is neither IPv4 nor IPv6).
    pub fn get(&self, i: usize) -> Option<(&[u8], SocketAddr)> {
        let (len, addr) = self.got.get(i)?;
        let data = self.bufs.get(i)?.get(..*len)?;
        Some((data, (*addr)?))
    }
}

/// Where a batch of datagrams of any size up to `size` bytes lands (the scanner's
/// answers may be as large as UDP allows): [`BATCH`] buffers in one allocation, zeroed
/// by the allocator, so the pages no datagram reaches are never touched and cost no
/// memory.
pub struct RecvBatch {
    buf: Vec<u8>,
    size: usize,
    got: [(usize, Option<SocketAddr>); BATCH],
}

impl std::fmt::Debug for RecvBatch {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RecvBatch")
            .field("size", &self.size)
            .finish_non_exhaustive()
    }
}

impl Default for RecvBatch {
    /// No buffers (no allocation): a placeholder; reads into it read nothing.
    fn default() -> Self {
        Self {
            buf: Vec::new(),
            size: 0,
            got: [(0, None); BATCH],
        }
    }
}

impl RecvBatch {
    /// [`BATCH`] buffers of `size` bytes.
    pub fn new(size: usize) -> Self {
        Self {
            buf: vec![0; size.saturating_mul(BATCH)],
            size,
            got: [(0, None); BATCH],
        }
    }

    /// The `i`-th datagram read by the last [`recv_batch`]: its bytes and its source.
    pub fn get(&self, i: usize) -> Option<(&[u8], SocketAddr)> {
        let (len, addr) = self.got.get(i)?;
        let start = i.checked_mul(self.size)?;
        let data = self.buf.get(start..start.checked_add(*len)?)?;
        Some((data, (*addr)?))
    }
}

#[cfg(target_os = "linux")]
mod sys {
    use std::cell::RefCell;
    use std::io::{self, IoSlice, IoSliceMut};
    use std::net::SocketAddr;
    use std::os::fd::AsRawFd;

    use nix::sys::socket::{
        recvmmsg, sendmmsg, ControlMessage, MsgFlags, MultiHeaders, SockaddrStorage,
    };
    use tokio::net::UdpSocket;

    use super::{RecvBatch, RecvBufs, BATCH};

    struct Headers {
        recv: MultiHeaders<SockaddrStorage>,
        send: MultiHeaders<SockaddrStorage>,
    }

    thread_local! {
        static HEADERS: RefCell<Option<Headers>> = const { RefCell::new(None) };
    }

    /// Runs `f` with this thread's headers (allocated on first use).
    fn with_headers<T>(f: impl FnOnce(&mut Headers) -> io::Result<T>) -> io::Result<T> {
        HEADERS.with(|cell| {
            let mut slot = cell
                .try_borrow_mut()
                .map_err(|_| io::Error::other("batch headers in use"))?;
            let h = slot.get_or_insert_with(|| Headers {
                recv: MultiHeaders::preallocate(BATCH, None),
                send: MultiHeaders::preallocate(BATCH, None),
            });
            f(h)
        })
    }

    fn socket_addr(a: &SockaddrStorage) -> Option<SocketAddr> {
        if let Some(v4) = a.as_sockaddr_in() {
            return Some(SocketAddr::V4((*v4).into()));
        }
        a.as_sockaddr_in6().map(|v6| SocketAddr::V6((*v6).into()))
    }

    pub(super) fn recv(socket: &UdpSocket, into: &mut RecvBufs) -> io::Result<usize> {
        let iovs = into.bufs.each_mut().map(|b| [IoSliceMut::new(b)]);
        recv_iovs(socket, iovs, &mut into.got)
    }

    pub(super) fn recv_batch(socket: &UdpSocket, into: &mut RecvBatch) -> io::Result<usize> {
        let size = into.size.max(1);
        let mut chunks = into.buf.chunks_exact_mut(size);
        let iovs: [[IoSliceMut<'_>; 1]; BATCH] =
            std::array::from_fn(|_| [IoSliceMut::new(chunks.next().unwrap_or_default())]);
        recv_iovs(socket, iovs, &mut into.got)
    }

    fn recv_iovs(
        socket: &UdpSocket,
        iovs: [[IoSliceMut<'_>; 1]; BATCH],
        got: &mut [(usize, Option<SocketAddr>); BATCH],
    ) -> io::Result<usize> {
        let fd = socket.as_raw_fd();
        with_headers(|h| {
            let mut iovs = iovs;
            let results = recvmmsg(
                fd,
                &mut h.recv,
                iovs.iter_mut(),
                MsgFlags::MSG_DONTWAIT,
                None,
            )?;
            let mut n = 0;
            for (slot, r) in got.iter_mut().zip(results) {
                *slot = (r.bytes, r.address.as_ref().and_then(socket_addr));
                n += 1;
            }
            Ok(n)
        })
    }

    pub(super) fn send(socket: &UdpSocket, msgs: &[(&[u8], SocketAddr)]) -> io::Result<usize> {
        let fd = socket.as_raw_fd();
        let n = msgs.len().min(BATCH);
        let mut iovs: [[IoSlice<'_>; 1]; BATCH] = std::array::from_fn(|_| [IoSlice::new(&[])]);
        let mut addrs: [Option<SockaddrStorage>; BATCH] = [None; BATCH];
        for ((iov, addr), (data, to)) in iovs.iter_mut().zip(addrs.iter_mut()).zip(msgs) {
            *iov = [IoSlice::new(data)];
            *addr = Some(SockaddrStorage::from(*to));
        }
        with_headers(|h| {
            let cmsgs: [ControlMessage<'_>; 0] = [];
            let sent = sendmmsg(
                fd,
                &mut h.send,
                iovs.get(..n).unwrap_or_default(),
                addrs.get(..n).unwrap_or_default(),
                cmsgs,
                MsgFlags::MSG_DONTWAIT,
            )?;
            Ok(sent.count())
        })
    }
}

#[cfg(not(target_os = "linux"))]
mod sys {
    use std::io;
    use std::net::SocketAddr;

    use tokio::net::UdpSocket;

    use super::{RecvBatch, RecvBufs};

    pub(super) fn recv(socket: &UdpSocket, into: &mut RecvBufs) -> io::Result<usize> {
        recv_each(
            socket,
            into.bufs.iter_mut().map(|b| &mut b[..]),
            &mut into.got,
        )
    }

    pub(super) fn recv_batch(socket: &UdpSocket, into: &mut RecvBatch) -> io::Result<usize> {
        let size = into.size.max(1);
        recv_each(socket, into.buf.chunks_exact_mut(size), &mut into.got)
    }

    fn recv_each<'a>(
        socket: &UdpSocket,
        bufs: impl Iterator<Item = &'a mut [u8]>,
        got: &mut [(usize, Option<SocketAddr>)],
    ) -> io::Result<usize> {
        let mut n = 0;
        for (buf, slot) in bufs.zip(got.iter_mut()) {
            match socket.try_recv_from(buf) {
                Ok((len, from)) => {
                    *slot = (len, Some(from));
                    n += 1;
                }
                Err(e) if n > 0 && e.kind() == io::ErrorKind::WouldBlock => break,
                Err(e) => return if n > 0 { Ok(n) } else { Err(e) },
            }
        }
        Ok(n)
    }

    pub(super) fn send(socket: &UdpSocket, msgs: &[(&[u8], SocketAddr)]) -> io::Result<usize> {
        let mut n = 0;
        for (data, to) in msgs {
            match socket.try_send_to(data, *to) {
                Ok(_) => n += 1,
                Err(e) => return if n > 0 { Ok(n) } else { Err(e) },
            }
        }
        Ok(n)
    }
}

thread_local! {
    /// The receive buffers of [`recv_with`]: one set per thread, however many sockets
    /// the thread serves (a responder may have thousands).
    static RECV_BUFS: std::cell::RefCell<Option<Box<RecvBufs>>> =
        const { std::cell::RefCell::new(None) };
}

/// [`recv`] into this thread's buffers (allocated on first use, shared by every socket
/// of the thread), then `f` on what was read (the buffers and how many datagrams) before
/// anything else can use them. Call it inside `socket.try_io(Interest::READABLE, …)`.
pub fn recv_with<T>(socket: &UdpSocket, f: impl FnOnce(&RecvBufs, usize) -> T) -> io::Result<T> {
    RECV_BUFS.with(|cell| {
        let mut slot = cell
            .try_borrow_mut()
            .map_err(|_| io::Error::other("receive buffers in use"))?;
        let bufs = slot.get_or_insert_with(Box::default);
        let n = sys::recv(socket, bufs)?;
        Ok(f(bufs, n))
    })
}

/// Reads what is waiting on `socket`, up to [`BATCH`] datagrams, without blocking
/// (would-block when nothing is); returns how many were read into `into`. Call it
/// inside `socket.try_io(Interest::READABLE, …)`.
pub fn recv(socket: &UdpSocket, into: &mut RecvBufs) -> io::Result<usize> {
    sys::recv(socket, into)
}

/// Reads what is waiting on `socket` into `into`, up to [`BATCH`] datagrams, without
/// blocking (would-block when nothing is); returns how many were read. A datagram larger
/// than the buffers is cut to their size. Call it inside
/// `socket.try_io(Interest::READABLE, …)`.
pub fn recv_batch(socket: &UdpSocket, into: &mut RecvBatch) -> io::Result<usize> {
    if into.size == 0 {
        return Ok(0);
    }
    sys::recv_batch(socket, into)
}

/// Sends the first [`BATCH`] (at most) of `msgs`, each to its address, without blocking;
/// returns how many went out (the first ones). An error means the first could not be
/// sent. Call it inside `socket.try_io(Interest::WRITABLE, …)`.
pub fn send(socket: &UdpSocket, msgs: &[(&[u8], SocketAddr)]) -> io::Result<usize> {
    sys::send(socket, msgs)
}

/// Sends every one of `msgs`, each to its address, [`BATCH`] at most a system call: a
/// full send buffer is waited for; a datagram the system refuses (an address it cannot
/// reach, say) is skipped, and the rest go out.
pub async fn send_all(socket: &UdpSocket, msgs: &[(&[u8], SocketAddr)]) {
    let mut done = 0;
    while let Some(rest) = msgs.get(done..).filter(|r| !r.is_empty()) {
        match socket.try_io(tokio::io::Interest::WRITABLE, || send(socket, rest)) {
            // nothing sent and no error: skipped, so that the loop always ends
            Ok(0) => done += 1,
            Ok(n) => done += n,
            Err(e) if e.kind() == io::ErrorKind::WouldBlock => {
                if socket.writable().await.is_err() {
                    return;
                }
            }
            Err(e) => {
                tracing::debug!(error = %e, "send failed");
                done += 1;
            }
        }
    }
}
