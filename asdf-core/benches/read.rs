//! Read-path benchmarks (`cargo bench -p asdfrs-core --bench read`).
//!
//! Generates its data files once into `target/bench-data/` (a 1 GiB float64 file among them),
//! times each workload (median of several runs, warm page cache) and writes the medians to
//! `target/bench-data/rust.json`. `asdf-core/benches/compare_python.py` times the same
//! workloads on the same files with python asdf 6.0.0 and prints the ratios.
//!
//! Arguments: `--quick` uses a 128 MiB big file and fewer runs (for smoke tests);
//! `--only NAME` runs one workload (`big_read_owned` also times `big_fs_read` and the mmap
//! open; `big_read_fresh` times one-off 1 GiB reads, each after a 1 s pause;
//! `stream_decode` times the streaming decoder of each codec).

use std::fmt::Write as _;
use std::hint::black_box;
use std::io::Write as _;
use std::path::{Path, PathBuf};
use std::time::Instant;

mod common;
use common::time_stats;

use asdf_core::file::BlockHeader;
use asdf_core::unstable::checksum::Md5;
use asdf_core::unstable::{decoder_at, encode_block_header, encode_block_index, encode_items};
use asdf_core::write::Compression;
use asdf_core::{AsdfFile, Node, Value};

const HEAD: &str = "#ASDF 1.0.0\n#ASDF_STANDARD 1.6.0\n%YAML 1.1\n%TAG ! tag:stsci.edu:asdf/\n--- !core/asdf-1.1.0\n";

struct Block {
    compression: Option<Compression>,
    stored: Vec<u8>,
    data_size: u64,
    checksum: bool,
}

fn ndarray_yaml(source: usize, datatype: &str, shape: &[usize]) -> String {
    let dims: Vec<String> = shape.iter().map(|d| d.to_string()).collect();
    format!(
        "!core/ndarray-1.1.0 {{source: {source}, datatype: {datatype}, byteorder: little, shape: [{}]}}",
        dims.join(", ")
    )
}

/// A small ASDF writer for benchmark data only (the library's writer is a later layer).
fn write_file(path: &Path, tree_body: &str, blocks: &[Block]) {
    let mut out = Vec::new();
    out.extend_from_slice(HEAD.as_bytes());
    out.extend_from_slice(tree_body.as_bytes());
    out.extend_from_slice(b"...\n");
    let mut offsets = Vec::new();
    for (i, b) in blocks.iter().enumerate() {
        let checksum = if b.checksum {
            Md5::digest(&b.stored)
        } else {
            [0u8; 16]
        };
        let h = BlockHeader {
            index: i,
            offset: out.len() as u64,
            header_size: 48,
            flags: 0,
            compression: b.compression.map_or([0; 4], |c| c.label()),
            allocated_size: b.stored.len() as u64,
            used_size: b.stored.len() as u64,
            data_size: b.data_size,
            checksum,
        };
        offsets.push(out.len() as u64);
        out.extend_from_slice(&encode_block_header(&h));
        out.extend_from_slice(&b.stored);
    }
    if !blocks.is_empty() {
        out.extend_from_slice(&encode_block_index(&offsets));
    }
    std::fs::write(path, out).expect("write bench file");
}

fn f64_bytes(n: usize, f: impl Fn(usize) -> f64) -> Vec<u8> {
    let mut v = Vec::with_capacity(n * 8);
    for i in 0..n {
        v.extend_from_slice(&f(i).to_le_bytes());
    }
    v
}

fn make_tree(path: &Path) {
    // 200,000 scalar leaves in 2,000 mappings of 100 keys: ints, floats, strings, bools.
    let mut s = String::from("catalog:\n");
    for i in 0..2000 {
        let _ = writeln!(s, "  obj{i:05}:");
        for j in 0..100 {
            let _ = match j % 4 {
                0 => writeln!(s, "    k{j:03}: {}", i * 100 + j),
                1 => writeln!(s, "    k{j:03}: {}.25", i + j),
                2 => writeln!(s, "    k{j:03}: name_{i}_{j}"),
                _ => writeln!(
                    s,
                    "    k{j:03}: {}",
                    if (i + j) % 2 == 0 { "true" } else { "false" }
                ),
            };
        }
    }
    write_file(path, &s, &[]);
}

fn make_many_blocks(path: &Path, n: usize, elems: usize, checksum: bool) {
    let mut tree = String::from("arrays:\n");
    let mut blocks = Vec::with_capacity(n);
    for i in 0..n {
        let _ = writeln!(tree, "- {}", ndarray_yaml(i, "float64", &[elems]));
        let stored = f64_bytes(elems, |k| (i * elems + k) as f64);
        blocks.push(Block {
            compression: None,
            data_size: stored.len() as u64,
            stored,
            checksum,
        });
    }
    write_file(path, &tree, &blocks);
}

