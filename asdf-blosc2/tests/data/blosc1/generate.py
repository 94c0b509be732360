"""Writes the Blosc1 fixtures of asdf-blosc2's tests with python-blosc (the oracle).

    .venv-oracle/bin/python asdf-blosc2/tests/data/blosc1/generate.py

python-blosc 1.11.4 (it bundles C-Blosc 1.21), pinned in tests/oracle-requirements.txt,
writes each case NAME as NAME.blosc1 (one chunk, `blosc.compress` output); manifest.json
lists every case: file, decoded length and sha256, codec, shuffle, typesize, clevel, the
forced block size (0: C-Blosc's own choice) and the threads that compressed it. The inputs
are deterministic (`data` below), so the sha256 pins them; the tests decode every chunk and
compare the sha256 of the result.

What the cases cover: every codec (blosclz, lz4, lz4hc, zlib, zstd) with every shuffle (none,
byte, bit), each on one small block and on several split blocks with a short last one;
item sizes 1 to 32 (over 16: blocks never split) and an odd size; levels 1, 5 and 9; chunks
stored as they are ("memcpyed": an input under 128 bytes, level 0, incompressible input);
the empty input; blocks of a multiple of 8 items or not (bit shuffle leaves the others as
they are); and a chunk compressed on 4 threads (its blocks may be stored out of order).
"""
import hashlib
import json
import os

import blosc
import numpy as np

assert blosc.__version__ == "1.11.4", blosc.__version__
HERE = os.path.dirname(os.path.abspath(__file__))
SHUFFLES = {"none": blosc.NOSHUFFLE, "byte": blosc.SHUFFLE, "bit": blosc.BITSHUFFLE}


def data(n, typesize, kind="smooth"):
    """n bytes: slowly varying little-endian integers of `typesize` bytes with a little
    noise (compressible, as array data is), or pseudo-random bytes ("noise")."""
    rng = np.random.default_rng(n * 31 + typesize)
    if kind == "noise":
        return rng.integers(0, 256, n, dtype=np.uint8).tobytes()
    items = n // typesize + 1
    i = np.arange(items, dtype=np.uint64)
    v = (i // 7) * 1000 + rng.integers(0, 4, items, dtype=np.uint64)
    b = v.astype("<u8").view(np.uint8).reshape(items, 8)
    # items wider than 8 bytes repeat their 8 bytes; narrower keep the low bytes
    b = np.concatenate([b] * (typesize // 8 + 1), axis=1)[:, :typesize]
    return b.tobytes()[:n]


def main():
    cases = []

    def case(name, n, typesize, cname="blosclz", shuffle="byte", clevel=9, blocksize=0,
             threads=1, kind="smooth"):
        src = data(n, typesize, kind)
        blosc.set_nthreads(threads)
        blosc.set_blocksize(blocksize)
        c = blosc.compress(src, typesize=typesize, clevel=clevel,
                           shuffle=SHUFFLES[shuffle], cname=cname)
        assert blosc.decompress(c) == src
        file = f"{name}.blosc1"
        with open(os.path.join(HERE, file), "wb") as f:
            f.write(c)
        cases.append({
            "file": file, "nbytes": n, "sha256": hashlib.sha256(src).hexdigest(),
            "codec": cname, "shuffle": shuffle, "typesize": typesize, "clevel": clevel,
            "blocksize": blocksize, "threads": threads,
        })

    for cname in ("blosclz", "lz4", "lz4hc", "zlib", "zstd"):
        for sh in SHUFFLES:
            # one block
            case(f"{cname}_{sh}_small", 5000, 4, cname, sh, 5)
            # several blocks, the last one short (C-Blosc enlarges a forced size to 64 KiB
            # when blocks split: 3 blocks and a short one; zstd never splits: 24 and one)
            case(f"{cname}_{sh}_blocks", 200_003, 8, cname, sh, 9, blocksize=8192)
    for ts in (1, 2, 3, 4, 8, 16, 17, 32):
        case(f"typesize{ts}_byte", 40_000, ts, "blosclz", "byte", 9, blocksize=8192)
        case(f"typesize{ts}_bit", 40_000, ts, "lz4", "bit", 9, blocksize=8192)
    for lvl in (1, 5, 9):
        case(f"zstd_level{lvl}", 100_000, 8, "zstd", "byte", lvl)
        case(f"zlib_level{lvl}", 100_000, 8, "zlib", "bit", lvl)
        case(f"blosclz_level{lvl}", 100_000, 2, "blosclz", "byte", lvl)
    case("memcpyed_tiny", 100, 8)
    case("memcpyed_level0", 3000, 8, clevel=0)
    case("memcpyed_noise", 3000, 8, "lz4", kind="noise")
    case("noise_blocks", 150_000, 4, "zstd", "none", 5, blocksize=16384, kind="noise")
    case("empty", 0, 8)
    case("one_byte", 1, 1)
    case("threads4", 600_000, 8, "lz4", "byte", 5, blocksize=8192, threads=4)
    blosc.set_nthreads(1)
    blosc.set_blocksize(0)
    with open(os.path.join(HERE, "manifest.json"), "w") as f:
        json.dump({"python-blosc": blosc.__version__, "c-blosc": blosc.blosclib_version,
                   "cases": cases}, f, indent=1)
        f.write("\n")


if __name__ == "__main__":
    main()
