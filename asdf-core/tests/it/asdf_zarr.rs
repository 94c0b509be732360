//! Chunked arrays stored the asdf-zarr way (`asdf://asdf-format.org/zarr/tags/zarr-1.0.0`).
//!
//! Reading: every file of `tests/data/asdf-zarr` (python asdf 6.0.0 + asdf-zarr 0.0.4) reads as
//! zarr reads it — datatype, shape and bytes, whole and by region — from the sidecars the
//! generator wrote with zarr's own reading; what is not read (lzma, filters, an external
//! store) and every damaged map, chunk or metadata field is a typed error naming the path.
//!
//! Writing: `Writer::add_zarr_array` with each compressor reads back equal here; with
//! `ASDF_WRITE_OUT=DIR` the files are left in `DIR/asdf-zarr` with sidecars of the values
//! written (in the fixtures' form) for `tests/oracle/check_zarr_written.py`, which has python
//! asdf + asdf-zarr read them.

use std::path::Path;

use asdf_core::array::SelectionError;
use asdf_core::file::{ZarrError, ZARR_TAG};
use asdf_core::write::{BloscCname, BloscShuffle, WriteOptions, Writer, ZarrCompressor};
use asdf_core::{AsdfFile, Error, Node, Selection, Value};

/// The files of `tests/data/asdf-zarr` (a lost file fails the test instead of shrinking it).
const FIXTURES: usize = 11;

fn hex(b: &[u8]) -> String {
    b.iter().map(|x| format!("{x:02x}")).collect()
}

fn fixture_dir() -> Option<std::path::PathBuf> {
    asdf_test_data::require_dir("asdf-zarr")
}

fn fixture(name: &str) -> Option<Vec<u8>> {
    let dir = fixture_dir()?;
    Some(std::fs::read(dir.join(format!("{name}.asdf"))).expect("read fixture"))
}

/// Compares every array and region of `file` with the sidecar `expect` (the fixtures' form).
fn check_against(file: &AsdfFile, expect: &serde_json::Value, what: &str) {
    let arrays = expect["arrays"].as_object().expect("arrays");
    for (path, e) in arrays {
        let a = file
            .dyn_array(path)
            .unwrap_or_else(|err| panic!("{what} {path}: {err}"));
        // numpy's spelling compared: `|u1` has no byte order
        assert_eq!(
            a.dtype.to_numpy_str(),
            e["dtype"].as_str().unwrap(),
            "{what} {path}"
        );
        let shape: Vec<usize> = serde_json::from_value(e["shape"].clone()).unwrap();
        assert_eq!(a.shape, shape, "{what} {path}");
        assert_eq!(hex(&a.data), e["hex"].as_str().unwrap(), "{what} {path}");
        for r in e["regions"].as_array().unwrap() {
            let text = r["selection"].as_str().unwrap();
            let sel: Selection = text.parse().unwrap();
            let got = file
                .dyn_region(path, &sel)
                .unwrap_or_else(|err| panic!("{what} {path}[{text}]: {err}"));
            let shape: Vec<usize> = serde_json::from_value(r["shape"].clone()).unwrap();
            assert_eq!(got.shape, shape, "{what} {path}[{text}]");
            assert_eq!(
                hex(&got.data),
                r["hex"].as_str().unwrap(),
                "{what} {path}[{text}]"
            );
        }
    }
}

#[test]
fn every_fixture_reads_as_zarr_reads_it() {
    let Some(dir) = fixture_dir() else { return };
    let mut names: Vec<String> = std::fs::read_dir(&dir)
        .unwrap()
        .filter_map(|e| {
            let name = e.unwrap().file_name().into_string().unwrap();
            name.strip_suffix(".asdf").map(str::to_string)
        })
        .collect();
    names.sort();
    assert_eq!(names.len(), FIXTURES, "{names:?}");
    let mut checked_errors = 0;
    for name in &names {
        let file = AsdfFile::open(dir.join(format!("{name}.asdf"))).unwrap();
        let text = std::fs::read_to_string(dir.join(format!("{name}.zarr.json"))).unwrap();
        let expect: serde_json::Value = serde_json::from_str(&text).unwrap();
        check_against(&file, &expect, name);
        for (path, word) in expect["errors"].as_object().unwrap() {
            let word = word.as_str().unwrap();
            let err = file.dyn_array(path).unwrap_err();
            let Error::Zarr { path: p, source } = &err else {
                panic!("{name} {path}: {err:?}");
            };
            assert_eq!(p, path);
            match source.as_ref() {
                ZarrError::UnsupportedCompressor { id } | ZarrError::UnsupportedFilter { id } => {
                    assert_eq!(id, word)
                }
                other => panic!("{name} {path}: {other:?}"),
            }
            let msg = err.to_string();
            assert!(
                msg.starts_with(&format!("{path}: ")) && msg.contains(word),
                "{msg}"
            );
            checked_errors += 1;
        }
    }
    assert_eq!(checked_errors, 2);
}

