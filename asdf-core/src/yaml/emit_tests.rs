use proptest::prelude::*;

use super::*;
use crate::yaml::{parse, CollectionStyle, NodeData, TimeOfDay, YamlLimits};

fn back(text: &str) -> Node {
    parse(text.as_bytes(), &YamlLimits::default())
        .unwrap_or_else(|e| panic!("{e}\n{text}"))
        .root
}

fn opts() -> EmitOptions {
    EmitOptions::default()
}

fn int(v: i128) -> Node {
    Node::new(Value::Int(Integer::Small(v)))
}

fn float(v: f64) -> Node {
    Node::new(Value::Float(v))
}

fn styled(value: Value, style: Style) -> Node {
    Node::from(NodeData {
        tag: None,
        value,
        style,
        anchor: None,
    })
}

/// Content equality with floats compared bit for bit (NaN equal to NaN, -0.0 not 0.0).
fn same(a: &Node, b: &Node) -> bool {
    if a.tag() != b.tag() {
        return false;
    }
    match (a.value(), b.value()) {
        (Value::Float(x), Value::Float(y)) => {
            x.to_bits() == y.to_bits() || x.is_nan() && y.is_nan()
        }
        (Value::Seq(x), Value::Seq(y)) => {
            x.len() == y.len() && x.iter().zip(y).all(|(p, q)| same(p, q))
        }
        (Value::Map(x), Value::Map(y)) => {
            x.len() == y.len()
                && x.iter()
                    .zip(y)
                    .all(|((k1, v1), (k2, v2))| same(k1, k2) && same(v1, v2))
        }
        (x, y) => x == y,
    }
}

/// `n` with an anchor name, as a scalar read from `&name value` has: shared scalars are
/// anchored only when they carry one.
fn anchored(n: Node, name: &str) -> Node {
    let mut d = n.data().clone();
    d.anchor = Some(Box::new(name.to_string()));
    Node::from(d)
}

/// The identity pattern: for each node in walk order, the index of its first occurrence.
fn sharing(n: &Node) -> Vec<usize> {
    let mut ids: Vec<usize> = Vec::new();
    let mut pattern = Vec::new();
    // Keys are not visited by `walk`; include them by hand.
    fn visit(n: &Node, ids: &mut Vec<usize>, pattern: &mut Vec<usize>) {
        // Identity counts for collections and anchored scalars only (see `emit`).
        if n.anchor().is_none() && !matches!(n.value(), Value::Seq(_) | Value::Map(_)) {
            pattern.push(usize::MAX);
            return;
        }
        let id = n.id();
        let first = ids.iter().position(|&i| i == id);
        pattern.push(first.unwrap_or(ids.len()));
        ids.push(id);
        if first.is_some() {
            return;
        }
        match n.value() {
            Value::Seq(items) => items.iter().for_each(|i| visit(i, ids, pattern)),
            Value::Map(pairs) => pairs.iter().for_each(|(k, v)| {
                visit(k, ids, pattern);
                visit(v, ids, pattern);
            }),
            _ => {}
        }
    }
    visit(n, &mut ids, &mut pattern);
    pattern
}

/// Emits, parses back, checks content and sharing; returns the text.
fn rt_with(root: &Node, o: &EmitOptions) -> String {
    let text = emit(root, o).unwrap();
    let got = back(&text);
    assert!(same(&got, root), "{root:?}\n{got:?}\n{text}");
    assert_eq!(sharing(&got), sharing(root), "{text}");
    text
}

fn rt(root: &Node) -> String {
    rt_with(root, &opts())
}

/// The body between `--- ` and `\n...\n` for an untagged root.
fn body(text: &str) -> &str {
    let start = text.find("---").unwrap() + 3;
    let t = &text[start..];
    t.strip_suffix("\n...\n").unwrap()
}

#[test]
fn document_frame_and_asdf_root() {
    let root = Node::tagged(
        "tag:stsci.edu:asdf/core/asdf-1.1.0",
        Value::Map(vec![
            (Node::str("a"), int(1)),
            (
                Node::str("lib"),
                Node::tagged(
                    "tag:stsci.edu:asdf/core/software-1.0.0",
                    Value::Map(vec![(Node::str("name"), Node::str("asdf"))]),
                ),
            ),
        ]),
    );
    let text = rt(&root);
    assert_eq!(
        text,
        "%YAML 1.1\n%TAG ! tag:stsci.edu:asdf/\n--- !core/asdf-1.1.0\na: 1\n\
         lib: !core/software-1.0.0\n  name: asdf\n...\n"
    );
    // Untagged roots.
    assert_eq!(body(&rt(&Node::map(vec![("a", int(1))]))), "\na: 1");
    assert_eq!(body(&rt(&int(5))), " 5");
    assert_eq!(body(&rt(&Node::str("yes"))), " 'yes'");
    assert_eq!(body(&rt(&Node::seq(vec![]))), " []");
    assert_eq!(body(&rt(&Node::map(Vec::<(&str, Node)>::new()))), " {}");
    assert_eq!(
        body(&rt(&Node::seq(vec![Node::map(vec![("a", int(1))])]))),
        "\n- a: 1"
    );
}

