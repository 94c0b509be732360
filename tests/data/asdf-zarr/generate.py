#!/usr/bin/env python3
"""Generate the asdf-zarr files in tests/data/asdf-zarr/.

    .venv-oracle/bin/python tests/data/asdf-zarr/generate.py           # writes them
    .venv-oracle/bin/python tests/data/asdf-zarr/generate.py --check   # re-derives, compares

Each `NAME.asdf` is written by python asdf 6.0.0 with asdf-zarr 0.0.4 and zarr 2.18.7 (pinned in
tests/oracle-requirements.txt): zarr arrays made in memory (a `KVStore`, which asdf-zarr converts
to its internal store) are written as `asdf://asdf-format.org/zarr/tags/zarr-1.0.0` nodes: the
zarr v2 `.zarray` metadata in the tree, one ASDF block per written chunk (zarr's encoded chunk
bytes) and `chunk_block_map`, the index of a block holding an int32 array shaped like the chunk
grid whose entries are the chunk's block index or -1 for a chunk never written.

`NAME.zarr.json` is the sidecar: for each tree path, the datatype (numpy's string), shape and
C-order bytes (hex, in the datatype's byte order) of the array zarr reads, and of a few
regions (numpy's slice syntax, the same text `asdf_core::Selection` parses); for the paths whose
compressor or filter asdf-rs does not read, the name the error must give. The values come from
zarr reading the file back through asdf-zarr, never from asdf-rs.

asdf-core/tests/it/asdf_zarr.rs reads every file and compares with its sidecar. The output is
deterministic (fixed values; the script re-executes itself with PYTHONHASHSEED=0 because python
asdf lists the extensions in `history` in set order).
"""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

if os.environ.get("PYTHONHASHSEED") != "0":
    os.environ["PYTHONHASHSEED"] = "0"
    os.execv(sys.executable, [sys.executable, *sys.argv])

import gzip  # noqa: E402
import types  # noqa: E402

import asdf  # noqa: E402
import numcodecs  # noqa: E402
import numpy as np  # noqa: E402
import zarr  # noqa: E402
from importlib.metadata import version  # noqa: E402

PINS = {"asdf": "6.0.0", "asdf-zarr": "0.0.4", "zarr": "2.18.7", "numcodecs": "0.15.2"}
HERE = Path(__file__).resolve().parent

# numcodecs' GZip stamps the time into each gzip header: stamp 0, so the files are reproducible
gzip.time = types.SimpleNamespace(time=lambda: 0)


def make(shape, chunks, dtype, compressor, fill_value, order="C", filters=None):
    return zarr.create(
        shape,
        chunks=chunks,
        dtype=dtype,
        compressor=compressor,
        fill_value=fill_value,
        order=order,
        filters=filters,
        store=zarr.storage.KVStore({}),
    )


def values(shape, dtype, seed):
    n = int(np.prod(shape))
    rng = np.random.default_rng(seed)
    dt = np.dtype(dtype)
    if dt.kind == "f":
        v = rng.normal(size=n) * 1000
    elif dt.kind == "c":
        v = rng.normal(size=n) + 1j * rng.normal(size=n)
    elif dt.kind == "b":
        v = rng.integers(0, 2, size=n) == 1
    else:
        info = np.iinfo(dt)
        v = rng.integers(info.min, info.max, size=n, endpoint=True, dtype=dt.newbyteorder("="))
    return v.astype(dt).reshape(shape)


