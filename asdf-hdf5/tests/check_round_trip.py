#!/usr/bin/env python3
"""h5py's side of the HDF5 round trip: for each fixture NAME.h5 of asdf-hdf5/tests/data, the
file ``DIR/hdf5_NAME.back.h5`` that asdf-rs wrote from its own conversion (h5 → asdf → h5,
made by asdf-hdf5/tests/it/round_trip.rs with ASDF_WRITE_OUT=DIR), and ``DIR/hdf5_NAME.banded.h5``
written the same way band by band (the path of datasets larger than memory), must hold, as h5py reads it,
the same datasets (values, datatypes, shapes), attributes (values and types), chunk shapes,
filters, and soft and external links (same paths and files) as the original. Also, python asdf must open ``DIR/hdf5_NAME.asdf`` (the middle step)
and give each dataset's values at its key path.

    .venv-oracle/bin/python asdf-hdf5/tests/check_round_trip.py DIR
"""

from __future__ import annotations

import sys
import warnings
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE / "data"))
import generate  # noqa: E402  (HDF5 1.12's references, read through the HDF5 library)
# filters asdf-hdf5 reads but hdf5-writer does not write (docs/hdf5.md)
UNWRITTEN = ("lzf", "szip")
# fixtures converted to ASDF only (h5py_files.rs), not round-tripped: committed*.h5
# (attributes of committed datatypes, and of null dataspaces, which have no HDF5 form on the
# way back yet), regions*.h5 and nested_refs.h5 (the tree form of region references and of
# references and sequences inside other datatypes, not written back), time.h5 (HDF5's time
# class, as integers: h5py reads it only with the file's own type as the memory type, which
# this does; written back as integers); plugins.h5 (filters
# other writers use, not written back, and a dataset left out) and empty.h5 (null
# dataspaces, which have no HDF5 form on the way back yet) and opaque.h5 (opaque datatypes,
# written back as their counts or bytes) and refs.h5 (object references, not written back as
# references) and vlen.h5 (variable-length sequences, a list of 1-D arrays each; written back
# as sequences but for the compound holding one, left out: check_sequences compares them):
# python asdf must read their ASDF files with each
# dataset's values (null for a null dataspace; none for one left out; an opaque datetime64 or
# timedelta64 as its int64 counts, other opaque data as its bytes); vlen_bytes.h5
# (variable-length strings whose bytes are not UTF-8, kept as bytes, not written back:
# docs/hdf5.md); refs_1_12.h5 (HDF5
# 1.12's references, which h5py does not read: compared with the HDF5 library's reading,
# large_ref_form)
ASDF_ONLY = ("committed", "committed_latest", "empty", "nested_refs", "opaque", "plugins",
             "refs", "refs_1_12", "regions", "regions_latest", "time", "vlen", "vlen_bytes")


def same(a, b, np) -> bool:
    a, b = np.asarray(a), np.asarray(b)
    if a.dtype != b.dtype or a.shape != b.shape:
        return False
    if a.dtype.kind in "fc":
        return np.array_equal(a, b, equal_nan=True)
    if a.dtype.names:
        return all(same(a[n], b[n], np) for n in a.dtype.names)
    return np.array_equal(a, b)


def same_values(a, b, np) -> bool:
    """Equal values, records compared field by field (ASDF records are packed: an aligned
    numpy dtype reads back without its padding)."""
    a, b = np.asarray(a), np.asarray(b)
    if a.dtype.names:
        return a.dtype.names == b.dtype.names and all(same_values(a[n], b[n], np) for n in a.dtype.names)
    return same(a, b, np)


