#!/usr/bin/env python3
"""Checks that python asdf 6.0.0 rejects (and accepts) the crafted trees of
`schema_validate.rs`, so the Rust expectations follow the reference implementation.

    .venv-oracle/bin/python asdf-core/tests/schema_validate_python.py   # from the repository root

Each tree is loaded as python asdf loads a file's tree (`asdf.yamlutil.load_tree`, tags kept,
no conversion) and validated with `asdf.schema.validate` for ASDF Standard 1.6.0, as
`asdf.open` does on read; a `ValidationError` means rejected. Exit status 1 if any verdict differs.
"""

import io
import sys

import asdf
import asdf.schema
import asdf.yamlutil
from asdf.exceptions import ValidationError

LIB = "asdf_library: !core/software-1.0.0 {name: asdf, version: 6.0.0}\n"

VALID = [
    LIB,
    LIB
    + "data: !core/ndarray-1.1.0 {source: 0, datatype: float64, byteorder: little, shape: [3]}\n"
    "inline: !core/ndarray-1.1.0 [[1, 2], [3, 4]]\n"
    "c: !core/complex-1.0.0 1+2j\n"
    "unknown: !<tag:example.org:nothing-1.0.0> {whatever: 1}",
]

INVALID = [
    LIB + "data: !core/ndarray-1.1.0 {source: 0, datatype: float64, byteorder: middle, shape: [3]}",
    LIB + "data: !core/ndarray-1.1.0 {source: 0, datatype: float65, byteorder: little, shape: [3]}",
    LIB + "data: !core/ndarray-1.1.0 {source: 0, datatype: int8, byteorder: little, shape: [-3]}",
    "asdf_library: !core/software-1.0.0 {version: 6.0.0}",
    LIB + "data: !core/ndarray-1.1.0 {source: 0, byteorder: little, shape: [3]}",
    "asdf_library: !core/software-1.0.0 {version: 6.0.0}\n"
    "a: !core/ndarray-1.1.0 {source: 0, datatype: float64, byteorder: middle, shape: [3]}\n"
    "b: [!core/ndarray-1.1.0 {source: 0, datatype: int8, byteorder: little, shape: [x]}]",
    # open_with_validation_reports_every_problem
    "asdf_library: !core/software-1.0.0 {version: 1}\n"
    "a: !core/ndarray-1.1.0 {data: [1, 2], byteorder: middle}",
]


def verdict(body):
    text = "%YAML 1.1\n%TAG ! tag:stsci.edu:asdf/\n--- !core/asdf-1.1.0\n" + body + "\n...\n"
    tree = asdf.yamlutil.load_tree(io.BytesIO(text.encode()))
    try:
        asdf.schema.validate(tree, ctx=asdf.AsdfFile(version="1.6.0"), reading=True)
    except ValidationError as e:
        return False, str(e).splitlines()[0]
    return True, ""


def main():
    bad = 0
    for body in VALID:
        ok, msg = verdict(body)
        if not ok:
            bad += 1
            print("python rejects a tree expected valid:", body, msg)
    for body in INVALID:
        ok, msg = verdict(body)
        if ok:
            bad += 1
            print("python accepts a tree expected invalid:", body)
        else:
            print("rejected as expected:", msg)
    print("disagreements:", bad)
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
