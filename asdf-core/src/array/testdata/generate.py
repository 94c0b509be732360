#!/usr/bin/env python3
"""Generate `reference_arrays.json`, the array-layer oracle fixture.

Pinned: python asdf==6.0.0 (with its numpy). From the repository root:

    .venv-oracle/bin/python asdf-core/src/array/testdata/generate.py \
        [REFERENCE_FILES_DIR] [asdf-core/src/array/testdata/reference_arrays.json]

(defaults: the reference files found by tests/testdata.py, and the fixture beside this script)

Every case is {"name", "node", "block", "expect"}:
* node: the raw ndarray node in the canonical-JSON encoding of docs/canonical.md (nodes)
  ({"$tag": .., "value": ..}, {"$float": "nan"}, ints vs floats kept apart), without its
  own ndarray tag;
* block: lowercase hex of the (decompressed) bytes of the block the node's `source` names,
  or null for inline arrays;
* expect: {"dtype", "shape", "sha256"} exactly as tests/oracle/canonical.py computes them, or
  {"error": true} when python asdf refuses the array.

Two groups: every ndarray in the official reference files (all versions, .asdf and .yaml),
and synthetic cases (byte orders, strides, offsets, streamed rows, records, NaNs, strings)
built with numpy.
"""

import hashlib
import json
import os
import sys
import warnings

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
REPOSITORY = os.path.abspath(os.path.join(HERE, "..", "..", "..", ".."))
sys.path.insert(0, os.path.join(REPOSITORY, "tests"))
sys.path.insert(0, os.path.join(REPOSITORY, "tests", "oracle"))
import canonical  # noqa: E402  (tests/oracle/canonical.py)
import testdata  # noqa: E402  (tests/testdata.py)

import asdf  # noqa: E402
from asdf.tagged import Tagged  # noqa: E402
from asdf.tags.core import NDArrayType  # noqa: E402
from asdf.tags.core.ndarray import asdf_datatype_to_numpy_dtype, inline_data_asarray  # noqa: E402

assert asdf.__version__ == "6.0.0", asdf.__version__


def raw(node):
    """Canonical JSON of a raw node, ndarray tags included as ordinary tags."""
    if isinstance(node, Tagged):
        tag = node._tag
        if isinstance(node, str):
            return {"$tag": tag, "value": str(node)}
        return {"$tag": tag, "value": raw(node.data)}
    if isinstance(node, dict):
        return {k: raw(v) for k, v in node.items()}
    if isinstance(node, (list, tuple)):
        return [raw(x) for x in node]
    return canonical.Canonical(None).value(node)


def walk(node, path, out):
    if isinstance(node, Tagged) and node._tag.startswith(canonical.NDARRAY_PREFIX):
        out.append((path, node))
        if isinstance(node, dict) and "mask" in node:
            walk(node["mask"], path + "/mask", out)
        return
    if isinstance(node, dict):
        for k, v in node.items():
            walk(v, f"{path}/{k}", out)
    elif isinstance(node, (list, tuple)):
        for i, v in enumerate(node):
            walk(v, f"{path}/{i}", out)


def block_bytes(af, node, fname):
    if not isinstance(node, dict) or "source" not in node:
        return None
    src = node["source"]
    if isinstance(src, int):
        return bytes(af._blocks.blocks[src].data)
    ext = os.path.join(os.path.dirname(fname), src)
    with asdf.open(ext, _force_raw_types=True, memmap=False) as ef:
        return bytes(ef._blocks.blocks[0].data)


def reference_cases(root):
    cases = []
    for ver in sorted(os.listdir(root)):
        d = os.path.join(root, ver)
        if not os.path.isdir(d):
            continue
        for fn in sorted(os.listdir(d)):
            if not (fn.endswith(".asdf") or fn.endswith(".yaml")):
                continue
            full = os.path.join(d, fn)
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                with asdf.open(full, _force_raw_types=True, memmap=False, lazy_load=True) as af:
                    found = []
                    walk(af.tree, "", found)
                    for path, node in found:
                        try:
                            expect = canonical.Canonical(af).ndarray(node)["$ndarray"]
                            expect.pop("mask", None)
                        except Exception as e:  # noqa: BLE001
                            expect = {"error": True, "python": f"{type(e).__name__}: {e}"}
                        cases.append(
                            {
                                "name": f"{ver}/{fn}#{path}",
                                "node": raw(node.data if isinstance(node, dict) else list(node)),
                                "block": None if (b := block_bytes(af, node, full)) is None else b.hex(),
                                "expect": expect,
                            }
                        )
    return cases