const SPECIAL: &[&str] = &[
    "",
    "yes",
    "Yes",
    "YES",
    "no",
    "No",
    "on",
    "On",
    "off",
    "OFF",
    "true",
    "True",
    "false",
    "FALSE",
    "y",
    "n",
    "null",
    "Null",
    "NULL",
    "~",
    "017",
    "0o17",
    "08",
    "0x1F",
    "0b101",
    "1_000",
    "1__2",
    "_1",
    "1:30",
    "190:20:30",
    "1:60",
    "1.5",
    ".5",
    "1.",
    "+1",
    "-1",
    "1e3",
    "1.0e+3",
    ".inf",
    "-.inf",
    "+.inf",
    ".nan",
    ".NaN",
    "inf",
    "nan",
    "2024-01-01",
    "2001-12-14 21:59:43.10 -5",
    "2001-12-14t21:59:43.10-05:00",
    "2001-02-30",
    "2001-1-1",
    "0x_",
    "0b__",
    "<<",
    "=",
    "<",
    "-",
    "--",
    "---",
    "---a",
    "...",
    "- a",
    "-a",
    "a: b",
    "a:",
    "a:b",
    "a #b",
    "a#b",
    "#a",
    "[a]",
    "a]",
    "{a}",
    "a,b",
    "a, b",
    "*a",
    "&a",
    "!a",
    "|a",
    ">a",
    "'a",
    "\"a",
    "%a",
    "@a",
    "`a",
    "?a",
    "? a",
    "?",
    ":a",
    ": a",
    ":",
    " a",
    "a ",
    " ",
    "  ",
    "\ta",
    "a\tb",
    "a\t",
    "a\nb",
    "a\n",
    "\n",
    "\n\n",
    "a\n\n",
    "a\n\nb",
    " a\nb",
    "\na",
    "a \nb",
    "a\n b",
    "a\n ",
    "a\r\nb",
    "\r",
    "a\u{85}b",
    "\u{2028}",
    "a\u{2029}b",
    "\u{feff}x",
    "é",
    "héllo wörld",
    "😀 astral 𝄞",
    "\x01",
    "\x00",
    "\x7f",
    "\u{9f}",
    "\u{a0}",
    "\u{fffe}",
    "\u{ffff}",
    "\u{e000}",
    "it's",
    "'",
    "''",
    "\\",
    "a\\nb",
    "\"",
    "a\"b",
    "x: 'y'",
    "a # b",
    "tag:stsci.edu:asdf/core/x",
    "http://x.org/a?b=c#d",
    "0",
    "-0",
    "00",
    "0.0",
    "-0.0",
    "1:2.3",
    "12:30:00",
    "1 2",
    "1,2",
    "[",
    "]",
    "{",
    "}",
];

#[test]
fn special_strings_round_trip_everywhere() {
    for &s in SPECIAL {
        let n = Node::str(s);
        // Block value, flow item, key, root, explicit flow mapping, nested seq item.
        let root = Node::map(vec![
            ("v", n.clone()),
            ("f", Node::seq(vec![n.clone(), int(1)])),
            (
                "m",
                styled(
                    Value::Map(vec![(n.clone(), n.clone()), (Node::str("k"), n.clone())]),
                    Style::Collection(CollectionStyle::Flow),
                ),
            ),
            (
                "s",
                Node::seq(vec![
                    Node::seq(vec![n.clone()]),
                    Node::map(vec![("x", n.clone())]),
                ]),
            ),
        ]);
        let root = Node::new(Value::Map({
            let mut p = root.as_map().unwrap().to_vec();
            p.push((n.clone(), Node::str("as key")));
            p
        }));
        // Fresh copies so no anchors are involved.
        let text = emit(&root, &opts()).unwrap();
        let got = back(&text);
        assert!(same(&got, &root), "{s:?}\n{text}");
        rt(&Node::str(s));
    }
}

#[test]
fn quoting_choices() {
    let e = |s: &str| body(&rt(&Node::str(s))).to_string();
    assert_eq!(e("plain text"), " plain text");
    assert_eq!(e("yes"), " 'yes'");
    assert_eq!(e("017"), " '017'");
    assert_eq!(e("1:30"), " '1:30'");
    assert_eq!(e("2024-01-01"), " '2024-01-01'");
    assert_eq!(e("null"), " 'null'");
    assert_eq!(e(""), " ''");
    assert_eq!(e("1_000"), " '1_000'");
    assert_eq!(e(".5"), " '.5'");
    assert_eq!(e("~"), " '~'");
    assert_eq!(e("<<"), " '<<'");
    assert_eq!(e("1e3"), " 1e3");
    assert_eq!(e("it's"), " it's");
    assert_eq!(e("'a'"), " '''a'''");
    assert_eq!(e(" a"), " ' a'");
    assert_eq!(e("a: b"), " 'a: b'");
    assert_eq!(e("a:b"), " a:b");
    assert_eq!(e("a #b"), " 'a #b'");
    assert_eq!(e("a#b"), " a#b");
    assert_eq!(e("-a"), " -a");
    assert_eq!(e("- a"), " '- a'");
    assert_eq!(e("a\tb"), " \"a\\tb\"");
    assert_eq!(
        e("a\x01b\u{85}\u{2028}\u{feff}\x7f"),
        " \"a\\x01b\\N\\L\\uFEFF\\x7F\""
    );
    assert_eq!(e("é 😀"), " é 😀");
    assert_eq!(e("a\"b\\"), " a\"b\\");
    assert_eq!(e("\"a\\"), " '\"a\\'");
    assert_eq!(e("a\r\nb"), " \"a\\r\\nb\"");
    // In flow context more characters need quotes.
    let f = Node::map(vec![(
        "f",
        Node::seq(vec![Node::str("a:b"), Node::str("x,y"), Node::str("c")]),
    )]);
    assert_eq!(body(&rt(&f)), "\nf: ['a:b', 'x,y', c]");
}

