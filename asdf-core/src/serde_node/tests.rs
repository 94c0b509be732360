use std::collections::BTreeMap;

use serde::{Deserialize, Serialize, Serializer};

use super::*;
use crate::convert::{ConvertErrorKind, FromAsdf, FromContext, ToAsdf, ToContext};
use crate::yaml::{Integer, Timestamp, Value};

fn n(v: Value) -> Node {
    Node::new(v)
}

fn big(s: &str) -> Node {
    n(Value::Int(Integer::Big(s.to_string())))
}

fn float(f: f64) -> Node {
    n(Value::Float(f))
}

fn null() -> Node {
    n(Value::Null)
}

#[test]
fn scalars_map_to_their_values() {
    assert_eq!(to_node(&true).unwrap(), n(Value::Bool(true)));
    assert_eq!(to_node(&i8::MIN).unwrap(), Node::int(-128));
    assert_eq!(to_node(&u64::MAX).unwrap(), Node::int(18446744073709551615));
    assert_eq!(
        to_node(&i128::MIN).unwrap(),
        Node::int(-170141183460469231731687303715884105728)
    );
    assert_eq!(
        to_node(&u128::MAX).unwrap(),
        big("340282366920938463463374607431768211455")
    );
    assert_eq!(to_node(&1.5f32).unwrap(), float(1.5));
    assert_eq!(to_node(&0.1f32).unwrap(), float(0.10000000149011612));
    assert!(matches!(to_node(&f64::NAN).unwrap().value(), Value::Float(f) if f.is_nan()));
    assert_eq!(to_node(&'é').unwrap(), Node::str("é"));
    assert_eq!(to_node("a\u{0}b").unwrap(), Node::str("a\u{0}b"));
    assert_eq!(
        NodeSerializer.serialize_bytes(b"\x00\xff").unwrap(),
        n(Value::Binary(vec![0, 255]))
    );
}

#[derive(Serialize, Deserialize, Debug, PartialEq)]
struct Unit;

#[derive(Serialize, Deserialize, Debug, PartialEq)]
struct Newtype(u16);

#[derive(Serialize, Deserialize, Debug, PartialEq)]
struct Pair(i8, String);

#[derive(Serialize, Deserialize, Debug, PartialEq)]
enum E {
    A,
    B(u8),
    C(u8, bool),
    D { x: i32, y: Option<String> },
}

#[derive(Serialize, Deserialize, Debug, PartialEq)]
struct S {
    zeta: u8,
    alpha: Vec<E>,
    unit: (),
    maybe: Option<Newtype>,
}

#[test]
fn compound_values_map_to_sequences_and_mappings() {
    assert_eq!(to_node(&()).unwrap(), null());
    assert_eq!(to_node(&Unit).unwrap(), null());
    assert_eq!(to_node(&None::<u8>).unwrap(), null());
    assert_eq!(to_node(&Some(3u8)).unwrap(), Node::int(3));
    assert_eq!(to_node(&Newtype(9)).unwrap(), Node::int(9));
    assert_eq!(
        to_node(&Pair(-1, "p".into())).unwrap(),
        Node::seq([Node::int(-1), Node::str("p")])
    );
    assert_eq!(
        to_node(&(1u8, 'c')).unwrap(),
        Node::seq([Node::int(1), Node::str("c")])
    );
    let m = BTreeMap::from([(2i64, "two"), (-1, "minus")]);
    assert_eq!(
        to_node(&m).unwrap(),
        n(Value::Map(vec![
            (Node::int(-1), Node::str("minus")),
            (Node::int(2), Node::str("two")),
        ]))
    );
    let s = S {
        zeta: 1,
        alpha: vec![
            E::A,
            E::B(2),
            E::C(3, false),
            E::D {
                x: -4,
                y: Some("y".into()),
            },
        ],
        unit: (),
        maybe: None,
    };
    let expected = Node::map([
        ("zeta", Node::int(1)),
        (
            "alpha",
            Node::seq([
                Node::str("A"),
                Node::map([("B", Node::int(2))]),
                Node::map([("C", Node::seq([Node::int(3), n(Value::Bool(false))]))]),
                Node::map([(
                    "D",
                    Node::map([("x", Node::int(-4)), ("y", Node::str("y"))]),
                )]),
            ]),
        ),
        ("unit", null()),
        ("maybe", null()),
    ]);
    let node = to_node(&s).unwrap();
    assert_eq!(node, expected);
    let keys: Vec<_> = node
        .as_map()
        .unwrap()
        .iter()
        .map(|(k, _)| k.as_str().unwrap())
        .collect();
    assert_eq!(keys, ["zeta", "alpha", "unit", "maybe"], "field order kept");
    assert_eq!(from_node::<S>(&expected).unwrap(), s);
}

