use super::*;

/// The oracle's input: `b"ASDF" * 16 + bytes(range(16))`.
fn data80() -> Vec<u8> {
    let mut d = b"ASDF".repeat(16);
    d.extend(0u8..16);
    d
}

// Produced by python: zlib.compress, bz2.compress, asdf's Lz4Compressor with
// compression_block_size=48 (two chunks), zstandard level 3, lz4.frame.compress,
// blosc.compress (80 bytes: stored uncompressed, "memcpyed").
const ZLIB: &[u8] = b"\x78\x9c\x73\x0c\x76\x71\x73\xa4\x00\x33\x30\x32\x31\xb3\xb0\xb2\xb1\x73\x70\x72\x71\xf3\xf0\xf2\xf1\x03\x00\x66\x15\x12\x59";
const BZP2: &[u8] = b"\x42\x5a\x68\x39\x31\x41\x59\x26\x53\x59\x57\x04\x9f\xbe\x00\x00\x0f\xc6\x00\x7f\xff\xa5\x00\x08\x00\x20\x00\x21\x29\x00\x01\xa1\xa1\x4c\x26\x9a\x03\x4c\x4f\x39\xf0\x8c\xa7\x4a\xda\xf8\xce\xb6\xaa\x88\x9c\x60\x06\x00\x60\x0f\x8b\xb9\x22\x9c\x28\x48\x2b\x82\x4f\xdf\x00";
const LZ4: &[u8] = b"\x00\x00\x00\x12\x30\x00\x00\x00\x4f\x41\x53\x44\x46\x04\x00\x14\x50\x46\x41\x53\x44\x46\x00\x00\x00\x1d\x20\x00\x00\x00\x48\x41\x53\x44\x46\x04\x00\xf0\x01\x00\x01\x02\x03\x04\x05\x06\x07\x08\x09\x0a\x0b\x0c\x0d\x0e\x0f";
const ZSTD: &[u8] = b"\x28\xb5\x2f\xfd\x20\x50\xd5\x00\x00\xa0\x41\x53\x44\x46\x00\x01\x02\x03\x04\x05\x06\x07\x08\x09\x0a\x0b\x0c\x0d\x0e\x0f\x01\x00\x59\x72\x44";
const LZ4F: &[u8] = b"\x04\x22\x4d\x18\x68\x40\x50\x00\x00\x00\x00\x00\x00\x00\xa3\x1a\x00\x00\x00\x4f\x41\x53\x44\x46\x04\x00\x29\xf0\x01\x00\x01\x02\x03\x04\x05\x06\x07\x08\x09\x0a\x0b\x0c\x0d\x0e\x0f\x00\x00\x00\x00";
const BLSC_MEMCPY: &[u8] = b"\x02\x01\x13\x08\x50\x00\x00\x00\x50\x00\x00\x00\x60\x00\x00\x00\x41\x53\x44\x46\x41\x53\x44\x46\x41\x53\x44\x46\x41\x53\x44\x46\x41\x53\x44\x46\x41\x53\x44\x46\x41\x53\x44\x46\x41\x53\x44\x46\x41\x53\x44\x46\x41\x53\x44\x46\x41\x53\x44\x46\x41\x53\x44\x46\x41\x53\x44\x46\x41\x53\x44\x46\x41\x53\x44\x46\x41\x53\x44\x46\x00\x01\x02\x03\x04\x05\x06\x07\x08\x09\x0a\x0b\x0c\x0d\x0e\x0f";
/// `blosc.compress(b"ASDF" * 2000)`: 8000 bytes, compressed (shuffle, blosclz).
const BLSC_8000: &[u8] = b"\x02\x01\x01\x08\x40\x1f\x00\x00\x40\x1f\x00\x00\xac\x00\x00\x00\x14\x00\x00\x00\x0f\x00\x00\x00\x23\x41\x41\x41\x41\xe0\xff\xff\xff\xdb\x03\x02\x41\x41\x41\x0f\x00\x00\x00\x23\x53\x53\x53\x53\xe0\xff\xff\xff\xdb\x03\x02\x53\x53\x53\x0f\x00\x00\x00\x23\x44\x44\x44\x44\xe0\xff\xff\xff\xdb\x03\x02\x44\x44\x44\x0f\x00\x00\x00\x23\x46\x46\x46\x46\xe0\xff\xff\xff\xdb\x03\x02\x46\x46\x46\x0f\x00\x00\x00\x23\x41\x41\x41\x41\xe0\xff\xff\xff\xdb\x03\x02\x41\x41\x41\x0f\x00\x00\x00\x23\x53\x53\x53\x53\xe0\xff\xff\xff\xdb\x03\x02\x53\x53\x53\x0f\x00\x00\x00\x23\x44\x44\x44\x44\xe0\xff\xff\xff\xdb\x03\x02\x44\x44\x44\x0f\x00\x00\x00\x23\x46\x46\x46\x46\xe0\xff\xff\xff\xdb\x03\x02\x46\x46\x46";

