//! Write timings (ignored by default; no timing assertions). Run with
//! `cargo test -p asdf-core --release --test write_perf -- --ignored --nocapture`;
//! `ASDF_PERF_DIR` chooses the directory (default: the temp dir), `ASDF_PERF_GIB` the size of
//! the big array in GiB (default 1). `tests/oracle/write_perf.py` runs the same workloads in
//! python asdf.

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
#[ignore]
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
#[ignore]
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
    let _ = std::fs::remove_file(&path);
}

#[test]
#[ignore]
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
    let _ = std::fs::remove_file(&path);
}
