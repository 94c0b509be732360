//! The fast path must build exactly what the libyaml path builds, whenever it accepts.

use std::collections::HashMap;

use super::fast_parse::parse_fast;
use super::parse::parse_libyaml;
use super::*;

/// Full structural equality: tags, anchors, styles, values (floats bitwise, NaN = NaN), and
/// the same sharing of nodes.
fn deep_eq(a: &Node, b: &Node, ids: &mut HashMap<usize, usize>) -> Result<(), String> {
    // Identity counts for collections and anchored scalars; the fast path also shares
    // repeated plain scalars, which is not part of the tree's meaning.
    let identity = a.anchor().is_some()
        || b.anchor().is_some()
        || matches!(a.value(), Value::Seq(_) | Value::Map(_));
    if identity {
        if let Some(&seen) = ids.get(&a.id()) {
            return if seen == b.id() {
                Ok(())
            } else {
                Err(format!("sharing differs at {a:?}"))
            };
        }
        ids.insert(a.id(), b.id());
    }
    let (da, db) = (a.data(), b.data());
    if da.tag != db.tag || da.anchor != db.anchor || da.style != db.style {
        return Err(format!("{da:?} != {db:?}"));
    }
    match (&da.value, &db.value) {
        (Value::Float(x), Value::Float(y)) => {
            if !(x.to_bits() == y.to_bits() || (x.is_nan() && y.is_nan())) {
                return Err(format!("{x} != {y}"));
            }
        }
        (Value::Seq(x), Value::Seq(y)) => {
            if x.len() != y.len() {
                return Err(format!("length {a:?} != {b:?}"));
            }
            for (p, q) in x.iter().zip(y) {
                deep_eq(p, q, ids)?;
            }
        }
        (Value::Map(x), Value::Map(y)) => {
            if x.len() != y.len() {
                return Err(format!("length {a:?} != {b:?}"));
            }
            for ((k1, v1), (k2, v2)) in x.iter().zip(y) {
                deep_eq(k1, k2, ids)?;
                deep_eq(v1, v2, ids)?;
            }
        }
        (x, y) => {
            if x != y {
                return Err(format!("{x:?} != {y:?}"));
            }
        }
    }
    Ok(())
}

/// Parses with both paths; `Some(true)` when the fast path accepted (and agreed).
pub(super) fn check_paths(text: &[u8]) -> Result<bool, String> {
    let limits = YamlLimits::default();
    let Ok(s) = std::str::from_utf8(text) else {
        return Ok(false);
    };
    let Some(fast) = parse_fast(s, &limits) else {
        return Ok(false);
    };
    let slow = parse_libyaml(text, &limits)
        .map_err(|e| format!("fast path accepted, libyaml refused: {e}\n{s}"))?;
    if fast.version != slow.version || fast.tag_directives != slow.tag_directives {
        return Err(format!("directives differ\n{s}"));
    }
    deep_eq(&fast.root, &slow.root, &mut HashMap::new()).map_err(|e| format!("{e}\n---\n{s}"))?;
    Ok(true)
}

const ASDF_LIKE: &str = "#ASDF 1.0.0
#ASDF_STANDARD 1.6.0
%YAML 1.1
%TAG ! tag:stsci.edu:asdf/
--- !core/asdf-1.1.0
asdf_library: !core/software-1.0.0 {author: The ASDF Developers, homepage: 'http://github.com/asdf-format/asdf',
  name: asdf, version: 6.0.0}
history:
  extensions:
  - !core/extension_metadata-1.0.0
    extension_class: asdf.extension._manifest.ManifestExtension
    extension_uri: asdf://asdf-format.org/core/extensions/core-1.6.0
    manifest_software: !core/software-1.0.0 {name: asdf_standard, version: 1.1.1}
    software: !core/software-1.0.0 {name: asdf, version: 6.0.0}
data: &id001 !core/ndarray-1.0.0
  source: 0
  datatype: float64
  byteorder: little
  shape: [3, 4]
ref: *id001
inline: !core/ndarray-1.0.0
  data:
  - [1, 2, 3]
  - [4.5, .nan, -.inf]
  datatype: float64
  shape: [2, 3]
values: [0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20, 21,
  22, 23, 24]
when: 2024-05-06T07:08:09.123456Z
flags: {a: yes, b: off, c: ~}
empty_list: []
empty_map: {}
nothing:
tagged_empty: !core/foo
quoted: 'it''s'
dq: \"double\"
unicode: héllo wörld
'$ref'
...
";

