//! Fuzz target: Blosc2 frames and chunks. An even first byte reads the rest as a contiguous
//! frame (every chunk, the metalayers, the .b2nd array); an odd one as one chunk. Declared
//! sizes are capped at 16 MiB so that a frame of zero runs does not exhaust memory by design.
//! Chunks decode on one thread here: with rayon's threads each keeping its own malloc arena,
//! the process's memory crept past libFuzzer's 2 GiB limit over millions of inputs (an
//! `oom-` artifact that used under 256 MiB when run alone).
//! Errors are fine; panics, aborts, hangs and huge allocations are bugs.
#![no_main]

use asdf_blosc2::{chunk, Frame};
use libfuzzer_sys::fuzz_target;

const LIMIT: usize = 16 << 20;

static ONE_THREAD: std::sync::Once = std::sync::Once::new();

fuzz_target!(|data: &[u8]| {
    // before rayon's global pool starts (it reads this once)
    ONE_THREAD.call_once(|| std::env::set_var("RAYON_NUM_THREADS", "1"));
    let Some((&pick, rest)) = data.split_first() else {
        return;
    };
    if pick % 2 == 1 {
        if let Ok(out) = chunk::decode(rest, LIMIT) {
            assert!(out.len() <= LIMIT);
        }
        return;
    }
    let Ok(f) = Frame::parse_limited(rest, LIMIT as u64) else {
        return;
    };
    for i in 0..f.nchunks {
        let _ = f.chunk(i);
    }
    let _ = f.vlmeta();
    if let Some(Ok(nd)) = f.b2nd() {
        let _ = f.b2nd_array(&nd);
    }
});
