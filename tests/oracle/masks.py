"""The masks python asdf 6.0.0 gives the masked arrays of the masked fixtures, for the Rust
test of `asdf_core::convert::Masked` (asdf-core/tests/it/convert.rs).

    .venv-oracle/bin/python tests/oracle/masks.py           # writes tests/data/fixtures/masks.python.json
    .venv-oracle/bin/python tests/oracle/masks.py --check   # exit 1 if the committed file differs

For each array: its values with masked elements as null, as `numpy.ma.getmaskarray` and
`.tolist()` give them (NaN as the string "nan").
"""
import json
import math
import sys
from pathlib import Path

import asdf
import numpy as np

assert asdf.__version__ == "6.0.0", asdf.__version__

HERE = Path(__file__).resolve().parent
FIXTURES = HERE.parent / "data" / "fixtures"
OUT = FIXTURES / "masks.python.json"
CASES = {
    "masked.asdf": ["m", "m2", "mask_all_false"],
    "masked_inline.asdf": ["m", "m2"],
    "masked_scalar.asdf": ["inline_int", "inline_float"],
    "inline_nulls.asdf": ["ints", "floats"],
}


def plain(v):
    if isinstance(v, float) and math.isnan(v):
        return "nan"
    return v


def entry(a):
    mask = np.ma.getmaskarray(a)
    data = np.asarray(np.ma.getdata(a))
    return {
        "shape": list(data.shape),
        "mask": mask.astype(bool).ravel().tolist(),
        "unmasked": [plain(v) for v in data[~mask].ravel().tolist()],
    }


def main() -> int:
    out = {}
    for name, keys in CASES.items():
        with asdf.open(FIXTURES / name, lazy_load=False, memmap=False) as af:
            out[name] = {k: entry(af[k]) for k in keys}
    text = json.dumps(out, indent=1, sort_keys=True) + "\n"
    if "--check" in sys.argv:
        if OUT.read_text() != text:
            print(f"{OUT} differs from python asdf's masks; rerun tests/oracle/masks.py")
            return 1
        print(f"{OUT.name}: python asdf gives the committed masks")
        return 0
    OUT.write_text(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
