//! The typed layer's conversions for std types, complex numbers, big integers and arrays:
//! round trips through nodes and through written files, python-written values, and errors
//! naming tree paths.

use crate::common;

use std::collections::{BTreeMap, HashMap};
use std::path::{Path, PathBuf};

use asdf_core::array::{ArrayOptions, CompressionChoice, Storage};
use asdf_core::convert::{self, ConvertErrorKind, FromAsdf, ToAsdf, ToContext};
use asdf_core::write::Compression;
use asdf_core::write::{WriteOptions, Writer};
use asdf_core::{AsdfFile, Node, Value};
use ndarray::{arr1, arr2, Array1, Array2, ArrayD};
use num_complex::Complex;

fn fixture(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../tests/data/fixtures")
        .join(name)
}

fn dump(name: &str, bytes: &[u8]) {
    common::dump_for_oracle(&format!("convert_{name}"), bytes);
}

/// Writes `value` under key `/v` of a file and reads it back as `T`.
fn through_file<T: ToAsdf + FromAsdf>(name: &str, value: &T) -> T {
    let mut w = Writer::new(WriteOptions::default());
    let node = w.add_value(value).unwrap();
    let bytes = w.write_to_vec(&Node::map([("v", node)])).unwrap();
    dump(name, &bytes);
    let file = AsdfFile::from_bytes(bytes).unwrap();
    file.read_as::<T>("/v").unwrap()
}

fn detached<T: ToAsdf + FromAsdf>(value: &T) -> T {
    let node = convert::to_node(value).unwrap();
    convert::from_node(&node).unwrap()
}

#[test]
fn scalars_round_trip() {
    assert!(detached(&true));
    assert_eq!(detached(&-5i8), -5);
    assert_eq!(detached(&u16::MAX), u16::MAX);
    assert_eq!(detached(&i64::MIN), i64::MIN);
    assert_eq!(detached(&1.5f32), 1.5);
    assert_eq!(detached(&f64::INFINITY), f64::INFINITY);
    assert!(detached(&f64::NAN).is_nan());
    assert_eq!(detached(&"héllo ✓".to_string()), "héllo ✓");
    assert_eq!(detached(&"yes".to_string()), "yes");
    // a file round trip goes through the emitter and the parser (quoting of YAML 1.1 words)
    assert_eq!(through_file("str_yes", &"yes".to_string()), "yes");
    assert_eq!(through_file("str_017", &"017".to_string()), "017");
}

#[test]
fn integers_beyond_the_literal_range_use_core_integer() {
    // python asdf refuses literals outside [-(2^63 - 2), 2^63 - 1]
    let node = convert::to_node(&(i64::MAX)).unwrap();
    assert_eq!(node.tag(), None);
    let node = convert::to_node(&(i64::MIN)).unwrap();
    assert_eq!(
        node.tag(),
        Some("tag:stsci.edu:asdf/core/integer-1.1.0"),
        "-2^63 is below python's literal range"
    );
    let node = convert::to_node(&u64::MAX).unwrap();
    assert_eq!(node.tag(), Some("tag:stsci.edu:asdf/core/integer-1.1.0"));
    assert_eq!(
        node.get("string").and_then(Node::as_str),
        Some("18446744073709551615")
    );
    assert_eq!(node.get("sign").and_then(Node::as_str), Some("+"));

    assert_eq!(detached(&u64::MAX), u64::MAX);
    assert_eq!(detached(&i64::MIN), i64::MIN);
    assert_eq!(detached(&u128::MAX), u128::MAX);
    assert_eq!(detached(&i128::MIN), i128::MIN);
    assert_eq!(detached(&(i128::MIN + 1)), i128::MIN + 1);

    assert_eq!(through_file("u128_max", &u128::MAX), u128::MAX);
    assert_eq!(through_file("i128_min", &i128::MIN), i128::MIN);
    assert_eq!(
        through_file("big_list", &vec![0u64, u64::MAX, 1 << 63]),
        vec![0u64, u64::MAX, 1 << 63]
    );
}

