#!/usr/bin/env python3
"""Generate tests/data/other-labels/abacus_blsc.asdf: `blsc` blocks as abacusutils writes them.

    .venv-oracle/bin/python tests/data/other-labels/generate_abacus.py           # writes them
    .venv-oracle/bin/python tests/data/other-labels/generate_abacus.py --check   # re-derives

abacusutils itself is not installed: it needs numba, scipy, astropy and h5py, too heavy for
the oracle venv. Its `blsc` Compressor (abacusutils main branch, commit 426352f,
`abacusnbody/data/asdf.py`, `BloscCompressor.compress`) frames the data this way, which
`AbacusFraming` below does again with the same python-blosc calls (python-blosc 1.11.4,
pinned in tests/oracle-requirements.txt):

- the array's bytes, as python asdf hands them over (a 1-D memoryview keeping the item size),
  are cut into pieces of `compression_block_size // itemsize` items (default 4 MiB);
- `blosc.set_nthreads(nthreads)` and `blosc.set_blocksize(blosc_block_size)` (default 512 KiB)
  once, then each piece is `blosc.compress(piece, typesize=itemsize, clevel=1,
  shuffle=blosc.SHUFFLE, cname="zstd")` (abacusutils' defaults; `shuffle="bitshuffle"` gives
  `blosc.BITSHUFFLE`);
- each piece is stored as `struct.pack('!I', len(compressed)) + compressed`: a big-endian u32
  length, then the Blosc1 chunk.

The decompressor here is what abacusutils' does (walk the lengths, `blosc.decompress` each),
so python asdf reads the file back with it before it is kept.

Arrays: a 10 MiB int64 (three pieces, the last short), a 2-D float32 of one piece (the form
that a reader must tell from a plain single Blosc1 chunk), a 6 MiB big-endian float64 with
bit shuffle (two pieces), and an empty uint16 (no piece at all). `abacus_blsc.values.json`
holds what numpy holds (as tests/data/other-labels/generate.py's sidecars) and each block's
piece lengths.
"""

from __future__ import annotations

import hashlib
import io
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
import blosc  # noqa: E402
import numpy as np  # noqa: E402
from asdf.extension import Compressor, Extension  # noqa: E402

HERE = Path(__file__).resolve().parent
PINS = {"asdf": ("6.0.0", asdf.__version__), "blosc": ("1.11.4", blosc.__version__)}
SHORT = 64


class AbacusFraming(Compressor):
    """abacusutils' `blsc` framing (see the module docstring)."""

    label = b"blsc"

    def compress(self, data, **kwargs):
        nthreads = kwargs.pop("nthreads", 1)
        compression_block_size = kwargs.pop("compression_block_size", 1 << 22)
        blosc_block_size = kwargs.pop("blosc_block_size", 512 * 1024)
        clevel = kwargs.pop("clevel", 1)
        cname = kwargs.pop("cname", "zstd")
        shuffle = {"shuffle": blosc.SHUFFLE, "bitshuffle": blosc.BITSHUFFLE,
                   None: blosc.NOSHUFFLE}[kwargs.pop("shuffle", "shuffle")]
        blosc.set_nthreads(nthreads)
        blosc.set_blocksize(blosc_block_size)
        nelem = compression_block_size // data.itemsize
        for i in range(0, len(data), nelem):
            compressed = blosc.compress(data[i : i + nelem], typesize=data.itemsize,
                                        clevel=clevel, shuffle=shuffle, cname=cname)
            yield struct.pack("!I", len(compressed)) + compressed

    def decompress(self, blocks, out, **kwargs):
        stored = b"".join(bytes(b) for b in blocks)
        dest = np.frombuffer(out, dtype=np.uint8)
        at, done = 0, 0
        while at < len(stored):
            (n,) = struct.unpack("!I", stored[at : at + 4])
            piece = blosc.decompress(stored[at + 4 : at + 4 + n])
            dest[done : done + len(piece)] = np.frombuffer(piece, dtype=np.uint8)
            done += len(piece)
            at += 4 + n
        return done


