//! Round trips. h5 → asdf → h5: the HDF5 file asdf-rs writes back reads in our HDF5 reader as
//! the original does (every dataset, attribute, chunk shape and filter); with
//! `ASDF_WRITE_OUT=DIR` both steps are left there (`hdf5_NAME.asdf`, `hdf5_NAME.back.h5`)
//! for `asdf-hdf5/tests/check_round_trip.py`, which compares them with h5py and python asdf.
//! asdf → h5 → asdf: an ASDF tree of arrays, scalars and strings comes back with the same
//! canonical content.

use std::path::{Path, PathBuf};

use asdf_core::AsdfFile;

use crate::common;
use asdf_hdf5::{from_asdf, from_asdf_with, to_asdf, FromAsdfOptions, ToAsdfOptions};

/// The fixtures, every one of which round-trips whole (soft and external links come back as
/// links).
const FIXTURES: [&str; 11] = [
    "chunked",
    "compound",
    "enums_scalars",
    "groups_attrs",
    "links_earliest",
    "links_latest",
    "lzf",
    "more_filters",
    "numeric",
    "string_bytes",
    "strings",
];

fn data() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/data")
}

/// A scratch folder `asdf-hdf5-rt-NAME-PID`, removed when the test ends (passed or not).
fn tmp(name: &str) -> common::Scratch {
    common::Scratch::new(&format!("rt-{name}"))
}

fn canonical(path: &Path) -> serde_json::Value {
    let text = asdf_core::unstable::canonical::to_json(&AsdfFile::open(path).unwrap()).unwrap();
    serde_json::from_str(&text).unwrap()
}

#[test]
fn h5_to_asdf_to_h5_keeps_every_dataset_attribute_and_chunking() {
    let dir = tmp("h5");
    let out = asdf_test_data::write_out_dir();
    for name in FIXTURES {
        let src = data().join(format!("{name}.h5"));
        let middle = dir.join(format!("hdf5_{name}.asdf"));
        let back = dir.join(format!("hdf5_{name}.back.h5"));
        to_asdf(&src, &middle, &ToAsdfOptions::default()).unwrap();
        let s = from_asdf(&middle, &back).unwrap_or_else(|e| panic!("{name}: {e}"));
        assert!(s.datasets > 0, "{name}");
        // the file written back converts to the same ASDF content as the original
        let again = dir.join(format!("hdf5_{name}.again.asdf"));
        to_asdf(&back, &again, &ToAsdfOptions::default()).unwrap();
        let (mut a, mut b) = (canonical(&middle), canonical(&again));
        if name == "lzf" || name == "more_filters" {
            // lzf and scaleoffset are read, not written (docs/hdf5.md): the data comes back
            // unfiltered, so only the filter records differ
            for doc in [&mut a, &mut b] {
                if let Some(m) = doc["tree"]["value"]["_hdf5"].as_object_mut() {
                    m.remove("filters");
                }
            }
        }
        assert_eq!(
            a["tree"], b["tree"],
            "{name}: h5 → asdf → h5 → asdf changed the content"
        );
        asdf_test_data::leave_for_oracle(&format!("hdf5_{name}"), &middle, |p| {
            asdf_core::unstable::canonical::to_json(&AsdfFile::open(p).unwrap()).unwrap()
        });
        if let Some(o) = &out {
            // the HDF5 file written back, for h5py
            std::fs::copy(&back, o.join(format!("hdf5_{name}.back.h5"))).unwrap();
        }
    }
}

