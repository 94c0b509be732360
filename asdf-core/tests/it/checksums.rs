//! Checksum verification (issue 19): verified reads in one pass still catch every corrupt
//! block, under both checksum policies (MD5 of the stored bytes, and the legacy MD5 of the
//! decoded bytes of a compressed block); `verify_checksums` hashes without loading blocks,
//! in memory independent of the block's size (checked in a child process: its peak resident
//! set);
//! large zstd and bzip2 blocks, compressed on every core, read back here and are left for
//! python asdf (`ASDF_WRITE_OUT`, `tests/oracle/check_written.py`).

use crate::common;

use asdf_core::unstable::checksum::Md5;
use asdf_core::write::Compression;
use asdf_core::write::{CompressionChoice, WriteOptions, Writer};
use asdf_core::{AsdfFile, Error, Node};
use ndarray::Array1;

/// Offset of the MD5 inside a block header: magic 4, header size 2, flags 4, compression 4,
/// allocated, used and data sizes 8 each.
const CHECKSUM_AT: usize = 38;

fn values(n: usize) -> Array1<f64> {
    Array1::from_iter((0..n).map(|i| ((i * 7919) % 1000) as f64 * 0.25))
}

fn write(a: &Array1<f64>, c: Option<Compression>) -> Vec<u8> {
    let compression = c.map_or(CompressionChoice::None, CompressionChoice::Codec);
    let mut w = Writer::new(WriteOptions::default().compression(compression));
    let n = w.add_array(a);
    w.write_to_vec(&Node::map(vec![("a", n)])).unwrap()
}

fn open(bytes: &[u8], mmap: bool) -> AsdfFile {
    if mmap {
        let dir = std::env::temp_dir();
        let path = dir.join(format!(
            "asdf-checksums-{}-{}.asdf",
            std::process::id(),
            Md5::hex(&Md5::digest(bytes))
        ));
        std::fs::write(&path, bytes).unwrap();
        let f = AsdfFile::options()
            .verify_checksums(true)
            .mmap(true)
            .open(&path)
            .unwrap();
        std::fs::remove_file(&path).unwrap();
        f
    } else {
        AsdfFile::options()
            .verify_checksums(true)
            .open_bytes(bytes.to_vec(), ".")
            .unwrap()
    }
}

fn is_checksum_error(e: &Error) -> bool {
    matches!(e, Error::Checksum { .. })
}

/// Every way of reading the array, with verification: all succeed on `good`, all fail on
/// `bad` (with a checksum error when `checksum_error`, else with any error).
fn check_reads(good: &[u8], bad: &[u8], want: &Array1<f64>, checksum_error: bool) {
    for mmap in [false, true] {
        let f = open(good, mmap);
        f.verify_checksums().unwrap();
        assert_eq!(
            f.array::<f64>("/a").unwrap().into_dimensionality().unwrap(),
            want
        );
        let f = open(good, mmap);
        assert!(f.block_data(0).is_ok());
        assert_eq!(f.array_view::<f64>("/a").unwrap().len(), want.len());

        let f = open(bad, mmap);
        let e = f.verify_checksums().unwrap_err();
        assert!(!checksum_error || is_checksum_error(&e), "{e}");
        let e = f.array::<f64>("/a").unwrap_err();
        assert!(!checksum_error || is_checksum_error(&e), "{e}");
        let f = open(bad, mmap);
        let e = f.block_data(0).unwrap_err();
        assert!(!checksum_error || is_checksum_error(&e), "{e}");
        // Without verification the corrupt uncompressed block reads (that is the point of
        // the option).
        if checksum_error && mmap {
            let plain = AsdfFile::from_bytes(bad.to_vec()).unwrap();
            assert!(plain.array::<f64>("/a").is_ok());
        }
    }
}

fn block_start(bytes: &[u8]) -> (usize, usize) {
    let f = AsdfFile::from_bytes(bytes.to_vec()).unwrap();
    let h = &f.blocks()[0];
    (h.offset as usize, h.data_offset() as usize)
}

#[test]
fn uncompressed_blocks_small_and_pipelined() {
    // 800 bytes (read and hashed on one thread) and 6 MiB (read by one thread while the
    // other hashes, in pieces).
    for n in [100, 6 << 17] {
        let a = values(n);
        let good = write(&a, None);
        let (_, data) = block_start(&good);
        for at in [data, data + n * 8 / 2, data + n * 8 - 1] {
            let mut bad = good.clone();
            bad[at] ^= 1;
            check_reads(&good, &bad, &a, true);
        }
    }
}

#[test]
fn compressed_blocks_under_both_checksum_policies() {
    let a = values(300_000);
    for c in [Compression::Zlib, Compression::Zstd, Compression::Lz4] {
        let good = write(&a, Some(c));
        let (start, data) = block_start(&good);
        // Stored-bytes MD5 (asdf >= 5.3, and ours): a wrong checksum is caught.
        let mut bad = good.clone();
        bad[start + CHECKSUM_AT] ^= 0xff;
        check_reads(&good, &bad, &a, true);
        // A flipped stored byte: caught (as corrupt data or a checksum mismatch).
        let mut bad = good.clone();
        bad[data + 100] ^= 0x40;
        check_reads(&good, &bad, &a, false);

        // Legacy policy: the checksum is the MD5 of the decoded bytes.
        let mut legacy = good.clone();
        let raw: Vec<u8> = a.iter().flat_map(|v| v.to_ne_bytes()).collect();
        legacy[start + CHECKSUM_AT..start + CHECKSUM_AT + 16].copy_from_slice(&Md5::digest(&raw));
        let mut bad_legacy = legacy.clone();
        bad_legacy[start + CHECKSUM_AT + 3] ^= 0x01;
        check_reads(&legacy, &bad_legacy, &a, true);
    }
}

