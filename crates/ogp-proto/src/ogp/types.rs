//! OGP elementary types (spec §3.4 "Elementary Data Types"): VarBitArray, VarUINT8-32,
//! VarSINT8-32, SzString and StringColorInfo.
//!
//! The readers (internal to this crate: the public decoders take byte slices) read from
//! the bounded reader and fail with a [`DecodeError`]; writers append to a `Vec<u8>` and
//! cannot fail. Encoders emit the minimal form; decoders accept any form
//! (non-minimal VarBitArrays such as `81 00`, non-minimal Var integers such as
//! `FE 05 00`). No function here panics.

use std::fmt;

use crate::error::{DecodeError, DecodeErrorKind, DecodeWarning};
use crate::model::{ColorEntry, ColorInfo, Text};
use crate::reader::Reader;
use crate::text;

/// The bits of a VarBitArray, numbered `byte * 7 + bit` ("bit n.x" of the spec is
/// `Bits::bit(n, x)`). Holds bits 0.0 to 8.6; bits beyond are dropped when decoding
/// (no OGP field uses them).
#[derive(Clone, Copy, Default, PartialEq, Eq, Hash)]
pub struct Bits(pub u64);

/// Longest VarBitArray we read, in bytes. Longer ones are malformed (the longest in the
/// spec is 4 bytes).
pub const MAX_BIT_ARRAY_LEN: usize = 32;

impl Bits {
    /// No bit set.
    pub const EMPTY: Self = Self(0);

    /// The spec's bit `byte.bit`.
    pub const fn bit(byte: u32, bit: u32) -> Self {
        Self(1 << (byte * 7 + bit))
    }

    /// Whether every bit of `other` is set.
    pub const fn contains(self, other: Self) -> bool {
        self.0 & other.0 == other.0
    }

    /// Whether any bit of `other` is set.
    pub const fn intersects(self, other: Self) -> bool {
        self.0 & other.0 != 0
    }

    /// Union.
    #[must_use]
    pub const fn with(self, other: Self) -> Self {
        Self(self.0 | other.0)
    }

    /// Intersection.
    #[must_use]
    pub const fn and(self, other: Self) -> Self {
        Self(self.0 & other.0)
    }

    /// These bits without those of `other`.
    #[must_use]
    pub const fn without(self, other: Self) -> Self {
        Self(self.0 & !other.0)
    }

    /// Sets `other`'s bits when `on`.
    #[must_use]
    pub const fn with_if(self, other: Self, on: bool) -> Self {
        if on {
            self.with(other)
        } else {
            self
        }
    }

    /// Whether no bit is set.
    pub const fn is_empty(self) -> bool {
        self.0 == 0
    }

    /// The minimal wire bytes (at least one byte).
    pub fn to_wire(self) -> Vec<u8> {
        let mut v = Vec::with_capacity(2);
        write_bits(&mut v, self);
        v
    }
}

impl fmt::Debug for Bits {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "Bits({})", text::to_hex(&self.to_wire()))
    }
}

/// Reads a VarBitArray.
pub(crate) fn read_bits(r: &mut Reader<'_>, field: &'static str) -> Result<Bits, DecodeError> {
    let start = r.offset();
    let mut bits = 0u64;
    for i in 0..MAX_BIT_ARRAY_LEN {
        let b = r.u8(field)?;
        if let Some(shifted) = u64::from(b & 0x7f).checked_shl(7 * i as u32) {
            if i < 9 {
                bits |= shifted;
            }
        }
        if b & 0x80 == 0 {
            return Ok(Bits(bits));
        }
    }
    Err(DecodeError::new(
        start,
        field,
        DecodeErrorKind::TooLarge {
            limit: MAX_BIT_ARRAY_LEN as u64,
        },
    ))
}

/// Writes a minimal VarBitArray (trailing zero bytes trimmed, at least one byte).
pub fn write_bits(out: &mut Vec<u8>, bits: Bits) {
    let mut v = bits.0;
    loop {
        let low = (v & 0x7f) as u8;
        v >>= 7;
        if v == 0 {
            out.push(low);
            return;
        }
        out.push(low | 0x80);
    }
}

