#!/usr/bin/env python3
"""The oracle side of ``asdf-canonical/1`` (specified in docs/canonical.md).

python asdf 6.0.0 reads an ASDF file and this script turns what it read into the canonical JSON
that ``asdftool canonical`` prints for the same file. The sidecars ``NAME.expect.json`` under
tests/data are made by this script, and the Rust tests compare asdf-core's output with them.

Run it with the pinned oracle venv (``.venv-oracle``, made by ``.ci/run`` from
tests/oracle-requirements.txt):

    .venv-oracle/bin/python tests/oracle/canonical.py dump FILE [-o OUT.json]
    .venv-oracle/bin/python tests/oracle/canonical.py compare EXPECTED.json ACTUAL.json \\
        [--ignore-path /tree/value/history ...]
    .venv-oracle/bin/python tests/oracle/canonical.py sidecars [--write] [DIR ...]
    .venv-oracle/bin/python tests/oracle/canonical.py states DIR ...

``sidecars`` re-derives every sidecar under the given folders (default: the reference files,
the python fixtures, the layouts, libasdf's fixtures and python asdf's own test files under the
test-data root, see tests/testdata.py) and compares each with
the committed one; with ``--write`` it rewrites them. Sidecars listed in a folder's
``HAND_WRITTEN.md`` (files python asdf cannot read, or reads against the standard) are skipped.
``compare`` needs only the standard library.

``states`` checks what the crash harness (asdf-cli/tests/crash.rs) left: each DIR holds
``old.asdf`` and ``new.asdf`` (a file before and after one operation) and ``state-*.asdf``, the
distinct files the target held after the operation was killed; every state must read, in
python asdf, as the old or the new file.
"""

from __future__ import annotations

import argparse
import datetime
import hashlib
import json
import math
import re
import sys
import warnings
from collections import OrderedDict
from pathlib import Path

FORMAT = "asdf-canonical/1"
NDARRAY_PREFIX = "tag:stsci.edu:asdf/core/ndarray-"
PINNED_ASDF = "6.0.0"

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
import testdata  # noqa: E402  (tests/testdata.py: the test-data locator)

sys.path.insert(0, str(Path(__file__).resolve().parent))
import blosc2_compressors  # noqa: E402  (test-only compressors for bsc2 and bls2 blocks)

blosc2_compressors.register()


# --------------------------------------------------------------------------------------------
# arrays: dtype text and the hash of the values
# --------------------------------------------------------------------------------------------

def dtype_text(dt):
    """numpy dtype -> its canonical JSON: ``"<f8"``, or a list of record fields."""
    if dt.fields is None:
        return dt.str
    fields = []
    for name in dt.names:
        field = dt.fields[name][0]
        if field.subdtype is None:
            fields.append([name, dtype_text(field)])
        else:
            inner, shape = field.subdtype
            fields.append([name, dtype_text(inner), list(shape)])
    return fields


def little_packed(dt):
    """The same datatype, every number little-endian, records without padding."""
    import numpy as np

    if dt.fields is not None:
        return np.dtype([(name, little_packed(dt.fields[name][0])) for name in dt.names])
    if dt.subdtype is not None:
        inner, shape = dt.subdtype
        return np.dtype((little_packed(inner), shape))
    if dt.kind in "bSV":  # bytes without a byte order
        return dt
    return dt.newbyteorder("<")


def normalise(values):
    """In place: every NaN becomes numpy's positive quiet NaN, every bool byte 0 or 1."""
    import numpy as np

    dt = values.dtype
    if dt.fields is not None:
        for name in dt.names:
            normalise(values[name])
    elif dt.kind == "c":
        normalise(values.real)
        normalise(values.imag)
    elif dt.kind == "f":
        # np.nan is the positive quiet NaN; cast to f2/f4 it stays positive and quiet
        values[np.isnan(values)] = np.nan
    elif dt.kind == "b":
        raw = values.view(np.uint8)
        raw[...] = raw != 0


def value_hash(array) -> str:
    """SHA-256 of the values in C order, little-endian, packed, NaN and bool normalised."""
    import numpy as np

    data = np.ma.getdata(array)
    packed = np.empty(data.shape, dtype=little_packed(data.dtype))
    packed[...] = data
    normalise(packed)
    return hashlib.sha256(packed.tobytes(order="C")).hexdigest()


