//! Files opened with `OpenOptions::lazy_block_headers`: arrays read as with headers read at
//! open, and a block index that disagrees with a block is a typed error when that block is
//! used, never another block's data.

use asdf_core::unstable::layout::{LayoutError, BLOCK_MAGIC};
use asdf_core::write::{WriteOptions, Writer};
use asdf_core::{AsdfFile, Error, Node, Value};

/// A file of `n` arrays of 10 numbers each, `i` in array `i`, with a block index.
fn file_of(n: usize) -> Vec<u8> {
    let arrays: Vec<_> = (0..n)
        .map(|i| ndarray::Array1::<f64>::from_elem(10, i as f64))
        .collect();
    let mut w = Writer::new(WriteOptions::default());
    let nodes: Vec<(Node, Node)> = arrays
        .iter()
        .enumerate()
        .map(|(i, a)| (Node::from(format!("a{i}")), w.add_array(a)))
        .collect();
    w.write_to_vec(&Node::from(Value::Map(nodes))).unwrap()
}

fn lazy(bytes: Vec<u8>) -> AsdfFile {
    AsdfFile::options()
        .lazy_block_headers(true)
        .open_bytes(bytes, ".")
        .unwrap()
}

#[test]
fn arrays_and_headers_are_those_of_an_eager_open() {
    let bytes = file_of(50);
    let eager = AsdfFile::from_bytes(bytes.clone()).unwrap();
    let file = lazy(bytes);
    assert!(file.layout().blocks.is_empty());
    assert_eq!(file.layout().block_index, eager.layout().block_index);
    assert_eq!(file.block_count(), 50);
    for i in [49, 0, 17] {
        let got = file.array::<f64>(&format!("/a{i}")).unwrap();
        assert_eq!(got, ndarray::Array1::from_elem(10, i as f64).into_dyn());
    }
    assert_eq!(file.blocks(), eager.blocks());
    assert_eq!(file.try_blocks().unwrap(), eager.blocks());
    file.verify_checksums().unwrap();
}

#[test]
fn a_file_without_an_index_is_walked_at_open() {
    let a = ndarray::Array1::<i32>::from_elem(5, 7);
    let mut w = Writer::new(WriteOptions::default().block_index(false));
    let root = asdf_core::tree!({"a": w.add_array(&a), "b": w.add_array(&a)});
    let file = lazy(w.write_to_vec(&root).unwrap());
    assert_eq!(file.layout().block_index, None);
    assert_eq!(file.layout().blocks.len(), 2);
    assert_eq!(file.array::<i32>("/b").unwrap(), a.into_dyn());
}

#[test]
fn a_block_the_index_gets_wrong_is_a_typed_error_when_used() {
    let bytes = file_of(5);
    let eager = AsdfFile::from_bytes(bytes.clone()).unwrap();
    // Block 2's magic destroyed: the index (checked on its first and last blocks) is used,
    // and block 2 fails when read; the others read.
    let at = usize::try_from(eager.blocks()[2].offset).unwrap();
    let mut bad = bytes.clone();
    assert_eq!(bad[at..at + 4], BLOCK_MAGIC);
    bad[at] = b'X';
    let file = lazy(bad);
    assert_eq!(file.block_count(), 5);
    let err = file.array::<f64>("/a2").unwrap_err();
    assert!(
        matches!(
            err,
            Error::Layout(LayoutError::BadBlockMagic { offset }) if offset == at as u64
        ),
        "{err:?}"
    );
    assert_eq!(
        file.array::<f64>("/a3").unwrap(),
        ndarray::Array1::from_elem(10, 3.0).into_dyn()
    );
    // every header is needed: the bad magic is the error, at its offset
    let bad_magic = |e: &Error| matches!(e, Error::Layout(LayoutError::BadBlockMagic { offset }) if *offset == at as u64);
    let err = file.try_blocks().unwrap_err();
    assert!(bad_magic(&err), "{err:?}");
    let err = file.verify_checksums().unwrap_err();
    assert!(bad_magic(&err), "{err:?}");
    // `blocks` gives the headers before the bad one.
    assert_eq!(file.blocks(), &eager.blocks()[..2]);
    // Opened eagerly, the same file falls back to walking, which stops at the bad magic.
    let eager_bad = {
        let mut b = bytes;
        b[at] = b'X';
        AsdfFile::from_bytes(b).unwrap()
    };
    assert_eq!(eager_bad.blocks().len(), 2);
}
