//! Open an ASDF file, look at its tree, and read arrays of several kinds.
//!
//! `cargo run -p asdf-examples --example read_observation [FILE]`

use asdf_core::{AsdfFile, Error};

fn main() -> Result<(), Error> {
    let path = std::env::args()
        .nth(1)
        .map(Into::into)
        .unwrap_or_else(asdf_examples::observation_path);
    // Opening reads the header, the tree and the block headers; no block data yet.
    let file = AsdfFile::options().verify_checksums(true).open(&path)?;

    // Tree access by JSON-pointer path.
    let telescope = file.node("/meta/telescope")?.as_str().unwrap_or("?");
    let filter = file
        .node("/meta/instrument/filter")?
        .as_str()
        .unwrap_or("?");
    println!("{telescope} observation through {filter}");

    // A compressed float32 image as an owned ndarray (decoded and verified on first use).
    let sci = file.array::<f32>("/sci")?;
    let mean = sci.iter().map(|&v| f64::from(v)).sum::<f64>() / sci.len() as f64;
    println!("sci: shape {:?}, mean {mean:.3}", sci.shape());

    // The wrong element type is a typed error, not garbage.
    match file.array::<f64>("/sci") {
        Err(e) => println!("reading sci as f64: {}", asdf_core::display_chain(&e)),
        Ok(_) => println!("unexpected: sci read as f64"),
    }

    // A structured (record) array through the dynamic form.
    let sources = file.dyn_array("/sources")?;
    let ids = sources.field("id")?.to_array::<i32>()?;
    let kinds = sources.field("kind")?.strings()?;
    for (id, kind) in ids.iter().zip(kinds.iter()) {
        println!("source {id}: {kind}");
    }

    // Inline arrays read the same way.
    let wl = file.array::<f64>("/wavelengths_um")?;
    println!(
        "{} wavelengths from {} to {} um",
        wl.len(),
        wl[[0]],
        wl[[wl.len() - 1]]
    );
    Ok(())
}
