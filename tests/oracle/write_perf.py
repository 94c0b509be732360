#!/usr/bin/env python3
"""The write workloads of asdf-core/tests/write_perf.rs in python asdf, for side-by-side ratios.

Usage: python tests/oracle/write_perf.py [--dir DIR]

The large-array writes are in asdf-core/benches/compare_write.py (beside the Rust bench).
"""

from __future__ import annotations

import argparse
import os
import time

import asdf
import numpy as np


def timed_write(af: asdf.AsdfFile, path: str, **kw) -> float:
    t = time.perf_counter()
    with open(path, "wb") as f:
        af.write_to(f, **kw)
        f.flush()
        os.fsync(f.fileno())
    return time.perf_counter() - t


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--dir", default=os.environ.get("ASDF_PERF_DIR", "/tmp"))
    args = ap.parse_args()
    arrays = {f"a{i}": np.arange(i * 10, i * 10 + 10, dtype="f8") for i in range(10_000)}
    path = os.path.join(args.dir, "asdf-py-perf-small.asdf")
    t = time.perf_counter()
    af = asdf.AsdfFile(arrays)
    timed_write(af, path)
    print(f"10000 small arrays: {time.perf_counter() - t:.3f} s")
    os.remove(path)

    tree = {f"k{i}": i * 0.25 for i in range(200_000)}
    path = os.path.join(args.dir, "asdf-py-perf-tree.asdf")
    t = time.perf_counter()
    af = asdf.AsdfFile(tree)
    timed_write(af, path)
    print(f"200000 scalar leaves: {time.perf_counter() - t:.3f} s")
    os.remove(path)


if __name__ == "__main__":
    main()
