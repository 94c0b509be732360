"""Side by side with h5py 3.16.0 + python asdf 6.0.0: converting HDF5 to ASDF.

    .venv-oracle/bin/python asdf-hdf5/benches/compare_python.py [--runs N]

Two inputs, written with h5py if missing (target/bench-data/hdf5/):
- f4_gzip_1g.h5: one 1 GiB float32 dataset (65536 x 4096), chunks of 64 x 4096 (1 MiB),
  gzip level 4, as h5py writes by default with compression="gzip";
- many.h5: 10,000 datasets of four int32 in 100 groups (the test fixture's file).

The python conversion is what a user writes today: walk the file with h5py, build a dict of
numpy arrays, `asdf.AsdfFile(tree).write_to(out, all_array_compression="zlib")` (every block
zlib, as `asdftool convert` makes deflated datasets). Then `cargo bench -p asdfrs-hdf5 --bench
convert` times `asdf_hdf5::to_asdf` on the same files (same output: zlib blocks), and the
medians and ratios are printed (python / ours: above 1 means we are faster). Timings on a
shared machine are noisy: run on a quiet one.
"""
import argparse
import gzip
import json
import shutil
import statistics
import subprocess
import time
from pathlib import Path

import asdf
import h5py
import numpy as np

ROOT = Path(__file__).resolve().parents[2]
DIR = ROOT / "target" / "bench-data" / "hdf5"
BIG = DIR / "f4_gzip_1g.h5"
MANY = DIR / "many.h5"


def make_inputs():
    DIR.mkdir(parents=True, exist_ok=True)
    if not BIG.exists():
        with h5py.File(BIG, "w") as f:
            d = f.create_dataset("data", shape=(65536, 4096), dtype="<f4", chunks=(64, 4096),
                                 compression="gzip", compression_opts=4)
            x = np.arange(4096, dtype=np.float32)
            for r in range(0, 65536, 1024):
                rows = np.arange(r, r + 1024, dtype=np.float32)[:, None]
                d[r:r + 1024] = np.round(np.sin(rows / 300) * np.cos(x / 500) * 1000, 1)
    if not MANY.exists():
        src = ROOT / "asdf-hdf5" / "tests" / "data" / "many.h5.gz"
        with gzip.open(src, "rb") as s, open(MANY, "wb") as d:
            shutil.copyfileobj(s, d)


def python_convert(src, out):
    def walk(g):
        tree = {}
        for k, v in g.items():
            tree[k] = walk(v) if isinstance(v, h5py.Group) else v[()]
        return tree

    with h5py.File(src, "r") as f:
        tree = walk(f)
    asdf.AsdfFile(tree).write_to(out, all_array_compression="zlib")


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
    make_inputs()
    out = DIR / "python-out.asdf"
    py = {}
    for name, src in (("f4_gzip_1g", BIG), ("many", MANY)):
        runs = 1 if name == "f4_gzip_1g" else args.runs
        py[name] = timed(lambda: python_convert(src, out), runs)
        print(f"python {name}: {py[name]:.3f} s", flush=True)
    out.unlink(missing_ok=True)
    res = subprocess.run(["cargo", "bench", "-q", "-p", "asdfrs-hdf5", "--bench", "convert"],
                         cwd=ROOT, check=True, capture_output=True, text=True)
    ours = json.loads(res.stdout.strip().splitlines()[-1])
    print(f"{'workload':<12} {'python':>9} {'asdf-rs':>9} {'ratio':>7}")
    for name in py:
        print(f"{name:<12} {py[name]:>8.3f}s {ours[name]:>8.3f}s {py[name] / ours[name]:>6.1f}x")


if __name__ == "__main__":
    main()
