//! Read a file into a struct that models only part of it, change a value, write it back:
//! everything the struct does not know (other arrays, a table, timestamps, history) is kept.
//!
//! `cargo run -p asdf-examples --example keep_unknown [OUT]`

use asdf_core::write::{CompressionChoice, WriteOptions, Writer};
use asdf_core::AsdfFile;
use asdf_examples::typed::PartialProduct;

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let out = std::env::args()
        .nth(1)
        .map(std::path::PathBuf::from)
        .unwrap_or_else(|| std::env::temp_dir().join("asdf-rs-keep-unknown.asdf"));
    run(&out)
}

/// Writes the example's file to `out` and checks it (also run by `examples/tests`).
pub fn run(out: &std::path::Path) -> Result<(), Box<dyn std::error::Error>> {
    let input = AsdfFile::open(asdf_examples::observation_path())?;
    let mut product: PartialProduct = input.read_as("/")?;
    println!(
        "modelled: meta.telescope, sci {:?}; kept as they are: {:?}",
        product.sci.shape(),
        product
            .rest
            .0
            .iter()
            .filter_map(|(k, _)| k.as_str())
            .collect::<Vec<_>>()
    );
    product.meta.telescope = "EXAMPLE-2".into();

    // A writer on the input file takes the data of the arrays the struct did not model
    // from it; `Input` keeps each block's codec.
    let mut writer = Writer::from_file(
        &input,
        WriteOptions::default().compression(CompressionChoice::Input),
    );
    let root = writer.add_value(&product)?;
    writer.write_to_path(&root, out)?;

    let output = AsdfFile::options().verify_checksums(true).open(out)?;
    assert_eq!(output.node("/meta/telescope")?.as_str(), Some("EXAMPLE-2"));
    for path in [
        "/meta/exposure/start",
        "/meta/instrument/filter",
        "/meta/observer",
    ] {
        assert_eq!(output.node(path)?, input.node(path)?, "{path}");
    }
    for array in ["/sci", "/err", "/dq", "/sources", "/wavelengths_um"] {
        assert_eq!(output.dyn_array(array)?, input.dyn_array(array)?, "{array}");
    }
    println!("wrote {}: unknown parts intact", out.display());
    Ok(())
}