def compare(orig, back, np, h5py) -> list[str]:
    problems = []

    def attrs(name, o, b):
        for k in o.attrs:
            if k not in b.attrs:
                problems.append(f"{name}@{k}: missing")
                continue
            x, y = o.attrs[k], b.attrs[k]
            if type(x) is not type(y) or not same(x, y, np):
                problems.append(f"{name}@{k}: {x!r} became {y!r}")

    def visit(name, o):
        if name not in back:
            problems.append(f"{name}: missing")
            return
        b = back[name]
        if isinstance(o, h5py.Dataset):
            if o.dtype != b.dtype or o.shape != b.shape:
                problems.append(f"{name}: {o.dtype} {o.shape} became {b.dtype} {b.shape}")
            elif not same(o[()], b[()], np):
                problems.append(f"{name}: values differ")
            if o.fillvalue != b.fillvalue and not (o.fillvalue != o.fillvalue):
                problems.append(f"{name}: fill value {o.fillvalue!r} became {b.fillvalue!r}")
            if o.maxshape != b.maxshape:
                problems.append(f"{name}: maxshape {o.maxshape} became {b.maxshape}")
            if o.chunks != b.chunks:
                problems.append(f"{name}: chunks {o.chunks} became {b.chunks}")
            if o.compression in UNWRITTEN or o.scaleoffset is not None:
                pass  # read, not written back (docs/hdf5.md): the values were compared above
            elif (o.compression, o.compression_opts, o.shuffle, o.fletcher32) != (
                    b.compression, b.compression_opts, b.shuffle, b.fletcher32):
                problems.append(f"{name}: filters {o.compression} {o.compression_opts} "
                                f"shuffle={o.shuffle} fletcher32={o.fletcher32} became "
                                f"{b.compression} {b.compression_opts} shuffle={b.shuffle} "
                                f"fletcher32={b.fletcher32}")
        attrs(name, o, b)

    orig.visititems(visit)
    attrs("/", orig, back)
    problems += compare_links(orig, back, h5py)
    problems += compare_fixed_strings(orig, back, np, h5py)
    return problems


def stored_strings(h5py, np, obj, name=None):
    """A fixed-length string dataset's (or, with ``name``, attribute's) type and bytes as
    stored, read with the file's own type (h5py's reading converts the padding); None for
    other datatypes."""
    if name is None:
        tid, shape = obj.id.get_type(), obj.shape
    else:
        a = h5py.h5a.open(obj.id, name.encode())
        tid, shape = a.get_type(), a.shape
    if tid.get_class() != h5py.h5t.STRING or tid.is_variable_str() or shape is None:
        return None
    buf = np.zeros(shape, f"S{tid.get_size()}")
    if name is None:
        obj.id.read(h5py.h5s.ALL, h5py.h5s.ALL, buf, mtype=tid)
    else:
        a.read(buf, mtype=tid)
    kind = (tid.get_size(), tid.get_cset(), tid.get_strpad())
    return kind, np.frombuffer(buf.tobytes(), "u1").reshape(shape + (tid.get_size(),))


def compare_fixed_strings(orig, back, np, h5py) -> list[str]:
    """Fixed-length strings written back as their bytes (`_hdf5/string_bytes`,
    docs/hdf5.md) have the original's size, character set, padding and stored bytes (the
    fixtures' other fixed strings are h5py's: null-padded ASCII, which the way back writes)."""
    problems = []

    def one(at, o, b):
        if o is None:
            return
        if b is None:
            problems.append(f"{at}: a fixed-length string became another type")
        elif o[0] != b[0]:
            problems.append(f"{at}: string (size, cset, padding) {o[0]} became {b[0]}")
        elif not np.array_equal(o[1], b[1]):
            problems.append(f"{at}: stored string bytes differ")

    def visit(name, o):
        if name not in back:
            return
        if isinstance(o, h5py.Dataset):
            one(name, stored_strings(h5py, np, o), stored_strings(h5py, np, back[name]))
        for k in o.attrs:
            if k in back[name].attrs:
                one(f"{name}@{k}", stored_strings(h5py, np, o, k),
                    stored_strings(h5py, np, back[name], k))

    orig.visititems(visit)
    for k in orig.attrs:
        if k in back.attrs:
            one(f"/@{k}", stored_strings(h5py, np, orig, k), stored_strings(h5py, np, back, k))
    return problems


