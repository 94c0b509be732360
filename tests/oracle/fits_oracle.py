#!/usr/bin/env python3
"""The oracle for ASDF in FITS: the canonical form (``asdf-canonical/1``, docs/canonical.md) of
a FITS file with an ASDF extension, as astropy 8.0.2 and python asdf 6.0.0 read it, and a check
that stdatamodels 6.0.0 reads the same arrays.

Run with the FITS oracle venv (``.venv-fits``, from tests/oracle-fits-requirements.txt):

    .venv-fits/bin/python tests/oracle/fits_oracle.py dump FILE.fits
    .venv-fits/bin/python tests/oracle/fits_oracle.py sidecars [--write]

The tree is the ASDF file held by the ``ASDF`` extension, read raw as canonical.py reads any
ASDF file. An ndarray whose source is ``fits:NAME,VER`` or ``fits:INDEX`` is the data of that
HDU as astropy hands it to stdatamodels (``hdulist[...].data``: scaling applied); a binary
table becomes a record array of its fields as astropy converts them (character fields as
bytes with trailing blanks removed). Arrays are dumped big-endian, the byte order FITS stores
and asdf-rs returns; the values are hashed as canonical.py hashes any array.

``sidecars`` re-derives every ``NAME.expect.json`` under tests/data/asdf-in-fits and compares it
with the committed one (``--write`` rewrites them). It also opens each product written by
stdatamodels (a ``DATAMODL`` card) with stdatamodels and checks that the model's arrays equal
the ones hashed here.
"""

from __future__ import annotations

import argparse
import io
import json
import re
import sys
import warnings
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
import canonical  # noqa: E402
import testdata  # noqa: E402

FOLDER = "asdf-in-fits"
# stdatamodels' pattern for a fits: source (fits_support._map_hdulist_to_arrays)
SOURCE = re.compile("((?P<name>[ -~]+),)?(?P<ver>[0-9]+)")


def hdu_key(source: str):
    m = SOURCE.match(source[len("fits:"):])
    if m is None:
        raise ValueError(f"bad fits source {source!r}")
    ver = int(m.group("ver"))
    return (m.group("name"), ver) if m.group("name") else ver


def plain(data):
    """astropy's data of an HDU as a plain big-endian numpy array."""
    import numpy as np
    from astropy.io.fits import FITS_rec

    if isinstance(data, FITS_rec):
        fields = []
        columns = []
        for name in data.dtype.names:
            col = np.asarray(data.field(name))
            if col.dtype.kind == "U":  # the stored width, not the longest value's
                col = np.char.encode(np.char.rstrip(col), "ascii").astype(f"S{col.dtype.itemsize // 4}")
            elif col.dtype.kind == "S":
                col = np.char.rstrip(col).astype(col.dtype)
            columns.append(col)
            fields.append((name, big(col.dtype), col.shape[1:]))
        out = np.empty(len(data), dtype=fields)
        for (name, _, _), col in zip(fields, columns):
            out[name] = col
        return out
    array = np.asarray(data)
    return array.astype(big(array.dtype))


def big(dt):
    if dt.kind in "iufc" and dt.itemsize > 1:
        return dt.newbyteorder(">")
    return dt


class FitsCanonical(canonical.Canonical):
    def __init__(self, af, hdul):
        super().__init__(af)
        self.hdul = hdul
        self.arrays = {}

    def ndarray(self, node):
        source = node.data.get("source")
        if not (isinstance(source, str) and source.startswith("fits:")):
            return super().ndarray(node)
        data = plain(self.hdul[hdu_key(source)].data)
        self.arrays[source] = data
        return {"$ndarray": {"dtype": canonical.dtype_text(data.dtype),
                             "shape": [int(n) for n in data.shape],
                             "sha256": canonical.value_hash(data)}}


def asdf_bytes(hdul) -> bytes:
    import numpy as np

    return np.asarray(hdul["ASDF"].data).tobytes()


def document(path: Path):
    import asdf
    from astropy.io import fits

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        with fits.open(path, memmap=False) as hdul:
            raw = asdf_bytes(hdul)
            with asdf.open(io.BytesIO(raw), _force_raw_types=True, lazy_load=False) as af:
                conv = FitsCanonical(af, hdul)
                tree = conv.value(af.tree)
                header = {"asdf": None, "standard": None}
                for line in raw.split(b"\n")[:2]:
                    m = canonical.HEADER_LINE.match(line.strip())
                    if m:
                        header["asdf" if m.group(1) == b"ASDF" else "standard"] = m.group(2).decode()
    return {"format": canonical.FORMAT, "header": header, "tree": tree}, conv.arrays


def check_with_stdatamodels(path: Path, arrays: dict) -> list[str]:
    """The arrays of a stdatamodels product, read by stdatamodels, equal the hashed ones."""
    import numpy as np
    from astropy.io import fits
    from stdatamodels.jwst import datamodels

    with fits.open(path) as hdul:
        if "DATAMODL" not in hdul[0].header:
            return []
    problems = []
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        with datamodels.open(str(path)) as model:
            found = []
            for attr, hdu in (("data", "SCI"), ("dq", "DQ"), ("err", "ERR")):
                if attr in model.instance:
                    found.append((f"fits:{hdu},1", getattr(model, attr)))
            for i, spec in enumerate(model.instance.get("spec", [])):
                found.append((f"fits:EXTRACT1D,{i + 1}", model.spec[i].spec_table))
            if not found:
                problems.append(f"{path.name}: stdatamodels read no array")
            for source, value in found:
                ours = arrays.get(source)
                if ours is None:
                    problems.append(f"{path.name}: {source} not in the tree")
                    continue
                value = np.asarray(value)
                if value.dtype.names:
                    same = all(np.array_equal(np.asarray(value[n]), ours[n], equal_nan=value[n].dtype.kind == "f")
                               for n in value.dtype.names)
                else:
                    same = np.array_equal(value, ours, equal_nan=value.dtype.kind == "f")
                if not same:
                    problems.append(f"{path.name}: {source} differs from stdatamodels' array")
    return problems


def sidecars(write: bool) -> int:
    folder = testdata.require_dir(FOLDER)
    if folder is None:
        return 0
    bad = 0
    files = sorted(folder.glob("*.fits"))
    for path in files:
        doc, arrays = document(path)
        text = canonical.to_text(doc)
        side = path.with_suffix(".expect.json")
        for problem in check_with_stdatamodels(path, arrays):
            print(problem)
            bad += 1
        if write:
            side.write_text(text)
        elif not side.exists() or side.read_text() != text:
            print(f"{side}: differs from a fresh dump by the oracle")
            bad += 1
    print(f"{len(files)} ASDF-in-FITS files, {bad} problems")
    return 1 if bad or not files else 0


def main(argv=None) -> int:
    import asdf
    import astropy
    import stdatamodels

    pins = (asdf.__version__, astropy.__version__, stdatamodels.__version__)
    if pins != ("6.0.0", "8.0.2", "6.0.0"):
        sys.exit(f"refusing to run: asdf/astropy/stdatamodels {pins}, pinned 6.0.0/8.0.2/6.0.0")
    p = argparse.ArgumentParser()
    sub = p.add_subparsers(dest="cmd", required=True)
    d = sub.add_parser("dump")
    d.add_argument("file", type=Path)
    s = sub.add_parser("sidecars")
    s.add_argument("--write", action="store_true")
    args = p.parse_args(argv)
    if args.cmd == "dump":
        sys.stdout.write(canonical.to_text(document(args.file)[0]))
        return 0
    return sidecars(args.write)


if __name__ == "__main__":
    sys.exit(main())
