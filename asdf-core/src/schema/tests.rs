//! Unit tests of the validation engine with inline schemas. Expected outcomes follow python
//! asdf 6.0.0 (its `tag`, `ndim`, `max_ndim`, `datatype` validators); messages are ours.

use super::*;
use crate::yaml::{parse, Value, YamlLimits};

const ND: &str = "tag:stsci.edu:asdf/core/ndarray-1.1.0";

/// Parses a YAML tree (with the ASDF `!` handle).
fn tree(yaml: &str) -> Node {
    let text = format!("%YAML 1.1\n%TAG ! tag:stsci.edu:asdf/\n---\n{yaml}\n...\n");
    parse(text.as_bytes(), &YamlLimits::default())
        .expect("test yaml parses")
        .root
}

/// Registers `schema` under a URI unique to the test and validates `node` against it.
fn check(name: &str, schema: &str, node: &Node) -> Result<(), Vec<String>> {
    let uri = format!("http://example.org/test-schemas/{name}");
    register_schema(&uri, schema).expect("test schema registers");
    validate_against(&uri, node).map_err(|e| e.lines())
}

#[test]
fn tag_exact_and_wildcards() {
    let s = "tag: tag:stsci.edu:asdf/core/ndarray-1.*";
    let good =
        tree("!core/ndarray-1.1.0 {source: 0, shape: [2], datatype: int8, byteorder: little}");
    assert_eq!(check("tag1", s, &good), Ok(()));
    let other = tree("!core/complex-1.0.0 1+2j");
    assert_eq!(
        check("tag1", s, &other),
        Err(vec![
            "/: tag: expected tag:stsci.edu:asdf/core/ndarray-1.*, found tag:stsci.edu:asdf/core/complex-1.0.0"
                .to_string()
        ])
    );
    // `*` stays within a segment; `**` crosses `/`.
    let s2 = "tag: tag:stsci.edu:asdf/*";
    assert_eq!(
        check("tag2", s2, &good),
        Err(vec![
            "/: tag: expected tag:stsci.edu:asdf/*, found tag:stsci.edu:asdf/core/ndarray-1.1.0"
                .to_string()
        ])
    );
    let s3 = "tag: tag:stsci.edu:asdf/**";
    assert_eq!(check("tag3", s3, &good), Ok(()));
    // Untagged nodes have their YAML core tag.
    let s4 = "tag: tag:yaml.org,2002:str";
    assert_eq!(check("tag4", s4, &Node::str("x")), Ok(()));
    assert_eq!(
        check("tag4", s4, &Node::int(1)),
        Err(vec![
            "/: tag: expected tag:yaml.org,2002:str, found tag:yaml.org,2002:int".to_string()
        ])
    );
}

#[test]
fn ndim_and_max_ndim() {
    let s = format!("tag: {ND}\nndim: 2");
    let two =
        tree("!core/ndarray-1.1.0 {source: 0, shape: [2, 3], datatype: int8, byteorder: little}");
    let one =
        tree("!core/ndarray-1.1.0 {source: 0, shape: [6], datatype: int8, byteorder: little}");
    assert_eq!(check("ndim1", &s, &two), Ok(()));
    assert_eq!(
        check("ndim1", &s, &one),
        Err(vec!["/: ndim: expected 2 dimensions, found 1".to_string()])
    );
    // Inline data: dimensions of the nested lists (bare list form and `data`).
    let inline = tree("!core/ndarray-1.1.0 [[1, 2], [3, 4]]");
    assert_eq!(check("ndim1", &s, &inline), Ok(()));
    let data = tree("!core/ndarray-1.1.0 {data: [1, 2, 3]}");
    assert_eq!(
        check("ndim1", &s, &data),
        Err(vec!["/: ndim: expected 2 dimensions, found 1".to_string()])
    );

    let m = "max_ndim: 1";
    assert_eq!(check("ndim2", m, &one), Ok(()));
    assert_eq!(
        check("ndim2", m, &two),
        Err(vec![
            "/: max_ndim: expected at most 1 dimensions, found 2".to_string()
        ])
    );
    // Not an ndarray: python asdf applies these keywords to ndarray nodes only.
    assert_eq!(check("ndim2", m, &Node::str("plain")), Ok(()));
}

