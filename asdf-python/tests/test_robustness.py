"""Files that are odd, old or broken (the hand-made layouts, libasdf's files, ASDF 0.1.0
files, and every reference file cut short): each either reads, and then reads what its
expectation says, or raises the one exception it must raise (that type exactly, with its
message). Never a crash, never another exception, never a read of something else."""

from __future__ import annotations

import struct
import sys

import numpy as np
import pytest

import asdf_rs
from conftest import REPOSITORY, testdata

sys.path.insert(0, str(REPOSITORY / "tests" / "oracle"))
import canonical  # noqa: E402  (the oracle's dtype text and value hash, stdlib and numpy)

FOLDERS = ["layouts", "libasdf", "legacy-0.1.0"]
FILES = [p for sub in FOLDERS for p in sorted(testdata.require_dir(sub).rglob("*.asdf"))]

# The odd files asdf_rs refuses (read with verify_checksums=True): the exception type, exactly,
# and what its message says. Every other file reads.
REFUSED = {
    "layouts/checksum_wrong.asdf": (
        asdf_rs.ChecksumError,
        "block 0 at byte 285: checksum mismatch (stored b4b9049527114c69376ea94d535c481d, "
        "computed 4b46fb6ad8eeb396c89156b2aca3b7e2)",
    ),
    "layouts/checksum_wrong_zlib.asdf": (
        asdf_rs.ChecksumError,
        "block 1 at byte 355: checksum mismatch (stored 93833e3601a06ff2ab7e48072f1829ab, "
        "computed 6c7cc1c9fe5f900d5481b7f8d0e7d654)",
    ),
    "libasdf/255-invalid-checksum.asdf": (
        asdf_rs.ChecksumError,
        "block 0 at byte 901: checksum mismatch (stored deadbeefdeadbeefdeadbeefdeadbeef, "
        "computed e2c865db4162bed963bfaa9ef6ac18f0)",
    ),
    "libasdf/255-no-newline-before-tree.asdf": (
        asdf_rs.AsdfError,
        "malformed file layout: unexpected content after the header at offset 42",
    ),
    "libasdf/custom-tag-handle.asdf": (
        asdf_rs.AsdfError,
        "malformed YAML tree: yaml syntax error at line 5 column 10 (byte 79): did not find "
        "expected '!' while parsing a tag directive",
    ),
    "libasdf/ndarray-out.asdf": (
        asdf_rs.AsdfError,
        "/data: array needs 261 bytes of its block but the block has 25",
    ),
    "libasdf/parse-unsupported-directive.asdf": (
        asdf_rs.AsdfError,
        "malformed YAML tree: yaml syntax error at line 4 column 5 (byte 47): found unknown "
        "directive name while scanning a directive",
    ),
}


def arrays_of(tree, at=""):
    """Every NDArray of an asdf_rs tree by its JSON pointer, read."""
    out = {}
    stack = [(tree, at)]
    seen = set()
    while stack:
        x, p = stack.pop()
        if isinstance(x, asdf_rs.NDArray):
            a = x.read()
            assert isinstance(a, np.ndarray), (p, type(a))
            out[p] = a
            continue
        if id(x) in seen:
            continue
        seen.add(id(x))
        if isinstance(x, dict):
            stack += [(v, f"{p}/{escape(k)}") for k, v in x.items()]
        elif isinstance(x, list):
            stack += [(v, f"{p}/{i}") for i, v in enumerate(x)]
        elif isinstance(x, asdf_rs.Tagged):
            stack.append((x.value, p))
    return out


def escape(key) -> str:
    return str(key).replace("~", "~0").replace("/", "~1")


def sidecar_arrays(node, at="", out=None):
    """Every `$ndarray` of a canonical sidecar tree by its JSON pointer (docs/canonical.md:
    tags are `{"$tag", "value"}`, a key starting with `$` has one more `$`)."""
    out = {} if out is None else out
    if isinstance(node, list):
        for i, v in enumerate(node):
            sidecar_arrays(v, f"{at}/{i}", out)
    elif isinstance(node, dict):
        if "$ndarray" in node:
            out[at] = node["$ndarray"]
        elif "$tag" in node:
            sidecar_arrays(node["value"], at, out)
        elif any(k.startswith("$") and not k.startswith("$$") for k in node):
            # `$float`, `$bytes`, `$timestamp`, `$recursive`; `$map`, `$omap`, `$set` (no
            # file here holds an array in those)
            assert "$ndarray" not in str(node), at
        else:
            for k, v in node.items():
                sidecar_arrays(v, f"{at}/{escape(k[1:] if k.startswith('$$') else k)}", out)
    return out


