//! Opens a URL, walks the tree and reads every array: times and what was fetched.
//! `cargo run --release -p asdfrs-store --example read_url -- URL [--tree-only] [--part-mib N]
//! [--concurrency N]`

use std::sync::Arc;
use std::time::Instant;

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let usage = "usage: read_url URL [--tree-only] [--part-mib N] [--concurrency N]";
    let mut args = std::env::args().skip(1);
    let url = args.next().ok_or(usage)?;
    let mut tree_only = false;
    let mut opts = asdf_store::StoreOptions::new();
    while let Some(a) = args.next() {
        let mut num = || -> Result<usize, Box<dyn std::error::Error>> {
            Ok(args.next().ok_or(usage)?.parse()?)
        };
        match a.as_str() {
            "--tree-only" => tree_only = true,
            "--part-mib" => opts = opts.part_size(num()? << 20),
            "--concurrency" => opts = opts.concurrency(num()?),
            _ => return Err(usage.into()),
        }
    }
    let t = Instant::now();
    let reader = Arc::new(asdf_store::StoreReader::open(&url, &opts)?);
    let file = asdf_store::open_reader(reader.clone(), &Default::default())?;
    let arrays: Vec<String> = file.arrays().into_iter().map(|(p, _)| p).collect();
    println!("open: {:?}, {:?}", t.elapsed(), reader.stats());
    if !tree_only {
        let t = Instant::now();
        for p in &arrays {
            // float64 arrays straight into the array's memory (the typed path); others of
            // any datatype through the dynamic one.
            match file.array::<f64>(p) {
                Ok(a) => drop(a),
                Err(_) => drop(file.dyn_array(p)?),
            }
        }
        println!(
            "{} arrays: {:?}, {:?}",
            arrays.len(),
            t.elapsed(),
            reader.stats()
        );
    }
    Ok(())
}
