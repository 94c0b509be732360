#!/usr/bin/env python3
"""Generate the ASDF Standard 1.7.0 files in tests/data/standard-1.7.0/.

    .venv-oracle/bin/python tests/data/standard-1.7.0/generate.py           # writes them
    .venv-oracle/bin/python tests/data/standard-1.7.0/generate.py --check   # re-derives, compares

Standard 1.7.0 is in development: python asdf 6.0.0 (with asdf_standard 1.5.0, pinned in
tests/oracle-requirements.txt) knows it only when ASDF_UNSTABLE_CORE_SCHEMAS=1 is set before
it is imported, which this script does. Its core manifest (asdf_standard's
resources/unstable/manifests/asdf-format.org/core/core-1.7.0.yaml) is 1.6.0's with
`core/ndarray-1.2.0` and `core/integer-1.2.0`, whose element type is the separate
`core/datatype-1.0.0` schema.

- `arrays.asdf`, `inline.asdf`: written by python asdf (`version="1.7.0"`), valid.
- `NAME.expect.json`: the canonical sidecar (tests/oracle/canonical.py) of each file python
  reads; asdf-cli/tests/it/validate_blocks.rs compares `asdftool canonical` with them.
- `invalid_*.asdf`: hand-written YAML (no blocks) that python asdf, with the variable set,
  opens and rejects with a ValidationError; `old_ndarray_tag.asdf` is hand-written too and
  valid: under 1.7.0 no schema is bound to `core/ndarray-1.1.0`, so its bad datatype is
  not checked (python warns that the tag is unknown).

Their verdicts are in tests/oracle/validation-verdicts.json (tests/oracle/validation_verdicts.py,
which sets the same variable), checked against asdf-rs by asdf-core/tests/it/schema_validate.rs;
asdf-cli/tests/it/validate_blocks.rs patches the block headers of `arrays.asdf`.

The output is deterministic (fixed values, no timestamps), so re-running reproduces the files.
"""

from __future__ import annotations

import os
import sys
import warnings
from pathlib import Path

os.environ["ASDF_UNSTABLE_CORE_SCHEMAS"] = "1"
warnings.filterwarnings("ignore", message=".*ASDF_UNSTABLE_CORE_SCHEMAS.*")

import asdf  # noqa: E402 (after the environment variable)
import numpy as np  # noqa: E402
from asdf.tags.core import IntegerType  # noqa: E402

PINNED_ASDF = "6.0.0"
HERE = Path(__file__).resolve().parent
HEADER = "#ASDF 1.0.0\n#ASDF_STANDARD 1.7.0\n%YAML 1.1\n%TAG ! tag:stsci.edu:asdf/\n--- !core/asdf-1.1.0\n"


def written() -> dict[str, bytes]:
    out = {}

    def write(name, tree, setup=None, **kwargs):
        af = asdf.AsdfFile(tree, version="1.7.0")
        if setup is not None:
            setup(af)
        path = HERE / (name + ".tmp")
        with warnings.catch_warnings():
            warnings.simplefilter("error")
            af.write_to(path, **kwargs)
        out[name] = path.read_bytes()
        path.unlink()

    image = np.arange(24, dtype="<f8").reshape(4, 6)
    records = np.array(
        [(1, (2.5, [1, 2, 3]), b"ab"), (4, (5.5, [6, 7, 8]), b"cd")],
        dtype=[("id", ">i4"), ("pos", [("x", "<f4"), ("v", "<u2", (3,))]), ("tag", "S2")],
    )
    tree = {
        # block 0, raw
        "image": image,
        # a view of block 0: offset and strides
        "column": image[1:, 2],
        # block 1, zlib-compressed
        "counts": np.arange(100, dtype=">u2"),
        # block 2: a record datatype with a nested record and a subarray field
        "records": records,
        # block 3: ucs4 text
        "names": np.array(["alpha", "beta"]),
        # core/integer-1.2.0, its words in block 4
        "big": IntegerType(2**70 + 5),
        "neg": IntegerType(-(2**65)),
    }

    def compress(af):
        af.set_array_compression(af.tree["counts"], "zlib")

    write("arrays.asdf", tree, setup=compress)
    write(
        "inline.asdf",
        {"a": np.array([[1, 2], [3, 4]], dtype="<i2"), "b": np.array([0.5, -1.5]), "z": 1 + 2j},
        all_array_storage="inline",
    )

    out["invalid_datatype.asdf"] = (
        HEADER + "a: !core/ndarray-1.2.0 {data: [1, 2], datatype: float128, shape: [2]}\n...\n"
    ).encode()
    out["invalid_nested_field.asdf"] = (
        HEADER
        + "a: !core/ndarray-1.2.0\n  data: [[1, 2]]\n  shape: [1]\n"
        + "  datatype: [{name: p, datatype: [{name: q, datatype: int7}]}, {name: r, datatype: int8}]\n...\n"
    ).encode()
    out["invalid_integer_sign.asdf"] = (
        HEADER + "n: !core/integer-1.2.0 {sign: '*', words: !core/ndarray-1.2.0 [1, 2]}\n...\n"
    ).encode()
    out["invalid_mask.asdf"] = (
        HEADER
        + "a: !core/ndarray-1.2.0 {data: [1, 2], mask: !core/ndarray-1.2.0 [1.5, 0.5]}\n...\n"
    ).encode()
    out["old_ndarray_tag.asdf"] = (
        HEADER + "a: !core/ndarray-1.1.0 {data: [1, 2], datatype: float128, shape: [2]}\n...\n"
    ).encode()
    return out


# The files python asdf reads and converts (the others are invalid, or hold a tag python has
# no converter for under 1.7.0), and so get a canonical sidecar.
READABLE = ("arrays.asdf", "inline.asdf")


def sidecars(files: dict[str, bytes]) -> dict[str, bytes]:
    """NAME.expect.json for each readable file, by tests/oracle/canonical.py (as generate.py
    of the fixtures makes them), from the bytes about to be written."""
    sys.path.insert(0, str(HERE.parent.parent / "oracle"))
    import canonical  # noqa: E402

    out = {}
    for name in READABLE:
        path = HERE / (name + ".tmp")
        path.write_bytes(files[name])
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                doc = canonical.document(path)
        finally:
            path.unlink()
        out[name.removesuffix(".asdf") + ".expect.json"] = canonical.to_text(doc).encode()
    return out


def main() -> int:
    if asdf.__version__ != PINNED_ASDF:
        sys.exit(f"refusing to run: asdf {asdf.__version__} found, asdf=={PINNED_ASDF} is the oracle")
    if "1.7.0" not in [str(v) for v in asdf.versioning.supported_versions]:
        sys.exit("refusing to run: python asdf does not know ASDF Standard 1.7.0")
    files = written()
    files.update(sidecars(files))
    if "--check" in sys.argv[1:]:
        bad = [n for n, b in files.items() if not (HERE / n).is_file() or (HERE / n).read_bytes() != b]
        for n in bad:
            print(f"{n}: differs from a fresh derivation")
        print(f"{len(files) - len(bad)} of {len(files)} files reproduced")
        return 1 if bad else 0
    for name, data in files.items():
        (HERE / name).write_bytes(data)
        print(f"  {name:28} {len(data):6d} bytes")
    return 0


if __name__ == "__main__":
    sys.exit(main())