/// Reads a VarUINT8-32.
pub(crate) fn read_var_uint(r: &mut Reader<'_>, field: &'static str) -> Result<u32, DecodeError> {
    match r.u8(field)? {
        0xfe => r.u16_le(field).map(u32::from),
        0xff => r.u32_le(field),
        b => Ok(u32::from(b)),
    }
}

/// Writes a VarUINT8-32 in the reference SDK's form: one byte up to 0xFD, `FE` + u16 up to
/// 0xFFFE, else `FF` + u32 (0xFFFF itself takes the 32-bit form).
pub fn write_var_uint(out: &mut Vec<u8>, v: u32) {
    if v <= 0xfd {
        out.push(v as u8);
    } else if v < 0xffff {
        out.push(0xfe);
        out.extend_from_slice(&(v as u16).to_le_bytes());
    } else {
        out.push(0xff);
        out.extend_from_slice(&v.to_le_bytes());
    }
}

/// Reads a VarSINT8-32.
pub(crate) fn read_var_sint(r: &mut Reader<'_>, field: &'static str) -> Result<i32, DecodeError> {
    match r.u8(field)? as i8 {
        -0x80 => r.i16_le(field).map(i32::from),
        -0x7f => r.i32_le(field),
        b => Ok(i32::from(b)),
    }
}

/// Writes a VarSINT8-32 in the reference SDK's form: one byte for −126…127, `80` + i16
/// for −32767…32767, else `81` + i32 (−32768 takes the 32-bit form).
pub fn write_var_sint(out: &mut Vec<u8>, v: i32) {
    if (-126..=127).contains(&v) {
        out.push(v as i8 as u8);
    } else if (-32767..=32767).contains(&v) {
        out.push(0x80);
        out.extend_from_slice(&(v as i16).to_le_bytes());
    } else {
        out.push(0x81);
        out.extend_from_slice(&v.to_le_bytes());
    }
}

/// Reads an SzString and decodes it. Invalid UTF-8 is decoded lossily and reported in
/// `warnings`.
pub(crate) fn read_string(
    r: &mut Reader<'_>,
    field: &'static str,
    utf8: bool,
    warnings: &mut Vec<DecodeWarning>,
) -> Result<Text, DecodeError> {
    let offset = r.offset();
    let (s, lossy) = text::decode(r.cstr(field)?, utf8);
    if lossy {
        warnings.push(DecodeWarning {
            offset,
            field,
            message: "invalid UTF-8, decoded lossily",
        });
    }
    Ok(s)
}

/// Writes an SzString in UTF-8 or Latin-1, without NUL characters, followed by a NUL
/// (Latin-1 maps characters above U+00FF to `?`).
pub fn write_string(out: &mut Vec<u8>, s: &str, utf8: bool) {
    text::put_cstr(out, s, utf8);
}

/// Whether a colour code carries a 16-bit colour value. The spec's condition
/// "ColorValue >= 0x90 OR ColorValue <= 0x9F" is always true as written; it is read as
/// 0x90 ≤ v ≤ 0x9F (see docs/ogp-wire-choices.md, A4).
pub const fn color_has_value16(code: u8) -> bool {
    code >= 0x90 && code <= 0x9f
}

/// Reads a StringColorInfo. ColorSize is the byte length of the entries; entries are read
/// through a sub-reader bounded by it. Bytes that do not form a complete entry are kept in
/// [`ColorInfo::undecoded`].
pub(crate) fn read_color_info(
    r: &mut Reader<'_>,
    field: &'static str,
) -> Result<ColorInfo, DecodeError> {
    let size = read_var_uint(r, field)?;
    let size = usize::try_from(size).unwrap_or(usize::MAX);
    let mut sub = r.sub(size, field)?;
    let mut info = ColorInfo::default();
    while !sub.is_empty() {
        let mark = sub.clone();
        let entry = (|| {
            let delta = read_var_uint(&mut sub, field)?;
            let code = sub.u8(field)?;
            let color16 = if color_has_value16(code) {
                Some(sub.u16_le(field)?)
            } else {
                None
            };
            Ok::<_, DecodeError>(ColorEntry {
                delta,
                code,
                color16,
            })
        })();
        match entry {
            Ok(e) => info.entries.push(e),
            Err(_) => {
                sub = mark;
                info.undecoded = sub.take_rest().to_vec();
            }
        }
    }
    Ok(info)
}

