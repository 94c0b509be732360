"""Same answers as python asdf 6.0.0: every reference file and fixture of tests/data opened
with both libraries, tree values and arrays compared (dtype with byte order, shape, values,
masks); files written by asdf_rs from python objects open in python asdf with validation
and no warning."""

from __future__ import annotations

import datetime
import math
import warnings

import asdf
import numpy as np
import pytest
from asdf.tags.core import IntegerType
from asdf.tagged import Tagged as PyTagged

import asdf_rs
from conftest import testdata

FOLDERS = ["reference-files", "fixtures"]


def corpus():
    files = []
    for sub in FOLDERS:
        d = testdata.require_dir(sub)
        files += sorted(d.rglob("*.asdf"))
    assert len(files) > 150, f"only {len(files)} test files found under {testdata.root()}"
    return files


FILES = corpus()


def plain_python(x, memo=None):
    """python asdf's objects reduced to what asdf_rs gives: dict subclasses to dicts,
    tagged dicts/lists/strings to (tag, value), IntegerType to int, arrays as numpy.
    Shared and recursive containers stay shared and recursive."""
    memo = {} if memo is None else memo
    if id(x) in memo:
        return memo[id(x)]
    if isinstance(x, IntegerType):
        return int(x._value)
    if isinstance(x, PyTagged):
        inner = dict(x) if isinstance(x, dict) else list(x) if isinstance(x, list) else str(x)
        return ("tagged", x._tag, plain_python(inner, memo))
    if isinstance(x, np.ndarray):
        return x
    if type(x).__name__ == "Constant":
        return ("tagged", "tag:stsci.edu:asdf/core/constant-1.0.0", plain_python(x.value, memo))
    if isinstance(x, dict):
        out = memo[id(x)] = {}
        out.update((k, plain_python(v, memo)) for k, v in x.items())
        return out
    if isinstance(x, (list, tuple)):
        out = memo[id(x)] = []
        out.extend(plain_python(v, memo) for v in x)
        return out
    return x


def plain_rs(x, memo=None):
    memo = {} if memo is None else memo
    if id(x) in memo:
        return memo[id(x)]
    if isinstance(x, asdf_rs.NDArray):
        return x.read()
    if isinstance(x, asdf_rs.Tagged):
        return ("tagged", x.tag, plain_rs(x.value, memo))
    if isinstance(x, dict):
        out = memo[id(x)] = {}
        out.update((k, plain_rs(v, memo)) for k, v in x.items())
        return out
    if isinstance(x, list):
        out = memo[id(x)] = []
        out.extend(plain_rs(v, memo) for v in x)
        return out
    return x


def as_lists(x):
    if isinstance(x, np.ndarray):
        x = x.tolist()
    if isinstance(x, (list, tuple)):
        return [as_lists(v) for v in x]
    return x


