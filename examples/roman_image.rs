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

// the generated code compiles without a warning (asdf-codegen/tests/check_rad.sh relies on
// this build for rad's types)
#![deny(warnings)]

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

#[cfg_attr(test, allow(dead_code))]
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

/// The Roman products python's roman_datamodels writes (`asdf-codegen/tests/roman/`: image,
/// raw, ramp, dark, flat, gain, mask, mosaic, made by its `generate.py`) read into the
/// generated types, pass `assert_round_trip`, and are written back; with `ASDF_WRITE_OUT=DIR`
/// into `DIR/roman/`, where `asdf-codegen/tests/roman/check_written.py` has roman_datamodels
/// open and validate them and compare their values with the originals. They live here, in
/// the example's own test target (`test = true`), so that the generated types are compiled
/// once for the example and its tests.
#[cfg(test)]
mod tests {
    use std::fmt::Debug;
    use std::path::{Path, PathBuf};

    use super::rad;
    use asdf_core::convert::{Extra, FromAsdf, ToAsdf};
    use asdf_core::testing::assert_round_trip;
    use asdf_core::AsdfFile;
    use ndarray::{ArrayBase, Data, Dimension};

    fn product(name: &str) -> PathBuf {
        Path::new(env!("CARGO_MANIFEST_DIR"))
            .join(format!("../asdf-codegen/tests/roman/{name}.asdf"))
    }

    fn out_dir() -> PathBuf {
        let dir = std::env::var_os("ASDF_WRITE_OUT")
            .map(|d| PathBuf::from(d).join("roman"))
            .unwrap_or_else(|| {
                std::env::temp_dir().join(format!("asdf-examples-roman-{}", std::process::id()))
            });
        std::fs::create_dir_all(&dir).expect("the output folder");
        dir
    }

    /// Reads product `name` into `T`, checks the round trip, writes it back under `roman` and
    /// reads that file again into an equal value.
    fn read_and_write_back<T: FromAsdf + ToAsdf + PartialEq + Debug>(name: &str) -> T {
        let path = product(name);
        let value: T = asdf_core::read(&path, "/roman")
            .unwrap_or_else(|e| panic!("{name}: {}", asdf_core::display_chain(&e)));
        assert_round_trip(&value);
        let out = out_dir().join(format!("{name}.asdf"));
        asdf_core::write_at(&out, "/roman", &value)
            .unwrap_or_else(|e| panic!("{name}: writing {}: {e}", out.display()));
        let again: T = asdf_core::read(&out, "/roman").expect("the written file reads back");
        assert_eq!(
            again, value,
            "{name}: the file written back reads differently"
        );
        value
    }

    /// `generate.py` fills each top-level array with `(i * 7 + k) % 97` in C order, `k` the
    /// array's key's place among the product's keys in sorted order: checks `array` holds that.
    fn assert_filled<A, S, D>(name: &str, key: &str, array: &ArrayBase<S, D>)
    where
        S: Data<Elem = A>,
        D: Dimension,
        A: Copy + Into<f64> + Debug,
    {
        let file = AsdfFile::open(product(name)).expect("the product opens");
        let mut keys: Vec<String> = file
            .node("/roman")
            .expect("/roman")
            .as_map()
            .expect("a mapping")
            .iter()
            .filter_map(|(k, _)| k.as_str().map(str::to_string))
            .collect();
        keys.sort();
        let k = keys.iter().position(|x| x == key).expect("the key") as u64;
        assert!(!array.is_empty(), "{name}/{key}: empty");
        for (i, v) in array.iter().enumerate() {
            let want = ((i as u64 * 7 + k) % 97) as f64;
            assert_eq!((*v).into(), want, "{name}/{key}: element {i}");
        }
    }

    /// Every key of the file is a field of the type: nothing was left to `extra`.
    fn assert_no_extra(name: &str, place: &str, extra: &Extra) {
        assert!(
            extra.0.is_empty(),
            "{name}{place}: keys no field holds: {:?}",
            extra.0.iter().map(|(k, _)| k).collect::<Vec<_>>()
        );
    }

    #[test]
    fn image() {
        let v: rad::WfiImage = read_and_write_back("image");
        assert_eq!(v.data.dim(), (32, 32));
        assert_filled("image", "data", &v.data);
        assert_filled("image", "dq", &v.dq);
        assert_filled("image", "err", &v.err.mapv(f32::from));
        assert_eq!(v.meta.filename, "image.asdf");
        assert_eq!(v.meta.instrument.detector, rad::EnumsWfiDetector::Wfi01);
        assert_eq!(v.meta.exposure.type_, rad::EnumsExposureType::WfiImage);
        assert!(v
            .meta
            .wcs
            .as_ref()
            .and_then(|w| w.tag())
            .is_some_and(|t| t.starts_with("tag:stsci.edu:gwcs/wcs-")));
        assert_no_extra("image", "", &v.extra);
        assert_no_extra("image", "/meta", &v.meta.extra);
    }

