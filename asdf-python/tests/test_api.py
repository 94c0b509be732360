"""The python API of asdf_rs: open, tree, lazy arrays and their views, write, convert,
info, search, validate, checksums, errors."""

from __future__ import annotations

import gc
import os
import re
import weakref

import asdf
import numpy as np
import pytest

import asdf_rs
from conftest import history_extension_entries, testdata


def test_round_trip_of_python_values(scratch):
    import datetime

    tree = {
        "name": "M31", "count": 3, "ratio": 0.25, "flag": False, "none": None,
        "z": 3 + 4j, "when": datetime.datetime(2021, 3, 4, 5, 6, 7, 8),
        "day": datetime.date(1999, 12, 31), "raw": b"\x00\x01\xff",
        "items": [1, [2, 3], {"k": "v"}], "tuple": (1, 2),
        "tagged": asdf_rs.Tagged("tag:example.org/thing-1.0.0", {"a": 1}),
        "np_scalar": np.float32(1.5), "np_int": np.int64(-7),
        "data": np.arange(12, dtype="<i4").reshape(3, 4),
    }
    out = scratch / "t.asdf"
    asdf_rs.write(out, tree, validate=False)
    with asdf_rs.open(out) as f:
        t = f.tree
        for k in ("name", "count", "ratio", "flag", "none", "z", "when", "day", "raw"):
            assert t[k] == tree[k] and type(t[k]) is type(tree[k]), k
        assert t["items"] == [1, [2, 3], {"k": "v"}]
        assert t["tuple"] == [1, 2]
        assert t["tagged"] == asdf_rs.Tagged("tag:example.org/thing-1.0.0", {"a": 1})
        assert t["tagged"].tag == "tag:example.org/thing-1.0.0" and t["tagged"]["a"] == 1
        assert t["np_scalar"] == 1.5 and t["np_int"] == -7
        a = t["data"]
        assert isinstance(a, asdf_rs.NDArray)
        assert a.shape == (3, 4) and a.ndim == 2 and a.dtype == np.dtype("<i4") and len(a) == 3
        assert a.path == "/data"
        np.testing.assert_array_equal(np.asarray(a), tree["data"])
        assert a[1, 2] == 6
        assert f["name"] == "M31" and "data" in f


def test_shared_objects_are_written_once_and_read_as_one(scratch):
    shared = {"x": 1}
    arr = np.arange(3.0)
    asdf_rs.write(scratch / "s.asdf", {"a": shared, "b": shared, "p": arr, "q": arr})
    with asdf_rs.open(scratch / "s.asdf") as f:
        assert f.tree["a"] is f.tree["b"]
        assert len(f.tree["p"].read()) == 3
    with asdf.open(scratch / "s.asdf") as af:
        assert len(af._blocks.blocks) == 1


def test_uncompressed_array_is_a_read_only_view_of_the_map_that_keeps_the_file(scratch):
    data = np.arange(1000, dtype=np.float64)
    out = scratch / "v.asdf"
    asdf_rs.write(out, {"d": data})
    f = asdf_rs.open(out)
    a = np.asarray(f.tree["d"])
    assert isinstance(a.base, asdf_rs.MappedData)
    assert not a.flags.writeable
    with pytest.raises(ValueError):
        a[0] = 1
    # the view stays valid after the file and its tree are gone
    probe = weakref.ref(a.base)
    f.close()
    del f
    gc.collect()
    assert probe() is not None
    np.testing.assert_array_equal(a, data)
    del a
    gc.collect()
    assert probe() is None


def test_without_memmap_and_compressed_arrays_are_owned_copies(scratch):
    data = np.arange(100, dtype=np.int16)
    asdf_rs.write(scratch / "c.asdf", {"d": data}, compression="zstd")
    for memmap in (True, False):
        with asdf_rs.open(scratch / "c.asdf", memmap=memmap) as f:
            a = f.tree["d"].read()
            assert a.flags.writeable
            assert not isinstance(a.base, asdf_rs.MappedData)
            np.testing.assert_array_equal(a, data)
    asdf_rs.write(scratch / "u.asdf", {"d": data})
    with asdf_rs.open(scratch / "u.asdf", memmap=False) as f:
        a = f.tree["d"].read()
        assert a.flags.writeable and not isinstance(a.base, asdf_rs.MappedData)
        np.testing.assert_array_equal(a, data)


