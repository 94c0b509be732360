//! `#[derive(AsdfType)]`: round trips for every attribute (through nodes and through
//! written files), tags and tag patterns, unknown keys kept, enums, newtype and tuple
//! structs, generics, and errors naming the tree path.

use crate::common;

use asdf_core::array::{ArrayOptions, CompressionChoice, Storage};
use asdf_core::convert::{
    self, ConvertError, ConvertErrorKind, Extra, FromAsdf, ToAsdf, ToContext,
};
use asdf_core::write::Compression;
use asdf_core::write::{WriteOptions, Writer};
use asdf_core::{AsdfFile, AsdfType, Node, Value};
use ndarray::{arr1, arr2, Array1, Array2};

const OBS_TAG: &str = "asdf://example.org/tags/observation-1.1.0";

fn tmpdir(name: &str) -> common::Scratch {
    common::Scratch::new(&format!("derive-{name}"))
}

fn dump(name: &str, bytes: &[u8]) {
    common::dump_for_oracle(&format!("derive_{name}"), bytes);
}

/// Writes `value` under key `/v` of a file (saved on disk and opened with
/// `AsdfFile::open`) and reads it back as `T`.
fn through_file<T: ToAsdf + FromAsdf>(name: &str, value: &T) -> (T, AsdfFile) {
    let mut w = Writer::new(WriteOptions::default());
    let node = w.add_value(value).unwrap();
    let bytes = w.write_to_vec(&Node::map([("v", node)])).unwrap();
    dump(name, &bytes);
    // the folder goes at the end of this call; the open file keeps reading its descriptor
    let dir = tmpdir(name);
    let path = dir.join("file.asdf");
    std::fs::write(&path, &bytes).unwrap();
    let file = AsdfFile::open(&path).unwrap();
    let back = file.read_as::<T>("/v").unwrap();
    (back, file)
}

fn detached<T: ToAsdf + FromAsdf>(value: &T) -> T {
    let node = convert::to_node(value).unwrap();
    convert::from_node(&node).unwrap()
}

fn keys(node: &Node) -> Vec<&str> {
    node.as_map()
        .unwrap()
        .iter()
        .map(|(k, _)| k.as_str().unwrap())
        .collect()
}

fn map_node(tag: Option<&str>, entries: Vec<(&str, Node)>) -> Node {
    let value = Value::Map(
        entries
            .into_iter()
            .map(|(k, v)| (Node::str(k), v))
            .collect(),
    );
    match tag {
        Some(t) => Node::tagged(t, value),
        None => Node::new(value),
    }
}

fn float(v: f64) -> Node {
    Node::new(Value::Float(v))
}

// ------------------------------------------------------------------ tagged structs

#[derive(AsdfType, Debug, PartialEq, Clone)]
#[asdf(
    tag = "asdf://example.org/tags/observation-1.1.0",
    tag_pattern = "asdf://example.org/tags/observation-1.*"
)]
struct Observation {
    target: String,
    #[asdf(rename = "exposure_time")]
    exposure: f64,
    comment: Option<String>,
    meta: Meta,
}

#[derive(AsdfType, Debug, PartialEq, Clone, Default)]
struct Meta {
    exposure: f64,
    filters: Vec<String>,
}

fn observation() -> Observation {
    Observation {
        target: "M31".into(),
        exposure: 30.5,
        comment: None,
        meta: Meta {
            exposure: 2.0,
            filters: vec!["F200W".into(), "F444W".into()],
        },
    }
}

#[test]
fn tagged_struct_is_a_tagged_mapping_in_field_order() {
    let obs = observation();
    asdf_core::testing::assert_round_trip(&obs);
    let node = convert::to_node(&obs).unwrap();
    assert_eq!(node.tag(), Some(OBS_TAG));
    assert_eq!(<Observation as ToAsdf>::tag(), Some(OBS_TAG));
    assert_eq!(keys(&node), ["target", "exposure_time", "meta"]);
    assert_eq!(node.get("target").unwrap().as_str(), Some("M31"));
    assert_eq!(node.get("exposure_time").unwrap().as_f64(), Some(30.5));
    assert_eq!(
        node.pointer("/meta/filters/1").unwrap().as_str(),
        Some("F444W")
    );
    assert_eq!(node.get("meta").unwrap().tag(), None, "untagged struct");
    assert_eq!(detached(&obs), obs);

    let (back, file) = through_file("observation", &obs);
    assert_eq!(back, obs);
    assert_eq!(file.node("/v").unwrap().tag(), Some(OBS_TAG));
}

#[test]
fn tag_pattern_reads_an_older_version_and_writes_the_current_one() {
    let old = map_node(
        Some("asdf://example.org/tags/observation-1.0.0"),
        vec![
            ("target", Node::str("M33")),
            ("exposure_time", float(10.0)),
            (
                "meta",
                map_node(
                    None,
                    vec![("exposure", float(1.0)), ("filters", Node::seq([]))],
                ),
            ),
        ],
    );
    let obs: Observation = convert::from_node(&old).unwrap();
    assert_eq!(obs.target, "M33");
    assert_eq!(convert::to_node(&obs).unwrap().tag(), Some(OBS_TAG));
    assert!(Observation::accepts_tag(Some(
        "asdf://example.org/tags/observation-1.9.0"
    )));
    assert!(!Observation::accepts_tag(Some(
        "asdf://example.org/tags/observation-2.0.0"
    )));
    assert!(!Observation::accepts_tag(None));
    assert!(Meta::accepts_tag(None) && Meta::accepts_tag(Some("tag:x")));
}

