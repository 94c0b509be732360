#!/usr/bin/env python3
"""`asdftool references` read by fsspec + zarr equals python asdf's arrays.

Usage:
    .venv-oracle/bin/python tests/oracle/zarr_references.py ASDFTOOL

In a temporary folder, python asdf 6.0.0 (with asdf-compression) writes one tree of arrays
(float32, big-endian float64 and int16, uint8, complex128, a record with a big-endian
field, arrays of 5.6 MB whose rows do and do not fit python's 4 MiB lz4 sub-blocks and our
4 MiB Blosc2 chunks (short last pieces; one whole-block chunk), 1009 rows (a short last
uncompressed slab), 4 MiB of zeros, 0-d, empty, inline, arrays in nested mappings and
sequences, scalars) uncompressed and with each codec it
writes (zlib, bzp2, lz4, zstd, lz4f, blsc); `asdftool defragment -c` writes the same tree
with each of our codecs (none, zlib, bzp2, lz4, zstd, lz4f, blsc, bls2, bsc2) and
`asdftool explode` as external block files. For each file, `asdftool references` (with
small uncompressed slabs and with the default) writes references that are opened with
`fsspec.filesystem("reference", fo=...)` and `zarr.open(..., mode="r")` after `import
asdf_rs.codecs`; every array must equal python asdf's array at its path (values, and the
datatype with its byte order for files python asdf wrote), and the scalars must be the
group attributes, and chosen arrays must have the chunk layout and compressor expected. The
same comparison runs over the asdf-zarr fixtures (their chunks referenced, .zarray as
asdf-zarr's) and 20 fixtures of tests/data (views with offset and strides into
shared blocks, Fortran order, streamed blocks, masks, external blocks, records, strings).
Then `--stack` of three files of the same shapes is compared file by
file, and a file whose array has another shape must fail naming that file.

Prints one line per check; exits non-zero on the first failure.
"""

from __future__ import annotations

import hashlib
import json
import subprocess
import sys
import tempfile
from pathlib import Path

import asdf
import fsspec
import numpy as np
import zarr

import asdf_rs.codecs  # noqa: F401  (registers asdf_lz4f, asdf_blosc2, asdf_lz4, asdf_pad, asdf_block)

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
import testdata  # noqa: E402  (tests/testdata.py)

FIXTURES = [
    "views_shared_base.asdf",
    "views_shared_base_bigendian.asdf",
    "views_shared_base_zlib.asdf",
    "views_zero_stride.asdf",
    "views_default.asdf",
    "codec_zlib_bigendian_fortran.asdf",
    "codec_lz4_multichunk.asdf",
    "codec_mixed.asdf",
    "dtypes_big.asdf",
    "dtypes_little.asdf",
    "dtypes_multidim.asdf",
    "dtypes_strings.asdf",
    "dtypes_structured.asdf",
    "dtypes_bool_bytes.asdf",
    "dtypes_structured_inline.asdf",
    "stream.asdf",
    "stream_2d_bigendian.asdf",
    "zero_d_and_empty.asdf",
    "masked.asdf",
    "external.asdf",
]
PYTHON_CODECS = ["none", "zlib", "bzp2", "lz4", "zstd", "lz4f", "blsc"]
OUR_CODECS = ["none", "zlib", "bzp2", "lz4", "zstd", "lz4f", "blsc", "bls2", "bsc2"]


def tree(seed: int, rows: int = 700) -> dict:
    rng = np.random.default_rng(seed)
    base = np.arange(100, dtype="<i8").reshape(10, 10) * (seed + 1)
    rec = np.zeros(20, dtype=[("id", "<i4"), ("x", ">f8"), ("name", "S5")])
    rec["id"] = np.arange(20) + seed
    rec["x"] = rng.normal(size=20)
    rec["name"] = [f"s{i}".encode() for i in range(20)]
    inline = np.arange(6, dtype="<f8") + seed
    return {
        "f4": rng.normal(size=(300, 200)).astype("<f4"),
        "f8_big": rng.normal(size=1000).astype(">f8"),
        "i2_big": rng.integers(-30000, 30000, size=(50, 40)).astype(">i2"),
        "u1": rng.integers(0, 255, size=(3, 4, 5)).astype("u1"),
        "c16": (rng.normal(size=100) + 1j * rng.normal(size=100)).astype("<c16"),
        "rec": rec,
        # rows of 8 KiB: python's 4 MiB lz4 sub-blocks and our 4 MiB Blosc2 chunks hold
        # whole rows (chunks of 512 rows, the last short); rows of 8000 bytes do not (one
        # chunk, the whole block)
        "large": rng.normal(size=(rows, 1024)),
        "large_odd": rng.normal(size=(rows, 1000)).astype("<f8"),
        "zeros": np.zeros((1024, 1024), dtype="<f4"),
        # 1009 rows (a prime) of 800 bytes: uncompressed slabs of 81 rows, the last short
        "prime": rng.normal(size=(1009, 100)),
        "zero_d": np.array(3.5 + seed),
        "empty": np.zeros((0, 3), dtype="<f4"),
        "inline": inline,
        "base": base,
        "view": base[::2, 1:],
        "group": {
            "a": rng.integers(0, 9, size=(7, 3)).astype("<i4"),
            "meta": {"x": 1, "name": "inner"},
        },
        "seq": [rng.normal(size=5).astype("<f4"), {"b": np.arange(4, dtype="<u2")}],
        "meta": {"telescope": "EXAMPLE", "exposure": 12.5, "flags": [1, 2, 3], "ok": True},
    }


