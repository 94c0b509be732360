//! The serde bridge end to end: serde types through `to_node`, the YAML emitter and parser,
//! `from_node`; error paths; the typed-layer wrapper; files written with a serde subtree.
//!
//! With `ASDF_WRITE_OUT=DIR` the written files and our canonical reading of them are saved
//! there for `tests/oracle/check_written.py` (python asdf 6.0.0, warnings as errors).

use crate::common;

use std::collections::{BTreeMap, HashMap};

use asdf_core::serde_node::{from_node, from_node_borrowed, to_node, Serde, SerdeErrorKind};
use asdf_core::write::{WriteOptions, Writer};
use asdf_core::yaml::{emit, parse, EmitOptions, YamlLimits};
use asdf_core::{AsdfFile, Node, Value};
use proptest::prelude::*;
use serde::{Deserialize, Serialize};

/// `f64` compared so that NaN equals NaN (and `0.0` differs from `-0.0`).
#[derive(Serialize, Deserialize, Debug, Clone, Copy)]
#[serde(transparent)]
struct F(f64);

impl PartialEq for F {
    fn eq(&self, other: &F) -> bool {
        (self.0.is_nan() && other.0.is_nan()) || self.0.to_bits() == other.0.to_bits()
    }
}

/// `f32` compared as `F` is.
#[derive(Serialize, Deserialize, Debug, Clone, Copy)]
#[serde(transparent)]
struct F32(f32);

impl PartialEq for F32 {
    fn eq(&self, other: &F32) -> bool {
        (self.0.is_nan() && other.0.is_nan()) || self.0.to_bits() == other.0.to_bits()
    }
}

#[derive(Serialize, Deserialize, Debug, Clone, PartialEq)]
struct Unit;

#[derive(Serialize, Deserialize, Debug, Clone, PartialEq)]
struct Meters(F);

#[derive(Serialize, Deserialize, Debug, Clone, PartialEq)]
struct Rgb(u8, u8, u8);

#[derive(Serialize, Deserialize, Debug, Clone, PartialEq)]
enum Shape {
    Empty,
    Circle(Meters),
    Segment(F, F),
    Polygon { vertices: Vec<(F, F)>, closed: bool },
}

#[derive(Serialize, Deserialize, Debug, Clone, PartialEq)]
#[serde(rename_all = "snake_case")]
enum Status {
    Ok,
    Failed { code: i32 },
}

#[derive(Serialize, Deserialize, Debug, Clone, PartialEq)]
struct Extremes {
    i8s: (i8, i8),
    i64s: (i64, i64),
    u64max: u64,
    i128s: (i128, i128),
    u128s: (u128, u128),
}

#[derive(Serialize, Deserialize, Debug, Clone, PartialEq)]
struct Floats {
    values: Vec<F>,
    single: Vec<F32>,
}

#[derive(Serialize, Deserialize, Debug, Clone, PartialEq)]
struct Observation {
    name: String,
    note: Option<String>,
    missing: Option<u8>,
    #[serde(skip_serializing_if = "Option::is_none", default)]
    skipped: Option<u8>,
    color: Rgb,
    marker: Unit,
    nothing: (),
    shapes: Vec<Shape>,
    status: BTreeMap<String, Status>,
    by_id: HashMap<u32, String>,
    flags: BTreeMap<bool, Vec<Option<i16>>>,
    extremes: Extremes,
    floats: Floats,
    nested: Vec<Vec<BTreeMap<String, Option<Shape>>>>,
}

