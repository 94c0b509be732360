//! `Masked<T, D>` reads the masks python asdf 6.0.0 gives (mask arrays in blocks, inline
//! masks, scalar masks, inline nulls: `tests/data/fixtures/masks.python.json`, written by
//! `tests/oracle/masks.py`) and writes masked arrays python reads back as masked; arrays of
//! `String` read `ascii` and `ucs4` arrays and write `ucs4`. With `ASDF_WRITE_OUT`, python asdf
//! opens what we wrote (`tests/oracle/check_written.py`).

use crate::common;

use asdf_core::convert::{MaskValue, Masked};
use asdf_core::write::{WriteOptions, Writer};
use asdf_core::{tree, AsdfFile};
use ndarray::{arr1, Array1, Array2, IxDyn};
use serde_json::Value;

fn fixtures() -> std::path::PathBuf {
    common::data_dir("fixtures")
}

fn expected() -> Value {
    let text = std::fs::read_to_string(fixtures().join("masks.python.json")).unwrap();
    serde_json::from_str(&text).unwrap()
}

/// Checks one array against python's mask and unmasked values.
fn check<T>(file: &AsdfFile, name: &str, key: &str, want: &Value)
where
    T: asdf_core::array::Element + MaskValue + Into<f64> + Copy,
{
    let m: Masked<T> = file
        .read_as(&format!("/{key}"))
        .unwrap_or_else(|e| panic!("{name} {key}: {e}"));
    let shape: Vec<usize> = serde_json::from_value(want["shape"].clone()).unwrap();
    assert_eq!(m.data.shape(), &shape[..], "{name} {key}");
    let mask: Vec<bool> = serde_json::from_value(want["mask"].clone()).unwrap();
    assert_eq!(
        m.mask.iter().copied().collect::<Vec<_>>(),
        mask,
        "{name} {key}"
    );
    let got: Vec<f64> = m.compressed().into_iter().map(Into::into).collect();
    let expect: Vec<f64> = want["unmasked"]
        .as_array()
        .unwrap()
        .iter()
        .map(|v| v.as_f64().unwrap_or(f64::NAN))
        .collect();
    assert_eq!(got.len(), expect.len(), "{name} {key}");
    for (g, e) in got.iter().zip(&expect) {
        assert!(
            g == e || (g.is_nan() && e.is_nan()),
            "{name} {key}: {got:?} vs {expect:?}"
        );
    }
}

#[test]
fn masks_read_as_python_reads_them() {
    let want = expected();
    let mut n = 0;
    for (name, arrays) in want.as_object().unwrap() {
        let file = AsdfFile::open(fixtures().join(name)).unwrap();
        for (key, w) in arrays.as_object().unwrap() {
            let dtype = file.dyn_array(&format!("/{key}")).unwrap().dtype.name();
            match dtype.as_str() {
                "float64" => check::<f64>(&file, name, key, w),
                "int32" => check::<i32>(&file, name, key, w),
                "int16" => check::<i16>(&file, name, key, w),
                other => panic!("{name} {key}: no check for {other}"),
            }
            n += 1;
        }
    }
    assert_eq!(n, 9, "arrays checked");
}

#[test]
fn a_masked_array_of_the_wrong_rank_or_mask_shape_is_an_error() {
    let file = AsdfFile::open(fixtures().join("masked.asdf")).unwrap();
    // m2 is 2-D
    let e = file
        .read_as::<Masked<i32, ndarray::Ix1>>("/m2")
        .unwrap_err();
    assert!(e.to_string().contains("dimensions") || format!("{e:?}").contains("dimensions"));
    // a mask of another shape cannot be built or written
    assert!(Masked::new(arr1(&[1.0f64, 2.0]), arr1(&[true])).is_none());
}

#[test]
fn masked_arrays_round_trip_in_blocks_and_inline() {
    let data = Array2::from_shape_fn((3, 4), |(i, j)| (i * 4 + j) as f64 - 2.5);
    let mask = data.mapv(|v| v < 0.0);
    let m = Masked::new(data, mask).unwrap();
    for storage in [
        asdf_core::write::Storage::Internal,
        asdf_core::write::Storage::Inline,
    ] {
        let mut w = Writer::new(WriteOptions::default().storage(storage));
        let node = w.add_value(&m).unwrap();
        let bytes = w.write_to_vec(&tree!({"m": node})).unwrap();
        let file = AsdfFile::from_bytes(bytes.clone()).unwrap();
        let back: Masked<f64, ndarray::Ix2> = file.read_as("/m").unwrap();
        assert_eq!(back, m, "{storage:?}");
        assert_eq!(back.count_masked(), 3);
        assert_eq!(back.filled(0.0)[[0, 0]], 0.0);
        common::dump_for_oracle(&format!("masked_{storage:?}").to_lowercase(), &bytes);
    }
    // an unmasked array reads with nothing masked
    let mut w = Writer::new(WriteOptions::default());
    let plain = arr1(&[1i32, 2, 3]);
    let node = w.add_value(&plain).unwrap();
    let file = AsdfFile::from_bytes(w.write_to_vec(&tree!({"p": node})).unwrap()).unwrap();
    let back: Masked<i32> = file.read_as("/p").unwrap();
    assert_eq!(back, Masked::unmasked(plain.into_dyn()));
    assert_eq!(back.mask.raw_dim(), IxDyn(&[3]));
}

#[test]
fn string_arrays_read_ascii_and_ucs4_and_write_ucs4() {
    // the values python wrote in the fixture's YAML
    let file = AsdfFile::open(fixtures().join("dtypes_strings_inline.asdf")).unwrap();
    let ascii: Array1<String> = file.read_as("/ascii").unwrap();
    assert_eq!(ascii.to_vec(), ["", "a", "hello", "12345678"]);
    let ucs4: Array1<String> = file.read_as("/ucs4_big").unwrap();
    assert_eq!(ucs4.to_vec(), ["", "a", "üß", "日本語", "\u{1F600}x"]);
    let two: Array2<String> = file.read_as("/ascii_2d").unwrap();
    assert_eq!(two[[1, 1]], "def");
    // a number array is not a string array: the error says what was found
    let nums = AsdfFile::open(fixtures().join("masked.asdf")).unwrap();
    let e = nums.read_as::<Array1<String>>("/m").unwrap_err();
    assert!(format!("{e}{e:?}").contains("float64"), "{e:?}");

    let words = arr1(&["NIRCAM".to_string(), "".into(), "日本".into()]);
    let mut w = Writer::new(WriteOptions::default());
    let node = w.add_value(&words).unwrap();
    let bytes = w.write_to_vec(&tree!({"words": node})).unwrap();
    let file = AsdfFile::from_bytes(bytes.clone()).unwrap();
    assert_eq!(file.dyn_array("/words").unwrap().dtype.name(), "ucs4[6]");
    assert_eq!(file.read_as::<Array1<String>>("/words").unwrap(), words);
    common::dump_for_oracle("string_array", &bytes);
    // a NUL cannot be kept (ucs4 pads with NULs)
    let bad = arr1(&["a\0b".to_string()]);
    let mut w = Writer::new(WriteOptions::default());
    let err = w.add_value(&bad).unwrap_err().to_string();
    assert_eq!(
        err,
        "/: the string \"a\\0b\" holds a NUL, which a ucs4 array cannot keep (NULs pad it)"
    );
}
