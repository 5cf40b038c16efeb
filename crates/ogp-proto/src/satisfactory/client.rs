//! The Satisfactory lightweight query as a machine of the core's one-request shape: the
//! poll, resent by the core's timers until a reply with our cookie decodes.
//!
//! | Status field | from |
//! |---|---|
//! | `host_name` | the name |
//! | `game_version` | the net change list (the build), as gamedig shows it |
//! | `rules` | `server_state` (`offline`, `idle`, `loading`, `playing`, or the number), `change_list`, `server_flags`, `modded` (flag bit 0: `0` or `1`), `substates` (`id:version`, comma-separated) |
//!
//! `game_name` is `Satisfactory`. No player count: the lightweight query has none.

use super::{decode_reply, request, Reply};
use crate::client_oneshot::{oneshot_machine, OneShot, Read};
use crate::model::Rules;
use crate::protocol::Protocol;
use crate::Status;

/// What a Satisfactory answer says beyond the status: the reply as sent.
pub type Details = Reply;

/// The status a reply describes (see the module's table).
pub fn reply_to_status(r: &Reply) -> Status {
    let state = match r.state {
        0 => "offline".to_string(),
        1 => "idle".into(),
        2 => "loading".into(),
        3 => "playing".into(),
        n => n.to_string(),
    };
    let subs: Vec<String> = r
        .sub_states
        .iter()
        .map(|(i, v)| format!("{i}:{v}"))
        .collect();
    Status {
        game_name: Some("Satisfactory".into()),
        host_name: Some(r.name.clone()),
        game_version: Some(r.change_list.to_string().into()),
        rules: Some(Rules(vec![
            ("server_state".into(), state.into()),
            ("change_list".into(), r.change_list.to_string().into()),
            ("server_flags".into(), r.flags.to_string().into()),
            (
                "modded".into(),
                if r.flags & 1 != 0 { "1" } else { "0" }.into(),
            ),
            ("substates".into(), subs.join(",").into()),
        ])),
        ..Status::default()
    }
}

/// Satisfactory on the one-request shape: the cookie of one query.
#[derive(Debug, Clone)]
pub struct Satisfactory {
    cookie: u64,
}

impl OneShot for Satisfactory {
    type Details = Details;
    const WHAT: &'static str = "poll";

    fn new(id: u32) -> Self {
        // `ogp!` above the query's id
        Self {
            cookie: (0x2170_676F_u64 << 32) | u64::from(id),
        }
    }

    fn request(&self, out: &mut Vec<u8>) {
        request(self.cookie, out);
    }

    fn read(&mut self, datagram: &[u8]) -> Read<Details> {
        match decode_reply(datagram) {
            Ok(r) if r.cookie != self.cookie => Read::NotOurs("not a reply with our cookie"),
            got => Read::decoded(got, 12, "not a Satisfactory reply", |r| {
                (reply_to_status(&r), r.clone(), r.warnings)
            }),
        }
    }
}

oneshot_machine!(Protocol::Satisfactory, Satisfactory, Details);

#[cfg(test)]
mod tests {
    use std::time::Instant;

    use super::*;
    use crate::client_core::{drive_to_end, QueryDriver, QueryError, Timing};

    fn reply(cookie: u64) -> Reply {
        Reply {
            version: 1,
            cookie,
            state: 3,
            change_list: 385_304,
            flags: 1,
            sub_states: vec![(0, 5), (1, 2)],
            name: "Ficsit Test Factory".into(),
            warnings: Vec::new(),
        }
    }

    #[test]
    fn only_a_reply_with_our_cookie_answers() {
        let t0 = Instant::now();
        let mut m = QueryMachine::new(QueryOptions::default(), Timing::default(), 7, t0);
        let mut d = Vec::new();
        assert!(m.poll_transmit_into(t0, &mut d));
        assert_eq!(d.len(), super::super::REQUEST_LEN);
        assert_eq!(&d[..4], b"\xd5\xf6\x00\x01");
        let cookie = u64::from_le_bytes(d[4..12].try_into().unwrap());
        let mut b = Vec::new();
        reply(cookie ^ 1).encode(&mut b);
        m.handle_datagram(t0, &b);
        assert!(m.take_result().is_none());
        b.clear();
        reply(cookie).encode(&mut b);
        assert_eq!(decode_reply(&b).unwrap(), reply(cookie));
        m.handle_datagram(t0, &b);
        let a = m.take_result().unwrap().unwrap();
        assert_eq!(a.status.host_name.as_deref(), Some("Ficsit Test Factory"));
        assert_eq!(a.status.game_version.as_deref(), Some("385304"));
        let rules = a.status.rules.unwrap();
        assert_eq!(rules.get("server_state"), Some("playing"));
        assert_eq!(rules.get("modded"), Some("1"));
        assert!(a.warnings.is_empty());
    }

    #[test]
    fn hostile_replies_are_errors_or_dropped() {
        let mut b = Vec::new();
        reply(5).encode(&mut b);
        for n in 0..b.len() - 1 {
            assert!(decode_reply(&b[..n]).is_err(), "{n}");
        }
        // a name length past the datagram
        let mut lying = b.clone();
        let at = b.len() - 2 - 19;
        lying[at..at + 2].copy_from_slice(&60_000u16.to_le_bytes());
        assert_eq!(decode_reply(&lying).unwrap_err().field, "name");
        // 255 sub-states announced, few sent
        let mut subs = b.clone();
        subs[25] = 255;
        assert!(decode_reply(&subs).is_err());
        // no terminator, invalid UTF-8: warnings
        let mut odd = b[..b.len() - 1].to_vec();
        let last = odd.len() - 1;
        odd[last] = 0xff;
        assert_eq!(decode_reply(&odd).unwrap().warnings.len(), 2);

        let t0 = Instant::now();
        let mut m = QueryMachine::new(QueryOptions::default(), Timing::default(), 1, t0);
        assert_eq!(drive_to_end(&mut m, t0, Some(&b)), 3);
        assert!(matches!(
            m.take_result(),
            Some(Err(QueryError::NoAnswer { .. }))
        ));
    }
}