def test_big_endian_records_and_strings_keep_the_file_datatype(scratch):
    tree = {
        "be": np.arange(5, dtype=">f8"),
        "rec": np.array([(1, b"ab"), (2, b"c")], dtype=[("id", ">i4"), ("s", "S2")]),
        "u": np.array(["é", "zz"]),
    }
    asdf_rs.write(scratch / "b.asdf", tree)
    with asdf_rs.open(scratch / "b.asdf") as f:
        for k, v in tree.items():
            a = f.tree[k].read()
            assert a.dtype == v.dtype and a.dtype.str == v.dtype.str, k
            np.testing.assert_array_equal(a, v)


def test_masked_arrays_round_trip(scratch):
    m = np.ma.array([1.0, 2.0, 3.0, 4.0], mask=[0, 1, 0, 1])
    asdf_rs.write(scratch / "m.asdf", {"m": m, "unmasked": np.ma.array([5, 6])})
    with asdf_rs.open(scratch / "m.asdf") as f:
        a = f.tree["m"].read()
        assert isinstance(a, np.ma.MaskedArray)
        np.testing.assert_array_equal(a.mask, m.mask)
        np.testing.assert_array_equal(a.data, m.data)
        assert not isinstance(f.tree["unmasked"].read(), np.ma.MaskedArray)
    with asdf.open(scratch / "m.asdf", lazy_load=False, memmap=False) as af:
        np.testing.assert_array_equal(af.tree["m"].mask, m.mask)


def test_inline_threshold_writes_small_arrays_as_lists(scratch):
    asdf_rs.write(scratch / "i.asdf", {"s": np.arange(3), "l": np.arange(100)},
                  inline_threshold=10)
    text = (scratch / "i.asdf").read_bytes()
    assert b"data: [0, 1, 2]" in text
    with asdf.open(scratch / "i.asdf") as af:
        assert len(af._blocks.blocks) == 1


def test_convert_recompresses_every_block(scratch):
    src = testdata.require("reference-files/1.6.0/basic.asdf")
    out = scratch / "z.asdf"
    asdf_rs.convert(src, out, compression="zlib")
    with asdf.open(out, validate_checksums=True) as af, asdf.open(src) as orig:
        assert {b.header["compression"] for b in af._blocks.blocks} == {b"zlib"}
        np.testing.assert_array_equal(af.tree["data"], orig.tree["data"])


def test_info_lists_keys_types_values_and_arrays():
    path = testdata.require("reference-files/1.6.0/basic.asdf")
    with asdf_rs.open(path) as f:
        text = f.info()
    lines = text.splitlines()
    assert lines[0] == "root (dict)"
    assert any(line.endswith("data (NDArray): shape=[8], dtype=int64") for line in lines), text
    assert any("name (str): asdf" in line for line in lines), text
    with asdf_rs.open(path) as f:
        short = f.info(max_rows=2)
    assert len(short.splitlines()) == 3 and "more" in short.splitlines()[-1]


def test_search_by_key_value_and_tag(scratch):
    asdf_rs.write(scratch / "s.asdf", {
        "meta": {"filter": "F200W", "exposure": 10.0},
        "cal": {"filter": "F444W"},
        "img": np.zeros(3),
    })
    with asdf_rs.open(scratch / "s.asdf") as f:
        found = f.search("^filter$")
        assert [p for p, _ in found] == ["/meta/filter", "/cal/filter"]
        assert [v for _, v in found] == ["F200W", "F444W"]
        assert [p for p, _ in f.search(value="F444W")] == ["/cal/filter"]
        arrays = f.search(tag="ndarray")
        assert [p for p, _ in arrays] == ["/img"]
        assert isinstance(arrays[0][1], asdf_rs.NDArray)
        assert f.search("nothing-like-this") == []