#[test]
fn python_written_typed_scalars() {
    let f = AsdfFile::open(fixture("typed_scalars.asdf")).unwrap();
    assert_eq!(
        f.read_as::<u128>("/big_pos").unwrap(),
        (1u128 << 100) + 12345
    );
    assert_eq!(f.read_as::<i128>("/big_neg").unwrap(), -(1i128 << 70) - 1);
    assert_eq!(f.read_as::<u64>("/u64_max").unwrap(), u64::MAX);
    assert_eq!(f.read_as::<u8>("/small_wrapped").unwrap(), 7);
    let e = f.read_as::<i64>("/big_neg").unwrap_err().to_string();
    assert!(
        e.contains("/big_neg") && e.contains("-1180591620717411303425") && e.contains("i64"),
        "{e}"
    );
    assert_eq!(
        f.read_as::<Complex<f64>>("/c1").unwrap(),
        Complex::new(1.0, 2.0)
    );
    assert_eq!(
        f.read_as::<Complex<f64>>("/c2").unwrap(),
        Complex::new(-0.5, -1e-3)
    );
    let c3 = f.read_as::<Complex<f64>>("/c3").unwrap();
    assert!(c3.re.is_infinite() && c3.im.is_nan());
    assert_eq!(
        f.read_as::<Complex<f32>>("/c4").unwrap(),
        Complex::new(0.0, 2.5)
    );
}

#[test]
fn complex_round_trip() {
    for c in [
        Complex::new(1.0, 2.0),
        Complex::new(-0.0, -1e-300),
        Complex::new(f64::INFINITY, 3.0),
        Complex::new(0.1, f64::NEG_INFINITY),
        Complex::new(0.0, 2.0),
        Complex::new(1e16, -0.0),
    ] {
        assert_eq!(detached(&c), c);
        assert_eq!(through_file("complex", &c), c);
    }
    let node = convert::to_node(&Complex::new(1.0f64, -2.0)).unwrap();
    assert_eq!(node.tag(), Some("tag:stsci.edu:asdf/core/complex-1.0.0"));
    // python asdf 6.0.0 writes `str(complex(1, -2))`, which is `(1-2j)`.
    assert_eq!(node.as_str(), Some("(1-2j)"));
}

#[test]
fn containers_round_trip() {
    let v: Vec<Option<i32>> = vec![Some(1), None, Some(-3)];
    assert_eq!(detached(&v), v);
    let mut m = BTreeMap::new();
    m.insert("b".to_string(), vec![1.5f64]);
    m.insert("a/x~y".to_string(), vec![]);
    assert_eq!(detached(&m), m);
    assert_eq!(through_file("btreemap", &m), m);
    let h: HashMap<String, (u8, String)> = [("k".to_string(), (1u8, "v".to_string()))]
        .into_iter()
        .collect();
    assert_eq!(detached(&h), h);
    let t = (1u8, "two".to_string(), 3.0f64, true);
    assert_eq!(detached(&t), t);
    let a: [i16; 3] = [1, -2, 3];
    assert_eq!(detached(&a), a);
    let boxed = Box::new(7u32);
    assert_eq!(detached(&boxed), boxed);
}

#[test]
fn hashmap_is_written_in_key_order() {
    let h: HashMap<String, i32> = (0..20).map(|i| (format!("k{i:02}"), i)).collect();
    let node = convert::to_node(&h).unwrap();
    let keys: Vec<&str> = node
        .as_map()
        .unwrap()
        .iter()
        .map(|(k, _)| k.as_str().unwrap())
        .collect();
    let mut sorted = keys.clone();
    sorted.sort();
    assert_eq!(keys, sorted);
}

#[test]
fn arrays_become_blocks_with_a_writer_and_inline_without() {
    let a = arr2(&[[1.0f64, 2.0], [3.0, 4.0]]);
    let node = convert::to_node(&a).unwrap();
    assert!(node.get("data").is_some(), "detached arrays are inline");
    let back: Array2<f64> = convert::from_node(&node).unwrap();
    assert_eq!(back, a);

    let mut w = Writer::new(WriteOptions::default());
    let n = w.add_value(&a).unwrap();
    let bytes = w.write_to_vec(&Node::map([("a", n)])).unwrap();
    let f = AsdfFile::from_bytes(bytes).unwrap();
    assert_eq!(f.blocks().len(), 1);
    assert_eq!(f.read_as::<Array2<f64>>("/a").unwrap(), a);
    assert_eq!(
        f.read_as::<ArrayD<f64>>("/a").unwrap(),
        a.clone().into_dyn()
    );
    let dynamic: asdf_core::array::DynArray = f.read_as("/a").unwrap();
    assert_eq!(dynamic.shape, vec![2, 2]);

    // wrong rank and wrong datatype name the path
    let e = f.read_as::<Array1<f64>>("/a").unwrap_err().to_string();
    assert!(e.starts_with("/a: ") && e.contains("1 dimensions"), "{e}");
    let e = f.read_as::<Array2<i32>>("/a").unwrap_err().to_string();
    assert!(e.starts_with("/a: ") && e.contains("float64"), "{e}");
}

