"""asdf_rs.open(path, converters=True) against python asdf 6.0.0's asdf.open, with the
converters of asdf-astropy, gwcs, roman_datamodels and stdatamodels (issue 32, items 1, 2, 5).

Runs in the FITS oracle venv (tests/oracle-fits-requirements.txt, tests/roman-requirements.txt
--no-deps, and asdf-python/tests/converters-requirements.txt --no-deps for pytest) over the
Roman products of asdf-codegen/tests/roman (roman_datamodels 1.2.0), the JWST products of
asdf-python/tests/data/jwst (stdatamodels 6.0.0) and the files of
asdf-python/tests/data/converters (asdf-astropy 0.11.0, gwcs 1.0.3), each re-derived byte for
byte by its generate.py --check in CI.
"""

from __future__ import annotations

import subprocess
import re
import sys
import warnings
from collections.abc import Mapping
from pathlib import Path

import asdf
import asdf.lazy_nodes
import astropy.units as u
import gwcs
import numpy as np
import pytest
import roman_datamodels.datamodels as rdm
from asdf.exceptions import AsdfConversionWarning
from asdf.tagged import Tagged as AsdfTagged
from asdf.tags.core import AsdfObject
from asdf.tags.core.ndarray import NDArrayType
from astropy.coordinates import SkyCoord
from astropy.modeling import Model
from astropy.table import Table
from astropy.time import Time
from roman_datamodels.testing import assert_node_equal
from stdatamodels.jwst import datamodels as jwst

import asdf_rs
import asdf_rs.converters as conv

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent.parent
ROMAN = sorted((ROOT / "asdf-codegen" / "tests" / "roman").glob("*.asdf"))
JWST = sorted((HERE / "data" / "jwst").glob("*.asdf"))
OBJECTS = sorted((HERE / "data" / "converters").glob("*.asdf"))
ALL = ROMAN + JWST + OBJECTS
UNKNOWN = "tag:example.org:unknown/thing-1.0.0"
TIME = "tag:stsci.edu:asdf/time/time-1.2.0"
# what the tree holds before conversion
RAW = (
    asdf.tagged.TaggedDict, asdf.tagged.TaggedList, asdf.tagged.TaggedString,
    dict, list, str, int, float, bool, conv.NDArray,
)


def ids(paths):
    return [f"{p.parent.name}/{p.name}" for p in paths]


def test_the_files_are_there():
    assert [p.name for p in ROMAN] == [
        "dark.asdf", "flat.asdf", "gain.asdf", "image.asdf",
        "mask.asdf", "mosaic.asdf", "ramp.asdf", "raw.asdf",
    ]
    assert [p.name for p in JWST] == ["cube.asdf", "image.asdf", "multislit.asdf"]
    assert [p.name for p in OBJECTS] == ["astropy.asdf", "gwcs.asdf"]


def python_asdf(path, lazy_tree=False):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", AsdfConversionWarning)
        return asdf.open(path, lazy_tree=lazy_tree)


def ours(path, lazy_tree=False, **kw):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", AsdfConversionWarning)
        return asdf_rs.open(path, converters=True, lazy_tree=lazy_tree, **kw)


PIXELS = (np.array([0.0, 3.5, 10.0, 15.0]), np.array([0.0, 7.25, 2.0, 11.0]))


def wcs_values(w):
    n = w.pixel_n_dim
    pixels = PIXELS[:n] if n > 1 else (np.array([0.0, 3.5, 100.0, 250.5]),)
    out = w.forward_transform(*pixels)
    return [np.asarray(o) for o in (out if isinstance(out, tuple) else (out,))]