#[test]
fn fast_path_agrees_on_asdf_like_trees() {
    // A quoted key is in the subset; a block scalar is not (libyaml reads it).
    let with_quoted_key = ASDF_LIKE.replace("'$ref'\n", "'$ref': x\n");
    assert_eq!(check_paths(with_quoted_key.as_bytes()), Ok(true));
    let with_block = ASDF_LIKE.replace("'$ref'\n", "b: |\n  text\n");
    assert_eq!(check_paths(with_block.as_bytes()), Ok(false));
    assert_eq!(
        parse(with_block.as_bytes(), &YamlLimits::default())
            .unwrap()
            .root
            .get("b")
            .unwrap()
            .as_str(),
        Some("text\n")
    );
    let text = ASDF_LIKE.replace("'$ref'\n", "$ref: '#/data'\n");
    assert_eq!(check_paths(text.as_bytes()), Ok(true));
    let doc = parse(text.as_bytes(), &YamlLimits::default()).unwrap();
    assert!(doc
        .root
        .get("ref")
        .unwrap()
        .ptr_eq(doc.root.get("data").unwrap()));
    assert_eq!(
        doc.root.pointer("/inline/data/1/2").unwrap().as_f64(),
        Some(f64::NEG_INFINITY)
    );
}

#[test]
fn fast_path_agrees_on_small_documents() {
    let docs = [
        "a: 1\nb: [x, y]\n",
        "- a\n- b: 1\n  c: 2\n- - nested\n",
        "a:\n- 1\n- 2\nb: 3\n",
        "a:\n  - 1\n  -\n  - !foo\n  - &x [1]\n  - *x\n",
        "--- !t\n...\n",
        "---\n",
        "--- &r\na: 1\n",
        "%YAML 1.1\n---\n- 1\n",
        "%TAG !e! tag:e.com,2000:\n--- !e!root\n- !e!x 1\n- !!str 2\n- !local 3\n",
        "a: b: c\n",
        "a: 1\n  b: 2\n",
        "a: x\n  y\n",
        "a: x\n# c\nb: y\n",
        "a: x\n  # c\nb: y\n",
        "a: [1,\n2]\n",
        "a: [1,\n  2]\n",
        "a: [1\n  , 2]\n",
        "a: [a\n  b]\n",
        "a: {b: c, d: [e, {f: g}]}\n",
        "a: {b: c,}\n",
        "a: [b, ]\n",
        "{a: 1}\n",
        "a: 'x' y\n",
        "a: 'x\n  y'\n",
        "a: \"x\\ty\"\n",
        "a: - b\n",
        "a: -1\nb: -.5\nc: -x\n",
        "a: &x 1\nb: *x\nc: *y\n",
        "a: &x 1\nb: &x 2\n",
        "<<: {a: 1}\nb: 2\n",
        "a: 0x_\n",
        "a: 12:30\nb: http://x.org/y\n",
        "a: [12:30]\n",
        "a: b #c\n",
        "a: 1\n...\n---\nb: 2\n",
        "a: 1\n...\n# trailing\n",
        "a: 1\n--- \n",
        "  a: 1\n  b: 2\n",
        "  a: 1\n b: 2\n",
        "a:\n    b: 1\n   c: 2\n",
        "- a\n  - b\n",
        "- a\n -b\n",
        "a: !!int '7'\nb: !!binary aGVsbG8=\n",
        "a: !<tag:x> 1\n",
        "a: ! 1\n",
        "?a: 1\n",
        "a : 1\n",
        "a:1\n",
        "a: 1 \nb:  2  \n",
        "a: [one two\n  three, four\n\n  five, six]\n",
        "a: {k: The ASDF\n    Developers, j: x}\n",
        "a: [x\n  ]\n",
        "a: [x\n  - y]\n",
        "a: [x\ny]\n",
        "a: [x\n  y: z]\n",
        "a: [x\n  #c\n  ]\n",
        "- - a\n  - b\n- c\n- - - d\n    - e\n  - f\n",
        "- -\n- - \n",
        "a:\n- - 1\n  - 2\n",
        "a: \"x\n  y\"\nb: \"x \\\n  y\"\nc: \"x\\\n\n  y\"\nd: \"a\\ \n  b\"\ne: \"\n  z\"\n",
        "a: \"x\ny\"\n",
        "a: [\"x\n   y\", \"p\\\n   q\"]\n",
        "\"k\": 1\n'j': 2\n\"a\\tb\": 3\n'': 4\n",
        "\"k\":1\n",
        "\"k\" : 1\n",
        "{\"k\": 1, 'j': 2}\n",
        "- 'k': 1\n  \"j\": 2\n",
        "'k\n  x': 1\n",
        "a: word word\n  more words\n\n  after blank\n\n\n  two blanks\nb: 1\n",
        "a: x\n  - y\n",
        "a: x\n  y: z\n",
        "a: x\n  #y\n",
        "- x\n  y\n- z\n",
        "- k: x\n    y\n  j: 2\n",
        "- k: x\n  y\n",
        "a: 'it''s\n  a long\n\n  text '\nb: 'x  \n   y'\n",
        "a: '\n  x'\nb: '  \n  y'\n",
        "a: {k: 'w w\n    w w'}\n",
        "a: ['x\n  y', z]\n",
        "a: 'x\ny'\n",
        "a: 'x\n\n",
        "a: 'x''\n  y'\n",
        "a: \"x\n  y\"\n",
        "a: 1\n  2\n",
        "a: 2001-12-14\n  21:59:43\n",
        "a: word\n  \n  word\n",
        "a: x\n   y\n  z\n",
        "a:\n  b: x\n    y\n  c: z\n",
        "a: x \n  y \n",
        "a: x\n  y\n...\n",
        "a: b]c\nd: b,c\ne: b{c}\nf: x [y]\ng: '[q]'\n",
        "- a, b\n- c]\n",
        "it's: 1\na\"b: 2\nc'd': 3\n",
        "a: ' x '\nb: ''\nc: \"\"\n",
        "a:  # only comment\n",
        "a: &x\n  b: 1\nc: *x\n",
        "a: &id-001_x 1\nb: *id-001_x\n",
        "a: !!str\nb: !!int\n",
        "a: <<\nb: =\n",
        "base: &b {x: 1}\nlist:\n- <<: *b\n  y: 2\n- {<<: *b, z: 3}\n",
        "a: 1\nb:\n  c: 2\n  d:\n  - 3\n  - e: 4\n    f: 5\n  g: 6\nh: 7\n",
        "- - 1\n",
        "-   a: 1\n    b: 2\n-   c\n",
        "a: -\n",
        "a: -1.5e+3\nb: -.inf\nc: -\n",
        "a: 2001-12-14t21:59:43.10-05:00\nb: 2001-12-14 21:59:43.10 -5\n",
        "a: x:y\nb: x: y\n",
        "a: é: b\n",
        "é: 1\nü: [ß, ø]\n",
        "a: !foo&x 1\n",
        "a: &x!foo 1\n",
        "a: !foo &x 1\nb: &y !foo 2\nc: [*x, *y]\n",
        "a: *x\n",
        "a: [1, 2]  \nb: {c: d}   \n",
        "a: [1, 2] x\n",
        "a: {b: c} # c\n",
        "a: [\n  1,\n  2\n  ]\n",
        "a: [\n1]\n",
        "a: {\n  b: c\n  }\n",
        "a:\n\n\n  b: 1\n\n",
        "a:\n  b: 1\n\n  c: 2\n",
        "a: 1\n\n\n",
        "... \n",
        "a: 1\n... # end\n",
        "a: 1\n...\na: 2\n",
        "a: 1\n---\n",
        "--- !core/asdf-1.1.0 &r\na: 1\n",
        "--- !<tag:x>\na: 1\n",
        "%YAML 1.1\n%YAML 1.1\n---\na: 1\n",
        "%TAG ! tag:a/\n%TAG ! tag:b/\n---\na: 1\n",
        "%TAG !x! tag:x/\n--- !x!\na: 1\n",
        "%TAG !x! tag:x/\n---\na: !y!z 1\n",
        "%FOO bar\n---\na: 1\n",
        "a: !!binary aGk=\nb: !!binary 'aGk'\n",
        "a: \"\\0\\a\\b\\t\\n\\v\\f\\r\\e\\ \\\"\\/\\\\\\N\\_\\L\\P\"\n",
        "a: [\"\\x41\\u00e9\\U0001F600\", \"\\U00110000\", \"\\ud800\"]\n",
        "a: [\"\\x41\\u00e9\\U0001F600\", b]\n",
        "a: \"\\q\"\n",
        "a: \"\\x4\"\n",
        "a: \"ab\\\"\n",
        "a: \"x\\\n  y\"\n",
        "a: [1, [2, [3, [4]]]]\n",
        "a: {b: [1, 2], c: {d: e}}\n",
        "a: [&x 1, *x, !t 2, !t &y 3, &z !t 4]\n",
        "a: [*x]\n",
        "a: |\n  lit\n",
        "\n\n# only comments\n\n",
        "",
        "a: 1",
        "a: [1,",
        "a: 'x",
        "- 1\n-\n- 3",
        "a: 2001-12-14 21:59:43.10 -5\n",
    ];
    let mut accepted = 0;
    for d in docs {
        match check_paths(d.as_bytes()) {
            Ok(true) => accepted += 1,
            Ok(false) => {}
            Err(e) => panic!("{e}"),
        }
    }
    assert!(accepted > 25, "only {accepted} accepted");
}

