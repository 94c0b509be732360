#!/usr/bin/env python3
"""Side-by-side: python asdf 6.0.0 validating the tree of the validation benchmark.

Run from the repository root:
    cargo bench -p asdfrs-core --bench validate        # makes target/bench-data/validate10k.asdf
    .venv-oracle/bin/python asdf-core/benches/compare_validate.py [--quick]

Python side: the tree is loaded once as python asdf loads a file's tree (tagged, not converted,
no block loaded: `asdf.yamlutil.load_tree`), then `asdf.schema.validate(tree, ctx, reading=True)`
with `ctx = asdf.AsdfFile(version="1.6.0")` is timed (what `asdf.open` runs on read). The
median of several runs after one warm-up call is compared with the Rust median. Ratio =
python time / Rust time (higher is better for Rust).
"""
import argparse
import io
import json
import statistics
import time
import warnings

import asdf
import asdf.schema
import asdf.yamlutil

from pybench import DIR


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--quick", action="store_true")
    args = ap.parse_args()
    runs = 3 if args.quick else 7
    warnings.simplefilter("ignore")
    rust = json.loads((DIR / "validate-rust.json").read_text())
    raw = (DIR / "validate10k.asdf").read_bytes()
    # The YAML document: from the %YAML line to the end marker.
    start = raw.index(b"%YAML")
    end = raw.index(b"\n...\n", start) + 5
    tree = asdf.yamlutil.load_tree(io.BytesIO(raw[start:end]))
    ctx = asdf.AsdfFile(version="1.6.0")

    def run():
        asdf.schema.validate(tree, ctx=ctx, reading=True)

    t0 = time.perf_counter()
    run()
    first = time.perf_counter() - t0
    times = []
    for _ in range(runs):
        t0 = time.perf_counter()
        run()
        times.append(time.perf_counter() - t0)
    py = statistics.median(times)
    r = rust["validate_10k_arrays"]
    print(f"{'workload':<34} {'python ms':>10} {'rust ms':>10} {'ratio':>8}")
    print(f"{'validate_10k_arrays':<34} {py * 1e3:>10.1f} {r * 1e3:>10.2f} {py / r:>7.1f}x")
    rf = rust["validate_10k_arrays_first"]
    print(f"{'validate_10k_arrays (first call)':<34} {first * 1e3:>10.1f} {rf * 1e3:>10.2f} {first / rf:>7.1f}x")
    (DIR / "validate-python.json").write_text(
        json.dumps({"validate_10k_arrays": py, "validate_10k_arrays_first": first}, indent=2) + "\n"
    )


if __name__ == "__main__":
    main()
