//! Chunks of variable-length blocks (C-Blosc2 3.x `vlblocks`) and `.b2nd` arrays whose codec
//! or filter is a plugin, against what python-blosc2 4.14.1 gives for the same files
//! (tests/data/generate_vlblocks.py wrote the fixtures and their expected bytes; the
//! `c-blosc2/` frames are C-Blosc2's own).

use std::path::PathBuf;

use asdf_blosc2::chunk::{self, ChunkHeader};
use asdf_blosc2::{Error, Frame};

fn data_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/data")
}

fn expected() -> serde_json::Value {
    let text = std::fs::read_to_string(data_dir().join("vlblocks/expected.json")).unwrap();
    serde_json::from_str(&text).unwrap()
}

/// The bytes of a frame (a sparse frame's index) and the folder of a sparse frame.
fn frame_bytes(case: &serde_json::Value) -> (Vec<u8>, Option<PathBuf>) {
    let p = data_dir().join(case["file"].as_str().unwrap());
    if case["sparse"].as_bool() == Some(true) {
        (std::fs::read(p.join("chunks.b2frame")).unwrap(), Some(p))
    } else {
        (std::fs::read(p).unwrap(), None)
    }
}

fn parse<'a>(bytes: &'a [u8], dir: &Option<PathBuf>) -> Result<Frame<'a>, Error> {
    match dir {
        Some(d) => Frame::parse_sparse(bytes, d.clone(), u64::MAX),
        None => Frame::parse(bytes),
    }
}

#[test]
fn every_vl_block_frame_decodes_to_python_blosc2s_bytes() {
    every_frame_decodes();
}

/// One thread in rayon's pool: chunks and blocks decoded on the calling thread.
#[test]
fn every_vl_block_frame_decodes_the_same_on_one_thread() {
    rayon::ThreadPoolBuilder::new()
        .num_threads(1)
        .build()
        .unwrap()
        .install(every_frame_decodes);
}

/// The chunks of variable-length blocks in expected.json: 14 frames of every codec and
/// filter pipeline with 3 each, 2 + 2 + 3 + 2 in the four others of ours, 3 in the
/// `BatchArray` and 5 + 5 in C-Blosc2's two.
const VL_CHUNKS: usize = 14 * 3 + 2 + 2 + 3 + 2 + 3 + 5 + 5;

fn every_frame_decodes() {
    let e = expected();
    assert_eq!(e["python-blosc2"], "4.14.1");
    let frames = e["frames"].as_object().unwrap();
    assert_eq!(frames.len(), 22, "frames in expected.json");
    let mut vl_chunks = 0;
    for (name, case) in frames {
        let (bytes, dir) = frame_bytes(case);
        let want = std::fs::read(data_dir().join(format!("vlblocks/{name}.bin"))).unwrap();
        assert_eq!(
            want.len() as u64,
            case["nbytes"].as_u64().unwrap(),
            "{name}"
        );
        let frame = parse(&bytes, &dir).unwrap_or_else(|e| panic!("{name}: {e}"));
        let chunks = case["chunks"].as_array().unwrap();
        assert_eq!(frame.nchunks, chunks.len(), "{name}");
        assert_eq!(frame.chunksize as u64, case["chunksize"].as_u64().unwrap());
        assert_eq!(frame.typesize as u64, case["typesize"].as_u64().unwrap());
        assert_eq!(frame.nbytes, want.len() as u64, "{name}");
        let mut at = 0;
        for (i, c) in chunks.iter().enumerate() {
            let n = c["nbytes"].as_u64().unwrap() as usize;
            let whole = frame
                .chunk(i)
                .unwrap_or_else(|e| panic!("{name} chunk {i}: {e}"));
            assert!(whole == want[at..at + n], "{name} chunk {i}: bytes differ");
            let lens: Vec<usize> = c["block_lengths"]
                .as_array()
                .unwrap()
                .iter()
                .map(|l| l.as_u64().unwrap() as usize)
                .collect();
            if c["vl_blocks"].as_bool().unwrap() {
                vl_chunks += 1;
                let blocks = frame
                    .vl_blocks(i)
                    .unwrap_or_else(|e| panic!("{name} chunk {i}: {e}"));
                assert_eq!(
                    blocks.iter().map(Vec::len).collect::<Vec<_>>(),
                    lens,
                    "{name} chunk {i}: block lengths"
                );
                assert!(blocks.concat() == whole, "{name} chunk {i}");
            } else {
                // a chunk of regular blocks has no variable-length blocks to give
                let err = frame.vl_blocks(i).unwrap_err();
                assert!(
                    err.to_string().contains("not of variable length"),
                    "{name}: {err}"
                );
            }
            at += n;
        }
        assert!(
            frame.decode_all().unwrap() == want,
            "{name}: decode_all differs"
        );
    }
    assert_eq!(
        vl_chunks, VL_CHUNKS,
        "chunks of variable-length blocks read"
    );
}

