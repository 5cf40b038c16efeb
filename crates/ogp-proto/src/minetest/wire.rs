//! Minetest / Luanti's low-level UDP protocol, as far as a handshake goes: the packets
//! that open a connection, ask for the server's protocol version and close it again,
//! decoded through the bounded reader.
//!
//! Every packet starts with the protocol id `4F 45 74 03`, the sender's peer id (`u16`:
//! 0 before the server gave one, 1 the server) and a channel (`u8`), then a type:
//!
//! | type | body |
//! |---|---|
//! | 0 CONTROL | a control type: 0 ACK (`u16` sequence number), 1 SET_PEER_ID (`u16`), 2 PING, 3 DISCO |
//! | 1 ORIGINAL | a command (`u16`) and its fields |
//! | 2 SPLIT | a part of a larger packet (not needed here) |
//! | 3 RELIABLE | a sequence number (`u16`, the first 65500) and a packet of another type, to be acknowledged |
//!
//! The handshake: a reliable empty ORIGINAL from peer 0 gets a reliable SET_PEER_ID;
//! then `TOSERVER_INIT` (command 2: serialisation version, compression modes, the
//! lowest and highest protocol versions, a player name) gets `TOCLIENT_HELLO` (command
//! 2: serialisation version, compression, the protocol version chosen, the
//! authentication methods, the name) or `TOCLIENT_ACCESS_DENIED` (command 10: a reason
//! code). A DISCO closes the connection. All integers are big-endian.

use crate::error::{DecodeError, DecodeErrorKind};
use crate::model::Text;
use crate::reader::Reader;

/// The protocol id every packet starts with.
pub const PROTOCOL_ID: [u8; 4] = [0x4f, 0x45, 0x74, 0x03];
/// The server's peer id.
pub const PEER_ID_SERVER: u16 = 1;
/// The first sequence number of a reliable channel.
pub const SEQNUM_INITIAL: u16 = 65500;
/// `TOSERVER_INIT` / `TOCLIENT_HELLO`.
pub const CMD_INIT_HELLO: u16 = 0x02;
/// `TOCLIENT_ACCESS_DENIED`.
pub const CMD_ACCESS_DENIED: u16 = 0x0a;
/// The serialisation version we read at most (Minetest 5.x's highest).
pub const SER_FMT_VER_HIGHEST: u8 = 29;
/// The lowest protocol version we offer (Minetest 5.0's).
pub const PROTOCOL_MIN: u16 = 37;
/// The highest we offer: any, so that the server chooses its own newest.
pub const PROTOCOL_MAX: u16 = u16::MAX;
/// The name the handshake gives (letters, digits, `_` and `-`: a valid player name).
pub const PLAYER_NAME: &str = "ogpprobe";

/// A control packet.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Control {
    /// An acknowledgement of a reliable packet.
    Ack(u16),
    /// The peer id the server gives us.
    SetPeerId(u16),
    /// A keep-alive.
    Ping,
    /// The peer closes the connection.
    Disco,
}

/// `TOCLIENT_HELLO`'s fields.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Hello {
    /// The serialisation version chosen.
    pub serialization: u8,
    /// The compression mode (0 in 5.x).
    pub compression: u16,
    /// The protocol version chosen: the server's newest when we offer any.
    pub protocol: u16,
    /// The authentication methods (bit 1 legacy password, 2 SRP, 4 first SRP: a new
    /// name).
    pub auth_mechs: u32,
    /// The name, as the server has it.
    pub name: Text,
}

/// What a packet carries.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Body {
    /// A control packet.
    Control(Control),
    /// `TOCLIENT_HELLO`.
    Hello(Hello),
    /// `TOCLIENT_ACCESS_DENIED` and its reason code.
    AccessDenied(u8),
    /// Another command (its number), or a split packet (`None`): not read here.
    Other(Option<u16>),
}

/// A packet from the server.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Packet {
    /// The sender's peer id.
    pub sender: u16,
    /// The channel (0 to 2).
    pub channel: u8,
    /// The sequence number when it came reliably (it must be acknowledged).
    pub reliable: Option<u16>,
    /// What it carries.
    pub body: Body,
}

fn header(out: &mut Vec<u8>, peer: u16, channel: u8) {
    out.extend_from_slice(&PROTOCOL_ID);
    out.extend_from_slice(&peer.to_be_bytes());
    out.push(channel);
}

/// Appends the first packet: a reliable, empty ORIGINAL from peer 0 on channel 0.
pub fn encode_open(out: &mut Vec<u8>) {
    header(out, 0, 0);
    out.push(3);
    out.extend_from_slice(&SEQNUM_INITIAL.to_be_bytes());
    out.push(1);
}

/// Appends an acknowledgement of `seq` on `channel`.
pub fn encode_ack(out: &mut Vec<u8>, peer: u16, channel: u8, seq: u16) {
    header(out, peer, channel);
    out.extend_from_slice(&[0, 0]);
    out.extend_from_slice(&seq.to_be_bytes());
}