fn sample() -> Observation {
    Observation {
        name:
            "Ωmega 東京 🚀 'yes' null 017 1:30 \"q\" a\\b\ttab\nline two\u{85}\u{2028}\u{0}\u{feff}"
                .into(),
        note: Some(String::new()),
        missing: None,
        skipped: None,
        color: Rgb(255, 0, 128),
        marker: Unit,
        nothing: (),
        shapes: vec![
            Shape::Empty,
            Shape::Circle(Meters(F(2.5))),
            Shape::Segment(F(-0.0), F(1e300)),
            Shape::Polygon {
                vertices: vec![(F(0.0), F(0.0)), (F(1.0), F(0.5))],
                closed: true,
            },
            Shape::Polygon {
                vertices: vec![],
                closed: false,
            },
        ],
        status: BTreeMap::from([
            ("first".into(), Status::Ok),
            ("second".into(), Status::Failed { code: -3 }),
        ]),
        by_id: HashMap::from([(7, "seven".into()), (0, "zero".into())]),
        flags: BTreeMap::from([(true, vec![Some(1), None]), (false, vec![])]),
        extremes: Extremes {
            i8s: (i8::MIN, i8::MAX),
            i64s: (i64::MIN, i64::MAX),
            u64max: u64::MAX,
            i128s: (i128::MIN, i128::MAX),
            u128s: (u128::MIN, u128::MAX),
        },
        floats: Floats {
            values: vec![
                F(f64::NAN),
                F(f64::INFINITY),
                F(f64::NEG_INFINITY),
                F(f64::MIN_POSITIVE),
                F(5e-324),
                F(f64::MAX),
                F(0.1),
                F(1e16),
                F(-123456.789),
            ],
            single: vec![
                F32(f32::NAN),
                F32(f32::NEG_INFINITY),
                F32(0.1),
                F32(f32::MAX),
                F32(f32::MIN_POSITIVE),
                F32(1e-45),
            ],
        },
        nested: vec![
            vec![],
            vec![BTreeMap::from([
                ("a".into(), None),
                ("b".into(), Some(Shape::Empty)),
            ])],
        ],
    }
}

/// Emits `node` as YAML and parses it back.
fn through_yaml(node: &Node) -> Node {
    let text = emit(node, &EmitOptions::default()).unwrap();
    parse(text.as_bytes(), &YamlLimits::default()).unwrap().root
}

#[test]
fn serde_types_round_trip_through_yaml() {
    let obs = sample();
    let node = to_node(&obs).unwrap();
    let back_node = through_yaml(&node);
    let emitted = |n: &Node| emit(n, &EmitOptions::default()).unwrap();
    assert_eq!(
        emitted(&back_node),
        emitted(&node),
        "emit and parse keep the tree"
    );
    let back: Observation = from_node(&back_node).unwrap();
    assert_eq!(back, obs);
    // Spot checks on the tree itself.
    assert_eq!(
        back_node.pointer("/shapes/0").unwrap().as_str(),
        Some("Empty")
    );
    assert_eq!(
        back_node
            .pointer("/status/second/failed/code")
            .unwrap()
            .as_i64(),
        Some(-3)
    );
    assert!(back_node.get("skipped").is_none());
    assert!(back_node.get("missing").unwrap().is_null());
    assert_eq!(
        back_node
            .pointer("/extremes/u128s/1")
            .unwrap()
            .as_int()
            .unwrap()
            .to_string(),
        "340282366920938463463374607431768211455"
    );
}

#[test]
fn yaml_text_reads_into_serde_types() {
    // Hand-written YAML, not produced by our emitter.
    let text = b"%YAML 1.1\n---\n\
        items:\n\
        - {count: 1, label: one}\n\
        - count: 0x10\n  label: !!str 2001-01-01\n\
        when: 2001-12-14 21:59:43.10 -5\n\
        shape: {Polygon: {vertices: [[0, 1], [2.5, .inf]], closed: yes}}\n\
        blob: !!binary aGVsbG8=\n\
        ...\n";
    #[derive(Deserialize, Debug, PartialEq)]
    struct Item<'a> {
        count: u8,
        label: &'a str,
    }
    #[derive(Deserialize, Debug)]
    struct Doc<'a> {
        #[serde(borrow)]
        items: Vec<Item<'a>>,
        when: String,
        shape: Shape,
        blob: Vec<u8>,
    }
    let root = parse(text, &YamlLimits::default()).unwrap().root;
    let doc: Doc = from_node_borrowed(&root).unwrap();
    assert_eq!(
        doc.items,
        [
            Item {
                count: 1,
                label: "one"
            },
            Item {
                count: 16,
                label: "2001-01-01"
            }
        ]
    );
    assert_eq!(doc.when, "2001-12-14 21:59:43.10 -5");
    assert_eq!(
        doc.shape,
        Shape::Polygon {
            vertices: vec![(F(0.0), F(1.0)), (F(2.5), F(f64::INFINITY))],
            closed: true
        }
    );
    assert_eq!(doc.blob, b"hello");
}

