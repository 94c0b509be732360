use super::*;
use crate::yaml::node::{CollectionStyle, ScalarStyle, Style};
use crate::yaml::{Integer, Node, TimeOfDay, Value};

fn p(text: &str) -> Result<Document, YamlError> {
    parse(text.as_bytes(), &YamlLimits::default())
}

fn root(text: &str) -> Node {
    p(text).unwrap().root
}

fn int(v: i128) -> Value {
    Value::Int(Integer::Small(v))
}

#[test]
fn asdf_header_directives_and_root_tag() {
    let doc = p(
        "%YAML 1.1\n%TAG ! tag:stsci.edu:asdf/\n%TAG !ex! asdf://example.org/tags/\n\
         --- !core/asdf-1.1.0\n\
         asdf_library: !core/software-1.0.0 {name: asdf, version: 6.0.0}\n\
         det: !ex!detector-2.1.0 {id: 3}\n\
         v: !<tag:example.org:x-1.0> [1]\n\
         local: !!python/none x\n\
         ...\n",
    )
    .unwrap();
    assert_eq!(doc.version, Some((1, 1)));
    assert_eq!(
        doc.tag_directives,
        vec![
            ("!".to_string(), "tag:stsci.edu:asdf/".to_string()),
            ("!ex!".to_string(), "asdf://example.org/tags/".to_string()),
        ]
    );
    let r = &doc.root;
    assert_eq!(r.tag(), Some("tag:stsci.edu:asdf/core/asdf-1.1.0"));
    let lib = r.get("asdf_library").unwrap();
    assert_eq!(lib.tag(), Some("tag:stsci.edu:asdf/core/software-1.0.0"));
    assert_eq!(lib.get("version").unwrap().as_str(), Some("6.0.0"));
    assert_eq!(lib.style(), Style::Collection(CollectionStyle::Flow));
    assert_eq!(r.style(), Style::Collection(CollectionStyle::Block));
    assert_eq!(
        r.get("det").unwrap().tag(),
        Some("asdf://example.org/tags/detector-2.1.0")
    );
    assert_eq!(r.get("v").unwrap().tag(), Some("tag:example.org:x-1.0"));
    assert_eq!(
        r.get("local").unwrap().tag(),
        Some("tag:yaml.org,2002:python/none")
    );
}

#[test]
fn default_handles_without_directives() {
    let r = root("a: !foo 5\nb: !!omap [x: 1]\n");
    assert_eq!(r.get("a").unwrap().tag(), Some("!foo"));
    assert_eq!(r.get("a").unwrap().as_str(), Some("5"));
    assert_eq!(r.get("b").unwrap().tag(), Some("tag:yaml.org,2002:omap"));
}

#[test]
fn core_tags_choose_type_and_are_dropped() {
    let r = root(
        "a: !!str 5\nb: !!float 1\nc: !!int '7'\nd: !!binary |\n  aGVs\n  bG8=\n\
         e: !!bool 'yes'\nf: !!null x\ng: !!timestamp 2001-1-2\nh: !<tag:yaml.org,2002:str> 5\n\
         i: !!seq [1]\nj: !!map {k: 1}\nk: !!str\n",
    );
    let get = |k: &str| r.get(k).unwrap().clone();
    assert_eq!(get("a").value(), &Value::Str("5".into()));
    assert_eq!(get("a").tag(), None);
    assert_eq!(get("b").value(), &Value::Float(1.0));
    assert_eq!(get("c").value(), &int(7));
    assert_eq!(get("d").value(), &Value::Binary(b"hello".to_vec()));
    assert_eq!(get("e").value(), &Value::Bool(true));
    assert_eq!(get("f").value(), &Value::Null);
    assert!(matches!(get("g").value(), Value::Timestamp(t) if t.month == 1 && t.day == 2));
    assert_eq!(get("h").value(), &Value::Str("5".into()));
    assert_eq!(get("i").tag(), None);
    assert_eq!(get("j").tag(), None);
    assert_eq!(get("k").value(), &Value::Str(String::new()));
    for k in ["a", "b", "c", "d", "e", "f", "g", "h", "i", "j"] {
        assert_eq!(get(k).tag(), None, "{k}");
    }
}