fn make_compressed(path: &Path, c: Compression, elems: usize) {
    // Smooth integer-valued data (like a quantised detector signal): compresses about 4-6x.
    let raw = f64_bytes(elems, |k| {
        ((k as f64 * 1e-3).sin() * 1000.0).round() + (k % 7) as f64
    });
    let stored = asdf_core::unstable::encode(c, &raw, None).expect("encode");
    let tree = format!("data: {}\n", ndarray_yaml(0, "float64", &[elems]));
    write_file(
        path,
        &tree,
        &[Block {
            compression: Some(c),
            data_size: raw.len() as u64,
            stored,
            checksum: true,
        }],
    );
}

fn make_big(path: &Path, bytes: usize) {
    let elems = bytes / 8;
    let tree = format!("data: {}\n", ndarray_yaml(0, "float64", &[elems]));
    let mut f = std::io::BufWriter::new(std::fs::File::create(path).expect("create"));
    f.write_all(HEAD.as_bytes()).unwrap();
    f.write_all(tree.as_bytes()).unwrap();
    f.write_all(b"...\n").unwrap();
    let h = BlockHeader {
        index: 0,
        offset: 0,
        header_size: 48,
        flags: 0,
        compression: [0; 4],
        allocated_size: (elems * 8) as u64,
        used_size: (elems * 8) as u64,
        data_size: (elems * 8) as u64,
        checksum: [0; 16],
    };
    f.write_all(&encode_block_header(&h)).unwrap();
    const CHUNK: usize = 1 << 20;
    let mut k = 0usize;
    while k < elems {
        let n = CHUNK.min(elems - k);
        f.write_all(&f64_bytes(n, |i| (k + i) as f64)).unwrap();
        k += n;
    }
    f.flush().unwrap();
}

/// Writes one benchmark input file.
type Maker = Box<dyn Fn(&Path)>;

/// Median wall time of `runs` calls, in seconds.
fn time(runs: usize, f: impl FnMut()) -> f64 {
    time_stats(runs, f)[0]
}

// The big reads are timed in back-to-back runs of one workload, as numpy's loop is: on a
// virtual machine with free page reporting, memory freed for more than a moment goes back to
// the host and touching it again costs a host fault per page, so a fresh 1 GiB buffer can
// cost several times more right after a different workload than in a steady loop.

