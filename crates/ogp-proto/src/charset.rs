//! The charset of strings in protocols that announce none.
//!
//! No imports from this crate: the reader and the text helpers both use it.

use compact_str::CompactString;

/// How to read strings that are not valid UTF-8 in the protocols that do not say which
/// charset they use (A2S, GameSpy v3). Servers send UTF-8, or the 8-bit code page of
/// the machine they run on: Russian GoldSrc servers send Windows-1251, for instance.
/// Valid UTF-8 is always read as UTF-8.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
#[non_exhaustive]
pub enum Charset {
    /// Each protocol's own rule, with a warning: A2S replaces the invalid bytes with
    /// U+FFFD, GameSpy v3 reads the string as Latin-1.
    #[default]
    Auto,
    /// ISO 8859-1: every byte is the character of that number (nothing is lost).
    Latin1,
    /// Windows-1251 (Cyrillic).
    Windows1251,
    /// Windows-1252 (Western European).
    Windows1252,
}

impl Charset {
    /// Every charset, for lists of choices.
    pub const ALL: [Self; 4] = [
        Self::Auto,
        Self::Latin1,
        Self::Windows1251,
        Self::Windows1252,
    ];

    /// Its name: `auto`, `latin1`, `cp1251`, `cp1252`.
    pub const fn name(self) -> &'static str {
        match self {
            Self::Auto => "auto",
            Self::Latin1 => "latin1",
            Self::Windows1251 => "cp1251",
            Self::Windows1252 => "cp1252",
        }
    }

    /// Decodes `bytes` (not UTF-8) in this 8-bit charset; `None` for [`Charset::Auto`].
    pub(crate) fn decode_8bit(self, bytes: &[u8]) -> Option<CompactString> {
        let table = match self {
            Self::Auto => return None,
            Self::Latin1 => return Some(bytes.iter().map(|&b| char::from(b)).collect()),
            Self::Windows1251 => encoding_rs::WINDOWS_1251,
            Self::Windows1252 => encoding_rs::WINDOWS_1252,
        };
        Some(CompactString::from(
            table.decode_without_bom_handling(bytes).0,
        ))
    }
}

impl std::fmt::Display for Charset {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

impl std::str::FromStr for Charset {
    type Err = String;

    /// A name of [`Charset::name`], or `iso-8859-1`, `windows-1251`, `windows-1252`
    /// (any case).
    fn from_str(s: &str) -> Result<Self, String> {
        match s.to_ascii_lowercase().as_str() {
            "auto" => Ok(Self::Auto),
            "latin1" | "latin-1" | "iso-8859-1" => Ok(Self::Latin1),
            "cp1251" | "windows-1251" => Ok(Self::Windows1251),
            "cp1252" | "windows-1252" => Ok(Self::Windows1252),
            _ => Err(format!(
                "unknown charset {s:?}: expected auto, latin1, cp1251 or cp1252"
            )),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn charsets_decode_their_8bit_bytes_and_parse_their_names() {
        // 0x80 and 0xC0 differ in all three: a control character, the euro sign, Ђ
        let b = [0x80, 0xc0];
        let d = |c: Charset| c.decode_8bit(&b).map(|t| t.to_string());
        assert_eq!(d(Charset::Latin1).as_deref(), Some("\u{80}À"));
        assert_eq!(d(Charset::Windows1252).as_deref(), Some("€À"));
        assert_eq!(d(Charset::Windows1251).as_deref(), Some("ЂА"));
        assert_eq!(d(Charset::Auto), None);
        for c in Charset::ALL {
            assert_eq!(c.name().parse::<Charset>(), Ok(c));
            assert_eq!(c.to_string().to_uppercase().parse::<Charset>(), Ok(c));
        }
        assert_eq!("windows-1251".parse::<Charset>(), Ok(Charset::Windows1251));
        assert_eq!("ISO-8859-1".parse::<Charset>(), Ok(Charset::Latin1));
        let e = "koi8-r".parse::<Charset>().unwrap_err();
        assert!(e.contains("cp1251"), "{e}");
    }
}