#[test]
fn omap_set_pairs_keep_tags() {
    let r = root("o: !!omap [a: 1, b: 2]\ns: !!set {a, b}\np: !!pairs [a: 1, a: 2]\n");
    let o = r.get("o").unwrap();
    assert_eq!(o.tag(), Some("tag:yaml.org,2002:omap"));
    assert_eq!(o.as_seq().unwrap().len(), 2);
    let s = r.get("s").unwrap();
    assert_eq!(s.tag(), Some("tag:yaml.org,2002:set"));
    assert!(s.get("a").unwrap().is_null());
    assert_eq!(r.get("p").unwrap().tag(), Some("tag:yaml.org,2002:pairs"));
}

#[test]
fn wrong_kind_for_core_tag() {
    for (text, tag) in [
        ("!!str [1]", "tag:yaml.org,2002:str"),
        ("!!map [1]", "tag:yaml.org,2002:map"),
        ("!!seq {a: 1}", "tag:yaml.org,2002:seq"),
        ("!!omap {a: 1}", "tag:yaml.org,2002:omap"),
        ("!!omap [1]", "tag:yaml.org,2002:omap"),
        ("!!set [1]", "tag:yaml.org,2002:set"),
        ("!!map 5", "tag:yaml.org,2002:map"),
    ] {
        match p(text) {
            Err(YamlError::InvalidNode {
                tag: t, line: 1, ..
            }) => assert_eq!(t, tag),
            other => panic!("{text}: {other:?}"),
        }
    }
}

#[test]
fn invalid_scalars_are_errors() {
    let cases = [
        ("a: !!int abc", "tag:yaml.org,2002:int", "abc"),
        ("a: !!float x", "tag:yaml.org,2002:float", "x"),
        ("a: !!bool maybe", "tag:yaml.org,2002:bool", "maybe"),
        ("a: !!binary aGVsbG8", "tag:yaml.org,2002:binary", "aGVsbG8"),
        ("a: !!timestamp 2001", "tag:yaml.org,2002:timestamp", "2001"),
        ("a: 2001-02-30", "tag:yaml.org,2002:timestamp", "2001-02-30"),
        ("a: 0x_", "tag:yaml.org,2002:int", "0x_"),
    ];
    for (text, tag, scalar) in cases {
        assert_eq!(
            p(text).unwrap_err(),
            YamlError::InvalidScalar {
                tag: tag.into(),
                text: scalar.into(),
                line: 1
            },
            "{text}"
        );
    }
}

#[test]
fn unknown_tags_keep_text_and_structure() {
    let r = root("a: !foo 5\nb: !foo [1, 2]\nc: !foo {x: yes}\nd: !foo\n");
    let a = r.get("a").unwrap();
    assert_eq!((a.tag(), a.as_str()), (Some("!foo"), Some("5")));
    let b = r.get("b").unwrap();
    assert_eq!(b.tag(), Some("!foo"));
    assert_eq!(b.as_seq().unwrap()[1].value(), &int(2));
    let c = r.get("c").unwrap();
    assert_eq!(c.get("x").unwrap().as_bool(), Some(true));
    assert_eq!(r.get("d").unwrap().as_str(), Some(""));
}

