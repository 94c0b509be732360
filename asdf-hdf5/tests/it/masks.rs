//! Masked arrays through HDF5 (docs/hdf5.md): an array mask becomes a companion dataset
//! beside the data, named in the data's `_asdf_mask` attribute; a mask number becomes its
//! `_asdf_mask_value` attribute. Converted back, both are masked `core/ndarray`s again, with
//! the same canonical content, whole and band by band. With `ASDF_WRITE_OUT=DIR` the files
//! are left (`hdf5_masked.asdf`, `hdf5_masked.h5`, `hdf5_masked.back.asdf`) for
//! `check_round_trip.py`, which has h5py read the companion datasets and python asdf open the
//! file converted back as numpy masked arrays with python's own reading of the original's
//! masks.

use std::path::Path;

use asdf_core::array::{ArrayOptions, ByteOrder, DType, ScalarType};
use asdf_core::convert::Masked;
use asdf_core::write::{WriteOptions, Writer};
use asdf_core::{AsdfFile, Node, Value};
use asdf_hdf5::{from_asdf_with, to_asdf, FromAsdfOptions, Hdf5Error, ToAsdfOptions};
use hdf5_writer::{AttributeBuilder, DatasetBuilder, Hdf5Builder, Hdf5Writer};

use crate::common;

fn map(entries: Vec<(&str, Node)>) -> Node {
    Node::new(Value::Map(
        entries
            .into_iter()
            .map(|(k, v)| (Node::str(k), v))
            .collect(),
    ))
}

fn canonical(path: &Path) -> serde_json::Value {
    let text = asdf_core::unstable::canonical::to_json(&AsdfFile::open(path).unwrap()).unwrap();
    serde_json::from_str::<serde_json::Value>(&text).unwrap()["tree"].clone()
}

/// A file with an array mask (and a plain sibling whose name the companion would take), an
/// integer mask and a float mask, in a group.
fn masked_file(path: &Path) -> (ndarray::ArrayD<f32>, ndarray::ArrayD<bool>) {
    let data =
        ndarray::Array2::from_shape_fn((30, 7), |(i, j)| (i * 7 + j) as f32 - 50.0).into_dyn();
    let mask = ndarray::Array2::from_shape_fn((30, 7), |(i, j)| (i + 2 * j) % 5 == 0).into_dyn();
    let mut w = Writer::new(WriteOptions::new());
    let flux = w.add_masked_array(&data, &mask, ArrayOptions::default());
    let taken = w.add_array(ndarray::arr1(&[7u8, 8, 9]));
    let counts = w.add_array(ndarray::arr1(&[1i32, -999, 3, -999]));
    assert!(w.set_mask(&counts, Node::int(-999)));
    let temps = w.add_array(ndarray::arr1(&[1.5f64, 2.5, -1.0e30]));
    assert!(w.set_mask(&temps, Node::new(Value::Float(-1.0e30))));
    let tree = map(vec![(
        "obs",
        map(vec![
            ("flux", flux),
            // the companion's first choice of name is taken
            ("flux.mask", taken),
            ("counts", counts),
            ("temps", temps),
        ]),
    )]);
    w.write_to_path(&tree, path).unwrap();
    (data, mask)
}

