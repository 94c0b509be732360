//! The one-call functions: `asdf_core::write`, `write_at`, `read`, `update_at`. An updated
//! file keeps what the value does not replace (other arrays and their codecs, unknown
//! tags, history, the standard version); failures leave the file as it was. With
//! `ASDF_WRITE_OUT`, python asdf opens the updated files (`tests/oracle/check_written.py`).

use crate::common;

use asdf_core::write::Compression;
use asdf_core::write::{
    ArrayOptions, CompressionChoice, StandardVersion, WriteError, WriteOptions, Writer,
};
use asdf_core::{tree, AsdfFile, AsdfType, Error, Node, Value};
use ndarray::{Array1, Array2};

#[derive(AsdfType, Debug, Clone, PartialEq)]
#[asdf(tag = "asdf://example.org/tags/frame-1.0.0")]
struct Frame {
    exposure: f64,
    pixels: Array2<f32>,
}

fn frame(exposure: f64) -> Frame {
    Frame {
        exposure,
        pixels: Array2::from_shape_fn((8, 5), |(i, j)| (i * 10 + j) as f32 + exposure as f32),
    }
}

/// A fresh folder of this test's own, removed at its end.
fn scratch(name: &str) -> common::Scratch {
    common::Scratch::new(&format!("one-call-{name}"))
}

#[test]
fn a_tree_written_in_one_call_reads_back() {
    let dir = scratch("tree");
    let path = dir.join("catalog.asdf");
    asdf_core::write(
        &path,
        &tree!({"name": "M31", "count": 3, "tags": ["a", "b"]}),
    )
    .unwrap();
    assert_eq!(asdf_core::read::<String>(&path, "/name").unwrap(), "M31");
    assert_eq!(asdf_core::read::<i64>(&path, "/count").unwrap(), 3);
    let file = AsdfFile::open(&path).unwrap();
    assert_eq!(file.node("/tags/1").unwrap().as_str(), Some("b"));
    // the writer's own keys are there, as python writes them
    assert!(file.node("/asdf_library").is_ok());
}

#[test]
fn a_typed_value_goes_under_a_key_and_reads_back() {
    let dir = scratch("typed");
    let path = dir.join("frame.asdf");
    let f = frame(30.0);
    asdf_core::write_at(&path, "/obs/frame", &f).unwrap();
    let back: Frame = asdf_core::read(&path, "/obs/frame").unwrap();
    assert_eq!(back, f);
    let file = AsdfFile::open(&path).unwrap();
    assert_eq!(
        file.node("/obs/frame").unwrap().tag(),
        Some("asdf://example.org/tags/frame-1.0.0")
    );
}

#[test]
fn a_tagged_value_cannot_be_the_root_and_nothing_is_written() {
    let dir = scratch("root");
    let path = dir.join("root.asdf");
    let e = asdf_core::write(&path, &frame(1.0)).unwrap_err();
    let text = e.to_string();
    assert!(matches!(e, WriteError::BadTree { .. }), "{e:?}");
    assert!(
        text.contains("asdf://example.org/tags/frame-1.0.0"),
        "{text}"
    );
    assert!(text.contains("write_at"), "{text}");
    assert!(!path.exists());
    let e = asdf_core::write(&path, &vec![1, 2]).unwrap_err();
    assert!(e.to_string().contains("a sequence"), "{e}");
}

/// A file with a zlib array, an unknown tagged node and a frame, under standard 1.5.0.
fn rich_file(path: &std::path::Path) {
    let keep = Array1::from_iter((0..1000).map(|i| i as f64 * 0.25));
    let f = frame(10.0);
    let mut w = Writer::new(WriteOptions::default().standard(StandardVersion::V1_5_0));
    let kept = w.add_array_with(
        &keep,
        ArrayOptions {
            compression: Some(CompressionChoice::Codec(Compression::Zlib)),
            storage: None,
        },
    );
    let fnode = w.add_value(&f).unwrap();
    let unknown = Node::tagged(
        "tag:example.org:unknown/widget-2.0.0",
        Value::Map(vec![(Node::str("knob"), Node::int(11))]),
    );
    w.add_history_entry("made by the test");
    let root = tree!({"keep": kept, "frame": fnode, "widget": unknown});
    w.write_to_path(&root, path).unwrap();
}

