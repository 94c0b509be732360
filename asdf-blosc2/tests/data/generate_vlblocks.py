"""Writes the fixtures of Blosc2 chunks with variable-length blocks (C-Blosc2 3.x `vlblocks`)
and of Blosc2 arrays whose codec or filter is a plugin, with python-blosc2 (the oracle).

    .venv-oracle/bin/python asdf-blosc2/tests/data/generate_vlblocks.py

vlblocks/: frames (`.b2frame`, and one sparse frame, a folder) whose chunks python-blosc2's
`vlcompress` made (as its `BatchArray` does) with every built-in codec and filter pipeline,
a `BatchArray` file; and, read only, the three frames of C-Blosc2's own compatibility set
(`c-blosc2/`, vendored: see README.md there). For each frame NAME, vlblocks/NAME.bin holds
the bytes python-blosc2 decodes, every block of every chunk one after the other, and
vlblocks/expected.json lists per frame its file (from this folder) and its chunks: their blocks' lengths as python-blosc2's
`vldecompress` (C-Blosc2's `blosc2_vldecompress_ctx`, one thread) gives them, and whether
python-blosc2's whole-chunk `decompress_chunk` gives the same bytes (it does not for the
delta filter: C-Blosc2 encodes each VL block as its own delta reference, but undoes the
filter against the chunk's first bytes when it decompresses the chunk whole). The blocks
python-blosc2 gives are checked here against the blocks it was given.

plugins/: `.b2nd` arrays written with a plugin codec (NDLZ, ZFP_ACC, ZFP_PREC, ZFP_RATE) or
a plugin filter (NDCELL, NDMEAN, INT_TRUNC); plugins.json gives each file's plugin, kind and
id (python-blosc2's `Codec`/`Filter` enums), and which of its chunks python-blosc2 stored
without the plugin (a chunk it could not shrink is stored as it is).

With `--check` nothing is written: python-blosc2 reads every committed frame again and
must give the committed bytes and block lengths (expected.json, NAME.bin), and every
plugin array must carry its plugin (CI runs this).

Deterministic data; python-blosc2 4.14.1 (C-Blosc2 3.3.5) pinned in
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
VL = os.path.join(HERE, "vlblocks")
PLUGINS = os.path.join(HERE, "plugins")
C = blosc2.Codec
F = blosc2.Filter
ext = blosc2.blosc2_ext


def blocks_of(seed, lengths, typesize, kind):
    """Blocks of the given lengths in bytes: smooth integers, text, or random bytes."""
    rng = np.random.default_rng(seed)
    out = []
    for k, n in enumerate(lengths):
        if kind == "smooth":
            items = -(-n // typesize)
            a = (np.arange(items, dtype="<u8") * (k + 3) + seed * 1000) % (1 << (8 * min(typesize, 7)))
            b = a.astype(f"<u{typesize}" if typesize in (1, 2, 4, 8) else "<u8").tobytes()
            out.append((b * 2)[:n])
        elif kind == "text":
            words = [b"mercury", b"venus", b"earth", b"mars", b"jupiter", b"saturn"]
            t = b"-".join(words[(k + j) % len(words)] for j in range(n // 4 + 1))
            out.append(t[:n])
        else:
            out.append(rng.integers(0, 256, n, dtype=np.uint8).tobytes())
    return out


def vlcompress(blocks, **cp):
    return ext.vlcompress(blocks, nthreads=1, **cp)


def vldecompress(chunk):
    return ext.vldecompress(chunk, nthreads=1)


def record(name, path, sparse=False, sources=None):
    """Reads the frame back with python-blosc2 and writes NAME.bin and its entry."""
    s = blosc2.open(path, dparams=blosc2.DParams(nthreads=1))
    s = getattr(s, "schunk", s)  # a BatchArray: its super-chunk
    chunks = []
    data = bytearray()
    for i in range(s.nchunks):
        c = s.get_chunk(i)
        blocks = vldecompress(c) if c[30] & 1 else [s.decompress_chunk(i)]
        if sources is not None:
            assert blocks == sources[i], (name, i)
        for j, b in enumerate(blocks if c[30] & 1 else []):
            assert s.get_vlblock(i, j) == b or (name, i, j) in SKIP_GET_VLBLOCK, (name, i, j)
        whole = s.decompress_chunk(i)
        joined = b"".join(blocks)
        chunks.append({
            "vl_blocks": bool(c[30] & 1),
            "block_lengths": [len(b) for b in blocks],
            "nbytes": len(joined),
            "decompress_chunk_equal": whole == joined,
        })
        data += joined
    if not CHECK:
        with open(os.path.join(VL, name + ".bin"), "wb") as f:
            f.write(data)
    else:
        with open(os.path.join(VL, name + ".bin"), "rb") as f:
            assert f.read() == bytes(data), (name, "bytes differ from NAME.bin")
    return {
        "file": os.path.relpath(path, HERE),
        "sparse": sparse,
        "chunksize": s.chunksize,
        "typesize": s.typesize,
        "nbytes": len(data),
        "chunks": chunks,
    }


CHECK = "--check" in sys.argv[1:]

# get_vlblock runs C-Blosc2's multithreaded delta path, which leaves all but one block
# un-decoded (see the module's doc); those blocks are compared through vldecompress only
SKIP_GET_VLBLOCK = set()


def frame(name, chunks, cparams, sparse=False):
    """A super-chunk of the given VL chunks (lists of blocks), saved as a frame."""
    path = os.path.join(VL, name + ".b2frame")
    storage = blosc2.Storage(urlpath=path, contiguous=not sparse, mode="w")
    s = blosc2.SChunk(chunksize=-1, storage=storage,
                      cparams=blosc2.CParams(typesize=cparams.get("typesize", 1), nthreads=1))
    for blocks in chunks:
        s.append_chunk(vlcompress(blocks, **cparams))
    del s
    return record(name, path, sparse, chunks)


def check():
    """Reads the committed fixtures again: python-blosc2 must give what they record."""
    with open(os.path.join(VL, "expected.json")) as f:
        expected = json.load(f)
    assert expected["python-blosc2"] == blosc2.__version__
    for name, case in expected["frames"].items():
        got = record(name, os.path.join(HERE, case["file"]), case["sparse"])
        assert got == case, (name, got, case)
    with open(os.path.join(PLUGINS, "plugins.json")) as f:
        listing = json.load(f)
    for name, p in listing.items():
        b = blosc2.open(os.path.join(PLUGINS, p["file"]))
        assert b.dtype.str == p["dtype"], name
        c = b.schunk.get_chunk(0)
        got = c[22] if p["kind"] == "codec" else max(c[16:22])
        assert got == p["id"], (name, got)
    print(f"{len(expected['frames'])} frames and {len(listing)} plugin arrays as recorded")


def main():
    if CHECK:
        return check()
    shutil.rmtree(VL, ignore_errors=True)
    shutil.rmtree(PLUGINS, ignore_errors=True)
    os.makedirs(VL)
    os.makedirs(PLUGINS)
    cases = {}

    # every codec and filter pipeline, chunks of 1 to 5 blocks of uneven lengths
    pipelines = {
        "none": ([], []),
        "shuffle": ([F.SHUFFLE], [0]),
        "bitshuffle": ([F.BITSHUFFLE], [0]),
        "delta": ([F.DELTA], [0]),
        "shuffle_delta": ([F.SHUFFLE, F.DELTA], [0, 0]),
        "bytedelta": ([F.SHUFFLE, F.BYTEDELTA], [0, 0]),
    }
    codecs = {"blosclz": C.BLOSCLZ, "lz4": C.LZ4, "lz4hc": C.LZ4HC, "zlib": C.ZLIB, "zstd": C.ZSTD}
    for cname, codec in codecs.items():
        for pname, (filters, meta) in pipelines.items():
            if cname != "zstd" and pname not in ("none", "shuffle"):
                continue
            ts = 4
            chunks = [
                blocks_of(1, [400, 148, 1000], ts, "smooth"),
                blocks_of(2, [64], ts, "smooth"),
                # (C-Blosc2's delta encoder leaves the bytes after the last whole item
                # of a block unwritten: those blocks are whole items)
                blocks_of(3, [1000, 12, 800 if "delta" in pname else 801, 96, 512], ts, "smooth"),
            ]
            name = f"{cname}_{pname}"
            cp = dict(codec=codec, clevel=5, typesize=ts, filters=filters, filters_meta=meta)
            cases[name] = frame(name, chunks, cp)

    # text and random blocks (random ones are stored as they are), item size 8 with blocks
    # that are not whole items, item size 1
    cases["zstd_text_random"] = frame("zstd_text_random", [
        blocks_of(4, [500, 300], 1, "text") + blocks_of(4, [700], 1, "random"),
        blocks_of(5, [33], 1, "random"),
    ], dict(codec=C.ZSTD, clevel=9, typesize=1))
    cases["lz4_shuffle8_ragged"] = frame("lz4_shuffle8_ragged", [
        blocks_of(6, [803, 8, 1601], 8, "smooth"),
        blocks_of(7, [5, 77], 8, "smooth"),
    ], dict(codec=C.LZ4, clevel=9, typesize=8, filters=[F.SHUFFLE], filters_meta=[0]))
    # chunks of equal decoded size: the frame records a fixed chunk size
    cases["zlib_fixed_chunks"] = frame("zlib_fixed_chunks", [
        blocks_of(8, [100, 200, 300], 2, "smooth"),
        blocks_of(9, [600], 2, "smooth"),
        blocks_of(10, [250, 250, 100], 2, "smooth"),
    ], dict(codec=C.ZLIB, clevel=6, typesize=2, filters=[F.BITSHUFFLE], filters_meta=[0]))
    # a sparse frame: a folder with an index and one file per chunk
    cases["zstd_sparse"] = frame("zstd_sparse", [
        blocks_of(11, [300, 20], 4, "smooth"),
        blocks_of(12, [44, 900, 8], 4, "smooth"),
    ], dict(codec=C.ZSTD, clevel=3, typesize=4, filters=[F.SHUFFLE], filters_meta=[0]), sparse=True)

    # a BatchArray, python-blosc2's own writer of such frames (msgpack batches)
    path = os.path.join(VL, "batch_array.b2frame")
    ba = blosc2.BatchArray(urlpath=path, mode="w", items_per_block=3,
                           cparams=blosc2.CParams(codec=C.ZSTD, clevel=5, nthreads=1))
    batches = [
        [{"id": i, "name": f"star-{i}", "flux": [i * 0.5, i * 1.5]} for i in range(7)],
        ["short", "a longer string " * 5, None, True, 42],
        [list(range(j)) for j in range(10)],
    ]
    for b in batches:
        ba.append(b)
    assert [list(x) for x in blosc2.open(path)] == batches
    del ba
    cases["batch_array"] = record("batch_array", path)

    # C-Blosc2's own compatibility frames (vendored: see c-blosc2/README.md)
    for f in ("vlblocks-lz4-fixed-3.0.0", "vlblocks-lz4-variable-3.0.0", "varchunks-lz4-3.0.0"):
        name = "c-blosc2_" + f
        cases[name] = record(name, os.path.join(HERE, "c-blosc2", f + ".b2frame"))

    with open(os.path.join(VL, "expected.json"), "w") as f:
        json.dump({"python-blosc2": blosc2.__version__, "frames": cases}, f, indent=1, sort_keys=True)
        f.write("\n")

    # .b2nd arrays with plugin codecs and filters
    a = np.linspace(-1, 1, 24 * 30).reshape(24, 30)
    img = np.zeros((32, 32), dtype=np.uint8)
    img[::3, ::2] = 7
    img[5:9, :] = 200
    plugins = {
        "codec_ndlz": (img, "codec", "NDLZ", dict(codec=C.NDLZ, codec_meta=4), (16, 32), (8, 8)),
        "codec_zfp_acc": (a, "codec", "ZFP_ACC", dict(codec=C.ZFP_ACC, codec_meta=246), (12, 30), (6, 30)),
        "codec_zfp_prec": (a.astype("<f4"), "codec", "ZFP_PREC", dict(codec=C.ZFP_PREC, codec_meta=12), (12, 30), (6, 30)),
        "codec_zfp_rate": (a, "codec", "ZFP_RATE", dict(codec=C.ZFP_RATE, codec_meta=30), (12, 30), (6, 30)),
        "filter_ndcell": ((np.arange(24 * 30).reshape(24, 30) // 7).astype("<f8"), "filter", "NDCELL", dict(codec=C.LZ4, filters=[F.NDCELL], filters_meta=[4]), (12, 30), (6, 30)),
        "filter_ndmean": (a, "filter", "NDMEAN", dict(codec=C.LZ4, filters=[F.NDMEAN], filters_meta=[4]), (12, 30), (6, 30)),
        "filter_int_trunc": ((np.arange(24 * 30).reshape(24, 30) * 7919 % 100003).astype("<i4"), "filter",
                             "INT_TRUNC", dict(codec=C.LZ4, filters=[F.INT_TRUNC], filters_meta=[20]), (12, 30), (6, 30)),
    }
    listing = {}
    for name, (arr, kind, plugin, cp, chunks, blocks) in plugins.items():
        cp.setdefault("filters", [])
        cp.setdefault("filters_meta", [0] * len(cp["filters"]))
        path = os.path.join(PLUGINS, name + ".b2nd")
        b = blosc2.asarray(arr, urlpath=path, mode="w", chunks=chunks, blocks=blocks,
                           cparams=blosc2.CParams(nthreads=1, **cp))
        stored = []
        for i in range(b.schunk.nchunks):
            c = b.schunk.get_chunk(i)
            if c[2] & 0x02 or c[31] & 0x70:
                stored.append(i)
        enum = C if kind == "codec" else F
        listing[name] = {
            "file": name + ".b2nd",
            "kind": kind,
            "plugin": plugin,
            "id": enum[plugin].value,
            "dtype": arr.dtype.str,
            "stored_chunks": stored,
            "nchunks": b.schunk.nchunks,
        }
        assert len(stored) < b.schunk.nchunks, (name, "every chunk stored without the plugin")
    with open(os.path.join(PLUGINS, "plugins.json"), "w") as f:
        json.dump(listing, f, indent=1, sort_keys=True)
        f.write("\n")


if __name__ == "__main__":
    main()
