//! ASDF 0.1.0 files: the three legacy block layouts (44, 36 and 40 bytes), the draft's
//! encoding chains, `dtype` and the `%TAG`-versioned tags, read from the asdf-standard history
//! in `tests/data/legacy-0.1.0/` (each file against its `.yaml` twin, where every array is
//! inline), and upgraded to the current standard by the writer.

use crate::common;

use std::path::{Path, PathBuf};

use asdf_core::array::{CompressionChoice, Storage};
use asdf_core::unstable::layout::{LayoutError, LegacyLayout};
use asdf_core::write::{WriteOptions, Writer};
use asdf_core::{AsdfFile, Error};
use serde_json::Value;

/// The folder of the legacy files in the test data.
const LEGACY: &str = "legacy-0.1.0";
/// Its snapshots and the block layout each uses.
const SNAPSHOTS: [(&str, LegacyLayout); 3] = [
    ("2014-10-16-0dc34b0", LegacyLayout::Header44),
    ("2015-01-07-b453313", LegacyLayout::Draft36),
    ("2015-03-09-b85b73e", LegacyLayout::Header40),
];
/// Files per snapshot: 10 or 11 `.asdf` with their twins, and `exploded0000.asdf`.
const FILES: [usize; 3] = [21, 23, 23];

fn snapshot(name: &str) -> Option<PathBuf> {
    asdf_test_data::require_dir(&format!("{LEGACY}/{name}"))
}

/// The tree of a canonical document, without what may differ between a file and its twin
/// (the byte-order character of dtypes: inline arrays are native, blocks as written).
fn twin_content(doc: &Value) -> Value {
    fn strip(v: &mut Value) {
        match v {
            Value::Object(map) => {
                if let Some(Value::Object(nd)) = map.get_mut("$ndarray") {
                    if let Some(dt) = nd.get_mut("dtype") {
                        strip_order(dt);
                    }
                }
                map.values_mut().for_each(strip);
            }
            Value::Array(items) => items.iter_mut().for_each(strip),
            _ => {}
        }
    }
    fn strip_order(dt: &mut Value) {
        match dt {
            Value::String(s) if s.starts_with(['<', '>', '|', '=']) => s.replace_range(..1, ""),
            Value::Array(items) => items.iter_mut().for_each(strip_order),
            _ => {}
        }
    }
    let mut tree = doc.get("tree").cloned().unwrap_or(Value::Null);
    if let Some(Value::Object(root)) = tree.get_mut("value") {
        root.remove("asdf_library");
        root.remove("history");
    }
    if let Value::Object(root) = &mut tree {
        root.remove("$tag"); // core/asdf-1.0.0 read, core/asdf-1.1.0 written
    }
    strip(&mut tree);
    tree
}

/// The complex arrays of a file by tree path: the twins hold the text python 2 printed
/// (`repr` of complex numbers had 12 significant digits), so they are compared apart, to
/// that precision.
fn complex_arrays(f: &AsdfFile) -> Vec<(String, Vec<num_complex::Complex<f64>>)> {
    f.arrays()
        .into_iter()
        .filter_map(|(p, _)| {
            let a = f.dyn_array(&p).unwrap();
            let c = a.to_array::<num_complex::Complex<f64>>().ok().or_else(|| {
                a.to_array::<num_complex::Complex<f32>>()
                    .ok()
                    .map(|x| x.mapv(|v| num_complex::Complex::new(v.re as f64, v.im as f64)))
            })?;
            Some((p, c.into_raw_vec_and_offset().0))
        })
        .collect()
}

fn close(a: f64, b: f64) -> bool {
    (a.is_nan() && b.is_nan()) || a == b || (a - b).abs() <= 1e-11 * a.abs().max(b.abs())
}