def write_python(path: Path, t: dict, codec: str) -> None:
    af = asdf.AsdfFile(t)
    af.set_array_storage(t["inline"], "inline")
    kw = {} if codec == "none" else {"all_array_compression": codec}
    af.write_to(path, **kw)


def run(cmd: list) -> subprocess.CompletedProcess:
    return subprocess.run([str(c) for c in cmd], capture_output=True, text=True)


def ok(cmd: list) -> str:
    p = run(cmd)
    if p.returncode != 0:
        raise SystemExit(f"FAIL: {' '.join(map(str, cmd))}: exit {p.returncode}\n{p.stderr}")
    return p.stdout


def arrays(node, path=""):
    """(tree path, numpy array) of every array of a python asdf tree."""
    if isinstance(node, dict):
        for k, v in node.items():
            yield from arrays(v, f"{path}/{k}")
    elif isinstance(node, (list, tuple)):
        for i, v in enumerate(node):
            yield from arrays(v, f"{path}/{i}")
    elif isinstance(node, np.ndarray) or type(node).__name__ == "NDArrayType":
        yield path, np.asarray(node)


def zarr_arrays(node, path=""):
    """(tree path, zarr.Array) of every asdf-zarr array of a python asdf tree."""
    if isinstance(node, dict):
        for k, v in node.items():
            yield from zarr_arrays(v, f"{path}/{k}")
    elif isinstance(node, (list, tuple)):
        for i, v in enumerate(node):
            yield from zarr_arrays(v, f"{path}/{i}")
    elif isinstance(node, zarr.Array):
        yield path, node


def same(expected: np.ndarray, actual: np.ndarray, what: str, exact_dtype: bool) -> None:
    if exact_dtype and expected.dtype != actual.dtype:
        raise AssertionError(f"{what}: dtype {actual.dtype}, python asdf {expected.dtype}")
    if expected.shape != actual.shape:
        raise AssertionError(f"{what}: shape {actual.shape}, python asdf {expected.shape}")
    if expected.dtype.names:
        for name in expected.dtype.names:
            np.testing.assert_array_equal(actual[name], expected[name], err_msg=f"{what}.{name}")
    else:
        np.testing.assert_array_equal(actual, expected, err_msg=what)


def open_refs(refs: Path):
    fs = fsspec.filesystem("reference", fo=str(refs))
    return zarr.open(store=fs.get_mapper(""), mode="r")


def check(
    asdftool: Path,
    f: Path,
    truth: Path,
    exact_dtype: bool,
    slab: int | None,
    out: Path | None = None,
    generated: bool = True,
) -> int:
    refs = (out or f.parent) / f"{f.stem}.{slab or 'default'}.refs.json"
    cmd = [asdftool, "references", f, "-o", refs] + ([] if slab is None else ["--slab-bytes", slab])
    ok(cmd)
    root = open_refs(refs)
    n = 0
    with asdf.open(truth, lazy_load=False, memmap=False) as af:
        for path, expected in arrays(af.tree):
            if path.startswith("/history") or path.startswith("/asdf_library"):
                continue
            actual = root[path.lstrip("/")][...]
            same(expected, actual, f"{f.name} {path}", exact_dtype)
            n += 1
        if not generated:
            return n
        attrs = dict(root["meta"].attrs)
        want = {"telescope": "EXAMPLE", "exposure": 12.5, "flags": [1, 2, 3], "ok": True}
        if attrs != want:
            raise AssertionError(f"{f.name}: /meta attributes {attrs}, expected {want}")
        if dict(root["group/meta"].attrs) != {"x": 1, "name": "inner"}:
            raise AssertionError(f"{f.name}: /group/meta attributes {dict(root['group/meta'].attrs)}")
    return n


def compressors(refs: Path) -> set:
    doc = json.loads(refs.read_text())
    out = set()
    for k, v in doc["refs"].items():
        if k.endswith(".zarray"):
            c = json.loads(v)["compressor"]
            out.add(None if c is None else c["id"])
    return out


