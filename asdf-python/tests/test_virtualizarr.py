"""asdf_rs.virtualizarr.AsdfParser in VirtualiZarr 2.x: virtual datasets of files python asdf
wrote with each codec (and asdftool's Blosc2 ones) load through xarray to python asdf's
values; the tree's scalars are attributes, nested mappings groups; several files combine
with xarray's concat and combine_nested, and written out as kerchunk references read back
the same. Needs the packages of tests/oracle-dask-requirements.txt (.ci/run's .venv-dask)."""

from __future__ import annotations

import os
import subprocess
import warnings
from pathlib import Path

import asdf
import asdf_compression  # noqa: F401  (registers zstd, lz4f, blsc with python asdf)
import fsspec
import numpy as np
import pytest
import virtualizarr
import xarray as xr
import zarr
from obspec_utils.registry import ObjectStoreRegistry
from obstore.store import LocalStore

from asdf_rs.virtualizarr import AsdfParser
from conftest import REPOSITORY, testdata

CODECS = [None, "zlib", "bzp2", "lz4", "zstd", "lz4f", "blsc"]
ARRAYS = ("f8", "f4_be", "i2", "u1", "big", "masked", "odd")

pytestmark = pytest.mark.filterwarnings("ignore:Numcodecs codecs are not in the Zarr version 3")


def _tree(seed=3, shift=0.0):
    rng = np.random.default_rng(seed)
    base = rng.standard_normal((120, 30)) + shift
    return {
        "f8": base,
        "f4_be": base[:50].astype(">f4"),
        "i2": (base * 1000).astype("<i2"),
        "u1": np.arange(200, dtype=np.uint8),
        "big": np.arange(600_000, dtype="<f8") + shift,  # two lz4 sub-blocks
        "masked": np.ma.masked_array(base[:20], mask=base[:20] > 1.0),
        "odd": np.arange(1009 * 3, dtype="<i4").reshape(1009, 3),  # a prime row count
        "meta": {"exposure": 12.5, "filter": "F150W", "n": 3, "flags": [1, 2],
                 "cal": {"flat": base[:4, :5].copy(), "version": "1.2"}},
    }


@pytest.fixture(scope="module")
def files(tmp_path_factory):
    d = tmp_path_factory.mktemp("vz")
    out = {}
    for label in CODECS:
        p = d / f"{label or 'none'}.asdf"
        asdf.AsdfFile(_tree()).write_to(p, all_array_compression=label)
        out[label] = p
    asdftool = Path(os.environ.get("ASDFTOOL", REPOSITORY / "target" / "debug" / "asdftool"))
    assert asdftool.exists(), f"{asdftool} is missing: `cargo build -p asdfrs-cli` (or set ASDFTOOL)"
    for label in ("bls2", "bsc2"):
        p = d / f"{label}.asdf"
        subprocess.run([asdftool, "defragment", out[None], "-o", p, "-c", label],
                       check=True, capture_output=True)
        out[label] = p
    return out


@pytest.fixture(scope="module")
def registry():
    return ObjectStoreRegistry({"file://": LocalStore()})


def _url(p):
    return Path(p).resolve().as_uri()


def _want(path):
    with asdf.open(path, lazy_load=False, memmap=False) as af:
        return {k: (np.ma.array(af[k], copy=True) if isinstance(af[k], np.ma.MaskedArray)
                    else np.array(af[k], copy=True)) for k in ARRAYS} | {
            "flat": np.array(af["meta"]["cal"]["flat"])}


@pytest.mark.parametrize("label", CODECS + ["bls2", "bsc2"])
def test_loads_python_asdf_values_for_each_codec(files, registry, label):
    path = files[label]
    want = _want(files[None] if label in ("bls2", "bsc2") else path)
    store = AsdfParser()(_url(path), registry)
    ds = xr.open_zarr(store, zarr_format=3, consolidated=False)
    for name in ARRAYS:
        w = want[name]
        np.testing.assert_array_equal(ds[name].values, np.ma.getdata(w), err_msg=f"{label} {name}")
        assert ds[name].dtype == w.dtype.newbyteorder("="), name
    np.testing.assert_array_equal(ds["masked_mask"].values, want["masked"].mask)
    cal = xr.open_zarr(AsdfParser(group="meta/cal")(_url(path), registry), zarr_format=3,
                       consolidated=False)
    np.testing.assert_array_equal(cal["flat"].values, want["flat"])
    assert cal.attrs["version"] == "1.2"


def test_open_virtual_dataset_variables_and_attributes(files, registry):
    vds = virtualizarr.open_virtual_dataset(_url(files["lz4"]), parser=AsdfParser(),
                                            registry=registry)
    assert set(vds.data_vars) == set(ARRAYS) | {"masked_mask"}
    assert vds["big"].shape == (600_000,)
    meta = virtualizarr.open_virtual_dataset(_url(files["lz4"]), parser=AsdfParser(group="meta"),
                                             registry=registry)
    assert meta.attrs["exposure"] == 12.5
    assert meta.attrs["filter"] == "F150W"
    assert meta.attrs["flags"] == [1, 2]
    tree = virtualizarr.open_virtual_datatree(_url(files["lz4"]), parser=AsdfParser(),
                                              registry=registry)
    assert "flat" in tree["meta/cal"].dataset.data_vars
    assert tree["meta"].attrs["n"] == 3


