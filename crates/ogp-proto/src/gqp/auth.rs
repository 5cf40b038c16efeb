//! Address proof and authentication for GQP, without any per-client state (G15–G17).
//!
//! * **Address-proof token**: the `challenge` extension command hands out
//!   [`ChallengeKeys::issue`] for the source IP and GQP's id in the keys as 8 lower-case
//!   hex digits. A query that carries `challenge RS <token>` with a valid token proves
//!   that its source receives what is sent to it; only then may a reply be larger than
//!   its query.
//! * **login / validate**: `login RS <user>` answers a 64-bit challenge bound to the
//!   source IP and the user ([`ChallengeKeys::issue_bound`]), as 16 hex digits. The client
//!   answers `validate RS <user> RS <response>` where the response is the lower-case hex
//!   HMAC-SHA256 keyed with the password over the challenge's 16 hex digits. The password
//!   never crosses the wire; the server checks the challenges of the current and the
//!   previous key period, in constant time.
//!
//! Nothing here stores anything or panics.

use std::net::IpAddr;
use std::time::Instant;

use hmac::{Hmac, Mac};
use sha2::Sha256;

use crate::guard::ChallengeKeys;
use crate::model::Text;

type HmacSha256 = Hmac<Sha256>;

/// Length of an address-proof token on the wire (hex digits).
pub const TOKEN_LEN: usize = 8;
/// Length of a login challenge on the wire (hex digits).
pub const LOGIN_CHALLENGE_LEN: usize = 16;
/// Length of a `validate` response on the wire (hex digits of an HMAC-SHA256).
pub const RESPONSE_LEN: usize = 64;

/// The token `value` as sent: 8 lower-case hex digits.
pub fn format_token(value: u32) -> Text {
    compact_str::format_compact!("{value:08x}")
}

/// Reads a token: exactly 8 hex digits (either case).
pub fn parse_token(s: &str) -> Option<u32> {
    if s.len() != TOKEN_LEN || !s.bytes().all(|b| b.is_ascii_hexdigit()) {
        return None;
    }
    u32::from_str_radix(s, 16).ok()
}

/// Whether `arg` asks for a token rather than presenting one: one or more `0` (G15).
pub fn is_token_request(arg: &str) -> bool {
    !arg.is_empty() && arg.bytes().all(|b| b == b'0')
}

/// The address-proof token for `ip` now.
pub fn issue_token(keys: &mut ChallengeKeys, now: Instant, ip: IpAddr) -> Text {
    format_token(keys.issue(now, super::GUARD_ID, ip))
}

/// Whether `token` (as sent) proves `ip` now.
pub fn verify_token(keys: &mut ChallengeKeys, now: Instant, ip: IpAddr, token: &str) -> bool {
    parse_token(token).is_some_and(|t| keys.verify(now, super::GUARD_ID, ip, t))
}

fn format_login_challenge(value: u64) -> Text {
    compact_str::format_compact!("{value:016x}")
}

/// The login challenge for `user` at `ip` now, as sent.
pub fn issue_login_challenge(
    keys: &mut ChallengeKeys,
    now: Instant,
    ip: IpAddr,
    user: &str,
) -> Text {
    format_login_challenge(keys.issue_bound(now, super::GUARD_ID, ip, user.as_bytes()))
}

fn mac(password: &str, challenge: &str) -> Option<HmacSha256> {
    let mut m = HmacSha256::new_from_slice(password.as_bytes()).ok()?;
    m.update(challenge.as_bytes());
    Some(m)
}

/// The client's `validate` response to a login `challenge`: lower-case hex of
/// HMAC-SHA256(key = password, message = the challenge as received).
pub fn login_response(password: &str, challenge: &str) -> Text {
    let mut s = String::with_capacity(RESPONSE_LEN);
    if let Some(m) = mac(password, challenge) {
        crate::text::push_hex(&mut s, &m.finalize().into_bytes());
    }
    Text::from(s)
}

/// Whether `response` (hex, already checked to be 32 bytes) answers a login challenge
/// issued to `user` at `ip` in this or the previous key period, for `password`. Constant
/// time in the response.
pub fn verify_login_response(
    keys: &mut ChallengeKeys,
    now: Instant,
    ip: IpAddr,
    user: &str,
    password: &str,
    response: &[u8],
) -> bool {
    let candidates = keys.bound_candidates(now, super::GUARD_ID, ip, user.as_bytes());
    let mut ok = false;
    for c in candidates {
        let challenge = format_login_challenge(c);
        if let Some(m) = mac(password, &challenge) {
            ok |= m.verify_slice(response).is_ok();
        }
    }
    ok
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    #[test]
    fn hmac_sha256_matches_rfc_4231_case_2() {
        // RFC 4231 test case 2: key "Jefe", data "what do ya want for nothing?"
        assert_eq!(
            login_response("Jefe", "what do ya want for nothing?"),
            "5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843"
        );
    }

    #[test]
    fn tokens_and_login_challenges_verify_for_their_source_only() {
        let t0 = Instant::now();
        let mut k = ChallengeKeys::new([3; 16], Duration::from_secs(60), t0);
        let ip: IpAddr = "192.0.2.1".parse().unwrap();
        let other: IpAddr = "192.0.2.2".parse().unwrap();
        let tok = issue_token(&mut k, t0, ip);
        assert_eq!(tok.len(), TOKEN_LEN);
        assert!(verify_token(&mut k, t0, ip, &tok));
        assert!(verify_token(&mut k, t0, ip, &tok.to_ascii_uppercase()));
        assert!(!verify_token(&mut k, t0, other, &tok));
        assert!(!verify_token(&mut k, t0, ip, "00000000"));
        assert!(!verify_token(&mut k, t0, ip, "+1234567"));
        assert!(is_token_request("0") && is_token_request("000000000000"));
        assert!(!is_token_request("") && !is_token_request("0001"));

        let c = issue_login_challenge(&mut k, t0, ip, "alice");
        assert_eq!(c.len(), LOGIN_CHALLENGE_LEN);
        let resp = crate::text::from_hex(&login_response("pw", &c)).unwrap();
        assert_eq!(resp.len(), 32);
        assert!(verify_login_response(&mut k, t0, ip, "alice", "pw", &resp));
        assert!(!verify_login_response(
            &mut k, t0, ip, "alice", "pw2", &resp
        ));
        assert!(!verify_login_response(&mut k, t0, ip, "bob", "pw", &resp));
        assert!(!verify_login_response(
            &mut k, t0, other, "alice", "pw", &resp
        ));
        // still valid in the next period, not in the one after
        let t1 = t0 + Duration::from_secs(61);
        assert!(verify_login_response(&mut k, t1, ip, "alice", "pw", &resp));
        let t2 = t0 + Duration::from_secs(121);
        assert!(!verify_login_response(&mut k, t2, ip, "alice", "pw", &resp));
    }
}
