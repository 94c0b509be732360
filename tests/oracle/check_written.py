#!/usr/bin/env python3
"""Check files written by asdf-rs with python asdf (the oracle).

Usage:
    .venv-oracle/bin/python tests/oracle/check_written.py DIR [-j N]

For every ``NAME.asdf`` in DIR that has a ``NAME.rust.json`` beside it (the canonical JSON
our reader produced for the file, written by ``ASDF_WRITE_OUT=DIR cargo test --test
write_roundtrip``):

1. open it with python asdf (tested with 6.0.0) with schema validation on read,
   ``validate_checksums=True``, every array loaded, and every warning an error, except
   ``AsdfConversionWarning`` about tags that are not recognized (trees may carry unknown
   tags on purpose);
2. compute its canonical JSON with ``tests/oracle/canonical.py`` (docs/canonical.md) and
   compare it with ``NAME.rust.json`` (no path ignored).

``.asdf`` files without a ``.rust.json`` (the external block files ``NAME0000.asdf`` of
exploded files) are opened and validated the same way, without a canonical comparison.

Prints one line per failure, then ``N passed, N failed``; exits non-zero on any failure.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import traceback
import warnings
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path


# Files of ASDF Standard 1.7.0 (`WriteOptions::standard(V1_7_0)`) are read by python asdf 6.0.0
# only with this set before it is imported (its warning that 1.7.0 is unstable is ignored below).
os.environ["ASDF_UNSTABLE_CORE_SCHEMAS"] = "1"
warnings.filterwarnings("ignore", message=r".*ASDF_UNSTABLE_CORE_SCHEMAS.*")

sys.path.insert(0, str(Path(__file__).resolve().parent))
import canonical  # noqa: E402  (tests/oracle/canonical.py)


def _load_all(node, seen=None) -> None:
    """Touch every array of a converted tree so its block is read and verified."""
    import numpy as np

    if seen is None:
        seen = set()
    if id(node) in seen:
        return
    seen.add(id(node))
    if isinstance(node, dict):
        for v in node.values():
            _load_all(v, seen)
    elif isinstance(node, (list, tuple)):
        for v in node:
            _load_all(v, seen)
    elif hasattr(node, "__array__") and not isinstance(node, (str, bytes)):
        np.asarray(node).tobytes()
        mask = getattr(node, "mask", None)
        if mask is not None:
            np.asarray(mask).tobytes()


def _open_strict(path: str) -> None:
    import asdf
    from asdf.exceptions import AsdfConversionWarning

    # asdf 6 does not validate on read by default (config.validate_on_read is False): switch
    # it on, so every written tree is checked against the schemas of its tags
    with warnings.catch_warnings(), asdf.config_context() as cfg:
        cfg.validate_on_read = True
        warnings.simplefilter("error")
        warnings.filterwarnings("ignore", message=r".*is not recognized.*", category=AsdfConversionWarning)
        warnings.filterwarnings("ignore", message=r".*ASDF_UNSTABLE_CORE_SCHEMAS.*")
        with asdf.open(path, validate_checksums=True, lazy_load=False, memmap=False) as af:
            af.validate()
            _load_all(af.tree)


def check_one(path_str: str) -> tuple[str, str | None]:
    path = Path(path_str)
    try:
        _open_strict(path_str)
    except Exception as e:  # noqa: BLE001 - every failure is reported
        return path.name, f"open: {type(e).__name__}: {e}".splitlines()[0][:300]
    side = path.with_name(path.name[: -len(".asdf")] + ".rust.json")
    if not side.is_file():
        return path.name, None
    try:
        expected = json.loads(side.read_text(encoding="utf-8"))
        actual = json.loads(canonical.to_text(canonical.document(path_str)))
        diffs = canonical.differences(expected, actual)
        if diffs:
            return path.name, f"{len(diffs)} difference(s): " + "; ".join(diffs[:5])
    except Exception as e:  # noqa: BLE001
        return path.name, "canonical: " + "".join(traceback.format_exception_only(type(e), e)).strip()[:300]
    return path.name, None


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("dir")
    ap.add_argument("-j", "--jobs", type=int, default=os.cpu_count() or 1)
    args = ap.parse_args(argv)
    canonical.check_oracle_version()
    files = sorted(str(p) for p in Path(args.dir).glob("*.asdf"))
    if not files:
        print(f"no .asdf files in {args.dir}")
        return 1
    passed = failed = 0
    with ProcessPoolExecutor(max_workers=max(1, args.jobs)) as ex:
        for name, err in ex.map(check_one, files, chunksize=8):
            if err is None:
                passed += 1
            else:
                failed += 1
                print(f"FAIL {name}: {err}")
    print(f"{passed} passed, {failed} failed")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