def described(a) -> dict:
    return {"dtype": canonical.dtype_text(a.dtype), "shape": list(a.shape),
            "sha256": canonical.value_hash(a)}


def same_values(a, b) -> bool:
    """The same shape, datatype up to byte order, and values (NaN and bool bytes normalised;
    complex numbers to the 12 significant digits python 2 printed in the legacy twins, as
    asdf-core/tests/it/legacy.rs compares them)."""
    if a.shape != b.shape or canonical.little_packed(a.dtype) != canonical.little_packed(b.dtype):
        return False
    if a.dtype.kind == "c":
        return all(np.allclose(x, y, rtol=1e-11, atol=0, equal_nan=True)
                   for x, y in [(a.real, b.real), (a.imag, b.imag)])
    return canonical.value_hash(a) == canonical.value_hash(b)


def test_corpus_is_there():
    assert len(FILES) > 80, FILES
    names = {str(p.relative_to(testdata.root())) for p in FILES}
    assert set(REFUSED) <= names, set(REFUSED) - names


def keys_of(tree):
    """The keys of a tree's root, sorted, or their number when some are not strings."""
    if all(isinstance(k, str) for k in tree):
        return sorted(tree)
    return ("keys", len(tree))


def expectation(path):
    """What a file that reads must give: its sidecar's arrays (python asdf's reading, or
    hand-written), or for an ASDF 0.1.0 file its `.yaml` twin's arrays, read by asdf_rs."""
    sidecar = path.with_suffix(".expect.json")
    if sidecar.exists():
        import json

        tree = json.loads(sidecar.read_text())["tree"]
        root = tree["value"] if isinstance(tree, dict) and "$tag" in tree else tree
        if "$map" in root:  # keys other than strings: their number
            keys = ("keys", len(root["$map"]))
        else:
            keys = sorted(k[1:] if k.startswith("$$") else k for k in root)
        return "sidecar", keys, sidecar_arrays(tree)
    twin = path.with_suffix(".yaml")
    if twin.exists():
        with asdf_rs.open(twin) as f:
            return "twin", keys_of(f.tree), arrays_of(f.tree)
    return None, None, None


@pytest.mark.parametrize("path", FILES, ids=lambda p: str(p.relative_to(testdata.root())))
def test_odd_files_read_what_they_hold_or_raise_their_error(path):
    name = str(path.relative_to(testdata.root()))
    if name in REFUSED:
        cls, message = REFUSED[name]
        with pytest.raises(asdf_rs.AsdfError) as e:
            with asdf_rs.open(path, verify_checksums=True) as f:
                arrays_of(f.tree)
                f.info()
        assert type(e.value) is cls, repr(e.value)
        assert message in str(e.value)
        return
    with asdf_rs.open(path, verify_checksums=True) as f:
        keys = keys_of(f.tree)
        got = arrays_of(f.tree)
        assert f.info().strip()
    kind, want_keys, want = expectation(path)
    if kind is None:
        # the external block file of a legacy exploded file: no sidecar, no twin (its
        # block is read through exploded.asdf, against that file's twin)
        assert path.name == "exploded0000.asdf" and name.startswith("legacy-0.1.0/"), name
        return
    assert keys == want_keys, name
    assert sorted(got) == sorted(want), name
    for p, a in got.items():
        if kind == "sidecar":
            w = {k: v for k, v in want[p].items() if k != "mask"}
            assert described(a) == w, f"{name}:{p}"
        else:
            assert same_values(a, want[p]), f"{name}:{p}"


# --------------------------------------------------------------------------------------------
# reference files cut short
# --------------------------------------------------------------------------------------------

REFERENCE = sorted(testdata.require_dir("reference-files").rglob("*.asdf"))
CUTS = [0.1, 0.5, 0.9, 0.99]
BLOCK_MAGIC = b"\xd3BLK"
INDEX = b"#ASDF BLOCK INDEX"
STREAMED = 1