/// The blocks of C-Blosc2's compatibility frames, from first principles: `filegen-vl.c`
/// (C-Blosc2 b17d0c3) compresses each block as its 50-byte C string (49 characters and the
/// terminating NUL) repeated 10 times.
#[test]
fn c_blosc2s_own_vl_block_frames_hold_their_generators_blocks() {
    let block = |s: &str| {
        let mut unit = s.as_bytes().to_vec();
        unit.push(0);
        assert_eq!(unit.len(), 50);
        unit.repeat(10)
    };
    let fixed =
        std::fs::read(data_dir().join("c-blosc2/vlblocks-lz4-fixed-3.0.0.b2frame")).unwrap();
    let frame = Frame::parse(&fixed).unwrap();
    assert_eq!((frame.nchunks, frame.chunksize), (5, 2000));
    assert_eq!(
        frame.vl_blocks(1).unwrap(),
        [
            block("mercury-venus-earth-mars-jupiter-saturn-uranus-ne"),
            block("sun-moon-milky-way-galaxy-star-pulsar-quasar-nova"),
            block("andromeda-galaxy-pegasus-cygnus-orion-lyra-aquila"),
            block("black-hole-neutron-star-white-dwarf-red-giant-sun"),
        ]
    );
    let variable =
        std::fs::read(data_dir().join("c-blosc2/vlblocks-lz4-variable-3.0.0.b2frame")).unwrap();
    let frame = Frame::parse(&variable).unwrap();
    assert_eq!((frame.nchunks, frame.chunksize), (5, 0));
    let last = frame.vl_blocks(4).unwrap();
    assert_eq!(last.len(), 6);
    assert_eq!(
        last[5],
        block("sha256-md5-sha1-sha512-hmac-aes256-rsa4096-ecdsa-")
    );
    // python-blosc2 4.14.1 dies of a floating-point exception reading this frame by slice
    // (`SChunk[:]`); here it reads whole
    assert_eq!(frame.decode_all().unwrap().len(), 10_000);
}

/// The first chunk of a frame: its bytes and where it starts.
fn first_chunk(bytes: &[u8]) -> (usize, usize) {
    let header_len = i32::from_be_bytes(bytes[11..15].try_into().unwrap()) as usize;
    let h = ChunkHeader::parse(&bytes[header_len..]).unwrap();
    (header_len, h.cbytes)
}

/// Every byte of a chunk of variable-length blocks set to a few values in turn, and every
/// bit flipped: each read is a result, never a panic, and a header whose lengths were
/// changed is an error, not a wrong decode.
#[test]
fn corrupted_vl_chunks_are_errors_not_panics() {
    let mut checked = 0;
    let mut errors = 0;
    for name in [
        "vlblocks/zstd_shuffle.b2frame",
        "vlblocks/lz4_shuffle8_ragged.b2frame",
        "vlblocks/zstd_delta.b2frame",
        "vlblocks/zstd_text_random.b2frame",
        "c-blosc2/vlblocks-lz4-variable-3.0.0.b2frame",
    ] {
        let orig = std::fs::read(data_dir().join(name)).unwrap();
        let (at, len) = first_chunk(&orig);
        let good = chunk::decode(&orig[at..], usize::MAX).unwrap();
        let mut variants: Vec<(usize, u8)> = Vec::new();
        for k in 0..len {
            for v in [0x00, 0xff, 0x7f, 0x80, 0x01] {
                variants.push((k, v));
            }
            for bit in 0..8 {
                variants.push((k, orig[at + k] ^ (1 << bit)));
            }
        }
        for (k, v) in variants {
            if orig[at + k] == v {
                continue;
            }
            let mut bytes = orig.clone();
            bytes[at + k] = v;
            checked += 1;
            // the chunk alone, block by block and whole, and the frame around it
            let src = &bytes[at..];
            let whole = chunk::decode(src, 1 << 24);
            let blocks = chunk::decode_vl_blocks(src, 1 << 24);
            if let (Ok(w), Ok(b)) = (&whole, &blocks) {
                assert!(*w == b.concat(), "{name}: byte {k} = {v:#x}");
            }
            if whole.is_err() {
                errors += 1;
            }
            // a changed decoded size no longer matches the blocks' lengths
            if (4..8).contains(&k) {
                assert!(whole.is_err(), "{name}: nbytes byte {k} = {v:#x} decoded");
            }
            // the blocks' lengths are checked: a decode is whole or an error
            if let Ok(w) = &whole {
                assert!(w.len() == good.len() || k < 16, "{name}: byte {k} = {v:#x}");
            }
            if let Ok(f) = Frame::parse(&bytes) {
                for i in 0..f.nchunks {
                    let _ = f.chunk(i);
                    let _ = f.vl_blocks(i);
                }
                let _ = f.decode_all();
            }
        }
    }
    assert!(checked > 10_000, "{checked} variants");
    // (a changed byte in a stream stored as it is reads as that byte: no error to give)
    assert!(
        errors > checked / 10,
        "{errors} errors in {checked} variants"
    );
}