# --------------------------------------------------------------------------------------------
# the tree
# --------------------------------------------------------------------------------------------

def float_value(x: float):
    if math.isnan(x):
        return {"$float": "nan"}
    if math.isinf(x):
        return {"$float": "-inf" if x < 0 else "inf"}
    return x


def timestamp_value(t):
    if not isinstance(t, datetime.datetime):
        return {"$timestamp": t.isoformat()}
    if t.tzinfo is not None:
        t = t.astimezone(datetime.timezone.utc).replace(tzinfo=None)
    text = t.strftime("%Y-%m-%dT%H:%M:%S")
    if t.microsecond:
        text += f".{t.microsecond:06d}".rstrip("0")
    return {"$timestamp": text + "Z"}


def json_text(value) -> str:
    return json.dumps(value, sort_keys=True, ensure_ascii=False)


class Canonical:
    """Converts the raw tree of one open file; ``on_path`` holds the containers being visited."""

    def __init__(self, af):
        self.af = af
        self.on_path: set[int] = set()

    def value(self, node):
        from asdf.tagged import Tagged

        if isinstance(node, Tagged):
            return self.tagged(node)
        if node is None or isinstance(node, bool):
            return node
        if isinstance(node, str):
            return str(node)
        if isinstance(node, int):
            return int(node)
        if isinstance(node, float):
            return float_value(node)
        if isinstance(node, (bytes, bytearray)):
            return {"$bytes": bytes(node).hex()}
        if isinstance(node, (datetime.date, datetime.datetime)):
            return timestamp_value(node)
        if isinstance(node, (dict, list, tuple, set, frozenset)):
            return self.inside(node, self.container)
        raise TypeError(f"no canonical form for {type(node).__name__}: {node!r}")

    def inside(self, node, convert):
        """``convert(node)`` with ``node`` marked as on the path; a node met again inside
        itself is ``{"$recursive": true}``."""
        key = id(node)
        if key in self.on_path:
            return {"$recursive": True}
        self.on_path.add(key)
        try:
            return convert(node)
        finally:
            self.on_path.discard(key)

    def tagged(self, node):
        tag = node._tag
        if tag.startswith(NDARRAY_PREFIX):
            return self.inside(node, self.ndarray)
        if isinstance(node, str):
            # a tagged scalar is not resolved: its text
            return {"$tag": tag, "value": str(node)}
        return self.inside(node, lambda n: {"$tag": tag, "value": self.container(n.data)})

    def container(self, node):
        if isinstance(node, OrderedDict):  # !!omap
            return {"$omap": [[self.value(k), self.value(v)] for k, v in node.items()]}
        if isinstance(node, dict):
            from asdf.tagged import Tagged

            if all(isinstance(k, str) and not isinstance(k, Tagged) for k in node):
                return {"$" + k if k.startswith("$") else k: self.value(v) for k, v in node.items()}
            pairs = [[self.value(k), self.value(v)] for k, v in node.items()]
            return {"$map": sorted(pairs, key=lambda kv: json_text(kv[0]))}
        if isinstance(node, (set, frozenset)):  # !!set
            return {"$set": sorted((self.value(x) for x in node), key=json_text)}
        return [self.value(x) for x in node]

    def ndarray(self, node):
        import numpy as np
        from asdf.yamlutil import tagged_tree_to_custom_tree

        array = tagged_tree_to_custom_tree(node, self.af)
        if hasattr(array, "_make_array"):  # asdf's lazy NDArrayType
            array = array._make_array()
        if not isinstance(array, np.ndarray):
            raise TypeError(f"an ndarray node gave {type(array).__name__}, not an array")
        data = np.ma.getdata(array)
        out = {
            "dtype": dtype_text(data.dtype),
            "shape": [int(n) for n in data.shape],
            "sha256": value_hash(data),
        }
        if "mask" in node.data:
            out["mask"] = self.value(node.data["mask"])
        return {"$ndarray": out}


HEADER_LINE = re.compile(rb"#(ASDF|ASDF_STANDARD) (\S+)")


def header(path: Path) -> dict:
    """The versions on the ``#ASDF x`` line and the ``#ASDF_STANDARD y`` comment line."""
    found = {"asdf": None, "standard": None}
    with open(path, "rb") as f:
        for line in f:
            if not line.startswith(b"#"):
                break
            m = HEADER_LINE.match(line.strip())
            if m:
                key = "asdf" if m.group(1) == b"ASDF" else "standard"
                found[key] = m.group(2).decode("utf-8", "replace")
    return found