def main() -> int:
    if len(sys.argv) != 2:
        print(__doc__, file=sys.stderr)
        return 2
    asdftool = Path(sys.argv[1]).resolve()
    with tempfile.TemporaryDirectory() as tmp:
        tmp = Path(tmp)
        base = tmp / "base.asdf"
        write_python(base, tree(0), "none")
        files = []  # (file, exact datatype)
        for codec in PYTHON_CODECS:
            p = tmp / f"python-{codec}.asdf"
            write_python(p, tree(0), codec)
            files.append((p, True))
        for codec in OUR_CODECS:
            p = tmp / f"ours-{codec}.asdf"
            ok([asdftool, "defragment", base, "-o", p, "-c", codec])
            files.append((p, False))
        (tmp / "exploded").mkdir()
        exploded = tmp / "exploded" / "exploded.asdf"
        ok([asdftool, "explode", base, "-o", exploded])
        files.append((exploded, False))
        seen = set()
        for f, exact in files:
            for slab in (65536, None):
                n = check(asdftool, f, base, exact, slab)
                print(f"ok {f.name} (slabs {slab or 'default'}): {n} arrays equal python asdf's")
            seen |= compressors(f.with_suffix(".65536.refs.json"))
        # the pieces are referenced where they can be, not inlined
        layouts = {
            ("python-none", "f4"): (None, [75, 200], 4),
            ("python-none", "prime"): ("asdf_pad", [81, 100], 13),
            ("python-lz4", "large"): ("asdf_lz4", [512, 1024], 2),
            ("python-lz4", "large_odd"): ("asdf_block", [700, 1000], 1),
            ("python-lz4", "f4"): ("lz4", [300, 200], 1),
            ("ours-bsc2", "large"): ("asdf_blosc2", [512, 1024], 2),
            ("ours-bsc2", "zeros"): ("asdf_blosc2", [1024, 1024], 1),
            ("exploded", "large"): (None, [7, 1024], 100),
        }
        for (stem, name), (cid, chunks, n) in layouts.items():
            refs = json.loads((tmp / ("exploded" if stem == "exploded" else "")
                               / f"{stem}.65536.refs.json").read_text())["refs"]
            z = json.loads(refs[f"{name}/.zarray"])
            got = (None if z["compressor"] is None else z["compressor"]["id"], z["chunks"])
            keys = [k for k in refs if k.startswith(f"{name}/") and not k.split("/")[-1].startswith(".")]
            linked = [k for k in keys if isinstance(refs[k], list)]
            if got != (cid, chunks) or len(keys) != n or (name != "zeros" and len(linked) != n):
                raise AssertionError(f"{stem} {name}: {got}, {len(keys)} chunks ({len(linked)} referenced)")
        print(f"ok chunk layouts of {len(layouts)} arrays")
        want = {None, "zlib", "bz2", "lz4", "zstd", "blosc", "asdf_lz4", "asdf_lz4f", "asdf_blosc2", "asdf_block", "asdf_pad"}
        if not want <= seen:
            raise AssertionError(f"compressors used {seen}, expected at least {want}")
        print(f"ok compressors used: {sorted(map(str, seen))}")

        # fixtures of tests/data: views (offset, strides, zero strides) into shared blocks,
        # Fortran order, streamed blocks, masks, external blocks, more datatypes
        out = tmp / "fixtures"
        out.mkdir()
        for name in FIXTURES:
            f = testdata.require(f"fixtures/{name}")
            if f is None:
                continue
            for slab in (256, None):
                n = check(asdftool, f, f, True, slab, out=out, generated=False)
            print(f"ok fixtures/{name}: {n} arrays equal python asdf's")

        # asdf-zarr arrays (tests/data/asdf-zarr, python asdf + asdf-zarr 0.0.4): their own
        # .zarray and chunks referenced where their blocks lie, equal to what asdf-zarr reads
        zout = tmp / "asdf-zarr"
        zout.mkdir()
        zdir = testdata.require_dir("asdf-zarr")
        # (unsupported.asdf: an lzma compressor and a delta filter, which asdf-rs does not
        # read, passed through for numcodecs, which does)
        for f in sorted(zdir.glob("*.asdf")) if zdir is not None else []:
            refs = zout / f"{f.stem}.refs.json"
            ok([asdftool, "references", f, "-o", refs])
            root = open_refs(refs)
            doc = json.loads(refs.read_text())["refs"]
            n = 0
            with asdf.open(f, lazy_load=False, memmap=False) as af:
                for path, expected in zarr_arrays(af.tree):
                    actual = root[path.lstrip("/")][...]
                    same(np.asarray(expected[...]), actual, f"asdf-zarr/{f.name} {path}", True)
                    z = json.loads(doc[f"{path.lstrip('/')}/.zarray"])
                    if z["chunks"] != list(expected.chunks):
                        raise AssertionError(f"{f.name} {path}: chunks {z['chunks']}")
                    if z["compressor"] != (expected.compressor.get_config()
                                           if expected.compressor else None):
                        raise AssertionError(f"{f.name} {path}: compressor {z['compressor']}")
                    if z["filters"] != ([c.get_config() for c in expected.filters]
                                        if expected.filters else None):
                        raise AssertionError(f"{f.name} {path}: filters {z['filters']}")
                    keys = [k for k in doc if k.startswith(path.lstrip("/") + "/")
                            and not k.split("/")[-1].startswith(".")]
                    if not keys or not all(isinstance(doc[k], list) for k in keys):
                        raise AssertionError(f"{f.name} {path}: chunks not referenced: {keys}")
                    n += 1
            if n == 0:
                raise AssertionError(f"{f.name}: no asdf-zarr array")
            print(f"ok asdf-zarr/{f.name}: {n} zarr arrays equal asdf-zarr's, chunks referenced")

        # abacusutils' blsc blocks ([u32 BE n][Blosc1 chunk] pieces, tests/data/other-labels):
        # python asdf reads them only with abacusutils, so the arrays are checked against the
        # fixture's sidecar (numpy's datatype, shape and sha256 of the little-endian bytes);
        # whole pieces are referenced one by one with numcodecs' Blosc
        f = testdata.require("other-labels/abacus_blsc.asdf")
        if f is not None:
            refs = tmp / "abacus.refs.json"
            ok([asdftool, "references", f, "-o", refs])
            root = open_refs(refs)
            doc = json.loads(refs.read_text())["refs"]
            side = json.loads(f.with_name("abacus_blsc.values.json").read_text())
            for name, a in side["arrays"].items():
                x = np.asarray(root[name][...])
                le = x.astype(x.dtype.newbyteorder("<"))
                if (x.dtype.str, list(x.shape)) != (a["datatype"], a["shape"]) or \
                        hashlib.sha256(le.tobytes()).hexdigest() != a["sha256_le"]:
                    raise AssertionError(f"abacus_blsc {name}: {x.dtype.str} {x.shape} differs")
            z = json.loads(doc["f4_one_piece/.zarray"])
            if z["compressor"] != {"id": "blosc"} or not isinstance(doc.get("f4_one_piece/0.0"), list):
                raise AssertionError(f"abacus_blsc f4_one_piece: {z['compressor']}, not its chunk")
            print(f"ok other-labels/abacus_blsc.asdf: {len(side['arrays'])} arrays equal the sidecar's")

        # --stack: three files of the same shapes, one array axis more
        stack = [tmp / f"stack{i}.asdf" for i in range(3)]
        for i, p in enumerate(stack):
            write_python(p, tree(i + 1), "lz4" if i else "none")
        # same codec for every file (chunks and compressor must agree)
        for i, p in enumerate(stack[1:], 1):
            stack[i] = tmp / f"stack{i}-none.asdf"
            ok([asdftool, "defragment", p, "-o", stack[i], "-c", "none"])
        refs = tmp / "stack.refs.json"
        ok([asdftool, "references", *stack, "--stack", "file", "-o", refs, "--slab-bytes", 65536])
        root = open_refs(refs)
        if root.attrs["file"] != [str(p) for p in stack]:
            raise AssertionError(f"root attribute 'file': {root.attrs['file']}")
        n = 0
        for k, p in enumerate(stack):
            with asdf.open(p, lazy_load=False, memmap=False) as af:
                for path, expected in arrays(af.tree):
                    z = root[path.lstrip("/")]
                    if z.shape != (len(stack),) + expected.shape:
                        raise AssertionError(f"stack {path}: shape {z.shape}")
                    same(expected, z[k], f"stack {p.name} {path}", False)
                    n += 1
        print(f"ok --stack of {len(stack)} files: {n} arrays equal python asdf's")
        odd = tmp / "odd.asdf"
        write_python(odd, tree(9, rows=600), "none")
        p = run([asdftool, "references", stack[0], odd, "--stack", "file", "-o", tmp / "odd.json"])
        if p.returncode == 0 or str(odd) not in p.stderr or "/large" not in p.stderr:
            raise AssertionError(f"--stack of a file of another shape: exit {p.returncode}, {p.stderr!r}")
        if (tmp / "odd.json").exists():
            raise AssertionError("--stack failed but wrote its output")
        print(f"ok --stack refuses a file of another shape: {p.stderr.strip()}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