def asdf_string_bytes(af, o, np, h5py) -> list[str]:
    """python asdf reads each fixed-length string kept as bytes (`_hdf5/string_bytes`) as
    uint8 holding the stored bytes, the string's size its last axis."""
    problems = []
    for key, record in af.tree.get("_hdf5", {}).get("string_bytes", {}).items():
        path, at, name = key.partition("@")
        if at:
            got = af.tree["_hdf5"]["attrs"][path][name]
        else:
            got = af.tree
            for part in path.strip("/").split("/"):
                got = got[part]
        if record["size"] == "variable":
            # variable-length strings: a uint8 array each, of the bytes h5py gives (as
            # bytes, or as str with surrogate escapes)
            v = o[path].attrs[name] if at else o[path][()]
            v = np.asarray(v, object).ravel()
            tid = (h5py.h5a.open(o[path].id, name.encode()) if at else o[path].id).get_type()
            if record["cset"] != ("utf-8" if tid.get_cset() == h5py.h5t.CSET_UTF8 else "ascii"):
                problems.append(f"{key}: recorded as {record}, declared cset {tid.get_cset()}")
            want = [np.frombuffer(x if isinstance(x, bytes)
                                  else x.encode("utf-8", "surrogateescape"), "u1") for x in v]
            got = flat(got)
            if len(got) != len(want) or not all(
                    np.asarray(g).dtype == np.uint8 and np.array_equal(g, w)
                    for g, w in zip(got, want)):
                problems.append(f"{key}: python asdf reads {got!r}")
            continue
        want = (stored_strings(h5py, np, o[path], name) if at
                else stored_strings(h5py, np, o[path]))
        got = np.asarray(got)
        if want is None or record["size"] != want[0][0]:
            problems.append(f"{key}: recorded as {record}, h5py reads {want and want[0]}")
        elif got.dtype != np.uint8 or not np.array_equal(got, want[1]):
            problems.append(f"{key}: python asdf reads {got.dtype} {got.shape}")
    return problems


def compare_links(orig, back, h5py) -> list[str]:
    """Soft and external links must come back as such, with the same paths (and files);
    groups are walked through their hard links."""
    problems = []

    def walk(go, gb, path):
        for k in go.keys():
            name = f"{path}/{k}"
            lo, lb = go.get(k, getlink=True), gb.get(k, getlink=True)
            if isinstance(lo, h5py.SoftLink):
                if not isinstance(lb, h5py.SoftLink) or lb.path != lo.path:
                    problems.append(f"{name}: soft link to {lo.path} became {lb!r}")
            elif isinstance(lo, h5py.ExternalLink):
                if not isinstance(lb, h5py.ExternalLink) or (lb.filename, lb.path) != (
                        lo.filename, lo.path):
                    problems.append(f"{name}: external link to {lo.filename}:{lo.path} "
                                    f"became {lb!r}")
            elif not isinstance(lb, h5py.HardLink):
                problems.append(f"{name}: hard link became {lb!r}")
            elif isinstance(go[k], h5py.Group):
                walk(go[k], gb[k], name)

    walk(orig, back, "")
    return problems


