//! Which addresses a master may list and poll, sans-IO: one judgement for the write API,
//! the config file's `[[server]]` tables, registrations and the poller.
//!
//! ```
//! use ogp_proto::master::addr::{canonical, is_global};
//! // NAT64 of 169.254.169.254 (a cloud's metadata service): judged as that IPv4
//! assert!(!is_global("64:ff9b::a9fe:a9fe".parse().unwrap()));
//! assert!(is_global("8.8.8.8".parse().unwrap()));
//! // one server, one address: an IPv4-mapped address is its IPv4
//! assert_eq!(canonical("[::ffff:8.8.8.8]:27015".parse().unwrap()), "8.8.8.8:27015".parse().unwrap());
//! ```
//!
//! The rules, from the IANA IPv4 and IPv6 Special-Purpose Address Registries (an entry
//! whose "Globally Reachable" is False is refused; the more specific entry wins):
//!
//! * IPv4: refused are 0.0.0.0/8, 10/8, 100.64/10 (shared), 127/8, 169.254/16, 172.16/12,
//!   192.0.0.0/24 (but 192.0.0.9 and 192.0.0.10, anycast, are global), 192.0.2/24,
//!   192.88.99/24 (deprecated 6to4 relays), 192.168/16, 198.18/15 (benchmarking),
//!   198.51.100/24, 203.0.113/24, multicast 224/4, and 240/4 with the broadcast address.
//! * IPv6 forms that carry an IPv4 address are judged by it: IPv4-mapped
//!   `::ffff:0:0/96`, IPv4-compatible `::/96`, SIIT `::ffff:0:0:0/96`, NAT64
//!   `64:ff9b::/96` and 6to4 `2002::/16` (the IPv4 in bits 16..48). Teredo `2001::/32`
//!   is refused (not globally reachable as a server address, and its client IPv4 is
//!   obfuscated), and so is the local-use NAT64 prefix `64:ff9b:1::/48` (False in the
//!   registry: its IPv4 lies where its operator chose).
//! * Other IPv6: only global unicast `2000::/3` (the rest of the space is reserved by
//!   the IETF or special: loopback, unspecified, discard-only `100::/64`, SRv6 SIDs
//!   `5f00::/16`, unique-local `fc00::/7`, link-local `fe80::/10`, site-local `fec0::/10`,
//!   multicast `ff00::/8`…), without the IETF protocol assignments `2001::/23` (but
//!   `2001:1::1`, `2001:1::2`, `2001:1::3`, AMT `2001:3::/32` and AS112 `2001:4:112::/48`
//!   are global; ORCHIDv2 `2001:20::/28` and DRIP `2001:30::/28`, which the registry
//!   marks global, hold identifiers rather than locators and are refused too),
//!   documentation `2001:db8::/32` and `3fff::/20`.

use std::net::{IpAddr, Ipv4Addr, Ipv6Addr, SocketAddr};

/// IPv4 blocks that are not globally reachable: (network, prefix length).
const V4_REFUSED: [(u32, u32); 15] = [
    (0x0000_0000, 8),  // 0.0.0.0/8 "this network"
    (0x0a00_0000, 8),  // 10.0.0.0/8 private-use
    (0x6440_0000, 10), // 100.64.0.0/10 shared address space
    (0x7f00_0000, 8),  // 127.0.0.0/8 loopback
    (0xa9fe_0000, 16), // 169.254.0.0/16 link-local
    (0xac10_0000, 12), // 172.16.0.0/12 private-use
    (0xc000_0000, 24), // 192.0.0.0/24 IETF protocol assignments
    (0xc000_0200, 24), // 192.0.2.0/24 documentation
    (0xc058_6300, 24), // 192.88.99.0/24 deprecated 6to4 relay anycast
    (0xc0a8_0000, 16), // 192.168.0.0/16 private-use
    (0xc612_0000, 15), // 198.18.0.0/15 benchmarking
    (0xc633_6400, 24), // 198.51.100.0/24 documentation
    (0xcb00_7100, 24), // 203.0.113.0/24 documentation
    (0xe000_0000, 4),  // 224.0.0.0/4 multicast
    (0xf000_0000, 4),  // 240.0.0.0/4 reserved, and 255.255.255.255 broadcast
];

/// Global addresses inside a refused IPv4 block: PCP anycast 192.0.0.9 and TURN anycast
/// 192.0.0.10.
const V4_GLOBAL_INSIDE: [u32; 2] = [0xc000_0009, 0xc000_000a];

/// Global entries inside `2001::/23`: (network, prefix length).
const V6_GLOBAL_INSIDE_2001: [(u128, u32); 5] = [
    (0x2001_0001_0000_0000_0000_0000_0000_0001, 128), // PCP anycast
    (0x2001_0001_0000_0000_0000_0000_0000_0002, 128), // TURN anycast
    (0x2001_0001_0000_0000_0000_0000_0000_0003, 128), // DNS-SD SRP anycast
    (0x2001_0003_0000_0000_0000_0000_0000_0000, 32),  // AMT
    (0x2001_0004_0112_0000_0000_0000_0000_0000, 48),  // AS112-v6
];

