//! Tree-bound write benchmarks (`cargo bench -p asdfrs-core --bench write_tree`): many small
//! arrays and a tree of many scalar leaves, where the cost is building, checking and emitting
//! the tree rather than moving block bytes (those are in `benches/write.rs`).
//!
//! Each workload is timed to a file (temporary file, fsync, rename: what
//! `Writer::write_to_path` always does) and into memory, as the median of several runs, and
//! the medians go to `target/bench-data/write-tree-rust.json`.
//! `asdf-core/benches/compare_write_tree.py` times the same workloads in python asdf 6.0.0
//! (to a file with fsync, and into memory) and prints both sides and the ratios.
//!
//! Validation differs by design: the writer validates the nodes it was given but not the
//! ndarray nodes it builds itself (valid by construction), while python asdf validates every
//! node of the final tree. So each workload is also timed as "write + validation of every
//! node of the written tree" (`*_full_validation`: the write plus `schema::validate_tree` of
//! the tree read back, the reading not timed), the same work python does.
//!
//! Arguments: `--runs N` (default 7).

use std::hint::black_box;
use std::path::PathBuf;

use asdf_core::write::{WriteOptions, Writer};
use asdf_core::{AsdfFile, Node, Value};
use ndarray::Array1;

mod common;
use common::time_stats;

/// 10,000 float64 arrays of 10 elements, `a0` … `a9999` (python: `np.arange(i*10, i*10+10)`).
fn small_arrays() -> Vec<Array1<f64>> {
    (0..10_000)
        .map(|i| Array1::from_iter((0..10).map(|j| (i * 10 + j) as f64)))
        .collect()
}

fn write_small(arrays: &[Array1<f64>], to: Option<&PathBuf>) -> usize {
    let mut w = Writer::new(WriteOptions::default());
    let entries: Vec<(Node, Node)> = arrays
        .iter()
        .enumerate()
        .map(|(i, a)| (Node::str(format!("a{i}")), w.add_array(a)))
        .collect();
    let root = Node::new(Value::Map(entries));
    match to {
        Some(p) => {
            w.write_to_path(&root, p).expect("write");
            0
        }
        None => w.write_to_vec(&root).expect("write").len(),
    }
}

/// `{"k0": 0.0, "k1": 0.25, …}` with 200,000 keys (built before timing starts, as python's
/// dict is).
fn scalar_tree() -> Node {
    let entries: Vec<(Node, Node)> = (0..200_000)
        .map(|i| {
            (
                Node::str(format!("k{i}")),
                Node::new(Value::Float(i as f64 * 0.25)),
            )
        })
        .collect();
    Node::new(Value::Map(entries))
}

fn write_scalars(root: &Node, to: Option<&PathBuf>) -> usize {
    let w = Writer::new(WriteOptions::default());
    match to {
        Some(p) => {
            w.write_to_path(root, p).expect("write");
            0
        }
        None => w.write_to_vec(root).expect("write").len(),
    }
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let runs = args
        .iter()
        .position(|a| a == "--runs")
        .and_then(|i| args.get(i + 1))
        .and_then(|v| v.parse().ok())
        .unwrap_or(7usize);
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../target/bench-data");
    std::fs::create_dir_all(&dir).expect("bench dir");
    let path = dir.join("write-tree-bench.asdf");
    let mut json = Vec::new();
    let mut record = |name: &str, [med, lo, hi]: [f64; 3]| {
        println!(
            "{name:<28} {:>9.2} ms  (range {:.2}-{:.2})",
            med * 1e3,
            lo * 1e3,
            hi * 1e3
        );
        json.push(format!("\"{name}\": {med}"));
    };
    // The arrays exist before timing starts, as numpy's do in the python script.
    let arrays = small_arrays();
    record(
        "small_arrays_file",
        time_stats(runs, || {
            black_box(write_small(&arrays, Some(&path)));
        }),
    );
    record(
        "small_arrays_memory",
        time_stats(runs, || {
            black_box(write_small(&arrays, None));
        }),
    );
    let root = scalar_tree();
    record(
        "scalar_tree_file",
        time_stats(runs, || {
            black_box(write_scalars(&root, Some(&path)));
        }),
    );
    record(
        "scalar_tree_memory",
        time_stats(runs, || {
            black_box(write_scalars(&root, None));
        }),
    );
    // Validation of every node of the written trees (the ndarray nodes too).
    for (name, bytes) in [
        ("small_arrays_validate_all", {
            let mut w = Writer::new(WriteOptions::default());
            let entries: Vec<(Node, Node)> = arrays
                .iter()
                .enumerate()
                .map(|(i, a)| (Node::str(format!("a{i}")), w.add_array(a)))
                .collect();
            w.write_to_vec(&Node::new(Value::Map(entries)))
                .expect("write")
        }),
        (
            "scalar_tree_validate_all",
            Writer::new(WriteOptions::default())
                .write_to_vec(&root)
                .expect("write"),
        ),
    ] {
        let file = AsdfFile::from_bytes(bytes).expect("read back");
        record(
            name,
            time_stats(runs, || {
                black_box(asdf_core::schema::validate_tree(file.tree(), "1.6.0").is_ok());
            }),
        );
    }
    let _ = std::fs::remove_file(&path);
    let out = dir.join("write-tree-rust.json");
    std::fs::write(&out, format!("{{{}}}\n", json.join(", "))).expect("results");
    println!("results: {}", out.display());
}