#[test]
fn typed_reads_convert_byte_order_and_fill_missing_chunks() {
    let Some(bytes) = fixture("f4_big_bz2") else {
        return;
    };
    let file = AsdfFile::from_bytes(bytes).unwrap();
    let a = file.array::<f32>("/z").unwrap();
    assert_eq!(a.shape(), &[6, 5]);
    // the chunks never written hold fill_value 1.5: rows 4.. and column 4
    assert_eq!(a[[5, 0]], 1.5);
    assert_eq!(a[[0, 4]], 1.5);
    assert_ne!(a[[0, 0]], 1.5);
    let mut out = vec![0f32; 3 * 3];
    let shape = file
        .read_region_into("/z", &"3:6, 2:5".parse().unwrap(), &mut out)
        .unwrap();
    assert_eq!(shape, vec![3, 3]);
    for (i, r) in (3..6).enumerate() {
        for (j, c) in (2..5).enumerate() {
            assert_eq!(out[i * 3 + j], a[[r, c]]);
        }
    }
    // a buffer of the wrong size and a datatype other than the array's
    let mut small = vec![0f32; 2];
    assert!(matches!(
        file.read_region_into("/z", &"3:6, 2:5".parse().unwrap(), &mut small),
        Err(Error::Selection {
            source: SelectionError::BufferSize { .. },
            ..
        })
    ));
    assert!(file.array::<f64>("/z").is_err());
    assert!(file.try_view::<f32>("/z").unwrap().is_none());
    assert_eq!(file.array_view::<f32>("/z").unwrap().to_owned(), a);

    let Some(bytes) = fixture("f8_2d_zlib_nan") else {
        return;
    };
    let file = AsdfFile::from_bytes(bytes).unwrap();
    let a = file.array::<f64>("/z").unwrap();
    assert!(a[[4, 0]].is_nan() && a[[4, 6]].is_nan() && !a[[3, 6]].is_nan());
    let Some(bytes) = fixture("b1_1d_gzip") else {
        return;
    };
    let file = AsdfFile::from_bytes(bytes).unwrap();
    let b = file.array::<bool>("/z").unwrap();
    assert!(!b[12]);
    let mut out = [true; 3];
    file.read_region_into("/z", &"10:".parse().unwrap(), &mut out)
        .unwrap();
    assert_eq!(out, [false; 3]);
}

/// `bytes` with `from` replaced by `to` once in the tree (the block index, if its offsets
/// move, goes stale and the reader walks the block headers).
fn patch_tree(bytes: &[u8], from: &str, to: &str) -> Vec<u8> {
    let at = bytes
        .windows(from.len())
        .position(|w| w == from.as_bytes())
        .unwrap_or_else(|| panic!("{from:?} not in the tree"));
    let mut out = bytes[..at].to_vec();
    out.extend_from_slice(to.as_bytes());
    out.extend_from_slice(&bytes[at + from.len()..]);
    out
}

fn zarr_error(bytes: Vec<u8>, path: &str) -> (ZarrError, String) {
    let file = AsdfFile::from_bytes(bytes).unwrap();
    match file.dyn_array(path) {
        Err(e @ Error::Zarr { .. }) => {
            let msg = e.to_string();
            assert!(msg.starts_with(&format!("{path}: ")), "{msg}");
            let Error::Zarr { source, .. } = e else {
                unreachable!()
            };
            (*source, msg)
        }
        other => panic!("{other:?}"),
    }
}

