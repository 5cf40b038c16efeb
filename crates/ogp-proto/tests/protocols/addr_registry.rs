//! `master::addr::is_global` against the IANA IPv4 and IPv6 Special-Purpose Address
//! Registries, written out here with their "Globally Reachable" column (issue 36, item
//! 1): random addresses inside each block and outside them all, and the edges of each
//! block, are judged as the most specific entry says. The few places where the master
//! is stricter than the registry are marked `Policy` with the reason.

use std::net::{IpAddr, Ipv4Addr, Ipv6Addr};

use ogp_proto::master::addr::{canonical, is_global, may_poll};
use proptest::prelude::*;

#[derive(Debug, Clone, Copy, PartialEq)]
enum Reach {
    /// "Globally Reachable: True".
    True,
    /// "Globally Reachable: False".
    False,
    /// Refused although the registry says True or N/A (the reason is next to it).
    Policy,
    /// An IPv6 form carrying an IPv4 address: judged by that address.
    ByV4,
}

/// The IPv4 registry (and multicast, from the multicast registry).
const V4: &[(&str, &str, Reach)] = &[
    ("0.0.0.0/8", "\"This network\"", Reach::False),
    ("0.0.0.0/32", "\"This host on this network\"", Reach::False),
    ("10.0.0.0/8", "Private-Use", Reach::False),
    ("100.64.0.0/10", "Shared Address Space", Reach::False),
    ("127.0.0.0/8", "Loopback", Reach::False),
    ("169.254.0.0/16", "Link Local", Reach::False),
    ("172.16.0.0/12", "Private-Use", Reach::False),
    ("192.0.0.0/24", "IETF Protocol Assignments", Reach::False),
    (
        "192.0.0.0/29",
        "IPv4 Service Continuity Prefix",
        Reach::False,
    ),
    ("192.0.0.8/32", "IPv4 dummy address", Reach::False),
    ("192.0.0.9/32", "Port Control Protocol Anycast", Reach::True),
    (
        "192.0.0.10/32",
        "Traversal Using Relays around NAT Anycast",
        Reach::True,
    ),
    ("192.0.0.170/32", "NAT64/DNS64 Discovery", Reach::False),
    ("192.0.0.171/32", "NAT64/DNS64 Discovery", Reach::False),
    ("192.0.2.0/24", "Documentation (TEST-NET-1)", Reach::False),
    ("192.31.196.0/24", "AS112-v4", Reach::True),
    ("192.52.193.0/24", "AMT", Reach::True),
    // deprecated (RFC 7526), its attributes no longer given: no server is there
    (
        "192.88.99.0/24",
        "Deprecated (6to4 Relay Anycast)",
        Reach::Policy,
    ),
    ("192.168.0.0/16", "Private-Use", Reach::False),
    (
        "192.175.48.0/24",
        "Direct Delegation AS112 Service",
        Reach::True,
    ),
    ("198.18.0.0/15", "Benchmarking", Reach::False),
    (
        "198.51.100.0/24",
        "Documentation (TEST-NET-2)",
        Reach::False,
    ),
    ("203.0.113.0/24", "Documentation (TEST-NET-3)", Reach::False),
    ("240.0.0.0/4", "Reserved", Reach::False),
    ("255.255.255.255/32", "Limited Broadcast", Reach::False),
    // not in the special-purpose registry: multicast is no server address
    ("224.0.0.0/4", "Multicast", Reach::Policy),
];

