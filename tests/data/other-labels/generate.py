#!/usr/bin/env python3
"""Generate the fixtures of tests/data/other-labels/: blocks as ASDF.jl writes them.

    .venv-oracle/bin/python tests/data/other-labels/generate.py           # writes them
    .venv-oracle/bin/python tests/data/other-labels/generate.py --check   # re-derives, compares

Python asdf 6.0.0 writes the files (header, tree, block headers, checksums, block index); the
block payloads come from the Compressors of `asdfjl_codecs.py` (beside this file), which make
them as ASDF.jl 2.0.0 does (see that module and README.md here for how close).

- `xz.asdf`: `xz\\0\\0` blocks (one xz stream each): a 2-D float64, a big-endian int16, a
  3 MiB int64 (several LZMA2 chunks) and a 0-element array (an xz stream of nothing).
- `lz4frame.asdf`: `lz4\\0` blocks that are lz4 frames (a 2-D float64, a 5 MiB int64 whose
  frame has two linked 4 MiB blocks, a big-endian float32) beside a uint8 array in python
  asdf's own lz4 chunk framing, under the same label.
- `NAME.values.json`: for each array, what numpy holds: datatype (numpy's `dtype.str`), shape,
  the sha256 of its elements in C order as little-endian bytes, the values themselves when
  short; and for each block, its label and how its stored bytes start.

The values are fixed formulas (no randomness, no clock), and PYTHONHASHSEED is fixed (python
asdf lists its extensions in set order), so re-running reproduces the files byte for byte on
the same liblzma and liblz4 (see README.md).
"""

from __future__ import annotations

import hashlib
import json
import os
import struct
import sys
import warnings
from pathlib import Path

if os.environ.get("PYTHONHASHSEED") != "0":
    os.environ["PYTHONHASHSEED"] = "0"
    os.execv(sys.executable, [sys.executable, *sys.argv])

import asdf  # noqa: E402
import lz4  # noqa: E402
import numpy as np  # noqa: E402

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
import asdfjl_codecs  # noqa: E402

PINS = {"asdf": ("6.0.0", asdf.__version__), "lz4": ("4.4.5", lz4.__version__)}
SHORT = 64  # arrays up to this many elements have their values in the sidecar


def arrays_xz():
    return {
        "f8_2d": (np.arange(60, dtype="<f8").reshape(6, 10) / 7.0) ** 2,
        "i2_big": np.arange(-500, 500, 7, dtype=">i2"),
        "i8_3mib": np.repeat(np.arange(3 << 15, dtype="<i8") * 3, 4) ^ 0x5A5A,
        "empty": np.zeros((0, 3), dtype="<f4"),
    }


def arrays_lz4():
    return {
        "f8_2d": (np.arange(60, dtype="<f8").reshape(6, 10) - 30.0) / 3.0,
        "i8_5mib": np.repeat(np.arange(5 << 14, dtype="<i8"), 8) * 11,
        "f4_big": np.linspace(-1.0, 1.0, 40, dtype=">f4"),
        "u1_python_framing": (np.arange(70_000) % 251).astype("u1"),
    }


def describe(a: np.ndarray) -> dict:
    le = np.ascontiguousarray(a).astype(a.dtype.newbyteorder("<"), copy=True)
    d = {
        "datatype": a.dtype.str,
        "shape": list(a.shape),
        "sha256_le": hashlib.sha256(le.tobytes()).hexdigest(),
    }
    if a.size <= SHORT:
        d["values"] = a.ravel().tolist()
    return d


def blocks_of(data: bytes) -> list[dict]:
    """Each block's label and how its stored bytes start, walking the block headers."""
    out = []
    at = data.find(b"\xd3BLK")
    while at >= 0 and data[at : at + 4] == b"\xd3BLK":
        (hsize,) = struct.unpack(">H", data[at + 4 : at + 6])
        label = data[at + 10 : at + 14]
        alloc, used, size = struct.unpack(">QQQ", data[at + 14 : at + 38])
        start = at + 6 + hsize
        head = data[start : start + 6]
        if head.startswith(b"\xfd7zXZ\x00"):
            layout = "xz-stream"
        elif head.startswith(asdfjl_codecs.FRAME_MAGIC):
            layout = "lz4-frame"
        elif label == b"lz4\x00":
            layout = "lz4-python-chunks"
        else:
            layout = "other"
        out.append({"label": label.rstrip(b"\0").decode(), "layout": layout, "used_size": used,
                    "data_size": size})
        at = start + alloc
    return out


def written() -> dict[str, bytes]:
    out = {}
    # the one array written in python asdf's own lz4 framing, told by its size
    asdfjl_codecs.Lz4FrameOrChunksCompressor.python_framing_nbytes = {
        arrays_lz4()["u1_python_framing"].nbytes
    }
    for name, arrays, ext, label in [
        ("xz", arrays_xz(), asdfjl_codecs.XzExtension(), "xz"),
        ("lz4frame", arrays_lz4(), asdfjl_codecs.Lz4FrameExtension(), "lz4"),
    ]:
        with asdf.config_context() as cfg, warnings.catch_warnings():
            warnings.simplefilter("error")
            # the lz4 extension replaces python's own lz4 compressor on purpose
            warnings.filterwarnings("ignore", message='Found more than one compressor for "lz4"')
            cfg.add_extension(ext)
            af = asdf.AsdfFile(dict(arrays))
            for a in arrays.values():
                af.set_array_compression(a, label)
            path = HERE / (name + ".tmp")
            af.write_to(path)
            data = path.read_bytes()
            path.unlink()
            # python asdf (with the same Compressor) reads back what numpy holds
            with asdf.open(_bytes_file(data), validate_checksums=True) as back:
                for k, a in arrays.items():
                    got = np.asarray(back[k])
                    assert got.dtype == a.dtype and got.shape == a.shape, k
                    assert np.array_equal(got, a), k
        sidecar = {
            "generator": "tests/data/other-labels/generate.py",
            "versions": {k: v[1] for k, v in PINS.items()} | {"numpy": np.__version__},
            "arrays": {k: describe(a) for k, a in arrays.items()},
            "blocks": blocks_of(data),
        }
        out[name + ".asdf"] = data
        out[name + ".values.json"] = (json.dumps(sidecar, indent=1, sort_keys=True) + "\n").encode()
    return out


def _bytes_file(data: bytes):
    import io

    return io.BytesIO(data)


def main() -> int:
    for pkg, (want, have) in PINS.items():
        if want != have:
            print(f"{pkg} {have} is not the pinned {want} (tests/oracle-requirements.txt)", file=sys.stderr)
            return 2
    files = written()
    if "--check" in sys.argv:
        bad = [n for n, b in files.items() if not (HERE / n).is_file() or (HERE / n).read_bytes() != b]
        for n in bad:
            print(f"{n}: differs from a fresh generation", file=sys.stderr)
        return 1 if bad else 0
    for n, b in files.items():
        (HERE / n).write_bytes(b)
        print(f"wrote {n} ({len(b)} bytes)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
