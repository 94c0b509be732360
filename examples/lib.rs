//! Runnable examples for asdf-rs: `cargo run -p asdf-examples --example read_observation`.
//! The data they read lives in `examples/data/`.

/// Path of the example observation file shipped with the repository.
pub fn observation_path() -> std::path::PathBuf {
    std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("data/observation.asdf")
}
