//! Reads part of an array (numpy's slice syntax) from a URL or a local file: times, and for a
//! URL the requests and bytes fetched ([`asdf_store::Stats`]).
//! `cargo run --release -p asdfrs-store --example cutout -- URL|FILE PATH SEL [--repeat N]
//! [--gap BYTES] [--concurrency N]`, e.g. `... -- http://127.0.0.1:8000/image.asdf /sci
//! '5000:5256, 7000:7256'`. Each repeat of a URL opens it afresh (nothing cached); a local file
//! is opened once and the cutout read `N` times (the first read, then the best and the median
//! of the others). The last line gives the cutout's shape and the sum of its values, to
//! compare with another reader's.

use std::sync::Arc;
use std::time::{Duration, Instant};

use asdf_core::{AsdfFile, Selection};

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let usage = "usage: cutout URL|FILE PATH SEL [--repeat N] [--gap BYTES] [--concurrency N]";
    let mut args = std::env::args().skip(1);
    let (src, path, sel) = (
        args.next().ok_or(usage)?,
        args.next().ok_or(usage)?,
        args.next().ok_or(usage)?,
    );
    let sel: Selection = sel.parse()?;
    let mut repeat = 1usize;
    let mut opts = asdf_store::StoreOptions::new();
    while let Some(a) = args.next() {
        let mut num = || -> Result<u64, Box<dyn std::error::Error>> {
            Ok(args.next().ok_or(usage)?.parse()?)
        };
        match a.as_str() {
            "--repeat" => repeat = usize::try_from(num()?)?.max(1),
            "--gap" => opts = opts.merge_gap(num()?),
            "--concurrency" => opts = opts.concurrency(usize::try_from(num()?)?),
            _ => return Err(usage.into()),
        }
    }
    let cutout = if asdf_store::is_url(&src) {
        let mut last = None;
        for _ in 0..repeat {
            let t = Instant::now();
            let reader = Arc::new(asdf_store::StoreReader::open(&src, &opts)?);
            let file = asdf_store::open_reader(reader.clone(), &Default::default())?;
            let (opened, at_open) = (t.elapsed(), reader.stats());
            let t = Instant::now();
            let cutout = file.region::<f32>(&path, &sel)?;
            let (read, all) = (t.elapsed(), reader.stats());
            println!(
                "open {:.6} s ({} requests, {} bytes); cutout {:.6} s ({} requests, {} bytes); \
                 in all {:.6} s, {} requests, {} bytes",
                opened.as_secs_f64(),
                at_open.requests,
                at_open.bytes,
                read.as_secs_f64(),
                all.requests - at_open.requests,
                all.bytes - at_open.bytes,
                (opened + read).as_secs_f64(),
                all.requests,
                all.bytes
            );
            last = Some(cutout);
        }
        last.ok_or(usage)?
    } else {
        let t = Instant::now();
        let file = AsdfFile::open(&src)?;
        println!("open {:.6} s", t.elapsed().as_secs_f64());
        let mut times: Vec<Duration> = Vec::with_capacity(repeat);
        let mut last = None;
        for _ in 0..repeat {
            let t = Instant::now();
            let cutout = file.region::<f32>(&path, &sel)?;
            times.push(t.elapsed());
            last = Some(cutout);
        }
        let first = times.first().copied().unwrap_or_default();
        let mut rest = times.get(1..).unwrap_or_default().to_vec();
        rest.sort();
        match (rest.first(), rest.get(rest.len() / 2)) {
            (Some(best), Some(median)) => println!(
                "cutout: first {:.6} s; of {} more: best {:.6} s, median {:.6} s",
                first.as_secs_f64(),
                rest.len(),
                best.as_secs_f64(),
                median.as_secs_f64()
            ),
            _ => println!("cutout: {:.6} s", first.as_secs_f64()),
        }
        last.ok_or(usage)?
    };
    let sum: f64 = cutout.iter().map(|&v| f64::from(v)).sum();
    println!("shape {:?}, sum {sum}", cutout.shape());
    Ok(())
}
