#!/usr/bin/env python3
"""Writes the ASDF-in-FITS fixtures (JWST-like products) into this folder.

Run with the FITS oracle venv (``.venv-fits``, made by ``.ci/run`` from
tests/oracle-fits-requirements.txt: astropy 8.0.2, stdatamodels 6.0.0, asdf 6.0.0):

    .venv-fits/bin/python tests/data/asdf-in-fits/generate.py
    .venv-fits/bin/python tests/oracle/fits_oracle.py sidecars --write

Products written by stdatamodels itself (``image``, ``cube``, ``spectra``), and files assembled
with astropy around an ASDF tree for what stdatamodels does not write but FITS readers meet:
scaled integers (``scaled``), an ASDF extension stored as a uint8 image with ``fits:INDEX``
sources and an ASDF block of its own (``image_extension``), and a binary table with every
column type (``table_types``). Each file's ``.expect.json`` sidecar is its canonical form as
astropy and python asdf read it (tests/oracle/fits_oracle.py).
"""

from __future__ import annotations

import io
import os
import sys
from pathlib import Path

PINS = {"astropy": "8.0.2", "stdatamodels": "6.0.0", "asdf": "6.0.0"}
HERE = Path(__file__).resolve().parent


def check_versions():
    import asdf
    import astropy
    import stdatamodels

    found = {"astropy": astropy.__version__, "stdatamodels": stdatamodels.__version__,
             "asdf": asdf.__version__}
    if found != PINS:
        sys.exit(f"refusing to run: found {found}, the pins are {PINS}")


def fixed_meta(model, name):
    # fixed dates so that the files are the same on every run
    model.meta.date = "2026-01-02T03:04:05.000"
    model.meta.filename = name
    model.meta.telescope = "JWST"
    model.meta.instrument.name = "NIRCAM"
    model.meta.exposure.exposure_time = 1234.5
    model.meta.observation.date = "2026-01-02"


def save(model, name):
    path = HERE / name
    model.save(str(path))
    # stdatamodels stamps DATE with the time of writing: make it fixed
    from astropy.io import fits

    with fits.open(path, mode="update") as hdul:
        hdul[0].header["DATE"] = "2026-01-02T03:04:05.000"


def products(rng):
    import numpy as np
    from stdatamodels.jwst import datamodels

    m = datamodels.ImageModel((6, 7))
    m.data = rng.normal(100, 10, (6, 7)).astype(np.float32)
    m.data[0, 0] = np.nan
    m.dq = rng.integers(0, 2**32, (6, 7), dtype=np.uint32)
    m.dq[0, :3] = [0, 2**31, 2**32 - 1]
    m.err = rng.random((6, 7)).astype(np.float32)
    fixed_meta(m, "image.fits")
    save(m, "image.fits")

    c = datamodels.CubeModel((3, 4, 5))
    c.data = rng.random((3, 4, 5)).astype(np.float32)
    c.dq = np.arange(60, dtype=np.uint32).reshape(3, 4, 5)
    c.err = np.full((3, 4, 5), 0.5, np.float32)
    fixed_meta(c, "cube.fits")
    save(c, "cube.fits")

    ms = datamodels.MultiSpecModel()
    for n in (3, 5):
        s = datamodels.SpecModel()
        table = np.zeros(n, dtype=s.get_dtype("spec_table"))
        table["WAVELENGTH"] = np.linspace(1.0, 2.0, n)
        table["FLUX"] = rng.random(n)
        table["DQ"] = [2**31 + i for i in range(n)]
        table["NPIXELS"] = n
        s.spec_table = table
        ms.spec.append(s)
    fixed_meta(ms, "spectra.fits")
    save(ms, "spectra.fits")


def asdf_bytes(tree_yaml: str) -> bytes:
    return ("#ASDF 1.0.0\n#ASDF_STANDARD 1.6.0\n%YAML 1.1\n%TAG ! tag:stsci.edu:asdf/\n"
            "--- !core/asdf-1.1.0\n" + tree_yaml + "...\n").encode()