#[test]
fn an_array_inside_a_larger_block_hashes_the_whole_block() {
    // Two arrays over one block: a view with an offset; the whole block's MD5 is checked.
    let a = values(600_000);
    let good = write(&a, None);
    let f = AsdfFile::from_bytes(good.clone()).unwrap();
    let text = String::from_utf8_lossy(&good[..f.blocks()[0].offset as usize]).to_string();
    // Make the array the second half of the block by editing its shape and offset in the
    // tree text (same length, so nothing moves).
    let old = "shape: [600000]";
    assert!(text.contains(old), "{text}");
    let half = "shape: [300000]";
    let mut edited = good.clone();
    let at = text.find(old).unwrap();
    edited[at..at + old.len()].copy_from_slice(half.as_bytes());
    let f = AsdfFile::options()
        .verify_checksums(true)
        .open_bytes(edited.clone(), ".")
        .unwrap();
    assert_eq!(f.array::<f64>("/a").unwrap().len(), 300_000);
    // A flipped byte outside the array's part of the block is still caught.
    let (_, data) = block_start(&good);
    let mut bad = edited.clone();
    bad[data + 300_000 * 8 + 5] ^= 1;
    let f = AsdfFile::options()
        .verify_checksums(true)
        .open_bytes(bad, ".")
        .unwrap();
    assert!(is_checksum_error(&f.array::<f64>("/a").unwrap_err()));
}

#[test]
fn large_multithreaded_blocks_read_back_and_are_left_for_python() {
    // zstd from 8 MiB and bzip2 from 2 MiB are compressed on every core (bzip2 as one
    // stream, which python's single-stream reader needs).
    for (c, name, n) in [
        (Compression::Zstd, "issue19_zstd_multithreaded", 9 << 17), // 9 MiB
        (
            Compression::Bzp2,
            "issue19_bzp2_parallel_one_stream",
            3 << 17,
        ), // 3 MiB
    ] {
        let a = Array1::from_iter((0..n).map(|i: usize| ((i * 7919) % 100_003) as f64 * 0.25));
        let bytes = write(&a, Some(c));
        let f = open(&bytes, false);
        f.verify_checksums().unwrap();
        assert_eq!(
            f.array::<f64>("/a").unwrap().into_dimensionality().unwrap(),
            a
        );
        common::dump_for_oracle(name, &bytes);
    }
}

const CHILD: &str = "ASDF_CHECKSUMS_MEMORY_CHILD";

/// The kernel's file of this process's own figures: the one place that gives the peak
/// resident set of the current program image (`VmHWM`). getrusage's `ru_maxrss` would not
/// do: Linux carries the resident set of the forking test process (other tests' arrays
/// included) over into the child across exec. An interface of the kernel, not a path of
/// this machine.
const PROC_SELF_STATUS: &str = "/proc/self/status";

/// Peak resident set of this process's image, in bytes (`VmHWM` of [`PROC_SELF_STATUS`]).
fn peak_rss() -> u64 {
    let status = std::fs::read_to_string(PROC_SELF_STATUS).unwrap();
    let kb: u64 = status
        .lines()
        .find_map(|l| l.strip_prefix("VmHWM:"))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
        .expect("VmHWM in /proc/self/status");
    kb * 1024
}

/// The child half of `verifying_a_large_block_keeps_memory_small`.
#[test]
fn verify_child() {
    let Some(path) = std::env::var_os(CHILD) else {
        return;
    };
    let f = AsdfFile::open(&path).unwrap();
    f.verify_checksums().unwrap();
    println!("peak_rss={}", peak_rss());
}

#[test]
fn verifying_a_large_block_keeps_memory_small() {
    if !cfg!(target_os = "linux") {
        return;
    }
    // 96 MiB in one block: verified in memory far below that.
    let a = values(12 << 20);
    let bytes = write(&a, None);
    let dir = std::env::temp_dir();
    let path = dir.join(format!("asdf-checksums-memory-{}.asdf", std::process::id()));
    std::fs::write(&path, &bytes).unwrap();
    drop(bytes);
    let out = std::process::Command::new(std::env::current_exe().unwrap())
        .args([
            "--exact",
            "checksums::verify_child",
            "--nocapture",
            "--test-threads=1",
        ])
        .env(CHILD, &path)
        .output()
        .unwrap();
    std::fs::remove_file(&path).unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{text}{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let peak: u64 = text
        .split("peak_rss=")
        .nth(1)
        .and_then(|rest| rest.split_whitespace().next())
        .and_then(|n| n.parse().ok())
        .unwrap_or_else(|| panic!("no peak in {text}"));
    assert!(
        peak < 32 << 20,
        "peak resident set {peak} bytes for a 96 MiB block"
    );
}