/// Every dataset of every fixture converted band by band (the path of datasets larger than
/// memory, forced here with a threshold of 0), both ways, gives what the whole conversion
/// gives; the HDF5 files written band by band are left (`hdf5_NAME.banded.h5`) for h5py in
/// check_round_trip.py, the ASDF files written piece by piece (`hdf5_banded_NAME*.asdf`, in
/// zlib, zstd, lz4, bzp2 and lz4f) for python asdf in check_written.py.
#[test]
fn banded_conversion_equals_whole_conversion_both_ways() {
    let dir = tmp("banded");
    let out = asdf_test_data::write_out_dir();
    let banded = ToAsdfOptions {
        band_min_bytes: 0,
        ..ToAsdfOptions::default()
    };
    let banded_back = FromAsdfOptions {
        band_min_bytes: 0,
        ..FromAsdfOptions::default()
    };
    for name in FIXTURES {
        let src = data().join(format!("{name}.h5"));
        let (whole, bands) = (dir.join("whole.asdf"), dir.join("bands.asdf"));
        to_asdf(&src, &whole, &ToAsdfOptions::default()).unwrap();
        to_asdf(&src, &bands, &banded).unwrap_or_else(|e| panic!("{name}: {e}"));
        let f = AsdfFile::open(&bands).unwrap();
        f.verify_checksums().unwrap();
        // written piece by piece (zlib blocks for deflated datasets): for python asdf too
        asdf_test_data::leave_for_oracle(&format!("hdf5_banded_{name}"), &bands, |p| {
            asdf_core::unstable::canonical::to_json(&AsdfFile::open(p).unwrap()).unwrap()
        });
        assert_eq!(
            canonical(&whole)["tree"],
            canonical(&bands)["tree"],
            "{name}: h5 → asdf"
        );
        // ASDF → HDF5 band by band, from blocks compressed by each streaming codec too
        let (h5_whole, h5_bands) = (dir.join("whole.h5"), dir.join("bands.h5"));
        from_asdf(&whole, &h5_whole).unwrap();
        from_asdf_with(&whole, &h5_bands, &banded_back).unwrap_or_else(|e| panic!("{name}: {e}"));
        let (a, b) = (dir.join("a.asdf"), dir.join("b.asdf"));
        to_asdf(&h5_whole, &a, &ToAsdfOptions::default()).unwrap();
        to_asdf(&h5_bands, &b, &ToAsdfOptions::default()).unwrap();
        assert_eq!(
            canonical(&a)["tree"],
            canonical(&b)["tree"],
            "{name}: asdf → h5"
        );
        if let Some(o) = &out {
            std::fs::copy(&h5_bands, o.join(format!("hdf5_{name}.banded.h5"))).unwrap();
        }
        for codec in ["zstd", "lz4", "bzp2", "lz4f"] {
            let c = Some(asdf_core::write::CompressionChoice::Codec(
                codec.parse().unwrap(),
            ));
            let coded = dir.join(format!("{codec}.asdf"));
            let opts = ToAsdfOptions {
                compression: c,
                ..banded.clone()
            };
            to_asdf(&src, &coded, &opts).unwrap();
            asdf_test_data::leave_for_oracle(&format!("hdf5_banded_{name}_{codec}"), &coded, |p| {
                asdf_core::unstable::canonical::to_json(&AsdfFile::open(p).unwrap()).unwrap()
            });
            let h5 = dir.join(format!("{codec}.h5"));
            from_asdf_with(&coded, &h5, &banded_back)
                .unwrap_or_else(|e| panic!("{name} {codec}: {e}"));
            let again = dir.join(format!("{codec}.again.asdf"));
            to_asdf(&h5, &again, &ToAsdfOptions::default()).unwrap();
            let (mut x, mut y) = (canonical(&a), canonical(&again));
            // arrays compressed with another codec come back chunked and deflated
            for doc in [&mut x, &mut y] {
                let Some(root) = doc["tree"]["value"].as_object_mut() else {
                    continue;
                };
                if let Some(m) = root.get_mut("_hdf5").and_then(|m| m.as_object_mut()) {
                    m.remove("filters");
                    m.remove("chunks");
                    if m.is_empty() {
                        root.remove("_hdf5");
                    }
                }
            }
            assert_eq!(x["tree"], y["tree"], "{name} {codec}: asdf → h5");
        }
    }
}