#[test]
fn a_wrong_or_missing_tag_is_an_error_for_a_tagged_struct() {
    let body = |tag| {
        map_node(
            tag,
            vec![
                ("target", Node::str("M33")),
                ("exposure_time", float(10.0)),
                (
                    "meta",
                    map_node(
                        None,
                        vec![("exposure", float(1.0)), ("filters", Node::seq([]))],
                    ),
                ),
            ],
        )
    };
    let wrapped = |n| Node::map([("obs", n)]);
    #[derive(AsdfType, Debug)]
    struct Holder {
        obs: Observation,
    }
    let e = convert::from_node::<Holder>(&wrapped(body(Some(
        "asdf://example.org/tags/observation-2.0.0",
    ))))
    .unwrap_err();
    assert_eq!(e.path, "/obs");
    match &e.kind {
        ConvertErrorKind::Tag { expected, found } => {
            assert_eq!(expected, "asdf://example.org/tags/observation-1.*");
            assert_eq!(
                found.as_deref(),
                Some("asdf://example.org/tags/observation-2.0.0")
            );
        }
        k => panic!("{k:?}"),
    }
    let e = convert::from_node::<Holder>(&wrapped(body(None))).unwrap_err();
    assert!(
        matches!(e.kind, ConvertErrorKind::Tag { found: None, .. }),
        "{e}"
    );

    // an untagged struct takes any tag
    let m: Meta = convert::from_node(&map_node(
        Some("asdf://example.org/tags/whatever-1.0.0"),
        vec![("exposure", float(1.0)), ("filters", Node::seq([]))],
    ))
    .unwrap();
    assert_eq!(m.exposure, 1.0);
}

#[test]
fn errors_name_the_tree_path() {
    #[derive(AsdfType, Debug)]
    struct Top {
        meta: Meta,
    }
    let bad = Node::map([(
        "meta",
        map_node(
            None,
            vec![("exposure", Node::str("long")), ("filters", Node::seq([]))],
        ),
    )]);
    let e = convert::from_node::<Top>(&bad).unwrap_err();
    assert_eq!(e.path, "/meta/exposure");
    assert!(
        e.to_string().starts_with("/meta/exposure: expected "),
        "{e}"
    );

    let bad = Node::map([(
        "meta",
        map_node(
            None,
            vec![
                ("exposure", float(1.0)),
                ("filters", Node::seq([Node::str("a"), Node::int(3)])),
            ],
        ),
    )]);
    let e = convert::from_node::<Top>(&bad).unwrap_err();
    assert_eq!(e.path, "/meta/filters/1");

    let missing = Node::map([("meta", map_node(None, vec![("filters", Node::seq([]))]))]);
    let e = convert::from_node::<Top>(&missing).unwrap_err();
    assert_eq!(e.to_string(), "/meta: missing key `exposure`");

    let e = convert::from_node::<Top>(&Node::map([("meta", Node::str("x"))])).unwrap_err();
    assert_eq!(e.path, "/meta");
    assert!(
        matches!(&e.kind, ConvertErrorKind::Expected { expected, found } if expected == "a mapping" && found.contains("string")),
        "{e}"
    );

    // through a file, the path is the path in the file
    let mut w = Writer::new(WriteOptions::default());
    let bytes = w
        .write_to_vec(&Node::map([(
            "data",
            Node::map([(
                "top",
                Node::map([("meta", map_node(None, vec![("exposure", Node::str("x"))]))]),
            )]),
        )]))
        .unwrap();
    let _ = &mut w;
    let f = AsdfFile::from_bytes(bytes).unwrap();
    let e = f.read_as::<Top>("/data/top").unwrap_err().to_string();
    assert!(e.contains("/data/top/meta/exposure: expected"), "{e}");
}

// ------------------------------------------------------------------ field attributes

fn seven() -> u32 {
    7
}

fn default_name() -> String {
    "unnamed".into()
}

#[derive(AsdfType, Debug, PartialEq, Clone)]
struct Fields {
    #[asdf(rename = "type")]
    kind: String,
    #[asdf(skip)]
    cache: Vec<u8>,
    #[asdf(skip, default = "default_name")]
    label: String,
    #[asdf(default)]
    count: u32,
    #[asdf(default = "seven")]
    level: u32,
    note: Option<String>,
    #[asdf(keep_null)]
    parent: Option<String>,
    r#ref: u8,
}

fn fields() -> Fields {
    Fields {
        kind: "image".into(),
        cache: vec![1, 2, 3],
        label: "x".into(),
        count: 3,
        level: 4,
        note: None,
        parent: None,
        r#ref: 1,
    }
}

#[test]
fn rename_skip_default_and_absent_fields() {
    let f = fields();
    let node = convert::to_node(&f).unwrap();
    // skip: not written; None: left out; keep_null: written as null; r# stripped
    assert_eq!(keys(&node), ["type", "count", "level", "parent", "ref"]);
    assert!(node.get("parent").unwrap().is_null());
    assert_eq!(node.get("type").unwrap().as_str(), Some("image"));

    let back: Fields = convert::from_node(&node).unwrap();
    assert_eq!(
        back,
        Fields {
            cache: vec![],           // Default
            label: "unnamed".into(), // default = "default_name"
            ..f.clone()
        }
    );

    // missing keys: default, default = path, absent Option; present keys win
    let sparse = Node::map([("type", Node::str("table")), ("ref", Node::int(2))]);
    let back: Fields = convert::from_node(&sparse).unwrap();
    assert_eq!(back.count, 0);
    assert_eq!(back.level, 7);
    assert_eq!(back.note, None);
    assert_eq!(back.parent, None);
    let with_note = Node::map([
        ("type", Node::str("table")),
        ("ref", Node::int(2)),
        ("note", Node::str("hello")),
        ("level", Node::int(1)),
        ("parent", Node::str("p")),
    ]);
    let back: Fields = convert::from_node(&with_note).unwrap();
    assert_eq!(back.note.as_deref(), Some("hello"));
    assert_eq!(back.parent.as_deref(), Some("p"));
    assert_eq!(back.level, 1);
    let node = convert::to_node(&back).unwrap();
    assert_eq!(
        keys(&node),
        ["type", "count", "level", "note", "parent", "ref"]
    );

    // a required key is missing
    let e = convert::from_node::<Fields>(&Node::map([("type", Node::str("t"))])).unwrap_err();
    assert_eq!(e.to_string(), "/: missing key `ref`");
    // skipped keys in the file are ignored, not read
    let skipped = Node::map([
        ("type", Node::str("t")),
        ("ref", Node::int(0)),
        ("cache", Node::seq([Node::int(9)])),
    ]);
    assert_eq!(
        convert::from_node::<Fields>(&skipped).unwrap().cache,
        Vec::<u8>::new()
    );

    let (back, _) = through_file("fields", &f);
    assert_eq!(back.kind, f.kind);
    assert_eq!(back.count, 3);
}

