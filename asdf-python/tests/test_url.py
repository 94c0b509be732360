"""open() of an http:// URL (asdf-store, range requests) against a loopback server that
this test starts and stops: same tree and arrays as the local file."""

from __future__ import annotations

import hashlib
import http.server
import threading

import numpy as np
import pytest

import asdf_rs


class RangeHandler(http.server.BaseHTTPRequestHandler):
    """Serves the files of `root` with HEAD and single-range GET (what object stores do)."""

    root = None

    def log_message(self, *args):
        pass

    def _file(self):
        p = self.root / self.path.lstrip("/")
        if not p.is_file():
            self.send_error(404)
            return None
        return p.read_bytes()

    def _headers(self, data, status, length, extra=()):
        self.send_response(status)
        self.send_header("Content-Length", str(length))
        self.send_header("ETag", '"' + hashlib.md5(data).hexdigest() + '"')
        self.send_header("Last-Modified", "Mon, 01 Jan 2024 00:00:00 GMT")
        self.send_header("Accept-Ranges", "bytes")
        for k, v in extra:
            self.send_header(k, v)
        self.end_headers()

    def do_HEAD(self):
        data = self._file()
        if data is not None:
            self._headers(data, 200, len(data))

    def do_GET(self):
        data = self._file()
        if data is None:
            return
        rng = self.headers.get("Range")
        if not rng:
            self._headers(data, 200, len(data))
            self.wfile.write(data)
            return
        start, _, end = rng.removeprefix("bytes=").partition("-")
        if start == "":  # suffix range
            start, end = max(0, len(data) - int(end)), len(data) - 1
        else:
            start = int(start)
            end = min(int(end), len(data) - 1) if end else len(data) - 1
        if start >= len(data):
            self.send_error(416)
            return
        body = data[start:end + 1]
        self._headers(data, 206, len(body),
                      [("Content-Range", f"bytes {start}-{end}/{len(data)}")])
        self.wfile.write(body)


@pytest.fixture
def server(scratch):
    handler = type("Handler", (RangeHandler,), {"root": scratch})
    httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    t = threading.Thread(target=httpd.serve_forever, daemon=True)
    t.start()
    try:
        yield f"http://127.0.0.1:{httpd.server_address[1]}"
    finally:
        httpd.shutdown()
        httpd.server_close()
        t.join()


def test_open_http_url_reads_tree_and_arrays(scratch, server):
    data = np.arange(50_000, dtype=np.float64)
    asdf_rs.write(scratch / "r.asdf", {"d": data, "z": np.ones(10, np.int16),
                                       "meta": {"k": "v"}}, compression="zlib")
    with asdf_rs.open(f"{server}/r.asdf", storage_options={"allow_http": "true"}) as f:
        assert f.tree["meta"] == {"k": "v"}
        np.testing.assert_array_equal(f.tree["d"].read(), data)
        np.testing.assert_array_equal(np.asarray(f.tree["z"]), np.ones(10, np.int16))


def test_missing_url_is_an_error(server):
    # the store's 404, naming the object (an OSError, as a missing local file's
    # FileNotFoundError is)
    with pytest.raises(OSError, match=r"absent\.asdf.* not found") as e:
        asdf_rs.open(f"{server}/absent.asdf", storage_options={"allow_http": "true"})
    assert not isinstance(e.value, asdf_rs.AsdfError)