#[test]
fn asdf_to_h5_to_asdf_keeps_arrays_scalars_and_strings() {
    use asdf_core::write::{WriteOptions, Writer};
    use asdf_core::{Node, Value};
    use ndarray::{arr1, arr2};

    let dir = tmp("asdf");
    let a = arr2(&[[1.5f32, 2.0], [3.0, -4.0]]);
    let b = arr1(&[1i64, -2, 3]);
    let mut w = Writer::new(WriteOptions::new());
    let na = w.add_array(&a);
    let nb = w.add_array(&b);
    let tree = Node::new(Value::Map(vec![
        (Node::str("image"), na),
        (
            Node::str("meta"),
            Node::new(Value::Map(vec![
                (Node::str("counts"), nb),
                (Node::str("observer"), Node::str("Hubble")),
                (Node::str("exposure"), Node::new(Value::Float(12.5))),
                (Node::str("frames"), Node::int(7)),
                (Node::str("calibrated"), Node::new(Value::Bool(true))),
                (Node::str("empty"), Node::new(Value::Map(Vec::new()))),
                (
                    Node::str("filters"),
                    Node::seq([Node::str("F090W"), Node::str("F200W")]),
                ),
            ])),
        ),
    ]));
    let src = dir.join("in.asdf");
    w.write_to_path(&tree, &src).unwrap();
    let h5 = dir.join("out.h5");
    from_asdf(&src, &h5).unwrap();
    let back = dir.join("back.asdf");
    to_asdf(&h5, &back, &ToAsdfOptions::default()).unwrap();
    let f = AsdfFile::open(&back).unwrap();
    assert_eq!(f.array::<f32>("/image").unwrap(), a.into_dyn());
    assert_eq!(f.array::<i64>("/meta/counts").unwrap(), b.into_dyn());
    // scalars and strings of a group are its attributes in HDF5, kept under _hdf5
    let attr = |name: &str| f.get(&format!("/_hdf5/attrs/~1meta/{name}")).cloned();
    assert_eq!(
        attr("observer")
            .and_then(|n| n.as_str().map(str::to_string))
            .as_deref(),
        Some("Hubble")
    );
    assert_eq!(
        attr("frames").and_then(|n| n.as_int().and_then(|i| i.as_i128())),
        Some(7)
    );
    assert_eq!(attr("calibrated").and_then(|n| n.as_bool()), Some(true));
    let filters: Vec<String> = attr("filters")
        .unwrap()
        .as_seq()
        .unwrap()
        .iter()
        .map(|n| n.as_str().unwrap().to_string())
        .collect();
    assert_eq!(filters, ["F090W", "F200W"]);
    // an empty mapping is an empty group, and comes back as an empty mapping
    assert_eq!(
        f.get("/meta/empty")
            .and_then(|n| n.as_map())
            .map(<[_]>::len),
        Some(0)
    );
}