def test_views_are_left_out_and_named(registry):
    p = testdata.require("fixtures/views_shared_base.asdf")
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        vds = virtualizarr.open_virtual_dataset(_url(p), parser=AsdfParser(), registry=registry)
    assert "base" in vds.data_vars and "rev" not in vds.data_vars
    assert "rev" in vds.attrs["asdf_rs_not_virtualized"]
    assert any("/rev is not virtualized" in str(x.message) for x in w)
    ds = xr.open_zarr(AsdfParser()(_url(p), registry), zarr_format=3, consolidated=False)
    with asdf.open(p) as af:
        np.testing.assert_array_equal(ds["base"].values, af["base"])


def _three(scratch, label):
    paths = []
    for i in range(3):
        p = scratch / f"s{i}.asdf"
        asdf.AsdfFile(_tree(seed=3, shift=float(i))).write_to(p, all_array_compression=label)
        paths.append(p)
    return paths


@pytest.mark.parametrize("label", [None, "lz4", "zstd"])
def test_several_files_concat_and_kerchunk_references(scratch, registry, label):
    paths = _three(scratch, label)
    names = ["f8", "big", "odd"]
    vds = [virtualizarr.open_virtual_dataset(_url(p), parser=AsdfParser(), registry=registry)[names]
           for p in paths]
    combined = xr.concat(vds, dim="exposure", coords="minimal", compat="override")
    nested = xr.combine_nested(vds, concat_dim="exposure", coords="minimal", compat="override")
    assert combined["big"].shape == nested["big"].shape == (3, 600_000)
    refs = scratch / "refs.json"
    combined.vz.to_kerchunk(str(refs), format="json")
    fs = fsspec.filesystem("reference", fo=str(refs), asynchronous=True)
    ds = xr.open_zarr(zarr.storage.FsspecStore(fs, read_only=True, path=""), zarr_format=2,
                      consolidated=False, mask_and_scale=False)
    for i, p in enumerate(paths):
        want = _want(p)
        for name in names:
            np.testing.assert_array_equal(ds[name].values[i], want[name], err_msg=f"{p} {name}")


def test_drop_variables(files, registry):
    vds = virtualizarr.open_virtual_dataset(_url(files[None]),
                                            parser=AsdfParser(drop_variables=["big", "odd"]),
                                            registry=registry)
    assert "big" not in vds.data_vars and "odd" not in vds.data_vars and "f8" in vds.data_vars


def test_codecs_are_found_by_entry_points_without_import():
    """A reader of references or virtual datasets needs asdf-rs installed, not imported."""
    import sys

    code = (
        "import sys, numcodecs, zarr.registry\n"
        "assert 'asdf_rs' not in sys.modules\n"
        "for i in ('asdf_lz4', 'asdf_lz4f', 'asdf_blosc2', 'asdf_pad'):\n"
        "    assert numcodecs.get_codec({'id': i, 'nbytes': 8}).codec_id == i\n"
        "    assert zarr.registry.get_codec_class('numcodecs.' + i).codec_name == 'numcodecs.' + i\n"
        "assert numcodecs.get_codec({'id': 'asdf_block', 'codec': 'zlib', 'nbytes': 8})\n"
    )
    subprocess.run([sys.executable, "-c", code], check=True)


def test_several_files_written_to_icechunk_read_back(scratch, registry):
    import icechunk

    data = scratch / "data"
    data.mkdir()
    paths = []
    for i in range(2):
        p = data / f"e{i}.asdf"
        asdf.AsdfFile(_tree(seed=4, shift=float(i))).write_to(p, all_array_compression="lz4")
        paths.append(p)
    names = ["f8", "big", "i2"]
    vds = [virtualizarr.open_virtual_dataset(_url(p), parser=AsdfParser(), registry=registry)[names]
           for p in paths]
    combined = xr.combine_nested(vds, concat_dim="exposure", coords="minimal", compat="override")
    prefix = data.resolve().as_uri() + "/"
    config = icechunk.RepositoryConfig.default()
    config.set_virtual_chunk_container(
        icechunk.VirtualChunkContainer(prefix, icechunk.local_filesystem_store(str(data.resolve()))))
    storage = icechunk.local_filesystem_storage(str(scratch / "repo"))
    session = icechunk.Repository.create(storage, config).writable_session("main")
    combined.vz.to_icechunk(session.store)
    session.commit("two ASDF files, virtual")
    repo = icechunk.Repository.open(
        storage, config, authorize_virtual_chunk_access=icechunk.containers_credentials({prefix: None}))
    ds = xr.open_zarr(repo.readonly_session("main").store, zarr_format=3, consolidated=False)
    for i, p in enumerate(paths):
        want = _want(p)
        for name in names:
            np.testing.assert_array_equal(ds[name].values[i], want[name], err_msg=f"{p} {name}")


def test_over_http(files):
    """The parser opens the URL with asdf-rs (storage_options); zarr reads the chunks through
    the registry's HTTP store."""
    import http.server
    import threading

    from obstore.store import HTTPStore
    from test_url import RangeHandler

    handler = type("Handler", (RangeHandler,), {"root": Path(files["lz4"]).parent})
    httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    t = threading.Thread(target=httpd.serve_forever, daemon=True)
    t.start()
    try:
        base = f"http://127.0.0.1:{httpd.server_address[1]}"
        registry = ObjectStoreRegistry(
            {base: HTTPStore.from_url(base, client_options={"allow_http": True})})
        parser = AsdfParser(storage_options={"allow_http": "true"})
        for label in ("lz4", "zstd"):
            url = f"{base}/{files[label].name}"
            want = _want(files[label])
            ds = xr.open_zarr(parser(url, registry), zarr_format=3, consolidated=False)
            for name in ("f8", "f4_be", "big", "odd"):
                np.testing.assert_array_equal(ds[name].values, want[name], err_msg=f"{url} {name}")
    finally:
        httpd.shutdown()
        httpd.server_close()
        t.join()