def expect_of(arr):
    data = np.ma.getdata(arr)
    return {
        "dtype": canonical.dtype_text(data.dtype),
        "shape": [int(s) for s in data.shape],
        "sha256": canonical.value_hash(data),
    }


def block_case(name, node, buf, *, streamed=False):
    """node: the ndarray mapping; buf: block bytes. Expected as NDArrayType computes it."""
    try:
        dtype = asdf_datatype_to_numpy_dtype(node["datatype"], node["byteorder"])
        inst = NDArrayType(node["source"], node["shape"], dtype, node.get("offset", 0),
                           node.get("strides"), "A", None,
                           lambda _attr=None: np.frombuffer(buf, dtype=np.uint8))
        expect = expect_of(inst._make_array())
    except Exception as e:  # noqa: BLE001
        expect = {"error": True, "python": f"{type(e).__name__}: {e}"}
    return {"name": name, "node": raw(node), "block": buf.hex(), "expect": expect}


def inline_case(name, node):
    try:
        if isinstance(node, list):
            arr = inline_data_asarray(node)
        else:
            dtype = asdf_datatype_to_numpy_dtype(node["datatype"]) if "datatype" in node else None
            arr = NDArrayType(node["data"], node.get("shape"), dtype, 0, None, "A", None)._make_array()
        if arr.dtype.kind == "O":
            raise TypeError("object array")
        expect = expect_of(arr)
    except Exception as e:  # noqa: BLE001
        expect = {"error": True, "python": f"{type(e).__name__}: {e}"}
    return {"name": name, "node": raw(node), "block": None, "expect": expect}


