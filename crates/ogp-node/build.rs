//! Link arguments of a Node addon (napi-build).

fn main() {
    napi_build::setup();
}