def compare(ours, theirs, path, problems, seen=None):
    seen = set() if seen is None else seen
    if (isinstance(theirs, tuple) and len(theirs) == 3 and isinstance(theirs[0], str)
            and theirs[0] == "tagged"
            and theirs[1].startswith("tag:stsci.edu:asdf/core/ndarray-")
            and isinstance(ours, np.ndarray)):
        # python asdf leaves some inline arrays it cannot convert (nested records) as
        # tagged dicts: their inline data must be our array's values
        if as_lists(ours.tolist()) != as_lists(theirs[2]["data"]):
            problems.append(f"{path}: values {ours.tolist()} != inline data {theirs[2]['data']}")
        return
    if isinstance(theirs, (dict, list)):
        # a recursive structure: each pair of containers is compared once
        if (id(ours), id(theirs)) in seen:
            return
        seen.add((id(ours), id(theirs)))
    if isinstance(theirs, np.ndarray):
        if not isinstance(ours, np.ndarray):
            problems.append(f"{path}: python asdf has an array, asdf_rs {type(ours).__name__}")
            return
        if ours.dtype != theirs.dtype:
            problems.append(f"{path}: dtype {ours.dtype} != python asdf's {theirs.dtype}")
        if ours.shape != theirs.shape:
            problems.append(f"{path}: shape {ours.shape} != python asdf's {theirs.shape}")
            return
        if isinstance(theirs, np.ma.MaskedArray) != isinstance(ours, np.ma.MaskedArray):
            problems.append(f"{path}: masked {isinstance(ours, np.ma.MaskedArray)} != "
                            f"python asdf's {isinstance(theirs, np.ma.MaskedArray)}")
            return
        if isinstance(theirs, np.ma.MaskedArray):
            if not np.array_equal(np.ma.getmaskarray(ours), np.ma.getmaskarray(theirs)):
                problems.append(f"{path}: masks differ")
            ours, theirs = np.ma.getdata(ours), np.ma.getdata(theirs)
        if ours.dtype.kind in "fc":
            # values, NaNs equal (their payloads from inline YAML differ between parsers),
            # and the sign of zeros
            num = ~np.isnan(ours.real)
            same = np.array_equal(ours, theirs, equal_nan=True) and np.array_equal(
                np.signbit(ours.real[num]), np.signbit(np.asarray(theirs).real[num]))
        else:
            # bytes, so records compare whole and bool bytes other than 0/1 count
            same = ours.tobytes() == np.ascontiguousarray(theirs).astype(ours.dtype).tobytes()
        if not same:
            problems.append(f"{path}: values differ")
        return
    if isinstance(theirs, dict):
        if not isinstance(ours, dict):
            problems.append(f"{path}: python asdf has a dict, asdf_rs {type(ours).__name__}")
            return
        if list(map(repr, ours)) != list(map(repr, theirs)):
            problems.append(f"{path}: keys {list(ours)} != python asdf's {list(theirs)}")
        for k in theirs:
            if k in ours:
                compare(ours[k], theirs[k], f"{path}{k}/", problems, seen)
        return
    if isinstance(theirs, (list, tuple)):
        if not isinstance(ours, (list, tuple)) or len(ours) != len(theirs):
            problems.append(f"{path}: {ours!r:.80} != python asdf's {theirs!r:.80}")
            return
        for i, (a, b) in enumerate(zip(ours, theirs)):
            compare(a, b, f"{path}{i}/", problems, seen)
        return
    if type(ours) is not type(theirs):
        problems.append(f"{path}: type {type(ours).__name__} != python asdf's "
                        f"{type(theirs).__name__} ({ours!r:.60} / {theirs!r:.60})")
        return
    if isinstance(theirs, (float, complex)) and np.isnan(theirs):
        if repr(ours) != repr(theirs):
            problems.append(f"{path}: {ours!r} != python asdf's {theirs!r}")
        return
    if isinstance(theirs, (datetime.datetime, datetime.date)):
        if ours != theirs or getattr(ours, "tzinfo", None) != getattr(theirs, "tzinfo", None):
            problems.append(f"{path}: {ours!r} != python asdf's {theirs!r}")
        return
    if ours != theirs:
        problems.append(f"{path}: {ours!r:.80} != python asdf's {theirs!r:.80}")


def python_tree(path):
    with warnings.catch_warnings():
        # unknown tags (the custom-tag fixtures) warn in python asdf; the values still count
        warnings.simplefilter("ignore")
        with asdf.open(path, lazy_load=False, memmap=False) as f:
            return plain_python(f.tree)


@pytest.mark.parametrize("path", FILES, ids=lambda p: str(p.relative_to(testdata.root())))
@pytest.mark.parametrize("memmap", [True, False], ids=["mmap", "read"])
def test_same_tree_and_arrays_as_python_asdf(path, memmap):
    theirs = python_tree(path)
    with asdf_rs.open(path, memmap=memmap) as f:
        ours = plain_rs(f.tree)
    problems = []
    compare(ours, theirs, "/", problems)
    assert not problems, "\n".join(problems)


