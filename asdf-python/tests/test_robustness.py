"""Files that are odd, old or broken (the hand-made layouts, libasdf's files, ASDF 0.1.0
files, and every reference file cut short) either read or raise asdf_rs's exceptions:
never a crash, never another exception type."""

from __future__ import annotations

import numpy as np
import pytest

import asdf_rs
from conftest import testdata

FOLDERS = ["layouts", "libasdf", "legacy-0.1.0"]
FILES = [p for sub in FOLDERS for p in sorted(testdata.require_dir(sub).rglob("*.asdf"))]
EXPECTED = (asdf_rs.AsdfError, OSError)


def read_everything(f):
    stack = [f.tree]
    seen = set()
    while stack:
        x = stack.pop()
        if id(x) in seen:
            continue
        seen.add(id(x))
        if isinstance(x, dict):
            stack += x.values()
        elif isinstance(x, list):
            stack += x
        elif isinstance(x, asdf_rs.Tagged):
            stack.append(x.value)
        elif isinstance(x, asdf_rs.NDArray):
            a = x.read()
            assert isinstance(a, np.ndarray)


def test_corpus_is_there():
    assert len(FILES) > 80, FILES


@pytest.mark.parametrize("path", FILES, ids=lambda p: str(p.relative_to(testdata.root())))
def test_odd_files_read_or_raise_our_errors(path):
    try:
        with asdf_rs.open(path, verify_checksums=True) as f:
            read_everything(f)
            f.info()
    except EXPECTED:
        pass


@pytest.mark.parametrize("cut", [0.1, 0.5, 0.9, 0.99])
def test_truncated_reference_files_raise_our_errors(scratch, cut):
    for path in sorted(testdata.require_dir("reference-files").rglob("*.asdf")):
        raw = path.read_bytes()
        out = scratch / path.name
        out.write_bytes(raw[: int(len(raw) * cut)])
        try:
            with asdf_rs.open(out) as f:
                read_everything(f)
        except EXPECTED:
            pass