def test_validate_reports_schema_problems(scratch):
    bad = asdf_rs.Tagged("tag:stsci.edu:asdf/core/software-1.0.0", {"version": "1"})
    out = scratch / "bad.asdf"
    with pytest.raises(asdf_rs.ValidationError, match="name"):
        asdf_rs.write(out, {"sw": bad})
    assert not out.exists()
    asdf_rs.write(out, {"sw": bad}, validate=False)
    with asdf_rs.open(out) as f:
        with pytest.raises(asdf_rs.ValidationError, match="/sw"):
            f.validate()
    with pytest.raises(asdf_rs.ValidationError):
        asdf_rs.open(out, validate=True)
    with asdf_rs.open(testdata.require("reference-files/1.6.0/basic.asdf")) as f:
        f.validate()


def test_checksum_mismatch_is_reported(scratch):
    out = scratch / "k.asdf"
    asdf_rs.write(out, {"d": np.arange(64, dtype=np.uint8)})
    raw = bytearray(out.read_bytes())
    at = raw.index(bytes(range(64))) + 10  # element 10 of the block data
    raw[at] ^= 0xFF
    out.write_bytes(bytes(raw))
    with asdf_rs.open(out) as f:
        with pytest.raises(asdf_rs.ChecksumError, match="checksum mismatch"):
            f.verify_checksums()
    with asdf_rs.open(out, verify_checksums=True, memmap=False) as f:
        with pytest.raises(asdf_rs.ChecksumError):
            f.tree["d"].read()
    with asdf_rs.open(out, verify_checksums=False) as f:
        assert f.tree["d"].read()[10] == 10 ^ 0xFF


def test_errors_are_python_exceptions_with_one_line_messages(scratch):
    with pytest.raises(FileNotFoundError, match="no-such.asdf"):
        asdf_rs.open(scratch / "no-such.asdf")
    junk = scratch / "junk.asdf"
    junk.write_bytes(b"#ASDF 1.0.0\n%YAML 1.1\n--- {a: [1, 2\n")
    with pytest.raises(asdf_rs.AsdfError) as e:
        asdf_rs.open(junk)
    assert "\n" not in str(e.value) and str(e.value)
    with pytest.raises(ValueError, match="unknown compression"):
        asdf_rs.write(scratch / "x.asdf", {}, compression="gzip")
    with pytest.raises(TypeError, match="/a/b/1: cannot write a set"):
        asdf_rs.write(scratch / "x.asdf", {"a": {"b": [1, {2}]}})
    with pytest.raises(TypeError, match="no ASDF datatype"):
        asdf_rs.write(scratch / "x.asdf", {"o": np.array([object()])})
    with pytest.raises(TypeError, match="must be a dict"):
        asdf_rs.write(scratch / "x.asdf", [1, 2])
    loop = {}
    loop["self"] = loop
    with pytest.raises(TypeError, match="cycle"):
        asdf_rs.write(scratch / "x.asdf", loop)
    with pytest.raises(ValueError, match="mode"):
        asdf_rs.open(junk, mode="rw")
    assert not (scratch / "x.asdf").exists()


def test_closed_file_refuses_access_and_context_manager_closes(scratch):
    asdf_rs.write(scratch / "c.asdf", {"a": 1})
    with asdf_rs.open(scratch / "c.asdf") as f:
        assert f.version == "1.6.0"
        assert os.path.samefile(f.path, scratch / "c.asdf")
    with pytest.raises(ValueError, match="closed"):
        f.tree
    assert "closed" in repr(f)


def test_truncated_block_is_an_error_not_a_crash(scratch):
    out = scratch / "t.asdf"
    asdf_rs.write(out, {"d": np.arange(10000.0)})
    raw = out.read_bytes()
    block = raw.index(b"\xd3BLK")
    out.write_bytes(raw[: block + 200])
    # the layout's error naming the block the file lost, not any error
    with pytest.raises(asdf_rs.AsdfError) as e:
        with asdf_rs.open(out) as f:
            f.tree["d"].read()
    assert type(e.value) is asdf_rs.AsdfError
    # the error names the file (asdf-core's Error::File around the layout's error)
    assert re.fullmatch(
        rf"{re.escape(str(out))}: malformed file layout: block 0 at offset {block}: "
        rf"allocated space ends at \d+, "
        rf"past the end of the file \({block + 200} bytes\)", str(e.value)), str(e.value)