#[test]
fn datatype_compatibility() {
    let f64s = "datatype: float64";
    let int8 =
        tree("!core/ndarray-1.1.0 {source: 0, shape: [2], datatype: int8, byteorder: little}");
    let f64n =
        tree("!core/ndarray-1.1.0 {source: 0, shape: [2], datatype: float64, byteorder: little}");
    let c128 = tree(
        "!core/ndarray-1.1.0 {source: 0, shape: [2], datatype: complex128, byteorder: little}",
    );
    assert_eq!(check("dt1", f64s, &int8), Ok(()));
    assert_eq!(check("dt1", f64s, &f64n), Ok(()));
    assert_eq!(
        check("dt1", f64s, &c128),
        Err(vec![
            "/: datatype: expected float64-compatible, found complex128".to_string()
        ])
    );
    let i32s = "datatype: int32";
    assert_eq!(
        check("dt2", i32s, &f64n),
        Err(vec![
            "/: datatype: expected int32-compatible, found float64".to_string()
        ])
    );
    // exact_datatype: only the same datatype passes.
    let exact = "datatype: float64\nexact_datatype: true";
    assert_eq!(check("dt3", exact, &f64n), Ok(()));
    assert_eq!(
        check("dt3", exact, &int8),
        Err(vec![
            "/: datatype: expected exactly float64, found int8".to_string()
        ])
    );
    // Strings: ascii widens to ucs4 of at least its length; ucs4 never narrows to ascii.
    let ascii5 =
        tree("!core/ndarray-1.1.0 {source: 0, shape: [2], datatype: [ascii, 5], byteorder: big}");
    assert_eq!(check("dt4", "datatype: [ucs4, 10]", &ascii5), Ok(()));
    assert_eq!(
        check("dt5", "datatype: [ascii, 4]", &ascii5),
        Err(vec![
            "/: datatype: expected [ascii, 4]-compatible, found ascii[5]".to_string()
        ])
    );
    let ucs =
        tree("!core/ndarray-1.1.0 {source: 0, shape: [2], datatype: [ucs4, 2], byteorder: big}");
    assert_eq!(
        check("dt6", "datatype: [ascii, 100]", &ucs),
        Err(vec![
            "/: datatype: expected [ascii, 100]-compatible, found ucs4[2]".to_string()
        ])
    );
    // Inferred from inline data: integers are int64.
    let inline = tree("!core/ndarray-1.1.0 [1, 2, 3]");
    assert_eq!(check("dt1", f64s, &inline), Ok(()));
    assert_eq!(
        check("dt2", i32s, &inline),
        Err(vec![
            "/: datatype: expected int32-compatible, found int64".to_string()
        ])
    );
}

#[test]
fn datatype_records() {
    let rec = tree(
        "!core/ndarray-1.1.0 {source: 0, shape: [2], byteorder: big, datatype: [\
         {name: a, datatype: int16, byteorder: big}, {name: b, datatype: float32, byteorder: big}]}",
    );
    // Same fields (byteorder ignored in the schema's copy? no: kept, python keeps it too).
    let same = "datatype: [{name: a, datatype: int16, byteorder: big}, {name: b, datatype: float32, byteorder: big}]";
    assert_eq!(check("rec1", same, &rec), Ok(()));
    // Wider field types: safe casts field by field, names ignored.
    let wider = "datatype: [{name: x, datatype: int32}, {name: y, datatype: float64}]";
    assert_eq!(check("rec2", wider, &rec), Ok(()));
    let narrower = "datatype: [{name: a, datatype: int8}, {name: b, datatype: float32}]";
    assert_eq!(
        check("rec3", narrower, &rec),
        Err(vec!["/: datatype: expected [{name: a, datatype: int8}, {name: b, datatype: float32}]-compatible, found {a: int16, b: float32}".to_string()])
    );
    let fewer = "datatype: [{name: a, datatype: int16}]";
    let e = check("rec4", fewer, &rec).unwrap_err();
    assert_eq!(e.len(), 1);
    assert!(e[0].starts_with("/: datatype: expected 1 columns"), "{e:?}");
    let scalar = "datatype: float64";
    let e = check("rec5", scalar, &rec).unwrap_err();
    assert!(
        e[0].starts_with("/: datatype: expected scalar datatype float64, found record"),
        "{e:?}"
    );
}

