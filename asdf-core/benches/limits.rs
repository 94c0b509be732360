//! The workloads of issue 19, one run per process, for `compare_limits.py`, which runs them
//! interleaved with python asdf's and prints the table:
//!
//! ```text
//! .venv-oracle/bin/python asdf-core/benches/compare_limits.py [--runs 5] [--mib 256]
//! ```
//!
//! Direct use: `cargo bench -p asdfrs-core --bench limits -- --only NAME --input FILE
//! [--out FILE]` prints one line `NAME SECONDS PEAK_RSS_BYTES`. The input is an ASDF file
//! with a float64 array `/data` in an uncompressed, checksummed block (the python script
//! writes it with python asdf). Workloads:
//!
//! - `verified_read`: open with checksum verification, read `/data` into an owned array, sum
//! - `md5`: the MD5 of the array's bytes in memory (read untimed)
//! - `zstd_write` / `bzp2_write`: write the array as a zstd / bzip2 block (with checksum) to
//!   `--out`, synced (read untimed)
//! - `compressed_read`: open `--input` (a compressed block) verified, read `/data`, sum
//! - `verify`: `verify_checksums()` of the input, as `asdftool validate` does (no block is
//!   loaded); the peak resident set is the point
//!
//! Times are wall-clock seconds; the peak is `VmHWM` of /proc/self/status (0 elsewhere).

use std::hint::black_box;
use std::path::PathBuf;
use std::time::Instant;

use asdf_core::unstable::checksum::Md5;
use asdf_core::write::Compression;
use asdf_core::write::{CompressionChoice, WriteOptions, Writer};
use asdf_core::{AsdfFile, Node, Value};

fn peak_rss() -> u64 {
    std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|s| {
            s.lines()
                .find_map(|l| l.strip_prefix("VmHWM:"))
                .and_then(|v| v.trim().trim_end_matches("kB").trim().parse::<u64>().ok())
        })
        .map_or(0, |kb| kb * 1024)
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let arg = |name: &str| {
        args.iter()
            .position(|a| a == name)
            .and_then(|i| args.get(i + 1).cloned())
    };
    let (Some(only), Some(input)) = (arg("--only"), arg("--input")) else {
        println!("limits: run through asdf-core/benches/compare_limits.py (see the file's docs)");
        return;
    };
    let input = PathBuf::from(input);
    let out = arg("--out").map(PathBuf::from);
    let read = || {
        AsdfFile::open(&input)
            .and_then(|f| f.array::<f64>("/data"))
            .expect("read the input")
    };
    let write = |c: Compression| {
        let a = read();
        let path = out.clone().expect("--out");
        let start = Instant::now();
        let mut w = Writer::new(WriteOptions::default().compression(CompressionChoice::Codec(c)));
        let n = w.add_array(&a);
        let root = Node::new(Value::Map(vec![(Node::str("data"), n)]));
        w.write_to_path(&root, &path).expect("write");
        start.elapsed()
    };
    let verified_sum = || {
        let start = Instant::now();
        let f = AsdfFile::options()
            .verify_checksums(true)
            .open(&input)
            .expect("open");
        let a = f.array::<f64>("/data").expect("verified read");
        black_box(a.sum());
        start.elapsed()
    };
    let elapsed = match only.as_str() {
        "verified_read" | "compressed_read" => verified_sum(),
        "md5" => {
            let bytes: Vec<u8> = read().iter().flat_map(|v| v.to_le_bytes()).collect();
            let start = Instant::now();
            black_box(Md5::digest(&bytes));
            start.elapsed()
        }
        "zstd_write" => write(Compression::Zstd),
        "bzp2_write" => write(Compression::Bzp2),
        "verify" => {
            let start = Instant::now();
            let f = AsdfFile::open(&input).expect("open");
            f.verify_checksums().expect("checksums");
            start.elapsed()
        }
        other => panic!("unknown workload {other}"),
    };
    println!("{only} {:.6} {}", elapsed.as_secs_f64(), peak_rss());
}