#[test]
fn multi_line_strings_use_exact_literal_blocks() {
    let cases: &[(&str, &str)] = &[
        ("a\nb", "|-\n  a\n  b"),
        ("a\nb\n", "|\n  a\n  b"),
        ("a\nb\n\n", "|+\n  a\n  b\n"),
        ("\n", "|2+\n"),
        ("\n\n", "|2+\n\n"),
        ("\na", "|2-\n\n  a"),
        (" a\nb", "|2-\n   a\n  b"),
        ("a\n\nb", "|-\n  a\n\n  b"),
        ("a\n b\n", "|\n  a\n   b"),
    ];
    for &(s, lit) in cases {
        let root = Node::map(vec![("k", Node::str(s)), ("z", int(1))]);
        let text = rt(&root);
        assert_eq!(body(&text), format!("\nk: {lit}\nz: 1"), "{s:?}");
        // At the end of the document, in sequences, nested.
        rt(&Node::map(vec![("k", Node::str(s))]));
        rt(&Node::seq(vec![Node::str(s), Node::str(s)]));
        rt(&Node::seq(vec![Node::seq(vec![
            Node::str(s),
            Node::map(vec![("q", Node::str(s))]),
        ])]));
        rt(&Node::map(vec![(
            "k",
            Node::map(vec![("l", Node::seq(vec![Node::str(s)]))]),
        )]));
        rt(&Node::str(s));
    }
    // Trailing spaces before a break cannot be a literal block: double quotes.
    assert_eq!(body(&rt(&Node::str("a \nb"))), " \"a \\nb\"");
    assert_eq!(body(&rt(&Node::str("a\nb "))), " \"a\\nb \"");
    assert_eq!(body(&rt(&Node::str("a\tb\nc"))), " \"a\\tb\\nc\"");
}

#[test]
fn style_hints_are_kept_when_valid() {
    let s = |text: &str, st: ScalarStyle| styled(Value::Str(text.into()), Style::Scalar(st));
    let root = Node::map(vec![
        ("a", s("abc", ScalarStyle::SingleQuoted)),
        ("b", s("abc", ScalarStyle::DoubleQuoted)),
        ("c", s("abc", ScalarStyle::Literal)),
        ("d", s("a\nb\n", ScalarStyle::Folded)),
        ("e", s("yes", ScalarStyle::Plain)),
        ("f", s("a\tb", ScalarStyle::SingleQuoted)),
        ("g", s("a \nb", ScalarStyle::Literal)),
    ]);
    assert_eq!(
        body(&rt(&root)),
        "\na: 'abc'\nb: \"abc\"\nc: |-\n  abc\nd: |\n  a\n  b\ne: 'yes'\nf: \"a\\tb\"\ng: \"a \\nb\""
    );
    // A literal hint is ignored inside flow collections and keys.
    let f = styled(
        Value::Seq(vec![s("a\nb", ScalarStyle::Literal)]),
        Style::Collection(CollectionStyle::Flow),
    );
    assert_eq!(body(&rt(&f)), " [\"a\\nb\"]");
    let k = Node::new(Value::Map(vec![(s("a\nb", ScalarStyle::Literal), int(1))]));
    assert_eq!(body(&rt(&k)), "\n\"a\\nb\": 1");
}

#[test]
fn collection_styles() {
    let ints = || vec![int(2), int(3)];
    let root = Node::map(vec![
        ("shape", Node::seq(ints())),
        (
            "block",
            styled(
                Value::Seq(ints()),
                Style::Collection(CollectionStyle::Block),
            ),
        ),
        (
            "flowmap",
            styled(
                Value::Map(vec![
                    (Node::str("a"), int(1)),
                    (Node::str("b"), Node::seq(ints())),
                ]),
                Style::Collection(CollectionStyle::Flow),
            ),
        ),
        (
            "nested",
            Node::seq(vec![Node::seq(ints()), Node::seq(vec![])]),
        ),
        (
            "m",
            Node::map(vec![
                ("e", Node::map(Vec::<(&str, Node)>::new())),
                ("l", Node::seq(vec![Node::map(Vec::<(&str, Node)>::new())])),
            ]),
        ),
        (
            "deep",
            styled(
                Value::Seq(vec![Node::map(vec![(
                    "a",
                    Node::seq(vec![Node::map(vec![("b", Node::seq(vec![]))])]),
                )])]),
                Style::Collection(CollectionStyle::Flow),
            ),
        ),
    ]);
    assert_eq!(
        body(&rt(&root)),
        "\nshape: [2, 3]\nblock:\n- 2\n- 3\nflowmap: {a: 1, b: [2, 3]}\nnested:\n- [2, 3]\n- []\n\
         m:\n  e: {}\n  l:\n  - {}\ndeep: [{a: [{b: []}]}]"
    );
    // flow_seq_max_items bounds the automatic flow style.
    let o = EmitOptions {
        flow_seq_max_items: 1,
        ..opts()
    };
    assert_eq!(
        body(&rt_with(
            &Node::map(vec![
                ("s", Node::seq(ints())),
                ("t", Node::seq(vec![int(1)]))
            ]),
            &o
        )),
        "\ns:\n- 2\n- 3\nt: [1]"
    );
}

