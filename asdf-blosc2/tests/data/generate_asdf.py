"""Writes ASDF files whose blocks python asdf 6.0.0 compressed as ``bsc2`` and ``bls2``
(through the test-only compressors of tests/oracle/blosc2_compressors.py and python-blosc2
4.14.1), each beside an uncompressed twin with the same tree, into asdf/:

    .venv-oracle/bin/python asdf-blosc2/tests/data/generate_asdf.py

asdf-core/tests/it/blosc2_blocks.rs reads each and compares its arrays with the twin's.
"""
import os
import sys
from pathlib import Path

import asdf
import blosc2
import numpy as np

assert asdf.__version__ == "6.0.0" and blosc2.__version__ == "4.14.1"
ROOT = Path(__file__).resolve().parents[3]
sys.path.insert(0, str(ROOT / "tests" / "oracle"))
import blosc2_compressors  # noqa: E402

blosc2_compressors.register()
OUT = Path(__file__).resolve().parent / "asdf"


def arrays():
    i = np.arange(600_000)
    return {
        # more than one 4 MiB chunk in a bsc2 frame
        "f8": ((i % 1000) * 0.25 + (i // 1000) % 3).astype("<f8").reshape(600, 1000),
        "i4": ((i[:5000] * 7919) % 65521 - 30000).astype(">i4"),
        "u1": (i[:3000] % 7).astype("u1"),
        "rec": np.array([(k, k * 0.5, b"n%d" % (k % 10)) for k in range(300)],
                        dtype=[("id", "<i4"), ("x", "<f8"), ("name", "S3")]),
        "zeros": np.zeros(10_000, "<f4"),
    }


def main():
    OUT.mkdir(exist_ok=True)
    for f in OUT.glob("*.asdf"):
        f.unlink()
    for label in ("bsc2", "bls2"):
        tree = arrays()
        af = asdf.AsdfFile(tree)
        for a in tree.values():
            af.set_array_compression(a, label, typesize=a.dtype.itemsize)
        af.write_to(OUT / f"{label}.asdf")
        asdf.AsdfFile(arrays()).write_to(OUT / f"{label}.plain.asdf",
                                         all_array_compression="zlib")
    total = sum(os.path.getsize(p) for p in OUT.iterdir())
    print(f"{len(list(OUT.iterdir()))} files, {total} bytes", file=sys.stderr)


if __name__ == "__main__":
    main()