/// A large dataset reports its progress band by band in both directions, up to its size.
#[test]
fn progress_advances_band_by_band_both_ways() {
    use asdf_core::array::{ArrayOptions, ByteOrder, DType, ScalarType};
    use asdf_core::write::{WriteOptions, Writer};
    use asdf_core::{Node, Value};
    use std::sync::{Arc, Mutex};

    let dir = tmp("progress");
    let (rows, cols) = (5000usize, 8192usize);
    let mut w = Writer::new(WriteOptions::new());
    let mut r = 0;
    let node = w.add_array_pieces(
        DType::scalar(ScalarType::UInt8, ByteOrder::Little),
        &[rows, cols],
        ArrayOptions::default(),
        move || {
            r += 500;
            Ok((r <= rows).then(|| vec![(r / 500) as u8; 500 * cols]))
        },
    );
    let hint = Node::new(Value::Map(vec![(
        Node::str("chunks"),
        Node::new(Value::Map(vec![(
            Node::str("/x"),
            Node::seq([Node::int(100), Node::int(cols as i128)]),
        )])),
    )]));
    let tree = Node::new(Value::Map(vec![
        (Node::str("x"), node),
        (Node::str("_hdf5"), hint),
    ]));
    let src = dir.join("in.asdf");
    w.write_to_path(&tree, &src).unwrap();
    let seen = Arc::new(Mutex::new(Vec::new()));
    let log = Arc::clone(&seen);
    let progress = asdf_hdf5::Progress::new(move |done, total| {
        log.lock().unwrap().push((done, total));
    });
    let check = |what: &str, at_least: usize| {
        let calls = std::mem::take(&mut *seen.lock().unwrap());
        assert!(calls.len() >= at_least, "{what}: {} reports", calls.len());
        assert!(
            calls.windows(2).all(|w| w[0].0 <= w[1].0),
            "{what}: {calls:?}"
        );
        let size = (rows * cols) as u64;
        assert_eq!(calls.last().copied(), Some((size, size)), "{what}");
    };
    let h5 = dir.join("out.h5");
    let opts = FromAsdfOptions {
        progress: Some(progress.clone()),
        ..FromAsdfOptions::default()
    };
    from_asdf_with(&src, &h5, &opts).unwrap();
    check("asdf → h5", 10);
    let back = dir.join("back.asdf");
    let opts = ToAsdfOptions {
        progress: Some(progress),
        ..ToAsdfOptions::default()
    };
    to_asdf(&h5, &back, &opts).unwrap();
    // bands of about 8 MiB: 10 rows of 100-row chunks
    check("h5 → asdf", 5);
    let a = AsdfFile::open(&back).unwrap().array::<u8>("/x").unwrap();
    assert_eq!(a[[0, 0]], 1);
    assert_eq!(a[[4999, 8191]], 10);
}

/// `$ref`s become HDF5 soft and external links (in nested groups, with non-ASCII names), a
/// relative soft link keeps its relative path through h5 → asdf → h5, and the links read
/// back as links.
#[test]
fn refs_become_soft_and_external_links_and_relative_ones_stay_relative() {
    use asdf_core::write::{WriteOptions, Writer};
    use asdf_core::{Node, Value};
    use hdf5_reader::group::LinkKind;

    let dir = tmp("links");
    let map = |e: Vec<(&str, Node)>| {
        Node::new(Value::Map(
            e.into_iter().map(|(k, v)| (Node::str(k), v)).collect(),
        ))
    };
    let r = |t: &str| map(vec![("$ref", Node::str(t))]);
    let mut w = Writer::new(WriteOptions::new());
    let x = w.add_array(ndarray::arr1(&[1i32, 2, 3]));
    let tree = map(vec![
        (
            "g",
            map(vec![(
                "sub",
                map(vec![
                    ("x", x),
                    ("near", r("#/g/sub/x")),
                    ("vers_ü", r("#/g/sub/x")),
                    ("far", r("other.h5#/a/b")),
                    ("whole", r("other.asdf")),
                ]),
            )]),
        ),
        ("dangling", r("#/nowhere")),
        (
            "_hdf5",
            map(vec![(
                "soft_links",
                map(vec![("/g/sub/near", Node::str("x"))]),
            )]),
        ),
    ]);
    let src = dir.join("in.asdf");
    w.write_to_path(&tree, &src).unwrap();
    let links_of = |h5: &Path| {
        let f = hdf5_reader::Hdf5File::open(h5).unwrap();
        let mut all = f.group("/g/sub").unwrap().links().unwrap();
        all.extend(f.root_group().unwrap().links().unwrap());
        all.retain(|(_, k)| !matches!(k, LinkKind::Hard(_)));
        all.sort_by(|a, b| a.0.cmp(&b.0));
        all
    };
    let external = |file: &str, path: &str| LinkKind::External {
        filename: file.into(),
        path: path.into(),
    };
    let want = vec![
        ("dangling".to_string(), LinkKind::Soft("/nowhere".into())),
        ("far".to_string(), external("other.h5", "/a/b")),
        ("near".to_string(), LinkKind::Soft("x".into())),
        ("vers_ü".to_string(), LinkKind::Soft("/g/sub/x".into())),
        ("whole".to_string(), external("other.asdf", "/")),
    ];
    let h5 = dir.join("out.h5");
    let s = from_asdf(&src, &h5).unwrap();
    assert_eq!(s.links, 5);
    assert_eq!(links_of(&h5), want);
    // and once more through ASDF: the relative link is recorded and restored
    let middle = dir.join("middle.asdf");
    to_asdf(&h5, &middle, &ToAsdfOptions::default()).unwrap();
    let f = AsdfFile::open(&middle).unwrap();
    assert_eq!(
        f.get("/g/sub/near/$ref").and_then(Node::as_str),
        Some("#/g/sub/x")
    );
    assert_eq!(
        f.get("/_hdf5/soft_links/~1g~1sub~1near")
            .and_then(Node::as_str),
        Some("x")
    );
    let back = dir.join("back.h5");
    from_asdf(&middle, &back).unwrap();
    assert_eq!(links_of(&back), want);
    if let Some(o) = asdf_test_data::write_out_dir() {
        // for h5py (check_round_trip.py): the same links as hdf5-reader reads
        std::fs::copy(&back, o.join("hdf5_links_written.h5")).unwrap();
    }
}

