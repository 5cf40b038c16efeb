//! Colour codes in Quake III names: `^` and one character (`^1` red, `^7` white; any
//! character but `^` and NUL counts, as in ioquake3 and Enemy Territory), and
//! DarkPlaces' `^xRGB` with three hexadecimal digits. `^^` is not a code: the first `^`
//! stays, and the second may start one.

/// Whether `s` has a colour code.
pub fn has_colors(s: &str) -> bool {
    s.char_indices()
        .any(|(i, _)| s.get(i..).and_then(code_len).is_some())
}

/// Bytes of the colour code at the start of `s`, if one starts there.
fn code_len(s: &str) -> Option<usize> {
    let mut chars = s.chars();
    if chars.next()? != '^' {
        return None;
    }
    let next = chars.next()?;
    if next == 'x' {
        let hex: Vec<char> = chars.clone().take(3).collect();
        if hex.len() == 3 && hex.iter().all(char::is_ascii_hexdigit) {
            return Some(5);
        }
    }
    (next != '^' && next != '\0').then(|| 1 + next.len_utf8())
}

/// `s` without its colour codes.
pub fn strip(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    let mut i = 0;
    while let Some(rest) = s.get(i..) {
        let Some(c) = rest.chars().next() else { break };
        match code_len(rest) {
            Some(n) => i += n,
            None => {
                out.push(c);
                i += c.len_utf8();
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn codes_are_stripped() {
        assert_eq!(strip("^1Bar ^7OA"), "Bar OA");
        assert_eq!(strip("^xF00red^x0f0green"), "redgreen");
        assert_eq!(strip("^xZZnot"), "ZZnot");
        assert_eq!(strip("^^00East"), "^0East");
        assert_eq!(strip("^?=^7F"), "=F");
        assert_eq!(strip("end^"), "end^");
        assert_eq!(strip("plain"), "plain");
        assert_eq!(strip("^é!"), "!");
        assert!(has_colors("a^1b"));
        assert!(!has_colors("a^^"));
    }
}