def check_masks(out, np, h5py, asdf) -> int:
    """Masked arrays (asdf-hdf5/tests/it/masks.rs): python asdf's reading of the original
    ``hdf5_masked.asdf`` is the oracle. In ``hdf5_masked.h5`` an array mask is the companion
    dataset that the data's ``_asdf_mask`` attribute names, which h5py reads as those booleans;
    a mask number is the ``_asdf_mask_value`` attribute. ``hdf5_masked.back.asdf`` (converted
    back) must open in python asdf as numpy masked arrays with the same data and masks."""
    names = ("hdf5_masked.asdf", "hdf5_masked.h5", "hdf5_masked.back.asdf")
    if not all((out / n).exists() for n in names):
        print(f"{' or '.join(names)} was not written")
        return 1
    problems = []
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        with asdf.open(out / names[0], lazy_load=False) as orig, \
                asdf.open(out / names[2], lazy_load=False) as back, \
                h5py.File(out / names[1], "r") as h5:
            for key in ("flux", "counts", "temps"):
                o, b = orig.tree["obs"][key], back.tree["obs"][key]
                if not isinstance(o, np.ma.MaskedArray) or not o.mask.any():
                    problems.append(f"obs/{key}: the original reads as {type(o)} without a mask")
                    continue
                if not isinstance(b, np.ma.MaskedArray):
                    problems.append(f"obs/{key}: converted back, reads as {type(b)}")
                    continue
                if not same(np.ma.getmaskarray(o), np.ma.getmaskarray(b), np) or not same(
                        o.data, b.data, np):
                    problems.append(f"obs/{key}: converted back, other data or mask")
                if f"obs/{key}" not in h5:
                    problems.append(f"obs/{key}: not in {names[1]}")
                    continue
                ds = h5[f"obs/{key}"]
                if key == "flux":
                    companion = ds.attrs.get("_asdf_mask")
                    companion = companion.decode() if isinstance(companion, bytes) else companion
                    if companion is None or f"obs/{companion}" not in h5:
                        problems.append(f"obs/{key}: no companion mask dataset ({companion!r})")
                        continue
                    m = h5[f"obs/{companion}"][()]
                    if m.dtype != np.bool_ or not same(m, np.ma.getmaskarray(o), np):
                        problems.append(f"obs/{key}: h5py reads the companion {companion} as "
                                        f"{m.dtype} {m!r}")
                    if "_asdf_mask" in h5[f"obs/{companion}"].attrs:
                        problems.append(f"obs/{companion}: a mask of its own")
                else:
                    value = ds.attrs.get("_asdf_mask_value")
                    if value is None or not same(np.ma.getmaskarray(o),
                                                 np.ma.getmaskarray(
                                                     np.ma.masked_values(ds[()], value)), np):
                        problems.append(f"obs/{key}: _asdf_mask_value {value!r} masks otherwise")
    for p in problems:
        print(f"masked: {p}")
    print(f"masked arrays: {'ok' if not problems else f'{len(problems)} problems'}")
    return len(problems)


def flat(node):
    """The leaves of nested lists, in order."""
    if isinstance(node, list):
        return [x for n in node for x in flat(n)]
    return [node]


def as_asdf(a, np):
    """h5py's reading of an opaque dataset as asdf-rs converts it: datetime64 and
    timedelta64 as their int64 counts (in their byte order), void data as its bytes."""
    a = np.asarray(a)
    if a.dtype.kind in "Mm":
        return a.view((">" if a.dtype.byteorder == ">" else "<") + "i8")
    if a.dtype.kind == "V" and not a.dtype.names:
        return a.view("u1").reshape(a.shape + (a.dtype.itemsize,))
    return a


def region_mask(node, shape, np):
    """The elements a region's selection in the tree form selects (docs/hdf5.md), as a mask."""
    mask = np.zeros(shape, bool)
    kind = node["selection"]
    if kind == "all":
        mask[...] = True
    elif kind == "points":
        for p in node["points"]:
            mask[tuple(p)] = True
    elif kind == "blocks":
        for start, end in node["blocks"]:
            mask[tuple(slice(s, e + 1) for s, e in zip(start, end))] = True
    elif kind == "hyperslab":
        axes = [np.concatenate([np.arange(b) + s + t * k for k in range(c)]).astype(int)
                for s, t, c, b in zip(node["start"], node["stride"], node["count"],
                                      node["block"])]
        mask[np.ix_(*axes)] = True
    elif kind != "none":
        raise ValueError(f"selection {kind!r}")
    return mask