def layout(raw: bytes):
    """Where the parts of a whole 1.x file lie: the end of its YAML tree (None without one),
    each block as (start, end, streamed), and the start of the block index (None without)."""
    tree_end = None
    if b"\n---" in raw or b"%YAML" in raw:
        end = raw.find(b"\n...\n")
        assert end >= 0
        tree_end = end + len(b"\n...\n")
    blocks = []
    pos = raw.find(BLOCK_MAGIC, tree_end or 0)
    while pos >= 0 and raw.startswith(BLOCK_MAGIC, pos):
        (header_size,) = struct.unpack(">H", raw[pos + 4:pos + 6])
        flags, _, allocated = struct.unpack(">I4sQ", raw[pos + 6:pos + 22])
        start = pos + 6 + header_size
        streamed = bool(flags & STREAMED)
        end = len(raw) if streamed else start + allocated
        blocks.append((pos, end, streamed))
        pos = end
    index = raw.find(INDEX, blocks[-1][1] if blocks else tree_end or 0)
    return tree_end, blocks, (index if index >= 0 else None)


def truncated_outcome(raw: bytes, n: int):
    """What asdf_rs must make of the whole file `raw` cut to `n` bytes: `("empty",)` (only
    header comment lines are left: a file without a tree), `("error", text)`, `("same",)`
    (only the block index was lost: it reads as the whole file) or `("stream", block)` (the
    cut lies in the data of a streamed block: the rows up to the cut)."""
    cut = raw[:n]
    tree_end, blocks, index = layout(raw)
    if all(line.startswith(b"#") for line in cut.split(b"\n") if line):
        return ("empty",)
    if tree_end is not None and n < tree_end:
        return ("error", "has no `...` end marker; the file ends at offset")
    for i, (start, end, streamed) in enumerate(blocks):
        if start <= n < end:
            if n < start + 6 + struct.unpack(">H", raw[start + 4:start + 6])[0]:
                return ("error", "header truncated")
            if streamed:
                return ("stream", i)
            return ("error", "past the end of the file")
    assert index is None or n >= index, (n, blocks, index)
    return ("same",)


def test_the_cuts_reach_every_outcome():
    kinds = {truncated_outcome(p.read_bytes(), int(len(p.read_bytes()) * cut))[0]
             for p in REFERENCE for cut in CUTS}
    assert kinds == {"empty", "error", "same", "stream"}, kinds


def assert_same_tree(got, want, at=""):
    """asdf_rs trees equal: arrays by value (the cut file's streamed array may be shorter:
    then its rows are the whole file's first rows)."""
    if isinstance(want, asdf_rs.NDArray):
        assert isinstance(got, asdf_rs.NDArray), at
        a, b = got.read(), want.read()
        assert a.dtype == b.dtype, at
        assert np.array_equal(a, b[:len(a)], equal_nan=a.dtype.kind in "fc"), at
        return
    assert type(got) is type(want), (at, got, want)
    if isinstance(want, dict):
        assert list(got) == list(want), at
        for k in want:
            assert_same_tree(got[k], want[k], f"{at}/{k}")
    elif isinstance(want, list):
        assert len(got) == len(want), at
        for i, (g, w) in enumerate(zip(got, want)):
            assert_same_tree(g, w, f"{at}/{i}")
    elif isinstance(want, asdf_rs.Tagged):
        assert got.tag == want.tag, at
        assert_same_tree(got.value, want.value, at)
    elif isinstance(want, float) and want != want:
        assert got != got, at
    else:
        assert got == want, at


@pytest.mark.parametrize("cut", CUTS)
def test_truncated_reference_files_read_what_is_left_or_raise(scratch, cut):
    for path in REFERENCE:
        name = str(path.relative_to(testdata.root()))
        raw = path.read_bytes()
        n = int(len(raw) * cut)
        out = scratch / path.name
        out.write_bytes(raw[:n])
        expected = truncated_outcome(raw, n)
        if expected[0] == "error":
            with pytest.raises(asdf_rs.AsdfError) as e:
                with asdf_rs.open(out) as f:
                    arrays_of(f.tree)
            assert type(e.value) is asdf_rs.AsdfError, (name, repr(e.value))
            assert "malformed file layout" in str(e.value), (name, str(e.value))
            assert expected[1] in str(e.value), (name, str(e.value))
            continue
        with asdf_rs.open(out) as f, asdf_rs.open(path) as whole:
            if expected[0] == "empty":
                assert f.tree == {}, name
                continue
            assert_same_tree(f.tree, whole.tree)
            got, want = arrays_of(f.tree), arrays_of(whole.tree)
            short = [p for p in want if len(got[p]) != len(want[p])]
            if expected[0] == "same":
                assert short == [], name
            else:
                # the streamed array holds the rows wholly inside the cut
                (p,) = short
                start = layout(raw)[1][expected[1]][0]
                data = n - (start + 6 + struct.unpack(">H", raw[start + 4:start + 6])[0])
                assert len(got[p]) == data // want[p][0].nbytes, name
