#!/usr/bin/env python3
"""Generate the python-asdf fixtures in tests/data/fixtures/ (the oracle corpus).

Run with the pinned oracle environment:

    python3 -m venv .venv-oracle
    .venv-oracle/bin/pip install "asdf==6.0.0" numpy lz4 asdf-compression blosc zstandard
    .venv-oracle/bin/python tests/data/generate.py

Every fixture ``NAME.asdf`` is written by python asdf 6.0.0 (or, for a few, written by hand as
YAML text that python asdf then opens), and gets a sidecar ``NAME.expect.json`` produced by
``tests/oracle/canonical.py`` (the canonical-JSON oracle, see ``docs/canonical.md``).

The output is deterministic (fixed seeds, no timestamps in history), so re-running the script on
the same versions reproduces the committed files.
"""

from __future__ import annotations

import datetime
import importlib
import io
import os
import sys
import warnings
from pathlib import Path

PINNED_ASDF = "6.0.0"
HERE = Path(__file__).resolve().parent
OUT = HERE / "fixtures"


# ---------------------------------------------------------------------------
# environment pin
# ---------------------------------------------------------------------------

def check_versions() -> None:
    versions = {}
    missing = []
    for mod in ("asdf", "numpy", "lz4", "zstandard", "blosc", "asdf_compression", "yaml"):
        try:
            m = importlib.import_module(mod)
        except ImportError:
            missing.append(mod)
            continue
        versions[mod] = getattr(m, "__version__", "unknown")
    for mod, ver in versions.items():
        print(f"  {mod:18} {ver}")
    if missing:
        sys.exit(f"refusing to run: missing modules {missing}")
    if versions["asdf"] != PINNED_ASDF:
        sys.exit(f"refusing to run: asdf {versions['asdf']} found, asdf=={PINNED_ASDF} required")
    import asdf

    labels = set()
    for ext in asdf.get_config().extensions:
        for comp in getattr(ext, "compressors", []) or []:
            labels.add(comp.label)
    for label in (b"zstd", b"lz4f", b"blsc"):
        if label not in labels:
            sys.exit(f"refusing to run: compression label {label!r} is not registered "
                     "(asdf-compression extension missing?)")


def load_canonical():
    """tests/oracle/canonical.py, the project's canonical-JSON dumper."""
    sys.path.insert(0, str(HERE.parent / "oracle"))
    import canonical  # noqa: E402

    return canonical


# ---------------------------------------------------------------------------
# helpers
# ---------------------------------------------------------------------------

WRITTEN: list[str] = []
NO_SIDECAR: set[str] = set()  # files python asdf writes but cannot read back


def path_of(name: str) -> Path:
    return OUT / f"{name}.asdf"


def write(name: str, tree: dict, setup=None, **kwargs) -> Path:
    """Write ``tree`` with python asdf to fixtures/NAME.asdf."""
    import asdf

    af = asdf.AsdfFile(tree)
    if setup is not None:
        setup(af)
    p = path_of(name)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        af.write_to(p, **kwargs)
    WRITTEN.append(p.name)
    return p


def write_text(name: str, text: str | bytes) -> Path:
    """A hand-written file (python asdf must still open it)."""
    p = path_of(name)
    data = text.encode("utf-8") if isinstance(text, str) else text
    p.write_bytes(data)
    WRITTEN.append(p.name)
    return p


HEADER = (
    "#ASDF 1.0.0\n"
    "#ASDF_STANDARD 1.6.0\n"
    "%YAML 1.1\n"
    "%TAG ! tag:stsci.edu:asdf/\n"
)


# ---------------------------------------------------------------------------
# fixtures
# ---------------------------------------------------------------------------