#[test]
fn non_specific_tag_and_quoting() {
    // libyaml marks `!` scalars plain-implicit, so python asdf resolves them (even quoted).
    let r = root("a: ! 5\nb: ! '5'\nc: '5'\nd: \"yes\"\ne: |\n  5\nf: ! [1]\n");
    assert_eq!(r.get("a").unwrap().value(), &int(5));
    assert_eq!(r.get("b").unwrap().value(), &int(5));
    assert_eq!(r.get("c").unwrap().as_str(), Some("5"));
    assert_eq!(r.get("d").unwrap().as_str(), Some("yes"));
    assert_eq!(r.get("e").unwrap().as_str(), Some("5\n"));
    assert_eq!(r.get("f").unwrap().tag(), None);
    // An empty node with `!` is not plain-implicit: an empty string, not null.
    let r = root(
        "a: !
b:
",
    );
    assert_eq!(r.get("a").unwrap().as_str(), Some(""));
    assert!(r.get("b").unwrap().is_null());
}

#[test]
fn scalar_styles_are_recorded() {
    let r = root("- a\n- 'b'\n- \"c\"\n- |\n  d\n- >\n  e\n");
    let items = r.as_seq().unwrap();
    let styles: Vec<Style> = items.iter().map(Node::style).collect();
    assert_eq!(
        styles,
        vec![
            Style::Scalar(ScalarStyle::Plain),
            Style::Scalar(ScalarStyle::SingleQuoted),
            Style::Scalar(ScalarStyle::DoubleQuoted),
            Style::Scalar(ScalarStyle::Literal),
            Style::Scalar(ScalarStyle::Folded),
        ]
    );
}

#[test]
fn resolution_in_context() {
    let r = root(
        "- yes\n- off\n- ~\n- \n- 017\n- 0x1F\n- 0b101\n- 190:20:30\n- 1_000\n- 1e3\n\
         - 1.0e+3\n- .inf\n- -.inf\n- .nan\n- 123456789012345678901234567890\n\
         - 0xFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFF\n- 2001-12-14t21:59:43.10-05:00\n- 2002-12-14\n",
    );
    let v: Vec<&Value> = r.as_seq().unwrap().iter().map(Node::value).collect();
    assert_eq!(v[0], &Value::Bool(true));
    assert_eq!(v[1], &Value::Bool(false));
    assert_eq!(v[2], &Value::Null);
    assert_eq!(v[3], &Value::Null);
    assert_eq!(v[4], &int(15));
    assert_eq!(v[5], &int(31));
    assert_eq!(v[6], &int(5));
    assert_eq!(v[7], &int(685_230));
    assert_eq!(v[8], &int(1000));
    assert_eq!(v[9], &Value::Str("1e3".into()));
    assert_eq!(v[10], &Value::Float(1000.0));
    assert_eq!(v[11], &Value::Float(f64::INFINITY));
    assert_eq!(v[12], &Value::Float(f64::NEG_INFINITY));
    assert!(matches!(v[13], Value::Float(x) if x.is_nan()));
    assert_eq!(v[14], &int(123_456_789_012_345_678_901_234_567_890));
    assert_eq!(
        v[15],
        &Value::Int(Integer::Big(
            "340282366920938463463374607431768211455".into()
        ))
    );
    match v[16] {
        Value::Timestamp(ts) => {
            assert_eq!(
                ts.time,
                Some(TimeOfDay {
                    hour: 21,
                    minute: 59,
                    second: 43,
                    nanosecond: 100_000_000,
                    utc_offset_seconds: Some(-18_000)
                })
            );
            assert_eq!(
                crate::yaml::timestamp_canonical(ts),
                "2001-12-15T02:59:43.1Z"
            );
        }
        other => panic!("{other:?}"),
    }
    assert!(matches!(v[17], Value::Timestamp(t) if t.time.is_none()));
}

#[test]
fn anchors_share_identity() {
    let r = root("a: &x {k: [1, 2]}\nb: *x\nc: &s hello\nd: *s\n");
    let a = r.get("a").unwrap();
    let b = r.get("b").unwrap();
    assert!(a.ptr_eq(b));
    assert_eq!(a.anchor(), Some("x"));
    assert!(r.get("c").unwrap().ptr_eq(r.get("d").unwrap()));
    assert_eq!(r.get("d").unwrap().anchor(), Some("s"));
}