def test_corpus_has_every_kind_of_array():
    """The corpus reaches the paths the comparison is meant to cover."""
    kinds = set()
    for path in FILES:
        with asdf_rs.open(path) as f:
            stack, seen = [f.tree], set()
            while stack:
                x = stack.pop()
                if id(x) in seen:
                    continue
                seen.add(id(x))
                if isinstance(x, dict):
                    stack += x.values()
                elif isinstance(x, list):
                    stack += x
                elif isinstance(x, asdf_rs.NDArray):
                    a = x.read()
                    kinds.add("masked" if isinstance(a, np.ma.MaskedArray) else a.dtype.kind)
                    if a.dtype.byteorder == ">":
                        kinds.add("big-endian")
                    if isinstance(a.base, asdf_rs.MappedData):
                        kinds.add("mapped view")
    assert {"f", "i", "u", "b", "c", "S", "U", "V", "masked", "big-endian",
            "mapped view"} <= kinds, kinds


WRITE_CASES = {
    "scalars": {"s": "text", "i": -3, "big": -(2**63) + 2, "f": 2.5, "nan": float("nan"),
                "b": True, "n": None, "c": 1 - 2j, "l": [1, "a", [2.0]],
                "t": datetime.datetime(2024, 5, 6, 7, 8, 9, 123456),
                "tz": datetime.datetime(2024, 5, 6, 7, 8, 9, tzinfo=datetime.timezone.utc),
                "d": datetime.date(2020, 1, 2), "nested": {"deeper": {"x": [{}]}}},
    "arrays": {"f8": np.linspace(0, 1, 7), "i2be": np.arange(6, dtype=">i2").reshape(2, 3),
               "u1": np.arange(5, dtype=np.uint8), "bool": np.array([True, False]),
               "c16": np.array([1 + 1j, 2 - 3j]), "f4_2d": np.ones((3, 4), np.float32),
               "fortran": np.asfortranarray(np.arange(12.0).reshape(3, 4)),
               "strided": np.arange(20)[::3], "scalar0d": np.array(5.0),
               "empty": np.zeros((0, 3)), "ascii": np.array([b"ab", b"cde"]),
               "ucs4": np.array(["x", "yz"]),
               "record": np.array([(1, 2.0), (3, 4.0)], dtype=[("a", "<i4"), ("b", ">f8")]),
               "masked": np.ma.array([1.0, 2.0, 3.0], mask=[False, True, False])},
}


@pytest.mark.parametrize("compression", [None, "zlib", "lz4", "zstd", "bzp2"])
@pytest.mark.parametrize("case", sorted(WRITE_CASES))
def test_written_files_open_in_python_asdf_without_warning(scratch, case, compression):
    tree = WRITE_CASES[case]
    out = scratch / "out.asdf"
    asdf_rs.write(out, tree, compression=compression)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        with asdf.open(out, validate_checksums=True, lazy_load=False, memmap=False) as f:
            f.validate()
            theirs = plain_python({k: v for k, v in f.tree.items()
                                   if k not in ("asdf_library", "history")})
    problems = []
    compare(theirs, tree, "/", problems)
    assert not problems, "\n".join(problems)
    if compression and any(isinstance(v, np.ndarray) for v in tree.values()):
        with asdf.open(out) as f:
            labels = {b.header["compression"] for b in f._blocks.blocks}
        assert labels == {compression.encode().ljust(4, b"\0")}, labels


REFERENCE = [p for p in FILES if "reference-files" in p.parts]


@pytest.mark.parametrize("path", REFERENCE, ids=lambda p: str(p.relative_to(testdata.root())))
def test_trees_read_by_asdf_rs_write_back_as_python_asdf_reads_the_original(scratch, path):
    out = scratch / "copy.asdf"
    with asdf_rs.open(path) as f:
        asdf_rs.write(out, f.tree)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        with asdf.open(out, validate_checksums=True, lazy_load=False, memmap=False) as f:
            f.validate()
            copy = plain_python({k: v for k, v in f.tree.items()
                                 if k not in ("asdf_library", "history")})
    original = python_tree(path)
    original = {k: v for k, v in original.items() if k not in ("asdf_library", "history")}
    problems = []
    compare(copy, original, "/", problems)
    assert not problems, "\n".join(problems)