#[test]
fn bad_vl_block_layouts_are_named_errors() {
    let orig = std::fs::read(data_dir().join("vlblocks/zstd_shuffle.b2frame")).unwrap();
    let (at, cbytes) = first_chunk(&orig);
    let chunk0 = orig[at..at + cbytes].to_vec();
    let h = ChunkHeader::parse(&chunk0).unwrap();
    assert!(h.vl_blocks());
    assert_eq!(h.blocksize, 3, "the block count");
    let with = |f: &dyn Fn(&mut Vec<u8>)| {
        let mut c = chunk0.clone();
        f(&mut c);
        chunk::decode(&c, 1 << 20).unwrap_err()
    };
    let put = |c: &mut Vec<u8>, at: usize, v: i32| c[at..at + 4].copy_from_slice(&v.to_le_bytes());
    let start = |j: usize| i32::from_le_bytes(chunk0[32 + 4 * j..36 + 4 * j].try_into().unwrap());
    // block starts out of order, before the starts' end, past the chunk
    let e = with(&|c| put(c, 36, start(2)));
    assert!(
        matches!(
            e,
            Error::Malformed {
                what: "block start",
                ..
            }
        ),
        "{e}"
    );
    let e = with(&|c| put(c, 32, 40));
    assert!(
        matches!(
            e,
            Error::Malformed {
                what: "block start",
                offset: 32,
                ..
            }
        ),
        "{e}"
    );
    let e = with(&|c| put(c, 40, cbytes as i32 + 10));
    assert!(
        matches!(
            e,
            Error::Malformed {
                what: "block start",
                ..
            }
        ),
        "{e}"
    );
    // a block's decoded length zero, negative, or more than the chunk holds
    let b1 = start(1) as usize;
    for v in [0, -5, 1 << 20] {
        let e = with(&|c| put(c, b1, v));
        assert!(
            matches!(
                e,
                Error::Malformed {
                    what: "block length",
                    ..
                }
            ),
            "{v}: {e}"
        );
    }
    // lengths that add up to less than the header's nbytes
    let e = with(&|c| put(c, 4, h.nbytes as i32 + 8));
    assert!(matches!(e, Error::Malformed { what: "nbytes", .. }), "{e}");
    // a block count the chunk cannot hold
    let e = with(&|c| put(c, 8, i32::MAX));
    assert!(
        matches!(
            e,
            Error::Malformed {
                what: "block count",
                ..
            }
        ),
        "{e}"
    );
    // C-Blosc2 forbids variable-length blocks in a special or stored chunk
    let e = with(&|c| c[31] |= 0x10);
    assert!(
        matches!(
            e,
            Error::Malformed {
                what: "special value kind",
                ..
            }
        ),
        "{e}"
    );
    let e = with(&|c| c[2] |= 0x02);
    assert!(matches!(e, Error::Malformed { what: "flags", .. }), "{e}");
    // a chunk of regular blocks asked for its variable-length blocks
    let regular = std::fs::read(data_dir().join("c-blosc2/varchunks-lz4-3.0.0.b2frame")).unwrap();
    let (rat, _) = first_chunk(&regular);
    let e = chunk::decode_vl_blocks(&regular[rat..], 1 << 20).unwrap_err();
    assert!(e.to_string().contains("not of variable length"), "{e}");
    // and a limit under the declared size
    let e = chunk::decode_vl_blocks(&chunk0, 10).unwrap_err();
    assert!(matches!(e, Error::TooLarge { .. }), "{e}");
}

/// `.b2nd` arrays whose codec or filter is a plugin: the error names the plugin and its id.
#[test]
fn plugin_codecs_and_filters_are_named() {
    let dir = data_dir().join("plugins");
    let listing: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(dir.join("plugins.json")).unwrap()).unwrap();
    let listing = listing.as_object().unwrap();
    assert_eq!(listing.len(), 7);
    for (name, p) in listing {
        let bytes = std::fs::read(dir.join(p["file"].as_str().unwrap())).unwrap();
        let frame = Frame::parse(&bytes).unwrap_or_else(|e| panic!("{name}: {e}"));
        let nd = frame.b2nd().unwrap().unwrap();
        assert_eq!(nd.dtype, p["dtype"].as_str().unwrap(), "{name}");
        let err = frame.b2nd_array(&nd).unwrap_err();
        let (kind, plugin, id) = (
            p["kind"].as_str().unwrap(),
            p["plugin"].as_str().unwrap(),
            p["id"].as_u64().unwrap() as u8,
        );
        assert_eq!(
            err.to_string(),
            format!("Blosc2 {kind} {plugin} (plugin id {id}) is not supported"),
            "{name}"
        );
        match (kind, &err) {
            ("codec", Error::UnsupportedCodec { id: got, name }) => {
                assert_eq!((*got, *name), (id, plugin), "{name}")
            }
            ("filter", Error::UnsupportedFilter { id: got, name }) => {
                assert_eq!((*got, *name), (id, plugin), "{name}")
            }
            _ => panic!("{name}: {err:?}"),
        }
    }
}