#[test]
fn alias_errors() {
    assert_eq!(
        p("a: *nope\n").unwrap_err(),
        YamlError::UnknownAlias {
            name: "nope".into(),
            line: 1
        }
    );
    // An alias to a node still being built is a recursive structure: kept by name.
    let doc = p("a: &r\n  b: *r\n").unwrap();
    let inner = doc.root.pointer("/a/b").unwrap();
    assert_eq!(inner.value(), &Value::Recursive("r".into()));
    assert_eq!(doc.root.pointer("/a").unwrap().anchor(), Some("r"));
    let doc = p("&a [*a]").unwrap();
    assert_eq!(
        doc.root.as_seq().unwrap()[0].value(),
        &Value::Recursive("a".into())
    );
    assert_eq!(
        p("[&a 1, &a 2]").unwrap_err(),
        YamlError::DuplicateAnchor {
            name: "a".into(),
            line: 1
        }
    );
}

#[test]
fn billion_laughs_is_stopped() {
    let mut text = String::from("a: &a [x, x, x, x, x, x, x, x, x]\n");
    let names = ["a", "b", "c", "d", "e", "f", "g", "h", "i"];
    for w in names.windows(2) {
        let list = vec![format!("*{}", w[0]); 9].join(", ");
        text.push_str(&format!("{}: &{} [{}]\n", w[1], w[1], list));
    }
    match p(&text) {
        Err(YamlError::AliasBudgetExceeded { limit, .. }) => assert_eq!(limit, 10_000_000),
        other => panic!("{other:?}"),
    }
    // The same document fits a larger budget (sharing keeps it small in memory).
    let small = YamlLimits {
        max_depth: 10,
        max_alias_expansion: 50,
    };
    assert!(parse(b"a: &a [1, 2, 3]\nb: [*a, *a, *a]\n", &small).is_ok());
    assert!(matches!(
        parse(
            b"a: &a [1, 2, 3]\nb: [*a, *a, *a, *a, *a, *a, *a, *a, *a, *a, *a, *a, *a]\n",
            &small
        ),
        Err(YamlError::AliasBudgetExceeded { limit: 50, line: 2 })
    ));
}

#[test]
fn depth_limit() {
    let limits = YamlLimits {
        max_depth: 3,
        ..YamlLimits::default()
    };
    assert!(parse(b"[[[1]]]", &limits).is_ok());
    assert_eq!(
        parse(b"[[[[1]]]]", &limits).unwrap_err(),
        YamlError::DepthExceeded { limit: 3, line: 1 }
    );
    let deep = "[".repeat(5000) + &"]".repeat(5000);
    assert!(matches!(
        p(&deep),
        Err(YamlError::DepthExceeded { limit: 1000, .. })
    ));
}