#[derive(AsdfType, Debug, PartialEq, Clone, Default)]
struct Pointing {
    ra: f64,
    dec: f64,
}

#[derive(AsdfType, Debug, PartialEq, Clone)]
#[asdf(tag = "asdf://example.org/tags/exposure-1.0.0")]
struct Exposure {
    id: u32,
    #[asdf(flatten)]
    pointing: Pointing,
    #[asdf(flatten)]
    more: Option<Pointing2>,
    name: String,
}

#[derive(AsdfType, Debug, PartialEq, Clone)]
struct Pointing2 {
    roll: f64,
}

#[test]
fn flatten_merges_the_entries_and_reads_the_remaining_ones() {
    let e = Exposure {
        id: 1,
        pointing: Pointing {
            ra: 10.0,
            dec: -5.0,
        },
        more: Some(Pointing2 { roll: 3.0 }),
        name: "a".into(),
    };
    let node = convert::to_node(&e).unwrap();
    assert_eq!(keys(&node), ["id", "ra", "dec", "roll", "name"]);
    assert_eq!(detached(&e), e);
    let (back, _) = through_file("flatten", &e);
    assert_eq!(back, e);

    // None flattens to nothing and reads back as None (Option's absence)
    let none = Exposure {
        more: None,
        ..e.clone()
    };
    let node = convert::to_node(&none).unwrap();
    assert_eq!(keys(&node), ["id", "ra", "dec", "name"]);
    // Option<Pointing2> is read from the remaining mapping {ra, dec}: not a Pointing2
    let err = convert::from_node::<Exposure>(&node).unwrap_err();
    assert_eq!(err.to_string(), "/: missing key `roll`");

    // errors inside a flattened field name the parent's path and the key
    let bad = map_node(
        Some("asdf://example.org/tags/exposure-1.0.0"),
        vec![
            ("id", Node::int(1)),
            ("ra", Node::str("x")),
            ("dec", float(0.0)),
            ("roll", float(0.0)),
            ("name", Node::str("n")),
        ],
    );
    let err = convert::from_node::<Exposure>(&bad).unwrap_err();
    assert_eq!(err.path, "/ra");

    // a flattened value that is not a mapping
    #[derive(AsdfType, Debug)]
    struct BadFlat {
        #[asdf(flatten)]
        n: u32,
    }
    let err = convert::to_node(&BadFlat { n: 3 }).unwrap_err();
    assert!(err.to_string().contains("flattened field `n`"), "{err}");
}

#[test]
fn a_flattened_map_collects_the_other_keys() {
    use std::collections::BTreeMap;
    #[derive(AsdfType, Debug, PartialEq)]
    struct Labels {
        id: u32,
        #[asdf(flatten)]
        labels: BTreeMap<String, String>,
    }
    let node = Node::map([
        ("b", Node::str("2")),
        ("id", Node::int(5)),
        ("a", Node::str("1")),
    ]);
    let l: Labels = convert::from_node(&node).unwrap();
    assert_eq!(l.id, 5);
    assert_eq!(l.labels.len(), 2);
    assert_eq!(l.labels["a"], "1");
    assert_eq!(keys(&convert::to_node(&l).unwrap()), ["id", "a", "b"]);
}

#[derive(AsdfType, Debug, PartialEq, Clone)]
#[asdf(
    tag = "asdf://example.org/tags/observation-1.1.0",
    tag_pattern = "asdf://example.org/tags/observation-1.*"
)]
struct Partial {
    target: String,
    #[asdf(extra)]
    rest: Extra,
    #[asdf(rename = "exposure_time")]
    exposure: f64,
}

#[test]
fn extra_keeps_unknown_keys_in_order_after_the_known_ones() {
    let node = map_node(
        Some(OBS_TAG),
        vec![
            ("zeta", Node::int(1)),
            ("target", Node::str("M31")),
            (
                "pipeline",
                Node::map([
                    ("version", Node::int(3)),
                    ("steps", Node::seq([Node::str("a")])),
                ]),
            ),
            ("exposure_time", float(2.0)),
            (
                "flags",
                Node::tagged(
                    "asdf://example.org/tags/flags-1.0.0",
                    Value::Seq(vec![Node::int(1)]),
                ),
            ),
        ],
    );
    let p: Partial = convert::from_node(&node).unwrap();
    assert_eq!(p.target, "M31");
    assert_eq!(
        p.rest
            .0
            .iter()
            .map(|(k, _)| k.as_str().unwrap())
            .collect::<Vec<_>>(),
        ["zeta", "pipeline", "flags"]
    );
    assert_eq!(
        p.rest.get("flags").unwrap().tag(),
        Some("asdf://example.org/tags/flags-1.0.0")
    );
    let back = convert::to_node(&p).unwrap();
    assert_eq!(
        keys(&back),
        ["target", "exposure_time", "zeta", "pipeline", "flags"]
    );
    for k in ["zeta", "pipeline", "flags"] {
        assert_eq!(back.get(k), node.get(k), "{k}");
    }

    // an extra key that a field also writes is not written twice
    let mut dup = p.clone();
    dup.rest.0.push((Node::str("target"), Node::str("other")));
    let n = convert::to_node(&dup).unwrap();
    assert_eq!(keys(&n).iter().filter(|k| **k == "target").count(), 1);
    assert_eq!(n.get("target").unwrap().as_str(), Some("M31"));

    // without a catch-all, unknown keys are ignored
    let o: Observation = convert::from_node(&map_node(
        Some(OBS_TAG),
        vec![
            ("target", Node::str("M31")),
            ("unknown", Node::int(1)),
            ("exposure_time", float(1.0)),
            (
                "meta",
                map_node(
                    None,
                    vec![("exposure", float(1.0)), ("filters", Node::seq([]))],
                ),
            ),
        ],
    ))
    .unwrap();
    assert!(convert::to_node(&o).unwrap().get("unknown").is_none());
}

