#!/usr/bin/env python3
"""Writes small JWST products with stdatamodels 6.0.0, for asdf_rs's converter tests
(asdf-python/tests/test_converters.py). Run with the FITS oracle venv (its pins,
tests/oracle-fits-requirements.txt: stdatamodels 6.0.0, python asdf 6.0.0, asdf-astropy,
gwcs):

    .venv-fits/bin/python asdf-python/tests/data/jwst/generate.py           # writes them
    .venv-fits/bin/python asdf-python/tests/data/jwst/generate.py --check   # re-derives, compares

``image.asdf`` (``ImageModel``, 16 x 12, with a gwcs imaging WCS in ``meta.wcs``),
``cube.asdf`` (``CubeModel``, 3 x 8 x 6) and ``multislit.asdf`` (``MultiSlitModel`` with two
``SlitModel`` slits, a list of sub-models). Each array is filled with
``(i * 7 + k) % 97`` in C order (``k`` the array's place among the model's arrays), metadata
are fixed values, and the model is written as ``DataModel.to_asdf`` writes it (``on_save``,
validation, the tree in an ``asdf.AsdfFile``) but with ``meta.date`` (and the slits') fixed
instead of the clock's and the history's extensions sorted (python asdf lists them in the order of a set),
so a re-run gives the same bytes.
"""

from __future__ import annotations

import io
import sys
import tempfile
from pathlib import Path

import asdf
import astropy.units as u
import gwcs
import numpy as np
import stdatamodels
from astropy import coordinates as coord
from astropy.modeling import models
from gwcs import coordinate_frames as cf
from stdatamodels.jwst import datamodels
from stdatamodels.model_base import convert_fitsrec_to_array_in_tree

HERE = Path(__file__).resolve().parent
PINS = {
    "asdf": ("6.0.0", asdf.__version__),
    "stdatamodels": ("6.0.0", stdatamodels.__version__),
    "gwcs": ("1.0.3", gwcs.__version__),
    "numpy": ("2.4.6", np.__version__),
}
DATE = "2026-01-02T03:04:05.000"
# the arrays filled, with the schemas' datatypes
ARRAYS = [("data", np.float32), ("dq", np.uint32), ("err", np.float32)]


def fill(model, shape) -> None:
    for k, (name, dtype) in enumerate(ARRAYS):
        size = int(np.prod(shape))
        setattr(model, name, ((np.arange(size) * 7 + k) % 97).reshape(shape).astype(dtype))


def meta(model) -> None:
    model.meta.telescope = "JWST"
    model.meta.instrument.name = "NIRCAM"
    model.meta.instrument.detector = "NRCA1"
    model.meta.instrument.filter = "F200W"
    model.meta.observation.date = "2026-01-02"
    model.meta.observation.time = "03:04:05.000"
    model.meta.exposure.type = "NRC_IMAGE"
    model.meta.exposure.start_time = 60311.5
    model.meta.exposure.exposure_time = 107.37
    model.meta.subarray.name = "FULL"
    model.meta.target.ra = 5.63
    model.meta.target.dec = -72.05


def imaging_wcs() -> gwcs.WCS:
    shift = models.Shift(-7.5) & models.Shift(-5.5)
    scale = models.Scale(0.031 / 3600) & models.Scale(0.031 / 3600)
    sky = models.Pix2Sky_TAN() | models.RotateNative2Celestial(5.63, -72.05, 180.0)
    detector = cf.Frame2D(name="detector", axes_order=(0, 1), unit=(u.pix, u.pix))
    world = cf.CelestialFrame(reference_frame=coord.ICRS(), name="world", unit=(u.deg, u.deg))
    return gwcs.WCS([(detector, shift | scale | sky), (world, None)])


def image():
    m = datamodels.ImageModel((16, 12))
    meta(m)
    fill(m, m.data.shape)
    m.meta.wcs = imaging_wcs()
    return m


def cube():
    m = datamodels.CubeModel((3, 8, 6))
    meta(m)
    fill(m, m.data.shape)
    return m


def multislit():
    m = datamodels.MultiSlitModel()
    meta(m)
    m.meta.exposure.type = "NRS_MSASPEC"
    for i in range(2):
        slit = datamodels.SlitModel((5 + i, 10))
        fill(slit, slit.data.shape)
        slit.name = f"S{i:03d}"
        slit.xstart = 100 + 10 * i
        slit.ystart = 20 * i
        slit.source_id = 1000 + i
        m.slits.append(slit)
    return m


PRODUCTS = {"image": image, "cube": cube, "multislit": multislit}


def write(model, path: Path) -> None:
    # DataModel.to_asdf, with meta.date fixed after on_save stamped the clock's
    model.on_save(str(path))
    model.meta.date = DATE
    for slit in model._instance.get("slits", []):
        # SlitModel stamps its own meta.date when appended
        slit["meta"]["date"] = DATE
    model.validate()
    tree = convert_fitsrec_to_array_in_tree(model._instance)
    af = asdf.AsdfFile()
    af._tree = tree
    first = io.BytesIO()
    af.write_to(first)
    first.seek(0)
    with asdf.open(first, lazy_load=False, lazy_tree=False) as written:
        used = list(written["history"]["extensions"])
    af["history"] = {"extensions": sorted(used, key=lambda e: e["extension_uri"])}
    af.write_to(path)


def main() -> int:
    wrong = {k: v for k, v in PINS.items() if v[0] != v[1]}
    if wrong:
        sys.exit(f"refusing to run: found {wrong} (want, found); see tests/oracle-fits-requirements.txt")
    check = "--check" in sys.argv[1:]
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp) if check else HERE
        bad = []
        for name, make in PRODUCTS.items():
            path = out / f"{name}.asdf"
            write(make(), path)
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
        print(f"JWST products: {len(PRODUCTS)} files equal a fresh run of stdatamodels "
              f"{stdatamodels.__version__}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
