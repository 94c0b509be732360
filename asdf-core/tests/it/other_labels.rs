//! Block labels of other writers (issue 31 item 4): ASDF.jl's `xz\0\0` blocks and its `lz4\0`
//! blocks stored as lz4 frames, beside python asdf's own lz4 framing; corrupt and cut blocks
//! of both; the `portable` write option; and `xz` files we write, left for python asdf
//! (`tests/oracle/other_labels.py`); abacusutils' length-prefixed `blsc` pieces.
//!
//! The fixtures and their `.values.json` (what numpy holds) are made by
//! `tests/data/other-labels/generate.py`.

use std::io::Read;

use asdf_core::array::{ByteOrder, DType, DynArray};
use asdf_core::file::{ManifestOptions, PieceCodec};
use asdf_core::unstable::codec::{decode, CodecError, Compression};
use asdf_core::unstable::{decoder, decoder_at, encode};
use asdf_core::write::{
    ArrayOptions, CompressionChoice, Storage, WriteError, WriteOptions, WriteWarning, Writer,
};
use asdf_core::{AsdfFile, Error, Node, Selection};
use serde_json::Value as Json;
use sha2::{Digest, Sha256};

const DIR: &str = "other-labels";

fn fixture(name: &str) -> Option<(std::path::PathBuf, Json)> {
    let path = asdf_test_data::require(&format!("{DIR}/{name}.asdf"))?;
    let side = asdf_test_data::require(&format!("{DIR}/{name}.values.json"))?;
    let json: Json = serde_json::from_slice(&std::fs::read(side).unwrap()).unwrap();
    Some((path, json))
}

/// The elements of `a` as little-endian bytes in C order (the sidecar's hash input).
fn little_endian_bytes(a: &DynArray) -> Vec<u8> {
    match &a.dtype {
        DType::Scalar {
            byteorder: ByteOrder::Big,
            ..
        } => {
            let n = a.dtype.itemsize();
            a.data
                .chunks(n)
                .flat_map(|c| c.iter().rev().copied())
                .collect()
        }
        _ => a.data.clone(),
    }
}

/// Every array of the fixture reads as numpy holds it (datatype, shape, hash of the
/// elements, values), with checksums verified; every block is what the sidecar says.
fn reads_as_numpy(name: &str) -> Option<(AsdfFile, Json, Vec<u8>)> {
    let (path, side) = fixture(name)?;
    let file = AsdfFile::options()
        .verify_checksums(true)
        .open(&path)
        .unwrap();
    file.verify_checksums().unwrap();
    let arrays = side["arrays"].as_object().unwrap();
    assert_eq!(arrays.len(), 4, "{name}");
    for (key, want) in arrays {
        let got = file.dyn_array(&format!("/{key}")).unwrap();
        assert_eq!(got.dtype.to_numpy_str(), want["datatype"], "{name} {key}");
        let shape: Vec<u64> = want["shape"]
            .as_array()
            .unwrap()
            .iter()
            .map(|v| v.as_u64().unwrap())
            .collect();
        assert_eq!(
            got.shape.iter().map(|&d| d as u64).collect::<Vec<_>>(),
            shape,
            "{name} {key}"
        );
        let hash = hex(&Sha256::digest(little_endian_bytes(&got)));
        assert_eq!(hash, want["sha256_le"], "{name} {key}");
    }
    let bytes = std::fs::read(&path).unwrap();
    let blocks = side["blocks"].as_array().unwrap();
    assert_eq!(file.blocks().len(), blocks.len(), "{name}");
    for (h, want) in file.blocks().iter().zip(blocks) {
        let label = String::from_utf8_lossy(&h.compression)
            .trim_end_matches('\0')
            .to_string();
        assert_eq!(label, want["label"], "{name} block {}", h.index);
        assert_eq!(h.used_size, want["used_size"].as_u64().unwrap());
        assert_eq!(h.data_size, want["data_size"].as_u64().unwrap());
        let head = &bytes[h.data_offset() as usize..][..6.min(h.used_size as usize)];
        let layout = match head {
            [0xfd, b'7', b'z', b'X', b'Z', 0] => "xz-stream",
            [0x04, 0x22, 0x4d, 0x18, ..] => "lz4-frame",
            _ if label == "lz4" => "lz4-python-chunks",
            _ => "other",
        };
        assert_eq!(layout, want["layout"], "{name} block {}", h.index);
    }
    Some((file, side, bytes))
}

