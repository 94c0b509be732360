//! The file API on python-written fixtures and hand-assembled layouts: typed arrays, views,
//! errors, checksums, external files and `$ref`s. Expected values come from how the
//! generators (`tests/data/generate.py`, `make_layouts.py`) built each array.

use crate::common;

use asdf_core::array::ArrayError;
use asdf_core::{AsdfFile, Error};
use ndarray::{s, Array, ArrayD, IxDyn};

fn fixture(name: &str) -> std::path::PathBuf {
    common::data_dir("fixtures").join(name)
}

fn layout(name: &str) -> std::path::PathBuf {
    common::data_dir("layouts").join(name)
}

fn reference_dir() -> std::path::PathBuf {
    common::data_dir(asdf_test_data::REFERENCE_FILES)
}

fn arange_i32(n: i32) -> ArrayD<i32> {
    Array::from_iter(0..n).into_dyn()
}

#[test]
fn views_sharing_one_block_read_like_numpy() {
    // base = arange(20, int32); b2 = arange(48, float64).reshape(6, 8); save_base=True.
    let f = AsdfFile::open(fixture("views_shared_base.asdf")).unwrap();
    let base = arange_i32(20);
    assert_eq!(f.array::<i32>("/base").unwrap(), base);
    assert_eq!(
        f.array::<i32>("/rev").unwrap(),
        base.slice(s![..;-1]).into_dyn()
    );
    assert_eq!(
        f.array::<i32>("/every3").unwrap(),
        base.slice(s![1..;3]).into_dyn()
    );
    let b2 = Array::from_iter((0..48).map(f64::from))
        .into_shape_with_order((6, 8))
        .unwrap();
    assert_eq!(f.array::<f64>("/T").unwrap(), b2.t().into_dyn());
    assert_eq!(f.array::<f64>("/col").unwrap(), b2.column(3).into_dyn());
    assert_eq!(
        f.array::<f64>("/sub_rev").unwrap(),
        b2.slice(s![..;-2, ..;-3]).into_dyn()
    );
    assert_eq!(
        f.array::<f64>("/T_slice").unwrap(),
        b2.t().slice(s![1..5, ..;2]).into_dyn()
    );
}

#[test]
fn big_endian_views_are_converted() {
    // big = arange(24, >i2).reshape(2, 3, 4); t = big.transpose(2, 0, 1)
    let f = AsdfFile::open(fixture("views_shared_base_bigendian.asdf")).unwrap();
    let big = Array::from_iter(0i16..24)
        .into_shape_with_order((2, 3, 4))
        .unwrap();
    assert_eq!(f.array::<i16>("/big").unwrap(), big.clone().into_dyn());
    assert_eq!(
        f.array::<i16>("/t").unwrap(),
        big.view().permuted_axes([2, 0, 1]).into_dyn()
    );
    assert_eq!(
        f.array::<i16>("/r").unwrap(),
        big.slice(s![.., ..;-1, 1..3]).into_dyn()
    );
}

#[test]
fn wrong_element_type_is_a_typed_error() {
    let f = AsdfFile::open(fixture("views_shared_base.asdf")).unwrap();
    match f.array::<f32>("/base") {
        Err(Error::Convert {
            path,
            source: ArrayError::DTypeMismatch { .. },
        }) if path == "/base" => {}
        other => panic!("expected a datatype mismatch, got {other:?}"),
    }
    assert!(matches!(
        f.array::<i32>("/nope"),
        Err(Error::NoSuchPath { path }) if path == "/nope"
    ));
    assert!(matches!(
        f.array::<i32>("/asdf_library"),
        Err(Error::NotAnArray { .. })
    ));
}

#[test]
fn mmap_views_borrow_the_map_and_match_owned_reads() {
    let path = fixture("views_shared_base.asdf");
    let owned = AsdfFile::open(&path).unwrap();
    let mapped = AsdfFile::options().mmap(true).open(&path).unwrap();
    for p in ["/base", "/rev", "/every3", "/slice"] {
        let want = owned.array::<i32>(p).unwrap();
        let cow = mapped.array_view::<i32>(p).unwrap();
        assert_eq!(cow.view(), want.view(), "{p}");
        if let Some(v) = mapped.try_view::<i32>(p).unwrap() {
            // A view points into the mapped block, not at a copy.
            let block = mapped.block_data(0).unwrap().as_ptr_range();
            assert!(block.contains(&(v.as_ptr() as *const u8)), "{p}");
        }
    }
    // Byte-swapped data cannot be viewed in place.
    let be = AsdfFile::options()
        .mmap(true)
        .open(fixture("views_shared_base_bigendian.asdf"))
        .unwrap();
    assert!(be.try_view::<i16>("/big").unwrap().is_none());
    assert_eq!(be.array_view::<i16>("/big").unwrap().len(), 24);
}

