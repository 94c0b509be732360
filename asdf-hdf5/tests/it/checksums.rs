//! Checksums on the band path (ASDF → HDF5 with `verify_checksums`): a block read band by
//! band is hashed as it is read, and a block whose bytes do not match its MD5 fails the
//! conversion with `asdf_core::Error::Checksum`, leaving no output file; the MD5 of legacy
//! writers (over the decoded bytes of a compressed block) passes, as on the whole path.

use std::path::Path;

use asdf_core::array::ArrayOptions;
use asdf_core::unstable::checksum::Md5;
use asdf_core::write::Compression;
use asdf_core::write::{CompressionChoice, WriteOptions, Writer};
use asdf_core::{AsdfFile, Node, Value};
use asdf_hdf5::{from_asdf_with, FromAsdfOptions, Hdf5Error};

use crate::common;

/// 4 MiB of uint32 values, varied enough that no codec makes them a single run.
fn values() -> ndarray::Array2<u32> {
    ndarray::Array2::from_shape_fn((1024, 1024), |(r, c)| {
        (r as u32).wrapping_mul(2_654_435_761) ^ (c as u32 / 7)
    })
}

/// An ASDF file of one array, `/a`, in one block compressed by `c`; returns the block's
/// header offset, data offset and stored size.
fn write(path: &Path, c: Option<Compression>) -> (u64, u64, u64) {
    let mut w = Writer::new(WriteOptions::default());
    let opts = ArrayOptions {
        compression: Some(c.map_or(CompressionChoice::None, CompressionChoice::Codec)),
        storage: None,
    };
    let a = w.add_array_with(values(), opts);
    w.write_to_path(&Node::new(Value::Map(vec![(Node::str("a"), a)])), path)
        .unwrap();
    let f = AsdfFile::open(path).unwrap();
    let h = &f.blocks()[0];
    assert!(h.has_checksum());
    (h.offset, h.data_offset(), h.used_size)
}

fn patch(path: &Path, at: u64, bytes: &[u8]) {
    let mut data = std::fs::read(path).unwrap();
    data[at as usize..at as usize + bytes.len()].copy_from_slice(bytes);
    std::fs::write(path, data).unwrap();
}

/// Converts band by band (every array, whatever its size), checksums verified or not.
fn convert(input: &Path, output: &Path, verify: bool) -> Result<(), Hdf5Error> {
    let opts = FromAsdfOptions {
        band_min_bytes: 0,
        verify_checksums: verify,
        ..Default::default()
    };
    from_asdf_with(input, output, &opts).map(|_| ())
}

fn files(dir: &Path) -> Vec<String> {
    let mut v: Vec<String> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    v.sort();
    v
}

#[test]
fn a_corrupt_block_fails_the_band_conversion_with_the_checksum_error() {
    let dir = common::Scratch::new("md5");
    for c in [None, Some(Compression::Lz4)] {
        let name = c.map_or("none", |c| c.name());
        let input = dir.join(format!("{name}.asdf"));
        let output = dir.join(format!("{name}.h5"));
        let (_, data_at, used) = write(&input, c);
        // intact: converts with checksums verified
        convert(&input, &output, true).unwrap_or_else(|e| panic!("{name}: {e}"));
        std::fs::remove_file(&output).unwrap();
        // one byte changed (the last: a literal of the last lz4 sequence, so the block
        // still decodes, to other bytes)
        let last = data_at + used - 1;
        let byte = std::fs::read(&input).unwrap()[last as usize];
        patch(&input, last, &[byte ^ 0x40]);
        match convert(&input, &output, true) {
            Err(Hdf5Error::Asdf(asdf_core::Error::Checksum { block: 0, .. })) => {}
            other => panic!("{name}: {other:?}"),
        }
        assert!(!output.exists(), "{name}");
        assert_eq!(files(&dir), [format!("{name}.asdf")], "{name}: files left");
        // not verified: the same file converts (so the check is what failed)
        convert(&input, &output, false).unwrap_or_else(|e| panic!("{name}: {e}"));
        std::fs::remove_file(&output).unwrap();
        std::fs::remove_file(&input).unwrap();
    }
}

#[test]
fn the_decoded_bytes_checksum_of_legacy_writers_passes_and_a_wrong_one_fails() {
    let dir = common::Scratch::new("md5-legacy");
    let input = dir.join("legacy.asdf");
    let output = dir.join("legacy.h5");
    let (header_at, _, _) = write(&input, Some(Compression::Lz4));
    // the MD5 sits 38 bytes into the header (magic, header size, flags, codec, 3 sizes)
    let md5_at = header_at + 38;
    let decoded: Vec<u8> = values().iter().flat_map(|v| v.to_le_bytes()).collect();
    patch(&input, md5_at, &Md5::digest(&decoded));
    convert(&input, &output, true).unwrap();
    std::fs::remove_file(&output).unwrap();
    // and the whole path agrees
    AsdfFile::options()
        .verify_checksums(true)
        .open(&input)
        .unwrap()
        .array::<u32>("/a")
        .unwrap();
    patch(&input, md5_at, &[7; 16]);
    match convert(&input, &output, true) {
        Err(Hdf5Error::Asdf(asdf_core::Error::Checksum { expected, .. })) => {
            assert_eq!(expected, "07".repeat(16));
        }
        other => panic!("{other:?}"),
    }
    assert!(!output.exists());
}
