"""asdf_rs.write of trees holding the objects of python asdf's extensions (issue 32 item 3):
astropy Quantity, Time and units, gwcs WCS, roman_datamodels and stdatamodels nodes.

Each file asdf_rs writes is read back by python asdf 6.0.0 (``asdf.open``, and
``roman_datamodels.open`` / stdatamodels for the data models) to objects equal to those
written, and its YAML tree is compared with the one python asdf writes for the same tree
(``asdf.AsdfFile(tree).write_to``): the same tags at the same places, the same mappings,
sequences and scalars, equal arrays; ``history.extensions`` naming the same extensions.

Runs in the FITS oracle venv (tests/oracle-fits-requirements.txt + tests/roman-requirements.txt
+ asdf-python/tests/converters-requirements.txt), which has those packages.
"""

from __future__ import annotations

import re
import subprocess
import sys
import warnings
from pathlib import Path

import asdf
import astropy.units as u
import numpy as np
import pytest
from astropy.coordinates import ICRS
from astropy.modeling import models
from astropy.time import Time
from gwcs import coordinate_frames as cf
from gwcs import wcs as gwcs_wcs

import asdf_rs
from asdf_rs import _write_objects
from conftest import history_extension_entries

REPOSITORY = Path(__file__).resolve().parents[2]
ROMAN = REPOSITORY / "asdf-codegen" / "tests" / "roman"


# --- helpers -------------------------------------------------------------------------------


def python_asdf_bytes(tree, path):
    """The file python asdf writes for ``tree``."""
    asdf.AsdfFile(tree).write_to(path)
    return path


def raw_tree(path):
    """The file's YAML tree as asdf_rs reads it without converters: dicts, lists, scalars,
    Tagged values and arrays (as numpy arrays)."""

    def plain(x):
        if isinstance(x, asdf_rs.Tagged):
            return ("!" + x.tag, plain(x.value))
        if isinstance(x, dict):
            return {k: plain(v) for k, v in x.items()}
        if isinstance(x, list):
            return [plain(v) for v in x]
        if isinstance(x, asdf_rs.NDArray):
            return np.asarray(x.read())
        return x

    with asdf_rs.open(path) as f:
        return plain(f.tree)


def assert_same_yaml(ours, theirs, where="/"):
    """Same tags, mappings, sequences, scalars; arrays equal with the same datatype."""
    if isinstance(theirs, tuple):
        assert isinstance(ours, tuple), f"{where}: {theirs[0]} in python asdf's, untagged in ours"
        assert ours[0] == theirs[0], f"{where}: tag {ours[0]} against python asdf's {theirs[0]}"
        assert_same_yaml(ours[1], theirs[1], where)
    elif isinstance(theirs, dict):
        assert isinstance(ours, dict), f"{where}: {type(ours)} against a mapping"
        assert sorted(map(str, ours)) == sorted(map(str, theirs)), f"{where}: keys differ"
        for k in theirs:
            assert_same_yaml(ours[k], theirs[k], f"{where}{k}/")
    elif isinstance(theirs, list):
        assert isinstance(ours, list), f"{where}: {type(ours)} against a sequence"
        assert len(ours) == len(theirs), f"{where}: lengths differ"
        for i, (a, b) in enumerate(zip(ours, theirs)):
            assert_same_yaml(a, b, f"{where}{i}/")
    elif isinstance(theirs, np.ndarray):
        assert isinstance(ours, np.ndarray), f"{where}: {type(ours)} against an array"
        assert ours.dtype == theirs.dtype and ours.shape == theirs.shape, where
        np.testing.assert_array_equal(ours, theirs, err_msg=where)
    else:
        assert type(ours) is type(theirs) and ours == theirs, f"{where}: {ours!r} != {theirs!r}"


def untag(x):
    """A raw_tree value without its tag (asdf_rs reads core/extension_metadata and
    core/software as plain mappings)."""
    return x[1] if isinstance(x, tuple) else x