#[test]
fn fast_path_agrees_on_reference_files() {
    let Some(files) = asdf_test_data::reference_files() else {
        return;
    };
    let (mut total, mut fast) = (0, 0);
    {
        for f in files {
            let bytes = std::fs::read(&f).unwrap();
            let Some(start) = bytes.windows(5).position(|w| w == b"%YAML") else {
                continue;
            };
            let Some(end) = bytes.windows(5).position(|w| w == b"\n...\n") else {
                continue;
            };
            total += 1;
            if check_paths(&bytes[start..end + 5]).unwrap() {
                fast += 1;
            } else {
                eprintln!("libyaml path: {}", f.display());
            }
        }
    }
    eprintln!("fast path took {fast} of {total} reference trees");
    assert!(
        total == asdf_test_data::REFERENCE_FILE_COUNT && fast * 10 >= total * 9,
        "fast path took only {fast} of {total}"
    );
}

/// Builds a random YAML-ish document from a seed: nested block and flow collections,
/// scalars of many kinds, properties, comments, odd indentation.
fn random_doc(seed: u64) -> String {
    struct R(u64);
    impl R {
        fn next(&mut self) -> u64 {
            self.0 ^= self.0 << 13;
            self.0 ^= self.0 >> 7;
            self.0 ^= self.0 << 17;
            self.0
        }
        fn pick<'a>(&mut self, xs: &[&'a str]) -> &'a str {
            xs[(self.next() % xs.len() as u64) as usize]
        }
        fn chance(&mut self, n: u64) -> bool {
            self.next() % n == 0
        }
    }
    const SCALARS: &[&str] = &[
        "1",
        "-2",
        "0x1F",
        "017",
        "1.5",
        "1e3",
        "1.0e+3",
        ".inf",
        "-.inf",
        ".nan",
        "yes",
        "Off",
        "~",
        "null",
        "text",
        "two words",
        "2001-12-14",
        "12:30",
        "http://a.b/c",
        "'q'",
        "'it''s'",
        "\"dq\"",
        "'multi\n   line'",
        "'a\n\n  b  \n c'",
        "long\n  plain\n\n  text",
        "w1 w2\n      w3",
        "<<",
        "=",
        "*a1",
        "*a2",
        "a:b",
        "x #y",
        "-x",
        "[]",
        "{}",
        "é",
        "1_000",
        "0b101",
        "190:20:30",
        "+1",
        "+.5",
        "1.",
        "!!str 5",
        "!!int '7'",
        "!t x",
        "&a1 v",
        "&a2 w",
        "!!binary aGk=",
    ];
    const KEYS: &[&str] = &["a", "b", "c", "key", "<<", "1", "true", "~", "x y", "$ref"];
    fn node(r: &mut R, out: &mut String, indent: usize, depth: u32) {
        let pad = " ".repeat(indent);
        match r.next() % 6 {
            0 | 1 if depth < 4 => {
                // block mapping
                out.push('\n');
                for _ in 0..1 + r.next() % 3 {
                    out.push_str(&pad);
                    out.push_str(r.pick(KEYS));
                    out.push(':');
                    if r.chance(3) {
                        out.push(' ');
                        out.push_str(r.pick(&["!t", "&a1", "&a2", "!!map"]));
                    }
                    let step = r
                        .pick(&["2", "2", "1", "4", "0"])
                        .parse::<usize>()
                        .unwrap_or(2);
                    node(r, out, indent + step, depth + 1);
                }
            }
            2 if depth < 4 => {
                out.push('\n');
                for _ in 0..1 + r.next() % 3 {
                    out.push_str(&pad);
                    out.push('-');
                    if r.chance(4) {
                        out.push_str(" k: v\n");
                        out.push_str(&pad);
                        out.push_str("  m:");
                        out.push_str(if r.chance(2) { " 1\n" } else { "\n" });
                        continue;
                    }
                    node(r, out, indent + 2, depth + 1);
                }
            }
            3 if depth < 5 => {
                out.push(' ');
                flow(r, out, indent, depth);
                out.push('\n');
            }
            _ => {
                out.push(' ');
                out.push_str(r.pick(SCALARS));
                if r.chance(8) {
                    out.push('\n');
                    out.push_str(&" ".repeat(indent + r.next() as usize % 3));
                    out.push_str(r.pick(&["cont", "# c", "- z", "k: v"]));
                }
                out.push('\n');
            }
        }
        if r.chance(10) {
            out.push_str(r.pick(&["# comment\n", "\n", "   \n", "  # c\n"]));
        }
    }
    fn flow(r: &mut R, out: &mut String, indent: usize, depth: u32) {
        let map = r.chance(2);
        out.push(if map { '{' } else { '[' });
        for i in 0..r.next() % 4 {
            if i > 0 {
                out.push(',');
                out.push_str(r.pick(&[" ", " ", "\n  ", "\n", ""]));
                if r.chance(3) {
                    out.push_str(&" ".repeat(indent + 1));
                }
            }
            if map {
                out.push_str(r.pick(KEYS));
                out.push_str(r.pick(&[": ", ": ", ":", " : "]));
            }
            if depth < 5 && r.chance(4) {
                flow(r, out, indent, depth + 1);
            } else {
                out.push_str(r.pick(SCALARS));
            }
        }
        out.push(if map { '}' } else { ']' });
    }
    let mut r = R(seed | 1);
    let mut out = String::new();
    if r.chance(2) {
        out.push_str("%YAML 1.1\n%TAG ! tag:stsci.edu:asdf/\n--- !core/asdf-1.1.0");
    }
    node(&mut r, &mut out, 0, 0);
    if r.chance(2) {
        out.push_str("...\n");
    }
    out
}

