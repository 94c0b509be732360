//! Write timings: a developer tool, not part of the test suite (no timing assertions). Run
//! with `cargo test -p asdf-core --release --features dev-tools --test write_perf -- --nocapture`;
//! `ASDF_PERF_DIR` chooses the directory (default: the temp dir), `ASDF_PERF_GIB` the size of
//! the big array in GiB (default 1). `tests/oracle/write_perf.py` runs the same workloads in
//! python asdf.

#![cfg(feature = "dev-tools")]

use std::path::PathBuf;
use std::time::Instant;

use asdf_core::codec::Compression;
use asdf_core::write::{CompressionChoice, WriteOptions, Writer};
use asdf_core::{Node, Value};
use md5::{Digest, Md5};
use ndarray::Array1;

fn dir() -> PathBuf {
    std::env::var_os("ASDF_PERF_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(std::env::temp_dir)
}

fn big_array() -> Array1<f64> {
    let gib: f64 = std::env::var("ASDF_PERF_GIB")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(1.0);
    let n = (gib * (1u64 << 30) as f64 / 8.0) as usize;
    Array1::from_iter((0..n).map(|i| i as f64 * 0.5))
}

#[test]
#[cfg(feature = "dev-tools")]
fn perf_big_float64_with_checksums() {
    let a = big_array();
    let bytes = a.len() * 8;
    let copy: Vec<u8> = a.iter().flat_map(|v| v.to_le_bytes()).collect();
    let t = Instant::now();
    let _ = Md5::digest(&copy);
    let md5_alone = t.elapsed();
    drop(copy);
    let path = dir().join("asdf-rs-perf-big.asdf");
    for (name, c) in [
        ("none", CompressionChoice::None),
        ("zlib", CompressionChoice::Codec(Compression::Zlib)),
        ("lz4", CompressionChoice::Codec(Compression::Lz4)),
    ] {
        if name != "none" && std::env::var("ASDF_PERF_CODECS").is_err() {
            continue;
        }
        let mut w = Writer::new(WriteOptions::default().compression(c));
        let n = w.add_array(&a);
        let root = Node::new(Value::Map(vec![(Node::str("data"), n)]));
        let t = Instant::now();
        let f = std::fs::File::create(&path).unwrap();
        w.write_to(&root, std::io::BufWriter::new(&f)).unwrap();
        let unsynced = t.elapsed();
        f.sync_all().unwrap();
        let synced = t.elapsed();
        eprintln!(
            "big {name}: write without fsync {:.3} s, + fsync {:.3} s",
            unsynced.as_secs_f64(),
            synced.as_secs_f64()
        );
        let t = Instant::now();
        w.write_to_path(&root, &path).unwrap();
        let el = t.elapsed();
        eprintln!(
            "big {name}: {} MiB written+fsynced in {:.3} s ({:.0} MiB/s)",
            bytes >> 20,
            el.as_secs_f64(),
            (bytes >> 20) as f64 / el.as_secs_f64()
        );
    }
    eprintln!("md5 alone: {:.3} s", md5_alone.as_secs_f64());
    let _ = std::fs::remove_file(&path);
}

#[test]
#[cfg(feature = "dev-tools")]
fn perf_many_small_arrays() {
    let arrays: Vec<Array1<f64>> = (0..10_000)
        .map(|i| Array1::from_iter((0..10).map(|j| (i * 10 + j) as f64)))
        .collect();
    let path = dir().join("asdf-rs-perf-small.asdf");
    let t = Instant::now();
    let mut w = Writer::new(WriteOptions::default());
    let entries: Vec<(Node, Node)> = arrays
        .iter()
        .enumerate()
        .map(|(i, a)| (Node::str(format!("a{i}")), w.add_array(a)))
        .collect();
    let root = Node::new(Value::Map(entries));
    w.write_to_path(&root, &path).unwrap();
    eprintln!("10000 small arrays: {:.3} s", t.elapsed().as_secs_f64());
    let t = Instant::now();
    let v = w.write_to_vec(&root).unwrap();
    eprintln!(
        "  the same into memory (no file, no fsync): {:.3} s, {} bytes",
        t.elapsed().as_secs_f64(),
        v.len()
    );
    let _ = std::fs::remove_file(&path);
}

#[test]
#[cfg(feature = "dev-tools")]
fn perf_scalar_tree() {
    let path = dir().join("asdf-rs-perf-tree.asdf");
    let t = Instant::now();
    let entries: Vec<(Node, Node)> = (0..200_000)
        .map(|i| {
            (
                Node::str(format!("k{i}")),
                Node::new(Value::Float(i as f64 * 0.25)),
            )
        })
        .collect();
    let root = Node::new(Value::Map(entries));
    let w = Writer::new(WriteOptions::default());
    w.write_to_path(&root, &path).unwrap();
    eprintln!("200000 scalar leaves: {:.3} s", t.elapsed().as_secs_f64());
    let t = Instant::now();
    let v = w.write_to_vec(&root).unwrap();
    eprintln!(
        "  the same into memory: {:.3} s, {} bytes",
        t.elapsed().as_secs_f64(),
        v.len()
    );
    let _ = std::fs::remove_file(&path);
}

#[test]
#[cfg(feature = "dev-tools")]
fn perf_big_breakdown() {
    let a = big_array();
    let mut w = Writer::new(WriteOptions::default());
    let n = w.add_array(&a);
    let root = Node::new(Value::Map(vec![(Node::str("data"), n)]));
    struct Sink(u64);
    impl std::io::Write for Sink {
        fn write(&mut self, b: &[u8]) -> std::io::Result<usize> {
            self.0 += b.len() as u64;
            Ok(b.len())
        }
        fn flush(&mut self) -> std::io::Result<()> {
            Ok(())
        }
    }
    impl std::io::Seek for Sink {
        fn seek(&mut self, p: std::io::SeekFrom) -> std::io::Result<u64> {
            if let std::io::SeekFrom::Start(x) = p {
                self.0 = x;
            }
            Ok(self.0)
        }
    }
    let t = Instant::now();
    w.write_to(&root, Sink(0)).unwrap();
    eprintln!(
        "big into a sink (hash only): {:.3} s",
        t.elapsed().as_secs_f64()
    );
    let w2 = {
        let mut w2 = Writer::new(WriteOptions::default().checksums(false));
        let n2 = w2.add_array(&a);
        (w2, n2)
    };
    let root2 = Node::new(Value::Map(vec![(Node::str("data"), w2.1)]));
    let path = dir().join("asdf-rs-perf-nosum.asdf");
    let t = Instant::now();
    w2.0.write_to_path(&root2, &path).unwrap();
    eprintln!(
        "big without checksum, to path: {:.3} s",
        t.elapsed().as_secs_f64()
    );
    let _ = std::fs::remove_file(&path);
}

#[test]
#[cfg(feature = "dev-tools")]
fn perf_raw_io_floor() {
    let a = big_array();
    let bytes: Vec<u8> = a.iter().flat_map(|v| v.to_le_bytes()).collect();
    let path = dir().join("asdf-rs-perf-raw.bin");
    for round in 0..2 {
        let _ = std::fs::remove_file(&path);
        let t = Instant::now();
        let mut f = std::fs::File::create(&path).unwrap();
        std::io::Write::write_all(&mut f, &bytes).unwrap();
        let w = t.elapsed();
        f.sync_all().unwrap();
        eprintln!(
            "raw {round}: write {:.3} s, write+fsync {:.3} s",
            w.as_secs_f64(),
            t.elapsed().as_secs_f64()
        );
        let _ = std::fs::remove_file(&path);
        let mut wr = Writer::new(WriteOptions::default().checksums(round == 1));
        let n = wr.add_array(&a);
        let root = Node::new(Value::Map(vec![(Node::str("data"), n)]));
        let p2 = dir().join("asdf-rs-perf-raw.asdf");
        let _ = std::fs::remove_file(&p2);
        let t = Instant::now();
        wr.write_to_path(&root, &p2).unwrap();
        eprintln!(
            "writer (checksums {}): {:.3} s",
            round == 1,
            t.elapsed().as_secs_f64()
        );
        let _ = std::fs::remove_file(&p2);
    }
}
