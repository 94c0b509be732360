//! `asdf_core::testing`: the round-trip and schema assertions users call in their own tests,
//! and `check_schemas` over the bundled schemas, the examples' schema and the corpus whose
//! verdicts python asdf gave (`tests/schema-check/expected.json`, by
//! `tests/schema-check/generate.py`).

use std::collections::BTreeMap;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::path::{Path, PathBuf};

use asdf_core::array::Storage;
use asdf_core::convert::{ConvertError, FromAsdf, FromContext, ToAsdf, ToContext};
use asdf_core::serde_node::Serde;
use asdf_core::testing::{
    assert_round_trip, assert_schema_rejects, assert_schemas_valid, assert_valid,
    assert_valid_file, check_schemas, round_trip, validation_problems, RoundTrip,
};
use asdf_core::write::Compression;
use asdf_core::write::{WriteOptions, Writer};
use asdf_core::{AsdfType, Node, Value};
use ndarray::{arr1, arr2, Array1, Array2};
use num_complex::Complex;

fn repo(rel: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("..").join(rel)
}

/// The panic message of `f` (which must panic).
#[track_caller]
fn panic_message(f: impl FnOnce()) -> String {
    let err = catch_unwind(AssertUnwindSafe(f)).expect_err("expected a panic");
    err.downcast_ref::<String>()
        .cloned()
        .or_else(|| err.downcast_ref::<&str>().map(|s| s.to_string()))
        .expect("a string panic message")
}

const FRAME_SCHEMA: &str = "asdf://example.org/schemas/testing-frame-1.0.0";

fn register_frame_schema() {
    asdf_core::schema::register_schema(
        FRAME_SCHEMA,
        "type: object\n\
         properties:\n  \
           exposure: {type: number, minimum: 0}\n  \
           pixels: {tag: 'tag:stsci.edu:asdf/core/ndarray-1.*', ndim: 2, datatype: float32}\n\
         required: [exposure, pixels, filter]\n",
    )
    .unwrap();
}

#[derive(AsdfType, Debug, Clone, PartialEq)]
#[asdf(
    tag = "asdf://example.org/tags/testing-frame-1.0.0",
    schema = "asdf://example.org/schemas/testing-frame-1.0.0"
)]
struct Frame {
    exposure: f64,
    filter: Option<String>,
    #[asdf(compression = "lz4")]
    pixels: Array2<f32>,
    weights: Vec<Complex<f64>>,
    big: u64,
}

fn frame() -> Frame {
    Frame {
        exposure: 30.5,
        filter: Some("F200W".into()),
        pixels: arr2(&[[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]]),
        weights: vec![Complex::new(1.0, -2.0)],
        big: u64::MAX,
    }
}

#[derive(AsdfType, Debug, Clone, PartialEq)]
struct Inner {
    name: String,
    data: Array1<f64>,
    flags: BTreeMap<String, bool>,
}

/// Reads back something other than what it wrote: the name gets a `!`, element 2 of the
/// data grows by 1, and the flag `b` is dropped.
#[derive(Debug, Clone, PartialEq)]
struct Lossy(Inner);

impl ToAsdf for Lossy {
    fn to_asdf<'a>(&'a self, ctx: &mut ToContext<'_, 'a>) -> Result<Node, ConvertError> {
        self.0.to_asdf(ctx)
    }
}

impl FromAsdf for Lossy {
    fn from_asdf(node: &Node, ctx: &mut FromContext<'_>) -> Result<Self, ConvertError> {
        let mut inner = Inner::from_asdf(node, ctx)?;
        inner.name.push('!');
        inner.data[2] += 1.0;
        inner.flags.remove("b");
        Ok(Lossy(inner))
    }
}

fn lossy() -> Lossy {
    Lossy(Inner {
        name: "obs".into(),
        data: arr1(&[1.0, 2.0, 3.0, 4.0]),
        flags: BTreeMap::from([("a".to_string(), true), ("b".to_string(), false)]),
    })
}

#[test]
fn derived_serde_and_node_values_round_trip() {
    register_frame_schema();
    assert_round_trip(&frame());
    assert_round_trip(&Serde(BTreeMap::from([
        ("counts".to_string(), vec![1u32, 2, 3]),
        ("none".to_string(), vec![]),
    ])));
    assert_round_trip(&Node::map([
        ("a", Node::int(1)),
        ("b", Node::seq([Node::str("x"), Node::str("yes")])),
    ]));
    assert_round_trip(&arr2(&[[1i64, -2], [3, i64::MAX]]));
    assert_round_trip(&vec![Complex::new(0.5f32, 1.5)]);
    RoundTrip::new()
        .compression(Compression::Zstd)
        .storages([Storage::Internal, Storage::External, Storage::InlineUpTo(2)])
        .assert(&arr1(&[1u8, 2, 3]));
}

