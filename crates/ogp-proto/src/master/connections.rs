//! Which connections a server over TCP (the master's HTTP side) takes: at most
//! [`ConnectionLimits::per_source`] at once from one source (an IPv4 address, or an IPv6
//! /64, as the rate limiters count) and [`ConnectionLimits::total`] in all. A connection
//! over either cap is refused at once, so that one source holding its share of idle
//! connections leaves the others room.
//!
//! The table holds one entry per source with a connection open, so it never has more
//! than `total` entries, whatever the number of sources. Sans-IO: the caller accepts,
//! asks [`Connections::admit`], and calls [`Connections::release`] with the returned
//! [`Admitted`] when the connection ends.

use std::collections::HashMap;
use std::net::IpAddr;

use crate::guard::source_key;

/// The caps of [`Connections`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub struct ConnectionLimits {
    /// Connections open at once from one source (IPv4 address, IPv6 /64); at least 1.
    pub per_source: usize,
    /// Connections open at once in all; at least 1.
    pub total: usize,
}

impl ConnectionLimits {
    /// Caps of `per_source` connections per source and `total` in all (0 is taken as 1).
    pub fn new(per_source: usize, total: usize) -> Self {
        Self {
            per_source: per_source.max(1),
            total: total.max(1),
        }
    }
}

/// Why a connection was refused.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum Refused {
    /// Its source already holds [`ConnectionLimits::per_source`] connections.
    Source,
    /// [`ConnectionLimits::total`] connections are open.
    Total,
}

impl Refused {
    /// A short name for logs and metrics labels (`source`, `total`).
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Source => "source",
            Self::Total => "total",
        }
    }
}

impl std::fmt::Display for Refused {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Self::Source => f.write_str("too many connections from this source"),
            Self::Total => f.write_str("too many connections"),
        }
    }
}

/// A connection taken by [`Connections::admit`]; give it back to
/// [`Connections::release`] when the connection ends.
#[derive(Debug, PartialEq, Eq)]
#[must_use = "a connection admitted must be released"]
pub struct Admitted {
    key: (u8, u64),
}

/// The open connections, counted per source and in total.
#[derive(Debug, Clone)]
pub struct Connections {
    limits: ConnectionLimits,
    open: usize,
    by_source: HashMap<(u8, u64), usize>,
}

impl Connections {
    /// No connection open yet.
    pub fn new(limits: ConnectionLimits) -> Self {
        Self {
            limits,
            open: 0,
            by_source: HashMap::new(),
        }
    }

    /// The caps.
    pub fn limits(&self) -> ConnectionLimits {
        self.limits
    }

    /// Takes a new connection from `ip`, or says why not.
    pub fn admit(&mut self, ip: IpAddr) -> Result<Admitted, Refused> {
        let key = source_key(ip);
        let held = self.by_source.get(&key).copied().unwrap_or(0);
        if held >= self.limits.per_source {
            return Err(Refused::Source);
        }
        if self.open >= self.limits.total {
            return Err(Refused::Total);
        }
        self.by_source.insert(key, held.saturating_add(1));
        self.open = self.open.saturating_add(1);
        Ok(Admitted { key })
    }

    /// Ends a connection that [`admit`](Self::admit) took.
    pub fn release(&mut self, admitted: Admitted) {
        if let Some(n) = self.by_source.get_mut(&admitted.key) {
            *n = n.saturating_sub(1);
            if *n == 0 {
                self.by_source.remove(&admitted.key);
            }
            self.open = self.open.saturating_sub(1);
        }
    }

    /// Connections open now.
    pub fn open(&self) -> usize {
        self.open
    }

    /// Sources with a connection open now.
    pub fn sources(&self) -> usize {
        self.by_source.len()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ip(s: &str) -> IpAddr {
        s.parse().unwrap()
    }

    #[test]
    fn one_source_holds_its_cap_and_others_still_get_in() {
        let mut c = Connections::new(ConnectionLimits::new(3, 5));
        let held: Vec<_> = (0..3).map(|_| c.admit(ip("127.0.0.2")).unwrap()).collect();
        assert_eq!(c.admit(ip("127.0.0.2")), Err(Refused::Source));
        let other = c.admit(ip("127.0.0.1")).unwrap();
        assert_eq!((c.open(), c.sources()), (4, 2));
        c.release(other);
        for h in held {
            c.release(h);
        }
        assert_eq!((c.open(), c.sources()), (0, 0));
        assert!(c.admit(ip("127.0.0.2")).is_ok());
    }

    #[test]
    fn the_total_cap_holds_over_many_sources() {
        let mut c = Connections::new(ConnectionLimits::new(2, 4));
        for i in 1..=4u8 {
            let _ = c.admit(IpAddr::from([10, 0, 0, i])).unwrap();
        }
        assert_eq!(c.admit(ip("10.0.0.9")), Err(Refused::Total));
        assert_eq!(c.sources(), 4);
    }

    #[test]
    fn an_ipv6_64_is_one_source_and_mapped_ipv4_is_ipv4() {
        let mut c = Connections::new(ConnectionLimits::new(1, 10));
        let _a = c.admit(ip("2001:db8::1")).unwrap();
        assert_eq!(c.admit(ip("2001:db8::2")), Err(Refused::Source));
        assert!(c.admit(ip("2001:db8:0:1::1")).is_ok());
        let _b = c.admit(ip("192.0.2.1")).unwrap();
        assert_eq!(c.admit(ip("::ffff:192.0.2.1")), Err(Refused::Source));
    }

    #[test]
    fn zero_caps_are_one() {
        let l = ConnectionLimits::new(0, 0);
        assert_eq!((l.per_source, l.total), (1, 1));
    }
}