#[test]
fn merge_keys_like_pyyaml() {
    // Oracle: {'b': 1, 'c': 3, 'a': 1}
    let r = root("{<<: [{a: 1, b: 1}, {b: 2, c: 2}], c: 3}");
    let got: Vec<(String, i64)> = r
        .as_map()
        .unwrap()
        .iter()
        .map(|(k, v)| (k.as_str().unwrap().to_string(), v.as_i64().unwrap()))
        .collect();
    assert_eq!(got, vec![("b".into(), 1), ("c".into(), 3), ("a".into(), 1)]);
    // Oracle: {'a': 0, 'b': 1}
    let r = root("{a: 0, <<: {a: 1, b: 1}}");
    assert_eq!(r.as_map().unwrap().len(), 2);
    assert_eq!(r.get("a").unwrap().as_i64(), Some(0));
    assert_eq!(r.as_map().unwrap()[0].0.as_str(), Some("a"));
    // Anchored base, nested merges, quoted "<<" is an ordinary key.
    let r = root(
        "base: &b {x: 1, y: 2}\nd: {<<: *b, y: 3}\nq: {'<<': 1}\nn: {<<: {<<: {z: 0}, a: 1}}\n",
    );
    let d = r.get("d").unwrap();
    assert_eq!(d.get("x").unwrap().as_i64(), Some(1));
    assert_eq!(d.get("y").unwrap().as_i64(), Some(3));
    assert_eq!(r.get("q").unwrap().get("<<").unwrap().as_i64(), Some(1));
    let n = r.get("n").unwrap();
    assert_eq!(n.get("z").unwrap().as_i64(), Some(0));
    // Explicit !!merge key.
    let r = root("{!!merge x: {a: 1}}");
    assert_eq!(r.get("a").unwrap().as_i64(), Some(1));
    // `<<` and `=` elsewhere are strings tagged with PyYAML's resolved type; `=` as a key is
    // a plain string.
    let r = root("[<<, =, {=: 1}]");
    let items = r.as_seq().unwrap();
    assert_eq!(items[0].as_str(), Some("<<"));
    assert_eq!(items[0].tag(), Some("tag:yaml.org,2002:merge"));
    assert_eq!(items[1].tag(), Some("tag:yaml.org,2002:value"));
    assert_eq!(items[2].get("=").unwrap().as_i64(), Some(1));
    assert_eq!(
        p("{<<: 5}").unwrap_err(),
        YamlError::InvalidMerge { line: 1 }
    );
    assert_eq!(
        p("{<<: [{a: 1}, 5]}").unwrap_err(),
        YamlError::InvalidMerge { line: 1 }
    );
}

#[test]
fn non_string_keys_and_duplicates() {
    let r = root("1: a\ntrue: b\n~: c\n[1, 2]: d\n2.5: e\nx: 1\nx: 2\n");
    let m = r.as_map().unwrap();
    // `true` collides with `1` as in Python: first key kept, last value.
    assert_eq!(m.len(), 5);
    assert_eq!(m[0].0.value(), &int(1));
    assert_eq!(m[0].1.as_str(), Some("b"));
    assert!(m[1].0.is_null());
    assert_eq!(m[2].0.as_seq().unwrap().len(), 2);
    assert_eq!(m[3].0.value(), &Value::Float(2.5));
    assert_eq!(r.get("x").unwrap().as_i64(), Some(2));
}

#[test]
fn crlf_input() {
    let doc = p("%YAML 1.1\r\n--- !core/asdf-1.1.0\r\na: 1\r\nb: |\r\n  x\r\n  y\r\nc: [1,\r\n 2]\r\n...\r\n")
        .unwrap();
    let r = doc.root;
    assert_eq!(r.tag(), Some("!core/asdf-1.1.0"));
    assert_eq!(r.get("a").unwrap().as_i64(), Some(1));
    assert_eq!(r.get("b").unwrap().as_str(), Some("x\ny\n"));
    assert_eq!(r.get("c").unwrap().as_seq().unwrap().len(), 2);
}

#[test]
fn empty_and_multiple_documents() {
    for text in [
        "",
        "# only a comment\n",
        "--- \n...\n",
        "%YAML 1.1\n---\n...\n",
    ] {
        assert!(p(text).unwrap().root.is_null(), "{text:?}");
    }
    assert_eq!(
        p("- a\n---\n- b\n").unwrap_err(),
        YamlError::MultipleDocuments { line: 2 }
    );
}