fn hex(b: &[u8]) -> String {
    b.iter().map(|x| format!("{x:02x}")).collect()
}

fn values_f64(side: &Json, key: &str) -> Vec<f64> {
    side["arrays"][key]["values"]
        .as_array()
        .unwrap()
        .iter()
        .map(|v| v.as_f64().unwrap())
        .collect()
}

fn stored<'a>(bytes: &'a [u8], file: &AsdfFile, block: usize) -> &'a [u8] {
    let h = &file.blocks()[block];
    &bytes[h.data_offset() as usize..][..h.used_size as usize]
}

#[test]
fn asdfjl_xz_blocks_read_as_numpy_holds() {
    let Some((file, side, bytes)) = reads_as_numpy("xz") else {
        return;
    };
    let f8 = file.array::<f64>("/f8_2d").unwrap();
    assert_eq!(f8.shape(), &[6, 10]);
    assert_eq!(
        f8.iter().copied().collect::<Vec<_>>(),
        values_f64(&side, "f8_2d")
    );
    // big-endian int16, as native values: their little-endian bytes hash as numpy's
    let i2 = file.array::<i16>("/i2_big").unwrap();
    let le: Vec<u8> = i2.iter().flat_map(|v| v.to_le_bytes()).collect();
    assert_eq!(
        hex(&Sha256::digest(le)),
        side["arrays"]["i2_big"]["sha256_le"]
    );
    assert_eq!(file.array::<f32>("/empty").unwrap().shape(), &[0, 3]);
    // the 3 MiB block (several LZMA2 chunks) as a stream, from a reader and by position, and
    // a region (decoded as a stream stopped after its last byte)
    let big = stored(&bytes, &file, 2);
    let whole = decode(Compression::Xz, big, 3 << 20).unwrap();
    for mut r in [
        decoder(Compression::Xz, big, 3 << 20).unwrap(),
        decoder_at(Compression::Xz, big, 3 << 20).unwrap(),
    ] {
        let mut out = Vec::new();
        r.read_to_end(&mut out).unwrap();
        assert!(out == whole);
    }
    let all = file.array::<i64>("/i8_3mib").unwrap();
    let sel: Selection = "1000:390000:7".parse().unwrap();
    let part = file.region::<i64>("/i8_3mib", &sel).unwrap();
    // numpy's 1000:390000:7: (390000 - 1000) / 7 rounded up elements
    let want: Vec<i64> = (1000..390000).step_by(7).map(|k| all[[k]]).collect();
    assert_eq!(want.len(), 55572);
    assert_eq!(part.iter().copied().collect::<Vec<_>>(), want);
    let m = file
        .manifest("/i8_3mib", &ManifestOptions::default())
        .unwrap();
    assert!(m.pieces.iter().all(|p| p.codec == PieceCodec::Xz));
}

