//! Every frame python-blosc2 wrote (tests/data/generate.py) decodes here to the bytes numpy
//! held for it.

use std::path::PathBuf;

use asdf_blosc2::{Frame, Meta};

fn data_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/data/frames")
}

fn manifest() -> serde_json::Value {
    let text = std::fs::read_to_string(data_dir().join("manifest.json")).unwrap();
    serde_json::from_str(&text).unwrap()
}

/// The bytes of a case's frame: the file, or a sparse frame's index.
fn frame_bytes(case: &serde_json::Value) -> Vec<u8> {
    let p = data_dir().join(case["file"].as_str().unwrap());
    if case["sparse"].as_bool() == Some(true) {
        std::fs::read(p.join("chunks.b2frame")).unwrap()
    } else {
        std::fs::read(p).unwrap()
    }
}

fn parse<'a>(case: &serde_json::Value, bytes: &'a [u8]) -> Result<Frame<'a>, asdf_blosc2::Error> {
    if case["sparse"].as_bool() == Some(true) {
        let dir = data_dir().join(case["file"].as_str().unwrap());
        Frame::parse_sparse(bytes, dir, u64::MAX)
    } else {
        Frame::parse(bytes)
    }
}

fn to_json(m: &Meta) -> serde_json::Value {
    match m {
        Meta::Nil => serde_json::Value::Null,
        Meta::Boolean(b) => (*b).into(),
        Meta::Integer(i) => i
            .as_i64()
            .map_or_else(|| i.as_u64().unwrap().into(), Into::into),
        Meta::F32(f) => f64::from(*f).into(),
        Meta::F64(f) => (*f).into(),
        Meta::String(s) => s.as_str().unwrap().into(),
        Meta::Array(a) => a.iter().map(to_json).collect(),
        Meta::Map(m) => m
            .iter()
            .map(|(k, v)| (k.as_str().unwrap().to_string(), to_json(v)))
            .collect::<serde_json::Map<_, _>>()
            .into(),
        other => panic!("unexpected msgpack value {other:?}"),
    }
}

#[test]
fn every_python_frame_decodes_to_numpys_bytes() {
    every_python_frame_decodes();
}

/// With one thread in rayon's pool, whole frames and arrays are decoded on the calling
/// thread (another path than the parallel one): the same bytes.
#[test]
fn every_python_frame_decodes_the_same_on_one_thread() {
    rayon::ThreadPoolBuilder::new()
        .num_threads(1)
        .build()
        .unwrap()
        .install(every_python_frame_decodes);
}