#[test]
fn integers_read_exactly_and_overflow_names_the_type() {
    assert_eq!(from_node::<i128>(&Node::int(i128::MIN)).unwrap(), i128::MIN);
    assert_eq!(
        from_node::<u128>(&big("340282366920938463463374607431768211455")).unwrap(),
        u128::MAX
    );
    assert_eq!(
        from_node::<u64>(&Node::int(u64::MAX.into())).unwrap(),
        u64::MAX
    );
    assert_eq!(from_node::<i8>(&Node::int(-128)).unwrap(), -128);
    let e = from_node::<u8>(&Node::int(256)).unwrap_err();
    assert_eq!(e.to_string(), "/: 256 does not fit in u8");
    assert_eq!(
        e.kind(),
        &SerdeErrorKind::OutOfRange {
            value: "256".into(),
            ty: "u8"
        }
    );
    assert!(from_node::<u32>(&Node::int(-1)).is_err());
    assert!(from_node::<i64>(&big("340282366920938463463374607431768211455")).is_err());
    assert!(from_node::<u128>(&Node::int(-1)).is_err());
    // Beyond 128 bits: only as a float.
    let huge = big("1000000000000000000000000000000000000000000");
    assert_eq!(
        from_node::<i128>(&huge).unwrap_err().kind(),
        &SerdeErrorKind::OutOfRange {
            value: "1000000000000000000000000000000000000000000".into(),
            ty: "i128"
        }
    );
    assert_eq!(from_node::<f64>(&huge).unwrap(), 1e42);
    // Integers read as floats; floats are not read as integers.
    assert_eq!(from_node::<f32>(&Node::int(3)).unwrap(), 3.0);
    assert!(from_node::<u8>(&float(3.0)).is_err());
}

#[test]
fn deserialize_any_follows_the_node() {
    let node = n(Value::Map(vec![
        (Node::str("n"), null()),
        (Node::str("b"), n(Value::Bool(true))),
        (Node::str("i"), Node::int(-5)),
        (Node::str("f"), float(0.25)),
        (Node::str("s"), Node::str("x")),
        (Node::str("l"), Node::seq([Node::int(1)])),
    ]));
    let v: serde_json::Value = from_node(&node).unwrap();
    assert_eq!(
        v,
        serde_json::json!({"n": null, "b": true, "i": -5, "f": 0.25, "s": "x", "l": [1]})
    );
}

#[test]
fn tags_are_ignored_and_timestamps_read_as_text() {
    let ts = Timestamp {
        text: "2001-12-14t21:59:43.10-05:00".into(),
        year: 2001,
        month: 12,
        day: 14,
        time: None,
    };
    assert_eq!(
        from_node::<String>(&n(Value::Timestamp(Box::new(ts)))).unwrap(),
        "2001-12-14t21:59:43.10-05:00"
    );
    let tagged = Node::tagged(
        "asdf://example.org/tags/thing-1.0.0",
        Value::Map(vec![(Node::str("zeta"), Node::int(1))]),
    );
    #[derive(Deserialize, Debug, PartialEq)]
    struct Z {
        zeta: u8,
    }
    assert_eq!(from_node::<Z>(&tagged).unwrap(), Z { zeta: 1 });
    let tagged_scalar = Node::tagged("tag:example.org:x", Value::Str("5 m".into()));
    assert_eq!(from_node::<String>(&tagged_scalar).unwrap(), "5 m");
}

