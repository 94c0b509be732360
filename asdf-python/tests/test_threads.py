"""asdf_rs in threaded python: reads from several threads give the right arrays, and the
GIL is released while a block is read (another python thread runs meanwhile: shown by
events, not by timings)."""

from __future__ import annotations

import http.server
import threading
from concurrent.futures import ThreadPoolExecutor

import numpy as np

import asdf_rs


def test_many_threads_read_the_same_file(scratch):
    arrays = {f"a{i}": np.arange(i * 1000, (i + 1) * 1000, dtype=np.int64) for i in range(32)}
    out = scratch / "many.asdf"
    asdf_rs.write(out, arrays, compression="zstd")
    with asdf_rs.open(out) as f:
        tree = f.tree

        def read(name):
            # every thread reads every array: the first read of each races with others
            return name, [np.asarray(tree[n]).sum() for n in sorted(arrays)]

        with ThreadPoolExecutor(8) as pool:
            results = list(pool.map(read, [f"t{i}" for i in range(16)]))
    expected = [arrays[n].sum() for n in sorted(arrays)]
    assert all(sums == expected for _, sums in results)


def test_threads_open_and_read_their_own_files(scratch):
    def work(i):
        p = scratch / f"f{i}.asdf"
        data = np.full((100, 100), i, dtype=np.float32)
        asdf_rs.write(p, {"d": data, "i": i}, compression="zlib")
        with asdf_rs.open(p, verify_checksums=True) as f:
            return f.tree["i"], float(np.asarray(f.tree["d"]).mean())

    with ThreadPoolExecutor(6) as pool:
        got = list(pool.map(work, range(12)))
    assert got == [(i, float(i)) for i in range(12)]


def test_the_gil_is_released_while_a_block_is_read(scratch):
    """A read of a block from an http:// URL, held up by the server until another python
    thread has run: the server's handler and that thread are python code, so the read can
    only finish if it runs without the GIL (holding it, the read would wait for the server
    until the test's deadline, and the test fails)."""
    from test_url import RangeHandler

    data = np.arange(1 << 20, dtype=np.int64)
    asdf_rs.write(scratch / "big.asdf", {"d": data}, compression="zstd")
    gate = threading.Event()       # armed once the file is open: the block's GET waits
    in_read = threading.Event()    # the handler got the block's GET, inside read()
    released = threading.Event()   # the other thread ran while read() was blocked
    progress = []

    class Gated(RangeHandler):
        root = scratch

        def do_GET(self):
            if gate.is_set():
                in_read.set()
                # the response waits for the other python thread (never a timing)
                if not released.wait(timeout=60):
                    self.send_error(503)
                    return
            super().do_GET()

    def other():
        in_read.wait(timeout=60)
        progress.append("ran while read() was blocked")
        released.set()

    httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Gated)
    serving = threading.Thread(target=httpd.serve_forever, daemon=True)
    serving.start()
    helper = threading.Thread(target=other, daemon=True)
    try:
        url = f"http://127.0.0.1:{httpd.server_address[1]}/big.asdf"
        with asdf_rs.open(url) as f:
            node = f.tree["d"]
            helper.start()
            gate.set()
            a = node.read()
    finally:
        gate.clear()
        released.set()
        httpd.shutdown()
        httpd.server_close()
    helper.join(timeout=60)
    assert in_read.is_set(), "read() fetched nothing after open(): nothing was held up"
    assert progress == ["ran while read() was blocked"]
    assert np.array_equal(a, data)
