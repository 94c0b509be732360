#!/usr/bin/env python3
"""Issue 19's table in one command: ours beside python asdf 6.0.0, runs interleaved.

Run from the repository root:
    .venv-oracle/bin/python asdf-core/benches/compare_limits.py [--runs 5] [--mib 256] [--bz-mib 32] [--only TEXT]

It builds the Rust side (`cargo bench -p asdfrs-core --bench limits --no-run`), writes the
inputs with python asdf into target/bench-data/ (a float64 array `arange(n) * 0.5`,
little-endian, as the other benches use: uncompressed, zstd and bzip2 blocks, checksummed),
then, `--runs` times, runs each workload once in a fresh Rust process (`limits --only NAME`)
and once in python, alternating which goes first. It prints medians (and ranges) of wall
time, the ratio python / ours (above 1: ours is faster) and, for the checksum verification
row, ours' peak resident set and coreutils' `md5sum` of the whole file.

| row | ours | python |
|---|---|---|
| verified read | open(verify_checksums) + array::<f64> + sum | asdf.open(validate_checksums=True), np.asarray(af["data"]).sum() |
| MD5 in memory | asdf_core::checksum::Md5::digest | hashlib.md5 (OpenSSL) |
| zstd write | Writer, zstd block, write_to_path (fsync, rename) | set_array_compression zstd, write_to a file, flush, fsync |
| zstd read | verified read of python's zstd file | as the verified read |
| bzip2 write / read | the same with bzp2 on --bz-mib MiB | the same |
| verify checksums | AsdfFile::open + verify_checksums (asdftool validate's work) | md5sum FILE; python: open(validate_checksums) + load |
"""
import argparse
import hashlib
import json
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

import asdf
import numpy as np

from pybench import DIR

ROOT = Path(__file__).resolve().parent.parent.parent


def build():
    out = subprocess.run(
        ["cargo", "bench", "-p", "asdfrs-core", "--bench", "limits", "--no-run",
         "--message-format=json"],
        cwd=ROOT, check=True, stdout=subprocess.PIPE, text=True).stdout
    for line in out.splitlines():
        try:
            msg = json.loads(line)
        except ValueError:
            continue
        if msg.get("reason") == "compiler-artifact" and msg.get("executable") \
                and msg["target"]["name"] == "limits":
            return msg["executable"]
    sys.exit("could not find the limits bench binary")


def rust(exe, name, inp, out=None):
    args = [exe, "--only", name, "--input", str(inp)]
    if out is not None:
        args += ["--out", str(out)]
    line = subprocess.run(args, check=True, stdout=subprocess.PIPE, text=True).stdout.split()
    return float(line[1]), int(line[2])


def fsync_write(af, path):
    with open(path, "wb") as f:
        af.write_to(f)
        f.flush()
        os.fsync(f.fileno())


def clear(path):
    try:
        os.remove(path)
    except FileNotFoundError:
        pass


def py_read(path):
    t0 = time.perf_counter()
    with asdf.open(path, validate_checksums=True, memmap=False) as af:
        np.asarray(af["data"]).sum()
    return time.perf_counter() - t0


