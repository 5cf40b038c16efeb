//! TeamSpeak 2's query framing.
//!
//! The server greets with `[TS]`; each command is a line; its answer is zero or more
//! lines, then `OK` (or a line starting `ERROR`, which ends it as a refusal). Lines end
//! with `\r\n`. `si` answers `key=value` lines; `pl` (players) and `cl` (channels) answer
//! a header line of tab-separated field names, then one line per row, strings in double
//! quotes (no escapes: a string cannot hold a tab or a line end). Lines are read one at a
//! time through TeamSpeak 3's splitter ([`crate::teamspeak3::wire::next_record`]), which
//! holds one line at most ([`MAX_RECORD`](crate::teamspeak3::wire::MAX_RECORD) bytes).

use crate::model::Text;

/// How an answer's line reads.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Line {
    /// `OK`: the answer is whole.
    Ok,
    /// `ERROR…`: a refusal, with its text.
    Error(Text),
    /// Anything else: data.
    Data,
}

/// What `line` (without its line end) is.
pub fn classify(line: &str) -> Line {
    if line == "OK" {
        Line::Ok
    } else if let Some(rest) = line.strip_prefix("ERROR") {
        Line::Error(
            rest.trim_start_matches([',', ' '])
                .chars()
                .take(120)
                .collect(),
        )
    } else {
        Line::Data
    }
}

/// A table cell: without its double quotes when it has them.
pub fn cell(s: &str) -> Text {
    s.strip_prefix('"')
        .and_then(|s| s.strip_suffix('"'))
        .unwrap_or(s)
        .into()
}

/// A table: field names and rows of cells.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Table {
    /// The header's field names.
    pub fields: Vec<Text>,
    /// The rows kept, cells unquoted (at most as many as the header has fields).
    pub rows: Vec<Vec<Text>>,
    /// How many rows the answer had.
    pub listed: usize,
}

impl Table {
    /// The value of `field` in `row`.
    pub fn get<'a>(&self, row: &'a [Text], field: &str) -> Option<&'a str> {
        let i = self.fields.iter().position(|f| f == field)?;
        row.get(i).map(Text::as_str)
    }

    /// Takes one data line: the header first, then rows (at most `keep` kept).
    pub fn push_line(&mut self, line: &str, keep: usize) {
        if self.fields.is_empty() {
            self.fields = line.split('\t').take(MAX_FIELDS).map(Text::from).collect();
            return;
        }
        self.listed += 1;
        if self.rows.len() < keep {
            let row = line
                .split('\t')
                .take(self.fields.len().max(1))
                .map(cell)
                .collect();
            self.rows.push(row);
        }
    }
}

/// The most fields a table header may name.
pub const MAX_FIELDS: usize = 64;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lines_cells_and_tables() {
        assert_eq!(classify("OK"), Line::Ok);
        assert_eq!(
            classify("ERROR, invalid id"),
            Line::Error("invalid id".into())
        );
        assert_eq!(classify("OKAY"), Line::Data);
        assert_eq!(cell("\"a b\""), "a b");
        assert_eq!(cell("\""), "\"");
        let mut t = Table::default();
        t.push_line("p_id\tnick", 10);
        t.push_line("1\t\"x\"\t", 10);
        t.push_line("2\t\"y\"\textra\tmore", 1);
        assert_eq!(t.listed, 2);
        assert_eq!(t.rows.len(), 1);
        assert_eq!(t.get(&t.rows[0], "nick"), Some("x"));
    }
}