def extension_uris(tree):
    exts = untag(untag(tree["history"])["extensions"])
    return {untag(e)["extension_uri"] for e in exts}


CORE_EXTENSION = "asdf://asdf-format.org/core/extensions/core-"


def yaml_text(path):
    return open(path, "rb").read().split(b"\n...\n")[0].decode()


def extension_entries_yaml(path):
    """The YAML text of each ``history.extensions`` entry of the file, by extension URI (by
    class for a legacy entry)."""
    out = {}
    for text in history_extension_entries(path):
        # a legacy entry (no extension_uri) by its class
        uri = (re.search(r"extension_uri: (\S+)", text)
               or re.search(r"extension_class: (\S+)", text)).group(1)
        assert uri not in out, f"{uri} recorded twice"
        out[uri] = text
    return out


def assert_same_extension_history(ours_path, theirs_path):
    """The files' ``history.extensions`` entries are the same YAML text, but for the software
    of the core extension's (the writer: asdf-rs, against python asdf); python asdf orders
    the entries by its set of extensions used, which changes from one process to the next,
    so the order is not compared."""
    ours, theirs = extension_entries_yaml(ours_path), extension_entries_yaml(theirs_path)
    assert sorted(ours) == sorted(theirs)
    for uri, text in theirs.items():
        if uri.startswith(CORE_EXTENSION):
            cut = text.index("    software:")
            assert ours[uri][:cut] == text[:cut], (ours[uri], text)
            assert "name: asdf-rs" in ours[uri][cut:]
        else:
            assert ours[uri] == text, f"ours:\n{ours[uri]}\npython asdf's:\n{text}"
    return ours


def compare_with_python_asdf(tree, scratch, name="t"):
    """Writes ``tree`` with asdf_rs and with python asdf, and compares the YAML trees."""
    ours_path = scratch / f"{name}-rs.asdf"
    theirs_path = scratch / f"{name}-py.asdf"
    asdf_rs.write(ours_path, tree)
    python_asdf_bytes(tree, theirs_path)
    ours, theirs = raw_tree(ours_path), raw_tree(theirs_path)
    assert extension_uris(ours) == extension_uris(theirs)
    assert_same_extension_history(ours_path, theirs_path)
    for t in (ours, theirs):
        del t["asdf_library"], t["history"]
    assert_same_yaml(ours, theirs)
    assert open(ours_path, "rb").read().startswith(open(theirs_path, "rb").read()[:33])
    return ours_path


def read_back(path):
    """The tree python asdf reads from ``path`` (arrays loaded), with no warning."""
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        with asdf.open(path, lazy_load=False, memmap=False) as af:
            return dict(af.tree)


def simple_wcs():
    det = cf.Frame2D(name="detector", axes_names=("x", "y"), unit=(u.pix, u.pix))
    sky = cf.CelestialFrame(reference_frame=ICRS(), name="icrs", unit=(u.deg, u.deg))
    transform = (models.Shift(-10.5) & models.Shift(-13.2)) | (
        models.Scale(0.01) & models.Scale(0.04)
    ) | models.Pix2Sky_TAN() | models.RotateNative2Celestial(5.63, -72.5, 180)
    return gwcs_wcs.WCS([(det, transform), (sky, None)])


# --- astropy and gwcs objects ----------------------------------------------------------------


def test_quantities_are_written_as_python_asdf_writes_them(scratch):
    tree = {
        "array": np.arange(12.0).reshape(3, 4) * u.m / u.s,
        "int_array": np.arange(5, dtype=np.int32) * u.Jy,
        "scalar": 3.5 * u.erg,
        "dimensionless": np.float32(2.0) * u.dimensionless_unscaled,
        "unit": u.Unit("km / s"),
        "in_a_list": [1 * u.pc, 2 * u.AU],
    }
    path = compare_with_python_asdf(tree, scratch)
    back = read_back(path)
    for k in ("array", "int_array", "scalar", "dimensionless"):
        assert isinstance(back[k], u.Quantity), k
        assert back[k].unit == tree[k].unit and back[k].dtype == tree[k].dtype, k
        np.testing.assert_array_equal(back[k].value, tree[k].value)
    assert back["unit"] == u.km / u.s
    assert back["in_a_list"] == [1 * u.pc, 2 * u.AU]