def tree_form(want, got, o, np, h5py) -> bool:
    """Whether python asdf's reading of the tree form (records as mappings, references
    resolved, a region as its dataset and selection, numbers as arrays) holds what h5py
    reads: a region selects the elements h5py's ``dset[ref]`` gives."""
    if isinstance(want, h5py.RegionReference):
        if not want:
            return got is None
        target = o[want]
        data = np.asarray(got["dataset"])
        if not same(target[()], data, np):
            return False
        picked = np.sort(data[region_mask(got, data.shape, np)])
        h5 = (np.array([], data.dtype) if got["selection"] == "none"
              else np.sort(np.ravel(target[want])))
        return np.array_equal(picked, h5)
    if isinstance(want, h5py.Reference):
        if not want:
            return got is None
        target = o[want]
        if isinstance(target, h5py.Group):
            return hasattr(got, "keys")
        if h5py.check_string_dtype(target.dtype) and not all(
                generate._utf8(x) for x in np.asarray(target[()], object).ravel()
                if isinstance(x, bytes)):
            # strings of bytes that are not UTF-8: a uint8 array each (docs/hdf5.md)
            want = [np.frombuffer(x, "u1") for x in np.asarray(target[()], object).ravel()]
            got = flat(got)
            return len(got) == len(want) and all(same(w, g, np) for w, g in zip(want, got))
        return same(target[()], got, np)
    if isinstance(want, np.void) and want.dtype.names:
        return (isinstance(got, dict) and list(got) == list(want.dtype.names)
                and all(tree_form(want[n], got[n], o, np, h5py) for n in want.dtype.names))
    if isinstance(want, np.ndarray) and (want.dtype.names or want.dtype.kind == "O"):
        if want.ndim == 0:
            return tree_form(want[()], got, o, np, h5py)
        return (isinstance(got, list) and len(got) == len(want)
                and all(tree_form(w, g, o, np, h5py) for w, g in zip(want, got)))
    if isinstance(want, np.ndarray):
        return same(want, got, np)
    if isinstance(want, bytes):
        if not generate._utf8(want):
            # bytes that are not UTF-8: a uint8 array of them (docs/hdf5.md)
            return same(np.frombuffer(want, "u1"), got, np)
        return got == want.decode("utf-8")
    return got == want


def large_ref_form(want, got, o, np) -> bool:
    """Whether python asdf's reading of HDF5 1.12 references (their `$ref`s resolved)
    holds what the HDF5 library reads (``want``, generate.large_ref_nodes): an object's
    values (a group as a mapping), an attribute's value, a region's dataset and the
    elements its selection selects."""
    if want is None:
        return got is None
    if isinstance(want, list):
        return (isinstance(got, list) and len(got) == len(want)
                and all(large_ref_form(w, g, o, np) for w, g in zip(want, got)))
    pointer = (want.get("$ref") or want["dataset"]["$ref"])[1:]
    if pointer.startswith("/_hdf5/attrs/"):
        owner, name = (t.replace("~1", "/").replace("~0", "~")
                       for t in pointer[len("/_hdf5/attrs/"):].split("/"))
        return same(o[owner].attrs[name], got, np)
    target = o[pointer or "/"]
    if "selection" not in want:
        return hasattr(got, "keys") if not hasattr(target, "shape") else same(target[()], got, np)
    data = np.asarray(got["dataset"])
    want = ({"selection": "blocks", "blocks": want["blocks"]}
            if want["selection"] == "hyperslab" else want)
    return same(target[()], data, np) and np.array_equal(
        region_mask(got, data.shape, np), region_mask(want, data.shape, np))