#[test]
fn reading_and_writing_a_file_keeps_what_the_struct_does_not_know() {
    // a file written by "someone else", with keys the struct does not model
    let obs = map_node(
        Some("asdf://example.org/tags/observation-1.0.0"),
        vec![
            ("target", Node::str("M31")),
            ("exposure_time", float(2.0)),
            (
                "pipeline",
                Node::map([
                    ("version", Node::int(3)),
                    ("steps", Node::seq([Node::str("a"), Node::str("b")])),
                ]),
            ),
            (
                "flags",
                Node::tagged(
                    "asdf://example.org/tags/flags-1.0.0",
                    Value::Seq(vec![Node::int(1), Node::int(2)]),
                ),
            ),
        ],
    );
    let w = Writer::new(WriteOptions::default());
    let first = w.write_to_vec(&Node::map([("obs", obs)])).unwrap();
    let f1 = AsdfFile::from_bytes(first).unwrap();
    let p: Partial = f1.read_as("/obs").unwrap();

    let mut w = Writer::new(WriteOptions::default());
    let node = w.add_value(&p).unwrap();
    let second = w.write_to_vec(&Node::map([("obs", node)])).unwrap();
    dump("extra", &second);
    let f2 = AsdfFile::from_bytes(second).unwrap();
    assert_eq!(
        f2.node("/obs").unwrap().tag(),
        Some(OBS_TAG),
        "written with the current tag"
    );
    for k in [
        "/obs/target",
        "/obs/exposure_time",
        "/obs/pipeline",
        "/obs/flags",
    ] {
        assert_eq!(f2.node(k).unwrap(), f1.node(k).unwrap(), "{k}");
    }
    assert_eq!(f2.read_as::<Partial>("/obs").unwrap(), p);
}

// ------------------------------------------------------------------ arrays

#[derive(AsdfType, Debug, PartialEq)]
#[asdf(tag = "asdf://example.org/tags/image-1.0.0")]
struct Image {
    #[asdf(compression = "zlib")]
    sci: Array2<f64>,
    #[asdf(storage = "inline")]
    wavelengths: Array1<f32>,
    #[asdf(compression = "zstd", storage = "internal")]
    extensions: Vec<Array1<i32>>,
    plain: Array1<u8>,
    #[asdf(compression = "none")]
    err: Option<Array2<f32>>,
}

fn image() -> Image {
    Image {
        sci: Array2::from_shape_fn((20, 30), |(i, j)| (i * 30 + j) as f64 / 7.0),
        wavelengths: arr1(&[1.5f32, 2.5, 3.5]),
        extensions: vec![Array1::from_iter(0..500), Array1::from_iter(-5..5)],
        plain: arr1(&[1u8, 2, 3]),
        err: Some(arr2(&[[0.5f32, 0.25]])),
    }
}

#[test]
fn array_fields_use_their_compression_and_storage() {
    let img = image();
    let (back, file) = through_file("image", &img);
    assert_eq!(back, img);
    // and through every in-memory storage and a codec, with the users' helper
    asdf_core::testing::assert_round_trip(&img);
    let blocks = file.blocks();
    // sci, extensions[0], extensions[1], plain, err; wavelengths are inline
    assert_eq!(blocks.len(), 5);
    let comp: Vec<&[u8; 4]> = blocks.iter().map(|b| &b.compression).collect();
    assert_eq!(comp, [b"zlib", b"zstd", b"zstd", b"\0\0\0\0", b"\0\0\0\0"]);
    assert!(file.node("/v/wavelengths/data").is_ok(), "inline array");
    assert!(file.node("/v/sci/source").is_ok());

    // the writer's default applies to fields without options, options nest
    let mut w = Writer::new(
        WriteOptions::default().compression(CompressionChoice::Codec(Compression::Bzp2)),
    );
    let node = w.add_value(&img).unwrap();
    let bytes = w.write_to_vec(&Node::map([("v", node)])).unwrap();
    dump("image_bzp2", &bytes);
    let f = AsdfFile::from_bytes(bytes).unwrap();
    let comp: Vec<&[u8; 4]> = f.blocks().iter().map(|b| &b.compression).collect();
    assert_eq!(comp, [b"zlib", b"zstd", b"zstd", b"bzp2", b"\0\0\0\0"]);
    assert_eq!(f.read_as::<Image>("/v").unwrap(), img);

    // an outer with_options does not override a field's own options
    let mut w = Writer::new(WriteOptions::default());
    let node = {
        let mut ctx = ToContext::new(&mut w);
        let lz4 = ArrayOptions {
            compression: Some(CompressionChoice::Codec(Compression::Lz4)),
            storage: Some(Storage::Internal),
        };
        ctx.with_options(lz4, |ctx| img.to_asdf(ctx)).unwrap()
    };
    let bytes = w.write_to_vec(&Node::map([("v", node)])).unwrap();
    let f = AsdfFile::from_bytes(bytes).unwrap();
    let comp: Vec<&[u8; 4]> = f.blocks().iter().map(|b| &b.compression).collect();
    assert_eq!(comp, [b"zlib", b"zstd", b"zstd", b"lz4\0", b"\0\0\0\0"]);

    // without a writer, arrays are inline
    assert_eq!(detached(&img), img);
}

#[test]
fn external_storage_writes_a_separate_file() {
    #[derive(AsdfType, Debug, PartialEq)]
    struct Split {
        #[asdf(storage = "external")]
        big: Array1<f64>,
        small: Array1<f64>,
    }
    let s = Split {
        big: Array1::from_iter((0..100).map(f64::from)),
        small: arr1(&[1.0]),
    };
    let dir = tmpdir("external");
    let path = dir.join("split.asdf");
    let mut w = Writer::new(WriteOptions::default());
    let node = w.add_value(&s).unwrap();
    let summary = w.write_to_path(&Node::map([("v", node)]), &path).unwrap();
    assert_eq!(summary.external_files, vec![dir.join("split0000.asdf")]);
    let f = AsdfFile::open(&path).unwrap();
    assert_eq!(
        f.blocks().len(),
        1,
        "only `small` is a block of the main file"
    );
    assert_eq!(f.read_as::<Split>("/v").unwrap(), s);
    let _ = std::fs::remove_dir_all(&dir);
}