def test_times_keep_their_formats_and_scales(scratch):
    tree = {
        "iso_tai": Time("2020-01-01T00:00:00.123", scale="tai"),
        "mjd_array": Time([50000.0, 50001.5, 50002.25], format="mjd", scale="tt"),
        "jd_utc": Time(2451545.0, format="jd", scale="utc"),
        "isot_array": Time(["2021-03-04T05:06:07", "2022-01-01T00:00:00"], format="isot"),
        "unix": Time(1.7e9, format="unix"),
    }
    path = compare_with_python_asdf(tree, scratch)
    back = read_back(path)
    for k, t in tree.items():
        b = back[k]
        assert isinstance(b, Time), k
        assert (b.format, b.scale, b.shape) == (t.format, t.scale, t.shape), k
        assert np.all(b == t), k


def test_gwcs_wcs_evaluates_equal(scratch):
    w = simple_wcs()
    tree = {"wcs": w, "meta": {"exposure": 12.5}}
    path = compare_with_python_asdf(tree, scratch)
    back = read_back(path)["wcs"]
    assert isinstance(back, gwcs_wcs.WCS)
    assert back.available_frames == w.available_frames
    x, y = np.meshgrid(np.arange(0.0, 40.0, 7.5), np.arange(0.0, 30.0, 6.5))
    np.testing.assert_array_equal(back(x, y), w(x, y))
    np.testing.assert_allclose(back.invert(*w(x, y)), (x, y), atol=1e-7)


def anchors_and_aliases(path):
    """Where the file's YAML puts an anchor (the line, up to the tag) and its aliases (the
    lines)."""
    text = yaml_text(path)
    anchored = re.findall(r"^ *[\w-]+: &id\d+ \S+|^ *- &id\d+ \S+", text, re.M)
    aliases = re.findall(r"^.*\*id\d+$", text, re.M)
    return anchored, aliases


def test_an_object_met_twice_is_written_once_as_python_asdf_writes_it(scratch):
    """The same Quantity at three places: one node, anchored, and two aliases, as python asdf
    writes it (its tree walk converts an object once); python asdf reads the three places as
    one object. Equal Quantities that are not the same object, and the units the Quantities
    share (tagged strings), are written at each place, as python asdf writes them."""
    q = np.arange(4.0) * u.m
    tree = {"a": q, "b": q, "c": {"same": q}, "other": np.arange(4.0) * u.m, "s": 2 * u.m}
    ours = compare_with_python_asdf(tree, scratch, "shared")
    theirs = scratch / "shared-py.asdf"
    assert anchors_and_aliases(ours) == anchors_and_aliases(theirs) == (
        ["a: &id001 !unit/quantity-1.3.0"],
        ["b: *id001", "  same: *id001"],
    )
    text = yaml_text(ours)
    # one block for q, one for other
    assert text.count("source:") == 2 and text.count("!unit/unit-1.0.0 m") == 3
    for path in (ours, theirs):
        back = read_back(path)
        assert back["a"] is back["b"] is back["c"]["same"], path
        assert back["other"] is not back["a"]
        assert isinstance(back["a"], u.Quantity) and back["a"].unit == u.m
        np.testing.assert_array_equal(back["a"], q)