#[test]
fn annotations_never_fail() {
    let s = "propertyOrder: [b, a]\nflowStyle: block\nstyle: literal\ntype: object";
    let node = Node::map([("a", Node::int(1)), ("b", Node::int(2))]);
    assert_eq!(check("ann", s, &node), Ok(()));
}

#[test]
fn all_errors_listed_with_paths() {
    let s = "type: object\nproperties:\n  a: {type: string}\n  b: {type: array, items: {type: integer}}\nrequired: [a, b, c]";
    let node = tree("{a: 1, b: [1, x, 3.5]}");
    let mut errs = check("many", s, &node).unwrap_err();
    errs.sort();
    assert_eq!(
        errs,
        vec![
            "/: required: expected property c, found it missing".to_string(),
            "/a: type: expected string, found integer 1".to_string(),
            "/b/1: type: expected integer, found string \"x\"".to_string(),
            "/b/2: type: expected integer, found float 3.5".to_string(),
        ]
    );
}

#[test]
fn refs_resolve_against_the_schema_id() {
    register_schema(
        "http://example.org/refs/inner-1.0.0",
        "id: http://example.org/refs/inner-1.0.0\ntype: object\nrequired: [n]",
    )
    .unwrap();
    let outer =
        "id: http://example.org/refs/outer-1.0.0\nproperties:\n  child: {$ref: inner-1.0.0}";
    assert_eq!(check("outer", outer, &tree("{child: {n: 1}}")), Ok(()));
    assert_eq!(
        check("outer", outer, &tree("{child: {m: 1}}")),
        Err(vec![
            "/child: required: expected property n, found it missing".to_string()
        ])
    );
    // An unknown reference is a schema problem, reported once, never a panic.
    let broken = "properties:\n  child: {$ref: 'http://example.org/refs/missing-1.0.0'}";
    let e = check("broken", broken, &tree("{child: 1}")).unwrap_err();
    assert_eq!(e.len(), 1);
    assert!(e[0].starts_with("/: $schema: "), "{e:?}");
    assert!(
        matches!(
            check_schema("http://example.org/test-schemas/broken"),
            Err(SchemaError::Invalid { ref uri, ref message })
                if uri == "http://example.org/test-schemas/broken"
                    && message.contains("unknown schema http://example.org/refs/missing-1.0.0")
        ),
        "{:?}",
        check_schema("http://example.org/test-schemas/broken")
    );
}

#[test]
fn bad_schemas_are_schema_errors() {
    assert!(matches!(
        register_schema("http://example.org/bad-yaml", "a: [1, 2"),
        Err(SchemaError::Yaml { .. })
    ));
    assert!(matches!(
        register_schema("http://example.org/bad-kind", "- 1\n- 2"),
        Err(SchemaError::Invalid { .. })
    ));
    register_schema("http://example.org/bad-tag", "tag: 3").unwrap();
    assert!(
        matches!(
            check_schema("http://example.org/bad-tag"),
            Err(SchemaError::Invalid { ref uri, ref message })
                if uri == "http://example.org/bad-tag" && message == "tag: the pattern must be a string"
        ),
        "{:?}",
        check_schema("http://example.org/bad-tag")
    );
    let e = validate_against("http://example.org/never-registered", &Node::int(1)).unwrap_err();
    assert_eq!(
        e.lines(),
        vec!["/: $schema: unknown schema http://example.org/never-registered".to_string()]
    );
}

