//! Where a Minecraft server named without a port is, as the game client finds it: the
//! `_minecraft._tcp.HOST` SRV record when there is one, else port 25565. Only the
//! decisions are here (the name to look up, which record wins); the look-up itself is
//! the I/O layer's (`ogp_net::client::minecraft_srv`).

use super::DEFAULT_PORT;

/// The SRV service and protocol labels, in front of the host name.
pub const SRV_PREFIX: &str = "_minecraft._tcp.";

/// Longest host name looked up (DNS's limit on a whole name).
const MAX_NAME: usize = 253;

/// The SRV name to look up for `host` (a name without a port), or `None` when no
/// look-up is due: an IP address (v4, v6, or `[v6]`), an empty or over-long name, or
/// one with a port already.
pub fn srv_name(host: &str) -> Option<String> {
    let bare = host.trim_start_matches('[').trim_end_matches(']');
    if host.is_empty()
        || bare.parse::<std::net::IpAddr>().is_ok()
        || host.contains(':')
        || host.len() > MAX_NAME
    {
        return None;
    }
    Some(format!("{SRV_PREFIX}{}", host.trim_end_matches('.')))
}

/// One SRV record: priority, weight, port, target host.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SrvRecord {
    /// Lower is tried first.
    pub priority: u16,
    /// Among equal priorities, higher is preferred here (the game client takes one
    /// record; a fixed choice makes results repeatable).
    pub weight: u16,
    /// The server's port.
    pub port: u16,
    /// The server's host name (a trailing dot is dropped).
    pub target: String,
}

/// The `host:port` to connect to: the best record (lowest priority, then highest
/// weight, then the first), or `host:25565` when there is none usable (no record, a
/// target of `.` meaning "no service", or port 0).
pub fn pick(host: &str, records: &[SrvRecord]) -> (String, u16) {
    let best = records
        .iter()
        .filter(|r| r.port != 0 && !r.target.trim_end_matches('.').is_empty())
        .min_by_key(|r| (r.priority, std::cmp::Reverse(r.weight)));
    match best {
        Some(r) => (r.target.trim_end_matches('.').to_string(), r.port),
        None => (host.to_string(), DEFAULT_PORT),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rec(priority: u16, weight: u16, port: u16, target: &str) -> SrvRecord {
        SrvRecord {
            priority,
            weight,
            port,
            target: target.into(),
        }
    }

    #[test]
    fn names_get_a_look_up_and_addresses_do_not() {
        assert_eq!(
            srv_name("mc.example.org").as_deref(),
            Some("_minecraft._tcp.mc.example.org")
        );
        assert_eq!(
            srv_name("example.org.").as_deref(),
            Some("_minecraft._tcp.example.org")
        );
        for no in ["127.0.0.1", "::1", "[::1]", "", "a:25565"] {
            assert_eq!(srv_name(no), None, "{no}");
        }
        assert_eq!(srv_name(&"a".repeat(254)), None);
    }

    #[test]
    fn the_best_record_wins_and_none_falls_back_to_25565() {
        let records = [
            rec(20, 100, 1111, "backup.example.org."),
            rec(10, 5, 2222, "low.example.org."),
            rec(10, 50, 3333, "main.example.org."),
        ];
        assert_eq!(
            pick("example.org", &records),
            ("main.example.org".to_string(), 3333)
        );
        assert_eq!(pick("example.org", &[]), ("example.org".to_string(), 25565));
        // "." (no service) and port 0 are not used.
        assert_eq!(
            pick(
                "example.org",
                &[rec(0, 0, 25570, "."), rec(0, 0, 0, "x.org")]
            ),
            ("example.org".to_string(), 25565)
        );
    }
}
