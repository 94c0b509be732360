"""asdf_rs with python asdf's converters against python asdf 6.0.0: opening a file and reaching
its converted tree (issue 32 item 4).

    python asdf-python/bench/converters.py make DIR [--shape 2048] [--blocks 10000]
    python asdf-python/bench/converters.py run DIR [--runs 5] [--whole-runs 5]
    python asdf-python/bench/converters.py profile DIR

``make`` writes the two files into DIR: ``roman_image.asdf``, a Roman WFI image product made
by roman_datamodels' fake-data maker (``ImageModel.create_fake_data``, an NxN image, saved by
``DataModel.save``: lz4 blocks, its wcs, Times and nested meta nodes), and
``blocks_10000.asdf``, python asdf's file of 10,000 astropy Quantities, each with its own
block (10,000 blocks, 10,000 ``unit/quantity`` and ``unit/unit`` nodes).

``run`` opens each file and walks the whole tree (every mapping and sequence, so every
tagged node is converted; arrays are not read), with validation on and off:

- python asdf 6.0.0: ``asdf.open(path, lazy_tree=L)`` for L in (False, True), validation
  by ``asdf.config_context().validate_on_read``;
- asdf_rs: ``asdf_rs.open(path, converters=True, validate=V, lazy_tree=L)`` (case 5 is
  ``lazy_tree=True``).

Three figures each: the median of ``--runs`` runs in one process (imports done, the first run
counted with the others); the median wall time of ``--whole-runs`` whole processes
(interpreter start, imports, open, walk, close: what a script pays); and, of those processes,
the median first open (with the walk), timed after the imports and after python asdf has
loaded the installed extensions (``asdf.get_config().extensions``, which python asdf's own
first open does and asdf_rs's converters need, so both sides pay it). ``profile`` runs asdf_rs
once per file under cProfile, validation on, and sums the time by where it is spent (the
native open, the converters' packages, python asdf's validation, the rest).

Timings only: nothing here asserts a speed.
"""

from __future__ import annotations

import argparse
import cProfile
import gc
import os
import pstats
import statistics
import subprocess
import sys
import time
from collections.abc import Mapping, MutableSequence
from pathlib import Path

FILES = ("roman_image.asdf", "blocks_10000.asdf")


def make(d: Path, shape: int, blocks: int) -> None:
    import warnings

    import asdf
    import astropy.units as u
    import numpy as np
    import roman_datamodels.datamodels as rdm

    d.mkdir(parents=True, exist_ok=True)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        model = rdm.ImageModel.create_fake_data(shape=(shape, shape))
        model.meta.filename = "roman_image.asdf"
        rng = np.random.default_rng(1)
        model.data = rng.normal(size=(shape, shape)).astype(np.float32)
        model.save(d / "roman_image.asdf")
    units = [u.m, u.s, u.Jy, u.km / u.s, u.erg / u.cm**2]
    tree = {
        "quantities": [
            (np.arange(8.0) + i) * units[i % len(units)] for i in range(blocks)
        ]
    }
    asdf.AsdfFile(tree).write_to(d / FILES[1])
    for f in FILES:
        p = d / f
        if p.exists():
            print(f"{p}: {p.stat().st_size / 1e6:.1f} MB")


def walk(x) -> int:
    """Visits every mapping and sequence of the tree (converting what is still lazy); returns
    the number of leaves (objects, scalars, arrays). Only isinstance tests: an attribute test
    such as hasattr(x, "items") reads a lazy python asdf array (NDArrayType.__getattr__ loads
    it to look for the attribute), which is not what is measured here."""
    n = 0
    stack = [x]
    while stack:
        x = stack.pop()
        if isinstance(x, (str, bytes)):
            n += 1
        elif isinstance(x, Mapping):
            stack.extend(x.values())
        elif isinstance(x, (list, tuple, MutableSequence)):
            stack.extend(x)
        else:
            n += 1
    return n


def open_python_asdf(path, validate: bool, lazy_tree: bool) -> int:
    import asdf

    with asdf.config_context() as config:
        config.validate_on_read = validate
        with asdf.open(path, lazy_tree=lazy_tree) as af:
            return walk(af.tree)


def open_asdf_rs(path, validate: bool, python_validation: bool = False, lazy_tree: bool = False) -> int:
    import asdf_rs

    f = asdf_rs.open(path, converters=True, validate=validate, lazy_tree=lazy_tree)
    try:
        n = walk(f.tree)
        if python_validation:
            f.validate()  # python asdf's AsdfFile.validate: every installed schema
        return n
    finally:
        f.close()