def check_oracle_version() -> None:
    import asdf

    if asdf.__version__ != PINNED_ASDF:
        sys.exit(f"refusing to run: asdf {asdf.__version__} found, asdf=={PINNED_ASDF} is the oracle")


def document(path) -> dict:
    """The canonical document of one file, as python asdf reads it."""
    import asdf

    path = Path(path)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        with asdf.open(path, _force_raw_types=True, memmap=False, lazy_load=True) as af:
            tree = Canonical(af).value(af.tree)
    return {"format": FORMAT, "header": header(path), "tree": tree}


def to_text(doc: dict) -> str:
    return json.dumps(doc, sort_keys=True, ensure_ascii=False, indent=1, allow_nan=False) + "\n"


# --------------------------------------------------------------------------------------------
# comparing two documents (standard library only)
# --------------------------------------------------------------------------------------------

UNORDERED = ("$map", "$set")


def kind(v) -> str:
    if v is None:
        return "null"
    return {bool: "bool", int: "int", float: "float", str: "str", list: "list", dict: "object"}[type(v)]


def same_float(a: float, b: float) -> bool:
    return a == b and math.copysign(1.0, a) == math.copysign(1.0, b)


def normal_text(v) -> str:
    """Equal for values that compare equal (floats keep their sign; unordered parts sorted)."""
    if isinstance(v, float):
        return "f:" + repr(v)
    if isinstance(v, bool) or v is None or isinstance(v, (int, str)):
        return kind(v) + ":" + json.dumps(v, ensure_ascii=False)
    if isinstance(v, list):
        return "[" + ",".join(normal_text(x) for x in v) + "]"
    if len(v) == 1 and next(iter(v)) in UNORDERED and isinstance(next(iter(v.values())), list):
        name, items = next(iter(v.items()))
        return "{" + name + ":" + "|".join(sorted(normal_text(x) for x in items)) + "}"
    return "{" + ",".join(json.dumps(k) + ":" + normal_text(v[k]) for k in sorted(v)) + "}"


def differences(expected, actual, path: str = "", ignore=()) -> list[str]:
    """Every difference between two canonical documents, each with its JSON pointer."""
    if path in ignore:
        return []
    if kind(expected) != kind(actual):
        return [f"{path or '/'}: {kind(expected)} {short(expected)} != {kind(actual)} {short(actual)}"]
    if isinstance(expected, float):
        return [] if same_float(expected, actual) else [f"{path}: {expected!r} != {actual!r}"]
    if isinstance(expected, list):
        out = []
        if len(expected) != len(actual):
            out.append(f"{path}: {len(expected)} items != {len(actual)} items")
        for i, (a, b) in enumerate(zip(expected, actual)):
            out += differences(a, b, f"{path}/{i}", ignore)
        return out
    if isinstance(expected, dict):
        keys = set(expected)
        if len(keys) == 1 and keys == set(actual) and next(iter(keys)) in UNORDERED:
            name = next(iter(keys))
            a = sorted(normal_text(x) for x in expected[name])
            b = sorted(normal_text(x) for x in actual[name])
            return [] if a == b else [f"{path}/{name}: the items differ (compared unordered)"]
        out = []
        for k in sorted(keys | set(actual)):
            sub = f"{path}/{k.replace('~', '~0').replace('/', '~1')}"
            if sub in ignore:
                continue
            if k not in actual:
                out.append(f"{sub}: missing")
            elif k not in expected:
                out.append(f"{sub}: unexpected")
            else:
                out += differences(expected[k], actual[k], sub, ignore)
        return out
    return [] if expected == actual else [f"{path or '/'}: {short(expected)} != {short(actual)}"]


def short(v) -> str:
    text = json.dumps(v, ensure_ascii=False, sort_keys=True)
    return text if len(text) <= 80 else text[:77] + "..."


# --------------------------------------------------------------------------------------------
# sidecars
# --------------------------------------------------------------------------------------------

def hand_written(folder: Path) -> set[str]:
    """Names listed in the folder's HAND_WRITTEN.md (``* `NAME.asdf` ...`` lines)."""
    note = folder / "HAND_WRITTEN.md"
    if not note.is_file():
        return set()
    return set(re.findall(r"^\* `([^`]+\.asdf)`", note.read_text(encoding="utf-8"), re.M))