fn oracle() -> Vec<(Compression, &'static [u8])> {
    let mut v = vec![
        (Compression::Zlib, ZLIB),
        (Compression::Bzp2, BZP2),
        (Compression::Lz4, LZ4),
        (Compression::Zstd, ZSTD),
        (Compression::Lz4f, LZ4F),
    ];
    if cfg!(feature = "blosc2") {
        v.push((Compression::Blsc, BLSC_MEMCPY));
    }
    v
}

#[test]
fn labels_and_names() {
    assert_eq!(Compression::from_label(&[0; 4]), Ok(None));
    assert_eq!(
        Compression::from_label(b"lz4\0"),
        Ok(Some(Compression::Lz4))
    );
    assert_eq!(
        Compression::from_label(b"zlib"),
        Ok(Some(Compression::Zlib))
    );
    // ASDF.jl's xz blocks
    assert_eq!(
        Compression::from_label(b"xz\0\0"),
        Ok(Some(Compression::Xz))
    );
    assert_eq!(
        Compression::from_label(b"lzma"),
        Err(CodecError::UnknownLabel(*b"lzma"))
    );
    for c in Compression::ALL {
        assert_eq!(Compression::from_label(&c.label()), Ok(Some(c)));
        assert_eq!(c.name().parse::<Compression>(), Ok(c));
        assert_eq!(c.to_string(), c.name());
        assert_eq!(&c.label()[..c.name().len()], c.name().as_bytes());
    }
    assert_eq!(
        "gzip".parse::<Compression>(),
        Err(CodecError::UnknownName("gzip".into()))
    );
}

#[test]
fn decodes_python_output() {
    let want = data80();
    for (c, stored) in oracle() {
        assert_eq!(decode(c, stored, 80).unwrap(), want, "{c}");
        let mut out = vec![0u8; 80];
        decode_into(c, stored, &mut out).unwrap();
        assert_eq!(out, want, "{c}");
    }
}

#[test]
#[cfg(feature = "blosc2")]
fn decodes_compressed_blosc_chunk() {
    assert_eq!(
        decode(Compression::Blsc, BLSC_8000, 8000).unwrap(),
        b"ASDF".repeat(2000)
    );
}

#[test]
fn wrong_declared_size_is_a_mismatch() {
    for (c, stored) in oracle() {
        // Shorter output than declared.
        let e = decode(c, stored, 81).unwrap_err();
        assert!(
            matches!(e, CodecError::SizeMismatch { expected: 81, .. }),
            "{c}: {e:?}"
        );
        // More output than declared.
        let e = decode(c, stored, 79).unwrap_err();
        assert!(
            matches!(
                e,
                CodecError::ExcessData { expected: 79 }
                    | CodecError::SizeMismatch { expected: 79, .. }
            ),
            "{c}: {e:?}"
        );
    }
    assert_eq!(
        decode(Compression::Lz4, LZ4, 81),
        Err(CodecError::SizeMismatch {
            expected: 81,
            actual: 80
        })
    );
    assert_eq!(
        decode(Compression::Zstd, ZSTD, 79),
        Err(CodecError::SizeMismatch {
            expected: 79,
            actual: 80
        })
    );
}