#[test]
fn round_trip_returns_the_value_read() {
    let back = round_trip(&vec![1.5f64, f64::NAN]).unwrap();
    assert_eq!(back[0], 1.5);
    assert!(back[1].is_nan());
    let runs = RoundTrip::new().run(&arr1(&[7i16, 8])).unwrap();
    // internal uncompressed, internal zlib, inline
    assert_eq!(runs.len(), 3);
    assert!(runs.iter().all(|a| a == arr1(&[7i16, 8])));
}

#[test]
fn round_trip_errors_name_the_step_and_setting() {
    let bad = Node::tagged(
        "tag:stsci.edu:asdf/core/complex-1.0.0",
        Value::Str("one plus i".into()),
    );
    let e = round_trip(&bad).unwrap_err();
    assert_eq!(e.step(), "writing");
    let text = e.to_string();
    assert!(
        text.starts_with(
            "round trip with internal blocks, uncompressed, ASDF Standard 1.6.0: writing failed: "
        ),
        "{text}"
    );
    assert!(text.contains("/value: pattern"), "{text}");
    // a value that cannot be read back fails in the reading step, for every setting
    #[derive(Debug, PartialEq)]
    struct Unreadable;
    impl ToAsdf for Unreadable {
        fn to_asdf<'a>(&'a self, _: &mut ToContext<'_, 'a>) -> Result<Node, ConvertError> {
            Ok(Node::str("x"))
        }
    }
    impl FromAsdf for Unreadable {
        fn from_asdf(_: &Node, ctx: &mut FromContext<'_>) -> Result<Self, ConvertError> {
            Err(ConvertError::custom(ctx.path(), "never readable"))
        }
    }
    let e = round_trip(&Unreadable).unwrap_err();
    assert_eq!(e.step(), "reading the value back");
    let msg = panic_message(|| assert_round_trip(&Unreadable));
    assert_eq!(
        msg,
        "assert_round_trip: round trip with internal blocks, uncompressed, ASDF Standard 1.6.0: \
         reading the value back failed: /value: never readable"
    );
}

#[test]
fn a_changed_value_panics_with_paths_and_an_array_summary() {
    let msg = panic_message(|| assert_round_trip(&lossy()));
    let lines: Vec<&str> = msg.lines().collect();
    assert_eq!(
        lines[0],
        "assert_round_trip: the value read back differs from the value written (internal blocks, uncompressed, ASDF Standard 1.6.0):"
    );
    assert!(
        lines.contains(&"  /name: wrote \"obs\", read \"obs!\""),
        "{msg}"
    );
    assert!(
        lines.contains(
            &"  /data: array float64 [4]: 1 of 4 elements differ, first at [2]: wrote 3.0, read 4.0"
        ),
        "{msg}"
    );
    assert!(
        lines.contains(&"  /flags/b: wrote false, read nothing (key missing)"),
        "{msg}"
    );
    assert_eq!(lines.len(), 4, "{msg}");
}

#[test]
fn equal_trees_with_unequal_values_are_explained() {
    let msg = panic_message(|| assert_round_trip(&vec![f64::NAN]));
    assert!(
        msg.contains("/: the trees are equal but the values are not (a NaN"),
        "{msg}"
    );
    assert!(msg.ends_with("\n  wrote: [NaN]\n  read:  [NaN]"), "{msg}");
}

#[test]
fn a_shape_change_is_summarised() {
    #[derive(Debug, PartialEq)]
    struct Flat(Array2<f32>);
    impl ToAsdf for Flat {
        fn to_asdf<'a>(&'a self, ctx: &mut ToContext<'_, 'a>) -> Result<Node, ConvertError> {
            self.0.to_asdf(ctx)
        }
    }
    impl FromAsdf for Flat {
        fn from_asdf(node: &Node, ctx: &mut FromContext<'_>) -> Result<Self, ConvertError> {
            let a = Array2::<f32>::from_asdf(node, ctx)?;
            let n = a.len();
            Ok(Flat(a.into_shape_with_order((1, n)).unwrap()))
        }
    }
    let msg = panic_message(|| assert_round_trip(&Flat(arr2(&[[1.0], [2.0]]))));
    assert!(
        msg.ends_with("\n  /: array: wrote float32 [2, 1], read float32 [1, 2]"),
        "{msg}"
    );
}

