//! asdf-zarr arrays (`asdf://asdf-format.org/zarr/tags/zarr-1.0.0`) in `AsdfFile::arrays()`
//! and in chunk manifests: every fixture of `tests/data/asdf-zarr` (python asdf 6.0.0 +
//! asdf-zarr 0.0.4) lists exactly the arrays its sidecar holds, and each zarr array's
//! manifest pieces — read straight from the file's bytes and decoded by decoders of their
//! own (flate2, bzip2, zstd, lz4_flex; Blosc1 through the codec layer) — put together in
//! the chunk grid give the array zarr read (the sidecar's bytes).

use asdf_core::unstable::codec::{self, Compression};
use asdf_core::{AsdfFile, Error, ManifestOptions, PieceCodec, PieceSource};
use std::io::Read;

fn hex(b: &[u8]) -> String {
    b.iter().map(|x| format!("{x:02x}")).collect()
}

/// A fixture: its name, the file opened, its bytes and its sidecar.
type Fixture = (String, AsdfFile, Vec<u8>, serde_json::Value);

/// The fixtures' names with their sidecars.
fn fixtures() -> Option<Vec<Fixture>> {
    let dir = asdf_test_data::require_dir("asdf-zarr")?;
    let mut out = Vec::new();
    let mut names: Vec<String> = std::fs::read_dir(&dir)
        .unwrap()
        .filter_map(|e| {
            let name = e.unwrap().file_name().into_string().unwrap();
            name.strip_suffix(".asdf").map(str::to_string)
        })
        .collect();
    names.sort();
    assert_eq!(names.len(), 11, "{names:?}");
    for name in names {
        let path = dir.join(format!("{name}.asdf"));
        let raw = std::fs::read(&path).unwrap();
        let file = AsdfFile::open(&path).unwrap();
        let text = std::fs::read_to_string(dir.join(format!("{name}.zarr.json"))).unwrap();
        out.push((name, file, raw, serde_json::from_str(&text).unwrap()));
    }
    Some(out)
}

/// One chunk's stored bytes decoded as its piece codec says, by a decoder of this test.
fn decode(codec: PieceCodec, stored: &[u8], size: usize) -> Vec<u8> {
    let mut out = Vec::new();
    match codec {
        PieceCodec::None => out.extend_from_slice(stored),
        PieceCodec::Zlib => {
            flate2::read::ZlibDecoder::new(stored)
                .read_to_end(&mut out)
                .unwrap();
        }
        PieceCodec::Gzip => {
            flate2::read::GzDecoder::new(stored)
                .read_to_end(&mut out)
                .unwrap();
        }
        PieceCodec::Bzp2 => {
            bzip2::read::BzDecoder::new(stored)
                .read_to_end(&mut out)
                .unwrap();
        }
        PieceCodec::Zstd => out = zstd::decode_all(stored).unwrap(),
        PieceCodec::Lz4Block => {
            // numcodecs' LZ4: the decoded size as u32 little-endian, then one lz4 block
            let n = u32::from_le_bytes(stored[..4].try_into().unwrap()) as usize;
            assert_eq!(n, size);
            out = lz4_flex::block::decompress(&stored[4..], n).unwrap();
        }
        PieceCodec::Blsc => out = codec::decode(Compression::Blsc, stored, size as u64).unwrap(),
        other => panic!("unexpected piece codec {other}"),
    }
    assert_eq!(out.len(), size, "{codec}");
    out
}

#[test]
fn arrays_lists_the_zarr_arrays() {
    let Some(all) = fixtures() else { return };
    for (name, file, _, expect) in &all {
        let listed: Vec<String> = file.arrays().into_iter().map(|(p, _)| p).collect();
        let mut want: Vec<String> = expect["arrays"]
            .as_object()
            .unwrap()
            .keys()
            .cloned()
            .collect();
        want.extend(expect["errors"].as_object().unwrap().keys().cloned());
        let mut sorted = listed.clone();
        sorted.sort();
        want.sort();
        assert_eq!(sorted, want, "{name}");
    }
}