// ------------------------------------------------------------------ enums

#[derive(AsdfType, Debug, PartialEq, Clone)]
enum Mode {
    Fast,
    #[asdf(rename = "slow-mode")]
    Slow,
}

#[derive(AsdfType, Debug, PartialEq, Clone)]
#[asdf(tag = "asdf://example.org/tags/circle-1.0.0")]
struct Circle {
    radius: f64,
}

#[derive(AsdfType, Debug, PartialEq, Clone)]
enum Shape {
    None,
    Circle(Circle),
    #[asdf(
        tag = "asdf://example.org/tags/rect-1.1.0",
        tag_pattern = "asdf://example.org/tags/rect-1.*"
    )]
    Rect {
        w: f64,
        h: f64,
    },
    #[asdf(tag = "asdf://example.org/tags/point-1.0.0")]
    Point(f64, f64),
    #[asdf(tag = "asdf://example.org/tags/id-1.0.0")]
    Id(u32),
    Mode(Mode),
    Other(Node),
}

#[test]
fn unit_variants_are_strings() {
    assert_eq!(
        convert::to_node(&Mode::Fast).unwrap().as_str(),
        Some("Fast")
    );
    assert_eq!(
        convert::to_node(&Mode::Slow).unwrap().as_str(),
        Some("slow-mode")
    );
    assert_eq!(
        convert::from_node::<Mode>(&Node::str("slow-mode")).unwrap(),
        Mode::Slow
    );
    let e = convert::from_node::<Mode>(&Node::str("Slow")).unwrap_err();
    assert!(
        matches!(e.kind, ConvertErrorKind::NoVariant { ty: "Mode", .. }),
        "{e}"
    );
    assert_eq!(
        e.to_string(),
        "/: no variant of Mode matches string \"Slow\""
    );
    // a tagged string is not a unit variant
    let tagged = Node::tagged("tag:x", Value::Str("Fast".into()));
    assert!(convert::from_node::<Mode>(&tagged).is_err());
    assert!(Mode::accepts_tag(None) && !Mode::accepts_tag(Some("tag:x")));
}

#[test]
fn variants_are_chosen_by_tag() {
    let all = [
        Shape::None,
        Shape::Circle(Circle { radius: 2.0 }),
        Shape::Rect { w: 1.0, h: 2.0 },
        Shape::Point(3.0, 4.0),
        Shape::Id(9),
        Shape::Mode(Mode::Slow),
        Shape::Other(Node::int(5)),
    ];
    let nodes: Vec<Node> = all.iter().map(|s| convert::to_node(s).unwrap()).collect();
    assert_eq!(nodes[0].as_str(), Some("None"));
    assert_eq!(nodes[1].tag(), Some("asdf://example.org/tags/circle-1.0.0"));
    assert_eq!(nodes[2].tag(), Some("asdf://example.org/tags/rect-1.1.0"));
    assert_eq!(keys(&nodes[2]), ["w", "h"]);
    assert_eq!(nodes[3].tag(), Some("asdf://example.org/tags/point-1.0.0"));
    assert_eq!(nodes[3].as_seq().unwrap().len(), 2);
    assert_eq!(nodes[4].tag(), Some("asdf://example.org/tags/id-1.0.0"));
    assert_eq!(nodes[4].as_i64(), Some(9));
    assert_eq!(nodes[5].as_str(), Some("slow-mode"));
    for (s, n) in all.iter().zip(&nodes) {
        assert_eq!(&convert::from_node::<Shape>(n).unwrap(), s);
    }
    // an older rect
    let old = map_node(
        Some("asdf://example.org/tags/rect-1.0.0"),
        vec![("w", float(5.0)), ("h", float(6.0))],
    );
    assert_eq!(
        convert::from_node::<Shape>(&old).unwrap(),
        Shape::Rect { w: 5.0, h: 6.0 }
    );
    // an unknown tag falls through to the catch-all newtype variant
    let unknown = Node::tagged(
        "asdf://example.org/tags/blob-1.0.0",
        Value::Int(asdf_core::Integer::Small(1)),
    );
    assert_eq!(
        convert::from_node::<Shape>(&unknown).unwrap(),
        Shape::Other(unknown.clone())
    );
    // a matching variant's errors are reported, not retried
    let bad = map_node(
        Some("asdf://example.org/tags/rect-1.1.0"),
        vec![("w", float(1.0))],
    );
    let e = convert::from_node::<Shape>(&bad).unwrap_err();
    assert_eq!(e.to_string(), "/: missing key `h`");

    // a tagged node for a tagged-only inner type is final: a broken circle is an error,
    // not an `Other`
    let broken = map_node(Some("asdf://example.org/tags/circle-1.0.0"), vec![]);
    let e = convert::from_node::<Shape>(&broken).unwrap_err();
    assert_eq!(e.to_string(), "/: missing key `radius`");

    // through a file
    let (back, _) = through_file("enum", &all.to_vec());
    assert_eq!(back, all.to_vec());
}

#[test]
fn untagged_newtype_variants_are_tried_in_order() {
    #[derive(AsdfType, Debug, PartialEq)]
    enum Value2 {
        Small(u8),
        Flag(bool),
        Text(String),
    }
    assert_eq!(
        convert::from_node::<Value2>(&Node::int(3)).unwrap(),
        Value2::Small(3)
    );
    let t = Node::new(Value::Bool(true));
    assert_eq!(
        convert::from_node::<Value2>(&t).unwrap(),
        Value2::Flag(true)
    );
    assert_eq!(
        convert::from_node::<Value2>(&Node::str("x")).unwrap(),
        Value2::Text("x".into())
    );
    // none converts: the first variant's error
    let e = convert::from_node::<Value2>(&Node::int(300)).unwrap_err();
    assert!(
        matches!(e.kind, ConvertErrorKind::OutOfRange { ty: "u8", .. }),
        "{e}"
    );
}