/// Writes a StringColorInfo (an absent one is written as ColorSize 0).
pub fn write_color_info(out: &mut Vec<u8>, info: Option<&ColorInfo>) {
    let Some(info) = info else {
        out.push(0);
        return;
    };
    let mut data = Vec::with_capacity(info.entries.len() * 3 + info.undecoded.len());
    for e in &info.entries {
        write_var_uint(&mut data, e.delta);
        data.push(e.code);
        if color_has_value16(e.code) {
            data.extend_from_slice(&e.color16.unwrap_or(0).to_le_bytes());
        }
    }
    data.extend_from_slice(&info.undecoded);
    write_var_uint(out, u32::try_from(data.len()).unwrap_or(u32::MAX));
    out.extend_from_slice(&data);
}

#[cfg(test)]
mod tests {
    use super::*;

    fn uint(bytes: &[u8]) -> Result<u32, DecodeError> {
        read_var_uint(&mut Reader::new(bytes), "v")
    }
    fn sint(bytes: &[u8]) -> Result<i32, DecodeError> {
        read_var_sint(&mut Reader::new(bytes), "v")
    }
    fn enc_u(v: u32) -> Vec<u8> {
        let mut o = Vec::new();
        write_var_uint(&mut o, v);
        o
    }
    fn enc_s(v: i32) -> Vec<u8> {
        let mut o = Vec::new();
        write_var_sint(&mut o, v);
        o
    }

    /// (value, minimal bytes) pairs, used for both directions.
    const UINT_VECTORS: &[(u32, &[u8])] = &[
        (0, &[0x00]),
        (0xfc, &[0xfc]),
        (0xfd, &[0xfd]),
        (0xfe, &[0xfe, 0xfe, 0x00]),
        (0xff, &[0xfe, 0xff, 0x00]),
        (300, &[0xfe, 0x2c, 0x01]),
        (0xfffe, &[0xfe, 0xfe, 0xff]),
        (0xffff, &[0xff, 0xff, 0xff, 0x00, 0x00]),
        (70_000, &[0xff, 0x70, 0x11, 0x01, 0x00]),
        (0xffff_ffff, &[0xff, 0xff, 0xff, 0xff, 0xff]),
    ];

    const SINT_VECTORS: &[(i32, &[u8])] = &[
        (0, &[0x00]),
        (-1, &[0xff]),
        (-5, &[0xfb]),
        (127, &[0x7f]),
        (-126, &[0x82]),
        (-127, &[0x80, 0x81, 0xff]),
        (-128, &[0x80, 0x80, 0xff]),
        (128, &[0x80, 0x80, 0x00]),
        (200, &[0x80, 0xc8, 0x00]),
        (-200, &[0x80, 0x38, 0xff]),
        (1000, &[0x80, 0xe8, 0x03]),
        (32767, &[0x80, 0xff, 0x7f]),
        (-32767, &[0x80, 0x01, 0x80]),
        (-32768, &[0x81, 0x00, 0x80, 0xff, 0xff]),
        (32768, &[0x81, 0x00, 0x80, 0x00, 0x00]),
        (100_000, &[0x81, 0xa0, 0x86, 0x01, 0x00]),
        (i32::MAX, &[0x81, 0xff, 0xff, 0xff, 0x7f]),
        (i32::MIN, &[0x81, 0x00, 0x00, 0x00, 0x80]),
    ];

    #[test]
    fn var_uint_vectors_both_directions() {
        for &(v, bytes) in UINT_VECTORS {
            assert_eq!(enc_u(v), bytes, "encode {v}");
            assert_eq!(uint(bytes).unwrap(), v, "decode {bytes:02x?}");
        }
    }

    #[test]
    fn var_sint_vectors_both_directions() {
        for &(v, bytes) in SINT_VECTORS {
            assert_eq!(enc_s(v), bytes, "encode {v}");
            assert_eq!(sint(bytes).unwrap(), v, "decode {bytes:02x?}");
        }
    }