#[test]
fn bytes_read_as_bytes_or_as_a_sequence() {
    let node = n(Value::Binary(vec![1, 2, 250]));
    assert_eq!(from_node::<Vec<u8>>(&node).unwrap(), vec![1, 2, 250]);
    assert!(
        from_node::<Vec<i8>>(&node).is_err(),
        "250 does not fit in i8"
    );
    assert_eq!(from_node_borrowed::<&[u8]>(&node).unwrap(), &[1, 2, 250]);
}

#[test]
fn borrowed_strings_point_into_the_tree() {
    let node = Node::map([("k", Node::str("borrowed"))]);
    let m: BTreeMap<&str, &str> = from_node_borrowed(&node).unwrap();
    let inner = node.get("k").unwrap().as_str().unwrap();
    assert!(std::ptr::eq(m["k"], inner));
}

#[test]
fn non_string_keys_round_trip() {
    let m = BTreeMap::from([(Some(true), 1u8), (None, 2)]);
    let node = to_node(&m).unwrap();
    assert_eq!(
        node,
        n(Value::Map(vec![
            (null(), Node::int(2)),
            (n(Value::Bool(true)), Node::int(1)),
        ]))
    );
    assert_eq!(from_node::<BTreeMap<Option<bool>, u8>>(&node).unwrap(), m);
    let tuples = BTreeMap::from([((1u8, 2u8), "a")]);
    let node = to_node(&tuples).unwrap();
    assert_eq!(
        from_node::<BTreeMap<(u8, u8), String>>(&node).unwrap(),
        BTreeMap::from([((1, 2), "a".to_string())])
    );
}

#[test]
fn struct_fields_ignore_scalar_keys_that_are_no_field() {
    #[derive(Deserialize, Debug, PartialEq)]
    struct Z {
        zeta: u8,
    }
    let node = n(Value::Map(vec![
        (Node::int(0), Node::str("not a field index")),
        (n(Value::Bool(true)), null()),
        (Node::str("zeta"), Node::int(4)),
    ]));
    assert_eq!(from_node::<Z>(&node).unwrap(), Z { zeta: 4 });
    #[derive(Deserialize, Debug)]
    #[serde(deny_unknown_fields)]
    #[allow(dead_code)]
    struct Strict {
        zeta: u8,
    }
    let e = from_node::<Strict>(&node).unwrap_err();
    assert_eq!(e.path(), "/0");
    assert!(e.to_string().starts_with("/0: unknown field `0`"), "{e}");
}

#[derive(Deserialize, Debug)]
#[allow(dead_code)]
struct Item {
    count: u8,
}

#[derive(Deserialize, Debug)]
#[allow(dead_code)]
struct Doc {
    items: Vec<Item>,
    shape: Option<E>,
}

