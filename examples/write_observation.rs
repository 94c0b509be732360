//! Build a tree with arrays, write it (compressed, checksummed, atomically), read it back.
//!
//! `cargo run -p asdf-examples --example write_observation [OUT]`

use asdf_core::write::Compression;
use asdf_core::write::{ArrayOptions, CompressionChoice, Storage, WriteOptions, Writer};
use asdf_core::{AsdfFile, Node};
use ndarray::{Array1, Array2};

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let out = std::env::args()
        .nth(1)
        .map(std::path::PathBuf::from)
        .unwrap_or_else(|| std::env::temp_dir().join("asdf-rs-example.asdf"));
    run(&out)
}

/// Writes the example's file to `out` and checks it (also run by `examples/tests`).
pub fn run(out: &std::path::Path) -> Result<(), Box<dyn std::error::Error>> {
    let sci = Array2::from_shape_fn((512, 512), |(y, x)| ((x * y) % 97) as f32);
    let wavelengths = Array1::linspace(1.5, 2.5, 11);

    // Every block zlib-compressed by default; the small array goes inline in the YAML.
    let mut writer = Writer::new(
        WriteOptions::default().compression(CompressionChoice::Codec(Compression::Zlib)),
    );
    let sci_node = writer.add_array(&sci);
    let wl_node = writer.add_array_with(
        &wavelengths,
        ArrayOptions {
            storage: Some(Storage::Inline),
            ..ArrayOptions::default()
        },
    );
    let root = Node::map(vec![
        ("meta", Node::map(vec![("telescope", Node::str("EXAMPLE"))])),
        ("sci", sci_node),
        ("wavelengths_um", wl_node),
    ]);
    let summary = writer.write_to_path(&root, out)?;
    println!("wrote {} ({} bytes)", out.display(), summary.len);

    let file = AsdfFile::options().verify_checksums(true).open(out)?;
    assert_eq!(file.array::<f32>("/sci")?, sci.into_dyn());
    assert_eq!(
        file.array::<f64>("/wavelengths_um")?,
        wavelengths.into_dyn()
    );
    println!(
        "read back: telescope {:?}",
        file.node("/meta/telescope")?.as_str()
    );
    Ok(())
}