fn bad_key(e: &ZarrError) -> &str {
    match e {
        ZarrError::BadMetadata { key, .. } => key,
        other => panic!("{other:?}"),
    }
}

#[test]
fn bad_metadata_is_a_typed_error_naming_the_key() {
    let Some(bytes) = fixture("i4_1d_raw_missing") else {
        return;
    };
    for (from, to, key) in [
        ("order: C", "order: X", ".zarray/order"),
        ("zarr_format: 2", "zarr_format: 3", ".zarray/zarr_format"),
        ("dtype: <i4", "dtype: <x4", ".zarray/dtype"),
        ("shape: [10]", "shape: [-1]", ".zarray/shape"),
        ("chunks: [4]", "chunks: [0]", ".zarray/chunks"),
        ("chunks: [4]", "chunks: [4, 4]", ".zarray/chunks"),
        ("fill_value: -7", "fill_value: 1e400", ".zarray/fill_value"),
        (
            "fill_value: -7",
            "fill_value: 99999999999",
            ".zarray/fill_value",
        ),
        ("filters: null", "filters: 7", ".zarray/filters"),
        (
            "compressor: null",
            "compressor: {level: 1}",
            ".zarray/compressor",
        ),
        (
            "chunk_block_map: 2",
            "chunk_block_map: x",
            "chunk_block_map",
        ),
        (
            "chunk_block_map: 2",
            "chunk_block_map: 9",
            "chunk_block_map",
        ),
    ] {
        let (e, msg) = zarr_error(patch_tree(&bytes, from, to), "/z");
        assert_eq!(bad_key(&e), key, "{to}: {msg}");
    }
    // a huge shape: refused by the size limit whole, by the map's size for a small region
    let huge = patch_tree(&bytes, "shape: [10]", "shape: [1099511627776]");
    let file = AsdfFile::from_bytes(huge).unwrap();
    assert!(matches!(file.dyn_array("/z"), Err(Error::Limit { .. })));
    match file.dyn_region("/z", &"0:3".parse().unwrap()) {
        Err(Error::Zarr { source, .. })
            if matches!(*source, ZarrError::ChunkMapSize { found: 12, .. }) => {}
        other => panic!("{other:?}"),
    }
    // the chunk map is the block of a chunk: 16 bytes for 3 chunks
    let (e, _) = zarr_error(
        patch_tree(&bytes, "chunk_block_map: 2", "chunk_block_map: 0"),
        "/z",
    );
    assert_eq!(
        e,
        ZarrError::ChunkMapSize {
            block: 0,
            found: 16,
            expected: 12,
            chunks: 3
        }
    );
}

/// The file offset of block `i`'s data.
fn block_data_offset(file: &AsdfFile, i: usize) -> usize {
    let h = &file.blocks()[i];
    (h.offset + 6 + u64::from(h.header_size)) as usize
}

#[test]
fn a_damaged_chunk_map_or_chunk_is_a_typed_error() {
    let Some(bytes) = fixture("i4_1d_raw_missing") else {
        return;
    };
    let file = AsdfFile::from_bytes(bytes.clone()).unwrap();
    assert_eq!(file.block_count(), 3);
    let map_at = block_data_offset(&file, 2);
    // the map as asdf-zarr wrote it: chunk 0 in block 0, chunk 1 never written, chunk 2 in 1
    let map: Vec<i32> = bytes[map_at..map_at + 12]
        .chunks_exact(4)
        .map(|b| i32::from_le_bytes(b.try_into().unwrap()))
        .collect();
    assert_eq!(map, vec![0, -1, 1]);
    let with_entry = |i: usize, v: i32| {
        let mut b = bytes.clone();
        b[map_at + 4 * i..map_at + 4 * i + 4].copy_from_slice(&v.to_le_bytes());
        b
    };
    let (e, msg) = zarr_error(with_entry(2, 99), "/z");
    assert_eq!(
        e,
        ZarrError::NoSuchChunkBlock {
            chunk: vec![2],
            block: 99,
            count: 3
        },
        "{msg}"
    );
    let (e, _) = zarr_error(with_entry(1, -2), "/z");
    assert!(matches!(e, ZarrError::NoSuchChunkBlock { block: -2, .. }));
    // chunk 1 read from the map's own block: 12 bytes where a chunk is 16
    let (e, msg) = zarr_error(with_entry(1, 2), "/z");
    assert_eq!(
        e,
        ZarrError::ChunkSize {
            chunk: vec![1],
            block: 2,
            found: 12,
            expected: 16
        },
        "{msg}"
    );
    // a region that does not touch the damaged chunk still reads (only its chunks decode)
    let file = AsdfFile::from_bytes(with_entry(1, 2)).unwrap();
    let r = file.region::<i32>("/z", &"0:4".parse().unwrap()).unwrap();
    assert_eq!(r.as_slice().unwrap(), &[1, 2, 3, 4]);
}

