//! A typed Roman data product: a WFI image (`ImageModel` in python's roman_datamodels) read
//! into the Rust types `asdftool codegen` generated from rad 1.2.1's schemas (committed as
//! `asdf-codegen/tests/generated/rad.rs`), a meta value changed, written, and read back.
//!
//! ```sh
//! cargo run -p asdf-examples --example roman_image                 # the shipped product
//! cargo run -p asdf-examples --example roman_image -- IN.asdf OUT.asdf
//! ```
//!
//! The types are plain structs and enums: `image.meta.instrument.optical_element` is an enum of
//! the filters rad allows, `image.data` an `ndarray::Array2<f32>`, and what a schema leaves
//! open (the gwcs `meta.wcs`, `time` tags) an `asdf_core::Node` kept as read. Reading checks
//! every required key, enum value, array datatype and dimension; python's roman_datamodels
//! validates the written file against rad's schemas (`.ci/run` does, with
//! `asdf-codegen/tests/roman/check_written.py`). docs/codegen.md has the generator's mapping
//! table.

use std::error::Error;
use std::path::{Path, PathBuf};

/// The types generated from rad 1.2.1's schemas (`asdftool codegen RAD_SCHEMAS -o rad.rs`).
/// Enum variants keep the schema's words, so clippy's `enum_variant_names` fires on enums
/// such as `EnumsExposureType` (`WfiImage`, `WfiGrism`, ...).
#[allow(dead_code, clippy::enum_variant_names)]
pub mod rad {
    include!("../asdf-codegen/tests/generated/rad.rs");
}

use rad::{EnumsWfiOpticalElement, WfiImage};

/// The exposure time the example sets, in seconds.
pub const EXPOSURE_TIME: f64 = 139.25;

/// The product the example reads when given no path: roman_datamodels' image of
/// `asdf-codegen/tests/roman/`.
pub fn shipped_image() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../asdf-codegen/tests/roman/image.asdf")
}

/// Reads the WFI image at `input`, sets its optical element to F158, its exposure time to
/// [`EXPOSURE_TIME`] and its file name to `output`'s, writes it to `output` (under `roman`,
/// as roman_datamodels does) and reads it back; returns what was read back.
pub fn run(input: &Path, output: &Path) -> Result<WfiImage, Box<dyn Error>> {
    let mut image: WfiImage = asdf_core::read(input, "/roman")?;
    println!(
        "{}: {} {:?} {:?}, {}x{} pixels, exposure time {}",
        input.display(),
        image.meta.filename,
        image.meta.instrument.detector,
        image.meta.instrument.optical_element,
        image.data.nrows(),
        image.data.ncols(),
        image.meta.exposure.exposure_time,
    );

    image.meta.instrument.optical_element = EnumsWfiOpticalElement::F158;
    image.meta.exposure.exposure_time = EXPOSURE_TIME;
    image.meta.filename = output
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    asdf_core::write_at(output, "/roman", &image)?;

    let back: WfiImage = asdf_core::read(output, "/roman")?;
    if back != image {
        return Err("the image read back differs from the one written".into());
    }
    println!(
        "{}: {:?}, exposure time {}",
        output.display(),
        back.meta.instrument.optical_element,
        back.meta.exposure.exposure_time
    );
    Ok(back)
}

#[allow(dead_code)]
fn main() -> Result<(), Box<dyn Error>> {
    let args: Vec<PathBuf> = std::env::args_os().skip(1).map(PathBuf::from).collect();
    let (input, output) = match args.as_slice() {
        [] => (
            shipped_image(),
            std::env::temp_dir().join("roman_image_example.asdf"),
        ),
        [input, output] => (input.clone(), output.clone()),
        _ => return Err("usage: roman_image [IN.asdf OUT.asdf]".into()),
    };
    run(&input, &output)?;
    Ok(())
}