#[test]
fn asdfjl_lz4_frames_and_python_chunks_read_under_one_label() {
    let Some((file, side, bytes)) = reads_as_numpy("lz4frame") else {
        return;
    };
    let f8 = file.array::<f64>("/f8_2d").unwrap();
    assert_eq!(
        f8.iter().copied().collect::<Vec<_>>(),
        values_f64(&side, "f8_2d")
    );
    let f4 = file.array::<f32>("/f4_big").unwrap();
    let want: Vec<f32> = values_f64(&side, "f4_big")
        .iter()
        .map(|&v| v as f32)
        .collect();
    assert_eq!(f4.iter().copied().collect::<Vec<_>>(), want);
    // the 5 MiB frame of two linked blocks, as a stream too
    let big = stored(&bytes, &file, 1);
    let whole = decode(Compression::Lz4, big, 5 << 20).unwrap();
    for mut r in [
        decoder(Compression::Lz4, big, 5 << 20).unwrap(),
        decoder_at(Compression::Lz4, big, 5 << 20).unwrap(),
    ] {
        let mut out = Vec::new();
        r.read_to_end(&mut out).unwrap();
        assert!(out == whole);
    }
    // regions of the frame (one piece, the whole block) and of python's chunks (a
    // file opened again, so nothing is cached)
    let file = AsdfFile::open(asdf_test_data::path(&format!("{DIR}/lz4frame.asdf"))).unwrap();
    let sel: Selection = "600000:300:-3".parse().unwrap();
    let part = file.region::<i64>("/i8_5mib", &sel).unwrap();
    let all = file.array::<i64>("/i8_5mib").unwrap();
    let want: Vec<i64> = (0..part.len()).map(|k| all[[600000 - 3 * k]]).collect();
    assert_eq!(part.iter().copied().collect::<Vec<_>>(), want);
    let sel: Selection = "69990:5:-11".parse().unwrap();
    let part = file.region::<u8>("/u1_python_framing", &sel).unwrap();
    let all = file.array::<u8>("/u1_python_framing").unwrap();
    let want: Vec<u8> = (0..part.len()).map(|k| all[[69990 - 11 * k]]).collect();
    assert_eq!(part.iter().copied().collect::<Vec<_>>(), want);
    // the manifest: a frame is one lz4f piece; python's framing stays lz4 sub-blocks
    let m = file
        .manifest("/i8_5mib", &ManifestOptions::default())
        .unwrap();
    assert_eq!(m.pieces.len(), 1);
    assert_eq!(m.pieces[0].codec, PieceCodec::Lz4f);
    let m = file
        .manifest("/u1_python_framing", &ManifestOptions::default())
        .unwrap();
    assert!(m.pieces.iter().all(|p| p.codec == PieceCodec::Lz4Block));
}

/// Cut and damaged `xz` and lz4-frame blocks: typed errors (or, where the format has no
/// check, other bytes of the declared size), never a panic.
#[test]
fn corrupt_and_cut_blocks_are_typed_errors() {
    let Some((xz_file, _, xz_bytes)) = reads_as_numpy("xz") else {
        return;
    };
    let Some((lz_file, _, lz_bytes)) = reads_as_numpy("lz4frame") else {
        return;
    };
    let cases = [
        (Compression::Xz, stored(&xz_bytes, &xz_file, 0), 480u64),
        (Compression::Xz, stored(&xz_bytes, &xz_file, 2), 3 << 20),
        (Compression::Lz4, stored(&lz_bytes, &lz_file, 0), 480),
        (Compression::Lz4, stored(&lz_bytes, &lz_file, 1), 5 << 20),
    ];
    for (c, s, size) in cases {
        // every cut is an error, whole and streamed; except that a frame cut only in its
        // 4-byte end mark, all its blocks whole, gives its data (as lz4_flex reads it)
        let whole = decode(c, s, size).unwrap();
        // (fewer tries on the large blocks: a debug build decodes them slowly)
        let tries = if size > 1 << 20 { 19 } else { 97 };
        let step = (s.len() / tries).max(1);
        for cut in (0..s.len()).step_by(step).chain([s.len() - 5, s.len() - 1]) {
            let r = decode(c, &s[..cut], size);
            let end_mark_only = c == Compression::Lz4 && cut >= s.len() - 4;
            match r {
                Ok(out) if end_mark_only => assert!(out == whole),
                Err(CodecError::Corrupt { .. } | CodecError::SizeMismatch { .. }) => {}
                other => panic!("{c} cut at {cut}: {:?}", other.map(|v| v.len())),
            }
            let streamed = decoder(c, &s[..cut], size)
                .unwrap()
                .read_to_end(&mut Vec::new());
            assert!(
                streamed.is_err() || end_mark_only,
                "{c} streamed, cut at {cut}"
            );
        }
        // a wrong declared size
        for declared in [size + 1, size.saturating_sub(1)] {
            assert!(decode(c, s, declared).is_err(), "{c} declared {declared}");
        }
        // flipped bytes: an error or bytes of the declared size, never a panic
        let step = (s.len() / (3 * tries)).max(1);
        for at in (0..s.len()).step_by(step) {
            let mut bad = s.to_vec();
            bad[at] ^= 0x41;
            if let Ok(out) = decode(c, &bad, size) {
                assert_eq!(out.len() as u64, size);
            }
        }
    }
    // xz checks its data (CRC64): a flip in the compressed data of the first block is caught,
    // and the file names the block
    let h = &xz_file.blocks()[0];
    let mut bad = xz_bytes.clone();
    let at = h.data_offset() as usize + h.used_size as usize / 2;
    bad[at] ^= 0x10;
    let f = AsdfFile::from_bytes(bad).unwrap();
    match f.array::<f64>("/f8_2d") {
        Err(Error::Codec {
            block: 0, source, ..
        }) => {
            assert!(
                matches!(source, CodecError::Corrupt { codec: "xz", .. }),
                "{source:?}"
            )
        }
        other => panic!("expected a codec error of block 0, got {other:?}"),
    }
    // a frame cut short inside the file (used_size shrunk): an lz4 error naming block 1
    let h = &lz_file.blocks()[1];
    let mut bad = lz_bytes.clone();
    let used_at = h.offset as usize + 6 + 4 + 4 + 8;
    bad[used_at..used_at + 8].copy_from_slice(&(h.used_size / 2).to_be_bytes());
    let f = AsdfFile::from_bytes(bad).unwrap();
    match f.array::<i64>("/i8_5mib") {
        Err(Error::Codec { block: 1, .. }) => {}
        other => panic!("expected a codec error of block 1, got {other:?}"),
    }
}

