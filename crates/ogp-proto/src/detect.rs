//! Which protocol a datagram belongs to, from its first bytes, without decoding it:
//! `ogp decode` guesses with it, and auto-detection hands each reply only to the query
//! machines of its protocol ([`Machine::claims`](crate::client::Machine::claims)), so
//! that one protocol's answer is never read as another's malformed reply. The tests are
//! each protocol's entry's signatures; nothing below the protocols imports it.

use std::collections::HashMap;
use std::sync::OnceLock;
use std::time::Instant;

use crate::client_core::Timing;
use crate::protocol::Protocol;

/// Guesses which protocol one datagram (query or reply) belongs to from its first
/// bytes (and, for GQP, its last byte), without decoding it:
///
/// * `FF FF FF FF "OGP\0"`: [`Ogp`](Protocol::Ogp). The OGP v0.02 draft starts with the
///   same eight bytes, so this is never [`OgpDraft`](Protocol::OgpDraft): a caller that
///   expects the draft must try decoding with both;
/// * `FF FF FF FF` and `getinfo`, `getstatus`, `infoResponse` or `statusResponse`:
///   [`Quake3`](Protocol::Quake3);
/// * `01`, `02` or `1C` with RakNet's offline-message magic after the time (and GUID):
///   [`Bedrock`](Protocol::Bedrock);
/// * any other `FF FF FF FF`, or the split prefix `FE FF FF FF`: [`A2s`](Protocol::A2s);
/// * `FE FD` (a request), or `00` / `03` / `05` / `09` followed by at least a session
///   id (a reply or heartbeat): [`Gamespy3`](Protocol::Gamespy3);
/// * `\` and a query word (`\status\`), or `\key\value` pairs with a `queryid`,
///   `final`, `gamename`, `hostname` or `echo` key: [`Gamespy1`](Protocol::Gamespy1);
/// * anything else ending with GQP's `EOT` or `ETB`: [`Gqp`](Protocol::Gqp).
///
/// `None` when none of these fits. A `Some` is only a guess: the datagram may still
/// fail to decode. The tests are the entries' [signatures](crate::protocol::Entry::signatures),
/// tried [tier](crate::protocol::Tier) by tier.
pub fn guess(datagram: &[u8]) -> Option<Protocol> {
    crate::entries::SIGNATURES
        .iter()
        .find(|(_, s)| (s.matches)(datagram))
        .map(|(p, _)| *p)
}

/// The datagram protocols auto-detection asks ([`Protocol::AUTO`]) in the order their
/// probes go out for a server on `port`: first those whose games of the catalogue
/// ([`crate::games::catalogue`]) answer queries on that port by default, the most games
/// first (27015: A2S; 29900: GameSpy v3; 27960: Quake III; 19132: Bedrock), then the
/// rest in [`Protocol::AUTO`]'s order (all of them so without the `games` feature).
/// Which answer wins when several do is still
/// [`Protocol::rank`]; this is only who is asked first.
pub fn probe_order(port: u16) -> [Protocol; Protocol::AUTO.len()] {
    // Games per (default query port, protocol), counted once: a scan asks per target.
    static PORTS: OnceLock<HashMap<(u16, Protocol), usize>> = OnceLock::new();
    let ports = PORTS.get_or_init(|| {
        // Without the catalogue (the `games` feature off), AUTO's order as it is.
        #[cfg_attr(not(feature = "games"), allow(unused_mut))]
        let mut m = HashMap::new();
        #[cfg(feature = "games")]
        for g in crate::games::catalogue().games() {
            if let Some(q) = g.query_port(None) {
                *m.entry((q, g.protocol)).or_insert(0) += 1;
            }
        }
        m
    });
    let mut order = Protocol::AUTO;
    // Stable: ties keep AUTO's order.
    order.sort_by_key(|p| std::cmp::Reverse(ports.get(&(port, *p)).copied().unwrap_or(0)));
    order
}

/// The rounds of auto-detection's probes while a server is silent: every protocol's
/// probe goes out at the start of a round, together with the others, and at most one
/// datagram of each protocol per round until the server is heard from. Round `k` starts
/// when attempt `k` of one protocol would ([`Timing::attempt_timeout`], growing by
/// [`Timing::backoff_percent`]); there are [`Timing::retries`] + 1 of them, and after
/// the last one ([`end`](Self::end)) a protocol that has heard nothing is done. A
/// silent server so costs (retries + 1) datagrams per protocol, within
/// [`Timing::attempts_total`], whatever each protocol's own steps and fallbacks.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Rounds {
    /// When the detection started.
    begin: Instant,
    /// When each round starts (the first at the start), then the end.
    starts: Vec<Instant>,
}

/// The shortest round (an attempt timeout of 0 still sends).
const MIN_ROUND: std::time::Duration = std::time::Duration::from_millis(1);
/// The longest round: a day (longer attempt timeouts are clamped, so that the rounds
/// stay on the clock).
const MAX_ROUND: std::time::Duration = std::time::Duration::from_secs(86_400);