#[test]
fn long_flow_sequences_wrap() {
    let root = Node::map(vec![("l", Node::seq((0..60).map(int)))]);
    let text = rt(&root);
    for line in text.lines() {
        assert!(line.len() <= 84, "{line:?}");
    }
    assert!(text.contains("\n  "), "{text}");
    let o = EmitOptions { width: 0, ..opts() };
    let text = rt_with(&root, &o);
    assert_eq!(text.lines().count(), 5, "{text}");
    // Wrapped flow mappings and nested flow sequences still read back.
    let pairs = (0..40)
        .map(|i| {
            (
                Node::str(format!("key{i}")),
                Node::seq(vec![int(i), Node::str("a b")]),
            )
        })
        .collect();
    rt(&styled(
        Value::Map(pairs),
        Style::Collection(CollectionStyle::Flow),
    ));
}

#[test]
fn integers_any_size() {
    let big = |s: &str| Node::new(Value::Int(Integer::Big(s.into())));
    let root = Node::seq(vec![
        int(0),
        int(-1),
        int(i64::MAX as i128),
        int(i64::MIN as i128),
        int(u64::MAX as i128),
        int(i128::MAX),
        int(i128::MIN + 1),
        big("170141183460469231731687303715884105728"),
        big("-1234567890123456789012345678901234567890"),
    ]);
    assert_eq!(
        body(&rt(&root)),
        " [0, -1, 9223372036854775807, -9223372036854775808, 18446744073709551615, \
         170141183460469231731687303715884105727,\n  -170141183460469231731687303715884105727, \
         170141183460469231731687303715884105728,\n  -1234567890123456789012345678901234567890]"
    );
    for bad in ["", "-", "017", "1.5", "12a", "--1", "+1"] {
        assert_eq!(
            emit(&Node::map(vec![("x", Node::seq(vec![big(bad)]))]), &opts()),
            Err(EmitError::InvalidInteger {
                text: bad.into(),
                path: "/x/0".into()
            })
        );
    }
}

#[test]
fn floats_resolve_back_exactly() {
    let cases: &[(f64, &str)] = &[
        (0.0, "0.0"),
        (-0.0, "-0.0"),
        (1.0, "1.0"),
        (1.5, "1.5"),
        (0.1, "0.1"),
        (100.0, "100.0"),
        (1e15, "1000000000000000.0"),
        (1e16, "1.0e+16"),
        (1.5e16, "1.5e+16"),
        (1e-4, "0.0001"),
        (1.5e-5, "1.5e-05"),
        (1e-5, "1.0e-05"),
        (-1e-5, "-1.0e-05"),
        (5e-324, "5.00e-324"),
        (f64::MAX, "1.7976931348623157e+308"),
        (f64::MIN_POSITIVE, "2.2250738585072014e-308"),
        (-123.456, "-123.456"),
        (f64::INFINITY, ".inf"),
        (f64::NEG_INFINITY, "-.inf"),
        (f64::NAN, ".nan"),
        (std::f64::consts::PI, "3.141592653589793"),
        (1e100, "1.0e+100"),
        (1e-100, "1.00e-100"),
        (-1e-100, "-1.0e-100"),
        (1.25e-100, "1.25e-100"),
    ];
    for &(x, want) in cases {
        let text = rt(&float(x));
        assert_eq!(body(&text), format!(" {want}"), "{x:e}");
    }
    rt(&Node::seq(cases.iter().map(|&(x, _)| float(x))));
    // Short decimals take the quick path; others the general one.
    let mut out = String::new();
    for x in [0.37, -12.5, 3.0, 0.0001, 123456.789] {
        assert!(crate::floats::push_short_float(&mut out, x), "{x}");
    }
    assert_eq!(out, "0.37-12.53.00.0001123456.789");
    for x in [0.0, 1e16, 1e-5, std::f64::consts::PI, f64::NAN] {
        assert!(!crate::floats::push_short_float(&mut out, x), "{x}");
    }
}

fn ts(text: &str) -> Box<Timestamp> {
    match crate::yaml::resolve_plain(text) {
        Value::Timestamp(t) => t,
        other => panic!("{other:?}"),
    }
}