#[test]
fn errors_name_the_path() {
    let items = |third: Node| {
        Node::seq([
            Node::map([("count", Node::int(1))]),
            Node::map([("count", Node::int(2))]),
            third,
        ])
    };
    let doc = Node::map([
        ("items", items(Node::map([("count", Node::int(300))]))),
        ("shape", null()),
    ]);
    let e = from_node::<Doc>(&doc).unwrap_err();
    assert_eq!(e.path(), "/items/2/count");
    assert_eq!(e.to_string(), "/items/2/count: 300 does not fit in u8");

    let doc = Node::map([("items", items(Node::map([("cnt", Node::int(1))])))]);
    let e = from_node::<Doc>(&doc).unwrap_err();
    assert_eq!(e.to_string(), "/items/2: missing field `count`");
    assert_eq!(e.kind(), &SerdeErrorKind::MissingField("count"));

    let doc = Node::map([
        ("items", Node::seq([])),
        (
            "shape",
            Node::map([("D", Node::map([("x", Node::str("no"))]))]),
        ),
    ]);
    let e = from_node::<Doc>(&doc).unwrap_err();
    assert_eq!(
        e.to_string(),
        "/shape/D/x: invalid type: string \"no\", expected i32"
    );

    let doc = Node::map([("items", Node::seq([])), ("shape", Node::str("Q"))]);
    let e = from_node::<Doc>(&doc).unwrap_err();
    assert_eq!(e.path(), "/shape");
    assert!(e.to_string().contains("unknown variant `Q`"), "{e}");

    let two_keys = Node::map([("A", null()), ("B", Node::int(1))]);
    let e = from_node::<E>(&two_keys).unwrap_err();
    assert_eq!(
        e.to_string(),
        "/: invalid value: map, expected a mapping with a single key"
    );
    let e = from_node::<E>(&Node::map([("A", Node::int(1))])).unwrap_err();
    assert_eq!(e.path(), "/A");
    let e = from_node::<E>(&Node::str("B")).unwrap_err();
    assert!(e.to_string().contains("expected newtype variant"), "{e}");
    let e = from_node::<E>(&Node::int(1)).unwrap_err();
    assert!(
        e.to_string()
            .contains("expected a string or a mapping with a single key"),
        "{e}"
    );

    // Keys with `/` and `~` are escaped in the pointer.
    let m = Node::map([("a/b~c", Node::str("x"))]);
    let e = from_node::<BTreeMap<String, u8>>(&m).unwrap_err();
    assert_eq!(e.path(), "/a~1b~0c");
}

#[test]
fn sequence_lengths_are_checked() {
    let three = Node::seq([Node::int(1), Node::int(2), Node::int(3)]);
    assert!(from_node::<(u8, u8)>(&three).is_err());
    assert!(from_node::<[u8; 4]>(&three).is_err());
    assert_eq!(from_node::<[u8; 3]>(&three).unwrap(), [1, 2, 3]);
    assert!(from_node::<Pair>(&Node::seq([Node::int(1)])).is_err());
    assert!(from_node::<Vec<u8>>(&n(Value::Binary(vec![1, 2, 3]))).is_ok());
    assert!(from_node::<[u8; 2]>(&n(Value::Binary(vec![1, 2, 3]))).is_err());
}

#[test]
fn recursive_aliases_are_errors() {
    let node = Node::map([(
        "a",
        Node::seq([Node::int(1), n(Value::Recursive("x".into()))]),
    )]);
    let e = from_node::<serde_json::Value>(&node).unwrap_err();
    assert_eq!(e.path(), "/a/1");
    assert_eq!(e.kind(), &SerdeErrorKind::Recursive("x".into()));
    let e = from_node::<BTreeMap<String, Vec<Option<u8>>>>(&node).unwrap_err();
    assert_eq!(e.kind(), &SerdeErrorKind::Recursive("x".into()));
}

struct Fails;

impl Serialize for Fails {
    fn serialize<S: Serializer>(&self, _s: S) -> Result<S::Ok, S::Error> {
        Err(serde::ser::Error::custom("cannot write this"))
    }
}

#[test]
fn serialize_errors_name_the_path() {
    #[derive(Serialize)]
    struct Outer {
        list: Vec<BTreeMap<u8, Fails>>,
    }
    #[derive(Serialize)]
    enum V {
        T(u8, Fails),
    }
    let e = to_node(&Outer {
        list: vec![BTreeMap::new(), BTreeMap::from([(7, Fails)])],
    })
    .unwrap_err();
    assert_eq!(e.to_string(), "/list/1/7: cannot write this");
    let e = to_node(&[V::T(1, Fails)]).unwrap_err();
    assert_eq!(e.path(), "/0/T/1");
}