    #[test]
    fn var_ints_accept_non_minimal_forms() {
        assert_eq!(uint(&[0xfe, 0x05, 0x00]).unwrap(), 5);
        assert_eq!(uint(&[0xff, 0x05, 0, 0, 0]).unwrap(), 5);
        assert_eq!(sint(&[0x80, 0x05, 0x00]).unwrap(), 5);
        assert_eq!(sint(&[0x81, 0xfb, 0xff, 0xff, 0xff]).unwrap(), -5);
    }

    #[test]
    fn var_ints_truncated_report_the_field() {
        let e = uint(&[0xfe, 0x01]).unwrap_err();
        assert_eq!(e.offset, 1);
        assert!(matches!(
            e.kind,
            DecodeErrorKind::Truncated {
                needed: 2,
                available: 1
            }
        ));
        assert!(sint(&[0x81, 0, 0]).is_err());
        assert!(uint(&[]).is_err());
    }

    #[test]
    fn bit_arrays() {
        let b = read_bits(&mut Reader::new(&[0xbf, 0x01]), "f").unwrap();
        assert!(b.contains(Bits::bit(0, 0)) && b.contains(Bits::bit(1, 0)));
        assert_eq!(b.to_wire(), [0xbf, 0x01]);
        // non-minimal forms are accepted and re-emitted minimal
        let b = read_bits(&mut Reader::new(&[0x81, 0x80, 0x00]), "f").unwrap();
        assert_eq!(b, Bits::bit(0, 0));
        assert_eq!(b.to_wire(), [0x01]);
        assert_eq!(Bits::EMPTY.to_wire(), [0x00]);
        assert_eq!(
            Bits::bit(3, 0).with(Bits::bit(0, 5)).to_wire(),
            [0xa0, 0x80, 0x80, 0x01]
        );
        // a VarBitArray that never ends is an error, not a loop
        let endless = [0xffu8; 100];
        assert!(matches!(
            read_bits(&mut Reader::new(&endless), "f").unwrap_err().kind,
            DecodeErrorKind::TooLarge { .. }
        ));
        assert!(read_bits(&mut Reader::new(&[0x80]), "f").is_err());
        // bits past 8.6 are dropped, not a panic
        let mut long = [0x81u8; 12];
        long[11] = 0x01;
        assert_eq!(
            read_bits(&mut Reader::new(&long), "f")
                .unwrap()
                .0
                .count_ones(),
            9
        );
    }

    #[test]
    fn color_info_round_trip_and_garbage_kept() {
        let info = ColorInfo {
            entries: vec![
                ColorEntry {
                    delta: 0,
                    code: 0x01,
                    color16: None,
                },
                ColorEntry {
                    delta: 300,
                    code: 0x91,
                    color16: Some(0xf800),
                },
            ],
            undecoded: vec![],
        };
        let mut out = Vec::new();
        write_color_info(&mut out, Some(&info));
        assert_eq!(out, [8, 0, 1, 0xfe, 0x2c, 0x01, 0x91, 0x00, 0xf8]);
        let back = read_color_info(&mut Reader::new(&out), "c").unwrap();
        assert_eq!(back, info);

        // an entry cut short by ColorSize is kept as raw bytes and re-emitted as is
        let odd = [3u8, 0x00, 0x90, 0x01, 0xaa];
        let mut r = Reader::new(&odd);
        let got = read_color_info(&mut r, "c").unwrap();
        assert_eq!(got.entries.len(), 0);
        assert_eq!(got.undecoded, [0x00, 0x90, 0x01]);
        assert_eq!(r.remaining(), 1, "ColorSize bounds the read");
        let mut again = Vec::new();
        write_color_info(&mut again, Some(&got));
        assert_eq!(again, odd[..4]);
        // ColorSize past the end
        assert!(read_color_info(&mut Reader::new(&[5, 0]), "c").is_err());
    }

    #[test]
    fn color_value16_range() {
        assert!(color_has_value16(0x90) && color_has_value16(0x9f));
        assert!(!color_has_value16(0x8f) && !color_has_value16(0xa0) && !color_has_value16(0x01));
    }
}