#[test]
fn fast_path_agrees_on_random_documents() {
    let mut accepted = 0;
    for seed in 1..4000u64 {
        let doc = random_doc(seed.wrapping_mul(0x9E37_79B9_7F4A_7C15));
        if let Err(e) = check_paths(doc.as_bytes()) {
            panic!("seed {seed}: {e}");
        }
        if check_paths(doc.as_bytes()) == Ok(true) {
            accepted += 1;
        }
    }
    eprintln!("fast path accepted {accepted} of 4000 random documents");
    assert!(accepted > 400, "fast path accepted only {accepted}");
}

mod props {
    use super::*;
    use proptest::prelude::*;

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(3000))]

        /// Random documents with a random byte changed or deleted.
        #[test]
        fn mutated_documents(seed in any::<u64>(), at in any::<usize>(), byte in proptest::sample::select(
            b" \n:-[]{},#&*!'\"ab1.\\\r".to_vec()), delete in any::<bool>(), crlf in any::<bool>()) {
            let mut doc = random_doc(seed);
            if crlf {
                doc = doc.replace('\n', "\r\n");
            }
            let mut doc = doc.into_bytes();
            if !doc.is_empty() {
                let i = at % doc.len();
                if delete { doc.remove(i); } else { doc[i] = byte; }
            }
            if let Err(e) = check_paths(&doc) {
                prop_assert!(false, "{}", e);
            }
        }
    }
}