#[test]
fn syntax_errors_have_positions() {
    match p("a: [1, 2\nb: 3\n") {
        Err(YamlError::Syntax { line, message, .. }) => {
            assert!(line >= 1);
            assert!(!message.is_empty());
        }
        other => panic!("{other:?}"),
    }
    match p("a: b: c\n") {
        Err(YamlError::Syntax {
            line: 1,
            column: 5,
            offset: 4,
            ..
        }) => {}
        other => panic!("{other:?}"),
    }
    match p("a: 1\nb: \u{1}\n") {
        Err(YamlError::Syntax {
            line: 2, offset: 8, ..
        }) => {}
        other => panic!("{other:?}"),
    }
    assert!(matches!(p("!undefined!x 5"), Err(YamlError::Syntax { .. })));
    assert!(matches!(
        p("%YAML 2.0\n--- a\n"),
        Err(YamlError::Syntax { .. })
    ));
    assert_eq!(
        parse(b"a: \xff\n", &YamlLimits::default()).unwrap_err(),
        YamlError::NotUtf8 { offset: 3 }
    );
}

#[test]
fn libyaml_safer_panics_become_errors() {
    // Block scalar at the end without a line break (python asdf: no final newline).
    let r = root("a: |\n  t");
    assert_eq!(r.get("a").unwrap().as_str(), Some("t"));
    assert_eq!(root("|\n  t").as_str(), Some("t"));
    assert_eq!(root("|+\n  t\n\n  u").as_str(), Some("t\n\nu"));
    assert_eq!(
        root("a: |\n  t\n# c").get("a").unwrap().as_str(),
        Some("t\n")
    );
    assert_eq!(root("|\n  t: \n  ").as_str(), Some("t: \n"));
    assert_eq!(root("|+\n  t\n  ").as_str(), Some("t\n"));
    assert!(root("  \t ").is_null());
    // A tag followed by `,` in flow context panics inside libyaml-safer 0.3.
    assert!(matches!(p("[!foo, 1]"), Err(YamlError::Syntax { .. })));
}

mod prop {
    use super::*;
    use proptest::prelude::*;

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(2000))]

        #[test]
        fn random_bytes_never_panic(bytes in proptest::collection::vec(any::<u8>(), 0..200)) {
            let _ = parse(&bytes, &YamlLimits::default());
        }

        #[test]
        fn yamlish_text_never_panics(
            text in "[-a-z0-9 :,\\[\\]{}&*!<>|'\"#?%.~+\n\t]{0,120}"
        ) {
            let _ = parse(text.as_bytes(), &YamlLimits::default());
        }

        #[test]
        fn resolve_never_panics(text in "\\PC{0,40}") {
            let _ = crate::yaml::resolve_plain(&text);
        }

        #[test]
        fn numberish_never_panics(text in "[-+0-9._:xXbeE a-fT]{0,30}") {
            let _ = crate::yaml::resolve_plain(&text);
            let _ = parse(format!("a: {text}\nb: !!int '{text}'\nc: !!float '{text}'\nd: !!timestamp '{text}'\n").as_bytes(), &YamlLimits::default());
        }
    }
}

/// A 3 MB tree of 200 000 scalar leaves; run with
/// `cargo test --release -p asdfrs-core --features dev-tools --lib yaml::parse::tests::parse_speed -- --nocapture`.
#[test]
#[cfg(feature = "dev-tools")]
fn parse_speed() {
    let mut text =
        String::from("%YAML 1.1\n%TAG ! tag:stsci.edu:asdf/\n--- !core/asdf-1.1.0\nitems:\n");
    let mut i = 0u64;
    while text.len() < 3_000_000 {
        text.push_str(&format!(
            "- name: object_{i}\n  id: {i}\n  value: {}.25e+3\n  ok: true\n  \
             unit: !unit/unit-1.0.0 m\n  pos: [{}, {}.5, -3]\n  note: 'quoted text here'\n",
            i % 977,
            i % 13,
            i % 7
        ));
        i += 1;
    }
    text.push_str("...\n");
    let mut leaves = 0;
    // First parse in a fresh process (page faults of new heap memory included), then warm.
    let mut times = Vec::new();
    for _ in 0..5 {
        let t = std::time::Instant::now();
        let doc = parse(text.as_bytes(), &YamlLimits::default()).unwrap();
        times.push(t.elapsed());
        drop(doc);
    }
    eprintln!("parse times: {times:?}");
    let t = std::time::Instant::now();
    let slow = parse_libyaml(text.as_bytes(), &YamlLimits::default()).unwrap();
    eprintln!("libyaml path: {:?}", t.elapsed());
    drop(slow);
    let start = std::time::Instant::now();
    let doc = parse(text.as_bytes(), &YamlLimits::default()).unwrap();
    let parse_time = start.elapsed();
    doc.root.walk(|_, n| {
        if !matches!(n.value(), Value::Seq(_) | Value::Map(_)) {
            leaves += 1;
        }
    });
    let total = start.elapsed();
    eprintln!(
        "{} bytes, {leaves} leaves: parse {parse_time:?}, parse+walk {total:?}",
        text.len()
    );
    assert!(leaves > 150_000);
}