#[test]
fn array_options_in_effect_reach_the_writer() {
    let a = Array1::from_iter(0..1000i64);
    let b = arr1(&[1u8, 2, 3]);
    let mut w = Writer::new(WriteOptions::default());
    let (na, nb) = {
        let mut ctx = ToContext::new(&mut w);
        let zlib = ArrayOptions {
            compression: Some(CompressionChoice::Codec(Compression::Zlib)),
            storage: None,
        };
        let inline = ArrayOptions {
            compression: None,
            storage: Some(Storage::Inline),
        };
        let na = ctx.with_options(zlib, |ctx| a.to_asdf(ctx)).unwrap();
        let nb = ctx.with_options(inline, |ctx| b.to_asdf(ctx)).unwrap();
        (na, nb)
    };
    let bytes = w.write_to_vec(&Node::map([("a", na), ("b", nb)])).unwrap();
    dump("array_options", &bytes);
    let f = AsdfFile::from_bytes(bytes).unwrap();
    assert_eq!(f.blocks().len(), 1);
    assert_eq!(&f.blocks()[0].compression, b"zlib");
    assert!(f.get("/b/data").is_some());
    assert_eq!(f.read_as::<Array1<i64>>("/a").unwrap(), a);
    assert_eq!(f.read_as::<Array1<u8>>("/b").unwrap(), b);
}

#[test]
fn errors_name_the_tree_path() {
    let node = Node::map([(
        "items",
        Node::seq([Node::int(1), Node::int(300), Node::int(2)]),
    )]);
    let e = convert::from_node::<BTreeMap<String, Vec<u8>>>(&node).unwrap_err();
    assert_eq!(e.path, "/items/1");
    assert!(matches!(
        e.kind,
        ConvertErrorKind::OutOfRange { ty: "u8", .. }
    ));
    assert_eq!(e.to_string(), "/items/1: 300 does not fit in u8");

    let e = convert::from_node::<(u8, u8)>(&Node::seq([Node::int(1)])).unwrap_err();
    assert_eq!(e.to_string(), "/: expected 2 items, found 1");

    let e = convert::from_node::<String>(&Node::int(3)).unwrap_err();
    assert_eq!(e.to_string(), "/: expected a string, found integer 3");

    let e = convert::from_node::<Vec<bool>>(&Node::str("x")).unwrap_err();
    assert!(matches!(e.kind, ConvertErrorKind::Expected { .. }));

    // a block-backed array cannot be read without its file
    let f = AsdfFile::open(fixture("typed_scalars.asdf")).unwrap();
    let words = f.node("/big_pos/words").unwrap().clone();
    let e = convert::from_node::<Array1<u32>>(&words).unwrap_err();
    assert!(e.to_string().contains("block"), "{e}");
}

#[test]
fn node_and_option_pass_through() {
    let n = Node::tagged(
        "asdf://example.org/tags/thing-1.0.0",
        Value::Str("x".into()),
    );
    let back: Node = detached(&n);
    assert_eq!(back, n);
    assert_eq!(
        convert::from_node::<Option<u8>>(&Node::new(Value::Null)).unwrap(),
        None
    );
    assert_eq!(<Option<u8> as FromAsdf>::absent(), Some(None));
    assert_eq!(<u8 as FromAsdf>::absent(), None);
    assert!(None::<u8>.is_absent());
}

#[test]
fn ints_read_as_floats_but_not_the_reverse() {
    assert_eq!(convert::from_node::<f64>(&Node::int(3)).unwrap(), 3.0);
    assert!(convert::from_node::<i32>(&Node::new(Value::Float(3.0))).is_err());
}

mod props {
    use super::*;
    use proptest::prelude::*;

    type Record = (
        i64,
        Option<String>,
        Vec<u128>,
        BTreeMap<String, (bool, f64)>,
    );

    fn record() -> impl Strategy<Value = Record> {
        (
            any::<i64>(),
            proptest::option::of(".{0,12}"),
            proptest::collection::vec(any::<u128>(), 0..4),
            proptest::collection::btree_map(
                ".{0,8}",
                (
                    any::<bool>(),
                    any::<f64>().prop_filter("nan", |f| !f.is_nan()),
                ),
                0..4,
            ),
        )
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(64))]

        /// Values survive the writer (emit with YAML 1.1 quoting, core/integer blocks) and
        /// the reader.
        #[test]
        fn records_round_trip_through_files(v in proptest::collection::vec(record(), 0..4)) {
            let mut w = Writer::new(WriteOptions::default());
            let node = w.add_value(&v).unwrap();
            let bytes = w.write_to_vec(&Node::map([("v", node)])).unwrap();
            let file = AsdfFile::from_bytes(bytes).unwrap();
            let back: Vec<Record> = file.read_as("/v").unwrap();
            prop_assert_eq!(back, v);
        }

        /// Reading any parsed tree as a typed value never panics.
        #[test]
        fn arbitrary_yaml_never_panics(text in "[-\\[\\]{}:, a-z0-9!.\\n]{0,80}") {
            if let Ok(doc) = asdf_core::yaml::parse(text.as_bytes(), &Default::default()) {
                let _ = convert::from_node::<Vec<Record>>(&doc.root);
                let _ = convert::from_node::<Record>(&doc.root);
                let _ = convert::from_node::<BTreeMap<String, Complex<f64>>>(&doc.root);
            }
        }
    }
}