fn write_with(
    opts: WriteOptions,
    codecs: &[Option<Compression>],
) -> Result<(Vec<u8>, Vec<WriteWarning>), WriteError> {
    let a: Vec<f64> = (0..1000).map(|i| f64::from(i) / 3.0).collect();
    let a = ndarray::Array1::from(a);
    let mut w = Writer::new(opts);
    let mut entries = Vec::new();
    for (i, c) in codecs.iter().enumerate() {
        let compression = Some(match c {
            Some(c) => CompressionChoice::Codec(*c),
            None => CompressionChoice::None,
        });
        let n = w.add_array_with(
            &a,
            ArrayOptions {
                compression,
                storage: None,
            },
        );
        entries.push((format!("a{i}"), n));
    }
    let mut out = std::io::Cursor::new(Vec::new());
    let summary = w.write_to(&Node::map(entries), &mut out)?;
    Ok((out.into_inner(), summary.warnings))
}

#[test]
fn portable_refuses_and_plain_writes_warn_once_per_codec() {
    let xz = Some(Compression::Xz);
    let zstd = Some(Compression::Zstd);
    let python_reads = [
        None,
        Some(Compression::Zlib),
        Some(Compression::Bzp2),
        Some(Compression::Lz4),
    ];
    // python asdf's own codecs: no warning, and portable writes them
    let (_, warnings) = write_with(WriteOptions::default(), &python_reads).unwrap();
    assert!(warnings.is_empty());
    write_with(WriteOptions::default().portable(true), &python_reads).unwrap();
    // one warning per codec, naming its blocks, and the file is written and reads
    let (bytes, warnings) = write_with(WriteOptions::default(), &[None, xz, zstd, xz]).unwrap();
    assert_eq!(warnings.len(), 2, "{warnings:?}");
    match &warnings[0] {
        WriteWarning::NotPortable {
            codec,
            blocks,
            external_files,
            ..
        } => {
            assert_eq!(
                (*codec, blocks.as_slice()),
                (Compression::Xz, &[1usize, 3][..])
            );
            assert!(external_files.is_empty());
        }
        other => panic!("{other:?}"),
    }
    let text = warnings[0].to_string();
    assert!(
        text.starts_with("blocks 1, 3: python asdf 6.0.0 reads xz blocks only with a plugin"),
        "{text}"
    );
    assert!(
        matches!(&warnings[1], WriteWarning::NotPortable { codec: Compression::Zstd, blocks, .. } if blocks == &[2])
    );
    let f = AsdfFile::from_bytes(bytes).unwrap();
    assert_eq!(f.blocks()[1].compression, *b"xz\0\0");
    assert_eq!(
        f.array::<f64>("/a3").unwrap(),
        f.array::<f64>("/a0").unwrap()
    );
    // portable: refused before writing, naming the first such block and its codec
    for (codecs, block, codec) in [
        (vec![None, zstd, xz], "block 1", Compression::Zstd),
        (vec![xz], "block 0", Compression::Xz),
        (vec![Some(Compression::Lz4f)], "block 0", Compression::Lz4f),
        (vec![Some(Compression::Blsc)], "block 0", Compression::Blsc),
        (vec![Some(Compression::Bls2)], "block 0", Compression::Bls2),
        (vec![Some(Compression::Bsc2)], "block 0", Compression::Bsc2),
    ] {
        match write_with(WriteOptions::default().portable(true), &codecs) {
            Err(WriteError::NotPortable {
                block: b, codec: c, ..
            }) => {
                assert_eq!((b.as_str(), c), (block, codec))
            }
            other => panic!("{codecs:?}: {:?}", other.map(|_| ())),
        }
    }
}

