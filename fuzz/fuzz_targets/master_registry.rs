//! What reaches a master's UDP port (`ogp_proto::master::registry`): arbitrary datagrams
//! from a few sources, classified and fed to one `Registrar` as registrations or as
//! replies to its verification queries, with time moving on.
//!
//! Input: a sequence of records `[op: u8] [len: u8] [len bytes]`. `op & 3` picks the
//! source (127.0.0.1–4, port 22222 + op>>2 & 3); bit 4 set advances the clock by
//! `len * 50` ms before the datagram; bit 5 marks the source as already listed.
//!
//! Asserts: no panic; what the registrar hands out goes only to sources it heard from;
//! toward every source it never sends more bytes than it received from it; pending
//! verifications stay within the configured cap; every verdict names a source it heard
//! from; and nothing is verified unless a source sent a datagram that was not a
//! registration (an answer).

use std::collections::HashMap;
use std::net::SocketAddr;
use std::time::{Duration, Instant};

use ogp_proto::master::registry::{classify, Inbound, Known, Registrar, RegistrarConfig, Verdict};

/// One input of the `master_registry` target.
pub fn run(data: &[u8]) {
    let t0 = Instant::now();
    let mut now = t0;
    let mut config = RegistrarConfig::default().allow_private(true);
    config.max_pending = 3;
    let mut reg = Registrar::new(config, [5; 16], t0);
    let mut received: HashMap<SocketAddr, u64> = HashMap::new();
    let mut sent: HashMap<SocketAddr, u64> = HashMap::new();
    let mut answered: HashMap<SocketAddr, bool> = HashMap::new();
    let mut rest = data;
    for _ in 0..256 {
        let [op, len, tail @ ..] = rest else { break };
        let n = usize::from(*len).min(tail.len());
        let (d, next) = tail.split_at(n);
        rest = next;
        let from = SocketAddr::from(([127, 0, 0, 1 + (op & 3)], 22222 + u16::from((op >> 2) & 3)));
        if op & 0x10 != 0 {
            now += Duration::from_millis(u64::from(*len) * 50);
            reg.handle_timeout(now);
        }
        *received.entry(from).or_default() += d.len() as u64;
        match classify(d) {
            Ok(Inbound::Registration(r)) => {
                let known = Known {
                    listed: op & 0x20 != 0,
                    servers_on_ip: 0,
                };
                reg.register(now, from, &r, d.len(), known);
            }
            _ => {
                if reg.handle_reply(now, from, d) {
                    answered.insert(from, true);
                }
            }
        }
        while let Some((to, out)) = reg.poll_transmit(now) {
            *sent.entry(to).or_default() += out.len() as u64;
            let got = received.get(&to).copied().unwrap_or(0);
            assert!(
                sent[&to] <= got,
                "{to}: sent {} > received {got}",
                sent[&to]
            );
        }
        assert!(reg.pending() <= 3);
        while let Some(v) = reg.poll_verdict() {
            match v {
                Verdict::Verified { addr, .. } => {
                    assert!(
                        answered.contains_key(&addr),
                        "{addr} verified without an answer"
                    );
                }
                Verdict::Failed { addr, .. } => assert!(received.contains_key(&addr)),
            }
        }
    }
    let s = reg.stats();
    assert!(s.sent_bytes <= s.received_bytes);
}