def gen_codecs(np):
    rng = np.random.default_rng(1)
    floats = rng.normal(size=(64, 32))  # not very compressible
    ints = np.arange(5000, dtype="<i8") % 97  # very compressible
    for label in ("zlib", "bzp2", "lz4", "zstd", "lz4f", "blsc"):
        tree = {"floats": floats, "ints": ints, "small": np.array([1, 2, 3], dtype="<u2"),
                "empty": np.zeros((0,), dtype="<f4")}
        write(f"codec_{label}", tree, all_array_compression=label)

    # lz4 with several 4 MiB chunks: 2.6 M int32 = 10.4 MB input -> 3 chunks; repetitive so tiny.
    big = np.tile(np.arange(4096, dtype="<i4"), 640)
    write("codec_lz4_multichunk", {"big": big}, all_array_compression="lz4")
    # the same input through zstd and zlib (one stream each, large output buffers)
    write("codec_zlib_large", {"big": big}, all_array_compression="zlib")

    # one file mixing every codec, plus an uncompressed block, each block its own codec
    def setup(af):
        for label in ("zlib", "bzp2", "lz4", "zstd", "lz4f", "blsc"):
            af.set_array_compression(af.tree[label], label)
    mixed = {label: (np.arange(300, dtype="<f8") * (i + 1)) for i, label in
             enumerate(("zlib", "bzp2", "lz4", "zstd", "lz4f", "blsc"))}
    mixed["raw"] = np.arange(10, dtype=">i2")
    write("codec_mixed", mixed, setup=setup)

    # compressed + big-endian + a 2-D array that is a (Fortran-ordered) transpose
    a = np.arange(60, dtype=">f4").reshape(6, 10)
    write("codec_zlib_bigendian_fortran", {"a": a, "t": a.T}, all_array_compression="zlib")

    # no checksums (all-zero MD5), no block index
    write("no_checksums", {"a": np.arange(8, dtype="<i4")}, write_checksums=False)
    write("no_block_index", {"a": np.arange(8, dtype="<i4"), "b": np.ones(3)},
          include_block_index=False)
    # padded blocks: allocated_size > used_size
    write("padded_blocks", {"a": np.arange(100, dtype="<i4"), "b": np.ones(33)}, pad_blocks=True)
    write("padded_blocks_zlib", {"a": np.arange(100, dtype="<i4")}, pad_blocks=0.5,
          all_array_compression="zlib")