def asdf_table_hdu(data: bytes):
    import numpy as np
    from astropy.io import fits

    array = np.frombuffer(data, np.uint8)[None, :]
    column = fits.Column(array=array, format=f"{array.shape[1]}B", name="ASDF_METADATA")
    return fits.BinTableHDU.from_columns([column], name="ASDF")


def raw_image(data, name, ver=1, **cards):
    """An image HDU holding ``data`` as stored, with scaling cards set verbatim."""
    from astropy.io import fits

    hdu = fits.ImageHDU(data, name=name, do_not_scale_image_data=True)
    hdu.header["EXTVER"] = ver
    for k, v in cards.items():
        hdu.header[k] = v
    return hdu


def ndarray(source, datatype, shape):
    return (f"!core/ndarray-1.1.0 {{source: '{source}', datatype: {datatype}, byteorder: big, "
            f"shape: {list(shape)}}}")


def scaled(rng):
    import numpy as np
    from astropy.io import fits

    i16 = rng.integers(-1000, 1000, (4, 5), dtype=np.int16)
    i16[1, 1] = -32768  # BLANK
    u16 = rng.integers(-32768, 32767, (3, 3), dtype=np.int16)
    u64 = np.array([-(2**63), -1, 0, 2**63 - 1], dtype=np.int64)
    i8 = np.array([0, 1, 127, 128, 255], dtype=np.uint8)
    i32 = np.array([[1, 2], [3, -4]], dtype=np.int32)
    f32 = np.array([1.5, -2.0, np.inf], dtype=np.float32)
    blank0 = np.array([0, 1, 2], dtype=np.int16)
    b8 = np.array([0, 1, 200], dtype=np.uint8)
    hdus = [
        fits.PrimaryHDU(),
        raw_image(i16, "SCI", BSCALE=0.25, BZERO=100.0, BLANK=-32768),
        raw_image(u16, "VAR", BZERO=32768),
        raw_image(u64, "BIG", BZERO=9223372036854775808),
        raw_image(i8, "SBYTE", BZERO=-128),
        raw_image(i32, "OFFSET", BZERO=10),
        raw_image(f32, "FSCALE", BSCALE=2.0, BZERO=1.0),
        raw_image(blank0, "BLANK0", BLANK=0),
        raw_image(b8, "BSCALED", BSCALE=0.5),
    ]
    tree = "\n".join([
        "sci: " + ndarray("fits:SCI,1", "float32", i16.shape),
        "var: " + ndarray("fits:VAR,1", "uint16", u16.shape),
        "big: " + ndarray("fits:BIG,1", "uint64", u64.shape),
        "sbyte: " + ndarray("fits:SBYTE,1", "int8", i8.shape),
        "offset: " + ndarray("fits:OFFSET,1", "float64", i32.shape),
        "fscale: " + ndarray("fits:FSCALE,1", "float32", f32.shape),
        "blank0: " + ndarray("fits:BLANK0,1", "float32", blank0.shape),
        "bscaled: " + ndarray("fits:BSCALED,1", "float32", b8.shape),
        "note: integers scaled as FITS readers meet them",
        "",
    ])
    hdus.append(asdf_table_hdu(asdf_bytes(tree)))
    fits.HDUList(hdus).writeto(HERE / "scaled.fits", overwrite=True)