def synthetic_cases():
    rng = np.random.default_rng(12345)
    cases = []
    scalars = ["int8", "uint8", "int16", "uint16", "int32", "uint32", "int64", "uint64",
               "float16", "float32", "float64", "complex64", "complex128", "bool8"]
    for dt in scalars:
        for bo in ["little", "big"]:
            npdt = asdf_datatype_to_numpy_dtype(dt, bo)
            n = 12
            buf = bytearray(rng.integers(0, 256, size=n * npdt.itemsize, dtype=np.uint8).tobytes())
            if npdt.kind in "fc":
                # plant NaNs with odd payloads and signs, -0.0 and infinities
                a = np.frombuffer(buf, dtype=npdt).copy()
                part = npdt.type(0).real.dtype.newbyteorder(npdt.byteorder) if npdt.kind == "c" else npdt
                v = a.view(part)
                v[0] = np.nan
                v[1] = -np.nan
                v[2] = -0.0
                v[3] = np.inf
                v[4] = -np.inf
                raw_bits = v.view(np.dtype(f"{npdt.byteorder}u{part.itemsize}"))
                raw_bits[5] = {2: 0xFC01, 4: 0xFF800001, 8: 0xFFF0000000000001}[part.itemsize]
                raw_bits[6] = {2: 0x7C02, 4: 0x7F800002, 8: 0x7FF0000000000002}[part.itemsize]
                buf = bytearray(a.tobytes())
            if npdt.kind == "b":
                buf = bytearray([0, 1, 2, 255, 0, 7, 1, 0, 128, 0, 0, 3])
            node = {"source": 0, "datatype": dt, "byteorder": bo, "shape": [3, 4]}
            cases.append(block_case(f"scalar/{dt}/{bo}", node, bytes(buf)))
    # offsets, strides (negative, zero, Fortran), streamed rows
    buf = bytes(range(256)) * 2
    views = [
        ("offset", {"shape": [5], "offset": 3}),
        ("fortran", {"shape": [3, 4], "strides": [4, 12]}),
        ("neg_stride", {"shape": [4], "offset": 24, "strides": [-4]}),
        ("neg_2d", {"shape": [3, 4], "offset": 44, "strides": [-16, -4]}),
        ("mixed", {"shape": [3, 4], "offset": 32, "strides": [-16, 4]}),
        ("zero_stride", {"shape": [3, 4], "offset": 8, "strides": [0, 4]}),
        ("gapped", {"shape": [2, 3], "offset": 2, "strides": [40, 8]}),
        ("out_of_bounds", {"shape": [200]}),
        ("neg_out_of_bounds", {"shape": [4], "offset": 8, "strides": [-4]}),
        ("streamed", {"shape": ["*", 5], "source": -1}),
        ("streamed_offset", {"shape": ["*", 3], "source": -1, "offset": 4}),
        ("zero_d", {"shape": [], "offset": 4}),
        ("empty", {"shape": [0, 4]}),
    ]
    for name, extra in views:
        node = {"source": 0, "datatype": "int32", "byteorder": "big"}
        node.update(extra)
        cases.append(block_case(f"view/{name}", node, buf))
    # streamed, non-whole trailing row
    cases.append(block_case("view/streamed_partial",
                            {"source": -1, "datatype": "uint16", "byteorder": "little", "shape": ["*", 3]},
                            bytes(range(50))))
    # strings
    ucs = "aé€😀".encode("utf-32-le") + b"\0" * 4 + "xy".encode("utf-32-le") + b"\0" * 12
    cases.append(block_case("string/ucs4_le", {"source": 0, "datatype": ["ucs4", 5], "byteorder": "little", "shape": [2]}, ucs))
    ucsb = "aé€😀".encode("utf-32-be") + b"\0" * 4 + "xy".encode("utf-32-be") + b"\0" * 12
    cases.append(block_case("string/ucs4_be", {"source": 0, "datatype": ["ucs4", 5], "byteorder": "big", "shape": [2]}, ucsb))
    cases.append(block_case("string/ascii", {"source": 0, "datatype": ["ascii", 4], "byteorder": "big", "shape": [3]},
                            b"ab\0\0abcdz\0\0\0"))
    # records: nested, per-field byte order, subarrays, unnamed fields
    rec = [
        {"name": "id", "datatype": "int32", "byteorder": "big"},
        {"name": "x", "datatype": "float64"},
        {"name": "name", "datatype": ["ascii", 4]},
        {"name": "vec", "datatype": "int16", "shape": [3]},
        {"name": "pos", "datatype": [{"name": "x", "datatype": "float32"},
                                      {"name": "y", "datatype": "float32", "byteorder": "big"}]},
        {"name": "m", "datatype": "uint8", "shape": [2, 2]},
        {"name": "u", "datatype": ["ucs4", 2]},
        {"name": "b", "datatype": "bool8"},
    ]
    npdt = asdf_datatype_to_numpy_dtype(rec, "little")
    buf = bytearray(rng.integers(0, 256, size=4 * npdt.itemsize, dtype=np.uint8).tobytes())
    a = np.frombuffer(buf, dtype=npdt).copy()
    a["u"] = ["hé", "😀"] * 2
    a["name"] = [b"ab", b"abcd", b"", b"z"]
    a["x"][0] = np.nan
    cases.append(block_case("record/nested", {"source": 0, "datatype": rec, "byteorder": "little", "shape": [4]}, a.tobytes()))
    cases.append(block_case("record/nested_view",
                            {"source": 0, "datatype": rec, "byteorder": "little", "shape": [2],
                             "strides": [-npdt.itemsize], "offset": 3 * npdt.itemsize}, a.tobytes()))
    unnamed = ["uint8", {"datatype": "int16", "byteorder": "big"}, ["ascii", 2]]
    npdt = asdf_datatype_to_numpy_dtype(unnamed, "little")
    cases.append(block_case("record/unnamed", {"source": 0, "datatype": unnamed, "byteorder": "little", "shape": [2]},
                            bytes(range(2 * npdt.itemsize))))
    # inline
    inl = [
        ("ints", [[1, 2, 3], [4, 5, 6]]),
        ("floats", [1, 2.5, -0.0]),
        ("bools", [True, False, True]),
        ("bool_int", [True, 2]),
        ("strings", ["a", "bcd", "é😀"]),
        ("mixed_str_int", [1, "ab"]),
        ("mixed_str_float", [1.5, "ab", 1e300, 1e-7, 123456789.0, 1e16]),
        ("mixed_str_bool", [True, "x"]),
        ("big_uint", [2**63, 1]),
        ("empty", []),
        ("empty2", [[], []]),
        ("scalar", {"data": 5}),
        ("ragged", [[1, 2], [3]]),
        ("ragged2", [[1, 2], 3]),
        ("nan", [float("nan"), float("inf")]),
        ("typed_f4", {"data": [[1, 0], [0, 1]], "datatype": "float32"}),
        ("typed_trunc", {"data": [1.7, -1.7], "datatype": "int16"}),
        ("typed_bool", {"data": [0, 2, 0.5], "datatype": "bool8"}),
        ("typed_overflow", {"data": [300], "datatype": "uint8"}),
        ("typed_ascii", {"data": ["ab", "abcdef"], "datatype": ["ascii", 3]}),
        ("typed_ucs4", {"data": ["ab", "é"], "datatype": ["ucs4", 4]}),
        ("typed_f2", {"data": [1.5, 65504, 1e6], "datatype": "float16"}),
        ("typed_u8_big", {"data": [2**63, 2**64 - 1], "datatype": "uint64"}),
        ("shape_ok", {"data": [[1, 2]], "shape": [1, 2]}),
        ("shape_bad", {"data": [[1, 2]], "shape": [2, 1]}),
        ("record", {"data": [[1, "ab", 2.5], [2, "c", 3]],
                    "datatype": [{"name": "a", "datatype": "int8"}, {"name": "b", "datatype": ["ascii", 2]},
                                 {"name": "c", "datatype": "float32"}]}),
        ("record_sub", {"data": [[1, [1, 2]]],
                        "datatype": [{"name": "a", "datatype": "int8"},
                                     {"name": "b", "datatype": "int8", "shape": [2]}]}),
        ("record_1", {"data": [[1], [2]], "datatype": [{"name": "a", "datatype": "int8"}]}),
    ]
    for name, node in inl:
        cases.append(inline_case(f"inline/{name}", node))
    cases.append(inline_case("inline/complex", [Tagged_str("(1+2j)"), Tagged_str("-0j"), Tagged_str("(nan-infj)"),
                                                 Tagged_str("1.5"), Tagged_str("infj")]))
    cases.append(inline_case("inline/complex_mixed", [Tagged_str("2j"), 1, 2.5]))
    return cases