/// Appends `TOSERVER_INIT` (unreliable, channel 1) with the name `name`.
pub fn encode_init(out: &mut Vec<u8>, peer: u16, name: &str) {
    header(out, peer, 1);
    out.push(1);
    out.extend_from_slice(&CMD_INIT_HELLO.to_be_bytes());
    out.push(SER_FMT_VER_HIGHEST);
    out.extend_from_slice(&0u16.to_be_bytes());
    out.extend_from_slice(&PROTOCOL_MIN.to_be_bytes());
    out.extend_from_slice(&PROTOCOL_MAX.to_be_bytes());
    let name = name.as_bytes();
    let name = name.get(..name.len().min(20)).unwrap_or(name);
    out.extend_from_slice(&u16::try_from(name.len()).unwrap_or(0).to_be_bytes());
    out.extend_from_slice(name);
}

/// Appends a DISCO: we close the connection.
pub fn encode_disco(out: &mut Vec<u8>, peer: u16) {
    header(out, peer, 0);
    out.extend_from_slice(&[0, 3]);
}

/// Whether `d` starts with the protocol id (a packet of either side).
pub fn is_packet(d: &[u8]) -> bool {
    d.starts_with(&PROTOCOL_ID) && d.len() >= 8
}

/// Decodes a packet from the server.
pub fn decode_packet(d: &[u8]) -> Result<Packet, DecodeError> {
    let mut r = Reader::new(d);
    if r.array::<4>("ProtocolId")? != PROTOCOL_ID {
        return Err(DecodeError::new(0, "ProtocolId", DecodeErrorKind::BadMagic));
    }
    let sender = r.u16_be("SenderPeerId")?;
    let channel = r.u8("Channel")?;
    let mut kind_at = r.offset();
    let mut kind = r.u8("PacketType")?;
    let mut reliable = None;
    if kind == 3 {
        reliable = Some(r.u16_be("SeqNum")?);
        kind_at = r.offset();
        kind = r.u8("PacketType")?;
    }
    let body = match kind {
        0 => {
            let at = r.offset();
            Body::Control(match r.u8("ControlType")? {
                0 => Control::Ack(r.u16_be("SeqNum")?),
                1 => Control::SetPeerId(r.u16_be("PeerId")?),
                2 => Control::Ping,
                3 => Control::Disco,
                _ => return Err(DecodeError::invalid(at, "ControlType", "not 0 to 3")),
            })
        }
        1 => {
            let cmd = r.u16_be("Command")?;
            match cmd {
                CMD_INIT_HELLO => Body::Hello(Hello {
                    serialization: r.u8("SerializationVersion")?,
                    compression: r.u16_be("CompressionMode")?,
                    protocol: r.u16_be("ProtocolVersion")?,
                    auth_mechs: r.array::<4>("AuthMechs").map(u32::from_be_bytes)?,
                    name: {
                        let n = usize::from(r.u16_be("NameLength")?);
                        let b = r.take(n, "Name")?;
                        crate::text::decode(b, true).0
                    },
                }),
                CMD_ACCESS_DENIED => Body::AccessDenied(r.u8("DenyCode")?),
                other => Body::Other(Some(other)),
            }
        }
        2 => Body::Other(None),
        _ => {
            return Err(DecodeError::invalid(
                kind_at,
                "PacketType",
                "not CONTROL, ORIGINAL, SPLIT or RELIABLE",
            ))
        }
    };
    Ok(Packet {
        sender,
        channel,
        reliable,
        body,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The bytes of a real exchange with Debian's minetest-server 5.6.1 on loopback.
    #[test]
    fn a_real_handshake() {
        let mut open = Vec::new();
        encode_open(&mut open);
        assert_eq!(open, [0x4f, 0x45, 0x74, 0x03, 0, 0, 0, 3, 0xff, 0xdc, 1]);
        let set =
            decode_packet(&[0x4f, 0x45, 0x74, 3, 0, 1, 0, 3, 0xff, 0xdc, 0, 1, 0, 3]).unwrap();
        assert_eq!(set.reliable, Some(0xffdc));
        assert_eq!(set.body, Body::Control(Control::SetPeerId(3)));
        let hello = b"\x4f\x45\x74\x03\x00\x01\x00\x03\xff\xdd\x01\x00\x02\x1d\x00\x00\x00\x29\x00\x00\x00\x04\x00\x08ogpprobe";
        let p = decode_packet(hello).unwrap();
        assert_eq!(p.reliable, Some(0xffdd));
        let Body::Hello(h) = p.body else {
            panic!("{p:?}")
        };
        assert_eq!((h.serialization, h.protocol, h.auth_mechs), (29, 41, 4));
        assert_eq!(h.name, "ogpprobe");
        let mut init = Vec::new();
        encode_init(&mut init, 3, PLAYER_NAME);
        assert_eq!(init.len(), 7 + 1 + 2 + 1 + 2 + 2 + 2 + 2 + 8);
    }

    #[test]
    fn bad_packets_are_errors() {
        assert!(decode_packet(b"\x4f\x45\x74\x03\x00\x01").is_err());
        assert!(decode_packet(b"\x4f\x45\x74\x04\x00\x01\x00\x00\x00").is_err());
        assert!(decode_packet(b"\x4f\x45\x74\x03\x00\x01\x00\x07").is_err());
        assert!(decode_packet(b"\x4f\x45\x74\x03\x00\x01\x00\x00\x09").is_err());
        // a name longer than the packet
        assert!(decode_packet(b"\x4f\x45\x74\x03\x00\x01\x00\x01\x00\x02\x1d\x00\x00\x00\x29\x00\x00\x00\x04\xff\xffab").is_err());
    }
}
