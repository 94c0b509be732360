//! Large-array write benchmarks (`cargo bench -p asdfrs-core --bench write`).
//!
//! Writes a 1 GiB float64 array (`arange(n) * 0.5`, as `compare_write.py` makes it) with
//! [`Writer::write_to_path`] (temporary file, fsync, rename), uncompressed with and without
//! checksums and compressed with lz4 and zlib, next to two floors: the MD5 of the same bytes
//! alone, and a plain `write` + `fsync` of them. Each workload is timed several times (a fresh
//! file each time, the previous one removed and its directory synced before the clock starts;
//! no warm-up: the page cache matters here) and the median, minimum and
//! maximum are printed; the medians go to `target/bench-data/rust_write.json`, which
//! `asdf-core/benches/compare_write.py` reads to print python/rust ratios.
//!
//! Arguments: `--quick` (128 MiB, fewer runs), `--only NAME` (one workload: `md5_alone`,
//! `raw_write_fsync`, `big_none`, `big_none_nosum`, `big_lz4`, `big_zlib`), `--runs N`,
//! `--no-zlib` (zlib takes about 20 s a run).

use std::fmt::Write as _;
use std::hint::black_box;
use std::io::Write as _;
use std::path::{Path, PathBuf};
use std::time::Instant;

use asdf_core::unstable::checksum::Md5;
use asdf_core::write::Compression;
use asdf_core::write::{CompressionChoice, WriteOptions, Writer};
use asdf_core::{Node, Value};
use ndarray::Array1;

/// Removes `path` if it is there and syncs its directory, so that freeing the old file's
/// blocks (a discard, on a file system mounted with it) is not charged to the next write.
fn clear(path: &Path) {
    if std::fs::remove_file(path).is_ok() {
        if let Some(d) = path.parent().and_then(|d| std::fs::File::open(d).ok()) {
            let _ = d.sync_all();
        }
    }
}

/// Wall times of `runs` calls of `f`, in seconds, sorted; `path` is cleared before each.
fn times(runs: usize, path: &Path, mut f: impl FnMut()) -> Vec<f64> {
    let mut t: Vec<f64> = (0..runs)
        .map(|_| {
            clear(path);
            let start = Instant::now();
            f();
            start.elapsed().as_secs_f64()
        })
        .collect();
    t.sort_by(f64::total_cmp);
    t
}

fn write_array(path: &Path, a: &Array1<f64>, opts: WriteOptions) {
    let mut w = Writer::new(opts);
    let n = w.add_array(a);
    let root = Node::new(Value::Map(vec![(Node::str("data"), n)]));
    w.write_to_path(&root, path).expect("write");
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let quick = args.iter().any(|a| a == "--quick");
    let no_zlib = args.iter().any(|a| a == "--no-zlib");
    let arg = |name: &str| {
        args.iter()
            .position(|a| a == name)
            .and_then(|i| args.get(i + 1).cloned())
    };
    let only = arg("--only");
    let runs: usize = arg("--runs")
        .and_then(|s| s.parse().ok())
        .unwrap_or(if quick { 3 } else { 5 });
    let want = |name: &str| only.as_deref().is_none_or(|o| o == name);
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../target/bench-data");
    std::fs::create_dir_all(&dir).expect("bench dir");
    let bytes: usize = if quick { 128 << 20 } else { 1 << 30 };
    let a = Array1::from_iter((0..bytes / 8).map(|i| i as f64 * 0.5));
    // the same bytes for the floors (a copy: the writer itself takes the array)
    let raw: Vec<u8> = a.iter().flat_map(|v| v.to_le_bytes()).collect();
    let mib = bytes >> 20;
    let path = dir.join("write-bench.asdf");

    let mut results: Vec<(String, f64)> = Vec::new();
    let mut record = |name: &str, t: &[f64], note: String| {
        let med = t[t.len() / 2];
        let (lo, hi) = (t[0], t[t.len() - 1]);
        println!(
            "{name:<18} median {med:>7.3} s  [{lo:.3} – {hi:.3}]  {:>6.0} MiB/s  {note}",
            mib as f64 / med
        );
        results.push((name.to_string(), med));
    };

    if want("md5_alone") {
        let t = times(runs, &path, || {
            black_box(Md5::digest(&raw));
        });
        record(
            "md5_alone",
            &t,
            "our MD5 (asdf_core::unstable::checksum) over the array's bytes".into(),
        );
    }
    if want("raw_write_fsync") {
        let t = times(runs, &path, || {
            let mut f = std::fs::File::create(&path).expect("create");
            f.write_all(&raw).expect("write");
            f.sync_all().expect("fsync");
        });
        record("raw_write_fsync", &t, "one write + fsync, no MD5".into());
    }
    let codecs = [
        ("big_none", CompressionChoice::None, true),
        ("big_none_nosum", CompressionChoice::None, false),
        ("big_lz4", CompressionChoice::Codec(Compression::Lz4), true),
        (
            "big_zlib",
            CompressionChoice::Codec(Compression::Zlib),
            true,
        ),
    ];
    for (name, c, sums) in codecs {
        if !want(name) || (name == "big_zlib" && no_zlib && only.is_none()) {
            continue;
        }
        let n = if name == "big_zlib" {
            runs.min(3)
        } else {
            runs
        };
        let opts = WriteOptions::default().compression(c).checksums(sums);
        let mut size = 0;
        let t = times(n, &path, || {
            write_array(&path, &a, opts.clone());
            size = std::fs::metadata(&path).map_or(0, |m| m.len());
        });
        record(
            name,
            &t,
            format!(
                "write_to_path (temp, fsync, rename), {} MiB file",
                size >> 20
            ),
        );
    }
    clear(&path);

    let median = |k: &str| results.iter().find(|(n, _)| n == k).map(|(_, v)| *v);
    if let (Some(big), Some(md5)) = (median("big_none"), median("md5_alone")) {
        println!("big_none / md5_alone = {:.2}", big / md5);
    }
    let mut json = String::from("{\n");
    let _ = writeln!(json, "  \"bytes\": {bytes},");
    for (i, (k, v)) in results.iter().enumerate() {
        let _ = write!(json, "  \"{k}\": {v:e}");
        json.push_str(if i + 1 < results.len() { ",\n" } else { "\n" });
    }
    json.push_str("}\n");
    std::fs::write(dir.join("rust_write.json"), json).expect("write results");
    println!("results: {}", dir.join("rust_write.json").display());
}