def Tagged_str(s):
    from asdf.tagged import TaggedString
    t = TaggedString(s)
    t._tag = "tag:stsci.edu:asdf/core/complex-1.0.0"
    return t


def _convert_complex(node):
    from asdf._core._converters.complex import ComplexConverter
    if isinstance(node, Tagged) and isinstance(node, str):
        return ComplexConverter().from_yaml_tree(str(node), node._tag, None)
    if isinstance(node, list):
        return [_convert_complex(x) for x in node]
    return node


_orig_inline = inline_data_asarray


def main():
    root = sys.argv[1] if len(sys.argv) > 1 else str(testdata.require_dir(testdata.REFERENCE_FILES))
    out = sys.argv[2] if len(sys.argv) > 2 else os.path.join(HERE, "reference_arrays.json")
    cases, seen = [], set()
    for c in reference_cases(root) + synthetic_cases():
        key = json.dumps([c["node"], c["block"], c["expect"]], sort_keys=True)
        if key not in seen:  # the reference files repeat across standard versions
            seen.add(key)
            cases.append(c)
    with open(out, "w", encoding="utf-8") as f:
        json.dump({"generator": "generate.py, asdf 6.0.0, numpy " + np.__version__, "cases": cases},
                  f, ensure_ascii=False, indent=0)
        f.write("\n")
    print(len(cases), "cases")


# complex inline values reach numpy as Python complex (the converter runs on tagged scalars)
def inline_data_asarray(inline, dtype=None):  # noqa: F811
    return _orig_inline(_convert_complex(inline), dtype)


import asdf.tags.core.ndarray as _nd  # noqa: E402

_nd.inline_data_asarray = inline_data_asarray

if __name__ == "__main__":
    main()