/// A compressed block is decoded once into the file's cache, and views borrow that cache:
/// two views are the same memory, and equal to an owned read.
#[test]
fn views_of_a_compressed_block_borrow_its_decoded_cache() {
    use asdf_core::write::Compression;
    use asdf_core::write::{ArrayOptions, CompressionChoice, WriteOptions, Writer};
    let data = ndarray::Array1::from_iter((0..5000).map(|i| (i % 97) as f64));
    let mut w = Writer::new(WriteOptions::default());
    let node = w.add_array_with(
        &data,
        ArrayOptions {
            compression: Some(CompressionChoice::Codec(Compression::Zlib)),
            storage: None,
        },
    );
    let bytes = w.write_to_vec(&asdf_core::tree!({"z": node})).unwrap();
    let file = AsdfFile::from_bytes(bytes).unwrap();
    assert_eq!(&file.blocks()[0].compression, b"zlib");
    let a = file
        .try_view::<f64>("/z")
        .unwrap()
        .expect("a view of the decoded cache");
    let b = file.try_view::<f64>("/z").unwrap().unwrap();
    assert_eq!(a.as_ptr(), b.as_ptr(), "decoded once, viewed twice");
    let cache = file.block_data(0).unwrap().as_ptr_range();
    assert!(cache.contains(&(a.as_ptr() as *const u8)));
    assert_eq!(a.into_dimensionality::<ndarray::Ix1>().unwrap(), data);
}

#[test]
fn checksums_are_verified_when_asked() {
    // checksum_wrong: block 0 has a wrong MD5.
    let lax = AsdfFile::open(layout("checksum_wrong.asdf")).unwrap();
    assert!(lax.dyn_array("/a").is_ok());
    assert!(matches!(
        lax.verify_checksums(),
        Err(Error::Checksum { block: 0, .. })
    ));
    let strict = AsdfFile::options()
        .verify_checksums(true)
        .open(layout("checksum_wrong.asdf"))
        .unwrap();
    assert!(matches!(
        strict.dyn_array("/a"),
        Err(Error::Checksum { block: 0, .. })
    ));
    assert!(strict.dyn_array("/b").is_ok(), "other blocks stay readable");
    // opened eagerly, the checksum of every block is verified on open: block 1's is wrong
    // (the error of opening by path names the file around it)
    let eager = AsdfFile::options()
        .verify_checksums(true)
        .lazy(false)
        .open(layout("checksum_wrong_zlib.asdf"));
    assert!(
        matches!(
            eager.as_ref().map_err(Error::without_file),
            Err(Error::Checksum {
                block: 1,
                offset: 355,
                ..
            })
        ),
        "{:?}",
        eager.err()
    );
    // Legacy (decoded-bytes) and modern (stored-bytes) checksums of compressed blocks pass,
    // and so does the official compressed.asdf written by asdf <= 5.2.
    for p in [
        layout("checksum_legacy_zlib.asdf"),
        layout("checksum_modern_zlib.asdf"),
        layout("checksum_zero.asdf"),
        reference_dir().join("1.6.0/compressed.asdf"),
    ] {
        let f = AsdfFile::options()
            .verify_checksums(true)
            .lazy(false)
            .open(&p)
            .unwrap_or_else(|e| panic!("{}: {e:?}", p.display()));
        f.verify_checksums()
            .unwrap_or_else(|e| panic!("{}: {e:?}", p.display()));
    }
}

#[test]
fn external_blocks_and_refs_resolve() {
    // external: a = arange(10, f8), b = arange(6, >i4).reshape(2, 3), one file per block.
    let f = AsdfFile::open(fixture("external.asdf")).unwrap();
    assert!(f.blocks().is_empty());
    assert_eq!(
        f.array::<f64>("/a").unwrap(),
        Array::from_iter((0..10).map(f64::from)).into_dyn()
    );
    assert_eq!(
        f.array::<i32>("/b").unwrap(),
        arange_i32(6).into_shape_with_order(IxDyn(&[2, 3])).unwrap()
    );

    let r = AsdfFile::open(fixture("json_pointer_refs.asdf")).unwrap();
    let target = r
        .resolve_ref(r.node("/ref_array").unwrap(), "/ref_array")
        .unwrap();
    assert!(target.file.is_none());
    assert!(target.node.ptr_eq(r.node("/data").unwrap()));
    assert_eq!(target.path, "/data");
    // other.asdf does not exist: a clean error naming the file.
    match r.resolve_ref(r.node("/ref_external").unwrap(), "/ref_external") {
        Err(Error::External { file, .. }) => assert!(file.ends_with("other.asdf")),
        other => panic!("expected an external-file error, got {other:?}"),
    }
}

