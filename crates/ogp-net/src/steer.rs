//! Steering each source to one thread: a classic BPF program on a `SO_REUSEPORT` group
//! (`SO_ATTACH_REUSEPORT_CBPF`, Linux 4.5+) picks the group's socket from the source
//! address, so that all datagrams of a source reach the same answering thread and each
//! thread can keep rate limits of its own, with no lock on the answering path.
//!
//! The program hashes what the rate limiter keys a source by: the IPv4 address, or the
//! /64 prefix of an IPv6 address (the two halves XOR-ed); an IPv4 datagram on a
//! dual-stack socket is read as IPv4. The socket is the hash modulo the group's size, in
//! the order the sockets were bound. Whoever picks their source address picks their
//! thread either way; what matters is that one source always meets one budget.

use std::io;

/// Installs the program on the `SO_REUSEPORT` group of `socket` (any socket of it),
/// which has `sockets` members bound in thread order.
#[cfg(target_os = "linux")]
pub(crate) fn by_source(socket: &std::net::UdpSocket, sockets: usize) -> io::Result<()> {
    use nix::libc::{self, sock_filter, sock_fprog};
    use nix::sys::socket::{setsockopt, sockopt::AttachReusePortCbpf};

    let n = u32::try_from(sockets)
        .ok()
        .filter(|n| *n >= 1)
        .ok_or_else(|| io::Error::new(io::ErrorKind::InvalidInput, "group size"))?;
    // Loads relative to the network header (`SKF_NET_OFF`).
    const NET: u32 = 0xfff0_0000;
    let op = |code: u32, jt: u8, jf: u8, k: u32| sock_filter {
        code: code as u16,
        jt,
        jf,
        k,
    };
    let ld_w = libc::BPF_LD | libc::BPF_W | libc::BPF_ABS;
    let program = [
        // 0: A = IP version (the high nibble of the first byte).
        op(libc::BPF_LD | libc::BPF_B | libc::BPF_ABS, 0, 0, NET),
        op(libc::BPF_ALU | libc::BPF_RSH | libc::BPF_K, 0, 0, 4),
        // 2: IPv6 → 5, else IPv4 → 3.
        op(libc::BPF_JMP | libc::BPF_JEQ | libc::BPF_K, 2, 0, 6),
        // 3: IPv4: A = the source address; on to the modulo.
        op(ld_w, 0, 0, NET + 12),
        op(libc::BPF_JMP | libc::BPF_JA, 0, 0, 4),
        // 5: IPv6: A = the two words of the source's /64, XOR-ed.
        op(ld_w, 0, 0, NET + 8),
        op(libc::BPF_MISC | libc::BPF_TAX, 0, 0, 0),
        op(ld_w, 0, 0, NET + 12),
        op(libc::BPF_ALU | libc::BPF_XOR | libc::BPF_X, 0, 0, 0),
        // 9: the socket.
        op(libc::BPF_ALU | libc::BPF_MOD | libc::BPF_K, 0, 0, n),
        op(libc::BPF_RET | libc::BPF_A, 0, 0, 0),
    ];
    let fprog = sock_fprog {
        len: program.len() as u16,
        // The kernel copies the program during the call; `program` outlives it.
        filter: program.as_ptr().cast_mut(),
    };
    setsockopt(socket, AttachReusePortCbpf, &fprog).map_err(io::Error::from)
}

/// Not available here: the threads share their limits.
#[cfg(not(target_os = "linux"))]
pub(crate) fn by_source(_socket: &std::net::UdpSocket, _sockets: usize) -> io::Result<()> {
    Err(io::Error::new(
        io::ErrorKind::Unsupported,
        "steering by source needs Linux",
    ))
}

#[cfg(all(test, target_os = "linux"))]
mod tests {
    use std::net::{IpAddr, Ipv4Addr, SocketAddr, UdpSocket};
    use std::time::Duration;

    /// A socket of a reuseport group at `at`.
    fn bind_std(at: SocketAddr) -> UdpSocket {
        use socket2::{Domain, Protocol, Socket, Type};
        let s = Socket::new(Domain::for_address(at), Type::DGRAM, Some(Protocol::UDP)).unwrap();
        s.set_reuse_port(true).unwrap();
        s.bind(&at.into()).unwrap();
        s.into()
    }

    /// Binds `n` sockets of one reuseport group at `at`, steered; sends four datagrams
    /// (four source ports) from each of 127.0.0.1–127.0.0.8; returns, per socket, the
    /// last octet of every source it received from.
    fn received(at: SocketAddr, n: usize) -> Vec<Vec<u8>> {
        let first = bind_std(at);
        let port = first.local_addr().unwrap().port();
        let mut group = vec![first];
        for _ in 1..n {
            group.push(bind_std(SocketAddr::new(at.ip(), port)));
        }
        super::by_source(&group[0], n).unwrap();
        for x in 1..=8u8 {
            for _ in 0..4 {
                let s = UdpSocket::bind((Ipv4Addr::new(127, 0, 0, x), 0)).unwrap();
                s.send_to(&[x], (Ipv4Addr::LOCALHOST, port)).unwrap();
            }
        }
        let mut buf = [0u8; 8];
        group
            .iter()
            .map(|s| {
                s.set_nonblocking(false).unwrap();
                s.set_read_timeout(Some(Duration::from_millis(200)))
                    .unwrap();
                let mut from = Vec::new();
                // 32 datagrams in all; bounded.
                for _ in 0..64 {
                    match s.recv_from(&mut buf) {
                        Ok((_, a)) => from.push(match a.ip().to_canonical() {
                            IpAddr::V4(v4) => v4.octets()[3],
                            IpAddr::V6(_) => 0,
                        }),
                        Err(_) => break,
                    }
                }
                from
            })
            .collect()
    }

    /// Every source reached exactly the socket its whole address modulo the group's
    /// size names (127.0.0.0 is 0 modulo 2 and 1 modulo 3), four datagrams each.
    fn assert_steered(got: &[Vec<u8>]) {
        let n = got.len() as u32;
        let socket_of = |x: u8| (u32::from(Ipv4Addr::new(127, 0, 0, x)) % n) as usize;
        assert_eq!(got.iter().map(Vec::len).sum::<usize>(), 32, "{got:?}");
        for (i, from) in got.iter().enumerate() {
            let expected = (1..=8u8).filter(|x| socket_of(*x) == i).count() * 4;
            assert_eq!(from.len(), expected, "{got:?}");
            assert!(from.iter().all(|x| socket_of(*x) == i), "{got:?}");
        }
    }

    #[test]
    fn every_source_reaches_one_socket_chosen_by_its_address() {
        for n in [2, 3] {
            assert_steered(&received("127.0.0.1:0".parse().unwrap(), n));
        }
    }

    #[test]
    fn ipv4_on_a_dual_stack_socket_is_steered_by_its_ipv4_address() {
        assert_steered(&received("[::ffff:127.0.0.1]:0".parse().unwrap(), 2));
    }
}
