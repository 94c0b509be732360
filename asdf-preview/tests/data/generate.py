#!/usr/bin/env python3
"""Generate asdf-preview's test images and the limits astropy gives them.

    .venv-fits/bin/python asdf-preview/tests/data/generate.py           # writes them
    .venv-fits/bin/python asdf-preview/tests/data/generate.py --check   # re-derives, compares

In the FITS oracle venv (tests/oracle-fits-requirements.txt: astropy 8.0.2, numpy 2.4.6,
python asdf 6.0.0 with asdf-astropy 0.11.0). Writes, beside this file:

- `images.asdf`: the arrays (python asdf writes them; astropy's Quantity through
  asdf-astropy): `sources` (float32 noise with stars and hot pixels), `nans` (float64 with NaN
  rows, a NaN blob and infinities), `constant`, `tiny` (2 x 2), `three` (1 x 3: fewer samples
  than zscale's min_npixels), `int16_be` (big-endian integers), `masked` (a numpy masked
  array: very bright masked pixels that must not move the limits), `cube` (3 x 64 x 80),
  `spectrum` (a 1-D Quantity in nm), `table` (a record array: wavelength, flux, name) and
  `names` (strings);
- `expected.json`: for each image (a cube's plane 0 and 2 as `cube[0]`, `cube[2]`) the limits
  of astropy.visualization's `ZScaleInterval()`, `MinMaxInterval()` and
  `PercentileInterval(99.5)`, their `get_limits` on the array as numpy holds it (masked
  arrays with their mask); for `spectrum` its unit.

Values come from numpy's PCG64 with a fixed seed, so a re-run reproduces `expected.json`
byte for byte and `images.asdf`'s arrays exactly (`--check` compares those; the order in which
python asdf lists the extensions it used in the file's history varies from run to run).
"""

from __future__ import annotations

import json
import os
import sys
import tempfile
import warnings
from pathlib import Path

if os.environ.get("PYTHONHASHSEED") != "0":
    os.environ["PYTHONHASHSEED"] = "0"
    os.execv(sys.executable, [sys.executable, *sys.argv])

import asdf  # noqa: E402
import astropy  # noqa: E402
import astropy.units as u  # noqa: E402
import numpy as np  # noqa: E402
from astropy.visualization import (  # noqa: E402
    MinMaxInterval,
    PercentileInterval,
    ZScaleInterval,
)

HERE = Path(__file__).resolve().parent
PINS = {
    "asdf": ("6.0.0", asdf.__version__),
    "astropy": ("8.0.2", astropy.__version__),
    "numpy": ("2.4.6", np.__version__),
}


def stars(shape, rng, n, peak):
    """`n` Gaussian stars of random position, width and brightness up to `peak`."""
    yy, xx = np.mgrid[0 : shape[0], 0 : shape[1]]
    out = np.zeros(shape)
    for _ in range(n):
        y, x = rng.uniform(0, shape[0]), rng.uniform(0, shape[1])
        s = rng.uniform(1.0, 3.5)
        out += rng.uniform(0.05, 1.0) * peak * np.exp(-((yy - y) ** 2 + (xx - x) ** 2) / (2 * s * s))
    return out