#[test]
fn timestamps() {
    let t1 = anchored(
        Node::new(Value::Timestamp(ts("2001-12-14 21:59:43.10 -5"))),
        "t1",
    );
    let t2 = Node::new(Value::Timestamp(ts("2002-12-14")));
    let t3 = Node::new(Value::Timestamp(ts("2001-12-14t21:59:43.10-05:00")));
    let root = Node::map(vec![
        ("a", t1.clone()),
        ("b", t2.clone()),
        ("c", t3.clone()),
        ("f", Node::seq(vec![t1.clone(), t2.clone()])),
    ]);
    // Sharing creates anchors; use fresh nodes for a plain look.
    let text = emit(&root, &opts()).unwrap();
    assert!(
        text.contains("a: &id001 2001-12-14 21:59:43.10 -5\n"),
        "{text}"
    );
    rt(&root);
    let fresh = Node::map(vec![
        (
            "a",
            Node::new(Value::Timestamp(ts("2001-12-14 21:59:43.10 -5"))),
        ),
        (
            "f",
            Node::seq(vec![Node::new(Value::Timestamp(ts(
                "2001-12-14 21:59:43.10 -5",
            )))]),
        ),
    ]);
    assert_eq!(
        body(&rt(&fresh)),
        "\na: 2001-12-14 21:59:43.10 -5\nf: [!!timestamp '2001-12-14 21:59:43.10 -5']"
    );
    // A timestamp whose text does not match its fields is written canonically.
    let odd = Timestamp {
        text: "not a time".into(),
        year: 2020,
        month: 1,
        day: 2,
        time: Some(TimeOfDay {
            hour: 3,
            minute: 4,
            second: 5,
            nanosecond: 600_000_000,
            utc_offset_seconds: None,
        }),
    };
    let text = emit(&Node::new(Value::Timestamp(Box::new(odd))), &opts()).unwrap();
    assert_eq!(body(&text), " 2020-01-02T03:04:05.6Z");
    assert!(matches!(back(&text).value(), Value::Timestamp(t) if t.year == 2020 && t.day == 2));
}

#[test]
fn binary_blocks() {
    let data: Vec<u8> = (0..=255u8).collect();
    let root = Node::map(vec![
        ("b", Node::new(Value::Binary(data.clone()))),
        ("e", Node::new(Value::Binary(vec![]))),
        ("s", Node::new(Value::Binary(b"abc".to_vec()))),
        (
            "f",
            Node::seq(vec![Node::new(Value::Binary(b"ab".to_vec()))]),
        ),
    ]);
    let text = rt(&root);
    assert!(text.contains("s: !!binary |\n  YWJj\n"), "{text}");
    assert!(text.contains("e: !!binary \"\"\n"), "{text}");
    assert!(text.contains("f: [!!binary \"YWI=\"]\n"), "{text}");
    let lines: Vec<&str> = text.lines().skip_while(|l| !l.starts_with("b:")).collect();
    assert_eq!(lines[1].len(), 2 + 76);
    // Binary keys and roots.
    rt(&Node::new(Value::Map(vec![(
        Node::new(Value::Binary(b"k".to_vec())),
        int(1),
    )])));
    rt(&Node::new(Value::Binary(data)));
}

#[test]
fn tags_with_several_handles() {
    let o = EmitOptions {
        tag_handles: vec![
            ("!".into(), "tag:stsci.edu:asdf/".into()),
            ("!ex!".into(), "asdf://example.org/tags/".into()),
            ("!un!".into(), "asdf://unused.org/".into()),
            ("!long!".into(), "asdf://example.org/tags/long/".into()),
        ],
        ..opts()
    };
    let root = Node::tagged(
        "tag:stsci.edu:asdf/core/asdf-1.1.0",
        Value::Map(vec![
            (
                Node::str("d"),
                Node::tagged("asdf://example.org/tags/detector-2.1.0", Value::Map(vec![])),
            ),
            (
                Node::str("l"),
                Node::tagged(
                    "asdf://example.org/tags/long/x-1.0.0",
                    Value::Seq(vec![int(1)]),
                ),
            ),
            (
                Node::str("v"),
                Node::tagged("tag:example.org:x-1.0", Value::Str("5".into())),
            ),
            (
                Node::str("o"),
                Node::tagged(
                    "tag:yaml.org,2002:omap",
                    Value::Seq(vec![Node::map(vec![("a", int(1))])]),
                ),
            ),
            (
                Node::str("u"),
                Node::tagged("tag:stsci.edu:asdf/unit/unit-1.0.0", Value::Str("m".into())),
            ),
            (
                Node::str("q"),
                Node::tagged("tag:stsci.edu:asdf/a b!c%", Value::Str("".into())),
            ),
            (
                Node::str("loc"),
                Node::tagged("!local", Value::Str("x y".into())),
            ),
            (
                Node::str("p"),
                Node::tagged("tag:stsci.edu:asdf/", Value::Str("yes".into())),
            ),
            (
                Node::str("w"),
                Node::tagged("weird uri,[]%", Value::Seq(vec![])),
            ),
        ]),
    );
    let text = rt_with(&root, &o);
    assert_eq!(
        text,
        "%YAML 1.1\n%TAG ! tag:stsci.edu:asdf/\n%TAG !ex! asdf://example.org/tags/\n\
         %TAG !long! asdf://example.org/tags/long/\n--- !core/asdf-1.1.0\n\
         d: !ex!detector-2.1.0 {}\nl: !long!x-1.0.0 [1]\nv: !<tag:example.org:x-1.0> 5\n\
         o: !!omap\n- a: 1\nu: !unit/unit-1.0.0 m\nq: !a%20b%21c%25 ''\nloc: !<!local> x y\n\
         p: !<tag:stsci.edu:asdf/> yes\nw: !<weird%20uri,[]%25> []\n...\n"
    );
    // Only the ASDF handle by default, even when unused.
    let text = rt(&int(1));
    assert!(text.starts_with("%YAML 1.1\n%TAG ! tag:stsci.edu:asdf/\n--- 1\n"));
}