#[test]
fn no_variant_matches() {
    #[derive(AsdfType, Debug, PartialEq)]
    enum Strict {
        A,
        Circle(Circle),
        #[asdf(tag = "asdf://example.org/tags/pair-1.0.0")]
        Pair(u8, u8),
    }
    let e = convert::from_node::<Strict>(&Node::tagged("tag:other", Value::Null)).unwrap_err();
    assert!(
        matches!(&e.kind, ConvertErrorKind::NoVariant { ty: "Strict", found } if found.contains("tag:other")),
        "{e}"
    );
    let e = convert::from_node::<Strict>(&Node::int(3)).unwrap_err();
    assert!(matches!(e.kind, ConvertErrorKind::NoVariant { .. }), "{e}");
    assert!(Strict::accepts_tag(None));
    assert!(Strict::accepts_tag(Some(
        "asdf://example.org/tags/circle-1.0.0"
    )));
    assert!(Strict::accepts_tag(Some(
        "asdf://example.org/tags/pair-1.0.0"
    )));
    assert!(!Strict::accepts_tag(Some("tag:other")));
    let e = convert::from_node::<Strict>(&Node::tagged(
        "asdf://example.org/tags/pair-1.0.0",
        Value::Seq(vec![Node::int(1)]),
    ))
    .unwrap_err();
    assert!(
        matches!(
            e.kind,
            ConvertErrorKind::Length {
                expected: 2,
                found: 1
            }
        ),
        "{e}"
    );
}

// ------------------------------------------------------------------ struct shapes

#[derive(AsdfType, Debug, PartialEq, Clone, Copy)]
struct Meters(f64);

#[derive(AsdfType, Debug, PartialEq, Clone)]
#[asdf(tag = "asdf://example.org/tags/angle-1.0.0")]
struct Angle(f64);

#[derive(AsdfType, Debug, PartialEq, Clone)]
struct MaybeName(Option<String>);

#[derive(AsdfType, Debug, PartialEq, Clone)]
struct Range(u32, u32, #[asdf(compression = "zlib")] Array1<f64>);

#[derive(AsdfType, Debug, PartialEq, Clone)]
#[asdf(tag = "asdf://example.org/tags/marker-1.0.0")]
struct Marker;

#[derive(AsdfType, Debug, PartialEq, Clone)]
struct Shapes {
    length: Meters,
    angle: Angle,
    name: MaybeName,
    range: Range,
    marker: Marker,
}

#[test]
fn newtype_tuple_and_unit_structs() {
    // transparent newtype
    assert_eq!(convert::to_node(&Meters(2.5)).unwrap(), float(2.5));
    assert_eq!(
        convert::from_node::<Meters>(&float(1.0)).unwrap(),
        Meters(1.0)
    );
    // tagged newtype: the inner value with the tag
    let n = convert::to_node(&Angle(0.5)).unwrap();
    assert_eq!(n.tag(), Some("asdf://example.org/tags/angle-1.0.0"));
    assert_eq!(n.as_f64(), Some(0.5));
    assert!(
        convert::from_node::<Angle>(&float(0.5)).is_err(),
        "untagged"
    );
    // a newtype forwards absence: a None inside is left out
    let s = Shapes {
        length: Meters(3.0),
        angle: Angle(1.0),
        name: MaybeName(None),
        range: Range(1, 5, arr1(&[0.5, 1.5])),
        marker: Marker,
    };
    let n = convert::to_node(&s).unwrap();
    assert_eq!(keys(&n), ["length", "angle", "range", "marker"]);
    assert_eq!(n.pointer("/range/1").unwrap().as_i64(), Some(5));
    assert_eq!(
        n.get("marker").unwrap().tag(),
        Some("asdf://example.org/tags/marker-1.0.0")
    );
    assert_eq!(n.get("marker").unwrap().as_map().map(<[_]>::len), Some(0));
    assert_eq!(detached(&s), s);
    let (back, file) = through_file("shapes", &s);
    assert_eq!(back, s);
    assert_eq!(&file.blocks()[0].compression, b"zlib");

    let named = Shapes {
        name: MaybeName(Some("x".into())),
        ..s
    };
    assert_eq!(detached(&named), named);

    // a sequence of the wrong length
    let e = convert::from_node::<Range>(&Node::seq([Node::int(1)])).unwrap_err();
    assert!(
        matches!(
            e.kind,
            ConvertErrorKind::Length {
                expected: 3,
                found: 1
            }
        ),
        "{e}"
    );
    let e = convert::from_node::<Range>(&Node::int(1)).unwrap_err();
    assert!(
        e.to_string()
            .starts_with("/: expected a sequence of 3 items"),
        "{e}"
    );
}

// ------------------------------------------------------------------ generics

#[derive(AsdfType, Debug, PartialEq, Clone)]
#[asdf(tag = "asdf://example.org/tags/pair-1.0.0")]
struct Pair<A, B> {
    first: A,
    second: B,
    #[asdf(skip)]
    hidden: std::marker::PhantomData<A>,
}

#[derive(AsdfType, Debug, PartialEq, Clone)]
struct Series<T, const N: usize>
where
    T: Clone,
{
    values: [T; N],
    #[asdf(default)]
    extra: Vec<T>,
}

#[derive(AsdfType, Debug, PartialEq)]
enum Either<L, R> {
    #[asdf(tag = "asdf://example.org/tags/left-1.0.0")]
    Left(L),
    #[asdf(tag = "asdf://example.org/tags/right-1.0.0")]
    Right { value: R },
}

/// A lifetime parameter is carried over (a write-and-read type cannot hold borrowed
/// fields, but may keep borrowed helpers it skips).
#[derive(AsdfType, Debug, PartialEq)]
struct WithLifetime<'a> {
    value: u8,
    #[asdf(skip)]
    source: Option<&'a str>,
}

