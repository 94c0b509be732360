"""asdf_rs.to_dask / stack_dask / concatenate_dask on the real engines: a dask.distributed
LocalCluster of two worker processes (loopback) computes sums, means and maxima of arrays
that python asdf wrote with each codec (and asdftool's Blosc2 ones), of several dtypes and
both byte orders, views and masked arrays, and they equal numpy's over python asdf's reading;
the same over a loopback HTTP server, over S3 and gs:// (moto_server) and over az://
(Azurite). Needs the packages of tests/oracle-dask-requirements.txt (.ci/run's .venv-dask)."""

from __future__ import annotations

import http.client
import os
import pickle
import shutil
import subprocess
import tempfile
import threading
import time
from pathlib import Path

import asdf
import asdf_compression  # noqa: F401  (registers zstd, lz4f, blsc with python asdf)
import dask
import dask.array as da
import numpy as np
import pytest
from distributed import Client, LocalCluster

import asdf_rs
from conftest import REPOSITORY, testdata

CODECS = [None, "zlib", "bzp2", "lz4", "zstd", "lz4f", "blsc"]


@pytest.fixture(scope="module")
def client():
    with LocalCluster(n_workers=2, processes=True, threads_per_worker=1, host="127.0.0.1",
                      dashboard_address=":0", worker_dashboard_address=":0") as cluster:
        with Client(cluster) as c:
            yield c


@pytest.fixture(scope="module")
def files(tmp_path_factory):
    """One file per codec holding every kind of array: {codec: (path, {name: numpy array as
    python asdf reads it})}."""
    d = tmp_path_factory.mktemp("dask")
    rng = np.random.default_rng(5)
    base = rng.standard_normal((300, 40))
    tree = {
        "f8": base,
        "f4_be": base[:120].astype(">f4"),
        "i2": (base * 1000).astype("<i2"),
        "u8_be": np.abs(base[:, :7] * 1e6).astype(">u8"),
        "i1": np.arange(-100, 100, dtype=np.int8),
        "view": base[5:290:3, ::-2],                     # offset and strides
        "masked": np.ma.masked_array(base[:50], mask=base[:50] > 1.0),
        "cube": rng.integers(0, 1000, (6, 20, 30)).astype("<u2"),
        "big": np.arange(600_000, dtype="<f8"),           # 4.6 MiB: two lz4 sub-blocks
        "meta": {"exposure": 12.5, "instrument": "NIRCAM"},
    }
    out = {}
    for label in CODECS:
        p = d / f"{label or 'none'}.asdf"
        asdf.AsdfFile(tree).write_to(p, all_array_compression=label)
        with asdf.open(p, lazy_load=False, memmap=False) as af:
            out[label] = (p, {k: (np.ma.array(v, copy=True) if isinstance(v, np.ma.MaskedArray)
                                  else np.array(v, copy=True))
                              for k, v in af.tree.items() if k in tree and k != "meta"})
    asdftool = Path(os.environ.get("ASDFTOOL", REPOSITORY / "target" / "debug" / "asdftool"))
    assert asdftool.exists(), f"{asdftool} is missing: `cargo build -p asdfrs-cli` (or set ASDFTOOL)"
    for label in ("bls2", "bsc2"):
        p = d / f"{label}.asdf"
        subprocess.run([asdftool, "defragment", out[None][0], "-o", p, "-c", label],
                       check=True, capture_output=True)
        out[label] = (p, out[None][1])
    return out


def _reductions(x):
    return [x.sum(), x.mean(), x.max()]


def _check_all(client, source, want, storage_options=None, names=None):
    names = names or list(want)
    lazy = {}
    for name in names:
        x = asdf_rs.to_dask(source, "/" + name, storage_options=storage_options)
        assert x.dtype == want[name].dtype, name
        assert x.shape == want[name].shape, name
        lazy[name] = _reductions(x) if x.dtype.kind != "c" else [x.sum(), x.mean()]
    got = client.compute(lazy, sync=True)
    for name in names:
        w = want[name]
        expect = [w.sum(), w.mean(), w.max()] if w.dtype.kind != "c" else [w.sum(), w.mean()]
        for g, e, what in zip(got[name], expect, ("sum", "mean", "max")):
            if np.issubdtype(w.dtype, np.inexact):
                np.testing.assert_allclose(g, e, rtol=1e-10, err_msg=f"{source} {name} {what}")
            else:
                assert g == e, f"{source} {name} {what}: {g} != {e}"