#[test]
fn huge_claims_do_not_allocate() {
    // A claim of 2^60 bytes from a few stored bytes must fail without allocating it.
    for (c, stored) in oracle() {
        let e = decode(c, stored, 1 << 60).unwrap_err();
        assert!(
            matches!(
                e,
                CodecError::SizeMismatch { .. } | CodecError::TooLargeForPlatform { .. }
            ),
            "{c}: {e:?}"
        );
    }
    for c in Compression::ALL {
        assert!(decode(c, &[1, 2, 3, 4, 5, 6, 7, 8, 9, 10], 1 << 60).is_err());
    }
}

#[test]
fn corrupt_input_is_an_error_never_a_panic() {
    for (c, stored) in oracle() {
        // Truncations.
        for cut in [0, 1, 4, 8, stored.len() / 2, stored.len() - 1] {
            // An error, or (lz4f without its end mark) the complete data.
            if let Ok(out) = decode(c, &stored[..cut], 80) {
                assert_eq!(out, data80(), "{c} cut {cut}");
                assert!(cut >= stored.len() - 4, "{c} cut {cut}");
            }
        }
        // Every single-byte flip either errors or decodes to 80 bytes.
        for i in 0..stored.len() {
            let mut bad = stored.to_vec();
            bad[i] ^= 0x5a;
            if let Ok(out) = decode(c, &bad, 80) {
                assert_eq!(out.len(), 80);
            }
        }
    }
    // Garbage.
    for c in Compression::ALL {
        assert!(
            decode(c, b"this is not compressed data at all", 100).is_err(),
            "{c}"
        );
    }
}

#[test]
fn lz4_chunk_errors() {
    // Chunk length below 4.
    assert!(matches!(
        decode(Compression::Lz4, b"\0\0\0\x02\0\0\0\0", 0),
        Err(CodecError::Corrupt { .. })
    ));
    // Chunk claiming more output than 255x its size.
    assert!(matches!(
        decode(
            Compression::Lz4,
            b"\0\0\0\x05\xff\xff\xff\x00\x00",
            0xff_ffff
        ),
        Err(CodecError::Corrupt { .. })
    ));
    // Empty input is zero chunks: zero bytes.
    assert_eq!(decode(Compression::Lz4, b"", 0), Ok(vec![]));
    assert!(matches!(
        decode(Compression::Lz4, b"", 5),
        Err(CodecError::SizeMismatch {
            expected: 5,
            actual: 0
        })
    ));
}

#[test]
#[cfg(feature = "blosc2")]
fn blosc_header_checks() {
    let mut bad = BLSC_8000.to_vec();
    bad[12] = 0xff; // cbytes beyond the stored bytes
    assert!(matches!(
        decode(Compression::Blsc, &bad, 8000),
        Err(CodecError::Corrupt { .. })
    ));
    let mut bad = BLSC_8000.to_vec();
    bad[0] = 3;
    assert!(matches!(
        decode(Compression::Blsc, &bad, 8000),
        Err(CodecError::Unsupported { .. })
    ));
    assert_eq!(
        decode(Compression::Blsc, BLSC_8000, 8001),
        Err(CodecError::SizeMismatch {
            expected: 8001,
            actual: 8000
        })
    );
    assert!(matches!(
        decode(Compression::Blsc, &BLSC_8000[..10], 8000),
        Err(CodecError::Corrupt { .. })
    ));
}

#[test]
#[cfg(not(feature = "blosc2"))]
fn blosc_without_feature_is_unsupported() {
    assert!(matches!(
        decode(Compression::Blsc, BLSC_8000, 8000),
        Err(CodecError::Unsupported { .. })
    ));
}

impl Compression {
    /// One of the codecs that need the `blosc2` feature.
    fn is_blosc(self) -> bool {
        matches!(
            self,
            Compression::Blsc | Compression::Bls2 | Compression::Bsc2
        )
    }
}

fn sample(n: usize) -> Vec<u8> {
    // Compressible but not trivial: a slow ramp with noise.
    let mut x = 12345u32;
    (0..n)
        .map(|i| {
            x = x.wrapping_mul(1_103_515_245).wrapping_add(12345);
            ((i / 64) as u8).wrapping_add((x >> 28) as u8)
        })
        .collect()
}