/// The IPv6 registry, and the forms that carry IPv4 addresses.
const V6: &[(&str, &str, Reach)] = &[
    ("::1/128", "Loopback Address", Reach::False),
    ("::/128", "Unspecified Address", Reach::False),
    ("::ffff:0:0/96", "IPv4-mapped Address", Reach::ByV4),
    // deprecated (RFC 4291), outside the registry: judged by its IPv4
    ("::/96", "IPv4-compatible Address", Reach::ByV4),
    // SIIT (RFC 6052 / 7915's IPv4-translated form), judged by its IPv4
    ("::ffff:0:0:0/96", "IPv4-translated Address", Reach::ByV4),
    ("64:ff9b::/96", "IPv4-IPv6 Translat.", Reach::ByV4),
    (
        "64:ff9b:1::/48",
        "IPv4-IPv6 Translat. (local-use)",
        Reach::False,
    ),
    ("100::/64", "Discard-Only Address Block", Reach::False),
    ("100:0:0:1::/64", "Dummy IPv6 Prefix", Reach::False),
    ("2001::/23", "IETF Protocol Assignments", Reach::False),
    // "N/A" in the registry; not reachable as a server address, its IPv4 obfuscated
    ("2001::/32", "TEREDO", Reach::Policy),
    (
        "2001:1::1/128",
        "Port Control Protocol Anycast",
        Reach::True,
    ),
    (
        "2001:1::2/128",
        "Traversal Using Relays around NAT Anycast",
        Reach::True,
    ),
    (
        "2001:1::3/128",
        "DNS-SD Service Registration Protocol Anycast",
        Reach::True,
    ),
    ("2001:2::/48", "Benchmarking", Reach::False),
    ("2001:3::/32", "AMT", Reach::True),
    ("2001:4:112::/48", "AS112-v6", Reach::True),
    (
        "2001:10::/28",
        "Deprecated (previously ORCHID)",
        Reach::False,
    ),
    // True in the registry, but ORCHIDs are identifiers, not locators (RFC 7343)
    ("2001:20::/28", "ORCHIDv2", Reach::Policy),
    // True in the registry, but DETs are ORCHIDv2-style identifiers (RFC 9374)
    (
        "2001:30::/28",
        "Drone Remote ID Protocol Entity Tags (DETs) Prefix",
        Reach::Policy,
    ),
    ("2001:db8::/32", "Documentation", Reach::False),
    ("2002::/16", "6to4", Reach::ByV4),
    (
        "2620:4f:8000::/48",
        "Direct Delegation AS112 Service",
        Reach::True,
    ),
    ("3fff::/20", "Documentation", Reach::False),
    ("5f00::/16", "Segment Routing (SRv6) SIDs", Reach::False),
    ("fc00::/7", "Unique-Local", Reach::False),
    ("fe80::/10", "Link-Local Unicast", Reach::False),
    // deprecated (RFC 3879), outside the registry
    ("fec0::/10", "Site-Local (deprecated)", Reach::Policy),
    ("ff00::/8", "Multicast", Reach::Policy),
];

fn v4_block(s: &str) -> (u32, u32) {
    let (a, l) = s.split_once('/').unwrap();
    (
        u32::from(a.parse::<Ipv4Addr>().unwrap()),
        l.parse().unwrap(),
    )
}

fn v6_block(s: &str) -> (u128, u32) {
    let (a, l) = s.split_once('/').unwrap();
    (
        u128::from(a.parse::<Ipv6Addr>().unwrap()),
        l.parse().unwrap(),
    )
}

fn host_mask(len: u32, bits: u32) -> u128 {
    if len == 0 {
        u128::MAX >> (128 - bits)
    } else {
        (1u128 << (bits - len)) - 1
    }
}

fn inside_v4(ip: u32, (net, len): (u32, u32)) -> bool {
    (ip as u128) & !host_mask(len, 32) & 0xffff_ffff == net as u128
}

fn inside_v6(ip: u128, (net, len): (u128, u32)) -> bool {
    ip & !host_mask(len, 128) == net
}

/// The registry's verdict: the most specific entry, else global (IPv4) or global
/// unicast `2000::/3` only (IPv6: the rest is reserved by the IETF).
fn expect_v4(ip: u32) -> bool {
    let best = V4
        .iter()
        .filter(|(b, _, _)| inside_v4(ip, v4_block(b)))
        .max_by_key(|(b, _, _)| v4_block(b).1);
    match best {
        None => true,
        Some((_, _, r)) => *r == Reach::True,
    }
}

fn expect_v6(ip: u128) -> bool {
    let best = V6
        .iter()
        .filter(|(b, _, _)| inside_v6(ip, v6_block(b)))
        .max_by_key(|(b, _, _)| v6_block(b).1);
    match best {
        None => ip >> 125 == 1,
        Some(("2002::/16", _, _)) => expect_v4((ip >> 80) as u32),
        Some((_, _, Reach::ByV4)) => expect_v4(ip as u32),
        Some((_, _, r)) => *r == Reach::True,
    }
}

fn check_v4(ip: u32) {
    let a = Ipv4Addr::from(ip);
    assert_eq!(is_global(IpAddr::V4(a)), expect_v4(ip), "{a}");
    // and the same as IPv4-mapped IPv6
    let m = IpAddr::V6(a.to_ipv6_mapped());
    assert_eq!(is_global(m), expect_v4(ip), "{m}");
}