def test_a_shared_wcs_and_roman_node_are_aliased_as_python_asdf_does(scratch):
    """A roman_datamodels product and a gwcs WCS met twice (the WCS also inside the
    product): anchors and aliases at the same places as in python asdf's file; python asdf
    and roman_datamodels read each as one object."""
    import roman_datamodels as rdm

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        src = rdm.open(ROMAN / "image.asdf")
    inst = src._instance
    w = simple_wcs()
    tree = {"a": inst, "b": inst, "roman_wcs": inst["meta"]["wcs"], "w1": w, "w2": [w]}
    ours, theirs = scratch / "alias-rs.asdf", scratch / "alias-py.asdf"
    asdf_rs.write(ours, tree)
    python_asdf_bytes(tree, theirs)
    assert_same_extension_history(ours, theirs)
    anchored, aliases = anchors_and_aliases(ours)
    assert sorted(anchored) == sorted(anchors_and_aliases(theirs)[0])
    assert len(anchored) == 3 and any("wfi_image" in a for a in anchored), anchored
    assert len(aliases) == len(anchors_and_aliases(theirs)[1]) == 3
    # the product's arrays once: as many blocks as python asdf's file
    assert yaml_text(ours).count("source:") == yaml_text(theirs).count("source:")
    for path in (ours, theirs):
        with warnings.catch_warnings():
            warnings.simplefilter("error")
            with asdf.open(path, lazy_load=False, memmap=False) as af:
                assert type(af["a"]) is type(inst) and af["a"] is af["b"], path
                assert af["roman_wcs"] is af["a"]["meta"]["wcs"], path
                assert isinstance(af["w1"], gwcs_wcs.WCS) and af["w1"] is af["w2"][0], path
                np.testing.assert_array_equal(af["w1"](3.0, 4.0), w(3.0, 4.0))
    src.close()


def test_history_records_the_extensions_used_as_python_asdf_does(scratch):
    path = scratch / "h.asdf"
    asdf_rs.write(path, {"q": 1 * u.m, "history": {"entries": [{"description": "made"}]}})
    tree = raw_tree(path)
    hist = tree["history"]
    exts = {untag(e)["extension_uri"]: untag(e) for e in hist["extensions"]}
    assert set(exts) == {
        "asdf://asdf-format.org/core/extensions/core-1.6.0",
        "asdf://asdf-format.org/astronomy/extensions/astronomy-1.2.0",
        "asdf://astropy.org/astropy/extensions/units-1.3.0",
    }
    units = exts["asdf://astropy.org/astropy/extensions/units-1.3.0"]
    assert units["extension_class"] == "asdf.extension._manifest.ManifestExtension"
    assert untag(units["software"]) == {"name": "asdf-astropy", "version": "0.11.0"}
    assert untag(hist["entries"][0])["description"] == "made"
    # tagged as python asdf tags them, the same YAML as python asdf's
    text = open(path, "rb").read().split(b"\n...\n")[0].decode()
    assert text.count("!core/extension_metadata-1.0.0") == 3
    theirs = python_asdf_bytes(
        {"q": 1 * u.m, "history": {"entries": [{"description": "made"}]}}, scratch / "h-py.asdf"
    )
    entries = assert_same_extension_history(path, theirs)
    assert entries["asdf://astropy.org/astropy/extensions/units-1.3.0"] == (
        "  - !core/extension_metadata-1.0.0\n"
        "    extension_class: asdf.extension._manifest.ManifestExtension\n"
        "    extension_uri: asdf://astropy.org/astropy/extensions/units-1.3.0\n"
        "    software: !core/software-1.0.0 {name: asdf-astropy, version: 0.11.0}"
    )
    # python asdf reads it without the "extension not installed" warning
    read_back(path)


