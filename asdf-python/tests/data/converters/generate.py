#!/usr/bin/env python3
"""Writes the files of asdf_rs's converter tests (asdf-python/tests/test_converters.py) with
python asdf 6.0.0, asdf-astropy 0.11.0 and gwcs 1.0.3, the FITS oracle venv's pins
(tests/oracle-fits-requirements.txt):

    .venv-fits/bin/python asdf-python/tests/data/converters/generate.py           # writes them
    .venv-fits/bin/python asdf-python/tests/data/converters/generate.py --check   # re-derives, compares

``astropy.asdf``: astropy's objects as asdf-astropy writes them: quantities (a scalar, an
array in a block, an inline one, one object at two places, so under a YAML anchor), times
(a UTC ISO time, TT times of an MJD array in a block, a TDB time with a location), units
(a simple, a composed and a dimensionless one), an ``astropy.table.Table`` and a ``QTable``
(a quantity column), a ``SkyCoord``, an astropy model (a compound of ``Shift | Scale``),
plus a python asdf ``core/complex`` and a node tagged with a tag no extension knows
(``tag:example.org:unknown/thing-1.0.0``), which readers give as a tagged dict with a warning.

``gwcs.asdf``: a ``gwcs.WCS`` of an imaging detector (Shift & Shift | Scale & Scale |
Pix2Sky_TAN | RotateNative2Celestial from a ``Frame2D`` to ICRS) and a spectral one with a
tabular lookup (``Tabular1D`` over an array in a block) into a ``SpectralFrame``.

Written without python asdf's clock, with the history's extensions sorted (python asdf lists
them in the order of a set), so a re-run gives the same bytes.
"""

from __future__ import annotations

import io
import sys
import tempfile
import warnings
from pathlib import Path

import asdf
import asdf_astropy
import astropy
import astropy.units as u
import gwcs
import numpy as np
from asdf.tagged import TaggedDict
from astropy import coordinates as coord
from astropy.modeling import models
from astropy.table import QTable, Table
from astropy.time import Time
from gwcs import coordinate_frames as cf

HERE = Path(__file__).resolve().parent
PINS = {
    "asdf": ("6.0.0", asdf.__version__),
    "asdf_astropy": ("0.11.0", asdf_astropy.__version__),
    "astropy": ("8.0.2", astropy.__version__),
    "gwcs": ("1.0.3", gwcs.__version__),
    "numpy": ("2.4.6", np.__version__),
}


def astropy_tree() -> dict:
    shared = 42.0 * u.km / u.s
    return {
        "quantity": 3.5 * u.m,
        "quantity_array": (np.arange(600.0) * 0.25).reshape(20, 30) * u.s,
        "quantity_inline": u.Quantity([1, 2, 3], u.Jy, dtype=np.int32),
        "shared": {"first": shared, "second": shared},
        "time": Time("2026-01-02T03:04:05.678", scale="utc"),
        "time_array": Time(60000.0 + np.arange(40) / 8.0, format="mjd", scale="tt"),
        "time_located": Time(
            "2026-03-04T05:06:07",
            scale="tdb",
            location=coord.EarthLocation.from_geodetic(-70.4 * u.deg, -24.6 * u.deg, 2635 * u.m),
        ),
        "units": [u.m, u.erg / (u.s * u.cm**2 * u.AA), u.dimensionless_unscaled],
        "table": Table(
            {"a": np.arange(5, dtype=np.int64), "b": np.linspace(0.0, 1.0, 5), "c": list("vwxyz")},
            meta={"origin": "generate.py"},
        ),
        "qtable": QTable({"flux": np.arange(4.0) * u.mJy, "id": np.arange(4, dtype=np.int16)}),
        "coord": coord.SkyCoord(ra=[10.5, 11.0] * u.deg, dec=[-5.25, 41.0] * u.deg, frame="icrs"),
        "model": models.Shift(1.5) | models.Scale(2.0),
        "complex": 1.5 - 2.25j,
        "unknown": TaggedDict({"a": 1, "b": [1, 2]}, "tag:example.org:unknown/thing-1.0.0"),
        "plain": {"ints": [1, 2, 3], "array": np.arange(12, dtype=np.uint8).reshape(3, 4)},
    }


def imaging_wcs() -> gwcs.WCS:
    shift = models.Shift(-15.5) & models.Shift(-11.5)
    scale = models.Scale(0.1 / 3600) & models.Scale(0.1 / 3600)
    sky = models.Pix2Sky_TAN() | models.RotateNative2Celestial(5.63, -72.05, 180.0)
    detector = cf.Frame2D(name="detector", axes_order=(0, 1), unit=(u.pix, u.pix))
    icrs = cf.CelestialFrame(reference_frame=coord.ICRS(), name="icrs", unit=(u.deg, u.deg))
    return gwcs.WCS([(detector, shift | scale | sky), (icrs, None)])


def spectral_wcs() -> gwcs.WCS:
    lookup = models.Tabular1D(
        points=np.arange(300.0), lookup_table=1.0 + np.arange(300.0) ** 1.5 / 1e4, bounds_error=False
    )
    detector = cf.CoordinateFrame(
        naxes=1, axes_type=("SPECTRAL",), axes_order=(0,), name="pixel", unit=(u.pix,)
    )
    spec = cf.SpectralFrame(name="wavelength", unit=(u.micron,), axes_names=("lambda",))
    return gwcs.WCS([(detector, lookup), (spec, None)])


def gwcs_tree() -> dict:
    return {"imaging": imaging_wcs(), "spectral": spectral_wcs()}


FILES = {"astropy.asdf": astropy_tree, "gwcs.asdf": gwcs_tree}


def write(tree: dict, path: Path) -> None:
    af = asdf.AsdfFile(tree)
    # python asdf lists the extensions used in the order of a set of objects: a first write
    # into memory gives them, sorted here; the real write updates the entries in place
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
        for name, make in FILES.items():
            path = out / name
            with warnings.catch_warnings():
                # the unknown tag is written on purpose
                warnings.filterwarnings("ignore", "tag:example.org:unknown", asdf.exceptions.AsdfWarning)
                write(make(), path)
            if check:
                committed = HERE / name
                if not committed.exists() or committed.read_bytes() != path.read_bytes():
                    bad.append(name)
            else:
                print(name, path.stat().st_size)
    if bad:
        print(f"differ from a fresh run of generate.py: {', '.join(bad)}", file=sys.stderr)
        return 1
    if check:
        print(f"converter files: {len(FILES)} equal a fresh run of python asdf {asdf.__version__}, "
              f"asdf-astropy {asdf_astropy.__version__}, gwcs {gwcs.__version__}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