#[test]
fn ordered_maps_keep_file_order() {
    let m = convert::OrderedMap(vec![
        ("zeta".to_string(), vec![1i32]),
        ("alpha".to_string(), vec![]),
        ("mid".to_string(), vec![-3]),
    ]);
    let back = through_file("ordered_map", &m);
    assert_eq!(back, m);
    let f = AsdfFile::open(fixture("big_ints.asdf")).unwrap();
    let order: convert::OrderedMap<Node> = f.read_as("/").unwrap();
    let keys: Vec<&str> = order.0.iter().map(|(k, _)| k.as_str()).collect();
    let file_keys: Vec<&str> = f
        .tree()
        .as_map()
        .unwrap()
        .iter()
        .map(|(k, _)| k.as_str().unwrap())
        .collect();
    assert_eq!(keys, file_keys);
}

#[test]
fn lazy_arrays_load_when_asked() {
    use asdf_core::convert::LazyArray;
    // observation.asdf: sci is a zlib float32 (64, 64) block
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("../examples/data/observation.asdf");
    let f = AsdfFile::open(&path).unwrap();
    let lazy: LazyArray<f32, ndarray::Ix2> = f.read_as("/sci").unwrap();
    assert_eq!(lazy.shape(), Some(vec![64, 64]));
    assert_eq!(lazy.path(), "/sci");
    let loaded = lazy.load(&f).unwrap();
    assert_eq!(loaded.into_dyn(), f.array::<f32>("/sci").unwrap());
    // datatype and rank are checked when the value is read, before any data
    let e = f
        .read_as::<LazyArray<f64, ndarray::Ix2>>("/sci")
        .unwrap_err()
        .to_string();
    assert!(e.contains("/sci") && e.contains("float32"), "{e}");
    let e = f
        .read_as::<LazyArray<f32, ndarray::Ix1>>("/sci")
        .unwrap_err()
        .to_string();
    assert!(e.contains("1 dimensions"), "{e}");
    // written back through a writer on the same file, the data is copied from it
    let mut w = Writer::from_file(&f, WriteOptions::default());
    let node = w.add_value(&lazy).unwrap();
    let bytes = w.write_to_vec(&Node::map([("sci", node)])).unwrap();
    let g = AsdfFile::from_bytes(bytes).unwrap();
    assert_eq!(
        g.array::<f32>("/sci").unwrap(),
        f.array::<f32>("/sci").unwrap()
    );

    // no block is read until `load`: with the sci block's data destroyed, reading the value
    // works and loading it fails
    let mut bytes = std::fs::read(&path).unwrap();
    let sci = f
        .node("/sci")
        .unwrap()
        .get("source")
        .and_then(Node::as_i64)
        .unwrap();
    let b = &f.blocks()[usize::try_from(sci).unwrap()];
    let start = usize::try_from(b.offset).unwrap() + 6 + usize::from(b.header_size);
    for x in &mut bytes[start..start + 16] {
        *x = 0xFF;
    }
    let broken = AsdfFile::from_bytes(bytes).unwrap();
    let lazy: LazyArray<f32, ndarray::Ix2> = broken.read_as("/sci").unwrap();
    // the block's compressed stream is damaged: the codec's error for that block, either way
    // (not an error of the tree or of the conversion)
    let block = usize::try_from(sci).unwrap();
    let err = lazy.load(&broken).unwrap_err();
    assert!(
        matches!(err, asdf_core::Error::Codec { block: b, offset, .. } if b == block && offset == f.blocks()[block].offset),
        "{err}"
    );
    let err = broken
        .read_as::<Array2<f32>>("/sci")
        .unwrap_err()
        .to_string();
    let want = format!(
        "/sci: block {block} at byte {}: cannot decode: corrupt zlib data",
        f.blocks()[block].offset
    );
    assert!(err.starts_with(&want), "{err}");
}

