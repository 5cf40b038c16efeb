//! `include/ogp.h` is what cbindgen makes of the crate today; fails with the command that
//! regenerates it when it is stale.

use std::path::PathBuf;

#[test]
fn header_is_up_to_date() {
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR"));
    let config = cbindgen::Config::from_file(dir.join("cbindgen.toml")).expect("cbindgen.toml");
    let mut generated = Vec::new();
    cbindgen::Builder::new()
        .with_crate(&dir)
        .with_config(config)
        .generate()
        .expect("cbindgen could not read the crate")
        .write(&mut generated);
    let generated = String::from_utf8(generated).expect("UTF-8 header");
    let path = dir.join("include/ogp.h");
    if matches!(std::env::var("OGP_BLESS").as_deref(), Ok(v) if !v.is_empty() && v != "0") {
        std::fs::write(&path, &generated).expect("writing include/ogp.h");
        return;
    }
    let current = std::fs::read_to_string(&path).unwrap_or_default();
    assert!(
        current == generated,
        "crates/ogp-ffi/include/ogp.h is stale: regenerate it with \
         `OGP_BLESS=1 cargo test -p ogp-ffi --test header` and commit it"
    );
}
