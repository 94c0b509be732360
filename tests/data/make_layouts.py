#!/usr/bin/env python3
"""Hand-assemble ASDF files with unusual (but legal, or deliberately damaged) layouts.

Pure python, standard library only.  Writes tests/data/layouts/NAME.asdf and, for each file,
NAME.expect.json (canonical JSON, see docs/canonical.md):

* Files python asdf 6.0.0 can read get their sidecar from tests/oracle/canonical.py when run with
  ``--oracle .venv-oracle/bin/python`` (the sidecars are committed, so the oracle is
  only needed to regenerate them).
* Files python asdf cannot read (or reads differently from what the standard says) get a
  hand-written expectation, defined in ``HAND`` below; HAND_WRITTEN.md lists them and says why.
  With ``--oracle``, every hand-written expectation for a file python *can* read is also checked
  against the oracle, which verifies this script's own canonical hashing.

    python3 tests/data/make_layouts.py [--oracle PYTHON]
"""

from __future__ import annotations

import argparse
import bz2
import hashlib
import json
import struct
import subprocess
import sys
import zlib
from pathlib import Path

HERE = Path(__file__).resolve().parent
OUT = HERE / "layouts"

MAGIC = b"\xd3BLK"
STREAMED = 0x1

HEADER = b"#ASDF 1.0.0\n#ASDF_STANDARD 1.6.0\n"
YAML_HEAD = b"%YAML 1.1\n%TAG ! tag:stsci.edu:asdf/\n--- !core/asdf-1.1.0\n"
STD_HEADER = {"asdf": "1.0.0", "standard": "1.6.0"}
ROOT_TAG = "tag:stsci.edu:asdf/core/asdf-1.1.0"


# ---------------------------------------------------------------------------
# building blocks
# ---------------------------------------------------------------------------

def i32le(values) -> bytes:
    return b"".join(struct.pack("<i", v) for v in values)


def f64le(values) -> bytes:
    return b"".join(struct.pack("<d", v) for v in values)


def block(data: bytes, *, compression: bytes = b"\0\0\0\0", checksum: str = "modern",
          header_size: int = 48, padding: bytes = b"", flags: int = 0,
          header_tail: bytes | None = None) -> bytes:
    """One block: 48-byte (or larger) big-endian header, stored bytes, padding.

    checksum: "modern" (MD5 of the stored bytes), "legacy" (MD5 of the decompressed data, as
    asdf <= 5.2 wrote for compressed blocks), "zero" (no checksum), "wrong".
    """
    if compression == b"zlib":
        stored = zlib.compress(data)
    elif compression == b"bzp2":
        stored = bz2.compress(data)
    elif compression == b"\0\0\0\0":
        stored = data
    else:
        raise ValueError(compression)
    if checksum == "modern":
        md5 = hashlib.md5(stored).digest()
    elif checksum == "legacy":
        md5 = hashlib.md5(data).digest()
    elif checksum == "zero":
        md5 = b"\0" * 16
    elif checksum == "wrong":
        md5 = bytes(b ^ 0xFF for b in hashlib.md5(stored).digest())
    else:
        raise ValueError(checksum)
    used = len(stored)
    alloc = used + len(padding)
    if flags & STREAMED:
        alloc = used = 0
        data_len = 0
    else:
        data_len = len(data)
    head = struct.pack(">HI4sQQQ16s", header_size, flags, compression, alloc, used, data_len, md5)
    if header_tail is None:
        header_tail = b"\0" * (header_size - 48)
    assert len(header_tail) == header_size - 48
    return MAGIC + head + header_tail + stored + padding


def block_index(offsets, newline=b"\n", flow=False) -> bytes:
    nl = newline
    out = b"#ASDF BLOCK INDEX" + nl + b"%YAML 1.1" + nl
    if flow:
        out += b"--- [" + b", ".join(str(o).encode() for o in offsets) + b"]" + nl
    else:
        out += b"---" + nl + b"".join(b"- " + str(o).encode() + nl for o in offsets)
    return out + b"..." + nl