#[test]
fn repeated_plain_scalars_are_shared_and_never_written_as_aliases() {
    let text = "a: {k: float64, n: 7}\nb: {k: float64, n: 7}\nd: {k: float64, n: 7}\n\
                c: [float64, 'float64']\n";
    let doc = root(text);
    let (a, b, d) = (
        doc.get("a").unwrap(),
        doc.get("b").unwrap(),
        doc.get("d").unwrap(),
    );
    let (ka, kb, kd) = (
        &a.as_map().unwrap()[0],
        &b.as_map().unwrap()[0],
        &d.as_map().unwrap()[0],
    );
    // a text is admitted to the cache on its second occurrence: from then on the key `k`,
    // the value `float64` and the value `7` are one node each
    assert!(!ka.0.ptr_eq(&kb.0));
    assert!(kb.0.ptr_eq(&kd.0));
    assert!(kb.1.ptr_eq(&kd.1));
    assert!(b.get("n").unwrap().ptr_eq(d.get("n").unwrap()));
    // a quoted scalar is built on its own (not plain), but is equal
    let c = doc.get("c").unwrap().as_seq().unwrap();
    assert!(!c[0].ptr_eq(&c[1]));
    assert_eq!(c[0], c[1]);
    // sharing does not show when the tree is written
    let out = crate::yaml::emit(&doc, &crate::yaml::EmitOptions::default()).unwrap();
    assert!(!out.contains("&id") && !out.contains("*id"), "{out}");
    assert_eq!(root(&out), doc);
}

#[test]
fn duplicate_keys_are_merged_after_records_with_the_same_shared_keys() {
    // The records share their key nodes (scalar cache) and are remembered as free of
    // duplicates; later mappings built from the same nodes must still be checked.
    let mut text = String::new();
    for i in 0..6 {
        text.push_str(&format!("r{i}: {{a: {i}, b: x, c: y}}\n"));
    }
    text.push_str("d1: {a: 1, b: 2, a: 3}\n");
    text.push_str("d2: {a: 1, b: 2, c: 3, a: 4}\n");
    text.push_str("d3: {b: 1, a: 2, c: 3}\n");
    let doc = root(&text);
    let r5 = doc.get("r5").unwrap().as_map().unwrap();
    let r4 = doc.get("r4").unwrap().as_map().unwrap();
    assert!(r5.iter().zip(r4).all(|(x, y)| x.0.ptr_eq(&y.0)));
    let keys = |name: &str| -> Vec<(String, i64)> {
        doc.get(name)
            .unwrap()
            .as_map()
            .unwrap()
            .iter()
            .map(|(k, v)| (k.as_str().unwrap().to_string(), v.as_i64().unwrap()))
            .collect()
    };
    let kv = |v: &[(&str, i64)]| -> Vec<(String, i64)> {
        v.iter().map(|(k, n)| (k.to_string(), *n)).collect()
    };
    assert_eq!(keys("d1"), kv(&[("a", 3), ("b", 2)]));
    assert_eq!(keys("d2"), kv(&[("a", 4), ("b", 2), ("c", 3)]));
    assert_eq!(keys("d3"), kv(&[("b", 1), ("a", 2), ("c", 3)]));
}