impl Rounds {
    /// The rounds of a detection starting at `now` (at most 65: retries are capped at
    /// 64 as in the attempt timer).
    pub fn new(timing: &Timing, now: Instant) -> Self {
        let mut starts = Vec::with_capacity(timing.retries.min(64) as usize + 2);
        let mut t = now;
        let mut step = timing.attempt_timeout;
        starts.push(t);
        for _ in 0..=timing.retries.min(64) {
            // A zero step (an attempt timeout of 0, or one grown to 0 ms by rounding)
            // would put every round at `now`, and a step past the clock's range would
            // repeat `t`: either way no round would ever run and no probe go out. At
            // least a millisecond; and at most a day (an attempt timeout of
            // `Duration::MAX` still gives its rounds), no rounds past the clock's end.
            let step_now = step.clamp(MIN_ROUND, MAX_ROUND);
            let Some(next) = t.checked_add(step_now) else {
                break;
            };
            t = next;
            starts.push(t);
            step = crate::client_core::grow(step, timing.backoff_percent);
        }
        Self { begin: now, starts }
    }

    /// The round running at `now` (0 for the first); `None` before the start and from
    /// [`end`](Self::end) on.
    pub fn current(&self, now: Instant) -> Option<u32> {
        let k = self.starts.iter().take_while(|s| **s <= now).count();
        (k > 0 && k < self.starts.len())
            .then(|| u32::try_from(k - 1).ok())
            .flatten()
    }

    /// When the next round starts after `now` (or the rounds end); `None` once they
    /// have ended.
    pub fn next(&self, now: Instant) -> Option<Instant> {
        self.starts.iter().copied().find(|s| *s > now)
    }

    /// When the last round ends.
    pub fn end(&self) -> Instant {
        // `starts` always holds the start (`new`); the fallback is never taken
        self.starts.last().copied().unwrap_or(self.begin)
    }