#[test]
fn user_tags_validate_nested_nodes_in_trees() {
    register_schema(
        "asdf://example.org/schemas/widget-1.0.0",
        "type: object\nproperties:\n  size: {type: integer, minimum: 0}\nrequired: [size]",
    )
    .unwrap();
    register_tag(
        "asdf://example.org/tags/widget-1.*",
        "asdf://example.org/schemas/widget-1.0.0",
    );
    let t = tree(
        "a: !<asdf://example.org/tags/widget-1.0.0> {size: 3}\n\
         b: [!<asdf://example.org/tags/widget-1.2.0> {size: -1}]\n\
         c: !<asdf://example.org/tags/gadget-1.0.0> {anything: goes}",
    );
    let e = validate_tree(&t, DEFAULT_STANDARD).unwrap_err();
    assert_eq!(
        e.lines(),
        vec!["/b/0/size: minimum: expected at least 0, found -1".to_string()]
    );
}

#[test]
fn ref_mappings_are_not_validated() {
    register_schema(
        "asdf://example.org/schemas/refd-1.0.0",
        "type: object\nrequired: [size]",
    )
    .unwrap();
    register_tag(
        "asdf://example.org/tags/refd-1.0.0",
        "asdf://example.org/schemas/refd-1.0.0",
    );
    let t = tree("a: !<asdf://example.org/tags/refd-1.0.0> {$ref: 'other.asdf#/x'}");
    assert_eq!(validate_tree(&t, DEFAULT_STANDARD), Ok(()));
    // Also where a schema reaches it: the reference and everything under it pass.
    let s = "type: object\nproperties:\n  child: {type: object, required: [n]}\nrequired: [child]";
    assert_eq!(
        check("refd", s, &tree("{child: {$ref: 'x.asdf#/c'}}")),
        Ok(())
    );
    assert_eq!(check("refd", s, &tree("{$ref: 'x.asdf'}")), Ok(()));
    assert_eq!(
        check("refd", s, &tree("{child: {m: 1}}")),
        Err(vec![
            "/child: required: expected property n, found it missing".to_string()
        ])
    );
}

#[test]
fn big_and_odd_values_do_not_break_validation() {
    let s = "type: object\nadditionalProperties: {type: number, maximum: 10}";
    let t = tree("{a: 123456789012345678901234567890123, b: .nan, c: 2001-12-14, 7: 1}");
    let e = check("odd", s, &t).unwrap_err();
    assert!(e.iter().any(|l| l.starts_with("/a: maximum:")), "{e:?}");
    assert!(e.iter().any(|l| l.starts_with("/c: type:")), "{e:?}");
    let rec = Node::new(Value::Recursive("x".into()));
    assert_eq!(
        check("odd", s, &Node::map([("r", rec)])),
        Err(vec![
            "/r: type: expected number, found a recursive alias *x".to_string()
        ])
    );
}

mod props {
    use super::*;
    use proptest::prelude::*;

    fn leaf() -> impl Strategy<Value = Node> {
        prop_oneof![
            Just(Node::new(Value::Null)),
            any::<bool>().prop_map(|b| Node::new(Value::Bool(b))),
            any::<i64>().prop_map(|i| Node::int(i128::from(i))),
            any::<f64>().prop_map(|f| Node::new(Value::Float(f))),
            "[a-z*/]{0,6}".prop_map(Node::str),
            Just(Node::new(Value::Recursive("r".into()))),
        ]
    }

    fn tags() -> impl Strategy<Value = Option<String>> {
        prop_oneof![
            Just(None),
            Just(Some(ND.to_string())),
            Just(Some("tag:stsci.edu:asdf/core/ndarray-1.0.0".to_string())),
            Just(Some("tag:stsci.edu:asdf/core/complex-1.0.0".to_string())),
            Just(Some("asdf://example.org/tags/widget-1.0.0".to_string())),
        ]
    }