def asdf_reads(src, middle, np, h5py, asdf) -> list:
    """python asdf's reading of ``middle`` (src converted by asdf-rs) against h5py's of src:
    every dataset's values, datatypes and shapes; a null dataspace (h5py.Empty) as None; a
    dataset listed under _hdf5/left_out absent."""
    import hdf5plugin  # noqa: F401  (registers the filters of plugins.h5 with h5py)

    if not middle.exists():
        return [f"{middle.name} was not written"]
    problems = []
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        with asdf.open(middle, lazy_load=False) as af, h5py.File(src, "r") as o:
            af.resolve_references()  # object references are `$ref`s within the file
            meta = af.tree.get("_hdf5", {})
            left = meta.get("left_out", {})
            # the tree form and null dataspaces of attributes (`PATH@NAME`)
            for key in list(meta.get("value_datasets", {})) + list(meta.get("empty_datasets", {})):
                path, _, name = key.rpartition("@")
                if not path:
                    continue
                got = meta["attrs"][path][name]
                if generate.is_large_ref(h5py, h5py.h5a.open(o[path].id, name.encode()).get_type()):
                    want = generate.large_ref_nodes(h5py, np, o, o[path], name)["nodes"]
                    if not large_ref_form(want, got, o, np):
                        problems.append(f"{key}: python asdf reads {got!r}")
                    continue
                want = o[path].attrs[name]
                if isinstance(want, h5py.Empty):
                    if got is not None:
                        problems.append(f"{key}: a null dataspace reads as {got!r}")
                elif not tree_form(want, got, o, np, h5py):
                    problems.append(f"{key}: python asdf reads {got!r}")

            def visit(p, obj):
                if not isinstance(obj, h5py.Dataset):
                    return
                node = af.tree
                for part in p.split("/"):
                    node = node.get(part) if isinstance(node, dict) else None
                if "/" + p in left:
                    if node is not None:
                        problems.append(f"{p}: left out, but in the tree")
                elif generate.is_large_ref(h5py, obj.id.get_type()):
                    want = generate.large_ref_nodes(h5py, np, o, obj)["nodes"]
                    if not large_ref_form(want, got=node, o=o, np=np):
                        problems.append(f"{p}: python asdf reads {node!r}")
                elif obj.id.get_type().get_class() == h5py.h5t.TIME:
                    # seconds since 1970 as integers of the type's size and byte order
                    tid = obj.id.get_type()
                    big = tid in (h5py.h5t.UNIX_D32BE, h5py.h5t.UNIX_D64BE)
                    buf = np.zeros(obj.shape, f"{'>' if big else '<'}i{tid.get_size()}")
                    obj.id.read(h5py.h5s.ALL, h5py.h5s.ALL, buf, mtype=tid)
                    if not same(buf, node, np):
                        problems.append(f"{p}: python asdf reads other times")
                elif "/" + p in meta.get("value_datasets", {}):
                    if not tree_form(obj[()], node, o, np, h5py):
                        problems.append(f"{p}: python asdf reads {node!r}")
                elif "/" + p in meta.get("string_bytes", {}):
                    pass  # asdf_string_bytes
                elif h5py.check_dtype(ref=obj.dtype) is h5py.Reference:
                    # `$ref`s to the objects' nodes: python asdf must resolve each to the
                    # node of the object h5py names
                    for r, got in zip(obj[()].ravel(), flat(node)):
                        want = o[r]
                        if isinstance(want, h5py.Dataset) and not same(want[()], got, np):
                            problems.append(f"{p}: a reference resolves to other values")
                        if isinstance(want, h5py.Group) and not hasattr(got, "keys"):
                            problems.append(f"{p}: a reference to a group resolves to {got!r}")
                elif h5py.check_vlen_dtype(obj.dtype) is not None:
                    # as stored (a base not in native order: generate.py)
                    base = h5py.check_vlen_dtype(obj.dtype)
                    seqs = [x if base.isnative else x.view(base).astype(base.newbyteorder("="))
                            for x in obj[()].ravel()]
                    got = flat(node)
                    if len(got) != len(seqs) or not all(
                            same(w, g, np) for w, g in zip(seqs, got)):
                        problems.append(f"{p}: python asdf reads other sequences")
                elif obj.shape is None:
                    if node is not None:
                        problems.append(f"{p}: a null dataspace reads as {node!r}")
                elif node is None or not same(as_asdf(obj[()], np), node, np):
                    problems.append(f"{p}: python asdf reads other values")
            o.visititems(visit)
            problems += asdf_string_bytes(af, o, np, h5py)
    return problems


def sequence_problems(at, o, b, np, h5py) -> list[str]:
    """Variable-length sequences (a dataset's or an attribute's values, ``o`` the original's
    and ``b`` ours, with their h5py dtypes) as h5py reads them: the same base datatype, shape
    and elements, compared as bytes (h5py 3.16 hands the elements of a base not in native
    order as native arrays of the stored bytes, generate.py)."""
    (ov, od), (bv, bd) = o, b
    ob, bb = h5py.check_vlen_dtype(od), h5py.check_vlen_dtype(bd)
    if ob is None or bb is None or ob != bb:
        return [f"{at}: sequences of {ob!r} became {bd!r} (base {bb!r})"]
    def elements(v):
        # a scalar one (shape ()) reads as its sequence
        if isinstance(v, np.ndarray) and v.dtype != object:
            one = np.empty((), object)
            one[()] = v
            return one
        return np.asarray(v, object)

    ov, bv = elements(ov), elements(bv)
    if ov.shape != bv.shape:
        return [f"{at}: shape {ov.shape} became {bv.shape}"]
    for i, x in np.ndenumerate(ov):
        y = bv[i]
        if x.dtype != y.dtype or x.shape != y.shape or x.tobytes() != y.tobytes():
            return [f"{at}: element {i}: {x!r} became {y!r}"]
    return []


