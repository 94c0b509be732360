#!/usr/bin/env python3
"""Writes the HDF5 fixtures of asdf-hdf5 (this folder) with h5py 3.16.0, and for each file
``NAME.expect.json``: every dataset and attribute as h5py reads it (datatype, shape and the
canonical value hash of tests/oracle/canonical.py for arrays; the value for strings and
scalars), which asdf-hdf5's tests compare with the converted ASDF file.

    .venv-oracle/bin/python asdf-hdf5/tests/data/generate.py

Run with the pinned oracle venv (tests/oracle-requirements.txt: h5py 3.16.0, numpy,
hdf5plugin 7.1.0 for the filters of plugins.h5).
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[2]
sys.path.insert(0, str(ROOT / "tests" / "oracle"))
import canonical  # noqa: E402

PIN = "3.16.0"
HDF5PLUGIN_PIN = "7.1.0"


def numeric(h5, np, rng):
    f = h5.File(HERE / "numeric.h5", "w")
    for order in "<>":
        g = f.create_group("little" if order == "<" else "big")
        for t in ["i1", "i2", "i4", "i8", "u1", "u2", "u4", "u8", "f2", "f4", "f8"]:
            dt = np.dtype(order + t)
            if dt.kind == "f":
                a = rng.normal(0, 1e3, (3, 4)).astype(dt)
                a[0, 0] = np.nan
                a[0, 1] = -np.inf
            else:
                info = np.iinfo(dt)
                a = rng.integers(info.min, info.max, (3, 4), dtype=dt.newbyteorder("="), endpoint=True).astype(dt)
                a[0, 0], a[0, 1] = info.min, info.max
            g.create_dataset(t, data=a)
        for t in ["c8", "c16"]:
            dt = np.dtype(order + t)
            g.create_dataset(t, data=(rng.random(5) + 1j * rng.random(5)).astype(dt))
            # HDF5 2.0's own complex class (h5py writes a compound unless asked)
            kind = {"c8": "F32", "c16": "F64"}[t] + ("LE" if order == "<" else "BE")
            tid = getattr(h5.h5t, f"COMPLEX_IEEE_{kind}")
            space = h5.h5s.create_simple((5,))
            native = h5.h5d.create(g.id, f"native_{t}".encode(), tid, space)
            native.write(h5.h5s.ALL, h5.h5s.ALL,
                         (rng.random(5) + 1j * rng.random(5)).astype(dt))
    f["bool"] = np.array([[True, False], [False, True]])
    f["cube"] = np.arange(2 * 3 * 4, dtype="<i4").reshape(2, 3, 4)
    f.close()


def strings(h5, np, rng):
    f = h5.File(HERE / "strings.h5", "w")
    f["fixed_ascii"] = np.array([b"alpha", b"be", b""], dtype="S6")
    d = f.create_dataset("fixed_utf8", shape=(2,), dtype=h5.string_dtype("utf-8", 8))
    d[0] = "naïve".encode()
    d[1] = b"x"
    f.create_dataset("vlen_utf8", data=["héllo", "", "wörld ✓"], dtype=h5.string_dtype())
    f.create_dataset("vlen_ascii", data=[b"one", b"two"], dtype=h5.string_dtype("ascii"))
    f.create_dataset("vlen_2d", data=np.array([["a", "bb"], ["ccc", "d"]], dtype=object),
                     dtype=h5.string_dtype())
    f["scalar_string"] = "just one"
    f.close()


def compound(h5, np, rng):
    f = h5.File(HERE / "compound.h5", "w")
    packed = np.dtype([("id", "<i4"), ("x", "<f8"), ("name", "S5")])
    a = np.zeros(4, packed)
    a["id"] = [1, 2, 3, 4]
    a["x"] = rng.random(4)
    a["name"] = [b"a", b"bb", b"ccc", b"ddddd"]
    f["packed"] = a
    aligned = np.dtype([("a", "u1"), ("b", "<f8"), ("c", "<i2")], align=True)
    b = np.zeros(3, aligned)
    b["a"], b["b"], b["c"] = [1, 2, 3], [0.5, -1.5, 2.5], [-7, 8, 9]
    f["aligned"] = b
    inner = np.dtype([("u", "<f4"), ("v", ">i8")])
    nested = np.dtype([("pos", inner), ("vec", "<f4", (3,)), ("flag", "u1")])
    c = np.zeros(2, nested)
    c["pos"]["u"] = [1.5, 2.5]
    c["pos"]["v"] = [10, -20]
    c["vec"] = [[1, 2, 3], [4, 5, 6]]
    c["flag"] = [1, 0]
    f["nested"] = c
    f.close()


def enums_scalars(h5, np, rng):
    f = h5.File(HERE / "enums_scalars.h5", "w")
    colour = h5.enum_dtype({"RED": 0, "GREEN": 1, "BLUE": 42}, basetype="i2")
    f.create_dataset("colour", data=np.array([0, 42, 1, 1], dtype="i2"), dtype=colour)
    f["int_scalar"] = np.int64(-5)
    f["float_scalar"] = np.float64(2.5)
    f["f32_scalar"] = np.float32(0.1)
    f["u8_scalar"] = np.uint8(200)
    f["bool_scalar"] = np.bool_(True)
    f["empty_1d"] = np.zeros((0,), "<f8")
    f["empty_2d"] = np.zeros((3, 0), "<i4")
    f.close()


def chunked(h5, np, rng):
    f = h5.File(HERE / "chunked.h5", "w")
    a = rng.normal(0, 1, (100, 60)).astype("<f4")
    f.create_dataset("gzip_shuffle", data=a, chunks=(25, 30), compression="gzip",
                     compression_opts=6, shuffle=True)
    f.create_dataset("gzip", data=np.arange(1000, dtype="<i8"), chunks=(128,), compression="gzip")
    f.create_dataset("fletcher", data=np.arange(50, dtype="<u2"), chunks=(10,), fletcher32=True)
    d = f.create_dataset("partial", shape=(40, 40), dtype="<i4", chunks=(10, 10), fillvalue=-1)
    d[0:10, 0:10] = 7
    f.create_dataset("resizable", data=np.arange(10, dtype=">f8"), maxshape=(None,), chunks=(4,),
                     fillvalue=2.5)
    f.create_dataset("contiguous", data=np.arange(30, dtype=">f8"))
    f.create_dataset("compact", data=np.arange(8, dtype="<i2"),
                     dcpl=_compact(h5, np))
    f.close()


def _compact(h5, np):
    dcpl = h5.h5p.create(h5.h5p.DATASET_CREATE)
    dcpl.set_layout(h5.h5d.COMPACT)
    return dcpl


def groups_attrs(h5, np, rng):
    f = h5.File(HERE / "groups_attrs.h5", "w", libver="latest")
    f.attrs["title"] = "groups and attributes"
    f.attrs["version"] = np.int64(3)
    f.attrs["scale"] = np.float64(0.25)
    f.attrs["f32"] = np.float32(1.5)
    f.attrs["i16_vector"] = np.array([1, -2, 3], dtype="<i2")
    f.attrs["fixed"] = np.bytes_(b"fixed text")
    f.attrs["names"] = np.array(["a", "bc"], dtype=h5.string_dtype())
    f.attrs["flag"] = np.bool_(False)
    g = f
    for depth in range(10):
        g = g.create_group(f"level{depth}")
        g.attrs["depth"] = np.int64(depth)
    g["deep"] = np.arange(3, dtype="<u4")
    data = f.create_group("data")
    ds = data.create_dataset("temperature", data=rng.random((4, 5)).astype("<f8"))
    ds.attrs["units"] = "K"
    ds.attrs["valid_range"] = np.array([0.0, 1.0])
    data["same"] = ds  # a hard link to the same dataset
    f.create_group("empty_group").attrs["note"] = "no members"
    f.close()


def links_layouts(h5, np, rng, libver):
    """Soft, dangling and external links, a group of many members and a dataset of many
    attributes (dense storage in the latest format), and chunk indexes of every kind."""
    f = h5.File(HERE / f"links_{libver}.h5", "w", libver=libver)
    g = f.create_group("many_members")
    for i in range(20):
        g[f"m{i:02d}"] = np.full(2, i, dtype="<i2")
    d = f.create_dataset("many_attrs", data=np.arange(3, dtype="<f4"))
    for i in range(20):
        d.attrs[f"a{i:02d}"] = np.int64(i * i)
    f.create_dataset("fixed_index", data=np.arange(64, dtype="<i4").reshape(8, 8), chunks=(4, 4))
    e = f.create_dataset("extensible", shape=(10,), maxshape=(None,), chunks=(4,), dtype="<f8")
    e[:] = np.linspace(0, 1, 10)
    b = f.create_dataset("two_unlimited", shape=(6, 6), maxshape=(None, None), chunks=(2, 3),
                         dtype="<u1")
    b[:] = np.arange(36, dtype="u1").reshape(6, 6)
    f["target"] = np.array([3, 1, 4], dtype="<i8")
    f["soft"] = h5.SoftLink("/target")
    f["dangling"] = h5.SoftLink("/nowhere")
    f["external"] = h5.ExternalLink("strings.h5", "/vlen_utf8")
    f.close()


def more_filters(h5, np, rng):
    f = h5.File(HERE / "more_filters.h5", "w")
    f.create_dataset("scaleoffset_int", data=np.arange(100, dtype="<i4") * 3, chunks=(25,),
                     scaleoffset=0)
    f.create_dataset("scaleoffset_float", data=np.linspace(0, 10, 40, dtype="<f8"), chunks=(20,),
                     scaleoffset=3)
    f.close()
    f = h5.File(HERE / "lzf.h5", "w")
    f.create_dataset("lzf", data=np.arange(100, dtype="<i4"), chunks=(50,), compression="lzf")
    f.close()


def plugins(h5, np, rng):
    """Filters other writers use: h5py's lzf and hdf5plugin's LZ4, Bitshuffle (alone, with
    LZ4 and with Zstd inside), Blosc (blosc1 chunks) and Zstd, over data that compresses, in
    several chunks (a last one partial); BZip2 (filter 307) is one asdf-rs does not decode,
    so its dataset is left out of the conversion, listed under _hdf5/left_out."""
    import hdf5plugin

    if hdf5plugin.version != HDF5PLUGIN_PIN:
        sys.exit(f"refusing to run: hdf5plugin {hdf5plugin.version}, the pin is {HDF5PLUGIN_PIN}")
    ints = (np.arange(1000) // 7).astype("<i4") + rng.integers(0, 4, 1000, dtype="<i4")
    grid = np.round(np.sin(np.linspace(0, 20, 20 * 30)), 2).reshape(20, 30).astype("<f8")
    f = h5.File(HERE / "plugins.h5", "w", libver="latest")
    f.create_dataset("lzf", data=ints, chunks=(300,), compression="lzf")
    f.create_dataset("lzf_shuffle", data=grid, chunks=(8, 30), compression="lzf", shuffle=True)
    f.create_dataset("lz4", data=ints, chunks=(300,), **hdf5plugin.LZ4())
    f.create_dataset("lz4_blocks", data=grid, chunks=(8, 30), **hdf5plugin.LZ4(nbytes=1000))
    f.create_dataset("bitshuffle", data=ints, chunks=(300,), **hdf5plugin.Bitshuffle(cname="none"))
    f.create_dataset("bitshuffle_lz4", data=grid, chunks=(8, 30),
                     **hdf5plugin.Bitshuffle(nelems=64, cname="lz4"))
    f.create_dataset("bitshuffle_zstd", data=ints, chunks=(300,),
                     **hdf5plugin.Bitshuffle(cname="zstd"))
    f.create_dataset("blosc_lz4", data=ints, chunks=(300,),
                     **hdf5plugin.Blosc(cname="lz4", clevel=5, shuffle=hdf5plugin.Blosc.SHUFFLE))
    f.create_dataset("blosc_zstd", data=grid, chunks=(8, 30),
                     **hdf5plugin.Blosc(cname="zstd", clevel=5,
                                        shuffle=hdf5plugin.Blosc.BITSHUFFLE))
    f.create_dataset("blosc_blosclz", data=grid, chunks=(8, 30),
                     **hdf5plugin.Blosc(cname="blosclz", clevel=9,
                                        shuffle=hdf5plugin.Blosc.NOSHUFFLE))
    f.create_dataset("zstd", data=grid, chunks=(8, 30), **hdf5plugin.Zstd(clevel=3))
    f.create_dataset("bzip2", data=ints, chunks=(300,), **hdf5plugin.BZip2())
    f["bzip2"].attrs["kept"] = np.int64(7)
    f.close()


def empty(h5, np, rng):
    """Datasets with no element (a null dataspace, h5py.Empty) and datasets whose storage was
    never allocated (read as their fill value, contiguous and chunked, and a chunked one with
    some chunks written)."""
    f = h5.File(HERE / "empty.h5", "w")
    for t in ("<i4", "<u8", "<f8", "|b1"):
        f.create_dataset(f"empty_{np.dtype(t).name}", data=h5.Empty(t))
    f.create_dataset("unallocated", shape=(4, 3), dtype="<i2", fillvalue=-7)
    f.create_dataset("unallocated_chunked", shape=(10,), dtype="<f4", chunks=(4,),
                     fillvalue=2.5)
    d = f.create_dataset("partly_written", shape=(10,), dtype="<u2", chunks=(4,), fillvalue=9)
    d[:4] = np.arange(4, dtype="<u2")
    f.close()


def opaque(h5, np, rng):
    """Opaque datatypes as h5py writes numpy's datetime64, timedelta64 and void arrays
    (h5py.opaque_dtype: the tag `NUMPY:<M8[ns]`), in a dataset and an attribute."""
    f = h5.File(HERE / "opaque.h5", "w")
    t = np.array(["2020-01-01T00:00:00.5", "1970-01-01", "NaT", "1900-02-28T23:59:59"],
                 dtype="datetime64[ns]")
    f.create_dataset("datetime_ns", data=t.astype(h5.opaque_dtype(t.dtype)))
    d = np.array([1, -2, 86400], dtype=">m8[s]")
    f.create_dataset("timedelta_s_big", data=d.astype(h5.opaque_dtype(d.dtype)))
    v = np.array([b"ab\0c", b"\x01\x02\x03\x04", b"\xff\0\0\x7f"], dtype="V4")
    f.create_dataset("void4", data=v.astype(h5.opaque_dtype(v.dtype)))
    f["void4"].attrs.create("when", t[:2], dtype=h5.opaque_dtype(t.dtype))
    f.close()


def refs(h5, np, rng):
    """Object references (datasets and attributes) and a region reference (no form yet)."""
    f = h5.File(HERE / "refs.h5", "w")
    f["data"] = np.arange(6, dtype="<i4")
    f["g/other"] = np.array([1.5, 2.5], dtype="<f8")
    f.create_dataset("refs", data=np.array([[f["data"].ref, f["g"].ref],
                                            [f["g/other"].ref, f.ref]], dtype=h5.ref_dtype))
    f["data"].attrs["peer"] = f["g/other"].ref
    f.create_dataset("regions", data=[f["data"].regionref[1:3]], dtype=h5.regionref_dtype)
    f.close()


def vlen(h5, np, rng):
    """Variable-length sequences (h5py.vlen_dtype): ragged datasets of 1 and 2 dimensions,
    an empty sequence among them, a ragged attribute, and, with no form yet, a compound
    holding a sequence. Then bases of other kinds (big-endian int64, float16, h5py's bool,
    complex64 as h5py's r/i compound), a dataset with no element (shape (0,): no array
    carries its base), and attributes of shape () and (2, 1), which asdf-rs writes back as
    sequences of the same base (round_trip.rs, check_round_trip.py)."""
    f = h5.File(HERE / "vlen.h5", "w")
    d = f.create_dataset("ragged_i4", (3,), dtype=h5.vlen_dtype(np.dtype("<i4")))
    d[0], d[1], d[2] = [], [1, -2], np.arange(5, dtype="<i4") * 7
    g = f.create_dataset("ragged_f8", (2, 2), dtype=h5.vlen_dtype(np.dtype("<f8")))
    for i, n in enumerate((1, 3, 0, 2)):
        g[i // 2, i % 2] = rng.normal(0, 1, n).astype("<f8")
    d.attrs.create("lengths", np.array([np.array([1, 2], "<i2"), np.array([3], "<i2")],
                                       dtype=object), dtype=h5.vlen_dtype(np.dtype("<i2")))
    rec = np.dtype([("id", "<i4"), ("seq", h5.vlen_dtype(np.dtype("<u1")))])
    c = f.create_dataset("records", (2,), dtype=rec)
    c[0] = (1, np.array([1, 2, 3], "<u1"))
    c[1] = (2, np.array([], "<u1"))
    big = f.create_dataset("big_i8", (2,), dtype=h5.vlen_dtype(np.dtype(">i8")))
    big[0], big[1] = np.array([-2 ** 62, 3], ">i8"), np.array([9], ">i8")
    half = f.create_dataset("half", (2,), dtype=h5.vlen_dtype(np.dtype("<f2")))
    half[0], half[1] = np.array([0.5, -1.25, np.inf], "<f2"), np.array([np.nan], "<f2")
    flags = f.create_dataset("flags", (2,), dtype=h5.vlen_dtype(np.dtype(bool)))
    flags[0], flags[1] = np.array([True, False, True]), np.array([], bool)
    waves = f.create_dataset("waves", (1,), dtype=h5.vlen_dtype(np.dtype("<c8")))
    waves[0] = np.array([1 + 2j, -0.5j], "<c8")
    f.create_dataset("none_yet", (0,), dtype=h5.vlen_dtype(np.dtype("<u2")))
    one = np.empty((), object)
    one[()] = np.array([2.5, -1.0], "<f4")
    g.attrs.create("one", one, dtype=h5.vlen_dtype(np.dtype("<f4")))
    column = np.empty((2, 1), object)
    column[0, 0], column[1, 0] = np.array([4, 5, 6], "<u4"), np.array([], "<u4")
    g.attrs.create("column", column, dtype=h5.vlen_dtype(np.dtype("<u4")))
    f.close()


def committed(h5, np, rng):
    """Committed (named) datatypes used by attributes: HDF5 stores such an attribute with a
    shared datatype (attribute message version 2 in the earliest format, 3 in the latest,
    where 20 of them on one dataset go to dense storage), and by a dataset; a compound and
    an enum committed too; and attributes with a null dataspace (h5py.Empty)."""
    for libver in ("earliest", "latest"):
        suffix = "" if libver == "earliest" else "_latest"
        f = h5.File(HERE / f"committed{suffix}.h5", "w", libver=libver)
        f["types/f8"] = np.dtype("<f8")
        f["types/point"] = np.dtype([("x", "<i2"), ("y", ">f4")])
        f["types/colour"] = h5.enum_dtype({"RED": 1, "BLUE": 7}, basetype="u1")
        f.attrs.create("scale", 2.5, dtype=f["types/f8"])
        f.attrs.create("where", np.array([(1, 0.5), (-3, 4.25)], f["types/point"].dtype),
                       dtype=f["types/point"])
        d = f.create_dataset("values", data=np.arange(4, dtype="<f8") / 4, dtype=f["types/f8"])
        d.attrs.create("colours", np.array([1, 7, 7], "u1"), dtype=f["types/colour"])
        d.attrs.create("origin", np.array((5, -1.5), f["types/point"].dtype),
                       dtype=f["types/point"])
        d.attrs["nothing"] = h5.Empty("<i4")
        d.attrs["no_text"] = h5.Empty(h5.string_dtype())
        many = f.create_dataset("many", data=np.zeros(2, "<i2"))
        for i in range(20):
            many.attrs.create(f"a{i:02d}", np.array([i, i + 0.5]), dtype=f["types/f8"])
        f.close()


def regions(h5, np, rng):
    """Dataset region references (h5py.regionref_dtype) of every selection kind: a regular
    hyperslab, a strided one, two blocks (irregular), points, all and none, and a null
    reference, in a dataset and an attribute; the earliest format stores hyperslabs as
    block lists (selection encoding version 1), the latest as start/stride/count/block
    (version 3) or blocks."""
    for libver in ("earliest", "latest"):
        suffix = "" if libver == "earliest" else "_latest"
        f = h5.File(HERE / f"regions{suffix}.h5", "w", libver=libver)
        d = f.create_dataset("grid", data=np.arange(24, dtype="<i4").reshape(4, 6))
        f["g/line"] = np.arange(10, dtype="<f8") * 1.5
        line = f["g/line"]

        def region(ds, select):
            space = h5.h5s.create_simple(ds.shape)
            select(space)
            return h5.h5r.create(f.id, ds.name.encode(), h5.h5r.DATASET_REGION, space)

        def two_blocks(space):
            space.select_hyperslab((0, 0), (1, 1), block=(2, 2))
            space.select_hyperslab((3, 4), (1, 1), block=(1, 2), op=h5.h5s.SELECT_OR)

        refs = [d.regionref[1:3, 2:5], d.regionref[0, ::2], region(d, two_blocks),
                region(d, lambda s: s.select_elements([(0, 1), (3, 5), (2, 2)])),
                region(d, lambda s: s.select_all()), region(d, lambda s: s.select_none()),
                h5.RegionReference()]
        f.create_dataset("regions", data=np.array(refs, dtype=h5.regionref_dtype))
        line.attrs.create("tail", line.regionref[7:], dtype=h5.regionref_dtype)
        f.close()


def nested_refs(h5, np, rng):
    """References and sequences inside other datatypes: a compound holding an object
    reference, a region reference and a number (as netCDF's REFERENCE_LIST); sequences of
    object references (as netCDF's DIMENSION_LIST), in a dataset and an attribute; a
    compound holding sequences and a fixed string; a sequence of compounds."""
    f = h5.File(HERE / "nested_refs.h5", "w")
    f["x"] = np.arange(3, dtype="<f4")
    f["y"] = np.arange(2, dtype="<i8")
    rec = np.dtype([("dataset", h5.ref_dtype), ("part", h5.regionref_dtype), ("index", "<i4")])
    r = np.empty(2, rec)
    r[0] = (f["x"].ref, f["x"].regionref[1:], 0)
    r[1] = (f["y"].ref, f["y"].regionref[:1], 1)
    f.create_dataset("ref_records", data=r)
    seq = h5.vlen_dtype(h5.ref_dtype)
    s = f.create_dataset("ref_lists", (2,), dtype=seq)
    s[0] = np.array([f["x"].ref, f["y"].ref], dtype=h5.ref_dtype)
    s[1] = np.array([f.ref], dtype=h5.ref_dtype)
    dims = np.empty(1, object)
    dims[0] = np.array([f["y"].ref], dtype=h5.ref_dtype)
    f["x"].attrs.create("DIMENSION_LIST", dims, dtype=seq)
    mixed = np.dtype([("id", "<u2"), ("values", h5.vlen_dtype(np.dtype("<f8"))),
                      ("label", "S4"), ("pair", "<i2", (2,))])
    m = f.create_dataset("mixed", (2,), dtype=mixed)
    m[0] = (7, np.array([0.5, 1.5, 2.5]), b"ab", (1, -1))
    m[1] = (8, np.array([], "<f8"), b"wxyz", (3, 4))
    pair = np.dtype([("a", "<i4"), ("b", "<f8")])
    q = f.create_dataset("record_lists", (2,), dtype=h5.vlen_dtype(pair))
    q[0] = np.array([(1, 0.25), (2, -0.5)], pair)
    q[1] = np.array([], pair)
    f.close()


def time_class(h5, np, rng):
    """HDF5's time class (H5T_UNIX_D32LE / D64BE: seconds since 1970), which h5py creates
    through its low-level API but cannot read into numpy (expectations() reads it with the
    file's own type as the memory type), in a dataset of each byte order and an attribute."""
    f = h5.File(HERE / "time.h5", "w")
    for name, tid, values in (("unix32", h5.h5t.UNIX_D32LE, [0, 1700000000, -1]),
                              ("unix64_big", h5.h5t.UNIX_D64BE, [86400, -2 ** 40])):
        t = tid.copy()
        d = h5.h5d.create(f.id, name.encode(), t, h5.h5s.create_simple((len(values),)))
        d.write(h5.h5s.ALL, h5.h5s.ALL, np.array(values, time_dtype(h5, np, t)), mtype=t)
    t = h5.h5t.UNIX_D32LE.copy()
    a = h5.h5a.create(f.id, b"when", t, h5.h5s.create(h5.h5s.SCALAR))
    a.write(np.array(1234567890, "<i4"), mtype=t)
    f.close()


def time_dtype(h5, np, tid):
    """The numpy integer type of an HDF5 time type's bytes (its size and byte order)."""
    # h5py's TypeTimeID has no get_order: compared with the big-endian types (H5Tequal)
    order = ">" if tid in (h5.h5t.UNIX_D32BE, h5.h5t.UNIX_D64BE) else "<"
    return np.dtype(f"{order}i{tid.get_size()}")


class HDF5Lib:
    """HDF5 1.12's references (H5R_ref_t: H5T_STD_REF in the file, datatype version 4),
    which h5py 3.16 neither writes nor reads ("Unknown reference type"): made and read
    through the HDF5 library h5py is built on (the one its wheel bundles, HDF5 2.0.0 for
    h5py 3.16.0), called with ctypes."""

    def __init__(self, h5):
        import ctypes
        import os

        libs = Path(os.path.dirname(h5.__file__)).parent / "h5py.libs"
        self.c = ctypes
        self.lib = lib = ctypes.CDLL(str(next(libs.glob("libhdf5-*.so*"))))
        hid, ref = ctypes.c_int64, ctypes.c_uint8 * 64  # H5R_ref_t: 64 opaque bytes
        self.hid, self.ref = hid, ref
        self.std_ref = hid.in_dll(lib, "H5T_STD_REF_g").value
        refp, size, text = ctypes.POINTER(ref), ctypes.c_size_t, ctypes.c_char_p
        for name, res, args in (
                ("H5Rcreate_object", ctypes.c_int, [hid, text, hid, refp]),
                ("H5Rcreate_region", ctypes.c_int, [hid, text, hid, hid, refp]),
                ("H5Rcreate_attr", ctypes.c_int, [hid, text, text, hid, refp]),
                ("H5Rdestroy", ctypes.c_int, [refp]),
                ("H5Rget_type", ctypes.c_int, [refp]),
                ("H5Rget_obj_name", ctypes.c_ssize_t, [refp, hid, text, size]),
                ("H5Rget_attr_name", ctypes.c_ssize_t, [refp, text, size]),
                ("H5Ropen_region", hid, [refp, hid, hid]),
                ("H5Dcreate2", hid, [hid, text, hid, hid, hid, hid, hid]),
                ("H5Acreate2", hid, [hid, text, hid, hid, hid, hid]),
                ("H5Dwrite", ctypes.c_int, [hid, hid, hid, hid, hid, ctypes.c_void_p]),
                ("H5Awrite", ctypes.c_int, [hid, hid, ctypes.c_void_p]),
                ("H5Dread", ctypes.c_int, [hid, hid, hid, hid, hid, ctypes.c_void_p]),
                ("H5Aread", ctypes.c_int, [hid, hid, ctypes.c_void_p]),
                ("H5Dclose", ctypes.c_int, [hid]), ("H5Aclose", ctypes.c_int, [hid])):
            fn = getattr(lib, name)
            fn.restype, fn.argtypes = res, args

    def check(self, status, what):
        if status < 0:
            sys.exit(f"HDF5 failed: {what}")
        return status

    def refs(self, n):
        return (self.ref * n)()


def refs_1_12(h5, np, rng):
    """HDF5 1.12's references (H5R_ref_t), which libhdf5 1.12 and later write for
    H5T_STD_REF (h5py has no API for them: HDF5Lib): object references to a dataset, a
    group and a nested dataset, and one never written (null); references of each kind
    (object, regions as a hyperslab and as points, an attribute) in a (2, 2) dataset; an
    attribute of one; regions of the earliest format's encoding (this file's)."""
    f = h5.File(HERE / "refs_1_12.h5", "w")
    f["x"] = np.arange(6, dtype="<i4").reshape(2, 3)
    f["x"].attrs["a"] = np.int64(7)
    f["g/y"] = np.array([1.5, 2.5, 3.5])
    c = HDF5Lib(h5)
    fid = f.id.id

    def obj(ref, path):
        c.check(c.lib.H5Rcreate_object(fid, path.encode(), 0, c.c.byref(ref)), path)

    def region(ref, path, select):
        space = f[path].id.get_space()
        select(space)
        c.check(c.lib.H5Rcreate_region(fid, path.encode(), space.id, 0, c.c.byref(ref)), path)

    def write(name, shape, make, written=None):
        n = int(np.prod(shape))
        refs = c.refs(n)
        make(refs)
        space = h5.h5s.create_simple(shape)
        dcpl = h5.h5p.create(h5.h5p.DATASET_CREATE)
        dcpl.set_obj_track_times(False)  # no times: the same bytes each run, as h5py's
        d = c.check(c.lib.H5Dcreate2(fid, name.encode(), c.std_ref, space.id, 0, dcpl.id, 0),
                    name)
        mem, file = 0, 0
        if written is not None:
            # the first `written` elements only: the others are never written (null)
            m = h5.h5s.create_simple((written,))
            space.select_hyperslab((0,), (written,))
            mem, file = m.id, space.id
        c.check(c.lib.H5Dwrite(d, c.std_ref, mem, file, 0, refs), name)
        c.lib.H5Dclose(d)
        for r in refs[:written if written is not None else n]:
            c.lib.H5Rdestroy(c.c.byref(r))

    def objects(refs):
        for r, path in zip(refs, ("/x", "/g", "/g/y")):
            obj(r, path)

    write("objects", (4,), objects, written=3)

    def mixed(refs):
        obj(refs[0], "/g/y")
        region(refs[1], "/x", lambda s: s.select_hyperslab((0, 1), (1, 2)))
        region(refs[2], "/x", lambda s: s.select_elements([(0, 0), (1, 2)]))
        c.check(c.lib.H5Rcreate_attr(fid, b"/x", b"a", 0, c.c.byref(refs[3])), "x@a")

    write("mixed", (2, 2), mixed)
    for owner, name, make in (
            ("/g", "peer", lambda refs: obj(refs[0], "/x")),
            ("/", "whole", lambda refs: (region(refs[0], "/g/y", lambda s: s.select_all()),
                                         obj(refs[1], "/")))):
        refs = c.refs(2 if owner == "/" else 1)
        make(refs)
        space = h5.h5s.create_simple((len(refs),))
        holder = f[owner]  # kept: h5py closes an object's id when it goes
        a = c.check(c.lib.H5Acreate2(holder.id.id, name.encode(), c.std_ref, space.id, 0, 0),
                    name)
        c.check(c.lib.H5Awrite(a, c.std_ref, refs), name)
        c.lib.H5Aclose(a)
        for r in refs:
            c.lib.H5Rdestroy(c.c.byref(r))
    f.close()


def large_ref_nodes(h5, np, f, obj, attr=None):
    """The converted nodes of a dataset (or attribute) of HDF5 1.12's references as the
    HDF5 library reads them (HDF5Lib): an object's `$ref`, a region's dataset `$ref` and
    selection (as ref_node describes old ones), an attribute's `$ref` to its node under
    `_hdf5/attrs`, null for a null reference; nested by shape."""
    c = HDF5Lib(h5)
    if attr is None:
        shape, n = obj.shape, int(np.prod(obj.shape))
        refs = c.refs(n)
        c.check(c.lib.H5Dread(obj.id.id, c.std_ref, 0, 0, 0, refs), obj.name)
    else:
        a = h5.h5a.open(obj.id, attr.encode())
        shape, n = a.shape, int(np.prod(a.shape))
        refs = c.refs(n)
        c.check(c.lib.H5Aread(a.id, c.std_ref, refs), attr)
    out = np.empty(n, object)
    for i, r in enumerate(refs):
        kind = c.lib.H5Rget_type(c.c.byref(r))
        if kind not in (2, 3, 4):  # H5R_OBJECT2, H5R_DATASET_REGION2, H5R_ATTR
            out[i] = None
            continue
        buf = c.c.create_string_buffer(4096)
        c.check(c.lib.H5Rget_obj_name(c.c.byref(r), 0, buf, 4096), "object name")
        path = buf.value.decode()
        pointer = {"$ref": "#" + ("" if path == "/" else path)}
        if kind == 2:
            out[i] = pointer
        elif kind == 3:
            space = h5.h5s.SpaceID(c.check(c.lib.H5Ropen_region(c.c.byref(r), 0, 0), "region"))
            out[i] = {"dataset": pointer} | selection_of(h5, space)
        else:
            c.check(c.lib.H5Rget_attr_name(c.c.byref(r), buf, 4096), "attribute name")
            esc = lambda t: t.replace("~", "~0").replace("/", "~1")  # noqa: E731
            out[i] = {"$ref": f"#/_hdf5/attrs/{esc(path)}/{esc(buf.value.decode())}"}
        c.lib.H5Rdestroy(c.c.byref(r))
    return {"nodes": out.reshape(shape).tolist() if shape else out[0]}


def is_large_ref(h5, tid) -> bool:
    """Whether an HDF5 datatype is HDF5 1.12's reference (not the old object or region
    reference h5py reads)."""
    return (tid.get_class() == h5.h5t.REFERENCE
            and not tid.equal(h5.h5t.STD_REF_OBJ) and not tid.equal(h5.h5t.STD_REF_DSETREG))


def selection_of(h5, space) -> dict:
    """A region's selection as the converted node holds it (`selection` and its points,
    or its blocks and, when regular, start/stride/count/block)."""
    kind = {h5.h5s.SEL_NONE: "none", h5.h5s.SEL_POINTS: "points",
            h5.h5s.SEL_HYPERSLABS: "hyperslab", h5.h5s.SEL_ALL: "all"}[
        space.get_select_type()]
    out = {"selection": kind}
    if kind == "points":
        out["points"] = space.get_select_elem_pointlist().tolist()
    if kind == "hyperslab":
        out["blocks"] = space.get_select_hyper_blocklist().tolist()
        if space.is_regular_hyperslab():
            out["regular"] = [list(map(int, v)) for v in space.get_regular_hyperslab()]
    return out


def sequences_as_stored(h5, np, ds):
    """A dataset's values as h5py reads them, but for sequences whose base is not in the
    machine's byte order: h5py 3.16 hands each as a native array of the stored bytes (the
    big-endian int64 3 reads as 216172782113783808), so each is viewed as the base it is
    (check_round_trip.py compares them as bytes)."""
    v = ds[()]
    base = h5.check_vlen_dtype(ds.dtype)
    if not isinstance(base, np.dtype) or base.isnative or not isinstance(v, np.ndarray):
        return v
    out = np.empty(v.shape, object)
    for i, x in np.ndenumerate(v):
        out[i] = x.view(base)
    return out


def _utf8(b: bytes) -> bool:
    try:
        b.decode("utf-8")
        return True
    except UnicodeDecodeError:
        return False


def expectations(h5, np, path: Path) -> dict:
    out = {"datasets": {}, "attrs": {}}

    def ref_node(x):
        """An object or region reference as the converted node: {"$ref": "#/path"}, or for
        a region the dataset's $ref with the selection h5py reads (both the block list and,
        when regular, start/stride/count/block; the test compares what the form holds)."""
        if not x:
            return None
        target = f[x]
        pointer = {"$ref": "#" + ("" if target.name == "/" else target.name)}
        if not isinstance(x, h5.RegionReference):
            return pointer
        space = h5.h5r.get_region(x, target.id)
        return {"dataset": pointer} | selection_of(h5, space)

    def node(x):
        """A value of a datatype holding references or sequences as the converted node:
        mappings for records, lists for sequences of references or records, an array's
        description for numbers (sequences and array members), scalars as they are."""
        if isinstance(x, h5.Reference):
            return ref_node(x)
        if isinstance(x, bytes):
            # bytes that are not UTF-8: a uint8 array of them
            return x.decode("utf-8") if _utf8(x) else node(np.frombuffer(x, "u1"))
        if isinstance(x, str):
            return x
        if isinstance(x, np.void) and x.dtype.names:
            return {n: node(x[n]) for n in x.dtype.names}
        if isinstance(x, np.ndarray):
            if x.ndim == 0 and (x.dtype.names or x.dtype.kind == "O"):
                return node(x[()])
            if x.dtype.names or x.dtype.kind == "O":
                return [node(y) for y in x]
            return {"array": {"dtype": canonical.dtype_text(x.dtype), "shape": list(x.shape),
                              "sha256": canonical.value_hash(x)}}
        if isinstance(x, np.bool_):
            return bool(x)
        if isinstance(x, np.integer):
            return int(x)
        if isinstance(x, np.floating):
            return float(x)
        raise TypeError(f"no node form for {type(x)}")

    def describe(v):
        if isinstance(v, h5.Empty):
            # a null dataspace: no value, the datatype kept
            text = "string" if h5.check_string_dtype(v.dtype) else canonical.dtype_text(v.dtype)
            return {"empty": True, "dtype": text}
        refs = np.asarray(v) if not isinstance(v, (bytes, str)) else None
        if refs is not None and refs.size and all(type(x) is h5.Reference for x in refs.ravel()):
            # object references: the path of the object each names
            return {"refs": [f[x].name for x in refs.ravel()], "shape": list(refs.shape)}
        a = np.asarray(v)
        if a.dtype.kind == "S" and not all(x.isascii() for x in a.ravel()):
            # fixed-length strings whose bytes are not all ASCII: their bytes, an inner axis
            # of the string's size
            b = np.frombuffer(a.tobytes(), "u1").reshape(a.shape + (a.dtype.itemsize,))
            return describe(b) | {"string_bytes": a.dtype.itemsize}
        texts = [x for x in (a.ravel() if a.dtype.kind == "O" else [v])
                 if isinstance(x, (bytes, str))]
        raw = [x if isinstance(x, bytes) else x.encode("utf-8", "surrogateescape") for x in texts]
        if texts and len(texts) == max(a.size, 1) and not all(_utf8(x) for x in raw):
            # variable-length strings whose bytes are not UTF-8 (h5py gives bytes, or str
            # with surrogate escapes): one uint8 array a string
            arrays = [np.frombuffer(x, "u1") for x in raw]
            return {"ragged": [canonical.value_hash(x) for x in arrays],
                    "lengths": [len(x) for x in arrays], "dtype": "|u1",
                    "shape": list(a.shape), "string_bytes": "variable"}
        if isinstance(v, (bytes, str)):
            return {"string": v.decode() if isinstance(v, bytes) else v}
        if a.dtype.kind in "Mm":
            # an opaque datetime64 / timedelta64: its int64 counts, in its byte order
            order = ">" if a.dtype.byteorder == ">" else "<"
            return describe(a.view(order + "i8")) | {"opaque": "NUMPY:" + a.dtype.str}
        if a.dtype.kind == "V" and not a.dtype.names:
            # opaque bytes: an inner axis of the element's size
            b = a.view("u1").reshape(a.shape + (a.dtype.itemsize,))
            return describe(b) | {"opaque": "NUMPY:" + a.dtype.str}
        if a.dtype.kind == "O" and a.size and all(
                isinstance(x, np.ndarray) and x.ndim == 1 and x.dtype.kind != "O"
                for x in a.ravel()):
            # variable-length sequences: each as its own 1-D array
            base = a.ravel()[0].dtype
            return {"ragged": [canonical.value_hash(np.asarray(x, dtype=base)) for x in a.ravel()],
                    "lengths": [len(x) for x in a.ravel()],
                    "dtype": canonical.dtype_text(base), "shape": list(a.shape)}
        has_objects = a.dtype.kind == "O" and not all(isinstance(x, (bytes, str)) for x in a.ravel())
        if has_objects or (a.dtype.names and any(a.dtype[n].kind == "O" for n in a.dtype.names)):
            # region references, references and sequences inside records or sequences
            return {"nodes": node(v if isinstance(v, h5.Reference) else a)}
        if a.dtype.kind == "O":
            return {"strings": [x.decode() if isinstance(x, bytes) else x for x in a.ravel()],
                    "shape": list(a.shape)}
        return {"dtype": canonical.dtype_text(a.dtype), "shape": list(a.shape),
                "sha256": canonical.value_hash(a)}

    def time_tag(tid):
        return "HDF5_TIME:BE" if time_dtype(h5, np, tid).byteorder == ">" else "HDF5_TIME"

    def visit(name, obj):
        p = "/" + name
        tid = obj.id.get_type() if isinstance(obj, h5.Dataset) else None
        if tid is not None and tid.get_class() == h5.h5t.TIME:
            # numpy has no time type: the bytes, read with the file's own type, as integers
            buf = np.zeros(obj.shape, time_dtype(h5, np, tid))
            obj.id.read(h5.h5s.ALL, h5.h5s.ALL, buf, mtype=tid)
            out["datasets"][p] = describe(buf) | {"opaque": time_tag(tid)}
        elif isinstance(obj, h5.Dataset) and is_large_ref(h5, tid):
            out["datasets"][p] = large_ref_nodes(h5, np, f, obj)
        elif isinstance(obj, h5.Dataset) and stored_string(tid):
            # a fixed-length string: its bytes as stored (h5py's reading converts padding)
            buf = np.zeros(obj.shape, f"S{tid.get_size()}")
            obj.id.read(h5.h5s.ALL, h5.h5s.ALL, buf, mtype=tid)
            out["datasets"][p] = describe_stored(buf)
        elif isinstance(obj, h5.Dataset):
            if obj.shape is None:
                out["datasets"][p] = {"empty": True, "dtype": canonical.dtype_text(obj.dtype)}
            else:
                out["datasets"][p] = describe(sequences_as_stored(h5, np, obj))
        if obj.attrs:
            out["attrs"][p] = {k: attr(obj, k) for k in obj.attrs}

    def describe_stored(buf):
        # a 0-d array keeps the string's size, which numpy's scalar (NULs stripped) does not
        if buf.ndim == 0 and buf[()].isascii():
            return describe(buf[()])
        return describe(buf)

    def stored_string(tid):
        return (tid is not None and tid.get_class() == h5.h5t.STRING
                and not tid.is_variable_str())

    def attr(obj, k):
        a = h5.h5a.open(obj.id, k.encode())
        if stored_string(a.get_type()) and a.shape is not None:
            buf = np.zeros(a.shape, f"S{a.get_type().get_size()}")
            a.read(buf, mtype=a.get_type())
            return describe_stored(buf)
        if is_large_ref(h5, h5.h5a.open(obj.id, k.encode()).get_type()):
            return large_ref_nodes(h5, np, f, obj, k)
        return describe(obj.attrs[k])

    def root_attr(k):
        tid = h5.h5a.open(f.id, k.encode()).get_type()
        if is_large_ref(h5, tid):
            return large_ref_nodes(h5, np, f, f, k)
        if tid.get_class() != h5.h5t.TIME:
            return describe(f.attrs[k])
        buf = np.zeros((), time_dtype(h5, np, tid))
        h5.h5a.open(f.id, k.encode()).read(buf, mtype=tid)
        return describe(buf) | {"opaque": time_tag(tid)}

    f = h5.File(path, "r")
    with f:
        if f.attrs:
            out["attrs"]["/"] = {k: root_attr(k) for k in f.attrs}
        f.visititems(visit)
    return out


def string_bytes(h5, np):
    """Fixed-length strings whose bytes are not ASCII, whatever their declared character set
    (fuzz/regressions/hdf5/ascii-attribute-with-non-ascii-bytes): an ASCII-declared attribute
    and dataset holding bytes above 0x7F, a UTF-8-declared one holding invalid UTF-8, a
    space-padded and a NUL-terminated one, scalars and arrays, and one all ASCII beside them
    (which stays an ascii array). asdf-rs keeps their bytes as uint8 (docs/hdf5.md)."""

    def fixed(size, cset, pad):
        tid = h5.h5t.C_S1.copy()
        tid.set_size(size)
        tid.set_cset(cset)
        tid.set_strpad(pad)
        return tid

    def put(obj, name, tid, data, attr=False):
        data = np.asarray(data, dtype=f"S{tid.get_size()}")
        space = h5.h5s.create_simple(data.shape) if data.shape else h5.h5s.create(h5.h5s.SCALAR)
        if attr:
            h5.h5a.create(obj.id, name.encode(), tid, space).write(data, mtype=tid)
        else:
            # no modification times: the file is the same at every run
            dcpl = h5.h5p.create(h5.h5p.DATASET_CREATE)
            dcpl.set_obj_track_times(False)
            h5.h5d.create(obj.id, name.encode(), tid, space, dcpl=dcpl).write(
                h5.h5s.ALL, h5.h5s.ALL, data, mtype=tid)

    ascii, utf8 = h5.h5t.CSET_ASCII, h5.h5t.CSET_UTF8
    nullpad, nullterm, spacepad = h5.h5t.STR_NULLPAD, h5.h5t.STR_NULLTERM, h5.h5t.STR_SPACEPAD
    high = bytes(np.random.default_rng(20261128).integers(0x80, 0x100, 6, dtype=np.uint8))
    f = h5.File(HERE / "string_bytes.h5", "w")
    g = f.create_group("void4")
    # the fuzz finding's kind: an ASCII attribute of two 8-byte strings, bytes above 0x7F
    put(g, "when", fixed(8, ascii, nullpad), [b"\0eW\xd75\x9a\xe5\x15", b""], attr=True)
    put(g, "scalar", fixed(4, ascii, nullterm), b"a\xffb", attr=True)
    put(g, "utf8_invalid", fixed(6, utf8, nullpad), [b"\xc3(", b"ok"], attr=True)
    put(g, "plain", fixed(5, ascii, nullpad), [b"abc", b"de"], attr=True)
    put(f, "ascii_high", fixed(6, ascii, nullpad), [[high, b"ab"], [b"", b"\x80\x81"]])
    put(f, "ascii_scalar", fixed(3, ascii, nullterm), b"\xe9t\xe9")
    put(f, "utf8_invalid", fixed(4, utf8, nullpad), [b"\xff\xfe", b"\xe2\x82", b"fine"])
    put(f, "space_padded", fixed(5, ascii, spacepad), [b"\xb0C  ", b"ok   "])
    put(f, "plain", fixed(4, ascii, nullpad), [b"abcd", b"x"])
    f.close()


def vlen_bytes(h5, np):
    """Variable-length strings whose bytes are not UTF-8 (h5py stores bytes objects as
    given, whatever the declared character set): a dataset and an attribute. asdf-rs keeps
    their bytes, one uint8 array a string (docs/hdf5.md); not written back."""
    f = h5.File(HERE / "vlen_bytes.h5", "w")
    f.create_dataset("names", data=np.array([b"caf\xe9", b"ok"], dtype=object),
                     dtype=h5.string_dtype("utf-8"))
    f.attrs.create("note", b"\xff\xfeab", dtype=h5.string_dtype("ascii"))
    # a string of such bytes in the tree form (a compound holding a reference)
    tagged = np.dtype([("ref", h5.ref_dtype), ("name", "S4")])
    f["tagged"] = np.array([(f["names"].ref, b"\xe9t\xe9"), (f.ref, b"ok")], dtype=tagged)
    f.close()


def many(h5, np):
    """10,000 small datasets (d = arange(4) + i, at g{i // 100}/d{i % 100}), stored gzipped:
    many.h5.gz. The tests check the values from this formula."""
    import gzip
    import shutil

    raw = HERE / "many.h5"
    with h5.File(raw, "w", libver="latest") as f:
        for i in range(10000):
            f.create_dataset(f"g{i // 100:03d}/d{i % 100:02d}", data=np.arange(4, dtype="<i4") + i)
    with open(raw, "rb") as src, gzip.GzipFile(HERE / "many.h5.gz", "wb", 9, mtime=0) as dst:
        shutil.copyfileobj(src, dst)
    raw.unlink()


def main():
    import h5py
    import numpy as np

    if h5py.__version__ != PIN:
        sys.exit(f"refusing to run: h5py {h5py.__version__}, the pin is {PIN}")
    # `generate.py string_bytes` writes that fixture alone, `generate.py --expectations`
    # only the expectations of the files as they are (HDF5 stamps times into some fixtures,
    # so a full run rewrites them)
    if sys.argv[1:] == ["string_bytes"]:
        string_bytes(h5py, np)
        vlen_bytes(h5py, np)
    if sys.argv[1:]:
        write_expectations(h5py, np)
        return
    rng = np.random.default_rng(20261125)
    for make in (numeric, strings, compound, enums_scalars, chunked, groups_attrs, more_filters,
                 plugins, empty, opaque, refs, vlen, committed, regions, nested_refs,
                 time_class, refs_1_12):
        make(h5py, np, rng)
    string_bytes(h5py, np)
    vlen_bytes(h5py, np)
    for libver in ("earliest", "latest"):
        links_layouts(h5py, np, rng, libver)
    many(h5py, np)
    write_expectations(h5py, np)


def write_expectations(h5, np):
    import hdf5plugin  # noqa: F401  (registers the filters of plugins.h5 for reading)

    for p in sorted(HERE.glob("*.h5")):
        exp = expectations(h5, np, p)
        p.with_suffix(".expect.json").write_text(json.dumps(exp, indent=1, sort_keys=True) + "\n")
        print(p.name, p.stat().st_size)
    # files of other writers (other_writers/README.md), vendored as they are: only what h5py
    # reads from them is written here
    for p in sorted((HERE / "other_writers").iterdir()):
        if p.suffix in (".h5", ".nc"):
            exp = expectations(h5, np, p)
            out = p.with_name(p.name + ".expect.json")
            out.write_text(json.dumps(exp, indent=1, sort_keys=True) + "\n")
            print(p.name, p.stat().st_size)


if __name__ == "__main__":
    main()
