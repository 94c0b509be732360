"""`AsdfFile.info()` shows scalars as python asdf's `info()` does: floats as python's `repr`
(`1.0`, `nan`, `-inf`, `1e+16`), beside `None`, `True` and integers. The expected lines are
python asdf's own output for the same file (the oracle), never text copied from asdf_rs."""

from __future__ import annotations

import contextlib
import io
import re

import asdf
import pytest

import asdf_rs

VALUES = {
    "one": 1.0,
    "minus_zero": -0.0,
    "tenth": 0.1,
    "sum": 0.1 + 0.2,
    "big": 1e16,
    "below_big": 1e15,
    "small": 1e-5,
    "tiny": 5e-324,
    "huge": 1.7976931348623157e308,
    "not_a_number": float("nan"),
    "plus_inf": float("inf"),
    "minus_inf": float("-inf"),
    "none": None,
    "yes": True,
    "count": 3,
    "floats": [2.0, float("nan"), -2.5e-7],
}

# `name (type): value`, after the tree's drawing characters
LEAF = re.compile(r"([\w\[\]]+) \((float|NoneType|bool|int)\): (.*)$")


def leaves(text: str) -> list[tuple[str, str, str]]:
    return [m.groups() for m in map(LEAF.search, text.splitlines()) if m]


@pytest.fixture
def written(scratch):
    path = scratch / "floats.asdf"
    asdf.AsdfFile(dict(VALUES)).write_to(path)
    return path


def python_info(path) -> str:
    out = io.StringIO()
    with asdf.open(path) as f, contextlib.redirect_stdout(out):
        f.info(max_rows=None, max_cols=None)
    return out.getvalue()


def test_info_shows_scalars_as_python_asdf_does(written):
    want = leaves(python_info(written))
    # the oracle shows every value (and the three list items): the comparison covers them all
    assert len(want) == len(VALUES) - 1 + 3, want
    assert ("one", "float", "1.0") in want and ("not_a_number", "float", "nan") in want
    with asdf_rs.open(written) as f:
        got = leaves(f.info())
    assert got == want


def test_search_names_float_keys_in_python_text(scratch):
    # YAML allows float keys (python asdf refuses to write them): asdf_rs shows them as
    # python's str() of the key, the name python would give the dict key it reads
    path = scratch / "keys.asdf"
    path.write_bytes(
        b"#ASDF 1.0.0\n#ASDF_STANDARD 1.5.0\n%YAML 1.1\n%TAG ! tag:stsci.edu:asdf/\n"
        b"--- !core/asdf-1.1.0\n1.0: a\n.nan: b\n1.0e+16: c\n...\n"
    )
    with asdf_rs.open(path) as f:
        text = f.info()
        found = [p for p, _ in f.search()]
    keys = [str(k) for k in (1.0, float("nan"), 1e16)]
    assert [m.group(1) for m in re.finditer(r"─(\S+) \(str\)", text)] == keys, text
    assert found[1:] == ["/" + k for k in keys], found