#[test]
fn update_at_replaces_one_place_and_keeps_the_rest_of_the_file() {
    let dir = scratch("update");
    let path = dir.join("rich.asdf");
    rich_file(&path);
    let before = AsdfFile::open(&path).unwrap();
    let keep_before = before.array::<f64>("/keep").unwrap();
    drop(before);

    let mut f: Frame = asdf_core::read(&path, "/frame").unwrap();
    f.exposure = 45.0;
    f.pixels.mapv_inplace(|v| v * 2.0);
    asdf_core::update_at(&path, "/frame", &f).unwrap();
    asdf_core::update_at(&path, "/meta/observer", &"Vera").unwrap();

    let file = AsdfFile::options()
        .verify_checksums(true)
        .open(&path)
        .unwrap();
    assert_eq!(file.read_as::<Frame>("/frame").unwrap(), f);
    assert_eq!(file.node("/meta/observer").unwrap().as_str(), Some("Vera"));
    assert_eq!(file.array::<f64>("/keep").unwrap(), keep_before);
    // the kept array keeps its codec, the unknown tag its content, the history its entry,
    // the file its standard version
    let keep_block = file.node("/keep/source").unwrap().as_i64().unwrap();
    let header = &file.blocks()[keep_block as usize];
    assert_eq!(&header.compression, b"zlib");
    let widget = file.node("/widget").unwrap();
    assert_eq!(widget.tag(), Some("tag:example.org:unknown/widget-2.0.0"));
    assert_eq!(widget.get("knob").and_then(Node::as_i64), Some(11));
    let history = file.node("/history/entries/0/description").unwrap();
    assert_eq!(history.as_str(), Some("made by the test"));
    assert_eq!(file.standard_version(), StandardVersion::V1_5_0);
    common::dump_for_oracle("one_call_updated", &std::fs::read(&path).unwrap());
}

#[test]
fn a_failed_update_leaves_the_file_as_it_was() {
    let dir = scratch("failed");
    let path = dir.join("rich.asdf");
    rich_file(&path);
    let bytes = std::fs::read(&path).unwrap();
    // through a scalar: the edit names the step
    let e = asdf_core::update_at(&path, "/widget/knob/x", &1).unwrap_err();
    assert!(
        matches!(&e, WriteError::Edit(asdf_core::yaml::EditError::NotFound { at, .. }) if at == "/widget/knob/x"),
        "{e:?}"
    );
    // a value that does not validate: core/software needs a name
    let software = Node::tagged(
        "tag:stsci.edu:asdf/core/software-1.0.0",
        Value::Map(vec![(Node::str("version"), Node::str("1.0"))]),
    );
    let e = asdf_core::update_at(&path, "/made_by", &software).unwrap_err();
    assert!(matches!(e, WriteError::Invalid(_)), "{e:?}");
    assert!(e.to_string().contains("name"), "{e}");
    assert_eq!(
        std::fs::read(&path).unwrap(),
        bytes,
        "the file is untouched"
    );
    // a file that is not there: the reader's error, inside the writer's
    let missing = dir.join("missing.asdf");
    let e = asdf_core::update_at(&missing, "/a", &1).unwrap_err();
    assert!(
        matches!(&e, WriteError::Read(r) if matches!(**r, Error::Io { .. })),
        "{e:?}"
    );
    assert!(e.to_string().contains("missing.asdf"), "{e}");
    assert!(!missing.exists());
}

#[derive(AsdfType, Debug, Clone, PartialEq)]
struct LazyProduct {
    label: String,
    #[asdf(compression = "input")]
    sci: asdf_core::convert::LazyArray<f64, ndarray::Ix1>,
}

/// `compression = "input"` on a lazy array: an update keeps the block's codec (lz4 here), and
/// the data, without the program loading it.
#[test]
fn a_lazy_array_with_input_compression_keeps_its_codec_through_update_at() {
    let dir = scratch("lazy");
    let path = dir.join("lazy.asdf");
    let data = Array1::from_iter((0..4096).map(|i| (i % 17) as f64));
    let mut w = Writer::new(WriteOptions::default());
    let sci = w.add_array_with(
        &data,
        ArrayOptions {
            compression: Some(CompressionChoice::Codec(Compression::Lz4)),
            storage: None,
        },
    );
    w.write_to_path(&tree!({"product": {"label": "a", "sci": sci}}), &path)
        .unwrap();
    let mut p: LazyProduct = asdf_core::read(&path, "/product").unwrap();
    p.label = "b".into();
    asdf_core::update_at(&path, "/product", &p).unwrap();
    let file = AsdfFile::open(&path).unwrap();
    assert_eq!(file.node("/product/label").unwrap().as_str(), Some("b"));
    assert_eq!(
        file.array::<f64>("/product/sci")
            .unwrap()
            .into_dimensionality()
            .unwrap(),
        data
    );
    let block = file.node("/product/sci/source").unwrap().as_i64().unwrap();
    assert_eq!(&file.blocks()[block as usize].compression, b"lz4\0");
}

/// The YAML tree of the ASDF file at `path`, as its bytes spell it (up to the `...` line).
fn tree_text(path: &std::path::Path) -> String {
    let bytes = std::fs::read(path).unwrap();
    let end = bytes
        .windows(5)
        .position(|w| w == b"\n...\n")
        .expect("the tree's end marker");
    String::from_utf8(bytes[..end].to_vec()).unwrap()
}

