#!/usr/bin/env python3
"""Side-by-side: the read benchmarks in python asdf 6.0.0 on the same files, with ratios.

Run from the repository root:
    cargo bench -p asdf-core --bench read            # makes target/bench-data/ and rust.json
    .venv-oracle/bin/python asdf-core/benches/compare_python.py [--quick]

Each workload is timed as the median of several runs with a warm page cache, like the Rust
harness. The ratio column is python time / Rust time (higher is better for Rust).
"""
import argparse
import json
import statistics
import sys
import time
import warnings
from pathlib import Path

import asdf
import numpy as np

if asdf.__version__ != "6.0.0":
    sys.exit(f"pinned to asdf 6.0.0, found {asdf.__version__}")

DIR = Path(__file__).resolve().parent.parent.parent / "target" / "bench-data"


def median_time(runs, fn):
    fn()
    times = []
    for _ in range(runs):
        t0 = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t0)
    return statistics.median(times)


def count_leaves(node):
    if isinstance(node, dict):
        return sum(count_leaves(v) for v in node.values())
    if isinstance(node, (list, tuple)):
        return sum(count_leaves(v) for v in node)
    return 1


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--quick", action="store_true")
    args = ap.parse_args()
    runs = 3 if args.quick else 5
    warnings.simplefilter("ignore")
    rust = json.loads((DIR / "rust.json").read_text())
    py = {}

    def tree():
        with asdf.open(DIR / "tree200k.asdf", lazy_load=True, memmap=False) as af:
            return count_leaves(af.tree)

    py["tree_open_walk"] = median_time(runs, tree)

    def blocks():
        with asdf.open(DIR / "blocks10k.asdf", lazy_load=True, memmap=False) as af:
            return len(af.tree["arrays"])

    py["blocks10k_lazy_open"] = median_time(runs, blocks)

    big = DIR / "big.asdf"

    def big_read():
        with asdf.open(big, lazy_load=True, memmap=False) as af:
            return np.array(af["data"]).size

    py["big_read_owned"] = median_time(runs, big_read)
    with asdf.open(big, lazy_load=True, memmap=False) as af:
        n = af["data"].shape[0]
    size = big.stat().st_size
    offset = size - n * 8  # the single block's data runs to the end (no index in big.asdf)
    py["big_numpy_fromfile"] = median_time(runs, lambda: np.fromfile(big, dtype="<f8", offset=offset).size)

    def mmap_open():
        with asdf.open(big, memmap=True) as af:
            return af["data"].shape

    py["big_mmap_open_view"] = median_time(runs, mmap_open)

    for name, file in [("zlib_decode", "zlib.asdf"), ("lz4_decode", "lz4.asdf")]:
        def dec(file=file):
            with asdf.open(DIR / file, lazy_load=True, memmap=False) as af:
                return np.array(af["data"]).size
        py[name] = median_time(runs, dec)

    def checksums():
        with asdf.open(DIR / "checksums.asdf", lazy_load=False, memmap=False, validate_checksums=True) as af:
            return sum(np.asarray(a).size for a in af.tree["arrays"])

    py["checksums_verify"] = median_time(runs, checksums)

    print(f"{'workload':<24} {'python ms':>12} {'rust ms':>12} {'python/rust':>12}")
    for k, v in py.items():
        r = rust.get(k)
        if k == "big_numpy_fromfile":
            r = rust.get("big_read_owned")
            label = "numpy fromfile vs rust owned"
            print(f"{label:<24} {v*1e3:>12.2f} {r*1e3:>12.2f} {v/r:>12.2f}")
            continue
        if r is None:
            print(f"{k:<24} {v*1e3:>12.2f} {'-':>12}")
            continue
        print(f"{k:<24} {v*1e3:>12.2f} {r*1e3:>12.2f} {v/r:>12.1f}x")
    if "big_fs_read" in rust:
        print(f"rust owned read / std::fs::read = {rust['big_read_owned']/rust['big_fs_read']:.2f}")


if __name__ == "__main__":
    main()