def test_a_file_written_again_updates_its_extension_history_as_python_asdf_does(scratch):
    """A file python asdf wrote, read by python asdf, its history's units entry made older
    and a legacy entry (no extension_uri) and another tool's added, then written by both:
    the same entries (the used ones updated in place, the others kept, each URI once)."""
    first = python_asdf_bytes({"q": np.arange(3.0) * u.km}, scratch / "first.asdf")
    with asdf.open(first, lazy_load=False, memmap=False) as af:
        exts = af.tree["history"]["extensions"]
        units = next(e for e in exts if e["extension_uri"].endswith("units-1.3.0"))
        units["software"]["version"] = "0.0.1"
        exts.append(asdf.tags.core.ExtensionMetadata(
            extension_class="some.legacy.Extension",
            software=asdf.tags.core.Software(name="legacy", version="1.0"),
        ))
        exts.append(asdf.tags.core.ExtensionMetadata(
            extension_class="other.Extension",
            extension_uri="asdf://example.com/other/extensions/other-1.0.0",
            software=asdf.tags.core.Software(name="other", version="2.0"),
        ))
        af.tree["t"] = Time(60000.0, format="mjd")
        ours, theirs = scratch / "again-rs.asdf", scratch / "again-py.asdf"
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", asdf.exceptions.AsdfWarning)
            asdf_rs.write(ours, af.tree)
            af.write_to(theirs)
    entries = assert_same_extension_history(ours, theirs)
    assert "version: 0.0.1" not in entries["asdf://astropy.org/astropy/extensions/units-1.3.0"]
    assert sorted(entries) == [
        "asdf://asdf-format.org/astronomy/extensions/astronomy-1.2.0",
        "asdf://asdf-format.org/core/extensions/core-1.6.0",
        "asdf://astropy.org/astropy/extensions/units-1.3.0",
        "asdf://example.com/other/extensions/other-1.0.0",
        "some.legacy.Extension",
    ]
    for path in (ours, theirs):
        assert yaml_text(path).count("extension_class: some.legacy.Extension") == 1


def test_the_callers_extensions_are_recorded_with_the_used_ones(scratch):
    """asdf_rs.write(..., extensions=[...]) on a tree with converted objects: the caller's
    entries are recorded with the extensions used, each URI once (the one used, newer, in
    the place of the caller's)."""
    path = scratch / "x.asdf"
    mine = {
        "extension_class": "mine.Extension",
        "extension_uri": "asdf://example.com/mine/extensions/mine-1.0.0",
        "software": {"name": "mine", "version": "3.1"},
    }
    stale = {
        "extension_class": "asdf.extension._manifest.ManifestExtension",
        "extension_uri": "asdf://astropy.org/astropy/extensions/units-1.3.0",
        "software": {"name": "asdf-astropy", "version": "0.0.1"},
    }
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", asdf.exceptions.AsdfWarning)
        asdf_rs.write(path, {"q": 1 * u.m}, extensions=[stale, mine])
    entries = extension_entries_yaml(path)
    assert list(entries)[:2] == [stale["extension_uri"], mine["extension_uri"]]
    assert "version: 0.11.0" in entries[stale["extension_uri"]]
    assert entries[mine["extension_uri"]] == (
        "  - !core/extension_metadata-1.0.0\n"
        "    extension_class: mine.Extension\n"
        "    extension_uri: asdf://example.com/mine/extensions/mine-1.0.0\n"
        "    software: !core/software-1.0.0 {name: mine, version: '3.1'}"
    )
    assert len(entries) == 4  # with astronomy-1.2.0 and the core extension
    # the keyword is checked before python asdf sees it, as the native writer checks it
    for bad, err, message in [
        ("asdf://x", TypeError, r"^extensions must be a list of extension metadata mappings"),
        ([mine, 3], TypeError, r"^extensions\[1\]: int is not an extension metadata mapping$"),
        ([{"extension_uri": 7}], TypeError, r"^extensions\[0\]: extension_uri must be a str, not int$"),
        ([mine, {"software": {}}], ValueError, r"^extensions\[1\]: an extension metadata mapping"),
    ]:
        with pytest.raises(err, match=message):
            asdf_rs.write(scratch / "bad.asdf", {"q": 1 * u.m}, extensions=bad)
        with pytest.raises(err, match=message):
            asdf_rs.write(scratch / "bad.asdf", {"n": 1}, extensions=bad)
    assert not (scratch / "bad.asdf").exists()