def assemble(tree: bytes, blocks: list[bytes], *, gap: bytes = b"", index: str = "good",
             newline: bytes = b"\n", trailer: bytes = b"", flow_index: bool = False) -> bytes:
    """tree (complete text up to and including the '...' line) + gap + blocks + index."""
    out = bytearray(tree + gap)
    offsets = []
    for b in blocks:
        offsets.append(len(out))
        out += b
    if blocks and index != "none":
        if index == "stale_first":
            offsets = [o - 7 for o in offsets]
        elif index == "stale_last":
            offsets = offsets[:-1] + [offsets[-1] + 3]
        elif index == "too_few":
            offsets = offsets[:1]
        elif index == "garbage":
            offsets = None
        if offsets is None:
            out += b"#ASDF BLOCK INDEX\n%YAML 1.1\n--- {this: is not a list}\n...\n"
        else:
            out += block_index(offsets, newline, flow_index)
    out += trailer
    return bytes(out)


def nd(source, datatype, shape, byteorder="little", extra="") -> str:
    return (f"!core/ndarray-1.1.0\n    source: {source}\n    datatype: {datatype}\n"
            f"    byteorder: {byteorder}\n    shape: {shape}\n{extra}")


def tree_text(body: str, header: bytes = HEADER, yaml_head: bytes = YAML_HEAD) -> bytes:
    return header + yaml_head + body.encode("utf-8") + b"...\n"


# ---------------------------------------------------------------------------
# canonical JSON helpers (for hand-written expectations)
# ---------------------------------------------------------------------------

def sha(b: bytes) -> str:
    return hashlib.sha256(b).hexdigest()


def ndarray_json(dtype, shape, canonical_bytes: bytes, mask=None) -> dict:
    out = {"dtype": dtype, "shape": shape, "sha256": sha(canonical_bytes)}
    if mask is not None:
        out["mask"] = mask
    return {"$ndarray": out}


def doc(tree_value, header=STD_HEADER, root_tag=ROOT_TAG) -> dict:
    tree = {"$tag": root_tag, "value": tree_value} if root_tag else tree_value
    return {"format": "asdf-canonical/1", "header": dict(header), "tree": tree}


# ---------------------------------------------------------------------------
# the layouts
# ---------------------------------------------------------------------------

LAYOUTS: dict[str, bytes] = {}
HAND: dict[str, dict] = {}        # hand-written expectations
HAND_ONLY: dict[str, str] = {}    # name -> why the oracle cannot (or must not) produce it

A = [1, 2, 3, 4]
B = [0.5, -0.0, 1e300, -2.25, 7.0]
A_BYTES = i32le(A)
B_BYTES = f64le(B)
TWO_ARRAYS = ("a: " + nd(0, "int32", "[4]") + "b: " + nd(1, "float64", "[5]"))


def two_arrays_expect():
    return doc({"a": ndarray_json("<i4", [4], A_BYTES), "b": ndarray_json("<f8", [5], B_BYTES)})


def add(name: str, data: bytes, expect: dict | None = None, hand_only: str | None = None):
    LAYOUTS[name] = data
    if expect is not None:
        HAND[name] = expect
    if hand_only is not None:
        HAND_ONLY[name] = hand_only


