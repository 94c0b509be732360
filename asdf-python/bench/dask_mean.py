"""The mean of a large float64 array on a dask.distributed LocalCluster of two worker
processes (one thread each): asdf_rs.to_dask against dask.array.from_array over python asdf's
array (memory-mapped where python asdf allows it: uncompressed blocks), for an uncompressed
and a python-asdf lz4 block; then asdf_rs.to_dask over a loopback HTTP server, counting the
bytes it sends against the block's stored bytes. Not a test: prints both sides' raw figures.

    .venv-dask/bin/python asdf-python/bench/dask_mean.py            # 2 GiB, best of 3
    .venv-dask/bin/python asdf-python/bench/dask_mean.py --gib 0.25 --repeat 1

Needs the packages of tests/oracle-dask-requirements.txt and asdf_rs built into that venv
(`maturin develop --release`, or .ci/run's dev build). The files go to a temporary folder
(--dir), removed afterwards.
"""

from __future__ import annotations

import argparse
import http.server
import os
import shutil
import tempfile
import threading
import time
from pathlib import Path

import warnings

import asdf
import dask.array as da
import numpy as np
from distributed import Client, LocalCluster

import asdf_rs


class CountingRangeHandler(http.server.BaseHTTPRequestHandler):
    """HEAD and single-range GET of the files of `root`, read from disk by range; counts the
    body bytes and requests it sends."""

    root: Path = Path(".")
    sent = 0
    requests = 0
    lock = threading.Lock()

    def log_message(self, *args):
        pass

    def _stat(self):
        p = self.root / self.path.lstrip("/")
        if not p.is_file():
            self.send_error(404)
            return None, None
        return p, p.stat()

    def _head(self, st, status, length, extra=()):
        self.send_response(status)
        self.send_header("Content-Length", str(length))
        self.send_header("ETag", f'"{st.st_ino:x}-{st.st_mtime_ns:x}"')
        self.send_header("Last-Modified", "Mon, 01 Jan 2024 00:00:00 GMT")
        self.send_header("Accept-Ranges", "bytes")
        for k, v in extra:
            self.send_header(k, v)
        self.end_headers()

    def do_HEAD(self):
        p, st = self._stat()
        if p is not None:
            self._head(st, 200, st.st_size)

    def do_GET(self):
        p, st = self._stat()
        if p is None:
            return
        size = st.st_size
        rng = self.headers.get("Range")
        if rng:
            start, _, end = rng.removeprefix("bytes=").partition("-")
            if start == "":
                start, end = max(0, size - int(end)), size - 1
            else:
                start, end = int(start), (min(int(end), size - 1) if end else size - 1)
            status, extra = 206, [("Content-Range", f"bytes {start}-{end}/{size}")]
        else:
            start, end, status, extra = 0, size - 1, 200, []
        n = end - start + 1
        self._head(st, status, n, extra)
        with open(p, "rb") as f:
            f.seek(start)
            left = n
            while left:
                chunk = f.read(min(left, 8 << 20))
                if not chunk:
                    break
                self.wfile.write(chunk)
                left -= len(chunk)
        with self.lock:
            type(self).sent += n
            type(self).requests += 1


