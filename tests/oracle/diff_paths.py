#!/usr/bin/env python3
"""The paths python asdf's ``asdftool diff`` reports for its own pairs of test files.

python asdf 6.0.0 ships pairs of files with the expected output of its ``diff`` command
(``tests/data/python-asdf/*.diff``). That output is an indented tree without list indices, so
this script runs python's own diff machinery (``asdf._commands.diff``) on the same pairs, with
the same ``ignore`` expressions as python's tests, and records where each difference is
reported, as JSON pointers:

* a leaf whose values differ, or a key found in one file only: its path;
* two arrays (``core/ndarray``) whose shape, datatype or contents differ: the array's path,
  with the kinds (python also compares the other keys of the two descriptors, ``offset``,
  ``strides``, ..., as a mapping, so those paths appear too).

``asdf-cli/tests/it/diff.rs`` checks that ``asdftool diff`` reports the same set of paths.

    .venv-oracle/bin/python tests/oracle/diff_paths.py            # compare with the committed file
    .venv-oracle/bin/python tests/oracle/diff_paths.py --write    # rewrite it

The committed file is ``tests/data/python-asdf/diff-paths.json`` (under the test-data root,
see tests/testdata.py).
"""

from __future__ import annotations

import argparse
import io
import json
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
import testdata  # noqa: E402

import importlib  # noqa: E402

# `asdf._commands.diff` is also the name of a function there: import the module by name
d = importlib.import_module("asdf._commands.diff")

# (first file, second file, python's ignore expressions, our --ignore pointers, python's .diff)
PAIRS = [
    ("frames0.asdf", "frames1.asdf", [], [], "frames.diff"),
    ("frames0.asdf", "frames1.asdf", ["asdf_library"], ["/asdf_library"],
     "frames_ignore_asdf_library.diff"),
    ("frames0.asdf", "frames1.asdf", ["frames[*].reference_frame"],
     ["/frames/*/reference_frame"], "frames_ignore_reference_frame.diff"),
    ("frames0.asdf", "frames1.asdf", ["asdf_library", "frames[*].reference_frame"],
     ["/asdf_library", "/frames/*/reference_frame"], "frames_ignore_both.diff"),
    ("ndarray0.asdf", "ndarray1.asdf", [], [], "ndarrays.diff"),
    ("ndarray_in_list0.asdf", "ndarray_in_list1.asdf", [], [], "ndarray_in_list.diff"),
    ("block0.asdf", "block1.asdf", [], [], "blocks.diff"),
    ("simple_inline_array0.asdf", "simple_inline_array1.asdf", [], [], "simple_inline_array.diff"),
]


def pointer(keys) -> str:
    parts = []
    for k in keys:
        if isinstance(k, d.ArrayNode):
            k = k.index
        parts.append(str(k).replace("~", "~0").replace("/", "~1"))
    return "".join("/" + p for p in parts)


def paths_of(a: Path, b: Path, ignore: list[str]) -> dict:
    found: dict[str, str] = {}
    orig_objects, orig_dict_diff, orig_arrays = (
        d.compare_objects, d.print_dict_diff, d.compare_ndarrays)

    def compare_objects(ctx, obj0, obj1, keys=None):
        if obj0 != obj1:
            found.setdefault(pointer(keys or []), "value")
        return orig_objects(ctx, obj0, obj1, keys)

    def print_dict_diff(ctx, tree, node_list, keys, other):
        for key in keys:
            found.setdefault(pointer([*node_list, key]), "second only" if other else "first only")
        return orig_dict_diff(ctx, tree, node_list, keys, other)

    def compare_ndarrays(ctx, array0, array1, keys):
        before = ctx.iostream.tell()
        orig_arrays(ctx, array0, array1, keys)
        ctx.iostream.seek(before)
        text = ctx.iostream.read()
        ctx.iostream.seek(0, io.SEEK_END)
        for line in text.splitlines():
            if "ndarrays differ by" in line:
                kinds = line.split("ndarrays differ by", 1)[1].strip()
                found[pointer(keys)] = "array: " + kinds.replace(" and ", ", ")
                break

    d.compare_objects, d.print_dict_diff, d.compare_ndarrays = (
        compare_objects, print_dict_diff, compare_ndarrays)
    try:
        out = io.StringIO()
        d.diff([str(a), str(b)], minimal=False, iostream=out, ignore=ignore or None)
    finally:
        d.compare_objects, d.print_dict_diff, d.compare_ndarrays = (
            orig_objects, orig_dict_diff, orig_arrays)
    return found


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--write", action="store_true", help="rewrite the committed file")
    args = ap.parse_args()
    folder = testdata.require_dir(testdata.PYTHON_ASDF)
    if folder is None:
        return 0
    cases = []
    for first, second, ignore, ours, expected in PAIRS:
        cases.append({
            "first": first,
            "second": second,
            "python_ignore": ignore,
            "ignore": ours,
            "python_diff": expected,
            "paths": dict(sorted(paths_of(folder / first, folder / second, ignore).items())),
        })
    text = json.dumps({"generator": "tests/oracle/diff_paths.py", "asdf": "6.0.0",
                       "cases": cases}, indent=1) + "\n"
    target = folder / "diff-paths.json"
    if args.write:
        target.write_text(text)
        print(f"wrote {target.name}")
        return 0
    if not target.is_file() or target.read_text() != text:
        print(f"{target.name} differs from a fresh run: rerun with --write", file=sys.stderr)
        return 1
    print(f"{target.name}: up to date ({len(cases)} pairs)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