def same(a, b, path="", lazy=False):
    """Our object `a` is python asdf's `b`: the same types (our arrays where python asdf has
    its lazy arrays, our lazy containers where it has its), equal values."""
    where = path or "/"
    if isinstance(b, NDArrayType):
        assert type(a) is conv.NDArray, (where, type(a))
        assert isinstance(a.ndarray, asdf_rs.NDArray)
        assert a.shape == b.shape and a.dtype == b.dtype, where
        x, y = np.asarray(a), np.asarray(b)
        assert type(x) is type(y), (where, type(x), type(y))
        np.testing.assert_array_equal(x, y, err_msg=where)
        return
    if lazy and isinstance(b, asdf.lazy_nodes.AsdfOrderedDictNode):
        assert isinstance(a, conv._LazyOrderedDict), (where, type(a))
    elif lazy and isinstance(b, asdf.lazy_nodes.AsdfDictNode):
        assert isinstance(a, conv._LazyDict), (where, type(a))
    elif lazy and isinstance(b, asdf.lazy_nodes.AsdfListNode):
        assert isinstance(a, conv._LazyList), (where, type(a))
    else:
        assert type(a) is type(b), (where, type(a), type(b))
    if isinstance(b, AsdfTagged):
        assert a._tag == b._tag, where
    if isinstance(b, u.Quantity):
        assert a.unit == b.unit, where
        np.testing.assert_array_equal(a.value, b.value, err_msg=where)
        assert a.dtype == b.dtype, where
    elif isinstance(b, Time):
        assert (a.scale, a.format, a.shape) == (b.scale, b.format, b.shape), where
        assert np.all(a == b), where
        assert (a.location is None) == (b.location is None), where
        if b.location is not None:
            assert np.all(a.location == b.location), where
    elif isinstance(b, u.UnitBase):
        assert a == b, where
    elif isinstance(b, Table):
        assert a.colnames == b.colnames and dict(a.meta) == dict(b.meta), where
        for name in b.colnames:
            assert type(a[name]) is type(b[name]), (where, name)
            np.testing.assert_array_equal(np.asarray(a[name]), np.asarray(b[name]))
    elif isinstance(b, SkyCoord):
        assert a.frame.name == b.frame.name, where
        np.testing.assert_array_equal(a.ra.deg, b.ra.deg)
        np.testing.assert_array_equal(a.dec.deg, b.dec.deg)
    elif isinstance(b, gwcs.WCS):
        assert a.available_frames == b.available_frames, where
        for x, y in zip(wcs_values(a), wcs_values(b), strict=True):
            np.testing.assert_array_equal(x, y, err_msg=where)
            assert np.isfinite(x).any(), where
    elif isinstance(b, Model):
        assert a.param_names == b.param_names, where
        np.testing.assert_array_equal(a.parameters, b.parameters, err_msg=where)
        np.testing.assert_array_equal(a(1.25), b(1.25), err_msg=where)
    elif isinstance(b, Mapping):
        assert list(a.keys()) == list(b.keys()), where
        for k in b.keys():
            same(a[k], b[k], f"{path}/{k}", lazy)
    elif isinstance(b, (list, tuple, asdf.lazy_nodes.AsdfListNode)):
        assert len(a) == len(b), where
        for i, (x, y) in enumerate(zip(a, b)):
            same(x, y, f"{path}/{i}", lazy)
    elif isinstance(b, np.ndarray):
        np.testing.assert_array_equal(a, b, err_msg=where)
    else:
        assert a == b, (where, a, b)


@pytest.mark.parametrize("path", ALL, ids=ids(ALL))
def test_the_tree_is_python_asdfs(path):
    with python_asdf(path) as theirs, ours(path) as af:
        assert isinstance(af, asdf.AsdfFile)
        assert type(af.tree) is AsdfObject
        same(af.tree, theirs.tree)
        assert af.version_string == theirs.version_string


