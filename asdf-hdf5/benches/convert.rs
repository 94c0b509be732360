//! HDF5 → ASDF conversion speed (`asdf_hdf5::to_asdf`), on the inputs that
//! `asdf-hdf5/benches/compare_python.py` writes with h5py (`target/bench-data/hdf5/`): a 1 GiB
//! float32 dataset in gzip chunks, and 10,000 small datasets. Prints the median seconds of
//! each as one JSON line (the python script reads it and prints the side by side).
//!
//! ```text
//! .venv-oracle/bin/python asdf-hdf5/benches/compare_python.py    # writes inputs, runs this
//! cargo bench -p asdfrs-hdf5 --bench convert                       # this alone
//! ```

use std::path::PathBuf;
use std::time::Instant;

use asdf_hdf5::{to_asdf, ToAsdfOptions};

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(f64::total_cmp);
    v[v.len() / 2]
}

fn main() {
    let dir = PathBuf::from(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../target/bench-data/hdf5"
    ));
    let mut out = Vec::new();
    for (name, runs) in [("f4_gzip_1g", 3), ("many", 5)] {
        let input = dir.join(format!("{name}.h5"));
        if !input.exists() {
            eprintln!(
                "{}: missing; run asdf-hdf5/benches/compare_python.py first",
                input.display()
            );
            std::process::exit(1);
        }
        let output = dir.join("rust-out.asdf");
        let times: Vec<f64> = (0..runs)
            .map(|_| {
                let t = Instant::now();
                to_asdf(&input, &output, &ToAsdfOptions::default()).unwrap();
                t.elapsed().as_secs_f64()
            })
            .collect();
        let m = median(times);
        eprintln!("asdf-rs {name}: {m:.3} s");
        out.push(format!("\"{name}\": {m:.4}"));
        let _ = std::fs::remove_file(&output);
    }
    println!("{{{}}}", out.join(", "));
}
