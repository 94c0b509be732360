//! Fuzz target: chunk manifests of every array of a file (the input is the file). For each
//! array (at most 16) `AsdfFile::manifest` is asked with a slab size taken from the file's
//! length; when it succeeds, its pieces must hold together: byte ranges inside the file for
//! pieces of the file itself, decoded ranges in order without gaps or overlaps covering the
//! block, regions inside the array's shape, and a zarr chunk grid that divides the pieces.
//! When the array is its whole uncompressed block and also reads whole, each piece read by
//! its byte range must equal the same bytes of the whole array. Errors are fine; panics, aborts,
//! hangs, huge allocations and broken invariants are bugs.
#![no_main]

use asdf_core::{AsdfFile, ManifestOptions, PieceCodec, PieceSource};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let len = data.len() as u64;
    let Ok(file) = AsdfFile::options()
        .max_block_bytes(1 << 26)
        .open_bytes(data.to_vec(), ".")
    else {
        return;
    };
    let opts = ManifestOptions::default().slab_bytes(1 + len % 4096);
    for (path, node) in file.arrays().into_iter().take(16) {
        let Ok(m) = file.manifest(&path, &opts) else {
            continue;
        };
        let mut decoded_end: Option<u64> = None;
        for p in &m.pieces {
            if p.source == PieceSource::File {
                let end = p.offset.checked_add(p.length).expect("piece end overflows");
                assert!(
                    end <= len,
                    "{path}: piece {}..{end} past the file's {len} bytes",
                    p.offset
                );
            }
            assert!(
                p.decoded.start <= p.decoded.end,
                "{path}: decoded range reversed"
            );
            if let Some(e) = decoded_end {
                assert!(
                    p.decoded.start >= e,
                    "{path}: decoded ranges overlap or go back"
                );
            }
            decoded_end = Some(p.decoded.end);
            if let Some(region) = &p.region {
                assert_eq!(
                    region.len(),
                    m.shape.len(),
                    "{path}: region of another rank"
                );
                for (r, &n) in region.iter().zip(&m.shape) {
                    assert!(
                        r.start <= r.end && r.end <= n,
                        "{path}: region {r:?} past {n}"
                    );
                }
            }
        }
        if let Some(chunks) = m.zarr_chunks() {
            assert_eq!(
                chunks.len(),
                m.shape.len(),
                "{path}: chunk grid of another rank"
            );
            assert!(
                chunks.iter().all(|&c| c > 0 || m.shape.contains(&0)),
                "{path}: empty chunk"
            );
        }
        // an array that is its whole uncompressed block: each piece read by its byte range
        // is the same bytes of the array read whole
        if !m.is_whole_block() {
            continue;
        }
        let Ok(whole) = file.dyn_array_of(&node, &path) else {
            continue;
        };
        if whole.dtype.to_numpy_str().ends_with("b1") {
            continue; // bool: a whole read may check the stored bytes
        }
        for p in &m.pieces {
            if (p.codec, &p.source) != (PieceCodec::None, &PieceSource::File) {
                continue;
            }
            let stored = usize::try_from(p.offset)
                .ok()
                .and_then(|s| data.get(s..s.checked_add(usize::try_from(p.length).ok()?)?));
            let (ds, de) = (p.decoded.start as usize, p.decoded.end as usize);
            if let (Some(a), Some(b)) = (stored, whole.data.get(ds..de)) {
                assert_eq!(
                    a, b,
                    "{path}: uncompressed piece at {} differs from the array",
                    p.offset
                );
            }
        }
    }
});
