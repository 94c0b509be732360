"""The test-data locator for the python scripts: the twin of the Rust crate tests/locator.

Same rules: the data root is ``$ASDF_TEST_DATA`` when set, else this repository's tests/data.
``require``/``require_dir`` return the path under the root, or, when it is absent, stop with a
message saying how to get it; with ``ASDF_TEST_DATA_SKIP_MISSING=1`` they print the skip and
return None instead. CI never sets that variable.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

ROOT_VAR = "ASDF_TEST_DATA"
SKIP_VAR = "ASDF_TEST_DATA_SKIP_MISSING"
REFERENCE_FILES = "reference-files"
FIXTURES = "fixtures"
LAYOUTS = "layouts"
LIBASDF = "libasdf"
PYTHON_ASDF = "python-asdf"

REPOSITORY = Path(__file__).resolve().parent.parent

HOW = {
    REFERENCE_FILES: "restore them with `git checkout -- tests/data/reference-files` or re-vendor "
                     "them with `bash tests/data/reference-files/vendor.sh`",
    FIXTURES: "restore them with `git checkout -- tests/data/fixtures` or regenerate them with "
              "`.venv-oracle/bin/python tests/data/generate.py`",
    PYTHON_ASDF: "restore them with `git checkout -- tests/data/python-asdf` (copied from the "
                 "asdf 6.0.0 wheel, see its README.md)",
    LIBASDF: "restore them with `git checkout -- tests/data/libasdf` (copied from libasdf, "
             "see its README.md)",
    LAYOUTS: "restore them with `git checkout -- tests/data/layouts` or regenerate them with "
             "`python3 tests/data/make_layouts.py`",
}


def root() -> Path:
    env = os.environ.get(ROOT_VAR)
    return Path(env) if env else REPOSITORY / "tests" / "data"


def _missing(rel: str, p: Path):
    if os.environ.get(SKIP_VAR) == "1":
        print(f"SKIPPED (test data missing, {SKIP_VAR}=1): {p}", file=sys.stderr)
        return None
    how = HOW.get(rel.split("/")[0], "restore it with `git checkout -- tests/data`")
    sys.exit(f"test data missing: {p}\n{how}.\nTo skip what needs absent data, set {SKIP_VAR}=1 "
             "(each skip is printed; CI never sets it).")


def require(rel: str) -> Path | None:
    p = root() / rel
    return p if p.is_file() else _missing(rel, p)


def require_dir(rel: str) -> Path | None:
    p = root() / rel
    return p if p.is_dir() else _missing(rel, p)
