//! Property tests of `#[derive(AsdfType)]`: any value of a derived record (tagged, with
//! renamed, optional, flattened, enum, array and catch-all fields) reads back equal, through
//! nodes and through written files; unknown keys come back in their order.

use asdf_core::convert::{self, Extra};
use asdf_core::write::{WriteOptions, Writer};
use asdf_core::{AsdfFile, AsdfType, Node, Value};
use ndarray::Array1;
use proptest::prelude::*;

#[derive(AsdfType, Debug, Clone, PartialEq)]
#[asdf(
    tag = "asdf://example.org/tags/record-1.2.0",
    tag_pattern = "asdf://example.org/tags/record-1.*"
)]
struct Record {
    name: String,
    #[asdf(rename = "n-items")]
    count: i64,
    scale: Option<f64>,
    #[asdf(flatten)]
    place: Place,
    kind: Kind,
    parts: Vec<Part>,
    #[asdf(compression = "zlib")]
    data: Array1<f32>,
    meta: Meta,
}

/// A catch-all beside known keys (`extra` cannot sit beside `flatten`).
#[derive(AsdfType, Debug, Clone, PartialEq)]
struct Meta {
    version: u16,
    #[asdf(extra)]
    rest: Extra,
}

#[derive(AsdfType, Debug, Clone, PartialEq)]
struct Place {
    x: i32,
    y: i32,
}

#[derive(AsdfType, Debug, Clone, PartialEq)]
enum Kind {
    Star,
    #[asdf(rename = "galaxy")]
    Galaxy,
    #[asdf(tag = "asdf://example.org/tags/cluster-1.0.0")]
    Cluster {
        members: u32,
    },
    Other(String),
}

#[derive(AsdfType, Debug, Clone, PartialEq)]
#[asdf(tag = "asdf://example.org/tags/part-1.0.0")]
struct Part(u8, bool);

const KNOWN: [&str; 1] = ["version"];

fn kind() -> impl Strategy<Value = Kind> {
    prop_oneof![
        Just(Kind::Star),
        Just(Kind::Galaxy),
        any::<u32>().prop_map(|members| Kind::Cluster { members }),
        // strings that are not a unit variant's name
        "[a-z ]{0,12}"
            .prop_filter("not a unit variant", |s| s != "Star" && s != "galaxy")
            .prop_map(Kind::Other),
    ]
}

fn scalar() -> impl Strategy<Value = Node> {
    prop_oneof![
        any::<i32>().prop_map(|v| Node::int(v.into())),
        "[ -~]{0,16}".prop_map(Node::str),
        any::<bool>().prop_map(|b| Node::new(Value::Bool(b))),
        Just(Node::new(Value::Null)),
    ]
}

fn extra() -> impl Strategy<Value = Extra> {
    proptest::collection::vec(("[a-z_]{1,8}", scalar()), 0..5).prop_map(|entries| {
        let mut seen: Vec<String> = Vec::new();
        let mut out = Vec::new();
        for (k, v) in entries {
            if KNOWN.contains(&k.as_str()) || seen.contains(&k) {
                continue;
            }
            seen.push(k.clone());
            out.push((Node::str(k), v));
        }
        Extra(out)
    })
}

fn record() -> impl Strategy<Value = Record> {
    (
        "[ -~]{0,20}",
        any::<i64>(),
        proptest::option::of(-1e12f64..1e12),
        (any::<i32>(), any::<i32>()),
        kind(),
        proptest::collection::vec((any::<u8>(), any::<bool>()), 0..4),
        proptest::collection::vec(-1e6f32..1e6, 0..50),
        (any::<u16>(), extra()),
    )
        .prop_map(
            |(name, count, scale, (x, y), kind, parts, data, (version, rest))| Record {
                name,
                // python asdf's literal range; beyond it integers become core/integer nodes
                count: count.clamp(-(i64::MAX - 1), i64::MAX),
                scale,
                place: Place { x, y },
                kind,
                parts: parts.into_iter().map(|(a, b)| Part(a, b)).collect(),
                data: Array1::from(data),
                meta: Meta { version, rest },
            },
        )
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(64))]

    #[test]
    fn records_round_trip_through_nodes_and_files(r in record()) {
        let node = convert::to_node(&r).unwrap();
        let back: Record = convert::from_node(&node).unwrap();
        prop_assert_eq!(&back, &r);

        let mut w = Writer::new(WriteOptions::default());
        let node = w.add_value(&r).unwrap();
        let bytes = w.write_to_vec(&Node::map([("r", node)])).unwrap();
        let f = AsdfFile::from_bytes(bytes).unwrap();
        let back: Record = f.read_as("/r").unwrap();
        prop_assert_eq!(&back, &r);

        // the file's mappings: known keys in field order, then the unknown ones in order
        let keys = |path: &str| -> Vec<String> {
            f.node(path)
                .unwrap()
                .as_map()
                .unwrap()
                .iter()
                .map(|(k, _)| k.as_str().unwrap().to_string())
                .collect()
        };
        let mut expected: Vec<&str> = vec!["name", "n-items"];
        if r.scale.is_some() {
            expected.push("scale");
        }
        expected.extend(["x", "y", "kind", "parts", "data", "meta"]);
        prop_assert_eq!(keys("/r"), expected);
        let mut expected = vec!["version"];
        expected.extend(r.meta.rest.0.iter().map(|(k, _)| k.as_str().unwrap()));
        prop_assert_eq!(keys("/r/meta"), expected);
    }
}