@pytest.mark.filterwarnings("ignore::asdf.exceptions.AsdfConversionWarning")
@pytest.mark.parametrize("path", ALL, ids=ids(ALL))
def test_the_lazy_tree_is_python_asdfs(path):
    with python_asdf(path, lazy_tree=True) as theirs, ours(path, lazy_tree=True) as af:
        # nothing converted before it is asked for (but the history's extensions, which
        # python asdf too converts on open to check them)
        assert isinstance(af.tree.data, conv._LazyDict)
        assert len(af._tagged_object_cache._cache) == len(theirs._tagged_object_cache._cache)
        raw = af.tree.data.data
        for key in raw.keys() - {"history"}:
            assert type(raw[key]) in RAW, (key, type(raw[key]))
        same(af.tree, theirs.tree, lazy=True)


def test_roman_nodes_are_converted_lazily_as_in_python_asdf():
    path = ROMAN[ids(ROMAN).index("roman/image.asdf")]
    with python_asdf(path, lazy_tree=True) as theirs, ours(path, lazy_tree=True) as af:
        node, their_node = af["roman"], theirs["roman"]
        assert type(node) is type(their_node)
        assert type(node).__module__.startswith("roman_datamodels")
        # roman_datamodels' converters are lazy: they keep the lazy container they are given
        assert isinstance(node._data, conv._LazyDict)
        assert isinstance(their_node._data, asdf.lazy_nodes.AsdfDictNode)
        assert_node_equal(node, their_node)
        # with lazy_tree=False, the converters get converted subtrees
    with ours(path, lazy_tree=False) as af:
        assert not isinstance(af["roman"]._data, asdf.lazy_nodes.AsdfDictNode)


def test_lazy_tree_follows_python_asdfs_config():
    path = OBJECTS[0]
    with asdf.config_context() as cfg:
        cfg.lazy_tree = True
        with ours(path, lazy_tree=None) as af:
            assert isinstance(af.tree.data, conv._LazyDict)
    with ours(path, lazy_tree=None) as af:
        assert not isinstance(af.tree, asdf.lazy_nodes.AsdfDictNode)
        assert isinstance(af["quantity"], u.Quantity)


def test_arrays_stay_unread_and_are_asdf_rs_arrays():
    path = ROMAN[ids(ROMAN).index("roman/image.asdf")]
    with ours(path) as af, python_asdf(path) as theirs:
        data = af["roman"].data
        assert isinstance(data, conv.NDArray) and isinstance(data, NDArrayType)
        assert data._array is None
        assert data.shape == (32, 32) and data.dtype == theirs["roman"].data.dtype
        assert data.path == "/roman/data"
        # a part read before the whole
        np.testing.assert_array_equal(data[3:5, 7], np.asarray(theirs["roman"].data)[3:5, 7])
        np.testing.assert_array_equal(data.region("3:5, ::4"), np.asarray(theirs["roman"].data)[3:5, ::4])
        assert data._array is None
        np.testing.assert_array_equal(np.asarray(data), np.asarray(theirs["roman"].data))
        assert data._array is not None
        # writable, as python asdf's (memmap=False)
        data[0, 0] = 5
        assert np.asarray(data)[0, 0] == 5
    jwst_image = JWST[ids(JWST).index("jwst/image.asdf")]
    with ours(jwst_image) as af, ours(jwst_image, memmap=True) as mapped:
        assert np.asarray(af["data"]).flags.writeable
        np.testing.assert_array_equal(np.asarray(af["data"]), np.asarray(mapped["data"]))


def test_quantities_times_units_and_tables_are_astropys():
    with ours(OBJECTS[0]) as af:
        q = af["quantity_array"]
        assert type(q) is u.Quantity and q.unit == u.s and q.shape == (20, 30)
        np.testing.assert_array_equal(q.value, (np.arange(600.0) * 0.25).reshape(20, 30))
        assert af["shared"]["first"] is af["shared"]["second"]
        assert af["time"] == Time("2026-01-02T03:04:05.678", scale="utc")
        assert af["units"][1] == u.erg / (u.s * u.cm**2 * u.AA)
        assert list(af["table"]["c"]) == list("vwxyz")
        assert af["complex"] == 1.5 - 2.25j
        assert isinstance(af["model"], Model) and af["model"](1.0) == 5.0


