"""Shared helpers of the asdf-rs python tests: the test-data locator and scratch folders."""

from __future__ import annotations

import shutil
import sys
import tempfile
from pathlib import Path

import pytest

# tests/testdata.py, the repository's locator of the test data ($ASDF_TEST_DATA or tests/data)
REPOSITORY = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPOSITORY / "tests"))
import testdata  # noqa: E402


@pytest.fixture
def scratch():
    """A scratch folder, removed afterwards."""
    d = Path(tempfile.mkdtemp(prefix="asdf-rs-py-"))
    try:
        yield d
    finally:
        shutil.rmtree(d, ignore_errors=True)


def history_extension_entries(path) -> list[str]:
    """The YAML text of each ``history.extensions`` entry of an ASDF file, in order."""
    lines = Path(path).read_bytes().split(b"\n...\n")[0].decode().splitlines()
    entries: list[list[str]] = []
    for line in lines[lines.index("  extensions:") + 1 :]:
        if line.startswith("  - "):
            entries.append([line])
        elif line.startswith("    ") and entries:
            entries[-1].append(line)
        else:
            break
    return ["\n".join(e) for e in entries]