#[test]
fn portable_covers_external_blocks_and_rewrites_lz4_frames_in_python_framing() {
    let dir = std::env::temp_dir().join(format!("asdf-other-labels-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let a = ndarray::Array1::from((0..100).map(f64::from).collect::<Vec<_>>());
    let opts = WriteOptions::default()
        .compression(CompressionChoice::Codec(Compression::Xz))
        .storage(Storage::External);
    let mut w = Writer::new(opts.clone());
    let n = w.add_array(&a);
    let s = w
        .write_to_path(&Node::map(vec![("a", n)]), dir.join("ext.asdf"))
        .unwrap();
    assert!(
        matches!(&s.warnings[..], [WriteWarning::NotPortable { codec: Compression::Xz, blocks, external_files, .. }]
        if blocks.is_empty() && external_files == &["ext0000.asdf".to_string()])
    );
    let mut w = Writer::new(opts.portable(true));
    let n = w.add_array(&a);
    match w.write_to_path(&Node::map(vec![("a", n)]), dir.join("ext2.asdf")) {
        Err(WriteError::NotPortable {
            block,
            codec: Compression::Xz,
            ..
        }) => {
            assert_eq!(block, "the block of external file ext20000.asdf")
        }
        other => panic!("{other:?}"),
    }
    assert!(!dir.join("ext2.asdf").exists());
    // keeping each block's codec: an lz4 frame is written again in python's framing (the
    // label kept), python's chunks are copied as they are; the result is portable
    let Some((path, side)) = fixture("lz4frame") else {
        return;
    };
    let src = AsdfFile::open(&path).unwrap();
    let w = Writer::from_file(
        &src,
        WriteOptions::default()
            .compression(CompressionChoice::Input)
            .portable(true),
    );
    let out = dir.join("rewritten.asdf");
    let s = w.write_to_path(src.tree(), &out).unwrap();
    assert!(s.warnings.is_empty());
    let back = AsdfFile::options()
        .verify_checksums(true)
        .open(&out)
        .unwrap();
    let bytes = std::fs::read(&out).unwrap();
    for h in back.blocks() {
        assert_eq!(h.compression, *b"lz4\0");
        assert_ne!(
            bytes[h.data_offset() as usize..][..4],
            [0x04, 0x22, 0x4d, 0x18]
        );
    }
    for key in side["arrays"].as_object().unwrap().keys() {
        let p = format!("/{key}");
        assert_eq!(
            back.dyn_array(&p).unwrap(),
            src.dyn_array(&p).unwrap(),
            "{key}"
        );
    }
    std::fs::remove_dir_all(&dir).unwrap();
}

/// Our `xz` blocks: every level reads back here; with `ASDF_WRITE_OUT` set, a file of several
/// datatypes is left in its `other-labels/` folder with the values written, for
/// `tests/oracle/other_labels.py` (python asdf 6.0.0 with the generator's `xz` Compressor).
#[test]
fn our_xz_blocks_read_back_and_are_left_for_python() {
    let data: Vec<u8> = (0..200_000u32)
        .flat_map(|i| (i / 9).to_le_bytes())
        .collect();
    for level in [None, Some(0), Some(9), Some(-3), Some(42)] {
        let s = encode(Compression::Xz, &data, level).unwrap();
        assert_eq!(&s[..6], b"\xfd7zXZ\0");
        assert!(s.len() < data.len() / 10, "{level:?}");
        assert!(decode(Compression::Xz, &s, data.len() as u64).unwrap() == data);
    }
    let f8 = ndarray::Array2::from_shape_fn((40, 25), |(i, j)| (i * 25 + j) as f64 / 8.0 - 3.0);
    let i4: ndarray::Array1<i32> = (0..5000).map(|i| (i * 37) % 1001 - 500).collect();
    let u2_big = DynArray {
        dtype: DType::scalar(asdf_core::array::ScalarType::UInt16, ByteOrder::Big),
        shape: vec![300],
        data: (0..300u16).flat_map(|v| (v * 211).to_be_bytes()).collect(),
    };
    let mut w =
        Writer::new(WriteOptions::default().compression(CompressionChoice::Codec(Compression::Xz)));
    let root = Node::map(vec![
        ("f8", w.add_array(&f8)),
        ("i4", w.add_array(&i4)),
        ("u2_big", w.add_array(&u2_big)),
    ]);
    let dir = std::env::temp_dir().join(format!("asdf-our-xz-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("ours_xz.asdf");
    let s = w.write_to_path(&root, &path).unwrap();
    assert_eq!(s.warnings.len(), 1);
    let f = AsdfFile::options()
        .verify_checksums(true)
        .open(&path)
        .unwrap();
    assert!(f.blocks().iter().all(|h| h.compression == *b"xz\0\0"));
    assert_eq!(f.array::<f64>("/f8").unwrap(), f8.clone().into_dyn());
    assert_eq!(f.array::<i32>("/i4").unwrap(), i4.clone().into_dyn());
    assert_eq!(f.dyn_array("/u2_big").unwrap(), u2_big);
    if let Some(out) = asdf_test_data::write_out_dir() {
        let out = out.join(DIR);
        std::fs::create_dir_all(&out).unwrap();
        std::fs::copy(&path, out.join("ours_xz.asdf")).unwrap();
        let values = serde_json::json!({
            "f8": {"datatype": "<f8", "shape": [40, 25], "values": f8.iter().collect::<Vec<_>>()},
            "i4": {"datatype": "<i4", "shape": [5000], "values": i4.iter().collect::<Vec<_>>()},
            "u2_big": {"datatype": ">u2", "shape": [300],
                       "values": (0..300u32).map(|v| (v * 211) as u16).collect::<Vec<_>>()},
        });
        std::fs::write(out.join("ours_xz.values.json"), values.to_string()).unwrap();
    }
    std::fs::remove_dir_all(&dir).unwrap();
}

// ---- abacusutils' `blsc` blocks ----
//
// `[u32 big-endian n][Blosc1 chunk of n bytes]` per 4 MiB piece, made by
// `tests/data/other-labels/generate_abacus.py` with python-blosc 1.11.4 framed as abacusutils'
// `BloscCompressor` frames them: read as numpy holds the arrays (whole, as a stream, by region
// across pieces), told apart from one plain Blosc1 chunk by their sizes, and damaged
// framings are typed errors.

/// The abacusutils fixture, opened with checksums verified, its sidecar and its bytes.
fn abacus() -> Option<(AsdfFile, Json, Vec<u8>)> {
    let (path, side) = fixture("abacus_blsc")?;
    let file = AsdfFile::options()
        .verify_checksums(true)
        .open(&path)
        .unwrap();
    Some((file, side, std::fs::read(&path).unwrap()))
}

#[test]
fn abacus_blocks_read_as_numpy_holds() {
    let Some((file, side, bytes)) = abacus() else {
        return;
    };
    file.verify_checksums().unwrap();
    let arrays = side["arrays"].as_object().unwrap();
    assert_eq!(arrays.len(), 4);
    for (key, want) in arrays {
        let got = file.dyn_array(&format!("/{key}")).unwrap();
        assert_eq!(got.dtype.to_numpy_str(), want["datatype"], "{key}");
        let shape: Vec<usize> = serde_json::from_value(want["shape"].clone()).unwrap();
        assert_eq!(got.shape, shape, "{key}");
        assert_eq!(
            hex(&Sha256::digest(little_endian_bytes(&got))),
            want["sha256_le"],
            "{key}"
        );
    }
    // the blocks are abacusutils' framing with the pieces the generator saw
    let blocks = side["blocks"].as_array().unwrap();
    assert_eq!(file.blocks().len(), blocks.len());
    for (i, want) in blocks.iter().enumerate() {
        let s = stored(&bytes, &file, i);
        let mut at = 0usize;
        let mut lengths = Vec::new();
        while at < s.len() {
            let n = u32::from_be_bytes(s[at..at + 4].try_into().unwrap()) as usize;
            lengths.push(n as u64);
            at += 4 + n;
        }
        let want: Vec<u64> = serde_json::from_value(want["pieces"].clone()).unwrap();
        assert_eq!(lengths, want, "block {i}");
    }
}

#[test]
fn streams_and_regions_cross_the_pieces() {
    let Some((file, _, bytes)) = abacus() else {
        return;
    };
    for i in 0..file.blocks().len() {
        let h = &file.blocks()[i];
        let s = stored(&bytes, &file, i);
        let whole = decode(Compression::Blsc, s, h.data_size).unwrap();
        let mut streamed = Vec::new();
        decoder_at(Compression::Blsc, s, h.data_size)
            .unwrap()
            .read_to_end(&mut streamed)
            .unwrap();
        assert!(streamed == whole, "block {i}: the stream differs");
    }
    // 4 MiB pieces of int64: element 524288 starts the second piece
    let all = file.array::<i64>("/i8_10mib").unwrap();
    let sel: Selection = "524280:524300".parse().unwrap();
    let part = file.region::<i64>("/i8_10mib", &sel).unwrap();
    assert_eq!(
        part.iter().copied().collect::<Vec<_>>(),
        all.as_slice().unwrap()[524280..524300]
    );
    // the last element, from the short third piece
    let last = file
        .region::<i64>("/i8_10mib", &"-1".parse().unwrap())
        .unwrap();
    assert_eq!(last.iter().next(), all.iter().last());
}

/// A manifest of an abacusutils block has one `blsc` piece per Blosc1 chunk (what kerchunk
/// references point at, and numcodecs' Blosc decodes), not the whole block, which is no
/// Blosc1 chunk: each piece decodes on its own, as one plain chunk, to its bytes of the array.
#[test]
fn manifests_point_at_each_abacus_chunk() {
    let Some((file, side, bytes)) = abacus() else {
        return;
    };
    let blocks = side["blocks"].as_array().unwrap();
    let want_pieces: Vec<u64> = serde_json::from_value(blocks[0]["pieces"].clone()).unwrap();
    assert_eq!(want_pieces.len(), 3);
    let m = file
        .manifest("/i8_10mib", &ManifestOptions::default())
        .unwrap();
    assert_eq!(m.pieces.len(), 3);
    let all = file.dyn_array("/i8_10mib").unwrap();
    let all = little_endian_bytes(&all);
    let mut next = 0u64;
    for (p, &n) in m.pieces.iter().zip(&want_pieces) {
        assert_eq!(p.codec, PieceCodec::Blsc);
        assert_eq!(
            p.length, n,
            "the piece is the chunk, without its length prefix"
        );
        assert_eq!(p.decoded.start, next);
        let at = p.offset as usize;
        let chunk = &bytes[at..at + p.length as usize];
        let len = p.decoded.end - p.decoded.start;
        let got = decode(Compression::Blsc, chunk, len).unwrap();
        assert!(got[..] == all[p.decoded.start as usize..p.decoded.end as usize]);
        next = p.decoded.end;
    }
    assert_eq!(next, all.len() as u64);
    // a one-piece block (block 1, 16,000 bytes of float32) is one piece too: its chunk,
    // not the framed block
    let m = file
        .manifest("/f4_one_piece", &ManifestOptions::default())
        .unwrap();
    assert_eq!(m.pieces.len(), 1);
    assert_eq!(m.pieces[0].codec, PieceCodec::Blsc);
    let h = &file.blocks()[1];
    assert_eq!(m.pieces[0].length + 4, h.used_size);
}

#[test]
fn one_piece_is_told_from_one_plain_chunk() {
    let Some((file, _, bytes)) = abacus() else {
        return;
    };
    // block 1 is one piece: its 4-byte length, then a Blosc1 chunk that is a plain `blsc`
    // block on its own; both forms decode to the same bytes
    let h = &file.blocks()[1];
    let s = stored(&bytes, &file, 1);
    assert_eq!(
        u32::from_be_bytes(s[..4].try_into().unwrap()) as usize,
        s.len() - 4
    );
    let framed = decode(Compression::Blsc, s, h.data_size).unwrap();
    let plain = decode(Compression::Blsc, &s[4..], h.data_size).unwrap();
    assert!(framed == plain);
    // and our own one-chunk blocks still read as one chunk
    let data: Vec<u8> = (0..50_000u32).flat_map(|v| (v / 7).to_le_bytes()).collect();
    let ours = encode(Compression::Blsc, &data, None).unwrap();
    assert_eq!(
        decode(Compression::Blsc, &ours, data.len() as u64).unwrap(),
        data
    );
}

#[test]
fn damaged_framings_are_typed_errors() {
    let Some((file, _, bytes)) = abacus() else {
        return;
    };
    let h = &file.blocks()[0];
    let s = stored(&bytes, &file, 0).to_vec();
    let size = h.data_size;
    let corrupt = |r: Result<Vec<u8>, CodecError>| match r {
        Err(CodecError::Corrupt { codec, message }) => {
            assert_eq!(codec, "blsc");
            message
        }
        other => panic!("{:?}", other.map(|v| v.len())),
    };
    // a piece length one byte longer: the next length lands inside a chunk
    let mut longer = s.clone();
    let n = u32::from_be_bytes(longer[..4].try_into().unwrap());
    longer[..4].copy_from_slice(&(n + 1).to_be_bytes());
    let m = corrupt(decode(Compression::Blsc, &longer, size));
    assert!(m.contains("abacusutils"), "{m}");
    // cut inside the last piece
    let m = corrupt(decode(Compression::Blsc, &s[..s.len() - 10], size));
    assert!(m.contains("ends past"), "{m}");
    // the pieces decode to other than the block's size
    let m = corrupt(decode(Compression::Blsc, &s, size + 8));
    assert!(m.contains("decode to"), "{m}");
    // the same through the streaming decoder: an error, never a panic
    for bad in [&longer[..], &s[..s.len() - 10]] {
        let mut out = Vec::new();
        let r = decoder_at(Compression::Blsc, bad, size)
            .unwrap()
            .read_to_end(&mut out);
        assert!(r.is_err());
    }
    // every cut of a one-piece block is an error or the right bytes, never a panic
    let one = stored(&bytes, &file, 1);
    let want = decode(Compression::Blsc, one, file.blocks()[1].data_size).unwrap();
    for cut in 0..one.len() {
        if let Ok(v) = decode(Compression::Blsc, &one[..cut], file.blocks()[1].data_size) {
            assert!(v == want);
        }
    }
}