@pytest.mark.parametrize("label", CODECS + ["bls2", "bsc2"])
def test_cluster_reductions_equal_numpy_for_each_codec(client, files, label):
    path, want = files[label]
    _check_all(client, str(path), want)


FIXTURES = ["views_shared_base.asdf", "views_shared_base_bigendian.asdf",
            "views_shared_base_zlib.asdf", "masked.asdf", "masked_scalar.asdf",
            "codec_lz4_multichunk.asdf", "codec_zlib_bigendian_fortran.asdf"]


def test_cluster_reductions_of_views_masks_and_fixtures(client):
    """Views sharing a base block (offsets, strides, negative and transposed ones), big-endian
    views, masks (arrays, scalars, inline) as python asdf reads them."""
    for name in FIXTURES:
        path = testdata.require(f"fixtures/{name}")
        with asdf.open(path, lazy_load=False, memmap=False) as af:
            want = {k: (np.ma.array(v, copy=True) if isinstance(v, np.ma.MaskedArray)
                        else np.array(v, copy=True))
                    for k, v in af.tree.items() if isinstance(v, np.ndarray)}
        assert want, name
        for k, w in want.items():
            x = asdf_rs.to_dask(path, k, chunks=max(1, (w.shape or (1,))[0] // 3) if w.ndim else ())
            assert isinstance(x._meta, np.ma.MaskedArray) == isinstance(w, np.ma.MaskedArray), (name, k)
            assert x.dtype == w.dtype, (name, k)
        _check_all(client, str(path), want)


@pytest.mark.parametrize("name", ["zero_d_and_empty.asdf", "stream.asdf",
                                  "stream_2d_bigendian.asdf", "stream_empty.asdf",
                                  "stream_partial_row.asdf", "stream_with_blocks.asdf",
                                  "views_zero_stride.asdf", "inline_empty.asdf"])
def test_zero_d_empty_streamed_and_zero_stride_arrays(name):
    path = testdata.require(f"fixtures/{name}")
    with asdf.open(path, lazy_load=False, memmap=False) as af:
        want = {k: np.array(v, copy=True) for k, v in af.tree.items() if isinstance(v, np.ndarray)}
    assert want
    for k, w in want.items():
        x = asdf_rs.to_dask(path, k)
        got = x.compute(scheduler="threads")
        assert (got.shape, got.dtype) == (w.shape, w.dtype), k
        np.testing.assert_array_equal(got, w, err_msg=f"{name} {k}")


def test_whole_arrays_equal_and_keep_dtype_and_byte_order(client, files):
    path, want = files["lz4"]
    chunks = {"f4_be": 37, "u8_be": (50, 3), "view": (11, 6), "cube": (2, 7, 30), "big": 150_000}
    for name, c in chunks.items():
        x = asdf_rs.to_dask(path, name, chunks=c)
        got = client.compute(x, sync=True)
        assert got.dtype == want[name].dtype  # the file's byte order, as python asdf gives it
        np.testing.assert_array_equal(got, want[name])


def test_masked_arrays_are_dask_masked_arrays(client, files):
    path, want = files["zlib"]
    x = asdf_rs.to_dask(path, "/masked", chunks=(7, 9))
    assert isinstance(x._meta, np.ma.MaskedArray)
    got = client.compute(x, sync=True)
    assert isinstance(got, np.ma.MaskedArray)
    np.testing.assert_array_equal(got.mask, want["masked"].mask)
    np.testing.assert_array_equal(got.data, want["masked"].data)
    assert client.compute((~da.ma.getmaskarray(x)).sum(), sync=True) == want["masked"].count()


def test_default_chunks_are_the_manifest_pieces(files):
    # an uncompressed block: slabs of rows; lz4: its sub-blocks; zlib: the whole block
    path, want = files[None]
    x = asdf_rs.to_dask(path, "/big")
    assert x.shape == want["big"].shape
    assert sum(x.chunks[0]) == want["big"].shape[0]
    lz = asdf_rs.to_dask(files["lz4"][0], "/big")
    assert len(lz.chunks[0]) >= 2
    z = asdf_rs.to_dask(files["zlib"][0], "/big")
    assert z.numblocks == (1,)


def test_chunks_asked_for_round_to_independent_pieces(files):
    path, want = files["lz4"]
    pieces = asdf_rs.to_dask(path, "/big").chunks[0]
    x = asdf_rs.to_dask(path, "/big", chunks=pieces[0] - 1000)
    assert x.chunks[0] == pieces
    np.testing.assert_array_equal(x[::1000].compute(), want["big"][::1000])


def test_rows_of_manifests():
    from asdf_rs.dask import _rows_of_manifest

    # a view of a 64 MiB uncompressed block: slabs of 8 MiB of rows, any region reads its bytes
    view = {"pieces": [{"region": None, "decoded": (0, 1 << 26), "codec": "none"}],
            "whole_block": False, "block": {"codec": None, "length": 1 << 26}}
    edges, independent = _rows_of_manifest(view, (4096, 1024), 8)
    assert edges == list(range(0, 4096, 1024)) + [4096] and not independent
    # lz4 sub-blocks ending inside rows: a straddling row goes with the second piece
    lz4 = {"pieces": [{"region": None, "decoded": (a, b), "codec": "lz4-block"}
                      for a, b in ((0, 100), (100, 200), (200, 240))],
           "whole_block": True, "block": {"codec": "lz4", "length": 99}}
    assert _rows_of_manifest(lz4, (10, 3), 8) == ([0, 4, 8, 10], True)
    # one piece: one chunk
    one = {"pieces": [{"region": [(0, 10)], "decoded": (0, 80), "codec": "zlib"}],
           "whole_block": True, "block": {"codec": "zlib", "length": 50}}
    assert _rows_of_manifest(one, (10,), 8) is None


def test_graph_of_a_thousand_chunks_is_small(files):
    path, want = files[None]
    x = asdf_rs.to_dask(path, "/f8", chunks=(3, 4))
    assert x.npartitions == 1000
    assert len(pickle.dumps(x)) < 100_000
    assert len(pickle.dumps(dict(x.__dask_graph__()))) < 100_000
    np.testing.assert_allclose(x.sum().compute(scheduler="threads"), want["f8"].sum())


def test_opened_file_to_dask(client, files):
    path, want = files[None]
    with asdf_rs.open(path) as f:
        x = asdf_rs.to_dask(f, "/cube")
    np.testing.assert_array_equal(client.compute(x, sync=True), want["cube"])


def test_an_opened_files_array_to_dask(client, files, monkeypatch, tmp_path):
    path, want = files["lz4"]
    # a relative path: the workers get the absolute one
    monkeypatch.chdir(path.parent)
    with asdf_rs.open(path.name) as f:
        assert f.source == os.path.abspath(path.name)
        x = f.tree["cube"].to_dask()
        m = f.tree["f8"].to_dask(chunks=(7, -1))
    monkeypatch.chdir(tmp_path)
    np.testing.assert_array_equal(client.compute(x, sync=True), want["cube"])
    assert m.chunks[0][0] == 7
    np.testing.assert_array_equal(client.compute(m, sync=True), want["f8"])


def test_stack_and_concatenate(client, files):
    paths = [files[c][0] for c in ("zlib", "lz4", None)]
    s = asdf_rs.stack_dask(paths, "/f8", axis=1)
    w = np.stack([files[None][1]["f8"]] * 3, axis=1)
    np.testing.assert_array_equal(client.compute(s, sync=True), w)
    c = asdf_rs.concatenate_dask(paths, "/i2", axis=0)
    np.testing.assert_array_equal(client.compute(c, sync=True),
                                  np.concatenate([files[None][1]["i2"]] * 3))


def test_stack_names_the_first_file_that_disagrees(scratch, files):
    odd = scratch / "odd.asdf"
    asdf.AsdfFile({"f8": np.zeros((300, 41))}).write_to(odd)
    paths = [files[None][0], files["zlib"][0], odd, files["lz4"][0]]
    with pytest.raises(ValueError, match=r"odd\.asdf: /f8 has shape \(300, 41\), dtype float64"):
        asdf_rs.stack_dask(paths, "/f8")
    wrong_dtype = scratch / "dtype.asdf"
    asdf.AsdfFile({"f8": np.zeros((300, 40), np.float32)}).write_to(wrong_dtype)
    with pytest.raises(ValueError, match=r"dtype\.asdf: /f8 has shape \(300, 40\), dtype float32"):
        asdf_rs.concatenate_dask([files[None][0], wrong_dtype], "/f8")


def test_missing_array_is_an_error(files):
    with pytest.raises(KeyError, match="/nothing"):
        asdf_rs.to_dask(files[None][0], "/nothing")


# ---- over HTTP ----

@pytest.fixture(scope="module")
def http_root(files):
    from test_url import RangeHandler
    import http.server

    root = Path(files[None][0]).parent
    handler = type("Handler", (RangeHandler,), {"root": root})
    httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    t = threading.Thread(target=httpd.serve_forever, daemon=True)
    t.start()
    try:
        yield f"http://127.0.0.1:{httpd.server_address[1]}"
    finally:
        httpd.shutdown()
        httpd.server_close()
        t.join()




def test_an_array_of_a_url_to_dask(client, files, http_root):
    path, want = files["zlib"]
    opts = {"allow_http": "true"}
    with asdf_rs.open(f"{http_root}/{path.name}", storage_options=opts) as f:
        assert f.storage_options == opts
        x = f.tree["f8"].to_dask()
        y = asdf_rs.to_dask(f, "/i2")
    np.testing.assert_array_equal(client.compute(x, sync=True), want["f8"])
    np.testing.assert_array_equal(client.compute(y, sync=True), want["i2"])


@pytest.mark.parametrize("label", [None, "lz4", "zstd"])
def test_cluster_reductions_over_http(client, files, http_root, label):
    path, want = files[label]
    _check_all(client, f"{http_root}/{path.name}", want, storage_options={"allow_http": "true"},
               names=["f8", "f4_be", "view", "masked", "big"])


# ---- over S3 (moto_server) ----

s3_fixture_port = [None]


@pytest.fixture(scope="module")
def s3(files):
    program = os.environ.get("ASDF_MOTO_SERVER") or str(REPOSITORY / ".venv-oracle" / "bin" / "moto_server")
    if not shutil.which(program):
        pytest.fail(f"cannot run {program}: `bash .ci/run` installs it into .venv-oracle "
                    "(tests/oracle-requirements.txt), or set ASDF_MOTO_SERVER")
    import socket

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    proc = subprocess.Popen([program, "-H", "127.0.0.1", "-p", str(port)],
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        deadline = time.monotonic() + 60
        while True:
            try:
                socket.create_connection(("127.0.0.1", port), timeout=1).close()
                break
            except OSError:
                assert time.monotonic() < deadline, "moto_server did not listen within 60 s"
                time.sleep(0.1)

        def put(path, body=b""):
            c = http.client.HTTPConnection("127.0.0.1", port)
            c.request("PUT", path, body=body)
            r = c.getresponse()
            r.read()
            assert r.status == 200, (path, r.status)

        put("/bucket")
        s3_fixture_port[0] = port
        for label in (None, "lz4"):
            p = files[label][0]
            put(f"/bucket/{p.name}", p.read_bytes())
        yield {
            "aws_endpoint": f"http://127.0.0.1:{port}",
            "aws_region": "us-east-1",
            "aws_access_key_id": "testing",
            "aws_secret_access_key": "testing",
            "aws_virtual_hosted_style_request": "false",
            "aws_allow_http": "true",
        }
    finally:
        proc.kill()
        proc.wait()


@pytest.mark.parametrize("label", [None, "lz4"])
def test_cluster_reductions_over_s3(client, files, s3, label):
    path, want = files[label]
    _check_all(client, f"s3://bucket/{path.name}", want, storage_options=s3,
               names=["f8", "u8_be", "view", "masked", "big"])
    s = asdf_rs.stack_dask([f"s3://bucket/{path.name}"] * 2, "/cube", storage_options=s3)
    np.testing.assert_array_equal(client.compute(s, sync=True), np.stack([want["cube"]] * 2))


def test_cluster_reductions_over_gs(client, files, s3):
    """gs:// through the XML API of Google Cloud Storage, which moto_server answers as S3
    (asdf-store/tests/it/gcs.rs says what this leaves untested)."""
    port = s3_fixture_port[0]
    opts = {"google_base_url": f"http://127.0.0.1:{port}", "google_bearer_token": "testing"}
    path, want = files["lz4"]
    _check_all(client, f"gs://bucket/{path.name}", want, storage_options=opts,
               names=["f8", "u8_be", "masked", "big"])


@pytest.fixture(scope="module")
def azurite(client, files):
    """Azurite (asdf-store/tests/azurite, npm, installed by .ci/run) with the container
    `data` holding the lz4 file; the workers find it by AZURITE_BLOB_STORAGE_URL."""
    import socket

    here = REPOSITORY / "asdf-store" / "tests" / "azurite"
    program = os.environ.get("ASDF_AZURITE_BLOB") or str(here / "node_modules" / ".bin" / "azurite-blob")
    if not shutil.which(program):
        pytest.fail(f"cannot run {program}: `bash .ci/run` installs it (npm ci in "
                    "asdf-store/tests/azurite), or set ASDF_AZURITE_BLOB")
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    work = Path(tempfile.mkdtemp(prefix="asdf-azurite-"))
    proc = subprocess.Popen([program, "--blobHost", "127.0.0.1", "--blobPort", str(port),
                             "--disableTelemetry", "--silent", "--skipApiVersionCheck",
                             "--location", str(work)],
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        deadline = time.monotonic() + 60
        while True:
            try:
                socket.create_connection(("127.0.0.1", port), timeout=1).close()
                break
            except OSError:
                assert time.monotonic() < deadline, "azurite did not listen within 60 s"
                time.sleep(0.1)
        subprocess.run(["node", str(here / "create-container.js"), str(port), "data"],
                       check=True, capture_output=True)
        url = f"http://127.0.0.1:{port}"
        os.environ["AZURITE_BLOB_STORAGE_URL"] = url
        client.run(os.environ.__setitem__, "AZURITE_BLOB_STORAGE_URL", url)
        import obstore
        from obstore.store import AzureStore

        store = AzureStore("data", use_emulator=True)
        path = files["lz4"][0]
        obstore.put(store, path.name, path.read_bytes())
        yield {"azure_storage_use_emulator": "true"}
    finally:
        proc.kill()
        proc.wait()
        shutil.rmtree(work, ignore_errors=True)


def test_cluster_reductions_over_az(client, files, azurite):
    path, want = files["lz4"]
    _check_all(client, f"az://data/{path.name}", want, storage_options=azurite,
               names=["f8", "u8_be", "masked", "big"])


def test_dask_config_scheduler_default_also_works(files):
    path, want = files["bzp2"]
    with dask.config.set(scheduler="threads"):
        x = asdf_rs.to_dask(path, "/cube", chunks=(1, 10, 10))
        np.testing.assert_array_equal(x.compute(), want["cube"])
        np.testing.assert_array_equal(da.max(x, axis=0).compute(), want["cube"].max(axis=0))


def test_asdf_zarr_arrays_have_their_chunks_and_values(client):
    """asdf-zarr arrays (tests/data/asdf-zarr, python asdf + asdf-zarr 0.0.4): one dask chunk
    per zarr chunk, computed on the cluster equal to what zarr read (the sidecars)."""
    import json

    d = testdata.require_dir("asdf-zarr")
    if d is None:
        return
    n = 0
    for f in sorted(d.glob("*.asdf")):
        expect = json.loads(f.with_suffix(".zarr.json").read_text())
        for path, e in expect["arrays"].items():
            want = np.frombuffer(bytes.fromhex(e["hex"]),
                                 dtype=np.dtype(e["dtype"])).reshape(e["shape"])
            x = asdf_rs.to_dask(f, path)
            assert x.shape == want.shape and x.dtype == want.dtype, (f.name, path)
            m = asdf_rs._asdf_rs._manifest(str(f), path)
            if m["zarr"] is not None:
                n += 1
                chunks = m["zarr"]["chunks"]
                # the zarr chunk grid, the last chunk of each axis cut at the edge
                assert tuple(x.chunks) == tuple(
                    tuple(min(c, s - i) for i in range(0, s, c))
                    for c, s in zip(chunks, want.shape)), (f.name, path, x.chunks)
            got = client.compute(x, sync=True)
            np.testing.assert_array_equal(got, want, err_msg=f"{f.name} {path}")
            # chunks asked for are kept, and regions across zarr chunks read right
            y = asdf_rs.to_dask(f, path, chunks=tuple(max(1, s // 2) for s in want.shape))
            np.testing.assert_array_equal(client.compute(y, sync=True), want)
            if want.size and want.dtype.kind in "iuf":
                np.testing.assert_allclose(client.compute(x.sum(), sync=True), want.sum())
    assert n == 11
