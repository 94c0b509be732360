//! Write timings of many small arrays and of a large scalar tree: a developer tool, not part
//! of the test suite (no timing assertions). Run with
//! `cargo test -p asdf-core --release --features dev-tools --test write_perf -- --nocapture`;
//! `ASDF_PERF_DIR` chooses the directory (default: the temp dir). `tests/oracle/write_perf.py`
//! runs the same workloads in python asdf. The large-array writes are benchmarks:
//! `cargo bench -p asdf-core --bench write` and `asdf-core/benches/compare_write.py`.

#![cfg(feature = "dev-tools")]

use std::path::PathBuf;
use std::time::Instant;

use asdf_core::write::{WriteOptions, Writer};
use asdf_core::{Node, Value};
use ndarray::Array1;

fn dir() -> PathBuf {
    std::env::var_os("ASDF_PERF_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(std::env::temp_dir)
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