#[test]
fn a_corrupt_compressed_chunk_names_its_compressor() {
    let Some(bytes) = fixture("f8_2d_zlib_nan") else {
        return;
    };
    let file = AsdfFile::from_bytes(bytes.clone()).unwrap();
    let at = block_data_offset(&file, 0);
    let mut b = bytes.clone();
    for x in &mut b[at + 2..at + 12] {
        *x ^= 0x5a;
    }
    let (e, msg) = zarr_error(b.clone(), "/z");
    match e {
        ZarrError::Codec {
            chunk, compressor, ..
        } => {
            assert_eq!(compressor, "zlib");
            assert_eq!(chunk, vec![0, 0]);
        }
        other => panic!("{other:?}"),
    }
    assert!(msg.contains("zlib"), "{msg}");
    // chunk [0, 0] holds rows 0..2 and columns 0..3: a region beside it still reads
    let file = AsdfFile::from_bytes(b).unwrap();
    let whole = AsdfFile::from_bytes(bytes)
        .unwrap()
        .array::<f64>("/z")
        .unwrap();
    let r = file
        .region::<f64>("/z", &"2:4, 3:".parse().unwrap())
        .unwrap();
    assert_eq!(r, whole.slice(ndarray::s![2..4, 3..]).into_dyn());
}

#[test]
fn an_external_store_is_refused_by_name() {
    let text = format!(
        "#ASDF 1.0.0\n#ASDF_STANDARD 1.6.0\n%YAML 1.1\n%TAG ! tag:stsci.edu:asdf/\n--- !core/asdf-1.1.0\n\
         z: !<{ZARR_TAG}>\n  store: {{type_string: DirectoryStore, normalize_keys: false, path: x.zarr}}\n...\n"
    );
    let (e, msg) = zarr_error(text.into_bytes(), "/z");
    assert_eq!(
        e,
        ZarrError::ExternalStore {
            store: "DirectoryStore".into()
        },
        "{msg}"
    );
}

/// A deterministic array of `n` values of each kind.
fn written_cases() -> Vec<(&'static str, ZarrCompressor)> {
    vec![
        ("none", ZarrCompressor::None),
        ("zlib", ZarrCompressor::Zlib { level: 5 }),
        ("zstd", ZarrCompressor::Zstd { level: 3 }),
        ("bz2", ZarrCompressor::Bz2 { level: 9 }),
        ("lz4", ZarrCompressor::Lz4 { acceleration: 1 }),
        ("gzip", ZarrCompressor::Gzip { level: 5 }),
        // zarr's default, which python asdf-zarr writes (check_zarr_written.py compares
        // the metadata with zarr's own default compressor's)
        ("blosc-default", ZarrCompressor::ZARR_DEFAULT),
        (
            "blosc-zstd-bitshuffle",
            ZarrCompressor::Blosc {
                cname: BloscCname::Zstd,
                clevel: 3,
                shuffle: BloscShuffle::Bit,
            },
        ),
        (
            "blosc-zlib-noshuffle",
            ZarrCompressor::Blosc {
                cname: BloscCname::Zlib,
                clevel: 1,
                shuffle: BloscShuffle::None,
            },
        ),
        (
            "blosc-blosclz",
            ZarrCompressor::Blosc {
                cname: BloscCname::Blosclz,
                clevel: 9,
                shuffle: BloscShuffle::Byte,
            },
        ),
        (
            "blosc-lz4hc",
            ZarrCompressor::Blosc {
                cname: BloscCname::Lz4hc,
                clevel: 9,
                shuffle: BloscShuffle::Byte,
            },
        ),
        (
            "blosc-stored",
            ZarrCompressor::Blosc {
                cname: BloscCname::Lz4,
                clevel: 0,
                shuffle: BloscShuffle::Byte,
            },
        ),
    ]
}

