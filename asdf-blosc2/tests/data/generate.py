"""Writes the Blosc2 fixtures of asdf-blosc2's tests with python-blosc2 (the oracle).

    .venv-oracle/bin/python asdf-blosc2/tests/data/generate.py

For each case NAME it writes NAME.b2nd (or NAME.b2frame) and NAME.bin, the C-order bytes
numpy holds for the same array, and lists every case in manifest.json (file, dtype string,
shape, chunk and block shapes, codec, filters, vlmeta as JSON). The arrays are small and the
chunk and block shapes smaller still, so each file has several chunks and blocks, ragged
edges included. Deterministic data; python-blosc2 4.14.1 (C-Blosc2 3.3.5) pinned in
tests/oracle-requirements.txt.
"""
import json
import os
import shutil
import sys

import blosc2
import numpy as np

assert blosc2.__version__ == "4.14.1", blosc2.__version__
HERE = os.path.dirname(os.path.abspath(__file__))
OUT = os.path.join(HERE, "frames")

C = blosc2.Codec
F = blosc2.Filter


def data(dtype, shape, kind="smooth"):
    n = int(np.prod(shape))
    i = np.arange(n)
    dt = np.dtype(dtype)
    if dt.names:
        a = np.zeros(n, dtype=dt)
        for k, name in enumerate(dt.names):
            sub = dt.fields[name][0]
            if sub.kind in "SU":
                a[name] = [f"r{j % 97}" for j in i]
            else:
                a[name] = ((i * (k + 3)) % 251).astype(sub)
        return a.reshape(shape)
    if dt.kind == "b":
        a = (i % 3 == 0)
    elif dt.kind in "SU":
        a = np.array([f"s{j % 1000}x" for j in i], dtype=dt)
    elif dt.kind == "c":
        a = (np.sin(i / 17.0) + 1j * np.cos(i / 29.0)).astype(dt)
    elif dt.kind == "f":
        a = (np.sin(i / 50.0) * 1000).astype(dt)
    elif dt.kind == "u":
        a = (i * 7 % 60000).astype(dt)
    else:
        a = ((i * 7919) % 65521 - 30000).astype(dt)
    if kind == "random":
        rng = np.random.default_rng(42)
        a = rng.integers(0, 255, size=n * dt.itemsize, dtype=np.uint8).view(dt)
    return np.asarray(a, dtype=dt).reshape(shape)


cases = []


def nd(name, arr, chunks, blocks, codec=C.ZSTD, clevel=5, filters=(F.SHUFFLE,),
       filters_meta=None, splitmode=blosc2.SplitMode.AUTO_SPLIT, meta=None, vlmeta=None,
       contiguous=True):
    path = os.path.join(OUT, name + ".b2nd")
    filters = list(filters)
    cparams = blosc2.CParams(
        codec=codec, clevel=clevel, filters=filters,
        filters_meta=list(filters_meta) if filters_meta else [0] * len(filters),
        splitmode=splitmode, nthreads=1)
    kw = dict(urlpath=path, mode="w", cparams=cparams, chunks=chunks, blocks=blocks,
              contiguous=contiguous)
    if meta:
        kw["meta"] = meta
    b = blosc2.asarray(arr, **kw)
    for k, v in (vlmeta or {}).items():
        b.schunk.vlmeta[k] = v
    back = blosc2.open(path)[()]
    assert np.array_equal(np.asarray(back), arr) or arr.dtype.kind == "f", name
    with open(os.path.join(OUT, name + ".bin"), "wb") as f:
        f.write(np.ascontiguousarray(arr).tobytes())
    cases.append({
        "name": name, "file": name + ".b2nd", "dtype": arr.dtype.str if not arr.dtype.names
        else str(arr.dtype), "shape": list(arr.shape), "chunks": list(chunks),
        "blocks": list(blocks), "codec": str(codec), "filters": [str(f) for f in filters],
        "itemsize": arr.dtype.itemsize, "vlmeta": vlmeta or {}, "meta": meta or {},
        "sparse": not contiguous,
    })