#[test]
fn streamed_rows_and_negative_sources() {
    // stream: 5 rows of 4 float64, row i filled with i.
    let f = AsdfFile::open(fixture("stream.asdf")).unwrap();
    let a = f.array::<f64>("/stream").unwrap();
    assert_eq!(a.shape(), &[5, 4]);
    assert!(a
        .outer_iter()
        .enumerate()
        .all(|(i, row)| row.iter().all(|&v| v == i as f64)));
    // stream_partial_row: 3 whole rows plus 3 stray bytes.
    let p = AsdfFile::open(fixture("stream_partial_row.asdf")).unwrap();
    assert_eq!(p.array::<f64>("/stream").unwrap().shape(), &[3, 4]);
}

#[test]
fn bytes_and_paths_open_alike() {
    let path = fixture("codec_mixed.asdf");
    let a = AsdfFile::open(&path).unwrap();
    let b = AsdfFile::from_bytes(std::fs::read(&path).unwrap()).unwrap();
    assert_eq!(a.tree(), b.tree());
    for label in ["zlib", "bzp2", "lz4", "zstd", "lz4f", "blsc"] {
        let p = format!("/{label}");
        assert_eq!(
            a.array::<f64>(&p).unwrap(),
            b.array::<f64>(&p).unwrap(),
            "{label}"
        );
    }
    // zlib = arange(300) * 1
    assert_eq!(
        a.array::<f64>("/zlib").unwrap(),
        Array::from_iter((0..300).map(f64::from)).into_dyn()
    );
}

#[test]
fn records_and_strings_through_the_dynamic_form() {
    let f = AsdfFile::open(common::repo_root().join("examples/data/observation.asdf")).unwrap();
    let sources = f.dyn_array("/sources").unwrap();
    assert_eq!(sources.shape, vec![3]);
    let ids = sources.field("id").unwrap().to_array::<i32>().unwrap();
    assert_eq!(ids.as_slice().unwrap(), &[1, 2, 3]);
    let kinds = sources.field("kind").unwrap().strings().unwrap();
    assert_eq!(
        kinds.iter().map(String::as_str).collect::<Vec<_>>(),
        ["star", "galaxy", "star"]
    );
    let x = sources.field("x").unwrap().to_array::<f64>().unwrap();
    assert_eq!(x.as_slice().unwrap(), &[10.5, 33.0, 50.125]);
}

#[test]
fn unknown_codec_fails_only_its_array() {
    use asdf_core::file::BlockHeader;
    use asdf_core::unstable::encode_block_header;
    use asdf_core::CodecError;
    let mut f = b"#ASDF 1.0.0\n#ASDF_STANDARD 1.6.0\n%YAML 1.1\n%TAG ! tag:stsci.edu:asdf/\n--- !core/asdf-1.1.0\n\
a: !core/ndarray-1.1.0 {source: 0, datatype: uint8, byteorder: little, shape: [4]}\n\
b: !core/ndarray-1.1.0 {source: 1, datatype: uint8, byteorder: little, shape: [4]}\n...\n"
        .to_vec();
    for (i, label) in [*b"xyz1", [0u8; 4]].into_iter().enumerate() {
        let h = BlockHeader {
            index: i,
            offset: f.len() as u64,
            header_size: 48,
            flags: 0,
            compression: label,
            allocated_size: 4,
            used_size: 4,
            data_size: 4,
            checksum: [0; 16],
        };
        f.extend(encode_block_header(&h));
        f.extend_from_slice(&[1, 2, 3, 4]);
    }
    let file = AsdfFile::from_bytes(f).unwrap();
    match file.array::<u8>("/a") {
        Err(Error::Codec {
            block: 0,
            source: CodecError::UnknownLabel(label),
            ..
        }) => assert_eq!(&label, b"xyz1"),
        other => panic!("expected an unknown-label error, got {other:?}"),
    }
    assert_eq!(
        file.array::<u8>("/b").unwrap().as_slice().unwrap(),
        &[1, 2, 3, 4]
    );
}