def test_errors_name_the_tree_path_and_type(scratch):
    class Unknown:
        pass

    with pytest.raises(TypeError, match=r"/meta/things/1: cannot write a .*Unknown"):
        asdf_rs.write(scratch / "e.asdf", {"meta": {"things": [1 * u.m, Unknown()]}})
    assert not (scratch / "e.asdf").exists()

    # a converter that fails: its path, the object's type and the converter's message
    class Thing:
        pass

    class ThingConverter:
        tags = ["asdf://example.com/tags/thing-1.0.0"]
        types = [Thing]

        def to_yaml_tree(self, obj, tag, ctx):
            raise ValueError("boom")

        def from_yaml_tree(self, node, tag, ctx):
            return Thing()

    class ThingExtension:
        extension_uri = "asdf://example.com/extensions/thing-1.0.0"
        tags = ThingConverter.tags
        converters = [ThingConverter()]

    with asdf.config_context() as config:
        config.add_extension(ThingExtension())
        with pytest.raises(TypeError, match=r"^/when/0: converting a .*Thing to YAML failed: ValueError: boom"):
            asdf_rs.write(scratch / "e.asdf", {"when": [Thing()]})
    assert not (scratch / "e.asdf").exists()


def test_plain_trees_do_not_import_python_asdf(scratch):
    code = (
        "import sys, numpy as np, asdf_rs, asdf_rs._write_objects as w\n"
        f"asdf_rs.write({str(scratch / 'p.asdf')!r}, {{'a': np.arange(3), 'b': [1, 'x', None]}})\n"
        f"w.write({str(scratch / 'q.asdf')!r}, {{'a': np.arange(3), 'b': [1, 'x', None]}})\n"
        "assert 'asdf' not in sys.modules, 'python asdf imported'\n"
        "assert not w.needs_converters({'a': np.arange(3)})\n"
        "print('ok')\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert out.stdout.strip() == "ok", out.stderr


def test_what_needs_converters():
    assert not _write_objects.needs_converters(
        {"a": [1, 2.0, "s", None, True, 1j, b"x"], "b": np.zeros(3), "c": np.float32(1)}
    )
    assert _write_objects.needs_converters({"a": [{"b": 1 * u.m}]})
    assert _write_objects.needs_converters({"a": asdf_rs.Tagged("tag:x/y-1.0.0", {"u": u.m})})


# --- data models -----------------------------------------------------------------------------


def test_a_roman_product_round_trips_through_asdf_rs(scratch):
    import roman_datamodels as rdm

    src = rdm.open(ROMAN / "image.asdf")
    out = scratch / "image.asdf"
    asdf_rs.write(out, {"roman": src._instance})
    again = rdm.open(out)
    assert type(again) is type(src)
    again.validate()

    def same(a, b, where):
        if isinstance(a, Time):
            assert isinstance(b, Time) and (a.format, a.scale) == (b.format, b.scale), where
            assert np.all(a == b), where
        elif isinstance(a, gwcs_wcs.WCS):
            assert isinstance(b, gwcs_wcs.WCS), where
            np.testing.assert_array_equal(b(3.0, 4.0), a(3.0, 4.0))
        elif hasattr(a, "items"):
            assert type(a) is type(b), where
            assert sorted(a.keys()) == sorted(b.keys()), where
            for k in a.keys():
                same(a[k], b[k], f"{where}/{k}")
        elif hasattr(a, "shape") and hasattr(a, "dtype") and not isinstance(a, (str, bytes)):
            a, b = np.asarray(a), np.asarray(b)
            assert a.dtype == b.dtype and a.shape == b.shape, where
            np.testing.assert_array_equal(a, b, err_msg=where)
        else:
            assert type(a) is type(b) and a == b, f"{where}: {a!r} != {b!r}"

    same(src._instance, again._instance, "roman")
    assert np.asarray(again.data).sum() == np.asarray(src.data).sum() != 0
    # the YAML matches what python asdf writes for the same node
    theirs = scratch / "image-py.asdf"
    asdf.AsdfFile({"roman": src._instance}).write_to(theirs)
    ours_t, theirs_t = raw_tree(out), raw_tree(theirs)
    assert extension_uris(ours_t) == extension_uris(theirs_t)
    assert_same_extension_history(out, theirs)
    assert_same_yaml(ours_t["roman"], theirs_t["roman"], "/roman/")
    src.close()
    again.close()


def test_a_jwst_model_round_trips_through_asdf_rs(scratch):
    from stdatamodels.jwst import datamodels as dm

    m = dm.ImageModel(data=np.arange(48.0, dtype=np.float32).reshape(6, 8))
    m.err = np.full((6, 8), 0.5, dtype=np.float32)
    m.meta.instrument.name = "NIRCAM"
    m.meta.observation.date = "2024-05-06"
    m.meta.exposure.exposure_time = 107.4
    m.meta.wcs = simple_wcs()
    out = scratch / "jw.asdf"
    asdf_rs.write(out, m._instance)
    with dm.open(out) as again:
        assert isinstance(again, dm.ImageModel)
        again.validate()
        np.testing.assert_array_equal(again.data, m.data)
        np.testing.assert_array_equal(again.err, m.err)
        assert again.meta.instrument.name == "NIRCAM"
        assert again.meta.exposure.exposure_time == 107.4
        np.testing.assert_array_equal(again.meta.wcs(2.0, 5.0), m.meta.wcs(2.0, 5.0))
    theirs = scratch / "jw-py.asdf"
    asdf.AsdfFile(m._instance).write_to(theirs)
    ours_t, theirs_t = raw_tree(out), raw_tree(theirs)
    assert extension_uris(ours_t) == extension_uris(theirs_t)
    assert_same_extension_history(out, theirs)
    for t in (ours_t, theirs_t):
        del t["asdf_library"], t["history"]
    assert_same_yaml(ours_t, theirs_t)


def test_a_tree_asdf_rs_read_with_converters_is_written_back(scratch):
    """asdf_rs.open(converters=True) then asdf_rs.write: the objects and arrays of a Roman
    product go back into a file roman_datamodels opens, validates, and finds equal."""
    import roman_datamodels as rdm

    with asdf_rs.open(ROMAN / "image.asdf", converters=True) as af:
        out = scratch / "image.asdf"
        asdf_rs.write(out, af.tree)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", UserWarning)  # meta.filename is image.asdf
            src, again = rdm.open(ROMAN / "image.asdf"), rdm.open(out)
        again.validate()
        for k in ("data", "dq", "err", "var_poisson"):
            np.testing.assert_array_equal(np.asarray(again[k]), np.asarray(src[k]), err_msg=k)
        assert again.meta.exposure.start_time == src.meta.exposure.start_time
        assert again.meta.instrument.optical_element == src.meta.instrument.optical_element
        np.testing.assert_array_equal(again.meta.wcs(3.0, 4.0), src.meta.wcs(3.0, 4.0))
        # the source file's history.extensions are kept and updated, not duplicated
        exts = untag(raw_tree(out)["history"])["extensions"]
        uris = [untag(e)["extension_uri"] for e in exts]
        assert len(uris) == len(set(uris)) and any("roman" in x for x in uris)
        src.close()
        again.close()


def test_python_asdfs_schemas_refuse_an_invalid_tree_as_python_asdf_does(scratch):
    """A Roman product with a value its schema refuses: python asdf refuses to write it, so
    does asdf_rs.write (python asdf's schemas, the place named), unless validate=False."""
    import roman_datamodels as rdm

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        m = rdm.open(ROMAN / "image.asdf")
    m._instance["meta"]["instrument"]["optical_element"] = "NOT_A_FILTER"
    with pytest.raises(asdf.ValidationError):
        asdf.AsdfFile({"roman": m._instance}).write_to(scratch / "py.asdf")
    out = scratch / "bad.asdf"
    with pytest.raises(
        asdf_rs.ValidationError,
        match=r"python asdf's schemas at /meta/instrument/optical_element: 'NOT_A_FILTER' is not one of",
    ):
        asdf_rs.write(out, {"roman": m._instance})
    assert not out.exists()
    asdf_rs.write(out, {"roman": m._instance}, validate=False)
    with asdf.open(out, lazy_load=False) as af:
        assert af["roman"].meta.instrument.optical_element == "NOT_A_FILTER"
    m.close()
