"""Side by side with python-blosc2 4.14.1: decode and encode 1 GiB of float64 in a .b2nd
(zstd level 5 + shuffle, python-blosc2's defaults), on 1 and 2 threads each.

    .venv-oracle/bin/python asdf-blosc2/benches/compare_python.py [--runs N]

Writes the input with python-blosc2 if missing (target/bench-data/blosc2/f8_1g.b2nd), times
python-blosc2 (decode: open + [()] into numpy; encode: blosc2.asarray in memory), then runs
`cargo bench -p asdfrs-blosc2 --bench decode` with RAYON_NUM_THREADS=1 and 2 on the same file
and prints medians and ratios (python / ours: above 1 means we are faster). Timings on a
shared machine are noisy: run on a quiet one.
"""
import argparse
import json
import os
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
    ts = []
    for _ in range(runs):
        t = time.perf_counter()
        f()
        ts.append(time.perf_counter() - t)
    return statistics.median(ts)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--runs", type=int, default=3)
    args = ap.parse_args()
    cp = dict(codec=blosc2.Codec.ZSTD, clevel=5, filters=[blosc2.Filter.SHUFFLE])
    if not PATH.exists():
        PATH.parent.mkdir(parents=True, exist_ok=True)
        blosc2.asarray(data(), urlpath=str(PATH), mode="w", cparams=blosc2.CParams(**cp))
    a = data()
    rows = []
    for threads in (1, 2):
        blosc2.set_nthreads(threads)
        py_dec = timed(lambda: blosc2.open(str(PATH))[()], args.runs)
        py_enc = timed(lambda: blosc2.asarray(a, cparams=blosc2.CParams(nthreads=threads, **cp)),
                       args.runs)
        env = dict(os.environ, RAYON_NUM_THREADS=str(threads), B2_BENCH_FILE=str(PATH),
                   B2_BENCH_RUNS=str(args.runs))
        out = subprocess.run(["cargo", "bench", "-q", "-p", "asdfrs-blosc2", "--bench", "decode"],
                             cwd=ROOT, env=env, check=True, capture_output=True, text=True)
        ours = json.loads(out.stdout.strip().splitlines()[-1])
        rows.append((threads, "decode", py_dec, ours["decode_s"]))
        rows.append((threads, "encode", py_enc, ours["encode_s"]))
    print(f"{'threads':>7} {'workload':>8} {'python-blosc2 s':>16} {'asdf-blosc2 s':>14} {'ratio':>6}")
    for threads, w, py, rs in rows:
        print(f"{threads:>7} {w:>8} {py:>16.3f} {rs:>14.3f} {py / rs:>6.2f}")


if __name__ == "__main__":
    main()
