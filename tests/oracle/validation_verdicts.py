#!/usr/bin/env python3
"""python asdf's validation verdict on every `.asdf` file of the test data.

    .venv-oracle/bin/python tests/oracle/validation_verdicts.py           # writes the verdicts
    .venv-oracle/bin/python tests/oracle/validation_verdicts.py --check   # re-derives, compares

Run with the pinned oracle venv (asdf 6.0.0). For each `.asdf` file under the reference files,
the python fixtures, the layouts, libasdf's fixtures and python asdf's own test files (the
folders of `canonical.py sidecars`, found through tests/testdata.py, and the ASDF Standard 1.7.0
files of tests/data/standard-1.7.0, which python asdf reads with ASDF_UNSTABLE_CORE_SCHEMAS=1, set
here), python asdf opens it as
`asdf.open` does with `validate_on_read` on (schema defaults filled first for standards before
1.6.0, then the tree validated against the schemas of the file's standard version), in raw mode
(`_force_raw_types`, so no converter runs):

- "valid": it opens;
- "invalid": it raises `ValidationError`;
- "unreadable": it raises anything else (the Rust test skips those).

The verdicts go to `tests/oracle/validation-verdicts.json` (keys: paths relative to the test
data root); `asdf-core/tests/it/schema_validate.rs` requires `OpenOptions::validate(true)` to give
the same verdict for every file python reads, and `.ci/run` runs `--check`.
"""

from __future__ import annotations

import json
import os
import sys
import warnings
from pathlib import Path

# ASDF Standard 1.7.0 (tests/data/standard-1.7.0) is known to python asdf 6.0.0 only with this
# set before it is imported; the verdicts on the other files are the same with it.
os.environ["ASDF_UNSTABLE_CORE_SCHEMAS"] = "1"
warnings.filterwarnings("ignore", message=".*ASDF_UNSTABLE_CORE_SCHEMAS.*")

import asdf  # noqa: E402 (after the environment variable)
from asdf.exceptions import ValidationError

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))
import testdata  # noqa: E402  (tests/testdata.py: the test-data locator)

sys.path.insert(0, str(HERE))
import blosc2_compressors  # noqa: E402  (test-only compressors for bsc2 and bls2 blocks)

blosc2_compressors.register()

OUT = HERE / "validation-verdicts.json"
PINNED_ASDF = "6.0.0"
FOLDERS = [
    testdata.REFERENCE_FILES,
    testdata.FIXTURES,
    testdata.LAYOUTS,
    testdata.LIBASDF,
    testdata.PYTHON_ASDF,
    "standard-1.7.0",
]


def verdict(path: Path) -> str:
    with asdf.config_context() as cfg:
        cfg.validate_on_read = True
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                with asdf.open(path, _force_raw_types=True, memmap=False, lazy_load=True):
                    pass
        except ValidationError:
            return "invalid"
        except Exception:  # noqa: BLE001 (whatever else stops python is "unreadable")
            return "unreadable"
    return "valid"


def verdicts() -> dict[str, str]:
    root = testdata.root()
    out = {}
    for rel in FOLDERS:
        folder = testdata.require_dir(rel)
        if folder is None:
            sys.exit(f"test data folder {rel} is missing")
        for p in sorted(folder.rglob("*.asdf")):
            out[p.relative_to(root).as_posix()] = verdict(p)
    return out


def main() -> int:
    if asdf.__version__ != PINNED_ASDF:
        sys.exit(f"refusing to run: asdf {asdf.__version__} found, asdf=={PINNED_ASDF} is the oracle")
    found = verdicts()
    text = json.dumps(found, indent=1, sort_keys=True) + "\n"
    counts = {v: sum(1 for x in found.values() if x == v) for v in ("valid", "invalid", "unreadable")}
    if "--check" in sys.argv[1:]:
        committed = json.loads(OUT.read_text(encoding="utf-8"))
        if committed != found:
            for k in sorted(set(committed) | set(found)):
                if committed.get(k) != found.get(k):
                    print(f"{k}: committed {committed.get(k)}, python now {found.get(k)}")
            return 1
        print(f"{len(found)} verdicts agree with {OUT.name}: {counts}")
        return 0
    OUT.write_text(text, encoding="utf-8")
    print(f"{len(found)} verdicts written: {counts}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