#[test]
fn options_nest_and_lose_only_some_none() {
    assert_eq!(
        from_node::<Option<Option<u8>>>(&Node::int(1)).unwrap(),
        Some(Some(1))
    );
    assert_eq!(from_node::<Option<Option<u8>>>(&null()).unwrap(), None);
    assert_eq!(to_node(&Some(None::<u8>)).unwrap(), null());
}

#[test]
fn the_wrapper_joins_paths_and_handles_absent_options() {
    let node = Node::map([("count", Node::str("x"))]);
    let mut ctx = FromContext::detached();
    let e = ctx
        .key("outer", |ctx| {
            ctx.index(3, |ctx| {
                Serde::<BTreeMap<String, u8>>::from_asdf(&node, ctx).map(|_| ())
            })
        })
        .unwrap_err();
    assert_eq!(e.path, "/outer/3/count");
    assert!(
        matches!(&e.kind, ConvertErrorKind::Expected { expected, found }
            if expected == "u8" && found == "string \"x\""),
        "{e}"
    );
    // At the root.
    let e = crate::convert::from_node::<Serde<u8>>(&Node::int(999)).unwrap_err();
    assert_eq!(e.path, "/");
    assert!(matches!(
        e.kind,
        ConvertErrorKind::OutOfRange { ty: "u8", .. }
    ));
    let e = crate::convert::from_node::<Serde<Item>>(&Node::map([("c", null())])).unwrap_err();
    assert!(matches!(&e.kind, ConvertErrorKind::MissingKey(k) if k == "count"));

    // Writing: the context's path comes first.
    let mut ctx = ToContext::detached();
    let v = Serde(vec![Fails]);
    let e = ctx.key("f", |ctx| v.to_asdf(ctx)).unwrap_err();
    assert_eq!(e.path, "/f/0");
    assert!(matches!(&e.kind, ConvertErrorKind::Custom(m) if m == "cannot write this"));

    assert_eq!(Serde::<Option<u8>>::absent(), Some(Serde(None)));
    assert_eq!(Serde::<Option<Newtype>>::absent(), Some(Serde(None)));
    assert_eq!(Serde::<u8>::absent(), None);
    assert_eq!(Serde::<()>::absent(), None);
    assert!(Serde(None::<S>).is_absent());
    assert!(!Serde(Some(1u8)).is_absent());
    assert!(!Serde(()).is_absent());
    assert!(!Serde(vec![1u8]).is_absent());
    assert!(!Serde(S {
        zeta: 0,
        alpha: vec![],
        unit: (),
        maybe: None
    })
    .is_absent());

    let node = crate::convert::to_node(&Serde(E::B(5))).unwrap();
    assert_eq!(node, Node::map([("B", Node::int(5))]));
    let back: Serde<E> = crate::convert::from_node(&node).unwrap();
    assert_eq!(*back, E::B(5));
}

#[test]
fn errors_convert_into_library_errors() {
    let e = from_node::<u8>(&Node::str("x")).unwrap_err();
    let lib: crate::Error = e.clone().into();
    assert_eq!(e.to_string(), "/: invalid type: string \"x\", expected u8");
    assert_eq!(lib.to_string(), "/: expected u8, found string \"x\"");
    assert_eq!(
        e.into_convert_error("/base/").to_string(),
        "/base: expected u8, found string \"x\""
    );
}

#[test]
fn into_deserializer_lends_the_node() {
    use serde::de::IntoDeserializer;
    let node = Node::seq([Node::int(1)]);
    let v = Vec::<u8>::deserialize(node.into_deserializer()).unwrap();
    assert_eq!(v, [1]);
}