#[test]
fn written_compressors_are_numcodecs_configs() {
    // numcodecs' get_config() of each (zarr's default compressor: Blosc(cname="lz4",
    // clevel=5, shuffle=SHUFFLE, blocksize=0)), and the chunks' first bytes
    let a = ndarray::Array1::<f64>::from_shape_fn(100, |i| i as f64);
    let config = |c: ZarrCompressor| {
        let mut w = Writer::new(WriteOptions::default());
        let node = w.add_zarr_array(&a, &[50], c).unwrap();
        let bytes = w.write_to_vec(&Node::map([("z", node)])).unwrap();
        let file = AsdfFile::from_bytes(bytes.clone()).unwrap();
        let comp = file.node("/z/.zarray/compressor").unwrap().clone();
        let m = file
            .manifest("/z", &asdf_core::ManifestOptions::default())
            .unwrap();
        let p = &m.pieces[0];
        let head = bytes[p.offset as usize..][..4].to_vec();
        (comp, head)
    };
    let (c, head) = config(ZarrCompressor::ZARR_DEFAULT);
    let text = |k: &str| c.get(k).and_then(Node::as_str).map(str::to_string);
    let num = |k: &str| c.get(k).and_then(Node::as_i64);
    assert_eq!(text("id").as_deref(), Some("blosc"));
    assert_eq!(text("cname").as_deref(), Some("lz4"));
    assert_eq!(
        (num("clevel"), num("shuffle"), num("blocksize")),
        (Some(5), Some(1), Some(0))
    );
    // a Blosc1 chunk: version 2, versionlz 1, flags with byte shuffle (bit 0), typesize 8
    assert_eq!(head[0], 2);
    assert_eq!(head[2] & 0x1, 0x1);
    assert_eq!(head[3], 8);
    let (c, head) = config(ZarrCompressor::Gzip { level: 5 });
    assert_eq!(c.get("id").and_then(Node::as_str), Some("gzip"));
    assert_eq!(c.get("level").and_then(Node::as_i64), Some(5));
    assert_eq!(&head[..3], &[0x1f, 0x8b, 8]);
}

fn leave(dir: Option<&Path>, name: &str, bytes: &[u8], arrays: serde_json::Value) {
    let Some(dir) = dir else { return };
    std::fs::write(dir.join(format!("{name}.asdf")), bytes).unwrap();
    let side = serde_json::json!({"arrays": arrays, "errors": {}});
    std::fs::write(
        dir.join(format!("{name}.zarr.json")),
        serde_json::to_string_pretty(&side).unwrap(),
    )
    .unwrap();
}

fn expect_entry(
    dtype: &str,
    shape: &[usize],
    data: &[u8],
    regions: &[(&str, Vec<usize>, Vec<u8>)],
) -> serde_json::Value {
    serde_json::json!({
        "dtype": dtype,
        "shape": shape,
        "hex": hex(data),
        "regions": regions.iter().map(|(s, sh, d)| serde_json::json!({"selection": s, "shape": sh, "hex": hex(d)})).collect::<Vec<_>>(),
    })
}