def arrays():
    rng = np.random.default_rng(20261128)
    sources = rng.normal(100.0, 5.0, (300, 200)) + stars((300, 200), rng, 40, 5000.0)
    sources[rng.integers(0, 300, 30), rng.integers(0, 200, 30)] = 60000.0  # hot pixels
    nans = rng.normal(-3.0, 0.5, (150, 170)) + stars((150, 170), rng, 10, 40.0)
    nans[10:14, :] = np.nan
    nans[80:100, 30:60] = np.nan
    nans[5, 5] = np.inf
    nans[140, 160] = -np.inf
    int16 = (rng.normal(1000.0, 30.0, (120, 100)) + stars((120, 100), rng, 15, 20000.0)).clip(
        -32768, 32767
    )
    masked_data = rng.normal(10.0, 1.0, (100, 100)).astype("f4")
    mask = np.zeros((100, 100), bool)
    mask[40:60, 20:80] = True
    masked_data[mask] = 1e6
    cube = rng.normal(0.0, 1.0, (3, 64, 80)) + np.array([0.0, 50.0, 400.0])[:, None, None]
    cube[2] += stars((64, 80), rng, 5, 300.0)
    wave = np.linspace(400.0, 700.0, 500)
    spectrum = 1.0 + 0.3 * np.sin(wave / 20.0) - 0.8 * np.exp(-((wave - 656.3) ** 2) / 2.0)
    table = np.zeros(50, dtype=[("wavelength", "<f8"), ("flux", "<f4"), ("name", "S8")])
    table["wavelength"] = np.linspace(1.0, 2.0, 50)
    table["flux"] = (np.linspace(1.0, 2.0, 50) ** 2).astype("f4")
    table["name"] = [f"s{i}".encode() for i in range(50)]
    return {
        "sources": sources.astype("<f4"),
        "nans": nans.astype("<f8"),
        "constant": np.full((40, 50), 7.5, dtype="<f4"),
        "tiny": np.array([[1.0, 2.0], [3.0, 40.0]], dtype="<f4"),
        "three": np.array([[5.0, -2.0, 9.0]], dtype="<f8"),
        "int16_be": int16.astype(">i2"),
        "masked": np.ma.MaskedArray(masked_data, mask=mask),
        "cube": cube.astype("<f4"),
        "spectrum": spectrum * u.nm / u.nm * u.Jy,
        "table": table,
        "names": np.array(["alpha", "beta", "gamma"]),
    }


def limits(values):
    out = {}
    for name, interval in (
        ("zscale", ZScaleInterval()),
        ("minmax", MinMaxInterval()),
        ("percent99.5", PercentileInterval(99.5)),
    ):
        lo, hi = interval.get_limits(values)
        out[name] = [float(lo), float(hi)]
    return out


def expected(arrs):
    images = {}
    for name in ("sources", "nans", "constant", "tiny", "three", "int16_be", "masked"):
        images[name] = limits(arrs[name])
    for plane in (0, 2):
        images[f"cube[{plane}]"] = limits(arrs["cube"][plane])
    return {"images": images, "spectrum_unit": arrs["spectrum"].unit.to_string()}


def write(folder: Path):
    arrs = arrays()
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        asdf.AsdfFile(arrs).write_to(folder / "images.asdf")
    text = json.dumps(expected(arrs), indent=1, sort_keys=True) + "\n"
    (folder / "expected.json").write_text(text)


def main():
    for name, (want, have) in PINS.items():
        if want != have:
            sys.exit(f"{name} {have} is not the pinned {want}")
    if "--check" in sys.argv[1:]:
        with tempfile.TemporaryDirectory() as tmp:
            write(Path(tmp))
            bad = []
            if (Path(tmp) / "expected.json").read_bytes() != (HERE / "expected.json").read_bytes():
                bad.append("expected.json")
            with asdf.open(Path(tmp) / "images.asdf") as fresh, asdf.open(HERE / "images.asdf") as kept:
                for key in arrays():
                    a, b = fresh[key], kept[key]
                    same = (
                        type(a) is type(b)
                        and np.asarray(a).dtype == np.asarray(b).dtype
                        and np.array_equal(np.asarray(a), np.asarray(b), equal_nan=a.dtype.kind == "f")
                        and np.array_equal(np.ma.getmaskarray(a), np.ma.getmaskarray(b))
                        and getattr(a, "unit", None) == getattr(b, "unit", None)
                    )
                    if not same:
                        bad.append(f"images.asdf[{key!r}]")
        if bad:
            sys.exit(f"asdf-preview/tests/data: {', '.join(bad)} differ from a fresh generation")
        print("asdf-preview/tests/data: expected.json re-derived byte for byte, images.asdf's arrays equal")
        return
    write(HERE)
    print(f"wrote {HERE / 'images.asdf'} and {HERE / 'expected.json'}")


if __name__ == "__main__":
    main()