#[test]
fn other_enum_representations_and_flatten_round_trip() {
    #[derive(Serialize, Deserialize, Debug, PartialEq)]
    #[serde(tag = "type")]
    enum Internal {
        A { x: u8 },
        B,
    }
    #[derive(Serialize, Deserialize, Debug, PartialEq)]
    #[serde(tag = "t", content = "c")]
    enum Adjacent {
        N(i128),
        T(u8, String),
    }
    #[derive(Serialize, Deserialize, Debug, PartialEq)]
    #[serde(untagged)]
    enum Untagged {
        Big(u64),
        Text(String),
        List(Vec<Untagged>),
    }
    #[derive(Serialize, Deserialize, Debug, PartialEq)]
    struct Base {
        id: u32,
    }
    #[derive(Serialize, Deserialize, Debug, PartialEq)]
    struct Flat {
        #[serde(flatten)]
        base: Base,
        #[serde(flatten)]
        rest: BTreeMap<String, i64>,
    }

    let v = Internal::A { x: 3 };
    let node = to_node(&v).unwrap();
    assert_eq!(
        node,
        Node::map([("type", Node::str("A")), ("x", Node::int(3))])
    );
    assert_eq!(from_node::<Internal>(&node).unwrap(), v);
    assert_eq!(
        from_node::<Internal>(&Node::map([("type", Node::str("B"))])).unwrap(),
        Internal::B
    );

    for v in [Adjacent::N(i128::MIN), Adjacent::T(1, "x".into())] {
        assert_eq!(from_node::<Adjacent>(&to_node(&v).unwrap()).unwrap(), v);
    }
    assert_eq!(
        to_node(&Adjacent::N(-1)).unwrap(),
        Node::map([("t", Node::str("N")), ("c", Node::int(-1))])
    );

    let v = Untagged::List(vec![
        Untagged::Big(u64::MAX),
        Untagged::Big(5),
        Untagged::Text("t".into()),
    ]);
    assert_eq!(from_node::<Untagged>(&to_node(&v).unwrap()).unwrap(), v);
    // serde buffers untagged, internally tagged and flattened content in a form without
    // 128-bit integers: such values beyond 64 bits fail there (a serde limitation).
    let e = from_node::<Untagged>(&Node::int(i128::MAX)).unwrap_err();
    assert_eq!(e.path(), "/");

    let v = Flat {
        base: Base { id: 9 },
        rest: BTreeMap::from([("extra".into(), -2)]),
    };
    let node = to_node(&v).unwrap();
    assert_eq!(
        node,
        Node::map([("id", Node::int(9)), ("extra", Node::int(-2))])
    );
    assert_eq!(from_node::<Flat>(&node).unwrap(), v);
}

/// Whether serde_json is built with `arbitrary_precision` here. The tests' dev-dependency
/// turns it on (cargo unifies features, so the library sees it in tests); the library is
/// built without it, and these tests check the documented behaviour of both.
fn arbitrary_precision() -> bool {
    let text = "18446744073709551616";
    serde_json::from_str::<serde_json::Number>(text).is_ok_and(|n| n.to_string() == text)
}

#[test]
fn deserialize_any_visits_128_bit_integers() {
    let node = Node::seq([
        Node::int(i128::MIN),
        Node::int(i128::MAX),
        big("340282366920938463463374607431768211455"),
        Node::int(-1),
    ]);
    let read = from_node::<serde_json::Value>(&node);
    if arbitrary_precision() {
        assert_eq!(
            read.unwrap().to_string(),
            "[-170141183460469231731687303715884105728,\
             170141183460469231731687303715884105727,\
             340282366920938463463374607431768211455,-1]"
        );
    } else {
        // Documented: serde_json's own numbers hold 64 bits.
        let e = read.unwrap_err();
        assert_eq!(e.path(), "/0");
        assert!(e.to_string().contains("out of range"), "{e}");
    }
    // Within 64 bits, either way.
    let node = Node::seq([Node::int(i64::MIN.into()), Node::int(u64::MAX.into())]);
    let v: serde_json::Value = from_node(&node).unwrap();
    assert_eq!(v.to_string(), "[-9223372036854775808,18446744073709551615]");
    // Beyond 128 bits, neither.
    let e = from_node::<serde_json::Value>(&big("1".repeat(40).as_str())).unwrap_err();
    assert!(matches!(e.kind(), SerdeErrorKind::OutOfRange { .. }));
}