#[derive(Deserialize, Debug)]
#[allow(dead_code)]
struct Count {
    count: u8,
}

#[derive(Deserialize, Debug)]
#[allow(dead_code)]
struct Inventory {
    items: Vec<Count>,
}

#[test]
fn errors_name_the_tree_path() {
    let text = b"items:\n- count: 1\n- count: 2\n- count: 256\n";
    let root = parse(text, &YamlLimits::default()).unwrap().root;
    let e = from_node::<Inventory>(&root).unwrap_err();
    assert_eq!(e.path(), "/items/2/count");
    assert_eq!(e.to_string(), "/items/2/count: 256 does not fit in u8");

    let text = b"items:\n- count: 1\n- count: -1\n";
    let root = parse(text, &YamlLimits::default()).unwrap().root;
    let e = from_node::<Inventory>(&root).unwrap_err();
    assert_eq!(e.to_string(), "/items/1/count: -1 does not fit in u8");

    let text = b"items:\n- count: 1\n- {}\n";
    let root = parse(text, &YamlLimits::default()).unwrap().root;
    let e = from_node::<Inventory>(&root).unwrap_err();
    assert_eq!(e.to_string(), "/items/1: missing field `count`");

    let text = b"items:\n- count: [1]\n";
    let root = parse(text, &YamlLimits::default()).unwrap().root;
    let e = from_node::<Inventory>(&root).unwrap_err();
    assert_eq!(
        e.to_string(),
        "/items/0/count: invalid type: sequence, expected u8"
    );

    let text = b"a: &x [1, *x]\n";
    let root = parse(text, &YamlLimits::default()).unwrap().root;
    let e = from_node::<serde_json::Value>(&root).unwrap_err();
    assert_eq!(e.path(), "/a/1");
    assert!(matches!(e.kind(), SerdeErrorKind::Recursive(_)));
}

#[test]
fn the_wrapper_is_a_typed_value() {
    let value = sample();
    // a serde type in a file, through every in-memory storage, with the users' helper
    asdf_core::testing::assert_round_trip(&Serde(value.clone()));
    let node = asdf_core::convert::to_node(&Serde(value.clone())).unwrap();
    // Without a writer, words of big integers are inline arrays.
    let i64min = node.pointer("/extremes/i64s/0").unwrap();
    assert_eq!(i64min.tag(), Some("tag:stsci.edu:asdf/core/integer-1.1.0"));
    assert_eq!(
        i64min.pointer("/words/data/1").and_then(Node::as_i64),
        Some(1 << 31)
    );
    assert_eq!(node.get("shapes"), to_node(&value.shapes).ok().as_ref());
    let back: Serde<Observation> = asdf_core::convert::from_node(&through_yaml(&node)).unwrap();
    assert_eq!(back.0, value);

    let root = parse(b"items:\n- count: 300\n", &YamlLimits::default())
        .unwrap()
        .root;
    let e = asdf_core::convert::from_node::<Serde<Inventory>>(&root).unwrap_err();
    assert_eq!(e.to_string(), "/items/0/count: 300 does not fit in u8");
}

fn dump(name: &str, bytes: &[u8]) {
    common::dump_for_oracle(&format!("serde_{name}"), bytes);
}

/// A serde subtree that python asdf reads: string or integer keys only (python needs
/// hashable keys, and `true` and `1` are the same python key).
#[derive(Serialize, Deserialize, Debug, Clone, PartialEq)]
struct Portable {
    name: String,
    shapes: Vec<Shape>,
    status: BTreeMap<String, Status>,
    by_id: BTreeMap<u32, String>,
    extremes: Extremes,
    floats: Floats,
    missing: Option<u8>,
    marker: Unit,
    #[serde(with = "bytes")]
    raw: Vec<u8>,
}