#[test]
fn tag_errors() {
    for bad in ["", "!", "tag:yaml.org,2002:str", "tag:yaml.org,2002:int"] {
        let root = Node::map(vec![(
            "a",
            Node::seq(vec![Node::tagged(bad, Value::Str("x".into()))]),
        )]);
        assert_eq!(
            emit(&root, &opts()),
            Err(EmitError::InvalidTag {
                tag: bad.into(),
                path: "/a/0".into()
            })
        );
    }
    for (h, p) in [
        ("x", "a:"),
        ("!a b!", "a:"),
        ("!a", "a:"),
        ("!", ""),
        ("!", "a b"),
    ] {
        let o = EmitOptions {
            tag_handles: vec![(h.into(), p.into())],
            ..opts()
        };
        assert_eq!(
            emit(&int(1), &o),
            Err(EmitError::InvalidTagDirective {
                handle: h.into(),
                prefix: p.into()
            })
        );
    }
    let o = EmitOptions {
        tag_handles: vec![("!".into(), "a:".into()), ("!".into(), "b:".into())],
        ..opts()
    };
    assert!(matches!(
        emit(&int(1), &o),
        Err(EmitError::InvalidTagDirective { .. })
    ));
}

#[test]
fn redefined_secondary_handle() {
    let o = EmitOptions {
        tag_handles: vec![
            ("!".into(), "tag:stsci.edu:asdf/".into()),
            ("!!".into(), "tag:example.org,2024:".into()),
        ],
        ..opts()
    };
    let root = Node::seq(vec![
        Node::tagged("tag:example.org,2024:thing", Value::Str("a".into())),
        Node::new(Value::Binary(b"x".to_vec())),
        Node::tagged(
            "tag:yaml.org,2002:set",
            Value::Map(vec![(Node::str("a"), Node::new(Value::Null))]),
        ),
    ]);
    let text = rt_with(&root, &o);
    assert!(text.contains("%TAG !! tag:example.org,2024:\n"), "{text}");
    assert!(text.contains("!<tag:yaml.org,2002:binary>"), "{text}");
}

#[test]
fn anchors_and_aliases_keep_identity() {
    let shared_map = Node::map(vec![("z", int(1))]);
    let shared_str = anchored(Node::str("same"), "s");
    let shared_seq = Node::seq(vec![shared_str.clone(), int(2)]);
    let root = Node::map(vec![
        ("s1", shared_map.clone()),
        ("s2", shared_map.clone()),
        ("t", shared_seq.clone()),
        (
            "u",
            Node::seq(vec![
                shared_seq.clone(),
                shared_str.clone(),
                shared_map.clone(),
            ]),
        ),
        (
            "f",
            styled(
                Value::Seq(vec![shared_str.clone(), shared_map.clone()]),
                Style::Collection(CollectionStyle::Flow),
            ),
        ),
    ]);
    let text = rt(&root);
    assert_eq!(
        body(&text),
        "\ns1: &id001\n  z: 1\ns2: *id001\nt: &id002 [&id003 same, 2]\nu:\n- *id002\n- *id003\n- *id001\n\
         f: [*id003, *id001]"
    );
    let got = back(&text);
    assert!(got.get("s1").unwrap().ptr_eq(got.get("s2").unwrap()));
    // Anchor names from a read file are not reused; single occurrences get none.
    let read = back("a: &keep [1]\nb: &x 2\nc: *x\n");
    let text = rt(&read);
    assert_eq!(body(&text), "\na: [1]\nb: &id001 2\nc: *id001");
    // A shared scalar without an anchor name is written in full each time, as PyYAML does.
    let plain = Node::str("p");
    let text = rt(&Node::seq(vec![plain.clone(), plain.clone()]));
    assert_eq!(body(&text), " [p, p]");
    // Shared keys, shared tagged collections, shared root children in flow maps.
    let key = anchored(Node::str("k"), "k");
    let tagged = Node::tagged(
        "tag:stsci.edu:asdf/core/x-1.0.0",
        Value::Map(vec![(key.clone(), int(1))]),
    );
    let root = Node::new(Value::Map(vec![
        (key.clone(), tagged.clone()),
        (Node::str("again"), tagged.clone()),
        (Node::str("k2"), key.clone()),
        (
            Node::str("fm"),
            styled(
                Value::Map(vec![(key.clone(), key.clone())]),
                Style::Collection(CollectionStyle::Flow),
            ),
        ),
    ]));
    let text = rt(&root);
    assert!(
        text.contains("&id001 k: &id002 !core/x-1.0.0\n  *id001 : 1\nagain: *id002\n"),
        "{text}"
    );
    // Many anchors number past 999.
    let nodes: Vec<Node> = (0..1001)
        .map(|i| anchored(Node::str(format!("s{i}")), "a"))
        .collect();
    let mut items = nodes.clone();
    items.extend(nodes);
    let text = rt(&Node::seq(items));
    assert!(
        text.contains("&id1001 s1000"),
        "{}",
        &text[text.len() - 200..]
    );
}