#[test]
fn fast_path_takes_escapes_and_crlf() {
    let escapes =
        "a: \"\\0\\a\\b\\t\\n\\v\\f\\r\\e\\ \\\"\\/\\\\\\N\\_\\L\\P\\x41\\u00e9\\U0001F600\"\n";
    assert_eq!(check_paths(escapes.as_bytes()), Ok(true));
    let doc = parse(escapes.as_bytes(), &YamlLimits::default()).unwrap();
    assert_eq!(
        doc.root.get("a").unwrap().as_str(),
        Some("\0\x07\x08\t\n\x0b\x0c\r\x1b \"/\\\u{85}\u{a0}\u{2028}\u{2029}Aé\u{1F600}")
    );
    let crlf = ASDF_LIKE
        .replace("'$ref'\n", "$ref: x\n")
        .replace('\n', "\r\n");
    assert_eq!(check_paths(crlf.as_bytes()), Ok(true));
    assert_eq!(check_paths(b"a: 1\r\nb: [2,\r\n  3]\r\n"), Ok(true));
    assert_eq!(check_paths(b"a: 1\rb: 2\n"), Ok(false));
    // Invalid escapes are left to libyaml, which reports them.
    assert_eq!(check_paths(b"a: \"\\q\"\n"), Ok(false));
    assert!(matches!(
        parse(b"a: \"\\q\"\n", &YamlLimits::default()),
        Err(YamlError::Syntax { .. })
    ));
}
