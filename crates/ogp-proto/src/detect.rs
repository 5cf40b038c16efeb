//! Which protocol a datagram belongs to, from its first bytes, without decoding it:
//! `ogp decode` guesses with it, and auto-detection hands each reply only to the query
//! machines of its protocol ([`Machine::claims`](crate::client::Machine::claims)), so
//! that one protocol's answer is never read as another's malformed reply. It sits above
//! the protocols (it asks each for its signature); nothing below imports it.

use crate::protocol::Protocol;

/// GQP's end of a datagram (`EOT`) and of a part of a longer reply (`ETB`); known here
/// even when the `gqp` feature is off, so that its datagrams are still recognised.
const GQP_EOT: u8 = 0x04;
const GQP_ETB: u8 = 0x17;

/// The protocols told by their first bytes, tried in order (Quake III before A2S: both
/// start with `FF FF FF FF`, and Quake III's words come next).
type Signature = (fn(&[u8]) -> bool, Protocol);
const SIGNATURES: &[Signature] = &[
    (|d| d.starts_with(&crate::ogp::PREFIX), Protocol::Ogp),
    (crate::quake3::is_quake3_datagram, Protocol::Quake3),
    (crate::bedrock::is_bedrock_datagram, Protocol::Bedrock),
    (
        |d| d.starts_with(&crate::a2s::SINGLE) || d.starts_with(&crate::a2s::SPLIT),
        Protocol::A2s,
    ),
    (
        |d| d.starts_with(&crate::gamespy3::MAGIC),
        Protocol::Gamespy3,
    ),
];

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
/// * anything else ending with GQP's `EOT` or `ETB`: [`Gqp`](Protocol::Gqp).
///
/// `None` when none of these fits. A `Some` is only a guess: the datagram may still
/// fail to decode.
pub fn guess(datagram: &[u8]) -> Option<Protocol> {
    use crate::gamespy3::kind;
    if let Some((_, p)) = SIGNATURES.iter().find(|(is, _)| is(datagram)) {
        return Some(*p);
    }
    match (datagram.first(), datagram.last()) {
        (Some(&(kind::INFO | kind::HEARTBEAT | kind::ECHO_REPLY | kind::CHALLENGE)), _)
            if datagram.len() >= 5 =>
        {
            Some(Protocol::Gamespy3)
        }
        (Some(&first), Some(&(GQP_EOT | GQP_ETB))) if first != 0xff && first != 0xfe => {
            Some(Protocol::Gqp)
        }
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

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

    #[cfg(feature = "gqp")]
    #[test]
    fn gqp_ends_are_the_wire_constants() {
        assert_eq!(
            (GQP_EOT, GQP_ETB),
            (crate::gqp::wire::EOT, crate::gqp::wire::ETB)
        );
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
}