def test_a_tag_without_converter_stays_tagged_with_python_asdfs_warning():
    with pytest.warns(AsdfConversionWarning, match=f"{UNKNOWN} is not recognized.*at /unknown"):
        af = asdf_rs.open(OBJECTS[0], converters=True)
    with af, python_asdf(OBJECTS[0]) as theirs:
        assert isinstance(af["unknown"], asdf.tagged.TaggedDict)
        assert af["unknown"]._tag == UNKNOWN and af["unknown"] == theirs["unknown"]
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        asdf_rs.open(OBJECTS[0], converters=True, ignore_unrecognized_tag=True).close()


@pytest.fixture
def broken(tmp_path):
    """A time no astropy Time is, at /meta/broken/1 (and at /meta/a~1b~0c/0, a key that
    JSON pointers escape)."""
    path = tmp_path / "broken.asdf"
    time = asdf_rs.Tagged(TIME, "not a time at all")
    other = asdf_rs.Tagged(TIME, "not a time either")
    asdf_rs.write(path, {"meta": {"broken": [1, time], "a/b~c": [other]}}, validate=False)
    return path


def test_a_failing_converter_is_named_by_path_and_tag(broken):
    # python asdf's default: its warning, the node left tagged
    with pytest.warns(AsdfConversionWarning) as caught:
        af = asdf_rs.open(broken, converters=True)
    messages = [str(w.message) for w in caught]
    assert len(messages) == 2
    for where in ("/meta/broken/1", "/meta/a~1b~0c/0"):
        pattern = f"(?s)A node failed to convert with: .*at {where}, tag {TIME}"
        assert any(re.match(pattern, m) for m in messages), messages
    with af, python_asdf(broken) as theirs:
        assert isinstance(af["meta"]["broken"][1], asdf.tagged.TaggedString)
        assert af["meta"]["broken"][1] == theirs["meta"]["broken"][1]
        assert af["meta"]["a/b~c"][0] == theirs["meta"]["a/b~c"][0]
    with asdf.config_context() as cfg:
        cfg.warn_on_failed_conversion = False
        with pytest.raises(conv.ConversionError) as err:
            asdf_rs.open(broken, converters=True)
        assert (err.value.path, err.value.tag) == ("/meta/broken/1", TIME)
        assert err.value.path in str(err.value) and err.value.tag in str(err.value)
        assert isinstance(err.value, asdf_rs.AsdfError) and err.value.__cause__ is not None
        # lazily: the same, when the node is reached
        af = asdf_rs.open(broken, converters=True, lazy_tree=True)
        with pytest.raises(conv.ConversionError, match="/meta/broken/1"):
            af["meta"]["broken"][1]
        with pytest.raises(conv.ConversionError) as err:
            af["meta"]["a/b~c"][0]
        assert err.value.path == "/meta/a~1b~0c/0"


@pytest.mark.parametrize("path", ROMAN, ids=ids(ROMAN))
def test_roman_datamodels_opens_ours(path):
    with rdm.open(path) as theirs, rdm.open(ours(path, lazy_tree=True)) as model:
        assert type(model) is type(theirs)
        assert_node_equal(model._instance, theirs._instance)
        flat, their_flat = model.to_flat_dict(), theirs.to_flat_dict()
        assert flat.keys() == their_flat.keys()
        for k, v in their_flat.items():
            if isinstance(v, gwcs.WCS):
                for x, y in zip(wcs_values(flat[k]), wcs_values(v), strict=True):
                    np.testing.assert_array_equal(x, y, err_msg=k)
            else:
                np.testing.assert_array_equal(np.asarray(flat[k]), np.asarray(v), err_msg=k)
        model.validate()
        # the first array of the product, read through the model
        key = next(k for k, v in theirs._instance.items() if isinstance(v, NDArrayType))
        assert isinstance(getattr(model, key), conv.NDArray)
        np.testing.assert_array_equal(np.asarray(getattr(model, key)), np.asarray(getattr(theirs, key)))
        # a copy is python asdf's: numpy arrays, a plain asdf.AsdfFile
        copied, their_copy = model.copy(), theirs.copy()
        assert type(copied._asdf) is type(their_copy._asdf) is asdf.AsdfFile
        assert type(getattr(copied, key)) is type(getattr(their_copy, key)) is np.ndarray
        assert_node_equal(copied._instance, their_copy._instance)


