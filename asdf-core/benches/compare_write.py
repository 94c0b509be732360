#!/usr/bin/env python3
"""Side-by-side: the large-array write benchmarks in python asdf 6.0.0, with ratios.

Run from the repository root:
    cargo bench -p asdfrs-core --bench write            # writes target/bench-data/rust_write.json
    .venv-oracle/bin/python asdf-core/benches/compare_write.py [--quick] [--no-zlib] [--runs N]

The array is the benchmark's: `arange(n) * 0.5` as little-endian float64, 1 GiB (128 MiB
with --quick). Python writes with `AsdfFile.write_to` into an open file, then flushes and
fsyncs it (the Rust side also writes a temporary file and renames it). Each workload is
timed several times on a fresh file; median, minimum and maximum are printed. The ratio
column is python time / Rust time (higher is better for Rust); every ratio compares the same
kind of work (file writes with file writes, MD5 in memory with MD5 in memory); the last line
shows the Rust write beside the MD5 of the same bytes, the floor of a checksummed write.

On a shared machine, pass --rust-bench PATH (the bench binary cargo printed) to pair runs:
each Rust run (`--only NAME --runs 1`) is followed by a python run of the same workload,
and the ratio is the median of the pairs' ratios.
"""
import argparse
import hashlib
import json
import os
import statistics
import subprocess
import sys
import time

import asdf
import numpy as np

from pybench import DIR


def clear(path):
    """Removes path and syncs its directory, as the Rust bench does before each run."""
    try:
        os.remove(path)
    except FileNotFoundError:
        return
    fd = os.open(path.parent, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def times(runs, fn, path=None):
    out = []
    for _ in range(runs):
        if path is not None:
            clear(path)
        t0 = time.perf_counter()
        fn()
        out.append(time.perf_counter() - t0)
    return sorted(out)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--no-zlib", action="store_true")
    ap.add_argument("--runs", type=int)
    ap.add_argument(
        "--rust-bench",
        metavar="PATH",
        help="the compiled write bench (target/release/deps/write-*): each Rust run is then "
        "paired with a python run right after it, so both see the same load",
    )
    args = ap.parse_args()
    runs = args.runs or (3 if args.quick else 5)
    nbytes = (128 << 20) if args.quick else (1 << 30)
    a = np.arange(nbytes // 8, dtype="<f8") * 0.5
    raw = a.tobytes()
    path = DIR / "write-bench-py.asdf"
    DIR.mkdir(parents=True, exist_ok=True)

    def raw_write():
        with open(path, "wb") as f:
            f.write(raw)
            f.flush()
            os.fsync(f.fileno())

    def writer(codec):
        def write():
            af = asdf.AsdfFile({"data": a})
            if codec:
                af.set_array_compression(a, codec)
            with open(path, "wb") as f:
                af.write_to(f)
                f.flush()
                os.fsync(f.fileno())

        return write

    workloads = {
        "md5_alone": lambda: hashlib.md5(raw).digest(),
        "raw_write_fsync": raw_write,
        "big_none": writer(None),
        "big_lz4": writer("lz4"),
    }
    if not args.no_zlib:
        workloads["big_zlib"] = writer("zlib")

    py, rust, ratios = {}, {}, {}
    for name, fn in workloads.items():
        n = min(runs, 3) if name == "big_zlib" else runs
        if args.rust_bench:
            rt, pt = [], []
            for _ in range(n):
                cmd = [args.rust_bench, "--only", name, "--runs", "1"] + (["--quick"] if args.quick else [])
                subprocess.run(cmd, check=True, stdout=subprocess.DEVNULL)
                rt.append(json.loads((DIR / "rust_write.json").read_text())[name])
                pt += times(1, fn, path)
            rust[name] = sorted(rt)
            ratios[name] = statistics.median(p / r for p, r in zip(pt, rt))
            py[name] = sorted(pt)
        else:
            py[name] = times(n, fn, path)
    clear(path)
    if not args.rust_bench:
        data = json.loads((DIR / "rust_write.json").read_text())
        if data.get("bytes") != nbytes:
            sys.exit(f"rust_write.json is for {data.get('bytes')} bytes, not {nbytes}: run the bench with the same --quick")
        rust = {k: [v] for k, v in data.items() if k != "bytes"}

    def fmt(t):
        return f"{statistics.median(t):7.3f} [{t[0]:.3f}-{t[-1]:.3f}]"

    print(f"{'workload':<16} {'python s (median [range])':>28} {'rust s':>26} {'python/rust':>12}")
    for k, t in py.items():
        r = rust.get(k)
        if r is None:
            print(f"{k:<16} {fmt(t):>28} {'-':>26}")
            continue
        ratio = ratios.get(k, statistics.median(t) / statistics.median(r))
        print(f"{k:<16} {fmt(t):>28} {fmt(r):>26} {ratio:>11.2f}x")
    # The MD5 of the same bytes in memory is the floor of a checksummed write; it is shown
    # beside the file write, not divided into it (one writes a file, the other does not).
    med = {k: statistics.median(v) for k, v in rust.items()}
    if "big_none" in med and "md5_alone" in med and "md5_alone" in py:
        print(f"rust big_none (file) {med['big_none']:.3f} s; MD5 of the same bytes in memory: "
              f"rust {med['md5_alone']:.3f} s, python {statistics.median(py['md5_alone']):.3f} s")
    if args.rust_bench:
        print("(ratios: median of the per-pair ratios)")


if __name__ == "__main__":
    main()