    /// How many rounds there are.
    pub fn count(&self) -> usize {
        self.starts.len().saturating_sub(1)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    /// An attempt timeout of zero still gives rounds that run (one probe each), not
    /// rounds that all start and end at once with nothing sent.
    #[test]
    fn a_zero_attempt_timeout_still_runs_its_rounds() {
        let t0 = Instant::now();
        let r = Rounds::new(
            &Timing::default().attempt_timeout(Duration::ZERO).retries(2),
            t0,
        );
        assert_eq!(r.count(), 3);
        assert_eq!(r.current(t0), Some(0));
        assert!(r.end() > t0);
    }

    /// An attempt timeout past the clock's range (`Duration::MAX`) still gives its
    /// rounds, each a day at most: before, the first step overflowed and no round ran.
    #[test]
    fn an_overflowing_attempt_timeout_still_runs_its_rounds() {
        let t0 = Instant::now();
        let r = Rounds::new(
            &Timing::default().attempt_timeout(Duration::MAX).retries(2),
            t0,
        );
        assert_eq!(r.count(), 3);
        assert_eq!(r.current(t0), Some(0));
        assert_eq!(r.next(t0), Some(t0 + MAX_ROUND));
        assert_eq!(r.end(), t0 + MAX_ROUND * 3);
    }

    #[test]
    fn rounds_start_with_each_attempt_and_end_after_the_last() {
        let t0 = Instant::now();
        let ms = Duration::from_millis;
        // The scan's defaults: 500 ms growing 1.1x, 3 retries: 2.32 s in all.
        let timing = Timing::default()
            .attempt_timeout(ms(500))
            .backoff_percent(110)
            .retries(3);
        let r = Rounds::new(&timing, t0);
        assert_eq!(r.count(), 4);
        assert_eq!(r.current(t0), Some(0));
        assert_eq!(r.current(t0 + ms(499)), Some(0));
        assert_eq!(r.current(t0 + ms(500)), Some(1));
        assert_eq!(r.current(t0 + ms(1050)), Some(2));
        assert_eq!(r.current(t0 + ms(1655)), Some(3));
        assert_eq!(r.end(), t0 + timing.attempts_total());
        assert_eq!(r.current(r.end()), None);
        assert_eq!(r.next(t0), Some(t0 + ms(500)));
        assert_eq!(r.next(r.end()), None);
        // Retries are capped: never more than 65 rounds.
        let r = Rounds::new(&timing.retries(u32::MAX), t0);
        assert_eq!(r.count(), 65);
    }

    #[test]
    fn probes_go_out_in_the_order_of_the_catalogue_s_ports() {
        // A2S's port puts it first; the others keep AUTO's order.
        let o = probe_order(27015);
        assert_eq!(o[0], Protocol::A2s);
        assert_eq!(probe_order(29900)[0], Protocol::Gamespy3);
        assert_eq!(probe_order(27960)[0], Protocol::Quake3);
        assert_eq!(probe_order(19132)[0], Protocol::Bedrock);
        // A port no game uses: AUTO's order.
        assert_eq!(probe_order(1), Protocol::AUTO);
        for port in [1, 27015, 29900] {
            let mut o = probe_order(port).to_vec();
            o.sort_by_key(|p| p.rank());
            assert_eq!(o, Protocol::AUTO.to_vec(), "every protocol once");
        }
    }

    #[test]
    fn guess_names_each_protocol_from_its_first_bytes() {
        use crate::text::from_hex;
        let g = |h: &str| guess(&from_hex(h).unwrap());
        // OGP v1.01 probe; the draft's datagrams look the same and are guessed as OGP
        assert_eq!(g("ffffffff4f475000030100"), Some(Protocol::Ogp));
        assert_eq!(g("ffffffff4f4750000002"), Some(Protocol::Ogp));
        // A2S: INFO request, challenge, split fragment
        assert_eq!(
            g("ffffffff54536f7572636520456e67696e6520517565727900"),
            Some(Protocol::A2s)
        );
        assert_eq!(g("ffffffff414bf4d522"), Some(Protocol::A2s));
        assert_eq!(g("feffffff0100000002000000"), Some(Protocol::A2s));
        // GameSpy v3: requests, challenge reply, info reply, heartbeat
        assert_eq!(g("fefd0910203040"), Some(Protocol::Gamespy3));
        assert_eq!(g("fefd08"), Some(Protocol::Gamespy3));
        assert_eq!(
            g("09102030403237313131383736 00".replace(' ', "").as_str()),
            Some(Protocol::Gamespy3)
        );
        assert_eq!(g("001020304073706c69746e756d00"), Some(Protocol::Gamespy3));
        assert_eq!(g("0301020304"), Some(Protocol::Gamespy3));
        // GQP: a query and a reply, plain text ending with EOT
        assert_eq!(g("6964656e7469667904"), Some(Protocol::Gqp));
        assert_eq!(g("3030696465"), None);
        assert_eq!(g("303069646504"), Some(Protocol::Gqp));
        // nothing: empty, too short, unknown first byte
        assert_eq!(guess(&[]), None);
        assert_eq!(g("00"), None);
        assert_eq!(g("ffff"), None);
        assert_eq!(g("7a7a7a"), None);
    }

    #[test]
    fn replies_are_told_apart_by_their_first_bytes() {
        assert_eq!(
            guess(b"\xff\xff\xff\xffOGP\0\x08\x00\x00"),
            Some(Protocol::Ogp)
        );
        assert_eq!(guess(b"\xff\xff\xff\xffI\x11name\0"), Some(Protocol::A2s));
        assert_eq!(
            guess(b"\xfe\xff\xff\xff\x01\0\0\0\x02\0"),
            Some(Protocol::A2s)
        );
        assert_eq!(
            guess(b"\x09\x12\x34\x56\x78123\0"),
            Some(Protocol::Gamespy3)
        );
        assert_eq!(guess(b"GQP 1\n\x04"), Some(Protocol::Gqp));
        // Quake III shares A2S's FF FF FF FF; its words tell it apart
        for q3 in [
            &b"\xff\xff\xff\xffgetinfo abc"[..],
            b"\xff\xff\xff\xffgetstatus",
            b"\xff\xff\xff\xffinfoResponse\n\\a\\b",
            b"\xff\xff\xff\xffstatusResponse\n",
        ] {
            assert_eq!(guess(q3), Some(Protocol::Quake3));
        }
        assert_eq!(guess(b"\xff\xff\xff\xffgetinfoX"), Some(Protocol::A2s));
        // Bedrock: a ping and a pong carry RakNet's magic; without it, nothing
        let magic = "00ffff00fefefefefdfdfdfd12345678";
        let ping = format!("01{}{magic}{}", "00".repeat(8), "00".repeat(8));
        let pong = format!("1c{}{magic}0000", "00".repeat(16));
        for h in [&ping, &pong] {
            assert_eq!(
                guess(&crate::text::from_hex(h).unwrap()),
                Some(Protocol::Bedrock)
            );
        }
        assert_eq!(guess(b"\x1c\0\0"), None);
        assert_eq!(guess(b""), None);
        assert_eq!(guess(b"\x7f"), None);
    }

    /// Our own binary requests that end or start like other protocols' text are still
    /// told apart, whatever the random id: a Cube 2 ping whose id ends in `04` (GQP's
    /// EOT) and a Mumble ping whose ident has zero bytes (a GameSpy v2 reply starts with
    /// `00` and an id).
    #[test]
    fn random_ids_do_not_change_the_guess() {
        use crate::protocol::Protocol;
        for last in [0x04u8, 0x17, 0x00, 0x41] {
            let ping = [0x81, 0x12, 0x34, 0x56, last];
            assert_eq!(guess(&ping), Some(Protocol::Cube2), "{ping:02x?}");
        }
        for id in [
            0u32,
            0x0000_0100,
            0x0001_0000,
            0x0100_0000,
            0x4100_0000,
            0x0041_0000,
        ] {
            let mut ping = Vec::new();
            crate::mumble::Request::new(id).encode(&mut ping);
            assert_eq!(guess(&ping), Some(Protocol::Mumble), "{ping:02x?}");
        }
    }
}
