//! Errors read well alone: a plain `{e}` is one line saying what, where and why (causes
//! included), `{e:?}` is the derived form (variant and fields), `display_chain` repeats
//! nothing, and one mistake reads the same through every API.

use asdf_core::write::Compression;
use asdf_core::write::{ArrayOptions, CompressionChoice, WriteOptions, Writer};
use asdf_core::{display_chain, tree, AsdfFile};

fn file_with(compression: Option<Compression>) -> Vec<u8> {
    let data = ndarray::Array1::from_iter((0..2000).map(|i| i as f64));
    let mut w = Writer::new(WriteOptions::default());
    let node = w.add_array_with(
        &data,
        ArrayOptions {
            compression: compression.map(CompressionChoice::Codec),
            storage: None,
        },
    );
    w.write_to_vec(&tree!({"x": node})).unwrap()
}

fn one_line(text: &str) {
    assert!(!text.contains('\n'), "one line: {text:?}");
}

#[test]
fn a_truncated_block_says_which_block_where_and_why() {
    let bytes = file_with(None);
    let start = bytes.windows(4).position(|w| w == b"\xd3BLK").unwrap();
    let cut = bytes[..start + 20].to_vec();
    let e = AsdfFile::from_bytes(cut).unwrap_err();
    let text = e.to_string();
    one_line(&text);
    assert!(
        text.starts_with("malformed file layout: block 0 at offset"),
        "{text}"
    );
    assert!(text.contains("header truncated"), "{text}");
    // `{:?}` is the derived form, for programmers: the variant and its fields
    assert!(format!("{e:?}").starts_with("Layout("), "{e:?}");
    assert_ne!(format!("{e:?}"), text);
    assert_eq!(display_chain(&e), text, "the chain repeats nothing");
}

#[test]
fn a_corrupt_compressed_block_names_block_offset_and_codec() {
    let mut bytes = file_with(Some(Compression::Zlib));
    let start = bytes.windows(4).position(|w| w == b"\xd3BLK").unwrap();
    // the header is 6 + 48 bytes; damage the zlib stream just after it
    for b in &mut bytes[start + 54 + 10..start + 54 + 40] {
        *b ^= 0x5a;
    }
    let file = AsdfFile::options()
        .verify_checksums(false)
        .open_bytes(bytes, ".")
        .unwrap();
    let e = file.array::<f64>("/x").unwrap_err();
    let text = e.to_string();
    one_line(&text);
    assert!(
        text.starts_with(&format!("block 0 at byte {start}: cannot decode: ")),
        "{text}"
    );
    assert!(text.contains("zlib"), "{text}");
    assert_eq!(display_chain(&e), text);
}

#[test]
fn a_datatype_mismatch_reads_the_same_through_array_and_read_as() {
    let file = AsdfFile::from_bytes(file_with(None)).unwrap();
    let a = file.array::<f32>("/x").unwrap_err().to_string();
    let b = file
        .read_as::<ndarray::Array1<f32>>("/x")
        .unwrap_err()
        .to_string();
    assert_eq!(a, b);
    assert_eq!(a, "/x: datatype mismatch: expected float32, found float64");
}

#[test]
fn a_failed_write_says_why() {
    let dir = std::env::temp_dir().join(format!("asdf-error-messages-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    // a folder that does not exist
    let e = asdf_core::write(dir.join("nope").join("x.asdf"), &tree!({"a": 1})).unwrap_err();
    let text = e.to_string();
    one_line(&text);
    assert!(text.contains("No such file or directory"), "{text}");
    assert!(format!("{e:?}").starts_with("Io("), "{e:?}");
}

/// A real file (python asdf 6.0.0's `fixtures/codec_zlib.asdf`) cut before its `...` end
/// marker, opened by path: the message names the file and the tree's offset, one line, and
/// the error is `Error::File` around the layout error.
#[test]
fn a_file_cut_before_its_end_marker_is_named_with_the_offset() {
    use asdf_core::{Error, LayoutError};
    let Some(fixture) = asdf_test_data::require("fixtures/codec_zlib.asdf") else {
        return;
    };
    let bytes = std::fs::read(fixture).unwrap();
    let find = |needle: &[u8]| {
        bytes
            .windows(needle.len())
            .position(|w| w == needle)
            .unwrap()
    };
    let tree_start = find(b"%YAML 1.1\n") as u64;
    let end_marker = find(b"\n...\n") + 1;
    let dir = std::env::temp_dir().join(format!("asdf-cut-tree-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();

    // cut inside the tree: nothing follows
    let cut = dir.join("cut_in_tree.asdf");
    std::fs::write(&cut, &bytes[..end_marker - 10]).unwrap();
    let e = AsdfFile::open(&cut).unwrap_err();
    let text = e.to_string();
    one_line(&text);
    assert!(text.starts_with(&format!("{}: ", cut.display())), "{text}");
    assert!(
        text.contains(&format!("starting at offset {tree_start}")),
        "{text}"
    );
    match &e {
        Error::File { path, source } => {
            assert_eq!(path, &cut);
            assert!(
                matches!(
                    **source,
                    Error::Layout(LayoutError::TruncatedTree { offset, file_len })
                        if offset == tree_start && file_len == (end_marker - 10) as u64
                ),
                "{e:?}"
            );
        }
        other => panic!("expected Error::File, got {other:?}"),
    }
    assert!(matches!(
        e.without_file(),
        Error::Layout(LayoutError::TruncatedTree { .. })
    ));

    // the `...` line gone (and the padding after it), the blocks straight after the tree
    // (without the block index, whose own `...` would end the tree)
    let unterminated = dir.join("no_end_marker.asdf");
    let mut without = bytes[..end_marker].to_vec();
    without.extend_from_slice(&bytes[find(b"\xd3BLK")..find(b"#ASDF BLOCK INDEX")]);
    std::fs::write(&unterminated, &without).unwrap();
    let e = asdf_core::read::<i64>(&unterminated, "/a").unwrap_err();
    let text = e.to_string();
    one_line(&text);
    assert!(text.contains("no_end_marker.asdf"), "{text}");
    assert!(
        text.contains(&format!(
            "starting at offset {tree_start} has no `...` end marker before the blocks"
        )),
        "{text}"
    );
    assert!(
        matches!(
            e.without_file(),
            Error::Layout(LayoutError::UnterminatedTree { offset }) if *offset == tree_start
        ),
        "{e:?}"
    );
    // the same bytes from memory: no file to name, the error is the layout error itself
    let e = AsdfFile::from_bytes(without).unwrap_err();
    assert!(
        matches!(e, Error::Layout(LayoutError::UnterminatedTree { .. })),
        "{e:?}"
    );
    std::fs::remove_dir_all(&dir).unwrap();
}