/// Recursive types need no extra bounds.
#[derive(AsdfType, Debug, PartialEq, Clone)]
struct Tree<T> {
    value: T,
    children: Vec<Tree<T>>,
}

#[test]
fn lifetimes_and_recursion() {
    let text = String::from("borrowed");
    let w = WithLifetime {
        value: 3,
        source: Some(&text),
    };
    let back: WithLifetime<'_> = detached(&w);
    assert_eq!(back.value, 3);
    assert_eq!(back.source, None);

    let t = Tree {
        value: 1u16,
        children: vec![
            Tree {
                value: 2,
                children: vec![],
            },
            Tree {
                value: 3,
                children: vec![Tree {
                    value: 4,
                    children: vec![],
                }],
            },
        ],
    };
    let n = convert::to_node(&t).unwrap();
    assert_eq!(
        n.pointer("/children/1/children/0/value").unwrap().as_i64(),
        Some(4)
    );
    assert_eq!(detached(&t), t);
    let e = convert::from_node::<Tree<u16>>(&Node::map([
        ("value", Node::int(1)),
        (
            "children",
            Node::seq([Node::map([
                ("value", Node::int(-1)),
                ("children", Node::seq([])),
            ])]),
        ),
    ]))
    .unwrap_err();
    assert_eq!(e.path, "/children/0/value");
}

#[test]
fn generic_types() {
    let p = Pair {
        first: 1u8,
        second: "two".to_string(),
        hidden: std::marker::PhantomData,
    };
    assert_eq!(detached(&p), p);
    let nested = Pair {
        first: p.clone(),
        second: vec![Meters(1.0)],
        hidden: std::marker::PhantomData,
    };
    let (back, _) = through_file("generic", &nested);
    assert_eq!(back, nested);

    let s = Series {
        values: [1i64, 2, 3],
        extra: vec![],
    };
    assert_eq!(detached(&s), s);
    let e: Either<u8, String> = Either::Right { value: "r".into() };
    assert_eq!(detached(&e), e);
    let l: Either<u8, String> = Either::Left(4);
    assert_eq!(detached(&l), l);
}

// ------------------------------------------------------------------ schema hook

#[derive(AsdfType, Debug, PartialEq)]
#[asdf(
    tag = "asdf://example.org/tags/checked-1.0.0",
    schema = "asdf://example.org/schemas/checked-1.0.0"
)]
struct Checked {
    a: u32,
}

#[derive(AsdfType, Debug, PartialEq)]
#[asdf(schema = "asdf://example.org/schemas/choice-1.0.0")]
enum CheckedChoice {
    A,
    #[asdf(
        tag = "asdf://example.org/tags/b-1.0.0",
        schema = "asdf://example.org/schemas/b-1.0.0"
    )]
    B {
        x: u8,
    },
}

fn register_check_schemas() {
    let checked = r#"
$schema: http://stsci.edu/schemas/yaml-schema/draft-01
id: asdf://example.org/schemas/checked-1.0.0
type: object
properties:
  a: {type: integer, maximum: 10}
required: [a]
"#;
    let choice = r#"
$schema: http://stsci.edu/schemas/yaml-schema/draft-01
id: asdf://example.org/schemas/choice-1.0.0
anyOf:
  - {type: string}
  - {type: object}
"#;
    let b = r#"
$schema: http://stsci.edu/schemas/yaml-schema/draft-01
id: asdf://example.org/schemas/b-1.0.0
type: object
properties:
  x: {type: integer, minimum: 1}
"#;
    asdf_core::schema::register_schema("asdf://example.org/schemas/checked-1.0.0", checked)
        .unwrap();
    asdf_core::schema::register_schema("asdf://example.org/schemas/choice-1.0.0", choice).unwrap();
    asdf_core::schema::register_schema("asdf://example.org/schemas/b-1.0.0", b).unwrap();
}

#[test]
fn a_schema_attribute_validates_both_ways() {
    register_check_schemas();
    let c = Checked { a: 1 };
    assert_eq!(detached(&c), c);
    for v in [CheckedChoice::A, CheckedChoice::B { x: 2 }] {
        assert_eq!(detached(&v), v);
    }

    // writing a value its schema rejects fails, naming the schema and the problem
    let e = convert::to_node(&Checked { a: 11 }).unwrap_err();
    assert_eq!(e.path, "/");
    let text = e.to_string();
    assert!(
        text.contains("checked-1.0.0") && text.contains("/a: maximum"),
        "{text}"
    );
    let e = convert::to_node(&CheckedChoice::B { x: 0 })
        .unwrap_err()
        .to_string();
    assert!(e.contains("b-1.0.0") && e.contains("/x: minimum"), "{e}");

    // reading validates before converting
    let node = map_node(
        Some("asdf://example.org/tags/checked-1.0.0"),
        vec![("a", Node::int(12))],
    );
    let e = convert::from_node::<Checked>(&node).unwrap_err();
    assert!(matches!(e.kind, ConvertErrorKind::Schema { .. }), "{e}");
    let inside = Node::map([("inner", node)]);
    let e = convert::from_node::<std::collections::BTreeMap<String, Checked>>(&inside).unwrap_err();
    assert_eq!(e.path, "/inner");
    // the problem's path is absolute (from the root of what is read), the message one line
    let text = e.to_string();
    assert!(text.contains("/inner/a: maximum"), "{text}");
    assert!(!text.contains('\n'), "{text}");
    // on write, a schema error at the value's root has no "/:" of its own
    let text = convert::to_node(&Checked { a: 11 })
        .unwrap_err()
        .to_string();
    assert!(text.starts_with("does not validate against"), "{text}");
}

// ------------------------------------------------------------------ hand-written leaves

/// A type with its own impls inside a derived struct: the derive only needs the traits.
#[derive(Debug, PartialEq)]
struct Celsius(f64);

impl ToAsdf for Celsius {
    fn to_asdf<'a>(&'a self, _: &mut ToContext<'_, 'a>) -> Result<Node, ConvertError> {
        Ok(Node::str(format!("{} C", self.0)))
    }
}

