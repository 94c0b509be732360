#!/usr/bin/env python3
"""Side-by-side: the tree-bound write benchmarks in python asdf 6.0.0, with ratios.

Run from the repository root:
    cargo bench -p asdfrs-core --bench write_tree      # writes target/bench-data/write-tree-rust.json
    .venv-oracle/bin/python asdf-core/benches/compare_write_tree.py [--runs N]

Each workload is timed as in the Rust bench, median of several runs, on both sides to the
same kind of target: to a file with fsync (python asdf does not rename a temporary file;
asdf-rs does, and pays for it), and into memory (a BytesIO; Rust's write_to_vec). Each row
prints both raw times and python time / Rust time.

Validation: python asdf validates every node of the tree it writes; the Rust writer does not
validate the ndarray nodes it builds itself. The `+ validate all` rows add to the Rust time
the validation of every node of the written tree (timed by the Rust bench), so they compare
the same work.
"""
import argparse
import io
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


def write_memory(tree):
    af = asdf.AsdfFile(tree)
    buf = io.BytesIO()
    af.write_to(buf)
    return buf.getbuffer().nbytes


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
        "small_arrays_memory": time_stats(args.runs, lambda: write_memory(arrays)),
        "scalar_tree_memory": time_stats(args.runs, lambda: write_memory(scalars)),
    }
    path.unlink(missing_ok=True)
    print("python: one thread; rust: its default (rayon pool) for block compression, unused "
          "here (no compression)")
    print(f"{'workload':<40}{'python ms':>12}{'rust ms':>10}{'python/rust':>13}")
    for name, (med, lo, hi) in py.items():
        r = rust[name]
        print(f"{name:<40}{med * 1e3:>12.1f}{r * 1e3:>10.2f}{med / r:>12.1f}x"
              f"   (python range {lo * 1e3:.0f}-{hi * 1e3:.0f} ms)")
        workload = name.rsplit("_", 1)[0]
        extra = rust.get(f"{workload}_validate_all")
        if extra is not None:
            r2 = r + extra
            print(f"{name + ' + validate all':<40}{med * 1e3:>12.1f}{r2 * 1e3:>10.2f}"
                  f"{med / r2:>12.1f}x   (rust + {extra * 1e3:.2f} ms validating every node)")


if __name__ == "__main__":
    main()