def best(f, repeat):
    times, value = [], None
    for _ in range(repeat):
        t = time.perf_counter()
        value = f()
        times.append(time.perf_counter() - t)
    return min(times), times, value


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--gib", type=float, default=2.0, help="array size in GiB (default 2)")
    ap.add_argument("--repeat", type=int, default=3, help="runs per side, the best is shown")
    ap.add_argument("--dir", default=None, help="folder for the files (default: a temporary one)")
    args = ap.parse_args()
    # distributed warns that python asdf's array goes into the graph whole: that is the point
    warnings.filterwarnings("ignore", message=".*Sending large graph.*")
    warnings.filterwarnings("ignore", message=".*Large object of size.*")

    n = int(args.gib * (1 << 30)) // 8
    d = Path(tempfile.mkdtemp(prefix="asdf-dask-bench-", dir=args.dir))
    try:
        # a smooth signal with some noise, in quarters (as counts scaled): lz4 compresses it
        rng = np.random.default_rng(0)
        data = np.round(np.sin(np.arange(n) * 1e-4) * 1000.0)
        data += rng.integers(0, 16, n) * 0.25
        data = data.reshape(-1, 4096)
        want = float(data.mean())
        files = {}
        for label in (None, "lz4"):
            p = d / f"{label or 'none'}.asdf"
            t = time.perf_counter()
            asdf.AsdfFile({"x": data}).write_to(p, all_array_compression=label)
            files[label] = p
            print(f"wrote {p.name}: {p.stat().st_size / 2**30:.3f} GiB in "
                  f"{time.perf_counter() - t:.1f} s")
        del data

        with LocalCluster(n_workers=2, processes=True, threads_per_worker=1,
                          host="127.0.0.1", dashboard_address=":0") as cluster, \
                Client(cluster) as client:
            print(f"asdf_rs {asdf_rs.__version__}, python asdf {asdf.__version__}, "
                  f"{os.cpu_count()} cores; LocalCluster: 2 worker processes x 1 thread")
            rows = []
            for label, p in files.items():
                name = label or "uncompressed"
                ours = asdf_rs.to_dask(p, "/x")
                t_ours, all_ours, v = best(lambda: client.compute(ours.mean(), sync=True),
                                           args.repeat)
                assert abs(v - want) <= 1e-9 * abs(want) + 1e-9, (v, want)

                def theirs():
                    # what a user writes today: python asdf's array (a memory map when the
                    # block is uncompressed) into dask.array.from_array, default chunks
                    with asdf.open(p, memmap=label is None, lazy_load=True) as af:
                        x = da.from_array(af["x"])
                        return client.compute(x.mean(), sync=True), x.npartitions

                t_theirs, all_theirs, (v2, parts) = best(theirs, args.repeat)
                assert abs(v2 - want) <= 1e-9 * abs(want) + 1e-9, (v2, want)
                rows.append((name, t_ours, all_ours, ours.npartitions, t_theirs, all_theirs, parts))
                print(f"{name}: asdf_rs.to_dask {t_ours:.3f} s ({ours.npartitions} chunks; runs "
                      f"{', '.join(f'{x:.3f}' for x in all_ours)}), python asdf + "
                      f"da.from_array {t_theirs:.3f} s ({parts} chunks; runs "
                      f"{', '.join(f'{x:.3f}' for x in all_theirs)}): "
                      f"{t_theirs / t_ours:.2f}x", flush=True)

            # over loopback HTTP: bytes sent against the block's stored bytes
            handler = type("Handler", (CountingRangeHandler,), {"root": d, "sent": 0,
                                                                 "requests": 0})
            httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
            th = threading.Thread(target=httpd.serve_forever, daemon=True)
            th.start()
            try:
                base = f"http://127.0.0.1:{httpd.server_address[1]}"
                for label, p in files.items():
                    stored = asdf_rs._asdf_rs._manifest(str(p), "/x")["block"]["length"]
                    handler.sent = handler.requests = 0
                    client.run(asdf_rs._asdf_rs._clear_cache)
                    t = time.perf_counter()
                    x = asdf_rs.to_dask(f"{base}/{p.name}", "/x",
                                        storage_options={"allow_http": "true"})
                    v = client.compute(x.mean(), sync=True)
                    dt = time.perf_counter() - t
                    assert abs(v - want) <= 1e-9 * abs(want) + 1e-9, (v, want)
                    print(f"http {label or 'uncompressed'}: {dt:.3f} s, {handler.sent} bytes in "
                          f"{handler.requests} requests for a block of {stored} stored bytes: "
                          f"{handler.sent / stored:.4f}x", flush=True)
            finally:
                httpd.shutdown()
                httpd.server_close()
    finally:
        shutil.rmtree(d, ignore_errors=True)


if __name__ == "__main__":
    main()