fn in_v4(ip: u32, (net, len): (u32, u32)) -> bool {
    let mask = u32::MAX.checked_shl(32 - len).unwrap_or(0);
    ip & mask == net
}

fn in_v6(ip: u128, (net, len): (u128, u32)) -> bool {
    let mask = u128::MAX.checked_shl(128 - len).unwrap_or(0);
    ip & mask == net
}

/// Whether an address may be listed on the internet and polled there (the rules are
/// the [module's](self)). Every IPv6 form that carries an IPv4 address is judged by
/// that address.
pub fn is_global(ip: IpAddr) -> bool {
    match ip {
        IpAddr::V4(v4) => is_global_v4(v4),
        IpAddr::V6(v6) => is_global_v6(v6),
    }
}

fn is_global_v4(ip: Ipv4Addr) -> bool {
    let n = u32::from(ip);
    V4_GLOBAL_INSIDE.contains(&n) || !V4_REFUSED.iter().any(|b| in_v4(n, *b))
}

/// The IPv4 address an IPv6 address carries: IPv4-mapped, IPv4-compatible, SIIT,
/// NAT64 (well-known prefix) or 6to4.
fn embedded_v4(ip: Ipv6Addr) -> Option<Ipv4Addr> {
    let n = u128::from(ip);
    let low = Ipv4Addr::from((n & 0xffff_ffff) as u32);
    let high96 = n >> 32;
    match high96 {
        // ::a.b.c.d (compatible), ::ffff:a.b.c.d (mapped), ::ffff:0:a.b.c.d (SIIT)
        0 | 0xffff | 0xffff_0000 => Some(low),
        // 64:ff9b::a.b.c.d
        0x0064_ff9b_0000_0000_0000_0000 => Some(low),
        // 2002:AABB:CCDD::/48
        _ if n >> 112 == 0x2002 => Some(Ipv4Addr::from(((n >> 80) & 0xffff_ffff) as u32)),
        _ => None,
    }
}

fn is_global_v6(ip: Ipv6Addr) -> bool {
    if let Some(v4) = embedded_v4(ip) {
        return is_global_v4(v4);
    }
    let n = u128::from(ip);
    // global unicast only (this also refuses 64:ff9b:1::/48, 100::/64, ULA, link- and
    // site-local, multicast, loopback and unspecified)
    if !in_v6(n, (0x2000 << 112, 3)) {
        return false;
    }
    if in_v6(n, (0x2001 << 112, 23)) {
        return V6_GLOBAL_INSIDE_2001.iter().any(|b| in_v6(n, *b));
    }
    !(in_v6(n, (0x2001_0db8 << 96, 32)) || in_v6(n, (0x3fff << 112, 20)))
}

/// Whether a master may poll (or list) `ip`: a global address, or with `allow_private`
/// any unicast one (never the unspecified address, multicast or broadcast).
pub fn may_poll(ip: IpAddr, allow_private: bool) -> bool {
    let ip = canonical_ip(ip);
    if is_global(ip) {
        return true;
    }
    allow_private
        && match ip {
            IpAddr::V4(v4) => !(v4.is_unspecified() || v4.is_multicast() || v4.is_broadcast()),
            IpAddr::V6(v6) => !(v6.is_unspecified() || v6.is_multicast()),
        }
}

/// An address as a master stores it: an IPv4-mapped IPv6 address (`::ffff:a.b.c.d`) is
/// its IPv4 address, so that one server is one address whatever socket it came through.
pub fn canonical_ip(ip: IpAddr) -> IpAddr {
    match ip {
        IpAddr::V6(v6) => match v6.to_ipv4_mapped() {
            Some(v4) => IpAddr::V4(v4),
            None => ip,
        },
        v4 => v4,
    }
}

/// [`canonical_ip`] of a socket address, with its port.
pub fn canonical(addr: SocketAddr) -> SocketAddr {
    SocketAddr::new(canonical_ip(addr.ip()), addr.port())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn mapped_addresses_are_stored_as_ipv4() {
        let c = |s: &str| canonical(s.parse().unwrap()).to_string();
        assert_eq!(c("[::ffff:8.8.8.8]:1"), "8.8.8.8:1");
        assert_eq!(c("8.8.8.8:1"), "8.8.8.8:1");
        // only the mapped form is the same host; the others are other paths to it
        assert_eq!(c("[::8.8.8.8]:1"), "[::808:808]:1");
        assert_eq!(c("[2a00::1]:1"), "[2a00::1]:1");
    }

    #[test]
    fn allow_private_still_refuses_what_is_no_server() {
        for a in [
            "127.0.0.1",
            "10.0.0.1",
            "::1",
            "fe80::1",
            "::ffff:192.168.0.1",
        ] {
            assert!(!may_poll(a.parse().unwrap(), false), "{a}");
            assert!(may_poll(a.parse().unwrap(), true), "{a}");
        }
        for a in [
            "0.0.0.0",
            "::",
            "224.0.0.1",
            "ff02::1",
            "255.255.255.255",
            "::ffff:255.255.255.255",
        ] {
            assert!(!may_poll(a.parse().unwrap(), true), "{a}");
        }
    }
}
