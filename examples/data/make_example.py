#!/usr/bin/env python3
"""Write examples/data/observation.asdf with python asdf 6.0.0 (the reference implementation).

Run from the repository root with the oracle venv:
    .venv-oracle/bin/python examples/data/make_example.py
The output is deterministic (fixed seed, fixed metadata).
"""
import datetime
import sys

import asdf
import numpy as np

if asdf.__version__ != "6.0.0":
    sys.exit(f"pinned to asdf 6.0.0, found {asdf.__version__}")

rng = np.random.default_rng(20261122)
sci = rng.normal(100.0, 5.0, size=(64, 64)).astype(np.float32)
err = np.sqrt(np.abs(sci)).astype(np.float32)
dq = np.zeros((64, 64), dtype=np.uint16)
dq[10:12, 20:40] = 4
sources = np.array(
    [(1, 10.5, 20.25, b"star"), (2, 33.0, 41.75, b"galaxy"), (3, 50.125, 7.5, b"star")],
    dtype=[("id", "<i4"), ("x", "<f8"), ("y", "<f8"), ("kind", "S8")],
)
tree = {
    "meta": {
        "telescope": "EXAMPLE",
        "instrument": {"name": "IMAGER", "filter": "F200W", "detector": 1},
        "exposure": {"start": datetime.datetime(2026, 11, 1, 3, 4, 5), "duration_s": 1200.5},
        "observer": "asdf-rs",
    },
    "sci": sci,
    "err": err,
    "dq": dq,
    "sources": sources,
    "wavelengths_um": np.linspace(1.5, 2.5, 11),
}
af = asdf.AsdfFile(tree)
af.set_array_compression(af["sci"], "zlib")
af.set_array_compression(af["err"], "lz4")
af.set_array_storage(af["wavelengths_um"], "inline")
af.write_to("examples/data/observation.asdf")
print("wrote examples/data/observation.asdf")
# Its canonical content (docs/canonical.md), from the repository root:
# .venv-oracle/bin/python tests/oracle/canonical.py dump examples/data/observation.asdf -o examples/data/observation.expect.json