/// A conversion that fails deep in a value names the whole path; a failed load in a typed
/// read is the file's own error at that path ([`asdf_core::Error::Load`]), and no
/// conversion error holds the crate's top-level error (the errors are layered one way).
#[test]
fn nested_failures_name_their_path_and_errors_nest_one_way() {
    use std::error::Error as _;

    // a conversion error three steps down
    let node = Node::map([(
        "a",
        Node::map([("b", Node::seq([Node::int(1), Node::int(2), Node::str("x")]))]),
    )]);
    let e = convert::from_node::<BTreeMap<String, BTreeMap<String, Vec<u8>>>>(&node).unwrap_err();
    assert_eq!(e.path, "/a/b/2");
    assert_eq!(e.path.to_string(), "/a/b/2");
    assert_eq!(
        e.to_string(),
        "/a/b/2: expected an integer, found string \"x\""
    );
    // `{:?}` is the derived form, not the message
    let debug = format!("{e:?}");
    assert!(
        debug.starts_with("ConvertError { path: TreePath(["),
        "{debug}"
    );
    assert!(debug.contains("kind: Expected {"), "{debug}");

    // keys that need escaping are escaped in the path
    let node = Node::map([("x/y~z", Node::seq([Node::str("no")]))]);
    let e = convert::from_node::<BTreeMap<String, Vec<u8>>>(&node).unwrap_err();
    assert_eq!(
        e.to_string(),
        "/x~1y~0z/0: expected an integer, found string \"no\""
    );

    // an inline array that cannot be typed: the array layer's error, held as such
    let node = convert::to_node(&arr1(&[1.5f64, 2.5])).unwrap();
    let e = convert::from_node::<Vec<Array1<i32>>>(&Node::seq([node])).unwrap_err();
    assert_eq!(e.path, "/0");
    assert!(matches!(e.kind, ConvertErrorKind::Array(_)), "{e:?}");
    let mut cause = e.source();
    while let Some(c) = cause {
        assert!(c.downcast_ref::<asdf_core::Error>().is_none(), "{e:?}");
        cause = c.source();
    }

    // three zlib arrays at /a/b/0..2; the third block's stream damaged
    let mut w = Writer::new(WriteOptions::default());
    let zlib = ArrayOptions {
        compression: Some(CompressionChoice::Codec(Compression::Zlib)),
        storage: None,
    };
    let data: Vec<Array1<f64>> = (0..3)
        .map(|k| Array1::from_iter((0..2000).map(|i| f64::from(i * (k + 1)))))
        .collect();
    let nodes: Vec<Node> = data.iter().map(|d| w.add_array_with(d, zlib)).collect();
    let tree = Node::map([("a", Node::map([("b", Node::seq(nodes))]))]);
    let mut bytes = w.write_to_vec(&tree).unwrap();
    let starts: Vec<usize> = bytes
        .windows(4)
        .enumerate()
        .filter(|(_, w)| *w == b"\xd3BLK")
        .map(|(i, _)| i)
        .collect();
    assert_eq!(starts.len(), 3);
    // the header is 6 + 48 bytes; damage the zlib stream just after it
    for b in &mut bytes[starts[2] + 54 + 10..starts[2] + 54 + 40] {
        *b ^= 0x5a;
    }
    let f = AsdfFile::options()
        .verify_checksums(false)
        .open_bytes(bytes, ".")
        .unwrap();
    let e = f
        .read_as::<BTreeMap<String, Vec<Array1<f64>>>>("/a")
        .unwrap_err();
    match &e {
        asdf_core::Error::Load { path, source } => {
            assert_eq!(*path, "/a/b/2");
            assert!(
                matches!(**source, asdf_core::Error::Codec { block: 2, .. }),
                "{source:?}"
            );
        }
        other => panic!("not a load error: {other:?}"),
    }
    let text = e.to_string();
    assert!(
        text.starts_with(&format!(
            "/a/b/2: block 2 at byte {}: cannot decode: ",
            starts[2]
        )),
        "{text}"
    );
    assert!(
        format!("{e:?}").starts_with("Load { path: TreePath(["),
        "{e:?}"
    );
    // from a base path, the path still starts at the root of the file
    let e = f.read_as::<Vec<Array1<f64>>>("/a/b").unwrap_err();
    assert!(
        matches!(&e, asdf_core::Error::Load { path, .. } if *path == "/a/b/2"),
        "{e:?}"
    );
    // the arrays before it load
    let e = f.read_as::<Array1<f64>>("/a/b/1").unwrap();
    assert_eq!(e, data[1]);
}