/// A file with an inline array (`small`), an array in a block (`big`) and a scalar.
fn mixed_file(path: &std::path::Path, big: &Array1<f64>) {
    let small = Array1::from(vec![7i32, 8, 9]);
    let mut w = Writer::new(WriteOptions::default());
    let small = w.add_array_with(
        &small,
        ArrayOptions {
            compression: None,
            storage: Some(asdf_core::array::Storage::Inline),
        },
    );
    let big = w.add_array(big);
    w.write_to_path(&tree!({"count": 1, "small": small, "big": big}), path)
        .unwrap();
}

/// Python asdf's `AsdfFile.update()` keeps inline arrays inline: so do `update_at` and
/// `write::update` with default options (each array where it is), and python asdf reads the
/// updated file (`ASDF_WRITE_OUT`) with the same arrays.
#[test]
fn an_update_keeps_inline_arrays_inline_and_blocks_in_blocks() {
    let dir = scratch("placement");
    let path = dir.join("mixed.asdf");
    let big = Array1::from_iter((0..1000).map(|i| i as f64 * 0.5));
    mixed_file(&path, &big);
    let before = tree_text(&path);
    assert!(before.contains("data: [7, 8, 9]"), "{before}");
    assert_eq!(AsdfFile::open(&path).unwrap().blocks().len(), 1);

    asdf_core::update_at(&path, "/count", &2).unwrap();
    let text = tree_text(&path);
    assert!(text.contains("count: 2"), "{text}");
    assert!(
        text.contains("data: [7, 8, 9]"),
        "the inline array stays inline:\n{text}"
    );
    let file = AsdfFile::open(&path).unwrap();
    assert_eq!(file.blocks().len(), 1, "no block added:\n{text}");
    assert!(file.node("/small/source").is_err(), "{text}");
    assert_eq!(file.node("/big/source").unwrap().as_i64(), Some(0));
    assert_eq!(
        file.array::<i32>("/small").unwrap(),
        Array1::from(vec![7i32, 8, 9]).into_dyn()
    );
    assert_eq!(file.array::<f64>("/big").unwrap(), big.clone().into_dyn());
    common::dump_for_oracle(
        "one_call_update_keeps_inline",
        &std::fs::read(&path).unwrap(),
    );
    drop(file);

    // write::update with the default options: the same rule
    let mut tree = AsdfFile::open(&path).unwrap().tree().clone();
    tree.set_creating("/count", Node::int(3)).unwrap();
    asdf_core::write::update(&path, &tree, WriteOptions::default()).unwrap();
    let text = tree_text(&path);
    assert!(
        text.contains("count: 3") && text.contains("data: [7, 8, 9]"),
        "{text}"
    );
    assert_eq!(AsdfFile::open(&path).unwrap().blocks().len(), 1);

    // options that say otherwise are followed: every array in a block
    let tree = AsdfFile::open(&path).unwrap().tree().clone();
    let opts = WriteOptions::default().storage(asdf_core::array::Storage::Internal);
    asdf_core::write::update(&path, &tree, opts).unwrap();
    let file = AsdfFile::open(&path).unwrap();
    assert_eq!(file.blocks().len(), 2, "{}", tree_text(&path));
    assert!(!tree_text(&path).contains("data: ["));
    assert_eq!(
        file.array::<i32>("/small").unwrap(),
        Array1::from(vec![7i32, 8, 9]).into_dyn()
    );
}

/// An array in an external file stays in an external file through an update (the file's
/// own blocks unchanged in number).
#[test]
fn an_update_keeps_external_arrays_external() {
    let dir = scratch("external");
    let path = dir.join("ext.asdf");
    let far = Array1::from_iter((0..64).map(|i| i as u16));
    let mut w = Writer::new(WriteOptions::default());
    let node = w.add_array_with(
        &far,
        ArrayOptions {
            compression: None,
            storage: Some(asdf_core::array::Storage::External),
        },
    );
    w.write_to_path(&tree!({"count": 1, "far": node}), &path)
        .unwrap();
    let source = |p: &std::path::Path| {
        let f = AsdfFile::open(p).unwrap();
        f.node("/far/source").unwrap().as_str().map(str::to_string)
    };
    let name = source(&path).expect("an external source");
    asdf_core::update_at(&path, "/count", &2).unwrap();
    let file = AsdfFile::open(&path).unwrap();
    assert_eq!(file.blocks().len(), 0);
    assert_eq!(source(&path).as_deref(), Some(name.as_str()));
    assert!(dir.join(&name).is_file());
    assert_eq!(file.array::<u16>("/far").unwrap(), far.into_dyn());
    assert_eq!(file.node("/count").unwrap().as_i64(), Some(2));
}