#[test]
fn non_string_and_complex_keys() {
    let k = |v: Value| Node::new(v);
    let root = Node::new(Value::Map(vec![
        (k(Value::Int(Integer::Small(2))), Node::str("int")),
        (k(Value::Bool(true)), Node::str("bool")),
        (k(Value::Null), Node::str("null")),
        (k(Value::Float(1.5)), Node::str("float")),
        (k(Value::Float(f64::NAN)), Node::str("nan")),
        (
            k(Value::Timestamp(ts("2001-12-14 21:59:43.10 -5"))),
            Node::str("ts"),
        ),
        (Node::seq(vec![int(1), int(2)]), Node::str("seq")),
        (
            Node::map(vec![("a", Node::seq(vec![]))]),
            Node::seq(vec![Node::map(vec![("b", int(1))])]),
        ),
        (Node::seq(vec![]), Node::map(vec![("c", int(1))])),
        (Node::str("x".repeat(1500)), Node::str("long")),
        (
            Node::str("y"),
            Node::seq(vec![Node::map(vec![("q", int(1))])]),
        ),
    ]));
    let text = rt(&root);
    assert!(
        text.contains("\n2: int\ntrue: bool\nnull: 'null'\n1.5: float\n.nan: nan\n"),
        "{text}"
    );
    assert!(
        text.contains("\n? [1, 2]\n: seq\n? {a: []}\n:\n  - b: 1\n? []\n:\n  c: 1\n? xxx"),
        "{text}"
    );
    // The same in a flow mapping.
    let flow = styled(
        root.value().clone(),
        Style::Collection(CollectionStyle::Flow),
    );
    let text = rt(&flow);
    assert!(text.contains("{2: int, true: bool"), "{text}");
    assert!(text.contains("? [1, 2] : seq"), "{text}");
}

#[test]
fn nested_empties_and_deep_trees() {
    let root = Node::map(vec![(
        "a",
        Node::seq(vec![
            Node::seq(vec![]),
            Node::map(Vec::<(&str, Node)>::new()),
            Node::seq(vec![Node::seq(vec![Node::map(Vec::<(&str, Node)>::new())])]),
            Node::new(Value::Null),
            Node::str(""),
        ]),
    )]);
    assert_eq!(body(&rt(&root)), "\na:\n- []\n- {}\n- - - {}\n- null\n- ''");
    let mut deep = int(1);
    for i in 0..300 {
        deep = if i % 2 == 0 {
            Node::seq(vec![deep])
        } else {
            Node::map(vec![("k", deep)])
        };
    }
    rt(&deep);
    let mut too_deep = int(1);
    for _ in 0..1001 {
        too_deep = Node::seq(vec![too_deep]);
    }
    assert!(matches!(
        emit(&too_deep, &opts()),
        Err(EmitError::TooDeep { limit: 1000, .. })
    ));
}

#[test]
fn reread_python_style_document() {
    let text = "%YAML 1.1\n%TAG ! tag:stsci.edu:asdf/\n--- !core/asdf-1.1.0\n\
        asdf_library: !core/software-1.0.0 {author: The ASDF Developers, homepage: 'http://github.com/asdf-format/asdf',\n  name: asdf, version: 6.0.0}\n\
        arr: !core/ndarray-1.1.0\n  source: 0\n  datatype: int64\n  byteorder: little\n  shape: [2, 3]\n\
        b:\n  x: 'yes'\n  y:\n  - {k: 1}\n  - [1, 2]\n  - str\n\
        s: 'multi\n\n  line\n\n  '\ns1: &id001 {z: 1}\ns2: *id001\nu: \"h\\xE9llo \\U0001F600\"\n...\n";
    let tree = back(text);
    let out = rt(&tree);
    assert!(out.contains("  shape: [2, 3]\n"), "{out}");
    assert!(out.contains("s1: &id001 {z: 1}\ns2: *id001\n"), "{out}");
    assert!(out.contains("u: \"héllo 😀\"\n"), "{out}");
    assert!(
        out.contains("s: 'multi\n\n  line\n\n  '") || out.contains("s: |\n  multi\n  line\n"),
        "{out}"
    );
    // Emitting the re-read text again is stable.
    assert_eq!(rt(&back(&out)), out);
}

#[test]
fn distinct_addresses() {
    let mut v: Vec<usize> = (0..5000).map(|i| 0x7f00_0000_0000 + i * 48).collect();
    v.reverse();
    assert!(super::all_distinct(v.clone()));
    v.push(0x7f00_0000_0000 + 4999 * 48);
    assert!(!super::all_distinct(v.clone()));
    v.truncate(100);
    assert!(super::all_distinct(v.clone()));
    v.push(v[50]);
    assert!(!super::all_distinct(v));
    assert!(super::all_distinct(vec![usize::MAX, 0, 1 << 40, 8]));
    let wide: Vec<usize> = (0..1000).map(|i| (i * 0x9E37_79B9usize) << 7).collect();
    assert!(super::all_distinct(wide.clone()));
    let mut dup = wide;
    dup.push(dup[999]);
    assert!(!super::all_distinct(dup));
}