    #[test]
    fn raw() {
        let v: rad::WfiScienceRaw = read_and_write_back("raw");
        assert_eq!(v.data.dim(), (2, 32, 32));
        assert_filled("raw", "data", &v.data);
        assert_filled("raw", "amp33", &v.amp33);
        assert_eq!(v.meta.filename, "raw.asdf");
        assert_no_extra("raw", "", &v.extra);
        assert_no_extra("raw", "/meta", &v.meta.extra);
    }

    #[test]
    fn ramp() {
        let v: rad::Ramp = read_and_write_back("ramp");
        assert_eq!(v.data.dim(), (2, 32, 32));
        assert_filled("ramp", "data", &v.data);
        assert_filled("ramp", "groupdq", &v.groupdq);
        assert_filled("ramp", "pixeldq", &v.pixeldq);
        assert_filled("ramp", "border_ref_pix_left", &v.border_ref_pix_left);
        assert_eq!(v.meta.filename, "ramp.asdf");
        assert_no_extra("ramp", "", &v.extra);
        assert_no_extra("ramp", "/meta", &v.meta.extra);
    }

    #[test]
    fn dark() {
        let v: rad::Dark = read_and_write_back("dark");
        assert_filled("dark", "dq", &v.dq);
        assert_filled("dark", "dark_slope", &v.dark_slope);
        assert_filled("dark", "dark_slope_error", &v.dark_slope_error);
        assert_eq!(v.meta.reftype, "DARK");
        assert_no_extra("dark", "", &v.extra);
        assert_no_extra("dark", "/meta", &v.meta.extra);
    }

    #[test]
    fn flat() {
        let v: rad::Flat = read_and_write_back("flat");
        assert_eq!(v.data.dim(), (32, 32));
        assert_filled("flat", "data", &v.data);
        assert_filled("flat", "dq", &v.dq);
        assert_filled("flat", "err", &v.err);
        assert_eq!(v.meta.reftype, "FLAT");
        assert_no_extra("flat", "", &v.extra);
        assert_no_extra("flat", "/meta", &v.meta.extra);
    }

    #[test]
    fn gain() {
        let v: rad::Gain = read_and_write_back("gain");
        assert_eq!(v.data.dim(), (32, 32));
        assert_filled("gain", "data", &v.data);
        assert_eq!(v.meta.reftype, "GAIN");
        assert_no_extra("gain", "", &v.extra);
        assert_no_extra("gain", "/meta", &v.meta.extra);
    }

    #[test]
    fn mask() {
        let v: rad::Mask = read_and_write_back("mask");
        assert_eq!(v.dq.dim(), (32, 32));
        assert_filled("mask", "dq", &v.dq);
        assert_eq!(v.meta.reftype, "MASK");
        assert_no_extra("mask", "", &v.extra);
        assert_no_extra("mask", "/meta", &v.meta.extra);
    }

    #[test]
    fn mosaic() {
        let v: rad::WfiMosaic = read_and_write_back("mosaic");
        assert_eq!(v.data.dim(), (32, 32));
        assert_filled("mosaic", "data", &v.data);
        assert_filled("mosaic", "context", &v.context);
        assert_filled("mosaic", "weight", &v.weight);
        assert_eq!(v.meta.filename, "mosaic.asdf");
        assert_no_extra("mosaic", "", &v.extra);
        assert_no_extra("mosaic", "/meta", &v.meta.extra);
    }

    /// The worked example: the image read, its optical element and exposure time changed,
    /// written and read back (check_written.py validates its file with roman_datamodels).
    #[test]
    fn worked_example_edits_the_image() {
        let out = out_dir().join("example_image.asdf");
        let back = super::run(&super::shipped_image(), &out).expect("the example runs");
        assert_eq!(
            back.meta.instrument.optical_element,
            rad::EnumsWfiOpticalElement::F158
        );
        assert_eq!(back.meta.exposure.exposure_time, super::EXPOSURE_TIME);
        assert_eq!(back.meta.filename, "example_image.asdf");
        // the rest is the original's
        let original: rad::WfiImage = asdf_core::read(product("image"), "/roman").expect("image");
        assert_eq!(back.data, original.data);
        assert_eq!(back.meta.wcs, original.meta.wcs);
        assert_eq!(back.meta.observation, original.meta.observation);
    }
}