#[test]
fn written_zarr_arrays_read_back_equal() {
    let out = asdf_test_data::write_out_dir().map(|d| {
        let d = d.join("asdf-zarr");
        std::fs::create_dir_all(&d).unwrap();
        d
    });
    // values from their formula, not from a read
    let f64s = ndarray::Array::from_shape_fn((7, 10), |(i, j)| i as f64 * 10.5 - j as f64 / 3.0);
    let i16s = ndarray::Array::from_shape_fn((3, 5, 4), |(i, j, k)| {
        (i as i16 * 100 - j as i16 * 7 + k as i16) * if k % 2 == 0 { 1 } else { -1 }
    });
    let u8s = ndarray::Array::from_shape_fn(13, |i| (i * 19 % 251) as u8);
    let le = |v: &[f64]| v.iter().flat_map(|x| x.to_le_bytes()).collect::<Vec<u8>>();
    let le16 = |v: &[i16]| v.iter().flat_map(|x| x.to_le_bytes()).collect::<Vec<u8>>();
    for (name, comp) in written_cases() {
        let mut w = Writer::new(WriteOptions::default());
        let a = w.add_zarr_array(&f64s, &[3, 4], comp).unwrap();
        let b = w.add_zarr_array(&i16s, &[2, 2, 3], comp).unwrap();
        let c = w.add_zarr_array(&u8s, &[13], comp).unwrap();
        let plain = w.add_array(&u8s);
        let root = Node::map([
            ("a", a),
            ("nested", Node::map([("b", b)])),
            ("c", Node::new(Value::Seq(vec![c]))),
            ("plain", plain),
        ]);
        let bytes = w.write_to_vec(&root).unwrap();
        let file = AsdfFile::from_bytes(bytes.clone()).unwrap();
        assert!(asdf_core::file::is_zarr(file.node("/a").unwrap()));
        assert_eq!(file.node("/a").unwrap().tag(), Some(ZARR_TAG));
        assert_eq!(
            file.array::<f64>("/a").unwrap(),
            f64s.clone().into_dyn(),
            "{name}"
        );
        assert_eq!(
            file.array::<i16>("/nested/b").unwrap(),
            i16s.clone().into_dyn(),
            "{name}"
        );
        assert_eq!(
            file.array::<u8>("/c/0").unwrap(),
            u8s.clone().into_dyn(),
            "{name}"
        );
        assert_eq!(
            file.array::<u8>("/plain").unwrap(),
            u8s.clone().into_dyn(),
            "{name}"
        );
        file.validate().unwrap();
        // regions from the formula's arrays
        let ra = f64s.slice(ndarray::s![1..6;2, ..;-3]).to_owned();
        let got = file
            .region::<f64>("/a", &"1:6:2, ::-3".parse().unwrap())
            .unwrap();
        assert_eq!(got, ra.clone().into_dyn(), "{name}");
        let rb = i16s.slice(ndarray::s![2, 1..4, ..]).to_owned();
        let got = file
            .region::<i16>("/nested/b", &"2, 1:4".parse().unwrap())
            .unwrap();
        assert_eq!(got, rb.clone().into_dyn(), "{name}");
        let arrays = serde_json::json!({
            "/a": expect_entry("<f8", &[7, 10], &le(f64s.as_slice().unwrap()), &[("1:6:2, ::-3", vec![3, 4], le(&ra.iter().copied().collect::<Vec<_>>()))]),
            "/nested/b": expect_entry("<i2", &[3, 5, 4], &le16(i16s.as_slice().unwrap()), &[("2, 1:4", vec![3, 4], le16(&rb.iter().copied().collect::<Vec<_>>()))]),
            "/c/0": expect_entry("|u1", &[13], u8s.as_slice().unwrap(), &[]),
            "/plain": expect_entry("|u1", &[13], u8s.as_slice().unwrap(), &[]),
        });
        check_against(&file, &arrays.clone().pipe_arrays(), name);
        leave(out.as_deref(), &format!("written_{name}"), &bytes, arrays);
    }
}

/// Wraps a map of arrays in the sidecar form.
trait PipeArrays {
    fn pipe_arrays(self) -> serde_json::Value;
}

impl PipeArrays for serde_json::Value {
    fn pipe_arrays(self) -> serde_json::Value {
        serde_json::json!({"arrays": self, "errors": {}})
    }
}

