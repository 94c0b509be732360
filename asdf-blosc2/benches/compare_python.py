"""Side by side with python-blosc2 4.14.1: decode and encode 1 GiB of float64 in a .b2nd
(zstd level 5 + shuffle, python-blosc2's defaults), on 1 and 2 threads each.

    .venv-oracle/bin/python asdf-blosc2/benches/compare_python.py [--runs N]

Writes the input with python-blosc2 if missing (target/bench-data/blosc2/f8_1g.b2nd), times
python-blosc2 (decode: open + [()] into numpy; encode: blosc2.asarray in memory), then runs
`cargo bench -p asdfrs-blosc2 --bench decode` with RAYON_NUM_THREADS=1 and 2 on the same file
and prints medians and ratios (python / ours: above 1 means we are faster), for decoding also
the CPU time (user and system) of both. Timings on a shared machine are noisy: run on a quiet
one. `--decode-only` skips the encode rows.
"""
import argparse
import json
import os
import resource
import statistics
import subprocess
import time
from pathlib import Path

import blosc2
import numpy as np

ROOT = Path(__file__).resolve().parents[2]
PATH = ROOT / "target" / "bench-data" / "blosc2" / "f8_1g.b2nd"


def data():
    return (np.sin(np.arange(1 << 27) / 1e4) * 1000).round(2)


def timed(f, runs):
    return timed_cpu(f, runs)[0]


def timed_cpu(f, runs):
    """Medians of wall time, user and system CPU time (the process's) of `runs` calls."""
    ts, us, ss = [], [], []
    for _ in range(runs):
        r = resource.getrusage(resource.RUSAGE_SELF)
        t = time.perf_counter()
        f()
        ts.append(time.perf_counter() - t)
        r2 = resource.getrusage(resource.RUSAGE_SELF)
        us.append(r2.ru_utime - r.ru_utime)
        ss.append(r2.ru_stime - r.ru_stime)
    return statistics.median(ts), statistics.median(us), statistics.median(ss)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--decode-only", action="store_true", help="skip the (slow) encode rows")
    args = ap.parse_args()
    cp = dict(codec=blosc2.Codec.ZSTD, clevel=5, filters=[blosc2.Filter.SHUFFLE])
    if not PATH.exists():
        PATH.parent.mkdir(parents=True, exist_ok=True)
        blosc2.asarray(data(), urlpath=str(PATH), mode="w", cparams=blosc2.CParams(**cp))
    a = data()
    rows = []
    for threads in (1, 2):
        blosc2.set_nthreads(threads)
        py_dec, py_user, py_sys = timed_cpu(lambda: blosc2.open(str(PATH))[()], args.runs)
        py_enc = float("nan") if args.decode_only else timed(
            lambda: blosc2.asarray(a, cparams=blosc2.CParams(nthreads=threads, **cp)), args.runs)
        env = dict(os.environ, RAYON_NUM_THREADS=str(threads), B2_BENCH_FILE=str(PATH),
                   B2_BENCH_RUNS=str(args.runs))
        if args.decode_only:
            env["B2_BENCH_DECODE_ONLY"] = "1"
        out = subprocess.run(["cargo", "bench", "-q", "-p", "asdfrs-blosc2", "--bench", "decode"],
                             cwd=ROOT, env=env, check=True, capture_output=True, text=True)
        ours = json.loads(out.stdout.strip().splitlines()[-1])
        rows.append((threads, "decode", py_dec, ours["decode_s"]))
        rows.append((threads, "dec user", py_user, ours["decode_user_s"]))
        rows.append((threads, "dec sys", py_sys, ours["decode_sys_s"]))
        rows.append((threads, "encode", py_enc, ours["encode_s"]))
    print(f"{'threads':>7} {'workload':>8} {'python-blosc2 s':>16} {'asdf-blosc2 s':>14} {'ratio':>6}")
    for threads, w, py, rs in rows:
        print(f"{threads:>7} {w:>8} {py:>16.3f} {rs:>14.3f} {py / rs:>6.2f}")


if __name__ == "__main__":
    main()