#[test]
fn tag_before_flow_comma_finds_the_inputs_libyaml_safer_panics_on() {
    for text in [
        "[!foo, 1]\n",
        "a: [!t, x]\n",
        "[&a !t, 1]\n",
        "{a: !t, b: 1}\n",
        "[!<tag:x>, 1]\n",
        "- [1, [!a!b, 2]]\n",
        // found by fuzzing: quotes inside plain scalars (`The "`, `uint17'f`) open nothing
        "{a: The   \"   , 'x',['1.', uint17'f,!core/asdf.nan, 1]\n",
        "[a\n 'b, !t, c]\n",
        "[(nan-'1.5j), !t, 2]\n",
        "#c\r[!t, 2]\n",
    ] {
        let at = super::tag_before_flow_comma(text.as_bytes());
        assert_eq!(
            at,
            text.find(",!").map(|i| i + 1).or(text.find('!')),
            "{text:?}"
        );
        // the parser itself fails on them (a caught panic, or the guard's error)
        assert!(
            matches!(
                parse_libyaml(text.as_bytes(), &YamlLimits::default()),
                Err(YamlError::Syntax { .. })
            ),
            "{text:?}"
        );
    }
    for text in [
        "[!foo , 1]\n",
        "key: !foo,bar\n",
        "a: '[!a, b]'\n",
        "a: \"[!a, b] \\\" [!c, d]\"\n",
        "a: 1 # [!a, b]\n",
        "- !t [1, 2]\n",
    ] {
        assert_eq!(
            super::tag_before_flow_comma(text.as_bytes()),
            None,
            "{text:?}"
        );
    }
}

proptest::proptest! {
    #![proptest_config(proptest::prelude::ProptestConfig::with_cases(10000))]

    /// Every text on which libyaml-safer panics (a caught panic becomes this message) is one
    /// the guard reports, so builds where panics abort never reach the panic.
    #[test]
    fn the_guard_covers_every_libyaml_safer_panic(text in "[\\[\\]{}!,a &'\"#:<>\\n-]{1,12}") {
        let out = std::panic::catch_unwind(|| parse_libyaml(text.as_bytes(), &YamlLimits::default()));
        let panicked = match &out {
            Err(_) => true,
            Ok(Err(YamlError::Syntax { message, .. })) => message.starts_with("yaml parser failure"),
            Ok(_) => false,
        };
        if panicked && !cfg!(panic = "abort") {
            proptest::prop_assert!(super::tag_before_flow_comma(text.as_bytes()).is_some(), "{:?}", text);
        }
    }
}

#[test]
fn keys_of_every_record_stay_shared_among_many_one_off_values() {
    // 100 keys per record, values mostly seen once (numbers, names) or a few times (floats
    // that recur across nearby records): from the third record on, every key is the node of
    // the record before, so the key-list memo and the sharing hold for the whole catalog.
    let mut text = String::from("catalog:\n");
    for i in 0..60 {
        text.push_str(&format!("  obj{i:05}:\n"));
        for j in 0..100 {
            let v = match j % 4 {
                0 => format!("{}", i * 100 + j),
                1 => format!("{}.25", i + j),
                2 => format!("name_{i}_{j}"),
                _ => "true".to_string(),
            };
            text.push_str(&format!("    k{j:03}: {v}\n"));
        }
    }
    let doc = root(&text);
    let records: Vec<&Node> = doc
        .get("catalog")
        .unwrap()
        .as_map()
        .unwrap()
        .iter()
        .map(|(_, v)| v)
        .collect();
    for pair in records.windows(2).skip(1) {
        let (a, b) = (pair[0].as_map().unwrap(), pair[1].as_map().unwrap());
        let unshared = a.iter().zip(b).filter(|(x, y)| !x.0.ptr_eq(&y.0)).count();
        assert_eq!(unshared, 0);
    }
}