impl FromAsdf for Celsius {
    fn from_asdf(
        node: &Node,
        ctx: &mut asdf_core::convert::FromContext<'_>,
    ) -> Result<Self, ConvertError> {
        node.as_str()
            .and_then(|s| s.strip_suffix(" C"))
            .and_then(|s| s.parse().ok())
            .map(Celsius)
            .ok_or_else(|| ctx.error(ConvertErrorKind::Custom("not a temperature".into())))
    }
}

#[test]
fn hand_written_impls_inside_derived_types() {
    #[derive(AsdfType, Debug, PartialEq)]
    struct Weather {
        temps: Vec<Celsius>,
    }
    let w = Weather {
        temps: vec![Celsius(1.5), Celsius(-2.0)],
    };
    let n = convert::to_node(&w).unwrap();
    assert_eq!(n.pointer("/temps/1").unwrap().as_str(), Some("-2 C"));
    assert_eq!(detached(&w), w);
    let bad = Node::map([("temps", Node::seq([Node::str("1 C"), Node::str("hot")]))]);
    let e = convert::from_node::<Weather>(&bad).unwrap_err();
    assert_eq!(e.to_string(), "/temps/1: not a temperature");
}

/// `with = "module"`: a field converted by a module's `to_asdf`/`from_asdf` functions.
mod as_text {
    use asdf_core::convert::{ConvertError, ConvertErrorKind, FromContext, ToContext};
    use asdf_core::Node;

    pub fn to_asdf<'a>(v: &'a u64, _ctx: &mut ToContext<'_, 'a>) -> Result<Node, ConvertError> {
        Ok(Node::str(format!("#{v}")))
    }

    pub fn from_asdf(node: &Node, ctx: &mut FromContext<'_>) -> Result<u64, ConvertError> {
        node.as_str()
            .and_then(|s| s.strip_prefix('#'))
            .and_then(|s| s.parse().ok())
            .ok_or_else(|| ctx.error(ConvertErrorKind::Custom("not a #number".into())))
    }
}

/// Not `ToAsdf`/`FromAsdf` itself: only the `with` module converts it.
#[derive(Debug, PartialEq, Default)]
struct Opaque(u64);

mod opaque {
    use asdf_core::convert::{ConvertError, FromContext, ToContext};
    use asdf_core::Node;

    pub fn to_asdf<'a>(
        v: &'a super::Opaque,
        _ctx: &mut ToContext<'_, 'a>,
    ) -> Result<Node, ConvertError> {
        Ok(Node::int(i128::from(v.0)))
    }

    pub fn from_asdf(
        node: &Node,
        ctx: &mut FromContext<'_>,
    ) -> Result<super::Opaque, ConvertError> {
        let v: u64 = asdf_core::FromAsdf::from_asdf(node, ctx)?;
        Ok(super::Opaque(v))
    }
}

#[test]
fn with_module_converts_a_field() {
    #[derive(AsdfType, Debug, PartialEq)]
    struct Ids {
        #[asdf(with = "as_text")]
        id: u64,
        #[asdf(with = "opaque", default)]
        other: Opaque,
        #[asdf(with = "as_text")]
        more: u64,
    }
    #[derive(AsdfType, Debug, PartialEq)]
    struct Wrapped(#[asdf(with = "opaque")] Opaque);

    let ids = Ids {
        id: 5,
        other: Opaque(6),
        more: 0,
    };
    let n = convert::to_node(&ids).unwrap();
    assert_eq!(n.get("id").unwrap().as_str(), Some("#5"));
    assert_eq!(n.get("other").unwrap().as_i64(), Some(6));
    assert_eq!(detached(&ids), ids);
    let (back, _) = through_file("with", &ids);
    assert_eq!(back, ids);

    // a missing key: `default` applies; without it, an error
    let sparse = Node::map([("id", Node::str("#1")), ("more", Node::str("#2"))]);
    assert_eq!(convert::from_node::<Ids>(&sparse).unwrap().other, Opaque(0));
    let e = convert::from_node::<Ids>(&Node::map([("id", Node::str("#1"))])).unwrap_err();
    assert_eq!(e.to_string(), "/: missing key `more`");
    let e = convert::from_node::<Ids>(&Node::map([("id", Node::str("1"))])).unwrap_err();
    assert_eq!(e.to_string(), "/id: not a #number");

    assert_eq!(
        convert::to_node(&Wrapped(Opaque(3))).unwrap().as_i64(),
        Some(3)
    );
    assert_eq!(detached(&Wrapped(Opaque(3))), Wrapped(Opaque(3)));
}

#[test]
fn arrays_under_unknown_keys_survive_a_read_write_cycle() {
    let mut w = Writer::new(WriteOptions::default());
    let data = w.add_array(arr1(&[1.0f64, 2.0, 3.0]));
    let obs = map_node(
        Some(OBS_TAG),
        vec![
            ("target", Node::str("M31")),
            ("exposure_time", float(2.0)),
            ("calibration", Node::map([("flat", data)])),
        ],
    );
    let bytes = w.write_to_vec(&Node::map([("obs", obs)])).unwrap();
    let f1 = AsdfFile::from_bytes(bytes).unwrap();
    let p: Partial = f1.read_as("/obs").unwrap();

    // the unknown ndarray node points into the file it was read from: a plain writer
    // refuses it, a writer made from that file copies the data
    let mut w = Writer::new(WriteOptions::default());
    let node = w.add_value(&p).unwrap();
    let err = w
        .write_to_vec(&Node::map([("obs", node)]))
        .unwrap_err()
        .to_string();
    assert_eq!(
        err,
        "/obs/calibration/flat: ndarray with block data but the writer has no source file"
    );
    let mut w = Writer::from_file(&f1, WriteOptions::default());
    let node = w.add_value(&p).unwrap();
    let bytes = w.write_to_vec(&Node::map([("obs", node)])).unwrap();
    dump("extra_array", &bytes);
    let f2 = AsdfFile::from_bytes(bytes).unwrap();
    let flat: Array1<f64> = f2.read_as("/obs/calibration/flat").unwrap();
    assert_eq!(flat, arr1(&[1.0, 2.0, 3.0]));
}