#[test]
fn round_trips() {
    for c in Compression::ALL {
        if c.is_blosc() && !cfg!(feature = "blosc2") {
            continue;
        }
        for n in [0usize, 1, 80, 100_000] {
            let data = sample(n);
            let stored = encode(c, &data, None).unwrap();
            assert_eq!(decode(c, &stored, n as u64).unwrap(), data, "{c} {n}");
            let mut out = vec![0u8; n];
            decode_into(c, &stored, &mut out).unwrap();
            assert_eq!(out, data, "{c} {n}");
        }
        let stored = encode(c, &sample(1000), Some(1)).unwrap();
        assert_eq!(decode(c, &stored, 1000).unwrap(), sample(1000));
    }
}

#[test]
fn lz4_encodes_four_mib_chunks() {
    let data = sample((4 << 20) * 2 + 1000);
    let stored = encode(Compression::Lz4, &data, None).unwrap();
    // Walk the chunk framing: three chunks of 4 MiB, 4 MiB and 1000 bytes.
    let mut pos = 0;
    let mut lens = vec![];
    while pos < stored.len() {
        let n = u32::from_be_bytes(stored[pos..pos + 4].try_into().unwrap()) as usize;
        lens.push(u32::from_le_bytes(
            stored[pos + 4..pos + 8].try_into().unwrap(),
        ));
        pos += 4 + n;
    }
    assert_eq!(pos, stored.len());
    assert_eq!(lens, vec![4 << 20, 4 << 20, 1000]);
    assert_eq!(
        decode(Compression::Lz4, &stored, data.len() as u64).unwrap(),
        data
    );
}

#[test]
fn highly_compressed_data_grows_its_buffer() {
    // Ratios beyond the plausible bound take the growing path.
    let data = vec![0u8; 16 << 20];
    for c in [
        Compression::Zlib,
        Compression::Bzp2,
        Compression::Zstd,
        Compression::Lz4f,
    ] {
        let stored = encode(c, &data, None).unwrap();
        assert_eq!(decode(c, &stored, data.len() as u64).unwrap(), data, "{c}");
        assert!(matches!(
            decode(c, &stored, data.len() as u64 + 1),
            Err(CodecError::SizeMismatch { .. })
        ));
    }
}

#[test]
fn growing_reader_from_a_tiny_start() {
    let data = sample(300_000);
    let stored = encode(Compression::Zlib, &data, None).unwrap();
    let out = read_growing(Compression::Zlib, zlib::reader(&stored), 300_000, 10).unwrap();
    assert_eq!(out, data);
    assert_eq!(
        read_growing(Compression::Zlib, zlib::reader(&stored), 300_001, 10),
        Err(CodecError::SizeMismatch {
            expected: 300_001,
            actual: 300_000
        })
    );
    assert_eq!(
        read_growing(Compression::Zlib, zlib::reader(&stored), 299_999, 10),
        Err(CodecError::ExcessData { expected: 299_999 })
    );
}

#[test]
fn zlib_concatenated_streams_and_trailing_bytes() {
    let a = encode(Compression::Zlib, b"hello ", None).unwrap();
    let b = encode(Compression::Zlib, b"world", None).unwrap();
    let both = [a.clone(), b].concat();
    assert_eq!(
        decode(Compression::Zlib, &both, 11).unwrap(),
        b"hello world"
    );
    // Trailing non-zlib bytes are ignored, as python's decompressobj does.
    let trailing = [a, b"\0\0\0".to_vec()].concat();
    assert_eq!(decode(Compression::Zlib, &trailing, 6).unwrap(), b"hello ");
}

#[test]
fn reference_compressed_file_decodes() {
    use crate::layout::{read_layout, read_stored, LayoutLimits};
    let Some(path) = asdf_test_data::require("reference-files/1.6.0/compressed.asdf") else {
        return;
    };
    let file = std::fs::File::open(path).unwrap();
    let (layout, _) = read_layout(&file, &LayoutLimits::default()).unwrap();
    let mut seen = 0;
    for b in &layout.blocks {
        let Some(c) = Compression::from_label(&b.compression).unwrap() else {
            continue;
        };
        let stored = read_stored(&file, b).unwrap();
        let data = decode(c, &stored, b.data_size).unwrap();
        assert_eq!(data.len() as u64, b.data_size);
        seen += 1;
    }
    // zlib and bzp2 blocks, each holding one array
    assert_eq!(seen, 2);
}