class AbacusLikeExtension(Extension):
    extension_uri = "asdf://asdf-rs.test/extensions/abacus-blsc-framing-1.0.0"
    compressors = [AbacusFraming()]


def arrays():
    return {
        "i8_10mib": (np.arange(10 << 17, dtype="<i8") % 5000) * 7 - 12345,
        "f4_one_piece": (np.arange(4000, dtype="<f4").reshape(40, 100) / 9.0) ** 1.5,
        "f8_big_bitshuffle": (np.arange(6 << 17) % 1000).astype(">f8") / 4.0,
        "u2_empty": np.zeros(0, dtype="<u2"),
    }


def describe(a: np.ndarray) -> dict:
    le = np.ascontiguousarray(a).astype(a.dtype.newbyteorder("<"), copy=True)
    d = {"datatype": a.dtype.str, "shape": list(a.shape),
         "sha256_le": hashlib.sha256(le.tobytes()).hexdigest()}
    if a.size <= SHORT:
        d["values"] = a.ravel().tolist()
    return d


def blocks_of(data: bytes) -> list[dict]:
    """Each block's label, sizes and the lengths of its length-prefixed pieces."""
    out = []
    at = data.find(b"\xd3BLK")
    while at >= 0 and data[at : at + 4] == b"\xd3BLK":
        (hsize,) = struct.unpack(">H", data[at + 4 : at + 6])
        label = data[at + 10 : at + 14]
        alloc, used, size = struct.unpack(">QQQ", data[at + 14 : at + 38])
        start = at + 6 + hsize
        stored = data[start : start + used]
        pieces, p = [], 0
        while p < len(stored):
            (n,) = struct.unpack("!I", stored[p : p + 4])
            pieces.append(n)
            p += 4 + n
        out.append({"label": label.rstrip(b"\0").decode(), "used_size": used,
                    "data_size": size, "pieces": pieces})
        at = start + alloc
    return out


def written() -> dict[str, bytes]:
    a = arrays()
    with asdf.config_context() as cfg, warnings.catch_warnings():
        warnings.simplefilter("error")
        # this framing replaces asdf-compression's one-chunk `blsc` on purpose
        warnings.filterwarnings("ignore", message='Found more than one compressor for "blsc"')
        cfg.add_extension(AbacusLikeExtension())
        af = asdf.AsdfFile(dict(a))
        for k, v in a.items():
            af.set_array_compression(
                v, "blsc", **({"shuffle": "bitshuffle"} if "bitshuffle" in k else {}))
        buf = io.BytesIO()
        af.write_to(buf)
        data = buf.getvalue()
        with asdf.open(io.BytesIO(data), validate_checksums=True) as back:
            for k, v in a.items():
                got = np.asarray(back[k])
                assert got.dtype == v.dtype and got.shape == v.shape, k
                assert np.array_equal(got, v), k
    blocks = blocks_of(data)
    assert [len(b["pieces"]) for b in blocks] == [3, 1, 2, 0], blocks
    sidecar = {
        "generator": "tests/data/other-labels/generate_abacus.py",
        "versions": {k: v[1] for k, v in PINS.items()} | {"numpy": np.__version__},
        "arrays": {k: describe(v) for k, v in a.items()},
        "blocks": blocks,
    }
    return {"abacus_blsc.asdf": data,
            "abacus_blsc.values.json":
                (json.dumps(sidecar, indent=1, sort_keys=True) + "\n").encode()}


def main() -> int:
    for pkg, (want, have) in PINS.items():
        if want != have:
            print(f"{pkg} {have} is not the pinned {want} (tests/oracle-requirements.txt)",
                  file=sys.stderr)
            return 2
    files = written()
    if "--check" in sys.argv:
        bad = [n for n, b in files.items()
               if not (HERE / n).is_file() or (HERE / n).read_bytes() != b]
        for n in bad:
            print(f"{n}: differs from a fresh generation", file=sys.stderr)
        return 1 if bad else 0
    for n, b in files.items():
        (HERE / n).write_bytes(b)
        print(f"wrote {n} ({len(b)} bytes)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