/// Removes the sha256 of complex ndarrays (compared by [`complex_arrays`]).
fn without_complex_hashes(v: &mut Value) {
    match v {
        Value::Object(map) => {
            if let Some(Value::Object(nd)) = map.get_mut("$ndarray") {
                let complex = nd
                    .get("dtype")
                    .and_then(Value::as_str)
                    .is_some_and(|d| d.contains('c'));
                if complex {
                    nd.remove("sha256");
                }
            }
            map.values_mut().for_each(without_complex_hashes);
        }
        Value::Array(items) => items.iter_mut().for_each(without_complex_hashes),
        _ => {}
    }
}

fn canonical(path: &Path) -> Result<Value, String> {
    let text = asdf_core::unstable::canonical::document_json(path).map_err(|e| format!("{e:?}"))?;
    common::parse_json(&text)
}

fn canonical_of(file: &AsdfFile) -> Value {
    common::parse_json(&asdf_core::unstable::canonical::to_json(file).unwrap()).unwrap()
}

/// Every `.asdf` with a twin, per snapshot.
fn pairs(dir: &Path) -> Vec<(PathBuf, PathBuf)> {
    common::files_with_suffix(dir, &[".asdf"])
        .into_iter()
        .filter_map(|a| {
            let y = a.with_extension("yaml");
            y.is_file().then_some((a, y))
        })
        .collect()
}

