//! Blosc2 blocks (`bsc2`, `bls2`): python asdf writes them (through the test-only
//! compressors of tests/oracle/blosc2_compressors.py and python-blosc2) and we read them;
//! we write them and read them back, and with `ASDF_WRITE_OUT` python asdf reads ours.
#![cfg(feature = "blosc2")]

use crate::common;

use std::path::PathBuf;

use asdf_core::write::Compression;
use asdf_core::write::{CompressionChoice, WriteOptions, Writer};
use asdf_core::AsdfFile;

fn data() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../asdf-blosc2/tests/data/asdf")
}

const KEYS: [&str; 5] = ["/f8", "/i4", "/u1", "/rec", "/zeros"];

#[test]
fn python_written_blosc2_blocks_read_as_their_twins() {
    for label in ["bsc2", "bls2"] {
        let f = AsdfFile::options()
            .verify_checksums(true)
            .open(data().join(format!("{label}.asdf")))
            .unwrap();
        let twin = AsdfFile::open(data().join(format!("{label}.plain.asdf"))).unwrap();
        assert_eq!(f.blocks().len(), 5);
        for b in f.blocks() {
            assert_eq!(&b.compression, label.as_bytes());
        }
        for key in KEYS {
            assert_eq!(
                f.dyn_array(key).unwrap(),
                twin.dyn_array(key).unwrap(),
                "{label} {key}"
            );
        }
    }
}

#[test]
fn blosc2_blocks_written_here_read_back() {
    let twin = AsdfFile::open(data().join("bsc2.plain.asdf")).unwrap();
    for c in [Compression::Bsc2, Compression::Bls2] {
        let opts = WriteOptions::default().compression(CompressionChoice::Codec(c));
        let bytes = Writer::from_file(&twin, opts)
            .write_to_vec(twin.tree())
            .unwrap();
        common::dump_for_oracle(&format!("blosc2_blocks_{c}"), &bytes);
        let f = AsdfFile::options()
            .verify_checksums(true)
            .open_bytes(bytes, ".")
            .unwrap();
        for b in f.blocks() {
            assert_eq!(b.compression, c.label());
        }
        for key in KEYS {
            assert_eq!(
                f.dyn_array(key).unwrap(),
                twin.dyn_array(key).unwrap(),
                "{c} {key}"
            );
        }
        // the float64 block shuffles by 8 bytes: it compresses far below its 4.8 MB
        let big = &f.blocks()[0];
        assert_eq!(big.data_size, 4_800_000);
        assert!(big.used_size < 200_000, "{c}: {} bytes", big.used_size);
    }
}

#[test]
fn a_damaged_blosc2_block_is_an_error_naming_the_codec() {
    let mut bytes = std::fs::read(data().join("bls2.asdf")).unwrap();
    let f = AsdfFile::open(data().join("bls2.asdf")).unwrap();
    let b = &f.blocks()[1];
    // the chunk's declared decoded size (bytes 4..8 of its header)
    let at = b.data_offset() as usize + 4;
    bytes[at..at + 4].copy_from_slice(&1_000_000i32.to_le_bytes());
    let f = AsdfFile::from_bytes(bytes).unwrap();
    let err = f.dyn_array("/i4").unwrap_err();
    let text = asdf_core::display_chain(&err);
    assert!(text.contains("bls2"), "{text}");
}