def build() -> None:
    tree2 = tree_text(TWO_ARRAYS)
    good = [block(A_BYTES), block(B_BYTES)]

    # -- block index variants ------------------------------------------------
    add("plain_two_blocks", assemble(tree2, good), two_arrays_expect())
    add("index_stale_first", assemble(tree2, good, index="stale_first"), two_arrays_expect())
    add("index_stale_last", assemble(tree2, good, index="stale_last"), two_arrays_expect())
    add("index_too_few", assemble(tree2, good, index="too_few"), two_arrays_expect())
    add("index_garbage", assemble(tree2, good, index="garbage"), two_arrays_expect())
    add("index_flow_style", assemble(tree2, good, flow_index=True), two_arrays_expect())
    add("index_absent", assemble(tree2, good, index="none"), two_arrays_expect())
    add("zeros_after_index", assemble(tree2, good, trailer=b"\0" * 100), two_arrays_expect())

    # -- newlines and spacing ---------------------------------------------------
    crlf_tree = tree2.replace(b"\n", b"\r\n")
    add("crlf", assemble(crlf_tree, good, newline=b"\r\n"), two_arrays_expect())
    add("unused_space_after_tree",
        assemble(tree2, good, gap=b" " * 500 + b"\n\n  junk text without the magic \n" + b"\0" * 37),
        two_arrays_expect())
    add("comment_lines", assemble(
        HEADER + b"#some other comment\n# and another\n" + YAML_HEAD + TWO_ARRAYS.encode() + b"...\n",
        good), two_arrays_expect())
    add("crlf_unused_space", assemble(crlf_tree, good, gap=b"\r\n" * 10, newline=b"\r\n"),
        two_arrays_expect())

    # no #ASDF_STANDARD line: python then assumes standard 1.0.0, so use its tag versions
    v100 = (b"#ASDF 1.0.0\n%YAML 1.1\n%TAG ! tag:stsci.edu:asdf/\n--- !core/asdf-1.0.0\n"
            + TWO_ARRAYS.replace("ndarray-1.1.0", "ndarray-1.0.0").encode() + b"...\n")
    add("no_standard_line", assemble(v100, good),
        doc({"a": ndarray_json("<i4", [4], A_BYTES), "b": ndarray_json("<f8", [5], B_BYTES)},
            header={"asdf": "1.0.0", "standard": None}, root_tag="tag:stsci.edu:asdf/core/asdf-1.0.0"))

    # -- block headers ----------------------------------------------------------
    add("header_size_64",
        assemble(tree2, [block(A_BYTES, header_size=64),
                         block(B_BYTES, header_size=64, header_tail=b"\xab" * 16)]),
        two_arrays_expect())
    add("padded_blocks",
        assemble(tree2, [block(A_BYTES, padding=b"\0" * 100),
                         block(B_BYTES, padding=b"\xd3BLK not a block" + b"\xee" * 30)]),
        two_arrays_expect())
    add("padded_compressed",
        assemble(tree2, [block(A_BYTES, compression=b"zlib", padding=b" " * 64),
                         block(B_BYTES, compression=b"bzp2", padding=b"\0" * 9)]),
        two_arrays_expect())

    # -- checksums --------------------------------------------------------------
    add("checksum_modern_zlib", assemble(tree2, [block(A_BYTES, compression=b"zlib"),
                                                 block(B_BYTES, compression=b"bzp2")]),
        two_arrays_expect())
    add("checksum_legacy_zlib",
        assemble(tree2, [block(A_BYTES, compression=b"zlib", checksum="legacy"),
                         block(B_BYTES, compression=b"bzp2", checksum="legacy")]),
        two_arrays_expect())
    add("checksum_zero", assemble(tree2, [block(A_BYTES, checksum="zero"),
                                          block(B_BYTES, compression=b"zlib", checksum="zero")]),
        two_arrays_expect())
    add("checksum_wrong", assemble(tree2, [block(A_BYTES, checksum="wrong"), block(B_BYTES)]),
        two_arrays_expect())
    add("checksum_wrong_zlib",
        assemble(tree2, [block(A_BYTES), block(B_BYTES, compression=b"zlib", checksum="wrong")]),
        two_arrays_expect())

    # -- streamed ----------------------------------------------------------------
    st_tree = tree_text("a: " + nd(0, "int32", "[4]") + "s: " + nd(-1, "float64", "['*', 2]"))
    rows = f64le([1.0, 2.0, 3.0, 4.0, 5.0, 6.0])
    add("streamed_after_block",
        assemble(st_tree, [block(A_BYTES), block(rows, flags=STREAMED, checksum="zero")],
                 index="none"),
        doc({"a": ndarray_json("<i4", [4], A_BYTES), "s": ndarray_json("<f8", [3, 2], rows)}))
    # a streamed block with header_size 64 and a partial last row
    add("streamed_header_64",
        assemble(st_tree, [block(A_BYTES), block(rows + b"\x01\x02", flags=STREAMED,
                                                  checksum="zero", header_size=64)],
                 index="none"),
        doc({"a": ndarray_json("<i4", [4], A_BYTES), "s": ndarray_json("<f8", [3, 2], rows)}))

    # -- no tree / no header ------------------------------------------------------
    add("blocks_no_tree", assemble(HEADER, good), doc(None, root_tag=None),
        hand_only="python asdf 6.0.0 reads a file without a tree as an empty root "
                  "{\"$tag\": \"...core/asdf-1.1.0\", \"value\": {}} (it makes up the root); "
                  "the canonical form of a missing tree is null (AsdfFile::tree is a null "
                  "node for a file without a tree)")
    add("header_only", HEADER, doc(None, root_tag=None),
        hand_only="same as blocks_no_tree: no tree at all, canonical tree is null")
    add("tree_only_no_header",
        YAML_HEAD + b"a: !core/ndarray-1.1.0 [1, 2, 3]\nname: pure yaml\n...\n",
        doc({"a": ndarray_json("<i8", [3], b"".join(struct.pack("<q", v) for v in (1, 2, 3))),
             "name": "pure yaml"}, header={"asdf": None, "standard": None}),
        hand_only="python asdf 6.0.0 refuses a file without the '#ASDF' line ('Does not appear "
                  "to be a ASDF file'); the standard says a file without blocks is plain YAML, "
                  "so asdf-rs reads it as a tree-only file with header {asdf: null, "
                  "standard: null}")

    # -- tags ---------------------------------------------------------------------
    tags_tree = (HEADER + b"%YAML 1.1\n%TAG ! tag:stsci.edu:asdf/\n"
                 b"%TAG !ex! asdf://example.org/tags/\n%TAG !t2! tag:other.org,2020:x/\n"
                 b"--- !<tag:stsci.edu:asdf/core/asdf-1.1.0>\n"
                 b"a: !<tag:stsci.edu:asdf/core/ndarray-1.1.0>\n  source: 0\n  datatype: int32\n"
                 b"  byteorder: little\n  shape: [4]\n"
                 b"thing: !ex!thing-1.0.0 {n: !t2!deep-2.0 [1, !ex!leaf-1.0.0 leaf]}\n"
                 b"verb: !<asdf://example.org/tags/verbatim-1.0.0> 12\n"
                 b"primary: !custom-1.0.0 {}\n"
                 b"...\n")
    add("tags_multi_handles", assemble(tags_tree, [block(A_BYTES)]), doc({
        "a": ndarray_json("<i4", [4], A_BYTES),
        "thing": {"$tag": "asdf://example.org/tags/thing-1.0.0", "value": {
            "n": {"$tag": "tag:other.org,2020:x/deep-2.0", "value": [
                1, {"$tag": "asdf://example.org/tags/leaf-1.0.0", "value": "leaf"}]}}},
        "verb": {"$tag": "asdf://example.org/tags/verbatim-1.0.0", "value": "12"},
        "primary": {"$tag": "tag:stsci.edu:asdf/custom-1.0.0", "value": {}},
    }))

    # -- big ints and YAML 1.1 scalars -----------------------------------------------
    bigints = tree_text(
        "beyond: 123456789012345678901234567890\n"
        "neg70: -1180591620717411303424\n"
        "u64max: 18446744073709551615\n"
        "two64: 18446744073709551616\n"
        "i64min: -9223372036854775808\n"
        "hexbig: 0x1FFFFFFFFFFFFFFFFF\n"
        "list: [9223372036854775808, -9223372036854775809]\n")
    add("big_ints_beyond_64", bigints, doc({
        "beyond": 123456789012345678901234567890,
        "neg70": -(2**70),
        "u64max": 2**64 - 1,
        "two64": 2**64,
        "i64min": -(2**63),
        "hexbig": 0x1FFFFFFFFFFFFFFFFF,
        "list": [2**63, -(2**63) - 1],
    }))

    quirks = tree_text(
        "bools: [yes, no, on, off, Yes, NO, On, OFF, y, n, Y, N, true, False, TRUE]\n"
        "nulls: [~, null, Null, NULL, ]\n"
        "empty_value:\n"
        "octal: 017\n"
        "octal_neg: -017\n"
        "hex: 0x1F\n"
        "bin: 0b101\n"
        "sexagesimal_int: 190:20:30\n"
        "sexagesimal_float: 20:30.15\n"
        "underscore_int: 1_000\n"
        "underscore_float: 1_000.5\n"
        "exp_no_dot: 1e3\n"
        "exp_dot: 1.0e+3\n"
        "exp_dot_neg: -1.5E-3\n"
        "dot_only: 1.\n"
        "leading_dot: .5\n"
        "plus_int: +12\n"
        "zero: 0\n"
        "neg_zero_float: -0.0\n"
        "inf: .inf\n"
        "neg_inf: -.Inf\n"
        "pos_inf: +.INF\n"
        "nan: .nan\n"
        "nan2: .NaN\n"
        "not_nan: nan\n"
        "date: 2002-12-14\n"
        "ts_canonical: 2001-12-15T02:59:43.1Z\n"
        "ts_iso8601: 2001-12-14t21:59:43.10-05:00\n"
        "ts_spaced: 2001-12-14 21:59:43.10 -5\n"
        "ts_no_zone: 2001-12-15 2:59:43.10\n"
        "ts_offset_hhmm: 2020-06-30T23:30:00+01:30\n"
        "ts_frac_long: 2020-01-01T00:00:00.1234567Z\n"
        "str_override: !!str 123\n"
        "str_override_bool: !!str yes\n"
        "int_override: !!int '42'\n"
        "float_override: !!float 3\n"
        "float_override_str: !!float '2.5'\n"
        "bool_override: !!bool 'off'\n"
        "null_override: !!null ''\n"
        "binary: !!binary |\n  SGVsbG8sIEFTREYh\n"
        "binary_empty: !!binary ''\n"
        "quoted_yes: 'yes'\n"
        "quoted_num: \"017\"\n"
        "single_dash_str: '-'\n"
        "merge_like: '<<'\n"
        "colon_in_str: a:b\n"
        "dollar_key: {$ref: x, $$y: 1}\n"
        "bool_and_int_keys: {2: two, false: no_key}\n"
        "float_key: {1.5: x}\n"
        "null_key: {~: nothing}\n"
        "multiline_plain: this is\n  folded plain\n"
        "literal: |\n  line1\n  line2\n"
        "folded: >-\n  a\n  b\n"
        "escapes: \"tab\\tnl\\nuni\\u00e9\\U0001F600nul\\0x\\x41\"\n"
    )
    add("yaml11_quirks", quirks, doc({
        "bools": [True, False, True, False, True, False, True, False,
                  "y", "n", "Y", "N", True, False, True],
        "nulls": [None, None, None, None],  # the trailing ", ]" adds no entry
        "empty_value": None,
        "octal": 15,
        "octal_neg": -15,
        "hex": 31,
        "bin": 5,
        "sexagesimal_int": 685230,
        "sexagesimal_float": 1230.15,
        "underscore_int": 1000,
        "underscore_float": 1000.5,
        "exp_no_dot": "1e3",
        "exp_dot": 1000.0,
        "exp_dot_neg": -0.0015,
        "dot_only": 1.0,
        "leading_dot": 0.5,
        "plus_int": 12,
        "zero": 0,
        "neg_zero_float": -0.0,
        "inf": {"$float": "inf"},
        "neg_inf": {"$float": "-inf"},
        "pos_inf": {"$float": "inf"},
        "nan": {"$float": "nan"},
        "nan2": {"$float": "nan"},
        "not_nan": "nan",
        "date": {"$timestamp": "2002-12-14"},
        "ts_canonical": {"$timestamp": "2001-12-15T02:59:43.1Z"},
        "ts_iso8601": {"$timestamp": "2001-12-15T02:59:43.1Z"},
        "ts_spaced": {"$timestamp": "2001-12-15T02:59:43.1Z"},
        "ts_no_zone": {"$timestamp": "2001-12-15T02:59:43.1Z"},
        "ts_offset_hhmm": {"$timestamp": "2020-06-30T22:00:00Z"},
        "ts_frac_long": {"$timestamp": "2020-01-01T00:00:00.123456Z"},
        "str_override": "123",
        "str_override_bool": "yes",
        "int_override": 42,
        "float_override": 3.0,
        "float_override_str": 2.5,
        "bool_override": False,
        "null_override": None,
        "binary": {"$bytes": b"Hello, ASDF!".hex()},
        "binary_empty": {"$bytes": ""},
        "quoted_yes": "yes",
        "quoted_num": "017",
        "single_dash_str": "-",
        "merge_like": "<<",
        "colon_in_str": "a:b",
        "dollar_key": {"$$ref": "x", "$$$y": 1},
        "bool_and_int_keys": {"$map": [[2, "two"], [False, "no_key"]]},
        "float_key": {"$map": [[1.5, "x"]]},
        "null_key": {"$map": [[None, "nothing"]]},
        "multiline_plain": "this is folded plain",
        "literal": "line1\nline2\n",
        "folded": "a b",
        "escapes": "tab\tnl\nuni\u00e9\U0001F600nul\0xA",
    }))

    # -- a mask array in a block, bool bytes other than 0/1 ---------------------------
    mask_tree = tree_text("m: " + nd(0, "float64", "[3]", extra=(
        "    mask: !core/ndarray-1.1.0\n      source: 1\n      datatype: bool8\n"
        "      byteorder: little\n      shape: [3]\n")))
    mvals = f64le([1.0, 2.0, 3.0])
    add("mask_block_odd_bools", assemble(mask_tree, [block(mvals), block(b"\x00\x07\xff")]), doc({
        "m": ndarray_json("<f8", [3], mvals, mask=ndarray_json("|b1", [3], b"\x00\x01\x01")),
    }))

    # -- an ndarray whose block is shared by two views, one negative-stride ------------
    view_tree = tree_text("base: " + nd(0, "int32", "[4]") + "rev: " + nd(
        0, "int32", "[4]", extra="    offset: 12\n    strides: [-4]\n") + "mid: " + nd(
        0, "int32", "[2]", extra="    offset: 4\n"))
    add("views_by_hand", assemble(view_tree, [block(A_BYTES)]), doc({
        "base": ndarray_json("<i4", [4], A_BYTES),
        "rev": ndarray_json("<i4", [4], i32le(A[::-1])),
        "mid": ndarray_json("<i4", [2], i32le(A[1:3])),
    }))

    # -- a source index given from the end (-1) for a non-streamed block ----------------
    neg_tree = tree_text("a: " + nd(-2, "int32", "[4]") + "b: " + nd(-1, "float64", "[5]"))
    add("negative_source_index", assemble(neg_tree, good), two_arrays_expect())


