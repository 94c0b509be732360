#!/usr/bin/env python3
"""Writes the Roman products of this folder with roman_datamodels' own maker utilities.

Run with the FITS oracle venv (``.venv-fits``, made by ``.ci/run``) after installing
tests/roman-requirements.txt into it (``.ci/run`` does both):

    .venv-fits/bin/pip install --no-deps --require-hashes -r tests/roman-requirements.txt
    .venv-fits/bin/python asdf-codegen/tests/roman/generate.py           # writes them
    .venv-fits/bin/python asdf-codegen/tests/roman/generate.py --check   # re-derives, compares

One file per product of issue 33: image, raw, ramp, dark, flat, gain, mask, mosaic. Each is
the model class's ``create_fake_data`` (roman_datamodels 1.2.0 over rad 1.2.1: every required
key filled in, arrays of the schema's datatype), with small shapes, then made deterministic and
less uniform: ``meta.file_date`` and ``meta.filename`` fixed (``DataModel.save`` would stamp the
time of writing), and every top-level array filled with ``(i * 7 + k) % 97`` in C order (``k``
the key's place among the product's sorted keys) so that a value moved or lost shows. The model validates, then is
written as ``DataModel.to_asdf`` writes it (the tree under ``roman``, lz4 block compression,
roman_datamodels' inline threshold of 512 elements: the small arrays inline, the larger in lz4
blocks) but without its clock, and with the history's extensions sorted (python asdf lists them in
the order of a set of objects), so re-running reproduces the files byte for byte.
"""

from __future__ import annotations

import io
import sys
import tempfile
import warnings
from pathlib import Path

import asdf
import lz4
import numpy as np
import rad
import roman_datamodels
import roman_datamodels.datamodels as rdm
from astropy.time import Time
from roman_datamodels.datamodels._core import DEFAULT_ARRAY_INLINE_THRESHOLD

HERE = Path(__file__).resolve().parent
PINS = {
    "asdf": ("6.0.0", asdf.__version__),
    "rad": ("1.2.1", rad.__version__),
    "roman_datamodels": ("1.2.0", roman_datamodels.__version__),
    "lz4": ("4.4.5", lz4.__version__),
}

# file stem -> (model class, shape given to create_fake_data)
PRODUCTS = {
    "image": (rdm.ImageModel, (32, 32)),
    "raw": (rdm.ScienceRawModel, (2, 32, 32)),
    "ramp": (rdm.RampModel, (2, 32, 32)),
    "dark": (rdm.DarkRefModel, (2, 32, 32)),
    "flat": (rdm.FlatRefModel, (32, 32)),
    "gain": (rdm.GainRefModel, (32, 32)),
    "mask": (rdm.MaskRefModel, (32, 32)),
    "mosaic": (rdm.MosaicModel, (32, 32)),
}
FILE_DATE = "2026-01-02T03:04:05.000"


def make(name: str):
    cls, shape = PRODUCTS[name]
    model = cls.create_fake_data(shape=shape)
    meta = model.meta
    if "file_date" in meta:
        meta.file_date = Time(FILE_DATE, format="isot", scale="utc")
    if "filename" in meta:
        meta.filename = f"{name}.asdf"
    for k, key in enumerate(sorted(model._instance)):
        value = model._instance[key]
        if isinstance(value, np.ndarray) and value.size:
            filled = (np.arange(value.size) * 7 + k) % 97
            value[...] = filled.reshape(value.shape).astype(value.dtype)
    model.validate()
    return model


def write(model, path: Path):
    af = asdf.AsdfFile()
    af["roman"] = model._instance
    with asdf.config_context() as cfg:
        cfg.array_inline_threshold = DEFAULT_ARRAY_INLINE_THRESHOLD
        # python asdf lists the extensions used in the order of a set of objects (not fixed
        # by PYTHONHASHSEED): a first write into memory gives the history, sorted here by
        # extension; the real write updates those entries in place, keeping the order
        first = io.BytesIO()
        af.write_to(first, all_array_compression="lz4")
        first.seek(0)
        with asdf.open(first, lazy_load=False, lazy_tree=False) as written:
            used = list(written["history"]["extensions"])
        af["history"] = {"extensions": sorted(used, key=lambda e: e["extension_uri"])}
        af.write_to(path, all_array_compression="lz4")


def main() -> int:
    wrong = {k: v for k, v in PINS.items() if v[0] != v[1]}
    if wrong:
        sys.exit(f"refusing to run: found {wrong} (want, found); see tests/roman-requirements.txt")
    check = "--check" in sys.argv[1:]
    warnings.simplefilter("error")
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp) if check else HERE
        bad = []
        for name in PRODUCTS:
            path = out / f"{name}.asdf"
            write(make(name), path)
            if check:
                committed = HERE / path.name
                if not committed.exists() or committed.read_bytes() != path.read_bytes():
                    bad.append(path.name)
            else:
                print(path.name, path.stat().st_size)
    if bad:
        print(f"differ from a fresh run of generate.py: {', '.join(bad)}", file=sys.stderr)
        return 1
    if check:
        print(f"roman products: {len(PRODUCTS)} files equal a fresh run of roman_datamodels "
              f"{roman_datamodels.__version__} (rad {rad.__version__})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