@pytest.mark.parametrize("path", JWST, ids=ids(JWST))
def test_stdatamodels_opens_ours(path):
    with jwst.open(path) as theirs:
        cls = type(theirs)
        with cls(ours(path)) as model:
            assert model.meta.model_type == theirs.meta.model_type
            flat, their_flat = model.to_flat_dict(), theirs.to_flat_dict()
            assert flat.keys() == their_flat.keys()
            for k, v in their_flat.items():
                if isinstance(v, gwcs.WCS):
                    for x, y in zip(wcs_values(flat[k]), wcs_values(v), strict=True):
                        np.testing.assert_array_equal(x, y, err_msg=k)
                else:
                    np.testing.assert_array_equal(np.asarray(flat[k]), np.asarray(v), err_msg=k)
            model.validate()
            if cls is jwst.MultiSlitModel:
                assert len(model.slits) == 2
                np.testing.assert_array_equal(model.slits[1].data, theirs.slits[1].data)
            else:
                np.testing.assert_array_equal(model.data, theirs.data)


def test_the_file_is_a_python_asdf_file():
    path = JWST[ids(JWST).index("jwst/image.asdf")]
    with python_asdf(path) as theirs:
        with ours(path) as af:
            assert af.keys() == theirs.keys() and "meta" in af
            assert af.search("data").paths == theirs.search("data").paths
            assert af.search(type_=u.Quantity).paths == theirs.search(type_=u.Quantity).paths
            af.validate()
            af["asdf_library"]["name"] = 7
            with pytest.raises(asdf.ValidationError):
                af.validate()
            data = af["data"]
        assert af.rs is not None
        with pytest.raises(OSError):
            af.tree
        # arrays taken before close stay readable
        np.testing.assert_array_equal(np.asarray(data), np.asarray(theirs["data"]))


def test_info_is_python_asdfs(capsys):
    path = OBJECTS[0]
    with python_asdf(path) as theirs:
        theirs.info(max_rows=None)
    theirs_out = capsys.readouterr().out
    with ours(path) as af:
        af.info(max_rows=None)
    ours_out = capsys.readouterr().out
    # our arrays are asdf_rs.converters.NDArray where python asdf's are NDArrayType
    assert ours_out.replace("(NDArray)", "(NDArrayType)") == theirs_out
    assert "Quantity" in ours_out and "Time" in ours_out