#[test]
fn array_and_number_masks_go_to_hdf5_and_back() {
    let dir = common::Scratch::new("masks");
    let src = dir.join("in.asdf");
    let (data, mask) = masked_file(&src);
    for band in [32 << 20, 0] {
        let h5 = dir.join(format!("out{band}.h5"));
        let opts = FromAsdfOptions {
            band_min_bytes: band,
            ..FromAsdfOptions::default()
        };
        from_asdf_with(&src, &h5, &opts).unwrap();
        // the HDF5 side, as an h5py user sees it
        let f = hdf5_reader::Hdf5File::open(&h5).unwrap();
        let flux = f.dataset("/obs/flux").unwrap();
        let attr = flux
            .attributes()
            .into_iter()
            .find(|a| a.name == "_asdf_mask")
            .expect("the mask's attribute");
        assert_eq!(attr.read_strings().unwrap(), ["flux.mask.1"]);
        let companion = f.dataset("/obs/flux.mask.1").unwrap();
        assert_eq!(companion.shape(), [30, 7]);
        let bytes = companion.read_raw_bytes().unwrap();
        let got: Vec<bool> = bytes.iter().map(|&b| b != 0).collect();
        assert_eq!(got, mask.iter().copied().collect::<Vec<_>>());
        // the plain sibling is untouched
        assert_eq!(
            f.dataset("/obs/flux.mask")
                .unwrap()
                .read_raw_bytes()
                .unwrap(),
            [7, 8, 9]
        );
        let value = |path: &str| {
            f.dataset(path)
                .unwrap()
                .attributes()
                .into_iter()
                .find(|a| a.name == "_asdf_mask_value")
                .map(|a| a.raw_data)
        };
        assert_eq!(value("/obs/counts"), Some((-999i64).to_le_bytes().to_vec()));
        assert_eq!(
            value("/obs/temps"),
            Some((-1.0e30f64).to_le_bytes().to_vec())
        );
        // and back: masked arrays again, the companion not an array of its own
        for to_band in [32 << 20, 0] {
            let back = dir.join(format!("back{band}-{to_band}.asdf"));
            let opts = ToAsdfOptions {
                band_min_bytes: to_band,
                ..ToAsdfOptions::default()
            };
            to_asdf(&h5, &back, &opts).unwrap();
            let b = AsdfFile::open(&back).unwrap();
            let m: Masked<f32> = b.read_as("/obs/flux").unwrap();
            assert_eq!(m.data, data);
            assert_eq!(m.mask, mask);
            assert!(b.get("/obs/flux.mask.1").is_none());
            let c: Masked<i32> = b.read_as("/obs/counts").unwrap();
            assert_eq!(c.count_masked(), 2);
            assert_eq!(canonical(&src), canonical(&back), "band {band}/{to_band}");
        }
    }
    if let Some(o) = asdf_test_data::write_out_dir() {
        let h5 = dir.join("out0.h5");
        std::fs::copy(&src, o.join("hdf5_masked.asdf")).unwrap();
        std::fs::copy(&h5, o.join("hdf5_masked.h5")).unwrap();
        std::fs::copy(dir.join("back0-0.asdf"), o.join("hdf5_masked.back.asdf")).unwrap();
    }
    asdf_test_data::leave_for_oracle("hdf5_masked_back", &dir.join("back0-0.asdf"), |p| {
        asdf_core::unstable::canonical::to_json(&AsdfFile::open(p).unwrap()).unwrap()
    });
}

/// A masked array larger than the band threshold (32 MiB of data and 32 MiB of mask) goes
/// band by band both ways with its mask.
#[test]
fn a_large_masked_array_goes_band_by_band_with_its_mask() {
    let dir = common::Scratch::new("masks-large");
    let (rows, cols) = (4200usize, 8192usize); // 33.6 MB of uint8, the same of bool8
    let mut w = Writer::new(WriteOptions::new());
    let dt = |ty| DType::scalar(ty, ByteOrder::Little);
    let mut r = 0;
    let data = w.add_array_pieces(
        dt(ScalarType::UInt8),
        &[rows, cols],
        ArrayOptions::default(),
        move || {
            r += 100;
            Ok((r <= rows).then(|| (0..100 * cols).map(|i| ((r + i) % 251) as u8).collect()))
        },
    );
    let mut q = 0;
    let mask = w.add_array_pieces(
        dt(ScalarType::Bool8),
        &[rows, cols],
        ArrayOptions::default(),
        move || {
            q += 100;
            Ok((q <= rows).then(|| {
                (0..100 * cols)
                    .map(|i| u8::from((q + i) % 7 == 0))
                    .collect()
            }))
        },
    );
    assert!(w.set_mask(&data, mask));
    let src = dir.join("big.asdf");
    w.write_to_path(&map(vec![("big", data)]), &src).unwrap();
    let h5 = dir.join("big.h5");
    from_asdf_with(&src, &h5, &FromAsdfOptions::default()).unwrap();
    let f = hdf5_reader::Hdf5File::open(&h5).unwrap();
    let m = f.dataset("/big.mask").unwrap().read_raw_bytes().unwrap();
    assert_eq!(m.len(), rows * cols);
    let piece = 100 * cols;
    let expected = |g: usize| (100 * (g / piece + 1) + g % piece) % 7 == 0;
    assert!(m.iter().enumerate().all(|(g, &b)| (b != 0) == expected(g)));
    let back = dir.join("back.asdf");
    to_asdf(&h5, &back, &ToAsdfOptions::default()).unwrap();
    assert_eq!(canonical(&src), canonical(&back));
    let b = AsdfFile::open(&back).unwrap();
    let masked: Masked<u8> = b.read_as("/big").unwrap();
    assert!(masked
        .mask
        .iter()
        .enumerate()
        .all(|(g, &b)| b == expected(g)));
    assert!(masked
        .data
        .iter()
        .enumerate()
        .all(|(g, &v)| usize::from(v) == (100 * (g / piece + 1) + g % piece) % 251));
}