def test_written_file_gets_its_own_library_and_extensions_not_the_trees(scratch):
    tree = {"asdf_library": {"name": "other"},
            "history": {"extensions": [{"extension_uri": "x"}], "entries": []}, "a": 1}
    asdf_rs.write(scratch / "h.asdf", tree)
    assert tree["asdf_library"] == {"name": "other"}  # the caller's tree is not changed
    assert tree["history"]["extensions"] == [{"extension_uri": "x"}]
    with asdf_rs.open(scratch / "h.asdf") as f:
        assert f.tree["asdf_library"]["name"] == "asdf-rs"
        uris = [e["extension_uri"] for e in f.tree["history"]["extensions"]]
        assert "x" not in uris and f.tree["a"] == 1


def _zarr_fixtures():
    """(path, sidecar) of each asdf-zarr fixture (python asdf + asdf-zarr 0.0.4), the
    sidecar holding what zarr read: per tree path datatype, shape and bytes."""
    import json

    d = testdata.require_dir("asdf-zarr")
    if d is None:
        return []
    return [(f, json.loads(f.with_suffix(".zarr.json").read_text()))
            for f in sorted(d.glob("*.asdf"))]


def _at(tree, pointer):
    """The node of a python tree at a JSON pointer (`/group/list/0`)."""
    node = tree
    for seg in pointer.strip("/").split("/"):
        node = node[int(seg)] if isinstance(node, list) else node[seg]
    return node


def _from_sidecar(e):
    return np.frombuffer(bytes.fromhex(e["hex"]), dtype=np.dtype(e["dtype"])).reshape(e["shape"])


def test_asdf_zarr_arrays_are_ndarrays_of_the_tree():
    fixtures = _zarr_fixtures()
    assert len(fixtures) == 11
    zarr_arrays = 0
    for f, expect in fixtures:
        with asdf_rs.open(f) as af:
            for path, e in expect["arrays"].items():
                node = _at(af.tree, path)
                assert isinstance(node, asdf_rs.NDArray), (f.name, path, type(node))
                want = _from_sidecar(e)
                assert node.shape == want.shape and node.dtype == want.dtype, (f.name, path)
                got = np.asarray(node)
                assert got.dtype == want.dtype
                np.testing.assert_array_equal(got, want, err_msg=f"{f.name} {path}")
                for r in e["regions"]:
                    sel = r["selection"]
                    part = np.asarray(node.region(sel))
                    wr = np.frombuffer(bytes.fromhex(r["hex"]),
                                       dtype=want.dtype).reshape(r["shape"])
                    np.testing.assert_array_equal(part, wr, err_msg=f"{f.name} {path}[{sel}]")
            # the listings: info shows them as arrays, search finds them by tag
            zarr_paths = [p for p, v in af.search(tag="zarr-1")]
            zarr_arrays += len(zarr_paths)
            for p in zarr_paths:
                assert isinstance(_at(af.tree, p), asdf_rs.NDArray)
            info = af.info(max_rows=None)
            assert ".zarray" not in info and "chunk_block_map" not in info, info
            for p in zarr_paths:
                name = p.rsplit("/", 1)[-1]
                name = f"[{name}]" if name.isdigit() else name
                line = next(l for l in info.splitlines()
                            if re.search(rf"[─ ]{re.escape(name)} \(NDArray\)", l))
                want = _from_sidecar(expect["arrays"][p]) if p in expect["arrays"] else None
                if want is not None:
                    assert f"shape={list(want.shape)}" in line, line
            for path in expect["errors"]:
                with pytest.raises(asdf_rs.AsdfError):
                    np.asarray(_at(af.tree, path))
    # the fixtures hold 13 asdf-zarr arrays (mixed two; unsupported's two, refused)
    assert zarr_arrays == 13