/// Writes our encodings for the python oracle to check: run with `--features dev-tools`, then
/// `python` decodes every file in the directory printed.
/// Numbers that compress like typical array data: f64 values on a coarse grid.
#[cfg(feature = "dev-tools")]
fn floats(n_bytes: usize) -> Vec<u8> {
    (0..n_bytes / 8)
        .flat_map(|i| (((i as f64) * 0.001).sin() * 1000.0).round().to_le_bytes())
        .collect()
}

/// Writes our encodings for the python oracle to check: run with `--features dev-tools`, then
/// `python` decodes every file in the directory printed.
#[test]
#[cfg(feature = "dev-tools")]
fn write_for_python_oracle() {
    let dir = std::env::temp_dir().join("asdf-codec-oracle");
    std::fs::create_dir_all(&dir).unwrap();
    for (set, data) in [("noise", sample(9 << 20)), ("floats", floats(9 << 20))] {
        std::fs::write(dir.join(format!("{set}.data")), &data).unwrap();
        for c in Compression::ALL {
            let stored = encode(c, &data, None).unwrap();
            std::fs::write(dir.join(format!("{set}.{}", c.name())), stored).unwrap();
        }
    }
    eprintln!("{}", dir.display());
}

/// Decode throughput of the stored files python wrote (`floats.*` in the folder
/// `asdf-codec-bench` of the system's temporary directory); run with `--release --features dev-tools -- --nocapture`.
#[test]
#[cfg(feature = "dev-tools")]
fn time_decode() {
    let dir = std::env::temp_dir().join("asdf-codec-bench");
    let data = std::fs::read(dir.join("floats.data")).unwrap();
    let only = std::env::var("ASDF_BENCH_CODECS").unwrap_or_default();
    for c in Compression::ALL {
        if !only.is_empty() && !only.split(',').any(|n| n == c.name()) {
            continue;
        }
        let Ok(stored) = std::fs::read(dir.join(format!("floats.{}", c.name()))) else {
            continue;
        };
        let mut best = std::time::Duration::MAX;
        for _ in 0..15 {
            let t = std::time::Instant::now();
            let out = decode(c, &stored, data.len() as u64).unwrap();
            best = best.min(t.elapsed());
            assert!(out == data);
        }
        // On-CPU time of this thread (excludes time waiting for a core on a loaded machine).
        let cpu = || -> u64 {
            let mut t = libc::timespec {
                tv_sec: 0,
                tv_nsec: 0,
            };
            // SAFETY: clock_gettime writes one timespec, which `t` is, and nothing else.
            let r = unsafe { libc::clock_gettime(libc::CLOCK_THREAD_CPUTIME_ID, &mut t) };
            if r != 0 {
                return 0;
            }
            (t.tv_sec as u64) * 1_000_000_000 + t.tv_nsec as u64
        };
        let c0 = cpu();
        for _ in 0..10 {
            std::hint::black_box(decode(c, &stored, data.len() as u64).unwrap());
        }
        eprintln!(
            "{c}: on-cpu {:.1} ms per decode (this thread)",
            (cpu() - c0) as f64 / 1e7
        );
        let mut out = vec![0u8; data.len()];
        let mut best_into = std::time::Duration::MAX;
        for _ in 0..15 {
            let t = std::time::Instant::now();
            decode_into(c, &stored, &mut out).unwrap();
            best_into = best_into.min(t.elapsed());
        }
        eprintln!(
            "{c}: best {:?} (into a warm buffer {:?}) for {} MiB, ratio {:.2}",
            best,
            best_into,
            data.len() >> 20,
            data.len() as f64 / stored.len() as f64
        );
    }
}