def make_inputs(mib, bz_mib):
    DIR.mkdir(parents=True, exist_ok=True)
    a = np.arange(mib * (1 << 20) // 8, dtype="<f8") * 0.5
    b = a[: bz_mib * (1 << 20) // 8].copy()
    paths = {}
    for name, arr, comp in [("raw", a, None), ("zstd", a, "zstd"), ("bz_raw", b, None),
                            ("bzp2", b, "bzp2")]:
        p = DIR / f"limits-{name}-{arr.nbytes >> 20}.asdf"
        paths[name] = p
        if not p.exists():
            af = asdf.AsdfFile({"data": arr})
            if comp:
                af.set_array_compression(arr, comp)
            fsync_write(af, p)
    return a, b, paths


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--mib", type=int, default=256)
    ap.add_argument("--bz-mib", type=int, default=32)
    ap.add_argument("--only", default="",
                    help="run only the rows whose name contains this text (e.g. zstd)")
    opts = ap.parse_args()
    exe = build()
    a, b, paths = make_inputs(opts.mib, opts.bz_mib)
    out_rs, out_py = DIR / "limits-out-rust.asdf", DIR / "limits-out-python.asdf"
    raw = a.tobytes()

    def py_write(arr, comp):
        def run():
            clear(out_py)
            t0 = time.perf_counter()
            af = asdf.AsdfFile({"data": arr})
            af.set_array_compression(arr, comp)
            fsync_write(af, out_py)
            return time.perf_counter() - t0
        return run

    def py_md5():
        t0 = time.perf_counter()
        hashlib.md5(raw).digest()
        return time.perf_counter() - t0

    def md5sum():
        t0 = time.perf_counter()
        subprocess.run(["md5sum", str(paths["raw"])], check=True, stdout=subprocess.DEVNULL)
        return time.perf_counter() - t0

    def ours(name, inp, out=None):
        def run():
            if out is not None:
                clear(out)
            return rust(exe, name, inp, out)
        return run

    mb, bzmb = opts.mib, opts.bz_mib
    rows = [
        (f"verified read + sum, {mb} MiB", ours("verified_read", paths["raw"]),
         {"python asdf": lambda: py_read(paths["raw"])}),
        (f"MD5 of {mb} MiB in memory", ours("md5", paths["raw"]),
         {"python hashlib": py_md5}),
        (f"zstd block write, {mb} MiB", ours("zstd_write", paths["raw"], out_rs),
         {"python asdf": py_write(a, "zstd")}),
        (f"zstd verified read + sum, {mb} MiB", ours("compressed_read", paths["zstd"]),
         {"python asdf": lambda: py_read(paths["zstd"])}),
        (f"bzip2 block write, {bzmb} MiB", ours("bzp2_write", paths["bz_raw"], out_rs),
         {"python asdf": py_write(b, "bzp2")}),
        (f"bzip2 verified read + sum, {bzmb} MiB", ours("compressed_read", paths["bzp2"]),
         {"python asdf": lambda: py_read(paths["bzp2"])}),
        (f"verify checksums (validate), {mb} MiB", ours("verify", paths["raw"]),
         {"md5sum of the file": md5sum,
          "python asdf open+load": lambda: py_read(paths["raw"])}),
    ]
    rows = [row for row in rows if opts.only in row[0]]
    results = {name: {"ours": [], "peak": []} for name, _, _ in rows}
    for name, _, others in rows:
        for o in others:
            results[name][o] = []
    for r in range(opts.runs):
        for name, ours_fn, others in rows:
            first_ours = r % 2 == 0
            if first_ours:
                t, peak = ours_fn()
            for o, fn in others.items():
                results[name][o].append(fn())
            if not first_ours:
                t, peak = ours_fn()
            results[name]["ours"].append(t)
            results[name]["peak"].append(peak)
        print(f"round {r + 1}/{opts.runs} done", file=sys.stderr)
    clear(out_rs)
    clear(out_py)

    def fmt(ts):
        return f"{statistics.median(ts):6.3f} s [{min(ts):.3f}-{max(ts):.3f}]"

    print(f"load average at the end: {os.getloadavg()}; {opts.runs} interleaved runs, medians [range]")
    print(f"| workload | ours | other | other / ours |")
    print("|---|---|---|---|")
    for name, _, others in rows:
        res = results[name]
        ours_med = statistics.median(res["ours"])
        peak = max(res["peak"]) / (1 << 20)
        for o in others:
            ratio = statistics.median(res[o]) / ours_med
            extra = f" (peak {peak:.0f} MiB)" if name.startswith("verify checksums") else ""
            print(f"| {name} | {fmt(res['ours'])}{extra} | {o}: {fmt(res[o])} | {ratio:.2f} |")


if __name__ == "__main__":
    main()