fn count_leaves(n: &Node) -> usize {
    match n.value() {
        Value::Seq(items) => items.iter().map(count_leaves).sum(),
        Value::Map(entries) => entries.iter().map(|(_, v)| count_leaves(v)).sum(),
        _ => 1,
    }
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let quick = args.iter().any(|a| a == "--quick");
    let only = args
        .iter()
        .position(|a| a == "--only")
        .and_then(|i| args.get(i + 1).cloned());
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../target/bench-data");
    std::fs::create_dir_all(&dir).expect("bench dir");
    let big_bytes = if quick { 128 << 20 } else { 1 << 30 };
    let runs = if quick { 3 } else { 7 };
    let p = |name: &str| dir.join(name);
    let want = |name: &str| only.as_deref().is_none_or(|o| o == name);

    let files: [(&str, Maker); 6] = [
        ("tree200k.asdf", Box::new(make_tree)),
        (
            "blocks10k.asdf",
            Box::new(|p| make_many_blocks(p, 10_000, 16, true)),
        ),
        (
            "checksums.asdf",
            Box::new(|p| make_many_blocks(p, 2_000, 8192, true)),
        ),
        (
            "zlib.asdf",
            Box::new(|p| make_compressed(p, Compression::Zlib, 16 << 20)),
        ),
        (
            "lz4.asdf",
            Box::new(|p| make_compressed(p, Compression::Lz4, 16 << 20)),
        ),
        ("big.asdf", Box::new(move |p| make_big(p, big_bytes))),
    ];
    for (name, make) in &files {
        let path = p(name);
        let stale = name == &"big.asdf"
            && std::fs::metadata(&path).map_or(true, |m| m.len() < big_bytes as u64);
        if !path.exists() || stale {
            eprintln!("generating {}", path.display());
            make(&path);
        }
    }

    let mut results: Vec<(String, f64)> = Vec::new();
    let mut record = |name: &str, secs: f64, note: String| {
        println!("{name:<28} {:>12.3} ms  {note}", secs * 1e3);
        results.push((name.to_string(), secs));
    };

    if want("tree_open_walk") {
        let path = p("tree200k.asdf");
        let mut leaves = 0;
        let t = time(runs, || {
            let f = AsdfFile::open(&path).unwrap();
            leaves = count_leaves(f.tree());
            black_box(leaves);
        });
        record("tree_open_walk", t, format!("{leaves} leaves"));
    }
    if want("blocks10k_lazy_open") {
        let path = p("blocks10k.asdf");
        let t = time(runs, || {
            let f = AsdfFile::open(&path).unwrap();
            black_box(f.blocks().len());
        });
        record("blocks10k_lazy_open", t, "10,000 blocks".into());
    }
    if want("big_read_owned") || want("big_fs_read") {
        let path = p("big.asdf");
        let mib = big_bytes >> 20;
        let fs = time_stats(runs, || {
            black_box(std::fs::read(&path).unwrap().len());
        });
        let owned = time_stats(runs, || {
            let f = AsdfFile::open(&path).unwrap();
            black_box(f.array::<f64>("/data").unwrap().len());
        });
        let range = |t: [f64; 3]| format!("range {:.0}-{:.0} ms", t[1] * 1e3, t[2] * 1e3);
        let t_fs = fs[0];
        record(
            "big_fs_read",
            t_fs,
            format!("std::fs::read of {mib} MiB, {}", range(fs)),
        );
        let t = owned[0];
        record(
            "big_read_owned",
            t,
            format!("{:.2}x fs::read, {}", t / t_fs, range(owned)),
        );
        let t_map = time(runs, || {
            let f = AsdfFile::options().mmap(true).open(&path).unwrap();
            let v = f.try_view::<f64>("/data").unwrap().map(|v| v.len());
            black_box(v);
        });
        record("big_mmap_open_view", t_map, format!("{mib} MiB mapped"));
        let small = p("zlib.asdf");
        let t_small = time(runs, || {
            let f = AsdfFile::options().mmap(true).open(&small).unwrap();
            black_box(f.blocks().len());
        });
        record("small_mmap_open", t_small, "for comparison".into());
    }
    if want("big_read_fresh") {
        // A one-off read: each run starts after a pause, so the buffer gets fresh memory
        // (on a virtual machine, possibly handed back to the host meanwhile) instead of the
        // last run's pages.
        let path = p("big.asdf");
        let mut t: Vec<f64> = (0..runs)
            .map(|_| {
                std::thread::sleep(std::time::Duration::from_secs(1));
                let start = Instant::now();
                let f = AsdfFile::open(&path).unwrap();
                black_box(f.array::<f64>("/data").unwrap().len());
                start.elapsed().as_secs_f64()
            })
            .collect();
        t.sort_by(f64::total_cmp);
        let (median, lo, hi) = (t[t.len() / 2], t[0], t[t.len() - 1]);
        record(
            "big_read_fresh",
            median,
            format!(
                "after a 1 s pause, range {:.0}-{:.0} ms",
                lo * 1e3,
                hi * 1e3
            ),
        );
    }
    for (name, file) in [("zlib_decode", "zlib.asdf"), ("lz4_decode", "lz4.asdf")] {
        if want(name) {
            let path = p(file);
            let t = time(runs, || {
                let f = AsdfFile::open(&path).unwrap();
                black_box(f.array::<f64>("/data").unwrap().len());
            });
            let mb = (16 << 20) as f64 * 8.0 / 1e6;
            record(name, t, format!("{:.0} MB/s decoded", mb / t));
        }
    }
    if want("stream_decode") {
        // The streaming decoders (`unstable::decoder`, `decoder_at`: convert, copy, HDF5
        // export, progress-reporting reads) over in-memory stored bytes, 64 MiB decoded.
        let n = if quick { 16 << 20 } else { 64 << 20 };
        let data = f64_bytes(n / 8, |i| ((i / 5) ^ (i % 7)) as f64);
        for c in [
            Compression::Lz4,
            Compression::Zlib,
            Compression::Zstd,
            Compression::Blsc,
            Compression::Bls2,
            Compression::Bsc2,
        ] {
            let stored = encode_items(c, &data, Some(1), 8).unwrap();
            let t = time(runs, || {
                let mut r = decoder_at(c, &stored[..], n as u64).unwrap();
                black_box(std::io::copy(&mut r, &mut std::io::sink()).unwrap());
            });
            let mb = n as f64 / 1e6;
            record(
                &format!("stream_{c}"),
                t,
                format!("{:.0} MB/s decoded", mb / t),
            );
        }
    }
    if want("checksums_verify") {
        // The work python asdf does with `lazy_load=False, validate_checksums=True` and
        // `np.asarray` of each array: read every block, verify its MD5, and give every
        // array (a view of the loaded block, no copy).
        let path = p("checksums.asdf");
        let work = || {
            let f = AsdfFile::options()
                .lazy(false)
                .verify_checksums(true)
                .open(&path)
                .unwrap();
            let n: usize = (0..2_000)
                .map(|i| f.array_view::<f64>(&format!("/arrays/{i}")).unwrap().len())
                .sum();
            black_box(n);
        };
        let threads = rayon::current_num_threads();
        let t = time(runs, work);
        record(
            "checksums_verify",
            t,
            format!("2,000 blocks of 64 KiB, {threads} threads"),
        );
        let one = rayon::ThreadPoolBuilder::new()
            .num_threads(1)
            .build()
            .unwrap();
        let t1 = one.install(|| time(runs, work));
        record(
            "checksums_verify_1thread",
            t1,
            "the same on one thread (as python)".into(),
        );
    }

    let mut json = String::from("{\n");
    for (i, (k, v)) in results.iter().enumerate() {
        let _ = write!(json, "  \"{k}\": {v:e}");
        json.push_str(if i + 1 < results.len() { ",\n" } else { "\n" });
    }
    json.push_str("}\n");
    std::fs::write(dir.join("rust.json"), json).expect("write results");
    println!("results: {}", dir.join("rust.json").display());
}