#[test]
fn written_edge_shapes_read_back() {
    // an empty axis, chunks larger than the array
    let mut w = Writer::new(WriteOptions::default());
    let zero_d = ndarray::arr0(2.5f32).into_dyn();
    let empty = ndarray::Array2::<i32>::zeros((0, 4));
    let big: ndarray::Array1<u32> = (0..5u32).collect();
    // 0-d: refused, asdf-zarr 0.0.4 cannot read it (numpy.nonzero of a 0-d chunk map)
    assert!(matches!(
        w.add_zarr_array(&zero_d, &[], ZarrCompressor::None),
        Err(asdf_core::write::WriteError::BadTree { .. })
    ));
    let b = w
        .add_zarr_array(&empty, &[2, 2], ZarrCompressor::Zlib { level: 1 })
        .unwrap();
    let c = w
        .add_zarr_array(&big, &[100], ZarrCompressor::Zstd { level: 1 })
        .unwrap();
    let bytes = w.write_to_vec(&Node::map([("b", b), ("c", c)])).unwrap();
    let file = AsdfFile::from_bytes(bytes.clone()).unwrap();
    assert_eq!(file.array::<i32>("/b").unwrap(), empty.into_dyn());
    assert_eq!(file.array::<u32>("/c").unwrap(), big.clone().into_dyn());
    // chunk sizes that do not fit the array's axes are refused
    let mut w = Writer::new(WriteOptions::default());
    assert!(w.add_zarr_array(&big, &[0], ZarrCompressor::None).is_err());
    assert!(w
        .add_zarr_array(&big, &[2, 2], ZarrCompressor::None)
        .is_err());
    if let Some(out) = asdf_test_data::write_out_dir() {
        let d = out.join("asdf-zarr");
        std::fs::create_dir_all(&d).unwrap();
        let arrays = serde_json::json!({
            "/b": expect_entry("<i4", &[0, 4], &[], &[]),
            "/c": expect_entry("<u4", &[5], &big.iter().flat_map(|v| v.to_le_bytes()).collect::<Vec<_>>(), &[("::-2", vec![3], [4u32, 2, 0].iter().flat_map(|v| v.to_le_bytes()).collect())]),
        });
        leave(Some(&d), "written_edges", &bytes, arrays);
    }
}

#[test]
fn rewriting_a_file_keeps_its_zarr_arrays() {
    // Writer::from_file copies each zarr node's chunks (any compressor, missing chunks kept
    // missing) into blocks of the new file with a renumbered map; the arrays read as zarr
    // read the original (the fixtures' sidecars), here and, with ASDF_WRITE_OUT, in python
    let Some(dir) = fixture_dir() else { return };
    let out = asdf_test_data::write_out_dir().map(|d| {
        let d = d.join("asdf-zarr");
        std::fs::create_dir_all(&d).unwrap();
        d
    });
    for name in [
        "mixed",
        "u1_2d_lz4_missing",
        "i8_2d_zstd_fortran",
        "unsupported",
    ] {
        let file = AsdfFile::open(dir.join(format!("{name}.asdf"))).unwrap();
        let bytes = Writer::from_file(&file, WriteOptions::default())
            .write_to_vec(file.tree())
            .unwrap();
        let back = AsdfFile::from_bytes(bytes.clone()).unwrap();
        let text = std::fs::read_to_string(dir.join(format!("{name}.zarr.json"))).unwrap();
        let expect: serde_json::Value = serde_json::from_str(&text).unwrap();
        check_against(&back, &expect, name);
        if let Some(d) = &out {
            std::fs::write(d.join(format!("rewritten_{name}.asdf")), &bytes).unwrap();
            std::fs::write(d.join(format!("rewritten_{name}.zarr.json")), &text).unwrap();
        }
    }
    // the missing chunk stays missing: u1_2d_lz4_missing has 3x3 chunks, one deleted
    let file = AsdfFile::open(dir.join("u1_2d_lz4_missing.asdf")).unwrap();
    let bytes = Writer::from_file(&file, WriteOptions::default())
        .write_to_vec(file.tree())
        .unwrap();
    assert_eq!(AsdfFile::from_bytes(bytes).unwrap().block_count(), 8 + 1);
}

#[test]
fn typed_reads_take_zarr_arrays() {
    let Some(bytes) = fixture("mixed") else {
        return;
    };
    let file = AsdfFile::from_bytes(bytes).unwrap();
    let a: ndarray::Array2<f32> = file.read_as("/group/a").unwrap();
    assert_eq!(a.into_dyn(), file.array::<f32>("/group/a").unwrap());
    let d: asdf_core::array::DynArray = file.read_as("/group/list/0").unwrap();
    assert_eq!(d.shape, vec![5]);
    // the dimension count is still checked
    assert!(file.read_as::<ndarray::Array1<f32>>("/group/a").is_err());
}