def frame(name, raw: bytes, typesize, chunksize, codec=C.ZSTD, filters=(F.SHUFFLE,)):
    path = os.path.join(OUT, name + ".b2frame")
    cparams = blosc2.CParams(codec=codec, clevel=5, typesize=typesize, filters=list(filters),
                             filters_meta=[0] * len(filters), nthreads=1)
    s = blosc2.SChunk(chunksize=chunksize, data=None, contiguous=True, urlpath=path, mode="w",
                      cparams=cparams)
    out = bytearray()
    pos = 0
    while pos < len(raw):
        piece = raw[pos:pos + chunksize]
        s.append_data(piece)
        out += piece
        pos += chunksize
    del s
    with open(os.path.join(OUT, name + ".bin"), "wb") as f:
        f.write(bytes(out))
    cases.append({"name": name, "file": name + ".b2frame", "dtype": None,
                  "shape": [len(out) // typesize], "itemsize": typesize, "codec": str(codec),
                  "filters": [str(f) for f in filters], "vlmeta": {}, "meta": {}})


def special(name, typesize, chunksize, nitems, kind, value, expect):
    """A super-chunk filled by fill_special: the frame's offsets say so, no chunk data."""
    path = os.path.join(OUT, name + ".b2frame")
    s = blosc2.SChunk(chunksize=chunksize, contiguous=True, urlpath=path, mode="w",
                      cparams=blosc2.CParams(typesize=typesize, nthreads=1))
    s.fill_special(nitems, kind, value)
    back = s.decompress_chunk(0)
    del s
    with open(os.path.join(OUT, name + ".bin"), "wb") as f:
        f.write(expect.tobytes())
    assert bytes(back) == expect.tobytes()[:len(back)], name
    cases.append({"name": name, "file": name + ".b2frame", "dtype": None,
                  "shape": [nitems], "itemsize": typesize, "codec": "special",
                  "filters": [], "vlmeta": {}, "meta": {}})


def main():
    shutil.rmtree(OUT, ignore_errors=True)
    os.makedirs(OUT)
    # every codec x filter pipeline on float64 and int32, 2-D with ragged chunks and blocks
    codecs = {"blosclz": C.BLOSCLZ, "lz4": C.LZ4, "lz4hc": C.LZ4HC, "zlib": C.ZLIB,
              "zstd": C.ZSTD}
    pipelines = {
        "nofilter": [F.NOFILTER], "shuffle": [F.SHUFFLE], "bitshuffle": [F.BITSHUFFLE],
        "delta": [F.DELTA], "delta_shuffle": [F.DELTA, F.SHUFFLE],
        "bytedelta": [F.SHUFFLE, F.BYTEDELTA], "truncprec_shuffle": [F.TRUNC_PREC, F.SHUFFLE],
    }
    for cname, codec in codecs.items():
        for pname, pipe in pipelines.items():
            meta = None
            if pname == "truncprec_shuffle":
                meta = [20, 0]
            if pname == "bytedelta":
                meta = [0, 8]
            dt = "<f8" if cname in ("zstd", "blosclz") else "<i4"
            shape = (37, 45)
            arr = data(dt, shape)
            if pname == "truncprec_shuffle":
                # what the filter keeps: the oracle's own read-back
                path = os.path.join(OUT, "tmp.b2nd")
                t = blosc2.asarray(arr, urlpath=path, mode="w", chunks=(10, 45), blocks=(4, 45),
                                   cparams=blosc2.CParams(codec=codec, filters=pipe,
                                                          filters_meta=meta, nthreads=1))
                arr = np.asarray(t[()])
                os.remove(path)
            nd(f"{cname}_{pname}", arr, (10, 45), (4, 45), codec=codec, filters=pipe,
               filters_meta=meta)
    # split and non-split blocks; the memcpyed path for data that does not compress
    nd("never_split", data("<f8", (2000,)), (700,), (128,),
       splitmode=blosc2.SplitMode.NEVER_SPLIT)
    nd("always_split", data("<f4", (2000,)), (700,), (128,),
       splitmode=blosc2.SplitMode.ALWAYS_SPLIT, codec=C.LZ4)
    nd("incompressible", data("<i8", (3000,), "random"), (1000,), (256,), filters=[F.NOFILTER])
    # datatypes
    for dt in ["|i1", "<i2", ">i4", "<i8", "|u1", "<u2", "<u4", ">u8", "<f2", "<f4", ">f8",
               "<c8", "<c16", "|b1", "|S7", "<U5"]:
        safe = dt.replace("<", "le_").replace(">", "be_").replace("|", "")
        nd(f"dtype_{safe}", data(dt, (23, 11)), (7, 11), (3, 11))
    nd("dtype_record", data([("id", "<i4"), ("x", "<f8"), ("name", "S4")], (50,)), (16,), (4,))
    # shapes: 0-d, empty, 3-D ragged, one element
    nd("shape_0d", np.array(3.25), (), ())
    nd("shape_empty", np.zeros((0, 5), "<f4"), (0, 5), (0, 5))
    nd("shape_3d", data("<i2", (9, 7, 5)), (4, 3, 2), (2, 2, 2))
    nd("shape_one", data("<u4", (1,)), (1,), (1,))
    # special chunks: all zeros, all NaN, one repeated value
    nd("special_zeros", np.zeros((64, 64), "<f8"), (32, 64), (8, 64))
    nd("special_nan", np.full((1000,), np.nan, "<f4"), (250,), (50,))
    nd("special_value", np.full((500,), 7, "<i4"), (100,), (25,))
    # metalayers and variable-length metalayers
    nd("with_meta", data("<f4", (40,)), (16,), (8,), meta={"units": "m/s", "version": 2},
       vlmeta={"author": "asdf-rs tests", "n": 42, "values": [1.5, 2.5]})
    # plain super-chunks
    raw = data("<f8", (5000,)).tobytes()
    frame("schunk_f8", raw, 8, 8000)
    frame("schunk_lz4_u1", data("|u1", (10000,)).tobytes(), 1, 3000, codec=C.LZ4,
          filters=[F.BITSHUFFLE])
    special("special_frame_nan", 4, 400, 250, blosc2.SpecialValue.NAN, None,
            np.full(250, np.nan, "<f4"))
    special("special_frame_zero", 8, 800, 230, blosc2.SpecialValue.ZERO, None,
            np.zeros(230, "<f8"))
    special("special_frame_value", 4, 400, 260, blosc2.SpecialValue.VALUE,
            np.int32(7).tobytes(), np.full(260, 7, "<i4"))
    # sparse frames: a folder of chunk files and an index frame
    nd("sparse_f8", data("<f8", (30, 20)), (8, 20), (4, 20), contiguous=False,
       vlmeta={"kind": "sparse"})
    nd("sparse_zeros", np.zeros((100,), "<i4"), (30,), (10,), contiguous=False)
    # clevel 0: every chunk stored as it is (memcpyed)
    nd("memcpyed", data("<i4", (1000,)), (300,), (64,), clevel=0)
    with open(os.path.join(OUT, "manifest.json"), "w") as f:
        json.dump({"python_blosc2": blosc2.__version__, "c_blosc2": blosc2.blosclib_version,
                   "cases": cases}, f, indent=1)
    total = sum(os.path.getsize(os.path.join(OUT, n)) for n in os.listdir(OUT))
    print(f"{len(cases)} cases, {total} bytes", file=sys.stderr)


if __name__ == "__main__":
    main()
