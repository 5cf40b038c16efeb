//! ICMP errors of the engine's shared (unconnected) sockets, on Linux.
//!
//! An unconnected UDP socket hears nothing of the ICMP port-unreachable its datagrams
//! cause, unless `IP_RECVERR` / `IPV6_RECVERR` is set: then the kernel queues each error
//! on the socket's error queue with the destination of the datagram that failed, marks
//! the socket in error (epoll reports `EPOLLERR`; the next `recv` fails once with
//! `ECONNREFUSED`, without saying to whom), and `recvmsg(MSG_ERRQUEUE)` reads them.
//! Elsewhere nothing is set and nothing is read: closed ports time out as before.

use std::net::SocketAddr;

use tokio::net::UdpSocket;

/// Error-queue entries read from one socket per call (the rest wait for the next).
#[cfg(target_os = "linux")]
const DRAIN_MAX: usize = 256;

/// Asks the kernel to queue ICMP errors on `socket` (best effort).
#[cfg(target_os = "linux")]
pub(crate) fn enable(socket: &socket2::Socket, v6: bool) {
    use nix::sys::socket::{setsockopt, sockopt};
    let _ = if v6 {
        setsockopt(socket, sockopt::Ipv6RecvErr, &true)
    } else {
        setsockopt(socket, sockopt::Ipv4RecvErr, &true)
    };
}

/// Asks the kernel to queue ICMP errors on `socket` (nothing to do here).
#[cfg(not(target_os = "linux"))]
pub(crate) fn enable(_socket: &socket2::Socket, _v6: bool) {}

/// Whether the error queue may have something: tokio saw the socket in error.
pub(crate) fn interest() -> tokio::io::Interest {
    #[cfg(target_os = "linux")]
    {
        tokio::io::Interest::READABLE | tokio::io::Interest::ERROR
    }
    #[cfg(not(target_os = "linux"))]
    {
        tokio::io::Interest::READABLE
    }
}

/// Reads up to [`DRAIN_MAX`] entries of the error queue and pushes to `refused` the
/// destination of each datagram refused (ICMP or ICMPv6 port unreachable). The queue is
/// read while tokio says the socket is in error; with `direct` (a `recv` just failed
/// with `ECONNREFUSED`, which tokio may not have seen yet) it is read anyway. Reading
/// until the queue is empty clears tokio's error readiness.
#[cfg(target_os = "linux")]
pub(crate) fn drain(socket: &UdpSocket, direct: bool, refused: &mut Vec<SocketAddr>) {
    use std::io;
    use tokio::io::Interest;
    // Any failure ends the drain as an empty queue would, and clears tokio's error
    // readiness: the next error wakes the engine again, and a socket whose queue cannot
    // be read never keeps it spinning.
    let read = || read_one(socket).map_err(|_| io::Error::from(io::ErrorKind::WouldBlock));
    for _ in 0..DRAIN_MAX {
        let r = match socket.try_io(Interest::ERROR, read) {
            Err(_) if direct => read(),
            r => r,
        };
        match r {
            Ok(Some(addr)) => refused.push(addr),
            Ok(None) => {}
            Err(_) => break,
        }
    }
}

/// Nothing to read elsewhere.
#[cfg(not(target_os = "linux"))]
pub(crate) fn drain(_socket: &UdpSocket, _direct: bool, _refused: &mut Vec<SocketAddr>) {}

/// One entry of the error queue: `Ok(Some(destination))` for a port unreachable,
/// `Ok(None)` for another error, `Err(WouldBlock)` when the queue is empty.
#[cfg(target_os = "linux")]
fn read_one(socket: &UdpSocket) -> std::io::Result<Option<SocketAddr>> {
    use std::io::IoSliceMut;
    use std::net::{SocketAddrV4, SocketAddrV6};
    use std::os::fd::AsRawFd as _;

    use nix::libc;
    use nix::sys::socket::{recvmsg, ControlMessageOwned, MsgFlags, SockaddrStorage};

    // The queued datagram itself (its head) is not needed: a small buffer, truncated.
    let mut data = [0u8; 64];
    let mut iov = [IoSliceMut::new(&mut data)];
    let mut cmsg = nix::cmsg_space!(libc::sock_extended_err, libc::sockaddr_in6);
    let msg = recvmsg::<SockaddrStorage>(
        socket.as_raw_fd(),
        &mut iov,
        Some(&mut cmsg),
        MsgFlags::MSG_ERRQUEUE | MsgFlags::MSG_DONTWAIT,
    )
    .map_err(std::io::Error::from)?;
    // The destination of the datagram that failed.
    let dest = msg.address.as_ref().and_then(|a| {
        if let Some(v4) = a.as_sockaddr_in() {
            Some(SocketAddr::V4(SocketAddrV4::from(*v4)))
        } else {
            a.as_sockaddr_in6()
                .map(|v6| SocketAddr::V6(SocketAddrV6::from(*v6)))
        }
    });
    let Ok(cmsgs) = msg.cmsgs() else {
        return Ok(None);
    };
    for c in cmsgs {
        let err = match c {
            ControlMessageOwned::Ipv4RecvErr(e, _) => e,
            ControlMessageOwned::Ipv6RecvErr(e, _) => e,
            _ => continue,
        };
        let icmp =
            err.ee_origin == libc::SO_EE_ORIGIN_ICMP || err.ee_origin == libc::SO_EE_ORIGIN_ICMP6;
        if icmp && err.ee_errno == libc::ECONNREFUSED as u32 {
            return Ok(dest);
        }
    }
    Ok(None)
}
