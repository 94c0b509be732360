//! Decoding and encoding a large `.b2nd` (python-blosc2's defaults: zstd 5 + shuffle).
//!
//!     .venv-oracle/bin/python asdf-blosc2/benches/compare_python.py
//!
//! writes the input with python-blosc2 (`target/bench-data/blosc2/f8_1g.b2nd`, 1 GiB of
//! float64), times python-blosc2 on it, then runs this bench and prints both. Alone:
//! `cargo bench -p asdfrs-blosc2 --bench decode` (the input must exist). Prints JSON.
//! Environment: `B2_BENCH_FILE` (the input), `B2_BENCH_RUNS` (3), `RAYON_NUM_THREADS`,
//! `B2_BENCH_DECODE_ONLY=1` (skips the encode runs, for profiling the decoder). Beside the
//! wall time of a decode, its CPU time (user and system, the process's, medians) is printed:
//! on a loaded machine that is the figure to compare.

use std::time::Instant;

use asdf_blosc2::{b2nd_frame, CParams, Codec, Filter, Frame};

/// CPU time of this process so far (user, system), in seconds, and its minor page faults.
fn cpu() -> (f64, f64, i64) {
    // SAFETY: getrusage writes one `rusage` into the zeroed struct it is given, nothing else.
    let ru = unsafe {
        let mut ru: libc::rusage = std::mem::zeroed();
        libc::getrusage(libc::RUSAGE_SELF, &mut ru);
        ru
    };
    let s = |t: libc::timeval| t.tv_sec as f64 + t.tv_usec as f64 * 1e-6;
    (s(ru.ru_utime), s(ru.ru_stime), ru.ru_minflt)
}

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(f64::total_cmp);
    v[v.len() / 2]
}

fn main() {
    let path = std::env::var("B2_BENCH_FILE").unwrap_or_else(|_| {
        concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/../target/bench-data/blosc2/f8_1g.b2nd"
        )
        .into()
    });
    let Ok(bytes) = std::fs::read(&path) else {
        eprintln!("{path}: missing; run asdf-blosc2/benches/compare_python.py first");
        return;
    };
    let runs: usize = std::env::var("B2_BENCH_RUNS")
        .ok()
        .and_then(|r| r.parse().ok())
        .unwrap_or(3);
    let f = Frame::parse(&bytes).expect("frame");
    let nd = f.b2nd().expect("b2nd").expect("b2nd metalayer");
    let mut decode = Vec::new();
    let (mut decode_user, mut decode_sys, mut faults) = (Vec::new(), Vec::new(), Vec::new());
    let mut data = Vec::new();
    for _ in 0..runs {
        // the previous run's array is freed first, as python-blosc2's is in
        // compare_python.py: a second gigabyte alive makes the allocator's work differ
        drop(std::mem::take(&mut data));
        let (u0, s0, f0) = cpu();
        let t = Instant::now();
        let f = Frame::parse(&bytes).expect("frame");
        data = f.b2nd_array(&nd).expect("decode");
        decode.push(t.elapsed().as_secs_f64());
        let (u1, s1, f1) = cpu();
        decode_user.push(u1 - u0);
        decode_sys.push(s1 - s0);
        faults.push((f1 - f0) as f64);
    }
    let p = CParams {
        codec: Codec::Zstd,
        level: 5,
        filters: Filter::Shuffle.only(),
        typesize: f.typesize,
        blocksize: 0,
    };
    // B2_BENCH_DECODE_ONLY=1: no encode runs (for profiling the decoder)
    let encode_runs = if std::env::var_os("B2_BENCH_DECODE_ONLY").is_some() {
        0
    } else {
        runs
    };
    let mut encode = vec![f64::NAN];
    if encode_runs > 0 {
        encode.clear();
    }
    for _ in 0..encode_runs {
        let t = Instant::now();
        let out = b2nd_frame(&nd, &data, &p, &[]).expect("encode");
        encode.push(t.elapsed().as_secs_f64());
        std::hint::black_box(out);
    }
    // one chunk of the frame, which holds many
    let t = Instant::now();
    let mut one = Vec::new();
    for i in 0..runs {
        f.chunk_into(i % f.nchunks, &mut one).expect("chunk");
    }
    let chunk = t.elapsed().as_secs_f64() / runs as f64;
    // opening a frame and reading one chunk, with 10 and with 100,000 chunks of 8 KiB (our
    // offsets index, stored as it is), and with 100,000 and a compressed index (as C-Blosc2
    // writes it: one block of it decoded per lookup)
    let mut open_one = Vec::new();
    // the same with one chunk read over and over (its bytes and index entry in cache for
    // both frames): what is left of the difference above is the cache misses of reaching
    // a random chunk of a large frame, not work that grows with it
    let mut open_hot = Vec::new();
    for (nchunks, compressed) in [(10usize, false), (100_000, false), (100_000, true)] {
        let mut w = asdf_blosc2::FrameWriter::new(8192, p);
        w.compress_offsets = compressed;
        let piece: Vec<u8> = (0..1024u64)
            .flat_map(|i| ((i * 3) as f64).to_le_bytes())
            .collect();
        for _ in 0..nchunks {
            w.append(&piece).expect("append");
        }
        let frame = w.finish().expect("frame");
        let mut ts = Vec::new();
        for k in 0..runs.max(101) {
            let t = Instant::now();
            let f = Frame::parse(&frame).expect("frame");
            let c = f.chunk((k * 7919) % nchunks).expect("chunk");
            ts.push(t.elapsed().as_secs_f64());
            std::hint::black_box(c);
        }
        open_one.push(median(ts));
        let mut ts = Vec::new();
        for _ in 0..runs.max(101) {
            let t = Instant::now();
            let f = Frame::parse(&frame).expect("frame");
            let c = f.chunk(nchunks / 2).expect("chunk");
            ts.push(t.elapsed().as_secs_f64());
            std::hint::black_box(c);
        }
        open_hot.push(median(ts));
    }
    println!(
        "{{\"bytes\": {}, \"chunks\": {}, \"decode_s\": {:.4}, \"decode_user_s\": {:.4}, \"decode_sys_s\": {:.4}, \"decode_minor_faults\": {}, \"encode_s\": {:.4}, \"one_chunk_s\": {:.5}, \"open_and_one_chunk_of_10_us\": {:.2}, \"open_and_one_chunk_of_100000_us\": {:.2}, \"same_with_compressed_index_us\": {:.2}, \"same_chunk_again_of_10_us\": {:.2}, \"same_chunk_again_of_100000_us\": {:.2}}}",
        data.len(),
        f.nchunks,
        median(decode),
        median(decode_user),
        median(decode_sys),
        median(faults),
        median(encode),
        chunk,
        open_one[0] * 1e6,
        open_one[1] * 1e6,
        open_one[2] * 1e6,
        open_hot[0] * 1e6,
        open_hot[1] * 1e6
    );
}
