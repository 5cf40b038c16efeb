//! The `ogp` command-line tool.
fn main() {}
