"""asdf_rs beside python asdf 6.0.0, in one process and one venv.

    python asdf-python/bench/compare.py [--repeat N] [--gib X]

Workloads (issue 17): open + walk of a 200,000-leaf tree; lazy open of a file of 10,000
blocks; reading a 1 GiB float64 array (copied into memory, and asdf_rs's zero-copy view of
the memory map); writing 10,000 small arrays. Each is timed N times, the two libraries
interleaved; the best time of each is printed with the ratio. The files go to a scratch
folder that is removed at the end. Timings only: nothing here asserts a speed.
"""

from __future__ import annotations

import argparse
import gc
import shutil
import tempfile
import time
from pathlib import Path

import asdf
import numpy as np

import asdf_rs


def walk(x):
    n = 0
    stack = [x]
    while stack:
        x = stack.pop()
        if isinstance(x, dict):
            stack.extend(x.values())
        elif isinstance(x, (list, tuple)):
            stack.extend(x)
        else:
            n += 1
    return n


def best(fn, repeat):
    times = []
    for _ in range(repeat):
        gc.collect()
        t = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t)
    return min(times)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--gib", type=float, default=1.0, help="size of the large array")
    args = ap.parse_args()
    d = Path(tempfile.mkdtemp(prefix="asdf-rs-bench-"))
    rows = []
    try:
        # 200,000 leaves: 50,000 records of 4 scalars
        tree_file = d / "tree.asdf"
        catalog = [{"id": i, "ra": i * 0.001, "dec": -i * 0.002, "name": f"src{i}"}
                   for i in range(50_000)]
        asdf.AsdfFile({"catalog": catalog}).write_to(tree_file)

        def py_tree():
            with asdf.open(tree_file) as f:
                assert walk(f.tree["catalog"]) == 200_000

        def rs_tree():
            with asdf_rs.open(tree_file) as f:
                assert walk(f.tree["catalog"]) == 200_000

        rows.append(("open + walk, 200,000-leaf tree", py_tree, rs_tree))

        # 10,000 blocks, opened lazily (the tree, no array data)
        blocks_file = d / "blocks.asdf"
        small = {f"a{i}": np.full(16, i, dtype=np.float64) for i in range(10_000)}
        asdf.AsdfFile(small).write_to(blocks_file)

        def py_blocks():
            with asdf.open(blocks_file) as f:
                assert len(f.tree) >= 10_000

        def rs_blocks():
            with asdf_rs.open(blocks_file) as f:
                assert len(f.tree) >= 10_000

        rows.append(("lazy open, 10,000 blocks", py_blocks, rs_blocks))

        # a large float64 array
        n = int(args.gib * (1 << 30)) // 8
        big_file = d / "big.asdf"
        asdf_rs.write(big_file, {"d": np.arange(n, dtype=np.float64)})

        def py_big():
            with asdf.open(big_file, memmap=False, lazy_load=False) as f:
                a = f.tree["d"]
                assert a[-1] == n - 1

        def rs_big():
            with asdf_rs.open(big_file, memmap=False) as f:
                a = np.asarray(f.tree["d"])
                assert a[-1] == n - 1

        def rs_view():
            with asdf_rs.open(big_file) as f:
                a = np.asarray(f.tree["d"])
                assert a.shape == (n,)

        label = f"read {args.gib:g} GiB float64 array"
        rows.append((label + " (copy)", py_big, rs_big))
        rows.append((label + " (asdf_rs zero-copy view)", py_big, rs_view))

        # writing 10,000 small arrays
        out_py, out_rs = d / "w_py.asdf", d / "w_rs.asdf"
        rows.append(("write 10,000 small arrays",
                     lambda: asdf.AsdfFile(small).write_to(out_py),
                     lambda: asdf_rs.write(out_rs, small)))

        print(f"python asdf {asdf.__version__}, asdf_rs {asdf_rs.__version__}, numpy "
              f"{np.__version__}; best of {args.repeat}")
        print(f"{'workload':<52} {'python asdf':>12} {'asdf_rs':>10} {'ratio':>8}")
        for label, py_fn, rs_fn in rows:
            tp = tr = float("inf")
            for _ in range(args.repeat):  # interleaved
                tp = min(tp, best(py_fn, 1))
                tr = min(tr, best(rs_fn, 1))
            print(f"{label:<52} {tp:>11.4f}s {tr:>9.4f}s {tp / tr:>7.1f}x")
    finally:
        shutil.rmtree(d, ignore_errors=True)


if __name__ == "__main__":
    main()
