#!/usr/bin/env python3
"""Checks the Roman products asdf-rs wrote back through the generated types, with roman_datamodels.

    .venv-fits/bin/python asdf-codegen/tests/roman/check_written.py DIR

DIR holds what the tests of ``examples/roman_image.rs`` wrote (``ASDF_WRITE_OUT=OUT`` gives
``OUT/roman``): each product of this folder (``NAME.asdf``) read into the types generated from
rad's schemas and written back by asdf-rs. For each product, the written file must

1. open with ``roman_datamodels.datamodels.open`` (python asdf validates the tree against rad's
   schemas on read) as the same model class as the original, with every warning an error;
2. pass ``model.validate()``;
3. hold the original's values (the worked example's ``example_image.asdf``: the image's, with the
   three meta values the example changes): ``roman_datamodels.testing.assert_node_equal`` (arrays by value,
   every key of every node), and, stricter, the two trees as python asdf reads them without
   converting (``_force_raw_types``): the same keys, the same tags, scalars of the same python
   type and value (an integer written as a float fails), arrays of the same datatype and shape
   (their storage, inline or in a block, compressed or not, may differ).

Prints one line per product and ``N passed, N failed``; exits non-zero on any failure.
"""

from __future__ import annotations

import sys
import traceback
import warnings
from pathlib import Path

import asdf
import numpy as np
import roman_datamodels.datamodels as rdm
from roman_datamodels.testing import assert_node_equal

HERE = Path(__file__).resolve().parent
PRODUCTS = ["image", "raw", "ramp", "dark", "flat", "gain", "mask", "mosaic"]
ARRAY_TAG = "tag:stsci.edu:asdf/core/ndarray-"
# what examples/roman_image.rs changes (its EXPOSURE_TIME) and the file name it writes
EXAMPLE_CHANGES = {
    "meta/instrument/optical_element": "F158",
    "meta/exposure/exposure_time": 139.25,
    "meta/filename": "example_image.asdf",
}


def raw_tree(path: Path):
    with asdf.open(path, _force_raw_types=True, lazy_load=False, lazy_tree=False) as af:
        return af.tree["roman"]


def compare_raw(a, b, where: str, problems: list[str]) -> None:
    tag_a, tag_b = getattr(a, "_tag", None), getattr(b, "_tag", None)
    if tag_a != tag_b:
        problems.append(f"{where}: tag {tag_a!r} became {tag_b!r}")
        return
    if tag_a and tag_a.startswith(ARRAY_TAG):
        for key in ("datatype", "shape"):
            if a.get(key) != b.get(key):
                problems.append(f"{where}: array {key} {a.get(key)!r} became {b.get(key)!r}")
        return
    if isinstance(a, dict):
        if not isinstance(b, dict) or set(a) != set(b):
            keys_b = set(b) if isinstance(b, dict) else type(b).__name__
            problems.append(f"{where}: keys {sorted(a)} became {keys_b}")
            return
        for k in a:
            compare_raw(a[k], b[k], f"{where}/{k}", problems)
    elif isinstance(a, list):
        if not isinstance(b, list) or len(a) != len(b):
            problems.append(f"{where}: list {a!r} became {b!r}")
            return
        for i, (x, y) in enumerate(zip(a, b)):
            compare_raw(x, y, f"{where}/{i}", problems)
    elif type(a) is not type(b) or a != b:
        if not (isinstance(a, float) and np.isnan(a) and isinstance(b, float) and np.isnan(b)):
            problems.append(f"{where}: {a!r} ({type(a).__name__}) became {b!r} ({type(b).__name__})")


def set_path(tree, path: str, value) -> None:
    *parents, last = path.split("/")
    for key in parents:
        tree = tree[key]
    tree[last] = value


def check(name: str, written_dir: Path, written_name: str = "", changes=None) -> list[str]:
    """``changes``: {path under roman: value} the written file is to differ by."""
    changes = changes or {}
    original = HERE / f"{name}.asdf"
    written = written_dir / (written_name or f"{name}.asdf")
    if not written.exists():
        return [f"{written} was not written (did asdf-codegen's roman test run with ASDF_WRITE_OUT?)"]
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        with rdm.open(original) as a, rdm.open(written) as b:
            if type(a) is not type(b):
                return [f"opened as {type(b).__name__}, the original as {type(a).__name__}"]
            b.validate()
            for path, value in changes.items():
                node = a
                *parents, last = path.split("/")
                for key in parents:
                    node = getattr(node, key)
                setattr(node, last, value)
            assert_node_equal(a._instance, b._instance)
    problems: list[str] = []
    expected = raw_tree(original)
    for path, value in changes.items():
        set_path(expected, path, value)
    compare_raw(expected, raw_tree(written), "/roman", problems)
    return problems


def main() -> int:
    if len(sys.argv) != 2:
        sys.exit(__doc__)
    written_dir = Path(sys.argv[1])
    passed = failed = 0
    for name in PRODUCTS:
        try:
            problems = check(name, written_dir)
        except Exception:  # noqa: BLE001  (any failure of the oracle is a failed check)
            problems = [traceback.format_exc()]
        if problems:
            failed += 1
            print(f"FAIL {name}: " + "\n  ".join(problems))
        else:
            passed += 1
            print(f"ok {name}: roman_datamodels opens and validates it, with the original's values")
    # the worked example (examples/roman_image.rs, run by its tests): the image with
    # three meta values changed
    try:
        problems = check("image", written_dir, "example_image.asdf", EXAMPLE_CHANGES)
    except Exception:  # noqa: BLE001
        problems = [traceback.format_exc()]
    if problems:
        failed += 1
        print("FAIL example_image: " + "\n  ".join(problems))
    else:
        passed += 1
        print("ok example_image: roman_datamodels opens and validates it, the image with the example's changes")
    print(f"roman products: {passed} passed, {failed} failed")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