    fn node() -> impl Strategy<Value = Node> {
        leaf().prop_recursive(4, 40, 6, |inner| {
            let keys = prop_oneof![
                Just("shape".to_string()),
                Just("datatype".to_string()),
                Just("data".to_string()),
                Just("source".to_string()),
                Just("byteorder".to_string()),
                "[a-z]{1,3}",
            ];
            prop_oneof![
                (tags(), prop::collection::vec(inner.clone(), 0..5)).prop_map(|(t, v)| {
                    let n = Value::Seq(v);
                    match t {
                        Some(t) => Node::tagged(t, n),
                        None => Node::new(n),
                    }
                }),
                (tags(), prop::collection::vec((keys, inner), 0..5)).prop_map(|(t, kv)| {
                    let n = Value::Map(kv.into_iter().map(|(k, v)| (Node::str(k), v)).collect());
                    match t {
                        Some(t) => Node::tagged(t, n),
                        None => Node::new(n),
                    }
                }),
            ]
        })
    }

    proptest! {
        #[test]
        fn validation_never_panics(n in node()) {
            let s = "anyOf:\n  - {tag: 'tag:stsci.edu:asdf/core/ndarray-*', ndim: 2, max_ndim: 3, datatype: float64}\n  - {datatype: [{datatype: int8}, {datatype: [ascii, 3]}], exact_datatype: true}\n  - {type: object, additionalProperties: {$ref: '#'}}\n  - {type: array, items: {$ref: '#'}, uniqueItems: true}\n  - {enum: [1, a, null]}";
            let _ = check("prop", s, &n);
            let _ = validate_tree(&n, DEFAULT_STANDARD);
            let _ = validate_tree(&n, "0.0.1");
        }
    }
}

#[test]
fn write_checks_follow_python() {
    // python asdf 6.0.0 refuses to write 2**63 and -(2**63) as literals ("too large to
    // safely represent as a literal in ASDF") and, from 1.6.0, keys other than str/int/bool.
    let ok = Node::map([
        ("max", Node::int(MAX_LITERAL_INT)),
        ("min", Node::int(MIN_LITERAL_INT)),
    ]);
    assert_eq!(validate_for_write(&ok, "0.0.0"), Ok(()));
    let big = Node::map([
        ("x", Node::int(MAX_LITERAL_INT + 1)),
        ("y", Node::int(MIN_LITERAL_INT - 1)),
    ]);
    let lines = validate_for_write(&big, "0.0.0").unwrap_err().lines();
    assert_eq!(lines.len(), 2);
    assert!(
        lines[0].starts_with("/x: integer: expected an integer from"),
        "{lines:?}"
    );
    assert!(
        lines[0].ends_with("found integer 9223372036854775808"),
        "{lines:?}"
    );
    let keys = Node::new(Value::Map(vec![
        (Node::new(Value::Float(1.5)), Node::int(1)),
        (Node::new(Value::Bool(true)), Node::int(2)),
        (
            Node::tagged("tag:example.org/k", Value::Str("k".into())),
            Node::int(3),
        ),
    ]));
    let lines = validate_for_write(&keys, "1.6.0").unwrap_err().lines();
    assert_eq!(
        lines,
        vec![
            "/: key: expected a string, integer or boolean key, found float 1.5".to_string(),
            "/: key: expected a string, integer or boolean key, found string \"k\" tagged tag:example.org/k".to_string(),
        ]
    );
    // Before 1.6.0 any key is allowed.
    assert_eq!(validate_for_write(&keys, "1.5.0"), Ok(()));
}

#[test]
fn deep_trees_do_not_overflow_the_stack() {
    // As deep as the YAML parser allows by default (1000 levels), inside a tagged ndarray
    // whose schema recurses once per level of inline data.
    let depth = 990;
    let mut data = Node::seq([Node::int(1)]);
    for _ in 0..depth {
        data = Node::seq([data]);
    }
    let nd = Node::tagged(ND, Value::Map(vec![(Node::str("data"), data.clone())]));
    let root = Node::map([("a", nd)]);
    let _ = validate_tree(&root, DEFAULT_STANDARD);
    let s = "type: array\nitems: {$ref: '#'}";
    let _ = check("deep", s, &data);
}

