"""The python side of asdf-store's side-by-side: python asdf 6.0.0 through fsspec's HTTP
filesystem (fsspec + aiohttp, not in the pinned oracle venv: install them beside it) reading
the same URL that `cargo run --release -p asdfrs-store --example read_url -- URL` reads.

    python compare_fsspec.py URL [--tree-only]
"""

import sys
import time

import asdf
import fsspec
import numpy as np


def count(node):
    if isinstance(node, dict):
        return sum(count(v) for v in node.values())
    if isinstance(node, (list, tuple)):
        return sum(count(v) for v in node)
    return 1


def main():
    url = sys.argv[1]
    tree_only = "--tree-only" in sys.argv[2:]
    t = time.perf_counter()
    with fsspec.open(url, "rb") as f:
        with asdf.open(f, lazy_load=True, memmap=False) as af:
            leaves = count(af.tree)
            print(f"open + walk ({leaves} leaves): {time.perf_counter() - t:.3f} s")
            if not tree_only:
                t = time.perf_counter()
                for key, value in af.tree.items():
                    if hasattr(value, "shape") and hasattr(value, "dtype"):
                        np.asarray(value)
                print(f"arrays: {time.perf_counter() - t:.3f} s")


if __name__ == "__main__":
    main()