/// HDF5 files whose mask attributes are wrong: each is an error naming the attribute.
#[test]
fn hostile_mask_attributes_are_errors_naming_them() {
    let dir = common::Scratch::new("masks-hostile");
    let data = || {
        DatasetBuilder::typed_data::<f32>("x", [2u64, 3], &[1.0, 2.0, 3.0, 4.0, 5.0, 6.0]).unwrap()
    };
    let string_attr = |v: &str| AttributeBuilder::vlen_string("_asdf_mask", v).unwrap();
    let bool_mask = |name: &str, shape: &[u64]| {
        let n: u64 = shape.iter().product();
        DatasetBuilder::typed_data::<u8>(name, shape.to_vec(), &vec![1u8; n as usize]).unwrap()
    };
    let cases: Vec<(&str, Hdf5Builder, &str)> = vec![
        (
            "missing",
            Hdf5Builder::new().dataset(data().attribute(string_attr("nothing"))),
            "no dataset",
        ),
        (
            "itself",
            Hdf5Builder::new().dataset(data().attribute(string_attr("x"))),
            "itself",
        ),
        (
            "shape",
            Hdf5Builder::new()
                .dataset(data().attribute(string_attr("m")))
                .dataset(bool_mask("m", &[3, 2])),
            "shape",
        ),
        (
            "type",
            Hdf5Builder::new()
                .dataset(data().attribute(string_attr("m")))
                .dataset(
                    DatasetBuilder::fixed_string_data(
                        "m",
                        [2u64, 3],
                        &["a", "b", "c", "d", "e", "f"],
                    )
                    .unwrap(),
                ),
            "not boolean or numeric",
        ),
        (
            "group",
            Hdf5Builder::new()
                .dataset(data().attribute(string_attr("g")))
                .group("g"),
            "no dataset",
        ),
        (
            "not-a-string",
            Hdf5Builder::new()
                .dataset(data().attribute(AttributeBuilder::scalar("_asdf_mask", 3i64).unwrap())),
            "not a string",
        ),
        (
            "chained",
            Hdf5Builder::new()
                .dataset(data().attribute(string_attr("m")))
                .dataset(bool_mask("m", &[2, 3]).attribute(string_attr("x"))),
            "of its own",
        ),
        (
            "value-array",
            Hdf5Builder::new().dataset(
                data().attribute(AttributeBuilder::vector("_asdf_mask_value", &[1i64, 2]).unwrap()),
            ),
            "not a single",
        ),
        (
            "value-string",
            Hdf5Builder::new().dataset(
                data().attribute(AttributeBuilder::vlen_string("_asdf_mask_value", "x").unwrap()),
            ),
            "not a single",
        ),
    ];
    for (name, builder, says) in cases {
        let h5 = dir.join(format!("{name}.h5"));
        let plan = builder.into_plan().unwrap();
        let file = std::fs::File::create(&h5).unwrap();
        Hdf5Writer::new(file, hdf5_writer::WriteOptions::default())
            .finish(plan)
            .unwrap();
        match to_asdf(&h5, &dir.join("out.asdf"), &ToAsdfOptions::default()) {
            Err(Hdf5Error::Read { path, message }) => {
                assert!(path.starts_with("/x@_asdf_mask"), "{name}: {path}");
                assert!(message.contains(says), "{name}: {message}");
            }
            other => panic!("{name}: {other:?}"),
        }
    }
}