def gen_dtypes(np):
    scalar = ["int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64",
              "float16", "float32", "float64", "complex64", "complex128", "bool"]

    def values(dt):
        dt = np.dtype(dt)
        if dt.kind in "iu":
            info = np.iinfo(dt)
            return np.array([info.min, info.max, 0, 1, info.max // 3, 42], dtype=dt)
        if dt.kind == "f":
            return np.array([0.0, -0.0, 1.5, -2.25, np.inf, -np.inf, np.nan,
                             np.finfo(dt).max, np.finfo(dt).tiny, np.finfo(dt).eps], dtype=dt)
        if dt.kind == "c":
            return np.array([0, 1 + 2j, complex(-0.0, np.inf), complex(np.nan, -1.5), 3e-7j],
                            dtype=dt)
        return np.array([True, False, True, True], dtype=dt)

    little = {f"{n}": values(n) for n in scalar}
    write("dtypes_little", little)
    big = {f"{n}": values(np.dtype(n).newbyteorder(">")) for n in scalar}
    write("dtypes_big", big)
    # python refuses inline literals outside [-(2^63-2), 2^63-1]
    inline = dict(little)
    inline["int64"] = np.array([-(2**63 - 2), 2**63 - 1, 0, -1], dtype="<i8")
    inline["uint64"] = np.array([0, 2**63 - 1, 12345], dtype="<u8")
    write("dtypes_inline", inline, all_array_storage="inline")
    # 2-D and 3-D
    write("dtypes_multidim", {
        "f8_2d": np.arange(24, dtype="<f8").reshape(4, 6),
        "i2_3d": np.arange(60, dtype=">i2").reshape(3, 4, 5),
        "c8_2d": (np.arange(6) + 1j * np.arange(6)).astype("<c8").reshape(2, 3),
    })
    # a NaN with a payload and a negative NaN: canonical hash must normalise them
    nans = np.array([0x7FF8000000000001, 0xFFF8000000000000, 0x7FF0000000000001,
                     0x3FF0000000000000], dtype="<u8").view("<f8")
    nans32 = np.array([0xFFC00000, 0x7F800001, 0x7FC00001], dtype=">u4").view(">f4")
    write("dtypes_nan_payloads", {"f8": nans, "f4": nans32})
    # bool bytes other than 0/1 in a block
    odd_bool = np.array([0, 1, 2, 255], dtype="u1").view("?")
    write("dtypes_bool_bytes", {"b": odd_bool})

    # strings
    S = np.array([b"", b"a", b"hello", b"12345678"], dtype="S8")
    Snul = np.array([b"a\x00b", b"xyz"], dtype="S5")
    U = np.array(["", "a", "\u00fc\u00df", "\u65e5\u672c\u8a9e", "\U0001f600x"], dtype="<U6")
    Ub = U.astype(">U6")
    strings = {"ascii": S, "ascii_inner_nul": Snul, "ucs4": U, "ucs4_big": Ub,
               "ascii_2d": np.array([[b"ab", b"c"], [b"", b"def"]], dtype="S3")}
    write("dtypes_strings", strings)
    write("dtypes_strings_inline", {k: v for k, v in strings.items() if k != "ascii_inner_nul"},
          all_array_storage="inline")

    # structured, nested, per-field byte order, subarrays
    dt = np.dtype([
        ("id", ">i4"), ("x", "<f8"), ("name", "S4"), ("vec", "<i2", (3,)),
        ("pos", [("x", "<f4"), ("y", ">f4")]), ("m", "<f8", (2, 2)), ("u", ">U3"),
        ("flag", "?"), ("c", ">c8"),
    ])
    rec = np.zeros(4, dt)
    rec["id"] = [1, -2, 3, 2**31 - 1]
    rec["x"] = [0.5, -0.0, np.nan, 1e300]
    rec["name"] = [b"ab", b"cdef", b"", b"z"]
    rec["vec"] = np.arange(12).reshape(4, 3)
    rec["pos"]["x"] = [1, 2, 3, 4]
    rec["pos"]["y"] = [-1, -2, -3, -4]
    rec["m"] = np.arange(16).reshape(4, 2, 2)
    rec["u"] = ["x", "\u03b1\u03b2\u03b3", "\U0001f600", ""]
    rec["flag"] = [True, False, True, False]
    rec["c"] = [1j, 2, 3 + 3j, -1]
    simple = np.zeros(3, np.dtype([("a", "<i8"), ("b", "<f4")]))
    simple["a"] = [1, 2, 3]
    simple["b"] = [0.5, 1.5, 2.5]
    deep = np.zeros(2, np.dtype([("o", [("i", [("v", "<u2", (2,)), ("w", ">i8")]), ("z", "u1")])]))
    deep["o"]["i"]["v"] = [[1, 2], [3, 4]]
    deep["o"]["i"]["w"] = [-5, 6]
    deep["o"]["z"] = [7, 8]
    structs = {"rec": rec, "simple": simple, "deep": deep,
               "rec_big": rec.astype(rec.dtype.newbyteorder(">")),
               "rec_2d": np.zeros((2, 2), dtype=[("a", "<i2"), ("b", ">f8", (2,))])}
    write("dtypes_structured", structs)
    # inline structured (python drops the top-level field byte orders but keeps nested ones)
    write("dtypes_structured_inline", {"simple": simple}, all_array_storage="inline")
    # python asdf 6.0.0 writes this but cannot read it back ("data can not be converted to
    # structured array"): kept without a sidecar, see README.md
    write("dtypes_structured_inline_nested", {"deep": deep}, all_array_storage="inline")
    NO_SIDECAR.add("dtypes_structured_inline_nested.asdf")


def gen_views(np):
    import asdf

    base = np.arange(20, dtype="<i4")
    b2 = np.arange(48, dtype="<f8").reshape(6, 8)
    tree = {
        "base": base, "rev": base[::-1], "every3": base[1::3], "slice": base[5:12],
        "b2": b2, "col": b2[:, 3], "row": b2[2], "T": b2.T, "sub": b2[1:4, 2:7],
        "sub_rev": b2[::-2, ::-3], "T_slice": b2.T[1:5, ::2],
    }
    # default (save_base False in 6.0): each view is written as its own block, contiguous copy
    # unless it is Fortran-contiguous (then raw memory + strides)
    write("views_default", tree)
    # save_base: views share one block, with offset and (negative) strides
    with asdf.config_context() as cfg:
        cfg.default_array_save_base = True
        write("views_shared_base", tree)
        big = np.arange(24, dtype=">i2").reshape(2, 3, 4)
        write("views_shared_base_bigendian", {
            "big": big, "t": big.transpose(2, 0, 1), "r": big[:, ::-1, 1:3],
            "last": big[-1, -1, -1:]})
        write("views_shared_base_zlib", {"base": base, "rev": base[::-1], "mid": base[3:9]},
              all_array_compression="zlib")
    # a broadcast view with zero strides: python copies it
    write("views_zero_stride", {"bc": np.broadcast_to(np.arange(3, dtype="<i4"), (4, 3))})


def gen_masked(np):
    m = np.ma.array([1.0, 2.0, 3.0, 4.0], mask=[False, True, False, True])
    m2 = np.ma.array(np.arange(6, dtype="<i4").reshape(2, 3), mask=[[0, 0, 1], [1, 0, 0]])
    none = np.ma.array([5, 6, 7], dtype="<i2", mask=False)
    write("masked", {"m": m, "m2": m2, "mask_all_false": none})
    write("masked_inline", {"m": m, "m2": m2}, all_array_storage="inline")
    # scalar mask (a number meaning "missing value"): python never writes it, so by hand
    write_text("masked_scalar", HEADER + """--- !core/asdf-1.1.0
inline_int: !core/ndarray-1.1.0
  data: [1, -999, 3, -999]
  datatype: int32
  shape: [4]
  mask: -999
inline_float: !core/ndarray-1.1.0
  data: [[1.5, .nan], [0.0, 2.5]]
  datatype: float64
  mask: .nan
inline_complex: !core/ndarray-1.1.0
  data: [!core/complex-1.0.0 1+1j, !core/complex-1.0.0 0j]
  datatype: complex128
  mask: !core/complex-1.0.0 0j
...
""")


def gen_special_arrays(np):
    write("zero_d_and_empty", {
        "zero_d": np.array(5.0), "zero_d_i": np.array(-3, dtype=">i8"),
        "zero_d_str": np.array(b"abc"), "empty": np.zeros((0,)),
        "empty_2d": np.zeros((3, 0), dtype="<i2"), "empty_0x5": np.zeros((0, 5), dtype=">u4"),
        "empty_struct": np.zeros((0,), dtype=[("a", "<i4"), ("b", "S2")]),
    })
    write("inline_empty", {"empty": np.zeros((0,)), "empty_2d": np.zeros((2, 0), dtype="<i2")},
          all_array_storage="inline")
    # inline arrays given in every implicit form
    write_text("inline_forms", HEADER + """--- !core/asdf-1.1.0
implicit_ints: !core/ndarray-1.1.0 [[1, 2, 3], [4, 5, 6]]
implicit_floats: !core/ndarray-1.1.0 [1, 2.5, -3]
implicit_bools: !core/ndarray-1.1.0 [true, false]
explicit: !core/ndarray-1.1.0
  data: [[1, 0, 0], [0, 1, 0], [0, 0, 1]]
  datatype: float32
explicit_uint8: !core/ndarray-1.1.0
  data: [0, 255, 7]
  datatype: uint8
  shape: [3]
explicit_str: !core/ndarray-1.1.0
  data: [M110, M31, ""]
  datatype: [ascii, 5]
explicit_ucs4: !core/ndarray-1.1.0
  data: ["\\u00e9t\\u00e9", "x"]
  datatype: [ucs4, 4]
...
""")
    # null in inline data: python reads it as a masked element whose data value is 0 (no
    # `mask` property, so the canonical form has no "mask"); implicit datatypes with null give
    # numpy object arrays, which have no canonical form, so only explicit datatypes here
    write_text("inline_nulls", HEADER + """--- !core/asdf-1.1.0
ints: !core/ndarray-1.1.0
  data: [1, null, 3]
  datatype: int32
floats: !core/ndarray-1.1.0
  data: [[1.5, null], [null, -2.0]]
  datatype: float64
...
""")
    # many blocks with a block index
    write("many_blocks", {f"a{i:02d}": np.full(i + 1, i, dtype="<i2") for i in range(50)})
    # external (exploded) blocks
    write("external", {"a": np.arange(10, dtype="<f8"), "b": np.arange(6, dtype=">i4").reshape(2, 3)},
          all_array_storage="external")
    for extra in sorted(OUT.glob("external0*.asdf")):
        WRITTEN.append(extra.name)


def gen_stream(np):
    import asdf

    def streamed(name, rows, extra=b"", dtype="<f8", shape=(4,), pre=None):
        af = asdf.AsdfFile({"note": "streamed", "stream": asdf.Stream(list(shape), np.dtype(dtype)),
                            **(pre or {})})
        p = path_of(name)
        with open(p, "wb") as fd:
            af.write_to(fd)
            for i in range(rows):
                fd.write(np.full(shape, i, dtype=dtype).tobytes())
            fd.write(extra)
        WRITTEN.append(p.name)

    streamed("stream", 5)
    streamed("stream_empty", 0)
    streamed("stream_partial_row", 3, extra=b"\x01\x02\x03")
    streamed("stream_2d_bigendian", 4, dtype=">i4", shape=(2, 3))
    streamed("stream_with_blocks", 2, pre={"before": np.arange(5, dtype="<u1")})


def gen_tree_content(np):
    shared_list = [1, 2, {"k": "v"}]
    arr = np.arange(4, dtype="<i4")
    write("anchors", {"first": shared_list, "second": shared_list,
                      "arr1": arr, "arr2": arr, "nested": {"again": shared_list}})
    recursive = {"name": "loop"}
    recursive["self"] = recursive
    try:
        write("recursive", {"r": recursive})
    except Exception as exc:  # noqa: BLE001 - record and move on
        print(f"  (skipped recursive: {type(exc).__name__}: {exc})")
    write("big_ints", {
        "max_i64": 2**63 - 1, "min_writable": -(2**63 - 2), "two53p1": 2**53 + 1,
        "neg": -(2**53 + 1), "list": [0, -1, 2**32, -(2**32), 2**62],
    })
    # values beyond the literal range go through core/integer; complex scalars through
    # core/complex (read by the typed layer)
    from asdf.tags.core import IntegerType

    write("typed_scalars", {
        "big_pos": IntegerType(2**100 + 12345), "big_neg": IntegerType(-(2**70) - 1),
        "u64_max": IntegerType(2**64 - 1), "small_wrapped": IntegerType(7),
        "c1": 1 + 2j, "c2": complex(-0.5, -1e-3), "c3": complex(float("inf"), float("nan")),
        "c4": 2.5j,
    })
    write("yaml11_quirk_strings", {
        "strings": ["yes", "no", "on", "off", "y", "n", "Yes", "NO", "True", "false", "~",
                    "null", "Null", "", " ", "017", "0o17", "0x1F", "0b101", "1e3", "1E3",
                    "+1", "-0", "1.", ".5", "190:20:30", "1_000", "1,000", ".inf", "-.Inf",
                    ".NaN", "nan", "2001-12-14", "2001-12-14 21:59:43.10 -5", "12:30",
                    "-", "- a", ": x", "#c", "a #b", "'q'", "\"dq\"", "&a", "*b", "!t",
                    "%p", "@", "`", "|", ">", "{", "[", "]", "}", ",", "?", "multi\nline\n",
                    "tab\there", "trailing ", "\u00e9", "\U0001f600", "nul\x00byte", "\x7f",
                    "\u2028", "\ufeffbom", "=", "<<"],
        "values": [True, False, None, 0, -0, 1.0, -0.0, 1e16, 1e-7, 0.1, 1.5e300,
                   float("inf"), float("-inf"), float("nan"), 12345678901234567890 // 10**3],
    })
    write("timestamps", {
        "naive": datetime.datetime(2020, 1, 2, 3, 4, 5),
        "micro": datetime.datetime(2020, 1, 2, 3, 4, 5, 123456),
        "milli": datetime.datetime(1999, 12, 31, 23, 59, 59, 100000),
        "aware": datetime.datetime(2020, 1, 2, 3, 4, 5,
                                   tzinfo=datetime.timezone(datetime.timedelta(hours=5, minutes=30))),
        "aware_neg": datetime.datetime(2001, 12, 14, 21, 59, 43, 100000,
                                       tzinfo=datetime.timezone(datetime.timedelta(hours=-5))),
        "utc": datetime.datetime(2010, 6, 1, 0, 0, 0, tzinfo=datetime.timezone.utc),
        "date": datetime.date(2020, 2, 29),
        "list": [datetime.date(1970, 1, 1), datetime.datetime(1970, 1, 1)],
    })
    write("nonstring_keys", {
        "ints": {1: "one", 2: "two", -5: "minus five", 2**40: "big", "s": "string key"},
        "bools": {False: "f", "x": 1},  # no 0/1 keys alongside bools (1 == True in python)
        "nested": {10: {20: [1, 2]}},
    })
    write("binary", {"bytes": b"\x00\x01\x02abc\xff", "empty": b"", "list": [b"x", b"\x80" * 40]})
    write("scalars_misc", {
        "complex": 1 + 2j, "complex_list": [0j, -1.5 - 2.5j, complex(float("inf"), 0)],
        "unicode": "\u65e5\u672c \U0001f600", "long_string": "x" * 2000,
        "dollar": {"$ref": "not/a/pointer", "$schema": "s", "$$x": 1, "plain": 2},
        "nested": {"a": [[[[[[1]]]]]], "b": [{}, [], {"c": []}]},
        "empty_map": {}, "empty_list": [],
    })
    # JSON-pointer references are left unresolved
    write_text("json_pointer_refs", HEADER + """--- !core/asdf-1.1.0
data: !core/ndarray-1.1.0 [1, 2, 3]
ref_array: {$ref: '#/data'}
ref_external: {$ref: 'other.asdf#/x'}
...
""")
    # unknown tags with custom %TAG handles, verbatim tags, local tags
    write_text("custom_tags", """#ASDF 1.0.0
#ASDF_STANDARD 1.6.0
%YAML 1.1
%TAG ! tag:stsci.edu:asdf/
%TAG !ex! asdf://example.org/tags/
%TAG !foo! tag:foo.org,2024:
--- !core/asdf-1.1.0
detector: !ex!detector-2.1.0
  name: cam
  gain: 1.5
  pixels: !ex!pixels-1.0.0 [1, 2, 3]
scalar_tagged: !foo!scalar-1.0 hello
scalar_number_tagged: !foo!num-1.0 42
verbatim_map: !<tag:verbatim.org,2024:thing-1.0> {a: 1}
verbatim_seq: !<asdf://example.org/tags/list-1.0.0> [x, y]
local_prefix: !custom/thing-1.0.0 {k: v}
core_unknown: !core/does-not-exist-9.9.9 [1]
std_str: !!str 5
std_int: !!int '7'
std_float: !!float 1
std_bool: !!bool 'yes'
std_null: !!null ''
std_binary: !!binary aGVsbG8=
std_timestamp: !!timestamp 2001-12-14t21:59:43.10-05:00
array_in_custom: !ex!wrapper-1.0.0
  inner: !core/ndarray-1.1.0 [1.5, 2.5]
...
""")


def gen_schema_defaults(np):
    # hand-written: python asdf fills the `default`s of the standard's schemas into files of
    # standard 1.5.0 and earlier (docs/schema-defaults.md); the sidecars are what it reads
    wrap = "!unit/quantity-1.1.0 {{value: 360.0, unit: !unit/unit-1.0.0 deg}}"
    body = """--- !core/asdf-{root}
# nested properties of a tagged node, inside an untagged mapping inside a list
coords:
- here: !wcs/icrs_coord-1.1.0
    ra: {{value: 1.5, wrap_angle: WRAP}}
    dec: {{value: -2.5, unit: rad}}
# an aliased mapping: one node, filled once, at both places
shared: &c !wcs/icrs_coord-1.1.0 {{ra: {{value: 3, unit: deg, wrap_angle: WRAP}}, dec: {{value: 4}}}}
again: *c
# allOf: spectral_frame's own properties (frame-1.x, behind $ref, is not followed)
spectral: !wcs/spectral_frame-1.1.0 {{name: s, unit: [Hz], axes_names: [f]}}
# the steps of a wcs are reached by $ref only: not filled
wcs: !wcs/wcs-1.0.0 {{name: w, steps: [{{frame: a}}]}}
# items: each HDU of a fits list gets data: null
fits: !fits/fits-1.0.0 [{{header: []}}, {{header: [[A, 1]], data: null}}]
{table}# skipped: a JSON reference
reference: !wcs/icrs_coord-1.1.0 {{$ref: 'other.asdf#/coord'}}
...
""".replace("WRAP", wrap)
    # core table: the table's and each column's defaults
    table = """table: !core/table-1.0.0
  columns:
  - !core/column-1.0.0 {{name: a, data: !core/ndarray-{nd} [1, 2]}}
"""
    for name, standard, root, nd in (("defaults_1_1_0", "1.1.0", "1.0.0", "1.0.0"),
                                     ("defaults_1_5_0", "1.5.0", "1.1.0", "1.0.0"),
                                     ("defaults_1_6_0", "1.6.0", "1.1.0", "1.1.0")):
        write_text(name, f"#ASDF 1.0.0\n#ASDF_STANDARD {standard}\n%YAML 1.1\n"
                   "%TAG ! tag:stsci.edu:asdf/\n"
                   + body.format(root=root, table=table.format(nd=nd)))
    # no #ASDF_STANDARD line: python takes the file to be 1.0.0 (fits-1.0.0 is filled,
    # icrs_coord-1.1.0 is not a tag of 1.0.0); no ndarray, whose 1.0.0 tag a writer of 1.6.0
    # would keep
    write_text("defaults_no_standard", "#ASDF 1.0.0\n%YAML 1.1\n%TAG ! tag:stsci.edu:asdf/\n"
               + body.format(root="1.0.0", table=""))
    # trees that do not validate (writers refuse them), filled all the same: a step's
    # transform (null; validating it, python warns that the transform schema is not in the
    # standard), a default that breaks its own schema (wrap_angle "360 deg" is a string, quantity-1.1.0 wants a
    # mapping), a frame's reference_frame (its type default sits behind $ref: not filled),
    # and defaults skipped for want of a mapping where the schema wants one
    write_text("defaults_invalid_1_1_0", """#ASDF 1.0.0
#ASDF_STANDARD 1.1.0
%YAML 1.1
%TAG ! tag:stsci.edu:asdf/
--- !core/asdf-1.0.0
step: !wcs/step-1.1.0 {frame: detector}
no_wrap: !wcs/icrs_coord-1.1.0 {ra: {value: 1}, dec: {value: 2}}
celestial: !wcs/celestial_frame-1.1.0 {name: c, reference_frame: {}}
as_list: !wcs/icrs_coord-1.1.0 [1, 2]
as_text: !wcs/icrs_coord-1.1.0 ra dec
ra_list: !wcs/icrs_coord-1.1.0 {ra: [1], dec: 5}
fits_items: !fits/fits-1.0.0 [[header], 5, {header: []}]
...
""")


def gen_versions(np):
    # older standard versions: python 6 writes the matching tag versions
    for ver in ("1.5.0", "1.4.0", "1.3.0"):
        import asdf

        if ver not in asdf.versioning.supported_versions:
            continue
        write(f"standard_{ver.replace('.', '_')}", {"a": np.arange(3, dtype="<i4"),
                                                    "c": 1 + 1j, "s": "text"}, version=ver)


def main() -> None:
    # python asdf lists the extensions used in `history` in set order, which follows string
    # hashing: pin the hash seed so that the output is byte-for-byte reproducible
    if os.environ.get("PYTHONHASHSEED") != "0":
        env = dict(os.environ, PYTHONHASHSEED="0")
        os.execve(sys.executable, [sys.executable, *sys.argv], env)
    print("generate.py: checking versions")
    check_versions()
    canonical = load_canonical()
    import numpy as np

    OUT.mkdir(parents=True, exist_ok=True)
    for old in list(OUT.glob("*.asdf")) + list(OUT.glob("*.expect.json")):
        old.unlink()

    for gen in (gen_codecs, gen_dtypes, gen_views, gen_masked, gen_special_arrays, gen_stream,
                gen_tree_content, gen_versions, gen_schema_defaults):
        gen(np)

    failures = []
    total = 0
    for name in sorted(set(WRITTEN)):
        p = OUT / name
        total += p.stat().st_size
        if name in NO_SIDECAR:
            print(f"  {name:45} {p.stat().st_size:9d} bytes (no sidecar: python cannot read it)")
            continue
        try:
            doc = canonical.document(p)
        except Exception as exc:  # noqa: BLE001
            failures.append(f"{name}: {type(exc).__name__}: {exc}")
            continue
        (OUT / (p.stem + ".expect.json")).write_text(canonical.to_text(doc), encoding="utf-8")
        print(f"  {name:45} {p.stat().st_size:9d} bytes")
    print(f"{len(set(WRITTEN))} fixtures, {total} bytes")
    if failures:
        print("python asdf could not dump:")
        for f in failures:
            print("  " + f)
        sys.exit(1)


if __name__ == "__main__":
    main()