#[test]
fn manifest_pieces_are_the_chunks_zarr_reads() {
    let Some(all) = fixtures() else { return };
    let mut zarr_arrays = 0;
    let mut missing = 0;
    for (name, file, raw, expect) in &all {
        for (path, e) in expect["arrays"].as_object().unwrap() {
            let node = file.node(path).unwrap();
            if !asdf_core::file::is_zarr(node) {
                let m = file.manifest(path, &ManifestOptions::default()).unwrap();
                assert!(m.zarr().is_none(), "{name} {path}");
                continue;
            }
            zarr_arrays += 1;
            let m = file.manifest(path, &ManifestOptions::default()).unwrap();
            let z = m
                .zarr()
                .unwrap_or_else(|| panic!("{name} {path}: no zarr chunking"));
            let shape: Vec<usize> = serde_json::from_value(e["shape"].clone()).unwrap();
            assert_eq!(m.shape, shape, "{name} {path}");
            assert_eq!(m.dtype.to_numpy_str(), e["dtype"].as_str().unwrap());
            assert_eq!(m.zarr_chunks().as_ref(), Some(&z.chunks), "{name} {path}");
            let chunks: Vec<u64> =
                serde_json::from_value(z.zarray.get("chunks").map(node_json).unwrap()).unwrap();
            assert_eq!(
                chunks,
                z.chunks.iter().map(|&c| c as u64).collect::<Vec<_>>()
            );
            let grid: usize = z.grid.iter().product();
            assert_eq!(m.pieces.len(), grid, "{name} {path}");
            // put every chunk where its region says, from the file's bytes
            let item = m.itemsize();
            let n = shape.len();
            let mut out = vec![0u8; shape.iter().product::<usize>() * item];
            let chunk_items: usize = z.chunks.iter().product();
            for p in &m.pieces {
                let region = p.region.clone().expect("a zarr chunk is a box");
                assert_eq!(p.decoded, 0..(chunk_items * item) as u64);
                let bytes = match &p.source {
                    PieceSource::File => {
                        let at = p.offset as usize..(p.offset + p.length) as usize;
                        decode(p.codec, &raw[at], chunk_items * item)
                    }
                    PieceSource::Repeat(fill) => {
                        missing += 1;
                        assert_eq!(fill.len(), item);
                        fill.repeat(chunk_items)
                    }
                    other => panic!("{name} {path}: {other:?}"),
                };
                // each element of the box, from its place in the (C or F order) chunk
                let count: usize = region.iter().map(|r| r.len()).product();
                for k in 0..count {
                    let mut rest = k;
                    let mut local = vec![0usize; n];
                    for d in (0..n).rev() {
                        local[d] = rest % region[d].len();
                        rest /= region[d].len();
                    }
                    let axes = z.chunks.iter().zip(&local);
                    let in_chunk = if z.fortran {
                        axes.rev().fold(0usize, |acc, (c, l)| acc * c + l)
                    } else {
                        axes.fold(0usize, |acc, (c, l)| acc * c + l)
                    };
                    let at = shape
                        .iter()
                        .zip(&region)
                        .zip(&local)
                        .fold(0usize, |acc, ((s, r), l)| acc * s + r.start + l);
                    out[at * item..(at + 1) * item]
                        .copy_from_slice(&bytes[in_chunk * item..(in_chunk + 1) * item]);
                }
            }
            assert_eq!(hex(&out), e["hex"].as_str().unwrap(), "{name} {path}");
        }
    }
    // every zarr array of the fixtures (mixed holds two), and the chunks never written of
    // f8_2d_zlib_nan, i4_1d_raw_missing, f4_big_bz2 and u1_2d_lz4_missing
    assert_eq!(zarr_arrays, 11);
    assert!(missing >= 4, "{missing}");
}

#[test]
fn a_zarr_chunk_in_a_compressed_block_has_no_manifest() {
    use asdf_core::array::{ArrayOptions, WriteArray};
    use asdf_core::write::{CompressionChoice, WriteOptions, Writer};
    use asdf_core::{tree, Node};
    // two raw chunks of 3x4 float64 in zlib-compressed blocks 0 and 1, the map in block 2
    let values: Vec<f64> = (0..24).map(f64::from).collect();
    let bytes: Vec<u8> = values.iter().flat_map(|v| v.to_le_bytes()).collect();
    let mut w = Writer::new(WriteOptions::default());
    let zlib = ArrayOptions {
        compression: Some(CompressionChoice::Codec(Compression::Zlib)),
        storage: None,
    };
    let u8s = |b: &[u8]| {
        WriteArray::from_bytes(
            asdf_core::array::DType::from_numpy_str("|u1").unwrap(),
            vec![b.len()],
            b.to_vec().into(),
        )
        .unwrap()
    };
    let c0 = w.add_array_with(u8s(&bytes[..96]), zlib);
    let c1 = w.add_array_with(u8s(&bytes[96..]), zlib);
    let map_data = ndarray::arr1(&[0i32, 1]);
    let map = w.add_array(&map_data);
    let zarray = tree!({
        "chunks": [3, 4], "compressor": null, "dtype": "<f8", "fill_value": 0.0,
        "filters": null, "order": "C", "shape": [6, 4], "zarr_format": 2
    });
    let z = Node::tagged(
        asdf_core::file::ZARR_TAG,
        tree!({".zarray": zarray, "chunk_block_map": 2})
            .value()
            .clone(),
    );
    let root = tree!({"c0": c0, "c1": c1, "map": map, "z": z});
    let file = AsdfFile::from_bytes(w.write_to_vec(&root).unwrap()).unwrap();
    assert_eq!(
        file.arrays()
            .into_iter()
            .map(|(p, _)| p)
            .collect::<Vec<_>>(),
        ["/c0", "/c1", "/map", "/z"]
    );
    let a = file.array::<f64>("/z").unwrap();
    assert_eq!(a.iter().copied().collect::<Vec<_>>(), values);
    match file.manifest("/z", &ManifestOptions::default()) {
        Err(Error::Unsupported { what }) => {
            assert!(
                what.contains("two decoders") && what.contains("zlib"),
                "{what}"
            )
        }
        other => panic!("{other:?}"),
    }
}

fn node_json(n: &asdf_core::Node) -> serde_json::Value {
    match n.value() {
        asdf_core::Value::Seq(items) => items.iter().map(node_json).collect(),
        asdf_core::Value::Int(i) => serde_json::json!(i.as_i64().unwrap()),
        other => panic!("{other:?}"),
    }
}