def python_schemas_on_read_tree(f) -> None:
    """python asdf's validate_on_read over the tree asdf-rs read (before conversion): its
    Tagged values as python asdf's tagged nodes, its arrays as ndarray nodes, checked by
    asdf.schema.validate(reading=True) against every installed schema. What python asdf's
    validation costs without its YAML parsing."""
    import asdf
    import numpy as np
    from asdf import schema, tagged
    from asdf.tags.core.ndarray import numpy_dtype_to_asdf_datatype

    import asdf_rs

    ctx = asdf.AsdfFile()
    nd_tag = ctx.extension_manager.get_converter_for_type(np.ndarray).tags[0]

    def conv(x):
        if isinstance(x, asdf_rs.Tagged):
            v = conv(x.value)
            if isinstance(v, dict):
                return tagged.TaggedDict(v, x.tag)
            if isinstance(v, list):
                return tagged.TaggedList(v, x.tag)
            t = tagged.TaggedString(str(v))
            t._tag = x.tag
            return t
        if isinstance(x, dict):
            return {k: conv(v) for k, v in x.items()}
        if isinstance(x, list):
            return [conv(v) for v in x]
        if isinstance(x, asdf_rs.NDArray):
            datatype, byteorder = numpy_dtype_to_asdf_datatype(x.dtype)
            return tagged.TaggedDict(
                {"source": 0, "datatype": datatype, "byteorder": byteorder, "shape": list(x.shape)},
                nd_tag,
            )
        return x

    root = conv(f.rs.tree)
    schema.validate(tagged.TaggedDict(root, "tag:stsci.edu:asdf/core/asdf-1.1.0"), ctx, reading=True)


def open_asdf_rs_python_schemas(path, validate: bool) -> int:
    import asdf_rs

    f = asdf_rs.open(path, converters=True, validate=validate)
    try:
        if validate:
            python_schemas_on_read_tree(f)
        return walk(f.tree)
    finally:
        f.close()


# (name, function(path, validate), runs with validation on, runs with validation off)
CASES = [
    ("python asdf lazy_tree=False", lambda p, v: open_python_asdf(p, v, False), True, True),
    ("python asdf lazy_tree=True", lambda p, v: open_python_asdf(p, v, True), True, True),
    ("asdf_rs converters=True", open_asdf_rs, True, True),
    (
        "asdf_rs + python asdf validate()",
        lambda p, v: open_asdf_rs(p, v, python_validation=True),
        True,
        False,
    ),
    ("asdf_rs + python schemas on read tree", open_asdf_rs_python_schemas, True, False),
    ("asdf_rs converters=True lazy_tree", lambda p, v: open_asdf_rs(p, v, lazy_tree=True), True, True),
]


def in_process(path, fn, validate, runs):
    times = []
    for _ in range(runs):
        gc.collect()
        t = time.perf_counter()
        fn(path, validate)
        times.append(time.perf_counter() - t)
    return statistics.median(times), times


def whole_process(path, case: int, validate: bool, runs: int) -> tuple[float, float, float]:
    """Medians of whole processes: wall time, the part before the open (interpreter start,
    imports, python asdf loading the installed extensions, which both sides need), and the
    first open of the process (with the walk)."""
    times, setups, opens = [], [], []
    for _ in range(runs):
        t = time.perf_counter()
        out = subprocess.run(
            [sys.executable, __file__, "once", str(path), str(case), str(int(validate))],
            check=True,
            capture_output=True,
            text=True,
        )
        times.append(time.perf_counter() - t)
        first_open = float(out.stdout.split()[-1])
        opens.append(first_open)
        setups.append(times[-1] - first_open)
    return statistics.median(times), statistics.median(setups), statistics.median(opens)


def once(path: str, case: int, validate: bool) -> None:
    """One whole process's work: the imports, the extensions loaded (as python asdf's first
    open would load them, for both sides), then one open and walk, whose time is printed."""
    import warnings

    import asdf

    if case >= 2:
        import asdf_rs  # noqa: F401
    warnings.simplefilter("ignore")
    asdf.get_config().extensions
    t = time.perf_counter()
    CASES[case][1](path, validate)
    print(f"{time.perf_counter() - t:.6f}")


