//! Reading over HTTP from a loopback server (the tests' helper): times and bytes transferred.
//! `cargo bench -p asdfrs-store --bench remote` (ASDF_BENCH_BLOCK_MIB sets the large block's size,
//! default 1024; ASDF_BENCH_CUTOUT_SIDE the side of the cutout's float32 image, default 16384).
//! Prints one line per workload; no timing assertions (the cutouts are checked against the image
//! sliced).

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
    drop(file);
    server.put("many.asdf", Arc::new(Vec::new()));

    cutouts(&server);
}

/// A 256 × 256 cutout of a square float32 image (16k × 16k, 1 GiB, by default), uncompressed
/// and in python asdf's lz4 framing (our writer's: 4 MiB sub-blocks), each from a fresh open:
/// the time and the bytes sent, with the default merge gap and with none.
fn cutouts(server: &support::Server) {
    let side: usize = std::env::var("ASDF_BENCH_CUTOUT_SIDE")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(16384);
    // Noise-like values (an xorshift), which lz4 barely compresses, as real images.
    let mut x = 0x9e37_79b9_7f4a_7c15u64;
    let image = ndarray::Array2::from_shape_simple_fn((side, side), || {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        100.0 + (x >> 40) as f32 / (1u64 << 24) as f32
    });
    let (r, c) = (side * 5 / 16, side * 7 / 16);
    let sel: asdf_core::Selection = format!("{r}:{}, {c}:{}", r + 256, c + 256).parse().unwrap();
    let want = image
        .slice(ndarray::s![r..r + 256, c..c + 256])
        .to_owned()
        .into_dyn();
    for codec in [None, Some(asdf_core::write::Compression::Lz4)] {
        let mut o = WriteOptions::default();
        if let Some(c) = codec {
            o = o.compression(asdf_core::array::CompressionChoice::Codec(c));
        }
        let mut w = Writer::new(o);
        let sci = w.add_array(&image);
        let bytes = w.write_to_vec(&tree!({"sci": sci})).unwrap();
        let size = bytes.len();
        server.put("image.asdf", Arc::new(bytes));
        for gap in [None, Some(0)] {
            let mut opts = StoreOptions::new();
            if let Some(g) = gap {
                opts = opts.merge_gap(g);
            }
            server.reset_counts();
            let t = Instant::now();
            let reader = Arc::new(StoreReader::open(&server.url("image.asdf"), &opts).unwrap());
            let file = asdf_store::open_reader(reader.clone(), &Default::default()).unwrap();
            let got = file.region::<f32>("/sci", &sel).unwrap();
            let el = t.elapsed();
            assert_eq!(got, want);
            let stats = reader.stats();
            println!(
                "256x256 cutout of a {side}x{side} float32 image ({}, {size} bytes, merge gap {}): \
                 {el:?} with the open, {} requests, {} bytes",
                codec.map_or("uncompressed", |c| c.name()),
                gap.map_or("default".to_string(), |g| g.to_string()),
                stats.requests,
                stats.bytes
            );
        }
    }
}

fn count(n: &Node) -> usize {
    match n.value() {
        Value::Map(m) => m.iter().map(|(_, v)| count(v)).sum(),
        Value::Seq(s) => s.iter().map(count).sum(),
        _ => 1,
    }
}