fn arb_string() -> impl Strategy<Value = String> {
    let special = prop::sample::select(SPECIAL.to_vec()).prop_map(str::to_string);
    let chars = prop::collection::vec(
        prop_oneof![
            prop::sample::select(vec![
                ' ', '\n', '\t', ':', '#', '-', '?', ',', '[', ']', '{', '}', '\'', '"', '\\', '!',
                '&', '*', '|', '>', '%', '@', '`', '.', '~', '0', '1', '9', 'e', 'E', '_', '+',
                'x', 'n', 'y', 'a', 'é', '😀', '\u{85}', '\u{2028}', '\u{feff}', '\r', '\x00',
                '\x7f', '\u{a0}',
            ]),
            any::<char>(),
        ],
        0..12,
    )
    .prop_map(|v| v.into_iter().collect::<String>());
    prop_oneof![special, chars, "[a-z0-9 .:-]{0,10}"]
}

fn arb_scalar() -> impl Strategy<Value = Node> {
    prop_oneof![
        arb_string().prop_map(Node::str),
        any::<i64>().prop_map(|v| int(v.into())),
        any::<i128>().prop_map(int),
        "-?[1-9][0-9]{39,45}".prop_map(|s| Node::new(Value::Int(Integer::Big(s)))),
        any::<f64>().prop_map(float),
        prop::sample::select(vec![
            0.0,
            -0.0,
            1e16,
            5e-324,
            f64::NAN,
            f64::INFINITY,
            0.1,
            1e-5
        ])
        .prop_map(float),
        any::<bool>().prop_map(|b| Node::new(Value::Bool(b))),
        Just(Node::new(Value::Null)),
        prop::collection::vec(any::<u8>(), 0..100).prop_map(|b| Node::new(Value::Binary(b))),
        (
            arb_string(),
            prop::sample::select(vec![
                "tag:stsci.edu:asdf/core/x-1.0.0",
                "asdf://example.org/tags/y-1.0.0",
                "tag:other.org:z",
            ])
        )
            .prop_map(|(s, t)| Node::tagged(t, Value::Str(s))),
        (
            arb_string(),
            prop::sample::select(vec![
                ScalarStyle::Plain,
                ScalarStyle::SingleQuoted,
                ScalarStyle::DoubleQuoted,
                ScalarStyle::Literal,
                ScalarStyle::Folded,
            ])
        )
            .prop_map(|(s, st)| styled(Value::Str(s), Style::Scalar(st))),
    ]
}

fn arb_tree() -> impl Strategy<Value = Node> {
    arb_scalar().prop_recursive(5, 64, 8, |inner| {
        let style = prop::sample::select(vec![
            Style::Any,
            Style::Collection(CollectionStyle::Flow),
            Style::Collection(CollectionStyle::Block),
        ]);
        prop_oneof![
            (prop::collection::vec(inner.clone(), 0..6), style.clone())
                .prop_map(|(v, st)| styled(Value::Seq(v), st)),
            (
                prop::collection::vec((inner.clone(), inner.clone()), 0..6),
                style.clone(),
                any::<bool>()
            )
                .prop_map(|(pairs, st, tagged)| {
                    // Keys equal as Python values are merged by the parser: merge first.
                    let mut uniq = pairs;
                    crate::yaml::keys::dedupe(&mut uniq);
                    let n = styled(Value::Map(uniq), st);
                    if tagged {
                        Node::from(NodeData {
                            tag: Some("tag:stsci.edu:asdf/core/m-1.0.0".into()),
                            ..n.data().clone()
                        })
                    } else {
                        n
                    }
                }),
            // Sharing: the same node twice.
            inner.prop_map(|n| Node::seq(vec![n.clone(), Node::map(vec![("again", n)])])),
        ]
    })
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]

    #[test]
    fn short_float_path_matches_general(
        x in prop_oneof![
            any::<f64>(),
            (-1_000_000i64..1_000_000, 0u32..9).prop_map(|(m, k)| m as f64 / 10f64.powi(k as i32)),
            (1u64..(1 << 53), 0i32..20).prop_map(|(m, k)| m as f64 / 10f64.powi(k)),
            (0.0001f64..1e15),
        ]
    ) {
        let mut fast = String::new();
        let mut general = String::new();
        let mut scratch = String::new();
        crate::floats::push_yaml(&mut fast, &mut scratch, x);
        crate::floats::push_float_general(&mut general, &mut scratch, x);
        prop_assert_eq!(&fast, &general);
    }

    #[test]
    fn random_trees_round_trip(tree in arb_tree(), width in prop::sample::select(vec![0usize, 20, 80])) {
        let o = EmitOptions {
            tag_handles: vec![
                ("!".into(), "tag:stsci.edu:asdf/".into()),
                ("!ex!".into(), "asdf://example.org/tags/".into()),
            ],
            width,
            ..opts()
        };
        let text = emit(&tree, &o).unwrap();
        let got = parse(text.as_bytes(), &YamlLimits::default())
            .map_err(|e| TestCaseError::fail(format!("{e}\n{text}")))?
            .root;
        prop_assert!(same(&got, &tree), "{:?}\n{:?}\n{}", tree, got, text);
        prop_assert_eq!(sharing(&got), sharing(&tree));
    }

    #[test]
    fn plain_strings_resolve_as_strings(s in arb_string()) {
        let text = emit(&Node::str(s.clone()), &opts()).unwrap();
        let got = back(&text);
        prop_assert_eq!(got.as_str(), Some(s.as_str()), "{}", text);
    }
}