#[test]
fn every_legacy_file_equals_its_yaml_twin() {
    let mut failures = Vec::new();
    let mut seen = 0;
    for ((name, _), files) in SNAPSHOTS.iter().zip(FILES) {
        let Some(dir) = snapshot(name) else { return };
        let all = common::files_with_suffix(&dir, &[".asdf", ".yaml"]);
        assert_eq!(all.len(), files, "{name}: files");
        for (asdf, yaml) in pairs(&dir) {
            seen += 1;
            match (canonical(&asdf), canonical(&yaml)) {
                (Ok(a), Ok(y)) => {
                    // the twin holds arrays: a comparison of two empty trees proves nothing
                    assert!(y.to_string().contains("$ndarray"), "{}", yaml.display());
                    let (mut a, mut y) = (twin_content(&a), twin_content(&y));
                    if asdf.ends_with("complex.asdf") {
                        without_complex_hashes(&mut a);
                        without_complex_hashes(&mut y);
                        let fa = complex_arrays(&AsdfFile::open(&asdf).unwrap());
                        let fy = complex_arrays(&AsdfFile::open(&yaml).unwrap());
                        assert_eq!(fa.len(), 4, "{}", asdf.display());
                        assert_eq!(fa.len(), fy.len());
                        for ((pa, va), (py, vy)) in fa.iter().zip(&fy) {
                            assert_eq!(pa, py);
                            assert_eq!(va.len(), vy.len(), "{pa}");
                            for (i, (x, z)) in va.iter().zip(vy).enumerate() {
                                assert!(
                                    close(x.re, z.re) && close(x.im, z.im),
                                    "{} {pa}[{i}]: {x} != {z}",
                                    asdf.display()
                                );
                            }
                        }
                    }
                    let diffs = common::compare(&y, &a, &[]);
                    if !diffs.is_empty() {
                        failures.push(format!("{}: {}", asdf.display(), diffs.join("; ")));
                    }
                }
                (a, y) => {
                    failures.push(format!("{}: {:?} / {:?}", asdf.display(), a.err(), y.err()))
                }
            }
        }
    }
    assert_eq!(seen, 10 + 11 + 11, "pairs");
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

#[test]
fn each_snapshot_uses_its_block_layout() {
    for (name, layout) in SNAPSHOTS {
        let Some(dir) = snapshot(name) else { return };
        for (asdf, _) in pairs(&dir) {
            let f = AsdfFile::open(&asdf).unwrap();
            if asdf.ends_with("exploded.asdf") {
                assert!(f.blocks().is_empty());
                continue;
            }
            assert!(!f.blocks().is_empty(), "{}", asdf.display());
            for b in f.blocks() {
                let lb = f.layout().legacy_block(b.index).unwrap();
                assert_eq!(lb.layout, layout, "{}", asdf.display());
                assert_eq!(b.header_size, layout.header_size());
            }
        }
    }
}

#[test]
fn typed_reads_of_each_layout() {
    let ints: Vec<i64> = (0..8).collect();
    for (name, _) in SNAPSHOTS {
        let Some(dir) = snapshot(name) else { return };
        let basic = AsdfFile::open(dir.join("basic.asdf")).unwrap();
        assert_eq!(
            basic
                .array::<i64>("/data")
                .unwrap()
                .into_raw_vec_and_offset()
                .0,
            ints
        );
        assert_eq!(basic.standard_version(), asdf_core::StandardVersion::V1_0_0);
        assert_eq!(
            basic.node("/data").unwrap().tag(),
            Some("tag:stsci.edu:asdf/core/ndarray-1.0.0")
        );
        assert_eq!(
            basic.tree().tag(),
            Some("tag:stsci.edu:asdf/core/asdf-1.0.0")
        );
        let exploded = AsdfFile::open(dir.join("exploded.asdf")).unwrap();
        assert_eq!(
            exploded
                .array::<i64>("/data")
                .unwrap()
                .into_raw_vec_and_offset()
                .0,
            ints
        );
        let shared = AsdfFile::open(dir.join("shared.asdf")).unwrap();
        assert_eq!(
            shared
                .array::<i64>("/subset")
                .unwrap()
                .into_raw_vec_and_offset()
                .0,
            vec![1, 3, 5, 7]
        );
        let stream = AsdfFile::open(dir.join("stream.asdf")).unwrap();
        let s = stream.array::<f64>("/my_stream").unwrap();
        assert_eq!(s.shape()[1], 8);
        assert!(s.shape()[0] >= 8, "{name}: {:?}", s.shape());
        for (i, row) in s.outer_iter().enumerate() {
            assert!(row.iter().all(|&v| v == i as f64), "{name}: row {i}");
        }
        let float = AsdfFile::open(dir.join("float.asdf")).unwrap();
        let key = float
            .arrays()
            .into_iter()
            .map(|(p, _)| p)
            .find(|p| p.ends_with(">f4"));
        let big = float.array::<f32>(&key.unwrap()).unwrap();
        assert_eq!(big[[6]], f32::MAX, "{name}");
        if name != "2014-10-16-0dc34b0" {
            // the 36-byte draft: a `--- [zlib]` chain; the 40-byte layout: a zlib label
            let c = AsdfFile::open(dir.join("compressed.asdf")).unwrap();
            let v = c.array::<i64>("/data").unwrap().into_raw_vec_and_offset().0;
            assert_eq!(v, (0..128).collect::<Vec<i64>>(), "{name}");
        }
    }
}

#[test]
fn legacy_files_validate_as_standard_1_0_0() {
    for (name, _) in SNAPSHOTS {
        let Some(dir) = snapshot(name) else { return };
        for (asdf, yaml) in pairs(&dir) {
            for p in [&asdf, &yaml] {
                let f = AsdfFile::open(p).unwrap();
                f.validate()
                    .unwrap_or_else(|e| panic!("{}: {e}", p.display()));
            }
        }
    }
}

/// `asdftool defragment` and `to-yaml` (the writer's `from_file` with internal and inline
/// storage) upgrade a legacy file to the current standard: the result has the twin's content.
/// With `ASDF_WRITE_OUT`, python asdf then opens each with validation (`check_written.py`).
#[test]
fn defragment_and_to_yaml_upgrade_legacy_files() {
    let modes: [(&str, WriteOptions); 3] =
        [
            (
                "defragment",
                WriteOptions::new()
                    .storage(Storage::Internal)
                    .compression(CompressionChoice::Input),
            ),
            ("to_yaml", WriteOptions::new().storage(Storage::Inline)),
            (
                "defragment_zlib",
                WriteOptions::new().storage(Storage::Internal).compression(
                    CompressionChoice::Codec(asdf_core::write::Compression::Zlib),
                ),
            ),
        ];
    for (name, _) in SNAPSHOTS {
        let Some(dir) = snapshot(name) else { return };
        for (asdf, yaml) in pairs(&dir) {
            let file = AsdfFile::open(&asdf).unwrap();
            // exactly the legacy file's content (which equals its twin's: the test above)
            assert!(yaml.is_file());
            let expected = twin_content(&canonical(&asdf).unwrap());
            for (mode, opts) in &modes {
                let bytes = Writer::from_file(&file, opts.clone())
                    .write_to_vec(file.tree())
                    .unwrap_or_else(|e| panic!("{} {mode}: {e:?}", asdf.display()));
                assert!(bytes.starts_with(b"#ASDF 1.0.0\n#ASDF_STANDARD 1.6.0\n"));
                let back = AsdfFile::from_bytes(bytes.clone()).unwrap();
                assert!(!back.layout().is_legacy());
                assert!(back.layout().legacy.is_empty());
                back.validate()
                    .unwrap_or_else(|e| panic!("{} {mode}: {e}", asdf.display()));
                let diffs = common::compare(&expected, &twin_content(&canonical_of(&back)), &[]);
                assert!(diffs.is_empty(), "{} {mode}: {diffs:?}", asdf.display());
                let stem = asdf.file_stem().unwrap().to_string_lossy();
                common::dump_for_oracle(&format!("legacy_{name}_{stem}_{mode}"), &bytes);
            }
        }
    }
}

// ---- hand-made files: encoding chains and malformed headers --------------------------------

/// A `#ASDF 0.1.0` file with an int64/float ndarray at `/data` and one block of header layout
/// `header_size` whose header fields are `fields` and data `data`.
fn legacy_file(ndarray: &str, header_size: u16, fields: &[u8], data: &[u8]) -> Vec<u8> {
    let mut f = format!(
        "#ASDF 0.1.0\n%YAML 1.1\n%TAG ! tag:stsci.edu:asdf/0.1.0/\n--- !core/asdf\n\
         data: !core/ndarray\n{ndarray}...\n"
    )
    .into_bytes();
    f.extend_from_slice(b"\xd3BLK");
    f.extend_from_slice(&header_size.to_be_bytes());
    f.extend_from_slice(fields);
    f.extend_from_slice(data);
    f
}

/// The fields of a 36-byte draft header.
fn draft(flags: u32, allocated: u64, used: u64, memory: u64) -> Vec<u8> {
    let mut f = flags.to_be_bytes().to_vec();
    for v in [allocated, used, memory, 0] {
        f.extend_from_slice(&v.to_be_bytes());
    }
    f
}

fn zlib(data: &[u8]) -> Vec<u8> {
    asdf_core::unstable::encode(asdf_core::write::Compression::Zlib, data, None).unwrap()
}

/// A draft ENCODED block: the chain's YAML, then `payload`.
fn encoded_file(ndarray: &str, chain: &str, payload: &[u8], memory: u64) -> Vec<u8> {
    let mut data = format!("--- {chain}\n...\n").into_bytes();
    data.extend_from_slice(payload);
    let n = data.len() as u64;
    legacy_file(ndarray, 36, &draft(2, n, n, memory), &data)
}

/// `tile` as the draft spec text defines it, written independently of the decoder: a 5x3
/// int16 array in 2x2 tiles (edge tiles padded) then zlib.
#[test]
fn tile_chain_reorders_tiles_back() {
    let (rows, cols) = (5usize, 3usize);
    let value = |r: usize, c: usize| (r * 10 + c) as i16;
    // tile grid 3x2 in C order, each 2x2 tile in C order, padding 0
    let mut tiled = Vec::new();
    for tr in 0..3 {
        for tc in 0..2 {
            for r in tr * 2..tr * 2 + 2 {
                for c in tc * 2..tc * 2 + 2 {
                    let v = if r < rows && c < cols { value(r, c) } else { 0 };
                    tiled.extend_from_slice(&v.to_le_bytes());
                }
            }
        }
    }
    assert_eq!(tiled.len(), 3 * 2 * 4 * 2);
    let f = encoded_file(
        "  source: 0\n  dtype: int16\n  byteorder: little\n  shape: [5, 3]\n",
        "[[tile, {shape: [2, 2], original_shape: [5, 3], item_size: 2}], zlib]",
        &zlib(&tiled),
        30,
    );
    let file = AsdfFile::from_bytes(f).unwrap();
    let a = file.array::<i16>("/data").unwrap();
    assert_eq!(a.shape(), &[5, 3]);
    for r in 0..rows {
        for c in 0..cols {
            assert_eq!(a[[r, c]], value(r, c), "({r}, {c})");
        }
    }
}

/// Big-endian bit packing of `bits`-bit two's-complement values, as the spec text says.
fn pack(values: &[i64], bits: u32) -> Vec<u8> {
    let mut out = vec![0u8; (values.len() * bits as usize).div_ceil(8)];
    let mut bit = 0usize;
    for &v in values {
        for i in (0..bits).rev() {
            if (v >> i) & 1 == 1 {
                out[bit / 8] |= 0x80 >> (bit % 8);
            }
            bit += 1;
        }
    }
    out
}

fn quantize_chunk(bits: u8, offset: f64, scale: f64, values: &[i64]) -> Vec<u8> {
    let mut c = vec![bits];
    c.extend_from_slice(&offset.to_be_bytes());
    c.extend_from_slice(&scale.to_be_bytes());
    c.extend_from_slice(&(values.len() as u64).to_be_bytes());
    c.extend_from_slice(&pack(values, bits as u32));
    c
}

#[test]
fn quantize_chain_decodes_chunks_of_packed_bits() {
    // two chunks: 5-bit values (not byte aligned) and 12-bit ones, negatives included
    let a = [-16i64, -1, 0, 7, 15];
    let b = [-2048i64, 2047, 3];
    let mut payload = quantize_chunk(5, 100.0, 0.5, &a);
    payload.extend(quantize_chunk(12, -1.0, 2.0, &b));
    let expected: Vec<f64> = a
        .iter()
        .map(|&v| v as f64 * 0.5 + 100.0)
        .chain(b.iter().map(|&v| v as f64 * 2.0 - 1.0))
        .collect();
    for (order, f) in [
        (
            "big",
            AsdfFile::from_bytes(encoded_file(
                "  source: 0\n  dtype: float64\n  byteorder: big\n  shape: [8]\n",
                "[[quantize, {dtype: 64, original_shape: [8]}], zlib]",
                &zlib(&payload),
                64,
            )),
        ),
        (
            "little",
            AsdfFile::from_bytes(encoded_file(
                "  source: 0\n  dtype: float64\n  byteorder: little\n  shape: [8]\n",
                "[[quantize, {dtype: 64, original_shape: [8]}]]",
                &payload,
                64,
            )),
        ),
    ] {
        let v = f
            .unwrap()
            .array::<f64>("/data")
            .unwrap()
            .into_raw_vec_and_offset()
            .0;
        assert_eq!(v, expected, "{order}");
    }
    // float32, then tiles: [[tile], [quantize], zlib] as in the spec's CFITSIO-like example
    let vals: Vec<i64> = (0..6).map(|i| i - 3).collect(); // a 2x3 array in 2x2 tiles: 2 tiles
                                                          // tiled order: tile (0,0) = [0,1;3,4], tile (0,1) = [2,pad;5,pad]
    let tiled = [vals[0], vals[1], vals[3], vals[4], vals[2], 0, vals[5], 0];
    let payload = quantize_chunk(4, 0.0, 0.25, &tiled);
    let f = AsdfFile::from_bytes(encoded_file(
        "  source: 0\n  dtype: float32\n  byteorder: little\n  shape: [2, 3]\n",
        "[[tile, {shape: [2, 2], original_shape: [2, 3], item_size: 4}], \
         [quantize, {dtype: 32, original_shape: [8]}], zlib]",
        &zlib(&payload),
        24,
    ))
    .unwrap();
    let a = f.array::<f32>("/data").unwrap();
    let want: Vec<f32> = vals.iter().map(|&v| v as f32 * 0.25).collect();
    assert_eq!(a.into_raw_vec_and_offset().0, want);
}

#[test]
fn an_unknown_encoding_fails_only_its_array() {
    let mut f = String::from(
        "#ASDF 0.1.0\n%YAML 1.1\n%TAG ! tag:stsci.edu:asdf/0.1.0/\n--- !core/asdf\n\
         odd: !core/ndarray\n  source: 0\n  dtype: uint8\n  shape: [4]\n\
         fine: !core/ndarray\n  source: 1\n  dtype: uint8\n  shape: [4]\n...\n",
    )
    .into_bytes();
    let odd_offset = f.len() as u64;
    let data = b"--- [lzma]\n...\nABCD";
    f.extend_from_slice(b"\xd3BLK\x00\x24");
    f.extend_from_slice(&draft(2, 19, 19, 4));
    f.extend_from_slice(data);
    f.extend_from_slice(b"\xd3BLK\x00\x24");
    f.extend_from_slice(&draft(0, 4, 4, 4));
    f.extend_from_slice(&[1, 2, 3, 4]);
    let file = AsdfFile::from_bytes(f).unwrap();
    assert_eq!(
        file.array::<u8>("/fine")
            .unwrap()
            .into_raw_vec_and_offset()
            .0,
        [1, 2, 3, 4]
    );
    match file.array::<u8>("/odd") {
        Err(Error::LegacyEncoding {
            block: 0,
            offset,
            source: asdf_core::file::LegacyEncodingError::Unknown(name),
        }) => {
            assert_eq!(offset, odd_offset);
            assert_eq!(name, "lzma");
        }
        other => panic!("{other:?}"),
    }
    // the tree and the other array are readable; canonical fails only on the odd array
    assert!(file.node("/fine").is_ok());
}

#[test]
fn a_chain_without_end_line_is_a_typed_error() {
    let mut f = encoded_file(
        "  source: 0\n  dtype: uint8\n  shape: [4]\n",
        "[zlib]",
        b"",
        4,
    );
    // spoil the chain's `...` line: the chain has no end
    let at = f.windows(11).position(|w| w == b"[zlib]\n...\n").unwrap();
    f[at + 9] = b'X';
    let file = AsdfFile::from_bytes(f).unwrap();
    assert!(matches!(
        file.array::<u8>("/data"),
        Err(Error::LegacyEncoding {
            block: 0,
            source: asdf_core::file::LegacyEncodingError::NoChainEnd,
            ..
        })
    ));
}

fn layout_err(bytes: Vec<u8>) -> LayoutError {
    match AsdfFile::from_bytes(bytes) {
        Err(Error::Layout(e)) => e,
        other => panic!("{other:?}"),
    }
}

#[test]
fn malformed_legacy_headers_are_typed_errors_with_offsets() {
    let nd = "  source: 0\n  dtype: uint8\n  shape: [4]\n";
    let block_at = legacy_file(nd, 36, &[], &[]).len() as u64 - 6;
    // a size that is no layout
    assert_eq!(
        layout_err(legacy_file(nd, 38, &[0; 38], &[1, 2, 3, 4])),
        LayoutError::NotLegacyHeaderSize {
            index: 0,
            offset: block_at,
            header_size: 38
        }
    );
    // streamed and encoded together
    assert_eq!(
        layout_err(legacy_file(nd, 36, &draft(3, 0, 0, 0), &[])),
        LayoutError::LegacyStreamedEncoded {
            index: 0,
            offset: block_at
        }
    );
    // cut inside the header
    assert_eq!(
        layout_err(legacy_file(nd, 40, &[0; 20], &[])),
        LayoutError::BlockHeaderTooShort {
            index: 0,
            offset: block_at,
            needed: 46,
            available: 26
        }
    );
    // sizes beyond the file: no allocation, an error
    assert_eq!(
        layout_err(legacy_file(
            nd,
            36,
            &draft(0, u64::MAX, 4, 4),
            &[1, 2, 3, 4]
        )),
        LayoutError::BlockOutOfBounds {
            index: 0,
            offset: block_at,
            end: u64::MAX,
            file_len: block_at + 42 + 4
        }
    );
    // not encoded, but memory_size differs from used_size
    assert_eq!(
        layout_err(legacy_file(nd, 36, &draft(0, 4, 4, 8), &[1, 2, 3, 4])),
        LayoutError::BadSizes {
            index: 0,
            offset: block_at,
            allocated: 4,
            used: 4,
            data: 8
        }
    );
    // used beyond allocated (44-byte layout)
    let mut f44 = vec![0, 0, 0, 0];
    f44.extend_from_slice(&4u64.to_be_bytes());
    f44.extend_from_slice(&5u64.to_be_bytes());
    f44.extend_from_slice(&[0; 24]);
    assert_eq!(
        layout_err(legacy_file(nd, 44, &f44, &[1, 2, 3, 4, 5])),
        LayoutError::BadSizes {
            index: 0,
            offset: block_at,
            allocated: 4,
            used: 5,
            data: 5
        }
    );
    // a 1.x file keeps refusing small headers as before
    let mut v = legacy_file(nd, 36, &draft(0, 4, 4, 4), &[1, 2, 3, 4]);
    v[..11].copy_from_slice(b"#ASDF 1.0.0");
    assert_eq!(
        layout_err(v),
        LayoutError::HeaderSizeTooSmall {
            index: 0,
            offset: block_at,
            header_size: 36
        }
    );
}

#[test]
fn decoded_sizes_are_checked_before_allocation() {
    // memory_size claims 1 TiB + 1 byte: over the default block limit, refused without
    // allocating it
    let f = encoded_file(
        "  source: 0\n  dtype: uint8\n  shape: [4]\n",
        "[zlib]",
        &zlib(&[1, 2, 3, 4]),
        (1 << 40) + 1,
    );
    let file = AsdfFile::from_bytes(f).unwrap();
    assert!(matches!(
        file.array::<u8>("/data"),
        Err(Error::LegacyEncoding {
            source: asdf_core::file::LegacyEncodingError::TooLarge { .. },
            ..
        })
    ));
    // a memory_size that disagrees with the stream
    let f = encoded_file(
        "  source: 0\n  dtype: uint8\n  shape: [4]\n",
        "[zlib]",
        &zlib(&[1, 2, 3, 4]),
        5,
    );
    let file = AsdfFile::from_bytes(f).unwrap();
    assert!(matches!(
        file.array::<u8>("/data"),
        Err(Error::LegacyEncoding {
            source: asdf_core::file::LegacyEncodingError::Codec(_),
            ..
        })
    ));
}

/// Every open option reads the same content: memory-mapped, eager, checksums asked for (the
/// 8-byte legacy checksums are not MD5 digests and are not verified).
#[test]
fn open_options_agree_on_legacy_files() {
    use asdf_core::OpenOptions;
    for (name, _) in SNAPSHOTS {
        let Some(dir) = snapshot(name) else { return };
        for (asdf, _) in pairs(&dir) {
            let plain = canonical_of(&AsdfFile::open(&asdf).unwrap());
            for opts in [
                OpenOptions::new().mmap(true),
                OpenOptions::new().lazy(false),
                OpenOptions::new().verify_checksums(true),
            ] {
                let f = opts.open(&asdf).unwrap();
                f.verify_checksums().unwrap();
                let diffs = common::compare(&plain, &canonical_of(&f), &[]);
                assert!(diffs.is_empty(), "{} {opts:?}: {diffs:?}", asdf.display());
            }
        }
    }
}

/// Typed reads through `read_as` (the `FromAsdf` path) see the mapped ndarray tags.
#[test]
fn read_as_reads_legacy_arrays() {
    for (name, _) in SNAPSHOTS {
        let Some(dir) = snapshot(name) else { return };
        let f = AsdfFile::open(dir.join("int.asdf")).unwrap();
        let key = f
            .arrays()
            .into_iter()
            .map(|(p, _)| p)
            .find(|p| p.ends_with("<i2"))
            .unwrap();
        let a: ndarray::ArrayD<i16> = f.read_as(&key).unwrap();
        assert_eq!(a.into_raw_vec_and_offset().0, [32767, -32768, 0], "{name}");
    }
}

/// Each legacy file cut at every byte: an error or a shorter reading, never a panic; a cut
/// inside the first block header is the typed header error at that block's offset.
#[test]
fn cut_legacy_files_fail_cleanly() {
    for (name, layout) in SNAPSHOTS {
        let Some(dir) = snapshot(name) else { return };
        // every file without an external block, each cut at every byte: no panic
        for (asdf, _) in pairs(&dir) {
            if asdf.ends_with("exploded.asdf") {
                continue;
            }
            let bytes = std::fs::read(&asdf).unwrap();
            for cut in 0..bytes.len() {
                if let Ok(f) = AsdfFile::from_bytes(bytes[..cut].to_vec()) {
                    for (p, _) in f.arrays() {
                        let _ = f.dyn_array(&p);
                    }
                }
            }
        }
        let bytes = std::fs::read(dir.join("basic.asdf")).unwrap();
        let whole = AsdfFile::from_bytes(bytes.clone()).unwrap();
        let first = whole.blocks()[0].offset;
        let header_end = first + 6 + u64::from(layout.header_size());
        for cut in 0..bytes.len() {
            let result = AsdfFile::from_bytes(bytes[..cut].to_vec());
            if let Ok(f) = &result {
                for (p, _) in f.arrays() {
                    let _ = f.dyn_array(&p);
                }
            }
            let cut = cut as u64;
            if cut >= first + 6 && cut < header_end {
                match result {
                    Err(Error::Layout(LayoutError::BlockHeaderTooShort {
                        offset, needed, ..
                    })) => {
                        assert_eq!(offset, first, "{name} cut at {cut}");
                        assert_eq!(needed, 6 + u64::from(layout.header_size()));
                    }
                    other => panic!("{name} cut at {cut}: {other:?}"),
                }
            }
        }
    }
}

/// The 2014 layout's 16-byte encoding field is set in no known file: a block that sets it
/// fails its arrays with the field's text; a 0.1.0 block of 48 bytes or more is the 1.x one.
#[test]
fn the_2014_encoding_field_and_1x_headers_in_0_1_0_files() {
    let nd = "  source: 0\n  dtype: uint8\n  shape: [4]\n";
    let mut f44 = vec![0, 0, 0, 0];
    f44.extend_from_slice(&4u64.to_be_bytes());
    f44.extend_from_slice(&4u64.to_be_bytes());
    f44.extend_from_slice(&[0; 8]);
    f44.extend_from_slice(b"rle\0\0\0\0\0\0\0\0\0\0\0\0\0");
    let bytes = legacy_file(nd, 44, &f44, &[1, 2, 3, 4]);
    let block_at = bytes.len() as u64 - 4 - 50;
    let file = AsdfFile::from_bytes(bytes).unwrap();
    match file.array::<u8>("/data") {
        Err(Error::LegacyEncoding {
            block: 0,
            offset,
            source: asdf_core::file::LegacyEncodingError::Unknown(name),
        }) => assert_eq!((offset, name.as_str()), (block_at, "rle")),
        other => panic!("{other:?}"),
    }
    // 48 bytes: flags, compression, allocated, used, data, 16-byte MD5 (none)
    let mut f48 = vec![0; 8];
    for v in [4u64, 4, 4] {
        f48.extend_from_slice(&v.to_be_bytes());
    }
    f48.extend_from_slice(&[0; 16]);
    let file = AsdfFile::from_bytes(legacy_file(nd, 48, &f48, &[5, 6, 7, 8])).unwrap();
    assert_eq!(file.layout().legacy_block(0), None);
    assert_eq!(file.layout().legacy.len(), 1);
    assert_eq!(
        file.array::<u8>("/data")
            .unwrap()
            .into_raw_vec_and_offset()
            .0,
        [5, 6, 7, 8]
    );
}