def test_a_tagged_mapping_met_twice_is_written_once(scratch):
    """The same asdf_rs.Tagged mapping (or sequence) at two places is one node, anchored and
    aliased, as the same dict is; python asdf reads both places as one object. A tagged
    string is written at each place (PyYAML does not alias strings)."""
    import warnings

    thing = asdf_rs.Tagged("tag:example.org/thing-1.0.0", {"a": 1, "b": [1, 2]})
    seq = asdf_rs.Tagged("tag:example.org/seq-1.0.0", [1, 2, 3])
    name = asdf_rs.Tagged("tag:example.org/name-1.0.0", "n")
    tree = {"x": thing, "y": [thing, seq], "z": {"t": seq}, "n1": name, "n2": name,
            "other": asdf_rs.Tagged("tag:example.org/thing-1.0.0", {"a": 1, "b": [1, 2]})}
    out = scratch / "alias.asdf"
    asdf_rs.write(out, tree, validate=False)
    text = out.read_bytes().split(b"\n...\n")[0].decode()
    assert "\nx: &id001 !<tag:example.org/thing-1.0.0>\n" in text, text
    assert "\n- *id001\n" in text and "\n- &id002 !<tag:example.org/seq-1.0.0> [1, 2, 3]\n" in text
    assert "\n  t: *id002\n" in text
    assert text.count("&") == 2 and text.count("!<tag:example.org/name-1.0.0> n") == 2
    with asdf_rs.open(out) as f:
        assert f.tree["x"] == thing and f.tree["y"][0] == thing and f.tree["other"] == thing
        assert f.tree["z"]["t"] == seq and f.tree["n2"] == name
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", asdf.exceptions.AsdfConversionWarning)
        with asdf.open(out) as af:
            assert af["x"] is af["y"][0] and af["y"][1] is af["z"]["t"]
            assert af["other"] is not af["x"] and af["other"] == af["x"]


def test_write_records_the_extensions_given(scratch):
    """write(..., extensions=[...]): the entries in history.extensions before the writer's
    core entry, tagged and styled as python asdf writes them; a URI once (a later entry in
    the first one's place); an entry for the core extension gives way to the writer's; the
    tree's own history.extensions are replaced, its entries kept; python asdf reads it."""
    import warnings

    x = {"extension_uri": "asdf://example.com/x/extensions/x-1.0.0",
         "extension_class": "x.Old", "software": {"version": "1", "name": "x"}}
    y = asdf_rs.Tagged("tag:stsci.edu:asdf/core/extension_metadata-1.0.0", {
        "extension_uri": "asdf://example.com/y/extensions/y-1.0.0", "extension_class": "y.Y"})
    legacy = {"extension_class": "legacy.Extension"}
    x2 = dict(x, extension_class="x.New", supported_compression=["zstd"])
    core = {"extension_uri": "asdf://asdf-format.org/core/extensions/core-1.6.0",
            "extension_class": "not.the.Writer"}
    tree = {"a": 1, "history": {"entries": [{"description": "made"}],
                                "extensions": [{"extension_uri": "asdf://old/e-1.0.0",
                                                "extension_class": "Old"}]}}
    out = scratch / "ext.asdf"
    asdf_rs.write(out, tree, extensions=[x, y, legacy, x2, core])
    assert tree["history"]["extensions"][0]["extension_class"] == "Old"  # not changed
    entries = history_extension_entries(out)
    assert entries[:3] == [
        "  - !core/extension_metadata-1.0.0\n"
        "    extension_class: x.New\n"
        "    extension_uri: asdf://example.com/x/extensions/x-1.0.0\n"
        "    software: !core/software-1.0.0 {name: x, version: '1'}\n"
        "    supported_compression: [zstd]",
        "  - !core/extension_metadata-1.0.0 {extension_class: y.Y, extension_uri: "
        "'asdf://example.com/y/extensions/y-1.0.0'}",
        "  - !core/extension_metadata-1.0.0 {extension_class: legacy.Extension}",
    ]
    # the text python asdf writes for these entries
    from asdf.tags.core import ExtensionMetadata, Software

    theirs = scratch / "ext-py.asdf"
    asdf.AsdfFile({"history": {"extensions": [
        ExtensionMetadata(x2, software=Software(x2["software"])), ExtensionMetadata(y.value),
        ExtensionMetadata(legacy)]}}).write_to(theirs)
    assert history_extension_entries(theirs)[:3] == entries[:3]
    assert len(entries) == 4 and "name: asdf-rs" in entries[3]
    assert "extension_uri: asdf://asdf-format.org/core/extensions/core-1.6.0" in entries[3]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", asdf.exceptions.AsdfWarning)  # x, y not installed
        with asdf.open(out) as af:
            exts = af["history"]["extensions"]
            assert [e.extension_class for e in exts][:3] == ["x.New", "y.Y", "legacy.Extension"]
            assert af["history"]["entries"][0]["description"] == "made"
    # an empty list: the writer's core entry only; a list history becomes its entries
    asdf_rs.write(out, {"history": [{"description": "d"}]}, extensions=[])
    with asdf_rs.open(out) as f:
        assert len(f.tree["history"]["extensions"]) == 1
        assert f.tree["history"]["entries"][0]["description"] == "d"
    # ASDF Standard 1.1.0 has no extension history (as python asdf writes it)
    asdf_rs.write(out, {"a": 1}, extensions=[x], standard="1.1.0")
    assert b"extension" not in out.read_bytes()