/// Writes a `Vec<u8>` with `serialize_bytes` (as `serde_bytes` does).
mod bytes {
    pub fn serialize<S: serde::Serializer>(v: &[u8], s: S) -> Result<S::Ok, S::Error> {
        s.serialize_bytes(v)
    }
    pub fn deserialize<'de, D: serde::Deserializer<'de>>(d: D) -> Result<Vec<u8>, D::Error> {
        struct V;
        impl serde::de::Visitor<'_> for V {
            type Value = Vec<u8>;
            fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
                f.write_str("bytes")
            }
            fn visit_bytes<E>(self, v: &[u8]) -> Result<Vec<u8>, E> {
                Ok(v.to_vec())
            }
        }
        d.deserialize_bytes(V)
    }
}

fn portable() -> Portable {
    let s = sample();
    Portable {
        name: s.name,
        shapes: s.shapes,
        status: s.status,
        by_id: BTreeMap::from([(0, "zero".into()), (7, "seven".into())]),
        extremes: s.extremes,
        floats: s.floats,
        missing: None,
        marker: Unit,
        raw: vec![0, 1, 2, 254, 255],
    }
}

#[test]
fn a_serde_subtree_in_a_written_file() {
    let value = Serde(portable());
    let plain = Shape::Polygon {
        vertices: vec![(F(1.0), F(f64::NAN))],
        closed: true,
    };
    let mut w = Writer::new(WriteOptions::default());
    let product = w.add_value(&value).unwrap();
    // Integers beyond 64 bits become core/integer nodes, their words a block.
    let u128max = product.pointer("/extremes/u128s/1").unwrap();
    assert_eq!(u128max.tag(), Some("tag:stsci.edu:asdf/core/integer-1.1.0"));
    assert!(u128max.get("words").unwrap().is_ndarray());
    assert!(matches!(
        product.get("raw").unwrap().value(),
        Value::Binary(b) if b == &[0, 1, 2, 254, 255]
    ));
    let root = Node::map([("product", product), ("plain", to_node(&plain).unwrap())]);
    let bytes = w.write_to_vec(&root).unwrap();
    dump("subtree", &bytes);
    let f = AsdfFile::from_bytes(bytes).unwrap();
    let back: Serde<Portable> = f.read_as("/product").unwrap();
    assert_eq!(back, value);
    let back: Shape = from_node(f.get("/plain").unwrap()).unwrap();
    assert_eq!(back, plain);
    // A path inside the subtree, below the path read.
    let e = f.read_as::<Serde<Inventory>>("/product").unwrap_err();
    assert_eq!(e.to_string(), "/product: missing key `items`");
    let e = f.read_as::<Serde<Vec<u8>>>("/product/by_id").unwrap_err();
    assert!(e.to_string().starts_with("/product/by_id: "), "{e}");
}

#[derive(Serialize, Deserialize, Debug, Clone, PartialEq)]
enum Kind {
    Unit,
    Newtype(i128),
    Tuple(u128, F32),
    Struct { text: String, maybe: Option<bool> },
}

#[derive(Serialize, Deserialize, Debug, Clone, PartialEq)]
struct Record {
    name: String,
    id: u64,
    delta: i128,
    big: u128,
    ratio: F,
    flag: Option<bool>,
    tags: BTreeMap<String, i64>,
    keyed: BTreeMap<i32, Vec<u8>>,
    kind: Kind,
}

fn kind() -> impl Strategy<Value = Kind> {
    prop_oneof![
        Just(Kind::Unit),
        any::<i128>().prop_map(Kind::Newtype),
        (any::<u128>(), any::<f32>()).prop_map(|(a, b)| Kind::Tuple(a, F32(b))),
        (any::<String>(), any::<Option<bool>>())
            .prop_map(|(text, maybe)| Kind::Struct { text, maybe }),
    ]
}

prop_compose! {
    fn record()(
        name in any::<String>(),
        id in any::<u64>(),
        delta in any::<i128>(),
        big in any::<u128>(),
        ratio in any::<f64>(),
        flag in any::<Option<bool>>(),
        tags in prop::collection::btree_map(any::<String>(), any::<i64>(), 0..4),
        keyed in prop::collection::btree_map(any::<i32>(), prop::collection::vec(any::<u8>(), 0..4), 0..3),
        kind in kind(),
    ) -> Record {
        Record { name, id, delta, big, ratio: F(ratio), flag, tags, keyed, kind }
    }
}