fn every_python_frame_decodes() {
    let m = manifest();
    let cases = m["cases"].as_array().unwrap();
    assert_eq!(cases.len(), 71, "cases in the manifest");
    let mut failures = Vec::new();
    for case in cases {
        let name = case["name"].as_str().unwrap();
        let bytes = frame_bytes(case);
        let want = std::fs::read(data_dir().join(format!("{name}.bin"))).unwrap();
        let got = (|| -> Result<Vec<u8>, asdf_blosc2::Error> {
            let f = parse(case, &bytes)?;
            assert_eq!(
                f.typesize as u64,
                case["itemsize"].as_u64().unwrap(),
                "{name}"
            );
            match f.b2nd() {
                Some(nd) => {
                    let nd = nd?;
                    let shape: Vec<u64> = case["shape"]
                        .as_array()
                        .unwrap()
                        .iter()
                        .map(|d| d.as_u64().unwrap())
                        .collect();
                    assert_eq!(nd.shape, shape, "{name}");
                    if let Some(dt) = case["dtype"].as_str() {
                        assert_eq!(nd.dtype, dt, "{name}");
                    }
                    let vl: serde_json::Map<_, _> = f
                        .vlmeta()?
                        .iter()
                        .map(|(k, v)| (k.clone(), to_json(v)))
                        .collect();
                    assert_eq!(serde_json::Value::from(vl), case["vlmeta"], "{name}");
                    for (k, v) in case["meta"].as_object().unwrap() {
                        let got = f.meta(k).expect("metalayer present")?;
                        assert_eq!(&to_json(&got), v, "{name} metalayer {k}");
                    }
                    f.b2nd_array(&nd)
                }
                None => f.decode_all(),
            }
        })();
        match got {
            Ok(g) if g == want => {}
            Ok(g) => failures.push(format!(
                "{name}: {} bytes, {} expected, first difference at {:?}",
                g.len(),
                want.len(),
                g.iter().zip(&want).position(|(a, b)| a != b)
            )),
            Err(e) => failures.push(format!("{name}: {e}")),
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

#[test]
fn chunks_decode_one_at_a_time() {
    let bytes = std::fs::read(data_dir().join("schunk_f8.b2frame")).unwrap();
    let want = std::fs::read(data_dir().join("schunk_f8.bin")).unwrap();
    let f = Frame::parse(&bytes).unwrap();
    assert_eq!(f.nchunks, 5);
    assert_eq!(f.chunksize, 8000);
    for i in (0..f.nchunks).rev() {
        let c = f.chunk(i).unwrap();
        assert_eq!(c, want[i * 8000..(i * 8000 + 8000).min(want.len())]);
    }
    assert!(f.chunk(5).is_err());
}

/// Every fixture array written again here (codecs and filters in turn) reads back equal
/// here; with `ASDF_WRITE_OUT=DIR` the frames are left in `DIR/blosc2-frames/` with the
/// expected bytes, for `asdf-blosc2/tests/check_written.py` (python-blosc2 reads them).
#[test]
fn frames_written_here_read_back_and_are_left_for_python() {
    use asdf_blosc2::{b2nd_frame, CParams, Codec, Filter};
    let out = std::env::var_os("ASDF_WRITE_OUT").map(|d| PathBuf::from(d).join("blosc2-frames"));
    if let Some(o) = &out {
        std::fs::create_dir_all(o).unwrap();
    }
    let settings: Vec<(Codec, [(Filter, u8); 6])> = vec![
        (Codec::Zstd, Filter::Shuffle.only()),
        (Codec::Lz4, Filter::BitShuffle.only()),
        (Codec::Zlib, Filter::None.only()),
        (Codec::Zstd, Filter::BitShuffle.only()),
        (Codec::Lz4, Filter::Shuffle.only()),
        (Codec::Blosclz, Filter::Shuffle.only()),
        (Codec::Blosclz, Filter::BitShuffle.only()),
        (
            Codec::Zstd,
            Filter::pipeline(&[(Filter::Delta, 0), (Filter::Shuffle, 0)]),
        ),
        (
            Codec::Lz4,
            Filter::pipeline(&[(Filter::Shuffle, 0), (Filter::ByteDelta, 0)]),
        ),
        (Codec::Blosclz, Filter::Delta.only()),
        (Codec::Lz4hc, Filter::Shuffle.only()),
        (Codec::Lz4hc, Filter::BitShuffle.only()),
    ];
    let mut n = 0;
    for (k, case) in manifest()["cases"].as_array().unwrap().iter().enumerate() {
        let file = case["file"].as_str().unwrap();
        if !file.ends_with(".b2nd") {
            continue;
        }
        let name = case["name"].as_str().unwrap();
        let bytes = frame_bytes(case);
        let f = parse(case, &bytes).unwrap();
        let nd = f.b2nd().unwrap().unwrap();
        let data = f.b2nd_array(&nd).unwrap();
        let vl: Vec<(String, Vec<u8>)> = f.vlmetalayers.clone();
        let (codec, mut filters) = settings[k % settings.len()];
        if name.contains("truncprec") {
            // python-blosc2 kept 20 mantissa bits: truncating again to 20 changes nothing
            filters = Filter::pipeline(&[(Filter::TruncPrec, 20), (Filter::Shuffle, 0)]);
        }
        let p = CParams {
            codec,
            level: 5,
            filters,
            typesize: f.typesize,
            blocksize: 0,
        };
        let written = b2nd_frame(&nd, &data, &p, &vl).unwrap();
        let g = Frame::parse(&written).unwrap();
        let nd2 = g.b2nd().unwrap().unwrap();
        assert_eq!(nd2, nd, "{name}");
        assert_eq!(
            g.b2nd_array(&nd2).unwrap(),
            data,
            "{name} ({codec:?}, {filters:?})"
        );
        assert_eq!(g.vlmetalayers, vl, "{name}");
        if let Some(o) = &out {
            std::fs::write(o.join(format!("{name}.b2nd")), &written).unwrap();
            std::fs::write(o.join(format!("{name}.bin")), &data).unwrap();
        }
        n += 1;
    }
    assert_eq!(n, 66, "arrays written");
    // 20,000 chunks: the offsets index is stored uncompressed, which C-Blosc2 must read too
    let nd = asdf_blosc2::B2nd {
        shape: vec![320_000],
        chunkshape: vec![16],
        blockshape: vec![16],
        dtype: "<f4".into(),
    };
    let data: Vec<u8> = (0..320_000u32)
        .flat_map(|i| (i as f32 * 0.5).to_le_bytes())
        .collect();
    let p = CParams {
        typesize: 4,
        ..CParams::default()
    };
    let written = b2nd_frame(&nd, &data, &p, &[]).unwrap();
    let g = Frame::parse(&written).unwrap();
    assert_eq!(g.nchunks, 20_000);
    assert_eq!(g.chunk(19_999).unwrap(), &data[data.len() - 64..]);
    if let Some(o) = &out {
        std::fs::write(o.join("many_chunks.b2nd"), &written).unwrap();
        std::fs::write(o.join("many_chunks.bin"), &data).unwrap();
    }
}

#[test]
fn a_sparse_index_alone_is_refused_and_a_missing_chunk_file_named() {
    let dir = data_dir().join("sparse_f8.b2nd");
    let index = std::fs::read(dir.join("chunks.b2frame")).unwrap();
    assert!(matches!(
        Frame::parse(&index),
        Err(asdf_blosc2::Error::Unsupported { offset: 26, .. })
    ));
    let tmp = std::env::temp_dir().join(format!("asdf-b2-sparse-{}", std::process::id()));
    std::fs::create_dir_all(&tmp).unwrap();
    std::fs::write(tmp.join("chunks.b2frame"), &index).unwrap();
    std::fs::copy(dir.join("00000000.chunk"), tmp.join("00000000.chunk")).unwrap();
    let f = Frame::parse_sparse(&index, &tmp, u64::MAX).unwrap();
    assert!(f.chunk(0).is_ok());
    match f.chunk(1) {
        Err(asdf_blosc2::Error::Io { path, .. }) => {
            assert!(path.ends_with("00000001.chunk"), "{path}")
        }
        other => panic!("{other:?}"),
    }
    let _ = std::fs::remove_dir_all(&tmp);
}

#[test]
fn row_ranges_read_equal_numpys_rows_and_touch_only_their_chunks() {
    let mut n = 0;
    for case in manifest()["cases"].as_array().unwrap() {
        let shape = case["shape"].as_array().unwrap();
        let Some(rows) = shape.first().and_then(|d| d.as_u64()) else {
            continue;
        };
        if case["dtype"].is_null() || rows < 3 {
            continue;
        }
        let name = case["name"].as_str().unwrap();
        let bytes = frame_bytes(case);
        let f = parse(case, &bytes).unwrap();
        let nd = f.b2nd().unwrap().unwrap();
        let want = std::fs::read(data_dir().join(format!("{name}.bin"))).unwrap();
        let row = want.len() / rows as usize;
        for (a, b) in [(1, rows - 1), (0, 1), (rows - 1, rows), (2, 2)] {
            let got = f.b2nd_rows(&nd, a..b).unwrap();
            assert_eq!(
                got,
                want[a as usize * row..b as usize * row],
                "{name} {a}..{b}"
            );
        }
        assert!(f.b2nd_rows(&nd, 0..rows + 1).is_err());
        n += 1;
    }
    assert!(n > 50, "{n} arrays");

    // break the last chunk of a frame: the first rows still read, the whole array does not
    let mut bytes = std::fs::read(data_dir().join("zstd_shuffle.b2nd")).unwrap();
    let f = Frame::parse(&bytes).unwrap();
    let nd = f.b2nd().unwrap().unwrap();
    assert_eq!((nd.shape[0], nd.chunkshape[0], f.nchunks), (37, 10, 4));
    let last = f.chunk(3).unwrap();
    assert!(!last.is_empty());
    let at = bytes
        .windows(16)
        .rposition(|w| w[0] == 5 && w[2] == 0x85)
        .unwrap();
    drop(f);
    bytes[at + 12..at + 16].copy_from_slice(&1i32.to_le_bytes()); // cbytes: too small
    let f = Frame::parse(&bytes).unwrap();
    assert!(f.chunk(3).is_err());
    assert!(f.b2nd_rows(&nd, 0..30).is_ok());
    assert!(f.b2nd_array(&nd).is_err());
}

/// Our index is stored uncompressed and read in place; a compressed one (as C-Blosc2 writes
/// it) is decoded block by block as chunks are looked up. Both give every chunk.
#[test]
fn frames_of_many_chunks_look_up_offsets_in_place_or_block_by_block() {
    for compressed in [false, true] {
        many_chunks(compressed);
    }
}

fn many_chunks(compressed: bool) {
    use asdf_blosc2::{CParams, Codec, Filter, FrameWriter};
    let p = CParams {
        codec: Codec::Lz4,
        level: 5,
        filters: Filter::Shuffle.only(),
        typesize: 4,
        blocksize: 0,
    };
    let mut w = FrameWriter::new(64, p);
    w.compress_offsets = compressed;
    let chunk = |i: u32| -> Vec<u8> {
        (0..16u32)
            .flat_map(|k| (i * 16 + k).to_le_bytes())
            .collect()
    };
    for i in 0..20_000 {
        w.append(&chunk(i)).unwrap();
    }
    let frame = w.finish().unwrap();
    // the offsets index: 20,000 offsets stored as they are (160,000 bytes and a 32-byte
    // header) or compressed to far less
    let index_at = frame.len() - f_trailer_len(&frame) - 32 - 160_000;
    let stored = frame[index_at + 2] & 0x02 != 0
        && frame[index_at + 4..index_at + 8] == 160_000i32.to_le_bytes();
    assert_eq!(stored, !compressed, "index stored as it is");
    let f = Frame::parse(&frame).unwrap();
    assert_eq!(f.nchunks, 20_000);
    for i in [0u32, 1, 8191, 8192, 12_345, 19_999] {
        assert_eq!(f.chunk(i as usize).unwrap(), chunk(i), "chunk {i}");
    }
    let all = f.decode_all().unwrap();
    assert_eq!(all.len(), 20_000 * 64);
    assert_eq!(&all[64 * 777..64 * 778], &chunk(777)[..]);
}

/// The length of a frame's trailer (its 4-byte big-endian length sits 22 bytes from the end).
fn f_trailer_len(frame: &[u8]) -> usize {
    let at = frame.len() - 22;
    u32::from_be_bytes(frame[at..at + 4].try_into().unwrap()) as usize
}

/// Every input the fuzzer once crashed on (fuzz/regressions/blosc2, in the fuzz target's
/// format: a first byte, even for a frame, odd for a chunk) is now an error or a value.
#[test]
fn fuzz_regressions_are_errors() {
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../fuzz/regressions/blosc2");
    let mut n = 0;
    for entry in std::fs::read_dir(dir).unwrap() {
        let data = std::fs::read(entry.unwrap().path()).unwrap();
        let (pick, rest) = data.split_first().unwrap();
        if pick % 2 == 1 {
            let _ = asdf_blosc2::chunk::decode(rest, 16 << 20);
        } else if let Ok(f) = Frame::parse_limited(rest, 16 << 20) {
            for i in 0..f.nchunks {
                let _ = f.chunk(i);
            }
            let _ = f.vlmeta();
            if let Some(Ok(nd)) = f.b2nd() {
                let r = f.b2nd_array(&nd);
                if nd.chunkshape.contains(&0) {
                    assert!(
                        matches!(r, Err(asdf_blosc2::Error::Malformed { .. })),
                        "{r:?}"
                    );
                }
            }
        }
        n += 1;
    }
    assert_eq!(n, 1, "regression inputs");
}
