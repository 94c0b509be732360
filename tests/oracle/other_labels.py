#!/usr/bin/env python3
"""Python asdf 6.0.0 reads the `xz` files asdf-rs wrote, with ASDF.jl's codec as a plugin.

    .venv-oracle/bin/python tests/oracle/other_labels.py "$ASDF_WRITE_OUT/other-labels"

`asdf-core/tests/it/other_labels.rs` (run with ASDF_WRITE_OUT set) leaves `NAME.asdf` there with
`NAME.values.json`, the arrays it wrote. This opens each file in python asdf with the `xz`
Compressor of tests/data/other-labels/asdfjl_codecs.py (the one the fixtures' generator uses:
python's liblzma, as ASDF.jl's CodecXz), validation and checksum verification on and warnings
as errors, and compares every array with the values written. Exits 1 on any difference, 2 when
the folder holds no file (the test did not run with ASDF_WRITE_OUT).
"""

from __future__ import annotations

import json
import sys
import warnings
from pathlib import Path

import asdf
import numpy as np

REPOSITORY = Path(__file__).resolve().parent.parent.parent
sys.path.insert(0, str(REPOSITORY / "tests" / "data" / "other-labels"))
import asdfjl_codecs  # noqa: E402


def check(path: Path) -> list[str]:
    want = json.loads(path.with_name(path.name[: -len(".asdf")] + ".values.json").read_text())
    problems = []
    with asdf.config_context() as cfg, warnings.catch_warnings():
        warnings.simplefilter("error")
        cfg.add_extension(asdfjl_codecs.XzExtension())
        with asdf.open(path, validate_checksums=True, lazy_load=False, memmap=False) as af:
            af.validate()
            for key, w in want.items():
                got = np.asarray(af[key])
                exp = np.array(w["values"], dtype=w["datatype"]).reshape(w["shape"])
                if got.dtype != exp.dtype or got.shape != exp.shape:
                    problems.append(f"{path.name} /{key}: {got.dtype}{got.shape}, wrote {exp.dtype}{exp.shape}")
                elif not np.array_equal(got, exp):
                    problems.append(f"{path.name} /{key}: values differ")
            labels = [b.header["compression"] for b in af._blocks.blocks]
            if any(lab != b"xz\0\0" for lab in labels):
                problems.append(f"{path.name}: block labels {labels}, expected xz")
    return problems


def main() -> int:
    if len(sys.argv) != 2:
        print(__doc__, file=sys.stderr)
        return 2
    files = sorted(Path(sys.argv[1]).glob("*.asdf"))
    if not files:
        print(f"no .asdf file in {sys.argv[1]}", file=sys.stderr)
        return 2
    problems = [p for f in files for p in check(f)]
    for p in problems:
        print(p, file=sys.stderr)
    print(f"{len(files)} file(s) asdf-rs wrote with xz blocks: {'FAILED' if problems else 'python asdf reads them as written'}")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