fn check_v6(ip: u128) {
    let a = Ipv6Addr::from(ip);
    assert_eq!(is_global(IpAddr::V6(a)), expect_v6(ip), "{a}");
}

#[test]
fn the_edges_of_every_block() {
    for (b, name, _) in V4 {
        let (net, len) = v4_block(b);
        let last = net | host_mask(len, 32) as u32;
        for ip in [net, last, net.wrapping_sub(1), last.wrapping_add(1)] {
            check_v4(ip);
        }
        let _ = name;
    }
    for (b, _, _) in V6 {
        let (net, len) = v6_block(b);
        let last = net | host_mask(len, 128);
        for ip in [net, last, net.wrapping_sub(1), last.wrapping_add(1)] {
            check_v6(ip);
        }
    }
}

#[test]
fn the_issue_s_forms_are_refused_and_the_registry_s_exceptions_taken() {
    for a in [
        "::10.0.0.1",
        "64:ff9b::a9fe:a9fe",
        "2002:7f00:1::1",
        "2001:0:53aa:64c:0:fbff:4aff:fffe",
        "::ffff:0:10.0.0.1",
        "::ffff:127.0.0.1",
        "fec0::1",
        "100::1",
        "3fff::1",
        "2001:db8::1",
        "2001:2::1",
        "198.18.0.1",
        "2001:10::1",
        "2001:20::1",
        "224.0.0.1",
        "::",
        "255.255.255.255",
        "0.0.0.1",
        "240.1.2.3",
        "100.64.0.1",
        "192.0.0.1",
    ] {
        assert!(!is_global(a.parse().unwrap()), "{a}");
        assert!(!may_poll(a.parse().unwrap(), false), "{a}");
    }
    for a in [
        "2001:1::1",
        "2001:4:112::1",
        "192.31.196.1",
        "192.175.48.1",
        "8.8.8.8",
        "::ffff:8.8.8.8",
        "2620:4f:8000::1",
    ] {
        assert!(is_global(a.parse().unwrap()), "{a}");
    }
}

#[test]
fn mapped_and_plain_ipv4_are_one_address() {
    let a = canonical("[::ffff:8.8.8.8]:27015".parse().unwrap());
    assert_eq!(a, "8.8.8.8:27015".parse().unwrap());
}

fn v4_strategy() -> impl Strategy<Value = u32> {
    let blocks: Vec<(u32, u32)> = V4.iter().map(|(b, _, _)| v4_block(b)).collect();
    prop_oneof![
        any::<u32>(),
        (0..blocks.len(), any::<u32>()).prop_map(move |(i, r)| {
            let (net, len) = blocks[i];
            net | (r & host_mask(len, 32) as u32)
        }),
    ]
}

fn v6_strategy() -> impl Strategy<Value = u128> {
    let blocks: Vec<(u128, u32)> = V6.iter().map(|(b, _, _)| v6_block(b)).collect();
    let v4s: Vec<(u32, u32)> = V4.iter().map(|(b, _, _)| v4_block(b)).collect();
    prop_oneof![
        any::<u128>(),
        // global unicast, where servers are
        any::<u128>().prop_map(|r| (1u128 << 125) | (r >> 3)),
        (0..blocks.len(), any::<u128>()).prop_map(move |(i, r)| {
            let (net, len) = blocks[i];
            net | (r & host_mask(len, 128))
        }),
        // an IPv4 of a special block in each form that carries one
        (0..v4s.len(), any::<u32>(), 0..5usize, any::<u128>()).prop_map(move |(i, r, f, h)| {
            let (net, len) = v4s[i];
            let v4 = u128::from(net | (r & host_mask(len, 32) as u32));
            match f {
                0 => v4,
                1 => (0xffff << 32) | v4,
                2 => (0xffff_0000 << 32) | v4,
                3 => (0x0064_ff9b << 96) | v4,
                _ => (0x2002 << 112) | (v4 << 80) | (h & ((1 << 80) - 1)),
            }
        }),
    ]
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(10_000))]

    #[test]
    fn ipv4_as_the_registry_says(ip in v4_strategy()) {
        check_v4(ip);
    }

    #[test]
    fn ipv6_as_the_registry_says(ip in v6_strategy()) {
        check_v6(ip);
    }
}
