//! A typed data product: a Rust struct with `#[derive(AsdfType)]`, its own tag and a user
//! schema, written with compressed arrays, read back, and validated.
//!
//! `cargo run -p asdf-examples --example typed_observation [OUT]`

use asdf_core::write::{WriteOptions, Writer};
use asdf_core::{AsdfFile, Node};
use asdf_examples::typed::{Exposure, Observation, OBSERVATION_SCHEMA_URI};
use ndarray::Array2;

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let out = std::env::args()
        .nth(1)
        .map(std::path::PathBuf::from)
        .unwrap_or_else(|| std::env::temp_dir().join("asdf-rs-typed-observation.asdf"));
    run(&out)
}

/// Writes the example's file to `out` and checks it (also run by `examples/tests`).
pub fn run(out: &std::path::Path) -> Result<(), Box<dyn std::error::Error>> {
    // The schema of our own tag: registered once, then every write and every
    // `AsdfFile::validate` checks `Observation` nodes against it.
    asdf_examples::typed::register_schema()?;

    let obs = Observation {
        meta: Exposure {
            telescope: "EXAMPLE".into(),
            instrument: "IMAGER".into(),
            exposure_time: 1200.5,
            filter: Some("F200W".into()),
        },
        sci: Array2::from_shape_fn((256, 256), |(y, x)| ((x * y) % 97) as f32),
        err: Array2::from_elem((256, 256), 0.5f32),
        mask: Array2::from_shape_fn((256, 256), |(y, x)| x == y),
    };

    let mut writer = Writer::new(WriteOptions::default());
    let node = writer.add_value(&obs)?; // arrays borrowed, compressed as the struct says
    writer.write_to_path(&Node::map([("observation", node)]), out)?;
    println!("wrote {}", out.display());

    let file = AsdfFile::options().verify_checksums(true).open(out)?;
    file.validate()?; // core schemas and ours
    let back: Observation = file.read_as("/observation")?;
    assert_eq!(back, obs);
    for block in file.blocks() {
        println!(
            "block: {} bytes stored, compression {:?}",
            block.used_size,
            String::from_utf8_lossy(&block.compression)
        );
    }
    println!(
        "read back {} ({} s, tag {:?}), validated against {OBSERVATION_SCHEMA_URI}",
        back.meta.telescope,
        back.meta.exposure_time,
        <Observation as asdf_core::ToAsdf>::tag()
    );
    Ok(())
}