/// `null`s in inline data (an implicit mask, per the ndarray schema) become a companion mask
/// dataset too, and come back as an explicit mask of their places.
#[test]
fn nulls_in_inline_data_become_a_mask() {
    let dir = common::Scratch::new("masks-nulls");
    let null = || Node::new(Value::Null);
    let row = |a: Node, b: Node| Node::seq([a, b]);
    let inline = Node::tagged(
        "tag:stsci.edu:asdf/core/ndarray-1.1.0",
        Value::Map(vec![
            (
                Node::str("data"),
                Node::seq([row(Node::int(1), null()), row(Node::int(3), Node::int(4))]),
            ),
            (Node::str("datatype"), Node::str("int32")),
            (Node::str("shape"), Node::seq([Node::int(2), Node::int(2)])),
        ]),
    );
    let w = Writer::new(WriteOptions::new());
    let src = dir.join("nulls.asdf");
    w.write_to_path(&map(vec![("x", inline)]), &src).unwrap();
    let h5 = dir.join("nulls.h5");
    from_asdf_with(&src, &h5, &FromAsdfOptions::default()).unwrap();
    let f = hdf5_reader::Hdf5File::open(&h5).unwrap();
    assert_eq!(
        f.dataset("/x.mask").unwrap().read_raw_bytes().unwrap(),
        [0, 1, 0, 0]
    );
    let back = dir.join("back.asdf");
    to_asdf(&h5, &back, &ToAsdfOptions::default()).unwrap();
    let m: Masked<i32> = AsdfFile::open(&back).unwrap().read_as("/x").unwrap();
    let orig: Masked<i32> = AsdfFile::open(&src).unwrap().read_as("/x").unwrap();
    assert_eq!(
        m.mask.iter().copied().collect::<Vec<_>>(),
        [false, true, false, false]
    );
    assert_eq!(m, orig);
    // python asdf reads the mask as we do (check_written.py)
    asdf_test_data::leave_for_oracle("hdf5_masked_nulls_back", &back, |p| {
        asdf_core::unstable::canonical::to_json(&AsdfFile::open(p).unwrap()).unwrap()
    });
}

/// A soft link to a masked dataset in another group is a `$ref`: its mask is looked for
/// where the dataset is, not beside the link.
#[test]
fn a_soft_link_to_a_masked_dataset_elsewhere_converts() {
    let dir = common::Scratch::new("masks-link");
    let mut w = Writer::new(WriteOptions::new());
    let x = w.add_masked_array(
        ndarray::arr1(&[1.0f64, 2.0, 3.0]),
        ndarray::arr1(&[false, true, false]),
        ArrayOptions::default(),
    );
    // the link's group comes first, so the link is met before the dataset
    let tree = map(vec![
        (
            "a",
            map(vec![("y", map(vec![("$ref", Node::str("#/z/x"))]))]),
        ),
        ("z", map(vec![("x", x)])),
    ]);
    let src = dir.join("link.asdf");
    w.write_to_path(&tree, &src).unwrap();
    let h5 = dir.join("link.h5");
    from_asdf_with(&src, &h5, &FromAsdfOptions::default()).unwrap();
    let back = dir.join("back.asdf");
    to_asdf(&h5, &back, &ToAsdfOptions::default()).unwrap();
    let b = AsdfFile::open(&back).unwrap();
    assert_eq!(b.get("/a/y/$ref").and_then(Node::as_str), Some("#/z/x"));
    let m: Masked<f64> = b.read_as("/z/x").unwrap();
    assert_eq!(
        m.mask.iter().copied().collect::<Vec<_>>(),
        [false, true, false]
    );
}