def test_plain_open_and_write_import_nothing_of_python_asdf(tmp_path):
    code = (
        "import sys, asdf_rs, numpy as np\n"
        f"f = asdf_rs.open({str(OBJECTS[0])!r})\n"
        "t = f.tree\n"
        f"asdf_rs.write({str(tmp_path / 'plain.asdf')!r}, {{'a': np.arange(3), 'b': {{'c': [1.5]}}}})\n"
        "assert isinstance(t['quantity'], asdf_rs.Tagged), t['quantity']\n"
        "bad = sorted(m for m in sys.modules if m.split('.')[0] in "
        "('asdf', 'astropy', 'gwcs', 'yaml', 'roman_datamodels', 'stdatamodels'))\n"
        "print(len(bad), bad[:5])\n"
        "f2 = asdf_rs.open(" + repr(str(OBJECTS[0])) + ", converters=True)\n"
        "print('asdf' in sys.modules, type(f2['quantity']).__name__)\n"
    )
    out = subprocess.run([sys.executable, "-W", "ignore", "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.splitlines() == ["0 []", "True Quantity"], out


def test_converter_options_need_converters():
    with pytest.raises(TypeError, match="lazy_tree"):
        asdf_rs.open(OBJECTS[0], lazy_tree=True)


YAML_TAGS = (
    b"#ASDF 1.0.0\n#ASDF_STANDARD 1.5.0\n%YAML 1.1\n%TAG ! tag:stsci.edu:asdf/\n"
    b"--- !core/asdf-1.1.0\n"
    b"a: !!str 5\nb: !!float 1\nc: !!binary aGVsbG8=\nd: !!timestamp 2001-12-14\n"
    b"e: !!omap [{x: 1}, {y: 2}]\nf: !!set {p, q}\ng: !!pairs [{k: 1}, {k: 2}]\n"
    b"h: !core/constant-1.0.0 3\n...\n"
)


@pytest.mark.parametrize("lazy_tree", [False, True])
def test_yamls_own_tags_are_python_asdfs(tmp_path, lazy_tree):
    path = tmp_path / "yaml.asdf"
    path.write_bytes(YAML_TAGS)
    with warnings.catch_warnings():
        warnings.simplefilter("error", AsdfConversionWarning)
        af = asdf_rs.open(path, converters=True, lazy_tree=lazy_tree)
        with af, asdf.open(path, lazy_tree=lazy_tree) as theirs:
            for key in "abcdefg":
                same(af[key], theirs[key], f"/{key}", lazy=lazy_tree)
            assert type(af["h"]) is type(theirs["h"]) and af["h"].value == theirs["h"].value == "3"


def test_models_from_ours_save_as_python_asdfs(tmp_path):
    """A model made from our file is saved by roman_datamodels / stdatamodels (python asdf's
    writer, our arrays through its ndarray converter) and reads back with its values."""
    path = ROMAN[ids(ROMAN).index("roman/image.asdf")]
    with rdm.open(ours(path, lazy_tree=True)) as model, rdm.open(path) as theirs:
        model.data[0, 0] = 42
        model.save(tmp_path / "roman.asdf")
        with rdm.open(tmp_path / "roman.asdf") as back:
            assert type(back) is type(theirs) and back.data[0, 0] == 42
            np.testing.assert_array_equal(back.data[1:], theirs.data[1:])
            np.testing.assert_array_equal(back.dq, theirs.dq)
            assert_node_equal(back.meta.exposure, theirs.meta.exposure)
    path = JWST[ids(JWST).index("jwst/image.asdf")]
    with jwst.ImageModel(ours(path)) as model, jwst.open(path) as theirs:
        model.save(tmp_path / "jwst.asdf")
        with jwst.open(tmp_path / "jwst.asdf") as back:
            assert type(back) is jwst.ImageModel
            np.testing.assert_array_equal(back.data, theirs.data)
            np.testing.assert_array_equal(back.meta.wcs(*PIXELS), theirs.meta.wcs(*PIXELS))
            assert back.meta.instrument.name == theirs.meta.instrument.name == "NIRCAM"


@pytest.mark.filterwarnings("ignore::asdf.exceptions.AsdfConversionWarning")
@pytest.mark.parametrize("path", ALL, ids=ids(ALL))
def test_validation_takes_the_extensions_schemas_and_passes_valid_files(path):
    # validate=True registers the installed extensions' schemas with asdf-rs first
    with asdf_rs.open(path, converters=True, validate=True) as af:
        assert af.tree is not None
    assert any(s.startswith("asdf://stsci.edu/datamodels/roman/schemas/") for _, s in conv._registered_tags)


@pytest.mark.parametrize(
    "edit, where",
    [
        # an enum of rad's (not a schema of the ASDF Standard's)
        ((b"optical_element: F062", b"optical_element: XXXX"), "/roman/meta/instrument/optical_element"),
        # a required property of rad's exposure schema
        ((b"effective_exposure_time: ", b"effective_exposure_tixx: "), "/roman/meta/exposure"),
    ],
)
def test_validation_refuses_what_rads_schemas_refuse(tmp_path, edit, where):
    src = next(p for p in ROMAN if p.name == "image.asdf")
    data = src.read_bytes()
    assert edit[0] in data and len(edit[0]) == len(edit[1])
    bad = tmp_path / "bad.asdf"
    bad.write_bytes(data.replace(edit[0], edit[1], 1))
    # python asdf refuses it too
    with asdf.config_context() as cfg:
        cfg.validate_on_read = True
        with pytest.raises(asdf.exceptions.ValidationError):
            asdf.open(bad).close()
    with pytest.raises(asdf_rs.ValidationError, match=where):
        asdf_rs.open(bad, converters=True, validate=True)
    # without validation it opens
    asdf_rs.open(bad, converters=True, validate=False).close()


def test_each_unit_string_is_parsed_once_per_file(tmp_path, monkeypatch):
    """A file of many Quantities repeats a few unit strings: each is converted once per file
    (astropy units are immutable), and every Quantity equals python asdf's."""
    from asdf_astropy.converters.unit.unit import UnitConverter

    path = tmp_path / "quantities.asdf"
    units = [u.km / u.s, u.erg / u.cm**2, u.km / u.s, u.AA, u.km / u.s, u.erg / u.cm**2]
    with asdf.AsdfFile({"q": [np.arange(3.0) * unit for unit in units]}) as af:
        af.write_to(path)
    calls = []
    real = UnitConverter.from_yaml_tree

    def counted(self, node, tag, ctx):
        calls.append(node)
        return real(self, node, tag, ctx)

    monkeypatch.setattr(UnitConverter, "from_yaml_tree", counted)
    with python_asdf(path) as theirs:
        expected = [(q.unit, q.value) for q in theirs["q"]]
    assert len(calls) == len(units)  # python asdf converts every node
    for lazy in (False, True):
        calls.clear()
        with ours(path, lazy_tree=lazy) as af:
            got = [(q.unit, q.value) for q in af["q"]]
            assert all(type(q) is u.Quantity for q in af["q"])
        assert sorted(map(str, calls)) == ["Angstrom", "erg.cm**-2", "km.s**-1"], calls
        assert [g[0] for g in got] == [e[0] for e in expected]
        for g, e in zip(got, expected):
            np.testing.assert_array_equal(g[1], e[1])


def test_validation_reads_only_the_schemas_a_file_needs(tmp_path):
    """validate=True takes the extensions' schemas from python asdf's resource manager when a
    file first needs them (a fresh process: the source is process-wide): a Roman image asks
    for rad's schemas, not stdatamodels' or the other Roman products' ones, and a second open
    asks for nothing."""
    image = next(p for p in ROMAN if p.name == "image.asdf")
    code = (
        "import asdf, asdf_rs, asdf_rs.converters as conv\n"
        "asked = []\n"
        "real = conv._schema_text\n"
        "conv._schema_text = lambda uri: asked.append(uri) or real(uri)\n"
        f"asdf_rs.open({str(image)!r}, converters=True, validate=True).close()\n"
        "first = list(asked)\n"
        f"asdf_rs.open({str(image)!r}, converters=True, validate=True).close()\n"
        "print(len(first), len(asked) - len(first))\n"
        "print(sum(u.startswith('asdf://stsci.edu/datamodels/roman/') for u in first))\n"
        "print(sum('jwst' in u or 'stdatamodels' in u for u in first))\n"
        "print(sum(1 for u in first if '/schemas/wfi_image-' in u))\n"
    )
    # (the wrapper is in place before the first validated open, which sets the source)
    out = subprocess.run([sys.executable, "-W", "ignore", "-c", code], capture_output=True, text=True, check=True)
    first, again, roman, jwst_like, image_schema = map(int, out.stdout.split())
    assert 10 < first < 200, out.stdout
    assert again == 0 and jwst_like == 0 and roman >= 10 and image_schema == 1, out.stdout