#[test]
fn valid_values_pass_and_problems_are_listed_one_per_line() {
    register_frame_schema();
    assert_valid(&frame());
    assert_valid(&Serde(vec!["a", "b"]));
    assert_valid(&Node::map([("x", Node::int(1))]));

    let mut bad = frame();
    bad.exposure = -1.0;
    bad.filter = None;
    bad.pixels = arr2(&[[1.0]]);
    let problems = validation_problems(&bad);
    assert_eq!(
        problems,
        vec![
            format!(
                "/: required: expected property filter, found it missing (schema {FRAME_SCHEMA})"
            ),
            format!("/exposure: minimum: expected at least 0, found -1.0 (schema {FRAME_SCHEMA})"),
        ],
    );
    let msg = panic_message(|| assert_valid(&bad));
    assert_eq!(
        msg,
        format!(
            "assert_valid: 2 schema problems:\n  {}\n  {}",
            problems[0], problems[1]
        )
    );
}

#[test]
fn tagged_nodes_are_checked_by_bundled_and_registered_schemas() {
    // bundled: core/software needs a version
    let software = Node::tagged(
        "tag:stsci.edu:asdf/core/software-1.0.0",
        Value::Map(vec![(Node::str("name"), Node::str("x"))]),
    );
    let nested = Node::map([("made_by", Node::seq([software]))]);
    assert_eq!(
        validation_problems(&nested),
        vec!["/made_by/0: required: expected property version, found it missing".to_string()]
    );
    assert_schema_rejects(&nested, "/made_by/0: required");
    // registered for a tag
    asdf_core::schema::register_schema(
        "asdf://example.org/schemas/testing-unit-1.0.0",
        "type: string\nenum: [m, s]\n",
    )
    .unwrap();
    asdf_core::schema::register_tag(
        "asdf://example.org/tags/testing-unit-1.*",
        "asdf://example.org/schemas/testing-unit-1.0.0",
    );
    let unit = |u: &str| {
        Node::tagged(
            "asdf://example.org/tags/testing-unit-1.0.0",
            Value::Str(u.into()),
        )
    };
    assert_valid(&unit("m"));
    assert_schema_rejects(&Node::map([("u", unit("kg"))]), "/u: enum");
}

#[test]
fn assert_schema_rejects_panics_when_nothing_or_something_else_is_wrong() {
    register_frame_schema();
    let msg = panic_message(|| assert_schema_rejects(&frame(), "minimum"));
    assert_eq!(
        msg,
        "assert_schema_rejects: the value validates, expected a problem containing \"minimum\""
    );
    let mut bad = frame();
    bad.exposure = -2.0;
    let msg = panic_message(|| assert_schema_rejects(&bad, "maximum"));
    assert_eq!(
        msg,
        format!("assert_schema_rejects: no problem contains \"maximum\"; found:\n  /exposure: minimum: expected at least 0, found -2.0 (schema {FRAME_SCHEMA})")
    );
    assert_schema_rejects(&bad, "/exposure: minimum");
}