def test_write_checks_the_extensions_given(scratch):
    x = {"extension_uri": "asdf://example.com/x-1.0.0", "extension_class": "X"}
    out = scratch / "bad.asdf"
    for bad, err, message in [
        ({"a": x}, TypeError, "extensions must be a list of extension metadata mappings, not dict$"),
        ([x, "x"], TypeError, r"extensions\[1\]: str is not an extension metadata mapping$"),
        ([x, {"extension_uri": None}], TypeError, r"extensions\[1\]: extension_uri must be a str, not NoneType$"),
        ([{"extension_class": 3}], ValueError, r"extensions\[0\]: an extension metadata mapping needs a str extension_uri"),
        ([asdf_rs.Tagged("tag:stsci.edu:asdf/core/software-1.0.0", {})], ValueError,
         r"extensions\[0\]: a value tagged tag:stsci.edu:asdf/core/software-1.0.0, not core/extension_metadata"),
        ([asdf_rs.Tagged("tag:stsci.edu:asdf/core/extension_metadata-1.0.0", [1])], TypeError,
         r"extensions\[0\]: a core/extension_metadata value that is a list, not a mapping"),
    ]:
        with pytest.raises(err, match=f"^{message}"):
            asdf_rs.write(out, {"a": 1}, extensions=bad)
    assert not out.exists()


def test_own_schemas_validate_on_open_and_write(scratch):
    """register_tag + set_schema_source: a tag's schema (and the schema it refers to) comes
    from the source when a validation first needs it, once; invalid trees are refused on write
    and on open, naming the path."""
    tag = "asdf://example.org/tags/exposure-1.0.0"
    schemas = {
        "asdf://example.org/schemas/exposure-1.0.0": (
            "id: asdf://example.org/schemas/exposure-1.0.0\n"
            "type: object\n"
            "properties:\n"
            "  seconds: {$ref: 'positive-1.0.0'}\n"
            "required: [seconds]\n"
        ),
        "asdf://example.org/schemas/positive-1.0.0": "type: number\nexclusiveMinimum: true\nminimum: 0\n",
    }
    asked = []

    def source(uri):
        asked.append(uri)
        return schemas.get(uri)

    asdf_rs.set_schema_source(source)
    try:
        asdf_rs.register_tag(tag, "asdf://example.org/schemas/exposure-1.0.0")
        good, bad = scratch / "good.asdf", scratch / "bad.asdf"
        asdf_rs.write(good, {"exp": asdf_rs.Tagged(tag, {"seconds": 12.5})})
        with pytest.raises(asdf_rs.ValidationError, match="/exp/seconds"):
            asdf_rs.write(bad, {"exp": asdf_rs.Tagged(tag, {"seconds": -1})})
        assert not bad.exists()
        asdf_rs.write(bad, {"exp": asdf_rs.Tagged(tag, {"seconds": -1})}, validate=False)
        asdf_rs.open(good, validate=True).close()
        with pytest.raises(asdf_rs.ValidationError, match="/exp/seconds"):
            asdf_rs.open(bad, validate=True)
        assert sorted(asked) == sorted(schemas)  # each once, though used four times
    finally:
        asdf_rs.set_schema_source(None)
