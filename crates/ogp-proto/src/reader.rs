//! A bounded reader over peer bytes.
//!
//! [`Reader`] is a slice that shrinks from the front as fields are read. It cannot run past
//! the end: every read checks what is left first and fails with a [`DecodeError`] naming
//! the field and its absolute byte offset. It is the only place in this crate that touches
//! peer bytes by position; decoders never index a peer buffer themselves. Nothing here
//! panics or allocates.

use crate::charset::Charset;
use crate::error::{DecodeError, DecodeErrorKind};

/// A cursor over a byte slice that cannot read past its end.
#[derive(Debug, Clone)]
pub struct Reader<'a> {
    rest: &'a [u8],
    /// Absolute offset of `rest[0]` in the outermost buffer.
    pos: usize,
    /// How the protocol's string readers decode bytes that are not UTF-8.
    charset: Charset,
}

impl<'a> Reader<'a> {
    /// A reader over `buf`, whose first byte is at offset 0.
    pub const fn new(buf: &'a [u8]) -> Self {
        Self::with_base(buf, 0)
    }

    /// A reader over `buf` whose first byte is reported at offset `base`.
    pub const fn with_base(buf: &'a [u8], base: usize) -> Self {
        Self {
            rest: buf,
            pos: base,
            charset: Charset::Auto,
        }
    }

    /// The same reader, whose string readers decode bytes that are not UTF-8 as
    /// `charset` (A2S and GameSpy v3, which announce no charset).
    pub const fn with_charset(mut self, charset: Charset) -> Self {
        self.charset = charset;
        self
    }

    /// See [`Reader::with_charset`].
    pub const fn charset(&self) -> Charset {
        self.charset
    }

    /// Absolute offset of the next byte to be read.
    pub const fn offset(&self) -> usize {
        self.pos
    }

    /// How many bytes are left.
    pub const fn remaining(&self) -> usize {
        self.rest.len()
    }

    /// Whether everything has been read.
    pub const fn is_empty(&self) -> bool {
        self.rest.is_empty()
    }

