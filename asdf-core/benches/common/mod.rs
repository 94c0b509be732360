//! Timing shared by the benches (each bench is its own crate and includes this module).

use std::time::Instant;

/// Median, fastest and slowest wall time (seconds) of `runs` calls after a warm-up call.
pub fn time_stats(runs: usize, mut f: impl FnMut()) -> [f64; 3] {
    f(); // warm-up
    let mut t: Vec<f64> = (0..runs.max(1))
        .map(|_| {
            let start = Instant::now();
            f();
            start.elapsed().as_secs_f64()
        })
        .collect();
    t.sort_by(f64::total_cmp);
    [t[t.len() / 2], t[0], t[t.len() - 1]]
}