def image_extension(rng):
    """The ASDF extension as a uint8 image (older writers), `fits:INDEX` sources, a lower-case
    name with EXTVER 2, and an ASDF block inside the embedded file."""
    import asdf
    import numpy as np
    from asdf.tagged import TaggedDict
    from astropy.io import fits

    a = rng.random((2, 3))
    b = np.arange(6, dtype=">i4").reshape(3, 2)
    tag = "tag:stsci.edu:asdf/core/ndarray-1.1.0"
    tree = {
        "by_index": TaggedDict({"source": "fits:1", "datatype": "float64", "byteorder": "big",
                                "shape": [2, 3]}, tag),
        "by_name": TaggedDict({"source": "fits:sci,2", "datatype": "int32", "byteorder": "big",
                               "shape": [3, 2]}, tag),
        "local": np.arange(10, dtype=np.int16),
        "meta": {"origin": "hand-made", "exposures": [1, 2, 3]},
    }
    buf = io.BytesIO()
    asdf.AsdfFile(tree).write_to(buf)
    data = np.frombuffer(buf.getvalue(), np.uint8)
    hdus = [
        fits.PrimaryHDU(),
        raw_image(a, "SCI", ver=1),
        raw_image(b, "SCI", ver=2),
        fits.ImageHDU(data, name="ASDF"),
    ]
    fits.HDUList(hdus).writeto(HERE / "image_extension.fits", overwrite=True)


def table_types(rng):
    import numpy as np
    from astropy.io import fits

    n = 4
    cols = [
        fits.Column(name="i32", format="J", array=np.array([1, -2, 3, 2**31 - 1], np.int32)),
        fits.Column(name="u32", format="J", bzero=2**31, array=np.array([0, 1, 2**31, 2**32 - 1], np.uint32)),
        fits.Column(name="u16", format="I", bzero=2**15, array=np.array([0, 1, 2**15, 2**16 - 1], np.uint16)),
        fits.Column(name="scaled", format="I", array=np.array([1, 2, 3, -4], np.int16)),
        fits.Column(name="logical", format="L", array=np.array([True, False, True, False])),
        fits.Column(name="text", format="6A", array=np.array([b"ab", b"cdefgh", b"", b"x y"])),
        fits.Column(name="vec", format="3E", array=rng.random((n, 3)).astype(np.float32)),
        fits.Column(name="matrix", format="6B", dim="(3,2)", array=np.arange(24, dtype=np.uint8).reshape(n, 2, 3)),
        fits.Column(name="i64", format="K", array=np.array([7, -8, 2**62, -(2**63)], np.int64)),
        fits.Column(name="byte", format="B", array=np.array([0, 7, 128, 255], np.uint8)),
        fits.Column(name="c64", format="C", array=np.array([1 + 2j, 3, -4j, 0], np.complex64)),
        fits.Column(name="c128", format="M", array=np.array([1 + 2j, 3, -4j, 0.5], np.complex128)),
        fits.Column(name="bits", format="10X", array=rng.integers(0, 2, (n, 10)).astype(bool)),
        fits.Column(name="f64", format="D", array=np.array([np.nan, -0.0, 1e300, -np.inf])),
        fits.Column(name="words", format="8A", dim="(4,2)", array=np.array([[b"ab", b"cd"]] * n)),
    ]
    table = fits.BinTableHDU.from_columns(cols, name="T")
    # scaling a stored int16 column as FITS allows (astropy reads it as float64)
    table.header["TSCAL4"] = 0.5
    table.header["TZERO4"] = 1.0
    tree = ("table: !core/ndarray-1.1.0 {source: 'fits:T,1', byteorder: big, shape: [4],\n"
            "  datatype: [{name: i32, datatype: int32, byteorder: big}]}\n")
    fits.HDUList([fits.PrimaryHDU(), table, asdf_table_hdu(asdf_bytes(tree))]).writeto(
        HERE / "table_types.fits", overwrite=True)


def main():
    check_versions()
    import numpy as np

    rng = np.random.default_rng(20261125)
    products(rng)
    scaled(rng)
    image_extension(rng)
    table_types(rng)
    for p in sorted(HERE.glob("*.fits")):
        print(p.name, p.stat().st_size)


if __name__ == "__main__":
    if os.environ.get("PYTHONHASHSEED") != "0":
        # python asdf lists history extensions in set order
        os.environ["PYTHONHASHSEED"] = "0"
        os.execv(sys.executable, [sys.executable, *sys.argv])
    main()