def sidecar_of(p: Path) -> Path:
    return p.with_name(p.name[: -len(".asdf")] + ".expect.json") if p.suffix == ".asdf" \
        else p.with_name(p.name + ".expect.json")


def sidecars(folders: list[Path], write: bool) -> int:
    check_oracle_version()
    checked, problems = 0, []
    for folder in folders:
        skip = hand_written(folder)
        for p in sorted(folder.rglob("*")):
            if p.suffix not in (".asdf", ".yaml") or p.name in skip:
                continue
            side = sidecar_of(p)
            if not write and not side.is_file():
                continue
            try:
                doc = document(p)
            except Exception as e:  # noqa: BLE001  (report every file, then fail)
                problems.append(f"{p}: python asdf cannot read it: {e}")
                continue
            checked += 1
            if write:
                side.write_text(to_text(doc), encoding="utf-8")
                continue
            found = differences(json.loads(side.read_text(encoding="utf-8")), doc)
            if found:
                problems.append(f"{side}: differs from a fresh dump:\n    " + "\n    ".join(found[:20]))
    for p in problems:
        print("FAIL " + p)
    verb = "written" if write else "checked"
    print(f"{checked} sidecar(s) {verb}, {len(problems)} problem(s)")
    return 1 if problems or checked == 0 else 0


def states(folders: list[Path]) -> int:
    """Every ``state-*.asdf`` of each folder reads as its ``old.asdf`` or its ``new.asdf``."""
    check_oracle_version()
    bad = 0
    total = 0
    for folder in folders:
        old = document(folder / "old.asdf")
        new = document(folder / "new.asdf")
        found = sorted(folder.glob("state-*.asdf"))
        if not found:
            print(f"{folder}: no states")
            bad += 1
        for state in found:
            total += 1
            try:
                doc = document(state)
            except Exception as e:  # noqa: BLE001 - any failure to read is the finding
                print(f"{state}: python asdf cannot read it: {type(e).__name__}: {e}")
                bad += 1
                continue
            # the header lines are the same in both versions; the tree decides
            if not differences(old["tree"], doc["tree"]):
                which = "old"
            elif not differences(new["tree"], doc["tree"]):
                which = "new"
            else:
                print(f"{state}: neither the old nor the new content")
                bad += 1
                continue
            print(f"{state.relative_to(folder.parent)}: {which}")
    print(f"{total} states in {len(folders)} folders, {bad} bad")
    return 1 if bad else 0


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = ap.add_subparsers(dest="command", required=True)
    d = sub.add_parser("dump", help="print a file's canonical JSON")
    d.add_argument("file")
    d.add_argument("-o", "--output")
    c = sub.add_parser("compare", help="compare two canonical documents; exit 1 if they differ")
    c.add_argument("expected")
    c.add_argument("actual")
    c.add_argument("--ignore-path", action="append", default=[])
    s = sub.add_parser("sidecars", help="check (or --write) the sidecars of the corpus folders")
    s.add_argument("folders", nargs="*")
    s.add_argument("--write", action="store_true")
    t = sub.add_parser("states", help="check the states a killed operation left (crash harness)")
    t.add_argument("folders", nargs="+")
    args = ap.parse_args(argv)

    if args.command == "dump":
        check_oracle_version()
        text = to_text(document(args.file))
        if args.output:
            Path(args.output).write_text(text, encoding="utf-8")
        else:
            sys.stdout.write(text)
        return 0
    if args.command == "states":
        return states([Path(f) for f in args.folders])
    if args.command == "compare":
        a = json.loads(Path(args.expected).read_text(encoding="utf-8"))
        b = json.loads(Path(args.actual).read_text(encoding="utf-8"))
        found = differences(a, b, ignore=tuple(args.ignore_path))
        for line in found:
            print(line)
        return 1 if found else 0
    folders = [Path(f) for f in args.folders] or [
        testdata.require_dir(testdata.REFERENCE_FILES),
        testdata.require_dir(testdata.FIXTURES),
        testdata.require_dir(testdata.LAYOUTS),
        testdata.require_dir(testdata.LIBASDF),
        testdata.require_dir(testdata.PYTHON_ASDF),
    ]
    return sidecars([f for f in folders if f is not None], args.write)


if __name__ == "__main__":
    sys.exit(main())