mod fuzz {
    use super::*;
    use proptest::prelude::*;

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(200))]

        #[test]
        fn random_input_never_panics(
            bytes in proptest::collection::vec(any::<u8>(), 0..300),
            size in prop_oneof![0u64..2000, Just(1u64 << 40), Just(u64::MAX)],
        ) {
            for c in Compression::ALL {
                if let Ok(out) = decode(c, &bytes, size) {
                    prop_assert_eq!(out.len() as u64, size);
                }
            }
        }

        #[test]
        fn mutated_oracle_input_never_panics(at in any::<prop::sample::Index>(), v in any::<u8>()) {
            for (c, stored) in oracle() {
                let mut bad = stored.to_vec();
                let i = at.index(bad.len());
                bad[i] = v;
                if let Ok(out) = decode(c, &bad, 80) {
                    prop_assert_eq!(out.len(), 80);
                }
            }
        }

        #[test]
        fn round_trip_any_data(data in proptest::collection::vec(any::<u8>(), 0..3000)) {
            for c in Compression::ALL {
                if c.is_blosc() && !cfg!(feature = "blosc2") {
                    continue;
                }
                let stored = encode(c, &data, None).unwrap();
                prop_assert_eq!(decode(c, &stored, data.len() as u64).unwrap(), data.clone());
            }
        }
    }
}

/// Reads every block of the `.asdf` files in `$ASDF_CHECK_DIR` (written by python asdf),
/// decodes them and checks their MD5 (of the stored or the decoded bytes).
#[test]
#[cfg(feature = "dev-tools")]
fn check_python_files() {
    use crate::layout::{read_layout, read_stored, LayoutLimits};
    use md5::{Digest, Md5};
    let Ok(dir) = std::env::var("ASDF_CHECK_DIR") else {
        return;
    };
    for entry in std::fs::read_dir(dir).unwrap() {
        let p = entry.unwrap().path();
        let file = std::fs::File::open(&p).unwrap();
        let (layout, _) = read_layout(&file, &LayoutLimits::default()).unwrap();
        for b in &layout.blocks {
            let stored = read_stored(&file, b).unwrap();
            let data = match Compression::from_label(&b.compression).unwrap() {
                Some(c) => decode(c, &stored, b.data_size).unwrap(),
                None => stored.clone(),
            };
            if b.has_checksum() {
                let ok =
                    Md5::digest(&stored)[..] == b.checksum || Md5::digest(&data)[..] == b.checksum;
                assert!(ok, "{} block {}", p.display(), b.index);
            }
        }
        eprintln!(
            "{}: {} blocks, index {:?}, streamed {}",
            p.display(),
            layout.blocks.len(),
            layout.block_index,
            layout.blocks.last().is_some_and(|b| b.is_streamed())
        );
    }
}

/// Writes one small file per codec with our block header, block index and encoder into
/// `asdf-rs-written` in the system's temporary directory, for python asdf to open with checksum validation.
#[test]
#[cfg(feature = "dev-tools")]
fn write_files_for_python() {
    use crate::layout::{encode_block_header, encode_block_index, BlockHeader};
    use md5::{Digest, Md5};
    let dir = std::env::temp_dir().join("asdf-rs-written");
    std::fs::create_dir_all(&dir).unwrap();
    let data = floats(8 * 5000);
    for c in Compression::ALL {
        let stored = encode(c, &data, None).unwrap();
        let mut f = b"#ASDF 1.0.0\n#ASDF_STANDARD 1.6.0\n%YAML 1.1\n%TAG ! tag:stsci.edu:asdf/\n--- !core/asdf-1.1.0\nx: !core/ndarray-1.1.0 {source: 0, datatype: float64, shape: [5000], byteorder: little}\ny: !core/ndarray-1.1.0 {source: 1, datatype: float64, shape: [5000], byteorder: little}\n...\n".to_vec();
        let mut offsets = vec![];
        for (i, header_size) in [(0usize, 48u16), (1, 64)] {
            let offset = f.len() as u64;
            offsets.push(offset);
            let h = BlockHeader {
                index: i,
                offset,
                header_size,
                flags: 0,
                compression: c.label(),
                allocated_size: stored.len() as u64 + 10,
                used_size: stored.len() as u64,
                data_size: data.len() as u64,
                checksum: Md5::digest(&stored).into(),
            };
            f.extend(encode_block_header(&h));
            f.extend_from_slice(&stored);
            f.extend_from_slice(&[0; 10]);
        }
        f.extend(encode_block_index(&offsets));
        std::fs::write(dir.join(format!("{}.asdf", c.name())), f).unwrap();
    }
    std::fs::write(dir.join("expected.bin"), &data).unwrap();
}