#[test]
fn the_wrapper_writes_big_integers_as_core_integer() {
    #[derive(Serialize, Deserialize, Debug, PartialEq)]
    struct Ints {
        small: Vec<i64>,
        big: Vec<i128>,
        huge: u128,
        keyed: BTreeMap<u128, u8>,
    }
    let v = Ints {
        small: vec![-(1 << 62), i64::MAX, -i64::MAX + 1],
        big: vec![i64::MIN.into(), i128::MIN, 1 << 64],
        huge: u128::MAX,
        keyed: BTreeMap::from([(u128::MAX, 1)]),
    };
    let node = crate::convert::to_node(&Serde(&v)).unwrap();
    // Literal range kept.
    assert_eq!(node.pointer("/small/1").unwrap().as_i64(), Some(i64::MAX));
    assert_eq!(
        node.pointer("/small/2").unwrap().as_i64(),
        Some(-i64::MAX + 1)
    );
    // Beyond: core/integer with 32-bit little-endian words.
    let min64 = node.pointer("/big/0").unwrap();
    assert_eq!(min64.tag(), Some("tag:stsci.edu:asdf/core/integer-1.1.0"));
    assert_eq!(min64.get("sign").unwrap().as_str(), Some("-"));
    assert_eq!(
        min64.get("string").unwrap().as_str(),
        Some("-9223372036854775808")
    );
    let words = crate::convert::from_node::<ndarray::Array1<u32>>(min64.get("words").unwrap())
        .map(|a| a.to_vec());
    assert_eq!(words.unwrap(), [0, 0x8000_0000]);
    let huge = node.get("huge").unwrap();
    assert_eq!(huge.get("sign").unwrap().as_str(), Some("+"));
    let words = crate::convert::from_node::<ndarray::Array1<u32>>(huge.get("words").unwrap())
        .map(|a| a.to_vec());
    assert_eq!(words.unwrap(), [u32::MAX; 4]);
    // Keys stay literals.
    let (k, _) = &node.get("keyed").unwrap().as_map().unwrap()[0];
    assert_eq!(
        k.as_int(),
        Some(&Integer::Big(
            "340282366920938463463374607431768211455".into()
        ))
    );
    // Read back through the wrapper; the plain bridge sees the tagged mappings.
    let back: Serde<Ints> = crate::convert::from_node(&node).unwrap();
    assert_eq!(back.0, v);
    assert!(from_node::<Ints>(&node).is_err());
    // The plain bridge keeps literals.
    assert_eq!(
        to_node(&v).unwrap().pointer("/big/1").unwrap().as_int(),
        Some(&Integer::Small(i128::MIN))
    );
}

#[test]
fn deep_trees_do_not_overflow_the_stack() {
    let depth = 1000;
    let text = format!("{}{}", "[".repeat(depth), "]".repeat(depth));
    let root = crate::yaml::parse(text.as_bytes(), &crate::yaml::YamlLimits::default())
        .unwrap()
        .root;
    let v: serde_json::Value = from_node(&root).unwrap();
    drop(v);
}

#[test]
fn string_keyed_maps_read_scalar_keys_as_text() {
    let node = crate::yaml::parse(
        b"{1: a, false: b, null: c, 1.5: d, x: e}",
        &crate::yaml::YamlLimits::default(),
    )
    .unwrap()
    .root;
    let m: BTreeMap<String, String> = from_node(&node).unwrap();
    let keys: Vec<&str> = m.keys().map(String::as_str).collect();
    assert_eq!(keys, ["1", "1.5", "false", "null", "x"]);
    let v: serde_json::Value = from_node(&node).unwrap();
    assert_eq!(v["false"], "b");
    // Keys asked for as what they are still read as such.
    let e = from_node::<BTreeMap<u8, ()>>(&Node::map([("k", null())])).unwrap_err();
    assert_eq!(e.path(), "/k");
    let ints = crate::yaml::parse(b"{1: a, 2: b}", &crate::yaml::YamlLimits::default())
        .unwrap()
        .root;
    let m: BTreeMap<u8, String> = from_node(&ints).unwrap();
    assert_eq!(m[&2], "b");
    // Sequence and mapping keys stay errors for string maps.
    let node = n(Value::Map(vec![(Node::seq([]), null())]));
    assert!(from_node::<BTreeMap<String, ()>>(&node).is_err());
}