    /// The bytes not read yet, without consuming them.
    pub const fn peek_rest(&self) -> &'a [u8] {
        self.rest
    }

    /// The next byte, without consuming it.
    pub fn peek_u8(&self) -> Option<u8> {
        self.rest.first().copied()
    }

    /// Consumes and returns everything that is left.
    pub fn take_rest(&mut self) -> &'a [u8] {
        let rest = self.rest;
        self.pos += rest.len();
        self.rest = &[];
        rest
    }

    fn truncated(&self, field: &'static str, needed: usize) -> DecodeError {
        DecodeError::new(
            self.pos,
            field,
            DecodeErrorKind::Truncated {
                needed,
                available: self.rest.len(),
            },
        )
    }

    /// Consumes exactly `n` bytes.
    pub fn take(&mut self, n: usize, field: &'static str) -> Result<&'a [u8], DecodeError> {
        match self.rest.split_at_checked(n) {
            Some((head, tail)) => {
                self.rest = tail;
                self.pos += n;
                Ok(head)
            }
            None => Err(self.truncated(field, n)),
        }
    }

    /// Consumes exactly `N` bytes into an array.
    pub fn array<const N: usize>(&mut self, field: &'static str) -> Result<[u8; N], DecodeError> {
        match self.rest.split_first_chunk::<N>() {
            Some((head, tail)) => {
                self.rest = tail;
                self.pos += N;
                Ok(*head)
            }
            None => Err(self.truncated(field, N)),
        }
    }

    /// A sub-reader over the next `n` bytes, which are consumed from this reader.
    /// Offsets reported by the sub-reader stay absolute.
    pub fn sub(&mut self, n: usize, field: &'static str) -> Result<Reader<'a>, DecodeError> {
        let base = self.pos;
        let bytes = self.take(n, field)?;
        Ok(Reader::with_base(bytes, base))
    }

    /// Reads one byte.
    pub fn u8(&mut self, field: &'static str) -> Result<u8, DecodeError> {
        match self.rest.split_first() {
            Some((&b, tail)) => {
                self.rest = tail;
                self.pos += 1;
                Ok(b)
            }
            None => Err(self.truncated(field, 1)),
        }
    }

    /// Reads a little-endian `u16`.
    pub fn u16_le(&mut self, field: &'static str) -> Result<u16, DecodeError> {
        self.array::<2>(field).map(u16::from_le_bytes)
    }

    /// Reads a big-endian `u16`.
    pub fn u16_be(&mut self, field: &'static str) -> Result<u16, DecodeError> {
        self.array::<2>(field).map(u16::from_be_bytes)
    }

    /// Reads a little-endian `u32`.
    pub fn u32_le(&mut self, field: &'static str) -> Result<u32, DecodeError> {
        self.array::<4>(field).map(u32::from_le_bytes)
    }

    /// Reads a little-endian `i16`.
    pub fn i16_le(&mut self, field: &'static str) -> Result<i16, DecodeError> {
        self.array::<2>(field).map(i16::from_le_bytes)
    }

    /// Reads a little-endian `i32`.
    pub fn i32_le(&mut self, field: &'static str) -> Result<i32, DecodeError> {
        self.array::<4>(field).map(i32::from_le_bytes)
    }

    /// Reads a zero-terminated string and returns its bytes without the NUL. Fails with
    /// [`DecodeErrorKind::MissingNul`] when no NUL is left.
    pub fn cstr(&mut self, field: &'static str) -> Result<&'a [u8], DecodeError> {
        let rest = self.rest;
        let Some(nul) = find_nul(rest) else {
            return Err(DecodeError::new(
                self.pos,
                field,
                DecodeErrorKind::MissingNul,
            ));
        };
        match (rest.get(..nul), rest.get(nul + 1..)) {
            (Some(s), Some(tail)) => {
                self.rest = tail;
                self.pos += nul + 1;
                Ok(s)
            }
            // Cannot happen (`nul` indexes a byte of `rest`); kept total without a panic.
            _ => Err(DecodeError::new(
                self.pos,
                field,
                DecodeErrorKind::MissingNul,
            )),
        }
    }
}

/// The index of the first zero byte: eight bytes at a time (a zero byte is one whose
/// value minus one borrows into its high bit while the byte itself had none), the tail
/// byte by byte.
fn find_nul(bytes: &[u8]) -> Option<usize> {
    const ONES: u64 = 0x0101_0101_0101_0101;
    const HIGHS: u64 = 0x8080_8080_8080_8080;
    let mut words = bytes.chunks_exact(8);
    let mut at = 0;
    for w in &mut words {
        let v = u64::from_le_bytes(w.try_into().unwrap_or([1; 8]));
        let zero = v.wrapping_sub(ONES) & !v & HIGHS;
        if zero != 0 {
            // The lowest flagged byte is the first zero (borrows only run upward).
            return Some(at + (zero.trailing_zeros() / 8) as usize);
        }
        at += 8;
    }
    words
        .remainder()
        .iter()
        .position(|&b| b == 0)
        .map(|i| at + i)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_stop_at_the_end_with_offsets() {
        let mut r = Reader::new(&[1, 2, 3, b'a', 0, 9]);
        assert_eq!(r.u16_le("a").unwrap(), 0x0201);
        assert_eq!(r.offset(), 2);
        assert_eq!(r.u8("b").unwrap(), 3);
        assert_eq!(r.cstr("s").unwrap(), b"a");
        let e = r.u32_le("c").unwrap_err();
        assert_eq!(e.offset, 5);
        assert_eq!(
            e.kind,
            DecodeErrorKind::Truncated {
                needed: 4,
                available: 1
            }
        );
        assert_eq!(
            e.to_string(),
            "c at byte 5: truncated: needs 4 bytes but only 1 left"
        );
        assert_eq!(r.u8("d").unwrap(), 9);
        assert!(r.is_empty());
    }

    #[test]
    fn find_nul_finds_the_first_zero_byte_like_a_plain_scan() {
        // Every length up to three words, the zero at every place, with bytes around it
        // that trip a naive word test (0x01 after a zero, 0x80 and 0xff before).
        for len in 0..24 {
            for z in 0..=len {
                let mut v: Vec<u8> = (0..len).map(|i| [0x80, 0xff, 0x01, 0x7f][i % 4]).collect();
                if z < len {
                    v[z] = 0;
                    if z + 1 < len {
                        v[z + 1] = 0x01;
                    }
                }
                assert_eq!(find_nul(&v), v.iter().position(|&b| b == 0), "{v:02x?}");
            }
        }
    }

    proptest::proptest! {
        #[test]
        fn find_nul_agrees_with_position(
            v in proptest::collection::vec(
                proptest::sample::select(vec![0u8, 0x01, 0x41, 0x7f, 0x80, 0xfe, 0xff]),
                0..80,
            )
        ) {
            proptest::prop_assert_eq!(find_nul(&v), v.iter().position(|&b| b == 0));
        }
    }

    #[test]
    fn cstr_without_nul_fails_and_consumes_nothing() {
        let mut r = Reader::new(b"abc");
        assert_eq!(r.cstr("s").unwrap_err().kind, DecodeErrorKind::MissingNul);
        assert_eq!(r.remaining(), 3);
    }

    #[test]
    fn sub_reader_keeps_absolute_offsets_and_its_bound() {
        let mut r = Reader::new(&[0, 1, 2, 3, 4]);
        r.u8("x").unwrap();
        let mut s = r.sub(2, "sub").unwrap();
        assert_eq!(s.offset(), 1);
        s.u16_le("y").unwrap();
        assert_eq!(s.u8("z").unwrap_err().offset, 3);
        assert_eq!(r.offset(), 3);
        assert!(r.sub(3, "big").is_err());
    }
}
