#!/usr/bin/env python3
"""Side-by-side: the read benchmarks in python asdf 6.0.0 on the same files, with ratios.

Run from the repository root:
    cargo bench -p asdfrs-core --bench read            # makes target/bench-data/ and rust.json
    .venv-oracle/bin/python asdf-core/benches/compare_python.py [--quick]
    .venv-oracle/bin/python asdf-core/benches/compare_python.py --big-rounds 5

Each workload is timed as the median of several runs with a warm page cache, like the Rust
harness. The ratio column is python time / Rust time (higher is better for Rust).

`--big-rounds N` is the head-to-head for the 1 GiB owned read on a shared, noisy machine: N
rounds, each running the Rust bench (`--only big_read_owned`) and numpy's `fromfile` back to
back (alternating which goes first), so both see the same load; it prints each round and the
median and range of the per-round ratios.
"""
import argparse
import json
import statistics
import subprocess
import time
import warnings

import asdf
import numpy as np

from pybench import DIR, time_stats


def median_time(runs, fn):
    return time_stats(runs, fn)[0]


def fresh_stats(runs, fn):
    """(median, fastest, slowest) of `runs` timed calls, each after a 1 s pause (fresh memory)."""
    times = []
    for _ in range(runs):
        time.sleep(1)
        t0 = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t0)
    return statistics.median(times), min(times), max(times)


def numpy_fromfile(path):
    """A function reading `path`'s single float64 block (which runs to the end) with numpy."""
    with asdf.open(path, lazy_load=True, memmap=False) as af:
        n = af["data"].shape[0]
    offset = path.stat().st_size - n * 8
    return lambda: np.fromfile(path, dtype="<f8", offset=offset).size


def big_rounds(rounds, runs, bench_bin=None):
    """Head-to-head rounds of the Rust owned read and numpy fromfile (see the module doc)."""
    root = DIR.parent.parent
    fromfile = numpy_fromfile(DIR / "big.asdf")
    ratios, ours, nps, fss = [], [], [], []

    def rust():
        cmd = [bench_bin] if bench_bin else ["cargo", "bench", "-q", "-p", "asdfrs-core", "--bench", "read", "--"]
        subprocess.run(cmd + ["--only", "big_read_owned"], cwd=root, check=True, stdout=subprocess.DEVNULL)
        r = json.loads((DIR / "rust.json").read_text())
        return r["big_read_owned"], r["big_fs_read"]

    for i in range(rounds):
        if i % 2 == 0:
            (r, fs), (n, lo, hi) = rust(), time_stats(runs, fromfile)
        else:
            (n, lo, hi), (r, fs) = time_stats(runs, fromfile), rust()
        ratios.append(n / r)
        ours.append(r)
        nps.append(n)
        fss.append(fs)
        print(f"round {i}: rust owned {r*1e3:7.1f} ms  std::fs::read {fs*1e3:7.1f} ms  "
              f"numpy fromfile {n*1e3:7.1f} ms (range {lo*1e3:.0f}-{hi*1e3:.0f})  numpy/rust {n/r:.2f}")

    def summary(name, xs, scale=1e3, unit=" ms"):
        print(f"{name:<22} median {statistics.median(xs)*scale:8.2f}{unit}  "
              f"range {min(xs)*scale:.2f}-{max(xs)*scale:.2f}{unit}")

    summary("rust owned", ours)
    summary("std::fs::read", fss)
    summary("numpy fromfile", nps)
    summary("numpy/rust", ratios, 1, "")
    summary("rust/fs::read", [r / f for r, f in zip(ours, fss)], 1, "")


def count_leaves(node):
    if isinstance(node, dict):
        return sum(count_leaves(v) for v in node.values())
    if isinstance(node, (list, tuple)):
        return sum(count_leaves(v) for v in node)
    return 1


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--big-rounds", type=int, metavar="N", help="head-to-head big read rounds only")
    ap.add_argument("--bench-bin", help="with --big-rounds: a built read bench binary instead of cargo")
    args = ap.parse_args()
    runs = 3 if args.quick else 5
    warnings.simplefilter("ignore")
    if args.big_rounds:
        big_rounds(args.big_rounds, 7, args.bench_bin)
        return
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
            return np.asarray(af["data"]).size

    py["big_read_owned"] = median_time(runs, big_read)
    fromfile = time_stats(runs, numpy_fromfile(big))
    py["big_numpy_fromfile"] = fromfile[0]
    fresh = fresh_stats(runs, numpy_fromfile(big))
    py["big_numpy_fromfile_fresh"] = fresh[0]

    def mmap_open():
        with asdf.open(big, memmap=True) as af:
            return af["data"].shape

    py["big_mmap_open_view"] = median_time(runs, mmap_open)

    for name, file in [("zlib_decode", "zlib.asdf"), ("lz4_decode", "lz4.asdf")]:
        def dec(file=file):
            with asdf.open(DIR / file, lazy_load=True, memmap=False) as af:
                return np.asarray(af["data"]).size
        py[name] = median_time(runs, dec)

    def checksums():
        with asdf.open(DIR / "checksums.asdf", lazy_load=False, memmap=False, validate_checksums=True) as af:
            return sum(np.asarray(a).size for a in af.tree["arrays"])

    py["checksums_verify"] = median_time(runs, checksums)
    py["checksums_verify_1thread"] = py["checksums_verify"]

    print(f"{'workload':<24} {'python ms':>12} {'rust ms':>12} {'python/rust':>12}")
    for k, v in py.items():
        r = rust.get(k)
        if k == "big_numpy_fromfile" and rust.get("big_read_owned") is not None:
            r = rust.get("big_read_owned")
            label = "numpy fromfile vs rust owned"
            print(f"{label:<24} {v*1e3:>12.2f} {r*1e3:>12.2f} {v/r:>12.2f}"
                  f"  (numpy range {fromfile[1]*1e3:.0f}-{fromfile[2]*1e3:.0f} ms)")
            continue
        if k in ("big_numpy_fromfile", "big_numpy_fromfile_fresh") and r is None:
            r = rust.get("big_read_fresh" if k.endswith("fresh") else "big_read_owned")
            if r is None:
                print(f"{k:<24} {v*1e3:>12.2f} {'-':>12}")
                continue
        if k == "big_numpy_fromfile_fresh":
            r = rust.get("big_read_fresh")
            if r is not None:
                print(f"{'numpy vs rust, fresh':<24} {v*1e3:>12.2f} {r*1e3:>12.2f} {v/r:>12.2f}"
                      f"  (numpy range {fresh[1]*1e3:.0f}-{fresh[2]*1e3:.0f} ms)")
                continue
        if r is None:
            print(f"{k:<24} {v*1e3:>12.2f} {'-':>12}")
            continue
        note = {
            "checksums_verify": "  (python one thread, rust all cores)",
            "checksums_verify_1thread": "  (both one thread)",
        }.get(k, "")
        print(f"{k:<24} {v*1e3:>12.2f} {r*1e3:>12.2f} {v/r:>12.1f}x{note}")
    if "big_fs_read" in rust:
        print(f"rust owned read / std::fs::read = {rust['big_read_owned']/rust['big_fs_read']:.2f}")


if __name__ == "__main__":
    main()