def files():
    """name -> (tree, {path: [selection, ...]}, {path: expected error word})"""
    out = {}

    # 2-D float64, zlib, NaN fill, the last chunk row never written
    a = make((5, 7), (2, 3), "<f8", numcodecs.Zlib(level=5), np.nan)
    a[:4, :] = values((4, 7), "<f8", 1)
    out["f8_2d_zlib_nan"] = ({"z": a}, {"/z": ["1:4, ::2", "4", "::-1, 5:"]}, {})

    # 1-D int32, no compressor, a middle chunk never written
    a = make((10,), (4,), "<i4", None, -7)
    a[0:4] = [1, 2, 3, 4]
    a[8:10] = [9, 10]
    out["i4_1d_raw_missing"] = ({"z": a}, {"/z": ["3:9", "::3", "5"]}, {})

    # 3-D uint16, blosc (lz4, byte shuffle), chunks that do not divide the shape
    a = make((3, 4, 5), (2, 3, 2), "<u2", numcodecs.Blosc(cname="lz4", clevel=5, shuffle=1), 0)
    a[:] = values((3, 4, 5), "<u2", 3)
    out["u2_3d_blosc"] = ({"z": a}, {"/z": ["1:, 2:4, ::2", "2, 3, 4", ":, -1"]}, {})

    # 2-D int16, blosc zstd with bit shuffle
    a = make((9, 6), (4, 4), "<i2", numcodecs.Blosc(cname="zstd", clevel=3, shuffle=2), 0)
    a[:] = values((9, 6), "<i2", 4)
    out["i2_2d_blosc_zstd_bitshuffle"] = ({"z": a}, {"/z": ["4:8, 1:5"]}, {})

    # big-endian float32, bz2, a float fill value
    a = make((6, 5), (4, 4), ">f4", numcodecs.BZ2(level=9), 1.5)
    a[:4, :4] = values((4, 4), ">f4", 5)
    out["f4_big_bz2"] = ({"z": a}, {"/z": ["3:6, 2:5"]}, {})

    # int64 in Fortran order, zstd
    a = make((7, 6), (3, 4), "<i8", numcodecs.Zstd(level=3), 0, order="F")
    a[:] = values((7, 6), "<i8", 6)
    out["i8_2d_zstd_fortran"] = ({"z": a}, {"/z": ["2:6, 3:", "::-2, ::-1"]}, {})

    # uint8, lz4 (numcodecs' size-prefixed block), one chunk never written
    a = make((9, 11), (4, 5), "|u1", numcodecs.LZ4(acceleration=1), 255)
    a[:] = values((9, 11), "|u1", 7)
    del a.store["1.1"]
    out["u1_2d_lz4_missing"] = ({"z": a}, {"/z": ["3:6, 4:7"]}, {})

    # bool, gzip, fill false
    a = make((13,), (5,), "|b1", numcodecs.GZip(level=6), False)
    a[:10] = values((10,), "|b1", 8)
    out["b1_1d_gzip"] = ({"z": a}, {"/z": ["9:"]}, {})

    # complex128, zlib, a complex fill value for the chunk never written
    a = make((3, 4), (2, 2), "<c16", numcodecs.Zlib(level=1), 1 + 2j)
    a[:2, :] = values((2, 4), "<c16", 9)
    out["c16_2d_zlib_fill"] = ({"z": a}, {"/z": ["1:, 1:3"]}, {})

    # one file with two zarr arrays and an ordinary ndarray, in nested places
    a = make((4, 4), (3, 3), "<f4", numcodecs.Zstd(level=1), 0.0)
    a[:] = values((4, 4), "<f4", 10)
    b = make((5,), (2,), "<u4", None, 0)
    b[:] = values((5,), "<u4", 11)
    tree = {"plain": np.arange(6, dtype="<i2"), "group": {"a": a, "list": [b]}}
    out["mixed"] = (tree, {"/group/a": ["1:3, 1:3"], "/group/list/0": ["1:4"]}, {})

    # what asdf-rs does not read: a compressor and a filter it has no codec for
    a = make((6,), (4,), "<f8", numcodecs.LZMA(), 0.0)
    a[:] = np.arange(6, dtype="<f8")
    b = make((6,), (4,), "<i4", None, 0, filters=[numcodecs.Delta(dtype="<i4")])
    b[:] = np.arange(6, dtype="<i4")
    out["unsupported"] = ({"lzma": a, "delta": b}, {}, {"/lzma": "lzma", "/delta": "delta"})
    return out


def sidecar(path: Path, selections, errors) -> str:
    expect = {"arrays": {}, "errors": errors}
    with asdf.open(path) as af:
        for p, sels in selections.items():
            node = af.tree
            for part in p.strip("/").split("/"):
                node = node[int(part)] if isinstance(node, list) else node[part]
            if isinstance(node, zarr.core.Array):
                arr = node[...]
            else:
                arr = np.asarray(node)
            entry = {
                "dtype": arr.dtype.str,
                "shape": list(arr.shape),
                "hex": np.array(arr, order="C").tobytes().hex(),
                "regions": [],
            }
            for s in sels:
                r = np.array(eval(f"arr[{s}]"), order="C")  # noqa: S307 (our own literals; 0-d stays 0-d)
                entry["regions"].append({"selection": s, "shape": list(r.shape), "hex": r.tobytes().hex()})
            expect["arrays"][p] = entry
    return json.dumps(expect, indent=1, sort_keys=True) + "\n"


def main() -> int:
    for name, want in PINS.items():
        if version(name) != want:
            print(f"{name} {version(name)} is installed; the pinned version is {want}", file=sys.stderr)
            return 2
    check = "--check" in sys.argv[1:]
    bad = 0
    for name, (tree, selections, errors) in files().items():
        # also list the ordinary ndarray of `mixed` so it is compared too
        if name == "mixed":
            selections = {"/plain": [], **selections}
        tmp = HERE / f".{name}.tmp.asdf"
        asdf.AsdfFile(tree).write_to(tmp)
        data = tmp.read_bytes()
        side = sidecar(tmp, selections, errors)
        tmp.unlink()
        for fname, content in ((f"{name}.asdf", data), (f"{name}.zarr.json", side.encode())):
            target = HERE / fname
            if check:
                if not target.is_file() or target.read_bytes() != content:
                    print(f"DIFFERS: {fname}")
                    bad += 1
            else:
                target.write_bytes(content)
    print("checked" if check else "written", len(files()), "files")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