proptest! {
    #[test]
    fn records_round_trip(records in prop::collection::vec(record(), 0..6)) {
        let node = to_node(&records).unwrap();
        let back_node = through_yaml(&node);
        let back: Vec<Record> = from_node(&back_node).unwrap();
        prop_assert_eq!(back, records);
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(48))]
    /// Through a written file: the wrapper's core/integer nodes and blocks.
    #[test]
    fn records_round_trip_through_files(records in prop::collection::vec(record(), 0..4)) {
        let value = Serde(records);
        let mut w = Writer::new(WriteOptions::default());
        let node = w.add_value(&value).unwrap();
        let bytes = w.write_to_vec(&Node::map([("records", node)])).unwrap();
        let f = AsdfFile::from_bytes(bytes).unwrap();
        let back: Serde<Vec<Record>> = f.read_as("/records").unwrap();
        prop_assert_eq!(back, value);
    }
}

/// Timing of the bridge against `serde_json::Value` on the same records (developer tool:
/// `cargo test -p asdfrs-core --release --features dev-tools --test it serde_bridge::perf -- --nocapture`).
#[cfg(feature = "dev-tools")]
#[test]
fn perf_records() {
    use std::time::Instant;
    let records: Vec<Record> = (0..100_000u64)
        .map(|i| Record {
            name: format!("record {i}"),
            id: i,
            delta: -(i as i128) << 70,
            big: u128::from(i) << 64,
            ratio: F(i as f64 / 7.0),
            flag: (i % 3 != 0).then_some(i % 2 == 0),
            tags: BTreeMap::from([("a".into(), i as i64), ("b".into(), -1)]),
            keyed: BTreeMap::from([(i as i32, vec![1, 2, 3])]),
            kind: match i % 4 {
                0 => Kind::Unit,
                1 => Kind::Newtype(i.into()),
                2 => Kind::Tuple(i.into(), F32(0.5)),
                _ => Kind::Struct {
                    text: "t".into(),
                    maybe: None,
                },
            },
        })
        .collect();
    let best = |f: &mut dyn FnMut()| {
        (0..3)
            .map(|_| {
                let t = Instant::now();
                f();
                t.elapsed().as_secs_f64() * 1e3
            })
            .fold(f64::INFINITY, f64::min)
    };
    let mut node = Node::new(Value::Null);
    let to = best(&mut || node = to_node(&records).unwrap());
    let from = best(&mut || {
        let v: Vec<Record> = from_node(&node).unwrap();
        assert_eq!(v.len(), records.len());
    });
    let mut json = serde_json::Value::Null;
    let to_json = best(&mut || json = serde_json::to_value(&records).unwrap());
    let from_json = best(&mut || {
        let v: Vec<Record> = serde_json::from_value(json.clone()).unwrap();
        assert_eq!(v.len(), records.len());
    });
    println!(
        "100k records: to_node {to:.1} ms, from_node {from:.1} ms; \
         serde_json::to_value {to_json:.1} ms, from_value (with clone) {from_json:.1} ms"
    );
}

/// Arbitrary trees: scalars of every kind, sequences, mappings with string keys.
fn tree() -> impl Strategy<Value = Node> {
    let leaf = prop_oneof![
        Just(Node::new(Value::Null)),
        any::<bool>().prop_map(|b| Node::new(Value::Bool(b))),
        any::<i128>().prop_map(Node::int),
        (0u8..=255).prop_map(|v| Node::int(v.into())),
        "-?[1-9][0-9]{39,45}".prop_map(|s| Node::new(Value::Int(asdf_core::Integer::Big(s)))),
        any::<f64>().prop_map(|f| Node::new(Value::Float(f))),
        any::<String>().prop_map(Node::str),
        prop_oneof![
            Just("Unit"),
            Just("Newtype"),
            Just("Tuple"),
            Just("Struct"),
            Just("count")
        ]
        .prop_map(Node::str),
        prop::collection::vec(any::<u8>(), 0..4).prop_map(|b| Node::new(Value::Binary(b))),
        Just(Node::new(Value::Recursive("r".into()))),
    ];
    leaf.prop_recursive(5, 48, 5, |inner| {
        prop_oneof![
            prop::collection::vec(inner.clone(), 0..5).prop_map(Node::seq),
            prop::collection::vec(
                (
                    prop_oneof![
                        Just("name".to_string()),
                        Just("kind".to_string()),
                        Just("items".to_string()),
                        Just("Struct".to_string()),
                        Just("text".to_string()),
                        // Not empty: `Node::pointer` cannot name the key "".
                        ".+"
                    ],
                    inner
                ),
                0..5
            )
            .prop_map(|mut entries| {
                // Distinct keys, so a path names one node.
                let mut seen = std::collections::HashSet::new();
                entries.retain(|(k, _)| seen.insert(k.clone()));
                Node::map(entries)
            }),
        ]
    })
}

