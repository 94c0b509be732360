#!/usr/bin/env python3
"""Side-by-side: the tree-bound write benchmarks in python asdf 6.0.0, with ratios.

Run from the repository root:
    cargo bench -p asdf-core --bench write_tree      # writes target/bench-data/write-tree-rust.json
    .venv-oracle/bin/python asdf-core/benches/compare_write_tree.py [--runs N]

Each workload is timed as in the Rust bench: median of several runs, written to a file with
fsync (python asdf does not rename a temporary file; asdf-rs does, and pays for it). The
ratio column is python time / Rust time.
"""
import argparse
import json
import os
import time
import warnings

import asdf
import numpy as np

from pybench import DIR, time_stats


def write(tree, path):
    af = asdf.AsdfFile(tree)
    with open(path, "wb") as f:
        af.write_to(f)
        f.flush()
        os.fsync(f.fileno())


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--runs", type=int, default=5)
    args = ap.parse_args()
    warnings.simplefilter("ignore")
    rust = json.loads((DIR / "write-tree-rust.json").read_text())
    path = DIR / "write-tree-bench-py.asdf"
    arrays = {f"a{i}": np.arange(i * 10, i * 10 + 10, dtype="f8") for i in range(10_000)}
    scalars = {f"k{i}": i * 0.25 for i in range(200_000)}
    py = {
        "small_arrays_file": time_stats(args.runs, lambda: write(arrays, path)),
        "scalar_tree_file": time_stats(args.runs, lambda: write(scalars, path)),
    }
    path.unlink(missing_ok=True)
    print(f"{'workload':<24}{'python ms':>12}{'rust ms':>10}{'python/rust':>13}")
    for name, (med, lo, hi) in py.items():
        r = rust[name]
        print(f"{name:<24}{med * 1e3:>12.1f}{r * 1e3:>10.2f}{med / r:>12.1f}x"
              f"   (python range {lo * 1e3:.0f}-{hi * 1e3:.0f} ms)")
    for name in ("small_arrays_memory", "scalar_tree_memory"):
        file_name = name.replace("memory", "file")
        print(f"{name:<24}{'':>12}{rust[name] * 1e3:>10.2f}{py[file_name][0] / rust[name]:>12.1f}x"
              "   (rust without file and fsync)")


if __name__ == "__main__":
    main()