HAND_ONLY_NOTE = """# Hand-written expectations in tests/data/layouts

Every `NAME.asdf` here was assembled byte by byte by `make_layouts.py` (stdlib only).
Sidecars come from python asdf 6.0.0 through `tests/oracle/canonical.py` where python asdf reads
the file;
`make_layouts.py --oracle PYTHON` also checks every hand-written expectation against the oracle
when python can read the file, so the hand-written hashes and values are verified.

The following sidecars are hand-written only (python asdf 6.0.0 cannot produce them):

"""


# ---------------------------------------------------------------------------
# main
# ---------------------------------------------------------------------------

CANONICAL = HERE.parent / "oracle" / "canonical.py"


def to_json(d: dict) -> str:
    return json.dumps(d, sort_keys=True, ensure_ascii=False, indent=1, allow_nan=False) + "\n"


def semantically_equal(a, b) -> bool:
    # a tiny local version of compare_expect.compare: types kept apart, -0.0 != 0.0
    if type(a) is not type(b):
        return False
    if isinstance(a, float):
        return a == b and str(a).startswith("-") == str(b).startswith("-")
    if isinstance(a, list):
        return len(a) == len(b) and all(semantically_equal(x, y) for x, y in zip(a, b))
    if isinstance(a, dict):
        if set(a) != set(b):
            return False
        for un in ("$map", "$set"):
            if set(a) == {un}:
                ka = sorted(json.dumps(x, sort_keys=True) for x in a[un])
                kb = sorted(json.dumps(x, sort_keys=True) for x in b[un])
                return ka == kb
        return all(semantically_equal(a[k], b[k]) for k in a)
    return a == b


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--oracle", help="python interpreter with asdf==6.0.0 (for sidecars)")
    args = ap.parse_args()

    build()
    OUT.mkdir(parents=True, exist_ok=True)
    for old in list(OUT.glob("*.asdf")):
        old.unlink()
    for name, data in LAYOUTS.items():
        (OUT / f"{name}.asdf").write_bytes(data)

    problems = []
    python_unreadable = {}
    if args.oracle:
        for old in OUT.glob("*.expect.json"):
            old.unlink()
        for name in LAYOUTS:
            p = OUT / f"{name}.asdf"
            r = subprocess.run([args.oracle, str(CANONICAL), "dump", str(p)], capture_output=True, text=True)
            if r.returncode != 0:
                err = (r.stderr.strip().splitlines() or ["?"])[-1]
                python_unreadable[name] = err
                if name not in HAND:
                    problems.append(f"{name}: python cannot read it and no hand expectation: {err}")
                continue
            oracle = json.loads(r.stdout)
            if name in HAND_ONLY:
                print(f"  {name}: python reads it; hand-only expectation kept ({HAND_ONLY[name][:60]}...)")
                python_unreadable.setdefault(name, "read, but differently: " + HAND_ONLY[name])
                continue
            if name in HAND and not semantically_equal(HAND[name], oracle):
                problems.append(f"{name}: hand expectation differs from the oracle:\n"
                                f"    hand:   {json.dumps(HAND[name], sort_keys=True)[:2000]}\n"
                                f"    oracle: {json.dumps(oracle, sort_keys=True)[:2000]}")
            (OUT / f"{name}.expect.json").write_text(r.stdout, encoding="utf-8")
        note = HAND_ONLY_NOTE
        for name in sorted(n for n in LAYOUTS if n in python_unreadable):
            note += f"* `{name}.asdf`: {HAND_ONLY.get(name) or 'python asdf 6.0.0 fails: ' + python_unreadable[name]}\n"
        (OUT / "HAND_WRITTEN.md").write_text(note, encoding="utf-8")

    # hand-written sidecars for what the oracle could not (or must not) produce
    for name, exp in HAND.items():
        sidecar = OUT / f"{name}.expect.json"
        if name in HAND_ONLY or name in python_unreadable or not sidecar.exists():
            sidecar.write_text(to_json(exp), encoding="utf-8")

    for p in problems:
        print("PROBLEM " + p)
    print(f"{len(LAYOUTS)} layouts written to {OUT}")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