def check_sequences(out, np, h5py) -> int:
    """The way back of variable-length sequences (sequences.rs): in ``hdf5_NAME.back.h5``
    and ``hdf5_NAME.banded.h5`` every dataset and attribute of sequences of the fixture
    reads in h5py as the original's (the sequences of records of nested_refs.h5 included),
    and what the way back leaves out (a compound holding a sequence) is neither a dataset
    nor an attribute."""
    bad = 0
    for name, left_out in (("vlen", ["records"]), ("nested_refs", ["mixed"])):
        for kind in ("back", "banded"):
            path = out / f"hdf5_{name}.{kind}.h5"
            if not path.exists():
                print(f"{path.name} was not written")
                bad += 1
                continue
            problems, seen = [], 0
            with h5py.File(HERE / "data" / f"{name}.h5", "r") as o, h5py.File(path, "r") as b:
                def visit(p, obj):
                    nonlocal seen
                    def vlen(t):
                        # sequences of numbers or records (not of references: check_scales)
                        base = h5py.check_vlen_dtype(t)
                        return isinstance(base, np.dtype) and base.kind != "O"

                    if isinstance(obj, h5py.Dataset) and vlen(obj.dtype):
                        seen += 1
                        if p not in b:
                            problems.append(f"{p}: missing")
                        else:
                            problems.extend(sequence_problems(
                                p, (obj[()], obj.dtype), (b[p][()], b[p].dtype), np, h5py))
                    for k in obj.attrs:
                        t = obj.attrs.get_id(k).dtype
                        if not vlen(t):
                            continue
                        seen += 1
                        if p not in b or k not in b[p].attrs:
                            problems.append(f"{p}@{k}: missing")
                            continue
                        problems.extend(sequence_problems(
                            f"{p}@{k}", (obj.attrs[k], t),
                            (b[p].attrs[k], b[p].attrs.get_id(k).dtype), np, h5py))
                o.visititems(visit)
                for p in left_out:
                    if p in b or p in b.attrs:
                        problems.append(f"{p}: left out, but written")
            for p in problems:
                print(f"{path.name}: {p}")
            bad += len(problems) + (seen == 0)
            print(f"{path.name}: {seen} datasets and attributes of sequences checked")
    return bad


def check_scales(out, h5py) -> int:
    """netCDF's dimension scales written back as references (tree_forms.rs): in each
    ``hdf5_scales_NAME.back.h5``, every DIMENSION_LIST and REFERENCE_LIST attribute names, as
    h5py reads it, the objects the original's names (and the same dimensions)."""
    bad = 0
    for name in ("nc4_basic.nc", "nc4_groups.nc", "nc4_unlimited.nc", "same_size_dims.nc"):
        back = out / f"hdf5_scales_{name}.back.h5"
        if not back.exists():
            print(f"{back.name} was not written")
            bad += 1
            continue
        seen = 0
        with h5py.File(HERE / "data" / "other_writers" / name, "r") as o, \
                h5py.File(back, "r") as b:
            def visit(p, obj):
                nonlocal bad, seen
                for k in ("DIMENSION_LIST", "REFERENCE_LIST"):
                    if k not in obj.attrs:
                        continue
                    seen += 1
                    w, g = o[p].attrs[k], b[p].attrs[k] if k in b[p].attrs else None
                    if k == "DIMENSION_LIST":
                        want = [[o[r].name for r in seq] for seq in w]
                        got = None if g is None else [[b[r].name for r in seq] for seq in g]
                    else:
                        want = [(o[e["dataset"]].name, int(e["dimension"])) for e in w]
                        got = None if g is None else [(b[e["dataset"]].name, int(e["dimension"]))
                                                      for e in g]
                    if got != want:
                        print(f"{back.name}: {p}@{k} names {got}, not {want}")
                        bad += 1
            o.visititems(visit)
        print(f"{back.name}: {seen} dimension-scale attributes checked")
        if not seen:
            bad += 1
    return bad


