//! Reading over HTTP from a loopback server (the tests' helper): times and bytes transferred.
//! `cargo bench -p asdfrs-store --bench remote` (ASDF_BENCH_BLOCK_MIB sets the large block's size,
//! default 1024). Prints one line per workload; no assertions.

#[path = "../tests/support/mod.rs"]
mod support;

use std::sync::Arc;
use std::time::Instant;

use asdf_core::tree;
use asdf_core::write::{WriteOptions, Writer};
use asdf_core::{Node, Value};
use asdf_store::{StoreOptions, StoreReader};

fn main() {
    let server = support::Server::start();
    let opts = StoreOptions::new();

    // A tree of 200,000 leaves (2,000 mappings of 100 numbers), no blocks.
    let mut root = Vec::new();
    for i in 0..2000 {
        let leaves: Vec<(Node, Node)> = (0..100)
            .map(|j| {
                (
                    Node::from(format!("k{j}")),
                    Node::from((i * 100 + j) as i64),
                )
            })
            .collect();
        root.push((Node::from(format!("m{i}")), Node::from(Value::Map(leaves))));
    }
    let bytes = Writer::new(WriteOptions::default())
        .write_to_vec(&Node::from(Value::Map(root)))
        .unwrap();
    let size = bytes.len();
    server.put("tree.asdf", Arc::new(bytes));
    let t = Instant::now();
    let file =
        asdf_store::open_url_with(&server.url("tree.asdf"), &opts, &Default::default()).unwrap();
    let leaves = count(file.tree());
    println!(
        "info-like open of a {leaves}-leaf tree ({size} bytes): {:?}, {} bytes sent",
        t.elapsed(),
        server.sent()
    );

    // One large block.
    let mib: usize = std::env::var("ASDF_BENCH_BLOCK_MIB")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(1024);
    let a = ndarray::Array1::<f64>::from_elem(mib << 17, 1.5);
    let mut w = Writer::new(WriteOptions::default());
    let n = w.add_array(&a);
    let bytes = w.write_to_vec(&tree!({"a": n})).unwrap();
    drop(a);
    server.put("big.asdf", Arc::new(bytes));
    server.reset_counts();
    let t = Instant::now();
    let file =
        asdf_store::open_url_with(&server.url("big.asdf"), &opts, &Default::default()).unwrap();
    let opened = server.sent();
    let arr = file.array::<f64>("/a").unwrap();
    let el = t.elapsed();
    println!(
        "read of a {mib} MiB block: {el:?} ({:.0} MiB/s), {opened} bytes sent to open, {} in all",
        mib as f64 / el.as_secs_f64(),
        server.sent()
    );
    drop((arr, file));
    server.put("big.asdf", Arc::new(Vec::new()));

    // 10,000 small blocks: what reading one array costs.
    let arrays: Vec<_> = (0..10_000)
        .map(|i| ndarray::Array1::<f64>::from_elem(100, f64::from(i)))
        .collect();
    let mut w = Writer::new(WriteOptions::default());
    let nodes: Vec<(Node, Node)> = arrays
        .iter()
        .enumerate()
        .map(|(i, a)| (Node::from(format!("a{i}")), w.add_array(a)))
        .collect();
    let bytes = w.write_to_vec(&Node::from(Value::Map(nodes))).unwrap();
    let size = bytes.len();
    server.put("many.asdf", Arc::new(bytes));
    server.reset_counts();
    let reader = Arc::new(StoreReader::open(&server.url("many.asdf"), &opts).unwrap());
    let file = asdf_store::open_reader(reader.clone(), &Default::default()).unwrap();
    let tree_end = file.layout().tree.map_or(0, |t| t.1);
    let opened = server.sent();
    let _ = file.array::<f64>("/a5000").unwrap();
    println!(
        "10,000 blocks ({size} bytes, tree ends at {tree_end}): open sent {opened}, one array {} more, {} GETs",
        server.sent() - opened,
        server.gets()
    );
}

fn count(n: &Node) -> usize {
    match n.value() {
        Value::Map(m) => m.iter().map(|(_, v)| count(v)).sum(),
        Value::Seq(s) => s.iter().map(count).sum(),
        _ => 1,
    }
}