/// Messages show mappings in tree order (and record datatypes name first), whatever order
/// serde_json's map keeps (sorted unless its `preserve_order` feature is on in the build).
#[test]
fn messages_keep_the_order_of_mappings() {
    let s = "anyOf: [{type: string}, {type: integer}]";
    let node = tree("{zeta: 1, alpha: [2, {y: 3, b: 4}]}");
    assert_eq!(
        check("order1", s, &node),
        Err(vec![
            "/: anyOf: expected a match with one of the alternatives, found object {\"zeta\":1,\"alpha\":[2,{\"y\":3,\"b\":4}]}"
                .to_string()
        ])
    );
    let rec = tree(
        "!core/ndarray-1.1.0 {source: 0, shape: [2], byteorder: big, datatype: [\
         {name: a, datatype: int16, byteorder: big}]}",
    );
    let s = "datatype: [{shape: [2], datatype: int8, name: a}]\nexact_datatype: true";
    let e = check("order2", s, &rec).unwrap_err();
    assert!(
        e[0].starts_with("/: datatype: expected exactly [{name: a, datatype: int8, shape: [2]}]"),
        "{e:?}"
    );
}

#[test]
fn schema_source_is_asked_once_per_uri_and_only_for_what_is_used() {
    use std::sync::{Arc, Mutex};
    let asked: Arc<Mutex<Vec<String>>> = Arc::default();
    let log = asked.clone();
    set_schema_source(move |uri: &str| {
        log.lock().unwrap().push(uri.to_string());
        match uri {
            "asdf://example.org/source/box-1.0.0" => Some(
                "id: asdf://example.org/source/box-1.0.0\n\
                 type: object\nproperties:\n  side: {$ref: 'length-1.0.0'}\nrequired: [side]"
                    .to_string(),
            ),
            "asdf://example.org/source/length-1.0.0" => {
                Some("type: number\nminimum: 0".to_string())
            }
            "asdf://example.org/source/boom-1.0.0" => panic!("a broken source"),
            _ => None,
        }
    });
    register_tag(
        "asdf://example.org/source-tags/box-1.0.0",
        "asdf://example.org/source/box-1.0.0",
    );
    register_tag(
        "asdf://example.org/source-tags/ghost-1.0.0",
        "asdf://example.org/source/ghost-1.0.0",
    );
    let t = tree(
        "a: !<asdf://example.org/source-tags/box-1.0.0> {side: -2}\n\
         b: !<asdf://example.org/source-tags/box-1.0.0> {side: 3}",
    );
    let e = validate_tree(&t, DEFAULT_STANDARD).unwrap_err();
    assert_eq!(
        e.lines(),
        vec!["/a/side: minimum: expected at least 0, found -2".to_string()]
    );
    // a tag bound to a schema the source does not have: reported, asked once
    let g = tree("g: !<asdf://example.org/source-tags/ghost-1.0.0> {}");
    for _ in 0..2 {
        let e = validate_tree(&g, DEFAULT_STANDARD).unwrap_err();
        assert!(e.to_string().contains("ghost-1.0.0"), "{e}");
    }
    // a source that panics counts as not having the schema
    for _ in 0..2 {
        let e = validate_against("asdf://example.org/source/boom-1.0.0", &Node::int(1));
        assert!(e.is_err());
    }
    let asked = asked.lock().unwrap().clone();
    clear_schema_source();
    assert_eq!(
        asked,
        vec![
            "asdf://example.org/source/box-1.0.0".to_string(),
            "asdf://example.org/source/length-1.0.0".to_string(),
            "asdf://example.org/source/ghost-1.0.0".to_string(),
            "asdf://example.org/source/boom-1.0.0".to_string(),
        ],
        "each URI once, and only the ones a validation used"
    );
    // what the source gave stays registered
    assert!(validate_against("asdf://example.org/source/length-1.0.0", &Node::int(4)).is_ok());
}
