//! A2S codec benchmark (placeholder until the bench lands).
fn main() {}