def run(d: Path, runs: int, whole_runs: int, only=None, files=FILES, validations=(True, False)) -> None:
    import warnings

    import asdf  # (imports outside the timings)
    import asdf_rs  # noqa: F401

    warnings.simplefilter("ignore")
    # python asdf loads the installed extensions on its first open, outside any config_context
    # (within one, every open would load them again): loaded here, outside the timings
    asdf.get_config().extensions
    print(f"python {sys.version.split()[0]}, {os.cpu_count()} cpus; median of {runs} runs in "
          f"process (each run in brackets), of {whole_runs} whole processes")
    for f in files:
        path = d / f
        for validate in validations:
            rows = []
            for i, (name, fn, on, off) in enumerate(CASES):
                if not (on if validate else off) or (only and i not in only):
                    continue
                med, first = in_process(path, fn, validate, runs)
                nan = float("nan")
                whole = whole_process(path, i, validate, whole_runs) if whole_runs else (nan, nan, nan)
                rows.append((name, med, first, whole))
            print(f"\n{f}, validation {'on' if validate else 'off'}")
            for name, med, first, (whole, setup, first_open) in rows:
                runs_ms = ", ".join(f"{t * 1e3:.1f}" for t in first)
                print(f"  {name:34} {med * 1e3:9.1f} ms ({runs_ms})   "
                      f"whole process {whole * 1e3:8.1f} ms = {setup * 1e3:.0f} ms start, imports "
                      f"and extensions + {first_open * 1e3:.1f} ms first open")
            for ours in rows[2:] if only is None else [r for r in rows if r[0].startswith("asdf_rs")]:
                for theirs in [r for r in rows if not r[0].startswith("asdf_rs")]:
                    print(f"    {theirs[0]} / {ours[0]}: {theirs[1] / ours[1]:.2f}x in process, "
                          f"{theirs[3][2] / ours[3][2]:.2f}x first open of a process, "
                          f"{theirs[3][0] / ours[3][0]:.2f}x whole process")


def where(filename: str, func: str) -> str:
    f = filename.replace("\\", "/")
    if "_asdf_rs" in func or "asdf_rs._asdf_rs" in func:
        return "asdf_rs native (parse, tree, native validation)"
    if "/asdf_rs/" in f:
        return "asdf_rs python (converters glue)"
    if "/asdf/_jsonschema/" in f or f.endswith("/asdf/schema.py") or "jsonschema" in f:
        return "python asdf validation (schemas)"
    for pkg, label in (
        ("/asdf_astropy/", "converters: asdf_astropy"),
        ("/gwcs/", "converters: gwcs"),
        ("/roman_datamodels/", "converters: roman_datamodels"),
        ("/stdatamodels/", "converters: stdatamodels"),
        ("/astropy/", "astropy (objects the converters build)"),
        ("/asdf/", "python asdf other (extension manager, tagged, yaml)"),
        ("/yaml/", "pyyaml"),
    ):
        if pkg in f:
            return label
    if filename == "~":
        return "builtins (" + func.split(" of ")[0].strip("{}<>") + ")" if "method" not in func else "builtins"
    return "other python"


def profile(d: Path) -> None:
    import warnings

    import asdf  # noqa: F401
    import asdf_rs  # noqa: F401

    warnings.simplefilter("ignore")
    for f in FILES:
        for name, fn, _on, _off in (CASES[2], CASES[3], CASES[0], CASES[1]):
            path = d / f
            fn(path, True)  # warm: schemas and imports outside the profile
            prof = cProfile.Profile()
            t = time.perf_counter()
            prof.enable()
            fn(path, True)
            prof.disable()
            total = time.perf_counter() - t
            st = pstats.Stats(prof)
            by = {}
            for (filename, _line, func), (_cc, _nc, tt, _ct, _callers) in st.stats.items():
                k = where(filename, func)
                by[k] = by.get(k, 0.0) + tt
            print(f"\n{f}, {name}, validation on: {total * 1e3:.1f} ms under cProfile")
            for k, v in sorted(by.items(), key=lambda kv: -kv[1]):
                if v >= 0.0005:
                    print(f"  {v * 1e3:9.1f} ms  {100 * v / total:5.1f}%  {k}")
            print("  top functions by own time:")
            st.sort_stats("tottime").print_stats(8)


def main():
    if len(sys.argv) > 1 and sys.argv[1] == "once":
        once(sys.argv[2], int(sys.argv[3]), bool(int(sys.argv[4])))
        return
    ap = argparse.ArgumentParser()
    ap.add_argument("what", choices=["make", "run", "profile"])
    ap.add_argument("dir", type=Path)
    ap.add_argument("--shape", type=int, default=2048)
    ap.add_argument("--blocks", type=int, default=10000)
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--whole-runs", type=int, default=5)
    ap.add_argument("--cases", help="comma-separated case numbers (0-5) to run, default all")
    ap.add_argument("--files", help="comma-separated file names, default both")
    ap.add_argument("--validation", choices=["on", "off", "both"], default="both")
    a = ap.parse_args()
    if a.what == "make":
        make(a.dir, a.shape, a.blocks)
    elif a.what == "run":
        only = {int(c) for c in a.cases.split(",")} if a.cases else None
        files = a.files.split(",") if a.files else FILES
        validations = {"on": (True,), "off": (False,), "both": (True, False)}[a.validation]
        run(a.dir, a.runs, a.whole_runs, only, files, validations)
    else:
        profile(a.dir)


if __name__ == "__main__":
    main()
