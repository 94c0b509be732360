//! Validation benchmark (`cargo bench -p asdfrs-core --bench validate`).
//!
//! Writes `target/bench-data/validate10k.asdf`: a tree of 10,000 small ndarrays (block
//! sources, no inline data; several datatypes and ranks, a few masks), with `asdf_library`
//! and `history` as python asdf writes them. Times [`validate_tree`] on the parsed tree
//! (median of several runs; the first call, which also compiles the schemas, is reported
//! separately) and writes `target/bench-data/validate-rust.json`.
//! `asdf-core/benches/compare_validate.py` times python asdf 6.0.0 validating the same tree
//! and prints the ratio.
//!
//! Arguments: `--quick` for fewer runs.

use std::fmt::Write as _;
use std::hint::black_box;
use std::path::PathBuf;
use std::time::Instant;

use asdf_core::schema::validate_tree;
use asdf_core::AsdfFile;

const ARRAYS: usize = 10_000;

fn bench_dir() -> PathBuf {
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("..")
        .join("target")
        .join("bench-data");
    std::fs::create_dir_all(&dir).expect("create bench dir");
    dir
}

/// The benchmark file's text (tree only: validation reads no block data, and a file whose
/// blocks are absent still opens lazily in both libraries).
fn make_tree() -> String {
    let mut s = String::from(
        "#ASDF 1.0.0\n#ASDF_STANDARD 1.6.0\n%YAML 1.1\n%TAG ! tag:stsci.edu:asdf/\n\
         --- !core/asdf-1.1.0\n\
         asdf_library: !core/software-1.0.0 {author: The ASDF Developers, homepage: 'http://github.com/asdf-format/asdf',\n  name: asdf, version: 6.0.0}\n\
         history:\n  extensions:\n  - !core/extension_metadata-1.0.0\n    extension_class: asdf.extension._manifest.ManifestExtension\n    extension_uri: asdf://asdf-format.org/core/extensions/core-1.6.0\n    manifest_software: !core/software-1.0.0 {name: asdf_standard, version: 1.1.1}\n    software: !core/software-1.0.0 {name: asdf, version: 6.0.0}\n\
         groups:\n",
    );
    let dtypes = [
        "float64",
        "float32",
        "int32",
        "uint8",
        "int64",
        "complex128",
    ];
    let per_group = 100;
    for g in 0..ARRAYS / per_group {
        let _ = writeln!(s, "  g{g}:");
        for j in 0..per_group {
            let i = g * per_group + j;
            let dt = dtypes[i % dtypes.len()];
            let shape = match i % 3 {
                0 => "[16]".to_string(),
                1 => "[4, 8]".to_string(),
                _ => "[2, 3, 4]".to_string(),
            };
            let _ = write!(
                s,
                "    a{j}: !core/ndarray-1.1.0 {{source: {i}, datatype: {dt}, byteorder: little, shape: {shape}"
            );
            if i % 50 == 0 {
                s.push_str(", mask: .nan");
            }
            s.push_str("}\n");
        }
    }
    s.push_str("...\n");
    s
}

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(f64::total_cmp);
    v[v.len() / 2]
}

fn main() {
    let quick = std::env::args().any(|a| a == "--quick");
    let runs = if quick { 5 } else { 21 };
    let dir = bench_dir();
    let path = dir.join("validate10k.asdf");
    std::fs::write(&path, make_tree()).expect("write bench file");
    let file = AsdfFile::open(&path).expect("open bench file");
    let standard = file.standard_version().to_string();
    let arrays = file.arrays().len();
    assert_eq!(arrays, ARRAYS);

    let t0 = Instant::now();
    let first = validate_tree(file.tree(), &standard);
    let cold = t0.elapsed().as_secs_f64();
    assert!(first.is_ok(), "bench tree must validate: {first:?}");

    let mut times = Vec::with_capacity(runs);
    for _ in 0..runs {
        let t = Instant::now();
        let r = validate_tree(black_box(file.tree()), &standard);
        times.push(t.elapsed().as_secs_f64());
        assert!(r.is_ok());
    }
    let warm = median(times);

    // An invalid variant: every 10th array with a bad byteorder (10% of nodes fail).
    let text = make_tree().replacen("byteorder: little", "byteorder: middle", ARRAYS);
    let bad_text: String = {
        // keep 1 in 10 bad: restore the others
        let mut out = String::with_capacity(text.len());
        for (n, line) in text.lines().enumerate() {
            if line.contains("byteorder: middle") && n % 10 != 0 {
                out.push_str(&line.replace("byteorder: middle", "byteorder: little"));
            } else {
                out.push_str(line);
            }
            out.push('\n');
        }
        out
    };
    let bad = AsdfFile::from_bytes(bad_text.into_bytes()).expect("open invalid variant");
    let mut errs = 0;
    let mut bad_times = Vec::new();
    for _ in 0..runs.min(7) {
        let t = Instant::now();
        let r = validate_tree(bad.tree(), &standard);
        bad_times.push(t.elapsed().as_secs_f64());
        errs = r.err().map_or(0, |e| e.len());
    }
    let invalid = median(bad_times);

    println!(
        "validate_10k_arrays (first call, compiles schemas) {:>9.3} ms",
        cold * 1e3
    );
    println!(
        "validate_10k_arrays                               {:>9.3} ms",
        warm * 1e3
    );
    println!(
        "validate_10k_arrays_10pct_invalid ({errs} errors)   {:>9.3} ms",
        invalid * 1e3
    );
    let json = format!(
        "{{\n  \"validate_10k_arrays\": {warm},\n  \"validate_10k_arrays_first\": {cold},\n  \"validate_10k_arrays_10pct_invalid\": {invalid}\n}}\n"
    );
    let out = dir.join("validate-rust.json");
    std::fs::write(&out, json).expect("write results");
    println!("results: {}", out.display());
}