/// A recorded chunk shape is a hint from the file: a huge one is not followed (no allocation
/// sized by it); the array is written contiguous and reads back.
#[test]
fn a_huge_recorded_chunk_shape_is_ignored() {
    use asdf_core::write::{WriteOptions, Writer};
    use asdf_core::{Node, Value};

    let dir = tmp("hugechunk");
    let a = ndarray::arr2(&[[1u16, 2], [3, 4]]);
    let mut w = Writer::new(WriteOptions::new());
    let x = w.add_array(&a);
    let hint = Node::new(Value::Map(vec![(
        Node::str("chunks"),
        Node::new(Value::Map(vec![(
            Node::str("/x"),
            Node::seq([Node::int(1 << 40), Node::int(1 << 40)]),
        )])),
    )]));
    let tree = Node::new(Value::Map(vec![
        (Node::str("x"), x),
        (Node::str("_hdf5"), hint),
    ]));
    let src = dir.join("in.asdf");
    w.write_to_path(&tree, &src).unwrap();
    let h5 = dir.join("out.h5");
    from_asdf(&src, &h5).unwrap();
    let f = hdf5_reader::Hdf5File::open(&h5).unwrap();
    let ds = f.dataset("/x").unwrap();
    assert_eq!(ds.chunks(), None);
    assert_eq!(ds.read_array::<u16>().unwrap(), a.into_dyn());
}

/// Variable-length strings whose bytes are not UTF-8 (`vlen_bytes.h5`, kept as bytes:
/// docs/hdf5.md) have no HDF5 form on the way back yet: left out and listed, the rest of
/// the file written (the error with `strict`).
#[test]
fn strings_of_bytes_that_are_not_utf8_are_left_out_on_the_way_back() {
    let dir = tmp("vlenbytes");
    let middle = dir.join("vlen_bytes.asdf");
    to_asdf(
        &data().join("vlen_bytes.h5"),
        &middle,
        &ToAsdfOptions::default(),
    )
    .unwrap();
    let back = dir.join("back.h5");
    let s = from_asdf(&middle, &back).unwrap();
    let paths: Vec<&str> = s.left_out.iter().map(|(p, _)| p.as_str()).collect();
    // (and the compound holding such a string as an array: arrays inside records)
    assert_eq!(paths, ["/names", "/tagged", "/@note"], "{:?}", s.left_out);
    assert!(s.left_out[0].1.contains("not UTF-8"), "{:?}", s.left_out);
    assert!(back.exists());
    let strict = FromAsdfOptions {
        strict: true,
        ..FromAsdfOptions::default()
    };
    let err = from_asdf_with(&middle, &dir.join("strict.h5"), &strict)
        .unwrap_err()
        .to_string();
    assert!(err.contains("/names") && err.contains("not UTF-8"), "{err}");
}