def main(argv) -> int:
    import asdf
    import h5py
    import numpy as np

    out = Path(argv[1])
    fixtures = sorted((HERE / "data").glob("*.h5"))
    bad = 0
    for src in fixtures:
        name = src.stem
        back = out / f"hdf5_{name}.back.h5"
        middle = out / f"hdf5_{name}.asdf"
        if name in ASDF_ONLY:
            problems = asdf_reads(src, middle, np, h5py, asdf)
            for p in problems:
                print(f"{name}: {p}")
            bad += len(problems)
            print(f"{name}: {'ok' if not problems else f'{len(problems)} problems'} (ASDF only)")
            continue
        if not back.exists() or not middle.exists():
            print(f"{name}: {back.name} or {middle.name} was not written")
            bad += 1
            continue
        with h5py.File(src, "r") as o, h5py.File(back, "r") as b:
            problems = compare(o, b, np, h5py)
        # the same conversion done band by band (the path of datasets larger than memory)
        banded = out / f"hdf5_{name}.banded.h5"
        if not banded.exists():
            problems.append(f"{banded.name} was not written")
        else:
            with h5py.File(src, "r") as o, h5py.File(banded, "r") as b:
                problems += [f"banded: {p}" for p in compare(o, b, np, h5py)]
        with warnings.catch_warnings():
            warnings.simplefilter("error")
            with asdf.open(middle, lazy_load=False) as af, h5py.File(src, "r") as o:
                def visit(p, obj):
                    if isinstance(obj, h5py.Dataset) and obj.dtype.kind not in "OS":
                        node = af.tree
                        for part in p.split("/"):
                            node = node[part]
                        if obj.shape != () and not same_values(obj[()], node, np):
                            problems.append(f"{p}: python asdf reads other values")
                o.visititems(visit)
                problems += asdf_string_bytes(af, o, np, h5py)
        for p in problems:
            print(f"{name}: {p}")
        bad += len(problems)
        print(f"{name}: {'ok' if not problems else f'{len(problems)} problems'}")
    # links written from `$ref`s (round_trip.rs, refs_become_soft_and_external_links_...)
    written = out / "hdf5_links_written.h5"
    want = {
        "dangling": ("soft", "/nowhere"),
        "g/sub/far": ("external", "other.h5", "/a/b"),
        "g/sub/near": ("soft", "x"),
        "g/sub/vers_ü": ("soft", "/g/sub/x"),
        "g/sub/whole": ("external", "other.asdf", "/"),
    }
    if not written.exists():
        print(f"{written.name} was not written")
        bad += 1
    else:
        with h5py.File(written, "r") as f:
            for path, kind in want.items():
                group, _, name = path.rpartition("/")
                link = (f[group] if group else f).get(name, getlink=True)
                got = (("soft", link.path) if isinstance(link, h5py.SoftLink) else
                       ("external", link.filename, link.path)
                       if isinstance(link, h5py.ExternalLink) else (repr(link),))
                if got != kind:
                    print(f"{written.name}: {path} is {got}, not {kind}")
                    bad += 1
            # soft links resolve, the relative one from its group
            for path in ("g/sub/near", "g/sub/vers_ü"):
                if list(f[path][()]) != [1, 2, 3]:
                    print(f"{written.name}: {path} does not resolve to the array")
                    bad += 1
        print(f"{written.name}: soft and external links checked")
    bad += check_masks(out, np, h5py, asdf)
    bad += check_scales(out, h5py)
    bad += check_sequences(out, np, h5py)
    print(f"{len(fixtures)} HDF5 files round-tripped, {bad} problems")
    return 1 if bad or not fixtures else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
