//! `struct sockaddr` to and from `SocketAddr`.

use std::ffi::c_int;
use std::net::{Ipv4Addr, Ipv6Addr, SocketAddr, SocketAddrV4, SocketAddrV6};

use crate::error::{Error, Result};

/// The address `sa`/`len` (IPv4 or IPv6).
///
/// # Safety
///
/// `sa` must be `NULL` or point to `len` readable bytes.
pub(crate) unsafe fn from_sockaddr(
    sa: *const libc::sockaddr,
    len: libc::socklen_t,
) -> Result<SocketAddr> {
    if sa.is_null() {
        return Err(Error::null("address"));
    }
    let len = len as usize;
    if len < std::mem::size_of::<libc::sa_family_t>() {
        return Err(Error::invalid(format!("address length {len} is too short")));
    }
    // SAFETY: at least the family's bytes are readable; read unaligned (any buffer).
    let family = unsafe { std::ptr::addr_of!((*sa).sa_family).read_unaligned() };
    match c_int::from(family) {
        libc::AF_INET if len >= std::mem::size_of::<libc::sockaddr_in>() => {
            // SAFETY: `len` bytes are readable and cover a `sockaddr_in`.
            let a = unsafe { sa.cast::<libc::sockaddr_in>().read_unaligned() };
            let ip = Ipv4Addr::from(u32::from_be(a.sin_addr.s_addr));
            Ok(SocketAddr::V4(SocketAddrV4::new(
                ip,
                u16::from_be(a.sin_port),
            )))
        }
        libc::AF_INET6 if len >= std::mem::size_of::<libc::sockaddr_in6>() => {
            // SAFETY: `len` bytes are readable and cover a `sockaddr_in6`.
            let a = unsafe { sa.cast::<libc::sockaddr_in6>().read_unaligned() };
            Ok(SocketAddr::V6(SocketAddrV6::new(
                Ipv6Addr::from(a.sin6_addr.s6_addr),
                u16::from_be(a.sin6_port),
                u32::from_be(a.sin6_flowinfo),
                a.sin6_scope_id,
            )))
        }
        f => Err(Error::invalid(format!(
            "address family {f} with length {len}: not a sockaddr_in or sockaddr_in6"
        ))),
    }
}

/// `addr` as a `sockaddr_storage` and its length.
pub(crate) fn to_sockaddr(addr: SocketAddr) -> (libc::sockaddr_storage, libc::socklen_t) {
    // SAFETY: an all-zero `sockaddr_storage` is valid (plain integers).
    let mut storage: libc::sockaddr_storage = unsafe { std::mem::zeroed() };
    let len = match addr {
        SocketAddr::V4(a) => {
            // SAFETY: an all-zero `sockaddr_in` is valid.
            let mut sin: libc::sockaddr_in = unsafe { std::mem::zeroed() };
            sin.sin_family = libc::AF_INET as libc::sa_family_t;
            sin.sin_port = a.port().to_be();
            sin.sin_addr.s_addr = u32::from(*a.ip()).to_be();
            // SAFETY: `sockaddr_storage` is larger than and aligned for `sockaddr_in`.
            unsafe {
                std::ptr::from_mut(&mut storage)
                    .cast::<libc::sockaddr_in>()
                    .write(sin)
            };
            std::mem::size_of::<libc::sockaddr_in>()
        }
        SocketAddr::V6(a) => {
            // SAFETY: an all-zero `sockaddr_in6` is valid.
            let mut sin6: libc::sockaddr_in6 = unsafe { std::mem::zeroed() };
            sin6.sin6_family = libc::AF_INET6 as libc::sa_family_t;
            sin6.sin6_port = a.port().to_be();
            sin6.sin6_flowinfo = a.flowinfo().to_be();
            sin6.sin6_addr.s6_addr = a.ip().octets();
            sin6.sin6_scope_id = a.scope_id();
            // SAFETY: `sockaddr_storage` is larger than and aligned for `sockaddr_in6`.
            unsafe {
                std::ptr::from_mut(&mut storage)
                    .cast::<libc::sockaddr_in6>()
                    .write(sin6)
            };
            std::mem::size_of::<libc::sockaddr_in6>()
        }
    };
    (storage, len as libc::socklen_t)
}