#[test]
fn serde_json_values_keep_their_numbers() {
    let v = serde_json::json!({"a": 1, "b": -1.5, "c": [null, true, "s"], "d": u64::MAX});
    let expect = Node::map([
        ("a", Node::int(1)),
        ("b", float(-1.5)),
        (
            "c",
            Node::seq([null(), n(Value::Bool(true)), Node::str("s")]),
        ),
        ("d", Node::int(u64::MAX.into())),
    ]);
    assert_eq!(json_to_node(&v), expect);
    assert_eq!(from_node::<serde_json::Value>(&expect).unwrap(), v);

    let wide = serde_json::from_str::<serde_json::Value>(
        "[-170141183460469231731687303715884105729, 1e400, 2.5e-3]",
    );
    if arbitrary_precision() {
        // Numbers keep their text: exact beyond 128 bits; out of f64's range is infinite.
        assert_eq!(
            json_to_node(&wide.unwrap()),
            Node::seq([
                big("-170141183460469231731687303715884105729"),
                float(f64::INFINITY),
                float(0.0025),
            ])
        );
    } else {
        // serde_json itself refuses 1e400, and reads the big integer as a float.
        assert!(wide.is_err());
        let wide: serde_json::Value =
            serde_json::from_str("[-170141183460469231731687303715884105729, 2.5e-3]").unwrap();
        assert_eq!(
            json_to_node(&wide),
            Node::seq([float(-1.7014118346046923e38), float(0.0025)])
        );
    }
}

#[test]
fn serde_json_values_through_the_serializer() {
    let v = serde_json::json!({"s": "x", "l": [null, false], "n": 2});
    if arbitrary_precision() {
        // Documented: numbers are serde_json's private struct, which to_node refuses (also
        // inside a serialized type) rather than writing it as a mapping.
        let e = to_node(&v).unwrap_err();
        assert_eq!(e.path(), "/n");
        assert!(e.to_string().contains("json_to_node"), "{e}");
        let e = to_node(&BTreeMap::from([("k", vec![v.clone()])])).unwrap_err();
        assert_eq!(e.path(), "/k/0/n");
        // Without numbers nothing is private.
        let plain = serde_json::json!({"s": "x", "l": [null, false]});
        assert_eq!(to_node(&plain).unwrap(), json_to_node(&plain));
    } else {
        assert_eq!(to_node(&v).unwrap(), json_to_node(&v));
    }
    // Another format's private struct (names starting with `$` are never Rust types).
    struct Private;
    impl Serialize for Private {
        fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
            use serde::ser::SerializeStruct;
            let mut st = s.serialize_struct("$format::private::Thing", 1)?;
            st.serialize_field("$format::private::Thing", "text")?;
            st.end()
        }
    }
    let e = to_node(&[Private]).unwrap_err();
    assert_eq!(e.path(), "/0");
    assert!(e.to_string().contains("`$format::private::Thing`"), "{e}");
}

#[test]
fn the_wrapper_is_transparent_to_serde() {
    let v = Serde(vec![Serde(1u8), Serde(2)]);
    assert_eq!(
        to_node(&v).unwrap(),
        Node::seq([Node::int(1), Node::int(2)])
    );
    let back: Serde<Vec<Serde<u8>>> = from_node(&to_node(&v).unwrap()).unwrap();
    assert_eq!(back, v);
}
