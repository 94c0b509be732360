//! Progress reports (`asdf_core::Progress`) of writing blocks and of verifying checksums:
//! they never move back, end exactly at the total (the blocks' data bytes when writing, the
//! checksummed stored bytes when verifying), and advance inside a large block, whatever
//! path the block takes (uncompressed, lz4 and zstd pipelines, compressed whole, kept
//! stored bytes copied from the source file).

use crate::common;

use std::sync::{Arc, Mutex};

use asdf_core::write::Compression;
use asdf_core::write::{ArrayOptions, CompressionChoice, WriteOptions, Writer};
use asdf_core::{AsdfFile, Progress};
use ndarray::Array1;

/// Every `(done, total)` reported, in order.
type Reports = Arc<Mutex<Vec<(u64, u64)>>>;

/// A progress callback that records every report.
fn recorder() -> (Progress, Reports) {
    let seen = Arc::new(Mutex::new(Vec::new()));
    let s = seen.clone();
    let p = Progress::new(move |done, total| s.lock().unwrap().push((done, total)));
    (p, seen)
}

/// Checks the reports: one total, `done` never moving back, ending at `total`; returns the
/// number of reports.
fn check(seen: &[(u64, u64)], total: u64) -> usize {
    assert!(!seen.is_empty(), "no report");
    for w in seen.windows(2) {
        assert!(w[1].0 >= w[0].0, "moved back: {w:?}");
    }
    assert!(seen.iter().all(|&(d, t)| t == total && d <= t), "{seen:?}");
    assert_eq!(seen.last().unwrap().0, total);
    seen.len()
}

fn uncompressed() -> ArrayOptions {
    ArrayOptions {
        compression: Some(CompressionChoice::None),
        ..ArrayOptions::default()
    }
}

fn values(bytes: usize) -> Array1<f64> {
    Array1::from_iter((0..bytes / 8).map(|i| ((i * 7919) % 100_003) as f64 * 0.25))
}

/// Reports between `lo` and `hi` (exclusive) of `total`: some fall inside the block.
fn inside(seen: &[(u64, u64)], lo: u64, hi: u64) -> usize {
    seen.iter().filter(|&&(d, _)| d > lo && d < hi).count()
}

#[test]
fn writing_reports_the_data_bytes_of_every_block_and_moves_inside_large_ones() {
    let small = values(4096);
    let big = values(40 << 20); // 40 MiB: written in pieces
    for (codec, name) in [
        (None, "uncompressed"),
        (Some(Compression::Lz4), "lz4 pipeline"),
        (Some(Compression::Zstd), "zstd pipeline"),
        (Some(Compression::Zlib), "zlib, compressed whole"),
    ] {
        let (p, seen) = recorder();
        let opts = WriteOptions::default()
            .compression(codec.map_or(CompressionChoice::None, CompressionChoice::Codec))
            .progress(p);
        let mut w = Writer::new(opts);
        let root = asdf_core::tree!({
            "small": w.add_array(&small),
            "big": w.add_array(&big),
            "raw": w.add_array_with(&small, uncompressed()),
        });
        let bytes = w.write_to_vec(&root).unwrap();
        let seen = seen.lock().unwrap().clone();
        let total = (2 * 4096 + (40 << 20)) as u64;
        check(&seen, total);
        if codec != Some(Compression::Zlib) {
            // between the end of the first block and the end of the big one
            assert!(
                inside(&seen, 4096, 4096 + (40 << 20)) >= 2,
                "{name}: no report inside the big block: {seen:?}"
            );
        }
        let f = AsdfFile::from_bytes(bytes).unwrap();
        f.verify_checksums().unwrap();
        assert_eq!(
            f.array::<f64>("/big").unwrap(),
            big.clone().into_dyn(),
            "{name}"
        );
    }
}

#[test]
fn rewriting_a_file_reports_its_kept_blocks_as_they_are_copied() {
    let dir = common::Scratch::new("progress-copy");
    let big = values(40 << 20);
    let src = dir.join("src.asdf");
    let mut w = Writer::new(WriteOptions::default());
    let root = asdf_core::tree!({"big": w.add_array(&big)});
    w.write_to_path(&root, &src).unwrap();
    let file = AsdfFile::open(&src).unwrap();
    let (p, seen) = recorder();
    let out = dir.join("out.asdf");
    let opts = WriteOptions::default()
        .compression(CompressionChoice::Input)
        .progress(p);
    Writer::from_file(&file, opts)
        .write_to_path(file.tree(), &out)
        .unwrap();
    let seen = seen.lock().unwrap().clone();
    check(&seen, 40 << 20);
    assert!(inside(&seen, 0, 40 << 20) >= 2, "{seen:?}");
    let back = AsdfFile::open(&out).unwrap();
    back.verify_checksums().unwrap();
    assert_eq!(back.array::<f64>("/big").unwrap(), big.into_dyn());
}

#[test]
fn verifying_reports_the_stored_bytes_of_the_checksummed_blocks() {
    let dir = common::Scratch::new("progress-verify");
    let big = values(40 << 20);
    let small = values(4096);
    let mut w = Writer::new(
        WriteOptions::default().compression(CompressionChoice::Codec(Compression::Zstd)),
    );
    let root = asdf_core::tree!({
        "big": w.add_array_with(&big, uncompressed()),
        "small": w.add_array(&small),
    });
    let path = dir.join("v.asdf");
    w.write_to_path(&root, &path).unwrap();
    let bytes = std::fs::read(&path).unwrap();
    // through the memory map, and through reads by position
    for file in [
        AsdfFile::open(&path).unwrap(),
        AsdfFile::from_bytes(bytes).unwrap(),
    ] {
        let total: u64 = file.blocks().iter().map(|h| h.used_size).sum();
        assert!(total > 40 << 20);
        let (p, seen) = recorder();
        file.verify_checksums_with_progress(&p).unwrap();
        let seen = seen.lock().unwrap().clone();
        check(&seen, total);
        assert!(seen.len() >= 3, "{seen:?}");
    }
    // a damaged block is still reported as such
    let mut bad = std::fs::read(&path).unwrap();
    let file = AsdfFile::open(&path).unwrap();
    let h = &file.blocks()[0];
    let at = (h.offset + 6 + u64::from(h.header_size)) as usize + 1000;
    bad[at] ^= 0x40;
    let (p, _) = recorder();
    let e = AsdfFile::from_bytes(bad)
        .unwrap()
        .verify_checksums_with_progress(&p)
        .unwrap_err();
    assert!(
        matches!(e, asdf_core::Error::Checksum { block: 0, .. }),
        "{e}"
    );
}
