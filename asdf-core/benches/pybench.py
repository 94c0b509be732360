"""What the python side-by-side bench scripts share: the pinned asdf version, the bench data
directory the Rust benches fill, and the timing helper (median and range after a warm-up,
like the Rust harness's `time_stats`)."""
import statistics
import sys
import time
from pathlib import Path

import asdf

if asdf.__version__ != "6.0.0":
    sys.exit(f"pinned to asdf 6.0.0, found {asdf.__version__}")

DIR = Path(__file__).resolve().parent.parent.parent / "target" / "bench-data"


def time_stats(runs, fn):
    """(median, fastest, slowest) seconds of `runs` timed calls after one warm-up."""
    fn()
    times = []
    for _ in range(runs):
        t0 = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t0)
    return statistics.median(times), min(times), max(times)
