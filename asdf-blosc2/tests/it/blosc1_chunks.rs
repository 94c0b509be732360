//! Blosc1 chunks: every chunk python-blosc 1.11.4 (C-Blosc 1.21) wrote
//! (tests/data/blosc1/generate.py) decodes here to its input; and chunks written here, in
//! every codec and shuffle, read back here and (`ASDF_WRITE_OUT`) are left for python-blosc
//! to read (asdf-blosc2/tests/check_written.py).

use std::path::PathBuf;

use asdf_blosc2::blosc1::{self, Params, Shuffle};
use asdf_blosc2::Codec;
use sha2::{Digest, Sha256};

fn data_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/data/blosc1")
}

fn cases() -> Vec<serde_json::Value> {
    let text = std::fs::read_to_string(data_dir().join("manifest.json")).unwrap();
    let m: serde_json::Value = serde_json::from_str(&text).unwrap();
    assert_eq!(m["python-blosc"], "1.11.4");
    m["cases"].as_array().unwrap().clone()
}

fn sha256(b: &[u8]) -> String {
    Sha256::digest(b)
        .iter()
        .map(|x| format!("{x:02x}"))
        .collect()
}

#[test]
fn chunks_c_blosc_1_wrote_decode_to_their_input() {
    let cases = cases();
    assert_eq!(cases.len(), 62, "cases in the manifest");
    let mut codecs = std::collections::BTreeSet::new();
    for case in &cases {
        let file = case["file"].as_str().unwrap();
        let stored = std::fs::read(data_dir().join(file)).unwrap();
        let n = case["nbytes"].as_u64().unwrap() as usize;
        let want = case["sha256"].as_str().unwrap();
        let h = blosc1::parse(&stored).unwrap();
        assert_eq!(h.nbytes, n, "{file}");
        assert_eq!(
            h.typesize as u64,
            case["typesize"].as_u64().unwrap(),
            "{file}"
        );
        assert_eq!(h.cbytes, stored.len(), "{file}");
        let out = blosc1::decode(&stored, n).unwrap_or_else(|e| panic!("{file}: {e}"));
        assert_eq!(sha256(&out), want, "{file}");
        let mut into = vec![0xa5u8; n];
        blosc1::decode_to_slice(&stored, &mut into).unwrap();
        assert_eq!(into, out, "{file}");
        // the declared size is bounded by the caller's limit
        if n > 0 {
            assert!(blosc1::decode(&stored, n - 1).is_err(), "{file}");
        }
        if !h.memcpyed() {
            codecs.insert(case["codec"].as_str().unwrap().to_string());
        }
    }
    assert_eq!(
        codecs.len(),
        5,
        "compressed chunks of every codec: {codecs:?}"
    );
}

#[test]
fn corrupted_chunks_c_blosc_1_wrote_are_errors_not_panics() {
    for case in cases() {
        let file = case["file"].as_str().unwrap();
        let stored = std::fs::read(data_dir().join(file)).unwrap();
        let n = case["nbytes"].as_u64().unwrap() as usize;
        for at in (0..stored.len().min(48)).chain([stored.len() / 2, stored.len() - 1]) {
            for flip in [0x01u8, 0x10, 0x80, 0xff] {
                let mut bad = stored.clone();
                bad[at] ^= flip;
                // (a changed decoded size may still decode, within the limit)
                if let Ok(out) = blosc1::decode(&bad, n) {
                    assert!(out.len() <= n, "{file} byte {at}");
                }
            }
        }
        assert!(blosc1::decode(&stored[..stored.len() - 1], n).is_err() || n == 0);
    }
}

/// Array-like bytes: `n` items of `ts` bytes, slowly varying with a little noise.
fn items(n: usize, ts: usize) -> Vec<u8> {
    let mut x = 0x1234_5678u32;
    (0..n)
        .flat_map(|i| {
            x = x.wrapping_mul(1_103_515_245).wrapping_add(12345);
            let v = (i as u64 / 5) * 1000 + u64::from(x >> 30);
            let mut b = v.to_le_bytes().to_vec();
            b.resize(ts, (i % 3) as u8);
            b
        })
        .collect()
}

#[test]
fn chunks_written_here_read_back_and_are_left_for_python() {
    let out = std::env::var_os("ASDF_WRITE_OUT").map(|d| PathBuf::from(d).join("blosc1-chunks"));
    if let Some(o) = &out {
        std::fs::create_dir_all(o).unwrap();
    }
    let mut n = 0;
    let codecs = [
        (Codec::Blosclz, "blosclz"),
        (Codec::Lz4, "lz4"),
        (Codec::Lz4hc, "lz4hc"),
        (Codec::Zlib, "zlib"),
        (Codec::Zstd, "zstd"),
    ];
    let shuffles = [
        (Shuffle::None, "none"),
        (Shuffle::Byte, "byte"),
        (Shuffle::Bit, "bit"),
    ];
    // (items, item size, level, forced block size): an empty and a tiny input, one block,
    // several split blocks with a short last one, odd and large item sizes, level 0
    let shapes = [
        (0, 8, 9, 0),
        (10, 8, 9, 0),
        (700, 4, 5, 0),
        (30_001, 8, 9, 8192),
        (5_003, 3, 1, 0),
        (3_000, 32, 9, 4096),
        (2_000, 2, 0, 0),
        (150_000, 8, 5, 0),
    ];
    for (codec, cname) in codecs {
        for (shuffle, sname) in shuffles {
            for (k, &(items_n, ts, clevel, blocksize)) in shapes.iter().enumerate() {
                let data = items(items_n, ts);
                let p = Params {
                    codec,
                    clevel,
                    shuffle,
                    typesize: ts,
                    blocksize,
                };
                let c = blosc1::encode(&data, &p).unwrap();
                assert_eq!(blosc1::decode(&c, data.len()).unwrap(), data, "{p:?}");
                if let Some(o) = &out {
                    let name = format!("{cname}_{sname}_{k}");
                    std::fs::write(o.join(format!("{name}.blosc1")), &c).unwrap();
                    std::fs::write(o.join(format!("{name}.bin")), &data).unwrap();
                }
                n += 1;
            }
        }
    }
    assert_eq!(n, 120, "chunks written");
}