proptest! {
    /// Reading arbitrary trees never panics, and every error's path names a node of the tree.
    #[test]
    fn arbitrary_trees_read_or_fail_at_a_real_node(node in tree()) {
        let check = |e: asdf_core::serde_node::SerdeError| -> Result<(), TestCaseError> {
            let path = e.path();
            prop_assert!(node.pointer(&path).is_some(), "{} is not in {:?}", e, node);
            Ok(())
        };
        if let Err(e) = from_node::<Vec<Record>>(&node) { check(e)?; }
        if let Err(e) = from_node::<Record>(&node) { check(e)?; }
        if let Err(e) = from_node::<Kind>(&node) { check(e)?; }
        if let Err(e) = from_node::<Inventory>(&node) { check(e)?; }
        if let Err(e) = from_node::<BTreeMap<String, (u8, Option<String>)>>(&node) { check(e)?; }
        match from_node::<serde_json::Value>(&node) {
            Ok(v) => {
                // Whatever serde_json holds converts back.
                let _ = asdf_core::serde_node::json_to_node(&v);
            }
            Err(e) => check(e)?,
        }
        let _ = asdf_core::convert::from_node::<Serde<Vec<Record>>>(&node);
    }
}

/// serde types as fields of a derived struct: a plain one, and an optional one that is left
/// out when `None` and reads as `None` when missing.
#[cfg(feature = "derive")]
#[test]
fn serde_fields_in_a_derived_struct() {
    #[derive(Serialize, Deserialize, Debug, Clone, PartialEq)]
    struct Calibration {
        version: String,
        gains: Vec<f64>,
    }

    #[derive(asdf_core::AsdfType, Debug, Clone, PartialEq)]
    #[asdf(tag = "asdf://example.org/tags/product-1.0.0")]
    struct Product {
        name: String,
        calibration: Serde<Calibration>,
        notes: Serde<Option<BTreeMap<String, String>>>,
    }

    let p = Product {
        name: "x".into(),
        calibration: Serde(Calibration {
            version: "2".into(),
            gains: vec![1.0, 1.5],
        }),
        notes: Serde(None),
    };
    let mut w = Writer::new(WriteOptions::default());
    let node = w.add_value(&p).unwrap();
    assert!(node.get("notes").is_none(), "None is left out");
    let bytes = w.write_to_vec(&Node::map([("product", node)])).unwrap();
    let f = AsdfFile::from_bytes(bytes).unwrap();
    assert_eq!(
        f.node("/product/calibration/version").unwrap().as_str(),
        Some("2")
    );
    let back: Product = f.read_as("/product").unwrap();
    assert_eq!(back, p);

    let with_notes = Product {
        notes: Serde(Some(BTreeMap::from([("k".to_string(), "v".to_string())]))),
        ..p
    };
    let node = asdf_core::convert::to_node(&with_notes).unwrap();
    assert_eq!(node.pointer("/notes/k").and_then(Node::as_str), Some("v"));
    let back: Product = asdf_core::convert::from_node(&node).unwrap();
    assert_eq!(back, with_notes);

    // a serde error inside carries the whole path
    let bad = Node::tagged(
        "asdf://example.org/tags/product-1.0.0",
        Value::Map(vec![
            (Node::str("name"), Node::str("x")),
            (
                Node::str("calibration"),
                Node::map([
                    ("version", Node::str("2")),
                    ("gains", Node::seq([Node::str("no")])),
                ]),
            ),
        ]),
    );
    let e = asdf_core::convert::from_node::<Product>(&bad)
        .unwrap_err()
        .to_string();
    assert!(e.starts_with("/calibration/gains/0"), "{e}");
}