#[test]
fn files_are_validated_with_every_problem_listed() {
    let dir = std::env::temp_dir().join(format!("asdf-testing-helpers-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let good = dir.join("good.asdf");
    let bad = dir.join("bad.asdf");
    let w = Writer::new(WriteOptions::default());
    std::fs::write(
        &good,
        w.write_to_vec(&Node::map([("x", Node::int(1))])).unwrap(),
    )
    .unwrap();
    let software = |fields: Vec<(Node, Node)>| {
        Node::tagged("tag:stsci.edu:asdf/core/software-1.0.0", Value::Map(fields))
    };
    let tree = Node::map([
        ("a", software(vec![(Node::str("name"), Node::str("x"))])),
        ("b", software(vec![(Node::str("version"), Node::str("1"))])),
    ]);
    let w = Writer::new(WriteOptions::default().validate(false));
    std::fs::write(&bad, w.write_to_vec(&tree).unwrap()).unwrap();

    assert_valid_file(&good);
    let msg = panic_message(|| assert_valid_file(&bad));
    assert_eq!(
        msg,
        format!(
            "assert_valid_file: {}: 2 schema problems:\n  \
             /a: required: expected property version, found it missing\n  \
             /b: required: expected property name, found it missing",
            bad.display()
        )
    );
    let missing = dir.join("missing.asdf");
    let msg = panic_message(|| assert_valid_file(&missing));
    assert!(
        msg.starts_with(&format!(
            "assert_valid_file: {} cannot be opened: ",
            missing.display()
        )),
        "{msg}"
    );
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn the_bundled_schemas_and_their_examples_pass() {
    let report = check_schemas(repo("asdf-core/schemas")).unwrap();
    assert!(report.is_ok(), "{report}");
    // every bundled schema, plus versions.yaml
    assert_eq!(
        report.files.len(),
        asdf_core::schema::bundled::all().count() + 1
    );
    assert!(report.examples >= 10, "only {} examples", report.examples);
    assert_schemas_valid(repo("asdf-core/schemas"));
}

#[test]
fn the_examples_schema_passes() {
    let report = check_schemas(repo("examples/schemas")).unwrap();
    assert!(report.is_ok(), "{report}");
    assert_eq!(report.files.len(), 1);
}

/// `tests/schema-check/expected.json`: per file, python asdf's schema verdict and example
/// verdicts.
fn python_verdicts() -> BTreeMap<String, (bool, Option<Vec<bool>>)> {
    let text = std::fs::read_to_string(repo("tests/schema-check/expected.json")).unwrap();
    let json: serde_json::Value = serde_json::from_str(&text).unwrap();
    let valid = |v: &serde_json::Value| match v.as_str() {
        Some("valid") => true,
        Some("invalid") => false,
        other => panic!("unexpected verdict {other:?}"),
    };
    json["verdicts"]
        .as_object()
        .unwrap()
        .iter()
        .map(|(name, v)| {
            let examples = v["examples"]
                .as_array()
                .map(|list| list.iter().map(valid).collect());
            (name.clone(), (valid(&v["schema"]), examples))
        })
        .collect()
}

#[test]
fn corpus_verdicts_agree_with_python_asdf() {
    let dir = repo("tests/schema-check/corpus");
    let report = check_schemas(&dir).unwrap();
    let expected = python_verdicts();
    let names: Vec<String> = report
        .files
        .iter()
        .map(|f| f.file_name().unwrap().to_string_lossy().into_owned())
        .collect();
    assert_eq!(names, expected.keys().cloned().collect::<Vec<_>>());
    assert!(expected.values().any(|(ok, _)| !ok) && expected.values().any(|(ok, _)| *ok));
    let mut disagreements = Vec::new();
    let mut examples = 0;
    for (name, (schema_ok, example_verdicts)) in &expected {
        let file = dir.join(name);
        let problems: Vec<_> = report.problems_of(&file).collect();
        let ours = !problems.iter().any(|p| p.example.is_none());
        if ours != *schema_ok {
            disagreements.push(format!(
                "{name}: python says the schema is {}, we found {problems:?}",
                if *schema_ok { "valid" } else { "invalid" }
            ));
        }
        for (i, valid) in example_verdicts.iter().flatten().enumerate() {
            examples += 1;
            let ours = !problems.iter().any(|p| p.example == Some(i));
            if ours != *valid {
                disagreements.push(format!(
                    "{name}: example {i}: python says {}, we found {:?}",
                    if *valid { "valid" } else { "invalid" },
                    problems
                        .iter()
                        .filter(|p| p.example == Some(i))
                        .collect::<Vec<_>>()
                ));
            }
        }
    }
    assert!(disagreements.is_empty(), "{}", disagreements.join("\n"));
    assert_eq!(report.examples, examples);
    assert!(examples >= 20, "{examples}");
}

#[test]
fn corpus_problems_name_file_example_and_tree_path() {
    let dir = repo("tests/schema-check/corpus");
    let report = check_schemas(&dir).unwrap();
    let text = report.to_string();
    let point = dir.join("point-1.0.0.yaml");
    let expect = |line: String| {
        assert!(
            text.lines().any(|l| l == line),
            "no line {line:?} in\n{text}"
        )
    };
    expect(format!(
        "{}: example 1 (A coordinate written as text): /x: type: expected number, found string \"one\"",
        point.display()
    ));
    expect(format!(
        "{}: example 2 (A point without y): /: required: expected property y, found it missing",
        point.display()
    ));
    expect(format!(
        "{}: /properties/n/default: default: type: expected integer, found string \"many\"",
        dir.join("bad-default-1.0.0.yaml").display()
    ));
    expect(format!(
        "{}: /properties/a/ndim: metaschema http://stsci.edu/schemas/asdf/asdf-schema-1.1.0: minimum: expected at least 0, found -1",
        dir.join("bad-ndim-1.0.0.yaml").display()
    ));
    let image = dir.join("image-1.0.0.yaml");
    expect(format!(
        "{}: example 1 (A 1-d image): /pixels: ndim: expected 2 dimensions, found 1",
        image.display()
    ));
    // one line per problem, each naming its file
    for line in text.lines() {
        assert!(line.starts_with(&dir.display().to_string()), "{line}");
    }
    let msg = panic_message(|| assert_schemas_valid(&dir));
    assert!(msg.starts_with("assert_schemas_valid: "), "{msg}");
    assert_eq!(msg.lines().count(), report.problems.len() + 1);
}

#[test]
fn check_schemas_reports_an_unreadable_folder() {
    let e = check_schemas(repo("tests/schema-check/no-such-folder")).unwrap_err();
    assert!(e.to_string().starts_with("cannot read schema file "), "{e}");
}

/// The workspace's own data through the helpers: every array python asdf wrote in the
/// fixtures, read as a `DynArray` (every datatype, byte order and codec of the corpus),
/// round-trips through internal blocks (uncompressed and zlib); small ones also inline,
/// where the values come back in native byte order (inline data has none), so they are
/// compared as the inline tree holds them.
#[test]
fn every_fixture_array_round_trips() {
    let Some(dir) = asdf_test_data::require_dir("fixtures") else {
        return;
    };
    let mut arrays = 0;
    let mut inline = 0;
    for path in asdf_test_data::files_with_suffix(&dir, &[".asdf"]) {
        let Ok(file) = asdf_core::AsdfFile::open(&path) else {
            continue; // the fixtures of failures (bad checksums, truncations) are not data
        };
        for (pointer, _) in file.arrays() {
            let Ok(array) = file.read_as::<asdf_core::array::DynArray>(&pointer) else {
                continue; // external sources, streamed placeholders
            };
            let at = format!("{} {pointer}", path.display());
            // The first write keeps shape, bytes and datatype; only the byte order of
            // datatypes where it means nothing (one-byte elements, text) may change to
            // the writer's. From there on the value is a fixed point.
            let once = round_trip(&array).unwrap_or_else(|e| panic!("{at}: {e}"));
            assert_eq!(
                (&once.shape, &once.data, meaningful(&once.dtype)),
                (&array.shape, &array.data, meaningful(&array.dtype)),
                "{at}"
            );
            let result = catch_unwind(AssertUnwindSafe(|| {
                RoundTrip::new().storages([Storage::Internal]).assert(&once)
            }));
            if let Err(e) = result {
                let msg = e.downcast_ref::<String>().cloned().unwrap_or_default();
                panic!("{at}: {msg}");
            }
            arrays += 1;
            if array.element_count() <= 4096 {
                // Debug text: a NaN equals a NaN
                let tree = |a: &asdf_core::array::DynArray| {
                    format!("{:?}", asdf_core::convert::to_node(a).unwrap())
                };
                let Ok(expected) = asdf_core::convert::to_node(&array) else {
                    continue; // not representable inline (python's literal range)
                };
                let back = RoundTrip::new()
                    .storages([Storage::Inline])
                    .run(&array)
                    .unwrap_or_else(|e| panic!("{at}: {e}"));
                assert_eq!(back.len(), 1);
                assert_eq!(tree(&back[0]), format!("{expected:?}"), "{at}");
                inline += 1;
            }
        }
    }
    assert!(
        arrays >= 100 && inline >= 50,
        "{arrays} arrays, {inline} inline"
    );
}

/// A datatype with the byte orders that mean something: none for one-byte elements and
/// text.
fn meaningful(dtype: &asdf_core::array::DType) -> String {
    use asdf_core::array::DType;
    match dtype {
        DType::Scalar { ty, byteorder } => {
            if ty.itemsize() == 1 || format!("{ty:?}").starts_with("Ascii") {
                format!("{ty:?}")
            } else {
                format!("{ty:?}/{byteorder:?}")
            }
        }
        DType::Record(fields) => fields
            .iter()
            .map(|f| format!("{}:{}:{:?}", f.name, meaningful(&f.dtype), f.shape))
            .collect::<Vec<_>>()
            .join(","),
        // DType is non-exhaustive
        other => format!("{other:?}"),
    }
}
